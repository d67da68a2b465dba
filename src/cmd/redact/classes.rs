//! The byte classes the finders of [`super::find`] start from, read for a whole kept text in
//! one pass of 64-byte blocks (AVX-512BW or AVX2 where the CPU has them, a byte loop
//! otherwise): for each block, a bit per byte for each class. The finders then go from set
//! bit to set bit, where they went from `memchr` hit to `memchr` hit, each kind of site by
//! its own iterator (round 8 measured those iterators and the work at each of their
//! ~500,000 hits on the 10 MB piece at about 80 M instructions; BENCHMARKS.md, round 9).
//!
//! Some site classes are narrowed in the pass itself, so that few bits are left to look at:
//! the bearer pattern's words, `aws` and `password` only where three of their letters stand
//! in order. Each is a superset of what its finder needs (the finder checks every bit it
//! gets), so narrowing drops no site.
//!
//! This file is a candidate for `crates/scan/src/json/strings.rs`, which keeps the other
//! 64-byte block helpers; it is here for now because another helper owns that crate this
//! round.

/// The classes of one 64-byte block: bit `i` stands for the block's byte `i`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Block {
    /// `' '`, `\n`, `\t`: the blanks that cut windows ([`super::find::windows`]).
    pub blank: u64,
    /// `/` or `\`.
    pub separator: u64,
    pub slash: u64,
    /// `@`, or `%` (in a URL, an address's `@` is written `%40`).
    pub at: u64,
    /// Where a path's group can start, or one byte after (a drive's `:`): `/`, `~`, `\`, `:`.
    pub path: u64,
    /// A `\` after one of `/ ~ \ :` (a Windows or UNC path starts with `:\` or `\\`; the
    /// others only make [`super::find::may_hold_path`] look further).
    pub drive: u64,
    /// `=` or `:` (the password pattern's `[=:]`, and where a value follows a credential's
    /// name, [`super::find::keyed_at_sign`]).
    pub sign: u64,
    /// A `-` after a blank: where a command line's option starts
    /// ([`super::commands::keyed_at_option`]).
    pub option: u64,
    /// The `a` of `bea` and the `e` of `oke` (any case): where `bearer` and `token` may have
    /// started two and three bytes before.
    pub bearer: u64,
    /// The `s` of `aws` (any case).
    pub aws: u64,
    /// The `w` of `ssw` (any case): where `password` may have started four bytes before.
    pub ssw: u64,
    /// A blank after a capital letter (`A` to `Z`): where a name written in capitals may end
    /// before its value ([`super::commands::after_capitals`]).
    pub capital_blank: u64,
    /// A blank after `by`, after `key`, after `ase`, after `et`, or after a `t` four bytes
    /// after an `a` (any case): where SQL's `IDENTIFIED BY` may end before a password
    /// ([`super::commands::identified_by`]), `key`, `secret` and `passphrase` before a key
    /// ([`super::find::key_and_value`]), and `net` and `vault` before the word of a command
    /// that gives one ([`super::commands::after_net_or_vault`]). One class for all: each class a
    /// finder goes through costs a look at every block.
    pub word_blank: u64,
    /// A byte of the random-token pattern's class `[A-Za-z0-9+/_=\-]`.
    pub token: u64,
    /// The last of 24 bytes in a row of the class `token` ([`super::find::token_runs`]).
    pub long: u64,
    /// A byte `0xAA` or `0xBF`: the last bytes of the Kelvin sign (`E2 84 AA`) and the long s
    /// (`C5 BF`), which `(?i)` folds with `k` and `s` (and of other characters).
    pub fold: u64,
}

/// The classes of each byte of one block, before the carries between blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bytes {
    blank: u64,
    slash: u64,
    backslash: u64,
    at: u64,
    /// `/ ~ \ :`
    path: u64,
    /// `=` or `:`
    sign: u64,
    /// `-`
    dash: u64,
    /// `A` to `Z`
    capital: u64,
    // Letters, either case.
    a: u64,
    b: u64,
    e: u64,
    k: u64,
    o: u64,
    s: u64,
    t: u64,
    w: u64,
    y: u64,
    /// `0xAA` or `0xBF`
    fold: u64,
    /// `[A-Za-z0-9+/_=\-]`
    token: u64,
    /// Set by [`join`] for the next block: the bytes that end 2, 4 and 8 of `token` in a row.
    token_2_4_8: [u64; 3],
}

