//! The driver that runs a tool over its inputs.
//!
//! FILE arguments are read in parallel (one worker thread per core, at most a few inputs ahead
//! of what is written), and their output is written in argument order, by the worker that
//! finds the next one done; `-` or no FILE means stdin.
//! A single input streams straight to stdout.

use super::early::{self, ReadAhead};
use super::{chunks, Source};
use crate::diag::Diags;
use crate::output::{Out, Spill, Stop};
use crate::reader::{Ahead, Notes};
use crate::sync::{into_inner, lock, wait};
use std::collections::BTreeMap;
use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many workers read inputs: as many as asked (default: one per CPU), but no more than
/// there are inputs, no more than [`MAX_PER_CPU`] per CPU (at least [`MAX_ANYWAY`]): more
/// threads than that only cost their start and their switches), and few enough that the
/// files they hold open (at most two each) stay well inside the process's open-file limit:
/// more would fail with "Too many open files".
pub fn worker_count(asked: Option<usize>, inputs: usize) -> usize {
    let cpus = cpus();
    let asked = asked.unwrap_or(cpus);
    let useful = (cpus * MAX_PER_CPU).max(MAX_ANYWAY);
    let files = open_file_limit().map_or(usize::MAX, |n| n.saturating_sub(64) / 2);
    asked.min(inputs).min(useful).min(files).max(1)
}

/// The CPUs this process may run on. Not rayon's `current_num_threads`, which starts rayon's
/// pool to count them: its idle threads spin (`sched_yield`, 66 calls in a run over one
/// 200 MB file) on the cores the workers and the chunk helpers need. Counted once: std reads
/// the affinity mask and the cgroup's quota files again at every call (21 system calls under
/// cgroup v1).
pub fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Threads per CPU past which more only wait (reading is CPU-bound, and the page cache or a
/// disk's queue is kept busy well before this).
const MAX_PER_CPU: usize = 8;
/// The cap on small machines, for inputs on slow storage.
const MAX_ANYWAY: usize = 64;

/// The soft limit on open files, when there is one.
fn open_file_limit() -> Option<usize> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY)
        .then(|| usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX))
}

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
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop> + Send,
{
    run_in_turn(tool, sources, threads, |s, o, d, _| job(s, o, d), finish)
}

/// An input's place in the output order, for a job that needs every earlier input finished
/// before it goes on (see [`run_in_turn`]).
pub struct Turn<'a> {
    index: usize,
    /// `None` when the input is the only one (always its turn).
    order: Option<&'a WriteOrder>,
}

impl Turn<'static> {
    /// The turn of an input read alone: always its turn.
    pub fn alone() -> Turn<'static> {
        Turn {
            index: 0,
            order: None,
        }
    }
}

impl crate::output::Turn for Turn<'_> {
    fn ready(&self) -> bool {
        Turn::ready(self)
    }

    fn wait(&self) -> bool {
        Turn::wait(self)
    }
}

impl Turn<'_> {
    /// The input's place in the argument order (0 for the first).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Whether it is this input's turn already: every earlier input has been handed to
    /// `finish` (a job that finds it is may go on as [`Turn::wait`] would let it, without
    /// waiting; one that finds it is not may read ahead of its turn).
    pub fn ready(&self) -> bool {
        self.order
            .is_none_or(|p| p.written_now.load(Ordering::Acquire) >= self.index)
    }

    /// Blocks until every earlier input has been handed to `finish`; then nothing else runs
    /// `finish` until this input's job returns. `false` when the run stopped meanwhile
    /// (stdout closed): the job should return at once.
    pub fn wait(&self) -> bool {
        // A worker waiting uses no CPU: helpers of the input being read may.
        self.order
            .is_none_or(|p| chunks::idle(|| p.wait_for_turn(self.index)))
    }
}

