//! The session reader: lines → validated records → sessions.
//!
//! Every tool reads through here, so every tool agrees on what a session is:
//! - A session starts at a header (`"type":"session"` with a string `id`, Pi's own test) and
//!   runs to the next header or the end of the input. A stream may hold several.
//! - Blank lines are skipped. A line Pi's `JSON.parse` would reject (malformed JSON, two records
//!   glued together) and a line that is JSON but not an object are reported and skipped, as Pi
//!   skips them. Invalid UTF-8 is reported and read as U+FFFD, as Pi reads it.
//! - Records before the first header, or after a header without a string `id`, belong to no
//!   session: they are reported as unreadable, never handed on as an empty session.
//! - In a named file, a second header is reported (it still starts a new session).

use crate::diag::{Diags, Kind};
use crate::json;
use crate::lines::{Line, LineReader, SliceLines};
use crate::message::Message;
use crate::output::Stop;
use std::borrow::Cow;
use std::io::{self, Read};

/// A session header.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    pub line: Line<'a>,
    pub id: String,
    /// 1 when the header has no `version` (the linear v1 format).
    pub version: u64,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub parent_session: Option<String>,
}

impl Header<'_> {
    /// v1 sessions are linear logs without ids.
    pub fn is_linear(&self) -> bool {
        self.version < 2
    }
}

/// Where a member's key and value are in the line, and whether the key has an escape (so
/// most lookups compare bytes only).
#[derive(Clone, Copy)]
struct Span {
    key: (usize, usize),
    value: (usize, usize),
    escaped: bool,
}

impl Span {
    fn new(b: &[u8], k: &[u8], v: &[u8]) -> Span {
        let base = b.as_ptr() as usize;
        let ks = k.as_ptr() as usize - base;
        let vs = v.as_ptr() as usize - base;
        Span {
            key: (ks, ks + k.len()),
            value: (vs, vs + v.len()),
            escaped: k.contains(&b'\\'),
        }
    }

    fn is(&self, b: &[u8], key: &str) -> bool {
        let k = &b[self.key.0..self.key.1];
        if self.escaped {
            json::key_is(k, key)
        } else {
            k == key.as_bytes()
        }
    }
}

/// One entry (any record after a header), with its top-level members located, and the members
/// of its `message` when that is an object (found in the same scan).
pub struct Entry<'a> {
    pub line: Line<'a>,
    fields: &'a [Span],
    /// `None` when the visitor does not read messages (not noted in the scan).
    message: Option<&'a [Span]>,
}

impl<'a> Entry<'a> {
    /// The raw JSON text of top-level member `key` (the last one when repeated, as in JS).
    pub fn get(&self, key: &str) -> Option<&'a [u8]> {
        let b = self.line.bytes;
        self.fields
            .iter()
            .rev()
            .find(|s| s.is(b, key))
            .map(|s| &b[s.value.0..s.value.1])
    }

    /// The members of the `message` member, as [`Message::read`] of its raw value gives
    /// them (without a second pass over it): `None` when the entry has no `message`.
    pub fn message(&self) -> Option<Message<'a>> {
        let raw = self.get("message")?;
        let Some(members) = self.message.filter(|_| raw.first() == Some(&b'{')) else {
            return Some(Message::read(raw));
        };
        let b = self.line.bytes;
        Some(Message::from_members(
            members
                .iter()
                .map(|s| (&b[s.key.0..s.key.1], &b[s.value.0..s.value.1])),
        ))
    }

    /// Member `key` as a string, when it is one.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(json::as_str)
    }

    /// The entry's `type`, when it is a string.
    pub fn kind(&self) -> Option<Cow<'a, str>> {
        self.str("type")
    }

    /// What the entry's `parentId` says: the one reading of it every tool shares.
    pub fn parent(&self) -> ParentLink<'a> {
        match self.get("parentId") {
            None => ParentLink::Absent,
            Some(b"null") => ParentLink::Root,
            Some(raw) => match json::as_str(raw) {
                Some(p) if p.is_empty() => ParentLink::Root,
                Some(p) => ParentLink::Id(p),
                None => ParentLink::NotString(raw),
            },
        }
    }

    /// The raw members, in order.
    pub fn members(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + '_ {
        let b = self.line.bytes;
        self.fields
            .iter()
            .map(move |s| (&b[s.key.0..s.key.1], &b[s.value.0..s.value.1]))
    }
}

