//! `--cache` (pi-usage, pi-sessions): per input file, what the tool needs to answer without
//! reading the file again, kept under `$XDG_CACHE_HOME/pi-jsonl/<tool>/` (else
//! `~/.cache/pi-jsonl/<tool>/`, or `--cache-dir DIR`).
//!
//! An entry belongs to a file by device and inode, and holds the file's size, modification and
//! change times when it was read, hashes of the first and last 4 KiB of what was read, its path
//! (to drop the entry once the file is gone) and the tool's payload. A file whose size and
//! times are those of its entry is not read at all. A file that grew, its first and last 4 KiB
//! of the part read before unchanged, is handed to the tool with the cached payload and the
//! size read (the tool may read the rest only, [`Lookup::Grown`]); anything else (a file
//! rewritten in place: its change time moved even when its size and modification time were set
//! back) is read again. The tools never write an input and never write next to one.
//!
//! The entries are spread over [`SHARDS`] files by inode (a run loads only the files its inputs
//! fall in, and rewrites only those it changed). A cache file is written whole to a temporary
//! file in the same directory and renamed over the old one, after merging what another run
//! wrote meanwhile, so a reader sees one complete file or the other, never a mix; a file that is
//! damaged (cut short, garbage, another format or version: its trailing checksum or header says
//! so) is ignored with a note, and rewritten.

pub mod codec;
pub mod sessions;

use codec::{Reader, Writer};
use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
const FORMAT: u32 = 1;
/// What a cache file starts with.
const MAGIC: &[u8] = b"pi-jsonl cache\n";
/// How many files a tool's entries are spread over.
pub const SHARDS: usize = 64;
/// The bytes at each end of what was read whose hashes must still match for a file that grew.
const EDGE: u64 = 4096;

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

    fn shard(&self) -> usize {
        (self.ino ^ self.dev.rotate_left(17)) as usize % SHARDS
    }
}

/// What the cache has for a file: the tool's value made from the payload.
pub enum Lookup<T> {
    /// The file is as it was read: the value stands for all of it.
    Hit(T),
    /// The file grew and what was read of it is unchanged: the value stands for its first
    /// `size` bytes.
    Grown { value: T, size: u64 },
    /// Nothing usable: read the file.
    Miss,
}

/// Where an entry's path or payload is: in the bytes of the cache file it was loaded from (not
/// copied out: a run that reads nothing again copies nothing), or its own.
#[derive(Debug, Clone)]
enum Payload {
    Loaded(std::ops::Range<usize>),
    Own(Vec<u8>),
}

/// One file's entry.
#[derive(Clone, Debug)]
struct Entry {
    key: FileKey,
    /// Hashes of the first and last [`EDGE`] bytes of the `key.size` bytes read.
    edges: (u64, u64),
    path: Payload,
    payload: Payload,
}

impl Payload {
    /// The bytes, `file` being those of the cache file they were loaded from.
    fn get<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
        match self {
            Payload::Loaded(r) => &file[r.clone()],
            Payload::Own(v) => v,
        }
    }
}

impl Entry {
    /// The payload, `file` being the bytes of the cache file it was loaded from.
    fn payload<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
        self.payload.get(file)
    }
}

/// The entries of a cache file by device and inode.
type Entries = crate::hash::FastMap<(u64, u64), Entry>;

/// The entries of one cache file, loaded the first time an input falls in it.
#[derive(Default)]
struct Shard {
    loaded: bool,
    changed: bool,
    /// The cache file's bytes, which loaded payloads point into.
    file: FileBytes,
    entries: Entries,
    /// The entries of files this run looked up or read: they exist.
    used: crate::hash::FastSet<(u64, u64)>,
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
    fn load(path: &Path) -> std::io::Result<FileBytes> {
        let file = File::open(path)?;
        // SAFETY: a read-only map, never written through. The tools replace a cache file by
        // rename, never write one in place, so its bytes do not change while a run has it
        // mapped. (A cache file cut short by hand during a run would end that run with
        // SIGBUS: unlike inputs, cache files are not under `input::mapped`'s guard.)
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => Ok(FileBytes::Mapped(m)),
            Err(_) => {
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut &file, &mut v)?;
                Ok(FileBytes::Read(v))
            }
        }
    }
}

