//! pi-usage --table: the usage records as an aligned table for a person.

use super::args::Dim;
use super::decimal::Amount;
#[cfg(test)]
use super::decimal::Cost;
use super::sums::{label_of, GroupUsage, Sums};
use crate::calendar::Zone;
use crate::view::{group_digits, thousands, width, Paint};

/// A cost sum as `$1,234.5678` (rounded half to even to 4 places).
pub fn dollars(v: &Amount) -> String {
    let digits = format!("{:0>5}", v.rounded(4));
    let (whole, places) = digits.split_at(digits.len() - 4);
    format!("${}.{places}", group_digits(whole))
}

/// The widest a label cell is, in characters: a longer label (a 1 MB `cwd`) would pad every
/// row of its column to its width (issue 19, item 4).
pub const MAX_LABEL: usize = 120;

/// `label`, cut to [`MAX_LABEL`] characters when longer: its start and its end (where a path
/// names its folder) around an ellipsis.
fn bounded(label: &str) -> String {
    let n = label.chars().count();
    if n <= MAX_LABEL {
        return label.to_string();
    }
    let head = (MAX_LABEL - 1) / 2;
    let tail = MAX_LABEL - 1 - head;
    let mut out: String = label.chars().take(head).collect();
    out.push('…');
    out.extend(label.chars().skip(n - tail));
    out
}

/// A cost cell: the sum, `*` after it when some calls recorded no cost, `-` when none did.
pub fn cost_cell(s: &Sums) -> String {
    match s.cost() {
        None => "-".into(),
        Some(c) if s.cost_missing > 0 => format!("{}*", dollars(c)),
        Some(c) => dollars(c),
    }
}

/// How a table cell is read from a row.
type Cell = Box<dyn Fn(&GroupUsage) -> String>;

/// A column of the table.
struct Column {
    head: &'static str,
    cell: Cell,
    /// Labels are aligned left, numbers right.
    left: bool,
    /// When the table is too wide: the narrowest a label column is cut to (0: never cut),
    /// and whether it keeps its end rather than its start (a session id's random part).
    min: usize,
    keep_end: bool,
}

fn label(head: &'static str, min: usize, read: fn(&GroupUsage) -> Option<&str>) -> Column {
    Column {
        head,
        cell: Box::new(move |g| bounded(&crate::diag::sanitize(read(g).unwrap_or("(none)")))),
        left: true,
        min,
        keep_end: false,
    }
}

/// The project column: cut, it keeps its end, which names the project's folder (as
/// pi-sessions' does).
fn project() -> Column {
    let mut c = label("Project", 12, |a| a.labels.project.as_deref());
    c.keep_end = true;
    c
}

/// The label columns of `dims`; per session also its first and last call and its models.
fn label_columns(dims: &[Dim], zone: &Zone) -> Vec<Column> {
    let mut cols: Vec<Column> = Vec::new();
    if dims.contains(&Dim::Session) {
        let mut id = label("Session", 13, |a| a.labels.session.as_deref());
        id.keep_end = true;
        cols.push(id);
        for (head, last) in [("First", false), ("Last", true)] {
            let zone = zone.clone();
            cols.push(Column {
                head,
                cell: Box::new(move |g| {
                    let t = if last { &g.last } else { &g.first };
                    t.as_ref().map_or("-".into(), |t| minute(t.0, &zone))
                }),
                left: true,
                min: 0,
                keep_end: false,
            });
        }
        cols.push(Column {
            head: "Models",
            cell: Box::new(models_cell),
            left: true,
            min: 12,
            keep_end: false,
        });
        if !dims.contains(&Dim::Project) {
            cols.push(project());
        }
    }
    for d in dims {
        match d {
            Dim::Session => {}
            Dim::Project => cols.push(project()),
            Dim::Provider => cols.push(label("Provider", 8, |a| a.labels.provider.as_deref())),
            Dim::Model => cols.push(label("Model", 12, |a| a.labels.model.as_deref())),
            Dim::Day => cols.push(label("Day", 0, |a| a.labels.day.as_deref())),
            Dim::Week => cols.push(label("Week", 0, |a| a.labels.week.as_deref())),
            Dim::Month => cols.push(label("Month", 0, |a| a.labels.month.as_deref())),
        }
    }
    cols
}

/// Whether the column headed `head` is a key of the grouping `dims`: what tells its rows
/// apart.
fn is_key(head: &str, dims: &[Dim]) -> bool {
    dims.iter().any(|d| match d {
        Dim::Session => head == "Session",
        Dim::Project => head == "Project",
        Dim::Provider => head == "Provider",
        Dim::Model => head == "Model",
        Dim::Day | Dim::Week | Dim::Month => false,
    })
}

