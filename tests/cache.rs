//! `--cache` (issue 18): pi-usage and pi-sessions write the same output with and without the
//! cache — on a cold cache, a warm one, and after files were appended to and rewritten in place
//! (same size, modification time set back) — over the fixtures and the corpus; the cache lives
//! where it is told, never beside the inputs; a damaged cache file is ignored with a note;
//! concurrent runs do not corrupt it; `--cache-clear` empties it.

use crate::util::{cmd, corpus_files_or_skip, fixture_files, Output, TempDir};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// pi-usage's modes the cache serves (the session records, groups, totals, a range, repeats
/// counted, the table), and --context and --calls, which bypass it.
const USAGE_MODES: &[&[&str]] = &[
    &[],
    &["--by", "day,model", "--total"],
    &["--by", "project,week"],
    &["--total", "--no-dedup"],
    &["--since", "2026-01-01", "--total"],
    &["--table"],
    &["--context"],
    &["--calls"],
];

/// Copies `files` into a fresh directory (the copies are changed, never the originals).
fn copies(tag: &str, files: &[PathBuf]) -> (TempDir, Vec<PathBuf>) {
    let t = TempDir::new(tag);
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let name = format!("{i:03}-{}", f.file_name().unwrap().to_string_lossy());
        let p = t.path().join("in").join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::copy(f, &p).unwrap();
        out.push(p);
    }
    (t, out)
}

fn usage(mode: &[&str], files: &[PathBuf], cache: Option<&Path>) -> Output {
    let mut c = cmd("pi-usage").arg("--json").args(mode);
    if mode == ["--table"] {
        c = cmd("pi-usage").args(mode).env("COLUMNS", "200");
    }
    if let Some(dir) = cache {
        c = c.arg("--cache-dir").arg(dir);
    }
    c.args(files).run()
}

/// A run with the cache wrote what the run without it wrote: status, stderr and stdout.
fn same_run(plain: &Output, cached: &Output, what: &str) {
    assert_eq!(plain.status, cached.status, "{what}: {}", cached.stderr);
    assert_eq!(plain.stderr, cached.stderr, "{what}");
    assert!(
        plain.stdout == cached.stdout,
        "{what}: stdout differs\n--- without\n{}\n--- with\n{}",
        plain.out(),
        cached.out()
    );
}

/// Every mode of pi-usage gives the same stdout, stderr and status with the cache in `dir` as
/// without it.
fn usage_same(files: &[PathBuf], dir: &Path, phase: &str) {
    for mode in USAGE_MODES {
        let plain = usage(mode, files, None);
        let cached = usage(mode, files, Some(dir));
        same_run(&plain, &cached, &format!("{phase} {mode:?}"));
    }
}

fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).unwrap().modified().unwrap()
}

