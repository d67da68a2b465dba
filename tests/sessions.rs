//! pi-sessions: real directory trees built in a temp dir (Pi's layout, nested sub-agent runs,
//! transcripts, hyphenated and dotted folder names, bad files, a symlink loop), the variables
//! that choose the sessions directory, filters, order and outputs, the corpus; and the default
//! every tool shares: no FILE on a terminal reads the user's sessions.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Pi's folder name for a cwd.
fn enc(p: &Path) -> String {
    let s = p.to_str().unwrap();
    let s = s.strip_prefix('/').unwrap_or(s);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

fn header(id: &str, cwd: Option<&str>, ts: &str) -> String {
    match cwd {
        Some(c) => format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{ts}","cwd":"{c}"}}"#
        ),
        None => format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{ts}"}}"#),
    }
}

fn user(id: &str, parent: Option<&str>, ts: &str, text: &str) -> String {
    let p = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{{"role":"user","content":"{text}"}}}}"#
    )
}

/// A small ok session: header and one user message.
fn session(id: &str, cwd: Option<&str>) -> String {
    format!(
        "{}\n{}\n",
        header(id, cwd, "2026-01-01T00:00:00.000Z"),
        user("u1", None, "2026-01-01T00:00:01.000Z", "hello")
    )
}

const TRANSCRIPT: &str = "{\"version\":1,\"recordType\":\"message\",\"text\":\"debug\"}\n";

fn sessions_json(dir: &Path, extra: &[&str]) -> Output {
    cmd("pi-sessions")
        .arg("--json")
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .run()
}

/// The record whose path ends with `suffix`.
fn rec<'a>(recs: &'a [Value], suffix: &str) -> &'a Value {
    let hits: Vec<&Value> = recs
        .iter()
        .filter(|r| r["path"].as_str().unwrap().ends_with(suffix))
        .collect();
    assert_eq!(hits.len(), 1, "records ending in {suffix}: {recs:#?}");
    hits[0]
}

fn paths_of(o: &Output) -> Vec<String> {
    o.records()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn layout_projects_nesting_and_a_symlink_loop() {
    let t = TempDir::new("layout");
    let work = t.path().join("work");
    let proj = work.join("my-proj-x");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(work.join(".dot-dir").join("inner")).unwrap();
    let root = t.path().join("sessions");
    let f1 = enc(&proj);
    let s1 = format!("{f1}/2026-01-01T00-00-00-000Z_a.jsonl");
    t.write(&format!("sessions/{s1}"), session("s-a", None));
    // A project folder that no longer exists: the unresolved tail stays one segment.
    let gone = enc(&work.join("gone-dir-name"));
    t.write(
        &format!("sessions/{gone}/2026-01-01T00-00-00-000Z_b.jsonl"),
        session("s-b", None),
    );
    // A dot-folder, spelled as Pi spells it and with its dot dropped.
    let dotted = enc(&work.join(".dot-dir").join("inner"));
    t.write(&format!("sessions/{dotted}/c.jsonl"), session("s-c", None));
    let undotted = enc(&work.join("dot-dir").join("inner"));
    t.write(
        &format!("sessions/{undotted}/d.jsonl"),
        session("s-d", None),
    );
    // The header's cwd wins over the folder name.
    t.write(
        &format!("sessions/{f1}/e.jsonl"),
        session("s-e", Some("/somewhere/else")),
    );
    // A sub-agent run and a debug transcript nested in session a's own folder.
    t.write(
        &format!("sessions/{f1}/2026-01-01T00-00-00-000Z_a/run-0/session.jsonl"),
        session("s-run", Some("/sub/agent")),
    );
    t.write(
        &format!("sessions/{f1}/2026-01-01T00-00-00-000Z_a/subagent-artifacts/x_transcript.jsonl"),
        TRANSCRIPT,
    );
    // A Windows cwd: the drive letter's colon became a dash.
    t.write(
        "sessions/--Q--Users-nobody-x--/w.jsonl",
        session("s-w", None),
    );
    t.write("sessions/notes.txt", "not a session file name");
    std::os::unix::fs::symlink(&root, root.join(&f1).join("loop")).unwrap();

    let o = sessions_json(&root, &[]);
    assert_eq!(o.status, 2, "the loop is reported: {}", o.stderr);
    assert!(
        o.stderr.contains("symbolic link loop") && o.stderr.contains("loop"),
        "{}",
        o.stderr
    );
    let recs = o.records();
    assert_eq!(recs.len(), 8, "every .jsonl file once: {recs:#?}");

    let a = rec(&recs, "_a.jsonl");
    assert_eq!(a["status"], "ok");
    assert_eq!(a["cwd"], Value::Null);
    assert_eq!(a["project"], proj.to_str().unwrap());
    assert_eq!(a["project_source"], "decoded");
    assert_eq!(a["parent_file"], Value::Null);

    let b = rec(&recs, "_b.jsonl");
    assert_eq!(
        b["project"].as_str().unwrap(),
        format!("{}/gone-dir-name", work.display())
    );
    assert_eq!(b["project_source"], "decoded_partial");

    for f in ["/c.jsonl", "/d.jsonl"] {
        let r = rec(&recs, f);
        assert_eq!(
            r["project"].as_str().unwrap(),
            work.join(".dot-dir").join("inner").to_str().unwrap(),
            "{f}"
        );
        assert_eq!(r["project_source"], "decoded", "{f}");
    }

    let e = rec(&recs, "/e.jsonl");
    assert_eq!(e["project"], "/somewhere/else");
    assert_eq!(e["project_source"], "header");

    let parent = root.join(&s1);
    let run = rec(&recs, "run-0/session.jsonl");
    assert_eq!(run["status"], "ok");
    assert_eq!(run["parent_file"], parent.to_str().unwrap());
    let tr = rec(&recs, "x_transcript.jsonl");
    assert_eq!(tr["status"], "not_session");
    assert!(tr["reason"].as_str().unwrap().contains("recordType"));
    assert_eq!(tr["parent_file"], parent.to_str().unwrap());
    assert_eq!(tr["session"], Value::Null);

    let w = rec(&recs, "/w.jsonl");
    assert_eq!(w["project"], "Q:\\Users-nobody-x");
    assert_eq!(w["project_source"], "decoded_partial");
}

#[test]
fn statuses_and_reasons_of_bad_files() {
    let t = TempDir::new("bad");
    let h = header("s-ok", Some("/p"), "2026-01-01T00:00:00.000Z");
    t.write("empty.jsonl", "");
    t.write(
        "bad-id.jsonl",
        "{\"type\":\"session\",\"version\":3,\"id\":42,\"cwd\":\"/p\"}\n",
    );
    t.write(
        "headerless.jsonl",
        format!("{}\n", user("u", None, "2026-01-01T00:00:00Z", "x")),
    );
    t.write(
        "title-first.jsonl",
        format!("{{\"type\":\"title\",\"title\":\"t\"}}\n{h}\n"),
    );
    t.write("null-first.jsonl", format!("null\n{h}\n"));
    t.write("blank.jsonl", "\n  \n");
    t.write("metadata.jsonl", format!("{h}\n"));
    t.write("garbage-then-header.jsonl", format!("not json\n{h}\n"));
    t.write("transcript.jsonl", TRANSCRIPT);
    std::os::unix::fs::symlink(t.path().join("nowhere"), t.path().join("dangling.jsonl")).unwrap();

    let o = sessions_json(t.path(), &[]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains("dangling.jsonl: broken symbolic link"),
        "{}",
        o.stderr
    );
    let recs = o.records();
    assert_eq!(recs.len(), 9);

    let e = rec(&recs, "empty.jsonl");
    assert_eq!(
        (e["status"].as_str(), e["bytes"].as_u64()),
        (Some("empty"), Some(0))
    );
    assert_eq!(e["entries"], Value::Null);
    assert_eq!(e["modified_source"], "mtime");

    let r = rec(&recs, "bad-id.jsonl");
    assert_eq!(r["status"], "unreadable");
    assert!(
        r["reason"].as_str().unwrap().contains("id is a number"),
        "{r}"
    );

    let r = rec(&recs, "headerless.jsonl");
    assert_eq!(r["status"], "unreadable");
    assert!(
        r["reason"].as_str().unwrap().contains("\"message\" entry"),
        "{r}"
    );
    assert_eq!(r["session"], Value::Null);

    let r = rec(&recs, "title-first.jsonl");
    assert_eq!(r["status"], "unreadable");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("a valid header follows on line 2"),
        "{r}"
    );
    assert_eq!(r["session"], "s-ok", "filled from the later header");

    let r = rec(&recs, "null-first.jsonl");
    assert_eq!(r["status"], "unreadable");
    assert_eq!(r["bad_lines"], 1);

    let r = rec(&recs, "blank.jsonl");
    assert_eq!(r["status"], "unreadable");
    assert_eq!(r["lines"], 2);

    let r = rec(&recs, "metadata.jsonl");
    assert_eq!(r["status"], "metadata_only");
    assert_eq!(r["reason"], Value::Null);
    assert_eq!(r["messages"], 0);
    assert_eq!(r["modified_source"], "header");

    // Pi skips lines it cannot parse: the header is still the first record.
    let r = rec(&recs, "garbage-then-header.jsonl");
    assert_eq!(r["status"], "metadata_only");
    assert_eq!(r["bad_lines"], 1);

    assert_eq!(rec(&recs, "transcript.jsonl")["status"], "not_session");

    // --paths leaves out what the tools would not read; --status picks explicitly.
    let o = cmd("pi-sessions")
        .arg("--paths")
        .arg("--dir")
        .arg(t.path())
        .run();
    let names: Vec<String> = o.out().lines().map(file_name).collect();
    assert_eq!(
        names,
        [
            "bad-id.jsonl",
            "blank.jsonl",
            "garbage-then-header.jsonl",
            "headerless.jsonl",
            "metadata.jsonl",
            "null-first.jsonl",
            "title-first.jsonl"
        ]
    );
    let o = cmd("pi-sessions")
        .args([
            "-0",
            "--status",
            "empty",
            "--status",
            "not_session",
            "--dir",
        ])
        .arg(t.path())
        .run();
    let names: Vec<String> = o
        .out()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(file_name)
        .collect();
    assert_eq!(names, ["empty.jsonl", "transcript.jsonl"]);
    assert!(o.out().ends_with('\0') && !o.out().contains('\n'));
}

