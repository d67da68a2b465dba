//! pi-redact: a shareable copy of each session, the same tree and numbers, the private text
//! replaced.
//!
//! Each record is rewritten on its own ([`rewrite`]): what a member is comes from where it
//! stands, so the walk needs no state beyond the line but the pseudonym table ([`paths`]),
//! which is shared by every file of a run. Inputs are therefore rewritten one after another,
//! in argument order (by one reader), so the pseudonyms do not depend on timing; their
//! records are rewritten ahead on other cores with their paths left for the reader to fill in
//! order ([`ahead`]): a large input's chunks, and the chunks of the next inputs
//! (`input::early`).
//! Before a line is written the residual scan ([`check`]) looks for replaced text in it.

mod ahead;
mod args;
mod check;
mod classes;
mod commands;
mod find;
mod ids;
mod mask;
mod outdir;
mod paths;
mod placeholder;
mod retime;
mod rewrite;
mod tally;
mod written;

pub use args::{dotenv_values, Args, MAN};
pub use placeholder::image_size as image_placeholder_size;

use crate::cli::ManPage;
use crate::diag::{self, Diags, Kind};
use crate::input::early::Input;
use crate::input::open::Spool;
use crate::input::{self, Source};
use crate::json::{self, Raw};
use crate::output::{push_value, Out, Stop};
use crate::reader::{self, Ahead, Entry, Header, Notes, Visitor};
use crate::record::Described;
use crate::sync::{into_inner, lock};
use crate::tool::Tool;
use ahead::{RewriteAhead, Rewritten};
use ids::Renames;
use mask::{Also, Masker};
use paths::Pseudonyms;
use rewrite::{members, recycle, Holed, Member, Members, Rewriter};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tally::Tally;

/// For the fuzz target: kept text written as written ([`written`]) against the whole text
/// masked and escaped again, on `data` as a text and as a string body; panics where the two
/// differ.
#[doc(hidden)]
pub fn check_written(data: &[u8]) {
    written::check(data);
}

/// pi-redact writes sessions, not records of its own.
pub const RECORDS: &[Described] = &[];

/// redact: the tool.
pub struct Redact;

/// What one run shares between its inputs.
struct RunState {
    masker: Arc<Masker>,
    paths: Pseudonyms,
    tally: Tally,
    renames: Renames,
    /// `--shift-time`, in milliseconds.
    shift: Option<i64>,
    /// Inputs without a session written so far (`--out-dir` numbers their files).
    sessionless: u64,
}

impl RunState {
    fn new(args: &Args) -> Result<RunState, String> {
        Ok(RunState {
            masker: Arc::new(Masker::new(args.secrets()?)),
            paths: Pseudonyms::default(),
            tally: Tally::default(),
            renames: Renames::default(),
            sessionless: 0,
            shift: args
                .shift_time
                .as_deref()
                .map(retime::parse_shift)
                .transpose()
                .map_err(|e| format!("--shift-time {e}"))?,
        })
    }

    /// After the first reading of a run read twice: what it learned stays (the secrets
    /// found, the pseudonyms given and the user names met, in the order met), what it counted
    /// and numbered starts again.
    fn read_again(&mut self) {
        self.tally = Tally::default();
        self.renames = Renames::default();
        self.sessionless = 0;
    }
}

/// What a run does with each input at its turn.
type Job<'j> =
    dyn Fn(&mut RunState, Turn<'_, '_, '_>, &mut Out, &mut Diags) -> Result<(), Stop> + Sync + 'j;

/// An input at its turn: as [`Input`] gives it, or a stream kept to be read twice.
enum Turn<'k, 'a, 's> {
    Input(Input<'a, 's>),
    /// A kept stream, and whether this is its last reading.
    Kept(&'k Spool, bool),
}

impl Turn<'_, '_, '_> {
    fn read(self, d: &mut Diags, v: &mut dyn Visitor) -> Result<reader::Stats, Stop> {
        match self {
            Turn::Input(input) => input.read(d, v),
            Turn::Kept(spool, last) => spool.read(last, d, v),
        }
    }
}