/// One tool's cache, for one run.
pub struct Cache {
    tool: &'static str,
    dir: PathBuf,
    shards: Vec<Mutex<Shard>>,
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
        Some(Cache {
            tool,
            dir: root.join(tool),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        })
    }

    /// Where this tool's cache files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn shard_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{i:02x}.bin"))
    }

    /// The shard of `key`, loaded; a damaged file is ignored and `note` told why.
    fn shard(
        &self,
        key: &FileKey,
        note: &mut dyn FnMut(String),
    ) -> std::sync::MutexGuard<'_, Shard> {
        let i = key.shard();
        let mut s = self.shards[i].lock().unwrap_or_else(|e| e.into_inner());
        if !s.loaded {
            s.loaded = true;
            let path = self.shard_path(i);
            match FileBytes::load(&path) {
                Ok(bytes) => match parse(self.tool, &bytes) {
                    Ok(entries) => {
                        s.used.reserve(entries.len());
                        (s.file, s.entries) = (bytes, entries);
                    }
                    Err(why) => note(format!(
                        "cache file {} {why}; ignored (it is written again)",
                        path.display()
                    )),
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => note(format!("cache file {}: {e}; ignored", path.display())),
            }
        }
        s
    }

    /// What the cache has for the file at `path`, which is `key` now, made a value by `make`
    /// (`None`: the payload is damaged, a miss); [`Lookup::Grown`] only when the tool can
    /// `continue` a file that grew.
    pub fn lookup<T>(
        &self,
        key: &FileKey,
        path: &Path,
        continues: bool,
        note: &mut dyn FnMut(String),
        make: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Lookup<T> {
        let mut shard = self.shard(key, note);
        shard.used.insert((key.dev, key.ino));
        let Some(e) = shard.entries.get(&(key.dev, key.ino)) else {
            return Lookup::Miss;
        };
        let grown = continues && key.size > e.key.size;
        if e.key != *key && !grown {
            return Lookup::Miss;
        }
        let (size, edges) = (e.key.size, e.edges);
        let Some(value) = make(e.payload(&shard.file)) else {
            return Lookup::Miss;
        };
        if e.key == *key {
            return Lookup::Hit(value);
        }
        drop(shard);
        let now = File::open(path)
            .ok()
            .and_then(|f| edge_hashes(&f, size).ok());
        if now == Some(edges) {
            return Lookup::Grown { value, size };
        }
        Lookup::Miss
    }

    /// Keeps `payload` for the file at `path`, open as `file`, which was `key` when it was read
    /// (and still is: the caller checked).
    pub fn put(&self, key: &FileKey, path: &Path, file: &File, payload: Vec<u8>) {
        let Ok(edges) = edge_hashes(file, key.size) else {
            return;
        };
        let mut shard = self.shard(key, &mut |_| {});
        shard.changed = true;
        let path = Payload::Own(path.as_os_str().as_bytes().to_vec());
        let e = Entry {
            key: *key,
            edges,
            path,
            payload: Payload::Own(payload),
        };
        shard.entries.insert((key.dev, key.ino), e);
    }

    /// Writes the cache files that changed; a failure is noted (the run's output does not
    /// depend on it).
    pub fn save(&self) {
        for i in 0..SHARDS {
            let mut s = self.shards[i].lock().unwrap_or_else(|e| e.into_inner());
            if !s.changed {
                continue;
            }
            if let Err(e) = self.save_shard(i, &mut s) {
                let msg = format!("cannot write the cache: {e}");
                note(self.tool, Some(&self.dir), &msg);
                return;
            }
        }
    }

    /// Writes shard `i`: the entries of this run, those another run wrote meanwhile, less
    /// those whose file is gone (or is another file now).
    fn save_shard(&self, i: usize, s: &mut Shard) -> std::io::Result<()> {
        let path = self.shard_path(i);
        if let Ok(bytes) = fs::read(&path) {
            for (k, e) in parse(self.tool, &bytes).unwrap_or_default() {
                s.entries.entry(k).or_insert_with(|| Entry {
                    path: Payload::Own(e.path.get(&bytes).to_vec()),
                    payload: Payload::Own(e.payload(&bytes).to_vec()),
                    ..e
                });
            }
        }
        let (used, file) = (&s.used, &s.file);
        s.entries.retain(|k, e| {
            let p = Path::new(std::ffi::OsStr::from_bytes(e.path.get(file)));
            used.contains(k)
                || fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == (e.key.dev, e.key.ino))
        });
        fs::create_dir_all(&self.dir)?;
        let bytes = serialize(self.tool, &s.file, s.entries.values());
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let tmp = self.dir.join(format!(
            ".{i:02x}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = File::create(&tmp).and_then(|mut f| f.write_all(&bytes));
        let renamed = written.and_then(|()| fs::rename(&tmp, &path));
        if renamed.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        s.changed = false;
        renamed
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

/// The header a cache file of `tool` starts with.
fn header(tool: &str) -> Writer {
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.u32(FORMAT);
    w.str(tool);
    w.str(env!("CARGO_PKG_VERSION"));
    w
}

/// A cache file of `tool` holding `entries`, whose loaded payloads are in `file`.
fn serialize<'e>(
    tool: &str,
    file: &[u8],
    entries: impl ExactSizeIterator<Item = &'e Entry>,
) -> Vec<u8> {
    let mut w = header(tool);
    w.var(entries.len() as u64);
    for e in entries {
        let k = &e.key;
        for v in [k.dev, k.ino, k.size] {
            w.u64(v);
        }
        for v in [k.mtime.0, k.mtime.1, k.ctime.0, k.ctime.1] {
            w.i64(v);
        }
        w.u64(e.edges.0);
        w.u64(e.edges.1);
        w.bytes(e.path.get(file));
        w.bytes(e.payload(file));
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&w.0);
    w.u64(sum);
    w.0
}

/// The entries of a cache file of `tool`, or why it is refused.
fn parse(tool: &str, bytes: &[u8]) -> Result<Entries, String> {
    let damaged = || "is damaged".to_string();
    let (body, sum) = bytes
        .split_at_checked(bytes.len().wrapping_sub(8))
        .ok_or_else(damaged)?;
    let sum = u64::from_le_bytes(sum.try_into().map_err(|_| damaged())?);
    let body = body
        .strip_prefix(MAGIC)
        .ok_or("is not a pi-jsonl cache file")?;
    if xxhash_rust::xxh3::xxh3_64(&bytes[..bytes.len() - 8]) != sum {
        return Err(damaged());
    }
    let mut r = Reader::new(body);
    // Where a payload read from `r` lies in `bytes`.
    let range_of = |p: &[u8]| {
        let start = p.as_ptr() as usize - bytes.as_ptr() as usize;
        start..start + p.len()
    };
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
    let entries = (|| {
        let n = r.count(74)?;
        let mut entries = Entries::with_capacity_and_hasher(n, Default::default());
        for _ in 0..n {
            let (dev, ino, size) = (r.u64()?, r.u64()?, r.u64()?);
            let key = FileKey {
                dev,
                ino,
                size,
                mtime: (r.i64()?, r.i64()?),
                ctime: (r.i64()?, r.i64()?),
            };
            let edges = (r.u64()?, r.u64()?);
            let path = Payload::Loaded(range_of(r.bytes()?));
            let payload = Payload::Loaded(range_of(r.bytes()?));
            let e = Entry {
                key,
                edges,
                path,
                payload,
            };
            entries.insert((dev, ino), e);
        }
        r.is_empty().then_some(entries)
    })();
    entries.ok_or_else(damaged)
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

    #[test]
    fn an_entry_whose_file_is_gone_is_dropped_when_its_cache_file_is_written() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-cache-prune-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let kept = dir.join("kept.jsonl");
        fs::write(&kept, "{}\n").unwrap();
        let args = CacheArgs {
            cache_dir: Some(dir.join("cache")),
            ..CacheArgs::default()
        };
        let cache = Cache::open("pi-usage", &args).unwrap();
        let file = File::open(&kept).unwrap();
        let key = FileKey::of(&file.metadata().unwrap());
        cache.put(&key, &kept, &file, b"kept".to_vec());
        // A file of the same cache file that no longer exists.
        let gone = Entry {
            key: FileKey {
                ino: key.ino + SHARDS as u64,
                ..key
            },
            edges: (0, 0),
            path: Payload::Own(dir.join("gone.jsonl").into_os_string().into_vec()),
            payload: Payload::Own(b"gone".to_vec()),
        };
        assert_eq!(gone.key.shard(), key.shard());
        let shard = &cache.shards[key.shard()];
        shard
            .lock()
            .unwrap()
            .entries
            .insert((key.dev, gone.key.ino), gone);
        cache.save();
        let bytes = fs::read(cache.shard_path(key.shard())).unwrap();
        let entries = parse("pi-usage", &bytes).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[&(key.dev, key.ino)].payload(&bytes), b"kept");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn cache_files_read_back_and_damage_is_refused() {
        let e = Entry {
            key: FileKey {
                dev: 1,
                ino: 2,
                size: 3,
                mtime: (4, 5),
                ctime: (6, -7),
            },
            edges: (8, 9),
            path: Payload::Own(b"/p".to_vec()),
            payload: Payload::Own(b"payload".to_vec()),
        };
        let bytes = serialize("pi-usage", &[], [&e].into_iter());
        let back = parse("pi-usage", &bytes).unwrap();
        let got = &back[&(1, 2)];
        assert_eq!(got.key, e.key);
        assert_eq!(got.edges, e.edges);
        assert_eq!(got.path.get(&bytes), b"/p");
        assert_eq!(got.payload(&bytes), b"payload");
        assert!(parse("pi-sessions", &bytes)
            .unwrap_err()
            .contains("written by"));
        for cut in 0..bytes.len() {
            assert!(parse("pi-usage", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        assert_eq!(parse("pi-usage", &flipped).unwrap_err(), "is damaged");
        assert!(parse("pi-usage", b"garbage garbage garbage").is_err());
    }
}
