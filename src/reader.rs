//! The session reader: lines → validated records → sessions.
//!
//! Every tool reads through here, so every tool agrees on what a session is:
//! - A session starts at a header (`"type":"session"` with a string `id`, Pi's own test) and
//!   runs to the next header or the end of the input. A stream may hold several.
//! - Blank lines are skipped. Whitespace Pi trims off a whole file (JavaScript's `trim`: form
//!   feed, NBSP, U+2028, the byte-order mark, ...) is ignored before a file's first record and
//!   after its last, a session header starting a file in a stream; a line of it is blank. A line Pi's `JSON.parse` would reject (malformed JSON, two records
//!   glued together) and a line that is JSON but not an object are reported and skipped, as Pi
//!   skips them. Invalid UTF-8 is reported and read as U+FFFD, as Pi reads it.
//! - Records before the first header, or after a header without a string `id`, belong to no
//!   session: they are reported as unreadable, never handed on as an empty session.
//! - In a named file, a second header is reported (it still starts a new session).
//! - A *fragment*: records with no header before them are read as a session of their own,
//!   without its header, from the first that is a Pi entry ([`is_pi_entry`]: the one rule for
//!   "fragment" versus "not a session"), so `tail`, `grep`, `jq` and `sed` output composes
//!   with every tool. One note says so (not a problem: the exit status stays 0). Records
//!   before that first Pi entry are unreadable, as before; pi-sessions' own pass asks for no
//!   fragments ([`Visitor::reads_fragments`]), so a headerless file stays `unreadable` there.
//! - oh-my-pi's title slot (`{"type":"title","v":1,...}`, [`is_title_slot`]) before a header
//!   is that session's title ([`Header::title`]), not an unreadable record.

use crate::diag::{Diags, Kind};
use crate::json::{self, Raw};
use crate::lines::{Line, LineReader, SliceLines};
use crate::message::Message;
use crate::output::Stop;
use crate::sync::lock;
use std::any::Any;
use std::borrow::Cow;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::{Arc, Mutex};

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
    /// A fragment: entries read without their header (see the module docs). Its `line` is
    /// that of its first entry, its `id` the one in the file's name (Pi's
    /// `<time>_<id>.jsonl`) or empty when unknown, its version 3 (1 when that first entry has
    /// no `id`: a v1 log), its timestamp, cwd and parent unknown.
    pub fragment: bool,
    /// oh-my-pi's title slot on the line before the header, when there is one.
    pub title: Option<TitleSlot<'a>>,
}

/// oh-my-pi's title slot: a fixed-width (256-byte, space-padded) rewritable first line,
/// `{"type":"title","v":1,"title":…,"source"?:…,"updatedAt":…,"pad":"   "}`, written before
/// the session header (oh-my-pi's `session-title-slot.ts`).
#[derive(Debug, Clone)]
pub struct TitleSlot<'a> {
    pub line: Line<'a>,
    /// Its `title`, trimmed; `None` when empty (the slot is written before a title is known).
    pub title: Option<String>,
}

/// The session id a record should carry: `None` for a fragment whose session is not known
/// (and for an empty `id`, which names nothing).
pub fn session_id(id: &str) -> Option<&str> {
    (!id.is_empty()).then_some(id)
}

impl Header<'_> {
    /// v1 sessions are linear logs without ids.
    pub fn is_linear(&self) -> bool {
        self.version < 2
    }
}

/// A top-level member of a line: its key as written (escapes undecoded), its value, and whether
/// the key has an escape (so most lookups compare bytes only).
#[derive(Clone, Copy)]
struct Field<'a> {
    key: &'a [u8],
    value: Raw<'a>,
    escaped: bool,
}

impl<'a> Field<'a> {
    #[inline]
    fn new(key: &'a [u8], value: Raw<'a>) -> Field<'a> {
        Field {
            key,
            value,
            escaped: key.contains(&b'\\'),
        }
    }

    /// Inlined always (with [`Entry::get`]): `key` is then a literal, and the compare one of
    /// its known length.
    #[inline(always)]
    fn is(&self, key: &str) -> bool {
        if self.escaped {
            return escaped_key_is(self.key, key);
        }
        let key = key.as_bytes();
        self.key.len() == key.len() && self.key[..key.len()] == *key
    }
}

/// [`json::key_is`] of a key written with an escape (rare: out of line).
#[inline(never)]
fn escaped_key_is(raw_key: &[u8], key: &str) -> bool {
    json::key_is(raw_key, key)
}

/// A member of a member (of `message`, of its `usage`) as the scan hands it out: its raw key
/// (escapes undecoded) and its value. The reader only hands it on, never looks it up by name,
/// so unlike a [`Field`] it does not note whether its key has an escape.
pub type Member<'a> = (&'a [u8], Raw<'a>);

/// The members of an object as the reader's scan noted them (a message's `usage`, handed on in
/// [`Message::usage_noted`]): its readers need not walk the object again.
#[derive(Clone, Copy, Default)]
pub struct NotedMembers<'a>(&'a [Member<'a>]);

impl<'a> NotedMembers<'a> {
    /// The members, when they are those of `object`: they lie inside its text. (The scan notes
    /// the last `usage` object of a message; a `usage` member after it that is no object is
    /// the one that counts, and these are not its members. An empty list says nothing.)
    pub fn of(self, object: Raw<'a>) -> Option<impl Iterator<Item = (&'a [u8], Raw<'a>)>> {
        let (first, last) = (self.0.first()?, self.0.last()?);
        let text = object.bytes().as_ptr_range();
        let (from, to) = (first.0.as_ptr(), last.1.bytes().as_ptr_range().end);
        (text.start < from && to < text.end).then(|| self.0.iter().copied())
    }
}

impl std::fmt::Debug for NotedMembers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NotedMembers({})", self.0.len())
    }
}

/// One entry (any record after a header), with its top-level members located, and the members
/// of its `message` when that is an object (found in the same scan).
pub struct Entry<'a> {
    pub line: Line<'a>,
    /// The record: the line's object as the scanner validated it (the line without the blanks
    /// around it).
    pub object: Raw<'a>,
    fields: &'a [Field<'a>],
    /// The members of the `message` object and of its `usage` object, `None` when the visitor
    /// does not read messages (not noted in the scan).
    message: Option<(&'a [Member<'a>], &'a [Member<'a>])>,
    utf8: bool,
    /// The long strings the scan noted in the record, when the visitor asks for them
    /// ([`Visitor::notes_strings`]); else empty.
    strings: json::Noted<'a>,
    /// The facts the visitor's [`Ahead`] found in this entry ahead of the reader: the store of
    /// its chunk, and the entry's place in it.
    ahead: Option<(&'a (dyn Any + Send), usize)>,
}

impl<'a> Entry<'a> {
    /// The strings the validating scan noted in the record with their ends and measures
    /// ([`json::Noted`]), when the visitor asks for them ([`Visitor::notes_strings`]): a
    /// second look at a long text of the record finds them there instead of reading it again.
    /// Empty otherwise (each string is then read); a tool reads the same either way.
    #[inline]
    pub fn noted_strings(&self) -> json::Noted<'a> {
        self.strings
    }

    /// The facts of type `T` the visitor's [`Ahead`] found in this entry ahead of the reader;
    /// `None` when the entry was not read ahead (a small input, one thread, a line the
    /// reader read again).
    #[inline]
    pub fn ahead<T: 'static>(&self) -> Option<&'a T> {
        let (facts, i) = self.ahead_store::<Vec<T>>()?;
        facts.get(i)
    }

    /// The store of type `S` the visitor's [`Ahead`] made for this entry's chunk, and the
    /// entry's place among the chunk's records: for facts kept in a store of the tool's own
    /// (flat vectors shared by the chunk's records) rather than one value per record.
    #[inline]
    pub fn ahead_store<S: 'static>(&self) -> Option<(&'a S, usize)> {
        let (facts, i) = self.ahead?;
        Some((facts.downcast_ref::<S>()?, i))
    }

    /// The value of top-level member `key` (the last one when repeated, as in JS). Inlined
    /// always: the key is a literal at almost every call, so each compare is one of a known
    /// length (no `memcmp` call a member).
    #[inline(always)]
    pub fn get(&self, key: &str) -> Option<Raw<'a>> {
        let mut i = self.fields.len();
        while i > 0 {
            i -= 1;
            let f = &self.fields[i];
            if f.is(key) {
                return Some(f.value);
            }
        }
        None
    }

    /// The members of the `message` member, as [`Message::read`] of its value gives them
    /// (without a second pass over it): `None` when the entry has no `message`.
    #[inline(always)]
    pub fn message(&self) -> Option<Message<'a>> {
        let raw = self.get("message")?;
        Some(self.message_of(raw))
    }

    /// [`Entry::message`], with no members when the entry has no `message`: the message as it
    /// is built, where the caller keeps it (moving it out of an `Option` copies ~370 bytes).
    #[inline(always)]
    pub fn message_or_default(&self) -> Message<'a> {
        match self.get("message") {
            Some(raw) => self.message_of(raw),
            None => Message::default(),
        }
    }

    /// The members of `raw`, the entry's `message`: as the scan noted them when it is an
    /// object and they were noted, else read from it.
    #[inline(always)]
    fn message_of(&self, raw: Raw<'a>) -> Message<'a> {
        match self.message {
            Some((members, usage)) if raw.first() == Some(&b'{') => {
                let mut m = Message::from_members(members.iter().copied());
                m.usage_noted = NotedMembers(usage);
                m
            }
            _ => Message::read(raw),
        }
    }

    /// The `message` member (the last, as [`Entry::get`] finds it) when it is an object, and
    /// its members (raw key, value) as the scan found them: no second pass over it. `None`
    /// when there is no such object or the visitor does not read messages.
    pub fn message_members(&self) -> Option<(Raw<'a>, &'a [Member<'a>])> {
        let raw = self.get("message").filter(|m| m.first() == Some(&b'{'))?;
        Some((raw, self.message?.0))
    }

    /// Where `s` lies in this entry's line, when it is a slice of it (a string read without
    /// escapes; one decoded into memory of its own is not in the line): for facts read ahead
    /// ([`Ahead`]), which cannot borrow the line, to name a string of it.
    pub fn place_of(&self, s: &str) -> Option<Range<usize>> {
        self.place_of_bytes(s.as_bytes())
    }

    /// [`Entry::place_of`] for bytes of the line (a raw value, a string's body); read them
    /// back with `line.bytes.get(place)`.
    pub fn place_of_bytes(&self, b: &[u8]) -> Option<Range<usize>> {
        let from = (b.as_ptr() as usize).checked_sub(self.line.bytes.as_ptr() as usize)?;
        (from + b.len() <= self.line.bytes.len()).then(|| from..from + b.len())
    }

    /// The text at `place` in this entry's line ([`Entry::place_of`]); `None` when the line
    /// has no valid text there.
    pub fn text_at(&self, place: Range<usize>) -> Option<&'a str> {
        std::str::from_utf8(self.line.bytes.get(place)?).ok()
    }

    /// Whether the reader checked the whole line and found it valid UTF-8: text taken from it
    /// needs no check of its own. `false` when it is not valid, or was not checked where the
    /// entry was made (a line read again); a tool then checks what it uses.
    pub fn is_utf8(&self) -> bool {
        self.utf8
    }

    /// Member `key` as a string, when it is one.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(Raw::as_str)
    }

    /// Member `key` as an id is compared: its key (`json::string_key`), when it is a string.
    /// Ids that differ only in lone surrogate escapes (`"\ud800"`, `"\ud801"`, a written
    /// U+FFFD) are different ids to Pi, and their keys differ; [`Entry::str`] shows each as
    /// U+FFFD.
    pub fn key(&self, key: &str) -> Option<Cow<'a, [u8]>> {
        self.get(key).and_then(Raw::as_key)
    }

    /// The entry's `type`, when it is a string.
    pub fn kind(&self) -> Option<Cow<'a, str>> {
        self.str("type")
    }

    /// What the entry's `parentId` says: the one reading of it every tool shares.
    pub fn parent(&self) -> ParentLink<'a> {
        match self.get("parentId") {
            None => ParentLink::Absent,
            Some(raw) if raw.is_null() => ParentLink::Root,
            Some(raw) => match raw.as_key() {
                Some(p) if p.is_empty() => ParentLink::Root,
                Some(p) => ParentLink::Id(p),
                None => ParentLink::NotString(raw),
            },
        }
    }

    /// The model a `model_change` entry switches to, as (provider, model id): Pi writes
    /// `provider` and `modelId`; oh-my-pi writes only `model`, as `"provider/id"` (split at
    /// the first `/`: ids may hold more, as `openrouter/~anthropic/claude`). `None` when
    /// neither gives both parts.
    pub fn model_change(&self) -> Option<(Cow<'a, str>, Cow<'a, str>)> {
        if let Some(p) = self.str("provider") {
            return Some((p, self.str("modelId").or_else(|| self.str("model"))?));
        }
        let model = self.str("model")?;
        let (p, id) = model
            .split_once('/')
            .filter(|(p, id)| !p.is_empty() && !id.is_empty())?;
        Some((Cow::Owned(p.to_owned()), Cow::Owned(id.to_owned())))
    }

    /// The members (raw key, value), in order.
    pub fn members(&self) -> impl Iterator<Item = (&'a [u8], Raw<'a>)> + '_ {
        self.fields.iter().map(|f| (f.key, f.value))
    }
}

