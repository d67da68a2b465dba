//! The one streaming pass over a file that counts what a `session_file` record needs: the
//! reader's visitor, with the state of the session being read kept apart from the file's.

use super::describe::{FileStatus, SessionCounts};
use super::parse_iso_ms;
use super::probe::{classify_first, FirstRecord};
use crate::diag::{Diags, Kind};
use crate::json::Raw;
use crate::kinds;
use crate::output::Stop;
use crate::reader::{Entry, Header, SessionVisitor};
use std::collections::HashSet;

/// The fields of the first valid header.
pub(super) struct FirstHeader {
    pub id: String,
    pub version: u64,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub parent_session: Option<String>,
}

/// What the meter keeps about the session being read: enough to count its leaves.
pub(super) struct SessionTree {
    /// A v1 session: no ids, one linear branch.
    linear: bool,
    entries: u64,
    ids: HashSet<Box<[u8]>>,
    parents: HashSet<Box<[u8]>>,
}

impl SessionTree {
    /// The ids that no entry names as its parent (one for a non-empty v1 log).
    fn leaves(&self) -> u64 {
        if self.linear {
            u64::from(self.entries > 0)
        } else {
            self.ids
                .iter()
                .filter(|i| !self.parents.contains(*i))
                .count() as u64
        }
    }
}

/// The visitor that counts what a record needs, in one pass (through
/// [`crate::reader::PerSession`]).
pub(super) struct Meter {
    want_prompt: bool,
    /// The first record (line, what it is).
    pub first: Option<(u64, FirstRecord)>,
    /// A line holding a JSON value that is not an object, seen before the first record.
    pub not_object_first: bool,
    /// The first valid header, and its line.
    pub header: Option<FirstHeader>,
    pub header_line: Option<u64>,
    pub headers: u64,
    pub counts: SessionCounts,
    pub name: Option<String>,
    /// oh-my-pi's title slot before the first valid header, when it holds a title.
    pub title: Option<String>,
    /// The assistant messages' models, in the order first seen.
    pub models: Vec<String>,
    /// The same models, for the lookup (hashed: a file may name very many).
    seen_models: crate::hash::FastSet<Box<str>>,
    pub last_activity: Option<i64>,
    pub first_prompt: Option<String>,
}

impl Meter {
    pub fn new(want_prompt: bool) -> Meter {
        Meter {
            want_prompt,
            first: None,
            not_object_first: false,
            header: None,
            header_line: None,
            headers: 0,
            counts: SessionCounts::default(),
            name: None,
            title: None,
            models: Vec::new(),
            seen_models: Default::default(),
            last_activity: None,
            first_prompt: None,
        }
    }

    fn saw_first(&mut self, line: u64, what: impl FnOnce() -> FirstRecord, d: &Diags) {
        if self.first.is_none() {
            if d.counts().get(Kind::NotObject) > 0 {
                self.not_object_first = true;
            }
            self.first = Some((line, what()));
        }
    }

    /// The status of a file of `bytes` bytes that was read through, and the reason when it is
    /// not a readable session.
    pub fn verdict(&self, bytes: u64) -> (FileStatus, Option<String>) {
        if bytes == 0 {
            return (FileStatus::Empty, None);
        }
        match &self.first {
            Some((_, FirstRecord::Header)) if !self.not_object_first => {
                if self.counts.messages > 0 {
                    (FileStatus::Ok, None)
                } else {
                    (FileStatus::MetadataOnly, None)
                }
            }
            _ => self.why_not(),
        }
    }

    /// The status and reason of a file whose first record is not a valid header.
    fn why_not(&self) -> (FileStatus, Option<String>) {
        let later = match self.header_line {
            Some(n) => format!("; a valid header follows on line {n}"),
            None => String::new(),
        };
        let pi = " (Pi reads no session from such a file)";
        match &self.first {
            _ if self.not_object_first => (
                FileStatus::Unreadable,
                Some(format!(
                    "a line before the first record holds a JSON value that is not an object{pi}{later}"
                )),
            ),
            None if self.headers == 0 && self.counts.entries == 0 => (
                FileStatus::Unreadable,
                Some("no line holds a JSON object".into()),
            ),
            None => (FileStatus::Unreadable, Some("no record".into())),
            Some((n, FirstRecord::BadHeader(why))) => (
                FileStatus::Unreadable,
                Some(format!("malformed session header on line {n}: {why}{later}")),
            ),
            Some((n, FirstRecord::Entry(t))) => (
                FileStatus::Unreadable,
                Some(format!(
                    "no session header: the first record (line {n}) is a {:?} entry{pi}{later}",
                    crate::message::truncate_chars(t, 40)
                )),
            ),
            Some((n, FirstRecord::Foreign(keys))) => (
                FileStatus::NotSession,
                Some(format!(
                    "not a Pi session: the first record (line {n}) has no \"type\" (its keys: {})",
                    keys.join(", ")
                )),
            ),
            Some((_, FirstRecord::Header)) => (FileStatus::Ok, None),
        }
    }
}

