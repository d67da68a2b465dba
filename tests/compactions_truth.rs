//! pi-compactions scored against the truth (issue 21): sessions written by Pi 1.6.0's real
//! `AgentSession` with pi-ai's faux provider, and for each compaction entry the reason Pi's own
//! `compaction_start` event gave (`scripts/pi-truth` makes them). The sets:
//! - the hand-written scenarios: `fixtures/truth/`, `tests/data/truth-compactions.jsonl`;
//! - two held-out sets: randomized sessions from a seed (`truth.mjs --heldout SEED 40`), with
//!   other models, settings and steps than the scenarios, each made after the rules it scores
//!   and never used to write them: `tests/data/truth-heldout/` (seed 20261130) and
//!   `tests/data/truth-heldout2/` (seed 20261215), with `tests/data/truth-heldout*.jsonl` (each
//!   line also gives the session's `reserveTokens`);
//! - the same for Pi 0.73.1 (`truth.mjs --pi 0.73.1`): its scenarios in `fixtures/truth073/`
//!   with `tests/data/truth073-compactions.jsonl`, a held-out set (seed 20261205) in
//!   `tests/data/truth073-heldout/` with `tests/data/truth073-heldout.jsonl`;
//! - the twins of the held-out sets (`truth.mjs --twins SEED 40`): `tests/data/truth-twins/`,
//!   `tests/data/truth-twins.jsonl`; of the 0.73.1 held-out set
//!   (`truth.mjs --pi 0.73.1 --twins 20261205 40`): `tests/data/truth073-twins/`,
//!   `tests/data/truth073-twins.jsonl`.
//!
//! A trigger is *right* when it is Pi's reason, *vague* when it is `unknown` or `automatic`,
//! *wrong* otherwise. None may be wrong, with the windows and reserve known or without them.
//! The share right is asserted as a floor of the counts reached today (a rule change that
//! loses a right label fails). It is below the 90%, and no rule reading the file can
//! do better: a compaction over the threshold after a reply (or after a silent overflow, or
//! after a model switch, or after an aborted run) is Pi's own, or /compact with
//! auto-compaction off or after Pi's own attempt failed, and the file is the same. The twins
//! prove it compaction by compaction: every compaction the rules leave vague on Pi 1.6.0's
//! held-out sets has a twin, a session Pi wrote the same up to ids and times with another
//! reason, so they score at the ceiling. On Pi 0.73.1's held-out set 69 of the 82 vague have a
//! twin, so the ceiling is 73 of 142 and the rules get 60: the 13 vague without a twin are all
//! `/compact` while tools ran (docs/FORMAT.md, "How the trigger is inferred", "The ceiling").

use crate::util::records::parse_records;
use crate::util::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A truth set: its sessions' folder, the truth file and the Pi that wrote them.
struct Set {
    dir: PathBuf,
    truth: &'static str,
    pi: &'static str,
}

fn scenarios() -> Set {
    Set {
        dir: root().join("fixtures/truth"),
        truth: "tests/data/truth-compactions.jsonl",
        pi: "1.6.0",
    }
}

fn heldout() -> Set {
    Set {
        dir: root().join("tests/data/truth-heldout"),
        truth: "tests/data/truth-heldout.jsonl",
        pi: "1.6.0",
    }
}

/// A second held-out set, made from a seed not looked at before (`--heldout 20261215 40`) after
/// the rules it scores were written.
fn heldout2() -> Set {
    Set {
        dir: root().join("tests/data/truth-heldout2"),
        truth: "tests/data/truth-heldout2.jsonl",
        pi: "1.6.0",
    }
}

/// The same scenarios written by Pi 0.73.1 (`truth.mjs --pi 0.73.1`), where it supports them,
/// and `not-overflow-073`: error texts Pi 1.6.0 takes for an overflow and 0.73.1 does not.
fn scenarios073() -> Set {
    Set {
        dir: root().join("fixtures/truth073"),
        truth: "tests/data/truth073-compactions.jsonl",
        pi: "0.73.1",
    }
}

