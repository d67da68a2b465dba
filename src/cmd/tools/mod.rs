//! pi-tools: one record per tool call, joined to its result.
//!
//! An assistant message holds `toolCall` blocks (`id`, `name`, `arguments`); each result is a
//! later `toolResult` message naming the call in `toolCallId`. A user's `!cmd` is a
//! `bashExecution` message: call and result in one entry. pi-tools joins each call to its
//! result within its session and says, with the evidence, whether it went well.
//!
//! Streaming: records wait in a queue in input order; a record is written as soon as it and
//! every record before it are settled (answered, closed, or the session ended). Given a FILE,
//! a waiting record costs its ids and byte offsets: its result is read again from the file when
//! it is written, and its arguments too once the waiting calls' copies pass 1 MiB. From stdin,
//! a settled record that must wait is rendered at once and held as bytes.
//!
//! On a large input read on several cores, what each entry says of itself (its calls, a
//! result's facts) is read ahead of the reader on the other cores (`ahead.rs`); the reader
//! joins and writes.

mod ahead;
mod args;
mod facts;
mod join;
mod records;
mod text;
mod view;
mod waiting;

pub use args::{Args, CallStatus, MAN};
pub use records::{ToolCall, ToolResult};

use crate::cli::ManPage;
use crate::diag::{Diags, Kind};
use crate::input::{self, Source};
use crate::output::{Out, Stop};
use crate::reader::{self, PerSession};
use crate::record::{describe, Described};
use crate::tool::Tool;
use join::Joiner;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::process::ExitCode;
use waiting::KeptBytes;

/// The records pi-tools writes.
pub const RECORDS: &[Described] = &[describe::<ToolCall>(), describe::<ToolResult>()];

/// tools: the tool.
pub struct Tools;

impl Tool for Tools {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        if crate::view::chosen(args.table, args.json) {
            return run_view(args, &sources);
        }
        input::run_in_turn(
            "pi-tools",
            &sources,
            args.inputs.threads(),
            |src, out, d, turn| tools_source(args, src, out, d, Some((turn, &sources))),
            |_, _| Ok(()),
        )
    }

    /// Runs pi-tools over `input` as if it came on stdin (for tests and fuzzing); the tables
    /// only with --table (`out` is no terminal).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        if args.table {
            let mut records = Out::held();
            let view_args = view::record_args(args);
            let mut v = PerSession::new(Joiner::new(&view_args, &mut records, None, "<stdin>"));
            reader::read(input, false, d, &mut v)?;
            let summary = view::write_calls(&records.buf, out)?;
            return view::write_summary(&summary, out);
        }
        let mut v = PerSession::new(Joiner::new(args, out, None, "<stdin>"));
        reader::read(input, false, d, &mut v)?;
        Ok(())
    }
}

/// The human view: each input's records are written to memory, then shown as tables; the
/// summary per tool name comes after the last input.
fn run_view(args: &Args, sources: &[Source]) -> ExitCode {
    let view_args = view::record_args(args);
    let mut summary = view::Summary::new();
    input::run(
        "pi-tools",
        sources,
        args.inputs.threads(),
        |src, out, d| {
            let mut records = Out::held();
            tools_source(&view_args, src, &mut records, d, None)?;
            view::write_calls(&records.buf, out)
        },
        |counts, out| match counts {
            Some(c) => {
                view::merge(&mut summary, c);
                Ok(())
            }
            None => view::write_summary(&summary, out),
        },
    )
}

/// Writes the records of `src` to `out`. Given its turn (and every input, to look at the one
/// before), it may wait for it first ([`waits_for_turn`]).
fn tools_source(
    args: &Args,
    src: &Source,
    out: &mut Out,
    d: &mut Diags,
    turn: Option<(&input::Turn, &[Source])>,
) -> Result<(), Stop> {
    let Some(input) = input::Opened::open(src, d) else {
        return Ok(());
    };
    if let Some((turn, _)) = turn.filter(|(t, all)| waits_for_turn(&input, t, all)) {
        if !turn.wait() {
            return Ok(());
        }
    }
    let name = src.name();
    let mut v = PerSession::new(Joiner::new(args, out, input.file(), &name));
    input.read(d, &mut v)?;
    Ok(())
}

/// Whether `input` waits for its turn before it is read, its CPU lent to the input being
/// read: when it is read on several cores, its turn has not come, and the input before it is
/// read on several cores too (whose helpers then take the CPU). Its output (most of its size:
/// 39 MB of a 51 MB session) is then written as it is made, where read ahead of its turn it
/// was held and spilled to a temporary file, which cost more CPU than the wait (BENCHMARKS.md,
/// round 9). After small inputs it reads ahead as before: waiting for them would leave its CPU
/// idle (40 small files then a 51 MB one: 2 to 3 times the time).
fn waits_for_turn(input: &input::Opened, turn: &input::Turn, sources: &[Source]) -> bool {
    input.read_on_several_cores()
        && !turn.ready()
        && turn
            .index()
            .checked_sub(1)
            .and_then(|i| sources.get(i))
            .is_some_and(input::open::read_on_several_cores)
}

/// A re-read line or value is not what the first read saw.
fn changed(d: &mut Diags, line: u64) {
    d.report(
        Some(line),
        Kind::Io,
        "the file changed while it was read: this line reads differently now; its content is left out",
    );
}

/// The kept bytes: those in memory, or read again from the file into `buf`.
fn fetch<'b>(
    file: Option<&File>,
    blob: &'b KeptBytes,
    buf: &'b mut Vec<u8>,
    d: &mut Diags,
) -> Option<&'b [u8]> {
    match blob {
        KeptBytes::Mem(b) => Some(b),
        KeptBytes::At { offset, len } => {
            let f = file?;
            buf.clear();
            buf.resize(*len as usize, 0);
            match f.read_exact_at(buf, *offset) {
                Ok(()) => Some(&buf[..]),
                Err(e) => {
                    d.report(
                        None,
                        Kind::Io,
                        format!("reading the file again failed (did it shrink?): {e}"),
                    );
                    None
                }
            }
        }
    }
}