/// What an entry's `parentId` says ([`Entry::parent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentLink<'a> {
    /// No `parentId` member (v1 entries have none).
    Absent,
    /// `null`, or an empty string, which names no entry: the entry starts a tree.
    Root,
    /// The id of its parent, as its key (`json::string_key`): the text, but for a lone
    /// surrogate escape, kept apart from U+FFFD and from another one as Pi's JavaScript
    /// strings keep them. Compare it with other ids' keys ([`Entry::key`]).
    Id(Cow<'a, [u8]>),
    /// A value that is not a string (its raw JSON): the link is broken.
    NotString(Raw<'a>),
}

/// What a tool finds in each record ahead of the reader (issue 20): on the threads that
/// prescan a large input ([`prescan`]), the tool reads from each entry what does not depend on
/// other lines into facts of its own, which its visitor then finds with [`Entry::ahead`]
/// instead of reading the entry again; so the one reader that works in order has less to do.
/// Facts depend on the entry alone (not on its line number, which a prescan does not know),
/// and a visitor reads an entry the same with or without them (an entry read on one thread
/// has none).
pub trait Ahead: Send + Sync {
    /// An empty store for the facts of one chunk's records, one per record in order: `used`
    /// emptied when it is one of this `Ahead`'s stores (of a chunk done with), else a new one.
    fn chunk(&self, used: Option<Box<dyn Any + Send>>) -> Box<dyn Any + Send>;
    /// Adds the facts of `e` to `facts` (made by [`Ahead::chunk`]).
    fn record(&self, facts: &mut (dyn Any + Send), e: &Entry<'_>);
}

/// An empty `Vec<T>` for an [`Ahead::chunk`] whose facts are kept in one: `used` emptied when
/// it is such a vector (its memory reused), else a new one.
pub fn facts_vec<T: Send + 'static>(used: Option<Box<dyn Any + Send>>) -> Box<dyn Any + Send> {
    match used.map(|u| u.downcast::<Vec<T>>()) {
        Some(Ok(mut facts)) => {
            facts.clear();
            facts
        }
        _ => Box::new(Vec::<T>::new()),
    }
}

/// An [`Ahead`] whose facts are what a function gives for each entry (kept in a `Vec<T>`).
pub struct AheadFn<T>(pub fn(&Entry<'_>) -> T);

impl<T: Send + 'static> Ahead for AheadFn<T> {
    fn chunk(&self, used: Option<Box<dyn Any + Send>>) -> Box<dyn Any + Send> {
        facts_vec::<T>(used)
    }

    fn record(&self, facts: &mut (dyn Any + Send), e: &Entry<'_>) {
        if let Some(v) = facts.downcast_mut::<Vec<T>>() {
            v.push((self.0)(e));
        }
    }
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
    /// A line of the current session that is a JSON array: reported and skipped like any
    /// line that is no object, but Pi's loader keeps it, so its version-1 migration counts it
    /// among the entries `firstKeptEntryIndex` indexes (pi-compactions; the default does
    /// nothing; pi-redact writes `[]` there). Called after the line's diagnostic.
    fn array_line(&mut self, _line: u64) -> Result<(), Stop> {
        Ok(())
    }
    /// Whether the tool reads messages through [`Entry::message`]: the reader then notes the
    /// `message` object's members as it scans (most tools do; the default is yes).
    fn reads_messages(&self) -> bool {
        true
    }
    /// Whether records with no header before them are read as a fragment (every tool but
    /// pi-sessions, which classifies such a file as unreadable; the default is yes).
    fn reads_fragments(&self) -> bool {
        true
    }
    /// Whether the tool reads long texts of records a second time through
    /// [`Entry::noted_strings`]: the reader then notes the strings its scan goes past
    /// (pi-tools; the default is no).
    fn notes_strings(&self) -> bool {
        false
    }
    /// What the tool reads from each record ahead of the reader ([`Ahead`]), if anything
    /// (the default: nothing).
    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        None
    }
}

/// What the reader's scan notes of each record besides its top-level members, as the
/// visitor asks: the members of its `message` ([`Visitor::reads_messages`]), its long
/// strings ([`Visitor::notes_strings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notes {
    pub messages: bool,
    pub strings: bool,
}

impl Notes {
    /// A message's members, no strings: what most tools ask for.
    pub const MESSAGES: Notes = Notes {
        messages: true,
        strings: false,
    };

    /// What `v` asks for.
    pub fn of(v: &(impl Visitor + ?Sized)) -> Notes {
        Notes {
            messages: v.reads_messages(),
            strings: v.notes_strings(),
        }
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
    /// As [`Visitor::array_line`].
    fn array_line(&mut self, _s: &mut Self::Session, _line: u64) -> Result<(), Stop> {
        Ok(())
    }
    /// As [`Visitor::reads_messages`].
    fn reads_messages(&self) -> bool {
        true
    }
    /// As [`Visitor::reads_fragments`].
    fn reads_fragments(&self) -> bool {
        true
    }
    /// As [`Visitor::notes_strings`].
    fn notes_strings(&self) -> bool {
        false
    }
    /// As [`Visitor::ahead`].
    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        None
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

    fn array_line(&mut self, line: u64) -> Result<(), Stop> {
        match self.session.as_mut() {
            Some(s) => self.visitor.array_line(s, line),
            None => Ok(()),
        }
    }

    fn reads_messages(&self) -> bool {
        self.visitor.reads_messages()
    }

    fn reads_fragments(&self) -> bool {
        self.visitor.reads_fragments()
    }

    fn notes_strings(&self) -> bool {
        self.visitor.notes_strings()
    }

    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        self.visitor.ahead()
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
    /// Fragments: runs of entries read without their header.
    pub fragments: u64,
    /// Lines skipped as unparseable (malformed, glued, not an object).
    pub bad_lines: u64,
    /// Entries that belonged to no readable session.
    pub unreadable: u64,
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

/// For unit tests: what `f` makes of each entry the reader hands over from `input`, in order
/// (headers skipped, diagnostics counted quietly).
#[cfg(test)]
pub(crate) fn map_entries<T>(input: &str, f: impl FnMut(&Entry<'_>) -> T) -> Vec<T> {
    struct Each<F, T>(F, Vec<T>);
    impl<T, F: FnMut(&Entry<'_>) -> T> Visitor for Each<F, T> {
        fn header(&mut self, _: &Header<'_>, _: &mut Diags) -> Result<(), Stop> {
            Ok(())
        }
        fn entry(&mut self, e: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
            self.1.push((self.0)(e));
            Ok(())
        }
        fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
            Ok(())
        }
    }
    let mut each = Each(f, Vec::new());
    let mut d = Diags::quiet("test", "t");
    read_slice(input.as_bytes(), false, &mut d, &mut each).expect("the visitor never stops");
    each.1
}

/// Reads every session of the lines `lines` hands out; `named_file` as in [`read`].
pub fn read_lines<L: Lines>(
    lines: L,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    read_lines_with(Unscanned(lines), named_file, d, v)
}

/// [`read_lines`] over lines validated ahead ([`prescan`]): `next` hands out the prescans of
/// consecutive chunks of the input, in order, and their lines are the reader's (it does not
/// split the input again). A line the prescan found to be one JSON object is not scanned
/// again; any other (blank, malformed, trimmed, the first line's byte-order mark) is read as
/// [`read_lines`] reads it. The same sessions, entries and diagnostics as [`read_lines`].
/// The chunks read are given to `spares`, for the next prescans.
pub fn read_lines_prescanned<'a>(
    next: &mut dyn FnMut() -> Option<Prescan<'a>>,
    spares: &Spares<'a>,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let chunks = PrescanCursor {
        next,
        spares,
        chunk: None,
        at: 0,
        lines_before: 0,
    };
    read_lines_with(chunks, named_file, d, v)
}

