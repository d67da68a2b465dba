//! A validating, allocation-free JSON scanner.
//!
//! Tools need a handful of fields from each line, but must still know whether the line is
//! valid JSON (Pi skips lines that `JSON.parse` rejects, and so must we). [`scan_members`]
//! validates a whole object in one pass and hands out each top-level value as a [`Raw`];
//! nested values are read the same way only when a tool asks for them. Strings are skipped
//! with `memchr`, so long tool outputs cost little more than reading them.
//!
//! The grammar is RFC 8259, as `JSON.parse` accepts it: lone surrogate escapes are allowed,
//! raw control characters inside strings are not. UTF-8 is checked separately by the reader.
//!
//! What each part may be given:
//! - The validating entry points take any bytes: [`validate`] (a whole text), [`value_at`]
//!   and [`skip_value`] (the value at an index, whatever follows it), [`scan_members`] and
//!   [`scan_members_nested`] (an object, its members handed out as they are validated).
//! - A [`Raw`] is the text of one value they accepted, and only they make one. Its walkers
//!   ([`Raw::get`], [`Raw::for_each_field`], [`Raw::for_each_element`]) read it a second time
//!   without checking, which is only sound on validated text: taking a `Raw` is how they
//!   make sure of it.
//! - [`as_str`], [`as_u64`], [`as_f64`], [`as_bool`], [`kind_name`], [`key_is`],
//!   [`member_named`] and [`decode_string_body`] stay free functions over bytes: each reads one value's own text
//!   and never skips, so any bytes are safe to give them (what is not the value they expect
//!   reads as `None`, or U+FFFD in a string). `Raw` has the same as methods.

mod raw;
mod strings;

pub use raw::{Element, Fields, Raw};
pub use strings::{
    copy_written, decode_written, escaped_bytes, string_counts, string_written, text_counts,
    TextCounts,
};

use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text ended inside a value.
    Eof,
    /// A byte that cannot start or continue a value here.
    Unexpected,
    /// A backslash escape JSON does not define, or a bad `\u` escape.
    BadEscape,
    /// A raw control character (below U+0020) inside a string.
    ControlChar,
    /// A malformed number.
    BadNumber,
}

/// A syntax error at byte offset `pos` of the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub pos: usize,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Eof => "unexpected end of line",
            ErrorKind::Unexpected => "unexpected character",
            ErrorKind::BadEscape => "invalid escape in string",
            ErrorKind::ControlChar => "control character in string",
            ErrorKind::BadNumber => "invalid number",
        };
        write!(f, "{what} at byte {}", self.pos + 1)
    }
}

fn err<T>(kind: ErrorKind, pos: usize) -> Result<T, Error> {
    Err(Error { kind, pos })
}

#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Index of the first byte at or after `i` that is `"`, `\\` or a control character (below
/// U+0020): the only bytes that end a run of plain string content. `b.len()` when none.
///
/// String contents are most of the bytes of a session, so this loop is the scanner's speed:
/// sixteen bytes per step with SSE2 on x86-64 (part of its baseline), eight per step with
/// plain integer arithmetic elsewhere.
#[inline]
pub fn string_stop(b: &[u8], i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        string_stop_sse2(b, i)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        string_stop_swar(b, i)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn string_stop_sse2(b: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    const W: usize = 16;
    // SAFETY: SSE2 is part of the x86-64 baseline, so these instructions always exist; every
    // load reads the 16 bytes of `chunk`, which are in bounds, and needs no alignment.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let space = _mm_set1_epi8(0x20);
        while i + W <= b.len() {
            let chunk = &b[i..i + W];
            let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let special = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash));
            // c >= 0x20 exactly when max(c, 0x20) == c.
            let printable = _mm_cmpeq_epi8(_mm_max_epu8(x, space), x);
            let stops =
                (_mm_movemask_epi8(special) | !_mm_movemask_epi8(printable)) as u32 & 0xffff;
            if stops != 0 {
                return i + stops.trailing_zeros() as usize;
            }
            i += W;
        }
    }
    string_stop_swar(b, i)
}

/// [`string_stop`] eight bytes at a time in a `u64` (the portable path, and the tail).
#[inline]
fn string_stop_swar(b: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while i + 8 <= b.len() {
        let x = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let q = x ^ (LO * u64::from(b'"'));
        let s = x ^ (LO * u64::from(b'\\'));
        // The classic "has a zero byte" / "has a byte below n" tests; their lowest flagged
        // byte is always a true hit (false ones only appear above a true one).
        let hits = (q.wrapping_sub(LO) & !q)
            | (s.wrapping_sub(LO) & !s)
            | (x.wrapping_sub(LO * 0x20) & !x);
        let hits = hits & HI;
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// `b[i]` is the opening quote; returns the index just past the closing quote.
///
/// Most strings (keys, ids, names, times) end within their first 16 bytes: one SSE2 step
/// here, in the caller, finds their quote. A longer one goes on 64 bytes a step
/// ([`strings::skip_long`]), one with escapes from its first backslash on
/// ([`strings::skip_rest`]).
#[inline(always)]
fn skip_string(b: &[u8], i: usize) -> Result<usize, Error> {
    first_step(b, i, Ok, strings::skip_long, strings::skip_rest)
}

/// The first step of [`skip_string`] over the string whose opening quote is `b[i]` (16 bytes
/// at once where that many follow the quote, else the first stop of [`string_stop`]), and
/// what follows it: `ended` with the index past the closing quote found there, `long` with
/// the index after the 16 bytes when none of them stops, `escape` with the index of the
/// first backslash or control byte. (The steps are taken as functions, not returned as a
/// value: the value cost every scan about 2 % more instructions.)
#[inline(always)]
fn first_step<T>(
    b: &[u8],
    i: usize,
    ended: impl FnOnce(usize) -> T,
    long: impl FnOnce(&[u8], usize) -> T,
    escape: impl FnOnce(&[u8], usize) -> T,
) -> T {
    #[cfg(target_arch = "x86_64")]
    if let Some(chunk) = b.get(i + 1..i + 17) {
        let (stops, quotes) = stops16_sse2(chunk.try_into().expect("16 bytes"));
        if stops == 0 {
            return long(b, i + 17);
        }
        let bit = stops.trailing_zeros();
        if quotes >> bit & 1 == 1 {
            return ended(i + 2 + bit as usize);
        }
        return escape(b, i + 1 + bit as usize);
    }
    first_step_short(b, i, ended, escape)
}

/// [`first_step`] where fewer than 16 bytes follow the quote (everywhere off x86-64).
#[inline(never)]
fn first_step_short<T>(
    b: &[u8],
    i: usize,
    ended: impl FnOnce(usize) -> T,
    escape: impl FnOnce(&[u8], usize) -> T,
) -> T {
    let stop = string_stop(b, i + 1);
    match b.get(stop) {
        Some(&b'"') => ended(stop + 1),
        _ => escape(b, stop),
    }
}

/// Of 16 bytes, the stops of [`string_stop`] (quotes, backslashes, control bytes) and the
/// quotes, one bit a byte.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops16_sse2(chunk: &[u8; 16]) -> (u32, u32) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86-64 baseline, so these instructions always exist; the
    // load reads the 16 bytes of `chunk` and needs no alignment.
    unsafe {
        let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        // c <= 0x1f exactly when min(c, 0x1f) == c.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
        let stops = _mm_or_si128(_mm_or_si128(quote, backslash), control);
        (
            _mm_movemask_epi8(stops) as u32,
            _mm_movemask_epi8(quote) as u32,
        )
    }
}

/// How a scan skips strings: the block loop ([`Blocks`]), the same noting the strings it
/// goes past ([`Noting`]), or, for the reference scanner the block loop is tested against,
/// the stepwise loop it replaced.
trait Strings {
    /// `b[i]` is the opening quote; returns the index just past the closing quote.
    fn skip(&mut self, b: &[u8], i: usize) -> Result<usize, Error>;
}

/// Strings skipped by [`skip_string`]: what every public entry point uses.
struct Blocks;

impl Strings for Blocks {
    #[inline(always)]
    fn skip(&mut self, b: &[u8], i: usize) -> Result<usize, Error> {
        skip_string(b, i)
    }
}

/// A string the noting scan ([`scan_members_deep_noting`]) went past its first step for: one
/// longer than 16 bytes or holding an escape. (A string not noted is shorter and has none: its
/// text is its body.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongString {
    /// The index of its opening quote.
    pub open: usize,
    /// The index just past its closing quote.
    pub end: usize,
    /// The bytes of its text when its body is written as a minimal writer writes it: what
    /// [`string_written`] gives, found by the validating scan.
    pub written: Option<usize>,
}

