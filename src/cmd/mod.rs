//! One folder per tool: its command line, man page, `run` and `run_bytes`.

pub mod branch;
pub mod compactions;
pub mod redact;
pub mod replay;
pub mod sessions;
pub mod tools;
pub mod usage;