fn read_lines_with<S: LineSource>(
    mut lines: S,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let mut classifier = Classifier::new(v, named_file);
    // The members of every line go in one pair of vectors: a line's members borrow that line
    // alone, so the vectors are emptied and handed on to the next line (`recycle`).
    let mut spare = LineMembers::default();
    // A record followed by whitespace only Pi trims (form feed, NBSP, U+2028, ...) waits here,
    // copied, until the next line that is not blank says whether it ends a file.
    let mut held: Option<HeldLine> = None;
    while let Some((line, pre)) = lines.next(&mut classifier.stats, d) {
        if held.is_some() && (line.too_long || !is_pi_blank(line.bytes)) {
            let ends_a_file = starts_session(line.bytes);
            classifier.settle(held.take().expect("held"), ends_a_file, d)?;
        }
        if let Some(pre) = pre {
            classifier.prescanned(line, pre, d)?;
            continue;
        }
        let mut members = std::mem::take(&mut spare).recycle();
        let read = classifier.line(line, &mut members, d);
        spare = members.recycle();
        read?;
        if classifier.hold {
            classifier.hold = false;
            held = Some(HeldLine::copy(&line));
        }
    }
    if let Some(h) = held {
        classifier.settle(h, true, d)?;
    }
    classifier.finish(d)
}

/// Length of the whitespace or line terminator JavaScript's `String.prototype.trim` removes
/// that starts `b` (UTF-8), 0 when `b` starts with none: JSON's four, vertical tab, form feed,
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
fn pi_space_len(b: &[u8]) -> usize {
    match b {
        [b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C, ..] => 1,
        [0xC2, 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..]
        | [0xEF, 0xBB, 0xBF, ..] => 3,
        _ => 0,
    }
}

/// `b` without the whitespace Pi trims at either end: the range `start..end` of what is left.
fn pi_trim(b: &[u8]) -> (usize, usize) {
    let mut start = 0;
    loop {
        match pi_space_len(&b[start..]) {
            0 => break,
            n => start += n,
        }
    }
    let mut end = b.len();
    // A lead byte of a multi-byte character is never a continuation byte, so a match of a
    // whole character at the end is that character.
    while end > start {
        match (1..=3).find(|&n| end - start >= n && pi_space_len(&b[end - n..end]) == n) {
            Some(n) => end -= n,
            None => break,
        }
    }
    (start, end)
}

/// Whether the line is blank as Pi sees it (`!line.trim()`): nothing but whitespace it trims.
fn is_pi_blank(b: &[u8]) -> bool {
    let (start, end) = pi_trim(b);
    start == end
}

/// Whether the line, trimmed as Pi trims a file, is a record of type `session`: the start of
/// another file in a concatenated stream.
fn starts_session(b: &[u8]) -> bool {
    let (start, end) = pi_trim(b);
    json::validate(&b[start..end]).is_ok_and(|o| {
        o.first() == Some(&b'{') && o.get("type").is_some_and(|t| t.is_str("session"))
    })
}

/// A line kept past its turn ([`read_lines`]): its bytes copied and where it was.
struct HeldLine {
    bytes: Vec<u8>,
    no: u64,
    offset: u64,
    len_with_eol: u64,
    has_newline: bool,
}

impl HeldLine {
    fn copy(line: &Line<'_>) -> HeldLine {
        HeldLine {
            bytes: line.bytes.to_vec(),
            no: line.no,
            offset: line.offset,
            len_with_eol: line.len_with_eol,
            has_newline: line.has_newline,
        }
    }

    fn line(&self) -> Line<'_> {
        Line {
            no: self.no,
            offset: self.offset,
            bytes: &self.bytes,
            len_with_eol: self.len_with_eol,
            has_newline: self.has_newline,
            too_long: false,
            utf8: false,
        }
    }
}

/// The lines of one chunk of the input, split and validated ahead of the reader on another
/// thread (`input::chunks`): every line, and for each that is one JSON object as it stands,
/// the object and its members, as [`Classifier::line`] would find them.
pub struct Prescan<'a> {
    lines: Vec<PrescannedLine<'a>>,
    members: LineMembers<'a>,
    /// The facts the visitor's [`Ahead`] found in the chunk's records, when it has one.
    facts: Option<Box<dyn Any + Send>>,
    /// The chunk could not be read whole (a mapped file that shrank): the reader reports this
    /// where the chunk starts and reads no further.
    error: Option<io::Error>,
}

impl Prescan<'_> {
    /// Marks the chunk as not read whole, for the reason `e`: its lines are not read.
    pub fn fail(&mut self, e: io::Error) {
        self.error = Some(e);
    }
}

/// Prescans the reader is done with, kept for the next chunks of the same input: their
/// vectors are filled again rather than allocated for each chunk and freed after it. (Freed
/// on the reader's thread, a helper's blocks went back to its malloc arena, which gave the
/// pages back to the system and faulted them in again for the next chunk: ~1,400 page
/// faults more than one thread takes over the 200 MB session.)
pub struct Spares<'a> {
    kept: Mutex<Vec<Prescan<'a>>>,
    most: usize,
    /// How many prescans were made, not taken from those kept.
    made: std::sync::atomic::AtomicUsize,
}

impl<'a> Spares<'a> {
    /// Keeps as many as can be alive at once when `helpers` threads help the reader
    /// ([`chunks::in_flight`]), so that after the first chunks none is made anew. Keeping
    /// fewer (one per thread) made new ones all along the input, each with empty vectors to
    /// grow and, for pi-redact, the keys its rewriter had checked forgotten (BENCHMARKS.md,
    /// round 17).
    ///
    /// [`chunks::in_flight`]: crate::input::chunks::in_flight
    pub fn for_helpers(helpers: usize) -> Spares<'a> {
        Spares::keeping(crate::input::chunks::in_flight(helpers))
    }

    /// Keeps `most` prescans (the most that can be alive at once in a pipeline of another
    /// window: `input::early`).
    pub fn keeping(most: usize) -> Spares<'a> {
        Spares {
            kept: Mutex::new(Vec::new()),
            most,
            made: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// How many prescans were made, not taken from those kept.
    #[cfg(test)]
    fn made(&self) -> usize {
        self.made.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Prescan<'a>>> {
        lock(&self.kept)
    }

    /// A prescan done with, for another chunk.
    fn give(&self, mut p: Prescan<'a>) {
        p.lines.clear();
        p.members.fields.clear();
        p.members.nested.clear();
        p.members.strings.clear();
        p.error = None;
        let mut kept = self.lock();
        if kept.len() < self.most {
            kept.push(p);
        }
    }

    /// An empty prescan to fill: one kept, else a new one.
    fn take(&self) -> Prescan<'a> {
        self.lock().pop().unwrap_or_else(|| {
            self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Prescan {
                lines: Vec::new(),
                members: LineMembers::default(),
                facts: None,
                error: None,
            }
        })
    }
}

/// One line of a [`Prescan`]: its `no` counted from 1 in the chunk, its offset in the input.
struct PrescannedLine<'a> {
    line: Line<'a>,
    /// The record the line is, when it is one JSON object as it stands.
    record: Option<Prescanned<'a>>,
}

/// A line of a [`Prescan`] that is a record.
struct Prescanned<'a> {
    object: Raw<'a>,
    valid_utf8: bool,
    /// The line's members in the chunk's vectors.
    fields: (usize, usize),
    message: MessageAt,
    /// The strings noted in the line, in the chunk's vector.
    strings: (usize, usize),
    /// The record's place among the chunk's records (in its facts).
    index: usize,
}

/// Splits `chunk` (whole lines of the input, starting at its byte `offset`) into lines,
/// validates them and locates their members, as the reader would; `notes` and `ahead` as the
/// visitor says ([`Notes::of`]; [`Visitor::ahead`]: its facts of each record are found here).
/// Only what does not depend on earlier lines is done here.
/// Its vectors are one of `spares` when there is one.
pub fn prescan<'a>(
    chunk: &'a [u8],
    offset: usize,
    notes: Notes,
    ahead: Option<&dyn Ahead>,
    spares: &Spares<'a>,
) -> Prescan<'a> {
    let Prescan {
        mut members,
        mut lines,
        facts: used,
        ..
    } = spares.take();
    let mut facts = ahead.map(|a| a.chunk(used));
    let mut records = 0;
    let mut split = SliceLines::new(chunk);
    while let Some(mut line) = split.next_line() {
        line.offset += offset as u64;
        let b = line.bytes;
        let start = json::skip_ws(b, 0);
        if line.too_long || start == b.len() {
            lines.push(PrescannedLine { line, record: None });
            continue;
        }
        let mark = (
            members.fields.len(),
            members.nested.len(),
            members.strings.len(),
        );
        let record = match members.scan(b, start, notes) {
            Ok((object, message)) if json::skip_ws(b, start + object.len()) == b.len() => {
                let valid_utf8 = line.is_valid_utf8();
                if let (Some(ahead), Some(facts)) = (ahead, facts.as_deref_mut()) {
                    let entry = Entry {
                        line,
                        object,
                        fields: &members.fields[mark.0..],
                        message: notes.messages.then(|| message.slices(&members.nested)),
                        utf8: valid_utf8,
                        strings: json::Noted::new(b, &members.strings[mark.2..]),
                        ahead: None,
                    };
                    ahead.record(facts, &entry);
                }
                records += 1;
                Some(Prescanned {
                    object,
                    valid_utf8,
                    fields: (mark.0, members.fields.len()),
                    message,
                    strings: (mark.2, members.strings.len()),
                    index: records - 1,
                })
            }
            // Read again by the reader, which knows what comes before.
            _ => {
                members.fields.truncate(mark.0);
                members.nested.truncate(mark.1);
                members.strings.truncate(mark.2);
                None
            }
        };
        lines.push(PrescannedLine { line, record });
    }
    Prescan {
        lines,
        members,
        facts,
        error: None,
    }
}

/// The lines of `chunk` (whole lines of the input, starting at its byte `offset`), split but
/// not scanned: the reader scans each as [`read_lines`] does. For a chunk the reader takes
/// next and works itself (`input::chunks`, no other thread having taken it): scanning it
/// ahead on the same thread would only add the cost of keeping the members and facts found.
/// Its vectors are one of `spares` when there is one.
pub fn split<'a>(chunk: &'a [u8], offset: usize, spares: &Spares<'a>) -> Prescan<'a> {
    // Its facts, if any, are a store of an earlier chunk's kept for reuse: no line here is a
    // record, so none is read from them.
    let mut p = spares.take();
    let mut split = SliceLines::new(chunk);
    while let Some(mut line) = split.next_line() {
        line.offset += offset as u64;
        p.lines.push(PrescannedLine { line, record: None });
    }
    p
}

/// Where the reader's lines come from ([`read_lines_with`]), each with the record it was
/// found to be ahead of the reader ([`prescan`]), when it was.
trait LineSource {
    /// The next line, counted in `stats` as [`next_line`] counts it; `None` at the end, or on
    /// a read error (reported).
    fn next(&mut self, stats: &mut Stats, d: &mut Diags) -> Option<(Line<'_>, Option<Record<'_>>)>;
}

