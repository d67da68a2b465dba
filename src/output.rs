//! Output: one buffer per input, written to stdout in large blocks (or per line on a terminal),
//! and a small builder for the JSON records the tools emit.
//!
//! Lines that pass through are appended as they are; records are written field by field with
//! `type` first. A closed stdout turns into [`Stop::BrokenPipe`], which ends the run quietly.
//!
//! Output held until its input's turn ([`Out::held_in_turn`]) stays in memory up to
//! [`hold_max`] bytes; past that it is spilled to an unnamed temporary file ([`Spill`]) and the
//! worker goes on, or, where no such file can be made, the worker waits for its turn.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Why processing stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The reader of stdout went away (`| head`): exit 0, say nothing.
    BrokenPipe,
    /// Writing stdout failed otherwise.
    Io(io::Error),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Io(e)
        }
    }
}

const FLUSH_AT: usize = 64 * 1024;

/// Held output larger than this is spilled to a temporary file, or waits for its input's turn
/// where none can be made ([`Out::held_in_turn`]): what a worker holds in memory stays bounded
/// whatever the size of its input's output.
pub const HOLD_MAX: usize = 8 << 20;

/// The bound in use: [`HOLD_MAX`], or the number of bytes `PI_JSONL_HOLD_MAX` gives (at least
/// 1), which exists for tests: a tiny bound spills the output of small inputs.
pub fn hold_max() -> usize {
    static BOUND: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| {
        std::env::var("PI_JSONL_HOLD_MAX")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(HOLD_MAX, |n| n.max(1))
    })
}

/// Where output held past [`hold_max`] goes: something output can be written to that can also
/// take a spilled file's bytes (stdout takes them by the kernel's copy where it can).
pub trait Sink: Write {
    /// Appends every byte `from` reads, after what was written before.
    fn append(&mut self, from: &mut io::Take<&File>) -> io::Result<()>;
}

/// How much is held between writes to a spill file once there is one.
const SPILL_STEP: usize = 1 << 20;

/// The buffer a spill is copied through where the kernel cannot copy it.
const COPY_BUF: usize = 1 << 20;

impl Sink for io::Stdout {
    fn append(&mut self, from: &mut io::Take<&File>) -> io::Result<()> {
        // Whatever stdout buffers goes first: the copies below bypass the buffer.
        self.flush()?;
        let out = self.lock();
        #[cfg(target_os = "linux")]
        if send_file(from, &out)? {
            return Ok(());
        }
        // Elsewhere, or where sendfile refuses stdout (opened to append, some terminals):
        // std's copy (copy_file_range to a file), else reads and writes of 1 MiB.
        let mut to = io::BufWriter::with_capacity(COPY_BUF, out);
        io::copy(from, &mut to)?;
        to.flush()
    }
}

/// Sends what is left of `from` to `to` by sendfile(2), the kernel moving the pages: to a pipe
/// (`| jq`) it took a third of the CPU that reading and writing 1 MiB at a time took, and
/// to /dev/null or a file as little as std's copy (BENCHMARKS.md, round 8). std does not
/// send a file to a pipe itself: the pipe holds references to the file's pages, which a
/// later write to the file would change; a spill is never written again once copied.
/// `false`, with `from` advanced past what was sent, when sendfile cannot be used here.
#[cfg(target_os = "linux")]
fn send_file(from: &mut io::Take<&File>, to: &impl std::os::fd::AsRawFd) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let src = from.get_ref().as_raw_fd();
    while from.limit() > 0 {
        let chunk = usize::try_from(from.limit().min(1 << 30)).unwrap_or(1 << 30);
        // SAFETY: both descriptors stay open for the call; a null offset makes sendfile read
        // from, and advance, the source file's own position, as `from`'s reads would.
        let sent = unsafe { libc::sendfile(to.as_raw_fd(), src, std::ptr::null_mut(), chunk) };
        match u64::try_from(sent) {
            Ok(0) => return Ok(false),
            Ok(n) => from.set_limit(from.limit() - n),
            Err(_) => {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EINVAL | libc::ENOSYS | libc::EAGAIN | libc::EOPNOTSUPP) => {
                        return Ok(false)
                    }
                    _ => return Err(e),
                }
            }
        }
    }
    Ok(true)
}

impl Sink for Vec<u8> {
    fn append(&mut self, from: &mut io::Take<&File>) -> io::Result<()> {
        from.read_to_end(self).map(drop)
    }
}

/// Output spilled to an unnamed temporary file (`O_TMPFILE` in the directory `TMPDIR` names,
/// else /tmp: it has no name, so nothing is left behind whatever ends the run), to be written
/// in its input's turn before what is still held in memory.
pub struct Spill {
    file: File,
    /// Bytes written in full; a write that failed part way may have left more in the file,
    /// which are not part of it.
    len: u64,
    /// A write failed (the disk is full): nothing more is spilled to it.
    full: bool,
}

/// Spill files open at most at once: each is a descriptor, which inputs need too. Well
/// inside the 64 descriptors `input::driver::worker_count` leaves besides the workers' own,
/// so that spills (up to one per input waiting to be written) never make an input fail to
/// open; past it, a worker waits for its turn as where no file can be made.
const MAX_SPILLS: usize = 32;