#[test]
fn counts_names_models_and_modified_follow_pi() {
    let o = cmd("pi-sessions")
        .arg("--json")
        .arg("--dir")
        .arg(fixture("session-meta.jsonl"))
        .ok();
    let r = &o.records()[0];
    let want = serde_json::json!({
        "type": "session_file",
        "path": fixture_str("session-meta.jsonl"),
        "session": "s-meta",
        "version": 3,
        "status": "ok",
        "reason": null,
        "parent_file": null,
        "role": "session",
        "cwd": "/nonexistent/pi-jsonl/meta-project",
        "project": "/nonexistent/pi-jsonl/meta-project",
        "project_source": "header",
        "name": "second name",
        "parent_session": null,
        "created": "2026-03-01T10:00:00.000Z",
        // The latest user/assistant message with content, by the entry's time when the
        // message has no numeric one; the toolResult and the content-less message do not count.
        "modified": "2026-03-01T11:00:00.000Z",
        "modified_source": "message",
        "bytes": std::fs::metadata(fixture("session-meta.jsonl")).unwrap().len(),
        "lines": 12,
        "headers": 1,
        "entries": 10,
        "messages": 6,
        "user_messages": 2,
        "assistant_messages": 3,
        "leaves": 2,
        "compactions": 1,
        "unknown_entries": 0,
        "unknown_roles": 0,
        "models": ["m-one", "m-two"],
        "bad_lines": 1
    });
    assert_eq!(r, &want);
}

#[test]
fn names_clear_on_blank_and_times_fall_back() {
    let t = TempDir::new("names");
    let h = header("s-n", Some("/p"), "2026-01-01T00:00:00.000Z");
    let info = |id: &str, name: &str| {
        format!(
            r#"{{"type":"session_info","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:05Z","name":"{name}"}}"#
        )
    };
    t.write(
        "cleared.jsonl",
        format!("{h}\n{}\n{}\n", info("i1", "named"), info("i2", "   ")),
    );
    t.write(
        "renamed.jsonl",
        format!(
            "{h}\n{}\n{}\n",
            info("i1", " old "),
            info("i2", "  new one ")
        ),
    );
    // A numeric message timestamp (ms) wins over the entry's own.
    t.write(
        "numeric.jsonl",
        format!(
            "{h}\n{}\n",
            r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"timestamp":1767312000000}}"#
        ),
    );
    t.write(
        "no-time.jsonl",
        "{\"type\":\"session\",\"version\":3,\"id\":\"s-t\",\"cwd\":\"/p\"}\n",
    );
    let recs = sessions_json(t.path(), &[]).records();
    assert_eq!(rec(&recs, "cleared.jsonl")["name"], Value::Null);
    assert_eq!(rec(&recs, "renamed.jsonl")["name"], "new one");
    let n = rec(&recs, "numeric.jsonl");
    assert_eq!(
        (n["modified"].as_str(), n["modified_source"].as_str()),
        (Some("2026-01-02T00:00:00.000Z"), Some("message"))
    );
    let m = rec(&recs, "no-time.jsonl");
    assert_eq!(m["created"], Value::Null);
    assert_eq!(m["modified_source"], "mtime");
    assert!(m["modified"].as_str().unwrap().ends_with('Z'));
}

