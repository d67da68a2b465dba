//! What the entries say and what pi-tools concludes from it: the parts of a message entry a
//! record needs, the facts of a result, and the verdicts (status and evidence) on a call, a
//! user command and a result. The verdicts are pure functions: facts in, verdict out.

use super::args::{Args, CallStatus};
use super::text::{string_body, ResultText};
use crate::hash;
use crate::json::{self, Raw};
pub(super) use crate::message::as_i64;
use crate::message::{cost_total, for_each_usage_member, token_value, Message, NestedCalls};
use crate::message::{details_exit_code, ResultOutcome};
use crate::message::{TokenField, UsageMember};
use crate::reader::{Entry, NotedMembers};
use std::borrow::Cow;

/// The messages pi-tools makes records of, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Assistant,
    ToolResult,
    /// A user's `!cmd` (a bashExecution).
    Bash,
}

/// The message of the entry `e` and its role, when pi-tools makes records of it (a message
/// entry whose role is one of [`Role`]).
pub(super) fn message_of<'a>(e: &Entry<'a>) -> Option<(Role, Message<'a>)> {
    if !is_str(e.get("type"), "message") {
        return None;
    }
    let msg = e.message()?;
    // The role's text matched as written, decoded only when written with an escape.
    let role = json::member_named(string_body(msg.role?)?, |role| match role {
        b"assistant" => Some(Role::Assistant),
        b"toolResult" => Some(Role::ToolResult),
        b"bashExecution" => Some(Role::Bash),
        _ => None,
    })?;
    Some((role, msg))
}

/// What a call record takes from a toolCall block.
#[derive(Debug, PartialEq)]
pub(super) struct CallBlock<'a> {
    /// The id, or what is wrong with it ("no id", "an id that is not a string").
    pub(super) id: Result<Cow<'a, str>, &'static str>,
    /// The id's key as a result's `toolCallId` is joined by ([`id_key`]), with the id.
    pub(super) key: Option<u128>,
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) namespace: Option<Cow<'a, str>>,
    /// The arguments as written, unless absent or null.
    pub(super) arguments: Option<&'a [u8]>,
}

/// The toolCall blocks of an assistant message's `content`. Each block's members are read
/// once: its type and, for a toolCall, what the call needs (the last of repeated members
/// wins, as `JSON.parse` keeps).
pub(super) fn call_blocks<'a>(content: Raw<'a>, noted: json::Noted<'a>) -> Vec<CallBlock<'a>> {
    let mut blocks = Vec::new();
    // The long texts passed over (thinking, text, the arguments' strings) end where the
    // reader's scan noted (`noted`).
    content.for_each_object_element_noted(noted, |members| {
        // type, id, name, arguments, namespace: each member's name is matched once against
        // all five (`json::member_named`), not searched for a backslash once per name.
        let mut read: [Option<Raw<'_>>; 5] = [None; 5];
        for (k, v) in members {
            let slot = json::member_named(k, |name| match name {
                b"type" => Some(0),
                b"id" => Some(1),
                b"name" => Some(2),
                b"arguments" => Some(3),
                b"namespace" => Some(4),
                _ => None,
            });
            if let Some(slot) = slot {
                read[slot] = Some(v);
            }
        }
        let [kind, id, name, arguments, namespace] = read;
        if is_str(kind, "toolCall") {
            let text = id.map(|raw| raw.as_str().map(|text| (id_key(raw, &text), text)));
            let (id, key) = match text {
                Some(Some((key, id))) => (Ok(id), Some(key)),
                Some(None) => (Err("an id that is not a string"), None),
                None => (Err("no id"), None),
            };
            blocks.push(CallBlock {
                id,
                key,
                name: name.and_then(Raw::as_str),
                namespace: namespace.and_then(Raw::as_str),
                arguments: arguments.filter(|a| !a.is_null()).map(Raw::bytes),
            });
        }
    });
    blocks
}

/// The key a call's `id` and a result's `toolCallId` are joined by: a hash of the string as
/// JavaScript compares it (`json::string_key`: ids that differ only in lone surrogate escapes
/// are different ids, as they are to Pi), whose text, already read, is `text`.
// A `Cow`, not a `&str`: whether the text is borrowed says whether it is its own key.
#[allow(clippy::ptr_arg)]
pub(super) fn id_key(raw: Raw<'_>, text: &Cow<'_, str>) -> u128 {
    hash::hash128(&raw.key_of(text))
}

/// What the calls of an assistant message share besides its entry: the model, provider and
/// stop reason, when strings.
#[derive(Debug, Default, PartialEq)]
pub(super) struct TurnNames<'a> {
    pub(super) model: Option<Cow<'a, str>>,
    pub(super) provider: Option<Cow<'a, str>>,
    pub(super) stop_reason: Option<Cow<'a, str>>,
}

