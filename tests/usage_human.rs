//! pi-usage for a person (issue 15): --since/--until on call times, the grand total's marker,
//! the session table's times and models, and the tables fitted to COLUMNS.

use crate::util::*;
use serde_json::{json, Value};

fn usage(args: &[&str]) -> Output {
    cmd("pi-usage").args(args).run()
}

fn f(name: &str) -> String {
    fixture_str(name)
}

/// usage-since-days.jsonl, whose calls have inputs 1 (2026-02-28T23:30Z), 10
/// (03-01T00:30Z), 100 (03-01T23:30Z), 1000 (03-02T00:30Z) and 10000 (no time), and
/// usage-since-later.jsonl, one call of 100000 (03-05T10:00Z).
fn since_files() -> [String; 2] {
    [f("usage-since-days.jsonl"), f("usage-since-later.jsonl")]
}

/// The `total.input` of the grand total `args` give over [`since_files`].
fn total_input(args: &[&str]) -> Value {
    let [a, b] = since_files();
    let o = usage(&[args, &["--total", "--json", &a, &b]].concat());
    assert!(o.status == 0 || o.status == 2, "{}", o.stderr);
    let r = o.records();
    let t = r.last().unwrap();
    assert_eq!(t["grand_total"], true);
    t["total"]["input"].clone()
}

#[test]
fn since_and_until_take_whole_days_in_the_zone_both_ends_included() {
    let utc = ["--tz", "UTC"];
    assert_eq!(total_input(&[]), json!(111111));
    let day = total_input(
        &[
            &utc[..],
            &["--since", "2026-03-01", "--until", "2026-03-01"],
        ]
        .concat(),
    );
    assert_eq!(day, json!(110));
    // ccusage's form is the same day.
    let compact =
        total_input(&[&utc[..], &["--since", "20260301", "--until", "20260301"]].concat());
    assert_eq!(compact, json!(110));
    // The same day at +01:00 runs from 02-28T23:00Z to 03-01T22:59:59.999Z.
    let east = total_input(&[
        "--tz",
        "+01:00",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-01",
    ]);
    assert_eq!(east, json!(11));
    assert_eq!(
        total_input(&[&utc[..], &["--since", "2026-03-02"]].concat()),
        json!(101000)
    );
    assert_eq!(
        total_input(&[&utc[..], &["--until", "2026-02-28"]].concat()),
        json!(1)
    );
    // Timestamps are instants, both included.
    let instants = total_input(&[
        "--since",
        "2026-03-01T00:30:00Z",
        "--until",
        "2026-03-01T23:30:00Z",
    ]);
    assert_eq!(instants, json!(110));
    let offset = total_input(&[
        "--since",
        "2026-03-01T01:30:00+01:00",
        "--until",
        "2026-03-01T00:30:00.001Z",
    ]);
    assert_eq!(offset, json!(10));
}

#[test]
fn a_range_leaves_out_sessions_without_a_call_in_it_and_calls_without_a_time() {
    let [a, b] = since_files();
    let o = usage(&[
        "--tz",
        "UTC",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-03",
        "--json",
        "--by",
        "session",
        "--total",
        &a,
        &b,
    ]);
    let r = o.records();
    assert_eq!(r.len(), 2, "{}", o.out());
    assert_eq!(r[0]["session"], "s-days");
    assert_eq!(r[0]["grand_total"], false);
    assert_eq!(r[0]["total"]["input"], 1110);
    assert_eq!(r[1]["grand_total"], true);
    assert_eq!(r[1]["sessions"], 1);
    // Without a range the untimed call counts.
    let all = usage(&["--json", &a, &b]).records();
    assert_eq!(all[0]["total"]["input"], 11111);
    assert_eq!(all[1]["total"]["input"], 100000);
    // By day: only the days in the range.
    let days: Vec<Value> = usage(&[
        "--tz", "UTC", "--by", "day", "--since", "20260301", "--json", &a, &b,
    ])
    .records()
    .iter()
    .map(|r| json!([r["day"], r["total"]["input"]]))
    .collect();
    assert_eq!(
        days,
        vec![
            json!(["2026-03-01", 110]),
            json!(["2026-03-02", 1000]),
            json!(["2026-03-05", 100000])
        ]
    );
}

