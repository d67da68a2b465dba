//! pi-replay's command line and man page (its prose in `man/`).

use crate::cli::{Inputs, ManPage};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "pi-replay",
    version,
    about = "Render Pi sessions for a person to read: one self-contained HTML page, Markdown, or text for a terminal.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Output format: `html` (one self-contained page), `md` (GitHub-flavoured Markdown) or
    /// `text` (for a terminal, coloured as --color says). Default: `text` when stdout
    /// is a terminal, `html` otherwise.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Show the abandoned branches too, each folded after the entry of the active branch it
    /// left from (each from there to its leaf, as `pi-branch --leaf` gives it).
    #[arg(long)]
    pub branches: bool,

    /// Leave out thinking blocks (a line says how many were left out).
    #[arg(long)]
    pub no_thinking: bool,

    /// Leave out tool outputs and user-command outputs (their sizes are still shown).
    #[arg(long)]
    pub no_tool_output: bool,

    /// Render the session as `pi-redact` writes it (no option): every prompt, text, output
    /// and argument value replaced by a placeholder of its kind and size, paths given
    /// pseudonyms, secrets masked; the tree, tools, numbers and times kept. The file's name
    /// is not shown.
    #[arg(long)]
    pub redact: bool,

    /// Cut each text shown as it is to N bytes (at a character boundary): tool outputs and
    /// arguments, user commands and their outputs, extension data, raw entries. Each cut says
    /// so, with the full size; with 0 only the sizes are shown.
    #[arg(long, value_name = "N", default_value_t = 20000)]
    pub max_text: usize,

    /// Write one HTML page per input into DIR (named after the input file, `.jsonl` replaced
    /// by `.html`; `index-page.html` for `index.jsonl`, `stdin.html` for stdin) and rewrite
    /// DIR/index.html to list every page in DIR, instead of writing to stdout. Pages and index
    /// are replaced atomically, so several pi-replay processes may write into one DIR at once
    /// (a page of an earlier run is replaced); an input whose page would have the name of an
    /// earlier input's in the same run (`a/s.jsonl`, `b/s.jsonl`) is reported, not written.
    #[arg(long, value_name = "DIR", conflicts_with = "format")]
    pub out_dir: Option<PathBuf>,

    /// The models.json to read context windows from, for the context chart (default:
    /// $PI_CODING_AGENT_DIR/models.json, else ~/.pi/agent/models.json).
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
}

/// An output format.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Md,
    Text,
}

pub const MAN: ManPage = ManPage {
    name: "pi-replay",
    summary: "render Pi sessions as HTML, Markdown or terminal text",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        (
            "pi-replay s.jsonl > s.html",
            "The active branch as one HTML page that makes no network request.",
        ),
        (
            "pi-replay --format md s.jsonl > s.md",
            "The same as GitHub-flavoured Markdown.",
        ),
        (
            "pi-replay --format text --color always s.jsonl | less -R",
            "Text with colour, to page through (into a pipe, pi-replay writes HTML unless told).",
        ),
        (
            "pi-branch --leaf ID s.jsonl | pi-replay --format md",
            "Another branch, chosen with pi-branch.",
        ),
        (
            "pi-replay --no-thinking --no-tool-output --format md s.jsonl",
            "A shorter transcript to share.",
        ),
    ],
};
