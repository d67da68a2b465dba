//! The residual scan: before a rewritten line is written, it must hold none of the input
//! strings that were replaced on it (outside the text it copies on purpose: ids, names, keys)
//! and none of the secrets the user named. A line that does is not written.

use super::rewrite::LineCheck;
use crate::json;
use crate::output::write_str;
use memchr::memmem;

/// The shortest replaced string the scan looks for (shorter ones occur by chance: `main`,
/// `true`).
pub const MIN_LEN: usize = 8;

/// The first input string that survived in `line`, if any, as it is written there: a
/// replaced string (escaped as a JSON string body) found outside the ranges copied on
/// purpose, or a named secret found anywhere. `record` is the input record (the replaced texts
/// of `check.replaced_in_record` are its slices).
pub fn residual(
    line: &[u8],
    check: &LineCheck,
    secrets: &[String],
    record: &[u8],
) -> Option<Vec<u8>> {
    let mut escaped = Vec::new();
    let mut survives = |s: &str| {
        // Escaping never shortens a string: one longer than the line cannot be in it (most
        // replaced texts are, once their placeholders are written: this saves escaping them).
        if s.len() > line.len() || s.chars().nth(MIN_LEN - 1).is_none() {
            return None;
        }
        // Nor is one whose start is not in it (its start up to the first byte escaping
        // changes is written as it is).
        let start = &s.as_bytes()[..json::string_stop(s.as_bytes(), 0).min(QUICK)];
        if absent(line, start) {
            return None;
        }
        escaped.clear();
        write_str(&mut escaped, s);
        let body = &escaped[1..escaped.len() - 1];
        let found = occurrences(line, body).any(|at| {
            !check
                .kept
                .iter()
                .any(|&(a, b)| a <= at && at + body.len() <= b)
        });
        found.then(|| body.to_vec())
    };
    for s in &check.replaced {
        if let Some(found) = survives(s) {
            return Some(found);
        }
    }
    for &(a, b, chars) in &check.replaced_in_record {
        // A character takes a byte or more: a text of more characters than the line has bytes
        // is not in it (nor decoded).
        let Some(body) = record.get(a..b).filter(|_| chars <= line.len() as u64) else {
            continue;
        };
        // The text as written starts with its body up to the first escape, as far as that is
        // UTF-8: a line without that start cannot hold it (most lines: no need to decode).
        let start = &body[..memchr::memchr(b'\\', body).unwrap_or(body.len()).min(QUICK)];
        let start = match std::str::from_utf8(start) {
            Ok(_) => start,
            Err(e) => &start[..e.valid_up_to()],
        };
        if absent(line, start) {
            continue;
        }
        if let Some(found) = survives(&json::decode_string_body(body)) {
            return Some(found);
        }
    }
    secrets
        .iter()
        .find(|s| memmem::find(line, s.as_bytes()).is_some())
        .map(|s| s.as_bytes().to_vec())
}

/// At most this many bytes of the start of a replaced string are looked for first.
const QUICK: usize = 64;

/// Whether the start of a string (`start`, empty when unknown) is found nowhere in `line`.
fn absent(line: &[u8], start: &[u8]) -> bool {
    !start.is_empty() && occurrences(line, start).next().is_none()
}

/// Where `needle` (not empty) occurs in `line`, in order. Lines are short once their texts
/// are replaced, and needles many (most not in the line): a place is a candidate where two
/// of the needle's bytes, its first and the last of its first [`QUICK`], are where they would
/// be, both looked for at once 32 bytes a step. That costs nothing to prepare (a `memmem`
/// searcher built for each needle costs more than the search; picking the pair by the bytes'
/// rarity cost more than it saved on the generated sessions). Its first byte alone, the earlier
/// rule, left ~45 candidates per text on the corpus' lines, each compared: the check took 23 %
/// of pi-redact's instructions there, now 11 %.
fn occurrences<'a>(line: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let pair = PairSearch::new(needle);
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + pair.find(line.get(from..)?, needle)?;
        from = at + 1;
        Some(at)
    })
}

/// The search [`occurrences`] makes for one needle: by a pair of its bytes where the CPU has
/// AVX2 (the `memchr` crate's packed-pair searcher), else by its first byte.
struct PairSearch {
    #[cfg(target_arch = "x86_64")]
    pair: Option<memchr::arch::x86_64::avx2::packedpair::Finder>,
}

impl PairSearch {
    fn new(needle: &[u8]) -> PairSearch {
        #[cfg(target_arch = "x86_64")]
        {
            use memchr::arch::{all::packedpair::Pair, x86_64::avx2::packedpair::Finder};
            let last = needle.len().min(QUICK) - 1;
            let pair = Pair::with_indices(needle, 0, last as u8)
                .and_then(|p| Finder::with_pair(needle, p));
            PairSearch { pair }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = needle;
            PairSearch {}
        }
    }

    /// The first place of `needle` in `hay`.
    fn find(&self, hay: &[u8], needle: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self
            .pair
            .as_ref()
            .filter(|f| hay.len() >= f.min_haystack_len())
        {
            return f.find(hay, needle);
        }
        memchr::memchr_iter(needle[0], hay).find(|&at| hay[at..].starts_with(needle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every place of the needle, in order, overlapping ones too, whichever search runs (the
    /// pair's for haystacks of its minimum length and more, the first byte's for shorter).
    #[test]
    fn occurrences_are_every_place_of_the_needle() {
        let naive = |line: &[u8], needle: &[u8]| -> Vec<usize> {
            (0..line.len())
                .filter(|&at| line[at..].starts_with(needle))
                .collect()
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut found = 0;
        for len in 0..160 {
            // Three letters, so needles recur and overlap.
            let line: Vec<u8> = (0..len).map(|_| b"ab/"[(next() % 3) as usize]).collect();
            for nlen in 1..80 {
                let needle: Vec<u8> = match (next() % 2 == 0 && nlen <= len).then_some(len) {
                    Some(len) => {
                        let at = (next() as usize) % (len - nlen + 1);
                        line[at..at + nlen].to_vec()
                    }
                    None => (0..nlen).map(|_| b"ab/"[(next() % 3) as usize]).collect(),
                };
                let want = naive(&line, &needle);
                found += want.len();
                let got: Vec<usize> = occurrences(&line, &needle).collect();
                assert_eq!(got, want, "{:?} in {:?}", needle, line);
            }
        }
        assert!(found > 1000, "the cases hold matches: {found}");
    }

    #[test]
    fn copies_on_purpose_are_not_leaks() {
        let check = LineCheck {
            replaced: vec!["my-tool-name".to_string()],
            replaced_in_record: vec![],
            kept: vec![(2, 16)],
            masked: vec![],
        };
        assert_eq!(residual(b"{\"my-tool-name\"}", &check, &[], b""), None);
        assert_eq!(
            residual(b"{\"x\":\"my-tool-name\"}", &check, &[], b""),
            Some(b"my-tool-name".to_vec())
        );
        let secrets = vec!["hunter2hunter2".to_string()];
        assert_eq!(
            residual(
                b"{\"id\":\"hunter2hunter2\"}",
                &LineCheck::default(),
                &secrets,
                b""
            ),
            Some(b"hunter2hunter2".to_vec())
        );
    }
}
