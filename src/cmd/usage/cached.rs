//! pi-usage's cache (`--cache`, [`crate::cache`]): per file, its sessions and billed calls as
//! the [`Collector`] reads them, each call with its identity, so that repeats are still found
//! across files when the report takes the inputs in order, as without the cache; and the calls
//! summed ahead by session and model, which stand for the calls when the report's groups allow
//! it and the file repeats no earlier input's call ([`payload`]). What depends on the run
//! rather than on the file is left out and found again: the file's name as given, and each
//! session's fork lineage (whether its original is among this run's inputs).
//!
//! The sums (the session table, `--by`, `--total`) use the cache; `--context` and `--calls`
//! read every file (their records carry each message's line and entry, which the cache does
//! not keep).
//!
//! Only a file read without a diagnostic or a note is kept (one with a problem is read again
//! each time, so its problems are reported each time). A file that grew is read on from where
//! the cache left off when what was read ended with a complete record of a session whose header
//! the cache located: its header line is read again, then the lines added, numbered as in the
//! whole file, and their calls are added to those of that session. Otherwise the file is read
//! whole again.

mod payload;

use super::calls::{CallSource, InputCalls};
use super::collect::Collector;
use super::report::UsageReport;
use super::InputSet;
use crate::cache::{Cache, FileKey, Lookup};
use crate::diag::Diags;
use crate::input::open::Opened;
use crate::input::Source;
use crate::lines::{Line, SliceLines};
use crate::output::{Out, Stop};
use crate::reader::{self, Entry, Header, Lines, PerSession, Visitor};
use crate::sync::{lock, Signal};
use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, IsTerminal};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::ExitCode;

/// Where a file can be read on from: the header line of its last session (its number, offset,
/// length with its newline and hash) and the lines read.
pub(super) struct Resume {
    header_no: u64,
    header_offset: u64,
    header_len: u64,
    header_hash: u64,
    lines: u64,
}

/// Inputs looked up or read ahead of those the report holds (in argument order, at most as
/// many): what memory holds at most is the calls of twice this many inputs.
const AHEAD: usize = 64;
/// Inputs a thread takes at a time (fewer hand-overs between the threads).
const CHUNK: usize = 16;

