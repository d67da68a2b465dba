//! Finding session files: where Pi keeps them, a parallel walk of the tree, and what each file
//! is.
//!
//! pi-sessions prints what this module finds; every other tool reads the same files when it is
//! given no FILE and its stdin is a terminal ([`default_sources`], called from
//! [`crate::cli::Inputs::sources`]).
//!
//! - [`sessions_dir`]: `PI_CODING_AGENT_SESSION_DIR`, else `$PI_CODING_AGENT_DIR/sessions`,
//!   else `~/.pi/agent/sessions`.
//! - [`walk`]: every file with a wanted extension below the roots, found in parallel (rayon).
//!   Symbolic links are followed; a link back to a directory above it, an unreadable directory,
//!   a broken link or an entry that vanished mid-scan is a problem to report, never a failure.
//!   Each file is placed in Pi's layout: the `--<encoded cwd>--` folder it lies under, and the
//!   session it belongs to when it is nested in that session's own folder (`parent_file`).
//! - [`describe`]: one streaming pass over a file with the reader, counting what a
//!   `session_file` record needs; memory is bounded by the ids of one session, never by the
//!   size of its lines.
//! - [`probe`]: the first record only, to tell files that are not sessions from the others
//!   without reading everything.

use crate::diag::{Diags, Kind};
use crate::input::Source;
use crate::json;
use crate::lines::LineReader;
use crate::output::Stop;
use crate::reader::{self, Entry, Header, Visitor};
use crate::time;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

// ---------------------------------------------------------------------------------------------
// Where sessions are

/// The sessions directory and the variable it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionsDir {
    pub path: PathBuf,
    /// `PI_CODING_AGENT_SESSION_DIR`, `PI_CODING_AGENT_DIR` or `HOME`.
    pub from: &'static str,
}

/// The sessions directory, as Pi finds it, from the process environment.
pub fn sessions_dir() -> Result<SessionsDir, String> {
    sessions_dir_with(|k| std::env::var_os(k))
}

/// The sessions directory from the variables `var` looks up. An empty variable counts as
/// unset (as in Pi); a leading `~/` is expanded with `HOME`.
pub fn sessions_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Result<SessionsDir, String> {
    if let Some(v) = set_var(&var, "PI_CODING_AGENT_SESSION_DIR") {
        return Ok(SessionsDir {
            path: expand_home(&var, v),
            from: "PI_CODING_AGENT_SESSION_DIR",
        });
    }
    match agent_dir_with(&var) {
        Some((dir, from)) => Ok(SessionsDir {
            path: dir.join("sessions"),
            from,
        }),
        None => Err(
            "cannot find the sessions directory: none of PI_CODING_AGENT_SESSION_DIR, PI_CODING_AGENT_DIR and HOME is set"
                .into(),
        ),
    }
}

/// Pi's agent directory (where it keeps `models.json` and, by default, `sessions/`), from the
/// process environment; see [`agent_dir_with`].
pub fn agent_dir() -> Option<PathBuf> {
    agent_dir_with(|k| std::env::var_os(k)).map(|(p, _)| p)
}

/// Pi's agent directory and the variable it came from: `PI_CODING_AGENT_DIR` (a leading `~/`
/// expanded with `HOME`), else `~/.pi/agent`; `None` when neither is set. An empty variable
/// counts as unset, as in Pi.
pub fn agent_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Option<(PathBuf, &'static str)> {
    if let Some(v) = set_var(&var, "PI_CODING_AGENT_DIR") {
        return Some((expand_home(&var, v), "PI_CODING_AGENT_DIR"));
    }
    let home = set_var(&var, "HOME")?;
    Some((PathBuf::from(home).join(".pi").join("agent"), "HOME"))
}

fn set_var(var: impl Fn(&str) -> Option<OsString>, k: &str) -> Option<OsString> {
    var(k).filter(|v| !v.is_empty())
}

/// `~` or a leading `~/` replaced by `HOME` (when it is set).
fn expand_home(var: impl Fn(&str) -> Option<OsString>, v: OsString) -> PathBuf {
    let b = v.as_bytes();
    match set_var(var, "HOME") {
        Some(h) if b == b"~" => PathBuf::from(h),
        Some(h) if b.starts_with(b"~/") => PathBuf::from(h).join(OsStr::from_bytes(&b[2..])),
        _ => PathBuf::from(v),
    }
}

