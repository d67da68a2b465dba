//! pi-compactions: one test per inference rule and option, each on a hand-written fixture, and
//! the corpus checks.

use crate::util::*;
use serde_json::{json, Value};

fn reports(o: &Output) -> Vec<Value> {
    o.records()
        .into_iter()
        .filter(|r| r["type"] == "compaction_report")
        .collect()
}

fn of_type(o: &Output, t: &str) -> Vec<Value> {
    o.records().into_iter().filter(|r| r["type"] == t).collect()
}

fn rules(r: &Value) -> Vec<String> {
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rule"].as_str().unwrap().to_string())
        .collect()
}

fn compactions(args: &[&str]) -> Output {
    cmd("pi-compactions").args(args).run()
}

#[test]
fn recorded_reason_in_details_is_the_trigger() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-recorded.jsonl"))
        .ok();
    let r = reports(&o);
    assert_eq!(r.len(), 2);
    let a = &r[0];
    assert_eq!(a["session"], "s-recorded");
    assert_eq!(a["line"], 4);
    assert_eq!(a["entry"], "r3");
    assert_eq!(a["timestamp"], "2026-05-02T10:00:03.000Z");
    assert_eq!(a["trigger"], "manual");
    assert_eq!(a["basis"], "recorded");
    assert_eq!(rules(a), ["recorded"]);
    assert_eq!(a["evidence"][0]["line"], 4);
    assert_eq!(a["tokens_before"], 53000);
    assert_eq!(
        a["first_kept"],
        json!({"entry":"r2","index":null,"line":3,"found":true})
    );
    assert_eq!(a["summary_bytes"], 32);
    assert_eq!(a["files"], json!({"read":2,"modified":1}));
    assert_eq!(a["from_hook"], Value::Null);
    // The first assistant message after it: 3000 + 0 + 1000.
    assert_eq!(a["context_after"], 4000);
    assert_eq!(a["context_after_line"], 6);
    assert_eq!(a["inferred_drop"], 49000);
    assert!(a.get("summary").is_none(), "summary text is opt-in");
    assert!(a.get("read_files").is_none(), "file lists are opt-in");
    // `reason` works too, case-insensitively.
    let b = &r[1];
    assert_eq!(
        (b["trigger"].as_str(), b["basis"].as_str()),
        (Some("threshold"), Some("recorded"))
    );
    assert_eq!(b["context_after"], Value::Null);
    assert_eq!(b["inferred_drop"], Value::Null);
}

#[test]
fn overflow_error_right_before_is_overflow() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-overflow.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    assert_eq!(r["trigger"], "overflow");
    assert_eq!(r["basis"], "inferred");
    // Pi 0.73.1's recovery retries the turn at once: the reply after the compaction shows it.
    assert_eq!(rules(r), ["overflow_error", "retried"]);
    assert_eq!(r["evidence"][0]["line"], 5);
    assert_eq!(r["evidence"][0]["entry"], "o4");
    assert_eq!(r["from_hook"], false);
    assert_eq!(r["provider"], "anthropic");
    assert_eq!(r["model"], "claude-fixture");
    assert_eq!(r["context_after"], 10000);
    assert_eq!(r["inferred_drop"], 170500);
    assert_eq!(r["files"], json!({"read":1,"modified":0}));
    // The error message itself is an overflow, not a compaction failure.
    assert!(of_type(&o, "compaction_failure").is_empty());
}

/// Over the threshold after a reply, Pi 0.73.1's threshold check and /compact with
/// auto-compaction off (or after Pi's attempt failed) write the same file (the recorded run,
/// tests/compactions_truth.rs): listed, never deciding; the window and reserve are found.
#[test]
fn over_the_threshold_with_a_models_file_is_listed_never_deciding() {
    let models = fixture_str("models.json");
    let o = compactions(&[
        "--models",
        &models,
        &fixture_str("compaction-threshold.jsonl"),
        &fixture_str("compaction-threshold-override.jsonl"),
        &fixture_str("compaction-threshold-switched.jsonl"),
    ]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = reports(&o);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["trigger"], "unknown");
    assert_eq!(r[0]["basis"], "unknown");
    assert_eq!(rules(&r[0]), ["over_threshold", "auto_compaction_unproven"]);
    assert_eq!(r[0]["configured_window"], 200000);
    assert_eq!(r[0]["reserve_tokens"], 16384);
    // modelOverrides count as configuration too.
    assert_eq!(r[1]["session"], "s-threshold-override");
    assert_eq!(r[1]["configured_window"], 128000);
    assert_eq!(rules(&r[1])[0], "over_threshold");
    // After a switch to an unconfigured model, the window is unknown: no claim.
    assert_eq!(r[2]["model"], "unconfigured-model");
    assert_eq!(r[2]["configured_window"], Value::Null);
    assert_eq!(r[2]["trigger"], "unknown");
    assert!(!rules(&r[2]).contains(&"over_threshold".to_string()));
    // Nothing from models.json but context sizes ever reaches the output.
    assert!(!o.out().contains("SECRET") && !o.stderr.contains("SECRET"));
    assert!(!o.out().contains("example.invalid"));
}

