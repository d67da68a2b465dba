//! pi-usage --calls: the `usage_call` records, summed by any key, give exactly what `--by`
//! gives (over every fixture and the corpus); repeats are marked in input order; the output
//! does not depend on the thread count.

use crate::util::records::{parse_records, Record};
use crate::util::*;
use pi_jsonl::cmd::usage::{format_decimal, parse_cost, Amount};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `line` with every number outside strings turned into a string of its exact text, so that
/// big integers and decimal costs are read without a float in between.
fn quote_numbers(line: &str) -> String {
    let b = line.as_bytes();
    let (mut out, mut i, mut in_string) = (Vec::with_capacity(b.len() + 64), 0, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            if c == b'\\' {
                out.extend_from_slice(&b[i..i + 2]);
                i += 2;
                continue;
            }
            in_string = c != b'"';
        } else if c == b'"' {
            in_string = true;
        } else if c == b'-' || c.is_ascii_digit() {
            let end = (i..b.len())
                .find(|&j| matches!(b[j], b',' | b'}' | b']' | b' '))
                .unwrap_or(b.len());
            out.push(b'"');
            out.extend_from_slice(&b[i..end]);
            out.push(b'"');
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The records of a run, numbers as their exact text.
fn exact_records(o: &Output) -> Vec<Value> {
    o.out()
        .lines()
        .map(|l| serde_json::from_str(&quote_numbers(l)).unwrap())
        .collect()
}

fn int(v: &Value) -> u128 {
    v.as_str()
        .unwrap_or_else(|| panic!("not an integer: {v}"))
        .parse()
        .unwrap()
}

/// What a `usage` record's sums object says of some calls, made from their `usage_call`
/// records (an independent sum: integers and exact decimals, no code of pi-usage but
/// its decimal parser and printer).
#[derive(Default)]
struct Sums {
    count: u128,
    tokens: [u128; 5],
    total_tokens: u128,
    total_tokens_computed: u128,
    reasoning: (u128, u128),
    cache_write_1h: (u128, u128),
    cost: Amount,
    cost_missing: u128,
    cost_from_provider: (Amount, u128),
    other: BTreeMap<String, u128>,
}

impl Sums {
    fn add(&mut self, c: &Value) {
        self.count += 1;
        for (i, k) in ["input", "output", "cache_read", "cache_write", "tokens"]
            .iter()
            .enumerate()
        {
            self.tokens[i] += int(&c[k]);
        }
        self.total_tokens += int(&c["total_tokens"]);
        self.total_tokens_computed += u128::from(c["total_tokens_computed"] == true);
        for (k, s) in [
            ("reasoning", &mut self.reasoning),
            ("cache_write_1h", &mut self.cache_write_1h),
        ] {
            if !c[k].is_null() {
                s.0 += int(&c[k]);
                s.1 += 1;
            }
        }
        match c["cost"].as_str() {
            Some(t) => {
                let cost = parse_cost(t.as_bytes()).unwrap();
                self.cost.add(&cost);
                if c["cost_from_provider"] == true {
                    self.cost_from_provider.0.add(&cost);
                    self.cost_from_provider.1 += 1;
                }
            }
            None => self.cost_missing += 1,
        }
        for (k, v) in c["other"].as_object().unwrap() {
            *self.other.entry(k.clone()).or_default() += int(v);
        }
    }

    /// As a `usage` record writes it, numbers as text.
    fn json(&self) -> Value {
        let n = |v: u128| Value::String(v.to_string());
        let part = |(v, calls): (u128, u128)| if calls == 0 { Value::Null } else { n(v) };
        let cost = if self.count > 0 && self.cost_missing == self.count {
            Value::Null
        } else {
            Value::String(format_decimal(&self.cost))
        };
        let from_provider = match self.cost_from_provider.1 {
            0 => Value::Null,
            _ => Value::String(format_decimal(&self.cost_from_provider.0)),
        };
        let other: Map<String, Value> =
            self.other.iter().map(|(k, v)| (k.clone(), n(*v))).collect();
        json!({
            "count": n(self.count),
            "input": n(self.tokens[0]),
            "output": n(self.tokens[1]),
            "cache_read": n(self.tokens[2]),
            "cache_write": n(self.tokens[3]),
            "tokens": n(self.tokens[4]),
            "total_tokens": n(self.total_tokens),
            "total_tokens_computed": n(self.total_tokens_computed),
            "reasoning": part(self.reasoning),
            "reasoning_calls": n(self.reasoning.1),
            "cache_write_1h": part(self.cache_write_1h),
            "cache_write_1h_calls": n(self.cache_write_1h.1),
            "cost": cost,
            "cost_missing": n(self.cost_missing),
            "cost_from_provider": from_provider,
            "cost_from_provider_calls": n(self.cost_from_provider.1),
            "other": other,
        })
    }
}

/// The sums of one group of calls, as the parts of a `usage` record compared here.
#[derive(Default)]
struct Group {
    sources: BTreeMap<&'static str, Sums>,
    total: Sums,
    kinds: BTreeMap<String, Sums>,
    by_model: BTreeMap<String, Sums>,
    duplicates: u128,
    nested_calls: u128,
    nested_calls_incomplete: u128,
}

const SOURCES: [(&str, &str); 4] = [
    ("message", "messages"),
    ("summarization", "summarization"),
    ("usage_entry", "usage_entries"),
    ("tool_result", "tool_results"),
];

impl Group {
    fn add(&mut self, c: &Value) {
        if c["repeat"] == true {
            self.duplicates += 1;
            return;
        }
        let source = SOURCES
            .iter()
            .find(|(s, _)| c["source"] == *s)
            .unwrap_or_else(|| panic!("source of {c}"))
            .1;
        self.sources.entry(source).or_default().add(c);
        self.total.add(c);
        if source == "usage_entries" {
            self.kinds.entry(c["kind"].to_string()).or_default().add(c);
        }
        let model = json!([c["provider"], c["model"]]).to_string();
        self.by_model.entry(model).or_default().add(c);
        if !c["nested_calls"].is_null() {
            self.nested_calls += int(&c["nested_calls"]);
        }
        self.nested_calls_incomplete += u128::from(c["nested_calls_incomplete"] == true);
    }

    fn json(&self) -> Value {
        let mut o = Map::new();
        for (_, name) in SOURCES {
            let s = self
                .sources
                .get(name)
                .map_or_else(|| Sums::default().json(), Sums::json);
            o.insert(name.into(), s);
        }
        o.insert("total".into(), self.total.json());
        let map = |m: &BTreeMap<String, Sums>| -> Value {
            Value::Object(m.iter().map(|(k, s)| (k.clone(), s.json())).collect())
        };
        o.insert("usage_kinds".into(), map(&self.kinds));
        o.insert("by_model".into(), map(&self.by_model));
        for (k, v) in [
            ("duplicates", self.duplicates),
            ("nested_calls", self.nested_calls),
            ("nested_calls_incomplete", self.nested_calls_incomplete),
        ] {
            o.insert(k.into(), Value::String(v.to_string()));
        }
        Value::Object(o)
    }
}

/// The parts of a `usage` record a [`Group`] gives, its lists keyed as `Group::json` keys them.
fn record_part(r: &Value) -> Value {
    let mut o = Map::new();
    for k in [
        "messages",
        "summarization",
        "usage_entries",
        "tool_results",
        "total",
        "duplicates",
        "nested_calls",
        "nested_calls_incomplete",
    ] {
        o.insert(k.into(), r[k].clone());
    }
    let strip = |item: &Value, keys: &[&str]| {
        let mut m = item.as_object().unwrap().clone();
        for k in keys {
            m.remove(*k);
        }
        Value::Object(m)
    };
    let kinds = r["usage_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["kind"].to_string(), strip(k, &["kind"])));
    o.insert("usage_kinds".into(), Value::Object(kinds.collect()));
    let models = r["by_model"].as_array().unwrap().iter().map(|m| {
        let key = json!([m["provider"], m["model"]]).to_string();
        (key, strip(m, &["provider", "model"]))
    });
    o.insert("by_model".into(), Value::Object(models.collect()));
    Value::Object(o)
}

/// The record fields that make the key of a group by `dims` (`--by` names).
fn key_fields(dims: &str) -> Vec<&'static str> {
    let mut f = vec![];
    for d in dims.split(',').filter(|d| !d.is_empty()) {
        match d {
            "model" => f.extend(["provider", "model"]),
            "session" => f.extend(["session", "file"]),
            "provider" => f.push("provider"),
            "project" => f.push("project"),
            "day" => f.push("day"),
            "week" => f.push("week"),
            "month" => f.push("month"),
            _ => panic!("dimension {d}"),
        }
    }
    f.sort();
    f.dedup();
    f
}

fn key(r: &Value, fields: &[&str]) -> String {
    Value::Array(fields.iter().map(|f| r[*f].clone()).collect()).to_string()
}

/// Sums the `--calls` records of `files` by each grouping and compares with `--by` (and
/// `--total`) over the same files, with the extra arguments `extra` (a `--tz`).
fn calls_sum_to_the_groups(files: &[PathBuf], extra: &[&str]) {
    let run = |args: &[&str]| cmd("pi-usage").args(args).args(extra).args(files).run();
    let calls_run = run(&["--calls"]);
    assert!(!calls_run.stdout.is_empty(), "{}", calls_run.stderr);
    let calls = exact_records(&calls_run);
    assert!(calls.iter().all(|c| c["type"] == "usage_call"));
    assert!(
        calls.iter().any(|c| c["repeat"] == true),
        "no repeat in the input"
    );
    for dims in [
        "model",
        "provider",
        "day",
        "week",
        "month",
        "session",
        "project",
        "day,model",
        "",
    ] {
        let fields = key_fields(dims);
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for c in &calls {
            groups.entry(key(c, &fields)).or_default().add(c);
        }
        let by = match dims {
            "" => run(&["--json", "--total"]),
            _ => run(&["--json", "--by", dims]),
        };
        let mut seen = 0;
        let mut keys = std::collections::BTreeSet::new();
        for r in exact_records(&by) {
            let k = key(&r, &fields);
            // Two groups with one key (a file given twice) cannot be told apart by the calls.
            assert!(keys.insert(k.clone()), "--by {dims}: two groups {k}");
            let part = record_part(&r);
            let Some(g) = groups.get(&k) else {
                // A session (or project) without calls has a group with nothing in it.
                assert_eq!(r["total"]["count"], "0", "--by {dims} {k}: no calls");
                assert_eq!(r["duplicates"], "0", "--by {dims} {k}: no calls");
                continue;
            };
            assert_eq!(part, g.json(), "--by {dims}, group {k}");
            seen += 1;
        }
        assert_eq!(seen, groups.len(), "--by {dims}: groups without a record");
    }
}

#[test]
fn calls_summed_by_any_key_are_the_by_groups_over_the_fixtures() {
    // A zone off whole hours, so that day, week and month come from --tz, not from UTC.
    calls_sum_to_the_groups(&fixture_files(), &["--tz", "+05:30"]);
}

#[test]
fn calls_summed_by_any_key_are_the_by_groups_over_the_corpus() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    calls_sum_to_the_groups(&files, &[]);
}

#[test]
fn a_forks_replayed_calls_are_repeats_in_input_order() {
    let original = fixture_str("usage-fork-original.jsonl");
    let fork = fixture_str("usage-fork.jsonl");
    let repeats = |files: &[&str]| -> Vec<(String, u64, bool)> {
        let o = cmd("pi-usage").arg("--calls").args(files).run();
        parse_records(&o.out());
        o.records()
            .iter()
            .map(|c| {
                let file = c["file"].as_str().unwrap().rsplit('/').next().unwrap();
                (
                    file.to_string(),
                    c["line"].as_u64().unwrap(),
                    c["repeat"] == true,
                )
            })
            .collect()
    };
    let forward = repeats(&[&original, &fork]);
    let backward = repeats(&[&fork, &original]);
    // Whichever file comes first has no repeat; the other's copied calls are repeats.
    let in_file = |r: &[(String, u64, bool)], f: &str, repeat: bool| {
        r.iter().filter(|c| c.0 == f && c.2 == repeat).count()
    };
    assert_eq!(in_file(&forward, "usage-fork-original.jsonl", true), 0);
    let copied = in_file(&forward, "usage-fork.jsonl", true);
    assert!(copied > 0, "{forward:?}");
    assert_eq!(in_file(&backward, "usage-fork.jsonl", true), 0);
    assert_eq!(
        in_file(&backward, "usage-fork-original.jsonl", true),
        copied
    );
    // --by leaves exactly those out.
    let by = cmd("pi-usage")
        .args(["--json", "--total", &original, &fork])
        .run()
        .records();
    assert_eq!(by[0]["duplicates"], copied as u64);
}

#[test]
fn every_field_of_a_call_comes_from_its_entry() {
    let o = cmd("pi-usage")
        .args([
            "--calls",
            "--tz",
            "UTC",
            &fixture_str("usage-pi1-sources.jsonl"),
        ])
        .ok();
    let records = parse_records(&o.out());
    let Record::UsageCall(c) = &records[0] else {
        panic!("{:?}", records[0]);
    };
    assert_eq!(
        (c.line, c.entry.as_deref(), c.time.as_deref()),
        (
            4,
            Some("0195f3a2-7c1e-7d2a-9b4e-000000000003"),
            Some("2026-11-20T10:00:03.000Z")
        )
    );
    assert_eq!(
        (c.day.as_deref(), c.week.as_deref()),
        (Some("2026-11-20"), Some("2026-W47"))
    );
    assert_eq!(
        (c.input, c.output, c.cache_read, c.cache_write, c.tokens.0),
        (1000, 300, 2000, 500, 3800.0)
    );
    assert_eq!((c.reasoning, c.cache_write_1h), (Some(120), Some(200)));
    assert!(c.cost_from_provider && !c.repeat);
    assert_eq!(c.identity.as_ref().map(String::len), Some(32));
    // The exact decimal text of the recorded cost.
    assert!(o
        .out()
        .lines()
        .next()
        .unwrap()
        .contains(r#""cost":0.009975,"#));
    let kinds: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::UsageCall(c) => c.kind.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["cache_warm", "embedding_lookup"]);
}

#[test]
fn output_does_not_depend_on_threads() {
    let files = fixture_files();
    let run = |t: &str| {
        cmd("pi-usage")
            .args(["--calls", "--tz", "UTC", "--threads", t])
            .args(&files)
            .run()
            .stdout
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert_eq!(one, run("4"));
}

#[test]
fn calls_conflict_with_sums_and_tables() {
    // --since and --until are refused, not ignored: the calls are not filtered by time.
    for other in [
        &["--total"][..],
        &["--table"],
        &["--no-dedup"],
        &["--context"],
        &["--since", "2026-05-02"],
        &["--until", "2026-05-02"],
    ] {
        let o = cmd("pi-usage")
            .arg("--calls")
            .args(other)
            .arg(fixture_str("usage-basic.jsonl"))
            .run();
        assert_eq!(o.status, 2, "--calls {other:?}: {}", o.stderr);
        assert!(o.stdout.is_empty());
    }
}

/// A large input (16 MiB or more) waits for its turn and writes its calls as it reads them;
/// small ones are read whole in parallel and written in order. Both give the records one
/// stream of the same sessions gives (their `file` and `line` aside), and the sums still
/// equal `--by` (a generated 17 MB session in two files: the second copy all repeats).
#[test]
fn a_large_input_streams_its_calls_in_turn() {
    let t = TempDir::new("usage-calls-stream");
    let mut big = Vec::new();
    pi_jsonl_gen::Gen::new(7)
        .session(&pi_jsonl_gen::Shape::v3(17 << 20), &mut big)
        .unwrap();
    assert!(big.len() >= 16 << 20, "{} bytes", big.len());
    // The second copy under another name: a group by session is keyed by its file too.
    let copy = t.write("big-copy.jsonl", &big);
    let big = t.write("big.jsonl", big);
    let files: Vec<PathBuf> = [
        fixture("usage-basic.jsonl"),
        big,
        fixture("usage-fork.jsonl"),
        copy,
        fixture("usage-pi1-sources.jsonl"),
    ]
    .into();
    let all: Vec<u8> = files
        .iter()
        .flat_map(|f| std::fs::read(f).unwrap())
        .collect();
    let one = t.write("all.jsonl", all);
    let placeless = |o: Output| -> Vec<Value> {
        let mut r = o.records();
        for v in &mut r {
            let o = v.as_object_mut().unwrap();
            o.remove("file");
            o.remove("line");
        }
        r
    };
    let streamed = placeless(
        cmd("pi-usage")
            .args(["--calls", "--tz", "UTC"])
            .arg(&one)
            .run(),
    );
    assert!(streamed.iter().any(|c| c["repeat"] == true));
    for threads in ["1", "2"] {
        let parts = cmd("pi-usage")
            .args(["--calls", "--tz", "UTC", "--threads", threads])
            .args(&files)
            .run();
        assert_eq!(streamed, placeless(parts), "--threads {threads}");
    }
    calls_sum_to_the_groups(&files, &["--tz", "UTC"]);
}
