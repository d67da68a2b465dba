//! Many inputs read one after another on one thread (pi-redact: one pseudonym table, numbered
//! in argument order), their chunks read ahead on the run's other CPUs.
//!
//! The regular files among the inputs smaller than [`chunks::MIN_PARALLEL`] are cut into
//! chunks as a large input is (lines that start in each [`chunks::CHUNK`] bytes), each read
//! with `pread` (`input::chunked`), and all their chunks, file after file, go
//! through one pipeline (`chunks::in_order_of`): the reader works the chunks next to it
//! itself (split into lines, then read in order), the helpers take chunks from the far end of
//! the window and prescan them (`reader::prescan`: lines validated, members located, and the
//! tool's `reader::Ahead` facts found when it has one: pi-redact's records rewritten with
//! their paths left as holes, or with `--keep-text` what the patterns find in their kept
//! text), and the reader reads each
//! input's chunks in order (`reader::read_lines_prescanned`), so its sessions, entries and
//! diagnostics are those of the input read alone. Any other input (stdin, a FIFO, a large
//! file, one that cannot be opened or whose size changed since the run began) is opened and
//! read at its turn as before ([`Input::open`]), its problems reported there.
//!
//! Whole inputs were read ahead before, each on one helper (BENCHMARKS.md, rounds 33 and 34):
//! the reader still read the large ones alone, and what an input read ahead held in memory
//! (its bytes, prescans and rewritten records, past the CPU's caches) cost more than the
//! second CPU gave. A chunk pipeline holds a window of chunks, its buffers and prescans reused.

use super::chunked::{put_buffer, read_chunk, take_buffer, Ends};
use super::open::{open_regular_len, Opened};
use super::{chunks, Source};
use crate::diag::Diags;
use crate::output::Stop;
use crate::reader::{self, Ahead, Notes, Prescan, Spares, Stats, Visitor};
use crate::sync::lock;
use std::fs::File;
use std::sync::{Arc, Mutex};

/// Chunks claimed ahead of the reader, per thread: small inputs are a chunk each, and a
/// helper that runs out of chunks to claim waits to be woken, which this machine's scheduler
/// did late (BENCHMARKS.md, round 34).
const AHEAD_PER_THREAD: usize = 4;

/// How each input is read: its chunks in the pipeline, or at its turn.
enum Plan {
    /// A regular file of `len` bytes when the run began, cut into `count` chunks: as many
    /// items of the pipeline, from the input's first.
    Chunks {
        count: usize,
        len: u64,
        ends: Ends,
        file: Mutex<Slot>,
    },
    /// Read at its turn, as one item of the pipeline (which nobody reads).
    Own,
}

impl Plan {
    /// The input's items in the pipeline.
    fn items(&self) -> usize {
        match self {
            Plan::Chunks { count, .. } => *count,
            Plan::Own => 1,
        }
    }
}

/// A planned file, opened by the first thread to read one of its chunks.
enum Slot {
    Unopened,
    Open(Arc<File>),
    /// It could not be opened as the regular file of the planned size: read at its turn.
    Failed,
    /// The reader is done with it.
    Closed,
}

/// One item of the pipeline.
enum Item<'s> {
    /// A chunk: its prescan (or its lines only, split, when the reader worked it itself),
    /// and the buffer its lines are in.
    Chunk(Prescan<'s>, Vec<u8>),
    /// The input is read at its turn ([`Plan::Own`], or a file that failed to open).
    Own,
}

/// The inputs of one run and how each is read.
struct Plans<'s> {
    sources: &'s [Source],
    plans: Vec<Plan>,
    /// Each input's first item, in order (for finding an item's input).
    firsts: Vec<usize>,
    items: usize,
    spares: Spares<'s>,
    notes: Notes,
    ahead: Option<&'s dyn Ahead>,
}

