//! Where a found file stands in Pi's layout: the `--<encoded cwd>--` folder it lies under, and
//! the session it belongs to when it is nested in that session's own folder (`parent_file`),
//! and what it is there ([`Role`]: a session, a sub-agent's run, oh-my-pi's advisor).

use super::project::is_project_folder;
use super::Stat;
use crate::hash::FastSet;
use std::ffi::OsStr;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// A file found by [`super::walk()`], placed in Pi's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// The session file this one is nested under: the nearest folder above it that has a
    /// sibling of the same name plus `.jsonl` (Pi keeps a session's extras in a folder named
    /// like the session file).
    pub parent_file: Option<PathBuf>,
    /// The name of the nearest folder above it (up to the root) named `--<encoded cwd>--`.
    pub project_folder: Option<OsString>,
    /// What the file is in the layout ([`Role::of`]).
    pub role: Role,
    /// What the walk's lookup found of a file given as a root itself (a FILE argument), so
    /// that a cache keys it without a second `stat`; for a file found below a directory,
    /// `None` until [`super::stat_files`] looks it up (`None` then: it could not be).
    pub stat: Option<Stat>,
}

/// What a found file is, by where it lies and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A session of its own.
    Session,
    /// Nested in a session's folder (`parent_file`): a sub-agent's run (oh-my-pi's
    /// `<time>_<id>/<Agent>.jsonl`, Pi extensions' runs and transcripts).
    Subagent,
    /// oh-my-pi's advisor transcript: `__advisor.jsonl` or `__advisor.<name>.jsonl`.
    Advisor,
}

impl Role {
    /// The role of the file at `path`, nested in a session's folder or not.
    pub fn of(path: &Path, nested: bool) -> Role {
        let advisor = file_name(path).is_some_and(|n| {
            n == b"__advisor.jsonl" || (n.starts_with(b"__advisor.") && n.ends_with(b".jsonl"))
        });
        if advisor {
            Role::Advisor
        } else if nested {
            Role::Subagent
        } else {
            Role::Session
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::Session => "session",
            Role::Subagent => "subagent",
            Role::Advisor => "advisor",
        }
    }
}

/// The last name of `path`, as [`Path::file_name`] gives it: read from its bytes when it is a
/// plain name (a `Path`'s components are parsed from the end otherwise, twice per file found
/// by a walk that each run makes again).
pub(crate) fn file_name(path: &Path) -> Option<&[u8]> {
    let b = path.as_os_str().as_bytes();
    let name = &b[b.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..];
    match name {
        b"" | b"." | b".." => path.file_name().map(OsStr::as_bytes),
        _ => Some(name),
    }
}

/// `path` (found below `root`, or the root itself) placed among the other files `found` (their
/// paths' bytes: every one is `root` joined with names, as a sibling found here is).
pub(crate) fn place(path: &Path, root: &Path, found: &FastSet<&[u8]>, stat: Option<Stat>) -> Found {
    let (parent_file, project_folder) = match names_below(path, root) {
        Some(start) => place_below(path, start, root, found),
        None if path == root && names_only(path) => (None, folder_named(path)),
        None => place_by_components(path, root, found),
    };
    Found {
        path: path.to_path_buf(),
        role: Role::of(path, parent_file.is_some()),
        parent_file,
        project_folder,
        stat,
    }
}

/// Where the names below `root` begin in `path`, when `path` is `root` joined with at least
/// one name (as the walk makes every path it finds below a root).
fn names_below(path: &Path, root: &Path) -> Option<usize> {
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    let rest = p.strip_prefix(r).filter(|rest| !rest.is_empty())?;
    let start = match (r.last(), rest[0]) {
        (Some(b'/'), _) => r.len(),
        (_, b'/') => r.len() + 1,
        _ => return None,
    };
    // Names only: no empty, `.` or `..` component below the root.
    are_names(&p[start..]).then_some(start)
}

/// Whether `b` is names joined by `/`: no empty, `.` or `..` component (the slashes found
/// by `memchr`: a split by a byte's test walks a path one byte at a time).
fn are_names(b: &[u8]) -> bool {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'/', b).chain([b.len()]);
    ends.all(|end| {
        let n = &b[start..end];
        start = end + 1;
        !n.is_empty() && n != b"." && n != b".."
    })
}

/// Whether `path` is names joined by `/`, after a `/` when it is absolute.
fn names_only(path: &Path) -> bool {
    let b = path.as_os_str().as_bytes();
    are_names(b.strip_prefix(b"/").unwrap_or(b))
}

