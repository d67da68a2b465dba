//! pi-branch: keep the active branch of each session.
//!
//! Pi's rule when it loads a file: the leaf is the last entry in file order; the conversation
//! is the `parentId` chain from that leaf back to the root. pi-branch writes the header and
//! that chain, root to leaf, each line copied byte for byte, so its output is itself a linear
//! session that Pi loads to the same conversation.
//!
//! Memory: per entry a few numbers (offset, length, line, interned id and parent); the payload
//! of a file is read again by offset at the end of each session, never held. From stdin the
//! session's bytes are held, since they cannot be read twice.

use crate::cli::{Inputs, ManPage};
use crate::diag::{Counts, Diags, Kind};
use crate::input::{self, Source};
use crate::json;
use crate::output::{Out, Stop};
use crate::reader::{self, Entry, Header, Visitor};
use clap::{CommandFactory, Parser};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "pi-branch",
    version,
    about = "Keep the active branch of Pi sessions: the header and the leaf's parent chain, byte for byte.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Print one `branch_info` record per session instead of its entries.
    #[arg(long, conflicts_with_all = ["leaves", "tree"])]
    pub info: bool,

    /// Start the branch at the entry with this id instead of the last entry.
    #[arg(long, value_name = "ID", conflicts_with = "label")]
    pub leaf: Option<String>,

    /// Start the branch at the entry this label names (labels resolve as in Pi: the latest
    /// `label` entry for a target wins; an empty or absent label clears it).
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,

    /// Print one `leaf` record per leaf of each session's tree instead of entries.
    #[arg(long, conflicts_with_all = ["tree", "leaf", "label"])]
    pub leaves: bool,

    /// With --leaves: add the last user text on each leaf's branch (session text is private,
    /// so it is opt-in).
    #[arg(long, requires = "leaves")]
    pub preview: bool,

    /// With --preview: keep at most N characters of the text.
    #[arg(long, value_name = "N", default_value_t = 80, requires = "preview")]
    pub preview_chars: usize,

    /// Draw each session's tree for a person: the active path marked, labels shown, long
    /// linear runs folded.
    #[arg(long)]
    pub tree: bool,

    /// With --tree: fold linear runs longer than N entries (0 never folds).
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub fold: usize,
}

pub const MAN: ManPage = ManPage {
    name: "pi-branch",
    summary: "keep the active branch of Pi session files",
    description: "A Pi session file is a tree: every entry names its parent (parentId), and going back with /tree leaves abandoned branches in the file. When Pi loads a file, the leaf is the last entry in file order, whatever its type, and the conversation is the parentId chain from that leaf to the root. pi-branch writes, for each session, the header and the entries of that chain from root to leaf, each line byte for byte as it was in the input (a line without a final newline gets one). The output is itself a session that Pi loads to the same conversation, and pi-branch | pi-branch gives the same output.\n\n\
Entries without an id in a v2/v3 session stay at their place unless their parentId points into an abandoned branch (then they are omitted and counted). Version 1 sessions (no version field, no ids) are linear logs and pass whole.\n\n\
Malformed trees are reported, never followed blindly: a parentId cycle (an entry that is its own parent included) ends the chain where it closes (Pi itself would hang); a parent that is not in the session ends the chain there, and the diagnostic says how many earlier entries were lost; of two entries with one id the later wins, as in Pi. When the last entry has no id (Pi would then show an empty conversation) the leaf is the last entry that has one, with a diagnostic.\n\n\
Lines Pi cannot parse (malformed JSON, two records glued on one line, a JSON value that is not an object) are reported and left out, as Pi skips them. A session whose header is missing or has no string id is reported as unreadable and nothing of it is written. A stream may hold several sessions back to back; each header starts a new one. In a named file a second header is also reported: Pi itself would skip it and read on as one session, but pi-branch treats a file like any stream, so that splitting or concatenating inputs at headers never changes the result.\n\n\
Given FILE arguments, pi-branch keeps per entry only its offset, length, line and ids, and reads the kept lines again at the end; from stdin it holds one session at a time.",
    output: "By default: session lines, unchanged. With --info: one branch_info record per session; with --leaves: one leaf record per leaf. Both are JSON objects with type as the first key, described field by field in docs/FORMAT.md. With --tree: a drawing for a person (not JSON); control characters from the session are escaped.",
    environment: "pi-branch has no variables of its own. Given no FILE it reads stdin, unless stdin is a terminal: then it reads the user's sessions, as described below.",
    examples: &[
        ("pi-branch session.jsonl | pi-usage", "What the kept conversation cost."),
        ("pi-branch --info ~/.pi/agent/sessions/*/*.jsonl", "How much of each session is abandoned."),
        ("pi-branch --tree session.jsonl | less -R", "Look at the shape of a session."),
        ("pi-branch --label before-refactor session.jsonl > old.jsonl", "The conversation as it was at a labelled entry."),
        ("pi-branch --leaves session.jsonl | jq -r 'select(.active|not).entry'", "The ids of abandoned leaves."),
    ],
};

