//! [`Raw`], the text of one value the validating scanner accepted, and the walkers that read
//! such a text a second time without checking it again.
//!
//! The walkers count brackets and jump from quote to quote; on text that is not valid JSON
//! their answers mean nothing. That is why they take a [`Raw`], which only the scanner makes
//! (its field is visible to the `json` module alone): a caller cannot hand them other bytes.

use super::{as_bool, as_f64, as_key, as_str, as_u64, key_is, kind_name, skip_ws, Noted};
use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

/// The exact text of one JSON value that the validating scanner accepted: what
/// [`validate`](super::validate) returns and [`scan_members`](super::scan_members) hands out,
/// and what this type's walkers hand out of it in turn. A newtype over the slice, passed and
/// returned as one.
///
/// It reads as bytes ([`Raw::bytes`], or through `Deref`: `raw.first()`, `raw.len()`,
/// `&raw[..]`) and compares with byte strings (`raw == b"null"`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Raw<'a>(pub(super) &'a [u8]);

impl<'a> Raw<'a> {
    /// The value's text, for as long as the scanned text lives.
    #[inline]
    pub fn bytes(self) -> &'a [u8] {
        self.0
    }

    /// The value of member `key` when this is an object (the last one when the key repeats,
    /// as `JSON.parse` keeps); `None` when there is none or this is not an object.
    #[inline]
    pub fn get(self, key: &str) -> Option<Raw<'a>> {
        last_member(self.0, key).map(Raw)
    }

    /// Calls `f(raw_key, value)` for each member in order when this is an object: `raw_key` is
    /// the key's text between its quotes, escapes undecoded (compare with
    /// [`key_is`](super::key_is)). Does nothing for other values.
    #[inline]
    pub fn for_each_field(self, mut f: impl FnMut(&'a [u8], Raw<'a>)) {
        each_field(self.0, |k, v| f(k, Raw(v)));
    }

    /// Calls `f` with each element in order when this is an array; does nothing otherwise.
    #[inline]
    pub fn for_each_element(self, mut f: impl FnMut(Raw<'a>)) {
        each_element(self.0, |v| f(Raw(v)));
    }

    /// Calls `f` with the members of each element that is an object, in order, when this is
    /// an array: each element is read once, where [`for_each_element`](Self::for_each_element)
    /// then [`for_each_field`](Self::for_each_field) read it twice. Elements that are not
    /// objects are passed over; members `f` leaves unread are skipped.
    pub fn for_each_object_element(self, f: impl FnMut(&mut Fields<'a>)) {
        self.for_each_object_element_noted(Noted::default(), f);
    }

    /// [`for_each_object_element`](Self::for_each_object_element), the long strings it passes
    /// over found in `noted` when they are there (their ends not looked for again).
    pub fn for_each_object_element_noted(
        self,
        noted: Noted<'a>,
        mut f: impl FnMut(&mut Fields<'a>),
    ) {
        let raw = self.0;
        elements(raw, |i| {
            if raw[i] != b'{' {
                return skip_valid_noted(raw, i, &noted);
            }
            let mut fields = Fields::new(raw, i);
            fields.noted = noted;
            f(&mut fields);
            fields.end()
        });
    }

    /// Calls `f` with each element in order when this is an array, as
    /// [`for_each_object_element`](Self::for_each_object_element) reads it: an object as its
    /// members (read once; members `f` leaves unread are skipped), any other value whole. Unlike
    /// that walker no element is passed over, so a writer can copy the array in its order.
    pub fn for_each_element_or_fields(self, mut f: impl FnMut(Element<'_, 'a>)) {
        let raw = self.0;
        elements(raw, |i| {
            if raw[i] != b'{' {
                let end = skip_valid(raw, i);
                if end > i {
                    f(Element::Other(Raw(&raw[i..end])));
                }
                return end;
            }
            let mut fields = Fields::new(raw, i);
            f(Element::Object(&mut fields));
            fields.end()
        });
    }

    /// Whether this is the JSON string `s`, escapes decoded (`"m\u0065ssage"` is `message`, as
    /// `JSON.parse` reads it). Compared byte for byte as written; a string that opens with
    /// another character than `s` and no backslash is told apart by that byte alone, and only
    /// a string with a backslash is decoded.
    #[inline]
    pub fn is_str(self, s: &str) -> bool {
        let b = self.0;
        let Some(&first) = s.as_bytes().first() else {
            return b == b"\"\"";
        };
        if b.get(1).is_none_or(|&c| c != first && c != b'\\') {
            return false;
        }
        if b.len() == s.len() + 2 && b[0] == b'"' && &b[1..b.len() - 1] == s.as_bytes() {
            return true;
        }
        b.contains(&b'\\') && self.as_str().is_some_and(|v| v == s)
    }

    /// `f` of the value's text as written; when that is `None` and the value is a string
    /// written with an escape, `f` of its text decoded between quotes, so a `match` on
    /// strings written without escapes (`b"\"message\""`) reads `"m\u0065ssage"` as
    /// `JSON.parse` does. A decoded text holding a quote or a backslash is equal to no string
    /// written without escapes. Only a value `f` does not take is looked at again.
    #[inline]
    pub fn read_as<T>(self, mut f: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
        if let Some(t) = f(self.0) {
            return Some(t);
        }
        let escaped = self.0.first() == Some(&b'"') && self.0.contains(&b'\\');
        escaped.then(|| f(&self.unescaped())).flatten()
    }

    /// The value's text as written, or, for a string written with an escape, its text
    /// decoded between quotes ([`read_as`](Self::read_as) for one comparison).
    pub fn unescaped(self) -> Cow<'a, [u8]> {
        if self.0.first() != Some(&b'"') || !self.0.contains(&b'\\') {
            return Cow::Borrowed(self.0);
        }
        let text = super::decode_string_body(&self.0[1..self.0.len() - 1]);
        let mut quoted = Vec::with_capacity(text.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(text.as_bytes());
        quoted.push(b'"');
        Cow::Owned(quoted)
    }

    /// The string, decoded ([`as_str`](super::as_str)); `None` when this is not a string.
    #[inline]
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        as_str(self.0)
    }

    /// The string's identity as JavaScript compares it ([`as_key`](super::as_key)): what an
    /// id is keyed by; `None` when this is not a string.
    #[inline]
    pub fn as_key(self) -> Option<Cow<'a, [u8]>> {
        as_key(self.0)
    }

    /// [`as_key`](Self::as_key) of this string when `text` is its [`as_str`](Self::as_str),
    /// already read: a text borrowed from the value (no escape, valid UTF-8) is its key, so
    /// only a string decoded into memory of its own is read again.
    #[inline]
    pub fn key_of(self, text: &Cow<'a, str>) -> Cow<'a, [u8]> {
        match text {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => self
                .as_key()
                .unwrap_or_else(|| Cow::Owned(s.as_bytes().to_vec())),
        }
    }

    /// [`as_u64`](super::as_u64) of this value.
    #[inline]
    pub fn as_u64(self) -> Option<u64> {
        as_u64(self.0)
    }

    /// [`as_f64`](super::as_f64) of this value.
    #[inline]
    pub fn as_f64(self) -> Option<f64> {
        as_f64(self.0)
    }

    /// [`as_bool`](super::as_bool) of this value.
    #[inline]
    pub fn as_bool(self) -> Option<bool> {
        as_bool(self.0)
    }

    /// Whether this is `null`.
    #[inline]
    pub fn is_null(self) -> bool {
        self.0 == b"null"
    }

    /// What kind of value this is ("string", "number", ...; [`kind_name`](super::kind_name)).
    #[inline]
    pub fn kind_name(self) -> &'static str {
        kind_name(self.0)
    }
}