/// The streams among `sources` (stdin, a FIFO), each kept to be read twice, by its place in
/// `sources`; `None` where it could not be kept (reported): read once, the second time.
fn keep_streams(sources: &[Source]) -> Vec<(usize, Option<Spool>)> {
    let keep = |(at, src): (usize, &Source)| match Spool::keep(src) {
        Ok(kept) => kept.map(|s| (at, Some(s))),
        Err(e) => {
            let mut d = Diags::new("pi-redact", &src.name(), true);
            let why = format!(
                "read once, not twice: no temporary file to keep it in ({e}); a secret or \
                 user name that a later record reveals is not masked before it"
            );
            d.report(None, Kind::Io, why);
            Some((at, None))
        }
    };
    sources.iter().enumerate().filter_map(keep).collect()
}

/// The first reading of a run read twice: `read` hands an input to a redactor whose output
/// goes nowhere, so that `state` learns what the input reveals.
fn learn(
    args: &Args,
    state: &mut RunState,
    read: impl FnOnce(&mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut nowhere = std::io::sink();
    let mut out = Out::direct(&mut nowhere, false);
    read(&mut Redactor::new(args, state, &mut out)).map(drop)
}

/// Whether the run reads its inputs twice: with `--keep-text` and not `--one-pass`, so
/// that what a later record reveals (a secret found by its name, a user's home folder) is
/// masked in the text before it too.
fn reads_twice(args: &Args) -> bool {
    args.keep_text && !args.one_pass
}

impl Tool for Redact {
    type Args = Args;
    const MAN: ManPage = MAN;
    /// It writes sessions, never a view for a person.
    const HUMAN_VIEW: bool = false;

    fn run(args: &Args) -> ExitCode {
        let state = match RunState::new(args) {
            Ok(s) => s,
            Err(e) => {
                diag::report_global("pi-redact", e);
                return ExitCode::from(2);
            }
        };
        let ahead = rewrite_ahead(args, &state);
        let state = Mutex::new(state);
        let sources = args.inputs.sources();
        let spools = match reads_twice(args) {
            true => keep_streams(&sources),
            false => Vec::new(),
        };
        // One input after another (the pseudonyms depend on the order), the next ones read
        // ahead on the other CPUs: in the default mode rewritten there, their paths left for
        // their turn. When the run is read twice, the first reading reports nothing (the
        // second reports what the inputs hold, once), and a stream is read from where it was
        // kept.
        let read = |first: bool, job: &Job| {
            input::run_one_at_a_time_early(
                "pi-redact",
                &sources,
                args.inputs.threads(),
                Notes::MESSAGES,
                ahead.as_deref(),
                |src, early, out, d| {
                    let mut quiet = Diags::quiet("pi-redact", "");
                    let d = if first { &mut quiet } else { d };
                    let kept = spools
                        .iter()
                        .find(|(at, _)| std::ptr::eq(&sources[*at], src));
                    let input = match kept {
                        Some((_, Some(spool))) => Turn::Kept(spool, !first),
                        // Not kept: read once, the second time.
                        Some((_, None)) if first => return Ok(()),
                        _ => match Input::open(src, early, d) {
                            Some(input) => Turn::Input(input),
                            None => return Ok(()),
                        },
                    };
                    job(&mut lock(&state), input, out, d)
                },
            )
        };
        if reads_twice(args) {
            // The first reading learns, and writes nothing.
            read(true, &|s, input, _, d| learn(args, s, |v| input.read(d, v)));
            lock(&state).read_again();
        }
        let status = read(false, &|s, input, out, d| match &args.out_dir {
            Some(dir) => redact_to_dir(args, s, input, dir, d),
            None => redact_source(args, s, input, out, d),
        });
        let s = into_inner(state);
        if args.report {
            eprintln!("pi-redact: replaced: {}", s.tally.line());
        }
        status
    }

    /// Runs pi-redact over `input` as if it came on stdin (for tests and fuzzing); the summary
    /// is not printed.
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        redact_bytes(args, input, out, d).map(|_| ())
    }
}

