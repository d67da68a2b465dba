//! pi-tools: one record per tool call, joined to its result.
//!
//! An assistant message holds `toolCall` blocks (`id`, `name`, `arguments`); each result is a
//! later `toolResult` message naming the call in `toolCallId`. A user's `!cmd` is a
//! `bashExecution` message: call and result in one entry. pi-tools joins each call to its
//! result within its session and says, with the evidence, whether it went well.
//!
//! Streaming: records wait in a queue in input order; a record is written as soon as it and
//! every record before it are settled (answered, closed, or the session ended). Given a FILE,
//! a waiting record costs its ids and byte offsets: its arguments and result are read again
//! from the file when it is written. From stdin, a settled record that must wait is rendered
//! at once and held as bytes.

use crate::cli::{Inputs, ManPage};
use crate::diag::{Diags, Kind};
use crate::hash::{self, Hash128Map};
use crate::input::{self, Source};
use crate::json;
use crate::model::Message;
use crate::output::{self, Obj, Out, Stop};
use crate::reader::{self, Entry, Header, Visitor};
use crate::tool::Tool;
use clap::{Parser, ValueEnum};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::process::ExitCode;
use std::rc::Rc;

pub const MAN: ManPage = ManPage {
    name: "pi-tools",
    summary: "join every tool call in Pi sessions to its result",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: include_str!("man/environment.txt"),
    examples: &[
        ("pi-tools session.jsonl | jq -r 'select(.status==\"error\") | [.name, .evidence] | @tsv'", "Which calls failed, and why."),
        ("pi-branch session.jsonl | pi-tools --errors", "Failed calls of the kept conversation only."),
        ("pi-tools --no-content --name bash ~/.pi/agent/sessions/*/*.jsonl | jq -s 'group_by(.status) | map({status: .[0].status, n: length})'", "Bash outcomes across sessions, without reading anyone's output."),
        ("pi-tools --max-text 200 --status no_result session.jsonl", "Calls that never got a result."),
        ("pi-tools session.jsonl | jq 'select(.duration_ms > 60000) | {name, duration_ms}'", "Slow tools."),
    ],
};

/// The status values of records, as written and as --status takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Status {
    /// A result exists and nothing says the call failed.
    #[value(name = "ok")]
    Ok,
    /// isError, a non-zero exit code, or an aborted turn without a result.
    #[value(name = "error")]
    Error,
    /// No result in the input.
    #[value(name = "no_result")]
    NoResult,
    /// A tool_result whose call is not in the input.
    #[value(name = "orphan")]
    Orphan,
    /// A second tool_result for one call.
    #[value(name = "duplicate")]
    Duplicate,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::NoResult => "no_result",
            Status::Orphan => "orphan",
            Status::Duplicate => "duplicate",
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "pi-tools",
    version,
    about = "Join every tool call in Pi sessions to its result: one record per call, with status and evidence.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Leave out arguments, result text and details (sizes, status and exit codes stay).
    #[arg(long)]
    pub no_content: bool,

    /// Cut result text to at most N characters (text_truncated says when it was cut).
    #[arg(long, value_name = "N")]
    pub max_text: Option<usize>,

    /// Only records of the tool named NAME (repeatable: any of them).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,

    /// Only records with this status (repeatable: any of them).
    #[arg(long = "status", value_enum, value_name = "STATUS")]
    pub statuses: Vec<Status>,

    /// Only failed calls: the same as --status error.
    #[arg(long)]
    pub errors: bool,
}

impl Args {
    fn wanted(&self, name: Option<&str>, status: Status) -> bool {
        let status_ok = (self.statuses.is_empty() && !self.errors)
            || self.statuses.contains(&status)
            || (self.errors && status == Status::Error);
        let name_ok =
            self.names.is_empty() || name.is_some_and(|n| self.names.iter().any(|w| w == n));
        status_ok && name_ok
    }

    /// Whether a call of this name can be written at all (else its payload need not be kept).
    fn name_wanted(&self, name: Option<&str>) -> bool {
        self.names.is_empty() || name.is_some_and(|n| self.names.iter().any(|w| w == n))
    }
}

/// tools: the tool.
pub struct Tools;