/// pi-usage over `sources`, every one a file, with `cache`: the inputs are looked up on this
/// thread, and from the first one that has to be read on `threads` threads ([`in_order`]),
/// at most 2 × [`AHEAD`] inputs ahead of the report, which takes them in
/// argument order, each input's diagnostics first; the exit status. (Not through the input
/// driver: with every file in the cache a run is short enough for the driver's start, rayon's
/// pool among it, to show; and with the cache no input is streamed in its turn, which is what
/// the driver adds.)
pub fn run<'s>(
    cache: &'s Cache,
    sources: &'s [Source],
    present: &'s InputSet,
    report: &mut UsageReport,
    threads: Option<usize>,
) -> ExitCode {
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut stdout = stdout.lock();
    let mut out = Out::direct(&mut stdout, tty);
    let threads = threads
        .unwrap_or_else(crate::input::driver::cpus)
        .clamp(1, AHEAD / CHUNK);
    // What the directory check of each FILE argument found: the cache's key, without a second
    // `stat` of each file.
    let known = crate::discover::take_input_metadata(sources);
    let summed = report.takes_summed();
    // Files kept as having no call identity in common need no set of those seen across them
    // (crate::cache::sets); otherwise that set is sized once for what the cache holds.
    // (Only where sums are taken: calls taken one by one go through that set anyway.)
    let set = (summed && report.dedups())
        .then(|| set_of(&known))
        .flatten();
    let mut disjoint = set.is_some_and(|s| cache.disjoint(s));
    if !disjoint {
        let mut note = |m: String| crate::cache::note("pi-usage", None, &m);
        report.expect_identities(cache.weight(sources.len(), &mut note));
    }
    report.expect_sessions(sources.len());
    // Whether every input so far was summed with identities no earlier one had.
    let mut all_new = !disjoint;
    // Sums the report has added, handed back to the jobs [`CHUNK`] inputs at a time, which
    // decode the next files' sums into them: their groups are dropped on the jobs' threads
    // (once other threads look files up, on them rather than on this one, which the report
    // keeps busy: freeing them was a tenth of its instructions), and their room is used
    // again (a file's sums are ~1.4 KB a group: an allocation too large for the allocator's
    // quick path, and fresh pages, for each of 2,000 files).
    let spent: std::sync::Mutex<Vec<payload::SessionSums>> = std::sync::Mutex::default();
    let mut spending = Vec::with_capacity(CHUNK);
    // While the files are taken as disjoint: the identities of those added so far, marked
    // seen if a file is not as the set was kept (read, not summed: it changed since it was
    // looked up, or the cache lost it), from which on the run checks as without the set.
    let mut unmarked: Vec<&[u8]> = Vec::new();
    let job = |i: usize, src: &'s Source, d: &mut Diags| match src {
        Source::Path(path) => {
            let input = Input {
                cache,
                path,
                src,
                present,
            };
            let spare = lock(&spent).pop().unwrap_or_default();
            input.take(known[i].as_ref(), summed, spare, d)
        }
        Source::Stdin => super::collect(src, present, d).map(Taken::Calls),
    };
    let mut write = || -> Result<(), Stop> {
        in_order(sources, threads, job, Taken::was_read, |taken, mut d| {
            d.flush();
            match taken? {
                Taken::Calls(calls) | Taken::Kept(calls) => {
                    all_new = false;
                    if std::mem::take(&mut disjoint) {
                        for ids in unmarked.drain(..) {
                            report.see_new(payload::identities(ids));
                        }
                    }
                    report.file(calls, &mut out)
                }
                Taken::Summed(s) => {
                    if disjoint {
                        unmarked.push(s.summary.identities);
                    }
                    all_new &= s.add_to(report, &mut out, disjoint, &mut spending)?;
                    if spending.len() >= CHUNK {
                        let mut dead = lock(&spent);
                        dead.append(&mut spending);
                    }
                    Ok(())
                }
            }
        })?;
        report.finish(&mut out)?;
        out.flush()
    };
    let written = write();
    if let Some(set) = set.filter(|_| all_new && written.is_ok()) {
        cache.keep_disjoint(set);
    }
    match written {
        Ok(()) => crate::input::exit_status(),
        Err(Stop::BrokenPipe) => ExitCode::SUCCESS,
        Err(Stop::Io(e)) => {
            crate::diag::report_global("pi-usage", format!("writing output: {e}"));
            ExitCode::from(2)
        }
    }
}

/// What the threads of [`in_order`] share: the results not taken yet (input `i` in slot
/// `i % AHEAD`), the next input no thread took, how many results were taken, and whether the
/// run stopped.
struct Window<T> {
    slots: Vec<Option<(T, Diags)>>,
    next: usize,
    taken: usize,
    stopped: bool,
}

impl<T> Window<T> {
    /// The next chunk of inputs, when it is within [`AHEAD`] of the taker (taken).
    fn claim(&mut self, len: usize) -> Option<std::ops::Range<usize>> {
        let end = (self.next + CHUNK).min(len);
        if self.next >= len || end > self.taken + AHEAD {
            return None;
        }
        let start = std::mem::replace(&mut self.next, end);
        Some(start..end)
    }
}

