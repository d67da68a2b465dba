//! The bad-input suite: each case asserts the exact diagnostic (file:line), the exit status,
//! and that the good lines around the bad one were still processed. The reader is shared, so
//! every tool must report a reader problem with the same words; `same_reader_diagnostics_in_every_tool`
//! checks that.

use crate::util::*;

const H: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#;
const A: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hello"}}"#;
const B: &str = r#"{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#;

/// The binaries that exist in this build (every tool reads through the shared reader).
fn tools() -> Vec<&'static str> {
    let all = ["pi-branch", "pi-tools", "pi-usage", "pi-compactions"];
    let present: Vec<_> = all
        .into_iter()
        .filter(|t| bin_dir().join(t).exists())
        .collect();
    assert!(present.contains(&"pi-branch"));
    present
}

struct Case {
    name: &'static str,
    input: Vec<u8>,
    /// The diagnostics, after `TOOL: FILE`.
    diags: Vec<String>,
    /// pi-branch's output, as line numbers of the input (1-based).
    kept: Vec<usize>,
}

fn lines(parts: &[&str]) -> Vec<u8> {
    parts
        .iter()
        .flat_map(|p| format!("{p}\n").into_bytes())
        .collect()
}

fn cases() -> Vec<Case> {
    let bad = |name, middle: &str, diag: &str| Case {
        name,
        input: lines(&[H, A, middle, B]),
        diags: vec![format!(":3: {diag}")],
        kept: vec![1, 2, 4],
    };
    let mut v = vec![
        bad("malformed", r#"{"type":"message" "id":"x"}"#, "malformed JSON: unexpected character at byte 19; line skipped"),
        bad("null", "null", "a JSON null, not an object; line skipped"),
        bad("number", "12.5", "a JSON number, not an object; line skipped"),
        bad("array", "[1,2]", "a JSON array, not an object; line skipped"),
        bad(
            "glued",
            &format!("{A}{A}"),
            &format!("two records glued on one line (the second starts at byte {}); line skipped, as Pi skips it", A.len() + 1),
        ),
        bad("invalid-escape", r#"{"type":"custom","data":"a\*b"}"#, "malformed JSON: invalid escape in string at byte 27; line skipped"),
        bad("raw-control-char", "{\"type\":\"custom\",\"data\":\"a\tb\"}", "malformed JSON: control character in string at byte 27; line skipped"),
    ];
    // Lone surrogates are valid for JSON.parse: no diagnostic, the line is kept.
    let lone = r#"{"type":"message","id":"c3","parentId":"b2","message":{"role":"user","content":"\ud800 lone"}}"#;
    v.push(Case {
        name: "lone-surrogate",
        input: lines(&[H, A, B, lone]),
        diags: vec![],
        kept: vec![1, 2, 3, 4],
    });
    let mut utf8 = lines(&[H, A]);
    utf8.extend_from_slice(b"{\"type\":\"message\",\"id\":\"b2\",\"parentId\":\"a1\",\"message\":{\"role\":\"user\",\"content\":\"\xC3\x28\"}}\n");
    v.push(Case {
        name: "invalid-utf8",
        input: utf8,
        diags: vec![":3: invalid UTF-8 (read as U+FFFD, as Pi reads it)".into()],
        kept: vec![1, 2, 3],
    });
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(lines(&[H, A]));
    v.push(Case {
        name: "bom",
        input: bom,
        diags: vec![":1: byte-order mark at the start of the input ignored".into()],
        kept: vec![1, 2],
    });
    let mut trunc = lines(&[H, A]);
    trunc.extend_from_slice(&B.as_bytes()[..40]);
    v.push(Case {
        name: "truncated-last-line",
        input: trunc,
        diags: vec![":3: truncated last line (malformed JSON: unexpected end of line at byte 41); line skipped".into()],
        kept: vec![1, 2],
    });
    v.push(Case {
        name: "empty",
        input: vec![],
        diags: vec![": empty file: no session header".into()],
        kept: vec![],
    });
    v.push(Case {
        name: "blank-lines-only",
        input: b"\n \n\t\n".to_vec(),
        diags: vec![": empty file: no session header".into()],
        kept: vec![],
    });
    v.push(Case {
        name: "header-only",
        input: lines(&[H]),
        diags: vec![],
        kept: vec![1],
    });
    v.push(Case {
        // Records that are not Pi entries (no id, no timestamp): not a session, not a
        // fragment (tests/fragments.rs has those).
        name: "no-header",
        input: lines(&[
            r#"{"type":"note","text":"a"}"#,
            r#"{"type":"note","text":"b"}"#,
        ]),
        diags: vec![":1: no session header before this line: 2 entries unreadable, skipped".into()],
        kept: vec![],
    });
    v.push(Case {
        name: "header-without-id",
        input: lines(&[r#"{"type":"session","version":3,"timestamp":"t"}"#, A, B]),
        diags: vec![
            ":1: malformed session header: no id; session unreadable".into(),
            ":2: 2 entries after a malformed session header skipped (unreadable)".into(),
        ],
        kept: vec![],
    });
    v.push(Case {
        name: "header-id-not-string",
        input: lines(&[r#"{"type":"session","version":3,"id":42}"#, A]),
        diags: vec![
            ":1: malformed session header: id is a number, not a string; session unreadable".into(),
            ":2: 1 entry after a malformed session header skipped (unreadable)".into(),
        ],
        kept: vec![],
    });
    v.push(Case {
        name: "second-header",
        input: lines(&[H, A, H, A]),
        diags: vec![":3: a second session header in this file; it starts a new session".into()],
        kept: vec![1, 2, 3, 4],
    });
    let huge_numbers = r#"{"type":"message","id":"c3","parentId":"b2","n":1e400,"m":-99999999999999999999999999,"message":{"role":"user","content":"x"}}"#;
    v.push(Case {
        name: "numbers-out-of-range",
        input: lines(&[H, A, B, huge_numbers]),
        diags: vec![],
        kept: vec![1, 2, 3, 4],
    });
    v
}

fn expected_output(c: &Case) -> Vec<u8> {
    let mut input = c.input.clone();
    if input.starts_with(b"\xEF\xBB\xBF") {
        input.drain(..3);
    }
    let all: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
    c.kept.iter().flat_map(|&n| all[n - 1].to_vec()).collect()
}

/// Runs `tool` on case `c`, written to the file `f`, and checks that its stderr is exactly the
/// case's diagnostics and its status 2 when there are any (else 0).
fn run_case(tool: &str, f: &std::path::Path, c: &Case) -> Output {
    let name = f.to_string_lossy();
    let o = cmd(tool).arg(f).run();
    let want: Vec<String> = c
        .diags
        .iter()
        .map(|d| format!("{tool}: {name}{d}"))
        .collect();
    assert_eq!(o.stderr_lines(), want, "{tool} on case {}", c.name);
    assert_eq!(
        o.status,
        if c.diags.is_empty() { 0 } else { 2 },
        "{tool} on case {}",
        c.name
    );
    o
}

#[test]
fn each_bad_input_gets_its_exact_diagnostic_and_the_good_lines_survive() {
    let t = TempDir::new("bad");
    for c in cases() {
        let f = t.write(&format!("{}.jsonl", c.name), &c.input);
        let o = run_case("pi-branch", &f, &c);
        assert_eq!(o.stdout, expected_output(&c), "case {}", c.name);
    }
}

#[test]
fn same_reader_diagnostics_in_every_tool() {
    let t = TempDir::new("bad-all");
    for c in cases() {
        let f = t.write(&format!("{}.jsonl", c.name), &c.input);
        for tool in tools() {
            run_case(tool, &f, &c);
        }
    }
}

#[test]
fn wrong_field_types_are_reported_not_trusted() {
    let id_num = r#"{"type":"custom","id":5,"parentId":"b2"}"#;
    let parent_num = r#"{"type":"custom","id":"c3","parentId":7}"#;
    let o = cmd("pi-branch")
        .stdin(lines(&[H, A, B, id_num, parent_num]))
        .run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        [
            "pi-branch: <stdin>:4: id is a number, not a string; entry treated as id-less",
            "pi-branch: <stdin>:5: parentId is a number, not a string; the chain ends here",
        ]
    );
    // c3 is the leaf and its chain ends at itself; the id-less entry hangs off b2 (abandoned).
    assert_eq!(o.out(), format!("{H}\n{parent_num}\n"));
}

#[test]
fn a_100_mb_line_is_read() {
    let big = format!(
        r#"{{"type":"message","id":"c3","parentId":"b2","message":{{"role":"toolResult","content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "x".repeat(100 << 20)
    );
    let input = lines(&[H, A, B, &big]);
    let o = cmd("pi-branch").arg("--info").stdin(input).ok();
    assert_eq!(o.records()[0]["kept"], 3);
}

/// Issue 19, item 6: a line longer than the limit (512 MiB) is reported and skipped without
/// being held: 1.2 GB of zeros on stdin, read in 1.5 GB of address space (a buffer that grew
/// to hold the line would need 2 GiB), and the records around it are read.
#[test]
fn item_6_a_line_over_the_limit_is_skipped_not_held() {
    let script = format!(
        "ulimit -v 1500000; (printf '%s\\n' '{H}'; head -c 1200000000 /dev/zero; printf '\\n%s\\n' '{A}') | \"$0\" --info",
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &script])
        .arg(bin_dir().join("pi-branch"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr,
        "pi-branch: <stdin>:2: line of 1200000001 bytes, longer than the 512 MiB a line may have (Pi cannot load it either); line skipped\n"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(r#""kept":1,"#), "{out}");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_100_000_way_branch_point() {
    let mut s = lines(&[H, A]);
    for i in 0..100_000 {
        s.extend(
            format!("{{\"type\":\"custom\",\"id\":\"k{i}\",\"parentId\":\"a1\"}}\n").into_bytes(),
        );
    }
    let o = cmd("pi-branch").arg("--info").stdin(s.clone()).ok();
    let r = &o.records()[0];
    assert_eq!(
        (r["leaves"].as_u64(), r["kept"].as_u64(), r["leaf"].as_str()),
        (Some(100_000), Some(2), Some("k99999"))
    );
    let o = cmd("pi-branch").arg("--leaves").stdin(s).ok();
    assert_eq!(o.records().len(), 100_000);
}

#[test]
fn session_text_cannot_drive_the_terminal() {
    let evil = r#"{"type":"message","id":"c3","parentId":"b2","message":{"role":"user","content":"\u001b[2J\u001b]0;owned\u0007 hi"}}"#;
    let label =
        r#"{"type":"label","id":"l4","parentId":"c3","targetId":"c3","label":"\u001b[31mred"}"#;
    let o = cmd("pi-branch")
        .arg("--tree")
        .stdin(lines(&[H, A, B, evil, label]))
        .ok();
    assert!(
        !o.stdout.iter().any(|&b| b == 0x1b || b == 0x07),
        "{:?}",
        o.out()
    );
    assert!(o.out().contains(r"\u{1b}[2J"), "{}", o.out());
    // Diagnostics escape them too (an id with an escape in it).
    let o = cmd("pi-branch")
        .args(["--leaf", "\u{1b}[2Jx"])
        .stdin(lines(&[H, A]))
        .run();
    assert!(!o.stderr.contains('\u{1b}'), "{:?}", o.stderr);
}

/// FNV-1a over the bytes, plus the modification time: enough to see a write.
fn fingerprint(p: &std::path::Path) -> (u64, std::time::SystemTime) {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in &std::fs::read(p).unwrap() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    (h, std::fs::metadata(p).unwrap().modified().unwrap())
}

#[test]
fn inputs_are_never_written_and_read_only_inputs_work() {
    let t = TempDir::new("ro");
    let f = t.write("ro.jsonl", lines(&[H, A, B]));
    let mut perms = std::fs::metadata(&f).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&f, perms).unwrap();
    let files: Vec<_> = corpus_files().into_iter().chain([f.clone()]).collect();
    let before: Vec<_> = files.iter().map(|p| fingerprint(p)).collect();
    for tool in tools() {
        let o = cmd(tool).args(&files).run();
        assert!(o.status == 0 || o.status == 2, "{tool}");
    }
    let after: Vec<_> = files.iter().map(|p| fingerprint(p)).collect();
    assert_eq!(before, after);
    let o = cmd("pi-branch").arg(&f).ok();
    assert_eq!(o.stdout, lines(&[H, A, B]));
}

#[test]
fn tables_escape_session_text_too() {
    let evil = [
        r#"{"type":"session","version":3,"id":"ev\u001b[31mil","timestamp":"2026-01-01T00:00:00Z","cwd":"/p\u001b]0;x\u0007"}"#,
        r#"{"type":"session_info","id":"i1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","name":"n\u001b[2J"}"#,
        r#"{"type":"message","id":"a1","parentId":"i1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[],"provider":"p\u001b[1m","model":"m\u009b","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.1}}}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"a1","tokensBefore":5}"#,
    ];
    let t = TempDir::new("evil");
    let f = t.write(
        "sessions/--p--/2026-01-01T00-00-00-000Z_x.jsonl",
        lines(&evil),
    );
    let dir = t.path().join("sessions");
    let runs: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("pi-usage", vec!["--table".into(), f.clone().into()]),
        (
            "pi-usage",
            vec![
                "--table".into(),
                "--by".into(),
                "model".into(),
                f.clone().into(),
            ],
        ),
        ("pi-compactions", vec!["--table".into(), f.clone().into()]),
        (
            "pi-sessions",
            vec!["--table".into(), "--dir".into(), dir.into()],
        ),
    ];
    for (tool, args) in runs {
        let o = cmd(tool).args(&args).run();
        assert!(!o.stdout.is_empty(), "{tool} {args:?} printed nothing");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{tool} {args:?}: {text:?}"
        );
        assert!(
            !o.stderr.chars().any(|c| c.is_control() && c != '\n'),
            "{tool} {args:?}: {:?}",
            o.stderr
        );
    }
}

/// Issue 19, item 11: a closed stdout (`tool FILE >&-`) is an error with status 2, never a
/// run that ends with status 0 and its output lost.
#[test]
fn a_closed_stdout_is_an_error_not_lost_output() {
    for (bin, arg) in [
        ("pi-branch", fixture_str("branched.jsonl")),
        ("pi-tools", fixture_str("tools-session.jsonl")),
        ("pi-usage", fixture_str("usage-basic.jsonl")),
        ("pi-compactions", fixture_str("compaction-overflow.jsonl")),
        (
            "pi-sessions",
            format!("--dir={}", fixture_str("sessions-tree")),
        ),
    ] {
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$1\" >&-")
            .arg(bin_dir().join(bin))
            .arg(&arg)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bin}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err,
            format!("{bin}: standard output is closed: nothing can be written\n")
        );
    }
}

/// Issue 19, item 11: `-` given twice is said, not silently read once.
#[test]
fn stdin_given_twice_is_reported_and_read_once() {
    let input = format!("{H}\n{A}\n");
    let once = cmd("pi-branch").arg("-").stdin(input.clone()).run();
    let twice = cmd("pi-branch").args(["-", "-"]).stdin(input).run();
    assert_eq!((once.status, twice.status), (0, 2));
    assert_eq!(twice.stdout, once.stdout);
    assert_eq!(
        twice.stderr,
        "pi-branch: stdin (-) is given 2 times; it is read once, at the first\n"
    );
}

/// Issue 19, item 10: Pi trims the whole file (`String.prototype.trim`: form feed, vertical
/// tab, NBSP, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) before it splits
/// lines, and skips a line that trims to nothing. Such whitespace before the header, after the
/// last record and alone on a line is therefore no problem, in every tool, from a file and
/// from a stream; before or after a record inside the file `JSON.parse` refuses the line,
/// and so does the reader.
#[test]
fn item_10_whitespace_pi_trims_is_trimmed_where_pi_trims_it() {
    let t = TempDir::new("pi-trim");
    let want = format!("{H}\n{A}\n{B}\n");
    for w in [
        "\u{b}", "\u{c}", "\u{a0}", "\u{1680}", "\u{2000}", "\u{200a}", "\u{2028}", "\u{2029}",
        "\u{202f}", "\u{205f}", "\u{3000}",
    ] {
        let input = format!("{w}\n {w}{H}\n{A}\n{w}\n{B}{w} \n{w}\r\n\n{w}");
        let f = t.write("trim.jsonl", &input);
        let from_file = cmd("pi-branch").arg(&f).run();
        let from_stdin = cmd("pi-branch").stdin(input.clone()).run();
        for o in [&from_file, &from_stdin] {
            assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{w:?}");
            assert_eq!(o.out(), want, "{w:?}");
        }
        for tool in tools() {
            let o = cmd(tool).arg(&f).run();
            assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{tool} {w:?}");
        }
        // Inside the file: the line is malformed, and the record after it still read.
        let input = format!("{H}\n{A}{w}\n{B}\n");
        let f = t.write("inside.jsonl", &input);
        let o = cmd("pi-branch").arg(&f).run();
        assert_eq!(o.status, 2, "{w:?}");
        assert!(
            o.stderr
                .contains(":2: malformed JSON: unexpected text after the object"),
            "{w:?}: {}",
            o.stderr
        );
        let input = format!("{H}\n{w}{A}\n{B}\n");
        let o = cmd("pi-branch").stdin(input).run();
        assert!(
            o.stderr.contains(":2: malformed JSON"),
            "{w:?}: {}",
            o.stderr
        );
    }
}

/// Issue 19, item 11: in `cat a b | tool`, a byte-order mark at the start of b does not hide
/// b's header: b's entries stay in b's session (the mark is reported, as at the start of the
/// input), for every tool.
#[test]
fn item_11_a_bom_before_a_later_header_still_starts_its_session() {
    let second = H.replace(r#""id":"s""#, r#""id":"t""#);
    let b1 = A.replace("a1", "b1");
    let input = format!("{H}\n{A}\n\u{feff}{second}\n{b1}\n");
    let o = cmd("pi-branch").arg("--info").stdin(input.clone()).run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr,
        "pi-branch: <stdin>:3: byte-order mark before a session header ignored\n"
    );
    let sessions: Vec<_> = o.records().iter().map(|r| r["session"].clone()).collect();
    assert_eq!(sessions, ["s", "t"]);
    assert_eq!(o.records()[1]["leaf"], "b1");
    for tool in tools() {
        let o = cmd(tool).stdin(input.clone()).run();
        assert_eq!(
            o.stderr_lines(),
            [format!(
                "{tool}: <stdin>:3: byte-order mark before a session header ignored"
            )],
            "{tool}"
        );
    }
    // The same before a header that follows blank lines at the start of the input.
    let o = cmd("pi-branch")
        .stdin(format!("\n\u{feff}{H}\n{A}\n"))
        .run();
    assert_eq!(o.out(), format!("{H}\n{A}\n"));
}

/// Issue 19, item 6: only regular files are read as session files found by a walk and as
/// models.json. A FIFO named like a session, and links to endless devices, are listed as
/// unreadable with the reason, at once (nothing waits on the FIFO, nothing reads the device);
/// a FIFO or a device given as models.json is refused. A FILE argument that is a FIFO is still
/// read as a stream (tests/mapped.rs).
#[test]
fn item_6_only_regular_files_are_read_as_sessions_found_or_models_json() {
    let t = TempDir::new("not-regular");
    let dir = t.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a.jsonl"), lines(&[H, A])).unwrap();
    let fifo = dir.join("f.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable: skipped");
        return;
    }
    std::os::unix::fs::symlink("/dev/zero", dir.join("z.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", dir.join("u.jsonl")).unwrap();
    let o = cmd("pi-sessions").arg("--dir").arg(&dir).run();
    let reasons: Vec<_> = o
        .records()
        .iter()
        .map(|r| (r["status"].clone(), r["reason"].clone()))
        .collect();
    let device = (
        "unreadable",
        "a character device, not a regular file; not read",
    );
    assert_eq!(
        reasons,
        [
            ("ok".into(), serde_json::Value::Null),
            (
                "unreadable".into(),
                "a FIFO, not a regular file; not read".into()
            ),
            (device.0.into(), device.1.into()),
            (device.0.into(), device.1.into()),
        ]
    );
    assert_eq!(o.status, 2);
    let session = dir.join("a.jsonl");
    for models in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
        let o = cmd("pi-compactions")
            .arg("--models")
            .arg(models)
            .arg(&session)
            .run();
        assert_eq!(o.status, 2);
        assert!(
            o.stderr
                .contains(", not a regular file; not read; no configured context windows"),
            "{}",
            o.stderr
        );
    }
}