/// A held-out set written by Pi 0.73.1 (`truth.mjs --pi 0.73.1 --heldout 20261205 40`), made
/// after the 0.73.1 rules it scores were last changed (seed 7301 was used while changing them).
fn heldout073() -> Set {
    Set {
        dir: root().join("tests/data/truth073-heldout"),
        truth: "tests/data/truth073-heldout.jsonl",
        pi: "0.73.1",
    }
}

/// One line of a truth file.
struct Truth {
    file: String,
    entry: String,
    reason: String,
    /// The session's `reserveTokens` (Pi's default when the line does not say).
    reserve: u64,
}

impl Set {
    /// The truth, in its order.
    fn truth(&self) -> Vec<Truth> {
        let text = std::fs::read_to_string(root().join(self.truth)).unwrap();
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["pi"], self.pi, "the truth was written by Pi {}", self.pi);
                let s = |k: &str| v[k].as_str().unwrap().to_string();
                Truth {
                    file: s("file"),
                    entry: s("entry"),
                    reason: s("reason"),
                    reserve: v["reserve"].as_u64().unwrap_or(16384),
                }
            })
            .collect()
    }

    /// Every session file of the set (those without a compaction too), by name.
    fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jsonl"))
            .collect();
        files.sort();
        files
    }

    /// Each session file's text, by name.
    fn texts(&self) -> BTreeMap<String, String> {
        self.files()
            .into_iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.join(&f)).unwrap();
                (f, t)
            })
            .collect()
    }

    /// pi-compactions' verdict on every compaction of the set: (file, entry) → the report.
    /// `known`: with the models' windows (`models.json`) and each session's reserve.
    fn reports(&self, known: bool) -> BTreeMap<(String, String), Value> {
        let reserve: BTreeMap<String, u64> = self
            .truth()
            .into_iter()
            .map(|t| (t.file, t.reserve))
            .collect();
        let mut out = BTreeMap::new();
        for f in self.files() {
            let mut c = cmd("pi-compactions");
            if known {
                let r = reserve.get(&f).copied().unwrap_or(16384);
                c = c
                    .arg("--models")
                    .arg(self.dir.join("models.json"))
                    .arg("--reserve-tokens")
                    .arg(r.to_string());
            }
            let o = c.arg(self.dir.join(&f)).ok();
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

    fn score(&self, known: bool) -> Score {
        let got = self.reports(known);
        let truth = self.truth();
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
        for t in &truth {
            let r = &got[&(t.file.clone(), t.entry.clone())];
            let trigger = r["trigger"].as_str().unwrap();
            if trigger == t.reason {
                s.right += 1;
            } else if trigger == "unknown" || trigger == "automatic" {
                s.vague += 1;
            } else {
                s.wrong.push(format!(
                    "{} {}: Pi said {}, pi-compactions {trigger} ({})",
                    t.file, t.entry, t.reason, r["evidence"]
                ));
            }
        }
        s
    }
}

struct Score {
    right: usize,
    vague: usize,
    /// The wrong ones, described.
    wrong: Vec<String>,
}

impl Score {
    /// None wrong, and at least `right` right of `total`.
    fn check(&self, right: usize, total: usize) {
        assert!(self.wrong.is_empty(), "wrong:\n{}", self.wrong.join("\n"));
        assert_eq!(self.right + self.vague, total);
        assert!(
            self.right >= right,
            "{} of {total} right ({} vague), fewer than {right}",
            self.right,
            self.vague
        );
    }
}

#[test]
fn scenarios_with_the_windows_known_none_wrong() {
    scenarios().score(true).check(43, 62);
}

#[test]
fn scenarios_without_the_windows_none_wrong() {
    // The rules that need no window still decide: overflow recovery, mid-run threshold and
    // /compact after an unrecovered overflow.
    scenarios().score(false).check(39, 62);
}

#[test]
fn heldout_with_the_windows_known_none_wrong() {
    heldout().score(true).check(98, 126);
}

#[test]
fn heldout_without_the_windows_none_wrong() {
    heldout().score(false).check(68, 126);
}

#[test]
fn heldout2_with_the_windows_known_none_wrong() {
    heldout2().score(true).check(107, 138);
}

#[test]
fn heldout2_without_the_windows_none_wrong() {
    heldout2().score(false).check(73, 138);
}

/// Pi 0.73.1's scenarios: 65 compactions (22 threshold, 26 overflow, 17 manual). Right: the
/// overflow recoveries that retried, and /compact under the threshold.
#[test]
fn pi073_scenarios_with_the_windows_known_none_wrong() {
    scenarios073().score(true).check(27, 65);
}

#[test]
fn pi073_scenarios_without_the_windows_none_wrong() {
    scenarios073().score(false).check(22, 65);
}

/// Pi 0.73.1's held-out set: 142 compactions (34 threshold, 66 overflow, 42 manual).
#[test]
fn pi073_heldout_with_the_windows_known_none_wrong() {
    heldout073().score(true).check(60, 142);
}

#[test]
fn pi073_heldout_without_the_windows_none_wrong() {
    heldout073().score(false).check(41, 142);
}

/// Pi 0.73.1's files are read by its own rules (none of Pi 1.x's signatures), and the rules
/// that decide on them decide as Pi did: overflow_error only with the retried reply after it
/// (overflow), under_threshold (manual). Overflow without the retry (no_retry), silent and
/// filled-window overflow and over the threshold never decide: the recorded run has /compact
/// (auto-compaction off, or a recovery Pi gave up) and Pi's own compaction at those places.
#[test]
fn pi073_rules_are_exercised_and_right() {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut undecided: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for set in [scenarios073(), heldout073()] {
        let got = set.reports(true);
        let truth: BTreeMap<_, _> = set
            .truth()
            .into_iter()
            .map(|t| ((t.file, t.entry), t.reason))
            .collect();
        for (key, r) in &got {
            let rules: Vec<&str> = r["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["rule"].as_str().unwrap())
                .collect();
            for pi1_only in [
                "overflow_recovery",
                "length_overflow",
                "unrecovered_overflow",
                "mid_run",
                "auto_compaction_off",
            ] {
                assert!(!rules.contains(&pi1_only), "{key:?}: {rules:?}");
            }
            if r["basis"] == "inferred" {
                seen.entry(rules[0].to_string())
                    .or_default()
                    .push(truth[key].clone());
                if rules[0] == "overflow_error" {
                    assert_eq!(rules.last(), Some(&"retried"), "{key:?}");
                }
            }
            for rule in [
                "no_retry",
                "silent_overflow",
                "filled_window",
                "over_threshold",
            ] {
                if rules.contains(&rule) && r["basis"] != "inferred" {
                    undecided.entry(rule).or_default().push(truth[key].clone());
                }
            }
            if matches!(
                rules.first(),
                Some(&("silent_overflow" | "filled_window" | "over_threshold"))
            ) {
                assert_eq!(r["basis"], "unknown", "{key:?}");
            }
        }
    }
    for (rule, reason) in [
        ("overflow_error", "overflow"),
        ("under_threshold", "manual"),
        ("no_reply_since", "manual"),
    ] {
        let reasons = seen
            .get(rule)
            .unwrap_or_else(|| panic!("rule {rule} never decides on the 0.73.1 truth"));
        assert!(reasons.iter().all(|r| r == reason), "{rule}: {reasons:?}");
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    // Where a rule is left undecided, Pi gave more than one reason in the recorded run.
    for rule in [
        "no_retry",
        "silent_overflow",
        "filled_window",
        "over_threshold",
    ] {
        let reasons = &undecided[rule];
        assert!(reasons.iter().any(|r| r == "manual"), "{rule}: {reasons:?}");
        assert!(reasons.iter().any(|r| r != "manual"), "{rule}: {reasons:?}");
    }
}

/// What the line a rule cites must be: (entry type, message role, stopReason), each `None`
/// when any will do.
fn cited(rule: &str) -> (&'static str, Option<&'static str>, Option<&'static str>) {
    match rule {
        "overflow_recovery" | "unrecovered_overflow" => ("message", Some("assistant"), None),
        "overflow_error" => ("message", Some("assistant"), Some("error")),
        "filled_window" | "length_stop" => ("message", Some("assistant"), Some("length")),
        "length_overflow" => ("message", Some("assistant"), Some("length")),
        "silent_overflow" => ("message", Some("assistant"), Some("stop")),
        "retried" | "run_continued" | "auto_compaction_off" => ("message", Some("assistant"), None),
        "mid_run" => ("message", Some("toolResult"), None),
        // Rules on the compaction itself (tokensBefore) or an earlier one.
        _ => ("compaction", None, None),
    }
}

/// Every inferred trigger names its rules and the lines they rest on: each cited line is a
/// line of the session holding the entry the rule speaks of (the failed, retried or
/// uncompacted reply, the tool result, the context_edit, the compaction whose tokensBefore
/// is compared, the earlier automatic compaction), and every rule is a row of
/// docs/FORMAT.md's table.
#[test]
fn every_inferred_label_names_its_rule_and_lines() {
    let format = std::fs::read_to_string(root().join("docs/FORMAT.md")).unwrap();
    for set in [
        scenarios(),
        heldout(),
        heldout2(),
        scenarios073(),
        heldout073(),
    ] {
        for known in [true, false] {
            for (key, r) in set.reports(known) {
                let evidence = r["evidence"].as_array().unwrap();
                if r["basis"] == "inferred" {
                    assert!(!evidence.is_empty(), "{key:?}: inferred without evidence");
                }
                let text = std::fs::read_to_string(set.dir.join(&key.0)).unwrap();
                let lines: Vec<Value> = text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                for (k, e) in evidence.iter().enumerate() {
                    let rule = e["rule"].as_str().unwrap();
                    assert!(
                        format.contains(&format!("\n| {rule} |")),
                        "{key:?}: rule {rule} is not in docs/FORMAT.md's table"
                    );
                    let line = e["line"].as_u64().unwrap() as usize;
                    assert!(line >= 1 && line <= lines.len(), "{key:?}: {e}");
                    let entry = &lines[line - 1];
                    assert_eq!(entry["id"], e["entry"], "{key:?}: {e}");
                    // The recovery signature's second clue is the context_edit hiding the reply.
                    let (ty, role, stop) = if rule == "overflow_recovery" && k == 1 {
                        ("context_edit", None, None)
                    } else {
                        cited(rule)
                    };
                    assert_eq!(entry["type"], ty, "{key:?}: {e}");
                    if let Some(role) = role {
                        assert_eq!(entry["message"]["role"], role, "{key:?}: {e}");
                    }
                    if let Some(stop) = stop {
                        assert_eq!(entry["message"]["stopReason"], stop, "{key:?}: {e}");
                    }
                    if matches!(
                        rule,
                        "over_threshold"
                            | "under_threshold"
                            | "model_switch"
                            | "auto_compaction_unproven"
                            | "no_retry"
                    ) {
                        assert_eq!(e["line"], r["line"], "{key:?}: {rule} is on the compaction");
                    }
                }
            }
        }
    }
}

/// The rules that decide on the truth, each with the trigger Pi gave: the overflow recovery
/// signature (the failed reply, the context_edit hiding it, the retried reply), length
/// overflow, mid-run threshold once the run goes on, and /compact below the threshold or after
/// an overflow Pi did not recover from; over the threshold after a reply and silent overflow
/// are listed but never decide.
#[test]
fn each_new_rule_is_exercised_and_right() {
    // rule → the reasons Pi gave where it decided, over both sets.
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for set in [scenarios(), heldout(), heldout2()] {
        let got = set.reports(true);
        let truth: BTreeMap<_, _> = set
            .truth()
            .into_iter()
            .map(|t| ((t.file, t.entry), t.reason))
            .collect();
        for (key, r) in &got {
            let rules: Vec<&str> = r["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["rule"].as_str().unwrap())
                .collect();
            if r["basis"] == "inferred" {
                seen.entry(rules[0].to_string())
                    .or_default()
                    .push(truth[key].clone());
            }
            // A recovery signature decides only with the retried reply after it, mid_run only
            // with the run's next reply.
            if r["trigger"] == "overflow" && rules[0] == "overflow_recovery" {
                assert_eq!(rules.last(), Some(&"retried"), "{key:?}");
            }
            if r["basis"] == "inferred" && rules[0] == "mid_run" {
                assert!(rules.contains(&"run_continued"), "{key:?}");
            }
            // Over the threshold after a reply, and a silent overflow, never decide: /compact
            // with auto-compaction off or after Pi's own attempt failed looks the same.
            if matches!(rules[0], "over_threshold" | "silent_overflow") {
                assert_eq!(r["basis"], "unknown", "{key:?}");
            }
        }
    }
    for (rule, reason) in [
        ("overflow_recovery", "overflow"),
        ("length_overflow", "overflow"),
        ("mid_run", "threshold"),
        ("under_threshold", "manual"),
        ("unrecovered_overflow", "manual"),
    ] {
        let reasons = seen
            .get(rule)
            .unwrap_or_else(|| panic!("rule {rule} never decides on the truth"));
        assert!(reasons.iter().all(|r| r == reason), "{rule}: {reasons:?}");
    }
}

/// The twins of the held-out sets (`truth.mjs --twins SEED 40`, scripts/pi-truth/twins.mjs):
/// for a compaction of a held-out session, the same session made again with one change in
/// what the user did (auto-compaction off and /compact, /compact before the prompt, Esc
/// instead of /compact, auto-compaction on instead of /compact), which Pi wrote the same up to
/// ids and times, and whose compaction Pi gave another reason.
fn twins() -> Set {
    Set {
        dir: root().join("tests/data/truth-twins"),
        truth: "tests/data/truth-twins.jsonl",
        pi: "1.6.0",
    }
}

/// The twins of Pi 0.73.1's held-out set (`truth.mjs --pi 0.73.1 --twins 20261205 40`), made
/// the same way by Pi 0.73.1.
fn twins073() -> Set {
    Set {
        dir: root().join("tests/data/truth073-twins"),
        truth: "tests/data/truth073-twins.jsonl",
        pi: "0.73.1",
    }
}

/// One line of a twins file (`tests/data/truth-twins.jsonl`, `tests/data/truth073-twins.jsonl`),
/// beyond the truth it also is.
struct Twin {
    file: String,
    entry: String,
    reason: String,
    /// The held-out session it is the twin of.
    of: String,
    /// Which compaction of that session (0 for the first in the file).
    compaction: usize,
    /// Pi's reason for that compaction.
    of_reason: String,
}

fn twin_lines(twins: &Set) -> Vec<Twin> {
    let text = std::fs::read_to_string(root().join(twins.truth)).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(
                v["pi"], twins.pi,
                "the twins were written by Pi {}",
                twins.pi
            );
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            Twin {
                file: s("file"),
                entry: s("entry"),
                reason: s("reason"),
                of: s("twin_of"),
                compaction: v["twin_compaction"].as_u64().unwrap() as usize,
                of_reason: s("twin_reason"),
            }
        })
        .collect()
}

/// A session as Pi wrote it, without what differs between two runs that make the same session
/// (twins.mjs `canonical`): ids renumbered in order of appearance, the header's id, times
/// (`timestamp`, `durationMs`) and faux's `api` tag left out.
fn canonical(text: &str) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !matches!(k.as_str(), "timestamp" | "durationMs" | "api"));
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    text.lines()
        .map(|l| {
            let mut e: Value = serde_json::from_str(l).unwrap();
            let m = e.as_object_mut().unwrap();
            if m["type"] == "session" {
                m.remove("id");
            } else {
                let n = format!("#{}", ids.len());
                ids.insert(m["id"].as_str().unwrap().to_string(), n);
                for k in ["id", "parentId", "firstKeptEntryId", "targetId"] {
                    if let Some(new) = m.get(k).and_then(Value::as_str).and_then(|id| ids.get(id)) {
                        m.insert(k.to_string(), Value::String(new.clone()));
                    }
                }
            }
            strip(&mut e);
            e
        })
        .collect()
}

