//! pi-tools on what Pi 1.x writes (issue 13): a call's `namespace`, a tool result's own
//! `usage` and its `nestedCalls`.

use crate::util::*;
use serde_json::{json, Value};

fn records(args: &[&str]) -> Vec<Value> {
    cmd("pi-tools")
        .args(args)
        .arg(fixture("tools-pi1-usage-nested.jsonl"))
        .ok()
        .records()
}

fn call<'a>(recs: &'a [Value], id: &str) -> &'a Value {
    recs.iter()
        .find(|r| r["type"] == "tool_call" && r["call_id"] == id)
        .unwrap_or_else(|| panic!("no tool_call {id} in {recs:#?}"))
}

#[test]
fn a_calls_namespace_is_reported_as_recorded() {
    let recs = records(&[]);
    assert_eq!(call(&recs, "call_a")["namespace"], "mcp__docs");
    // Absent, and not a string: null.
    assert_eq!(call(&recs, "call_b")["namespace"], Value::Null);
    assert_eq!(call(&recs, "call_c")["namespace"], Value::Null);
}

#[test]
fn a_results_usage_and_nested_calls_are_reported() {
    let recs = records(&[]);
    // No usage, no nestedCalls: null.
    let a = &call(&recs, "call_a")["result"];
    assert_eq!(
        (&a["usage"], &a["nested_calls"]),
        (&Value::Null, &Value::Null)
    );
    // Usage with its breakdowns as recorded; tokens is Pi's sum of the four; reasoning and
    // cacheWrite1h are parts of output and cacheWrite, not added on top.
    let b = &call(&recs, "call_b")["result"];
    assert_eq!(
        b["usage"],
        json!({"input": 400, "output": 50, "cache_read": 10, "cache_write": 8, "tokens": 468,
               "total_tokens": 468, "reasoning": 20, "cache_write_1h": 8, "cost": 0.001983,
               "cost_from_provider": true})
    );
    assert_eq!(
        b["nested_calls"],
        json!({"count": 3, "errors": 1, "unfinished": 1, "complete": false})
    );
    // Values that are not counts or numbers are null, never guessed; so is the sum they
    // belong to; a nestedCalls that is not an object is null.
    let c = &call(&recs, "call_c")["result"];
    assert_eq!(c["usage"]["input"], Value::Null);
    assert_eq!(c["usage"]["output"], 3);
    assert_eq!(c["usage"]["tokens"], Value::Null);
    assert_eq!(c["usage"]["cost"], Value::Null);
    assert_eq!(c["nested_calls"], Value::Null);
}

#[test]
fn an_orphan_result_keeps_its_usage_and_the_cost_text_is_copied() {
    let o = cmd("pi-tools")
        .arg(fixture("tools-pi1-usage-nested.jsonl"))
        .ok();
    let recs = o.records();
    let orphan = recs.iter().find(|r| r["type"] == "tool_result").unwrap();
    assert_eq!(orphan["status"], "orphan");
    assert_eq!(orphan["usage"]["tokens"], 8);
    assert_eq!(
        orphan["nested_calls"],
        json!({"count": 0, "errors": 0, "unfinished": 0, "complete": true})
    );
    // The recorded number's text, unchanged.
    assert!(o.out().contains("\"cost\":0.00002,"), "{}", o.out());
}

#[test]
fn usage_and_nested_calls_stay_with_no_content() {
    let recs = records(&["--no-content"]);
    let b = &call(&recs, "call_b");
    assert_eq!(b["arguments"], Value::Null);
    assert_eq!(b["result"]["text"], Value::Null);
    assert_eq!(b["result"]["usage"]["tokens"], 468);
    assert_eq!(b["result"]["nested_calls"]["count"], 3);
    assert_eq!(b["namespace"], Value::Null);
    assert_eq!(call(&recs, "call_a")["namespace"], "mcp__docs");
}
