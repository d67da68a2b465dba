//! What pi-compactions remembers of the session being read, in bounded memory: each entry id
//! (hashed to 64 bits) with its line, to say whether a compaction's first kept entry exists
//! (v1: the line of each record, for `firstKeptEntryIndex`); the last [`RECENT`] entries'
//! parent links, kinds and models, to walk a compaction's parent chain back to the assistant
//! message before it (through context_edits, tool results and model changes) and further back
//! to the previous compaction, and to know the model in effect; and the session's models,
//! interned.

use super::trigger::{AssistantFacts, AutoOn, Before, Place, Quiet, StopReason, Uncompacted};
use crate::hash::{hash_bytes, hash_str, FastMap, Prehashed};
use crate::json;
use crate::reader::{Entry, ParentLink};
use hashbrown::HashTable;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Entries whose links and facts are kept for walking a compaction's parent chain.
pub(super) const RECENT: usize = 4096;

/// An entry's id as pi-compactions compares it: its key ([`json::string_key`]), the bytes
/// JavaScript compares it by (ids that differ only in lone surrogate escapes, `"\ud800"`,
/// `"\ud801"` and `"\ufffd"`, are three ids), shown as text with [`EntryId::text`]. Held in
/// place up to 24 bytes (Pi's ids are 8 characters): made, cloned and dropped without the
/// allocator, which each entry paid twice as an `Rc<str>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct EntryId(SmallVec<[u8; 24]>);

impl EntryId {
    /// The id whose [`json::string_key`] is `key`.
    pub fn of(key: &[u8]) -> EntryId {
        EntryId(SmallVec::from_slice(key))
    }

    /// The id's key: what ids are compared and hashed by.
    pub fn key(&self) -> &[u8] {
        &self.0
    }

    /// The id as the records show it: each lone surrogate as U+FFFD, as every tool shows one.
    pub fn text(&self) -> Cow<'_, str> {
        json::key_text(&self.0)
    }
}

#[cfg(test)]
impl From<&str> for EntryId {
    fn from(id: &str) -> EntryId {
        EntryId::of(id.as_bytes())
    }
}

#[cfg(test)]
impl From<String> for EntryId {
    fn from(id: String) -> EntryId {
        EntryId::from(id.as_str())
    }
}

/// A model in the session's [`SeenModels`].
pub(super) type ModelIx = u32;
/// No model (yet) in effect.
pub(super) const NO_MODEL: ModelIx = u32::MAX;

/// The (provider, model id) pairs a session names, each stored once, found by a hash of the
/// pair (issue 19, item 4: a linear search made 100,000 models quadratic).
#[derive(Default)]
pub(super) struct SeenModels {
    pairs: Vec<(Box<str>, Box<str>)>,
    /// [`pair_hash`] → index of the first pair with that hash (another pair with the same
    /// hash is found by a scan).
    by_hash: FastMap<u64, ModelIx>,
}

/// A hash of (provider, model id).
fn pair_hash(provider: &str, model: &str) -> u64 {
    hash_str(provider).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ hash_str(model)
}

impl SeenModels {
    /// The index of (`provider`, `model`), added when new.
    pub fn intern(&mut self, provider: &str, model: &str) -> ModelIx {
        let same = |(p, m): &(Box<str>, Box<str>)| &**p == provider && &**m == model;
        // Calls in a row mostly use the model named last.
        if self.pairs.last().is_some_and(same) {
            return (self.pairs.len() - 1) as ModelIx;
        }
        let h = pair_hash(provider, model);
        match self.by_hash.get(&h) {
            Some(&i) if same(&self.pairs[i as usize]) => return i,
            // Two pairs with one hash: the rare case, scanned.
            Some(_) => {
                if let Some(i) = self.pairs.iter().rposition(same) {
                    return i as ModelIx;
                }
            }
            None => {
                self.by_hash.insert(h, self.pairs.len() as ModelIx);
            }
        }
        self.pairs.push((provider.into(), model.into()));
        (self.pairs.len() - 1) as ModelIx
    }

    /// The (provider, model id) at `ix`; `None` for [`NO_MODEL`].
    pub fn get(&self, ix: ModelIx) -> Option<(&str, &str)> {
        self.pairs.get(ix as usize).map(|(p, m)| (&**p, &**m))
    }
}

