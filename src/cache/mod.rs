//! `--cache` (pi-usage, pi-sessions): per input file, what the tool needs to answer without
//! reading the file again, kept under `$XDG_CACHE_HOME/pi-jsonl/<tool>/` (else
//! `~/.cache/pi-jsonl/<tool>/`, or `--cache-dir DIR`).
//!
//! An entry belongs to a file by device and inode, and holds the file's size, modification and
//! change times when it was read, hashes of the first and last 4 KiB of what was read, its path
//! (to drop the entry once the file is gone), the tool's *summary* (what a run that finds the
//! file unchanged needs) and, for a tool that keeps more, its *details* (what only some runs
//! need: pi-usage's calls one by one). A file whose size and times are those of its entry is
//! not read at all. A file that grew, its first and last 4 KiB of the part read before
//! unchanged, is handed to the tool with the cached summary and the size read (the tool may
//! read the rest only, [`Lookup::Grown`]); anything else (a file rewritten in place: its change
//! time moved even when its size and modification time were set back) is read again. The tools
//! never write an input and never write next to one.
//!
//! The layout (format 3; docs/SCALE.md): one `index.bin` per tool, a table of fixed-size
//! records sorted by device and inode, searched where it is mapped (nothing is parsed or
//! copied to look a file up; each record also says whether the file's first record makes it
//! one the tools read, so that a directory's files need not be opened to be classified:
//! [`Cache::knows_session`]), followed by the paths and summaries; and the details in
//! [`DETAIL_SHARDS`] files `details-XX.bin` by inode, loaded only when a run asks for the
//! details of a file in them. Every cache file is written whole to a temporary file in the
//! same directory and renamed over the old one, after merging what another run wrote
//! meanwhile, so a reader sees one complete file or the other, never a mix (the details are
//! written before the index, and an entry's details are used only when their key is the
//! index's); a file that is damaged (cut short, garbage, another format or version: its
//! trailing checksum or header says so) is ignored with a note, and rewritten.

pub mod codec;
pub mod sessions;
pub mod sets;
pub mod walks;

use crate::sync::lock;
use codec::{Reader, Writer};
use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The options of the tools that cache.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CacheArgs {
    /// Keep what each input file gives in a cache, and use it while the file has not changed
    /// (pi-usage reads a file that only grew from where the cache left off).
    #[arg(long)]
    pub cache: bool,

    /// The cache's directory (implies --cache; default: $XDG_CACHE_HOME/pi-jsonl, else
    /// ~/.cache/pi-jsonl).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Delete this tool's cache (in --cache-dir, or the default directory) and exit.
    #[arg(long)]
    pub cache_clear: bool,
}

impl CacheArgs {
    /// Whether the cache is used.
    pub fn enabled(&self) -> bool {
        self.cache || self.cache_dir.is_some()
    }
}

/// The version of the cache files' layout; a file of another one is ignored.
const FORMAT: u32 = 5;
/// What a cache file starts with.
const MAGIC: &[u8] = b"pi-jsonl cache\n";
/// How many files a tool's details are spread over.
pub const DETAIL_SHARDS: usize = 16;
/// The bytes at each end of what was read whose hashes must still match for a file that grew.
const EDGE: u64 = 4096;
/// The index's name in a tool's directory.
const INDEX: &str = "index.bin";
/// The 64-bit words of one index record: device, inode, size, modification and change times
/// (seconds, nanoseconds), the two edge hashes, where its path and summary are (offset and
/// length of each, from the start of the variable part), the summary's weight (a count the
/// tool gives: pi-usage's distinct calls), and what the file's first record made it
/// ([`IS_SESSION`]).
const WORDS: usize = 15;
/// The flag of a file whose first record makes it one the tools read when they find it under a
/// directory ([`crate::discover::probe`] said [`Probe::Other`](crate::discover::Probe)): a run
/// that finds the file unchanged need not open it to know.
const IS_SESSION: u64 = 1;
const RECORD: usize = WORDS * 8;

/// The cache's root directory: `dir` (`--cache-dir`), else `$XDG_CACHE_HOME/pi-jsonl` when it
/// is an absolute path, else `$HOME/.cache/pi-jsonl`.
pub fn root(dir: Option<&Path>, env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(d) = dir {
        return Some(d.to_path_buf());
    }
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = env("XDG_CACHE_HOME").and_then(absolute) {
        return Some(x.join("pi-jsonl"));
    }
    env("HOME")
        .and_then(absolute)
        .map(|h| h.join(".cache").join("pi-jsonl"))
}

