//! Reading JSON text 64 bytes a step: the bytes of a block as bitmasks (bit `k` for byte `k`),
//! and which bytes its backslashes escape, found without a branch per escape.
//!
//! Tool output has an escape every few dozen bytes (`\n`, `\"`, `\u001b`). A loop that stops at
//! each one and starts its vector search again after it pays a mispredicted branch and a reload
//! per escape; masks of whole blocks pay neither. Used where validated text is read again
//! (a string's end, [`super::Raw`]'s walkers) and by the output's check of escaped text.

const EVEN: u64 = 0x5555_5555_5555_5555;
const ODD: u64 = !EVEN;

/// The bytes of a 64-byte block that a backslash escapes, from the block's backslashes and
/// whether its first byte is escaped by the block before; and whether the next block's first
/// byte is escaped.
///
/// In a run of backslashes that no backslash before it escapes, the first escapes the second,
/// the third the fourth, and so on; a run of odd length escapes the byte after it. So the
/// escaped bytes of a run that starts at an even position are those at odd positions (in the
/// run and just after it), and the other way round. Adding a run's start bit to the backslash
/// mask clears the run and sets the bit just after it, which tells each run's bytes apart
/// without a loop.
#[inline]
pub fn escaped(backslashes: u64, first_escaped: bool) -> (u64, bool) {
    let carried = u64::from(first_escaped);
    let b = backslashes & !carried;
    let starts = b & !(b << 1);
    let past_even = b.wrapping_add(starts & EVEN);
    let past_odd = b.wrapping_add(starts & ODD);
    // The bytes of the runs that start at even (odd) positions, and the byte after each.
    let even_runs = (b & !past_even) | (past_even & !b);
    let odd_runs = (b & !past_odd) | (past_odd & !b);
    let escaped = carried | (even_runs & ODD) | (odd_runs & EVEN);
    let escaping = b & !escaped;
    (escaped, escaping >> 63 == 1)
}

/// Whether this CPU runs [`Block`] (AVX2; the answer is cached by the standard library).
#[inline]
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The 64 bytes at `b[i..]`, zeros past the end of `b` (copied into `pad` when the block
/// crosses it), and how many of them are `b`'s.
#[inline]
pub fn bytes_at<'b>(b: &'b [u8], i: usize, pad: &'b mut [u8; 64]) -> (&'b [u8; 64], usize) {
    match b.get(i..i + 64) {
        Some(full) => (full.try_into().expect("64 bytes"), 64),
        None => {
            let rest = &b[i.min(b.len())..];
            pad.fill(0);
            pad[..rest.len()].copy_from_slice(rest);
            (pad, rest.len())
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx2::Block;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };

    /// One 64-byte block as two AVX2 vectors. Only made by [`Block::load`], which needs AVX2,
    /// so its methods may assume it.
    pub struct Block([__m256i; 2]);

    impl Block {
        /// # Safety
        /// The CPU has AVX2 ([`super::available`]).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub unsafe fn load(bytes: &[u8; 64]) -> Block {
            let p = bytes.as_ptr().cast::<__m256i>();
            // SAFETY: both loads read 32 of the 64 bytes of `bytes`; no alignment needed.
            unsafe { Block([_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))]) }
        }

        /// The bytes equal to `c`.
        ///
        /// # Safety
        /// The CPU has AVX2 (a `Block` exists only then).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub fn eq(&self, c: u8) -> u64 {
            let c = _mm256_set1_epi8(c as i8);
            self.mask(|v| _mm256_cmpeq_epi8(v, c))
        }

        /// The bytes below U+0020.
        ///
        /// # Safety
        /// The CPU has AVX2 (a `Block` exists only then).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub fn controls(&self) -> u64 {
            let top = _mm256_set1_epi8(0x1f);
            self.mask(|v| _mm256_cmpeq_epi8(_mm256_min_epu8(v, top), v))
        }

        /// The bytes that are one of `set`.
        ///
        /// # Safety
        /// The CPU has AVX2 (a `Block` exists only then).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub fn any_of(&self, set: &[u8]) -> u64 {
            self.mask(|v| {
                set.iter().fold(_mm256_set1_epi8(0), |acc, &c| {
                    _mm256_or_si256(acc, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8)))
                })
            })
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        fn mask(&self, f: impl Fn(__m256i) -> __m256i) -> u64 {
            let lo = _mm256_movemask_epi8(f(self.0[0])) as u32;
            let hi = _mm256_movemask_epi8(f(self.0[1])) as u32;
            u64::from(lo) | u64::from(hi) << 32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaped bytes one by one, as the definition says.
    fn escaped_one_by_one(backslashes: u64, first_escaped: bool) -> (u64, bool) {
        let mut next_escaped = first_escaped;
        let mut escaped = 0;
        for k in 0..64 {
            let is_escaped = next_escaped;
            escaped |= u64::from(is_escaped) << k;
            next_escaped = !is_escaped && backslashes >> k & 1 == 1;
        }
        (escaped, next_escaped)
    }

    #[test]
    fn escaped_bytes_are_those_of_the_definition() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut masks = vec![0, u64::MAX, EVEN, ODD, 1, 1 << 63, 3 << 62, 7, u64::MAX - 1];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Long runs as well as lone backslashes.
            masks.push(x);
            masks.push(x & x.rotate_left(1) & x.rotate_left(2));
            masks.push(x | x.rotate_left(3));
        }
        for m in masks {
            for first in [false, true] {
                assert_eq!(
                    escaped(m, first),
                    escaped_one_by_one(m, first),
                    "{m:064b} {first}"
                );
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn masks_say_which_bytes_are_which() {
        if !available() {
            return;
        }
        let text: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) % 128).collect();
        let bytes: &[u8; 64] = text.as_slice().try_into().unwrap();
        let one_by_one =
            |f: &dyn Fn(u8) -> bool| (0..64).fold(0u64, |m, k| m | u64::from(f(bytes[k])) << k);
        // SAFETY: AVX2 checked above.
        let block = unsafe { Block::load(bytes) };
        // SAFETY: as above (the methods are AVX2 functions).
        unsafe {
            assert_eq!(block.eq(b'"'), one_by_one(&|c| c == b'"'));
            assert_eq!(block.controls(), one_by_one(&|c| c < 0x20));
            assert_eq!(block.any_of(b"ab\\"), one_by_one(&|c| b"ab\\".contains(&c)));
        }
    }
}