impl<'a> TurnNames<'a> {
    pub(super) fn read(msg: &Message<'a>) -> TurnNames<'a> {
        TurnNames {
            model: msg.model.and_then(Raw::as_str),
            provider: msg.provider.and_then(Raw::as_str),
            stop_reason: msg.stop_reason.and_then(Raw::as_str),
        }
    }
}

/// What is wrong with a toolResult's `toolCallId` (`raw`), if anything: the record's
/// diagnostic says it.
pub(super) fn call_id_problem(raw: Option<Raw<'_>>) -> Option<&'static str> {
    match raw {
        None => Some("no toolCallId"),
        Some(r) if r.as_str().is_none() => Some("a toolCallId that is not a string"),
        Some(_) => None,
    }
}

/// What decided a record's status, as its `evidence` field writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallEvidence {
    /// The result's isError is true.
    IsError,
    /// A recorded exit code (an error when non-zero).
    ExitCode,
    /// No result, and the assistant message ended with stopReason aborted or error.
    AbortedTurn,
    /// A user command marked cancelled.
    Cancelled,
    /// A result exists and nothing in it says error.
    Result,
    /// No result in the input.
    NoResult,
}

impl CallEvidence {
    pub(super) fn name(self) -> &'static str {
        match self {
            CallEvidence::IsError => "is_error",
            CallEvidence::ExitCode => "exit_code",
            CallEvidence::AbortedTurn => "aborted_turn",
            CallEvidence::Cancelled => "cancelled",
            CallEvidence::Result => "result",
            CallEvidence::NoResult => "no_result",
        }
    }
}

/// Whether a value is the JSON string `s` (escapes decoded: [`Raw::is_str`]).
pub(super) fn is_str(raw: Option<Raw<'_>>, s: &str) -> bool {
    raw.is_some_and(|r| r.is_str(s))
}

/// A result's `durationMs`: a whole number of milliseconds, not negative, however written
/// (`1e3` is 1000, as Pi's JavaScript reads it: [`token_value`]); `None` for anything else (a
/// string, a fraction, a negative number, null, one past i64).
pub(super) fn recorded_duration(raw: Raw<'_>) -> Option<i64> {
    token_value(raw)
        .ok()
        .flatten()
        .and_then(|ms| i64::try_from(ms).ok())
}

/// Whether an assistant message with this stopReason ran no tools (Pi does not run the tools
/// of an aborted or failed turn).
pub(super) fn turn_aborted(stop_reason: Option<&str>) -> bool {
    matches!(stop_reason, Some("aborted" | "error"))
}

/// The verdict on a model's call: from its result when it has one, else from its turn.
pub(super) fn call_verdict(
    result: Option<&ResultFacts<'_>>,
    turn_aborted: bool,
) -> (CallStatus, CallEvidence) {
    match result {
        Some(f) => f.verdict(),
        None if turn_aborted => (CallStatus::Error, CallEvidence::AbortedTurn),
        None => (CallStatus::NoResult, CallEvidence::NoResult),
    }
}

/// The verdict on a user's command (a bashExecution): its exit code and whether it was
/// cancelled (Pi writes no exit code for a command it killed).
pub(super) fn bash_verdict(
    exit_code: Option<i64>,
    cancelled: Option<bool>,
) -> (CallStatus, CallEvidence) {
    match (exit_code, cancelled) {
        (Some(n), _) if n != 0 => (CallStatus::Error, CallEvidence::ExitCode),
        (_, Some(true)) => (CallStatus::Ok, CallEvidence::Cancelled),
        (Some(_), _) => (CallStatus::Ok, CallEvidence::ExitCode),
        (None, _) => (CallStatus::Ok, CallEvidence::Result),
    }
}