#[test]
fn windows_are_resolved_as_current_pi_and_pi_usage_resolve_them() {
    // fixtures/models/models.json gives ollama/qwen contextWindow 32768 in models[] and 65536
    // in modelOverrides, and ollama/llama a models[] entry without contextWindow.
    let o = compactions(&[
        "--models",
        &fixture_str("models/models.json"),
        &fixture_str("compaction-window-precedence.jsonl"),
    ]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = reports(&o);
    // modelOverrides win: 30100 is not over 65536 - 16384 (it would be over 32768 - 16384),
    // so after that reply Pi 0.73.1's check compacted nothing: /compact.
    assert_eq!(r[0]["model"], "qwen");
    assert_eq!(r[0]["configured_window"], 65536);
    assert_eq!(r[0]["trigger"], "manual");
    assert_eq!(rules(&r[0]), ["under_threshold"]);
    // No contextWindow in models[]: Pi's default 128000, and 120100 > 128000 - 16384.
    assert_eq!(r[1]["model"], "llama");
    assert_eq!(r[1]["configured_window"], 128000);
    assert_eq!(rules(&r[1])[0], "over_threshold");
    // pi-usage --context reads the same windows.
    let u = cmd("pi-usage")
        .args([
            "--context",
            "--models",
            &fixture_str("models/models.json"),
            &fixture_str("compaction-window-precedence.jsonl"),
        ])
        .ok();
    let windows: Vec<Value> = u
        .records()
        .iter()
        .map(|c| c["configured_context_window"].clone())
        .collect();
    assert_eq!(windows, [json!(65536), json!(128000)]);
}

/// Issue 19, item 2: a context that does not fit in 64 bits, and the drop from tokensBefore
/// to it, are exact: neither wrapped nor clamped (they were u64::MAX and i64::MIN), as
/// pi-usage --context writes them.
#[test]
fn item_2_huge_numbers_are_exact_neither_wrapped_nor_clamped() {
    let o = compactions(&[
        "--models",
        &fixture_str("models.json"),
        &fixture_str("compaction-huge-numbers.jsonl"),
    ]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = reports(&o);
    // u64::MAX + 1, and 2^63 - 1 minus that.
    let text = o.out();
    assert!(
        text.contains("\"context_after\":18446744073709551616,"),
        "{text}"
    );
    assert!(
        text.contains("\"inferred_drop\":-9223372036854775809"),
        "{text}"
    );
    let c = &usage_context(&fixture_str("compaction-huge-numbers.jsonl"));
    assert!(
        c.contains("\"recorded_context_tokens\":18446744073709551616,"),
        "{c}"
    );
    // tokensBefore beyond i64 is still over the threshold; the reply before, input + cacheRead
    // 2^64 over the window 200000, is a silent overflow first (Pi 0.73.1's isContextOverflow
    // comes before the threshold), also exact; neither decides (Pi retries nothing after it,
    // so /compact there looks the same).
    assert_eq!(r[1]["tokens_before"], json!(u64::MAX));
    assert_eq!(r[1]["trigger"], "unknown");
    assert_eq!(
        rules(&r[1]),
        [
            "silent_overflow",
            "over_threshold",
            "auto_compaction_unproven"
        ]
    );
    assert!(r[1]["evidence"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("input + cacheRead 18446744073709551616 > context window 200000"));
    // A reserve larger than the window makes the limit negative, so any tokensBefore is over
    // it, as in Pi's arithmetic (JavaScript numbers), with no overflow on the way.
    let o = compactions(&[
        "--models",
        &fixture_str("models.json"),
        "--reserve-tokens",
        "18446744073709551615",
        &fixture_str("compaction-huge-numbers.jsonl"),
    ]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = &reports(&o)[1];
    assert_eq!(r["trigger"], "unknown");
    assert_eq!(r["evidence"][1]["rule"], "over_threshold");
    assert!(r["evidence"][1]["detail"]
        .as_str()
        .unwrap()
        .ends_with("= -18446744073709351615"));
}

#[test]
fn threshold_needs_a_window_and_honours_the_reserve() {
    let f = fixture_str("compaction-threshold.jsonl");
    let none = cmd("pi-compactions").arg(&f).ok();
    let r = &reports(&none)[0];
    assert_eq!(
        (r["trigger"].as_str(), r["basis"].as_str()),
        (Some("unknown"), Some("unknown"))
    );
    assert_eq!(r["configured_window"], Value::Null);
    // 190000 > 200000 - 10000 is false: strictly greater, as Pi compares; after that reply
    // Pi 0.73.1's check compacted nothing, so /compact.
    let models = fixture_str("models.json");
    let o = compactions(&["--models", &models, "--reserve-tokens", "10000", &f]);
    assert_eq!(reports(&o)[0]["trigger"], "manual");
    assert_eq!(rules(&reports(&o)[0]), ["under_threshold"]);
    assert_eq!(reports(&o)[0]["reserve_tokens"], 10000);
    let o = compactions(&["--models", &models, "--reserve-tokens", "10001", &f]);
    assert_eq!(reports(&o)[0]["trigger"], "unknown");
    assert_eq!(rules(&reports(&o)[0])[0], "over_threshold");
}

#[test]
fn models_file_is_found_where_pi_keeps_it() {
    let f = fixture_str("compaction-threshold.jsonl");
    let agent = TempDir::new("agent");
    agent.write("models.json", read_fixture("models.json"));
    let o = cmd("pi-compactions")
        .env("PI_CODING_AGENT_DIR", agent.path())
        .arg(&f)
        .ok();
    assert_eq!(reports(&o)[0]["configured_window"], 200000);
    assert_eq!(rules(&reports(&o)[0])[0], "over_threshold");
    let home = TempDir::new("home");
    home.write(".pi/agent/models.json", read_fixture("models.json"));
    let o = cmd("pi-compactions").env("HOME", home.path()).arg(&f).ok();
    assert_eq!(reports(&o)[0]["configured_window"], 200000);
}

#[test]
fn bad_models_file_is_reported_without_its_content() {
    let t = TempDir::new("badmodels");
    let p = t.write(
        "models.json",
        "{\"providers\": {\"x\": {\"apiKey\": \"SECRET-1\" ",
    );
    let o = compactions(&[
        "--models",
        &p.to_string_lossy(),
        &fixture_str("compaction-threshold.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("models.json"), "{}", o.stderr);
    assert!(!o.stderr.contains("SECRET"));
    assert_eq!(reports(&o)[0]["trigger"], "unknown");
    let o = compactions(&[
        "--models",
        "/nonexistent/models.json",
        &fixture_str("compaction-threshold.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert_eq!(reports(&o).len(), 1);
}

/// Pi 0.73.1 compacts on its own only in AgentSession._checkCompaction (overflow by
/// isContextOverflow, then the threshold); a length stop with output is neither. This fixture
/// was once `automatic` by the rule length_stop, which no Pi code supports.
#[test]
fn length_stop_right_before_is_no_automatic_trigger_in_pi_0_73_1() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-length.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    assert_eq!(r["trigger"], "unknown", "no window for claude-fixture");
    assert_eq!(r["basis"], "unknown");
    assert_eq!(rules(r), ["length_stop"]);
    assert_eq!(r["evidence"][0]["line"], 3);
    assert_eq!(r["files"], json!({"read":0,"modified":1}));
    let models = fixture_str("models.json");
    let o = compactions(&["--models", &models, &fixture_str("compaction-length.jsonl")]);
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["basis"]),
        (&json!("manual"), &json!("inferred")),
        "48192 <= 200000 - 16384 after a reply that is no overflow: compact()"
    );
    assert_eq!(rules(r), ["under_threshold", "length_stop"]);
}

/// Pi 0.73.1's _checkCompaction: isContextOverflow(reply, window) case 2, a stop reply whose
/// input + cacheRead (150000 + 60000) is over the window (claude-sonnet-4-5, 200000 in Pi's
/// catalogue): with auto-compaction on Pi compacts for overflow there, but retries nothing, so
/// /compact after it looks the same (the recorded run has both): listed, never deciding.
#[test]
fn pi0_silent_overflow_is_listed_never_deciding() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-silent-overflow.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["basis"]),
        (&json!("unknown"), &json!("unknown"))
    );
    assert_eq!(
        rules(r),
        [
            "silent_overflow",
            "over_threshold",
            "auto_compaction_unproven"
        ]
    );
    assert_eq!(r["evidence"][0]["line"], 3);
    assert_eq!(
        r["evidence"][0]["detail"],
        "the reply before ended with stopReason stop but input + cacheRead 210000 > context window 200000: with auto-compaction on Pi 0.73.1 compacts for overflow after such a reply and retries nothing, so /compact after it (auto-compaction off, or Pi's attempt failed) looks the same"
    );
}

/// Case 3: a length stop with output 0 and input + cacheRead (190000 + 8000) at 99% of the
/// window or more: the same.
#[test]
fn pi0_filled_window_is_listed_never_deciding() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-filled-window.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["basis"]),
        (&json!("unknown"), &json!("unknown"))
    );
    assert_eq!(
        rules(r),
        [
            "filled_window",
            "over_threshold",
            "auto_compaction_unproven",
            "length_stop"
        ]
    );
}

#[test]
fn nothing_known_is_unknown() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-unknown.jsonl"))
        .ok();
    let r = reports(&o);
    assert_eq!(r.len(), 2);
    for x in &r {
        // A user message between the overflow error and the compaction, and an error that is
        // not an overflow: neither is a clue.
        assert_eq!(
            (x["trigger"].as_str(), x["basis"].as_str()),
            (Some("unknown"), Some("unknown"))
        );
        assert_eq!(x["evidence"], json!([]));
    }
}

