//! Regular files read through a memory map.
//!
//! Reading a file with `read` copies every byte from the page cache into a buffer, and
//! pi-branch then copies the kept lines again with `pread`; on a large file those copies cost
//! as much as scanning. A map lets the scanner read the page cache in place and lets kept lines
//! be written straight from it. Pages already scanned are handed back as the scan moves on
//! ([`Map::release`]), so the resident memory stays small whatever the file size.
//!
//! Only regular files of at least [`MIN_LEN`] bytes are mapped (for small files a plain read
//! is as fast); anything else, or a failed map, falls back to reading.
//!
//! A file can shrink while it is mapped: Pi rewrites old session files when it opens them,
//! and people truncate or rewrite files while a tool reads them. Reading a mapped page past the
//! new end raises SIGBUS, which would end the process. The [`guard`] catches SIGBUS on the
//! maps it knows, puts zeros in place of the lost pages so the read goes on, and marks the map
//! as faulted; the lines of a faulted map end with a read error (`the file shrank while it was
//! read`), reported like any other, and pi-branch checks the mark before it writes lines it
//! copied from the map. A SIGBUS anywhere else keeps its default action.

use super::chunks;
use crate::diag::Diags;
use crate::lines::{Line, SliceLines};
use crate::output::Stop;
use crate::reader::{self, Lines, Stats, Visitor};
use memmap2::{Mmap, UncheckedAdvice};
use std::fs::File;
use std::io;

/// Files smaller than this are read, not mapped.
pub const MIN_LEN: u64 = 1 << 20;

/// How far the scan moves on before the pages behind it are released.
pub const RELEASE_STEP: usize = 4 << 20;

/// The system's page size, read once at run time (4 KiB on most machines, 16 or 64 KiB on
/// some ARM systems): only whole pages can be released.
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf only reads a system constant.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
    })
}

pub struct Map {
    map: Mmap,
    /// The map's slot in the [`guard`]'s table.
    slot: usize,
}

impl Map {
    /// Maps the `len` bytes of `file`, a regular file (`len`, its length when it was opened),
    /// when they are at least [`MIN_LEN`].
    ///
    /// # Safety
    ///
    /// The bytes of the map are the file's: the caller accepts that another process that
    /// changes the file changes what the returned slices hold, and that one that truncates it
    /// while it is mapped makes a read of the lost pages raise SIGBUS. Call it only where
    /// that is the stated contract (see `input::open`).
    pub unsafe fn new(file: &File, len: u64) -> Option<Map> {
        let len = usize::try_from(len).ok().filter(|&l| l as u64 >= MIN_LEN)?;
        // SAFETY: a read-only shared map of a file we opened, never written through; what
        // another process may do to the file is the caller's contract (above).
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(file) }.ok()?;
        // Without a slot in the guard (more maps at once than it holds, or no handler), a
        // shrinking file could not be survived: read it instead.
        let slot = guard::register(map.as_ptr() as usize, map.len())?;
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Map { map, slot })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether a read of the map found its file shorter than when it was mapped: the bytes
    /// past the new end read as zeros, not as the file's.
    pub fn faulted(&self) -> bool {
        guard::faulted(self.slot)
    }

    /// Whether the bytes `[from, to)` are still the file's: reads one byte of each page
    /// there (a page past a shrunk file's end faults and reads as zeros), then asks
    /// [`Map::faulted`]. For bytes read again after the scan passed them (pi-branch's kept
    /// lines), before they are written.
    pub fn still_readable(&self, from: usize, to: usize) -> bool {
        let bytes = &self.map[..to.min(self.map.len())];
        let page = page_size();
        let mut at = from / page * page;
        while at < bytes.len() {
            // SAFETY: `at` is inside the map; a volatile read so the touch is not elided.
            unsafe { std::ptr::read_volatile(bytes.as_ptr().add(at)) };
            at += page;
        }
        if let Some(last) = bytes.len().checked_sub(1).filter(|&l| l >= from) {
            // SAFETY: as above.
            unsafe { std::ptr::read_volatile(bytes.as_ptr().add(last)) };
        }
        !self.faulted()
    }

    /// Drops the whole pages inside `[from, to)` from this process's resident memory. They
    /// stay in the page cache, and touching them again reads them back from there.
    pub fn release(&self, from: usize, to: usize) {
        let page = page_size();
        let a = from.div_ceil(page) * page;
        let b = to.min(self.map.len()) / page * page;
        if b > a {
            // SAFETY: MADV_DONTNEED on a shared, read-only file mapping only unmaps the pages:
            // the next access faults them in again from the file, with the same contents, so
            // no borrowed slice ever sees different bytes than the file holds. Callers release
            // only ranges they are done with.
            let _ = unsafe {
                self.map
                    .unchecked_advise_range(UncheckedAdvice::DontNeed, a, b - a)
            };
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // The slot is freed before the pages are unmapped (the field drops after this).
        guard::unregister(self.slot);
    }
}

/// Surviving SIGBUS on the maps of files that shrink while they are read (see the module
/// docs). A fixed table of the live maps' address ranges is read by the signal handler, which
/// uses nothing but atomics and `mmap`.
mod guard {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Once;

    /// How many maps may be live at once (one per worker thread is what the tools use).
    const SLOTS: usize = 256;
    /// `end` of a slot being claimed: the handler skips it.
    const CLAIMING: usize = usize::MAX;

    struct Slot {
        start: AtomicUsize,
        /// 0 when the slot is free.
        end: AtomicUsize,
        faulted: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const FREE: Slot = Slot {
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    };
    static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALL: Once = Once::new();
    static INSTALLED: AtomicBool = AtomicBool::new(false);