// ---------------------------------------------------------------------------------------------
// Progress on stderr

/// A one-line progress report on stderr, drawn only when stderr is a terminal and the work
/// takes long enough to be worth watching.
pub struct Progress {
    tool: &'static str,
    what: &'static str,
    done: AtomicUsize,
    total: AtomicUsize,
    stop: AtomicBool,
}

impl Progress {
    /// Runs `work` with a progress line about `what` ("found", "read").
    pub fn run<T>(tool: &'static str, what: &'static str, work: impl FnOnce(&Progress) -> T) -> T {
        let p = Progress {
            tool,
            what,
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        };
        if !io::stderr().is_terminal() {
            return work(&p);
        }
        std::thread::scope(|s| {
            let drawer = s.spawn(|| p.draw());
            let r = work(&p);
            p.stop.store(true, Ordering::Relaxed);
            let _ = drawer.join();
            r
        })
    }

    pub fn set_total(&self, n: usize) {
        self.total.store(n, Ordering::Relaxed);
    }

    pub fn add(&self, n: usize) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    fn draw(&self) {
        let start = Instant::now();
        let mut drawn = false;
        while !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if start.elapsed() < Duration::from_millis(300) {
                continue;
            }
            let done = self.done.load(Ordering::Relaxed);
            let total = self.total.load(Ordering::Relaxed);
            let width = 30;
            let line = if let Some(filled) = (done.min(total) * width).checked_div(total) {
                format!(
                    "{}: [{}{}] {done}/{total} files {}",
                    self.tool,
                    "#".repeat(filled),
                    ".".repeat(width - filled),
                    self.what
                )
            } else {
                format!("{}: {done} files {}", self.tool, self.what)
            };
            let _ = write!(io::stderr().lock(), "\r{line}\x1b[K");
            drawn = true;
        }
        if drawn {
            let _ = write!(io::stderr().lock(), "\r\x1b[K");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The walk

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

/// Whether a folder name is Pi's `--<encoded cwd>--`.
fn is_project_folder(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.len() >= 4 && b.starts_with(b"--") && b.ends_with(b"--")
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

// ---------------------------------------------------------------------------------------------
// The project a folder name stands for

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

// ---------------------------------------------------------------------------------------------
// What a file is

/// A file's status in a `session_file` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// A valid header first, and at least one message.
    Ok,
    /// A valid header first, no message.
    MetadataOnly,
    /// The first record is not a valid header (or the file cannot be read).
    Unreadable,
    /// Zero bytes.
    Empty,
    /// Not a Pi session at all (its first record has no `type`).
    NotSession,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Ok,
        Status::MetadataOnly,
        Status::Unreadable,
        Status::Empty,
        Status::NotSession,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::MetadataOnly => "metadata_only",
            Status::Unreadable => "unreadable",
            Status::Empty => "empty",
            Status::NotSession => "not_session",
        }
    }
    /// Whether tools read files of this status when they default to the user's sessions.
    pub fn is_fed(self) -> bool {
        !matches!(self, Status::Empty | Status::NotSession)
    }
}

/// What the first record of a file says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum First {
    Header,
    BadHeader(String),
    /// A record with this `type`, not a header.
    Entry(String),
    /// A record without a string `type`: not a Pi session. The keys, for the reason.
    Foreign(Vec<String>),
}

fn classify_first(raw: &[u8]) -> First {
    let raw = &raw[json::skip_ws(raw, 0)..];
    match json::get(raw, "type") {
        Some(b"\"session\"") => match reader::header_problem(raw) {
            None => First::Header,
            Some(why) => First::BadHeader(why),
        },
        Some(t) => match json::as_str(t) {
            Some(s) => First::Entry(s.into_owned()),
            None => First::Foreign(keys(raw)),
        },
        None => First::Foreign(keys(raw)),
    }
}

fn keys(raw: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    json::for_each_field(raw, |k, _| {
        if out.len() < 6 {
            let k = json::decode_string_body(k);
            out.push(crate::model::truncate_chars(&k, 24));
        }
    });
    out
}

/// What [`probe`] learned from the start of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Empty,
    NotSession,
    /// Anything else: a session, or something the tools will report as unreadable.
    Other,
}

