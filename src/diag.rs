//! Diagnostics: `tool: file:line: message` on stderr, counted by kind, remembered for the exit
//! status. Every tool reports through this one piece of code, so the format and the exit
//! status are the same everywhere.

use crate::sync::lock;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static REPORTED: AtomicBool = AtomicBool::new(false);

/// Whether any diagnostic was reported in this process (decides exit status 2).
pub fn any_reported() -> bool {
    REPORTED.load(Ordering::Relaxed)
}

/// How much of the diagnostics a run prints (`--quiet`, `--verbose`); the exit status is the
/// same in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Every line of the first [`SHOWN_FILES`] inputs that report a kind; the later inputs'
    /// lines of that kind are counted and summed up in one line at the end ([`finish`]).
    Summarised,
    /// Every line (`--verbose`).
    Every,
    /// None: diagnostics and notes are counted, not printed (`--quiet`).
    Nothing,
}

static SHOWN: Mutex<Shown> = Mutex::new(Shown::Summarised);

/// Chooses what the run prints (the command line's `--quiet` or `--verbose`).
pub fn set_shown(s: Shown) {
    *lock(&SHOWN) = s;
}

fn shown() -> Shown {
    *lock(&SHOWN)
}

/// Whether the run prints nothing on stderr (`--quiet`): no progress line either.
pub fn is_quiet() -> bool {
    shown() == Shown::Nothing
}

/// How many inputs print their diagnostics of one kind before the later ones are summed up.
pub const SHOWN_FILES: u64 = 5;

/// How many lines of one kind an input prints before the rest of them are summed up (a file
/// that is not JSON Lines at all, a binary file, would otherwise print a line per line).
pub const SHOWN_LINES: u64 = 20;

/// Which lines are "the same kind of warning" for the summary: a diagnostic's [`Kind`], or a
/// note (every note is one class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Problem(Kind),
    Note,
}

impl Class {
    fn index(self) -> usize {
        match self {
            Class::Problem(k) => k as usize,
            Class::Note => Kind::ALL.len(),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Class::Problem(k) => k.name(),
            Class::Note => "notes",
        }
    }
}

const CLASSES: usize = Kind::ALL.len() + 1;

/// What the run has printed and held back, per class: inputs that reported it; of the inputs
/// past [`SHOWN_FILES`], how many and their lines; of the inputs shown, those with more than
/// [`SHOWN_LINES`] lines and the lines past those.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    files: u64,
    hidden_files: u64,
    hidden_lines: u64,
    capped_files: u64,
    capped_lines: u64,
}

static TALLY: Mutex<[Tally; CLASSES]> = Mutex::new(
    [Tally {
        files: 0,
        hidden_files: 0,
        hidden_lines: 0,
        capped_files: 0,
        capped_lines: 0,
    }; CLASSES],
);

/// Whether a line of `class` from the input that has reported `seen` lines of each class so
/// far is printed; counts the line, the input (on its first line of the class) and what is
/// held back.
fn admit(class: Class, seen: &mut [u64; CLASSES]) -> bool {
    let mode = shown();
    let mut tally = lock(&TALLY);
    admit_in(&mut tally, mode, class, seen)
}

/// [`admit`] with the run's tally and mode given.
fn admit_in(
    tally: &mut [Tally; CLASSES],
    mode: Shown,
    class: Class,
    seen: &mut [u64; CLASSES],
) -> bool {
    match mode {
        Shown::Every => return true,
        Shown::Nothing => return false,
        Shown::Summarised => {}
    }
    let i = class.index();
    let t = &mut tally[i];
    seen[i] += 1;
    let first = seen[i] == 1;
    if first {
        t.files += 1;
    }
    if t.files <= SHOWN_FILES {
        if seen[i] <= SHOWN_LINES {
            return true;
        }
        if seen[i] == SHOWN_LINES + 1 {
            t.capped_files += 1;
        }
        t.capped_lines += 1;
        return false;
    }
    if first {
        t.hidden_files += 1;
    }
    t.hidden_lines += 1;
    false
}

/// The lines that sum up what was held back, one per class, in [`Kind::ALL`] order (notes
/// last): `TOOL: N more files had KIND (M lines), not shown; --verbose prints every one`.
pub fn summary(tool: &str) -> String {
    let tally = lock(&TALLY);
    summary_of(&tally, tool)
}