/// Appends `text` to the file at `p`.
fn append(p: &Path, text: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().append(true).open(p).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Rewrites the file at `p` in place: the first byte `from` after `after` becomes `to` (same
/// size), and the modification time is set back to what it was. `false` when there is no such
/// byte.
fn rewrite(p: &Path, after: &str, from: fn(u8) -> bool, to: u8) -> bool {
    let before = mtime(p);
    let mut bytes = fs::read(p).unwrap();
    let Some(at) = bytes
        .windows(after.len())
        .position(|w| w == after.as_bytes())
    else {
        return false;
    };
    let Some(i) = (at + after.len()..bytes.len()).find(|&i| from(bytes[i]) && bytes[i] != to)
    else {
        return false;
    };
    bytes[i] = to;
    fs::write(p, &bytes).unwrap();
    let f = fs::OpenOptions::new().write(true).open(p).unwrap();
    f.set_modified(before).unwrap();
    assert_eq!(mtime(p), before);
    true
}

/// An assistant message (a billed call) of `model` costing `cost`.
fn assistant(id: &str, model: &str, cost: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-05-02T10:00:00.000Z","message":{{"role":"assistant","provider":"cache-test","model":"{model}","usage":{{"input":11,"output":7,"cacheRead":3,"cacheWrite":1,"totalTokens":22,"cost":{{"total":{cost}}}}},"content":[],"timestamp":1777716000000}}}}"#
    ) + "\n"
}

/// The changes every phase-3 check makes to copies: appends (new calls, a repeat of the last
/// line, a new session, a line cut short), rewrites in place (a token count, the header's id),
/// a file cut to its first half.
fn change(files: &[PathBuf]) {
    for (i, p) in files.iter().enumerate() {
        let text = fs::read_to_string(p).unwrap_or_default();
        match i % 7 {
            0 => append(
                p,
                &assistant(
                    &format!("appended-{i}"),
                    "m-new",
                    "0.1250000000000000000001",
                ),
            ),
            1 => {
                // The last line again: a repeat of its call, if it is one.
                let last = text.lines().last().unwrap_or("").to_string();
                append(p, &(last + "\n"));
            }
            2 => {
                let header = r#"{"type":"session","version":3,"id":"cache-test-second","timestamp":"2026-05-03T00:00:00.000Z","cwd":"/tmp/cache-test"}"#;
                append(
                    p,
                    &(header.to_string() + "\n" + &assistant("second-1", "m2", "1e-19")),
                );
            }
            3 => {
                rewrite(p, "\"input\":", |b| b.is_ascii_digit(), b'7');
            }
            4 => {
                rewrite(p, "\"id\":\"", |b| b.is_ascii_alphanumeric(), b'z');
            }
            5 => append(p, r#"{"type":"message","id":"cut-short","#),
            _ => {
                // Shrunk: its first half of lines, the modification time set back.
                let before = mtime(p);
                let half: Vec<&str> = text.lines().collect();
                let kept = half[..half.len() / 2].join("\n") + "\n";
                fs::write(p, kept).unwrap();
                let f = fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_modified(before).unwrap();
            }
        }
    }
}

#[test]
fn usage_is_the_same_with_the_cache_on_fixtures_cold_warm_and_changed() {
    let (t, files) = copies("cache-usage", &fixture_files());
    let dir = t.path().join("cache");
    usage_same(&files, &dir, "cold");
    usage_same(&files, &dir, "warm");
    change(&files);
    usage_same(&files, &dir, "changed");
    usage_same(&files, &dir, "changed, warm");
    // Appended to again: read on from where the cache left off.
    for (i, p) in files.iter().enumerate().filter(|(i, _)| i % 7 == 0) {
        append(p, &assistant(&format!("again-{i}"), "m-new", "0.5"));
    }
    usage_same(&files, &dir, "appended again");
    // The cache is in its directory only: the inputs' directory holds the inputs.
    let listed = fs::read_dir(t.path().join("in")).unwrap().count();
    assert_eq!(listed, files.len());
    assert!(dir.join("pi-usage").is_dir());
}

#[test]
fn usage_is_the_same_with_the_cache_on_the_corpus_cold_warm_and_changed() {
    let Some(corpus) = corpus_files_or_skip() else {
        return;
    };
    let (t, files) = copies("cache-corpus", &corpus);
    let dir = t.path().join("cache");
    let modes: &[&[&str]] = &[&["--by", "day,model", "--total"], &[]];
    let same = |phase: &str| {
        for mode in modes {
            let plain = usage(mode, &files, None);
            let cached = usage(mode, &files, Some(&dir));
            assert_eq!(plain.status, cached.status, "{phase} {mode:?}");
            assert_eq!(plain.stderr, cached.stderr, "{phase} {mode:?}");
            assert!(
                plain.stdout == cached.stdout,
                "{phase} {mode:?}: stdout differs"
            );
        }
    };
    same("cold");
    same("warm");
    change(&files);
    same("changed");
    same("changed, warm");
}

/// An assistant message of `model` at `time` (text as written) with `usage` fields.
fn call_at(id: &str, model: &str, time: &str, cost: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"{time}","message":{{"role":"assistant","provider":"p","model":"{model}","usage":{{"input":5,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{{"total":{cost}}}}},"content":[],"timestamp":1777716000000}}}}"#
    ) + "\n"
}