/// The time from a call to its result (their entries' instants in milliseconds, [`Stamp`]);
/// `None` when either is unknown or the result is earlier.
pub(super) fn duration_ms(call_ms: Option<i64>, result_ms: Option<i64>) -> Option<i64> {
    let (start, end) = (call_ms?, result_ms?);
    (end >= start).then_some(end - start)
}

/// Where a call's `duration_ms` comes from, as its `duration_from` field writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DurationFrom {
    /// The result's own `durationMs` (Pi 1.x: the time the tool ran).
    Recorded,
    /// The result entry's timestamp minus the assistant entry's.
    Timestamps,
}

impl DurationFrom {
    pub(super) fn name(self) -> &'static str {
        match self {
            DurationFrom::Recorded => "recorded",
            DurationFrom::Timestamps => "timestamps",
        }
    }
}

/// A call's duration and where it comes from: the result's recorded `durationMs` when there
/// is one; else, when the call is the only one of its assistant message (`calls` toolCall
/// blocks), the time between the two entries ([`duration_ms`]); else none. Pi writes the
/// results of one message's calls after all of them ran (parallel, its default) or each as it
/// ends (sequential), so with several calls the time between the entries is not one call's.
pub(super) fn call_duration(
    recorded: Option<i64>,
    calls: usize,
    call_ms: Option<i64>,
    result_ms: Option<i64>,
) -> Option<(i64, DurationFrom)> {
    match recorded {
        Some(ms) => Some((ms, DurationFrom::Recorded)),
        None if calls == 1 => {
            duration_ms(call_ms, result_ms).map(|ms| (ms, DurationFrom::Timestamps))
        }
        None => None,
    }
}

/// What a record says of the entry it comes from besides its line: the entry's `id` and
/// `timestamp` when strings, and the timestamp's instant in milliseconds, parsed once.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Stamp<'a> {
    pub(super) id: Option<Cow<'a, str>>,
    pub(super) timestamp: Option<Cow<'a, str>>,
    pub(super) ms: Option<i64>,
}

impl<'a> Stamp<'a> {
    pub(super) fn new(id: Option<Cow<'a, str>>, timestamp: Option<Cow<'a, str>>) -> Stamp<'a> {
        let ms = timestamp.as_deref().and_then(crate::time::parse_iso8601);
        Stamp { id, timestamp, ms }
    }

    /// The stamp of the entry `e`.
    pub(super) fn of(e: &Entry<'a>) -> Stamp<'a> {
        Stamp::new(e.str("id"), e.str("timestamp"))
    }
}

/// The parts of an entry a record needs, from the reader or from a line read again.
pub(super) struct MessageLine<'a> {
    pub(super) no: u64,
    pub(super) stamp: Stamp<'a>,
    pub(super) msg: Message<'a>,
    /// The line was found valid UTF-8 by the reader ([`Entry::is_utf8`]).
    pub(super) utf8: bool,
    /// The strings the reader's scan noted in the line ([`Entry::noted_strings`]).
    pub(super) strings: json::Noted<'a>,
}

impl<'a> MessageLine<'a> {
    pub(super) fn from_entry(e: &Entry<'a>, msg: Message<'a>) -> MessageLine<'a> {
        MessageLine {
            no: e.line.no,
            stamp: Stamp::of(e),
            msg,
            utf8: e.is_utf8(),
            strings: e.noted_strings(),
        }
    }

    /// The result this line is, as a record writes it.
    pub(super) fn answer(self, args: &Args) -> Answer<'a> {
        Answer {
            facts: ResultFacts::read(&self.msg, args, self.utf8, self.strings),
            no: self.no,
            stamp: self.stamp,
        }
    }

    /// Scans a whole entry line again; `None` when it is not the object it was.
    pub(super) fn parse(no: u64, bytes: &'a [u8]) -> Option<MessageLine<'a>> {
        let (mut id, mut ts, mut msg) = (None, None, None);
        let object = json::scan_members(bytes, 0, |k, v| {
            if json::key_is(k, "id") {
                id = Some(v);
            } else if json::key_is(k, "timestamp") {
                ts = Some(v);
            } else if json::key_is(k, "message") {
                msg = Some(v);
            }
        })
        .ok()?;
        (object.len() == bytes.len()).then_some(())?;
        Some(MessageLine {
            no,
            stamp: Stamp::new(id.and_then(Raw::as_str), ts.and_then(Raw::as_str)),
            msg: Message::read(msg?),
            utf8: false,
            strings: json::Noted::default(),
        })
    }
}

