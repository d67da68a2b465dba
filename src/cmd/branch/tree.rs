//! `pi-branch --tree`: a session tree drawn for a person.
//!
//! Each line is one entry: `●` on the active branch, `○` elsewhere, its id, a short description
//! and its label. Branch points open `├─`/`└─` children (in file order); linear runs longer
//! than `--fold` lose their uninteresting middle to a `… N entries …` line. Text from the
//! session is cut short and its control characters escaped.
//!
//! Indentation is bounded: below [`MAX_INDENT`] levels a line keeps the guides of the first
//! levels and says how many it leaves out (`(+N levels)`), so a comb-shaped tree (every branch
//! point one level deeper) draws lines of bounded width, not ones as wide as the tree is deep.
//! Leaves are counted and marked by the rule `--info` counts them by ([`ResolvedTree::leaves`]).
//!
//! The active branch stays in the column of the root: at a branch point its next entry is drawn
//! after the other branches, at the same indentation. Lines are cut to the width
//! ([`crate::view::width`]), then coloured (abandoned entries dimmed, the active leaf green).

use super::entries::{EntryTable, BAD, NONE};
use super::resolve::ResolvedTree;
use super::store::LineStore;
use crate::diag::{sanitize, Diags};
use crate::json::{self, Raw};
use crate::message::{
    as_i64, content_text, details_exit_code, truncate_chars, Message, ResultOutcome,
};
use crate::output::{Out, Stop};
use crate::view::Paint;

const TEXT_CHARS: usize = 60;

/// Levels of indentation drawn in full; deeper ones are drawn as a count. Issue 19, item 4.
const MAX_INDENT: usize = 32;

/// A branch of the drawing still to draw.
struct PendingBranch {
    /// Its first entry.
    start: u32,
    /// The prefix of its first line.
    first: String,
    /// The prefix of the lines below it.
    cont: String,
    /// How many levels deep the branch is (the cells `cont` stands for).
    depth: usize,
    /// The guides of its first levels: `cont` while it is at most [`MAX_INDENT`] levels deep,
    /// then those of the first [`MAX_INDENT`] levels.
    guides: String,
}

impl PendingBranch {
    fn root(start: u32) -> PendingBranch {
        PendingBranch {
            start,
            first: String::new(),
            cont: String::new(),
            depth: 0,
            guides: String::new(),
        }
    }
}

pub(crate) fn draw(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    p: &LineStore,
    fold: usize,
    d: &mut Diags,
) -> Result<(), Stop> {
    let (children, roots) = children_and_roots(s, t);
    let n = s.entries.len();
    let mut is_leaf = vec![false; n];
    let leaves = t.leaves(s);
    for &i in &leaves {
        is_leaf[i as usize] = true;
    }
    let columns = crate::view::width::columns();
    write_heading(out, s, t, leaves.len(), columns)?;
    let mut drawing = Drawing {
        columns,
        colour: crate::view::colour::enabled(),
        s,
        t,
        p,
        fold,
        children,
        is_leaf,
        visited: vec![false; n],
        buf: Vec::new(),
    };
    let mut stack: Vec<PendingBranch> = roots
        .iter()
        .rev()
        .map(|&r| PendingBranch::root(r))
        .collect();
    let mut next_unvisited = 0;
    loop {
        let Some(branch) = stack.pop() else {
            // Entries no root reaches sit in a parentId cycle: draw them from their first.
            while next_unvisited < n && drawing.visited[next_unvisited] {
                next_unvisited += 1;
            }
            if next_unvisited == n {
                break;
            }
            out.line("(entries in a parentId cycle:)".as_bytes())?;
            stack.push(PendingBranch::root(next_unvisited as u32));
            continue;
        };
        let run = drawing.linear_run(branch.start);
        drawing.draw_run(out, &run, &branch.first, &branch.cont, d)?;
        drawing.push_children(&run, &branch, &mut stack);
    }
    Ok(())
}

/// Each entry's children in file order, and the roots (a v1 log is a chain in file order).
fn children_and_roots(s: &EntryTable, t: &ResolvedTree) -> (Vec<Vec<u32>>, Vec<u32>) {
    let n = s.entries.len();
    let linear = s.version < 2;
    let parent = |i: usize| -> u32 {
        if linear {
            if i == 0 {
                NONE
            } else {
                i as u32 - 1
            }
        } else {
            t.parent_of[i]
        }
    };
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match parent(i) {
            NONE => roots.push(i as u32),
            p => children[p as usize].push(i as u32),
        }
    }
    (children, roots)
}

