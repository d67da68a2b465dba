//! The integration tests, one test binary: each module below is one file beside this one.

mod util;

mod bad_input;
mod branch;
mod compactions;
mod directories;
mod docs;
mod fragments;
mod mapped;
mod omp;
mod parallel;
mod properties;
mod records;
mod run_bytes;
mod sessions;
mod tool_properties;
mod tools;
mod usage;