static SPILLS_OPEN: AtomicUsize = AtomicUsize::new(0);

impl Drop for Spill {
    fn drop(&mut self) {
        SPILLS_OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A new file to read and write that has no name (`O_TMPFILE`), in the directory `TMPDIR`
/// names, else /tmp: nothing is left behind, whatever ends the run.
#[cfg(target_os = "linux")]
pub fn unnamed_file() -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(std::env::temp_dir())
}

impl Spill {
    /// A new spill file, or `None` where none can be made (not Linux, a file system without
    /// unnamed files, no room, no permission, [`MAX_SPILLS`] open): the caller waits for its
    /// turn instead.
    fn create() -> Option<Spill> {
        #[cfg(target_os = "linux")]
        {
            let open = SPILLS_OPEN.fetch_add(1, Ordering::Relaxed);
            let file = (open < MAX_SPILLS).then(|| unnamed_file().ok()).flatten();
            let Some(file) = file else {
                SPILLS_OPEN.fetch_sub(1, Ordering::Relaxed);
                return None;
            };
            Some(Spill {
                file,
                len: 0,
                full: false,
            })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Appends `bytes`; `false` when that failed (then they are not part of the spill).
    fn push(&mut self, bytes: &[u8]) -> bool {
        if self.full {
            return false;
        }
        if self.file.write_all(bytes).is_err() {
            self.full = true;
            return false;
        }
        self.len += bytes.len() as u64;
        true
    }

    /// Writes what was spilled to `sink`, from the start.
    pub fn write_to(mut self, sink: &mut dyn Sink) -> Result<(), Stop> {
        self.file.rewind()?;
        sink.append(&mut (&self.file).take(self.len))?;
        Ok(())
    }
}

/// An input's place in the output order, as its held output sees it ([`Out::held_in_turn`]).
pub trait Turn {
    /// Whether every earlier input's output is written.
    fn ready(&self) -> bool;
    /// Blocks until it is; `false` when the run stopped meanwhile (stdout closed).
    fn wait(&self) -> bool;
}

/// Held output that writes to its sink itself from its input's turn on.
struct InTurn<'w> {
    turn: &'w dyn Turn,
    sink: &'w mut dyn Sink,
    line_buffered: bool,
    /// What may be held in memory before the turn: [`hold_max`].
    bound: usize,
    /// What was held past `bound` before the turn came.
    spill: Option<Spill>,
    /// No spill file could be made for this input: past the bound it waits.
    no_spill: bool,
}

impl InTurn<'_> {
    /// Moves `held` to the spill file (made on first use); `false`, with `held` as it was,
    /// when that cannot be done.
    fn spill(&mut self, held: &mut Vec<u8>) -> bool {
        if self.spill.is_none() && !self.no_spill {
            self.spill = Spill::create();
            self.no_spill = self.spill.is_none();
        }
        let spilled = self.spill.as_mut().is_some_and(|s| s.push(held));
        if spilled {
            held.clear();
        }
        spilled
    }
}

/// Where a tool writes. Either it holds everything (an input processed in parallel with others,
/// written later in argument order), or it passes blocks on to stdout as they fill, or it holds
/// its output until its input's turn comes and then passes it on.
pub struct Out<'w> {
    pub buf: Vec<u8>,
    sink: Option<&'w mut dyn Write>,
    line_buffered: bool,
    /// What `buf` may grow to before [`Out::filled`] looks at it again.
    full_at: usize,
    in_turn: Option<InTurn<'w>>,
}