/// A result as a record writes it: its line, its entry's stamp, and what it says.
pub(super) struct Answer<'a> {
    pub(super) no: u64,
    pub(super) stamp: Stamp<'a>,
    pub(super) facts: ResultFacts<'a>,
}

/// What a result says: a toolResult message, or the output of a user's command.
#[derive(Debug, PartialEq)]
pub(super) struct ResultFacts<'a> {
    pub(super) call_id: Option<Cow<'a, str>>,
    /// The `toolCallId`'s key ([`id_key`]), with it.
    pub(super) call_key: Option<u128>,
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) is_error: Option<bool>,
    pub(super) exit_code: Option<i64>,
    /// `None` when absent or left out (--no-content).
    pub(super) details: Option<&'a [u8]>,
    /// `None` when the message has no content.
    pub(super) text: Option<ResultText<'a>>,
    pub(super) images: u64,
    pub(super) image_types: Vec<Option<Cow<'a, str>>>,
    /// Pi 1.x: the `usage` of the tool's own model calls, when recorded.
    pub(super) usage: Option<ResultUsage<'a>>,
    /// Pi 1.x: what `nestedCalls` lists, when recorded.
    pub(super) nested_calls: Option<NestedCalls>,
    /// Pi 1.x: `durationMs`, the time the tool ran, when a whole number of milliseconds that
    /// is not negative ([`recorded_duration`]).
    pub(super) duration_ms: Option<i64>,
}

/// A tool result's `usage`: its token fields (`None` when absent or not a count), and its
/// `cost.total` as written (a number) with `cost.totalFromProvider`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct ResultUsage<'a> {
    /// input, output, cacheRead, cacheWrite, totalTokens, reasoning, cacheWrite1h (in the
    /// order of [`TokenField::ALL`]).
    pub(super) tokens: [Option<u64>; 7],
    pub(super) cost: Option<&'a [u8]>,
    pub(super) cost_from_provider: Option<bool>,
}

impl<'a> ResultUsage<'a> {
    /// The usage `u` records (`noted`: its members as the reader noted them); `None` when it
    /// is not an object.
    pub(super) fn read(u: Raw<'a>, noted: NotedMembers<'a>) -> Option<ResultUsage<'a>> {
        if u.first() != Some(&b'{') {
            return None;
        }
        let mut r = ResultUsage::default();
        for_each_usage_member(u, noted, |m| match m {
            UsageMember::Token(field, Ok(n)) => r.tokens[field as usize] = n,
            UsageMember::Cost(c) => {
                let (total, from_provider) = cost_total(c);
                r.cost = total.filter(|t| t.as_f64().is_some()).map(Raw::bytes);
                r.cost_from_provider = from_provider.and_then(Raw::as_bool);
            }
            UsageMember::Token(_, Err(_)) | UsageMember::OtherNumber(..) => {}
        });
        Some(r)
    }

    /// The count of `field`.
    pub(super) fn get(&self, field: TokenField) -> Option<u64> {
        self.tokens[field as usize]
    }

    /// input + output + cacheRead + cacheWrite (Pi's session-stats total), `None` when one
    /// of them is unknown.
    pub(super) fn tokens_sum(&self) -> Option<u128> {
        self.tokens[..4]
            .iter()
            .try_fold(0u128, |sum, t| t.map(|t| sum + u128::from(t)))
    }
}

/// The members of a result's content block that [`ResultFacts::read`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartMember {
    Type,
    Text,
    MimeType,
}

/// Which of [`PartMember`] the raw member name `k` is, if any.
fn part_member(k: &[u8]) -> Option<PartMember> {
    json::member_named(k, |name| match name {
        b"type" => Some(PartMember::Type),
        b"text" => Some(PartMember::Text),
        b"mimeType" => Some(PartMember::MimeType),
        _ => None,
    })
}

