//! Kept text written from its input as written (`--keep-text`): when a string's body holds
//! only the escapes [`write_str`] writes (most text: Pi writes JSON with `JSON.stringify`),
//! each stretch of its decoded text is written as the same stretch of the body. So a masked
//! text is its body copied between the masks, and only the masks are escaped: the text is
//! not escaped again as a whole, and decoding it records where its escapes stand instead of
//! checking it again. Round 7 measured decoding kept text and escaping it again at 104 M of
//! 385 M instructions (BENCHMARKS.md).
//!
//! Why the output is the same as [`write_str`] of the masked text: `write_str` escapes each
//! character on its own, so the escaped text of a concatenation is the concatenation of the
//! escaped pieces; a body that [`Written::read`] accepts is `write_str` of its text (the
//! tests check both on generated bodies), so each stretch between masks, cut at character
//! boundaries, is its own escaped text.

use super::mask::{found_in_text, Also, Masker, Span};
use super::paths::Pseudonyms;
use crate::json;
use crate::output::{push_escaped, write_str};

/// A string body decoded, with where its escapes stand; reused from one text to the next.
#[derive(Default)]
pub struct Written {
    /// The decoded text (valid when [`Written::read`] said so).
    pub text: String,
    /// For each escape, in order: the offsets just after it in the text and in the body
    /// (each escape here stands for one byte of text).
    escapes: Vec<(usize, usize)>,
}

impl Written {
    /// Decodes `body` (the text between the quotes of a string of a record that is valid
    /// UTF-8) when it holds only the escapes [`write_str`] writes: `\" \\ \b \t \n \f \r`,
    /// and `\u00xx` in lowercase for the other controls below U+0020. `false` for any other
    /// escape (`\/`, `\u0041`, `\u001B`, a surrogate pair), a control byte or quote no
    /// backslash escapes, or a lone backslash at the end: such a body is decoded and escaped
    /// again as a whole.
    pub fn read(&mut self, body: &[u8]) -> bool {
        self.escapes.clear();
        let mut text = std::mem::take(&mut self.text).into_bytes();
        text.clear();
        let whole = json::decode_written(body, &mut text, &mut self.escapes);
        if !whole {
            text.clear();
        }
        // SAFETY: the body is part of a record that is valid UTF-8 and its stretches between
        // escapes are cut at backslashes (ASCII), so each is whole characters; each escape
        // adds one ASCII byte. A body not accepted leaves the text empty.
        self.text = unsafe { String::from_utf8_unchecked(text) };
        whole
    }

    /// Where the text's offset `at` (a character boundary) stands in the body read.
    fn body_at(&self, at: usize) -> usize {
        let k = self.escapes.partition_point(|&(text, _)| text <= at);
        match k.checked_sub(1) {
            Some(k) => {
                let (text, body) = self.escapes[k];
                body + (at - text)
            }
            None => at,
        }
    }