#[test]
fn from_hook_is_reported_as_written_by_an_extension() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-from-hook.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    assert_eq!(r["from_hook"], true);
    assert_eq!(r["trigger"], "unknown");
    assert_eq!(r["basis"], "unknown");
    assert_eq!(rules(r), ["from_hook"]);
    assert!(r["evidence"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("written by an extension"));
    assert_eq!(r["files"], json!({"read":null,"modified":null}));
}

#[test]
fn v1_first_kept_entry_index_counts_records_from_the_header() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-v1-index.jsonl"))
        .ok();
    let r = reports(&o);
    assert_eq!(r.len(), 3);
    // Index 3: header 0, user 1, (blank line skipped) assistant 2, user 3 on line 5.
    assert_eq!(
        r[0]["first_kept"],
        json!({"entry":null,"index":3,"line":5,"found":true})
    );
    assert_eq!(r[0]["entry"], Value::Null);
    assert_eq!(r[0]["line"], 7);
    // Linear v1 log: the length stop just before is listed; Pi 0.73.1 does not compact for
    // it, and claude-old has no window, so the trigger is unknown.
    assert_eq!(r[0]["trigger"], "unknown");
    assert_eq!(rules(&r[0]), ["length_stop"]);
    assert_eq!(r[0]["context_after"], 300);
    // Index 0 is the header, which Pi never resolves; 99 is past the compaction.
    assert_eq!(
        r[1]["first_kept"],
        json!({"entry":null,"index":0,"line":null,"found":false})
    );
    assert_eq!(r[2]["first_kept"]["found"], false);
    // Another compaction came before any assistant message: nothing measured after r[1].
    assert_eq!(r[1]["context_after"], Value::Null);
}

