//! What pi-branch keeps of a session while reading it: per entry a 24-byte [`PackedEntry`]
//! (where its line is, its line number, its interned id and parent), the session's ids and
//! labels. The lines themselves are read again at the end ([`super::store`]).

use super::ids::Ids;
use crate::diag::{Counts, Diags, Kind};
use crate::json::Raw;
use crate::lines::Line;
use crate::reader::{Entry, Header, ParentLink};
use std::collections::HashMap;

/// No id, or no parent.
pub(crate) const NONE: u32 = u32::MAX;
/// A parentId that is neither a string nor null.
pub(crate) const BAD: u32 = u32::MAX - 1;

/// Offsets and line numbers are kept in 48 bits (256 TiB, 2^48 lines), which lets an entry fit
/// in 24 bytes: memory per entry is what limits pi-branch on large files.
const POS_BITS: u32 = 48;
const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// `PackedEntry::len_nl` bit 31: the line had a terminator.
const NEWLINE: u32 = 1 << 31;
/// A length that does not fit in 31 bits; the real one is in `EntryTable::long_lens`.
const LONG: u32 = NEWLINE - 1;

/// One entry (or the header) of a session, in 24 bytes.
#[derive(Clone, Copy)]
pub(crate) struct PackedEntry {
    /// The line's offset (low 48 bits: in the file, or in `EntryTable::mem` for stdin) and
    /// bits 32..48 of its line number (high 16 bits).
    pos: u64,
    line_lo: u32,
    /// Length with the line terminator (low 31 bits, or `LONG`), and `NEWLINE`.
    len_nl: u32,
    pub(crate) id: u32,
    pub(crate) parent: u32,
}

