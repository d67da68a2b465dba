//! pi-sessions: find every session file and describe it, one record per file.
//!
//! The walk, the layout rules and the per-file pass live in [`crate::discover`], which every
//! tool shares (it is how they default to the user's sessions). This folder is the command:
//! [`args`] (command line and man page), `select` (filters and order), [`record`] (the
//! `session_file` record), `table` (the table for people), and here the wiring: find,
//! describe, select, write.

pub mod args;
pub mod record;
mod select;
mod table;

pub use args::{Args, Bound, SortKey, StatusArg, MAN};
pub use record::SessionFile;

use crate::cli::ManPage;
use crate::cmd::usage::FileCells;
use crate::diag::Diags;
use crate::discover::{self, FileMeta, Progress, ProjectCache};
use crate::output::{Out, Stop};
use crate::record::{describe, Described, Record};
use crate::tool::Tool;
use std::ffi::OsString;
use std::io::{self, IsTerminal};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// The records pi-sessions writes.
pub const RECORDS: &[Described] = &[describe::<SessionFile>()];

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
        if args.cache.cache_clear {
            return crate::cache::clear_for(TOOL, &args.cache);
        }
        let format = Format::of(args, io::stdout().is_terminal());
        let Some(roots) = roots(args) else {
            return crate::input::exit_status();
        };
        let exts: Vec<OsString> = args
            .exts
            .iter()
            .map(|e| OsString::from(e.trim_start_matches('.')))
            .collect();
        // Opened before the threads start (it sets how they allocate).
        let cache = crate::cache::Cache::open(TOOL, &args.cache);
        // As many threads as asked, within the open-file limit (the file count is not known
        // before the walk): thousands of threads would cost more than the files.
        let threads = crate::input::driver::worker_count(args.threads.map(usize::from), usize::MAX);
        let described = scan(&roots, &exts, args.prompts, cache.as_ref(), threads);
        if let Some(c) = &cache {
            c.save();
        }
        let mut metas = described.metas();
        metas.retain(|m| select::keep(args, matches!(format, Format::Paths(_)), m));
        let key = args.sort.unwrap_or(if format == Format::Table {
            SortKey::Modified
        } else {
            SortKey::Path
        });
        select::sort(&mut metas, key, args.reverse);
        let cells = if format == Format::Table {
            discover::map_in_order(&metas, threads, || (), |(), m| usage_cells(m)).collect()
        } else {
            Vec::new()
        };
        let status = match write(args, &format, &metas, &cells) {
            Ok(()) | Err(Stop::BrokenPipe) => crate::input::exit_status(),
            Err(Stop::Io(e)) => {
                crate::diag::report_global(TOOL, format!("writing output: {e}"));
                ExitCode::from(2)
            }
        };
        // The descriptions are left to the process's end: freeing thousands of them one by one
        // (allocated on the pool's threads) was a third of the main thread's instructions in a
        // run that found every file in the cache.
        std::mem::forget(described);
        status
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
            role: discover::Role::Session,
            stat: None,
        };
        let m = discover::describe_bytes(&found, input, args.prompts, &ProjectCache::default());
        let mut metas = vec![&m];
        metas.retain(|m| select::keep(args, matches!(format, Format::Paths(_)), m));
        let cells: Vec<Option<FileCells>> = metas
            .iter()
            .map(|m| {
                m.status.is_fed().then(|| {
                    crate::cmd::usage::file_cells("<stdin>", |d, v| {
                        crate::reader::read(input, false, d, v)
                    })
                })
            })
            .collect();
        write_to(out, args, &format, &metas, &cells)
    }
}

/// The directories to walk: the DIR arguments and `--dir`, else the stores `--store` names
/// ([`discover::store_dirs`]). None when there is none (reported).
fn roots(args: &Args) -> Option<Vec<PathBuf>> {
    if !args.dir_args.is_empty() || !args.dirs.is_empty() {
        return Some(args.dir_args.iter().chain(&args.dirs).cloned().collect());
    }
    let stores = match discover::store_dirs(args.store, |k| std::env::var_os(k)) {
        Ok(s) => s,
        Err(e) => {
            crate::diag::report_global(TOOL, e);
            return None;
        }
    };
    let (there, missing): (Vec<_>, Vec<_>) = stores.into_iter().partition(|d| d.path.exists());
    for d in &missing {
        crate::diag::report_global(
            TOOL,
            format!(
                "no sessions directory {} ({})",
                discover::display(&d.path),
                d.what
            ),
        );
    }
    if there.is_empty() && missing.is_empty() {
        let pi = discover::sessions_dir().map(|d| d.path).unwrap_or_default();
        crate::diag::report_global(
            TOOL,
            format!(
                "no sessions directory: neither {} nor oh-my-pi's ~/.omp/agent/sessions exists",
                discover::display(&pi)
            ),
        );
    }
    (!there.is_empty()).then(|| there.into_iter().map(|d| d.path).collect())
}

