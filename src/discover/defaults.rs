//! Every tool's default input: when a tool is given no FILE and its stdin is a terminal, it
//! reads the session files pi-sessions would find ([`default_sources`], called from
//! [`crate::cli::Inputs::sources`]); and what a tool reads for a directory given as FILE
//! ([`expand_directories`]): the same walk and classification.

use super::layout::Found;
use super::location::sessions_dir;
use super::probe::{probe, Probe};
use super::progress::Progress;
use super::stat::{Stat, Stats};
use super::stores::{store_dirs, Store};
use super::walk::{walk, Walk};
use crate::diag::{Diags, Kind};
use crate::hash::hash128;
use crate::input::Source;
use crate::sync::lock;
use std::ffi::OsString;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Set to `1` to make tools act as if stdin were a terminal (for tests).
pub const ASSUME_TTY_VAR: &str = "PI_JSONL_ASSUME_TTY";

/// Whether a tool given no FILE should read the user's sessions: stdin is a terminal (or
/// `PI_JSONL_ASSUME_TTY=1` says to act as if it were).
pub fn stdin_is_terminal() -> bool {
    std::env::var_os(ASSUME_TTY_VAR).is_some_and(|v| v == "1") || io::stdin().is_terminal()
}

/// The session files a tool reads when it is given no FILE on a terminal: everything
/// pi-sessions finds in the stores (Pi's sessions directory and oh-my-pi's, those that exist:
/// [`super::stores`]) except files that are empty or not sessions, in path order. Says on
/// stderr how many there are; problems of the walk are reported.
pub fn default_sources(tool: &'static str, known: Option<Known<'_>>) -> Vec<Source> {
    let pi = match sessions_dir() {
        Ok(d) => d,
        Err(e) => {
            crate::diag::report_global(tool, e);
            return Vec::new();
        }
    };
    let roots: Vec<PathBuf> = store_dirs(Store::All, |k| std::env::var_os(k))
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.path)
        .collect();
    if roots.is_empty() {
        crate::diag::report_global(
            tool,
            format!(
                "no FILE given and stdin is a terminal, but there is no sessions directory {} (from {}); give FILE arguments or pipe a session in",
                pi.path.display(),
                pi.from
            ),
        );
        return Vec::new();
    }
    let found = session_sources(tool, &roots, None, known);
    let n = found.sources.len();
    let under: Vec<String> = roots
        .iter()
        .map(|r| crate::diag::sanitize(&r.to_string_lossy()).into_owned())
        .collect();
    crate::diag::note_global(
        tool,
        format!(
            "no FILE given and stdin is a terminal: reading {n} session file{} under {}{}",
            if n == 1 { "" } else { "s" },
            under.join(", "),
            skipped_note(found.empty, found.foreign)
        ),
    );
    found.sources
}

/// What a tool's cache knows of the files under a directory, without listing the directory or
/// opening the files.
pub trait KnownFiles: Sync {
    /// `true` when the file, as the lookup given describes it now, is one its first record
    /// makes a file to read (what [`probe`] would say, [`Probe::Other`]). `false` is "open it
    /// and see".
    fn knows_session(&self, st: &Stat) -> bool;

    /// The [`walk`] of `roots` (the same files, in the same order), from what an earlier run
    /// found when nothing in it can have changed.
    fn walk(&self, roots: &[PathBuf], exts: &[OsString], progress: Option<&Progress>) -> Walk;

    /// Loads what the cache holds, ahead of the first question (on a thread of its own while
    /// the inputs are looked up).
    fn preload(&self);
}

/// See [`KnownFiles`].
pub type Known<'k> = &'k dyn KnownFiles;

/// What [`session_sources`] found: the files to read, and how many it left out.
pub struct SessionSources {
    pub sources: Vec<Source>,
    /// What was found of each of `sources` when it was looked up (`None`: it could not be).
    pub metadata: Vec<Option<Stat>>,
    /// Files of zero bytes, left out.
    pub empty: usize,
    /// Files that are not Pi sessions, left out.
    pub foreign: usize,
}

