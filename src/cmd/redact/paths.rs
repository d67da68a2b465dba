//! Path pseudonyms: each directory or file name becomes `dirN`, `fileN.ext` or (under
//! `/home`, `/Users`, `C:\Users`) `userN`, chosen once per run for each distinct path prefix
//! (and for each user name, in any ASCII case, whatever the home path's form), so the same path is written the same way everywhere and two paths that share a directory
//! still share its pseudonym. Windows paths (`C:\x`, `C:/x`, `\\server\share`, and the same
//! with every `\` doubled, as in JSON text) keep their drive and separators; their prefixes
//! are compared as Windows compares them (either separator, any case). A sessions folder named
//! after a working directory (`--home-ana-app--`) is named after that directory's pseudonym
//! once the directory has been seen as a session's `cwd`. The table is the only thing
//! pi-redact keeps that grows with the input.

use crate::hash::{FastMap, FastSet};
use aho_corasick::packed;
use memchr::memmem::Finder;

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

/// Top-level directories of a Windows drive that say nothing of the user (compared in any case).
const WINDOWS_PUBLIC_ROOTS: &[&str] = &[
    "users",
    "windows",
    "program files",
    "program files (x86)",
    "programdata",
    "documents and settings",
    "temp",
    "tmp",
];

/// The top-level directories of a Windows drive that hold the users' homes.
const WINDOWS_HOME_PARENTS: &[&str] = &["users", "documents and settings"];

/// How a text refers to the user's home where a path would start with `~`: `$HOME/x`,
/// `${HOME}/x`, PowerShell's `$env:HOME`, and cmd's `%USERPROFILE%\x`, `%HOMEPATH%\x` (these
/// three in any case). None names the user; the names after them are as private as those
/// after `~/`, and share their pseudonyms.
const HOME_REFS: &[&str] = &[
    "$HOME",
    "${HOME}",
    "$env:HOME",
    "$env:USERPROFILE",
    "%USERPROFILE%",
    "%HOMEPATH%",
];

/// User names that name no person: the accounts that images, services and CI runners make
/// (`/home/node` in Node's images, `/home/runner` on GitHub's), and `Shared` and `Public`, the
/// homes macOS and Windows share between users. A home path's pseudonym still replaces them;
/// they are not looked for as words in other text ([`Pseudonyms::user_words`]), where most
/// are common words (`node`, `user`, `admin`).
const NOT_PERSONS: &[&str] = &[
    "root",
    "user",
    "users",
    "admin",
    "administrator",
    "node",
    "ubuntu",
    "debian",
    "runner",
    "vagrant",
    "ec2-user",
    "pi",
    "guest",
    "shared",
    "public",
    "default",
    "app",
    "dev",
    "developer",
    "coder",
    "vscode",
    "codespace",
    "codespaces",
    "jovyan",
    "git",
    "www-data",
    "nobody",
    "test",
    "docker",
    "build",
    "builder",
    "home",
    "all users",
    "default user",
];

/// The shortest user name looked for as a word in other text: shorter ones (`jo`, `me`) are
/// words of their own too often.
pub const USER_WORD_MIN: usize = 3;

