//! A large regular file read on several cores without a map: each chunk is read with `pread`
//! into a buffer reused from chunk to chunk, by the thread that works it (`input::chunks`).
//!
//! For a tool that keeps no line of the input past its reading and reads what it writes
//! again from the file (pi-tools). A map costs every page of the file twice in the kernel:
//! the page faults that map it and the release behind the scan (`Map::release`, which on two
//! threads of one process also interrupts the other CPU to flush its TLB); reading 200 MB
//! that way cost ~40 ms of CPU where `pread` of 256 KiB chunks into a warm buffer cost ~30 ms
//! (BENCHMARKS.md, round 9), and the copy is made on whichever core works the chunk, into
//! bytes the scan then finds in the CPU's cache. Nothing of the file is resident past the
//! chunks in flight.
//!
//! A chunk is the input's whole lines that start in `[i × chunk, (i + 1) × chunk)` (as
//! `chunks::in_order` cuts a slice): its thread reads from the byte before that range, to see
//! where the first line starts, to past its end, up to the end of the line that runs over it.
//! A file that is shorter than it was when opened (truncated or rewritten while read) gives a
//! read error where the chunk that misses bytes starts, as a mapped file does.

use super::{chunks, mapped};
use crate::diag::Diags;
use crate::output::Stop;
use crate::reader::{self, Prescan, Spares, Stats, Visitor};
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

/// Reads every session of `file` (a regular file, large enough to be read on several cores)
/// as [`reader::read`] reads it: the same sessions, entries and diagnostics.
pub fn read_chunked(
    file: &File,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(_) => return reader::read(file, named_file, d, v),
    };
    let helpers = chunks::helpers_for(usize::try_from(len).unwrap_or(usize::MAX));
    let how = How {
        chunk: chunks::CHUNK,
        helpers,
        own_split: true,
    };
    read_in_chunks(file, len, how, named_file, d, v)
}

/// How a file is cut and worked ([`read_in_chunks`]).
#[derive(Clone, Copy)]
struct How {
    /// The chunk size.
    chunk: usize,
    helpers: usize,
    /// Whether the reader only splits the chunks it works itself (as `read_mapped` does),
    /// else it prescans them as the helpers do (tests cover both).
    own_split: bool,
}

