//! What every tool shares on its command line, and the man page generator.
//!
//! The man pages in `man/` are rendered from the same clap definitions as `--help`, plus the
//! prose in each tool's [`ManPage`]; `tests/docs.rs` fails when a committed page is stale
//! (`PI_JSONL_BLESS=1 cargo test --test tests docs::man_pages` rewrites them).

use clap::Args;
use std::ffi::OsString;

/// The input options every tool takes.
#[derive(Args, Debug, Clone)]
pub struct Inputs {
    /// Session files to read; `-` or none means stdin (none on a terminal: the user's sessions,
    /// see ENVIRONMENT below). A directory stands for the session files under it, found as
    /// pi-sessions finds them, in path order.
    #[arg(value_name = "FILE")]
    pub files: Vec<OsString>,

    /// Read the input files' names from LIST (`-`: stdin), each ended by a NUL byte, as
    /// `pi-sessions --paths0` and `find -print0` write them: any number of files in one run,
    /// where `xargs` splits a long list into several runs, each with its own totals. A name
    /// is read as a FILE argument is (a directory, `-` for stdin unless the list is read from
    /// it); an empty name is reported. Not with FILE arguments.
    #[arg(long, value_name = "LIST", conflicts_with = "files")]
    pub files0_from: Option<OsString>,

    /// Use N threads (default: one per CPU): at most N files are read at once (never more than
    /// 8 per CPU, or 64 on a small machine, nor so many that the open-file limit is reached),
    /// and a file of 8 MiB or more is read on the CPUs the others leave idle (its lines
    /// validated ahead in 256 KiB chunks); the output is the same with any N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

impl Inputs {
    /// The inputs to read: the FILE arguments (a directory replaced by the session files under
    /// it: [`crate::discover::expand_directories`]), or stdin when there are none. With no FILE and
    /// stdin a terminal (nothing is piped in), every session pi-sessions finds instead: see
    /// [`crate::discover::default_sources`] (it says on stderr how many files it reads).
    pub fn sources(&self) -> Vec<crate::input::Source> {
        self.sources_known(None)
    }

    /// [`Inputs::sources`], the files found under a directory classified by `known` when it
    /// knows them (a tool's cache: [`crate::discover::Known`]) rather than opened to be.
    pub fn sources_known(
        &self,
        known: Option<crate::discover::Known<'_>>,
    ) -> Vec<crate::input::Source> {
        let sources = match &self.files0_from {
            Some(list) => files0(list),
            None if self.files.is_empty() && crate::discover::stdin_is_terminal() => {
                return crate::discover::default_sources(tool_name(), known);
            }
            None => crate::input::Source::from_args(&self.files),
        };
        let threads = self.threads();
        let mut sources = crate::discover::expand_directories(tool_name(), sources, threads, known);
        let stdins = sources.iter().filter(|s| s.is_stdin()).count();
        if stdins > 1 {
            // Stdin can be read once: the later `-` would read nothing, silently.
            crate::diag::report_global(
                tool_name(),
                format!("stdin (-) is given {stdins} times; it is read once, at the first"),
            );
            let mut first = true;
            sources.retain(|s| !s.is_stdin() || std::mem::take(&mut first));
        }
        sources
    }
    pub fn threads(&self) -> Option<usize> {
        self.threads.map(usize::from)
    }
}

/// The inputs `--files0-from LIST` names: each name ended by a NUL byte (the last may not be),
/// an empty list none. An empty name, and `-` in a list read from stdin, are reported
/// (`tool: LIST:N: …`, N the name's place in the list) and skipped; a list that cannot be
/// read is reported and names nothing.
fn files0(list: &std::ffi::OsStr) -> Vec<crate::input::Source> {
    use crate::input::Source;
    use std::io::Read;
    use std::os::unix::ffi::OsStringExt;
    let from_stdin = list == "-";
    let shown = if from_stdin {
        "<stdin>".into()
    } else {
        list.to_string_lossy()
    };
    let read = if from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    } else {
        std::fs::read(list)
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(e) => {
            crate::diag::report_global(tool_name(), format!("{shown}: {e}"));
            return Vec::new();
        }
    };
    let names = bytes.strip_suffix(b"\0").unwrap_or(&bytes);
    if names.is_empty() {
        return Vec::new();
    }
    let mut sources = Vec::new();
    for (i, name) in names.split(|&c| c == 0).enumerate() {
        let source = match name {
            b"" => Err("an empty file name"),
            b"-" if from_stdin => Err("`-` (stdin) named in a list read from stdin"),
            b"-" => Ok(Source::Stdin),
            _ => Ok(Source::Path(OsString::from_vec(name.to_vec()).into())),
        };
        match source {
            Ok(source) => sources.push(source),
            Err(problem) => {
                let at = i + 1;
                crate::diag::report_global(tool_name(), format!("{shown}:{at}: {problem}"));
            }
        }
    }
    sources
}

