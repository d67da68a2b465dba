//! Inputs and the driver that runs a tool over them.
//!
//! FILE arguments are read in parallel (rayon), a batch at a time, and their output is written
//! in argument order; `-` or no FILE means stdin. A single input streams straight to stdout.

use crate::diag::Diags;
use crate::output::{Out, Stop};
use crate::reader::{self, Stats, Visitor};
use rayon::prelude::*;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Stdin,
    Path(PathBuf),
}

impl Source {
    pub fn from_args(files: &[OsString]) -> Vec<Source> {
        if files.is_empty() {
            return vec![Source::Stdin];
        }
        files
            .iter()
            .map(|f| {
                if f == "-" {
                    Source::Stdin
                } else {
                    Source::Path(PathBuf::from(f))
                }
            })
            .collect()
    }

    /// The name used in diagnostics and in records' `file` field.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::Path(p) => p.to_string_lossy().into_owned(),
        }
    }

    pub fn is_stdin(&self) -> bool {
        matches!(self, Source::Stdin)
    }

    /// Opens the input for sequential reading.
    pub fn open(&self) -> io::Result<Box<dyn Read + Send>> {
        match self {
            Source::Stdin => Ok(Box::new(io::stdin())),
            Source::Path(p) => Ok(Box::new(File::open(p)?)),
        }
    }
}

/// An input opened for a tool that reads parts of a named file again by offset (pi-branch,
/// pi-tools): the file stays open for that. Stdin is read once, as a stream.
pub enum Opened {
    Stdin,
    File(File),
}

impl Opened {
    /// Opens `src`; a file that cannot be opened is reported (`cannot open: …`) and gives
    /// `None`.
    pub fn open(src: &Source, d: &mut Diags) -> Option<Opened> {
        match src {
            Source::Stdin => Some(Opened::Stdin),
            Source::Path(p) => match File::open(p) {
                Ok(f) => Some(Opened::File(f)),
                Err(e) => {
                    d.report(None, crate::diag::Kind::Io, format!("cannot open: {e}"));
                    None
                }
            },
        }
    }

    /// The open file, to read again by offset; `None` for stdin.
    pub fn file(&self) -> Option<&File> {
        match self {
            Opened::Stdin => None,
            Opened::File(f) => Some(f),
        }
    }

    /// Reads the whole input through the session reader.
    pub fn read(&self, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
        match self {
            Opened::Stdin => reader::read(io::stdin().lock(), false, d, v),
            Opened::File(f) => reader::read(f, true, d, v),
        }
    }
}

/// How many inputs run at once: enough to keep every thread busy, few enough that held
/// output stays small.
fn batch_size(threads: usize) -> usize {
    threads * 4
}

/// Runs `job` over every input and hands each result, in argument order, to `finish`.
///
/// `job` writes its lines to the [`Out`] it is given and reports problems to its [`Diags`];
/// `finish` may write more (aggregating tools write their totals there). A closed stdout ends
/// the run at once with status 0; otherwise the status is 2 when anything was reported.
pub fn run<T, J, F>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    job: J,
    finish: F,
) -> ExitCode
where
    T: Send,
    J: Fn(&Source, &mut Out, &mut Diags) -> Result<T, Stop> + Sync,
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop>,
{
    match drive(tool, sources, threads, job, finish) {
        Ok(()) => exit_status(),
        Err(Stop::BrokenPipe) => ExitCode::SUCCESS,
        Err(Stop::Io(e)) => {
            crate::diag::report_global(tool, format!("writing output: {e}"));
            ExitCode::from(2)
        }
    }
}

/// 2 when anything was reported, else 0.
pub fn exit_status() -> ExitCode {
    if crate::diag::any_reported() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn drive<T, J, F>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    job: J,
    mut finish: F,
) -> Result<(), Stop>
where
    T: Send,
    J: Fn(&Source, &mut Out, &mut Diags) -> Result<T, Stop> + Sync,
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop>,
{
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut lock = stdout.lock();
    let mut out = Out::direct(&mut lock, tty);
    if sources.len() == 1 {
        let mut diags = Diags::new(tool, &sources[0].name(), true);
        let r = job(&sources[0], &mut out, &mut diags)?;
        finish(Some(r), &mut out)?;
        finish(None, &mut out)?;
        return out.flush();
    }
    let pool = match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build(),
        None => rayon::ThreadPoolBuilder::new().build(),
    }
    .map_err(|e| Stop::Io(io::Error::other(e)))?;
    let batch = batch_size(pool.current_num_threads());
    for chunk in sources.chunks(batch) {
        let results: Vec<_> = pool.install(|| {
            chunk
                .par_iter()
                .map(|src| {
                    let mut held = Out::held();
                    let mut diags = Diags::new(tool, &src.name(), false);
                    let r = job(src, &mut held, &mut diags);
                    (r, held.buf, diags)
                })
                .collect()
        });
        for (r, buf, mut diags) in results {
            out.raw(&buf)?;
            // Diagnostics follow the input's output, so a reader of both sees them in order.
            out.flush()?;
            diags.flush();
            finish(Some(r?), &mut out)?;
        }
    }
    finish(None, &mut out)?;
    out.flush()
}

/// Writes `bytes` to stdout directly (for tools whose output is not line records).
pub fn write_stdout(bytes: &[u8]) -> Result<(), Stop> {
    let mut l = io::stdout().lock();
    l.write_all(bytes)?;
    l.flush()?;
    Ok(())
}