/// Three sessions whose creation, modification, size and project orders all differ.
fn three(t: &TempDir) {
    let mk = |id: &str, cwd: &str, created: &str, modified: &str, pad: usize| {
        format!(
            "{}\n{}\n",
            header(id, Some(cwd), created),
            user("u1", None, modified, &"x".repeat(pad))
        )
    };
    t.write(
        "a.jsonl",
        mk(
            "s-a",
            "/p/alpha",
            "2026-01-01T00:00:00Z",
            "2026-01-10T12:00:00Z",
            10,
        ),
    );
    t.write(
        "b.jsonl",
        mk(
            "s-b",
            "/p/beta",
            "2026-01-05T00:00:00Z",
            "2026-02-10T12:00:00Z",
            3000,
        ),
    );
    t.write(
        "c.jsonl",
        mk(
            "s-c",
            "/p/alpha-two",
            "2026-01-03T00:00:00Z",
            "2026-03-10T12:00:00Z",
            500,
        ),
    );
}

fn names(t: &TempDir, extra: &[&str]) -> Vec<String> {
    let o = cmd("pi-sessions")
        .arg("--json")
        .arg("--dir")
        .arg(t.path())
        .args(extra)
        .ok();
    paths_of(&o).iter().map(|p| file_name(p)).collect()
}

#[test]
fn sort_and_filters() {
    let t = TempDir::new("filters");
    three(&t);
    let n = |extra: &[&str]| names(&t, extra);
    assert_eq!(n(&[]), ["a.jsonl", "b.jsonl", "c.jsonl"]);
    assert_eq!(n(&["--sort", "path"]), ["a.jsonl", "b.jsonl", "c.jsonl"]);
    assert_eq!(n(&["--sort", "created"]), ["b.jsonl", "c.jsonl", "a.jsonl"]);
    assert_eq!(
        n(&["--sort", "modified"]),
        ["c.jsonl", "b.jsonl", "a.jsonl"]
    );
    assert_eq!(n(&["--sort", "size"]), ["b.jsonl", "c.jsonl", "a.jsonl"]);
    assert_eq!(
        n(&["--sort", "modified", "--reverse"]),
        ["a.jsonl", "b.jsonl", "c.jsonl"]
    );
    assert_eq!(n(&["--project", "alpha"]), ["a.jsonl", "c.jsonl"]);
    assert_eq!(n(&["--project", "Alpha"]), Vec::<String>::new());
    // Dates are whole days (UTC); full times are exact.
    assert_eq!(n(&["--since", "2026-02-10"]), ["b.jsonl", "c.jsonl"]);
    assert_eq!(n(&["--until", "2026-02-10"]), ["a.jsonl", "b.jsonl"]);
    assert_eq!(n(&["--until", "2026-02-10T11:59:59Z"]), ["a.jsonl"]);
    assert_eq!(n(&["--since", "2026-02-10T12:00:00.001Z"]), ["c.jsonl"]);
    assert_eq!(
        n(&[
            "--since",
            "2026-02-10T13:00:00+02:00",
            "--until",
            "2026-02-10T12:00:00Z"
        ]),
        ["b.jsonl"]
    );
    let o = cmd("pi-sessions")
        .args(["--since", "last week", "--dir"])
        .arg(t.path())
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("YYYY-MM-DD"), "{}", o.stderr);
    assert!(o.stdout.is_empty());
}

#[test]
fn prompts_only_on_request() {
    let o = cmd("pi-sessions")
        .arg("--json")
        .arg("--dir")
        .arg(fixture("session-meta.jsonl"))
        .ok();
    assert!(!o.out().contains("first_prompt"));
    assert!(!o.out().contains("Explain"), "no session text by default");
    let o = cmd("pi-sessions")
        .args(["--json", "--prompts", "--prompt-chars", "12", "--dir"])
        .arg(fixture("session-meta.jsonl"))
        .ok();
    assert_eq!(o.records()[0]["first_prompt"], "Explain the…");
    let o = cmd("pi-sessions")
        .args(["--json", "--prompts", "--dir"])
        .arg(fixture("header-only.jsonl"))
        .ok();
    assert_eq!(o.records()[0]["first_prompt"], Value::Null);
}

/// The table: newest first; the name, and a session's first words only with --prompts (its
/// --help promises that no session text is printed without it; issue 15).
#[test]
fn table_is_newest_first_with_names_and_first_words_only_with_prompts() {
    let t = TempDir::new("table");
    three(&t);
    t.write(
        "d.jsonl",
        format!(
            "{}\n{}\n{}\n",
            header("s-d", Some("/p/delta"), "2026-01-01T00:00:00Z"),
            user("u1", None, "2026-01-20T00:00:00Z", "first words of a prompt"),
            r#"{"type":"session_info","id":"i","parentId":"u1","timestamp":"2026-01-20T00:00:01Z","name":"Named \u001b[31m session"}"#
        ),
    );
    t.write("z.jsonl", "{\"type\":\"message\"}\n");
    let table = |prompts: bool| {
        let o = cmd("pi-sessions")
            .arg("--table")
            .args(prompts.then_some("--prompts"))
            .arg("--dir")
            .arg(t.path())
            .env("COLUMNS", "100")
            .run();
        assert_eq!(o.status, 0, "{}", o.stderr);
        o.out()
    };
    let text = table(false);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("Age") && lines[0].contains("Project"));
    assert_eq!(lines.len(), 6);
    let order: Vec<&str> = lines[1..]
        .iter()
        .map(|l| {
            [
                "/p/alpha-two",
                "/p/beta",
                "/p/delta",
                "/p/alpha",
                "(unreadable)",
            ]
            .into_iter()
            .find(|p| l.contains(p))
            .unwrap_or_else(|| panic!("row {l}"))
        })
        .collect();
    // The unreadable file's time is its mtime (now): newest.
    assert_eq!(
        order,
        [
            "(unreadable)",
            "/p/alpha-two",
            "/p/beta",
            "/p/delta",
            "/p/alpha"
        ]
    );
    assert!(
        lines[4].contains("Named \\u{1b}[31m session"),
        "{}",
        lines[4]
    );
    assert!(!text.contains('x'), "no prompt without --prompts:\n{text}");
    assert!(lines[2].ends_with("(none)"), "{}", lines[2]);
    assert!(!text.contains('\u{1b}'));
    let text = table(true);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[2].contains(&"x".repeat(20)),
        "first words: {}",
        lines[2]
    );
    // A name still wins over the first prompt.
    assert!(!text.contains("first words"), "{text}");
}