/// The name the tool was run as (for messages): the file name of its first argument, as
/// [`set_tool_name`] was given it, else as the process's arguments have it.
fn tool_name() -> &'static str {
    TOOL_NAME.get_or_init(|| name_of(std::env::args_os().next().as_deref()))
}

static TOOL_NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Names the tool from `argv0`, the process's first argument (before anything asks for the
/// name; a later call changes nothing).
pub fn set_tool_name(argv0: &std::ffi::OsStr) {
    let _ = TOOL_NAME.set(name_of(Some(argv0)));
}

fn name_of(argv0: Option<&std::ffi::OsStr>) -> String {
    argv0
        .and_then(|p| std::path::Path::new(p).file_name())
        .map_or_else(|| "pi-jsonl".into(), |n| n.to_string_lossy().into_owned())
}

/// Appended to the ENVIRONMENT section of every tool that reads sessions (all but
/// pi-sessions): how a tool given no FILE on a terminal finds the user's sessions.
pub const DEFAULT_INPUTS: &str = "Given no FILE while its stdin is a terminal (nothing piped in), TOOL reads every session file that pi-sessions finds: all .jsonl files under the sessions directory and oh-my-pi's stores (~/.omp/agent/sessions, ~/.omp/profiles/NAME/agent/sessions, those that exist), nested sub-agent sessions included, except files that are empty or are not Pi sessions (status empty and not_session in pi-sessions). It says on stderr how many files it reads and from where. Piped stdin keeps its meaning: `cat s.jsonl | TOOL` reads stdin.\n\n\
A FILE that is a directory stands for the session files under it, found and chosen the same way, in path order (a file found twice is read once); a directory with none is said in a note (not a problem: the exit status stays 0).\n\n\
Input without a session header (the output of tail, grep, jq or sed) is read as a fragment when its records are Pi entries (a string type and timestamp, and an id and parentId, or one of the id-less entries of a v1 log): TOOL gives its result over the lines given, says so in one note on stderr, and exits 0. Input none of whose records is a Pi entry is not a session (reported, exit 2). oh-my-pi files, which start with a title slot before the header, are read as sessions. See docs/FORMAT.md, \"Reading input\".\n\n\
The sessions directory is PI_CODING_AGENT_SESSION_DIR when set and not empty; else PI_CODING_AGENT_DIR/sessions; else ~/.pi/agent/sessions (HOME). A leading ~/ in the two variables is expanded with HOME.\n\n\
PI_JSONL_ASSUME_TTY=1 makes TOOL act as if stdin were a terminal; it exists for tests.\n\n\
TMPDIR: with several FILEs, a thread reading an input before the inputs ahead of it are written holds up to 8 MiB of that input's output in memory, then puts the rest in a temporary file without a name (O_TMPFILE) in TMPDIR, else /tmp, and writes it in the input's turn: nothing is left behind, whatever ends the run. Where no such file can be made, the thread waits for the turn instead; the output is the same either way. PI_JSONL_HOLD_MAX=BYTES sets the 8 MiB; it exists for tests.";

