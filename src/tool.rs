//! What every tool is: a command line, a man page, a run over its inputs, and the same run
//! over bytes in memory (for tests and fuzzing). The binaries in `bin/` call [`main`].

use crate::cli::{render_man, ManPage};
use crate::diag::Diags;
use crate::output::{Out, Stop};
use clap::{CommandFactory, Parser};
use std::process::ExitCode;

pub trait Tool {
    /// The command line.
    type Args: Parser;
    /// The man page's prose (options come from [`Tool::Args`]).
    const MAN: ManPage;
    /// Runs the tool over the inputs its arguments name; the process's exit status.
    fn run(args: &Self::Args) -> ExitCode;
    /// Runs the tool over `input` as if it were stdin, writing to `out` and reporting to `d`.
    fn run_bytes(args: &Self::Args, input: &[u8], out: &mut Out, d: &mut Diags)
        -> Result<(), Stop>;
}

/// The tool's `main`: parse the command line, run.
pub fn main<T: Tool>() -> ExitCode {
    T::run(&T::Args::parse())
}

/// The tool's man page, rendered.
pub fn man<T: Tool>() -> String {
    render_man(&T::Args::command(), &T::MAN)
}
