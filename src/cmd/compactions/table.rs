//! pi-compactions' human view (the default on a terminal, `--table` in a pipe): per session
//! with compactions or compaction failures a table, one row each (time, line, trigger, basis,
//! tokens before and after, the first kept entry, the evidence), and at the end the counts by
//! trigger and basis.
//!
//! The rows are read from the records pi-compactions writes, so the view says nothing they do
//! not. Columns fit the width ([`crate::view::table`]): the evidence wraps, the first kept
//! entry never does; when the columns cannot fit, those empty in every row are left out (a
//! failure has no tokens before or after), then the others in this order: first kept, line,
//! time, basis, after, evidence (trigger and before always stay unless empty).

use super::trigger::{Basis, Trigger};
use crate::output::{Out, Stop};
use crate::view::{self, Align, Column, Paint};
use serde_json::Value;

const COLUMNS: [Column; 8] = [
    Column::fixed("time", Align::Left).drops(4),
    Column::fixed("line", Align::Right).drops(5),
    Column::fixed("trigger", Align::Left),
    Column::fixed("basis", Align::Left).drops(3),
    Column::fixed("before", Align::Right),
    Column::fixed("after", Align::Right).drops(2),
    // One line, never wrapped: the first to go when the table does not fit.
    Column::fixed("first kept", Align::Left).drops(6),
    Column::fixed("evidence", Align::Left).shrinks(16).drops(1),
];

/// What the rows of the inputs count, for the closing line.
#[derive(Default)]
pub(super) struct Tally {
    compactions: u64,
    /// By trigger and by basis, in the order of [`Trigger::ALL`] and [`Basis::ALL`].
    triggers: [u64; 5],
    bases: [u64; 3],
    failures: u64,
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.compactions += other.compactions;
        self.failures += other.failures;
        for (a, b) in self.triggers.iter_mut().zip(other.triggers) {
            *a += b;
        }
        for (a, b) in self.bases.iter_mut().zip(other.bases) {
            *a += b;
        }
    }

    fn count(&mut self, r: &Value) {
        match r["type"].as_str() {
            Some("compaction_report") => {
                self.compactions += 1;
                let trigger = Trigger::ALL.iter().find(|t| r["trigger"] == t.name());
                let basis = Basis::ALL.iter().find(|b| r["basis"] == b.name());
                if let Some(t) = trigger {
                    self.triggers[t.index()] += 1;
                }
                if let Some(b) = basis {
                    self.bases[b.index()] += 1;
                }
            }
            Some("compaction_failure") => self.failures += 1,
            _ => {}
        }
    }

    /// `N compactions: manual 1, overflow 2 (recorded 1, inferred 2); N failures`.
    fn line(&self) -> String {
        let plural = |n: u64, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let counts = |names: &mut dyn Iterator<Item = (&'static str, u64)>| -> String {
            let parts: Vec<String> = names
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            parts.join(", ")
        };
        let mut line = plural(self.compactions, "compaction");
        if self.compactions > 0 {
            let triggers = counts(
                &mut Trigger::ALL
                    .iter()
                    .map(|t| (t.name(), self.triggers[t.index()])),
            );
            let bases = counts(&mut Basis::ALL.iter().map(|b| (b.name(), self.bases[b.index()])));
            line.push_str(&format!(": {triggers} ({bases})"));
        }
        line.push_str(&format!("; {}", plural(self.failures, "failure")));
        line
    }
}

/// Writes the tables of the records in `jsonl` (one input's) and returns what they count.
pub(super) fn write_tables(jsonl: &[u8], out: &mut Out) -> Result<Tally, Stop> {
    let mut tally = Tally::default();
    view::sections(jsonl, &COLUMNS, false, out, |r| {
        tally.count(r);
        row(r)
    })?;
    Ok(tally)
}