/// What an entry's `parentId` says ([`Entry::parent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentLink<'a> {
    /// No `parentId` member (v1 entries have none).
    Absent,
    /// `null`, or an empty string, which names no entry: the entry starts a tree.
    Root,
    /// The id of its parent.
    Id(Cow<'a, str>),
    /// A value that is not a string (its raw JSON): the link is broken.
    NotString(&'a [u8]),
}

/// What a tool does with the sessions of one input.
pub trait Visitor {
    /// A session begins.
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop>;
    /// An entry of the current session, in file order.
    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop>;
    /// The current session ended (another header or the end of the input follows).
    fn end(&mut self, d: &mut Diags) -> Result<(), Stop>;
    /// A record that belongs to no readable session: one before the first header, a header
    /// that is not valid, or one after such a header. The reader reports these itself; most
    /// tools ignore them (the default does nothing).
    fn outside(&mut self, _e: &Entry<'_>, _d: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
    /// Whether the tool reads messages through [`Entry::message`]: the reader then notes the
    /// `message` object's members as it scans (most tools do; the default is yes).
    fn reads_messages(&self) -> bool {
        true
    }
}

/// A tool's reading of sessions with its per-session state made explicit: the reader's
/// [`Visitor`] for a tool that keeps state for the session being read. `header` makes the
/// state, `entry` gets it, `end` consumes it; [`PerSession`] turns one into a [`Visitor`],
/// so no tool keeps an `Option` of its state and asks whether it is in a session.
pub trait SessionVisitor {
    /// What the tool keeps about the session being read.
    type Session;
    /// A session begins: its state.
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<Self::Session, Stop>;
    /// An entry of the session, in file order.
    fn entry(&mut self, s: &mut Self::Session, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop>;
    /// The session ended (another header or the end of the input follows).
    fn end(&mut self, s: Self::Session, d: &mut Diags) -> Result<(), Stop>;
    /// As [`Visitor::outside`].
    fn outside(&mut self, _e: &Entry<'_>, _d: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
    /// As [`Visitor::reads_messages`].
    fn reads_messages(&self) -> bool {
        true
    }
}

/// A [`SessionVisitor`] with the state of the session being read: the one [`Visitor`] that
/// holds a tool's per-session state between the reader's calls.
pub struct PerSession<V: SessionVisitor> {
    pub visitor: V,
    session: Option<V::Session>,
}

impl<V: SessionVisitor> PerSession<V> {
    pub fn new(visitor: V) -> PerSession<V> {
        PerSession {
            visitor,
            session: None,
        }
    }

    /// The visitor back, once the input is read (the reader always ends the session it began).
    pub fn into_inner(self) -> V {
        self.visitor
    }
}

impl<V: SessionVisitor> Visitor for PerSession<V> {
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.session = Some(self.visitor.header(h, d)?);
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        // The reader calls `entry` only between a `header` and its `end`.
        match self.session.as_mut() {
            Some(s) => self.visitor.entry(s, e, d),
            None => Ok(()),
        }
    }

    fn end(&mut self, d: &mut Diags) -> Result<(), Stop> {
        match self.session.take() {
            Some(s) => self.visitor.end(s, d),
            None => Ok(()),
        }
    }

    fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.visitor.outside(e, d)
    }

    fn reads_messages(&self) -> bool {
        self.visitor.reads_messages()
    }
}

/// Facts about the input as a whole.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Physical lines, blank ones included.
    pub lines: u64,
    pub bytes: u64,
    /// Sessions with a valid header.
    pub sessions: u64,
    /// Lines skipped as unparseable (malformed, glued, not an object).
    pub bad_lines: u64,
    /// Entries that belonged to no readable session.
    pub unreadable: u64,
}

#[derive(PartialEq, Eq)]
enum State {
    /// Before any header.
    Before,
    /// Inside a session with a valid header.
    In,
    /// After a header without a string id: entries are unreadable until the next header.
    BadHeader,
}

/// Entries skipped because no valid header precedes them, reported when the run of them ends.
struct Unreadable {
    first_line: u64,
    count: u64,
    after_bad_header: bool,
}

/// Where lines come from: a stream read into a buffer, bytes in memory, or a mapped file
/// (`input::mapped`).
pub trait Lines {
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>>;
}

impl<R: Read> Lines for LineReader<R> {
    #[inline]
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        LineReader::next_line(self)
    }
}

