//! The reader and pi-branch, in every output mode, never panic or hang on any input.
#![no_main]

use pi_jsonl::tool::Tool;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::cmd::branch;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;

fuzz_target!(|data: &[u8]| {
    for args in [&["pi-branch"][..], &["pi-branch", "--info"], &["pi-branch", "--leaves", "--preview"], &["pi-branch", "--tree"], &["pi-branch", "--outline"]] {
        let a = branch::Args::try_parse_from(args).unwrap();
        let mut out = Out::held();
        let mut d = Diags::new("pi-branch", "<fuzz>", false);
        let _ = branch::Branch::run_bytes(&a, data, &mut out, &mut d);
    }
});
