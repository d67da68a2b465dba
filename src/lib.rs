//! pi-jsonl: fast, composable filters for the session logs of the Pi coding agent.
//!
//! The library holds what every tool shares: a validating JSON scanner ([`json`]), a line
//! splitter ([`lines`]), the session reader ([`reader`]), diagnostics ([`diag`]), output
//! ([`output`]), the input driver ([`input`]) and the shared command line ([`cli`]). Each tool
//! is one module with its `Args` and `run`; the binaries in `bin/` only call `run`.

pub mod cli;
pub mod diag;
pub mod input;
pub mod json;
pub mod lines;
pub mod mapped;
pub mod model;
pub mod output;
pub mod reader;

#[doc(hidden)]
pub mod gen;

pub mod branch;
mod branch_tree;

/// Every tool's man page, rendered (name, roff text).
pub fn man_pages() -> Vec<(&'static str, String)> {
    vec![("pi-branch", branch::man())]
}
