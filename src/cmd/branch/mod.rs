//! pi-branch: keep the active branch of each session.
//!
//! Pi's rule when it loads a file: the leaf is the last entry in file order; the conversation
//! is the `parentId` chain from that leaf back to the root. pi-branch writes the header and
//! that chain, root to leaf, each line copied byte for byte, so its output is itself a linear
//! session that Pi loads to the same conversation.
//!
//! Memory: per entry a 24-byte node (offset, length, line, interned id and parent) and about
//! 16 bytes of interned id; the payload of a file is read again by offset (or sliced from its
//! map) at the end of each session, never held. From stdin the session's bytes are held, since
//! they cannot be read twice.

mod tree;

use crate::cli::{Inputs, ManPage};
use crate::diag::{Counts, Diags, Kind};
use crate::input::{self, Source};
use crate::json;
use crate::mapped::Map;
use crate::output::{Out, Stop};
use crate::reader::{self, Entry, Header, Visitor};
use crate::tool::Tool;
use clap::Parser;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom};
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
Given FILE arguments, pi-branch keeps per entry only its offset, length, line and ids (about 50 bytes an entry), and reads the kept lines again at the end; files of 1 MiB or more are memory-mapped rather than read, with the pages already scanned handed back as it goes, so memory stays small (a file truncated by another process while pi-branch maps it can end the run with SIGBUS; Pi only appends); smaller files are read whole. From stdin, or a FILE that is not a regular file (a FIFO, <(...)), it holds one session at a time.",
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

/// branch: the tool.
pub struct Branch;

impl Tool for Branch {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        input::run(
            "pi-branch",
            &sources,
            args.inputs.threads(),
            |src, out, d| branch_source(args, src, out, d),
            |_, _| Ok(()),
        )
    }

    /// Runs pi-branch over `input` as if it came on stdin (for property tests, fuzzing and the
    /// benchmarks; the binary goes through [`run`]).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let mut v = Brancher {
            args,
            out,
            file: None,
            map: None,
            whole: None,
            name: "<stdin>",
            s: None,
        };
        reader::read(input, false, d, &mut v)?;
        Ok(())
    }
}

fn branch_source(args: &Args, src: &Source, out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
    let file = match src {
        Source::Stdin => None,
        Source::Path(p) => match File::open(p) {
            Ok(f) => Some(f),
            Err(e) => {
                d.report(None, Kind::Io, format!("cannot open: {e}"));
                return Ok(());
            }
        },
    };
    let name = src.name();
    let map = file.as_ref().and_then(Map::new);
    if let (None, Some(f)) = (&map, &file) {
        // A small regular file is read whole into this thread's reused buffer: one copy
        // instead of a streamed read plus a pread of every kept line.
        let small = f
            .metadata()
            .is_ok_and(|m| m.is_file() && m.len() < crate::mapped::MIN_LEN);
        if small {
            let done = reader::with_whole(f, |buf, failed| {
                if failed.is_some() {
                    return None;
                }
                let mut v = Brancher {
                    args,
                    out: &mut *out,
                    file: file.as_ref(),
                    map: None,
                    whole: Some(buf),
                    name: &name,
                    s: None,
                };
                Some(reader::read_slice(buf, true, d, &mut v).map(|_| ()))
            });
            match done.flatten() {
                Some(r) => return r,
                // A read error (or the buffer busy): start again streaming, which reports
                // the error where it happens.
                None => {
                    let mut r: &File = f;
                    let _ = r.seek(SeekFrom::Start(0));
                }
            }
        }
    }
    // A FIFO or `<(...)` cannot be read twice: its sessions are held as from stdin.
    let regular = file
        .as_ref()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()));
    let mut v = Brancher {
        args,
        out,
        file: regular,
        map: map.as_ref(),
        whole: None,
        name: &name,
        s: None,
    };
    match (&map, &file) {
        (Some(m), _) => reader::read_mapped(m, true, d, &mut v)?,
        (None, Some(f)) => reader::read(f, true, d, &mut v)?,
        (None, None) => reader::read(std::io::stdin().lock(), false, d, &mut v)?,
    };
    Ok(())
}

