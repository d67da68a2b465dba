//! pi-branch: keep the active branch of each session.
//!
//! Pi's rule when it loads a file: the leaf is the last entry in file order; the conversation
//! is the `parentId` chain from that leaf back to the root. pi-branch writes the header and
//! that chain, root to leaf, each line copied byte for byte, so its output is itself a linear
//! session that Pi loads to the same conversation.
//!
//! Memory: per entry a 24-byte packed entry (offset, length, line, interned id and parent) and
//! about 16 bytes of interned id; the payload of a file is read again by offset (or sliced from
//! its map) at the end of each session, never held. From stdin the session's bytes are held,
//! since they cannot be read twice.
//!
//! The modules, in the order the data goes through them: `args` (the command line and man
//! page), `entries` (what is kept of each entry while a session is read, with its ids
//! interned by `ids`), `resolve` (the tree resolved, the leaf chosen, the kept entries),
//! `leaves` (leaves and depths), `store` (the lines read again), then `write` (the kept
//! lines, or the `records` `branch_info` and `leaf`), `tree` (`--tree`, drawn for a
//! person) or `outline` (the active branch for a person, the default on a terminal). This file wires them: the tool, the opening of inputs, and the visitor the reader
//! calls.

mod args;
mod entries;
mod ids;
mod leaves;
mod outline;
mod records;
mod resolve;
mod store;
mod tree;
mod write;

pub use args::{Args, MAN};
pub use records::{BranchInfo, Leaf};

use crate::cli::ManPage;
use crate::diag::Diags;
use crate::input::mapped::Map;
use crate::input::open::read_contents;
use crate::input::{self, Contents, Opened, Source};
use crate::output::{Out, Stop};
use crate::reader::{self, Entry, Header, PerSession, SessionVisitor};
use crate::record::{describe, Described};
use crate::tool::Tool;
use clap::Parser;
use entries::EntryTable;
use resolve::ResolvedTree;
use std::fs::File;
use std::process::ExitCode;
use store::LineStore;

/// The records pi-branch writes (docs/FORMAT.md describes each).
pub const RECORDS: &[Described] = &[describe::<BranchInfo>(), describe::<Leaf>()];

/// branch: the tool.
pub struct Branch;

impl Tool for Branch {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        // Never the lines on a terminal unless asked for: the outline instead.
        let records = args.info || args.leaves || args.tree;
        let outline = args.outline || (!records && crate::view::chosen(false, args.json));
        input::run(
            "pi-branch",
            &sources,
            args.inputs.threads(),
            |src, out, d| branch_source(args, outline, src, out, d),
            |_, _| Ok(()),
        )
    }

    /// Runs pi-branch over `input` as if it came on stdin (for property tests, fuzzing and the
    /// benchmarks; the binary goes through [`run`]). The outline only with --outline.
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let mut v = PerSession::new(Brancher {
            args,
            out,
            file: None,
            map: None,
            whole: None,
            name: "<stdin>",
            outline: args.outline,
        });
        reader::read(input, false, d, &mut v)?;
        Ok(())
    }
}

fn branch_source(
    args: &Args,
    outline: bool,
    src: &Source,
    out: &mut Out,
    d: &mut Diags,
) -> Result<(), Stop> {
    let Some(input) = Opened::open(src, d) else {
        return Ok(());
    };
    let name = src.name();
    input.contents(|c| {
        // Kept lines are copied from the map or the whole-read bytes when there are some,
        // else read again from the regular file; from stdin or a FIFO, which cannot be read
        // twice, the sessions' bytes are held.
        let (map, whole) = match &c {
            Contents::Mapped(m) => (Some(*m), None),
            Contents::Whole(b, _) => (None, Some(*b)),
            Contents::Stream(_) => (None, None),
        };
        let mut v = PerSession::new(Brancher {
            args,
            out,
            file: input.file(),
            map,
            whole,
            name: &name,
            outline,
        });
        read_contents(c, input.is_named(), d, &mut v).map(|_| ())
    })
}

/// Runs pi-branch over the file at `path` (mapped when large) and returns what it writes
/// (for the benchmarks).
#[doc(hidden)]
pub fn branch_file(args: &Args, path: &std::path::Path, d: &mut Diags) -> Result<Vec<u8>, Stop> {
    let mut out = Out::held();
    branch_source(args, false, &Source::Path(path.to_path_buf()), &mut out, d)?;
    Ok(out.buf)
}

/// One leaf of a session and the branch that ends in it ([`every_branch`]): its entries as
/// indexes in the session, how many of them it shares with the active branch, and their lines
/// written on demand, so that a caller reads only the part it shows.
pub struct LeafBranch<'a> {
    pub session: &'a str,
    /// The session's place in the input (0 for the first), which tells apart two sessions that
    /// have the same id.
    pub session_no: usize,
    pub leaf: String,
    /// The leaf Pi would load (pi-branch's default).
    pub active: bool,
    /// The entries of the branch, in the order `pi-branch --leaf ID` writes them, each as its
    /// index in the session (the same entry has the same index in every branch).
    pub entries: &'a [u32],
    /// How many of `entries`, from the first, run to the last one whose id the active branch
    /// has too (its fork point; 0 when it shares none). For the active leaf: to its last
    /// entry with an id.
    pub shared: usize,
    table: &'a EntryTable,
    store: &'a LineStore<'a>,
}