#[test]
fn environment_chooses_the_sessions_directory() {
    let t = TempDir::new("env");
    t.write("agent/sessions/--p--/f.jsonl", session("s-f", Some("/p")));
    t.write("other/--p--/g.jsonl", session("s-g", Some("/p")));
    t.write(
        "home/.pi/agent/sessions/--p--/h.jsonl",
        session("s-h", Some("/p")),
    );
    let p = |k: &str| t.path().join(k);
    let found = |o: Output| -> Vec<String> {
        assert_eq!(o.status, 0, "{}", o.stderr);
        o.out().lines().map(file_name).collect()
    };
    let run = || cmd("pi-sessions").arg("--paths");
    assert_eq!(
        found(run().env("PI_CODING_AGENT_DIR", p("agent")).run()),
        ["f.jsonl"]
    );
    assert_eq!(
        found(
            run()
                .env("PI_CODING_AGENT_DIR", p("agent"))
                .env("PI_CODING_AGENT_SESSION_DIR", p("other"))
                .run()
        ),
        ["g.jsonl"]
    );
    // An empty variable counts as unset, as in Pi.
    assert_eq!(
        found(
            run()
                .env("PI_CODING_AGENT_DIR", p("agent"))
                .env("PI_CODING_AGENT_SESSION_DIR", "")
                .run()
        ),
        ["f.jsonl"]
    );
    assert_eq!(found(run().env("HOME", p("home")).run()), ["h.jsonl"]);
    // A leading ~/ is expanded.
    assert_eq!(
        found(
            run()
                .env("HOME", p("home"))
                .env("PI_CODING_AGENT_SESSION_DIR", "~/../other")
                .run()
        ),
        ["g.jsonl"]
    );
    // --dir overrides every variable.
    assert_eq!(
        found(
            run()
                .env("PI_CODING_AGENT_SESSION_DIR", p("other"))
                .arg("--dir")
                .arg(p("agent"))
                .run()
        ),
        ["f.jsonl"]
    );
    // The default HOME of the harness has no sessions: reported, status 2.
    let o = run().run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("no sessions directory"), "{}", o.stderr);
    let o = cmd("pi-sessions").env_remove("HOME").run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("HOME"), "{}", o.stderr);
}

#[test]
fn several_dirs_and_a_file_as_dir() {
    let t = TempDir::new("multi");
    three(&t);
    let o = cmd("pi-sessions")
        .arg("--paths")
        .arg("--dir")
        .arg(t.path().join("c.jsonl"))
        .arg("--dir")
        .arg(t.path())
        .arg("--dir")
        .arg(t.path().join("missing"))
        .run();
    assert_eq!(o.status, 2);
    assert!(
        o.stderr.contains("missing: no such directory"),
        "{}",
        o.stderr
    );
    // c.jsonl is reached twice and listed once.
    let names: Vec<String> = o.out().lines().map(file_name).collect();
    assert_eq!(names, ["a.jsonl", "b.jsonl", "c.jsonl"]);
}

#[test]
fn unreadable_directory_is_reported_and_the_scan_goes_on() {
    let t = TempDir::new("perm");
    three(&t);
    t.write("locked/x.jsonl", session("s-x", Some("/p")));
    let locked = t.path().join("locked");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = std::fs::read_dir(&locked).is_ok();
    let o = cmd("pi-sessions")
        .arg("--paths")
        .arg("--dir")
        .arg(t.path())
        .run();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if readable {
        eprintln!("running with privileges that read any directory: skipped");
        return;
    }
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("cannot read directory"), "{}", o.stderr);
    assert_eq!(o.out().lines().count(), 3);
}

#[test]
fn existing_fixtures_are_described() {
    let o = sessions_json(&root().join("fixtures"), &[]);
    assert!(o.status == 0 || o.status == 2);
    let recs = o.records();
    let n = walk_count(&root().join("fixtures"));
    assert_eq!(recs.len(), n);
    assert_eq!(rec(&recs, "/no-header.jsonl")["status"], "unreadable");
    assert_eq!(rec(&recs, "/header-only.jsonl")["status"], "metadata_only");
    assert_eq!(rec(&recs, "/two-sessions.jsonl")["headers"], 2);
    assert_eq!(rec(&recs, "/branched.jsonl")["leaves"], 2);
    assert_eq!(rec(&recs, "/v1-linear.jsonl")["leaves"], 1);
    assert_eq!(rec(&recs, "/v1-linear.jsonl")["version"], 1);
}

