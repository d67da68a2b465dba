//! Inputs: what a tool is given ([`Source`]), how it is opened and read ([`open`]: the one
//! place that chooses between a map, a whole read and a stream), and the driver that runs a
//! tool over many inputs in parallel with output in argument order ([`driver`]).

pub mod chunked;
pub mod chunks;
pub mod driver;
pub mod early;
mod kept;
pub mod mapped;
pub mod open;

pub use driver::{exit_status, run, run_in_turn, run_one_at_a_time, run_one_at_a_time_early, Turn};
pub use open::{Contents, Opened};

use std::ffi::OsString;
use std::path::PathBuf;

/// One input as given on the command line: a path, or stdin (`-` or no FILE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Stdin,
    Path(PathBuf),
}

impl Source {
    pub fn from_args(files: &[OsString]) -> Vec<Source> {
        if files.is_empty() {
            return vec![Source::Stdin];
        }
        files
            .iter()
            .map(|f| {
                if f == "-" {
                    Source::Stdin
                } else {
                    Source::Path(PathBuf::from(f))
                }
            })
            .collect()
    }

    /// The name used in diagnostics and in records' `file` field.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::Path(p) => p.to_string_lossy().into_owned(),
        }
    }

    pub fn is_stdin(&self) -> bool {
        matches!(self, Source::Stdin)
    }
}