impl Tool for Tools {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        input::run(
            "pi-tools",
            &sources,
            args.inputs.threads(),
            |src, out, d| tools_source(args, src, out, d),
            |_, _| Ok(()),
        )
    }

    /// Runs pi-tools over `input` as if it came on stdin (for tests and fuzzing).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let mut v = Joiner::new(args, out, None, "<stdin>");
        reader::read(input, false, d, &mut v)?;
        Ok(())
    }
}

fn tools_source(args: &Args, src: &Source, out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
    let Some(input) = input::Opened::open(src, d) else {
        return Ok(());
    };
    let name = src.name();
    let mut v = Joiner::new(args, out, input.file(), &name);
    input.read(d, &mut v)?;
    Ok(())
}

/// Bytes kept for later: in memory (stdin), or where they are in the file.
enum Blob {
    Mem(Box<[u8]>),
    At { offset: u64, len: u64 },
}

/// What the calls of one assistant entry share.
struct Turn {
    line: u64,
    entry: Option<Rc<str>>,
    timestamp: Option<Box<str>>,
    ms: Option<i64>,
    model: Option<Box<str>>,
    provider: Option<Box<str>>,
    stop_reason: Option<Box<str>>,
}

impl Turn {
    fn aborted(&self) -> bool {
        matches!(self.stop_reason.as_deref(), Some("aborted" | "error"))
    }
}

/// One toolCall block, waiting for its record to be written.
struct Call {
    turn: Rc<Turn>,
    id: Option<Box<str>>,
    name: Option<Box<str>>,
    /// `None` when the block has no arguments or they are not written (--no-content, --name).
    args: Option<Blob>,
    args_bytes: Option<u64>,
    /// The result, once it arrived.
    result: Res,
}

enum Res {
    /// A result may still come.
    Waiting,
    /// No result can join this call any more (a later call took its id).
    Closed,
    /// The line of the result.
    Got(u64, Blob),
}

/// A record waiting for its turn to be written.
enum Slot {
    Call(Call),
    /// A bashExecution entry (line number, the line).
    Bash(u64, Blob),
    /// An orphan or duplicate toolResult (line number, the line, the call it duplicates).
    Result(u64, Blob, Option<Answered>),
    /// A record already rendered, with its newline (empty when the filters left it out).
    /// From stdin, records that wait behind an unanswered call are kept this way.
    Ready(Box<[u8]>),
}

struct Answered {
    call_line: u64,
    call_entry: Option<Rc<str>>,
    result_line: u64,
}

struct Session {
    id: String,
    queue: VecDeque<Slot>,
    /// Sequence number of `queue[0]`.
    base: u64,
    /// Call id (its [`hash::hash128`]) → the latest call with that id: the only one a result
    /// can join. Kept for the whole session, so kept small.
    latest: Hash128Map<Latest>,
}

struct Latest {
    /// Its sequence number in the queue.
    seq: u64,
    call_line: u64,
    /// The line of its result once it has one, else 0 (lines count from 1).
    result_line: u64,
    /// Shared with the call's other records.
    call_entry: Option<Rc<str>>,
}

struct Joiner<'a, 'w> {
    args: &'a Args,
    out: &'a mut Out<'w>,
    file: Option<&'a File>,
    name: &'a str,
    s: Option<Session>,
    buf_a: Vec<u8>,
    buf_b: Vec<u8>,
}

/// The parts of an entry a record needs, from the reader or from a line read again.
struct Line<'a> {
    no: u64,
    entry: Option<Cow<'a, str>>,
    timestamp: Option<Cow<'a, str>>,
    msg: Message<'a>,
}

impl<'a> Line<'a> {
    fn from_entry(e: &Entry<'a>, msg: Message<'a>) -> Line<'a> {
        Line {
            no: e.line.no,
            entry: e.str("id"),
            timestamp: e.str("timestamp"),
            msg,
        }
    }

    /// Scans a whole entry line again; `None` when it is not the object it was.
    fn parse(no: u64, bytes: &'a [u8]) -> Option<Line<'a>> {
        let (mut id, mut ts, mut msg) = (None, None, None);
        let end = json::scan_object(bytes, 0, |k, v| {
            if json::key_is(k, "id") {
                id = Some(v);
            } else if json::key_is(k, "timestamp") {
                ts = Some(v);
            } else if json::key_is(k, "message") {
                msg = Some(v);
            }
        })
        .ok()?;
        (end == bytes.len()).then_some(())?;
        Some(Line {
            no,
            entry: id.and_then(json::as_str),
            timestamp: ts.and_then(json::as_str),
            msg: Message::read(msg?),
        })
    }
}

