//! Reading the billed calls of an input: the [`Collector`] visitor takes each assistant
//! message's `usage`, and kept apart a summarization call's (compaction and branch_summary
//! entries), a `usage` entry's and a tool result's (Pi 1.x),
//! reads its token counts, recorded cost and time, gives the call its identity, and keeps it
//! with the input's calls or hands it to the report.

use super::calls::{BilledCall, CallSource, InputCalls, Lineage, SessionFacts, TimeText};
use super::decimal::{parse_cost, Cost, NotACost};
use super::report::{ReportedSession, UsageReport};
use crate::diag::{Diags, Kind};
use crate::hash;
use crate::input::Turn;
use crate::json::{self, Raw};
use crate::message::{
    cost_total_text, for_each_usage_member, NestedCalls, TokenField, UsageMember,
};
use crate::message::{short_text, token_value, Message};
use crate::output::{Out, Stop};
use crate::reader::{Ahead, AheadFn, Entry, Header, NotedMembers, SessionVisitor};
use crate::sync::lock;
use crate::time;
use std::borrow::Cow;
use std::ops::{Deref, DerefMut, Range};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Tells whether a fork's original is in the input.
pub trait ForkOrigins {
    /// The lineage of a session whose header's `parentSession` is `parent`.
    fn lineage(&self, parent: Option<&str>) -> Lineage;
}

/// The reading of one input's calls (a [`SessionVisitor`]).
pub struct Collector<'a, 'w> {
    present: &'a dyn ForkOrigins,
    /// The calls and sessions read (only the model and field names when streaming).
    pub data: InputCalls,
    /// Where calls go as they are read, when streaming.
    pub sink: Option<(ReportRef<'a>, &'a mut Out<'w>)>,
    /// A large input read ahead of its turn: where its calls go once the room for them ends.
    handover: Option<Handover<'a, 'w>>,
    scratch: Vec<u8>,
}

/// The report a streaming [`Collector`] hands its calls to: given to it, or locked by it
/// when it was [handed over](Handover) (and held until the input is read).
pub enum ReportRef<'a> {
    Given(&'a mut UsageReport),
    Locked(MutexGuard<'a, UsageReport>),
}

impl Deref for ReportRef<'_> {
    type Target = UsageReport;
    fn deref(&self) -> &UsageReport {
        match self {
            ReportRef::Given(r) => r,
            ReportRef::Locked(r) => r,
        }
    }
}

impl DerefMut for ReportRef<'_> {
    fn deref_mut(&mut self) -> &mut UsageReport {
        match self {
            ReportRef::Given(r) => r,
            ReportRef::Locked(r) => r,
        }
    }
}

/// The room a run gives the calls of large inputs read ahead of their turn (issue 18: many
/// large inputs read on every core, the first occurrence of a call still decided in input
/// order, memory still bounded): counted in calls and sessions kept, across every input
/// being read ahead or waiting for the writer.
pub struct AheadRoom {
    held: AtomicUsize,
    limit: usize,
}

impl AheadRoom {
    /// Room for `limit` calls and sessions.
    pub fn new(limit: usize) -> AheadRoom {
        AheadRoom {
            held: AtomicUsize::new(0),
            limit,
        }
    }

