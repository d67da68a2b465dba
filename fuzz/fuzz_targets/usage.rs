//! pi-usage, per session, grouped with totals, as a table and as a context series, never panics
//! or hangs on any input.
#![no_main]

use pi_jsonl::tool::Tool;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::cmd::usage;
use std::sync::OnceLock;

const MODELS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/models/models.json"
);

fn args() -> &'static [usage::Args] {
    static ARGS: OnceLock<Vec<usage::Args>> = OnceLock::new();
    ARGS.get_or_init(|| {
        [
            &["pi-usage", "--json"][..],
            &[
                "pi-usage",
                "--json",
                "--by",
                "day,model,week,month,project,session",
                "--tz",
                "+05:30",
                "--total",
            ],
            &[
                "pi-usage",
                "--table",
                "--no-dedup",
                "--by",
                "provider",
                "--total",
            ],
            &["pi-usage", "--context", "--models", MODELS],
        ]
        .iter()
        .map(|a| usage::Args::try_parse_from(*a).unwrap())
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    for a in args() {
        let mut out = Out::held();
        let mut d = Diags::new("pi-usage", "<fuzz>", false);
        let _ = usage::Usage::run_bytes(a, data, &mut out, &mut d);
    }
});
