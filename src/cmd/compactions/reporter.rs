//! The visitor: reads each session's entries in file order. For every entry it shows the
//! entry to the compactions waiting for their `context_after`, queues the entry's own record
//! (a compaction report, a compaction failure, with options an assistant error or a branch
//! summary report), remembers the entry, and writes the front of the queue once it is settled.

use super::ahead::{self, entry_type, message_of, EntryType, Role};
use super::args::Args;
use super::errors::{api_error, failure_of};
use super::read::{
    details, first_kept_index, recorded_count, str_of, summary_facts, system_message_bytes,
};
use super::records::{
    AssistantError, BranchSummaryReport, CompactionFacts, CompactionFailure, CompactionReport,
    EntryPlace, OptIn,
};
use super::reserve::{ReserveSource, Reserves};
use super::session::{EntryId, ModelIx, ParentRef, RecentKind, SessionMemory};
use super::trigger::{
    awaits_next_reply, infer_trigger, recorded_trigger, settle_continuation, AssistantFacts,
    AutoOn, Basis, Clues, Place, StopReason,
};
use super::waiting::{see_entry, AwaitingContext, Step, StepMessage, Waiting};
use crate::diag::Diags;
use crate::models_json::Models;
use crate::ordered::Ordered;
use crate::output::{Out, Stop};
use crate::reader::{Ahead, Entry, Header, SessionVisitor};
use crate::record::Record;
use std::borrow::Cow;
use std::sync::Arc;

/// The fields of a compaction entry only oh-my-pi writes (18.2.3 and 18.3.4's
/// `appendCompaction`; Pi 0.73.1 and 1.6.0 write none of them), the first found naming it as
/// oh-my-pi's: `tokensAfter` is on every compaction it writes, `fromExtension` is its
/// `fromHook`.
const OH_MY_PI_FIELDS: [&str; 6] = [
    "tokensAfter",
    "method",
    "shortSummary",
    "providerReplayThroughEntryId",
    "preserveData",
    "fromExtension",
];

/// What a run reports with: its arguments, the configured context windows and Pi's reserve.
pub(super) struct Settings<'a> {
    pub args: &'a Args,
    pub windows: &'a Models,
    pub reserves: &'a Reserves,
}

/// Reports the compactions of one input named `file`, writing to `out`.
pub(super) struct Reporter<'a, 'w> {
    pub settings: &'a Settings<'a>,
    pub out: &'a mut Out<'w>,
    pub file: &'a str,
}

/// The reporter's state for the session being read.
pub(super) struct SessionReport {
    memory: SessionMemory,
    /// Records in input order, waiting to be written.
    waiting: Ordered<Waiting>,
}

/// What a compaction just decided shows of auto-compaction: an uncompacted reply over the
/// threshold or an unrecovered overflow before it shows it (maybe) off (see [`AutoOn`]).
fn note_auto_compaction(memory: &mut SessionMemory, f: &CompactionFacts) {
    let first = f.evidence.first().map(|e| e.rule);
    if f.evidence.iter().any(|e| e.rule == "auto_compaction_off")
        || first == Some("unrecovered_overflow")
    {
        memory.auto_on = None;
    }
}

/// A compaction that only Pi's automatic compaction makes, once the reply on `line` is seen to
/// follow it, shows auto-compaction on: an overflow recovery retried, or the run went on after
/// a mid-run compaction (see [`AutoOn`], [`settle_continuation`]).
fn note_continued_automatic(memory: &mut SessionMemory, waiting: &mut Ordered<Waiting>, line: u64) {
    for w in waiting.iter_mut() {
        let Waiting::Compaction(c) = w else { continue };
        let f = &c.facts;
        let Some(rule) = f.evidence.first().map(|e| e.rule) else {
            continue;
        };
        if awaits_next_reply(rule, f.trigger)
            && f.basis == Basis::Inferred
            && c.retried.as_ref().is_some_and(|r| r.line == line)
        {
            memory.auto_on = Some(AutoOn {
                at: Place {
                    line: f.line,
                    id: f.entry.clone(),
                },
                rule,
            });
        }
    }
}

/// What an entry is, once read: what it leaves for the waiting compactions, its record, and
/// what is remembered of it.
struct EntryRead {
    kind: RecentKind,
    /// The model in effect at the entry.
    model: ModelIx,
    /// An assistant message's recorded context size.
    context: Option<u128>,
    /// A record that is settled as soon as it is made.
    record: Option<Vec<u8>>,
    /// Boxed: most entries have none, and an `EntryRead` is moved for each entry.
    compaction: Option<Box<CompactionFacts>>,
}