impl<'a> ResultFacts<'a> {
    /// The facts of a toolResult message; `utf8`: its line is known to be valid UTF-8;
    /// `strings`: the strings the reader's scan noted in it (a text's end and measure are
    /// taken from there).
    pub(super) fn read(
        m: &Message<'a>,
        args: &Args,
        utf8: bool,
        strings: json::Noted<'a>,
    ) -> ResultFacts<'a> {
        let (call_id, name, content, is_error, details) = (
            m.tool_call_id,
            m.tool_name,
            m.content,
            m.is_error,
            m.details,
        );
        let exit_code = details.and_then(details_exit_code);
        let mut images = 0;
        let mut image_types = Vec::new();
        let text = content.and_then(|c| {
            if let Some(t) = ResultText::of_string(c, args, utf8) {
                return Some(t);
            }
            if c.first() != Some(&b'[') {
                return None;
            }
            let mut parts = Vec::new();
            // The bytes of the parts' text while each is written as the output writes it:
            // checked as its end is found.
            let mut written = Some(0);
            c.for_each_object_element_noted(strings, |block| {
                let (mut kind, mut t, mut mime) = (None, None, None);
                // Each member's name is matched once (`json::member_named`): when its value
                // is a string, as it is read (a text is checked as its end is found).
                let is_text = |k: &[u8]| part_member(k) == Some(PartMember::Text);
                while let Some((k, v, checked)) = block.next_written(is_text) {
                    let member = match checked {
                        Some(_) => Some(PartMember::Text),
                        None => part_member(k),
                    };
                    match member {
                        Some(PartMember::Type) => kind = Some(v),
                        Some(PartMember::Text) => t = Some((v, checked.flatten())),
                        Some(PartMember::MimeType) => mime = Some(v),
                        None => {}
                    }
                }
                if is_str(kind, "text") {
                    if let Some((body, len)) = t.and_then(|(t, len)| Some((string_body(t)?, len))) {
                        parts.push(body);
                        written = written.zip(len).map(|(sum, len)| sum + len);
                    }
                } else if is_str(kind, "image") {
                    images += 1;
                    image_types.push(mime.and_then(Raw::as_str));
                }
            });
            Some(ResultText::of(parts, written, args, utf8))
        });
        let call_id = call_id.and_then(|raw| raw.as_str().map(|text| (id_key(raw, &text), text)));
        ResultFacts {
            call_key: call_id.as_ref().map(|(key, _)| *key),
            call_id: call_id.map(|(_, text)| text),
            name: name.and_then(Raw::as_str),
            is_error: is_error.and_then(Raw::as_bool),
            exit_code,
            details: details
                .filter(|d| !args.no_content && !d.is_null())
                .map(Raw::bytes),
            text,
            images,
            image_types,
            usage: m.usage.and_then(|u| ResultUsage::read(u, m.usage_noted)),
            nested_calls: m.nested_calls.and_then(NestedCalls::read),
            duration_ms: m.duration_ms.and_then(recorded_duration),
        }
    }

    /// The result of a user's command (a bashExecution, `m`) whose exit code is `exit_code`:
    /// its output as the text, no images, no isError, no details. `utf8` as for [`Self::read`].
    pub(super) fn of_bash(
        m: &Message<'a>,
        exit_code: Option<i64>,
        args: &Args,
        utf8: bool,
    ) -> ResultFacts<'a> {
        ResultFacts {
            call_id: None,
            call_key: None,
            name: Some(Cow::Borrowed("bash")),
            is_error: None,
            exit_code,
            details: None,
            text: m.output.and_then(|o| ResultText::of_string(o, args, utf8)),
            images: 0,
            image_types: Vec::new(),
            usage: None,
            nested_calls: None,
            duration_ms: None,
        }
    }

    /// The verdict the result gives its call: isError first, then the exit code
    /// ([`ResultOutcome`], the rule pi-branch's "(error)" mark follows too).
    pub(super) fn verdict(&self) -> (CallStatus, CallEvidence) {
        let outcome = ResultOutcome::of(self.is_error, self.exit_code);
        let status = match outcome.failed() {
            true => CallStatus::Error,
            false => CallStatus::Ok,
        };
        let evidence = match outcome {
            ResultOutcome::IsError => CallEvidence::IsError,
            ResultOutcome::ExitCode(_) => CallEvidence::ExitCode,
            ResultOutcome::NoError => CallEvidence::Result,
        };
        (status, evidence)
    }
}

/// What Pi recorded about the run of a user's command, besides its output.
pub(super) struct BashRun<'a> {
    pub(super) cancelled: Option<bool>,
    pub(super) truncated: Option<bool>,
    pub(super) full_output_path: Option<Cow<'a, str>>,
    pub(super) exclude_from_context: Option<bool>,
}