fn summary_of(tally: &[Tally; CLASSES], tool: &str) -> String {
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    let mut s = String::new();
    for c in Kind::ALL
        .map(Class::Problem)
        .into_iter()
        .chain([Class::Note])
    {
        let t = tally[c.index()];
        if t.capped_files > 0 {
            let _ = writeln!(
                s,
                "{tool}: {} file{} had {} more line{} of {} than the {SHOWN_LINES} shown; --verbose prints every one",
                t.capped_files,
                plural(t.capped_files),
                t.capped_lines,
                plural(t.capped_lines),
                c.name(),
            );
        }
        if t.hidden_files == 0 {
            continue;
        }
        let _ = writeln!(
            s,
            "{tool}: {} more file{} had {} ({} line{}), not shown; --verbose prints every one",
            t.hidden_files,
            plural(t.hidden_files),
            c.name(),
            t.hidden_lines,
            plural(t.hidden_lines),
        );
    }
    s
}

/// The end of a run: prints the [`summary`] of what was held back.
pub fn finish(tool: &str) {
    let s = summary(tool);
    if !s.is_empty() {
        let _ = std::io::stderr().lock().write_all(s.as_bytes());
    }
}

/// The kinds of problem a tool reports. Their names appear in records (e.g. `branch_info`'s
/// `diagnostics` object), so they are part of the output contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Io,
    InvalidUtf8,
    ByteOrderMark,
    MalformedJson,
    NotObject,
    Glued,
    MissingHeader,
    MalformedHeader,
    SecondHeader,
    Cycle,
    MissingParent,
    DuplicateId,
    BadId,
    IdlessLeaf,
    BadField,
    NotFound,
}

impl Kind {
    pub const ALL: [Kind; 16] = [
        Kind::Io,
        Kind::InvalidUtf8,
        Kind::ByteOrderMark,
        Kind::MalformedJson,
        Kind::NotObject,
        Kind::Glued,
        Kind::MissingHeader,
        Kind::MalformedHeader,
        Kind::SecondHeader,
        Kind::Cycle,
        Kind::MissingParent,
        Kind::DuplicateId,
        Kind::BadId,
        Kind::IdlessLeaf,
        Kind::BadField,
        Kind::NotFound,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Io => "io_error",
            Kind::InvalidUtf8 => "invalid_utf8",
            Kind::ByteOrderMark => "byte_order_mark",
            Kind::MalformedJson => "malformed_json",
            Kind::NotObject => "not_object",
            Kind::Glued => "glued_records",
            Kind::MissingHeader => "missing_header",
            Kind::MalformedHeader => "malformed_header",
            Kind::SecondHeader => "second_header",
            Kind::Cycle => "parent_cycle",
            Kind::MissingParent => "missing_parent",
            Kind::DuplicateId => "duplicate_id",
            Kind::BadId => "bad_id",
            Kind::IdlessLeaf => "idless_leaf",
            Kind::BadField => "bad_field",
            Kind::NotFound => "not_found",
        }
    }
}

/// Counts of diagnostics by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts([u64; Kind::ALL.len()]);

impl Counts {
    pub fn get(&self, k: Kind) -> u64 {
        self.0[k as usize]
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// The counts accumulated since `earlier` was taken.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let mut c = *self;
        for (a, b) in c.0.iter_mut().zip(earlier.0) {
            *a -= b;
        }
        c
    }
    /// Non-zero counts, by kind name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Kind::ALL
            .iter()
            .filter(|k| self.get(**k) > 0)
            .map(|k| (k.name(), self.get(*k)))
    }
}

/// The diagnostics of one input: printed at once when the input is processed alone, held and
/// printed after its output when inputs run in parallel (so stderr follows argument order).
pub struct Diags {
    tool: &'static str,
    file: String,
    immediate: bool,
    /// Counts only: nothing printed, the exit status untouched.
    quiet: bool,
    held: String,
    /// Each held line's class and where it ends in `held`.
    held_lines: Vec<(Class, usize)>,
    /// How many lines of each class this input has reported (for the summary of repeats).
    seen: [u64; CLASSES],
    counts: Counts,
}

impl Diags {
    pub fn new(tool: &'static str, file: &str, immediate: bool) -> Diags {
        Diags {
            tool,
            file: sanitize(file).into_owned(),
            immediate,
            quiet: false,
            held: String::new(),
            held_lines: Vec::new(),
            seen: [0; CLASSES],
            counts: Counts::default(),
        }
    }

    /// Diagnostics that are only counted: nothing is printed and the exit status is not
    /// changed. For tools that describe files rather than read them (pi-sessions reports a
    /// file's bad lines as a count in its record, not as problems of the run).
    pub fn quiet(tool: &'static str, file: &str) -> Diags {
        let mut d = Diags::new(tool, file, false);
        d.quiet = true;
        d
    }

