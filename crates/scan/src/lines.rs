//! Splitting a byte stream into lines with one reused buffer.
//!
//! The buffer starts at 64 KiB and rolls the partial last line to its front when it needs more
//! input; it grows only for a line longer than itself. `\n` ends a line; a `\r` before it is
//! not part of the line; a last line without `\n` is still a line.
//!
//! A line longer than [`MAX_LINE`] is never held: the stream reader discards it up to the next
//! newline, and both readers hand it out as [`Line::too_long`], without its bytes.
//!
//! Both readers check UTF-8 ahead of the lines they hand out, the complete lines of up to
//! [`UTF8_AHEAD`] bytes in one call ([`Line::utf8`]): one call a line cost more than the check
//! itself on lines of a few KB.

use memchr::{memchr, memrchr};
use std::io::{self, Read};

const INITIAL: usize = 64 * 1024;

/// The longest line read, in bytes (512 MiB). Pi reads a session file into one JavaScript
/// string, and V8's longest string is 2^29 − 24 UTF-16 units: Pi cannot load a file with a
/// longer line of one-byte characters, and no line of Pi's comes near it.
pub const MAX_LINE: usize = 512 << 20;

/// How many bytes from a line's start the readers check UTF-8 in one call, up to the last
/// complete line within them (a longer line alone): 256 KiB, measured against 64 KiB and
/// 1 MiB (BENCHMARKS.md, round 19).
pub const UTF8_AHEAD: usize = 256 << 10;

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
    /// [`MAX_LINE`], smaller in tests.
    limit: usize,
    /// UTF-8 checked ahead, in `buf`.
    utf8: Checked,
}

/// One line: its 1-based number, the stream offset of its first byte, and its bytes without
/// the line terminator. `len_with_eol` counts the terminator (`\n` or `\r\n`) when present.
/// A line longer than [`MAX_LINE`] has `too_long` set and no bytes (`len_with_eol` is still
/// its length). `utf8`: the bytes are known to be valid UTF-8, checked with the lines around
/// them; `false` says nothing (not checked this way, or a line near them is not valid).
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub no: u64,
    pub offset: u64,
    pub bytes: &'a [u8],
    pub len_with_eol: u64,
    pub has_newline: bool,
    pub too_long: bool,
    pub utf8: bool,
}

impl Line<'_> {
    /// Whether the bytes are valid UTF-8: known from the reader ([`Line::utf8`]), else checked.
    #[inline]
    pub fn is_valid_utf8(&self) -> bool {
        self.utf8 || simdutf8::basic::from_utf8(self.bytes).is_ok()
    }
}

/// Where a reader's bytes are known to be valid UTF-8, checked [`UTF8_AHEAD`] bytes at a time.
#[derive(Debug, Clone, Copy)]
struct Checked {
    /// The bytes before this are valid, up to the end of a line's bytes.
    valid_to: usize,
    /// The bytes from `valid_to` to this hold an invalid sequence: their lines are not known.
    unknown_to: usize,
    /// [`UTF8_AHEAD`], smaller in tests.
    ahead: usize,
}

impl Default for Checked {
    fn default() -> Checked {
        Checked {
            valid_to: 0,
            unknown_to: 0,
            ahead: UTF8_AHEAD,
        }
    }
}

impl Checked {
    /// Nothing checked ahead (the bytes moved).
    fn forget(&mut self) {
        (self.valid_to, self.unknown_to) = (0, 0);
    }

    /// Whether `data[from..end]`, a line's bytes, is known to be valid: checked with the
    /// complete lines after it up to [`UTF8_AHEAD`] bytes from `from`, unless it was already.
    #[inline]
    fn line(&mut self, data: &[u8], from: usize, end: usize) -> bool {
        if end <= self.valid_to {
            return true;
        }
        if end <= self.unknown_to {
            return false;
        }
        let ahead = from.saturating_add(self.ahead).min(data.len());
        // The end of the last line within `ahead` (a `\r` before its newline is checked too:
        // it is one byte, and valid).
        let to = match data.get(end..ahead).and_then(|rest| memrchr(b'\n', rest)) {
            Some(i) => end + i,
            None => end,
        };
        if simdutf8::basic::from_utf8(&data[from..to]).is_ok() {
            self.valid_to = to;
            true
        } else {
            // Not checked again as a whole: each line of it is checked by whoever reads it.
            self.unknown_to = to;
            false
        }
    }
}