/// The pseudonym table of one run (shared by every file of the run).
#[derive(Default)]
pub struct Pseudonyms {
    /// Original path prefix (without a trailing slash; a Windows one lower-cased, with `/`
    /// between components, after its drive or `//`) → its pseudonym.
    names: FastMap<String, String>,
    /// A working directory's sessions folder name (`--home-ana-app--`) → the folder name of
    /// its pseudonym, for every `cwd` seen.
    folders: FastMap<String, String>,
    /// Each whole path met → its pseudonym: a path seen again (tool calls name the same files
    /// over and over) costs one look-up instead of one per component. The answer is the one
    /// the components would give: every prefix of a path seen is in `names` for good.
    whole: FastMap<String, String>,
    /// Each user name met as a home folder (`/home/ana`, `C:\Users\ana`) or after `~`
    /// (`~ana/`), in ASCII lower case → the pseudonym it got first.
    user_names: FastMap<String, String>,
    /// The names of `user_names` that are looked for as words in other text, with their
    /// pseudonyms ([`Pseudonyms::user_words`]).
    user_words: Vec<(String, String)>,
    /// A search for each name of `user_words` ([`Pseudonyms::user_word_sites`]).
    user_finders: Vec<Finder<'static>>,
    /// A search for all of them at once, when there are several and the CPU has one.
    user_search: Option<packed::Searcher>,
    /// The text being searched for them, in ASCII lower case.
    lowered: Vec<u8>,
    /// Each user name of `user_names` → the home folder it was met as (`/home/ana`), for
    /// `~ana/…`.
    user_homes: FastMap<String, String>,
    users: u64,
    dirs: u64,
    files: u64,
    /// The numbers given so far, by kind (`user`, `dir`, `file`): a name that already is a
    /// pseudonym keeps it only while its number is no other name's.
    given: FastSet<(&'static str, u64)>,
}

impl Pseudonyms {
    /// The pseudonym of `path` (absolute, `~/…`, relative, or a Windows path): each component
    /// replaced, separators, `.`, `..`, a leading `~`, a drive and a trailing separator kept.
    pub fn path(&mut self, path: &str) -> String {
        if let Some(p) = self.whole.get(path) {
            return p.clone();
        }
        let p = if path.starts_with("\\/") {
            // A path whose every `/` is written `\/` (JSON text quoted in a text, as PHP and
            // some JSON writers escape it): the path's pseudonym, written the same way.
            let plain = path.replace("\\/", "/");
            self.path(&plain).replace('/', "\\/")
        } else if let Some(root) = home_ref(path) {
            self.home_ref_path(path, root)
        } else if let Some(p) = self.tilde_user_path(path) {
            p
        } else {
            match windows_root(path) {
                Some(root) => self.windows_path(path, root),
                None => self.posix_path(path),
            }
        };
        self.whole.insert(path.to_string(), p.clone());
        p
    }

    /// The user names met so far in home paths that are looked for as words in other text
    /// (each in ASCII lower case, of [`USER_WORD_MIN`] characters or more, not one of
    /// [`NOT_PERSONS`]), with their pseudonyms.
    pub fn user_words(&self) -> &[(String, String)] {
        &self.user_words
    }

    /// Where the names of [`Pseudonyms::user_words`] occur in `text`, in any ASCII case
    /// (overlapping too): each name's place among them and the occurrence's start, in that
    /// order. Searched for in the text lowered once, each with a searcher made once: by its
    /// rarest letter in either case, a name as common as `ana` stopped the search at every `n`
    /// (with the user names of the corpus' sessions, a fifth of their `--keep-text` time).
    /// Several names are searched for in one pass (Teddy, in `aho-corasick`), which stops
    /// where any starts: with the corpus' sessions' names (about 15), 137 M instructions
    /// became 54 M.
    pub fn user_word_sites(&mut self, text: &str) -> Vec<(usize, usize)> {
        if self.user_finders.len() != self.user_words.len() {
            let words = self.user_words.iter();
            self.user_finders = words.map(|(w, _)| Finder::new(w).into_owned()).collect();
            let several = self.user_words.len() > 1;
            let words = self.user_words.iter().map(|(w, _)| w);
            self.user_search = several.then(|| packed::Searcher::new(words)).flatten();
        }
        // A name is in ASCII lower case, so it is where the lowered text holds it.
        self.lowered.clear();
        (self.lowered).extend(text.bytes().map(|b| b.to_ascii_lowercase()));
        let mut sites = Vec::new();
        if let Some(search) = &self.user_search {
            // Each place where one of them starts, then every name that starts there.
            let t = &self.lowered;
            for at in super::find::word_sites(search, t) {
                for (k, (w, _)) in self.user_words.iter().enumerate() {
                    if t[at..].starts_with(w.as_bytes()) {
                        sites.push((k, at));
                    }
                }
            }
            sites.sort_unstable();
            return sites;
        }
        for (k, finder) in self.user_finders.iter().enumerate() {
            let mut from = 0;
            while let Some(at) = self.lowered.get(from..).and_then(|t| finder.find(t)) {
                sites.push((k, from + at));
                from += at + 1;
            }
        }
        sites
    }

