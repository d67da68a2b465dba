//! The records that wait to be written, and what a session keeps while they wait: the queue in
//! input order ([`Ordered`]) and, per call id, the latest call a result can still join.
//!
//! Given a FILE, a waiting record costs its ids and byte offsets ([`KeptBytes::At`]): its
//! result is read again when it is written, and its arguments too once the waiting calls'
//! copies pass their budget ([`KeptBytes::keep_within`]). From stdin, the bytes themselves
//! are kept, or the record is rendered at once and held as it will be written.

use super::facts::{turn_aborted, Stamp, TurnNames};
use super::records::record_head;
use crate::hash::Hash128Map;
use crate::ordered::Ordered;
use crate::reader::{Entry, Header};
use std::fs::File;
use std::rc::Rc;

/// Bytes kept for later: in memory (stdin), or where they are in the file.
pub(super) enum KeptBytes {
    Mem(Box<[u8]>),
    At { offset: u64, len: u64 },
}

impl KeptBytes {
    /// Keeps `bytes` (a slice of the current line of `e`): where they are when there is a
    /// `file` to read them from again, else a copy.
    pub(super) fn keep(file: Option<&File>, e: &Entry<'_>, bytes: &[u8]) -> KeptBytes {
        match file {
            Some(_) => KeptBytes::At {
                offset: e.line.offset + (bytes.as_ptr() as u64 - e.line.bytes.as_ptr() as u64),
                len: bytes.len() as u64,
            },
            None => KeptBytes::Mem(bytes.into()),
        }
    }

    /// As [`KeptBytes::keep`], but a copy even given a FILE while `budget` (bytes) allows,
    /// taken from it: bytes that are mostly written soon (a call's arguments: its result
    /// mostly follows) are then neither read from the file nor checked again.
    pub(super) fn keep_within(
        file: Option<&File>,
        e: &Entry<'_>,
        bytes: &[u8],
        budget: &mut usize,
    ) -> KeptBytes {
        if file.is_some() && bytes.len() <= *budget {
            *budget -= bytes.len();
            return KeptBytes::Mem(bytes.into());
        }
        KeptBytes::keep(file, e, bytes)
    }

    /// Gives back to `budget` what [`KeptBytes::keep_within`] took from it for these bytes.
    pub(super) fn give_back(&self, file: Option<&File>, budget: &mut usize) {
        if let (KeptBytes::Mem(b), Some(_)) = (self, file) {
            *budget += b.len();
        }
    }
}

/// Several optional strings kept in one allocation (a turn's or a call's names): a call
/// waits in memory until its result comes, and one allocation per call and per turn, not one
/// per string, is what keeping them costs (issue 20).
pub(super) struct Strings<const N: usize> {
    text: Box<str>,
    /// Where each string lies in `text`, when there is one.
    parts: [Option<(u32, u32)>; N],
}

impl<const N: usize> Strings<N> {
    pub(super) fn new(strings: [Option<&str>; N]) -> Strings<N> {
        let mut text = String::with_capacity(strings.iter().flatten().map(|s| s.len()).sum());
        let parts = strings.map(|s| {
            let s = s?;
            let start = text.len();
            text.push_str(s);
            // A line is far shorter than 4 GiB in any session; past that, the string is
            // left out rather than cut.
            Some((u32::try_from(start).ok()?, u32::try_from(text.len()).ok()?))
        });
        Strings {
            text: text.into_boxed_str(),
            parts,
        }
    }

    /// The string `k` (given at `new`'s index `k`).
    pub(super) fn get(&self, k: usize) -> Option<&str> {
        let (start, end) = self.parts[k]?;
        self.text.get(start as usize..end as usize)
    }
}

/// What the calls of one assistant entry share.
pub(super) struct CallingTurn {
    pub(super) line: u64,
    pub(super) entry: Option<Rc<str>>,
    pub(super) ms: Option<i64>,
    /// How many toolCall blocks the message holds: the time between its entry and a result's
    /// is one call's only when it holds one ([`super::facts::call_duration`]).
    pub(super) calls: usize,
    /// The timestamp, model, provider and stop reason ([`CallingTurn::timestamp`] ...).
    names: Strings<4>,
}

impl CallingTurn {
    /// The turn of the assistant entry on line `line`, stamped `stamp`, whose message names
    /// `names` and holds `calls` toolCall blocks.
    pub(super) fn new(
        line: u64,
        stamp: Stamp<'_>,
        names: TurnNames<'_>,
        calls: usize,
    ) -> CallingTurn {
        CallingTurn {
            line,
            entry: stamp.id.map(|i| Rc::from(&*i)),
            ms: stamp.ms,
            calls,
            names: Strings::new([
                stamp.timestamp.as_deref(),
                names.model.as_deref(),
                names.provider.as_deref(),
                names.stop_reason.as_deref(),
            ]),
        }
    }

    pub(super) fn timestamp(&self) -> Option<&str> {
        self.names.get(0)
    }

    pub(super) fn model(&self) -> Option<&str> {
        self.names.get(1)
    }

