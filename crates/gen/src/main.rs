//! Writes deterministic, realistic Pi sessions for benchmarks.
//!
//!     cargo run --release -p pi-jsonl-gen -- --out DIR [--big-mb N] [--small-files N]
//!         [--many-entries N] [--seed S]
//!
//! Writes `DIR/big.jsonl` (one v3 session of about N MB, branches and compactions included),
//! `DIR/sessions/--home-dev-projK--/<time>_<uuid>.jsonl` (small sessions of 2 KB to 512 KB, one
//! in ten v1, laid out as Pi's sessions directory) and `DIR/many-entries.jsonl` (a session of
//! N tiny entries, to measure memory per entry). The same seed gives the same bytes.

use pi_jsonl_gen::{iso, Gen, Shape};
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut out: Option<PathBuf> = None;
    let (mut big_mb, mut small, mut many, mut seed) = (0u64, 0u64, 0u64, 1u64);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> Option<u64> {
            let v = args.next().and_then(|v| v.parse().ok());
            if v.is_none() {
                eprintln!("gen: {name} needs a number");
            }
            v
        };
        let v = match a.as_str() {
            "--out" => None,
            "--big-mb" => num("--big-mb").map(|v| big_mb = v),
            "--small-files" => num("--small-files").map(|v| small = v),
            "--many-entries" => num("--many-entries").map(|v| many = v),
            "--seed" => num("--seed").map(|v| seed = v),
            _ => {
                eprintln!("gen: unknown argument {a:?}");
                return ExitCode::from(2);
            }
        };
        if a == "--out" {
            match args.next() {
                Some(d) => out = Some(d.into()),
                None => {
                    eprintln!("gen: --out needs a directory");
                    return ExitCode::from(2);
                }
            }
        } else if v.is_none() {
            return ExitCode::from(2);
        }
    }
    let Some(out) = out else {
        eprintln!(
            "usage: gen --out DIR [--big-mb N] [--small-files N] [--many-entries N] [--seed S]"
        );
        return ExitCode::from(2);
    };
    match write_all(&out, big_mb, small, many, seed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen: {e}");
            ExitCode::from(1)
        }
    }
}

fn write_all(out: &PathBuf, big_mb: u64, small: u64, many: u64, seed: u64) -> std::io::Result<()> {
    fs::create_dir_all(out)?;
    if big_mb > 0 {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(out.join("big.jsonl"))?);
        let n = Gen::new(seed).session(&Shape::v3(big_mb << 20), &mut w)?;
        w.into_inner()?.sync_all().ok();
        eprintln!("gen: big.jsonl {} MB", n >> 20);
    }
    if small > 0 {
        let mut total = 0;
        for i in 0..small {
            let mut g = Gen::new(seed ^ (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let size = g.rng.log_range(2_000, 512 << 10);
            let shape = if g.rng.chance(0.1) {
                Shape::v1(size)
            } else {
                Shape::v3(size)
            };
            let project = format!("--home-dev-proj{}--", g.rng.below(20));
            let dir = out.join("sessions").join(project);
            fs::create_dir_all(&dir)?;
            let name = format!(
                "{}_{}.jsonl",
                iso(1_735_689_600_000 + g.rng.below(365 * 86_400_000)).replace([':', '.'], "-"),
                g.uuid()
            );
            let mut w = BufWriter::new(File::create(dir.join(name))?);
            total += g.session(&shape, &mut w)?;
        }
        eprintln!("gen: {small} small sessions, {} MB", total >> 20);
    }
    if many > 0 {
        let mut w =
            BufWriter::with_capacity(1 << 20, File::create(out.join("many-entries.jsonl"))?);
        let n = Gen::new(seed).many_entries(many, &mut w)?;
        eprintln!("gen: many-entries.jsonl {many} entries, {} MB", n >> 20);
    }
    Ok(())
}