/// Whether a raw value is the JSON string `s` (escapes decoded).
fn is_str(raw: Option<&[u8]>, s: &str) -> bool {
    raw.and_then(json::as_str).is_some_and(|v| v == s)
}

fn boxed(c: Option<Cow<'_, str>>) -> Option<Box<str>> {
    c.map(|c| c.into())
}

impl<'a, 'w> Joiner<'a, 'w> {
    fn new(
        args: &'a Args,
        out: &'a mut Out<'w>,
        file: Option<&'a File>,
        name: &'a str,
    ) -> Joiner<'a, 'w> {
        Joiner {
            args,
            out,
            file,
            name,
            s: None,
            buf_a: Vec::new(),
            buf_b: Vec::new(),
        }
    }

    /// Keeps `bytes` (a slice of the current line `e`) for later.
    fn keep(&self, e: &Entry<'_>, bytes: &[u8]) -> Blob {
        match self.file {
            Some(_) => Blob::At {
                offset: e.line.offset + (bytes.as_ptr() as u64 - e.line.bytes.as_ptr() as u64),
                len: bytes.len() as u64,
            },
            None => Blob::Mem(bytes.into()),
        }
    }

    fn assistant(&mut self, e: &Entry<'_>, msg: Message<'_>, d: &mut Diags) -> Result<(), Stop> {
        let Some(content) = msg.content else {
            return Ok(());
        };
        let mut turn: Option<Rc<Turn>> = None;
        let mut blocks: Vec<&[u8]> = Vec::new();
        json::for_each_element(content, |b| {
            if is_str(json::get(b, "type"), "toolCall") {
                blocks.push(b);
            }
        });
        for b in blocks {
            let turn = turn
                .get_or_insert_with(|| {
                    let timestamp = e.str("timestamp");
                    Rc::new(Turn {
                        line: e.line.no,
                        entry: e.str("id").map(|i| Rc::from(&*i)),
                        ms: timestamp.as_deref().and_then(crate::time::parse_iso8601),
                        timestamp: boxed(timestamp),
                        model: boxed(msg.model.and_then(json::as_str)),
                        provider: boxed(msg.provider.and_then(json::as_str)),
                        stop_reason: boxed(msg.stop_reason.and_then(json::as_str)),
                    })
                })
                .clone();
            let (mut id, mut name, mut arguments): (_, _, Option<&[u8]>) = (None, None, None);
            json::for_each_field(b, |k, v| {
                if json::key_is(k, "id") {
                    id = Some(v);
                } else if json::key_is(k, "name") {
                    name = Some(v);
                } else if json::key_is(k, "arguments") {
                    arguments = Some(v);
                }
            });
            let arguments = arguments.filter(|a| *a != b"null");
            let id_str = id.and_then(json::as_str);
            if id_str.is_none() {
                let what = id.map_or("no id", |_| "an id that is not a string");
                d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!("a toolCall block with {what}: it cannot be joined to a result"),
                );
            }
            let name = boxed(name.and_then(json::as_str));
            let keep_args = !self.args.no_content && self.args.name_wanted(name.as_deref());
            let call = Call {
                turn,
                id: boxed(id_str),
                name,
                args: arguments.filter(|_| keep_args).map(|a| self.keep(e, a)),
                args_bytes: arguments.map(|a| a.len() as u64),
                result: Res::Waiting,
            };
            let s = self.s.as_mut().expect("in a session");
            if let Some(id) = &call.id {
                let latest = Latest {
                    seq: s.base + s.queue.len() as u64,
                    call_line: call.turn.line,
                    call_entry: call.turn.entry.clone(),
                    result_line: 0,
                };
                if let Some(old) = s.latest.insert(hash::hash128(id.as_bytes()), latest) {
                    // The earlier call with this id can no longer be joined.
                    if old.result_line == 0 && old.seq >= s.base {
                        if let Some(Slot::Call(c)) = s.queue.get_mut((old.seq - s.base) as usize) {
                            c.result = Res::Closed;
                        }
                    }
                }
            }
            s.queue.push_back(Slot::Call(call));
        }
        // A call closed above may have been the one holding the queue.
        self.drain(d)
    }

    fn tool_result(&mut self, e: &Entry<'_>, msg: Message<'_>, d: &mut Diags) -> Result<(), Stop> {
        let raw_id = msg.tool_call_id;
        let id = raw_id.and_then(json::as_str);
        if id.is_none() {
            let what = raw_id.map_or("no toolCallId", |_| "a toolCallId that is not a string");
            d.report(
                Some(e.line.no),
                Kind::BadField,
                format!("a toolResult with {what}: reported as an orphan"),
            );
        }
        let s = self.s.as_mut().expect("in a session");
        let mut dup = None;
        let key = id.as_deref().map(|id| hash::hash128(id.as_bytes()));
        if let Some(l) = key.and_then(|k| s.latest.get_mut(&k)) {
            if l.result_line != 0 {
                dup = Some(Answered {
                    call_line: l.call_line,
                    call_entry: l.call_entry.clone(),
                    result_line: l.result_line,
                });
            } else {
                l.result_line = e.line.no;
                let at = (l.seq - s.base) as usize;
                let taken = s
                    .queue
                    .get_mut(at)
                    .map(|slot| std::mem::replace(slot, Slot::Ready(Box::default())));
                let Some(Slot::Call(call)) = taken else {
                    unreachable!("the latest call with an id waits in the queue")
                };
                let line = Line::from_entry(e, msg);
                if at == 0 {
                    s.queue.pop_front();
                    s.base += 1;
                    let wrote = self.render_call(&call, Some(line), d);
                    self.emit(wrote)?;
                    return self.drain(d);
                }
                let slot = match self.file {
                    Some(_) => Slot::Call(Call {
                        result: Res::Got(e.line.no, self.keep(e, e.line.bytes)),
                        ..call
                    }),
                    None => self.held(|j| j.render_call(&call, Some(line), d)),
                };
                if let Some(s) = self.s.as_mut() {
                    s.queue[at] = slot;
                }
                return Ok(());
            }
        }
        let line = Line::from_entry(e, msg);
        if s.queue.is_empty() {
            let wrote = self.render_result(line, dup.as_ref());
            return self.emit(wrote);
        }
        let slot = match self.file {
            Some(_) => Slot::Result(e.line.no, self.keep(e, e.line.bytes), dup),
            None => self.held(|j| j.render_result(line, dup.as_ref())),
        };
        self.push(slot);
        Ok(())
    }

    fn bash(&mut self, e: &Entry<'_>, msg: Message<'_>) -> Result<(), Stop> {
        let line = Line::from_entry(e, msg);
        if self.s.as_ref().is_some_and(|s| s.queue.is_empty()) {
            let wrote = self.render_bash(line);
            return self.emit(wrote);
        }
        let slot = match self.file {
            Some(_) => Slot::Bash(e.line.no, self.keep(e, e.line.bytes)),
            None => self.held(|j| j.render_bash(line)),
        };
        self.push(slot);
        Ok(())
    }

    fn push(&mut self, slot: Slot) {
        if let Some(s) = self.s.as_mut() {
            s.queue.push_back(slot);
        }
    }

    /// Ends the record just rendered into the output buffer, if one was.
    fn emit(&mut self, wrote: bool) -> Result<(), Stop> {
        if wrote {
            self.out.end_line()
        } else {
            Ok(())
        }
    }

    /// Renders a record now, to be written later.
    fn held(&mut self, render: impl FnOnce(&mut Self) -> bool) -> Slot {
        let start = self.out.buf.len();
        let wrote = render(self);
        let mut bytes = self.out.buf.split_off(start);
        if wrote {
            bytes.push(b'\n');
        }
        Slot::Ready(bytes.into_boxed_slice())
    }

    /// Writes the records at the front of the queue that are settled.
    fn drain(&mut self, d: &mut Diags) -> Result<(), Stop> {
        loop {
            let Some(s) = self.s.as_mut() else {
                return Ok(());
            };
            match s.queue.front() {
                Some(Slot::Call(Call {
                    result: Res::Waiting,
                    ..
                })) => return Ok(()),
                None => return Ok(()),
                _ => {}
            }
            let slot = s.queue.pop_front().expect("not empty");
            s.base += 1;
            self.write_slot(slot, d)?;
        }
    }

    fn write_slot(&mut self, slot: Slot, d: &mut Diags) -> Result<(), Stop> {
        match slot {
            Slot::Ready(bytes) if bytes.is_empty() => Ok(()),
            Slot::Ready(bytes) => self.out.raw(&bytes),
            Slot::Call(call) => match &call.result {
                Res::Waiting | Res::Closed => {
                    let wrote = self.render_call(&call, None, d);
                    self.emit(wrote)
                }
                Res::Got(no, blob) => {
                    self.again(*no, blob, d, |j, line, d| j.render_call(&call, line, d))
                }
            },
            Slot::Bash(no, blob) => self.again(no, &blob, d, |j, line, _| {
                line.is_some_and(|l| j.render_bash(l))
            }),
            Slot::Result(no, blob, dup) => self.again(no, &blob, d, |j, line, _| {
                line.is_some_and(|l| j.render_result(l, dup.as_ref()))
            }),
        }
    }

    /// Reads a kept line again and renders its record with `f` (given `None` when the line
    /// cannot be read as it was).
    fn again(
        &mut self,
        no: u64,
        blob: &Blob,
        d: &mut Diags,
        f: impl FnOnce(&mut Self, Option<Line<'_>>, &mut Diags) -> bool,
    ) -> Result<(), Stop> {
        let mut buf = std::mem::take(&mut self.buf_b);
        let line = match fetch(self.file, blob, &mut buf, d) {
            Some(bytes) => {
                let line = Line::parse(no, bytes);
                if line.is_none() {
                    changed(d, no);
                }
                line
            }
            None => None,
        };
        let wrote = f(self, line, d);
        self.buf_b = buf;
        self.emit(wrote)
    }

    /// Renders a tool_call record into the output buffer (without its newline); false when
    /// the filters leave it out.
    fn render_call(&mut self, c: &Call, result: Option<Line<'_>>, d: &mut Diags) -> bool {
        let s = self.s.as_ref().expect("in a session");
        let facts = result
            .as_ref()
            .map(|r| ResultFacts::read(&r.msg, self.args));
        let (status, evidence) = match &facts {
            Some(f) => f.verdict(),
            None if c.turn.aborted() => (Status::Error, "aborted_turn"),
            None => (Status::NoResult, "no_result"),
        };
        if !self.args.wanted(c.name.as_deref(), status) {
            return false;
        }
        let args = match &c.args {
            Some(blob) => {
                let raw = fetch(self.file, blob, &mut self.buf_a, d);
                match raw {
                    Some(r) if json::skip_value(r, 0).ok() == Some(r.len()) => Some(r),
                    Some(_) => {
                        changed(d, c.turn.line);
                        None
                    }
                    None => None,
                }
            }
            None => None,
        };
        let duration = result.as_ref().and_then(|r| {
            let end = r
                .timestamp
                .as_deref()
                .and_then(crate::time::parse_iso8601)?;
            let start = c.turn.ms?;
            (end >= start).then_some(end - start)
        });
        let t = &c.turn;
        let mut rec = self.out.record("tool_call");
        rec.str("session", &s.id)
            .str("file", self.name)
            .u64("line", t.line)
            .opt_str("entry", t.entry.as_deref())
            .opt_str("call_id", c.id.as_deref())
            .opt_str("name", c.name.as_deref())
            .bool("by_user", false)
            .opt_raw("arguments", args)
            .opt_u64("arguments_bytes", c.args_bytes)
            .str("status", status.name())
            .str("evidence", evidence)
            .opt_str("stop_reason", t.stop_reason.as_deref());
        match (&result, &facts) {
            (Some(r), Some(f)) => {
                rec.obj("result", |o| {
                    o.u64("line", r.no).opt_str("entry", r.entry.as_deref());
                    f.write(o, self.args);
                    o.opt_str("timestamp", r.timestamp.as_deref());
                });
            }
            _ => {
                rec.null("result");
            }
        }
        rec.null("bash")
            .opt_i64("duration_ms", duration)
            .opt_str("model", t.model.as_deref())
            .opt_str("provider", t.provider.as_deref())
            .opt_str("timestamp", t.timestamp.as_deref())
            .end();
        true
    }

    /// Renders the tool_call record of a bashExecution, as [`Self::render_call`].
    fn render_bash(&mut self, line: Line<'_>) -> bool {
        let s = self.s.as_ref().expect("in a session");
        let a = self.args;
        let m = &line.msg;
        let (command, output, exit, truncated, excl) = (
            m.command,
            m.output,
            m.exit_code,
            m.truncated,
            m.exclude_from_context,
        );
        let full = m.full_output_path;
        let cancelled = m.cancelled;
        let exit_code = exit.and_then(as_i64);
        let cancelled = cancelled.and_then(json::as_bool);
        let (status, evidence) = match (exit_code, cancelled) {
            (Some(n), _) if n != 0 => (Status::Error, "exit_code"),
            (_, Some(true)) => (Status::Ok, "cancelled"),
            (Some(_), _) => (Status::Ok, "exit_code"),
            (None, _) => (Status::Ok, "result"),
        };
        if !a.wanted(Some("bash"), status) {
            return false;
        }
        let text = output.and_then(|o| Text::of_string(o, a));
        let full = full.and_then(json::as_str);
        let mut rec = self.out.record("tool_call");
        rec.str("session", &s.id)
            .str("file", self.name)
            .u64("line", line.no)
            .opt_str("entry", line.entry.as_deref())
            .null("call_id")
            .str("name", "bash")
            .bool("by_user", true);
        match command {
            Some(c) if !a.no_content && c.first() == Some(&b'"') => {
                rec.obj("arguments", |o| {
                    o.raw("command", c);
                });
            }
            _ => {
                rec.null("arguments");
            }
        }
        // The size of {"command":…} as pi-tools writes it.
        rec.opt_u64(
            "arguments_bytes",
            command
                .filter(|c| c.first() == Some(&b'"'))
                .map(|c| c.len() as u64 + 12),
        )
        .str("status", status.name())
        .str("evidence", evidence)
        .null("stop_reason")
        .obj("result", |o| {
            o.u64("line", line.no)
                .opt_str("entry", line.entry.as_deref())
                .str("name", "bash");
            write_text(o, text.as_ref(), a);
            o.u64("images", 0)
                .arr("image_types", |_| {})
                .null("is_error")
                .opt_i64("exit_code", exit_code)
                .null("details")
                .opt_str("timestamp", line.timestamp.as_deref());
        })
        .obj("bash", |o| {
            o.opt_bool("cancelled", cancelled)
                .opt_bool("truncated", truncated.and_then(json::as_bool))
                .opt_str("full_output_path", full.as_deref())
                .opt_bool("exclude_from_context", excl.and_then(json::as_bool));
        })
        .null("duration_ms")
        .null("model")
        .null("provider")
        .opt_str("timestamp", line.timestamp.as_deref())
        .end();
        true
    }

    /// Renders a tool_result record (orphan or duplicate), as [`Self::render_call`].
    fn render_result(&mut self, line: Line<'_>, dup: Option<&Answered>) -> bool {
        let s = self.s.as_ref().expect("in a session");
        let status = if dup.is_some() {
            Status::Duplicate
        } else {
            Status::Orphan
        };
        let f = ResultFacts::read(&line.msg, self.args);
        if !self.args.wanted(f.name.as_deref(), status) {
            return false;
        }
        let mut rec = self.out.record("tool_result");
        rec.str("session", &s.id)
            .str("file", self.name)
            .u64("line", line.no)
            .opt_str("entry", line.entry.as_deref())
            .opt_str("call_id", f.call_id.as_deref())
            .str("status", status.name())
            .opt_u64("call_line", dup.map(|a| a.call_line))
            .opt_str("call_entry", dup.and_then(|a| a.call_entry.as_deref()))
            .opt_u64("first_result_line", dup.map(|a| a.result_line));
        f.write(&mut rec, self.args);
        rec.opt_str("timestamp", line.timestamp.as_deref()).end();
        true
    }
}

