//! What pi-tools reads of an entry from the entry alone (issue 20): whether it makes a record
//! at all, an assistant message's toolCall blocks and the names its calls share, and what a
//! toolResult says, its text checked as the output writes it. On a large input the prescan
//! threads read these ahead of the reader ([`reader::Ahead`]), keeping each string as its
//! place in the line (they cannot borrow it); the joiner takes them with the entry and only
//! joins calls to results and writes the records. Otherwise (a small input, one thread, a line
//! the reader read again, a user's command) the joiner reads the entry in order with the same
//! functions ([`message_of`], [`call_blocks`], [`ResultFacts::read`]). Nothing here depends on
//! other lines; what the joiner reports (a call or result without an id) it reports from
//! these facts, in order, as it would from the entry.

use super::args::Args;
use super::facts::{
    call_blocks, call_id_problem, message_of, CallBlock, ResultFacts, ResultUsage, Role, Stamp,
    TurnNames,
};
use super::text::ResultText;
use crate::message::{Message, NestedCalls};
use crate::reader::{self, Entry};
use arrayvec::ArrayString;
use smallvec::SmallVec;
use std::any::Any;
use std::borrow::Cow;
use std::ops::Range;

/// What is read of an entry ahead of the reader. Held in place, with no heap block of its
/// own in the common case (one toolCall block, one text part): the facts are made on a
/// helper thread and freed on another, and glibc takes such a block back to its arena under
/// a lock once the freeing thread's cache is full (boxed, pi-tools on two cores took 14 %
/// longer: BENCHMARKS.md, round 13).
/// The chunk's vector of them is reused, so their size costs nothing per entry.
pub(super) enum EntryAhead {
    /// pi-tools makes no record of it (not a message it reads, or an assistant message
    /// without toolCall blocks).
    Nothing,
    /// An assistant message's calls.
    Calls(CallsAhead),
    /// A toolResult message.
    Result(ResultAhead),
    /// Read by the joiner in order: a user's command (a few per session), or a value not
    /// found in the line.
    InOrder,
}

/// The [`reader::Ahead`] of pi-tools: the facts of each entry, read with the options they
/// depend on (--no-content, --max-text).
pub(super) struct ReadAhead(pub(super) Args);

impl reader::Ahead for ReadAhead {
    fn chunk(&self, used: Option<Box<dyn Any + Send>>) -> Box<dyn Any + Send> {
        reader::facts_vec::<EntryAhead>(used)
    }

    fn record(&self, facts: &mut (dyn Any + Send), e: &Entry<'_>) {
        if let Some(v) = facts.downcast_mut::<Vec<EntryAhead>>() {
            v.push(entry_ahead(e, &self.0));
        }
    }
}

/// The facts of `e` read ahead.
pub(super) fn entry_ahead(e: &Entry<'_>, args: &Args) -> EntryAhead {
    let Some((role, msg)) = message_of(e) else {
        return EntryAhead::Nothing;
    };
    let read = match role {
        Role::Assistant => CallsAhead::read(e, &msg).map(|c| match c.blocks.is_empty() {
            true => EntryAhead::Nothing,
            false => EntryAhead::Calls(c),
        }),
        Role::ToolResult => ResultAhead::read(e, &msg, args).map(EntryAhead::Result),
        Role::Bash => None,
    };
    read.unwrap_or(EntryAhead::InOrder)
}

/// A string read ahead: held in place when short (ids, names, times: taken back with no
/// second look at the line), else where it lies in the line, or decoded (one written with
/// escapes is no slice of the line).
enum Str {
    Short(ArrayString<SHORT>),
    At(Range<usize>),
    Decoded(Box<str>),
}

/// The longest string a [`Str`] holds in place: Pi's entry ids (8 bytes), timestamps (24),
/// tool call ids (30 here), tool, model and provider names. A place in the line would cost a
/// UTF-8 check of the string when the joiner takes it back (~100 instructions for 30 bytes).
const SHORT: usize = 32;