/// A prescanned record, as [`Classifier::prescanned`] takes it.
struct Record<'p> {
    object: Raw<'p>,
    valid_utf8: bool,
    fields: &'p [Field<'p>],
    message: (&'p [Member<'p>], &'p [Member<'p>]),
    strings: json::Noted<'p>,
    ahead: Option<(&'p (dyn Any + Send), usize)>,
}

/// Lines not prescanned: every one is scanned by the reader.
struct Unscanned<L>(L);

impl<L: Lines> LineSource for Unscanned<L> {
    #[inline(always)]
    fn next(&mut self, stats: &mut Stats, d: &mut Diags) -> Option<(Line<'_>, Option<Record<'_>>)> {
        next_line(&mut self.0, stats, d).map(|line| (line, None))
    }
}

/// The prescans of consecutive chunks, their lines handed out in order.
struct PrescanCursor<'n, 'a> {
    next: &'n mut dyn FnMut() -> Option<Prescan<'a>>,
    /// Where the chunks read go.
    spares: &'n Spares<'a>,
    chunk: Option<Prescan<'a>>,
    /// The next line of `chunk` not yet handed out.
    at: usize,
    /// The lines of the chunks before `chunk`.
    lines_before: u64,
}

impl LineSource for PrescanCursor<'_, '_> {
    #[inline]
    fn next(&mut self, stats: &mut Stats, d: &mut Diags) -> Option<(Line<'_>, Option<Record<'_>>)> {
        while self.chunk.as_ref().is_none_or(|c| self.at == c.lines.len()) {
            if let Some(done) = self.chunk.take() {
                self.lines_before += done.lines.len() as u64;
                self.spares.give(done);
            }
            let chunk = (self.next)()?;
            if let Some(e) = &chunk.error {
                d.report(Some(stats.lines + 1), Kind::Io, format!("read error: {e}"));
                return None;
            }
            self.chunk = Some(chunk);
            self.at = 0;
        }
        let chunk = self.chunk.as_ref()?;
        let pre = &chunk.lines[self.at];
        self.at += 1;
        let line = Line {
            no: self.lines_before + pre.line.no,
            ..pre.line
        };
        let line = counted(line, stats, d);
        let record = pre.record.as_ref().map(|r| Record {
            object: r.object,
            valid_utf8: r.valid_utf8,
            fields: &chunk.members.fields[r.fields.0..r.fields.1],
            message: r.message.slices(&chunk.members.nested),
            // The prescan scanned the line's bytes.
            strings: json::Noted::new(
                pre.line.bytes,
                &chunk.members.strings[r.strings.0..r.strings.1],
            ),
            ahead: chunk.facts.as_deref().map(|f| (f, r.index)),
        });
        Some((line, record))
    }
}

/// What may be done with whitespace Pi trims after a record ([`Classifier::trimmed`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trailing {
    /// Not known yet: hold the line until the next one that is not blank.
    Hold,
    /// The line ends a file (the input, or the next line starts a session): trimmed.
    Trim,
    /// More of the same file follows: the line is malformed, as `JSON.parse` finds it.
    Keep,
}

/// The next line, counted in `stats` ([`counted`]); `None` at the end, or on a read error
/// (reported).
#[inline(always)]
fn next_line<'l, L: Lines>(lines: &'l mut L, stats: &mut Stats, d: &mut Diags) -> Option<Line<'l>> {
    match lines.next_line() {
        Ok(Some(l)) => Some(counted(l, stats, d)),
        Ok(None) => None,
        Err(e) => {
            d.report(Some(stats.lines + 1), Kind::Io, format!("read error: {e}"));
            None
        }
    }
}

/// `line`, counted in `stats`, reported when too long, a byte-order mark at the start of the
/// input reported and left out.
#[inline(always)]
fn counted<'l>(mut line: Line<'l>, stats: &mut Stats, d: &mut Diags) -> Line<'l> {
    stats.lines = line.no;
    stats.bytes = line.offset + line.len_with_eol;
    if line.too_long {
        report_long_line(&line, stats, d);
    }
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
    line
}

#[cold]
fn report_invalid_utf8(line: &Line<'_>, d: &mut Diags) {
    d.report(
        Some(line.no),
        Kind::InvalidUtf8,
        "invalid UTF-8 (read as U+FFFD, as Pi reads it)",
    );
}

/// A line longer than [`crate::lines::MAX_LINE`]: never held, reported, then read as blank
/// (it has no bytes). Issue 19, item 6.
#[cold]
#[inline(never)]
fn report_long_line(line: &Line<'_>, stats: &mut Stats, d: &mut Diags) {
    stats.bad_lines += 1;
    d.report(
        Some(line.no),
        Kind::MalformedJson,
        format!(
            "line of {} bytes, longer than the {} MiB a line may have (Pi cannot load it either); line skipped",
            line.len_with_eol,
            crate::lines::MAX_LINE >> 20
        ),
    );
}

/// Turns a vector of one line's members into an empty one for another line's, keeping its
/// allocation: the in-place `collect` of a vector's own `into_iter` reuses it (std does this
/// for element types of one size and alignment, as here: `T` and `U` are one type but for
/// the lifetime), and the map never runs.
#[inline(always)]
pub fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable!()).collect()
}

/// The members of one line as the scanner hands them out: the top-level ones, and those of
/// its `message` objects and of their `usage` objects.
#[derive(Default)]
struct LineMembers<'a> {
    fields: Vec<Field<'a>>,
    /// The members of each `message` object, each followed by those of its last `usage`
    /// object ([`MessageAt`]).
    nested: Vec<Member<'a>>,
    /// The members of the `usage` objects of the message being scanned, until the message's
    /// end moves those of the last one to `nested`.
    deep: Vec<Member<'a>>,
    /// The strings noted ([`Notes::strings`]), the line's indices of each.
    strings: Vec<json::LongString>,
}

/// Where the members of a line's last `message` object are in [`LineMembers::nested`]: its own
/// at `start..usage`, then those of its last `usage` object at `usage..end`.
#[derive(Clone, Copy)]
struct MessageAt {
    start: usize,
    usage: usize,
    end: usize,
}

impl MessageAt {
    /// None yet: empty, at `at`.
    fn at(at: usize) -> MessageAt {
        MessageAt {
            start: at,
            usage: at,
            end: at,
        }
    }

    /// The message's members and its `usage` object's, in `nested`.
    fn slices<'n, 'a>(self, nested: &'n [Member<'a>]) -> (&'n [Member<'a>], &'n [Member<'a>]) {
        (
            &nested[self.start..self.usage],
            &nested[self.usage..self.end],
        )
    }
}

/// Where [`LineMembers::scan`] puts the members its scan hands out.
struct Found<'m, 'a> {
    fields: &'m mut Vec<Field<'a>>,
    nested: &'m mut Vec<Member<'a>>,
    deep: &'m mut Vec<Member<'a>>,
    /// Where the members of the last `message` are in `nested`.
    message: MessageAt,
    /// Where the members of the next message start in `nested`.
    next: usize,
    /// Where the members of the message's last `usage` are in `deep`.
    usage: (usize, usize),
}

impl<'a> Found<'_, 'a> {
    #[inline(always)]
    fn member(&mut self, m: json::Member, k: &'a [u8], value: Raw<'a>) {
        match m {
            json::Member::Deep => self.deep.push((k, value)),
            json::Member::NestedOpened => {
                self.usage = (self.usage.1, self.deep.len());
                self.nested.push((k, value));
            }
            json::Member::Nested => self.nested.push((k, value)),
            json::Member::Opened => {
                let own = self.nested.len();
                self.nested
                    .extend_from_slice(&self.deep[self.usage.0..self.usage.1]);
                self.message = MessageAt {
                    start: self.next,
                    usage: own,
                    end: self.nested.len(),
                };
                self.next = self.nested.len();
                self.deep.clear();
                self.usage = (0, 0);
                self.fields.push(Field::new(k, value));
            }
            json::Member::Top => self.fields.push(Field::new(k, value)),
        }
    }
}

impl<'a> LineMembers<'a> {
    /// These vectors, emptied, for members of another lifetime ([`recycle`]).
    #[inline(always)]
    fn recycle<'b>(self) -> LineMembers<'b> {
        let mut strings = self.strings;
        strings.clear();
        LineMembers {
            fields: recycle(self.fields),
            nested: recycle(self.nested),
            deep: recycle(self.deep),
            strings,
        }
    }

    /// Validates the object at `b[start]`, noting its members, those of its `message` and the
    /// message's `usage` when `notes.messages`, and its long strings (appended to `strings`)
    /// when `notes.strings`: the object, and where the members of its last `message` object
    /// (as `get` finds the last) are in `nested`.
    #[inline(always)]
    fn scan(
        &mut self,
        b: &'a [u8],
        start: usize,
        notes: Notes,
    ) -> Result<(Raw<'a>, MessageAt), json::Error> {
        let reads_messages = notes.messages;
        // The vectors may hold earlier lines' members (`prescan`): this line's start here.
        let at = self.nested.len();
        self.deep.clear();
        let mut found = Found {
            fields: &mut self.fields,
            nested: &mut self.nested,
            deep: &mut self.deep,
            message: MessageAt::at(at),
            next: at,
            usage: (0, 0),
        };
        let open = |depth: usize, k: &[u8]| {
            reads_messages && json::key_is(k, if depth == 0 { "message" } else { "usage" })
        };
        // One closure for each scan, each calling `Found::member` inlined: one closure for both
        // was called, not inlined.
        let object = match notes.strings {
            true => json::scan_members_deep_noting(
                b,
                start,
                open,
                |m, k, v| found.member(m, k, v),
                &mut self.strings,
            )?,
            false => json::scan_members_deep(b, start, open, |m, k, v| found.member(m, k, v))?,
        };
        let message = found.message;
        Ok((object, message))
    }
}