impl<'s> Plans<'s> {
    fn new(
        sources: &'s [Source],
        window: usize,
        notes: Notes,
        ahead: Option<&'s dyn Ahead>,
    ) -> Plans<'s> {
        let (mut plans, mut firsts, mut items) = (Vec::new(), Vec::new(), 0);
        for src in sources {
            firsts.push(items);
            let len = match src {
                Source::Path(p) => std::fs::metadata(p)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len()),
                Source::Stdin => None,
            };
            let plan = match len {
                Some(len) if len > 0 && len < chunks::MIN_PARALLEL as u64 => {
                    let count = len.div_ceil(chunks::CHUNK as u64) as usize;
                    Plan::Chunks {
                        count,
                        len,
                        ends: Ends::new(count),
                        file: Mutex::new(Slot::Unopened),
                    }
                }
                _ => Plan::Own,
            };
            items += plan.items();
            plans.push(plan);
        }
        Plans {
            sources,
            plans,
            firsts,
            items,
            // The prescans alive at once: the window's, and the reader's.
            spares: Spares::keeping(window + 1),
            notes,
            ahead,
        }
    }

    /// The planned file `f`, opened if it is not yet: `None` when it cannot be read so.
    fn file(&self, f: usize) -> Option<Arc<File>> {
        let Plan::Chunks { len, file, .. } = &self.plans[f] else {
            return None;
        };
        let mut slot = lock(file);
        if let Slot::Unopened = *slot {
            let Source::Path(path) = &self.sources[f] else {
                return None;
            };
            // Opened without waiting (a FIFO now there), a regular file of the planned size.
            *slot = match open_regular_len(path) {
                Ok(Ok((opened, now))) if now == *len => Slot::Open(Arc::new(opened)),
                _ => Slot::Failed,
            };
        }
        match &*slot {
            Slot::Open(file) => Some(Arc::clone(file)),
            _ => None,
        }
    }

    /// Item `i`: prescanned, or only split when `split`.
    fn work(&'s self, i: usize, split: bool) -> Item<'s> {
        let f = self.firsts.partition_point(|&first| first <= i) - 1;
        let Plan::Chunks { len, ends, .. } = &self.plans[f] else {
            return Item::Own;
        };
        let Some(file) = self.file(f) else {
            return Item::Own;
        };
        let k = (i - self.firsts[f]) as u64;
        let mut buf = take_buffer();
        let read = read_chunk(&file, *len, chunks::CHUNK as u64, k, ends, &mut buf);
        // SAFETY: the slice is of `buf`'s heap bytes, which stay where they are while `buf`
        // is moved: `buf` travels with the prescan made of it and goes back to the kept
        // buffers (and is written again) only once the reader is done with that prescan's
        // lines (`ReadAhead::read`: when it asks for the next chunk, after handing the done
        // one, emptied, to the spares), or when the prescan was dropped unread
        // (`ReadAhead::drop`, `drain`).
        let bytes = |r: std::ops::Range<usize>| unsafe {
            std::slice::from_raw_parts(buf.as_ptr().add(r.start), r.len())
        };
        let p = match read {
            Ok((offset, range)) if split => reader::split(bytes(range), offset, &self.spares),
            Ok((offset, range)) => {
                reader::prescan(bytes(range), offset, self.notes, self.ahead, &self.spares)
            }
            Err((offset, e)) => {
                let mut p = reader::split(&[], offset, &self.spares);
                p.fail(e);
                p
            }
        };
        Item::Chunk(p, buf)
    }

    /// The reader is done with input `f`: its file, if open, is closed.
    fn close(&self, f: usize) {
        if let Plan::Chunks { file, .. } = &self.plans[f] {
            *lock(file) = Slot::Closed;
        }
    }
}

/// An input whose chunks come from the pipeline.
pub struct ReadAhead<'a, 's> {
    /// Its first chunk, taken to see whether the input was read so.
    first: Option<(Prescan<'s>, Vec<u8>)>,
    /// Its chunks still in the pipeline.
    left: usize,
    next: &'a mut dyn FnMut() -> Option<Item<'s>>,
    spares: &'s Spares<'s>,
    /// The buffer of the chunk the reader reads.
    reading: Option<Vec<u8>>,
}

impl ReadAhead<'_, '_> {
    /// Reads every session of the input, as [`Opened::read`] reads the file.
    pub fn read(mut self, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
        let spares = self.spares;
        let mut next = || {
            // The cursor gave the chunk it read to the spares before it asked for this one:
            // no line of that chunk's buffer is held now.
            if let Some(buf) = self.reading.take() {
                put_buffer(buf);
            }
            let (p, buf) = match self.first.take() {
                Some(chunk) => chunk,
                None if self.left == 0 => return None,
                None => {
                    self.left -= 1;
                    match (self.next)()? {
                        Item::Chunk(p, buf) => (p, buf),
                        Item::Own => return None,
                    }
                }
            };
            self.reading = Some(buf);
            Some(p)
        };
        reader::read_lines_prescanned(&mut next, spares, true, d, v)
    }
}

impl Drop for ReadAhead<'_, '_> {
    fn drop(&mut self) {
        if let Some((p, buf)) = self.first.take() {
            drop(p);
            put_buffer(buf);
        }
        if let Some(buf) = self.reading.take() {
            put_buffer(buf);
        }
        // Chunks not read (a read error ended the input, or the job did not read it).
        drain(self.next, self.left);
    }
}

/// Takes `n` items from the pipeline and drops them.
fn drain<'s>(next: &mut dyn FnMut() -> Option<Item<'s>>, n: usize) {
    for _ in 0..n {
        if let Some(Item::Chunk(p, buf)) = next() {
            // The prescan borrows the buffer: it goes first.
            drop(p);
            put_buffer(buf);
        }
    }
}

