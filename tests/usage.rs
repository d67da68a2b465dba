//! pi-usage: one test per fixture and rule, the comparisons with an independent sum over the
//! corpus, and the corpus checks.

use crate::util::*;
use pi_jsonl::cmd::usage::{format_decimal, parse_cost, Amount, Cost};
use serde_json::{json, Value};

fn usage(args: &[&str]) -> Output {
    cmd("pi-usage").args(args).run()
}

fn f(name: &str) -> String {
    fixture_str(name)
}

/// The numbers of a sums object, without `other`.
fn nums(s: &Value) -> Value {
    json!([
        s["count"],
        s["input"],
        s["output"],
        s["cache_read"],
        s["cache_write"],
        s["total_tokens"],
        s["cost"],
        s["cost_missing"]
    ])
}

#[test]
fn basic_messages_and_summarization_are_kept_apart() {
    let o = cmd("pi-usage").arg(fixture("usage-basic.jsonl")).ok();
    let r = o.records();
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!(r["type"], "usage");
    assert_eq!(r["session"], "s-basic");
    assert_eq!(r["file"], f("usage-basic.jsonl"));
    assert_eq!(r["project"], "/home/u/proj");
    assert_eq!(r["lineage"], "none");
    // a1 + a2 + the aborted a3 (zero tokens, counted); 0.1 + 0.2 is exactly 0.3.
    assert_eq!(
        nums(&r["messages"]),
        json!([3, 300, 50, 1000, 50, 1400, 0.3, 0])
    );
    // The compaction and branch_summary calls; a compaction without usage is no call.
    assert_eq!(
        nums(&r["summarization"]),
        json!([2, 1510, 105, 0, 0, 1615, 0.3000001, 0])
    );
    assert_eq!(
        nums(&r["total"]),
        json!([5, 1810, 155, 1000, 50, 3015, 0.6000001, 0])
    );
    assert_eq!(r["first"], "2026-05-01T10:00:05.000Z");
    assert_eq!(r["last"], "2026-05-01T10:06:00.000Z");
    let bm: Vec<_> = r["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["provider"], m["model"], m["count"], m["cost"]]))
        .collect();
    assert_eq!(
        bm,
        vec![
            json!(["anthropic", "claude-sonnet-4-5", 3, 0.4]),
            json!(["openai", "gpt-5", 1, 0.2]),
            json!([null, null, 1, 0.0000001]),
        ]
    );
    // The cost is written as exact decimal text, not as a float sum.
    assert!(o.out().contains("\"cost\":0.3,"), "{}", o.out());
}

#[test]
fn total_has_the_same_shape_as_a_session_record() {
    let by_session = cmd("pi-usage")
        .arg(fixture("usage-basic.jsonl"))
        .ok()
        .records();
    let total = cmd("pi-usage")
        .args(["--total", &f("usage-basic.jsonl")])
        .ok()
        .records();
    assert_eq!(total.len(), 1);
    let (a, b) = (&by_session[0], &total[0]);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(a), keys(b));
    assert_eq!(b["session"], Value::Null);
    assert_eq!(b["file"], Value::Null);
    assert_eq!(b["lineage"], Value::Null);
    assert_eq!(a["total"], b["total"]);
    assert_eq!(a["by_model"], b["by_model"]);
}

#[test]
fn v1_sessions_count_without_ids() {
    let r = &cmd("pi-usage")
        .arg(fixture("usage-v1.jsonl"))
        .ok()
        .records()[0];
    // totalTokens is absent in both: computed as input + output + cacheRead + cacheWrite.
    assert_eq!(nums(&r["messages"]), json!([2, 20, 4, 0, 0, 24, 0.002, 0]));
    assert_eq!(r["messages"]["total_tokens_computed"], 2);
    // Identity without ids is timestamp + usage: the same file twice counts once.
    let t = &usage(&["--total", &f("usage-v1.jsonl"), &f("usage-v1.jsonl")]).records()[0];
    assert_eq!(t["total"]["count"], 2);
    assert_eq!(t["duplicates"], 2);
    assert_eq!(t["sessions"], 2);
}

