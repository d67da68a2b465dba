//! Skipping the rest of a string that holds escapes, 64 bytes a step.
//!
//! [`skip_string`](super::skip_string) finds the end of a string without escapes with one
//! 16-byte step of [`string_stop`](super::string_stop). Once it meets a backslash it hands the
//! rest to [`skip_rest`], which classifies 64 bytes at a time into bit masks (quotes,
//! backslashes, control bytes, bytes that may follow a backslash, `u`) and works out from them
//! without a branch per escape which bytes are escaped: a byte is escaped when it follows a run
//! of backslashes of odd length, runs being carried from one block to the next. The string ends
//! at the first quote that is not escaped. The stepwise loop ([`skip_plain`]) stopped at every
//! escape, a branch the processor cannot predict in tool output with an escape every 40 bytes.
//!
//! The verdict and its position are the stepwise loop's, exactly: the first of these, in the
//! order of the text, decides —
//! - an unescaped quote: the string ends after it;
//! - an unescaped control byte: [`ErrorKind::ControlChar`] at it;
//! - an escaped byte that cannot follow a backslash, or a `\u` not followed by four hex digits:
//!   [`ErrorKind::BadEscape`] at the backslash;
//! - the end of the text: [`ErrorKind::Eof`] at its length (handled, with the last bytes that
//!   do not fill a block, by the stepwise loop, which the block loop hands over to in the state
//!   the stepwise loop would be in there).
//!
//! Why mapping events to positions this way is the stepwise order: the bytes inside a valid
//! escape (`\n`, `\u0041`) are never quotes, backslashes or control bytes, so they raise no
//! event; a bad escape is reported at its backslash, which comes before any byte of it. An
//! escaped byte `e` reports at `e - 1`, and no other event can sit at `e - 1` (a backslash),
//! so "the lowest event bit" orders escaped and unescaped events correctly.
//!
//! Paths: AVX2 (two 32-byte registers a block) when the CPU has it, checked at run time; SSE2
//! (four 16-byte registers, part of the x86-64 baseline) otherwise; the stepwise loop alone off
//! x86-64. Every path is tested against the stepwise loop.

// Off x86-64 only the stepwise loop runs; the block loop is still built there, and its tests
// run it with the byte-by-byte classifier.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use super::{err, string_stop, Error, ErrorKind};

/// What one 64-byte block holds, one bit per byte (bit `k` is byte `k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Block {
    pub quote: u64,
    pub backslash: u64,
    /// Bytes below 0x20.
    pub control: u64,
    /// Bytes that may not follow a backslash: all but `"` `\` `/` `b` `f` `n` `r` `t` `u`.
    pub not_escapable: u64,
    /// `u` and `/` bytes: escaped, they need a look at the text (a `\u` escape's four hex
    /// digits; `\/`, which JSON lets stand for `/`, is an escape a minimal writer never
    /// writes).
    pub look: u64,
}

/// Bits 0, 2, 4, … : the even positions of a block.
const EVEN: u64 = 0x5555_5555_5555_5555;

/// The bytes of a 64-byte block escaped by a backslash (bit `k` for byte `k`, `backslash` the
/// block's backslashes): each byte just after a run of backslashes of odd length, and byte 0
/// when `carry` is 1. Backslashes escaped inside a run are not marked, but for a carried
/// byte 0. `carry` is 1 when the previous block's last run was of odd length (so this block's
/// byte 0 is escaped) and is set the same way for the next block; 0 for a first block.
#[inline(always)]
pub fn escaped_bytes(backslash: u64, carry: &mut u64) -> u64 {
    let carried = *carry;
    // A backslash escaped by the previous block escapes nothing itself.
    let backslash = backslash & !carried;
    let run_starts = backslash & !(backslash << 1);
    // Adding a run's lowest bit to the run carries through it to the byte just after it. A
    // run of odd length starting at an even position ends at an odd one, and the other way.
    let from_even = backslash.wrapping_add(run_starts & EVEN);
    let (from_odd, overflow) = backslash.overflowing_add(run_starts & !EVEN);
    let after_odd_runs = (from_even & !backslash & !EVEN) | (from_odd & !backslash & EVEN);
    // A run reaching past bit 63 that started at an odd position has an odd length so far
    // (its even-started counterpart an even one, which escapes nothing).
    *carry = u64::from(overflow);
    after_odd_runs | carried
}

/// Whether `b[at..at + 4]` are four hex digits (what must follow `\u`).
#[inline]
fn hex4_at(b: &[u8], at: usize) -> bool {
    b.get(at..at + 4)
        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
}

/// Whether `b[at..at + 4]` are four hex digits, without a branch per digit: the block loop's
/// [`hex4_at`], at every `\u` escape of a text.
#[inline(always)]
fn hex4_in_block(b: &[u8], at: usize) -> bool {
    /// 1 for the bytes that are hex digits.
    static HEX: [u8; 256] = {
        let mut t = [0; 256];
        let mut c = 0;
        while c < 256 {
            t[c] = (c as u8).is_ascii_hexdigit() as u8;
            c += 1;
        }
        t
    };
    match b.get(at..at + 4) {
        Some(&[h0, h1, h2, h3]) => {
            let at = |c: u8| HEX[usize::from(c)];
            at(h0) & at(h1) & at(h2) & at(h3) != 0
        }
        _ => false,
    }
}

/// The stepwise loop: from `i` (inside a string, not inside an escape) to just past the
/// closing quote, stopping at every escape. The tail of [`skip_rest`], the whole of it off
/// x86-64, and the reference the block loop is tested against.
pub(super) fn skip_plain(b: &[u8], i: usize) -> Result<usize, Error> {
    plain::<false>(b, i).map(|(end, _)| end)
}

/// [`skip_plain`], and with `NOTE` what the escapes it passes add ([`Measured`]).
#[inline(always)]
fn plain<const NOTE: bool>(b: &[u8], mut i: usize) -> Result<Measured, Error> {
    let (mut added, mut written) = (0, true);
    loop {
        let stop = string_stop(b, i);
        match b.get(stop) {
            None => return err(ErrorKind::Eof, b.len()),
            Some(b'"') => return Ok((stop + 1, written.then_some(added))),
            Some(b'\\') => {}
            Some(_) => return err(ErrorKind::ControlChar, stop),
        }
        // A backslash escape.
        match b.get(stop + 1) {
            None => return err(ErrorKind::Eof, b.len()),
            Some(b'/') => {
                written = false;
                i = stop + 2;
            }
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {
                added += 1;
                i = stop + 2;
            }
            Some(b'u') if hex4_at(b, stop + 2) => {
                if NOTE {
                    match written_unicode(b, stop + 2) {
                        true => added += 5,
                        false => written = false,
                    }
                }
                i = stop + 6;
            }
            Some(_) => return err(ErrorKind::BadEscape, stop),
        }
    }
}

/// What a noting scan finds of a string ([`skip_long_noted`]): the index just past its closing
/// quote, and how many bytes the escapes it passed add to the text they stand for when each
/// is written as a minimal writer writes it ([`minimal_escape`]), `None` when one is not.
pub(super) type Measured = (usize, Option<usize>);

/// From `i` (inside a string, not inside an escape, no stop of
/// [`string_stop`](super::string_stop) before it in the string) to just past the closing
/// quote: with AVX2, 64 bytes a step to the first stop (a long string, a base64 image or a
/// signature, often has no escape at all), then [`skip_rest`] from a backslash; else the
/// first stop of `string_stop`, then `skip_rest`.
#[inline(never)]
pub(super) fn skip_long(b: &[u8], i: usize) -> Result<usize, Error> {
    #[cfg(target_arch = "x86_64")]
    if b.len().saturating_sub(i) >= 64 && x86::avx2_bmi1() {
        // SAFETY: the CPU has AVX2 and BMI1, checked just above, which is all
        // `long_avx2` needs.
        return unsafe { x86::long_avx2(b, i) };
    }
    let stop = string_stop(b, i);
    if b.get(stop) == Some(&b'"') {
        return Ok(stop + 1);
    }
    skip_rest(b, stop)
}

/// [`skip_long`], measuring the escapes it passes ([`Measured`]): the noting scan's.
#[inline(never)]
pub(super) fn skip_long_noted(b: &[u8], i: usize) -> Result<Measured, Error> {
    #[cfg(target_arch = "x86_64")]
    if b.len().saturating_sub(i) >= 64 && x86::avx2_bmi1_popcnt() {
        // SAFETY: the CPU has AVX2, BMI1 and POPCNT, checked just above.
        return unsafe { x86::long_noted_avx2(b, i) };
    }
    let stop = string_stop(b, i);
    if b.get(stop) == Some(&b'"') {
        return Ok((stop + 1, Some(0)));
    }
    skip_rest_noted(b, stop)
}

/// From `i` (inside a string, not inside an escape) to just past the closing quote: the
/// block loop on the best path the CPU has, the stepwise loop for what is left.
#[inline(never)]
pub(super) fn skip_rest(b: &[u8], i: usize) -> Result<usize, Error> {
    #[cfg(target_arch = "x86_64")]
    if b.len().saturating_sub(i) >= 64 {
        if x86::avx2_bmi1() {
            // SAFETY: the CPU has AVX2 and BMI1, checked just above, which is all
            // `blocks_avx2` needs.
            return unsafe { x86::blocks_avx2(b, i) };
        }
        // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 CPU has it.
        return unsafe { x86::blocks_sse2(b, i) };
    }
    skip_plain(b, i)
}

/// [`skip_rest`], measuring the escapes it passes ([`Measured`]).
#[inline(never)]
pub(super) fn skip_rest_noted(b: &[u8], i: usize) -> Result<Measured, Error> {
    #[cfg(target_arch = "x86_64")]
    if b.len().saturating_sub(i) >= 64 {
        if x86::avx2_bmi1_popcnt() {
            // SAFETY: the CPU has AVX2, BMI1 and POPCNT, checked just above.
            return unsafe { x86::blocks_noted_avx2(b, i) };
        }
        // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 CPU has it.
        return unsafe { x86::blocks_noted_sse2(b, i) };
    }
    plain::<true>(b, i)
}

/// What the validating block loop needs of a 64-byte block, one bit per byte (bit `k` is
/// byte `k`): three masks, from which the stops follow once the escaped bytes are known
/// (`stops ^ (escaped & flips)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stops {
    pub backslash: u64,
    /// The bytes that end the loop when no backslash escapes them: quotes and control bytes
    /// (below 0x20).
    pub stops: u64,
    /// The bytes an escape changes the verdict of: quotes (a stop unescaped, part of an escape
    /// escaped), and the bytes other than control bytes that may not follow a backslash (a
    /// stop escaped, plain text unescaped). A control byte is a stop either way; a backslash
    /// and the other bytes that may follow one (`/` `b` `f` `n` `r` `t`) neither. `u` is
    /// among the bytes that may not: an escaped `u` stops the loop, which checks its four hex
    /// digits there (`\u` escapes are rare: a writer such as `JSON.stringify` writes them only
    /// for control bytes without a short escape and for lone surrogates).
    pub flips: u64,
}

