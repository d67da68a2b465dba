//! pi-compactions' command line and man page (the prose is in `man/*.txt`).

use crate::cli::{Inputs, ManPage};
use crate::models_json;
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "pi-compactions",
    version,
    about = "Report each compaction of Pi sessions: what Pi recorded, and its trigger with the evidence for it.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Include each summary's text (`summary`). Session text is private, so it is opt-in.
    #[arg(long)]
    pub summary: bool,

    /// Include the file lists of `details` (`read_files`, `modified_files`).
    #[arg(long = "files")]
    pub file_lists: bool,

    /// Also report `branch_summary` entries (the summary Pi writes when leaving a branch).
    #[arg(long)]
    pub branch_summaries: bool,

    /// Also report ordinary assistant errors as `assistant_error` records (normalized kind,
    /// HTTP status, retry attempt; never the error text).
    #[arg(long)]
    pub errors: bool,

    /// Print a table for a person instead of records (the default when stdout is a
    /// terminal): per session a row per compaction or compaction failure, then the counts by
    /// trigger.
    #[arg(long, conflicts_with = "json")]
    pub table: bool,

    /// Print JSON Lines even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,

    /// Read context windows from FILE (Pi's models.json format) instead of
    /// $PI_CODING_AGENT_DIR/models.json or ~/.pi/agent/models.json.
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,

    /// Pi's compaction reserve: a compaction is over the threshold when tokensBefore is
    /// greater than the context window minus N. Default: Pi's own, from its settings.json
    /// (see DESCRIPTION), else 16384.
    #[arg(long, value_name = "N")]
    pub reserve_tokens: Option<u64>,
}

pub const MAN: ManPage = ManPage {
    name: "pi-compactions",
    summary: "report the compactions of Pi sessions, what Pi recorded and why they happened",
    description: concat!(
        include_str!("man/description.txt"),
        "\n\n",
        models_json::window_rule_text!(),
        "\n\n",
        include_str!("man/description-after-windows.txt"),
    ),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        ("pi-compactions session.jsonl | jq '{line, trigger, basis, tokens_before, context_after}'", "Why and how much each compaction saved."),
        ("pi-compactions --table ~/.pi/agent/sessions/*/*.jsonl", "Each compaction of every session as a table: when, why, how much."),
        ("pi-compactions --errors s.jsonl | jq -r 'select(.type==\"assistant_error\").error_kind' | sort | uniq -c", "What kinds of API errors a session hit."),
        ("pi-branch s.jsonl | pi-compactions", "Only the compactions of the kept conversation."),
        ("pi-compactions --summary --files s.jsonl | jq -r '.summary'", "Read the summaries."),
    ],
};
