//! What the other tools know about an input, found by running them over its bytes: the
//! active branch (pi-branch), its size (pi-branch --info), the tool calls joined to their
//! results (pi-tools over the branch), the compactions' triggers (pi-compactions), the
//! session totals (pi-usage) and the context series (pi-usage --context over the branch).
//! pi-replay composes them as a person would in a pipe, so it says what they say.

use super::PiFiles;
use crate::cmd::branch::{Branch, LeafBranch};
use crate::cmd::{compactions, tools::Tools, usage, usage::Usage};
use crate::diag::Diags;
use crate::json;
use crate::output::{Out, Stop};
use crate::tool::Tool;
use clap::Parser;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

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

/// An abandoned branch (--branches): what pi-replay shows of it (its entries after the last
/// one it shares with the active branch) and pi-tools' records over it, by line.
pub(super) struct Abandoned {
    pub session: String,
    pub leaf: String,
    /// The id of the active branch's entry it leaves from; empty when it shares none.
    pub fork: String,
    /// As pi-branch writes them: the session's header, the entries before the fork that the
    /// results shown answer (the calls and their first results, for pi-tools' join), then the
    /// entries shown.
    pub branch: Vec<u8>,
    /// The number of the first line of `branch` shown (1-based).
    pub from: u64,
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

/// The records `write` writes; its diagnostics counted only, as in [`records`].
fn records_of(write: impl FnOnce(&mut Out, &mut Diags) -> Result<(), Stop>) -> Vec<Rec> {
    let mut out = Out::held();
    let mut d = Diags::quiet("pi-replay", "");
    let _ = write(&mut out, &mut d);
    parse(&out.buf, false)
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
            let value = super::parse_json(l)?;
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
        pi: &PiFiles,
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
        let compactions = records_of(|out, d| {
            compactions::records_with(
                &args(&["pi-compactions"]),
                (&pi.models, &pi.reserves),
                input,
                out,
                d,
            )
        });
        let mut contexts: HashMap<u64, Rec> = HashMap::new();
        for r in records_of(|out, d| usage::contexts_with(&pi.models, &branch, out, d)) {
            contexts.insert(r.u64("line").unwrap_or(0), r);
        }
        let abandoned = if branches {
            abandoned(input, max_text)
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

/// Every leaf of `input` but the active one, with what is shown of its branch, from one
/// reading of the input (`branch::every_branch`). Of each branch only the part after its fork
/// point is written and given to pi-tools, with, before it, the few entries of the shared part
/// whose calls its results answer; so the work is the input's size plus what is shown, not
/// the leaves times the depth of the tree.
fn abandoned(input: &[u8], max_text: usize) -> Vec<Abandoned> {
    abandoned_counted(input, max_text, &mut 0)
}

/// [`abandoned`], adding to `parsed` the number of entry lines read for the join: each entry
/// of a session is read at most once, whatever the number of branches through it.
fn abandoned_counted(input: &[u8], max_text: usize, parsed: &mut usize) -> Vec<Abandoned> {
    let mut out = Vec::new();
    let mut ids = ToolIds::default();
    crate::cmd::branch::every_branch(input, &mut |b| {
        if ids.session != Some(b.session_no) {
            *parsed += ids.parsed;
            ids = ToolIds {
                session: Some(b.session_no),
                ..ToolIds::default()
            };
        }
        if b.active {
            return;
        }
        let (before, shown) = b.entries.split_at(b.shared);
        let needed = ids.answered_before(b, before, shown);
        // From its header (an oh-my-pi title slot before it is not part of the page).
        let mut branch = session_part(&b.write(true, &[]), b.session);
        let from = line_count(&branch) + needed.len() as u64 + 1;
        branch.extend_from_slice(&b.write(false, &needed));
        branch.extend_from_slice(&b.write(false, shown));
        let mut tools = tools_by_line(&branch, max_text);
        tools.retain(|&line, recs| {
            recs.retain(|r| line >= from || result_line(r).is_some_and(|n| n >= from));
            !recs.is_empty()
        });
        out.push(Abandoned {
            session: b.session.to_string(),
            leaf: b.leaf.clone(),
            fork: before.last().and_then(|&e| b.id(e)).unwrap_or_default(),
            branch,
            from,
            tools,
        });
    });
    *parsed += ids.parsed;
    out
}

fn line_count(b: &[u8]) -> u64 {
    b.iter().filter(|&&c| c == b'\n').count() as u64
}

/// The call and result ids of an entry: the ids of its toolCall blocks, and the id its
/// toolResult answers, as keys (`json::string_key`: pi-tools joins by them, lone surrogates
/// kept apart as Pi keeps them).
type EntryToolIds = (Vec<Box<[u8]>>, Option<Box<[u8]>>);

/// The tool-call ids of a session's entries, each entry read once, for the join of an
/// abandoned branch's results to calls made before its fork.
#[derive(Default)]
struct ToolIds {
    /// The session they are of (its place in the input).
    session: Option<usize>,
    /// By entry index.
    of: HashMap<u32, EntryToolIds>,
    /// How many entry lines were read.
    parsed: usize,
}

impl ToolIds {
    fn of(&mut self, b: &LeafBranch, entry: u32) -> &EntryToolIds {
        self.of.entry(entry).or_insert_with(|| {
            self.parsed += 1;
            call_ids(&b.write(false, &[entry]))
        })
    }

    /// The entries of `before` (the part of a branch before `shown`) that pi-tools needs in
    /// order to join `shown` as it would over the whole branch: for each id a result of
    /// `shown` names, the latest call with that id in `before` and the first result after it
    /// there (which makes a later one a duplicate). In branch order.
    fn answered_before(&mut self, b: &LeafBranch, before: &[u32], shown: &[u32]) -> Vec<u32> {
        let mut open: HashSet<Box<[u8]>> = HashSet::new();
        for &e in shown {
            open.extend(self.of(b, e).1.clone());
        }
        let mut first_result: HashMap<Box<[u8]>, usize> = HashMap::new();
        let mut needed = Vec::new();
        for (at, &e) in before.iter().enumerate().rev() {
            if open.is_empty() {
                break;
            }
            let (calls, result) = self.of(b, e);
            if let Some(r) = result.as_ref().filter(|r| open.contains(*r)) {
                first_result.insert(r.clone(), at);
            }
            for c in calls {
                if open.remove(c) {
                    needed.push(at);
                    needed.extend(first_result.get(c));
                }
            }
        }
        needed.sort_unstable();
        needed.dedup();
        needed.into_iter().map(|at| before[at]).collect()
    }
}

/// The string `r` holds, if it is one.
fn str_at(r: Option<json::Raw<'_>>) -> Option<std::borrow::Cow<'_, str>> {
    r.and_then(|r| r.as_str())
}

/// The ids of `line`'s toolCall blocks when it is an assistant message, the id it answers
/// when it is a toolResult (pi-tools reads only `message` entries).
fn call_ids(line: &[u8]) -> EntryToolIds {
    let mut calls = Vec::new();
    let Some(m) = json::validate(line.trim_ascii_end())
        .ok()
        .filter(|e| str_at(e.get("type")).is_some_and(|t| t == "message"))
        .and_then(|e| e.get("message"))
    else {
        return (calls, None);
    };
    match str_at(m.get("role")).as_deref() {
        Some("assistant") => {
            if let Some(c) = m.get("content") {
                c.for_each_element(|b| {
                    if str_at(b.get("type")).is_some_and(|t| t == "toolCall") {
                        calls.extend(b.get("id").and_then(json::Raw::as_key).map(|i| i.into()));
                    }
                });
            }
            (calls, None)
        }
        Some("toolResult") => (
            calls,
            m.get("toolCallId")
                .and_then(json::Raw::as_key)
                .map(|i| i.into()),
        ),
        _ => (calls, None),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of `depth` turns on its active branch, whose first turn makes two calls and
    /// answers one (`dup`); from every tenth turn an abandoned branch of three entries leaves:
    /// a result answering the other call (`early`, made before every fork), a second result
    /// for `dup`, and a user message.
    fn deep_branchy_session(depth: usize) -> (Vec<u8>, usize) {
        let mut s = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"deep\",\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"cwd\":\"/p\"}\n",
        );
        let mut entries = 0;
        let mut line = |id: String, parent: &str, message: String| {
            let parent = match parent {
                "" => "null".to_string(),
                p => format!("\"{p}\""),
            };
            s.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-05-01T10:00:01.000Z\",\"message\":{message}}}\n"
            ));
            entries += 1;
        };
        let user = |t: &str| format!("{{\"role\":\"user\",\"content\":\"{t}\"}}");
        line("u0".into(), "", user("start"));
        line(
            "a0".into(),
            "u0",
            "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"early\",\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}},{\"type\":\"toolCall\",\"id\":\"dup\",\"name\":\"bash\",\"arguments\":{\"command\":\"pwd\"}}]}".into(),
        );
        let result = |id: &str| {
            format!("{{\"role\":\"toolResult\",\"toolCallId\":\"{id}\",\"toolName\":\"bash\",\"content\":[{{\"type\":\"text\",\"text\":\"out\"}}]}}")
        };
        line("t0".into(), "a0", result("dup"));
        let mut parent = "t0".to_string();
        for i in 1..=depth {
            line(format!("u{i}"), &parent, user("go on"));
            parent = format!("u{i}");
            if i % 10 == 0 {
                line(format!("r{i}"), &parent, result("early"));
                line(format!("d{i}"), &format!("r{i}"), result("dup"));
                line(format!("x{i}"), &format!("d{i}"), user("abandoned"));
            }
        }
        // The last entry: the active leaf.
        line("end".into(), &parent, user("the end"));
        (s.into_bytes(), entries)
    }

    #[test]
    fn each_abandoned_branch_is_read_from_its_fork_and_each_entry_once() {
        let depth = 400;
        let (input, entries) = deep_branchy_session(depth);
        let mut parsed = 0;
        let abandoned = abandoned_counted(&input, 100, &mut parsed);
        assert_eq!(abandoned.len(), depth / 10);
        // Every entry at most once for the join, not once per branch through it (the branches
        // hold about 40 × 200 entries before their forks).
        assert!(
            parsed <= entries,
            "{parsed} lines read for {entries} entries"
        );
        for a in &abandoned {
            let lines: Vec<&[u8]> = a.branch.split_inclusive(|&b| b == b'\n').collect();
            // The header, the calls the shown results name and the first result of `dup`,
            // then the three entries shown.
            assert_eq!(lines.len(), 6, "leaf {}", a.leaf);
            assert_eq!(a.from, 4);
            assert!(String::from_utf8_lossy(lines[1]).contains("\"id\":\"a0\""));
            assert!(String::from_utf8_lossy(lines[2]).contains("\"id\":\"t0\""));
            assert_eq!(a.fork, format!("u{}", &a.leaf[1..]));
            // `early`'s result is joined to its call, made before the fork: no orphan.
            let call = a.tools[&2]
                .iter()
                .find(|r| r.str("call_id") == Some("early"))
                .unwrap();
            assert_eq!(result_line(call), Some(4), "{}", call.value);
            assert!(
                !a.tools.contains_key(&4),
                "{:?}",
                a.tools.get(&4).map(|r| &r[0].value)
            );
            // The second result of `dup` is a duplicate of the one before the fork.
            let dup = &a.tools[&5][0];
            assert_eq!(dup.str("status"), Some("duplicate"), "{}", dup.value);
        }
    }
}
