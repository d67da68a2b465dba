//! One large input on several cores (issue 20): the bytes are cut at line starts into chunks;
//! threads work chunks ahead of the reader, in any order, and the reader takes the results in
//! chunk order ([`in_order`]). Only the work that does not depend on earlier lines runs ahead
//! (splitting the chunk into lines, validating each and locating its members, and what a tool
//! reads from each entry alone: `reader::prescan`, `reader::Ahead`); everything that needs
//! order (sessions, the tree, first occurrences) stays with the one reader, so a tool's
//! output is the same on one core or many.
//!
//! Up to [`MAX_HELPERS`] threads help one input, and each works a chunk only while a CPU of
//! the run's [`Budget`] is free (`--threads`, default one per CPU, less the threads busy on
//! other inputs): with one large input they take the other cores, with many inputs the
//! workers on the other inputs keep them.

use crate::sync::{lock, Signal};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// The bytes a chunk holds, at least (a chunk ends at the first line start after this). A
/// chunk the reader takes itself is split into lines and then scanned: small enough that the
/// scan finds it still in the CPU's L2 cache (1 MiB chunks were slower on 2 cores in every
/// alternated run, pi-tools by ~5 %: BENCHMARKS.md, round 8).
pub const CHUNK: usize = 1 << 18;

/// Inputs smaller than this are read on one thread: splitting them costs more than it saves.
pub const MIN_PARALLEL: usize = 8 << 20;

/// The most threads that help one reader: past a few, the reader's own work (the tool's) is
/// what limits the rate.
pub const MAX_HELPERS: usize = 3;

/// Chunks worked ahead of the reader per thread: enough to keep each busy while the reader
/// is slow on one chunk, few enough that the results held stay small.
const AHEAD_PER_THREAD: usize = 2;

/// The most chunks whose results are alive at once in [`in_order`] with `helpers` helpers:
/// those of the window (worked, or waiting for the reader) and the one the reader reads.
pub fn in_flight(helpers: usize) -> usize {
    window(helpers) + 1
}

/// The chunks claimed ahead of the reader at most, with `helpers` helpers.
pub fn window(helpers: usize) -> usize {
    (helpers + 1) * AHEAD_PER_THREAD
}

/// The first line start at or after `at`: `at` itself when a line starts there (offset 0, or
/// right after a newline), else the byte after the next newline, else the end.
pub fn line_start(data: &[u8], at: usize) -> usize {
    if at == 0 || at >= data.len() {
        return at.min(data.len());
    }
    match memchr::memchr(b'\n', &data[at - 1..]) {
        Some(i) => at + i,
        None => data.len(),
    }
}

/// The CPUs of the run not busy now: the driver's `--threads` (default one per CPU), less
/// the threads reading inputs and the helpers working chunks. A worker waiting for its turn
/// ([`idle`]) is not busy. Helpers work a chunk only while they hold one of these, so that
/// they use cores the run's other work leaves idle and no more.
pub struct Budget {
    /// `--threads`: 0 until the driver sets it (a tool run in-process reads on one thread).
    total: AtomicUsize,
    free: Mutex<isize>,
    /// Where helpers wait for a free CPU (with `free`'s lock).
    freed: Signal,
}

/// The run's budget (one per process: one run per process).
pub static BUDGET: Budget = Budget {
    total: AtomicUsize::new(0),
    free: Mutex::new(0),
    freed: Signal::new(),
};

/// How long a helper waits for a free CPU before it looks whether its input is done.
const POLL: Duration = Duration::from_millis(5);

impl Budget {
    fn lock(&self) -> MutexGuard<'_, isize> {
        lock(&self.free)
    }

    /// The run may keep `threads` CPUs busy (the driver says so once, before reading).
    pub fn set_total(&self, threads: usize) {
        self.total.store(threads, Ordering::Relaxed);
        *self.lock() = isize::try_from(threads).unwrap_or(isize::MAX);
    }

    /// A thread starts work whether or not a CPU is free (the count may go below zero).
    pub fn busy(&self) {
        *self.lock() -= 1;
    }

    pub fn done(&self) {
        let mut free = self.lock();
        *free += 1;
        self.freed.wake_one();
    }

    /// Takes a free CPU, waiting at most [`POLL`]; whether one was taken.
    fn try_take(&self) -> bool {
        let mut free = self.lock();
        if *free <= 0 {
            free = self.freed.wait(free, Some(POLL));
        }
        let took = *free > 0;
        if took {
            *free -= 1;
        }
        took
    }
}

/// How many helper threads to start for an input of `len` bytes: none for a small input or
/// a run on one thread, else up to [`MAX_HELPERS`] (they work only while CPUs are free).
pub fn helpers_for(len: usize) -> usize {
    if len < MIN_PARALLEL {
        return 0;
    }
    BUDGET
        .total
        .load(Ordering::Relaxed)
        .saturating_sub(1)
        .min(MAX_HELPERS)
}

