//! pi-sessions: find every session file and describe it, one record per file.
//!
//! The walk, the layout rules and the per-file pass live in [`crate::discover`], which every
//! tool shares (it is how they default to the user's sessions); this module is the command
//! line: filters, order, and the three outputs (records, paths, a table for people).

use crate::cli::ManPage;
use crate::diag::Diags;
use crate::discover::{self, parse_iso, FileMeta, FileReport, FileStatus, Progress, ProjectCache};
use crate::output::{Out, Stop};
use crate::tool::Tool;
use clap::{Parser, ValueEnum};
use rayon::prelude::*;
use std::ffi::OsString;
use std::io::{self, IsTerminal};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

pub const MAN: ManPage = ManPage {
    name: "pi-sessions",
    summary: "find Pi session files and describe each one",
    description: "pi-sessions walks the sessions directory (see ENVIRONMENT; --dir DIR instead, repeatable) and writes one session_file record per file whose name ends in .jsonl (--ext to change that): its status, the session id, project, name, times, size and counts. Nothing of a session's text is printed unless asked for (--prompts), except in the table, which shows a session's name or else the first words of its first prompt to the person at the terminal.\n\n\
Pi keeps sessions as DIR/--<encoded cwd>--/<time>_<id>.jsonl. Extensions keep more under a session's own folder DIR/--<encoded cwd>--/<time>_<id>/: sub-agent runs that are sessions themselves (run-0/session.jsonl, forks/*.jsonl) and debug transcripts that are not. The whole tree is walked, in parallel. A file below a folder named like a session file (without .jsonl) is reported with that file as its parent_file. A file whose first record has no \"type\" (such as a transcript starting {\"version\":1,\"recordType\":...}) has status not_session.\n\n\
Status: ok when the first record is a valid session header and a message follows; metadata_only when the header is valid but no message follows; unreadable when the first record is not a valid header (reason says why; Pi reads no session from such a file; when a valid header follows later, the record is still filled from it) or the file cannot be opened; empty for a zero-byte file; not_session as above. Lines that are not JSON are counted in bad_lines, not reported one by one.\n\n\
project is the header's cwd when it has one. Otherwise it is decoded from the --<encoded cwd>-- folder the file lies under. Pi turned every /, \\ and : of the cwd into -, so a - may be a separator or a real -: the name is resolved against the file system from /, one segment at a time, the longest run of pieces that names an existing directory first (a shorter one when the longer leads nowhere); a piece also matches a directory whose name starts with a . the piece lacks. What matches no directory is kept as one last segment, never split at guessed separators, and project_source says decoded_partial. A name that matches nothing and starts with a drive letter (--C--Users-x--, from C:\\Users\\x) is read as a Windows path: C:\\ and the rest as one segment.\n\n\
name is the latest session_info entry's name in file order, trimmed; a blank or missing name clears it. modified is, as Pi computes it, the latest timestamp of a user or assistant message (the message's own timestamp in milliseconds when it has one, else the entry's), else the header's timestamp, else the file's modification time; modified_source says which. created and modified are written as JavaScript's toISOString writes them (UTC, milliseconds).\n\n\
Symbolic links are followed. A link back to a directory above it, a broken link, a directory that cannot be read and a file that vanishes during the scan are each reported on stderr and the scan goes on. A file reached by several paths through links is described once, under the first path in sorted order. What is wrong inside a file is said in its record (status, reason, bad_lines), not on stderr: the exit status is 2 only for problems of the scan itself (a directory or file that cannot be read, a link loop, a bad option).\n\n\
Files are described in parallel in one streaming pass each (memory does not grow with the size of a file's lines). A progress line is drawn on stderr while scanning, only when stderr is a terminal.",
    output: "By default (stdout not a terminal, or --json): one session_file record per file, in path order, described field by field in docs/FORMAT.md. With --paths: the paths, one a line; with --paths0 (-0): the paths each followed by a NUL byte, for xargs -0. --paths and --paths0 leave out files with status empty and not_session unless --status is given, so that their output can be handed to the other tools. With --table (the default when stdout is a terminal): a table for people, newest first: age, size, messages, project and the session's name or the first words of its first prompt (or the status, for files that are not readable sessions); control characters are escaped.\n\n\
--sort orders the output: path (byte order, so a session file comes before the folder of its extras), created, modified or size (newest or largest first); --reverse turns it around. Files whose time is unknown come last. --project, --since, --until and --status filter the files; filtered-out files are not mentioned.",
    environment: "PI_CODING_AGENT_SESSION_DIR: the sessions directory, when set and not empty.\n\n\
PI_CODING_AGENT_DIR: otherwise the sessions directory is its sessions subdirectory.\n\n\
HOME: otherwise the sessions directory is ~/.pi/agent/sessions. A leading ~/ in the two variables above is expanded with HOME.\n\n\
COLUMNS: the width of the table (default 100).\n\n\
--dir replaces all of these. The other tools read the same files (all but empty and not_session ones) when they are given no FILE and their stdin is a terminal.",
    examples: &[
        ("pi-sessions", "On a terminal: a table of every session, newest first."),
        ("pi-sessions --paths0 | xargs -0 pi-usage --total", "Sum usage over every session."),
        ("pi-sessions --project pi-jsonl --since 2026-04-01 --paths", "The sessions of one project since April."),
        ("pi-sessions --json | jq -r 'select(.status==\"unreadable\") | \"\\(.path): \\(.reason)\"'", "Which files Pi cannot load, and why."),
        ("pi-sessions --sort size --json | jq -r '.path' | head", "The largest session files."),
        ("pi-sessions --dir ./backup --ext jsonl --ext json --status ok --paths", "Sessions kept under another folder, with either extension."),
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
    fn status(self) -> FileStatus {
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

fn parse_bound(s: &str) -> Result<Bound, String> {
    parse_iso(s)
        .map(|(ms, date_only)| Bound { ms, date_only })
        .ok_or_else(|| {
            format!("not a date or time: {s:?} (use YYYY-MM-DD or an ISO time such as 2026-04-21T08:59:18Z)")
        })
}

#[derive(Parser, Debug)]
#[command(
    name = "pi-sessions",
    version,
    about = "Find Pi session files and describe each one: status, id, project, name, times, size, counts.",
    long_about = None
)]
pub struct Args {
    /// Walk DIR instead of the sessions directory (repeatable). A DIR that is a file is
    /// described itself.
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Take files whose name ends in .EXT (repeatable; default: jsonl).
    #[arg(long = "ext", value_name = "EXT", default_value = "jsonl")]
    pub exts: Vec<String>,

    /// Print only the paths, one a line.
    #[arg(long, group = "format")]
    pub paths: bool,

    /// Print only the paths, each followed by a NUL byte (for xargs -0).
    #[arg(short = '0', long, group = "format")]
    pub paths0: bool,

    /// Print a table for people (the default when stdout is a terminal).
    #[arg(long, group = "format")]
    pub table: bool,

    /// Print session_file records even on a terminal.
    #[arg(long, group = "format")]
    pub json: bool,

    /// Order by KEY: path (byte order), created, modified or size (newest or largest first).
    /// Default: path, or modified for the table.
    #[arg(long, value_enum, value_name = "KEY")]
    pub sort: Option<SortKey>,

    /// Reverse the order.
    #[arg(short = 'r', long)]
    pub reverse: bool,

    /// Keep sessions whose project contains SUBSTR (case-sensitive).
    #[arg(long, value_name = "SUBSTR")]
    pub project: Option<String>,

    /// Keep sessions modified at or after WHEN: a date YYYY-MM-DD (its start, UTC) or an ISO
    /// time (no offset means UTC).
    #[arg(long, value_name = "WHEN", value_parser = parse_bound)]
    pub since: Option<Bound>,

    /// Keep sessions modified at or before WHEN: a date YYYY-MM-DD (the whole day, UTC) or an
    /// ISO time (no offset means UTC).
    #[arg(long, value_name = "WHEN", value_parser = parse_bound)]
    pub until: Option<Bound>,

    /// Keep files with this status (repeatable).
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Vec<StatusArg>,

    /// Add each session's first user prompt (first_prompt) to its record. Session files hold
    /// private text, so nothing of it is printed without this.
    #[arg(long)]
    pub prompts: bool,

    /// With --prompts: keep at most N characters of the prompt.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "prompts")]
    pub prompt_chars: usize,

    /// Read at most N files at once (default: one per CPU).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

const TOOL: &str = "pi-sessions";

#[derive(PartialEq, Eq)]
enum Format {
    Records,
    Paths(u8),
    Table,
}

impl Format {
    /// The output `args` ask for, the table being the default on a terminal.
    fn of(args: &Args, terminal: bool) -> Format {
        if args.paths {
            Format::Paths(b'\n')
        } else if args.paths0 {
            Format::Paths(0)
        } else if args.table || (!args.json && terminal) {
            Format::Table
        } else {
            Format::Records
        }
    }
}

/// sessions: the tool.
pub struct Sessions;

impl Tool for Sessions {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let format = Format::of(args, io::stdout().is_terminal());
        let roots = if args.dirs.is_empty() {
            match discover::sessions_dir() {
                Ok(d) => {
                    if !d.path.exists() {
                        crate::diag::report_global(
                            TOOL,
                            format!(
                                "no sessions directory {} (from {})",
                                discover::display(&d.path),
                                d.from
                            ),
                        );
                        return crate::input::exit_status();
                    }
                    vec![d.path]
                }
                Err(e) => {
                    crate::diag::report_global(TOOL, e);
                    return crate::input::exit_status();
                }
            }
        } else {
            args.dirs.clone()
        };
        let exts: Vec<OsString> = args
            .exts
            .iter()
            .map(|e| OsString::from(e.trim_start_matches('.')))
            .collect();
        let pool = match args.threads {
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n.into())
                .build(),
            None => rayon::ThreadPoolBuilder::new().build(),
        };
        let pool = match pool {
            Ok(p) => p,
            Err(e) => {
                crate::diag::report_global(TOOL, format!("cannot start threads: {e}"));
                return crate::input::exit_status();
            }
        };
        let want_prompt = args.prompts || format == Format::Table;
        let (walked, described) = pool.install(|| {
            let walked = Progress::run(TOOL, "found", |p| discover::walk(&roots, &exts, Some(p)));
            let projects = ProjectCache::default();
            let described: Vec<FileReport> = Progress::run(TOOL, "read", |p| {
                p.set_total(walked.files.len());
                walked
                    .files
                    .par_iter()
                    .map(|f| {
                        let d = discover::describe(f, want_prompt, &projects);
                        p.add(1);
                        d
                    })
                    .collect()
            });
            (walked, described)
        });
        discover::report_problems(TOOL, &walked.problems);
        let mut metas = Vec::with_capacity(described.len());
        for (f, d) in walked.files.iter().zip(described) {
            if let Some(p) = d.problem {
                discover::report_problems(TOOL, &[(f.path.clone(), p)]);
            }
            if let Some(m) = d.meta {
                metas.push(m);
            }
        }
        metas.retain(|m| keep(args, &format, m));
        let key = args.sort.unwrap_or(if format == Format::Table {
            SortKey::Modified
        } else {
            SortKey::Path
        });
        sort(&mut metas, key, args.reverse);
        match write(args, &format, &metas) {
            Ok(()) | Err(Stop::BrokenPipe) => crate::input::exit_status(),
            Err(Stop::Io(e)) => {
                crate::diag::report_global(TOOL, format!("writing output: {e}"));
                ExitCode::from(2)
            }
        }
    }

    /// Describes `input` as pi-sessions describes each file it finds, as if it were a file named
    /// `<stdin>` outside any sessions directory, and writes what pi-sessions would write for it
    /// (for tests and fuzzing: the per-file core of pi-sessions without the walk). Bytes in memory
    /// cannot fail to be read, so nothing is reported to `_d`: what pi-sessions finds wrong with a
    /// file goes into its record.
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, _d: &mut Diags) -> Result<(), Stop> {
        let format = Format::of(args, false);
        let found = discover::Found {
            path: "<stdin>".into(),
            parent_file: None,
            project_folder: None,
        };
        let want_prompt = args.prompts || format == Format::Table;
        let m = discover::describe_bytes(&found, input, want_prompt, &ProjectCache::default());
        let mut metas = vec![m];
        metas.retain(|m| keep(args, &format, m));
        write_to(out, args, &format, &metas)
    }
}