/// Runs pi-branch over the file at `path` (mapped when large) and returns what it writes
/// (for the benchmarks).
#[doc(hidden)]
pub fn branch_file(args: &Args, path: &std::path::Path, d: &mut Diags) -> Result<Vec<u8>, Stop> {
    let mut out = Out::held();
    branch_source(args, &Source::Path(path.to_path_buf()), &mut out, d)?;
    Ok(out.buf)
}

pub(crate) const NONE: u32 = u32::MAX;
/// A parentId that is neither a string nor null.
pub(crate) const BAD: u32 = u32::MAX - 1;

/// Offsets and line numbers are kept in 48 bits (256 TiB, 2^48 lines), which lets a node fit
/// in 24 bytes: memory per entry is what limits pi-branch on large files.
const POS_BITS: u32 = 48;
const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// `Node::len_nl` bit 31: the line had a terminator.
const NEWLINE: u32 = 1 << 31;
/// A length that does not fit in 31 bits; the real one is in `Session::long_lens`.
const LONG: u32 = NEWLINE - 1;

/// One entry (or the header) of a session, in 24 bytes.
#[derive(Clone, Copy)]
pub(crate) struct Node {
    /// The line's offset (low 48 bits: in the file, or in `Session::mem` for stdin) and bits
    /// 32..48 of its line number (high 16 bits).
    pos: u64,
    line_lo: u32,
    /// Length with the line terminator (low 31 bits, or `LONG`), and `NEWLINE`.
    len_nl: u32,
    pub(crate) id: u32,
    pub(crate) parent: u32,
}

impl Node {
    /// `None` when the offset or line number is beyond 48 bits.
    fn new(offset: u64, line: u64, len: u64, has_newline: bool) -> Option<Node> {
        if offset > POS_MASK || line > POS_MASK {
            return None;
        }
        let len = if len >= u64::from(LONG) {
            LONG
        } else {
            len as u32
        };
        Some(Node {
            pos: offset | (line >> 32) << POS_BITS,
            line_lo: line as u32,
            len_nl: len | if has_newline { NEWLINE } else { 0 },
            id: NONE,
            parent: NONE,
        })
    }
    pub(crate) fn offset(&self) -> u64 {
        self.pos & POS_MASK
    }
    pub(crate) fn line(&self) -> u64 {
        (self.pos >> POS_BITS) << 32 | u64::from(self.line_lo)
    }
    pub(crate) fn has_newline(&self) -> bool {
        self.len_nl & NEWLINE != 0
    }
}

/// Ids interned to small numbers, in about 16 bytes per id: Pi's usual 8-hex-digit ids are
/// packed into the key itself, other ids go to one arena; the hash table holds only indexes.
#[derive(Default)]
pub(crate) struct Ids {
    /// Per id: `HEX | value` for an id of 8 lowercase hex digits, else the arena offset of
    /// its text (a u32 little-endian length, then the bytes).
    keys: Vec<u64>,
    arena: Vec<u8>,
    /// Open addressing, linear probing: key index + 1, 0 when empty; a power of two long.
    /// Dropped by [`Ids::release_table`] once a session is read.
    slots: Vec<u32>,
}

const HEX: u64 = 1 << 63;
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The value of a lowercase hex digit, 0xFF for any other byte.
const HEX_DIGIT: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut c = 0;
    while c < 10 {
        t[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        t[b'a' as usize + c] = 10 + c as u8;
        c += 1;
    }
    t
};

fn pack_hex(b: &[u8]) -> Option<u64> {
    if b.len() != 8 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = HEX_DIGIT[c as usize];
        if d > 15 {
            return None;
        }
        v = v << 4 | u64::from(d);
    }
    Some(HEX | v)
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(MIX);
    }
    for &c in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(c)).wrapping_mul(MIX);
    }
    h
}

impl Ids {
    fn text_bytes(&self, key: u64) -> &[u8] {
        let at = key as usize;
        let len = u32::from_le_bytes(self.arena[at..at + 4].try_into().expect("4 bytes"));
        &self.arena[at + 4..at + 4 + len as usize]
    }

    fn hash_key(&self, key: u64) -> u64 {
        if key & HEX != 0 {
            key.wrapping_mul(MIX)
        } else {
            hash_bytes(self.text_bytes(key))
        }
    }