/// An input at its turn: its chunks from the pipeline, or opened now.
pub enum Input<'a, 's> {
    /// Boxed: its first chunk's prescan is most of its size.
    Early(Box<ReadAhead<'a, 's>>),
    Opened(Opened),
}

impl<'a, 's> Input<'a, 's> {
    /// `early` when the input's chunks are in the pipeline, else `src` opened now (a failure
    /// reported to `d`: `None`).
    pub fn open(
        src: &Source,
        early: Option<ReadAhead<'a, 's>>,
        d: &mut Diags,
    ) -> Option<Input<'a, 's>> {
        match early {
            Some(r) => Some(Input::Early(Box::new(r))),
            None => Opened::open(src, d).map(Input::Opened),
        }
    }

    /// Reads every session of the input through the session reader.
    pub fn read(self, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
        match self {
            Input::Early(r) => r.read(d, v),
            Input::Opened(o) => o.read(d, v),
        }
    }
}

/// Calls `each` with every input of `sources` in order (its index, and its chunks when they
/// come from the pipeline), while `helpers` threads read the chunks ahead for a visitor whose
/// scan notes `notes` and that finds `ahead`'s facts; stops at the first error `each` returns.
/// A helper that panics ends the run with its panic.
pub fn in_order(
    sources: &[Source],
    helpers: usize,
    notes: Notes,
    ahead: Option<&dyn Ahead>,
    each: impl FnMut(usize, Option<ReadAhead<'_, '_>>) -> Result<(), Stop>,
) -> Result<(), Stop> {
    in_order_how(sources, helpers, true, notes, ahead, each)
}

