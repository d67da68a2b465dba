//! What the first record of a file says about it: a session header, a header that is not
//! valid, an entry of a session without its header, or something that is no Pi session at all.
//! [`probe`] reads a file only that far.

use crate::json;
use crate::lines::LineReader;
use crate::reader;
use std::fs::File;
use std::io;
use std::path::Path;

/// What the first record of a file says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FirstRecord {
    Header,
    BadHeader(String),
    /// A record with this `type`, not a header.
    Entry(String),
    /// A record without a string `type`: not a Pi session. The keys, for the reason.
    Foreign(Vec<String>),
}

pub(crate) fn classify_first(raw: &[u8]) -> FirstRecord {
    let raw = &raw[json::skip_ws(raw, 0)..];
    match json::get(raw, "type") {
        Some(b"\"session\"") => match reader::header_problem(raw) {
            None => FirstRecord::Header,
            Some(why) => FirstRecord::BadHeader(why),
        },
        Some(t) => match json::as_str(t) {
            Some(s) => FirstRecord::Entry(s.into_owned()),
            None => FirstRecord::Foreign(keys(raw)),
        },
        None => FirstRecord::Foreign(keys(raw)),
    }
}

fn keys(raw: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    json::for_each_field(raw, |k, _| {
        if out.len() < 6 {
            let k = json::decode_string_body(k);
            out.push(crate::message::truncate_chars(&k, 24));
        }
    });
    out
}

/// What [`probe`] learned from the start of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Empty,
    NotSession,
    /// Anything else: a session, or something the tools will report as unreadable.
    Other,
}

/// Reads a file only up to its first record, to tell whether tools should read it.
pub fn probe(path: &Path) -> io::Result<Probe> {
    let f = File::open(path)?;
    if f.metadata()?.len() == 0 {
        return Ok(Probe::Empty);
    }
    let mut lines = LineReader::new(f);
    while let Some(line) = lines.next_line()? {
        let mut b = line.bytes;
        if line.no == 1 {
            b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
        }
        let start = json::skip_ws(b, 0);
        if start == b.len() {
            continue;
        }
        match json::scan_object(b, start, |_, _| {}) {
            Ok(end) if json::skip_ws(b, end) == b.len() => {
                return Ok(match classify_first(&b[start..]) {
                    FirstRecord::Foreign(_) => Probe::NotSession,
                    _ => Probe::Other,
                });
            }
            _ => {
                if b[start] != b'{' {
                    if let Ok(end) = json::skip_value(b, start) {
                        if json::skip_ws(b, end) == b.len() {
                            return Ok(Probe::Other); // a JSON value that is not an object
                        }
                    }
                }
            }
        }
    }
    Ok(Probe::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_first_records() {
        assert_eq!(
            classify_first(br#"{"type":"session","id":"x"}"#),
            FirstRecord::Header
        );
        assert!(matches!(
            classify_first(br#"{"type":"session","id":3}"#),
            FirstRecord::BadHeader(_)
        ));
        assert_eq!(
            classify_first(br#"{"type":"message","id":"a"}"#),
            FirstRecord::Entry("message".into())
        );
        assert_eq!(
            classify_first(br#"{"version":1,"recordType":"message"}"#),
            FirstRecord::Foreign(vec!["version".into(), "recordType".into()])
        );
    }
}
