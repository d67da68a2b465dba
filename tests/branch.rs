//! pi-branch: one test per fixture and rule, the reader's diagnostics, and the corpus checks.

use crate::util::*;

/// The physical lines of a fixture (1-based numbers), each with its `\n`.
fn lines_of(name: &str, nums: &[usize]) -> String {
    let text = String::from_utf8(read_fixture(name)).unwrap();
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    nums.iter().map(|&n| all[n - 1]).collect()
}

fn branch(args: &[&str]) -> Output {
    cmd("pi-branch").args(args).run()
}

#[test]
fn branched_keeps_the_active_path_byte_for_byte() {
    let o = cmd("pi-branch").arg(fixture("branched.jsonl")).ok();
    assert_eq!(o.out(), lines_of("branched.jsonl", &[1, 2, 3, 6, 7, 8]));
}

#[test]
fn branched_info_counts_kept_and_omitted() {
    let o = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("branched.jsonl"))
        .ok();
    let r = &o.records()[0];
    assert_eq!(r["type"], "branch_info");
    assert_eq!(r["session"], "s-branched");
    assert_eq!(r["leaf"], "g7");
    assert_eq!(r["leaf_line"], 8);
    assert_eq!(
        (
            r["entries"].as_u64(),
            r["kept"].as_u64(),
            r["omitted"].as_u64()
        ),
        (Some(7), Some(5), Some(2))
    );
    assert_eq!(r["leaves"], 2);
    assert_eq!(r["diagnostics"], serde_json::json!({}));
}

#[test]
fn branch_of_branch_is_branch() {
    for f in [
        "branched.jsonl",
        "labels.jsonl",
        "idless-entries.jsonl",
        "duplicate-ids.jsonl",
        "two-sessions.jsonl",
        "v1-linear.jsonl",
    ] {
        let once = cmd("pi-branch").arg(fixture(f)).run();
        let twice = cmd("pi-branch").stdin(once.stdout.clone()).run();
        assert_eq!(once.out(), twice.out(), "{f}");
    }
}

#[test]
fn stdin_gives_the_same_output_as_a_file() {
    for f in [
        "branched.jsonl",
        "crlf.jsonl",
        "no-trailing-newline.jsonl",
        "idless-entries.jsonl",
    ] {
        let a = cmd("pi-branch").arg(fixture(f)).run();
        let b = cmd("pi-branch").stdin(read_fixture(f)).run();
        assert_eq!(a.stdout, b.stdout, "{f}");
        assert_eq!(a.status, b.status, "{f}");
    }
}

#[test]
fn leaf_option_starts_from_that_entry() {
    let o = cmd("pi-branch")
        .args(["--leaf", "d4"])
        .arg(fixture("branched.jsonl"))
        .ok();
    assert_eq!(o.out(), lines_of("branched.jsonl", &[1, 2, 3, 4, 5]));
    let o = branch(&["--leaf", "nope", &fixture_str("branched.jsonl")]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains("no entry with id \"nope\""),
        "{}",
        o.stderr
    );
    assert_eq!(o.out(), "");
}

#[test]
fn labels_resolve_latest_wins_and_clear() {
    let o = cmd("pi-branch")
        .args(["--label", "checkpoint"])
        .arg(fixture("labels.jsonl"))
        .ok();
    assert_eq!(o.out(), lines_of("labels.jsonl", &[1, 2, 3]));
    // a1's label was cleared by a later label entry without `label`.
    let o = branch(&["--label", "cleared-later", &fixture_str("labels.jsonl")]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains("no entry is labelled \"cleared-later\""),
        "{}",
        o.stderr
    );
}

