//! Locks and waits that go on after a thread panicked while it held the lock. A panic is a
//! bug that ends the run with its own report (status 101); the threads still running only
//! need to reach their end without a second panic, so a poisoned lock is taken as it is.

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
pub fn wait_timeout<'a, T>(
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
