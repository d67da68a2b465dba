//! The integration tests, one test binary: each module below is one file beside this one.

mod util;

mod bad_input;
mod branch;
mod compactions;
mod docs;
mod mapped;
mod parallel;
mod pi16;
mod properties;
mod records;
mod redact;
mod run_bytes;
mod sessions;
mod tool_properties;
mod tools;
mod tools_pi1;
mod usage;
mod usage_pi1;