/// The session files under `roots` as pi-sessions finds them (the same walk, in path order),
/// without the files that are empty or not sessions (status `empty` and `not_session`): what
/// a tool reads for a directory, or for the user's sessions. Problems of the walk are
/// reported.
///
/// Each file is looked up (`stat`) and then opened to read its first record ([`probe`]),
/// unless `known` says what it is from what the lookup found; on up to `threads` threads
/// ([`map_on_threads`]).
pub fn session_sources(
    tool: &'static str,
    roots: &[PathBuf],
    threads: Option<usize>,
    known: Option<Known<'_>>,
) -> SessionSources {
    let exts = [OsString::from("jsonl")];
    let walked = Progress::run(tool, "found", |p| match known {
        Some(k) => k.walk(roots, &exts, Some(p)),
        None => walk(roots, &exts, Some(p)),
    });
    report_problems(tool, &walked.problems);
    let classified = Progress::run(tool, "checked", |p| {
        p.set_total(walked.files.len());
        map_on_threads(&walked.files, threads, Stats::default, |stats, f| {
            let r = classify(stats, &f.path, known);
            p.add(1);
            r
        })
    });
    let mut found = SessionSources {
        sources: Vec::with_capacity(walked.files.len()),
        metadata: Vec::with_capacity(walked.files.len()),
        empty: 0,
        foreign: 0,
    };
    for (f, (r, m)) in walked.files.into_iter().zip(classified) {
        match r {
            Ok(Probe::Empty) => found.empty += 1,
            Ok(Probe::NotSession) => found.foreign += 1,
            Ok(Probe::NotRegular(kind)) => report_problems(
                tool,
                &[(
                    f.path.clone(),
                    format!("{kind}, not a regular file; not read"),
                )],
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                report_problems(tool, &[(f.path.clone(), "vanished during the scan".into())])
            }
            // Err(_): the tool reports it when it tries to read it.
            Ok(Probe::Other) | Err(_) => {
                found.sources.push(Source::Path(f.path));
                found.metadata.push(m);
            }
        }
    }
    found
}

/// What the file at `path` is: `known` from its metadata when it says so, else [`probe`]d; and
/// its metadata (looked up before it is probed: a file that changes after it is a file that
/// changes while it is read, which the tools see).
fn classify(
    stats: &mut Stats,
    path: &Path,
    known: Option<Known<'_>>,
) -> (io::Result<Probe>, Option<Stat>) {
    let md = stats.stat(path);
    let cached = |k: Known<'_>| {
        md.as_ref()
            .is_some_and(|m| m.is_file() && k.knows_session(m))
    };
    if known.is_some_and(cached) {
        return (Ok(Probe::Other), md);
    }
    (probe(path), md)
}