impl SessionVisitor for Reporter<'_, '_> {
    type Session = SessionReport;

    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<SessionReport, Stop> {
        Ok(SessionReport {
            memory: SessionMemory::new(h.id.clone(), h.is_linear()),
            waiting: Ordered::default(),
        })
    }

    fn entry(&mut self, s: &mut SessionReport, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.read_entry(s, e, d);
        self.write_waiting(s, false)
    }

    fn end(&mut self, mut s: SessionReport, _d: &mut Diags) -> Result<(), Stop> {
        // Nothing more can settle the records still waiting.
        self.write_waiting(&mut s, true)
    }

    /// Pi's v1 migration indexes an array line as an entry (see [`SessionMemory::array_line`]).
    fn array_line(&mut self, s: &mut SessionReport, line: u64) -> Result<(), Stop> {
        s.memory.array_line(line);
        Ok(())
    }

    /// What an entry says of itself is read ahead of the reader on a large input ([`ahead`]).
    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        Some(Arc::new(ahead::reader_ahead()))
    }
}

impl Reporter<'_, '_> {
    fn args(&self) -> &Args {
        self.settings.args
    }

    fn opt_in(&self) -> OptIn {
        OptIn {
            summary: self.args().summary,
            file_lists: self.args().file_lists,
        }
    }

    /// Writes the records at the front of the queue that are settled, or, when `all`, every
    /// record in it. A compaction's trigger is final once it is settled (see
    /// [`settle_continuation`]).
    fn write_waiting(&mut self, s: &mut SessionReport, all: bool) -> Result<(), Stop> {
        let opt_in = self.opt_in();
        let (out, file, memory) = (&mut *self.out, self.file, &s.memory);
        let write = |w: Waiting| match w {
            Waiting::Written(bytes) => out.line(&bytes),
            Waiting::Compaction(mut c) => {
                let retried = c.retried.take();
                let f = &mut *c.facts;
                let at = Place {
                    line: f.line,
                    id: f.entry.clone(),
                };
                settle_continuation((&mut f.trigger, &mut f.basis, &mut f.evidence), at, retried);
                CompactionReport {
                    session: &memory.id,
                    file,
                    facts: f,
                    model: memory.models.get(f.model),
                    opt_in,
                }
                .write(out)
            }
        };
        if all {
            s.waiting.drain_all(write)
        } else {
            s.waiting.drain_settled(Waiting::settled, write)
        }
    }

    /// One entry: read it, show it to the compactions waiting before it, queue its record and
    /// remember it.
    fn read_entry(&mut self, s: &mut SessionReport, e: &Entry<'_>, d: &mut Diags) {
        let line = e.line.no;
        s.memory.count_record();
        let linear = s.memory.linear;
        let id: Option<EntryId> = if linear {
            None
        } else {
            e.key("id")
                .filter(|i| !i.is_empty())
                .map(|i| EntryId::of(&i))
        };
        let parent = ParentRef::of(e, linear);
        let (inherited, parent_link) = s.memory.parent_link(&parent);
        let read = self.read_kind(s, e, &parent, id.as_ref(), inherited, d);

        see_entry(
            &mut s.waiting,
            &Step {
                line,
                id: id.as_ref(),
                parent: parent.id(),
                is_compaction: read.compaction.is_some(),
                message: match &read.kind {
                    RecentKind::User => Some(StepMessage::User),
                    RecentKind::Assistant(_) => Some(StepMessage::Assistant),
                    _ => None,
                },
                context: read.context,
            },
        );
        if let Some(bytes) = read.record {
            s.waiting.push(Waiting::Written(bytes));
        }
        note_continued_automatic(&mut s.memory, &mut s.waiting, line);
        if let Some(facts) = read.compaction {
            note_auto_compaction(&mut s.memory, &facts);
            let waiting = AwaitingContext::new(facts, id.as_ref(), linear);
            s.waiting.push(Waiting::Compaction(waiting));
        }
        s.memory
            .remember(line, id, parent_link, read.kind, read.model);
    }