/// The first line: the session, its size, its leaves and the active branch's length.
pub(super) fn write_heading(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    leaves: usize,
    columns: Option<usize>,
) -> Result<(), Stop> {
    let n = s.entries.len();
    let kept = t.kept.len();
    let what = match (s.fragment, s.id.is_empty()) {
        (true, true) => "fragment of a session".to_string(),
        (true, false) => format!("fragment of session {}", sanitize(&s.id)),
        (false, _) => format!("session {}", sanitize(&s.id)),
    };
    let head = format!(
        "{what} (v{}): {n} entries, {leaves} {}, {kept} on the active branch",
        s.version,
        if leaves == 1 { "leaf" } else { "leaves" }
    );
    out.line(fit(head, columns).as_bytes())
}

/// `line` cut to the width, when there is one.
fn fit(line: String, columns: Option<usize>) -> String {
    match columns {
        Some(c) => crate::view::width::cut(&line, c),
        None => line,
    }
}

/// A session's tree being drawn.
struct Drawing<'a> {
    /// The width lines are cut to (`COLUMNS`, the terminal's; none in a pipe).
    columns: Option<usize>,
    /// `--color`: abandoned entries dimmed, the active leaf green.
    colour: bool,
    s: &'a EntryTable,
    t: &'a ResolvedTree,
    p: &'a LineStore<'a>,
    /// `--fold`: linear runs longer than this lose their uninteresting middle (0: never).
    fold: usize,
    children: Vec<Vec<u32>>,
    /// Entries marked `← leaf`: the leaves `--info` counts.
    is_leaf: Vec<bool>,
    /// Entries drawn (or folded) already.
    visited: Vec<bool>,
    buf: Vec<u8>,
}

impl Drawing<'_> {
    /// The linear run from `start`: it goes on while an entry has one child not yet drawn.
    fn linear_run(&mut self, start: u32) -> Vec<u32> {
        let mut run = vec![start];
        self.visited[start as usize] = true;
        loop {
            let last = *run.last().unwrap() as usize;
            match self.children[last].as_slice() {
                [only] if !self.visited[*only as usize] => {
                    self.visited[*only as usize] = true;
                    run.push(*only);
                }
                _ => break,
            }
        }
        run
    }

    /// Whether the `k`th entry of `run` is kept when the run is folded: its ends, a labelled
    /// entry, the leaf.
    fn interesting(&self, run: &[u32], k: usize) -> bool {
        let i = run[k] as usize;
        k == 0
            || k + 1 == run.len()
            || self.s.labels.contains_key(&self.s.entries[i].id)
            || Some(run[k]) == self.t.leaf
    }

    /// One line per entry of `run`, or per folded stretch of it.
    fn draw_run(
        &mut self,
        out: &mut Out,
        run: &[u32],
        first: &str,
        cont: &str,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let mut k = 0;
        while k < run.len() {
            let prefix = if k == 0 { first } else { cont };
            if self.fold > 0 && !self.interesting(run, k) {
                let end = (k..run.len())
                    .find(|&j| self.interesting(run, j))
                    .unwrap_or(run.len());
                if end - k > self.fold {
                    let mark = if self.t.on_chain[run[k] as usize] {
                        '●'
                    } else {
                        '○'
                    };
                    let line = format!("{prefix}{mark} … {} entries …", end - k);
                    let line = Paint::Dim.apply(&fit(line, self.columns), self.colour);
                    out.line(line.as_bytes())?;
                    k = end;
                    continue;
                }
            }
            let i = run[k] as usize;
            let is_leaf = self.is_leaf[i];
            let (line, mark) = describe_entry(self.s, self.t, self.p, i, is_leaf, &mut self.buf, d);
            // Cut first, then painted: abandoned entries dimmed, the active leaf in green.
            let paint = match (self.t.on_chain[i], self.t.leaf == Some(i as u32)) {
                (_, true) => Paint::Good,
                (true, false) => Paint::Plain,
                (false, false) => Paint::Dim,
            };
            let line = format!("{prefix}{line}");
            let line = match self.columns {
                Some(c) => crate::view::width::cut_before(&line, mark, c),
                None => line + mark,
            };
            out.line(paint.apply(&line, self.colour).as_bytes())?;
            k += 1;
        }
        Ok(())
    }

    /// The branches below the run's last entry, pushed so that they are drawn in file order,
    /// except the active branch's next entry: it is drawn last, at the run's own indentation,
    /// so the active branch stays in the run's column (column 0 from the root) however many
    /// branch points it passes. Below [`MAX_INDENT`] levels the hidden ones are counted, not
    /// drawn.
    fn push_children(&self, run: &[u32], parent: &PendingBranch, stack: &mut Vec<PendingBranch>) {
        let last = *run.last().unwrap() as usize;
        let (active, kids): (Vec<u32>, Vec<u32>) = self.children[last]
            .iter()
            .copied()
            .filter(|&c| !self.visited[c as usize])
            .partition(|&c| self.t.on_chain[c as usize] && self.t.on_chain[last]);
        if let Some(&next) = active.first() {
            stack.push(PendingBranch {
                start: next,
                first: parent.cont.clone(),
                cont: parent.cont.clone(),
                depth: parent.depth,
                guides: parent.guides.clone(),
            });
        }
        let continues = !active.is_empty();
        let depth = parent.depth + 1;
        let hidden = parent.depth.saturating_sub(MAX_INDENT);
        let base = match hidden {
            0 => parent.cont.clone(),
            1 => format!("{}(+1 level) ", parent.guides),
            _ => format!("{}(+{hidden} levels) ", parent.guides),
        };
        for (j, &c) in kids.iter().enumerate().rev() {
            // The active branch continues below the others: none of them is the last.
            let is_last = j + 1 == kids.len() && !continues;
            let first = format!("{base}{}", if is_last { "└─" } else { "├─" });
            let cont = format!("{base}{}", if is_last { "  " } else { "│ " });
            let guides = if depth <= MAX_INDENT {
                cont.clone()
            } else {
                parent.guides.clone()
            };
            stack.push(PendingBranch {
                start: c,
                first,
                cont,
                depth,
                guides,
            });
        }
    }
}

