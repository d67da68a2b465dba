//! The records pi-tools writes ([`ToolCall`], [`ToolResult`]) and their rendering: a record is
//! decided (status, evidence, filters) and written into the output buffer without its newline,
//! borrowing what it writes, so writing allocates nothing of its own.

use super::args::{Args, CallStatus};
use super::facts::{
    as_i64, bash_verdict, call_duration, call_verdict, Answer, BashRun, CallEvidence, DurationFrom,
    MessageLine, ResultFacts, ResultUsage,
};
use super::text::write_text;
use super::waiting::{DuplicateOf, KeptBytes, PendingCall, WaitingRecord};
use super::{changed, fetch};
use crate::diag::Diags;
use crate::json::{self, Raw};
use crate::message::TokenField;
use crate::output::{Obj, Out, Stop};
use crate::reader::Entry;
use crate::record::Record;
use std::fs::File;

/// A tool_call record: a model's call joined to its result, or a user's command.
pub struct ToolCall<'a> {
    /// The `session` and `file` members, written once per session ([`record_head`]).
    head: &'a [u8],
    line: u64,
    entry: Option<&'a str>,
    call_id: Option<&'a str>,
    name: Option<&'a str>,
    namespace: Option<&'a str>,
    by_user: bool,
    arguments: Option<CallArguments<'a>>,
    arguments_bytes: Option<u64>,
    status: CallStatus,
    evidence: CallEvidence,
    stop_reason: Option<&'a str>,
    result: Option<JoinedResult<'a>>,
    bash: Option<BashRun<'a>>,
    /// The duration and where it comes from ([`call_duration`]).
    duration: Option<(i64, DurationFrom)>,
    model: Option<&'a str>,
    provider: Option<&'a str>,
    timestamp: Option<&'a str>,
    /// How result text is written (--no-content, --max-text).
    options: &'a Args,
}

/// A call's `arguments`.
enum CallArguments<'a> {
    /// A toolCall block's, copied as recorded (one JSON value).
    Recorded(&'a [u8]),
    /// A user command's: `{"command":…}` with the recorded command (a JSON string).
    Command(Raw<'a>),
}

/// The `result` object of a tool_call.
struct JoinedResult<'a> {
    line: u64,
    entry: Option<&'a str>,
    facts: &'a ResultFacts<'a>,
    timestamp: Option<&'a str>,
}

/// A tool_result record: a result that joins no call (an orphan, or a duplicate).
pub struct ToolResult<'a> {
    /// The `session` and `file` members, written once per session ([`record_head`]).
    head: &'a [u8],
    line: u64,
    entry: Option<&'a str>,
    status: CallStatus,
    duplicate_of: Option<&'a DuplicateOf>,
    facts: &'a ResultFacts<'a>,
    timestamp: Option<&'a str>,
    /// How result text is written (--no-content, --max-text).
    options: &'a Args,
}

/// The result fields shared by tool_call.result and tool_result.
fn write_result_facts(o: &mut Obj<'_>, f: &ResultFacts<'_>, a: &Args) {
    o.opt_str("name", f.name.as_deref());
    write_text(o, f.text.as_ref(), a);
    // Most results have no image, no usage and no nested calls: those members are then
    // written in one go.
    match (f.images, f.image_types.is_empty()) {
        (0, true) => o.members(b",\"images\":0,\"image_types\":[]"),
        (n, _) => o.u64("images", n).arr("image_types", |arr| {
            for t in &f.image_types {
                match t {
                    Some(t) => arr.str(t),
                    None => arr.raw(b"null"),
                }
            }
        }),
    };
    o.opt_bool("is_error", f.is_error)
        .opt_i64("exit_code", f.exit_code)
        .opt_raw("details", f.details);
    if f.usage.is_none() && f.nested_calls.is_none() {
        o.members(b",\"usage\":null,\"nested_calls\":null");
        return;
    }
    match &f.usage {
        Some(u) => o.obj("usage", |o| write_usage(o, u)),
        None => o.null("usage"),
    };
    match &f.nested_calls {
        Some(n) => o.obj("nested_calls", |o| {
            o.u64("count", n.count)
                .u64("errors", n.errors)
                .u64("unfinished", n.unfinished)
                .opt_bool("complete", n.complete);
        }),
        None => o.null("nested_calls"),
    };
}

