//! Chunks of regular files read with `pread` into buffers reused from chunk to chunk, by the
//! thread that works each (`input::early`: the small inputs of a pi-redact run, all their
//! chunks in one pipeline of `input::chunks`). A large input is mapped instead
//! (`input::mapped`), by every tool: on this machine the copy `pread` makes cost more CPU
//! than the map's page faults and releases (BENCHMARKS.md, round 37; pi-tools read its
//! large inputs this way on several cores until then).
//!
//! A chunk is the input's whole lines that start in `[i × chunk, (i + 1) × chunk)` (as
//! `chunks::in_order` cuts a slice): its thread reads from the byte before that range, to see
//! where the first line starts, to past its end, up to the end of the line that runs over it.
//! A file that is shorter than it was when opened (truncated or rewritten while read) gives a
//! read error where the chunk that misses bytes starts, as a mapped file does.

use super::{chunks, mapped};
use crate::sync::lock;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Bytes read at a time past a chunk's range while its last line goes on, and while a chunk
/// looks for its first line start without knowing where the chunk before it ends.
const STEP: usize = 8 << 10;

/// A buffer larger than this (a chunk with a very long line) is freed, not kept for reuse.
const KEEP_MAX: usize = 1 << 20;

/// How many buffers are kept for reuse, at most (more than the chunks one input has in flight
/// on a few threads, and those of two inputs at once).
const KEPT: usize = 16;

/// Where each chunk ends (the file's offset past its last line), once the thread that read
/// it has said: the next chunk starts there, and its own thread need not read the end of the
/// line that runs over their boundary again to find its first line start.
pub(super) struct Ends(Vec<AtomicU64>);

impl Ends {
    const UNKNOWN: u64 = u64::MAX;

    pub(super) fn new(count: usize) -> Ends {
        Ends((0..count).map(|_| AtomicU64::new(Ends::UNKNOWN)).collect())
    }

    fn get(&self, i: u64) -> Option<u64> {
        let end = self.0.get(i as usize)?.load(Ordering::Relaxed);
        (end != Ends::UNKNOWN).then_some(end)
    }

    fn set(&self, i: u64, end: u64) {
        if let Some(e) = self.0.get(i as usize) {
            e.store(end, Ordering::Relaxed);
        }
    }
}

/// Reads chunk `i` of the first `len` bytes of `file` (cut every `chunk` bytes, at line
/// starts, as `chunks::in_order` cuts a slice) into `buf`: the chunk's offset in the file and
/// its place in `buf`; or, when the file could not be read so far, where the chunk starts
/// and the error. Its end goes to `ends`.
pub(super) fn read_chunk(
    file: &File,
    len: u64,
    chunk: u64,
    i: u64,
    ends: &Ends,
    buf: &mut Vec<u8>,
) -> Result<(usize, std::ops::Range<usize>), (usize, io::Error)> {
    let raw_start = i * chunk;
    let raw_end = raw_start.saturating_add(chunk).min(len);
    let failed = |e| (raw_start as usize, e);
    // The chunk's lines are those that start in [raw_start, raw_end): the first starts where
    // the chunk before ends.
    let known = if i == 0 { Some(0) } else { ends.get(i - 1) };
    let (from, start, mut filled) = match known {
        Some(s) if s >= raw_end => {
            ends.set(i, s);
            return Ok((s as usize, 0..0));
        }
        Some(s) => (s, 0, 0),
        None => match first_line_start(file, raw_start, raw_end, buf).map_err(failed)? {
            Some(found) => found,
            None => return Ok((raw_end as usize, 0..0)),
        },
    };
    let body = (raw_end - from) as usize;
    read_exact_at(file, buf, filled, body - filled, from + filled as u64).map_err(failed)?;
    filled = body;
    // The last line ends at the first newline from `raw_end - 1` on (the file's end for the
    // last chunk).
    let mut look = body - 1;
    let end = loop {
        if raw_end == len {
            break filled;
        }
        if let Some(at) = memchr::memchr(b'\n', &buf[look..filled]) {
            break look + at + 1;
        }
        let left = len - from - filled as u64;
        if left == 0 {
            break filled;
        }
        let more = (STEP as u64).min(left) as usize;
        read_exact_at(file, buf, filled, more, from + filled as u64).map_err(failed)?;
        look = filled;
        filled += more;
    };
    ends.set(i, from + end as u64);
    Ok((from as usize + start, start..end))
}

