//! The input driver with many files: output and diagnostics in argument order whatever the
//! number of threads, and a closed stdout ends the run quietly.

use crate::util::{bin_dir, cmd, Output, TempDir};
use pi_jsonl_gen::{Gen, Shape};
use std::io::Read;
use std::process::{Command, Stdio};

/// 40 sessions of very different sizes (so workers finish out of order), every fifth with
/// a glued line that is reported.
fn files(dir: &TempDir) -> Vec<String> {
    (0..40u64)
        .map(|i| {
            let mut data = Vec::new();
            let size = if i % 7 == 0 { 400_000 } else { 3_000 + i * 500 };
            let shape = if i % 9 == 4 {
                Shape::v1(size)
            } else {
                Shape::v3(size)
            };
            Gen::new(i).session(&shape, &mut data).unwrap();
            if i % 5 == 0 {
                data.extend_from_slice(b"{\"type\":\"custom\"}{\"type\":\"custom\"}\n");
            }
            dir.write(&format!("s{i:02}.jsonl"), data)
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn many_files_keep_argument_order_and_their_diagnostics() {
    let dir = TempDir::new("parallel");
    let paths = files(&dir);
    let (mut want_out, mut want_err) = (Vec::new(), String::new());
    for p in &paths {
        let o = cmd("pi-branch").arg(p).run();
        want_out.extend_from_slice(&o.stdout);
        want_err.push_str(&o.stderr);
    }
    assert_eq!(want_err.lines().count(), 8, "{want_err}");
    // By default the eight files' glued lines are shown for the first five (in argument
    // order, whatever finishes first) and summed up for the other three (issue 15).
    let first_five: String = want_err.lines().take(5).map(|l| format!("{l}\n")).collect();
    let summed = "pi-branch: 3 more files had glued_records (3 lines), not shown; --verbose prints every one\n";
    for threads in ["1", "2", "3"] {
        for verbose in [true, false] {
            let o = cmd("pi-branch")
                .args(["--threads", threads])
                .args(verbose.then_some("--verbose"))
                .args(&paths)
                .run();
            assert_eq!(o.status, 2);
            assert!(
                o.stdout == want_out,
                "output differs with --threads {threads}"
            );
            if verbose {
                assert_eq!(o.stderr, want_err, "--threads {threads}");
            } else {
                assert_eq!(
                    o.stderr,
                    format!("{first_five}{summed}"),
                    "--threads {threads}"
                );
            }
        }
    }
}

/// Runs `cmd`, reads the first 100 bytes of its output and closes it (like `| head -c 100`);
/// the exit status and stderr, which must say no word of the closed pipe.
fn close_after_100_bytes(cmd: &mut Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped (closed) here.
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("Broken pipe"), "{err}");
    (status.code(), err)
}

/// The run closed after 100 bytes must end with exit 0.
fn closes_quietly_after_100_bytes(cmd: &mut Command) {
    let (code, err) = close_after_100_bytes(cmd);
    assert_eq!(code, Some(0), "stderr: {err}");
}

/// Closing the pipe ends the run with exit 0 (the contract: `| head` is no failure), also
/// after a problem was reported; the problem's line is still printed.
#[test]
fn closed_stdout_ends_with_0_after_a_reported_problem() {
    let dir = TempDir::new("parallel-pipe-reported");
    let mut text = String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\nnot json\n");
    let mut parent = "null".to_string();
    for i in 0..50_000 {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c{i}\",\"name\":\"bash\",\"arguments\":{{}}}}],\"provider\":\"p\",\"model\":\"m{i}\",\"usage\":{{\"input\":1,\"output\":1}}}}}}\n"
        ));
        parent = format!("\"e{i}\"");
    }
    let path = dir.path().join("bad-then-long.jsonl");
    std::fs::write(&path, text).unwrap();
    for (tool, args) in [
        ("pi-branch", &[][..]),
        ("pi-tools", &[]),
        ("pi-usage", &["--by", "model"]),
    ] {
        let (code, err) = close_after_100_bytes(
            Command::new(bin_dir().join(tool))
                .args(["--threads", "1"])
                .args(args)
                .arg(&path),
        );
        assert!(
            err.contains("bad-then-long.jsonl:2: malformed"),
            "{tool}: {err}"
        );
        assert_eq!(code, Some(0), "{tool}: {err}");
    }
}