/// [`read_chunked`] with the chunk size and helpers given, over the first `len` bytes.
fn read_in_chunks(
    file: &File,
    len: u64,
    how: How,
    named_file: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    let chunk = how.chunk.max(1);
    let count = usize::try_from(len.div_ceil(chunk as u64)).unwrap_or(usize::MAX);
    let ends = Ends::new(count);
    // Prescans done with stay here, emptied: none holds a line of a buffer given back.
    let spares = Spares::for_helpers(how.helpers);
    let reads_messages = v.reads_messages();
    let ahead = v.ahead();
    // Chunk `i` read, then prescanned (or split when `split`), with the buffer its lines are in.
    let work = |i: usize, split: bool| -> (Prescan<'_>, Vec<u8>) {
        let mut buf = take_buffer();
        let read = read_chunk(file, len, chunk as u64, i as u64, &ends, &mut buf);
        // SAFETY: the slice is of `buf`'s heap bytes, which stay where they are while `buf`
        // is moved: `buf` travels with the prescan made of it and goes back to `BUFFERS`
        // (and is written again) only once the reader is done with that prescan's lines
        // (below: when it asks for the next chunk, after handing the done one, emptied, to
        // `spares`). The reader keeps no line past its turn (`reader::LineSource` lends each
        // only until the next), and a prescan's facts own their data.
        let chunk_bytes = |r: std::ops::Range<usize>| unsafe {
            std::slice::from_raw_parts(buf.as_ptr().add(r.start), r.len())
        };
        let p = match read {
            Ok((offset, range)) if split => reader::split(chunk_bytes(range), offset, &spares),
            Ok((offset, range)) => reader::prescan(
                chunk_bytes(range),
                offset,
                reads_messages,
                ahead.as_deref(),
                &spares,
            ),
            Err((offset, e)) => {
                let mut p = reader::split(&[], offset, &spares);
                p.fail(e);
                p
            }
        };
        (p, buf)
    };
    chunks::in_order_of(
        count,
        how.helpers,
        chunks::window(how.helpers),
        |i| work(i, false),
        |i| work(i, how.own_split),
        |next| {
            // The buffer of the chunk being read; the one before is done with when the next
            // chunk is asked for.
            let mut reading: Option<Vec<u8>> = None;
            let mut next_recycling = || {
                let (p, buf) = next()?;
                if let Some(done) = reading.replace(buf) {
                    put_buffer(done);
                }
                Some(p)
            };
            let read =
                reader::read_lines_prescanned(&mut next_recycling, &spares, named_file, d, v);
            // The reader has returned: no line of the last chunk is left.
            if let Some(done) = reading {
                put_buffer(done);
            }
            read
        },
    )
}

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
    use crate::reader::{AheadFn, Entry, Header};
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

    /// Every call the reader makes, with where each line is; how many entries had facts found
    /// ahead; and, when `truncate` is set, the file is cut to that length at the tenth entry.
    #[derive(Default)]
    pub(in crate::input) struct Log {
        pub(in crate::input) text: String,
        pub(in crate::input) facts: usize,
        entries: usize,
        truncate: Option<(std::path::PathBuf, u64)>,
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
            self.entries += 1;
            if self.entries == 10 {
                if let Some((path, keep)) = &self.truncate {
                    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                    f.set_len(*keep).unwrap();
                }
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

    fn read_file(
        path: &std::path::Path,
        how: Option<How>,
        truncate: Option<u64>,
    ) -> (String, usize) {
        let file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        let mut d = Diags::new("t", "f", false);
        let mut log = Log {
            truncate: truncate.map(|keep| (path.to_path_buf(), keep)),
            ..Log::default()
        };
        let stats = match how {
            None => reader::read_slice(&std::fs::read(path).unwrap(), true, &mut d, &mut log),
            Some(how) => read_in_chunks(&file, len, how, true, &mut d, &mut log),
        }
        .unwrap();
        (format!("{}{}{stats:?}", log.text, d.held()), log.facts)
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

    /// The same sessions, entries, diagnostics and facts as reading the bytes in memory, at
    /// every chunk size, with and without helpers, the reader's own chunks split or prescanned.
    #[test]
    fn lines_read_in_chunks_read_as_the_reader_reads_them() {
        let dir = dir("read");
        let mut with_facts = 0;
        for (n, data) in inputs().iter().enumerate() {
            let path = dir.join(format!("read{n}"));
            std::fs::write(&path, data).unwrap();
            let (want, _) = read_file(&path, None, None);
            let sizes = [1, 7, 333, 4096, 1 << 20];
            for chunk in sizes
                .into_iter()
                .filter(|&c| c >= 64 || data.len() < 20_000)
            {
                for helpers in [0, 1, 3] {
                    for own_split in [false, true] {
                        let how = How {
                            chunk,
                            helpers,
                            own_split,
                        };
                        let (got, facts) = read_file(&path, Some(how), None);
                        with_facts += facts;
                        assert_eq!(got, want, "input {n}, chunk {chunk}, {helpers} helpers");
                    }
                }
            }
        }
        assert!(with_facts > 0, "entries read ahead carry their facts");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file cut short while it is read: the entries before are read, then one read error
    /// says the file shrank (never a chunk of zeros or a silent end).
    #[test]
    fn a_file_that_shrinks_while_read_in_chunks_is_a_read_error() {
        let dir = dir("shrinks");
        let entry = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        let data = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\"}}\n{}",
            format!("{entry}\n").repeat(2_000)
        );
        let path = dir.join("shrinks");
        for own_split in [false, true] {
            std::fs::write(&path, &data).unwrap();
            let how = How {
                chunk: 4096,
                helpers: 0,
                own_split,
            };
            let (got, _) = read_file(&path, Some(how), Some(data.len() as u64 / 2));
            let entries = got.lines().filter(|l| l.starts_with("entry")).count();
            assert!((10..1_000).contains(&entries), "{entries} entries read");
            assert_eq!(
                got.matches("the file shrank while it was read").count(),
                1,
                "{got}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
