//! The join, as the reader visits a session: each toolCall block of an assistant entry is
//! queued as a call, each toolResult joins the latest call with its id (or becomes an orphan or
//! a duplicate), each bashExecution is a call and its result at once. A record is written as
//! soon as it and every record before it are settled; the session's end settles the rest.

use super::ahead::{EntryAhead, ReadAhead};
use super::facts::{
    call_blocks, call_id_problem, message_of, Answer, CallBlock, MessageLine, ResultFacts, Role,
    Stamp, TurnNames,
};
use super::records::RecordWriter;
use super::waiting::{
    CallAnswer, CallingTurn, DuplicateOf, JoinSession, KeptBytes, LatestCall, PendingCall, Strings,
    WaitingRecord,
};
use super::{changed, fetch, Args};
use crate::diag::{Diags, Kind};
use crate::message::Message;
use crate::output::{Out, Stop};
use crate::reader::{Ahead, Entry, Header, SessionVisitor};
use std::fs::File;
use std::rc::Rc;
use std::sync::Arc;

/// pi-tools' visitor: joins the calls and results of each session and writes the records.
pub(super) struct Joiner<'a, 'w> {
    records: RecordWriter<'a, 'w>,
    /// A waiting record's line, read again from the file.
    line_buf: Vec<u8>,
}

impl<'a, 'w> Joiner<'a, 'w> {
    pub(super) fn new(
        args: &'a Args,
        out: &'a mut Out<'w>,
        file: Option<&'a File>,
        name: &'a str,
    ) -> Joiner<'a, 'w> {
        Joiner {
            records: RecordWriter::new(args, out, file, name),
            line_buf: Vec::new(),
        }
    }

    /// The toolCall blocks `blocks` of the assistant entry `e` (stamped `stamp`, whose message
    /// names `names`) are queued as calls.
    fn assistant(
        &mut self,
        s: &mut JoinSession,
        e: &Entry<'_>,
        (stamp, names): (Stamp<'_>, TurnNames<'_>),
        blocks: Vec<CallBlock<'_>>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let mut turn_of = Some((stamp, names));
        let mut turn: Option<Rc<CallingTurn>> = None;
        let calls = blocks.len();
        for b in blocks {
            let turn = turn
                .get_or_insert_with(|| {
                    let (stamp, names) = turn_of.take().unwrap_or_default();
                    Rc::new(CallingTurn::new(e.line.no, stamp, names, calls))
                })
                .clone();
            let key = b.key;
            let call = self.call(e, turn, b, d);
            if let Some(key) = key {
                let latest = LatestCall {
                    seq: s.waiting.next_seq(),
                    call_line: call.turn.line,
                    call_entry: call.turn.entry.clone(),
                    result_line: 0,
                };
                if let Some(old) = s.latest.insert(key, latest) {
                    // The earlier call with this id can no longer be joined.
                    if old.result_line == 0 {
                        if let Some(WaitingRecord::Call(c)) = s.waiting.get_mut(old.seq) {
                            c.answer = CallAnswer::Closed;
                        }
                    }
                }
            }
            s.waiting.push(WaitingRecord::Call(call));
        }
        // A call closed above may have been the one holding the queue.
        self.drain(s, d)
    }

