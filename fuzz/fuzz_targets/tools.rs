//! pi-tools, with and without content and filters, never panics or hangs on any input.
#![no_main]

use pi_jsonl::tool::Tool;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::cmd::tools;
use std::sync::OnceLock;

fn args() -> &'static [tools::Args] {
    static ARGS: OnceLock<Vec<tools::Args>> = OnceLock::new();
    ARGS.get_or_init(|| {
        [
            &["pi-tools"][..],
            &["pi-tools", "--no-content"],
            &["pi-tools", "--max-text", "5", "--errors", "--name", "bash"],
            &["pi-tools", "--table"],
        ]
        .iter()
        .map(|a| tools::Args::try_parse_from(*a).unwrap())
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    for a in args() {
        let mut out = Out::held();
        let mut d = Diags::new("pi-tools", "<fuzz>", false);
        let _ = tools::Tools::run_bytes(a, data, &mut out, &mut d);
    }
});