/// The classes of a whole text, block by block (the last one padded with bytes of no class).
pub struct Classes {
    pub blocks: Vec<Block>,
}

impl Classes {
    pub fn of(text: &[u8]) -> Classes {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU has AVX-512BW, checked just above, which is all it needs.
                return unsafe { x86::classes_avx512(text) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above, which is all it needs.
                return unsafe { x86::classes_avx2(text) };
            }
        }
        let mut blocks = Vec::with_capacity(text.len().div_ceil(64));
        let mut before = Bytes::default();
        let (whole, last) = blocks_of(text);
        for c in whole.chain(&last) {
            blocks.push(join(&mut before, classify_bytes(c)));
        }
        Classes { blocks }
    }

    /// The positions of the bits `class` picks, in order, from `from` on.
    pub fn iter(&self, class: fn(&Block) -> u64, from: usize) -> impl Iterator<Item = usize> + '_ {
        let mut k = from / 64;
        let mut bits = self
            .blocks
            .get(k)
            .map_or(0, |b| class(b) & (!0u64 << (from % 64)));
        std::iter::from_fn(move || loop {
            if bits != 0 {
                let at = k * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                return Some(at);
            }
            k += 1;
            bits = class(self.blocks.get(k)?);
        })
    }

    /// The first bit `class` picks in `from..to`.
    pub fn first(&self, class: fn(&Block) -> u64, from: usize, to: usize) -> Option<usize> {
        self.iter(class, from).next().filter(|&i| i < to)
    }

    /// The last bit `class` picks in `from..to`.
    pub fn last(&self, class: fn(&Block) -> u64, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut k = (to - 1) / 64;
        // The bits of block `k` below `to`.
        let mut bits = class(self.blocks.get(k)?) & (!0u64 >> (63 - (to - 1) % 64));
        loop {
            if bits != 0 {
                let at = k * 64 + 63 - bits.leading_zeros() as usize;
                return (at >= from).then_some(at);
            }
            if k == 0 || k * 64 <= from {
                return None;
            }
            k -= 1;
            bits = class(&self.blocks[k]);
        }
    }
}

/// The 64-byte blocks of `text`: the whole ones, and the rest padded with zeros (a byte of
/// no class), if any.
fn blocks_of(text: &[u8]) -> (impl Iterator<Item = &[u8; 64]>, Option<[u8; 64]>) {
    let chunks = text.chunks_exact(64);
    let rest = chunks.remainder();
    let mut last = [0u8; 64];
    last[..rest.len()].copy_from_slice(rest);
    let whole = chunks.map(|c| c.try_into().expect("64 bytes"));
    (whole, (!rest.is_empty()).then_some(last))
}

/// `now`'s bits moved up by `n` (`n` < 64), the top `n` bits of `before` coming in below.
fn up(now: u64, before: u64, n: u32) -> u64 {
    now << n | before >> (64 - n)
}

/// A block's classes, from its bytes' (`now`) and the block's before it (`before`, which
/// becomes `now`).
#[inline(always)]
fn join(before: &mut Bytes, now: Bytes) -> Block {
    let after = |f: fn(&Bytes) -> u64, n| up(f(&now), f(before), n);
    let bea = now.a & after(|b| b.e, 1) & after(|b| b.b, 2);
    let oke = now.e & after(|b| b.k, 1) & after(|b| b.o, 2);
    let drive = now.backslash & after(|b| b.path, 1);
    let aws = now.s & after(|b| b.w, 1) & after(|b| b.a, 2);
    let ssw = now.w & after(|b| b.s, 1) & after(|b| b.s, 2);
    let before_blank = before.blank;
    let before_capital = before.capital;
    let by = after(|b| b.y, 1) & after(|b| b.b, 2);
    let net_vault = after(|b| b.t, 1) & (after(|b| b.e, 2) | after(|b| b.a, 4));
    let key = after(|b| b.y, 1) & after(|b| b.e, 2) & after(|b| b.k, 3);
    let phrase = after(|b| b.e, 1) & after(|b| b.s, 2) & after(|b| b.a, 3);
    // Runs of tokens: the bytes that end 2, 4, 8, 16 and then 24 of them in a row.
    let [two, four, eight] = before.token_2_4_8;
    let r2 = now.token & up(now.token, before.token, 1);
    let r4 = r2 & up(r2, two, 2);
    let r8 = r4 & up(r4, four, 4);
    let r16 = r8 & up(r8, eight, 8);
    let long = r16 & up(r8, eight, 16);
    *before = now;
    before.token_2_4_8 = [r2, r4, r8];
    Block {
        blank: now.blank,
        separator: now.slash | now.backslash,
        slash: now.slash,
        at: now.at,
        path: now.path,
        drive,
        sign: now.sign,
        option: now.dash & up(now.blank, before_blank, 1),
        bearer: bea | oke,
        aws,
        ssw,
        capital_blank: now.blank & up(now.capital, before_capital, 1),
        word_blank: now.blank & (by | net_vault | key | phrase),
        token: now.token,
        long,
        fold: now.fold,
    }
}