impl<'w> Out<'w> {
    pub fn held() -> Out<'static> {
        Out {
            buf: Vec::new(),
            sink: None,
            line_buffered: false,
            full_at: usize::MAX,
            in_turn: None,
        }
    }

    pub fn direct(sink: &'w mut dyn Write, line_buffered: bool) -> Out<'w> {
        Out::direct_in(sink, line_buffered, Vec::with_capacity(FLUSH_AT * 2))
    }

    /// [`Out::direct`] through `buf`, memory to reuse (emptied first; take it back from
    /// [`Out::buf`] when done).
    pub fn direct_in(sink: &'w mut dyn Write, line_buffered: bool, mut buf: Vec<u8>) -> Out<'w> {
        buf.clear();
        Out {
            buf,
            sink: Some(sink),
            line_buffered,
            full_at: if line_buffered { 1 } else { FLUSH_AT },
            in_turn: None,
        }
    }

    /// Output held while earlier inputs' output is being written, then written to `sink` as
    /// [`Out::direct`] from `turn` on (it is looked at every [`FLUSH_AT`] bytes, or every
    /// [`hold_max`] when that is less); past [`hold_max`] bytes held it is spilled to a
    /// temporary file, written to `sink` when the turn comes, or, where no such file can be
    /// made, it waits for the turn. What is left at the end, [`Out::take_spill`] and then
    /// `buf`, is the caller's to write, in its turn. `buf` is memory to reuse (emptied first).
    pub fn held_in_turn(
        turn: &'w dyn Turn,
        sink: &'w mut dyn Sink,
        line_buffered: bool,
        mut buf: Vec<u8>,
    ) -> Self {
        buf.clear();
        let bound = hold_max();
        Out {
            buf,
            sink: None,
            line_buffered: false,
            full_at: FLUSH_AT.min(bound),
            in_turn: Some(InTurn {
                turn,
                sink,
                line_buffered,
                bound,
                spill: None,
                no_spill: false,
            }),
        }
    }

    /// Output held in turn whose turn has not come: what was spilled of it, to be written
    /// before `buf`.
    pub fn take_spill(&mut self) -> Option<Spill> {
        self.in_turn.as_mut().and_then(|t| t.spill.take())
    }

    /// Whether it writes to a sink (for output held in turn: whether its turn has come).
    pub fn writes(&self) -> bool {
        self.sink.is_some()
    }

    /// About to write `len` bytes that cost no more to produce at the input's turn than now
    /// (lines read again from their file): output held for its turn that has not come and
    /// would pass the bound with them waits for the turn here, its CPU lent to the input
    /// being read, instead of holding them and spilling (pi-branch over four 51 MB sessions:
    /// each writes its whole input again). Other output is left as it is.
    pub fn wait_turn_before(&mut self, len: u64) -> Result<(), Stop> {
        let Some(t) = &self.in_turn else {
            return Ok(());
        };
        let past =
            t.spill.is_some() || (self.buf.len() as u64).saturating_add(len) >= t.bound as u64;
        if t.turn.ready() || !past {
            return Ok(());
        }
        if !t.turn.wait() {
            return Err(Stop::BrokenPipe);
        }
        // The turn has come: from here on the output goes to the sink.
        self.filled()
    }

    /// `buf` reached `full_at`: written when there is a sink, else looked at by its turn.
    fn filled(&mut self) -> Result<(), Stop> {
        if self.sink.is_some() {
            return self.flush();
        }
        let Some(t) = &mut self.in_turn else {
            return Ok(());
        };
        if !t.turn.ready() {
            // Once it spills, it spills every SPILL_STEP: bytes copied to the file while they
            // are still in the CPU's cache.
            let hold = match t.spill {
                Some(_) => t.bound.min(SPILL_STEP),
                None => t.bound,
            };
            if self.buf.len() < hold || t.spill(&mut self.buf) {
                self.full_at = self.buf.len() + FLUSH_AT.min(t.bound);
                return Ok(());
            }
            if !t.turn.wait() {
                return Err(Stop::BrokenPipe);
            }
        }
        // The turn has come: what was spilled goes first, then what is held, and from now on
        // output goes to the sink as it fills.
        let mut t = self.in_turn.take().expect("held in turn");
        if let Some(spill) = t.spill.take() {
            spill.write_to(t.sink)?;
        }
        self.sink = Some(t.sink as &mut dyn Write);
        self.line_buffered = t.line_buffered;
        self.full_at = if t.line_buffered { 1 } else { FLUSH_AT };
        self.flush()
    }

    /// Appends one line (a `\n` is added).
    #[inline]
    pub fn line(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.buf.extend_from_slice(bytes);
        self.end_line()
    }

    /// Ends the line being built in `buf`.
    #[inline]
    pub fn end_line(&mut self) -> Result<(), Stop> {
        self.buf.push(b'\n');
        if self.buf.len() >= self.full_at {
            self.filled()?;
        }
        Ok(())
    }

    /// Appends raw bytes that already end in `\n` (e.g. a run of input lines).
    pub fn raw(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        if bytes.len() >= FLUSH_AT && !self.line_buffered {
            // A large block goes straight to the sink, not copied through the buffer first.
            if let Some(sink) = self.sink.as_mut() {
                sink.write_all(&self.buf)?;
                self.buf.clear();
                sink.write_all(bytes)?;
                return Ok(());
            }
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= self.full_at {
            self.filled()?;
        }
        Ok(())
    }

    /// Writes what is buffered, when there is somewhere to write it.
    pub fn flush(&mut self) -> Result<(), Stop> {
        if let Some(sink) = self.sink.as_mut() {
            sink.write_all(&self.buf)?;
            self.buf.clear();
            sink.flush()?;
        }
        Ok(())
    }

    /// Starts a record of the given type in the buffer; finish it with [`Obj::end`] and then
    /// [`Out::end_line`].
    pub fn record(&mut self, type_name: &str) -> Obj<'_> {
        Obj::new(&mut self.buf, type_name)
    }
}

/// Writes one JSON object, field by field, into a byte buffer.
pub struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> Obj<'b> {
    /// `{"type":"<type_name>"`; the rest follows.
    pub fn new(buf: &'b mut Vec<u8>, type_name: &str) -> Obj<'b> {
        buf.extend_from_slice(b"{\"type\":");
        write_str(buf, type_name);
        Obj { buf, first: false }
    }

    /// Members that will follow others in a record: each written with its comma before it, to be
    /// added to a record later by [`Obj::members`] (what a cache keeps of a record).
    pub fn continued(buf: &'b mut Vec<u8>) -> Obj<'b> {
        Obj { buf, first: false }
    }

    /// Adds `members`, written before by an [`Obj::continued`], as they were written.
    pub fn members(&mut self, members: &[u8]) -> &mut Self {
        let written = match self.first {
            true => members.strip_prefix(b",").unwrap_or(members),
            false => members,
        };
        self.buf.extend_from_slice(written);
        self.first &= written.is_empty();
        self
    }

    /// An object with no fields yet, for nesting.
    pub fn nested(buf: &'b mut Vec<u8>) -> Obj<'b> {
        buf.push(b'{');
        Obj { buf, first: true }
    }

    /// `,"k":` (no comma before the first member). A key is a field name the program spells
    /// (every caller gives a literal or a name from a fixed list): nothing in it to escape,
    /// so it is copied whole, unchecked in release builds (a record writes dozens of keys).
    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        let b = k.as_bytes();
        debug_assert_eq!(
            crate::json::string_stop(b, 0),
            b.len(),
            "a key needs no escaping: {k:?}"
        );
        self.buf.reserve(b.len() + 4);
        self.comma();
        self.buf.push(b'"');
        self.buf.extend_from_slice(b);
        self.buf.extend_from_slice(b"\":");
        self.buf
    }

    /// The comma before a member, unless it is the first.
    fn comma(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        write_str(self.key(k), v);
        self
    }

    pub fn opt_str(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.str(k, v),
            None => self.null(k),
        }
    }

    pub fn u64(&mut self, k: &str, v: u64) -> &mut Self {
        push_u64(self.key(k), v);
        self
    }

    pub fn opt_u64(&mut self, k: &str, v: Option<u64>) -> &mut Self {
        match v {
            Some(v) => self.u64(k, v),
            None => self.null(k),
        }
    }

    pub fn i64(&mut self, k: &str, v: i64) -> &mut Self {
        let mut digits = itoa::Buffer::new();
        self.key(k).extend_from_slice(digits.format(v).as_bytes());
        self
    }

    pub fn opt_i64(&mut self, k: &str, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.i64(k, v),
            None => self.null(k),
        }
    }

    /// A float, written as serde_json writes it (shortest round-trip form; non-finite → null).
    pub fn f64(&mut self, k: &str, v: f64) -> &mut Self {
        let b = self.key(k);
        let _ = serde_json::to_writer(b, &v);
        self
    }

    pub fn opt_f64(&mut self, k: &str, v: Option<f64>) -> &mut Self {
        match v {
            Some(v) => self.f64(k, v),
            None => self.null(k),
        }
    }

    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k)
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    pub fn opt_bool(&mut self, k: &str, v: Option<bool>) -> &mut Self {
        match v {
            Some(v) => self.bool(k, v),
            None => self.null(k),
        }
    }

    pub fn null(&mut self, k: &str) -> &mut Self {
        self.key(k).extend_from_slice(b"null");
        self
    }

    /// A value copied as it is: `raw` must be one valid JSON value (e.g. from the scanner).
    /// Invalid UTF-8 in it is repaired as [`push_value`] says, so every record is UTF-8.
    pub fn raw(&mut self, k: &str, raw: &[u8]) -> &mut Self {
        push_value(self.key(k), raw);
        self
    }

    /// [`Obj::raw`] under a name read from the input (a usage field that Pi does not define),
    /// not one the program spells: the name is escaped as a string is, so any name it holds
    /// (a quote, a control character) leaves the record valid JSON.
    pub fn raw_named(&mut self, name: &str, raw: &[u8]) -> &mut Self {
        self.comma();
        write_str(self.buf, name);
        self.buf.push(b':');
        push_value(self.buf, raw);
        self
    }

    pub fn opt_raw(&mut self, k: &str, raw: Option<&[u8]>) -> &mut Self {
        match raw {
            Some(r) => self.raw(k, r),
            None => self.null(k),
        }
    }

    /// A string given as parts (JSON string bodies) joined by newlines, each copied as it is
    /// when it is already escaped as [`write_str`] escapes (see [`escaped_as_written`]; `utf8`:
    /// the parts are known to be valid UTF-8), checked and copied in one pass: the length of
    /// the text they stand for. `None`, with nothing written, when a part is escaped
    /// otherwise (it must be decoded and escaped again).
    pub fn written_lines(&mut self, k: &str, parts: &[&[u8]], utf8: bool) -> Option<usize> {
        let (start, first) = (self.buf.len(), self.first);
        self.key(k).push(b'"');
        let mut len = 0;
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.buf.extend_from_slice(b"\\n");
                len += 1;
            }
            let copied = (utf8 || simdutf8::basic::from_utf8(p).is_ok())
                .then(|| crate::json::copy_written(p, self.buf))
                .flatten();
            match copied {
                Some(n) => len += n,
                None => {
                    self.buf.truncate(start);
                    self.first = first;
                    return None;
                }
            }
        }
        self.buf.push(b'"');
        Some(len)
    }

    /// [`Obj::written_lines`] of parts already found escaped as written (each valid UTF-8 and
    /// [`escaped_as_written`], checked before, as on another thread): copied, not checked again.
    pub fn lines_as_written(&mut self, k: &str, parts: &[&[u8]]) -> &mut Self {
        let b = self.key(k);
        b.push(b'"');
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                b.extend_from_slice(b"\\n");
            }
            b.extend_from_slice(p);
        }
        b.push(b'"');
        self
    }

    /// An array of strings.
    pub fn strs<'s>(&mut self, k: &str, items: impl IntoIterator<Item = &'s str>) -> &mut Self {
        let b = self.key(k);
        b.push(b'[');
        for (i, s) in items.into_iter().enumerate() {
            if i > 0 {
                b.push(b',');
            }
            write_str(b, s);
        }
        b.push(b']');
        self
    }

    /// A nested object built by `f`.
    pub fn obj(&mut self, k: &str, f: impl FnOnce(&mut Obj<'_>)) -> &mut Self {
        let b = self.key(k);
        let mut o = Obj::nested(b);
        f(&mut o);
        o.end();
        self
    }

    /// An array whose elements `f` writes with the [`Arr`] it is given.
    pub fn arr(&mut self, k: &str, f: impl FnOnce(&mut Arr<'_>)) -> &mut Self {
        let b = self.key(k);
        b.push(b'[');
        let mut a = Arr { buf: b, n: 0 };
        f(&mut a);
        a.buf.push(b']');
        self
    }

    /// Closes the object.
    pub fn end(&mut self) {
        self.buf.push(b'}');
    }
}

/// Elements of a JSON array being written.
pub struct Arr<'b> {
    buf: &'b mut Vec<u8>,
    n: usize,
}