#[test]
fn closed_stdout_ends_a_many_file_run_quietly() {
    let dir = TempDir::new("parallel-pipe");
    let paths = files(&dir);
    closes_quietly_after_100_bytes(
        Command::new(bin_dir().join("pi-branch"))
            .args(["--threads", "2"])
            .args(&paths),
    );
}

/// Billed calls pi-usage reads ahead of the reader only in part (issue 20): a provider
/// written with an escape, usage fields that are reported, another usage field, a tool
/// result's and a summarization's usage, a usage entry, a timestamp that is not one.
const BILLED_CALLS: &str = concat!(
    r#"{"type":"message","id":"zz1","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","provider":"an\u0074hropic","model":"m1","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.5}},"timestamp":1767225600000}}"#,
    "\n",
    r#"{"type":"message","id":"zz2","parentId":"zz1","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","provider":"p","model":"m2","usage":{"input":-1,"output":"x","cost":{"total":-2}},"timestamp":1767225601000}}"#,
    "\n",
    r#"{"type":"message","id":"zz3","parentId":"zz2","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","provider":"p","model":"m2","usage":{"input":5,"output":6,"premium":7,"cost":{"total":0.25}},"timestamp":1767225602000}}"#,
    "\n",
    r#"{"type":"message","id":"zz4","parentId":"zz3","timestamp":"2026-01-01T00:00:03Z","message":{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"usage":{"input":1,"output":1,"cost":{"total":0.1}},"nestedCalls":{"count":2,"complete":false}}}"#,
    "\n",
    r#"{"type":"usage","id":"zz5","parentId":"zz4","timestamp":"2026-01-01T00:00:04Z","kind":"k","provider":"p","model":"m3","usage":{"input":1,"output":1}}"#,
    "\n",
    r#"{"type":"compaction","id":"zz6","parentId":"zz5","timestamp":"not a time","summary":"s","firstKeptEntryId":"zz1","tokensBefore":1,"provider":"p","model":"m1","usage":{"input":3,"output":4}}"#,
    "\n",
    r#"{"type":"message","id":"zz7","parentId":"zz6","timestamp":"2026-01-01T00:00:05Z","message":{"role":"assistant","provider":"p","model":"m1","responseId":"r1","usage":{"input":1,"output":1},"timestamp":1767225605000}}"#,
    "\n",
);

