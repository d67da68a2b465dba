//! pi-compactions: one record per compaction — what Pi recorded, and why we think it happened.
//!
//! Pi persists the finished `compaction` entry (summary, firstKeptEntryId, tokensBefore,
//! details, fromHook) but not the lifecycle around it: no start or end event, no durable
//! failure event, no retries, no trigger. The trigger is therefore *recorded* only when an
//! extension wrote it into `details`; otherwise it is *inferred* from the clues Pi does leave
//! (the assistant message right before, `tokensBefore` against the configured window), each
//! listed as evidence, or *unknown*.
//!
//! Streaming, in bounded memory: per session a map from each entry's id (hashed to 64 bits) to
//! its line, to say whether a compaction's first kept entry exists (v1: a list of lines, for
//! `firstKeptEntryIndex`); the last [`RECENT`] entries' parent links and a few facts, to walk
//! a compaction's parent chain back to the assistant message before it; and compaction
//! records waiting for the first assistant message after them (at most [`MAX_WAIT`] entries).

use crate::cli::ManPage;
use crate::diag::{self, Diags, Kind};
use crate::hash::{hash_str, FastMap, FastSet};
use crate::input;
use crate::json;
use crate::model::{self, Message};
use crate::models::{self, Models};
use crate::output::{Obj, Out, Stop};
use crate::reader::{self, Entry, Header, Visitor};
use crate::tool::Tool;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::process::ExitCode;
use std::rc::Rc;

const TOOL: &str = "pi-compactions";

mod args;

pub use args::{Args, MAN};

/// compactions: the tool.
pub struct Compactions;

impl Tool for Compactions {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let windows = models::load_for(TOOL, args.models.as_deref());
        let sources = args.inputs.sources();
        let ctx = Ctx {
            args,
            windows: &windows,
        };
        input::run(
            TOOL,
            &sources,
            args.inputs.threads(),
            |src, out, d| {
                report(&ctx, &src.name(), out, d, |d, v| {
                    reader::read_source(src, d, v)
                })
            },
            |_, _| Ok(()),
        )
    }

    /// Runs pi-compactions over `input` as if it came on stdin (for tests and fuzzing); models.json
    /// is read as in [`run`].
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let windows = models::load_for(TOOL, args.models.as_deref());
        let ctx = Ctx {
            args,
            windows: &windows,
        };
        report(&ctx, "<stdin>", out, d, |d, v| {
            reader::read(input, false, d, v)
        })
    }
}

/// Reports the compactions of one input, which `read` feeds to the visitor it is given.
fn report(
    ctx: &Ctx<'_>,
    name: &str,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut v = Reporter {
        ctx,
        out,
        file: name,
        s: None,
    };
    read(d, &mut v)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Triggers and error classification
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Manual,
    Threshold,
    Overflow,
    Automatic,
    Unknown,
}

impl Trigger {
    const ALL: [Trigger; 5] = [
        Trigger::Manual,
        Trigger::Threshold,
        Trigger::Overflow,
        Trigger::Automatic,
        Trigger::Unknown,
    ];
    fn name(self) -> &'static str {
        match self {
            Trigger::Manual => "manual",
            Trigger::Threshold => "threshold",
            Trigger::Overflow => "overflow",
            Trigger::Automatic => "automatic",
            Trigger::Unknown => "unknown",
        }
    }
    /// A trigger an extension recorded in `details` (case-insensitive).
    fn from_recorded(s: &str) -> Option<Trigger> {
        match s.trim().to_ascii_lowercase().as_str() {
            "manual" => Some(Trigger::Manual),
            "threshold" => Some(Trigger::Threshold),
            "overflow" => Some(Trigger::Overflow),
            "auto" | "automatic" => Some(Trigger::Automatic),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basis {
    Recorded,
    Inferred,
    Unknown,
}

impl Basis {
    const ALL: [Basis; 3] = [Basis::Recorded, Basis::Inferred, Basis::Unknown];
    fn name(self) -> &'static str {
        match self {
            Basis::Recorded => "recorded",
            Basis::Inferred => "inferred",
            Basis::Unknown => "unknown",
        }
    }
}

/// Normalized error kinds: the only thing of an error's text that reaches a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    ContextOverflow,
    RateLimit,
    Timeout,
    Connection,
    Server,
    Aborted,
    Other,
}

impl ErrorKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ErrorKind::ContextOverflow => "context_overflow",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Server => "server",
            ErrorKind::Aborted => "aborted",
            ErrorKind::Other => "other",
        }
    }
}

/// Whether `l` (lowercased) has `needle` followed directly by an ASCII digit.
fn digit_after(l: &str, needle: &str) -> bool {
    l.match_indices(needle).any(|(i, _)| {
        l.as_bytes()
            .get(i + needle.len())
            .is_some_and(u8::is_ascii_digit)
    })
}

/// Whether `l` has a digit directly before `needle`.
fn digit_before(l: &str, needle: &str) -> bool {
    l.match_indices(needle)
        .any(|(i, _)| i > 0 && l.as_bytes()[i - 1].is_ascii_digit())
}

/// Whether `l` has `a` and, somewhere after it, `b`.
fn then(l: &str, a: &str, b: &str) -> bool {
    l.find(a).is_some_and(|i| l[i + a.len()..].contains(b))
}

