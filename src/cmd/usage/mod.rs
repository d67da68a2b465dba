//! pi-usage: sum the usage Pi recorded, honestly labelled.
//!
//! Each input is read by a job (in parallel) that keeps, per billed call, a few numbers: its
//! tokens, its recorded cost as an exact decimal, its time, its model, and a 128-bit identity.
//! The finish step takes the inputs in argument order, drops repeats of calls already counted
//! (a fork replays its original; a sub-agent transcript repeats its parent's calls) and adds
//! the rest into groups. So the result does not depend on `--threads`, and memory is bounded
//! by the number of distinct calls (16 bytes each for the identities) plus the calls of the
//! files being read, never by file size.
//!
//! Costs are summed as exact decimals parsed from the number text Pi wrote, so sums are exact
//! and associative: grouping or splitting the input never changes a total.
//!
//! This module wires the tool and opens its inputs. The rest, by job:
//! - `args`: the command line and the man page (its prose in `man/`).
//! - `collect`: reading an input's billed calls (the `Collector` visitor); `calls`: what it
//!   keeps of them; `decimal`: the exact decimal costs.
//! - `report`: adding calls into groups and deciding when a record is written; `sums`: what a
//!   group adds up to.
//! - `records`: the `usage` and `context` records; `table`: the table for a person.
//! - `context`: --context, the per-message context series.
//! - `per_call`: --calls, one record per billed call.
//! - `cached`: --cache, the calls of each file kept between runs.

mod args;
mod cached;
mod calls;
mod collect;
mod context;
mod context_table;
mod decimal;
mod per_call;
pub(crate) mod range;
mod records;
mod report;
mod sums;
mod table;

pub use args::{Args, Dim, ZoneArg, MAN};

pub use decimal::{format_decimal, parse_cost, Amount, Cost};
pub use table::dollars;

use crate::calendar::Zone;
use crate::cli::ManPage;
use crate::diag::Diags;
use crate::input::{self, Source};
use crate::models_json::{self, Models};
use crate::output::{Out, Stop};
use crate::reader::{self, PerSession, Visitor};
use crate::record::{describe, Described};
use crate::sync::lock;
use crate::tool::Tool;
use crate::view::width;
use calls::{InputCalls, Lineage};
use collect::{AheadRoom, Collector, ForkOrigins, Handover};
use context::ContextWriter;
use records::{ContextRecord, UsageRecord};
use report::UsageReport;
use std::collections::HashSet;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Mutex, OnceLock};

/// The records pi-usage writes.
pub const RECORDS: &[Described] = &[
    describe::<UsageRecord>(),
    describe::<ContextRecord>(),
    describe::<per_call::UsageCallRecord>(),
];

/// usage: the tool.
pub struct Usage;

