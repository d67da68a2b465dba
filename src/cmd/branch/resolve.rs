//! The tree of a read session resolved: each parentId to the entry it names, the leaf chosen
//! (the last entry, or `--leaf`/`--label`), the chain from that leaf to the root, and the
//! entries kept in output order. Malformed trees (duplicate ids, cycles, missing parents) get
//! a diagnostic each here.

use super::args::Args;
use super::entries::{EntryTable, BAD, NONE};
use crate::diag::{Diags, Kind};

/// The branch chosen in a session, and what the tree looks like around it.
pub(crate) struct ResolvedTree {
    /// Entry index → index of the entry its parentId resolves to.
    pub(crate) parent_of: Vec<u32>,
    /// Entry index of the leaf, `None` when no branch could be chosen.
    pub(crate) leaf: Option<u32>,
    /// Kept entry indexes in output order.
    pub(crate) kept: Vec<u32>,
    pub(crate) on_chain: Vec<bool>,
    /// Whether an entry is the one its id resolves to (not shadowed by a later duplicate).
    pub(crate) live: Vec<bool>,
}

impl ResolvedTree {
    /// Nothing resolved yet for `n` entries: no parents, no leaf, nothing kept.
    fn empty(n: usize) -> ResolvedTree {
        ResolvedTree {
            parent_of: vec![NONE; n],
            leaf: None,
            kept: Vec::new(),
            on_chain: vec![false; n],
            live: vec![true; n],
        }
    }

    pub(crate) fn build(s: &EntryTable, args: &Args, d: &mut Diags) -> ResolvedTree {
        let n = s.entries.len();
        if s.version < 2 {
            return ResolvedTree::linear(s, args, d);
        }
        let mut t = ResolvedTree::empty(n);
        let by_id = t.resolve_ids(s, d);
        let Some(leaf) = choose_leaf(s, args, &by_id, d) else {
            // No entry has an id: the id-less entries still form the session's content.
            if args.leaf.is_none() && args.label.is_none() {
                t.kept = (0..n as u32)
                    .filter(|&i| s.entries[i as usize].parent == NONE)
                    .collect();
            }
            return t;
        };
        t.branch_to(s, leaf, d);
        t
    }

    /// This tree with the branch to `leaf` (another leaf of it) chosen instead: what
    /// `--leaf` with that leaf's id resolves to, without resolving the ids again.
    pub(crate) fn with_leaf(&self, s: &EntryTable, leaf: u32, d: &mut Diags) -> ResolvedTree {
        let mut t = ResolvedTree {
            parent_of: self.parent_of.clone(),
            live: self.live.clone(),
            ..ResolvedTree::empty(s.entries.len())
        };
        t.branch_to(s, leaf, d);
        t
    }

    /// Chooses `leaf`: the chain from it to the root, and the entries kept.
    fn branch_to(&mut self, s: &EntryTable, leaf: u32, d: &mut Diags) {
        self.leaf = Some(leaf);
        let chain = self.walk_up(s, leaf, d);
        let idless = self.kept_idless(s, d);
        self.kept = interleave(&chain, &idless);
    }

    /// A linear log (v1): everything, in file order, each entry the child of the one before.
    fn linear(s: &EntryTable, args: &Args, d: &mut Diags) -> ResolvedTree {
        let n = s.entries.len();
        let mut t = ResolvedTree::empty(n);
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
        t
    }

    /// The entry each id resolves to (the last one in file order, as in Pi; earlier ones are
    /// no longer live), and each entry's parent from it. Returns the entry index by id.
    fn resolve_ids(&mut self, s: &EntryTable, d: &mut Diags) -> Vec<u32> {
        let mut by_id = vec![NONE; s.ids.len()];
        for (i, entry) in s.entries.iter().enumerate() {
            if entry.id == NONE {
                continue;
            }
            let prev = by_id[entry.id as usize];
            if prev != NONE {
                self.live[prev as usize] = false;
                d.report(
                    Some(entry.line()),
                    Kind::DuplicateId,
                    format!(
                        "duplicate id {:?} (also on line {}); the later entry wins, as in Pi",
                        s.ids.text(entry.id),
                        s.entries[prev as usize].line()
                    ),
                );
            }
            by_id[entry.id as usize] = i as u32;
        }
        for (i, entry) in s.entries.iter().enumerate() {
            if entry.parent < BAD {
                self.parent_of[i] = by_id[entry.parent as usize];
            }
        }
        by_id
    }

