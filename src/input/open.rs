//! Opening an input once and reading it the cheapest way it allows. Every tool reads its
//! inputs through [`Opened`]:
//! - a regular file of at least [`mapped::MIN_LEN`] bytes is mapped (no copy; pages released
//!   behind the scan);
//! - a smaller regular file is read whole into this thread's reused buffer (one copy, no
//!   fresh zeroed buffer per file);
//! - stdin, and a named file that is not a regular file (a FIFO, `<(...)`, a directory), are
//!   read as a stream: they can be read only once.
//!
//! A tool that reads parts of a file again by offset (pi-branch's kept lines, pi-tools'
//! waiting records) gets the regular file from [`Opened::file`]. A tool that reads its
//! inputs twice (pi-redact `--keep-text`) keeps a stream in a [`Spool`] first.

use super::mapped::{self, Map};
use super::Source;
use crate::diag::{Diags, Kind};
use crate::output::Stop;
use crate::reader::{self, Stats, Visitor};
use crate::sync::lock;
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

/// An input, opened.
pub enum Opened {
    Stdin,
    /// A regular file and its length when it was opened: it can be mapped, read whole, and
    /// read again by offset. The length decides how (map, read whole, on several cores)
    /// without asking the system again each time (three `fstat` calls and an `lseek` per
    /// file, 4,000 per 1,000 small files). A file read whole is read to its end as it is
    /// then; a map covers the length at the open.
    Regular(File, u64),
    /// A named file that is not a regular file: read once, as a stream.
    Stream(File),
    /// A stream kept in a [`Spool`]: read as a regular file of that length is, and named or
    /// not as the stream was.
    Spooled(File, u64, bool),
}