    /// The call of the toolCall block `b` of the assistant entry `e`.
    fn call(
        &mut self,
        e: &Entry<'_>,
        turn: Rc<CallingTurn>,
        b: CallBlock<'_>,
        d: &mut Diags,
    ) -> PendingCall {
        let id = match b.id {
            Ok(id) => Some(id),
            Err(what) => {
                d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!("a toolCall block with {what}: it cannot be joined to a result"),
                );
                None
            }
        };
        let args = self.records.args;
        let keep_arguments = !args.no_content && args.name_wanted(b.name.as_deref());
        PendingCall {
            turn,
            names: Strings::new([id.as_deref(), b.name.as_deref(), b.namespace.as_deref()]),
            arguments: b.arguments.filter(|_| keep_arguments).map(|a| {
                let budget = &mut self.records.arguments_budget;
                KeptBytes::keep_within(self.records.file, e, a, budget)
            }),
            arguments_bytes: b.arguments.map(|a| a.len() as u64),
            answer: CallAnswer::Waiting,
        }
    }

    /// The toolResult entry `e`, stamped `stamp`, which says `facts` (`id_problem`: what is
    /// wrong with its toolCallId), joins the latest call with its id, or is an orphan or a
    /// duplicate.
    fn tool_result(
        &mut self,
        s: &mut JoinSession,
        e: &Entry<'_>,
        (stamp, id_problem): (Stamp<'_>, Option<&str>),
        facts: ResultFacts<'_>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        if let Some(what) = id_problem {
            d.report(
                Some(e.line.no),
                Kind::BadField,
                format!("a toolResult with {what}: reported as an orphan"),
            );
        }
        let mut dup = None;
        let key = facts.call_key;
        let answer = Answer {
            no: e.line.no,
            stamp,
            facts,
        };
        if let Some(l) = key.and_then(|k| s.latest.get_mut(&k)) {
            if l.result_line != 0 {
                dup = Some(DuplicateOf {
                    call_line: l.call_line,
                    call_entry: l.call_entry.clone(),
                    result_line: l.result_line,
                });
            } else {
                l.result_line = e.line.no;
                let seq = l.seq;
                return self.answer(s, seq, e, answer, d);
            }
        }
        self.now_or_queued(
            s,
            e,
            dup,
            |dup, kept| WaitingRecord::Result(e.line.no, kept, dup),
            |w, head, dup| w.render_result(head, answer, dup.as_ref()),
        )
    }

    /// The result `answer` (of the entry `e`) joins the call `seq`, the latest with its id,
    /// which waits for it.
    fn answer(
        &mut self,
        s: &mut JoinSession,
        seq: u64,
        e: &Entry<'_>,
        answer: Answer<'_>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let front = s.is_front(seq);
        let taken = s
            .waiting
            .get_mut(seq)
            .map(|w| std::mem::replace(w, WaitingRecord::Ready(Box::default())));
        let Some(WaitingRecord::Call(call)) = taken else {
            unreachable!("the latest call with an id waits in the queue")
        };
        if front {
            // Its place in the queue is now empty: written below, then passed over.
            let wrote = self.records.render_call(&s.head, &call, Some(answer), d);
            self.records.emit(wrote)?;
            return self.drain(s, d);
        }
        let record = self.records.deferred(
            &s.head,
            e,
            call,
            |call, kept| {
                WaitingRecord::Call(PendingCall {
                    answer: CallAnswer::Answered(e.line.no, kept),
                    ..call
                })
            },
            |w, head, call| w.render_call(head, call, Some(answer), d),
        );
        if let Some(w) = s.waiting.get_mut(seq) {
            *w = record;
        }
        Ok(())
    }

    fn bash(&mut self, s: &mut JoinSession, e: &Entry<'_>, msg: Message<'_>) -> Result<(), Stop> {
        let line = MessageLine::from_entry(e, msg);
        self.now_or_queued(
            s,
            e,
            (),
            |(), kept| WaitingRecord::Bash(e.line.no, kept),
            |w, head, ()| w.render_bash(head, line),
        )
    }

    /// Writes the record of the entry `e` (about `item`) now when nothing waits, else queues
    /// it as [`RecordWriter::deferred`] keeps it.
    fn now_or_queued<T>(
        &mut self,
        s: &mut JoinSession,
        e: &Entry<'_>,
        item: T,
        waiting: impl FnOnce(T, KeptBytes) -> WaitingRecord,
        render: impl FnOnce(&mut RecordWriter<'a, 'w>, &[u8], &T) -> bool,
    ) -> Result<(), Stop> {
        if s.waiting.is_empty() {
            let wrote = render(&mut self.records, &s.head, &item);
            return self.records.emit(wrote);
        }
        let record = self.records.deferred(&s.head, e, item, waiting, render);
        s.waiting.push(record);
        Ok(())
    }

    /// Writes the records at the front of the queue that are settled.
    fn drain(&mut self, s: &mut JoinSession, d: &mut Diags) -> Result<(), Stop> {
        s.waiting.drain_settled(WaitingRecord::settled, |w| {
            self.write_waiting(&s.head, w, d)
        })
    }

    fn write_waiting(
        &mut self,
        head: &[u8],
        record: WaitingRecord,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        match record {
            WaitingRecord::Ready(bytes) if bytes.is_empty() => Ok(()),
            WaitingRecord::Ready(bytes) => self.records.out.raw(&bytes),
            WaitingRecord::Call(call) => match &call.answer {
                CallAnswer::Waiting | CallAnswer::Closed => {
                    let wrote = self.records.render_call(head, &call, None, d);
                    self.records.emit(wrote)
                }
                CallAnswer::Answered(no, kept) => self.again(*no, kept, d, |w, line, d| {
                    let answer = line.map(|l| l.answer(w.args));
                    w.render_call(head, &call, answer, d)
                }),
            },
            WaitingRecord::Bash(no, kept) => self.again(no, &kept, d, |w, line, _| {
                line.is_some_and(|l| w.render_bash(head, l))
            }),
            WaitingRecord::Result(no, kept, dup) => self.again(no, &kept, d, |w, line, _| {
                line.is_some_and(|l| w.render_result(head, l.answer(w.args), dup.as_ref()))
            }),
        }
    }

    /// Reads a kept line again and renders its record with `f` (given `None` when the line
    /// cannot be read as it was).
    fn again(
        &mut self,
        no: u64,
        kept: &KeptBytes,
        d: &mut Diags,
        f: impl FnOnce(&mut RecordWriter<'a, 'w>, Option<MessageLine<'_>>, &mut Diags) -> bool,
    ) -> Result<(), Stop> {
        let line = match fetch(self.records.file, kept, &mut self.line_buf, d) {
            Some(bytes) => {
                let line = MessageLine::parse(no, bytes);
                if line.is_none() {
                    changed(d, no);
                }
                line
            }
            None => None,
        };
        let wrote = f(&mut self.records, line, d);
        self.records.emit(wrote)
    }
}