impl Str {
    fn of(e: &Entry<'_>, s: Cow<'_, str>) -> Str {
        if let Ok(short) = ArrayString::from(&s) {
            return Str::Short(short);
        }
        match e.place_of(&s) {
            Some(at) if matches!(s, Cow::Borrowed(_)) => Str::At(at),
            _ => Str::Decoded(s.into()),
        }
    }

    fn opt(e: &Entry<'_>, s: Option<Cow<'_, str>>) -> Option<Str> {
        s.map(|s| Str::of(e, s))
    }

    /// The string, found in `e`'s line; `None` when the line has no valid text there.
    fn get<'e>(&'e self, e: &Entry<'e>) -> Option<Cow<'e, str>> {
        match self {
            Str::Short(s) => Some(Cow::Borrowed(s)),
            Str::At(at) => e.text_at(at.clone()).map(Cow::Borrowed),
            Str::Decoded(s) => Some(Cow::Borrowed(s)),
        }
    }
}

/// An optional string read ahead, found in `e`'s line: `None` when it cannot be.
fn opt_get<'e>(s: &'e Option<Str>, e: &Entry<'e>) -> Option<Option<Cow<'e, str>>> {
    match s {
        None => Some(None),
        Some(s) => s.get(e).map(Some),
    }
}

/// Where optional bytes of `e`'s line lie: `None` when they are not in it.
fn place(e: &Entry<'_>, b: Option<&[u8]>) -> Option<Option<Range<usize>>> {
    match b {
        None => Some(None),
        Some(b) => e.place_of_bytes(b).map(Some),
    }
}

/// The bytes at `at` in `e`'s line, when it is one ([`place`]).
fn bytes_at<'e>(e: &Entry<'e>, at: &Option<Range<usize>>) -> Option<Option<&'e [u8]>> {
    match at {
        None => Some(None),
        Some(at) => e.line.bytes.get(at.clone()).map(Some),
    }
}

/// An entry's [`Stamp`] read ahead (its timestamp parsed ahead too).
struct StampAhead {
    id: Option<Str>,
    timestamp: Option<Str>,
    ms: Option<i64>,
}

impl StampAhead {
    fn read(e: &Entry<'_>) -> StampAhead {
        let Stamp { id, timestamp, ms } = Stamp::of(e);
        StampAhead {
            id: Str::opt(e, id),
            timestamp: Str::opt(e, timestamp),
            ms,
        }
    }

    /// The stamp, found in `e`'s line; `None` when it is not there.
    fn resolve<'e>(&'e self, e: &Entry<'e>) -> Option<Stamp<'e>> {
        Some(Stamp {
            id: opt_get(&self.id, e)?,
            timestamp: opt_get(&self.timestamp, e)?,
            ms: self.ms,
        })
    }
}

/// An assistant message's calls read ahead.
pub(super) struct CallsAhead {
    stamp: StampAhead,
    model: Option<Str>,
    provider: Option<Str>,
    stop_reason: Option<Str>,
    blocks: SmallVec<[BlockAhead; 1]>,
}

/// A toolCall block read ahead ([`CallBlock`]).
struct BlockAhead {
    id: Result<Str, &'static str>,
    key: Option<u128>,
    name: Option<Str>,
    namespace: Option<Str>,
    arguments: Option<Range<usize>>,
}

impl CallsAhead {
    fn read(e: &Entry<'_>, msg: &Message<'_>) -> Option<CallsAhead> {
        let names = TurnNames::read(msg);
        let blocks = msg.content.map(|c| call_blocks(c, e.noted_strings()));
        let blocks = blocks.unwrap_or_default();
        let blocks = blocks.into_iter().map(|b| {
            Some(BlockAhead {
                id: b.id.map(|id| Str::of(e, id)),
                key: b.key,
                name: Str::opt(e, b.name),
                namespace: Str::opt(e, b.namespace),
                arguments: place(e, b.arguments)?,
            })
        });
        Some(CallsAhead {
            stamp: StampAhead::read(e),
            model: Str::opt(e, names.model),
            provider: Str::opt(e, names.provider),
            stop_reason: Str::opt(e, names.stop_reason),
            blocks: blocks.collect::<Option<_>>()?,
        })
    }