#[test]
fn leaves_lists_every_leaf_with_the_active_one_marked() {
    let o = cmd("pi-branch")
        .args(["--leaves", "--preview"])
        .arg(fixture("branched.jsonl"))
        .ok();
    let r = o.records();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (
            r[0]["entry"].as_str(),
            r[0]["active"].as_bool(),
            r[0]["depth"].as_u64()
        ),
        (Some("d4"), Some(false), Some(4))
    );
    assert_eq!(r[0]["preview"], "abandoned follow-up");
    assert_eq!(
        (
            r[1]["entry"].as_str(),
            r[1]["active"].as_bool(),
            r[1]["depth"].as_u64()
        ),
        (Some("g7"), Some(true), Some(5))
    );
    assert_eq!(r[1]["preview"], "kept follow-up");
    let o = cmd("pi-branch")
        .args(["--leaves"])
        .arg(fixture("labels.jsonl"))
        .ok();
    assert_eq!(o.records()[0]["label"], serde_json::Value::Null);
    assert!(o.records()[0].get("preview").is_none());
}

#[test]
fn tree_draws_branches_marks_the_active_path_and_labels() {
    let o = cmd("pi-branch")
        .arg("--tree")
        .arg(fixture("branched.jsonl"))
        .ok();
    let t = o.out();
    assert!(
        t.starts_with("session s-branched (v3): 7 entries, 2 leaves, 5 on the active branch\n"),
        "{t}"
    );
    assert!(t.contains("├─○ c3 user: \"abandoned follow-up\""), "{t}");
    // The active branch goes on in column 0 below the abandoned one.
    assert!(
        t.contains("│ ○ d4 assistant: \"abandoned answer\"  ← leaf\n● e5 branch_summary"),
        "{t}"
    );
    assert!(
        t.contains("● g7 assistant: \"kept answer\"  ← leaf (active)"),
        "{t}"
    );
    let o = cmd("pi-branch")
        .arg("--tree")
        .arg(fixture("labels.jsonl"))
        .ok();
    assert!(
        o.out().contains("● b2 assistant: \"ok\" [checkpoint]"),
        "{}",
        o.out()
    );
}

#[test]
fn tree_folds_long_linear_runs() {
    let mut s = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"long\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    );
    for i in 0..50 {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"e{}\"", i - 1)
        };
        s.push_str(&format!(
            "{{\"type\":\"custom\",\"id\":\"e{i}\",\"parentId\":{parent}}}\n"
        ));
    }
    let o = cmd("pi-branch")
        .args(["--tree", "--fold", "3"])
        .stdin(s)
        .ok();
    assert!(o.out().contains("● … 48 entries …"), "{}", o.out());
    assert_eq!(o.out().lines().count(), 4);
}