/// The bytes of a 64-byte block escaped by a backslash (bit `k` for byte `k`, `backslash` the
/// block's backslashes): each byte after a backslash that is not itself escaped, escaped
/// backslashes included, and byte 0 when `carry` is 1. `carry` is 1 when the previous block's
/// last byte is a backslash that escapes the next byte, and is set the same way for the next
/// block; 0 for a first block. ([`escaped_bytes`] leaves escaped backslashes out; this one
/// takes fewer steps: simdjson's `find_escaped_branchless`.)
#[inline(always)]
fn escaped_in_block(backslash: u64, carry: &mut u64) -> u64 {
    let carried = *carry;
    // A backslash escaped by the previous block escapes nothing itself.
    let backslash = backslash & !carried;
    let follows_backslash = backslash << 1 | carried;
    // Runs of backslashes that start at an odd position: adding each run's first bit carries
    // through the run to the byte just after it, flipping the run's bits.
    let odd_starts = backslash & !EVEN & !follows_backslash;
    let (flipped, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    // In a run starting at an even position, the bytes at odd positions are escaped (the run's
    // 2nd, 4th, … backslash, or the byte after it); in one starting at an odd position, those
    // at even positions: the sum above marks the bytes of odd-started runs and the byte after
    // each, shifted one up to line up with the bytes they escape.
    (EVEN ^ (flipped << 1)) & follows_backslash
}

/// The block loop, over whichever `classify` the CPU allows. From `i` (inside a string, not
/// inside an escape) while 64 bytes are left; the rest goes to [`skip_plain`]. With `NOTE`,
/// `classify` must flip `/` too (an escaped `/` then stops the loop, to be noted as an escape
/// a minimal writer does not write), and the escapes are measured ([`Measured`]); without,
/// the measure means nothing.
#[inline(always)]
pub(super) fn blocks<const NOTE: bool>(
    b: &[u8],
    i: usize,
    classify: impl Fn(&[u8; 64]) -> Stops,
) -> Result<Measured, Error> {
    let mut at = i;
    let mut carry = 0u64;
    // The escapes passed (one escaped byte each), the `\u` escapes among them, and whether
    // each is written as a minimal writer writes it.
    let (mut escapes, mut unicode, mut written) = (0usize, 0usize, true);
    while let Some(bytes) = b.get(at..at + 64) {
        let block = classify(bytes.try_into().expect("64 bytes"));
        let escaped = escaped_in_block(block.backslash, &mut carry);
        let mut stops = block.stops ^ (escaped & block.flips);
        while stops != 0 {
            let bit = stops.trailing_zeros();
            let s = at + bit as usize;
            if escaped >> bit & 1 == 0 {
                if NOTE {
                    escapes += (escaped & ((1u64 << bit) - 1)).count_ones() as usize;
                }
                return if b[s] == b'"' {
                    Ok((s + 1, written.then_some(escapes + 4 * unicode)))
                } else {
                    err(ErrorKind::ControlChar, s)
                };
            }
            // An escaped byte that is a stop: a `\u` escape, or a bad escape (or, noting, a
            // `\/`). The four digits of a good `\u` (in this block or the next) are no stop,
            // and no backslash: the loop goes on to the block's next stop, the masks unchanged.
            if NOTE && b[s] == b'/' {
                written = false;
            } else if b[s] != b'u' || !hex4_in_block(b, s + 1) {
                return err(ErrorKind::BadEscape, s - 1);
            } else if NOTE {
                match written_unicode(b, s + 1) {
                    true => unicode += 1,
                    false => written = false,
                }
            }
            stops &= stops - 1;
        }
        if NOTE {
            escapes += escaped.count_ones() as usize;
        }
        at += 64;
    }
    // With a carry, the block's last byte is a backslash that escapes the next one: the
    // stepwise loop starts at that escape.
    let (end, rest) = plain::<NOTE>(b, at - carry as usize)?;
    let added = written.then_some(escapes + 4 * unicode);
    Ok((end, added.zip(rest).map(|(a, r)| a + r)))
}

/// The block loop of a second look at a validated string ([`super::Raw`]'s walkers): from
/// `from` (inside the string, not inside an escape), the index just past the first quote no
/// backslash escapes, looked for in the whole blocks of `b[from..]`; when none has it, `Err`
/// with where the blocks end (the caller goes on from there byte by byte).
///
/// Only the quotes are classified: in a valid string a quote is escaped exactly when the run
/// of backslashes just before it is of odd length, counted back from the quote (never past
/// `from`: the text before it is whole escapes, which leave a run of even length). Blocks
/// without a quote, most of a long text, cost a compare and a test; escaped quotes one
/// count each.
#[inline(always)]
pub(super) fn quote_in_blocks(
    b: &[u8],
    from: usize,
    quotes: impl Fn(&[u8; 64]) -> u64,
) -> Result<usize, usize> {
    let mut at = from;
    while let Some(bytes) = b.get(at..at + 64) {
        let mut quote = quotes(bytes.try_into().expect("64 bytes"));
        while quote != 0 {
            let q = at + quote.trailing_zeros() as usize;
            let run = b[from..q].iter().rev().take_while(|&&c| c == b'\\').count();
            if run % 2 == 0 {
                return Ok(q + 1);
            }
            quote &= quote - 1;
        }
        at += 64;
    }
    Err(at)
}

/// [`super::written_len`] one escape at a time: from `i` (not inside an escape) to the end of
/// `body`, how many bytes its escapes add to the text they stand for, or `None`.
pub(super) fn written_plain(body: &[u8], mut i: usize) -> Option<usize> {
    let mut added = 0;
    loop {
        let j = string_stop(body, i);
        let Some(&c) = body.get(j) else {
            return Some(added);
        };
        if c != b'\\' {
            return None;
        }
        let (_, len) = minimal_escape(&body[j..])?;
        added += len - 1;
        i = j + len;
    }
}

/// The escape at the start of `escape` (which starts with a backslash) when a minimal writer
/// writes it (`\" \\ \b \t \n \f \r`, or `\u00xx` in lowercase for another control below
/// U+0020): the byte it stands for and the escape's length; `None` for any other escape.
#[inline]
fn minimal_escape(escape: &[u8]) -> Option<(u8, usize)> {
    // A table, not a `match`: text decoded escape by escape (pi-redact's kept text) meets
    // the short escapes in no order a jump's prediction learns.
    match SHORT_ESCAPES[usize::from(*escape.get(1)?)] {
        0 if escape[1] == b'u' => written_control(escape, 2).map(|c| (c, 6)),
        0 => None,
        byte => Some((byte, 2)),
    }
}

/// For each byte, what a backslash before it stands for when the two are a short escape
/// (`\" \\ \b \t \n \f \r`); 0 for every other byte (none of them stands for 0).
const SHORT_ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'b' as usize] = 0x08;
    table[b't' as usize] = b'\t';
    table[b'n' as usize] = b'\n';
    table[b'f' as usize] = 0x0c;
    table[b'r' as usize] = b'\r';
    table
};

/// Whether the four hex digits of a `\u` escape at `body[at..]` are what a minimal writer
/// writes: `00xx` in lowercase, for a control character that has no short escape.
fn written_unicode(body: &[u8], at: usize) -> bool {
    written_control(body, at).is_some()
}

/// The control character the four hex digits of a `\u` escape at `body[at..]` stand for, when
/// they are what a minimal writer writes ([`written_unicode`]).
fn written_control(body: &[u8], at: usize) -> Option<u8> {
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let &[b'0', b'0', hi, lo] = body.get(at..at + 4)? else {
        return None;
    };
    let c = hex(hi)? << 4 | hex(lo)?;
    (c < 0x20 && !matches!(c, 0x08 | b'\t' | b'\n' | 0x0c | b'\r')).then_some(c)
}

/// [`written_plain`] over the whole blocks of `body`, the rest byte by byte.
///
/// Each escape is a backslash and the byte after it, so over the whole body the escapes
/// number half the backslashes plus the escaped bytes that are not backslashes; a backslash
/// at the end of the blocks that escapes the next byte is left to the byte loop.
/// `keep` is given each block once it is found written so (to copy it in the same pass).
#[inline(always)]
pub(super) fn written_blocks(
    body: &[u8],
    classify: impl Fn(&[u8; 64]) -> Block,
    mut keep: impl FnMut(&[u8; 64]),
) -> Option<usize> {
    let (mut at, mut carry) = (0, 0u64);
    let (mut backslashes, mut letters, mut unicode) = (0, 0, 0);
    while let Some(bytes) = body.get(at..at + 64) {
        let bytes: &[u8; 64] = bytes.try_into().expect("64 bytes");
        let block = classify(bytes);
        let escaped = escaped_in_block(block.backslash, &mut carry);
        let escaped_letters = escaped & !block.backslash;
        let bad =
            ((block.quote | block.control) & !escaped) | (escaped_letters & block.not_escapable);
        if bad != 0 {
            return None;
        }
        let mut look = escaped_letters & block.look;
        while look != 0 {
            let at = at + look.trailing_zeros() as usize;
            if body[at] != b'u' || !written_unicode(body, at + 1) {
                return None;
            }
            look &= look - 1;
            unicode += 1;
        }
        keep(bytes);
        backslashes += block.backslash.count_ones() as usize;
        letters += escaped_letters.count_ones() as usize;
        at += 64;
    }
    let carried = carry as usize;
    let added = (backslashes - carried + letters) / 2 + 4 * unicode;
    Some(added + written_plain(body, at - carried)?)
}

/// The characters and line feeds of the text a JSON string body stands for
/// ([`text_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextCounts {
    /// Characters, as [`decode_string_body`](super::decode_string_body) decodes: an escape is
    /// one, a surrogate pair one, a lone surrogate one (U+FFFD).
    pub chars: u64,
    /// Line feeds: `\n` and `\u000a` escapes (a string holds no raw line feed).
    pub line_feeds: u64,
}

/// The characters and line feeds of the text of a validated JSON string body (between its
/// quotes) that is valid UTF-8, read 64 bytes a step without decoding it: each character
/// starts with one byte that is not a continuation byte (`0x80..=0xBF`), and an escape stands
/// for one character, so the characters are the bytes, less the continuation bytes, less what
/// escapes take beyond one byte each. Only `\u` escapes are read one by one. On a body that is
/// not valid it returns some count and never panics, but the count means nothing.
pub fn text_counts(body: &[u8]) -> TextCounts {
    counts_to_quote(body, 0).1
}

/// [`text_counts`] of the validated string whose opening quote is `b[open]`, and the index
/// just past its closing quote (the first quote no backslash escapes; `b.len()` when there is
/// none): the string's end found and its text counted in the same pass, where finding the end
/// first ([`super::Raw`]'s walkers) and counting after reads the text twice.
pub fn string_counts(b: &[u8], open: usize) -> (usize, TextCounts) {
    counts_to_quote(b, open + 1)
}

/// [`count_blocks`] on the best path the CPU has.
fn counts_to_quote(b: &[u8], from: usize) -> (usize, TextCounts) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::avx512bw_bmi1() && std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has AVX-512BW, BMI1 and POPCNT, checked just above.
            return unsafe { x86::text_counts_avx512(b, from) };
        }
        if x86::avx2_bmi1_popcnt() {
            // SAFETY: the CPU has AVX2, BMI1 and POPCNT, checked just above.
            return unsafe { x86::text_counts_avx2(b, from) };
        }
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { x86::text_counts_sse2(b, from) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    count_blocks(b, from, text_bytes_bytewise)
}

/// Of a 64-byte block, one bit per byte: quotes, backslashes, continuation bytes, `n`, `u`
/// (what [`count_blocks`] needs), byte by byte: off x86-64, and what the vector paths are
/// tested against.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn text_bytes_bytewise(bytes: &[u8; 64]) -> [u64; 5] {
    let mask =
        |f: &dyn Fn(u8) -> bool| (0..64).fold(0u64, |m, k| m | (u64::from(f(bytes[k])) << k));
    [
        mask(&|c| c == b'"'),
        mask(&|c| c == b'\\'),
        mask(&|c| (0x80..0xC0).contains(&c)),
        mask(&|c| c == b'n'),
        mask(&|c| c == b'u'),
    ]
}