/// [`Redact::run_bytes`]; the number of records the residual scan withheld.
fn redact_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<u64, Stop> {
    let mut state = match RunState::new(args) {
        Ok(s) => s,
        Err(e) => {
            d.report(None, Kind::Io, e);
            return Ok(0);
        }
    };
    if reads_twice(args) {
        let mut quiet = Diags::quiet("pi-redact", "");
        learn(args, &mut state, |v| {
            reader::read(input, false, &mut quiet, v)
        })?;
        state.read_again();
    }
    let mut v = Redactor::new(args, &mut state, out);
    reader::read(input, false, d, &mut v)?;
    Ok(v.withheld)
}

/// `input` as `pi-redact` writes it with no option (every text replaced, paths given
/// pseudonyms, the residual scan on), for another tool to read (`pi-replay --redact`); and the
/// number of records the scan withheld (each written as a blank line). The input's own
/// problems are not reported here: the reading tool reports them.
pub fn redacted(input: &[u8]) -> (Vec<u8>, u64) {
    let args = <Args as clap::Parser>::parse_from(["pi-redact"]);
    let mut out = Out::held();
    let mut quiet = Diags::quiet("pi-redact", "");
    let withheld = redact_bytes(&args, input, &mut out, &mut quiet).unwrap_or(0);
    (out.buf, withheld)
}

fn redact_source(
    args: &Args,
    state: &mut RunState,
    input: Turn<'_, '_, '_>,
    out: &mut Out,
    d: &mut Diags,
) -> Result<(), Stop> {
    let mut v = Redactor::new(args, state, out);
    input.read(d, &mut v)?;
    Ok(())
}

/// [`redact_source`] into a file of its own under `dir` (see [`outdir`]).
fn redact_to_dir(
    args: &Args,
    state: &mut RunState,
    input: Turn<'_, '_, '_>,
    dir: &std::path::Path,
    d: &mut Diags,
) -> Result<(), Stop> {
    let tmp = dir.join(format!(".pi-redact-{}.tmp", std::process::id()));
    let mut file = match std::fs::create_dir_all(dir).and_then(|_| std::fs::File::create_new(&tmp))
    {
        Ok(f) => std::io::BufWriter::new(f),
        Err(e) => {
            d.report(
                None,
                Kind::Io,
                format!("cannot write {}: {e}", tmp.display()),
            );
            return Ok(());
        }
    };
    let mut out = Out::direct(&mut file, false);
    let mut v = Redactor::new(args, state, &mut out);
    let read = input.read(d, &mut v).map(|_| ());
    let (header, withheld) = (v.first_header.take(), v.withheld);
    let written = read.and_then(|_| out.flush());
    drop(file);
    let problem = match written {
        Err(Stop::Io(e)) => Some(format!("writing {}: {e}", tmp.display())),
        Err(Stop::BrokenPipe) => Some(format!("writing {}: broken pipe", tmp.display())),
        Ok(()) if withheld > 0 => Some(format!(
            "{withheld} record(s) still held replaced text: the redacted copy is not written"
        )),
        Ok(()) => None,
    };
    if header.is_none() {
        state.sessionless += 1;
    }
    let target = outdir::target(dir, header.as_deref(), state.sessionless);
    let placed = match problem {
        Some(p) => Err(p),
        None => target
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::hard_link(&tmp, &target))
            .map_err(|e| format!("cannot write {}: {e}", target.display())),
    };
    let _ = std::fs::remove_file(&tmp);
    if let Err(p) = placed {
        d.report(None, Kind::Io, p);
    }
    Ok(())
}

/// What is rewritten ahead of the reader ([`ahead`]): the default mode's records, with their
/// paths left as holes; with `--keep-text`, what the patterns find in kept text. With
/// `--rename-ids` alone, nothing (ids are numbered in order).
fn rewrite_ahead(args: &Args, state: &RunState) -> Option<Arc<dyn Ahead>> {
    (args.keep_text || !args.rename_ids).then(|| {
        let a = RewriteAhead {
            masker: Arc::clone(&state.masker),
            keep_text: args.keep_text,
            shift: state.shift,
            check: !args.no_check,
        };
        Arc::new(a) as Arc<dyn Ahead>
    })
}