/// Reports why the line is not one JSON object, its first non-blank byte at `start`: what
/// scanning an object there gave (`Ok` with the index past the object when text follows it).
/// Whether the line is one JSON array.
#[cold]
#[inline(never)]
fn report_bad_line(
    line: &Line<'_>,
    start: usize,
    scanned: Result<usize, json::Error>,
    d: &mut Diags,
) -> bool {
    let b = line.bytes;
    let mut array = false;
    let (kind, msg) = match scanned {
        Ok(end) => {
            let rest = json::skip_ws(b, end);
            if json::skip_value(b, rest).is_ok() {
                (
                    Kind::Glued,
                    format!(
                        "two records glued on one line (the second starts at byte {}); line skipped, as Pi skips it",
                        rest + 1
                    ),
                )
            } else {
                (
                    Kind::MalformedJson,
                    format!(
                        "malformed JSON: unexpected text after the object at byte {}; line skipped",
                        rest + 1
                    ),
                )
            }
        }
        Err(e) => match (b[start] != b'{').then(|| json::value_at(b, start)) {
            Some(Ok(value)) if json::skip_ws(b, start + value.len()) == b.len() => {
                array = b[start] == b'[';
                (
                    Kind::NotObject,
                    format!("a JSON {}, not an object; line skipped", value.kind_name()),
                )
            }
            _ if e.kind == json::ErrorKind::Eof && !line.has_newline => (
                Kind::MalformedJson,
                format!("truncated last line (malformed JSON: {e}); line skipped"),
            ),
            _ => (
                Kind::MalformedJson,
                format!("malformed JSON: {e}; line skipped"),
            ),
        },
    };
    d.report(Some(line.no), kind, msg);
    array
}

/// Where the reader is in the input.
#[derive(PartialEq, Eq)]
enum Position {
    /// Before any header.
    BeforeHeader,
    /// Inside a session with a valid header.
    InSession,
    /// After a header without a string id: entries are unreadable until the next header.
    AfterBadHeader,
}

/// Entries skipped because no valid header precedes them, reported when the run of them ends.
struct Unreadable {
    first_line: u64,
    count: u64,
    after_bad_header: bool,
}

/// A fragment being read ([`Classifier::start_fragment`]): where it began, how many entries.
struct FragmentRun {
    first_line: u64,
    entries: u64,
}

/// A title slot held until the next record says whose it is ([`Classifier::record`]).
struct HeldTitle {
    line: HeldLine,
    title: Option<String>,
}

impl HeldTitle {
    fn slot(&self) -> TitleSlot<'_> {
        TitleSlot {
            line: self.line.line(),
            title: self.title.clone(),
        }
    }
}

/// The classify step: what the reader knows of the input so far, and the tool it hands the
/// sessions to.
struct Classifier<'v> {
    visitor: &'v mut dyn Visitor,
    notes: Notes,
    reads_fragments: bool,
    /// The fragment being read, when the session being read is one.
    fragment: Option<FragmentRun>,
    /// A title slot waiting for the record after it.
    held_title: Option<HeldTitle>,
    /// A held title slot is being read again: it is not held a second time.
    replaying: bool,
    named_file: bool,
    stats: Stats,
    position: Position,
    unreadable: Option<Unreadable>,
    saw_record: bool,
    /// Set by [`Classifier::line`] when the line must wait ([`Trailing::Hold`]).
    hold: bool,
    /// The line being scanned was checked and is valid UTF-8 ([`Entry::is_utf8`]).
    line_utf8: bool,
}

impl<'v> Classifier<'v> {
    fn new(visitor: &'v mut dyn Visitor, named_file: bool) -> Classifier<'v> {
        Classifier {
            notes: Notes::of(visitor),
            reads_fragments: visitor.reads_fragments(),
            fragment: None,
            held_title: None,
            replaying: false,
            line_utf8: false,
            visitor,
            named_file,
            stats: Stats::default(),
            position: Position::BeforeHeader,
            unreadable: None,
            saw_record: false,
            hold: false,
        }
    }

    /// One line: nothing when blank, reported when it is not one JSON object, else a record.
    #[inline(always)]
    fn line<'a>(
        &mut self,
        line: Line<'a>,
        members: &mut LineMembers<'a>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let b = line.bytes;
        let start = json::skip_ws(b, 0);
        if start == b.len() {
            return Ok(());
        }
        self.line_utf8 = line.is_valid_utf8();
        if !self.line_utf8 {
            report_invalid_utf8(&line, d);
        }
        self.scan(line, start, members, Trailing::Hold, d)
    }

    /// A line found to be one record ahead of the reader ([`prescan`]): as [`Classifier::line`]
    /// reads it, without scanning it again.
    #[inline(always)]
    fn prescanned(&mut self, line: Line<'_>, pre: Record<'_>, d: &mut Diags) -> Result<(), Stop> {
        if !pre.valid_utf8 {
            report_invalid_utf8(&line, d);
        }
        let entry = Entry {
            line,
            object: pre.object,
            fields: pre.fields,
            message: self.notes.messages.then_some(pre.message),
            utf8: pre.valid_utf8,
            strings: pre.strings,
            ahead: pre.ahead,
        };
        self.record(&entry, d)
    }

    /// A line that is not blank, its first non-blank byte at `start`: a record, or reported.
    #[inline(always)]
    fn scan<'a>(
        &mut self,
        line: Line<'a>,
        start: usize,
        members: &mut LineMembers<'a>,
        trailing: Trailing,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let b = line.bytes;
        match members.scan(b, start, self.notes) {
            Ok((object, message)) if json::skip_ws(b, start + object.len()) == b.len() => {
                let entry = Entry {
                    line,
                    object,
                    fields: &members.fields,
                    message: self.notes.messages.then(|| message.slices(&members.nested)),
                    utf8: self.line_utf8,
                    strings: json::Noted::new(b, &members.strings),
                    ahead: None,
                };
                self.record(&entry, d)
            }
            scanned => {
                let scanned = scanned.map(|(o, _)| start + o.len());
                self.trimmed(line, start, scanned, members, trailing, d)
            }
        }
    }

    /// A line that is not one JSON object as it stands: blank, or a record, once the
    /// whitespace Pi trims is off it where Pi trims it (Pi trims the whole file, so before
    /// the first record of a file and after its last; in a stream, a session header starts
    /// a file); else reported as `scanned` says. Issue 19, items 10 and 11.
    #[cold]
    #[inline(never)]
    fn trimmed<'a>(
        &mut self,
        line: Line<'a>,
        start: usize,
        scanned: Result<usize, json::Error>,
        members: &mut LineMembers<'a>,
        trailing: Trailing,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let b = line.bytes;
        let (from, to) = pi_trim(b);
        if from == to {
            return Ok(());
        }
        let first_of_input = !self.saw_record && self.stats.bad_lines == 0;
        // Whitespace JSON does not allow (what it allows the scan skipped) before or after.
        let lead_trimmed = from > start;
        let tail_trimmed = json::skip_ws(b, to) < b.len();
        members.fields.clear();
        members.nested.clear();
        members.strings.clear();
        let record = (lead_trimmed || tail_trimmed)
            .then(|| members.scan(&b[..to], from, self.notes).ok())
            .flatten()
            .filter(|(object, _)| from + object.len() == to);
        let is_header = record
            .is_some_and(|(object, _)| object.get("type").is_some_and(|t| t.is_str("session")));
        let lead_ok = !lead_trimmed || first_of_input || is_header;
        match record {
            Some(_) if lead_ok && tail_trimmed && trailing == Trailing::Hold => {
                self.hold = true;
                Ok(())
            }
            Some((object, message)) if lead_ok && (!tail_trimmed || trailing == Trailing::Trim) => {
                let bom = b[start..from].windows(3).any(|w| w == b"\xEF\xBB\xBF");
                // The line as the record: what Pi trimmed is not part of it (pi-branch copies it).
                let line = if tail_trimmed {
                    Line {
                        bytes: &b[from..to],
                        offset: line.offset + from as u64,
                        len_with_eol: (to - from) as u64,
                        has_newline: false,
                        ..line
                    }
                } else {
                    Line {
                        bytes: &b[from..],
                        offset: line.offset + from as u64,
                        len_with_eol: line.len_with_eol - from as u64,
                        ..line
                    }
                };
                let entry = Entry {
                    line,
                    object,
                    fields: &members.fields,
                    message: self.notes.messages.then(|| message.slices(&members.nested)),
                    utf8: self.line_utf8,
                    // Scanned as `b[..to]`: the line's bytes before it was trimmed.
                    strings: json::Noted::new(&b[..to], &members.strings),
                    ahead: None,
                };
                self.record(&entry, d)?;
                // After the header, so that the file it starts counts it.
                if bom {
                    d.report(
                        Some(entry.line.no),
                        Kind::ByteOrderMark,
                        if is_header {
                            "byte-order mark before a session header ignored"
                        } else {
                            "byte-order mark at the start of the input ignored"
                        },
                    );
                }
                Ok(())
            }
            _ => {
                self.stats.bad_lines += 1;
                let array = report_bad_line(&line, start, scanned, d);
                if array && self.position == Position::InSession {
                    self.visitor.array_line(line.no)?;
                }
                Ok(())
            }
        }
    }

    /// A line held because whitespace Pi trims follows its record: read now that the line
    /// after it says whether it `ends_a_file`.
    fn settle(&mut self, held: HeldLine, ends_a_file: bool, d: &mut Diags) -> Result<(), Stop> {
        let line = held.line();
        let start = json::skip_ws(line.bytes, 0);
        let trailing = if ends_a_file {
            Trailing::Trim
        } else {
            Trailing::Keep
        };
        let mut members = LineMembers::default();
        // Checked when it was first read, but not kept: the tools check again.
        self.line_utf8 = false;
        self.scan(line, start, &mut members, trailing, d)
    }

    /// A record: a header starts a session; a title slot waits for the record after it; the
    /// first Pi entry with no header before it starts a fragment; anything else belongs to the
    /// session being read, or to none.
    #[inline(always)]
    fn record(&mut self, entry: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.saw_record = true;
        let kind = entry.get("type");
        if kind.is_some_and(|k| k.is_str("session")) {
            return self.header(entry, d);
        }
        // The hot path (an entry of a session, no title slot waiting) asks one question more
        // than before: whether the type is `title`.
        let title_type = kind.is_some_and(|k| k.is_str("title"));
        let unusual =
            self.position != Position::InSession || self.held_title.is_some() || title_type;
        if unusual && self.unusual(entry, title_type, d)? {
            return Ok(());
        }
        if self.position == Position::InSession {
            if let Some(f) = &mut self.fragment {
                f.entries += 1;
            }
            return self.visitor.entry(entry, d);
        }
        self.visitor.outside(entry, d)?;
        self.stats.unreadable += 1;
        let u = self.unreadable.get_or_insert(Unreadable {
            first_line: entry.line.no,
            count: 0,
            after_bad_header: self.position == Position::AfterBadHeader,
        });
        u.count += 1;
        Ok(())
    }

    /// What [`Classifier::record`] does outside a session, after a title slot, or with a
    /// record of type `title`: a fragment may start, a held title slot is read as what it is,
    /// a title slot is held. `true` when the record was taken care of.
    #[cold]
    fn unusual(
        &mut self,
        entry: &Entry<'_>,
        title_type: bool,
        d: &mut Diags,
    ) -> Result<bool, Stop> {
        if self.position == Position::BeforeHeader
            && self.reads_fragments
            && !self.replaying
            && is_pi_entry(entry)
        {
            let title = self.held_title.take();
            self.start_fragment(entry, title, d)?;
            return Ok(true);
        }
        self.release_title(d)?;
        if title_type
            && !self.replaying
            && self.position != Position::AfterBadHeader
            && is_title_slot(entry)
        {
            self.held_title = Some(HeldTitle {
                line: HeldLine::copy(&entry.line),
                title: entry
                    .str("title")
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty()),
            });
            return Ok(true);
        }
        Ok(false)
    }

    /// A held title slot that no header follows: read now as the record it is (an entry of
    /// the session being read, or unreadable).
    #[cold]
    fn release_title(&mut self, d: &mut Diags) -> Result<(), Stop> {
        let Some(held) = self.held_title.take() else {
            return Ok(());
        };
        let line = held.line.line();
        let start = json::skip_ws(line.bytes, 0);
        let mut members = LineMembers::default();
        self.line_utf8 = false;
        self.replaying = true;
        let r = self.scan(line, start, &mut members, Trailing::Trim, d);
        self.replaying = false;
        r
    }

    /// The first Pi entry with no header before it: a fragment starts (see [`Header::fragment`])
    /// with `entry` as its first entry, and `title` when a title slot came just before it.
    #[cold]
    fn start_fragment(
        &mut self,
        entry: &Entry<'_>,
        title: Option<HeldTitle>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        flush_unreadable(&mut self.unreadable, d);
        let has_id = entry.get("id").and_then(Raw::as_str).is_some();
        let h = Header {
            line: entry.line,
            id: id_from_file_name(d.file()).unwrap_or_default().to_string(),
            version: if has_id { 3 } else { 1 },
            timestamp: None,
            cwd: None,
            parent_session: None,
            fragment: true,
            title: title.as_ref().map(HeldTitle::slot),
        };
        self.stats.fragments += 1;
        self.position = Position::InSession;
        self.fragment = Some(FragmentRun {
            first_line: entry.line.no,
            entries: 1,
        });
        self.visitor.header(&h, d)?;
        self.visitor.entry(entry, d)
    }

    /// The session being read ends; a fragment says, in one note, that it was one (before
    /// what the tool says at the session's end, which comes from later lines).
    fn end_session(&mut self, d: &mut Diags) -> Result<(), Stop> {
        if let Some(f) = self.fragment.take() {
            let id = match id_from_file_name(d.file()) {
                Some(id) => format!("session id {id:?} taken from the file's name"),
                None => "session id unknown".to_string(),
            };
            d.note(
                Some(f.first_line),
                format!(
                    "no session header: the {} {} from here read as a fragment of a session ({id})",
                    f.entries,
                    if f.entries == 1 { "entry" } else { "entries" }
                ),
            );
        }
        self.visitor.end(d)
    }

    /// A record of type `session`: the session being read ends, a valid header starts the
    /// next one, an invalid one makes what follows unreadable.
    fn header(&mut self, entry: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let parsed = header(entry);
        if parsed.is_err() {
            // A title slot before a header that is not valid is no session's title.
            self.release_title(d)?;
        }
        if self.position == Position::InSession {
            self.end_session(d)?;
        }
        flush_unreadable(&mut self.unreadable, d);
        let title = self.held_title.take();
        match parsed {
            Ok((mut h, version_note)) => {
                h.title = title.as_ref().map(HeldTitle::slot);
                if let Some(note) = version_note {
                    d.report(Some(entry.line.no), Kind::BadField, note);
                }
                if self.named_file && self.stats.sessions > 0 {
                    d.report(
                        Some(entry.line.no),
                        Kind::SecondHeader,
                        "a second session header in this file; it starts a new session",
                    );
                }
                self.stats.sessions += 1;
                self.position = Position::InSession;
                self.visitor.header(&h, d)
            }
            Err(why) => {
                d.report(
                    Some(entry.line.no),
                    Kind::MalformedHeader,
                    format!("malformed session header: {why}; session unreadable"),
                );
                self.position = Position::AfterBadHeader;
                self.visitor.outside(entry, d)
            }
        }
    }

    /// The end of the input: the last session ends, what is left is reported.
    fn finish(mut self, d: &mut Diags) -> Result<Stats, Stop> {
        self.release_title(d)?;
        if self.position == Position::InSession {
            self.end_session(d)?;
        }
        flush_unreadable(&mut self.unreadable, d);
        if self.named_file && !self.saw_record && self.stats.bad_lines == 0 {
            d.report(None, Kind::MissingHeader, "empty file: no session header");
        }
        Ok(self.stats)
    }
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