/// The bytes of an input as a tool is handed them by [`Opened::contents`].
pub enum Contents<'a> {
    /// A large regular file, mapped.
    Mapped(&'a Map),
    /// A small regular file read whole (the bytes read before a read error, if one happened:
    /// the reader reports it after them).
    Whole(&'a [u8], Option<io::Error>),
    /// A stream: stdin, a FIFO, or a regular file that could be neither mapped nor read whole.
    Stream(&'a mut dyn Read),
}

thread_local! {
    /// The bytes of the small file being read on this thread (reused from file to file).
    static WHOLE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Opened {
    /// Opens `src`; a file that cannot be opened is reported (`cannot open: …`) and gives
    /// `None`.
    pub fn open(src: &Source, d: &mut Diags) -> Option<Opened> {
        match src {
            Source::Stdin => Some(Opened::Stdin),
            Source::Path(p) => match File::open(p) {
                Ok(f) => match f.metadata() {
                    Ok(m) if m.is_file() => Some(Opened::Regular(f, m.len())),
                    _ => Some(Opened::Stream(f)),
                },
                Err(e) => {
                    d.report(None, Kind::Io, format!("cannot open: {e}"));
                    None
                }
            },
        }
    }

    /// The open regular file, to read again by offset; `None` for a stream.
    pub fn file(&self) -> Option<&File> {
        match self {
            Opened::Regular(f, _) | Opened::Spooled(f, _, _) => Some(f),
            Opened::Stdin | Opened::Stream(_) => None,
        }
    }

    /// Whether the input is a named file (the reader's checks that only make sense for a
    /// file: a second header, an empty file).
    pub fn is_named(&self) -> bool {
        match self {
            Opened::Stdin => false,
            Opened::Spooled(_, _, named) => *named,
            Opened::Regular(..) | Opened::Stream(_) => true,
        }
    }

    /// Hands `f` the input's bytes, by the cheapest way the input allows (see the module
    /// docs).
    pub fn contents<R>(&self, f: impl FnOnce(Contents<'_>) -> R) -> R {
        let (file, len) = match self {
            Opened::Stdin => return f(Contents::Stream(&mut io::stdin().lock())),
            Opened::Stream(file) => return f(Contents::Stream(&mut &*file)),
            Opened::Regular(file, len) | Opened::Spooled(file, len, _) => (file, *len),
        };
        // SAFETY: see `Map::new`. A file that changes while it is mapped changes what the
        // tool reads, as with a read; one that shrinks is caught by the map's guard (a read
        // error, `the file shrank while it was read`, instead of SIGBUS).
        if let Some(map) = unsafe { Map::new(file, len) } {
            let r = f(Contents::Mapped(&map));
            map.release(0, map.bytes().len());
            return r;
        }
        if len < mapped::MIN_LEN {
            let mut f = Some(f);
            let whole = WHOLE.with(|w| {
                // Busy only when a tool reads another file from inside this one's reading.
                let mut buf = w.try_borrow_mut().ok()?;
                let (filled, failed) = read_whole(file, len, &mut buf);
                let r = (f.take().expect("called once"))(Contents::Whole(&buf[..filled], failed));
                if buf.len() > 4 * mapped::MIN_LEN as usize {
                    *buf = Vec::new();
                }
                Some(r)
            });
            if let Some(r) = whole {
                return r;
            }
            let _ = (&*file).seek(SeekFrom::Start(0));
            return (f.take().expect("not called yet"))(Contents::Stream(&mut &*file));
        }
        f(Contents::Stream(&mut &*file))
    }

    /// Whether the input is a regular file that is read on several cores (large enough, and
    /// the run has more than one).
    pub fn read_on_several_cores(&self) -> bool {
        matches!(self, Opened::Regular(_, len) | Opened::Spooled(_, len, _) if parallel_len(*len))
    }

    /// Reads every session of the input through the session reader.
    pub fn read(&self, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
        let named = self.is_named();
        self.contents(|c| read_contents(c, named, d, v))
    }
}

/// A stream (stdin, a FIFO) read to its end into an unnamed temporary file (`O_TMPFILE` in
/// `TMPDIR`, else /tmp: nothing is left behind), so that it can be read more than once, each
/// time as [`Opened::Spooled`]: mapped or read whole as a regular file, its lines named as
/// the stream's would be. Where the file can take no more (the disk full), what it holds is
/// read at every reading and the rest of the stream once, at the last one, after it.
pub struct Spool {
    file: File,
    len: u64,
    named: bool,
    /// The error that ended the stream early, reported after its lines at the last reading,
    /// as a stream's is.
    failed: Option<String>,
    /// The stream's rest, not kept (the bytes read but not written first), and why.
    rest: Mutex<Option<(Box<dyn Read + Send>, String)>>,
}

impl Spool {
    /// `src` kept, when it is a stream (stdin, or a named file that is not a regular file);
    /// `Ok(None)` for a regular file, read again from its name, and for a path that cannot
    /// be looked up, reported where it is read. `Err`: no temporary file could be made, and
    /// nothing was read.
    pub fn keep(src: &Source) -> io::Result<Option<Spool>> {
        let named = match src {
            Source::Stdin => false,
            Source::Path(p) => match std::fs::metadata(p) {
                Ok(m) if !m.is_file() => true,
                _ => return Ok(None),
            },
        };
        // The file first: where none can be made the stream is left unopened, for the one
        // reading that then reads it.
        let mut file = unnamed_file()?;
        let mut quiet = Diags::quiet("", "");
        let mut from: Box<dyn Read + Send> = match Opened::open(src, &mut quiet) {
            Some(Opened::Stream(f)) => Box::new(f),
            Some(Opened::Stdin) => Box::new(io::stdin()),
            // Replaced by a regular file since it was looked up, or gone: read by its name.
            _ => return Ok(None),
        };
        let (mut len, mut failed, mut unkept) = (0, None, None);
        let mut buf = vec![0; 1 << 20];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    failed = Some(format!("read error: {e}"));
                    break;
                }
            };
            let (written, error) = write_counted(&mut file, &buf[..n]);
            len += written as u64;
            if let Some(e) = error {
                let left = io::Cursor::new(buf[written..n].to_vec()).chain(from);
                unkept = Some((Box::new(left) as Box<dyn Read + Send>, e.to_string()));
                break;
            }
        }
        Ok(Some(Spool {
            file,
            len,
            named,
            failed,
            rest: Mutex::new(unkept),
        }))
    }

    /// Reads every session of what was kept through the session reader, from its start; at
    /// the `last` reading, the stream's rest that could not be kept after it.
    pub fn read(&self, last: bool, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
        let file = self.file.try_clone()?;
        (&file).seek(SeekFrom::Start(0))?;
        let rest = match last {
            true => lock(&self.rest).take(),
            false => None,
        };
        let Some((rest, why)) = rest else {
            let stats = Opened::Spooled(file, self.len, self.named).read(d, v)?;
            if let (true, Some(e)) = (last, &self.failed) {
                d.report(Some(stats.lines + 1), Kind::Io, e);
            }
            return Ok(stats);
        };
        let mut whole = (&file).take(self.len).chain(rest);
        let stats = read_contents(Contents::Stream(&mut whole), self.named, d, v)?;
        let kept = self.len;
        d.report(
            None,
            Kind::Io,
            format!(
                "read twice only up to byte {kept}: no room to keep the rest ({why}), read \
                 once; a secret or user name it reveals is not masked before it"
            ),
        );
        Ok(stats)
    }
}

/// Writes `bytes` to `file` as `write_all` does, and says how many it wrote before an error.
fn write_counted(file: &mut File, bytes: &[u8]) -> (usize, Option<io::Error>) {
    let mut written = 0;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => return (written, Some(io::ErrorKind::WriteZero.into())),
            Ok(w) => written += w,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (written, Some(e)),
        }
    }
    (written, None)
}