#[test]
fn timestamps_offsets_fallbacks_and_missing() {
    let o = usage(&["--by", "day", "--tz", "UTC", &f("usage-timestamps.jsonl")]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr
            .contains("usage-timestamps.jsonl:5: timestamp \"yesterday\" is not ISO 8601"),
        "{}",
        o.stderr
    );
    let days: Vec<_> = o
        .records()
        .iter()
        .map(|r| json!([r["day"], r["total"]["input"], r["first"]]))
        .collect();
    assert_eq!(
        days,
        vec![
            // -05:00 on May 1 late evening is May 2 in UTC; first is the text as written.
            json!(["2026-05-02", 1, "2026-05-01T23:30:00.000-05:00"]),
            // No entry timestamp: the message's Unix milliseconds.
            json!(["2026-05-03", 2, "2026-05-03T12:00:00.000Z"]),
            // A bad entry timestamp falls back to the message's.
            json!(["2026-05-04", 8, "2026-05-04T12:00:00.000Z"]),
            // No time at all: counted, day unknown, sorted last.
            json!([null, 4, null]),
        ]
    );
    let local = usage(&[
        "--by",
        "day",
        "--tz",
        "-05:00",
        &f("usage-timestamps.jsonl"),
    ]);
    assert_eq!(local.records()[0]["day"], "2026-05-01");
    let weeks: Vec<_> = usage(&[
        "--by",
        "week,month",
        "--tz",
        "UTC",
        &f("usage-timestamps.jsonl"),
    ])
    .records()
    .iter()
    .map(|r| json!([r["week"], r["month"], r["total"]["count"]]))
    .collect();
    assert_eq!(
        weeks,
        vec![
            json!(["2026-W18", "2026-05", 2]),
            json!(["2026-W19", "2026-05", 1]),
            json!([null, null, 1]),
        ]
    );
}

#[test]
fn local_zone_follows_tz() {
    let o = cmd("pi-usage")
        .env("TZ", "<-05>5")
        .args(["--by", "day", &f("usage-timestamps.jsonl")])
        .run();
    assert_eq!(o.records()[0]["day"], "2026-05-01");
    let o = cmd("pi-usage")
        .env("TZ", "Nowhere/Atlantis")
        .args(["--by", "day", &f("usage-basic.jsonl")])
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("local time zone"), "{}", o.stderr);
    assert_eq!(o.records()[0]["day"], "2026-05-01");
}

#[test]
fn zone_names_from_the_system_zoneinfo() {
    if !std::path::Path::new("/usr/share/zoneinfo/America/Chicago").exists() {
        eprintln!("no system zoneinfo; skipped");
        return;
    }
    // 04:30 UTC on May 2: still May 1 in Chicago (CDT, -05:00), already May 2 in New York
    // (EDT, -04:00) and in Kolkata.
    let o = usage(&[
        "--by",
        "day",
        "--tz",
        "America/Chicago",
        &f("usage-timestamps.jsonl"),
    ]);
    assert_eq!(o.records()[0]["day"], "2026-05-01");
    let o = usage(&[
        "--by",
        "day",
        "--tz",
        "America/New_York",
        &f("usage-timestamps.jsonl"),
    ]);
    assert_eq!(o.records()[0]["day"], "2026-05-02");
    let o = usage(&[
        "--by",
        "day",
        "--tz",
        "Asia/Kolkata",
        &f("usage-timestamps.jsonl"),
    ]);
    assert_eq!(o.records()[0]["day"], "2026-05-02");
}