/// An empty named file (or one of blank lines) is reported alike by every tool that reads
/// sessions, pi-replay in each format and pi-redact included: exit 2, one line saying so.
#[test]
fn an_empty_file_is_reported_by_every_tool() {
    let dir = TempDir::new("empty-everywhere");
    for (name, data) in [("empty.jsonl", &b""[..]), ("blank.jsonl", b"\n \n")] {
        let f = dir.write(name, data);
        let f = f.to_string_lossy();
        let runs: [&[&str]; 9] = [
            &["pi-branch"],
            &["pi-tools"],
            &["pi-usage"],
            &["pi-compactions"],
            &["pi-redact"],
            &["pi-replay", "--format", "html"],
            &["pi-replay", "--format", "md"],
            &["pi-replay", "--format", "text"],
            &["pi-tools", "--table"],
        ];
        for run in runs {
            let o = cmd(run[0]).args(&run[1..]).arg(&*f).run();
            assert_eq!(o.status, 2, "{run:?} {name}: {}", o.stderr);
            assert_eq!(
                o.stderr_lines(),
                [format!("{}: {f}: empty file: no session header", run[0])],
                "{run:?} {name}"
            );
        }
    }
}

/// A file that is not JSON Lines (a binary, a log) prints its first lines of each kind of
/// problem, not one per line: the rest are counted in one line at the end, and `--verbose`
/// prints every one. The exit status is 2 either way.
#[test]
fn a_file_of_garbage_prints_its_first_lines_and_sums_up_the_rest() {
    let dir = TempDir::new("garbage-lines");
    let mut data = Vec::new();
    for i in 0..150 {
        data.extend_from_slice(format!("\u{7f}ELF garbage {i}\n").as_bytes());
    }
    let f = dir.write("garbage.bin", &data);
    let f = f.to_string_lossy();
    for tool in [
        "pi-branch",
        "pi-tools",
        "pi-usage",
        "pi-compactions",
        "pi-redact",
    ] {
        let o = cmd(tool).arg(&*f).run();
        assert_eq!(o.status, 2, "{tool}: {}", o.stderr);
        let lines = o.stderr_lines();
        assert!(
            lines.len() <= 25,
            "{tool}: {} lines:\n{}",
            lines.len(),
            o.stderr
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{tool}: 1 file had "))
                    && l.ends_with(" shown; --verbose prints every one")),
            "{tool}:\n{}",
            o.stderr
        );
        let every = cmd(tool).arg("--verbose").arg(&*f).run();
        assert_eq!(every.status, 2);
        assert!(
            every.stderr_lines().len() >= 150,
            "{tool} --verbose:\n{}",
            every.stderr
        );
    }
}

/// A command line a tool cannot take is said as every diagnostic is, `tool: message`, with
/// exit status 2; `--help` still prints to stdout with status 0.
#[test]
fn a_bad_command_line_is_reported_as_tool_colon_message() {
    for tool in [
        "pi-branch",
        "pi-tools",
        "pi-usage",
        "pi-compactions",
        "pi-sessions",
        "pi-redact",
        "pi-replay",
    ] {
        let o = cmd(tool).arg("--no-such-option").run();
        assert_eq!(o.status, 2, "{tool}: {}", o.stderr);
        assert!(
            o.stderr
                .starts_with(&format!("{tool}: unexpected argument '--no-such-option'")),
            "{tool}:\n{}",
            o.stderr
        );
        let help = cmd(tool).arg("--help").run();
        assert_eq!(help.status, 0, "{tool}");
        assert!(
            help.out().contains("Usage:") && help.stderr.is_empty(),
            "{tool}"
        );
    }
}
