//! Issue 14, part 2: oh-my-pi (`omp`) sessions. Its title slot before the header is the
//! session's title (pi-branch writes it first), every tool reads its files, pi-sessions finds
//! its stores (`--store pi|omp|all`) and says which files are sub-agent runs and advisors,
//! and no file is read twice when the stores share files.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

#[test]
fn the_title_slot_is_256_bytes_and_pi_branch_writes_it_first() {
    let data = read_fixture("omp-session.jsonl");
    let all = lines(&data);
    assert_eq!(all[0].len(), 256);
    assert!(all[0].starts_with(br#"{"type":"title","v":1,"title":"Fix the parser""#));
    // The session is one linear branch: pi-branch writes it whole, title slot first.
    let o = cmd("pi-branch").arg(fixture("omp-session.jsonl")).ok();
    assert_eq!(o.stdout, data);
    let info = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("omp-session.jsonl"))
        .ok()
        .records();
    // The title slot is not an entry.
    assert_eq!(info[0]["entries"], lines(&data).len() - 2);
    assert_eq!(info[0]["omitted"], 0);
}

/// Sessions back to back on stdin: each file's title slot goes with the header after it.
#[test]
fn concatenated_omp_files_keep_each_title_with_its_session() {
    let names = [
        "omp-session.jsonl",
        "omp-untitled.jsonl",
        "omp-titled-named.jsonl",
    ];
    let mut both = Vec::new();
    let mut want = Vec::new();
    for n in names {
        both.extend(read_fixture(n));
        want.extend(cmd("pi-branch").arg(fixture(n)).ok().stdout);
    }
    let o = cmd("pi-branch").stdin(both).ok();
    assert_eq!(o.stdout, want);
    assert_eq!(lines(&o.stdout)[0].len(), 256);
}

#[test]
fn every_tool_reads_omp_files_without_a_problem() {
    for f in [
        "omp-session.jsonl",
        "omp-untitled.jsonl",
        "omp-titled-named.jsonl",
    ] {
        let runs: [(&str, &[&str]); 6] = [
            ("pi-branch", &[]),
            ("pi-branch", &["--tree"]),
            ("pi-tools", &[]),
            ("pi-usage", &[]),
            ("pi-compactions", &[]),
            ("pi-sessions", &["--json"]),
        ];
        for (tool, args) in runs {
            let o = cmd(tool).args(args).arg(fixture(f)).ok();
            let writes = !matches!(tool, "pi-tools" | "pi-compactions");
            assert!(!o.stdout.is_empty() || !writes, "{tool} {args:?} {f}");
        }
    }
    let calls = cmd("pi-tools")
        .arg(fixture("omp-session.jsonl"))
        .ok()
        .records();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (&calls[0]["name"], &calls[0]["status"]),
        (&"read".into(), &"ok".into())
    );
    let reports = cmd("pi-compactions")
        .arg(fixture("omp-session.jsonl"))
        .ok()
        .records();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["tokens_before"], 1320);
    // oh-my-pi's own record of the compaction: its estimate after, and how it was done.
    assert_eq!(reports[0]["tokens_after"], 310);
    assert_eq!(reports[0]["method"], "soft");
    assert_eq!(reports[0]["provider"], "anthropic");
}

/// pi-sessions' `name`: the latest session_info wins; else the title slot's title; an empty
/// slot is no title.
#[test]
fn the_title_is_the_sessions_name_unless_session_info_names_it() {
    for (f, name) in [
        ("omp-session.jsonl", "Fix the parser"),
        ("omp-untitled.jsonl", "named by session_info"),
        ("omp-titled-named.jsonl", "session_info wins"),
    ] {
        let r = &cmd("pi-sessions")
            .arg("--json")
            .arg(fixture(f))
            .ok()
            .records()[0];
        assert_eq!(r["name"], name, "{f}");
        assert_eq!(r["status"], "ok", "{f}");
        assert_eq!(r["headers"], 1, "{f}");
    }
}

/// A title slot before entries with no header: a fragment, its title slot written first.
#[test]
fn a_title_slot_before_a_headerless_fragment_goes_with_it() {
    let data = read_fixture("omp-session.jsonl");
    let all = lines(&data);
    let mut input = all[0].to_vec();
    input.extend(all[2..].concat());
    let o = cmd("pi-branch").stdin(input.clone()).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(o.stdout, input);
    assert_eq!(o.stderr_lines().len(), 1);
}

fn store() -> PathBuf {
    fixture("omp-store")
}

/// (path below HOME, role) of each file pi-sessions lists with HOME=`home`.
fn listed(home: &Path, args: &[&str]) -> Vec<(String, String)> {
    let o = cmd("pi-sessions")
        .args(["--json"])
        .args(args)
        .env("HOME", home)
        .ok();
    o.records()
        .iter()
        .map(|r| {
            let p = PathBuf::from(r["path"].as_str().unwrap());
            let rel = p.strip_prefix(home).unwrap().to_string_lossy().into_owned();
            (rel, r["role"].as_str().unwrap().to_string())
        })
        .collect()
}

