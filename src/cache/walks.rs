//! The walk of a directory kept between runs (`walks.bin` in a tool's cache directory): what
//! [`crate::discover::walk`] found under the same roots with the same extensions, and every
//! directory it listed with its device, inode, size, modification and change times. A later
//! run looks each of those directories up (one `stat` each, by path, so a directory moved,
//! replaced or mounted over is another one) and, when every one is as it was, takes the files
//! found then instead of listing the tree again.
//!
//! Why that is enough: a directory's modification and change times move whenever a name is
//! added to it, removed from it or renamed in it (a file, a subdirectory, a link), and its
//! change time also when its permissions change; a file appended to or rewritten in place does
//! not change its directory, and needs not to: the walk only gives the paths, and each file is
//! still looked up itself (the per-file cache keys). A name added inside a subdirectory changes
//! that subdirectory only, which is why every directory listed is checked, not the roots.
//!
//! What is not kept: a walk that met a problem (an unreadable directory, something vanished),
//! a symbolic link (the directory or file it leads to can change without any listed directory
//! changing) or a root that is a file.
//!
//! Time stamps have a granularity (a clock tick of a few milliseconds on Linux file systems,
//! 2 s on FAT): a directory changed twice within one tick keeps the time of the first change,
//! so a listing taken between the two would look current. A walk is therefore kept only when
//! every directory it listed last changed (modification and change time) at least
//! [`SETTLED`] before the walk began: any change made after the listing was taken then falls
//! in a later tick, and gives the directory a change time the kept one is not. (The change
//! time cannot be set back by a program, unlike the modification time.) A tree changed
//! moments ago is walked again until it has been still that long.

use super::codec::{Reader, Writer};
use super::{checked, header, sealed, Cache, FileBytes, FileKey};
use crate::discover::walk::{walk_stamped, Walk};
use crate::discover::{Found, Progress, Role};
use crate::sync::lock;
use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The walks file's name in a tool's directory.
pub(super) const WALKS: &str = "walks.bin";
/// How many walks (different roots or extensions) the file keeps, the latest first.
const KEEP: usize = 8;
/// How long before a walk began every directory it listed must have last changed for the
/// walk to be kept (see the module's comment).
pub const SETTLED: Duration = Duration::from_secs(2);
const ROLES: [Role; 3] = [Role::Session, Role::Subagent, Role::Advisor];

/// A walk to keep: its roots and extensions (the key), and the walk with its directories.
pub(super) struct KeptWalk {
    key: Vec<u8>,
    body: Vec<u8>,
}

impl Cache {
    /// [`crate::discover::walk`] of `roots`, taken from the cache when a walk of the same roots
    /// and extensions was kept and none of the directories it listed changed since; else walked,
    /// and kept (written by [`Cache::save`]) when it can be (see the module's comment).
    pub fn walk(&self, roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk {
        // The index is loaded (its checksum checked) on another thread meanwhile: the files
        // found are looked up in it next, and a walk taken from the cache leaves a core idle.
        std::thread::scope(|s| {
            let _ = std::thread::Builder::new().spawn_scoped(s, || self.preload_index());
            self.walk_here(roots, exts, progress)
        })
    }

    /// [`Cache::walk`] on this thread.
    fn walk_here(&self, roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk {
        let key = walk_key(roots, exts);
        if let Some(w) = self.kept_walk(&key) {
            if let Some(p) = progress {
                p.add(w.files.len());
            }
            return w;
        }
        let started = SystemTime::now();
        let stamped = walk_stamped(roots, exts, progress);
        let settled = started.checked_sub(SETTLED).unwrap_or(UNIX_EPOCH);
        let still = |m: &Metadata| {
            let k = FileKey::of(m);
            [k.mtime, k.ctime]
                .into_iter()
                .all(|t| time(t).is_some_and(|t| t < settled))
        };
        if stamped.plain && stamped.dirs.iter().all(|(_, m)| still(m)) {
            let body = encode(&stamped.dirs, &stamped.walk);
            *lock(&self.walk_put) = Some(KeptWalk { key, body });
        }
        stamped.walk
    }

    /// The walk kept under `key`, when every directory it listed is as it was then.
    fn kept_walk(&self, key: &[u8]) -> Option<Walk> {
        self.load_or_remove(&self.dir.join(WALKS), |tool, bytes| {
            let found = entries(tool, &bytes)?.find(|(k, _)| *k == key);
            Ok(found.and_then(|(_, body)| decode(body)))
        })
    }

    /// Writes the walk this run kept, before the others the walks file holds now (at most
    /// [`KEEP`] in all).
    pub(super) fn save_walk(&self) -> std::io::Result<()> {
        let put = lock(&self.walk_put).take();
        let Some(put) = put else {
            return Ok(());
        };
        std::fs::create_dir_all(&self.dir)?;
        let now = FileBytes::load(&self.dir.join(WALKS))
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut w = header(self.tool, "walks");
        let others: Vec<(&[u8], &[u8])> = entries(self.tool, &now)
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != put.key)
            .take(KEEP - 1)
            .collect();
        w.var(1 + others.len() as u64);
        for (k, body) in [(&put.key[..], &put.body[..])].into_iter().chain(others) {
            w.bytes(k);
            w.bytes(body);
        }
        self.replace(WALKS.as_ref(), &sealed(w))
    }
}

/// The walks in `bytes` (a walks file of `tool`), each as its key and body; `Err` says why the
/// file is refused.
fn entries<'b>(
    tool: &str,
    bytes: &'b [u8],
) -> Result<impl Iterator<Item = (&'b [u8], &'b [u8])>, String> {
    let mut r = checked(tool, "walks", bytes)?;
    let n = r.count(2).ok_or("is damaged")?;
    Ok((0..n).map_while(move |_| Some((r.bytes()?, r.bytes()?))))
}

