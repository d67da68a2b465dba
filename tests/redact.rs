//! pi-redact: the fixture's expected output, the tools' answers on original and redacted
//! files (fixtures and corpus), the residual scan, `--keep-text` masking, and the canaries:
//! fake secrets, e-mail addresses and home paths injected into copies of sessions, none of
//! which may survive in either mode.

use crate::util::*;
use pi_jsonl::cmd::redact::{Args as RedactArgs, Redact};
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::tool::Tool;
use serde_json::Value;
use std::path::Path;

fn redact(args: &[&str]) -> Output {
    cmd("pi-redact").args(args).run()
}

/// `pi-redact --keep-text --report` of `session` on stdin, which must succeed (status 0).
fn keep_text(session: impl Into<Vec<u8>>) -> Output {
    let o = cmd("pi-redact")
        .args(["--keep-text", "--report"])
        .stdin(session)
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    o
}

/// None of `private` occurs anywhere in `out`.
fn assert_none_survive(out: &str, private: &[&str]) {
    for p in private {
        assert!(!out.contains(p), "{p} survived: {out}");
    }
}

#[test]
fn everything_is_replaced_and_the_shape_kept() {
    let o = cmd("pi-redact")
        .arg(fixture("redact-everything.jsonl"))
        .ok();
    let want = std::fs::read_to_string(fixture("redact-everything.redacted.jsonl")).unwrap();
    assert_eq!(o.out(), want);
}

#[test]
fn records_with_nothing_private_are_copied_byte_for_byte() {
    let input = std::fs::read_to_string(fixture("redact-everything.jsonl")).unwrap();
    let o = redact(&[&fixture_str("redact-everything.jsonl")]);
    let out = o.out();
    let (ins, outs): (Vec<&str>, Vec<&str>) = (input.lines().collect(), out.lines().collect());
    assert_eq!(ins.len(), outs.len(), "one record per record");
    assert_eq!(ins[1], outs[1], "model_change");
    assert_eq!(ins[2], outs[2], "thinking_level_change");
    // Numbers keep their text where the line changed too.
    assert!(outs[4].contains(r#""limit":2.50"#) && outs[4].contains("1e-7"));
    assert!(outs[14].contains(r#""total":0.1e-3"#));
    assert!(outs[4].contains(r#""total":0.004275000000000001"#));
}

#[test]
fn paths_get_the_same_pseudonym_in_every_file_of_a_run() {
    let f = fixture_str("redact-everything.jsonl");
    let o = redact(&[&f, &f]);
    let out = o.out();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 30);
    assert_eq!(
        lines[..15],
        lines[15..],
        "the second copy is written the same way"
    );
    assert!(lines[0].contains(r#""cwd":"/home/user1/dir1/dir2""#));
    assert!(lines[4].contains(r#""path":"/home/user1/dir1/dir2/file2.rs""#));
    assert!(lines[8].contains(r#""readFiles":["/home/user1/dir1/dir2/file2.rs","#));
}

#[test]
fn the_report_counts_by_category() {
    let o = redact(&["--report", &fixture_str("redact-everything.jsonl")]);
    assert_eq!(o.status, 0);
    assert_eq!(
        o.stderr,
        "pi-redact: replaced: command 1, email 1, image 1, key 1, label 1, message 1, name 1, \
         path 7, prompt 1, signature 2, summary 2, text 2, thinking 1, tool output 2, value 4\n"
    );
}

#[test]
fn run_bytes_writes_what_the_binary_writes() {
    for f in fixture_files() {
        let input = std::fs::read(&f).unwrap();
        let bin = cmd("pi-redact").stdin(input.clone()).run();
        let args: RedactArgs = clap::Parser::parse_from(["pi-redact"]);
        let mut out = Out::held();
        let mut d = Diags::new("pi-redact", "<stdin>", false);
        Redact::run_bytes(&args, &input, &mut out, &mut d).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.buf),
            bin.out(),
            "{}",
            f.display()
        );
        assert_eq!(d.held(), bin.stderr, "{}", f.display());
    }
}

// ---- The tools' answers agree on the original and the redacted file. ----

/// Fields of the tools' records that hold (or measure) replaced text, or name the file.
const TEXT_FIELDS: &[&str] = &[
    "file",
    "project",
    "parent_session",
    "arguments",
    "arguments_bytes",
    "text",
    "bytes",
    "text_truncated",
    "details",
    "bash",
    "summary_bytes",
    "system_message_bytes",
];

/// Where lines are numbered: a line the reader skipped (not JSON) is not written, so the
/// numbers after it move. Compared only when the original had no bad line.
const LINE_FIELDS: &[&str] = &["line", "leaf_line", "context_after_line", "diagnostics"];

/// Leaves out the fields that name entries or sessions by id (`--rename-ids` changes them).
fn strip_ids(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| {
                !(matches!(k.as_str(), "session" | "leaf" | "target" | "from_id")
                    || k.ends_with("entry"))
            });
            m.values_mut().for_each(strip_ids);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_ids),
        _ => {}
    }
}

fn strip(v: &mut Value, fields: &[&str]) {
    match v {
        Value::Object(m) => {
            for f in fields {
                m.remove(*f);
            }
            m.values_mut().for_each(|x| strip(x, fields));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, fields)),
        _ => {}
    }
}

const CHECKS: &[(&str, &[&str])] = &[
    ("pi-usage", &[]),
    ("pi-branch", &["--info"]),
    ("pi-tools", &[]),
    ("pi-compactions", &["--errors", "--branch-summaries"]),
];

/// Times, left out of the comparison when `--shift-time` changes them.
const TIME_FIELDS: &[&str] = &["timestamp", "first", "last", "day", "week", "month"];

/// The four tools' records on `file`, without the fields that hold replaced text (nor
/// `also`).
fn answers(file: &Path, clean: bool, also: &[&str], ids: bool) -> Vec<(String, Vec<Value>)> {
    CHECKS
        .iter()
        .map(|(tool, flags)| {
            let o = cmd(tool).args(*flags).arg(file).run();
            let mut recs = o.records();
            for r in &mut recs {
                strip(r, TEXT_FIELDS);
                strip(r, also);
                if ids {
                    strip_ids(r);
                }
                if !clean {
                    strip(r, LINE_FIELDS);
                }
            }
            (tool.to_string(), recs)
        })
        .collect()
}

/// Redacts `file` (with `flags`) into `dir` and asserts the four tools agree.
fn assert_same_answers(file: &Path, dir: &TempDir, flags: &[&str]) {
    let o = cmd("pi-redact").args(flags).arg(file).run();
    assert!(
        o.status == 0 || o.status == 2,
        "{}: {}",
        file.display(),
        o.stderr
    );
    assert!(
        !o.stderr.contains("replaced input text"),
        "{}: {}",
        file.display(),
        o.stderr
    );
    let clean = o.stderr.is_empty();
    let red = dir.write("redacted.jsonl", &o.stdout);
    let mut also: Vec<&str> = Vec::new();
    if flags.iter().any(|f| f.starts_with("--shift-time")) {
        also.extend(TIME_FIELDS);
    }
    let ids = flags.contains(&"--rename-ids");
    let (a, b) = (
        answers(file, clean, &also, ids),
        answers(&red, clean, &also, ids),
    );
    for ((tool, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "{tool} on {} {flags:?}", file.display());
    }
}

#[test]
fn the_tools_answer_the_same_on_every_redacted_fixture() {
    let dir = TempDir::new("redact-fixtures");
    for f in fixture_files() {
        assert_same_answers(&f, &dir, &[]);
        assert_same_answers(&f, &dir, &["--keep-text"]);
        assert_same_answers(&f, &dir, &["--rename-ids", "--shift-time=-3d"]);
    }
}

#[test]
fn shift_time_moves_every_timestamp_by_one_constant() {
    let o = redact(&["--shift-time=-1d", &fixture_str("redact-everything.jsonl")]);
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = o.records();
    assert_eq!(r[0]["timestamp"], "2026-05-31T10:00:00.000Z");
    assert_eq!(r[3]["timestamp"], "2026-05-31T10:00:01.000Z");
    assert_eq!(r[3]["message"]["timestamp"], 1780308001000_i64 - 86_400_000);
    let bad = redact(&[
        "--shift-time",
        "1w",
        &fixture_str("redact-everything.jsonl"),
    ]);
    assert_eq!(bad.status, 2);
    assert_eq!(
        bad.stderr,
        "pi-redact: --shift-time unknown unit \"w\": use s, m, h or d\n"
    );
}

#[test]
fn rename_ids_renames_every_reference_consistently() {
    let o = redact(&["--rename-ids", &fixture_str("redact-everything.jsonl")]);
    let r = o.records();
    assert_eq!(r[0]["id"], "00000000-0000-4000-8000-000000000001");
    assert_eq!(r[1]["id"], "00000001");
    assert_eq!(r[1]["parentId"], Value::Null);
    assert_eq!(r[2]["parentId"], "00000001");
    // compaction e08 keeps from e04; the label e10 targets e04; the branch summary e09 comes
    // from e08.
    assert_eq!(r[8]["firstKeptEntryId"], "00000004");
    assert_eq!(r[9]["fromId"], "00000008");
    assert_eq!(r[10]["targetId"], "00000004");
    assert!(!o.out().contains("\"e0"), "no old id is left");
}

#[test]
fn corpus_the_tools_answer_the_same_on_every_redacted_file() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    let dir = TempDir::new("redact-corpus");
    for f in &files {
        assert_same_answers(f, &dir, &[]);
    }
}

// ---- The residual scan and --keep-text. ----

#[test]
fn a_named_secret_in_an_id_stops_its_line() {
    // Ids are kept as they are (they make the tree); named as a secret, the session's id must
    // stop the line that holds it (and only that one).
    let f = fixture_str("redact-everything.jsonl");
    let o = cmd("pi-redact")
        .env("FAKE_SECRET", "s-redact")
        .args(["--secret-env", "FAKE_SECRET", &f])
        .run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr_lines(),
        [format!(
            "pi-redact: {f}:1: the rewritten record still holds 8 characters of replaced input text: not written"
        )]
    );
    let lines: Vec<String> = o.out().lines().map(String::from).collect();
    assert_eq!(
        lines.len(),
        15,
        "a line not written is left blank: the numbers stay"
    );
    assert_eq!(lines[0], "", "line 1");
    assert!(lines[1..].iter().all(|l| !l.is_empty()));
    assert!(!o.out().contains("s-redact"));
    let unchecked = cmd("pi-redact")
        .env("FAKE_SECRET", "s-redact")
        .args(["--no-check", "--secret-env", "FAKE_SECRET", &f])
        .ok();
    assert_eq!(unchecked.out().lines().count(), 15);
}

#[test]
fn a_named_secret_in_a_kept_name_is_masked_there() {
    // The model name is kept as it is, but not a secret the user named: it is masked in it
    // (in both modes), and every line is written.
    let f = fixture_str("redact-everything.jsonl");
    for mode in [&[][..], &["--keep-text"]] {
        let o = cmd("pi-redact")
            .env("FAKE_SECRET", "claude-sonnet-4-5")
            .args(mode)
            .args(["--secret-env", "FAKE_SECRET", "--report", &f])
            .run();
        assert_eq!(o.status, 0, "{mode:?}: {}", o.stderr);
        assert!(!o.out().contains("claude-sonnet-4-5"), "{mode:?}");
        let r = o.records();
        assert_eq!(r.len(), 15);
        assert_eq!(r[1]["modelId"], "[secret:listed]", "{mode:?}");
        assert_eq!(r[4]["message"]["model"], "[secret:listed]", "{mode:?}");
        assert_eq!(r[4]["message"]["provider"], "anthropic", "{mode:?}");
        assert!(o.stderr.contains("listed"), "{mode:?}: {}", o.stderr);
    }
}

/// A session whose names (kept as written) hold private things: a local model that is a file
/// under the user's home, a model that is a URL with a password, a provider named by a token
/// pasted in its place, an extension's type with an e-mail address, a key as a compaction's
/// reason.
const KEPT_NAMES: &str = concat!(
    r#"{"type":"session","version":3,"id":"s-names","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/src/app"}"#,
    "\n",
    r#"{"type":"model_change","id":"e1","parentId":null,"timestamp":"2026-06-01T10:00:00.100Z","provider":"llamacpp","modelId":"/home/ana/models/qwen-7b.gguf"}"#,
    "\n",
    r#"{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"list files","timestamp":1780308001000}}"#,
    "\n",
    r#"{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"/home/ana/bin/lister","arguments":{"dir":"."}}],"api":"openai-completions","provider":"llamacpp","model":"/home/ana/models/qwen-7b.gguf","responseModel":"/home/ana/models/qwen-7b.gguf","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"input":0.001,"output":0.0005,"cacheRead":0,"cacheWrite":0,"total":0.0015}},"stopReason":"toolUse","timestamp":1780308002000}}"#,
    "\n",
    r#"{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-06-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"/home/ana/bin/lister","content":[{"type":"text","text":"a.rs"}],"isError":false,"timestamp":1780308003000}}"#,
    "\n",
    r#"{"type":"message","id":"e5","parentId":"e4","timestamp":"2026-06-01T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"openai-completions","provider":"ghp_abcdefghijklmnopqrstuvwxyz0123456789","model":"https://bob:hunter2secret@llm.example.com/v1/qwen","usage":{"input":200,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":220,"cost":{"input":0.002,"output":0.001,"cacheRead":0,"cacheWrite":0,"total":0.003}},"stopReason":"stop","timestamp":1780308004000}}"#,
    "\n",
    r#"{"type":"custom","id":"e6","parentId":"e5","timestamp":"2026-06-01T10:00:05.000Z","customType":"notify:ana@example.com","data":{}}"#,
    "\n",
    r#"{"type":"compaction","id":"e7","parentId":"e6","timestamp":"2026-06-01T10:00:06.000Z","summary":"s","firstKeptEntryId":"e5","tokensBefore":330,"details":{"reason":"AKIAIOSFODNN7EXAMPLE","trigger":"task-risk-assessment"}}"#,
    "\n",
);

/// Names kept as written (providers, models, tools, extensions' types) are what the tools
/// answer with, but a path, a credential or an e-mail address in one is masked there as in
/// kept text, in both modes: the same path gets the same pseudonym in every field, so the
/// tools still join and group what they did.
#[test]
fn kept_names_hold_no_path_credential_or_address() {
    let t = TempDir::new("redact-kept-names");
    let original = t.write("s.jsonl", KEPT_NAMES);
    for mode in [&[][..], &["--keep-text"]] {
        let o = cmd("pi-redact")
            .args(mode)
            .arg("--report")
            .arg(&original)
            .run();
        assert_eq!(o.status, 0, "{mode:?}: {}", o.stderr);
        let out = o.out();
        assert_none_survive(
            &out,
            &[
                "/home/ana",
                "hunter2secret",
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "ana@example.com",
                "AKIAIOSFODNN7EXAMPLE",
            ],
        );
        let r = o.records();
        let model = r[1]["modelId"].as_str().unwrap();
        assert!(
            model.starts_with("/home/user") && model.ends_with(".gguf"),
            "{model}"
        );
        let m = &r[3]["message"];
        assert_eq!(m["model"], model, "{mode:?}");
        assert_eq!(m["responseModel"], model, "{mode:?}");
        assert_eq!(m["provider"], "llamacpp", "{mode:?}");
        let tool = m["content"][0]["name"].as_str().unwrap();
        assert!(tool.starts_with("/home/user") && tool != model, "{tool}");
        assert_eq!(r[4]["message"]["toolName"], tool, "{mode:?}");
        let m = &r[5]["message"];
        assert_eq!(m["provider"], "[secret:github-token]", "{mode:?}");
        assert_eq!(
            m["model"],
            "https://[secret:url-password]@llm.example.com/v1/qwen"
        );
        assert_eq!(r[6]["customType"], "notify:[email]", "{mode:?}");
        // A label of details is kept, unless it is a credential.
        let details = &r[7]["details"];
        assert_eq!(details["trigger"], "task-risk-assessment", "{mode:?}");
        let reason = if mode.is_empty() {
            "[value · 20 chars]"
        } else {
            "[secret:aws-access-key]"
        };
        assert_eq!(details["reason"], reason, "{mode:?}");
        for kind in ["path", "github-token", "url-password", "email"] {
            assert!(o.stderr.contains(kind), "{mode:?}: {kind}: {}", o.stderr);
        }

        let redacted = t.write("redacted.jsonl", out.as_bytes());
        let statuses = |f: &Path| -> Vec<Value> {
            let o = cmd("pi-tools").arg(f).ok();
            o.records().iter().map(|r| r["status"].clone()).collect()
        };
        assert_eq!(statuses(&redacted), statuses(&original));
        assert_eq!(statuses(&redacted), [Value::from("ok")]);
        // The same groups and numbers, each model named by its new name.
        let usage = |by: &str, f: &Path| -> Vec<Value> {
            let o = cmd("pi-usage").args(["--total", "--by", by]).arg(f).ok();
            let mut recs = o.records();
            recs.iter_mut()
                .for_each(|r| strip(r, &["model", "provider", "file", "project"]));
            recs
        };
        for by in ["model", "provider", "session"] {
            assert_eq!(usage(by, &redacted), usage(by, &original), "{by}");
        }
        assert_eq!(
            usage("model", &original).len(),
            3,
            "two models and the total"
        );
    }
}

#[test]
fn a_secret_that_cannot_be_read_is_an_error() {
    let o = cmd("pi-redact")
        .env_remove("PI_REDACT_UNSET")
        .args(["--secret-env", "PI_REDACT_UNSET"])
        .arg(fixture("redact-everything.jsonl"))
        .run();
    assert_eq!(o.status, 2);
    assert_eq!(
        o.stderr,
        "pi-redact: --secret-env PI_REDACT_UNSET: the variable is not set\n"
    );
    assert_eq!(o.out(), "");
}

#[test]
fn keep_text_masks_secrets_e_mails_and_paths() {
    let t = TempDir::new("redact-keep");
    let env = t.write(
        ".env",
        "# secrets\nDB_PASSWORD=\"Tr0ub4dor&3x\"\nPORT=3000\n",
    );
    let session = t.write(
        "s.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/app"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"db pw Tr0ub4dor&3x on port 3000, token ghp_abcdefghijklmnopqrstuvwxyz0123456789, mail ana@example.com, file /home/ana/app/x.rs"}}"#,
            "\n"
        ),
    );
    let o = cmd("pi-redact")
        .args(["--keep-text", "--secrets-from"])
        .arg(&env)
        .arg(&session)
        .ok();
    let r = o.records();
    assert_eq!(r[0]["cwd"], "/home/user1/dir1");
    assert_eq!(
        r[1]["message"]["content"],
        "db pw [secret:listed] on port 3000, token [secret:github-token], mail [email], file /home/user1/dir1/file1.rs"
    );
}