/// Whether an error text (lowercased) says the context or prompt was too long: the patterns of
/// Pi's `isContextOverflow` (packages/ai, utils/overflow.ts), with its exclusions for rate
/// limiting that mentions tokens.
pub(crate) fn is_overflow_text(l: &str) -> bool {
    if l.starts_with("throttling error:")
        || l.starts_with("service unavailable:")
        || l.contains("rate limit")
        || l.contains("too many requests")
    {
        return false;
    }
    const PLAIN: &[&str] = &[
        "prompt is too long",
        "request_too_large",
        "input is too long for requested model",
        "exceeds the context window",
        "reduce the length of the messages",
        "exceeds the available context size",
        "greater than the context length",
        "context window exceeds limit",
        "exceeded model token limit",
        "model_context_window_exceeded",
        "prompt too long; exceeded",
        "context_length_exceeded",
        "context length exceeded",
        "context_length exceeded",
        "context length_exceeded",
        "too many tokens",
        "token limit exceeded",
    ];
    if PLAIN.iter().any(|p| l.contains(p)) {
        return true;
    }
    if digit_after(l, "maximum prompt length is ")
        || digit_after(l, "maximum context length is ")
        || digit_after(l, "exceeds the limit of ")
        || digit_after(l, "maximum allowed input length of ")
        || digit_after(l, "maximum context length of ")
        || digit_after(l, "maximum context length (")
        || digit_before(l, " output tokens") && l.contains("requested ")
        || digit_before(l, " input tokens") && l.contains("prompt contains")
        || digit_before(l, " tokens) is longer than the model")
        || then(l, "input token count", "exceeds the maximum")
        || then(l, "too large for model with ", "maximum context length")
        || then(l, "for a total of", " tokens") && digit_before(l, " tokens")
    {
        return true;
    }
    // Cerebras: 400/413 with no body.
    if l.starts_with("400") || l.starts_with("413") {
        let rest = l[3..].trim_start();
        let rest = rest
            .strip_prefix("status code")
            .unwrap_or(rest)
            .trim_start();
        if rest.starts_with("(no body)") {
            return true;
        }
    }
    false
}

fn three_digits(b: &[u8], i: usize) -> Option<u16> {
    let d = b.get(i..i + 3)?;
    if !d.iter().all(u8::is_ascii_digit) || b.get(i + 3).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let n = (d[0] - b'0') as u16 * 100 + (d[1] - b'0') as u16 * 10 + (d[2] - b'0') as u16;
    (400..=599).contains(&n).then_some(n)
}

/// The HTTP error status (400-599) an error text states: a leading `NNN ` (as the provider
/// SDKs write it), or a number after `code`, `status` or `http` (JSON bodies, nested ones
/// included). Other numbers (an exit code 127, a year) are not statuses.
pub(crate) fn http_status(l: &str) -> Option<u16> {
    let b = l.as_bytes();
    if let Some(n) = three_digits(b, 0) {
        return Some(n);
    }
    for key in ["code", "status", "http"] {
        for (i, _) in l.match_indices(key) {
            let mut j = i + key.len();
            let mut skipped = 0;
            while skipped < 8
                && matches!(
                    b.get(j),
                    Some(b' ' | b'"' | b'\\' | b':' | b'=' | b'/' | b'1' | b'.')
                )
            {
                // Allow `HTTP/1.1 503`: skip the version, but not a status's own digits.
                if matches!(b.get(j), Some(b'1' | b'.')) && !l[i..].starts_with("http/") {
                    break;
                }
                j += 1;
                skipped += 1;
            }
            if let Some(n) = three_digits(b, j) {
                return Some(n);
            }
        }
    }
    None
}

/// The retry attempt an error text states (`after 3 retry attempts`, `attempt 2`, `retry 2/3`).
pub(crate) fn retry_attempt(l: &str) -> Option<u64> {
    let num_at = |s: &str| -> Option<u64> {
        let d: String = s.chars().take_while(char::is_ascii_digit).collect();
        d.parse().ok()
    };
    for (i, _) in l.match_indices("after ") {
        let rest = &l[i + 6..];
        if let Some(n) = num_at(rest) {
            let tail = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            if tail.starts_with(" retr") || tail.starts_with(" attempt") {
                return Some(n);
            }
        }
    }
    for key in ["attempt ", "attempt #", "retry ", "retry #"] {
        for (i, _) in l.match_indices(key) {
            if let Some(n) = num_at(&l[i + key.len()..]) {
                return Some(n);
            }
        }
    }
    None
}

/// Normalizes an error: `text` is the error message lowercased.
pub(crate) fn classify(l: &str, aborted: bool, status: Option<u16>) -> ErrorKind {
    if aborted {
        return ErrorKind::Aborted;
    }
    if is_overflow_text(l) {
        return ErrorKind::ContextOverflow;
    }
    match status {
        Some(429) => return ErrorKind::RateLimit,
        Some(408 | 504) => return ErrorKind::Timeout,
        Some(500..=599) => return ErrorKind::Server,
        _ => {}
    }
    let any = |ps: &[&str]| ps.iter().any(|p| l.contains(p));
    if any(&[
        "rate limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "quota",
        "usage limit",
        "resource exhausted",
        "resource_exhausted",
    ]) {
        ErrorKind::RateLimit
    } else if any(&[
        "timed out",
        "timeout",
        "time out",
        "deadline exceeded",
        "etimedout",
    ]) {
        ErrorKind::Timeout
    } else if any(&["abort", "cancelled", "canceled"]) {
        ErrorKind::Aborted
    } else if any(&[
        "connection",
        "econnreset",
        "econnrefused",
        "enotfound",
        "eai_again",
        "epipe",
        "socket hang up",
        "network",
        "fetch failed",
        "terminated",
        "other side closed",
    ]) {
        ErrorKind::Connection
    } else if any(&[
        "overloaded",
        "internal server error",
        "server error",
        "server_error",
        "service unavailable",
        "bad gateway",
        "internal error",
        "unavailable",
    ]) {
        ErrorKind::Server
    } else {
        ErrorKind::Other
    }
}