/// The sums the cache keeps beside the calls stand for them only where adding them is adding
/// the calls: each case here would come out different if they were used regardless (a file
/// that repeats an earlier file's calls, a file that repeats its own under --no-dedup, one time
/// written two ways by calls of two models) or if they were less exact than the calls (costs
/// below 10^-18): the output must be the same as without the cache, cold and warm.
#[test]
fn summed_calls_stand_for_the_calls_only_where_they_add_up_the_same() {
    let t = TempDir::new("cache-summed");
    let header = |id: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/s"}}"#
        ) + "\n"
    };
    let calls = call_at("a1", "m1", "2026-05-02T10:00:00.000Z", "0.25")
        + &call_at("a2", "m2", "2026-05-02T11:00:00.000Z", "0.5");
    let files = [
        t.write("a.jsonl", header("sa") + &calls),
        // The same calls again, in another session: repeats of a.jsonl's.
        t.write(
            "b.jsonl",
            header("sb") + &calls + &call_at("b1", "m1", "2026-05-03T10:00:00.000Z", "1"),
        ),
        // A call repeated within the file.
        t.write(
            "c.jsonl",
            header("sc") + &call_at("c1", "m1", "2026-05-04T10:00:00.000Z", "2").repeat(2),
        ),
        // One instant written two ways, by calls of two models: which is the first of the
        // session depends on the calls' order.
        t.write(
            "d.jsonl",
            header("sd")
                + &call_at("d1", "m2", "2026-05-05T10:00:00Z", "3")
                + &call_at("d2", "m1", "2026-05-05T10:00:00.000Z", "3"),
        ),
        // Costs finer than 10^-18.
        t.write(
            "e.jsonl",
            header("se")
                + &call_at("e1", "m1", "2026-05-06T10:00:00.000Z", "1e-19")
                + &call_at("e2", "m1", "2026-05-06T10:00:01.000Z", "1e-19"),
        ),
    ];
    let dir = t.path().join("cache");
    let modes: &[&[&str]] = &[
        &[],
        &["--total"],
        &["--by", "model", "--total"],
        &["--by", "session,provider", "--total"],
        &["--by", "project,model", "--total", "--no-dedup"],
        &["--by", "day", "--total"],
    ];
    for phase in ["cold", "warm"] {
        for mode in modes {
            let plain = usage(mode, &files, None);
            let cached = usage(mode, &files, Some(&dir));
            same_run(&plain, &cached, &format!("{phase} {mode:?}"));
        }
    }
    // The repeats were seen: b.jsonl's two calls and c.jsonl's second are left out.
    let o = usage(&["--total"], &files, Some(&dir));
    let total = o.records().last().unwrap().clone();
    assert_eq!(total["duplicates"], 3, "{total}");
}

