//! Whether a string body is already escaped the way [`super::write_str`] escapes, and the
//! length of the text it stands for: the test pi-tools makes of every result text it copies
//! through (most of its reader's own work, on the thread that must keep order).
//!
//! With AVX2 the body is read 64 bytes a step ([`crate::json::block`]): its escaped bytes come
//! from a mask of its backslashes, and the checks (no unescaped quote or control, only the
//! escapes `write_str` writes) are masks compared once per block. Only `\u` escapes, rarer,
//! are checked one by one. Elsewhere, one escape at a time.

#[cfg(target_arch = "x86_64")]
use crate::json::block::{self, Block};

/// See [`super::escaped_as_written`]; `body` is valid UTF-8.
pub(super) fn escaped_as_written(body: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if block::available() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { blocks(body) };
    }
    scalar(body)
}

/// The same answer one escape at a time, on any CPU.
pub(super) fn scalar(body: &[u8]) -> Option<usize> {
    let mut len = body.len();
    let mut i = 0;
    loop {
        // In a validated body the scanner's string loop stops only at backslashes (quotes and
        // controls are escaped); inline, it is quicker than a `memchr` call per escape.
        let j = crate::json::string_stop(body, i);
        let Some(&c) = body.get(j) else { break };
        if c != b'\\' {
            return None;
        }
        match *body.get(j + 1)? {
            b'"' | b'\\' | b'b' | b't' | b'n' | b'f' | b'r' => {
                len -= 1;
                i = j + 2;
            }
            b'u' => {
                unicode_escape(body, j + 2)?;
                len -= 5;
                i = j + 6;
            }
            _ => return None,
        }
    }
    Some(len)
}

/// The four hex digits of a `\u` escape at `body[at..]`, when they are what `write_str` writes:
/// `00xx` in lowercase, for a control character that has no short escape.
fn unicode_escape(body: &[u8], at: usize) -> Option<()> {
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let [b'0', b'0', hi, lo] = *body.get(at..at + 4)? else {
        return None;
    };
    let c = hex(hi)? << 4 | hex(lo)?;
    (c < 0x20 && !matches!(c, 0x08 | b'\t' | b'\n' | 0x0c | b'\r')).then_some(())
}

/// [`escaped_as_written`] 64 bytes a step.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blocks(body: &[u8]) -> Option<usize> {
    let mut len = body.len();
    let mut carry = false;
    let mut pad = [0u8; 64];
    for at in (0..body.len()).step_by(64) {
        // Past the end of the body the block is zeros: a zero that a backslash escapes fails
        // the letters' check below, as a body that ends inside an escape must.
        let (bytes, n) = block::bytes_at(body, at, &mut pad);
        // SAFETY: the CPU has AVX2 (this function's contract).
        let block = unsafe { Block::load(bytes) };
        let inside = u64::MAX >> (64 - n);
        let backslashes = block.eq(b'\\');
        let (escaped, next) = block::escaped(backslashes, carry);
        carry = next;
        if (block.eq(b'"') | block.controls()) & !escaped & inside != 0 {
            return None;
        }
        let letters = escaped & !backslashes;
        if letters != 0 {
            if letters & !block.any_of(b"\"\\btnfru") != 0 {
                return None;
            }
            let mut unicode = letters & block.eq(b'u');
            while unicode != 0 {
                unicode_escape(body, at + unicode.trailing_zeros() as usize + 1)?;
                unicode &= unicode - 1;
                len -= 4;
            }
        }
        len -= escaped.count_ones() as usize;
    }
    // A backslash at the very end of a body of whole blocks escapes nothing.
    (!carry).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies of every length around block boundaries, from pieces that make runs of
    /// backslashes, escapes cut by the end, quotes and controls escaped and not: the fast
    /// answer is the one-at-a-time answer.
    #[test]
    fn blocks_answer_as_the_scalar_loop() {
        let pieces: [&[u8]; 16] = [
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
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut some, mut none) = (0, 0);
        for round in 0..40_000 {
            let mut body = Vec::new();
            let target = round % 200;
            while body.len() < target {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly plain bytes and short escapes, so that many bodies are accepted.
                let p = if x.is_multiple_of(40) {
                    (x >> 8) as usize % 16
                } else {
                    [0, 3, 4, 2][(x >> 8) as usize % 4]
                };
                body.extend_from_slice(pieces[p]);
            }
            let want = scalar(&body);
            assert_eq!(
                escaped_as_written(&body),
                want,
                "{}",
                String::from_utf8_lossy(&body)
            );
            if want.is_some() {
                some += 1
            } else {
                none += 1
            }
        }
        assert!(some > 5_000 && none > 5_000, "{some} accepted, {none} not");
    }

    /// Runs of backslashes that end exactly at a block's end or at the body's end.
    #[test]
    fn backslash_runs_at_the_ends_of_blocks() {
        for len in [1, 2, 3, 62, 63, 64, 65, 66, 127, 128, 129, 192] {
            for run in 1..6 {
                for tail in [&b""[..], b"n", b"u001f", b"x"] {
                    let mut body = vec![b'a'; len];
                    let start = len.saturating_sub(run);
                    body[start..].fill(b'\\');
                    body.extend_from_slice(tail);
                    let want = scalar(&body);
                    assert_eq!(escaped_as_written(&body), want, "{len} {run} {tail:?}");
                    if tail.is_empty() {
                        assert_eq!(want.is_some(), (len - start) % 2 == 0, "{len} {run}");
                    }
                }
            }
        }
    }
}