/// The strings a noting scan ([`scan_members_deep_noting`]) noted in the text it scanned,
/// looked up by where a string of that text is: a second look at one of them finds its end
/// and measure here instead of reading it again. Empty ([`Noted::default`]) where no noting
/// scan was made: every string is then read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Noted<'a> {
    scanned: &'a [u8],
    notes: &'a [LongString],
}

impl<'a> Noted<'a> {
    /// The `notes` a noting scan of `scanned` made (its indices are of `scanned`).
    pub fn new(scanned: &'a [u8], notes: &'a [LongString]) -> Noted<'a> {
        Noted { scanned, notes }
    }

    /// [`string_written`] of the string whose opening quote is `b[open]` (`b` a validated
    /// value): from its note when `b` lies in the scanned text and the string was noted, else
    /// read (a string not noted is shorter than 17 bytes).
    #[inline]
    pub fn string_written(&self, b: &[u8], open: usize) -> (usize, Option<usize>) {
        self.find(b, open)
            .unwrap_or_else(|| string_written(b, open))
    }

    /// The note of the string whose opening quote is `b[open]`, its end in `b`'s indices:
    /// `None` when `b` is not in the scanned text or the string was not noted.
    #[inline]
    pub fn find(&self, b: &[u8], open: usize) -> Option<(usize, Option<usize>)> {
        if self.notes.is_empty() {
            return None;
        }
        // Where `b` starts in the scanned text (a huge number when it starts before).
        let shift = (b.as_ptr() as usize).wrapping_sub(self.scanned.as_ptr() as usize);
        if shift >= self.scanned.len() {
            return None;
        }
        let k = self
            .notes
            .binary_search_by_key(&(shift + open), |n| n.open)
            .ok()?;
        let note = self.notes[k];
        (note.end - shift <= b.len()).then_some((note.end - shift, note.written))
    }
}

/// Strings skipped by [`skip_string`]'s steps, each one that is not done with in the first
/// step noted with its measure ([`LongString`]).
struct Noting<'v>(&'v mut Vec<LongString>);

impl Strings for Noting<'_> {
    #[inline(always)]
    fn skip(&mut self, b: &[u8], i: usize) -> Result<usize, Error> {
        // The end, and the measure of a string the first step did not end.
        let (end, measured) = first_step(
            b,
            i,
            |end| Ok((end, None)),
            |b, from| strings::skip_long_noted(b, from).map(|(end, m)| (end, Some(m))),
            |b, from| strings::skip_rest_noted(b, from).map(|(end, m)| (end, Some(m))),
        )?;
        let Some(added) = measured else {
            return Ok(end);
        };
        self.0.push(LongString {
            open: i,
            end,
            written: added.map(|added| end - i - 2 - added),
        });
        Ok(end)
    }
}

/// The index of the first byte at or after `i` that is no ASCII digit (`b.len()` when none):
/// eight bytes a step in a `u64` (token counts and times run to 5–13 digits), the last few
/// one by one.
#[inline]
fn skip_digits(b: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    while let Some(chunk) = b.get(i..i + 8) {
        // A byte is a digit exactly when it XOR '0' is below 10: each byte of `x` below 10
        // for a digit. A byte of 10 or more (or one with the top bit) is flagged by its top
        // bit after adding 0x76; a carry out of a flagged byte may flag the byte above it
        // wrongly, never one below, so the lowest flag is always a true one.
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ (LO * u64::from(b'0'));
        let other = (x.wrapping_add(LO * 0x76) | x) & (LO * 0x80);
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn skip_number(b: &[u8], start: usize) -> Result<usize, Error> {
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = skip_digits(b, i + 1),
        _ => return err(ErrorKind::BadNumber, i),
    }
    if b.get(i) == Some(&b'.') {
        let j = skip_digits(b, i + 1);
        if j == i + 1 {
            return err(ErrorKind::BadNumber, j);
        }
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = skip_digits(b, i);
        if j == i {
            return err(ErrorKind::BadNumber, j);
        }
        i = j;
    }
    Ok(i)
}

fn skip_literal(b: &[u8], i: usize, word: &[u8]) -> Result<usize, Error> {
    if b[i..].starts_with(word) {
        Ok(i + word.len())
    } else {
        err(ErrorKind::Unexpected, i)
    }
}

/// Open containers kept in place; a deeper value spills the rest to the heap.
const INLINE_DEPTH: usize = 64;

/// A stack of open containers, one bit each (set = object). Validation needs nothing else of
/// an open container than its kind, so any depth costs one bit a level: the first
/// [`INLINE_DEPTH`] levels in one word, deeper ones in a vector that only such a value
/// allocates. `JSON.parse` accepts any depth its memory allows, and so does this.
struct Stack {
    bits: u64,
    deeper: Vec<u64>,
    len: usize,
}

impl Stack {
    #[inline]
    fn new() -> Stack {
        Stack {
            bits: 0,
            deeper: Vec::new(),
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, object: bool) {
        let n = self.len;
        let m = 1u64 << (n % 64);
        let word = if n < INLINE_DEPTH {
            &mut self.bits
        } else {
            let w = (n - INLINE_DEPTH) / 64;
            if w == self.deeper.len() {
                self.deeper.push(0);
            }
            &mut self.deeper[w]
        };
        if object {
            *word |= m;
        } else {
            *word &= !m;
        }
        self.len += 1;
    }
    /// Closes the innermost container: whether the one around it (if any) is an object.
    #[inline]
    fn pop(&mut self) -> bool {
        self.len -= 1;
        self.len > 0 && self.top_is_object()
    }
    #[inline]
    fn top_is_object(&self) -> bool {
        let n = self.len - 1;
        let word = if n < INLINE_DEPTH {
            self.bits
        } else {
            self.deeper[(n - INLINE_DEPTH) / 64]
        };
        word & (1 << (n % 64)) != 0
    }
}

/// Validates the value starting at `b[i]` (no leading whitespace) and returns the index just
/// past it. Iterative, so any depth is accepted and none can overflow the stack.
pub fn skip_value(b: &[u8], i: usize) -> Result<usize, Error> {
    skip_value_with(b, i, &mut Blocks)
}

/// [`skip_value`], strings skipped by `S`.
#[inline]
fn skip_value_with<S: Strings>(b: &[u8], i: usize, s: &mut S) -> Result<usize, Error> {
    // Scalars directly: most values are, and they need no container stack.
    match b.get(i) {
        Some(b'"') => return s.skip(b, i),
        Some(b'-' | b'0'..=b'9') => return skip_number(b, i),
        Some(b't') => return skip_literal(b, i, b"true"),
        Some(b'f') => return skip_literal(b, i, b"false"),
        Some(b'n') => return skip_literal(b, i, b"null"),
        _ => {}
    }
    skip_container(b, i, s)
}

/// [`skip_value`], returning the value's text: the value that starts at `b[i]`, whatever
/// follows it.
pub fn value_at(b: &[u8], i: usize) -> Result<Raw<'_>, Error> {
    let end = skip_value(b, i)?;
    Ok(Raw(&b[i..end]))
}

/// Validates a whole text: one value, with only whitespace around it. Returns the value's
/// text; an error when the text is not one value (at the first byte after it, when it is
/// followed by more than whitespace).
pub fn validate(b: &[u8]) -> Result<Raw<'_>, Error> {
    validate_with(b, &mut Blocks)
}

