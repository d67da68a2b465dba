//! pi-usage: sum the usage Pi recorded, honestly labelled.
//!
//! Each input is read by a job (in parallel) that keeps, per billed call, a few numbers: its
//! tokens, its recorded cost as an exact decimal, its time, its model, and a 128-bit identity.
//! The finish step takes the inputs in argument order, drops repeats of calls already counted
//! (a fork replays its original; a sub-agent transcript repeats its parent's calls) and adds
//! the rest into groups. So the result does not depend on `--threads`, and memory is bounded
//! by the number of distinct calls (16 bytes each for the identities) plus the calls of the
//! files being read, never by file size.
//!
//! Costs are summed as integers of 10^-18 dollars parsed from the number text Pi wrote, so
//! sums are exact and associative: grouping or splitting the input never changes a total.

mod table;

use crate::calendar::Zone;
use crate::cli::{Inputs, ManPage};
use crate::diag::{Diags, Kind};
use crate::hash::{self, Hash128Set};
use crate::input::{self, Source};
use crate::json;
use crate::model::{self, Message};
use crate::models::{self, Models};
use crate::output::{Obj, Out, Stop};
use crate::reader::{self, Entry, Header, Visitor};
use crate::time;
use crate::tool::Tool;
use clap::{Parser, ValueEnum};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Mutex, OnceLock};

#[derive(Parser, Debug)]
#[command(
    name = "pi-usage",
    version,
    about = "Sum the tokens and cost Pi recorded in session files: per session, by model, by day, or in total.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Group by DIM instead of by session; repeat the option or separate with commas to
    /// combine (`--by day,model`). `model` groups by provider and model together.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "DIM")]
    pub by: Vec<Dim>,

    /// Print one grand total over all input (after the `--by` groups, if any; alone
    /// otherwise).
    #[arg(long)]
    pub total: bool,

    /// Time zone of the day, week and month buckets: `local` (default: TZ, else
    /// /etc/localtime), `UTC`, a fixed offset such as `+05:30`, or a zone name such as
    /// `Europe/Berlin` (from TZDIR or /usr/share/zoneinfo).
    #[arg(long, value_name = "ZONE", value_parser = parse_zone, allow_hyphen_values = true)]
    pub tz: Option<ZoneArg>,

    /// Count every assistant line, repeats included (by default a call repeated in the
    /// input, as in a fork or a sub-agent transcript, counts once).
    #[arg(long)]
    pub no_dedup: bool,

    /// Print one `context` record per assistant message instead: recorded context size,
    /// configured context window, fill ratio, inferred context drops.
    #[arg(long, conflicts_with_all = ["by", "total", "table", "no_dedup"])]
    pub context: bool,

    /// With --context: the models.json to read context windows from (default:
    /// $PI_CODING_AGENT_DIR/models.json, else ~/.pi/agent/models.json).
    #[arg(long, value_name = "FILE", requires = "context")]
    pub models: Option<PathBuf>,

    /// Print an aligned table for a person (the default when stdout is a terminal).
    #[arg(long, conflicts_with = "json")]
    pub table: bool,

    /// Print JSON Lines even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,
}

/// A grouping dimension.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Session,
    Project,
    Provider,
    Model,
    Day,
    Week,
    Month,
}

impl Dim {
    fn session_level(self) -> bool {
        matches!(self, Dim::Session | Dim::Project)
    }
    fn timed(self) -> bool {
        matches!(self, Dim::Day | Dim::Week | Dim::Month)
    }
}

/// A parsed `--tz`, kept with its text for messages.
#[derive(Debug, Clone)]
pub struct ZoneArg(pub Zone);

fn parse_zone(s: &str) -> Result<ZoneArg, String> {
    Zone::parse(s).map(ZoneArg)
}

pub const MAN: ManPage = ManPage {
    name: "pi-usage",
    summary: "sum the tokens and cost recorded in Pi session files",
    description: concat!(
    "pi-usage adds up the usage Pi recorded: the `usage` of every assistant message (input, output, cacheRead, cacheWrite, totalTokens and cost.total), and, kept apart, the `usage` of summarization calls (a `usage` object on a `compaction` or `branch_summary` entry; current Pi does not write one, extensions may). It counts whatever it is given: `pi-usage s.jsonl` is everything that was billed, abandoned branches included; `pi-branch s.jsonl | pi-usage` is the conversation that was kept.\n\n\
By default it prints one `usage` record per session; `--by` groups instead by session, project (the header's cwd), provider, model (provider and model together), day, week (ISO 8601, weeks start on Monday) or month, and the dimensions combine (`--by day,model` is one record per day and model). `--total` prints one grand total of the same shape. Records of one session come together, in input order; other groups are sorted by their keys in the order the dimensions were given, unknown (null) values last.\n\n\
Costs are the costs Pi recorded (usage.cost.total), never a price looked up or guessed: a call without a recorded cost is counted, its tokens are summed, and it is flagged in `cost_missing`; a record whose calls all lack a cost has cost null. Costs are summed exactly, as decimals of 18 places parsed from the number text Pi wrote (not as floating point), so totals do not depend on the order or grouping of the input or on --threads: pi-usage over several files equals the sum of pi-usage over each file when no call repeats across them.\n\n\
Token counts are the recorded integers. totalTokens, when absent from a message, is taken as input + output + cacheRead + cacheWrite (the sum Pi records) and the message is counted in `total_tokens_computed`. Numeric usage fields other than those five (such as `reasoning`, which newer Pi versions write and which is part of output) are summed under their own names in `other`. A token field that is negative, fractional or not a number is reported (bad_field) and not counted; so is a cost that is not a non-negative number (the call then counts as cost missing). Zero-usage assistant messages (aborted requests, errors) count as messages with zero tokens; an assistant message without any `usage` counts as a message with zero tokens and a missing cost.\n\n\
Each billed call counts once. Pi's /fork writes a new session file whose first entries replay the original's active path verbatim, and sub-agent extensions write child sessions that repeat usage, so counting every line inflates totals. A call's identity is its message's `responseId` when it has one, else its entry `id`, entry `timestamp` and the exact text of its `usage` (for a v1 entry without an id, the timestamp and usage); the first occurrence in input order is counted and later ones are left out and counted in `duplicates` of the record they would have fallen in. Repeats are found in any input, in any session, assistant messages and summarization calls alike. Not found as repeats, so counted: a call whose earlier copy is not in the input (when a fork's original, its header's parentSession, is not among the FILE arguments, nothing is removed and the record's `lineage` says \"unresolved\"; the original counts as present when a FILE argument is the same file or has the same file name, or when a session with the id in the original's file name, Pi's `<time>_<id>.jsonl`, came earlier in the input, as in a stream on stdin); a copy without responseId whose usage text differs from the original's (re-serialized with another key order or number format); an entry with neither responseId, id nor timestamp, which has no identity. --no-dedup counts every line; --context never removes repeats. Memory: the identities of the distinct calls (16 bytes each, up to 35 in the hash table: about 4 MB per GB of generated sessions), and the calls of the small files (under 16 MiB) read ahead of the output when several FILEs are read in parallel (about 200 bytes each); a single input, stdin, and any file of 16 MiB or more are read as a stream in their turn, their calls counted as they come; never the files' text. Lines Pi cannot parse are not counted, as Pi skips them: a record glued to another on one line is reported (glued_records) and neither record counts, so a message repeated on a glued line is neither counted twice nor reported as a duplicate. Entries of a file without a session header are not counted either (Pi loads no session from such a file); they are reported as unreadable.\n\n\
Times: a call's time is its entry's `timestamp` (ISO 8601, offsets such as -05:00 honoured), else its message's numeric `timestamp` (Unix milliseconds); a call with neither counts in the groups with day, week and month null. An entry timestamp that is not ISO 8601 is reported. `first` and `last` are the times of the earliest and latest counted call, as written. Buckets follow --tz.\n\n\
With --context, pi-usage prints one `context` record per assistant message instead (every line: these are per-session series, so repeats are not removed): the recorded context size (input + cacheRead + cacheWrite of that call), the configured context window of its model from Pi's models.json, the fill ratio, and an inferred drop where the context shrank sharply. The previous message is the previous assistant message on the same branch (through parentId), so moving between branches is not mistaken for a drop; a drop is inferred when the recorded context is below 70% of the previous one, and `after_compaction` says whether a compaction entry lies between the two. Zero-usage messages neither show nor hide a drop. The configured window is null when models.json configures none for the message's provider and model.\n\n",
    models::window_rule_text!(),
    "\n\n\
How these numbers compare with a jq sum over the same files and with ccusage's pi report, and why they differ where they do: docs/USAGE-COMPARISON.md."
    ),
    output: "JSON Lines: `usage` records (one per session, per group, or the grand total), or with --context `context` records, each with type as the first key; every field is described in docs/FORMAT.md. With --table (the default when stdout is a terminal): an aligned table with thousands separators and costs in dollars, a total row, and notes on missing costs, left-out repeats and unresolved forks. --json forces JSON Lines on a terminal.",
    environment: "TZ: the local time zone for day, week and month buckets (a zone name, :name, a path or a POSIX TZ string); without it /etc/localtime. TZDIR: where zone names are looked up (default /usr/share/zoneinfo). PI_CODING_AGENT_DIR: where --context finds models.json (default ~/.pi/agent, from HOME; a leading ~/ is expanded).",
    examples: &[
        ("pi-usage ~/.pi/agent/sessions/*/*.jsonl", "Tokens and cost per session, as a table on a terminal."),
        ("pi-usage --total --json ~/.pi/agent/sessions/*/*.jsonl | jq .total.cost", "All recorded cost, forks and sub-agent repeats counted once."),
        ("pi-usage --by day,model --tz Europe/Berlin ~/.pi/agent/sessions/*/*.jsonl", "Daily usage per model, days in Berlin time."),
        ("pi-branch s.jsonl | pi-usage --total", "What the kept conversation cost (abandoned branches left out)."),
        ("pi-usage --context s.jsonl | jq -r '[.line, .recorded_context_tokens, .configured_context_window] | @tsv'", "A context-size series to chart."),
        ("pi-sessions --paths0 | xargs -0 pi-usage --by month --total", "Monthly totals over every session file."),
    ],
};