/// `--secrets-from` reads a `.env` file as dotenv does: values followed by a comment, in
/// either quotes or none, escaped, substituted, or of several lines are all masked; a line it
/// cannot read is an error that says where, and nothing is written.
#[test]
fn secrets_from_reads_dotenv_as_dotenv_does() {
    let t = TempDir::new("redact-dotenv");
    let env = t.write(
        ".env",
        concat!(
            "A=\"quoted-Val-111\" # prod key\n",
            "B=unquoted-Val-222 # prod key\n",
            "C='single-Val-333' # c\n",
            "export  D = spaced-Val-444\n",
            "E=\"esc-\\$Val-555\"\n",
            "F=${A}-ref-666\n",
            "API_SECRET=\"Zebra-first-line-77\n",
            "Zebra-second-line-88\"\n",
        ),
    );
    let session = t.write(
        "s.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/srv/x"}"#,
            "\n",
            r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"a quoted-Val-111 b unquoted-Val-222 c single-Val-333 d spaced-Val-444 e esc-$Val-555 f quoted-Val-111-ref-666 g Zebra-first-line-77\nZebra-second-line-88 h Zebra-second-line-88"}}"#,
            "\n",
            r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"assistant","content":[],"model":"Zebra-first-line-77\nZebra-second-line-88","stopReason":"stop"}}"#,
            "\n",
        ),
    );
    let o = cmd("pi-redact")
        .args(["--keep-text", "--secrets-from"])
        .arg(&env)
        .arg(&session)
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let out = o.out();
    let lines: Vec<&str> = out.lines().collect();
    let m: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(
        m["message"]["model"], "[secret:listed]",
        "a kept name masked"
    );
    let r: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(
        r["message"]["content"],
        "a [secret:listed] b [secret:listed] c [secret:listed] d [secret:listed] e [secret:listed] \
         f [secret:listed] g [secret:listed] h [secret:listed]"
    );
    assert!(!o.out().contains("Zebra"));

    for (text, line) in [
        ("A=1\nB=two words\n", 2),
        ("A=1\n\nB=\"never closed\nC=3\n", 3),
    ] {
        let bad = t.write("bad.env", text);
        let o = cmd("pi-redact")
            .args(["--keep-text", "--secrets-from"])
            .arg(&bad)
            .arg(&session)
            .run();
        assert_eq!(o.status, 2);
        assert_eq!(
            o.stderr,
            format!(
                "pi-redact: {}:{line}: --secrets-from: no NAME=value pair as dotenv reads one \
                 (an unclosed quote, a blank or an unknown escape in a value?): its secret would \
                 not be masked\n",
                bad.display()
            )
        );
        assert_eq!(o.out(), "");
    }
}