    pub(super) fn provider(&self) -> Option<&str> {
        self.names.get(2)
    }

    pub(super) fn stop_reason(&self) -> Option<&str> {
        self.names.get(3)
    }

    pub(super) fn aborted(&self) -> bool {
        turn_aborted(self.stop_reason())
    }
}

/// One toolCall block, waiting for its record to be written.
pub(super) struct PendingCall {
    pub(super) turn: Rc<CallingTurn>,
    /// The id, name and namespace (Pi 1.x: the group a tool belongs to, such as an MCP
    /// server's): [`PendingCall::id`] ...
    pub(super) names: Strings<3>,
    /// `None` when the block has no arguments or they are not written (--no-content, --name).
    pub(super) arguments: Option<KeptBytes>,
    pub(super) arguments_bytes: Option<u64>,
    /// The result, once it arrived.
    pub(super) answer: CallAnswer,
}

impl PendingCall {
    pub(super) fn id(&self) -> Option<&str> {
        self.names.get(0)
    }

    pub(super) fn name(&self) -> Option<&str> {
        self.names.get(1)
    }

    pub(super) fn namespace(&self) -> Option<&str> {
        self.names.get(2)
    }
}

/// Whether a call got its result.
pub(super) enum CallAnswer {
    /// A result may still come.
    Waiting,
    /// No result can join this call any more (a later call took its id).
    Closed,
    /// The line number of the result, and the line.
    Answered(u64, KeptBytes),
}

/// A record waiting for its turn to be written.
pub(super) enum WaitingRecord {
    Call(PendingCall),
    /// A bashExecution entry (line number, the line).
    Bash(u64, KeptBytes),
    /// An orphan or duplicate toolResult (line number, the line, the call it duplicates).
    Result(u64, KeptBytes, Option<DuplicateOf>),
    /// A record already rendered, with its newline (empty when the filters left it out).
    /// From stdin, records that wait behind an unanswered call are kept this way.
    Ready(Box<[u8]>),
}

impl WaitingRecord {
    /// Whether it can be written: all but a call that may still get its result.
    pub(super) fn settled(&self) -> bool {
        !matches!(
            self,
            WaitingRecord::Call(PendingCall {
                answer: CallAnswer::Waiting,
                ..
            })
        )
    }
}

/// The call a duplicate result names, and the result it kept.
pub(super) struct DuplicateOf {
    pub(super) call_line: u64,
    pub(super) call_entry: Option<Rc<str>>,
    pub(super) result_line: u64,
}

/// The latest call with one id: the only one a result with that id can join.
pub(super) struct LatestCall {
    /// Its sequence number in the queue.
    pub(super) seq: u64,
    pub(super) call_line: u64,
    /// The line of its result once it has one, else 0 (lines count from 1).
    pub(super) result_line: u64,
    /// Shared with the call's other records.
    pub(super) call_entry: Option<Rc<str>>,
}

/// What pi-tools keeps about the session being read.
pub(super) struct JoinSession {
    /// The members every record of the session starts with ([`record_head`]).
    pub(super) head: Box<[u8]>,
    pub(super) waiting: Ordered<WaitingRecord>,
    /// Call id (its [`crate::hash::hash128`]) → the latest call with that id: the only one a
    /// result can join. Kept for the whole session, so kept small.
    pub(super) latest: Hash128Map<LatestCall>,
}

impl JoinSession {
    /// The session of the header `h`, in the input named `file`.
    pub(super) fn new(h: &Header<'_>, file: &str) -> JoinSession {
        JoinSession {
            head: record_head(&h.id, file),
            waiting: Ordered::default(),
            latest: Hash128Map::default(),
        }
    }

    /// Whether the record `seq` (one that waits) is the oldest that waits. [`Ordered`] does not
    /// say which sequence number is at its front; a record is at the front when the one before
    /// it no longer waits.
    pub(super) fn is_front(&mut self, seq: u64) -> bool {
        seq.checked_sub(1)
            .is_none_or(|before| self.waiting.get_mut(before).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready() -> WaitingRecord {
        WaitingRecord::Ready(Box::default())
    }

    #[test]
    fn strings_kept_together_are_given_back_each_as_it_was() {
        let kept = Strings::new([Some("é1"), None, Some(""), Some("read")]);
        let got: Vec<_> = (0..4).map(|k| kept.get(k)).collect();
        assert_eq!(got, [Some("é1"), None, Some(""), Some("read")]);
        assert_eq!(Strings::new([None::<&str>; 2]).get(1), None);
    }

    #[test]
    fn the_front_is_the_oldest_record_that_waits() {
        let mut s = JoinSession {
            head: Box::default(),
            waiting: Ordered::default(),
            latest: Hash128Map::default(),
        };
        let (a, b) = (s.waiting.push(ready()), s.waiting.push(ready()));
        assert!(s.is_front(a) && !s.is_front(b));
        s.waiting
            .drain_settled(|w| w.settled(), |_| Ok::<_, ()>(()))
            .unwrap();
        let c = s.waiting.push(ready());
        assert!(s.is_front(c), "after a drain, the next pushed is the front");
    }
}