impl Arr<'_> {
    fn sep(&mut self) -> &mut Vec<u8> {
        if self.n > 0 {
            self.buf.push(b',');
        }
        self.n += 1;
        self.buf
    }
    pub fn obj(&mut self, f: impl FnOnce(&mut Obj<'_>)) {
        let b = self.sep();
        let mut o = Obj::nested(b);
        f(&mut o);
        o.end();
    }
    pub fn str(&mut self, s: &str) {
        write_str(self.sep(), s);
    }
    /// One JSON value copied as [`Obj::raw`] copies it.
    pub fn raw(&mut self, raw: &[u8]) {
        push_value(self.sep(), raw);
    }
}

/// Appends one JSON value copied from the input. Valid UTF-8 (the common case, checked once)
/// is copied byte for byte; otherwise each invalid sequence becomes U+FFFD, as JavaScript's
/// decoder (and so Pi) reads it: maximal subparts, one replacement each. A replacement
/// character is never structural in JSON, so the value stays the same JSON value. Issue 19,
/// item 8.
#[inline]
pub fn push_value(buf: &mut Vec<u8>, raw: &[u8]) {
    if simdutf8::basic::from_utf8(raw).is_ok() {
        buf.extend_from_slice(raw);
    } else {
        push_repaired(buf, raw);
    }
}