#[test]
fn cycle_is_reported_never_followed_forever() {
    let o = branch(&[&fixture_str("cycle.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), lines_of("cycle.jsonl", &[1, 2, 3, 4]));
    assert!(
        o.stderr
            .contains(":4: parentId cycle: entry \"c3\" is its own ancestor"),
        "{}",
        o.stderr
    );
}

#[test]
fn self_parent_is_a_cycle() {
    let o = branch(&["--info", &fixture_str("self-parent.jsonl")]);
    assert_eq!(o.status, 2);
    let r = &o.records()[0];
    assert_eq!(
        (r["kept"].as_u64(), r["omitted"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(r["diagnostics"]["parent_cycle"], 1);
}

#[test]
fn missing_parent_ends_the_chain_and_counts_what_was_lost() {
    let o = branch(&[&fixture_str("missing-parent.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), lines_of("missing-parent.jsonl", &[1, 4, 5]));
    assert!(
        o.stderr.contains("missing-parent.jsonl:4: parent \"zz\" of entry \"c3\" is not in the session; the branch starts here, 2 earlier entries are lost"),
        "{}",
        o.stderr
    );
}

#[test]
fn duplicate_ids_later_wins() {
    let o = branch(&[&fixture_str("duplicate-ids.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), lines_of("duplicate-ids.jsonl", &[1, 2, 4, 5]));
    assert!(
        o.stderr
            .contains(":4: duplicate id \"b2\" (also on line 3)"),
        "{}",
        o.stderr
    );
}

#[test]
fn idless_entries_stay_unless_attached_to_an_abandoned_branch() {
    let o = cmd("pi-branch").arg(fixture("idless-entries.jsonl")).ok();
    assert_eq!(
        o.out(),
        lines_of("idless-entries.jsonl", &[1, 2, 3, 6, 7, 8])
    );
    let o = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("idless-entries.jsonl"))
        .ok();
    assert_eq!(o.records()[0]["omitted"], 2);
}

#[test]
fn v1_passes_whole() {
    let o = cmd("pi-branch").arg(fixture("v1-linear.jsonl")).ok();
    assert_eq!(o.stdout, read_fixture("v1-linear.jsonl"));
    let o = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("v1-linear.jsonl"))
        .ok();
    let r = &o.records()[0];
    assert_eq!(
        (
            r["version"].as_u64(),
            r["leaf"].is_null(),
            r["kept"].as_u64()
        ),
        (Some(1), true, Some(3))
    );
}

#[test]
fn v2_with_hook_message_is_a_tree_like_v3() {
    let o = cmd("pi-branch").arg(fixture("v2-hook-message.jsonl")).ok();
    assert_eq!(o.stdout, read_fixture("v2-hook-message.jsonl"));
}

#[test]
fn glued_records_are_named_and_skipped_like_pi() {
    let o = branch(&[&fixture_str("glued.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), lines_of("glued.jsonl", &[1, 3]));
    assert!(
        o.stderr.contains(
            "glued.jsonl:2: two records glued on one line (the second starts at byte 124)"
        ),
        "{}",
        o.stderr
    );
}

#[test]
fn crlf_lines_pass_byte_for_byte() {
    let o = cmd("pi-branch").arg(fixture("crlf.jsonl")).ok();
    assert_eq!(o.stdout, read_fixture("crlf.jsonl"));
}

#[test]
fn a_last_line_without_newline_is_read_and_terminated() {
    let o = cmd("pi-branch")
        .arg(fixture("no-trailing-newline.jsonl"))
        .ok();
    let mut want = read_fixture("no-trailing-newline.jsonl");
    want.push(b'\n');
    assert_eq!(o.stdout, want);
}

#[test]
fn header_only_is_a_session_with_no_entries() {
    let o = cmd("pi-branch").arg(fixture("header-only.jsonl")).ok();
    assert_eq!(o.stdout, read_fixture("header-only.jsonl"));
    let o = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("header-only.jsonl"))
        .ok();
    assert_eq!(o.records()[0]["entries"], 0);
}

/// Issue 14: Pi entries with no header before them are a fragment: its branch, one note, exit 0
/// (records that are not Pi entries stay unreadable: tests/bad_input.rs, `no-header`).
#[test]
fn no_header_is_read_as_a_fragment() {
    let o = branch(&[&fixture_str("no-header.jsonl")]);
    assert_eq!(o.status, 0);
    assert_eq!(o.out(), lines_of("no-header.jsonl", &[1, 2]));
    assert_eq!(
        o.stderr_lines(),
        [format!(
            "pi-branch: {}:1: note: no session header: the 2 entries from here read as a fragment of a session (session id unknown)",
            fixture_str("no-header.jsonl")
        )]
    );
}

#[test]
fn null_and_number_lines_are_reported_and_skipped() {
    let o = branch(&[&fixture_str("null-line.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), lines_of("null-line.jsonl", &[1, 2, 5]));
    let f = fixture_str("null-line.jsonl");
    assert_eq!(
        o.stderr_lines(),
        [
            format!("pi-branch: {f}:3: a JSON null, not an object; line skipped"),
            format!("pi-branch: {f}:4: a JSON number, not an object; line skipped"),
        ]
    );
}

#[test]
fn invalid_utf8_is_reported_and_the_line_kept() {
    let o = branch(&[&fixture_str("invalid-utf8.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.stdout, read_fixture("invalid-utf8.jsonl"));
    assert!(
        o.stderr.contains("invalid-utf8.jsonl:3: invalid UTF-8"),
        "{}",
        o.stderr
    );
}

#[test]
fn two_sessions_in_one_stream() {
    let data = read_fixture("two-sessions.jsonl");
    let o = cmd("pi-branch").arg("--info").stdin(data.clone()).ok();
    let r = o.records();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0]["session"].as_str(), r[1]["session"].as_str()),
        (Some("s-header-only"), Some("s-branched"))
    );
    assert_eq!(r[1]["file"], "<stdin>");
    // In a named file a second header is reported, and still starts a new session.
    let o = branch(&["--info", &fixture_str("two-sessions.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.records().len(), 2);
    assert!(
        o.stderr
            .contains("two-sessions.jsonl:2: a second session header in this file"),
        "{}",
        o.stderr
    );
}

#[test]
fn many_files_keep_argument_order() {
    let names = [
        "branched.jsonl",
        "v1-linear.jsonl",
        "labels.jsonl",
        "crlf.jsonl",
        "header-only.jsonl",
    ];
    let mut args: Vec<String> = vec!["--threads".into(), "2".into()];
    let mut want = Vec::new();
    for _ in 0..5 {
        for n in names {
            args.push(fixture_str(n));
            want.extend(cmd("pi-branch").arg(fixture(n)).run().stdout);
        }
    }
    let o = cmd("pi-branch").args(&args).ok();
    assert_eq!(o.stdout, want);
}

#[test]
fn a_missing_file_is_reported_and_the_rest_still_processed() {
    let o = branch(&["/nonexistent/x.jsonl", &fixture_str("header-only.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.stdout, read_fixture("header-only.jsonl"));
    assert!(
        o.stderr
            .starts_with("pi-branch: /nonexistent/x.jsonl: cannot open:"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::process::{Command, Stdio};
    let t = TempDir::new("pipe");
    let mut big = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"big\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    );
    for i in 0..200_000 {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"e{}\"", i - 1)
        };
        big.push_str(&format!("{{\"type\":\"custom\",\"id\":\"e{i}\",\"parentId\":{parent},\"data\":\"xxxxxxxxxxxxxxxxxxxx\"}}\n"));
    }
    let f = t.write("big.jsonl", big);
    let sh = format!(
        "{} {} | head -1",
        bin_dir().join("pi-branch").display(),
        f.display()
    );
    let o = Command::new("sh")
        .args(["-c", &format!("{sh}; exit ${{PIPESTATUS:-0}}")])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    // The tool's own status: run it with bash to read PIPESTATUS.
    let o = Command::new("bash")
        .args(["-c", &format!("{sh} >/dev/null; exit ${{PIPESTATUS[0]}}")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_deep_chain_does_not_overflow_the_stack() {
    let mut s = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"deep\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    );
    for i in 0..1_000_000u32 {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"{:x}\"", i - 1)
        };
        s.push_str(&format!(
            "{{\"type\":\"custom\",\"id\":\"{i:x}\",\"parentId\":{parent}}}\n"
        ));
    }
    let o = cmd("pi-branch").arg("--info").stdin(s).ok();
    assert_eq!(o.records()[0]["kept"], 1_000_000);
}

/// The branch Pi itself chooses, recorded by scripts/pi-reference over the corpus.
#[test]
fn corpus_branches_match_pi() {
    let Some(corpus) = corpus() else {
        eprintln!("corpus absent: skipped");
        return;
    };
    let refs =
        std::fs::read_to_string(root().join("tests/data/pi-reference-branches.jsonl")).unwrap();
    let mut checked = 0;
    for line in refs.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let path = corpus.join(r["file"].as_str().unwrap());
        if !path.exists() {
            continue;
        }
        let o = cmd("pi-branch").arg(&path).run();
        assert!(
            o.status == 0 || o.status == 2,
            "{}: status {}",
            path.display(),
            o.status
        );
        let text = std::fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        // Issue 14: a file Pi rejects because its records come with no header is a fragment
        // for pi-branch (its branch, exit 0): Pi has no branch to compare it with.
        let first: Option<serde_json::Value> =
            lines.iter().find_map(|l| serde_json::from_slice(l).ok());
        if !r["accepted"].as_bool().unwrap() && first.as_ref().is_some_and(is_pi_entry) {
            assert_eq!(o.status, 0, "{}: a fragment", path.display());
            assert!(!o.stdout.is_empty(), "{}: a fragment", path.display());
            continue;
        }
        let mut want = Vec::new();
        for n in r["lines"].as_array().unwrap() {
            let l = lines[n.as_u64().unwrap() as usize - 1];
            want.extend_from_slice(l);
            if !l.ends_with(b"\n") {
                want.push(b'\n');
            }
        }
        assert!(
            o.stdout == want,
            "{}: pi-branch differs from Pi's branch",
            path.display()
        );
        if !r["accepted"].as_bool().unwrap() {
            assert_eq!(
                o.status,
                2,
                "{}: a file Pi rejects must be reported",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} corpus files checked");
}

/// Every corpus file: no panic, documented status, and the output is a chain of input lines.
#[test]
fn corpus_output_is_a_chain_of_input_lines() {
    for path in corpus_files() {
        let o = cmd("pi-branch").arg(&path).run();
        assert!(o.status == 0 || o.status == 2, "{}", path.display());
        let input = std::fs::read(&path).unwrap();
        let inlines: std::collections::HashSet<&[u8]> = input
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .collect();
        for l in o.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert!(
                inlines.contains(l),
                "{}: output line not in input",
                path.display()
            );
        }
        let again = cmd("pi-branch").stdin(o.stdout.clone()).run();
        assert_eq!(
            again.stdout,
            o.stdout,
            "{}: pi-branch | pi-branch differs",
            path.display()
        );
    }
}

#[test]
fn v1_has_one_leaf_without_an_id_and_no_leaf_option() {
    let o = cmd("pi-branch")
        .args(["--leaves", "--preview"])
        .arg(fixture("v1-linear.jsonl"))
        .ok();
    let r = o.records();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (
            r[0]["entry"].is_null(),
            r[0]["line"].as_u64(),
            r[0]["depth"].as_u64()
        ),
        (true, Some(4), Some(3))
    );
    assert_eq!(
        (r[0]["active"].as_bool(), r[0]["preview"].as_str()),
        (Some(true), Some("old style"))
    );
    let o = branch(&["--leaf", "x", &fixture_str("v1-linear.jsonl")]);
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), "");
    assert!(
        o.stderr.contains("a v1 session has no ids or labels"),
        "{}",
        o.stderr
    );
}

/// A session whose ids are odd: empty, duplicated, a number, absent, a number as parentId, an
/// empty parentId.
const ODD_IDS: &str = concat!(
    r#"{"type":"session","version":3,"id":"s-odd","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"one"}}"#,
    "\n",
    r#"{"type":"message","id":"","parentId":"a","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":"empty id"}}"#,
    "\n",
    r#"{"type":"message","id":"dup","parentId":"a","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"first dup"}}"#,
    "\n",
    r#"{"type":"message","id":7,"parentId":"a","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":"number id"}}"#,
    "\n",
    r#"{"type":"message","parentId":"a","timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":"no id"}}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":7,"timestamp":"2026-01-01T00:00:06Z","message":{"role":"user","content":"number parent"}}"#,
    "\n",
    r#"{"type":"message","id":"dup","parentId":"a","timestamp":"2026-01-01T00:00:07Z","message":{"role":"user","content":"second dup"}}"#,
    "\n",
    r#"{"type":"message","id":"c","parentId":"","timestamp":"2026-01-01T00:00:08Z","message":{"role":"user","content":"child of empty"}}"#,
    "\n",
    r#"{"type":"message","id":"d","parentId":"dup","timestamp":"2026-01-01T00:00:09Z","message":{"role":"user","content":"child of dup"}}"#,
    "\n",
);

/// Issue 19, item 11: `branch_info.leaves`, the `--tree` heading, the `← leaf` marks of the
/// drawing and the `--leaves` records count the same leaves, for a session with odd ids and
/// for every fixture.
#[test]
fn item_11_leaves_counted_by_one_rule() {
    let t = TempDir::new("odd-ids");
    let mut files = vec![t.write("odd-ids.jsonl", ODD_IDS)];
    for e in std::fs::read_dir(root().join("fixtures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            files.push(p);
        }
    }
    for f in &files {
        let infos: Vec<u64> = branch(&["--info", f.to_str().unwrap()])
            .records()
            .iter()
            .map(|r| r["leaves"].as_u64().unwrap())
            .collect();
        let leaf_records = branch(&["--leaves", f.to_str().unwrap()]).records();
        let tree = branch(&["--tree", "--fold", "0", f.to_str().unwrap()]).out();
        let mut headings = Vec::new();
        // Lines marked `← leaf`; the chosen leaf is marked `← leaf (active)` whether or not
        // it is a leaf (`--leaf` may name any entry; a cycle gives it a child).
        let mut marks = 0;
        for line in tree.lines() {
            // A fragment's heading says so (issue 14).
            let heading = line.strip_prefix("session ");
            if let Some(rest) = heading.or_else(|| line.strip_prefix("fragment of ")) {
                let n = rest.split(", ").nth(1).unwrap().split(' ').next().unwrap();
                headings.push(n.parse::<u64>().unwrap());
            } else if line.ends_with("  ← leaf") {
                marks += 1;
            }
        }
        let active = leaf_records.iter().filter(|r| r["active"] == true).count();
        assert_eq!(headings, infos, "{}: --tree heading vs --info", f.display());
        let total: u64 = infos.iter().sum();
        assert_eq!(
            leaf_records.len() as u64,
            total,
            "{}: --leaves",
            f.display()
        );
        assert_eq!(marks + active as u64, total, "{}: marks", f.display());
    }
    let tree = branch(&["--tree", files[0].to_str().unwrap()]).out();
    // Leaves: "child of dup", "number parent" and "child of empty"; the empty id is no id,
    // as the number is, so "empty id" is no leaf.
    assert!(
        tree.starts_with("session s-odd (v3): 9 entries, 3 leaves,"),
        "{tree}"
    );
}

/// A comb: each branch point one level below the one before, its other child a leaf; the
/// last entry, the active leaf, a child of the root.
fn comb(points: usize) -> String {
    let mut s = String::from(
        r#"{"type":"session","version":3,"id":"comb","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
    );
    s.push('\n');
    let entry = |id: &str, parent: Option<&str>| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"x"}}}}"#
        ) + "\n"
    };
    s.push_str(&entry("a0", None));
    for i in 1..points {
        let parent = format!("a{}", i - 1);
        s.push_str(&entry(&format!("a{i}"), Some(&parent)));
        s.push_str(&entry(&format!("l{i}"), Some(&parent)));
    }
    // The active leaf hangs from the root, so the comb is an abandoned branch: the active
    // branch is drawn in column 0 whatever its depth, an abandoned one is indented.
    s.push_str(&entry("z", Some("a0")));
    s
}

/// Issue 19, item 4: `--tree` of a comb-shaped tree writes lines of bounded width (deeper
/// levels are counted, `(+N levels)`), so its size grows with the entries, not with their
/// square; no entry is lost.
#[test]
fn item_4_tree_indentation_is_bounded() {
    let t = TempDir::new("comb");
    let points = 3_000;
    let f = t.write("comb.jsonl", comb(points));
    let out = branch(&["--tree", "--fold", "0", f.to_str().unwrap()]).out();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * points);
    let widest = lines.iter().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 120, "a line of {widest} characters");
    assert!(out.len() < 200 * lines.len(), "{} bytes", out.len());
    let deepest = format!("(+{} levels) ├─○ a{} ", points - 2 - 32, points - 1);
    assert!(out.contains(&deepest), "{deepest} missing");
    // Shallow trees are drawn in full, as before.
    let out = branch(&["--tree", fixture("branched.jsonl").to_str().unwrap()]).out();
    assert!(!out.contains("levels)"));
}

/// The outline and the tree mark a toolResult "(error)" exactly when pi-tools says the result
/// failed: its `isError` is true, else its `details` hold an exit code that is not 0 (the
/// status of the call it answers; for a result that answers none, its `is_error` and
/// `exit_code`); and a user's `!cmd` when pi-tools' record of it has status "error" (an exit
/// code that is not 0). Checked on every pi-tools fixture, and row by row on the exit codes
/// one.
#[test]
fn a_result_is_marked_failed_by_the_rule_pi_tools_uses() {
    use serde_json::Value;
    use std::collections::HashMap;
    let marks = |f: &str| {
        let outline = branch(&["--outline", "--color", "never", f]).out();
        let tree = branch(&["--tree", "--fold", "0", "--color", "never", f]).out();
        (outline, tree)
    };
    let mut checked = 0;
    for f in fixture_files() {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("tools-") {
            continue;
        }
        let f = f.to_str().unwrap();
        // Line and entry id of each result pi-tools read, and whether it failed.
        let mut by_line = HashMap::new();
        let mut by_id: HashMap<String, Option<bool>> = HashMap::new();
        for r in cmd("pi-tools").arg(f).run().records() {
            let (result, failed) = match r["type"].as_str() {
                Some("tool_call") if r["by_user"] == false && r["result"].is_object() => {
                    (&r["result"], r["status"] == "error")
                }
                // A user's command is its own result.
                Some("tool_call") if r["by_user"] == true => (&r, r["status"] == "error"),
                Some("tool_result") => {
                    let code = r["exit_code"].as_i64();
                    (&r, r["is_error"] == true || code.is_some_and(|c| c != 0))
                }
                _ => continue,
            };
            by_line.insert(result["line"].as_u64().unwrap(), failed);
            if let Value::String(id) = &result["entry"] {
                // An id on two results says nothing of which one a row is.
                let seen = by_id.insert(id.clone(), Some(failed)).is_some();
                if seen {
                    by_id.insert(id.clone(), None);
                }
            }
        }
        let (outline, tree) = marks(f);
        let marked = |w: &str| w == "toolResult" || w.starts_with('!');
        for row in outline.lines() {
            let words: Vec<&str> = row.split_whitespace().collect();
            if !words.get(2).is_some_and(|w| marked(w)) {
                continue;
            }
            let line: u64 = words[1].parse().unwrap();
            if let Some(&failed) = by_line.get(&line) {
                assert_eq!(row.ends_with(" (error)"), failed, "{name}: {row}");
                checked += 1;
            }
        }
        for row in tree.lines() {
            let words: Vec<&str> = row.split_whitespace().collect();
            let Some(at) = words.iter().position(|w| marked(w)) else {
                continue;
            };
            let text = row.split("  ← leaf").next().unwrap();
            if let Some(&Some(failed)) = at.checked_sub(1).and_then(|i| by_id.get(words[i])) {
                assert_eq!(text.ends_with(" (error)"), failed, "{name}: {row}");
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked} rows checked");
    // Row by row: exit code 1 (isError false), exit_code 127, 0, null, -9.
    let (outline, tree) = marks(fixture("tools-exit-code.jsonl").to_str().unwrap());
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("toolResult"))
            .map(|l| l.split("toolResult ").nth(1).unwrap().to_string())
            .collect()
    };
    let want = [
        "exec (error)",
        "exec (error)",
        "exec",
        "exec",
        "exec (error)",
    ];
    assert_eq!(rows(&outline), want, "{outline}");
    let tree_rows: Vec<String> = rows(&tree)
        .iter()
        .map(|r| r.split("  ← leaf").next().unwrap().to_string())
        .collect();
    assert_eq!(tree_rows, want, "{tree}");
}
