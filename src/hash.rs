//! Hash tables keyed by the ids and names of a session, hashed with XXH3 instead of the
//! standard library's SipHash: several times faster on short keys, and still well mixed (a
//! table keyed by ids an adversary chose degrades no worse than with any fixed-seed hash).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`Xxh`] hashing.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Xxh>>;
/// A `HashSet` with [`Xxh`] hashing.
pub type FastSet<K> = HashSet<K, BuildHasherDefault<Xxh>>;

/// XXH3-64 of the bytes written, each write seeded with the state so far.
#[derive(Default, Clone, Copy)]
pub struct Xxh(u64);

impl Hasher for Xxh {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    // `str` and `[u8]` keys end with a `write_u8` / `write_usize`: mixed in cheaply.
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(&n.to_le_bytes(), self.0);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// XXH3-64 of a string: the key of tables that keep only a 64-bit hash of each id.
pub fn hash_str(s: &str) -> u64 {
    hash_bytes(s.as_bytes())
}

/// [`hash_str`] of bytes (an id's key, `json::string_key`, which need not be UTF-8).
pub fn hash_bytes(b: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(b)
}

/// XXH3-128 of some bytes: a key that stands for them in a table (a collision among even
/// billions of keys is not a practical concern), 16 bytes in place of a string.
pub fn hash128(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// A map keyed by [`hash128`] values: they are hashes already, so the table uses their bits.
pub type Hash128Map<V> = HashMap<u128, V, BuildHasherDefault<Prehashed>>;
/// A set of [`hash128`] values.
pub type Hash128Set = HashSet<u128, BuildHasherDefault<Prehashed>>;

/// The hasher of keys that are hashes: folds them to 64 bits.
#[derive(Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not reached for u128 keys (`write_u128`); kept correct for any key.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = (v as u64) ^ ((v >> 64) as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_differ_hash_apart() {
        let mut m: FastMap<Box<str>, usize> = FastMap::default();
        for i in 0..10_000 {
            m.insert(format!("{i:08x}").into(), i);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get("000000ff"), Some(&255));
        let mut s: FastSet<u64> = FastSet::default();
        s.extend(0..1000u64);
        assert!(s.contains(&999) && !s.contains(&1000));
        assert_ne!(hash_str("a"), hash_str("b"));
    }
}
