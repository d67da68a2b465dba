//! pi-usage --table: the usage records as an aligned table for a person.

use super::args::Dim;
use super::decimal::Amount;
#[cfg(test)]
use super::decimal::Cost;
use super::sums::{GroupUsage, Sums};

/// Thousands separators: `1234567` → `1,234,567`.
pub fn thousands(n: u128) -> String {
    group_digits(&n.to_string())
}

/// Decimal digits with thousands separators.
fn group_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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

fn cost_cell(s: &Sums) -> String {
    match s.cost() {
        None => "-".into(),
        Some(c) if s.cost_missing > 0 => format!("{}*", dollars(c)),
        Some(c) => dollars(c),
    }
}

/// A label column: its heading and how to read it from a row.
type Column = (&'static str, fn(&GroupUsage) -> Option<&str>);

fn label_columns(dims: &[Dim]) -> Vec<Column> {
    let mut cols: Vec<Column> = Vec::new();
    for d in dims {
        match d {
            Dim::Session => {
                cols.push(("Session", |a| a.labels.session.as_deref()));
                if !dims.contains(&Dim::Project) {
                    cols.push(("Project", |a| a.labels.project.as_deref()));
                }
            }
            Dim::Project => cols.push(("Project", |a| a.labels.project.as_deref())),
            Dim::Provider => cols.push(("Provider", |a| a.labels.provider.as_deref())),
            Dim::Model => cols.push(("Model", |a| a.labels.model.as_deref())),
            Dim::Day => cols.push(("Day", |a| a.labels.day.as_deref())),
            Dim::Week => cols.push(("Week", |a| a.labels.week.as_deref())),
            Dim::Month => cols.push(("Month", |a| a.labels.month.as_deref())),
        }
    }
    // Session records come first whatever the order given.
    cols.sort_by_key(|c| c.0 != "Session");
    cols
}

const NUMBERS: [&str; 10] = [
    "Messages",
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

fn number_cells(a: &GroupUsage) -> Vec<String> {
    let t = a.total();
    vec![
        thousands(a.messages.count.into()),
        thousands(a.summarization.count.into()),
        thousands(a.usage_entries.count.into()),
        thousands(a.tool_results.count.into()),
        thousands(t.input),
        thousands(t.output),
        thousands(t.cache_read),
        thousands(t.cache_write),
        thousands(t.total_tokens),
        cost_cell(&t),
    ]
}

/// Renders rows (and a total row) as text. Control characters in labels are escaped.
pub fn render(dims: &[Dim], rows: &[GroupUsage], total: &GroupUsage, show_total: bool) -> String {
    let labels = label_columns(dims);
    let mut table: Vec<Vec<String>> = Vec::new();
    let mut header: Vec<String> = labels.iter().map(|c| c.0.to_string()).collect();
    header.extend(NUMBERS.iter().map(|s| s.to_string()));
    table.push(header);
    for a in rows {
        let mut r: Vec<String> = labels
            .iter()
            .map(|c| bounded(&crate::diag::sanitize(c.1(a).unwrap_or("(none)"))))
            .collect();
        r.extend(number_cells(a));
        table.push(r);
    }
    if show_total {
        let mut r: Vec<String> = labels.iter().map(|_| String::new()).collect();
        if let Some(first) = r.first_mut() {
            *first = "Total".into();
        }
        r.extend(number_cells(total));
        table.push(r);
    }
    let ncols = table[0].len();
    let width: Vec<usize> = (0..ncols)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let nlabels = labels.len();
    for (ri, r) in table.iter().enumerate() {
        if (show_total && ri == table.len() - 1) || ri == 1 {
            let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = width[i] - c.chars().count();
                if i < nlabels {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let all = total;
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
    if all.forks_unresolved > 0 {
        out.push_str(&format!(
            "{} forked session(s) whose original is not in the input: their replayed calls are counted\n",
            thousands(all.forks_unresolved.into())
        ));
    }
    out
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
        let rows: Vec<GroupUsage> = (0..100).map(|_| row("/p")).chain([row(&long)]).collect();
        let text = render(&[Dim::Session], &rows, &GroupUsage::default(), true);
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