impl<'a> BashRun<'a> {
    pub(super) fn read(m: &Message<'a>, cancelled: Option<bool>) -> BashRun<'a> {
        BashRun {
            cancelled,
            truncated: m.truncated.and_then(Raw::as_bool),
            full_output_path: m.full_output_path.and_then(Raw::as_str),
            exclude_from_context: m.exclude_from_context.and_then(Raw::as_bool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn facts(message: &str, args: &[&str]) -> (CallStatus, CallEvidence) {
        let args = Args::try_parse_from([&["pi-tools"], args].concat()).unwrap();
        let message = json::validate(message.as_bytes()).unwrap();
        ResultFacts::read(
            &Message::read(message),
            &args,
            false,
            json::Noted::default(),
        )
        .verdict()
    }

    #[test]
    fn a_result_is_an_error_by_is_error_first_then_by_exit_code() {
        use CallStatus::{Error, Ok};
        let r = |m| facts(m, &[]);
        assert_eq!(
            r(r#"{"isError":true,"details":{"exitCode":0}}"#),
            (Error, CallEvidence::IsError)
        );
        assert_eq!(
            r(r#"{"isError":false,"details":{"exitCode":2}}"#),
            (Error, CallEvidence::ExitCode)
        );
        assert_eq!(
            r(r#"{"details":{"exit_code":-1}}"#),
            (Error, CallEvidence::ExitCode)
        );
        assert_eq!(
            r(r#"{"details":{"exitCode":0,"exit_code":1}}"#),
            (Ok, CallEvidence::ExitCode)
        );
        assert_eq!(
            r(r#"{"details":{"exitCode":"1"}}"#),
            (Ok, CallEvidence::Result)
        );
        assert_eq!(r(r#"{"content":[]}"#), (Ok, CallEvidence::Result));
        // --no-content leaves details out of the record, not out of the verdict.
        assert_eq!(
            facts(r#"{"details":{"exitCode":3}}"#, &["--no-content"]),
            (Error, CallEvidence::ExitCode)
        );
    }

    /// A member whose name is written with an escape is read as the name it decodes to, in
    /// a toolCall block and in a result's content blocks.
    #[test]
    fn member_names_are_read_as_they_decode() {
        let content = json::validate(
            br#"[{"typ\u0065":"toolCall","\u0069d":"c","n\u0061me":"read","arguments":{}},{"type":"text","text":"x"}]"#,
        )
        .unwrap();
        let blocks = call_blocks(content, json::Noted::default());
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].id, Ok("c".into()));
        assert_eq!(blocks[0].name.as_deref(), Some("read"));
        assert_eq!(blocks[0].arguments, Some(&b"{}"[..]));
        let args = Args::try_parse_from(["pi-tools"]).unwrap();
        let message = json::validate(
            br#"{"content":[{"t\u0079pe":"text","te\u0078t":"hi"},{"type":"image","mim\u0065Type":"image/png"}]}"#,
        )
        .unwrap();
        let facts = ResultFacts::read(
            &Message::read(message),
            &args,
            false,
            json::Noted::default(),
        );
        assert_eq!(facts.text.map(|t| t.bytes()), Some(2));
        assert_eq!(facts.image_types, [Some("image/png".into())]);
    }

    #[test]
    fn a_call_without_a_result_is_an_error_only_in_an_aborted_turn() {
        assert!(turn_aborted(Some("aborted")) && turn_aborted(Some("error")));
        assert!(!turn_aborted(Some("toolUse")) && !turn_aborted(None));
        assert_eq!(
            call_verdict(None, true),
            (CallStatus::Error, CallEvidence::AbortedTurn)
        );
        assert_eq!(
            call_verdict(None, false),
            (CallStatus::NoResult, CallEvidence::NoResult)
        );
    }

    #[test]
    fn a_user_command_is_an_error_only_by_a_non_zero_exit_code() {
        use CallStatus::{Error, Ok};
        assert_eq!(
            bash_verdict(Some(1), Some(true)),
            (Error, CallEvidence::ExitCode)
        );
        assert_eq!(
            bash_verdict(None, Some(true)),
            (Ok, CallEvidence::Cancelled)
        );
        assert_eq!(
            bash_verdict(Some(0), Some(true)),
            (Ok, CallEvidence::Cancelled)
        );
        assert_eq!(
            bash_verdict(Some(0), Some(false)),
            (Ok, CallEvidence::ExitCode)
        );
        assert_eq!(bash_verdict(None, None), (Ok, CallEvidence::Result));
    }

    #[test]
    fn a_string_is_compared_as_it_decodes() {
        let is = |text: &str, s: &str| is_str(Some(json::validate(text.as_bytes()).unwrap()), s);
        assert!(is(r#""toolCall""#, "toolCall"));
        assert!(is(r#""tool\u0043all""#, "toolCall"), "an escape is decoded");
        assert!(is(r#""\u0074oolCall""#, "toolCall"));
        assert!(!is(r#""toolcall""#, "toolCall"));
        assert!(!is(r#""toolCall ""#, "toolCall"));
        assert!(!is(r#""tool\nCall""#, "toolCall"));
        assert!(!is("7", "7"), "not a string");
        assert!(!is_str(None, "toolCall"));
    }

    #[test]
    fn integers_are_exit_codes_and_other_values_are_not() {
        let n = |text: &[u8]| as_i64(json::validate(text).unwrap());
        assert_eq!(n(b"-3"), Some(-3));
        assert_eq!(n(b"2.0"), Some(2));
        assert_eq!(n(b"1e2"), Some(100));
        assert_eq!(n(b"2.5"), None);
        assert_eq!(n(b"\"1\""), None);
    }

    #[test]
    fn a_duration_needs_both_instants_in_order() {
        let at = |t: &'static str| Stamp::new(None, Some(t.into())).ms;
        let call = at("2026-01-01T00:00:00Z");
        assert_eq!(duration_ms(call, at("2026-01-01T00:00:01.5Z")), Some(1500));
        assert_eq!(duration_ms(call, at("2026-01-01T01:00:00+01:00")), Some(0));
        assert_eq!(duration_ms(call, at("2025-12-31T23:59:59Z")), None);
        assert_eq!(duration_ms(None, at("2026-01-01T00:00:01Z")), None);
        assert_eq!(duration_ms(call, at("yesterday")), None);
        assert_eq!(duration_ms(call, None), None);
    }

    #[test]
    fn a_recorded_duration_comes_first_and_the_entries_time_serves_a_lone_call_only() {
        let (rec, ts) = (DurationFrom::Recorded, DurationFrom::Timestamps);
        let (call, result) = (Some(1_000), Some(1_250));
        assert_eq!(call_duration(Some(40), 1, call, result), Some((40, rec)));
        assert_eq!(call_duration(Some(40), 3, call, result), Some((40, rec)));
        assert_eq!(call_duration(Some(40), 2, None, None), Some((40, rec)));
        assert_eq!(call_duration(None, 1, call, result), Some((250, ts)));
        assert_eq!(call_duration(None, 1, result, call), None);
        assert_eq!(call_duration(None, 1, None, result), None);
        assert_eq!(call_duration(None, 2, call, result), None);
    }

    #[test]
    fn a_recorded_duration_is_a_whole_number_not_negative() {
        let d = |text: &[u8]| recorded_duration(json::validate(text).unwrap());
        assert_eq!(d(b"0"), Some(0));
        assert_eq!(d(b"4990"), Some(4990));
        assert_eq!(d(b"1e3"), Some(1000));
        assert_eq!(d(b"12.0"), Some(12));
        assert_eq!(d(b"-5"), None);
        assert_eq!(d(b"1.5"), None);
        assert_eq!(d(b"\"12\""), None);
        assert_eq!(d(b"null"), None);
        assert_eq!(d(b"9223372036854775808"), None);
        let facts = |m: &str| {
            let args = Args::try_parse_from(["pi-tools"]).unwrap();
            ResultFacts::read(
                &Message::read(json::validate(m.as_bytes()).unwrap()),
                &args,
                false,
                json::Noted::default(),
            )
            .duration_ms
        };
        assert_eq!(facts(r#"{"durationMs":7}"#), Some(7));
        assert_eq!(facts(r#"{"duration\u004ds":7}"#), Some(7));
        assert_eq!(facts(r#"{"durationMs":"7"}"#), None);
    }
}
