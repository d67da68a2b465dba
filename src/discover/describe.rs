//! What one file is: its status and everything its `session_file` record says, from one
//! streaming pass with the reader ([`describe`]) or from bytes in memory ([`describe_bytes`]).
//! Memory is bounded by the ids of one session, never by the size of its lines.

use super::layout::Found;
use super::meter::Meter;
use super::parse_iso_ms;
use super::project::{ProjectCache, ProjectSource};
use crate::diag::{Diags, Kind};
use crate::reader::{self, PerSession};
use std::borrow::Cow;
use std::fs;
use std::io;
use std::time::UNIX_EPOCH;

/// A file's status in a `session_file` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileStatus {
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

impl FileStatus {
    pub const ALL: [FileStatus; 5] = [
        FileStatus::Ok,
        FileStatus::MetadataOnly,
        FileStatus::Unreadable,
        FileStatus::Empty,
        FileStatus::NotSession,
    ];
    pub fn name(self) -> &'static str {
        match self {
            FileStatus::Ok => "ok",
            FileStatus::MetadataOnly => "metadata_only",
            FileStatus::Unreadable => "unreadable",
            FileStatus::Empty => "empty",
            FileStatus::NotSession => "not_session",
        }
    }
    /// Whether tools read files of this status when they default to the user's sessions.
    pub fn is_fed(self) -> bool {
        !matches!(self, FileStatus::Empty | FileStatus::NotSession)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionCounts {
    pub entries: u64,
    pub messages: u64,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub leaves: u64,
    pub compactions: u64,
    /// Entries of a type, and messages of a role, the tools do not know (`crate::kinds`).
    pub unknown_entries: u64,
    pub unknown_roles: u64,
}

/// Everything a `session_file` record says about one file. Its text is owned when the file was
/// read in this run, else borrowed (`'c`) where pi-sessions' cache holds it, in the index
/// mapped for the run (`cache::sessions`: a copy of each string was most of what describing
/// a file from the cache allocated).
#[derive(Debug, Clone)]
pub struct FileMeta<'c> {
    pub found: Found,
    pub status: FileStatus,
    pub reason: Option<Cow<'c, str>>,
    pub session: Option<Cow<'c, str>>,
    pub version: Option<u64>,
    pub headers: u64,
    pub cwd: Option<Cow<'c, str>>,
    pub project: Option<Cow<'c, str>>,
    pub project_source: Option<ProjectSource>,
    pub name: Option<Cow<'c, str>>,
    pub parent_session: Option<Cow<'c, str>>,
    /// Milliseconds since the epoch.
    pub created: Option<i64>,
    pub modified: Option<i64>,
    /// `message`, `header` or `mtime`.
    pub modified_source: Option<&'static str>,
    pub bytes: u64,
    pub lines: u64,
    pub counts: Option<SessionCounts>,
    pub models: Vec<Cow<'c, str>>,
    pub bad_lines: u64,
    /// The first user prompt, when asked for (whole; the caller cuts it).
    pub first_prompt: Option<Cow<'c, str>>,
    /// The members of its record that come from what is above, as written (a cache keeps
    /// them: `cache::sessions`); `None`: written from the fields.
    pub written: Option<WrittenParts<'c>>,
}

/// The members of a `session_file` record that come from its file's content, written, in the
/// runs the members that do not (its path, place and project) split them into
/// (`cmd::sessions::record::written_parts`).
#[derive(Debug, Clone, Default)]
pub struct WrittenParts<'c> {
    /// Owned when written in this run, else where the cache holds them.
    pub bytes: Cow<'c, [u8]>,
    /// Where each part but the last ends in `bytes`.
    pub ends: [usize; 2],
}

impl WrittenParts<'_> {
    /// Part `i` (0, 1 or 2).
    pub fn part(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends.get(i).copied().unwrap_or(self.bytes.len());
        self.bytes.get(start..end).unwrap_or_default()
    }
}

/// The result of describing one file: its record (none when it vanished), and a problem of
/// the scan to report (it could not be opened or read).
pub struct FileReport<'c> {
    pub meta: Option<FileMeta<'c>>,
    pub problem: Option<String>,
}