/// The writer's progress through the argument order, as the workers see it. A worker may start input `i` once fewer than
/// `window` inputs separate it from the writer; when the writer moves on by one input,
/// exactly one more input may start, so the writer wakes only the worker waiting for that
/// one (its slot, `i % window`), never every worker: with hundreds of threads, waking them
/// all on every written input costs more than the work.
pub struct WriteOrder {
    /// Inputs written; the mutex orders the waits against the writer's updates.
    written: Mutex<usize>,
    /// The same count, read without the lock on the fast path.
    written_now: AtomicUsize,
    window: usize,
    /// Where the worker holding input `i` waits for its start: `slots[i % window]`, and how
    /// many do (a wake-up with none waiting is still a system call).
    slots: Vec<Condvar>,
    start_waiters: AtomicUsize,
    /// Where jobs wait for their turn ([`Turn::wait`]), and how many do.
    turns: Condvar,
    turn_waiters: AtomicUsize,
    stopped: AtomicBool,
}

impl WriteOrder {
    fn new(window: usize) -> WriteOrder {
        WriteOrder {
            written: Mutex::new(0),
            written_now: AtomicUsize::new(0),
            window,
            slots: (0..window).map(|_| Condvar::new()).collect(),
            start_waiters: AtomicUsize::new(0),
            turns: Condvar::new(),
            turn_waiters: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        lock(&self.written)
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Blocks until input `i` may start; `false` when the run stopped.
    fn wait_for_start(&self, i: usize) -> bool {
        if i < self.written_now.load(Ordering::Acquire) + self.window {
            return !self.stopped();
        }
        let mut w = self.lock();
        self.start_waiters.fetch_add(1, Ordering::Relaxed);
        while i >= *w + self.window && !self.stopped() {
            w = wait(&self.slots[i % self.window], w);
        }
        self.start_waiters.fetch_sub(1, Ordering::Relaxed);
        !self.stopped()
    }

    /// Blocks until every input before `i` is written; `false` when the run stopped.
    fn wait_for_turn(&self, i: usize) -> bool {
        let mut w = self.lock();
        self.turn_waiters.fetch_add(1, Ordering::Relaxed);
        while *w < i && !self.stopped() {
            w = wait(&self.turns, w);
        }
        self.turn_waiters.fetch_sub(1, Ordering::Relaxed);
        !self.stopped()
    }

    /// The writer has written `written` inputs: input `written - 1 + window` may start.
    fn wrote(&self, written: usize) {
        let mut w = self.lock();
        *w = written;
        self.written_now.store(written, Ordering::Release);
        // The counts change only under the lock held here: a waiter counted is waiting or
        // about to wait, and is woken.
        if self.start_waiters.load(Ordering::Relaxed) > 0 {
            self.slots[(written - 1) % self.window].notify_all();
        }
        if self.turn_waiters.load(Ordering::Relaxed) > 0 {
            self.turns.notify_all();
        }
    }

    /// The run stops (stdout closed): every waiting worker returns.
    fn stop(&self) {
        // Under the lock, so a worker between its check and its wait cannot miss it.
        let _w = self.lock();
        self.stopped.store(true, Ordering::Relaxed);
        for slot in &self.slots {
            slot.notify_all();
        }
        self.turns.notify_all();
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
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop> + Send,
{
    status(tool, drive(tool, sources, threads, usize::MAX, job, finish))
}

/// [`run_in_turn`] for a tool whose job waits for its input's turn before it does anything
/// (pi-redact: one pseudonym table, filled in argument order): one worker takes the inputs in
/// order, and the other CPUs of `threads` go to the chunk helpers of a large input. More
/// workers would only wait for their turns, each counted busy (taking a CPU from the
/// helpers), and hand every input over between threads: 121 small sessions took 18 % longer
/// on 2 cores than on one.
pub fn run_one_at_a_time<J>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    job: J,
) -> ExitCode
where
    J: Fn(&Source, &mut Out, &mut Diags) -> Result<(), Stop> + Sync,
{
    let job = |s: &Source, o: &mut Out, d: &mut Diags, _: &Turn| job(s, o, d);
    status(tool, drive(tool, sources, threads, 1, job, |_, _| Ok(())))
}

/// [`run_one_at_a_time`] with the inputs' chunks read ahead on the run's other CPUs
/// (`input::early`: split and validated, and `ahead`'s facts found) for a visitor whose scan
/// notes `notes` (`reader::Notes::of`): the job gets an input's chunks when they come so.
/// With one input or one CPU it is [`run_one_at_a_time`]. The inputs are read on this
/// thread, each one's output written, then its diagnostics, as there.
pub fn run_one_at_a_time_early<J>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    notes: Notes,
    ahead: Option<&dyn Ahead>,
    job: J,
) -> ExitCode
where
    J: Fn(&Source, Option<ReadAhead<'_, '_>>, &mut Out, &mut Diags) -> Result<(), Stop> + Sync,
{
    let cpus = threads.unwrap_or_else(cpus).max(1);
    let helpers = cpus.saturating_sub(1).min(chunks::MAX_HELPERS);
    if sources.len() < 2 || helpers == 0 {
        return run_one_at_a_time(tool, sources, threads, |s, o, d| job(s, None, o, d));
    }
    chunks::BUDGET.set_total(cpus);
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut lock = stdout.lock();
    let mut out = Out::direct(&mut lock, tty);
    let _busy = chunks::Busy::start();
    let read = early::in_order(sources, helpers, notes, ahead, |i, early| {
        let src = &sources[i];
        let mut diags = Diags::new(tool, &src.name(), false);
        let r = job(src, early, &mut out, &mut diags);
        // Diagnostics follow the input's output, as the workers write them.
        out.flush()?;
        diags.flush();
        r
    });
    status(tool, read.and_then(|_| out.flush()))
}

/// The exit status of a run that ended with `r`.
fn status(tool: &'static str, r: Result<(), Stop>) -> ExitCode {
    match r {
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

/// Runs `job` on every input on up to `max_workers` workers (and `threads` CPUs in all).
fn drive<T, J, F>(
    tool: &'static str,
    sources: &[Source],
    threads: Option<usize>,
    max_workers: usize,
    job: J,
    mut finish: F,
) -> Result<(), Stop>
where
    T: Send,
    J: Fn(&Source, &mut Out, &mut Diags, &Turn) -> Result<T, Stop> + Sync,
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop> + Send,
{
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let cpus = threads.unwrap_or_else(cpus).max(1);
    chunks::BUDGET.set_total(cpus);
    if sources.len() == 1 {
        let mut lock = stdout.lock();
        let mut out = Out::direct(&mut lock, tty);
        let _busy = chunks::Busy::start();
        let mut diags = Diags::new(tool, &sources[0].name(), true);
        let turn = Turn::alone();
        let r = job(&sources[0], &mut out, &mut diags, &turn)?;
        finish(Some(r), &mut out)?;
        finish(None, &mut out)?;
        return out.flush();
    }
    let threads = worker_count(threads, sources.len()).min(max_workers);
    // Workers take inputs in argument order as long as they are at most `window` inputs
    // ahead of the writer. No barrier between groups of inputs: a large input holds up only
    // itself. Each result is written, in argument order, by the worker that finds it next
    // ([`InOrder`]); this thread only waits.
    let next = AtomicUsize::new(0);
    let order = WriteOrder::new(batch_size(threads));
    let in_order = InOrder::new(&order, tty, finish);
    std::thread::scope(|scope| -> Result<(), Stop> {
        for k in 0..threads {
            let (next, order, job, in_order) = (&next, &order, &job, &in_order);
            let worker = move || work(tool, sources, next, order, job, in_order, tty);
            // The system may refuse more threads (a process limit): the ones started do the
            // work. Without any, nothing could be read: that is an error.
            if let Err(e) = std::thread::Builder::new().spawn_scoped(scope, worker) {
                if k == 0 {
                    return Err(Stop::Io(e));
                }
                break;
            }
        }
        Ok(())
    })?;
    let (mut finish, buf) = in_order.into_parts()?;
    let mut stdout = io::stdout();
    let mut out = Out::direct_in(&mut stdout, tty, buf);
    finish(None, &mut out)?;
    out.flush()
}

/// A worker: takes the next input in argument order once it may start, runs the job on it
/// with output held until the input's turn (then written to stdout by the worker, `tty` being
/// whether that is a terminal; past the bound spilled to a file, `Out::held_in_turn`), and
/// hands the result and what is still held (spilled, then in memory) over to be written in
/// order ([`InOrder::deliver`]), until none is left or the run stops.
fn work<T, J, F>(
    tool: &'static str,
    sources: &[Source],
    next: &AtomicUsize,
    order: &WriteOrder,
    job: &J,
    in_order: &InOrder<'_, T, F>,
    tty: bool,
) where
    J: Fn(&Source, &mut Out, &mut Diags, &Turn) -> Result<T, Stop>,
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop>,
{
    // A job that panics (a bug: input never should) stops the run, so the other workers do
    // not wait for a start the writer can no longer give; the scope then re-raises the panic.
    let _guard = crate::sync::on_panic(|| order.stop());
    // The held output's memory, kept from one input to the next when what is left of it at
    // the end is small (it was written in turn): growing a new buffer to HOLD_MAX for every
    // input faulted in its pages each time (pi-tools over four 51 MB files on 2 threads:
    // 11,300 page faults against 1,700 on one).
    let mut spare = Vec::new();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= sources.len() || !order.wait_for_start(i) {
            return;
        }
        let src = &sources[i];
        let mut diags = Diags::new(tool, &src.name(), false);
        let turn = Turn {
            index: i,
            order: Some(order),
        };
        let mut stdout = io::stdout();
        let mut held = Out::held_in_turn(&turn, &mut stdout, tty, std::mem::take(&mut spare));
        let busy = chunks::Busy::start();
        let r = job(src, &mut held, &mut diags, &turn);
        drop(busy);
        let spill = held.take_spill();
        let left = if held.writes() {
            let left = held.buf.clone();
            spare = std::mem::take(&mut held.buf);
            left
        } else {
            std::mem::take(&mut held.buf)
        };
        if !in_order.deliver(i, (r, spill, left, diags)) {
            return;
        }
    }
}

/// The results of the inputs, written in argument order by whichever worker delivers the one
/// due next ([`InOrder::deliver`]): that worker writes it (its output, then its diagnostics,
/// then `finish` with its result) and every later one already delivered, then goes back to
/// reading. Where a writer thread waited for each result, every input cost a wake-up and two
/// switches between threads (2,000 small files: ~8 % of the run's CPU in `futex`).
struct InOrder<'a, T, F> {
    /// Results delivered before their turn, by index.
    pending: Mutex<BTreeMap<usize, Parts<T>>>,
    /// Held by the worker writing; a worker that finds it held leaves its result in `pending`
    /// for the one holding it.
    writer: Mutex<Writer<F>>,
    order: &'a WriteOrder,
    tty: bool,
}

/// What a worker hands over for an input: the job's result, the output held (what was spilled
/// of it, then what is in memory) and its diagnostics.
type Parts<T> = (Result<T, Stop>, Option<Spill>, Vec<u8>, Diags);

struct Writer<F> {
    finish: F,
    /// The next input to write.
    want: usize,
    /// Memory for the output written, kept from one input to the next.
    buf: Vec<u8>,
    /// What stopped the run (a write error, a job's error), to return once it has ended.
    failed: Option<Stop>,
}

impl<'a, T, F> InOrder<'a, T, F>
where
    F: FnMut(Option<T>, &mut Out) -> Result<(), Stop>,
{
    fn new(order: &'a WriteOrder, tty: bool, finish: F) -> Self {
        InOrder {
            pending: Mutex::new(BTreeMap::new()),
            writer: Mutex::new(Writer {
                finish,
                want: 0,
                buf: Vec::new(),
                failed: None,
            }),
            order,
            tty,
        }
    }

    /// Hands over input `i`'s result, and writes it and those after it that are due, unless
    /// another worker is writing (it then writes them). `false` when the run has stopped.
    fn deliver(&self, i: usize, parts: Parts<T>) -> bool {
        lock(&self.pending).insert(i, parts);
        loop {
            let Ok(mut w) = self.writer.try_lock() else {
                // The worker writing looks at `pending` again after it lets go (below).
                return !self.order.stopped();
            };
            if w.failed.is_none() {
                if let Err(e) = self.write_due(&mut w) {
                    w.failed = Some(e);
                    self.order.stop();
                }
            }
            let want = w.want;
            // Tests widen the window in which another worker's result can arrive unseen.
            #[cfg(test)]
            std::thread::sleep(std::time::Duration::from_micros(30));
            drop(w);
            // A result delivered while this worker wrote, whose worker found the writer busy
            // and left: written now, by this one.
            if self.order.stopped() || !lock(&self.pending).contains_key(&want) {
                return !self.order.stopped();
            }
        }
    }

    /// Writes the results due, in order, as long as the next one has been delivered.
    fn write_due(&self, w: &mut Writer<F>) -> Result<(), Stop> {
        let mut stdout = io::stdout();
        let mut out = Out::direct_in(&mut stdout, self.tty, std::mem::take(&mut w.buf));
        let written = loop {
            let Some((r, spill, buf, mut diags)) = lock(&self.pending).remove(&w.want) else {
                break Ok(());
            };
            let step = (|| {
                if let Some(spill) = spill {
                    out.flush()?;
                    spill.write_to(&mut io::stdout())?;
                }
                out.raw(&buf)?;
                // Diagnostics follow the input's output, so a reader of both sees them in order.
                out.flush()?;
                diags.flush();
                (w.finish)(Some(r?), &mut out)?;
                // Written before the next input's turn: its worker may write itself from then on.
                out.flush()
            })();
            if step.is_err() {
                break step;
            }
            w.want += 1;
            self.order.wrote(w.want);
        };
        w.buf = std::mem::take(&mut out.buf);
        written
    }

    /// `finish` and the output's memory, once every worker is done; the error that stopped
    /// the run, if one did.
    fn into_parts(self) -> Result<(F, Vec<u8>), Stop> {
        let w = into_inner(self.writer);
        match w.failed {
            Some(e) => Err(e),
            None => Ok((w.finish, w.buf)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `n` inputs named `in0`, `in1`, … (never opened: the jobs here only read the names).
    fn inputs(n: usize) -> Vec<Source> {
        (0..n)
            .map(|i| Source::Path(format!("in{i}").into()))
            .collect()
    }

    /// A job that panics ends the run with that panic, never a hang: the other workers, which
    /// wait for a start the writer cannot give, are stopped.
    #[test]
    fn a_panicking_job_ends_the_run() {
        let sources: Vec<Source> = inputs(64);
        let r = std::panic::catch_unwind(|| {
            let job = |s: &Source, _: &mut Out, _: &mut Diags, _: &Turn| -> Result<(), Stop> {
                if s.name() == "in3" {
                    panic!("a bug");
                }
                Ok(())
            };
            drive("t", &sources, Some(2), usize::MAX, job, |_, _| Ok(()))
        });
        assert!(r.is_err(), "the panic reaches the caller");
    }

    /// Results that arrive in any order, from several workers at once, go through `finish`
    /// each once and in argument order, and the run ends (no result left unwritten by a
    /// worker that found another one writing).
    #[test]
    fn results_are_finished_once_each_in_order() {
        for threads in [1, 2, 5] {
            let sources: Vec<Source> = inputs(600);
            let mut finished = Vec::new();
            run(
                "test",
                &sources,
                Some(threads),
                |src, _out, _d| {
                    let i: usize = src.name()[2..].parse().unwrap();
                    // Uneven work, so results arrive out of order and together.
                    std::thread::sleep(Duration::from_micros((i * 7919 % 13) as u64 * 40));
                    Ok(i)
                },
                |r, _out| {
                    if let Some(i) = r {
                        finished.push(i);
                    }
                    Ok(())
                },
            );
            assert_eq!(finished, (0..600).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    /// One input at a time: every job runs on one worker, in argument order, with the CPUs
    /// asked for left to the chunk helpers.
    #[test]
    fn one_at_a_time_runs_the_inputs_in_order_on_one_worker() {
        let sources: Vec<Source> = inputs(40);
        let seen = Mutex::new(Vec::new());
        run_one_at_a_time("test", &sources, Some(4), |src, _out, _d| {
            let me = std::thread::current().id();
            seen.lock().unwrap().push((src.name(), me));
            Ok(())
        });
        let seen = seen.into_inner().unwrap();
        let names: Vec<String> = seen.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(names, (0..40).map(|i| format!("in{i}")).collect::<Vec<_>>());
        assert!(seen.iter().all(|(_, t)| *t == seen[0].1), "one worker");
    }

    /// A job that waits for its turn goes on only after every earlier input has been through
    /// `finish`, however long the earlier jobs take; one that does not wait runs ahead.
    #[test]
    fn a_job_waits_for_its_turn() {
        let sources: Vec<Source> = inputs(6);
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