/// `sources` with every directory replaced by the session files under it
/// ([`session_sources`], in path order); other inputs stay as they are. A file found under a
/// directory that was already given (by name, or found under an earlier directory: two
/// stores that share files, a directory and a link to it) is not read a second time.
///
/// Each path is looked up once (`stat`); what was found of every file returned is kept for
/// [`take_input_metadata`], so that a cache keys the file without asking again. `threads` is
/// the run's `--threads`: the lookups take no more threads than that.
pub fn expand_directories(
    tool: &'static str,
    sources: Vec<Source>,
    threads: Option<usize>,
    known: Option<Known<'_>>,
) -> Vec<Source> {
    // The tool's cache is loaded meanwhile, on a thread of its own: the files are looked up
    // in it next.
    let metadata = std::thread::scope(|s| {
        if let Some(k) = known.filter(|_| sources.len() >= STATS_PER_THREAD) {
            let _ = std::thread::Builder::new().spawn_scoped(s, || k.preload());
        }
        metadata_of(&sources, threads)
    });
    let is_dir = |m: &Option<Stat>| m.as_ref().is_some_and(Stat::is_dir);
    if !metadata.iter().any(is_dir) {
        keep_input_metadata(&sources, metadata);
        return sources;
    }
    let identity = |m: &Stat| (m.key.dev, m.key.ino);
    // A single directory's walk has each file once already: nothing to look out for.
    let mut seen: crate::hash::FastSet<(u64, u64)> = metadata
        .iter()
        .flatten()
        .filter(|m| !m.is_dir())
        .map(identity)
        .collect();
    let alone = sources.len() == 1;
    let (mut out, mut out_metadata) = (Vec::with_capacity(sources.len()), Vec::new());
    for (s, m) in sources.into_iter().zip(metadata) {
        match &s {
            Source::Path(p) if is_dir(&m) => {
                let under = session_sources(tool, std::slice::from_ref(p), threads, known);
                if under.sources.is_empty() {
                    // Given by name and nothing to read: said, so that a typo or the wrong
                    // directory is not mistaken for sessions without usage or tool calls.
                    Diags::new(tool, &p.to_string_lossy(), true).note(
                        None,
                        format!(
                            "no session files (*.jsonl) under this directory{}",
                            skipped_note(under.empty, under.foreign)
                        ),
                    );
                }
                if alone {
                    // Taken as they are (not pushed one by one into vectors that grow).
                    (out, out_metadata) = (under.sources, under.metadata);
                    break;
                }
                for (f, m) in under.sources.into_iter().zip(under.metadata) {
                    if m.as_ref().is_none_or(|m| seen.insert(identity(m))) {
                        out.push(f);
                        out_metadata.push(m);
                    }
                }
            }
            _ => {
                out.push(s);
                out_metadata.push(m);
            }
        }
    }
    keep_input_metadata(&out, out_metadata);
    out
}

/// Looks up each of `files` that has no [`Found::stat`] yet (on up to `threads` threads, as
/// [`map_on_threads`] shares lookups) and keeps what it finds there, for a cache to key them.
/// A lookup is a system call that allocates nothing, so the lookups share threads well where
/// what follows them (a cache answering from memory) would not.
pub fn stat_files(files: &mut [Found], threads: Option<usize>) {
    let found = map_on_threads(files, threads, Stats::default, |stats, f| {
        f.stat.or_else(|| stats.stat(&f.path))
    });
    for (f, st) in files.iter_mut().zip(found) {
        f.stat = st;
    }
}

/// How many paths one thread looks up at least in [`map_on_threads`].
const STATS_PER_THREAD: usize = 512;

/// The metadata of each path among `sources` (`None`: stdin, or it could not be looked up).
fn metadata_of(sources: &[Source], threads: Option<usize>) -> Vec<Option<Stat>> {
    map_on_threads(sources, threads, Stats::default, |stats, s| match s {
        Source::Path(p) => stats.stat(p),
        Source::Stdin => None,
    })
}

/// `f` of each of `items`, in their order, on up to 4 threads when there are thousands (a
/// `stat` takes microseconds, a thread's start tens of them; rayon's pool is not started for
/// this), and no more than `threads` (`--threads`; default one per CPU). Each thread takes a
/// run of items in order, with a state of its own made by `state` (the folder open for
/// [`Stats`]).
fn map_on_threads<T: Sync, R: Send, S>(
    items: &[T],
    threads: Option<usize>,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let cpus = threads.unwrap_or_else(crate::input::driver::cpus);
    let threads = (items.len() / STATS_PER_THREAD).clamp(1, cpus.clamp(1, 4));
    let run = |part: &[T]| {
        let mut s = state();
        part.iter().map(|x| f(&mut s, x)).collect::<Vec<R>>()
    };
    if threads == 1 {
        return run(items);
    }
    let per = items.len().div_ceil(threads);
    let run = &run;
    std::thread::scope(|scope| {
        let mut parts = items.chunks(per);
        let first = parts.next().unwrap_or_default();
        let others: Vec<_> = parts
            .map(|part| {
                (
                    part,
                    std::thread::Builder::new().spawn_scoped(scope, move || run(part)),
                )
            })
            .collect();
        let mut all = run(first);
        for (part, thread) in others {
            // A thread the system refused, or one that failed: its part is done here.
            match thread.ok().and_then(|t| t.join().ok()) {
                Some(done) => all.extend(done),
                None => all.extend(run(part)),
            }
        }
        all
    })
}