/// The rendered man page.
pub fn man() -> String {
    crate::cli::render_man(&Args::command(), &MAN)
}

pub fn main() -> ExitCode {
    let args = Args::parse();
    run(&args)
}

pub fn run(args: &Args) -> ExitCode {
    let sources = args.inputs.sources();
    input::run(
        "pi-branch",
        &sources,
        args.inputs.threads(),
        |src, out, d| branch_source(args, src, out, d),
        |_, _| Ok(()),
    )
}

/// Runs pi-branch over `input` as if it came on stdin (for property tests and fuzzing).
pub fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
    let mut v = Brancher::new(args, out, None, "<stdin>");
    reader::read(input, false, d, &mut v)?;
    Ok(())
}

fn branch_source(args: &Args, src: &Source, out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
    let Some(input) = input::Opened::open(src, d) else {
        return Ok(());
    };
    let name = src.name();
    let mut v = Brancher::new(args, out, input.file(), &name);
    input.read(d, &mut v)?;
    Ok(())
}

pub(crate) const NONE: u32 = u32::MAX;
/// A parentId that is neither a string nor null.
pub(crate) const BAD: u32 = u32::MAX - 1;

#[derive(Clone, Copy)]
pub(crate) struct Node {
    /// Offset of the line in the file, or in `Session::mem` for stdin.
    pub(crate) offset: u64,
    /// Length with its line terminator, if it had one.
    pub(crate) len: u64,
    pub(crate) line: u64,
    pub(crate) id: u32,
    pub(crate) parent: u32,
    pub(crate) has_newline: bool,
}

/// Ids interned to small numbers; their text kept once.
#[derive(Default)]
pub(crate) struct Ids {
    map: HashMap<Box<[u8]>, u32>,
    text: Vec<Box<str>>,
}

impl Ids {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.map.get(s.as_bytes()) {
            return k;
        }
        let k = self.text.len() as u32;
        self.map.insert(s.as_bytes().into(), k);
        self.text.push(s.into());
        k
    }
    fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s.as_bytes()).copied()
    }
    pub(crate) fn text(&self, k: u32) -> &str {
        &self.text[k as usize]
    }
}

pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) version: u64,
    header: Node,
    pub(crate) nodes: Vec<Node>,
    pub(crate) ids: Ids,
    /// target id → (label, order of the label entry)
    pub(crate) labels: HashMap<u32, (String, usize)>,
    /// The session's bytes, when reading stdin.
    mem: Vec<u8>,
    counts_at_start: Counts,
}

struct Brancher<'a, 'w> {
    args: &'a Args,
    out: &'a mut Out<'w>,
    file: Option<&'a File>,
    name: &'a str,
    s: Option<Session>,
}

impl<'a, 'w> Brancher<'a, 'w> {
    fn new(
        args: &'a Args,
        out: &'a mut Out<'w>,
        file: Option<&'a File>,
        name: &'a str,
    ) -> Brancher<'a, 'w> {
        Brancher {
            args,
            out,
            file,
            name,
            s: None,
        }
    }

    fn node(&mut self, line: &crate::lines::Line<'_>) -> Node {
        let mut offset = line.offset;
        if self.file.is_none() {
            let s = self.s.as_mut().expect("in a session");
            offset = s.mem.len() as u64;
            s.mem.extend_from_slice(line.bytes);
            let eol = line.len_with_eol - line.bytes.len() as u64;
            s.mem.extend_from_slice(if eol == 2 {
                b"\r\n"
            } else if eol == 1 {
                b"\n"
            } else {
                b""
            });
        }
        Node {
            offset,
            len: line.len_with_eol,
            line: line.no,
            id: NONE,
            parent: NONE,
            has_newline: line.has_newline,
        }
    }
}