const MAIN: &str = "2026-10-01T09-00-00-000Z_019f0091-2110-7000-a1e2-147639fff216";

#[test]
fn pi_sessions_finds_the_stores_and_classifies_sub_agents_and_advisors() {
    let omp = format!(".omp/agent/sessions/--nonexistent-omp-project--/{MAIN}");
    let s = |p: String, r: &str| (p, r.to_string());
    let omp_files = vec![
        s(format!("{omp}.jsonl"), "session"),
        s(format!("{omp}/Scout.jsonl"), "subagent"),
        s(format!("{omp}/__advisor.jsonl"), "advisor"),
        s(format!("{omp}/__advisor.security.jsonl"), "advisor"),
        s(".omp/profiles/work/agent/sessions/--nonexistent-work--/2026-10-02T09-00-00-000Z_019f0097-0000-7000-8000-000000000007.jsonl".into(), "session"),
    ];
    let pi_files = vec![s(
        ".pi/agent/sessions/--nonexistent-pi-project--/2026-10-03T09-00-00-000Z_pi-store-session.jsonl".into(),
        "session",
    )];
    let all: Vec<_> = omp_files.iter().chain(&pi_files).cloned().collect();
    assert_eq!(listed(&store(), &[]), all);
    assert_eq!(listed(&store(), &["--store", "all"]), all);
    assert_eq!(listed(&store(), &["--store", "omp"]), omp_files);
    assert_eq!(listed(&store(), &["--store", "pi"]), pi_files);
    // The sub-agent's record names its session's file.
    let o = cmd("pi-sessions")
        .args(["--json", "--store", "omp"])
        .env("HOME", store())
        .ok();
    let scout = &o.records()[1];
    assert!(scout["parent_file"]
        .as_str()
        .unwrap()
        .ends_with(&format!("{MAIN}.jsonl")));
    assert_eq!(scout["name"], "Scout the parser");
}

#[test]
fn a_store_asked_for_that_is_not_there_is_reported() {
    let o = cmd("pi-sessions").args(["--json", "--store", "omp"]).run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("no sessions directory"), "{}", o.stderr);
    assert!(
        o.stderr.contains(".omp/agent/sessions (omp)"),
        "{}",
        o.stderr
    );
}

/// Two stores that share their files (oh-my-pi's sessions directory a link to Pi's): every
/// file is described, and read by the other tools, once.
#[test]
fn no_session_is_counted_twice_when_the_stores_share_files() {
    let t = TempDir::new("omp-shared");
    let home = t.path().to_path_buf();
    t.write(
        ".pi/agent/sessions/--p--/2026-10-03T09-00-00-000Z_a.jsonl",
        read_fixture("omp-session.jsonl"),
    );
    std::fs::create_dir_all(home.join(".omp/agent")).unwrap();
    std::os::unix::fs::symlink(
        home.join(".pi/agent/sessions"),
        home.join(".omp/agent/sessions"),
    )
    .unwrap();
    assert_eq!(listed(&home, &["--store", "pi"]).len(), 1);
    assert_eq!(listed(&home, &["--store", "omp"]).len(), 1);
    assert_eq!(listed(&home, &[]).len(), 1);
    let o = cmd("pi-usage")
        .args(["--total"])
        .env("HOME", &home)
        .env("PI_JSONL_ASSUME_TTY", "1")
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(o.records()[0]["sessions"], 1);
    assert!(
        o.stderr.contains("reading 1 session file under"),
        "{}",
        o.stderr
    );
}

/// A tool given no FILE on a terminal reads oh-my-pi's stores too.
#[test]
fn tools_default_to_every_store() {
    let o = cmd("pi-usage")
        .args(["--total"])
        .env("HOME", store())
        .env("PI_JSONL_ASSUME_TTY", "1")
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r: &Value = &o.records()[0];
    assert_eq!(r["sessions"], 6);
    let h = store();
    assert_eq!(
        o.stderr.trim(),
        format!(
            "pi-usage: no FILE given and stdin is a terminal: reading 6 session files under {}, {}, {}",
            h.join(".pi/agent/sessions").display(),
            h.join(".omp/agent/sessions").display(),
            h.join(".omp/profiles/work/agent/sessions").display(),
        )
    );
}