/// A re-read line or value is not what the first read saw.
fn changed(d: &mut Diags, line: u64) {
    d.report(
        Some(line),
        Kind::Io,
        "the file changed while it was read: this line reads differently now; its content is left out",
    );
}

/// The bytes of a blob: the kept ones, or read again from the file into `buf`.
fn fetch<'b>(
    file: Option<&File>,
    blob: &'b Blob,
    buf: &'b mut Vec<u8>,
    d: &mut Diags,
) -> Option<&'b [u8]> {
    match blob {
        Blob::Mem(b) => Some(b),
        Blob::At { offset, len } => {
            let f = file?;
            buf.clear();
            buf.resize(*len as usize, 0);
            match f.read_exact_at(buf, *offset) {
                Ok(()) => Some(&buf[..]),
                Err(e) => {
                    d.report(
                        None,
                        Kind::Io,
                        format!("reading the file again failed (did it shrink?): {e}"),
                    );
                    None
                }
            }
        }
    }
}

/// A JSON number that is an integer (negative ones included).
fn as_i64(raw: &[u8]) -> Option<i64> {
    if let Ok(s) = std::str::from_utf8(raw) {
        if let Ok(n) = s.parse::<i64>() {
            return Some(n);
        }
    }
    let f = json::as_f64(raw)?;
    (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
}

/// What a toolResult message says.
struct ResultFacts<'a> {
    call_id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    is_error: Option<bool>,
    exit_code: Option<i64>,
    /// `None` when absent or left out (--no-content).
    details: Option<&'a [u8]>,
    /// `None` when the message has no content.
    text: Option<Text<'a>>,
    images: u64,
    image_types: Vec<Option<Cow<'a, str>>>,
}