/// With `--keep-text`, a string under a key that names a credential (tool arguments, extension
/// data, nested in `env` or `headers`, in an array) is masked whole, where the detectors see
/// nothing in it; keys that only look alike keep their values, numbers stay. The default mode
/// replaces them all anyway.
#[test]
fn keep_text_masks_values_under_credential_keys() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/src/app"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"password":"Tr0ub4dor&3x","api_key":"qk-Val-12345-xyz","env":{"DB_PASSWORD":"Sup3rS3cr3t!","HOME":"plain-home"},"headers":{"Authorization":"Basic dXNlcjpwYXNz","X-Api-Key":["quokkaapikeyvalue",7]},"token":42,"maxTokens":"plain-max","authorName":"Ana Plain","key":"Enter","vars":[{"name":"DB_TOKEN","value":"pairsecretvalue"},{"Name":"MODE","Value":"pair-plain"}],"hdrs":[{"value":"pairbeforename","key":"X-Auth-Token"}]}}],"provider":"anthropic","model":"m","stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"custom","id":"c1","parentId":"a1","timestamp":"2026-06-01T10:00:03.000Z","customType":"cfg","data":{"password":"Tr0ub4dor&3x","credentials":{"user":"ana-user","pass":"hunter2"},"secret":"","secret_key_base":"railsbasevalue","database":"plain-db"}}"#,
        "\n",
    );
    let o = keep_text(session);
    let r = o.records();
    let args = &r[1]["message"]["content"][0]["arguments"];
    let keyed = "[secret:keyed]";
    assert_eq!(args["password"], keyed);
    assert_eq!(args["api_key"], keyed);
    assert_eq!(args["env"]["DB_PASSWORD"], keyed);
    assert_eq!(args["env"]["HOME"], "plain-home");
    assert_eq!(args["headers"]["Authorization"], keyed);
    assert_eq!(args["headers"]["X-Api-Key"], serde_json::json!([keyed, 7]));
    assert_eq!(args["token"], 42);
    assert_eq!(args["maxTokens"], "plain-max");
    // Kept, not a credential; `Ana` is the name of the home folder of the header's cwd
    // (`/home/ana`), masked as a word wherever it occurs (issue 17, item 2).
    assert_eq!(args["authorName"], "user1 Plain");
    assert_eq!(args["key"], "Enter");
    // A variable written as a pair: its `value` when its `name` or `key` names a credential.
    assert_eq!(
        args["vars"],
        serde_json::json!([{"name": "DB_TOKEN", "value": keyed}, {"Name": "MODE", "Value": "pair-plain"}])
    );
    assert_eq!(
        args["hdrs"],
        serde_json::json!([{"value": keyed, "key": "X-Auth-Token"}])
    );
    let data = &r[2]["data"];
    assert_eq!(data["password"], keyed);
    assert_eq!(
        data["credentials"],
        serde_json::json!({"user": keyed, "pass": keyed})
    );
    assert_eq!(data["secret"], "");
    // Rails' key base; a last word `base` after no `key` names nothing.
    assert_eq!(data["secret_key_base"], keyed);
    assert_eq!(data["database"], "plain-db");
    assert_eq!(
        o.stderr, "pi-redact: replaced: keyed 11, path 1, user 1\n",
        "the mask's kind is counted"
    );
    let plain = cmd("pi-redact").stdin(session).ok().out();
    let secrets = [
        "Tr0ub4dor",
        "qk-Val",
        "Sup3r",
        "dXNlcjpwYXNz",
        "quokkaapikey",
        "hunter2",
        "pairsecret",
        "pairbefore",
    ];
    assert_none_survive(&o.out(), &secrets);
    assert_none_survive(&plain, &secrets);
}

/// With `--keep-text`, a value that a credential's name gives in text (a command's `export`,
/// header, option or curl `-u`, a `.env` line, a cookie) is masked whatever its shape, and
/// so is every later occurrence of a secret found once (in text or under a credential key),
/// on this record or later ones; code and prose that only name a credential stay.
#[test]
fn keep_text_masks_credentials_named_in_text_and_where_they_recur() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/srv/app"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"export OPENAI_API_KEY=quokkakeyvalue && curl -H 'X-Auth-Token: quokkaauthtok' -u ana:Quokka-pass-77 --password quokkaoption https://x","password":"Tr0ub4dor&3x"}}],"provider":"anthropic","model":"m","stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"message","id":"u1","parentId":"a1","timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"user","content":"my .env:\nDB_PASS=hunterhunter\nCookie: sid=quokkasid; theme=dark\nAuthorization: Basic YW5hOnF1b2trYQ=="}}"#,
        "\n",
        r#"{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-06-01T10:00:03.000Z","message":{"role":"user","content":"it printed quokkakeyvalue, then Tr0ub4dor&3x and Quokka-pass-77"}}"#,
        "\n",
        r#"{"type":"message","id":"u3","parentId":"u2","timestamp":"2026-06-01T10:00:04.000Z","message":{"role":"user","content":"password: string; see the --token flag; token = getToken(); Password: must be long; apiKey: resolvedApiKey, x"}}"#,
        "\n",
    );
    let o = keep_text(session);
    assert_none_survive(
        &o.out(),
        &[
            "quokkakeyvalue",
            "quokkaauthtok",
            "Quokka-pass-77",
            "quokkaoption",
            "Tr0ub4dor",
            "hunterhunter",
            "quokkasid",
            "YW5hOnF1b2trYQ",
        ],
    );
    let r = o.records();
    assert_eq!(
        r[1]["message"]["content"][0]["arguments"]["command"],
        "export OPENAI_API_KEY=[secret:keyed] && curl -H 'X-Auth-Token: [secret:keyed]' \
         -u ana:[secret:keyed] --password [secret:keyed] https://x"
    );
    assert_eq!(
        r[2]["message"]["content"],
        "my .env:\nDB_PASS=[secret:keyed]\nCookie: [secret:keyed]\nAuthorization: Basic [secret:keyed]"
    );
    assert_eq!(
        r[3]["message"]["content"],
        "it printed [secret:keyed], then [secret:keyed] and [secret:keyed]"
    );
    let prose = "password: string; see the --token flag; token = getToken(); Password: must be long; apiKey: resolvedApiKey, x";
    assert_eq!(r[4]["message"]["content"], prose);
}

/// With `--keep-text` the run is read twice, first to learn: a secret or a user's name that
/// only a later record reveals (a value a credential's name gives, a home folder) is masked in
/// the records before it too, and in the inputs before its own; read from stdin, from a
/// file, and across two files. `--one-pass` reads once: the earlier text keeps it.
#[test]
fn keep_text_masks_what_a_later_record_reveals_in_the_records_before_it() {
    let early = user_texts(
        "/srv/app",
        &["the old key was quokkakeyvalue and zoltan set it up; Zoltan knows"],
    );
    let header = concat!(
        r#"{"type":"session","version":3,"id":"s2","timestamp":"2026-06-01T11:00:00.000Z","cwd":"/srv/app"}"#,
        "\n",
    );
    let late = concat!(
        r#"{"type":"message","id":"a1","parentId":"u0","#,
        r#""timestamp":"2026-06-01T11:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"export OPENAI_API_KEY=quokkakeyvalue; ls /home/zoltan/src"}}],"provider":"anthropic","model":"m","stopReason":"toolUse"}}"#,
        "\n",
    );
    let both = format!("{early}{late}");
    let want = "the old key was [secret:keyed] and user1 set it up; user1 knows";
    let first_text = |o: &Output| o.records()[1]["message"]["content"].clone();
    let t = TempDir::new("redact-reach-back");
    let one = t.write("one.jsonl", &both);
    let (a, b) = (
        t.write("a.jsonl", &early),
        t.write("b.jsonl", format!("{header}{late}")),
    );
    let runs = [
        cmd("pi-redact").args(["--keep-text"]).stdin(both.clone()),
        cmd("pi-redact").arg("--keep-text").arg(&one),
        cmd("pi-redact")
            .arg("--keep-text")
            .arg("-")
            .stdin(both.clone()),
        cmd("pi-redact").arg("--keep-text").arg(&a).arg(&b),
        cmd("pi-redact")
            .arg("--keep-text")
            .arg("--threads=1")
            .arg(&a)
            .arg(&b),
    ];
    for (i, run) in runs.into_iter().enumerate() {
        let o = run.ok();
        assert_none_survive(&o.out(), &["quokkakeyvalue", "zoltan", "Zoltan"]);
        assert_eq!(first_text(&o), want, "run {i}");
    }
    // A FIFO, kept as stdin is; a file large enough to be read on several cores.
    let fifo = t.path().join("fifo.jsonl");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let (path, text) = (fifo.clone(), both.clone());
        let writer = std::thread::spawn(move || std::fs::write(path, text).unwrap());
        let o = cmd("pi-redact").arg("--keep-text").arg(&fifo).ok();
        writer.join().unwrap();
        assert_eq!(first_text(&o), want, "a FIFO");
    }
    let filler = r#"{"type":"custom","customType":"x","id":"f","parentId":"u0","timestamp":"2026-06-01T10:30:00.000Z","data":{"note":"nothing to see here, nothing at all"}}"#;
    let large = format!("{early}{}{late}", format!("{filler}\n").repeat(100_000));
    assert!(large.len() > 12 << 20);
    let large = t.write("large.jsonl", large);
    let o = cmd("pi-redact").arg("--keep-text").arg(&large).ok();
    assert_none_survive(&o.out(), &["quokkakeyvalue", "zoltan", "Zoltan"]);
    assert_eq!(first_text(&o), want, "a large file");
    // No temporary file to keep stdin in: read once, and said so (status 2).
    let o = cmd("pi-redact")
        .env("TMPDIR", t.path().join("missing"))
        .arg("--keep-text")
        .stdin(both.clone())
        .run();
    assert_eq!(o.status, 2);
    assert!(o
        .stderr
        .starts_with("pi-redact: <stdin>: read once, not twice: no temporary file"));
    let once = "the old key was quokkakeyvalue and zoltan set it up; Zoltan knows";
    assert_eq!(first_text(&o), once);
    for run in [
        cmd("pi-redact")
            .args(["--keep-text", "--one-pass"])
            .stdin(both.clone()),
        cmd("pi-redact")
            .args(["--keep-text", "--one-pass"])
            .arg(&a)
            .arg(&b),
    ] {
        assert_eq!(first_text(&run.ok()), once);
    }
}