/// The cache reads a grown file on from where it left off: a change before that point,
/// outside the first and last 4 KiB the cache checks, is not seen (Pi only appends; this test
/// pins down which bytes are read again).
#[test]
fn a_grown_file_is_read_on_from_where_the_cache_left_off() {
    let t = TempDir::new("cache-grown");
    let dir = t.path().join("cache");
    let header = r#"{"type":"session","version":3,"id":"grown","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/g"}"#;
    let mut text = header.to_string() + "\n";
    for i in 0..100 {
        text += &assistant(&format!("a{i:03}"), "m", "0.001");
    }
    let p = t.write("grown.jsonl", &text);
    let total = |cache: bool| {
        let mut c = cmd("pi-usage").args(["--json", "--total"]);
        if cache {
            c = c.arg("--cache-dir").arg(&dir);
        }
        let o = c.arg(&p).ok();
        let r = o.records();
        r.last().unwrap()["total"]["cost"].to_string()
    };
    assert_eq!(total(true), "0.1");
    // Line 50's cost changed in place (same size), and a call appended.
    let at = text.find(r#""a049""#).unwrap();
    let cost_at = at + text[at..].find("0.001").unwrap();
    let mut bytes = text.clone().into_bytes();
    bytes[cost_at + 4] = b'9';
    bytes.extend_from_slice(assistant("z", "m", "1").as_bytes());
    fs::write(&p, &bytes).unwrap();
    // Without the cache: the whole file as it is now; with it: the call appended is added to
    // what the cache had.
    assert_eq!(total(false), "1.108");
    assert_eq!(total(true), "1.1");
    // The same size and a new change time: read whole again.
    let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_modified(SystemTime::now()).unwrap();
    assert_eq!(total(true), "1.108");
}

/// With stdin among the inputs (never cached) the files still come from the cache.
#[test]
fn stdin_among_cached_files() {
    let (t, files) = copies("cache-stdin", &fixture_files()[..20]);
    let dir = t.path().join("cache");
    let stdin = fs::read(crate::util::fixture("usage-basic.jsonl")).unwrap();
    let run = |cache: bool| {
        let mut c = cmd("pi-usage").args(["--json", "--by", "model", "--total"]);
        if cache {
            c = c.arg("--cache-dir").arg(&dir);
        }
        c.args(&files[..10])
            .arg("-")
            .args(&files[10..])
            .stdin(stdin.clone())
            .run()
    };
    let plain = run(false);
    for phase in ["cold", "warm"] {
        let o = run(true);
        assert_eq!(
            (o.status, &o.stderr),
            (plain.status, &plain.stderr),
            "{phase}"
        );
        assert!(o.stdout == plain.stdout, "{phase}: stdout differs");
    }
    assert!(dir.join("pi-usage").is_dir());
}

#[test]
fn a_damaged_cache_file_is_ignored_with_a_note() {
    let files: Vec<PathBuf> = [
        "usage-basic.jsonl",
        "usage-fork.jsonl",
        "pi16-usage-sources.jsonl",
    ]
    .iter()
    .map(|f| crate::util::fixture(f))
    .collect();
    let (t, files) = copies("cache-damaged", &files);
    let dir = t.path().join("cache");
    // `--by day` needs each call, which the details files keep: a run reads them all.
    let modes: [&[&str]; 2] = [&["--by", "model", "--total"], &["--by", "day", "--total"]];
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    type Damage = fn(&mut Vec<u8>, &[u8]);
    let damages: [(&str, Damage); 4] = [
        ("cut short", |b, _| b.truncate(b.len() / 2)),
        ("garbage", |b, _| b.iter_mut().for_each(|x| *x = b'#')),
        ("a flipped bit", |b, _| {
            let mid = b.len() / 2;
            b[mid] ^= 4;
        }),
        ("another version", |b, version| {
            // A valid file written by another version: its checksum made right again.
            let at = b.windows(version.len()).position(|w| w == version).unwrap();
            b[at] = b'9';
            let body = b.len() - 8;
            let sum = xxhash_rust::xxh3::xxh3_64(&b[..body]);
            b[body..].copy_from_slice(&sum.to_le_bytes());
        }),
    ];
    for mode in modes {
        let plain = usage(mode, &files, None);
        assert_eq!(plain.status, 0);
        // Twice: the second run takes the sums and keeps the files as a disjoint set.
        usage(mode, &files, Some(&dir));
        usage(mode, &files, Some(&dir));
        let cache_files: Vec<PathBuf> = fs::read_dir(dir.join("pi-usage"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let index = dir.join("pi-usage").join("index.bin");
        let sets = dir.join("pi-usage").join("sets.bin");
        assert!(cache_files.contains(&index), "{cache_files:?}");
        let details: Vec<PathBuf> = (cache_files.into_iter())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("details-")
            })
            .collect();
        assert!(!details.is_empty());
        // The index and the sets damaged: every file is read again. The details damaged: the
        // runs that need the calls read those files again.
        let targets = if mode.contains(&"day") {
            details
        } else {
            assert!(sets.exists());
            vec![index, sets]
        };
        for (what, damage) in damages {
            for s in &targets {
                let mut b = fs::read(s).unwrap();
                damage(&mut b, version);
                fs::write(s, b).unwrap();
            }
            let o = usage(mode, &files, Some(&dir));
            assert_eq!(o.status, 0, "{what}: a note, not a problem: {}", o.stderr);
            assert!(o.stdout == plain.stdout, "{what} {mode:?}: stdout differs");
            let notes: Vec<&str> = o.stderr_lines();
            assert_eq!(notes.len(), targets.len(), "{what} {mode:?}: {}", o.stderr);
            for n in notes {
                assert!(n.contains(": note: cache file "), "{what}: {n}");
                let why = if what == "another version" {
                    "was written by pi-usage 9"
                } else {
                    "; ignored"
                };
                assert!(n.contains(why), "{what}: {n}");
            }
            // Written again: the next run has nothing to say.
            let again = usage(mode, &files, Some(&dir));
            assert_eq!((again.status, again.stderr.as_str()), (0, ""), "{what}");
            assert!(again.stdout == plain.stdout, "{what}: stdout differs");
        }
    }
}

/// A run that takes every file's sums, none of them with an identity an earlier one had,
/// keeps the files (their keys) as a disjoint set, and a later run over the same files skips
/// the set of identities seen: a file appended to, given twice, or another file added makes
/// another set, checked again, so a repeat across files is still left out as without the
/// cache; files that share a call are never kept as a set.
#[test]
fn files_kept_as_a_disjoint_set_are_checked_again_when_one_changes() {
    let t = TempDir::new("cache-disjoint");
    let header = |id: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/s"}}"#
        ) + "\n"
    };
    let a_call = call_at("a1", "m1", "2026-05-02T10:00:00.000Z", "0.25");
    let a = t.write("a.jsonl", header("sa") + &a_call);
    let b = t.write(
        "b.jsonl",
        header("sb") + &call_at("b1", "m2", "2026-05-02T11:00:00.000Z", "0.5"),
    );
    // c repeats a's call.
    let c = t.write("c.jsonl", header("sc") + &a_call);
    let dir = t.path().join("cache");
    let sets = dir.join("pi-usage").join("sets.bin");
    let mode: &[&str] = &["--by", "model", "--total"];
    let same = |files: &[PathBuf], what: &str| {
        for run in ["cold", "warm", "again"] {
            let plain = usage(mode, files, None);
            let cached = usage(mode, files, Some(&dir));
            same_run(&plain, &cached, &format!("{what} {run}"));
        }
    };
    // Files that share a call: never a set.
    same(&[a.clone(), c.clone()], "a and c");
    assert!(!sets.exists(), "a and c share a call");
    same(&[a.clone(), b.clone()], "a and b");
    assert!(sets.exists(), "a and b share none");
    // A repeat of a's call appended to b; then the same file twice; then a third file.
    append(&b, &a_call);
    same(&[a.clone(), b.clone()], "b repeats a");
    same(&[a.clone(), a.clone()], "a twice");
    same(&[a.clone(), b.clone(), c.clone()], "a, b and c");
    let o = usage(mode, &[a.clone(), b, c], Some(&dir));
    let total = o.records().last().unwrap().clone();
    assert_eq!(total["duplicates"], 2, "{total}");
}