/// `f` of each of `items`, in their order, on `threads` threads (this one among them), each
/// taking the next [`CLAIM`] items as it is done with the last, with a state of its own made by
/// `state`. Started for the call and ended with it (rayon's pool, whose idle threads spin and
/// sleep and are woken by system calls, cost a run that found every file in pi-sessions' cache
/// more than its threads' work), and balanced like the pool where items differ in cost (a
/// first run reads files of any size).
pub fn map_in_order<T: Sync, R: Send, S>(
    items: &[T],
    threads: usize,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> std::iter::Flatten<std::vec::IntoIter<Vec<R>>> {
    // The parts are not copied into one vector (a run over thousands of files copied their
    // descriptions into fresh pages).
    map_in_parts(items, threads, state, f, |_| true)
        .into_iter()
        .flatten()
}

/// [`map_in_order`]'s results as its parts, in order (one vector per claim of [`CLAIM`]
/// items), with the other threads started only once this one finds a result `costly` says is
/// (from then on, as [`map_in_order`]). Work that is mostly cheap (pi-sessions answered by its
/// cache: a lookup per file) is then done on this thread alone: two threads taking turns at
/// the allocator's one lock cost such a run more than they shared (2,000 files: 9.7 ms
/// against 8.0 ms on one, means of 60).
pub fn map_in_parts<T: Sync, R: Send, S>(
    items: &[T],
    threads: usize,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
    costly: impl Fn(&R) -> bool,
) -> Vec<Vec<R>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let claims = items.len().div_ceil(CLAIM);
    let part = |c: usize, s: &mut S, seen: &mut dyn FnMut(&R)| -> Vec<R> {
        let claimed = &items[c * CLAIM..((c + 1) * CLAIM).min(items.len())];
        (claimed.iter())
            .map(|x| {
                let r = f(s, x);
                seen(&r);
                r
            })
            .collect()
    };
    // Takes claims until none is left, showing `seen` each result.
    let run = |seen: &mut dyn FnMut(&R)| {
        let mut s = state();
        let mut done = Vec::new();
        loop {
            let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if c >= claims {
                return done;
            }
            done.push((c, part(c, &mut s, seen)));
        }
    };
    let threads = threads.clamp(1, claims.max(1));
    let mut parts: Vec<(usize, Vec<R>)> = std::thread::scope(|scope| {
        let mut others = Vec::new();
        let mut alone = threads > 1;
        let mut start_others = |r: &R| {
            if alone && costly(r) {
                alone = false;
                others.extend((1..threads).filter_map(|_| {
                    let helper = || run(&mut |_| {});
                    std::thread::Builder::new().spawn_scoped(scope, helper).ok()
                }));
            }
        };
        let mut all = run(&mut start_others);
        for t in others {
            all.extend(t.join().unwrap_or_default());
        }
        all
    });
    parts.sort_unstable_by_key(|(c, _)| *c);
    let mut parts = parts.into_iter().peekable();
    let mut ordered = Vec::with_capacity(claims);
    for c in 0..claims {
        match parts.next_if(|(claim, _)| *claim == c) {
            Some((_, done)) => ordered.push(done),
            // Taken by a thread that failed: done here.
            None => ordered.push(part(c, &mut state(), &mut |_| {})),
        }
    }
    ordered
}

/// How many items a thread of [`map_in_order`] takes at a time.
const CLAIM: usize = 16;

/// What [`expand_directories`] last found of the files it returned: each one's metadata, in
/// their order, under the [`hash128`] of its path (no copy of every path: over 2,000 files
/// the copies were a fifth of the fresh pages of a run that found every file in pi-usage's
/// cache).
static INPUT_METADATA: Mutex<InputMetadata> = Mutex::new(InputMetadata(Vec::new()));

/// What identifies `path` among the inputs.
fn path_key(path: &Path) -> u128 {
    hash128(path.as_os_str().as_encoded_bytes())
}