/// The descriptions of the files found, in path order, kept where they were made (the parts
/// [`discover::map_in_parts`] gives: moving a few hundred bytes per file into one vector wrote
/// a megabyte of fresh pages for 2,000 files), with whether each came from the cache.
struct Descriptions<'c>(Vec<Vec<(discover::FileReport<'c>, bool)>>);

impl<'c> Descriptions<'c> {
    /// The descriptions, in order (a file that vanished has none).
    fn metas(&self) -> Vec<&FileMeta<'c>> {
        (self.0.iter().flatten())
            .filter_map(|(d, _)| d.meta.as_ref())
            .collect()
    }
}

/// Finds the files below `roots` and describes each (on `threads` threads; from `cache` when
/// it has them, on this thread alone until one is read, the files' lookups for its keys made
/// first on the threads), in path order; reports the problems of the walk and of reading.
fn scan<'c>(
    roots: &[PathBuf],
    exts: &[OsString],
    want_prompt: bool,
    cache: Option<&'c crate::cache::Cache>,
    threads: usize,
) -> Descriptions<'c> {
    let mut walked = Progress::run(TOOL, "found", |p| match cache {
        Some(c) => c.walk(roots, exts, Some(p)),
        None => discover::walk(roots, exts, Some(p)),
    });
    if cache.is_some() {
        discover::stat_files(&mut walked.files, Some(threads));
    }
    let projects = ProjectCache::default();
    let mut described = Progress::run(TOOL, "read", |p| {
        p.set_total(walked.files.len());
        discover::map_in_parts(
            &walked.files,
            threads,
            || (),
            |(), f| {
                let d = match cache {
                    Some(c) => crate::cache::sessions::describe(c, f, want_prompt, &projects),
                    None => (discover::describe(f, want_prompt, &projects), false),
                };
                p.add(1);
                d
            },
            |(_, cached)| !cached,
        )
    });
    discover::report_problems(TOOL, &walked.problems);
    for ((d, _), f) in described.iter_mut().flatten().zip(walked.files) {
        if let Some(p) = d.problem.take() {
            discover::report_problems(TOOL, &[(f.path.clone(), p)]);
        }
        if let Some(m) = &mut d.meta {
            m.found = f;
        }
    }
    Descriptions(described)
}

/// The cost and models of a file's row in the table: what pi-usage gives for the file read
/// alone ([`crate::cmd::usage::file_cells`]); none for a file pi-usage would not read or that
/// cannot be opened (only a regular file is read: a FIFO would block).
fn usage_cells(m: &FileMeta<'_>) -> Option<FileCells> {
    let path = &m.found.path;
    let file = match crate::input::open::open_regular(path) {
        Ok(Ok(f)) if m.status.is_fed() => f,
        _ => return None,
    };
    Some(crate::cmd::usage::file_cells(
        &path.to_string_lossy(),
        |d, v| crate::reader::read(file, true, d, v),
    ))
}

fn write(
    args: &Args,
    format: &Format,
    metas: &[&FileMeta<'_>],
    cells: &[Option<FileCells>],
) -> Result<(), Stop> {
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut lock = stdout.lock();
    let mut out = Out::direct(&mut lock, tty);
    write_to(&mut out, args, format, metas, cells)?;
    out.flush()
}

/// Writes `metas` as `format` says; `cells` are what pi-usage gives for each (the table only).
fn write_to(
    out: &mut Out,
    args: &Args,
    format: &Format,
    metas: &[&FileMeta<'_>],
    cells: &[Option<FileCells>],
) -> Result<(), Stop> {
    match format {
        Format::Records => {
            let prompt_chars = args.prompts.then_some(args.prompt_chars);
            for file in metas {
                SessionFile { file, prompt_chars }.write(out)?;
            }
        }
        Format::Paths(sep) => {
            for m in metas {
                let path = m.found.path.as_os_str().as_bytes();
                if *sep == b'\n' && path.iter().any(|&c| c < 0x20 || c == 0x7f) {
                    // Printed as it is, it would split in two for xargs or drive a terminal.
                    crate::diag::report_global(
                        TOOL,
                        format!(
                            "{}: not listed: its name holds a newline or control character; use --paths0",
                            m.found.path.to_string_lossy()
                        ),
                    );
                    continue;
                }
                out.buf.extend_from_slice(path);
                if *sep == b'\n' {
                    out.end_line()?;
                } else {
                    out.raw(&[*sep])?;
                }
            }
        }
        Format::Table => {
            let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
            let t = table::TableInput {
                now: table::now_ms(),
                home: home.as_deref(),
                prompts: args.prompts,
                usage: cells,
            };
            table::table(out, metas, &t)?
        }
    }
    Ok(())
}
