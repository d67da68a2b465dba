//! Where a found file stands in Pi's layout: the `--<encoded cwd>--` folder it lies under, and
//! the session it belongs to when it is nested in that session's own folder (`parent_file`),
//! and what it is there ([`Role`]: a session, a sub-agent's run, oh-my-pi's advisor).

use super::project::is_project_folder;
use crate::hash::FastSet;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
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
        let name = path.file_name().map(|n| n.to_string_lossy());
        let advisor = name.as_deref().is_some_and(|n| {
            n == "__advisor.jsonl" || (n.starts_with("__advisor.") && n.ends_with(".jsonl"))
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

/// `path` (found below `root`, or the root itself) placed among the other files `found` (their
/// paths' bytes: every one is `root` joined with names, as a sibling found here is).
pub(crate) fn place(path: &Path, root: &Path, found: &FastSet<&[u8]>) -> Found {
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
    Found {
        path: path.to_path_buf(),
        role: Role::of(path, parent_file.is_some()),
        parent_file,
        project_folder,
    }
}
