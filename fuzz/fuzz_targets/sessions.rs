//! pi-sessions' description of one file (discover::describe_bytes and the record, path and
//! table writers) never panics or hangs on any file content.
#![no_main]

use pi_jsonl::tool::Tool;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::cmd::sessions;
use std::sync::OnceLock;

fn args() -> &'static [sessions::Args] {
    static ARGS: OnceLock<Vec<sessions::Args>> = OnceLock::new();
    ARGS.get_or_init(|| {
        [
            &["pi-sessions", "--json", "--prompts", "--prompt-chars", "7"][..],
            &["pi-sessions", "--table"],
            &[
                "pi-sessions",
                "--paths0",
                "--since",
                "2026-01-01",
                "--until",
                "2026-12-31",
            ],
        ]
        .iter()
        .map(|a| sessions::Args::try_parse_from(*a).unwrap())
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    for a in args() {
        let mut out = Out::held();
        let mut d = Diags::new("pi-sessions", "<fuzz>", false);
        let _ = sessions::Sessions::run_bytes(a, data, &mut out, &mut d);
    }
});