/// One entry's line: its mark, id, what it is and its label; and what it ends with, whether
/// it is a leaf (kept whole when the line is cut).
fn describe_entry(
    s: &EntryTable,
    t: &ResolvedTree,
    p: &LineStore,
    i: usize,
    is_leaf: bool,
    buf: &mut Vec<u8>,
    d: &mut Diags,
) -> (String, &'static str) {
    let entry = &s.entries[i];
    let mark = if t.on_chain[i] { '●' } else { '○' };
    let id = if entry.id < BAD {
        s.ids.text(entry.id).to_string()
    } else {
        format!("line {}", entry.line())
    };
    let what = if p.line(entry, buf, d) {
        describe(buf, TEXT_CHARS)
    } else {
        "(unreadable)".into()
    };
    let mut line = format!("{mark} {} {}", sanitize(&id), sanitize(&what));
    if let Some((label, _)) = s.labels.get(&entry.id).filter(|_| entry.id < BAD) {
        line.push_str(&format!(" [{}]", sanitize(label)));
    }
    let mark = if t.leaf == Some(i as u32) {
        "  ← leaf (active)"
    } else if is_leaf {
        "  ← leaf"
    } else {
        ""
    };
    (line, mark)
}

/// A string member's text (empty when absent or not a string), cut to [`TEXT_CHARS`].
fn text(raw: Option<Raw<'_>>) -> String {
    let full = raw.and_then(Raw::as_str).unwrap_or_default();
    truncate_chars(&full, TEXT_CHARS)
}