impl Deref for Raw<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.0
    }
}

impl AsRef<[u8]> for Raw<'_> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.0
    }
}

impl<'a> From<Raw<'a>> for &'a [u8] {
    #[inline]
    fn from(raw: Raw<'a>) -> &'a [u8] {
        raw.0
    }
}

impl PartialEq<[u8]> for Raw<'_> {
    #[inline]
    fn eq(&self, other: &[u8]) -> bool {
        self.0 == other
    }
}

impl PartialEq<&[u8]> for Raw<'_> {
    #[inline]
    fn eq(&self, other: &&[u8]) -> bool {
        self.0 == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Raw<'_> {
    #[inline]
    fn eq(&self, other: &[u8; N]) -> bool {
        self.0 == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Raw<'_> {
    #[inline]
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.0 == *other
    }
}

/// The text, as far as it is UTF-8 (a value holds any bytes the scanner accepts).
impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Raw")
            .field(&String::from_utf8_lossy(self.0))
            .finish()
    }
}

/// `b[i]` is the opening quote of a string already validated; returns the index just past
/// its closing quote (`b.len()` when there is none). It jumps from quote to quote: a quote
/// ends the string unless an odd number of backslashes precedes it; with AVX2, whole blocks
/// of 64 bytes first (`strings::quote_in_blocks`). Unlike the validating scanner neither
/// stops at every escape, which is what makes a second look at validated text (a message's
/// members, a content array) cheap.
#[inline]
fn skip_valid_string(b: &[u8], i: usize) -> usize {
    short_valid_string(b, i).unwrap_or_else(|| long_valid_string(b, i))
}