/// What a compaction-failure text says (see [`failure_of`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    trigger: Trigger,
    failure: &'static str,
    summarization: Option<&'static str>,
    kind: ErrorKind,
    status: Option<u16>,
    retry: Option<u64>,
}

/// The failure texts Pi builds (agent-session.ts, compaction.ts), with the trigger each belongs
/// to. "Auto-compaction failed" is what Pi writes for a threshold compaction; overflow recovery
/// has its own texts.
const FAILURES: &[(&str, Trigger, &str)] = &[
    (
        "Auto-compaction failed: ",
        Trigger::Threshold,
        "auto_compaction",
    ),
    (
        "Context overflow recovery failed",
        Trigger::Overflow,
        "overflow_recovery",
    ),
    (
        "Truncated response recovery failed",
        Trigger::Overflow,
        "truncation_recovery",
    ),
    ("Context overflow: ", Trigger::Overflow, "overflow_recovery"),
    ("Compaction failed: ", Trigger::Manual, "manual_compaction"),
    ("Summarization failed: ", Trigger::Unknown, "summarization"),
    (
        "Turn prefix summarization failed: ",
        Trigger::Unknown,
        "turn_prefix_summarization",
    ),
];

const SUMMARIZATION: &[(&str, &str)] = &[
    ("Summarization failed: ", "history"),
    ("Turn prefix summarization failed: ", "turn_prefix"),
];

/// The compaction failure an assistant message's error text reports, if it is one.
pub(crate) fn failure_of(msg: &str, aborted: bool) -> Option<Failure> {
    let t = msg.trim_start();
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    let &(prefix, trigger, failure) = FAILURES.iter().find(|(p, _, _)| t.starts_with(p))?;
    let mut cause = &t[prefix.len()..];
    let mut summarization = None;
    if failure == "summarization" {
        summarization = Some("history");
    } else if failure == "turn_prefix_summarization" {
        summarization = Some("turn_prefix");
    }
    loop {
        let c = cause.trim_start();
        let c = c.strip_prefix("Error: ").unwrap_or(c);
        match SUMMARIZATION.iter().find(|(p, _)| c.starts_with(p)) {
            Some((p, s)) => {
                summarization = Some(s);
                cause = &c[p.len()..];
            }
            None => {
                cause = c;
                break;
            }
        }
    }
    if prefix == "Context overflow: " {
        cause = cause
            .strip_suffix(" Your input may be too large for the context window.")
            .unwrap_or(cause);
    }
    let l = cause.to_ascii_lowercase();
    let status = http_status(&l);
    let gave_up = cause.starts_with("after one compact-and-retry attempt");
    let kind = if gave_up && prefix.starts_with("Context overflow recovery") {
        // Pi gave up: the context still overflowed after compacting once.
        ErrorKind::ContextOverflow
    } else if gave_up {
        ErrorKind::Other
    } else {
        classify(&l, aborted, status)
    };
    Some(Failure {
        trigger,
        failure,
        summarization,
        kind,
        status,
        retry: retry_attempt(&l),
    })
}

// ---------------------------------------------------------------------------------------------
// Reading sessions
// ---------------------------------------------------------------------------------------------

/// Entries whose links and facts are kept for walking a compaction's parent chain.
const RECENT: usize = 4096;
/// Entries after a compaction within which its `context_after` is looked for.
const MAX_WAIT: u64 = 10_000;
const NO_MODEL: u32 = u32::MAX;

struct Ctx<'a> {
    args: &'a Args,
    windows: &'a Models,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Other,
}

impl StopReason {
    fn of(s: Option<&str>) -> StopReason {
        match s {
            Some("stop") => StopReason::Stop,
            Some("length") => StopReason::Length,
            Some("toolUse") => StopReason::ToolUse,
            Some("error") => StopReason::Error,
            Some("aborted") => StopReason::Aborted,
            _ => StopReason::Other,
        }
    }
}

/// What is kept of an assistant message.
#[derive(Debug, Clone)]
struct Asst {
    line: u64,
    id: Option<Rc<str>>,
    stop: StopReason,
    /// stopReason error with an error text that says the context was too long.
    overflow: bool,
}

#[derive(Debug, Clone)]
enum NodeKind {
    User,
    Assistant(Box<Asst>),
    Compaction,
    Other,
}

struct Node {
    parent: Option<Rc<str>>,
    kind: NodeKind,
    model: u32,
}

/// How an entry names its parent.
enum ParentRef<'a> {
    Id(Cow<'a, str>),
    Root,
    /// No usable `parentId` (v1 logs, odd entries): file order decides.
    Unknown,
}

#[derive(Debug, Clone)]
struct Evidence {
    rule: &'static str,
    line: u64,
    entry: Option<Box<str>>,
    detail: String,
}

struct CompRec {
    line: u64,
    entry: Option<String>,
    timestamp: Option<String>,
    tokens_before: Option<u64>,
    fk_entry: Option<String>,
    fk_index: Option<u64>,
    fk_line: Option<u64>,
    summary_bytes: Option<u64>,
    summary: Option<String>,
    files_read: Option<Vec<String>>,
    files_modified: Option<Vec<String>>,
    from_hook: Option<bool>,
    trigger: Trigger,
    basis: Basis,
    evidence: Vec<Evidence>,
    model: u32,
    window: Option<u64>,
    context_after: Option<u64>,
    context_after_line: Option<u64>,
}

