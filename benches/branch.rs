//! pi-branch over bytes in memory and over a mapped file, on generated sessions (see
//! BENCHMARKS.md; the scanner's own micro-benchmarks are in crates/scan/benches).
//!
//!     cargo bench --bench branch

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pi_jsonl::tool::Tool;
use pi_jsonl_gen::{Gen, Shape};
use std::hint::black_box;

fn pi_branch(c: &mut Criterion, name: &str, data: &[u8]) {
    use clap::Parser;
    let args = pi_jsonl::cmd::branch::Args::parse_from(["pi-branch"]);
    let mut g = c.benchmark_group(format!("pi-branch/{name}"));
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);
    g.bench_function("in memory (stdin mode)", |b| {
        b.iter(|| {
            let mut d = pi_jsonl::diag::Diags::new("pi-branch", "<memory>", false);
            let mut out = pi_jsonl::output::Out::held();
            let _ =
                pi_jsonl::cmd::branch::Branch::run_bytes(&args, black_box(data), &mut out, &mut d);
            out.buf.len()
        })
    });
    let path = std::env::temp_dir().join(format!(
        "pi-jsonl-bench-{}-{name}.jsonl",
        std::process::id()
    ));
    std::fs::write(&path, data).unwrap();
    g.bench_function("file (mapped)", |b| {
        b.iter(|| {
            let mut d = pi_jsonl::diag::Diags::new("pi-branch", "<file>", false);
            pi_jsonl::cmd::branch::branch_file(&args, black_box(&path), &mut d)
                .map(|v| v.len())
                .unwrap_or(0)
        })
    });
    let _ = std::fs::remove_file(&path);
    g.finish();
}

fn benches(c: &mut Criterion) {
    let mut big = Vec::new();
    Gen::new(42).session(&Shape::v3(8 << 20), &mut big).unwrap();
    let mut small = Vec::new();
    Gen::new(43).many_entries(50_000, &mut small).unwrap();
    pi_branch(c, "session", &big);
    pi_branch(c, "small-entries", &small);
}

criterion_group!(branch, benches);
criterion_main!(branch);