/// The members of a result's `usage` object.
fn write_usage(o: &mut Obj<'_>, u: &ResultUsage<'_>) {
    let mut sum = itoa::Buffer::new();
    o.opt_u64("input", u.get(TokenField::Input))
        .opt_u64("output", u.get(TokenField::Output))
        .opt_u64("cache_read", u.get(TokenField::CacheRead))
        .opt_u64("cache_write", u.get(TokenField::CacheWrite))
        .opt_raw("tokens", u.tokens_sum().map(|t| sum.format(t).as_bytes()))
        .opt_u64("total_tokens", u.get(TokenField::TotalTokens))
        .opt_u64("reasoning", u.get(TokenField::Reasoning))
        .opt_u64("cache_write_1h", u.get(TokenField::CacheWrite1h))
        .opt_raw("cost", u.cost)
        .opt_bool("cost_from_provider", u.cost_from_provider);
}

impl Record for ToolCall<'_> {
    const TYPE: &'static str = "tool_call";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "call_id",
        "name",
        "namespace",
        "by_user",
        "arguments",
        "arguments_bytes",
        "status",
        "evidence",
        "stop_reason",
        "result",
        "result.line",
        "result.entry",
        "result.name",
        "result.text",
        "result.text_truncated",
        "result.bytes",
        "result.images",
        "result.image_types",
        "result.is_error",
        "result.exit_code",
        "result.details",
        "result.usage",
        "result.usage.input",
        "result.usage.output",
        "result.usage.cache_read",
        "result.usage.cache_write",
        "result.usage.tokens",
        "result.usage.total_tokens",
        "result.usage.reasoning",
        "result.usage.cache_write_1h",
        "result.usage.cost",
        "result.usage.cost_from_provider",
        "result.nested_calls",
        "result.nested_calls.count",
        "result.nested_calls.errors",
        "result.nested_calls.unfinished",
        "result.nested_calls.complete",
        "result.timestamp",
        "bash",
        "bash.cancelled",
        "bash.truncated",
        "bash.full_output_path",
        "bash.exclude_from_context",
        "duration_ms",
        "duration_from",
        "model",
        "provider",
        "timestamp",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        o.members(self.head)
            .u64("line", self.line)
            .opt_str("entry", self.entry)
            .opt_str("call_id", self.call_id)
            .opt_str("name", self.name);
        match (self.namespace, self.by_user) {
            // A model's call without a namespace, the most common: in one go.
            (None, false) => o.members(b",\"namespace\":null,\"by_user\":false"),
            (namespace, by_user) => o.opt_str("namespace", namespace).bool("by_user", by_user),
        };
        match self.arguments {
            Some(CallArguments::Recorded(raw)) => o.raw("arguments", raw),
            Some(CallArguments::Command(command)) => o.obj("arguments", |a| {
                a.raw("command", command.bytes());
            }),
            None => o.null("arguments"),
        };
        o.opt_u64("arguments_bytes", self.arguments_bytes)
            .str("status", self.status.name())
            .str("evidence", self.evidence.name())
            .opt_str("stop_reason", self.stop_reason);
        match &self.result {
            Some(r) => o.obj("result", |o| {
                o.u64("line", r.line).opt_str("entry", r.entry);
                write_result_facts(o, r.facts, self.options);
                o.opt_str("timestamp", r.timestamp);
            }),
            None => o.null("result"),
        };
        match &self.bash {
            Some(b) => o.obj("bash", |o| {
                o.opt_bool("cancelled", b.cancelled)
                    .opt_bool("truncated", b.truncated)
                    .opt_str("full_output_path", b.full_output_path.as_deref())
                    .opt_bool("exclude_from_context", b.exclude_from_context);
            }),
            None => o.null("bash"),
        };
        o.opt_i64("duration_ms", self.duration.map(|(ms, _)| ms))
            .opt_str("duration_from", self.duration.map(|(_, from)| from.name()))
            .opt_str("model", self.model)
            .opt_str("provider", self.provider)
            .opt_str("timestamp", self.timestamp);
    }
}