impl Visitor for Brancher<'_, '_> {
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.s = Some(Session {
            id: h.id.clone(),
            version: h.version,
            header: Node {
                offset: 0,
                len: 0,
                line: 0,
                id: NONE,
                parent: NONE,
                has_newline: true,
            },
            nodes: Vec::new(),
            ids: Ids::default(),
            labels: HashMap::new(),
            mem: Vec::new(),
            counts_at_start: d.counts(),
        });
        let n = self.node(&h.line);
        self.s.as_mut().unwrap().header = n;
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let mut n = self.node(&e.line);
        let s = self.s.as_mut().expect("in a session");
        if s.version >= 2 {
            match e.get("id") {
                None | Some(b"null") => {}
                Some(raw) => match json::as_str(raw) {
                    Some(id) => n.id = s.ids.intern(&id),
                    None => d.report(
                        Some(e.line.no),
                        Kind::BadId,
                        format!(
                            "id is a {}, not a string; entry treated as id-less",
                            json::kind_name(raw)
                        ),
                    ),
                },
            }
            n.parent = match e.get("parentId") {
                None | Some(b"null") => NONE,
                Some(raw) => match json::as_str(raw) {
                    Some(p) if p.is_empty() => NONE,
                    Some(p) => s.ids.intern(&p),
                    None => {
                        d.report(
                            Some(e.line.no),
                            Kind::BadId,
                            format!(
                                "parentId is a {}, not a string; the chain ends here",
                                json::kind_name(raw)
                            ),
                        );
                        BAD
                    }
                },
            };
            if e.get("type") == Some(b"\"label\"") {
                if let Some(target) = e.str("targetId") {
                    let t = s.ids.intern(&target);
                    match e.str("label").filter(|l| !l.is_empty()) {
                        Some(l) => {
                            s.labels.insert(t, (l.into_owned(), s.nodes.len()));
                        }
                        None => {
                            s.labels.remove(&t);
                        }
                    }
                }
            }
        }
        s.nodes.push(n);
        Ok(())
    }

    fn end(&mut self, d: &mut Diags) -> Result<(), Stop> {
        let Some(s) = self.s.take() else {
            return Ok(());
        };
        let payload = Payload {
            file: self.file,
            mem: &s.mem,
        };
        let tree = Tree::build(&s, self.args, d);
        if self.args.info {
            write_info(
                self.out,
                &s,
                &tree,
                self.name,
                d.counts().since(&s.counts_at_start),
            )?;
        } else if self.args.leaves {
            write_leaves(self.out, &s, &tree, self.name, self.args, &payload, d)?;
        } else if self.args.tree {
            crate::branch_tree::draw(self.out, &s, &tree, &payload, self.args.fold, d)?;
        } else if tree.leaf.is_some() || (self.args.leaf.is_none() && self.args.label.is_none()) {
            write_branch(self.out, &s, &tree, &payload, d)?;
        }
        Ok(())
    }
}

/// Reads lines back: from the file by offset, or from the held session bytes.
pub(crate) struct Payload<'a> {
    file: Option<&'a File>,
    mem: &'a [u8],
}

impl Payload<'_> {
    /// The bytes of `len` starting at `offset`, into `buf`.
    fn read(&self, offset: u64, len: u64, buf: &mut Vec<u8>, d: &mut Diags) -> bool {
        buf.clear();
        match self.file {
            None => {
                let (a, b) = (offset as usize, (offset + len) as usize);
                match self.mem.get(a..b) {
                    Some(x) => {
                        buf.extend_from_slice(x);
                        true
                    }
                    None => false,
                }
            }
            Some(f) => {
                buf.resize(len as usize, 0);
                match f.read_exact_at(buf, offset) {
                    Ok(()) => true,
                    Err(e) => {
                        d.report(
                            None,
                            Kind::Io,
                            format!("reading the file again failed (did it shrink?): {e}"),
                        );
                        false
                    }
                }
            }
        }
    }

    /// One line's text without its terminator.
    pub(crate) fn line(&self, n: &Node, buf: &mut Vec<u8>, d: &mut Diags) -> bool {
        if !self.read(n.offset, n.len, buf, d) {
            return false;
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        true
    }
}