/// A new file with no name, to read and write, in `TMPDIR` (else /tmp): made without one
/// ([`crate::output::unnamed_file`]) where the system and the file system can, else named and
/// unlinked at once.
fn unnamed_file() -> io::Result<File> {
    #[cfg(target_os = "linux")]
    if let Ok(f) = crate::output::unnamed_file() {
        return Ok(f);
    }
    use std::os::unix::fs::OpenOptionsExt;
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(".pi-jsonl-{}-{made}.tmp", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(f)
}

/// Reads `file` (of `len` bytes when opened) to its end into `buf` from its start, and
/// returns how many bytes that is, and the error that stopped the reading early, if one did.
/// `buf` is this thread's buffer, reused from file to file and never cleared: only the bytes
/// read are handed out, so it is zeroed once when it grows, not for every file. It is made one
/// byte longer than the file, so that the read that finds the end needs no second buffer; a
/// file that grew since it was opened is read to its new end. Where `read_to_end` asks the
/// system the file's size and position first (`fstat`, `lseek`), this does not.
fn read_whole(mut file: &File, len: u64, buf: &mut Vec<u8>) -> (usize, Option<io::Error>) {
    let want = usize::try_from(len).map_or(usize::MAX, |l| l.saturating_add(1));
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len().saturating_mul(2).max(64 * 1024), 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => return (filled, None),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
}

/// Whether a file of `len` bytes is large enough to be read on several cores, and the run has
/// more than one.
fn parallel_len(len: u64) -> bool {
    super::chunks::helpers_for(usize::try_from(len).unwrap_or(usize::MAX)) > 0
}

/// Whether `src` names a regular file that is read on several cores once open (as
/// [`Opened::read_on_several_cores`] then says), by its metadata.
pub fn read_on_several_cores(src: &Source) -> bool {
    match src {
        Source::Stdin => false,
        Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file() && parallel_len(m.len())),
    }
}