    /// Takes room for `n` more; `false` (nothing taken) when there is not enough left.
    fn take(&self, n: usize) -> bool {
        let before = self.held.fetch_add(n, Ordering::Relaxed);
        if before + n > self.limit {
            self.held.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Gives back room for `n` (calls handed to the report).
    pub fn give_back(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::Relaxed);
    }
}

/// How a large input read ahead of its turn goes on when the [`AheadRoom`] runs out: it
/// waits for its turn (lending its CPU, see [`Turn::wait`]), hands the sessions and calls it
/// kept to the report, and streams the rest into it, as an input read in its turn does.
pub struct Handover<'a, 'w> {
    pub turn: &'a Turn<'a>,
    pub report: &'a Mutex<UsageReport>,
    pub out: &'a mut Out<'w>,
    pub room: &'a AheadRoom,
    /// The room this input holds.
    held: usize,
}

impl<'a, 'w> Handover<'a, 'w> {
    pub fn new(
        turn: &'a Turn<'a>,
        report: &'a Mutex<UsageReport>,
        out: &'a mut Out<'w>,
        room: &'a AheadRoom,
    ) -> Self {
        Handover {
            turn,
            report,
            out,
            room,
            held: 0,
        }
    }
}

/// Where the calls of the session being read go.
pub enum SessionCalls {
    /// Into the input's calls, as those of its session number.
    Kept(u32),
    /// Into the report (streaming), which counts them for this session.
    Reported(ReportedSession),
}

/// The parts of an entry that make a call ([`call_parts`]).
struct BilledCallParts<'a> {
    usage: Option<Raw<'a>>,
    /// The members of a message's `usage` as the reader noted them (none for an entry's).
    usage_noted: NotedMembers<'a>,
    /// A usage entry's is `UsageEntry(0)` here: its `kind` is numbered in order.
    source: CallSource,
    /// A usage entry's `kind` (oh-my-pi's `purpose`).
    kind: Option<Cow<'a, str>>,
    provider: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    response_id: Option<Cow<'a, str>>,
    /// The message's own (Unix-millisecond) timestamp.
    message_timestamp: Option<Raw<'a>>,
    /// A tool result's `nestedCalls`.
    nested_calls: Option<Raw<'a>>,
}

/// What was read from one `usage` object.
#[derive(Default, Clone)]
struct UsageRead {
    tokens: [u64; 4],
    total: Option<u64>,
    reasoning: Option<u64>,
    cache_write_1h: Option<u64>,
    cost: Option<Cost>,
    cost_from_provider: bool,
    other: Vec<(u32, u64)>,
}

/// The token fields of a `usage` object, in the order of [`BilledCall::tokens`].
pub const TOKEN_FIELDS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

/// A call read from its entry: all but its model's and kind's numbers in the input's tables.
#[derive(Clone)]
struct CallRead {
    source: CallSource,
    usage: UsageRead,
    identity: Option<u128>,
    time: Option<(i64, TimeText)>,
    nested: Option<(u64, bool)>,
}

/// What reads a call from its entry: `names` numbers the other usage fields' names,
/// `scratch` is space for the identity.
struct CallReader<'n> {
    names: &'n mut dyn FnMut(&str) -> u32,
    scratch: &'n mut Vec<u8>,
}

