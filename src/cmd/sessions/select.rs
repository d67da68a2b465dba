//! Which files pi-sessions shows and in what order: `--status`, `--project`, `--since`,
//! `--until`, `--sort` and `--reverse`.

use super::args::{Args, SortKey};
use crate::discover::{FileMeta, FileStatus};
use std::cmp::Ordering;
use std::os::unix::ffi::OsStrExt;

/// Whether `args` keep the file `m`. `paths`: only paths are printed, for other tools to read,
/// so files they would not read are left out unless `--status` names them: empty files, files
/// that are not sessions, and what is not a regular file (a FIFO would block the tool given
/// it, a device never end; such a file is described as unreadable).
pub(super) fn keep(args: &Args, paths: bool, m: &FileMeta<'_>) -> bool {
    if args.status.is_empty() {
        if paths && !m.status.is_fed() {
            return false;
        }
        if paths
            && m.status == FileStatus::Unreadable
            && !std::fs::metadata(&m.found.path).is_ok_and(|md| md.is_file())
        {
            return false;
        }
    } else if !args.status.iter().any(|s| s.status() == m.status) {
        return false;
    }
    if let Some(want) = &args.project {
        if !m
            .project
            .as_deref()
            .is_some_and(|p| p.contains(want.as_str()))
        {
            return false;
        }
    }
    if let Some(b) = args.since {
        if m.modified.is_none_or(|t| t < b.first_ms()) {
            return false;
        }
    }
    if let Some(b) = args.until {
        if m.modified.is_none_or(|t| t > b.last_ms()) {
            return false;
        }
    }
    true
}

/// Orders the files by `key`: newest (largest) first, unknown times last, ties by path.
pub(super) fn sort(metas: &mut [&FileMeta<'_>], key: SortKey, reverse: bool) {
    let desc = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    metas.sort_by(|a, b| {
        let o = match key {
            SortKey::Path => Ordering::Equal,
            SortKey::Created => desc(a.created, b.created),
            SortKey::Modified => desc(a.modified, b.modified),
            SortKey::Size => b.bytes.cmp(&a.bytes),
        };
        o.then_with(|| {
            let (x, y) = (a.found.path.as_os_str(), b.found.path.as_os_str());
            x.as_bytes().cmp(y.as_bytes())
        })
    });
    if reverse {
        metas.reverse();
    }
}