    /// The entry's stamp, the names the calls share and the blocks, found in `e`'s line;
    /// `None` when they are not there (the entry is then read in order).
    #[allow(clippy::type_complexity)]
    pub(super) fn resolve<'e>(
        &'e self,
        e: &Entry<'e>,
    ) -> Option<((Stamp<'e>, TurnNames<'e>), Vec<CallBlock<'e>>)> {
        let names = TurnNames {
            model: opt_get(&self.model, e)?,
            provider: opt_get(&self.provider, e)?,
            stop_reason: opt_get(&self.stop_reason, e)?,
        };
        let blocks = self.blocks.iter().map(|b| {
            Some(CallBlock {
                id: match &b.id {
                    Ok(id) => Ok(id.get(e)?),
                    Err(what) => Err(*what),
                },
                key: b.key,
                name: opt_get(&b.name, e)?,
                namespace: opt_get(&b.namespace, e)?,
                arguments: bytes_at(e, &b.arguments)?,
            })
        });
        let stamp = self.stamp.resolve(e)?;
        Some(((stamp, names), blocks.collect::<Option<_>>()?))
    }
}

/// A toolResult read ahead ([`ResultFacts`]), and what is wrong with its `toolCallId`.
pub(super) struct ResultAhead {
    stamp: StampAhead,
    id_problem: Option<&'static str>,
    call_id: Option<Str>,
    call_key: Option<u128>,
    name: Option<Str>,
    is_error: Option<bool>,
    exit_code: Option<i64>,
    details: Option<Range<usize>>,
    text: Option<TextAhead>,
    images: u64,
    image_types: Vec<Option<Str>>,
    usage: Option<UsageAhead>,
    nested_calls: Option<NestedCalls>,
    duration_ms: Option<i64>,
}

/// A result's text read ahead ([`ResultText`]): the places of its parts.
enum TextAhead {
    Parts {
        parts: SmallVec<[Range<usize>; 1]>,
        utf8: bool,
    },
    Written {
        parts: SmallVec<[Range<usize>; 1]>,
        len: usize,
    },
    Decoded(Box<str>),
}

/// A result's usage read ahead ([`ResultUsage`]).
struct UsageAhead {
    tokens: [Option<u64>; 7],
    cost: Option<Range<usize>>,
    cost_from_provider: Option<bool>,
}

impl ResultAhead {
    fn read(e: &Entry<'_>, msg: &Message<'_>, args: &Args) -> Option<ResultAhead> {
        let f = ResultFacts::read(msg, args, e.is_utf8(), e.noted_strings());
        let parts = |parts: Vec<&[u8]>| -> Option<SmallVec<[Range<usize>; 1]>> {
            parts.into_iter().map(|p| e.place_of_bytes(p)).collect()
        };
        let text = match f.text.map(ResultText::checked) {
            None => None,
            Some(ResultText::Parts { parts: p, utf8 }) => Some(TextAhead::Parts {
                parts: parts(p)?,
                utf8,
            }),
            Some(ResultText::Written { parts: p, len }) => Some(TextAhead::Written {
                parts: parts(p)?,
                len,
            }),
            Some(ResultText::Decoded(t)) => Some(TextAhead::Decoded(t.into())),
        };
        let usage = match f.usage {
            None => None,
            Some(u) => Some(UsageAhead {
                tokens: u.tokens,
                cost: place(e, u.cost)?,
                cost_from_provider: u.cost_from_provider,
            }),
        };
        Some(ResultAhead {
            stamp: StampAhead::read(e),
            id_problem: call_id_problem(msg.tool_call_id),
            call_id: Str::opt(e, f.call_id),
            call_key: f.call_key,
            name: Str::opt(e, f.name),
            is_error: f.is_error,
            exit_code: f.exit_code,
            details: place(e, f.details)?,
            text,
            images: f.images,
            image_types: f.image_types.into_iter().map(|t| Str::opt(e, t)).collect(),
            usage,
            nested_calls: f.nested_calls,
            duration_ms: f.duration_ms,
        })
    }

