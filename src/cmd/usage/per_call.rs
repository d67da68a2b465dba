//! pi-usage --calls: one `usage_call` record per billed call, the record a SQL engine reduces
//! (docs/SCALE.md). The calls are read by the same [`Collector`] the sums are made of, so a
//! call record and a `usage` group cannot disagree on what a call is, and they are marked as
//! repeats by the same rule and in the same order (argument order) as `--by` leaves them out:
//! summing the records that are not repeats, by any key, gives the `--by` groups.
//!
//! Inputs are read in parallel, each one's calls (with the line and entry they come from)
//! kept and written in argument order; a large input, or the only one, waits for its turn and
//! writes its calls as it reads them, so memory does not grow with its size.

use super::calls::{BilledCall, CallSource, CallTables, InputCalls, SessionFacts};
use super::collect::{Collector, SessionCalls};
use super::decimal::{format_decimal, Amount};
use super::records::{wide, wide_named};
use super::{streams, Args, InputSet};
use crate::calendar::{Date, Zone};
use crate::diag::Diags;
use crate::hash::Hash128Set;
use crate::input::{self, Source};
use crate::output::{Obj, Out, Stop};
use crate::reader::{self, Entry, Header, PerSession, SessionVisitor, Visitor};
use crate::record::Record;
use crate::sync::lock;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Mutex;

/// pi-usage --calls over `sources`.
pub fn run(args: &Args, sources: &[Source]) -> ExitCode {
    let present = InputSet::new(sources);
    let writer = Mutex::new(CallWriter::new(super::zone(args)));
    let sizes = super::input_sizes(sources);
    input::run_in_turn(
        "pi-usage",
        sources,
        args.inputs.threads(),
        |src, out, d, turn| {
            let read = |d: &mut Diags, v: &mut dyn Visitor| input::open::read_source(src, d, v);
            if !streams(src, sizes[turn.index()], sources.len()) {
                let mut r = PerSession::new(CallReader::new(&present, src.name(), None));
                read(d, &mut r)?;
                let r = r.into_inner();
                return Ok(Some((r.collector.data, r.places)));
            }
            if !turn.wait() {
                return Ok(None);
            }
            stream(&present, &mut lock(&writer), src.name(), out, d, read).map(|()| None)
        },
        |r, out| match r {
            Some(Some((calls, places))) => lock(&writer).write_input(&calls, &places, out),
            _ => Ok(()),
        },
    )
}

/// pi-usage --calls over `input` as if it came on stdin.
pub fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
    let present = InputSet::new(&[Source::Stdin]);
    let mut writer = CallWriter::new(super::zone(args));
    stream(&present, &mut writer, "<stdin>".into(), out, d, |d, v| {
        reader::read(input, false, d, v)
    })
}

/// The calls of one input named `file` written as they are read.
fn stream(
    present: &InputSet,
    writer: &mut CallWriter,
    file: String,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut r = PerSession::new(CallReader::new(present, file, Some((writer, out))));
    read(d, &mut r)?;
    Ok(())
}

/// Where a call was recorded: its line and its entry's `id`.
struct Place {
    line: u64,
    entry: Option<Box<str>>,
}

/// The reading of one input's calls with their places: a [`Collector`] (without a report)
/// whose calls are taken from it after each entry, and written at once when streaming.
struct CallReader<'a, 'o, 'w> {
    collector: Collector<'a, 'static>,
    /// The places of `collector.data.calls`, one each.
    places: Vec<Place>,
    /// Where calls are written as they are read, when streaming.
    sink: Option<(&'o mut CallWriter, &'o mut Out<'w>)>,
}

impl<'a, 'o, 'w> CallReader<'a, 'o, 'w> {
    fn new(
        present: &'a InputSet<'a>,
        file: String,
        sink: Option<(&'o mut CallWriter, &'o mut Out<'w>)>,
    ) -> Self {
        CallReader {
            collector: Collector::new(present, file, None),
            places: Vec::new(),
            sink,
        }
    }
}

impl SessionVisitor for CallReader<'_, '_, '_> {
    type Session = SessionCalls;

    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<SessionCalls, Stop> {
        self.collector.header(h, d)
    }

    fn entry(&mut self, s: &mut SessionCalls, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let before = self.collector.data.calls.len();
        self.collector.entry(s, e, d)?;
        for _ in before..self.collector.data.calls.len() {
            self.places.push(Place {
                line: e.line.no,
                entry: e.str("id").map(Into::into),
            });
        }
        if let Some((writer, out)) = &mut self.sink {
            let data = &mut self.collector.data;
            for ((session, call), place) in data.calls.drain(..).zip(self.places.drain(..)) {
                let s = &data.sessions[session as usize];
                writer.write(&data.file, s, &place, &call, &data.tables, out)?;
            }
        }
        Ok(())
    }

    fn end(&mut self, s: SessionCalls, d: &mut Diags) -> Result<(), Stop> {
        self.collector.end(s, d)
    }
}

/// The writing of call records, in input order: the calls seen so far, to mark repeats, and
/// the zone of the day, week and month labels.
struct CallWriter {
    zone: Zone,
    seen: Hash128Set,
}

