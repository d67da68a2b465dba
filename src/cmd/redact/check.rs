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

/// Where `needle` (not empty) occurs in `line`: at each place of its first byte where the
/// rest follows. Lines are short once their texts are replaced, and needles many: this costs
/// nothing to prepare, where a `memmem` searcher is built for each needle.
fn occurrences<'a>(line: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    memchr::memchr_iter(needle[0], line).filter(move |&at| line[at..].starts_with(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

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