/// The branch chosen in a session, and what the tree looks like around it.
pub(crate) struct Tree {
    /// Node index → index of the node its parentId resolves to.
    pub(crate) parent_of: Vec<u32>,
    /// Node index of the leaf, `None` when no branch could be chosen.
    pub(crate) leaf: Option<u32>,
    /// Kept node indexes in output order.
    pub(crate) kept: Vec<u32>,
    pub(crate) on_chain: Vec<bool>,
    /// Whether a node is the entry its id resolves to (not shadowed by a later duplicate).
    pub(crate) live: Vec<bool>,
}

impl Tree {
    fn build(s: &Session, args: &Args, d: &mut Diags) -> Tree {
        let n = s.nodes.len();
        let mut t = Tree {
            parent_of: vec![NONE; n],
            leaf: None,
            kept: Vec::new(),
            on_chain: vec![false; n],
            live: vec![true; n],
        };
        if s.version < 2 {
            // A linear log: everything, in file order, each entry the child of the one before.
            if args.leaf.is_some() || args.label.is_some() {
                d.report(
                    None,
                    Kind::NotFound,
                    format!(
                        "session {}: a v1 session has no ids or labels to start from",
                        s.id
                    ),
                );
                return t;
            }
            t.kept = (0..n as u32).collect();
            t.on_chain = vec![true; n];
            t.parent_of = (0..n as u32)
                .map(|i| i.checked_sub(1).unwrap_or(NONE))
                .collect();
            t.leaf = n.checked_sub(1).map(|i| i as u32);
            return t;
        }
        // The entry each id resolves to: the last one in file order, as in Pi.
        let mut by_id = vec![NONE; s.ids.text.len()];
        for (i, node) in s.nodes.iter().enumerate() {
            if node.id == NONE {
                continue;
            }
            let prev = by_id[node.id as usize];
            if prev != NONE {
                t.live[prev as usize] = false;
                d.report(
                    Some(node.line),
                    Kind::DuplicateId,
                    format!(
                        "duplicate id {:?} (also on line {}); the later entry wins, as in Pi",
                        s.ids.text(node.id),
                        s.nodes[prev as usize].line
                    ),
                );
            }
            by_id[node.id as usize] = i as u32;
        }
        for (i, node) in s.nodes.iter().enumerate() {
            if node.parent < BAD {
                t.parent_of[i] = by_id[node.parent as usize];
            }
        }
        // The leaf.
        let leaf = if let Some(want) = &args.leaf {
            match s
                .ids
                .get(want)
                .map(|k| by_id[k as usize])
                .filter(|&i| i != NONE)
            {
                Some(i) => Some(i),
                None => {
                    d.report(
                        None,
                        Kind::NotFound,
                        format!("session {}: no entry with id {want:?}", s.id),
                    );
                    None
                }
            }
        } else if let Some(want) = &args.label {
            let best = s
                .labels
                .iter()
                .filter(|(_, (l, _))| l == want)
                .max_by_key(|(_, (_, order))| *order)
                .map(|(t, _)| by_id[*t as usize])
                .filter(|&i| i != NONE);
            if best.is_none() {
                d.report(
                    None,
                    Kind::NotFound,
                    format!("session {}: no entry is labelled {want:?}", s.id),
                );
            }
            best
        } else {
            let last_with_id = s.nodes.iter().rposition(|x| x.id != NONE).map(|i| i as u32);
            if let (Some(i), Some(last)) = (last_with_id, s.nodes.last()) {
                if last.id == NONE {
                    d.report(
                        Some(last.line),
                        Kind::IdlessLeaf,
                        format!(
                            "the last entry has no id (Pi would show an empty conversation); the leaf is the last entry with one, line {}",
                            s.nodes[i as usize].line
                        ),
                    );
                }
            }
            last_with_id
        };
        let Some(leaf) = leaf else {
            // No entry has an id: the id-less entries still form the session's content.
            if args.leaf.is_none() && args.label.is_none() {
                t.kept = (0..n as u32)
                    .filter(|&i| s.nodes[i as usize].parent == NONE)
                    .collect();
            }
            return t;
        };
        t.leaf = Some(leaf);
        // Walk up from the leaf.
        let mut chain = Vec::new();
        let mut cur = leaf;
        loop {
            if t.on_chain[cur as usize] {
                let node = &s.nodes[cur as usize];
                d.report(
                    Some(node.line),
                    Kind::Cycle,
                    format!(
                        "parentId cycle: entry {:?} is its own ancestor; the branch stops there (Pi would hang)",
                        s.ids.text(node.id)
                    ),
                );
                break;
            }
            t.on_chain[cur as usize] = true;
            chain.push(cur);
            let node = &s.nodes[cur as usize];
            if node.parent == NONE || node.parent == BAD {
                break;
            }
            let p = t.parent_of[cur as usize];
            if p == NONE {
                let lost = (0..cur as usize).filter(|&i| !t.on_chain[i]).count();
                d.report(
                    Some(node.line),
                    Kind::MissingParent,
                    format!(
                        "parent {:?} of entry {:?} is not in the session; the branch starts here, {lost} earlier {} lost",
                        s.ids.text(node.parent),
                        s.ids.text(node.id),
                        if lost == 1 { "entry is" } else { "entries are" }
                    ),
                );
                break;
            }
            cur = p;
        }
        chain.reverse();
        // Id-less entries stay at their place unless attached to an abandoned branch.
        let idless: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                let node = &s.nodes[i as usize];
                if node.id != NONE {
                    return false;
                }
                match node.parent {
                    NONE => true,
                    BAD => false,
                    _ => {
                        let p = t.parent_of[i as usize];
                        if p == NONE {
                            d.report(
                                Some(node.line),
                                Kind::MissingParent,
                                format!("parent {:?} of an id-less entry is not in the session; kept in place", s.ids.text(node.parent)),
                            );
                            true
                        } else {
                            t.on_chain[p as usize]
                        }
                    }
                }
            })
            .collect();
        let mut next = 0;
        for &c in &chain {
            while next < idless.len() && idless[next] < c {
                t.kept.push(idless[next]);
                next += 1;
            }
            t.kept.push(c);
        }
        t.kept.extend_from_slice(&idless[next..]);
        t
    }

    /// Leaves: live entries with an id that no entry names as its parent.
    fn leaves(&self, s: &Session) -> Vec<u32> {
        if s.version < 2 {
            return s
                .nodes
                .len()
                .checked_sub(1)
                .map(|i| i as u32)
                .into_iter()
                .collect();
        }
        let mut has_child = vec![false; s.nodes.len()];
        for &p in &self.parent_of {
            if p != NONE {
                has_child[p as usize] = true;
            }
        }
        (0..s.nodes.len() as u32)
            .filter(|&i| {
                s.nodes[i as usize].id != NONE && self.live[i as usize] && !has_child[i as usize]
            })
            .collect()
    }

    /// Entries from the root to each node (cycles cut), computed once for all nodes.
    fn depths(&self) -> Vec<u64> {
        const UNKNOWN: u64 = u64::MAX;
        let n = self.parent_of.len();
        let mut depth = vec![UNKNOWN; n];
        let mut stack = Vec::new();
        let mut in_stack = vec![false; n];
        for start in 0..n {
            let mut cur = start as u32;
            while cur != NONE && depth[cur as usize] == UNKNOWN && !in_stack[cur as usize] {
                in_stack[cur as usize] = true;
                stack.push(cur);
                cur = self.parent_of[cur as usize];
            }
            let mut base = if cur == NONE || in_stack[cur as usize] {
                0
            } else {
                depth[cur as usize]
            };
            while let Some(x) = stack.pop() {
                in_stack[x as usize] = false;
                base += 1;
                depth[x as usize] = base;
            }
        }
        depth
    }
}

