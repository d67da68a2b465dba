//! The walk: every file with a wanted extension below the roots, found in parallel (rayon),
//! and each placed in Pi's layout: the `--<encoded cwd>--` folder it lies under, and the
//! session it belongs to when it is nested in that session's own folder (`parent_file`).
//! Symbolic links are followed; a link back to a directory above it, an unreadable directory,
//! a broken link or an entry that vanished mid-scan is a problem to report, never a failure.

use super::progress::Progress;
use super::project::is_project_folder;
use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file found by [`walk`], placed in Pi's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// The session file this one is nested under: the nearest folder above it that has a
    /// sibling of the same name plus `.jsonl` (Pi keeps a session's extras in a folder named
    /// like the session file).
    pub parent_file: Option<PathBuf>,
    /// The name of the nearest folder above it (up to the root) named `--<encoded cwd>--`.
    pub project_folder: Option<OsString>,
}

/// What a walk found, and the problems it met (path, message), both in path order.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Found>,
    pub problems: Vec<(PathBuf, String)>,
}

/// A file found: its path, the index of its root, and its identity (device, inode).
type Hit = (PathBuf, usize, (u64, u64));

struct Shared<'a> {
    exts: &'a [OsString],
    files: Mutex<Vec<Hit>>,
    problems: Mutex<Vec<(PathBuf, String)>>,
    progress: Option<&'a Progress>,
}

impl Shared<'_> {
    fn problem(&self, p: &Path, msg: String) {
        if let Ok(mut v) = self.problems.lock() {
            v.push((p.to_path_buf(), msg));
        }
    }
}

fn has_ext(p: &Path, exts: &[OsString]) -> bool {
    p.extension().is_some_and(|e| exts.iter().any(|x| x == e))
}

/// Finds every file whose extension is one of `exts` (without the dot) below `roots`, on the
/// current rayon pool, in byte order of their paths. A root that is a file is taken whatever
/// its extension. A file reached by several paths (through symbolic links) is kept once, under
/// its first path in that order.
pub fn walk(roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk {
    let sh = Shared {
        exts,
        files: Mutex::new(Vec::new()),
        problems: Mutex::new(Vec::new()),
        progress,
    };
    rayon::scope(|s| {
        for (i, root) in roots.iter().enumerate() {
            match fs::metadata(root) {
                Ok(m) if m.is_dir() => {
                    let key = (m.dev(), m.ino());
                    let sh = &sh;
                    let root = root.clone();
                    s.spawn(move |s| walk_dir(sh, s, root, m.dev(), Arc::new(vec![key]), i));
                }
                Ok(m) => {
                    if let Ok(mut f) = sh.files.lock() {
                        f.push((root.clone(), i, (m.dev(), m.ino())));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    sh.problem(root, "no such directory".into())
                }
                Err(e) => sh.problem(root, format!("cannot read: {e}")),
            }
        }
    });
    let mut files = sh.files.into_inner().unwrap_or_default();
    let mut problems = sh.problems.into_inner().unwrap_or_default();
    // Byte order of the whole path puts a session file before the folder of its extras
    // (`x.jsonl` < `x/...`).
    files.sort_by(|a, b| {
        (a.0.as_os_str().as_bytes(), a.1, a.2).cmp(&(b.0.as_os_str().as_bytes(), b.1, b.2))
    });
    problems.sort_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    let mut seen = HashSet::new();
    files.retain(|(_, _, id)| seen.insert(*id));
    let set: HashSet<&Path> = files.iter().map(|(p, _, _)| p.as_path()).collect();
    let found = files
        .iter()
        .map(|(p, root, _)| place(p, &roots[*root], &set))
        .collect();
    Walk {
        files: found,
        problems,
    }
}

fn walk_dir<'s>(
    sh: &'s Shared<'s>,
    s: &rayon::Scope<'s>,
    dir: PathBuf,
    dev: u64,
    ancestors: Arc<Vec<(u64, u64)>>,
    root: usize,
) {
    let rd = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return sh.problem(&dir, "directory vanished during the scan".into())
        }
        Err(e) => return sh.problem(&dir, format!("cannot read directory: {e}")),
    };
    let mut local = Vec::new();
    for ent in rd {
        let ent = match ent {
            Ok(e) => e,
            Err(e) => {
                sh.problem(&dir, format!("reading the directory failed: {e}"));
                continue;
            }
        };
        let path = ent.path();
        let ft = match ent.file_type() {
            Ok(t) => t,
            Err(e) => {
                sh.problem(&path, format!("cannot tell what it is: {e}"));
                continue;
            }
        };
        let (is_dir, meta) = if ft.is_symlink() {
            match fs::metadata(&path) {
                Ok(m) => (m.is_dir(), Some(m)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    sh.problem(&path, "broken symbolic link; skipped".into());
                    continue;
                }
                Err(e) => {
                    sh.problem(&path, format!("cannot follow symbolic link: {e}; skipped"));
                    continue;
                }
            }
        } else if ft.is_dir() || ft.is_file() {
            (ft.is_dir(), None)
        } else {
            continue; // sockets, fifos, devices
        };
        if !is_dir {
            if has_ext(&path, sh.exts) {
                let id = match &meta {
                    Some(m) => (m.dev(), m.ino()),
                    None => (dev, ent.ino()),
                };
                local.push((path, root, id));
            }
            continue;
        }
        let m = match meta {
            Some(m) => m,
            None => match fs::metadata(&path) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    sh.problem(&path, "directory vanished during the scan".into());
                    continue;
                }
                Err(e) => {
                    sh.problem(&path, format!("cannot read directory: {e}"));
                    continue;
                }
            },
        };
        let key = (m.dev(), m.ino());
        if ancestors.contains(&key) {
            sh.problem(
                &path,
                "symbolic link loop: it leads back to a directory above it; not followed".into(),
            );
            continue;
        }
        let mut anc = Vec::with_capacity(ancestors.len() + 1);
        anc.extend_from_slice(&ancestors);
        anc.push(key);
        let anc = Arc::new(anc);
        s.spawn(move |s| walk_dir(sh, s, path, m.dev(), anc, root));
    }
    if let Some(p) = sh.progress {
        p.add(local.len());
    }
    if !local.is_empty() {
        if let Ok(mut f) = sh.files.lock() {
            f.extend(local);
        }
    }
}

fn place(path: &Path, root: &Path, found: &HashSet<&Path>) -> Found {
    let mut parent_file = None;
    let mut project_folder = None;
    // The folders above the file, up to the root (or the root's folder when the root is the
    // file itself).
    let top = if path == root {
        root.parent()
    } else {
        Some(root)
    };
    let mut cur = path.parent();
    while let Some(dir) = cur {
        let name = dir.file_name();
        if parent_file.is_none() && Some(dir) != top {
            if let Some(n) = name {
                let mut sib = n.to_os_string();
                sib.push(".jsonl");
                let cand = dir.with_file_name(sib);
                if found.contains(cand.as_path()) {
                    parent_file = Some(cand);
                }
            }
        }
        if project_folder.is_none() {
            if let Some(n) = name.filter(|n| is_project_folder(n)) {
                project_folder = Some(n.to_os_string());
            }
        }
        if Some(dir) == top || top.is_none() {
            break;
        }
        cur = dir.parent();
    }
    Found {
        path: path.to_path_buf(),
        parent_file,
        project_folder,
    }
}