/// [`validate`], strings skipped by `S`.
fn validate_with<'b, S: Strings>(b: &'b [u8], s: &mut S) -> Result<Raw<'b>, Error> {
    let start = skip_ws(b, 0);
    let end = skip_value_with(b, start, s)?;
    let rest = skip_ws(b, end);
    if rest != b.len() {
        return err(ErrorKind::Unexpected, rest);
    }
    Ok(Raw(&b[start..end]))
}

fn skip_container<S: Strings>(b: &[u8], i: usize, s: &mut S) -> Result<usize, Error> {
    let mut i = i;
    let mut stack = Stack::new();
    // The kind of the innermost open container (the stack's top), kept at hand.
    let mut object = false;
    'value: loop {
        // Parse one value at i.
        let Some(&c) = b.get(i) else {
            return err(ErrorKind::Eof, i);
        };
        match c {
            b'"' => i = s.skip(b, i)?,
            b'{' | b'[' => {
                object = c == b'{';
                stack.push(object);
                i = skip_ws(b, i + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    object = stack.pop();
                    i += 1;
                } else if object {
                    i = object_key(b, i, s)?;
                    continue 'value;
                } else {
                    continue 'value;
                }
            }
            b't' => i = skip_literal(b, i, b"true")?,
            b'f' => i = skip_literal(b, i, b"false")?,
            b'n' => i = skip_literal(b, i, b"null")?,
            b'-' | b'0'..=b'9' => i = skip_number(b, i)?,
            _ => return err(ErrorKind::Unexpected, i),
        }
        // After a value: close containers or move to the next member. The writers put no
        // blank here, so one is looked for only when the byte is none of the expected ones.
        loop {
            if stack.len == 0 {
                return Ok(i);
            }
            match b.get(i) {
                Some(b',') => {
                    i = skip_ws(b, i + 1);
                    if object {
                        i = object_key(b, i, s)?;
                    }
                    continue 'value;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                Some(b' ' | b'\t' | b'\n' | b'\r') => {
                    i = skip_ws(b, i);
                    continue;
                }
                None => return err(ErrorKind::Eof, i),
                Some(_) => return err(ErrorKind::Unexpected, i),
            }
            object = stack.pop();
            i += 1;
        }
    }
}

/// `b[i]` should start `"key" :`; returns the index of the value after it.
#[inline(always)]
fn object_key<S: Strings>(b: &[u8], i: usize, s: &mut S) -> Result<usize, Error> {
    if b.get(i) != Some(&b'"') {
        return err(
            if i >= b.len() {
                ErrorKind::Eof
            } else {
                ErrorKind::Unexpected
            },
            i,
        );
    }
    after_colon(b, s.skip(b, i)?)
}

/// `b[i]` should be the `:` after a key, blanks before and after it allowed: the index of the
/// value after it. The colon is looked for first (the writers put no blank before it).
#[inline(always)]
fn after_colon(b: &[u8], i: usize) -> Result<usize, Error> {
    let mut i = i;
    if b.get(i) != Some(&b':') {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b':') {
            return err(
                if i >= b.len() {
                    ErrorKind::Eof
                } else {
                    ErrorKind::Unexpected
                },
                i,
            );
        }
    }
    Ok(skip_ws(b, i + 1))
}

/// Scans the object at `b[i]` (which must be `{`), calling `f(raw_key, value)` for each member
/// in order. `raw_key` is the key's text between its quotes, escapes undecoded (compare with
/// [`key_is`]); `value` is the exact text of the value. Returns the object's text: the index
/// past its `}` is `i + object.len()`.
pub fn scan_members<'a>(
    b: &'a [u8],
    i: usize,
    mut f: impl FnMut(&'a [u8], Raw<'a>),
) -> Result<Raw<'a>, Error> {
    let end = object_members(
        b,
        i,
        0,
        &|_, _: &[u8]| false,
        &mut |_, k, v| f(k, v),
        &mut Blocks,
    )?;
    Ok(Raw(&b[i..end]))
}

/// Where a member handed out by [`scan_members_nested`] (or [`scan_members_deep`]) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    /// A top-level member whose value was not opened.
    Top,
    /// A member of an opened value (handed out before the member that holds it).
    Nested,
    /// A top-level member whose value (an object) was opened: its members came just before.
    Opened,
    /// A member of an opened value of a [`Member::Nested`] member, handed out before it
    /// (only [`scan_members_deep`] opens them).
    Deep,
    /// A [`Member::Nested`] member whose value (an object) was opened: its members came
    /// just before, as [`Member::Deep`].
    NestedOpened,
}

/// [`scan_members`], and in the same pass the members of the top-level values that are
/// objects under a key `open` picks (by raw key): those are handed out first as
/// [`Member::Nested`], then their holder as [`Member::Opened`]. The same validation and errors
/// as [`scan_members`]; a reader gets two levels of members for the price of one
/// scan.
pub fn scan_members_nested<'a>(
    b: &'a [u8],
    i: usize,
    open: impl Fn(&[u8]) -> bool,
    mut f: impl FnMut(Member, &'a [u8], Raw<'a>),
) -> Result<Raw<'a>, Error> {
    let open = |depth: usize, key: &[u8]| depth == 0 && open(key);
    let end = object_members(b, i, 0, &open, &mut f, &mut Blocks)?;
    Ok(Raw(&b[i..end]))
}

/// [`scan_members_nested`] one level further down: `open(depth, raw_key)` picks the
/// object values to open among the top-level members (depth 0) and among the members of
/// those opened (depth 1). Members of a value opened at depth 1 come first as
/// [`Member::Deep`], then their holder as [`Member::NestedOpened`]. The same validation and
/// errors as [`scan_members`]: a reader gets a message's `usage` members in the scan that
/// validates the line.
pub fn scan_members_deep<'a>(
    b: &'a [u8],
    i: usize,
    open: impl Fn(usize, &[u8]) -> bool,
    mut f: impl FnMut(Member, &'a [u8], Raw<'a>),
) -> Result<Raw<'a>, Error> {
    let end = object_members(b, i, 0, &open, &mut f, &mut Blocks)?;
    Ok(Raw(&b[i..end]))
}