/// A stream too large for the temporary file that keeps it (here a file size limit; on a
/// machine, a full disk): what was kept is read twice, the rest once after it, nothing is
/// lost, and the run says so (status 2).
#[test]
fn keep_text_reads_once_what_it_has_no_room_to_keep() {
    let filler = r#"{"type":"custom","customType":"x","id":"f","parentId":"u0","timestamp":"2026-06-01T10:30:00.000Z","data":{"note":"nothing to see here, nothing at all"}}"#;
    let session = format!(
        "{}{}{}",
        user_texts("/srv/app", &["the key was quokkakeyvalue"]),
        format!("{filler}\n").repeat(3000),
        r#"{"type":"message","id":"a1","parentId":"u0","timestamp":"2026-06-01T11:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"export OPENAI_API_KEY=quokkakeyvalue"}}],"provider":"anthropic","model":"m","stopReason":"toolUse"}}"#,
    ) + "\n";
    let t = TempDir::new("redact-no-room");
    let input = std::fs::File::open(t.write("s.jsonl", &session)).unwrap();
    // 100 blocks of 512 bytes; the signal for a write past the limit ignored, so the write
    // fails instead.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' XFSZ && ulimit -f 100 && exec "$0" --keep-text"#)
        .arg(bin_dir().join("pi-redact"))
        .stdin(input)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    if err.contains("ulimit") {
        eprintln!("no file size limit here: skipped ({err})");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{err}");
    // How large a block `ulimit -f` counts depends on the shell.
    let (head, tail) = err.split_once(": no room").unwrap_or_default();
    assert!(
        head.starts_with("pi-redact: <stdin>: read twice only up to byte "),
        "{err}"
    );
    assert_eq!(
        tail,
        " to keep the rest (File too large (os error 27)), read once; a secret or user name it \
         reveals is not masked before it\n"
    );
    let once = cmd("pi-redact")
        .args(["--keep-text", "--one-pass"])
        .stdin(session.clone())
        .ok();
    assert_eq!(out, once.out(), "every line, as one reading writes it");
    assert_eq!(out.lines().count(), 3003);
}

#[test]
fn a_key_that_is_a_token_is_replaced_too() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"env","arguments":{"ghp_abcdefghijklmnopqrstuvwxyz0123456789":1,"plain_key":2}}],"stopReason":"toolUse"}}"#,
        "\n"
    );
    for mode in [&[][..], &["--keep-text"][..]] {
        let o = cmd("pi-redact").args(mode).stdin(session).ok();
        assert!(!o.out().contains("ghp_"), "{mode:?}: {}", o.out());
        assert!(o.out().contains(r#""plain_key":2"#));
    }
}

/// A `usage` object's member names are field names pi-usage reports (`other`): kept even when
/// they are no identifier (a quote, a line feed), unless the masker finds something in them
/// (a token, an e-mail address), in both modes; its numbers are kept.
#[test]
fn usage_field_names_are_kept_unless_they_hold_a_secret() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[],"usage":{"input":1,"we\"ird name":2,"ghp_abcdefghijklmnopqrstuvwxyz0123456789":3,"ana@example.com":4,"cost":{"total":0.5,"odd key!":6}},"stopReason":"stop"}}"#,
        "\n"
    );
    for mode in [&[][..], &["--keep-text"][..]] {
        let o = cmd("pi-redact").args(mode).stdin(session).ok();
        let out = o.out();
        assert!(out.contains(r#""we\"ird name":2"#), "{mode:?}: {out}");
        assert!(out.contains(r#""odd key!":6"#), "{mode:?}: {out}");
        assert!(out.contains(r#""input":1"#), "{mode:?}: {out}");
        assert!(
            !out.contains("ghp_") && !out.contains("ana@"),
            "{mode:?}: {out}"
        );
    }
}

/// Only the `usage` objects pi-usage reads keep their member names (an assistant or tool result
/// message's, a `usage` or `compaction` entry's, a `task` tool result's `details.usage`): an
/// object named `usage` in tool arguments, extension data, compaction details or another tool's
/// details is data, its names that are no identifier replaced.
#[test]
fn only_the_usage_objects_pi_usage_reads_keep_their_field_names() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"bash","arguments":{"usage":{"my password is hunter2 please":2,"cost":{"secret words in a key":1}}}}],"usage":{"input":1,"kept name one":2},"stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"message","id":"r","parentId":"a","timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"t","toolName":"task","content":[],"details":{"usage":{"kept name two":3},"x":{"usage":{"private words in details":4}}},"usage":{"kept name three":5}}}"#,
        "\n",
        r#"{"type":"message","id":"b","parentId":"r","timestamp":"2026-06-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"t","toolName":"bash","content":[],"details":{"usage":{"private words of bash":6}}}}"#,
        "\n",
        r#"{"type":"custom","id":"c","parentId":"b","timestamp":"2026-06-01T10:00:04.000Z","customType":"x","data":{"usage":{"private words in data":7}}}"#,
        "\n",
        r#"{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-06-01T10:00:05.000Z","summary":"s","firstKeptEntryId":"a","tokensBefore":5,"details":{"usage":{"private words in compaction":8}},"usage":{"kept name four":9}}"#,
        "\n",
        r#"{"type":"usage","id":"e","parentId":"d","timestamp":"2026-06-01T10:00:06.000Z","kind":"k","usage":{"kept name five":10}}"#,
        "\n",
    );
    let o = cmd("pi-redact").stdin(session).ok();
    let out = o.out();
    for kept in [
        r#""kept name one":2"#,
        r#""kept name two":3"#,
        r#""kept name three":5"#,
        r#""kept name four":9"#,
        r#""kept name five":10"#,
    ] {
        assert!(out.contains(kept), "{kept}: {out}");
    }
    for private in ["hunter2", "secret words", "private words"] {
        assert!(!out.contains(private), "{private}: {out}");
    }
    assert!(out.contains(r#""usage":{"[key · 29 chars]":2,"cost":{"[key · 21 chars]":1}}"#));
}

/// Keys of one object replaced by the same placeholder (or, with `--keep-text`, the same mask)
/// are numbered, so `JSON.parse` still sees every key; a key repeated in the input is written
/// the same way each time, and another object counts its own.
#[test]
fn replaced_keys_of_one_object_stay_distinct() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"bash","arguments":{"hello world":1,"other words":2,"a@example.com":3,"b@example.com":4,"n":{"hello world":5,"third thing":6},"hello world":7}}],"stopReason":"toolUse"}}"#,
        "\n",
    );
    let o = cmd("pi-redact").stdin(session).ok();
    let line = o.out().lines().nth(1).unwrap().to_string();
    assert!(
        line.contains(r#"{"[key · 11 chars]":1,"[key · 11 chars · 2]":2,"[key · 13 chars]":3,"[key · 13 chars · 2]":4,"n":{"[key · 11 chars]":5,"[key · 11 chars · 2]":6},"[key · 11 chars]":7}"#),
        "{line}"
    );
    let v: Value = serde_json::from_str(&line).unwrap();
    let args = &v["message"]["content"][0]["arguments"];
    assert_eq!(args.as_object().unwrap().len(), 5, "{args}");
    let o = cmd("pi-redact").arg("--keep-text").stdin(session).ok();
    let line = o.out().lines().nth(1).unwrap().to_string();
    assert!(line.contains(r#""[email]":3,"[email · 2]":4"#), "{line}");
}

/// A tool output where a path the path pattern sees (`/home/ana/work/app/[eval]` gives
/// `/home/ana/work/app/`) is also the start of a path it did not see start (in a `file://` URL,
/// after `pkg@`), and a shorter path (`/node_modules/`, in code) is masked on its own: every
/// record is written, every path given its pseudonym, nothing withheld (the shape of a
/// corpus record that `--keep-text` used to withhold).
#[test]
fn keep_text_withholds_no_record_whose_paths_all_get_pseudonyms() {
    let f = fixture("redact-keep-text-path-in-url.jsonl");
    let o = cmd("pi-redact").arg("--keep-text").arg(&f).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "");
    let input = std::fs::read_to_string(&f).unwrap();
    let out = o.out();
    assert_eq!(out.lines().count(), input.lines().count());
    assert!(out.lines().all(|l| !l.is_empty()), "no line withheld");
    for private in ["ana", "/work/app", "register-", "left-pad"] {
        assert!(!out.contains(private), "{private} survived: {out}");
    }
    let text = o.records()[3]["message"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("(file:///home/user1/dir"), "{text}");
    assert!(text.contains("pkg@/home/user1/dir"), "{text}");
    assert!(
        text.contains("Require stack:\n- /home/user1/dir1/dir2/[eval]"),
        "{text}"
    );
}

/// Windows paths (a drive with `\` or `/`, UNC, doubled `\` in JSON text) get pseudonyms that
/// keep their structure, one per path whatever its separators; the sessions folder named
/// after the cwd (in `parentSession`, and `--out-dir`'s) is named after the cwd's pseudonym,
/// as Pi names it.
#[test]
fn windows_paths_get_pseudonyms_that_keep_their_structure() {
    let f = fixture("redact-windows-paths.jsonl");
    let folder = "--C--Users-user1-dir1-dir2--";
    let r = cmd("pi-redact").arg(&f).ok().records();
    assert_eq!(r[0]["cwd"], r"C:\Users\user1\dir1\dir2");
    assert_eq!(
        r[0]["parentSession"],
        format!(r"C:\Users\user1\dir3\dir4\dir5\{folder}\file1.jsonl")
    );
    let calls = &r[2]["message"]["content"];
    assert_eq!(
        calls[0]["arguments"]["path"],
        r"C:\Users\user1\dir1\dir2\file2.rs"
    );
    assert_eq!(
        calls[1]["arguments"]["path"],
        "C:/Users/user1/dir1/dir2/file3.rs"
    );

    let o = cmd("pi-redact").arg("--keep-text").arg(&f).ok();
    assert!(
        !o.out().contains("ana") && !o.out().contains("fileserver"),
        "{}",
        o.out()
    );
    let r = o.records();
    assert_eq!(
        r[1]["message"]["content"],
        r"Fix C:\Users\user1\dir1\dir2\file2.rs and C:/Users/user1/dir1/dir2/file3.rs; the plan is on \\dir6\dir7\file4.docx"
    );
    assert_eq!(
        r[3]["message"]["content"][0]["text"],
        "{\"file\":\"C:\\\\Users\\\\user1\\\\dir1\\\\dir2\\\\file2.rs\"}\nfn main() {}\n"
    );

    let t = TempDir::new("redact-windows");
    let out = t.path().join("shared");
    cmd("pi-redact").arg("--out-dir").arg(&out).arg(&f).ok();
    let placed = out
        .join(folder)
        .join("2026-06-01T10-00-00-000Z_s-win.jsonl");
    assert!(placed.is_file(), "{}", placed.display());
}

/// `--keep-text`: a home path (`/Users/…`, `/home/…`, `C:\Users\…`) is given its pseudonym
/// wherever it starts after a character that cannot continue a name (an `@` mention, a
/// terminal escape's BEL, a full-width colon, a Chinese character, `-I`, `**`, `{`, `*`, `#`,
/// `$`, `&`), and whole: a random-looking name in it (a session file's uuid, a pnpm folder's
/// hash) is one of its names, not a token masked apart, which left the home folder as it was.
/// A home root that continues a relative path or a URL is no path.
#[test]
fn keep_text_gives_home_paths_their_pseudonyms_wherever_they_start() {
    let f = fixture("redact-keep-text-home-paths.jsonl");
    let o = cmd("pi-redact").arg("--keep-text").arg(&f).ok();
    let out = o.out();
    for private in [
        "anabelle",
        "quokkaproj",
        "secret-plan",
        "Zq8RkT3m",
        "019da4d7",
    ] {
        assert!(!out.contains(private), "{private} survived: {out}");
    }
    assert!(!out.contains("[secret:high-entropy]"), "{out}");
    let r = o.records();
    let text = |i: usize| r[i]["message"]["content"].as_str().unwrap().to_string();
    assert_eq!(text(1), "look at @/Users/user1/dir1/dir2/file1.ts please");
    assert_eq!(
        text(2),
        "history in /Users/user1/dir3/dir4/dir5/--Users-user1-dir1--/file2.jsonl"
    );
    assert_eq!(text(3), "\u{1b}]0;pi - code\u{7}/Users/user1/dir1/dir6");
    assert_eq!(text(4), r"使用脚本：C:\Users\user1\dir7\file3.ps1 执行");
    assert_eq!(text(5), "路径/Users/user1/dir1/dir8");
    assert_eq!(
        text(6),
        "error at /Users/user1/dir1/dir2/dir9 (/Users/user1/dir1/dir10/dir11/dir12/file4.js)"
    );
    assert_eq!(
        text(7),
        "cflags: gcc -I/Users/user1/dir1/dir13 -L/Users/user1/dir1/dir14 end"
    );
    assert_eq!(
        text(8),
        "bold: **/Users/user1/dir1/dir15 brace: {/Users/user1/dir1/dir16} star: */Users/user1/dir1/dir17 end"
    );
    assert_eq!(
        text(9),
        "hash: #/Users/user1/dir1 dollar: $/Users/user1/dir1 amp: a&/Users/user1/dir1 end"
    );
    assert_eq!(
        text(10),
        "relative, not home paths: ./home/page src/home/x https://example.com/home/y end"
    );
    assert_eq!(
        r[11]["message"]["errorMessage"],
        "ENOENT: no such file @/Users/user1/dir1/file5.ts"
    );
}

/// A path field (a tool's `path`, `cwd`, a compaction's `readFiles`) is one path, spaces and
/// all: its pseudonym, in both modes (the default mode wrote a placeholder, `--keep-text`
/// masked it as text and left `Belle/Library/…`). In text, a user's name with a space after a
/// home root is the name (`/Users/Ana Belle/`), and an assignment after a home path is not;
/// where a later name has a space, the path given a pseudonym ends there.
#[test]
fn spaced_paths_get_their_pseudonyms_whole() {
    let f = fixture("redact-spaced-paths.jsonl");
    for mode in [&[][..], &["--keep-text"][..]] {
        let r = cmd("pi-redact").args(mode).arg(&f).ok().records();
        assert_eq!(r[0]["cwd"], "/Users/user1/dir1/dir2/dir3", "{mode:?}");
        let file = "/Users/user1/dir1/dir2/dir3/file1.md";
        assert_eq!(
            r[1]["message"]["content"][0]["arguments"]["path"], file,
            "{mode:?}"
        );
        assert_eq!(r[2]["details"]["readFiles"][0], file, "{mode:?}");
    }
    let o = cmd("pi-redact").arg("--keep-text").arg(&f).ok();
    for private in ["Ana", "Belle", "Library", "ana/"] {
        assert!(
            !o.out().contains(private),
            "{private} survived: {}",
            o.out()
        );
    }
    let r = o.records();
    let text = |i: usize| r[i]["message"]["content"].as_str().unwrap().to_string();
    assert_eq!(
        text(3),
        "open /Users/user1/dir1/dir4 Support/Quokka Secret/notes.md now"
    );
    assert_eq!(text(4), r"and C:\Users\user1\dir5 Proj\x.rs too");
    assert_eq!(
        text(5),
        "env: HOME=/home/user2 PATH=/home/user2/dir6/dir7/dir8 end"
    );
}

/// Input text equal to what pi-redact writes is no leak where the output holds it only as
/// what was written in place of other input (`redact-input-like-output.jsonl`): a path that is
/// another path's pseudonym (in arguments, details, text and a provider's error message), a
/// text, value or key that is a placeholder, a value that is a numbered key's placeholder or
/// mask, a credential's value that is a mask, a value that is a shifted timestamp or a renamed
/// id. Every record is written, in every mode.
#[test]
fn input_like_the_output_is_written() {
    let f = fixture("redact-input-like-output.jsonl");
    let lines = std::fs::read_to_string(&f).unwrap().lines().count();
    let modes: [&[&str]; 5] = [
        &[],
        &["--keep-text"],
        &["--shift-time=-1h"],
        &["--rename-ids"],
        &["--keep-text", "--shift-time=-1h", "--rename-ids"],
    ];
    for mode in modes {
        let r = cmd("pi-redact").args(mode).arg(&f).ok().records();
        assert_eq!(r.len(), lines, "{mode:?}");
        let args = &r[2]["message"]["content"][0]["arguments"];
        assert_eq!(args["path"], "/home/user1/dir1/file1.rs", "{mode:?}");
        assert_eq!(args["other"], "/home/user2/dir2/file2.rs", "{mode:?}");
        let details = &r[3]["message"]["details"];
        assert_eq!(details["path"], "/home/user1/dir1/file1.rs", "{mode:?}");
        assert_eq!(
            r[6]["message"]["errorMessage"], "cannot open /home/user1/dir1/file1.rs",
            "{mode:?}"
        );
    }
    let r = cmd("pi-redact").arg(&f).ok().records();
    let content = &r[4]["message"]["content"];
    assert_eq!(content[0]["text"], "[text · 1 char]");
    // A placeholder of the kind the text would get is kept, whatever its number: a redacted
    // file redacted again is unchanged.
    assert_eq!(content[1]["text"], "[text · 1 char]");
    assert_eq!(content[2]["arguments"]["a"], "[value · 1 char]");
    assert_eq!(content[2]["arguments"]["b"], "[value · 1 char]");
    let details = &r[5]["message"]["details"];
    assert_eq!(details["[key · 16 chars]"], "[value · 1 char]");
    assert_eq!(details["[key · 11 chars · 2]"], 2);
    assert_eq!(details["v"], "[value · 20 chars]");
    let r = cmd("pi-redact").arg("--keep-text").arg(&f).ok().records();
    assert_eq!(
        r[1]["message"]["content"],
        "see /home/user1/dir1/file1.rs and /home/user2/dir2/file2.rs"
    );
    assert_eq!(
        r[3]["message"]["content"][0]["text"],
        "/home/user2/dir2/file2.rs"
    );
    let args = &r[4]["message"]["content"][2]["arguments"];
    assert_eq!(args["api_key"], "[secret:keyed]");
    assert_eq!(args["note"], "[secret:github-token]");
    let details = &r[5]["message"]["details"];
    assert_eq!(details["[email · 2]"], 4);
    assert_eq!(details["token"], "[secret:keyed]");
    let r = cmd("pi-redact")
        .arg("--shift-time=-1h")
        .arg(&f)
        .ok()
        .records();
    assert_eq!(r[7]["timestamp"], "2026-06-01T09:00:07.000Z");
    assert_eq!(r[7]["data"]["at"], "[value · 24 chars]");
    let r = cmd("pi-redact").arg("--rename-ids").arg(&f).ok().records();
    assert_eq!(r[8]["id"], "00000008");
    assert_eq!(r[8]["data"]["id"], "[value · 8 chars]");
}

/// A redacted file redacted again, and once more, is written whole each time, a session that
/// pi-branch reads cleanly: every placeholder, pseudonym and mask of it is input that looks
/// like the output.
#[test]
fn a_redacted_file_is_redacted_again_whole() {
    for name in ["redact-everything.jsonl", "redact-input-like-output.jsonl"] {
        for mode in [&[][..], &["--keep-text"][..]] {
            let mut data = read_fixture(name);
            let lines = String::from_utf8_lossy(&data).lines().count();
            for round in 1..=3 {
                let o = cmd("pi-redact").args(mode).stdin(data).run();
                let at = format!("{name} {mode:?}, round {round}");
                assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{at}");
                let r = o.records();
                assert_eq!(r.len(), lines, "{at}: a record each line");
                assert_eq!(r[0]["type"], "session", "{at}");
                cmd("pi-branch").stdin(o.stdout.clone()).ok();
                data = o.stdout;
            }
        }
    }
}

/// A replaced string that the output holds partly in what was written in place of other input
/// and partly in the text around it is still a leak: a password that is some text and an
/// address's mask, in a record whose text holds that text and the address; the mask first and
/// the text after; some text and the start of a path's pseudonym; and, in the default mode, a
/// text replaced by its placeholder that a provider's error message holds so around its
/// masked address.
#[test]
fn replaced_text_running_into_a_mask_is_still_a_leak() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/app"}"#;
    let call = |n: usize, text: &str, password: &str| {
        format!(
            r#"{{"type":"message","id":"a{n}","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}},{{"type":"toolCall","id":"t{n}","name":"bash","arguments":{{"password":"{password}"}}}}],"stopReason":"toolUse"}}}}"#
        )
    };
    let session = [
        header.to_string(),
        call(1, "my hunter2 ana@example.com", "my hunter2 [email]"),
        call(2, "ana@example.com was here", "[email] was here"),
        call(3, "see /home/ana/x.rs", "see /home/user1"),
    ]
    .join("\n");
    let o = cmd("pi-redact").arg("--keep-text").stdin(session).run();
    assert_eq!(o.status, 2, "{}", o.stderr);
    for (n, chars) in [(2, 18), (3, 16), (4, 15)] {
        let said = format!("<stdin>:{n}: the rewritten record still holds {chars} characters");
        assert!(o.stderr.contains(&said), "{said}: {}", o.stderr);
    }
    assert_eq!(o.stderr.lines().count(), 3, "{}", o.stderr);
    assert_eq!(o.out().lines().filter(|l| l.is_empty()).count(), 3);
    let failed = |n: usize, text: &str, error: &str| {
        format!(
            r#"{{"type":"message","id":"a{n}","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"stopReason":"error","errorMessage":"{error}"}}}}"#
        )
    };
    let session = [
        header.to_string(),
        failed(1, "my hunter2 [email]", "my hunter2 ana@example.com"),
        failed(2, "[email] was here", "ana@example.com was here"),
    ]
    .join("\n");
    let o = cmd("pi-redact").stdin(session).run();
    assert_eq!(o.status, 2, "{}", o.stderr);
    for (n, chars) in [(2, 18), (3, 16)] {
        let said = format!("<stdin>:{n}: the rewritten record still holds {chars} characters");
        assert!(o.stderr.contains(&said), "{said}: {}", o.stderr);
    }
    assert_eq!(o.stderr.lines().count(), 2, "{}", o.stderr);
}

