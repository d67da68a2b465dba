//! The project a `--<encoded cwd>--` folder name stands for, decoded against the file system,
//! and the cache that decodes each folder name once for all the threads describing files.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How a session's project path was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectSource {
    /// The header's `cwd`.
    Header,
    /// The folder name, every segment matched against the file system.
    Decoded,
    /// The folder name, with a tail no directory matched kept as one segment.
    DecodedPartial,
}

impl ProjectSource {
    pub fn name(self) -> &'static str {
        match self {
            ProjectSource::Header => "header",
            ProjectSource::Decoded => "decoded",
            ProjectSource::DecodedPartial => "decoded_partial",
        }
    }
}

/// At most this many directory look-ups per folder name.
const DECODE_BUDGET: usize = 4096;

/// The project path a `--<encoded cwd>--` folder name stands for.
///
/// Pi drops a leading `/` or `\` from the cwd and turns every `/`, `\` and `:` into `-`, so a
/// `-` in the name may be a separator or a real `-`. The name is resolved against the file
/// system from `/`, one segment at a time, trying the longest run of `-`-joined pieces that is
/// an existing directory first (and backing up when a longer choice leads nowhere). A piece may
/// also match a directory with a leading `.` that the name lacks (`pi` for `.pi`, or `-pi` for
/// `.pi`, as encoders that turn `.` into `-` write it). What no directory matches is kept as one
/// last segment, never split at guessed separators. A name that resolves to nothing and starts
/// with a drive letter (`C--Users-x`, from `C:\Users\x`) is read as a Windows path: `C:\` and
/// the rest as one segment.
pub fn decode_project(folder: &OsStr) -> Option<(String, ProjectSource)> {
    if !is_project_folder(folder) {
        return None;
    }
    let b = folder.as_bytes();
    let inner = String::from_utf8_lossy(&b[2..b.len() - 2]).into_owned();
    Some(decode_encoded(&inner, Path::new("/")))
}

fn decode_encoded(inner: &str, base: &Path) -> (String, ProjectSource) {
    if inner.is_empty() {
        return ("/".into(), ProjectSource::Decoded);
    }
    let pieces: Vec<&str> = inner.split('-').collect();
    let mut budget = DECODE_BUDGET;
    let (dir, used) = resolve(base, &pieces, 0, &mut budget);
    if used == pieces.len() {
        return (dir.to_string_lossy().into_owned(), ProjectSource::Decoded);
    }
    let rest = pieces[used..].join("-");
    let bytes = inner.as_bytes();
    if used == 0 && bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && &bytes[1..3] == b"--" {
        let tail = &inner[3..];
        let src = if tail.is_empty() {
            ProjectSource::Decoded
        } else {
            ProjectSource::DecodedPartial
        };
        return (format!("{}:\\{tail}", &inner[..1]), src);
    }
    let mut s = dir.to_string_lossy().into_owned();
    if !s.ends_with('/') {
        s.push('/');
    }
    s.push_str(&rest);
    (s, ProjectSource::DecodedPartial)
}

/// The deepest directory reachable from `dir` by matching `pieces[i..]`, and how many pieces
/// it used.
fn resolve(dir: &Path, pieces: &[&str], i: usize, budget: &mut usize) -> (PathBuf, usize) {
    if i == pieces.len() {
        return (dir.to_path_buf(), i);
    }
    let mut best = (dir.to_path_buf(), i);
    for j in (i + 1..=pieces.len()).rev() {
        let cand = pieces[i..j].join("-");
        let mut variants = vec![cand.clone()];
        if !cand.starts_with('.') {
            variants.push(format!(".{cand}"));
        }
        if let Some(rest) = cand.strip_prefix('-') {
            if !rest.is_empty() {
                variants.push(format!(".{rest}"));
            }
        }
        for v in variants {
            if v.is_empty() || v == "." || v == ".." || *budget == 0 {
                continue;
            }
            *budget -= 1;
            let next = dir.join(&v);
            if next.is_dir() {
                let r = resolve(&next, pieces, j, budget);
                if r.1 == pieces.len() {
                    return r;
                }
                if r.1 > best.1 {
                    best = r;
                }
            }
        }
    }
    best
}

/// The name of the nearest folder above `file` named `--<encoded cwd>--`: among the folders its
/// path names, else among those above it as it really is (its folder's path made absolute, links
/// resolved), so that `x.jsonl`, `./x.jsonl` and `/abs/--p--/x.jsonl` given in `--p--`, or that
/// folder given as `.`, find the same one. A name that is no file (stdin's `<stdin>`) is not
/// looked for. Only a session without a `cwd` needs it.
pub fn folder_above(file: &Path) -> Option<OsString> {
    let named = |p: &Path| {
        p.ancestors()
            .filter_map(Path::file_name)
            .find(|n| is_project_folder(n))
            .map(OsStr::to_os_string)
    };
    let dir = file.parent()?;
    named(dir).or_else(|| {
        std::fs::symlink_metadata(file).ok()?;
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let real = std::fs::canonicalize(dir)
            .or_else(|_| std::path::absolute(dir))
            .ok()?;
        named(&real)
    })
}

/// Whether a folder name is Pi's `--<encoded cwd>--`.
pub(crate) fn is_project_folder(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.len() >= 4 && b.starts_with(b"--") && b.ends_with(b"--")
}

/// Folder name → decoded project, shared by the threads describing files.
#[derive(Default)]
pub struct ProjectCache(Mutex<HashMap<OsString, Option<(String, ProjectSource)>>>);

impl ProjectCache {
    pub(crate) fn get(&self, folder: &OsStr) -> Option<(String, ProjectSource)> {
        if let Some(hit) = self.0.lock().ok().and_then(|m| m.get(folder).cloned()) {
            return hit;
        }
        let v = decode_project(folder);
        if let Ok(mut m) = self.0.lock() {
            m.insert(folder.to_os_string(), v.clone());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn decoding_backs_up_from_a_longer_match_that_leads_nowhere() {
        let base = std::env::temp_dir().join(format!("pi-jsonl-decode-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("a-b")).unwrap();
        fs::create_dir_all(base.join("a").join("b-c").join("d")).unwrap();
        fs::create_dir_all(base.join(".hidden").join("x")).unwrap();
        let got = |enc: &str| decode_encoded(enc, &base);
        let full = |rel: &str| (format!("{}/{rel}", base.display()), ProjectSource::Decoded);
        // "a-b" exists but holds no "c": the walk backs up to "a" then "b-c".
        assert_eq!(got("a-b-c-d"), full("a/b-c/d"));
        assert_eq!(got("a-b"), full("a-b"));
        assert_eq!(got("hidden-x"), full(".hidden/x"));
        assert_eq!(got("-hidden-x"), full(".hidden/x"));
        assert_eq!(got(".hidden-x"), full(".hidden/x"));
        assert_eq!(
            got("a-b-c-gone-tail"),
            (
                format!("{}/a/b-c/gone-tail", base.display()),
                ProjectSource::DecodedPartial
            )
        );
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn windows_drive_names_keep_their_tail_whole() {
        // Nothing below / is named like this, so the name falls back to a Windows path.
        let (p, s) = decode_encoded("Q--Users-nobody-pi-jsonl-x", Path::new("/"));
        assert_eq!(p, "Q:\\Users-nobody-pi-jsonl-x");
        assert_eq!(s, ProjectSource::DecodedPartial);
        assert_eq!(
            decode_encoded("Q--", Path::new("/")),
            ("Q:\\".into(), ProjectSource::Decoded)
        );
    }
}