impl Tool for Usage {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        if args.cache.cache_clear {
            return crate::cache::clear_for("pi-usage", &args.cache);
        }
        let cache = crate::cache::Cache::open("pi-usage", &args.cache);
        // The cache knows which files found under a directory are sessions without opening
        // them, and what is under a directory that did not change without listing it.
        let known: Option<crate::discover::Known<'_>> = cache.as_ref().map(|c| c as _);
        let sources = args.inputs.sources_known(known);
        if args.context {
            return run_context(args, &sources);
        }
        if args.calls {
            return per_call::run(args, &sources);
        }
        let table = args.table || (!args.json && std::io::stdout().is_terminal());
        let present = InputSet::new(&sources);
        // With --cache and files only (stdin cannot be cached), its own loop: see `cached::run`.
        if let Some(c) = cache
            .as_ref()
            .filter(|_| sources.iter().all(|s| !s.is_stdin()))
        {
            let mut report = new_report(args, table);
            let status = cached::run(c, &sources, &present, &mut report, args.inputs.threads());
            c.save();
            // The report and the inputs are left to the process's end: freeing them one by one
            // (each session's groups, each path) was ~3 % of the instructions of a run that
            // found every file in the cache.
            std::mem::forget((report, present));
            std::mem::forget(sources);
            return status;
        }
        let report = Mutex::new(new_report(args, table));
        let room = AheadRoom::new(AHEAD_ROOM);
        let sizes = input_sizes(&sources);
        let status = input::run_in_turn(
            "pi-usage",
            &sources,
            args.inputs.threads(),
            |src, out, d, turn| {
                // Several inputs are read in parallel, each one's calls collected and handed to
                // the report in argument order. A large input (or the only one) is streamed
                // into the report in its turn as it is read, so memory does not grow with its
                // size; one whose turn has not come yet is read ahead, its calls kept while
                // the run's room for them lasts, and waits for its turn only when that ends
                // (`read_ahead`). With --cache (here only when stdin is among the inputs)
                // every file is collected: its calls are what the cache keeps.
                if let (Some(c), Source::Path(p)) = (&cache, src) {
                    return cached::collect(c, p, src, &present, d).map(|fd| Some((fd, 0)));
                }
                if !streams(src, sizes[turn.index()], sources.len()) {
                    return collect(src, &present, d).map(|fd| Some((fd, 0)));
                }
                let read = |d: &mut Diags, v: &mut dyn Visitor| input::open::read_source(src, d, v);
                if !turn.ready() {
                    let h = Handover::new(turn, &report, out, &room);
                    return read_ahead(&present, src.name(), h, d, read);
                }
                if !turn.wait() {
                    return Ok(None);
                }
                stream_with(&present, &mut lock(&report), src.name(), out, d, read).map(|()| None)
            },
            |r, out| match r {
                Some(Some((fd, held))) => {
                    let written = lock(&report).file(fd, out);
                    room.give_back(held);
                    written
                }
                Some(None) => Ok(()),
                None => lock(&report).finish(out),
            },
        );
        if let Some(c) = &cache {
            c.save();
        }
        status
    }

    /// Runs pi-usage over `input` as if it came on stdin, totals included (for tests and
    /// fuzzing). The table is printed only with --table (`out` is no terminal).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        if args.context {
            let models = models_json::load_for("pi-usage", args.models.as_deref());
            let table = args.table.then(width::columns);
            return write_contexts(&models, table, "<stdin>", out, d, |d, v| {
                reader::read(input, false, d, v)
            });
        }
        if args.calls {
            return per_call::run_bytes(args, input, out, d);
        }
        let present = InputSet::new(&[Source::Stdin]);
        let mut report = new_report(args, args.table);
        stream_with(&present, &mut report, "<stdin>".into(), out, d, |d, v| {
            reader::read(input, false, d, v)
        })?;
        report.finish(out)
    }
}

/// The cells pi-usage's table gives one input read alone, for pi-sessions' table.
pub struct FileCells {
    /// As `pi-usage --total` gives the cost: `$0.1234`, with `*` when some calls recorded
    /// none, `-` when no call did.
    pub cost: String,
    /// The models of the counted calls (`responseModel`, else `model`), as its Models column.
    pub models: String,
}

/// Reads one input named `file` as pi-usage reads it alone and gives its [`FileCells`]. `read`
/// feeds the input to the visitor it is given; what is wrong in it is not reported (pi-sessions,
/// which shows these cells, says so in its records).
pub fn file_cells(
    file: &str,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> FileCells {
    let sources = [Source::Path(file.into())];
    let present = InputSet::new(&sources);
    let range = range::TimeRange {
        since: None,
        until: None,
        zone: Zone::Utc,
    };
    let mut report = UsageReport::new(Vec::new(), Zone::Utc, range, true, true, false);
    // No group but the total: nothing is written.
    let mut out = Out::held();
    let mut d = Diags::quiet("pi-usage", file);
    let _ = stream_with(&present, &mut report, file.into(), &mut out, &mut d, read);
    FileCells {
        cost: table::cost_cell(&report.total().total()),
        models: table::models_cell(report.total()),
    }
}

/// The report `args` ask for: its groups, the zone of its day, week and month buckets and of
/// --since/--until days, and the calls it counts.
fn new_report(args: &Args, table: bool) -> UsageReport {
    let dims = args::effective_dims(args);
    let days = |b: &Option<range::Bound>| matches!(b, Some(range::Bound::Day(..)));
    // The table shows each session's first and last call in the zone too.
    let shows_times = table && dims.contains(&Dim::Session);
    let zone = if dims.iter().any(|d| d.timed())
        || shows_times
        || days(&args.since)
        || days(&args.until)
    {
        zone(args)
    } else {
        Zone::Utc
    };
    let range = range::TimeRange {
        since: args.since,
        until: args.until,
        zone: zone.clone(),
    };
    UsageReport::new(dims, zone, range, !args.no_dedup, args.total, table)
}

/// The zone of day, week and month labels: `--tz`, else the local zone.
fn zone(args: &Args) -> Zone {
    match &args.tz {
        Some(z) => z.0.clone(),
        None => Zone::local().unwrap_or_else(|e| {
            crate::diag::report_global("pi-usage", format!("local time zone: {e}; using UTC"));
            Zone::Utc
        }),
    }
}

/// The FILE arguments, to tell whether a fork's original is among them. Their canonical paths
/// and names are found the first time a fork asks (a syscall or more per path component of
/// every FILE: a serial start of ~10 ms for 2,000 files when nothing is a fork).
struct InputSet<'a> {
    sources: &'a [Source],
    found: OnceLock<(HashSet<PathBuf>, HashSet<OsString>)>,
}

