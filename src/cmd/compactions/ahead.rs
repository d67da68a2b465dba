//! What pi-compactions reads of an entry from the entry alone (issue 20): its type and, for a
//! message, the role, stop reason, usage counts and error class. On a large input the prescan
//! threads read these ahead of the reader ([`reader::Ahead`]) and the reporter takes them with
//! the entry; otherwise (a small input, one thread, a line the reader read again, a name
//! written with escapes) the reporter reads them in order with the same functions.

use super::errors::{is_pi073_overflow_error, is_pi16_overflow_error};
use super::read::{name_of, str_of, UsageCounts};
use super::trigger::StopReason;
use crate::message::Message;
use crate::reader::{self, Entry};
use std::borrow::Cow;
use std::ops::Range;

/// An entry's `type`, as the reporter tells them apart (by the raw value: a type written with
/// escapes is none of them, as before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryType {
    Message,
    ModelChange,
    ContextEdit,
    Usage,
    Compaction,
    BranchSummary,
    /// An entry that changes a setting or names something and starts nothing: a
    /// thinking_level_change, a label, a session_info.
    Setting,
    Other,
}

impl EntryType {
    pub(super) fn of(e: &Entry<'_>) -> EntryType {
        let kind = e.get("type").and_then(|t| {
            t.read_as(|t| match t {
                b"\"message\"" => Some(EntryType::Message),
                b"\"model_change\"" => Some(EntryType::ModelChange),
                b"\"context_edit\"" => Some(EntryType::ContextEdit),
                b"\"usage\"" => Some(EntryType::Usage),
                b"\"compaction\"" => Some(EntryType::Compaction),
                b"\"branch_summary\"" => Some(EntryType::BranchSummary),
                b"\"thinking_level_change\"" | b"\"label\"" | b"\"session_info\"" => {
                    Some(EntryType::Setting)
                }
                _ => None,
            })
        });
        kind.unwrap_or(EntryType::Other)
    }
}

/// What a message entry's `message` says by its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    User,
    ToolResult,
    System,
    Assistant(AssistantRead),
    /// No role pi-compactions reads (or no `message` object).
    Other,
}

/// What an assistant message says of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AssistantRead {
    pub stop: StopReason,
    pub usage: UsageCounts,
    /// A failed stop (error, aborted) or an `errorMessage`: the reporter reads the message
    /// again for its error record.
    pub error: bool,
    /// See [`super::trigger::AssistantFacts`].
    pub overflow: bool,
    pub overflow_pi16: bool,
}

impl AssistantRead {
    /// A stop reason of error or aborted: the reply's usage is not a context size.
    pub fn failed(&self) -> bool {
        matches!(self.stop, StopReason::Error | StopReason::Aborted)
    }
}

/// A message read: its role's facts and, for an assistant message naming both, the provider
/// and model (numbered in order, by the session).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct MessageRead<'e> {
    pub role: Role,
    pub names: Option<(Cow<'e, str>, Cow<'e, str>)>,
}

/// Reads `msg`.
pub(super) fn read_message<'e>(msg: &Message<'e>) -> MessageRead<'e> {
    let role = match name_of(msg.role).as_deref() {
        Some(b"user") => Role::User,
        Some(b"toolResult") => Role::ToolResult,
        Some(b"system") => Role::System,
        Some(b"assistant") => {
            let provider = str_of(msg.provider);
            let stop = StopReason::of(name_of(msg.stop_reason).as_deref());
            let text = str_of(msg.error_message);
            let read = AssistantRead {
                stop,
                usage: UsageCounts::of(msg),
                error: matches!(stop, StopReason::Error | StopReason::Aborted)
                    || msg.error_message.is_some(),
                overflow: is_pi073_overflow_error(stop, text.as_deref()),
                overflow_pi16: is_pi16_overflow_error(stop, text.as_deref(), provider.as_deref()),
            };
            let names = provider.zip(str_of(msg.model));
            return MessageRead {
                role: Role::Assistant(read),
                names,
            };
        }
        _ => Role::Other,
    };
    MessageRead { role, names: None }
}

/// What is read of an entry ahead of the reader.
pub(super) struct EntryAhead {
    kind: EntryType,
    message: MessageAhead,
}

/// A message's facts read ahead: the names as places in the line.
enum MessageAhead {
    /// Not a message entry.
    None,
    Read {
        role: Role,
        names: Option<(Range<usize>, Range<usize>)>,
    },
    /// A name written with escapes (decoded, it is no slice of the line): read in order.
    InOrder,
}

/// The facts of `e` read ahead (the function the prescan threads run, [`reader::AheadFn`]).
pub(super) fn entry_ahead(e: &Entry<'_>) -> EntryAhead {
    let kind = EntryType::of(e);
    let message = match kind {
        EntryType::Message => {
            let read = read_message(&e.message_or_default());
            match read
                .names
                .as_ref()
                .map(|(p, m)| e.place_of(p).zip(e.place_of(m)))
            {
                None => MessageAhead::Read {
                    role: read.role,
                    names: None,
                },
                Some(Some(names)) => MessageAhead::Read {
                    role: read.role,
                    names: Some(names),
                },
                Some(None) => MessageAhead::InOrder,
            }
        }
        _ => MessageAhead::None,
    };
    EntryAhead { kind, message }
}

