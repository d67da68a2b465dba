//! pi-compactions on what Pi 1.x adds to compaction and branch_summary entries (issue 13):
//! the summarization's `usage`, retain-none compactions, `systemMessage` (its size only) and a
//! branch summary left from no entry (`fromId` "root") or with a null `fromId`. The fixture is
//! hand-written after Pi 1.6.0's `SessionManager.appendCompaction` and `branchWithSummary`.

use crate::util::*;
use serde_json::{json, Value};

fn run() -> (Output, Vec<Value>) {
    let o = cmd("pi-compactions")
        .args([
            "--branch-summaries",
            "--summary",
            &fixture_str("compaction-pi1-fields.jsonl"),
        ])
        .ok();
    let r = o.records();
    (o, r)
}

#[test]
fn a_retain_none_compaction_keeps_its_own_id_and_says_so() {
    let (_, r) = run();
    assert_eq!(r[0]["entry"], "p3");
    assert_eq!(
        r[0]["first_kept"],
        json!({"entry":"p3","index":null,"line":null,"found":false})
    );
    assert_eq!(r[0]["retain_none"], true);
    assert_eq!(
        r[1]["first_kept"],
        json!({"entry":"p4","index":null,"line":6,"found":true})
    );
    assert_eq!(r[1]["retain_none"], false);
}

#[test]
fn compaction_usage_is_reported_as_recorded() {
    let (_, r) = run();
    assert_eq!(
        r[0]["usage"],
        json!({"input":900,"output":40,"cache_read":100,"cache_write":0,"total_tokens":1040,"cost":0.0125})
    );
    // A member that is not a count is null; the others stay.
    assert_eq!(
        r[1]["usage"],
        json!({"input":null,"output":7,"cache_read":null,"cache_write":null,"total_tokens":null,"cost":null})
    );
    assert_eq!(r[2]["usage"]["total_tokens"], 58);
    assert_eq!(r[3]["usage"], Value::Null, "no usage recorded");
}

#[test]
fn the_system_message_is_measured_never_printed() {
    let (o, r) = run();
    // The value's bytes as written on line 5.
    let line5 = String::from_utf8(read_fixture("compaction-pi1-fields.jsonl")).unwrap();
    let line5 = line5.lines().nth(4).unwrap();
    let start = line5.find("\"systemMessage\":").unwrap() + "\"systemMessage\":".len();
    let size = line5.len() - 1 - start; // the value runs to the entry's closing brace
    assert_eq!(r[0]["system_message_bytes"], size as u64);
    assert_eq!(r[1]["system_message_bytes"], Value::Null);
    assert!(
        !o.out().contains("SYSTEM-PROMPT-TEXT"),
        "the prompt text never reaches a record, even with --summary"
    );
}

#[test]
fn branch_summaries_from_root_or_a_null_from_id() {
    let (_, r) = run();
    let b: Vec<&Value> = r
        .iter()
        .filter(|x| x["type"] == "branch_summary_report")
        .collect();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0]["target"], Value::Null, "a new root");
    assert_eq!(b[0]["from_id"], "root");
    assert_eq!(
        (&b[0]["from_found"], &b[0]["from_root"]),
        (&json!(false), &json!(true))
    );
    assert_eq!(b[1]["target"], "p8");
    assert_eq!(b[1]["from_id"], Value::Null);
    assert_eq!(
        (&b[1]["from_found"], &b[1]["from_root"]),
        (&json!(false), &json!(false))
    );
}