#[test]
fn bad_dates_are_refused() {
    for bad in ["2026-02-30", "March", "2026-03-01T10:00:00", "2026031"] {
        let o = usage(&["--since", bad, &f("usage-since-days.jsonl")]);
        assert_eq!(o.status, 2, "{bad}");
        assert!(o.stderr.contains("--since"), "{bad}: {}", o.stderr);
        assert!(o.stdout.is_empty());
    }
    let o = usage(&[
        "--context",
        "--since",
        "2026-03-01",
        &f("usage-since-days.jsonl"),
    ]);
    assert_eq!(o.status, 2, "--context has no range");
}

#[test]
fn the_grand_total_is_marked_and_a_group_of_unknowns_is_not() {
    // usage-basic has calls without provider or model: their group's keys are all null too.
    let r = usage(&[
        "--by",
        "model",
        "--total",
        "--json",
        &f("usage-basic.jsonl"),
    ])
    .records();
    let unknown: Vec<&Value> = r.iter().filter(|r| r["model"].is_null()).collect();
    assert_eq!(unknown.len(), 2, "{r:?}");
    assert_eq!(unknown[0]["grand_total"], false);
    assert_eq!(unknown[0]["provider"], Value::Null);
    assert_eq!(unknown[1]["grand_total"], true);
    assert!(r[..r.len() - 1].iter().all(|r| r["grand_total"] == false));
}

/// The table of `args` at `COLUMNS=columns`.
fn table_at(columns: usize, args: &[&str]) -> String {
    cmd("pi-usage")
        .args(["--table", "--tz", "UTC"])
        .args(args)
        .env("COLUMNS", columns.to_string())
        .ok()
        .out()
}