/// How an entry names its parent.
pub(super) enum ParentRef<'a> {
    /// The parent's id, as its key ([`json::string_key`]).
    Id(Cow<'a, [u8]>),
    Root,
    /// No usable `parentId` (v1 logs, odd entries): file order decides.
    Unknown,
}

impl<'a> ParentRef<'a> {
    /// The parent entry `e` names (a `linear` session's entries name none).
    pub fn of(e: &Entry<'a>, linear: bool) -> ParentRef<'a> {
        if linear {
            return ParentRef::Unknown;
        }
        match e.parent() {
            ParentLink::Root => ParentRef::Root,
            ParentLink::Id(p) => ParentRef::Id(p),
            ParentLink::Absent | ParentLink::NotString(_) => ParentRef::Unknown,
        }
    }

    /// The parent's id as its key ([`json::string_key`]), when it names one.
    pub fn id(&self) -> Option<&[u8]> {
        match self {
            ParentRef::Id(p) => Some(p),
            _ => None,
        }
    }
}

/// What kind of entry a remembered one is, as far as the parent-chain walk cares.
#[derive(Debug, Clone)]
pub(super) enum RecentKind {
    User,
    /// In place, not boxed: an allocation and a free for each reply cost more than the
    /// larger table entry.
    Assistant(AssistantFacts),
    ToolResult,
    /// A context_edit of the entry `target`; `omitted` when its replacement is null.
    ContextEdit {
        target: Option<EntryId>,
        omitted: bool,
    },
    ModelChange,
    Compaction,
    /// A thinking_level_change, a label or a session_info: no part of a turn.
    Setting,
    Other,
}

/// How a remembered entry names its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Link {
    Id(EntryId),
    /// `parentId` null (or empty): the first entry of its branch.
    Root,
    /// No usable `parentId`.
    Unknown,
}

impl Link {
    fn id(&self) -> Option<&EntryId> {
        match self {
            Link::Id(p) => Some(p),
            _ => None,
        }
    }
}

/// A parent id, or none (not known to be the root), as the tests name one.
#[cfg(test)]
impl From<Option<EntryId>> for Link {
    fn from(parent: Option<EntryId>) -> Link {
        parent.map_or(Link::Unknown, Link::Id)
    }
}

/// A remembered entry.
struct RecentEntry {
    line: u64,
    parent: Link,
    kind: RecentKind,
    /// The model in effect at it.
    model: ModelIx,
}

/// The last [`RECENT`] entries with an id, in a ring in the order they were first remembered,
/// and an index of their ids that holds only slot numbers: a map of the entries themselves
/// (~170 bytes a bucket) spread over a megabyte and missed the cache at every entry's
/// lookups; the index is ~40 KB, and the entries looked up are mostly the latest.
///
/// An id remembered again (a file with duplicate ids) replaces its entry in place, as a map
/// does: its place in the order stays, and the oldest id is forgotten first.
#[derive(Default)]
struct RecentEntries {
    /// Slot numbers in `slots`, by the [`hash_str`] of the slot's id.
    by_id: HashTable<u32>,
    /// The entries; once [`RECENT`] are held, the oldest is at `head`, a slot that is free
    /// when `by_id` holds fewer.
    slots: Vec<(EntryId, RecentEntry)>,
    head: usize,
}

impl RecentEntries {
    fn remember(&mut self, key: EntryId, entry: RecentEntry) {
        // A session past a few hundred entries mostly goes on to fill the table: grown to its
        // full size at once, not by doubling (each doubling hashes every id again).
        if self.by_id.len() == RECENT / 8 {
            let slots = &self.slots;
            self.by_id.reserve(RECENT - RECENT / 8, |&s| {
                hash_bytes(slots[s as usize].0.key())
            });
        }
        if self.by_id.len() >= RECENT {
            let head = self.head;
            let oldest = hash_bytes(self.slots[head].0.key());
            if let Ok(found) = self.by_id.find_entry(oldest, |&s| s as usize == head) {
                found.remove();
            }
        }
        let hash = hash_bytes(key.key());
        let slots = &mut self.slots;
        if let Some(&s) = self.by_id.find(hash, |&s| slots[s as usize].0 == key) {
            slots[s as usize].1 = entry;
            return;
        }
        let s = if slots.len() < RECENT {
            slots.push((key, entry));
            slots.len() - 1
        } else {
            let s = self.head;
            slots[s] = (key, entry);
            self.head = (s + 1) % RECENT;
            s
        };
        self.by_id
            .insert_unique(hash, s as u32, |&s| hash_bytes(slots[s as usize].0.key()));
    }

