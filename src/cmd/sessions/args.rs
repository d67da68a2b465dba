//! pi-sessions' command line and man page (its prose in `man/*.txt`).

use crate::cli::ManPage;
use crate::discover::{parse_iso, FileStatus, Store};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

pub const MAN: ManPage = ManPage {
    name: "pi-sessions",
    summary: "find Pi session files and describe each one",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        ("pi-sessions", "On a terminal: a table of every session, newest first."),
        ("pi-sessions --project app --paths0 | pi-usage --files0-from - --total", "Sum usage over the sessions of one project, in one run (xargs -0 would split a long list into several runs, each with its own total)."),
        ("pi-sessions --project pi-jsonl --since 2026-04-01 --paths", "The sessions of one project since April."),
        ("pi-sessions --json | jq -r 'select(.status==\"unreadable\") | \"\\(.path): \\(.reason)\"'", "Which files Pi cannot load, and why."),
        ("pi-sessions --sort size --json | jq -r '.path' | head", "The largest session files."),
        ("pi-sessions ./backup --ext jsonl --ext json --status ok --paths", "Sessions kept under another folder, with either extension."),
        ("pi-sessions --store omp --json | jq -r 'select(.role==\"subagent\") | .path'", "oh-my-pi's sub-agent runs."),
    ],
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    Created,
    Modified,
    Size,
    Path,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum StatusArg {
    Ok,
    MetadataOnly,
    Unreadable,
    Empty,
    NotSession,
}

impl StatusArg {
    pub(super) fn status(self) -> FileStatus {
        match self {
            StatusArg::Ok => FileStatus::Ok,
            StatusArg::MetadataOnly => FileStatus::MetadataOnly,
            StatusArg::Unreadable => FileStatus::Unreadable,
            StatusArg::Empty => FileStatus::Empty,
            StatusArg::NotSession => FileStatus::NotSession,
        }
    }
}

/// A time bound from the command line: a date (the whole day, UTC) or a full ISO time.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    ms: i64,
    date_only: bool,
}

impl Bound {
    /// The first millisecond it admits as `--since`: the start of a date.
    pub(super) fn first_ms(self) -> i64 {
        self.ms
    }

    /// The last millisecond it admits as `--until`: the end of a date.
    pub(super) fn last_ms(self) -> i64 {
        if self.date_only {
            self.ms + 86_400_000 - 1
        } else {
            self.ms
        }
    }
}

/// Reads a `--since`/`--until` value with pi-usage's parser (`2026-03-01`, `20260301`, a time
/// with its zone), a day being a UTC day here (pi-sessions has no --tz); else a time without a
/// zone, taken as UTC.
fn parse_bound(s: &str) -> Result<Bound, String> {
    use crate::cmd::usage::range;
    match range::parse_bound(s) {
        Ok(range::Bound::Instant(ms)) => Ok(Bound {
            ms,
            date_only: false,
        }),
        Ok(range::Bound::Day(y, m, d)) => parse_iso(&format!("{y:04}-{m:02}-{d:02}"))
            .map(|(ms, date_only)| Bound { ms, date_only })
            .ok_or_else(|| format!("`{s}` is not a date")),
        Err(_) => parse_iso(s)
            .map(|(ms, date_only)| Bound { ms, date_only })
            .ok_or_else(|| {
                format!("`{s}` is not a date (YYYY-MM-DD or YYYYMMDD: 2026-03-01, 20260301) or an ISO time (2026-03-01T09:30:00Z; without a zone, UTC)")
            }),
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "pi-sessions",
    version,
    about = "Find Pi session files and describe each one: status, id, project, name, times, size, counts.",
    long_about = None
)]
pub struct Args {
    /// Directories to walk instead of the stores, as the other tools take FILE arguments. A
    /// DIR that is a file is described itself.
    #[arg(value_name = "DIR")]
    pub dir_args: Vec<PathBuf>,

    /// Walk DIR too (repeatable; the same as a DIR argument).
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Which stores to walk when no DIR is given: pi (Pi's sessions directory), omp
    /// (oh-my-pi's: ~/.omp/agent/sessions and ~/.omp/profiles/*/agent/sessions) or all (those
    /// of both that exist; the default). A file reached from two stores is described once.
    #[arg(long, value_enum, value_name = "STORE", default_value = "all")]
    pub store: Store,

    /// Take files whose name ends in .EXT, the whole of it (jsonl.bak takes a.jsonl.bak, bak
    /// takes it too; repeatable; default: jsonl).
    #[arg(long = "ext", value_name = "EXT", default_value = "jsonl")]
    pub exts: Vec<String>,

    /// Print only the paths, one a line. A name that holds a newline or another control
    /// character is left out and reported (use --paths0).
    #[arg(long, group = "format")]
    pub paths: bool,

    /// Print only the paths, each followed by a NUL byte (for the other tools' --files0-from, or
    /// xargs -0).
    #[arg(short = '0', long, group = "format")]
    pub paths0: bool,

    /// Print a table for people (the default when stdout is a terminal).
    #[arg(long, group = "format")]
    pub table: bool,

    /// Print session_file records even on a terminal.
    #[arg(long, group = "format")]
    pub json: bool,

    /// Order by KEY: path (byte order), created, modified or size (newest or largest first;
    /// files whose time is unknown last). Default: path, or modified for the table.
    #[arg(long, value_enum, value_name = "KEY")]
    pub sort: Option<SortKey>,

    /// Reverse the order (files whose time is unknown stay last).
    #[arg(short = 'r', long)]
    pub reverse: bool,

    /// Keep sessions whose project contains SUBSTR (case-sensitive).
    #[arg(long, value_name = "SUBSTR")]
    pub project: Option<String>,

    /// Keep sessions modified at or after WHEN: a date YYYY-MM-DD or YYYYMMDD (its start, UTC),
    /// as pi-usage --since takes it, or an ISO time (no offset means UTC).
    #[arg(long, value_name = "WHEN", value_parser = parse_bound)]
    pub since: Option<Bound>,

    /// Keep sessions modified at or before WHEN: a date YYYY-MM-DD or YYYYMMDD (the whole day,
    /// UTC) or an ISO time (no offset means UTC).
    #[arg(long, value_name = "WHEN", value_parser = parse_bound)]
    pub until: Option<Bound>,

    /// Keep files with this status (repeatable).
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Vec<StatusArg>,

    /// Add each session's first user prompt (first_prompt) to its record, and show it in the
    /// table's Name column for a session without a name. Session files hold private text, so
    /// nothing of it is printed without this.
    #[arg(long)]
    pub prompts: bool,

    /// With --prompts: keep at most N characters of the prompt in the record.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "prompts")]
    pub prompt_chars: usize,

    /// Read at most N files at once (default: one per CPU; never more than 8 per CPU, or 64 on
    /// a small machine, nor so many that the open-file limit is reached).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    #[command(flatten)]
    pub cache: crate::cache::CacheArgs,
}
