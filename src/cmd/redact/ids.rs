//! `--rename-ids`: entry ids replaced by counters, consistently within a session (an id and
//! every `parentId`, `targetId`, `fromId`, `firstKeptEntryId` and oh-my-pi's
//! `providerReplayThroughEntryId` naming it get the same new id), and session ids by counters
//! across the run.

use crate::hash::FastMap;

/// The renames of one run.
#[derive(Default)]
pub struct Renames {
    /// Entry id (its key, `json::string_key`: ids that differ only in lone surrogates are
    /// different ids) → its new id, for the session being read (cleared at each header).
    entries: FastMap<Box<[u8]>, String>,
    sessions: u64,
}

impl Renames {
    /// A new session begins: its entries are numbered from 1 again. Its own new id.
    pub fn session(&mut self) -> String {
        self.entries.clear();
        self.sessions += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.sessions)
    }

    /// The new id of the entry id whose key is `id` (`root`, Pi's word for "no entry",
    /// stays).
    pub fn entry(&mut self, id: &[u8]) -> String {
        if id == b"root" || id.is_empty() {
            return String::from_utf8_lossy(id).into_owned();
        }
        let n = self.entries.len() + 1;
        self.entries
            .entry(id.into())
            .or_insert_with(|| format!("{n:08x}"))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_renamed_consistently_per_session() {
        let mut r = Renames::default();
        assert_eq!(r.session(), "00000000-0000-4000-8000-000000000001");
        assert_eq!(r.entry(b"a1b2c3d4"), "00000001");
        assert_eq!(r.entry(b"ffff0000"), "00000002");
        assert_eq!(r.entry(b"a1b2c3d4"), "00000001");
        assert_eq!(r.entry(b"root"), "root");
        r.session();
        assert_eq!(r.entry(b"ffff0000"), "00000001");
        // Lone surrogates (keyed apart) are two ids, and neither is a written U+FFFD.
        assert_eq!(r.entry(b"\xED\xA0\x80"), "00000002");
        assert_eq!(r.entry(b"\xED\xA0\x81"), "00000003");
        assert_eq!(r.entry("\u{FFFD}".as_bytes()), "00000004");
    }
}
