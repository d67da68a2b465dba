//! Issue 14, part 3: a directory as an argument. Every tool reads the session files under it
//! (pi-sessions' walk and classification, in path order); pi-sessions takes DIR arguments.

use crate::util::*;

/// A tree with sessions, an empty file, a file that is not a session (no `type`: pi-sessions'
/// `not_session`) and a nested run.
fn tree(t: &TempDir) -> Vec<std::path::PathBuf> {
    let b = t.write(
        "s/--q--/2026-01-02T00-00-00-000Z_b.jsonl",
        read_fixture("tools-orphan.jsonl"),
    );
    let a = t.write(
        "s/--p--/2026-01-01T00-00-00-000Z_a.jsonl",
        read_fixture("branched.jsonl"),
    );
    let run = t.write(
        "s/--p--/2026-01-01T00-00-00-000Z_a/Worker.jsonl",
        read_fixture("omp-session.jsonl"),
    );
    t.write("s/--p--/empty.jsonl", "");
    t.write(
        "s/--p--/transcript.jsonl",
        "{\"version\":1,\"recordType\":\"x\"}\n",
    );
    t.write("s/--p--/notes.txt", "not read\n");
    vec![a, run, b]
}

#[test]
fn every_tool_reads_a_directory_as_its_session_files_in_path_order() {
    let t = TempDir::new("dir-arg");
    let files = tree(&t);
    let dir = t.path().join("s");
    let tools: [(&str, &[&str]); 4] = [
        ("pi-branch", &[]),
        ("pi-tools", &[]),
        ("pi-usage", &["--by", "session"]),
        ("pi-compactions", &[]),
    ];
    for (tool, args) in tools {
        let o = cmd(tool).args(args).arg(&dir).run();
        assert_eq!(o.status, 0, "{tool}: {}", o.stderr);
        assert_eq!(o.stderr, "", "{tool}");
        let named = cmd(tool).args(args).args(&files).ok();
        assert_eq!(o.stdout, named.stdout, "{tool}");
    }
    // The same files as pi-sessions DIR --paths lists.
    let listed = cmd("pi-sessions").arg("--paths").arg(&dir).ok();
    let listed: Vec<_> = listed.out().lines().map(std::path::PathBuf::from).collect();
    assert_eq!(listed, files);
}

#[test]
fn a_file_found_twice_is_read_once() {
    let t = TempDir::new("dir-twice");
    let files = tree(&t);
    let dir = t.path().join("s");
    let o = cmd("pi-usage")
        .arg("--total")
        .arg(&files[2])
        .arg(&dir)
        .arg(dir.join("--p--"))
        .ok();
    assert_eq!(o.records()[0]["sessions"], 3);
}

#[test]
fn pi_sessions_takes_directories_as_arguments() {
    let t = TempDir::new("dir-sessions");
    tree(&t);
    let dir = t.path().join("s");
    let by_arg = cmd("pi-sessions").arg("--json").arg(&dir).ok();
    let by_flag = cmd("pi-sessions").args(["--json", "--dir"]).arg(&dir).ok();
    assert_eq!(by_arg.stdout, by_flag.stdout);
    let recs = by_arg.records();
    assert_eq!(recs.len(), 5);
    let p = cmd("pi-sessions")
        .arg("--json")
        .arg(dir.join("--p--"))
        .arg(dir.join("--q--"))
        .ok();
    assert_eq!(p.stdout, by_arg.stdout);
}

/// Before this issue: `…/sessions:1: read error: Is a directory`, then "empty file". A
/// directory without sessions is no problem, but it is said (a typo, the wrong directory).
#[test]
fn issue_14_a_directory_is_no_read_error() {
    let t = TempDir::new("dir-empty");
    let none = t.path().join("none");
    std::fs::create_dir_all(&none).unwrap();
    let o = cmd("pi-usage").arg(&none).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        format!(
            "pi-usage: {}: note: no session files (*.jsonl) under this directory\n",
            none.display()
        )
    );
    t.write("none/empty.jsonl", "");
    t.write("none/x.jsonl", "{\"version\":1}\n");
    for tool in ["pi-branch", "pi-tools", "pi-compactions"] {
        let o = cmd(tool).arg(&none).run();
        assert_eq!(o.status, 0, "{tool}: {}", o.stderr);
        assert!(
            o.stderr
                .ends_with("under this directory; skipped 1 empty, 1 not sessions\n"),
            "{tool}: {}",
            o.stderr
        );
        let quiet = cmd(tool).arg("-q").arg(&none).run();
        assert_eq!((quiet.status, quiet.stderr.as_str()), (0, ""), "{tool}");
    }
}

#[test]
fn pi_sessions_man_page_shows_dir_arguments() {
    let pages = pi_jsonl::man_pages();
    let (_, page) = pages.iter().find(|(n, _)| *n == "pi-sessions").unwrap();
    assert!(
        page.contains("[\\fIOPTIONS\\fR] [\\fIDIR\\fR...]\n"),
        "{page}"
    );
    assert!(!page.contains("| \\fBpi\\-sessions\\fR"), "no stdin form");
    for (name, page) in &pages {
        if *name != "pi-sessions" {
            assert!(
                page.contains("A FILE that is a directory stands for the session files under it"),
                "{name}"
            );
        }
    }
}