/// A file as the cache knows it: device, inode, size, modification and change times (seconds
/// and nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKey {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl FileKey {
    pub fn of(md: &Metadata) -> FileKey {
        FileKey {
            dev: md.dev(),
            ino: md.ino(),
            size: md.size(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    }

    fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    fn shard(&self) -> usize {
        (self.ino ^ self.dev.rotate_left(17)) as usize % DETAIL_SHARDS
    }

    fn words(&self) -> [u64; 7] {
        let (m, c) = (self.mtime, self.ctime);
        [
            self.dev, self.ino, self.size, m.0 as u64, m.1 as u64, c.0 as u64, c.1 as u64,
        ]
    }

    fn from_words(w: &[u64]) -> FileKey {
        FileKey {
            dev: w[0],
            ino: w[1],
            size: w[2],
            mtime: (w[3] as i64, w[4] as i64),
            ctime: (w[5] as i64, w[6] as i64),
        }
    }
}

/// What the cache has for a file: the tool's value made from its summary.
pub enum Lookup<T> {
    /// The file is as it was read: the value stands for all of it.
    Hit(T),
    /// The file grew and what was read of it is unchanged: the value stands for its first
    /// `size` bytes.
    Grown { value: T, size: u64 },
    /// Nothing usable: read the file.
    Miss,
}

/// A cache file's bytes: mapped (one `mmap` instead of copying them into fresh memory: a cache
/// file is never changed in place, runs write a new one and rename it over the old), else read.
enum FileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl Default for FileBytes {
    fn default() -> FileBytes {
        FileBytes::Read(Vec::new())
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

impl FileBytes {
    /// The file at `path`; `None` when there is none.
    fn load(path: &Path) -> std::io::Result<Option<FileBytes>> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // SAFETY: a read-only map, never written through. The tools replace a cache file by
        // rename, never write one in place, so its bytes do not change while a run has it
        // mapped. (A cache file cut short by hand during a run would end that run with
        // SIGBUS: unlike inputs, cache files are not under `input::mapped`'s guard.)
        // Populated: its pages are taken in one call rather than one fault at a time (a run
        // reads most of the index, in no order).
        match unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            Ok(m) => Ok(Some(FileBytes::Mapped(m))),
            Err(_) => {
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut &file, &mut v)?;
                Ok(Some(FileBytes::Read(v)))
            }
        }
    }
}

/// One index record, read where it lies.
#[derive(Clone, Copy)]
struct Record {
    key: FileKey,
    /// Hashes of the first and last [`EDGE`] bytes of the `key.size` bytes read.
    edges: (u64, u64),
    /// (offset, length) of the path and of the summary in the variable part.
    path: (u64, u64),
    summary: (u64, u64),
    weight: u64,
    flags: u64,
}

/// The index: its records sorted by device and inode, then the variable part. Searched where
/// it lies.
#[derive(Default)]
struct Index {
    bytes: FileBytes,
    /// Where the records begin, how many there are, where the variable part begins.
    table: usize,
    len: usize,
    vars: usize,
    /// Which records this run looked up (their file exists: no `stat` when the index is
    /// written again).
    used: Vec<AtomicBool>,
}

impl Index {
    fn record(&self, i: usize) -> Record {
        let at = self.table + i * RECORD;
        let mut w = [0u64; WORDS];
        for (v, c) in w
            .iter_mut()
            .zip(self.bytes[at..at + RECORD].chunks_exact(8))
        {
            *v = u64::from_le_bytes(c.try_into().unwrap_or_default());
        }
        Record {
            key: FileKey::from_words(&w),
            edges: (w[7], w[8]),
            path: (w[9], w[10]),
            summary: (w[11], w[12]),
            weight: w[13],
            flags: w[14],
        }
    }

    /// The device and inode of record `i`, without reading the rest.
    fn id(&self, i: usize) -> (u64, u64) {
        let at = self.table + i * RECORD;
        let word = |k: usize| {
            let b = &self.bytes[at + 8 * k..at + 8 * k + 8];
            u64::from_le_bytes(b.try_into().unwrap_or_default())
        };
        (word(0), word(1))
    }

    /// The record of the file `id` (a binary search of the sorted table).
    fn find(&self, id: (u64, u64)) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id(mid).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The bytes at (offset, length) of the variable part; `None` past its end (damaged).
    fn var(&self, (at, len): (u64, u64)) -> Option<&[u8]> {
        let start = self.vars.checked_add(usize::try_from(at).ok()?)?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        // The checksum after the variable part is not part of it.
        (end + 8 <= self.bytes.len()).then(|| &self.bytes[start..end])
    }