/// Reads a file only up to its first record, to tell whether tools should read it.
pub fn probe(path: &Path) -> io::Result<Probe> {
    let f = File::open(path)?;
    if f.metadata()?.len() == 0 {
        return Ok(Probe::Empty);
    }
    let mut lines = LineReader::new(f);
    while let Some(line) = lines.next_line()? {
        let mut b = line.bytes;
        if line.no == 1 {
            b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
        }
        let start = json::skip_ws(b, 0);
        if start == b.len() {
            continue;
        }
        match json::scan_object(b, start, |_, _| {}) {
            Ok(end) if json::skip_ws(b, end) == b.len() => {
                return Ok(match classify_first(&b[start..]) {
                    First::Foreign(_) => Probe::NotSession,
                    _ => Probe::Other,
                });
            }
            _ => {
                if b[start] != b'{' {
                    if let Ok(end) = json::skip_value(b, start) {
                        if json::skip_ws(b, end) == b.len() {
                            return Ok(Probe::Other); // a JSON value that is not an object
                        }
                    }
                }
            }
        }
    }
    Ok(Probe::Other)
}

/// Counts of a file's sessions (present when it holds a valid header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub entries: u64,
    pub messages: u64,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub leaves: u64,
    pub compactions: u64,
}

/// Everything a `session_file` record says about one file.
#[derive(Debug, Clone)]
pub struct FileMeta {
    pub found: Found,
    pub status: Status,
    pub reason: Option<String>,
    pub session: Option<String>,
    pub version: Option<u64>,
    pub headers: u64,
    pub cwd: Option<String>,
    pub project: Option<String>,
    pub project_source: Option<ProjectSource>,
    pub name: Option<String>,
    pub parent_session: Option<String>,
    /// Milliseconds since the epoch.
    pub created: Option<i64>,
    pub modified: Option<i64>,
    /// `message`, `header` or `mtime`.
    pub modified_source: Option<&'static str>,
    pub bytes: u64,
    pub lines: u64,
    pub counts: Option<Counts>,
    pub models: Vec<String>,
    pub bad_lines: u64,
    /// The first user prompt, when asked for (whole; the caller cuts it).
    pub first_prompt: Option<String>,
}

/// Folder name → decoded project, shared by the threads describing files.
#[derive(Default)]
pub struct ProjectCache(Mutex<HashMap<OsString, Option<(String, ProjectSource)>>>);

impl ProjectCache {
    fn get(&self, folder: &OsStr) -> Option<(String, ProjectSource)> {
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

/// The result of describing one file: its record (none when it vanished), and a problem of
/// the scan to report (it could not be opened or read).
pub struct Described {
    pub meta: Option<FileMeta>,
    pub problem: Option<String>,
}

/// Reads one file through and describes it. `prompt` asks for the first user prompt.
pub fn describe(found: &Found, prompt: bool, projects: &ProjectCache) -> Described {
    let path = &found.path;
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Described {
                meta: None,
                problem: Some("vanished during the scan".into()),
            }
        }
        Err(e) => {
            let mut m = blank(found.clone());
            m.status = Status::Unreadable;
            m.reason = Some(format!("cannot open: {e}"));
            if let Ok(md) = fs::metadata(path) {
                m.bytes = md.len();
                m.modified = mtime_ms(&md);
                m.modified_source = m.modified.map(|_| "mtime");
            }
            return Described {
                meta: Some(m),
                problem: Some(format!("cannot open: {e}")),
            };
        }
    };
    let (mut m, problem) = describe_read(found, &file, prompt, projects);
    if m.modified.is_none() {
        if let Some(t) = file.metadata().ok().as_ref().and_then(mtime_ms) {
            m.modified = Some(t);
            m.modified_source = Some("mtime");
        }
    }
    Described {
        meta: Some(m),
        problem,
    }
}

/// Describes a file from its bytes, as pi-sessions does for each file it finds (for tests and
/// fuzzing): what [`describe`] says of it, but for the facts that only the file system knows
/// (a modification time, a failure to open it).
pub fn describe_bytes(
    found: &Found,
    bytes: &[u8],
    prompt: bool,
    projects: &ProjectCache,
) -> FileMeta {
    describe_read(found, bytes, prompt, projects).0
}