/// The text from `b[from]` (inside a string, not inside an escape) to the first quote no
/// backslash escapes (or the end of `b`), counted ([`text_counts`]), and the index just past
/// that quote; over whichever `classify` the CPU allows (quote, backslash, continuation, `n`
/// and `u` masks of a block). The last block, shorter, is padded with zeros (none of those).
///
/// A character is lost for each continuation byte and for each byte a backslash escapes
/// (the `n` of `\n`, the second backslash of `\\`, the `u` of `\u`); a `\u` escape loses 4
/// more, a surrogate pair 9 more ([`unicode_extra`], out of line and cold).
#[inline(always)]
fn count_blocks(
    b: &[u8],
    from: usize,
    classify: impl Fn(&[u8; 64]) -> [u64; 5],
) -> (usize, TextCounts) {
    let mut state = Counting {
        lost: 0,
        line_feeds: 0,
        unicode_end: 0,
        carry: 0,
    };
    let mut at = from;
    // Whole blocks, then the last, shorter one padded: the copy is out of the loop.
    let quote = loop {
        let Some(bytes) = b.get(at..at + 64) else {
            if at >= b.len() {
                break None;
            }
            let mut padded = [0u8; 64];
            let len = b.len() - at;
            padded[..len].copy_from_slice(&b[at..]);
            break state.block(b, at, classify(&padded), (1u64 << len) - 1);
        };
        let bytes = bytes.try_into().expect("64 bytes");
        if let Some(q) = state.block(b, at, classify(bytes), u64::MAX) {
            break Some(q);
        }
        at += 64;
    };
    let body_end = quote.map_or(b.len(), |q| at + q);
    let counts = TextCounts {
        chars: ((body_end - from.min(body_end)) as u64).saturating_sub(state.lost),
        line_feeds: state.line_feeds,
    };
    (b.len().min(body_end + 1), counts)
}

/// What [`count_blocks`] carries from block to block.
struct Counting {
    lost: u64,
    line_feeds: u64,
    unicode_end: usize,
    /// Whether the previous block's last byte escapes this block's first.
    carry: u64,
}

impl Counting {
    /// Counts the block at `b[at..]` from its masks (`within`: its bytes that are in `b`), up
    /// to its closing quote; returns that quote's place in the block, if it holds one.
    #[inline(always)]
    fn block(&mut self, b: &[u8], at: usize, masks: [u64; 5], within: u64) -> Option<usize> {
        let [quote, backslash, continuation, letter_n, letter_u] = masks;
        let escaped = escaped_in_block(backslash, &mut self.carry);
        let quotes = quote & !escaped & within;
        // Only the bytes before the closing quote count.
        let within = match quotes {
            0 => within,
            q => (1u64 << q.trailing_zeros()) - 1,
        };
        let escaped = escaped & within;
        self.lost +=
            u64::from((continuation & within).count_ones()) + u64::from(escaped.count_ones());
        self.line_feeds += u64::from((escaped & letter_n).count_ones());
        if escaped & letter_u != 0 {
            let (more, feeds, end) = unicode_extra(b, at, escaped & letter_u, self.unicode_end);
            self.lost += more;
            self.line_feeds += feeds;
            self.unicode_end = end;
        }
        (quotes != 0).then(|| quotes.trailing_zeros() as usize)
    }
}

/// The `\u` escapes whose `u` the bits of `letters` mark in the block at `b[at..]`, read one
/// by one (rare in text), out of the block loop: the characters they lose beyond the one
/// their `u` loses (4 for an escape of six bytes, 9 for a surrogate pair of twelve, whose
/// second `u` loses one too), the line feeds among them, and the index past the last one
/// read (`unicode_end` before it: a pair's second half is read with the first).
#[inline(never)]
#[cold]
fn unicode_extra(
    b: &[u8],
    at: usize,
    mut letters: u64,
    mut unicode_end: usize,
) -> (u64, u64, usize) {
    let (mut lost, mut line_feeds) = (0, 0);
    while letters != 0 {
        // The backslash before the `u` (the previous block's last byte for bit 0).
        let j = (at + letters.trailing_zeros() as usize).wrapping_sub(1);
        letters &= letters - 1;
        if j < unicode_end || j >= b.len() {
            continue;
        }
        // A valid escape's digits, and a pair's second half, lie inside the string.
        let (line_feed, len) = unicode_escape(b, j);
        lost += if len == 12 { 9 } else { 4 };
        line_feeds += u64::from(line_feed);
        unicode_end = j + len;
    }
    (lost, line_feeds, unicode_end)
}

/// The four hex digits at `b[at..]` as a number, if they are four hex digits.
#[cfg(test)]
fn hex4_value(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?.iter().try_fold(0u32, |v, &c| {
        let d = (c as char).to_digit(16)?;
        Some(v << 4 | d)
    })
}