/// Pi's loadEntriesFromFile keeps every line that parses to a truthy value and its v1
/// migration indexes that list: an array line is an entry to it (null, 0, false and "" are
/// dropped by 1.6.0; any other value that is no object makes the migration throw, in 0.73.1
/// and 1.6.0 alike). Checked with both Pis' SessionManager on this file.
#[test]
fn v1_first_kept_entry_index_counts_array_lines_as_pi_does() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-v1-array-line.jsonl"))
        .run();
    let r = reports(&o);
    assert_eq!(r.len(), 3);
    assert_eq!(
        r[0]["first_kept"],
        json!({"entry":null,"index":3,"line":4,"found":true})
    );
    assert_eq!(
        r[1]["first_kept"],
        json!({"entry":null,"index":6,"line":7,"found":true})
    );
    assert_eq!(
        r[2]["first_kept"],
        json!({"entry":null,"index":2,"line":3,"found":true}),
        "the array line is the entry at index 2: Pi gives it an id and keeps from it"
    );
}

#[test]
fn missing_first_kept_entry_is_not_found() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-missing-first-kept.jsonl"))
        .ok();
    let r = reports(&o);
    assert_eq!(
        r[0]["first_kept"],
        json!({"entry":"deadbeef","index":null,"line":null,"found":false})
    );
    assert_eq!(
        r[1]["first_kept"],
        json!({"entry":"m4","index":null,"line":5,"found":true})
    );
    assert_eq!(
        r[2]["first_kept"],
        json!({"entry":null,"index":null,"line":null,"found":false})
    );
}

/// Ids that differ only in lone surrogate escapes, and a written U+FFFD, are three ids, as
/// Pi's JavaScript compares them (see tests/pi16.rs on `ids-lone-surrogates.jsonl`): the first
/// compaction's parent is the reply `"\ud800"` (its model, not that of the later sibling
/// `"\ud801"` or of the user message U+FFFD), its first kept entry is that reply (not the
/// compaction itself, `"\udc00"`, so no retain-none), and `"\ud802"` is found nowhere, nor is
/// the branch summary's `fromId` `"\ud803"`. Each is shown as U+FFFD.
#[test]
fn ids_differing_only_in_lone_surrogates_are_kept_apart() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-ids-lone-surrogates.jsonl"))
        .ok();
    let r = reports(&o);
    assert_eq!(r.len(), 2);
    let facts = |r: &Value| {
        json!([
            r["entry"],
            r["first_kept"],
            r["retain_none"],
            r["provider"],
            r["model"]
        ])
    };
    assert_eq!(
        facts(&r[0]),
        json!(["\u{FFFD}", {"entry":"\u{FFFD}","index":null,"line":3,"found":true}, false, "anthropic", "claude-a"])
    );
    assert_eq!(r[0]["evidence"][0]["entry"], "\u{FFFD}");
    assert_eq!(
        facts(&r[1]),
        json!(["c2", {"entry":"\u{FFFD}","index":null,"line":null,"found":false}, false, "anthropic", "claude-a"])
    );
    let o = cmd("pi-compactions")
        .arg("--branch-summaries")
        .arg(fixture("compaction-ids-lone-surrogates.jsonl"))
        .ok();
    let b = &of_type(&o, "branch_summary_report")[0];
    assert_eq!(
        json!([b["target"], b["from_id"], b["from_found"]]),
        json!(["\u{FFFD}", "\u{FFFD}", false])
    );
}