struct Wait {
    rec: Box<CompRec>,
    /// Ids descending from the compaction; `None` when file order decides (no id).
    desc: Option<FastSet<Box<str>>>,
    age: u64,
    done: bool,
}

enum Slot {
    Ready(Vec<u8>),
    Wait(Wait),
}

#[derive(Default)]
struct TableRow {
    compactions: u64,
    triggers: [u64; 5],
    bases: [u64; 3],
    failures: u64,
    max_tokens_before: Option<u64>,
}

struct Sess {
    id: String,
    linear: bool,
    /// Records read so far, the header being record 0 (Pi's v1 index).
    records: u64,
    /// v2+: hash of each id seen → its line.
    seen: FastMap<u64, u64>,
    /// v1: line of record k at [k - 1].
    v1_lines: Vec<u64>,
    recent: FastMap<Rc<str>, Node>,
    order: VecDeque<Rc<str>>,
    /// The nearest assistant message in file order since the last user message or compaction.
    file_last: Option<Asst>,
    file_model: u32,
    models: Vec<(Box<str>, Box<str>)>,
    queue: VecDeque<Slot>,
    table: TableRow,
}

impl Sess {
    fn intern_model(&mut self, provider: &str, model: &str) -> u32 {
        if let Some(i) = self
            .models
            .iter()
            .rposition(|(p, m)| &**p == provider && &**m == model)
        {
            return i as u32;
        }
        self.models.push((provider.into(), model.into()));
        (self.models.len() - 1) as u32
    }

    fn model(&self, ix: u32) -> Option<(&str, &str)> {
        self.models.get(ix as usize).map(|(p, m)| (&**p, &**m))
    }

    /// The nearest assistant message before an entry with this parent: on the parent chain
    /// when there is one, else in file order; `None` past a user message or a compaction.
    fn nearest_assistant(&self, parent: &ParentRef<'_>) -> Option<Asst> {
        match parent {
            ParentRef::Root => None,
            ParentRef::Unknown => self.file_last.clone(),
            ParentRef::Id(p) => {
                let mut cur: &str = p;
                for _ in 0..RECENT {
                    let node = self.recent.get(cur)?;
                    match &node.kind {
                        NodeKind::User | NodeKind::Compaction => return None,
                        NodeKind::Assistant(a) => return Some((**a).clone()),
                        NodeKind::Other => cur = node.parent.as_deref()?,
                    }
                }
                None
            }
        }
    }

    fn remember(&mut self, key: Rc<str>, node: Node) {
        if self.recent.len() >= RECENT {
            if let Some(old) = self.order.pop_front() {
                self.recent.remove(&old);
            }
        }
        if self.recent.insert(key.clone(), node).is_none() {
            self.order.push_back(key);
        }
    }
}

struct Reporter<'a, 'w> {
    ctx: &'a Ctx<'a>,
    out: &'a mut Out<'w>,
    file: &'a str,
    s: Option<Sess>,
}

/// The string a raw member holds, decoded.
fn str_of(raw: Option<&[u8]>) -> Option<Cow<'_, str>> {
    raw.and_then(json::as_str)
}

/// The recorded context size of an assistant message's usage: `None` when none of input,
/// cacheRead and cacheWrite is a count, or when they sum to zero (a member that is not a
/// count counts as zero).
fn usage_context(usage: Option<&[u8]>) -> Option<u64> {
    let u = usage?;
    // One pass over the members (as json::get: the last of repeated members wins).
    let (mut iv, mut rv, mut wv) = (None, None, None);
    json::for_each_field(u, |k, v| {
        if json::key_is(k, "input") {
            iv = Some(v);
        } else if json::key_is(k, "cacheRead") {
            rv = Some(v);
        } else if json::key_is(k, "cacheWrite") {
            wv = Some(v);
        }
    });
    let n = |v: Option<&[u8]>| v.and_then(json::as_u64);
    let (i, r, w) = (n(iv), n(rv), n(wv));
    if i.is_none() && r.is_none() && w.is_none() {
        return None;
    }
    let sum = model::context_tokens(i.unwrap_or(0), r.unwrap_or(0), w.unwrap_or(0));
    (sum > 0).then_some(sum)
}