    /// The index in `bytes` of `tool`, or why it is refused.
    fn parse(tool: &str, bytes: FileBytes) -> Result<Index, String> {
        let (table, len) = {
            let mut r = checked(tool, "index", &bytes)?;
            let len = r.count(RECORD).ok_or("is damaged")?;
            (bytes.len() - 8 - r.rest(), len)
        };
        let vars = table + len * RECORD;
        Ok(Index {
            used: (0..len).map(|_| AtomicBool::new(false)).collect(),
            bytes,
            table,
            len,
            vars,
        })
    }
}

/// A details file: where each file's details are in its bytes.
#[derive(Default)]
struct Details {
    bytes: FileBytes,
    entries: crate::hash::FastMap<(u64, u64), (FileKey, std::ops::Range<usize>)>,
}

impl Details {
    fn parse(tool: &str, bytes: FileBytes) -> Result<Details, String> {
        let mut r = checked(tool, "details", &bytes)?;
        let range_of = |p: &[u8]| {
            let start = p.as_ptr() as usize - bytes.as_ptr() as usize;
            start..start + p.len()
        };
        let mut entries = crate::hash::FastMap::default();
        let parsed = (|| {
            for _ in 0..r.count(57)? {
                let w = (0..7).map(|_| r.u64()).collect::<Option<Vec<_>>>()?;
                let key = FileKey::from_words(&w);
                entries.insert(key.id(), (key, range_of(r.bytes()?)));
            }
            r.is_empty().then_some(())
        })();
        parsed.ok_or("is damaged")?;
        Ok(Details { bytes, entries })
    }
}

/// What this run keeps for one file.
struct Put {
    key: FileKey,
    edges: (u64, u64),
    path: Vec<u8>,
    summary: Vec<u8>,
    weight: u64,
    flags: u64,
    details: Option<Vec<u8>>,
}

/// One tool's cache, for one run.
pub struct Cache {
    tool: &'static str,
    dir: PathBuf,
    index: OnceLock<Index>,
    details: Vec<OnceLock<Details>>,
    puts: Mutex<crate::hash::FastMap<(u64, u64), Put>>,
    /// The walk this run keeps ([`Cache::walk`]).
    walk_put: Mutex<Option<walks::KeptWalk>>,
    /// The set of files this run found disjoint ([`Cache::keep_disjoint`]).
    set_put: Mutex<Option<u64>>,
}

impl Cache {
    /// The cache of `tool` that `args` ask for (`None` without --cache or when there is no
    /// directory for it: noted).
    pub fn open(tool: &'static str, args: &CacheArgs) -> Option<Cache> {
        if !args.enabled() {
            return None;
        }
        let Some(root) = root(args.cache_dir.as_deref(), |k| std::env::var_os(k)) else {
            note(
                tool,
                None,
                "no cache directory (HOME is not set); --cache ignored",
            );
            return None;
        };
        let dir = root.join(tool);
        // A directory that cannot be one (a file stands in its way) or looked at is said once
        // here, not once for each cache file read and written.
        if let Some(e) = unusable(&dir) {
            note(
                tool,
                Some(&dir),
                &format!("cannot use the cache: {e}; --cache ignored"),
            );
            return None;
        }
        one_arena();
        Some(Cache {
            tool,
            dir,
            index: OnceLock::new(),
            details: (0..DETAIL_SHARDS).map(|_| OnceLock::new()).collect(),
            puts: Mutex::default(),
            walk_put: Mutex::default(),
            set_put: Mutex::default(),
        })
    }

