//! Locks and waits that go on after a thread panicked while it held the lock. A panic is a
//! bug that ends the run with its own report (status 101); the threads still running only
//! need to reach their end without a second panic, so a poisoned lock is taken as it is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// `m` locked.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What `m` holds, once no thread can lock it any more.
pub fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// `guard` given back to wait on `cv`, then locked again.
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// [`wait`] for `limit` at most.
fn wait_timeout<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    limit: Duration,
) -> MutexGuard<'a, T> {
    cv.wait_timeout(guard, limit)
        .unwrap_or_else(PoisonError::into_inner)
        .0
}

/// A guard that calls `f` when it is dropped while its thread unwinds from a panic (a bug):
/// to stop the threads that would otherwise wait for the panicking one for ever, so that the
/// scope that joins them can re-raise the panic.
pub fn on_panic<F: FnMut()>(f: F) -> OnPanic<F> {
    OnPanic(f)
}

/// See [`on_panic`].
pub struct OnPanic<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnPanic<F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            (self.0)();
        }
    }
}

/// A condvar that is signalled only when a thread waits on it: a wake-up with none waiting is
/// still a system call (the chunk pipeline made one for every input read, and two or three
/// times a chunk of a large one: 1,435 for the 200 MB session on two cores, where about 30
/// found a thread waiting; pi-usage's cached run hands over thousands of inputs in a few
/// milliseconds).
/// Every wait is made holding the lock of one mutex, and every wake-up follows a change made
/// holding it: a thread counted as waiting either saw the change or is woken by it.
pub struct Signal {
    cv: Condvar,
    /// The threads waiting (changed with the mutex locked).
    waiting: AtomicUsize,
}

impl Default for Signal {
    fn default() -> Signal {
        Signal::new()
    }
}

impl Signal {
    pub const fn new() -> Signal {
        Signal {
            cv: Condvar::new(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Waits for a wake-up (at most `limit`), the lock of `guard` given up meanwhile.
    pub fn wait<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        limit: Option<Duration>,
    ) -> MutexGuard<'a, T> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let guard = match limit {
            Some(limit) => wait_timeout(&self.cv, guard, limit),
            None => wait(&self.cv, guard),
        };
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        guard
    }

    fn waited(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }

    pub fn wake_one(&self) {
        if self.waited() {
            self.cv.notify_one();
        }
    }

    pub fn wake_all(&self) {
        if self.waited() {
            self.cv.notify_all();
        }
    }
}