#[test]
fn bad_tz_is_a_usage_error() {
    let o = usage(&[
        "--by",
        "day",
        "--tz",
        "Mars/Olympus",
        &f("usage-basic.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("unknown time zone"), "{}", o.stderr);
    assert!(o.stdout.is_empty());
}

/// Usage fields Pi does not define are summed under `other` by their names as the input
/// spells them, decoded: a name holding a quote, a line feed, a backslash, a tab or a control
/// character is written escaped, in the records of `--by`, `--total`, `--calls` and of a run
/// over the cache, so every line stays one JSON value.
#[test]
fn other_fields_keep_any_name_and_the_records_stay_json() {
    let file = fixture("usage-other-field-names.jsonl");
    let want = json!({
        "we\"ird": 11,
        "line\nfeed": 2,
        "back\\slash": 3,
        "tab\tname": 4,
        "\u{1}control": 5,
        "plainTokens": 66
    });
    // The cache's second run writes the sums it kept.
    let cache = TempDir::new("usage-other-names");
    let cache_dir = cache.path().to_str().unwrap();
    let cached = ["--cache", "--cache-dir", cache_dir];
    for args in [&[][..], &["--total"], &["--by", "model"], &cached, &cached] {
        let o = cmd("pi-usage").args(args).arg(&file).ok();
        for line in o.out().lines() {
            serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {line}"));
        }
        let r = &o.records()[0];
        assert_eq!(r["total"]["other"], want, "{args:?}");
        assert_eq!(r["messages"]["other"], want, "{args:?}");
    }
    let o = cmd("pi-usage").arg("--calls").arg(&file).ok();
    let calls = o.records();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0]["other"],
        json!({"we\"ird": 1, "line\nfeed": 2, "back\\slash": 3, "tab\tname": 4, "\u{1}control": 5, "plainTokens": 6})
    );
    assert_eq!(calls[1]["other"], json!({"we\"ird": 10, "plainTokens": 60}));
}

#[test]
fn bad_fields_are_reported_and_not_counted() {
    let o = usage(&[&f("usage-bad-fields.jsonl")]);
    assert_eq!(o.status, 2);
    let errs = o.stderr_lines();
    let file = f("usage-bad-fields.jsonl");
    assert_eq!(
        errs,
        vec![
            format!("pi-usage: {file}:2: usage.input is negative (-5); not counted"),
            format!("pi-usage: {file}:2: usage.output is a string, not a number; not counted"),
            format!("pi-usage: {file}:2: usage.cacheRead is not a whole number (1.5); not counted"),
            format!("pi-usage: {file}:4: usage.cost.total is a string, not a number; cost counted as missing"),
            format!("pi-usage: {file}:5: usage.cost.total is negative (-1); cost counted as missing"),
            format!("pi-usage: {file}:7: usage is a string, not an object; counted with zero tokens and no cost"),
        ]
    );
    let r = &o.records()[0];
    let m = &r["messages"];
    // f1: only cacheWrite 3 counts; f2..f4: input 10, 20, 40; f5, f6: zero tokens.
    assert_eq!(nums(m), json!([6, 70, 0, 0, 3, 73, 0.01, 5]));
    // totalTokens absent in f1, f5 (no usage) and f6 (usage not an object).
    assert_eq!(m["total_tokens_computed"], 3);
    // `reasoning` (part of output) is a breakdown of its own, no longer in `other`; a
    // non-numeric unknown field (details) is not summed.
    assert_eq!(m["other"], json!({}));
    assert_eq!(
        (&m["reasoning"], &m["reasoning_calls"]),
        (&json!(10), &json!(2))
    );
    // Provider absent: null in by_model, not guessed.
    let bm = r["by_model"].as_array().unwrap();
    assert_eq!(bm[0]["provider"], "p");
    assert_eq!(bm[1]["provider"], Value::Null);
    assert_eq!(bm[1]["model"], "m1");
    assert_eq!(bm[1]["count"], 1);
}

#[test]
fn all_costs_missing_is_null_not_zero() {
    let line = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/x"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}
"#;
    let r = &cmd("pi-usage").stdin(line).ok().records()[0];
    assert_eq!(r["total"]["cost"], Value::Null);
    assert_eq!(r["total"]["cost_missing"], 1);
    assert_eq!(r["summarization"]["cost"], 0);
}

#[test]
fn fork_with_its_original_counts_replayed_calls_once() {
    let o = cmd("pi-usage")
        .args([&f("usage-fork-original.jsonl"), &f("usage-fork.jsonl")])
        .ok();
    let r = o.records();
    assert_eq!(r[0]["session"], "s-orig");
    assert_eq!(r[0]["total"]["count"], 2);
    assert_eq!(r[0]["total"]["cost"], 0.3);
    assert_eq!(r[0]["duplicates"], 0);
    assert_eq!(r[1]["session"], "s-fork");
    assert_eq!(r[1]["lineage"], "resolved");
    assert_eq!(
        r[1]["parent_session"],
        "/home/u/.pi/agent/sessions/--home-u-proj--/usage-fork-original.jsonl"
    );
    assert_eq!(r[1]["total"]["count"], 1);
    assert_eq!(r[1]["total"]["cost"], 0.4);
    assert_eq!(r[1]["duplicates"], 2);
    assert_eq!(r[1]["forks"], 1);
    assert_eq!(r[1]["forks_unresolved"], 0);
    // Whatever the order, the total is the same; the first occurrence is the one counted.
    for order in [
        [f("usage-fork-original.jsonl"), f("usage-fork.jsonl")],
        [f("usage-fork.jsonl"), f("usage-fork-original.jsonl")],
    ] {
        let t = &usage(&["--total", &order[0], &order[1]]).records()[0];
        assert_eq!(nums(&t["total"]), json!([3, 700, 70, 0, 0, 770, 0.7, 0]));
        assert_eq!(t["duplicates"], 2);
    }
    let rev = usage(&[&f("usage-fork.jsonl"), &f("usage-fork-original.jsonl")]).records();
    assert_eq!(rev[0]["total"]["count"], 3);
    assert_eq!(rev[1]["total"]["count"], 0);
    assert_eq!(rev[1]["duplicates"], 2);
}

#[test]
fn fork_without_its_original_removes_nothing_and_says_so() {
    let r = &cmd("pi-usage")
        .arg(fixture("usage-fork.jsonl"))
        .ok()
        .records()[0];
    assert_eq!(r["lineage"], "unresolved");
    assert_eq!(r["total"]["count"], 3);
    assert_eq!(r["total"]["cost"], 0.7);
    assert_eq!(r["duplicates"], 0);
    assert_eq!(r["forks_unresolved"], 1);
    let t = &usage(&["--total", &f("usage-fork.jsonl"), &f("usage-basic.jsonl")]).records()[0];
    assert_eq!(t["forks"], 1);
    assert_eq!(t["forks_unresolved"], 1);
    assert_eq!(t["lineage"], Value::Null);
}

#[test]
fn no_dedup_counts_every_line() {
    let t = &usage(&[
        "--total",
        "--no-dedup",
        &f("usage-fork-original.jsonl"),
        &f("usage-fork.jsonl"),
    ])
    .records()[0];
    assert_eq!(t["total"]["count"], 5);
    assert_eq!(t["total"]["cost"], 1.0);
    assert_eq!(t["duplicates"], 0);
}

#[test]
fn response_id_or_id_timestamp_usage_identify_a_call() {
    let r = &cmd("pi-usage")
        .arg(fixture("usage-response-id.jsonl"))
        .ok()
        .records()[0];
    // x2 repeats x1's responseId at another time: providers reuse response ids, so a
    // responseId alone would merge two billed calls (issue 19, item 1); they differ in time,
    // so both count. The last line repeats `dup` exactly; the other `dup` has the same id and
    // timestamp but different usage: a different call.
    assert_eq!(r["total"]["count"], 4);
    assert_eq!(r["total"]["cost"], 0.8);
    assert_eq!(r["duplicates"], 1);
}

/// Issue 19, item 1: providers reuse response ids (Ollama's `chatcmpl-<n>`), so a call's
/// identity is its responseId with its time and usage text: 31 distinct calls share 7 ids
/// (one has the time of another but other usage) and all count; the 5 copies with the same
/// message time and usage (a sub-agent's copies, under other entry ids and times) are repeats.
#[test]
fn item_1_reused_response_ids_never_merge_distinct_calls() {
    let t = &usage(&["--total", &f("usage-reused-response-ids.jsonl")]).records()[0];
    assert_eq!(t["total"]["count"], 31);
    assert_eq!(t["total"]["input"], 429);
    assert_eq!(t["total"]["cost"], 0.31);
    assert_eq!(t["duplicates"], 5);
}

#[test]
fn a_message_repeated_on_a_glued_line_is_not_counted_again() {
    let o = usage(&[&f("usage-glued-repeat.jsonl")]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains(":3: two records glued on one line"),
        "{}",
        o.stderr
    );
    let r = &o.records()[0];
    // g1 (its own line) and g3 count; the glued line (g1 again and g2) is skipped as Pi skips it.
    assert_eq!(r["total"]["count"], 2);
    assert_eq!(r["total"]["cost"], 0.5);
    assert_eq!(r["duplicates"], 0);
}

#[test]
fn sessions_without_calls_still_get_a_record() {
    let r = cmd("pi-usage")
        .arg(fixture("header-only.jsonl"))
        .ok()
        .records();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["total"]["count"], 0);
    assert_eq!(r[0]["total"]["cost"], 0);
    assert_eq!(r[0]["first"], Value::Null);
    assert_eq!(r[0]["sessions"], 1);
}