fn keep_input_metadata(sources: &[Source], metadata: Vec<Option<Stat>>) {
    *lock(&INPUT_METADATA) = InputMetadata::of(sources, metadata);
}

/// The metadata of each of `sources` that is a regular file among the inputs
/// [`expand_directories`] last returned, at the same place, as it found it when it looked the
/// path up (`None`: look it up); taken (a second call gets none).
pub fn take_input_metadata(sources: &[Source]) -> Vec<Option<Stat>> {
    std::mem::take(&mut *lock(&INPUT_METADATA)).of_each(sources)
}

/// See [`take_input_metadata`].
#[derive(Default)]
struct InputMetadata(Vec<Option<(u128, Stat)>>);

impl InputMetadata {
    /// The metadata of the regular files among `sources`, found in that order.
    fn of(sources: &[Source], metadata: Vec<Option<Stat>>) -> InputMetadata {
        let kept = sources
            .iter()
            .zip(metadata)
            .map(|(s, m)| match (s, m) {
                (Source::Path(p), Some(m)) if m.is_file() => Some((path_key(p), m)),
                _ => None,
            })
            .collect();
        InputMetadata(kept)
    }

    /// The metadata of each of `sources` when it is the regular file kept at its place.
    fn of_each(&self, sources: &[Source]) -> Vec<Option<Stat>> {
        (sources.iter().enumerate())
            .map(|(i, s)| match (s, self.0.get(i)) {
                (Source::Path(p), Some(Some((key, m)))) if *key == path_key(p) => Some(*m),
                _ => None,
            })
            .collect()
    }
}

/// `; skipped 2 empty, 1 not sessions`, or nothing when nothing was skipped.
fn skipped_note(empty: usize, foreign: usize) -> String {
    let mut skipped = Vec::new();
    if empty > 0 {
        skipped.push(format!("{empty} empty"));
    }
    if foreign > 0 {
        skipped.push(format!("{foreign} not sessions"));
    }
    if skipped.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", skipped.join(", "))
    }
}