/// A record's members as the rewriter walks them: its own, and its `message` object's when
/// the reader noted them.
type Walk<'a> = (Members<'a>, Option<(Raw<'a>, &'a [Member<'a>])>);

/// The members of entry `e` as the reader found them, into `top` (empty).
fn walk<'a>(e: &Entry<'a>, mut top: Members<'a>) -> Walk<'a> {
    top.extend(e.members());
    (top, e.message_members())
}

/// The reader's visitor: each header and entry rewritten and written.
struct Redactor<'a, 'o, 'w> {
    rw: Rewriter<'a>,
    secrets: &'a [String],
    check: bool,
    out: &'o mut Out<'w>,
    buf: Vec<u8>,
    /// The vector a record's members are walked into, kept empty between records.
    top: Vec<Member<'static>>,
    /// The number of the next line written (lines are numbered from 1).
    next_line: u64,
    /// The first header, as written (`--out-dir` names the file after it).
    first_header: Option<Vec<u8>>,
    /// Records the residual scan withheld.
    withheld: u64,
    /// What is rewritten ahead of the reader, when anything is ([`ahead`]).
    ahead: Option<Arc<dyn Ahead>>,
    /// Records taken as they were rewritten ahead: whole, with holes filled, and with what
    /// the patterns find in their kept text found ahead.
    #[cfg(test)]
    taken: [u64; 3],
}

impl<'a, 'o, 'w> Redactor<'a, 'o, 'w> {
    fn new(args: &Args, state: &'a mut RunState, out: &'o mut Out<'w>) -> Self {
        let ahead = rewrite_ahead(args, state);
        let mut rw = Rewriter::new(
            args.keep_text,
            &state.masker,
            &mut state.paths,
            &mut state.tally,
        );
        rw.shift = state.shift;
        rw.renames = args.rename_ids.then_some(&mut state.renames);
        Redactor {
            rw,
            secrets: state.masker.exact(),
            check: !args.no_check,
            out,
            buf: Vec::new(),
            top: Vec::with_capacity(16),
            next_line: 1,
            first_header: None,
            withheld: 0,
            ahead,
            #[cfg(test)]
            taken: [0; 3],
        }
    }

    /// Rewrites the record `object` of type `kind` (line `line`; `walk` gives its members, into
    /// the empty vector it is given, when they are needed; `done`, how it was rewritten ahead,
    /// if it was) and writes it, unless
    /// the residual scan finds replaced text in it.
    #[allow(clippy::too_many_arguments)]
    fn write<'r>(
        &mut self,
        kind: &str,
        object: Raw<'r>,
        walk: &dyn Fn(Members<'r>) -> Walk<'r>,
        line: u64,
        known_utf8: bool,
        done: Option<Holed<'_>>,
        d: &mut Diags,
    ) -> Result<(), Stop> {
        // Lines the reader skipped (blank, or not JSON) stay as blank lines, so that every
        // record keeps its line number (the tools' `line` fields, their diagnostics).
        while self.next_line < line {
            self.out.line(b"")?;
            self.next_line += 1;
        }
        self.next_line = line + 1;
        let mut walked = None;
        match done {
            Some(done) if done.whole => {
                #[cfg(test)]
                {
                    self.taken[0] += 1;
                }
                self.rw.tally.add_counts(done.tally);
                return self.out.line(done.out);
            }
            Some(done) => {
                #[cfg(test)]
                {
                    self.taken[1] += 1;
                }
                if !self.rw.fill(object, known_utf8, &done, &mut self.buf) {
                    self.copy(object);
                }
            }
            None => {
                let top = recycle(std::mem::take(&mut self.top));
                self.rewrite(kind, object, walked.insert(walk(top)), known_utf8)
            }
        }
        let mut leak = self.check.then(|| self.leak(object)).flatten();
        if leak.is_some() && !self.rw.check.masked.is_empty() {
            // Text masked in one place of the record but left in another (where no detector
            // saw it): rewrite once more, masking those strings everywhere.
            self.rw.also = Also::new(std::mem::take(&mut self.rw.check.masked));
            let walked = walked.get_or_insert_with(|| walk(recycle(std::mem::take(&mut self.top))));
            self.rewrite(kind, object, walked, known_utf8);
            self.rw.also = Also::default();
            leak = self.leak(object);
        }
        if let Some((top, _)) = walked {
            self.top = recycle(top);
        }
        self.rw.count();
        if let Some(s) = leak {
            d.report(
                Some(line),
                Kind::BadField,
                format!(
                    "the rewritten record still holds {} characters of replaced input text: not written",
                    String::from_utf8_lossy(&s).chars().count()
                ),
            );
            self.withheld += 1;
            return self.out.line(b"");
        }
        self.out.line(&self.buf)
    }
}

impl Redactor<'_, '_, '_> {
    /// Rewrites the record into `buf` (a copy of it when nothing changed).
    fn rewrite(
        &mut self,
        kind: &str,
        object: Raw<'_>,
        (top, message): &Walk<'_>,
        known_utf8: bool,
    ) {
        if !self
            .rw
            .record(kind, object, top, *message, known_utf8, &mut self.buf)
        {
            self.copy(object);
        }
    }

    /// The record as it is into `buf` (nothing of it needed changing).
    fn copy(&mut self, object: Raw<'_>) {
        self.buf.clear();
        push_value(&mut self.buf, &object);
    }

    /// The replaced text the rewritten record in `buf` still holds, if any.
    fn leak(&self, object: Raw<'_>) -> Option<Vec<u8>> {
        check::residual(&self.buf, &self.rw.check, self.secrets, object.bytes())
    }
}