/// The `\u` escape at `body[j]`: whether it stands for a line feed, and its length (a
/// surrogate pair is one escape, twelve bytes). [`unicode_escape_by_value`] read by its
/// digits: `000a` is a line feed (either case), `d800`–`dbff` a pair's first half when
/// `\udc00`–`\udfff` follows it; anything else (other digits, a bad digit, the end of the
/// text) is an escape of six bytes.
fn unicode_escape(body: &[u8], j: usize) -> (bool, usize) {
    let Some(&[h0, h1, h2, h3]) = body.get(j + 2..j + 6) else {
        return (false, 6);
    };
    if h0 == b'0' && h1 == b'0' && h2 == b'0' && h3 | 0x20 == b'a' {
        return (true, 6);
    }
    if h0 | 0x20 == b'd'
        && matches!(h1, b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
        && h2.is_ascii_hexdigit()
        && h3.is_ascii_hexdigit()
    {
        if let Some(&[b'\\', b'u', l0, l1, l2, l3]) = body.get(j + 6..j + 12) {
            if l0 | 0x20 == b'd'
                && matches!(l1, b'c'..=b'f' | b'C'..=b'F')
                && l2.is_ascii_hexdigit()
                && l3.is_ascii_hexdigit()
            {
                return (false, 12);
            }
        }
    }
    (false, 6)
}

/// [`unicode_escape`] as it was first written, by the escape's value: what it is tested
/// against.
#[cfg(test)]
fn unicode_escape_by_value(body: &[u8], j: usize) -> (bool, usize) {
    match hex4_value(body, j + 2) {
        Some(0xD800..=0xDBFF)
            if body.get(j + 6..j + 8) == Some(b"\\u")
                && matches!(hex4_value(body, j + 8), Some(0xDC00..=0xDFFF)) =>
        {
            (false, 12)
        }
        Some(0x0A) => (true, 6),
        _ => (false, 6),
    }
}

/// [`written_len`](super::written_len) of `body`, appending `body` to `out` in the same pass
/// when it is written so: text that is copied out as it is read once, not checked then
/// copied. `None` leaves `out` as it was.
pub fn copy_written(body: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let start = out.len();
    out.reserve(body.len());
    #[cfg(target_arch = "x86_64")]
    if body.len() >= 64 && x86::avx2_bmi1() {
        // SAFETY: the CPU has AVX2 and BMI1, checked just above.
        let added = unsafe { x86::copy_written_blocks_avx2(body, out) };
        let whole = out.len() - start;
        if let Some(added) = added {
            out.extend_from_slice(&body[whole..]);
            return Some(body.len() - added);
        }
        out.truncate(start);
        return None;
    }
    let added = written_plain(body, 0)?;
    out.extend_from_slice(body);
    Some(body.len() - added)
}

/// [`written_len`](super::written_len) of the body of the validated string whose opening
/// quote is `b[open]`, and the index just past its closing quote (the first quote no
/// backslash escapes; `b.len()` when there is none): the string's end found and its text
/// checked in the same pass, where finding the end first ([`super::Raw`]'s walkers) and
/// checking after reads the text twice. UTF-8 is not checked, nor anything the validator
/// checked (a control byte, a bad escape): the string must be one it passed.
pub fn string_written(b: &[u8], open: usize) -> (usize, Option<usize>) {
    #[cfg(target_arch = "x86_64")]
    if x86::avx2_bmi1_popcnt() {
        // SAFETY: the CPU has AVX2, BMI1 and POPCNT, checked just above.
        return unsafe { x86::string_written_avx2(b, open + 1) };
    }
    written_to_quote(b, open + 1, None::<fn(&[u8; 64]) -> Block>)
}

/// [`string_written`] from `b[from]` (inside the string, not inside an escape): whole blocks
/// of 64 bytes over `classify` when there is one (as [`written_blocks`], the bytes after the
/// string's closing quote left out), the rest a byte loop.
#[inline(always)]
fn written_to_quote(
    b: &[u8],
    from: usize,
    classify: Option<impl Fn(&[u8; 64]) -> Block>,
) -> (usize, Option<usize>) {
    let (mut at, mut carry, mut written) = (from, 0u64, true);
    // The escapes' bytes counted so far (two for each: a backslash and the byte after it, a
    // `\\` escape two backslashes), and the `\u` escapes.
    let (mut escapes, mut unicode) = (0, 0);
    while let (Some(classify), Some(bytes)) = (&classify, b.get(at..at + 64)) {
        let bytes: &[u8; 64] = bytes.try_into().expect("64 bytes");
        let block = classify(bytes);
        let escaped = escaped_in_block(block.backslash, &mut carry);
        let quotes = block.quote & !escaped;
        // The bytes of the string in this block.
        let within = match quotes {
            0 => u64::MAX,
            q => (1u64 << q.trailing_zeros()) - 1,
        };
        if written {
            let escaped_letters = escaped & !block.backslash & within;
            let bad = (block.control & !escaped & within) | (escaped_letters & block.not_escapable);
            written = bad == 0;
            // A `\u` escape is written so when its digits are; a `\/` never is.
            let mut look = escaped_letters & block.look;
            while look != 0 && written {
                let at = at + look.trailing_zeros() as usize;
                written = b[at] == b'u' && written_unicode(b, at + 1);
                look &= look - 1;
                unicode += 1;
            }
            // The backslashes and the letters they escape: two masks with no bit in common.
            escapes += ((block.backslash & within) | escaped_letters).count_ones() as usize;
        }
        if quotes != 0 {
            let end = at + quotes.trailing_zeros() as usize;
            let added = escapes / 2 + 4 * unicode;
            return (end + 1, written.then(|| end - from - added));
        }
        at += 64;
    }
    // The rest, from a backslash the blocks left escaping the next byte.
    let carried = carry as usize;
    let rest = at - carried;
    let mut end = rest;
    let end = loop {
        end = super::string_stop(b, end.min(b.len()));
        match b.get(end) {
            None => break b.len(),
            Some(b'"') => break end,
            Some(b'\\') => end += 2,
            Some(_) => end += 1,
        }
    };
    let added = (escapes - carried) / 2 + 4 * unicode;
    let written = written
        .then(|| written_plain(&b[..end], rest))
        .flatten()
        .map(|more| end - from - added - more);
    (b.len().min(end + 1), written)
}

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    //! The block classifiers for x86-64 and the block loops compiled with them.

    use super::{blocks, Block, Error, Measured, Stops};
    use std::arch::x86_64::*;

    /// Whether the CPU has AVX2 and BMI1, which the AVX2 block loops here are compiled for
    /// (BMI1's `andn` in the escapes' masks).
    #[inline]
    pub(in super::super) fn avx2_bmi1() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("bmi1")
    }

    /// Whether the CPU has AVX2, BMI1 and POPCNT (the noting block loops count escapes).
    #[inline]
    pub(in super::super) fn avx2_bmi1_popcnt() -> bool {
        avx2_bmi1() && is_x86_feature_detected!("popcnt")
    }

    /// Whether the CPU has AVX-512BW (64 bytes compared into a mask in one instruction) and
    /// BMI1.
    #[inline]
    pub(in super::super) fn avx512bw_bmi1() -> bool {
        is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("bmi1")
    }

    /// The block loop with SSE2 (always present on x86-64).
    #[target_feature(enable = "sse2")]
    pub(in super::super) fn blocks_sse2(b: &[u8], i: usize) -> Result<usize, Error> {
        blocks::<false>(b, i, |bytes| stops_sse2::<false>(bytes)).map(|(end, _)| end)
    }

    /// [`blocks_sse2`], measuring the escapes ([`Measured`]).
    #[target_feature(enable = "sse2")]
    pub(in super::super) fn blocks_noted_sse2(b: &[u8], i: usize) -> Result<Measured, Error> {
        blocks::<true>(b, i, |bytes| stops_sse2::<true>(bytes))
    }

    /// The block loop with AVX2 (and BMI1's `andn` for the escapes' masks).
    ///
    /// # Safety
    /// The CPU must have AVX2 and BMI1.
    #[target_feature(enable = "avx2,bmi1")]
    pub(in super::super) unsafe fn blocks_avx2(b: &[u8], i: usize) -> Result<usize, Error> {
        blocks::<false>(b, i, |bytes| stops_avx2::<false>(bytes)).map(|(end, _)| end)
    }

    /// [`blocks_avx2`], measuring the escapes ([`Measured`]).
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI1 and POPCNT.
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    pub(in super::super) unsafe fn blocks_noted_avx2(
        b: &[u8],
        i: usize,
    ) -> Result<Measured, Error> {
        blocks::<true>(b, i, |bytes| stops_avx2::<true>(bytes))
    }

    /// [`skip_long`](super::skip_long) with AVX2: 64 bytes a step to the first quote,
    /// backslash or control byte, then the block loop from a backslash; what is left after
    /// the last whole 64 bytes, the stepwise loop.
    ///
    /// # Safety
    /// The CPU must have AVX2 and BMI1.
    #[target_feature(enable = "avx2,bmi1")]
    pub(in super::super) unsafe fn long_avx2(b: &[u8], i: usize) -> Result<usize, Error> {
        long::<false>(b, i).map(|(end, _)| end)
    }

    /// [`long_avx2`], measuring the escapes ([`Measured`]).
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI1 and POPCNT.
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    pub(in super::super) unsafe fn long_noted_avx2(b: &[u8], i: usize) -> Result<Measured, Error> {
        long::<true>(b, i)
    }

    #[target_feature(enable = "avx2,bmi1")]
    #[inline]
    fn long<const NOTE: bool>(b: &[u8], i: usize) -> Result<Measured, Error> {
        let mut at = i;
        while let Some(bytes) = b.get(at..at + 64) {
            let (lo, hi) = halves(bytes.try_into().expect("64 bytes"));
            let stops = |x: __m256i| {
                let quote = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'"' as i8));
                let backslash = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'\\' as i8));
                // c <= 0x1f exactly when min(c, 0x1f) == c.
                let control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1f)), x);
                _mm256_or_si256(_mm256_or_si256(quote, backslash), control)
            };
            let (lo, hi) = (stops(lo), stops(hi));
            // Most steps have no stop: one test for both halves.
            if _mm256_movemask_epi8(_mm256_or_si256(lo, hi)) != 0 {
                let s = at + mask(lo, hi).trailing_zeros() as usize;
                return match b[s] {
                    b'"' => Ok((s + 1, Some(0))),
                    b'\\' => blocks::<NOTE>(b, s, |bytes| stops_avx2::<NOTE>(bytes)),
                    _ => super::err(super::ErrorKind::ControlChar, s),
                };
            }
            at += 64;
        }
        super::plain::<NOTE>(b, at)
    }

    /// [`decode_written`](super::decode_written) over whole steps of 64 bytes: each step's
    /// bytes stored into `out`'s spare room before its stops are known, and after each
    /// escape the 64 bytes that follow it, so the stretches between escapes are copied
    /// without a call or a loop. Returns where in `body` the steps stopped (the rest is left
    /// to the caller's loop), `None` for a body that is not written so.
    ///
    /// # Safety
    /// The CPU must have AVX2 and BMI1.
    #[target_feature(enable = "avx2,bmi1")]
    pub(in super::super) unsafe fn decode_written_avx2(
        body: &[u8],
        out: &mut Vec<u8>,
        escapes: &mut Vec<(usize, usize)>,
    ) -> Option<usize> {
        let len = body.len();
        // Every store writes 64 bytes at `o`, the text's end, and `o` never runs ahead of
        // the bytes of `body` read (an escape's text is shorter than the escape): this much
        // room holds them all.
        out.reserve(len + 64);
        let start = out.as_mut_ptr();
        let (mut o, mut seg) = (out.len(), 0);
        let stops_of = |x: __m256i| {
            let quote = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'"' as i8));
            let backslash = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'\\' as i8));
            // c <= 0x1f exactly when min(c, 0x1f) == c.
            let control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1f)), x);
            _mm256_or_si256(_mm256_or_si256(quote, backslash), control)
        };
        // SAFETY (of each `copy`, each byte written at `o` and each `set_len`): a copy reads
        // `body[from..from + 64]`, in bounds, and writes 64 bytes at `o`, inside the room
        // reserved above, since `o` is past `out`'s first length by at most `from`; the
        // length is set only over bytes written (those of `body[seg..s]` by the copy that
        // last covered them).
        let copy = |from: usize, o: usize| {
            let (lo, hi) = halves(body[from..from + 64].try_into().expect("64 bytes"));
            _mm256_storeu_si256(start.add(o).cast::<__m256i>(), lo);
            _mm256_storeu_si256(start.add(o + 32).cast::<__m256i>(), hi);
            (lo, hi)
        };
        'steps: while seg + 64 <= len {
            let step = seg;
            let (lo, hi) = copy(step, o);
            let mut stops = mask(stops_of(lo), stops_of(hi));
            if stops == 0 {
                (o, seg) = (o + 64, step + 64);
                continue;
            }
            loop {
                // The bytes `body[seg..s]` stand at `o` already: the step's, or those copied
                // after the escape before.
                let s = step + stops.trailing_zeros() as usize;
                if body[s] != b'\\' {
                    out.set_len(o + (s - seg));
                    return None;
                }
                let (byte, n) = match super::minimal_escape(&body[s..]) {
                    Some(escape) => escape,
                    None => {
                        out.set_len(o + (s - seg));
                        return None;
                    }
                };
                o += s - seg;
                *start.add(o) = byte;
                o += 1;
                seg = s + n;
                escapes.push((o, seg));
                let into_step = seg - step;
                if into_step >= 64 {
                    // The escape ends past the step: the next step starts after it.
                    continue 'steps;
                }
                if seg + 64 > len {
                    break 'steps;
                }
                copy(seg, o);
                // Stops inside the escape (an escaped quote or backslash) are no stops.
                stops &= u64::MAX << into_step;
                if stops == 0 {
                    (o, seg) = (o + (step + 64 - seg), step + 64);
                    continue 'steps;
                }
            }
        }
        out.set_len(o);
        Some(seg)
    }

    /// A block as its two 32-byte halves.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn halves(bytes: &[u8; 64]) -> (__m256i, __m256i) {
        // SAFETY: both loads read 32 bytes inside `bytes` (offsets 0 and 32 of 64) and need
        // no alignment.
        unsafe {
            (
                _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(bytes.as_ptr().add(32).cast::<__m256i>()),
            )
        }
    }

    /// The 64-bit mask of a block's two halves' byte masks (the low half's bytes the low bits).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mask(lo: __m256i, hi: __m256i) -> u64 {
        u64::from(_mm256_movemask_epi8(lo) as u32)
            | u64::from(_mm256_movemask_epi8(hi) as u32) << 32
    }

    /// The three masks of 16 bytes (low 16 bits): backslashes, stops, flips ([`Stops`]).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn stops16<const NOTE: bool>(x: __m128i) -> [u32; 3] {
        let eq = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
        let bits = |m: __m128i| _mm_movemask_epi8(m) as u32;
        // c <= 0x1f exactly when min(c, 0x1f) == c.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
        let quote = eq(b'"');
        // Neither stops nor flips: the control bytes and the bytes that may follow a
        // backslash, the quote left out (it flips).
        let mut steady = control;
        for c in [b'\\', b'/', b'b', b'f', b'n', b'r', b't'] {
            // Noting, an escaped `/` stops the loop: it flips.
            if !(NOTE && c == b'/') {
                steady = _mm_or_si128(steady, eq(c));
            }
        }
        [
            bits(eq(b'\\')),
            bits(_mm_or_si128(quote, control)),
            !bits(steady) & 0xffff,
        ]
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn stops_sse2<const NOTE: bool>(bytes: &[u8; 64]) -> Stops {
        let mut m = [0u64; 3];
        for (k, part) in bytes.chunks_exact(16).enumerate() {
            // SAFETY: `part` is 16 bytes in bounds; the load needs no alignment, and SSE2 is
            // part of the x86-64 baseline.
            let x = unsafe { _mm_loadu_si128(part.as_ptr().cast::<__m128i>()) };
            for (all, bits) in m.iter_mut().zip(stops16::<NOTE>(x)) {
                *all |= u64::from(bits) << (16 * k);
            }
        }
        let [backslash, stops, flips] = m;
        Stops {
            backslash,
            stops,
            flips,
        }
    }

    /// The three masks of 32 bytes ([`Stops`]), from one class byte per byte looked up by
    /// nibble: `by_high[c >> 4] & by_low[c & 15]`. Its bits: 0x40 for a control byte (rows 0
    /// and 1, any low nibble), 0x80 for the quote, and for each other byte that may follow a
    /// backslash the bit of its row class (`/` of row 2 = 1, `\` of row 5 = 2, `b f n` of row
    /// 6 = 4, `r t` of row 7 = 8); 0 for every other byte. Then a byte stops when its class
    /// plus 0x40 has the top bit (0x40, 0x80), and flips when its class is at most 0 as a
    /// signed byte (0, 0x80). The low nibble's table is indexed by the byte itself, which
    /// gives 0 for a byte with the top bit set (none of these). With `NOTE`, `/` is of class
    /// 0: it flips, so that an escaped one stops the loop.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn stops32<const NOTE: bool>(x: __m256i) -> [u32; 3] {
        #[rustfmt::skip]
        let by_high = _mm256_broadcastsi128_si256(_mm_setr_epi8(
            0x40, 0x40, 0x80u8 as i8 | 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0,
        ));
        // Low nibble 2: `"` `b` `r`; 4: `t`; 6: `f`; C: `\`; E: `n`; F: `/`.
        #[rustfmt::skip]
        let by_low = _mm256_broadcastsi128_si256(_mm_setr_epi8(
            0x40, 0x40, 0xc0u8 as i8 | 4 | 8, 0x40, 0x40 | 8, 0x40, 0x40 | 4, 0x40,
            0x40, 0x40, 0x40, 0x40, 0x40 | 2, 0x40, 0x40 | 4, if NOTE { 0x40 } else { 0x40 | 1 },
        ));
        let high = _mm256_and_si256(_mm256_srli_epi16::<4>(x), _mm256_set1_epi8(0x0f));
        let class = _mm256_and_si256(
            _mm256_shuffle_epi8(by_high, high),
            _mm256_shuffle_epi8(by_low, x),
        );
        let bits = |m: __m256i| _mm256_movemask_epi8(m) as u32;
        [
            bits(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'\\' as i8))),
            bits(_mm256_add_epi8(class, _mm256_set1_epi8(0x40))),
            bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(1), class)),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn stops_avx2<const NOTE: bool>(bytes: &[u8; 64]) -> Stops {
        let (lo, hi) = halves(bytes);
        let (lo, hi) = (stops32::<NOTE>(lo), stops32::<NOTE>(hi));
        let join = |k: usize| u64::from(lo[k]) | u64::from(hi[k]) << 32;
        Stops {
            backslash: join(0),
            stops: join(1),
            flips: join(2),
        }
    }

    /// [`quote_in_blocks`](super::quote_in_blocks) with AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(in super::super) unsafe fn quote_in_blocks_avx2(
        b: &[u8],
        from: usize,
    ) -> Result<usize, usize> {
        super::quote_in_blocks(b, from, |bytes| eq_avx2(bytes, b'"'))
    }

    /// [`written_blocks`](super::written_blocks) with AVX2 and BMI1.
    ///
    /// # Safety
    /// The CPU must have AVX2 and BMI1.
    #[target_feature(enable = "avx2,bmi1")]
    pub(in super::super) unsafe fn written_blocks_avx2(body: &[u8]) -> Option<usize> {
        super::written_blocks(body, |bytes| classify_avx2(bytes), |_| {})
    }

    /// [`written_blocks`](super::written_blocks) with AVX2 and BMI1, each block accepted
    /// appended to `out`.
    ///
    /// # Safety
    /// The CPU must have AVX2 and BMI1.
    #[target_feature(enable = "avx2,bmi1")]
    pub(in super::super) unsafe fn copy_written_blocks_avx2(
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        super::written_blocks(
            body,
            |bytes| classify_avx2(bytes),
            |bytes| out.extend_from_slice(bytes),
        )
    }

    /// [`string_written`](super::string_written) with AVX2 (and POPCNT for the escapes
    /// counted, BMI1 for the escapes' masks), from `b[from]`.
    ///
    /// # Safety
    /// The CPU must have AVX2, POPCNT and BMI1.
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    pub(in super::super) unsafe fn string_written_avx2(
        b: &[u8],
        from: usize,
    ) -> (usize, Option<usize>) {
        super::written_to_quote(b, from, Some(|bytes: &[u8; 64]| valid_text_avx2(bytes)))
    }

    /// The masks of a block of a string the validator passed, for
    /// [`written_to_quote`](super::written_to_quote): quotes, backslashes, and `u`s and `/`s
    /// together. A valid string has no control byte and no bad escape, so those masks are
    /// left empty (and the checks on them fold away), where [`classify_avx2`] works them out.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn valid_text_avx2(bytes: &[u8; 64]) -> Block {
        Block {
            quote: eq_avx2(bytes, b'"'),
            backslash: eq_avx2(bytes, b'\\'),
            control: 0,
            not_escapable: 0,
            look: either_avx2(bytes, b'u', b'/'),
        }
    }

    /// The bytes of a block equal to `c` or to `d`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn either_avx2(bytes: &[u8; 64], c: u8, d: u8) -> u64 {
        let (c, d) = (_mm256_set1_epi8(c as i8), _mm256_set1_epi8(d as i8));
        let either = |x| _mm256_or_si256(_mm256_cmpeq_epi8(x, c), _mm256_cmpeq_epi8(x, d));
        let (lo, hi) = halves(bytes);
        mask(either(lo), either(hi))
    }

    /// The bytes of a block equal to `c`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn eq_avx2(bytes: &[u8; 64], c: u8) -> u64 {
        let c = _mm256_set1_epi8(c as i8);
        let (lo, hi) = halves(bytes);
        mask(_mm256_cmpeq_epi8(lo, c), _mm256_cmpeq_epi8(hi, c))
    }

    /// Bit masks of 32 bytes ([`Block`]'s). Which bytes may follow a backslash is looked up
    /// by nibble: each of the nine (`"` `/` of row 2, `\` of row 5, `b f n` of row 6, `r t u`
    /// of row 7) is in the row class its high nibble gives and in the low nibble's set of row
    /// classes.
    #[target_feature(enable = "avx2")]
    fn classify32(x: __m256i) -> [u32; 5] {
        let eq = |c: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8));
        let bits = |m: __m256i| _mm256_movemask_epi8(m) as u32;
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1f)), x);
        // Row classes: row 2 = 1, row 5 = 2, row 6 = 4, row 7 = 8.
        #[rustfmt::skip]
        let by_high = _mm256_broadcastsi128_si256(_mm_setr_epi8(
            0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0,
        ));
        // Low nibble 2: `"` `b` `r`; 4: `t`; 5: `u`; 6: `f`; C: `\`; E: `n`; F: `/`.
        #[rustfmt::skip]
        let by_low = _mm256_broadcastsi128_si256(_mm_setr_epi8(
            0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1,
        ));
        let nibble = _mm256_set1_epi8(0x0f);
        let high = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble);
        let low = _mm256_and_si256(x, nibble);
        let class = _mm256_and_si256(
            _mm256_shuffle_epi8(by_high, high),
            _mm256_shuffle_epi8(by_low, low),
        );
        let not_escapable = _mm256_cmpeq_epi8(class, _mm256_setzero_si256());
        [
            bits(eq(b'"')),
            bits(eq(b'\\')),
            bits(control),
            bits(not_escapable),
            bits(_mm256_or_si256(eq(b'u'), eq(b'/'))),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn classify_avx2(bytes: &[u8; 64]) -> Block {
        let (lo, hi) = halves(bytes);
        let (lo, hi) = (classify32(lo), classify32(hi));
        let join = |k: usize| u64::from(lo[k]) | u64::from(hi[k]) << 32;
        Block {
            quote: join(0),
            backslash: join(1),
            control: join(2),
            not_escapable: join(3),
            look: join(4),
        }
    }

    /// [`count_blocks`](super::count_blocks) with AVX2 (and POPCNT, BMI1).
    ///
    /// # Safety
    /// The CPU must have AVX2, POPCNT and BMI1.
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    pub(in super::super) unsafe fn text_counts_avx2(
        b: &[u8],
        from: usize,
    ) -> (usize, super::TextCounts) {
        super::count_blocks(b, from, |bytes| text_bytes_avx2(bytes))
    }

    /// [`count_blocks`](super::count_blocks) with AVX-512BW (and POPCNT, BMI1): a block's
    /// masks are five compares, where AVX2 takes ten and ten moves of their bytes' top bits.
    ///
    /// # Safety
    /// The CPU must have AVX-512BW, POPCNT and BMI1.
    #[target_feature(enable = "avx512bw,popcnt,bmi1")]
    pub(in super::super) unsafe fn text_counts_avx512(
        b: &[u8],
        from: usize,
    ) -> (usize, super::TextCounts) {
        super::count_blocks(b, from, |bytes| text_bytes_avx512(bytes))
    }

    /// [`text_bytes_avx2`] with AVX-512BW, the block in one register.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn text_bytes_avx512(bytes: &[u8; 64]) -> [u64; 5] {
        // SAFETY: the load reads the 64 bytes of `bytes` and needs no alignment.
        let x = unsafe { _mm512_loadu_si512(bytes.as_ptr().cast::<__m512i>()) };
        let eq = |c: u8| _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(c as i8));
        [
            eq(b'"'),
            eq(b'\\'),
            _mm512_cmplt_epi8_mask(x, _mm512_set1_epi8(-64)),
            eq(b'n'),
            eq(b'u'),
        ]
    }

    /// [`count_blocks`](super::count_blocks) with SSE2 (always present on x86-64).
    #[target_feature(enable = "sse2")]
    pub(in super::super) fn text_counts_sse2(b: &[u8], from: usize) -> (usize, super::TextCounts) {
        super::count_blocks(b, from, |bytes| text_bytes_sse2(bytes))
    }

    /// Quotes, backslashes, continuation bytes (`0x80..=0xBF`: below -64 as signed bytes),
    /// `n`, `u`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn text_bytes_avx2(bytes: &[u8; 64]) -> [u64; 5] {
        let (lo, hi) = halves(bytes);
        let (quote, backslash, n, u) = (
            _mm256_set1_epi8(b'"' as i8),
            _mm256_set1_epi8(b'\\' as i8),
            _mm256_set1_epi8(b'n' as i8),
            _mm256_set1_epi8(b'u' as i8),
        );
        let below = _mm256_set1_epi8(-64);
        [
            mask(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
            mask(
                _mm256_cmpeq_epi8(lo, backslash),
                _mm256_cmpeq_epi8(hi, backslash),
            ),
            mask(_mm256_cmpgt_epi8(below, lo), _mm256_cmpgt_epi8(below, hi)),
            mask(_mm256_cmpeq_epi8(lo, n), _mm256_cmpeq_epi8(hi, n)),
            mask(_mm256_cmpeq_epi8(lo, u), _mm256_cmpeq_epi8(hi, u)),
        ]
    }

    /// [`text_bytes_avx2`] with SSE2, 16 bytes a step.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn text_bytes_sse2(bytes: &[u8; 64]) -> [u64; 5] {
        let mut m = [0u64; 5];
        for (k, part) in bytes.chunks_exact(16).enumerate() {
            // SAFETY: `part` is 16 bytes in bounds; the load needs no alignment.
            let x = unsafe { _mm_loadu_si128(part.as_ptr().cast::<__m128i>()) };
            let bits = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16);
            let eq = |c: u8| bits(_mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8)));
            let cont = bits(_mm_cmplt_epi8(x, _mm_set1_epi8(-64)));
            let masks = [eq(b'"'), eq(b'\\'), cont, eq(b'n'), eq(b'u')];
            for (all, b) in m.iter_mut().zip(masks) {
                *all |= b << (16 * k);
            }
        }
        m
    }

    #[cfg(test)]
    pub(in super::super) fn classify_avx2_checked(bytes: &[u8; 64]) -> Option<Block> {
        // SAFETY: called only where the CPU has AVX2, checked just before.
        std::arch::is_x86_feature_detected!("avx2").then(|| unsafe { classify_avx2(bytes) })
    }

    #[cfg(test)]
    pub(in super::super) fn stops_avx2_checked<const NOTE: bool>(
        bytes: &[u8; 64],
    ) -> Option<Stops> {
        // SAFETY: called only where the CPU has AVX2, checked just before.
        std::arch::is_x86_feature_detected!("avx2").then(|| unsafe { stops_avx2::<NOTE>(bytes) })
    }

    #[cfg(test)]
    pub(in super::super) fn stops_sse2_for_tests<const NOTE: bool>(bytes: &[u8; 64]) -> Stops {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { stops_sse2::<NOTE>(bytes) }
    }
}