/// How many `.jsonl` files lie below `dir`.
fn walk_count(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn corpus_every_file_gives_exactly_one_record() {
    let Some(corpus) = corpus() else {
        eprintln!("corpus absent: skipped");
        return;
    };
    let o = sessions_json(&corpus, &["--ext", "jsonl", "--ext", "json"]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let recs = o.records();
    let mut got: Vec<PathBuf> = recs
        .iter()
        .map(|r| PathBuf::from(r["path"].as_str().unwrap()))
        .collect();
    got.sort();
    assert_eq!(got, corpus_files(), "one record per corpus file");
    // What Pi itself accepts (recorded by scripts/pi-reference) is exactly what is ok here.
    let refs =
        std::fs::read_to_string(root().join("tests/data/pi-reference-branches.jsonl")).unwrap();
    let mut checked = 0;
    for line in refs.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let path = corpus.join(r["file"].as_str().unwrap());
        let Some(m) = recs.iter().find(|m| m["path"].as_str() == path.to_str()) else {
            continue;
        };
        let readable = matches!(m["status"].as_str(), Some("ok" | "metadata_only"));
        assert_eq!(
            readable,
            r["accepted"].as_bool().unwrap(),
            "{}: {m}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} checked");
}

// ---------------------------------------------------------------------------------------------
// Every tool defaults to the user's sessions (pi-branch stands for them all).

fn default_tree(t: &TempDir) -> (PathBuf, Vec<PathBuf>) {
    let root = t.path().join("s");
    let a = t.write(
        "s/--p--/2026-01-01T00-00-00-000Z_a.jsonl",
        session("s-a", Some("/p")),
    );
    let run = t.write(
        "s/--p--/2026-01-01T00-00-00-000Z_a/run-0/session.jsonl",
        session("s-run", Some("/p")),
    );
    t.write(
        "s/--p--/2026-01-01T00-00-00-000Z_a/subagent-artifacts/t_transcript.jsonl",
        TRANSCRIPT,
    );
    t.write("s/--p--/empty.jsonl", "");
    let b = t.write("s/--q--/b.jsonl", session("s-b", Some("/q")));
    (root, vec![a, run, b])
}

#[test]
fn tools_read_every_session_when_stdin_is_a_terminal() {
    let t = TempDir::new("default");
    let (root, fed) = default_tree(&t);
    let o = cmd("pi-branch")
        .env("PI_JSONL_ASSUME_TTY", "1")
        .env("PI_CODING_AGENT_SESSION_DIR", &root)
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let mut want = Vec::new();
    for f in &fed {
        want.extend(cmd("pi-branch").arg(f).ok().stdout);
    }
    assert_eq!(o.out(), String::from_utf8(want).unwrap());
    assert_eq!(
        o.stderr.trim(),
        format!(
            "pi-branch: no FILE given and stdin is a terminal: reading 3 session files under {}; skipped 1 empty, 1 not sessions",
            root.display()
        )
    );
    // The same files pi-sessions --paths lists.
    let listed = cmd("pi-sessions")
        .arg("--paths")
        .env("PI_CODING_AGENT_SESSION_DIR", &root)
        .ok();
    let listed: Vec<PathBuf> = listed.out().lines().map(PathBuf::from).collect();
    assert_eq!(listed, fed);
}

#[test]
fn piped_stdin_and_file_arguments_keep_their_meaning() {
    let t = TempDir::new("piped");
    let (root, _) = default_tree(&t);
    let input = read_fixture("branched.jsonl");
    let alone = cmd("pi-branch").arg(fixture("branched.jsonl")).ok();
    let o = cmd("pi-branch")
        .env("PI_CODING_AGENT_SESSION_DIR", &root)
        .stdin(input)
        .ok();
    assert_eq!(o.stdout, alone.stdout);
    let o = cmd("pi-branch")
        .env("PI_JSONL_ASSUME_TTY", "1")
        .env("PI_CODING_AGENT_SESSION_DIR", &root)
        .arg(fixture("branched.jsonl"))
        .ok();
    assert_eq!(o.stdout, alone.stdout);
}

#[test]
fn no_sessions_directory_is_reported() {
    let t = TempDir::new("nodir");
    let o = cmd("pi-branch")
        .env("PI_JSONL_ASSUME_TTY", "1")
        .env("PI_CODING_AGENT_SESSION_DIR", t.path().join("absent"))
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("no sessions directory"), "{}", o.stderr);
    assert!(o.stdout.is_empty());
}

#[test]
fn every_reading_tools_man_page_documents_the_default() {
    for (name, page) in pi_jsonl::man_pages() {
        let has =
            page.contains("PI\\_JSONL\\_ASSUME\\_TTY") || page.contains("PI_JSONL_ASSUME_TTY");
        assert_eq!(has, name != "pi-sessions", "{name}");
        assert!(page.contains("PI_CODING_AGENT_SESSION_DIR"), "{name}");
    }
}

#[test]
fn committed_tree_fixture_places_nested_files() {
    let tree = fixture("sessions-tree");
    let o = sessions_json(&tree, &[]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let recs = o.records();
    assert_eq!(recs.len(), 3);
    let top = rec(&recs, "_s-tree.jsonl");
    assert_eq!(top["project"], "/nonexistent-pi-jsonl-tree");
    assert_eq!(top["project_source"], "decoded_partial");
    assert_eq!(top["parent_session"], "/nonexistent/older.jsonl");
    assert_eq!(top["name"], "tree walk");
    for nested in ["run-0/session.jsonl", "r1_transcript.jsonl"] {
        assert_eq!(rec(&recs, nested)["parent_file"], top["path"], "{nested}");
    }
}

/// Issue 19, item 11: `--paths` (one path a line) never prints a name that holds a newline or
/// a control character: it would split in two for xargs or drive a terminal. It reports it and
/// points to `--paths0`, which lists it.
#[test]
fn paths_leave_out_names_with_newlines_and_say_so() {
    let dir = TempDir::new("sessions-odd-names");
    dir.write("ok.jsonl", session("s-ok", Some("/p")));
    dir.write("bad\nname.jsonl", session("s-nl", Some("/p")));
    dir.write("esc\u{1b}[31m.jsonl", session("s-esc", Some("/p")));
    let d = dir.path().to_string_lossy().into_owned();
    let o = cmd("pi-sessions").args(["--paths", "--dir", &d]).run();
    assert_eq!(o.status, 2);
    assert_eq!(o.out(), format!("{d}/ok.jsonl\n"));
    assert_eq!(o.stderr.matches("use --paths0").count(), 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("bad\\nname.jsonl: not listed"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains('\u{1b}'), "{}", o.stderr);
    let o = cmd("pi-sessions").args(["--paths0", "--dir", &d]).run();
    assert_eq!((o.status, o.stdout.split(|&c| c == 0).count()), (0, 4));
}

/// Issue 19, item 3: any --threads value works and costs little more than the best one: the
/// threads are capped (8 per CPU, at least 64, within the open-file limit).
#[test]
fn a_huge_thread_count_is_capped() {
    let o = cmd("pi-sessions")
        .args([
            "--threads",
            "16384",
            "--paths",
            "--dir",
            &fixture_str("sessions-tree"),
        ])
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(o.out().lines().count(), 2);
}

/// Issue 13: entry types and message roles no Pi writes are counted as unknown (and passed
/// through untouched by pi-branch); Pi 1.x's and oh-my-pi's own are known.
#[test]
fn unknown_entry_types_and_roles_are_counted_as_such() {
    let tmp = TempDir::new("unknown-kinds");
    for name in [
        "usage-pi1-sources.jsonl",
        "omp-session.jsonl",
        "pi16-usage-sources.jsonl",
    ] {
        std::fs::copy(fixture(name), tmp.path().join(name)).unwrap();
    }
    let o = cmd("pi-sessions")
        .arg("--json")
        .arg(tmp.path())
        .ok()
        .records();
    let counts = |name: &str| {
        let r = o
            .iter()
            .find(|r| r["path"].as_str().unwrap().ends_with(name))
            .unwrap();
        (r["unknown_entries"].clone(), r["unknown_roles"].clone())
    };
    // One `future_entry` and one message of role `reviewer`.
    assert_eq!(counts("usage-pi1-sources.jsonl"), (1.into(), 1.into()));
    assert_eq!(counts("omp-session.jsonl"), (0.into(), 0.into()));
    assert_eq!(counts("pi16-usage-sources.jsonl"), (0.into(), 0.into()));
    // pi-branch keeps them on the branch byte for byte.
    let text = std::fs::read_to_string(fixture("usage-pi1-sources.jsonl")).unwrap();
    let kept = cmd("pi-branch")
        .arg(fixture("usage-pi1-sources.jsonl"))
        .ok()
        .out();
    for l in text
        .lines()
        .filter(|l| l.contains("future_entry") || l.contains("reviewer"))
    {
        assert!(kept.lines().any(|k| k == l), "{l}");
    }
}

/// Issue 15: the table fits COLUMNS at 60, 80 and 160: cells are cut first (a session id keeps
/// its end), then columns are dropped in the man page's order (Size, Messages, Models, Age,
/// Project) and a note names them; Session, Cost and Name stay.
#[test]
fn table_fits_the_width() {
    let t = TempDir::new("table-width");
    let long_cwd = format!("/home/someone/{}project", "deep/".repeat(4));
    t.write(
        "s.jsonl",
        format!(
            "{}\n{}\n{}\n",
            header("019f0091-2110-7000-a1e2-147639fff216", Some(&long_cwd), "2026-01-01T00:00:00Z"),
            user("u1", None, "2026-01-20T00:00:00Z", "hello"),
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-20T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"total":0.0123}}}}"#
        ),
    );
    let at = |columns: usize| {
        let o = cmd("pi-sessions")
            .arg("--table")
            .arg(t.path())
            .env("COLUMNS", columns.to_string())
            .run();
        assert_eq!(o.status, 0, "{}", o.stderr);
        o.out()
    };
    let wide = at(160);
    let head: Vec<&str> = wide.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["Age", "Session", "Size", "Messages", "Cost", "Models", "Project", "Name"]
    );
    assert!(wide.contains(&long_cwd) && wide.contains("019f0091-2110-7000-a1e2-147639fff216"));
    assert!(wide.contains("$0.0123"), "{wide}");
    assert!(!wide.contains("not shown"), "{wide}");
    for columns in [60, 80, 160] {
        let text = at(columns);
        for l in text.lines() {
            assert!(l.chars().count() <= columns, "COLUMNS={columns}:\n{text}");
        }
        let head = text.lines().next().unwrap();
        for stays in ["Session", "Cost", "Name"] {
            assert!(head.contains(stays), "COLUMNS={columns}: {head}");
        }
    }
    let t80 = at(80);
    assert!(
        t80.contains("…147639fff216"),
        "the id keeps its end:\n{t80}"
    );
    let t60 = at(60);
    assert!(
        t60.contains(
            "not shown, to fit COLUMNS: Size, Messages, Models (--json\n  has every field)"
        ),
        "{t60}"
    );
}