impl<'a, 'w> Collector<'a, 'w> {
    pub fn new(
        present: &'a dyn ForkOrigins,
        file: String,
        sink: Option<(&'a mut UsageReport, &'a mut Out<'w>)>,
    ) -> Self {
        Collector {
            present,
            data: InputCalls::new(file),
            sink: sink.map(|(r, out)| (ReportRef::Given(r), out)),
            handover: None,
            scratch: Vec::new(),
        }
    }

    /// A collector of a large input read ahead of its turn: its calls are kept (as without a
    /// report) while `h`'s room lasts, then handed over and streamed ([`Handover`]).
    pub fn reading_ahead(present: &'a dyn ForkOrigins, file: String, h: Handover<'a, 'w>) -> Self {
        Collector {
            handover: Some(h),
            ..Collector::new(present, file, None)
        }
    }

    /// The room of the [`AheadRoom`] the calls and sessions kept hold (0 once handed over).
    pub fn held_ahead(&self) -> usize {
        self.handover.as_ref().map_or(0, |h| h.held)
    }

    /// Takes room for `n` more calls or sessions kept ahead of the input's turn; when there
    /// is none, hands over what is kept (`session` is the current one's, to go on with).
    fn keep_ahead(&mut self, n: usize, session: Option<&mut SessionCalls>) -> Result<(), Stop> {
        match &mut self.handover {
            Some(h) if h.room.take(n) => {
                h.held += n;
                Ok(())
            }
            Some(_) => self.hand_over(session),
            None => Ok(()),
        }
    }

    /// Waits for the input's turn, hands the sessions and calls kept to the report and makes
    /// this collector stream into it; `session` (the current one) then takes its calls there.
    fn hand_over(&mut self, session: Option<&mut SessionCalls>) -> Result<(), Stop> {
        let Some(h) = self.handover.take() else {
            return Ok(());
        };
        if !h.turn.wait() {
            // The run stopped (stdout closed).
            return Err(Stop::BrokenPipe);
        }
        let mut report = ReportRef::Locked(lock(h.report));
        report.input(&self.data.file);
        let sessions = std::mem::take(&mut self.data.sessions);
        let calls = std::mem::take(&mut self.data.calls);
        let last = report.sessions(sessions, &calls, &self.data.tables, h.out)?;
        h.room.give_back(h.held);
        if let (Some(s), Some(last)) = (session, last) {
            *s = SessionCalls::Reported(last);
        }
        self.sink = Some((report, h.out));
        Ok(())
    }

    /// The call in entry `e`, made of `c`, into the session's calls.
    fn push_call(
        &mut self,
        session: &SessionCalls,
        e: &Entry<'_>,
        mut c: BilledCallParts<'_>,
        d: &mut Diags,
    ) {
        if let CallSource::UsageEntry(_) = c.source {
            c.source = CallSource::UsageEntry(self.data.tables.kind(c.kind.as_deref()));
        }
        let tables = &mut self.data.tables;
        let read = CallReader {
            names: &mut |n| tables.name(n),
            scratch: &mut self.scratch,
        }
        .read(e, &c, d);
        let model = tables.model(c.provider.as_deref(), c.model.as_deref());
        self.push_read(session, model, read);
    }

    /// A call read ([`CallReader::read`]) with model `model`, into the session's calls.
    fn push_read(&mut self, session: &SessionCalls, model: u32, r: CallRead) {
        let u = r.usage;
        let computed: u128 = u.tokens.iter().map(|&t| u128::from(t)).sum();
        let call = BilledCall {
            source: r.source,
            model,
            time: r.time,
            identity: r.identity,
            tokens: u.tokens,
            total_tokens: u.total.map_or(computed, u128::from),
            total_computed: u.total.is_none(),
            reasoning: u.reasoning,
            cache_write_1h: u.cache_write_1h,
            cost: u.cost,
            cost_from_provider: u.cost_from_provider,
            nested: r.nested,
            other: u.other,
        };
        match (session, &mut self.sink) {
            (SessionCalls::Reported(s), Some((report, _))) => {
                report.call(s, &call, &self.data.tables)
            }
            (SessionCalls::Kept(index), _) => self.data.calls.push((*index, call)),
            // A reported session comes only with a report.
            (SessionCalls::Reported(_), None) => {}
        }
    }
}

impl CallReader<'_> {
    /// The call in entry `e`, made of `c`; what is wrong in it reported.
    fn read(&mut self, e: &Entry<'_>, c: &BilledCallParts<'_>, d: &mut Diags) -> CallRead {
        let what = match c.source {
            CallSource::Message => String::new(),
            CallSource::Summarization => format!("{} ", e.kind().as_deref().unwrap_or("entry")),
            CallSource::UsageEntry(_) => "usage entry ".into(),
            CallSource::ToolResult => "toolResult ".into(),
            CallSource::SubagentTask => "task result's details ".into(),
        };
        let usage = match c.usage {
            Some(u) => self.read_usage(u, c.usage_noted, &what, e.line.no, d),
            None => UsageRead::default(),
        };
        // The entry's `timestamp`, looked up once for the identity and the time.
        let timestamp = e.get("timestamp");
        CallRead {
            source: c.source,
            usage,
            identity: self.identity(e, timestamp, c),
            time: Self::time(e, timestamp, c.message_timestamp, d),
            nested: c
                .nested_calls
                .and_then(NestedCalls::read)
                .map(|n| (n.count, n.complete == Some(false))),
        }
    }

