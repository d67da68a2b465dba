//! The documentation is tested: every field a tool emits is described in docs/FORMAT.md (and
//! every described field is emitted by some run below) with the type the doc gives it (the
//! records of tests/util/records.rs), and every committed man page equals the one rendered
//! from the tool's clap definitions.

use crate::util::records::parse_records;
use crate::util::*;
use std::collections::{BTreeMap, BTreeSet};

/// Runs that together emit every record type and field documented in docs/FORMAT.md.
fn runs() -> Vec<(&'static str, Vec<String>)> {
    let f = fixture_str;
    vec![
        (
            "pi-branch",
            vec![
                "--info".into(),
                f("branched.jsonl"),
                f("cycle.jsonl"),
                f("v1-linear.jsonl"),
            ],
        ),
        (
            "pi-usage",
            vec![
                "--json".into(),
                f("usage-basic.jsonl"),
                f("usage-fork.jsonl"),
                f("usage-bad-fields.jsonl"),
                f("usage-pi1-sources.jsonl"),
            ],
        ),
        (
            "pi-usage",
            vec![
                "--by".into(),
                "model,day".into(),
                "--total".into(),
                "--tz".into(),
                "UTC".into(),
                f("usage-basic.jsonl"),
                f("usage-timestamps.jsonl"),
            ],
        ),
        (
            "pi-usage",
            vec![
                "--by".into(),
                "project,week,month".into(),
                f("usage-basic.jsonl"),
            ],
        ),
        (
            "pi-usage",
            vec![
                "--calls".into(),
                f("usage-pi1-sources.jsonl"),
                f("usage-basic.jsonl"),
                f("usage-fork.jsonl"),
            ],
        ),
        (
            "pi-usage",
            vec![
                "--context".into(),
                "--models".into(),
                f("models/models.json"),
                f("usage-context.jsonl"),
            ],
        ),
        (
            "pi-branch",
            vec![
                "--leaves".into(),
                "--preview".into(),
                f("branched.jsonl"),
                f("labels.jsonl"),
            ],
        ),
        (
            "pi-compactions",
            vec![
                "--summary".into(),
                "--files".into(),
                "--errors".into(),
                "--branch-summaries".into(),
                f("compaction-overflow.jsonl"),
                f("compaction-recorded.jsonl"),
                f("compaction-failures.jsonl"),
                f("assistant-errors.jsonl"),
                f("branch-summary.jsonl"),
                f("compaction-pi1-fields.jsonl"),
                f("omp-compaction-fields.jsonl"),
            ],
        ),
        (
            "pi-sessions",
            vec![
                "--json".into(),
                "--prompts".into(),
                "--dir".into(),
                f("sessions-tree"),
                "--dir".into(),
                f("session-meta.jsonl"),
            ],
        ),
        (
            "pi-tools",
            vec![
                f("tools-session.jsonl"),
                f("tools-duplicate.jsonl"),
                f("tools-image.jsonl"),
                f("tools-bash-execution.jsonl"),
                f("tools-pi1-usage-nested.jsonl"),
            ],
        ),
    ]
}

/// (record type → its (field path, type cell) rows, in the doc's order) from docs/FORMAT.md.
fn documented_rows() -> BTreeMap<String, Vec<(String, String)>> {
    let text = std::fs::read_to_string(root().join("docs/FORMAT.md")).unwrap();
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## `") {
            current = h.split('`').next().map(str::to_string);
            if let Some(c) = &current {
                out.entry(c.clone()).or_default();
            }
            continue;
        }
        if line.starts_with("## ") || line.starts_with("# ") {
            current = None;
            continue;
        }
        let (Some(t), Some(rest)) = (&current, line.strip_prefix("| `")) else {
            continue;
        };
        let mut cells = rest.split('|');
        let path = cells
            .next()
            .unwrap()
            .trim()
            .trim_end_matches('`')
            .to_string();
        let ty = cells.next().unwrap_or("").trim().to_string();
        out.get_mut(t).unwrap().push((path, ty));
    }
    out
}

/// (record type → field path → type cell) from docs/FORMAT.md.
fn documented() -> BTreeMap<String, BTreeMap<String, String>> {
    documented_rows()
        .into_iter()
        .map(|(t, rows)| (t, rows.into_iter().collect()))
        .collect()
}

/// Every record type the tools declare (`pi_jsonl::records`) lists exactly the fields
/// docs/FORMAT.md gives it, in the doc's order, and every documented type is declared.
#[test]
fn every_record_type_declares_the_documented_fields() {
    let docs = documented_rows();
    let declared = pi_jsonl::records();
    for r in &declared {
        let rows = docs
            .get(r.type_name)
            .unwrap_or_else(|| panic!("record type `{}` is not in docs/FORMAT.md", r.type_name));
        let doc_fields: Vec<&str> = rows.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(r.fields, &doc_fields[..], "fields of `{}`", r.type_name);
    }
    for t in docs.keys() {
        assert!(
            declared.iter().any(|r| r.type_name == t),
            "documented record `{t}` is declared by no tool's RECORDS"
        );
    }
}