fn keep(args: &Args, format: &Format, m: &FileMeta) -> bool {
    if args.status.is_empty() {
        if matches!(format, Format::Paths(_)) && !m.status.is_fed() {
            return false;
        }
    } else if !args.status.iter().any(|s| s.status() == m.status) {
        return false;
    }
    if let Some(want) = &args.project {
        if !m
            .project
            .as_deref()
            .is_some_and(|p| p.contains(want.as_str()))
        {
            return false;
        }
    }
    if let Some(b) = args.since {
        if !m.modified.is_some_and(|t| t >= b.ms) {
            return false;
        }
    }
    if let Some(b) = args.until {
        let limit = if b.date_only {
            b.ms + 86_400_000 - 1
        } else {
            b.ms
        };
        if !m.modified.is_some_and(|t| t <= limit) {
            return false;
        }
    }
    true
}

fn sort(metas: &mut [FileMeta], key: SortKey, reverse: bool) {
    // Newest (largest) first; unknown times last; ties by path.
    let desc = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    };
    metas.sort_by(|a, b| {
        let o = match key {
            SortKey::Path => std::cmp::Ordering::Equal,
            SortKey::Created => desc(a.created, b.created),
            SortKey::Modified => desc(a.modified, b.modified),
            SortKey::Size => b.bytes.cmp(&a.bytes),
        };
        o.then_with(|| {
            let (x, y) = (a.found.path.as_os_str(), b.found.path.as_os_str());
            x.as_bytes().cmp(y.as_bytes())
        })
    });
    if reverse {
        metas.reverse();
    }
}

