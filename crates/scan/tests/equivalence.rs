//! The fast path agrees with the slow one: our validating scanner (`json::scan_members`,
//! `skip_value`, `validate`, and the second look of `Raw::for_each_field`, `for_each_element`
//! and `get`) against serde_json, on every line of the corpus (when present), on generated
//! sessions, and on mutated copies of generated lines.
//!
//! - Verdict: a line is valid JSON for us exactly when serde_json accepts it as `IgnoredAny`.
//! - Members: for a valid object, the same keys (decoded) in the same order, duplicates
//!   included, and each value's raw text byte for byte the same as serde_json's `RawValue`;
//!   the same again for nested objects and arrays two levels down.
//!
//! Known, intended differences (we follow `JSON.parse`, which Pi uses) are tested one by one
//! at the end: lone surrogate escapes, duplicate keys, numbers beyond f64, nesting deeper than
//! serde_json's limit, and invalid UTF-8 (the reader reports it separately).

use pi_jsonl_gen::{Gen, Rng, Shape};
use pi_jsonl_scan::json::{self, Raw};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// Our verdict, as the reader decides it: one value, then only whitespace. `validate` says
/// the same of the whole text.
fn ours_valid(line: &[u8]) -> bool {
    let start = json::skip_ws(line, 0);
    let valid =
        matches!(json::skip_value(line, start), Ok(end) if json::skip_ws(line, end) == line.len());
    assert_eq!(json::validate(line).is_ok(), valid);
    valid
}

fn serde_valid(line: &[u8]) -> bool {
    serde_json::from_slice::<IgnoredAny>(line).is_ok()
}

/// An object's members in order, duplicates kept, values as raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, &'de RawValue>()? {
                    v.push((k, val));
                }
                Ok(Members(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// An array's elements as raw text.
struct Elements<'a>(Vec<&'a RawValue>);

impl<'de> Deserialize<'de> for Elements<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Elements<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = s.next_element::<&'de RawValue>()? {
                    v.push(x);
                }
                Ok(Elements(v))
            }
        }
        d.deserialize_seq(V)
    }
}

/// Compares members (and, `depth` levels down, nested members and elements) of one value.
fn compare_value(raw: Raw, depth: usize, what: &str) {
    match raw.first() {
        Some(b'{') => {
            let theirs: Members = serde_json::from_slice(raw.bytes())
                .unwrap_or_else(|e| panic!("{what}: serde_json rejects an object we accept: {e}"));
            let mut ours = Vec::new();
            raw.for_each_field(|k, v| ours.push((json::decode_string_body(k), v)));
            assert_eq!(ours.len(), theirs.0.len(), "{what}: member count");
            for ((ok, ov), (tk, tv)) in ours.iter().zip(&theirs.0) {
                assert_eq!(ok, tk, "{what}: key");
                assert_eq!(*ov, tv.get().as_bytes(), "{what}: value of {tk:?}");
                if depth > 0 {
                    compare_value(*ov, depth - 1, &format!("{what}.{tk}"));
                }
            }
            // `get` keeps the last of repeated keys, as JSON.parse does.
            for (tk, _) in &theirs.0 {
                let last = theirs
                    .0
                    .iter()
                    .rev()
                    .find(|(k, _)| k == tk)
                    .map(|(_, v)| v.get().as_bytes());
                if !tk.contains('\\') && !tk.contains('"') {
                    assert_eq!(raw.get(tk).map(Raw::bytes), last, "{what}: get({tk:?})");
                }
            }
        }
        Some(b'[') => {
            let theirs: Elements = serde_json::from_slice(raw.bytes())
                .unwrap_or_else(|e| panic!("{what}: serde_json rejects an array we accept: {e}"));
            let mut ours = Vec::new();
            raw.for_each_element(|v| ours.push(v));
            assert_eq!(ours.len(), theirs.0.len(), "{what}: element count");
            for (i, (o, t)) in ours.iter().zip(&theirs.0).enumerate() {
                assert_eq!(*o, t.get().as_bytes(), "{what}[{i}]");
                if depth > 0 {
                    compare_value(*o, depth - 1, &format!("{what}[{i}]"));
                }
            }
        }
        _ => {}
    }
}