/// `--paths` and `--paths0` hand paths to other tools, so what is not a regular file (a FIFO
/// would block `xargs -0 pi-usage`) is left out, as empty files are; `--status unreadable`
/// still lists it, and the record describes it.
#[test]
fn paths_leave_out_what_is_not_a_regular_file() {
    let t = TempDir::new("paths-fifo");
    let s = t.write(
        "--p--/s.jsonl",
        std::fs::read(fixture("branched.jsonl")).unwrap(),
    );
    let fifo = t.path().join("--p--/fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable: skipped");
        return;
    }
    let dir = t.path().to_string_lossy().into_owned();
    let o = cmd("pi-sessions").args(["--paths", &dir]).run();
    assert_eq!(o.out(), format!("{}\n", s.display()), "{}", o.stderr);
    let o = cmd("pi-sessions").args(["-0", &dir]).run();
    assert_eq!(o.out(), format!("{}\0", s.display()));
    let o = cmd("pi-sessions")
        .args(["--paths", "--status", "unreadable", &dir])
        .run();
    assert_eq!(o.out(), format!("{}\n", fifo.display()));
    let o = cmd("pi-sessions").args(["--json", &dir]).run();
    assert_eq!(o.out().lines().count(), 2, "{}", o.out());
}

/// A session without a cwd takes its project from the `--<encoded cwd>--` folder it lies in,
/// whatever way its path is spelt: the folder given as `.`, the file by its name alone, by its
/// absolute path or through a folder given as `.`, pi-sessions and pi-usage both look at the
/// folders above the file as it really is (review item 3: `.` and `x.jsonl` gave null).
#[test]
fn a_cwd_less_file_has_one_project_however_its_path_is_spelt() {
    let t = TempDir::new("spelt");
    let app = t.path().join("fs").join("my-app");
    std::fs::create_dir_all(&app).unwrap();
    let folder = t.path().join("sessions").join(enc(&app));
    let file = t.write(
        &format!("sessions/{}/x.jsonl", enc(&app)),
        session("s-x", None),
    );
    let want = app.to_str().unwrap();
    let sessions = folder.parent().unwrap();
    let here = |cwd: &Path, arg: &str| {
        let o = cmd("pi-sessions").arg("--json").arg(arg).dir(cwd).run();
        assert_eq!(o.status, 0, "{arg} in {cwd:?}: {}", o.stderr);
        let r = o.records();
        assert_eq!(r.len(), 1, "{arg} in {cwd:?}");
        (r[0]["project"].clone(), r[0]["project_source"].clone())
    };
    for (cwd, arg) in [
        (&folder, "."),
        (&folder, "x.jsonl"),
        (&folder, "./x.jsonl"),
        (&folder, file.to_str().unwrap()),
        (&folder, folder.to_str().unwrap()),
        (&sessions.to_path_buf(), "."),
    ] {
        assert_eq!(
            here(cwd, arg),
            (Value::from(want), Value::from("decoded")),
            "{arg} in {cwd:?}"
        );
    }
    for arg in [".", "x.jsonl"] {
        let o = cmd("pi-usage")
            .args(["--by", "project", arg])
            .dir(&folder)
            .run();
        assert_eq!(o.status, 0, "{}", o.stderr);
        assert_eq!(o.records()[0]["project"], want, "pi-usage {arg}");
    }
}

