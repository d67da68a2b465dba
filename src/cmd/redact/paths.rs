//! Path pseudonyms: each directory or file name becomes `dirN`, `fileN.ext` or (under
//! `/home`, `/Users`) `userN`, chosen once per run for each distinct path prefix, so the same
//! path is written the same way everywhere and two paths that share a directory still share
//! its pseudonym. The table is the only thing pi-redact keeps that grows with the input.

use crate::hash::FastMap;

/// Top-level directories every Unix-like system has: kept as they are (they say nothing of
/// the user), so `/home/ana` stays a home folder and `/tmp/x` a temporary file.
const PUBLIC_ROOTS: &[&str] = &[
    "home",
    "Users",
    "tmp",
    "var",
    "usr",
    "etc",
    "opt",
    "private",
    "mnt",
    "media",
    "root",
    "Volumes",
    "nix",
    "srv",
    "proc",
    "dev",
    "bin",
    "sbin",
    "lib",
    "lib64",
    "run",
    "workspace",
];

/// The directories that hold the users' homes: their children become `userN`.
const HOME_PARENTS: &[&str] = &["/home", "/Users"];

/// The pseudonym table of one run (shared by every file of the run).
#[derive(Default)]
pub struct Pseudonyms {
    /// Original path prefix (without a trailing slash) → its pseudonym.
    names: FastMap<String, String>,
    users: u64,
    dirs: u64,
    files: u64,
}

impl Pseudonyms {
    /// The pseudonym of `path` (absolute, `~/…`, or relative): each component replaced,
    /// separators, `.`, `..`, a leading `~` and a trailing `/` kept.
    pub fn path(&mut self, path: &str) -> String {
        let mut original = String::with_capacity(path.len());
        let mut written = String::with_capacity(path.len());
        let parts: Vec<&str> = path.split('/').collect();
        for (i, comp) in parts.iter().enumerate() {
            if i > 0 {
                original.push('/');
                written.push('/');
            }
            let keep = comp.is_empty()
                || *comp == "."
                || *comp == ".."
                || (i == 0 && *comp == "~")
                || (original == "/" && PUBLIC_ROOTS.contains(comp));
            if keep {
                original.push_str(comp);
                written.push_str(comp);
                continue;
            }
            let parent_is_home = HOME_PARENTS.contains(&original.trim_end_matches('/'));
            original.push_str(comp);
            let is_last = i + 1 == parts.len();
            let name = match self.names.get(&original) {
                Some(n) => n.clone(),
                None => {
                    let n = self.new_name(comp, parent_is_home, is_last);
                    self.names.insert(original.clone(), n.clone());
                    n
                }
            };
            written.push_str(&name);
        }
        written
    }

    fn new_name(&mut self, comp: &str, under_home: bool, is_last: bool) -> String {
        if under_home {
            self.users += 1;
            return format!("user{}", self.users);
        }
        match extension(comp).filter(|_| is_last) {
            Some(ext) => {
                self.files += 1;
                format!("file{}.{ext}", self.files)
            }
            None => {
                self.dirs += 1;
                format!("dir{}", self.dirs)
            }
        }
    }
}

/// A file name's extension when it has a short alphanumeric one (`main.rs` → `rs`); `None`
/// for a hidden name without one (`.env`), or an extension that could itself say something.
fn extension(name: &str) -> Option<&str> {
    let dot = name.rfind('.')?;
    let ext = &name[dot + 1..];
    let ok =
        dot > 0 && (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then_some(ext)
}

/// Whether a whole string value reads as a file path: absolute or `~/`, one line, no blanks,
/// not a URL's `//`. Such values (a tool's `path` argument, `cwd`) get a pseudonym instead of
/// a placeholder.
pub fn looks_like_path(s: &str) -> bool {
    let rest = if let Some(r) = s.strip_prefix("~/") {
        r
    } else if let Some(r) = s.strip_prefix('/') {
        r
    } else {
        return false;
    };
    !rest.is_empty()
        && !rest.starts_with('/')
        && s.len() <= 4096
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_and_shared_prefixes() {
        let mut p = Pseudonyms::default();
        assert_eq!(
            p.path("/home/ana/src/app/main.rs"),
            "/home/user1/dir1/dir2/file1.rs"
        );
        assert_eq!(p.path("/home/ana/src/lib.rs"), "/home/user1/dir1/file2.rs");
        assert_eq!(
            p.path("/home/ana/src/app/main.rs"),
            "/home/user1/dir1/dir2/file1.rs"
        );
        assert_eq!(p.path("/home/bob"), "/home/user2");
        assert_eq!(p.path("/home/ana/"), "/home/user1/");
        assert_eq!(p.path("/tmp/x/../y.txt"), "/tmp/dir3/../file3.txt");
        assert_eq!(p.path("~/notes/.env"), "~/dir4/dir5");
        assert_eq!(
            p.path("src/app"),
            "dir6/dir7",
            "relative paths have their own names"
        );
    }

    #[test]
    fn what_reads_as_a_path() {
        assert!(looks_like_path("/home/ana/x"));
        assert!(looks_like_path("~/x"));
        assert!(!looks_like_path("/"));
        assert!(!looks_like_path("//host/x"));
        assert!(!looks_like_path("/a b"));
        assert!(!looks_like_path("src/x"));
        assert!(!looks_like_path("hello"));
    }
}