/// What `--help` says after the options: the man page's ENVIRONMENT section (with the
/// paragraphs on default inputs for the tools that read sessions), so that `--help` needs no
/// man page; `-h` points to it.
pub fn help_after(page: &ManPage, long: bool) -> String {
    if !long {
        return "Environment variables, and what is read without FILE: --help. The whole manual: --man."
            .into();
    }
    let mut text = String::from("ENVIRONMENT:\n");
    let defaults = DEFAULT_INPUTS.replace("TOOL", page.name);
    let inputs = (page.name != "pi-sessions").then_some(defaults.as_str());
    let paragraphs = page.environment.split("\n\n");
    for p in paragraphs.chain(inputs.into_iter().flat_map(|d| d.split("\n\n"))) {
        let p = p.trim();
        if !p.is_empty() {
            text.push_str(&format!("  {}\n\n", p.replace('\n', " ")));
        }
    }
    text.push_str(
        "EXIT STATUS: 0, or 2 when anything was reported on stderr (--quiet prints nothing, the status stays). The whole manual, with the output and examples: --man.",
    );
    text
}

/// The prose of a man page; options come from clap.
pub struct ManPage {
    pub name: &'static str,
    /// One line, after the name.
    pub summary: &'static str,
    /// Paragraphs separated by blank lines.
    pub description: &'static str,
    pub output: &'static str,
    pub environment: &'static str,
    /// (command, what it does)
    pub examples: &'static [(&'static str, &'static str)],
}

/// The exit status table every tool shares.
pub const EXIT_STATUS: &str = "0: every input was read without a problem or stdout was closed early, as by `head`: closing it ends the run quietly with 0, whatever was reported before it.\n\n\
2: something was reported on stderr (a bad line, an unreadable session, a file that could not be opened, a bad option), unless stdout was closed early (0); \
the run went on and the output holds everything that could be read. A standard output that is not open at all (`>&-`) is \
reported at once, and nothing is read.\n\n\
Diagnostics have the form `TOOL: FILE:LINE: message` (`<stdin>` for standard input; `TOOL: FILE: message` when no line \
applies). Control characters in them are escaped.\n\n\
Repeated diagnostics are summed up: when more than 5 input files report the same kind of problem (the kinds are those \
docs/FORMAT.md lists under \"Diagnostic kinds\": malformed_json, glued_records, missing_parent, ...; notes, such as a fragment's, count as \
one kind), the first 5 files (in argument order) print their lines of that kind, and the later files' lines of that kind \
are replaced by one line at the end of the run: `TOOL: 37 more files had malformed_json (52 lines), not shown; --verbose \
prints every one`. Likewise a file with more than 20 lines of one kind of problem (a file that is not JSON Lines, a \
binary file) prints its first 20, and one line at the end counts the rest: `TOOL: 1 file had 20785 more lines of \
malformed_json than the 20 shown; --verbose prints every one`. --verbose prints every line. --quiet prints none of them, nor notes, nor problems of the run as a \
whole (a missing models.json); they are still counted (in records that count them, such as pi-branch --info). Neither \
option changes the exit status.";

fn roff_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.split('\n') {
        if !out.is_empty() {
            out.push('\n');
        }
        let l = line.replace('\\', "\\e").replace('-', "\\-");
        if l.starts_with('.') || l.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&l);
    }
    out
}

fn paragraphs(out: &mut String, text: &str) {
    for p in text.split("\n\n") {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        out.push_str(".PP\n");
        out.push_str(&roff_escape(p));
        out.push('\n');
    }
}

/// One option of the OPTIONS section: its names and value, then its help, default and
/// possible values.
fn option_entry(m: &mut String, arg: &clap::Arg) {
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("\\fB\\-{s}\\fR"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("\\fB\\-\\-{}\\fR", roff_escape(l)));
    }
    let takes_value = arg
        .get_num_args()
        .map(|n| n.takes_values())
        .unwrap_or(false);
    let value = arg
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let head = if names.is_empty() {
        format!("\\fI{}\\fR...", roff_escape(&value))
    } else if takes_value && !value.is_empty() {
        format!("{} \\fI{}\\fR", names.join(", "), roff_escape(&value))
    } else {
        names.join(", ")
    };
    m.push_str(&format!(".TP\n{head}\n"));
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let help = help.trim();
    m.push_str(&roff_escape(help));
    if !help.is_empty() && !help.ends_with(['.', '!', '?']) {
        m.push('.');
    }
    let defaults: Vec<_> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() && !help.contains("default") {
        m.push_str(&format!(" Default: {}.", roff_escape(&defaults.join(", "))));
    }
    let pv = arg.get_possible_values();
    if takes_value && !pv.is_empty() && !help.contains("one of") {
        let names: Vec<_> = pv.iter().map(|p| p.get_name().to_string()).collect();
        m.push_str(&format!(" One of: {}.", roff_escape(&names.join(", "))));
    }
    m.push('\n');
}