    /// The `usage` value of a call (`what` names a summarization call's entry type in
    /// diagnostics), its invalid members reported.
    fn read_usage(
        &mut self,
        usage: Raw<'_>,
        noted: NotedMembers<'_>,
        what: &str,
        line: u64,
        d: &mut Diags,
    ) -> UsageRead {
        let mut u = UsageRead::default();
        if usage.first() != Some(&b'{') {
            d.report(
                Some(line),
                Kind::BadField,
                format!(
                    "{what}usage is a {}, not an object; counted with zero tokens and no cost",
                    usage.kind_name()
                ),
            );
            return u;
        }
        for_each_usage_member(usage, noted, |m| {
            self.usage_member(&mut u, m, what, line, d)
        });
        u
    }

    /// Member `m` of a `usage` object, into `u`.
    fn usage_member(
        &mut self,
        u: &mut UsageRead,
        m: UsageMember<'_>,
        what: &str,
        line: u64,
        d: &mut Diags,
    ) {
        let (field, value) = match m {
            UsageMember::Cost(v) => {
                (u.cost, u.cost_from_provider) = self.read_cost(v, what, line, d);
                return;
            }
            UsageMember::Token(field, value) => (Some(field), value),
            UsageMember::OtherNumber(name, v) => match token_value(v) {
                Ok(Some(n)) => {
                    let index = (self.names)(&name);
                    u.other.push((index, n));
                    return;
                }
                Ok(None) => return,
                Err(why) => {
                    let msg = format!("{what}usage.{name} {why}; not counted");
                    return d.report(Some(line), Kind::BadField, msg);
                }
            },
        };
        let n = match value {
            Ok(n) => n,
            Err(why) => {
                let name = field.map_or("", TokenField::name);
                let msg = format!("{what}usage.{name} {why}; not counted");
                return d.report(Some(line), Kind::BadField, msg);
            }
        };
        match field {
            Some(TokenField::Input) => u.tokens[0] = n.unwrap_or(0),
            Some(TokenField::Output) => u.tokens[1] = n.unwrap_or(0),
            Some(TokenField::CacheRead) => u.tokens[2] = n.unwrap_or(0),
            Some(TokenField::CacheWrite) => u.tokens[3] = n.unwrap_or(0),
            Some(TokenField::TotalTokens) => u.total = n,
            Some(TokenField::Reasoning) => u.reasoning = n,
            Some(TokenField::CacheWrite1h) => u.cache_write_1h = n,
            None => {}
        }
    }

    /// The recorded `cost.total` (`None` when absent or invalid, reported) and whether
    /// `cost.totalFromProvider` is true.
    fn read_cost(
        &mut self,
        cost: Raw<'_>,
        what: &str,
        line: u64,
        d: &mut Diags,
    ) -> (Option<Cost>, bool) {
        if cost.is_null() {
            return (None, false);
        }
        if cost.first() != Some(&b'{') {
            d.report(
                Some(line),
                Kind::BadField,
                format!(
                    "{what}usage.cost is a {}, not an object; cost counted as missing",
                    cost.kind_name()
                ),
            );
            return (None, false);
        }
        let (total, from_provider) = cost_total_text(cost);
        let from_provider = from_provider.and_then(json::as_bool) == Some(true);
        let Some(total) = total.filter(|t| *t != b"null") else {
            return (None, from_provider);
        };
        let bad = |d: &mut Diags, why: String| {
            d.report(
                Some(line),
                Kind::BadField,
                format!("{what}usage.cost.total {why}; cost counted as missing"),
            );
            (None, from_provider)
        };
        let parsed = parse_cost(total);
        // A total read as a cost is a number; only one that is not needs the check that it
        // is one (parsing it as a float, the slow way).
        if !(parsed.is_ok() && total.first().is_some_and(|c| c.is_ascii_digit()))
            && json::as_f64(total).is_none()
        {
            return bad(d, format!("is a {}, not a number", json::kind_name(total)));
        }
        match parsed {
            Ok(v) => (Some(v), from_provider),
            Err(NotACost::Negative) => bad(d, format!("is negative ({})", short_text(total))),
            Err(NotACost::OutOfRange | NotACost::NotANumber) => {
                bad(d, format!("is out of range ({})", short_text(total)))
            }
        }
    }