impl Record for ToolResult<'_> {
    const TYPE: &'static str = "tool_result";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "call_id",
        "status",
        "call_line",
        "call_entry",
        "first_result_line",
        "name",
        "text",
        "text_truncated",
        "bytes",
        "images",
        "image_types",
        "is_error",
        "exit_code",
        "details",
        "usage",
        "usage.input",
        "usage.output",
        "usage.cache_read",
        "usage.cache_write",
        "usage.tokens",
        "usage.total_tokens",
        "usage.reasoning",
        "usage.cache_write_1h",
        "usage.cost",
        "usage.cost_from_provider",
        "nested_calls",
        "nested_calls.count",
        "nested_calls.errors",
        "nested_calls.unfinished",
        "nested_calls.complete",
        "timestamp",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let dup = self.duplicate_of;
        o.members(self.head)
            .u64("line", self.line)
            .opt_str("entry", self.entry)
            .opt_str("call_id", self.facts.call_id.as_deref())
            .str("status", self.status.name())
            .opt_u64("call_line", dup.map(|a| a.call_line))
            .opt_str("call_entry", dup.and_then(|a| a.call_entry.as_deref()))
            .opt_u64("first_result_line", dup.map(|a| a.result_line));
        write_result_facts(o, self.facts, self.options);
        o.opt_str("timestamp", self.timestamp);
    }
}

/// The members every record of a session starts with after its type, `session` and `file`,
/// written once per session (with the comma before them, as [`Obj::members`] adds them):
/// two fewer keys and strings escaped per record.
pub(super) fn record_head(session: &str, file: &str) -> Box<[u8]> {
    let mut head = Vec::new();
    Obj::continued(&mut head)
        .opt_str("session", crate::reader::session_id(session))
        .str("file", file);
    head.into_boxed_slice()
}

/// Where pi-tools' records go, and what every record needs: the options, the output, the file
/// the waiting records are read again from (none from stdin) and its name.
pub(super) struct RecordWriter<'a, 'w> {
    pub(super) args: &'a Args,
    pub(super) out: &'a mut Out<'w>,
    pub(super) file: Option<&'a File>,
    pub(super) name: &'a str,
    /// A call's arguments, read again from the file.
    arguments_buf: Vec<u8>,
    /// How many more bytes of the waiting calls' arguments may be kept in memory rather than
    /// read again from the file ([`KeptBytes::keep_within`]).
    pub(super) arguments_budget: usize,
}

/// The bytes of waiting calls' arguments kept in memory given a FILE, at most: a call's result
/// mostly follows it within a few lines, so little is held; a session of calls that wait
/// long reads theirs again from the file beyond this.
const ARGUMENTS_IN_MEMORY: usize = 1 << 20;

impl<'a, 'w> RecordWriter<'a, 'w> {
    pub(super) fn new(
        args: &'a Args,
        out: &'a mut Out<'w>,
        file: Option<&'a File>,
        name: &'a str,
    ) -> RecordWriter<'a, 'w> {
        RecordWriter {
            args,
            out,
            file,
            name,
            arguments_buf: Vec::new(),
            arguments_budget: ARGUMENTS_IN_MEMORY,
        }
    }

    /// Ends the record just rendered into the output buffer, if one was.
    pub(super) fn emit(&mut self, wrote: bool) -> Result<(), Stop> {
        if wrote {
            self.out.end_line()
        } else {
            Ok(())
        }
    }

    /// Renders a record now, to be written later.
    fn held(&mut self, render: impl FnOnce(&mut Self) -> bool) -> WaitingRecord {
        let start = self.out.buf.len();
        let wrote = render(self);
        let mut bytes = self.out.buf.split_off(start);
        if wrote {
            bytes.push(b'\n');
        }
        WaitingRecord::Ready(bytes.into_boxed_slice())
    }

    /// The record of the current entry `e` (about `item`), as it waits behind others: given a
    /// FILE, made by `waiting` from where its record is on the line (read again when it is
    /// written; the line's blanks around it left out); from
    /// stdin, rendered now by `render` and held.
    pub(super) fn deferred<T>(
        &mut self,
        head: &[u8],
        e: &Entry<'_>,
        item: T,
        waiting: impl FnOnce(T, KeptBytes) -> WaitingRecord,
        render: impl FnOnce(&mut Self, &[u8], &T) -> bool,
    ) -> WaitingRecord {
        match self.file {
            Some(file) => waiting(item, KeptBytes::keep(Some(file), e, e.object.bytes())),
            None => self.held(|w| render(w, head, &item)),
        }
    }