#[cold]
fn push_repaired(buf: &mut Vec<u8>, raw: &[u8]) {
    for chunk in raw.utf8_chunks() {
        buf.extend_from_slice(chunk.valid().as_bytes());
        if !chunk.invalid().is_empty() {
            buf.extend_from_slice("\u{fffd}".as_bytes());
        }
    }
}

/// Appends the decimal digits of `v` (what `write!(buf, "{v}")` writes, without the
/// formatting machinery: records are mostly numbers).
pub fn push_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `s` as a JSON string, escaped exactly as `serde_json` escapes it: `"` and `\\`,
/// `\b \t \n \f \r` for those controls, `\u00xx` (lowercase hex) for the other controls
/// below U+0020, everything else as it is. Runs between escapes are copied whole, found
/// sixteen bytes a step by the scanner's string loop (tool output is most of what is written).
pub fn write_str(buf: &mut Vec<u8>, s: &str) {
    buf.reserve(s.len() + 2);
    buf.push(b'"');
    push_escaped(buf, s);
    buf.push(b'"');
}

/// Appends `s` escaped as [`write_str`] escapes it, without the quotes: the body of its JSON
/// string. Each character is escaped on its own, so the body of a text is the bodies of its
/// pieces one after the other.
#[inline]
pub fn push_escaped(buf: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    // Most strings a record holds are short names, ids and times with nothing to escape:
    // one pass without an early exit (a vector at a time) says so, and they are copied whole.
    if b.len() <= 64 {
        let mut escape = false;
        for &c in b {
            escape |= c < 0x20 || c == b'"' || c == b'\\';
        }
        if !escape {
            buf.extend_from_slice(b);
            return;
        }
    }
    let mut i = 0;
    while i < b.len() {
        let stop = crate::json::string_stop(b, i);
        buf.extend_from_slice(&b[i..stop]);
        let Some(&c) = b.get(stop) else { break };
        match c {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            0x08 => buf.extend_from_slice(b"\\b"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            0x0c => buf.extend_from_slice(b"\\f"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]),
        }
        i = stop + 1;
    }
}