/// A title slot that no header follows is read as the record it is: inside a session an
/// id-less entry kept in place (also as the last line, where it waits for the end of the
/// input); alone, unreadable.
#[test]
fn a_title_slot_without_a_header_after_it_is_an_ordinary_record() {
    let data = read_fixture("omp-session.jsonl");
    let all = lines(&data);
    let slot = all[0];
    let body: Vec<u8> = all[1..].concat();
    for at in [3, all.len() - 1] {
        let mut input = all[1..at].concat();
        input.extend_from_slice(slot);
        input.extend(all[at..].concat());
        let o = cmd("pi-branch").stdin(input.clone()).ok();
        assert_eq!(o.stdout, input, "slot before line {at}");
        let info = cmd("pi-branch").arg("--info").stdin(input).ok().records();
        assert_eq!(info[0]["entries"], all.len() - 1, "slot before line {at}");
    }
    // As the last line it is the last entry, an id-less one: Pi's rule then.
    let mut last = body.clone();
    last.extend_from_slice(slot);
    let o = cmd("pi-branch").stdin(last.clone()).run();
    assert_eq!(
        o.stderr_lines(),
        [format!("pi-branch: <stdin>:{}: the last entry has no id (Pi would show an empty conversation); the leaf is the last entry with a string id, line {}", all.len(), all.len() - 1)]
    );
    assert_eq!(o.stdout, last);
    let o = cmd("pi-branch").stdin(slot.to_vec()).run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        ["pi-branch: <stdin>:1: no session header before this line: 1 entry unreadable, skipped"]
    );
}