fn opaque(ty: &str) -> bool {
    ty.contains("as recorded") || ty.starts_with("map")
}

fn flatten(
    v: &serde_json::Value,
    prefix: &str,
    docs: &BTreeMap<String, String>,
    out: &mut BTreeSet<String>,
) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, val) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                if docs.get(&p).is_some_and(|t| opaque(t)) {
                    continue;
                }
                flatten(val, &p, docs, out);
            }
        }
        serde_json::Value::Array(items) if !prefix.is_empty() => {
            for it in items {
                if it.is_object() {
                    flatten(it, &format!("{prefix}[]"), docs, out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn every_emitted_field_is_documented_and_every_documented_field_is_emitted() {
    let docs = documented();
    assert!(!docs.is_empty(), "docs/FORMAT.md documents no record");
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (bin, args) in runs() {
        let o = cmd(bin).args(&args).run();
        assert!(
            !o.stdout.is_empty(),
            "{bin} {args:?} printed nothing; stderr: {}",
            o.stderr
        );
        // The types: every record fits its struct in tests/util/records.rs.
        parse_records(&o.out());
        // The names: every field path is a row of the doc, and each row appears in some run.
        for rec in o.records() {
            let t = rec["type"]
                .as_str()
                .unwrap_or_else(|| panic!("record without type: {rec}"))
                .to_string();
            let d = docs
                .get(&t)
                .unwrap_or_else(|| panic!("record type `{t}` ({bin}) is not in docs/FORMAT.md"));
            let mut paths = BTreeSet::new();
            flatten(&rec, "", d, &mut paths);
            for p in &paths {
                assert!(
                    d.contains_key(p),
                    "`{t}` field `{p}` ({bin} {args:?}) is not documented in docs/FORMAT.md"
                );
            }
            seen.entry(t).or_default().extend(paths);
        }
    }
    for (t, fields) in &docs {
        let s = seen
            .get(t)
            .unwrap_or_else(|| panic!("no run in tests/docs.rs emits documented record `{t}`"));
        for f in fields.keys() {
            assert!(
                s.contains(f),
                "documented field `{t}`.`{f}` never appears in the runs of tests/docs.rs"
            );
        }
    }
}

#[test]
fn man_pages_are_current() {
    let bless = std::env::var_os("PI_JSONL_BLESS").is_some();
    for (name, page) in pi_jsonl::man_pages() {
        let path = root().join("man").join(format!("{name}.1"));
        if bless {
            std::fs::write(&path, &page).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == page,
            "man/{name}.1 is stale; regenerate with: PI_JSONL_BLESS=1 cargo test --test tests docs::man_pages"
        );
    }
}

/// A request line of roff (`.B …`) reads a double quote as its arguments' quoting and drops
/// it, so an example such as `jq 'select(.x=="y")'` would lose its quotes as shown: no
/// request line but the title's holds one.
#[test]
fn man_page_requests_hold_no_double_quotes() {
    for (name, page) in pi_jsonl::man_pages() {
        for line in page
            .lines()
            .filter(|l| l.starts_with('.') && !l.starts_with(".TH "))
        {
            assert!(!line.contains('"'), "{name}: {line}");
        }
    }
}

/// Every tool prints its own man page (`--man`, the committed one) and shell completions
/// (`--completions SHELL`) that name the tool and its options, for every shell clap_complete
/// writes; an unknown shell is a usage error.
#[test]
fn every_tool_prints_its_man_page_and_completions() {
    for (name, _) in pi_jsonl::man_pages() {
        let committed =
            std::fs::read_to_string(root().join("man").join(format!("{name}.1"))).unwrap();
        assert_eq!(cmd(name).arg("--man").ok().out(), committed, "{name} --man");
        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let script = cmd(name).args(["--completions", shell]).ok().out();
            assert!(script.contains(name), "{name} --completions {shell}");
            assert!(
                script.contains("threads"),
                "{name} --completions {shell}: options"
            );
        }
        assert_eq!(cmd(name).args(["--completions", "nope"]).run().status, 2);
    }
}

#[test]
fn every_diagnostic_kind_is_listed_in_the_format_doc() {
    let text = std::fs::read_to_string(root().join("docs/FORMAT.md")).unwrap();
    for k in pi_jsonl::diag::Kind::ALL {
        assert!(
            text.contains(&format!("`{}`", k.name())),
            "diagnostic kind `{}` is not listed in docs/FORMAT.md",
            k.name()
        );
    }
}
