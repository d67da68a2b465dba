//! The walk: every file with a wanted extension below the roots (walkdir), in byte order of
//! their paths, each placed in Pi's layout ([`super::layout`]). Symbolic links are followed; a
//! link back to a directory above it, an unreadable directory, a broken link or an entry that
//! vanished mid-scan is a problem to report, never a failure.
//!
//! One thread walks; reading the files is what runs in parallel. Listing is a small part of a
//! run: 1.9% of pi-sessions' instructions on 100 sessions, and on 10,000 empty files in 100
//! folders (2 cores) walkdir on one thread took the wall time the former walk took on rayon's
//! pool (0.18 s), for 0.2% more instructions.

use super::layout::{place, Found};
use super::progress::Progress;
use super::Stat;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use walkdir::{DirEntryExt, WalkDir};

/// What a walk found, and the problems it met (path, message), both in path order.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Found>,
    pub problems: Vec<(PathBuf, String)>,
}

/// A walk and what it listed: every directory it read (the roots first), each with what was
/// found of it before it was read, and whether the walk went only through directories it
/// listed (no problem met, no symbolic link met, every root a directory): what a cache needs
/// to tell later that the walk would find the same (`crate::cache::Cache::walk`).
#[derive(Debug, Default)]
pub struct Stamped {
    pub walk: Walk,
    pub dirs: Vec<(PathBuf, Metadata)>,
    pub plain: bool,
}

/// A file's identity: device and inode. A file reached by several paths is kept once.
type FileId = (u64, u64);

/// What the walk of every root collects before it is sorted.
struct Collected<'a> {
    exts: &'a [OsString],
    progress: Option<&'a Progress>,
    /// Each file: its path, the index of its root, its identity, and what the lookup of a
    /// root that is a file found.
    files: Vec<(PathBuf, usize, FileId, Option<Stat>)>,
    problems: Vec<(PathBuf, String)>,
    /// Each directory listed, as found before it was listed.
    dirs: Vec<(PathBuf, Metadata)>,
    /// Whether a symbolic link or a root that is no directory was met.
    linked: bool,
}

impl Collected<'_> {
    fn problem(&mut self, p: &Path, msg: impl Into<String>) {
        self.problems.push((p.to_path_buf(), msg.into()));
    }

    fn file(&mut self, path: PathBuf, root: usize, id: FileId) {
        self.files.push((path, root, id, None));
        if let Some(p) = self.progress {
            p.add(1);
        }
    }

    fn wants(&self, p: &Path) -> bool {
        let Some(name) = super::layout::file_name(p) else {
            return false;
        };
        self.exts.iter().any(|x| ends_in(name, x.as_bytes()))
    }
}

/// Whether the file name `name` ends in `.` and `ext`, the whole of it (`a.jsonl.bak` ends in
/// `.jsonl.bak` and in `.bak`), with something before that dot: a name that begins with its
/// only dot has no extension, as [`Path::extension`] says (`.jsonl`).
fn ends_in(name: &[u8], ext: &[u8]) -> bool {
    name.len() > ext.len() + 1 && name.ends_with(ext) && name[name.len() - ext.len() - 1] == b'.'
}

/// The extension of `path`, as [`Path::extension`] gives it (what follows the last `.` of its
/// name, unless the name begins with it), read from its bytes: what [`ends_in`] takes for a
/// one-part extension.
#[cfg(test)]
fn extension(path: &Path) -> Option<&[u8]> {
    let name = super::layout::file_name(path)?;
    match name.iter().rposition(|&c| c == b'.') {
        Some(0) | None => None,
        Some(dot) => Some(&name[dot + 1..]),
    }
}