/// The [`reader::Ahead`] of pi-compactions.
pub(super) fn reader_ahead() -> reader::AheadFn<EntryAhead> {
    reader::AheadFn(entry_ahead)
}

/// The type of `e`: read ahead, or now.
pub(super) fn entry_type(e: &Entry<'_>) -> EntryType {
    match e.ahead::<EntryAhead>() {
        Some(a) => a.kind,
        None => EntryType::of(e),
    }
}

/// The message of `e` (an entry of type message): read ahead, or now.
pub(super) fn message_of<'e>(e: &Entry<'e>) -> MessageRead<'e> {
    e.ahead::<EntryAhead>()
        .and_then(|a| a.message.resolve(e))
        .unwrap_or_else(|| read_message(&e.message_or_default()))
}

impl MessageAhead {
    /// The message read ahead, its names found in `e`'s line; `None` when it was not read
    /// ahead (or its names are not where they were).
    fn resolve<'e>(&self, e: &Entry<'e>) -> Option<MessageRead<'e>> {
        let MessageAhead::Read { role, names } = self else {
            return None;
        };
        let names = match names {
            None => None,
            Some((p, m)) => Some((e.text_at(p.clone())?.into(), e.text_at(m.clone())?.into())),
        };
        Some(MessageRead { role: *role, names })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`entry_ahead`] makes of each entry of `text` (one session): the entry's type and
    /// how its message is read; a message read ahead must resolve to what reading it in order
    /// gives.
    fn ahead_of(text: &str) -> Vec<(EntryType, &'static str)> {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t"}"#;
        reader::map_entries(&format!("{header}\n{text}"), |e| {
            let a = entry_ahead(e);
            assert_eq!(a.kind, EntryType::of(e));
            let how = match &a.message {
                MessageAhead::None => "not a message",
                MessageAhead::InOrder => "in order",
                MessageAhead::Read { .. } => {
                    let now = read_message(&e.message_or_default());
                    assert_eq!(a.message.resolve(e), Some(now), "{:?}", e.line.no);
                    "ahead"
                }
            };
            (a.kind, how)
        })
    }

    /// Issue 20: what a message says of itself is read ahead, its names found again in the
    /// line; a provider or model written with escapes sends the message to be read in order.
    #[test]
    fn messages_are_read_ahead_unless_a_name_has_escapes() {
        let m = |msg: &str| {
            format!(
                r#"{{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{msg}}}"#
            )
        };
        let usage =
            r#""usage":{"input":10,"output":2,"cacheRead":5,"cacheWrite":1,"totalTokens":18}"#;
        let cases = [
            (m(r#"{"role":"user","content":"x"}"#), (EntryType::Message, "ahead")),
            (m(r#"{"role":"toolResult","content":[]}"#), (EntryType::Message, "ahead")),
            (m(r#"{"role":"system","content":"x"}"#), (EntryType::Message, "ahead")),
            (m(&format!(r#"{{"role":"assistant","provider":"p","model":"m",{usage},"stopReason":"stop"}}"#)), (EntryType::Message, "ahead")),
            (m(&format!(r#"{{"role":"assistant","provider":"p","model":"m\u00e9",{usage}}}"#)), (EntryType::Message, "in order")),
            (m(r#"{"role":"assistant","provider":"anthropic","model":"m","stopReason":"error","errorMessage":"prompt is too long: 250000 tokens > 200000 maximum"}"#), (EntryType::Message, "ahead")),
            (m(r#"{"role":"assistant","model":"m","stopReason":"aborted"}"#), (EntryType::Message, "ahead")),
            (m(r#""not an object""#), (EntryType::Message, "ahead")),
            (r#"{"type":"model_change","id":"b","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#.into(), (EntryType::ModelChange, "not a message")),
            // A type written with an escape is the type it stands for, as Pi reads it.
            (r#"{"type":"\u006dessage","id":"c","parentId":null,"timestamp":"t","message":{"role":"user"}}"#.into(), (EntryType::Message, "ahead")),
            (r#"{"type":"compaction","id":"d","parentId":null,"timestamp":"t","summary":"s"}"#.into(), (EntryType::Compaction, "not a message")),
        ];
        for (line, want) in cases {
            assert_eq!(ahead_of(&line), [want], "{line}");
        }
    }

    /// The error class is read from the message alone (with its provider for Pi 1.6.0's
    /// patterns).
    #[test]
    fn an_overflow_error_is_classed_ahead() {
        let msg = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","provider":"anthropic","model":"m","stopReason":"error","errorMessage":"prompt is too long: 250000 tokens > 200000 maximum"}}"#;
        let line = format!(
            "{}\n{msg}\n",
            r#"{"type":"session","version":3,"id":"s","timestamp":"t"}"#
        );
        let a = reader::map_entries(&line, |e| match message_of(e).role {
            Role::Assistant(a) => Some(a),
            _ => None,
        })
        .into_iter()
        .flatten()
        .next()
        .expect("an assistant message");
        assert!(
            a.error && a.failed() && a.overflow && a.overflow_pi16,
            "{a:?}"
        );
        assert_eq!(a.usage.context(), None);
    }
}