/// The reader's one-pass scan of an entry and its `message` (`json::scan_members_nested`)
/// agrees with `scan_members` and a second look (`Raw::for_each_field`): the same result or
/// error, the same top-level members, and an opened value's members exactly those of its text.
/// Checked with `message` opened (what the reader does) and with every object-valued member
/// opened.
fn check_nested(line: &[u8], start: usize, what: &str) {
    let mut flat = Vec::new();
    let flat_end = json::scan_members(line, start, |k, v| flat.push((k, v)));
    let message = |k: &[u8]| k == b"message";
    let any = |_: &[u8]| true;
    for open in [&message as &dyn Fn(&[u8]) -> bool, &any] {
        let (mut top, mut nested, mut opened) = (Vec::new(), Vec::new(), 0);
        let end = json::scan_members_nested(line, start, open, |m, k, v| match m {
            json::Member::Top => top.push((k, v)),
            json::Member::Nested => nested.push((k, v)),
            json::Member::Opened => {
                top.push((k, v));
                opened += 1;
                let mut again = Vec::new();
                v.for_each_field(|k, v| again.push((k, v)));
                assert_eq!(std::mem::take(&mut nested), again, "{what}: nested members");
            }
            json::Member::Deep | json::Member::NestedOpened => {
                panic!("{what}: a third level from scan_members_nested")
            }
        });
        assert_eq!(end, flat_end, "{what}: nested scan result");
        if end.is_ok() {
            assert_eq!(top, flat, "{what}: top-level members");
            assert!(
                nested.is_empty(),
                "{what}: nested members without their holder"
            );
        }
        if open(b"message") && flat_end.is_ok() {
            let objects = flat.iter().filter(|(k, v)| open(k) && v.starts_with(b"{"));
            assert_eq!(opened, objects.count(), "{what}: opened members");
        }
    }
}

/// The reader's scan of an entry, its `message` and the message's `usage`
/// (`json::scan_members_deep`) agrees with `scan_members_nested` on the two levels that one
/// opens, and the members of a value opened at the second level are exactly those of its text
/// (`Raw::for_each_field`). Checked with `message` and `usage` opened (what the reader does)
/// and with every object-valued member opened.
fn check_deep(line: &[u8], start: usize, what: &str) {
    let usage = |depth: usize, k: &[u8]| [&b"message"[..], b"usage"][depth] == k;
    let any = |_: usize, _: &[u8]| true;
    for open in [&usage as &dyn Fn(usize, &[u8]) -> bool, &any] {
        let mut two_levels = Vec::new();
        let nested_end = json::scan_members_nested(
            line,
            start,
            |k| open(0, k),
            |m, k, v| two_levels.push((m, k, v)),
        );
        let (mut levels, mut deep) = (Vec::new(), Vec::new());
        let end = json::scan_members_deep(line, start, open, |m, k, v| match m {
            json::Member::Deep => deep.push((k, v)),
            json::Member::NestedOpened => {
                let mut again = Vec::new();
                v.for_each_field(|k, v| again.push((k, v)));
                assert_eq!(std::mem::take(&mut deep), again, "{what}: deep members");
                levels.push((json::Member::Nested, k, v));
            }
            m => levels.push((m, k, v)),
        });
        assert_eq!(end, nested_end, "{what}: deep scan result");
        if end.is_ok() {
            assert_eq!(levels, two_levels, "{what}: two levels");
            assert!(deep.is_empty(), "{what}: deep members without their holder");
        }
    }
}

/// One line: the same verdict; for an object, the same members.
fn check_line(line: &[u8], what: &str) {
    let start = json::skip_ws(line, 0);
    if line.get(start) == Some(&b'{') {
        check_nested(line, start, what);
        check_deep(line, start, what);
    }
    let ours = ours_valid(line);
    assert_eq!(
        ours,
        serde_valid(line),
        "{what}: verdict differs (ours: {ours}) on {:?}",
        String::from_utf8_lossy(&line[..line.len().min(300)])
    );
    if !ours {
        return;
    }
    let start = json::skip_ws(line, 0);
    // serde_json's RawValue is a `str`: members are compared where the line is UTF-8 (the
    // reader checks UTF-8 on its own, see the last test).
    if line[start] == b'{' && std::str::from_utf8(line).is_ok() {
        // The reader's own entry point agrees with the value-level verdict.
        let mut ours = Vec::new();
        let object =
            json::scan_members(line, start, |k, v| ours.push((k, v))).expect("valid object");
        assert_eq!(
            json::skip_ws(line, start + object.len()),
            line.len(),
            "{what}"
        );
        assert_eq!(json::validate(line), Ok(object), "{what}");
        compare_value(object, 2, what);
    }
}

fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
}

fn generated(seed: u64, bytes: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut g = Gen::new(seed);
    g.session(&Shape::v3(bytes), &mut out).unwrap();
    Gen::new(seed + 1)
        .session(&Shape::v1(bytes / 4), &mut out)
        .unwrap();
    Gen::new(seed + 2).many_entries(200, &mut out).unwrap();
    out
}

