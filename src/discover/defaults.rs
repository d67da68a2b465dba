//! Every tool's default input: when a tool is given no FILE and its stdin is a terminal, it
//! reads the session files pi-sessions would find ([`default_sources`], called from
//! [`crate::cli::Inputs::sources`]).

use super::location::sessions_dir;
use super::probe::{probe, Probe};
use super::progress::Progress;
use super::walk::walk;
use crate::diag::{Diags, Kind};
use crate::input::Source;
use rayon::prelude::*;
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

/// Set to `1` to make tools act as if stdin were a terminal (for tests).
pub const ASSUME_TTY_VAR: &str = "PI_JSONL_ASSUME_TTY";

/// Whether a tool given no FILE should read the user's sessions: stdin is a terminal (or
/// `PI_JSONL_ASSUME_TTY=1` says to act as if it were).
pub fn stdin_is_terminal() -> bool {
    std::env::var_os(ASSUME_TTY_VAR).is_some_and(|v| v == "1") || io::stdin().is_terminal()
}

/// The session files a tool reads when it is given no FILE on a terminal: everything
/// pi-sessions finds in the sessions directory except files that are empty or not sessions,
/// in path order. Says on stderr how many there are; problems of the walk are reported.
pub fn default_sources(tool: &'static str) -> Vec<Source> {
    let dir = match sessions_dir() {
        Ok(d) => d,
        Err(e) => {
            crate::diag::report_global(tool, e);
            return Vec::new();
        }
    };
    if !dir.path.is_dir() {
        crate::diag::report_global(
            tool,
            format!(
                "no FILE given and stdin is a terminal, but there is no sessions directory {} (from {}); give FILE arguments or pipe a session in",
                dir.path.display(),
                dir.from
            ),
        );
        return Vec::new();
    }
    let roots = [dir.path.clone()];
    let exts = [OsString::from("jsonl")];
    let walked = Progress::run(tool, "found", |p| walk(&roots, &exts, Some(p)));
    report_problems(tool, &walked.problems);
    let probes: Vec<Result<Probe, io::Error>> = Progress::run(tool, "checked", |p| {
        p.set_total(walked.files.len());
        walked
            .files
            .par_iter()
            .map(|f| {
                let r = probe(&f.path);
                p.add(1);
                r
            })
            .collect()
    });
    let mut out = Vec::new();
    let (mut empty, mut foreign) = (0usize, 0usize);
    for (f, r) in walked.files.iter().zip(probes) {
        match r {
            Ok(Probe::Empty) => empty += 1,
            Ok(Probe::NotSession) => foreign += 1,
            Ok(Probe::Other) => out.push(Source::Path(f.path.clone())),
            Ok(Probe::NotRegular(kind)) => report_problems(
                tool,
                &[(
                    f.path.clone(),
                    format!("{kind}, not a regular file; not read"),
                )],
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                report_problems(tool, &[(f.path.clone(), "vanished during the scan".into())])
            }
            // The tool reports it when it tries to read it.
            Err(_) => out.push(Source::Path(f.path.clone())),
        }
    }
    let n = out.len();
    let _ = writeln!(
        io::stderr().lock(),
        "{tool}: no FILE given and stdin is a terminal: reading {n} session file{} under {}{}",
        if n == 1 { "" } else { "s" },
        crate::diag::sanitize(&dir.path.to_string_lossy()),
        skipped_note(empty, foreign)
    );
    out
}

/// `; skipped 2 empty, 1 not sessions`, or nothing when nothing was skipped.
fn skipped_note(empty: usize, foreign: usize) -> String {
    let mut skipped = Vec::new();
    if empty > 0 {
        skipped.push(format!("{empty} empty"));
    }
    if foreign > 0 {
        skipped.push(format!("{foreign} not sessions"));
    }
    if skipped.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", skipped.join(", "))
    }
}

/// Reports the problems of a walk, one diagnostic each.
pub fn report_problems(tool: &'static str, problems: &[(PathBuf, String)]) {
    for (p, msg) in problems {
        Diags::new(tool, &p.to_string_lossy(), true).report(None, Kind::Io, msg);
    }
}