/// Review item 4: on a narrow terminal the Session column gives up its width first, down to
/// what still tells the ids apart (13 columns here), and Name takes what is left; Name is no
/// longer cut to its floor while Session keeps a wider cut. The table is drawn on a real
/// terminal (`script`) at several widths.
#[test]
fn a_narrow_table_cuts_session_ids_before_names() {
    let t = TempDir::new("table-fair");
    for i in 1..=3 {
        t.write(
            &format!("--tmp--/{i}.jsonl"),
            format!(
                "{}\n{}\n{}\n",
                header(&format!("019f5be5-7b1a-7000-8a7c-db42f66cd11{i}"), Some("/tmp"), "2026-11-01T10:00:00.000Z"),
                user("a", None, "2026-11-01T10:00:01.000Z", "x"),
                format_args!(r#"{{"type":"session_info","id":"b","parentId":"a","timestamp":"2026-11-01T10:00:02.000Z","name":"Refactor the loader, part {i} of three"}}"#),
            ),
        );
    }
    let command = format!(
        "{} --color never {}",
        bin_dir().join("pi-sessions").display(),
        t.path().display()
    );
    // (width, the Session cells' width, the Name cells' width)
    for (columns, session, name) in [(40, 13, 16), (52, 13, 14), (80, 13, 18)] {
        let Some(text) = crate::views::on_terminal_at(&command, columns) else {
            return;
        };
        let what = format!("COLUMNS={columns}:\n{text}");
        let lines: Vec<&str> = text.lines().collect();
        for l in &lines {
            assert!(l.chars().count() <= columns, "{what}");
        }
        let head = lines[0];
        let at = |h: &str| head.find(h).unwrap_or_else(|| panic!("{h}: {what}"));
        for (i, l) in lines[1..4].iter().enumerate() {
            let cell: String = l
                .chars()
                .skip(at("Session"))
                .take_while(|&c| c != ' ')
                .collect();
            assert_eq!(cell.chars().count(), session, "{what}");
            let id = format!("019f5be5-7b1a-7000-8a7c-db42f66cd11{}", i + 1);
            let want: String = id.chars().skip(id.len() + 1 - session).collect();
            assert_eq!(cell, format!("…{want}"), "{what}");
            let rest: String = l.chars().skip(at("Name")).collect();
            assert_eq!(rest.chars().count(), name, "{rest:?} {what}");
        }
    }
    // Wide enough, the names are whole and tell the sessions apart.
    let text = crate::views::on_terminal_at(&command, 200).unwrap();
    for i in 1..=3 {
        assert!(
            text.contains(&format!("Refactor the loader, part {i} of three")),
            "{text}"
        );
    }
}

/// Review item 5: `--ext` takes the files whose name ends in `.EXT`, the whole of it: an
/// extension of several parts (`jsonl.bak`, `tar.gz`) too, not only the last part.
#[test]
fn ext_compares_the_whole_suffix() {
    let t = TempDir::new("ext-suffix");
    for f in [
        "a.jsonl.bak",
        "b.tar.gz",
        "c.jsonl",
        "d.bak",
        ".jsonl.bak",
        "ejsonl.bak",
    ] {
        t.write(f, session("s", None));
    }
    let listed = |exts: &[&str]| {
        let mut c = cmd("pi-sessions").arg("--paths");
        for e in exts {
            c = c.arg("--ext").arg(e);
        }
        let o = c.arg(t.path()).run();
        assert_eq!(o.status, 0, "{}", o.stderr);
        o.out().lines().map(file_name).collect::<Vec<_>>()
    };
    assert_eq!(listed(&["jsonl.bak"]), ["a.jsonl.bak"]);
    assert_eq!(listed(&["tar.gz"]), ["b.tar.gz"]);
    assert_eq!(listed(&[".tar.gz", "jsonl"]), ["b.tar.gz", "c.jsonl"]);
    assert_eq!(
        listed(&["bak"]),
        [".jsonl.bak", "a.jsonl.bak", "d.bak", "ejsonl.bak"]
    );
    assert_eq!(listed(&["gz"]), ["b.tar.gz"]);
    assert_eq!(listed(&[]), ["c.jsonl"]);
}

/// Review item 6: files whose time is unknown come last whichever way the order goes;
/// `--reverse` turns around only the files that have one (and their ties by path).
#[test]
fn reverse_keeps_unknown_times_last() {
    let t = TempDir::new("reverse-unknown");
    let at = |name: &str, ts: &str| {
        t.write(
            name,
            format!(
                "{}\n{}\n",
                header(name, None, ts),
                user("u1", None, ts, "hi")
            ),
        );
    };
    at("old.jsonl", "2026-01-01T00:00:00.000Z");
    at("new.jsonl", "2026-03-01T00:00:00.000Z");
    // No header time: created is unknown.
    t.write(
        "untimed.jsonl",
        format!(
            "{}\n{}\n",
            r#"{"type":"session","version":3,"id":"untimed"}"#,
            user("u1", None, "2026-02-01T00:00:00.000Z", "hi")
        ),
    );
    // (The FIFO below is reported as not read: the status is 2 then.)
    let order = |extra: &[&str]| {
        let o = sessions_json(t.path(), extra);
        paths_of(&o)
            .iter()
            .map(|p| file_name(p))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        order(&["--sort", "created"]),
        ["new.jsonl", "old.jsonl", "untimed.jsonl"]
    );
    assert_eq!(
        order(&["--sort", "created", "-r"]),
        ["old.jsonl", "new.jsonl", "untimed.jsonl"]
    );
    // A FIFO is not read: its modification time is unknown too.
    let fifo = t.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        assert_eq!(
            order(&["--sort", "modified", "--reverse"]),
            ["old.jsonl", "untimed.jsonl", "new.jsonl", "fifo.jsonl"]
        );
        assert_eq!(
            order(&["--sort", "modified"]),
            ["new.jsonl", "untimed.jsonl", "old.jsonl", "fifo.jsonl"]
        );
    }
}

/// Review item 7: `leaves` counts what pi-branch --info counts (as Pi reads ids: an entry
/// whose id is "" has none, so it is no leaf), over every fixture with a header.
#[test]
fn leaves_agree_with_pi_branch() {
    for f in fixture_files() {
        let o = cmd("pi-sessions").arg("--json").arg(&f).run();
        let r = &o.records()[0];
        if r["leaves"].is_null() {
            continue;
        }
        let infos = cmd("pi-branch").arg("--info").arg(&f).run().records();
        let branch: u64 = infos
            .iter()
            .filter(|i| i["type"] == "branch_info")
            .map(|i| i["leaves"].as_u64().unwrap())
            .sum();
        assert_eq!(r["leaves"].as_u64(), Some(branch), "{}", f.display());
    }
    let o = cmd("pi-sessions")
        .arg("--json")
        .arg(fixture("idless-leaf-empty-id.jsonl"))
        .run();
    assert_eq!(o.records()[0]["leaves"], 1);
}

