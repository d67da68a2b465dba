//! `--files0-from LIST`: the input files named in a list, each name ended by a NUL byte (as
//! `pi-sessions --paths0` writes them), read in one run: where `xargs` splits a long list into
//! several runs, each with its own totals and pseudonyms.

use crate::util::*;
use std::os::unix::ffi::OsStrExt;

/// Two sessions in a folder of their own, and a fixture to name directly.
fn inputs(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    t.write("s/--p--/a.jsonl", read_fixture("branched.jsonl"));
    t.write("s/--p--/b.jsonl", read_fixture("tools-orphan.jsonl"));
    (t.path().join("s"), fixture("redact-everything.jsonl"))
}

/// The names, each followed by a NUL byte but the last (a list may end either way).
fn list(names: &[&std::path::Path]) -> Vec<u8> {
    let mut l = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            l.push(0);
        }
        l.extend_from_slice(n.as_os_str().as_bytes());
    }
    l
}

#[test]
fn every_tool_reads_the_files_a_list_names_as_if_they_were_given() {
    let t = TempDir::new("files0");
    let (dir, file) = inputs(&t);
    let names = [dir.as_path(), file.as_path()];
    let listed = t.write("list0", list(&names));
    let tools: [(&str, &[&str]); 6] = [
        ("pi-branch", &[]),
        ("pi-tools", &[]),
        ("pi-usage", &["--total"]),
        ("pi-compactions", &[]),
        // One run: a path in several files gets one pseudonym.
        ("pi-redact", &[]),
        ("pi-replay", &["--format", "md"]),
    ];
    for (tool, args) in tools {
        let named = cmd(tool).args(args).args(names).ok();
        assert!(!named.stdout.is_empty(), "{tool}");
        let from_file = cmd(tool).args(args).arg("--files0-from").arg(&listed).ok();
        assert_eq!(from_file.out(), named.out(), "{tool}");
        let mut ended = list(&names);
        ended.push(0);
        let from_stdin = cmd(tool)
            .args(args)
            .args(["--files0-from", "-"])
            .stdin(ended)
            .ok();
        assert_eq!(from_stdin.out(), named.out(), "{tool}");
    }
}

#[test]
fn pi_sessions_paths0_feeds_one_run() {
    let t = TempDir::new("files0-sessions");
    let (dir, _) = inputs(&t);
    let paths = cmd("pi-sessions").arg("--paths0").arg(&dir).ok();
    let one_run = cmd("pi-usage")
        .args(["--total", "--files0-from", "-"])
        .stdin(paths.stdout)
        .ok();
    let by_dir = cmd("pi-usage").arg("--total").arg(&dir).ok();
    assert_eq!(one_run.out(), by_dir.out());
}

#[test]
fn an_empty_list_reads_nothing() {
    for list in [&b""[..], b"\0"] {
        let o = cmd("pi-branch")
            .args(["--files0-from", "-"])
            .stdin(list)
            .ok();
        assert_eq!(o.out(), "");
    }
}

#[test]
fn a_list_s_problems_are_reported_and_the_rest_is_read() {
    let t = TempDir::new("files0-bad");
    let a = fixture("branched.jsonl");
    let mut l = list(&[a.as_path()]);
    // Name 2 is empty, name 3 is `-` in a list read from stdin.
    l.extend_from_slice(b"\0\0-\0");
    l.extend_from_slice(a.as_os_str().as_bytes());
    let o = cmd("pi-branch").args(["--files0-from", "-"]).stdin(l).run();
    assert_eq!(o.status, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr_lines(),
        [
            "pi-branch: <stdin>:2: an empty file name",
            "pi-branch: <stdin>:3: `-` (stdin) named in a list read from stdin",
        ]
    );
    let once = cmd("pi-branch").arg(&a).ok();
    assert_eq!(o.out(), once.out().repeat(2));

    // A list read from a file may name stdin.
    let listed = t.write("list0", b"-\0");
    let o = cmd("pi-branch")
        .arg("--files0-from")
        .arg(&listed)
        .stdin(read_fixture("branched.jsonl"))
        .ok();
    assert_eq!(o.out(), once.out());

    // A list that cannot be read.
    let missing = t.path().join("missing");
    let o = cmd("pi-usage")
        .args(["--total", "--files0-from"])
        .arg(&missing)
        .run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        [format!(
            "pi-usage: {}: No such file or directory (os error 2)",
            missing.display()
        )]
    );

    // Not with FILE arguments: a usage error.
    let o = cmd("pi-usage").args(["--files0-from", "-"]).arg(&a).run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("cannot be used with"), "{}", o.stderr);
}