    /// The slot where `b` (packed as `hex` when it is a hex id) is, or would go.
    fn probe(&self, b: &[u8], hex: Option<u64>) -> usize {
        let h = match hex {
            Some(k) => k.wrapping_mul(MIX),
            None => hash_bytes(b),
        };
        let mask = self.slots.len() - 1;
        let mut i = (h >> 32) as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return i;
            }
            let key = self.keys[slot as usize - 1];
            let same = match hex {
                Some(k) => key == k,
                None => key & HEX == 0 && self.text_bytes(key) == b,
            };
            if same {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(64);
        let mut slots = vec![0u32; n];
        for (k, &key) in self.keys.iter().enumerate() {
            let mut i = (self.hash_key(key) >> 32) as usize & (n - 1);
            while slots[i] != 0 {
                i = (i + 1) & (n - 1);
            }
            slots[i] = k as u32 + 1;
        }
        self.slots = slots;
    }

    fn intern(&mut self, s: &str) -> u32 {
        let b = s.as_bytes();
        let hex = pack_hex(b);
        // At most 3/4 full.
        if (self.keys.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let i = self.probe(b, hex);
        if self.slots[i] != 0 {
            return self.slots[i] - 1;
        }
        let k = self.keys.len() as u32;
        let key = match hex {
            Some(key) => key,
            None => {
                let at = self.arena.len() as u64;
                self.arena
                    .extend_from_slice(&(b.len() as u32).to_le_bytes());
                self.arena.extend_from_slice(b);
                at
            }
        };
        self.keys.push(key);
        self.slots[i] = k + 1;
        k
    }

    fn get(&self, s: &str) -> Option<u32> {
        let b = s.as_bytes();
        let hex = pack_hex(b);
        if self.slots.is_empty() {
            // The table is gone: one linear search (only --leaf asks, once a session).
            return self
                .keys
                .iter()
                .position(|&key| match hex {
                    Some(k) => key == k,
                    None => key & HEX == 0 && self.text_bytes(key) == b,
                })
                .map(|k| k as u32);
        }
        let i = self.probe(b, hex);
        (self.slots[i] != 0).then(|| self.slots[i] - 1)
    }

    /// Frees the hash table (lookups then search linearly): the tree is built without it.
    fn release_table(&mut self) {
        self.slots = Vec::new();
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(crate) fn text(&self, k: u32) -> Cow<'_, str> {
        let key = self.keys[k as usize];
        if key & HEX != 0 {
            Cow::Owned(format!("{:08x}", key & 0xffff_ffff))
        } else {
            // Interned from a `&str`, so valid UTF-8.
            String::from_utf8_lossy(self.text_bytes(key))
        }
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
    /// Lengths of lines of 2 GiB or more, by offset.
    long_lens: HashMap<u64, u64>,
    /// The session's bytes, when reading stdin.
    mem: Vec<u8>,
    counts_at_start: Counts,
}

struct Brancher<'a, 'w> {
    args: &'a Args,
    out: &'a mut Out<'w>,
    file: Option<&'a File>,
    map: Option<&'a Map>,
    whole: Option<&'a [u8]>,
    name: &'a str,
    s: Option<Session>,
}

impl Brancher<'_, '_> {
    fn node(&mut self, line: &crate::lines::Line<'_>, d: &mut Diags) -> Option<Node> {
        let s = self.s.as_mut().expect("in a session");
        let mut offset = line.offset;
        if self.file.is_none() {
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
        let Some(n) = Node::new(offset, line.no, line.len_with_eol, line.has_newline) else {
            d.report(
                Some(line.no),
                Kind::Io,
                "beyond 256 TiB or 2^48 lines, which pi-branch cannot track; entry skipped",
            );
            return None;
        };
        if line.len_with_eol >= u64::from(LONG) {
            s.long_lens.insert(offset, line.len_with_eol);
        }
        Some(n)
    }
}

impl Visitor for Brancher<'_, '_> {
    fn reads_messages(&self) -> bool {
        false
    }

    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.s = Some(Session {
            id: h.id.clone(),
            version: h.version,
            header: Node::new(0, 0, 0, true).expect("small numbers"),
            nodes: Vec::new(),
            ids: Ids::default(),
            labels: HashMap::new(),
            long_lens: HashMap::new(),
            mem: Vec::new(),
            counts_at_start: d.counts(),
        });
        if let Some(n) = self.node(&h.line, d) {
            self.s.as_mut().expect("just set").header = n;
        }
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let Some(mut n) = self.node(&e.line, d) else {
            return Ok(());
        };
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
        let Some(mut s) = self.s.take() else {
            return Ok(());
        };
        s.ids.release_table();
        let payload = Payload {
            file: self.file,
            map: self.map,
            whole: self.whole,
            mem: &s.mem,
            long_lens: &s.long_lens,
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
            tree::draw(self.out, &s, &tree, &payload, self.args.fold, d)?;
        } else if tree.leaf.is_some() || (self.args.leaf.is_none() && self.args.label.is_none()) {
            write_branch(self.out, &s, &tree, &payload, d)?;
        }
        Ok(())
    }
}

/// Reads lines back: from the file by offset, or from the held session bytes.
pub(crate) struct Payload<'a> {
    file: Option<&'a File>,
    /// The file's map, when it is mapped: lines are sliced from it, not read.
    map: Option<&'a Map>,
    /// The whole file, when it was small enough to be read at once: sliced too.
    whole: Option<&'a [u8]>,
    mem: &'a [u8],
    long_lens: &'a HashMap<u64, u64>,
}

impl Payload<'_> {
    /// A node's length with its line terminator.
    pub(crate) fn len(&self, n: &Node) -> u64 {
        match n.len_nl & !NEWLINE {
            LONG => self
                .long_lens
                .get(&n.offset())
                .copied()
                .unwrap_or(u64::from(LONG)),
            len => u64::from(len),
        }
    }