/// [`scan_members_deep`], noting in `notes` (appended in the order of the text) each string
/// its scan goes past the first step for, with its end and its text's measure as
/// [`string_written`] gives them ([`LongString`]): a tool that reads a long text of the
/// object again finds where it ends, and whether and how it is escaped, without a second
/// look at its bytes. The same validation and errors; on an error, `notes` may have been
/// appended to.
pub fn scan_members_deep_noting<'a>(
    b: &'a [u8],
    i: usize,
    open: impl Fn(usize, &[u8]) -> bool,
    mut f: impl FnMut(Member, &'a [u8], Raw<'a>),
    notes: &mut Vec<LongString>,
) -> Result<Raw<'a>, Error> {
    let end = object_members(b, i, 0, &open, &mut f, &mut Noting(notes))?;
    Ok(Raw(&b[i..end]))
}

/// The object at `b[i]`, `depth` containers down (0, 1 or 2): its members go to `f`, and at
/// depths 0 and 1 those `open` picks are scanned the same way. Returns the index past its `}`.
fn object_members<'a, S, O, F>(
    b: &'a [u8],
    i: usize,
    depth: usize,
    open: &O,
    f: &mut F,
    s: &mut S,
) -> Result<usize, Error>
where
    S: Strings,
    O: Fn(usize, &[u8]) -> bool,
    F: FnMut(Member, &'a [u8], Raw<'a>),
{
    if b.get(i) != Some(&b'{') {
        return err(ErrorKind::Unexpected, i);
    }
    let mut i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return err(
                if i >= b.len() {
                    ErrorKind::Eof
                } else {
                    ErrorKind::Unexpected
                },
                i,
            );
        }
        let key_end = s.skip(b, i)?;
        let key = &b[i + 1..key_end - 1];
        i = after_colon(b, key_end)?;
        let (end, kind) = if depth < 2 && b.get(i) == Some(&b'{') && open(depth, key) {
            let end = object_members(b, i, depth + 1, open, f, s)?;
            (
                end,
                if depth == 0 {
                    Member::Opened
                } else {
                    Member::NestedOpened
                },
            )
        } else {
            let end = skip_value_with(b, i, s)?;
            (
                end,
                match depth {
                    0 => Member::Top,
                    1 => Member::Nested,
                    _ => Member::Deep,
                },
            )
        };
        f(kind, key, Raw(&b[i..end]));
        i = end;
        // The writers put no blank after a value: one is looked for only when the byte is
        // neither `,` nor `}`.
        loop {
            match b.get(i) {
                Some(b',') => break,
                Some(b'}') => return Ok(i + 1),
                Some(b' ' | b'\t' | b'\n' | b'\r') => i = skip_ws(b, i),
                None => return err(ErrorKind::Eof, i),
                Some(_) => return err(ErrorKind::Unexpected, i),
            }
        }
        i = skip_ws(b, i + 1);
    }
}

/// Whether a raw key (as handed out by [`scan_members`]) spells `name`: [`member_named`] of
/// one name.
#[inline]
pub fn key_is(raw_key: &[u8], name: &str) -> bool {
    // An escape is always longer than what it stands for, so a raw key no longer than
    // `name` matches only byte for byte; only a longer one may need decoding.
    if raw_key.len() <= name.len() {
        return raw_key == name.as_bytes();
    }
    member_named(raw_key, |k| (k == name.as_bytes()).then_some(())).is_some()
}

/// `read(name)` of the member whose raw (undecoded) name is `raw_key`, for names without a
/// backslash of their own: a raw name that is one of them as written is that name, so only
/// one that is not and has an escape (rare) is decoded and read again. Spares searching
/// every name for a backslash, or decoding it, before matching it. The one rule by which a
/// member's name is matched as written ([`key_is`] for one name).
#[inline]
pub fn member_named<T>(raw_key: &[u8], mut read: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
    if let Some(t) = read(raw_key) {
        return Some(t);
    }
    if !raw_key.contains(&b'\\') {
        return None;
    }
    read(decode_string_body(raw_key).as_bytes())
}

/// The string value of a raw JSON value, decoded; `None` when it is not a string.
/// Invalid UTF-8 and lone surrogates become U+FFFD, as a JavaScript reader would show them.
pub fn as_str(raw: &[u8]) -> Option<Cow<'_, str>> {
    if raw.len() < 2 || raw[0] != b'"' {
        return None;
    }
    Some(decode_string_body(&raw[1..raw.len() - 1]))
}

/// When the body of a validated string (the text between its quotes) holds only the escapes
/// a minimal writer writes (`\" \\ \b \t \n \f \r`, and `\u00xx` in lowercase for the other
/// controls below U+0020; `JSON.stringify` and serde_json write these), how many bytes the
/// text it stands for has; `None` for a body with any other escape (`\/`, `\u0041`, `\u001B`,
/// a surrogate pair) or with a quote or control byte no backslash escapes. UTF-8 is not
/// checked. With AVX2, 64 bytes a step.
pub fn written_len(body: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if body.len() >= 64 && strings::x86::avx2_bmi1() {
        // SAFETY: the CPU has AVX2 and BMI1, checked just above.
        return unsafe { strings::x86::written_blocks_avx2(body) }.map(|added| body.len() - added);
    }
    strings::written_plain(body, 0).map(|added| body.len() - added)
}

/// Decodes the text between the quotes of a validated JSON string.
pub fn decode_string_body(body: &[u8]) -> Cow<'_, str> {
    if let Some(text) = strings::short_ascii(body) {
        return Cow::Borrowed(text);
    }
    let Some(first) = memchr::memchr(b'\\', body) else {
        // A check of the (usual) valid text first: much quicker than `from_utf8_lossy`.
        return match simdutf8::basic::from_utf8(body) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(body),
        };
    };
    let out = decode_escapes(body, first, false);
    Cow::Owned(match simdutf8::basic::from_utf8(&out) {
        // SAFETY: just checked to be valid UTF-8.
        Ok(_) => unsafe { String::from_utf8_unchecked(out) },
        Err(_) => String::from_utf8_lossy(&out).into_owned(),
    })
}

/// The identity of a validated JSON string (the text between its quotes) as `JSON.parse`
/// gives it to JavaScript, as bytes: what ids are compared by. The same bytes as
/// [`decode_string_body`] gives for every string but one that holds a lone surrogate escape
/// (`"\ud800"`): that stays a code unit of its own in JavaScript, so `"\ud800"`, `"\ud801"`
/// and `"\u{FFFD}"` are three strings; here each lone surrogate is its 3-byte WTF-8 form
/// (0xED 0xA0..=0xBF 0x80..=0xBF), which no UTF-8 text holds. Invalid UTF-8 written in the
/// file is U+FFFD, as Node's decoding of the file makes it. A string without a backslash
/// costs what [`decode_string_body`] costs (its bytes, borrowed). Show one with [`key_text`].
pub fn string_key(body: &[u8]) -> Cow<'_, [u8]> {
    // Step for step the quick paths of `decode_string_body`.
    if let Some(text) = strings::short_ascii(body) {
        return Cow::Borrowed(text.as_bytes());
    }
    let Some(first) = memchr::memchr(b'\\', body) else {
        return match simdutf8::basic::from_utf8(body) {
            Ok(_) => Cow::Borrowed(body),
            Err(_) => Cow::Owned(String::from_utf8_lossy(body).into_owned().into_bytes()),
        };
    };
    Cow::Owned(decode_escapes(body, first, true))
}

/// [`string_key`] of a raw JSON value; `None` when it is not a string.
pub fn as_key(raw: &[u8]) -> Option<Cow<'_, [u8]>> {
    if raw.len() < 2 || raw[0] != b'"' {
        return None;
    }
    Some(string_key(&raw[1..raw.len() - 1]))
}

