//! What every human view shares (the tables and outlines printed for a person instead of
//! JSON Lines): whether it is chosen, its colours, the width it must fit, its tables, and the
//! one-line text it shows of a session.
//!
//! - `colour`: `--color auto|always|never` and `NO_COLOR`, decided once per run;
//! - `width`: the width to fit (`COLUMNS`, else the terminal's, else none), cutting and
//!   wrapping text;
//! - `table`: a table whose columns shrink, wrap or drop, in an order each view states, to fit
//!   that width (comfy-table lays it out).

/// What the ENVIRONMENT section of every tool with a human view says of its colour (one text,
/// so that the tools cannot say different things).
macro_rules! colour_environment_text {
    () => {
        "NO_COLOR: when set and not empty, the view for a person has no colour under --color auto (the default); --color always still colours it. JSON Lines are never coloured."
    };
}
pub(crate) use colour_environment_text;

/// ... and of its width: [`colour_environment_text`] and this.
macro_rules! view_environment_text {
    () => {
        concat!(
            crate::view::colour_environment_text!(),
            "\n\nCOLUMNS: the width the view for a person fits, when set to a number (at least 40 is used); else the width of the terminal on stdout; no limit when stdout is not a terminal."
        )
    };
}
pub(crate) use view_environment_text;

pub mod colour;
pub mod table;
pub mod width;

pub use colour::Paint;
pub use table::{Align, Column, Table};

use std::io::IsTerminal;

/// Whether a tool prints its human view: asked for (`--table`, `--tree`, ...), or stdout is a
/// terminal and JSON Lines were not asked for (`--json`).
pub fn chosen(asked: bool, json_asked: bool) -> bool {
    asked || (!json_asked && std::io::stdout().is_terminal())
}

/// `text` on one line, as shown in a view: runs of white space (newlines included) become one
/// space, control and invisible characters are escaped ([`crate::diag::sanitize`]), and the
/// result is cut to `max` characters (`…` marks a cut).
pub fn one_line(text: &str, max: usize) -> String {
    let mut flat = String::with_capacity(text.len().min(max * 4 + 4));
    for word in text.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.push_str(word);
        if flat.chars().count() > max {
            break;
        }
    }
    width::cut(&crate::diag::sanitize(&flat), max)
}

/// One session's part of a view: a heading naming the session and its input (bold, cut to the
/// width), its table, a note naming the columns left out to fit, and a blank line.
pub fn section(
    session: &str,
    file: &str,
    table: &Table,
    width: Option<usize>,
    colour: bool,
) -> String {
    let session = if session.is_empty() {
        "(no header)"
    } else {
        session
    };
    let head = format!(
        "session {} · {}",
        one_line(session, 80),
        one_line(file, 200)
    );
    let head = match width {
        Some(w) => width::cut(&head, w),
        None => head,
    };
    let mut out = format!("{}\n", Paint::Head.apply(&head, colour));
    out.push_str(&table_with_note(table, width, colour));
    out.push('\n');
    out
}

/// Writes the records of one input (`jsonl`, a tool's own JSON Lines) as one [`section`] per
/// session, in order: `add` makes a record's row (and counts what it needs). For the tools whose
/// view is drawn from their records (pi-tools, pi-compactions), so the view shows what the
/// records say.
pub fn sections(
    jsonl: &[u8],
    columns: &[Column],
    one_line: bool,
    out: &mut crate::output::Out,
    mut add: impl FnMut(&serde_json::Value) -> Vec<(String, Paint)>,
) -> Result<(), crate::output::Stop> {
    let (width, colour) = (width::columns(), colour::enabled());
    let mut session: Option<(String, String)> = None;
    let mut table = Table::new(columns, one_line);
    for line in jsonl.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(r) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let here = (text(&r["file"]), text(&r["session"]));
        if session.as_ref() != Some(&here) {
            if let Some((file, id)) = session.take() {
                out.raw(section(&id, &file, &table, width, colour).as_bytes())?;
            }
            table = Table::new(columns, one_line);
            session = Some(here);
        }
        table.row(add(&r));
    }
    if let Some((file, id)) = session {
        out.raw(section(&id, &file, &table, width, colour).as_bytes())?;
    }
    Ok(())
}

/// A record's string member, or `""`.
pub fn text(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// A table, and after it a note naming the columns left out to fit the width, if any.
pub fn table_with_note(table: &Table, width: Option<usize>, colour: bool) -> String {
    let (mut out, left) = table.render(width, colour);
    if let Some(note) = left.note() {
        let note = match width {
            Some(w) => width::wrap(&note, w),
            None => note,
        };
        out.push_str(&Paint::Dim.apply(note.trim_end(), colour));
        out.push('\n');
    }
    out
}

/// `hh:mm:ss` of an ISO timestamp as written (UTC, as Pi writes it), else `-`.
pub fn clock(ts: &str) -> String {
    match (ts.get(10..11), ts.get(11..19)) {
        (Some("T" | " "), Some(hms)) if hms.as_bytes().get(2) == Some(&b':') => hms.to_string(),
        _ => "-".into(),
    }
}

/// Thousands separators: `1234567` → `1,234,567`.
pub fn thousands(n: u128) -> String {
    group_digits(&n.to_string())
}

/// Decimal digits with thousands separators.
pub fn group_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for a person, in units of 1,024: `512 B`, `34 KB`, `1,023 KB`, `2.1 MB`;
/// a count that rounds to 1,024 KB is written in MB.
pub fn bytes(n: u64) -> String {
    const K: u64 = 1024;
    let kb = n / K + u64::from(n % K >= K / 2);
    if n < K {
        format!("{n} B")
    } else if kb < K {
        format!("{} KB", thousands(kb.into()))
    } else {
        format!("{:.1} MB", n as f64 / (K * K) as f64)
    }
}

/// A duration in milliseconds for a person: `850ms`, `12.3s`, `4m05s`, `2h07m`.
pub fn duration(ms: i64) -> String {
    let (sign, ms) = if ms < 0 { ("-", -ms) } else { ("", ms) };
    let s = ms / 1000;
    let text = match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}.{}s", s, (ms % 1000) / 100),
        60_000..3_600_000 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_escapes_and_cuts() {
        assert_eq!(one_line("a\n\n  b\tc", 10), "a b c");
        assert_eq!(one_line("x\u{1b}[31m y", 20), "x\\u{1b}[31m y");
        assert_eq!(one_line("abcdef ghij", 5), "abcd…");
    }

    #[test]
    fn clocks_and_durations() {
        assert_eq!(clock("2026-03-01T09:30:12.345Z"), "09:30:12");
        assert_eq!(clock("yesterday"), "-");
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(245_000), "4m05s");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(46_424 * 3 / 4), "34 KB");
        assert_eq!(bytes(1_048_063), "1,023 KB");
        assert_eq!(bytes(1_048_575), "1.0 MB");
        assert_eq!(bytes(3_000_000), "2.9 MB");
        assert_eq!(duration(7_620_000), "2h07m");
    }
}