/// Describes a file from its bytes as `rdr` gives them, and says when reading failed. Its
/// `modified` comes from the session (last activity, else creation); the caller may add a
/// modification time when the session has neither.
fn describe_read(
    found: &Found,
    rdr: impl io::Read,
    prompt: bool,
    projects: &ProjectCache,
) -> (FileMeta, Option<String>) {
    let mut m = blank(found.clone());
    let mut v = Meter::new(prompt);
    let mut d = Diags::quiet("pi-sessions", "");
    let stats = reader::read(rdr, true, &mut d, &mut v).unwrap_or_default();
    let mut problem = None;
    if d.counts().get(Kind::Io) > 0 {
        problem = Some("read error; the record describes what could be read".into());
    }
    m.bytes = stats.bytes;
    m.lines = stats.lines;
    m.bad_lines = stats.bad_lines;
    let (status, reason) = if m.bytes == 0 {
        (Status::Empty, None)
    } else {
        match &v.first {
            Some((_, First::Header)) if v.not_object_first.is_none() => {
                if v.counts.messages > 0 {
                    (Status::Ok, None)
                } else {
                    (Status::MetadataOnly, None)
                }
            }
            _ => v.why_not(),
        }
    };
    m.status = status;
    m.reason = reason;
    if let Some(h) = &v.header {
        m.session = Some(h.id.clone());
        m.version = Some(h.version);
        m.cwd = h.cwd.clone();
        m.parent_session = h.parent_session.clone();
        m.created = h.timestamp.as_deref().and_then(parse_iso_ms);
        m.counts = Some(v.counts.clone());
    }
    m.headers = v.headers;
    m.name = v.name.take();
    m.models = std::mem::take(&mut v.models);
    m.first_prompt = v.first_prompt.take();
    if let Some(cwd) = m.cwd.as_ref().filter(|c| !c.is_empty()) {
        m.project = Some(cwd.clone());
        m.project_source = Some(ProjectSource::Header);
    } else if let Some(folder) = &found.project_folder {
        if let Some((p, src)) = projects.get(folder) {
            m.project = Some(p);
            m.project_source = Some(src);
        }
    }
    if let Some(t) = v.last_activity.filter(|&t| t > 0) {
        m.modified = Some(t);
        m.modified_source = Some("message");
    } else if let Some(t) = m.created {
        m.modified = Some(t);
        m.modified_source = Some("header");
    }
    (m, problem)
}

fn blank(found: Found) -> FileMeta {
    FileMeta {
        found,
        status: Status::Unreadable,
        reason: None,
        session: None,
        version: None,
        headers: 0,
        cwd: None,
        project: None,
        project_source: None,
        name: None,
        parent_session: None,
        created: None,
        modified: None,
        modified_source: None,
        bytes: 0,
        lines: 0,
        counts: None,
        models: Vec::new(),
        bad_lines: 0,
        first_prompt: None,
    }
}

fn mtime_ms(md: &fs::Metadata) -> Option<i64> {
    let t = md.modified().ok()?;
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).ok(),
        Err(e) => i64::try_from(e.duration().as_millis()).ok().map(|x| -x),
    }
}

struct HeaderInfo {
    id: String,
    version: u64,
    timestamp: Option<String>,
    cwd: Option<String>,
    parent_session: Option<String>,
}

/// The visitor that counts what a record needs, in one pass.
struct Meter {
    want_prompt: bool,
    /// The first record (line, what it is).
    first: Option<(u64, First)>,
    /// A line holding a JSON value that is not an object, seen before the first record.
    not_object_first: Option<()>,
    /// The first valid header.
    header: Option<HeaderInfo>,
    header_line: Option<u64>,
    headers: u64,
    counts: Counts,
    linear: bool,
    session_entries: u64,
    ids: HashSet<Box<[u8]>>,
    parents: HashSet<Box<[u8]>>,
    name: Option<String>,
    models: Vec<String>,
    last_activity: Option<i64>,
    first_prompt: Option<String>,
}

impl Meter {
    fn new(want_prompt: bool) -> Meter {
        Meter {
            want_prompt,
            first: None,
            not_object_first: None,
            header: None,
            header_line: None,
            headers: 0,
            counts: Counts::default(),
            linear: false,
            session_entries: 0,
            ids: HashSet::new(),
            parents: HashSet::new(),
            name: None,
            models: Vec::new(),
            last_activity: None,
            first_prompt: None,
        }
    }

    fn saw_first(&mut self, line: u64, what: impl FnOnce() -> First, d: &Diags) {
        if self.first.is_none() {
            if d.counts().get(Kind::NotObject) > 0 {
                self.not_object_first = Some(());
            }
            self.first = Some((line, what()));
        }
    }