impl<'a> InputSet<'a> {
    fn new(sources: &'a [Source]) -> InputSet<'a> {
        InputSet {
            sources,
            found: OnceLock::new(),
        }
    }

    fn found(&self) -> &(HashSet<PathBuf>, HashSet<OsString>) {
        self.found.get_or_init(|| {
            let (mut canonical, mut names) = (HashSet::new(), HashSet::new());
            for src in self.sources {
                if let Source::Path(p) = src {
                    if let Ok(c) = std::fs::canonicalize(p) {
                        canonical.insert(c);
                    }
                    if let Some(n) = p.file_name() {
                        names.insert(n.to_os_string());
                    }
                }
            }
            (canonical, names)
        })
    }
}

impl ForkOrigins for InputSet<'_> {
    fn lineage(&self, parent: Option<&str>) -> Lineage {
        let Some(p) = parent.filter(|p| !p.is_empty()) else {
            return Lineage::None;
        };
        let (canonical, names) = self.found();
        let path = std::path::Path::new(p);
        let found = std::fs::canonicalize(path).is_ok_and(|c| canonical.contains(&c))
            || path.file_name().is_some_and(|n| names.contains(n));
        if found {
            Lineage::Resolved
        } else {
            Lineage::Unresolved
        }
    }
}

/// Inputs at least this large are streamed into the report in their turn rather than collected
/// whole in parallel with the others (waiting for the turn costs less than their calls).
const STREAM_AT: u64 = 16 << 20;

/// The size of each of `sources` that is a file, as the directory check found it (`None`:
/// look it up).
fn input_sizes(sources: &[Source]) -> Vec<Option<u64>> {
    let known = crate::discover::take_input_metadata(sources);
    known.iter().map(|m| m.map(|m| m.key.size)).collect()
}

/// Whether `src`, one of `inputs` inputs, of `size` bytes when that is known, is streamed: the
/// only input, stdin (of unknown size) or a file of at least [`STREAM_AT`] bytes.
fn streams(src: &Source, size: Option<u64>, inputs: usize) -> bool {
    match src {
        _ if inputs == 1 => true,
        Source::Stdin => true,
        Source::Path(p) => size
            .or_else(|| std::fs::metadata(p).ok().map(|m| m.len()))
            .is_some_and(|len| len >= STREAM_AT),
    }
}

/// The calls and sessions of large inputs read ahead of their turn that a run may hold at
/// once ([`AheadRoom`]): ~8 MiB (a call is 240 bytes). Four 51 MB generated sessions hold
/// 6,032 calls each.
const AHEAD_ROOM: usize = 1 << 15;