/// `job` over each input (with its index and its own held diagnostics) on `threads` threads,
/// this one among them, never more than 2 × [`AHEAD`] inputs ahead of `take`, which this thread
/// calls with each result in input order; the first error of `take` stops it all. (Waiters
/// are woken only when someone waits: a wake is a system call, and a run that finds
/// everything in the cache hands over thousands of inputs in a few milliseconds.) The other
/// threads start at the first result `costly` says is: until then this thread does every job
/// itself (a run that finds every file in the cache: 2,000 lookups took 15.8 ms of CPU on two
/// threads, with ~360 context switches at the locks they share, and 7.6 ms on one). A panic
/// (a bug) in a job or in `take` stops every thread, and is raised again here: never a hang.
fn in_order<'s, T: Send>(
    sources: &'s [Source],
    threads: usize,
    job: impl Fn(usize, &'s Source, &mut Diags) -> T + Sync,
    costly: impl Fn(&T) -> bool,
    mut take: impl FnMut(T, Diags) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let len = sources.len();
    let run = |chunk: std::ops::Range<usize>| -> Vec<(T, Diags)> {
        chunk
            .map(|i| {
                let mut d = Diags::new("pi-usage", &name(&sources[i]), false);
                (job(i, &sources[i], &mut d), d)
            })
            .collect()
    };
    let window = std::sync::Mutex::new(Window {
        slots: (0..AHEAD).map(|_| None).collect(),
        next: 0,
        taken: 0,
        stopped: false,
    });
    // Where the taker waits for a result, and the other threads for room (with the window's
    // lock).
    let (ready, room) = (Signal::new(), Signal::new());
    let store = |chunk: std::ops::Range<usize>, done: Vec<(T, Diags)>| {
        let mut w = lock(&window);
        for (i, r) in chunk.zip(done) {
            w.slots[i % AHEAD] = Some(r);
        }
        drop(w);
        ready.wake_one();
    };
    // How the run ends: at the taker's end, and as a thread that panics leaves (the others
    // stop rather than wait for it).
    let stop = || {
        lock(&window).stopped = true;
        room.wake_all();
        ready.wake_all();
    };
    let work = || {
        let _stop = crate::sync::on_panic(stop);
        loop {
            let mut w = lock(&window);
            let chunk = loop {
                if w.stopped || w.next >= len {
                    return;
                }
                if let Some(c) = w.claim(len) {
                    break c;
                }
                w = room.wait(w, None);
            };
            drop(w);
            let done = run(chunk.clone());
            store(chunk, done);
        }
    };
    // The results ready from input `i` on (at least that one: read here when no thread took it
    // yet, else waited for), moved out of the window into `got` (empty; its room kept from
    // one call to the next: the results are large, and a queue grown from nothing each time
    // copied them at every step).
    let ready_from = |i: usize, got: &mut std::collections::VecDeque<(T, Diags)>| {
        let mut w = lock(&window);
        loop {
            while let Some(r) = (i + got.len() < len)
                .then(|| w.slots[(i + got.len()) % AHEAD].take())
                .flatten()
            {
                got.push_back(r);
            }
            if !got.is_empty() {
                let before = w.taken;
                w.taken = i + got.len();
                // Threads wait for a whole chunk to have room.
                if before / CHUNK != w.taken / CHUNK {
                    room.wake_all();
                }
                return;
            }
            // Not ready: read a chunk here rather than wait, when there is one.
            if let Some(c) = w.claim(len) {
                drop(w);
                let done = run(c.clone());
                store(c, done);
                w = lock(&window);
                continue;
            }
            if w.stopped {
                // A thread panicked before it stored a result this one needs.
                return;
            }
            w = ready.wait(w, None);
        }
    };
    std::thread::scope(|scope| {
        let mut helped = threads <= 1 || len <= CHUNK;
        let _stop = crate::sync::on_panic(stop);
        let result = (|| {
            // Results moved out of the window in one hold of its lock, in input order.
            let mut mine = std::collections::VecDeque::with_capacity(AHEAD.min(len));
            for i in 0..len {
                if mine.is_empty() {
                    ready_from(i, &mut mine);
                }
                // None only when a thread panicked: the scope raises its panic again.
                let Some((r, d)) = mine.pop_front() else {
                    break;
                };
                if !helped && costly(&r) {
                    helped = true;
                    for _ in 1..threads {
                        // A thread the system refuses leaves its share to this one.
                        let _ = std::thread::Builder::new().spawn_scoped(scope, work);
                    }
                }
                take(r, d)?;
            }
            Ok(())
        })();
        stop();
        result
    })
}