/// `YYYY-MM-DD hh:mm` of the instant `ms` in `zone`.
fn minute(ms: i64, zone: &Zone) -> String {
    let local = ms.saturating_add(i64::from(zone.offset_at(ms.div_euclid(1000))) * 1000);
    let iso = crate::time::format_iso8601(local);
    match (iso.get(..10), iso.get(11..16)) {
        (Some(day), Some(hm)) => format!("{day} {hm}"),
        _ => iso,
    }
}

/// The distinct models of a row's counted calls, without their providers.
pub fn models_cell(g: &GroupUsage) -> String {
    let mut names: Vec<String> = Vec::new();
    for (_, m) in g.by_model.keys() {
        let m = crate::diag::sanitize(label_of(m).unwrap_or("(none)")).into_owned();
        if !names.contains(&m) {
            names.push(m);
        }
    }
    if names.is_empty() {
        return "-".into();
    }
    bounded(&names.join(", "))
}

/// The number columns, and the order they are dropped in when the table is too wide (the
/// first named goes first): the less asked-for counts before the tokens, the cost never.
const NUMBERS: [&str; 10] = [
    "Assistant msgs",
    "Summaries",
    "Usage entries",
    "Tool results",
    "Input",
    "Output",
    "Cache read",
    "Cache write",
    "Total tokens",
    "Cost",
];
const DROP_ORDER: [&str; 11] = [
    "Summaries",
    "Usage entries",
    "Tool results",
    "Cache write",
    "Cache read",
    "Assistant msgs",
    "Input",
    "Output",
    "Last",
    "Project",
    "Models",
];

fn number_column(i: usize) -> Column {
    Column {
        head: NUMBERS[i],
        cell: Box::new(move |a| {
            let t = a.total();
            match i {
                0 => thousands(a.messages.count.into()),
                1 => thousands(a.summarization.count.into()),
                2 => thousands(a.usage_entries.count.into()),
                3 => thousands(a.tool_results.count.into()),
                4 => thousands(t.input),
                5 => thousands(t.output),
                6 => thousands(t.cache_read),
                7 => thousands(t.cache_write),
                8 => thousands(t.total_tokens),
                _ => cost_cell(&t),
            }
        }),
        left: false,
        min: 0,
        keep_end: false,
    }
}

/// Renders rows (and a total row) as text, `columns` wide at most when possible (`None`: no
/// limit): label columns are cut first (projects and models to 12 characters, providers to 8,
/// session ids to 13, keeping their end), then columns dropped in [`DROP_ORDER`]; the notes are wrapped. Rows per session
/// are sorted by their first call (sessions without one last). Control characters in labels
/// are escaped.
pub fn render(
    dims: &[Dim],
    rows: &mut [GroupUsage],
    total: &GroupUsage,
    show_total: bool,
    zone: &Zone,
    columns: Option<usize>,
) -> String {
    if dims.contains(&Dim::Session) {
        // Stable: sessions with the same first time keep their input order.
        rows.sort_by_key(|g| g.first.as_ref().map_or(i64::MAX, |t| t.0));
    }
    let mut cols = label_columns(dims, zone);
    let nlabels = cols.len();
    cols.extend((0..NUMBERS.len()).map(number_column));
    let mut table: Vec<Vec<String>> = vec![cols.iter().map(|c| c.head.to_string()).collect()];
    for a in rows.iter() {
        table.push(cols.iter().map(|c| (c.cell)(a)).collect());
    }
    if show_total {
        let mut r: Vec<String> = cols.iter().map(|c| (c.cell)(total)).collect();
        for (i, cell) in r.iter_mut().enumerate().take(nlabels) {
            *cell = if i == 0 {
                "Total".into()
            } else {
                String::new()
            };
        }
        table.push(r);
    }
    let cuts: Vec<width::Cut> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| width::Cut {
            head: c.head,
            min: c.min,
            keep_end: c.keep_end,
            // The grouping's labels; beside a session, the project and models are not.
            key: i < nlabels && is_key(c.head, dims),
            // A count that is zero in every row.
            blank: i >= nlabels && table.iter().skip(1).all(|r| r[i] == "0"),
            yields: false,
        })
        .collect();
    // A key of the grouping is never left out: without it the rows could not be told apart.
    // Project is one with `--by project`, and only shown beside the session otherwise.
    let drop_order: Vec<&str> = DROP_ORDER
        .into_iter()
        .filter(|&head| head != "Project" || !dims.contains(&Dim::Project))
        .collect();
    let keep = width::cut_then_drop(&cuts, &mut table, &drop_order, columns);
    let width: Vec<usize> = (0..cols.len())
        .map(|i| width::column_width(&table, i))
        .collect();
    let colour = crate::view::colour::enabled();
    let mut out = String::new();
    for (ri, r) in table.iter().enumerate() {
        let is_total = show_total && ri == table.len() - 1;
        if is_total || ri == 1 {
            let rule: Vec<String> = keep.iter().map(|&i| "-".repeat(width[i])).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
        let cells: Vec<String> = keep
            .iter()
            .map(|&i| width::aligned(&r[i], width[i], cols[i].left))
            .collect();
        let line = cells.join("  ");
        // The heads and the total row in bold, painted after the widths are measured.
        let paint = if ri == 0 || is_total {
            Paint::Head
        } else {
            Paint::Plain
        };
        out.push_str(&paint.apply(line.trim_end(), colour));
        out.push('\n');
    }
    let mut text = String::new();
    let blank: Vec<bool> = cuts.iter().map(|c| c.blank).collect();
    notes(&mut text, total, &cols, &keep, &blank);
    match columns {
        Some(c) => out.push_str(&width::wrap(&text, c)),
        None => out.push_str(&text),
    }
    out
}

