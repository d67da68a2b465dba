//! pi-usage on what Pi 1.x writes (issue 13): every billed source Pi 1.6.0's session stats add
//! up, each kept apart; totals equal to Pi's own; breakdowns never added on top; repeats of
//! the new sources found in forks.
//!
//! The "Pi says" numbers below are what Pi 1.6.0's own code answered for these fixtures:
//! `AgentSession.prototype.getSessionStats` (dist/core/agent-session.js) over
//! `SessionManager.open(file)`, and `getUsageCostBreakdown(getEntries())`
//! (dist/core/usage-totals.js), run once by hand with Node 22 (see docs/USAGE-COMPARISON.md).

use crate::util::*;
use serde_json::{json, Value};

fn f(name: &str) -> String {
    fixture_str(name)
}

fn one_record(args: &[&str]) -> Value {
    let o = cmd("pi-usage").args(args).ok();
    let r = o.records();
    assert_eq!(r.len(), 1, "{}", o.out());
    r.into_iter().next().unwrap()
}

/// input, output, cache_read, cache_write, tokens of a sums object.
fn tokens(s: &Value) -> Value {
    json!([
        s["input"],
        s["output"],
        s["cache_read"],
        s["cache_write"],
        s["tokens"]
    ])
}

/// The cost member of the record's raw text (the exact decimal as written).
fn cost_text<'a>(line: &'a str, object: &str) -> &'a str {
    let at = line.find(&format!("\"{object}\":{{")).unwrap();
    let rest = &line[at..];
    let c = rest.find("\"cost\":").unwrap() + 7;
    let end = rest[c..].find(',').unwrap();
    &rest[c..c + end]
}

#[test]
fn every_source_is_kept_apart_and_the_total_is_pis() {
    let o = cmd("pi-usage")
        .args(["--json", &f("usage-pi1-sources.jsonl")])
        .ok();
    let r = &o.records()[0];
    // Pi says: tokens {input 6510, output 680, cacheRead 52100, cacheWrite 500, total 59790},
    // cost 0.043158499999999995 (floats added in file order).
    assert_eq!(tokens(&r["total"]), json!([6510, 680, 52100, 500, 59790]));
    assert_eq!(cost_text(&o.out(), "total"), "0.0431585");
    let pi_cost = 0.043158499999999995_f64;
    assert!((r["total"]["cost"].as_f64().unwrap() - pi_cost).abs() < 1e-15);
    assert_eq!(r["total"]["count"], 8);
    assert_eq!(r["total"]["cost_missing"], 0);
    // Each source apart: three assistant messages (one on a second root: Pi counts the whole
    // file), a compaction and a branch summary, two usage entries, one tool result.
    let source = |k: &str| {
        json!([
            r[k]["count"],
            r[k]["tokens"],
            r[k]["cost"].as_f64().map(|c| (c * 1e7).round() / 1e7)
        ])
    };
    assert_eq!(source("messages"), json!([3, 4700, 0.0117925]));
    assert_eq!(source("summarization"), json!([2, 3840, 0.0144]));
    assert_eq!(source("usage_entries"), json!([2, 50800, 0.015016]));
    assert_eq!(source("tool_results"), json!([1, 450, 0.00195]));
    // The tool result lists three nested calls and says its list is incomplete.
    assert_eq!(
        (&r["nested_calls"], &r["nested_calls_incomplete"]),
        (&json!(3), &json!(1))
    );
    // A `future_entry` with a `usage`, and a message of an unknown role, are not counted (Pi
    // counts neither); its 9.99 dollars are not in the total.
    assert!(r["total"]["cost"].as_f64().unwrap() < 1.0);
    assert_eq!(r["duplicates"], 0);
    assert_eq!(o.status, 0, "{}", o.stderr);
}