/// The calls of the input `src` at `path`, from `cache` when it has them; kept there when the
/// file is read.
pub fn collect(
    cache: &Cache,
    path: &Path,
    src: &Source,
    present: &InputSet,
    d: &mut Diags,
) -> Result<InputCalls, Stop> {
    let input = Input {
        cache,
        path,
        src,
        present,
    };
    match input.take(None, false, Vec::new(), d)? {
        Taken::Calls(calls) | Taken::Kept(calls) => Ok(calls),
        Taken::Summed(s) => s.calls(d),
    }
}

/// What a job gives the report for one input: its calls, read from the input (the whole
/// file, or what was appended to it since it was kept), or as the cache kept them, or its
/// calls summed ahead.
enum Taken<'s> {
    Calls(InputCalls),
    Kept(InputCalls),
    Summed(Summed<'s>),
}

impl Taken<'_> {
    /// Whether the input was read to give this: the work that other threads share, where
    /// a lookup alone costs less than handing its result from one thread to another.
    fn was_read(taken: &Result<Taken<'_>, Stop>) -> bool {
        matches!(taken, Ok(Taken::Calls(_)))
    }
}

/// One file among the inputs, and what it is read with.
#[derive(Clone, Copy)]
struct Input<'s> {
    cache: &'s Cache,
    path: &'s Path,
    src: &'s Source,
    present: &'s InputSet<'s>,
}

/// What the cache has of a file as a lookup finds it: the sums (`summed` asked for them and the
/// file is as it was read), else the summary's bytes and the key it was kept under.
enum Kept<'s> {
    Summed(payload::Summary<'s>, &'s [u8]),
    Whole(&'s [u8], FileKey),
}

/// A file unchanged since its calls were summed: the sums, and how to get the calls when the
/// report cannot take the sums.
struct Summed<'s> {
    input: Input<'s>,
    key: FileKey,
    bytes: &'s [u8],
    summary: payload::Summary<'s>,
}

impl<'s> Input<'s> {
    /// What the cache has of the file (its sums when `summed` and it is unchanged, decoded into
    /// `spare`'s room), else its calls read; `known` is its metadata when it was looked up
    /// already (before it is read: a file that changed since is read again, or not kept, as
    /// for a file that changes while it is read).
    fn take(
        self,
        known: Option<&crate::discover::Stat>,
        summed: bool,
        spare: payload::SessionSums,
        d: &mut Diags,
    ) -> Result<Taken<'s>, Stop> {
        let Input {
            cache, path, src, ..
        } = self;
        let stat = || fs::metadata(path).map(|m| crate::discover::Stat::of(&m));
        let key = match known.copied().map_or_else(stat, Ok) {
            Ok(st) if st.is_file() => st.key,
            _ => return super::collect(src, self.present, d).map(Taken::Calls),
        };
        let found = cache.lookup(&key, path, true, &mut |m| d.note(None, m), |bytes, kept| {
            let summary = (summed && *kept == key).then(|| payload::summary(bytes, spare));
            Some(match summary.flatten() {
                Some(s) => Kept::Summed(s, bytes),
                None => Kept::Whole(bytes, *kept),
            })
        });
        match found {
            Lookup::Hit(Kept::Summed(mut summary, bytes)) => {
                for s in &mut summary.sessions {
                    use super::collect::ForkOrigins;
                    s.lineage = self.present.lineage(s.parent.as_deref());
                }
                return Ok(Taken::Summed(Summed {
                    input: self,
                    key,
                    bytes,
                    summary,
                }));
            }
            Lookup::Hit(Kept::Whole(bytes, kept)) => {
                if let Some((calls, _)) = self.kept_calls(bytes, &kept, d) {
                    return Ok(Taken::Kept(calls));
                }
            }
            Lookup::Grown {
                value: Kept::Whole(bytes, kept),
                size,
            } => {
                if let Some((calls, Some(resume))) = self.kept_calls(bytes, &kept, d) {
                    let read_on = ReadOn {
                        cache,
                        key,
                        path,
                        prefix: size,
                        resume,
                    };
                    if let Some(r) = read_on.read(calls, src, self.present, d) {
                        return r.map(Taken::Calls);
                    }
                }
            }
            Lookup::Grown { .. } | Lookup::Miss => {}
        }
        read_whole(cache, key, path, src, self.present, d).map(Taken::Calls)
    }

    /// The calls the cache keeps for the file (`bytes` its summary, `kept` the key it was kept
    /// under) made those of this run, and its resume point; `None` when they are not all there.
    fn kept_calls(
        &self,
        bytes: &[u8],
        kept: &FileKey,
        d: &mut Diags,
    ) -> Option<(InputCalls, Option<Resume>)> {
        let (mut calls, resume) = payload::decode_tables(bytes)?;
        let details = self.cache.details(kept, &mut |m| d.note(None, m))?;
        payload::decode_details(details, &mut calls)?;
        Some((for_this_run(calls, self.src, self.present), resume))
    }
}