    /// Where this tool's cache files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn details_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("details-{i:02x}.bin"))
    }

    /// Loads the cache file `name` with `parse`; a damaged one (or one that cannot be read) is
    /// ignored and `note` told why.
    fn load<T: Default>(
        &self,
        name: &Path,
        note: &mut dyn FnMut(String),
        parse: impl FnOnce(&str, FileBytes) -> Result<T, String>,
    ) -> T {
        match FileBytes::load(name) {
            Ok(Some(bytes)) => parse(self.tool, bytes).unwrap_or_else(|why| {
                note(format!(
                    "cache file {} {why}; ignored (it is written again)",
                    name.display()
                ));
                T::default()
            }),
            Ok(None) => T::default(),
            Err(e) => {
                note(format!("cache file {}: {e}; ignored", name.display()));
                T::default()
            }
        }
    }

    /// [`Cache::load`] of a file no save is sure to write again (the walks, the sets), its
    /// problems noted without a file's name: a damaged one is also removed, so that later
    /// runs do not say so again.
    fn load_or_remove<T: Default>(
        &self,
        name: &Path,
        parse: impl FnOnce(&str, FileBytes) -> Result<T, String>,
    ) -> T {
        let mut damaged = false;
        let kept = self.load(name, &mut |m| note(self.tool, None, &m), |tool, bytes| {
            parse(tool, bytes).inspect_err(|_| damaged = true)
        });
        if damaged {
            let _ = std::fs::remove_file(name);
        }
        kept
    }

    /// Loads the index (a damaged one is noted here, without a file's name).
    pub fn preload_index(&self) {
        self.index(&mut |m| note(self.tool, None, &m));
    }

    /// The index, loaded the first time.
    fn index(&self, note: &mut dyn FnMut(String)) -> &Index {
        self.index
            .get_or_init(|| self.load(&self.dir.join(INDEX), note, Index::parse))
    }

    /// What the cache has for the file at `path`, which is `key` now, made a value by `make`
    /// from its summary and the key it was kept under (`None`: the summary is damaged, a
    /// miss); [`Lookup::Grown`] only when the tool can `continue` a file that grew.
    pub fn lookup<'c, T>(
        &'c self,
        key: &FileKey,
        path: &Path,
        continues: bool,
        note: &mut dyn FnMut(String),
        make: impl FnOnce(&'c [u8], &FileKey) -> Option<T>,
    ) -> Lookup<T> {
        let index = self.index(note);
        let Some(i) = index.find(key.id()) else {
            return Lookup::Miss;
        };
        index.used[i].store(true, Ordering::Relaxed);
        let e = index.record(i);
        let grown = continues && key.size > e.key.size;
        if e.key != *key && !grown {
            return Lookup::Miss;
        }
        let Some(value) = index.var(e.summary).and_then(|s| make(s, &e.key)) else {
            return Lookup::Miss;
        };
        if e.key == *key {
            return Lookup::Hit(value);
        }
        let now = File::open(path)
            .ok()
            .and_then(|f| edge_hashes(&f, e.key.size).ok());
        if now == Some(e.edges) {
            return Lookup::Grown {
                value,
                size: e.key.size,
            };
        }
        Lookup::Miss
    }

    /// The summaries' weight (what the tool counted in each, [`Cache::put`]) a run over `inputs`
    /// files can expect: the index's total, scaled down when it holds more files (an estimate,
    /// to size a table once rather than grow it).
    pub fn weight(&self, inputs: usize, note: &mut dyn FnMut(String)) -> u64 {
        let index = self.index(note);
        let total: u64 = (0..index.len).map(|i| index.record(i).weight).sum();
        match index.len {
            0 => 0,
            n if inputs >= n => total,
            n => total / n as u64 * inputs as u64,
        }
    }

    /// Whether the cache knows the file `st` describes, as it is now, for one the tools read
    /// when they find it under a directory (its first record said so when it was kept): what
    /// lets a run that finds it unchanged skip opening it to classify it.
    pub fn knows_session(&self, st: &crate::discover::Stat) -> bool {
        let key = st.key;
        let index = self.index(&mut |m| note(self.tool, None, &m));
        index.find(key.id()).is_some_and(|i| {
            let r = index.record(i);
            r.key == key && r.flags & IS_SESSION != 0
        })
    }

    /// The details kept with the summary of the file `key` (the key a lookup's `make` was
    /// given); `None` when they are not there (or their file is damaged: noted).
    pub fn details(&self, key: &FileKey, note: &mut dyn FnMut(String)) -> Option<&[u8]> {
        let i = key.shard();
        let d =
            self.details[i].get_or_init(|| self.load(&self.details_path(i), note, Details::parse));
        match d.entries.get(&key.id()) {
            Some((k, r)) if k == key => d.bytes.get(r.clone()),
            _ => None,
        }
    }

    /// Keeps `summary` (of `weight`: [`Cache::weight`]) and `details` for the file at `path`,
    /// open as `file`, which was `key` when it was read (and still is: the caller checked).
    pub fn put(
        &self,
        key: &FileKey,
        path: &Path,
        file: &File,
        (summary, weight): (Vec<u8>, u64),
        details: Option<Vec<u8>>,
    ) {
        let Ok(edges) = edge_hashes(file, key.size) else {
            return;
        };
        let first = (key.size > 0).then(|| crate::discover::probe_nonempty(file));
        let is_session = matches!(first, Some(Ok(crate::discover::Probe::Other)));
        let put = Put {
            key: *key,
            edges,
            path: path.as_os_str().as_bytes().to_vec(),
            summary,
            weight,
            flags: if is_session { IS_SESSION } else { 0 },
            details,
        };
        let mut puts = lock(&self.puts);
        puts.insert(key.id(), put);
    }

    /// Writes what this run kept, merged with what the cache files hold now; a failure is
    /// noted (the run's output does not depend on it).
    pub fn save(&self) {
        let mut failed = self.save_walk().and_then(|()| self.save_set()).err();
        let puts = std::mem::take(&mut *lock(&self.puts));
        if !puts.is_empty() {
            if let Err(e) = self.write(&puts) {
                failed.get_or_insert(e);
            }
        }
        // Noted once: the files are in one directory, what fails for one fails for the rest.
        if let Some(e) = failed {
            let msg = format!("cannot write the cache: {e}");
            note(self.tool, Some(&self.dir), &msg);
        }
    }

    /// Writes the details files `puts` touch, then the index: this run's entries, those the
    /// index holds now (another run may have written it since this one loaded it), less those
    /// whose file is gone (or is another file now).
    fn write(&self, puts: &crate::hash::FastMap<(u64, u64), Put>) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let now = FileBytes::load(&self.dir.join(INDEX))
            .ok()
            .flatten()
            .and_then(|b| Index::parse(self.tool, b).ok())
            .unwrap_or_default();
        let loaded = self.index.get();
        // Whether this run looked the file `id` up (it exists: no `stat` for it here).
        let looked_up = |id: (u64, u64)| {
            loaded.is_some_and(|l| {
                l.find(id)
                    .is_some_and(|i| l.used[i].load(Ordering::Relaxed))
            })
        };
        let mut entries: crate::hash::FastMap<(u64, u64), IndexEntry<'_>> = Default::default();
        // What the index holds now (another run may have written it since) overrides what
        // this run loaded.
        for index in [loaded, Some(&now)].into_iter().flatten() {
            for i in 0..index.len {
                let r = index.record(i);
                let (Some(path), Some(summary)) = (index.var(r.path), index.var(r.summary)) else {
                    continue;
                };
                let e = IndexEntry {
                    key: r.key,
                    edges: r.edges,
                    path,
                    summary,
                    weight: r.weight,
                    flags: r.flags,
                    looked_up: looked_up(r.key.id()),
                };
                entries.insert(r.key.id(), e);
            }
        }
        entries.retain(|id, e| puts.contains_key(id) || e.looked_up || exists(e.path, e.key.id()));
        for p in puts.values() {
            let e = IndexEntry {
                key: p.key,
                edges: p.edges,
                path: &p.path,
                summary: &p.summary,
                weight: p.weight,
                flags: p.flags,
                looked_up: true,
            };
            entries.insert(p.key.id(), e);
        }
        for shard in 0..DETAIL_SHARDS {
            if puts
                .values()
                .any(|p| p.details.is_some() && p.key.shard() == shard)
            {
                self.write_details(shard, puts, &entries)?;
            }
        }
        let mut sorted: Vec<&IndexEntry<'_>> = entries.values().collect();
        sorted.sort_unstable_by_key(|e| e.key.id());
        self.replace(INDEX.as_ref(), &serialize_index(self.tool, &sorted))
    }

    /// Writes details file `shard`: this run's details, and those it holds now whose entry is
    /// in `entries` (the index about to be written) under the same key.
    fn write_details(
        &self,
        shard: usize,
        puts: &crate::hash::FastMap<(u64, u64), Put>,
        entries: &crate::hash::FastMap<(u64, u64), IndexEntry<'_>>,
    ) -> std::io::Result<()> {
        let name = self.details_path(shard);
        let now = FileBytes::load(&name)
            .ok()
            .flatten()
            .and_then(|b| Details::parse(self.tool, b).ok())
            .unwrap_or_default();
        let mut kept: Vec<(FileKey, &[u8])> = Vec::new();
        for (id, (key, range)) in &now.entries {
            let current = entries.get(id).is_some_and(|e| e.key == *key);
            if current && !puts.contains_key(id) {
                kept.push((*key, &now.bytes[range.clone()]));
            }
        }
        for p in puts.values().filter(|p| p.key.shard() == shard) {
            if let Some(d) = &p.details {
                kept.push((p.key, d));
            }
        }
        kept.sort_unstable_by_key(|(k, _)| k.id());
        let mut w = header(self.tool, "details");
        w.var(kept.len() as u64);
        for (key, bytes) in kept {
            for v in key.words() {
                w.u64(v);
            }
            w.bytes(bytes);
        }
        self.replace(name.file_name().unwrap_or_default().as_ref(), &sealed(w))
    }

    /// Writes `bytes` as the cache file `name`: to a temporary file, renamed over it.
    fn replace(&self, name: &Path, bytes: &[u8]) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            name.display(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = File::create(&tmp).and_then(|mut f| f.write_all(bytes));
        let renamed = written.and_then(|()| fs::rename(&tmp, self.dir.join(name)));
        if renamed.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        renamed
    }
}