// ---- The canaries. ----

/// Fake secrets of many kinds, e-mail addresses and home paths. Each is what must not appear
/// in the output (the part a mask replaces).
const CANARIES: &[&str] = &[
    "AKIAZ7CANARY0000AAAA",
    "ASIAZ7CANARY0000BBBB",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1",
    "ghp_CanaryCanaryCanaryCanaryCanary012345",
    "gho_CanaryCanaryCanaryCanaryCanary012346",
    "ghu_CanaryCanaryCanaryCanaryCanary012347",
    "ghs_CanaryCanaryCanaryCanaryCanary012348",
    "ghr_CanaryCanaryCanaryCanaryCanary012349",
    "github_pat_11CANARY0_CanaryCanaryCanaryCanary01",
    "glpat-CanaryCanary-0123456789",
    "gldt-CanaryCanaryCanary012345",
    "xoxb-1111111111-CanaryCanary01",
    "xoxp-2222222222-CanaryCanary02",
    "xoxa-3333333333-CanaryCanary03",
    "https://hooks.slack.com/services/T0CANARY/B0CANARY/CanaryCanary0123",
    "sk-CanaryCanaryCanaryCanaryCanary0123456789",
    "sk-proj-CanaryCanaryCanaryCanary_0123456789",
    "sk-svcacct-CanaryCanaryCanaryCanary-012345",
    "sk-ant-api03-CanaryCanaryCanaryCanary-0123456789",
    "sk-ant-admin01-CanaryCanaryCanaryCanary-01234",
    "sk-or-v1-canarycanarycanarycanary0123456789abcdef",
    "AIzaSyCanaryCanaryCanaryCanaryCanary0123",
    "sk_live_CanaryCanaryCanary0123",
    "rk_test_CanaryCanaryCanary4567",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.CanaryCanarySignature012",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEcanaryRSAkeyMaterial\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEcanary\n-----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIcanaryECkey\n-----END EC PRIVATE KEY-----",
    "postgres://canaryuser:CanaryPassw0rd1@db.internal:5432/app",
    "mysql://root:CanaryPassw0rd2@10.0.0.1/db",
    "https://deploy:CanaryPassw0rd3@git.example.org/repo.git",
    "redis://:CanaryPassw0rd4@cache.local:6379",
    "password=CanaryPassw0rd5",
    "PASSWORD: \"CanaryPassw0rd6\"",
    "api_key=CanaryApiKey0123456",
    "Authorization: Bearer CanaryBearerToken0123456789",
    "secret: CanarySecretValue77",
    "canary.person@example.com",
    "first.last+tag@canary-corp.co.uk",
    "ops@sub.canary.example.org",
    "/home/canaryuser/projects/secret-app/main.rs",
    "/Users/canaryuser/Documents/taxes-2026.pdf",
    "~/canary-private/notes.md",
    "/home/canaryuser/.ssh/id_ed25519",
    "/root/canary-root-dir/.env",
    "Qz8vXk2LmN4pR7sT1wY5bC9dF3gH6jK0",
    "tG5hJ8kL2mN6pQ9rS3tV7wX1yZ4aB0cD",
    "x9Y8z7W6v5U4t3S2r1Q0pOnMlKjIhGfE",
    "CANARYAbCdEfGh1234IjKlMnOp5678QrStUv",
    "aws configure set aws_secret_access_key CanaryZq8Lm0Xn4Vb7Tc1Pd9Ks3Hg6/Jf5Ye0Wa2",
    "ana,AKIAZ7CANARY0000CCCC, QxCanary9Lm0Xn4Vb7T/c1Pd9Ks3Hg6Jf5Ye0W/a",
    "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",
    "npm_CanaryCanaryCanary0123456789abcdefgh",
    "pypi-AgEIcHlwaS5vcmcCanaryCanaryCanaryCanaryCanaryCanary0123456789",
    "SG.CanaryCanaryCanary0123.CanaryCanaryCanaryCanaryCanaryCanary0123456",
    "dop_v1_ca0ca1ca2ca3ca4ca5ca6ca7ca8ca9cab0cab1cab2cab3cab4cab5cab6cab7ca",
    "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",
    "sbp_ca0ca1ca2ca3ca4ca5ca6ca7ca8ca9cab0cab1ca",
    "dapica0ca1ca2ca3ca4ca5ca6ca7ca8ca9ca",
    "key-canarycanarycanary0123456789abcd",
    "AGE-SECRET-KEY-1CANARY0CANARY1CANARY2CANARY3CANARY4CANARY5CANARY6CANARY7CA",
    "https://canary@example.com:CanaryPassw0rd7@git.example.org/x",
    "sshpass -p CanaryPassw0rd8 ssh host",
    "docker login -u bob -p CanaryPassw0rd9 registry.example.org",
    "redis-cli -a CanaryPassw0rdA ping",
    "machine canary.example.com login ana password CanaryPassw0rdB",
    "git config --global github.token CanaryPassw0rdC",
    "echo 'CanaryPassw0rdD' | sudo -S true",
    "zip -P CanaryPassw0rdE out.zip f",
    "htpasswd -b .htpasswd ana CanaryPassw0rdF",
    "echo CanaryPassw0rdG | docker login -u ana --password-stdin",
    "smbclient //srv/share -U ana%CanaryPassw0rdH",
    "keytool -list -storepass CanaryPassw0rdI",
    "sqlplus ana/CanaryPassw0rdJ@db",
    "nmcli dev wifi connect Home password CanaryPassw0rdK",
    "define('DB_PASSWORD', 'CanaryPassw0rdL');",
    "<password>CanaryPassw0rdM</password>",
    "['password' => 'CanaryPassw0rdN']",
    "smtp.login('ana', 'CanaryPassw0rdO')",
    "localhost:5432:app:ana:CanaryPassw0rdP",
    "ana:$apr1$CnryS4lt$CanaryPassw0rdQcanary01",
    "PGPASS=CanaryPassw0rdR psql",
    "set -gx DB_PASS CanaryPassw0rdS",
    "[Environment]::SetEnvironmentVariable(\"API_KEY\", \"CanaryPassw0rdT\", \"User\")",
    "use password CanaryPassw0rdU for admin",
    "az keyvault secret set --vault-name v --name db --value CanaryPassw0rdV",
    "the API key: 'CanaryPassw0rdW'",
    "sudo -S <<< 'CanaryPassw0rdX' true",
    "rclone config create s3r s3 secret_access_key CanaryPassw0rdY",
    "os.environ[\"API_KEY\"] = \"CanaryPassw0rdZ\"",
    "echo CanaryPassw0rda | npx wrangler secret put API_KEY",
    "- name: API_TOKEN\n  value: \"CanaryPassw0rdb\"",
    "setx API_KEY CanaryPassw0rdc /M",
    "RUN make\nENV STRIPE_SECRET_KEY CanaryPassw0rdd",
    "npx wrangler secret put API_TOKEN <<< \"CanaryPassw0rde\"",
    "variable \"db_password\" {\n  default = \"CanaryPassw0rdf\"\n}",
    "secret_key_base: \"CanaryPassw0rdg\"",
    "CREATE USER app IDENTIFIED BY 'CanaryPassw0rdh';",
    "SET PASSWORD = PASSWORD('CanaryPassw0rdi');",
    "create user app identified by 'CanaryPassw0rdj';",
    "vercel env add API_KEY production <<< 'CanaryPassw0rdk'",
    "net user canary CanaryPassw0rdl /add",
    "net use Z: \\\\srv\\share CanaryPassw0rdm /user:ana",
    "xfreerdp /v:host /u:ana /p:CanaryPassw0rdn",
    "vault login CanaryPassw0rdo",
    "ansible-vault encrypt_string 'CanaryPassw0rdp' --name db_pass",
    "token CanaryPassw0rdq",
    "my %db = (user => 'ana', password => 'CanaryPassw0rdr');",
    "{ok, C} = epgsql:connect(#{host => \"db\", username => \"ana\"}), [{password, \"CanaryPassw0rdu\"}]",
    "echo -n 'CanaryPassw0rds' | base64 -w0",
    "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=CanaryPassw0rdt;EndpointSuffix=x",
    "mailchimp c4a7e2b9d1f3068a5b7c9e1d3f5a7b90-us6",
    "https://canary.blob.core.windows.net/c/f?sv=2021-06-08&sig=Canary%2BSig0123456789%3D",
    "https://canary.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&X-Amz-Signature=ca0ca1ca2ca3ca4ca5ca6ca7ca8ca9cab0cab1cab2cab3cab4cab5cab6cab7ca",
    "the api key ca0ca1ca2ca3ca4ca5ca6ca7ca8ca9cab and more",
    "my api key \"CanaryKey0123456789\"",
    "OTP secret CANARY234567ABCD",
    "use the passphrase \"correct canaryhorse\"",
    "http -a ana:CanaryPassw0rdv GET https://x",
    "lftp -u ana,CanaryPassw0rdw sftp://h",
    "The password for the staging DB is CanaryPassw0rdx!",
    "set my password to CanaryPassw0rdy today",
    "SEED_PHRASE=abandon canarycanary ability able",
    "curl 'https://api.example.org/v1/users?email=canary.mail%40example.org'",
    "mail canaryjosé@example.org",
    "NRAK-CANARY0CANARY1CANARY2CANARY",
    "sk.eyJ1IjoiY2FuYXJ5IiwiYSI6ImNrMCJ9.CanaryMapboxSecret01",
    "CanaryCanary01.atlasv1.CanaryCanaryCanaryCanaryCanaryCanaryCanaryCanaryCanaryCanary012345",
    "PW=CanaryPassw0rdz ./deploy.sh",
    "const token = process.env.GITHUB_TOKEN || \"CanaryFallback01\";",
    "login: canary / CanaryPassw0rd0",
    "pul-ca0ca1ca2ca3ca4ca5ca6ca7ca8ca9cab0cab1ca",
    "SKc0ffee00c0ffee01c0ffee02c0ffee03",
    "access_token$production$canary0merchant1$deadbeef00deadbeef01deadbeef02de",
    "pat-na1-c0ffee00-ca0a-4b1c-8d2e-c0ffeec0ffee",
    "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",
    "access-production-ba5eba11-0000-4000-8000-ba5eba11ba5e",
    "sk_feedfacefeedfacefeedfacefeedfacefeedfacefeedface",
    // Last: a key block with no end is masked to the end of its text, so every canary after
    // it would be masked with it.
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANcanaryPKCS8",
];

