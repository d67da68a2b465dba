//! Mapped files (large regular files, see `pi_jsonl::mapped`) are read exactly as streams
//! are: the same sessions, entries, offsets and diagnostics, and pi-branch writes the same
//! bytes from a mapped file as from the same bytes on stdin.

use crate::util::{cmd, TempDir};
use pi_jsonl::diag::Diags;
use pi_jsonl::input::mapped::{self, Map};
use pi_jsonl::output::Stop;
use pi_jsonl::reader::{self, Entry, Header, Visitor};
use pi_jsonl_gen::{Gen, Shape};
use std::fs::File;

#[derive(Default, PartialEq, Debug)]
struct Record(Vec<(String, u64, u64, Vec<u8>, bool)>);

impl Visitor for Record {
    fn header(&mut self, h: &Header<'_>, _: &mut Diags) -> Result<(), Stop> {
        let l = &h.line;
        self.0.push((
            format!("header {}", h.id),
            l.no,
            l.offset,
            l.bytes.to_vec(),
            l.has_newline,
        ));
        Ok(())
    }
    fn entry(&mut self, e: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
        let l = &e.line;
        self.0.push((
            "entry".into(),
            l.no,
            l.offset,
            l.bytes.to_vec(),
            l.has_newline,
        ));
        Ok(())
    }
    fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
        self.0.push(("end".into(), 0, 0, vec![], false));
        Ok(())
    }
}

/// A generated session past the mapping threshold, with every kind of defect in it.
fn defective_session() -> Vec<u8> {
    let mut data = Vec::new();
    Gen::new(5)
        .session(&Shape::v3(mapped::MIN_LEN + 300_000), &mut data)
        .unwrap();
    let cut = data.len() / 2;
    let cut = cut + data[cut..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let mut out = data[..cut].to_vec();
    out.extend_from_slice(b"\n   \n");
    out.extend_from_slice(
        b"{\"type\":\"custom\",\"id\":\"g1\",\"parentId\":null}{\"type\":\"x\"}\n",
    );
    out.extend_from_slice(
        b"{\"type\":\"custom\",\"id\":\"u1\",\"parentId\":null,\"t\":\"\xff\"}\r\n",
    );
    out.extend_from_slice(b"[1,2]\nnull\n{\"a\":\"\\*\"}\n");
    out.extend_from_slice(&data[cut..]);
    Gen::new(6).session(&Shape::v1(50_000), &mut out).unwrap();
    out.extend_from_slice(
        b"{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"mess",
    );
    out
}

#[test]
fn mapped_reading_matches_stream_reading() {
    let dir = TempDir::new("mapped");
    let path = dir.write("s.jsonl", defective_session());
    let f = File::open(&path).unwrap();
    // SAFETY: a test file nothing else changes.
    let len = f.metadata().unwrap().len();
    let map = unsafe { Map::new(&f, len) }.expect("large enough to be mapped");

    let (mut a, mut b) = (Record::default(), Record::default());
    let mut da = Diags::new("t", "s", false);
    let mut db = Diags::new("t", "s", false);
    let sa = reader::read(File::open(&path).unwrap(), true, &mut da, &mut a).unwrap();
    let sb = mapped::read_mapped(&map, true, &mut db, &mut b).unwrap();
    assert!(a.0.len() > 300, "{} records", a.0.len());
    assert_eq!(a, b);
    assert_eq!(format!("{sa:?}"), format!("{sb:?}"));
    let (ca, cb) = (da.counts(), db.counts());
    assert_eq!(ca.iter().collect::<Vec<_>>(), cb.iter().collect::<Vec<_>>());
    // The defects were seen: glued, invalid UTF-8, not an object, bad escape, truncated line,
    // second header.
    assert!(ca.total() >= 6, "{:?}", ca.iter().collect::<Vec<_>>());
}

#[test]
fn pi_branch_writes_the_same_bytes_from_a_mapped_file_and_from_stdin() {
    let dir = TempDir::new("mapped-branch");
    let data = defective_session();
    let path = dir.write("s.jsonl", &data);
    let from_file = cmd("pi-branch").arg(&path).run();
    let from_stdin = cmd("pi-branch").stdin(data).run();
    assert_eq!(from_file.status, 2);
    assert!(from_file.stdout.len() > mapped::MIN_LEN as usize / 2);
    assert_eq!(from_file.stdout, from_stdin.stdout);
}

/// Three ways to read a named file: whole (small), mapped (large), streamed (not a regular
/// file, e.g. a FIFO or `<(...)`). All give the same output, in pi-branch and in pi-tools
/// (both read lines of a regular file again by offset, which a FIFO cannot do).
#[test]
fn a_fifo_is_streamed_and_gives_the_same_output() {
    for (tool, name) in [
        ("pi-branch", "branched.jsonl"),
        ("pi-tools", "tools-missing-result.jsonl"),
    ] {
        let dir = TempDir::new("fifo");
        let fixture = crate::util::read_fixture(name);
        let regular = dir.write("regular.jsonl", &fixture);
        let fifo = dir.path().join("fifo.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mkfifo unavailable: skipped");
            return;
        }
        let writer = {
            let (fifo, data) = (fifo.clone(), fixture.clone());
            std::thread::spawn(move || std::fs::write(fifo, data).unwrap())
        };
        let from_fifo = cmd(tool).arg(&fifo).run();
        writer.join().unwrap();
        let from_file = cmd(tool).arg(&regular).run();
        assert_eq!(
            from_fifo.status, from_file.status,
            "{tool}: {}",
            from_fifo.stderr
        );
        assert!(!from_file.stdout.is_empty(), "{tool}");
        let fifo_out = from_fifo.out().replace("fifo.jsonl", "regular.jsonl");
        assert_eq!(fifo_out, from_file.out(), "{tool}");
    }
}

