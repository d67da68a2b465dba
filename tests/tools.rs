//! pi-tools: one test per fixture and rule, the filters, and the corpus checks.

use crate::util::*;
use serde_json::{json, Value};

fn tools(args: &[&str], f: &str) -> Vec<Value> {
    cmd("pi-tools").args(args).arg(fixture(f)).ok().records()
}

/// The records of a fixture, by call id (tool_call records only).
fn by_call_id<'a>(recs: &'a [Value], id: &str) -> &'a Value {
    recs.iter()
        .find(|r| r["type"] == "tool_call" && r["call_id"] == id)
        .unwrap_or_else(|| panic!("no tool_call {id} in {recs:#?}"))
}

fn status_evidence(r: &Value) -> (&str, &str) {
    (
        r["status"].as_str().unwrap(),
        r["evidence"].as_str().unwrap(),
    )
}

/// (type, call id or line, status) of every record, in output order.
fn summary(recs: &[Value]) -> Vec<(String, String, String)> {
    recs.iter()
        .map(|r| {
            let key = match &r["call_id"] {
                Value::String(s) => s.clone(),
                _ => format!("line {}", r["line"]),
            };
            (
                r["type"].as_str().unwrap().to_string(),
                key,
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn s3(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

#[test]
fn session_joins_calls_to_results_in_call_order() {
    let recs = tools(&[], "tools-session.jsonl");
    assert_eq!(
        summary(&recs),
        vec![
            s3("tool_call", "call_read", "ok"),
            s3("tool_call", "call_ls", "error"),
            s3("tool_call", "call_edit", "error"),
            s3("tool_call", "line 8", "ok"),
            s3("tool_result", "call_gone", "orphan"),
            s3("tool_call", "call_find", "no_result"),
        ]
    );
    let read = by_call_id(&recs, "call_read");
    assert_eq!(read["session"], "s-tools");
    assert_eq!(read["line"], 3);
    assert_eq!(read["entry"], "a1");
    assert_eq!(read["name"], "read");
    assert_eq!(read["by_user"], false);
    assert_eq!(read["arguments"], json!({"path": "src/main.rs"}));
    assert_eq!(status_evidence(read), ("ok", "result"));
    let r = &read["result"];
    assert_eq!(
        (r["line"].as_u64(), r["entry"].as_str()),
        (Some(4), Some("r1"))
    );
    let text = "fn main() {\n    println!(\"héllo\");\n}";
    assert_eq!(r["text"], text);
    assert_eq!(r["bytes"], text.len());
    assert_eq!(r["is_error"], false);
    // One of two calls of its message, without a recorded durationMs: no duration (the
    // entries' 250 ms are the time of both calls).
    assert_eq!(read["duration_ms"], Value::Null);
    assert_eq!(read["duration_from"], Value::Null);
    let edit = by_call_id(&recs, "call_edit");
    assert_eq!(edit["duration_ms"], 100);
    assert_eq!(edit["duration_from"], "timestamps");
    assert_eq!(read["model"], "claude-x");
    assert_eq!(read["provider"], "anthropic");
    assert_eq!(read["timestamp"], "2026-05-01T10:00:02.000Z");
    // Two text blocks are joined with a newline.
    assert_eq!(
        by_call_id(&recs, "call_ls")["result"]["text"],
        "ls: cannot access 'missing'\nexit 2"
    );
}

#[test]
fn arguments_and_details_are_copied_byte_for_byte() {
    let o = cmd("pi-tools")
        .arg(fixture("tools-session.jsonl"))
        .ok()
        .out();
    assert!(o.contains(
        r#""arguments":{"command":"ls -l missing",  "timeout" : 30},"arguments_bytes":44,"#
    ));
    assert!(o.contains(r#""details":{"exitCode":2, "fullOutputPath":null}"#));
    // The input wrote \u00e9 in the result text: the text is decoded.
    assert!(o.contains("héllo\\\");"));
}

#[test]
fn missing_result_is_no_result_and_later_calls_keep_their_order() {
    for recs in [
        tools(&[], "tools-missing-result.jsonl"),
        cmd("pi-tools")
            .stdin(read_fixture("tools-missing-result.jsonl"))
            .ok()
            .records(),
    ] {
        assert_eq!(
            summary(&recs),
            vec![
                s3("tool_call", "c1", "no_result"),
                s3("tool_call", "c2", "ok"),
                s3("tool_call", "c3", "ok"),
            ]
        );
        let c1 = &recs[0];
        assert_eq!(status_evidence(c1), ("no_result", "no_result"));
        assert_eq!(c1["result"], Value::Null);
        assert_eq!(c1["duration_ms"], Value::Null);
        // c2 waited behind c1: its arguments and result were kept and written in full.
        assert_eq!(recs[1]["arguments"], json!({"pattern": "x"}));
        assert_eq!(recs[1]["result"]["text"], "a.txt:1:x");
        assert_eq!(recs[1]["result"]["line"], 3);
        // c2 is one of two calls of its message: no duration; c3 is the only one of its own.
        assert_eq!(recs[1]["duration_ms"], Value::Null);
        assert_eq!(recs[2]["duration_ms"], 1000);
        assert_eq!(recs[2]["duration_from"], "timestamps");
    }
}

#[test]
fn empty_result_is_ok_with_empty_text() {
    let recs = tools(&[], "tools-empty-result.jsonl");
    for id in ["e1", "e2"] {
        let r = by_call_id(&recs, id);
        assert_eq!(status_evidence(r), ("ok", "result"), "{id}");
        assert_eq!(r["result"]["text"], "", "{id}");
        assert_eq!(r["result"]["bytes"], 0, "{id}");
        assert_eq!(r["result"]["images"], 0, "{id}");
    }
    // No content at all: still a result, text unknown; no arguments: null, size null.
    let e3 = by_call_id(&recs, "e3");
    assert_eq!(status_evidence(e3), ("ok", "result"));
    assert_eq!(e3["result"]["text"], Value::Null);
    assert_eq!(e3["result"]["bytes"], Value::Null);
    assert_eq!(e3["result"]["is_error"], Value::Null);
    assert_eq!(e3["arguments"], Value::Null);
    assert_eq!(e3["arguments_bytes"], Value::Null);
}

#[test]
fn is_error_makes_an_error_even_with_exit_code_zero() {
    let recs = tools(&[], "tools-is-error.jsonl");
    assert_eq!(
        status_evidence(by_call_id(&recs, "i1")),
        ("error", "is_error")
    );
    let i2 = by_call_id(&recs, "i2");
    assert_eq!(status_evidence(i2), ("error", "is_error"));
    assert_eq!(i2["result"]["exit_code"], 0);
}

#[test]
fn exit_code_in_details_decides() {
    let recs = tools(&[], "tools-exit-code.jsonl");
    let x1 = by_call_id(&recs, "x1");
    assert_eq!(status_evidence(x1), ("error", "exit_code"));
    assert_eq!(x1["result"]["exit_code"], 1);
    assert_eq!(x1["result"]["is_error"], false);
    let x2 = by_call_id(&recs, "x2");
    assert_eq!(status_evidence(x2), ("error", "exit_code"));
    assert_eq!(x2["result"]["exit_code"], 127);
    let x3 = by_call_id(&recs, "x3");
    assert_eq!(status_evidence(x3), ("ok", "exit_code"));
    assert_eq!(x3["result"]["exit_code"], 0);
    let x4 = by_call_id(&recs, "x4");
    assert_eq!(status_evidence(x4), ("ok", "result"));
    assert_eq!(x4["result"]["exit_code"], Value::Null);
    let x5 = by_call_id(&recs, "x5");
    assert_eq!(status_evidence(x5), ("error", "exit_code"));
    assert_eq!(x5["result"]["exit_code"], -9);
}

#[test]
fn aborted_turn_without_result_is_an_error() {
    let recs = tools(&[], "tools-aborted.jsonl");
    let k1 = by_call_id(&recs, "k1");
    assert_eq!(status_evidence(k1), ("error", "aborted_turn"));
    assert_eq!(k1["stop_reason"], "aborted");
    assert_eq!(k1["result"], Value::Null);
    let k2 = by_call_id(&recs, "k2");
    assert_eq!(status_evidence(k2), ("error", "aborted_turn"));
    assert_eq!(k2["stop_reason"], "error");
    // A result that exists decides, whatever the turn's stop reason.
    let k3 = by_call_id(&recs, "k3");
    assert_eq!(status_evidence(k3), ("ok", "result"));
    assert_eq!(k3["stop_reason"], "aborted");
}

#[test]
fn orphan_results_are_reported_where_they_stand() {
    let recs = tools(&[], "tools-orphan.jsonl");
    assert_eq!(
        summary(&recs),
        vec![
            s3("tool_result", "o1", "orphan"),
            s3("tool_call", "o2", "ok"),
            s3("tool_result", "o3", "orphan"),
            s3("tool_call", "o3", "no_result"),
        ]
    );
    let o1 = &recs[0];
    assert_eq!(o1["line"], 2);
    assert_eq!(o1["entry"], "r0");
    assert_eq!(o1["name"], "read");
    assert_eq!(o1["text"], "from a lost call");
    assert_eq!(o1["details"], json!({"lines": 1}));
    assert_eq!(o1["call_line"], Value::Null);
    // A result written before its call does not join it.
    assert_eq!(recs[2]["is_error"], true);
}

#[test]
fn duplicate_result_keeps_the_first_and_reports_the_second() {
    let recs = tools(&[], "tools-duplicate.jsonl");
    assert_eq!(
        summary(&recs),
        vec![
            s3("tool_call", "d1", "ok"),
            s3("tool_result", "d1", "duplicate")
        ]
    );
    assert_eq!(recs[0]["result"]["text"], "first");
    assert_eq!(recs[0]["result"]["line"], 3);
    let dup = &recs[1];
    assert_eq!(dup["line"], 4);
    assert_eq!(dup["text"], "second");
    assert_eq!(dup["is_error"], true);
    assert_eq!(dup["call_line"], 2);
    assert_eq!(dup["call_entry"], "a1");
    assert_eq!(dup["first_result_line"], 3);
}

#[test]
fn bash_executions_are_user_tool_runs() {
    let recs = tools(&[], "tools-bash-execution.jsonl");
    let user: Vec<&Value> = recs.iter().filter(|r| r["by_user"] == true).collect();
    assert_eq!(user.len(), 5);
    for r in &user {
        assert_eq!(r["type"], "tool_call");
        assert_eq!(r["name"], "bash");
        assert_eq!(r["call_id"], Value::Null);
        assert_eq!(r["duration_ms"], Value::Null);
    }
    let (ok, failed, cancelled, excluded, killed) = (user[0], user[1], user[2], user[3], user[4]);
    assert_eq!(status_evidence(ok), ("ok", "exit_code"));
    assert_eq!(ok["arguments"], json!({"command": "ls"}));
    assert_eq!(ok["result"]["text"], "a\nb\n");
    assert_eq!(ok["result"]["line"], 2);
    assert_eq!(ok["entry"], "b1");
    assert_eq!(status_evidence(failed), ("error", "exit_code"));
    assert_eq!(failed["result"]["exit_code"], 2);
    assert_eq!(status_evidence(cancelled), ("ok", "cancelled"));
    assert_eq!(cancelled["result"]["exit_code"], Value::Null);
    assert_eq!(cancelled["bash"]["cancelled"], true);
    // Pi never writes both, but a non-zero exit code is an error exit even when cancelled.
    assert_eq!(status_evidence(killed), ("error", "exit_code"));
    assert_eq!(killed["bash"]["cancelled"], true);
    assert_eq!(
        excluded["bash"],
        json!({"cancelled": false, "truncated": true, "full_output_path": "/tmp/pi-bash-1.log", "exclude_from_context": true})
    );
    // The assistant's own bash call is not the user's.
    let t1 = by_call_id(&recs, "t1");
    assert_eq!(t1["by_user"], false);
    assert_eq!(t1["bash"], Value::Null);
    // The size of the arguments pi-tools writes for a user command.
    let o = cmd("pi-tools")
        .arg(fixture("tools-bash-execution.jsonl"))
        .ok()
        .out();
    let first = o.lines().next().unwrap();
    assert!(first.contains(r#""arguments":{"command":"ls"},"arguments_bytes":16,"#));
}

#[test]
fn images_are_counted_never_copied() {
    let o = cmd("pi-tools").arg(fixture("tools-image.jsonl")).ok();
    assert!(!o.out().contains("iVBORw0KGgo"), "image data leaked");
    assert!(!o.out().contains("/9j/4AAQ"), "image data leaked");
    let recs = o.records();
    let r = &by_call_id(&recs, "m1")["result"];
    assert_eq!(r["images"], 3);
    assert_eq!(r["image_types"], json!(["image/png", "image/jpeg", null]));
    assert_eq!(r["text"], "Read image file [image/png]");
}

#[test]
fn abandoned_branch_calls_are_reported_from_the_file_not_after_pi_branch() {
    let whole = tools(&[], "tools-abandoned-branch.jsonl");
    let ids: Vec<&str> = whole
        .iter()
        .map(|r| r["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t_old", "t_new"]);
    let branch = cmd("pi-branch")
        .arg(fixture("tools-abandoned-branch.jsonl"))
        .ok();
    let kept = cmd("pi-tools").stdin(branch.stdout).ok().records();
    let ids: Vec<&str> = kept
        .iter()
        .map(|r| r["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t_new"]);
    assert_eq!(kept[0]["status"], "ok");
}

#[test]
fn sessions_in_one_stream_are_joined_apart() {
    let recs = cmd("pi-tools")
        .stdin(read_fixture("tools-two-sessions.jsonl"))
        .ok()
        .records();
    let got: Vec<(&str, &str, &str)> = recs
        .iter()
        .map(|r| {
            (
                r["session"].as_str().unwrap(),
                r["type"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("s-one", "tool_call", "no_result"),
            ("s-two", "tool_result", "orphan"),
            ("s-two", "tool_call", "ok"),
        ]
    );
    assert_eq!(recs[2]["result"]["text"], "two");
}

#[test]
fn reused_call_ids_join_the_latest_waiting_call() {
    let recs = tools(&[], "tools-reused-ids.jsonl");
    let got: Vec<(u64, &str, Option<u64>)> = recs
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["status"].as_str().unwrap(),
                r["result"]["line"]
                    .as_u64()
                    .or(r["first_result_line"].as_u64()),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (2, "error", None),
            (3, "ok", Some(4)),
            (5, "ok", Some(6)),
            (7, "duplicate", Some(6)),
        ]
    );
    assert_eq!(recs[3]["call_line"], 5);
}

#[test]
fn v1_sessions_have_no_entry_ids() {
    let recs = tools(&[], "tools-v1.jsonl");
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r["entry"], Value::Null);
    assert_eq!(r["result"]["entry"], Value::Null);
    assert_eq!(r["result"]["line"], 4);
    assert_eq!(status_evidence(r), ("ok", "result"));
    assert_eq!(r["duration_ms"], 40);
}

#[test]
fn bad_ids_are_reported_and_still_written() {
    let o = cmd("pi-tools").arg(fixture("tools-bad-fields.jsonl")).run();
    assert_eq!(o.status, 2);
    let f = fixture_str("tools-bad-fields.jsonl");
    assert_eq!(
        o.stderr_lines(),
        [
            format!("pi-tools: {f}:2: a toolCall block with no id: it cannot be joined to a result"),
            format!("pi-tools: {f}:3: a toolResult with a toolCallId that is not a string: reported as an orphan"),
        ]
    );
    let recs = o.records();
    assert_eq!(
        summary(&recs),
        vec![
            s3("tool_call", "line 2", "no_result"),
            s3("tool_call", "ok1", "ok"),
            s3("tool_result", "line 3", "orphan"),
        ]
    );
    assert_eq!(recs[0]["name"], "read");
}

#[test]
fn odd_values_are_read_by_their_json_type() {
    let recs = tools(&[], "tools-odd-values.jsonl");
    assert_eq!(recs.len(), 6);
    // Arguments that are not an object are still copied as they are; null ones are absent.
    let v1 = by_call_id(&recs, "v1");
    assert_eq!(v1["arguments"], "{\"command\":\"ls\"}");
    // A string content is the text; a string isError is not a boolean; string details as is.
    assert_eq!(v1["result"]["text"], "a plain string result");
    assert_eq!(v1["result"]["is_error"], Value::Null);
    assert_eq!(v1["result"]["details"], "not an object");
    assert_eq!(status_evidence(v1), ("ok", "result"));
    let v2 = by_call_id(&recs, "v2");
    assert_eq!(
        (&v2["arguments"], &v2["arguments_bytes"]),
        (&Value::Null, &Value::Null)
    );
    // A content object is neither text nor blocks; an exit code in a string is not one.
    assert_eq!(v2["result"]["text"], Value::Null);
    assert_eq!(v2["result"]["exit_code"], Value::Null);
    let v3 = by_call_id(&recs, "v3");
    assert_eq!(v3["name"], Value::Null);
    assert_eq!(v3["arguments"], json!([1, 2]));
    // Blocks without string text count for nothing; a non-integer exitCode gives way to exit_code.
    assert_eq!(v3["result"]["text"], "");
    assert_eq!(v3["result"]["image_types"], json!([null]));
    assert_eq!(v3["result"]["exit_code"], 3);
    assert_eq!(status_evidence(v3), ("error", "exit_code"));
    let v4 = by_call_id(&recs, "v4");
    assert_eq!(v4["result"]["exit_code"], Value::Null);
    // Escapes in keys and in type values are decoded, as JSON.parse does.
    let v5 = by_call_id(&recs, "v5");
    assert_eq!(v5["result"]["text"], "escaped keys");
    assert_eq!(v5["result"]["exit_code"], 4);
    let bash = &recs[5];
    assert_eq!(bash["by_user"], true);
    assert_eq!(bash["arguments"], Value::Null);
    assert_eq!(bash["result"]["text"], Value::Null);
    assert_eq!(status_evidence(bash), ("ok", "result"));
    assert_eq!(bash["bash"]["cancelled"], Value::Null);
}

#[test]
fn durations_follow_the_entry_timestamps() {
    let recs = tools(&[], "tools-durations.jsonl");
    let d: Vec<Option<u64>> = recs.iter().map(|r| r["duration_ms"].as_u64()).collect();
    // -05:00 offset; result before the call; no call timestamp; unreadable one; +02:00 offset.
    assert_eq!(d, [Some(1500), None, None, None, Some(250)]);
    // Each call is the only one of its message: a duration is the entries' time, and none
    // has a source without a duration.
    let from: Vec<&Value> = recs.iter().map(|r| &r["duration_from"]).collect();
    let t = json!("timestamps");
    assert_eq!(from, [&t, &Value::Null, &Value::Null, &Value::Null, &t]);
    assert_eq!(recs[2]["timestamp"], Value::Null);
    assert_eq!(recs[3]["timestamp"], "yesterday");
}

/// A result's recorded durationMs (Pi 1.x) is the duration; without a readable one, the
/// entries' time only for the one call of a message: Pi writes the results of several calls
/// after all ran (parallel) or each as it ends (sequential), so their time is not one call's.
#[test]
fn durations_are_recorded_or_the_entries_time_of_a_lone_call() {
    let f = "tools-durations-recorded.jsonl";
    // From a FILE, t9's result (line 15) comes while t8 waits: it is read again from the file.
    for recs in [
        tools(&[], f),
        cmd("pi-tools").stdin(read_fixture(f)).ok().records(),
    ] {
        let got: Vec<(&str, Option<u64>, Option<&str>)> = recs
            .iter()
            .map(|r| {
                let id = r["call_id"].as_str().unwrap();
                (id, r["duration_ms"].as_u64(), r["duration_from"].as_str())
            })
            .collect();
        let (rec, ts) = (Some("recorded"), Some("timestamps"));
        assert_eq!(
            got,
            [
                // One call, no durationMs.
                ("t1", Some(400), ts),
                // Two calls, no durationMs: 2 s apart from their message, neither's own time.
                ("t2", None, None),
                ("t3", None, None),
                // Two calls with durationMs: the recorded times, not the 3 s of the entries.
                ("t4", Some(2990), rec),
                ("t5", Some(3), rec),
                // One call, durationMs "12" then 1.5: unreadable, the entries' time.
                ("t6", Some(750), ts),
                ("t7", Some(100), ts),
                // Two calls: durationMs -5 is unreadable (no duration); 20 is recorded.
                ("t8", None, None),
                ("t9", Some(20), rec),
                // One call: durationMs 480 rather than the entries' 500.
                ("t10", Some(480), rec),
            ]
        );
    }
    // The table's took column and the summary's total follow the records.
    let o = cmd("pi-tools")
        .args(["--table", "--color", "never"])
        .arg(fixture(f))
        .env("COLUMNS", "160")
        .ok()
        .out();
    let took = |call: &str| {
        let line = o.lines().find(|l| l.contains(call)).unwrap();
        line.split_whitespace().nth(4).unwrap().to_string()
    };
    assert_eq!(took("a.txt"), "400ms");
    assert_eq!(took("c.txt"), "3ms");
    assert_eq!(took("h.txt"), "480ms");
    // Three reads answered without a duration: the total is a least.
    assert!(o
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["read", "8", "0", "0", "≥1.7s"]));
}

#[test]
fn name_filter_is_repeatable_and_applies_to_results_too() {
    let recs = tools(&["--name", "read", "--name", "edit"], "tools-session.jsonl");
    let names: Vec<&str> = recs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "edit"]);
    let recs = tools(&["--name", "write"], "tools-session.jsonl");
    assert_eq!(
        summary(&recs),
        vec![s3("tool_result", "call_gone", "orphan")]
    );
    // The user's commands are named bash too.
    let recs = tools(&["--name", "bash"], "tools-session.jsonl");
    let by_user: Vec<bool> = recs
        .iter()
        .map(|r| r["by_user"].as_bool().unwrap())
        .collect();
    assert_eq!(by_user, [false, true]);
}

#[test]
fn status_filters() {
    let ids = |args: &[&str]| -> Vec<String> {
        summary(&tools(args, "tools-session.jsonl"))
            .into_iter()
            .map(|(_, id, _)| id)
            .collect()
    };
    assert_eq!(ids(&["--status", "error"]), ["call_ls", "call_edit"]);
    assert_eq!(ids(&["--errors"]), ["call_ls", "call_edit"]);
    assert_eq!(ids(&["--status", "no_result"]), ["call_find"]);
    assert_eq!(ids(&["--status", "orphan"]), ["call_gone"]);
    assert_eq!(
        ids(&["--status", "ok", "--status", "no_result"]),
        ["call_read", "line 8", "call_find"]
    );
    assert_eq!(
        ids(&["--errors", "--status", "orphan"]),
        ["call_ls", "call_edit", "call_gone"]
    );
    // Different filters must all match.
    assert_eq!(ids(&["--errors", "--name", "bash"]), ["call_ls"]);
    assert_eq!(ids(&["--status", "duplicate"]), Vec::<String>::new());
    let dup = tools(&["--status", "duplicate"], "tools-duplicate.jsonl");
    assert_eq!(summary(&dup), vec![s3("tool_result", "d1", "duplicate")]);
    // A bad status value is a usage error.
    let o = cmd("pi-tools")
        .args(["--status", "failed"])
        .arg(fixture("tools-session.jsonl"))
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stdout.is_empty());
}

#[test]
fn no_content_keeps_sizes_and_drops_text() {
    let o = cmd("pi-tools")
        .arg("--no-content")
        .arg(fixture("tools-session.jsonl"))
        .ok();
    let out = o.out();
    for secret in [
        "src/main.rs",
        "héllo",
        "h\\u00e9llo",
        "missing",
        "git status",
        "On branch",
        "Wrote 3",
        "*.rs",
        "fullOutputPath",
    ] {
        assert!(!out.contains(secret), "{secret} leaked: {out}");
    }
    let full = tools(&[], "tools-session.jsonl");
    let bare = o.records();
    assert_eq!(full.len(), bare.len());
    for (f, b) in full.iter().zip(&bare) {
        assert_eq!(b["arguments"], Value::Null);
        assert_eq!(f["arguments_bytes"], b["arguments_bytes"]);
        assert_eq!(f["status"], b["status"]);
        assert_eq!(f["evidence"], b["evidence"]);
        let (fr, br) = if f["type"] == "tool_call" {
            (&f["result"], &b["result"])
        } else {
            (f, b)
        };
        if fr.is_null() {
            continue;
        }
        assert_eq!(br["text"], Value::Null);
        assert_eq!(br["details"], Value::Null);
        assert_eq!(fr["bytes"], br["bytes"]);
        assert_eq!(fr["exit_code"], br["exit_code"]);
        assert_eq!(fr["images"], br["images"]);
    }
}

#[test]
fn max_text_cuts_by_characters_and_says_so() {
    let recs = tools(&["--max-text", "28"], "tools-session.jsonl");
    let read = by_call_id(&recs, "call_read");
    assert_eq!(read["result"]["text"], "fn main() {\n    println!(\"hé");
    assert_eq!(read["result"]["text_truncated"], true);
    // The size is the whole text's.
    assert_eq!(read["result"]["bytes"], 37);
    let orphan = recs.iter().find(|r| r["type"] == "tool_result").unwrap();
    assert_eq!(orphan["text"], "Wrote 3 bytes");
    assert_eq!(orphan["text_truncated"], false);
    let recs = tools(&["--max-text", "0"], "tools-session.jsonl");
    assert_eq!(by_call_id(&recs, "call_read")["result"]["text"], "");
    // Arguments are never cut.
    assert_eq!(
        by_call_id(&recs, "call_edit")["arguments"]["oldText"],
        "héllo"
    );
}

/// The records with their `file` left out (a FILE's path, stdin's `<stdin>`).
fn without_file(records: Vec<Value>) -> Vec<Value> {
    records
        .into_iter()
        .map(|mut r| {
            r["file"] = Value::Null;
            r
        })
        .collect()
}

#[test]
fn stdin_gives_the_same_records_as_a_file() {
    for f in [
        "tools-session.jsonl",
        "tools-missing-result.jsonl",
        "tools-orphan.jsonl",
        "tools-duplicate.jsonl",
        "tools-bash-execution.jsonl",
        "tools-reused-ids.jsonl",
        "tools-image.jsonl",
        "tools-aborted.jsonl",
    ] {
        for args in [
            &[][..],
            &["--no-content"][..],
            &["--max-text", "3"][..],
            &["--status", "ok"][..],
            &["--name", "grep", "--name", "bash"][..],
        ] {
            let a = cmd("pi-tools").args(args).arg(fixture(f)).ok().records();
            let b = cmd("pi-tools")
                .args(args)
                .stdin(read_fixture(f))
                .ok()
                .records();
            assert_eq!(without_file(a), without_file(b), "{f} {args:?}");
        }
    }
}

/// Blanks around a record (JSON allows them, and Pi's `JSON.parse` of the line reads the
/// record) change no record: a result or a `bashExecution` whose record waits behind others
/// is read again from the file as the record, not as its line with the blanks (which was
/// taken for a line changed since, its content left out).
#[test]
fn blanks_around_records_read_again_from_the_file_change_nothing() {
    let dir = TempDir::new("tools-blanks");
    for f in [
        "tools-session.jsonl",
        "tools-missing-result.jsonl",
        "tools-duplicate.jsonl",
        "tools-bash-execution.jsonl",
        "tools-reused-ids.jsonl",
        "tools-aborted.jsonl",
    ] {
        let plain = read_fixture(f);
        let text = String::from_utf8(plain.clone()).unwrap();
        let spaced: String = text.lines().map(|l| format!(" \t{l} \t\n")).collect();
        let file = dir.write(f, spaced.as_bytes());
        let want = without_file(cmd("pi-tools").stdin(plain).ok().records());
        assert!(!want.is_empty(), "{f}");
        assert_eq!(
            without_file(cmd("pi-tools").arg(&file).ok().records()),
            want,
            "{f}"
        );
        let from_stdin = cmd("pi-tools").stdin(spaced.into_bytes()).ok().records();
        assert_eq!(without_file(from_stdin), want, "{f}");
    }
}

#[test]
fn several_files_keep_argument_order() {
    let o = cmd("pi-tools")
        .args(["--threads", "3"])
        .arg(fixture("tools-duplicate.jsonl"))
        .arg(fixture("tools-v1.jsonl"))
        .arg(fixture("tools-image.jsonl"))
        .ok();
    let sessions: Vec<String> = o
        .records()
        .iter()
        .map(|r| r["session"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sessions, ["s-dup", "s-dup", "s-v1-tools", "s-image"]);
}

#[test]
fn closed_stdout_ends_quietly() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let one = read_fixture("tools-session.jsonl");
    let mut child = Command::new(bin_dir().join("pi-tools"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        for _ in 0..5000 {
            if stdin.write_all(&one).is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("{\"type\":\"tool_call\""));
    // stdout is closed here: pi-tools must stop quietly with status 0.
    let o = child.wait_with_output().unwrap();
    let _ = feeder.join();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}

// ---- the corpus ----

/// Per session of a file, what an independent reading with serde_json finds: toolCall blocks of
/// assistant messages, bashExecution messages, and toolResult lines with no call before them.
struct Expected {
    calls: usize,
    bash: usize,
    results: usize,
    orphan_lines: Vec<u64>,
}

fn expected(bytes: &[u8]) -> Expected {
    let mut e = Expected {
        calls: 0,
        bash: 0,
        results: 0,
        orphan_lines: vec![],
    };
    let (mut in_session, mut headed) = (false, false);
    let mut seen: std::collections::HashSet<String> = Default::default();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        // Invalid UTF-8 read as U+FFFD, as Pi reads it.
        let Ok(v) = serde_json::from_str::<Value>(&String::from_utf8_lossy(line)) else {
            continue;
        };
        if v["type"] == "session" {
            in_session = v["id"].is_string();
            headed = true;
            seen.clear();
            continue;
        }
        // Issue 14: Pi entries with no header before them are a fragment.
        in_session |= !headed && is_pi_entry(&v);
        if !in_session || v["type"] != "message" {
            continue;
        }
        let m = &v["message"];
        match m["role"].as_str() {
            Some("assistant") => {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "toolCall" {
                        e.calls += 1;
                        if let Some(id) = b["id"].as_str() {
                            seen.insert(id.to_string());
                        }
                    }
                }
            }
            Some("bashExecution") => e.bash += 1,
            Some("toolResult") => {
                e.results += 1;
                if !m["toolCallId"].as_str().is_some_and(|id| seen.contains(id)) {
                    e.orphan_lines.push(i as u64 + 1);
                }
            }
            _ => {}
        }
    }
    e
}

#[test]
fn corpus_every_call_once_every_result_once() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    for f in &files {
        let o = cmd("pi-tools").arg(f).run();
        assert!(o.status == 0 || o.status == 2, "{f:?}: status {}", o.status);
        let recs = o.records();
        let want = expected(&std::fs::read(f).unwrap());
        let calls = recs
            .iter()
            .filter(|r| r["type"] == "tool_call" && r["by_user"] == false)
            .count();
        let bash = recs
            .iter()
            .filter(|r| r["type"] == "tool_call" && r["by_user"] == true)
            .count();
        assert_eq!(
            calls, want.calls,
            "{f:?}: tool_call records vs toolCall blocks"
        );
        assert_eq!(bash, want.bash, "{f:?}: bashExecution records");
        // Every toolResult appears exactly once: as a call's result or as its own record.
        let joined = recs
            .iter()
            .filter(|r| {
                r["type"] == "tool_call" && r["by_user"] == false && r["result"].is_object()
            })
            .count();
        let alone: Vec<&Value> = recs.iter().filter(|r| r["type"] == "tool_result").collect();
        assert_eq!(joined + alone.len(), want.results, "{f:?}: results");
        let orphans: Vec<u64> = alone
            .iter()
            .filter(|r| r["status"] == "orphan")
            .map(|r| r["line"].as_u64().unwrap())
            .collect();
        assert_eq!(orphans, want.orphan_lines, "{f:?}: orphan results");
        for r in &recs {
            assert!(
                ["ok", "error", "no_result", "orphan", "duplicate"]
                    .contains(&r["status"].as_str().unwrap()),
                "{r}"
            );
            if r["status"] == "no_result" {
                assert!(r["result"].is_null());
            }
            if let Some(d) = r["duration_ms"].as_i64() {
                assert!(d >= 0);
            }
        }
    }
}

#[test]
fn corpus_stdin_equals_file_and_no_content_hides_text() {
    for f in corpus_files() {
        let bytes = std::fs::read(&f).unwrap();
        let a = cmd("pi-tools").arg(&f).run();
        let b = cmd("pi-tools").stdin(bytes).run();
        assert_eq!(a.status, b.status, "{f:?}");
        assert_eq!(
            without_file(a.records()),
            without_file(b.records()),
            "{f:?}"
        );
        let bare = cmd("pi-tools").arg("--no-content").arg(&f).run();
        for r in bare.records() {
            let res = if r["type"] == "tool_call" {
                &r["result"]
            } else {
                &r
            };
            assert!(r["arguments"].is_null());
            if res.is_object() {
                assert!(
                    res["text"].is_null() && res["details"].is_null(),
                    "{f:?}: {r}"
                );
            }
        }
    }
}

/// Result text already escaped as pi-tools escapes is copied through; any other escape
/// (`\u00e9`, `\/`, uppercase hex, surrogate pairs) is decoded and written again. Either way
/// the output is the same text, escaped one way, and `bytes` is its decoded length.
#[test]
fn result_text_is_escaped_one_way_whatever_the_input_escapes() {
    let o = cmd("pi-tools")
        .arg(fixture("tools-text-escapes.jsonl"))
        .ok();
    let recs = o.records();
    let text = |id: &str| {
        let r = &by_call_id(&recs, id)["result"];
        (r["text"].as_str().unwrap().to_string(), r["bytes"].clone())
    };
    let cases = [
        (
            "c1",
            "a\tb\n\"q\" \\ \u{1b}[0m é",
            r#""a\tb\n\"q\" \\ \u001b[0m é""#,
        ),
        ("c2", "café a/b \u{1b} 😀", r#""café a/b \u001b 😀""#),
        ("c3", "one\u{0}\ntwo", r#""one\u0000\ntwo""#),
        ("c4", "line1\nline2\u{7}", r#""line1\nline2\u0007""#),
    ];
    for (id, decoded, written) in cases {
        assert_eq!(
            text(id),
            (decoded.to_string(), json!(decoded.len())),
            "{id}"
        );
        assert!(
            o.out().contains(&format!("\"text\":{written}")),
            "{id}: {}",
            o.out()
        );
    }
    // --max-text cuts the decoded text, in characters, on either path.
    let cut = tools(&["--max-text", "4"], "tools-text-escapes.jsonl");
    for (id, want) in [("c1", "a\tb\n"), ("c2", "café"), ("c4", "line")] {
        let r = &by_call_id(&cut, id)["result"];
        assert_eq!(
            (r["text"].as_str(), &r["text_truncated"]),
            (Some(want), &json!(true)),
            "{id}"
        );
    }
}

/// A result text with invalid UTF-8 is read as U+FFFD (and the line reported), never copied
/// through as it is: from a file and from stdin, with the text as a string and as blocks.
#[test]
fn result_text_with_invalid_utf8_is_decoded_not_copied() {
    let mut session = br#"{"type":"session","version":3,"id":"s-bad","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-05-02T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"bash","arguments":{}}]}}
"#
    .to_vec();
    for (id, text) in [("c1", r#"[{"type":"text","text":"ok "#), ("c2", r#""ok "#)] {
        session.extend_from_slice(format!(r#"{{"type":"message","id":"r{id}","parentId":"a1","timestamp":"2026-05-02T10:00:02.000Z","message":{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":{text}"#).as_bytes());
        session.extend_from_slice(b"\xff\xfe then \\n more");
        session.extend_from_slice(if id == "c1" { b"\"}]" } else { b"\"" });
        session.extend_from_slice(b",\"isError\":false}}\n");
    }
    let dir = TempDir::new("tools-bad-utf8");
    let file = dir.write("s.jsonl", &session);
    for o in [
        cmd("pi-tools").arg(&file).run(),
        cmd("pi-tools").stdin(session.clone()).run(),
    ] {
        assert_eq!(o.status, 2, "{}", o.stderr);
        let recs = o.records();
        for id in ["c1", "c2"] {
            let r = &by_call_id(&recs, id)["result"];
            assert_eq!(r["text"], json!("ok \u{FFFD}\u{FFFD} then \n more"), "{id}");
        }
    }
}

/// Given a FILE, waiting calls keep their arguments in memory up to a budget (1 MiB in all)
/// and past it read them again from the file: calls whose arguments pass the budget, all
/// answered at the end, get the same records as from stdin (where every byte is kept), each
/// with its own arguments; the budget comes back as the records are written, for the next
/// turn.
#[test]
fn arguments_past_the_memory_budget_are_read_again_from_the_file() {
    let mut session = br#"{"type":"session","version":3,"id":"s-big-args","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/p"}
"#
    .to_vec();
    let mut parent = "null".to_string();
    let mut ids = Vec::new();
    for turn in 0..2 {
        // 24 calls of 64 KiB each: 1.5 MiB of arguments waiting at once.
        let calls: Vec<String> = (0..24)
            .map(|k| {
                let id = format!("c{turn}-{k}");
                let text = format!("{id} ").repeat(64 * 1024 / (id.len() + 1));
                ids.push((id.clone(), text.clone()));
                format!(r#"{{"type":"toolCall","id":"{id}","name":"write","arguments":{{"content":"{text}"}}}}"#)
            })
            .collect();
        let a = format!("a{turn}");
        session.extend_from_slice(format!(r#"{{"type":"message","id":"{a}","parentId":{parent},"timestamp":"2026-05-02T10:00:01.000Z","message":{{"role":"assistant","content":[{}]}}}}"#, calls.join(",")).as_bytes());
        session.push(b'\n');
        parent = format!("\"{a}\"");
        for k in 0..24 {
            let id = format!("c{turn}-{k}");
            let r = format!("r{turn}-{k}");
            session.extend_from_slice(format!(r#"{{"type":"message","id":"{r}","parentId":{parent},"timestamp":"2026-05-02T10:00:02.000Z","message":{{"role":"toolResult","toolCallId":"{id}","toolName":"write","content":[{{"type":"text","text":"done"}}],"isError":false}}}}"#).as_bytes());
            session.push(b'\n');
            parent = format!("\"{r}\"");
        }
    }
    let dir = TempDir::new("tools-big-args");
    let file = dir.write("s.jsonl", &session);
    let from_file = cmd("pi-tools").arg(&file).ok().records();
    let from_stdin = cmd("pi-tools").stdin(session.clone()).ok().records();
    assert_eq!(from_file.len(), 48);
    for (id, text) in &ids {
        let r = by_call_id(&from_file, id);
        assert_eq!(r["arguments"], json!({ "content": text }), "{id}");
        assert_eq!(r["status"], "ok", "{id}");
    }
    assert_eq!(without_file(from_file), without_file(from_stdin));
}