impl CallWriter {
    fn new(zone: Zone) -> CallWriter {
        CallWriter {
            zone,
            seen: Hash128Set::default(),
        }
    }

    /// The record of call `call` of session `session` in the input named `file`.
    fn write(
        &mut self,
        file: &str,
        session: &SessionFacts,
        place: &Place,
        call: &BilledCall,
        tables: &CallTables,
        out: &mut Out,
    ) -> Result<(), Stop> {
        // Not a call of this session: its sub-agents', which their own files hold (and which
        // no total counts).
        if call.source == CallSource::SubagentTask {
            return Ok(());
        }
        // The rule of `UsageReport::call`: a call whose identity was seen before repeats it.
        let repeat = call.identity.is_some_and(|h| !self.seen.insert(h));
        let date = call.time.as_ref().map(|(ms, _)| self.zone.date_of(*ms));
        UsageCallRecord {
            file,
            session,
            place,
            call,
            tables,
            date,
            repeat,
        }
        .write(out)
    }

    /// The calls of one input, read whole, and their places.
    fn write_input(
        &mut self,
        data: &InputCalls,
        places: &[Place],
        out: &mut Out,
    ) -> Result<(), Stop> {
        for ((session, call), place) in data.calls.iter().zip(places) {
            let s = &data.sessions[*session as usize];
            self.write(&data.file, s, place, call, &data.tables, out)?;
        }
        Ok(())
    }
}

/// A `usage_call` record: one billed call.
pub struct UsageCallRecord<'a> {
    file: &'a str,
    session: &'a SessionFacts,
    place: &'a Place,
    call: &'a BilledCall,
    tables: &'a CallTables,
    /// The call's local date in the zone of `--tz`.
    date: Option<Date>,
    repeat: bool,
}

impl Record for UsageCallRecord<'_> {
    const TYPE: &'static str = "usage_call";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "project",
        "line",
        "entry",
        "time",
        "day",
        "week",
        "month",
        "provider",
        "model",
        "source",
        "kind",
        "input",
        "output",
        "cache_read",
        "cache_write",
        "tokens",
        "total_tokens",
        "total_tokens_computed",
        "reasoning",
        "cache_write_1h",
        "cost",
        "cost_from_provider",
        "nested_calls",
        "nested_calls_incomplete",
        "other",
        "identity",
        "repeat",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let c = self.call;
        let (provider, model) = &self.tables.models[c.model as usize];
        let (source, kind) = match c.source {
            CallSource::Message => ("message", None),
            CallSource::Summarization => ("summarization", None),
            CallSource::ToolResult => ("tool_result", None),
            CallSource::SubagentTask => ("subagent_task", None),
            CallSource::UsageEntry(k) => {
                let kind = self.tables.kinds.get(k as usize).and_then(Option::as_deref);
                ("usage_entry", kind)
            }
        };
        let tokens: u128 = c.tokens.iter().map(|&t| u128::from(t)).sum();
        let cost = c.cost.as_ref().map(|v| {
            let mut a = Amount::default();
            a.add(v);
            format_decimal(&a)
        });
        let identity = c.identity.map(|h| format!("{h:032x}"));
        o.opt_str("session", crate::reader::session_id(&self.session.id))
            .str("file", self.file)
            .opt_str("project", self.session.cwd.as_deref())
            .u64("line", self.place.line)
            .opt_str("entry", self.place.entry.as_deref())
            .opt_str("time", c.time.as_ref().map(|t| t.1.as_str()))
            .opt_str("day", self.date.as_ref().map(Date::day_label).as_deref())
            .opt_str("week", self.date.as_ref().map(Date::week_label).as_deref())
            .opt_str(
                "month",
                self.date.as_ref().map(Date::month_label).as_deref(),
            )
            .opt_str("provider", provider.as_deref())
            .opt_str("model", model.as_deref())
            .str("source", source)
            .opt_str("kind", kind)
            .u64("input", c.tokens[0])
            .u64("output", c.tokens[1])
            .u64("cache_read", c.tokens[2])
            .u64("cache_write", c.tokens[3]);
        wide(o, "tokens", tokens);
        wide(o, "total_tokens", c.total_tokens);
        o.bool("total_tokens_computed", c.total_computed)
            .opt_u64("reasoning", c.reasoning)
            .opt_u64("cache_write_1h", c.cache_write_1h)
            .opt_raw("cost", cost.as_deref().map(str::as_bytes))
            .bool("cost_from_provider", c.cost_from_provider)
            .opt_u64("nested_calls", c.nested.map(|n| n.0))
            .bool("nested_calls_incomplete", c.nested.is_some_and(|n| n.1))
            .obj("other", |m| {
                // Summed per name, as a group's `other` is (a field written twice counts twice).
                let mut other: BTreeMap<&str, u128> = BTreeMap::new();
                for (ix, v) in &c.other {
                    if let Some(name) = self.tables.names.get(*ix as usize) {
                        *other.entry(name).or_default() += u128::from(*v);
                    }
                }
                for (name, v) in other {
                    wide_named(m, name, v);
                }
            })
            .opt_str("identity", identity.as_deref())
            .bool("repeat", self.repeat);
    }
}
