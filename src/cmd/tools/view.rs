//! pi-tools' human view (the default on a terminal, `--table` in a pipe): per session a table
//! of its calls (time, line, name, status, duration, a one-line preview of the arguments and of
//! the result; failures in colour), and at the end a summary per tool name (calls, errors,
//! calls with no result, total duration).
//!
//! The rows are read from the records pi-tools writes (so the view says nothing the records do
//! not), with result text cut to [`KEPT_TEXT`] characters before it is written. Columns fit
//! the width ([`crate::view::table`]); when they cannot, they are left out in this order:
//! line, result, duration, time, arguments (name and status always stay); the summary's: no
//! result, then total time.

use super::args::Args;
use crate::output::{Out, Stop};
use crate::view::{self, Align, Column, Paint, Table};
use serde_json::Value;
use std::collections::BTreeMap;

/// The result text kept for a preview: more than any row shows.
pub(super) const KEPT_TEXT: usize = 400;

/// The longest a preview cell is in a pipe with no width (cut to the column otherwise).
const PREVIEW_CHARS: usize = 80;

const CALLS: [Column; 7] = [
    Column::fixed("time", Align::Left).drops(2),
    Column::fixed("line", Align::Right).drops(5),
    Column::fixed("name", Align::Left).shrinks(8),
    Column::fixed("status", Align::Left),
    Column::fixed("took", Align::Right).drops(3),
    Column::fixed("arguments", Align::Left).shrinks(10).drops(1),
    Column::fixed("result", Align::Left).shrinks(10).drops(4),
];

const SUMMARY: [Column; 5] = [
    Column::fixed("tool", Align::Left).shrinks(8),
    Column::fixed("calls", Align::Right),
    Column::fixed("errors", Align::Right),
    Column::fixed("no result", Align::Right).drops(2),
    Column::fixed("total time", Align::Right).drops(1),
];

/// The arguments a view reads records with: result text cut to [`KEPT_TEXT`].
pub(super) fn record_args(args: &Args) -> Args {
    let mut a = args.clone();
    a.max_text = Some(a.max_text.map_or(KEPT_TEXT, |m| m.min(KEPT_TEXT)));
    a
}

/// The counts of one tool name.
#[derive(Default, Clone, Copy)]
pub(super) struct NameCounts {
    calls: u64,
    errors: u64,
    no_result: u64,
    duration_ms: i64,
    /// Records with a duration: with none, the total time is unknown (`-`), not zero.
    timed: u64,
    /// Calls answered (or user commands) without a duration: with any, the total is a least
    /// (`≥`).
    untimed: u64,
}

/// The counts per tool name, in name order.
pub(super) type Summary = BTreeMap<String, NameCounts>;

impl NameCounts {
    fn add(&mut self, c: &NameCounts) {
        self.calls += c.calls;
        self.errors += c.errors;
        self.no_result += c.no_result;
        self.duration_ms += c.duration_ms;
        self.timed += c.timed;
        self.untimed += c.untimed;
    }
}

/// Adds one input's counts to those of the inputs before it.
pub(super) fn merge(into: &mut Summary, from: Summary) {
    for (name, c) in from {
        into.entry(name).or_default().add(&c);
    }
}

/// Writes the tables of the records in `jsonl` (one input's) and returns its counts.
pub(super) fn write_calls(jsonl: &[u8], out: &mut Out) -> Result<Summary, Stop> {
    let mut summary = Summary::new();
    view::sections(jsonl, &CALLS, true, out, |r| {
        count(&mut summary, r);
        row(r)
    })?;
    Ok(summary)
}

