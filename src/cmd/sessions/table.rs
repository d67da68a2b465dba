//! The table for people (`--table`, the default on a terminal): one row per file, with its
//! age, session id, size, messages, cost and models (what pi-usage gives for the file alone),
//! project and name (or, with `--prompts`, the first prompt of an unnamed session). It fits
//! the width the way pi-usage's tables do: cells are cut, then columns dropped in
//! [`DROP_ORDER`]. Control characters are escaped. The headings and the marks for what is
//! unknown are the words pi-usage uses for the same things (`tests/words.rs`).

use crate::cmd::usage::FileCells;
use crate::discover::{FileMeta, FileStatus};
use crate::output::{Out, Stop};

/// What a cell holds when a label is unknown (pi-usage's word).
pub const NO_LABEL: &str = "(none)";
/// What a cell holds when a number or time is unknown (pi-usage's mark).
pub const NO_VALUE: &str = "-";

/// The columns, in order. `Session`, `Messages`, `Cost`, `Models` and `Project` are pi-usage's
/// headings for the same things.
pub const HEADINGS: [&str; 8] = [
    "Age", "Session", "Size", "Messages", "Cost", "Models", "Project", "Name",
];

/// The order columns are dropped in when the table is too wide after its cells were cut
/// (the first named goes first): Session, Cost and Name are never dropped.
pub const DROP_ORDER: [&str; 5] = ["Size", "Messages", "Models", "Age", "Project"];

/// How far a column's cells may be cut, and from which end (0: never cut).
fn cut_rule(heading: &str) -> (usize, bool) {
    match heading {
        // The end of an id is its random part (as pi-usage keeps it).
        "Session" => (13, true),
        // The end of a path names the project's folder.
        "Project" => (12, true),
        "Models" => (12, false),
        "Name" => (12, false),
        _ => (0, false),
    }
}

pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A short age: `45s`, `12m`, `3h`, `5d`, `7w`, `4mo`, `2y`; a time ahead of the clock (a
/// file's modification time set in the future, a clock that was wrong) is said as such:
/// `in 5m`.
fn age(ms: i64) -> String {
    if ms <= -1000 {
        return format!("in {}", age(ms.saturating_neg()));
    }
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        86_400..=1_209_599 => format!("{}d", s / 86_400),
        1_209_600..=5_183_999 => format!("{}w", s / 604_800),
        5_184_000..=31_535_999 => format!("{}mo", s / 2_592_000),
        _ => format!("{}y", s / 31_536_000),
    }
}

/// A short size: `812B`, `4.2K`, `17M`, `1.3G`: one decimal below 10 of a unit, none above,
/// the unit chosen after rounding, so that 10,200 bytes are `10K` (not `10.0K`) and 1,048,575
/// are `1.0M` (not `1024K`).
fn size(b: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    if b < 1024 {
        return format!("{b}B");
    }
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    loop {
        if (v * 10.0).round() < 100.0 {
            return format!("{v:.1}{}", units[u]);
        }
        if v.round() < 1024.0 || u == units.len() - 1 {
            return format!("{v:.0}{}", units[u]);
        }
        v /= 1024.0;
        u += 1;
    }
}

/// What the table needs besides the files: the time, the home directory (shown as `~`),
/// whether prompts may be shown, and each file's cost and models as pi-usage gives them.
pub(super) struct TableInput<'a> {
    pub now: i64,
    pub home: Option<&'a str>,
    pub prompts: bool,
    pub usage: &'a [Option<FileCells>],
}

/// The cells of one file's row, in [`HEADINGS`] order.
fn row(m: &FileMeta<'_>, usage: Option<&FileCells>, t: &TableInput) -> Vec<String> {
    let mut project = m.project.as_deref().unwrap_or(NO_LABEL).to_owned();
    if let Some(h) = t.home {
        if let Some(rest) = project.strip_prefix(h) {
            if rest.is_empty() || rest.starts_with('/') {
                project = format!("~{rest}");
            }
        }
    }
    // A session's text is shown only with --prompts (as --help promises): the name, else
    // (with --prompts) the first prompt.
    let prompt = m.first_prompt.as_deref().filter(|_| t.prompts);
    let name = match m.status {
        FileStatus::Ok | FileStatus::MetadataOnly => {
            m.name.as_deref().or(prompt).unwrap_or(NO_LABEL).to_owned()
        }
        s => format!("({})", s.name()),
    };
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    let (cost, models) = usage.map_or((NO_VALUE, NO_VALUE), |u| (&u.cost, &u.models));
    let text = |s: &str| crate::diag::sanitize(s).into_owned();
    vec![
        m.modified
            .map(|ms| age(t.now - ms))
            .unwrap_or_else(|| NO_VALUE.into()),
        text(m.session.as_deref().unwrap_or(NO_LABEL)),
        size(m.bytes),
        m.counts
            .as_ref()
            .map(|c| crate::view::thousands(c.messages.into()))
            .unwrap_or_else(|| NO_VALUE.into()),
        cost.to_string(),
        text(models),
        text(&project),
        text(&name),
    ]
}

