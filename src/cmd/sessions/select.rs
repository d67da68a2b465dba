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

/// Orders the files by `key`: newest (largest) first, ties by path; `reverse` turns that
/// around. Files whose time is unknown come last either way, in path order.
pub(super) fn sort(metas: &mut [&FileMeta<'_>], key: SortKey, reverse: bool) {
    let turn = |o: Ordering| if reverse { o.reverse() } else { o };
    let desc = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(x), Some(y)) => turn(y.cmp(&x)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    let time = |m: &FileMeta<'_>| match key {
        SortKey::Created => m.created,
        SortKey::Modified => m.modified,
        SortKey::Path | SortKey::Size => Some(0),
    };
    metas.sort_by(|a, b| {
        let o = match key {
            SortKey::Path => Ordering::Equal,
            SortKey::Created | SortKey::Modified => desc(time(a), time(b)),
            SortKey::Size => turn(b.bytes.cmp(&a.bytes)),
        };
        o.then_with(|| {
            let (x, y) = (a.found.path.as_os_str(), b.found.path.as_os_str());
            let by_path = x.as_bytes().cmp(y.as_bytes());
            // Unknown times keep path order; the others turn with the rest.
            if time(a).is_some() {
                turn(by_path)
            } else {
                by_path
            }
        })
    });
}