/// Where the first line that starts in `[raw_start, raw_end)` (`raw_start` > 0) starts, read
/// from the file: `(from, start, filled)`, the file's bytes from `from` being in
/// `buf[..filled]` and the line starting at `buf[start]`; `None` when no line starts there.
fn first_line_start(
    file: &File,
    raw_start: u64,
    raw_end: u64,
    buf: &mut Vec<u8>,
) -> io::Result<Option<(u64, usize, usize)>> {
    // A line starts after each newline; the one before `raw_start` counts.
    let mut at = raw_start - 1;
    while at + 1 < raw_end {
        let n = (STEP as u64).min(raw_end - at) as usize;
        read_exact_at(file, buf, 0, n, at)?;
        // A newline at `raw_end - 1` starts a line past the range.
        let search = n.min((raw_end - 1 - at) as usize);
        if let Some(k) = memchr::memchr(b'\n', &buf[..search]) {
            return Ok(Some((at, k + 1, n)));
        }
        at += n as u64;
    }
    Ok(None)
}

/// Fills `buf[at..at + n]` with the file's bytes from `offset`; growing `buf` as needed. A
/// file that ends first shrank since it was opened: `mapped::shrank`.
fn read_exact_at(
    file: &File,
    buf: &mut Vec<u8>,
    at: usize,
    n: usize,
    offset: u64,
) -> io::Result<()> {
    if buf.len() < at + n {
        buf.resize(at + n, 0);
    }
    let mut done = 0;
    while done < n {
        match file.read_at(&mut buf[at + done..at + n], offset + done as u64) {
            Ok(0) => return Err(mapped::shrank()),
            Ok(k) => done += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The chunks' buffers, kept for the next chunks and the next inputs: a buffer allocated for
/// each input and freed after it had its pages faulted in again each time (pi-tools over the
/// four 51 MB sessions on 2 threads: ~2,000 page faults more).
static BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn buffers() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    lock(&BUFFERS)
}

/// A buffer to read a chunk into: one kept, else a new one large enough for most chunks.
pub(super) fn take_buffer() -> Vec<u8> {
    buffers()
        .pop()
        .unwrap_or_else(|| Vec::with_capacity(chunks::CHUNK + 4 * STEP))
}

/// A buffer done with: kept for reuse unless it grew large or enough are kept.
pub(super) fn put_buffer(buf: Vec<u8>) {
    let mut kept = buffers();
    if buf.capacity() <= KEEP_MAX && kept.len() < KEPT {
        kept.push(buf);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::diag::Diags;
    use crate::output::Stop;
    use crate::reader::{self, AheadFn, Entry, Header, Visitor};
    use std::fmt::Write as _;
    use std::sync::Arc;

    /// A directory of this test's own (the tests run at once).
    pub(in crate::input) fn dir(test: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("pi-jsonl-chunked-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// What an entry says of itself, found ahead and again in order.
    fn fact(e: &Entry<'_>) -> String {
        format!("{:?} {}", e.kind(), e.object.len())
    }

    /// Every call the reader makes, with where each line is, and how many entries had facts
    /// found ahead.
    #[derive(Default)]
    pub(in crate::input) struct Log {
        pub(in crate::input) text: String,
        pub(in crate::input) facts: usize,
    }

    impl Visitor for Log {
        fn header(&mut self, h: &Header<'_>, _: &mut Diags) -> Result<(), Stop> {
            let _ = writeln!(self.text, "header {} {} {}", h.line.no, h.line.offset, h.id);
            Ok(())
        }
        fn entry(&mut self, e: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
            if let Some(f) = e.ahead::<String>() {
                assert_eq!(f, &fact(e), "line {}", e.line.no);
                self.facts += 1;
            }
            let _ = writeln!(
                self.text,
                "entry {} {} {} {:?}",
                e.line.no,
                e.line.offset,
                e.line.len_with_eol,
                String::from_utf8_lossy(e.object.bytes())
            );
            Ok(())
        }
        fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
            self.text.push_str("end\n");
            Ok(())
        }
        fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
            self.text.push_str("outside ");
            self.entry(e, d)
        }
        fn ahead(&self) -> Option<Arc<dyn reader::Ahead>> {
            Some(Arc::new(AheadFn(fact)))
        }
    }

    pub(in crate::input) fn inputs() -> Vec<Vec<u8>> {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut out: Vec<Vec<u8>> = std::fs::read_dir(&fixtures)
            .unwrap()
            .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
            .filter(|b| !b.is_empty())
            .collect();
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#;
        let entry = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        let long = entry.replace('x', &"y".repeat(70_000));
        for odd in [
            format!("{header}\r\n\r\n  {entry}  \n\n{entry}\u{a0}\n{header}\n"),
            format!("{header}\n{entry}{entry}\n{{\"a\":\n[1]\n\"s\"\n{entry}"),
            format!("{header}\n{long}\n{entry}\n{long}\n{long}{long}\n{entry}"),
            format!("{header}\n{}", format!("{entry}\n").repeat(3_000)),
        ] {
            out.push(odd.into_bytes());
        }
        out
    }

    /// Each chunk read from the file is the slice `chunks::in_order` cuts from the bytes,
    /// whether the chunk before it said where it ended (read in order) or not (in reverse).
    #[test]
    fn a_chunk_read_is_the_lines_that_start_in_its_range() {
        let dir = dir("cut");
        for (n, data) in inputs().iter().enumerate() {
            let path = dir.join(format!("cut{n}"));
            std::fs::write(&path, data).unwrap();
            let file = File::open(&path).unwrap();
            let mut buf = Vec::new();
            // Chunks of a few bytes only for the small inputs (a read or more each).
            let sizes = [1, 2, 7, 64, 333, 4096, 20_000, 1 << 20];
            for chunk in sizes
                .into_iter()
                .filter(|&c| c >= 64 || data.len() < 20_000)
            {
                let count = data.len().div_ceil(chunk);
                let want: Vec<&[u8]> = (0..count)
                    .map(|i| {
                        let from = chunks::line_start(data, i * chunk);
                        &data[from..chunks::line_start(data, (i + 1) * chunk)]
                    })
                    .collect();
                for in_order in [true, false] {
                    let ends = Ends::new(count);
                    for k in 0..count {
                        let i = if in_order { k } else { count - 1 - k };
                        let (c, len) = (chunk as u64, data.len() as u64);
                        let (offset, range) =
                            read_chunk(&file, len, c, i as u64, &ends, &mut buf).unwrap();
                        let what = format!("input {n}, chunk {chunk}, {i}, in order {in_order}");
                        assert_eq!(&buf[range], want[i], "{what}");
                        if !want[i].is_empty() {
                            assert_eq!(&data[offset..offset + want[i].len()], want[i], "{what}");
                        }
                    }
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file cut short after it was opened: the chunk that misses bytes is a read error
    /// saying the file shrank, where that chunk starts (never a chunk of zeros); the chunks
    /// before it read whole.
    #[test]
    fn a_chunk_past_where_the_file_shrank_is_a_read_error() {
        let dir = dir("shrinks");
        let path = dir.join("shrinks");
        let data = "0123456789abcde\n".repeat(64);
        std::fs::write(&path, &data).unwrap();
        let file = File::open(&path).unwrap();
        let len = data.len() as u64;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        let (ends, mut buf) = (Ends::new(4), Vec::new());
        for i in 0..2 {
            let (offset, range) = read_chunk(&file, len, len / 4, i, &ends, &mut buf).unwrap();
            assert_eq!(offset as u64, i * len / 4);
            assert_eq!(
                &buf[range],
                &data.as_bytes()[offset..offset + data.len() / 4]
            );
        }
        let (at, e) = read_chunk(&file, len, len / 4, 2, &ends, &mut buf).unwrap_err();
        assert_eq!(at as u64, len / 2);
        assert_eq!(e.to_string(), mapped::shrank().to_string());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