/// The held-out set, of `sets`, that holds a twin's original session.
fn set_of<'a>(twin: &Twin, sets: &'a [Set]) -> &'a Set {
    sets.iter()
        .find(|s| s.dir.join(&twin.of).is_file())
        .unwrap_or_else(|| panic!("{}: no held-out session {}", twin.file, twin.of))
}

/// The id of the `n`th compaction entry of a session.
fn nth_compaction(text: &str, n: usize) -> String {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "compaction")
        .nth(n)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Proof that the file cannot always tell why Pi compacted: each twin is its held-out session
/// up to ids and times, Pi gave the two compactions different reasons, and pi-compactions gives
/// both the same vague trigger (with the windows known and without), so it is wrong on neither.
#[test]
fn twins_are_the_same_file_with_another_reason_and_stay_vague() {
    check_twins(&twins(), &[heldout(), heldout2()], 59);
}

/// The same for Pi 0.73.1's held-out set and its twins.
#[test]
fn pi073_twins_are_the_same_file_with_another_reason_and_stay_vague() {
    check_twins(&twins073(), &[heldout073()], PI073_TWINS);
}

/// Each twin of `twins` (at least `committed` of them) is its session of `sets` up to ids and
/// times, with another reason, and pi-compactions leaves both vague by the same rules.
fn check_twins(twins: &Set, sets: &[Set], committed: usize) {
    let lines = twin_lines(twins);
    assert!(lines.len() >= committed, "the committed twins");
    for known in [true, false] {
        let theirs = twins.reports(known);
        let ours: Vec<_> = sets.iter().map(|s| s.reports(known)).collect();
        for t in &lines {
            let set = set_of(t, sets);
            let original = std::fs::read_to_string(set.dir.join(&t.of)).unwrap();
            let twin = std::fs::read_to_string(twins.dir.join(&t.file)).unwrap();
            assert!(
                canonical(&original) == canonical(&twin),
                "{} is not {} up to ids and times",
                t.file,
                t.of
            );
            let entry = nth_compaction(&original, t.compaction);
            assert_eq!(nth_compaction(&twin, t.compaction), t.entry, "{}", t.file);
            let truth = set.truth();
            let pi = truth
                .iter()
                .find(|x| x.file == t.of && x.entry == entry)
                .unwrap();
            assert_eq!(pi.reason, t.of_reason, "{} {entry}", t.of);
            assert_ne!(t.reason, t.of_reason, "{}: twins differ in reason", t.file);
            let a = ours
                .iter()
                .find_map(|r| r.get(&(t.of.clone(), entry.clone())))
                .unwrap();
            let b = &theirs[&(t.file.clone(), t.entry.clone())];
            let rules = |r: &Value| -> Vec<Value> {
                r["evidence"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["rule"].clone())
                    .collect()
            };
            assert_eq!(a["trigger"], b["trigger"], "{} and {}", t.of, t.file);
            assert_eq!(rules(a), rules(b), "{} and {}", t.of, t.file);
            assert!(
                matches!(a["trigger"].as_str(), Some("unknown" | "automatic")),
                "{} {entry}: {} decided where its twin {} had another reason",
                t.of,
                a["trigger"],
                t.file
            );
        }
    }
}

