//! A one-line progress report on stderr while files are found and read.

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A one-line progress report on stderr, drawn only when stderr is a terminal, the run is not
/// `--quiet`, and the work takes long enough to be worth watching.
pub struct Progress {
    tool: &'static str,
    what: &'static str,
    done: AtomicUsize,
    total: AtomicUsize,
    stop: AtomicBool,
}

impl Progress {
    /// Runs `work` with a progress line about `what` ("found", "read").
    pub fn run<T>(tool: &'static str, what: &'static str, work: impl FnOnce(&Progress) -> T) -> T {
        let p = Progress {
            tool,
            what,
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        };
        if !io::stderr().is_terminal() || crate::diag::is_quiet() {
            return work(&p);
        }
        std::thread::scope(|s| {
            let drawer = s.spawn(|| p.draw());
            let r = work(&p);
            p.stop.store(true, Ordering::Relaxed);
            let _ = drawer.join();
            r
        })
    }

    pub fn set_total(&self, n: usize) {
        self.total.store(n, Ordering::Relaxed);
    }

    pub fn add(&self, n: usize) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    fn draw(&self) {
        let start = Instant::now();
        let mut drawn = false;
        while !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if start.elapsed() < Duration::from_millis(300) {
                continue;
            }
            let done = self.done.load(Ordering::Relaxed);
            let total = self.total.load(Ordering::Relaxed);
            let width = 30;
            let line = if let Some(filled) = (done.min(total) * width).checked_div(total) {
                format!(
                    "{}: [{}{}] {done}/{total} files {}",
                    self.tool,
                    "#".repeat(filled),
                    ".".repeat(width - filled),
                    self.what
                )
            } else {
                format!("{}: {done} files {}", self.tool, self.what)
            };
            let _ = write!(io::stderr().lock(), "\r{line}\x1b[K");
            drawn = true;
        }
        if drawn {
            let _ = write!(io::stderr().lock(), "\r\x1b[K");
        }
    }
}
