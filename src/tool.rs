//! What every tool is: a command line, a man page, a run over its inputs, and the same run
//! over bytes in memory (for tests and fuzzing). The binaries in `bin/` call [`main`].

use crate::cli::{render_man, ManPage};
use crate::diag::Diags;
use crate::output::{Out, Stop};
use crate::view::colour::ColorChoice;
use clap::{CommandFactory, FromArgMatches, Parser};
use clap_complete::Shell;
use std::io::Write;
use std::process::ExitCode;

pub trait Tool {
    /// The command line.
    type Args: Parser;
    /// The man page's prose (options come from [`Tool::Args`]).
    const MAN: ManPage;
    /// Whether the tool prints a view for a person (and so takes `--color`).
    const HUMAN_VIEW: bool = true;
    /// Runs the tool over the inputs its arguments name; the process's exit status.
    fn run(args: &Self::Args) -> ExitCode;
    /// Runs the tool over `input` as if it were stdin, writing to `out` and reporting to `d`.
    fn run_bytes(args: &Self::Args, input: &[u8], out: &mut Out, d: &mut Diags)
        -> Result<(), Stop>;
}

/// The tool's `main`: parse the command line, run.
pub fn main<T: Tool>() -> ExitCode {
    // The arguments taken once (each call of `std::env::args_os` copies every one of them:
    // thousands of paths from `xargs`), the tool's name among them.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(first) = args.first() {
        crate::cli::set_tool_name(first);
    }
    let mut matches = match command::<T>().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => usage_error(T::MAN.name, &e),
    };
    // A closed pipe while printing either is no error (`pi-usage --man | head`).
    if matches.get_flag("man") {
        let _ = std::io::stdout().write_all(man::<T>().as_bytes());
        return ExitCode::SUCCESS;
    }
    if let Some(shell) = matches.get_one::<Shell>("completions") {
        let mut script = Vec::new();
        clap_complete::generate(*shell, &mut command::<T>(), T::MAN.name, &mut script);
        let _ = std::io::stdout().write_all(&script);
        return ExitCode::SUCCESS;
    }
    crate::diag::set_shown(if matches.get_flag("quiet") {
        crate::diag::Shown::Nothing
    } else if matches.get_flag("verbose") {
        crate::diag::Shown::Every
    } else {
        crate::diag::Shown::Summarised
    });
    if let Some(choice) = matches.try_get_one::<ColorChoice>("color").ok().flatten() {
        crate::view::colour::set_choice(*choice);
    }
    // Taken out of the matches rather than from a copy of them (`from_arg_matches`): no path
    // argument copied twice more.
    match T::Args::from_arg_matches_mut(&mut matches) {
        Ok(args) => {
            let status = T::run(&args);
            crate::diag::finish(T::MAN.name);
            status
        }
        Err(e) => usage_error(T::MAN.name, &e),
    }
}

/// Ends the run on a command line clap could not take, saying why as every diagnostic does
/// (`tool: unexpected argument '--x' found`, clap's hints on the lines after), with clap's
/// exit status (2). `--help` and `--version` come this way too and print as clap prints them.
fn usage_error(tool: &str, e: &clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let _ = write!(std::io::stderr().lock(), "{tool}: {text}");
    std::process::exit(e.exit_code());
}

/// The command line of tool `T`: its own arguments and those every tool has: `--man` and
/// `--completions SHELL` (for `cargo install`, which installs neither), `--quiet` and
/// `--verbose` (how much of the diagnostics is printed: [`crate::diag::Shown`]); and
/// `--color` when the tool has a human view.
pub fn command<T: Tool>() -> clap::Command {
    let cmd = T::Args::command()
        .after_help(crate::cli::help_after(&T::MAN, false))
        .after_long_help(crate::cli::help_after(&T::MAN, true));
    let cmd = if T::HUMAN_VIEW {
        cmd.arg(
            clap::Arg::new("color")
                .long("color")
                .value_name("WHEN")
                .value_parser(clap::value_parser!(ColorChoice))
                .default_value("auto")
                .help("Colour the view for a person: auto (when stdout is a terminal and NO_COLOR is unset or empty), always, never. JSON Lines are never coloured"),
        )
    } else {
        cmd
    };
    cmd
        .arg(
            clap::Arg::new("man")
                .long("man")
                .action(clap::ArgAction::SetTrue)
                .help("Print this tool's man page (roff) and exit (`--man | man -l -` shows it)"),
        )
        .arg(
            clap::Arg::new("completions")
                .long("completions")
                .value_name("SHELL")
                .value_parser(clap::value_parser!(Shell))
                .help("Print the shell completion script for SHELL (bash, zsh, fish, elvish, powershell) and exit"),
        )
        .arg(
            clap::Arg::new("quiet")
                .short('q')
                .long("quiet")
                .action(clap::ArgAction::SetTrue)
                .conflicts_with("verbose")
                .help("Print no diagnostics or notes on stderr; they are still counted, and the exit status is still 2 when anything was reported"),
        )
        .arg(
            clap::Arg::new("verbose")
                .long("verbose")
                .action(clap::ArgAction::SetTrue)
                .help(format!("Print every diagnostic: by default, when more than {} files report the same kind of problem, the later files' lines of that kind are summed up in one line at the end, and so are a file's lines of one kind past its first {}", crate::diag::SHOWN_FILES, crate::diag::SHOWN_LINES)),
        )
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
    render_man(&command::<T>(), &T::MAN)
}
