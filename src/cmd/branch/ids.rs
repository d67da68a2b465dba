//! A session's ids interned to small numbers: the table every `id`, `parentId` and label
//! target goes through while a session is read, so the tree is built on `u32`s. An id is
//! interned by its key (`json::string_key`: its text, but a lone surrogate escape kept apart
//! from U+FFFD and from another one, as Pi's JavaScript strings keep them).

use pi_jsonl_scan::json;
use std::borrow::Cow;

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

    /// The number of the id whose key is `b`.
    pub(super) fn intern(&mut self, b: &[u8]) -> u32 {
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

    /// The number of the id whose key is `b`, when it was interned.
    pub(super) fn get(&self, b: &[u8]) -> Option<u32> {
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
    pub(super) fn release_table(&mut self) {
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
            // A key: valid UTF-8 but for its lone surrogates, each shown as U+FFFD.
            json::key_text(self.text_bytes(key))
        }
    }
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
        let ks: Vec<u32> = texts.iter().map(|t| ids.intern(t.as_bytes())).collect();
        for (t, &k) in texts.iter().zip(&ks) {
            assert_eq!(ids.intern(t.as_bytes()), k, "{t}");
            assert_eq!(ids.get(t.as_bytes()), Some(k));
            assert_eq!(ids.text(k), t.as_str());
        }
        assert_eq!(ids.len(), texts.len());
        assert_eq!(ids.get(b"nope"), None);
        ids.release_table();
        for (t, &k) in texts.iter().zip(&ks).step_by(97) {
            assert_eq!(
                ids.get(t.as_bytes()),
                Some(k),
                "linear search after the table is freed"
            );
        }
        assert_eq!(ids.get(b"0000000g"), None);
    }

    /// Ids that differ only in lone surrogates are different ids, shown as U+FFFD.
    #[test]
    fn ids_keep_lone_surrogates_apart() {
        let mut ids = Ids::default();
        let keys: Vec<Vec<u8>> = [r"\ud800", r"\ud801", "\u{FFFD}"]
            .iter()
            .map(|b| json::string_key(b.as_bytes()).into_owned())
            .collect();
        let ks: Vec<u32> = keys.iter().map(|k| ids.intern(k)).collect();
        assert_eq!(ks, [0, 1, 2]);
        for k in ks {
            assert_eq!(ids.text(k), "\u{FFFD}");
        }
    }
}