    /// The pseudonym of the user name `name` (in any ASCII case), if it was met in a home path.
    pub fn user_word(&self, name: &str) -> Option<&str> {
        self.user_names
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Notes that the home folder `home`, named `name`, got the pseudonym `pseudonym` (the
    /// first one a name gets stays its own).
    fn note_user(&mut self, name: &str, pseudonym: &str, home: Option<&str>) {
        let lower = name.to_ascii_lowercase();
        if self.user_names.contains_key(&lower) {
            return;
        }
        if let Some(home) = home {
            self.user_homes.insert(lower.clone(), home.to_string());
        }
        let word = lower.chars().count() >= USER_WORD_MIN
            && !NOT_PERSONS.contains(&lower.as_str())
            && !lower.contains(char::is_whitespace);
        if word {
            self.user_words.push((lower.clone(), pseudonym.to_string()));
        }
        self.user_names.insert(lower, pseudonym.to_string());
    }

    /// The pseudonym of the user `name` of a path `~name/…`: the one its home folder got, or
    /// a new `userN`.
    fn tilde_user(&mut self, name: &str) -> String {
        if let Some(p) = self.user_word(name) {
            return p.to_string();
        }
        self.users += 1;
        let p = format!("user{}", self.users);
        self.note_user(name, &p, None);
        p
    }

    /// `~ana/…` when `ana`'s home folder was met (`/home/ana`): named as the same path under
    /// that folder is, after `~` and the user's pseudonym (`~user1/dir1`).
    fn tilde_user_path(&mut self, path: &str) -> Option<String> {
        let rest = path.strip_prefix('~')?;
        let name_end = rest.find('/').unwrap_or(rest.len());
        let home = self
            .user_homes
            .get(&rest[..name_end].to_ascii_lowercase())?;
        let full = format!("{home}{}", &rest[name_end..]);
        let home = home.clone();
        let p = self.path(&full);
        let h = self.path(&home);
        let user = h.rsplit(['/', '\\']).next().unwrap_or_default();
        Some(format!("~{user}{}", p.get(h.len()..).unwrap_or_default()))
    }

    /// A path after a reference to the home (`$HOME/x`, `%USERPROFILE%\x`: `root` bytes of
    /// it, kept): the rest is named as it is after `~/`, with its own separators.
    fn home_ref_path(&mut self, path: &str, root: usize) -> String {
        let rest = &path[root..];
        let sep = if rest.starts_with('\\') { "\\" } else { "/" };
        let tilde = format!("~{}", rest.replace('\\', "/"));
        let p = self.posix_path(&tilde);
        format!("{}{}", &path[..root], p[1..].replace('/', sep))
    }

    /// The pseudonym of a session's working directory; from now on the sessions folder Pi
    /// names after it is named after the pseudonym.
    pub fn cwd(&mut self, cwd: &str) -> String {
        let p = self.path(cwd);
        self.folders
            .entry(super::outdir::folder_name(cwd))
            .or_insert_with(|| super::outdir::folder_name(&p));
        p
    }

    /// Writes to `out` the pseudonym of one component whose prefix (itself included) is `key`.
    fn component(
        &mut self,
        key: &str,
        comp: &str,
        under_home: bool,
        is_last: bool,
        out: &mut String,
    ) {
        if let Some(n) = self.names.get(key) {
            out.push_str(n);
            return;
        }
        // A user's home folder: the pseudonym its name got first, in whatever form of home
        // path (`/home/ana`, `/Users/ana`, `C:\Users\Ana`, `~ana`) and any ASCII case.
        let user = under_home
            .then(|| self.user_word(comp).map(str::to_string))
            .flatten();
        let n = match user.or_else(|| self.folders.get(comp).cloned()) {
            Some(n) => n,
            None => self.new_name(comp, under_home, is_last),
        };
        out.push_str(&n);
        self.names.insert(key.to_string(), n);
    }

    /// A Windows path: `root` bytes of drive (`C:`) or UNC start (`\\`) kept, then runs of
    /// separators kept as written and components replaced.
    fn windows_path(&mut self, path: &str, root: usize) -> String {
        let drive = !path.starts_with('\\');
        let mut key = if drive {
            path[..root].to_ascii_lowercase()
        } else {
            "//".to_string()
        };
        let mut written = path[..root].to_string();
        let mut depth = 0;
        let mut parent_is_home = false;
        let mut rest = &path[root..];
        while !rest.is_empty() {
            let sep = rest.len() - rest.trim_start_matches(['\\', '/']).len();
            written.push_str(&rest[..sep]);
            rest = &rest[sep..];
            let len = rest.find(['\\', '/']).unwrap_or(rest.len());
            if len == 0 {
                break;
            }
            let comp = &rest[..len];
            rest = &rest[len..];
            let lower = comp.to_lowercase();
            key.push('/');
            key.push_str(&lower);
            let public = drive && depth == 0 && WINDOWS_PUBLIC_ROOTS.contains(&lower.as_str());
            if public || comp == "." || comp == ".." {
                written.push_str(comp);
            } else {
                let at = written.len();
                self.component(&key, comp, parent_is_home, rest.is_empty(), &mut written);
                if parent_is_home {
                    let home = &path[..path.len() - rest.len()];
                    self.note_user(comp, &written[at..], Some(home));
                }
            }
            parent_is_home = drive && depth == 0 && WINDOWS_HOME_PARENTS.contains(&lower.as_str());
            depth += 1;
        }
        written
    }

    /// A path with `/` separators.
    fn posix_path(&mut self, path: &str) -> String {
        let mut written = String::with_capacity(path.len());
        // Where the component starts in `path`.
        let mut start = 0;
        let mut parts = path.split('/').enumerate().peekable();
        while let Some((i, comp)) = parts.next() {
            if i > 0 {
                written.push('/');
            }
            // What comes before the component, its `/` included.
            let before = &path[..start];
            let end = start + comp.len();
            start = end + 1;
            let keep = comp.is_empty()
                || comp == "."
                || comp == ".."
                || (i == 0 && comp == "~")
                || (before == "/" && PUBLIC_ROOTS.contains(&comp));
            if keep {
                written.push_str(comp);
                continue;
            }
            if let Some(user) = comp.strip_prefix('~').filter(|_| i == 0) {
                // `~ana/…`: the home of the user `ana`.
                written.push('~');
                written.push_str(&self.tilde_user(user));
                continue;
            }
            let parent_is_home = HOME_PARENTS.contains(&before.trim_end_matches('/'));
            let is_last = parts.peek().is_none();
            let at = written.len();
            self.component(&path[..end], comp, parent_is_home, is_last, &mut written);
            if parent_is_home {
                self.note_user(comp, &written[at..], Some(&path[..end]));
            }
        }
        written
    }

    /// A new pseudonym for `comp`: the next `userN`, `fileN.ext` or `dirN` whose number no
    /// other name has; or `comp` itself when it already is one of that kind whose number no
    /// other name has (a redacted file redacted again keeps its names, in whatever order they
    /// are met).
    fn new_name(&mut self, comp: &str, under_home: bool, is_last: bool) -> String {
        let ext = extension(comp).filter(|_| !under_home && is_last);
        let (kind, count) = match ext {
            _ if under_home => ("user", &mut self.users),
            Some(_) => ("file", &mut self.files),
            None => ("dir", &mut self.dirs),
        };
        let stem = match ext {
            Some(ext) => &comp[..comp.len() - ext.len() - 1],
            None => comp,
        };
        if let Some(n) = pseudonym_number(stem, kind) {
            if self.given.insert((kind, n)) {
                return comp.to_string();
            }
        }
        loop {
            *count += 1;
            if self.given.insert((kind, *count)) {
                break;
            }
        }
        match ext {
            Some(ext) => format!("{kind}{count}.{ext}"),
            None => format!("{kind}{count}"),
        }
    }
}

/// `N` when `name` is `prefix` then a number as pseudonyms are numbered (`dir12`: digits, no
/// leading zero).
fn pseudonym_number(name: &str, prefix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
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

/// How many bytes of `path` are a reference to the home ([`HOME_REFS`]) followed by a
/// separator; `None` when it starts with none.
pub fn home_ref(path: &str) -> Option<usize> {
    HOME_REFS.iter().find_map(|r| {
        let head = path.as_bytes().get(..r.len())?;
        let same = if r.starts_with("$H") || r.starts_with("${") {
            head == r.as_bytes()
        } else {
            head.eq_ignore_ascii_case(r.as_bytes())
        };
        let sep = matches!(path.as_bytes().get(r.len()), Some(b'/' | b'\\'));
        (same && sep).then_some(r.len())
    })
}

/// How many bytes of `path` are a Windows root kept as it is: 2 for a drive (`C:` before a
/// separator), or the backslashes of a UNC path's start (`\\server`, `\\\\server` in
/// JSON text); `None` for any other path.
pub fn windows_root(path: &str) -> Option<usize> {
    let b = path.as_bytes();
    if b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/') {
        return Some(2);
    }
    let slashes = b.iter().take_while(|&&c| c == b'\\').count();
    let unc = matches!(slashes, 2 | 4) && b.get(slashes).is_some_and(|&c| c != b'/');
    (unc && b.len() > slashes).then_some(slashes)
}

/// Whether a whole string value reads as a file path: absolute, `~/` or a Windows path, one
/// line, no blanks, not a URL's `//`. Such values (a tool's `path` argument, `cwd`) get a
/// pseudonym instead of a placeholder.
pub fn looks_like_path(s: &str) -> bool {
    let rest = if let Some(r) = s.strip_prefix("~/") {
        r
    } else if let Some(r) = s.strip_prefix('/') {
        r
    } else if let Some(root) = windows_root(s) {
        s[root..].trim_start_matches(['\\', '/'])
    } else {
        return false;
    };
    !rest.is_empty() && !rest.starts_with('/') && s.len() <= 4096 && !has_space_or_control(s)
}

/// Whether `s` holds white space or a control character: its bytes checked first (an ASCII
/// one is either at or below the space, or DEL), its characters only when it is not all
/// ASCII (the characters of every path found in kept text cost 400 instructions a path).
fn has_space_or_control(s: &str) -> bool {
    s.bytes().any(|b| b <= b' ' || b == 0x7f)
        || !s.is_ascii() && s.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The user names' sites are every start of each name in any ASCII case (overlapping
    /// ones too, a non-ASCII letter in its own case only), by name then start, as a search
    /// for each name alone finds them; a name met later is searched for from then on.
    #[test]
    fn user_word_sites_are_every_start_of_each_name() {
        use super::super::find::any_case_sites;
        let mut p = Pseudonyms::default();
        let texts = [
            "",
            "ANA ana anaana Ana.Belle ana.belle.ana",
            "aaaa a.a.a.a",
            "ZOË zoë ZOë Zoë",
            "Jean-Luc jean-lucjean-luc JEAN-LUC",
            "n\nana\\ana",
        ];
        let mut found = 0;
        for name in ["ana", "Ana.Belle", "aaa", "a.a", "Zoë", "jean-luc"] {
            p.note_user(name, "user1", None);
            for text in texts {
                let want: Vec<(usize, usize)> = (p.user_words.iter().enumerate())
                    .flat_map(|(k, (w, _))| {
                        any_case_sites(text.as_bytes(), w).map(move |at| (k, at))
                    })
                    .collect();
                assert_eq!(p.user_word_sites(text), want, "{text:?}");
                found += want.len();
            }
        }
        assert!(found > 50, "{found}");
    }

    #[test]
    fn space_or_control_by_bytes_is_by_characters() {
        let chars = [
            'a', '/', ' ', '\t', '\u{b}', '\u{7f}', '\u{85}', '\u{a0}', '\u{3000}', 'é', '\0',
        ];
        for a in chars {
            for b in chars {
                let s: String = [a, 'x', b].into_iter().collect();
                let want = s.chars().any(|c| c.is_whitespace() || c.is_control());
                assert_eq!(has_space_or_control(&s), want, "{s:?}");
            }
        }
        for b in 0..128u8 {
            let c = char::from(b);
            assert_eq!(
                has_space_or_control(&c.to_string()),
                c.is_whitespace() || c.is_control()
            );
        }
    }

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

    /// Pseudonyms given again are kept, so a redacted file redacted again is unchanged, even
    /// when its names are met in another order than they were given (a path the first run
    /// named and its output no longer shows as a path: in a URL, in a masked text).
    #[test]
    fn pseudonyms_are_kept_and_new_names_follow_them() {
        let mut first = Pseudonyms::default();
        let paths = [
            "/home/ana/src/app/main.rs",
            "/srv/web/index.html",
            r"C:\Users\ana\notes\todo.md",
            "~/x/y.txt",
        ];
        let named: Vec<String> = paths.iter().map(|p| first.path(p)).collect();
        let mut again = Pseudonyms::default();
        for n in named.iter().rev() {
            assert_eq!(&again.path(n), n);
        }
        // A new name takes the first number no name has; a name of another shape, or one
        // whose number another name has, is renamed.
        assert_eq!(
            again.path("/srv/web/new/page.html"),
            "/srv/dir6/dir7/file5.html"
        );
        assert_eq!(again.path("/opt/dir01/user2"), "/opt/dir8/dir9");
        assert_eq!(again.path("/home/user7/file3.rs"), "/home/user7/file6.rs");
        assert_eq!(again.path("/home/bob"), "/home/user2");
        assert_eq!(again.path("/home/user3"), "/home/user3");
        // A session that names a path as another path's pseudonym keeps the two apart.
        let mut p = Pseudonyms::default();
        assert_eq!(p.path("/home/ana/x.rs"), "/home/user1/file1.rs");
        assert_eq!(p.path("/home/user1/file1.rs"), "/home/user2/file2.rs");
    }

    #[test]
    fn windows_paths_keep_their_drive_and_separators() {
        let mut p = Pseudonyms::default();
        assert_eq!(
            p.path(r"C:\Users\ana\src\app\main.rs"),
            r"C:\Users\user1\dir1\dir2\file1.rs"
        );
        // The same directories, written with `/`, in another case, or with doubled `\`.
        assert_eq!(
            p.path("c:/users/ana/src/lib.rs"),
            "c:/users/user1/dir1/file2.rs"
        );
        assert_eq!(
            p.path(r"C:\\Users\\ana\\src\\app\\main.rs"),
            r"C:\\Users\\user1\\dir1\\dir2\\file1.rs"
        );
        assert_eq!(p.path(r"C:\Users\ana\"), r"C:\Users\user1\");
        assert_eq!(
            p.path(r"D:\Users\ana"),
            r"D:\Users\user1",
            "another drive, the same user"
        );
        assert_eq!(p.path(r"D:\Users\bob"), r"D:\Users\user2");
        assert_eq!(
            p.path(r"\\fileserver\team\plan.docx"),
            r"\\dir3\dir4\file3.docx"
        );
        assert_eq!(
            p.path(r"\\\\fileserver\\team\\plan.docx"),
            r"\\\\dir3\\dir4\\file3.docx"
        );
        assert_eq!(
            p.path(r"C:\Program Files\Tool\..\x.exe"),
            r"C:\Program Files\dir5\..\file4.exe"
        );
    }

    #[test]
    fn a_sessions_folder_is_named_after_its_cwd_pseudonym() {
        let mut p = Pseudonyms::default();
        assert_eq!(p.cwd("/home/ana/my-app"), "/home/user1/dir1");
        assert_eq!(
            p.path("/home/ana/.pi/agent/sessions/--home-ana-my-app--/x.jsonl"),
            "/home/user1/dir2/dir3/dir4/--home-user1-dir1--/file1.jsonl"
        );
        assert_eq!(p.cwd(r"C:\Users\ana\app"), r"C:\Users\user1\dir5");
        assert_eq!(
            p.path(r"C:\Users\ana\.pi\agent\sessions\--C--Users-ana-app--\y.jsonl"),
            r"C:\Users\user1\dir6\dir7\dir8\--C--Users-user1-dir5--\file2.jsonl"
        );
    }

    /// One user name, one pseudonym: every form of home path (`/home`, `/Users`, a drive's
    /// `Users` or `Documents and Settings`, `~name`), in any ASCII case; the folders under
    /// the homes are still told apart by their paths.
    #[test]
    fn a_user_has_one_pseudonym_whatever_the_home_path_form() {
        let mut p = Pseudonyms::default();
        assert_eq!(p.path("/home/ana/src"), "/home/user1/dir1");
        assert_eq!(p.path(r"C:\Users\ana\src"), r"C:\Users\user1\dir2");
        assert_eq!(p.path("/Users/Ana/x.rs"), "/Users/user1/file1.rs");
        assert_eq!(p.path(r"D:\Users\ANA"), r"D:\Users\user1");
        assert_eq!(
            p.path(r"C:\Documents and Settings\ana"),
            r"C:\Documents and Settings\user1"
        );
        assert_eq!(p.path("~ana/y"), "~user1/dir3");
        assert_eq!(p.path("/home/bob"), "/home/user2");
        assert_eq!(p.path("~carl/z"), "~user3/dir4");
        assert_eq!(p.path("/Users/carl"), "/Users/user3", "met after ~ first");
        assert_eq!(p.user_word("ANA"), Some("user1"));
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
        assert!(looks_like_path(r"C:\Users\ana"));
        assert!(looks_like_path("C:/Users/ana"));
        assert!(looks_like_path(r"\\server\share"));
        assert!(!looks_like_path(r"C:\"));
        assert!(!looks_like_path("C:"));
        assert!(!looks_like_path(r"\\"));
        assert!(!looks_like_path(r"\n"));
    }
}
