//! pi-jsonl: fast, composable filters for the session logs of the Pi coding agent.
//!
//! The data path is read → classify → tool → write (docs/ARCHITECTURE.md): [`input`] opens
//! each input once and runs a tool over many in parallel; [`reader`] turns lines, validated by
//! the scanner crate ([`json`], [`lines`]), into sessions; each tool in [`cmd`] is a
//! [`tool::Tool`] whose visitor keeps per-session state and writes typed [`record`]s through
//! [`output`]; problems go to [`diag`]. Beside them: Pi's message members ([`message`]),
//! context windows (models.json, [`models_json`]; Pi's catalogue, [`models_builtin`]), session discovery ([`discover`]), times and
//! calendar buckets ([`time`], [`calendar`]), hash tables ([`hash`]), the queue of records
//! waiting for their turn ([`ordered`]), locks ([`sync`]) and the shared command line and man
//! pages ([`cli`]).
//! The binaries in `bin/` only call [`tool::process_main`].

pub use pi_jsonl_scan::{json, lines};

pub mod cache;
pub mod calendar;
pub mod cli;
pub mod cmd;
pub mod diag;
pub mod discover;
pub mod hash;
pub mod input;
pub mod kinds;
pub mod message;
pub mod models_builtin;
pub mod models_json;
pub mod ordered;
pub mod output;
pub mod reader;
pub mod record;
pub mod sync;
pub mod time;
pub mod tool;
pub mod view;

use cmd::{
    branch::Branch, compactions::Compactions, redact::Redact, replay::Replay, sessions::Sessions,
    tools::Tools, usage::Usage,
};
use tool::man;

/// Every record type the tools write, with its fields (the docs test compares them with
/// docs/FORMAT.md).
pub fn records() -> Vec<record::Described> {
    [
        cmd::branch::RECORDS,
        cmd::compactions::RECORDS,
        cmd::redact::RECORDS,
        cmd::replay::RECORDS,
        cmd::sessions::RECORDS,
        cmd::tools::RECORDS,
        cmd::usage::RECORDS,
    ]
    .concat()
}

/// Every tool's man page, rendered (name, roff text).
pub fn man_pages() -> Vec<(&'static str, String)> {
    vec![
        ("pi-branch", man::<Branch>()),
        ("pi-compactions", man::<Compactions>()),
        ("pi-redact", man::<Redact>()),
        ("pi-replay", man::<Replay>()),
        ("pi-sessions", man::<Sessions>()),
        ("pi-tools", man::<Tools>()),
        ("pi-usage", man::<Usage>()),
    ]
}