fn widest(t: &str) -> usize {
    t.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_session_table_has_times_and_models_sorted_by_time() {
    let [a, b] = since_files();
    let files = [f("usage-basic.jsonl"), a, b];
    // Wide enough for every column: the fitting is tested below.
    let t = table_at(300, &[&files[0], &files[1], &files[2]]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().take(5).collect::<Vec<_>>(),
        ["Session", "First", "Last", "Models", "Project"],
        "{t}"
    );
    // Sorted by the first call: given s-basic (05-01) first, s-days (02-28), s-later (03-05),
    // the rows are s-days, s-later, s-basic.
    let order: Vec<&str> = lines[2..5]
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(order, ["s-days", "s-later", "s-basic"], "{t}");
    assert!(
        lines[2].contains("2026-02-28 23:30  2026-03-02 00:30  claude-sonnet-4-5"),
        "{t}"
    );
    assert!(lines[4].contains("claude-sonnet-4-5, gpt-5, (none)"), "{t}");
    // Times are in --tz.
    let east = cmd("pi-usage")
        .args(["--table", "--tz", "+05:30", &files[1]])
        .env("COLUMNS", "300")
        .ok()
        .out();
    assert!(
        east.contains("2026-03-01 05:00  2026-03-02 06:00"),
        "{east}"
    );
}

#[test]
fn the_tables_fit_the_width() {
    let [a, b] = since_files();
    let files = [f("usage-basic.jsonl"), a, b];
    let wide = table_at(160, &[&files[0], &files[1], &files[2]]);
    for columns in [60, 80, 160] {
        for args in [
            vec![files[0].as_str(), files[1].as_str(), files[2].as_str()],
            vec!["--by", "day,model", files[0].as_str()],
        ] {
            let t = table_at(columns, &args);
            assert!(widest(&t) <= columns, "COLUMNS={columns} {args:?}:\n{t}");
            // The cost column is never dropped.
            assert!(t.lines().next().unwrap().ends_with("Cost"), "{t}");
        }
    }
    // At 160 only the three rarest counts go (the two zero in every row said apart), and the models are cut only as far as the
    // width then needs (not to their narrowest, 12 columns).
    assert!(
        wide.contains(
            "not shown, to fit COLUMNS: Summaries; Usage entries, Tool results (zero in every row) (--json has every field)"
        ),
        "{wide}"
    );
    assert!(wide.contains("  claude-sonnet-4-5, …  "), "{wide}");
    assert_eq!(widest(&wide), 160, "{wide}");
    let t80 = table_at(80, &[&files[0], &files[1], &files[2]]);
    assert_eq!(
        t80,
        "\
Session  First             Models            Project       Total tokens     Cost
-------  ----------------  ----------------  ------------  ------------  -------
s-days   2026-02-28 23:30  claude-sonnet-4…  /home/u/proj        11,116  $0.0050
s-later  2026-03-05 10:00  gpt-5             /home/u/proj       100,001  $0.0010
s-basic  2026-05-01 10:00  claude-sonnet-4…  /home/u/proj         3,015  $0.6000
-------  ----------------  ----------------  ------------  ------------  -------
Total                                                           114,132  $0.6060
not shown, to fit COLUMNS: Last, Assistant msgs, Summaries, Input, Output, Cache
  read, Cache write; Usage entries, Tool results (zero in every row) (--json has
  every field)
"
    );
    let t60 = table_at(60, &[&files[0], &files[1], &files[2]]);
    assert!(
        t60.contains("not shown, to fit COLUMNS: Last, Models, Project,"),
        "{t60}"
    );
}

/// The --context table of usage-context.jsonl at `COLUMNS=columns`.
fn context_at(columns: usize, extra: &[&str]) -> String {
    cmd("pi-usage")
        .args(["--context", "--table"])
        .args(extra)
        .arg(fixture("usage-context.jsonl"))
        .env("COLUMNS", columns.to_string())
        .ok()
        .out()
}

#[test]
fn the_context_table_draws_a_bar_per_message_with_the_window_and_compactions() {
    for columns in [60, 80, 160] {
        let t = context_at(columns, &[]);
        assert!(widest(&t) <= columns, "COLUMNS={columns}:\n{t}");
        let rows: Vec<&str> = t
            .lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .collect();
        assert_eq!(rows.len(), 8, "one row per assistant message:\n{t}");
        // The window of claude-sonnet-4-5 (built in) is marked on its rows, not on the others'.
        assert!(rows[..5].iter().all(|r| r.contains('│')), "{t}");
        assert!(rows[5..].iter().all(|r| !r.contains('│')), "{t}");
        assert!(rows[3].ends_with("compacted, drop 9,000"), "{t}");
        assert!(rows[5].contains("drop 1,000"), "{t}");
        assert!(
            t.contains("window 200,000 (built in, @earendil-works/pi-ai 1.6.0)"),
            "{t}"
        );
    }
    let t80 = context_at(80, &[]);
    let lines: Vec<&str> = t80.lines().collect();
    assert_eq!(
        lines[0],
        format!("session s-ctx  {}", f("usage-context.jsonl"))
    );
    assert_eq!(lines[3], "line  time   context  fill  context (│ window)");
    // 50,000 of 200,000 on a 26-cell bar: 7 cells (rounded), the window at the last.
    assert_eq!(
        lines[5],
        "   5  10:00   50,000   25%  ███████···················│"
    );
    // At 40 columns a note does not fit beside the bar: it is written whole under its row.
    let t40 = context_at(40, &[]);
    assert!(widest(&t40) <= 40, "{t40}");
    let lines: Vec<&str> = t40.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.trim_start().starts_with("9 "))
        .expect(&t40);
    assert!(lines[row].trim_end().ends_with('│'), "{t40}");
    assert_eq!(lines[row + 1].trim(), "compacted, drop 9,000", "{t40}");
    // models.json's window is named as such.
    let configured = context_at(80, &["--models", &f("models/models.json")]);
    assert!(
        configured.contains("window 200,000 (models.json, model_overrides)"),
        "{configured}"
    );
    // Records, not a table, without --table in a pipe.
    let json = cmd("pi-usage")
        .args(["--context", &f("usage-context.jsonl")])
        .ok()
        .out();
    assert!(json.starts_with("{\"type\":\"context\""));
}