/// What a walk is kept under: its roots and extensions, each length-prefixed.
fn walk_key(roots: &[PathBuf], exts: &[OsString]) -> Vec<u8> {
    let mut w = Writer::default();
    w.var(roots.len() as u64);
    for r in roots {
        w.bytes(r.as_os_str().as_bytes());
    }
    for e in exts {
        w.bytes(e.as_bytes());
    }
    w.0
}

/// A time stamp as (seconds, nanoseconds) since the epoch made a [`SystemTime`].
fn time((s, ns): (i64, i64)) -> Option<SystemTime> {
    let ns = u32::try_from(ns).ok()?;
    match u64::try_from(s) {
        Ok(s) => UNIX_EPOCH.checked_add(Duration::new(s, ns)),
        Err(_) => UNIX_EPOCH
            .checked_sub(Duration::new(s.unsigned_abs(), 0))?
            .checked_add(Duration::new(0, ns)),
    }
}

fn encode(dirs: &[(PathBuf, Metadata)], walk: &Walk) -> Vec<u8> {
    let mut w = Writer::default();
    w.var(dirs.len() as u64);
    for (path, m) in dirs {
        w.bytes(path.as_os_str().as_bytes());
        for v in FileKey::of(m).words() {
            w.u64(v);
        }
    }
    w.var(walk.files.len() as u64);
    let opt = |w: &mut Writer, b: Option<&OsStr>| w.opt(b, |w, b| w.bytes(b.as_bytes()));
    for f in &walk.files {
        w.bytes(f.path.as_os_str().as_bytes());
        opt(&mut w, f.parent_file.as_deref().map(Path::as_os_str));
        opt(&mut w, f.project_folder.as_deref());
        w.u8(ROLES.iter().position(|r| *r == f.role).unwrap_or(0) as u8);
    }
    w.0
}

/// The walk in `body` when every directory it lists is as it was (looked up now); `None`
/// when one changed, or the body is damaged.
fn decode(body: &[u8]) -> Option<Walk> {
    let mut r = Reader::new(body);
    for _ in 0..r.count(57)? {
        let path = Path::new(OsStr::from_bytes(r.bytes()?));
        let w = (0..7).map(|_| r.u64()).collect::<Option<Vec<u64>>>()?;
        let now = std::fs::metadata(path).ok().filter(Metadata::is_dir)?;
        if FileKey::of(&now) != FileKey::from_words(&w) {
            return None;
        }
    }
    let n = r.count(4)?;
    let mut files = Vec::with_capacity(n);
    let path = |b: &[u8]| PathBuf::from(OsStr::from_bytes(b));
    for _ in 0..n {
        let p = path(r.bytes()?);
        let parent_file = r.opt(|r| r.bytes().map(path))?;
        let project_folder = r.opt(|r| r.bytes().map(|b| OsStr::from_bytes(b).to_os_string()))?;
        let role = *ROLES.get(usize::from(r.u8()?))?;
        files.push(Found {
            path: p,
            parent_file,
            project_folder,
            role,
            stat: None,
        });
    }
    r.is_empty().then_some(Walk {
        files,
        problems: Vec::new(),
    })
}

impl crate::discover::KnownFiles for Cache {
    fn knows_session(&self, st: &crate::discover::Stat) -> bool {
        Cache::knows_session(self, st)
    }

    fn walk(&self, roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk {
        Cache::walk(self, roots, exts, progress)
    }

    fn preload(&self) {
        self.preload_index();
    }
}