/// A record's row.
fn row(r: &Value) -> Vec<(String, Paint)> {
    let status = view::text(&r["status"]);
    let paint = status_paint(&status);
    let mut name = view::one_line(r["name"].as_str().unwrap_or("?"), 40);
    if r["by_user"] == Value::Bool(true) {
        name.insert(0, '!');
    }
    let result = match r.get("result") {
        Some(res) if res.is_object() => res,
        // A tool_result record is its own result.
        _ if r["type"] == "tool_result" => r,
        _ => &Value::Null,
    };
    let evidence = view::text(&r["evidence"]);
    let result_text = match result["text"].as_str() {
        Some(t) => view::one_line(t, PREVIEW_CHARS),
        // A failure without text says why (an aborted turn), unless that is its status.
        None if paint == Paint::Plain || evidence == status => String::new(),
        None => evidence,
    };
    vec![
        (
            view::clock(r["timestamp"].as_str().unwrap_or_default()),
            Paint::Dim,
        ),
        (r["line"].to_string(), Paint::Dim),
        (name, Paint::Plain),
        (status, paint),
        (
            r["duration_ms"]
                .as_i64()
                .map(view::duration)
                .unwrap_or_default(),
            Paint::Plain,
        ),
        (arguments_preview(&r["arguments"]), Paint::Plain),
        (
            result_text,
            if paint == Paint::Error {
                Paint::Error
            } else {
                Paint::Plain
            },
        ),
    ]
}

fn status_paint(status: &str) -> Paint {
    match status {
        "error" => Paint::Error,
        "ok" => Paint::Plain,
        _ => Paint::Warn,
    }
}

/// The arguments on one line: the value of the one member that says most (a command, a path,
/// a pattern, ...) when there is one, else the arguments as JSON.
fn arguments_preview(args: &Value) -> String {
    const TELLING: [&str; 7] = [
        "command",
        "path",
        "file_path",
        "pattern",
        "url",
        "query",
        "cmd",
    ];
    let telling = TELLING
        .iter()
        .find_map(|k| args.get(k).and_then(Value::as_str));
    match (telling, args) {
        (Some(t), _) => view::one_line(t, PREVIEW_CHARS),
        (None, Value::Null) => String::new(),
        (None, v) => view::one_line(&v.to_string(), PREVIEW_CHARS),
    }
}

fn count(summary: &mut Summary, r: &Value) {
    let name = view::one_line(r["name"].as_str().unwrap_or("?"), 40);
    let c = summary.entry(name).or_default();
    c.calls += u64::from(r["type"] == "tool_call");
    match r["status"].as_str() {
        Some("error") => c.errors += 1,
        Some("no_result") => c.no_result += 1,
        _ => {}
    }
    if let Some(ms) = r["duration_ms"].as_i64() {
        c.duration_ms += ms;
        c.timed += 1;
    } else if r["type"] == "tool_call" && r["status"] != "no_result" {
        c.untimed += 1;
    }
}

/// The summary table per tool name, after every session's table.
pub(super) fn write_summary(summary: &Summary, out: &mut Out) -> Result<(), Stop> {
    if summary.is_empty() {
        return out.raw(b"No tool calls.\n");
    }
    let (width, colour) = (view::width::columns(), view::colour::enabled());
    let mut table = Table::new(&SUMMARY, true);
    let mut all = NameCounts::default();
    let add_row = |table: &mut Table, name: &str, c: &NameCounts| {
        table.row(vec![
            (name.to_string(), Paint::Plain),
            (c.calls.to_string(), Paint::Plain),
            (
                c.errors.to_string(),
                if c.errors > 0 {
                    Paint::Error
                } else {
                    Paint::Plain
                },
            ),
            (
                c.no_result.to_string(),
                if c.no_result > 0 {
                    Paint::Warn
                } else {
                    Paint::Plain
                },
            ),
            (
                if c.timed > 0 && c.untimed > 0 {
                    format!("≥{}", view::duration(c.duration_ms))
                } else if c.timed > 0 {
                    view::duration(c.duration_ms)
                } else {
                    "-".into()
                },
                Paint::Plain,
            ),
        ]);
    };
    for (name, c) in summary {
        add_row(&mut table, name, c);
        all.add(c);
    }
    add_row(&mut table, "all", &all);
    out.raw(format!("{}\n", Paint::Head.apply("Summary by tool", colour)).as_bytes())?;
    out.raw(view::table_with_note(&table, width, colour).as_bytes())
}