/// usage: the tool.
pub struct Usage;

impl Tool for Usage {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        if args.context {
            return run_context(args, &sources);
        }
        let table = args.table || (!args.json && std::io::stdout().is_terminal());
        let present = InputSet::new(&sources);
        let report = Mutex::new(new_report(args, table));
        let lock = || report.lock().unwrap_or_else(|e| e.into_inner());
        input::run_in_turn(
            "pi-usage",
            &sources,
            args.inputs.threads(),
            |src, out, d, turn| {
                // Several inputs are read in parallel, each one's calls collected and handed to
                // the report in argument order. A large input (or the only one) instead waits
                // for its turn and streams its calls into the report as it reads them, so memory
                // does not grow with its size.
                if !streams(src, sources.len()) {
                    return collect(src, &present, d).map(Some);
                }
                if !turn.wait() {
                    return Ok(None);
                }
                let read = |d: &mut Diags, v: &mut dyn Visitor| reader::read_source(src, d, v);
                stream_with(&present, &mut lock(), src.name(), out, d, read).map(|()| None)
            },
            |r, out| match r {
                Some(Some(fd)) => lock().file(fd, out),
                Some(None) => Ok(()),
                None => lock().finish(out),
            },
        )
    }

    /// Runs pi-usage over `input` as if it came on stdin, totals included (for tests and
    /// fuzzing). The table is printed only with --table (`out` is no terminal).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        if args.context {
            let models = models::load_for("pi-usage", args.models.as_deref());
            return write_contexts(&models, "<stdin>", out, d, |d, v| {
                reader::read(input, false, d, v)
            });
        }
        let present = InputSet::new(&[Source::Stdin]);
        let mut report = new_report(args, args.table);
        stream_with(&present, &mut report, "<stdin>".into(), out, d, |d, v| {
            reader::read(input, false, d, v)
        })?;
        report.finish(out)
    }
}

/// The report `args` ask for: its groups, and the zone of its day, week and month buckets.
fn new_report(args: &Args, table: bool) -> Report {
    let dims = effective_dims(args);
    let zone = if dims.iter().any(|d| d.timed()) {
        match &args.tz {
            Some(z) => z.0.clone(),
            None => Zone::local().unwrap_or_else(|e| {
                crate::diag::report_global("pi-usage", format!("local time zone: {e}; using UTC"));
                Zone::Utc
            }),
        }
    } else {
        Zone::Utc
    };
    Report::new(dims, zone, !args.no_dedup, args.total, table)
}

/// The dimensions in effect: `--by` without repeats, provider added before model, session
/// when nothing else is asked for.
fn effective_dims(args: &Args) -> Vec<Dim> {
    let mut dims: Vec<Dim> = Vec::new();
    for &d in &args.by {
        if d == Dim::Model && !dims.contains(&Dim::Provider) && !args.by.contains(&Dim::Provider) {
            dims.push(Dim::Provider);
        }
        if !dims.contains(&d) {
            dims.push(d);
        }
    }
    if dims.is_empty() && !args.total {
        dims.push(Dim::Session);
    }
    dims
}

// ---------------------------------------------------------------------------------------
// Exact decimal money.

/// Fractional digits of the fixed-point cost: 10^-18 dollars.
const SCALE: u32 = 18;
const ONE: i128 = 1_000_000_000_000_000_000;

/// A JSON number's text as a fixed-point integer of 10^-18, rounded half to even beyond that;
/// `None` when it is not a number or is too large.
pub fn parse_decimal(raw: &[u8]) -> Option<i128> {
    plain_decimal(raw).or_else(|| general_decimal(raw))
}

/// [`parse_decimal`] of the common form, at most 18 integer digits and 18 decimals without an
/// exponent (`0.0123`, `12`): no rounding, the digits are the result. `None` for anything else.
fn plain_decimal(raw: &[u8]) -> Option<i128> {
    let (neg, s) = match raw.split_first() {
        Some((b'-', r)) => (true, r),
        _ => (false, raw),
    };
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &[][..]),
    };
    let plain = |d: &[u8], max: usize| d.len() <= max && d.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !plain(int, 18) || !plain(frac, SCALE as usize) {
        return None;
    }
    if frac.is_empty() && s.len() != int.len() {
        return None; // "1."
    }
    let digits = |d: &[u8]| d.iter().fold(0i128, |v, &c| v * 10 + i128::from(c - b'0'));
    let v = digits(int) * ONE + digits(frac) * 10i128.pow(SCALE - frac.len() as u32);
    Some(if neg { -v } else { v })
}

