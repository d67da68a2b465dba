//! The residual scan: before a rewritten line is written, it must hold none of the input
//! strings that were replaced on it and none of the secrets the user named. A line that does
//! is not written.
//!
//! What the line holds on purpose does not count: the input text it copies (ids, names,
//! keys) and what it writes in place of input (placeholders, pseudonyms, masks, shifted
//! times, new ids), each a range of the line ([`LineCheck::on_purpose`]). A replaced string
//! found only inside one such range shows nothing of the input: the range is made of the
//! run's own vocabulary, counts, and input kept on purpose (an input text that is itself a
//! placeholder, a path that is another path's pseudonym, a file redacted again). Found
//! anywhere else, even partly inside one (text before a mask that runs into it), it counts:
//! what lies outside the range came from the input.

use super::rewrite::LineCheck;
use crate::json;
use crate::output::write_str;
use memchr::memmem;

/// The shortest replaced string the scan looks for (shorter ones occur by chance: `main`,
/// `true`).
pub const MIN_LEN: usize = 8;

/// The first input string that survived in `line`, if any, as it is written there: a
/// replaced string (escaped as a JSON string body) found anywhere but wholly inside one range
/// written on purpose, or a named secret found anywhere. `record` is the input record (the replaced texts
/// of `check.replaced_in_record` are its slices).
pub fn residual(
    line: &[u8],
    check: &LineCheck,
    secrets: &[String],
    record: &[u8],
) -> Option<Vec<u8>> {
    // A long line with many strings to look for: each search reads the whole line, so the
    // line's four-byte sequences are noted once, and a string one of whose first sequences
    // is not among them is not searched for. The searches had cost the number of strings
    // times the line's length: a 1.4 MB session whose one message holds 20,000 text blocks
    // took 0.34 s, now under 0.01 s.
    let needles = check.replaced.len() + check.replaced_in_record.len();
    let grams = (line.len() >= GRAMS_FROM.0 && needles >= GRAMS_FROM.1).then(|| Grams::of(line));
    let absent = |start: &[u8]| {
        !start.is_empty()
            && (grams.as_ref().is_some_and(|g| !g.may_hold(start))
                || occurrences(line, start).next().is_none())
    };
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
        if absent(start) {
            return None;
        }
        escaped.clear();
        write_str(&mut escaped, s);
        let body = &escaped[1..escaped.len() - 1];
        let found = occurrences(line, body).any(|at| {
            !check
                .on_purpose
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
        // The text as written holds each run of its body between escapes as it is: a line
        // without one of them cannot hold it (most lines: no need to decode).
        if absent(plain_run(body, check.record_utf8)) {
            continue;
        }
        if let Some(found) = survives(&json::decode_string_body(body)) {
            return Some(found);
        }
    }
    // A secret is looked for as it is and as a JSON string writes it (a value of several
    // lines, or with a quote or a backslash, is written escaped).
    secrets.iter().find_map(|s| {
        if memmem::find(line, s.as_bytes()).is_some() {
            return Some(s.as_bytes().to_vec());
        }
        escaped.clear();
        write_str(&mut escaped, s);
        let body = &escaped[1..escaped.len() - 1];
        (body != s.as_bytes() && memmem::find(line, body).is_some()).then(|| body.to_vec())
    })
}

/// At most this many bytes of the start of a replaced string are looked for first.
const QUICK: usize = 64;

/// A run of the JSON string body `body` (of a validated record) that `write_str` writes as it
/// is wherever it writes the text: bytes between escapes (no quote, backslash or control byte
/// can be among them, and `write_str` escapes nothing else), at most [`QUICK`] of them, cut
/// where they stop being UTF-8 (a record that is not UTF-8 has its bad bytes replaced when
/// decoded). The first run of [`RUN`] bytes or more among the first [`RUNS_WITHIN`] bytes,
/// else the longest there: a text that opens with an escape (a line feed, a colour code) is
/// still looked for by a few bytes before it is decoded. Empty when the body is escapes alone.
/// `utf8`: the body is valid UTF-8 (its record is), so a run stops being UTF-8 only where
/// [`QUICK`] cuts a character, which its last bytes tell.
fn plain_run(body: &[u8], utf8: bool) -> &[u8] {
    let (mut best, mut at) = (&body[..0], 0);
    while at < body.len().min(RUNS_WITHIN) {
        let window = &body[at..body.len().min(at + QUICK)];
        let len = memchr::memchr(b'\\', window).unwrap_or(window.len());
        let run = if utf8 {
            // A run starts on a character (after an escape, all ASCII); it ends inside one
            // when the byte after it continues one: back to that character's first byte.
            let continues = |k: usize| body.get(at + k).is_some_and(|&c| c & 0xc0 == 0x80);
            let mut end = len;
            while end > 0 && continues(end) {
                end -= 1;
            }
            &window[..end]
        } else {
            match std::str::from_utf8(&window[..len]) {
                Ok(_) => &window[..len],
                Err(e) => &window[..e.valid_up_to()],
            }
        };
        if run.len() > best.len() {
            best = run;
        }
        if best.len() >= RUN {
            break;
        }
        let Some(stop) = memchr::memchr(b'\\', &body[at + len..]).map(|k| at + len + k) else {
            break;
        };
        // Past the escape: `\uXXXX` is six bytes, every other escape two.
        let escape = if body.get(stop + 1) == Some(&b'u') {
            6
        } else {
            2
        };
        at = stop + escape;
    }
    best
}

/// The length of a run that [`plain_run`] takes without looking further.
const RUN: usize = 8;

/// How far into a body [`plain_run`] looks for a run.
const RUNS_WITHIN: usize = 256;

/// From what length of line and what number of strings to look for [`Grams`] are made: each
/// costs ~6 instructions a byte of the line to make, a search ~⅓ instruction a byte.
const GRAMS_FROM: (usize, usize) = (1024, 16);

/// The four-byte sequences of a line, each as one bit of a table of 2¹⁶ (a Bloom filter of
/// one hash): a string with a sequence whose bit is clear is not in the line.
struct Grams(Box<[u64; 1024]>);

impl Grams {
    fn of(line: &[u8]) -> Grams {
        let mut bits = Box::new([0u64; 1024]);
        for w in line.windows(4) {
            let h = Grams::hash(w);
            bits[h >> 6] |= 1 << (h & 63);
        }
        Grams(bits)
    }

    fn hash(w: &[u8]) -> usize {
        let x = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        (x.wrapping_mul(0x9E37_79B1) >> 16) as usize
    }

    /// Whether `s` may be in the line: each of its four-byte sequences is (a string shorter
    /// than four bytes may be anywhere).
    fn may_hold(&self, s: &[u8]) -> bool {
        s.windows(4).all(|w| {
            let h = Grams::hash(w);
            self.0[h >> 6] & (1 << (h & 63)) != 0
        })
    }
}

/// Where `needle` (not empty) occurs in `line`, in order. Lines are short once their texts
/// are replaced, and needles many (most not in the line): a place is a candidate where two
/// of the needle's bytes, its first and the last of its first [`QUICK`], are where they would
/// be, both looked for at once 32 bytes a step. That costs nothing to prepare (a `memmem`
/// searcher built for each needle costs more than the search; picking the pair by the bytes'
/// rarity cost more than it saved on the generated sessions). Its first byte alone, the earlier
/// rule, left ~45 candidates per text on the corpus' lines, each compared: the check took 23 %
/// of pi-redact's instructions there, 11 % with the pair ([`Grams`] take it to 7 %).
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

    /// No string of a line is said to be absent from it, and most strings that are not in it
    /// are.
    #[test]
    fn grams_never_miss_what_the_line_holds() {
        let line: Vec<u8> = (0..3000u32)
            .map(|i| b"abcdefgh/ \\n\"xyz"[(i.wrapping_mul(2_654_435_761) >> 28) as usize])
            .collect();
        let g = Grams::of(&line);
        for at in 0..line.len() {
            for len in [1, 3, 4, 5, 17, 64] {
                if let Some(s) = line.get(at..at + len) {
                    assert!(g.may_hold(s), "{at} {len}");
                }
            }
        }
        let elsewhere = (0..200u32).filter(|i| {
            let s = format!("never-{i}-here");
            !g.may_hold(s.as_bytes())
        });
        assert!(elsewhere.count() > 190);
    }

    /// A line long enough, with strings enough, for [`Grams`]: the one string it holds is
    /// found, and a line without it is clean.
    #[test]
    fn a_long_line_of_many_strings_shows_its_leak() {
        let check = LineCheck {
            replaced: (0..40).map(|i| format!("gone-{i:02}-abcdef")).collect(),
            ..LineCheck::default()
        };
        assert!(check.replaced.len() >= GRAMS_FROM.1);
        let line = |inside: &str| {
            let pad = "[text · 12 chars]".repeat(GRAMS_FROM.0 / 16);
            format!(r#"{{"a":"{pad}","b":"{inside}","c":"{pad}"}}"#).into_bytes()
        };
        let found = residual(&line("x gone-27-abcdef y"), &check, &[], b"");
        assert_eq!(found, Some(b"gone-27-abcdef".to_vec()));
        assert_eq!(residual(&line("x gone-27-abcde y"), &check, &[], b""), None);
    }

    #[test]
    fn copies_on_purpose_are_not_leaks() {
        let check = LineCheck {
            replaced: vec!["my-tool-name".to_string()],
            on_purpose: vec![(2, 16)],
            ..LineCheck::default()
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

    /// A replaced string found wholly inside a range written on purpose (a placeholder, a
    /// mask) is no leak; one that starts before a mask and runs into it, or starts inside
    /// one and runs past it, is, and so is one found inside a range and again outside.
    #[test]
    fn only_what_lies_wholly_inside_what_was_written_on_purpose_is_no_leak() {
        let line =
            r#"{"a":"[value · 1 char]","b":"see [secret:keyed] here","c":"[value · 1 char]"}"#;
        let line = line.as_bytes();
        let range = |s: &str, from: usize| {
            let at = from + memmem::find(&line[from..], s.as_bytes()).unwrap();
            (at, at + s.len())
        };
        let first = range("[value · 1 char]", 0);
        let mask = range("[secret:keyed]", 0);
        let last = range("[value · 1 char]", first.1);
        let scan = |replaced: &str, on_purpose: Vec<(usize, usize)>| {
            let check = LineCheck {
                replaced: vec![replaced.to_string()],
                on_purpose,
                ..LineCheck::default()
            };
            residual(line, &check, &[], b"").map(|s| String::from_utf8(s).unwrap())
        };
        let all = || vec![first, mask, last];
        assert_eq!(scan("[value · 1 char]", all()), None);
        assert_eq!(scan("[secret:keyed]", all()), None);
        assert_eq!(scan("1 char]", all()), None, "too short to look for");
        for leak in [
            "see [secret:keyed]",
            "[secret:keyed] here",
            "e [secret:k",
            "yed] here",
        ] {
            assert_eq!(scan(leak, all()), Some(leak.to_string()));
        }
        assert_eq!(
            scan("[value · 1 char]", vec![first, mask]),
            Some("[value · 1 char]".to_string()),
            "the last one is not on purpose"
        );
    }

    /// A named secret of several lines, or with a quote, is found as a JSON string writes it.
    #[test]
    fn a_secret_is_found_escaped_too() {
        let secrets = vec!["first-line\nsecond \"line\"".to_string()];
        let line = br#"{"id":"first-line\nsecond \"line\""}"#;
        assert_eq!(
            residual(line, &LineCheck::default(), &secrets, b""),
            Some(br#"first-line\nsecond \"line\""#.to_vec())
        );
        let clean = br#"{"id":"first-line second line"}"#;
        assert_eq!(residual(clean, &LineCheck::default(), &secrets, b""), None);
    }

    /// A replaced text of the record is found where the line holds it as `write_str` writes
    /// it, whether its body opens with plain text, with escapes, or is escapes alone, and
    /// whatever its runs hold (characters of several bytes, cut at [`QUICK`]).
    #[test]
    fn replaced_texts_of_the_record_are_found_however_they_open() {
        let long = "é".repeat(40);
        let bodies: Vec<Vec<u8>> = vec![
            br"plain text of the tool's output\nand a second line".to_vec(),
            br"\u001b[31mERROR\u001b[0m: the build failed at step three".to_vec(),
            br"\n\n\tindented after two blank lines".to_vec(),
            br"\\\\server\\share\\a long path to a file".to_vec(),
            br"\n\n\n\n\n\n\n\n\n\n\n\n".to_vec(),
            format!(r"\t{long}\n{long}").into_bytes(),
            format!(r"ab\ncd\nef\nx{long}").into_bytes(),
            // Not UTF-8 (a record may not be): the bad byte is written as U+FFFD.
            b"\\nabc\xffdefghijklmnop and more".to_vec(),
        ];
        for body in &bodies {
            let mut record = br#"{"text":""#.to_vec();
            record.extend_from_slice(body);
            record.extend_from_slice(br#""}"#);
            let (a, b) = (9, 9 + body.len());
            let text = json::decode_string_body(body);
            let chars = text.chars().count() as u64;
            let check = LineCheck {
                replaced_in_record: vec![(a, b, chars)],
                record_utf8: std::str::from_utf8(&record).is_ok(),
                ..LineCheck::default()
            };
            let mut written = Vec::new();
            write_str(&mut written, &text);
            let inner = &written[1..written.len() - 1];
            let mut leaking = br#"{"text":"[text] "#.to_vec();
            leaking.extend_from_slice(inner);
            leaking.extend_from_slice(br#" [more]"}"#);
            assert_eq!(
                residual(&leaking, &check, &[], &record),
                Some(inner.to_vec()),
                "{}",
                String::from_utf8_lossy(body)
            );
            let clean = format!(r#"{{"text":"[text · {chars} chars]"}}"#);
            assert_eq!(
                residual(clean.as_bytes(), &check, &[], &record),
                None,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    /// The run looked for first: past leading escapes, the first of 8 bytes or more, cut to
    /// whole characters; empty for a body of escapes alone. A body known to be UTF-8 gives the
    /// run a body not known to be does.
    #[test]
    fn the_run_looked_for_first() {
        let run = |body: &[u8]| {
            let checked = plain_run(body, false);
            if std::str::from_utf8(body).is_ok() {
                assert_eq!(plain_run(body, true), checked, "{body:?}");
            }
            checked.to_vec()
        };
        assert_eq!(run(br"abcdefghij\nk"), b"abcdefghij");
        assert_eq!(run(br"ab\ncdefghijkl\n"), b"cdefghijkl");
        assert_eq!(run(br"\u001b[31mERROR\u001b"), b"[31mERROR");
        assert_eq!(run(br"a\nbc\nd"), b"bc");
        assert_eq!(run(br"\n\t\\\u00e9"), b"");
        let long = "é".repeat(40);
        assert_eq!(run(long.as_bytes()), "é".repeat(32).as_bytes());
        // Characters of every length cut at every place by the window's end.
        for lead in 0..4 {
            for c in ["é", "—", "😀"] {
                let body = format!("{}{}", "a".repeat(lead), c.repeat(40));
                let want = run(body.as_bytes());
                assert!(std::str::from_utf8(&want).is_ok() && want.len() > 64 - 4);
            }
        }
        // Not UTF-8: cut where it stops being.
        assert_eq!(run(b"abcdefghij\xffk"), b"abcdefghij");
        // A run that starts within the first bytes is taken whole; past them, none is.
        let near = format!(r"{}ABCDEFGHIJ", r"\n".repeat(100));
        assert_eq!(run(near.as_bytes()), b"ABCDEFGHIJ");
        let far = format!(r"{}ABCDEFGHIJ", r"\n".repeat(200));
        assert_eq!(run(far.as_bytes()), b"");
    }
}