impl<'a> ResultFacts<'a> {
    fn read(m: &Message<'a>, args: &Args) -> ResultFacts<'a> {
        let (call_id, name, content, is_error, details) = (
            m.tool_call_id,
            m.tool_name,
            m.content,
            m.is_error,
            m.details,
        );
        let exit_code = details.and_then(|d| {
            json::get(d, "exitCode")
                .and_then(as_i64)
                .or_else(|| json::get(d, "exit_code").and_then(as_i64))
        });
        let mut images = 0;
        let mut image_types = Vec::new();
        let text = content.and_then(|c| {
            if let Some(t) = Text::of_string(c, args) {
                return Some(t);
            }
            if c.first() != Some(&b'[') {
                return None;
            }
            let mut parts = Vec::new();
            json::for_each_element(c, |b| {
                let (mut kind, mut t, mut mime) = (None, None, None);
                json::for_each_field(b, |k, v| {
                    if json::key_is(k, "type") {
                        kind = Some(v);
                    } else if json::key_is(k, "text") {
                        t = Some(v);
                    } else if json::key_is(k, "mimeType") {
                        mime = Some(v);
                    }
                });
                match kind.and_then(json::as_str).as_deref() {
                    Some("text") => {
                        if let Some(t) = t.and_then(string_body) {
                            parts.push(t);
                        }
                    }
                    Some("image") => {
                        images += 1;
                        image_types.push(mime.and_then(json::as_str));
                    }
                    _ => {}
                }
            });
            Some(Text::of(parts, args))
        });
        ResultFacts {
            call_id: call_id.and_then(json::as_str),
            name: name.and_then(json::as_str),
            is_error: is_error.and_then(json::as_bool),
            exit_code,
            details: details.filter(|d| !args.no_content && *d != b"null"),
            text,
            images,
            image_types,
        }
    }

    fn verdict(&self) -> (Status, &'static str) {
        if self.is_error == Some(true) {
            (Status::Error, "is_error")
        } else {
            match self.exit_code {
                Some(0) => (Status::Ok, "exit_code"),
                Some(_) => (Status::Error, "exit_code"),
                None => (Status::Ok, "result"),
            }
        }
    }

    /// The result fields shared by tool_call.result and tool_result.
    fn write(&self, o: &mut Obj<'_>, a: &Args) {
        o.opt_str("name", self.name.as_deref());
        write_text(o, self.text.as_ref(), a);
        o.u64("images", self.images)
            .arr("image_types", |arr| {
                for t in &self.image_types {
                    match t {
                        Some(t) => arr.str(t),
                        None => arr.raw(b"null"),
                    }
                }
            })
            .opt_bool("is_error", self.is_error)
            .opt_i64("exit_code", self.exit_code)
            .opt_raw("details", self.details);
    }
}

/// The text between the quotes of a raw JSON string value.
fn string_body(raw: &[u8]) -> Option<&[u8]> {
    (raw.len() >= 2 && raw[0] == b'"').then(|| &raw[1..raw.len() - 1])
}

/// A result's text: the text blocks (or the string content) joined by newlines.
enum Text<'a> {
    /// The JSON string bodies of the parts, each already escaped as the output escapes (see
    /// [`output::escaped_as_written`]): written as they are, never decoded. `bytes` is the
    /// length of the joined text.
    Escaped { parts: Vec<&'a [u8]>, bytes: u64 },
    /// The joined text, decoded.
    Decoded(String),
}

impl<'a> Text<'a> {
    /// The text of `parts` (string bodies); kept escaped when every part is written as the
    /// output would write it and --max-text cannot cut it (its characters are at most its
    /// escaped bytes).
    fn of(parts: Vec<&'a [u8]>, a: &Args) -> Text<'a> {
        let newlines = parts.len().saturating_sub(1);
        let escaped_len = parts.iter().map(|p| p.len()).sum::<usize>() + newlines;
        if a.max_text.map_or(true, |max| escaped_len <= max) {
            let lens: Option<Vec<usize>> = parts
                .iter()
                .map(|p| output::escaped_as_written(p))
                .collect();
            if let Some(lens) = lens {
                let bytes = (lens.iter().sum::<usize>() + newlines) as u64;
                return Text::Escaped { parts, bytes };
            }
        }
        let mut text = String::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&json::decode_string_body(p));
        }
        Text::Decoded(text)
    }

