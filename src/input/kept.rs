//! Threads kept for the helpers of the chunk pipelines (`chunks::in_order_of`): each helper
//! is given a thread of its own, an idle kept one when there is one, else a new one, which is
//! kept once its helper is done.
//!
//! A thread made for each large input began to run up to 4 ms after it was made in a third of
//! the runs here, the other CPU idle (it began at once when its maker blocked: the likely
//! reading, not proven, is that Linux queues a new thread on its maker's CPU until a tick).
//! A kept thread woken from a wait ran within 0.01 ms (BENCHMARKS.md, round 13).
//!
//! Not a pool of a fixed size: a helper may wait on its reader for as long as that one waits
//! for its turn behind other inputs, whose own helpers must not wait for a thread meanwhile.

use crate::sync::{lock, wait};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A helper, its borrows erased (see [`with_helpers`]).
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The kept threads that are idle: where each waits for its next helper.
static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());

fn idle() -> MutexGuard<'static, Vec<Sender<Job>>> {
    lock(&IDLE)
}

/// Runs `job` on an idle kept thread, else on a new one. When no thread can be made (a
/// process limit) the job is dropped without running: that only means less help.
fn run(mut job: Job) {
    loop {
        let Some(thread) = idle().pop() else {
            break;
        };
        match thread.send(job) {
            Ok(()) => return,
            // That thread has ended (its helper panicked): the next one.
            Err(back) => job = back.0,
        }
    }
    let (thread, jobs) = mpsc::channel::<Job>();
    let _ = thread.send(job);
    let _ = std::thread::Builder::new()
        .name("pi-jsonl-helper".into())
        .spawn(move || {
            while let Ok(job) = jobs.recv() {
                job();
                idle().push(thread.clone());
            }
        });
}

/// Runs `read` while `count` threads run `help` beside it (kept threads: [`run`]), then
/// calls `stop` and waits until every helper is done: also when `read` panics (`stop` must
/// make the helpers return: one may wait on the reader). Panics, once all are done, when a
/// helper panicked.
pub fn with_helpers<R>(
    count: usize,
    help: &(dyn Fn() + Sync),
    stop: &dyn Fn(),
    read: impl FnOnce() -> R,
) -> R {
    let state = Arc::new(State {
        left: Mutex::new(count),
        done: Condvar::new(),
        panicked: AtomicBool::new(false),
    });
    let wait = Wait {
        state: &state,
        stop,
    };
    for _ in 0..count {
        let done = Done(Arc::clone(&state));
        let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || {
            let _done = done;
            help();
        });
        // SAFETY: the job borrows `help`, which outlives this call, and this call does not
        // return (nor unwind past `wait`) before the job is done: its `Done` counts it done
        // only once `help` has returned or unwound, or when the job is dropped unrun, and
        // `wait` waits for that count. Nothing after `Done`'s drop reads the borrow (what is
        // freed then is the box, the job's own memory).
        let job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
        run(job);
    }
    let out = read();
    drop(wait);
    assert!(
        !state.panicked.load(Ordering::Relaxed),
        "a thread helping the reader panicked"
    );
    out
}

/// What the helpers of one reader share.
struct State {
    /// Helpers not yet done.
    left: Mutex<usize>,
    done: Condvar,
    panicked: AtomicBool,
}

/// Counts its helper done when dropped: when the helper returns, panics, or is dropped
/// without running.
struct Done(Arc<State>);

impl Drop for Done {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.panicked.store(true, Ordering::Relaxed);
        }
        let mut left = lock(&self.0.left);
        *left -= 1;
        self.0.done.notify_all();
    }
}

/// Stops the helpers and waits until they are done, when dropped.
struct Wait<'a> {
    state: &'a State,
    stop: &'a dyn Fn(),
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        (self.stop)();
        let mut left = lock(&self.state.left);
        while *left > 0 {
            left = wait(&self.state.done, left);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn helpers_borrow_and_are_waited_for() {
        let count = AtomicUsize::new(0);
        for round in 1..=3 {
            let help = || {
                std::thread::sleep(std::time::Duration::from_millis(5));
                count.fetch_add(1, Ordering::Relaxed);
            };
            let read = with_helpers(4, &help, &|| {}, || "read");
            assert_eq!(read, "read");
            assert_eq!(count.load(Ordering::Relaxed), 4 * round);
        }
    }

    /// A helper that waits on another reader's helper does not keep that one from a thread
    /// (with a pool of a fixed size, this hangs once the waiting helpers hold every thread).
    #[test]
    fn a_waiting_helper_holds_no_other_back() {
        let (tx, rx) = mpsc::channel::<()>();
        let rx = Mutex::new(rx);
        let wait = || {
            let _ = rx.lock().unwrap().recv();
        };
        let tx = Mutex::new(tx);
        let send = || {
            let _ = tx.lock().unwrap().send(());
        };
        with_helpers(1, &wait, &|| {}, || {
            for _ in 0..8 {
                with_helpers(1, &send, &|| {}, || ());
            }
        });
    }

    /// A reader that panics stops its helpers (one waits for it until stopped) and the panic
    /// goes on once they are done; a helper that panics is said once all are done. The kept
    /// threads still serve after both.
    #[test]
    fn panics_stop_the_helpers_and_are_raised() {
        let stopped = AtomicBool::new(false);
        let help = || {
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        let stop = || stopped.store(true, Ordering::Relaxed);
        let reader = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_helpers(2, &help, &stop, || panic!("the reader's bug"))
        }));
        assert!(reader.is_err());
        let helper = std::panic::catch_unwind(|| {
            with_helpers(1, &|| panic!("a helper's bug"), &|| {}, || ())
        });
        assert!(helper.is_err());
        let ran = AtomicBool::new(false);
        with_helpers(2, &|| ran.store(true, Ordering::Relaxed), &|| {}, || ());
        assert!(ran.load(Ordering::Relaxed));
    }
}