/// Reads one file through and describes it. `prompt` asks for the first user prompt.
pub fn describe(found: &Found, prompt: bool, projects: &ProjectCache) -> FileReport<'static> {
    let path = &found.path;
    // Only a regular file is read: a FIFO would block, a device never end (issue 19, item 6).
    let file = match crate::input::open::open_regular(path) {
        Ok(Ok(f)) => f,
        Ok(Err(kind)) => {
            let why = format!("{kind}, not a regular file; not read");
            let mut m = blank(found.clone());
            m.status = FileStatus::Unreadable;
            m.reason = Some(why.clone().into());
            return FileReport {
                meta: Some(m),
                problem: Some(why),
            };
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return FileReport {
                meta: None,
                problem: Some("vanished during the scan".into()),
            }
        }
        Err(e) => {
            let mut m = blank(found.clone());
            m.status = FileStatus::Unreadable;
            m.reason = Some(format!("cannot open: {e}").into());
            if let Ok(md) = fs::metadata(path) {
                m.bytes = md.len();
                m.modified = mtime_ms(&md);
                m.modified_source = m.modified.map(|_| "mtime");
            }
            return FileReport {
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
    FileReport {
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
) -> FileMeta<'static> {
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
) -> (FileMeta<'static>, Option<String>) {
    let mut m = blank(found.clone());
    let mut visitor = PerSession::new(Meter::new(prompt));
    let mut d = Diags::quiet("pi-sessions", "");
    let stats = reader::read(rdr, true, &mut d, &mut visitor).unwrap_or_default();
    let mut v = visitor.into_inner();
    let mut problem = None;
    if d.counts().get(Kind::Io) > 0 {
        problem = Some("read error; the record describes what could be read".into());
    }
    m.bytes = stats.bytes;
    m.lines = stats.lines;
    m.bad_lines = stats.bad_lines;
    let (status, reason) = v.verdict(m.bytes);
    (m.status, m.reason) = (status, reason.map(Cow::Owned));
    if let Some(h) = &v.header {
        // An empty id names no session, as the other tools say (null).
        m.session = Some(h.id.clone()).filter(|i| !i.is_empty()).map(Cow::Owned);
        m.version = Some(h.version);
        m.cwd = h.cwd.clone().map(Cow::Owned);
        m.parent_session = h.parent_session.clone().map(Cow::Owned);
        m.created = h.timestamp.as_deref().and_then(parse_iso_ms);
        m.counts = Some(v.counts.clone());
    }
    m.headers = v.headers;
    // The latest session_info name wins; else oh-my-pi's title slot.
    m.name = v.name.take().or(v.title.take()).map(Cow::Owned);
    m.models = v.models.drain(..).map(Cow::Owned).collect();
    m.first_prompt = v.first_prompt.take().map(Cow::Owned);
    (m.project, m.project_source) = project_of(m.cwd.as_deref(), found, projects)
        .map(|(p, s)| (Cow::Owned(p.into_owned()), s))
        .unzip();
    if let Some(t) = v.last_activity.filter(|&t| t > 0) {
        m.modified = Some(t);
        m.modified_source = Some("message");
    } else if let Some(t) = m.created {
        m.modified = Some(t);
        m.modified_source = Some("header");
    }
    (m, problem)
}

/// The project of a file whose header's cwd is `cwd`, found at `found`: the cwd, else what its
/// `--<encoded cwd>--` folder stands for (which depends on the file system now, not on the
/// file: the cache of pi-sessions asks again rather than keep it). The folder is the one the
/// walk placed it under, else the nearest above it however its path was spelt
/// ([`super::project::folder_above`]: a folder walked as `.` has no name of its own).
pub fn project_of<'a>(
    cwd: Option<&'a str>,
    found: &Found,
    projects: &ProjectCache,
) -> Option<(Cow<'a, str>, ProjectSource)> {
    match cwd.filter(|c| !c.is_empty()) {
        Some(cwd) => Some((Cow::Borrowed(cwd), ProjectSource::Header)),
        None => {
            let above;
            let folder = match &found.project_folder {
                Some(f) => f,
                None => {
                    above = super::project::folder_above(&found.path)?;
                    &above
                }
            };
            projects.get(folder).map(|(p, s)| (Cow::Owned(p), s))
        }
    }
}

fn blank(found: Found) -> FileMeta<'static> {
    FileMeta {
        found,
        status: FileStatus::Unreadable,
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
        written: None,
    }
}

fn mtime_ms(md: &fs::Metadata) -> Option<i64> {
    let t = md.modified().ok()?;
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).ok(),
        Err(e) => i64::try_from(e.duration().as_millis()).ok().map(|x| -x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::probe;
    use std::path::PathBuf;

    #[test]
    fn a_vanished_file_is_a_problem_not_a_record() {
        let f = Found {
            path: PathBuf::from("/nonexistent/pi-jsonl/vanished.jsonl"),
            parent_file: None,
            project_folder: None,
            role: crate::discover::Role::Session,
            stat: None,
        };
        let d = describe(&f, false, &ProjectCache::default());
        assert!(d.meta.is_none());
        assert_eq!(d.problem.as_deref(), Some("vanished during the scan"));
        assert_eq!(
            probe(&f.path).map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
    }
}
