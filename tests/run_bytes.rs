//! Each tool's `run_bytes` (what the fuzz targets drive) does what the tool does with the same
//! bytes on stdin: the same stdout and the same diagnostics, for every fixture.

use crate::util::*;
use clap::Parser;
use pi_jsonl::cmd::{compactions, sessions, tools, usage};
use pi_jsonl::diag::Diags;
use pi_jsonl::output::{Out, Stop};
use pi_jsonl::tool::Tool;
use serde_json::Value;
use std::path::PathBuf;

type RunBytes<A> = fn(&A, &[u8], &mut Out, &mut Diags) -> Result<(), Stop>;

/// (stdout, diagnostics) of `run_bytes` with the tool's arguments `args`.
fn lib<A: Parser>(
    tool: &'static str,
    args: &[&str],
    input: &[u8],
    run: RunBytes<A>,
) -> (Vec<u8>, String) {
    let a = A::try_parse_from(std::iter::once(tool).chain(args.iter().copied())).unwrap();
    let mut out = Out::held();
    let mut d = Diags::new(tool, "<stdin>", false);
    run(&a, input, &mut out, &mut d).unwrap();
    (out.buf, d.held().to_string())
}

fn fixtures() -> Vec<PathBuf> {
    let v = fixture_files();
    assert!(v.len() > 50);
    v
}

/// Every fixture through the binary on stdin and through `run_bytes`, for each argument list.
fn same_as_the_binary<A: Parser>(tool: &'static str, arg_lists: &[&[&str]], run: RunBytes<A>) {
    for f in fixtures() {
        let input = std::fs::read(&f).unwrap();
        for args in arg_lists {
            let bin = cmd(tool).args(*args).stdin(input.clone()).run();
            let (out, diags) = lib(tool, args, &input, run);
            let what = format!("{tool} {args:?} < {}", f.display());
            assert_eq!(String::from_utf8_lossy(&out), bin.out(), "stdout of {what}");
            assert_eq!(diags, bin.stderr, "stderr of {what}");
        }
    }
}

#[test]
fn tools_run_bytes_is_pi_tools_on_stdin() {
    same_as_the_binary::<tools::Args>(
        "pi-tools",
        &[
            &[],
            &["--no-content", "--max-text", "10"],
            &["--errors", "--name", "bash"],
        ],
        tools::Tools::run_bytes,
    );
}

#[test]
fn usage_run_bytes_is_pi_usage_on_stdin() {
    let models = fixture_str("models/models.json");
    same_as_the_binary::<usage::Args>(
        "pi-usage",
        &[
            &["--json"],
            &["--json", "--by", "day,model,week", "--tz", "UTC", "--total"],
            &["--table", "--no-dedup", "--by", "provider", "--total"],
            &["--context", "--models", &models],
            &["--calls", "--tz", "+05:30"],
        ],
        usage::Usage::run_bytes,
    );
}

#[test]
fn compactions_run_bytes_is_pi_compactions_on_stdin() {
    let models = fixture_str("models.json");
    same_as_the_binary::<compactions::Args>(
        "pi-compactions",
        &[
            &["--models", &models],
            &[
                "--summary",
                "--files",
                "--branch-summaries",
                "--errors",
                "--models",
                &models,
            ],
            &["--table", "--models", &models],
        ],
        compactions::Compactions::run_bytes,
    );
}

#[test]
fn sessions_run_bytes_describes_a_file_as_pi_sessions_does() {
    let dir = TempDir::new("run-bytes-sessions");
    for f in fixtures() {
        let input = std::fs::read(&f).unwrap();
        let p = dir.write("s.jsonl", &input);
        let bin = cmd("pi-sessions")
            .args(["--json", "--prompts", "--dir"])
            .arg(&p)
            .run();
        let mut want = bin.records().remove(0);
        let (out, diags) = lib(
            "pi-sessions",
            &["--json", "--prompts"],
            &input,
            sessions::Sessions::run_bytes,
        );
        assert_eq!(diags, "");
        let mut got: Value = serde_json::from_slice(&out).unwrap();
        // What only the file system knows: the path, and a modification time when the
        // session itself has no time.
        for r in [&mut want, &mut got] {
            r["path"] = Value::Null;
            if r["modified_source"] == "mtime" || r["modified_source"].is_null() {
                r["modified"] = Value::Null;
                r["modified_source"] = Value::Null;
            }
        }
        assert_eq!(got, want, "{}", f.display());
    }
    // The other outputs of pi-sessions come out of it too.
    let input = read_fixture("tools-session.jsonl");
    let (out, _) = lib(
        "pi-sessions",
        &["--paths"],
        &input,
        sessions::Sessions::run_bytes,
    );
    assert_eq!(out, b"<stdin>\n");
    // The table, with the cost pi-usage gives for the file (issue 15).
    let input = read_fixture("usage-basic.jsonl");
    let (out, _) = lib(
        "pi-sessions",
        &["--table"],
        &input,
        sessions::Sessions::run_bytes,
    );
    let table = String::from_utf8_lossy(&out).into_owned();
    assert!(table.starts_with("Age  Session"), "{table}");
    let p = dir.write("usage-basic.jsonl", &input);
    let bin = cmd("pi-sessions").arg("--table").arg(&p).run().out();
    let cost = |t: &str| {
        let row = t.lines().nth(1).unwrap().to_string();
        row.split_whitespace()
            .find(|c| c.starts_with('$'))
            .map(String::from)
    };
    assert!(cost(&table).is_some(), "{table}");
    assert_eq!(cost(&table), cost(&bin), "{table}\n{bin}");
    let (out, _) = lib(
        "pi-sessions",
        &["--json", "--status", "empty"],
        &input,
        sessions::Sessions::run_bytes,
    );
    assert!(out.is_empty());
}
