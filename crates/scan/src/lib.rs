//! The validating JSON scanner and the line splitter every pi-jsonl tool reads through.

pub mod json;
pub mod lines;
