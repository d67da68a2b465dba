//! Issue 14, part 1: input without a session header. Pi entries with no header before them are
//! a fragment (one note, exit 0, the result over the lines given); input none of whose records
//! is a Pi entry is still not a session; pi-sessions still calls such a file unreadable.

use crate::util::*;
use clap::Parser;
use pi_jsonl::cmd::{tools, usage};
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::tool::Tool;
use pi_jsonl_gen::{Gen, Shape};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// The note a tool gives for a fragment of `n` entries starting at `line` of `file`.
fn note(tool: &str, file: &str, line: u64, n: u64) -> String {
    format!("{tool}: {file}:{line}: note: no session header: the {n} entries from here read as a fragment of a session (session id unknown)")
}

fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

// The four commands of the issue, on corpus files: each gives its result over the lines it
// was given (the same as with the header put back), exit 0 and exactly one note.

/// A corpus file by the start of its name, or `None` (the test is skipped) without a corpus.
fn corpus_file(start: &str) -> Option<Vec<u8>> {
    let files = corpus_files_or_skip()?;
    let f = files
        .iter()
        .find(|f| f.file_name().unwrap().to_string_lossy().starts_with(start))
        .unwrap_or_else(|| panic!("corpus file {start}… not found"));
    Some(std::fs::read(f).unwrap())
}

/// `tool args` on `fragment`, checked to exit 0 with the one note; its stdout, and its stdout
/// on the same lines with `header` before them.
fn fragment_and_headed(
    tool: &str,
    args: &[&str],
    header: &[u8],
    fragment: &[u8],
) -> (Stdout, Stdout) {
    let o = cmd(tool).args(args).stdin(fragment.to_vec()).run();
    assert_eq!(o.status, 0, "{tool} {args:?}: {}", o.stderr);
    let n = lines(fragment).len() as u64;
    assert_eq!(o.stderr_lines(), [note(tool, "<stdin>", 1, n)], "{tool}");
    assert!(!o.stdout.is_empty(), "{tool} wrote nothing");
    let mut headed = header.to_vec();
    headed.extend_from_slice(fragment);
    let h = cmd(tool).args(args).stdin(headed).run();
    assert_eq!(h.status, 0, "{tool} {args:?} with the header: {}", h.stderr);
    (Stdout(o.out()), Stdout(h.out()))
}

struct Stdout(String);