    /// The entry whose id's key is `id` among those remembered, with its id.
    fn get_key_value(&self, id: &[u8]) -> Option<(&EntryId, &RecentEntry)> {
        let slots = &self.slots;
        let &s = self
            .by_id
            .find(hash_bytes(id), |&s| slots[s as usize].0.key() == id)?;
        let (k, e) = &slots[s as usize];
        Some((k, e))
    }

    /// What lies at and above the entry with id `parent` on its parent chain, back to the
    /// nearest assistant message (see [`Before`]); the walk stops at a user message, a
    /// compaction, or where the chain is forgotten.
    fn before(&self, parent: &[u8]) -> Before {
        let mut b = Before::default();
        let mut hidden: Vec<(EntryId, Place)> = Vec::new();
        let mut met_message = false;
        let mut cur = parent;
        for _ in 0..RECENT {
            let Some((id, entry)) = self.get_key_value(cur) else {
                break;
            };
            let place = Place {
                line: entry.line,
                id: Some(id.clone()),
            };
            match &entry.kind {
                RecentKind::User | RecentKind::Compaction => break,
                RecentKind::Assistant(a) => {
                    b.hidden_by = hidden
                        .into_iter()
                        .find(|(t, _)| a.id.as_ref() == Some(t))
                        .map(|(_, p)| p);
                    b.assistant = Some(a.clone());
                    break;
                }
                RecentKind::ToolResult => {
                    if !met_message {
                        b.tool_result = Some(place);
                    }
                    met_message = true;
                }
                RecentKind::ContextEdit { target, omitted } => {
                    b.edited = true;
                    if let (Some(t), true) = (target, omitted) {
                        hidden.push((t.clone(), place));
                    }
                }
                RecentKind::ModelChange => b.model_changed = true,
                RecentKind::Setting | RecentKind::Other => {}
            }
            let Some(p) = entry.parent.id().map(EntryId::key) else {
                break;
            };
            cur = p;
        }
        b
    }

    /// Whether only model changes and settings lie on the chain from the entry with id `parent`
    /// back to the previous compaction or the branch's first entry, at least one (see
    /// [`Quiet`]); `None` when anything else lies there, nothing does (Pi compacts nothing
    /// right after a compaction: `prepareCompaction`), or the chain is forgotten or has no
    /// usable link.
    fn quiet(&self, parent: &[u8]) -> Option<Quiet> {
        let mut cur = parent;
        for step in 0..RECENT {
            let (id, entry) = self.get_key_value(cur)?;
            match entry.kind {
                RecentKind::Compaction if step > 0 => {
                    let previous = Place {
                        line: entry.line,
                        id: Some(id.clone()),
                    };
                    return Some(Quiet {
                        previous: Some(previous),
                    });
                }
                RecentKind::ModelChange | RecentKind::Setting => {}
                _ => return None,
            }
            match &entry.parent {
                Link::Id(p) => cur = p.key(),
                Link::Root => return Some(Quiet { previous: None }),
                Link::Unknown => return None,
            }
        }
        None
    }