#[test]
fn by_model_keys_assistant_usage_by_response_model_as_pi_does() {
    let r = one_record(&["--json", &f("usage-pi1-sources.jsonl")]);
    let got: Vec<Value> = r["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!([
                m["provider"],
                m["model"],
                m["tokens"],
                (m["cost"].as_f64().unwrap() * 1e7).round() / 1e7
            ])
        })
        .collect();
    // Pi says (getUsageCostBreakdown): anthropic/claude-sonnet-4-5 50010 tokens $0.01503;
    // anthropic/claude-sonnet-4-5-20250929 (the responseModel) 3800 $0.009975; openai/gpt-5
    // 890 $0.0017875; openai/text-embedding-3-small 800 $0.000016; "Tools/summaries" (the
    // tool result and both summaries: null provider and model here) 4290 $0.01635.
    assert_eq!(
        got,
        vec![
            json!(["anthropic", "claude-sonnet-4-5", 50010, 0.01503]),
            json!(["anthropic", "claude-sonnet-4-5-20250929", 3800, 0.009975]),
            json!(["openai", "gpt-5", 890, 0.0017875]),
            json!(["openai", "text-embedding-3-small", 800, 0.000016]),
            json!([null, null, 4290, 0.01635]),
        ]
    );
    // --by model groups the same way.
    let o = cmd("pi-usage")
        .args(["--json", "--by", "model", &f("usage-pi1-sources.jsonl")])
        .ok();
    let models: Vec<Value> = o
        .records()
        .iter()
        .map(|r| json!([r["model"], r["total"]["tokens"]]))
        .collect();
    assert!(models.contains(&json!(["claude-sonnet-4-5-20250929", 3800])));
    assert!(models.contains(&json!([null, 4290])));
}

#[test]
fn reasoning_cache_write_1h_and_provider_cost_are_breakdowns_never_added_on_top() {
    let r = one_record(&["--json", &f("usage-pi1-sources.jsonl")]);
    let t = &r["total"];
    // reasoning 120 + 64 is inside output (680), cacheWrite1h 200 inside cacheWrite (500).
    assert_eq!(
        (&t["reasoning"], &t["reasoning_calls"]),
        (&json!(184), &json!(2))
    );
    assert_eq!(
        (&t["cache_write_1h"], &t["cache_write_1h_calls"]),
        (&json!(200), &json!(1))
    );
    assert_eq!(t["output"], 680);
    assert_eq!(t["cache_write"], 500);
    assert_eq!(t["other"], json!({}));
    // The provider-billed part of the cost: the first assistant message's.
    assert_eq!(
        (&t["cost_from_provider"], &t["cost_from_provider_calls"]),
        (&json!(0.009975), &json!(1))
    );
    // None of the summaries wrote a breakdown: unknown, not zero.
    let s = &r["summarization"];
    assert_eq!(s["reasoning"], Value::Null);
    assert_eq!(s["reasoning_calls"], 0);
    assert_eq!(s["cache_write_1h"], Value::Null);
    assert_eq!(s["cost_from_provider"], Value::Null);
}