    /// The call's time: the entry's ISO `timestamp` (its value, as `e` has it), else the
    /// message's Unix milliseconds.
    fn time(
        e: &Entry<'_>,
        timestamp: Option<Raw<'_>>,
        message_timestamp: Option<Raw<'_>>,
        d: &mut Diags,
    ) -> Option<(i64, TimeText)> {
        match timestamp {
            None => {}
            Some(raw) if raw.is_null() => {}
            Some(raw) => match raw.as_str() {
                Some(s) => match entry_time_ms(&s) {
                    Some(ms) => return Some((ms, TimeText::new(&s))),
                    None => d.report(
                        Some(e.line.no),
                        Kind::BadField,
                        format!(
                            "timestamp {:?} is not ISO 8601; not used",
                            short_text(s.as_bytes())
                        ),
                    ),
                },
                None => d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!(
                        "timestamp is a {}, not an ISO 8601 string; not used",
                        raw.kind_name()
                    ),
                ),
            },
        }
        let ms = message_timestamp
            .and_then(Raw::as_f64)
            .and_then(time::millis_from_number)?;
        Some((ms, TimeText::new(&time::format_iso8601(ms))))
    }

    /// The call's identity: its `responseId` with its time (the message's numeric `timestamp`,
    /// else its entry's `timestamp`) and the text of its `usage`; without a `responseId`, its
    /// source, its entry's `id` and `timestamp` and the text of its `usage`; `None` when it has
    /// none of those. (A usage entry or a tool result has no `responseId`: a fork's copy keeps
    /// its entry's id, time and usage text.) Providers reuse response ids (Ollama's `chatcmpl-<n>`, Pi's chunk ids), and an
    /// identity must never merge two calls that differ in anything a bill depends on; a fork's
    /// or a sub-agent's copy of a message keeps its time and usage text, so it still repeats.
    /// `timestamp` is the entry's, as `e` has it.
    fn identity(
        &mut self,
        e: &Entry<'_>,
        timestamp: Option<Raw<'_>>,
        c: &BilledCallParts<'_>,
    ) -> Option<u128> {
        let timestamp = timestamp.filter(|v| !v.is_null());
        let usage = c.usage.as_deref().unwrap_or(b"");
        if let Some(r) = c.response_id.as_deref().filter(|r| !r.is_empty()) {
            let numeric = |t: &Raw<'_>| t.first().is_some_and(|b| b.is_ascii_digit() || *b == b'-');
            let time = match c.message_timestamp.filter(numeric) {
                Some(t) => t.bytes(),
                None => timestamp.map_or(&b""[..], Raw::bytes),
            };
            return Some(identity(self.scratch, &[b"r", r.as_bytes(), time, usage]));
        }
        let id = e.get("id").filter(|v| !v.is_null());
        (id.is_some() || timestamp.is_some()).then(|| {
            identity(
                self.scratch,
                &[
                    match c.source {
                        CallSource::Message => b"e",
                        CallSource::Summarization => b"s",
                        CallSource::UsageEntry(_) => b"u",
                        CallSource::ToolResult => b"t",
                        CallSource::SubagentTask => b"a",
                    },
                    id.as_deref().unwrap_or(b""),
                    timestamp.as_deref().unwrap_or(b""),
                    usage,
                ],
            )
        })
    }
}

/// The project of a session whose header has no `cwd`, as pi-sessions finds it: the nearest
/// folder above the file named `--<encoded cwd>--` however its path is spelt
/// ([`crate::discover::project::folder_above`]), decoded against the file system
/// ([`crate::discover::decode_project`]). Rare (Pi writes a `cwd`; a fragment has no header),
/// so not cached.
fn project_of_folder(file: &str) -> Option<String> {
    let folder = crate::discover::project::folder_above(std::path::Path::new(file))?;
    crate::discover::decode_project(&folder).map(|(project, _)| project)
}