    /// Puts the map at `[start, start + len)` under the guard; its slot, or `None` when the
    /// handler could not be installed or every slot is taken.
    pub fn register(start: usize, len: usize) -> Option<usize> {
        install();
        if !INSTALLED.load(Ordering::Acquire) || len == 0 {
            return None;
        }
        let i = TABLE.iter().position(|s| {
            s.end
                .compare_exchange(0, CLAIMING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        let s = &TABLE[i];
        s.faulted.store(false, Ordering::Relaxed);
        s.start.store(start, Ordering::Release);
        s.end.store(start + len, Ordering::Release);
        Some(i)
    }

    pub fn unregister(i: usize) {
        TABLE[i].end.store(0, Ordering::Release);
    }

    pub fn faulted(i: usize) -> bool {
        TABLE[i].faulted.load(Ordering::Acquire)
    }

    fn install() {
        INSTALL.call_once(|| {
            PAGE.store(super::page_size(), Ordering::Relaxed);
            // SAFETY: a zeroed sigaction is a valid empty one; the handler below is
            // async-signal-safe (atomics, mmap, signal).
            let ok = unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_sigbus as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut()) == 0
            };
            INSTALLED.store(ok, Ordering::Release);
        });
    }

    /// A read of a guarded map past its file's end: map zeros over the rest of that map, from
    /// the faulting page on, mark it, and let the read go on. Any other SIGBUS: restore the
    /// default action, so that returning faults again and ends the process as it would have.
    extern "C" fn on_sigbus(
        _sig: libc::c_int,
        info: *mut libc::siginfo_t,
        _ctx: *mut libc::c_void,
    ) {
        // SAFETY: the kernel hands a valid siginfo_t to an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for s in &TABLE {
            let end = s.end.load(Ordering::Acquire);
            let start = s.start.load(Ordering::Acquire);
            if end == 0 || end == CLAIMING || addr < start || addr >= end {
                continue;
            }
            let from = addr & !(page - 1);
            // SAFETY: the range lies inside a live map of ours (its slot is not freed before
            // it is unmapped); replacing its pages by private zero pages changes only what
            // later reads of it see, which the faulted mark tells the reader.
            let zeros = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros != libc::MAP_FAILED {
                s.faulted.store(true, Ordering::Release);
                return;
            }
        }
        // SAFETY: resetting a signal's action is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        }
    }
}

/// The lines of a mapped file, releasing the pages behind the scan as it moves on.
struct MappedLines<'a> {
    map: &'a Map,
    lines: SliceLines<'a>,
    released: usize,
}

impl Lines for MappedLines<'_> {
    #[inline]
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // The previous line is done with when the next one is asked for.
        let pos = self.lines.position();
        if pos - self.released >= RELEASE_STEP {
            self.map.release(self.released, pos);
            self.released = pos;
        }
        let line = self.lines.next_line();
        // Finding the line's end read every byte of it: a shrunk file shows here.
        if self.map.faulted() {
            return Err(shrank());
        }
        Ok(line)
    }
}

/// The read error of a file that shrank while it was read (a map's, or a chunk's read with `pread`).
pub(super) fn shrank() -> io::Error {
    io::Error::other(
        "the file shrank while it was read (another program truncated or rewrote it); the rest is not read",
    )
}

/// [`reader::read`] over a mapped file: the same sessions, entries and
/// diagnostics, without copying the bytes. The map's pages are released behind the scan.
pub fn read_mapped(
    map: &Map,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let data = map.bytes();
    let helpers = chunks::helpers_for(data.len());
    let stats = if helpers == 0 {
        let lines = MappedLines {
            map,
            lines: SliceLines::new(data),
            released: 0,
        };
        reader::read_lines(lines, named_file, d, v)
    } else {
        // Lines are split and validated ahead on the helpers; this thread reads them in order.
        let notes = reader::Notes::of(v);
        let ahead = v.ahead();
        // The chunks' vectors, reused from chunk to chunk.
        let spares = reader::Spares::for_helpers(helpers);
        let prescan = |offset, chunk| {
            let mut p = reader::prescan(chunk, offset, notes, ahead.as_deref(), &spares);
            // Scanning the chunk read every byte of it: a shrunk file shows here.
            if map.faulted() {
                p.fail(shrank());
            }
            (offset, p)
        };
        // The chunk the reader works itself is only split: it scans each line in order.
        let split = |offset, chunk| {
            let mut p = reader::split(chunk, offset, &spares);
            if map.faulted() {
                p.fail(shrank());
            }
            (offset, p)
        };
        chunks::in_order(data, chunks::CHUNK, helpers, prescan, split, |next| {
            // The chunks before the one taken are done with: their pages are released.
            let mut released = 0;
            let mut next_releasing = || {
                let (from, p) = next()?;
                if from - released >= RELEASE_STEP {
                    map.release(released, from);
                    released = from;
                }
                Some(p)
            };
            reader::read_lines_prescanned(&mut next_releasing, &spares, named_file, d, v)
        })
    };
    map.release(0, map.bytes().len());
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_large_files_only_and_reads_back_after_release() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small");
        std::fs::write(&small, b"{}\n").unwrap();
        // SAFETY (here and below): test files nothing else changes.
        assert!(unsafe { Map::new(&File::open(&small).unwrap(), 3) }.is_none());
        let big = dir.join("big");
        let mut f = File::create(&big).unwrap();
        let data: Vec<u8> = (0..(MIN_LEN as usize * 3))
            .map(|i| (i % 251) as u8)
            .collect();
        f.write_all(&data).unwrap();
        drop(f);
        let m = unsafe { Map::new(&File::open(&big).unwrap(), data.len() as u64) }.unwrap();
        assert_eq!(m.bytes(), &data[..]);
        m.release(0, data.len());
        m.release(10, 5);
        assert_eq!(m.bytes(), &data[..], "released pages read back the same");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
