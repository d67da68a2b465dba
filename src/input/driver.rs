//! The driver that runs a tool over its inputs.
//!
//! FILE arguments are read in parallel (one worker thread per core, at most a few inputs ahead
//! of the writer), and their output is written in argument order; `-` or no FILE means stdin.
//! A single input streams straight to stdout.

use super::Source;
use crate::diag::Diags;
use crate::output::{Out, Stop};
use std::collections::BTreeMap;
use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// How far workers may run ahead of the writer (in inputs): enough to keep every thread
/// busy, few enough that held output stays small.
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
    run_in_turn(tool, sources, threads, |s, o, d, _| job(s, o, d), finish)
}

/// An input's place in the output order, for a job that needs every earlier input finished
/// before it goes on (see [`run_in_turn`]).
pub struct Turn<'a> {
    index: usize,
    /// `None` when the input is the only one (always its turn).
    order: Option<Order<'a>>,
}

/// The writer's progress as workers see it: how many inputs are written, the condition
/// variable signalled when that changes or the run stops, and whether it stopped.
type Order<'a> = (&'a Mutex<usize>, &'a Condvar, &'a AtomicBool);

/// Blocks until `ready(inputs written)` or the run stops; `false` when it stopped.
fn wait_for((written, gate, stopped): Order<'_>, ready: impl Fn(usize) -> bool) -> bool {
    let mut w = written.lock().unwrap_or_else(|e| e.into_inner());
    while !ready(*w) && !stopped.load(Ordering::Relaxed) {
        w = gate.wait(w).unwrap_or_else(|e| e.into_inner());
    }
    !stopped.load(Ordering::Relaxed)
}

impl Turn<'_> {
    /// Blocks until every earlier input has been handed to `finish`; then nothing else runs
    /// `finish` until this input's job returns. `false` when the run stopped meanwhile
    /// (stdout closed): the job should return at once.
    pub fn wait(&self) -> bool {
        self.order
            .map_or(true, |order| wait_for(order, |w| w >= self.index))
    }
}

/// [`run`] with each job given its input's [`Turn`]: a job may wait for it and then do, in
/// the worker, what `finish` would do with its result (pi-usage streams a large input into
/// its report this way instead of collecting it whole).
pub fn run_in_turn<T, J, F>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    job: J,
    finish: F,
) -> ExitCode
where
    T: Send,
    J: Fn(&Source, &mut Out, &mut Diags, &Turn) -> Result<T, Stop> + Sync,
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
    J: Fn(&Source, &mut Out, &mut Diags, &Turn) -> Result<T, Stop> + Sync,
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop>,
{
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut lock = stdout.lock();
    let mut out = Out::direct(&mut lock, tty);
    if sources.len() == 1 {
        let mut diags = Diags::new(tool, &sources[0].name(), true);
        let turn = Turn {
            index: 0,
            order: None,
        };
        let r = job(&sources[0], &mut out, &mut diags, &turn)?;
        finish(Some(r), &mut out)?;
        finish(None, &mut out)?;
        return out.flush();
    }
    let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
    let window = batch_size(threads);
    // Workers take inputs in argument order as long as they are at most `window` inputs
    // ahead of the writer; this thread writes each result as soon as all earlier ones are
    // written. No barrier between groups of inputs: a large input holds up only itself.
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let written = Mutex::new(0usize);
    let gate = Condvar::new();
    std::thread::scope(|scope| -> Result<(), Stop> {
        let (tx, rx) = mpsc::channel::<(usize, Result<T, Stop>, Vec<u8>, Diags)>();
        for _ in 0..threads.min(sources.len()) {
            let tx = tx.clone();
            let (next, stopped, written, gate, job) = (&next, &stopped, &written, &gate, &job);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= sources.len() {
                    return;
                }
                let order = (written, gate, stopped);
                if !wait_for(order, |w| i < w + window) {
                    return;
                }
                let src = &sources[i];
                let mut held = Out::held();
                let mut diags = Diags::new(tool, &src.name(), false);
                let turn = Turn {
                    index: i,
                    order: Some(order),
                };
                let r = job(src, &mut held, &mut diags, &turn);
                if tx.send((i, r, held.buf, diags)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let stop = |e: Stop| {
            // Under the lock, so a worker between its check and its wait cannot miss it.
            let _w = written.lock().unwrap_or_else(|e| e.into_inner());
            stopped.store(true, Ordering::Relaxed);
            gate.notify_all();
            e
        };
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (i, r, buf, diags) in rx.iter() {
            pending.insert(i, (r, buf, diags));
            while let Some((r, buf, mut diags)) = pending.remove(&want) {
                out.raw(&buf).map_err(stop)?;
                // Diagnostics follow the input's output, so a reader of both sees them in order.
                out.flush().map_err(stop)?;
                diags.flush();
                finish(Some(r.map_err(stop)?), &mut out).map_err(stop)?;
                want += 1;
                *written.lock().unwrap_or_else(|e| e.into_inner()) = want;
                gate.notify_all();
            }
        }
        Ok(())
    })?;
    finish(None, &mut out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A job that waits for its turn goes on only after every earlier input has been through
    /// `finish`, however long the earlier jobs take; one that does not wait runs ahead.
    #[test]
    fn a_job_waits_for_its_turn() {
        let sources: Vec<Source> = (0..6)
            .map(|i| Source::Path(format!("in{i}").into()))
            .collect();
        let events = Mutex::new(Vec::new());
        let log = |e: String| events.lock().unwrap().push(e);
        run_in_turn(
            "test",
            &sources,
            Some(2),
            |src, _out, _d, turn| {
                let name = src.name();
                match name.as_str() {
                    // Slow, so later inputs are taken while it runs.
                    "in0" | "in3" => std::thread::sleep(Duration::from_millis(60)),
                    "in2" | "in5" => {
                        assert!(turn.wait());
                        log(format!("{name} in turn"));
                    }
                    _ => {}
                }
                Ok(name)
            },
            |r, _out| {
                if let Some(name) = r {
                    log(format!("finish {name}"));
                }
                Ok(())
            },
        );
        let events = events.into_inner().unwrap();
        let at = |e: &str| events.iter().position(|x| x == e).unwrap();
        assert!(at("finish in1") < at("in2 in turn"), "{events:?}");
        assert!(at("in2 in turn") < at("finish in2"), "{events:?}");
        assert!(at("finish in4") < at("in5 in turn"), "{events:?}");
    }
}