impl SessionVisitor for Collector<'_, '_> {
    type Session = SessionCalls;

    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<SessionCalls, Stop> {
        self.keep_ahead(1, None)?;
        let lineage = self.present.lineage(h.parent_session.as_deref());
        let cwd = h.cwd.clone().filter(|c| !c.is_empty());
        let s = SessionFacts {
            id: h.id.clone(),
            cwd: cwd.or_else(|| project_of_folder(&self.data.file)),
            parent: h.parent_session.clone(),
            lineage,
        };
        match &mut self.sink {
            Some((report, out)) => report.session(s, out).map(SessionCalls::Reported),
            None => {
                self.data.sessions.push(s);
                Ok(SessionCalls::Kept(self.data.sessions.len() as u32 - 1))
            }
        }
    }

    fn entry(
        &mut self,
        session: &mut SessionCalls,
        e: &Entry<'_>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        // Read ahead of the reader (a large input on several cores): most entries make no
        // call, and a call read without a problem needs only its model numbered.
        match e.ahead::<UsageFacts>() {
            Some(UsageFacts::NoCall) => return Ok(()),
            Some(UsageFacts::Call(ahead)) => {
                if let Some((provider, model)) = ahead.names(e) {
                    let model = self.data.tables.model(provider, model);
                    self.push_read(session, model, ahead.call.clone());
                    return self.kept_one(session);
                }
            }
            Some(UsageFacts::InOrder) | None => {}
        }
        match call_parts(e) {
            Some(c) => {
                self.push_call(session, e, c, d);
                self.kept_one(session)
            }
            None => Ok(()),
        }
    }

    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        Some(Arc::new(AheadFn(usage_facts)))
    }

    fn end(&mut self, _session: SessionCalls, _d: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
}

impl Collector<'_, '_> {
    /// A call was added to `session`: when it was kept ahead of the input's turn, it takes
    /// room ([`Collector::keep_ahead`]).
    fn kept_one(&mut self, session: &mut SessionCalls) -> Result<(), Stop> {
        if self.handover.is_some() && matches!(session, SessionCalls::Kept(_)) {
            return self.keep_ahead(1, Some(session));
        }
        Ok(())
    }
}

/// The parts of the call entry `e` makes, when it makes one: the sources Pi 1.6.0's
/// getSessionStats adds up (agent-session.js), kept apart.
fn call_parts<'e>(e: &Entry<'e>) -> Option<BilledCallParts<'e>> {
    let parts = |usage, source, kind, provider, model| BilledCallParts {
        usage,
        usage_noted: NotedMembers::default(),
        source,
        kind,
        provider,
        model,
        response_id: None,
        message_timestamp: None,
        nested_calls: None,
    };
    // A type written with an escape is read again decoded (`Raw::read_as`).
    e.get("type")?.read_as(|kind| match kind {
        b"\"message\"" => {
            // Built where it is read (no `message` has no role: no call).
            let message = e.message_or_default();
            if message.is_assistant() {
                // Keyed as Pi keys it: provider and `responseModel ?? model`.
                let provider = message.provider.and_then(Raw::as_str);
                let usage = message.usage.filter(|u| !u.is_null());
                Some(BilledCallParts {
                    response_id: message.response_id.and_then(Raw::as_str),
                    message_timestamp: message.timestamp,
                    usage_noted: message.usage_noted,
                    ..parts(
                        usage,
                        CallSource::Message,
                        None,
                        provider,
                        message.billed_model(),
                    )
                })
            } else if message.is_tool_result() {
                // Counted only with a usage, as Pi counts it.
                let Some(usage) = message.usage.filter(|u| !u.is_null()) else {
                    // oh-my-pi's task result: its sub-agents' usage, reported apart.
                    let usage = subagent_usage(&message)?;
                    return Some(BilledCallParts {
                        message_timestamp: message.timestamp,
                        ..parts(Some(usage), CallSource::SubagentTask, None, None, None)
                    });
                };
                Some(BilledCallParts {
                    message_timestamp: message.timestamp,
                    nested_calls: message.nested_calls,
                    usage_noted: message.usage_noted,
                    ..parts(Some(usage), CallSource::ToolResult, None, None, None)
                })
            } else {
                None
            }
        }
        b"\"usage\"" | b"\"model_usage\"" => {
            // Every usage entry is a billed call, whatever its kind (an unknown one too).
            // oh-my-pi's `model_usage` entry is one too, its `purpose` standing for the kind.
            let kind = e.str("kind").or_else(|| e.str("purpose"));
            let usage = e.get("usage").filter(|u| !u.is_null());
            let source = CallSource::UsageEntry(0);
            Some(parts(
                usage,
                source,
                kind,
                e.str("provider"),
                e.str("model"),
            ))
        }
        b"\"compaction\"" | b"\"branch_summary\"" => {
            let usage = e.get("usage").filter(|u| !u.is_null())?;
            let source = CallSource::Summarization;
            Some(parts(
                Some(usage),
                source,
                None,
                e.str("provider"),
                e.str("model"),
            ))
        }
        _ => None,
    })
}