/// Finds every file whose extension is one of `exts` (without the dot) below `roots`, in
/// byte order of their paths. A root that is a file is taken whatever its extension. A file
/// reached by several paths (through symbolic links) is kept once, under its first path in
/// that order.
pub fn walk(roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk {
    walk_stamped(roots, exts, progress).walk
}

/// [`walk`], and the directories it listed ([`Stamped`]).
pub fn walk_stamped(roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Stamped {
    let mut found = Collected {
        exts,
        progress,
        files: Vec::new(),
        problems: Vec::new(),
        dirs: Vec::new(),
        linked: false,
    };
    for (i, root) in roots.iter().enumerate() {
        match fs::metadata(root) {
            Ok(m) if m.is_dir() => {
                let top = Above {
                    path: root.clone(),
                    id: (m.dev(), m.ino()),
                };
                found.dirs.push((root.clone(), m));
                walk_tree(&mut found, root, i, &mut vec![top]);
            }
            Ok(m) => {
                found.linked = true;
                let stat = Some(Stat::of(&m));
                found
                    .files
                    .push((root.clone(), i, (m.dev(), m.ino()), stat))
            }
            // A link that leads nowhere is said to be one, as below a root.
            Err(e) if e.kind() == io::ErrorKind::NotFound && fs::symlink_metadata(root).is_ok() => {
                found.problem(root, "broken symbolic link; skipped")
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                found.problem(root, "no such directory")
            }
            Err(e) => found.problem(root, format!("cannot read: {e}")),
        }
    }
    let Collected {
        mut files,
        mut problems,
        dirs,
        linked,
        ..
    } = found;
    let plain = !linked && problems.is_empty();
    // Byte order of the whole path puts a session file before the folder of its extras
    // (`x.jsonl` < `x/...`).
    files.sort_by(|a, b| {
        (a.0.as_os_str().as_bytes(), a.1, a.2).cmp(&(b.0.as_os_str().as_bytes(), b.1, b.2))
    });
    problems.sort_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    let mut seen = crate::hash::FastSet::default();
    files.retain(|(_, _, id, _)| seen.insert(*id));
    // Keyed by bytes: hashing a `Path` parses its components (a third of a run that finds
    // every file in the cache went to it).
    let set: crate::hash::FastSet<&[u8]> = files
        .iter()
        .map(|(p, ..)| p.as_os_str().as_bytes())
        .collect();
    let files = files
        .iter()
        .map(|(p, root, _, stat)| place(p, &roots[*root], &set, *stat))
        .collect();
    Stamped {
        walk: Walk { files, problems },
        dirs,
        plain,
    }
}

/// A directory on the way down from a root: its path and identity. A directory whose
/// identity is one of those above it is a loop.
struct Above {
    path: PathBuf,
    id: FileId,
}

/// Lists the directory `top` and everything below it with walkdir, for the `index`th root.
/// `above` ends with `top` itself. walkdir does not follow links here: [`follow`] does, each
/// into a walk of its own, so that a link that cannot be followed or opened is reported under
/// its own path (walkdir's own following reports a linked directory it cannot open without
/// one).
fn walk_tree(found: &mut Collected<'_>, top: &Path, index: usize, above: &mut Vec<Above>) {
    let base = above.len();
    // walkdir opens a directory when it yields it (`top` before anything): a failure to list
    // it comes next, as an error naming it.
    let mut just_opened = true;
    let mut entries = WalkDir::new(top).min_depth(1).into_iter();
    while let Some(next) = entries.next() {
        let entry = match next {
            Ok(entry) => entry,
            Err(e) => {
                let (path, msg) = walk_problem(&e, just_opened, &above[base - 1..]);
                found.problem(&path, msg);
                just_opened = false;
                continue;
            }
        };
        above.truncate(base + entry.depth() - 1);
        let kind = entry.file_type();
        just_opened = false;
        if kind.is_symlink() {
            found.linked = true;
            follow(found, entry.path(), index, above);
        } else if kind.is_dir() {
            let enter = match entry.metadata() {
                Ok(m) => {
                    let id = (m.dev(), m.ino());
                    found.dirs.push((entry.path().to_path_buf(), m));
                    enter(found, entry.path(), id, above)
                }
                Err(e) => {
                    found.problem(entry.path(), directory_problem(e.io_error()));
                    false
                }
            };
            if enter {
                just_opened = true;
            } else {
                entries.skip_current_dir();
            }
        } else if found.wants(entry.path()) {
            // A FIFO, socket or device with a session file's name is listed too: describing
            // it says it is not a regular file, without reading it.
            let dev = above.last().map_or(0, |d| d.id.0);
            let id = (dev, entry.ino());
            found.file(entry.into_path(), index, id);
        }
    }
    above.truncate(base);
}

/// Follows the link `link`: a directory is walked (unless it is a loop), anything else is
/// taken as a file when its name has a wanted extension.
fn follow(found: &mut Collected<'_>, link: &Path, index: usize, above: &mut Vec<Above>) {
    let m = match fs::metadata(link) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return found.problem(link, "broken symbolic link; skipped")
        }
        Err(e) => return found.problem(link, format!("cannot follow symbolic link: {e}; skipped")),
    };
    if !m.is_dir() {
        if found.wants(link) {
            found.file(link.to_path_buf(), index, (m.dev(), m.ino()));
        }
    } else if enter(found, link, (m.dev(), m.ino()), above) {
        walk_tree(found, link, index, above);
    }
}

