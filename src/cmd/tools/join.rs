//! The join, as the reader visits a session: each toolCall block of an assistant entry is
//! queued as a call, each toolResult joins the latest call with its id (or becomes an orphan or
//! a duplicate), each bashExecution is a call and its result at once. A record is written as
//! soon as it and every record before it are settled; the session's end settles the rest.

use super::facts::{is_str, MessageLine};
use super::records::RecordWriter;
use super::waiting::{
    CallAnswer, CallingTurn, DuplicateOf, JoinSession, KeptBytes, LatestCall, PendingCall,
    WaitingRecord,
};
use super::{changed, fetch, Args};
use crate::diag::{Diags, Kind};
use crate::hash;
use crate::json::{self, Raw};
use crate::message::Message;
use crate::output::{Out, Stop};
use crate::reader::{Entry, Header, SessionVisitor};
use std::fs::File;
use std::rc::Rc;

/// The members of a toolCall block that a call record needs.
#[derive(Default)]
struct CallBlock<'a> {
    id: Option<Raw<'a>>,
    name: Option<Raw<'a>>,
    arguments: Option<Raw<'a>>,
    namespace: Option<Raw<'a>>,
}

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

    fn assistant(
        &mut self,
        s: &mut JoinSession,
        e: &Entry<'_>,
        msg: Message<'_>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let Some(content) = msg.content else {
            return Ok(());
        };
        let mut turn: Option<Rc<CallingTurn>> = None;
        // Each block's members are read once: its type and, for a toolCall, what the call
        // needs (the last of repeated members wins, as `JSON.parse` keeps).
        let mut blocks: Vec<CallBlock<'_>> = Vec::new();
        content.for_each_object_element(|members| {
            let mut b = CallBlock::default();
            let mut kind = None;
            for (k, v) in members {
                if json::key_is(k, "type") {
                    kind = Some(v);
                } else if json::key_is(k, "id") {
                    b.id = Some(v);
                } else if json::key_is(k, "name") {
                    b.name = Some(v);
                } else if json::key_is(k, "arguments") {
                    b.arguments = Some(v);
                } else if json::key_is(k, "namespace") {
                    b.namespace = Some(v);
                }
            }
            if is_str(kind, "toolCall") {
                blocks.push(b);
            }
        });
        for b in blocks {
            let turn = turn
                .get_or_insert_with(|| Rc::new(CallingTurn::read(e, &msg)))
                .clone();
            let call = self.call(e, turn, b, d);
            if let Some(id) = &call.id {
                let latest = LatestCall {
                    seq: s.waiting.next_seq(),
                    call_line: call.turn.line,
                    call_entry: call.turn.entry.clone(),
                    result_line: 0,
                };
                if let Some(old) = s.latest.insert(hash::hash128(id.as_bytes()), latest) {
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
        let CallBlock {
            id,
            name,
            arguments,
            namespace,
        } = b;
        let arguments = arguments.filter(|a| !a.is_null());
        let id_str = id.and_then(Raw::as_str);
        if id_str.is_none() {
            let what = id.map_or("no id", |_| "an id that is not a string");
            d.report(
                Some(e.line.no),
                Kind::BadField,
                format!("a toolCall block with {what}: it cannot be joined to a result"),
            );
        }
        let name: Option<Box<str>> = name.and_then(Raw::as_str).map(|n| n.into());
        let args = self.records.args;
        let keep_arguments = !args.no_content && args.name_wanted(name.as_deref());
        PendingCall {
            turn,
            id: id_str.map(|i| i.into()),
            name,
            namespace: namespace.and_then(Raw::as_str).map(|n| n.into()),
            arguments: arguments.filter(|_| keep_arguments).map(|a| {
                let budget = &mut self.records.arguments_budget;
                KeptBytes::keep_within(self.records.file, e, a.bytes(), budget)
            }),
            arguments_bytes: arguments.map(|a| a.len() as u64),
            answer: CallAnswer::Waiting,
        }
    }

    fn tool_result(
        &mut self,
        s: &mut JoinSession,
        e: &Entry<'_>,
        msg: Message<'_>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        let raw_id = msg.tool_call_id;
        let id = raw_id.and_then(Raw::as_str);
        if id.is_none() {
            let what = raw_id.map_or("no toolCallId", |_| "a toolCallId that is not a string");
            d.report(
                Some(e.line.no),
                Kind::BadField,
                format!("a toolResult with {what}: reported as an orphan"),
            );
        }
        let mut dup = None;
        let key = id.as_deref().map(|id| hash::hash128(id.as_bytes()));
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
                return self.answer(s, seq, e, msg, d);
            }
        }
        let line = MessageLine::from_entry(e, msg);
        self.now_or_queued(
            s,
            e,
            dup,
            |dup, kept| WaitingRecord::Result(e.line.no, kept, dup),
            |w, session, dup| w.render_result(session, line, dup.as_ref()),
        )
    }

    /// The result `e` joins the call `seq`, the latest with its id, which waits for it.
    fn answer(
        &mut self,
        s: &mut JoinSession,
        seq: u64,
        e: &Entry<'_>,
        msg: Message<'_>,
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
        let line = MessageLine::from_entry(e, msg);
        if front {
            // Its place in the queue is now empty: written below, then passed over.
            let wrote = self.records.render_call(&s.id, &call, Some(line), d);
            self.records.emit(wrote)?;
            return self.drain(s, d);
        }
        let record = self.records.deferred(
            &s.id,
            e,
            call,
            |call, kept| {
                WaitingRecord::Call(PendingCall {
                    answer: CallAnswer::Answered(e.line.no, kept),
                    ..call
                })
            },
            |w, session, call| w.render_call(session, call, Some(line), d),
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
            |w, session, ()| w.render_bash(session, line),
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
        render: impl FnOnce(&mut RecordWriter<'a, 'w>, &str, &T) -> bool,
    ) -> Result<(), Stop> {
        if s.waiting.is_empty() {
            let wrote = render(&mut self.records, &s.id, &item);
            return self.records.emit(wrote);
        }
        let record = self.records.deferred(&s.id, e, item, waiting, render);
        s.waiting.push(record);
        Ok(())
    }

    /// Writes the records at the front of the queue that are settled.
    fn drain(&mut self, s: &mut JoinSession, d: &mut Diags) -> Result<(), Stop> {
        s.waiting
            .drain_settled(WaitingRecord::settled, |w| self.write_waiting(&s.id, w, d))
    }

    fn write_waiting(
        &mut self,
        session: &str,
        record: WaitingRecord,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        match record {
            WaitingRecord::Ready(bytes) if bytes.is_empty() => Ok(()),
            WaitingRecord::Ready(bytes) => self.records.out.raw(&bytes),
            WaitingRecord::Call(call) => match &call.answer {
                CallAnswer::Waiting | CallAnswer::Closed => {
                    let wrote = self.records.render_call(session, &call, None, d);
                    self.records.emit(wrote)
                }
                CallAnswer::Answered(no, kept) => self.again(*no, kept, d, |w, line, d| {
                    w.render_call(session, &call, line, d)
                }),
            },
            WaitingRecord::Bash(no, kept) => self.again(no, &kept, d, |w, line, _| {
                line.is_some_and(|l| w.render_bash(session, l))
            }),
            WaitingRecord::Result(no, kept, dup) => self.again(no, &kept, d, |w, line, _| {
                line.is_some_and(|l| w.render_result(session, l, dup.as_ref()))
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
        Ok(JoinSession::new(h))
    }

    fn entry(&mut self, s: &mut JoinSession, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        if !is_str(e.get("type"), "message") {
            return Ok(());
        }
        let Some(msg) = e.message() else {
            return Ok(());
        };
        match msg.role.and_then(Raw::as_str).as_deref() {
            Some("assistant") => self.assistant(s, e, msg, d),
            Some("toolResult") => self.tool_result(s, e, msg, d),
            Some("bashExecution") => self.bash(s, e, msg),
            _ => Ok(()),
        }
    }

    fn end(&mut self, mut s: JoinSession, d: &mut Diags) -> Result<(), Stop> {
        s.waiting.drain_all(|w| self.write_waiting(&s.id, w, d))
    }
}