/// The compactions of the sessions `texts` (name → text) that have a twin in `lines`.
fn twinned(texts: &BTreeMap<String, String>, lines: &[Twin]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|t| texts.contains_key(&t.of))
        .map(|t| (t.of.clone(), nth_compaction(&texts[&t.of], t.compaction)))
        .collect()
}

/// The ceiling: on each held-out set the best any rule reading the file could score without
/// being wrong is the compactions that have no twin. The rules reach it: every compaction they
/// leave vague (with the windows known) has a twin. (Held-out 20261130: 98 of 126, 77.8%;
/// 20261215: 107 of 138, 77.5%; docs/FORMAT.md says what ≥ 90% would need.)
#[test]
fn heldout_sets_are_scored_at_their_ceiling() {
    let lines = twin_lines(&twins());
    for (set, ceiling, total) in [(heldout(), 98, 126), (heldout2(), 107, 138)] {
        let truth = set.truth();
        let got = set.reports(true);
        let texts = set.texts();
        let twinned = twinned(&texts, &lines);
        assert_eq!(truth.len(), total);
        assert_eq!(total - twinned.len(), ceiling, "{}", set.truth);
        for t in &truth {
            let key = (t.file.clone(), t.entry.clone());
            let right = got[&key]["trigger"] == t.reason.as_str();
            assert_eq!(
                right,
                !twinned.contains(&key),
                "{key:?}: right exactly where no twin exists ({})",
                got[&key]["evidence"]
            );
        }
    }
}