/// [`skip_valid_string`], the end of a long string taken from `noted` when it is there.
#[inline]
fn skip_valid_string_noted(b: &[u8], i: usize, noted: &Noted<'_>) -> usize {
    short_valid_string(b, i)
        .or_else(|| Some(noted.find(b, i)?.0))
        .unwrap_or_else(|| long_valid_string(b, i))
}

/// The end of the string whose opening quote is `b[i]` when it ends within sixteen bytes of
/// it. Most strings read again are keys and short values: one step of `next_quote`, before
/// a block scan is set up (a quote right after a backslash is left to the full rule).
#[inline(always)]
fn short_valid_string(b: &[u8], i: usize) -> Option<usize> {
    let start = i + 1;
    let q = next_quote(&b[..b.len().min(start + 16)], start)?;
    (q == start || b[q - 1] != b'\\').then_some(q + 1)
}

/// [`skip_valid_string`] past its first sixteen bytes.
#[inline]
fn long_valid_string(b: &[u8], i: usize) -> usize {
    let start = i + 1;
    let mut from = start;
    #[cfg(target_arch = "x86_64")]
    if b.len() - start >= 64 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        match unsafe { super::strings::x86::quote_in_blocks_avx2(b, start) } {
            Ok(end) => return end,
            Err(rest) => from = rest,
        }
    }
    while let Some(q) = next_quote(b, from) {
        let backslashes = b[start..q]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return q + 1;
        }
        from = q + 1;
    }
    b.len()
}

/// Index of the first `"` at or after `i`. Inline sixteen bytes a step: most strings of a
/// message are short (keys, `type` values), where a `memchr` call costs more than it saves.
#[inline]
fn next_quote(b: &[u8], mut i: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        const W: usize = 16;
        // SAFETY: SSE2 is part of the x86-64 baseline; each load reads the 16 in-bounds
        // bytes of `chunk` and needs no alignment.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            while i + W <= b.len() {
                let chunk = &b[i..i + W];
                let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(x, quote)) as u32;
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += W;
            }
        }
    }
    b.get(i..)?.iter().position(|&c| c == b'"').map(|p| i + p)
}

/// The index just past the value at `b[i]` (no leading whitespace), for validated text:
/// brackets are counted, strings jumped over, nothing is checked. On text that is not valid
/// JSON it returns some index within `b` and never panics, but the result means nothing.
fn skip_valid(b: &[u8], i: usize) -> usize {
    skip_valid_noted(b, i, &Noted::default())
}

/// [`skip_valid`], the ends of long strings taken from `noted` when they are there.
#[inline]
fn skip_valid_noted(b: &[u8], i: usize, noted: &Noted<'_>) -> usize {
    match b.get(i) {
        Some(b'"') => skip_valid_string_noted(b, i, noted),
        Some(b'{' | b'[') => skip_valid_container(b, i, noted),
        _ => skip_valid_scalar(b, i),
    }
}

/// [`skip_valid`] of a number or literal: up to the first byte that ends one (`,` `:` a
/// bracket or a blank; a quote, in text that is not valid, starts a string skipped with it).
fn skip_valid_scalar(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return skip_valid_string(b, i),
            b'{' | b'[' => return skip_valid_container(b, i, &Noted::default()),
            b'}' | b']' | b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// [`skip_valid`] of the object or array whose bracket is `b[i]`: from one quote or bracket
/// to the next ([`next_structural`], sixteen bytes a step), strings jumped over, brackets
/// counted; the index past the bracket that closes it. The ends of long strings are taken
/// from `noted` when they are there.
fn skip_valid_container(b: &[u8], mut i: usize, noted: &Noted<'_>) -> usize {
    let mut depth = 0usize;
    while let Some(at) = next_structural(b, i) {
        match b[at] {
            b'"' => i = skip_valid_string_noted(b, at, noted),
            b'{' | b'[' => {
                depth += 1;
                i = at + 1;
            }
            _ => {
                // `}` or `]`.
                depth = depth.saturating_sub(1);
                i = at + 1;
                if depth == 0 {
                    return i;
                }
            }
        }
    }
    b.len()
}

/// Index of the first quote or bracket (`"` `{` `}` `[` `]`) at or after `i`, sixteen bytes a
/// step: a bracket ORed with 0x20 is `{` or `}` (only `[` `]` `{` `}` are), so three compares
/// find all five.
#[inline]
fn next_structural(b: &[u8], mut i: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        const W: usize = 16;
        // SAFETY: SSE2 is part of the x86-64 baseline; each load reads the 16 in-bounds
        // bytes of `chunk` and needs no alignment.
        unsafe {
            let (quote, case, open, close) = (
                _mm_set1_epi8(b'"' as i8),
                _mm_set1_epi8(0x20),
                _mm_set1_epi8(b'{' as i8),
                _mm_set1_epi8(b'}' as i8),
            );
            while i + W <= b.len() {
                let chunk = &b[i..i + W];
                let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let folded = _mm_or_si128(x, case);
                let hits = _mm_or_si128(
                    _mm_cmpeq_epi8(x, quote),
                    _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)),
                );
                let m = _mm_movemask_epi8(hits) as u32;
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += W;
            }
        }
    }
    b.get(i..)?
        .iter()
        .position(|&c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))
        .map(|p| i + p)
}