#[test]
fn concurrent_runs_do_not_corrupt_the_cache() {
    let (t, files) = copies("cache-concurrent", &fixture_files());
    let dir = t.path().join("cache");
    let mode: &[&str] = &["--by", "day,model", "--total"];
    let mut plain = usage(mode, &files, None);
    for round in 0..3 {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (files, dir) = (files.clone(), dir.clone());
                std::thread::spawn(move || usage(mode, &files, Some(&dir)))
            })
            .collect();
        for r in runs {
            let o = r.join().unwrap();
            assert!(o.stdout == plain.stdout, "round {round}: stdout differs");
            assert_eq!(o.stderr, plain.stderr, "round {round}");
        }
        if round == 1 {
            change(&files[..12]);
            plain = usage(mode, &files, None);
        }
    }
    // No temporary file is left, and no cache file is damaged (nothing noted).
    for e in fs::read_dir(dir.join("pi-usage")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name.ends_with(".bin") && !name.starts_with('.'), "{name}");
    }
    let o = usage(mode, &files, Some(&dir));
    assert!(!o.stderr.contains("cache file"), "{}", o.stderr);
}

#[test]
fn cache_clear_deletes_the_tools_cache_and_the_default_is_xdg_cache_home() {
    let t = TempDir::new("cache-clear");
    let xdg = t.path().join("xdg");
    let f = crate::util::fixture("usage-basic.jsonl");
    let run = |tool: &str, args: &[&str]| cmd(tool).env("XDG_CACHE_HOME", &xdg).args(args).run();
    let usage_dir = xdg.join("pi-jsonl").join("pi-usage");
    run("pi-usage", &["--cache", "--total", f.to_str().unwrap()]);
    assert!(usage_dir.is_dir());
    let sessions_dir = xdg.join("pi-jsonl").join("pi-sessions");
    let tree = crate::util::fixture("sessions-tree");
    run(
        "pi-sessions",
        &["--cache", "--json", tree.to_str().unwrap()],
    );
    assert!(sessions_dir.is_dir());
    let o = run("pi-usage", &["--cache-clear"]);
    assert_eq!((o.status, o.stdout.len(), o.stderr.as_str()), (0, 0, ""));
    assert!(!usage_dir.exists());
    assert!(sessions_dir.is_dir(), "each tool clears its own");
    let o = run("pi-sessions", &["--cache-clear"]);
    assert_eq!((o.status, o.stderr.as_str()), (0, ""));
    assert!(!sessions_dir.exists());
    // Nothing to clear is no error either.
    assert_eq!(run("pi-sessions", &["--cache-clear"]).status, 0);
}