/// The committed twins of Pi 0.73.1's held-out set.
const PI073_TWINS: usize = 69;

/// What lies before a compaction of Pi 0.73.1 that is vague and has no twin, read in its
/// session: `/compact` while tools ran (the line before is a reply that called tools: 0.73.1's
/// `compact()` disconnects the session before aborting the run, so the aborted reply and the
/// tool results never reach the file, where Esc writes them), `/compact` before any reply, or
/// `/compact` after a compaction and a model switch with no reply between (Pi refuses
/// `/compact` right after a compaction, "Already compacted", but not after a model_change).
fn untwinned_kind(text: &str, entry: &str) -> &'static str {
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = lines.iter().position(|e| e["id"] == entry).unwrap();
    let before = &lines[..at];
    let last_reply = before
        .iter()
        .rposition(|e| e["type"] == "message" && e["message"]["role"] == "assistant");
    match last_reply {
        None => "before any reply",
        Some(i) if i + 1 == at && before[i]["message"]["stopReason"] == "toolUse" => {
            "while tools ran"
        }
        Some(i)
            if before[i + 1..].iter().any(|e| e["type"] == "compaction")
                && before[i + 1..].iter().any(|e| e["type"] == "model_change") =>
        {
            "after a compaction and a model switch"
        }
        Some(_) => "other",
    }
}

