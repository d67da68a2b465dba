//! pi-compactions, plain, with every option and as a table, never panics or hangs on any input.
#![no_main]

use pi_jsonl::tool::Tool;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::cmd::compactions;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use std::sync::OnceLock;

const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/models.json");

fn args() -> &'static [compactions::Args] {
    static ARGS: OnceLock<Vec<compactions::Args>> = OnceLock::new();
    ARGS.get_or_init(|| {
        [
            &["pi-compactions", "--models", MODELS][..],
            &[
                "pi-compactions",
                "--summary",
                "--files",
                "--branch-summaries",
                "--errors",
                "--reserve-tokens",
                "0",
                "--models",
                MODELS,
            ],
            &["pi-compactions", "--table", "--models", MODELS],
        ]
        .iter()
        .map(|a| compactions::Args::try_parse_from(*a).unwrap())
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    for a in args() {
        let mut out = Out::held();
        let mut d = Diags::new("pi-compactions", "<fuzz>", false);
        let _ = compactions::Compactions::run_bytes(a, data, &mut out, &mut d);
    }
});