    /// The input's name as diagnostics show it.
    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Reports a problem at `line` (1-based; `None` for the input as a whole).
    pub fn report(&mut self, line: Option<u64>, kind: Kind, msg: impl AsRef<str>) {
        self.counts.0[kind as usize] += 1;
        if self.quiet {
            return;
        }
        REPORTED.store(true, Ordering::Relaxed);
        self.print(line, Class::Problem(kind), msg.as_ref());
    }

    /// Says something about the input that is not a problem (a fragment read without its
    /// header): printed as a diagnostic is, with `note: ` before the message, but neither
    /// counted nor changing the exit status.
    pub fn note(&mut self, line: Option<u64>, msg: impl AsRef<str>) {
        if !self.quiet {
            self.print(line, Class::Note, msg.as_ref());
        }
    }

    /// Prints (or holds) `tool: file:line: msg` (`note: msg` for a note). An input processed
    /// alone prints at once, if [`admit`] lets it; held lines are admitted when flushed, in
    /// argument order, so the inputs shown are the first ones given.
    fn print(&mut self, line: Option<u64>, class: Class, msg: &str) {
        if self.immediate && !admit(class, &mut self.seen) {
            return;
        }
        let prefix = if class == Class::Note { "note: " } else { "" };
        let mut s = String::new();
        let _ = match line {
            Some(n) => write!(
                s,
                "{}: {}:{}: {prefix}{}",
                self.tool,
                self.file,
                n,
                sanitize(msg)
            ),
            None => write!(s, "{}: {}: {prefix}{}", self.tool, self.file, sanitize(msg)),
        };
        s.push('\n');
        if self.immediate {
            let _ = std::io::stderr().lock().write_all(s.as_bytes());
        } else {
            self.held.push_str(&s);
            self.held_lines.push((class, self.held.len()));
        }
    }

    /// What was held back, as it would be printed.
    pub fn held(&self) -> &str {
        &self.held
    }

    /// Prints what was held back (the lines [`admit`] lets through).
    pub fn flush(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut printed = String::with_capacity(self.held.len());
        let mut start = 0;
        for &(class, end) in &self.held_lines {
            if admit(class, &mut self.seen) {
                printed.push_str(&self.held[start..end]);
            }
            start = end;
        }
        if !printed.is_empty() {
            let _ = std::io::stderr().lock().write_all(printed.as_bytes());
        }
        self.held.clear();
        self.held_lines.clear();
    }
}

/// Reports a problem that belongs to no input (a bad option value, a missing models file).
pub fn report_global(tool: &str, msg: impl AsRef<str>) {
    REPORTED.store(true, Ordering::Relaxed);
    note_global(tool, msg);
}

/// Says something about the run that is not a problem (how many files a tool given no FILE
/// reads): `tool: msg`, not printed with `--quiet`, never changing the exit status.
pub fn note_global(tool: &str, msg: impl AsRef<str>) {
    if shown() == Shown::Nothing {
        return;
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "{tool}: {}",
        sanitize(msg.as_ref())
    );
}

/// Escapes what could drive a terminal or hide what text says, so that text from a session
/// shows as it is in everything meant for a person (diagnostics, tables, the tree): control
/// characters (C0, DEL, C1), and the invisible and bidirectional format characters (see
/// [`is_invisible`]), each as `\u{…}`.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII, the common name, without looking each character up (and without a
    // branch per byte, so that the check is made a vector of bytes at a time).
    let unprintable = s
        .bytes()
        .fold(false, |u, b| u | (b.wrapping_sub(0x20) >= 0x5f));
    if !unprintable || !s.chars().any(is_control) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.into()
}