impl SessionVisitor for Meter {
    type Session = SessionTree;

    /// A file whose first record is no header is `unreadable` here (Pi loads no session from
    /// it), however the other tools read it.
    fn reads_fragments(&self) -> bool {
        false
    }

    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<SessionTree, Stop> {
        self.saw_first(h.line.no, || FirstRecord::Header, d);
        self.headers += 1;
        if self.header.is_none() {
            self.header_line = Some(h.line.no);
            self.title = h.title.as_ref().and_then(|t| t.title.clone());
            self.header = Some(FirstHeader {
                id: h.id.clone(),
                version: h.version,
                timestamp: h.timestamp.clone(),
                cwd: h.cwd.clone(),
                parent_session: h.parent_session.clone(),
            });
        }
        Ok(SessionTree {
            linear: h.is_linear(),
            entries: 0,
            ids: HashSet::new(),
            parents: HashSet::new(),
        })
    }

    fn entry(&mut self, s: &mut SessionTree, e: &Entry<'_>, _d: &mut Diags) -> Result<(), Stop> {
        self.counts.entries += 1;
        s.entries += 1;
        if !s.linear {
            // An empty id is none (as Pi and pi-branch read it): such an entry is no leaf.
            // Ids keyed as Pi compares them (`Entry::key`: lone surrogates kept apart).
            if let Some(id) = e.key("id").filter(|i| !i.is_empty()) {
                if !s.ids.contains(&*id) {
                    s.ids.insert(id.into());
                }
            }
            if let Some(p) = e.key("parentId") {
                if !p.is_empty() && !s.parents.contains(&*p) {
                    s.parents.insert(p.into());
                }
            }
        }
        match e.get("type").map(Raw::unescaped).as_deref() {
            Some(b"\"message\"") => self.message(e),
            Some(b"\"compaction\"") => self.counts.compactions += 1,
            Some(b"\"session_info\"") => {
                self.name = e
                    .str("name")
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty());
            }
            _ => {
                if !e.kind().is_some_and(|k| kinds::is_known_entry_type(&k)) {
                    self.counts.unknown_entries += 1;
                }
            }
        }
        Ok(())
    }

    fn end(&mut self, s: SessionTree, _d: &mut Diags) -> Result<(), Stop> {
        self.counts.leaves += s.leaves();
        Ok(())
    }

    fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.saw_first(e.line.no, || classify_first(e.object), d);
        Ok(())
    }
}

impl Meter {
    fn message(&mut self, e: &Entry<'_>) {
        self.counts.messages += 1;
        let Some(msg) = e.message() else { return };
        let crate::message::Message {
            role,
            timestamp: ts,
            model,
            content,
            ..
        } = msg;
        if !role
            .and_then(Raw::as_str)
            .is_some_and(|r| kinds::is_known_role(&r))
        {
            self.counts.unknown_roles += 1;
        }
        let user = role.is_some_and(|r| r.is_str("user"));
        let assistant = role.is_some_and(|r| r.is_str("assistant"));
        if user {
            self.counts.user_messages += 1;
        } else if assistant {
            self.counts.assistant_messages += 1;
            if let Some(m) = model.and_then(Raw::as_str) {
                if !self.seen_models.contains(m.as_ref()) {
                    self.seen_models.insert(m.as_ref().into());
                    self.models.push(m.into_owned());
                }
            }
        }
        // Pi's last activity: user and assistant messages with content, by the message's own
        // numeric timestamp (ms), else the entry's.
        if (user || assistant) && content.is_some() {
            let t = match ts.and_then(Raw::as_f64) {
                Some(ms) if ms.is_finite() => Some(ms as i64),
                _ => e.str("timestamp").as_deref().and_then(parse_iso_ms),
            };
            if let Some(t) = t {
                self.last_activity = Some(self.last_activity.map_or(t, |x| x.max(t)));
            }
        }
        if user && self.want_prompt && self.first_prompt.is_none() {
            if let Some(c) = content {
                self.first_prompt =
                    crate::message::content_text(c).filter(|t| !t.trim().is_empty());
            }
        }
    }
}