/// Writes the header and the kept entries, copying contiguous runs of lines in one go.
fn write_branch(
    out: &mut Out,
    s: &Session,
    t: &Tree,
    p: &Payload,
    d: &mut Diags,
) -> Result<(), Stop> {
    let mut buf = Vec::new();
    let emit = |out: &mut Out,
                a: u64,
                b: u64,
                newline: bool,
                buf: &mut Vec<u8>,
                d: &mut Diags|
     -> Result<(), Stop> {
        if b > a && p.read(a, b - a, buf, d) {
            out.raw(buf)?;
            if !newline {
                out.raw(b"\n")?;
            }
        }
        Ok(())
    };
    let mut run: Option<(u64, u64, bool)> = None;
    for node in std::iter::once(&s.header).chain(t.kept.iter().map(|&i| &s.nodes[i as usize])) {
        match run {
            Some((a, b, true)) if b == node.offset => {
                run = Some((a, b + node.len, node.has_newline))
            }
            _ => {
                if let Some((a, b, nl)) = run {
                    emit(out, a, b, nl, &mut buf, d)?;
                }
                run = Some((node.offset, node.offset + node.len, node.has_newline));
            }
        }
        // Keep runs to a bounded size so memory stays small on huge files.
        if let Some((a, b, nl)) = run {
            if b - a >= 1 << 20 {
                emit(out, a, b, nl, &mut buf, d)?;
                run = None;
            }
        }
    }
    if let Some((a, b, nl)) = run {
        emit(out, a, b, nl, &mut buf, d)?;
    }
    Ok(())
}