fn write(args: &Args, format: &Format, metas: &[FileMeta]) -> Result<(), Stop> {
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut lock = stdout.lock();
    let mut out = Out::direct(&mut lock, tty);
    write_to(&mut out, args, format, metas)?;
    out.flush()
}

fn write_to(out: &mut Out, args: &Args, format: &Format, metas: &[FileMeta]) -> Result<(), Stop> {
    match format {
        Format::Records => {
            for m in metas {
                record(out, m, args)?;
            }
        }
        Format::Paths(sep) => {
            for m in metas {
                out.buf
                    .extend_from_slice(m.found.path.as_os_str().as_bytes());
                if *sep == b'\n' {
                    out.end_line()?;
                } else {
                    out.raw(&[*sep])?;
                }
            }
        }
        Format::Table => table(out, metas)?,
    }
    Ok(())
}

fn record(out: &mut Out, m: &FileMeta, args: &Args) -> Result<(), Stop> {
    let path = m.found.path.to_string_lossy();
    let parent = m.found.parent_file.as_ref().map(|p| p.to_string_lossy());
    let c = m.counts.as_ref();
    let mut r = out.record("session_file");
    r.str("path", &path)
        .opt_str("session", m.session.as_deref())
        .opt_u64("version", m.version)
        .str("status", m.status.name())
        .opt_str("reason", m.reason.as_deref())
        .opt_str("parent_file", parent.as_deref())
        .opt_str("cwd", m.cwd.as_deref())
        .opt_str("project", m.project.as_deref())
        .opt_str("project_source", m.project_source.map(|s| s.name()))
        .opt_str("name", m.name.as_deref())
        .opt_str("parent_session", m.parent_session.as_deref())
        .opt_str(
            "created",
            m.created.map(crate::time::format_iso8601).as_deref(),
        )
        .opt_str(
            "modified",
            m.modified.map(crate::time::format_iso8601).as_deref(),
        )
        .opt_str("modified_source", m.modified_source)
        .u64("bytes", m.bytes)
        .u64("lines", m.lines)
        .u64("headers", m.headers)
        .opt_u64("entries", c.map(|c| c.entries))
        .opt_u64("messages", c.map(|c| c.messages))
        .opt_u64("user_messages", c.map(|c| c.user_messages))
        .opt_u64("assistant_messages", c.map(|c| c.assistant_messages))
        .opt_u64("leaves", c.map(|c| c.leaves))
        .opt_u64("compactions", c.map(|c| c.compactions));
    if c.is_some() {
        r.strs("models", m.models.iter().map(String::as_str));
    } else {
        r.null("models");
    }
    r.u64("bad_lines", m.bad_lines);
    if args.prompts {
        let p = m
            .first_prompt
            .as_deref()
            .map(|t| crate::model::truncate_chars(t, args.prompt_chars));
        r.opt_str("first_prompt", p.as_deref());
    }
    r.end();
    out.end_line()
}