    /// Writes the string whose body was read (`body`) masked by `masker` into `out`, its
    /// body copied between the masks: what `write_str` writes of [`Masker::mask`]'s text
    /// (`ahead`: what the patterns found in it ahead, [`Masker::masks`]). `found` is told of
    /// each mask as by [`Masker::mask`], and `masks` of where each was written in `out`;
    /// `false` when `found` was told of none (`out` and `masks` are then left as they were:
    /// the caller keeps the input).
    #[allow(clippy::too_many_arguments)]
    pub fn write_masked(
        &mut self,
        body: &[u8],
        masker: &Masker,
        paths: &mut Pseudonyms,
        also: &Also,
        ahead: Option<&[Span]>,
        mut found: impl FnMut(&'static str, &str),
        out: &mut Vec<u8>,
        masks: &mut Vec<(usize, usize)>,
    ) -> bool {
        let (start, noted) = (out.len(), masks.len());
        let mut any = false;
        out.push(b'"');
        let mut from = 0;
        let text = std::mem::take(&mut self.text);
        let found = |kind, original: &str| {
            any = true;
            found(kind, original);
        };
        masker.masks(
            &text,
            paths,
            also,
            ahead,
            found,
            |mask_start, mask_end, mask| {
                out.extend_from_slice(&body[self.body_at(from)..self.body_at(mask_start)]);
                let at = out.len();
                push_escaped(out, mask);
                masks.push((at, out.len()));
                from = mask_end;
            },
        );
        out.extend_from_slice(&body[self.body_at(from)..]);
        out.push(b'"');
        self.text = text;
        if !any {
            out.truncate(start);
            masks.truncate(noted);
        }
        any
    }
}

/// For the fuzz target ([`super::check_written`]): `data` taken as a text, escaped by
/// [`write_str`], is read and masked as written to what `write_str` writes of
/// [`Masker::mask`]'s text, each mask where it says; `data` taken as a body, when read, is
/// `write_str` of its text; and the finders find in the text what the patterns do
/// ([`super::mask::check_sites`]). Panics where they differ.
pub fn check(data: &[u8]) {
    // A masker learns the secrets it masks and masks them wherever they occur after, so each
    // of the ways compared starts from a masker of its own.
    let masker = || Masker::new(vec!["s3cr3t-value".into()]);
    let mut w = Written::default();
    let text = String::from_utf8_lossy(data);
    super::mask::check_sites(&text);
    let mut quoted = Vec::new();
    write_str(&mut quoted, &text);
    let body = &quoted[1..quoted.len() - 1];
    assert!(w.read(body), "write_str's body not read");
    assert_eq!(w.text, text);
    let want = masker().mask(
        &text,
        &mut Pseudonyms::default(),
        &Also::default(),
        |_, _| {},
    );
    // What the patterns find, found ahead (on another thread) or as the text is masked.
    let found_ahead = found_in_text(&text);
    for ahead in [None, Some(&found_ahead[..])] {
        let (mut out, mut marks) = (Vec::new(), Vec::new());
        let (paths, found) = (&mut Pseudonyms::default(), |_, _: &str| {});
        if w.write_masked(
            body,
            &masker(),
            paths,
            &Also::default(),
            ahead,
            found,
            &mut out,
            &mut marks,
        ) {
            let mut expect = Vec::new();
            write_str(&mut expect, &want);
            assert_eq!(out, expect);
            assert_masks_at(&masker(), &text, &Also::default(), &out, &marks);
        } else {
            assert_eq!(want, text);
            assert!(marks.is_empty());
        }
    }
    if std::str::from_utf8(data).is_ok() && w.read(data) {
        let mut again = Vec::new();
        write_str(&mut again, &w.text);
        assert_eq!(&again[1..again.len() - 1], data);
    }
}

/// Panics unless `marks` are where `out` holds the masks of `text`, escaped, one for each
/// mask, in order (the residual scan takes what lies inside one for no leak).
fn assert_masks_at(masker: &Masker, text: &str, also: &Also, out: &[u8], marks: &[(usize, usize)]) {
    let mut masks = Vec::new();
    let paths = &mut Pseudonyms::default();
    let each = |_, _, mask: &str| masks.push(mask.to_string());
    masker.masks(text, paths, also, None, |_, _| {}, each);
    assert_eq!(marks.len(), masks.len(), "{text:?}");
    let mut after = 0;
    for (&(a, b), mask) in marks.iter().zip(&masks) {
        let mut escaped = Vec::new();
        push_escaped(&mut escaped, mask);
        assert!(after <= a, "{text:?}");
        assert_eq!(out.get(a..b), Some(&escaped[..]), "{text:?}");
        after = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_jsonl_gen::{mixed_body, Rng};

    /// `write_str` of `s`, without its quotes.
    fn escaped(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write_str(&mut out, s);
        out[1..out.len() - 1].to_vec()
    }

    /// Bodies of every escape: generated ones ([`mixed_body`]: `\/`, `\u000A`, pairs, lone
    /// surrogates...), each control written by `write_str`, and those written otherwise.
    fn bodies(rng: &mut Rng) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..3000 {
            let body = mixed_body(rng, i % 200);
            // The same text as `write_str` writes it.
            let text = json::decode_string_body(body.as_bytes());
            out.push(String::from_utf8(escaped(&text)).unwrap());
            out.push(body);
        }
        for c in 0u8..0x20 {
            let e = String::from_utf8(escaped(&char::from(c).to_string())).unwrap();
            out.push(format!("a{e}b"));
            out.push(e.clone());
            out.push(format!("\\u{:04X}", c));
            out.push(format!("x\\u00{:02x}", c));
        }
        for odd in [
            "\\/",
            "\\u0041",
            "\\ud83d\\ude00",
            "a\\",
            "\\u00",
            "\\u7fff",
            "é\\u00e9",
        ] {
            out.push(odd.to_string());
        }
        out
    }

    /// A body read is `write_str` of its text, and its text is what the decoder gives; a
    /// body that is `write_str` of its text is read (so no such text takes the slow way).
    #[test]
    fn read_takes_the_bodies_write_str_writes() {
        let mut rng = Rng::new(8);
        let mut w = Written::default();
        let (mut taken, mut left) = (0, 0);
        for body in bodies(&mut rng) {
            let decoded = json::decode_string_body(body.as_bytes());
            let minimal = escaped(&decoded) == body.as_bytes();
            assert_eq!(w.read(body.as_bytes()), minimal, "{body:?}");
            if minimal {
                assert_eq!(w.text, decoded, "{body:?}");
                taken += 1;
            } else {
                left += 1;
            }
        }
        assert!(taken > 500 && left > 500, "{taken} read, {left} not");
    }

    /// Each character boundary of a text read stands where its escaped prefix ends.
    #[test]
    fn body_at_maps_text_to_body() {
        let mut w = Written::default();
        let text = "a\"b\\c\n\u{1}é\t😀\u{1f}\r\u{8}\u{c}x";
        let body = escaped(text);
        assert!(w.read(&body));
        for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
            assert_eq!(w.body_at(at), escaped(&text[..at]).len(), "{at}");
        }
    }