    /// The entry's stamp, what is wrong with the `toolCallId` and the facts, found in `e`'s
    /// line; `None` when they are not there (the entry is then read in order).
    #[allow(clippy::type_complexity)]
    pub(super) fn resolve<'e>(
        &'e self,
        e: &Entry<'e>,
    ) -> Option<((Stamp<'e>, Option<&'static str>), ResultFacts<'e>)> {
        let parts = |parts: &[Range<usize>]| -> Option<Vec<&'e [u8]>> {
            parts.iter().map(|p| e.line.bytes.get(p.clone())).collect()
        };
        let text = match &self.text {
            None => None,
            Some(TextAhead::Parts { parts: p, utf8 }) => Some(ResultText::Parts {
                parts: parts(p)?,
                utf8: *utf8,
            }),
            Some(TextAhead::Written { parts: p, len }) => Some(ResultText::Written {
                parts: parts(p)?,
                len: *len,
            }),
            Some(TextAhead::Decoded(t)) => Some(ResultText::Decoded(Cow::Borrowed(t))),
        };
        let usage = match &self.usage {
            None => None,
            Some(u) => Some(ResultUsage {
                tokens: u.tokens,
                cost: bytes_at(e, &u.cost)?,
                cost_from_provider: u.cost_from_provider,
            }),
        };
        let image_types = self.image_types.iter().map(|t| opt_get(t, e));
        let facts = ResultFacts {
            call_id: opt_get(&self.call_id, e)?,
            call_key: self.call_key,
            name: opt_get(&self.name, e)?,
            is_error: self.is_error,
            exit_code: self.exit_code,
            details: bytes_at(e, &self.details)?,
            text,
            images: self.images,
            image_types: image_types.collect::<Option<_>>()?,
            usage,
            nested_calls: self.nested_calls,
            duration_ms: self.duration_ms,
        };
        Some(((self.stamp.resolve(e)?, self.id_problem), facts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// What [`entry_ahead`] makes of each entry of `text` (one session) given the flags
    /// `flags`; what it read must resolve, in the entry's line, to what reading the entry in
    /// order gives (its text checked as the ahead path checks it).
    fn ahead_of(text: &str, flags: &[&str]) -> Vec<&'static str> {
        let args = Args::try_parse_from([&["pi-tools"], flags].concat()).unwrap();
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t"}"#;
        reader::map_entries(&format!("{header}\n{text}"), |e| {
            let now = message_of(e);
            match entry_ahead(e, &args) {
                EntryAhead::Nothing => {
                    let blocks = now.and_then(|(role, msg)| match role {
                        Role::Assistant => msg.content.map(|c| call_blocks(c, e.noted_strings())),
                        _ => None,
                    });
                    assert!(blocks.unwrap_or_default().is_empty(), "{}", e.line.no);
                    "nothing"
                }
                EntryAhead::InOrder => "in order",
                EntryAhead::Calls(calls) => {
                    let ((stamp, names), blocks) = calls.resolve(e).expect("found in the line");
                    let (_, msg) = now.expect("a message");
                    assert_eq!(stamp, Stamp::of(e));
                    assert_eq!(names, TurnNames::read(&msg));
                    let content = msg.content.expect("content");
                    assert_eq!(blocks, call_blocks(content, crate::json::Noted::default()));
                    "calls"
                }
                EntryAhead::Result(result) => {
                    let ((stamp, id_problem), facts) =
                        result.resolve(e).expect("found in the line");
                    let (_, msg) = now.expect("a message");
                    assert_eq!(stamp, Stamp::of(e));
                    let mut in_order =
                        ResultFacts::read(&msg, &args, e.is_utf8(), e.noted_strings());
                    in_order.text = in_order.text.map(ResultText::checked);
                    assert_eq!(id_problem, call_id_problem(msg.tool_call_id));
                    assert_eq!(facts, in_order);
                    match facts.text {
                        None => "result",
                        Some(ResultText::Written { .. }) => "result, text written",
                        Some(ResultText::Parts { .. }) => "result, text to decode",
                        Some(ResultText::Decoded(_)) => "result, text decoded",
                    }
                }
            }
        })
    }

    fn message(id: &str, msg: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{msg}}}"#
        )
    }

    /// Issue 20: the calls of an assistant message and what a tool result says are read
    /// ahead, strings written with escapes decoded; entries that make no record need
    /// nothing more; a user's command is read in order.
    #[test]
    fn calls_and_results_are_read_ahead() {
        let cases = [
            (message("a", r#"{"role":"user","content":"x"}"#), "nothing"),
            (r#"{"type":"custom","id":"b","parentId":null,"timestamp":"t"}"#.into(), "nothing"),
            (message("c", r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"stopReason":"stop"}"#), "nothing"),
            (message("d", r#"{"role":"assistant","provider":"p","model":"m","content":[{"type":"thinking","thinking":"t"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"stopReason":"toolUse"}"#), "calls"),
            (message("e", r#"{"role":"assistant","model":"m\u0031","content":[{"type":"toolCall","id":"c\u0032","name":"r\u0065ad","namespace":"mcp","arguments":null},{"type":"toolCall","name":"x"},{"type":"toolCall","id":5}],"stopReason":"aborted"}"#), "calls"),
            (message("f", r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"line\n\"q\"\u001f"},{"type":"image","mimeType":"image/png"}],"isError":false}"#), "result, text written"),
            (message("g", r#"{"role":"toolResult","toolCallId":"c\u0032","content":[{"type":"text","text":"a\/b"}],"details":{"exitCode":2},"usage":{"input":1,"cost":{"total":0.5}},"nestedCalls":{"count":1},"durationMs":12}"#), "result, text to decode"),
            (message("h", r#"{"role":"toolResult","toolCallId":"c3","content":"plain"}"#), "result, text written"),
            (message("i", r#"{"role":"toolResult","toolCallId":7,"isError":true}"#), "result"),
            (message("j", r#"{"role":"toolResult"}"#), "result"),
            (message("k", r#"{"role":"bashExecution","command":"ls","output":"x","exitCode":0}"#), "in order"),
            (r#"{"type":"\u006dessage","id":"l","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","content":"x"}}"#.into(), "result, text written"),
            // A role is matched as it decodes.
            (message("n", r#"{"role":"t\u006folResult","toolCallId":"c1","content":"x"}"#), "result, text written"),
            (message("o", r#"{"role":"\u0061ssistant","content":[{"type":"toolCall","id":"c9","name":"x","arguments":{}}]}"#), "calls"),
            (message("p", r#"{"role":"Assistant","content":[{"type":"toolCall","id":"c9","name":"x","arguments":{}}]}"#), "nothing"),
            // Strings past what is held in place: where they lie in the line, or decoded.
            (message("m", r#"{"role":"assistant","model":"a model name longer than thirty-two bytes","provider":"a provider written \u0077ith an escape, and long","content":[{"type":"toolCall","id":"toolu_0123456789abcdefghijklmnopqrstuvwxyz","name":"read","arguments":{}}]}"#), "calls"),
            (r#"{"type":"message","id":"an entry id longer than thirty-two bytes","parentId":null,"timestamp":"2026-01-01T00:00:00.000+01:00, and a few more bytes","message":{"role":"toolResult","toolCallId":"toolu_0123456789abcdefghijklmnopqrstuvwxyz","toolName":"a tool n\u0061me longer than thirty-two bytes","content":"x"}}"#.into(), "result, text written"),
        ];
        for (line, want) in cases {
            assert_eq!(ahead_of(&line, &[]), [want], "{line}");
        }
    }

    /// The options the facts depend on: --max-text decodes a text it may cut (ahead of the
    /// reader too); --no-content leaves the details out.
    #[test]
    fn facts_read_ahead_follow_the_options() {
        let line = message(
            "a",
            r#"{"role":"toolResult","toolCallId":"c1","content":[{"type":"text","text":"a long text"}],"details":{"x":1}}"#,
        );
        assert_eq!(
            ahead_of(&line, &["--max-text", "3"]),
            ["result, text decoded"]
        );
        assert_eq!(
            ahead_of(&line, &["--max-text", "30"]),
            ["result, text written"]
        );
        assert_eq!(ahead_of(&line, &["--no-content"]), ["result, text written"]);
    }
}