impl SessionVisitor for Joiner<'_, '_> {
    type Session = JoinSession;

    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<JoinSession, Stop> {
        Ok(JoinSession::new(h, self.records.name))
    }

    fn entry(&mut self, s: &mut JoinSession, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        // Read ahead of the reader (a large input on several cores): what the entry says of
        // itself is there; only the join and the records are left.
        match e.ahead::<EntryAhead>() {
            Some(EntryAhead::Nothing) => return Ok(()),
            Some(EntryAhead::Calls(calls)) => {
                if let Some((turn, blocks)) = calls.resolve(e) {
                    return self.assistant(s, e, turn, blocks, d);
                }
            }
            Some(EntryAhead::Result(result)) => {
                if let Some((stamped, facts)) = result.resolve(e) {
                    return self.tool_result(s, e, stamped, facts, d);
                }
            }
            Some(EntryAhead::InOrder) | None => {}
        }
        let Some((role, msg)) = message_of(e) else {
            return Ok(());
        };
        match role {
            Role::Assistant => match msg.content.map(|c| call_blocks(c, e.noted_strings())) {
                // A reply without calls makes no record (as read ahead: `EntryAhead::Nothing`).
                Some(blocks) if !blocks.is_empty() => {
                    let turn = (Stamp::of(e), TurnNames::read(&msg));
                    self.assistant(s, e, turn, blocks, d)
                }
                _ => Ok(()),
            },
            Role::ToolResult => {
                let facts =
                    ResultFacts::read(&msg, self.records.args, e.is_utf8(), e.noted_strings());
                let stamped = (Stamp::of(e), call_id_problem(msg.tool_call_id));
                self.tool_result(s, e, stamped, facts, d)
            }
            Role::Bash => self.bash(s, e, msg),
        }
    }

    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        Some(Arc::new(ReadAhead(self.records.args.clone())))
    }

    /// A result's text is found where it ends, and whether it is written as the output
    /// writes it, by the scan that validates its line.
    fn notes_strings(&self) -> bool {
        true
    }

    fn end(&mut self, mut s: JoinSession, d: &mut Diags) -> Result<(), Stop> {
        s.waiting.drain_all(|w| self.write_waiting(&s.head, w, d))
    }
}
