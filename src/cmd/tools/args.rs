//! pi-tools' command line: its options, the filters they set, and the man page's prose (the
//! prose itself is in `man/*.txt`).

use crate::cli::{Inputs, ManPage};
use clap::{Parser, ValueEnum};

pub const MAN: ManPage = ManPage {
    name: "pi-tools",
    summary: "join every tool call in Pi sessions to its result",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        ("pi-tools session.jsonl", "On a terminal: a table of the calls and a summary per tool."),
        ("pi-tools session.jsonl | jq -r 'select(.status==\"error\") | [.name, .evidence] | @tsv'", "Which calls failed, and why."),
        ("pi-branch session.jsonl | pi-tools --errors", "Failed calls of the kept conversation only."),
        ("pi-tools --no-content --name bash ~/.pi/agent/sessions/*/*.jsonl | jq -s 'group_by(.status) | map({status: .[0].status, n: length})'", "Bash outcomes across sessions, without reading anyone's output."),
        ("pi-tools --max-text 200 --status no_result session.jsonl", "Calls that never got a result."),
        ("pi-tools session.jsonl | jq 'select(.duration_ms > 60000) | {name, duration_ms}'", "Slow tools."),
    ],
};

/// The `status` of a tool_call or tool_result record, as written and as --status takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CallStatus {
    /// A result exists and nothing says the call failed.
    #[value(name = "ok")]
    Ok,
    /// isError, a non-zero exit code, or an aborted turn without a result.
    #[value(name = "error")]
    Error,
    /// No result in the input.
    #[value(name = "no_result")]
    NoResult,
    /// A tool_result whose call is not in the input.
    #[value(name = "orphan")]
    Orphan,
    /// A second tool_result for one call.
    #[value(name = "duplicate")]
    Duplicate,
}

impl CallStatus {
    pub fn name(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::NoResult => "no_result",
            CallStatus::Orphan => "orphan",
            CallStatus::Duplicate => "duplicate",
        }
    }
}

#[derive(Parser, Debug, Clone)]
#[command(
    name = "pi-tools",
    version,
    about = "Join every tool call in Pi sessions to its result: one record per call, with status and evidence.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Leave out arguments, result text and details (sizes, status and exit codes stay).
    #[arg(long)]
    pub no_content: bool,

    /// Cut result text to at most N characters (text_truncated says when it was cut).
    #[arg(long, value_name = "N")]
    pub max_text: Option<usize>,

    /// Only records of the tool named NAME (repeatable: any of them).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,

    /// Only records with this status (repeatable: any of them).
    #[arg(long = "status", value_enum, value_name = "STATUS")]
    pub statuses: Vec<CallStatus>,

    /// Only failed calls: the same as --status error.
    #[arg(long)]
    pub errors: bool,

    /// Print the calls as tables for a person (the default when stdout is a terminal): per
    /// session a row per call, then a summary per tool name.
    #[arg(long, conflicts_with = "json")]
    pub table: bool,

    /// Print JSON Lines even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// Whether a record of the tool `name` with `status` passes the filters.
    pub(super) fn wanted(&self, name: Option<&str>, status: CallStatus) -> bool {
        let status_ok = (self.statuses.is_empty() && !self.errors)
            || self.statuses.contains(&status)
            || (self.errors && status == CallStatus::Error);
        status_ok && self.name_wanted(name)
    }

    /// Whether a call of this name can be written at all (else its payload need not be kept).
    pub(super) fn name_wanted(&self, name: Option<&str>) -> bool {
        self.names.is_empty() || name.is_some_and(|n| self.names.iter().any(|w| w == n))
    }
}