/// The part of a canary that must not survive: the password of a URL, the value of an
/// assignment, the user name of a home path, a signed token's signature; the whole canary
/// otherwise.
fn must_not_survive(c: &str) -> Vec<&str> {
    if let Some(p) = c.find("Passw0rd") {
        return vec![&c[p - 6..p + 9]];
    }
    if c.starts_with('/') || c.starts_with('~') {
        return c
            .split('/')
            .filter(|p| p.contains("canary") || p.contains("secret") || p.contains("taxes"))
            .collect();
    }
    if c.contains("BEGIN") {
        return c.lines().filter(|l| l.contains("canary")).collect();
    }
    if c.starts_with("access_token$") {
        // Braintree's: the key after the merchant's id.
        return c.rsplit('$').take(1).collect();
    }
    if c.contains(".eyJ") {
        // A signed token (a JWT, Mapbox's): its signature, the part that grants.
        return c.rsplit('.').take(1).collect();
    }
    let value = c
        .rsplit([' ', '=', '"'])
        .find(|s| s.len() >= 8)
        .unwrap_or(c);
    vec![value]
}

/// Appends every canary to the free text of `v`: text, thinking, commands, outputs, error
/// messages, summaries, labels, names, and every string inside tool arguments, details and
/// extension data (`free`); a home path as `cwd`.
fn inject(v: &mut Value, key: &str, free: bool) {
    let free = free
        || matches!(
            key,
            "text"
                | "thinking"
                | "content"
                | "command"
                | "output"
                | "errorMessage"
                | "summary"
                | "label"
                | "name"
                | "arguments"
                | "details"
                | "data"
        );
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                inject(x, k, free);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| inject(x, key, free)),
        Value::String(s) if key == "cwd" => *s = "/home/canaryuser/projects/secret-app".into(),
        Value::String(s) if free && !matches!(key, "type" | "id" | "mimeType" | "toolCallId") => {
            for c in CANARIES {
                s.push_str(" \n");
                s.push_str(c);
                s.push_str(" end.");
            }
        }
        _ => {}
    }
}