fn is_control(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// Unicode's format characters (general category Cf: bidirectional embeddings, overrides and
/// isolates, zero-width spaces and joiners, the byte order mark, the soft hyphen, tag
/// characters, …) and the line and paragraph separators (Zl, Zp): they change how the text
/// around them displays (U+202E shows `/home/u/\u{202e}terces` reversed) or do not display at
/// all. The ranges are those of Unicode 16.
pub fn is_invisible(c: char) -> bool {
    const FORMAT: &[(u32, u32)] = &[
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x2028, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
    ];
    let c = c as u32;
    c >= 0xAD && FORMAT.iter().any(|&(a, b)| (a..=b).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The man pages say how many files are shown (the prose is a constant string).
    #[test]
    fn the_man_pages_name_the_number_of_files_shown() {
        let n = SHOWN_FILES;
        let prose = crate::cli::EXIT_STATUS;
        assert!(prose.contains(&format!("when more than {n} input files")));
        assert!(prose.contains(&format!("the first {n} files")));
        let n = SHOWN_LINES;
        assert!(prose.contains(&format!("more than {n} lines of one kind")));
    }

    /// Each input's lines of a kind are shown for the first SHOWN_FILES inputs that report
    /// it; later inputs' lines of that kind are counted, and one line per kind sums them up.
    /// Other kinds, and notes, are counted apart.
    #[test]
    fn repeated_kinds_are_summed_up_after_the_first_inputs() {
        let mut tally = [Tally::default(); CLASSES];
        let bad = Class::Problem(Kind::MalformedJson);
        let mut shown_lines = 0;
        for _ in 0..SHOWN_FILES + 3 {
            let mut seen = [0; CLASSES];
            for _ in 0..2 {
                shown_lines += u64::from(admit_in(&mut tally, Shown::Summarised, bad, &mut seen));
            }
        }
        assert_eq!(shown_lines, 2 * SHOWN_FILES);
        let mut seen = [0; CLASSES];
        assert!(admit_in(
            &mut tally,
            Shown::Summarised,
            Class::Problem(Kind::Cycle),
            &mut seen
        ));
        assert!(admit_in(
            &mut tally,
            Shown::Summarised,
            Class::Note,
            &mut seen
        ));
        assert_eq!(
            summary_of(&tally, "pi-usage"),
            "pi-usage: 3 more files had malformed_json (6 lines), not shown; --verbose prints every one\n"
        );
        // --verbose shows everything, --quiet nothing, and neither changes the tally.
        let before = tally[bad.index()].hidden_lines;
        assert!(admit_in(&mut tally, Shown::Every, bad, &mut [0; CLASSES]));
        assert!(!admit_in(
            &mut tally,
            Shown::Nothing,
            bad,
            &mut [0; CLASSES]
        ));
        assert_eq!(tally[bad.index()].hidden_lines, before);
        let mut one = [Tally::default(); CLASSES];
        one[Class::Note.index()] = Tally {
            files: 6,
            hidden_files: 1,
            hidden_lines: 1,
            ..Tally::default()
        };
        assert_eq!(
            summary_of(&one, "pi-branch"),
            "pi-branch: 1 more file had notes (1 line), not shown; --verbose prints every one\n"
        );
    }

    /// An input shown prints its first SHOWN_LINES lines of a kind; the rest are counted and
    /// summed up, and do not change which inputs are shown.
    #[test]
    fn an_input_prints_its_first_lines_of_a_kind_and_sums_up_the_rest() {
        let mut tally = [Tally::default(); CLASSES];
        let bad = Class::Problem(Kind::MalformedJson);
        let mut seen = [0; CLASSES];
        let shown = (0..SHOWN_LINES + 30)
            .filter(|_| admit_in(&mut tally, Shown::Summarised, bad, &mut seen))
            .count();
        assert_eq!(shown as u64, SHOWN_LINES);
        // Another kind of the same input is shown from its own first line.
        let utf8 = Class::Problem(Kind::InvalidUtf8);
        assert!(admit_in(&mut tally, Shown::Summarised, utf8, &mut seen));
        // A second input with a few lines prints them all.
        let mut seen = [0; CLASSES];
        assert!((0..3).all(|_| admit_in(&mut tally, Shown::Summarised, bad, &mut seen)));
        assert_eq!(
            summary_of(&tally, "pi-replay"),
            format!("pi-replay: 1 file had 30 more lines of malformed_json than the {SHOWN_LINES} shown; --verbose prints every one\n")
        );
        assert!(admit_in(
            &mut tally,
            Shown::Every,
            bad,
            &mut [SHOWN_LINES * 2; CLASSES]
        ));
    }

    #[test]
    fn sanitize_escapes_terminal_controls() {
        assert_eq!(
            sanitize("a\u{1b}[31mb\u{9b}c\n"),
            "a\\u{1b}[31mb\\u{9b}c\\n"
        );
        assert_eq!(sanitize("plain é"), "plain é");
    }

    /// Issue 19, item 9: invisible and bidirectional characters reach no terminal raw.
    #[test]
    fn sanitize_escapes_invisible_and_bidirectional_characters() {
        for c in [
            '\u{202e}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200b}',
            '\u{2028}',
            '\u{2029}',
            '\u{feff}',
            '\u{061c}',
            '\u{00ad}',
            '\u{e0041}',
            '\u{200e}',
            '\u{2060}',
        ] {
            let s = format!("/home/u/{c}terces");
            assert_eq!(
                sanitize(&s),
                format!("/home/u/\\u{{{:x}}}terces", c as u32),
                "U+{:04X}",
                c as u32
            );
        }
        // Visible text outside those ranges is left alone.
        assert_eq!(
            sanitize("日本語 ☃ \u{2027} \u{2030}"),
            "日本語 ☃ \u{2027} \u{2030}"
        );
    }
}