/// A valid header's id, the version Pi reads it as, and a note when its `version` is not
/// a count (Pi reads the header all the same).
struct CheckedHeader<'a> {
    id: Cow<'a, str>,
    version: u64,
    version_note: Option<String>,
}

/// The header whose members `get` looks up, or why it is not a valid one: Pi (0.73.1 and
/// 1.6.0) takes an object of type `session` with a string `id`, whatever its `version`.
fn check_header<'a>(get: impl Fn(&str) -> Option<Raw<'a>>) -> Result<CheckedHeader<'a>, String> {
    let id = match get("id") {
        Some(raw) => raw
            .as_str()
            .ok_or_else(|| format!("id is a {}, not a string", raw.kind_name()))?,
        None => return Err("no id".into()),
    };
    let (version, version_note) = match get("version") {
        None => (1, None),
        Some(raw) if raw.is_null() => (1, None),
        Some(raw) => match raw.as_u64() {
            Some(v) => (v, None),
            None => {
                let v = pi_version(raw);
                let written = String::from_utf8_lossy(&raw);
                let shown: String = written.chars().take(40).collect();
                let more = if shown.len() < written.len() {
                    "…"
                } else {
                    ""
                };
                let note = format!(
                    "version {shown}{more} is not a count; read as version {v}, as Pi reads it"
                );
                (v, Some(note))
            }
        },
    };
    Ok(CheckedHeader {
        id,
        version,
        version_note,
    })
}

/// The session version Pi reads a header's `version` as when it is not a count: Pi's
/// migration compares it with 3, then 2, as JavaScript compares, so it is made a number first
/// ([`js_number`]); 3 when at least 3, 1 below 2, else 2, and 3 when it is no number (`NaN`
/// passes no comparison: nothing is migrated, the entries are read as they are).
fn pi_version(raw: Raw<'_>) -> u64 {
    match js_number(raw) {
        v if v < 2.0 => 1,
        v if v < 3.0 => 2,
        _ => 3,
    }
}

/// A JSON value made a number as JavaScript's `Number(v)` makes it: a string by its text
/// (trimmed as `trim` trims; empty is 0; decimal, `Infinity`, or `0x`/`0o`/`0b` digits;
/// anything else `NaN`), `true` 1, `false` and `null` 0, an object `NaN`, and an array by its
/// text, its elements' texts joined with commas: a number only when no array in it has more
/// than one element, and then the text of the one value innermost (none, or `null`: 0).
fn js_number(raw: Raw<'_>) -> f64 {
    match raw.first() {
        Some(b'"') => js_string_number(&raw.as_str().unwrap_or_default()),
        Some(b't') => 1.0,
        Some(b'f' | b'n') => 0.0,
        Some(b'{') => f64::NAN,
        Some(b'[') => {
            // Read once, at any depth: past the opening brackets, the innermost value (if
            // any), then closing brackets alone, or a comma somewhere.
            let b = raw.bytes();
            let mut i = 0;
            while b.get(i) == Some(&b'[') {
                i = json::skip_ws(b, i + 1);
            }
            let inner = match b.get(i) {
                Some(b']') => None,
                _ => json::value_at(b, i).ok(),
            };
            let after = inner.map_or(i, |v| i + v.len());
            let closes = b[after..]
                .iter()
                .all(|&c| c == b']' || c.is_ascii_whitespace());
            match inner {
                _ if !closes => f64::NAN,
                None => 0.0,
                Some(v) if matches!(v.first(), Some(b't' | b'f' | b'{')) => f64::NAN,
                Some(v) => js_number(v),
            }
        }
        _ => std::str::from_utf8(&raw)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(f64::NAN),
    }
}

/// JavaScript's `Number(s)` of a string.
fn js_string_number(s: &str) -> f64 {
    let (start, end) = pi_trim(s.as_bytes());
    let t = &s[start..end];
    let radix = |prefix: [&str; 2], radix: u32| {
        let digits = t
            .strip_prefix(prefix[0])
            .or_else(|| t.strip_prefix(prefix[1]))?;
        (!digits.is_empty()).then(|| {
            digits.chars().try_fold(0.0, |n: f64, c| {
                c.to_digit(radix)
                    .map(|d| n * f64::from(radix) + f64::from(d))
            })
        })
    };
    if let Some(n) = radix(["0x", "0X"], 16)
        .or_else(|| radix(["0o", "0O"], 8))
        .or_else(|| radix(["0b", "0B"], 2))
    {
        return n.unwrap_or(f64::NAN);
    }
    match t {
        "" => 0.0,
        "Infinity" | "+Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        // Rust reads what JavaScript's decimal literals are, and `inf` and `nan` besides.
        _ if t
            .bytes()
            .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)) =>
        {
            t.parse().unwrap_or(f64::NAN)
        }
        _ => f64::NAN,
    }
}

/// Why the record `object` (a JSON object with `"type":"session"`) is not a valid session
/// header, by the reader's own rule; `None` when it is one.
pub fn header_problem(object: Raw<'_>) -> Option<String> {
    check_header(|k| object.get(k)).err()
}

/// The header `e`, and the note its `version` needs, if any; why it is not one otherwise.
fn header<'a>(e: &Entry<'a>) -> Result<(Header<'a>, Option<String>), String> {
    let checked = check_header(|k| e.get(k))?;
    let s = |k: &str| e.str(k).map(Cow::into_owned);
    let h = Header {
        line: e.line,
        id: checked.id.into_owned(),
        version: checked.version,
        timestamp: s("timestamp"),
        cwd: s("cwd"),
        parent_session: s("parentSession"),
        fragment: false,
        title: None,
    };
    Ok((h, checked.version_note))
}

/// Whether a record is a Pi entry: the one rule that tells a fragment (records of a session
/// without its header) from input that is no session at all. A Pi entry is a JSON object
/// whose `type` is a string other than `session` and whose `timestamp` is a string, and that
/// is either a tree entry (a string `id` and a `parentId` that is a string or null, as Pi 2
/// and later write every entry) or one of the entries of Pi's linear v1 logs, which have no
/// ids: `message` (with a `message` object), `model_change`, `thinking_level_change` or
/// `compaction`. A `package.json` (even with `"type":"module"`), Claude Code's or Codex's
/// JSONL and oh-my-pi's title slot are not.
pub fn is_pi_entry(e: &Entry<'_>) -> bool {
    pi_entry_rule(|k| e.get(k))
}