impl PackedEntry {
    /// `None` when the offset or line number is beyond 48 bits.
    fn new(offset: u64, line: u64, len: u64, has_newline: bool) -> Option<PackedEntry> {
        if offset > POS_MASK || line > POS_MASK {
            return None;
        }
        let len = if len >= u64::from(LONG) {
            LONG
        } else {
            len as u32
        };
        Some(PackedEntry {
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
    /// The line's length with its terminator; a long one is looked up in `long_lens`.
    pub(crate) fn len(&self, long_lens: &HashMap<u64, u64>) -> u64 {
        match self.len_nl & !NEWLINE {
            LONG => long_lens
                .get(&self.offset())
                .copied()
                .unwrap_or(u64::from(LONG)),
            len => u64::from(len),
        }
    }
}

/// A session as pi-branch keeps it while reading: its entries packed, its ids interned, its
/// labels resolved in file order.
pub(crate) struct EntryTable {
    pub(crate) id: String,
    pub(crate) version: u64,
    /// The lines written before the kept entries: oh-my-pi's title slot when there is one,
    /// then the header (a fragment has none).
    pub(crate) lead: Vec<PackedEntry>,
    /// Entries read without their header (see [`Header::fragment`]).
    pub(crate) fragment: bool,
    pub(crate) entries: Vec<PackedEntry>,
    pub(crate) ids: Ids,
    /// target id → (label, order of the label entry)
    pub(crate) labels: HashMap<u32, (String, usize)>,
    /// Lengths of lines of 2 GiB or more, by offset.
    pub(crate) long_lens: HashMap<u64, u64>,
    /// Whether the session's bytes are held in `mem` (an input that cannot be read twice).
    holds_bytes: bool,
    /// The session's bytes, when reading stdin.
    pub(crate) mem: Vec<u8>,
    pub(crate) counts_at_start: Counts,
    /// The kind of the last entry's `id` when it is one JavaScript holds true but not a
    /// string (a number other than 0, `true`, an array, an object): Pi then takes that entry
    /// as its leaf, where pi-branch cannot ([`resolve`](super::resolve)'s note says so).
    pub(crate) last_odd_id: Option<&'static str>,
}

impl EntryTable {
    /// A session begins; `holds_bytes` when its lines cannot be read again from the input.
    pub(crate) fn new(h: &Header<'_>, holds_bytes: bool, d: &mut Diags) -> EntryTable {
        let mut s = EntryTable {
            id: h.id.clone(),
            version: h.version,
            lead: Vec::new(),
            fragment: h.fragment,
            entries: Vec::new(),
            ids: Ids::default(),
            labels: HashMap::new(),
            long_lens: HashMap::new(),
            holds_bytes,
            mem: Vec::new(),
            counts_at_start: d.counts(),
            last_odd_id: None,
        };
        let title = h.title.as_ref().map(|t| &t.line);
        let header = (!h.fragment).then_some(&h.line);
        for line in title.into_iter().chain(header) {
            if let Some(n) = s.pack(line, d) {
                s.lead.push(n);
            }
        }
        s
    }

    /// Notes where `line` is (holding its bytes when they cannot be read again).
    fn pack(&mut self, line: &Line<'_>, d: &mut Diags) -> Option<PackedEntry> {
        let mut offset = line.offset;
        if self.holds_bytes {
            offset = self.mem.len() as u64;
            self.mem.extend_from_slice(line.bytes);
            let eol = line.len_with_eol - line.bytes.len() as u64;
            self.mem.extend_from_slice(if eol == 2 {
                b"\r\n"
            } else if eol == 1 {
                b"\n"
            } else {
                b""
            });
        }
        let Some(n) = PackedEntry::new(offset, line.no, line.len_with_eol, line.has_newline) else {
            d.report(
                Some(line.no),
                Kind::Io,
                "beyond 256 TiB or 2^48 lines, which pi-branch cannot track; entry skipped",
            );
            return None;
        };
        if line.len_with_eol >= u64::from(LONG) {
            self.long_lens.insert(offset, line.len_with_eol);
        }
        Some(n)
    }

    /// An entry of the session, in file order.
    pub(crate) fn add(&mut self, e: &Entry<'_>, d: &mut Diags) {
        let Some(mut n) = self.pack(&e.line, d) else {
            return;
        };
        if self.version >= 2 {
            n.id = self.id_of(e, d);
            n.parent = self.parent_of(e, d);
            if e.get("type").is_some_and(|t| t.is_str("label")) {
                self.note_label(e);
            }
        }
        self.entries.push(n);
    }

    /// The entry's interned `id`; `NONE` when it has none, or it is empty or not a string
    /// (Pi never follows a `parentId` to either: an empty one ends its chain, and its ids are
    /// strings).
    fn id_of(&mut self, e: &Entry<'_>, d: &mut Diags) -> u32 {
        self.last_odd_id = None;
        let raw = match e.get("id") {
            None => return NONE,
            Some(raw) if raw.is_null() => return NONE,
            Some(raw) => raw,
        };
        if is_truthy_non_string(raw) {
            self.last_odd_id = Some(raw.kind_name());
        }
        let why = match raw.as_key() {
            Some(id) if !id.is_empty() => return self.ids.intern(&id),
            Some(_) => "id is empty; entry treated as id-less".to_string(),
            None => format!(
                "id is a {}, not a string; entry treated as id-less",
                raw.kind_name()
            ),
        };
        d.report(Some(e.line.no), Kind::BadId, why);
        NONE
    }

    /// The entry's interned `parentId`; `NONE` for a root, `BAD` when it is not a string.
    fn parent_of(&mut self, e: &Entry<'_>, d: &mut Diags) -> u32 {
        match e.parent() {
            ParentLink::Absent | ParentLink::Root => NONE,
            ParentLink::Id(p) => self.ids.intern(&p),
            ParentLink::NotString(raw) => {
                d.report(
                    Some(e.line.no),
                    Kind::BadId,
                    format!(
                        "parentId is a {}, not a string; the chain ends here",
                        raw.kind_name()
                    ),
                );
                BAD
            }
        }
    }

    /// A `label` entry: the latest label of a target wins; an empty or absent one clears it.
    fn note_label(&mut self, e: &Entry<'_>) {
        if let Some(target) = e.key("targetId") {
            let t = self.ids.intern(&target);
            match e.str("label").filter(|l| !l.is_empty()) {
                Some(l) => {
                    self.labels.insert(t, (l.into_owned(), self.entries.len()));
                }
                None => {
                    self.labels.remove(&t);
                }
            }
        }
    }
}

/// Whether an `id` is a value JavaScript holds true that is not a string: a number other than
/// zero, `true`, an array or an object.
fn is_truthy_non_string(raw: Raw<'_>) -> bool {
    match raw.first() {
        Some(b't' | b'[' | b'{') => true,
        Some(b'-' | b'0'..=b'9') => raw.as_f64().is_some_and(|v| v != 0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_pack_into_24_bytes_and_give_their_numbers_back() {
        assert_eq!(std::mem::size_of::<PackedEntry>(), 24);
        let big_line = (7u64 << 32) + 5;
        let n = PackedEntry::new(POS_MASK, big_line, 12, false).unwrap();
        assert_eq!(
            (n.offset(), n.line(), n.has_newline()),
            (POS_MASK, big_line, false)
        );
        let n = PackedEntry::new(3, 1, u64::from(LONG) + 9, true).unwrap();
        assert!(n.has_newline());
        let mut long = HashMap::new();
        long.insert(3, u64::from(LONG) + 9);
        assert_eq!(n.len(&long), u64::from(LONG) + 9);
        assert!(PackedEntry::new(POS_MASK + 1, 1, 1, true).is_none());
    }
}
