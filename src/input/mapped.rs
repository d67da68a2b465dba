//! Regular files read through a memory map.
//!
//! Reading a file with `read` copies every byte from the page cache into a buffer, and
//! pi-branch then copies the kept lines again with `pread`; on a large file those copies cost
//! as much as scanning. A map lets the scanner read the page cache in place and lets kept lines
//! be written straight from it. Pages already scanned are handed back as the scan moves on
//! ([`Map::release`]), so the resident memory stays small whatever the file size.
//!
//! Only regular files of at least [`MIN_LEN`] bytes are mapped (for small files a plain read
//! is as fast); anything else, or a failed map, falls back to reading. As with every tool that
//! maps files (ripgrep, jaq), a file truncated by another process while it is being read can
//! end the run with SIGBUS; Pi only ever appends to a session file.

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
}

impl Map {
    /// Maps `file` when it is a regular file of at least [`MIN_LEN`] bytes.
    ///
    /// # Safety
    ///
    /// The bytes of the map are the file's: the caller accepts that another process that
    /// changes the file changes what the returned slices hold, and that one that truncates it
    /// while it is mapped makes a read of the lost pages raise SIGBUS. Call it only where
    /// that is the stated contract (see `input::open`).
    pub unsafe fn new(file: &File) -> Option<Map> {
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() < MIN_LEN || usize::try_from(meta.len()).is_err() {
            return None;
        }
        // SAFETY: a read-only shared map of a file we opened, never written through; what
        // another process may do to the file is the caller's contract (above).
        let map = unsafe { Mmap::map(file) }.ok()?;
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Map { map })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
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
        Ok(self.lines.next_line())
    }
}

/// [`reader::read`] over a mapped file: the same sessions, entries and
/// diagnostics, without copying the bytes. The map's pages are released behind the scan.
pub fn read_mapped(
    map: &Map,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let lines = MappedLines {
        map,
        lines: SliceLines::new(map.bytes()),
        released: 0,
    };
    let stats = reader::read_lines(lines, named_file, d, v);
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
        assert!(unsafe { Map::new(&File::open(&small).unwrap()) }.is_none());
        let big = dir.join("big");
        let mut f = File::create(&big).unwrap();
        let data: Vec<u8> = (0..(MIN_LEN as usize * 3))
            .map(|i| (i % 251) as u8)
            .collect();
        f.write_all(&data).unwrap();
        drop(f);
        let m = unsafe { Map::new(&File::open(&big).unwrap()) }.unwrap();
        assert_eq!(m.bytes(), &data[..]);
        m.release(0, data.len());
        m.release(10, 5);
        assert_eq!(m.bytes(), &data[..], "released pages read back the same");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