/// oh-my-pi's `model_usage` entries (a model call outside the transcript: a title, a summary
/// by a small model) are billed calls: pi-usage counts them with the usage entries, under the
/// `purpose` oh-my-pi gives them, and by their provider and model.
#[test]
fn model_usage_entries_are_usage_entries() {
    let r = &cmd("pi-usage")
        .arg(fixture("omp-session.jsonl"))
        .ok()
        .records()[0];
    let u = &r["usage_entries"];
    assert_eq!(
        (&u["count"], &u["input"], &u["output"]),
        (&1.into(), &50.into(), &8.into())
    );
    assert_eq!(u["cost"], 0.0001);
    let kinds = r["usage_kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 1);
    assert_eq!(
        (&kinds[0]["kind"], &kinds[0]["count"]),
        (&"title".into(), &1.into())
    );
    let haiku = r["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "claude-haiku-4-5")
        .expect("the model_usage entry's model");
    assert_eq!(haiku["tokens"], 58);
}

/// oh-my-pi's `task` tool records its sub-agents' usage in the result's `details.usage`, and
/// oh-my-pi adds it to the session's totals. pi-usage reports it apart, in `subagents`, and in
/// no total (the sub-agents' own files hold those calls): a task result's whose name is
/// written with an escape counts, a result of another tool or a `details.usage` that is no
/// object does not. `total` + `subagents` is what oh-my-pi 18.2.3 shows for the file
/// (`getUsageStatistics()`, recorded with scripts/omp/reference.ts): 12,200 input, 600
/// output, 19,100 cache reads, 1,100 cache writes, $0.0885.
#[test]
fn task_results_report_their_sub_agents_usage_apart() {
    let f = fixture("omp-task-usage.jsonl");
    let r = &cmd("pi-usage").arg("--json").arg(&f).ok().records()[0];
    let sums = |s: &Value| {
        [
            "count",
            "input",
            "output",
            "cache_read",
            "cache_write",
            "tokens",
        ]
        .map(|k| s[k].as_u64().unwrap())
    };
    assert_eq!(sums(&r["subagents"]), [2, 6500, 420, 15000, 800, 22720]);
    assert_eq!(r["subagents"]["cost"], 0.0638);
    assert_eq!(sums(&r["total"]), [4, 5700, 180, 4100, 300, 10280]);
    assert_eq!(r["total"]["cost"], 0.0247);
    assert_eq!(r["tool_results"]["count"], 0);
    let by_model: u64 = r["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["count"].as_u64().unwrap())
        .sum();
    assert_eq!(by_model, 4);
    let (t, s) = (sums(&r["total"]), sums(&r["subagents"]));
    assert_eq!(
        [t[1] + s[1], t[2] + s[2], t[3] + s[3], t[4] + s[4]],
        [12200, 600, 19100, 1100]
    );

    // The grand total carries them apart too; --calls writes the session's own calls only.
    let all = cmd("pi-usage")
        .args(["--json", "--total"])
        .arg(&f)
        .ok()
        .records();
    let g = all.last().unwrap();
    assert_eq!(g["grand_total"], true);
    assert_eq!(sums(&g["subagents"]), sums(&r["subagents"]));
    let calls = cmd("pi-usage").arg("--calls").arg(&f).ok().records();
    assert_eq!(calls.len(), 4);
    assert!(calls.iter().all(|c| c["source"] == "message"), "{calls:?}");

    // Given twice: the second copy's sub-agent usage is a repeat, left out, and `duplicates`
    // still counts the repeated calls --calls marks (its own calls alone).
    let twice = cmd("pi-usage")
        .args(["--json", "--total"])
        .arg(&f)
        .arg(&f)
        .ok()
        .records();
    let g = twice.last().unwrap();
    assert_eq!(sums(&g["subagents"]), sums(&r["subagents"]));
    assert_eq!(g["duplicates"], 4);
    let calls = cmd("pi-usage")
        .arg("--calls")
        .arg(&f)
        .arg(&f)
        .ok()
        .records();
    assert_eq!(calls.iter().filter(|c| c["repeat"] == true).count(), 4);

    // The table says so under it.
    let table = cmd("pi-usage")
        .arg("--table")
        .arg(&f)
        .env("COLUMNS", "200")
        .ok()
        .out();
    assert!(
        table.contains(
            "oh-my-pi task results report 22,720 more token(s) ($0.0638) for their sub-agents"
        ),
        "{table}"
    );
}

/// oh-my-pi's compaction fields (18.2.3 and 18.3.4's `appendCompaction`): `fromExtension`
/// is its `fromHook`, `providerReplayThroughEntryId` is reported with its line, 18.3's
/// `firstKeptEntryId: ""` is no entry, and no Pi rule decides the trigger of a compaction it
/// wrote (its threshold is lower than Pi's: Pi's rules would call it manual).
#[test]
fn omp_compactions_are_read_with_their_fields_and_not_by_pis_rules() {
    let f = fixture("omp-compaction-fields.jsonl");
    let all = cmd("pi-compactions")
        .arg("--branch-summaries")
        .arg(&f)
        .ok()
        .records();
    let reports: Vec<&Value> = all
        .iter()
        .filter(|r| r["type"] == "compaction_report")
        .collect();
    assert_eq!(reports.len(), 3);
    let rules = |r: &Value| -> Vec<String> {
        let ev = r["evidence"].as_array().unwrap();
        ev.iter()
            .map(|e| e["rule"].as_str().unwrap().to_string())
            .collect()
    };
    for r in &reports {
        assert_eq!(
            (&r["trigger"], &r["basis"]),
            (&"unknown".into(), &"unknown".into())
        );
        assert_eq!(rules(r)[0], "oh_my_pi", "{r}");
    }
    // An extension's compaction: fromExtension read as fromHook, and named as it is.
    assert_eq!(reports[0]["from_hook"], true);
    assert_eq!(rules(reports[0]), ["oh_my_pi", "from_hook"]);
    let detail = |r: &Value, i: usize| r["evidence"][i]["detail"].as_str().unwrap().to_string();
    assert!(detail(reports[0], 0).contains("it records tokensAfter"));
    assert!(detail(reports[0], 1).contains("(fromExtension: true)"));
    assert!(reports[0]["replay_through"].is_null());
    // 18.3's native compaction: kept by the provider's history, not by an id.
    let native = reports[1];
    assert_eq!(native["from_hook"], false);
    assert_eq!(native["method"], "remote");
    assert_eq!(native["first_kept"]["entry"], "");
    assert_eq!(native["first_kept"]["found"], false);
    assert_eq!(native["retain_none"], false);
    assert_eq!(
        native["replay_through"],
        serde_json::json!({"entry": "f0000006", "line": 7, "found": true})
    );
    // A reference to no entry; the field alone marks oh-my-pi.
    let dangling = reports[2];
    assert_eq!(
        dangling["replay_through"],
        serde_json::json!({"entry": "f9999999", "line": null, "found": false})
    );
    assert!(dangling["from_hook"].is_null());
    assert!(detail(dangling, 0).contains("it records providerReplayThroughEntryId"));
    // Its under_threshold place would have made Pi's rules say manual.
    assert!(dangling["tokens_before"].as_u64().unwrap() < 183_616);
    let summary = all
        .iter()
        .find(|r| r["type"] == "branch_summary_report")
        .unwrap();
    assert_eq!(summary["from_hook"], true);
    // A fromExtension that is no boolean is reported, named as written.
    let bad = read_fixture("omp-compaction-fields.jsonl")
        .split(|&b| b == b'\n')
        .take(4)
        .chain([&br#"{"type":"compaction","id":"z1","parentId":"f0000003","timestamp":"2026-11-20T10:05:00.000Z","summary":"s","firstKeptEntryId":"f0000002","tokensBefore":1,"fromExtension":"yes"}"#[..]])
        .flat_map(|l| l.iter().copied().chain([b'\n']))
        .collect::<Vec<u8>>();
    let o = cmd("pi-compactions").stdin(bad).run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        ["pi-compactions: <stdin>:5: compaction fromExtension is a string, not a boolean; treated as unknown"]
    );
    assert!(o.records()[0]["from_hook"].is_null());
}