/// This thread is busy reading an input until the guard drops.
pub struct Busy(());

impl Busy {
    pub fn start() -> Busy {
        BUDGET.busy();
        Busy(())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUDGET.done();
    }
}

/// Runs `wait` with this busy thread counted as idle (a worker waiting for its turn).
pub fn idle<R>(wait: impl FnOnce() -> R) -> R {
    BUDGET.done();
    let r = wait();
    BUDGET.busy();
    r
}

/// The state the reader and the helpers share.
struct Shared<T> {
    /// Chunks the reader has taken.
    taken: usize,
    /// Whether each chunk of the window (`taken..taken + window`, by index modulo the
    /// window) is claimed.
    claims: Vec<bool>,
    /// Results not yet taken, by chunk index modulo the window.
    ready: Vec<Option<T>>,
    /// The reader stopped early, or a helper panicked: everyone stops.
    stopped: bool,
}

impl<T> Shared<T> {
    /// Chunks claimed so far: those taken, and those of the window claimed (by a helper, or
    /// by the reader to work or own).
    fn claimed(&self) -> usize {
        self.taken + self.claims.iter().filter(|&&c| c).count()
    }

    /// The reader takes its next chunk: its place in the window is free for the chunk
    /// `window` after it.
    fn take_next(&mut self, window: usize) {
        self.claims[self.taken % window] = false;
        self.taken += 1;
    }
}

/// The chunks of one input and the pipeline over them ([`in_order_of`]).
struct Ordered<T, W, N> {
    count: usize,
    window: usize,
    work: W,
    own: N,
    shared: Mutex<Shared<T>>,
    /// Where the reader and the helpers wait for a change of `shared` (with its lock).
    changed: Signal,
}