#[test]
fn failure_messages_of_each_kind() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-failures.jsonl"))
        .ok();
    let f = of_type(&o, "compaction_failure");
    let got: Vec<_> = f
        .iter()
        .map(|r| {
            (
                r["entry"].as_str().unwrap().to_string(),
                r["trigger"].as_str().unwrap().to_string(),
                r["failure"].as_str().unwrap().to_string(),
                r["summarization"].as_str().map(str::to_string),
                r["error_kind"].as_str().unwrap().to_string(),
                r["http_status"].as_u64(),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (
                s("f2"),
                s("threshold"),
                s("auto_compaction"),
                Some(s("history")),
                s("rate_limit"),
                Some(429)
            ),
            (
                s("f3"),
                s("overflow"),
                s("overflow_recovery"),
                None,
                s("timeout"),
                None
            ),
            (
                s("f4"),
                s("overflow"),
                s("overflow_recovery"),
                None,
                s("context_overflow"),
                None
            ),
            (
                s("f5"),
                s("overflow"),
                s("truncation_recovery"),
                None,
                s("other"),
                None
            ),
            (
                s("f6"),
                s("manual"),
                s("manual_compaction"),
                None,
                s("connection"),
                None
            ),
            (
                s("f7"),
                s("unknown"),
                s("summarization"),
                Some(s("history")),
                s("server"),
                Some(503)
            ),
            (
                s("f8"),
                s("unknown"),
                s("turn_prefix_summarization"),
                Some(s("turn_prefix")),
                s("aborted"),
                None
            ),
            (
                s("f9"),
                s("overflow"),
                s("overflow_recovery"),
                None,
                s("aborted"),
                None
            ),
        ]
    );
    assert_eq!(f[6]["stop_reason"], "aborted");
    assert_eq!(f[0]["line"], 3);
    // Raw error text never reaches a record.
    assert!(!o.out().contains("ZEBRA"));
    // And failures are never ordinary errors, even with --errors.
    let o = compactions(&["--errors", &fixture_str("compaction-failures.jsonl")]);
    assert!(of_type(&o, "assistant_error").is_empty());
    assert_eq!(of_type(&o, "compaction_failure").len(), 8);
}

