//! Every record every tool writes fits docs/FORMAT.md: each tool runs with the flag sets
//! scripts/outputs uses (those that write records, not tables or passed-through lines) over
//! all the fixtures, and over the corpus when it is present, and every stdout line is read
//! into a typed `Record` (tests/util/records.rs) that rejects an undocumented field, a missing
//! one, a value of another type and a string outside the documented set.
//!
//! Each run reads all its inputs in one invocation: the whole file runs in well under a
//! second over the fixtures.

use crate::util::records::{parse_records, Record};
use crate::util::*;
use std::ffi::OsStr;
use std::path::PathBuf;

/// The flag sets of scripts/outputs that write records, per tool (`--table`, `--tree`,
/// `--paths` and pi-branch's passed-through session lines are left out).
const FLAG_SETS: &[(&str, &[&[&str]])] = &[
    (
        "pi-branch",
        &[&["--info"], &["--leaves"], &["--leaves", "--preview"]],
    ),
    (
        "pi-usage",
        &[
            &[],
            &["--no-dedup"],
            &["--by", "model,day", "--total"],
            &["--by", "project"],
            &["--by", "project,week,month", "--total"],
            &["--context"],
            &["--context", "--models", "MODELS"],
        ],
    ),
    (
        "pi-tools",
        &[
            &[],
            &["--no-content"],
            &["--max-text", "20"],
            &["--errors"],
            &["--status", "no_result", "--status", "orphan"],
        ],
    ),
    (
        "pi-compactions",
        &[
            &[],
            &["--summary", "--files", "--branch-summaries", "--errors"],
        ],
    ),
];

/// pi-sessions' flag sets of scripts/outputs that write records; each runs over a directory.
const SESSIONS_FLAG_SETS: &[&[&str]] = &[
    &[],
    &["--prompts", "--prompt-chars", "30"],
    &["--sort", "size"],
];

/// Runs `bin` with `flags` (the placeholder `MODELS` is the fixtures' models.json) over
/// `inputs` at once, and reads every stdout line as a record; returns how many there were.
fn check(bin: &str, flags: &[&str], inputs: &[PathBuf]) -> usize {
    let models = fixture("models/models.json");
    let flags = flags.iter().map(|f| {
        if *f == "MODELS" {
            models.as_os_str()
        } else {
            OsStr::new(f)
        }
    });
    let o = cmd(bin).args(flags).args(inputs).run();
    let out = String::from_utf8(o.stdout).unwrap_or_else(|_| panic!("{bin}: stdout is not UTF-8"));
    parse_records(&out).len()
}

/// Runs `bin` with each of its flag sets over `inputs` (all in one invocation per set).
fn check_tool(bin: &str, inputs: &[PathBuf], expect_records: bool) {
    let (_, sets) = FLAG_SETS.iter().find(|(b, _)| *b == bin).unwrap();
    for flags in *sets {
        let n = check(bin, flags, inputs);
        assert!(!expect_records || n > 0, "{bin} {flags:?} wrote no record");
    }
}

/// Runs pi-sessions with each of its flag sets over `dir`.
fn check_sessions(dir: PathBuf, expect_records: bool) {
    for flags in SESSIONS_FLAG_SETS {
        let n = check(
            "pi-sessions",
            &[*flags, &["--dir"]].concat(),
            std::slice::from_ref(&dir),
        );
        assert!(
            !expect_records || n > 0,
            "pi-sessions {flags:?} wrote no record"
        );
    }
}

#[test]
fn branch_records_fit_the_doc() {
    check_tool("pi-branch", &fixture_files(), true);
}

#[test]
fn usage_records_fit_the_doc() {
    check_tool("pi-usage", &fixture_files(), true);
}

#[test]
fn tools_records_fit_the_doc() {
    check_tool("pi-tools", &fixture_files(), true);
}

#[test]
fn compactions_records_fit_the_doc() {
    check_tool("pi-compactions", &fixture_files(), true);
}

#[test]
fn sessions_records_fit_the_doc() {
    check_sessions(root().join("fixtures"), true);
}

/// The same over the corpus of real sessions (skipped when it is absent).
#[test]
fn corpus_records_fit_the_doc() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    for (bin, _) in FLAG_SETS {
        check_tool(bin, &files, false);
    }
    check_sessions(corpus().unwrap(), false);
}

/// The typed records are strict: a field the doc does not give, a missing "or null" field, a
/// value of another type and a string outside the documented set each fail.
#[test]
fn records_reject_what_the_doc_does_not_describe() {
    let fits = |line: &str| serde_json::from_str::<Record>(line).is_ok();
    let info = r#""session":"s","file":"f","version":3,"leaf":null,"leaf_line":null,"entries":1,"kept":1,"omitted":0,"leaves":1,"diagnostics":{"#;
    assert!(fits(&format!(r#"{{"type":"branch_info",{info}}}}}"#)));
    assert!(!fits(&format!(
        r#"{{"type":"branch_info",{info}}},"extra":1}}"#
    )));
    assert!(!fits(&format!(
        r#"{{"type":"branch_info",{}}}}}"#,
        info.replace(r#""leaf":null,"#, "")
    )));
    assert!(!fits(&format!(
        r#"{{"type":"branch_info",{}}}}}"#,
        info.replace(r#""kept":1"#, r#""kept":"1""#)
    )));
    assert!(!fits(&format!(
        r#"{{"type":"branch_info",{info}"no_such_kind":1}}}}"#
    )));
    assert!(!fits(r#"{"type":"no_such_record"}"#));
}