/// Entries pi-compactions reads ahead of the reader, and in order (issue 20): a reply whose
/// model is written with an escape (read in order), an overflow error (its error record read
/// again in order), the compaction after it and the retried reply, a compaction failure, an
/// aborted reply, a system message, a model change, a type written with an escape, a
/// branch summary.
const COMPACTION_CLUES: &str = concat!(
    r#"{"type":"message","id":"cc1","parentId":"zz7","timestamp":"2026-01-01T00:00:06Z","message":{"role":"user","content":"go"}}"#,
    "\n",
    r#"{"type":"message","id":"cc2","parentId":"cc1","timestamp":"2026-01-01T00:00:07Z","message":{"role":"assistant","provider":"anthropic","model":"claude-\u0073onnet-4-5","usage":{"input":150000,"output":10,"cacheRead":40000,"cacheWrite":0,"totalTokens":190010},"stopReason":"toolUse"}}"#,
    "\n",
    r#"{"type":"message","id":"cc3","parentId":"cc2","timestamp":"2026-01-01T00:00:08Z","message":{"role":"toolResult","toolCallId":"t","toolName":"read","content":[]}}"#,
    "\n",
    r#"{"type":"message","id":"cc4","parentId":"cc3","timestamp":"2026-01-01T00:00:09Z","message":{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0},"stopReason":"error","errorMessage":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    "\n",
    r#"{"type":"compaction","id":"cc5","parentId":"cc4","timestamp":"2026-01-01T00:00:10Z","summary":"s","firstKeptEntryId":"cc3","tokensBefore":210000}"#,
    "\n",
    r#"{"type":"message","id":"cc6","parentId":"cc5","timestamp":"2026-01-01T00:00:11Z","message":{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":20000,"output":5},"stopReason":"stop"}}"#,
    "\n",
    r#"{"type":"message","id":"cc7","parentId":"cc6","timestamp":"2026-01-01T00:00:12Z","message":{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"error","errorMessage":"Auto-compaction failed: summarization request failed"}}"#,
    "\n",
    r#"{"type":"message","id":"cc8","parentId":"cc7","timestamp":"2026-01-01T00:00:13Z","message":{"role":"assistant","provider":"openai","model":"gpt-5","stopReason":"aborted","errorMessage":"Request was aborted"}}"#,
    "\n",
    r#"{"type":"message","id":"cc9","parentId":"cc8","timestamp":"2026-01-01T00:00:14Z","message":{"role":"system","content":"x"}}"#,
    "\n",
    r#"{"type":"model_change","id":"cc10","parentId":"cc9","timestamp":"2026-01-01T00:00:15Z","provider":"openai","modelId":"gpt-5"}"#,
    "\n",
    r#"{"type":"\u006dessage","id":"cc11","parentId":"cc10","timestamp":"2026-01-01T00:00:16Z","message":{"role":"assistant","provider":"p","model":"m","stopReason":"error","errorMessage":"x"}}"#,
    "\n",
    r#"{"type":"branch_summary","id":"cc12","parentId":"cc2","timestamp":"2026-01-01T00:00:17Z","fromId":"cc11","summary":"b"}"#,
    "\n",
);

/// Entries pi-tools reads ahead of the reader, and in order (issue 20): calls whose id, name
/// and model are written with escapes, a call without an id and one whose id is no string,
/// results answered out of order (the first written after the second), a result text with an
/// escape the output writes otherwise, an image, a duplicate, orphans without a toolCallId or
/// with a number for one, a user's command.
const TOOL_CLUES: &str = concat!(
    r#"{"type":"message","id":"tt1","parentId":"cc12","timestamp":"2026-01-01T00:01:00Z","message":{"role":"assistant","provider":"p","model":"m\u0031","content":[{"type":"toolCall","id":"k\u0031","name":"r\u0065ad","namespace":"mcp","arguments":{"path":"a"}},{"type":"toolCall","id":"k2","name":"bash","arguments":null},{"type":"toolCall","name":"x"},{"type":"toolCall","id":5}],"stopReason":"toolUse"}}"#,
    "\n",
    r#"{"type":"message","id":"tt2","parentId":"tt1","timestamp":"2026-01-01T00:01:01Z","message":{"role":"toolResult","toolCallId":"k2","toolName":"bash","content":[{"type":"text","text":"a\/b\n\"c\""},{"type":"image","mimeType":"image/png"}],"details":{"exitCode":2}}}"#,
    "\n",
    r#"{"type":"message","id":"tt3","parentId":"tt2","timestamp":"2026-01-01T00:01:02Z","message":{"role":"toolResult","toolCallId":"k1","toolName":"read","content":[{"type":"text","text":"first\tline"},{"type":"text","text":"second \u00e9"}],"isError":true}}"#,
    "\n",
    r#"{"type":"message","id":"tt4","parentId":"tt3","timestamp":"2026-01-01T00:01:03Z","message":{"role":"toolResult","toolCallId":"k\u0031","content":"again"}}"#,
    "\n",
    r#"{"type":"message","id":"tt5","parentId":"tt4","timestamp":"2026-01-01T00:01:04Z","message":{"role":"toolResult","content":"no id"}}"#,
    "\n",
    r#"{"type":"message","id":"tt6","parentId":"tt5","timestamp":"2026-01-01T00:01:05Z","message":{"role":"toolResult","toolCallId":6,"content":[]}}"#,
    "\n",
    r#"{"type":"message","id":"tt7","parentId":"tt6","timestamp":"2026-01-01T00:01:06Z","message":{"role":"bashExecution","command":"ls","output":"x","exitCode":1}}"#,
    "\n",
);

