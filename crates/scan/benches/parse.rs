//! Micro-benchmarks of the parsing paths, on generated realistic sessions (see BENCHMARKS.md).
//!
//!     cargo bench -p pi-jsonl-scan --bench parse
//!
//! Every variant validates each whole line (Pi skips lines `JSON.parse` rejects, so every
//! tool must know) and extracts the few top-level fields a tool needs: `type`, `id`,
//! `parentId` (what pi-branch reads of every entry).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pi_jsonl_gen::{Gen, Shape};
use pi_jsonl_scan::json;
use pi_jsonl_scan::lines::{LineReader, SliceLines};
use serde::Deserialize;
use std::borrow::Cow;
use std::hint::black_box;

/// A realistic session of about 8 MB: long tool outputs, thinking, images, branches.
fn session() -> Vec<u8> {
    let mut data = Vec::new();
    Gen::new(42)
        .session(&Shape::v3(8 << 20), &mut data)
        .unwrap();
    data
}

/// Many small entries: per-line overhead rather than per-byte speed.
fn small_entries() -> Vec<u8> {
    let mut data = Vec::new();
    Gen::new(43).many_entries(50_000, &mut data).unwrap();
    data
}

/// The real sessions of the shared corpus (`$PI_JSONL_CORPUS`, else `../shared/corpus` beside
/// the project), every `.jsonl` file one after the other; empty when it is absent.
fn corpus() -> Vec<u8> {
    let root = match std::env::var_os("PI_JSONL_CORPUS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let mut files = vec![];
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut data = Vec::new();
    for f in files {
        data.extend(std::fs::read(f).unwrap_or_default());
        data.push(b'\n');
    }
    data
}

fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

/// The fields a tool needs, borrowed where the text has no escapes.
#[derive(Deserialize)]
struct Few<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "parentId")]
    parent_id: Option<Cow<'a, str>>,
}

fn ours(line: &[u8]) -> usize {
    let mut found = 0;
    let end = json::scan_members(line, 0, |k, v| {
        if json::key_is(k, "type") || json::key_is(k, "id") || json::key_is(k, "parentId") {
            found += v.as_str().map_or(0, |s| s.len());
        }
    });
    end.map_or(0, |_| found)
}

fn parse_paths(c: &mut Criterion, name: &str, data: &[u8]) {
    let ls = lines(data);
    let mut g = c.benchmark_group(format!("parse/{name}"));
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);

    g.bench_function("scan_object (ours)", |b| {
        b.iter(|| ls.iter().map(|l| ours(black_box(l))).sum::<usize>())
    });
    g.bench_function("serde_json IgnoredAny", |b| {
        b.iter(|| {
            ls.iter()
                .filter(|l| serde_json::from_slice::<serde::de::IgnoredAny>(black_box(l)).is_ok())
                .count()
        })
    });
    g.bench_function("serde_json borrowed struct", |b| {
        b.iter(|| {
            ls.iter()
                .filter_map(|l| serde_json::from_slice::<Few>(black_box(l)).ok())
                .map(|f| {
                    f.kind.map_or(0, |s| s.len())
                        + f.id.map_or(0, |s| s.len())
                        + f.parent_id.map_or(0, |s| s.len())
                })
                .sum::<usize>()
        })
    });
    g.bench_function("serde_json Value", |b| {
        b.iter(|| {
            ls.iter()
                .filter_map(|l| serde_json::from_slice::<serde_json::Value>(black_box(l)).ok())
                .filter(|v| v.get("id").is_some())
                .count()
        })
    });
    g.bench_function("simd-json borrowed value (copy + parse)", |b| {
        let mut buf = Vec::new();
        let mut buffers = simd_json::Buffers::default();
        b.iter(|| {
            let mut n = 0;
            for l in &ls {
                buf.clear();
                buf.extend_from_slice(l);
                if simd_json::to_borrowed_value_with_buffers(&mut buf, &mut buffers).is_ok() {
                    n += 1;
                }
            }
            n
        })
    });
    g.bench_function("simd-json serde struct (copy + parse)", |b| {
        let mut buf = Vec::new();
        let mut buffers = simd_json::Buffers::default();
        b.iter(|| {
            let mut n = 0;
            for l in &ls {
                buf.clear();
                buf.extend_from_slice(l);
                if let Ok(f) =
                    simd_json::serde::from_slice_with_buffers::<Few>(&mut buf, &mut buffers)
                {
                    n += f.id.map_or(0, |s| s.len());
                }
            }
            n
        })
    });
    g.finish();
}

fn utf8(c: &mut Criterion, data: &[u8]) {
    let ls = lines(data);
    let mut g = c.benchmark_group("utf8");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);
    g.bench_function("std::str::from_utf8", |b| {
        b.iter(|| {
            ls.iter()
                .filter(|l| std::str::from_utf8(black_box(l)).is_ok())
                .count()
        })
    });
    g.bench_function("simdutf8::basic::from_utf8", |b| {
        b.iter(|| {
            ls.iter()
                .filter(|l| simdutf8::basic::from_utf8(black_box(l)).is_ok())
                .count()
        })
    });
    g.finish();
}

fn line_splitting(c: &mut Criterion, data: &[u8]) {
    let mut g = c.benchmark_group("lines");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);
    g.bench_function("memchr count (floor)", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(data)).count())
    });
    g.bench_function("LineReader (read into a buffer)", |b| {
        b.iter(|| {
            let mut r = LineReader::new(black_box(data));
            let mut n = 0u64;
            while let Ok(Some(l)) = r.next_line() {
                n += l.len_with_eol;
            }
            n
        })
    });
    g.bench_function("SliceLines (mapped)", |b| {
        b.iter(|| {
            let mut r = SliceLines::new(black_box(data));
            let mut n = 0u64;
            while let Some(l) = r.next_line() {
                n += l.len_with_eol;
            }
            n
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let big = session();
    let small = small_entries();
    parse_paths(c, "session", &big);
    parse_paths(c, "small-entries", &small);
    let corpus = corpus();
    if !corpus.is_empty() {
        let ls = lines(&corpus);
        let mut g = c.benchmark_group("parse/corpus");
        g.throughput(Throughput::Bytes(corpus.len() as u64));
        g.sample_size(20);
        g.bench_function("scan_object (ours)", |b| {
            b.iter(|| ls.iter().map(|l| ours(black_box(l))).sum::<usize>())
        });
        g.finish();
    }
    utf8(c, &big);
    line_splitting(c, &big);
}

criterion_group!(parse, benches);
criterion_main!(parse);