impl Stdout {
    fn records(&self) -> Vec<Value> {
        self.0
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// `jq -c 'select(.timestamp >= "…")' s.jsonl | pi-usage --total`
#[test]
fn issue_14_jq_select_by_time_into_pi_usage_total() {
    let Some(data) =
        corpus_file("badlogic__pi-mono__packages__coding-agent__test__fixtures__before")
    else {
        return;
    };
    let all = lines(&data);
    let from = "2025-12-08T23:30:00";
    let picked: Vec<u8> = all[1..]
        .iter()
        .filter(|l| {
            let v: Value = serde_json::from_slice(l).unwrap();
            v["timestamp"].as_str().is_some_and(|t| t >= from)
        })
        .flat_map(|l| l.to_vec())
        .collect();
    assert!(lines(&picked).len() > 100);
    let (frag, headed) = fragment_and_headed("pi-usage", &["--total"], all[0], &picked);
    let (f, h) = (&frag.records()[0], &headed.records()[0]);
    assert!(f["total"]["count"].as_u64().unwrap() > 10);
    for k in ["messages", "summarization", "total", "by_model"] {
        assert_eq!(f[k], h[k], "{k}");
    }
}

/// `grep '"role":"assistant"' s.jsonl | pi-usage --by model`
#[test]
fn issue_14_grep_assistant_messages_into_pi_usage_by_model() {
    let Some(data) = corpus_file("badlogic__pi-mono__session.jsonl") else {
        return;
    };
    let all = lines(&data);
    let picked: Vec<u8> = all
        .iter()
        .filter(|l| {
            let pattern = br#""role":"assistant""#;
            l.windows(pattern.len()).any(|w| w == pattern)
        })
        // The file's one glued line (two records on one line) is reported wherever it is.
        .filter(|l| serde_json::from_slice::<Value>(l).is_ok())
        .flat_map(|l| l.to_vec())
        .collect();
    let (frag, headed) = fragment_and_headed("pi-usage", &["--by", "model"], all[0], &picked);
    let (f, h) = (frag.records(), headed.records());
    assert!(!f.is_empty());
    assert_eq!(f.len(), h.len());
    for (f, h) in f.iter().zip(&h) {
        assert_eq!((&f["model"], &f["total"]), (&h["model"], &h["total"]));
    }
}

/// `tail -n 500 s.jsonl | pi-tools --errors`
#[test]
fn issue_14_tail_into_pi_tools_errors() {
    let Some(data) =
        corpus_file("badlogic__pi-mono__packages__coding-agent__test__fixtures__large")
    else {
        return;
    };
    let all = lines(&data);
    let tail: Vec<u8> = all[all.len() - 500..]
        .iter()
        .flat_map(|l| l.to_vec())
        .collect();
    let (frag, headed) = fragment_and_headed("pi-tools", &["--errors"], all[0], &tail);
    let key = |r: &Value| (r["call_id"].clone(), r["status"].clone(), r["name"].clone());
    let f: Vec<_> = frag.records().iter().map(key).collect();
    let h: Vec<_> = headed.records().iter().map(key).collect();
    assert!(!f.is_empty());
    assert_eq!(f, h);
}

/// `sed -n '1000,$p' s.jsonl | pi-compactions` (the issue's 1200 is past this file's last compaction)
#[test]
fn issue_14_sed_from_a_line_into_pi_compactions() {
    let Some(data) = corpus_file("marcpadz__dexter-v3__pi-session") else {
        return;
    };
    let all = lines(&data);
    let rest: Vec<u8> = all[999..].iter().flat_map(|l| l.to_vec()).collect();
    let (frag, headed) = fragment_and_headed("pi-compactions", &[], all[0], &rest);
    let key = |r: &Value| {
        (
            r["type"].clone(),
            r["entry"].clone(),
            r["tokens_before"].clone(),
            r["trigger"].clone(),
        )
    };
    let f: Vec<_> = frag.records().iter().map(key).collect();
    let h: Vec<_> = headed.records().iter().map(key).collect();
    assert!(!f.is_empty());
    assert_eq!(f, h);
}

// Fixtures.

/// fragment-tools.jsonl: the tail of a session cut between a call and its result, and after
/// a call whose result was never written.
#[test]
fn a_fragment_gives_every_tools_result_with_one_note() {
    let f = fixture_str("fragment-tools.jsonl");
    for (tool, args) in [
        ("pi-tools", &[][..]),
        ("pi-usage", &[][..]),
        ("pi-compactions", &[][..]),
        ("pi-branch", &["--info"][..]),
    ] {
        let o = cmd(tool).args(args).arg(&f).run();
        assert_eq!(o.status, 0, "{tool}: {}", o.stderr);
        let notes: Vec<&str> = o
            .stderr_lines()
            .into_iter()
            .filter(|l| l.contains("no session header"))
            .collect();
        assert_eq!(notes, [note(tool, &f, 1, 6)], "{tool}");
    }
    let recs = cmd("pi-tools").arg(&f).run().records();
    let got: Vec<(String, String, Value)> = recs
        .iter()
        .map(|r| {
            (
                r["type"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["call_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("tool_result".into(), "orphan".into(), "call_before".into()),
            ("tool_call".into(), "ok".into(), "call_in".into()),
            (
                "tool_call".into(),
                "no_result".into(),
                "call_unanswered".into()
            ),
        ]
    );
    assert!(recs.iter().all(|r| r["session"].is_null()));
    let usage = cmd("pi-usage").arg(&f).run().records();
    assert_eq!(usage[0]["session"], Value::Null);
    assert_eq!(usage[0]["messages"]["count"], 2);
    assert_eq!(usage[0]["messages"]["input"], 300);
    assert_eq!(usage[0]["messages"]["output"], 30);
}

/// pi-branch keeps the chain from the last entry back to the oldest ancestor in the fragment,
/// writes no header, and says where the chain leaves the fragment.
#[test]
fn pi_branch_on_a_fragment_keeps_the_chain_and_says_where_it_leaves() {
    let f = fixture_str("fragment-branched.jsonl");
    let o = cmd("pi-branch").arg(&f).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let data = read_fixture("fragment-branched.jsonl");
    let all = lines(&data);
    // Line 2 is on an abandoned branch; 1, 3, 4 and 5 are the chain from the last entry.
    let want: Vec<u8> = [1, 3, 4, 5]
        .iter()
        .flat_map(|&n| all[n - 1].to_vec())
        .collect();
    assert_eq!(o.stdout, want);
    assert_eq!(
        o.stderr_lines(),
        [
            note("pi-branch", &f, 1, 5),
            format!("pi-branch: {f}:1: note: the branch leaves the fragment here: parent \"p0\" of entry \"a1\" is not in the input; 0 earlier entries are not on the branch"),
        ]
    );
    // The notes come in the order of their lines: the fragment's first, then where the
    // branch leaves it.
    let data = read_fixture("branched.jsonl");
    let tail: Vec<u8> = lines(&data)[3..].concat();
    let o = cmd("pi-branch").stdin(tail).run();
    let at: Vec<&str> = o
        .stderr_lines()
        .iter()
        .map(|l| l.split(": note:").next().unwrap_or(""))
        .collect();
    assert_eq!(
        at,
        ["pi-branch: <stdin>:1", "pi-branch: <stdin>:3"],
        "{}",
        o.stderr
    );
    let info = cmd("pi-branch").arg("--info").arg(&f).run().records();
    assert_eq!(info[0]["kept"], 4);
    assert_eq!(info[0]["omitted"], 1);
    assert_eq!(info[0]["diagnostics"], serde_json::json!({}));
    let tree = cmd("pi-branch").arg("--tree").arg(&f).run();
    assert_eq!(
        tree.out().lines().next(),
        Some("fragment of a session (v3): 5 entries, 2 leaves, 4 on the active branch")
    );
}

/// A fragment in a file named as Pi names session files takes its id from the name.
#[test]
fn a_fragments_session_id_comes_from_a_pi_file_name() {
    let t = TempDir::new("fragment-name");
    let p = t.write(
        "2026-05-01T10-00-00-000Z_0a1b2c3d-0000-7000-8000-000000000001.jsonl",
        std::str::from_utf8(&read_fixture("fragment-tools.jsonl")).unwrap(),
    );
    let o = cmd("pi-tools").arg(&p).run();
    assert_eq!(o.status, 0);
    assert!(o
        .records()
        .iter()
        .all(|r| r["session"] == "0a1b2c3d-0000-7000-8000-000000000001"));
    assert_eq!(
        o.stderr_lines(),
        [format!("pi-tools: {}:1: note: no session header: the 6 entries from here read as a fragment of a session (session id \"0a1b2c3d-0000-7000-8000-000000000001\" taken from the file's name)", p.display())]
    );
}

/// What is not a Pi entry is not a session, as before: a package.json (its "type" is a
/// string), another program's JSONL.
#[test]
fn input_with_no_pi_entry_is_still_not_a_session() {
    let f = fixture_str("fragment-not-session.jsonl");
    for tool in ["pi-branch", "pi-tools", "pi-usage", "pi-compactions"] {
        let o = cmd(tool).arg(&f).run();
        assert_eq!(o.status, 2, "{tool}");
        assert_eq!(
            o.stderr_lines(),
            [format!(
                "{tool}: {f}:1: no session header before this line: 3 entries unreadable, skipped"
            )],
            "{tool}"
        );
        if tool != "pi-usage" {
            assert!(o.stdout.is_empty(), "{tool}");
        }
    }
}

/// pi-sessions describes files: a headerless one is still unreadable there.
#[test]
fn pi_sessions_still_calls_a_headerless_file_unreadable() {
    let o = cmd("pi-sessions")
        .args(["--json"])
        .arg(fixture("fragment-tools.jsonl"))
        .ok();
    let r = &o.records()[0];
    assert_eq!(r["status"], "unreadable");
    assert!(r["reason"]
        .as_str()
        .unwrap()
        .starts_with("no session header: the first record (line 1) is a \"message\" entry"));
}

// The split property: a session split at any line into its headed part and a fragment gives,
// summed, the same usage and the same tool calls.

/// The fields of the usage sum `part` of the one record of `out`, with cost as an exact
/// decimal (units of 10^-30, read from the text: JSON numbers through f64 would round).
fn sums(out: &str, part: &str) -> BTreeMap<&'static str, i128> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let v = &v[part];
    let mut m = BTreeMap::new();
    for k in [
        "count",
        "input",
        "output",
        "cache_read",
        "cache_write",
        "total_tokens",
        "cost_missing",
    ] {
        m.insert(
            k,
            v[k].as_i64().unwrap_or_else(|| panic!("{k}: {v}")) as i128,
        );
    }
    let from = out.find(&format!("\"{part}\":{{")).unwrap();
    let at = from + out[from..].find("\"cost\":").unwrap() + "\"cost\":".len();
    let end = at + out[at..].find([',', '}']).unwrap();
    m.insert("cost", decimal(&out[at..end]));
    m
}

/// A decimal number as an integer count of 10^-30.
fn decimal(s: &str) -> i128 {
    assert!(!s.contains(['e', 'E']), "{s}");
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<30}");
    let v = int.parse::<i128>().unwrap() * 10i128.pow(30) + frac[..30].parse::<i128>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

fn add(a: &mut BTreeMap<&'static str, i128>, b: &BTreeMap<&'static str, i128>) {
    for (k, v) in b {
        *a.entry(k).or_default() += v;
    }
}

fn run_usage(input: &[u8]) -> String {
    let a = usage::Args::try_parse_from(["pi-usage", "--total"]).unwrap();
    let mut out = Out::held();
    let mut d = Diags::quiet("pi-usage", "<stdin>");
    usage::Usage::run_bytes(&a, input, &mut out, &mut d).unwrap();
    assert_eq!(d.counts().total(), 0, "problems reported");
    String::from_utf8(out.buf).unwrap()
}

fn run_tools(input: &[u8]) -> Vec<Value> {
    let a = tools::Args::try_parse_from(["pi-tools", "--no-content"]).unwrap();
    let mut out = Out::held();
    let mut d = Diags::quiet("pi-tools", "<stdin>");
    tools::Tools::run_bytes(&a, input, &mut out, &mut d).unwrap();
    assert_eq!(d.counts().total(), 0, "problems reported");
    parse_lines(&out.buf)
}

fn parse_lines(b: &[u8]) -> Vec<Value> {
    String::from_utf8(b.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A tool call as the property compares it: where it is in the whole session, and its status.
fn calls(recs: &[Value], shift: u64) -> BTreeMap<(u64, String), (String, Option<u64>)> {
    recs.iter()
        .filter(|r| r["type"] == "tool_call")
        .map(|r| {
            let line = r["line"].as_u64().unwrap() + shift;
            let id = r["call_id"].as_str().unwrap_or("").to_string();
            let result = r["result"]["line"].as_u64().map(|l| l + shift);
            (
                (line, id),
                (r["status"].as_str().unwrap().to_string(), result),
            )
        })
        .collect()
}

/// (line in the whole session, call id) of each tool_result record with status `status`.
fn results(recs: &[Value], shift: u64, status: &str) -> Vec<(u64, String)> {
    recs.iter()
        .filter(|r| r["type"] == "tool_result" && r["status"] == status)
        .map(|r| {
            (
                r["line"].as_u64().unwrap() + shift,
                r["call_id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn check_split(session: &[u8], at: usize) {
    let all = lines(session);
    let at = at.clamp(1, all.len() - 1);
    let head: Vec<u8> = all[..at].concat();
    let frag: Vec<u8> = all[at..].concat();
    let shift = at as u64;

    // pi-usage: the two parts' totals add up to the whole's.
    let whole = run_usage(session);
    let (h, f) = (run_usage(&head), run_usage(&frag));
    for part in ["messages", "summarization", "total"] {
        let mut summed = sums(&h, part);
        add(&mut summed, &sums(&f, part));
        assert_eq!(summed, sums(&whole, part), "{part}, split at line {at}");
    }

    // pi-tools: the same calls; a call whose result is in the other part is no_result there,
    // and its result an orphan.
    let whole = run_tools(session);
    let (h, f) = (run_tools(&head), run_tools(&frag));
    let mut split = calls(&h, 0);
    split.extend(calls(&f, shift));
    let mut want_orphans = results(&whole, 0, "orphan");
    let mut want = BTreeMap::new();
    for ((line, id), (status, result)) in calls(&whole, 0) {
        match result {
            Some(r) if (line <= shift) != (r <= shift) => {
                want.insert((line, id.clone()), ("no_result".to_string(), None));
                want_orphans.push((r, id));
            }
            _ => {
                want.insert((line, id), (status, result));
            }
        }
    }
    assert_eq!(split, want, "tool calls, split at line {at}");
    let mut orphans = results(&h, 0, "orphan");
    orphans.extend(results(&f, shift, "orphan"));
    orphans.sort();
    want_orphans.sort();
    assert_eq!(orphans, want_orphans, "orphans, split at line {at}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Issue 14: a session (v3 with branches, or a linear v1 log) split at any line into its
    /// headed part and a fragment gives, summed, the same pi-usage totals and the same pi-tools
    /// records.
    #[test]
    fn split_session_gives_the_same_usage_and_tool_calls(
        seed in 0u64..1_000_000,
        at in any::<prop::sample::Index>(),
        linear in any::<bool>(),
    ) {
        let mut session = Vec::new();
        let shape = if linear { Shape::v1(24_000) } else { Shape::v3(24_000) };
        Gen::new(seed).session(&shape, &mut session).unwrap();
        let n = lines(&session).len();
        prop_assume!(n > 2);
        check_split(&session, 1 + at.index(n - 1));
    }
}