#[test]
fn api_errors_stay_api_errors() {
    let f = fixture_str("assistant-errors.jsonl");
    let quiet = cmd("pi-compactions").arg(&f).ok();
    assert_eq!(
        quiet.out(),
        "",
        "no compactions, no failures, no --errors: nothing"
    );
    let o = compactions(&["--errors", &f]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(of_type(&o, "compaction_failure").is_empty());
    let e = of_type(&o, "assistant_error");
    let got: Vec<_> = e
        .iter()
        .map(|r| {
            (
                r["entry"].as_str().unwrap().to_string(),
                r["error_kind"].as_str().unwrap().to_string(),
                r["http_status"].as_u64(),
                r["retry_attempt"].as_u64(),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (s("e2"), s("rate_limit"), Some(429), None),
            (s("e3"), s("context_overflow"), Some(400), None),
            (s("e4"), s("connection"), None, None),
            (s("e5"), s("aborted"), None, None),
            (s("e6"), s("aborted"), None, Some(3)),
            (s("e7"), s("server"), Some(503), None),
            (s("e8"), s("server"), Some(500), None),
            (s("e9"), s("timeout"), None, None),
        ]
    );
    assert_eq!(e[3]["stop_reason"], "aborted");
    assert_eq!(e[0]["provider"], "anthropic");
    assert!(!o.out().contains("Usage limit"));
    assert!(!o.out().contains("upstream"));
}

#[test]
fn compaction_entry_is_found_on_its_own_branch() {
    let o = cmd("pi-compactions")
        .arg(fixture("compaction-branches.jsonl"))
        .ok();
    let r = &reports(&o)[0];
    // The last assistant message in file order (a6, branch B) is not on the compaction's
    // chain; the overflow error a4 is. No retried reply follows the compaction (a user
    // message does): /compact after the error looks the same.
    assert_eq!(rules(r), ["overflow_error", "no_retry"]);
    assert_eq!(r["evidence"][0]["entry"], "a4");
    // a8 comes first in the file but continues branch B; a10 descends from the compaction.
    assert_eq!(r["context_after"], 100);
    assert_eq!(r["context_after_line"], 11);
    assert_eq!(r["inferred_drop"], 1);
}

#[test]
fn summary_and_files_options() {
    let o = compactions(&[
        "--summary",
        "--files",
        &fixture_str("compaction-recorded.jsonl"),
    ]);
    let r = &reports(&o)[0];
    assert_eq!(r["summary"], "Read a.rs and b.rs, edited c.rs.");
    assert_eq!(r["read_files"], json!(["src/a.rs", "src/b.rs"]));
    assert_eq!(r["modified_files"], json!(["src/c.rs"]));
    let r2 = &reports(&o)[1];
    assert_eq!(r2["read_files"], Value::Null);
}

#[test]
fn branch_summaries_option() {
    let f = fixture_str("branch-summary.jsonl");
    let o = cmd("pi-compactions").arg(&f).ok();
    assert!(of_type(&o, "branch_summary_report").is_empty());
    let o = compactions(&["--branch-summaries", "--files", &f]);
    let b = of_type(&o, "branch_summary_report");
    assert_eq!(b.len(), 2);
    assert_eq!(b[0]["entry"], "b5");
    assert_eq!(b[0]["line"], 6);
    assert_eq!(b[0]["target"], "b2");
    assert_eq!(b[0]["from_id"], "b2");
    assert_eq!(b[0]["from_found"], true);
    assert_eq!(b[0]["summary_bytes"], 32);
    assert_eq!(b[0]["files"], json!({"read":1,"modified":2}));
    assert_eq!(b[0]["modified_files"], json!(["risky.rs", "lib.rs"]));
    assert_eq!(b[0]["from_hook"], false);
    assert_eq!(b[1]["from_found"], false);
    assert_eq!(b[1]["from_hook"], true);
    assert_eq!(b[1]["files"], json!({"read":null,"modified":null}));
}

#[test]
fn records_come_in_input_order() {
    // The report of n4 (line 5) waits for an assistant message with usage; the error on line 7
    // is not one, and its record may not overtake the report.
    let o = compactions(&["--errors", &fixture_str("compaction-unknown.jsonl")]);
    let got: Vec<(String, u64)> = o
        .records()
        .iter()
        .map(|r| {
            (
                r["type"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        [
            (s("assistant_error"), 3),
            (s("compaction_report"), 5),
            (s("assistant_error"), 7),
            (s("compaction_report"), 8),
        ]
    );
}

#[test]
fn table_prints_a_row_per_compaction_and_failure_and_the_counts() {
    let o = cmd("pi-compactions")
        .args(["--table", "--color", "never"])
        .arg(fixture("compaction-overflow.jsonl"))
        .arg(fixture("assistant-errors.jsonl"))
        .arg(fixture("compaction-unknown.jsonl"))
        .arg(fixture("compaction-failures.jsonl"))
        .env_remove("COLUMNS")
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let out = o.out();
    // A heading per session with rows; none for a session with neither.
    let headings: Vec<&str> = out.lines().filter(|l| l.starts_with("session ")).collect();
    assert_eq!(headings.len(), 3, "{out}");
    assert!(headings[0].starts_with("session s-overflow · "), "{out}");
    assert!(!out.contains("s-errors"), "{out}");
    // The overflow compaction: its time, line, trigger, basis, tokens before, the context
    // after (~: the next reply's), the first kept entry and the evidence.
    let row = out.lines().find(|l| l.starts_with("10:00:20")).unwrap();
    for want in [
        "6",
        "overflow",
        "inferred",
        "180,500",
        "~10,000",
        "o2 (line 3)",
        "overflow_error (line 5)",
    ] {
        assert!(row.contains(want), "{want:?} not in {row:?}");
    }
    // Rows whose basis column says failed (evidence text may hold the word too).
    let failures = out
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("failed"))
        .count();
    assert_eq!(failures, 8, "{out}");
    assert!(
        out.ends_with("3 compactions: overflow 1, unknown 2 (inferred 1, unknown 2); 8 failures\n"),
        "{out}"
    );
}

#[test]
fn stdin_gives_the_same_records_as_a_file() {
    for f in [
        "compaction-branches.jsonl",
        "compaction-v1-index.jsonl",
        "compaction-overflow.jsonl",
    ] {
        let a = cmd("pi-compactions").arg(fixture(f)).ok();
        let b = cmd("pi-compactions").stdin(read_fixture(f)).ok();
        let strip = |o: &Output| -> Vec<Value> {
            o.records()
                .into_iter()
                .map(|mut r| {
                    r.as_object_mut().unwrap().remove("file");
                    r
                })
                .collect()
        };
        assert_eq!(strip(&a), strip(&b), "{f}");
    }
}

#[test]
fn bad_input_is_reported_and_the_run_goes_on() {
    let o = compactions(&[
        &fixture_str("glued.jsonl"),
        &fixture_str("no-header.jsonl"),
        &fixture_str("compaction-length.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert_eq!(reports(&o).len(), 1);
    assert!(o.stderr.contains("pi-compactions: "), "{}", o.stderr);
}

/// Counts compaction entries the way Pi would see them: parseable object lines after a valid
/// header (independently of the tool's reader).
fn count_compactions(bytes: &[u8]) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let mut in_session = false;
    let mut n = 0;
    for line in text.split('\n') {
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line.trim_end_matches('\r'))
        else {
            continue;
        };
        if o.get("type") == Some(&json!("session")) {
            in_session = o.get("id").is_some_and(Value::is_string);
            continue;
        }
        if in_session && o.get("type") == Some(&json!("compaction")) {
            n += 1;
        }
    }
    n
}

#[test]
fn corpus_one_report_per_compaction_and_no_panic() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    let mut total = 0;
    for f in &files {
        let o = cmd("pi-compactions")
            .args(["--errors", "--branch-summaries"])
            .arg(f)
            .run();
        assert!(
            o.status == 0 || o.status == 2,
            "{}: status {}",
            f.display(),
            o.status
        );
        let want = count_compactions(&std::fs::read(f).unwrap());
        assert_eq!(reports(&o).len(), want, "{}", f.display());
        total += want;
        for r in o.records() {
            for k in ["trigger", "basis"] {
                if r["type"] == "compaction_report" {
                    assert!(r[k].is_string(), "{}: {r}", f.display());
                }
            }
        }
    }
    assert!(total > 0, "the corpus has real compactions");
    // All files at once, in parallel, gives the same reports in argument order.
    let all = cmd("pi-compactions").args(&files).run();
    assert_eq!(reports(&all).len(), total);
}

#[test]
fn corpus_overflow_compactions_are_found() {
    let Some(c) = corpus() else { return };
    let f = c
        .join("openclaw")
        .join("Musk-fanX__openclaw-backup__agents__main__sessions__d27ecd5a-45f9-41a3-bad1-ddef6a3c79fc.jsonl");
    if !f.exists() {
        return;
    }
    let o = cmd("pi-compactions").arg(&f).run();
    let r = reports(&o);
    assert_eq!(r.len(), 3);
    // Each follows an overflow error; two are followed by the retried reply (overflow), one
    // by a user message, which /compact after the error would leave too: unknown.
    let triggers: Vec<&str> = r.iter().map(|x| x["trigger"].as_str().unwrap()).collect();
    assert_eq!(triggers, ["overflow", "unknown", "overflow"]);
    for x in &r {
        assert_eq!(x["evidence"][0]["rule"], "overflow_error", "{x}");
    }
}

/// The `pi-usage --context` output of `file`.
fn usage_context(file: &str) -> String {
    cmd("pi-usage").args(["--context", file]).ok().out()
}

/// Issue 19, item 11: a bad `firstKeptEntryIndex` or `fromHook` is reported (bad_field) as
/// other bad fields are, not made null silently; a whole `tokensBefore` written with an
/// exponent is the count it stands for.
#[test]
fn item_11_bad_first_kept_index_and_from_hook_are_reported() {
    let file = fixture_str("compaction-bad-fields.jsonl");
    let o = compactions(&["--branch-summaries", &file]);
    assert_eq!(o.status, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr_lines(),
        [
            format!("pi-compactions: {file}:6: compaction firstKeptEntryIndex is a string, not a number; treated as unknown"),
            format!("pi-compactions: {file}:6: compaction fromHook is a string, not a boolean; treated as unknown"),
            format!("pi-compactions: {file}:7: branch_summary fromHook is a number, not a boolean; treated as unknown"),
        ]
    );
    let r = &reports(&o)[0];
    assert_eq!(r["tokens_before"], 1234);
    assert_eq!(r["first_kept"]["index"], Value::Null);
}

/// pi-compactions in an agent directory holding `settings` as settings.json (and no
/// models.json: windows from Pi's catalogue), over `file`, with `args`.
fn with_settings(settings: &str, args: &[&str], file: &str) -> Output {
    let agent = TempDir::new("settings");
    agent.write("settings.json", settings);
    cmd("pi-compactions")
        .env("PI_CODING_AGENT_DIR", agent.path())
        .arg("--json")
        .args(args)
        .arg(file)
        .run()
}

/// Pi reads `compaction.reserveTokens` from settings.json in its agent directory
/// (SettingsManager.getCompactionReserveTokens, default 16384), and Pi 1.6.0 first
/// `compaction.modelOverrides["provider/id"].reserveTokens` (getCompactionTokenSetting). With
/// 50000, 170000 > 200000 - 50000: Pi 1.6.0's threshold check would compact, so /compact is
/// no longer the only answer. The settings are today's, so that is named in the evidence.
#[test]
fn the_reserve_comes_from_pi_settings_json() {
    let f = fixture_str("compaction-settings-reserve.jsonl");
    let o = with_settings("{}", &[], &f);
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["reserve_tokens"]),
        (&json!("manual"), &json!(16384))
    );
    assert_eq!(r["reserve_source"], "default");
    let o = with_settings(r#"{"compaction":{"reserveTokens":50000}}"#, &[], &f);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["basis"]),
        (&json!("unknown"), &json!("unknown"))
    );
    assert_eq!(
        rules(r),
        [
            "over_threshold",
            "auto_compaction_unproven",
            "settings_assumed"
        ]
    );
    assert_eq!(
        (&r["reserve_tokens"], &r["reserve_source"]),
        (&json!(50000), &json!("settings"))
    );
    let assumed = r["evidence"][2]["detail"].as_str().unwrap();
    assert!(assumed.contains("compaction.reserveTokens"), "{assumed}");
    // Pi 1.6.0: a model's override first.
    let o = with_settings(
        r#"{"compaction":{"reserveTokens":10000,"modelOverrides":{"anthropic/claude-sonnet-4-5":{"reserveTokens":40000}}}}"#,
        &[],
        &f,
    );
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["reserve_tokens"], &r["reserve_source"]),
        (&json!(40000), &json!("settings_model_override"))
    );
    assert_eq!(rules(r)[0], "over_threshold");
    // --reserve-tokens wins over the file.
    let o = with_settings(
        r#"{"compaction":{"reserveTokens":50000}}"#,
        &["--reserve-tokens", "16384"],
        &f,
    );
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["trigger"], &r["reserve_source"]),
        (&json!("manual"), &json!("option"))
    );
    assert_eq!(rules(r), ["under_threshold"]);
}