/// `text` with the canaries injected into every record that parses.
fn with_canaries(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut v) if v.get("type").and_then(Value::as_str) != Some("model_change") => {
                // Tool names and namespaces are names, looked at for paths, credentials by
                // their shape and addresses but not for random tokens or keyed values, which
                // the canaries hold too: left as they are here
                // (`kept_names_hold_no_path_credential_or_address` covers names).
                let name = v.pointer("/message/toolName").cloned();
                inject(&mut v, "", false);
                if let (Some(n), Some(m)) = (name, v.get_mut("message")) {
                    m["toolName"] = n;
                }
                if let Some(Value::Array(blocks)) = v.pointer_mut("/message/content") {
                    for b in blocks {
                        if b["type"] == "toolCall" {
                            for key in ["name", "namespace"] {
                                if let Some(n) = b.get(key).and_then(Value::as_str) {
                                    let n = n.split(" \n").next().unwrap().to_string();
                                    b[key] = n.into();
                                }
                            }
                        }
                    }
                }
                out.push_str(&v.to_string());
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn assert_no_canary_survives(file: &Path, dir: &TempDir) {
    let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
    let injected = dir.write("canaries.jsonl", with_canaries(&text));
    for mode in [&[][..], &["--keep-text"][..]] {
        let before = cmd("pi-redact").args(mode).arg(file).run().status;
        let o = cmd("pi-redact").args(mode).arg(&injected).run();
        assert!(
            !o.stderr.contains("replaced input text") && (o.status == 0 || o.status == before),
            "{} {mode:?}: {}",
            file.display(),
            o.stderr
        );
        let out = o.out();
        for c in CANARIES {
            for part in must_not_survive(c) {
                assert!(
                    !out.contains(part),
                    "{part:?} survived in {} {mode:?}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn no_canary_survives_in_the_fixtures() {
    assert!(CANARIES.len() >= 50);
    let dir = TempDir::new("redact-canary");
    for f in fixture_files() {
        assert_no_canary_survives(&f, &dir);
    }
}

#[test]
fn corpus_no_canary_survives() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    let dir = TempDir::new("redact-canary-corpus");
    // Every tenth file: each is rewritten twice with every canary in every text.
    for f in files.iter().step_by(10) {
        assert_no_canary_survives(f, &dir);
    }
}

// ---- --out-dir. ----

#[test]
fn out_dir_lays_files_out_as_pi_does_and_never_replaces_one() {
    let t = TempDir::new("redact-out");
    let (a, b) = (
        fixture_str("redact-everything.jsonl"),
        fixture_str("usage-basic.jsonl"),
    );
    let out = t.path().join("shared");
    let o = cmd("pi-redact")
        .arg("--out-dir")
        .arg(&out)
        .args([&a, &b])
        .ok();
    assert_eq!(o.out(), "");
    // The same run to stdout: the same pseudonyms, the files' contents one after the other.
    let whole = cmd("pi-redact").args([&a, &b]).ok().out();
    let first = out.join("--home-user1-dir1-dir2--/2026-06-01T10-00-00-000Z_s-redact.jsonl");
    let second = out.join("--home-user2-dir8--/2026-05-01T09-59-00-000Z_s-basic.jsonl");
    let (x, y) = (
        std::fs::read_to_string(&first).unwrap(),
        std::fs::read_to_string(&second).unwrap(),
    );
    assert_eq!(format!("{x}{y}"), whole);
    let again = cmd("pi-redact").arg("--out-dir").arg(&out).arg(&a).run();
    assert_eq!(again.status, 2);
    assert!(again.stderr.contains("File exists"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), x, "not replaced");
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
}

#[test]
fn out_dir_does_not_write_an_input_with_a_withheld_record() {
    let t = TempDir::new("redact-out-withheld");
    let out = t.path().join("shared");
    let o = cmd("pi-redact")
        .env("FAKE_SECRET", "s-redact")
        .args(["--secret-env", "FAKE_SECRET", "--out-dir"])
        .arg(&out)
        .arg(fixture("redact-everything.jsonl"))
        .run();
    assert_eq!(o.status, 2);
    assert!(
        o.stderr
            .ends_with("1 record(s) still held replaced text: the redacted copy is not written\n"),
        "{}",
        o.stderr
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

/// A record with invalid UTF-8 is reported and its text read as U+FFFD, never copied through as
/// it is: kept text (`--keep-text`) and the placeholder's size, from a file and from stdin.
#[test]
fn text_with_invalid_utf8_is_read_as_replacement_characters() {
    let mut session = br#"{"type":"session","version":3,"id":"s-bad","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/p"}
{"type":"message","id":"u"#
        .to_vec();
    // A member kept as it is (the id) in a record that is rewritten, and a text that is
    // replaced.
    session.extend_from_slice(b"\xff1\",\"parentId\":null,\"timestamp\":\"2026-05-02T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hello ");
    session.extend_from_slice(b"\xff\xfe world\"}}\n");
    // A value kept as it is (the model's name).
    session.extend_from_slice(br#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-02T10:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","stopReason":"stop","model":"m"#);
    session.extend_from_slice(b"\xff1\"}}\n");
    let dir = TempDir::new("redact-bad-utf8");
    let file = dir.write("s.jsonl", &session);
    for (mode, want) in [
        (None, r#""content":"[prompt · 14 chars]""#),
        (
            Some("--keep-text"),
            "\"content\":\"hello \u{FFFD}\u{FFFD} world\"",
        ),
    ] {
        let args: Vec<&str> = mode.into_iter().collect();
        for o in [
            cmd("pi-redact").args(&args).arg(&file).run(),
            cmd("pi-redact").args(&args).stdin(session.clone()).run(),
        ] {
            assert_eq!(o.status, 2, "{mode:?}: {}", o.stderr);
            assert!(o.stderr.contains("invalid UTF-8"), "{mode:?}: {}", o.stderr);
            assert!(o.out().contains(want), "{mode:?}: {}", o.out());
            assert!(
                o.out().contains("\"model\":\"m\u{FFFD}1\""),
                "{mode:?}: {}",
                o.out()
            );
            assert!(
                o.out().contains("\"id\":\"u\u{FFFD}1\""),
                "{mode:?}: {}",
                o.out()
            );
        }
    }
}

/// `text` as a JSON string body, written one of four ways: as `JSON.stringify` writes it
/// (pi-redact then copies it between its masks), with `/` as `\/`, with each non-ASCII
/// character as `\uXXXX` (a surrogate pair beyond U+FFFF), or both (those three decoded and
/// escaped again as a whole).
fn body_written(text: &str, way: usize) -> String {
    let mut minimal = Vec::new();
    pi_jsonl_gen::push_json_str(&mut minimal, text);
    let minimal = String::from_utf8(minimal).unwrap();
    let mut body = String::new();
    for c in minimal[1..minimal.len() - 1].chars() {
        match c {
            '/' if way & 1 == 1 => body.push_str("\\/"),
            c if !c.is_ascii() && way & 2 == 2 => {
                for unit in c.encode_utf16(&mut [0u16; 2]) {
                    body.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => body.push(c),
        }
    }
    body
}

/// `--keep-text` writes a text with masks the same, byte for byte, whatever escapes its input
/// used (the text written from its input as written, or decoded and escaped again): texts of
/// secrets, e-mail addresses, paths and tokens with every escaped character inside and at
/// their edges, each holding at least one mask.
#[test]
fn keep_text_writes_a_masked_text_the_same_whatever_its_input_escapes() {
    let pieces = [
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "a.b\"c@example.org",
        "/home/ana/src/app/main.rs",
        "/home/ana/\"q\"/x.rs",
        "C:\\Users\\ana\\x.md",
        "C:\\\\Users\\\\ana\\\\x.rs\\n",
        "Qm9vZ3JhbmRvbVRva2VuWFl6MTIz9x7",
        "password=correct-horse-9",
        "Bearer abcdefghijklmnop0123",
        "postgres://bob:hunter22@db.example.org/x",
        "\n",
        "\t",
        "\"",
        "\\",
        "/",
        "\u{1b}",
        "😀",
        "é",
        "日本",
        " ",
        "x",
    ];
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/src/app"}"#;
    // Without the residual scan every record is written; with it, one is withheld the same.
    let unchecked: RedactArgs =
        clap::Parser::parse_from(["pi-redact", "--keep-text", "--no-check"]);
    let checked: RedactArgs = clap::Parser::parse_from(["pi-redact", "--keep-text"]);
    let run = |args: &RedactArgs, body: &str| {
        let entry = format!(
            r#"{{"type":"message","id":"e1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{body}"}}],"timestamp":1}}}}"#
        );
        let input = format!("{header}\n{entry}\n");
        let mut out = Out::held();
        let mut d = Diags::new("pi-redact", "<stdin>", false);
        let _ = Redact::run_bytes(args, input.as_bytes(), &mut out, &mut d);
        (
            String::from_utf8_lossy(&out.buf).into_owned(),
            d.held().to_owned(),
        )
    };
    let mut rng = pi_jsonl_gen::Rng::new(18);
    for _ in 0..1500 {
        let n = rng.range(0, 10);
        let mut text: String = (0..n).map(|_| *rng.pick(&pieces)).collect();
        text.push_str(" ana@example.com");
        let want = run(&unchecked, &body_written(&text, 0));
        assert!(want.0.contains("[email]"), "{text:?}: {}", want.0);
        let want_checked = run(&checked, &body_written(&text, 0));
        for way in 1..4 {
            let body = body_written(&text, way);
            assert_eq!(run(&unchecked, &body), want, "{text:?}, way {way}");
            assert_eq!(run(&checked, &body), want_checked, "{text:?}, way {way}");
        }
    }
}

/// A session of user messages, one a text, after a header whose `cwd` is `cwd`.
fn user_texts(cwd: &str, texts: &[&str]) -> String {
    let mut s = serde_json::json!({"type": "session", "version": 3, "id": "s",
        "timestamp": "2026-06-01T10:00:00.000Z", "cwd": cwd})
    .to_string();
    let mut parent = serde_json::Value::Null;
    for (i, t) in texts.iter().enumerate() {
        let id = format!("u{i}");
        let r = serde_json::json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-06-01T10:00:01.000Z",
            "message": {"role": "user", "content": t}});
        s.push('\n');
        s.push_str(&r.to_string());
        parent = serde_json::Value::String(id);
    }
    s.push('\n');
    s
}

/// Issue 17, item 1: `--keep-text` finds the user of a home path in the forms the path
/// pattern did not see start, and the names after them: `~zoltan/` (the home of a user),
/// a path with every `/` written `\/` (JSON text in a tool's output), the names after
/// `$HOME/`, `${HOME}/`, `%USERPROFILE%\` (no user there, but as private as after `~/`, and
/// named alike), a drive's top-level folder with spaces (`C:\Documents and Settings\zoltan`),
/// and a home path whose later names have spaces. The user's name survives nowhere.
#[test]
fn keep_text_finds_the_user_of_every_home_path_form() {
    let session = user_texts(
        "/home/zoltan/app",
        &[
            "see ~zoltan/src/x.rs and cd ~zoltan/",
            r#"{"path":"\/home\/zoltan\/src\/x.rs","cwd":"\/Users\/zoltan\/app\/"}"#,
            "vars: $HOME/notes/a.md, ${HOME}/notes and ~/notes/a.md; $HOME alone",
            r"cmd: %USERPROFILE%\notes\a.md and %userprofile%/notes",
            r"old: C:\Documents and Settings\zoltan\x\y.txt end",
            r"tools: C:\Program Files\Tool\t.exe end",
            "later: /home/zoltan/My Projects/app/main.rs end",
            "url: https:\\/\\/example.com\\/x\\/y stays",
        ],
    );
    let o = keep_text(session);
    assert_none_survive(&o.out(), &["zoltan", "notes"]);
    let r = o.records();
    let text = |i: usize| r[i]["message"]["content"].as_str().unwrap().to_string();
    assert_eq!(r[0]["cwd"], "/home/user1/dir1");
    assert_eq!(text(1), "see ~user1/dir2/file1.rs and cd ~user1/");
    assert_eq!(
        text(2),
        r#"{"path":"\/home\/user1\/dir2\/file1.rs","cwd":"\/Users\/user1\/dir3\/"}"#
    );
    assert_eq!(
        text(3),
        "vars: $HOME/dir4/file2.md, ${HOME}/dir4 and ~/dir4/file2.md; $HOME alone"
    );
    assert_eq!(
        text(4),
        r"cmd: %USERPROFILE%\dir4\file2.md and %userprofile%/dir4"
    );
    assert_eq!(
        text(5),
        r"old: C:\Documents and Settings\user1\dir5\file3.txt end"
    );
    assert_eq!(text(6), r"tools: C:\Program Files\dir6\file4.exe end");
    assert_eq!(text(7), "later: /home/user1/dir7 Projects/app/main.rs end");
    assert_eq!(text(8), "url: https:\\/\\/example.com\\/x\\/y stays");
}

/// Issue 17, item 2: the user of a home path met in the run survives nowhere in kept text:
/// not in a URL (`file:///home/…`, `ssh://zoltan@host`), an option (`--config=/home/…`),
/// a listing's owner column, a prompt or a sessions folder's name; in any case, as a word
/// (`zoltanic` is another word). Passwords in URLs of any scheme are masked. Names that
/// are no person's (`node`, `runner`) and short ones are names only in paths.
#[test]
fn keep_text_masks_a_home_users_name_wherever_it_occurs() {
    let session = user_texts(
        "/home/zoltan/app",
        &[
            "file:///home/zoltan/x and --config=/home/zoltan/.x and -f/home/zoltan/y",
            "drwxr-xr-x@ 3 zoltan  staff    96 Nov 21 02:31 .\nZoltan@mac:~$ ssh zoltan@host",
            "sessions in --home-zoltan-app-- by Zoltan; zoltanic stays",
            "ssh://zoltan:s3cretPass1@host/x postgres://user:pa55word@db/x git+https://zoltan:t0kenValue9@gh.com/r",
            "cd /home/node/app && cd /home/runner/work && cd /home/jo/x",
            "node index.js, the runner and jo stay",
            "vscode://file/home/zoltan/x.rs:3 and ?path=%2Fhome%2Fzoltan%2Fy or C%3A%5CZoltan%5C",
        ],
    );
    let o = keep_text(session);
    assert_none_survive(
        &o.out(),
        &[
            "zoltan:",
            "Zoltan@",
            "s3cretPass1",
            "pa55word",
            "t0kenValue9",
        ],
    );
    let r = o.records();
    let text = |i: usize| r[i]["message"]["content"].as_str().unwrap().to_string();
    assert_eq!(
        text(1),
        "file:///home/user1/dir2 and --config=/home/user1/dir3 and -f/home/user1/dir4"
    );
    assert_eq!(
        text(2),
        "drwxr-xr-x@ 3 user1  staff    96 Nov 21 02:31 .\nuser1@mac:~$ ssh user1@host"
    );
    assert_eq!(
        text(3),
        "sessions in --home-user1-app-- by user1; zoltanic stays"
    );
    assert_eq!(
        text(4),
        "ssh://[secret:url-password]@host/x postgres://[secret:url-password]@db/x \
         git+https://[secret:url-password]@gh.com/r"
    );
    assert_eq!(
        text(6),
        "node index.js, the runner and jo stay",
        "no person's names, and short ones, are no words to mask"
    );
    assert_eq!(
        text(7),
        "vscode://file/home/user1/x.rs:3 and ?path=%2Fhome%2Fuser1%2Fy or C%3A%5Cuser1%5C",
        "a name after a percent-encoded separator is a word too"
    );
    assert!(
        o.stderr.contains(", user 8"),
        "each word counted as user: {}",
        o.stderr
    );
}

/// Issue 17, item 3: with `--keep-text`, a credential named in prose gives its value: a
/// word after ` is ` or ` was ` that reads as a secret (6 characters or more, with a digit or
/// a sign) or a quoted one, and a passphrase of several words after `NAME:` that runs to the
/// end of its line; prose stays (`is stored in the keychain`, `Password: must be at least 8
/// characters`, a short word, a reference).
#[test]
fn keep_text_masks_credentials_given_in_prose() {
    let session = user_texts(
        "/srv/app",
        &[
            "the password is hunter2x9 now",
            "my API key was 'quokka key value'. And the access token is Zq8-77kk.",
            "passphrase: correct horse battery staple\nnext: line",
            "my token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "the password is stored in the keychain; the password was rotated",
            "Password: must be at least 8 characters\ntoken: used to sign requests",
            "the password is 8 chars, the token is $API_TOKEN, the secret is secret.",
        ],
    );
    let o = cmd("pi-redact").arg("--keep-text").stdin(session).run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    let r = o.records();
    let text = |i: usize| r[i]["message"]["content"].as_str().unwrap().to_string();
    assert_eq!(text(1), "the password is [secret:keyed] now");
    assert_eq!(
        text(2),
        "my API key was '[secret:keyed]'. And the access token is [secret:keyed]."
    );
    assert_eq!(text(3), "passphrase: [secret:keyed]\nnext: line");
    assert_eq!(text(4), "my token is [secret:github-token]");
    assert_eq!(
        text(5),
        "the password is stored in the keychain; the password was rotated"
    );
    assert_eq!(
        text(6),
        "Password: must be at least 8 characters\ntoken: used to sign requests"
    );
    assert_eq!(
        text(7),
        "the password is 8 chars, the token is $API_TOKEN, the secret is secret."
    );
}

/// Issue 17, item 6: `--report` counts what a record replaced once, also when the residual
/// scan had it rewritten a second time (a secret masked in one place of it found in
/// another): the first record counted its address, its keyed value and its path twice. A
/// kept text in which nothing else was masked is input, not a part written on purpose: the
/// secret masked in the second record's arguments is masked in its text too (it was left).
#[test]
fn the_report_counts_a_record_rewritten_twice_once() {
    let call = |id: &str, text: &str, password: &str| {
        serde_json::json!({"type": "message", "id": id, "parentId": null,
            "timestamp": "2026-06-01T10:00:01.000Z",
            "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "text", "text": text},
                {"type": "toolCall", "id": "t1", "name": "bash",
                    "arguments": {"password": password, "path": "/home/ana/x.rs"}}]}})
        .to_string()
    };
    let session = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/w"}"#.to_string(),
        call("a1", "I will use qzhunter2qzhunter for ana@example.com", "qzhunter2qzhunter"),
        call("a2", "I will use qzhunter3qzhunter", "qzhunter3qzhunter"),
    ]
    .join("\n");
    let o = keep_text(session);
    assert_none_survive(&o.out(), &["qzhunter"]);
    let r = o.records();
    assert_eq!(
        r[1]["message"]["content"][0]["text"],
        "I will use [secret:keyed] for [email]"
    );
    assert_eq!(
        r[2]["message"]["content"][0]["text"],
        "I will use [secret:keyed]"
    );
    assert_eq!(o.stderr, "pi-redact: replaced: email 1, keyed 4, path 3\n");
}

/// One user, one pseudonym: a user's home met as `/home/ana`, `/Users/Ana`, `C:\Users\ANA`,
/// `c:/users/ana`, `D:\Documents and Settings\ana` or `~ana` is `user1` in every form, in
/// both modes (user names compare in any ASCII case); another user is another pseudonym,
/// and the folders under the homes keep the pseudonyms of their own paths.
#[test]
fn a_user_has_one_pseudonym_whatever_the_home_path_form() {
    let call = serde_json::json!({"type": "message", "id": "a1", "parentId": null,
        "timestamp": "2026-06-01T10:00:02.000Z",
        "message": {"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "toolCall", "id": "t1", "name": "read", "arguments": {
                "path": r"C:\Users\ANA\app\x.rs", "other": "/Users/Ana/notes.md",
                "third": "c:/users/ana/app/y.rs", "fourth": "/home/bob/z.rs"}}]}})
    .to_string();
    let text = user_texts(
        "/home/ana/app",
        &[
            r"see C:\Users\ana\app\x.rs and /Users/ana/a.md, D:\Documents and Settings\ana\b.txt and ~ana/c.txt and /home/bob/d.txt",
        ],
    );
    let (header, text) = text.split_once('\n').unwrap();
    let session = format!("{header}\n{call}\n{text}");
    for mode in [&[][..], &["--keep-text"][..]] {
        let r = cmd("pi-redact")
            .args(mode)
            .stdin(session.clone())
            .ok()
            .records();
        assert_eq!(r[0]["cwd"], "/home/user1/dir1", "{mode:?}");
        let args = &r[1]["message"]["content"][0]["arguments"];
        // Written in the order of their keys: `fourth`, `other`, `path`, `third`.
        assert_eq!(args["fourth"], "/home/user2/file1.rs", "{mode:?}");
        assert_eq!(args["other"], "/Users/user1/file2.md", "{mode:?}");
        assert_eq!(args["path"], r"C:\Users\user1\dir2\file3.rs", "{mode:?}");
        assert_eq!(args["third"], "c:/users/user1/dir2/file4.rs", "{mode:?}");
    }
    let o = keep_text(session);
    assert_none_survive(&o.out(), &["ana", "Ana", "ANA", "bob"]);
    assert_eq!(
        o.records()[2]["message"]["content"],
        r"see C:\Users\user1\dir2\file3.rs and /Users/user1/file5.md, D:\Documents and Settings\user1\file6.txt and ~user1/file7.txt and /home/user2/file8.txt"
    );
}

/// Redacting a redacted file again changes nothing, in the default mode and with
/// `--keep-text`: every placeholder (of a text, a value, a key, an image, data nested too
/// deep), mask and pseudonym is written as it is, not measured again or renumbered. Checked
/// on every fixture, and on a session made of what the fixtures lack.
#[test]
fn redacting_a_redacted_file_again_changes_nothing() {
    let mut deep = String::from("1");
    for _ in 0..140 {
        deep = format!("{{\"a\":{deep}}}");
    }
    let extra = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/ana/app"}"#,
        "\n",
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"open C:\\Users\\ana\\app\\x.rs and ~/notes/a.md, mail ana@example.com, key ghp_abcdefghijklmnopqrstuvwxyz0123456789, DB_PASSWORD=hunter2x9"}}"#,
        "\n",
        r#"{"type":"message","id":"r1","parentId":"u1","timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"line\nline\n"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==","mimeType":"image/png"}],"details":{"hello world":1,"hello there":2,"deep":DEEP},"isError":false}}"#,
        "\n",
    )
    .replace("DEEP", &deep);
    let mut inputs: Vec<(String, Vec<u8>)> = fixture_files()
        .into_iter()
        .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
        .collect();
    inputs.push(("a session of what the fixtures lack".into(), extra.into()));
    for (name, data) in inputs {
        for mode in [&[][..], &["--keep-text"][..]] {
            let once = cmd("pi-redact").args(mode).stdin(data.clone()).run();
            let twice = cmd("pi-redact").args(mode).stdin(once.stdout.clone()).run();
            assert!(
                once.stdout == twice.stdout,
                "{name} {mode:?}: redacted again, it changed:\n{}\n---\n{}",
                String::from_utf8_lossy(&once.stdout),
                String::from_utf8_lossy(&twice.stdout)
            );
        }
    }
}