/// The notes under the table: missing costs, repeats left out, oh-my-pi's sub-agent usage,
/// unresolved forks, and the columns left out to fit the width (those `blank`, zero in every
/// row, said apart).
fn notes(out: &mut String, all: &GroupUsage, cols: &[Column], keep: &[usize], blank: &[bool]) {
    let missing = all.total().cost_missing;
    if missing > 0 {
        out.push_str(&format!(
            "* cost not recorded for {} call(s): counted, not priced\n",
            thousands(missing.into())
        ));
    }
    if all.duplicates > 0 {
        out.push_str(&format!(
            "{} repeated call(s) left out (forks, sub-agent copies); --no-dedup counts them\n",
            thousands(all.duplicates.into())
        ));
    }
    let sub = &all.subagents;
    if sub.count > 0 {
        let cost = match sub.cost() {
            Some(c) if sub.cost_missing > 0 => format!("{} and some unpriced", dollars(c)),
            Some(c) => dollars(c),
            None => "cost not recorded".into(),
        };
        out.push_str(&format!(
            "oh-my-pi task results report {} more token(s) ({cost}) for their sub-agents: not in these totals (the sub-agents' own session files hold those calls)\n",
            thousands(sub.tokens()),
        ));
    }
    if all.forks_unresolved > 0 {
        out.push_str(&format!(
            "{} forked session(s) whose original is not in the input: their replayed calls are counted\n",
            thousands(all.forks_unresolved.into())
        ));
    }
    let dropped = |zero: bool| -> Vec<&str> {
        (0..cols.len())
            .filter(|&i| !keep.contains(&i) && blank[i] == zero)
            .map(|i| cols[i].head)
            .collect()
    };
    let (cut, zero) = (dropped(false), dropped(true));
    let said = match (cut.is_empty(), zero.is_empty()) {
        (true, true) => return,
        (false, true) => cut.join(", "),
        (true, false) => format!("{} (zero in every row)", zero.join(", ")),
        (false, false) => format!(
            "{}; {} (zero in every row)",
            cut.join(", "),
            zero.join(", ")
        ),
    };
    out.push_str(&format!(
        "not shown, to fit COLUMNS: {said} (--json has every field)\n"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19, item 4: a label cell is at most MAX_LABEL characters, so one huge `cwd`
    /// cannot pad every row of the table to its size.
    #[test]
    fn item_4_label_cells_are_bounded() {
        assert_eq!(bounded("/home/u/proj"), "/home/u/proj");
        let exact = "x".repeat(MAX_LABEL);
        assert_eq!(bounded(&exact), exact);
        let long = format!("/{}/tail", "é".repeat(1_000_000));
        let b = bounded(&long);
        assert_eq!(b.chars().count(), MAX_LABEL);
        assert!(b.starts_with("/éé") && b.ends_with("éé/tail") && b.contains('…'));
        let row = |cwd: &str| {
            let mut g = GroupUsage::default();
            g.labels.session = Some("s".into());
            g.labels.project = Some(cwd.into());
            g
        };
        let mut rows: Vec<GroupUsage> = (0..100).map(|_| row("/p")).chain([row(&long)]).collect();
        let text = render(
            &[Dim::Session],
            &mut rows,
            &GroupUsage::default(),
            true,
            &Zone::Utc,
            None,
        );
        assert!(text.len() < 102 * 400, "{} bytes", text.len());
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let amount = |v: u128| {
            let mut a = Amount::default();
            a.add(&Cost::Units(v));
            a
        };
        let one = 1_000_000_000_000_000_000u128;
        assert_eq!(dollars(&amount(1234 * one + one / 2)), "$1,234.5000");
        assert_eq!(dollars(&amount(8_358_960_000_000_000)), "$0.0084");
        assert_eq!(dollars(&amount(0)), "$0.0000");
        // Half to even at the fourth place.
        assert_eq!(dollars(&amount(50_000_000_000_000)), "$0.0000");
        assert_eq!(dollars(&amount(150_000_000_000_000)), "$0.0002");
        // Past i128::MAX (issue 19, item 2).
        let mut big = amount(u128::MAX);
        big.add(&Cost::Units(u128::MAX));
        assert_eq!(dollars(&big), "$680,564,733,841,876,926,926.7492");
    }
}