/// A key of [`string_key`] as text: each lone surrogate shown as one U+FFFD, as
/// [`decode_string_body`] shows it (borrowed when the key holds none).
pub fn key_text(key: &[u8]) -> Cow<'_, str> {
    let mut rest = key;
    let mut out = String::new();
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) if out.is_empty() && rest.len() == key.len() => return Cow::Borrowed(s),
            Ok(s) => {
                out.push_str(s);
                return Cow::Owned(out);
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // SAFETY: `from_utf8` found these bytes valid.
                out.push_str(unsafe { std::str::from_utf8_unchecked(valid) });
                out.push('\u{FFFD}');
                let surrogate = matches!(after, [0xED, 0xA0..=0xBF, 0x80..=0xBF, ..]);
                let skip = if surrogate {
                    3
                } else {
                    e.error_len().unwrap_or(after.len())
                };
                rest = &after[skip.max(1)..];
            }
        }
    }
}

/// The body of a validated string decoded from its first backslash at `first`: each lone
/// surrogate escape as U+FFFD, or, with `wtf8`, as its 3-byte WTF-8 form, with what is
/// written without escapes made valid UTF-8 run by run (U+FFFD for an invalid sequence; an
/// escape's bytes never continue a sequence before them, so this is the text
/// `from_utf8_lossy` makes of the whole).
fn decode_escapes(body: &[u8], first: usize, wtf8: bool) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let copy = |out: &mut Vec<u8>, run: &[u8]| match simdutf8::basic::from_utf8(run) {
        Ok(_) => out.extend_from_slice(run),
        Err(_) => out.extend_from_slice(String::from_utf8_lossy(run).as_bytes()),
    };
    copy(&mut out, &body[..first]);
    let mut i = first;
    while i < body.len() {
        if body[i] != b'\\' || i + 1 >= body.len() {
            // A run up to the next escape, copied whole.
            let end = memchr::memchr(b'\\', &body[i + 1..]).map_or(body.len(), |p| i + 1 + p);
            copy(&mut out, &body[i..end]);
            i = end;
            continue;
        }
        let e = body[i + 1];
        i += 2;
        let ch = match e {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let hi = hex4(body, i);
                i += 4;
                let lone = match hi {
                    Some(hi @ 0xD800..=0xDBFF) => {
                        let lo = (body.get(i..i + 2) == Some(b"\\u"))
                            .then(|| hex4(body, i + 2))
                            .flatten();
                        match lo {
                            Some(lo @ 0xDC00..=0xDFFF) => {
                                i += 6;
                                let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                Err(char::from_u32(cp).unwrap_or('\u{FFFD}'))
                            }
                            _ => Ok(hi),
                        }
                    }
                    Some(cp @ 0xDC00..=0xDFFF) => Ok(cp),
                    Some(cp) => Err(char::from_u32(cp).unwrap_or('\u{FFFD}')),
                    None => Err('\u{FFFD}'),
                };
                match lone {
                    Err(ch) => ch,
                    Ok(unit) if wtf8 => {
                        // The generalized UTF-8 of a surrogate code unit (U+D800..U+DFFF).
                        out.extend_from_slice(&[
                            0xED,
                            0x80 | (unit >> 6 & 0x3F) as u8,
                            0x80 | (unit & 0x3F) as u8,
                        ]);
                        continue;
                    }
                    Ok(_) => '\u{FFFD}',
                }
            }
            other => other as char,
        };
        let mut tmp = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
    }
    out
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    let s = std::str::from_utf8(h).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// A JSON number as f64; `None` for anything else (strings holding digits included).
pub fn as_f64(raw: &[u8]) -> Option<f64> {
    match raw.first()? {
        b'-' | b'0'..=b'9' => std::str::from_utf8(raw).ok()?.parse().ok(),
        _ => None,
    }
}

/// A JSON number that is a non-negative integer fitting in u64 (`1.0e3` included).
pub fn as_u64(raw: &[u8]) -> Option<u64> {
    if raw.iter().all(u8::is_ascii_digit) {
        return std::str::from_utf8(raw).ok()?.parse().ok();
    }
    let f = as_f64(raw)?;
    (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
}

/// A JSON `true`/`false`.
pub fn as_bool(raw: &[u8]) -> Option<bool> {
    match raw {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    }
}

/// What kind of JSON value `raw` is, by its first byte ("string", "number", ...).
pub fn kind_name(raw: &[u8]) -> &'static str {
    match raw.first() {
        Some(b'"') => "string",
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        Some(_) => "number",
        None => "nothing",
    }
}

/// Strings skipped by the stepwise loop the block loop replaced.
#[cfg(any(test, feature = "reference"))]
struct Stepwise;

#[cfg(any(test, feature = "reference"))]
impl Strings for Stepwise {
    fn skip(&mut self, b: &[u8], i: usize) -> Result<usize, Error> {
        strings::skip_plain(b, i + 1)
    }
}

/// The scanner with strings skipped escape by escape, as before the 64-byte block loop: the
/// reference the fuzz target `scan_equiv` and the tests hold the public entry points to (the
/// same verdicts, errors and spans). Built for tests and with the `reference` feature only.
#[cfg(any(test, feature = "reference"))]
pub mod reference {
    use super::{object_members, skip_value_with, validate_with, Error, Member, Raw, Stepwise};

    /// [`super::skip_value`], strings stepped escape by escape.
    pub fn skip_value(b: &[u8], i: usize) -> Result<usize, Error> {
        skip_value_with(b, i, &mut Stepwise)
    }