#[test]
fn by_model_groups_provider_and_model() {
    let r = usage(&[
        "--by",
        "model",
        &f("usage-basic.jsonl"),
        &f("usage-fork.jsonl"),
    ])
    .records();
    let got: Vec<_> = r
        .iter()
        .map(|r| {
            json!([
                r["provider"],
                r["model"],
                r["total"]["count"],
                r["sessions"]
            ])
        })
        .collect();
    assert_eq!(
        got,
        vec![
            json!(["anthropic", "claude-sonnet-4-5", 6, 2]),
            json!(["openai", "gpt-5", 1, 1]),
            json!([null, null, 1, 1]),
        ]
    );
    assert!(r
        .iter()
        .all(|r| r["session"].is_null() && r["day"].is_null()));
}

#[test]
fn by_provider_and_project_and_combinations() {
    let files = [
        f("usage-basic.jsonl"),
        f("usage-v1.jsonl"),
        f("usage-fork-original.jsonl"),
    ];
    let a: Vec<&str> = files.iter().map(String::as_str).collect();
    let p: Vec<_> = usage(&[&["--by", "project"], &a[..]].concat())
        .records()
        .iter()
        .map(|r| json!([r["project"], r["sessions"], r["total"]["count"]]))
        .collect();
    assert_eq!(
        p,
        vec![json!(["/home/u/old", 1, 2]), json!(["/home/u/proj", 2, 7])]
    );
    let p: Vec<_> = usage(&[&["--by", "provider"], &a[..]].concat())
        .records()
        .iter()
        .map(|r| json!([r["provider"], r["model"], r["total"]["count"]]))
        .collect();
    assert_eq!(
        p,
        vec![
            json!(["anthropic", null, 7]),
            json!(["openai", null, 1]),
            json!([null, null, 1])
        ]
    );
    // Dimensions combine, sorted in the order given.
    let p: Vec<_> = usage(
        &[
            &["--by", "month", "--by", "provider", "--tz", "UTC"],
            &a[..],
        ]
        .concat(),
    )
    .records()
    .iter()
    .map(|r| json!([r["month"], r["provider"], r["total"]["count"]]))
    .collect();
    assert_eq!(
        p,
        vec![
            json!(["2025-01", "anthropic", 2]),
            json!(["2026-05", "anthropic", 5]),
            json!(["2026-05", "openai", 1]),
            json!(["2026-05", null, 1]),
        ]
    );
    // --by session combined with model: per session and model, sessions first.
    let p: Vec<_> = usage(&[&["--by", "model,session"], &a[..1]].concat())
        .records()
        .iter()
        .map(|r| json!([r["session"], r["provider"], r["total"]["count"]]))
        .collect();
    assert_eq!(
        p,
        vec![
            json!(["s-basic", "anthropic", 3]),
            json!(["s-basic", "openai", 1]),
            json!(["s-basic", null, 1]),
        ]
    );
}