/// [`in_order`]; `own_split`: the chunks the reader works itself are only split (it scans
/// their lines in order), else prescanned as the helpers do (tests cover both).
fn in_order_how(
    sources: &[Source],
    helpers: usize,
    own_split: bool,
    notes: Notes,
    ahead: Option<&dyn Ahead>,
    mut each: impl FnMut(usize, Option<ReadAhead<'_, '_>>) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let window = (helpers + 1) * AHEAD_PER_THREAD;
    let plans = Plans::new(sources, window, notes, ahead);
    let plans = &plans;
    let work = |i: usize| plans.work(i, false);
    let own = |i: usize| plans.work(i, own_split);
    chunks::in_order_of(plans.items, helpers, window, work, own, |next| {
        for (f, plan) in plans.plans.iter().enumerate() {
            let count = plan.items();
            let Some(first) = next() else {
                // A helper panicked: the pipeline raises it again.
                return Ok(());
            };
            let read = match first {
                Item::Chunk(p, buf) => {
                    let r = ReadAhead {
                        first: Some((p, buf)),
                        left: count - 1,
                        next: &mut *next,
                        spares: &plans.spares,
                        reading: None,
                    };
                    each(f, Some(r))
                }
                Item::Own => {
                    drain(next, count - 1);
                    each(f, None)
                }
            };
            plans.close(f);
            read?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::chunked::tests::{dir, inputs, Log};
    use super::*;
    use crate::reader::{Entry, Header, Visitor};

    /// What reading `src` gives (its calls to the visitor, diagnostics and counts), read from
    /// `early` when given, else opened alone; and how many entries carried facts found ahead.
    fn read(src: &Source, early: Option<ReadAhead<'_, '_>>) -> (String, usize) {
        let mut d = Diags::new("t", "f", false);
        let mut log = Log::default();
        let input = Input::open(src, early, &mut d);
        let stats = input.map(|input| input.read(&mut d, &mut log).unwrap());
        (format!("{}{}{stats:?}", log.text, d.held()), log.facts)
    }

    /// `n` files in `dir` that hold `data`.
    fn copies(dir: &std::path::Path, n: usize, data: &str) -> Vec<Source> {
        let path = |i| dir.join(format!("in{i}"));
        (0..n)
            .inspect(|&i| std::fs::write(path(i), data).unwrap())
            .map(|i| Source::Path(path(i)))
            .collect()
    }

    /// Many inputs through one pipeline, at every number of helpers and whoever works a
    /// chunk: each reads as it reads alone (its sessions, entries, diagnostics and counts),
    /// the small files, the ones of several chunks, the empty one, and those read at their
    /// turn (a directory, a missing file) alike.
    #[test]
    fn inputs_read_through_one_pipeline_read_as_each_alone() {
        let dir = dir("early");
        let mut sources = Vec::new();
        for (n, data) in inputs().iter().enumerate() {
            let path = dir.join(format!("in{n}"));
            std::fs::write(&path, data).unwrap();
            sources.push(Source::Path(path));
        }
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        for odd in [empty, dir.join("missing"), dir.clone()] {
            sources.insert(sources.len() / 2, Source::Path(odd));
        }
        let want: Vec<String> = sources.iter().map(|s| read(s, None).0).collect();
        let ahead = Log::default().ahead().unwrap();
        let mut with_facts = 0;
        let cases = [0, 1, 3].into_iter().flat_map(|h| [(h, true), (h, false)]);
        for (helpers, own_split) in cases {
            // With the visitor's facts found ahead, and without (lines validated only).
            for ahead in [Some(&*ahead), None] {
                let mut got = Vec::new();
                let each = |i: usize, early: Option<ReadAhead<'_, '_>>| {
                    assert_eq!(i, got.len(), "inputs in order");
                    let (text, facts) = read(&sources[i], early);
                    with_facts += facts;
                    got.push(text);
                    Ok(())
                };
                in_order_how(&sources, helpers, own_split, Notes::MESSAGES, ahead, each).unwrap();
                assert_eq!(got.len(), want.len());
                for (i, (got, want)) in got.iter().zip(&want).enumerate() {
                    let facts = ahead.is_some();
                    assert_eq!(
                        got, want,
                        "input {i}, {helpers} helpers, {own_split}, {facts}"
                    );
                }
            }
        }
        assert!(with_facts > 0, "entries read ahead carry their facts");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An input the job does not read, and one whose reading the visitor stops: their chunks
    /// are taken from the pipeline all the same, so the next input reads whole.
    #[test]
    fn an_input_left_unread_leaves_the_next_one_whole() {
        let dir = dir("early-unread");
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#;
        let entry = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        let big = format!("{header}\n{}", format!("{entry}\n").repeat(10_000));
        assert!(big.len() > 2 * chunks::CHUNK, "an input of several chunks");
        let sources = copies(&dir, 4, &big);
        let want = read(&sources[3], None).0;
        let ahead = Log::default().ahead().unwrap();
        for helpers in [0, 1] {
            let mut rest = Vec::new();
            let each = |i: usize, early: Option<ReadAhead<'_, '_>>| {
                assert!(early.is_some(), "input {i} from the pipeline");
                match i {
                    // Not read at all.
                    0 => drop(early),
                    // Read until the visitor stops, at its first entry.
                    1 => {
                        struct Stops;
                        impl Visitor for Stops {
                            fn header(
                                &mut self,
                                _: &Header<'_>,
                                _: &mut Diags,
                            ) -> Result<(), Stop> {
                                Ok(())
                            }
                            fn entry(&mut self, _: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
                                Err(Stop::BrokenPipe)
                            }
                            fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
                                Ok(())
                            }
                        }
                        let mut d = Diags::quiet("t", "f");
                        let input = Input::open(&sources[i], early, &mut d).unwrap();
                        assert!(input.read(&mut d, &mut Stops).is_err());
                    }
                    _ => {
                        // The files of the inputs done with are closed: 2,000 inputs must not
                        // hold 2,000 descriptors.
                        let open = std::fs::read_dir("/proc/self/fd")
                            .unwrap()
                            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                            .filter(|target| target.starts_with(&dir))
                            .count();
                        assert!(open <= 2, "{open} files open at input {i}");
                        rest.push(read(&sources[i], early).0)
                    }
                }
                Ok(())
            };
            in_order_how(
                &sources,
                helpers,
                true,
                Notes::MESSAGES,
                Some(&*ahead),
                each,
            )
            .unwrap();
            assert_eq!(rest, [want.clone(), want.clone()], "{helpers} helpers");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file whose size changed since the run began is not read from the pipeline (its
    /// chunks were cut for the old size) but opened at its turn and read whole; the next
    /// input reads whole too.
    #[test]
    fn a_file_that_changed_size_is_read_at_its_turn() {
        let dir = dir("early-grew");
        let entry = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        let big = format!("{entry}\n").repeat(10_000);
        let sources = copies(&dir, 3, &big);
        let Source::Path(grows) = &sources[1] else {
            unreachable!()
        };
        let ahead = Log::default().ahead().unwrap();
        let mut got = Vec::new();
        // No helper: the reader opens each file when it comes to it.
        let each = |i: usize, early: Option<ReadAhead<'_, '_>>| {
            if i == 0 {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(grows)
                    .unwrap();
                std::io::Write::write_all(&mut f, entry.as_bytes()).unwrap();
            }
            got.push((early.is_some(), read(&sources[i], early).0));
            Ok(())
        };
        in_order_how(&sources, 0, true, Notes::MESSAGES, Some(&*ahead), each).unwrap();
        let ways: Vec<bool> = got.iter().map(|g| g.0).collect();
        assert_eq!(ways, [true, false, true]);
        for (i, (_, text)) in got.iter().enumerate() {
            assert_eq!(text, &read(&sources[i], None).0, "input {i}");
        }
        assert_eq!(got[1].1.matches("entry").count(), 10_001);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