    /// [`super::validate`], strings stepped escape by escape.
    pub fn validate(b: &[u8]) -> Result<Raw<'_>, Error> {
        validate_with(b, &mut Stepwise)
    }

    /// [`super::scan_members_nested`], strings stepped escape by escape.
    pub fn scan_members_nested<'a>(
        b: &'a [u8],
        i: usize,
        open: impl Fn(&[u8]) -> bool,
        mut f: impl FnMut(Member, &'a [u8], Raw<'a>),
    ) -> Result<Raw<'a>, Error> {
        let open = |depth: usize, key: &[u8]| depth == 0 && open(key);
        let end = object_members(b, i, 0, &open, &mut f, &mut Stepwise)?;
        Ok(Raw(&b[i..end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lone surrogate escapes stay apart in the key, as JavaScript strings do; pairs, other
    /// escapes and text written plainly key as their decoded text, and invalid UTF-8 written
    /// in the file as U+FFFD (Node decodes the file so); the key shows as the decoded text.
    #[test]
    fn string_key_keeps_lone_surrogates_apart_and_is_the_text_otherwise() {
        let key = |b: &[u8]| string_key(b).into_owned();
        let (d800, d801, dc00) = (key(br"\ud800"), key(br"\uD801"), key(br"\udc00"));
        assert_eq!(d800, b"\xED\xA0\x80");
        assert_eq!(d801, b"\xED\xA0\x81");
        assert_eq!(dc00, b"\xED\xB0\x80");
        assert_eq!(key(br"\udfff"), b"\xED\xBF\xBF");
        let fffd = "\u{FFFD}".as_bytes();
        assert_eq!(key(fffd), fffd);
        assert_eq!(key(br"\ufffd"), fffd);
        assert_ne!(d800, fffd);
        // Invalid UTF-8 in the file, even the bytes of an encoded surrogate, is U+FFFD.
        assert_eq!(key(b"\xED\xA0\x80"), "\u{FFFD}\u{FFFD}\u{FFFD}".as_bytes());
        assert_eq!(key(b"a\xFF\\u0041"), "a\u{FFFD}A".as_bytes());
        assert_eq!(key(b"\xC3\\u00a9"), "\u{FFFD}\u{a9}".as_bytes());
        // A pair is one character; a lead before another lead is lone.
        assert_eq!(key(br"\ud83d\ude00"), "\u{1F600}".as_bytes());
        assert_eq!(
            key(br"x\ud800\ud83d\ude00\udc00y"),
            [
                &b"x\xED\xA0\x80"[..],
                "\u{1F600}".as_bytes(),
                b"\xED\xB0\x80y"
            ]
            .concat()
        );
        let bodies: [&[u8]; 12] = [
            b"",
            b"a1b2c3d4",
            br"m\u0065ssage",
            br#"q\"\\\/\b\f\n\r\t"#,
            "caf\u{e9}".as_bytes(),
            b"\xff\xfe",
            br"\ud83d\ude00",
            b"\\u00e9\xff",
            br"a\ud800",
            br"\udc00\ud800",
            br"\ud800\u0041",
            b"\xF0\x9F\\n",
        ];
        for body in bodies {
            let text = decode_string_body(body);
            let k = string_key(body);
            assert_eq!(key_text(&k), text, "{body:?}");
            if !body.windows(3).any(|w| w == br"\ud" || w == br"\uD") {
                assert_eq!(&*k, text.as_bytes(), "{body:?}");
            }
            let quoted = [&b"\""[..], body, b"\""].concat();
            let raw = validate(&quoted).unwrap();
            assert_eq!(raw.as_key().as_deref(), Some(&*k));
            assert_eq!(raw.key_of(&raw.as_str().unwrap()), k);
        }
        assert_eq!(key_text(b"\xED\xA0\x80\xED\xBF\xBFz"), "\u{FFFD}\u{FFFD}z");
        assert!(matches!(key_text(b"plain"), Cow::Borrowed("plain")));
        assert_eq!(as_key(b"3"), None);
    }

    fn valid(s: &str) -> bool {
        let b = s.as_bytes();
        let by_skip = matches!(skip_value(b, 0), Ok(end) if skip_ws(b, end) == b.len());
        assert_eq!(validate(b).is_ok(), by_skip, "{s}");
        by_skip
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for s in [
            r#"{}"#,
            r#"{"a":1,"b":[1,2,{"c":null}],"d":"x\"y\\z\u00e9\ud83d\ude00"}"#,
            r#"[ -0.5e+10 , 0 , 1E3 , true , false ]"#,
            r#""lone \ud800 surrogate""#,
            "\"caf\u{e9}\"",
            r#"{"a" : { } , "b" : [ ] }"#,
        ] {
            assert!(valid(s), "{s}");
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for s in [
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"[1 2]"#,
            r#"{"a":"\*"}"#,
            r#"{"a":"\u12"}"#,
            "{\"a\":\"tab\there\"}",
            r#"01"#,
            r#"1."#,
            r#"-"#,
            r#"{"a":tru}"#,
            r#"{"a":1"#,
            r#"[[[["#,
            r#"{1:2}"#,
            r#"nul"#,
        ] {
            assert!(!valid(s), "{s}");
        }
    }

    /// Issue 19, item 7: any depth is valid (as `JSON.parse` takes it), without recursion;
    /// the kinds of the open containers are still checked at every depth, in place and
    /// spilled alike.
    #[test]
    fn item_7_any_nesting_depth_is_accepted() {
        for n in [1, 63, 64, 65, 1023, 1024, 1025, 1100, 5000, 1_000_000] {
            let arrays = format!("{}{}", "[".repeat(n), "]".repeat(n));
            assert!(valid(&arrays), "{n} arrays");
            let mixed: String = (0..n)
                .map(|k| if k % 3 == 0 { "{\"a\":" } else { "[" })
                .collect();
            let closed: String = (0..n)
                .rev()
                .map(|k| if k % 3 == 0 { "}" } else { "]" })
                .collect();
            assert!(valid(&format!("{mixed}1{closed}")), "{n} mixed");
            // The wrong closer at the deepest level, or one too few, is still an error.
            let wrong: String = (0..n)
                .rev()
                .map(|k| if k % 3 == 0 { "]" } else { "}" })
                .collect();
            assert!(
                !valid(&format!("{mixed}1{wrong}")),
                "{n} mixed, wrong closers"
            );
            assert!(
                !valid(&format!("{mixed}1{}", &closed[1..])),
                "{n} mixed, unclosed"
            );
        }
        // Nested under a member a reader opens: the same verdict as the flat scan.
        for n in [1022, 1023, 1024, 1025, 100_000] {
            let line = format!(
                r#"{{"message":{{"a":{}{}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            );
            let b = line.as_bytes();
            let flat = scan_members(b, 0, |_, _| {});
            let nested = scan_members_nested(b, 0, |k| k == b"message", |_, _, _| {});
            assert_eq!(flat, nested, "{n} arrays");
            assert!(flat.is_ok(), "{n} arrays");
        }
    }

    #[test]
    fn scans_top_level_members_raw() {
        let line = br#"{"type":"message","id":"ab\u0063","n":12,"m":{"x":[1]}}"#;
        let mut seen = vec![];
        let object = scan_members(line, 0, |k, v| seen.push((k, v))).unwrap();
        assert_eq!(object, &line[..]);
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[1].1, br#""ab\u0063""#);
        assert_eq!(seen[1].1.as_str().unwrap(), "abc");
        assert_eq!(seen[2].1.as_u64(), Some(12));
        assert_eq!(seen[3].1, br#"{"x":[1]}"#);
        assert_eq!(seen[3].1.get("x").map(Raw::bytes), Some(&b"[1]"[..]));
        assert_eq!(object.get("m"), Some(seen[3].1));
    }

    #[test]
    fn validates_a_whole_text() {
        let raw = validate(b" \t{\"a\": [1, \"b\", null] }\r\n").unwrap();
        assert_eq!(raw, br#"{"a": [1, "b", null] }"#);
        let mut elements = vec![];
        raw.get("a").unwrap().for_each_element(|e| elements.push(e));
        assert_eq!(elements, [&b"1"[..], b"\"b\"", b"null"]);
        assert!(elements[2].is_null() && !elements[1].is_null());
        assert_eq!(elements[1].kind_name(), "string");
        let glued = validate(b"{} {}").unwrap_err();
        assert_eq!((glued.kind, glued.pos), (ErrorKind::Unexpected, 3));
        assert_eq!(value_at(b"{} {}", 0), Ok(Raw(b"{}")));
        assert_eq!(value_at(b" {}", 0).unwrap_err().kind, ErrorKind::Unexpected);
        assert_eq!(validate(b"  ").unwrap_err().kind, ErrorKind::Eof);
        assert_eq!(
            format!("{:?}", validate(b"\"\xff\"").unwrap()),
            "Raw(\"\\\"\u{fffd}\\\"\")"
        );
    }

    #[test]
    fn raw_walkers_keep_the_last_of_repeated_keys_and_skip_non_containers() {
        let raw = validate(br#"{"id":"a","i\u0064":"b","x":{}}"#).unwrap();
        assert_eq!(raw.get("id"), Some(Raw(br#""b""#)));
        assert_eq!(raw.get("nope"), None);
        let mut keys = vec![];
        raw.for_each_field(|k, _| keys.push(k));
        assert_eq!(keys, [&b"id"[..], br"i\u0064", b"x"]);
        let string = raw.get("id").unwrap();
        string.for_each_field(|_, _| panic!("a string has no members"));
        string.for_each_element(|_| panic!("a string has no elements"));
        assert_eq!(string.get("id"), None);
    }

    #[test]
    fn decodes_escapes_and_surrogates() {
        assert_eq!(
            as_str(br#""a\nb\u00e9\ud83d\ude00""#).unwrap(),
            "a\nb\u{e9}\u{1F600}"
        );
        assert_eq!(as_str(br#""x\ud800y""#).unwrap(), "x\u{FFFD}y");
        assert!(key_is(br"\u0069d", "id"));
    }

    #[test]
    fn string_stop_paths_agree_with_a_plain_loop() {
        let mut rng = pi_jsonl_gen::Rng::new(3);
        let alphabet = b"ab \"\\\x00\x1f\x20\x7f\x80\xc3\xa9\xff\t\n";
        for _ in 0..20_000 {
            let len = rng.below(200) as usize;
            let mut v: Vec<u8> = (0..len).map(|_| b'x').collect();
            for _ in 0..rng.below(4) {
                if len > 0 {
                    let at = rng.below(len as u64) as usize;
                    v[at] = *rng.pick(alphabet);
                }
            }
            let from = if len > 0 {
                rng.below(len as u64) as usize
            } else {
                0
            };
            let want = (from..v.len())
                .find(|&k| v[k] == b'"' || v[k] == b'\\' || v[k] < 0x20)
                .unwrap_or(v.len());
            assert_eq!(string_stop(&v, from), want, "{v:?} from {from}");
            assert_eq!(string_stop_swar(&v, from), want, "{v:?} from {from}");
        }
    }

    /// The grammar written as plainly as it reads, recursively and one byte at a time, with
    /// the scanner's errors (kind and place): what the scanner's structure (its container
    /// stack, the blanks looked for only where no expected byte is, digits eight at a time)
    /// is held to. Strings by the stepwise loop.
    fn plain_value(b: &[u8], i: usize) -> Result<usize, Error> {
        let eof_or = |i: usize| {
            if i >= b.len() {
                ErrorKind::Eof
            } else {
                ErrorKind::Unexpected
            }
        };
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        match b.get(i) {
            None => err(ErrorKind::Eof, i),
            Some(b'"') => strings::skip_plain(b, i + 1),
            Some(&open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                let mut i = skip_ws(b, i + 1);
                if b.get(i) == Some(&close) {
                    return Ok(i + 1);
                }
                loop {
                    if open == b'{' {
                        if b.get(i) != Some(&b'"') {
                            return err(eof_or(i), i);
                        }
                        i = skip_ws(b, strings::skip_plain(b, i + 1)?);
                        if b.get(i) != Some(&b':') {
                            return err(eof_or(i), i);
                        }
                        i = skip_ws(b, i + 1);
                    }
                    i = skip_ws(b, plain_value(b, i)?);
                    match b.get(i) {
                        Some(b',') => i = skip_ws(b, i + 1),
                        Some(&c) if c == close => return Ok(i + 1),
                        None => return err(ErrorKind::Eof, i),
                        Some(_) => return err(ErrorKind::Unexpected, i),
                    }
                }
            }
            Some(b't' | b'f' | b'n') => {
                let word: &[u8] = match b[i] {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if b[i..].starts_with(word) {
                    Ok(i + word.len())
                } else {
                    err(ErrorKind::Unexpected, i)
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                let mut i = i + usize::from(b[i] == b'-');
                match b.get(i) {
                    Some(b'0') => i += 1,
                    Some(b'1'..=b'9') => i = digits(i + 1),
                    _ => return err(ErrorKind::BadNumber, i),
                }
                if b.get(i) == Some(&b'.') {
                    let j = digits(i + 1);
                    if j == i + 1 {
                        return err(ErrorKind::BadNumber, j);
                    }
                    i = j;
                }
                if matches!(b.get(i), Some(b'e' | b'E')) {
                    i += 1;
                    if matches!(b.get(i), Some(b'+' | b'-')) {
                        i += 1;
                    }
                    let j = digits(i);
                    if j == i {
                        return err(ErrorKind::BadNumber, j);
                    }
                    i = j;
                }
                Ok(i)
            }
            Some(_) => err(ErrorKind::Unexpected, i),
        }
    }

    /// The scanner's structure against [`plain_value`]: `skip_value` from every byte that may
    /// start a value, `validate`, and the object scans (flat, nested and two levels deep, whose
    /// results are the object's) on generated session lines whole, cut short, with a byte
    /// changed, and with blanks put in anywhere (they are looked for only where no expected
    /// byte is), and on short texts of JSON's pieces in any order.
    #[test]
    fn structure_is_the_plain_grammar() {
        let mut data = Vec::new();
        pi_jsonl_gen::Gen::new(11)
            .session(&pi_jsonl_gen::Shape::v3(1 << 20), &mut data)
            .unwrap();
        let mut rng = pi_jsonl_gen::Rng::new(12);
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for line in data.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            texts.push(line.to_vec());
            texts.push(line[..rng.below(line.len() as u64) as usize].to_vec());
            let mut changed = line.to_vec();
            let at = rng.below(line.len() as u64) as usize;
            changed[at] = *rng.pick(b"{}[],:\" 0-1e.+tfnx\\");
            texts.push(changed);
            // Blanks after structural bytes and before them, outside strings.
            let mut blank = Vec::new();
            let mut in_string = false;
            let mut escaped = false;
            for &c in line {
                let structural = !in_string && b"{}[],:".contains(&c);
                if structural && rng.below(3) == 0 {
                    blank.push(*rng.pick(b" \t\n\r"));
                }
                blank.push(c);
                if structural && rng.below(3) == 0 {
                    blank.extend(std::iter::repeat_n(b' ', rng.below(3) as usize + 1));
                }
                if in_string {
                    in_string = escaped || c != b'"';
                    escaped = !escaped && c == b'\\';
                } else {
                    in_string = c == b'"';
                }
            }
            texts.push(blank);
        }
        #[rustfmt::skip]
        let pieces: [&[u8]; 22] = [
            b"{", b"}", b"[", b"]", b",", b":", b" ", b"\t", b"\"k\"", b"\"a\\\"b\"", b"0", b"-",
            b"12345678901", b"1.5", b"2e+7", b"1.", b"1e", b"true", b"fals", b"null", b"\"",
            b"\n",
        ];
        for _ in 0..30_000 {
            let n = rng.below(14) as usize;
            let mut t = Vec::new();
            for _ in 0..n {
                t.extend_from_slice(pieces[rng.below(pieces.len() as u64) as usize]);
            }
            texts.push(t);
        }
        let mut compared = 0;
        for t in &texts {
            for i in 0..t.len().min(300) {
                if b"{[\"-0123456789tfn ".contains(&t[i]) || i == 0 {
                    assert_eq!(
                        skip_value(t, i),
                        plain_value(t, i),
                        "{:?} at {i}",
                        String::from_utf8_lossy(t)
                    );
                    compared += 1;
                }
            }
            let start = skip_ws(t, 0);
            let whole = plain_value(t, start).and_then(|end| match skip_ws(t, end) {
                rest if rest == t.len() => Ok(end),
                rest => err(ErrorKind::Unexpected, rest),
            });
            assert_eq!(
                validate(t).map(|r| r.len() + start),
                whole,
                "{:?}",
                String::from_utf8_lossy(t)
            );
            // The object scans: an object's result, or the error, at its first byte.
            let object = match t.get(start) {
                Some(b'{') => plain_value(t, start),
                _ => err(ErrorKind::Unexpected, start),
            };
            let end = |r: Result<Raw, Error>| r.map(|raw| start + raw.len());
            assert_eq!(end(scan_members(t, start, |_, _| {})), object);
            assert_eq!(
                end(scan_members_nested(t, start, |_| true, |_, _, _| {})),
                object
            );
            assert_eq!(
                end(scan_members_deep(t, start, |_, _| true, |_, _, _| {})),
                object
            );
        }
        assert!(compared > 100_000, "{compared}");
    }

    /// The public entry points (64-byte string loop) against [`reference`] (the stepwise
    /// loop): the same results, errors and member spans on generated session lines, whole
    /// and cut short or with a byte changed (the fuzz target `scan_equiv` does the same on
    /// any bytes).
    #[test]
    fn block_strings_give_what_the_stepwise_loop_gave() {
        let mut data = Vec::new();
        pi_jsonl_gen::Gen::new(7)
            .session(&pi_jsonl_gen::Shape::v3(2 << 20), &mut data)
            .unwrap();
        let mut rng = pi_jsonl_gen::Rng::new(8);
        let specials = b"\\\\\"\"\x00\x1fu0/n ";
        let mut compared = 0;
        for line in data.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            let mut variants = vec![
                line.to_vec(),
                line[..rng.below(line.len() as u64) as usize].to_vec(),
            ];
            let mut changed = line.to_vec();
            let at = rng.below(line.len() as u64) as usize;
            changed[at] = *rng.pick(specials);
            variants.push(changed);
            for v in &variants {
                let spans = |r: Result<Raw, Error>| r.map(|raw| (raw.as_ptr(), raw.len()));
                assert_eq!(spans(validate(v)), spans(reference::validate(v)));
                type Seen<'a> = Vec<(Member, &'a [u8], Raw<'a>)>;
                let (mut new, mut old): (Seen, Seen) = (vec![], vec![]);
                let open = |k: &[u8]| k == b"message";
                let a = scan_members_nested(v, 0, open, |m, k, r| new.push((m, k, r)));
                let b = reference::scan_members_nested(v, 0, open, |m, k, r| old.push((m, k, r)));
                assert_eq!(spans(a), spans(b));
                let place = |s: &Seen| -> Vec<_> {
                    s.iter()
                        .map(|(m, k, r)| (*m, k.as_ptr(), k.len(), r.as_ptr(), r.len()))
                        .collect()
                };
                assert_eq!(place(&new), place(&old));
                compared += 1;
            }
        }
        assert!(compared > 1000, "{compared} lines");
    }

    /// The noting scan: the same verdict and members as the scan it notes for, and a note
    /// for exactly the strings not done with in the first 16 bytes (keys too), each with
    /// what `string_written` finds of it. Generated sessions' lines, cut and changed, and
    /// lines of strings written every way (`\/`, `\u` escapes written so and not).
    #[test]
    fn noting_scan_notes_every_long_string_with_its_measure() {
        let mut data = Vec::new();
        pi_jsonl_gen::Gen::new(9)
            .session(&pi_jsonl_gen::Shape::v3(1 << 20), &mut data)
            .unwrap();
        let mut rng = pi_jsonl_gen::Rng::new(10);
        let pieces: [&[u8]; 9] = [
            b"text ",
            b"\\n",
            b"\\\\",
            b"\\\"",
            b"\\/",
            b"\\u001b",
            b"\\u001B",
            b"\\u00e9",
            b"\xc3\xa9",
        ];
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for line in data.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            lines.push(line.to_vec());
            lines.push(line[..rng.below(line.len() as u64) as usize].to_vec());
            let mut changed = line.to_vec();
            let at = rng.below(line.len() as u64) as usize;
            changed[at] = *rng.pick(b"\\\"/u\x01");
            lines.push(changed);
        }
        for n in 0..3_000 {
            let mut line = br#"{"message":{"content":[{"type":"text","text":""#.to_vec();
            for _ in 0..n % 200 {
                line.extend_from_slice(pieces[rng.below(9) as usize]);
            }
            line.extend_from_slice(br#""}],"a":"x"},"b":"0123456789abcdefg"}"#);
            lines.push(line);
        }
        let (mut noted, mut written) = (0, 0);
        for v in &lines {
            let open = |depth: usize, k: &[u8]| depth == 0 && k == b"message";
            type Seen<'a> = Vec<(Member, &'a [u8], Raw<'a>)>;
            let (mut plain, mut noting): (Seen, Seen) = (vec![], vec![]);
            let mut notes = Vec::new();
            let a = scan_members_deep(v, 0, open, |m, k, r| plain.push((m, k, r)));
            let b =
                scan_members_deep_noting(v, 0, open, |m, k, r| noting.push((m, k, r)), &mut notes);
            let spans = |r: Result<Raw, Error>| r.map(|raw| (raw.as_ptr(), raw.len()));
            assert_eq!(spans(a), spans(b));
            if a.is_err() {
                continue;
            }
            assert_eq!(plain.len(), noting.len());
            for (x, y) in plain.iter().zip(&noting) {
                assert_eq!(
                    (x.0, x.1.as_ptr(), x.2.as_ptr()),
                    (y.0, y.1.as_ptr(), y.2.as_ptr())
                );
            }
            // Every string of the valid object, in order: outside strings no quote occurs.
            let mut want = Vec::new();
            let mut i = 0;
            while let Some(q) = v[i..].iter().position(|&c| c == b'"') {
                let open = i + q;
                let end = strings::skip_plain(v, open + 1).expect("a valid string");
                let stop = string_stop(v, open + 1);
                if !(v[stop] == b'"' && stop <= open + 16) {
                    let (e, w) = string_written(v, open);
                    assert_eq!(e, end);
                    want.push(LongString {
                        open,
                        end,
                        written: w,
                    });
                    written += usize::from(w.is_some());
                }
                i = end;
            }
            assert_eq!(notes, want, "{}", String::from_utf8_lossy(v));
            noted += notes.len();
        }
        assert!(
            noted > 6_000 && written > 4_000,
            "{noted} noted, {written} written"
        );
    }

    /// The eight-bytes-a-step digit run against a byte loop: runs of every length from every
    /// start, ended by every byte value (those next to the digits, `/` and `:`, the ones whose
    /// carry in the step could flag the byte above, 0x8a–0xff).
    #[test]
    fn digit_runs_end_where_a_byte_loop_ends_them() {
        for end in 0..=255u8 {
            for run in 0..20 {
                for before in 0..3 {
                    let mut b = vec![b'x'; before];
                    b.extend((0..run).map(|k| b'0' + (k * 7 % 10) as u8));
                    b.push(end);
                    b.extend_from_slice(b"99999999");
                    let want = (before..b.len())
                        .find(|&k| !b[k].is_ascii_digit())
                        .unwrap_or(b.len());
                    assert_eq!(skip_digits(&b, before), want, "{b:?}");
                    // Cut right after the run: the end of the bytes ends it.
                    let cut = &b[..before + run];
                    assert_eq!(skip_digits(cut, before), cut.len(), "{cut:?}");
                }
            }
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(as_u64(b"123"), Some(123));
        assert_eq!(as_u64(b"1e3"), Some(1000));
        assert_eq!(as_u64(b"-1"), None);
        assert_eq!(as_u64(br#""5""#), None);
        assert_eq!(as_f64(b"0.25"), Some(0.25));
    }
}
