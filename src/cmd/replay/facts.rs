//! What the other tools know about an input, found by running them over its bytes: the
//! active branch (pi-branch), its size (pi-branch --info), the tool calls joined to their
//! results (pi-tools over the branch), the compactions' triggers (pi-compactions), the
//! session totals (pi-usage) and the context series (pi-usage --context over the branch).
//! pi-replay composes them as a person would in a pipe, so it says what they say.

use crate::cmd::{branch::Branch, compactions::Compactions, tools::Tools, usage::Usage};
use crate::diag::Diags;
use crate::json;
use crate::output::{Out, Stop};
use crate::tool::Tool;
use clap::Parser;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One record another tool wrote, parsed, with its line's raw text when exact numbers are
/// read from it (pi-usage's costs; empty otherwise, so large inputs do not hold it twice).
pub(super) struct Rec {
    pub value: Value,
    pub raw: Vec<u8>,
}

impl Rec {
    /// The number at `path` as written in the record (costs are exact decimals).
    pub fn raw_number(&self, path: &[&str]) -> Option<String> {
        let mut r = json::validate(&self.raw).ok()?;
        for k in path {
            r = r.get(k)?;
        }
        let b = r.bytes();
        (b.first().is_some_and(|c| c.is_ascii_digit() || *c == b'-'))
            .then(|| String::from_utf8_lossy(b).into_owned())
    }
    pub fn str(&self, k: &str) -> Option<&str> {
        self.value.get(k).and_then(Value::as_str)
    }
    pub fn u64(&self, k: &str) -> Option<u64> {
        self.value.get(k).and_then(Value::as_u64)
    }
}

/// An abandoned branch (--branches): pi-branch --leaf's output for one leaf that is not the
/// active one, and pi-tools' records over it, by line.
pub(super) struct Abandoned {
    pub session: String,
    pub leaf: String,
    pub branch: Vec<u8>,
    pub tools: HashMap<u64, Vec<Rec>>,
}

/// The facts of one input.
pub(super) struct Facts {
    /// pi-branch's output: each session's header and active branch.
    pub branch: Vec<u8>,
    /// `branch_info` per session, in input order.
    pub infos: Vec<Rec>,
    /// `usage` per session, in input order.
    pub usages: Vec<Rec>,
    /// `tool_call` and `tool_result` records of the branch, by their line in `branch`.
    pub tools: HashMap<u64, Vec<Rec>>,
    /// `compaction_report` records, by session id and entry id (or position among the
    /// session's compactions when the entry has no id).
    pub compactions: Vec<Rec>,
    /// `context` records of the branch, by their line in `branch`.
    pub contexts: HashMap<u64, Rec>,
    /// With --branches: every leaf but the active one, with its branch.
    pub abandoned: Vec<Abandoned>,
}

fn args<A: Parser>(list: &[&str]) -> A {
    A::parse_from(list)
}

/// Runs `T` over `input`; its records, parsed. Its diagnostics are counted only: the branch
/// run reports the input's problems once.
fn records<T: Tool>(a: &T::Args, input: &[u8]) -> Vec<Rec> {
    parse(&run::<T>(a, input), false)
}

/// What `T` writes over `input`; its diagnostics counted only.
fn run<T: Tool>(a: &T::Args, input: &[u8]) -> Vec<u8> {
    let mut out = Out::held();
    let mut d = Diags::quiet("pi-replay", "");
    let _ = T::run_bytes(a, input, &mut out, &mut d);
    out.buf
}

/// JSON lines, parsed; their text kept with `keep_raw`.
fn parse(lines: &[u8], keep_raw: bool) -> Vec<Rec> {
    lines
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let value = serde_json::from_slice(l).ok()?;
            Some(Rec {
                value,
                raw: if keep_raw { l.to_vec() } else { Vec::new() },
            })
        })
        .collect()
}

impl Facts {
    pub fn gather(
        input: &[u8],
        models: Option<&Path>,
        branches: bool,
        max_text: usize,
        d: &mut Diags,
    ) -> Result<Facts, Stop> {
        let mut out = Out::held();
        Branch::run_bytes(&args(&["pi-branch"]), input, &mut out, d)?;
        let branch = out.buf;
        let infos = records::<Branch>(&args(&["pi-branch", "--info"]), input);
        let usages = parse(&run::<Usage>(&args(&["pi-usage", "--json"]), input), true);
        let tools = tools_by_line(&branch, max_text);
        let mut models_arg = vec!["x".to_string()];
        if let Some(m) = models {
            models_arg.push("--models".into());
            models_arg.push(m.to_string_lossy().into_owned());
        }
        let with_models = |tool: &str, extra: &[&str]| {
            let mut v: Vec<String> = vec![tool.into()];
            v.extend(extra.iter().map(|s| s.to_string()));
            v.extend(models_arg[1..].iter().cloned());
            v
        };
        let compactions = records::<Compactions>(
            &<Compactions as Tool>::Args::parse_from(with_models("pi-compactions", &[])),
            input,
        );
        let mut contexts: HashMap<u64, Rec> = HashMap::new();
        for r in records::<Usage>(
            &<Usage as Tool>::Args::parse_from(with_models("pi-usage", &["--context"])),
            &branch,
        ) {
            contexts.insert(r.u64("line").unwrap_or(0), r);
        }
        let abandoned = if branches {
            abandoned(input, &branch, max_text)
        } else {
            Vec::new()
        };
        Ok(Facts {
            branch,
            infos,
            usages,
            tools,
            compactions,
            contexts,
            abandoned,
        })
    }

