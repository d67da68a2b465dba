//! pi-jsonl: fast, composable filters for the session logs of the Pi coding agent.
//!
//! The library holds what every tool shares: a validating JSON scanner ([`json`]), a line
//! splitter ([`lines`]), the session reader ([`reader`]), diagnostics ([`diag`]), output
//! ([`output`]), hash tables ([`hash`]), the input driver ([`input`]), session discovery ([`discover`]), the shared
//! command line ([`cli`]), instants and calendar arithmetic ([`time`], [`calendar`]), the
//! members of Pi messages ([`model`]) and the context windows of models.json ([`models`]).
//! Each tool is one module with its `Args`, `run` and `run_bytes` (the tool over bytes, for
//! tests and fuzzing); the binaries in `bin/` only call `main`.

pub mod calendar;
pub mod cli;
pub mod diag;
pub mod discover;
pub mod hash;
pub mod input;
pub mod json;
pub mod lines;
pub mod mapped;
pub mod model;
pub mod models;
pub mod output;
pub mod reader;
pub mod time;

#[doc(hidden)]
pub mod gen;

pub mod branch;
mod branch_tree;
pub mod compactions;
pub mod sessions;
pub mod tools;
pub mod usage;
mod usage_table;

/// Every tool's man page, rendered (name, roff text).
pub fn man_pages() -> Vec<(&'static str, String)> {
    vec![
        ("pi-branch", branch::man()),
        ("pi-compactions", compactions::man()),
        ("pi-sessions", sessions::man()),
        ("pi-tools", tools::man()),
        ("pi-usage", usage::man()),
    ]
}
