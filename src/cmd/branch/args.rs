//! pi-branch's command line and the prose of its man page (the prose is in `man/*.txt`).

use crate::cli::{Inputs, ManPage};
use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "pi-branch",
    version,
    about = "Keep the active branch of Pi sessions: the header and the leaf's parent chain, byte for byte.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Print one `branch_info` record per session instead of its entries.
    #[arg(long, conflicts_with_all = ["leaves", "tree"])]
    pub info: bool,

    /// Start the branch at the entry with this id instead of the last entry.
    #[arg(long, value_name = "ID", conflicts_with = "label")]
    pub leaf: Option<String>,

    /// Start the branch at the entry this label names (labels resolve as in Pi: the latest
    /// `label` entry for a target wins; an empty or absent label clears it).
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,

    /// Print one `leaf` record per leaf of each session's tree instead of entries.
    #[arg(long, conflicts_with_all = ["tree", "leaf", "label"])]
    pub leaves: bool,

    /// With --leaves: add the last user text on each leaf's branch (session text is private,
    /// so it is opt-in).
    #[arg(long, requires = "leaves")]
    pub preview: bool,

    /// With --preview: keep at most N characters of the text.
    #[arg(long, value_name = "N", default_value_t = 80, requires = "preview")]
    pub preview_chars: usize,

    /// Draw each session's tree for a person: the active path marked, labels shown, long
    /// linear runs folded.
    #[arg(long)]
    pub tree: bool,

    /// Print the active branch as an outline for a person, one row per entry (the default
    /// when stdout is a terminal).
    #[arg(long, conflicts_with_all = ["info", "leaves", "tree", "json"])]
    pub outline: bool,

    /// Print the session lines even when stdout is a terminal.
    #[arg(long, visible_alias = "jsonl", conflicts_with_all = ["tree"])]
    pub json: bool,

    /// With --tree: fold linear runs longer than N entries (0 never folds).
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub fold: usize,
}

pub const MAN: ManPage = ManPage {
    name: "pi-branch",
    summary: "keep the active branch of Pi session files",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        (
            "pi-branch session.jsonl",
            "On a terminal: the conversation Pi would resume, one row per entry.",
        ),
        (
            "pi-branch session.jsonl | pi-usage",
            "What the kept conversation cost.",
        ),
        (
            "pi-branch --info ~/.pi/agent/sessions/*/*.jsonl",
            "How much of each session is abandoned.",
        ),
        (
            "pi-branch --tree session.jsonl | less -R",
            "Look at the shape of a session.",
        ),
        (
            "pi-branch --label before-refactor session.jsonl > old.jsonl",
            "The conversation as it was at a labelled entry.",
        ),
        (
            "pi-branch --leaves session.jsonl | jq -r 'select(.active|not).entry'",
            "The ids of abandoned leaves.",
        ),
    ],
};