/// One element of an array, as [`Raw::for_each_element_or_fields`] hands it out.
pub enum Element<'f, 'a> {
    /// An object: its members.
    Object(&'f mut Fields<'a>),
    /// Any other value.
    Other(Raw<'a>),
}

/// The members of a validated object, one at a time ([`Raw::for_each_object_element`]): the
/// raw key (between its quotes, escapes undecoded) and the value. Strings are jumped over and
/// brackets counted ([`skip_valid`]); it stops quietly at anything unexpected.
pub struct Fields<'a> {
    b: &'a [u8],
    /// At the next key's quote, or where the members stopped.
    i: usize,
    done: bool,
    /// Where the ends of the long strings of the values are found, when there.
    noted: Noted<'a>,
}

impl<'a> Fields<'a> {
    /// The members of the object whose `{` is `b[open]`.
    fn new(b: &'a [u8], open: usize) -> Fields<'a> {
        Fields {
            b,
            i: skip_ws(b, open + 1),
            done: false,
            noted: Noted::default(),
        }
    }

    /// The index just past the object's `}` (where the members stopped, on text that is not
    /// valid), the members not yet read passed over.
    fn end(mut self) -> usize {
        for _ in &mut self {}
        self.i + usize::from(self.b.get(self.i) == Some(&b'}'))
    }
}

impl<'a> Fields<'a> {
    /// The next member, as [`Iterator::next`] gives it, and when its value is a string and
    /// `count(raw_key)` says so, the characters and line feeds of its text
    /// ([`string_counts`](super::string_counts), for text that is valid UTF-8): the string's
    /// end is found as its text is counted, where skipping it and counting after would read
    /// it twice.
    pub fn next_counted(
        &mut self,
        count: impl FnOnce(&[u8]) -> bool,
    ) -> Option<(&'a [u8], Raw<'a>, Option<super::TextCounts>)> {
        self.member(|key, b, i| count(key).then(|| super::string_counts(b, i)))
    }

    /// The next member, as [`Iterator::next`] gives it, and when its value is a string and
    /// `check(raw_key)` says so, whether its text is written as a minimal writer writes it
    /// and its length ([`string_written`](super::string_written)): the string's end is found
    /// as it is checked, where skipping it and checking after would read it twice.
    /// A string the validating scan noted (where these fields were read with notes:
    /// [`Raw::for_each_object_element_noted`]) is not read again.
    #[allow(clippy::type_complexity)]
    pub fn next_written(
        &mut self,
        check: impl FnOnce(&[u8]) -> bool,
    ) -> Option<(&'a [u8], Raw<'a>, Option<Option<usize>>)> {
        let noted = self.noted;
        self.member(|key, b, i| check(key).then(|| noted.string_written(b, i)))
    }