    /// The status and reason of a file whose first record is not a valid header.
    fn why_not(&self) -> (Status, Option<String>) {
        let later = match self.header_line {
            Some(n) => format!("; a valid header follows on line {n}"),
            None => String::new(),
        };
        let pi = " (Pi reads no session from such a file)";
        match &self.first {
            _ if self.not_object_first.is_some() => (
                Status::Unreadable,
                Some(format!(
                    "a line before the first record holds a JSON value that is not an object{pi}{later}"
                )),
            ),
            None if self.headers == 0 && self.counts.entries == 0 => (
                Status::Unreadable,
                Some("no line holds a JSON object".into()),
            ),
            None => (Status::Unreadable, Some("no record".into())),
            Some((n, First::BadHeader(why))) => (
                Status::Unreadable,
                Some(format!("malformed session header on line {n}: {why}{later}")),
            ),
            Some((n, First::Entry(t))) => (
                Status::Unreadable,
                Some(format!(
                    "no session header: the first record (line {n}) is a {:?} entry{pi}{later}",
                    crate::model::truncate_chars(t, 40)
                )),
            ),
            Some((n, First::Foreign(keys))) => (
                Status::NotSession,
                Some(format!(
                    "not a Pi session: the first record (line {n}) has no \"type\" (its keys: {})",
                    keys.join(", ")
                )),
            ),
            Some((_, First::Header)) => (Status::Ok, None),
        }
    }

    fn close_session(&mut self) {
        if self.linear {
            self.counts.leaves += u64::from(self.session_entries > 0);
        } else {
            let parents = &self.parents;
            self.counts.leaves += self.ids.iter().filter(|i| !parents.contains(*i)).count() as u64;
        }
        self.ids.clear();
        self.parents.clear();
        self.session_entries = 0;
    }
}

impl Visitor for Meter {
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.saw_first(h.line.no, || First::Header, d);
        self.headers += 1;
        self.linear = h.is_linear();
        if self.header.is_none() {
            self.header_line = Some(h.line.no);
            self.header = Some(HeaderInfo {
                id: h.id.clone(),
                version: h.version,
                timestamp: h.timestamp.clone(),
                cwd: h.cwd.clone(),
                parent_session: h.parent_session.clone(),
            });
        }
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, _d: &mut Diags) -> Result<(), Stop> {
        self.counts.entries += 1;
        self.session_entries += 1;
        if !self.linear {
            if let Some(id) = e.get("id").and_then(json::as_str) {
                if !self.ids.contains(id.as_bytes()) {
                    self.ids.insert(id.as_bytes().into());
                }
            }
            if let Some(p) = e.get("parentId").and_then(json::as_str) {
                if !p.is_empty() && !self.parents.contains(p.as_bytes()) {
                    self.parents.insert(p.as_bytes().into());
                }
            }
        }
        match e.get("type") {
            Some(b"\"message\"") => self.message(e),
            Some(b"\"compaction\"") => self.counts.compactions += 1,
            Some(b"\"session_info\"") => {
                self.name = e
                    .str("name")
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty());
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _d: &mut Diags) -> Result<(), Stop> {
        self.close_session();
        Ok(())
    }

    fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.saw_first(e.line.no, || classify_first(e.line.bytes), d);
        Ok(())
    }
}