impl Summed<'_> {
    /// Adds the file to `report`: its sums when the report takes them (its identities are new,
    /// or repeats are counted and the file repeats none of its own calls), else its calls;
    /// whether its sums were taken (then put in `spent`). `disjoint`: the run's files are kept
    /// as having no identity in common ([`crate::cache::sets`]), so none of this file's was
    /// seen before.
    fn add_to(
        self,
        report: &mut UsageReport,
        out: &mut Out,
        disjoint: bool,
        spent: &mut Vec<payload::SessionSums>,
    ) -> Result<bool, Stop> {
        let fits = if !report.dedups() {
            !self.summary.repeats
        } else {
            disjoint || report.see_new(self.summary.identities())
        };
        if !fits {
            let mut d = Diags::new("pi-usage", &name(self.input.src), false);
            let calls = self.calls(&mut d);
            d.flush();
            return report.file(calls?, out).map(|()| false);
        }
        report.input(&name(self.input.src));
        let summary = self.summary;
        let mut sums = summary.sums.iter().peekable();
        for (index, facts) in summary.sessions.into_iter().enumerate() {
            let cur = report.session(facts, out)?;
            while let Some((_, model, g)) = sums.next_if(|(i, _, _)| *i as usize == index) {
                report.summed(&cur, summary.models[*model as usize], g);
            }
        }
        spent.push(summary.sums);
        report.end_input(out).map(|()| true)
    }

    /// The file's calls: from the cache's details, else read again.
    fn calls(self, d: &mut Diags) -> Result<InputCalls, Stop> {
        match self.input.kept_calls(self.bytes, &self.key, d) {
            Some((calls, _)) => Ok(calls),
            None => {
                let Input {
                    cache,
                    path,
                    src,
                    present,
                } = self.input;
                read_whole(cache, self.key, path, src, present, d)
            }
        }
    }
}

/// The set the inputs make for [`crate::cache::sets`]: every one's key, when every one is a
/// file whose key the directory check found (`known`, in their order).
fn set_of(known: &[Option<crate::discover::Stat>]) -> Option<u64> {
    let keys = known
        .iter()
        .map(|m| m.filter(|st| st.is_file()).map(|st| st.key));
    let keys: Option<Vec<FileKey>> = keys.collect();
    Some(crate::cache::sets::set_of(keys?.iter()))
}

/// [`Source::name`], borrowed when the path is valid UTF-8, checked by `to_str`
/// (`to_string_lossy` walks it more slowly, and a copy is made only to be dropped: thousands
/// of names a run that finds everything in the cache).
fn name(src: &Source) -> Cow<'_, str> {
    match src {
        Source::Path(p) => p.to_str().map_or_else(|| src.name().into(), Cow::Borrowed),
        Source::Stdin => src.name().into(),
    }
}

/// Cached calls made those of `src` in this run: its name, and each session's lineage among
/// this run's inputs.
fn for_this_run(mut calls: InputCalls, src: &Source, present: &InputSet) -> InputCalls {
    use super::collect::ForkOrigins;
    calls.file = name(src).into_owned();
    for s in &mut calls.sessions {
        s.lineage = present.lineage(s.parent.as_deref());
    }
    calls
}