/// A member pi-redact keeps as written (`provider`, `model`, `customType`, ...) holds a name;
/// an object or an array there is data like any other, its strings replaced (default) or
/// masked (`--keep-text`), not copied unread.
#[test]
fn an_object_in_a_kept_member_is_data() {
    let session = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/srv/app"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-06-01T10:00:02.000Z","message":{"role":"assistant","provider":{"apiKey":"quokkaProviderKey77"},"model":["ghp_abcdefghijklmnopqrstuvwxyz0123456789"],"stopReason":"stop","content":[{"type":"text","text":"hi"}]}}"#,
        "\n",
        r#"{"type":"custom","id":"c1","parentId":"a1","timestamp":"2026-06-01T10:00:03.000Z","customType":{"owner":"ana@example.com"},"data":{}}"#,
        "\n",
    );
    let private = ["quokkaProviderKey77", "ghp_abcdef", "ana@example.com"];
    let plain = cmd("pi-redact").stdin(session).ok();
    assert_none_survive(&plain.out(), &private);
    let r = plain.records();
    assert_eq!(
        r[1]["message"]["provider"],
        serde_json::json!({"apiKey": "[value · 19 chars]"})
    );
    let o = keep_text(session);
    assert_none_survive(&o.out(), &private);
    let r = o.records();
    assert_eq!(
        r[1]["message"]["provider"],
        serde_json::json!({"apiKey": "[secret:keyed]"})
    );
    assert_eq!(
        r[1]["message"]["model"],
        serde_json::json!(["[secret:github-token]"])
    );
    assert_eq!(r[2]["customType"], serde_json::json!({"owner": "[email]"}));
}