/// An entry of the index being written.
struct IndexEntry<'a> {
    key: FileKey,
    edges: (u64, u64),
    path: &'a [u8],
    summary: &'a [u8],
    weight: u64,
    flags: u64,
    /// Whether this run looked its file up (it exists: not looked up again).
    looked_up: bool,
}

/// Whether the file at `path` still exists and is the file `id`.
fn exists(path: &[u8], id: (u64, u64)) -> bool {
    let p = Path::new(std::ffi::OsStr::from_bytes(path));
    fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == id)
}

/// Makes the allocator (glibc's) keep one arena for every thread, as a run that uses the cache
/// begins (before its threads start). Such a run is short and made of small allocations that
/// live to its end (the files found, their descriptions or sums), and each further arena grows
/// its heap a page at a time, one `mprotect` each: 530 of them in a `pi-sessions --cache` run
/// that found 2,000 files in the cache (task-clock 12.3-14.3 ms against 11.5-11.8 ms with
/// one arena, `perf stat -r 30`); the one arena grows by `brk` in steps of 128 KiB.
fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator, which is thread-safe.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Deletes `tool`'s cache in the directory `args` name: `Err` says why it could not.
pub fn clear(tool: &'static str, args: &CacheArgs) -> Result<(), String> {
    let root = root(args.cache_dir.as_deref(), |k| std::env::var_os(k))
        .ok_or("no cache directory (HOME is not set)")?;
    let dir = root.join(tool);
    match fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot delete {}: {e}", dir.display())),
    }
}