/// What pi-usage reads from an entry ahead of the reader ([`Ahead`]).
enum UsageFacts {
    /// The entry makes no call: it cannot matter.
    NoCall,
    /// A call read without a problem to report.
    Call(Box<CallAhead>),
    /// Read by the reader in order: its reading reports something, or it names a usage
    /// entry's kind or another usage field (numbered in order).
    InOrder,
}

/// A call read ahead of the reader, and where its provider and model are in its line.
struct CallAhead {
    call: CallRead,
    provider: Option<Range<usize>>,
    model: Option<Range<usize>>,
}

impl CallAhead {
    /// The call's provider and model, from its line `e`; `None` when they are not there.
    fn names<'e>(&self, e: &Entry<'e>) -> Option<(Option<&'e str>, Option<&'e str>)> {
        let text = |at: &Option<Range<usize>>| match at {
            Some(place) => e.text_at(place.clone()).map(Some),
            None => Some(None),
        };
        Some((text(&self.provider)?, text(&self.model)?))
    }
}

/// The sub-agents' usage an oh-my-pi `task` tool result `m` records: an object under
/// `details.usage`, as oh-my-pi reads it for its session totals (`entryUsage` in its
/// session-manager.ts: `toolName` `task`, `details` and its `usage` objects).
fn subagent_usage<'e>(m: &Message<'e>) -> Option<Raw<'e>> {
    if !m.tool_name?.is_str("task") {
        return None;
    }
    m.details
        .filter(|d| d.first() == Some(&b'{'))?
        .get("usage")
        .filter(|u| u.first() == Some(&b'{'))
}

/// [`UsageFacts`] of entry `e`: what [`Collector`]'s `entry` would read of it, when it can be
/// read without the input's tables and without reporting anything.
fn usage_facts(e: &Entry<'_>) -> UsageFacts {
    let Some(c) = call_parts(e) else {
        return UsageFacts::NoCall;
    };
    if let CallSource::UsageEntry(_) = c.source {
        return UsageFacts::InOrder;
    }
    thread_local! {
        /// The identity's scratch space on this thread, kept from call to call.
        static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut named = false;
    let mut d = Diags::quiet("pi-usage", "");
    let mut scratch = SCRATCH.take();
    let call = CallReader {
        names: &mut |_| {
            named = true;
            0
        },
        scratch: &mut scratch,
    }
    .read(e, &c, &mut d);
    SCRATCH.set(scratch);
    // Where a name is in the line: one written without escapes is a slice of it.
    let at = |s: &Option<Cow<'_, str>>| match s {
        None => Some(None),
        Some(s) => e.place_of(s).map(Some),
    };
    match (at(&c.provider), at(&c.model)) {
        (Some(provider), Some(model)) if !named && d.counts().total() == 0 => {
            UsageFacts::Call(Box::new(CallAhead {
                call,
                provider,
                model,
            }))
        }
        _ => UsageFacts::InOrder,
    }
}

/// A 128-bit identity of byte strings (XXH3-128 of each part's length and bytes, so parts
/// cannot run into each other): a collision among even billions of calls is not a practical
/// concern. `buf` is scratch space.
fn identity(buf: &mut Vec<u8>, parts: &[&[u8]]) -> u128 {
    buf.clear();
    for p in parts {
        buf.extend_from_slice(&(p.len() as u64).to_le_bytes());
        buf.extend_from_slice(p);
    }
    hash::hash128(buf)
}