/// Pi 0.73.1's ceiling, measured by its twins (`truth.mjs --pi 0.73.1 --twins 20261205 40`):
/// of the held-out set's 142 compactions, 69 have a twin, so no rule reading the file can get
/// more than 73 right (51.4%) with none wrong. pi-compactions gets 60 (42.3%, windows known):
/// it leaves the 69 with a twin vague, and 13 without one, all `/compact` while tools ran (Pi:
/// manual). The 7 /compact before any reply, or after a compaction and a model switch with no
/// reply between, are decided by no_reply_since (written after this set was made, and checked
/// on one made after it: docs/FORMAT.md, "The ceiling"). The counts of the data are
/// equalities; right is a floor and the vague without a twin a ceiling, kind by kind, so a rule
/// change that loses a right label fails.
#[test]
fn pi073_heldout_ceiling_and_the_distance_to_it() {
    let lines = twin_lines(&twins073());
    let set = heldout073();
    let truth = set.truth();
    let got = set.reports(true);
    let texts = set.texts();
    let twinned = twinned(&texts, &lines);
    assert_eq!(lines.len(), PI073_TWINS);
    assert_eq!(truth.len(), 142);
    assert_eq!(twinned.len(), 69);
    let ceiling = truth.len() - twinned.len();
    assert_eq!(ceiling, 73);
    let (mut right, mut vague) = (0, 0);
    let mut untwinned: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for t in &truth {
        let key = (t.file.clone(), t.entry.clone());
        let r = &got[&key];
        if r["trigger"] == t.reason.as_str() {
            assert!(!twinned.contains(&key), "{key:?}: right, yet it has a twin");
            right += 1;
            continue;
        }
        // Not wrong (pi073_heldout_with_the_windows_known_none_wrong): vague.
        vague += 1;
        if !twinned.contains(&key) {
            assert_eq!(t.reason, "manual", "{key:?}: vague without a twin");
            untwinned
                .entry(untwinned_kind(&texts[&t.file], &t.entry))
                .or_default()
                .push(format!("{key:?} ({})", r["evidence"]));
        }
    }
    let count = |kind: &str| untwinned.get(kind).map_or(0, Vec::len);
    let without: usize = untwinned.values().map(Vec::len).sum();
    assert_eq!(right + vague, truth.len());
    assert_eq!(right + without, ceiling, "right and vague without a twin");
    assert!(right >= 60, "{right} right, fewer than 60");
    assert!(
        without <= 13,
        "{without} vague without a twin: {untwinned:#?}"
    );
    for (kind, most) in [
        ("while tools ran", 13),
        ("before any reply", 0),
        ("after a compaction and a model switch", 0),
    ] {
        assert!(count(kind) <= most, "{kind}: {:#?}", untwinned[kind]);
    }
    assert_eq!(count("other"), 0, "{:#?}", untwinned.get("other"));
}