    /// The compaction record of the `nth` compaction (0-based) of `session`, entry `id`.
    pub fn compaction(&self, session: &str, id: Option<&str>, nth: usize) -> Option<&Rec> {
        let mut of_session = self.compactions.iter().filter(|r| {
            r.str("type") == Some("compaction_report") && r.str("session").unwrap_or("") == session
        });
        match id {
            Some(id) => of_session.find(|r| r.str("entry") == Some(id)),
            None => of_session.nth(nth),
        }
    }
}

/// pi-tools' records over `branch`, by the line of the entry they are about; result text
/// cut to `max_text` characters (pi-replay cuts it to as many bytes, stating the full size).
fn tools_by_line(branch: &[u8], max_text: usize) -> HashMap<u64, Vec<Rec>> {
    let mut tools: HashMap<u64, Vec<Rec>> = HashMap::new();
    let max = max_text.to_string();
    for r in records::<Tools>(&args(&["pi-tools", "--max-text", &max]), branch) {
        tools.entry(r.u64("line").unwrap_or(0)).or_default().push(r);
    }
    tools
}

/// Every leaf of `input` but the active one, with its branch (pi-branch --leaves, then
/// pi-branch --leaf for each: one pass over the input per leaf). `active` is pi-branch's
/// output (each session's active branch). Of each branch only what is shown is kept: the
/// header and the entries from the last one it shares with the active branch (the lines
/// before are kept as blank lines, so that the line numbers of pi-tools' records hold), and
/// the tool records about those entries; so the memory is not the sum of the branches.
fn abandoned(input: &[u8], active: &[u8], max_text: usize) -> Vec<Abandoned> {
    let mut active_ids: HashMap<String, HashSet<String>> = HashMap::new();
    let mut out = Vec::new();
    crate::cmd::branch::every_branch(input, &mut |b| {
        if b.active {
            return;
        }
        // From its header (an oh-my-pi title slot before it is not part of the page).
        let mut branch = session_part(&b.lines, &b.session);
        let mut tools = tools_by_line(&branch, max_text);
        let ids = active_ids
            .entry(b.session.clone())
            .or_insert_with(|| ids_of(&session_part(active, &b.session)));
        let from = blank_shared(&mut branch, ids);
        tools.retain(|&line, recs| {
            recs.retain(|r| line >= from || result_line(r).is_some_and(|n| n >= from));
            !recs.is_empty()
        });
        out.push(Abandoned {
            session: b.session,
            leaf: b.leaf,
            branch,
            tools,
        });
    });
    out
}

/// The ids of the entries of `lines`.
fn ids_of(lines: &[u8]) -> HashSet<String> {
    lines
        .split(|&b| b == b'\n')
        .filter_map(|l| json::validate(l.trim_ascii_end()).ok()?.get("id")?.as_str())
        .map(|id| id.into_owned())
        .collect()
}

/// Blanks the lines of `branch` after its first and before the last entry whose id is in
/// `shared` (what pi-replay does not show of an abandoned branch); the number of the first
/// line kept after the first (1 when nothing is shared).
fn blank_shared(branch: &mut Vec<u8>, shared: &HashSet<String>) -> u64 {
    let lines: Vec<&[u8]> = branch.split_inclusive(|&b| b == b'\n').collect();
    let last_shared = lines.iter().skip(1).rposition(|l| {
        json::validate(l.trim_ascii_end())
            .ok()
            .and_then(|r| r.get("id")?.as_str())
            .is_some_and(|id| shared.contains(id.as_ref()))
    });
    let Some(i) = last_shared.map(|i| i + 1) else {
        return 1;
    };
    let mut kept = Vec::with_capacity(branch.len());
    kept.extend_from_slice(lines[0]);
    kept.resize(kept.len() + i - 1, b'\n');
    for l in &lines[i..] {
        kept.extend_from_slice(l);
    }
    *branch = kept;
    i as u64 + 1
}

/// The line of the result a `tool_call` record joined.
fn result_line(r: &Rec) -> Option<u64> {
    r.value.get("result")?.get("line")?.as_u64()
}

/// The lines of `stream` from the header of session `id` to the next header; with `id` empty,
/// those before the first header (a fragment's).
fn session_part(stream: &[u8], id: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut inside = id.is_empty();
    for line in stream.split_inclusive(|&b| b == b'\n') {
        let header = json::validate(line).ok().filter(|r| {
            r.get("type")
                .and_then(|t| json::as_str(t.bytes()))
                .is_some_and(|t| t == "session")
        });
        if let Some(h) = header {
            inside = h
                .get("id")
                .and_then(|i| json::as_str(i.bytes()))
                .is_some_and(|i| i == id);
        }
        if inside {
            out.extend_from_slice(line);
        }
    }
    out
}