/// A session past the size at which one input is read on several cores (issue 20,
/// `input::chunks`), with defects through it: a glued line, a malformed line, blank lines,
/// a second session.
fn large_session(dir: &TempDir, name: &str, seed: u64) -> String {
    let mut data = Vec::new();
    Gen::new(seed)
        .session(&Shape::v3(6_000_000), &mut data)
        .unwrap();
    data.extend_from_slice(BILLED_CALLS.as_bytes());
    data.extend_from_slice(COMPACTION_CLUES.as_bytes());
    data.extend_from_slice(TOOL_CLUES.as_bytes());
    // A result whose text is not valid UTF-8.
    data.extend_from_slice(b"{\"type\":\"message\",\"id\":\"tt8\",\"parentId\":\"tt7\",\"timestamp\":\"2026-01-01T00:01:07Z\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"k9\",\"content\":\"x\xffy\"}}\n");
    data.extend_from_slice(b"{\"type\":\"custom\"}{\"type\":\"custom\"}\n\n{\"type\":\n");
    Gen::new(seed + 1)
        .session(&Shape::v3(4_000_000), &mut data)
        .unwrap();
    assert!(data.len() > 9 << 20, "past input::chunks::MIN_PARALLEL");
    dir.write(name, data).to_string_lossy().into_owned()
}

/// `tool` with `args` over `inputs` on 2 and 4 threads gives `base` (its run on one thread):
/// the same status, output and diagnostics.
fn same_on_more_threads(tool: &str, args: &[&str], inputs: &[String], base: &Output) {
    for threads in ["2", "4"] {
        let o = cmd(tool)
            .args(args)
            .args(["--threads", threads])
            .args(inputs)
            .run();
        let run = (tool, args, threads);
        assert_eq!(o.status, base.status, "{run:?}");
        assert!(o.stdout == base.stdout, "{run:?}: output differs");
        assert_eq!(o.stderr, base.stderr, "{run:?}");
    }
}

