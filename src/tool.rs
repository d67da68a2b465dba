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

/// The process entry point of every binary (`bin/*.rs` are `#![no_main]`), in place of Rust's
/// own start-up, which would replace a closed stdout by /dev/null: `tool FILE >&-` would then
/// end with status 0 and its output silently lost. Here a closed stdout is an error (status 2)
/// before anything is opened; a closed stdin or stderr is given /dev/null, as Rust does (so no
/// input file can take their place); SIGPIPE is ignored, as Rust does, so that a reader that
/// goes away (`| head`) is a write error the tools end on quietly.
pub fn process_main<T: Tool>() -> i32 {
    // SAFETY: fcntl(F_GETFD) reads a descriptor's flags; open and signal are called before
    // any other thread exists.
    unsafe {
        let closed = |fd| libc::fcntl(fd, libc::F_GETFD) == -1;
        for fd in [libc::STDIN_FILENO, libc::STDERR_FILENO] {
            if closed(fd) {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
        if closed(libc::STDOUT_FILENO) {
            crate::diag::report_global(
                T::MAN.name,
                "standard output is closed: nothing can be written",
            );
            return 2;
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // The tools' statuses are 0 and 2 (clap exits by itself on a usage error). A panic is a
    // bug: the hook has printed it; it must not unwind out of this `extern "C"` entry point
    // (which aborts), so it ends the run with Rust's usual status for a panic, 101.
    match std::panic::catch_unwind(main::<T>) {
        Ok(code) if code == ExitCode::SUCCESS => 0,
        Ok(_) => 2,
        Err(_) => 101,
    }
}

/// The tool's man page, rendered.
pub fn man<T: Tool>() -> String {
    render_man(&T::Args::command(), &T::MAN)
}