/// `a - b`, clamped to the range of i64 (counts are u64).
fn signed_difference(a: u64, b: u64) -> i64 {
    let d = i128::from(a) - i128::from(b);
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn string_list(raw: Option<&[u8]>) -> Option<Vec<String>> {
    let raw = raw.filter(|r| r.first() == Some(&b'['))?;
    let mut v = Vec::new();
    json::for_each_element(raw, |e| {
        if let Some(s) = json::as_str(e) {
            v.push(s.into_owned());
        }
    });
    Some(v)
}

impl Reporter<'_, '_> {
    fn args(&self) -> &Args {
        self.ctx.args
    }

    fn write_comp(&self, s: &Sess, r: &CompRec) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut o = Obj::new(&mut buf, "compaction_report");
        o.str("session", &s.id)
            .str("file", self.file)
            .u64("line", r.line)
            .opt_str("entry", r.entry.as_deref())
            .opt_str("timestamp", r.timestamp.as_deref())
            .opt_u64("tokens_before", r.tokens_before)
            .obj("first_kept", |f| {
                f.opt_str("entry", r.fk_entry.as_deref())
                    .opt_u64("index", r.fk_index)
                    .opt_u64("line", r.fk_line)
                    .bool("found", r.fk_line.is_some());
            })
            .opt_u64("summary_bytes", r.summary_bytes)
            .obj("files", |f| {
                f.opt_u64("read", r.files_read.as_ref().map(|v| v.len() as u64))
                    .opt_u64(
                        "modified",
                        r.files_modified.as_ref().map(|v| v.len() as u64),
                    );
            })
            .opt_bool("from_hook", r.from_hook)
            .str("trigger", r.trigger.name())
            .str("basis", r.basis.name())
            .arr("evidence", |a| {
                for e in &r.evidence {
                    a.obj(|o| {
                        o.str("rule", e.rule)
                            .u64("line", e.line)
                            .opt_str("entry", e.entry.as_deref())
                            .str("detail", &e.detail);
                    });
                }
            });
        let model = s.model(r.model);
        o.opt_str("provider", model.map(|m| m.0))
            .opt_str("model", model.map(|m| m.1))
            .opt_u64("configured_window", r.window)
            .u64("reserve_tokens", self.args().reserve_tokens)
            .opt_u64("context_after", r.context_after)
            .opt_u64("context_after_line", r.context_after_line)
            .opt_i64(
                "inferred_drop",
                match (r.tokens_before, r.context_after) {
                    (Some(b), Some(a)) => Some(signed_difference(b, a)),
                    _ => None,
                },
            );
        if self.args().summary {
            o.opt_str("summary", r.summary.as_deref());
        }
        if self.args().file_lists {
            write_list(&mut o, "read_files", r.files_read.as_deref());
            write_list(&mut o, "modified_files", r.files_modified.as_deref());
        }
        o.end();
        buf
    }

    /// Writes the records at the front of the queue that no longer wait.
    fn flush(&mut self) -> Result<(), Stop> {
        let Some(mut s) = self.s.take() else {
            return Ok(());
        };
        let r = (|| {
            while let Some(front) = s.queue.front() {
                let bytes = match front {
                    Slot::Ready(_) => match s.queue.pop_front() {
                        Some(Slot::Ready(b)) => b,
                        _ => unreachable!("front was ready"),
                    },
                    Slot::Wait(w) if w.done => {
                        let b = self.write_comp(&s, &w.rec);
                        s.queue.pop_front();
                        b
                    }
                    Slot::Wait(_) => break,
                };
                self.out.line(&bytes)?;
            }
            Ok(())
        })();
        self.s = Some(s);
        r
    }

    fn compaction(
        &mut self,
        s: &mut Sess,
        e: &Entry<'_>,
        parent: &ParentRef<'_>,
        id: Option<&str>,
        model: u32,
        d: &mut Diags,
    ) -> CompRec {
        let line = e.line.no;
        let tokens_before = match e.get("tokensBefore") {
            None | Some(b"null") => None,
            Some(raw) => {
                let n = json::as_u64(raw);
                if n.is_none() {
                    d.report(
                        Some(line),
                        Kind::BadField,
                        format!(
                            "compaction tokensBefore is a {}, not a count; treated as unknown",
                            json::kind_name(raw)
                        ),
                    );
                }
                n
            }
        };
        let fk_entry = e.str("firstKeptEntryId").map(Cow::into_owned);
        let fk_index = e.get("firstKeptEntryIndex").and_then(json::as_u64);
        let fk_line = if s.linear {
            // Pi's migration: entries[index], the header being 0; the header resolves to nothing.
            fk_index
                .filter(|&k| k >= 1 && k < s.records)
                .and_then(|k| s.v1_lines.get(k as usize - 1).copied())
        } else {
            fk_entry
                .as_deref()
                .and_then(|f| s.seen.get(&hash_str(f)).copied())
        };
        let details = e.get("details").filter(|d| d.first() == Some(&b'{'));
        let from_hook = e.get("fromHook").and_then(json::as_bool);
        let summary = e.str("summary");

        let mut evidence = Vec::new();
        let mut recorded = None;
        if let Some(det) = details {
            for key in ["trigger", "reason"] {
                if let Some(t) = json::get(det, key)
                    .and_then(json::as_str)
                    .and_then(|v| Trigger::from_recorded(&v))
                {
                    recorded = Some(t);
                    evidence.push(Evidence {
                        rule: "recorded",
                        line,
                        entry: id.map(Into::into),
                        detail: format!("details.{key} says {}", t.name()),
                    });
                    break;
                }
            }
        }
        let mut inferred = None;
        let near = self.nearest(s, parent);
        if let Some(a) = near.as_ref().filter(|a| a.overflow) {
            inferred.get_or_insert(Trigger::Overflow);
            evidence.push(Evidence {
                rule: "overflow_error",
                line: a.line,
                entry: a.id.as_deref().map(Into::into),
                detail: "the assistant message right before ended with stopReason error: the context was too long".into(),
            });
        }
        let window = s
            .model(model)
            .and_then(|(p, m)| self.ctx.windows.window(p, m).map(|w| w.tokens));
        if let (Some(w), Some(t)) = (window, tokens_before) {
            // In 128 bits: the counts are u64 and the limit may be negative.
            let limit = i128::from(w) - i128::from(self.args().reserve_tokens);
            if i128::from(t) > limit {
                inferred.get_or_insert(Trigger::Threshold);
                evidence.push(Evidence {
                    rule: "over_threshold",
                    line,
                    entry: id.map(Into::into),
                    detail: format!(
                        "tokensBefore {t} > context window {w} - reserve {} = {limit}",
                        self.args().reserve_tokens
                    ),
                });
            }
        }
        if let Some(a) = near.as_ref().filter(|a| a.stop == StopReason::Length) {
            inferred.get_or_insert(Trigger::Automatic);
            evidence.push(Evidence {
                rule: "length_stop",
                line: a.line,
                entry: a.id.as_deref().map(Into::into),
                detail: "the assistant message right before ended with stopReason length".into(),
            });
        }
        if from_hook == Some(true) {
            evidence.push(Evidence {
                rule: "from_hook",
                line,
                entry: id.map(Into::into),
                detail: "written by an extension (fromHook: true)".into(),
            });
        }
        let (trigger, basis) = match (recorded, inferred) {
            (Some(t), _) => (t, Basis::Recorded),
            (None, Some(t)) => (t, Basis::Inferred),
            (None, None) => (Trigger::Unknown, Basis::Unknown),
        };
        CompRec {
            line,
            entry: id.map(str::to_string),
            timestamp: e.str("timestamp").map(Cow::into_owned),
            tokens_before,
            fk_entry,
            fk_index,
            fk_line,
            summary_bytes: summary.as_ref().map(|t| t.len() as u64),
            summary: if self.args().summary {
                summary.map(Cow::into_owned)
            } else {
                None
            },
            files_read: details.and_then(|d| string_list(json::get(d, "readFiles"))),
            files_modified: details.and_then(|d| string_list(json::get(d, "modifiedFiles"))),
            from_hook,
            trigger,
            basis,
            evidence,
            model,
            window,
            context_after: None,
            context_after_line: None,
        }
    }

    fn nearest(&self, s: &Sess, parent: &ParentRef<'_>) -> Option<Asst> {
        if s.linear {
            return s.file_last.clone();
        }
        s.nearest_assistant(parent)
    }

    fn branch_summary(
        &self,
        s: &Sess,
        e: &Entry<'_>,
        id: Option<&str>,
        parent: &ParentRef<'_>,
    ) -> Vec<u8> {
        let details = e.get("details").filter(|d| d.first() == Some(&b'{'));
        let read = details.and_then(|d| string_list(json::get(d, "readFiles")));
        let modified = details.and_then(|d| string_list(json::get(d, "modifiedFiles")));
        let from = e.str("fromId");
        let summary = e.str("summary");
        let mut buf = Vec::new();
        let mut o = Obj::new(&mut buf, "branch_summary_report");
        o.str("session", &s.id)
            .str("file", self.file)
            .u64("line", e.line.no)
            .opt_str("entry", id)
            .opt_str("timestamp", e.str("timestamp").as_deref())
            .opt_str(
                "target",
                match parent {
                    ParentRef::Id(p) => Some(p),
                    _ => None,
                },
            )
            .opt_str("from_id", from.as_deref())
            .bool(
                "from_found",
                from.as_deref()
                    .is_some_and(|f| s.seen.contains_key(&hash_str(f))),
            )
            .opt_u64("summary_bytes", summary.as_ref().map(|t| t.len() as u64))
            .obj("files", |f| {
                f.opt_u64("read", read.as_ref().map(|v| v.len() as u64))
                    .opt_u64("modified", modified.as_ref().map(|v| v.len() as u64));
            })
            .opt_bool("from_hook", e.get("fromHook").and_then(json::as_bool));
        if self.args().summary {
            o.opt_str("summary", summary.as_deref());
        }
        if self.args().file_lists {
            write_list(&mut o, "read_files", read.as_deref());
            write_list(&mut o, "modified_files", modified.as_deref());
        }
        o.end();
        buf
    }

    /// An assistant message with an error: a compaction failure, an ordinary error record
    /// (with --errors), or nothing.
    fn assistant_error(
        &self,
        s: &mut Sess,
        e: &Entry<'_>,
        msg: &Message<'_>,
        id: Option<&str>,
        stop: StopReason,
        model: u32,
    ) -> Option<Vec<u8>> {
        let text = str_of(msg.error_message);
        let aborted = stop == StopReason::Aborted;
        let stop_name = str_of(msg.stop_reason);
        let failure = text.as_deref().and_then(|t| failure_of(t, aborted));
        if failure.is_some() {
            s.table.failures += 1;
        }
        let (p, m) = match s.model(model) {
            Some((p, m)) => (Some(p), Some(m)),
            None => (None, None),
        };
        if let Some(f) = failure {
            let mut buf = Vec::new();
            let mut o = Obj::new(&mut buf, "compaction_failure");
            o.str("session", &s.id)
                .str("file", self.file)
                .u64("line", e.line.no)
                .opt_str("entry", id)
                .opt_str("timestamp", e.str("timestamp").as_deref())
                .str("trigger", f.trigger.name())
                .str("failure", f.failure)
                .opt_str("summarization", f.summarization)
                .str("error_kind", f.kind.name())
                .opt_u64("http_status", f.status.map(u64::from))
                .opt_u64("retry_attempt", f.retry)
                .opt_str("stop_reason", stop_name.as_deref())
                .opt_str("provider", p)
                .opt_str("model", m);
            o.end();
            return Some(buf);
        }
        if !self.args().errors {
            return None;
        }
        let is_error = matches!(stop, StopReason::Error | StopReason::Aborted)
            || text.as_deref().is_some_and(|t| !t.is_empty());
        if !is_error {
            return None;
        }
        let l = text.as_deref().unwrap_or("").to_ascii_lowercase();
        let status = http_status(&l);
        let kind = if stop == StopReason::Error && is_overflow_text(&l) {
            ErrorKind::ContextOverflow
        } else {
            classify(&l, aborted, status)
        };
        let mut buf = Vec::new();
        let mut o = Obj::new(&mut buf, "assistant_error");
        o.str("session", &s.id)
            .str("file", self.file)
            .u64("line", e.line.no)
            .opt_str("entry", id)
            .opt_str("timestamp", e.str("timestamp").as_deref())
            .opt_str("stop_reason", stop_name.as_deref())
            .str("error_kind", kind.name())
            .opt_u64("http_status", status.map(u64::from))
            .opt_u64("retry_attempt", retry_attempt(&l))
            .opt_str("provider", p)
            .opt_str("model", m);
        o.end();
        Some(buf)
    }

    fn table_line(&mut self, s: &Sess) -> Result<(), Stop> {
        let t = &s.table;
        if t.compactions == 0 && t.failures == 0 {
            return Ok(());
        }
        let plural = |n: u64, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let triggers: Vec<String> = Trigger::ALL
            .iter()
            .zip(t.triggers)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        let bases: Vec<String> = Basis::ALL
            .iter()
            .zip(t.bases)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        let mut line = format!(
            "{} {}: {}",
            diag::sanitize(self.file),
            diag::sanitize(&s.id),
            plural(t.compactions, "compaction")
        );
        if t.compactions > 0 {
            line.push_str(&format!(": {} ({})", triggers.join(", "), bases.join(", ")));
        }
        line.push_str(&format!("; {}", plural(t.failures, "failure")));
        match t.max_tokens_before {
            Some(n) => line.push_str(&format!("; largest tokens_before {n}")),
            None if t.compactions > 0 => line.push_str("; tokens_before not recorded"),
            None => {}
        }
        self.out.line(line.as_bytes())
    }
}