/// The table of `metas` (`t.usage[i]` holds pi-usage's cells for `metas[i]`), `limit`
/// columns wide at most when it can be (`None`: no limit).
pub(super) fn render(metas: &[&FileMeta<'_>], t: &TableInput, limit: Option<usize>) -> String {
    let mut rows: Vec<Vec<String>> = vec![HEADINGS.map(String::from).to_vec()];
    rows.extend(
        metas
            .iter()
            .zip(t.usage)
            .map(|(m, u)| row(m, u.as_ref(), t)),
    );
    let cuts = HEADINGS.map(|head| {
        let (min, keep_end) = cut_rule(head);
        crate::view::width::Cut {
            head,
            min,
            keep_end,
            // A file's session id tells its row apart; that is all it needs to do, so it gives
            // up its width before the text beside it is cut (the name, the project).
            key: head == "Session",
            blank: false,
            yields: head == "Session",
        }
    });
    let keep = crate::view::width::cut_then_drop(&cuts, &mut rows, &DROP_ORDER, limit);
    let widths: Vec<usize> = (0..HEADINGS.len())
        .map(|i| crate::view::width::column_width(&rows, i))
        .collect();
    let right = |i: usize| matches!(HEADINGS[i], "Size" | "Messages" | "Cost");
    let colour = crate::view::colour::enabled();
    let mut out = String::new();
    for (ri, r) in rows.iter().enumerate() {
        let cells: Vec<String> = keep
            .iter()
            .map(|&i| crate::view::width::aligned(&r[i], widths[i], !right(i)))
            .collect();
        // The heads in bold (painted after the widths are measured), as pi-usage's.
        let paint = if ri == 0 {
            crate::view::Paint::Head
        } else {
            crate::view::Paint::Plain
        };
        out.push_str(&paint.apply(cells.join("  ").trim_end(), colour));
        out.push('\n');
    }
    let dropped: Vec<&str> = (0..HEADINGS.len())
        .filter(|i| !keep.contains(i))
        .map(|i| HEADINGS[i])
        .collect();
    if !dropped.is_empty() {
        let note = format!(
            "not shown, to fit COLUMNS: {} (--json has every field)\n",
            dropped.join(", ")
        );
        match limit {
            Some(c) => out.push_str(&crate::view::width::wrap(&note, c)),
            None => out.push_str(&note),
        }
    }
    out
}

/// Writes the table of `metas` as wide as COLUMNS or the terminal (no limit in a pipe).
pub(super) fn table(out: &mut Out, metas: &[&FileMeta<'_>], t: &TableInput) -> Result<(), Stop> {
    let text = render(metas, t, crate::view::width::columns());
    out.raw(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_sizes_are_short() {
        assert_eq!(age(5_000), "5s");
        assert_eq!(age(3 * 3_600_000), "3h");
        assert_eq!(age(3 * 86_400_000), "3d");
        assert_eq!(age(400 * 86_400_000), "1y");
        assert_eq!(size(812), "812B");
        assert_eq!(size(4300), "4.2K");
        assert_eq!(size(17 * 1024 * 1024), "17M");
        // Rounded, then the unit chosen: never `10.0K` nor `1024K`.
        assert_eq!(size(10_200), "10K");
        assert_eq!(size(10_188), "9.9K");
        assert_eq!(size(1_048_575), "1.0M");
        assert_eq!(size(1_047_552), "1023K");
        assert_eq!(size(1023), "1023B");
        assert_eq!(size(1024), "1.0K");
        assert_eq!(size(u64::MAX), "16777216T");
        // Ahead of the clock.
        assert_eq!(age(-300_000), "in 5m");
        assert_eq!(age(-999), "0s");
        assert_eq!(age(i64::MIN), age(i64::MIN + 1));
    }

    #[test]
    fn cut_keeps_one_end() {
        assert_eq!(
            crate::view::width::cut_keeping("/home/u/src/project", 8, true),
            "…project"
        );
        assert_eq!(crate::view::width::cut_keeping("short", 8, true), "short");
        assert_eq!(
            crate::view::width::cut_keeping("claude-sonnet-4-5", 8, false),
            "claude-…"
        );
    }

    #[test]
    fn every_dropped_and_cut_column_is_a_heading() {
        for h in DROP_ORDER {
            assert!(HEADINGS.contains(&h), "{h}");
        }
        for h in ["Session", "Project", "Models", "Name"] {
            assert!(HEADINGS.contains(&h) && cut_rule(h).0 > 0, "{h}");
        }
    }
}