/// Renders the man page of a tool from its clap command and prose.
pub fn render_man(cmd: &clap::Command, page: &ManPage) -> String {
    let mut m = String::new();
    m.push_str(&format!(
        ".TH {} 1 \"\" \"pi-jsonl {}\" \"pi-jsonl manual\"\n",
        page.name.to_uppercase(),
        env!("CARGO_PKG_VERSION")
    ));
    m.push_str(".SH NAME\n");
    m.push_str(&format!(
        "{} \\- {}\n",
        roff_escape(page.name),
        roff_escape(page.summary)
    ));
    // Built, so that every argument knows how many values it takes.
    let mut cmd = cmd.clone();
    cmd.build();
    // The positional argument's name: FILE for the tools that read sessions (they read stdin
    // too), DIR for pi-sessions.
    let positional = cmd
        .get_arguments()
        .find(|a| a.is_positional())
        .and_then(|a| {
            a.get_value_names()
                .and_then(|v| v.first())
                .map(|v| v.to_string())
        });
    let reads_files = positional.as_deref() == Some("FILE");
    m.push_str(".SH SYNOPSIS\n");
    if let Some(name) = positional.as_deref().filter(|_| !reads_files) {
        m.push_str(&format!(
            ".B {}\n[\\fIOPTIONS\\fR] [\\fI{}\\fR...]\n",
            roff_escape(page.name),
            roff_escape(name)
        ));
    } else if reads_files {
        m.push_str(&format!(
            ".B {}\n[\\fIOPTIONS\\fR] [\\fIFILE\\fR...]\n.br\n",
            roff_escape(page.name)
        ));
        m.push_str(&format!(
            "\\fIcommand\\fR | \\fB{}\\fR [\\fIOPTIONS\\fR]\n",
            roff_escape(page.name)
        ));
    } else {
        m.push_str(&format!(
            ".B {}\n[\\fIOPTIONS\\fR]\n",
            roff_escape(page.name)
        ));
    }
    m.push_str(".SH DESCRIPTION\n");
    paragraphs(&mut m, page.description);
    m.push_str(".SH OPTIONS\n");
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        option_entry(&mut m, arg);
    }
    m.push_str(".SH OUTPUT\n");
    paragraphs(&mut m, page.output);
    m.push_str(".SH EXIT STATUS\n");
    paragraphs(&mut m, EXIT_STATUS);
    m.push_str(".SH ENVIRONMENT\n");
    paragraphs(&mut m, page.environment);
    if page.name != "pi-sessions" {
        paragraphs(&mut m, &DEFAULT_INPUTS.replace("TOOL", page.name));
    }
    m.push_str(".SH EXAMPLES\n");
    for (cmd, what) in page.examples {
        m.push_str(&format!(
            // In bold by a font escape, not the `.B` request, whose arguments would lose
            // their double quotes.
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_escape(cmd),
            roff_escape(what)
        ));
    }
    m.push_str(".SH SEE ALSO\n");
    let all = [
        "pi-branch",
        "pi-tools",
        "pi-usage",
        "pi-compactions",
        "pi-sessions",
    ];
    let others: Vec<_> = all
        .iter()
        .filter(|n| **n != page.name)
        .map(|n| format!("\\fB{}\\fR(1)", roff_escape(n)))
        .collect();
    m.push_str(&others.join(", "));
    m.push_str(", \\fBjq\\fR(1). The record formats: docs/FORMAT.md.\n");
    m
}