/// Runs `work` over the chunks of `data` (each at least `chunk` bytes, cut at line starts;
/// `work` is given the chunk's offset and bytes) on `helpers` threads besides this one, and
/// hands `read` a function that yields the results in chunk order (`None` after the last).
/// That function works chunks itself when it would otherwise wait, so with no helpers (or none
/// given a CPU of the [`BUDGET`]) it is a loop on this thread. The chunk it is to yield next,
/// when no helper has taken it, it works with `own` instead of `work` (the reader's share of
/// the work done in order anyway, without what `work` keeps for another thread: issue 18,
/// where several large inputs keep every CPU busy and helpers get none).
///
/// The helpers run on kept threads (`input::kept`). A helper that panics stops the pipeline;
/// the panic is raised again when this returns.
pub fn in_order<'a, T, W, N, O>(
    data: &'a [u8],
    chunk: usize,
    helpers: usize,
    work: W,
    own: N,
    read: impl FnOnce(&mut dyn FnMut() -> Option<T>) -> O,
) -> O
where
    T: Send,
    W: Fn(usize, &'a [u8]) -> T + Sync,
    N: Fn(usize, &'a [u8]) -> T + Sync,
{
    let chunk = chunk.max(1);
    // The bytes of chunk `i`, and their offset.
    let bytes = |i: usize| {
        let from = line_start(data, i * chunk);
        let to = line_start(data, (i + 1).saturating_mul(chunk));
        (from, &data[from..to])
    };
    in_order_of(
        data.len().div_ceil(chunk),
        helpers,
        window(helpers),
        |i| {
            let (from, b) = bytes(i);
            work(from, b)
        },
        |i| {
            let (from, b) = bytes(i);
            own(from, b)
        },
        read,
    )
}

/// [`in_order`] over `count` chunks that `work` and `own` find by their index themselves
/// (`input::early` reads each from its file), at most `window` of them claimed ahead of the
/// reader ([`window`] for one input's; `input::early`'s, of many small inputs, is wider).
pub fn in_order_of<T, W, N, O>(
    count: usize,
    helpers: usize,
    window: usize,
    work: W,
    own: N,
    read: impl FnOnce(&mut dyn FnMut() -> Option<T>) -> O,
) -> O
where
    T: Send,
    W: Fn(usize) -> T + Sync,
    N: Fn(usize) -> T + Sync,
{
    let pipeline = Ordered::new(count, window.max(1), work, own);
    let help = || pipeline.help();
    let stop = || pipeline.stop();
    super::kept::with_helpers(helpers, &help, &stop, || read(&mut || pipeline.next()))
}

impl<T, W, N> Ordered<T, W, N>
where
    T: Send,
    W: Fn(usize) -> T + Sync,
    N: Fn(usize) -> T + Sync,
{
    /// The pipeline over `count` chunks, `window` of them in flight at most.
    fn new(count: usize, window: usize, work: W, own: N) -> Self {
        Ordered {
            count,
            window,
            work,
            own,
            shared: Mutex::new(Shared {
                taken: 0,
                claims: vec![false; window],
                ready: (0..window).map(|_| None).collect(),
                stopped: false,
            }),
            changed: Signal::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared<T>> {
        lock(&self.shared)
    }

    /// Claims a chunk of the window no one has claimed: the nearest to the reader (the
    /// reader's claims), or the farthest (a helper's), else `None`. Helpers working from the
    /// far end leave the chunks next to the reader to it: it owns those ([`Self::next`]),
    /// which costs less than a prescan and its reading after, and the two meet where their
    /// rates say. When helpers took the nearest free chunk, the reader found the one next to
    /// it claimed and prescanned the one after instead: about 320 of the 801 chunks of a
    /// 200 MB file on two cores (BENCHMARKS.md, round 14).
    fn claim(&self, s: &mut Shared<T>, nearest: bool) -> Option<usize> {
        if s.stopped {
            return None;
        }
        let end = self.count.min(s.taken + self.window);
        let free = |j: &usize| !s.claims[j % self.window];
        let j = match nearest {
            true => (s.taken..end).find(free),
            false => (s.taken..end).rev().find(free),
        }?;
        s.claims[j % self.window] = true;
        Some(j)
    }

    /// Works chunk `i` (unlocked) and leaves its result for the reader.
    fn run(&self, i: usize) {
        let result = (self.work)(i);
        let mut s = self.lock();
        s.ready[i % self.window] = Some(result);
        drop(s);
        self.changed.wake_all();
    }

    /// A helper thread: claims and works chunks until none is left or the reader stops.
    fn help(&self) {
        // A panic in `work` (a bug) must not leave the reader waiting for its chunk.
        let _guard = crate::sync::on_panic(|| self.stop());
        loop {
            if self.finished() {
                return;
            }
            if !BUDGET.try_take() {
                continue;
            }
            let cpu = Busy(());
            let mut s = self.lock();
            let claimed = self.claim(&mut s, false);
            if claimed.is_none() && !s.stopped && s.claimed() < self.count {
                // Too far ahead of the reader: wait for it with the CPU given back.
                drop(cpu);
                drop(self.changed.wait(s, Some(POLL)));
                continue;
            }
            drop(s);
            if let Some(i) = claimed {
                self.run(i);
            }
        }
    }

    /// Whether nothing is left for a helper: every chunk claimed, or the reader stopped.
    fn finished(&self) -> bool {
        let s = self.lock();
        s.stopped || s.claimed() >= self.count
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.wake_all();
    }

    /// The next chunk's result: taken when ready, worked here (by `own`) when no one has
    /// claimed it, else waited for while a later chunk in the window is worked here (by
    /// `work`) or, when none is left to claim, idle. `None` after the last chunk, or when a
    /// helper panicked.
    fn next(&self) -> Option<T> {
        let mut s = self.lock();
        let i = s.taken;
        loop {
            if i >= self.count || s.stopped {
                return None;
            }
            if let Some(r) = s.ready[i % self.window].take() {
                s.take_next(self.window);
                drop(s);
                self.changed.wake_all();
                return Some(r);
            }
            if let Some(j) = self.claim(&mut s, true) {
                if j == i {
                    s.take_next(self.window);
                    drop(s);
                    // A helper may claim one chunk further now.
                    self.changed.wake_all();
                    return Some((self.own)(i));
                }
                drop(s);
                self.run(j);
                s = self.lock();
                continue;
            }
            s = self.changed.wait(s, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Helpers claim from the far end of the window, the reader from its own end: the chunks
    /// next to the reader stay for it to own.
    #[test]
    fn helpers_claim_from_the_far_end_and_the_reader_from_its_own() {
        let pipeline = Ordered::new(6, 4, |i: usize| i, |i: usize| i + 100);
        let claim = |nearest| pipeline.claim(&mut pipeline.lock(), nearest);
        assert_eq!(claim(false), Some(3));
        assert_eq!(claim(false), Some(2));
        // The reader owns chunk 0 (no one claimed it): taken, its place in the window free
        // for chunk 4.
        assert_eq!(pipeline.next(), Some(100));
        assert_eq!(claim(false), Some(4));
        assert_eq!(claim(true), Some(1));
        // The window (1..5) is all claimed.
        assert_eq!(claim(true), None);
        assert_eq!(claim(false), None);
        assert!(!pipeline.finished());
        // Chunk 1 is ready: taken, its place free for the last chunk.
        pipeline.lock().ready[1] = Some(1);
        assert_eq!(pipeline.next(), Some(1));
        assert_eq!(claim(false), Some(5));
        assert!(pipeline.finished());
    }
}