/// A few words saying what an entry is. `line` is read again from the file, so it is
/// validated here before its members are read.
/// What was said (a message's text) is cut to `said_chars` characters, the rest to
/// [`TEXT_CHARS`].
pub(super) fn describe(line: &[u8], said_chars: usize) -> String {
    let entry = json::value_at(line, 0).ok();
    let get = |k: &str| entry.and_then(|e| e.get(k));
    let kind = text(get("type"));
    match kind.as_str() {
        "message" => describe_message(get("message"), said_chars),
        "compaction" => {
            let mut out = match get("tokensBefore").and_then(Raw::as_u64) {
                Some(n) => format!("compaction ({n} tokens before)"),
                None => "compaction".into(),
            };
            // Pi 1.x: a compaction that keeps nothing names itself as its first kept entry.
            let first_kept = get("firstKeptEntryId").and_then(Raw::as_key);
            if first_kept.is_some() && first_kept == get("id").and_then(Raw::as_key) {
                out.push_str(", keeps nothing");
            }
            out
        }
        "branch_summary" => match get("fromId").and_then(Raw::as_str) {
            Some(from) => format!(
                "branch_summary (from {})",
                truncate_chars(&from, TEXT_CHARS)
            ),
            None => "branch_summary".into(),
        },
        "model_change" => format!("model_change {}", text(get("modelId").or(get("model")))),
        // Pi clears a label with an entry whose `label` is absent or empty.
        "label" => match text(get("label")) {
            label if label.is_empty() => format!("label cleared on {}", text(get("targetId"))),
            label => format!("label {label:?}"),
        },
        // Pi 1.x: a billed call that is not a message (cache warming, ...).
        "usage" => format!("usage {} {}", text(get("kind")), text(get("model"))),
        // Pi 1.x: what the model is shown of an earlier entry, on this branch only.
        "context_edit" => {
            let what = match get("replacement") {
                Some(r) if r.is_null() => "omitted",
                _ => "replaced",
            };
            format!("context_edit: {} {what}", text(get("targetId")))
        }
        "" => "(no type)".into(),
        other => other.to_string(),
    }
}

/// A few words saying what a `message` entry's message is.
fn describe_message(msg: Option<Raw<'_>>, said_chars: usize) -> String {
    let member = |k: &str| msg.and_then(|m| m.get(k));
    let role = text(member("role"));
    match role.as_str() {
        "user" | "custom" => {
            let text = member("content").and_then(content_text).unwrap_or_default();
            format!("{role}: {}", quote(&text, said_chars))
        }
        "assistant" => {
            let mut tools = Vec::new();
            if let Some(c) = member("content") {
                c.for_each_element(|b| {
                    if b.get("type").is_some_and(|t| t.is_str("toolCall")) {
                        tools.push(text(b.get("name")));
                    }
                });
            }
            let said = member("content").and_then(content_text).unwrap_or_default();
            let mut out = "assistant".to_string();
            if !said.trim().is_empty() {
                out.push_str(&format!(": {}", quote(&said, said_chars)));
            }
            if !tools.is_empty() {
                out.push_str(&format!(" → {}", tools.join(", ")));
            }
            let stop = text(member("stopReason"));
            if matches!(stop.as_str(), "error" | "aborted" | "length" | "deferred") {
                out.push_str(&format!(" ({stop})"));
            }
            out
        }
        "toolResult" => {
            // Failed by the rule pi-tools' status follows: isError, then an exit code.
            let m = msg.map(Message::read).unwrap_or_default();
            let is_error = m.is_error.and_then(Raw::as_bool);
            let exit_code = m.details.and_then(details_exit_code);
            let err = ResultOutcome::of(is_error, exit_code).failed();
            let name = text(m.tool_name);
            format!("toolResult {name}{}", if err { " (error)" } else { "" })
        }
        "bashExecution" => {
            // A user's command failed by pi-tools' rule for it: an exit code that is not 0.
            let m = msg.map(Message::read).unwrap_or_default();
            let err = ResultOutcome::of(None, m.exit_code.and_then(as_i64)).failed();
            format!("!{}{}", text(m.command), if err { " (error)" } else { "" })
        }
        // Pi 1.x: the prompt and tool declarations, or a change to them.
        "system" => {
            let count = |k: &str| {
                let mut n = 0;
                if let Some(v) = member(k) {
                    v.for_each_element(|_| n += 1);
                }
                n
            };
            let changes: Vec<String> = [("+", count("toolsAdded")), ("−", count("toolsRemoved"))]
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(sign, n)| format!("{sign}{n} tool{}", if *n == 1 { "" } else { "s" }))
                .collect();
            match changes.is_empty() {
                true => "system".into(),
                false => format!("system ({})", changes.join(", ")),
            }
        }
        other => format!("message ({other})"),
    }
}

fn quote(text: &str, max: usize) -> String {
    format!("\"{}\"", truncate_chars(text, max))
}