/// The longest body [`short_ascii`] looks at.
const SHORT: usize = 64;

/// The text of a short string body that holds no escape and only ASCII (at most [`SHORT`]
/// bytes): the names, ids and times the tools read one by one, most of the strings they
/// decode. `None` for any other body, which the general decoder reads. On so few bytes one
/// pass without an early exit is quicker than a search for backslashes and then a UTF-8
/// check: sixteen bytes a step with SSE2 (the last step overlapping the one before), a
/// body of 8 to 15 bytes as two overlapping `u64`, a shorter one byte by byte.
#[inline]
pub fn short_ascii(body: &[u8]) -> Option<&str> {
    if body.len() > SHORT || !plain_ascii(body) {
        return None;
    }
    // SAFETY: every byte is ASCII (checked just above), so the bytes are valid UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(body) })
}

/// Whether every byte of `body` is ASCII and none is a backslash ([`short_ascii`]).
#[inline]
fn plain_ascii(body: &[u8]) -> bool {
    let n = body.len();
    #[cfg(target_arch = "x86_64")]
    if n >= 16 {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        // A byte's top bit is set when it is not ASCII, and by the compare when it is a
        // backslash.
        let other = |at: usize| {
            let chunk = &body[at..at + 16];
            // SAFETY: SSE2 is part of the x86-64 baseline; the load reads the 16 bytes of
            // `chunk` and needs no alignment.
            unsafe {
                let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
                _mm_movemask_epi8(_mm_or_si128(x, backslash))
            }
        };
        let mut found = other(n - 16);
        let mut at = 0;
        while at + 16 < n {
            found |= other(at);
            at += 16;
        }
        return found == 0;
    }
    if n >= 8 {
        const LO: u64 = 0x0101_0101_0101_0101;
        const HI: u64 = 0x8080_8080_8080_8080;
        let other = |at: usize| {
            let x = u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
            let b = x ^ (LO * u64::from(b'\\'));
            // The top bit of a byte that is not ASCII, or (the classic zero-byte test, whose
            // false hits need a true one below them) of one that is a backslash.
            (x | (b.wrapping_sub(LO) & !b)) & HI
        };
        // Ends in 8-byte words from each end, overlapping when the body is shorter than 16.
        let mut found = other(n - 8);
        let mut at = 0;
        while at + 8 < n {
            found |= other(at);
            at += 8;
        }
        return found == 0;
    }
    let mut other = false;
    for &c in body {
        other |= c >= 0x80 || c == b'\\';
    }
    !other
}