#[test]
fn usage_entries_are_broken_down_by_kind_an_unknown_kind_included() {
    let r = one_record(&["--json", &f("usage-pi1-sources.jsonl")]);
    let kinds: Vec<Value> = r["usage_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| json!([k["kind"], k["count"], k["tokens"], k["cost"]]))
        .collect();
    assert_eq!(
        kinds,
        vec![
            json!(["cache_warm", 1, 50000, 0.015]),
            json!(["embedding_lookup", 1, 800, 0.000016]),
        ]
    );
}

#[test]
fn a_forks_copies_of_usage_entries_and_tool_results_count_once() {
    let (orig, fork) = (
        f("usage-pi1-fork-original.jsonl"),
        f("usage-pi1-fork.jsonl"),
    );
    let r = cmd("pi-usage").args([&orig, &fork]).ok().records();
    // Pi says, original: tokens [300, 30, 1000, 0] total 1330, cost 0.00165.
    assert_eq!(tokens(&r[0]["total"]), json!([300, 30, 1000, 0, 1330]));
    assert_eq!(r[0]["total"]["cost"], 0.00165);
    // The fork replays the assistant message, the tool result and the usage entry, then warms
    // the cache once more: only that new entry counts.
    assert_eq!(r[1]["lineage"], "resolved");
    assert_eq!(r[1]["duplicates"], 3);
    assert_eq!(r[1]["total"]["count"], 1);
    assert_eq!(r[1]["usage_entries"]["count"], 1);
    assert_eq!(r[1]["tool_results"]["count"], 0);
    assert_eq!(tokens(&r[1]["total"]), json!([0, 0, 1000, 0, 1000]));
    // Alone, the fork counts everything in it, as Pi's stats of the fork do: tokens
    // [300, 30, 2000, 0] total 2330, cost 0.00195.
    let alone = one_record(&["--json", &fork]);
    assert_eq!(alone["lineage"], "unresolved");
    assert_eq!(tokens(&alone["total"]), json!([300, 30, 2000, 0, 2330]));
    assert_eq!(alone["total"]["cost"], 0.00195);
    // --no-dedup counts every line.
    let all = one_record(&["--json", "--total", "--no-dedup", &orig, &fork]);
    assert_eq!(all["total"]["count"], 7);
    assert_eq!(all["duplicates"], 0);
}

#[test]
fn odd_usage_entries_count_and_bad_fields_are_reported() {
    let file = f("usage-pi1-odd-usage-entries.jsonl");
    let o = cmd("pi-usage").args(["--json", &file]).run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        vec![
            format!("pi-usage: {file}:5: usage entry usage.input is negative (-1); not counted"),
            format!(
                "pi-usage: {file}:5: usage entry usage.reasoning is a string, not a number; not counted"
            ),
            format!(
                "pi-usage: {file}:5: usage entry usage.cacheWrite1h is not a whole number (2.5); not counted"
            ),
        ]
    );
    let r = &o.records()[0];
    let u = &r["usage_entries"];
    // Four usage entries, one without a `usage` (zero tokens, cost missing: Pi's own stats
    // throw on it).
    assert_eq!(u["count"], 4);
    assert_eq!(u["cost_missing"], 1);
    assert_eq!(tokens(u), json!([11, 0, 40, 0, 51]));
    assert_eq!(u["reasoning"], Value::Null);
    assert_eq!(u["cache_write_1h"], Value::Null);
    // totalFromProvider "yes" is not true.
    assert_eq!(u["cost_from_provider_calls"], 0);
    // An unknown numeric usage field is summed under its own name.
    assert_eq!(u["other"], json!({"audioInput": 12}));
    // No kind and a kind that is not a string are both unknown (null, last).
    let kinds: Vec<Value> = r["usage_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| json!([k["kind"], k["count"]]))
        .collect();
    assert_eq!(kinds, vec![json!(["cache_warm", 2]), json!([null, 2])]);
    // Tool results without a usage (absent, null) are not billed, nor are their nested calls.
    assert_eq!(r["tool_results"]["count"], 0);
    assert_eq!(r["nested_calls"], 0);
}

#[test]
fn the_table_shows_usage_entries_and_tool_results() {
    let t = cmd("pi-usage")
        .args(["--table", &f("usage-pi1-sources.jsonl")])
        .ok()
        .out();
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].contains("Usage entries") && lines[0].contains("Tool results"),
        "{t}"
    );
    // Session, times, models, project, then messages 3, summaries 2, usage entries 2, tool
    // results 1; and the cost last.
    let cells: Vec<&str> = lines[2].split_whitespace().collect();
    let numbers = &cells[cells.len() - 10..];
    assert_eq!(numbers[..4], ["3", "2", "2", "1"], "{t}");
    assert_eq!(cells.last(), Some(&"$0.0432"), "{t}");
}