    /// The next member; when its value is a string, `measure(key, bytes, at)` may find the
    /// string's end (the index past its closing quote) and measure it in the same pass.
    #[inline]
    fn member<T>(
        &mut self,
        measure: impl FnOnce(&[u8], &'a [u8], usize) -> Option<(usize, T)>,
    ) -> Option<(&'a [u8], Raw<'a>, Option<T>)> {
        let b = self.b;
        let mut i = self.i;
        if self.done || b.get(i) != Some(&b'"') {
            self.done = true;
            return None;
        }
        self.done = true;
        let key_end = skip_valid_string(b, i);
        let key = b.get(i + 1..key_end.saturating_sub(1))?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if i >= b.len() {
            return None;
        }
        let measured = match b[i] {
            b'"' => measure(key, b, i),
            _ => None,
        };
        let (end, measure) = match measured {
            Some((end, m)) => (end, Some(m)),
            None => (skip_valid_noted(b, i, &self.noted), None),
        };
        let value = Raw(&b[i..end]);
        i = skip_ws(b, end);
        self.i = i;
        if b.get(i) == Some(&b',') {
            self.i = skip_ws(b, i + 1);
            self.done = false;
        }
        Some((key, value, measure))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a [u8], Raw<'a>);

    fn next(&mut self) -> Option<(&'a [u8], Raw<'a>)> {
        self.member(|_, _, _| None::<(usize, ())>)
            .map(|(key, value, _)| (key, value))
    }
}

/// The members of the validated object `b` (which starts with `{`).
fn scan_valid_object<'a>(b: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8])) {
    for (key, value) in Fields::new(b, 0) {
        f(key, value.0);
    }
}

/// The elements of the validated array `raw`: `element(i)` is given the index of each one's
/// first byte and returns the index just past it. Nothing when `raw` is not an array.
fn elements(raw: &[u8], mut element: impl FnMut(usize) -> usize) {
    if raw.first() != Some(&b'[') {
        return;
    }
    let mut i = skip_ws(raw, 1);
    while i < raw.len() && raw[i] != b']' {
        let end = element(i);
        if end <= i {
            return;
        }
        i = skip_ws(raw, end);
        if raw.get(i) != Some(&b',') {
            return;
        }
        i = skip_ws(raw, i + 1);
    }
}

/// Calls `f` with the text of each element of the validated array `raw`; nothing when `raw`
/// is not an array.
fn each_element<'a>(raw: &'a [u8], mut f: impl FnMut(&'a [u8])) {
    elements(raw, |i| {
        let end = skip_valid(raw, i);
        if end > i {
            f(&raw[i..end]);
        }
        end
    });
}

/// Calls `f(raw_key, raw_value)` for each member of the validated object `raw`; nothing when
/// `raw` is not an object.
fn each_field<'a>(raw: &'a [u8], f: impl FnMut(&'a [u8], &'a [u8])) {
    if raw.first() == Some(&b'{') {
        scan_valid_object(raw, f);
    }
}

/// The value of member `key` of the validated object `raw` (the last one, as `JSON.parse`
/// keeps).
fn last_member<'a>(raw: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let mut found = None;
    each_field(raw, |k, v| {
        if key_is(k, key) {
            found = Some(v);
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::{skip_valid, skip_valid_string, Raw};

    type Members = Vec<Vec<(Vec<u8>, Vec<u8>)>>;

    /// A string written with escapes compares as its decoded text, as `JSON.parse` reads it;
    /// other values and strings without a backslash are their text as written.
    #[test]
    fn strings_compare_decoded() {
        let v = |t: &'static str| super::super::validate(t.as_bytes()).unwrap();
        for (text, plain, is_message) in [
            (r#""message""#, r#""message""#, true),
            (r#""m\u0065ssage""#, r#""message""#, true),
            (
                r#""\u006d\u0065\u0073\u0073\u0061\u0067\u0065""#,
                r#""message""#,
                true,
            ),
            (r#""mess\"age""#, r#""mess"age""#, false),
            (r#""message ""#, r#""message ""#, false),
            ("7", "7", false),
            (r#"["message"]"#, r#"["message"]"#, false),
        ] {
            assert_eq!(&*v(text).unescaped(), plain.as_bytes(), "{text}");
            assert_eq!(v(text).is_str("message"), is_message, "{text}");
        }
        assert!(v(r#""""#).is_str(""));
        assert!(!v(r#""x""#).is_str("") && !v("0").is_str("") && !v(r#""""#).is_str("x"));
    }

    /// Each object element's members, read in one pass and read element by element.
    fn members_both_ways(raw: Raw<'_>) -> (Members, Members) {
        let mut one_pass = vec![];
        raw.for_each_object_element(|fields| {
            one_pass.push(fields.map(|(k, v)| (k.to_vec(), v.to_vec())).collect());
        });
        let mut twice = vec![];
        raw.for_each_element(|e| {
            if e.first() == Some(&b'{') {
                let mut m = vec![];
                e.for_each_field(|k, v| m.push((k.to_vec(), v.to_vec())));
                twice.push(m);
            }
        });
        (one_pass, twice)
    }

    /// Every element in order, objects as their members read in one pass, and as read element
    /// by element.
    #[test]
    fn elements_or_fields_keep_every_element_in_order() {
        use super::Element;
        type Items = Vec<Result<Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>>>;
        let texts = [
            r#"[]"#,
            r#"[ {} , "s" ,1,{"a":[1,{"b":"}"}]} , [{"x":1}], null, {"t":"\"{"}, "\u0041"]"#,
            r#"["only", "strings"]"#,
            r#"[{"k":"v"},{"k":"w","n":2}]"#,
            r#"{"not":"an array"}"#,
            r#"7"#,
        ];
        for text in texts {
            let raw = crate::json::validate(text.as_bytes()).expect("valid");
            let mut one_pass: Items = vec![];
            raw.for_each_element_or_fields(|el| {
                one_pass.push(match el {
                    Element::Object(fields) => {
                        Ok(fields.map(|(k, v)| (k.to_vec(), v.to_vec())).collect())
                    }
                    Element::Other(v) => Err(v.to_vec()),
                })
            });
            let mut twice: Items = vec![];
            raw.for_each_element(|e| {
                twice.push(if e.first() == Some(&b'{') {
                    let mut m = vec![];
                    e.for_each_field(|k, v| m.push((k.to_vec(), v.to_vec())));
                    Ok(m)
                } else {
                    Err(e.to_vec())
                })
            });
            assert_eq!(one_pass, twice, "{text}");
        }
        // Members left unread are skipped: the next element is still found.
        let raw = crate::json::validate(br#"[{"a":"x","b":[1,2]},"after"]"#).expect("valid");
        let mut seen = vec![];
        raw.for_each_element_or_fields(|el| match el {
            Element::Object(fields) => seen.push(fields.next().map(|(k, _)| k.to_vec())),
            Element::Other(v) => seen.push(Some(v.to_vec())),
        });
        assert_eq!(seen, [Some(b"a".to_vec()), Some(b"\"after\"".to_vec())]);
    }

    /// A member and its string's measure, as `Fields::next_counted` and `next_written` give it.
    type Measured<'a, T> = Option<(&'a [u8], Raw<'a>, Option<T>)>;

    /// Members read with their strings measured by `next` (all but member `n`) are the members
    /// read plainly, and each string's measure is `want` of its body.
    fn measured_members_are_the_members<T: PartialEq + std::fmt::Debug>(
        texts: &[&str],
        next: for<'a> fn(&mut super::Fields<'a>) -> Measured<'a, T>,
        want: fn(&[u8]) -> T,
    ) {
        for text in texts {
            let raw = crate::json::validate(text.as_bytes()).expect("valid");
            let mut plain = vec![];
            raw.for_each_field(|k, v| plain.push((k.to_vec(), v.to_vec())));
            let mut measured = vec![];
            let mut fields = super::Fields::new(raw.bytes(), 0);
            while let Some((k, v, m)) = next(&mut fields) {
                let expected =
                    (v.first() == Some(&b'"') && k != b"n").then(|| want(&v[1..v.len() - 1]));
                assert_eq!(m, expected, "{text}: {}", String::from_utf8_lossy(k));
                measured.push((k.to_vec(), v.to_vec()));
            }
            assert_eq!(measured, plain, "{text}");
        }
    }

    /// Members read with their strings counted are the members read plainly, and each string's
    /// counts are its text's.
    #[test]
    fn counted_members_are_the_members() {
        let texts = [
            r#"{}"#,
            r#"{"type":"text","text":"a \" } ] { [ \\ \n\u000a","n":1,"o":{"s":"\""},"e":""}"#,
            r#"{ "a" : "x" , "b" : [ "y" ] , "c" : "\ud83d\ude00é" }"#,
        ];
        measured_members_are_the_members(
            &texts,
            |f| f.next_counted(|k| k != b"n"),
            crate::json::text_counts,
        );
    }

    /// Members read with their strings checked are the members read plainly, and each
    /// string's check is [`written_len`](crate::json::written_len) of its body.
    #[test]
    fn checked_members_are_the_members() {
        let long = format!(
            r#"{{"a":"{}","b":"{}\/"}}"#,
            "x\\\"y".repeat(30),
            "z".repeat(70)
        );
        let texts = [
            r#"{}"#,
            r#"{"type":"text","text":"a \" } ] { [ \\ \n\u001f","n":1,"o":{"s":"\""},"e":""}"#,
            r#"{ "a" : "x\/" , "b" : [ "y" ] , "c" : "\ud83d\ude00é" }"#,
            &long,
        ];
        measured_members_are_the_members(
            &texts,
            |f| f.next_written(|k| k != b"n"),
            crate::json::written_len,
        );
    }

    /// Members read with the noting scan's notes are the members read without, each string
    /// measured as when it is read again; a note is what is used where there is one, and only
    /// for the text noted.
    #[test]
    fn noted_strings_are_measured_from_their_notes() {
        use crate::json::{scan_members_deep_noting, LongString, Noted};
        let long = format!(
            r#"{{"a":"{}","b":"{}\/","c":"{}\u001b","d":{{"e":["{}"]}}}}"#,
            "x\\\"y".repeat(30),
            "z".repeat(70),
            "\\n".repeat(20),
            "\\\"".repeat(40)
        );
        let texts = [
            r#"{}"#,
            r#"{"type":"text","text":"a \" } ] { [ \\ \n\u001f","n":1,"o":{"s":"\""},"e":""}"#,
            &long,
        ];
        let mut taken = 0;
        for text in texts {
            let line = format!(r#"{{"pad":"{}","o":{text}}}"#, "p".repeat(40));
            let mut notes = vec![];
            let open = |_: usize, _: &[u8]| false;
            let object =
                scan_members_deep_noting(line.as_bytes(), 0, open, |_, _, _| {}, &mut notes)
                    .expect("valid");
            let noted = Noted::new(line.as_bytes(), &notes);
            let o = object.get("o").expect("o");
            let (mut read, mut looked_up) = (vec![], vec![]);
            let mut fields = super::Fields::new(o.bytes(), 0);
            // Some strings measured, the others (and those of objects and arrays) passed over.
            let measured = |k: &[u8]| k == b"a" || k == b"text";
            while let Some(m) = fields.next_written(measured) {
                read.push(m);
            }
            let mut fields = super::Fields::new(o.bytes(), 0);
            fields.noted = noted;
            while let Some(m) = fields.next_written(measured) {
                looked_up.push(m);
            }
            assert_eq!(looked_up, read, "{text}");
            taken += notes.len();
        }
        assert!(taken >= 6, "{taken} notes");
        // What a note says is taken as it is (here, a text length no reading gives), for the
        // text it was made of only.
        let line = br#"{"a":"0123456789abcdefghij"}"#;
        let notes = [LongString {
            open: 5,
            end: 27,
            written: Some(3),
        }];
        let noted = Noted::new(line, &notes);
        let copy = line.to_vec();
        for (b, want) in [(&line[..], 3), (&copy[..], 20)] {
            let mut fields = super::Fields::new(b, 0);
            fields.noted = noted;
            let m = fields.next_written(|_| true);
            assert_eq!(
                m.map(|(_, v, w)| (v.len(), w)),
                Some((22, Some(Some(want))))
            );
        }
    }

    #[test]
    fn object_elements_are_read_in_one_pass_as_element_by_element() {
        let texts = [
            r#"[]"#,
            r#"[{}]"#,
            r#"[ { } , {"a":1} ]"#,
            r#"[{"type":"text","text":"a \" } ] { [ \\"},{"type":"image","data":"AAAA","mimeType":"image/png"}]"#,
            r#"[1, "s", {"k": [1, {"x": "}"}], "n": null}, [{"in": "array"}], true, {"t": "\u0041"}]"#,
            r#"[{"deep":{"a":{"b":[{"c":"d"}]}},"after":"x"}, {"e":""}]"#,
            r#"{"not":"an array"}"#,
            r#""a string""#,
        ];
        let long = format!(
            r#"[{{"type":"text","text":"{}"}},{{"k":"v"}}]"#,
            "ab\\\"c".repeat(50)
        );
        for text in texts.iter().copied().chain([long.as_str()]) {
            let raw = super::super::validate(text.as_bytes()).unwrap();
            let (one_pass, twice) = members_both_ways(raw);
            assert_eq!(one_pass, twice, "{text}");
        }
        // Members left unread are passed over: the next element is still found.
        let raw = super::super::validate(br#"[{"a":"x","b":[1,2]},{"c":3}]"#).unwrap();
        let mut firsts = vec![];
        raw.for_each_object_element(|fields| firsts.push(fields.next().map(|(k, _)| k.to_vec())));
        assert_eq!(firsts, [Some(b"a".to_vec()), Some(b"c".to_vec())]);
    }

    /// The end of a string found one byte at a time.
    fn string_end_one_by_one(b: &[u8], open: usize) -> usize {
        let mut k = open + 1;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 2,
                b'"' => return k + 1,
                _ => k += 1,
            }
        }
        b.len()
    }

    /// Strings of every length around the 64-byte blocks, with runs of backslashes and
    /// escaped quotes anywhere, followed by more text: the end is the one found byte by byte.
    #[test]
    fn string_ends_are_found_across_blocks() {
        let pieces: [&[u8]; 6] = [b"a", b"\\\"", b"\\\\", b"\\n", b"\\\\\\\"", b"\xc3\xa9"];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..20_000 {
            let mut b = b"{\"k\":\"".to_vec();
            while b.len() < 6 + round % 300 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.extend_from_slice(pieces[(x % 6) as usize]);
            }
            b.extend_from_slice(b"\",\"more\":\"x\\\"y\"}");
            let open = 5;
            assert_eq!(
                skip_valid_string(&b, open),
                string_end_one_by_one(&b, open),
                "{}",
                String::from_utf8_lossy(&b)
            );
        }
    }

    /// The value skip as it was, one byte at a time: the oracle for [`skip_valid`].
    fn skip_valid_bytewise(b: &[u8], mut i: usize) -> usize {
        let mut depth = 0usize;
        while let Some(&c) = b.get(i) {
            match c {
                b'"' => {
                    i = skip_valid_string(b, i);
                    if depth == 0 {
                        return i;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    i += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return i;
                    }
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        return i;
                    }
                }
                b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => {
                    if depth == 0 {
                        return i;
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        b.len()
    }

    /// A random valid JSON value: nested objects and arrays, strings with brackets, escaped
    /// quotes and backslash runs in them (some longer than a 64-byte block), numbers and
    /// literals, blanks between tokens.
    fn random_value(rng: &mut pi_jsonl_gen::Rng, depth: u32, out: &mut Vec<u8>) {
        let blank = |rng: &mut pi_jsonl_gen::Rng, out: &mut Vec<u8>| {
            if rng.below(4) == 0 {
                let blanks: [&[u8]; 4] = [b" ", b"\n", b"\t ", b"\r\n"];
                out.extend_from_slice(&rng.pick(&blanks)[..]);
            }
        };
        match if depth >= 4 {
            rng.below(3)
        } else {
            rng.below(5)
        } {
            0 => {
                out.push(b'"');
                let pieces: [&[u8]; 9] = [
                    b"a", b"{", b"}", b"[", b"]", b"\\\"", b"\\\\", b"\\u005b", b",:",
                ];
                let long = rng.below(8) == 0;
                for _ in 0..rng.below(if long { 120 } else { 8 }) {
                    out.extend_from_slice(&rng.pick(&pieces)[..]);
                }
                out.push(b'"');
            }
            1 => {
                let scalars: [&[u8]; 5] = [b"0", b"-1.5e3", b"123456", b"true", b"null"];
                out.extend_from_slice(&rng.pick(&scalars)[..]);
            }
            2 => out.extend_from_slice(b"false"),
            kind => {
                let object = kind == 3;
                out.push(if object { b'{' } else { b'[' });
                for k in 0..rng.below(6) {
                    blank(rng, out);
                    if k > 0 {
                        out.push(b',');
                        blank(rng, out);
                    }
                    if object {
                        out.extend_from_slice(b"\"k]\\\"\"");
                        blank(rng, out);
                        out.push(b':');
                        blank(rng, out);
                    }
                    random_value(rng, depth + 1, out);
                }
                blank(rng, out);
                out.push(if object { b'}' } else { b']' });
            }
        }
    }

    /// Values skipped a quote or bracket at a time end where the byte loop ends them, at the
    /// top and as members; on text that is not valid (values cut short, bytes changed), both
    /// give some index within the text and neither panics.
    #[test]
    fn values_are_skipped_as_byte_by_byte() {
        let mut rng = pi_jsonl_gen::Rng::new(31);
        for _ in 0..20_000 {
            let mut b = b"{\"v\":".to_vec();
            random_value(&mut rng, 0, &mut b);
            let end = b.len();
            b.extend_from_slice(b",\"more\":[1]}");
            let line = crate::json::validate(&b)
                .map(|_| ())
                .map_err(|e| format!("{e:?}"));
            assert_eq!(line, Ok(()), "{}", String::from_utf8_lossy(&b));
            assert_eq!(skip_valid(&b, 5), end, "{}", String::from_utf8_lossy(&b));
            assert_eq!(skip_valid_bytewise(&b, 5), end);
            let cut = rng.below(b.len() as u64) as usize;
            let mut bad = b[..cut].to_vec();
            if !bad.is_empty() && rng.below(2) == 0 {
                let at = rng.below(bad.len() as u64) as usize;
                bad[at] = *rng.pick(b"\"{}[],: a\\");
            }
            for from in [5.min(bad.len()), cut / 2] {
                assert!(skip_valid(&bad, from) <= bad.len());
            }
        }
    }
}