impl Meter {
    fn message(&mut self, e: &Entry<'_>) {
        self.counts.messages += 1;
        let Some(msg) = e.message() else { return };
        let crate::model::Message {
            role,
            timestamp: ts,
            model,
            content,
            ..
        } = msg;
        let user = role == Some(b"\"user\"");
        let assistant = role == Some(b"\"assistant\"");
        if user {
            self.counts.user_messages += 1;
        } else if assistant {
            self.counts.assistant_messages += 1;
            if let Some(m) = model.and_then(json::as_str) {
                if !self.models.iter().any(|x| *x == m) {
                    self.models.push(m.into_owned());
                }
            }
        }
        // Pi's last activity: user and assistant messages with content, by the message's own
        // numeric timestamp (ms), else the entry's.
        if (user || assistant) && content.is_some() {
            let t = match ts.and_then(json::as_f64) {
                Some(ms) if ms.is_finite() => Some(ms as i64),
                _ => e.str("timestamp").as_deref().and_then(parse_iso_ms),
            };
            if let Some(t) = t {
                self.last_activity = Some(self.last_activity.map_or(t, |x| x.max(t)));
            }
        }
        if user && self.want_prompt && self.first_prompt.is_none() {
            if let Some(c) = content {
                self.first_prompt = crate::model::content_text(c).filter(|t| !t.trim().is_empty());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every tool's default input

/// Set to `1` to make tools act as if stdin were a terminal (for tests).
pub const ASSUME_TTY_VAR: &str = "PI_JSONL_ASSUME_TTY";

/// Whether a tool given no FILE should read the user's sessions: stdin is a terminal (or
/// `PI_JSONL_ASSUME_TTY=1` says to act as if it were).
pub fn stdin_is_terminal() -> bool {
    std::env::var_os(ASSUME_TTY_VAR).is_some_and(|v| v == "1") || io::stdin().is_terminal()
}

/// The session files a tool reads when it is given no FILE on a terminal: everything
/// pi-sessions finds in the sessions directory except files that are empty or not sessions,
/// in path order. Says on stderr how many there are; problems of the walk are reported.
pub fn default_sources(tool: &'static str) -> Vec<Source> {
    let dir = match sessions_dir() {
        Ok(d) => d,
        Err(e) => {
            crate::diag::report_global(tool, e);
            return Vec::new();
        }
    };
    if !dir.path.is_dir() {
        crate::diag::report_global(
            tool,
            format!(
                "no FILE given and stdin is a terminal, but there is no sessions directory {} (from {}); give FILE arguments or pipe a session in",
                dir.path.display(),
                dir.from
            ),
        );
        return Vec::new();
    }
    let roots = [dir.path.clone()];
    let exts = [OsString::from("jsonl")];
    let walked = Progress::run(tool, "found", |p| walk(&roots, &exts, Some(p)));
    report_problems(tool, &walked.problems);
    let probes: Vec<Result<Probe, io::Error>> = Progress::run(tool, "checked", |p| {
        p.set_total(walked.files.len());
        walked
            .files
            .par_iter()
            .map(|f| {
                let r = probe(&f.path);
                p.add(1);
                r
            })
            .collect()
    });
    let mut out = Vec::new();
    let (mut empty, mut foreign) = (0, 0);
    for (f, r) in walked.files.iter().zip(probes) {
        match r {
            Ok(Probe::Empty) => empty += 1,
            Ok(Probe::NotSession) => foreign += 1,
            Ok(Probe::Other) => out.push(Source::Path(f.path.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                report_problems(tool, &[(f.path.clone(), "vanished during the scan".into())])
            }
            // The tool reports it when it tries to read it.
            Err(_) => out.push(Source::Path(f.path.clone())),
        }
    }
    let mut skipped = Vec::new();
    if empty > 0 {
        skipped.push(format!("{empty} empty"));
    }
    if foreign > 0 {
        skipped.push(format!("{foreign} not sessions"));
    }
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", skipped.join(", "))
    };
    let n = out.len();
    let _ = writeln!(
        io::stderr().lock(),
        "{tool}: no FILE given and stdin is a terminal: reading {n} session file{} under {}{skipped}",
        if n == 1 { "" } else { "s" },
        crate::diag::sanitize(&dir.path.to_string_lossy())
    );
    out
}

/// Reports the problems of a walk, one diagnostic each.
pub fn report_problems(tool: &'static str, problems: &[(PathBuf, String)]) {
    for (p, msg) in problems {
        Diags::new(tool, &p.to_string_lossy(), true).report(None, Kind::Io, msg);
    }
}

// ---------------------------------------------------------------------------------------------
// Time

/// A timestamp or a `--since`/`--until` bound by pi-sessions' rule: [`time::parse`] of the
/// trimmed text, refusing `24:00` and expanded years (the rule pi-sessions had before the
/// parsers were merged into [`time`]). Milliseconds since the epoch, and whether only a date
/// was given.
pub(crate) fn parse_iso(s: &str) -> Option<(i64, bool)> {
    time::parse(s.trim())
        .filter(|t| !(t.end_of_day || t.expanded_year))
        .map(|t| (t.ms, t.date_only))
}

/// [`parse_iso`] without the date-only flag.
pub(crate) fn parse_iso_ms(s: &str) -> Option<i64> {
    parse_iso(s).map(|(t, _)| t)
}

/// A name for stderr and records.
pub(crate) fn display(p: &Path) -> Cow<'_, str> {
    p.to_string_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips_and_rejects_nonsense() {
        for s in [
            "2026-04-21T08:59:18.596Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            assert_eq!(time::format_iso8601(parse_iso_ms(s).unwrap()), s);
        }
        assert_eq!(parse_iso("2026-01-02"), Some((1_767_312_000_000, true)));
        assert_eq!(
            parse_iso_ms("2026-01-02T03:04:05+02:00"),
            parse_iso_ms("2026-01-02T01:04:05Z")
        );
        assert_eq!(
            parse_iso_ms("2026-01-02 03:04"),
            parse_iso_ms("2026-01-02T03:04:00.000Z")
        );
        assert_eq!(
            parse_iso_ms("2026-01-02T03:04:05.1234567Z"),
            parse_iso_ms("2026-01-02T03:04:05.123Z")
        );
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30",
            "2026-01-02T25:00",
            "2026-01-02T03:04:05Zjunk",
            "yesterday",
            "2026-1-2",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
        // pi-sessions' own rule on top of time::parse: padded text is trimmed, a leap second
        // is read; 24:00 and expanded years are refused.
        assert_eq!(parse_iso(" 2026-01-02 "), Some((1_767_312_000_000, true)));
        assert_eq!(
            parse_iso_ms("2016-12-31T23:59:60Z"),
            parse_iso_ms("2017-01-01T00:00:00Z")
        );
        for bad in ["2026-01-02T24:00:00Z", "+002026-01-02"] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }

    #[test]
    fn sessions_dir_follows_pi_precedence() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let d = sessions_dir_with(env(&[
            ("HOME", "/h"),
            ("PI_CODING_AGENT_DIR", "/a"),
            ("PI_CODING_AGENT_SESSION_DIR", "/s"),
        ]))
        .unwrap();
        assert_eq!(d.path, PathBuf::from("/s"));
        let d = sessions_dir_with(env(&[
            ("HOME", "/h"),
            ("PI_CODING_AGENT_DIR", "~/x"),
            ("PI_CODING_AGENT_SESSION_DIR", ""),
        ]))
        .unwrap();
        assert_eq!(
            (d.path, d.from),
            (PathBuf::from("/h/x/sessions"), "PI_CODING_AGENT_DIR")
        );
        let d = sessions_dir_with(env(&[("HOME", "/h")])).unwrap();
        assert_eq!(d.path, PathBuf::from("/h/.pi/agent/sessions"));
        assert!(sessions_dir_with(env(&[])).is_err());
        // The agent directory alone (where models.json is), by the same rules.
        assert_eq!(
            agent_dir_with(env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "~")])),
            Some((PathBuf::from("/h"), "PI_CODING_AGENT_DIR"))
        );
        assert_eq!(
            agent_dir_with(env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "")])),
            Some((PathBuf::from("/h/.pi/agent"), "HOME"))
        );
        assert_eq!(
            agent_dir_with(env(&[("PI_CODING_AGENT_DIR", "~/x")])),
            Some((PathBuf::from("~/x"), "PI_CODING_AGENT_DIR"))
        );
        assert_eq!(agent_dir_with(env(&[("HOME", "")])), None);
    }

    #[test]
    fn classifies_first_records() {
        assert_eq!(
            classify_first(br#"{"type":"session","id":"x"}"#),
            First::Header
        );
        assert!(matches!(
            classify_first(br#"{"type":"session","id":3}"#),
            First::BadHeader(_)
        ));
        assert_eq!(
            classify_first(br#"{"type":"message","id":"a"}"#),
            First::Entry("message".into())
        );
        assert_eq!(
            classify_first(br#"{"version":1,"recordType":"message"}"#),
            First::Foreign(vec!["version".into(), "recordType".into()])
        );
    }

    #[test]
    fn a_vanished_file_is_a_problem_not_a_record() {
        let f = Found {
            path: PathBuf::from("/nonexistent/pi-jsonl/vanished.jsonl"),
            parent_file: None,
            project_folder: None,
        };
        let d = describe(&f, false, &ProjectCache::default());
        assert!(d.meta.is_none());
        assert_eq!(d.problem.as_deref(), Some("vanished during the scan"));
        assert_eq!(
            probe(&f.path).map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
    }

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