/// The rule of [`is_pi_entry`], `get` looking a member up.
fn pi_entry_rule<'a>(get: impl Fn(&str) -> Option<Raw<'a>>) -> bool {
    let Some(kind) = get("type").and_then(Raw::as_str) else {
        return false;
    };
    if kind == "session" || get("timestamp").and_then(Raw::as_str).is_none() {
        return false;
    }
    let tree = get("id").and_then(Raw::as_str).is_some()
        && get("parentId").is_some_and(|p| p.is_null() || p.as_str().is_some());
    let v1 = match &*kind {
        "message" => get("message").is_some_and(|m| m.first() == Some(&b'{')),
        "model_change" | "thinking_level_change" | "compaction" => true,
        _ => false,
    };
    tree || v1
}

/// Whether a record is oh-my-pi's title slot, by the rule oh-my-pi reads it with: `type`
/// `title`, `v` 1, string `title`, `updatedAt` and `pad`, and `source` absent or `auto` or
/// `user`.
pub fn is_title_slot(e: &Entry<'_>) -> bool {
    title_slot_rule(|k| e.get(k))
}

/// The rule of [`is_title_slot`], `get` looking a member up.
fn title_slot_rule<'a>(get: impl Fn(&str) -> Option<Raw<'a>>) -> bool {
    let is_str = |k: &str| get(k).and_then(Raw::as_str).is_some();
    get("type").is_some_and(|t| t.is_str("title"))
        && get("v").and_then(Raw::as_u64) == Some(1)
        && is_str("title")
        && is_str("updatedAt")
        && is_str("pad")
        && get("source")
            .is_none_or(|s| matches!(s.as_str().as_deref(), Some("auto") | Some("user")))
}

