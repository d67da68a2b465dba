//! The integration tests, one test binary: each module below is one file beside this one.

mod util;

mod bad_input;
mod branch;
mod cache;
mod compactions;
mod compactions_pi1;
mod compactions_truth;
mod directories;
mod docs;
mod files0;
mod fragments;
mod mapped;
mod omp;
mod parallel;
mod pi16;
mod properties;
mod quiet;
mod records;
mod redact;
mod replay;
mod run_bytes;
mod sessions;
mod stdin;
mod tool_properties;
mod tools;
mod tools_pi1;
mod usage;
mod usage_calls;
mod usage_human;
mod usage_pi1;
mod views;
mod windows;
mod words;