/// Reads `src` whole and keeps its calls in `cache` when the read was clean.
fn read_whole(
    cache: &Cache,
    key: FileKey,
    path: &Path,
    src: &Source,
    present: &InputSet,
    d: &mut Diags,
) -> Result<InputCalls, Stop> {
    let Some(opened) = Opened::open(src, d) else {
        return Ok(InputCalls::new(src.name()));
    };
    let before = d.counts().total();
    let mut c = PerSession::new(Collector::new(present, src.name(), None));
    let mut watch = Watch::new(&mut c);
    let stats = opened.read(d, &mut watch)?;
    let (clean, last_header) = (watch.clean(d, before), watch.last_header);
    let data = c.into_inner().data;
    let Some(file) = opened
        .file()
        .filter(|f| clean && stats.bytes == key.size && unchanged(f, &key))
    else {
        return Ok(data);
    };
    let resume = last_header.filter(|_| ends_with_record(file, key.size));
    let resume = resume.and_then(|h| h.resume(file, stats.lines));
    let summary = payload::encode_summary(&data, resume.as_ref());
    cache.put(
        &key,
        path,
        file,
        summary,
        Some(payload::encode_details(&data)),
    );
    Ok(data)
}

/// Whether `file` is still `key`.
fn unchanged(file: &File, key: &FileKey) -> bool {
    file.metadata().is_ok_and(|md| FileKey::of(&md) == *key)
}

/// Whether the first `size` bytes of `file` end with a record and its newline (`}` then `\n`):
/// nothing after the last record that the next line could change the reading of.
fn ends_with_record(file: &File, size: u64) -> bool {
    let mut last = [0; 2];
    size >= 2 && file.read_exact_at(&mut last, size - 2).is_ok() && last == *b"}\n"
}

/// A file that grew, to be read on from `prefix`, the bytes its cached calls stand for.
struct ReadOn<'a> {
    cache: &'a Cache,
    key: FileKey,
    path: &'a Path,
    prefix: u64,
    resume: Resume,
}

impl ReadOn<'_> {
    /// The calls of the whole file: `cached` and those of the lines added; `None` when the
    /// file cannot be read on (its last header moved: read it whole).
    fn read(
        self,
        mut cached: InputCalls,
        src: &Source,
        present: &InputSet,
        d: &mut Diags,
    ) -> Option<Result<InputCalls, Stop>> {
        let r = &self.resume;
        let file = File::open(self.path).ok()?;
        let mut header = vec![0; usize::try_from(r.header_len).ok()?];
        file.read_exact_at(&mut header, r.header_offset).ok()?;
        if xxhash_rust::xxh3::xxh3_64(&header) != r.header_hash || cached.sessions.is_empty() {
            return None;
        }
        let mut added = vec![0; usize::try_from(self.key.size - self.prefix).ok()?];
        file.read_exact_at(&mut added, self.prefix).ok()?;
        let lines = ReadOnLines {
            header: SliceLines::new(&header),
            header_shift: (r.header_no - 1, r.header_offset),
            added: SliceLines::new(&added),
            added_shift: (r.lines, self.prefix),
            in_added: false,
        };
        let before = d.counts().total();
        let mut c = PerSession::new(Collector::new(present, src.name(), None));
        let mut watch = Watch::new(&mut c);
        let stats = match reader::read_lines(lines, true, d, &mut watch) {
            Ok(s) => s,
            Err(stop) => return Some(Err(stop)),
        };
        let (clean, last_header) = (watch.clean(d, before), watch.last_header);
        append(&mut cached, c.into_inner().data);
        let lines = r.lines + stats.lines - 1;
        if clean && unchanged(&file, &self.key) && added.ends_with(b"}\n") {
            let resume = match last_header.filter(|h| h.no > r.header_no) {
                Some(h) => h.resume(&file, lines),
                None => Some(Resume {
                    lines,
                    ..self.resume
                }),
            };
            let summary = payload::encode_summary(&cached, resume.as_ref());
            let details = payload::encode_details(&cached);
            self.cache
                .put(&self.key, self.path, &file, summary, Some(details));
        }
        Some(Ok(cached))
    }
}

