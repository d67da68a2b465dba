//! pi-jsonl: fast, composable filters for the session logs of the Pi coding agent.
//!
//! The library holds what every tool shares: a validating JSON scanner ([`json`]), a line
//! splitter ([`lines`]), the session reader ([`reader`]), diagnostics ([`diag`]), output
//! ([`output`]), hash tables ([`hash`]), the input driver ([`input`]), session discovery ([`discover`]), the shared
//! command line ([`cli`]), instants and calendar arithmetic ([`time`], [`calendar`]), the
//! members of Pi messages ([`model`]) and the context windows of models.json ([`models`]).
//! Each tool is one module with its `Args`, `run` and `run_bytes` (the tool over bytes, for
//! tests and fuzzing); the binaries in `bin/` only call `main`.

pub use pi_jsonl_scan::{json, lines};

pub mod calendar;
pub mod cli;
pub mod cmd;
pub mod diag;
pub mod discover;
pub mod hash;
pub mod input;
pub use input::mapped;
pub mod model;
pub mod models;
pub mod ordered;
pub mod output;
pub mod reader;
pub mod record;
pub mod time;
pub mod tool;

use cmd::{
    branch::Branch, compactions::Compactions, sessions::Sessions, tools::Tools, usage::Usage,
};
use tool::man;

/// Every tool's man page, rendered (name, roff text).
pub fn man_pages() -> Vec<(&'static str, String)> {
    vec![
        ("pi-branch", man::<Branch>()),
        ("pi-compactions", man::<Compactions>()),
        ("pi-sessions", man::<Sessions>()),
        ("pi-tools", man::<Tools>()),
        ("pi-usage", man::<Usage>()),
    ]
}
