//! pi-compactions: one record per compaction — what Pi recorded, and why we think it happened.
//!
//! Pi persists the finished `compaction` entry (summary, firstKeptEntryId, tokensBefore,
//! details, fromHook) but not the lifecycle around it: no start or end event, no durable
//! failure event, no retries, no trigger. The trigger is therefore *recorded* only when an
//! extension wrote it into `details`; otherwise it is *inferred* from the clues Pi does leave
//! (the reply right before and whether a context_edit hides it, the retried reply after, a
//! tool result right before, `tokensBefore` against the configured window), each listed as
//! evidence with its line, or *unknown*.
//!
//! Streaming, in bounded memory (see `session` and `waiting`). The modules, by job:
//! - `args`: the command line and the man page (its prose in `man/*.txt`);
//! - `read`: the members read from an entry; `ahead`: what an entry says of itself, read
//!   ahead of the reader on a large input; `errors`: what an error text says (`overflow`:
//!   Pi 1.6.0's overflow texts);
//!   `trigger`: the trigger of a compaction, decided from its clues;
//! - `session`: what is remembered of the session being read; `waiting`: records waiting
//!   in input order; `reporter`: the visitor that drives them, entry by entry;
//! - `records`: the output records; `table`: the human view (`--table`, the default on a
//!   terminal), made from those records.

mod ahead;
mod args;
mod errors;
mod overflow;
mod read;
mod records;
mod reporter;
mod reserve;
mod session;
mod table;
mod trigger;
mod waiting;

pub use args::{Args, MAN};
pub(crate) use reserve::Reserves;

use crate::cli::ManPage;
use crate::diag::Diags;
use crate::input;
use crate::models_json;
use crate::output::{Out, Stop};
use crate::reader::{self, PerSession, Visitor};
use crate::record::{describe, Described};
use crate::tool::Tool;
use reporter::{Reporter, Settings};
use std::process::ExitCode;

const TOOL: &str = "pi-compactions";

/// The records pi-compactions writes.
pub const RECORDS: &[Described] = &[
    describe::<records::CompactionReport<'static>>(),
    describe::<records::CompactionFailure<'static>>(),
    describe::<records::AssistantError<'static>>(),
    describe::<records::BranchSummaryReport<'static>>(),
];

/// compactions: the tool.
pub struct Compactions;

impl Tool for Compactions {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let windows = models_json::load_for(TOOL, args.models.as_deref());
        let reserves = Reserves::load(TOOL, args.reserve_tokens);
        let sources = args.inputs.sources();
        let table = crate::view::chosen(args.table, args.json);
        let mut all = table::Tally::default();
        let settings = Settings {
            args,
            windows: &windows,
            reserves: &reserves,
        };
        input::run(
            TOOL,
            &sources,
            args.inputs.threads(),
            |src, out, d| {
                let read = |d: &mut Diags, v: &mut dyn Visitor| input::open::read_source(src, d, v);
                if !table {
                    return report(&settings, &src.name(), out, d, read).map(|()| None);
                }
                let mut records = Out::held();
                report(&settings, &src.name(), &mut records, d, read)?;
                table::write_tables(&records.buf, out).map(Some)
            },
            |tally, out| match tally {
                Some(Some(t)) => {
                    all.add(&t);
                    Ok(())
                }
                Some(None) => Ok(()),
                None if table => table::write_footer(&all, out),
                None => Ok(()),
            },
        )
    }

    /// Runs pi-compactions over `input` as if it came on stdin (for tests and fuzzing); models.json
    /// is read as in [`run`]. The table only with --table (`out` is no terminal).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let windows = models_json::load_for(TOOL, args.models.as_deref());
        let reserves = Reserves::load(TOOL, args.reserve_tokens);
        let settings = Settings {
            args,
            windows: &windows,
            reserves: &reserves,
        };
        let read = |d: &mut Diags, v: &mut dyn Visitor| reader::read(input, false, d, v);
        if !args.table {
            return report(&settings, "<stdin>", out, d, read);
        }
        let mut records = Out::held();
        report(&settings, "<stdin>", &mut records, d, read)?;
        let tally = table::write_tables(&records.buf, out)?;
        table::write_footer(&tally, out)
    }
}

/// The records pi-compactions writes over `input` read as if it came on stdin, with the
/// context windows `windows` and the reserves `reserves` (read once by the caller: pi-replay
/// reads models.json and settings.json once a run and reports their problems as its own).
pub(crate) fn records_with(
    args: &Args,
    (windows, reserves): (&crate::models_json::Models, &Reserves),
    input: &[u8],
    out: &mut Out,
    d: &mut Diags,
) -> Result<(), Stop> {
    let settings = Settings {
        args,
        windows,
        reserves,
    };
    report(&settings, "<stdin>", out, d, |d, v| {
        reader::read(input, false, d, v)
    })
}

/// Reports the compactions of one input, which `read` feeds to the visitor it is given.
fn report(
    settings: &Settings<'_>,
    name: &str,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut v = PerSession::new(Reporter {
        settings,
        out,
        file: name,
    });
    read(d, &mut v)?;
    Ok(())
}