/// The classes of one block's bytes, byte by byte (the fallback, and the tests' oracle).
fn classify_bytes(bytes: &[u8; 64]) -> Bytes {
    let mut c = Bytes::default();
    for (i, &x) in bytes.iter().enumerate() {
        let bit = 1u64 << i;
        let lower = x | 0x20;
        let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
        set(&mut c.blank, matches!(x, b' ' | b'\n' | b'\t'));
        set(&mut c.slash, x == b'/');
        set(&mut c.backslash, x == b'\\');
        set(&mut c.at, x == b'@' || x == b'%');
        set(&mut c.path, matches!(x, b'/' | b'~' | b'\\' | b':'));
        set(&mut c.sign, matches!(x, b'=' | b':'));
        set(&mut c.dash, x == b'-');
        set(&mut c.capital, x.is_ascii_uppercase());
        set(&mut c.a, lower == b'a');
        set(&mut c.b, lower == b'b');
        set(&mut c.e, lower == b'e');
        set(&mut c.k, lower == b'k');
        set(&mut c.o, lower == b'o');
        set(&mut c.s, lower == b's');
        set(&mut c.t, lower == b't');
        set(&mut c.w, lower == b'w');
        set(&mut c.y, lower == b'y');
        set(&mut c.fold, matches!(x, 0xaa | 0xbf));
        set(
            &mut c.token,
            x.is_ascii_alphanumeric() || b"+/_=-".contains(&x),
        );
    }
    c
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The block classifier with AVX-512BW and with AVX2.

    use super::{blocks_of, join, Bytes, Classes};
    use std::arch::x86_64::*;

    /// [`Classes::of`] with AVX2: each block as two 32-byte vectors, a compare per byte
    /// value, and a `movemask` of each half per class, the two joined into its bits. The
    /// loop is written here, not given a closure: a closure is compiled without the feature.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn classes_avx2(text: &[u8]) -> Classes {
        let mut blocks = Vec::with_capacity(text.len().div_ceil(64));
        let mut before = Bytes::default();
        let (whole, last) = blocks_of(text);
        for c in whole {
            blocks.push(join(&mut before, classify_avx2(c)));
        }
        if let Some(c) = &last {
            blocks.push(join(&mut before, classify_avx2(c)));
        }
        Classes { blocks }
    }

    /// [`Classes::of`] with AVX-512BW: each block one 64-byte vector, each class one
    /// compare (or a few) straight into its 64 bits.
    ///
    /// # Safety
    /// The CPU must have AVX-512BW.
    #[target_feature(enable = "avx512bw")]
    pub(super) unsafe fn classes_avx512(text: &[u8]) -> Classes {
        let mut blocks = Vec::with_capacity(text.len().div_ceil(64));
        let mut before = Bytes::default();
        let (whole, last) = blocks_of(text);
        for c in whole {
            blocks.push(join(&mut before, classify_avx512(c)));
        }
        if let Some(c) = &last {
            blocks.push(join(&mut before, classify_avx512(c)));
        }
        Classes { blocks }
    }

    /// [`super::classify_bytes`] with AVX-512BW.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    pub(super) fn classify_avx512(bytes: &[u8; 64]) -> Bytes {
        // SAFETY: the load reads the 64 bytes of `bytes` and needs no alignment.
        let v = unsafe { _mm512_loadu_si512(bytes.as_ptr().cast::<__m512i>()) };
        let lower = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
        let letters = within512(lower, b'a', b'z');
        let digits = within512(v, b'0', b'9');
        let slash = eq512(v, b'/');
        let backslash = eq512(v, b'\\');
        let colon = eq512(v, b':');
        let equals = eq512(v, b'=');
        let dash = eq512(v, b'-');
        Bytes {
            blank: eq512(v, b' ') | eq512(v, b'\t') | eq512(v, b'\n'),
            slash,
            backslash,
            at: eq512(v, b'@') | eq512(v, b'%'),
            path: slash | eq512(v, b'~') | backslash | colon,
            sign: equals | colon,
            dash,
            capital: within512(v, b'A', b'Z'),
            a: eq512(lower, b'a'),
            b: eq512(lower, b'b'),
            e: eq512(lower, b'e'),
            k: eq512(lower, b'k'),
            o: eq512(lower, b'o'),
            s: eq512(lower, b's'),
            t: eq512(lower, b't'),
            w: eq512(lower, b'w'),
            y: eq512(lower, b'y'),
            fold: eq512(v, 0xaa) | eq512(v, 0xbf),
            token: letters | digits | eq512(v, b'+') | slash | eq512(v, b'_') | equals | dash,
            token_2_4_8: [0; 3],
        }
    }

    /// The bytes of `v` equal to `c`.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn eq512(v: __m512i, c: u8) -> u64 {
        _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8))
    }

    /// The bytes of `v` from `first` to `last`: `x - first` is at most `last - first` (bytes
    /// compared unsigned).
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn within512(v: __m512i, first: u8, last: u8) -> u64 {
        let from = _mm512_sub_epi8(v, _mm512_set1_epi8(first as i8));
        _mm512_cmple_epu8_mask(from, _mm512_set1_epi8((last - first) as i8))
    }

    /// [`super::classify_bytes`] with AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn classify_avx2(bytes: &[u8; 64]) -> Bytes {
        // SAFETY: both loads read 32 bytes inside `bytes` (offsets 0 and 32 of 64) and need
        // no alignment.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(bytes.as_ptr().add(32).cast::<__m256i>()),
            )
        };
        let lower = _mm256_set1_epi8(0x20);
        let (lo_lower, hi_lower) = (_mm256_or_si256(lo, lower), _mm256_or_si256(hi, lower));
        Bytes {
            blank: bits(blank(lo), blank(hi)),
            slash: bits(eq(lo, b'/'), eq(hi, b'/')),
            backslash: bits(eq(lo, b'\\'), eq(hi, b'\\')),
            at: bits(either(lo, b'@', b'%'), either(hi, b'@', b'%')),
            path: bits(path(lo), path(hi)),
            sign: bits(either(lo, b'=', b':'), either(hi, b'=', b':')),
            dash: bits(eq(lo, b'-'), eq(hi, b'-')),
            capital: bits(within(lo, b'A', b'Z'), within(hi, b'A', b'Z')),
            a: bits(eq(lo_lower, b'a'), eq(hi_lower, b'a')),
            b: bits(eq(lo_lower, b'b'), eq(hi_lower, b'b')),
            e: bits(eq(lo_lower, b'e'), eq(hi_lower, b'e')),
            k: bits(eq(lo_lower, b'k'), eq(hi_lower, b'k')),
            o: bits(eq(lo_lower, b'o'), eq(hi_lower, b'o')),
            s: bits(eq(lo_lower, b's'), eq(hi_lower, b's')),
            t: bits(eq(lo_lower, b't'), eq(hi_lower, b't')),
            w: bits(eq(lo_lower, b'w'), eq(hi_lower, b'w')),
            y: bits(eq(lo_lower, b'y'), eq(hi_lower, b'y')),
            fold: bits(either(lo, 0xaa, 0xbf), either(hi, 0xaa, 0xbf)),
            token: bits(token(lo, lo_lower), token(hi, hi_lower)),
            token_2_4_8: [0; 3],
        }
    }

    /// The bits of a class, given each half's bytes (0xff: in the class). Passed through an
    /// empty `asm!` that LLVM cannot see through: with [`super::join`]'s shifts and `&`s
    /// after them in one function, LLVM took the compares' bits as 64-lane vectors of
    /// booleans and extracted them a byte at a time (1,200 instructions a block).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn bits(lo: __m256i, hi: __m256i) -> u64 {
        let mut b = u64::from(_mm256_movemask_epi8(lo) as u32)
            | u64::from(_mm256_movemask_epi8(hi) as u32) << 32;
        // SAFETY: an empty template: no instruction, no memory, the value unchanged.
        unsafe { std::arch::asm!("/* {0} */", inout(reg) b, options(pure, nomem, nostack)) };
        b
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn eq(v: __m256i, c: u8) -> __m256i {
        _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn either(v: __m256i, a: u8, b: u8) -> __m256i {
        _mm256_or_si256(eq(v, a), eq(v, b))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn blank(v: __m256i) -> __m256i {
        _mm256_or_si256(either(v, b' ', b'\t'), eq(v, b'\n'))
    }

    /// `[A-Za-z0-9+/_=\-]`, given the bytes and the bytes with `0x20` set (`a` to `z` for
    /// letters of either case).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn token(v: __m256i, lower: __m256i) -> __m256i {
        let alnum = _mm256_or_si256(within(lower, b'a', b'z'), within(v, b'0', b'9'));
        let signs = _mm256_or_si256(either(v, b'+', b'/'), either(v, b'_', b'='));
        _mm256_or_si256(alnum, _mm256_or_si256(signs, eq(v, b'-')))
    }

    /// The bytes of `v` from `first` to `last`: `x - first` is at most `last - first` (bytes
    /// compared unsigned).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn within(v: __m256i, first: u8, last: u8) -> __m256i {
        let from = _mm256_sub_epi8(v, _mm256_set1_epi8(first as i8));
        _mm256_cmpeq_epi8(
            _mm256_min_epu8(from, _mm256_set1_epi8((last - first) as i8)),
            from,
        )
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn path(v: __m256i) -> __m256i {
        _mm256_or_si256(either(v, b'/', b'~'), either(v, b'\\', b':'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every byte value, in random orders and runs.
    fn blocks(n: usize) -> Vec<[u8; 64]> {
        let mut rng = pi_jsonl_gen::Rng::new(9);
        let common =
            b" \n\t\r\x0b\x0c/\\@~:=\"'dtnyhDTNYHabekoswABEKOSW09+_-aaaaaaaaaaaaaaa\x80\xaa\xbf\xe2\x84\xc5\xff\x1f!`{";
        (0..n)
            .map(|_| {
                let mut b = [0u8; 64];
                for x in &mut b {
                    *x = if rng.below(2) == 0 {
                        rng.below(256) as u8
                    } else {
                        *rng.pick(common)
                    };
                }
                b
            })
            .collect()
    }

    /// The vector classifiers' answers, those the CPU can run.
    fn classify(b: &[u8; 64]) -> Vec<Bytes> {
        let mut answers = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                answers.push(unsafe { x86::classify_avx2(b) });
            }
            if std::arch::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU has AVX-512BW, checked just above.
                answers.push(unsafe { x86::classify_avx512(b) });
            }
        }
        answers
    }

    #[test]
    fn the_fast_classifiers_are_the_byte_loop() {
        let mut checked = 0;
        for b in blocks(5000) {
            for fast in classify(&b) {
                assert_eq!(fast, classify_bytes(&b), "{b:?}");
                checked += 1;
            }
        }
        for x in 0..=255u8 {
            let b = [x; 64];
            for fast in classify(&b) {
                assert_eq!(fast, classify_bytes(&b), "{x}");
            }
        }
        // Each one the CPU has was checked on every block.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            assert!(checked >= 5000, "{checked}");
        }
    }

    #[test]
    fn bits_found_forward_and_back() {
        let text: Vec<u8> = blocks(8).concat();
        let c = Classes::of(&text[..500]);
        let slash: Vec<usize> = (0..500).filter(|&i| text[i] == b'/').collect();
        assert_eq!(c.iter(|b| b.slash, 0).collect::<Vec<_>>(), slash);
        for from in 0..=500 {
            for to in (from..=500).step_by(7) {
                let inside = || slash.iter().copied().filter(|&i| from <= i && i < to);
                assert_eq!(c.first(|b| b.slash, from, to), inside().next());
                assert_eq!(c.last(|b| b.slash, from, to), inside().next_back());
            }
        }
    }

    /// Each class of [`Classes::of`] is what its doc says, byte by byte, over texts of any
    /// length (the block edges and the padded last block included).
    #[test]
    fn each_class_is_its_definition() {
        let mut text: Vec<u8> = blocks(40).concat();
        // The words the classes of several letters look for, which random bytes seldom
        // spell, across a block's edge too.
        let words =
            b" Bearer token aws passWord by  Key KEY\tkey\n secret net\tvault monkey\tbY PASSPHRASE case\n";
        text.splice(2500..2500, words.iter().copied());
        let lower = |i: usize| text[i] | 0x20;
        let word = |i: usize, w: &[u8]| {
            (0..w.len()).all(|k| i + k >= w.len() - 1 && lower(i + k + 1 - w.len()) == w[k])
        };
        for len in [0, 1, 63, 64, 65, 130, 1000, text.len()] {
            let c = Classes::of(&text[..len]);
            let bits = |class: fn(&Block) -> u64| c.iter(class, 0).collect::<Vec<_>>();
            let want = |f: &dyn Fn(usize) -> bool| (0..len).filter(|&i| f(i)).collect::<Vec<_>>();
            let is = |i: usize, set: &[u8]| set.contains(&text[i]);
            assert_eq!(bits(|b| b.blank), want(&|i| is(i, b" \n\t")));
            assert_eq!(bits(|b| b.separator), want(&|i| is(i, b"/\\")));
            assert_eq!(bits(|b| b.slash), want(&|i| is(i, b"/")));
            assert_eq!(bits(|b| b.at), want(&|i| is(i, b"@%")));
            assert_eq!(bits(|b| b.path), want(&|i| is(i, b"/~\\:")));
            let drive = |i: usize| i > 0 && text[i] == b'\\' && is(i - 1, b"/~\\:");
            assert_eq!(bits(|b| b.drive), want(&drive));
            assert_eq!(bits(|b| b.sign), want(&|i| is(i, b"=:")));
            let option = |i: usize| i > 0 && text[i] == b'-' && is(i - 1, b" \n\t");
            assert_eq!(bits(|b| b.option), want(&option));
            let bearer = |i: usize| i >= 2 && (word(i, b"bea") || word(i, b"oke"));
            assert_eq!(bits(|b| b.bearer), want(&bearer));
            assert_eq!(bits(|b| b.aws), want(&|i| i >= 2 && word(i, b"aws")));
            let capital_blank =
                |i: usize| i > 0 && is(i, b" \n\t") && text[i - 1].is_ascii_uppercase();
            assert_eq!(bits(|b| b.capital_blank), want(&capital_blank));
            let word_blank = |i: usize| {
                let at = |back: usize, c: u8| i >= back && text[i - back] | 0x20 == c;
                let by = at(1, b'y') && at(2, b'b');
                let net_vault = at(1, b't') && (at(2, b'e') || at(4, b'a'));
                let key = at(1, b'y') && at(2, b'e') && at(3, b'k');
                let phrase = at(1, b'e') && at(2, b's') && at(3, b'a');
                is(i, b" \n\t") && (by || net_vault || key || phrase)
            };
            assert_eq!(bits(|b| b.word_blank), want(&word_blank));
            assert_eq!(bits(|b| b.fold), want(&|i| is(i, &[0xaa, 0xbf])));
            let token = |i: usize| text[i].is_ascii_alphanumeric() || is(i, b"+/_=-");
            assert_eq!(bits(|b| b.token), want(&token));
            let long = |i: usize| i >= 23 && (i - 23..=i).all(token);
            assert_eq!(bits(|b| b.long), want(&long));
        }
    }

    #[test]
    fn classes_across_blocks() {
        let mut text = vec![b'x'; 200];
        text[62..65].copy_from_slice(b"bea");
        text[126..129].copy_from_slice(b"OKE");
        text[191] = b':';
        text[192] = b'\\';
        let c = Classes::of(&text);
        assert_eq!(c.iter(|b| b.bearer, 0).collect::<Vec<_>>(), vec![64, 128]);
        assert_eq!(c.iter(|b| b.drive, 0).collect::<Vec<_>>(), vec![192]);
    }
}
