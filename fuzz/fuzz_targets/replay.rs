//! pi-replay, in each format and with its switches, never panics or hangs on any input.
#![no_main]

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::cmd::replay;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::tool::Tool;

fuzz_target!(|data: &[u8]| {
    for args in [
        &["pi-replay", "--format", "html", "--branches"][..],
        &["pi-replay", "--format", "md", "--redact", "--max-text", "10"],
        &["pi-replay", "--format", "text", "--no-thinking", "--no-tool-output"],
    ] {
        let a = replay::Args::try_parse_from(args).unwrap();
        let mut out = Out::held();
        let mut d = Diags::new("pi-replay", "<fuzz>", false);
        let _ = replay::Replay::run_bytes(&a, data, &mut out, &mut d);
    }
});