/// The session id in a session file's name as Pi and oh-my-pi write it,
/// `<ISO time with - for :>_<id>.jsonl`: the part after the last `_`, when what comes
/// before it starts as a date (`YYYY-MM-DD`).
pub fn id_from_file_name(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let stem = name.strip_suffix(".jsonl")?;
    let (time, id) = stem.rsplit_once('_')?;
    let t = time.as_bytes();
    let dated = t.len() >= 10
        && t[4] == b'-'
        && t[7] == b'-'
        && t[..10]
            .iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    (dated && !id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header `version` that is not a count is the version Pi's migration reads it
    /// as: `Number(v)` compared with 3 and 2 (the numbers below are node's `Number(v)`).
    #[test]
    fn header_versions_are_made_numbers_as_javascript_makes_them() {
        let deep = format!("{}3{}", "[".repeat(100_000), "]".repeat(100_000));
        for (text, number, version) in [
            (r#""3""#, 3.0, 3),
            (r#""1""#, 1.0, 1),
            ("true", 1.0, 1),
            ("false", 0.0, 1),
            (r#""abc""#, f64::NAN, 3),
            ("2.5", 2.5, 2),
            ("-1", -1.0, 1),
            ("1e400", f64::INFINITY, 3),
            ("{}", f64::NAN, 3),
            (r#"" 0x2 ""#, 2.0, 2),
            (r#""0b11""#, 3.0, 3),
            (r#""-0b1""#, f64::NAN, 3),
            (r#""Infinity""#, f64::INFINITY, 3),
            (r#""\u00a03\u2028""#, 3.0, 3),
            (r#""1e1""#, 10.0, 3),
            (r#""+.5e1""#, 5.0, 3),
            ("[3]", 3.0, 3),
            (r#"[ "2.5" ]"#, 2.5, 2),
            ("[]", 0.0, 1),
            ("[null]", 0.0, 1),
            ("[[[]]]", 0.0, 1),
            ("[[1],[2]]", f64::NAN, 3),
            ("[[],[]]", f64::NAN, 3),
            ("[true]", f64::NAN, 3),
            (&deep, 3.0, 3),
        ] {
            let raw = json::validate(text.as_bytes()).unwrap();
            let n = js_number(raw);
            assert!(
                n == number || (n.is_nan() && number.is_nan()),
                "{text:.20}: {n}"
            );
            assert_eq!(pi_version(raw), version, "{text:.20}");
        }
    }

    /// `b` as the first line of an input, with no newline after it.
    fn whole_line(b: &[u8]) -> Line<'_> {
        Line {
            no: 1,
            offset: 0,
            bytes: b,
            len_with_eol: b.len() as u64,
            has_newline: false,
            too_long: false,
            utf8: false,
        }
    }

    /// Issue 20: a message built where it is read (`message_or_default`) is `message()`, the
    /// members the scan noted being those a walk of the value finds, and one with no members
    /// when the entry has none; `get` (compares of a known length) finds the last member of a
    /// name, written plainly or with an escape, and no near name.
    #[test]
    fn messages_built_in_place_and_members_found_by_name() {
        let lines = [
            r#"{"type":"message","message":{"role":"assistant","usage":{"input":1},"model":"m","model":"n"}}"#,
            r#"{"type":"message","message":"text"}"#,
            r#"{"type":"message"}"#,
            r#"{"type":"message","message":{"role":"user"},"message":{"r\u006fle":"toolResult","usage":{"output":2}}}"#,
            r#"{"type":"message","message":{"role":"user"},"message":[1]}"#,
            r#"{"typ":"x","types":"y","t\u0079pe":"z","type":"w","id":"a","i\u0064":"b"}"#,
        ];
        let text = format!(
            "{}\n{}",
            r#"{"type":"session","version":3,"id":"s"}"#,
            lines.join("\n")
        );
        let seen = map_entries(&text, |e| {
            let built = e.message_or_default();
            assert_eq!(
                e.message().map(|m| format!("{m:?}")),
                e.get("message").map(|_| format!("{built:?}"))
            );
            let mut walked = e.get("message").map(Message::read).unwrap_or_default();
            walked.usage_noted = built.usage_noted;
            assert_eq!(format!("{built:?}"), format!("{walked:?}"));
            (
                built.role.map(|r| r.to_vec()),
                built
                    .usage
                    .is_some_and(|u| built.usage_noted.of(u).is_some()),
            )
        });
        let role = |r: &str| Some(r.as_bytes().to_vec());
        assert_eq!(
            seen,
            [
                (role(r#""assistant""#), true),
                (None, false),
                (None, false),
                (role(r#""toolResult""#), true),
                (None, false),
                (None, false),
            ]
        );
        with_entry(lines[5], |e| {
            assert_eq!(e.get("type").as_deref(), Some(&br#""w""#[..]));
            assert_eq!(e.get("id").as_deref(), Some(&br#""b""#[..]));
            assert_eq!(e.get("typ").as_deref(), Some(&br#""x""#[..]));
            assert_eq!(e.get("ty"), None);
            assert_eq!(e.get("Type"), None);
        });
    }

    /// Reads one record through the reader's scan and hands its entry to `f`.
    fn with_entry<R>(text: &str, f: impl FnOnce(&Entry<'_>) -> R) -> R {
        let mut members = LineMembers::default();
        let b = text.as_bytes();
        let notes = Notes {
            messages: false,
            strings: false,
        };
        let (object, _) = members.scan(b, 0, notes).unwrap();
        let line = whole_line(b);
        f(&Entry {
            line,
            object,
            fields: &members.fields,
            message: None,
            utf8: false,
            strings: json::Noted::default(),
            ahead: None,
        })
    }

    /// A message's `usage` members as the scan notes them are those a walk finds of the
    /// `usage` the message reads (the last); they are used only when they are its members.
    #[test]
    fn usage_members_are_noted_for_the_last_usage_object() {
        // Each line, and whether the message's usage has noted members to use.
        let lines = [
            (
                r#"{"message":{"role":"assistant","usage":{"input":1,"cost":{"total":2}}}}"#,
                true,
            ),
            (
                r#"{"message":{"usage":{"input":1},"usage":{"output":2,"a":[{}]}}}"#,
                true,
            ),
            (r#"{"message":{"usage":{"input":1},"usage":7}}"#, false),
            (
                r#"{"message":{"usage":{"input":1},"us\u0061ge":{"output":3}}}"#,
                true,
            ),
            (
                r#"{"message":{"usage":{"input":1}},"message":{"role":"user"}}"#,
                false,
            ),
            (
                r#"{"message":{"usage":{"input":1}},"message":{"usage":{"x":{}}}}"#,
                true,
            ),
            (r#"{"message":{"usage":{}}}"#, false),
            (r#"{"message":{"role":"x"},"usage":{"input":1}}"#, false),
            (r#"{"message":{"content":{"usage":{"input":1}}}}"#, false),
        ];
        for (text, used) in lines {
            let mut members = LineMembers::default();
            let b = text.as_bytes();
            let (object, at) = members.scan(b, 0, Notes::MESSAGES).unwrap();
            let line = whole_line(b);
            let entry = Entry {
                line,
                object,
                fields: &members.fields,
                message: Some(at.slices(&members.nested)),
                utf8: true,
                strings: json::Noted::default(),
                ahead: None,
            };
            let m = entry.message().unwrap();
            let mut noted = Vec::new();
            m.for_each_usage_field(|k, v| noted.push((k, v.bytes())));
            let mut walked = Vec::new();
            if let Some(u) = Message::read(entry.get("message").unwrap()).usage {
                u.for_each_field(|k, v| walked.push((k, v.bytes())));
            }
            assert_eq!(noted, walked, "{text}");
            let noted_used = m.usage.is_some_and(|u| m.usage_noted.of(u).is_some());
            assert_eq!(noted_used, used, "{text}");
        }
    }

    /// Issue 14: the one rule for "fragment" versus "not a session".
    #[test]
    fn pi_entries_are_told_from_other_records() {
        for yes in [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{}}"#,
            r#"{"type":"custom","id":"a","parentId":"p","timestamp":"t"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"thinking_level_change","timestamp":"t","thinkingLevel":"off"}"#,
        ] {
            assert!(with_entry(yes, is_pi_entry), "{yes}");
        }
        for no in [
            r#"{"name":"x","type":"module","version":"1.0.0"}"#,
            r#"{"parentUuid":null,"type":"user","uuid":"u","timestamp":"t","message":{}}"#,
            r#"{"timestamp":"t","type":"session_meta","payload":{}}"#,
            r#"{"type":"message","id":"a","parentId":null}"#,
            r#"{"type":"message","id":"a","parentId":3,"timestamp":"t"}"#,
            r#"{"type":"session","id":"s","timestamp":"t"}"#,
            r#"{"type":"title","v":1,"title":"x","updatedAt":"t","pad":" "}"#,
        ] {
            assert!(!with_entry(no, is_pi_entry), "{no}");
        }
        assert!(with_entry(
            r#"{"type":"title","v":1,"title":"x","source":"user","updatedAt":"t","pad":" "}"#,
            is_title_slot
        ));
        assert!(!with_entry(
            r#"{"type":"title","v":1,"title":"x","source":"bot","updatedAt":"t","pad":" "}"#,
            is_title_slot
        ));
    }

    #[test]
    fn ids_come_from_pi_file_names_only() {
        assert_eq!(
            id_from_file_name("/s/--p--/2026-04-21T08-59-18-596Z_cb9b4411-f084.jsonl"),
            Some("cb9b4411-f084")
        );
        for no in [
            "a_b.jsonl",
            "s.jsonl",
            "2026-04-21T08-59-18-596Z_.jsonl",
            "2026-04-21_x.txt",
        ] {
            assert_eq!(id_from_file_name(no), None, "{no}");
        }
    }

    #[test]
    fn model_changes_of_pi_and_oh_my_pi() {
        let m = |t: &str| {
            with_entry(t, |e| {
                e.model_change()
                    .map(|(p, m)| (p.into_owned(), m.into_owned()))
            })
        };
        let pm = |p: &str, m: &str| Some((p.to_string(), m.to_string()));
        assert_eq!(m(r#"{"provider":"a","modelId":"b"}"#), pm("a", "b"));
        assert_eq!(
            m(r#"{"model":"openrouter/~anthropic/claude"}"#),
            pm("openrouter", "~anthropic/claude")
        );
        assert_eq!(m(r#"{"model":"plain"}"#), None);
        assert_eq!(m(r#"{"model":"/x"}"#), None);
    }

    /// Issue 19, item 10: the whitespace Pi trims is JavaScript's: Unicode's White_Space
    /// without U+0085, and the byte-order mark.
    #[test]
    fn item_10_pi_trims_javascripts_whitespace() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let s = c.encode_utf8(&mut buf).as_bytes();
            let js = (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
            assert_eq!(pi_space_len(s), if js { s.len() } else { 0 }, "{c:?}");
        }
        let b = "\u{a0}\u{c} {} \u{2028}\u{3000}\n".as_bytes();
        assert_eq!(&b[pi_trim(b).0..pi_trim(b).1], b"{}");
        assert!(is_pi_blank("\u{b}\u{feff}\r".as_bytes()));
        assert!(!is_pi_blank("\u{85}".as_bytes()));
    }
}

/// Issue 20: lines validated ahead on other threads ([`prescan`], `input::chunks`) give the
/// reader's sessions, entries and diagnostics exactly, whatever the chunk size and the number
/// of helpers.
#[cfg(test)]
mod prescan_tests {
    use super::*;
    use crate::input::chunks;
    use std::fmt::Write as _;

    /// Every call the reader makes, with what it hands over; how many entries came with
    /// facts found ahead ([`Ahead`]), each checked against the entry; and whether it asks
    /// for the strings noted ([`Visitor::notes_strings`]), each string of an entry then
    /// looked up there and checked against a second reading of it.
    #[derive(Default)]
    struct Log(String, usize, bool);

    /// The facts the log's [`Ahead`] finds: the entry's type, members and record, as text.
    fn fact(e: &Entry<'_>) -> String {
        let members: Vec<_> = e
            .members()
            .map(|(k, _)| String::from_utf8_lossy(k))
            .collect();
        format!("{:?} {members:?} {}", e.kind(), e.object.len())
    }

    impl Log {
        fn entry(&mut self, what: &str, e: &Entry<'_>) {
            if let Some(f) = e.ahead::<String>() {
                assert_eq!(f, &fact(e), "line {}", e.line.no);
                self.1 += 1;
            }
            let _ = write!(
                self.0,
                "{what} {} {} {}",
                e.line.no, e.line.offset, e.line.len_with_eol
            );
            let _ = write!(self.0, " {:?}", String::from_utf8_lossy(e.object.bytes()));
            if self.2 {
                // Each string longer than 16 bytes or with an escape is noted, as a second
                // reading finds it. (Outside its strings a valid object holds no quote.)
                let (b, noted) = (e.object.bytes(), e.noted_strings());
                let (mut i, mut found) = (0, 0);
                while let Some(q) = b[i..].iter().position(|&c| c == b'"') {
                    let read = json::string_written(b, i + q);
                    let short = read.0 - (i + q) <= 18 && !b[i + q + 1..read.0].contains(&b'\\');
                    match noted.find(b, i + q) {
                        Some(note) => assert_eq!(note, read, "line {}", e.line.no),
                        None => assert!(short, "line {}: not noted", e.line.no),
                    }
                    found += usize::from(!short);
                    i = read.0;
                }
                let _ = write!(self.0, " noted={found}");
            }
            for k in ["type", "id", "message"] {
                let v = e
                    .get(k)
                    .map(|r| String::from_utf8_lossy(r.bytes()).into_owned());
                let _ = write!(self.0, " {k}={v:?}");
            }
            if let Some(m) = e.message() {
                let _ = write!(self.0, " message={m:?}");
            }
            self.0.push('\n');
        }
    }

    impl Visitor for Log {
        fn header(&mut self, h: &Header<'_>, _: &mut Diags) -> Result<(), Stop> {
            let _ = writeln!(
                self.0,
                "header {} {} {} {:?} {:?}",
                h.line.no,
                h.line.offset,
                h.id,
                h.fragment,
                h.title.as_ref().map(|t| t.line.no)
            );
            Ok(())
        }
        fn entry(&mut self, e: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
            self.entry("entry", e);
            Ok(())
        }
        fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
            self.0.push_str("end\n");
            Ok(())
        }
        fn outside(&mut self, e: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
            self.entry("outside", e);
            Ok(())
        }
        fn ahead(&self) -> Option<Arc<dyn Ahead>> {
            Some(Arc::new(AheadFn(fact)))
        }
        fn notes_strings(&self) -> bool {
            self.2
        }
    }

    /// The reader's log and diagnostics of `data`, with prescans of `chunk` bytes on
    /// `helpers` threads (`None`: no prescans), the reader's own chunks prescanned too or only
    /// split (`own_split`), the strings noted or not (`notes`); and how many entries had
    /// facts found ahead.
    fn read(
        data: &[u8],
        prescans: Option<(usize, usize)>,
        own_split: bool,
        notes: bool,
    ) -> (String, usize) {
        let mut d = Diags::new("t", "f", false);
        let mut log = Log(String::new(), 0, notes);
        let ahead = log.ahead();
        let notes = Notes::of(&log);
        let stats = match prescans {
            None => read_lines(SliceLines::new(data), true, &mut d, &mut log),
            Some((chunk, helpers)) => {
                let spares = Spares::for_helpers(helpers);
                let work = |offset, bytes| prescan(bytes, offset, notes, ahead.as_deref(), &spares);
                let own = |offset, bytes| match own_split {
                    true => split(bytes, offset, &spares),
                    false => work(offset, bytes),
                };
                chunks::in_order(data, chunk, helpers, work, own, |next| {
                    read_lines_prescanned(next, &spares, true, &mut d, &mut log)
                })
            }
        }
        .unwrap();
        (format!("{}{}{stats:?}", log.0, d.held()), log.1)
    }

    fn inputs() -> Vec<Vec<u8>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
            .collect();
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#;
        let entry = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        let long = entry.replace(
            r#""x""#,
            r#""a text long enough, \"quoted\", \/ and \u001b on two\nlines""#,
        );
        for odd in [
            format!("\u{feff}{header}\n{entry}\n"),
            format!("{header}\r\n\r\n  {entry}  \n\n{entry}\u{a0}\n{header}\n"),
            format!("{header}\n{entry}{entry}\n{{\"a\":\n[1]\n\"s\"\n{entry}"),
            format!("{entry}\n{header}\n{entry}\n\u{c}\n"),
            format!("{header}\n{}\n", entry.replace('x', "\u{0}\\u00e9")),
            // Long strings in records read where Pi trims them: noted where the line was.
            format!("\u{a0} {long}\n{header}\n{long}\u{a0}\n"),
        ] {
            out.push(odd.into_bytes());
        }
        let mut bad_utf8 = format!("{header}\n{entry}\n").into_bytes();
        let at = bad_utf8.len() - 5;
        bad_utf8[at] = 0xFF;
        out.push(bad_utf8);
        out
    }

    /// And the facts a visitor finds ahead ([`Ahead`]) come with the entries they are of, as
    /// do the strings noted ([`Entry::noted_strings`]) when it asks for them. The chunks the
    /// reader works itself are prescanned or only split ([`split`]).
    #[test]
    fn prescanned_lines_read_as_the_reader_reads_them() {
        let (mut with_facts, mut with_notes) = (0, 0);
        for data in inputs() {
            for notes in [false, true] {
                let (want, none) = read(&data, None, false, notes);
                assert_eq!(none, 0, "no facts without prescans");
                with_notes += want.matches(" noted=").count() - want.matches(" noted=0 ").count();
                for chunk in [1, 2, 7, 64, 333, 4096, 1 << 20] {
                    for helpers in [0, 1, 3] {
                        for own_split in [false, true] {
                            let prescans = Some((chunk, helpers));
                            let (got, facts) = read(&data, prescans, own_split, notes);
                            with_facts += facts;
                            assert_eq!(
                                got,
                                want,
                                "chunk {chunk}, {helpers} helpers, split {own_split}, notes \
                                 {notes}, input {:?}",
                                String::from_utf8_lossy(&data[..data.len().min(200)])
                            );
                        }
                    }
                }
            }
        }
        assert!(with_facts > 0, "entries read ahead carry their facts");
        assert!(with_notes > 100, "{with_notes} entries with strings noted");
    }

    #[test]
    fn chunks_start_at_lines() {
        let data = b"ab\ncd\n\nef";
        let starts: Vec<usize> = (0..=12).map(|at| chunks::line_start(data, at)).collect();
        assert_eq!(starts, [0, 3, 3, 3, 6, 6, 6, 7, 9, 9, 9, 9, 9]);
    }

    /// Prescans are made for the first chunks only, then reused: as many as the pipeline has
    /// alive at once (the window's chunks and the reader's, all handed back to the reader one
    /// after another when the helpers were slow) are kept when done with, so a second round of
    /// as many is made of them.
    #[test]
    fn prescans_alive_at_once_are_all_kept_for_the_next_chunks() {
        for helpers in [1, 2, 3] {
            let spares = Spares::for_helpers(helpers);
            let alive = chunks::in_flight(helpers);
            for round in 1..=3 {
                let taken: Vec<_> = (0..alive).map(|i| split(b"{}\n", i * 3, &spares)).collect();
                for p in taken {
                    spares.give(p);
                }
                assert_eq!(spares.made(), alive, "{helpers} helpers, round {round}");
            }
        }
    }
}
