//! Issue 15: `--quiet` (diagnostics counted, not printed, the exit status unchanged) on every
//! tool, and the summary of repeated diagnostics: when more than five files report the same
//! kind of problem, the later files' lines of that kind become one line at the end.

use crate::util::{cmd, fixture, TempDir};

/// The tools that read sessions (pi-sessions describes files, see below).
const READERS: [&str; 6] = [
    "pi-branch",
    "pi-tools",
    "pi-usage",
    "pi-compactions",
    "pi-replay",
    "pi-redact",
];

/// A session with two lines that are not JSON: two `malformed_json` diagnostics.
fn bad_session(i: usize) -> String {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"s{i}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n\
         not json\n\
         {{\"type\":\"message\",\"id\":\"a{i}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n\
         still not json\n"
    )
}

fn bad_files(dir: &TempDir, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            dir.write(&format!("bad{i}.jsonl"), bad_session(i))
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Every tool: with --quiet a bad input prints nothing on stderr and still exits 2, with the
/// same output as without it; a good input exits 0 either way.
#[test]
fn quiet_prints_no_diagnostic_and_keeps_the_status() {
    let dir = TempDir::new("quiet");
    let bad = bad_files(&dir, 1).remove(0);
    for tool in READERS {
        let loud = cmd(tool).arg(&bad).run();
        assert_eq!(loud.status, 2, "{tool}: {}", loud.stderr);
        assert_eq!(loud.stderr.lines().count(), 2, "{tool}: {}", loud.stderr);
        for q in ["--quiet", "-q"] {
            let quiet = cmd(tool).arg(q).arg(&bad).run();
            assert_eq!(quiet.status, 2, "{tool} {q}");
            assert_eq!(quiet.stderr, "", "{tool} {q}");
            assert!(quiet.stdout == loud.stdout, "{tool} {q}: output differs");
        }
        let good = cmd(tool)
            .arg("--quiet")
            .arg(fixture("branched.jsonl"))
            .run();
        assert_eq!((good.status, good.stderr.as_str()), (0, ""), "{tool}");
    }
}

/// Notes (a fragment read without its header) are not printed either; they never changed the
/// status.
#[test]
fn quiet_hides_notes() {
    for tool in ["pi-branch", "pi-tools", "pi-usage", "pi-compactions"] {
        let loud = cmd(tool).arg(fixture("fragment-branched.jsonl")).run();
        assert_eq!(loud.status, 0, "{tool}");
        assert!(loud.stderr.contains("note: "), "{tool}: {}", loud.stderr);
        let quiet = cmd(tool)
            .arg("--quiet")
            .arg(fixture("fragment-branched.jsonl"))
            .run();
        assert_eq!((quiet.status, quiet.stderr.as_str()), (0, ""), "{tool}");
        assert!(quiet.stdout == loud.stdout, "{tool}");
    }
}

/// A problem of the run rather than of an input (here: a missing models.json, pi-sessions'
/// missing sessions directory) is not printed with --quiet either; the status stays 2.
#[test]
fn quiet_hides_problems_of_the_run() {
    let o = cmd("pi-usage")
        .args([
            "--quiet",
            "--context",
            "--models",
            "/nonexistent/models.json",
        ])
        .arg(fixture("usage-basic.jsonl"))
        .run();
    assert_eq!((o.status, o.stderr.as_str()), (2, ""));
    let loud = cmd("pi-sessions")
        .env("PI_CODING_AGENT_SESSION_DIR", "/nonexistent/sessions")
        .args(["--json", "--store", "pi"])
        .run();
    assert_eq!(loud.status, 2);
    assert!(
        loud.stderr.contains("no sessions directory"),
        "{}",
        loud.stderr
    );
    let quiet = cmd("pi-sessions")
        .env("PI_CODING_AGENT_SESSION_DIR", "/nonexistent/sessions")
        .args(["--json", "--store", "pi", "--quiet"])
        .run();
    assert_eq!((quiet.status, quiet.stderr.as_str()), (2, ""));
}

/// Eight files with the same two bad lines: the first five files' lines are printed as they
/// always were, the other three are summed up in one line at the end; --verbose prints all
/// sixteen; the status is 2 in every mode; other kinds are counted apart.
#[test]
fn repeated_kinds_are_summed_up_after_five_files() {
    let dir = TempDir::new("repeats");
    let files = bad_files(&dir, 8);
    for tool in READERS {
        let every = cmd(tool).arg("--verbose").args(&files).run();
        assert_eq!(every.status, 2, "{tool}");
        let lines: Vec<&str> = every.stderr.lines().collect();
        assert_eq!(lines.len(), 16, "{tool}: {}", every.stderr);
        assert!(
            lines[0].starts_with(&format!("{tool}: {}:2: malformed JSON", files[0])),
            "{tool}: {}",
            lines[0]
        );
        let o = cmd(tool).args(&files).run();
        assert_eq!(o.status, 2, "{tool}");
        let want = format!(
            "{}\n{tool}: 3 more files had malformed_json (6 lines), not shown; --verbose prints every one\n",
            lines[..10].join("\n")
        );
        assert_eq!(o.stderr, want, "{tool}");
        assert!(o.stdout == every.stdout, "{tool}: output differs");
    }
    // Five files are shown whole: no summary.
    let o = cmd("pi-usage").args(&files[..5]).run();
    assert_eq!(
        (o.status, o.stderr.lines().count()),
        (2, 10),
        "{}",
        o.stderr
    );
    // A sixth file of another kind is shown: kinds are counted apart.
    let glued = dir.write(
        "glued.jsonl",
        std::fs::read(fixture("glued.jsonl")).unwrap(),
    );
    let o = cmd("pi-usage").args(&files).arg(&glued).run();
    assert!(
        o.stderr
            .lines()
            .any(|l| l.starts_with(&format!("pi-usage: {}:", glued.display()))),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.ends_with(
            "3 more files had malformed_json (6 lines), not shown; --verbose prints every one\n"
        ),
        "{}",
        o.stderr
    );
}

/// --quiet and --verbose contradict each other: a usage error.
#[test]
fn quiet_and_verbose_conflict() {
    let o = cmd("pi-usage")
        .args(["--quiet", "--verbose"])
        .arg(fixture("usage-basic.jsonl"))
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("cannot be used with"), "{}", o.stderr);
}