    /// The `len` bytes at `offset`: a slice of the held session bytes, or read from the file
    /// into `buf`. `buf` only ever grows, so a reused buffer is not zeroed again before each
    /// read (that used to cost as much as the read itself).
    fn read<'b>(
        &'b self,
        offset: u64,
        len: u64,
        buf: &'b mut Vec<u8>,
        d: &mut Diags,
    ) -> Option<&'b [u8]> {
        let n = usize::try_from(len).ok()?;
        if let Some(bytes) = self.map.map(Map::bytes).or(self.whole) {
            let a = usize::try_from(offset).ok()?;
            return bytes.get(a..a.checked_add(n)?);
        }
        match self.file {
            None => {
                let a = usize::try_from(offset).ok()?;
                self.mem.get(a..a.checked_add(n)?)
            }
            Some(f) => {
                if buf.len() < n {
                    buf.resize(n, 0);
                }
                match f.read_exact_at(&mut buf[..n], offset) {
                    Ok(()) => Some(&buf[..n]),
                    Err(e) => {
                        d.report(
                            None,
                            Kind::Io,
                            format!("reading the file again failed (did it shrink?): {e}"),
                        );
                        None
                    }
                }
            }
        }
    }

    /// Done with the bytes `[a, b)`: a mapped file's pages there may leave memory.
    fn release(&self, a: u64, b: u64) {
        if let (Some(m), Ok(a), Ok(b)) = (self.map, usize::try_from(a), usize::try_from(b)) {
            m.release(a, b);
        }
    }

    /// One line's text without its terminator, into `buf`.
    pub(crate) fn line(&self, n: &Node, buf: &mut Vec<u8>, d: &mut Diags) -> bool {
        let mut tmp = std::mem::take(buf);
        let sliced = self.file.is_none() || self.map.is_some() || self.whole.is_some();
        let len = match self.read(n.offset(), self.len(n), &mut tmp, d) {
            Some(x) if sliced => {
                buf.clear();
                buf.extend_from_slice(x);
                buf.len()
            }
            Some(x) => x.len(),
            None => {
                *buf = tmp;
                buf.clear();
                return false;
            }
        };
        if !sliced {
            *buf = tmp;
            buf.truncate(len);
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
        let mut by_id = vec![NONE; s.ids.len()];
        for (i, node) in s.nodes.iter().enumerate() {
            if node.id == NONE {
                continue;
            }
            let prev = by_id[node.id as usize];
            if prev != NONE {
                t.live[prev as usize] = false;
                d.report(
                    Some(node.line()),
                    Kind::DuplicateId,
                    format!(
                        "duplicate id {:?} (also on line {}); the later entry wins, as in Pi",
                        s.ids.text(node.id),
                        s.nodes[prev as usize].line()
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
                        Some(last.line()),
                        Kind::IdlessLeaf,
                        format!(
                            "the last entry has no id (Pi would show an empty conversation); the leaf is the last entry with one, line {}",
                            s.nodes[i as usize].line()
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
                    Some(node.line()),
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
                    Some(node.line()),
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
                                Some(node.line()),
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
    let released = std::cell::Cell::new(0u64);
    let emit = |out: &mut Out,
                a: u64,
                b: u64,
                newline: bool,
                buf: &mut Vec<u8>,
                d: &mut Diags|
     -> Result<(), Stop> {
        if let Some(bytes) = (b > a).then(|| p.read(a, b - a, buf, d)).flatten() {
            out.raw(bytes)?;
            if !newline {
                out.raw(b"\n")?;
            }
            // Output runs are in file order: hand back every whole page below this run's
            // end (runs are often shorter than a page, so releasing just the run would not).
            let to = b / 4096 * 4096;
            if to > released.get() {
                p.release(released.get(), to);
                released.set(to);
            }
        }
        Ok(())
    };
    let mut run: Option<(u64, u64, bool)> = None;
    for node in std::iter::once(&s.header).chain(t.kept.iter().map(|&i| &s.nodes[i as usize])) {
        match run {
            Some((a, b, true)) if b == node.offset() => {
                run = Some((a, b + p.len(node), node.has_newline()))
            }
            _ => {
                if let Some((a, b, nl)) = run {
                    emit(out, a, b, nl, &mut buf, d)?;
                }
                run = Some((
                    node.offset(),
                    node.offset() + p.len(node),
                    node.has_newline(),
                ));
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
            leaf.and_then(|n| (n.id < BAD).then(|| s.ids.text(n.id)))
                .as_deref(),
        )
        .opt_u64("leaf_line", leaf.map(|n| n.line()))
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
            .opt_str(
                "entry",
                (node.id < BAD).then(|| s.ids.text(node.id)).as_deref(),
            )
            .u64("line", node.line())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_intern_hex_and_other_ids_to_the_same_numbers_and_text() {
        let mut ids = Ids::default();
        let texts: Vec<String> = (0..5000u32)
            .map(|i| match i % 4 {
                0 => format!("{:08x}", i.wrapping_mul(2_654_435_761)),
                1 => format!("{:08X}", i), // upper case: not packed, kept as text
                2 => format!("uuid-{i}-ü"),
                _ => format!("{:07x}", i), // 7 digits: not packed
            })
            .collect();
        let ks: Vec<u32> = texts.iter().map(|t| ids.intern(t)).collect();
        for (t, &k) in texts.iter().zip(&ks) {
            assert_eq!(ids.intern(t), k, "{t}");
            assert_eq!(ids.get(t), Some(k));
            assert_eq!(ids.text(k), t.as_str());
        }
        assert_eq!(ids.len(), texts.len());
        assert_eq!(ids.get("nope"), None);
        ids.release_table();
        for (t, &k) in texts.iter().zip(&ks).step_by(97) {
            assert_eq!(
                ids.get(t),
                Some(k),
                "linear search after the table is freed"
            );
        }
        assert_eq!(ids.get("0000000g"), None);
    }

    #[test]
    fn nodes_pack_into_24_bytes_and_give_their_numbers_back() {
        assert_eq!(std::mem::size_of::<Node>(), 24);
        let big_line = (7u64 << 32) + 5;
        let n = Node::new(POS_MASK, big_line, 12, false).unwrap();
        assert_eq!(
            (n.offset(), n.line(), n.has_newline()),
            (POS_MASK, big_line, false)
        );
        let n = Node::new(3, 1, u64::from(LONG) + 9, true).unwrap();
        assert!(n.has_newline());
        let mut long = HashMap::new();
        long.insert(3, u64::from(LONG) + 9);
        let p = Payload {
            file: None,
            map: None,
            whole: None,
            mem: &[],
            long_lens: &long,
        };
        assert_eq!(p.len(&n), u64::from(LONG) + 9);
        assert!(Node::new(POS_MASK + 1, 1, 1, true).is_none());
    }
}