/// pi-usage given a directory: the cache says which files found under it are sessions, without
/// opening them, only while each is as it was kept. The output is that of a run without the
/// cache when a session file stops being one (same size, modification time set back), when a
/// file that is no session, an empty one and a new session appear, and when a file goes.
#[test]
fn usage_of_a_directory_is_the_same_with_the_cache_when_files_change_kind_come_and_go() {
    let mut inputs = fixture_files();
    inputs.extend(corpus_files_or_skip().unwrap_or_default());
    let (t, files) = copies("cache-dir", &inputs);
    let root = t.path().join("in");
    let dir = t.path().join("cache");
    let same = |phase: &str| {
        usage_same(std::slice::from_ref(&root), &dir, phase);
        for mode in [&["--by", "model"][..], &["--by", "session"], &["--total"]] {
            let plain = usage(mode, std::slice::from_ref(&root), None);
            let cached = usage(mode, std::slice::from_ref(&root), Some(&dir));
            assert_eq!(
                (plain.status, &plain.stderr),
                (cached.status, &cached.stderr)
            );
            assert!(
                plain.stdout == cached.stdout,
                "{phase} {mode:?}: stdout differs"
            );
        }
    };
    same("cold");
    same("warm");
    let total = |cache: Option<&Path>| usage(&["--total"], std::slice::from_ref(&root), cache);
    let before = total(Some(&dir)).stdout;
    // A session file whose header becomes a record without a `type` (`"typo"`): no session.
    let header =
        |p: &&PathBuf| fs::read_to_string(p).is_ok_and(|t| t.starts_with(r#"{"type":"session""#));
    let stopped = files.iter().find(header).unwrap();
    assert!(rewrite(stopped, r#"{"typ"#, |b| b == b'e', b'o'));
    let after = total(Some(&dir));
    assert!(
        after.stdout != before,
        "the file that stopped being a session is still read"
    );
    assert_eq!(after.stdout, total(None).stdout);
    same("a session no more");
    // A new session (a copy of one the cache knows: another inode), a file that is no session,
    // an empty one; one file removed.
    let known = files.iter().rev().find(header).unwrap();
    fs::copy(known, root.join("zz-new.jsonl")).unwrap();
    fs::write(
        root.join("zz-foreign.jsonl"),
        "{\"version\":1,\"recordType\":\"x\"}\n",
    )
    .unwrap();
    fs::write(root.join("zz-empty.jsonl"), "").unwrap();
    fs::remove_file(&files[1]).unwrap();
    same("added and removed");
    same("added and removed, warm");
}

/// pi-sessions over a folder of copies, with the cache in `dir` or without.
fn sessions(root: &Path, extra: &[&str], cache: Option<&Path>) -> Output {
    let mut c = cmd("pi-sessions")
        .args(["--json", "--dir"])
        .arg(root)
        .args(extra);
    if let Some(dir) = cache {
        c = c.arg("--cache-dir").arg(dir);
    }
    c.run()
}

#[test]
fn sessions_is_the_same_with_the_cache_cold_warm_and_changed() {
    let mut inputs = fixture_files();
    inputs.extend(corpus_files_or_skip().unwrap_or_default());
    let (t, files) = copies("cache-sessions", &inputs);
    let root = t.path().join("in");
    let dir = t.path().join("cache");
    let same = |phase: &str| {
        for extra in [&[][..], &["--prompts"][..]] {
            let plain = sessions(&root, extra, None);
            let cached = sessions(&root, extra, Some(&dir));
            assert_eq!(plain.status, cached.status, "{phase} {extra:?}");
            assert_eq!(plain.stderr, cached.stderr, "{phase} {extra:?}");
            assert!(
                plain.stdout == cached.stdout,
                "{phase} {extra:?}: stdout differs"
            );
        }
    };
    same("cold");
    same("warm");
    change(&files);
    same("changed");
    same("changed, warm");
    assert_eq!(fs::read_dir(&root).unwrap().count(), files.len());
}

/// A tree in Pi's layout under `root`: two project folders, a session's own folder with a
/// sub-agent's run in it (three levels), copies of fixture sessions.
fn layout_tree(root: &Path) {
    let files = [
        ("--home-u-a--/s1.jsonl", "usage-basic.jsonl"),
        ("--home-u-a--/s2.jsonl", "usage-fork.jsonl"),
        ("--home-u-a--/s1/run.jsonl", "pi16-usage-sources.jsonl"),
        ("--home-u-b--/s3.jsonl", "usage-basic.jsonl"),
    ];
    for (rel, fixture) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::copy(crate::util::fixture(fixture), p).unwrap();
    }
}

/// Whether `tool`'s cache in `dir` keeps a walk.
fn keeps_walk(dir: &Path, tool: &str) -> bool {
    dir.join(tool).join("walks.bin").exists()
}

/// pi-usage (`--by session`, `--total`) and pi-sessions given the directory `root` write the
/// same with the cache in `dir` as without it.
fn walk_same(root: &Path, dir: &Path, phase: &str) {
    let roots = [root.to_path_buf()];
    for mode in [&["--by", "session", "--total"][..], &["--by", "model"]] {
        let (plain, cached) = (usage(mode, &roots, None), usage(mode, &roots, Some(dir)));
        same_run(&plain, &cached, &format!("{phase} {mode:?}"));
    }
    let (plain, cached) = (sessions(root, &[], None), sessions(root, &[], Some(dir)));
    same_run(&plain, &cached, &format!("{phase} pi-sessions"));
}

/// A directory's walk is kept (the tree unchanged for the cache's settling time) and taken
/// again only while no directory in it changed: each way a directory's listing can change —
/// at the top, in a project folder, two levels down; a file added, removed, renamed; a folder
/// added, removed, renamed, replaced — is seen, by pi-usage and pi-sessions alike, and the
/// output is that of a run without the cache. A walk through a symbolic link is not kept, nor
/// one of a tree changed moments before (time stamps have a granularity: a directory changed
/// twice within one tick keeps one time); a damaged walks file is ignored with a note.
#[test]
fn a_directory_walk_is_kept_only_while_no_directory_in_it_changed() {
    let t = TempDir::new("cache-walk");
    type Change = fn(&Path);
    let changes: [(&str, Change); 10] = [
        ("a session added at the top", |r| {
            fs::copy(
                crate::util::fixture("usage-fork.jsonl"),
                r.join("top.jsonl"),
            )
            .unwrap();
        }),
        ("a session added in a project folder", |r| {
            let to = r.join("--home-u-b--/s4.jsonl");
            fs::copy(crate::util::fixture("usage-fork.jsonl"), to).unwrap();
        }),
        ("a run added two levels down", |r| {
            let to = r.join("--home-u-a--/s1/run2.jsonl");
            fs::copy(crate::util::fixture("usage-basic.jsonl"), to).unwrap();
        }),
        ("a run removed two levels down", |r| {
            fs::remove_file(r.join("--home-u-a--/s1/run.jsonl")).unwrap();
        }),
        ("a session renamed", |r| {
            let a = r.join("--home-u-a--");
            fs::rename(a.join("s2.jsonl"), a.join("s2b.jsonl")).unwrap();
        }),
        ("a session's folder renamed", |r| {
            let a = r.join("--home-u-a--");
            fs::rename(a.join("s1"), a.join("s1-old")).unwrap();
        }),
        ("a project folder renamed", |r| {
            fs::rename(r.join("--home-u-b--"), r.join("--home-u-c--")).unwrap();
        }),
        ("a folder added with a session", |r| {
            fs::create_dir(r.join("--home-u-d--")).unwrap();
            let to = r.join("--home-u-d--/s5.jsonl");
            fs::copy(crate::util::fixture("usage-basic.jsonl"), to).unwrap();
        }),
        ("a folder removed", |r| {
            fs::remove_dir_all(r.join("--home-u-b--")).unwrap();
        }),
        ("a folder replaced by another of the same name", |r| {
            let (b, new) = (r.join("--home-u-b--"), r.join("new"));
            fs::create_dir(&new).unwrap();
            fs::copy(
                crate::util::fixture("usage-fork.jsonl"),
                new.join("s3b.jsonl"),
            )
            .unwrap();
            fs::remove_dir_all(&b).unwrap();
            fs::rename(&new, &b).unwrap();
        }),
    ];
    let case = |i: usize| {
        (
            t.path().join(format!("tree{i}")),
            t.path().join(format!("cache{i}")),
        )
    };
    for i in 0..changes.len() + 2 {
        layout_tree(&case(i).0);
    }
    // Tree n + 1 holds a link to a folder outside it.
    let (linked, linked_cache) = case(changes.len() + 1);
    std::os::unix::fs::symlink(t.path().join("tree0/--home-u-b--"), linked.join("--link--"))
        .unwrap();
    // Changed moments ago: no walk is kept.
    let (fresh, fresh_cache) = case(changes.len());
    walk_same(&fresh, &fresh_cache, "fresh");
    for tool in ["pi-usage", "pi-sessions"] {
        assert!(fresh_cache.join(tool).join("index.bin").exists(), "{tool}");
        assert!(
            !keeps_walk(&fresh_cache, tool),
            "{tool}: a walk of a tree changed moments ago"
        );
    }
    // The cache's settling time (2 s), and a margin.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    walk_same(&linked, &linked_cache, "linked");
    for tool in ["pi-usage", "pi-sessions"] {
        assert!(
            !keeps_walk(&linked_cache, tool),
            "{tool}: a walk through a link"
        );
    }
    for (i, (what, change)) in changes.iter().enumerate() {
        let (root, dir) = case(i);
        walk_same(&root, &dir, what);
        for tool in ["pi-usage", "pi-sessions"] {
            assert!(keeps_walk(&dir, tool), "{what}: {tool} keeps no walk");
        }
        change(&root);
        walk_same(&root, &dir, what);
    }
    // Damaged: ignored with a note, the output the same.
    let (root, dir) = case(0);
    let roots = [root.clone()];
    let walks = dir.join("pi-usage").join("walks.bin");
    let mut b = fs::read(&walks).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 4;
    fs::write(&walks, b).unwrap();
    let (plain, cached) = (usage(&[], &roots, None), usage(&[], &roots, Some(&dir)));
    assert!(
        plain.stdout == cached.stdout,
        "damaged walks: stdout differs"
    );
    assert!(
        cached.stderr.contains(": note: cache file ") && cached.stderr.contains("walks.bin"),
        "{}",
        cached.stderr
    );
    // Said once: the damaged file is gone (the tree changed moments ago keeps no new walk).
    let again = usage(&[], &roots, Some(&dir));
    assert!(
        plain.stdout == again.stdout,
        "after damaged walks: stdout differs"
    );
    assert_eq!(again.stderr, plain.stderr);
}