/// Problems with settings.json are reported as models.json's are, never quoting it. Invalid
/// JSON: Pi itself falls back to its defaults (tryLoadFromStorage), so 16384. A reserveTokens
/// that is no non-negative integer: Pi 1.6.0 refuses it (its threshold check throws), so no
/// reserve is known and no threshold rule applies.
#[test]
fn settings_json_problems_are_reported() {
    let f = fixture_str("compaction-settings-reserve.jsonl");
    let o = with_settings(r#"{"compaction":{"reserveTokens":50000 "SECRET"#, &[], &f);
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("settings.json"), "{}", o.stderr);
    assert!(!o.stderr.contains("SECRET"), "{}", o.stderr);
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["reserve_tokens"], &r["reserve_source"]),
        (&json!(16384), &json!("default"))
    );
    assert_eq!(r["trigger"], "manual");
    let o = with_settings(r#"{"compaction":{"reserveTokens":"50000"}}"#, &[], &f);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains("compaction.reserveTokens"),
        "{}",
        o.stderr
    );
    let r = &reports(&o)[0];
    assert_eq!(
        (&r["reserve_tokens"], &r["reserve_source"]),
        (&Value::Null, &json!("settings"))
    );
    assert_eq!(
        (&r["trigger"], &r["basis"]),
        (&json!("unknown"), &json!("unknown"))
    );
    assert_eq!(rules(r), Vec::<String>::new());
}

/// Pi 0.73.1's SettingsManager has no per-model override: for its files only
/// compaction.reserveTokens counts.
#[test]
fn pi0_files_ignore_per_model_reserves() {
    let agent = TempDir::new("settings0");
    agent.write("models.json", read_fixture("models.json"));
    agent.write(
        "settings.json",
        r#"{"compaction":{"modelOverrides":{"anthropic/claude-fixture":{"reserveTokens":5000}}}}"#,
    );
    let run = || {
        cmd("pi-compactions")
            .env("PI_CODING_AGENT_DIR", agent.path())
            .arg(fixture("compaction-threshold.jsonl"))
            .ok()
    };
    let r = &reports(&run())[0];
    assert_eq!(
        (&r["reserve_tokens"], &r["reserve_source"]),
        (&json!(16384), &json!("default"))
    );
    assert_eq!(rules(r)[0], "over_threshold");
    agent.write("settings.json", r#"{"compaction":{"reserveTokens":5000}}"#);
    let r = &reports(&run())[0];
    assert_eq!(
        (&r["trigger"], &r["reserve_tokens"]),
        (&json!("manual"), &json!(5000))
    );
    assert_eq!(rules(r), ["under_threshold", "settings_assumed"]);
}