/// Issue 20: one large input read on one, two or four threads gives the same bytes and the
/// same diagnostics, for every tool; so do four large inputs at once.
#[test]
fn large_inputs_read_on_several_cores_give_the_same_output() {
    let dir = TempDir::new("parallel-large");
    let one = large_session(&dir, "one.jsonl", 7);
    let four: Vec<String> = (0..4)
        .map(|i| large_session(&dir, &format!("f{i}.jsonl"), 20 + i))
        .collect();
    let runs: &[&[&str]] = &[
        &["pi-branch"],
        &["pi-branch", "--info"],
        &["pi-usage", "--json"],
        &["pi-usage", "--json", "--by", "day,model"],
        &["pi-usage", "--calls"],
        &["pi-usage", "--json", "--context"],
        &["pi-compactions"],
        &["pi-compactions", "--errors"],
        &[
            "pi-compactions",
            "--errors",
            "--branch-summaries",
            "--summary",
        ],
        &["pi-tools"],
        &["pi-tools", "--max-text", "4"],
        &["pi-tools", "--no-content"],
        &["pi-sessions", "--json"],
        &["pi-redact"],
        &["pi-redact", "--keep-text"],
    ];
    for run in runs {
        for inputs in [std::slice::from_ref(&one), &four[..]] {
            let base = cmd(run[0])
                .args(&run[1..])
                .args(["--threads", "1"])
                .args(inputs)
                .run();
            // pi-sessions counts bad lines in its records instead of reporting them.
            let reported = if run[0] == "pi-sessions" { 0 } else { 2 };
            assert_eq!(base.status, reported, "{run:?}: {}", base.stderr);
            assert!(!base.stdout.is_empty(), "{run:?}");
            if run[0] == "pi-compactions" {
                // The clues' compaction and its failure are read, by the ahead path and in order.
                let records = String::from_utf8_lossy(&base.stdout);
                assert!(records.contains(r#""entry":"cc5""#), "{run:?}");
                assert!(records.contains(r#""entry":"cc7""#), "{run:?}");
            }
            if run[0] == "pi-tools" {
                // The clues' calls and results are joined, out of order too.
                let records = String::from_utf8_lossy(&base.stdout);
                for joined in [r#""call_id":"k1""#, r#""call_id":"k2""#, r#""entry":"tt8""#] {
                    assert!(records.contains(joined), "{run:?}: {joined}");
                }
            }
            same_on_more_threads(run[0], &run[1..], inputs, &base);
        }
    }
}

/// A session of `calls` tiny billed calls, each its own (its input tokens and time differ).
fn tiny_calls(calls: u64) -> Vec<u8> {
    let mut data = br#"{"type":"session","version":3,"id":"tiny","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/w"}"#.to_vec();
    data.push(b'\n');
    for i in 0..calls {
        let parent = match i {
            0 => "null".to_string(),
            _ => format!("\"t{}\"", i - 1),
        };
        data.extend_from_slice(format!(
            r#"{{"type":"message","id":"t{i}","parentId":{parent},"timestamp":"2026-01-02T00:00:{:02}Z","message":{{"role":"assistant","provider":"p","model":"m{}","usage":{{"input":{i},"output":1,"cost":{{"total":0.001}}}},"timestamp":{}}}}}"#,
            i % 60,
            i % 3,
            1_767_312_000_000 + i
        ).as_bytes());
        data.push(b'\n');
    }
    data
}

/// Issue 18: pi-usage reads large inputs ahead of their turn and settles at the merge which
/// occurrence of a call counts; whatever the thread count, the answer is the one-thread one.
/// The inputs are past the size pi-usage streams (16 MiB): a second input repeats the first
/// one's calls, a third holds more calls than a run keeps ahead of their turn (32,768), so it
/// hands what it kept to the report and streams the rest.
#[test]
fn large_inputs_read_ahead_of_their_turn_count_first_occurrences() {
    let dir = TempDir::new("parallel-ahead");
    let mut first = Vec::new();
    Gen::new(41)
        .session(&Shape::v3(17_500_000), &mut first)
        .unwrap();
    first.extend_from_slice(BILLED_CALLS.as_bytes());
    let mut many = tiny_calls(40_000);
    Gen::new(42)
        .session(&Shape::v3(9_000_000), &mut many)
        .unwrap();
    let mut last = Vec::new();
    Gen::new(43)
        .session(&Shape::v3(17_500_000), &mut last)
        .unwrap();
    // The same calls again at the end: repeats within the input.
    last.extend_from_slice(&tiny_calls(50));
    for data in [&first, &many, &last] {
        assert!(data.len() as u64 > 16 << 20, "past pi-usage's STREAM_AT");
    }
    let inputs: Vec<String> = [
        ("a.jsonl", &first),
        ("copy-of-a.jsonl", &first),
        ("many.jsonl", &many),
        ("c.jsonl", &last),
    ]
    .iter()
    .map(|(name, data)| dir.write(name, data).to_string_lossy().into_owned())
    .collect();
    let runs: &[&[&str]] = &[
        &["--json"],
        &["--json", "--by", "session"],
        &["--json", "--by", "day,model"],
        &["--calls"],
    ];
    for run in runs {
        let base = cmd("pi-usage")
            .args(*run)
            .args(["--threads", "1"])
            .args(&inputs)
            .run();
        assert_eq!(base.status, 2, "{run:?}: {}", base.stderr);
        if run[0] == "--calls" {
            let records = String::from_utf8_lossy(&base.stdout);
            assert!(
                records.contains(r#""repeat":true"#),
                "the copy's calls are repeats"
            );
        }
        same_on_more_threads("pi-usage", run, &inputs, &base);
    }
}

/// Issue 18: a worker ahead of its input's turn holds at most `PI_JSONL_HOLD_MAX` bytes of
/// output (8 MiB unless set) and spills the rest to an unnamed temporary file under TMPDIR, or
/// waits for its turn where no such file can be made (TMPDIR missing). With a bound of one
/// byte nearly every line of the later inputs is spilled (and then copied at the turn, or by
/// the writer after the job); whatever the bound, the thread count and whether it spills or
/// waits, the output is the one-thread run's, byte for byte, and so are the diagnostics.
#[test]
fn output_held_past_the_bound_is_spilled_or_waits_and_keeps_its_order() {
    let dir = TempDir::new("parallel-spill");
    let paths = files(&dir);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let missing = dir.path().join("no-such-dir");
    let runs: &[&[&str]] = &[
        &["pi-tools"],
        &["pi-branch"],
        &["pi-usage", "--calls"],
        &["pi-compactions", "--errors"],
        &["pi-redact"],
    ];
    for run in runs {
        let base = cmd(run[0])
            .args(&run[1..])
            .args(["--threads", "1"])
            .args(&paths)
            .run();
        assert!(!base.stdout.is_empty(), "{run:?}: output to spill");
        for bound in ["1", "5000", "70000"] {
            for tmpdir in [&tmp, &missing] {
                for threads in ["2", "4"] {
                    let o = cmd(run[0])
                        .args(&run[1..])
                        .args(["--threads", threads])
                        .args(&paths)
                        .env("PI_JSONL_HOLD_MAX", bound)
                        .env("TMPDIR", tmpdir)
                        .run();
                    let case = (run, bound, tmpdir, threads);
                    assert_eq!(o.status, base.status, "{case:?}");
                    assert!(o.stdout == base.stdout, "{case:?}: output differs");
                    assert_eq!(o.stderr, base.stderr, "{case:?}");
                }
            }
        }
    }
    let left = std::fs::read_dir(&tmp).unwrap().count();
    assert_eq!(left, 0, "spill files have no name: nothing is left behind");
}

/// Spilled output copied to a regular file on stdout (which the kernel copies to), and to one
/// opened to append (`>>`, which it does not: the bytes are read and written), lands after
/// what was written before it and before what follows, as on a pipe.
#[test]
fn spilled_output_copied_to_a_file_keeps_its_place() {
    let dir = TempDir::new("parallel-spill-file");
    let paths = files(&dir);
    let base = cmd("pi-tools").args(["--threads", "1"]).args(&paths).run();
    let to_file = dir.path().join("out.jsonl");
    for append in [false, true] {
        std::fs::write(&to_file, "before\n").unwrap();
        let stdout = std::fs::OpenOptions::new()
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&to_file)
            .unwrap();
        let status = Command::new(bin_dir().join("pi-tools"))
            .args(["--threads", "2"])
            .args(&paths)
            .env("PI_JSONL_HOLD_MAX", "1")
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(base.status));
        let mut want = if append {
            b"before\n".to_vec()
        } else {
            Vec::new()
        };
        want.extend_from_slice(&base.stdout);
        let got = std::fs::read(&to_file).unwrap();
        assert!(got == want, "output differs (append: {append})");
    }
}

/// A closed stdout while spilled output is being copied to it is the quiet exit 0 it is
/// otherwise: nearly all output is spilled (a bound of one byte), and the reader goes away
/// after its first bytes.
#[test]
fn closed_stdout_while_spilled_output_is_copied_ends_quietly() {
    let dir = TempDir::new("parallel-spill-pipe");
    let paths = files(&dir);
    for threads in ["2", "4"] {
        closes_quietly_after_100_bytes(
            Command::new(bin_dir().join("pi-tools"))
                .args(["--threads", threads])
                .args(&paths)
                .env("PI_JSONL_HOLD_MAX", "1"),
        );
    }
}