    /// The text of a raw JSON value, when it is a string.
    fn of_string(raw: &'a [u8], a: &Args) -> Option<Text<'a>> {
        string_body(raw).map(|b| Text::of(vec![b], a))
    }

    /// The length of the text in bytes (UTF-8).
    fn bytes(&self) -> u64 {
        match self {
            Text::Escaped { bytes, .. } => *bytes,
            Text::Decoded(t) => t.len() as u64,
        }
    }
}

/// `text`, `text_truncated` and `bytes` of a result text.
fn write_text(o: &mut Obj<'_>, text: Option<&Text<'_>>, a: &Args) {
    if a.no_content {
        o.null("text").bool("text_truncated", false);
    } else {
        match text {
            None => {
                o.null("text").bool("text_truncated", false);
            }
            Some(Text::Escaped { parts, .. }) => {
                o.escaped_lines("text", parts).bool("text_truncated", false);
            }
            Some(Text::Decoded(t)) => match a.max_text.and_then(|max| t.char_indices().nth(max)) {
                Some((cut, _)) => {
                    o.str("text", &t[..cut]).bool("text_truncated", true);
                }
                None => {
                    o.str("text", t).bool("text_truncated", false);
                }
            },
        }
    }
    o.opt_u64("bytes", text.map(Text::bytes));
}

impl Visitor for Joiner<'_, '_> {
    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<(), Stop> {
        self.s = Some(Session {
            id: h.id.clone(),
            queue: VecDeque::new(),
            base: 0,
            latest: Hash128Map::default(),
        });
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        if !is_str(e.get("type"), "message") {
            return Ok(());
        }
        let Some(msg) = e.message() else {
            return Ok(());
        };
        match msg.role.and_then(json::as_str).as_deref() {
            Some("assistant") => self.assistant(e, msg, d),
            Some("toolResult") => self.tool_result(e, msg, d),
            Some("bashExecution") => self.bash(e, msg),
            _ => Ok(()),
        }
    }

    fn end(&mut self, d: &mut Diags) -> Result<(), Stop> {
        while let Some(slot) = self.s.as_mut().and_then(|s| s.queue.pop_front()) {
            self.write_slot(slot, d)?;
        }
        self.s = None;
        Ok(())
    }
}