    /// The chain from `leaf` up to where it ends (a root, a cycle, a missing parent), marked
    /// `on_chain` and returned root first.
    fn walk_up(&mut self, s: &EntryTable, leaf: u32, d: &mut Diags) -> Vec<u32> {
        let mut chain = Vec::new();
        let mut cur = leaf;
        loop {
            if self.on_chain[cur as usize] {
                let entry = &s.entries[cur as usize];
                d.report(
                    Some(entry.line()),
                    Kind::Cycle,
                    format!(
                        "parentId cycle: entry {:?} is its own ancestor; the branch stops there (Pi would hang)",
                        s.ids.text(entry.id)
                    ),
                );
                break;
            }
            self.on_chain[cur as usize] = true;
            chain.push(cur);
            let entry = &s.entries[cur as usize];
            if entry.parent == NONE || entry.parent == BAD {
                break;
            }
            let p = self.parent_of[cur as usize];
            if p == NONE && s.fragment {
                // Expected in a fragment: its oldest entry's parent is in the part not given.
                let off = (0..cur as usize).filter(|&i| !self.on_chain[i]).count();
                d.note(
                    Some(entry.line()),
                    format!(
                        "the branch leaves the fragment here: parent {:?} of entry {:?} is not in the input; {off} earlier {} not on the branch",
                        s.ids.text(entry.parent),
                        s.ids.text(entry.id),
                        if off == 1 { "entry is" } else { "entries are" }
                    ),
                );
                break;
            }
            if p == NONE {
                let lost = (0..cur as usize).filter(|&i| !self.on_chain[i]).count();
                d.report(
                    Some(entry.line()),
                    Kind::MissingParent,
                    format!(
                        "parent {:?} of entry {:?} is not in the session; the branch starts here, {lost} earlier {} lost",
                        s.ids.text(entry.parent),
                        s.ids.text(entry.id),
                        if lost == 1 { "entry is" } else { "entries are" }
                    ),
                );
                break;
            }
            cur = p;
        }
        chain.reverse();
        chain
    }

    /// The id-less entries kept, in file order: they stay at their place unless attached to
    /// an abandoned branch.
    fn kept_idless(&self, s: &EntryTable, d: &mut Diags) -> Vec<u32> {
        (0..s.entries.len() as u32)
            .filter(|&i| {
                let entry = &s.entries[i as usize];
                if entry.id != NONE {
                    return false;
                }
                match entry.parent {
                    NONE => true,
                    BAD => false,
                    _ => {
                        let p = self.parent_of[i as usize];
                        if p == NONE {
                            d.report(
                                Some(entry.line()),
                                Kind::MissingParent,
                                format!("parent {:?} of an id-less entry is not in the session; kept in place", s.ids.text(entry.parent)),
                            );
                            true
                        } else {
                            self.on_chain[p as usize]
                        }
                    }
                }
            })
            .collect()
    }
}

/// The leaf the branch ends at: the entry `--leaf` names, the entry `--label` names (its
/// latest label), or the last entry with an id. `None`, reported, when the one asked for is
/// not there; `None` too when no entry has an id.
fn choose_leaf(s: &EntryTable, args: &Args, by_id: &[u32], d: &mut Diags) -> Option<u32> {
    if let Some(want) = &args.leaf {
        let found = s
            .ids
            .get(want.as_bytes())
            .map(|k| by_id[k as usize])
            .filter(|&i| i != NONE);
        if found.is_none() {
            d.report(
                None,
                Kind::NotFound,
                format!("session {}: no entry with id {want:?}", s.id),
            );
        }
        return found;
    }
    if let Some(want) = &args.label {
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
        return best;
    }
    last_with_id(s, d)
}

/// Pi's leaf is the last entry; when it has no string id, the last entry that has one,
/// reported (Pi would show an empty conversation, or, for an id that is a number or another
/// value JavaScript holds true, take that entry as its leaf).
fn last_with_id(s: &EntryTable, d: &mut Diags) -> Option<u32> {
    let last_with_id = s
        .entries
        .iter()
        .rposition(|x| x.id != NONE)
        .map(|i| i as u32);
    if let (Some(i), Some(last)) = (last_with_id, s.entries.last()) {
        if last.id == NONE {
            let what = match s.last_odd_id {
                Some(kind) => format!("'s id is a {kind} (Pi takes it as its leaf)"),
                None => " has no id (Pi would show an empty conversation)".to_string(),
            };
            d.report(
                Some(last.line()),
                Kind::IdlessLeaf,
                format!(
                    "the last entry{what}; the leaf is the last entry with a string id, line {}",
                    s.entries[i as usize].line()
                ),
            );
        }
    }
    last_with_id
}

/// The output order: the chain, root first, with each kept id-less entry (taken in file order)
/// placed before the first chain entry that follows it in the file, and the rest after the
/// chain. For a chain in file order, which is how Pi writes one, that is file order.
fn interleave(chain: &[u32], idless: &[u32]) -> Vec<u32> {
    let mut kept = Vec::with_capacity(chain.len() + idless.len());
    let mut next = 0;
    for &c in chain {
        while next < idless.len() && idless[next] < c {
            kept.push(idless[next]);
            next += 1;
        }
        kept.push(c);
    }
    kept.extend_from_slice(&idless[next..]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idless_entries_are_merged_into_the_chain_at_their_place() {
        assert_eq!(
            interleave(&[1, 4, 6], &[0, 2, 3, 7, 9]),
            [0, 1, 2, 3, 4, 6, 7, 9]
        );
        assert_eq!(interleave(&[], &[2, 5]), [2, 5]);
        assert_eq!(interleave(&[3], &[]), [3]);
    }
}