/// A large input read ahead of its turn (see [`Handover`]): its sessions and calls when they
/// were all kept, with the room they hold; `None` when they went to the report.
fn read_ahead(
    present: &InputSet,
    file: String,
    h: Handover<'_, '_>,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<Option<(InputCalls, usize)>, Stop> {
    let room = h.room;
    let mut c = PerSession::new(Collector::reading_ahead(present, file, h));
    let read = read(d, &mut c);
    let c = c.into_inner();
    let held = c.held_ahead();
    if read.is_err() {
        room.give_back(held);
    }
    read?;
    let Collector { data, sink, .. } = c;
    match sink {
        Some((mut report, out)) => report.end_input(out).map(|()| None),
        None => Ok(Some((data, held))),
    }
}

/// The sessions and calls of one input, read whole.
fn collect(src: &Source, present: &InputSet, d: &mut Diags) -> Result<InputCalls, Stop> {
    let mut c = PerSession::new(Collector::new(present, src.name(), None));
    input::open::read_source(src, d, &mut c)?;
    Ok(c.into_inner().data)
}

/// The calls of one input named `file` handed to `report` as they are read: nothing of the
/// input is held but its model and field names.
fn stream_with(
    present: &InputSet,
    report: &mut UsageReport,
    file: String,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    report.input(&file);
    let mut c = PerSession::new(Collector::new(present, file, Some((report, out))));
    read(d, &mut c)?;
    match c.into_inner().sink {
        Some((mut report, out)) => report.end_input(out),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// --context

/// The `context` records of `input` read as if it came on stdin, with the context windows
/// `models` (read once by the caller: pi-replay reads models.json once a run and reports its
/// problems as its own).
pub(crate) fn contexts_with(
    models: &Models,
    input: &[u8],
    out: &mut Out,
    d: &mut Diags,
) -> Result<(), Stop> {
    write_contexts(models, None, "<stdin>", out, d, |d, v| {
        reader::read(input, false, d, v)
    })
}

fn run_context(args: &Args, sources: &[Source]) -> ExitCode {
    let models = models_json::load_for("pi-usage", args.models.as_deref());
    let table =
        (args.table || (!args.json && std::io::stdout().is_terminal())).then(width::columns);
    input::run(
        "pi-usage",
        sources,
        args.inputs.threads(),
        |src, out, d| {
            write_contexts(&models, table, &src.name(), out, d, |d, v| {
                input::open::read_source(src, d, v)
            })
        },
        |_, _| Ok(()),
    )
}

/// Writes the `context` records of one input named `file` (or, with `table`, its tables that
/// wide), which `read` feeds to the visitor it is given.
fn write_contexts(
    models: &Models,
    table: Option<Option<usize>>,
    file: &str,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut v = PerSession::new(ContextWriter {
        out,
        file: file.to_string(),
        models,
        table,
    });
    read(d, &mut v)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read;

    /// Forks and their originals (repeated calls), Pi 1.x's call sources and several sessions,
    /// read as one input.
    fn sessions() -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/");
        let names = [
            "usage-fork-original.jsonl",
            "usage-fork.jsonl",
            "usage-pi1-sources.jsonl",
            "usage-basic.jsonl",
            "usage-pi1-fork.jsonl",
        ];
        let read = |n: &str| std::fs::read(format!("{dir}{n}")).unwrap();
        names.iter().flat_map(|n| read(n)).collect()
    }

    fn report() -> UsageReport {
        let range = range::TimeRange {
            since: None,
            until: None,
            zone: Zone::Utc,
        };
        let dims = vec![Dim::Session, Dim::Model];
        UsageReport::new(dims, Zone::Utc, range, true, true, false)
    }

    /// Issue 18: a large input read ahead of its turn keeps its calls while the run's room
    /// lasts and hands them over to the report where it ends (at a session's header, in the
    /// middle of a session, or never): the records are those of the input streamed in its
    /// turn, whatever the room.
    #[test]
    fn an_input_read_ahead_reports_as_one_streamed() {
        let input = sessions();
        let present = InputSet::new(&[]);
        let mut want = Out::held();
        let mut streamed = report();
        let mut d = Diags::quiet("pi-usage", "<stdin>");
        let read_input = |d: &mut Diags, v: &mut dyn Visitor| read(&input[..], false, d, v);
        stream_with(
            &present,
            &mut streamed,
            "in".into(),
            &mut want,
            &mut d,
            read_input,
        )
        .unwrap();
        streamed.finish(&mut want).unwrap();
        let (mut handed_over, mut kept) = (0, 0);
        for limit in 0..200 {
            let report = Mutex::new(report());
            let room = AheadRoom::new(limit);
            let turn = input::Turn::alone();
            let mut out = Out::held();
            let h = Handover::new(&turn, &report, &mut out, &room);
            match read_ahead(&present, "in".into(), h, &mut d, read_input).unwrap() {
                None => handed_over += 1,
                Some((data, held)) => {
                    kept += 1;
                    report.lock().unwrap().file(data, &mut out).unwrap();
                    room.give_back(held);
                }
            }
            let mut report = report.into_inner().unwrap();
            report.finish(&mut out).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.buf),
                String::from_utf8_lossy(&want.buf),
                "room for {limit}"
            );
        }
        assert!(handed_over > 10 && kept > 10, "{handed_over} / {kept}");
    }
}