fn write_list(o: &mut Obj<'_>, key: &str, v: Option<&[String]>) {
    match v {
        Some(v) => {
            o.strs(key, v.iter().map(String::as_str));
        }
        None => {
            o.null(key);
        }
    }
}

impl Visitor for Reporter<'_, '_> {
    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<(), Stop> {
        self.s = Some(Sess {
            id: h.id.clone(),
            linear: h.is_linear(),
            records: 1,
            seen: FastMap::default(),
            v1_lines: Vec::new(),
            recent: FastMap::default(),
            order: VecDeque::new(),
            file_last: None,
            file_model: NO_MODEL,
            models: Vec::new(),
            queue: VecDeque::new(),
            table: TableRow::default(),
        });
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let Some(mut s) = self.s.take() else {
            return Ok(());
        };
        self.entry_in(&mut s, e, d);
        self.s = Some(s);
        self.flush()
    }

    fn end(&mut self, _d: &mut Diags) -> Result<(), Stop> {
        let Some(mut s) = self.s.take() else {
            return Ok(());
        };
        for slot in s.queue.iter_mut() {
            if let Slot::Wait(w) = slot {
                w.done = true;
            }
        }
        let table = self.args().table;
        self.s = Some(s);
        self.flush()?;
        let s = self.s.take().expect("session");
        if table {
            self.table_line(&s)?;
        }
        Ok(())
    }
}