/// Reads every session of `c` through the session reader; `named` as in
/// [`Opened::is_named`].
pub fn read_contents(
    c: Contents<'_>,
    named: bool,
    d: &mut Diags,
    v: &mut dyn Visitor,
) -> Result<Stats, Stop> {
    match c {
        Contents::Mapped(map) => mapped::read_mapped(map, named, d, v),
        Contents::Whole(bytes, failed) => {
            let stats = reader::read_slice(bytes, named, d, v)?;
            if let Some(e) = failed {
                // As a stream reports it: after the lines read before the error.
                d.report(Some(stats.lines + 1), Kind::Io, format!("read error: {e}"));
            }
            Ok(stats)
        }
        Contents::Stream(r) => reader::read(r, named, d, v),
    }
}

/// Opens `src` and reads every session of it; a file that cannot be opened is reported.
pub fn read_source(src: &Source, d: &mut Diags, v: &mut dyn Visitor) -> Result<Stats, Stop> {
    match Opened::open(src, d) {
        Some(input) => input.read(d, v),
        None => Ok(Stats::default()),
    }
}

/// Opens `path` to read it only when it is a regular file: `Ok(Err(kind))` says what else it
/// is ("a FIFO", "a character device", ...), found without waiting or reading (opened with
/// `O_NONBLOCK`, so that a FIFO with no writer does not block the open, and `O_NOCTTY`; then
/// `fstat`). For what must be a file (a session file found by a walk, models.json), never for a
/// FILE argument, which may be a FIFO read as a stream. Issue 19, item 6.
pub fn open_regular(path: &std::path::Path) -> io::Result<Result<File, &'static str>> {
    Ok(open_regular_len(path)?.map(|(file, _)| file))
}

/// [`open_regular`], and the file's length when it was opened (from the same `fstat`).
pub fn open_regular_len(path: &std::path::Path) -> io::Result<Result<(File, u64), &'static str>> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let md = file.metadata()?;
    let t = md.file_type();
    Ok(if t.is_file() {
        Ok((file, md.len()))
    } else if t.is_fifo() {
        Err("a FIFO")
    } else if t.is_char_device() {
        Err("a character device")
    } else if t.is_block_device() {
        Err("a block device")
    } else if t.is_socket() {
        Err("a socket")
    } else if t.is_dir() {
        Err("a directory")
    } else {
        Err("not a regular file")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19, item 6: what is not a regular file is named, never read, and a FIFO without
    /// a writer does not block.
    #[test]
    fn item_6_only_regular_files_are_opened_as_files() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f.jsonl");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert_eq!(open_regular(&fifo).unwrap().err(), Some("a FIFO"));
        }
        let null = std::path::Path::new("/dev/null");
        assert_eq!(
            open_regular(null).unwrap().err(),
            Some("a character device")
        );
        assert_eq!(open_regular(&dir).unwrap().err(), Some("a directory"));
        let file = dir.join("r.jsonl");
        std::fs::write(&file, b"{}\n").unwrap();
        let mut text = String::new();
        open_regular(&file)
            .unwrap()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "{}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A small file is read whole to its end, whatever its length when it was opened, and
    /// only its own bytes are handed out from a buffer that held a longer file before.
    #[test]
    fn read_whole_reads_to_the_end_from_a_reused_buffer() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let mut buf = Vec::new();
        let long: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for (text, len) in [
            (&b"{}\n"[..], 3),
            // Grew after it was opened: longer than the buffer made for it, several reads.
            (&long[..150_000], 10),
            (&long[..], long.len() as u64),
            (&b"{}\n"[..], 3),
            (&long[..70_000], 70_000),
            (&b""[..], 0),
            // Shrank after it was opened.
            (&b"{}"[..], 100),
        ] {
            std::fs::write(&path, text).unwrap();
            let file = File::open(&path).unwrap();
            let (filled, failed) = read_whole(&file, len, &mut buf);
            assert!(failed.is_none());
            assert_eq!(&buf[..filled], text, "{len}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