impl Lines for SliceLines<'_> {
    #[inline]
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        Ok(SliceLines::next_line(self))
    }
}

/// Reads every session of `rdr`. `named_file` enables the checks that only make sense for a
/// file (a second header, an empty file).
pub fn read<R: Read>(
    rdr: R,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    read_lines(LineReader::new(rdr), named_file, d, v)
}

/// [`read`] over bytes already in memory (e.g. a small file read whole): the same sessions,
/// entries and diagnostics as reading them as a stream.
pub fn read_slice(
    data: &[u8],
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    read_lines(SliceLines::new(data), named_file, d, v)
}

/// Reads every session of the lines `lines` hands out; `named_file` as in [`read`].
pub fn read_lines<L: Lines>(
    mut lines: L,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let mut fields: Vec<Span> = Vec::new();
    let mut nested: Vec<Span> = Vec::new();
    let reads_messages = v.reads_messages();
    let mut stats = Stats::default();
    let mut state = State::Before;
    let mut unreadable: Option<Unreadable> = None;
    let mut saw_record = false;
    loop {
        let line = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                d.report(Some(stats.lines + 1), Kind::Io, format!("read error: {e}"));
                break;
            }
        };
        stats.lines = line.no;
        stats.bytes = line.offset + line.len_with_eol;
        let mut line = line;
        if line.no == 1 && line.bytes.starts_with(b"\xEF\xBB\xBF") {
            d.report(
                Some(1),
                Kind::ByteOrderMark,
                "byte-order mark at the start of the input ignored",
            );
            line.bytes = &line.bytes[3..];
            line.offset += 3;
            line.len_with_eol -= 3;
        }
        let b = line.bytes;
        let start = json::skip_ws(b, 0);
        if start == b.len() {
            continue;
        }
        if simdutf8::basic::from_utf8(b).is_err() {
            d.report(
                Some(line.no),
                Kind::InvalidUtf8,
                "invalid UTF-8 (read as U+FFFD, as Pi reads it)",
            );
        }
        fields.clear();
        nested.clear();
        // The members of the last `message` object (as `get` finds the last) are
        // `nested[message.0..message.1]`.
        let mut message = (0, 0);
        let is_message = |k: &[u8]| {
            reads_messages
                && (k == b"message" || (k.contains(&b'\\') && json::key_is(k, "message")))
        };
        let scanned = json::scan_object_nested(b, start, is_message, |m, k, val| match m {
            json::Member::Nested => nested.push(Span::new(b, k, val)),
            json::Member::Opened => {
                message = (message.1, nested.len());
                fields.push(Span::new(b, k, val));
            }
            json::Member::Top => fields.push(Span::new(b, k, val)),
        });
        match scanned {
            Ok(end) => {
                let rest = json::skip_ws(b, end);
                if rest != b.len() {
                    stats.bad_lines += 1;
                    let msg = if json::skip_value(b, rest).is_ok() {
                        format!(
                            "two records glued on one line (the second starts at byte {}); line skipped, as Pi skips it",
                            rest + 1
                        )
                    } else {
                        format!("malformed JSON: unexpected text after the object at byte {}; line skipped", rest + 1)
                    };
                    let kind = if msg.starts_with("two") {
                        Kind::Glued
                    } else {
                        Kind::MalformedJson
                    };
                    d.report(Some(line.no), kind, msg);
                    continue;
                }
            }
            Err(e) => {
                stats.bad_lines += 1;
                if b[start] != b'{' {
                    if let Ok(end) = json::skip_value(b, start) {
                        if json::skip_ws(b, end) == b.len() {
                            let what = json::kind_name(&b[start..]);
                            d.report(
                                Some(line.no),
                                Kind::NotObject,
                                format!("a JSON {what}, not an object; line skipped"),
                            );
                            continue;
                        }
                    }
                }
                let msg = if e.kind == json::ErrorKind::Eof && !line.has_newline {
                    format!("truncated last line (malformed JSON: {e}); line skipped")
                } else {
                    format!("malformed JSON: {e}; line skipped")
                };
                d.report(Some(line.no), Kind::MalformedJson, msg);
                continue;
            }
        }
        saw_record = true;
        let entry = Entry {
            line,
            fields: &fields,
            message: reads_messages.then(|| &nested[message.0..message.1]),
        };
        if entry.get("type") == Some(b"\"session\"") {
            if state == State::In {
                v.end(d)?;
            }
            flush_unreadable(&mut unreadable, d);
            match header(&entry) {
                Ok(h) => {
                    if named_file && stats.sessions > 0 {
                        d.report(
                            Some(line.no),
                            Kind::SecondHeader,
                            "a second session header in this file; it starts a new session",
                        );
                    }
                    stats.sessions += 1;
                    state = State::In;
                    v.header(&h, d)?;
                }
                Err(why) => {
                    d.report(
                        Some(line.no),
                        Kind::MalformedHeader,
                        format!("malformed session header: {why}; session unreadable"),
                    );
                    state = State::BadHeader;
                    v.outside(&entry, d)?;
                }
            }
            continue;
        }
        if state == State::In {
            v.entry(&entry, d)?;
        } else {
            v.outside(&entry, d)?;
            stats.unreadable += 1;
            let u = unreadable.get_or_insert(Unreadable {
                first_line: line.no,
                count: 0,
                after_bad_header: state == State::BadHeader,
            });
            u.count += 1;
        }
    }
    if state == State::In {
        v.end(d)?;
    }
    flush_unreadable(&mut unreadable, d);
    if named_file && !saw_record && stats.bad_lines == 0 {
        d.report(None, Kind::MissingHeader, "empty file: no session header");
    }
    Ok(stats)
}