/// `--cache-clear`: deletes `tool`'s cache; the exit status (2 when it could not, said why).
pub fn clear_for(tool: &'static str, args: &CacheArgs) -> std::process::ExitCode {
    match clear(tool, args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            crate::diag::report_global(tool, e);
            std::process::ExitCode::from(2)
        }
    }
}

/// Why the cache directory `dir` cannot be used: it, or the nearest of the folders above it
/// that exists, is not a directory, or cannot be looked at. `None` when it can (what is
/// missing is made when the cache is written).
fn unusable(dir: &Path) -> Option<std::io::Error> {
    for d in dir.ancestors().filter(|d| !d.as_os_str().is_empty()) {
        match fs::metadata(d) {
            Ok(m) if m.is_dir() => return None,
            Ok(_) => {
                return Some(std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", d.display()),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Some(e),
        }
    }
    None
}

/// Prints `tool: [where: ]note: msg` on stderr: neither a problem of the run nor a change of
/// its exit status.
pub fn note(tool: &'static str, place: Option<&Path>, msg: &str) {
    let place = place.map(|p| p.to_string_lossy().into_owned());
    let mut d = crate::diag::Diags::new(tool, place.as_deref().unwrap_or(""), true);
    match place {
        Some(_) => d.note(None, msg),
        None => {
            let line = format!("{tool}: note: {}\n", crate::diag::sanitize(msg));
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

/// Hashes of the first and the last [`EDGE`] bytes of the first `size` bytes of `file`.
fn edge_hashes(file: &File, size: u64) -> std::io::Result<(u64, u64)> {
    let n = size.min(EDGE);
    let mut buf = vec![0; n as usize];
    file.read_exact_at(&mut buf, 0)?;
    let head = xxhash_rust::xxh3::xxh3_64(&buf);
    file.read_exact_at(&mut buf, size - n)?;
    Ok((head, xxhash_rust::xxh3::xxh3_64(&buf)))
}

/// The header a cache file of `tool` starts with; `role` says which file it is.
fn header(tool: &str, role: &str) -> Writer {
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.u32(FORMAT);
    w.str(tool);
    w.str(env!("CARGO_PKG_VERSION"));
    w.str(role);
    w
}

/// The bytes of `w` and their checksum after them.
fn sealed(mut w: Writer) -> Vec<u8> {
    let sum = xxhash_rust::xxh3::xxh3_64(&w.0);
    w.u64(sum);
    w.0
}

/// The index of `tool` holding `entries`, sorted by device and inode.
fn serialize_index(tool: &str, entries: &[&IndexEntry<'_>]) -> Vec<u8> {
    let mut w = header(tool, "index");
    w.var(entries.len() as u64);
    let mut at = 0u64;
    let mut place = |len: usize| {
        let here = (at, len as u64);
        at += len as u64;
        here
    };
    for e in entries {
        let (path, summary) = (place(e.path.len()), place(e.summary.len()));
        let words = e
            .key
            .words()
            .into_iter()
            .chain([e.edges.0, e.edges.1, path.0, path.1, summary.0, summary.1])
            .chain([e.weight, e.flags]);
        for v in words {
            w.u64(v);
        }
    }
    for e in entries {
        w.0.extend_from_slice(e.path);
        w.0.extend_from_slice(e.summary);
    }
    sealed(w)
}

/// A reader of what follows the header of a cache file of `tool` in the role `role`, its
/// checksum checked and left out; or why the file is refused.
fn checked<'b>(tool: &str, role: &str, bytes: &'b [u8]) -> Result<Reader<'b>, String> {
    let damaged = || "is damaged".to_string();
    let (body, sum) = bytes
        .split_at_checked(bytes.len().wrapping_sub(8))
        .ok_or_else(damaged)?;
    let sum = u64::from_le_bytes(sum.try_into().map_err(|_| damaged())?);
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or("is not a pi-jsonl cache file")?;
    if xxhash_rust::xxh3::xxh3_64(body) != sum {
        return Err(damaged());
    }
    let mut r = Reader::new(rest);
    let format = r.u32().ok_or_else(damaged)?;
    if format != FORMAT {
        return Err(format!("has format {format}, not {FORMAT}"));
    }
    let (t, v) = (r.str().ok_or_else(damaged)?, r.str().ok_or_else(damaged)?);
    if t != tool || v != env!("CARGO_PKG_VERSION") {
        return Err(format!(
            "was written by {t} {v}, not {tool} {}",
            env!("CARGO_PKG_VERSION")
        ));
    }
    if r.str() != Some(role) {
        return Err(format!("is not a cache {role} file"));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn the_root_is_the_option_else_xdg_else_home() {
        fn env(
            xdg: Option<&'static str>,
            home: Option<&'static str>,
        ) -> impl Fn(&str) -> Option<OsString> {
            move |k| match k {
                "XDG_CACHE_HOME" => xdg.map(OsString::from),
                "HOME" => home.map(OsString::from),
                _ => None,
            }
        }
        let dir = Path::new("/d");
        assert_eq!(root(Some(dir), env(Some("/x"), None)), Some("/d".into()));
        let got = root(None, env(Some("/x"), Some("/h")));
        assert_eq!(got, Some("/x/pi-jsonl".into()));
        // A relative XDG_CACHE_HOME is ignored, as the XDG specification says.
        let got = root(None, env(Some("rel"), Some("/h")));
        assert_eq!(got, Some("/h/.cache/pi-jsonl".into()));
        assert_eq!(root(None, env(None, None)), None);
    }

    /// A cache of `tool` in a fresh directory under the system's temporary one.
    fn scratch(name: &str) -> (PathBuf, Cache) {
        let dir =
            std::env::temp_dir().join(format!("pi-jsonl-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let cache = reopen(&dir);
        (dir, cache)
    }

    /// pi-usage's cache in `dir` (made by [`scratch`]) as a later run opens it.
    fn reopen(dir: &Path) -> Cache {
        let args = CacheArgs {
            cache_dir: Some(dir.join("cache")),
            ..CacheArgs::default()
        };
        Cache::open("pi-usage", &args).unwrap()
    }

    fn index_of(cache: &Cache) -> Index {
        let bytes = FileBytes::load(&cache.dir.join(INDEX)).unwrap().unwrap();
        Index::parse("pi-usage", bytes).unwrap()
    }

    #[test]
    fn an_entry_whose_file_is_gone_is_dropped_when_the_index_is_written() {
        let (dir, cache) = scratch("prune");
        let kept = dir.join("kept.jsonl");
        fs::write(&kept, "{}\n").unwrap();
        let file = File::open(&kept).unwrap();
        let key = FileKey::of(&file.metadata().unwrap());
        // An index that knows a file that no longer exists.
        let gone_path = dir.join("gone.jsonl").into_os_string().into_vec();
        let gone = IndexEntry {
            key: FileKey {
                ino: key.ino + 1,
                ..key
            },
            edges: (0, 0),
            path: &gone_path,
            summary: b"gone",
            weight: 3,
            flags: 0,
            looked_up: false,
        };
        fs::create_dir_all(&cache.dir).unwrap();
        fs::write(cache.dir.join(INDEX), serialize_index("pi-usage", &[&gone])).unwrap();
        assert_eq!(index_of(&cache).len, 1);
        cache.put(
            &key,
            &kept,
            &file,
            (b"kept".to_vec(), 7),
            Some(b"calls".to_vec()),
        );
        cache.save();
        let index = index_of(&cache);
        assert_eq!(index.len, 1);
        let r = index.record(0);
        assert_eq!((r.key, index.var(r.summary)), (key, Some(&b"kept"[..])));
        // A run after it finds the summary and the details.
        let again = reopen(&dir);
        let found = again.lookup(&key, &kept, false, &mut |m| panic!("{m}"), |s, k| {
            Some((s.to_vec(), *k))
        });
        assert!(matches!(found, Lookup::Hit((s, k)) if s == b"kept" && k == key));
        assert_eq!(
            again.details(&key, &mut |m| panic!("{m}")),
            Some(&b"calls"[..])
        );
        // Details are given only under the key they were kept with.
        let other = FileKey {
            size: key.size + 1,
            ..key
        };
        assert_eq!(again.details(&other, &mut |m| panic!("{m}")), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_is_known_for_a_session_only_when_its_first_record_says_so_and_it_is_unchanged() {
        let (dir, cache) = scratch("knows");
        let session = dir.join("s.jsonl");
        fs::write(&session, "\n{\"type\":\"session\",\"id\":\"s\"}\n").unwrap();
        let foreign = dir.join("f.jsonl");
        fs::write(&foreign, "{\"version\":1}\n").unwrap();
        for p in [&session, &foreign] {
            let file = File::open(p).unwrap();
            let key = FileKey::of(&file.metadata().unwrap());
            cache.put(&key, p, &file, (b"summary".to_vec(), 0), None);
        }
        cache.save();
        let again = reopen(&dir);
        let knows = |p: &Path| {
            let st = crate::discover::Stat::of(&fs::metadata(p).unwrap());
            again.knows_session(&st)
        };
        assert!(knows(&session));
        assert!(!knows(&foreign));
        // Another file, and the same file grown, are not known.
        let other = dir.join("o.jsonl");
        fs::copy(&session, &other).unwrap();
        assert!(!knows(&other));
        fs::OpenOptions::new()
            .append(true)
            .open(&session)
            .and_then(|mut f| f.write_all(b"{}\n"))
            .unwrap();
        assert!(!knows(&session));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_index_reads_back_sorted_and_damage_is_refused() {
        let key = |ino: u64| FileKey {
            dev: 1,
            ino,
            size: 3,
            mtime: (4, 5),
            ctime: (6, -7),
        };
        let entries: Vec<IndexEntry<'_>> = [9, 2, 5]
            .into_iter()
            .map(|ino| IndexEntry {
                key: key(ino),
                edges: (8, ino),
                path: b"/p",
                summary: b"summary",
                weight: ino,
                flags: ino & 1,
                looked_up: false,
            })
            .collect();
        let mut sorted: Vec<&IndexEntry<'_>> = entries.iter().collect();
        sorted.sort_unstable_by_key(|e| e.key.id());
        let bytes = serialize_index("pi-usage", &sorted);
        let index = Index::parse("pi-usage", FileBytes::Read(bytes.clone())).unwrap();
        for ino in [2, 5, 9] {
            let r = index.record(index.find((1, ino)).unwrap());
            assert_eq!((r.key, r.edges, r.weight), (key(ino), (8, ino), ino));
            assert_eq!(r.flags, ino & 1);
            assert_eq!(index.var(r.path), Some(&b"/p"[..]));
            assert_eq!(index.var(r.summary), Some(&b"summary"[..]));
        }
        assert_eq!(index.find((1, 3)), None);
        let refused = |b: &[u8]| Index::parse("pi-usage", FileBytes::Read(b.to_vec())).err();
        assert!(Index::parse("pi-sessions", FileBytes::Read(bytes.clone()))
            .err()
            .unwrap()
            .contains("written by"));
        for cut in 0..bytes.len() {
            assert!(refused(&bytes[..cut]).is_some(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        assert_eq!(refused(&flipped).unwrap(), "is damaged");
        assert!(refused(b"garbage garbage garbage").is_some());
        // A details file is not an index.
        let details = sealed(header("pi-usage", "details"));
        assert!(refused(&details).unwrap().contains("not a cache index"));
    }
}