/// Reports the problems of a walk, one diagnostic each.
pub fn report_problems(tool: &'static str, problems: &[(PathBuf, String)]) {
    for (p, msg) in problems {
        Diags::new(tool, &p.to_string_lossy(), true).report(None, Kind::Io, msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_in_order_gives_every_result_in_order_on_any_number_of_threads() {
        for n in [0, 1, CLAIM - 1, CLAIM, CLAIM + 1, CLAIM * 7 + 3, 2000] {
            let items: Vec<usize> = (0..n).collect();
            for threads in [0, 1, 2, 3, 8] {
                // Each thread's state counts the items it did: they add up to all of them.
                let done = std::sync::atomic::AtomicUsize::new(0);
                let got: Vec<usize> = map_in_order(
                    &items,
                    threads,
                    || (),
                    |(), x| {
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        x * 3
                    },
                )
                .collect();
                let want: Vec<usize> = items.iter().map(|x| x * 3).collect();
                assert_eq!(got, want, "{n} items, {threads} threads");
                assert_eq!(done.into_inner(), n, "each item done once");
            }
        }
    }

    #[test]
    fn map_in_parts_starts_other_threads_at_the_first_costly_result() {
        let items: Vec<usize> = (0..CLAIM * 20 + 5).collect();
        let me = std::thread::current().id();
        for costly_from in [0, 7, CLAIM * 9 + 1, usize::MAX] {
            for threads in [1, 2, 3] {
                let parts = map_in_parts(
                    &items,
                    threads,
                    || (),
                    |(), &x| (x, std::thread::current().id() == me),
                    |&(x, _)| x >= costly_from,
                );
                assert!(parts.iter().all(|p| p.len() <= CLAIM));
                let got: Vec<(usize, bool)> = parts.into_iter().flatten().collect();
                let order: Vec<usize> = got.iter().map(|(x, _)| *x).collect();
                assert_eq!(order, items, "{costly_from} {threads}");
                // Up to the first costly result, every item is done on this thread.
                let first = costly_from.min(items.len() - 1);
                assert!(got[..=first].iter().all(|(_, here)| *here), "{costly_from}");
            }
        }
    }

    /// Every file without a lookup gets its own, in order, on as many threads as are asked
    /// for; a lookup already made is kept, and a missing file has none.
    #[test]
    fn stat_files_looks_up_each_file_that_has_no_lookup_yet() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-stat-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a")).unwrap();
        let n = STATS_PER_THREAD * 4 + 3;
        let paths: Vec<PathBuf> = (0..n)
            .map(|i| {
                let p = dir
                    .join(if i % 2 == 0 { "a" } else { "" })
                    .join(format!("{i}.jsonl"));
                std::fs::write(&p, vec![b'x'; i]).unwrap();
                p
            })
            .collect();
        let given = std::fs::metadata(&paths[7]).map(|m| Stat::of(&m)).ok();
        let _ = std::fs::remove_file(&paths[9]);
        for threads in [1, 2, 4] {
            let mut files: Vec<Found> = paths
                .iter()
                .map(|p| Found {
                    path: p.clone(),
                    parent_file: None,
                    project_folder: None,
                    role: super::super::layout::Role::Session,
                    stat: None,
                })
                .collect();
            // A lookup made before (as the walk makes for a FILE given): another file's here,
            // so that keeping it shows.
            files[5].stat = given;
            stat_files(&mut files, Some(threads));
            for (i, f) in files.iter().enumerate() {
                let want = match i {
                    5 => given,
                    9 => None,
                    _ => std::fs::metadata(&f.path).map(|m| Stat::of(&m)).ok(),
                };
                assert_eq!(f.stat, want, "{threads} threads, file {i}");
                if i != 5 && i != 9 {
                    assert_eq!(f.stat.map(|s| s.key.size), Some(i as u64));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn input_metadata_answers_for_the_regular_file_at_its_place_only() {
        let dir = std::env::temp_dir();
        let file = dir.join(format!("pi-jsonl-input-metadata-{}", std::process::id()));
        std::fs::write(&file, b"{}").unwrap();
        let sources = [
            Source::Path(file.clone()),
            Source::Path(dir.clone()),
            Source::Stdin,
        ];
        let metadata = sources.iter().map(|s| match s {
            Source::Path(p) => std::fs::metadata(p).ok().map(|m| Stat::of(&m)),
            Source::Stdin => None,
        });
        let kept = InputMetadata::of(&sources, metadata.collect());
        let _ = std::fs::remove_file(&file);
        let got = kept.of_each(&sources);
        assert!(got[0].expect("the file's metadata").is_file());
        // A directory, stdin's place.
        assert_eq!(got[1..], [None, None]);
        // Another path at its place, the file at another place, at stdin's place, past the
        // end.
        let other = [
            Source::Path(file.with_extension("x")),
            Source::Path(file.clone()),
            Source::Path(file.clone()),
            Source::Path(file.clone()),
        ];
        assert_eq!(kept.of_each(&other), [None; 4]);
    }

    #[test]
    fn metadata_of_thousands_of_paths_is_in_their_order_on_any_thread() {
        // Directories, a missing path and stdin, in a pattern, over enough paths for threads.
        let kinds = ["/", "/nonexistent-pi-jsonl", "/tmp", "-"];
        let sources: Vec<Source> = (0..STATS_PER_THREAD * 5 + 7)
            .map(|i| match kinds[i % 3 + usize::from(i % 7 == 0)] {
                "-" => Source::Stdin,
                p => Source::Path(p.into()),
            })
            .collect();
        for threads in [None, Some(1), Some(3)] {
            let got = metadata_of(&sources, threads);
            assert_eq!(got.len(), sources.len());
            for (s, m) in sources.iter().zip(&got) {
                let want = match s {
                    Source::Path(p) => std::fs::metadata(p).ok().map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        m.ino()
                    }),
                    Source::Stdin => None,
                };
                assert_eq!(m.as_ref().map(|m| m.key.ino), want, "{s:?} {threads:?}");
            }
        }
    }
}
