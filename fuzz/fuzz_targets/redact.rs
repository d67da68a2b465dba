//! pi-redact, in each mode, never panics or hangs on any input; and kept text written from
//! its input as written is what masking the whole text and escaping it again writes.
#![no_main]

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::cmd::redact;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::tool::Tool;

fuzz_target!(|data: &[u8]| {
    redact::check_written(data);
    for args in [
        &["pi-redact"][..],
        &["pi-redact", "--keep-text"],
        &["pi-redact", "--rename-ids", "--shift-time=-1d", "--no-check"],
    ] {
        let a = redact::Args::try_parse_from(args).unwrap();
        let mut out = Out::held();
        let mut d = Diags::new("pi-redact", "<fuzz>", false);
        let _ = redact::Redact::run_bytes(&a, data, &mut out, &mut d);
    }
});