#[test]
fn by_groups_then_a_grand_total() {
    let r = usage(&["--by", "provider", "--total", &f("usage-basic.jsonl")]).records();
    assert_eq!(r.len(), 4);
    let last = &r[3];
    assert!(last["provider"].is_null() && last["session"].is_null());
    assert_eq!(last["total"]["count"], 5);
    assert_eq!(last["total"]["cost"], 0.6000001);
}

#[test]
fn several_sessions_on_stdin() {
    let mut input = read_fixture("usage-basic.jsonl");
    input.extend(read_fixture("usage-v1.jsonl"));
    let r = cmd("pi-usage").stdin(input).ok().records();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["file"], "<stdin>");
    assert_eq!(r[1]["session"], "s-v1-usage");
}

/// Parses the decimal text of a cost exactly, as a check independent of floats.
fn exact(v: &Value) -> Cost {
    parse_cost(v.to_string().as_bytes()).unwrap()
}

#[test]
fn results_do_not_depend_on_threads_or_splitting() {
    let files: Vec<String> = [
        "usage-basic.jsonl",
        "usage-v1.jsonl",
        "usage-timestamps.jsonl",
        "usage-bad-fields.jsonl",
        "usage-fork-original.jsonl",
        "usage-response-id.jsonl",
        "usage-context.jsonl",
        "branched.jsonl",
    ]
    .iter()
    .map(|n| f(n))
    .collect();
    let run = |extra: &[&str]| {
        let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        a.extend(files.iter().cloned());
        cmd("pi-usage").args(&a).run().stdout
    };
    let one = run(&[
        "--threads",
        "1",
        "--by",
        "day,model",
        "--total",
        "--tz",
        "UTC",
    ]);
    let many = run(&[
        "--threads",
        "4",
        "--by",
        "day,model",
        "--total",
        "--tz",
        "UTC",
    ]);
    assert_eq!(one, many);
    // No call repeats across these files: the total over all equals the sum of the totals of
    // each file, exactly.
    let all = &cmd("pi-usage")
        .args(["--total"])
        .args(&files)
        .run()
        .records()[0];
    let mut sum = Amount::default();
    let mut count = 0;
    for file in &files {
        let t = &usage(&["--total", file]).records()[0];
        sum.add(&exact(&t["total"]["cost"]));
        count += t["total"]["count"].as_u64().unwrap();
    }
    assert_eq!(all["total"]["cost"].to_string(), format_decimal(&sum));
    assert_eq!(all["total"]["count"].as_u64().unwrap(), count);
}

#[test]
fn table_for_people() {
    let o = usage(&["--table", &f("usage-basic.jsonl"), &f("usage-fork.jsonl")]);
    let t = o.out();
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("Session"), "{t}");
    assert!(lines[0].contains("Total tokens") && lines[0].contains("Cost"));
    let basic = lines.iter().find(|l| l.starts_with("s-basic")).unwrap();
    assert!(
        basic.contains("3,015") && basic.contains("$0.6000"),
        "{basic}"
    );
    let total = lines.iter().find(|l| l.starts_with("Total")).unwrap();
    // 3015 + 770 tokens, 0.6000001 + 0.7 dollars.
    assert!(
        total.contains("3,785") && total.contains("$1.3000"),
        "{total}"
    );
    assert!(
        t.contains("forked session(s) whose original is not in the input"),
        "{t}"
    );
    // Columns line up: every row is as wide as the header's rule.
    let rule = lines[1].len();
    assert!(lines[1].chars().all(|c| c == '-' || c == ' '));
    assert!(lines[2].len() <= rule + 1);
    let missing = usage(&["--table", "--by", "provider", &f("usage-bad-fields.jsonl")]).out();
    assert!(missing.contains("$0.0100*"), "{missing}");
    assert!(
        missing.contains("cost not recorded for 5 call(s)"),
        "{missing}"
    );
}

#[test]
fn table_and_json_conflict() {
    let o = usage(&["--table", "--json", &f("usage-basic.jsonl")]);
    assert_eq!(o.status, 2);
}

fn context_rows(o: &Output) -> Vec<Value> {
    o.records()
        .iter()
        .map(|r| {
            json!([
                r["entry"],
                r["recorded_context_tokens"],
                r["configured_context_window"],
                r["configured_window_source"],
                r["previous_context_tokens"],
                r["inferred_context_drop"],
                r["after_compaction"]
            ])
        })
        .collect()
}