/// The project folder of a file given as a root itself (a FILE argument) whose path is names
/// only ([`names_only`]): the name of the folder it is in when that is one, read from the
/// path's bytes, as [`place_by_components`] finds it by parsing the path's components three
/// times (most of pi-sessions' own work given 2,000 paths that its cache knows).
fn folder_named(path: &Path) -> Option<OsString> {
    let b = path.as_os_str().as_bytes();
    let dir = &b[..b.iter().rposition(|&c| c == b'/')?];
    let name = OsStr::from_bytes(&dir[dir.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..]);
    (!name.is_empty() && is_project_folder(name)).then(|| name.to_os_string())
}

/// [`place`] of a path whose names below the root begin at `start`, by its bytes: each folder
/// between it and the root is a prefix of it, a session file beside that folder is the prefix
/// and `.jsonl` (a `Path`'s components are parsed again at each step, which took most of the
/// walk of a run that finds every file in the cache).
fn place_below(
    path: &Path,
    start: usize,
    root: &Path,
    found: &FastSet<&[u8]>,
) -> (Option<PathBuf>, Option<OsString>) {
    let (mut parent_file, mut project_folder) = (None, None);
    let bytes = path.as_os_str().as_bytes();
    let ends = (start..bytes.len()).rev().filter(|&i| bytes[i] == b'/');
    for end in ends {
        let dir = &bytes[..end];
        if parent_file.is_none() {
            let cand = [dir, b".jsonl"].concat();
            if found.contains(&cand[..]) {
                parent_file = Some(PathBuf::from(OsString::from_vec(cand)));
            }
        }
        let name =
            OsStr::from_bytes(&dir[dir.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..]);
        if project_folder.is_none() && is_project_folder(name) {
            project_folder = Some(name.to_os_string());
        }
    }
    if project_folder.is_none() {
        project_folder = root
            .file_name()
            .filter(|n| is_project_folder(n))
            .map(OsStr::to_os_string);
    }
    (parent_file, project_folder)
}

/// [`place`] by a walk up the path's components.
fn place_by_components(
    path: &Path,
    root: &Path,
    found: &FastSet<&[u8]>,
) -> (Option<PathBuf>, Option<OsString>) {
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
                if found.contains(cand.as_os_str().as_bytes()) {
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
    (parent_file, project_folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Placing a path by its bytes gives what the walk up its components gives.
    #[test]
    fn placing_by_bytes_is_placing_by_components() {
        let files = [
            "r/--home-u-p--/2026_a.jsonl",
            "r/--home-u-p--/2026_a/sub.jsonl",
            "r/--home-u-p--/2026_a/deeper/__advisor.jsonl",
            "r/--home-u-p--/2026_b/sub.jsonl",
            "r/plain/x.jsonl",
            "r/--x--/y/--z--/f.jsonl",
        ];
        for root in ["r", "r/", "./r", "r/--home-u-p--", "/abs/r"] {
            let paths: Vec<PathBuf> = files
                .iter()
                .filter_map(|f| f.strip_prefix("r/"))
                .map(|rest| Path::new(root).join(rest))
                .collect();
            let set: FastSet<&[u8]> = paths.iter().map(|p| p.as_os_str().as_bytes()).collect();
            for p in &paths {
                let root = Path::new(root);
                let Some(start) = names_below(p, root) else {
                    continue;
                };
                let fast = place_below(p, start, root, &set);
                assert_eq!(
                    fast,
                    place_by_components(p, root, &set),
                    "{p:?} under {root:?}"
                );
            }
        }
        // A file given as its own root, by bytes where its path is names only.
        let set = FastSet::default();
        for f in files.iter().chain(&[
            "/--home-u-p--/a.jsonl",
            "/a.jsonl",
            "a.jsonl",
            "--x--/a.jsonl",
            "./--x--/a.jsonl",
            "--x--/./a.jsonl",
            "../--x--/a.jsonl",
            "r//--x--/a.jsonl",
            "r/--x--/",
            "r/--x--/.",
            "r/--x--/..",
        ]) {
            let p = Path::new(f);
            let by_components = place_by_components(p, p, &set);
            if names_only(p) {
                assert_eq!((None, folder_named(p)), by_components, "{p:?}");
            }
            assert_eq!(
                place(p, p, &set, None).project_folder,
                by_components.1,
                "{p:?}"
            );
        }
        assert!(names_only(Path::new("/a/--x--/b.jsonl")));
        assert!(!names_only(Path::new("a//b.jsonl")) && !names_only(Path::new("./a.jsonl")));
        // Not below the root by bytes: placed by components.
        assert_eq!(names_below(Path::new("r"), Path::new("r")), None);
        assert_eq!(names_below(Path::new("r/./x.jsonl"), Path::new("r")), None);
        assert_eq!(names_below(Path::new("rx/y.jsonl"), Path::new("r")), None);
        assert_eq!(names_below(Path::new("r/y.jsonl"), Path::new("r")), Some(2));
    }
}