#[test]
fn corpus_lines_agree_with_serde_json() {
    let files = corpus_files();
    if files.is_empty() {
        eprintln!("corpus absent: skipped");
        return;
    }
    let mut n = 0;
    let mut invalid = 0;
    for f in &files {
        let data = std::fs::read(f).unwrap();
        for (i, line) in lines(&data).enumerate() {
            check_line(line, &format!("{}:{}", f.display(), i + 1));
            n += 1;
            invalid += usize::from(!ours_valid(line));
        }
    }
    // The corpus has known defects (glued records, a bad escape): both sides must see them.
    assert!(n > 10_000 && invalid >= 4, "{n} lines, {invalid} invalid");
}

#[test]
fn generated_lines_agree_with_serde_json() {
    let data = generated(11, 3 << 20);
    let mut n = 0;
    for (i, line) in lines(&data).enumerate() {
        check_line(line, &format!("generated line {}", i + 1));
        n += 1;
    }
    assert!(n > 500, "{n} lines");
}

/// Broken copies of real-looking lines: cut short, a byte replaced, a byte inserted. Both
/// sides must reject (or accept) the same ones.
#[test]
fn mutated_lines_agree_with_serde_json() {
    let data = generated(23, 1 << 20);
    let all: Vec<&[u8]> = lines(&data).filter(|l| l.len() < 4_000).collect();
    let mut rng = Rng::new(99);
    let bytes: &[u8] = b"{}[]\":,\\ \t0123456789.eE+-tfnulx\x00\x1f\x7f/bru";
    let (mut valid, mut invalid) = (0, 0);
    for round in 0..20_000 {
        let src = all[rng.below(all.len() as u64) as usize];
        let mut l = src.to_vec();
        let at = rng.below(l.len() as u64 + 1) as usize;
        match round % 4 {
            0 => l.truncate(at),
            1 | 2 if at < l.len() => l[at] = *rng.pick(bytes),
            _ => l.insert(at, *rng.pick(bytes)),
        }
        // Mutations near the structure are the interesting ones: also hit the first bytes.
        if round % 5 == 0 && l.len() > 2 {
            let k = rng.below(l.len().min(40) as u64) as usize;
            l[k] = *rng.pick(bytes);
        }
        check_line(&l, &format!("mutation {round}"));
        if ours_valid(&l) {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    assert!(
        valid > 1000 && invalid > 8_000,
        "{valid} valid, {invalid} invalid"
    );
}

/// Where we differ from serde_json on purpose: Pi reads with `JSON.parse`, and so do we.
#[test]
fn intended_differences_from_serde_json() {
    // A lone surrogate escape: JSON.parse accepts it (the string holds a lone UTF-16 unit);
    // serde_json's lazy paths accept it too, but decoding it into a String fails.
    let lone = br#"{"type":"message","text":"x\ud800y"}"#;
    assert!(ours_valid(lone) && serde_valid(lone));
    assert!(serde_json::from_slice::<serde_json::Value>(lone).is_err());
    let lone_text = json::validate(lone).unwrap().get("text").unwrap();
    assert_eq!(lone_text.as_str().unwrap(), "x\u{FFFD}y");

    // Duplicate keys: the last wins (JSON.parse); serde_json's derived structs reject them.
    let dup = br#"{"id":"a","id":"b"}"#;
    assert!(ours_valid(dup) && serde_valid(dup));
    assert_eq!(json::validate(dup).unwrap().get("id").unwrap(), br#""b""#);
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Id<'a> {
        id: &'a str,
    }
    assert!(serde_json::from_slice::<Id>(dup).is_err());

    // A number beyond f64: JSON.parse gives Infinity; serde_json's Value refuses it.
    let huge = br#"{"tokensBefore":1e400}"#;
    assert!(ours_valid(huge) && serde_valid(huge));
    assert!(serde_json::from_slice::<serde_json::Value>(huge).is_err());

    // Nesting: serde_json's Value stops at 128 levels; we accept any depth, as JSON.parse
    // does (issue 19, item 7). Past serde_json's limit only our verdict is checked.
    let deep = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n)).into_bytes();
    for n in [200, 1025, 100_000] {
        assert!(ours_valid(&deep(n)), "{n} levels");
        assert!(serde_json::from_slice::<serde_json::Value>(&deep(n)).is_err());
    }

    // Invalid UTF-8 inside a string: the scanner accepts it (the reader reports it and reads
    // U+FFFD, as Pi does); serde_json refuses it when decoding.
    let bad = b"{\"text\":\"\xff\"}";
    assert!(ours_valid(bad));
    assert!(serde_json::from_slice::<serde_json::Value>(bad).is_err());
}

/// Every file of the shared corpus of real sessions (`$PI_JSONL_CORPUS`, else
/// `../shared/corpus` beside the project), README excluded, sorted; empty when the corpus is
/// absent.
fn corpus_files() -> Vec<std::path::PathBuf> {
    let root = match std::env::var_os("PI_JSONL_CORPUS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let mut out = vec![];
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "README.md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