/// [`parse_decimal`] of any JSON number: exponents, more than 18 decimals, rounding.
fn general_decimal(raw: &[u8]) -> Option<i128> {
    let s = std::str::from_utf8(raw).ok()?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int.is_empty() || !int.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|c| c.is_ascii_digit()) || (mant.contains('.') && frac.is_empty()) {
        return None;
    }
    let all: String = int.chars().chain(frac.chars()).collect();
    let digits = all.trim_start_matches('0');
    let mut shift = exp
        .checked_sub(frac.len() as i64)?
        .checked_add(i64::from(SCALE))?;
    if digits.is_empty() {
        return Some(0);
    }
    // At most 36 significant digits fit with room to spare; JavaScript writes at most 17.
    let (kept, round_up) = if digits.len() > 36 {
        shift += (digits.len() - 36) as i64;
        (&digits[..36], digits.as_bytes()[36] >= b'5')
    } else {
        (digits, false)
    };
    let mut v: i128 = kept.parse().ok()?;
    if round_up {
        v += 1;
    }
    if shift >= 0 {
        if shift > 38 {
            return None;
        }
        v = v.checked_mul(10i128.checked_pow(shift as u32)?)?;
    } else if shift < -38 {
        v = 0;
    } else {
        let p = 10i128.pow((-shift) as u32);
        let (q, r) = (v / p, v % p);
        v = if 2 * r > p || (2 * r == p && q % 2 == 1) {
            q + 1
        } else {
            q
        };
    }
    Some(if neg { -v } else { v })
}

/// The fixed-point value as decimal text without trailing zeros (`0.00835896`, `12`).
pub fn format_decimal(v: i128) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let int = a / ONE as u128;
    let frac = a % ONE as u128;
    if frac == 0 {
        return format!("{sign}{int}");
    }
    let f = format!("{frac:018}");
    format!("{sign}{int}.{}", f.trim_end_matches('0'))
}

// ---------------------------------------------------------------------------------------
// What a job keeps of one input.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lineage {
    None,
    Resolved,
    Unresolved,
}

impl Lineage {
    fn name(self) -> &'static str {
        match self {
            Lineage::None => "none",
            Lineage::Resolved => "resolved",
            Lineage::Unresolved => "unresolved",
        }
    }
}

struct SessionMeta {
    id: String,
    cwd: Option<String>,
    parent: Option<String>,
    lineage: Lineage,
}

/// A timestamp's text as written: inline up to 30 bytes (Pi writes 24), so a call and the
/// first/last of a group need no allocation for it; on the heap beyond.
#[derive(Debug, Clone)]
pub enum Stamp {
    Inline(u8, [u8; 30]),
    Heap(Box<str>),
}

impl Stamp {
    fn new(s: &str) -> Stamp {
        let mut b = [0; 30];
        match b.get_mut(..s.len()) {
            Some(head) => {
                head.copy_from_slice(s.as_bytes());
                Stamp::Inline(s.len() as u8, b)
            }
            None => Stamp::Heap(s.into()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Whole UTF-8 text copied in `new`: never fails.
            Stamp::Inline(n, b) => std::str::from_utf8(&b[..usize::from(*n)]).unwrap_or_default(),
            Stamp::Heap(s) => s,
        }
    }
}

/// One billed call: a few numbers and indexes, no payload.
struct Call {
    session: u32,
    summarization: bool,
    /// Index into `FileData::models`.
    model: u32,
    /// The call's time (ms since the epoch) and its text as written.
    time: Option<(i64, Stamp)>,
    identity: Option<u128>,
    /// input, output, cacheRead, cacheWrite.
    tokens: [u64; 4],
    total_tokens: u64,
    total_computed: bool,
    cost: Option<i128>,
    /// (index into `FileData::names`, value) of other numeric usage fields.
    other: Vec<(u32, u64)>,
}

type ModelKey = (Option<Box<str>>, Option<Box<str>>);

#[derive(Default)]
struct FileData {
    file: String,
    sessions: Vec<SessionMeta>,
    models: Vec<ModelKey>,
    model_ix: HashMap<ModelKey, u32>,
    /// The model of the last call.
    last_model: u32,
    names: Vec<Box<str>>,
    name_ix: HashMap<Box<str>, u32>,
    calls: Vec<Call>,
}

impl FileData {
    fn model(&mut self, provider: Option<&str>, model: Option<&str>) -> u32 {
        // Calls in a row mostly use one model: the last one found is tried first, without
        // building a key.
        if let Some((p, m)) = self.models.get(self.last_model as usize) {
            if p.as_deref() == provider && m.as_deref() == model {
                return self.last_model;
            }
        }
        let i = self.model_key(provider, model);
        self.last_model = i;
        i
    }

    fn model_key(&mut self, provider: Option<&str>, model: Option<&str>) -> u32 {
        let k: ModelKey = (provider.map(Into::into), model.map(Into::into));
        if let Some(&i) = self.model_ix.get(&k) {
            return i;
        }
        let i = self.models.len() as u32;
        self.models.push(k.clone());
        self.model_ix.insert(k, i);
        i
    }
    fn name(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.name_ix.get(n) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(n.into());
        self.name_ix.insert(n.into(), i);
        i
    }
}

/// The FILE arguments, to tell whether a fork's original is among them. Their canonical paths
/// and names are found the first time a fork asks (a syscall or more per path component of
/// every FILE: a serial start of ~10 ms for 2,000 files when nothing is a fork).
struct InputSet<'a> {
    sources: &'a [Source],
    found: OnceLock<(HashSet<PathBuf>, HashSet<OsString>)>,
}