impl Reporter<'_, '_> {
    fn entry_in(&mut self, s: &mut Sess, e: &Entry<'_>, d: &mut Diags) {
        let line = e.line.no;
        s.records += 1;
        let ty = e.get("type");
        let id = if s.linear {
            None
        } else {
            e.str("id").filter(|i| !i.is_empty())
        };
        let parent = if s.linear {
            ParentRef::Unknown
        } else {
            match e.get("parentId") {
                Some(b"null") => ParentRef::Root,
                Some(raw) => match json::as_str(raw) {
                    Some(p) if !p.is_empty() => ParentRef::Id(p),
                    Some(_) => ParentRef::Root,
                    None => ParentRef::Unknown,
                },
                None => ParentRef::Unknown,
            }
        };
        // The parent's id is shared with its node when that is still remembered.
        let (inherited, parent_id) = match &parent {
            ParentRef::Id(p) => match s.recent.get_key_value(&**p) {
                Some((k, n)) => (n.model, Some(k.clone())),
                None => (s.file_model, Some(Rc::from(&**p))),
            },
            ParentRef::Root => (NO_MODEL, None),
            ParentRef::Unknown => (s.file_model, None),
        };
        let id_rc: Option<Rc<str>> = id.as_deref().map(Rc::from);

        let mut kind = NodeKind::Other;
        let mut model = inherited;
        let mut context = None;
        let mut record: Option<Vec<u8>> = None;
        let mut comp: Option<CompRec> = None;
        match ty {
            Some(b"\"message\"") => {
                let msg = e.message().unwrap_or_default();
                match str_of(msg.role).as_deref() {
                    Some("user") => kind = NodeKind::User,
                    Some("assistant") => {
                        let p = str_of(msg.provider);
                        let m = str_of(msg.model);
                        if let (Some(p), Some(m)) = (p, m) {
                            model = s.intern_model(&p, &m);
                        }
                        let stop = StopReason::of(str_of(msg.stop_reason).as_deref());
                        let failed = matches!(stop, StopReason::Error | StopReason::Aborted);
                        let overflow = stop == StopReason::Error
                            && str_of(msg.error_message)
                                .is_some_and(|t| is_overflow_text(&t.to_ascii_lowercase()));
                        if !failed {
                            context = usage_context(msg.usage);
                        }
                        if failed || msg.error_message.is_some() {
                            record = self.assistant_error(s, e, &msg, id.as_deref(), stop, model);
                        }
                        kind = NodeKind::Assistant(Box::new(Asst {
                            line,
                            id: id_rc.clone(),
                            stop,
                            overflow,
                        }));
                    }
                    _ => {}
                }
            }
            Some(b"\"model_change\"") => {
                let p = e.str("provider");
                let m = e.str("modelId").or_else(|| e.str("model"));
                if let (Some(p), Some(m)) = (p, m) {
                    model = s.intern_model(&p, &m);
                }
            }
            Some(b"\"compaction\"") => {
                kind = NodeKind::Compaction;
                comp = Some(self.compaction(s, e, &parent, id.as_deref(), model, d));
            }
            Some(b"\"branch_summary\"") if self.args().branch_summaries => {
                record = Some(self.branch_summary(s, e, id.as_deref(), &parent));
            }
            _ => {}
        }

        // Compactions waiting for the first assistant message after them.
        let is_comp = comp.is_some();
        for slot in s.queue.iter_mut() {
            let Slot::Wait(w) = slot else { continue };
            if w.done {
                continue;
            }
            w.age += 1;
            let on_chain = match &w.desc {
                None => true,
                Some(set) => matches!(&parent, ParentRef::Id(p) if set.contains(&**p)),
            };
            if on_chain {
                if is_comp {
                    w.done = true;
                } else if let Some(c) = context {
                    w.rec.context_after = Some(c);
                    w.rec.context_after_line = Some(line);
                    w.done = true;
                } else if let (Some(set), Some(i)) = (w.desc.as_mut(), id.as_deref()) {
                    set.insert(i.into());
                }
            }
            if !w.done && w.age >= MAX_WAIT {
                w.done = true;
            }
        }

        if let Some(b) = record {
            if !self.args().table {
                s.queue.push_back(Slot::Ready(b));
            }
        }
        if let Some(rec) = comp {
            let t = &mut s.table;
            t.compactions += 1;
            t.triggers[Trigger::ALL
                .iter()
                .position(|x| *x == rec.trigger)
                .unwrap_or(4)] += 1;
            t.bases[Basis::ALL.iter().position(|x| *x == rec.basis).unwrap_or(2)] += 1;
            if let Some(n) = rec.tokens_before {
                t.max_tokens_before = Some(t.max_tokens_before.map_or(n, |m| m.max(n)));
            }
            if !self.args().table {
                let desc = match (&id, s.linear) {
                    (Some(i), false) => {
                        let mut set = FastSet::default();
                        set.insert(Box::<str>::from(&**i));
                        Some(set)
                    }
                    _ => None,
                };
                s.queue.push_back(Slot::Wait(Wait {
                    rec: Box::new(rec),
                    desc,
                    age: 0,
                    done: false,
                }));
            }
        }

        // Remember the entry.
        match &kind {
            NodeKind::User | NodeKind::Compaction => s.file_last = None,
            NodeKind::Assistant(a) => s.file_last = Some((**a).clone()),
            NodeKind::Other => {}
        }
        s.file_model = model;
        if s.linear {
            s.v1_lines.push(line);
        } else if let Some(i) = id_rc {
            s.seen.insert(hash_str(&i), line);
            s.remember(
                i,
                Node {
                    parent: parent_id,
                    kind,
                    model,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_patterns_follow_pi() {
        for t in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "400 This model's maximum context length is 131072 tokens. However, you requested 170072 tokens",
            "prompt token count of 9 exceeds the limit of 8",
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "413 status code (no body)",
            "400 (no body)",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "error: context_length_exceeded",
        ] {
            assert!(is_overflow_text(&t.to_ascii_lowercase()), "{t}");
        }
        for t in [
            "ThrottlingException: Too many tokens, please wait before trying again. rate limit",
            "429 Too Many Requests",
            "Connection error.",
            "400 Unsupported value: 'none' is not supported",
        ] {
            assert!(!is_overflow_text(&t.to_ascii_lowercase()), "{t}");
        }
    }

    #[test]
    fn http_status_is_found_where_providers_put_it() {
        let s = |t: &str| http_status(&t.to_ascii_lowercase());
        assert_eq!(s("429 Usage limit reached"), Some(429));
        assert_eq!(s("{\"error\":{\"code\": 503}}"), Some(503));
        assert_eq!(s("{\\n  \\\"code\\\": 429,"), Some(429));
        assert_eq!(s("request failed with status code 502"), Some(502));
        assert_eq!(s("HTTP/1.1 504 Gateway Timeout"), Some(504));
        assert_eq!(s("Connection error."), None);
        assert_eq!(s("error code 12345"), None);
        assert_eq!(s("1234 things"), None);
        assert_eq!(s("process exited with code 127"), None);
        assert_eq!(s("200 ok"), None);
    }

    #[test]
    fn retry_attempts() {
        let r = |t: &str| retry_attempt(&t.to_ascii_lowercase());
        assert_eq!(r("Aborted after 3 retry attempts"), Some(3));
        assert_eq!(r("failed after 2 retries"), Some(2));
        assert_eq!(r("retry attempt 4 of 5"), Some(4));
        assert_eq!(r("Connection error."), None);
    }

    #[test]
    fn failures_are_recognized_only_by_pi_texts() {
        let f = failure_of(
            "Auto-compaction failed: Summarization failed: 429 rate limit",
            false,
        )
        .unwrap();
        assert_eq!(
            (f.trigger, f.failure, f.summarization),
            (Trigger::Threshold, "auto_compaction", Some("history"))
        );
        assert_eq!((f.kind, f.status), (ErrorKind::RateLimit, Some(429)));
        assert!(failure_of("500 upstream compaction failed: x", false).is_none());
        assert!(failure_of("prompt is too long", false).is_none());
        let f = failure_of("Context overflow: compaction failed. Your input may be too large for the context window.", false).unwrap();
        assert_eq!((f.trigger, f.kind), (Trigger::Overflow, ErrorKind::Other));
    }
}