/// When the body of a validated JSON string (the text between its quotes) is exactly what
/// [`write_str`] writes for the text it decodes to (valid UTF-8; escapes only `\"`, `\\`,
/// `\b \t \n \f \r`, and `\u00xx` in lowercase for the other controls), the length in bytes
/// of that text: such a body can be written out as it is. `None` for any other body (`\/`,
/// `\u0041`, `\u001B`, surrogate pairs, invalid UTF-8), which must be decoded and escaped again.
pub fn escaped_as_written(body: &[u8]) -> Option<usize> {
    simdutf8::basic::from_utf8(body).ok()?;
    crate::json::written_len(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::lock;
    use std::cell::Cell;

    /// A turn that comes after a number of looks at it, or when waited for (counted).
    struct After(Cell<usize>, Cell<usize>);

    impl Turn for After {
        fn ready(&self) -> bool {
            let left = self.0.get();
            self.0.set(left.saturating_sub(1));
            left == 0
        }
        fn wait(&self) -> bool {
            self.0.set(0);
            self.1.set(self.1.get() + 1);
            true
        }
    }

    /// Numbered lines of 1,000 bytes each, so that a line lost, doubled or moved shows.
    fn numbered(i: usize) -> Vec<u8> {
        format!("{i:0999}").into_bytes()
    }

    /// Writes `lines` numbered lines to output held in turn with the given bound (and spill
    /// files allowed or not), the turn coming after `looks` looks; then writes what is left
    /// as the driver does (spill, then `buf`). The sink's bytes, the most held in memory, and
    /// how many times it waited.
    fn hold(looks: usize, bound: usize, spill: bool, lines: usize) -> (Vec<u8>, usize, usize) {
        let turn = After(Cell::new(looks), Cell::new(0));
        let mut sink = Vec::new();
        let mut most = 0;
        let mut out = Out::held_in_turn(&turn, &mut sink, false, Vec::new());
        let t = out.in_turn.as_mut().unwrap();
        (t.bound, t.no_spill) = (bound, !spill);
        out.full_at = FLUSH_AT.min(bound);
        for i in 0..lines {
            out.line(&numbered(i)).unwrap();
            most = most.max(out.buf.len());
        }
        let written = out.writes();
        let spilled = out.take_spill();
        let left = std::mem::take(&mut out.buf);
        drop(out);
        assert!(!written || spilled.is_none(), "spill written at the turn");
        if let Some(s) = spilled {
            s.write_to(&mut sink).unwrap();
        }
        sink.extend_from_slice(&left);
        (sink, most, turn.1.get())
    }

    /// Tests that make spill files, one at a time: one of them takes every file there may be.
    static SPILLING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// At most MAX_SPILLS spill files are open at once (each is a descriptor inputs need);
    /// one closed, another can be made.
    #[test]
    fn spill_files_open_at_once_are_bounded() {
        let _one = lock(&SPILLING);
        let mut open = Vec::new();
        while let Some(s) = Spill::create() {
            open.push(s);
            assert!(open.len() <= MAX_SPILLS, "more than MAX_SPILLS open");
        }
        if open.is_empty() {
            return; // no unnamed temporary files here
        }
        assert_eq!(open.len(), MAX_SPILLS);
        open.pop();
        assert!(Spill::create().is_some());
    }

    /// Output held in turn goes to the sink from the turn on; past its bound it is spilled
    /// (and then written first, at the turn or by the caller) or, without spill files, it
    /// waits for the turn; in every case every line comes out once, in order, and what is
    /// held in memory stays near the bound.
    #[test]
    fn held_output_is_written_from_its_turn_in_order() {
        let _one = lock(&SPILLING);
        let lines = 300;
        let want: Vec<u8> = (0..lines)
            .flat_map(|i| [numbered(i), b"\n".to_vec()].concat())
            .collect();
        for bound in [1, 10_000, 100_000, HOLD_MAX] {
            for looks in [0, 3, 40, usize::MAX] {
                for spill in [true, false] {
                    let (got, most, waits) = hold(looks, bound, spill, lines);
                    let case = format!("bound {bound}, looks {looks}, spill {spill}");
                    assert!(got == want, "{case}: lines lost or out of order");
                    assert!(most < bound + FLUSH_AT + 1000, "{case}: held {most}");
                    let past = bound < lines * 1000 && looks > 0;
                    assert_eq!(waits > 0, past && !spill, "{case}: waited {waits}");
                }
            }
        }
    }

    /// Output that can be had again at the turn waits for the turn when it would pass the
    /// bound (then it goes to the sink directly, nothing held or spilled), and only then:
    /// below the bound, at the turn, or for direct output it does not wait.
    #[test]
    fn output_past_the_bound_waits_for_its_turn_before_it_is_made() {
        let _one = lock(&SPILLING);
        let bound = 10_000;
        for (looks, held, len, waits) in [
            (5, 0, bound as u64, true),
            (5, 2_000, (bound - 2_000) as u64, true),
            (5, 2_000, (bound - 2_001) as u64, false),
            (0, 0, 1 << 30, false),
        ] {
            let turn = After(Cell::new(looks), Cell::new(0));
            let mut sink = Vec::new();
            let mut out = Out::held_in_turn(&turn, &mut sink, false, Vec::new());
            out.in_turn.as_mut().unwrap().bound = bound;
            out.full_at = FLUSH_AT.min(bound);
            out.raw(&vec![b'a'; held]).unwrap();
            out.wait_turn_before(len).unwrap();
            let case = format!("looks {looks}, held {held}, len {len}");
            assert_eq!(turn.1.get() > 0, waits, "{case}: waited");
            assert_eq!(out.writes(), waits, "{case}: writes");
            if waits {
                out.raw(&vec![b'b'; 3 * bound]).unwrap();
                assert!(out.take_spill().is_none(), "{case}: spilled");
                out.flush().unwrap();
                drop(out);
                let want = [vec![b'a'; held], vec![b'b'; 3 * bound]].concat();
                assert!(sink == want, "{case}: not written in order");
            }
        }
        let mut sink = Vec::new();
        let mut direct = Out::direct(&mut sink, false);
        direct.wait_turn_before(u64::MAX).unwrap();
    }

    /// A spill is written out from its start, after what the sink held, and only what was
    /// written to it in full is part of it.
    #[test]
    fn a_spill_holds_only_whole_writes() {
        let _one = lock(&SPILLING);
        let Some(mut spill) = Spill::create() else {
            return; // no unnamed temporary files here: the waiting path is tested above
        };
        assert!(spill.push(b"one\n"));
        assert!(spill.push(b"two\n"));
        // A write that failed part way (a full disk): its bytes are in the file, not counted.
        spill.file.write_all(b"thr").unwrap();
        spill.full = true;
        assert!(!spill.push(b"three\n"));
        let mut sink = b"zero\n".to_vec();
        spill.write_to(&mut sink).unwrap();
        assert_eq!(sink, b"zero\none\ntwo\n");
    }

    /// Every ASCII character between others, the empty string, long mixed text, controls.
    fn sample_texts() -> Vec<String> {
        let mut cases: Vec<String> = (0u32..0x80)
            .filter_map(char::from_u32)
            .map(|c| format!("a{c}b{c}{c}"))
            .collect();
        cases.push(String::new());
        cases.push("plain text longer than sixteen bytes, with \"quotes\" and \\ and\ttabs\u{1b}[0m é ü 中文 🎉\u{7f}\u{2028}".repeat(5));
        cases.push("\u{0}\u{1f}\n\r\\\"".repeat(9));
        cases
    }

    #[test]
    fn bodies_escaped_as_written_are_recognized() {
        for s in sample_texts() {
            let mut w = Vec::new();
            write_str(&mut w, &s);
            let body = &w[1..w.len() - 1];
            assert_eq!(escaped_as_written(body), Some(s.len()), "{s:?}");
        }
        // Valid JSON, but not how write_str writes the text: decoded and escaped again.
        for body in [
            &br"\/"[..],
            br"\u0041",
            br"\u001B",
            br"\u000a",
            br"\u0009",
            br"\ud83d\ude00",
            br"\u0100",
            b"\xff",
        ] {
            assert_eq!(escaped_as_written(body), None, "{body:?}");
        }
    }

    /// Both ways: a body is recognized exactly when decoding it and writing it again gives
    /// it back, and then its length is the decoded text's.
    #[test]
    fn escaped_as_written_means_write_str_gives_the_body_back() {
        let pieces = [
            "a",
            "é",
            "中",
            "\\n",
            "\\t",
            "\\u001b",
            "\\u001B",
            "\\u0000",
            "\\/",
            "\\\"",
            "\\\\",
            "\\u0041",
            "\\ud83d\\ude00",
            "\\ud800",
            "\\b",
            "\\u000c",
            "\\f",
            "\u{2028}",
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut yes, mut no) = (0, 0);
        for _ in 0..20_000 {
            let mut body = String::new();
            for _ in 0..6 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                body.push_str(pieces[(x % pieces.len() as u64) as usize]);
            }
            let text = crate::json::decode_string_body(body.as_bytes());
            let mut again = Vec::new();
            write_str(&mut again, &text);
            let same = again[1..again.len() - 1] == *body.as_bytes();
            match escaped_as_written(body.as_bytes()) {
                Some(n) => {
                    yes += 1;
                    assert!(same, "{body}");
                    assert_eq!(n, text.len(), "{body}");
                }
                None => {
                    no += 1;
                    assert!(!same, "{body}");
                }
            }
        }
        assert!(yes > 1_000 && no > 1_000, "{yes} recognized, {no} not");
    }

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        let mut v = vec![0, 1, 9, 10, 99, 100, u64::MAX, u64::MAX - 1, 1 << 63];
        v.extend((0..64).map(|s| (1u64 << s) - 1));
        v.extend((0..20).map(|e| 10u64.pow(e)));
        for n in v {
            let mut b = Vec::new();
            push_u64(&mut b, n);
            assert_eq!(b, n.to_string().into_bytes());
        }
        for n in [0i64, -1, 5, i64::MIN, i64::MAX, -1234567890] {
            let mut b = Vec::new();
            Obj::nested(&mut b).i64("n", n).end();
            assert_eq!(b, format!("{{\"n\":{n}}}").into_bytes());
        }
    }

    /// Parts already escaped as written are copied, joined by `\n`; a part escaped otherwise
    /// (or, unless known valid, not UTF-8) leaves nothing behind: no key, no comma.
    #[test]
    fn written_lines_writes_every_part_or_nothing() {
        let mut buf = Vec::new();
        let mut o = Obj::new(&mut buf, "t");
        o.obj("first", |o| {
            assert_eq!(o.written_lines("bad", &[b"\\u0041"], true), None);
            o.u64("n", 1);
        });
        assert_eq!(o.written_lines("text", &[b"a\\nb", b"c"], true), Some(5));
        assert_eq!(o.written_lines("other", &[b"ok", b"\\/"], true), None);
        assert_eq!(o.written_lines("invalid", &[b"\xff"], false), None);
        let long = "x\\\"".repeat(40);
        assert_eq!(o.written_lines("long", &[long.as_bytes()], false), Some(80));
        o.end();
        let want = format!(r#"{{"type":"t","first":{{"n":1}},"text":"a\nb\nc","long":"{long}"}}"#);
        assert_eq!(String::from_utf8(buf).unwrap(), want);
    }

    #[test]
    fn lines_as_written_writes_what_written_lines_writes() {
        let parts: [&[u8]; 3] = [b"a\\nb", "\\\"é\\u001f".as_bytes(), b""];
        let (mut checked, mut copied) = (Vec::new(), Vec::new());
        let mut o = Obj::nested(&mut checked);
        assert_eq!(o.written_lines("text", &parts, false), Some(9));
        o.end();
        Obj::nested(&mut copied)
            .lines_as_written("text", &parts)
            .end();
        assert_eq!(copied, checked);
    }

    #[test]
    fn write_str_escapes_as_serde_json() {
        for s in sample_texts() {
            let mut ours = Vec::new();
            write_str(&mut ours, &s);
            assert_eq!(ours, serde_json::to_vec(&s).unwrap(), "{s:?}");
        }
    }

    /// Issue 19, item 8: a copied value with invalid UTF-8 comes out as UTF-8, each invalid
    /// sequence one U+FFFD as JavaScript decodes it; a valid one is copied byte for byte.
    #[test]
    fn item_8_copied_values_are_repaired_to_utf8() {
        let cases: [(&[u8], &str); 6] = [
            (b"{\"a\":\"x\xffy\"}", "{\"a\":\"x\u{fffd}y\"}"),
            (b"\"\xe2\x82\"", "\"\u{fffd}\""),
            (b"\"\xed\xa0\x80\"", "\"\u{fffd}\u{fffd}\u{fffd}\""),
            (b"\"\xf0\x9f\x8e\"", "\"\u{fffd}\""),
            (b"[\"\xc0\xaf\",1]", "[\"\u{fffd}\u{fffd}\",1]"),
            ("\"é 🎉\"".as_bytes(), "\"é 🎉\""),
        ];
        for (raw, want) in cases {
            let mut b = Vec::new();
            Obj::nested(&mut b).raw("v", raw).end();
            assert_eq!(String::from_utf8(b).unwrap(), format!("{{\"v\":{want}}}"));
            let mut b = Vec::new();
            push_value(&mut b, raw);
            assert_eq!(b, String::from_utf8_lossy(raw).as_bytes());
        }
    }

    #[test]
    fn members_written_ahead_are_added_as_if_written_in_place() {
        let mut ahead = Vec::new();
        Obj::continued(&mut ahead)
            .str("s", "é\n")
            .opt_u64("n", None);
        let mut whole = Vec::new();
        Obj::new(&mut whole, "x")
            .u64("a", 1)
            .str("s", "é\n")
            .null("n")
            .end();
        let mut joined = Vec::new();
        Obj::new(&mut joined, "x").u64("a", 1).members(&ahead).end();
        assert_eq!(joined, whole);
        // First in an object: without the comma; nothing added leaves it first.
        let mut nested = Vec::new();
        Obj::nested(&mut nested)
            .members(b"")
            .members(&ahead)
            .members(b"")
            .u64("m", 2)
            .end();
        assert_eq!(nested, b"{\"s\":\"\xc3\xa9\\n\",\"n\":null,\"m\":2}");
    }

    #[test]
    fn builds_records_type_first() {
        let mut out = Out::held();
        out.record("x")
            .str("s", "a\"b")
            .u64("n", 3)
            .null("z")
            .obj("o", |o| {
                o.bool("b", true).f64("f", 0.1);
            })
            .arr("a", |a| {
                a.str("q");
                a.raw(b"{}");
            })
            .end();
        out.end_line().unwrap();
        assert_eq!(
            String::from_utf8(out.buf).unwrap(),
            "{\"type\":\"x\",\"s\":\"a\\\"b\",\"n\":3,\"z\":null,\"o\":{\"b\":true,\"f\":0.1},\"a\":[\"q\",{}]}\n"
        );
    }
}