fn write_info(
    out: &mut Out,
    s: &Session,
    t: &Tree,
    name: &str,
    counts: Counts,
) -> Result<(), Stop> {
    let leaf = t.leaf.map(|i| &s.nodes[i as usize]);
    let entries = s.nodes.len() as u64;
    let kept = t.kept.len() as u64;
    out.record("branch_info")
        .str("session", &s.id)
        .str("file", name)
        .u64("version", s.version)
        .opt_str(
            "leaf",
            leaf.and_then(|n| (n.id < BAD).then(|| s.ids.text(n.id))),
        )
        .opt_u64("leaf_line", leaf.map(|n| n.line))
        .u64("entries", entries)
        .u64("kept", kept)
        .u64("omitted", entries - kept)
        .u64("leaves", t.leaves(s).len() as u64)
        .obj("diagnostics", |o| {
            for (k, n) in counts.iter() {
                o.u64(k, n);
            }
        })
        .end();
    out.end_line()
}

fn write_leaves(
    out: &mut Out,
    s: &Session,
    t: &Tree,
    name: &str,
    args: &Args,
    p: &Payload,
    d: &mut Diags,
) -> Result<(), Stop> {
    let depths = t.depths();
    let mut buf = Vec::new();
    for leaf in t.leaves(s) {
        let node = &s.nodes[leaf as usize];
        let timestamp = if p.line(node, &mut buf, d) {
            json::get(&buf, "timestamp")
                .and_then(json::as_str)
                .map(|c| c.into_owned())
        } else {
            None
        };
        let kind = json::get(&buf, "type")
            .and_then(json::as_str)
            .map(|c| c.into_owned());
        let preview = if args.preview {
            last_user_text(s, t, leaf, p, d, args.preview_chars)
        } else {
            None
        };
        let label = (node.id < BAD)
            .then(|| s.labels.get(&node.id))
            .flatten()
            .map(|(l, _)| l.as_str());
        let mut rec = out.record("leaf");
        rec.str("session", &s.id)
            .str("file", name)
            .opt_str("entry", (node.id < BAD).then(|| s.ids.text(node.id)))
            .u64("line", node.line)
            .opt_str("entry_type", kind.as_deref())
            .u64("depth", depths[leaf as usize])
            .opt_str("timestamp", timestamp.as_deref())
            .opt_str("label", label)
            .bool("active", t.leaf == Some(leaf));
        if args.preview {
            rec.opt_str("preview", preview.as_deref());
        }
        rec.end();
        out.end_line()?;
    }
    Ok(())
}

/// The text of the nearest user message at or above `from`, cut to `max` characters.
fn last_user_text(
    s: &Session,
    t: &Tree,
    from: u32,
    p: &Payload,
    d: &mut Diags,
    max: usize,
) -> Option<String> {
    let mut buf = Vec::new();
    let mut cur = from;
    let mut steps = 0;
    while cur != NONE && steps <= s.nodes.len() {
        steps += 1;
        let node = &s.nodes[cur as usize];
        if p.line(node, &mut buf, d) {
            if let Some(text) = crate::model::user_text(&buf) {
                return Some(crate::model::truncate_chars(&text, max));
            }
        }
        cur = t.parent_of[cur as usize];
    }
    None
}