impl<'a> InputSet<'a> {
    fn new(sources: &'a [Source]) -> InputSet<'a> {
        InputSet {
            sources,
            found: OnceLock::new(),
        }
    }

    fn found(&self) -> &(HashSet<PathBuf>, HashSet<OsString>) {
        self.found.get_or_init(|| {
            let (mut canonical, mut names) = (HashSet::new(), HashSet::new());
            for src in self.sources {
                if let Source::Path(p) = src {
                    if let Ok(c) = std::fs::canonicalize(p) {
                        canonical.insert(c);
                    }
                    if let Some(n) = p.file_name() {
                        names.insert(n.to_os_string());
                    }
                }
            }
            (canonical, names)
        })
    }

    fn lineage(&self, parent: Option<&str>) -> Lineage {
        let Some(p) = parent.filter(|p| !p.is_empty()) else {
            return Lineage::None;
        };
        let (canonical, names) = self.found();
        let path = std::path::Path::new(p);
        let found = std::fs::canonicalize(path).is_ok_and(|c| canonical.contains(&c))
            || path.file_name().is_some_and(|n| names.contains(n));
        if found {
            Lineage::Resolved
        } else {
            Lineage::Unresolved
        }
    }
}

/// The session id in a Pi session file name, `<time>_<id>.jsonl` (the whole stem when it
/// has no `_`).
fn session_id_of_path(p: &str) -> Option<&str> {
    let name = p.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let id = stem.rsplit_once('_').map_or(stem, |(_, id)| id);
    (!id.is_empty()).then_some(id)
}

/// A 128-bit identity of byte strings (XXH3-128 of each part's length and bytes, so parts
/// cannot run into each other): a collision among even billions of calls is not a practical
/// concern. `buf` is scratch space.
fn identity(buf: &mut Vec<u8>, parts: &[&[u8]]) -> u128 {
    buf.clear();
    for p in parts {
        buf.extend_from_slice(&(p.len() as u64).to_le_bytes());
        buf.extend_from_slice(p);
    }
    hash::hash128(buf)
}

/// An entry `timestamp` by pi-usage's rule: [`time::parse`] of the trimmed text, refusing
/// `24:00`, leap seconds and expanded years (the rule pi-usage had before the parsers were
/// merged into [`time`]).
fn entry_time_ms(s: &str) -> Option<i64> {
    time::parse(s.trim())
        .filter(|t| !(t.end_of_day || t.leap_second || t.expanded_year))
        .map(|t| t.ms)
}

/// Inputs at least this large are streamed into the report in their turn rather than collected
/// whole in parallel with the others (waiting for the turn costs less than their calls).
const STREAM_AT: u64 = 16 << 20;

/// Whether `src`, one of `inputs` inputs, is streamed: the only input, stdin (of unknown size)
/// or a file of at least [`STREAM_AT`] bytes.
fn streams(src: &Source, inputs: usize) -> bool {
    match src {
        _ if inputs == 1 => true,
        Source::Stdin => true,
        Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| m.len() >= STREAM_AT),
    }
}

/// The sessions and calls of one input, read whole.
fn collect(src: &Source, present: &InputSet, d: &mut Diags) -> Result<FileData, Stop> {
    let mut c = Collector::new(present, src.name(), None);
    reader::read_source(src, d, &mut c)?;
    Ok(c.data)
}

/// The calls of one input named `file` handed to `report` as they are read: nothing of the
/// input is held but its model and field names.
fn stream_with(
    present: &InputSet,
    report: &mut Report,
    file: String,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    report.input(&file);
    let mut c = Collector::new(present, file, Some((report, out)));
    read(d, &mut c)?;
    match c.sink {
        Some((report, out)) => report.end_input(out),
        None => Ok(()),
    }
}

struct Collector<'a, 'w> {
    present: &'a InputSet<'a>,
    /// The calls and sessions read (only the model and field names when streaming).
    data: FileData,
    /// Sessions begun so far.
    sessions: usize,
    /// Where calls go as they are read, when streaming.
    sink: Option<(&'a mut Report, &'a mut Out<'w>)>,
    scratch: Vec<u8>,
}

/// The parts of an entry that make a call.
struct CallFields<'a> {
    usage: Option<&'a [u8]>,
    summarization: bool,
    provider: Option<&'a str>,
    model: Option<&'a str>,
    response_id: Option<&'a str>,
    /// The message's own (Unix-millisecond) timestamp.
    msg_ts: Option<&'a [u8]>,
}

/// What was read from one `usage` object.
struct UsageRead {
    tokens: [u64; 4],
    total: Option<u64>,
    cost: Option<i128>,
    other: Vec<(u32, u64)>,
}

const TOKEN_FIELDS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