/// Counts entries, and truncates the file it reads to `keep` bytes at the first entry, as
/// another program rewriting the file would.
struct Truncating {
    path: std::path::PathBuf,
    keep: u64,
    entries: u64,
}

impl Visitor for Truncating {
    fn header(&mut self, _: &Header<'_>, _: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
    fn entry(&mut self, _: &Entry<'_>, _: &mut Diags) -> Result<(), Stop> {
        if self.entries == 0 {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .unwrap();
            f.set_len(self.keep).unwrap();
        }
        self.entries += 1;
        Ok(())
    }
    fn end(&mut self, _: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
}

/// Issue 19, item 5: a mapped file that shrinks while it is read gives a read error, never
/// SIGBUS; the entries before the new end are read.
#[test]
fn a_file_that_shrinks_while_mapped_is_a_diagnostic_not_a_crash() {
    let dir = TempDir::new("shrinks");
    let data = defective_session();
    let path = dir.write("s.jsonl", &data);
    let keep = mapped::MIN_LEN / 4;
    let input = pi_jsonl::input::Opened::open(
        &pi_jsonl::input::Source::Path(path.clone()),
        &mut Diags::new("t", "s", false),
    )
    .unwrap();
    let mut v = Truncating {
        path: path.clone(),
        keep,
        entries: 0,
    };
    let mut d = Diags::new("t", "s", false);
    input.read(&mut d, &mut v).unwrap();
    assert!(v.entries > 10, "the entries before the new end are read");
    assert_eq!(d.counts().get(pi_jsonl::diag::Kind::Io), 1, "{}", d.held());
    assert!(
        d.held().contains("the file shrank while it was read"),
        "{}",
        d.held()
    );

    // A map whose file shrank: the lost pages read as zeros, and the map says so.
    std::fs::write(&path, &data).unwrap();
    let f = File::open(&path).unwrap();
    // SAFETY: the test truncates the file on purpose, which the guard is for.
    let len = f.metadata().unwrap().len();
    let map = unsafe { Map::new(&f, len) }.expect("large enough to be mapped");
    assert!(map.still_readable(0, map.bytes().len()) && !map.faulted());
    let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    writer.set_len(keep).unwrap();
    assert!(
        map.still_readable(0, keep as usize - 1),
        "bytes before the end"
    );
    assert!(!map.still_readable(0, map.bytes().len()));
    assert!(map.faulted());
    assert!(map.bytes()[keep as usize + 4096..].iter().all(|&b| b == 0));
}

/// Issue 19, item 10: whitespace Pi trims (here NBSP, form feed, U+2028, U+3000) before the
/// header and after the last record of a mapped file is trimmed, as from a stream.
#[test]
fn item_10_a_mapped_file_is_trimmed_as_pi_trims_it() {
    let dir = TempDir::new("mapped-trim");
    let mut session = Vec::new();
    Gen::new(7)
        .session(&Shape::v3(mapped::MIN_LEN + 100_000), &mut session)
        .unwrap();
    let mut data = "\u{a0}\n\u{c}".as_bytes().to_vec();
    data.extend_from_slice(&session[..session.len() - 1]);
    data.extend_from_slice("\u{2028}\n\u{3000}".as_bytes());
    let path = dir.write("s.jsonl", &data);
    let from_file = cmd("pi-branch").arg(&path).run();
    let from_stdin = cmd("pi-branch").stdin(data).run();
    let plain = cmd("pi-branch").stdin(session).run();
    assert_eq!((from_file.status, from_file.stderr.as_str()), (0, ""));
    assert!(plain.stdout.len() > 1000);
    assert_eq!(from_file.stdout, plain.stdout);
    assert_eq!(from_stdin.stdout, plain.stdout);
}