    /// Walking back from the entry with id `parent` to the previous compaction: the last reply
    /// before the next request to the model (a prompt, or the next reply of the same run), of
    /// the model in effect at that request, whose context (Pi's `calculateContextTokens`) is
    /// over `limit(model)`, with no compaction after it before that request: Pi checks the
    /// threshold after each run, before each prompt and before each request in the middle of a
    /// run. Replies that failed or that a context_edit omits are passed over (Pi checks the
    /// last reply it still shows the model); an omitted reply still marks a request.
    fn uncompacted(
        &self,
        parent: &[u8],
        limit: &dyn Fn(ModelIx) -> Option<i128>,
    ) -> Option<Uncompacted> {
        let mut next: Option<(Place, ModelIx)> = None;
        let mut omitted: Vec<EntryId> = Vec::new();
        let mut cur = parent;
        for _ in 0..RECENT {
            let (id, entry) = self.get_key_value(cur)?;
            let place = Place {
                line: entry.line,
                id: Some(id.clone()),
            };
            match &entry.kind {
                RecentKind::Compaction => return None,
                RecentKind::User => next = Some((place, entry.model)),
                RecentKind::ContextEdit {
                    target: Some(t),
                    omitted: true,
                } => omitted.push(t.clone()),
                RecentKind::Assistant(a) => {
                    let valid = !matches!(a.stop, StopReason::Error | StopReason::Aborted)
                        && !omitted.contains(id);
                    if let (true, Some((n, m))) = (valid, next.take()) {
                        let context = a.usage.pi_context();
                        let over =
                            limit(m).filter(|&l| i128::try_from(context).is_ok_and(|c| c > l));
                        if let (true, Some(l)) = (a.model == m, over) {
                            return Some(Uncompacted {
                                reply: place.clone(),
                                context,
                                limit: l,
                                next: n,
                            });
                        }
                    }
                    next = Some((place, entry.model));
                }
                _ => {}
            }
            cur = entry.parent.id()?.key();
        }
        None
    }
}

/// What pi-compactions remembers of one session while reading it.
pub(super) struct SessionMemory {
    pub id: String,
    /// A version 1 log: no ids, file order is the chain.
    pub linear: bool,
    /// Records read so far, the header being record 0 (Pi's v1 index).
    records: u64,
    /// v2+: hash of each id seen → its line (the hash is the table's hash too).
    seen: HashMap<u64, u64, BuildHasherDefault<Prehashed>>,
    /// v1: line of record k at [k - 1].
    v1_lines: Vec<u64>,
    recent: RecentEntries,
    /// The nearest assistant message in file order since the last user message or compaction.
    file_last: Option<AssistantFacts>,
    /// The model in effect at the last entry in file order.
    file_model: ModelIx,
    pub models: SeenModels,
    /// Whether the session has shown a mark of Pi 1.x so far (a system message, a
    /// context_edit or a usage entry).
    pub pi1: bool,
    /// The latest compaction so far that shows auto-compaction on, unless a later one showed
    /// it off (see [`AutoOn`]).
    pub auto_on: Option<AutoOn>,
}

impl SessionMemory {
    /// A session with this id; `linear` for a version 1 log.
    pub fn new(id: String, linear: bool) -> SessionMemory {
        SessionMemory {
            id,
            linear,
            records: 1,
            seen: HashMap::default(),
            v1_lines: Vec::new(),
            recent: RecentEntries::default(),
            file_last: None,
            file_model: NO_MODEL,
            models: SeenModels::default(),
            pi1: false,
            auto_on: None,
        }
    }

    /// Counts a record of the session (before it is looked at).
    pub fn count_record(&mut self) {
        self.records += 1;
    }

    /// A line of a version-1 session that is a JSON array: no record to the tools, but an
    /// entry of the list Pi's loader keeps (every line that parses to a truthy value) and its
    /// migration indexes with `firstKeptEntryIndex` (Pi 0.73.1 and 1.6.0 alike; a line whose
    /// value is no object or array is dropped when null, 0, false or "", by 1.6.0, and
    /// otherwise makes the migration fail, so it is not counted).
    pub fn array_line(&mut self, line: u64) {
        if self.linear {
            self.records += 1;
            self.v1_lines.push(line);
        }
    }

    /// The model in effect at an entry's parent, and the link to remember (the parent's id
    /// shared with its remembered entry when there is one).
    pub fn parent_link(&self, parent: &ParentRef<'_>) -> (ModelIx, Link) {
        match parent {
            ParentRef::Id(p) => match self.recent.get_key_value(p) {
                Some((k, n)) => (n.model, Link::Id(k.clone())),
                None => (self.file_model, Link::Id(EntryId::of(p))),
            },
            ParentRef::Root => (NO_MODEL, Link::Root),
            ParentRef::Unknown => (self.file_model, Link::Unknown),
        }
    }