impl LeafBranch<'_> {
    /// The id of the entry `entry` (an index in the session), if it has one.
    pub fn id(&self, entry: u32) -> Option<String> {
        let id = self.table.entries.get(entry as usize)?.id;
        (id < entries::BAD).then(|| self.table.ids.text(id).into_owned())
    }

    /// What pi-branch writes of this session's lead (oh-my-pi's title slot and the header;
    /// nothing for a fragment) when `lead`, then of the entries `entries` (indexes in the
    /// session), in that order: each line byte for byte, newline-ended.
    pub fn write(&self, lead: bool, entries: &[u32]) -> Vec<u8> {
        let mut out = Out::held();
        let mut d = Diags::quiet("pi-branch", "");
        let lead = if lead { &self.table.lead[..] } else { &[] };
        let _ = write::write_entries(&mut out, self.table, lead, entries, self.store, &mut d);
        out.buf
    }
}

/// Hands `each` every leaf of every session in `input` with its branch, in the order
/// `--leaves` lists them, from one reading: each session's tree is resolved once, each other
/// leaf's branch from it ([`ResolvedTree::with_leaf`]), and no line is written unless the
/// caller asks ([`LeafBranch::write`]). Diagnostics are counted only.
pub fn every_branch(input: &[u8], each: &mut dyn FnMut(&LeafBranch)) {
    struct Every<'a, 'f> {
        input: &'a [u8],
        args: Args,
        each: &'f mut dyn FnMut(&LeafBranch),
        sessions: usize,
    }
    impl SessionVisitor for Every<'_, '_> {
        type Session = EntryTable;
        fn reads_messages(&self) -> bool {
            false
        }
        fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<EntryTable, Stop> {
            Ok(EntryTable::new(h, false, d))
        }
        fn entry(&mut self, s: &mut EntryTable, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
            s.add(e, d);
            Ok(())
        }
        fn end(&mut self, mut s: EntryTable, d: &mut Diags) -> Result<(), Stop> {
            s.ids.release_table();
            let session_no = self.sessions;
            self.sessions += 1;
            let store = LineStore::new(None, None, Some(self.input), &s);
            let tree = ResolvedTree::build(&s, &self.args, d);
            // The ids on the active branch, by interned id.
            let mut on_active = vec![false; s.ids.len()];
            for &i in &tree.kept {
                let id = s.entries[i as usize].id;
                if id < entries::BAD {
                    on_active[id as usize] = true;
                }
            }
            for leaf in tree.leaves(&s) {
                let entry = &s.entries[leaf as usize];
                if entry.id >= entries::BAD {
                    continue;
                }
                let active = Some(leaf) == tree.leaf;
                // The active leaf's branch is the one resolved; another's, from the same ids.
                let other = (!active).then(|| tree.with_leaf(&s, leaf, d));
                let kept = &other.as_ref().unwrap_or(&tree).kept;
                let shared = kept
                    .iter()
                    .rposition(|&i| {
                        let id = s.entries[i as usize].id;
                        id < entries::BAD && on_active[id as usize]
                    })
                    .map_or(0, |i| i + 1);
                (self.each)(&LeafBranch {
                    session: &s.id,
                    session_no,
                    leaf: s.ids.text(entry.id).into_owned(),
                    active,
                    entries: kept,
                    shared,
                    table: &s,
                    store: &store,
                });
            }
            Ok(())
        }
    }
    let mut v = PerSession::new(Every {
        input,
        args: Args::parse_from(["pi-branch"]),
        each,
        sessions: 0,
    });
    let mut d = Diags::quiet("pi-branch", "");
    let _ = reader::read_slice(input, false, &mut d, &mut v);
}

/// The reader's visitor: keeps each session's entries as they come, and at its end resolves
/// the tree and writes what the arguments ask for.
struct Brancher<'a, 'w> {
    args: &'a Args,
    out: &'a mut Out<'w>,
    file: Option<&'a File>,
    map: Option<&'a Map>,
    whole: Option<&'a [u8]>,
    name: &'a str,
    /// The active branch is drawn as an outline instead of written as lines.
    outline: bool,
}

impl SessionVisitor for Brancher<'_, '_> {
    type Session = EntryTable;

    fn reads_messages(&self) -> bool {
        false
    }

    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<EntryTable, Stop> {
        // Without a file to read again (stdin, a FIFO) the session's bytes are held.
        Ok(EntryTable::new(h, self.file.is_none(), d))
    }

    fn entry(&mut self, s: &mut EntryTable, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        s.add(e, d);
        Ok(())
    }

    fn end(&mut self, mut s: EntryTable, d: &mut Diags) -> Result<(), Stop> {
        s.ids.release_table();
        let lines = LineStore::new(self.file, self.map, self.whole, &s);
        let tree = ResolvedTree::build(&s, self.args, d);
        if self.args.info {
            write::write_info(
                self.out,
                &s,
                &tree,
                self.name,
                d.counts().since(&s.counts_at_start),
            )?;
        } else if self.args.leaves {
            write::write_leaves(self.out, &s, &tree, self.name, self.args, &lines, d)?;
        } else if self.args.tree {
            tree::draw(self.out, &s, &tree, &lines, self.args.fold, d)?;
        } else if self.outline {
            outline::draw(self.out, &s, &tree, &lines, d)?;
        } else if tree.leaf.is_some() || (self.args.leaf.is_none() && self.args.label.is_none()) {
            write::write_branch(self.out, &s, &tree, &lines, d)?;
        }
        Ok(())
    }
}