impl<R: Read> LineReader<R> {
    pub fn new(rdr: R) -> LineReader<R> {
        LineReader::with_capacity(rdr, INITIAL)
    }

    /// A reader whose buffer starts at `capacity` bytes and grows as lines need: for reading a
    /// line or two of each of many files (64 KiB zeroed per file is most of such a read).
    pub fn with_capacity(rdr: R, capacity: usize) -> LineReader<R> {
        LineReader {
            rdr,
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
            eof: false,
            base: 0,
            line_no: 0,
            limit: MAX_LINE,
            utf8: Checked::default(),
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
                // Every line checked ahead has been handed out.
                self.utf8.forget();
            }
            // Longer than the limit even without a `\r` at its end: not held.
            if self.end > self.limit + 1 {
                return self.skip_long_line().map(Some);
            }
            if self.end == self.buf.len() {
                let n = (self.buf.len() * 2).min(self.limit + 2).max(self.end + 1);
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

    /// The line at the front of the buffer is longer than the limit: read on to its end
    /// (the next newline, or the end of the stream), keeping nothing of it.
    #[cold]
    fn skip_long_line(&mut self) -> io::Result<Line<'_>> {
        let offset = self.base;
        let mut len = self.end as u64;
        loop {
            self.base += self.end as u64;
            self.end = 0;
            let n = match self.rdr.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.end = n;
            self.utf8.forget();
            let newline = memchr(b'\n', &self.buf[..n]);
            if n == 0 {
                self.eof = true;
            } else if newline.is_none() {
                len += n as u64;
                continue;
            }
            self.start = newline.map_or(0, |i| i + 1);
            self.line_no += 1;
            return Ok(Line {
                no: self.line_no,
                offset,
                bytes: &[],
                len_with_eol: len + self.start as u64,
                has_newline: newline.is_some(),
                too_long: true,
                utf8: false,
            });
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
        let too_long = bytes.len() > self.limit;
        let utf8 = !too_long
            && self
                .utf8
                .line(&self.buf[..self.end], from, from + bytes.len());
        Line {
            no: self.line_no,
            offset: self.base + from as u64,
            bytes: if too_long { &[] } else { bytes },
            len_with_eol: (stop - from) as u64,
            has_newline,
            too_long,
            utf8,
        }
    }
}

/// The lines of bytes already in memory (a mapped file): the same lines as [`LineReader`]
/// gives for the same bytes, borrowed, never copied.
pub struct SliceLines<'a> {
    data: &'a [u8],
    pos: usize,
    line_no: u64,
    /// [`MAX_LINE`], smaller in tests.
    limit: usize,
    /// UTF-8 checked ahead, in `data`.
    utf8: Checked,
}

impl<'a> SliceLines<'a> {
    pub fn new(data: &'a [u8]) -> SliceLines<'a> {
        SliceLines {
            data,
            pos: 0,
            line_no: 0,
            limit: MAX_LINE,
            utf8: Checked::default(),
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
        let too_long = bytes.len() > self.limit;
        let utf8 = !too_long && self.utf8.line(self.data, from, from + bytes.len());
        Some(Line {
            no: self.line_no,
            offset: from as u64,
            bytes: if too_long { &[] } else { bytes },
            len_with_eol: len as u64,
            has_newline,
            too_long,
            utf8,
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
        let mut r = LineReader::with_capacity(input, cap);
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

    /// Issue 19, item 6: a line over the limit is handed out without its bytes, at its place,
    /// with its length, by both readers alike; the stream reader never holds it (its buffer
    /// stays within the limit and two bytes).
    #[test]
    fn item_6_a_line_over_the_limit_is_not_held() {
        let limit = 8;
        let input =
            b"short\n0123456789abcdef\r\n12345678\n123456789\nxx\n1234567\r\n0123456789abcdef";
        let want: Vec<(u64, u64, Vec<u8>, bool, bool, u64)> = vec![
            (1, 0, b"short".to_vec(), true, false, 6),
            (2, 6, vec![], true, true, 18),
            (3, 24, b"12345678".to_vec(), true, false, 9),
            (4, 33, vec![], true, true, 10),
            (5, 43, b"xx".to_vec(), true, false, 3),
            (6, 46, b"1234567".to_vec(), true, false, 9),
            (7, 55, vec![], false, true, 16),
        ];
        for cap in [1, 2, 3, 7, 16, 64] {
            let mut r = LineReader::new(&input[..]);
            r.buf = vec![0; cap];
            r.limit = limit;
            let mut got = vec![];
            while let Some(l) = r.next_line().unwrap() {
                got.push((
                    l.no,
                    l.offset,
                    l.bytes.to_vec(),
                    l.has_newline,
                    l.too_long,
                    l.len_with_eol,
                ));
            }
            assert_eq!(got, want, "capacity {cap}");
            assert!(
                r.buf.len() <= cap.max(limit + 2),
                "capacity {cap}: {}",
                r.buf.len()
            );
        }
        let mut s = SliceLines::new(input);
        s.limit = limit;
        let mut got = vec![];
        while let Some(l) = s.next_line() {
            got.push((
                l.no,
                l.offset,
                l.bytes.to_vec(),
                l.has_newline,
                l.too_long,
                l.len_with_eol,
            ));
        }
        assert_eq!(got, want);
    }

    /// Lines of valid and invalid UTF-8: whatever the buffer and the window, a line said to be
    /// valid is, and when every line is valid every line is said to be.
    #[test]
    fn utf8_checked_ahead_is_never_wrong_and_misses_no_valid_line() {
        let pieces: [&[u8]; 10] = [
            b"ab",
            b"{\"k\":1}",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\r",
            b"\xFF",
            b"\xE2\x82",
            b"\xED\xA0\x80",
            b"\xF0\x9F",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut seen = [0usize; 2];
        for round in 0..3000 {
            let invalid = round % 2 == 1;
            let mut input = Vec::new();
            for _ in 0..next() % 12 {
                for _ in 0..next() % 6 {
                    let p = (next() % if invalid { 10 } else { 6 }) as usize;
                    input.extend_from_slice(pieces[p]);
                }
                input.push(b'\n');
            }
            if next() % 2 == 0 {
                input.extend_from_slice(pieces[(next() % 6) as usize]);
            }
            let all_valid = input
                .split(|&b| b == b'\n')
                .all(|l| std::str::from_utf8(l).is_ok());
            let mut check = |l: &Line<'_>, how: &str| {
                let valid = std::str::from_utf8(l.bytes).is_ok();
                assert_eq!(l.is_valid_utf8(), valid, "{how}: line {}", l.no);
                assert!(
                    !l.utf8 || valid,
                    "{how}: line {} said valid: {input:?}",
                    l.no
                );
                assert!(
                    !all_valid || l.utf8,
                    "{how}: line {} not said valid: {input:?}",
                    l.no
                );
                seen[l.utf8 as usize] += 1;
            };
            for ahead in [1, 2, 5, 16, 64, UTF8_AHEAD] {
                for cap in [1, 2, 3, 7, 64, 4096] {
                    let mut r = LineReader::with_capacity(&input[..], cap);
                    r.utf8.ahead = ahead;
                    while let Some(l) = r.next_line().unwrap() {
                        check(&l, &format!("reader, capacity {cap}, ahead {ahead}"));
                    }
                }
                let mut s = SliceLines::new(&input);
                s.utf8.ahead = ahead;
                while let Some(l) = s.next_line() {
                    check(&l, &format!("slice, ahead {ahead}"));
                }
            }
        }
        assert!(seen[0] > 1000 && seen[1] > 1000, "{seen:?}");
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert!(lines(b"", 4).is_empty());
        assert_eq!(lines(b"\n", 4).len(), 1);
    }
}