/// Adds `more`, the calls read on from a session header of `base`'s last session (their first
/// session is that one again), to `base`.
fn append(base: &mut InputCalls, more: InputCalls) {
    let t = &mut base.tables;
    let models: Vec<u32> = (more.tables.models.iter())
        .map(|(p, m)| t.model(p.as_deref(), m.as_deref()))
        .collect();
    let names: Vec<u32> = more.tables.names.iter().map(|n| t.name(n)).collect();
    let kinds: Vec<u32> = more
        .tables
        .kinds
        .iter()
        .map(|k| t.kind(k.as_deref()))
        .collect();
    let first = base.sessions.len() as u32 - 1;
    base.sessions.extend(more.sessions.into_iter().skip(1));
    for (session, mut call) in more.calls {
        call.model = models[call.model as usize];
        if let CallSource::UsageEntry(k) = &mut call.source {
            *k = kinds[*k as usize];
        }
        for (name, _) in &mut call.other {
            *name = names[*name as usize];
        }
        base.calls.push((first + session, call));
    }
}

/// The lines a file that grew is read on with: its last session's header line, then the lines
/// added, each numbered and placed as in the whole file.
struct ReadOnLines<'a> {
    header: SliceLines<'a>,
    header_shift: (u64, u64),
    added: SliceLines<'a>,
    added_shift: (u64, u64),
    in_added: bool,
}

impl Lines for ReadOnLines<'_> {
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if !self.in_added {
            if let Some(l) = self.header.next_line() {
                return Ok(Some(shift(l, self.header_shift)));
            }
            self.in_added = true;
        }
        Ok(self.added.next_line().map(|l| shift(l, self.added_shift)))
    }
}

/// `l` numbered and placed `no` lines and `offset` bytes further on.
fn shift(mut l: Line<'_>, (no, offset): (u64, u64)) -> Line<'_> {
    l.no += no;
    l.offset += offset;
    l
}

/// A session header's line: where a file can be read on from.
#[derive(Clone, Copy)]
struct HeaderLine {
    no: u64,
    offset: u64,
    len: u64,
}

impl HeaderLine {
    /// The resume point of a file open as `file` whose `lines` lines were read.
    fn resume(self, file: &File, lines: u64) -> Option<Resume> {
        let mut bytes = vec![0; usize::try_from(self.len).ok()?];
        file.read_exact_at(&mut bytes, self.offset).ok()?;
        Some(Resume {
            header_no: self.no,
            header_offset: self.offset,
            header_len: self.len,
            header_hash: xxhash_rust::xxh3::xxh3_64(&bytes),
            lines,
        })
    }
}

/// A visitor passed through to the collector's, noting the last session header (a whole line:
/// one the reader trimmed is not resumed from) and whether a fragment was read (a note).
struct Watch<'v> {
    inner: &'v mut dyn Visitor,
    last_header: Option<HeaderLine>,
    fragment: bool,
}

