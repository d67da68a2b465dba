//! Splitting a byte stream into lines with one reused buffer.
//!
//! The buffer starts at 64 KiB and rolls the partial last line to its front when it needs more
//! input; it grows only for a line longer than itself. `\n` ends a line; a `\r` before it is
//! not part of the line; a last line without `\n` is still a line.

use memchr::memchr;
use std::io::{self, Read};

const INITIAL: usize = 64 * 1024;

pub struct LineReader<R> {
    rdr: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// Stream offset of `buf[0]`.
    base: u64,
    line_no: u64,
}

/// One line: its 1-based number, the stream offset of its first byte, and its bytes without
/// the line terminator. `len_with_eol` counts the terminator (`\n` or `\r\n`) when present.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub no: u64,
    pub offset: u64,
    pub bytes: &'a [u8],
    pub len_with_eol: u64,
    pub has_newline: bool,
}

impl<R: Read> LineReader<R> {
    pub fn new(rdr: R) -> LineReader<R> {
        LineReader {
            rdr,
            buf: vec![0; INITIAL],
            start: 0,
            end: 0,
            eof: false,
            base: 0,
            line_no: 0,
        }
    }

    /// The next line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let mut scanned = self.start;
        loop {
            if let Some(i) = memchr(b'\n', &self.buf[scanned..self.end]) {
                let nl = scanned + i;
                return Ok(Some(self.take(nl + 1, true)));
            }
            scanned = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                return Ok(Some(self.take(self.end, false)));
            }
            // Need more input: roll the partial line to the front, grow if it fills the buffer.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.base += self.start as u64;
                scanned -= self.start;
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            match self.rdr.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn take(&mut self, stop: usize, has_newline: bool) -> Line<'_> {
        let from = self.start;
        self.start = stop;
        self.line_no += 1;
        let mut bytes = &self.buf[from..stop];
        if has_newline {
            bytes = &bytes[..bytes.len() - 1];
            if let [rest @ .., b'\r'] = bytes {
                bytes = rest;
            }
        }
        Line {
            no: self.line_no,
            offset: self.base + from as u64,
            bytes,
            len_with_eol: (stop - from) as u64,
            has_newline,
        }
    }
}

/// The lines of bytes already in memory (a mapped file): the same lines as [`LineReader`]
/// gives for the same bytes, borrowed, never copied.
pub struct SliceLines<'a> {
    data: &'a [u8],
    pos: usize,
    line_no: u64,
}

impl<'a> SliceLines<'a> {
    pub fn new(data: &'a [u8]) -> SliceLines<'a> {
        SliceLines {
            data,
            pos: 0,
            line_no: 0,
        }
    }

    /// The next line, or `None` at the end.
    pub fn next_line(&mut self) -> Option<Line<'a>> {
        let rest = &self.data[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let from = self.pos;
        let (mut bytes, has_newline, len) = match memchr(b'\n', rest) {
            Some(i) => (&rest[..i], true, i + 1),
            None => (rest, false, rest.len()),
        };
        if has_newline {
            if let [head @ .., b'\r'] = bytes {
                bytes = head;
            }
        }
        self.pos += len;
        self.line_no += 1;
        Some(Line {
            no: self.line_no,
            offset: from as u64,
            bytes,
            len_with_eol: len as u64,
            has_newline,
        })
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(u64, u64, Vec<u8>, bool)> {
        let mut r = LineReader::new(input);
        r.buf = vec![0; cap];
        let mut out = vec![];
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.no, l.offset, l.bytes.to_vec(), l.has_newline));
        }
        out
    }

    #[test]
    fn splits_crlf_and_unterminated_last_line() {
        for cap in [1, 2, 3, 7, 64 * 1024] {
            let got = lines(b"ab\r\n\ncd\nlast", cap);
            assert_eq!(
                got,
                vec![
                    (1, 0, b"ab".to_vec(), true),
                    (2, 4, b"".to_vec(), true),
                    (3, 5, b"cd".to_vec(), true),
                    (4, 8, b"last".to_vec(), false),
                ],
                "capacity {cap}"
            );
        }
    }

    #[test]
    fn slice_lines_match_the_reader() {
        for input in [&b"ab\r\n\ncd\nlast"[..], b"", b"\n", b"x\r", b"\r\n\r\n"] {
            let mut s = SliceLines::new(input);
            let mut got = vec![];
            while let Some(l) = s.next_line() {
                got.push((l.no, l.offset, l.bytes.to_vec(), l.has_newline));
            }
            assert_eq!(got, lines(input, 3), "{input:?}");
            assert_eq!(s.position(), input.len());
        }
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert!(lines(b"", 4).is_empty());
        assert_eq!(lines(b"\n", 4).len(), 1);
    }
}