fn short(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    if s.chars().count() > 32 {
        let mut t: String = s.chars().take(31).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

/// A token count, or why it is not one (for the diagnostic).
fn token_value(raw: &[u8]) -> Result<Option<u64>, String> {
    if raw == b"null" {
        return Ok(None);
    }
    if let Some(v) = json::as_u64(raw) {
        return Ok(Some(v));
    }
    match json::as_f64(raw) {
        Some(f) if f < 0.0 => Err(format!("is negative ({})", short(raw))),
        Some(_) => Err(format!("is not a whole number ({})", short(raw))),
        None => Err(format!("is a {}, not a number", json::kind_name(raw))),
    }
}

impl<'a, 'w> Collector<'a, 'w> {
    fn new(
        present: &'a InputSet,
        file: String,
        sink: Option<(&'a mut Report, &'a mut Out<'w>)>,
    ) -> Self {
        Collector {
            present,
            data: FileData {
                file,
                ..FileData::default()
            },
            sessions: 0,
            sink,
            scratch: Vec::new(),
        }
    }

    fn read_usage(&mut self, usage: &[u8], what: &str, line: u64, d: &mut Diags) -> UsageRead {
        let mut u = UsageRead {
            tokens: [0; 4],
            total: None,
            cost: None,
            other: Vec::new(),
        };
        if usage.first() != Some(&b'{') {
            d.report(
                Some(line),
                Kind::BadField,
                format!(
                    "{what}usage is a {}, not an object; counted with zero tokens and no cost",
                    json::kind_name(usage)
                ),
            );
            return u;
        }
        json::for_each_field(usage, |k, v| self.usage_member(&mut u, k, v, what, line, d));
        u
    }

    /// Member `k` (raw name) of a `usage` object, with value `v`, into `u`.
    fn usage_member(
        &mut self,
        u: &mut UsageRead,
        k: &[u8],
        v: &[u8],
        what: &str,
        line: u64,
        d: &mut Diags,
    ) {
        // Names are plain ASCII but for a rare escape.
        let key = match std::str::from_utf8(k) {
            Ok(s) if !k.contains(&b'\\') => Cow::Borrowed(s),
            _ => json::decode_string_body(k),
        };
        if key == "cost" {
            u.cost = self.read_cost(v, what, line, d);
            return;
        }
        let known = TOKEN_FIELDS.iter().position(|f| *f == key);
        let is_total = key == "totalTokens";
        if known.is_none()
            && !is_total
            && !v.first().is_some_and(|c| c.is_ascii_digit() || *c == b'-')
        {
            // Not a token field (a future object or string member): ignored.
            return;
        }
        match token_value(v) {
            Ok(None) => {}
            Ok(Some(n)) => {
                if let Some(i) = known {
                    u.tokens[i] = n;
                } else if is_total {
                    u.total = Some(n);
                } else {
                    let ix = self.data.name(&key);
                    u.other.push((ix, n));
                }
            }
            Err(why) => d.report(
                Some(line),
                Kind::BadField,
                format!("{what}usage.{key} {why}; not counted"),
            ),
        }
    }

    fn read_cost(&mut self, cost: &[u8], what: &str, line: u64, d: &mut Diags) -> Option<i128> {
        if cost == b"null" {
            return None;
        }
        if cost.first() != Some(&b'{') {
            d.report(
                Some(line),
                Kind::BadField,
                format!(
                    "{what}usage.cost is a {}, not an object; cost counted as missing",
                    json::kind_name(cost)
                ),
            );
            return None;
        }
        let total = json::get(cost, "total")?;
        if total == b"null" {
            return None;
        }
        let bad = |d: &mut Diags, why: String| {
            d.report(
                Some(line),
                Kind::BadField,
                format!("{what}usage.cost.total {why}; cost counted as missing"),
            );
            None
        };
        if json::as_f64(total).is_none() {
            return bad(d, format!("is a {}, not a number", json::kind_name(total)));
        }
        match parse_decimal(total) {
            Some(v) if v >= 0 => Some(v),
            Some(_) => bad(d, format!("is negative ({})", short(total))),
            None => bad(d, format!("is out of range ({})", short(total))),
        }
    }

    /// The call's time: the entry's ISO timestamp, else the message's Unix milliseconds.
    fn time(e: &Entry<'_>, msg_ts: Option<&[u8]>, d: &mut Diags) -> Option<(i64, Stamp)> {
        match e.get("timestamp") {
            None | Some(b"null") => {}
            Some(raw) => match json::as_str(raw) {
                Some(s) => match entry_time_ms(&s) {
                    Some(ms) => return Some((ms, Stamp::new(&s))),
                    None => d.report(
                        Some(e.line.no),
                        Kind::BadField,
                        format!(
                            "timestamp {:?} is not ISO 8601; not used",
                            short(s.as_bytes())
                        ),
                    ),
                },
                None => d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!(
                        "timestamp is a {}, not an ISO 8601 string; not used",
                        json::kind_name(raw)
                    ),
                ),
            },
        }
        let ms = msg_ts
            .and_then(json::as_f64)
            .and_then(time::millis_from_number)?;
        Some((ms, Stamp::new(&time::format_iso8601(ms))))
    }

    fn push_call(&mut self, e: &Entry<'_>, c: CallFields<'_>, d: &mut Diags) {
        let CallFields {
            usage,
            summarization,
            provider,
            model,
            response_id,
            msg_ts,
        } = c;
        let Some(session) = self.sessions.checked_sub(1) else {
            return;
        };
        let what = if summarization {
            format!("{} ", e.kind().as_deref().unwrap_or("entry"))
        } else {
            String::new()
        };
        let u = match usage {
            Some(u) => self.read_usage(u, &what, e.line.no, d),
            None => UsageRead {
                tokens: [0; 4],
                total: None,
                cost: None,
                other: Vec::new(),
            },
        };
        let identity = match response_id.filter(|r| !r.is_empty()) {
            Some(r) => Some(identity(&mut self.scratch, &[b"r", r.as_bytes()])),
            None => {
                let id = e.get("id").filter(|v| *v != b"null");
                let ts = e.get("timestamp").filter(|v| *v != b"null");
                (id.is_some() || ts.is_some()).then(|| {
                    identity(
                        &mut self.scratch,
                        &[
                            if summarization { b"s" } else { b"e" },
                            id.unwrap_or(b""),
                            ts.unwrap_or(b""),
                            usage.unwrap_or(b""),
                        ],
                    )
                })
            }
        };
        let time = Self::time(e, msg_ts, d);
        let model = self.data.model(provider, model);
        let computed = u.tokens.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let call = Call {
            session: session as u32,
            summarization,
            model,
            time,
            identity,
            tokens: u.tokens,
            total_tokens: u.total.unwrap_or(computed),
            total_computed: u.total.is_none(),
            cost: u.cost,
            other: u.other,
        };
        match &mut self.sink {
            Some((report, _)) => report.call(&call, &self.data.models, &self.data.names),
            None => self.data.calls.push(call),
        }
    }
}

impl Visitor for Collector<'_, '_> {
    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<(), Stop> {
        let lineage = self.present.lineage(h.parent_session.as_deref());
        let s = SessionMeta {
            id: h.id.clone(),
            cwd: h.cwd.clone(),
            parent: h.parent_session.clone(),
            lineage,
        };
        self.sessions += 1;
        match &mut self.sink {
            Some((report, out)) => report.session(s, out),
            None => {
                self.data.sessions.push(s);
                Ok(())
            }
        }
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        match e.get("type") {
            Some(b"\"message\"") => {
                let Some(mf) = e.message().filter(Message::is_assistant) else {
                    return Ok(());
                };
                let provider = mf.provider.and_then(json::as_str);
                let model = mf.model.and_then(json::as_str);
                let rid = mf.response_id.and_then(json::as_str);
                let c = CallFields {
                    usage: mf.usage.filter(|u| *u != b"null"),
                    summarization: false,
                    provider: provider.as_deref(),
                    model: model.as_deref(),
                    response_id: rid.as_deref(),
                    msg_ts: mf.timestamp,
                };
                self.push_call(e, c, d);
            }
            Some(b"\"compaction\"" | b"\"branch_summary\"") => {
                if let Some(u) = e.get("usage").filter(|u| *u != b"null") {
                    let provider = e.str("provider");
                    let model = e.str("model");
                    let c = CallFields {
                        usage: Some(u),
                        summarization: true,
                        provider: provider.as_deref(),
                        model: model.as_deref(),
                        response_id: None,
                        msg_ts: None,
                    };
                    self.push_call(e, c, d);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _d: &mut Diags) -> Result<(), Stop> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Sums and groups.

/// Token and cost sums of a set of calls.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sums {
    pub count: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
    pub total_tokens_computed: u64,
    /// 10^-18 dollars.
    pub cost: i128,
    pub cost_missing: u64,
    pub other: BTreeMap<Box<str>, u64>,
}

impl Sums {
    fn add_call(&mut self, c: &Call, names: &[Box<str>]) {
        self.count += 1;
        self.input = self.input.saturating_add(c.tokens[0]);
        self.output = self.output.saturating_add(c.tokens[1]);
        self.cache_read = self.cache_read.saturating_add(c.tokens[2]);
        self.cache_write = self.cache_write.saturating_add(c.tokens[3]);
        self.total_tokens = self.total_tokens.saturating_add(c.total_tokens);
        self.total_tokens_computed += u64::from(c.total_computed);
        match c.cost {
            Some(v) => self.cost = self.cost.saturating_add(v),
            None => self.cost_missing += 1,
        }
        for (ix, v) in &c.other {
            if let Some(n) = names.get(*ix as usize) {
                match self.other.get_mut(n) {
                    Some(e) => *e = e.saturating_add(*v),
                    None => {
                        self.other.insert(n.clone(), *v);
                    }
                }
            }
        }
    }

    fn merge(&mut self, o: &Sums) {
        self.count += o.count;
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.total_tokens = self.total_tokens.saturating_add(o.total_tokens);
        self.total_tokens_computed += o.total_tokens_computed;
        self.cost = self.cost.saturating_add(o.cost);
        self.cost_missing += o.cost_missing;
        for (k, v) in &o.other {
            let e = self.other.entry(k.clone()).or_insert(0);
            *e = e.saturating_add(*v);
        }
    }

    /// The summed cost, or `None` when no call had a recorded cost.
    pub fn cost(&self) -> Option<i128> {
        (self.count == 0 || self.cost_missing < self.count).then_some(self.cost)
    }

    fn write(&self, o: &mut Obj<'_>) {
        o.u64("count", self.count)
            .u64("input", self.input)
            .u64("output", self.output)
            .u64("cache_read", self.cache_read)
            .u64("cache_write", self.cache_write)
            .u64("total_tokens", self.total_tokens)
            .u64("total_tokens_computed", self.total_tokens_computed);
        match self.cost() {
            Some(c) => o.raw("cost", format_decimal(c).as_bytes()),
            None => o.null("cost"),
        };
        o.u64("cost_missing", self.cost_missing).obj("other", |m| {
            for (k, v) in &self.other {
                m.u64(k, *v);
            }
        });
    }
}

/// A key value that sorts after every string when unknown.
type KeyVal = (bool, Box<str>);

fn key_val(v: Option<&str>) -> KeyVal {
    match v {
        Some(s) => (false, s.into()),
        None => (true, "".into()),
    }
}

fn key_opt(v: &KeyVal) -> Option<&str> {
    (!v.0).then_some(&*v.1)
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// Session occurrence (input order), 0 when sessions are not a dimension.
    session: u64,
    vals: Vec<KeyVal>,
}

/// What a record says about its group besides the sums.
#[derive(Debug, Default, Clone)]
pub struct Labels {
    pub session: Option<String>,
    pub file: Option<String>,
    pub project: Option<String>,
    pub parent_session: Option<String>,
    pub lineage: Option<&'static str>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub month: Option<String>,
    pub week: Option<String>,
    pub day: Option<String>,
}

/// The sums of one group.
#[derive(Debug, Default, Clone)]
pub struct Agg {
    pub labels: Labels,
    pub messages: Sums,
    pub summarization: Sums,
    pub by_model: BTreeMap<(KeyVal, KeyVal), Sums>,
    pub first: Option<(i64, Stamp)>,
    pub last: Option<(i64, Stamp)>,
    pub duplicates: u64,
    pub sessions: u64,
    pub forks: u64,
    pub forks_unresolved: u64,
    /// The last session occurrence counted in `sessions`, plus one.
    seen_session: u64,
}

impl Agg {
    fn enter(&mut self, occ: u64, s: &SessionMeta) {
        if self.seen_session == occ + 1 {
            return;
        }
        self.seen_session = occ + 1;
        self.sessions += 1;
        if s.lineage != Lineage::None {
            self.forks += 1;
        }
        if s.lineage == Lineage::Unresolved {
            self.forks_unresolved += 1;
        }
    }

    fn add(&mut self, c: &Call, dup: bool, models: &[ModelKey], names: &[Box<str>]) {
        if dup {
            self.duplicates += 1;
            return;
        }
        if c.summarization {
            self.summarization.add_call(c, names);
        } else {
            self.messages.add_call(c, names);
        }
        let (p, m) = &models[c.model as usize];
        let (p, m) = (p.as_deref(), m.as_deref());
        // A group has a few models: found without building a key.
        let found = self
            .by_model
            .iter_mut()
            .find(|((kp, km), _)| key_opt(kp) == p && key_opt(km) == m);
        match found {
            Some((_, s)) => s.add_call(c, names),
            None => self
                .by_model
                .entry((key_val(p), key_val(m)))
                .or_default()
                .add_call(c, names),
        }
        if let Some((ms, text)) = &c.time {
            if self.first.as_ref().map_or(true, |f| *ms < f.0) {
                self.first = Some((*ms, text.clone()));
            }
            if self.last.as_ref().map_or(true, |l| *ms > l.0) {
                self.last = Some((*ms, text.clone()));
            }
        }
    }

    pub fn total(&self) -> Sums {
        let mut t = self.messages.clone();
        t.merge(&self.summarization);
        t
    }

    fn write(&self, out: &mut Out) -> Result<(), Stop> {
        let l = &self.labels;
        let total = self.total();
        out.record("usage")
            .opt_str("session", l.session.as_deref())
            .opt_str("file", l.file.as_deref())
            .opt_str("project", l.project.as_deref())
            .opt_str("parent_session", l.parent_session.as_deref())
            .opt_str("lineage", l.lineage)
            .opt_str("provider", l.provider.as_deref())
            .opt_str("model", l.model.as_deref())
            .opt_str("month", l.month.as_deref())
            .opt_str("week", l.week.as_deref())
            .opt_str("day", l.day.as_deref())
            .opt_str("first", self.first.as_ref().map(|f| f.1.as_str()))
            .opt_str("last", self.last.as_ref().map(|f| f.1.as_str()))
            .u64("sessions", self.sessions)
            .u64("forks", self.forks)
            .u64("forks_unresolved", self.forks_unresolved)
            .u64("duplicates", self.duplicates)
            .obj("messages", |o| self.messages.write(o))
            .obj("summarization", |o| self.summarization.write(o))
            .obj("total", |o| total.write(o))
            .arr("by_model", |a| {
                for ((p, m), s) in &self.by_model {
                    a.obj(|o| {
                        o.opt_str("provider", key_opt(p))
                            .opt_str("model", key_opt(m));
                        s.write(o);
                    });
                }
            })
            .end();
        out.end_line()
    }
}

struct Report {
    dims: Vec<Dim>,
    zone: Zone,
    dedup: bool,
    want_total: bool,
    table: bool,
    seen: Hash128Set,
    /// Ids of the sessions read so far.
    seen_ids: HashSet<String>,
    groups: BTreeMap<Key, Agg>,
    total: Agg,
    next_session: u64,
    rows: Vec<Agg>,
    /// The input being read, and its session.
    file: String,
    current: Option<Current>,
}

/// The session a report is taking calls of, and its occurrence number (input order).
struct Current {
    occ: u64,
    meta: SessionMeta,
}

/// What the record of the group `key` says about it besides its sums.
fn labels(dims: &[Dim], key: &Key, s: &SessionMeta, file: &str) -> Labels {
    let mut l = Labels::default();
    let mut vals = key.vals.iter().map(key_opt);
    for d in dims {
        if *d == Dim::Session {
            l.session = Some(s.id.clone());
            l.file = Some(file.to_string());
            l.project = s.cwd.clone();
            l.parent_session = s.parent.clone();
            l.lineage = Some(s.lineage.name());
            continue;
        }
        let v = vals.next().flatten().map(str::to_string);
        match d {
            Dim::Session => {}
            Dim::Project => l.project = v,
            Dim::Provider => l.provider = v,
            Dim::Model => l.model = v,
            Dim::Day => l.day = v,
            Dim::Week => l.week = v,
            Dim::Month => l.month = v,
        }
    }
    l
}

impl Report {
    fn new(dims: Vec<Dim>, zone: Zone, dedup: bool, want_total: bool, table: bool) -> Report {
        Report {
            dims,
            zone,
            dedup,
            want_total,
            table,
            seen: Hash128Set::default(),
            seen_ids: HashSet::new(),
            groups: BTreeMap::new(),
            total: Agg::default(),
            next_session: 0,
            rows: Vec::new(),
            file: String::new(),
            current: None,
        }
    }

    /// The group `key` of a call (or of a session, `call` = `None`), created with its labels
    /// when new.
    fn group(&mut self, cur: &Current, call: Option<(&Call, &[ModelKey])>) -> &mut Agg {
        let date = call
            .and_then(|(c, _)| c.time.as_ref())
            .map(|(ms, _)| self.zone.date_of(*ms));
        let model = call.map(|(c, models)| &models[c.model as usize]);
        let s = &cur.meta;
        let mut key = Key {
            session: 0,
            vals: Vec::new(),
        };
        for d in &self.dims {
            match d {
                Dim::Session => key.session = cur.occ,
                Dim::Project => key.vals.push(key_val(s.cwd.as_deref())),
                Dim::Provider => key.vals.push(key_val(model.and_then(|m| m.0.as_deref()))),
                Dim::Model => key.vals.push(key_val(model.and_then(|m| m.1.as_deref()))),
                Dim::Day | Dim::Week | Dim::Month => {
                    let v = date.map(|dt| match d {
                        Dim::Day => dt.day_label(),
                        Dim::Week => dt.week_label(),
                        _ => dt.month_label(),
                    });
                    key.vals.push(key_val(v.as_deref()));
                }
            }
        }
        let dims = &self.dims;
        self.groups.entry(key).or_insert_with_key(|key| Agg {
            labels: labels(dims, key, s, &self.file),
            ..Agg::default()
        })
    }

    /// A new input named `file` begins.
    fn input(&mut self, file: &str) {
        file.clone_into(&mut self.file);
    }

    /// A session of the current input begins.
    fn session(&mut self, mut s: SessionMeta, out: &mut Out) -> Result<(), Stop> {
        // A fork whose original is not among the FILE arguments may still have been read
        // before it (sessions back to back on stdin): Pi names a session file after its id.
        if s.lineage == Lineage::Unresolved
            && s.parent
                .as_deref()
                .and_then(session_id_of_path)
                .is_some_and(|id| self.seen_ids.contains(id))
        {
            s.lineage = Lineage::Resolved;
        }
        self.seen_ids.insert(s.id.clone());
        if self.dims.contains(&Dim::Session) {
            // A session's calls are all read once the next one begins: its groups are done.
            self.flush(out)?;
        }
        let cur = Current {
            occ: self.next_session,
            meta: s,
        };
        self.next_session += 1;
        self.total.enter(cur.occ, &cur.meta);
        if !self.dims.is_empty() && self.dims.iter().all(|d| d.session_level()) {
            self.group(&cur, None).enter(cur.occ, &cur.meta);
        }
        self.current = Some(cur);
        Ok(())
    }

    /// A call of the current session (`models` and `names` are its input's).
    fn call(&mut self, c: &Call, models: &[ModelKey], names: &[Box<str>]) {
        let Some(cur) = self.current.take() else {
            return;
        };
        let dup = self.dedup && c.identity.is_some_and(|h| !self.seen.insert(h));
        if !self.dims.is_empty() {
            let g = self.group(&cur, Some((c, models)));
            g.enter(cur.occ, &cur.meta);
            g.add(c, dup, models, names);
        }
        self.total.add(c, dup, models, names);
        self.current = Some(cur);
    }

    /// The current input ended.
    fn end_input(&mut self, out: &mut Out) -> Result<(), Stop> {
        self.current = None;
        if self.dims.contains(&Dim::Session) {
            self.flush(out)?;
        }
        Ok(())
    }

    /// The sessions and calls of one input, read in full.
    fn file(&mut self, fd: FileData, out: &mut Out) -> Result<(), Stop> {
        self.input(&fd.file);
        let mut calls = fd.calls.iter().peekable();
        for (si, s) in fd.sessions.into_iter().enumerate() {
            self.session(s, out)?;
            while let Some(c) = calls.next_if(|c| c.session as usize == si) {
                self.call(c, &fd.models, &fd.names);
            }
        }
        self.end_input(out)
    }

    fn flush(&mut self, out: &mut Out) -> Result<(), Stop> {
        let groups = std::mem::take(&mut self.groups);
        for (_, g) in groups {
            if self.table {
                self.rows.push(g);
            } else {
                g.write(out)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Out) -> Result<(), Stop> {
        self.flush(out)?;
        if self.table {
            let show_total = self.want_total || self.rows.len() != 1;
            let text = table::render(&self.dims, &self.rows, &self.total, show_total);
            return out.raw(text.as_bytes());
        }
        if self.want_total {
            self.total.write(out)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// --context

fn run_context(args: &Args, sources: &[Source]) -> ExitCode {
    let models = models::load_for("pi-usage", args.models.as_deref());
    input::run(
        "pi-usage",
        sources,
        args.inputs.threads(),
        |src, out, d| {
            write_contexts(&models, &src.name(), out, d, |d, v| {
                reader::read_source(src, d, v)
            })
        },
        |_, _| Ok(()),
    )
}

/// Writes the `context` records of one input named `file`, which `read` feeds to the visitor
/// it is given.
fn write_contexts(
    models: &Models,
    file: &str,
    out: &mut Out,
    d: &mut Diags,
    read: impl FnOnce(&mut Diags, &mut dyn Visitor) -> Result<reader::Stats, Stop>,
) -> Result<(), Stop> {
    let mut v = ContextWriter {
        out,
        file: file.to_string(),
        models,
        s: None,
    };
    read(d, &mut v)?;
    Ok(())
}

/// The recorded context before an entry, on its branch.
#[derive(Debug, Clone, Copy, Default)]
struct CtxState {
    prev: Option<u64>,
    compaction: bool,
}

struct CtxSession {
    id: String,
    by_id: HashMap<Box<str>, CtxState>,
    last: CtxState,
}

struct ContextWriter<'a, 'w> {
    out: &'a mut Out<'w>,
    file: String,
    models: &'a Models,
    s: Option<CtxSession>,
}

/// A drop is inferred when the recorded context falls below this share of the previous one.
const DROP_RATIO: f64 = 0.7;

impl Visitor for ContextWriter<'_, '_> {
    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<(), Stop> {
        self.s = Some(CtxSession {
            id: h.id.clone(),
            by_id: HashMap::new(),
            last: CtxState::default(),
        });
        Ok(())
    }

    fn entry(&mut self, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        let Some(s) = self.s.as_mut() else {
            return Ok(());
        };
        // The state this entry continues from: its parent's, else the previous entry's.
        let mut st = match e.get("parentId") {
            Some(b"null") => CtxState::default(),
            Some(raw) => json::as_str(raw)
                .and_then(|p| s.by_id.get(p.as_ref()).copied())
                .unwrap_or(s.last),
            None => s.last,
        };
        match e.get("type") {
            Some(b"\"compaction\"") => st.compaction = true,
            Some(b"\"message\"") => {
                if let Some(mf) = e.message().filter(Message::is_assistant) {
                    st = write_context(self.out, &self.file, &s.id, self.models, e, &mf, st, d)?;
                }
            }
            _ => {}
        }
        if let Some(id) = e.str("id") {
            s.by_id.insert(id.as_ref().into(), st);
        }
        s.last = st;
        Ok(())
    }

    fn end(&mut self, _d: &mut Diags) -> Result<(), Stop> {
        self.s = None;
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn write_context(
    out: &mut Out,
    file: &str,
    session: &str,
    models: &Models,
    e: &Entry<'_>,
    m: &Message<'_>,
    st: CtxState,
    d: &mut Diags,
) -> Result<CtxState, Stop> {
    let usage = m.usage.filter(|u| u.first() == Some(&b'{'));
    let mut t: [Option<u64>; 4] = [None; 4];
    let mut ok = usage.is_some();
    if let Some(u) = usage {
        for (i, f) in TOKEN_FIELDS.iter().enumerate() {
            match json::get(u, f).map(token_value) {
                None | Some(Ok(None)) => t[i] = Some(0),
                Some(Ok(Some(n))) => t[i] = Some(n),
                Some(Err(why)) => {
                    d.report(
                        Some(e.line.no),
                        Kind::BadField,
                        format!("usage.{f} {why}; not counted"),
                    );
                    if i != 1 {
                        ok = false;
                    }
                }
            }
        }
    }
    let context =
        ok.then(|| model::context_tokens(t[0].unwrap_or(0), t[2].unwrap_or(0), t[3].unwrap_or(0)));
    let provider = m.provider.and_then(json::as_str);
    let model = m.model.and_then(json::as_str);
    let window = match (&provider, &model) {
        (Some(p), Some(id)) => models.window(p, id),
        _ => None,
    };
    let fill = match (context, window) {
        (Some(c), Some(w)) => Some(((c as f64 / w.tokens as f64) * 1e6).round() / 1e6),
        _ => None,
    };
    let live = context.filter(|&c| c > 0);
    let drop = match (live, st.prev) {
        (Some(c), Some(p)) if (c as f64) < (p as f64) * DROP_RATIO => Some(p - c),
        _ => None,
    };
    let stop = m.stop_reason.and_then(json::as_str);
    let id = e.str("id");
    let ts = e.str("timestamp");
    out.record("context")
        .str("session", session)
        .str("file", file)
        .u64("line", e.line.no)
        .opt_str("entry", id.as_deref())
        .opt_str("timestamp", ts.as_deref())
        .opt_str("provider", provider.as_deref())
        .opt_str("model", model.as_deref())
        .opt_str("stop_reason", stop.as_deref())
        .opt_u64("recorded_input", usage.and(t[0]))
        .opt_u64("recorded_output", usage.and(t[1]))
        .opt_u64("recorded_cache_read", usage.and(t[2]))
        .opt_u64("recorded_cache_write", usage.and(t[3]))
        .opt_u64("recorded_context_tokens", context)
        .opt_u64("configured_context_window", window.map(|w| w.tokens))
        .opt_str("configured_window_source", window.map(|w| w.source.name()))
        .opt_f64("fill_ratio", fill)
        .opt_u64(
            "previous_context_tokens",
            st.prev.filter(|_| live.is_some()),
        )
        .opt_u64("inferred_context_drop", drop)
        .bool("after_compaction", live.is_some() && st.compaction)
        .end();
    out.end_line()?;
    Ok(match live {
        Some(c) => CtxState {
            prev: Some(c),
            compaction: false,
        },
        None => st,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_timestamps_by_the_usage_rule() {
        let ms = |s: &str| entry_time_ms(s).unwrap_or_else(|| panic!("{s}"));
        assert_eq!(ms("1970-01-01T00:00:00.000Z"), 0);
        assert_eq!(ms("2026-05-01T10:00:00.123Z"), 1_777_629_600_123);
        // The same instant written with an offset.
        assert_eq!(ms("2026-05-01T05:00:00.123-05:00"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T15:30:00.123+0530"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T10:00:00.1234567Z"), 1_777_629_600_123);
        assert_eq!(ms("2026-05-01T10:00:00Z"), 1_777_629_600_000);
        assert_eq!(ms("2026-05-01T10:00Z"), 1_777_629_600_000);
        assert_eq!(ms("2026-05-01"), 1_777_593_600_000);
        assert_eq!(ms("2026-05-01T10:00:00"), 1_777_629_600_000);
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-05-01T24:00:00Z",
            "2026-05-01T10:00:00.Z",
            "2026-05-01T10:00:00+5",
            "2026-05-01T10:00:00Zjunk",
            "2026-05-01X10:00:00Z",
            "1e12",
        ] {
            assert_eq!(entry_time_ms(bad), None, "{bad}");
        }
        assert!(entry_time_ms("2024-02-29T00:00:00Z").is_some());
        // pi-usage's own rule on top of time::parse: padded text is trimmed; 24:00, leap
        // seconds and expanded years are refused.
        assert_eq!(ms(" 2026-05-01T10:00:00Z\n"), 1_777_629_600_000);
        for bad in ["2016-12-31T23:59:60Z", "+002026-05-01T10:00:00Z"] {
            assert_eq!(entry_time_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn session_ids_from_pi_file_names() {
        let p = "/home/u/.pi/agent/sessions/--x--/2026-04-21T08-59-18-596Z_cb9b4411-f084.jsonl";
        assert_eq!(session_id_of_path(p), Some("cb9b4411-f084"));
        assert_eq!(session_id_of_path(r"C:\s\a_b.jsonl"), Some("b"));
        assert_eq!(session_id_of_path("plain.jsonl"), Some("plain"));
        assert_eq!(session_id_of_path("/x/"), None);
    }

    #[test]
    fn decimals_parse_exactly() {
        let p = |s: &str| parse_decimal(s.as_bytes());
        assert_eq!(p("0"), Some(0));
        assert_eq!(p("1"), Some(ONE));
        assert_eq!(p("0.00835896"), Some(8_358_960_000_000_000));
        assert_eq!(p("1.5e-7"), Some(150_000_000_000));
        assert_eq!(p("1.5E+2"), Some(150 * ONE));
        assert_eq!(p("-0.25"), Some(-ONE / 4));
        // Beyond 18 places: rounded half to even.
        assert_eq!(p("0.0000000000000000015"), Some(2));
        assert_eq!(p("0.0000000000000000025"), Some(2));
        assert_eq!(p("0.00000000000000000251"), Some(3));
        assert_eq!(p("1e-400"), Some(0));
        assert_eq!(p("1e400"), None);
        assert_eq!(p("\"1\""), None);
        assert_eq!(p("1."), None);
        assert_eq!(p(".5"), None);
        assert_eq!(p("123456789012345678901234567890123456789012"), None);
    }

    #[test]
    fn the_plain_decimal_path_agrees_with_the_general_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut plain = 0;
        for _ in 0..20_000 {
            let mut s = String::new();
            if next(4) == 0 {
                s.push('-');
            }
            for _ in 0..=next(21) {
                s.push(char::from(b'0' + next(10) as u8));
            }
            if next(3) != 0 {
                s.push('.');
                for _ in 0..next(22) {
                    s.push(char::from(b'0' + next(10) as u8));
                }
            }
            let fast = plain_decimal(s.as_bytes());
            if fast.is_some() {
                plain += 1;
                assert_eq!(fast, general_decimal(s.as_bytes()), "{s}");
            }
        }
        assert!(plain > 5_000, "{plain} plain decimals");
    }

    #[test]
    fn decimal_sums_are_associative() {
        // 0.1 + 0.2 in floating point is 0.30000000000000004; here it is 0.3 whatever the order.
        let v: Vec<i128> = ["0.1", "0.2", "0.3", "0.00000001", "1e-9"]
            .iter()
            .map(|s| parse_decimal(s.as_bytes()).unwrap())
            .collect();
        let a: i128 = v.iter().sum();
        let b: i128 = v.iter().rev().sum();
        assert_eq!(a, b);
        assert_eq!(format_decimal(a), "0.600000011");
        assert_eq!(format_decimal(0), "0");
        assert_eq!(format_decimal(12 * ONE), "12");
        assert_eq!(format_decimal(-ONE / 2), "-0.5");
    }
}