    /// Reads the entry with id `id` by its `type`; `inherited` is the model in effect at its
    /// parent.
    fn read_kind(
        &self,
        s: &mut SessionReport,
        e: &Entry<'_>,
        parent: &ParentRef<'_>,
        id: Option<&EntryId>,
        inherited: ModelIx,
        d: &mut Diags,
    ) -> EntryRead {
        let mut read = EntryRead {
            kind: RecentKind::Other,
            model: inherited,
            context: None,
            record: None,
            compaction: None,
        };
        match entry_type(e) {
            EntryType::Message => self.message(s, e, id, &mut read),
            EntryType::ModelChange => {
                read.kind = RecentKind::ModelChange;
                if let Some((p, m)) = e.model_change() {
                    read.model = s.memory.models.intern(&p, &m);
                }
            }
            EntryType::ContextEdit => {
                s.memory.pi1 = true;
                read.kind = RecentKind::ContextEdit {
                    target: e.key("targetId").map(|t| EntryId::of(&t)),
                    omitted: e.get("replacement").is_some_and(|r| r.is_null()),
                };
            }
            EntryType::Usage => s.memory.pi1 = true,
            EntryType::Setting => read.kind = RecentKind::Setting,
            EntryType::Compaction => {
                read.kind = RecentKind::Compaction;
                read.compaction = Some(Box::new(
                    self.compaction(&s.memory, e, parent, id, read.model, d),
                ));
            }
            EntryType::BranchSummary if self.args().branch_summaries => {
                read.record = Some(self.branch_summary(&s.memory, e, id, parent, d));
            }
            _ => {}
        }
        read
    }

    /// A message: a user message ends the walk back from a compaction; an assistant message
    /// is a clue for the compaction after it, may settle the one before it, and may report an
    /// error. What the message says of itself may have been read ahead ([`message_of`]).
    fn message(
        &self,
        s: &mut SessionReport,
        e: &Entry<'_>,
        id: Option<&EntryId>,
        read: &mut EntryRead,
    ) {
        let msg = message_of(e);
        let a = match msg.role {
            Role::Assistant(a) => a,
            Role::User => {
                read.kind = RecentKind::User;
                return;
            }
            Role::ToolResult => {
                read.kind = RecentKind::ToolResult;
                return;
            }
            Role::System => {
                s.memory.pi1 = true;
                return;
            }
            Role::Other => return,
        };
        if let Some((p, m)) = &msg.names {
            read.model = s.memory.models.intern(p, m);
        }
        if !a.failed() {
            read.context = a.usage.context();
        }
        if a.error {
            let entry = id.map(EntryId::text);
            read.record = self.assistant_error(s, e, entry.as_deref(), a.stop, read.model);
        }
        read.kind = RecentKind::Assistant(AssistantFacts {
            line: e.line.no,
            id: id.cloned(),
            stop: a.stop,
            overflow: a.overflow,
            overflow_pi16: a.overflow_pi16,
            model: read.model,
            usage: a.usage.reply(),
        });
    }

    /// An assistant message with an error: a compaction failure, an
    /// ordinary error record (with --errors), or nothing.
    fn assistant_error(
        &self,
        s: &mut SessionReport,
        e: &Entry<'_>,
        id: Option<&str>,
        stop: StopReason,
        model: ModelIx,
    ) -> Option<Vec<u8>> {
        let msg = e.message_or_default();
        let text = str_of(msg.error_message);
        let failure = text
            .as_deref()
            .and_then(|t| failure_of(t, stop == StopReason::Aborted));
        let (timestamp, stop_reason) = (e.str("timestamp"), str_of(msg.stop_reason));
        let (timestamp, stop_reason) = (timestamp.as_deref(), stop_reason.as_deref());
        let at = EntryPlace {
            session: &s.memory.id,
            file: self.file,
            line: e.line.no,
            entry: id,
            timestamp,
        };
        let model = s.memory.models.get(model);
        let mut buf = Vec::new();
        if let Some(failure) = &failure {
            CompactionFailure {
                at,
                failure,
                stop_reason,
                model,
            }
            .write_to(&mut buf);
        } else if self.args().errors {
            let error = api_error(text.as_deref(), stop)?;
            AssistantError {
                at,
                error: &error,
                stop_reason,
                model,
            }
            .write_to(&mut buf);
        } else {
            return None;
        }
        Some(buf)
    }

