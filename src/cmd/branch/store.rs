//! Reading a session's lines again at its end: sliced from the file's map, from the whole
//! file read at once or from the bytes held for stdin, or read from the file by offset.

use super::entries::{EntryTable, PackedEntry};
use crate::diag::{Diags, Kind};
use crate::input::mapped::Map;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Reads lines back: from the file by offset, or from the held session bytes.
pub(crate) struct LineStore<'a> {
    file: Option<&'a File>,
    /// The file's map, when it is mapped: lines are sliced from it, not read.
    map: Option<&'a Map>,
    /// The whole file, when it was small enough to be read at once: sliced too.
    whole: Option<&'a [u8]>,
    mem: &'a [u8],
    long_lens: &'a HashMap<u64, u64>,
    /// Whether the map's file was found shorter (reported once).
    shrank: std::cell::Cell<bool>,
}

impl<'a> LineStore<'a> {
    /// Lines read back from `file` (from its map, or from `whole` when it was read at once),
    /// or from the bytes the session holds.
    pub(crate) fn new(
        file: Option<&'a File>,
        map: Option<&'a Map>,
        whole: Option<&'a [u8]>,
        s: &'a EntryTable,
    ) -> LineStore<'a> {
        LineStore {
            file,
            map,
            whole,
            mem: &s.mem,
            long_lens: &s.long_lens,
            shrank: std::cell::Cell::new(false),
        }
    }

    /// An entry's length with its line terminator.
    pub(crate) fn len(&self, n: &PackedEntry) -> u64 {
        n.len(self.long_lens)
    }

    /// The `len` bytes at `offset`: a slice of the held session bytes, or read from the file
    /// into `buf`. `buf` only ever grows, so a reused buffer is not zeroed again before each
    /// read (that used to cost as much as the read itself).
    pub(crate) fn read<'b>(
        &'b self,
        offset: u64,
        len: u64,
        buf: &'b mut Vec<u8>,
        d: &mut Diags,
    ) -> Option<&'b [u8]> {
        let n = usize::try_from(len).ok()?;
        if let Some(m) = self.map {
            let a = usize::try_from(offset).ok()?;
            let b = a.checked_add(n)?;
            // The file must still reach `b`. Asked of the file, not by touching the map's pages:
            // touching them costs a page fault each where writing straight from the map costs
            // none. A file that shrinks after the question fails the write (EFAULT) or reads
            // zeros under the map's guard, never SIGBUS.
            let shrank = self
                .file
                .and_then(|f| f.metadata().ok())
                .is_some_and(|md| md.len() < b as u64);
            if shrank || m.faulted() {
                if !self.shrank.replace(true) {
                    d.report(
                        None,
                        Kind::Io,
                        "the file shrank while it was read (another program truncated or rewrote it); lines past its new end are not written",
                    );
                }
                return None;
            }
            return m.bytes().get(a..b);
        }
        if let Some(bytes) = self.whole {
            let a = usize::try_from(offset).ok()?;
            return bytes.get(a..a.checked_add(n)?);
        }
        match self.file {
            None => {
                let a = usize::try_from(offset).ok()?;
                self.mem.get(a..a.checked_add(n)?)
            }
            Some(f) => {
                if buf.len() < n {
                    buf.resize(n, 0);
                }
                match f.read_exact_at(&mut buf[..n], offset) {
                    Ok(()) => Some(&buf[..n]),
                    Err(e) => {
                        d.report(
                            None,
                            Kind::Io,
                            format!("reading the file again failed (did it shrink?): {e}"),
                        );
                        None
                    }
                }
            }
        }
    }

    /// Done with the bytes `[a, b)`: a mapped file's pages there may leave memory.
    pub(crate) fn release(&self, a: u64, b: u64) {
        if let (Some(m), Ok(a), Ok(b)) = (self.map, usize::try_from(a), usize::try_from(b)) {
            m.release(a, b);
        }
    }

    /// One line's text without its terminator, into `buf`.
    pub(crate) fn line(&self, n: &PackedEntry, buf: &mut Vec<u8>, d: &mut Diags) -> bool {
        let mut tmp = std::mem::take(buf);
        let sliced = self.file.is_none() || self.map.is_some() || self.whole.is_some();
        let len = match self.read(n.offset(), self.len(n), &mut tmp, d) {
            Some(x) if sliced => {
                buf.clear();
                buf.extend_from_slice(x);
                buf.len()
            }
            Some(x) => x.len(),
            None => {
                *buf = tmp;
                buf.clear();
                return false;
            }
        };
        if !sliced {
            *buf = tmp;
            buf.truncate(len);
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        true
    }
}
