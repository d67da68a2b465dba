//! Sets of files whose call identities are known to be pairwise disjoint (`sets.bin` in
//! pi-usage's cache directory): what lets a run over the same files, all unchanged, skip the
//! set of identities seen that its "first occurrence counts" rule needs otherwise.
//!
//! pi-usage leaves out a call whose identity an earlier input had. When no identity is shared
//! by two of the files, no call is left out for an earlier file's sake, in any order, and
//! the set of identities seen across files decides nothing: each file's own repeats are left
//! out by its own sums (or its own calls). A run learns that its files are such a set when
//! each was taken from the cache as summed and none of them had an identity an earlier one had
//! (`UsageReport::see_new` said so every time); it keeps the set under a hash of every file's
//! key (device, inode, size, modification and change time), in argument order. A later run
//! whose inputs have the same keys has the same calls in them (what the cache trusts of a key
//! already) and skips the set; any file appended to, rewritten, replaced, added or removed
//! changes the hash, and the run checks identities again as without the cache. (A file that
//! is not as the set was kept when its turn comes — changed since it was looked up, or no
//! longer in the cache — is read, and the run marks the identities of the files before it seen
//! and checks from there on: `cmd::usage::cached::run`.)

use super::codec::Writer;
use super::{checked, header, sealed, Cache, FileKey};
use crate::sync::lock;
use std::path::Path;

/// The sets file's name in a tool's directory.
const SETS: &str = "sets.bin";
/// How many sets the file keeps, the latest first.
const KEEP: usize = 16;

/// The hash a set of files is kept under: every file's key, in order.
pub fn set_of<'k>(keys: impl ExactSizeIterator<Item = &'k FileKey>) -> u64 {
    let mut w = Writer::default();
    w.var(keys.len() as u64);
    for k in keys {
        for v in k.words() {
            w.u64(v);
        }
    }
    xxhash_rust::xxh3::xxh3_64(&w.0)
}

impl Cache {
    /// Whether the files whose keys gave `set` ([`set_of`]) are kept as having pairwise
    /// disjoint call identities. (A damaged sets file is noted, and written again.)
    pub fn disjoint(&self, set: u64) -> bool {
        self.sets_kept().contains(&set)
    }

    /// Keeps `set` as one of files with pairwise disjoint identities (written by
    /// [`Cache::save`]).
    pub fn keep_disjoint(&self, set: u64) {
        *lock(&self.set_put) = Some(set);
    }

    /// The sets the sets file holds, the latest first.
    fn sets_kept(&self) -> Vec<u64> {
        self.load_or_remove(&self.dir.join(SETS), |tool, bytes| sets(tool, &bytes))
    }

    /// Writes the set this run kept before the others the sets file holds now (at most
    /// [`KEEP`] in all).
    pub(super) fn save_set(&self) -> std::io::Result<()> {
        let put = lock(&self.set_put).take();
        let Some(put) = put else {
            return Ok(());
        };
        std::fs::create_dir_all(&self.dir)?;
        let others = self.sets_kept().into_iter().filter(|s| *s != put);
        let kept: Vec<u64> = std::iter::once(put).chain(others).take(KEEP).collect();
        let mut w = header(self.tool, "sets");
        w.var(kept.len() as u64);
        for s in kept {
            w.u64(s);
        }
        self.replace(Path::new(SETS), &sealed(w))
    }
}

/// The sets in `bytes` (a sets file of `tool`); `Err` says why the file is refused.
fn sets(tool: &str, bytes: &[u8]) -> Result<Vec<u64>, String> {
    let mut r = checked(tool, "sets", bytes)?;
    let n = r.count(8).ok_or("is damaged")?;
    let sets = (0..n).map(|_| r.u64()).collect::<Option<Vec<u64>>>();
    sets.filter(|_| r.is_empty())
        .ok_or_else(|| "is damaged".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ino: u64, size: u64) -> FileKey {
        FileKey {
            dev: 1,
            ino,
            size,
            mtime: (2, 3),
            ctime: (4, 5),
        }
    }

    #[test]
    fn a_set_is_another_when_any_key_or_the_order_changes() {
        let (a, b) = (key(1, 10), key(2, 20));
        let base = set_of([a, b].iter());
        assert_eq!(base, set_of([a, b].iter()));
        assert_ne!(base, set_of([b, a].iter()));
        assert_ne!(base, set_of([a].iter()));
        assert_ne!(base, set_of([a, key(2, 21)].iter()));
        assert_ne!(base, set_of([a, b, b].iter()));
    }

    #[test]
    fn kept_sets_read_back_and_damage_is_refused() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-sets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let args = crate::cache::CacheArgs {
            cache_dir: Some(dir.clone()),
            ..Default::default()
        };
        let open = || Cache::open("pi-usage", &args).expect("a cache");
        let c = open();
        assert!(!c.disjoint(7));
        c.keep_disjoint(7);
        c.save();
        for s in 100..100 + KEEP as u64 {
            let c = open();
            c.keep_disjoint(s);
            c.save();
        }
        let c = open();
        assert!(c.disjoint(100 + KEEP as u64 - 1));
        assert!(!c.disjoint(7), "only the latest {KEEP} are kept");
        let path = dir.join("pi-usage").join(SETS);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 9;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(!open().disjoint(100 + KEEP as u64 - 1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
