//! What pi-branch writes for a session: its kept lines, copied byte for byte, or its
//! `branch_info` or `leaf` records.

use super::args::Args;
use super::entries::{EntryTable, PackedEntry, BAD, NONE};
use super::records::{BranchInfo, Leaf};
use super::resolve::ResolvedTree;
use super::store::LineStore;
use crate::diag::{Counts, Diags};
use crate::json::{self, Raw};
use crate::output::{Out, Stop};
use crate::record::Record;

/// Writes the header (after oh-my-pi's title slot; none for a fragment) and the kept entries, copying contiguous runs of lines in one go.
pub(crate) fn write_branch(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    p: &LineStore,
    d: &mut Diags,
) -> Result<(), Stop> {
    write_entries(out, s, &s.lead, &t.kept, p, d)
}

/// Writes the `lead` lines (oh-my-pi's title slot and the header, or none) then the entries
/// `kept` (indexes in `s`), each line byte for byte and newline-ended, contiguous runs of
/// lines copied in one go.
pub(crate) fn write_entries(
    out: &mut Out,
    s: &EntryTable,
    lead: &[PackedEntry],
    kept: &[u32],
    p: &LineStore,
    d: &mut Diags,
) -> Result<(), Stop> {
    // The lines are read again at no cost at the input's turn: a long output waits for it
    // rather than being held.
    let len = lead
        .iter()
        .chain(kept.iter().map(|&i| &s.entries[i as usize]))
        .map(|n| p.len(n) + u64::from(!n.has_newline()))
        .sum();
    out.wait_turn_before(len)?;
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
    for node in lead
        .iter()
        .chain(kept.iter().map(|&i| &s.entries[i as usize]))
    {
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

/// One `branch_info` record for the session.
pub(crate) fn write_info(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    name: &str,
    counts: Counts,
) -> Result<(), Stop> {
    let leaf = t.leaf.map(|i| &s.entries[i as usize]);
    let entries = s.entries.len() as u64;
    let kept = t.kept.len() as u64;
    BranchInfo {
        session: &s.id,
        file: name,
        version: s.version,
        leaf: leaf.and_then(|n| (n.id < BAD).then(|| s.ids.text(n.id))),
        leaf_line: leaf.map(|n| n.line()),
        entries,
        kept,
        omitted: entries - kept,
        leaves: t.leaves(s).len() as u64,
        diagnostics: counts,
    }
    .write(out)
}

/// One `leaf` record per leaf of the session's tree, in file order.
pub(crate) fn write_leaves(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    name: &str,
    args: &Args,
    p: &LineStore,
    d: &mut Diags,
) -> Result<(), Stop> {
    let depths = t.depths();
    let mut buf = Vec::new();
    for leaf in t.leaves(s) {
        let entry = &s.entries[leaf as usize];
        let read = p.line(entry, &mut buf, d);
        // The line as read again from the file, validated before its members are read.
        let object = json::value_at(&buf, 0).ok();
        let preview = args
            .preview
            .then(|| last_user_text(s, t, leaf, p, d, args.preview_chars));
        Leaf {
            session: &s.id,
            file: name,
            entry: (entry.id < BAD).then(|| s.ids.text(entry.id)),
            line: entry.line(),
            entry_type: object.and_then(|o| o.get("type")).and_then(Raw::as_str),
            depth: depths[leaf as usize],
            timestamp: if read {
                object
                    .and_then(|o| o.get("timestamp"))
                    .and_then(Raw::as_str)
            } else {
                None
            },
            label: (entry.id < BAD)
                .then(|| s.labels.get(&entry.id))
                .flatten()
                .map(|(l, _)| l.as_str()),
            active: t.leaf == Some(leaf),
            preview,
        }
        .write(out)?;
    }
    Ok(())
}

/// The text of the nearest user message at or above `from`, cut to `max` characters.
fn last_user_text(
    s: &EntryTable,
    t: &ResolvedTree,
    from: u32,
    p: &LineStore,
    d: &mut Diags,
    max: usize,
) -> Option<String> {
    let mut buf = Vec::new();
    let mut cur = from;
    let mut steps = 0;
    while cur != NONE && steps <= s.entries.len() {
        steps += 1;
        let entry = &s.entries[cur as usize];
        if p.line(entry, &mut buf, d) {
            if let Some(text) = crate::message::user_text(&buf) {
                return Some(crate::message::truncate_chars(&text, max));
            }
        }
        cur = t.parent_of[cur as usize];
    }
    None
}
