//! pi-usage's command line and man page: the options, the grouping dimensions, the `--tz`
//! zone, and the prose of the man page (its long texts in `man/`).

use super::range::{self, Bound};
use crate::calendar::Zone;
use crate::cli::{Inputs, ManPage};
use crate::models_json;
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

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

    /// Count only calls made on or after DATE: a day in the --tz zone (`2026-03-01`, or
    /// `20260301` as ccusage writes it) or a timestamp with its zone (`2026-03-01T09:30:00Z`).
    /// Calls with no known time are then left out.
    #[arg(long, value_name = "DATE", value_parser = range::parse_bound)]
    pub since: Option<Bound>,

    /// Count only calls made on or before DATE (a whole day when DATE is a day), as --since.
    #[arg(long, value_name = "DATE", value_parser = range::parse_bound)]
    pub until: Option<Bound>,

    /// Count every billed line, repeats included (by default a call repeated in the input,
    /// as in a fork or a sub-agent transcript, counts once).
    #[arg(long)]
    pub no_dedup: bool,

    /// Print one `context` record per assistant message instead: recorded context size,
    /// configured context window, fill ratio, inferred context drops.
    #[arg(long, conflicts_with_all = ["by", "total", "no_dedup", "since", "until"])]
    pub context: bool,

    /// Print one `usage_call` record per billed call instead of sums: where it was recorded,
    /// its model, source, tokens, cost and identity, and whether it repeats a call read
    /// before (the record a SQL engine reduces; summing those that are no repeats by any key
    /// gives the `--by` groups).
    #[arg(long, conflicts_with_all = ["by", "total", "table", "no_dedup", "context", "since", "until"])]
    pub calls: bool,

    /// With --context: the models.json to read context windows from (default:
    /// $PI_CODING_AGENT_DIR/models.json, else ~/.pi/agent/models.json).
    #[arg(long, value_name = "FILE", requires = "context")]
    pub models: Option<PathBuf>,

    /// Print an aligned table for a person (the default when stdout is a terminal); with
    /// --context, one row per assistant message with a bar of its context.
    #[arg(long, conflicts_with = "json")]
    pub table: bool,

    /// Print JSON Lines even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub cache: crate::cache::CacheArgs,
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
    /// Whether the dimension is a property of a whole session (its groups are known from the
    /// header, before any call).
    pub fn session_level(self) -> bool {
        matches!(self, Dim::Session | Dim::Project)
    }
    /// Whether the dimension is a calendar bucket of the call's time.
    pub fn timed(self) -> bool {
        matches!(self, Dim::Day | Dim::Week | Dim::Month)
    }
}

/// A parsed `--tz`, kept with its text for messages.
#[derive(Debug, Clone)]
pub struct ZoneArg(pub Zone);

fn parse_zone(s: &str) -> Result<ZoneArg, String> {
    Zone::parse(s).map(ZoneArg)
}

/// The man page's prose; the long texts are in `man/`, the context-window rule is the one
/// pi-compactions states too.
pub const MAN: ManPage = ManPage {
    name: "pi-usage",
    summary: "sum the tokens and cost recorded in Pi session files",
    description: concat!(
        include_str!("man/description.txt"),
        "\n\n",
        models_json::window_rule_text!(),
        "\n\n",
        include_str!("man/comparison.txt")
    ),
    output: include_str!("man/output.txt"),
    environment: concat!(
        include_str!("man/environment.txt"),
        "\n\n",
        crate::view::view_environment_text!()
    ),
    examples: &[
        ("pi-usage ~/.pi/agent/sessions/*/*.jsonl", "Tokens and cost per session, as a table on a terminal."),
        ("pi-usage --total --json ~/.pi/agent/sessions/*/*.jsonl | jq .total.cost", "All recorded cost, forks and sub-agent repeats counted once."),
        ("pi-usage --by day,model --tz Europe/Berlin ~/.pi/agent/sessions/*/*.jsonl", "Daily usage per model, days in Berlin time."),
        ("pi-branch s.jsonl | pi-usage --total", "What the kept conversation cost (abandoned branches left out)."),
        ("pi-usage --context s.jsonl | jq -r '[.line, .recorded_context_tokens, .configured_context_window] | @tsv'", "A context-size series to chart."),
        ("pi-sessions --paths0 | pi-usage --files0-from - --by month --total", "Monthly totals over every session file, in one run."),
    ],
};

/// The dimensions in effect: `--by` without repeats, provider added before model, session
/// when nothing else is asked for.
pub fn effective_dims(args: &Args) -> Vec<Dim> {
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