/// An entry `timestamp` by pi-usage's rule: [`time::parse`] of the trimmed text, refusing
/// `24:00`, leap seconds and expanded years (the rule pi-usage had before the parsers were
/// merged into [`time`]).
fn entry_time_ms(s: &str) -> Option<i64> {
    time::parse(s.trim())
        .filter(|t| !(t.end_of_day || t.leap_second || t.expanded_year))
        .map(|t| t.ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader;

    /// What [`usage_facts`] makes of each entry of `text` (one session).
    fn facts_of(text: &str) -> Vec<&'static str> {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t"}"#;
        reader::map_entries(&format!("{header}\n{text}"), |e| match usage_facts(e) {
            UsageFacts::NoCall => "no call",
            UsageFacts::Call(_) => "call",
            UsageFacts::InOrder => "in order",
        })
    }

    /// Issue 20: an entry that makes no call needs nothing more; a call read without a
    /// problem is read ahead; what reports something, or numbers a name in order, is read
    /// in order.
    #[test]
    fn calls_are_read_ahead_only_when_nothing_is_reported() {
        let m = |role: &str, rest: &str| {
            format!(
                r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"{role}"{rest}}}}}"#
            )
        };
        let cases = [
            (m("user", r#","content":"x""#), "no call"),
            (m("toolResult", r#","content":[]"#), "no call"),
            (r#"{"type":"custom","id":"b","parentId":null,"timestamp":"t"}"#.into(), "no call"),
            (m("assistant", r#","provider":"p","model":"m","usage":{"input":1,"output":2,"cost":{"total":0.5}}"#), "call"),
            (m("toolResult", r#","usage":{"input":1}"#), "call"),
            (m("assistant", r#","provider":"p\u0031","model":"m","usage":{"input":1}"#), "in order"),
            (m("assistant", r#","provider":"p","model":"m","usage":{"input":-1}"#), "in order"),
            (m("assistant", r#","provider":"p","model":"m","usage":{"input":1,"premium":2}"#), "in order"),
            (r#"{"type":"usage","id":"c","parentId":null,"timestamp":"t","kind":"k","usage":{"input":1}}"#.into(), "in order"),
            (r#"{"type":"compaction","id":"c","parentId":null,"timestamp":"yesterday","usage":{"input":1}}"#.into(), "in order"),
        ];
        for (line, want) in cases {
            assert_eq!(facts_of(&line), [want], "{line}");
        }
    }

    #[test]
    fn entry_timestamps_by_the_usage_rule() {
        let ms = |s: &str| entry_time_ms(s).unwrap_or_else(|| panic!("{s}"));
        assert_eq!(ms("1970-01-01T00:00:00.000Z"), 0);
        assert_eq!(ms("2026-05-01T10:00:00.123Z"), 1_777_629_600_123);
        // The same instant written with an offset.
        assert_eq!(ms("2026-05-01T05:00:00.123-05:00"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T15:30:00.123+0530"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T10:00:00.1234567Z"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T10:00:00Z"), 1_777_629_600_000);
        assert_eq!(ms("2026-05-01T10:00Z"), 1_777_629_600_000);
        assert_eq!(ms("2026-05-01"), 1_777_593_600_000);
        assert_eq!(ms("2026-05-01T10:00:00"), 1_777_629_600_000);
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-05-01T24:00:00Z",
            "2026-05-01T10:00:00.Z",
            "2026-05-01T10:00:00+5",
            "2026-05-01T10:00:00Zjunk",
            "2026-05-01X10:00:00Z",
            "1e12",
        ] {
            assert_eq!(entry_time_ms(bad), None, "{bad}");
        }
        assert!(entry_time_ms("2024-02-29T00:00:00Z").is_some());
        // pi-usage's own rule on top of time::parse: padded text is trimmed; 24:00, leap
        // seconds and expanded years are refused.
        assert_eq!(ms(" 2026-05-01T10:00:00Z\n"), 1_777_629_600_000);
        for bad in ["2016-12-31T23:59:60Z", "+002026-05-01T10:00:00Z"] {
            assert_eq!(entry_time_ms(bad), None, "{bad}");
        }
    }
}
