//! pi-redact (see its man page). `process_main` replaces Rust's start-up: it treats a closed
//! stdout as an error instead of letting it swallow the output.
#![no_main]

#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    pi_jsonl::tool::process_main::<pi_jsonl::cmd::redact::Redact>()
}
