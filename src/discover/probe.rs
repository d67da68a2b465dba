//! What the first record of a file says about it: a session header, a header that is not
//! valid, an entry of a session without its header, or something that is no Pi session at all.
//! [`probe`] reads a file only that far.

use crate::json::{self, Raw};
use crate::lines::LineReader;
use crate::reader;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
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

/// What the first record, `object`, says about its file.
pub(crate) fn classify_first(object: Raw<'_>) -> FirstRecord {
    match object.get("type") {
        Some(t) if t.is_str("session") => match reader::header_problem(object) {
            None => FirstRecord::Header,
            Some(why) => FirstRecord::BadHeader(why),
        },
        Some(t) => match t.as_str() {
            Some(s) => FirstRecord::Entry(s.into_owned()),
            None => FirstRecord::Foreign(keys(object)),
        },
        None => FirstRecord::Foreign(keys(object)),
    }
}

/// The first keys of `object`, decoded and cut short, to say what it is.
fn keys(object: Raw<'_>) -> Vec<String> {
    let mut out = Vec::new();
    object.for_each_field(|k, _| {
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
    /// Not a regular file (what it is): never read (issue 19, item 6).
    NotRegular(&'static str),
    /// Anything else: a session, or something the tools will report as unreadable.
    Other,
}

/// Reads a file only up to its first record, to tell whether tools should read it.
pub fn probe(path: &Path) -> io::Result<Probe> {
    match crate::input::open::open_regular_len(path)? {
        Ok((f, len)) => probe_len(&f, len),
        Err(kind) => Ok(Probe::NotRegular(kind)),
    }
}

/// [`probe`] of a regular file already open as `f`, read from its start by position (its
/// offset is neither used nor moved): what a cache keeps of a file it was given open.
pub fn probe_file(f: &File) -> io::Result<Probe> {
    probe_len(f, f.metadata()?.len())
}

/// [`probe_file`] of a file whose length, `len`, was just looked up.
fn probe_len(f: &File, len: u64) -> io::Result<Probe> {
    if len == 0 {
        return Ok(Probe::Empty);
    }
    probe_nonempty(f)
}

/// [`probe_file`] of a file known not to be empty (its size was just looked up: no `stat`).
pub fn probe_nonempty(f: &File) -> io::Result<Probe> {
    let mut lines = LineReader::with_capacity(ReadAt { file: f, at: 0 }, PROBE_READ);
    while let Some(line) = lines.next_line()? {
        let mut b = line.bytes;
        if line.no == 1 {
            b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
        }
        let start = json::skip_ws(b, 0);
        if start == b.len() {
            continue;
        }
        match json::scan_members(b, start, |_, _| {}) {
            Ok(object) if json::skip_ws(b, start + object.len()) == b.len() => {
                return Ok(match classify_first(object) {
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

/// A file read by position from `at` on.
struct ReadAt<'f> {
    file: &'f File,
    at: u64,
}

/// What a probe's line reader holds at first (it grows for a longer line): a first record is a
/// header of a few hundred bytes, and the reader's usual 64 KiB would be zeroed and filled from
/// each file (128 MB copied to classify 2,000 files).
const PROBE_READ: usize = 4096;

impl io::Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &[u8]) -> Raw<'_> {
        json::validate(text).unwrap()
    }

    #[test]
    fn a_first_record_longer_than_one_read_is_read_whole() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let long = "x".repeat(3 * PROBE_READ);
        let cases = [
            (
                format!("\n\n{{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"{long}\"}}\n"),
                Probe::Other,
            ),
            (
                format!("{{\"{long}\":1,\"type\":2}}\n{{\"type\":\"session\"}}\n"),
                Probe::NotSession,
            ),
            (format!("{{\"version\":1,\"text\":\"{long}"), Probe::Other),
            (String::new(), Probe::Empty),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let path = dir.join(format!("{i}.jsonl"));
            std::fs::write(&path, text).unwrap();
            assert_eq!(probe(&path).unwrap(), *want, "case {i}");
            let file = File::open(&path).unwrap();
            assert_eq!(probe_file(&file).unwrap(), *want, "case {i}, open");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn classifies_first_records() {
        assert_eq!(
            classify_first(object(br#"{"type":"session","id":"x"}"#)),
            FirstRecord::Header
        );
        assert!(matches!(
            classify_first(object(br#"{"type":"session","id":3}"#)),
            FirstRecord::BadHeader(_)
        ));
        assert_eq!(
            classify_first(object(br#"{"type":"message","id":"a"}"#)),
            FirstRecord::Entry("message".into())
        );
        assert_eq!(
            classify_first(object(br#"{"version":1,"recordType":"message"}"#)),
            FirstRecord::Foreign(vec!["version".into(), "recordType".into()])
        );
    }
}