impl Visitor for Redactor<'_, '_, '_> {
    fn header(&mut self, h: &Header<'_>, d: &mut Diags) -> Result<(), Stop> {
        // oh-my-pi's title slot, read with the header it comes before: rewritten first, as a
        // record of its own type.
        if let Some(slot) = &h.title {
            let b = slot.line.bytes;
            let start = json::skip_ws(b, 0);
            if let Ok(raw) = json::validate(b[start..].trim_ascii_end()) {
                let walk = |_| (members(raw), None);
                self.write("title", raw, &walk, slot.line.no, false, None, d)?;
            }
        }
        // A fragment has no header line: its `line` is its first entry's, which `entry` writes.
        if h.fragment {
            return Ok(());
        }
        // The header's object: the line without what the reader allowed around it (blanks, a
        // byte-order mark). The reader accepted it, so it is one object.
        let b = h.line.bytes;
        let (Some(start), Some(end)) = (
            b.iter().position(|&c| c == b'{'),
            b.iter().rposition(|&c| c == b'}'),
        ) else {
            return Ok(());
        };
        let Ok(raw) = json::validate(&b[start..=end]) else {
            return Ok(());
        };
        let walk = |_| (members(raw), None);
        self.write("session", raw, &walk, h.line.no, false, None, d)?;
        if self.first_header.is_none() {
            self.first_header = Some(self.buf.clone());
        }
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let kind = e.kind().unwrap_or_default();
        let (line, utf8) = (e.line.no, e.is_utf8());
        let store = e.ahead_store::<Rewritten>();
        let done = store.and_then(|(s, i)| s.get(i));
        if let Some((s, i)) = store {
            s.found(i, &mut self.rw.found);
            #[cfg(test)]
            {
                self.taken[2] += u64::from(self.rw.found.known);
            }
        }
        let written = self.write(&kind, e.object, &|top| walk(e, top), line, utf8, done, d);
        self.rw.found.clear();
        written
    }

    fn end(&mut self, _d: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }

    /// A record outside a session (oh-my-pi's `title` line before the header, or a record of a
    /// file that is no session) is rewritten like an entry of an unknown type.
    fn outside(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        self.entry(e, d)
    }

    /// A line of a session holding a JSON array is an entry to Pi's loader (a version-1
    /// firstKeptEntryIndex counts it): it stays, as `[]`, none of its contents kept.
    fn array_line(&mut self, line: u64) -> Result<(), Stop> {
        while self.next_line < line {
            self.out.line(b"")?;
            self.next_line += 1;
        }
        self.next_line = line + 1;
        self.out.line(b"[]")
    }

    /// The rewriter walks each message from the members the reader found.
    fn reads_messages(&self) -> bool {
        true
    }

    fn ahead(&self) -> Option<Arc<dyn Ahead>> {
        self.ahead.clone()
    }
}