/// Whether to go down into the directory `dir` (identity `id`): not when it is one of those
/// above it. Adds it to `above` when so.
fn enter(found: &mut Collected<'_>, dir: &Path, id: FileId, above: &mut Vec<Above>) -> bool {
    if above.iter().any(|a| a.id == id) {
        found.problem(
            dir,
            "symbolic link loop: it leads back to a directory above it; not followed",
        );
        return false;
    }
    above.push(Above {
        path: dir.to_path_buf(),
        id,
    });
    true
}

/// What to say about a directory that cannot be looked at or listed.
fn directory_problem(e: Option<&io::Error>) -> String {
    match e {
        Some(e) if e.kind() == io::ErrorKind::NotFound => {
            "directory vanished during the scan".into()
        }
        Some(e) => format!("cannot read directory: {e}"),
        None => "cannot read directory".into(),
    }
}

/// The path and message of an error of walkdir's. `tree`: the directories from the walk's
/// top down to the one being listed; `just_opened`: the last of them was yielded last, and
/// opened then, so an error naming it is the failure to list it.
fn walk_problem(e: &walkdir::Error, just_opened: bool, tree: &[Above]) -> (PathBuf, String) {
    let cause = e.io_error();
    let text = cause.map_or_else(|| "unknown error".into(), |c| c.to_string());
    match e.path() {
        Some(p) if (just_opened || e.depth() == 0) && tree.last().is_some_and(|d| d.path == p) => {
            (p.to_path_buf(), directory_problem(cause))
        }
        Some(p) => (p.to_path_buf(), format!("cannot tell what it is: {text}")),
        // Listing the directory at depth - 1 failed midway.
        None => {
            let dir = tree.get(e.depth().saturating_sub(1)).or(tree.last());
            let dir = dir.map_or_else(PathBuf::new, |d| d.path.clone());
            (dir, format!("reading the directory failed: {text}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn names_and_extensions_from_bytes_are_those_of_path() {
        for p in [
            "a/b.jsonl",
            "b.jsonl",
            ".jsonl",
            "..jsonl",
            "a/.jsonl",
            "a/b.",
            "a/b",
            "a/b.c.jsonl",
            "a/b.jsonl/",
            "a/..",
            "a/.",
            "/",
            "",
            ".",
            "..",
            "a//b.jsonl",
            "a/./",
            "é/ü.jsonl",
        ] {
            let p = Path::new(p);
            let name = crate::discover::layout::file_name(p);
            assert_eq!(name, p.file_name().map(OsStrExt::as_bytes), "{p:?}");
            assert_eq!(extension(p), p.extension().map(OsStrExt::as_bytes), "{p:?}");
            // A one-part extension is taken as Path::extension gives it.
            if let (Some(name), Some(ext)) = (name, p.extension()) {
                assert!(ends_in(name, ext.as_bytes()), "{p:?}");
            }
        }
    }

    #[test]
    fn links_are_followed_files_kept_once_and_loops_reported() {
        let base = std::env::temp_dir().join(format!("pi-jsonl-walk-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("a/deep")).unwrap();
        fs::create_dir_all(base.join("b")).unwrap();
        for f in ["a/deep/x.jsonl", "b/y.jsonl", "b/notes.txt"] {
            fs::write(base.join(f), "{}\n").unwrap();
        }
        symlink("../b", base.join("a/to-b")).unwrap(); // b/y.jsonl a second time
        symlink("..", base.join("a/deep/up")).unwrap(); // back to a: a loop
        symlink("nowhere", base.join("gone.jsonl")).unwrap();
        symlink("b/y.jsonl", base.join("z.jsonl")).unwrap(); // y.jsonl a third time
        let exts = [OsString::from("jsonl")];
        let w = walk(
            &[base.clone(), base.join("missing"), base.join("gone.jsonl")],
            &exts,
            None,
        );
        let rel = |p: &Path| {
            p.strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        let files: Vec<String> = w.files.iter().map(|f| rel(&f.path)).collect();
        // In byte order; y.jsonl under its first path in that order.
        assert_eq!(files, ["a/deep/x.jsonl", "a/to-b/y.jsonl"]);
        let problems: Vec<(String, &str)> = w
            .problems
            .iter()
            .map(|(p, m)| (rel(p), m.as_str()))
            .collect();
        assert_eq!(
            problems,
            [
                (
                    "a/deep/up".to_string(),
                    "symbolic link loop: it leads back to a directory above it; not followed"
                ),
                ("gone.jsonl".to_string(), "broken symbolic link; skipped"),
                // Given as a root, it is said to be a broken link too.
                ("gone.jsonl".to_string(), "broken symbolic link; skipped"),
                ("missing".to_string(), "no such directory"),
            ]
        );
        let _ = fs::remove_dir_all(&base);
    }
}