/// The closing line, after the last input's tables.
pub(super) fn write_footer(tally: &Tally, out: &mut Out) -> Result<(), Stop> {
    let colour = view::colour::enabled();
    let line = match view::width::columns() {
        Some(w) => view::width::wrap(&tally.line(), w),
        None => format!("{}\n", tally.line()),
    };
    out.raw(Paint::Head.apply(line.trim_end(), colour).as_bytes())?;
    out.raw(b"\n")
}

fn tokens(v: &Value) -> String {
    v.as_u64()
        .map(|n| view::thousands(n.into()))
        .unwrap_or_default()
}

/// A record's row: a compaction, a failure, or (with options) an assistant error or a branch
/// summary.
fn row(r: &Value) -> Vec<(String, Paint)> {
    let kind = view::text(&r["type"]);
    let (trigger, basis, paint) = match kind.as_str() {
        "compaction_report" => {
            let basis = view::text(&r["basis"]);
            let paint = if basis == "unknown" {
                Paint::Warn
            } else {
                Paint::Plain
            };
            (view::text(&r["trigger"]), basis, paint)
        }
        "compaction_failure" => (view::text(&r["trigger"]), "failed".into(), Paint::Error),
        "assistant_error" => ("error".into(), String::new(), Paint::Error),
        other => (other.replace('_', " "), String::new(), Paint::Dim),
    };
    // After: what Pi recorded, else the context the next reply recorded (marked ~).
    let after = match (r["tokens_after"].as_u64(), r["context_after"].as_u64()) {
        (Some(n), _) => view::thousands(n.into()),
        (None, Some(n)) => format!("~{}", view::thousands(n.into())),
        (None, None) => String::new(),
    };
    let kept = &r["first_kept"];
    let first_kept = match (kept["entry"].as_str(), kept["line"].as_u64()) {
        _ if r["retain_none"] == true => "(nothing)".to_string(),
        (Some(id), Some(line)) => format!("{} (line {line})", view::one_line(id, 40)),
        (Some(id), None) => view::one_line(id, 40),
        (None, Some(line)) => format!("line {line}"),
        (None, None) => String::new(),
    };
    vec![
        (
            view::clock(r["timestamp"].as_str().unwrap_or_default()),
            Paint::Dim,
        ),
        (r["line"].to_string(), Paint::Dim),
        (view::one_line(&trigger, 30), paint),
        (view::one_line(&basis, 20), paint),
        (tokens(&r["tokens_before"]), Paint::Plain),
        (after, Paint::Plain),
        (first_kept, Paint::Dim),
        (evidence(r), Paint::Plain),
    ]
}

/// The evidence on one line: each clue's rule, line and detail; a failure's kind and status.
fn evidence(r: &Value) -> String {
    if let Some(clues) = r["evidence"].as_array() {
        let parts: Vec<String> = clues
            .iter()
            .map(|c| {
                let at = c["line"]
                    .as_u64()
                    .map(|l| format!(" (line {l})"))
                    .unwrap_or_default();
                format!(
                    "{}{at}: {}",
                    view::text(&c["rule"]),
                    view::text(&c["detail"])
                )
            })
            .collect();
        return view::one_line(&parts.join("; "), 400);
    }
    let parts: Vec<String> = ["failure", "error_kind", "http_status", "from"]
        .iter()
        .filter_map(|k| match &r[*k] {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(format!("HTTP {n}")),
            _ => None,
        })
        .collect();
    view::one_line(&parts.join(", "), 400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_counts_by_trigger_and_basis() {
        let mut t = Tally::default();
        assert_eq!(t.line(), "0 compactions; 0 failures");
        let report = |trigger: &str, basis: &str| serde_json::json!({"type": "compaction_report", "trigger": trigger, "basis": basis});
        t.count(&report("overflow", "inferred"));
        t.count(&report("manual", "recorded"));
        t.count(&serde_json::json!({"type": "compaction_failure"}));
        assert_eq!(
            t.line(),
            "2 compactions: manual 1, overflow 1 (recorded 1, inferred 1); 1 failure"
        );
    }
}