/// Copies `body[from..stop]` to the end of `out` and returns `stop`: the first `"`, `\\` or
/// control byte at or after `from` (`body.len()` when there is none), as
/// [`string_stop`](super::string_stop) finds it. Sixteen bytes a step (SSE2, part of the
/// x86-64 baseline), each step's bytes stored whole into `out`'s spare room before the stop
/// is known: a short stretch (text with an escape every few dozen bytes, which pi-redact
/// decodes) costs no call to `memcpy`.
#[inline]
fn copy_to_stop(body: &[u8], from: usize, out: &mut Vec<u8>) -> usize {
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
        };
        // Each step stores 16 bytes at `out`'s end and keeps at most 16 of them, all taken
        // from `body[from..]`: this much room holds every store.
        out.reserve(body.len().saturating_sub(from) + 16);
        // SAFETY: SSE2 is part of the x86-64 baseline. Each load reads `body[i..i + 16]`, in
        // bounds; each store writes 16 bytes at `out`'s end, inside the room reserved above
        // (the bytes kept so far came from `body[from..i]`); the length grows only over
        // bytes just stored, copies of `body`'s.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let space = _mm_set1_epi8(0x20);
            while let Some(chunk) = body.get(i..i + 16) {
                let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let end = out.as_mut_ptr().add(out.len());
                _mm_storeu_si128(end.cast::<__m128i>(), x);
                let special = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash));
                // c >= 0x20 exactly when max(c, 0x20) == c.
                let printable = _mm_cmpeq_epi8(_mm_max_epu8(x, space), x);
                let stops =
                    (_mm_movemask_epi8(special) | !_mm_movemask_epi8(printable)) as u32 & 0xffff;
                if stops != 0 {
                    let kept = stops.trailing_zeros() as usize;
                    out.set_len(out.len() + kept);
                    return i + kept;
                }
                out.set_len(out.len() + 16);
                i += 16;
            }
        }
    }
    let stop = super::string_stop(body, i);
    out.extend_from_slice(&body[i..stop]);
    stop
}