    /// Pieces of masked text: secrets, e-mail addresses, paths and tokens with every escape
    /// inside and at their edges.
    const PIECES: &[&str] = &[
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "ana@example.com",
        "a.b\"c@example.org",
        "/home/ana/src/app/main.rs",
        "/home/ana/\"quoted\"/x.rs",
        "/srv/a\u{1}b/c.txt",
        "C:\\Users\\ana\\x.md",
        "C:\\\\Users\\\\ana\\\\x.rs\\n",
        "\\\\srv\\share\\a.md",
        "Qm9vZ3JhbmRvbVRva2VuWFl6MTIz9x7",
        "password=correct-horse-9",
        "Bearer abcdefghijklmnop0123",
        "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
        "postgres://bob:hunter22@db.example.org/x",
        "s3cr3t-value",
        "\n",
        "\t",
        "\"",
        "\\",
        "/",
        "\r",
        "\u{8}",
        "\u{c}",
        "\u{1b}",
        "\u{0}",
        "😀",
        "é",
        " ",
        "=",
        ":",
        "x",
    ];

    /// The as-written path writes what `write_str` writes of the masked text, and is told of
    /// the same masks, on texts of every escape inside and around what is masked, with what
    /// the patterns find found as it writes or ahead (the masker's own finders are held to
    /// the patterns by `mask.rs`'s oracle test).
    #[test]
    fn written_masks_are_write_str_of_the_masked_text() {
        let masker = Masker::new(vec!["s3cr3t-value".into()]);
        let mut rng = Rng::new(9);
        let mut w = Written::default();
        let (mut masked, mut plain) = (0, 0);
        for round in 0..20_000 {
            let n = rng.range(1, 12);
            let text: String = (0..n).map(|_| *rng.pick(PIECES)).collect();
            let body = escaped(&text);
            assert!(w.read(&body), "{text:?}");
            let also = match round % 3 {
                0 => Also::new(vec![("email", "zz@example.com".to_string())]),
                _ => Also::default(),
            };
            let also = &also;
            let (mut p1, mut p2) = (Pseudonyms::default(), Pseudonyms::default());
            let mut want_found = Vec::new();
            let want = masker.mask(&text, &mut p1, also, |k, o| {
                want_found.push((k, o.to_string()))
            });
            let mut found = Vec::new();
            let mut out = b"prefix".to_vec();
            let mut marks = vec![(0, 6)];
            // Every other text with what the patterns find in it found ahead.
            let ahead = (round % 2 == 1).then(|| found_in_text(&text));
            let any = w.write_masked(
                &body,
                &masker,
                &mut p2,
                also,
                ahead.as_deref(),
                |k, o| found.push((k, o.to_string())),
                &mut out,
                &mut marks,
            );
            assert_eq!(found, want_found, "{text:?}");
            assert_eq!(any, !want_found.is_empty(), "{text:?}");
            assert_eq!(marks[0], (0, 6), "the marks before are kept");
            if any {
                let mut expect = b"prefix".to_vec();
                write_str(&mut expect, &want);
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&expect)
                );
                assert_masks_at(&masker, &text, also, &out, &marks[1..]);
                masked += 1;
            } else {
                assert_eq!(out, b"prefix", "{text:?}");
                assert_eq!(marks, [(0, 6)], "{text:?}");
                plain += 1;
            }
        }
        assert!(masked > 5000 && plain > 100, "{masked} masked, {plain} not");
    }

    /// The fuzz target's check holds on the pieces, bodies of every escape as written
    /// (`\/`, `\u0041`, pairs, lone surrogates) and bytes that are not UTF-8.
    #[test]
    fn the_fuzz_check_holds() {
        let mut rng = Rng::new(10);
        for body in bodies(&mut rng).iter().take(400) {
            check(body.as_bytes());
        }
        for piece in PIECES {
            check(piece.as_bytes());
        }
        check(b"/home/ana/\xff\xfe x\"\\n");
        check(&[b'/', b'h', 0xff, b'/', b'x', 0xc3]);
        // A value masked after an option and met before it too: each way compared learns it
        // only as it masks it (the fuzz target found this).
        check(br"\u65e5\u -token \u65e5\u");
    }
}