    /// What lies before an entry with this parent (see [`Before`]): on the parent chain when
    /// there is one, else in file order (then only the nearest assistant message since the
    /// last user message or compaction).
    pub fn before(&self, parent: &ParentRef<'_>) -> Before {
        let in_file_order = || Before {
            assistant: self.file_last.clone(),
            partial: true,
            ..Before::default()
        };
        if self.linear {
            return in_file_order();
        }
        match parent {
            ParentRef::Root => Before::default(),
            ParentRef::Unknown => in_file_order(),
            ParentRef::Id(p) => self.recent.before(p),
        }
    }

    /// Whether no message lies on the chain before an entry with this parent, back to the
    /// previous compaction or the branch's first entry (see [`Quiet`]); never where file order
    /// stands in for the chain.
    pub fn quiet(&self, parent: &ParentRef<'_>) -> Option<Quiet> {
        match parent {
            ParentRef::Id(p) if !self.linear => self.recent.quiet(p),
            // The branch's first entry: Pi compacts an empty branch neither way.
            _ => None,
        }
    }

    /// An earlier reply on the chain over the threshold that Pi did not compact (see
    /// [`Uncompacted`]); `limit` gives a model's `window - reserve`.
    pub fn uncompacted(
        &self,
        parent: &ParentRef<'_>,
        limit: &dyn Fn(ModelIx) -> Option<i128>,
    ) -> Option<Uncompacted> {
        match parent {
            ParentRef::Id(p) if !self.linear => self.recent.uncompacted(p, limit),
            _ => None,
        }
    }

    /// The line of a compaction's first kept entry, when it exists earlier in the session:
    /// by `firstKeptEntryId`, or in a v1 log by `firstKeptEntryIndex`.
    pub fn first_kept_line(&self, entry: Option<&EntryId>, index: Option<u64>) -> Option<u64> {
        if self.linear {
            // Pi's migration: entries[index], the header being 0; the header resolves to nothing.
            index
                .filter(|&k| k >= 1 && k < self.records)
                .and_then(|k| self.v1_lines.get(k as usize - 1).copied())
        } else {
            entry.and_then(|f| self.line_of(f))
        }
    }

    /// The line of the entry with id `id`, when it came earlier in the session.
    pub fn line_of(&self, id: &EntryId) -> Option<u64> {
        self.seen.get(&hash_bytes(id.key())).copied()
    }

    /// Whether an entry with id `id` came earlier in the session.
    pub fn has_seen(&self, id: &EntryId) -> bool {
        self.seen.contains_key(&hash_bytes(id.key()))
    }