/// Appends the text of the string body `body` to `out` when `body` holds only the escapes a
/// minimal writer writes (`\" \\ \b \t \n \f \r`, and `\u00xx` in lowercase for another
/// control below U+0020), and pushes to `escapes`, for each escape in
/// order, `out`'s length and the offset in `body` just after it: `true`. `false` at any
/// other escape, a quote or control byte no backslash escapes, or a lone backslash at the
/// end (`out` and `escapes` then hold what was decoded before it).
///
/// With AVX2, 64 bytes a step, every escape in a step decoded before the next: text with an
/// escape every few dozen bytes (what pi-redact keeps) leaves the step loop once a step, not
/// once an escape.
pub fn decode_written(body: &[u8], out: &mut Vec<u8>, escapes: &mut Vec<(usize, usize)>) -> bool {
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    if body.len() >= 64 && x86::avx2_bmi1() {
        // SAFETY: the CPU has AVX2 and BMI1, checked just above.
        match unsafe { x86::decode_written_avx2(body, out, escapes) } {
            Some(stopped) => at = stopped,
            None => return false,
        }
    }
    loop {
        let stop = copy_to_stop(body, at, out);
        let Some(&c) = body.get(stop) else {
            return true;
        };
        let Some((byte, len)) = (c == b'\\')
            .then(|| minimal_escape(&body[stop..]))
            .flatten()
        else {
            return false;
        };
        out.push(byte);
        at = stop + len;
        escapes.push((out.len(), at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`copy_to_stop`] copies what a byte loop finds before the first quote, backslash or
    /// control byte, from every start of texts of every length (each tail of a step).
    #[test]
    fn copy_to_stop_is_the_byte_loop() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let bytes = [b'a', b'"', b'\\', 0x1f, 0x20, 0x7f, 0xc3, 0xa9, b'x', b'n'];
        for len in 0..120 {
            for round in 0..6 {
                let body: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Mostly plain bytes, so that some stretches are long.
                        match state % 40 {
                            k @ 0..=9 => bytes[k as usize],
                            _ => b'p',
                        }
                    })
                    .collect();
                for from in 0..=len {
                    let mut out = vec![7u8; round];
                    let stop = copy_to_stop(&body, from, &mut out);
                    let want = (from..len)
                        .find(|&i| body[i] < 0x20 || body[i] == b'"' || body[i] == b'\\')
                        .unwrap_or(len);
                    assert_eq!(stop, want, "{body:?} from {from}");
                    assert_eq!(&out[..round], &vec![7u8; round][..]);
                    assert_eq!(&out[round..], &body[from..want], "{body:?} from {from}");
                }
            }
        }
    }

    #[test]
    fn decode_written_is_the_byte_loop() {
        // Byte by byte: what `decode_written` must give, its escapes included.
        fn bytewise(body: &[u8]) -> (bool, Vec<u8>, Vec<(usize, usize)>) {
            let (mut out, mut escapes, mut i) = (Vec::new(), Vec::new(), 0);
            while let Some(&c) = body.get(i) {
                if c == b'\\' {
                    let Some((byte, len)) = minimal_escape(&body[i..]) else {
                        return (false, out, escapes);
                    };
                    out.push(byte);
                    i += len;
                    escapes.push((out.len(), i));
                } else if c == b'"' || c < 0x20 {
                    return (false, out, escapes);
                } else {
                    out.push(c);
                    i += 1;
                }
            }
            (true, out, escapes)
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let pieces: [&[u8]; 12] = [
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\t",
            b"\\u001f",
            b"\\u0041",
            b"\\/",
            b"\"",
            b"\x01",
            b"\\",
            "é".as_bytes(),
            b"\\u00",
        ];
        for len in 0..300 {
            for round in 0..8 {
                let mut body = Vec::new();
                while body.len() < len {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // Rounds 0-3 hold only escapes written so (read whole), the others any.
                    let k = state % if round < 4 { 5 } else { 12 } as u64;
                    match state >> 32 & 3 {
                        0 => body.extend_from_slice(pieces[k as usize]),
                        _ => body.extend(std::iter::repeat_n(b'p', (state >> 40) as usize % 70)),
                    }
                }
                for start in [0, 5] {
                    let mut out = vec![b'x'; start];
                    let mut escapes = vec![(1, 1); start.min(1)];
                    let whole = decode_written(&body, &mut out, &mut escapes);
                    let (want_whole, want, want_escapes) = bytewise(&body);
                    let shown = String::from_utf8_lossy(&body);
                    assert_eq!(whole, want_whole, "{shown}");
                    if round < 4 {
                        assert!(whole, "{shown}");
                    }
                    assert_eq!(&out[start..], &want[..], "{shown}");
                    let moved: Vec<_> = want_escapes.iter().map(|&(t, b)| (t + start, b)).collect();
                    assert_eq!(&escapes[start.min(1)..], &moved[..], "{shown}");
                }
            }
        }
    }

    /// The classification byte by byte: what every vector path must give.
    fn classify_bytewise(bytes: &[u8; 64]) -> Block {
        let mask =
            |f: &dyn Fn(u8) -> bool| (0..64).fold(0u64, |m, k| m | (u64::from(f(bytes[k])) << k));
        Block {
            quote: mask(&|c| c == b'"'),
            backslash: mask(&|c| c == b'\\'),
            control: mask(&|c| c < 0x20),
            not_escapable: mask(&|c| !b"\"\\/bfnrtu".contains(&c)),
            look: mask(&|c| c == b'u' || c == b'/'),
        }
    }

    /// The validating block loop's masks byte by byte: what every vector path must give; with
    /// `NOTE`, the noting loop's (`/` flips).
    fn stops_bytewise<const NOTE: bool>(bytes: &[u8; 64]) -> Stops {
        let mask =
            |f: &dyn Fn(u8) -> bool| (0..64).fold(0u64, |m, k| m | (u64::from(f(bytes[k])) << k));
        let steady: &[u8] = if NOTE { b"\"\\bfnrt" } else { b"\"\\/bfnrt" };
        Stops {
            backslash: mask(&|c| c == b'\\'),
            stops: mask(&|c| c == b'"' || c < 0x20),
            flips: mask(&|c| c == b'"' || (c >= 0x20 && !steady.contains(&c))),
        }
    }

    /// Every way the block loop can run here, each checked against the stepwise loop; and
    /// each way the noting loop can, against the stepwise loop and the byte loop's measure of
    /// the escapes passed.
    fn each_path(b: &[u8], i: usize) {
        let want = skip_plain(b, i);
        let show = || String::from_utf8_lossy(b).into_owned();
        let skip = |r: Result<Measured, Error>| r.map(|(end, _)| end);
        assert_eq!(
            skip(blocks::<false>(b, i, stops_bytewise::<false>)),
            want,
            "bytewise, from {i}: {:?}",
            show()
        );
        let noted = want.map(|end| (end, written_plain(&b[..end - 1], i)));
        assert_eq!(
            plain::<true>(b, i),
            noted,
            "noting stepwise, from {i}: {:?}",
            show()
        );
        assert_eq!(
            blocks::<true>(b, i, stops_bytewise::<true>),
            noted,
            "noting bytewise, from {i}: {:?}",
            show()
        );
        #[cfg(target_arch = "x86_64")]
        {
            let sse2 = skip(blocks::<false>(b, i, x86::stops_sse2_for_tests::<false>));
            assert_eq!(sse2, want, "SSE2, from {i}: {:?}", show());
            let sse2 = blocks::<true>(b, i, x86::stops_sse2_for_tests::<true>);
            assert_eq!(sse2, noted, "noting SSE2, from {i}: {:?}", show());
            if x86::stops_avx2_checked::<false>(&[0; 64]).is_some() {
                let stops = |x: &[u8; 64]| x86::stops_avx2_checked::<false>(x).expect("AVX2");
                assert_eq!(
                    skip(blocks::<false>(b, i, stops)),
                    want,
                    "AVX2, from {i}: {:?}",
                    show()
                );
                let stops = |x: &[u8; 64]| x86::stops_avx2_checked::<true>(x).expect("AVX2");
                let avx2 = blocks::<true>(b, i, stops);
                assert_eq!(avx2, noted, "noting AVX2, from {i}: {:?}", show());
            }
        }
        assert_eq!(skip_rest(b, i), want, "skip_rest, from {i}: {:?}", show());
        assert_eq!(skip_long(b, i), want, "skip_long, from {i}: {:?}", show());
        assert_eq!(
            skip_rest_noted(b, i),
            noted,
            "skip_rest_noted, from {i}: {:?}",
            show()
        );
        assert_eq!(
            skip_long_noted(b, i),
            noted,
            "skip_long_noted, from {i}: {:?}",
            show()
        );
    }

    #[test]
    fn vector_classifiers_agree_with_the_bytewise_one() {
        let mut rng = pi_jsonl_gen::Rng::new(20);
        for n in 0..5_000u32 {
            let bytes: [u8; 64] = std::array::from_fn(|k| match n % 3 {
                // Every byte value somewhere.
                0 => (n as usize * 64 + k) as u8,
                _ => rng.below(256) as u8,
            });
            let want = classify_bytewise(&bytes);
            let want_stops = stops_bytewise::<false>(&bytes);
            let want_noting = stops_bytewise::<true>(&bytes);
            #[cfg(target_arch = "x86_64")]
            {
                let sse2 = x86::stops_sse2_for_tests::<false>(&bytes);
                assert_eq!(sse2, want_stops, "{bytes:?}");
                let sse2 = x86::stops_sse2_for_tests::<true>(&bytes);
                assert_eq!(sse2, want_noting, "{bytes:?}");
                if let Some(avx2) = x86::classify_avx2_checked(&bytes) {
                    assert_eq!(avx2, want, "{bytes:?}");
                }
                if let Some(avx2) = x86::stops_avx2_checked::<false>(&bytes) {
                    assert_eq!(avx2, want_stops, "{bytes:?}");
                }
                if let Some(avx2) = x86::stops_avx2_checked::<true>(&bytes) {
                    assert_eq!(avx2, want_noting, "{bytes:?}");
                }
            }
            let _ = (want, want_stops, want_noting);
        }
    }

    #[test]
    fn escaped_bytes_follow_odd_backslash_runs_across_blocks() {
        let mut rng = pi_jsonl_gen::Rng::new(21);
        for _ in 0..2_000 {
            // Four blocks of backslashes, dense enough for long runs.
            let text: Vec<bool> = (0..256).map(|_| rng.below(3) != 0).collect();
            // The stepwise reading: a backslash not itself escaped escapes the next byte.
            let mut want = vec![false; 256];
            let mut escape_next = false;
            for (k, &bs) in text.iter().enumerate() {
                want[k] = escape_next;
                escape_next = bs && !escape_next;
            }
            let (mut carry, mut carry_in_block) = (0, 0);
            for block in 0..4 {
                let bits = (0..64).fold(0u64, |m, k| m | (u64::from(text[block * 64 + k]) << k));
                let got = escaped_bytes(bits, &mut carry);
                // The block loop's: every escaped byte, backslashes too.
                let in_block = escaped_in_block(bits, &mut carry_in_block);
                for k in 0..64 {
                    let escaped = got >> k & 1 == 1;
                    // Escaped backslashes are not marked (they raise nothing either way).
                    if !text[block * 64 + k] {
                        assert_eq!(escaped, want[block * 64 + k], "block {block} byte {k}");
                    }
                    let escaped = in_block >> k & 1 == 1;
                    assert_eq!(escaped, want[block * 64 + k], "in block {block}, byte {k}");
                }
                assert_eq!(carry, carry_in_block, "carry after block {block}");
            }
        }
        // Every text of 16 bits, at each end of a block, with and without a carry in.
        for text in 0..1u64 << 16 {
            for shift in [0, 24, 48] {
                for carried in [0, 1] {
                    let bits = text << shift;
                    let mut escape_next = carried == 1;
                    let mut want = 0u64;
                    for k in 0..64 {
                        if escape_next {
                            want |= 1 << k;
                            escape_next = false;
                        } else {
                            escape_next = bits >> k & 1 == 1;
                        }
                    }
                    let mut carry = carried;
                    assert_eq!(
                        escaped_in_block(bits, &mut carry),
                        want,
                        "{bits:#x} {carried}"
                    );
                    assert_eq!(carry, u64::from(escape_next), "{bits:#x} {carried}");
                }
            }
        }
    }

    /// The `\u` escape read by its digits is the escape read by its value: every pair of
    /// bytes at each digit's place (the others a digit that keeps the rest possible), then
    /// random texts over the bytes that matter, cut at every length.
    #[test]
    fn unicode_escape_by_digits_is_by_value() {
        let check = |body: &[u8]| {
            for cut in 0..=body.len() {
                let b = &body[..cut];
                assert_eq!(
                    unicode_escape(b, 0),
                    unicode_escape_by_value(b, 0),
                    "{:?}",
                    String::from_utf8_lossy(b)
                );
            }
        };
        let bases: [&[u8; 12]; 4] = [
            b"\\u000a\\u0000",
            b"\\ud83d\\ude00",
            b"\\uDBFF\\uDFFF",
            b"\\uD800\\uDC00",
        ];
        for base in bases {
            for i in 2..12 {
                for k in i..12 {
                    for x in 0..=255u8 {
                        for y in [
                            b'0', b'a', b'A', b'd', b'D', b'8', b'c', b'F', b'g', 0x18, x,
                        ] {
                            let mut body = *base;
                            body[i] = x;
                            body[k] = if k == i { x } else { y };
                            check(&body);
                        }
                    }
                }
            }
        }
        let alphabet = b"0189aAbBcCdDeEfFgG\\u\x18\x44\xc4";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            let mut body = [0u8; 12];
            body[0] = b'\\';
            body[1] = b'u';
            for b in &mut body[2..] {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = alphabet[(state % alphabet.len() as u64) as usize];
            }
            if state & 1 == 0 {
                body[6] = b'\\';
                body[7] = b'u';
            }
            check(&body);
        }
    }

    /// `\u` escapes, which the block loop checks where it stops at their `u` and then goes on
    /// in the same block: at every position of two blocks and across their edges, good and
    /// with a bad digit at each place, cut by the end of the text, after runs of one to four
    /// backslashes (an even run escapes no `u`), two or three in one block, and followed in
    /// the same block by what ends the loop (a quote, a control byte, a bad escape) or by
    /// nothing (the string goes on past the block).
    #[test]
    fn unicode_escapes_anywhere_in_a_block() {
        let escapes: &[&[u8]] = &[
            b"\\u0041",
            b"\\u001b",
            b"\\u0008",
            b"\\/",
            b"\\uD83D\\uDE00",
            b"\\uffff",
            b"\\uG041",
            b"\\u0G41",
            b"\\u00G1",
            b"\\u004G",
            b"\\u00\"1",
            b"\\u00\\n",
            b"\\u00\x01",
            b"\\u",
            b"\\u0",
            b"\\u00",
            b"\\u004",
        ];
        let after: &[&[u8]] = &[
            b"\"",
            b"\x02",
            b"\\q",
            b"\\u0041\"",
            b"\\u0041\\u00e9x\"",
            b"zz",
        ];
        let (mut ok, mut bad_escape, mut other) = (0, 0, 0);
        for escape in escapes {
            for run in 1..=4 {
                for at in 0..140 {
                    let mut text = vec![b'a'; at];
                    text.extend(std::iter::repeat_n(b'\\', run - 1));
                    text.extend_from_slice(escape);
                    for tail in after {
                        let mut t = text.clone();
                        t.extend_from_slice(tail);
                        // Ended in the same block, or past it, or cut where the escape ends.
                        for pad in [0, 3, 70] {
                            let mut t = t.clone();
                            t.extend(std::iter::repeat_n(b'b', pad));
                            t.push(b'"');
                            match skip_plain(&t, 0) {
                                Ok(_) => ok += 1,
                                Err(e) if e.kind == ErrorKind::BadEscape => bad_escape += 1,
                                Err(_) => other += 1,
                            }
                            each_path(&t, 0);
                        }
                    }
                    // The text ends inside or right after the escape.
                    for cut in 0..=escape.len() {
                        let t = &text[..text.len() - cut];
                        each_path(t, 0);
                    }
                }
            }
        }
        assert!(
            ok > 10_000 && bad_escape > 10_000 && other > 1_000,
            "{ok} {bad_escape} {other}"
        );
        // A block of `\u` escapes one after the other, a quote or a bad one somewhere after.
        for n in 1..=14 {
            for end in [&b"\""[..], b"\\uG000", b"\x1f", b"\\x"] {
                for before in 0..8 {
                    let mut t = vec![b'c'; before];
                    for k in 0..n {
                        t.extend_from_slice(if k % 2 == 0 { b"\\u00e9" } else { b"\\u001B" });
                    }
                    t.extend_from_slice(end);
                    t.extend(std::iter::repeat_n(b'd', 64));
                    t.push(b'"');
                    each_path(&t, 0);
                }
            }
        }
    }

    /// Motifs (escapes, runs, quotes, control bytes, bad escapes) put at every position around
    /// the first block boundaries, in texts that end right there or a little after.
    #[test]
    fn block_boundaries() {
        let motifs: &[&[u8]] = &[
            b"\"",
            b"\\\"",
            b"\\\\\"",
            b"\\\\\\\"",
            b"\\\\\\\\\"",
            b"\\n\"",
            b"\x01",
            b"\\\x01",
            b"\\\\\x01",
            b"\x1f\"",
            b"\\u0041\"",
            b"\\u00e9x\\\"\"",
            b"\\u00G1\"",
            b"\\u00\"",
            b"\\u\\\"",
            b"\\",
            b"\\\\",
            b"\\q\"",
            b"\\/\"",
            b"\\\\u\"",
            b"\xc3\xa9\\\xc3\"",
        ];
        for motif in motifs {
            for len in [63, 64, 65, 66, 70, 127, 128, 129, 140] {
                for at in 54..len.min(72) {
                    let mut text = vec![b'a'; len];
                    let end = (at + motif.len()).min(len);
                    text[at..end].copy_from_slice(&motif[..end - at]);
                    for i in [0, 1, 2] {
                        each_path(&text, i);
                    }
                    // The string ending exactly at the end of the text.
                    let mut closed = text[..at].to_vec();
                    closed.extend_from_slice(motif);
                    closed.push(b'"');
                    each_path(&closed, 0);
                }
            }
        }
        // A run of backslashes over the boundary, every length and parity.
        for run in 1..=9 {
            for start in 58..66 {
                for after in [&b"\""[..], b"n\"", b"u0041\"", b"\x02"] {
                    let mut text = vec![b'x'; start];
                    text.extend(std::iter::repeat_n(b'\\', run));
                    text.extend_from_slice(after);
                    text.extend_from_slice(&[b'y'; 80]);
                    text.push(b'"');
                    each_path(&text, 0);
                    each_path(&text, 1);
                }
            }
        }
    }

    #[test]
    fn random_strings_agree_with_the_stepwise_loop() {
        let mut rng = pi_jsonl_gen::Rng::new(22);
        let alphabet = b"aaaaaaaa\\\\\\\\\"\"u0Fe/bnrt\x00\x1f\x7f\xc3\xa9\xff ";
        for _ in 0..20_000 {
            let len = rng.below(400) as usize;
            let text: Vec<u8> = (0..len).map(|_| *rng.pick(alphabet)).collect();
            let i = if len > 0 {
                rng.below(len as u64) as usize
            } else {
                0
            };
            each_path(&text, i);
        }
    }

    /// A string's end and whether its text is written as the output writes it, found in one
    /// pass, against the byte loop: strings in a record, of every length around block
    /// boundaries, from pieces written so and pieces not (`\/`, `\u0041`, a control: not
    /// valid, so only for the block loop with the validator's classifier), a quote that ends
    /// them early.
    #[test]
    fn string_written_finds_the_end_and_checks_the_text() {
        let pieces: [&[u8]; 13] = [
            b"a",
            b"\\\\",
            b"\\n",
            b"\\\"",
            b"\\u001b",
            b"\\u001B",
            b"\\u0041",
            b"\n",
            b"\xc3\xa9",
            b"u",
            b"\\/",
            b"/",
            b"\"",
        ];
        let mut rng = pi_jsonl_gen::Rng::new(29);
        let (mut some, mut none) = (0, 0);
        for round in 0..20_000 {
            let mut record = br#"{"k":""#.to_vec();
            while record.len() < 6 + round % 300 {
                let p = if rng.below(30) == 0 {
                    rng.below(13) as usize
                } else {
                    [0, 1, 2, 3, 4, 9][rng.below(6) as usize]
                };
                record.extend_from_slice(pieces[p]);
            }
            record.extend_from_slice(br#"","more":"x\"y"}"#);
            // The byte loop: the first quote no backslash escapes ends the string.
            let mut end = 6;
            while record[end] != b'"' {
                end += if record[end] == b'\\' { 2 } else { 1 };
            }
            let want = written_plain(&record[6..end], 0).map(|added| end - 6 - added);
            let show = || String::from_utf8_lossy(&record).into_owned();
            // `string_written` takes strings the validator passed (it leaves out the checks
            // the validator made): a raw control byte is not one.
            if super::super::validate(&record).is_ok() {
                assert_eq!(string_written(&record, 5), (end + 1, want), "{}", show());
            }
            let bytewise = classify_bytewise;
            assert_eq!(
                written_to_quote(&record, 6, Some(bytewise)),
                (end + 1, want),
                "blocks, byte by byte: {}",
                show()
            );
            assert_eq!(
                written_to_quote(&record, 6, None::<fn(&[u8; 64]) -> Block>),
                (end + 1, want),
                "byte loop: {}",
                show()
            );
            match want {
                Some(_) => some += 1,
                None => none += 1,
            }
        }
        assert!(some > 5_000 && none > 5_000, "{some} written, {none} not");
        // No closing quote: the end of the bytes.
        assert_eq!(string_written(br#""ab\""#, 0).0, 5);
    }

    /// The escape-counting loop over whole blocks, on every path the CPU has, against the byte
    /// loop: bodies of every length around block boundaries from pieces that make runs of
    /// backslashes, escapes cut by a block's or the body's end, `\/`, quotes and controls.
    #[test]
    fn written_len_agrees_with_the_byte_loop() {
        let pieces: [&[u8]; 17] = [
            b"a",
            b"\\",
            b"\\\\",
            b"\\n",
            b"\\\"",
            b"\"",
            b"\\u001b",
            b"\\u001B",
            b"\\u0041",
            b"\\u00",
            b"\n",
            b"\xc3\xa9",
            b"u",
            b"\\/",
            b"\\t\\r",
            b"0",
            b"/",
        ];
        let mut rng = pi_jsonl_gen::Rng::new(23);
        let (mut some, mut none) = (0, 0);
        for round in 0..40_000 {
            let mut body = Vec::new();
            while body.len() < round % 300 {
                // Mostly plain bytes and short escapes, so that many bodies are accepted.
                let p = if rng.below(40) == 0 {
                    rng.below(17) as usize
                } else {
                    [0, 3, 4, 2, 16][rng.below(5) as usize]
                };
                body.extend_from_slice(pieces[p]);
            }
            let want = written_plain(&body, 0);
            let show = || String::from_utf8_lossy(&body).into_owned();
            let bytewise = classify_bytewise;
            assert_eq!(written_blocks(&body, bytewise, |_| {}), want, "{}", show());
            assert_eq!(
                super::super::written_len(&body),
                want.map(|added| body.len() - added),
                "{}",
                show()
            );
            let mut out = b"before".to_vec();
            let copied = copy_written(&body, &mut out);
            assert_eq!(copied, want.map(|added| body.len() - added), "{}", show());
            let mut expect = b"before".to_vec();
            if copied.is_some() {
                expect.extend_from_slice(&body);
            }
            assert_eq!(out, expect, "copied whole, or not at all: {}", show());
            if want.is_some() {
                some += 1;
            } else {
                none += 1;
            }
        }
        assert!(some > 5_000 && none > 5_000, "{some} accepted, {none} not");
        // Runs of backslashes ending exactly at a block's end or at the body's end.
        for len in [1, 2, 3, 62, 63, 64, 65, 66, 127, 128, 129, 192] {
            for run in 1..6 {
                for tail in [&b""[..], b"n", b"u001f", b"x", b"/"] {
                    let mut body = vec![b'a'; len];
                    let start = len.saturating_sub(run);
                    body[start..].fill(b'\\');
                    body.extend_from_slice(tail);
                    let want = written_plain(&body, 0);
                    let got = super::super::written_len(&body);
                    assert_eq!(got, want.map(|a| body.len() - a), "{len} {run} {tail:?}");
                    let mut out = Vec::new();
                    assert_eq!(copy_written(&body, &mut out), got, "{len} {run} {tail:?}");
                    assert_eq!(out.len(), if got.is_some() { body.len() } else { 0 });
                    if tail.is_empty() {
                        assert_eq!(want.is_some(), (len - start) % 2 == 0, "{len} {run}");
                    }
                }
            }
        }
    }

    /// The quote that ends a validated string, over whole blocks then byte by byte as
    /// `Raw`'s walkers do, against a byte loop; strings of every length with runs of
    /// backslashes and escaped quotes anywhere, followed by more text.
    #[test]
    fn quote_in_blocks_finds_the_end_of_the_string() {
        let pieces: [&[u8]; 6] = [b"a", b"\\\"", b"\\\\", b"\\n", b"\\\\\\\"", b"\xc3\xa9"];
        let mut rng = pi_jsonl_gen::Rng::new(24);
        for round in 0..20_000 {
            let mut b = b"\"".to_vec();
            while b.len() < 1 + round % 300 {
                b.extend_from_slice(pieces[rng.below(6) as usize]);
            }
            b.extend_from_slice(b"\",\"more\":\"x\\\"y\"}");
            let mut want = 1;
            while b[want] != b'"' {
                want += if b[want] == b'\\' { 2 } else { 1 };
            }
            let bytewise = |x: &[u8; 64]| classify_bytewise(x).quote;
            let found = quote_in_blocks(&b, 1, bytewise);
            match found {
                Ok(end) => assert_eq!(end, want + 1, "{}", String::from_utf8_lossy(&b)),
                // The quote lies past the whole blocks, for the byte loop to find.
                Err(at) => assert!(want >= at, "{}", String::from_utf8_lossy(&b)),
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                let avx2 = unsafe { x86::quote_in_blocks_avx2(&b, 1) };
                assert_eq!(avx2, found, "AVX2: {}", String::from_utf8_lossy(&b));
            }
        }
    }

    /// The text counts, on every path the CPU has, against decoding the body and counting:
    /// bodies of escapes and multi-byte characters in every order and at every offset of the
    /// 64-byte blocks, and runs of backslashes across a block's end.
    #[test]
    fn text_counts_agree_with_decoding() {
        let mut rng = pi_jsonl_gen::Rng::new(25);
        let mut bodies: Vec<String> = (0..6_000)
            .map(|round| pi_jsonl_gen::mixed_body(&mut rng, round % 200))
            .collect();
        // Continuation bytes at both ends of their range (0x80, 0xBF), at every offset.
        for at in 0..64 {
            bodies.push(format!(
                "{}\u{80}\u{BF}\u{7FF}\u{FFFF}\u{10FFFF}",
                "a".repeat(at)
            ));
        }
        for len in [62, 63, 64, 65, 127, 128] {
            for run in 1..6 {
                for tail in ["n", "u000a", "\"", "/", "ud83d\\ude00"] {
                    let mut body = "a".repeat(len - run.min(len));
                    body.push_str(&"\\\\".repeat(run / 2));
                    if run % 2 == 1 {
                        body.push('\\');
                        body.push_str(tail);
                    }
                    bodies.push(body);
                }
            }
        }
        for body in &bodies {
            let text = super::super::decode_string_body(body.as_bytes());
            let want = TextCounts {
                chars: text.chars().count() as u64,
                line_feeds: text.bytes().filter(|&c| c == b'\n').count() as u64,
            };
            let b = body.as_bytes();
            let end = b.len();
            assert_eq!(
                count_blocks(b, 0, text_bytes_bytewise),
                (end, want),
                "bytewise {body}"
            );
            assert_eq!(text_counts(b), want, "{body}");
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: SSE2 is part of the x86-64 baseline.
                assert_eq!(
                    unsafe { x86::text_counts_sse2(b, 0) },
                    (end, want),
                    "SSE2 {body}"
                );
                if x86::avx2_bmi1() && std::arch::is_x86_feature_detected!("popcnt") {
                    // SAFETY: the CPU has AVX2, BMI1 and POPCNT, checked just above.
                    let avx2 = unsafe { x86::text_counts_avx2(b, 0) };
                    assert_eq!(avx2, (end, want), "AVX2 {body}");
                }
                if x86::avx512bw_bmi1() && std::arch::is_x86_feature_detected!("popcnt") {
                    // SAFETY: the CPU has AVX-512BW, BMI1 and POPCNT, checked just above.
                    let avx512 = unsafe { x86::text_counts_avx512(b, 0) };
                    assert_eq!(avx512, (end, want), "AVX-512 {body}");
                }
            }
            // The string in a record, followed by more strings: its end found as it is counted.
            let record = format!(r#"{{"k":"{body}","more":"x\"y","z":"\\"}}"#);
            let r = record.as_bytes();
            let want_end = 6 + b.len() + 1;
            assert_eq!(string_counts(r, 5), (want_end, want), "in a record: {body}");
            assert_eq!(
                count_blocks(r, 6, text_bytes_bytewise),
                (want_end, want),
                "bytewise, in a record: {body}"
            );
        }
        // Not valid UTF-8 or not a valid body: some count, no panic.
        for bad in [&b"\\"[..], b"\\u12", b"\xff\xbf\\", b"\\ud800\\u"] {
            let _ = text_counts(bad);
            let _ = string_counts(bad, 0);
        }
    }

    #[test]
    fn short_ascii_takes_short_plain_bodies_as_the_decoder_reads_them() {
        let long = "a".repeat(SHORT + 1);
        let bodies: [&[u8]; 9] = [
            b"",
            b"toolCall",
            b"2026-01-01T00:00:00.000Z",
            &long.as_bytes()[1..],
            long.as_bytes(),
            br"a\nb",
            "caf\u{e9}".as_bytes(),
            b"\xff",
            b"x\x00y",
        ];
        let check = |body: &[u8]| {
            // Byte by byte: the same verdict, and the same text as the decoder gives.
            let plain = body.len() <= SHORT && body.iter().all(|&c| c.is_ascii() && c != b'\\');
            let got = short_ascii(body);
            assert_eq!(got.is_some(), plain, "{body:?}");
            if let Some(text) = got {
                assert_eq!(text, super::super::decode_string_body(body), "{body:?}");
            }
        };
        for body in bodies {
            check(body);
        }
        // Every length up to past the limit, one byte that is not plain ASCII at each place
        // (each step's bytes and those the overlapping last step reads twice), or none.
        for len in 0..=SHORT + 2 {
            let body = vec![b'a'; len];
            check(&body);
            for at in 0..len {
                for c in [b'\\', 0x80, 0xff, 0xc3, 0x5b, 0x5d, 0xdc, 0x00, 0x7f] {
                    let mut body = body.clone();
                    body[at] = c;
                    check(&body);
                }
            }
        }
    }
}