#[test]
fn context_series_with_configured_windows_and_inferred_drops() {
    let o = usage(&[
        "--context",
        "--models",
        &f("models/models.json"),
        &f("usage-context.jsonl"),
    ]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(!o.out().contains("SECRET"));
    assert_eq!(
        context_rows(&o),
        vec![
            json!(["a1", 10000, 200000, "model_overrides", null, null, false]),
            json!(["a2", 50000, 200000, "model_overrides", 10000, null, false]),
            // a3 is on another branch from a1: its previous message is a1, not a2.
            json!(["a3", 12000, 200000, "model_overrides", 10000, null, false]),
            json!(["a4", 3000, 200000, "model_overrides", 12000, 9000, true]),
            // Zero usage (aborted): neither shows nor hides a drop.
            json!(["a5", 0, 200000, "model_overrides", null, null, false]),
            // modelOverrides win over models[] for qwen.
            json!(["a6", 2000, 65536, "model_overrides", 3000, 1000, false]),
            json!(["a7", 2500, 128000, "models_default", 2000, null, false]),
            // No provider: no configured window.
            json!(["a8", 2600, null, null, 2500, null, false]),
        ]
    );
    let r = &o.records()[0];
    assert_eq!(r["type"], "context");
    assert_eq!(r["session"], "s-ctx");
    assert_eq!(r["line"], 3);
    assert_eq!(r["fill_ratio"], 0.05);
    assert_eq!(r["recorded_input"], 1000);
    assert_eq!(r["recorded_output"], 10);
    assert_eq!(r["recorded_cache_read"], 9000);
    assert_eq!(r["recorded_cache_write"], 0);
    assert_eq!(r["stop_reason"], "stop");
}

#[test]
fn context_finds_models_json_in_the_agent_dir() {
    let o = cmd("pi-usage")
        .env("PI_CODING_AGENT_DIR", fixture("models"))
        .args(["--context", &f("usage-context.jsonl")])
        .ok();
    assert_eq!(o.records()[0]["configured_context_window"], 200000);
    assert_eq!(
        o.records()[0]["configured_window_source"],
        "model_overrides"
    );
    // Without models.json (HOME has none): no complaint, and only the windows of Pi's
    // built-in catalogue (claude-sonnet-4-5 is one of its models; ollama's are not).
    let o = cmd("pi-usage")
        .args(["--context", &f("usage-context.jsonl")])
        .ok();
    let sources: Vec<Value> = o
        .records()
        .iter()
        .map(|r| {
            json!([
                r["configured_context_window"],
                r["configured_window_source"]
            ])
        })
        .collect();
    let builtin = json!([200000, "builtin"]);
    let none = json!([null, null]);
    assert_eq!(
        sources,
        [&builtin, &builtin, &builtin, &builtin, &builtin, &none, &none, &none].map(Clone::clone)
    );
}

#[test]
fn context_with_a_missing_or_broken_models_file() {
    let o = usage(&[
        "--context",
        "--models",
        "/nonexistent/models.json",
        &f("usage-context.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("models.json"), "{}", o.stderr);
    assert_eq!(o.records().len(), 8);
    let dir = TempDir::new("models");
    let p = dir.write("models.json", r#"{"providers":{"x":{"apiKey":"sk-LEAKED","#);
    let o = usage(&[
        "--context",
        "--models",
        p.to_str().unwrap(),
        &f("usage-context.jsonl"),
    ]);
    assert_eq!(o.status, 2);
    assert!(!o.stderr.contains("LEAKED"), "{}", o.stderr);
}

// ------------------------------------------------------------------------------------------
// The corpus.

/// Sums over assistant `usage` computed straightforwardly, as a jq sum over each line would,
/// with Pi's reading rules: lines that do not parse are skipped, and a file whose first
/// record is not a session header is no session.
#[derive(Default, Debug, PartialEq)]
struct Independent {
    count: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    total_tokens: u64,
    cost: f64,
}

fn independent_sum(files: &[std::path::PathBuf]) -> Independent {
    let mut s = Independent::default();
    for p in files {
        let text = std::fs::read(p).unwrap();
        let text = String::from_utf8_lossy(&text);
        let (mut in_session, mut headed) = (false, false);
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v["type"] == "session" {
                in_session = v["id"].is_string();
                headed = true;
                continue;
            }
            // Issue 14: Pi entries with no header before them are a fragment.
            in_session |= !headed && is_pi_entry(&v);
            let m = &v["message"];
            if !in_session || v["type"] != "message" || m["role"] != "assistant" {
                continue;
            }
            let u = &m["usage"];
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            s.count += 1;
            s.input += n("input");
            s.output += n("output");
            s.cache_read += n("cacheRead");
            s.cache_write += n("cacheWrite");
            s.total_tokens += u["totalTokens"]
                .as_u64()
                .unwrap_or(n("input") + n("output") + n("cacheRead") + n("cacheWrite"));
            s.cost += u["cost"]["total"].as_f64().unwrap_or(0.0);
        }
    }
    s
}

fn ours(t: &Value) -> Independent {
    let n = |k: &str| t[k].as_u64().unwrap();
    Independent {
        count: n("count"),
        input: n("input"),
        output: n("output"),
        cache_read: n("cache_read"),
        cache_write: n("cache_write"),
        total_tokens: n("total_tokens"),
        cost: t["cost"].as_f64().unwrap(),
    }
}

#[test]
fn corpus_totals_equal_an_independent_sum() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    let o = cmd("pi-usage")
        .args(["--total", "--no-dedup"])
        .args(&files)
        .run();
    assert!(o.status == 0 || o.status == 2);
    let r = &o.records()[0];
    let mut got = ours(&r["total"]);
    let mut want = independent_sum(&files);
    assert!(
        (got.cost - want.cost).abs() < 1e-9,
        "cost {} vs {}",
        got.cost,
        want.cost
    );
    got.cost = 0.0;
    want.cost = 0.0;
    assert_eq!(got, want);
    assert_eq!(r["summarization"]["count"], 0);
    // With repeats removed, every left-out call is accounted for.
    let d = &cmd("pi-usage").arg("--total").args(&files).run().records()[0];
    assert_eq!(
        d["total"]["count"].as_u64().unwrap() + d["duplicates"].as_u64().unwrap(),
        r["total"]["count"].as_u64().unwrap()
    );
}

#[test]
fn corpus_every_file_reads_without_a_crash() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    for p in &files {
        for args in [
            vec!["--json"],
            vec!["--by", "day,model", "--tz", "UTC", "--total"],
            vec!["--table"],
            vec!["--context"],
        ] {
            let o = cmd("pi-usage").args(&args).arg(p).run();
            assert!(
                o.status == 0 || o.status == 2,
                "{} {args:?}: status {}",
                p.display(),
                o.status
            );
        }
    }
    // Per-session records over the whole corpus, in parallel, match a sequential run.
    let a = cmd("pi-usage").args(["--threads", "1"]).args(&files).run();
    let b = cmd("pi-usage").args(["--threads", "3"]).args(&files).run();
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn branch_then_usage_counts_the_kept_conversation() {
    // The active branch of usage-basic ends at c2 → b1 → a1 → u1: a2, a3 and the compaction
    // c1 are on the abandoned branch.
    let kept = cmd("pi-branch").arg(fixture("usage-basic.jsonl")).ok();
    let r = &cmd("pi-usage").stdin(kept.stdout).ok().records()[0];
    assert_eq!(r["messages"]["count"], 1);
    assert_eq!(r["messages"]["cost"], 0.1);
    assert_eq!(r["summarization"]["count"], 1);
    assert_eq!(r["summarization"]["cost"], 0.0000001);
    // Everything billed, abandoned branches included.
    let all = &cmd("pi-usage")
        .arg(fixture("usage-basic.jsonl"))
        .ok()
        .records()[0];
    assert_eq!(all["total"]["count"], 5);
}

#[test]
fn table_is_the_default_on_a_terminal() {
    // util-linux `script` gives the command a pseudo-terminal as stdout.
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("no `script` to make a terminal; skipped");
        return;
    }
    let bin = bin_dir().join("pi-usage");
    let line = format!("{} {}", bin.display(), f("usage-basic.jsonl"));
    let tty = |extra: &str| {
        let o = std::process::Command::new("script")
            .args(["-qec", &format!("{line} {extra}"), "/dev/null"])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let t = tty("");
    assert!(t.contains("Total tokens") && t.contains("$0.6000"), "{t}");
    let j = tty("--json");
    assert!(j.trim_start().starts_with("{\"type\":\"usage\""), "{j}");
}

#[test]
fn fork_after_its_original_on_stdin_is_resolved_by_session_id() {
    // On stdin there are no file names: the original is recognised by the session id in the
    // name of the file the fork names, Pi's `<time>_<id>.jsonl`.
    let fork = String::from_utf8(read_fixture("usage-fork.jsonl"))
        .unwrap()
        .replace(
            "/usage-fork-original.jsonl",
            "/2026-05-01T10-00-00-000Z_s-orig.jsonl",
        );
    let mut input = read_fixture("usage-fork-original.jsonl");
    input.extend(fork.as_bytes());
    let r = cmd("pi-usage").stdin(input).ok().records();
    assert_eq!(r[1]["session"], "s-fork");
    assert_eq!(r[1]["lineage"], "resolved");
    assert_eq!(r[1]["duplicates"], 2);
    assert_eq!(r[1]["total"]["count"], 1);
    // Alone, the same fork is unresolved.
    let r = cmd("pi-usage").stdin(fork.as_bytes()).ok().records();
    assert_eq!(r[0]["lineage"], "unresolved");
}

/// One input is streamed into the report as it is read; of several, the small ones are read
/// whole in parallel and handed over in order, and a large one (16 MiB or more) waits for its
/// turn and streams. All give the same records: sessions back to back in one file against
/// the same sessions one per file (the `file` label aside), with a generated 17 MB session
/// among them twice (the second copy all duplicates) and small files on both sides of it.
#[test]
fn a_streamed_input_and_several_read_whole_agree() {
    let t = TempDir::new("usage-stream");
    let mut big = Vec::new();
    pi_jsonl_gen::Gen::new(5)
        .session(&pi_jsonl_gen::Shape::v3(17 << 20), &mut big)
        .unwrap();
    assert!(big.len() >= 16 << 20, "{} bytes", big.len());
    let big = t.write("big.jsonl", big);
    let names = [
        "usage-basic.jsonl",
        "usage-response-id.jsonl",
        "big",
        "usage-timestamps.jsonl",
        "usage-v1.jsonl",
        "usage-bad-fields.jsonl",
        "big",
        "two-sessions.jsonl",
        "usage-basic.jsonl",
    ];
    let files: Vec<_> = names
        .iter()
        .map(|&n| if n == "big" { big.clone() } else { fixture(n) })
        .collect();
    let all: Vec<u8> = files
        .iter()
        .flat_map(|f| std::fs::read(f).unwrap())
        .collect();
    let one = t.write("all.jsonl", all);
    let without_file = |o: Output| -> Vec<Value> {
        let mut r = o.records();
        for v in &mut r {
            v.as_object_mut().unwrap().remove("file");
        }
        r
    };
    for flags in [
        &[][..],
        &["--total"],
        &["--no-dedup", "--total"],
        &["--by", "model,day", "--total"],
        &["--by", "session,model"],
        &["--by", "project,month"],
    ] {
        let streamed = without_file(cmd("pi-usage").args(flags).arg(&one).run());
        for threads in ["1", "2"] {
            let parts = cmd("pi-usage")
                .args(flags)
                .args(["--threads", threads])
                .args(&files);
            let parts = without_file(parts.run());
            assert!(!streamed.is_empty(), "{flags:?}");
            assert_eq!(streamed, parts, "{flags:?} --threads {threads}");
        }
    }
}

/// Issue 19, item 2: token and cost sums are exact past u64::MAX and i128::MAX (they
/// saturated there with exit 0).
#[test]
fn item_2_token_sums_never_saturate() {
    let o = usage(&["--total", &f("usage-huge-sums.jsonl")]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    // 3 × u64::MAX, 6 × u64::MAX, 3 × 10^20 dollars.
    for want in [
        "\"input\":55340232221128654845,",
        "\"total_tokens\":110680464442257309690,",
        "\"cost\":300000000000000000000,",
        "\"reasoning\":55340232221128654845,",
    ] {
        assert!(o.out().contains(want), "{want} in {}", o.out());
    }
    let t = usage(&["--table", &f("usage-huge-sums.jsonl")]).out();
    assert!(t.contains("110,680,464,442,257,309,690"), "{t}");
    assert!(t.contains("$300,000,000,000,000,000,000.0000"), "{t}");
}

/// Issue 19, item 11: `1e30` and `18446744073709551616` are whole numbers: too large to
/// count (said so), not "not a whole number"; `1e3` and `2.50e1` are 1000 and 25.
#[test]
fn item_11_large_whole_token_values_are_called_too_large() {
    let file = f("usage-whole-numbers.jsonl");
    let o = usage(&["--total", &file]);
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        [
            format!("pi-usage: {file}:2: usage.input is too large to count (over 18446744073709551615: 1e30); not counted"),
            format!("pi-usage: {file}:2: usage.output is too large to count (over 18446744073709551615: 18446744073709551616); not counted"),
            format!("pi-usage: {file}:2: usage.totalTokens is not a whole number (1.5); not counted"),
        ]
    );
    let m = &o.records()[0]["messages"];
    assert_eq!(m["cache_read"], 1000);
    assert_eq!(m["cache_write"], 25);
}

/// Issue 19, item 11: ten costs of 1e-19 sum to 1e-18 (they summed to 0), and a float's long
/// tail is kept: the sum is exact at whatever places the recorded costs need.
#[test]
fn item_11_tiny_costs_add_up_exactly() {
    let mut input = String::from(
        r#"{"type":"session","version":3,"id":"s-tiny","timestamp":"2026-05-01T09:59:00.000Z","cwd":"/p"}"#,
    );
    input.push('\n');
    let mut parent = "null".to_string();
    for (i, cost) in ["1e-19"; 10]
        .iter()
        .chain(&["0.0010530000000000001"])
        .enumerate()
    {
        input.push_str(&format!(
            r#"{{"type":"message","id":"a{i}","parentId":{parent},"timestamp":"2026-05-01T10:00:{i:02}.000Z","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":{i}}}}}"#
        ));
        input.push('\n');
        parent = format!("\"a{i}\"");
    }
    let out = cmd("pi-usage").args(["--total"]).stdin(input).ok().out();
    assert!(out.contains(r#""cost":0.0010530000000000011,"#), "{out}");
}
