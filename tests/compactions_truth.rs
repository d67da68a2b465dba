//! pi-compactions scored against the truth (issue 21): the sessions in `fixtures/truth/` were
//! written by Pi 1.6.0's real `AgentSession` with pi-ai's faux provider, and
//! `tests/data/truth-compactions.jsonl` holds, for each compaction entry, the reason Pi's own
//! `compaction_start` event gave (`scripts/pi-truth` makes both). A trigger is *right* when it
//! is Pi's reason, *vague* when it is `unknown` or `automatic`, *wrong* otherwise. With the
//! windows known (`fixtures/truth/models.json`) at least 90% must be right and none wrong;
//! without them none may be wrong.

use crate::util::records::parse_records;
use crate::util::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// (file, entry) → Pi's reason, in the truth's order.
fn truth() -> Vec<((String, String), String)> {
    let text = std::fs::read_to_string(root().join("tests/data/truth-compactions.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["pi"], "1.6.0", "the truth was written by Pi 1.6.0");
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            ((s("file"), s("entry")), s("reason"))
        })
        .collect()
}

/// The truth's session files, each once, in order.
fn files() -> Vec<String> {
    let mut files: Vec<String> = truth().into_iter().map(|((f, _), _)| f).collect();
    files.dedup();
    files
}

/// pi-compactions' verdict on every compaction of the truth sessions: (file, entry) → the
/// report.
fn reports(models: bool) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for f in files() {
        let path = fixture(&format!("truth/{f}"));
        let mut c = cmd("pi-compactions");
        if models {
            c = c.arg("--models").arg(fixture("truth/models.json"));
        }
        let o = c.arg(&path).ok();
        // Every record fits docs/FORMAT.md's types (the evidence rules included).
        parse_records(&o.out());
        for r in o.records() {
            if r["type"] == "compaction_report" {
                let entry = r["entry"].as_str().unwrap().to_string();
                out.insert((f.clone(), entry), r);
            }
        }
    }
    out
}

struct Score {
    right: usize,
    vague: usize,
    /// The wrong ones, described.
    wrong: Vec<String>,
}

fn score(models: bool) -> Score {
    let got = reports(models);
    let truth = truth();
    assert_eq!(
        got.len(),
        truth.len(),
        "one report per compaction of the truth"
    );
    let mut s = Score {
        right: 0,
        vague: 0,
        wrong: vec![],
    };
    for (key, reason) in &truth {
        let r = &got[key];
        let trigger = r["trigger"].as_str().unwrap();
        if trigger == reason {
            s.right += 1;
        } else if trigger == "unknown" || trigger == "automatic" {
            s.vague += 1;
        } else {
            s.wrong.push(format!(
                "{} {}: Pi said {reason}, pi-compactions {trigger} ({})",
                key.0, key.1, r["evidence"]
            ));
        }
    }
    s
}

#[test]
fn with_the_windows_known_at_least_90_percent_right_and_none_wrong() {
    let s = score(true);
    assert!(s.wrong.is_empty(), "wrong:\n{}", s.wrong.join("\n"));
    let total = s.right + s.vague;
    assert!(
        s.right * 10 >= total * 9,
        "{} of {total} right ({} vague)",
        s.right,
        s.vague
    );
}

#[test]
fn without_the_windows_none_wrong() {
    let s = score(false);
    assert!(s.wrong.is_empty(), "wrong:\n{}", s.wrong.join("\n"));
    // The rules that need no window still decide: overflow recovery, mid-run threshold and
    // /compact after an unrecovered overflow.
    assert!(s.right * 2 >= s.right + s.vague, "{} right", s.right);
}

/// Every inferred trigger names its rules and the lines they rest on (each a line of the
/// session), and every rule is one docs/FORMAT.md lists.
#[test]
fn every_inferred_label_names_its_rule_and_lines() {
    for (key, r) in reports(true) {
        let evidence = r["evidence"].as_array().unwrap();
        if r["basis"] == "inferred" {
            assert!(!evidence.is_empty(), "{key:?}: inferred without evidence");
        }
        let lines = std::fs::read_to_string(fixture(&format!("truth/{}", key.0)))
            .unwrap()
            .lines()
            .count() as u64;
        for e in evidence {
            let line = e["line"].as_u64().unwrap();
            assert!(line >= 1 && line <= lines, "{key:?}: {e}");
        }
    }
}

/// The rules the truth exercises, each with the trigger Pi gave: the overflow recovery
/// signature (the failed reply, the context_edit hiding it, the retried reply), silent and
/// length overflow, mid-run threshold, and /compact below the threshold or after an overflow
/// Pi did not recover from.
#[test]
fn each_new_rule_is_exercised_and_right() {
    let got = reports(true);
    let truth: BTreeMap<_, _> = truth().into_iter().collect();
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, r) in &got {
        if let Some(first) = r["evidence"].as_array().unwrap().first() {
            if r["basis"] == "inferred" {
                let rule = first["rule"].as_str().unwrap().to_string();
                seen.entry(rule).or_default().push(truth[key].clone());
            }
        }
    }
    for (rule, reason) in [
        ("overflow_recovery", "overflow"),
        ("length_overflow", "overflow"),
        ("silent_overflow", "overflow"),
        ("mid_run", "threshold"),
        ("over_threshold", "threshold"),
        ("under_threshold", "manual"),
        ("unrecovered_overflow", "manual"),
    ] {
        let reasons = seen
            .get(rule)
            .unwrap_or_else(|| panic!("rule {rule} never decides on the truth"));
        assert!(reasons.iter().all(|r| r == reason), "{rule}: {reasons:?}");
    }
    // A recovery signature decides only with the retried reply after it.
    for (key, r) in &got {
        let rules: Vec<&str> = r["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["rule"].as_str().unwrap())
            .collect();
        if r["trigger"] == "overflow" && rules[0] == "overflow_recovery" {
            assert_eq!(rules.last(), Some(&"retried"), "{key:?}");
        }
    }
}