fn flush_unreadable(u: &mut Option<Unreadable>, d: &mut Diags) {
    if let Some(u) = u.take() {
        let s = if u.count == 1 { "entry" } else { "entries" };
        if u.after_bad_header {
            d.report(
                Some(u.first_line),
                Kind::MalformedHeader,
                format!(
                    "{} {s} after a malformed session header skipped (unreadable)",
                    u.count
                ),
            );
        } else {
            d.report(
                Some(u.first_line),
                Kind::MissingHeader,
                format!(
                    "no session header before this line: {} {s} unreadable, skipped",
                    u.count
                ),
            );
        }
    }
}

/// The id and version of a header, or why it is not a valid one. `get` looks a member up.
fn check_header<'a>(get: impl Fn(&str) -> Option<&'a [u8]>) -> Result<(Cow<'a, str>, u64), String> {
    let id = match get("id") {
        Some(raw) => json::as_str(raw)
            .ok_or_else(|| format!("id is a {}, not a string", json::kind_name(raw)))?,
        None => return Err("no id".into()),
    };
    let version = match get("version") {
        None | Some(b"null") => 1,
        Some(raw) => json::as_u64(raw)
            .ok_or_else(|| format!("version is not a number ({})", String::from_utf8_lossy(raw)))?,
    };
    Ok((id, version))
}

/// Why the record `raw` (a JSON object with `"type":"session"`) is not a valid session header,
/// by the reader's own rule; `None` when it is one.
pub fn header_problem(raw: &[u8]) -> Option<String> {
    check_header(|k| json::get(raw, k)).err()
}

fn header<'a>(e: &Entry<'a>) -> Result<Header<'a>, String> {
    let (id, version) = check_header(|k| e.get(k))?;
    let s = |k: &str| e.str(k).map(Cow::into_owned);
    Ok(Header {
        line: e.line,
        id: id.into_owned(),
        version,
        timestamp: s("timestamp"),
        cwd: s("cwd"),
        parent_session: s("parentSession"),
    })
}