// ---------------------------------------------------------------------------------------------
// The table

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A short age: `45s`, `12m`, `3h`, `5d`, `7w`, `4mo`, `2y`.
pub(crate) fn age(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        86_400..=1_209_599 => format!("{}d", s / 86_400),
        1_209_600..=5_183_999 => format!("{}w", s / 604_800),
        5_184_000..=31_535_999 => format!("{}mo", s / 2_592_000),
        _ => format!("{}y", s / 31_536_000),
    }
}

/// A short size: `812B`, `4.2K`, `17M`, `1.3G`.
pub(crate) fn size(b: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b}B")
    } else if v < 10.0 {
        format!("{v:.1}{}", units[u])
    } else {
        format!("{v:.0}{}", units[u])
    }
}

/// Keeps the last `max` characters, with `…` in front when cut.
fn cut_left(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let mut out = String::from("…");
    out.extend(s.chars().skip(n - max + 1));
    out
}

fn table(out: &mut Out, metas: &[FileMeta]) -> Result<(), Stop> {
    let width: usize = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(100);
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let now = now_ms();
    let project_w = 32.min(width / 3);
    let rows: Vec<[String; 5]> = metas
        .iter()
        .map(|m| {
            let mut project = m.project.clone().unwrap_or_else(|| "-".into());
            if let Some(h) = &home {
                if let Some(rest) = project.strip_prefix(h.as_str()) {
                    if rest.is_empty() || rest.starts_with('/') {
                        project = format!("~{rest}");
                    }
                }
            }
            let title = match m.status {
                FileStatus::Ok | FileStatus::MetadataOnly => m
                    .name
                    .clone()
                    .or_else(|| m.first_prompt.clone())
                    .unwrap_or_else(|| "(no prompt)".into()),
                s => format!("({})", s.name()),
            };
            let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
            [
                m.modified
                    .map(|t| age(now - t))
                    .unwrap_or_else(|| "?".into()),
                size(m.bytes),
                m.counts
                    .as_ref()
                    .map(|c| c.messages.to_string())
                    .unwrap_or_else(|| "-".into()),
                cut_left(&crate::diag::sanitize(&project), project_w),
                crate::diag::sanitize(&title).into_owned(),
            ]
        })
        .collect();
    let head = ["AGE", "SIZE", "MSGS", "PROJECT", "NAME"];
    let mut w = [0usize; 4];
    for r in std::iter::once(&head.map(String::from)).chain(rows.iter()) {
        for (i, c) in r.iter().take(4).enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let used: usize = w.iter().sum::<usize>() + 8;
    let name_w = width.saturating_sub(used).max(10);
    let mut line = |r: &[String]| -> Result<(), Stop> {
        let name = crate::model::truncate_chars(&r[4], name_w);
        let s = format!(
            "{:<a$}  {:>b$}  {:>c$}  {:<d$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            name,
            a = w[0],
            b = w[1],
            c = w[2],
            d = w[3]
        );
        out.buf.extend_from_slice(s.trim_end().as_bytes());
        out.end_line()
    };
    line(&head.map(String::from))?;
    for r in &rows {
        line(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_sizes_are_short() {
        assert_eq!(age(5_000), "5s");
        assert_eq!(age(3 * 3_600_000), "3h");
        assert_eq!(age(3 * 86_400_000), "3d");
        assert_eq!(age(400 * 86_400_000), "1y");
        assert_eq!(size(812), "812B");
        assert_eq!(size(4300), "4.2K");
        assert_eq!(size(17 * 1024 * 1024), "17M");
    }

    #[test]
    fn cut_left_keeps_the_end() {
        assert_eq!(cut_left("/home/u/src/project", 8), "…project");
        assert_eq!(cut_left("short", 8), "short");
    }
}