    /// Remembers the entry on `line` (its id, its parent's id, its kind and the model in effect
    /// at it), once everything has looked at it.
    pub fn remember(
        &mut self,
        line: u64,
        id: Option<EntryId>,
        parent: impl Into<Link>,
        kind: RecentKind,
        model: ModelIx,
    ) {
        let parent = parent.into();
        match &kind {
            RecentKind::User | RecentKind::Compaction => self.file_last = None,
            RecentKind::Assistant(a) => self.file_last = Some(a.clone()),
            _ => {}
        }
        self.file_model = model;
        if self.linear {
            self.v1_lines.push(line);
        } else if let Some(i) = id {
            self.seen.insert(hash_bytes(i.key()), line);
            self.recent.remember(
                i,
                RecentEntry {
                    line,
                    parent,
                    kind,
                    model,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn tree() -> SessionMemory {
        SessionMemory::new("s".into(), false)
    }

    fn assistant(line: u64) -> RecentKind {
        RecentKind::Assistant(AssistantFacts {
            line,
            id: None,
            stop: StopReason::Stop,
            overflow: false,
            overflow_pi16: false,
            model: NO_MODEL,
            usage: Default::default(),
        })
    }

    fn id(s: &str) -> Option<EntryId> {
        Some(EntryId::from(s))
    }

    /// An id held in place and one on the heap are the same key: equal, hashed alike and
    /// found in a table; the longest held in place, one byte longer, and multi-byte text.
    #[test]
    fn ids_in_place_or_on_the_heap_are_their_key() {
        // What an `EntryId` holds in place.
        const INLINE_ID: usize = 24;
        let texts = [
            String::new(),
            "6bfad1da".to_string(),
            "a".repeat(INLINE_ID),
            "a".repeat(INLINE_ID + 1),
            format!("{}é", "a".repeat(INLINE_ID - 2)),
            format!("{}é", "a".repeat(INLINE_ID - 1)),
            "0f8e2c1a-5b7d-4e3f-9a21-6c4d8b0e7f13".to_string(),
        ];
        let mut table: FastMap<EntryId, usize> = FastMap::default();
        for (i, t) in texts.iter().enumerate() {
            let id = EntryId::from(t.as_str());
            assert_eq!(id.key(), t.as_bytes());
            assert_eq!(id.clone().key(), t.as_bytes());
            assert_eq!(id.text(), t.as_str());
            assert_eq!(id.0.spilled(), t.len() > INLINE_ID, "{t}");
            assert_eq!(id, EntryId::from(t.as_str()));
            table.insert(id, i);
        }
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(table.get(&EntryId::from(t.as_str())), Some(&i), "{t}");
        }
        assert_eq!(table.get(&EntryId::from("6bfad1db")), None);
    }

    /// Ids as JSON writes them: those JavaScript takes for different strings get different
    /// keys (a lone surrogate, another, a written U+FFFD, a noncharacter written plainly,
    /// doubled, or next to a surrogate), and each key shows as the reader shows the id's text.
    #[test]
    fn ids_get_one_key_each_as_javascript_compares_them() {
        let bodies = [
            r"6bfad1da",
            r"\ud800",
            r"\ud801",
            r"\udfff",
            r"\ufffd",
            r"a\ud800b",
            r"a\udc00b",
            "\u{FDD0}",
            "\u{FDD0}\u{FDD0}",
            r"\ufdd0\ud800",
            r"\ud800\ufdd0",
            r"\ud83d\ude00",
            "\u{1F600}",
            r"\ud800\ud800",
        ];
        let ids: Vec<EntryId> = bodies
            .iter()
            .map(|b| EntryId::of(&json::string_key(b.as_bytes())))
            .collect();
        for (i, a) in ids.iter().enumerate() {
            let text = json::decode_string_body(bodies[i].as_bytes());
            assert_eq!(a.text(), text, "{}", bodies[i]);
            for (j, b) in ids.iter().enumerate().skip(i + 1) {
                // A surrogate pair and the character it encodes are one string.
                let same = (i, j) == (11, 12);
                assert_eq!(a == b, same, "{} and {}", bodies[i], bodies[j]);
            }
        }
    }

    #[test]
    fn the_walk_stops_at_an_assistant_a_user_or_a_compaction() {
        let mut s = tree();
        s.remember(2, id("a"), None, assistant(2), NO_MODEL);
        s.remember(3, id("b"), id("a"), RecentKind::Other, NO_MODEL);
        s.remember(4, id("u"), id("b"), RecentKind::User, NO_MODEL);
        s.remember(5, id("c"), id("b"), RecentKind::Other, NO_MODEL);
        let near = |p: &str| {
            s.before(&ParentRef::Id(p.as_bytes().into()))
                .assistant
                .map(|a| a.line)
        };
        assert_eq!(near("c"), Some(2));
        assert_eq!(near("u"), None);
        assert_eq!(near("gone"), None);
        assert_eq!(s.before(&ParentRef::Root).assistant.map(|a| a.line), None);
        assert_eq!(
            s.before(&ParentRef::Unknown).assistant.map(|a| a.line),
            None,
            "file order: a user message came after the assistant"
        );
        assert!(s.has_seen(&"u".into()) && !s.has_seen(&"gone".into()));
        assert_eq!(s.first_kept_line(Some(&"b".into()), None), Some(3));
    }

    /// Only model changes and settings (one at least) back to the previous compaction, or to
    /// the branch's first entry: quiet; any message, nothing, a link that is not known, or a
    /// chain forgotten: not.
    #[test]
    fn quiet_is_no_message_back_to_a_compaction_or_the_start() {
        let mut s = tree();
        s.remember(2, id("m"), Link::Root, RecentKind::ModelChange, NO_MODEL);
        s.remember(3, id("t"), id("m"), RecentKind::Setting, NO_MODEL);
        s.remember(4, id("c"), id("t"), RecentKind::Compaction, NO_MODEL);
        s.remember(5, id("m2"), id("c"), RecentKind::ModelChange, NO_MODEL);
        s.remember(6, id("u"), id("m2"), RecentKind::User, NO_MODEL);
        s.remember(7, id("x"), None, RecentKind::Setting, NO_MODEL);
        s.remember(8, id("o"), id("c"), RecentKind::Other, NO_MODEL);
        let quiet = |p: &str| {
            s.quiet(&ParentRef::Id(p.as_bytes().into()))
                .map(|q| q.previous.map(|p| p.line))
        };
        assert_eq!(quiet("t"), Some(None), "back to the start");
        assert_eq!(quiet("m2"), Some(Some(4)), "back to the compaction");
        assert_eq!(quiet("c"), None, "right after a compaction");
        assert_eq!(quiet("u"), None, "a message");
        assert_eq!(quiet("o"), None, "another entry");
        assert_eq!(quiet("x"), None, "no usable parentId");
        assert_eq!(quiet("gone"), None, "forgotten");
        assert_eq!(s.quiet(&ParentRef::Root), None, "an empty branch");
        assert_eq!(s.quiet(&ParentRef::Unknown), None);
        let mut linear = SessionMemory::new("v1".into(), true);
        linear.remember(2, id("m"), Link::Root, RecentKind::ModelChange, NO_MODEL);
        assert_eq!(
            linear.quiet(&ParentRef::Id(b"m".into())),
            None,
            "file order"
        );
    }

    /// A reply on `line` that ended with `stop` and whose context is `total` tokens.
    fn reply(line: u64, stop: StopReason, total: u64) -> RecentKind {
        let mut a = assistant(line);
        if let RecentKind::Assistant(f) = &mut a {
            f.stop = stop;
            f.usage.total_tokens = total;
        }
        a
    }

    #[test]
    fn a_reply_over_the_limit_left_uncompacted_before_the_next_request() {
        let limit = |_| Some(1000);
        let at = |s: &SessionMemory, p: &str| {
            s.uncompacted(&ParentRef::Id(p.as_bytes().into()), &limit)
                .map(|u| (u.reply.line, u.next.line))
        };
        // In the middle of a run: a tool-use reply over the limit, its tool result, then the
        // next reply of the run with no compaction between (Pi checks before each request).
        let mut s = tree();
        s.remember(2, id("u"), None, RecentKind::User, NO_MODEL);
        s.remember(
            3,
            id("a"),
            id("u"),
            reply(3, StopReason::ToolUse, 1200),
            NO_MODEL,
        );
        s.remember(4, id("t"), id("a"), RecentKind::ToolResult, NO_MODEL);
        s.remember(
            5,
            id("b"),
            id("t"),
            reply(5, StopReason::Stop, 900),
            NO_MODEL,
        );
        assert_eq!(at(&s, "b"), Some((3, 5)));
        // Before a prompt; a reply the next prompt follows, but under the limit, is not.
        s.remember(6, id("p"), id("b"), RecentKind::User, NO_MODEL);
        s.remember(
            7,
            id("c"),
            id("p"),
            reply(7, StopReason::Stop, 1500),
            NO_MODEL,
        );
        assert_eq!(
            at(&s, "c"),
            Some((3, 5)),
            "the reply before the prompt was under it"
        );
        s.remember(8, id("q"), id("c"), RecentKind::User, NO_MODEL);
        assert_eq!(at(&s, "q"), Some((7, 8)));
        // A failed reply marks the request but is not checked; a compaction ends the walk.
        s.remember(
            9,
            id("e"),
            id("q"),
            reply(9, StopReason::Error, 0),
            NO_MODEL,
        );
        assert_eq!(at(&s, "e"), Some((7, 8)));
        s.remember(10, id("k"), id("e"), RecentKind::Compaction, NO_MODEL);
        s.remember(
            11,
            id("d"),
            id("k"),
            reply(11, StopReason::Stop, 5000),
            NO_MODEL,
        );
        assert_eq!(at(&s, "d"), None, "nothing after it yet");
    }

    #[test]
    fn models_are_interned_and_inherited_from_the_parent() {
        let mut s = tree();
        let m = s.models.intern("p", "m");
        assert_eq!(s.models.intern("p", "n"), m + 1);
        assert_eq!(s.models.intern("p", "m"), m);
        assert_eq!(s.models.get(m), Some(("p", "m")));
        assert_eq!(s.models.get(NO_MODEL), None);
        s.remember(2, id("a"), None, RecentKind::Other, m);
        s.remember(3, id("b"), id("a"), RecentKind::Other, m + 1);
        assert_eq!(s.parent_link(&ParentRef::Id(b"a".into())).0, m);
        assert_eq!(s.parent_link(&ParentRef::Unknown).0, m + 1, "file order");
        assert_eq!(s.parent_link(&ParentRef::Root), (NO_MODEL, Link::Root));
        assert_eq!(
            s.parent_link(&ParentRef::Id(b"gone".into())),
            (m + 1, Link::Id("gone".into()))
        );
    }

    #[test]
    fn only_the_last_recent_entries_are_remembered() {
        let mut s = tree();
        for i in 0..=RECENT as u64 {
            let kind = if i == 0 {
                assistant(1)
            } else {
                RecentKind::Other
            };
            let parent = (i > 0).then(|| EntryId::from((i - 1).to_string().as_str()));
            s.remember(i + 1, id(&i.to_string()), parent, kind, NO_MODEL);
        }
        let last = ParentRef::Id(RECENT.to_string().into_bytes().into());
        assert_eq!(s.before(&last).assistant.map(|a| a.line), None, "forgotten");
        assert!(s.has_seen(&"0".into()), "ids are never forgotten");
    }

    /// Issue 19, item 4: models are found by hash, not by a scan (which took minutes on 100,000
    /// distinct models): each, named twice, gets its one index back. (Speed is measured in
    /// docs/TESTING.md, not asserted.)
    #[test]
    fn item_4_many_models_are_interned_by_hash() {
        let mut m = SeenModels::default();
        let names: Vec<String> = (0..100_000).map(|i| format!("model-{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(m.intern("p", n), i as ModelIx);
        }
        for (i, n) in names.iter().enumerate().rev() {
            assert_eq!(m.intern("p", n), i as ModelIx);
        }
        assert_eq!(m.intern("q", "model-0"), 100_000);
        assert_eq!(m.get(100_000), Some(("q", "model-0")));
    }

    /// The ring and its index remember what a map of the entries with a queue of their ids
    /// did (the form before it): the same entries found, duplicates replaced in place, the
    /// oldest id forgotten first, over ids that repeat, through many turns of the ring.
    #[test]
    fn recent_entries_remember_as_a_map_with_a_queue_of_ids() {
        let mut ring = RecentEntries::default();
        let mut map: FastMap<EntryId, u64> = FastMap::default();
        let mut order: std::collections::VecDeque<EntryId> = Default::default();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let pool = |x: u64| EntryId::from(format!("{:08x}", x % (RECENT as u64 * 3)));
        for line in 0..(RECENT as u64 * 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly new ids, one in four drawn again from a pool (a duplicate, or an id
            // forgotten and met again).
            let key = if x.is_multiple_of(4) {
                pool(x >> 8)
            } else {
                EntryId::from(format!("n{line}"))
            };
            let entry = RecentEntry {
                line,
                parent: Link::Unknown,
                kind: RecentKind::Other,
                model: NO_MODEL,
            };
            ring.remember(key.clone(), entry);
            if map.len() >= RECENT {
                if let Some(old) = order.pop_front() {
                    map.remove(&old);
                }
            }
            if map.insert(key.clone(), line).is_none() {
                order.push_back(key);
            }
            assert_eq!(ring.by_id.len(), map.len(), "line {line}");
            if line.is_multiple_of(31) {
                for k in (0..RECENT as u64 * 3)
                    .map(pool)
                    .chain(order.iter().cloned())
                {
                    let got = ring
                        .get_key_value(k.key())
                        .map(|(id, e)| (id.clone(), e.line));
                    let want = map.get(&k).map(|&l| (k.clone(), l));
                    assert_eq!(got, want, "line {line}, id {k:?}");
                }
            }
        }
    }
}