impl<'v> Watch<'v> {
    fn new(inner: &'v mut dyn Visitor) -> Watch<'v> {
        Watch {
            inner,
            last_header: None,
            fragment: false,
        }
    }

    /// Whether the read reported nothing since `d` counted `before` diagnostics.
    fn clean(&self, d: &Diags, before: u64) -> bool {
        !self.fragment && d.counts().total() == before
    }
}

impl Visitor for Watch<'_> {
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.fragment |= h.fragment;
        self.last_header =
            (h.line.has_newline && h.line.bytes.ends_with(b"}")).then_some(HeaderLine {
                no: h.line.no,
                offset: h.line.offset,
                len: h.line.len_with_eol,
            });
        self.inner.header(h, d)
    }
    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.inner.entry(e, d)
    }
    fn end(&mut self, d: &mut Diags) -> Result<(), Stop> {
        self.inner.end(d)
    }
    fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.inner.outside(e, d)
    }
    fn reads_messages(&self) -> bool {
        self.inner.reads_messages()
    }
    fn reads_fragments(&self) -> bool {
        self.inner.reads_fragments()
    }
    fn notes_strings(&self) -> bool {
        self.inner.notes_strings()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(n: usize) -> Vec<Source> {
        (0..n)
            .map(|i| Source::Path(format!("/nonexistent/{i}.jsonl").into()))
            .collect()
    }

    #[test]
    fn in_order_hands_every_result_over_in_input_order_on_any_number_of_threads() {
        for n in [0, 1, CHUNK, CHUNK + 1, AHEAD, AHEAD * 3 + 5] {
            let srcs = sources(n);
            for threads in [1, 2, 3, 8] {
                let mut got = Vec::new();
                let r = in_order(
                    &srcs,
                    threads,
                    |i, _, _| i,
                    |_| true,
                    |i, _| {
                        got.push(i);
                        Ok(())
                    },
                );
                assert!(r.is_ok());
                assert_eq!(
                    got,
                    (0..n).collect::<Vec<_>>(),
                    "{n} inputs, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn in_order_starts_other_threads_at_the_first_costly_result() {
        let srcs = sources(AHEAD * 3 + 5);
        let me = std::thread::current().id();
        for costly_from in [0, 7, CHUNK * 5 + 1, usize::MAX] {
            for threads in [1, 2, 3] {
                let mut got = Vec::new();
                let r = in_order(
                    &srcs,
                    threads,
                    |i, _, _| (i, std::thread::current().id() == me),
                    |&(i, _)| i >= costly_from,
                    |r, _| {
                        got.push(r);
                        Ok(())
                    },
                );
                assert!(r.is_ok());
                let order: Vec<usize> = got.iter().map(|(i, _)| *i).collect();
                assert_eq!(order, (0..srcs.len()).collect::<Vec<_>>());
                // Up to the first costly result, every job ran on this thread.
                let first = costly_from.min(srcs.len() - 1);
                assert!(
                    got[..=first].iter().all(|(_, here)| *here),
                    "{costly_from}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn a_panic_in_a_job_or_in_the_taker_is_raised_again_never_a_hang() {
        // Each case on a thread of its own, so that a hang fails the test rather than stalls it.
        let case = |job_panics_at: usize, take_panics_at: usize, threads: usize| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let srcs = sources(AHEAD * 4);
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    in_order(
                        &srcs,
                        threads,
                        |i, _, _| {
                            // Slow enough that the other threads run ahead and wait for room.
                            std::thread::sleep(std::time::Duration::from_micros(50));
                            assert!(i != job_panics_at, "job {i}");
                            i
                        },
                        |_| true,
                        |i, _| {
                            assert!(i != take_panics_at, "take {i}");
                            Ok(())
                        },
                    )
                }));
                let _ = tx.send(run.is_err());
            });
            let limit = std::time::Duration::from_secs(60);
            let panicked = rx.recv_timeout(limit).unwrap_or_else(|_| {
                panic!("hung: job panics at {job_panics_at}, take at {take_panics_at}, {threads} threads")
            });
            assert!(panicked, "{job_panics_at}, {take_panics_at}, {threads}");
        };
        for threads in [1, 2, 3] {
            case(usize::MAX, 5, threads);
            case(usize::MAX, AHEAD * 2, threads);
            case(3, usize::MAX, threads);
            case(AHEAD * 2 + 7, usize::MAX, threads);
        }
    }

    #[test]
    fn in_order_stops_at_the_first_error_of_the_taker_and_never_runs_far_ahead() {
        let srcs = sources(AHEAD * 4);
        let started = std::sync::atomic::AtomicUsize::new(0);
        let mut taken = 0;
        let r = in_order(
            &srcs,
            3,
            |i, _, _| {
                started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                i
            },
            |_| true,
            |i, _| {
                taken += 1;
                if i == 100 {
                    return Err(Stop::BrokenPipe);
                }
                Ok(())
            },
        );
        assert!(matches!(r, Err(Stop::BrokenPipe)));
        assert_eq!(taken, 101);
        // Nothing was begun more than AHEAD inputs past those the taker holds (at most AHEAD).
        let started = started.load(std::sync::atomic::Ordering::Relaxed);
        assert!(started <= 101 + 2 * AHEAD, "{started} begun");
    }
}