    /// Renders a tool_call record into the output buffer (without its newline); false when
    /// the filters leave it out.
    pub(super) fn render_call(
        &mut self,
        head: &[u8],
        c: &PendingCall,
        result: Option<Answer<'_>>,
        d: &mut Diags,
    ) -> bool {
        if let Some(kept) = &c.arguments {
            // Rendered once, now: what its arguments took of the budget is free again.
            kept.give_back(self.file, &mut self.arguments_budget);
        }
        let facts = result.as_ref().map(|r| &r.facts);
        let (status, evidence) = call_verdict(facts, c.turn.aborted());
        if !self.args.wanted(c.name(), status) {
            return false;
        }
        let arguments = match &c.arguments {
            // Copied from the line the scanner accepted.
            Some(KeptBytes::Mem(b)) => Some(&b[..]),
            Some(kept) => match fetch(self.file, kept, &mut self.arguments_buf, d) {
                // Read again from the file: recorded only when it is still one JSON value.
                Some(r) => {
                    let value = json::value_at(r, 0).ok().filter(|v| v.len() == r.len());
                    if value.is_none() {
                        changed(d, c.turn.line);
                    }
                    value.map(Raw::bytes)
                }
                None => None,
            },
            None => None,
        };
        let t = &c.turn;
        let duration = result
            .as_ref()
            .and_then(|r| call_duration(r.facts.duration_ms, t.calls, t.ms, r.stamp.ms));
        let result = result.as_ref().map(|r| JoinedResult {
            line: r.no,
            entry: r.stamp.id.as_deref(),
            facts: &r.facts,
            timestamp: r.stamp.timestamp.as_deref(),
        });
        ToolCall {
            head,
            line: t.line,
            entry: t.entry.as_deref(),
            call_id: c.id(),
            name: c.name(),
            namespace: c.namespace(),
            by_user: false,
            arguments: arguments.map(CallArguments::Recorded),
            arguments_bytes: c.arguments_bytes,
            status,
            evidence,
            stop_reason: t.stop_reason(),
            duration,
            result,
            bash: None,
            model: t.model(),
            provider: t.provider(),
            timestamp: t.timestamp(),
            options: self.args,
        }
        .write_to(&mut self.out.buf);
        true
    }

    /// Renders the tool_call record of a bashExecution, as [`Self::render_call`].
    pub(super) fn render_bash(&mut self, head: &[u8], line: MessageLine<'_>) -> bool {
        let m = &line.msg;
        let exit_code = m.exit_code.and_then(as_i64);
        let cancelled = m.cancelled.and_then(Raw::as_bool);
        let (status, evidence) = bash_verdict(exit_code, cancelled);
        if !self.args.wanted(Some("bash"), status) {
            return false;
        }
        let command = m.command.filter(|c| c.first() == Some(&b'"'));
        let facts = ResultFacts::of_bash(m, exit_code, self.args, line.utf8);
        ToolCall {
            head,
            line: line.no,
            entry: line.stamp.id.as_deref(),
            call_id: None,
            name: Some("bash"),
            namespace: None,
            by_user: true,
            arguments: command
                .filter(|_| !self.args.no_content)
                .map(CallArguments::Command),
            // The size of {"command":…} as pi-tools writes it.
            arguments_bytes: command.map(|c| c.len() as u64 + 12),
            status,
            evidence,
            stop_reason: None,
            result: Some(JoinedResult {
                line: line.no,
                entry: line.stamp.id.as_deref(),
                facts: &facts,
                timestamp: line.stamp.timestamp.as_deref(),
            }),
            bash: Some(BashRun::read(m, cancelled)),
            duration: None,
            model: None,
            provider: None,
            timestamp: line.stamp.timestamp.as_deref(),
            options: self.args,
        }
        .write_to(&mut self.out.buf);
        true
    }

    /// Renders a tool_result record (orphan or duplicate), as [`Self::render_call`].
    pub(super) fn render_result(
        &mut self,
        head: &[u8],
        answer: Answer<'_>,
        dup: Option<&DuplicateOf>,
    ) -> bool {
        let status = if dup.is_some() {
            CallStatus::Duplicate
        } else {
            CallStatus::Orphan
        };
        let facts = &answer.facts;
        if !self.args.wanted(facts.name.as_deref(), status) {
            return false;
        }
        ToolResult {
            head,
            line: answer.no,
            entry: answer.stamp.id.as_deref(),
            status,
            duplicate_of: dup,
            facts,
            timestamp: answer.stamp.timestamp.as_deref(),
            options: self.args,
        }
        .write_to(&mut self.out.buf);
        true
    }
}