    /// A compaction entry, read and its trigger decided; `model` is the model in effect.
    fn compaction(
        &self,
        m: &SessionMemory,
        e: &Entry<'_>,
        parent: &ParentRef<'_>,
        id: Option<&EntryId>,
        model: ModelIx,
        d: &mut Diags,
    ) -> CompactionFacts {
        let line = e.line.no;
        let tokens_before = recorded_count(e, "tokensBefore", d);
        let first_kept_entry = e.str("firstKeptEntryId").map(Cow::into_owned);
        let first_kept_id = e.key("firstKeptEntryId").map(|k| EntryId::of(&k));
        let first_kept_index = first_kept_index(e, d);
        let first_kept_line = m.first_kept_line(first_kept_id.as_ref(), first_kept_index);
        let retain_none = id.is_some() && first_kept_id.as_ref() == id;
        let replay_through = e.str("providerReplayThroughEntryId").map(|through| {
            let key = e.key("providerReplayThroughEntryId");
            let line = key.and_then(|k| m.line_of(&EntryId::of(&k)));
            (through.into_owned(), line)
        });
        let details = details(e);
        let summarized = summary_facts(e, details, self.args().summary, d);
        let window_of = |ix: ModelIx| {
            m.models
                .get(ix)
                .and_then(|(p, m)| self.settings.windows.window(p, m))
        };
        let window = window_of(model);
        let before = m.before(parent);
        let pi1 = m.pi1 || e.get("systemMessage").is_some() || e.get("usage").is_some();
        let reserves = self.settings.reserves;
        let reserve = reserves.for_model(m.models.get(model), pi1);
        let uncompacted = if pi1 {
            let limit = |ix| {
                let r = reserves.for_model(m.models.get(ix), pi1).tokens?;
                window_of(ix).map(|w| i128::from(w.tokens) - i128::from(r))
            };
            m.uncompacted(parent, &limit)
        } else {
            None
        };
        let shown = id.map(EntryId::text);
        let quiet = if pi1 { None } else { m.quiet(parent) };
        let (trigger, basis, evidence) = infer_trigger(&Clues {
            line,
            entry: shown.as_deref(),
            recorded: details.and_then(recorded_trigger),
            before: &before,
            pi1,
            same_model: before.assistant.as_ref().is_some_and(|a| a.model == model),
            window: window.map(|w| w.tokens),
            tokens_before,
            reserve: reserve.tokens,
            reserve_key: reserve.key.as_deref().filter(|_| {
                matches!(
                    reserve.source,
                    ReserveSource::Settings | ReserveSource::SettingsModelOverride
                )
            }),
            from_hook: summarized.from_hook,
            from_hook_key: summarized.from_hook_key,
            uncompacted: uncompacted.as_ref(),
            auto_on: m.auto_on.as_ref(),
            quiet: quiet.as_ref(),
            oh_my_pi: OH_MY_PI_FIELDS.into_iter().find(|k| e.get(k).is_some()),
        });
        CompactionFacts {
            line,
            entry: id.cloned(),
            timestamp: e.str("timestamp").map(Cow::into_owned),
            tokens_before,
            tokens_after: recorded_count(e, "tokensAfter", d),
            method: e.str("method").map(Cow::into_owned),
            replay_through,
            first_kept_entry,
            first_kept_index,
            first_kept_line,
            retain_none,
            summarized,
            system_message_bytes: system_message_bytes(e),
            trigger,
            basis,
            evidence,
            model,
            window,
            reserve: (reserve.tokens, reserve.source),
            context_after: None,
            context_after_line: None,
        }
    }

    /// A branch_summary entry's record.
    fn branch_summary(
        &self,
        m: &SessionMemory,
        e: &Entry<'_>,
        id: Option<&EntryId>,
        parent: &ParentRef<'_>,
        d: &mut Diags,
    ) -> Vec<u8> {
        let summarized = summary_facts(e, details(e), self.args().summary, d);
        let from = e.str("fromId");
        let from_found = e
            .key("fromId")
            .is_some_and(|f| m.has_seen(&EntryId::of(&f)));
        let (shown, target) = (
            id.map(EntryId::text),
            parent.id().map(crate::json::key_text),
        );
        let timestamp = e.str("timestamp");
        let mut buf = Vec::new();
        BranchSummaryReport {
            at: EntryPlace {
                session: &m.id,
                file: self.file,
                line: e.line.no,
                entry: shown.as_deref(),
                timestamp: timestamp.as_deref(),
            },
            target: target.as_deref(),
            from_id: from.as_deref(),
            from_found,
            from_root: from.as_deref() == Some("root"),
            summarized: &summarized,
            opt_in: self.opt_in(),
        }
        .write_to(&mut buf);
        buf
    }
}