/// Review item 8: a header whose id is "" names no session, as pi-usage and pi-branch say
/// (null), and the table says so as for any unknown label.
#[test]
fn an_empty_header_id_is_no_session() {
    let t = TempDir::new("empty-id");
    let f = t.write("e.jsonl", session("", Some("/p")));
    let o = cmd("pi-sessions").arg("--json").arg(&f).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = &o.records()[0];
    assert_eq!(r["session"], Value::Null);
    assert_eq!(r["status"], "ok");
    for (tool, args) in [("pi-branch", &["--info"][..]), ("pi-usage", &[][..])] {
        let other = cmd(tool).args(args).arg(&f).run().records();
        assert_eq!(other[0]["session"], Value::Null, "{tool}");
    }
    let table = cmd("pi-sessions").arg("--table").arg(&f).run().out();
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[1], "(none)", "{table}");
}

/// Review item 9: `--store omp` where oh-my-pi keeps sessions only in a profile's store lists
/// them, with nothing to report (its agent's store is not missing then); with no store at all
/// it is still reported.
#[test]
fn omp_store_of_profiles_alone_is_no_error() {
    let t = TempDir::new("omp-profiles");
    let f = t.write(
        ".omp/profiles/work/agent/sessions/--x--/s.jsonl",
        session("s", Some("/x")),
    );
    let o = cmd("pi-sessions")
        .args(["--store", "omp", "--paths"])
        .env("HOME", t.path())
        .run();
    assert_eq!((o.status, o.stderr.as_str()), (0, ""));
    assert_eq!(o.out(), format!("{}\n", f.display()));
    let empty = TempDir::new("omp-none");
    let o = cmd("pi-sessions")
        .args(["--store", "omp", "--paths"])
        .env("HOME", empty.path())
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("no sessions directory"), "{}", o.stderr);
}

/// Review item 10: `--since` and `--until` take the dates pi-usage takes, `20260501` as well
/// as `2026-05-01`, besides an ISO time.
#[test]
fn since_and_until_take_what_pi_usage_takes() {
    let t = TempDir::new("since-forms");
    three(&t);
    for (since, until) in [
        ("2026-02-01", "2026-02-28"),
        ("20260201", "20260228"),
        ("2026-02-01T00:00:00Z", "2026-02-28T23:59:59Z"),
        ("2026-02-01T00:00:00", "2026-02-28T23:59:59"),
    ] {
        assert_eq!(
            names(&t, &["--since", since, "--until", until]),
            ["b.jsonl"],
            "{since} {until}"
        );
        // pi-usage wants a time's zone said; the rest it takes as pi-sessions does.
        for arg in ["--since", "--until"].iter().filter(|_| since.len() != 19) {
            let o = cmd("pi-usage")
                .args([arg, since, "--total"])
                .arg(t.path())
                .run();
            assert_eq!(o.status, 0, "pi-usage {arg} {since}: {}", o.stderr);
        }
    }
    let o = cmd("pi-sessions")
        .args(["--since", "2026-02-30"])
        .arg(t.path())
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.starts_with("pi-sessions: "), "{}", o.stderr);
    assert!(
        o.stderr.contains("20260301"),
        "says what it takes: {}",
        o.stderr
    );
}

/// Review item 12: a DIR that is a symbolic link leading nowhere is said to be a broken link,
/// not a missing directory.
#[test]
fn a_broken_link_given_as_dir_is_said_to_be_one() {
    let t = TempDir::new("broken-root");
    let link = t.path().join("gone");
    std::os::unix::fs::symlink(t.path().join("nowhere"), &link).unwrap();
    let o = cmd("pi-sessions").arg(&link).run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr,
        format!(
            "pi-sessions: {}: broken symbolic link; skipped\n",
            link.display()
        )
    );
}

/// Review item 13: a cache directory that cannot be one (a file stands where it would be) is
/// said once, as `tool: path: note: message`, and the run goes on without the cache.
#[test]
fn an_unusable_cache_directory_is_said_once() {
    let t = TempDir::new("cache-unusable");
    three(&t);
    let file = t.write("xdg", "a file, not a directory");
    let o = cmd("pi-sessions")
        .args(["--cache", "--json"])
        .arg(t.path())
        .env("XDG_CACHE_HOME", &file)
        .run();
    assert_eq!(o.records().len(), 3, "{}", o.stderr);
    let dir = file.join("pi-jsonl").join("pi-sessions");
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "pi-sessions: {}: note: cannot use the cache: ",
            dir.display()
        )),
        "{}",
        o.stderr
    );
    assert_eq!(o.status, 0, "a note does not change the status");
}

/// Review item 11 and the Age of a time ahead of the clock: sizes are rounded before their
/// unit is chosen (10,200 bytes are `10K`, 1,048,575 are `1.0M`), and a file modified in the
/// future is `in 59m` or so, not `0s`.
#[test]
fn table_sizes_round_and_future_times_say_so() {
    let t = TempDir::new("table-cells");
    for n in [10_200usize, 1_048_575] {
        let h = format!(r#"{{"type":"session","version":3,"id":"sz{n}"}}"#);
        t.write(
            &format!("{n}.jsonl"),
            format!("{h}{}\n", " ".repeat(n - h.len() - 1)),
        );
    }
    let future = t.write(
        "future.jsonl",
        r#"{"type":"session","version":3,"id":"ahead"}"#.to_owned() + "\n",
    );
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&future)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let o = cmd("pi-sessions")
        .args(["--table", "--sort", "size"])
        .arg(t.path())
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let text = o.out();
    let row = |id: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id}: {text}"));
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(row("sz1048575")[2], "1.0M", "{text}");
    assert_eq!(row("sz10200")[2], "10K", "{text}");
    let age = &row("ahead")[0];
    assert!(
        age.starts_with("in ") && age.ends_with('m'),
        "{age:?}: {text}"
    );
}

/// `--prompt-chars 0` keeps nothing of the prompt: "" (not a lone "…"); 1 keeps the "…".
#[test]
fn prompt_chars_zero_keeps_nothing() {
    let prompt = |n: &str| {
        let o = cmd("pi-sessions")
            .args(["--json", "--prompts", "--prompt-chars", n])
            .arg(fixture("branched.jsonl"))
            .run();
        o.records()[0]["first_prompt"].clone()
    };
    assert_eq!(prompt("0"), "");
    assert_eq!(prompt("1"), "…");
    assert_eq!(prompt("6"), "first…");
}
