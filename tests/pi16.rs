//! Pi 1.6.0 as the authority (issue 13). `scripts/pi16` wrote the fixtures `fixtures/pi16-*.jsonl`
//! with Pi 1.6.0's own SessionManager, and recorded Pi 1.6.0's answers for every fixture and
//! corpus file in `tests/data/pi16-reference-{fixtures,corpus}.jsonl`: the lines of the branch
//! `getBranch()` returns, and the tokens and cost `AgentSession.getSessionStats()` reports.
//! pi-branch must keep that branch; pi-usage's per-session totals must equal those stats.

use crate::util::*;
use serde_json::{json, Value};
use std::path::Path;

/// Fixtures where pi-branch departs from Pi on purpose, each with the contract that says so
/// (docs/FORMAT.md, pi-branch section). The test checks that each still departs, so the list
/// cannot outlive its reason.
const DELIBERATE: &[(&str, &str)] = &[
    (
        "two-sessions.jsonl",
        "a second header starts a new session in a stream (Pi skips it and walks on)",
    ),
    (
        "tools-two-sessions.jsonl",
        "a second header starts a new session in a stream (Pi skips it and walks on)",
    ),
    (
        "idless-leaf-empty-id.jsonl",
        "an empty id is no id: the leaf is the last entry with one (Pi shows an empty conversation)",
    ),
    (
        "idless-leaf-number.jsonl",
        "an id that is a number is no id: the leaf is the last entry with a string id (Pi's is the entry of id 7; the lines are the same)",
    ),
    (
        "omp-session.jsonl",
        "oh-my-pi's title slot comes before the header: oh-my-pi reads the file, Pi refuses it",
    ),
    (
        "omp-titled-named.jsonl",
        "oh-my-pi's title slot comes before the header: oh-my-pi reads the file, Pi refuses it",
    ),
    (
        "omp-untitled.jsonl",
        "oh-my-pi's title slot comes before the header: oh-my-pi reads the file, Pi refuses it",
    ),
    (
        "idless-entries.jsonl",
        "id-less entries stay where they stand unless they hang off an abandoned branch (Pi drops them)",
    ),
    (
        "compaction-v1-array-line.jsonl",
        "a line holding a JSON array is reported and skipped (not_object), as every tool skips it; Pi's loader keeps it as an entry of the v1 log (pi-compactions counts it for firstKeptEntryIndex)",
    ),
];

fn reference(name: &str) -> Vec<Value> {
    let path = root().join("tests/data").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The bytes of the given 1-based physical lines of `text`, each ending in `\n` (pi-branch
/// adds the newline a last line lacks).
fn physical_lines(text: &[u8], nums: &[Value]) -> Vec<u8> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let mut out = Vec::new();
    for n in nums {
        let l = lines[n.as_u64().unwrap() as usize - 1];
        out.extend_from_slice(l);
        if !l.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    out
}

/// Whether pi-branch on `path` gives Pi 1.6.0's answer `r`; the reason when it does not.
fn branch_disagreement(path: &Path, r: &Value) -> Option<String> {
    let o = cmd("pi-branch").arg(path).run();
    if o.status != 0 && o.status != 2 {
        return Some(format!("status {}", o.status));
    }
    if r["hang"] == true {
        // Pi's getBranch() never returns; pi-branch reports the cycle and stops.
        return (o.status != 2 || !o.stderr.contains("parentId cycle"))
            .then(|| format!("Pi hangs; pi-branch said: {}", o.stderr));
    }
    if r["accepted"] == false {
        // Issue 14: records that come with no header before them are a fragment for pi-branch
        // (its branch, exit 0, a note), where Pi refuses the file: Pi has no branch to compare.
        let text = std::fs::read(path).unwrap();
        let first: Option<Value> = text
            .split(|&b| b == b'\n')
            .find_map(|l| serde_json::from_slice(l).ok());
        if first.as_ref().is_some_and(is_pi_entry) {
            return (o.status != 0 || o.stdout.is_empty() || !o.stderr.contains("fragment"))
                .then(|| format!("a fragment: status {}, {}", o.status, o.stderr));
        }
        return (o.status != 2 || !o.stdout.is_empty())
            .then(|| "Pi refuses the file; pi-branch must report it and write nothing".into());
    }
    let want = physical_lines(
        &std::fs::read(path).unwrap(),
        r["lines"].as_array().unwrap(),
    );
    if o.stdout != want {
        return Some("the branch differs".into());
    }
    // The leaf pi-branch names is Pi's leaf, on the last line of the branch. A version 1
    // session has none: Pi invents its ids as it loads it, so the id written on the leaf's
    // line (the oracle's `leaf`, when the line has one) is not Pi's either.
    let info = cmd("pi-branch").arg("--info").arg(path).run().records();
    let v1 = info.len() == 1 && info[0]["version"] == 1 && info[0]["leaf"].is_null();
    if info.len() != 1 || (info[0]["leaf"] != r["leaf"] && !v1) {
        return Some(format!(
            "leaf {:?}, Pi's {}",
            info.first().map(|i| &i["leaf"]),
            r["leaf"]
        ));
    }
    let lines = r["lines"].as_array().unwrap();
    if lines.len() > 1 && info[0]["leaf_line"] != *lines.last().unwrap() {
        return Some(format!("leaf_line {}", info[0]["leaf_line"]));
    }
    None
}

#[test]
fn every_pi16_fixture_has_pi_16_answers() {
    let recorded: Vec<String> = reference("pi16-reference-fixtures.jsonl")
        .iter()
        .map(|r| r["file"].as_str().unwrap().to_string())
        .collect();
    let mut written = 0;
    for e in std::fs::read_dir(root().join("fixtures")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.starts_with("pi16-") && name.ends_with(".jsonl") {
            assert!(
                recorded.contains(&name),
                "{name}: run scripts/pi16 (README)"
            );
            written += 1;
        }
    }
    assert!(written >= 5, "the Pi 1.6.0 fixtures are missing");
}

/// Every fixture, old and new: pi-branch keeps the branch Pi 1.6.0 keeps (except the
/// deliberate departures, which must still depart).
#[test]
fn fixture_branches_match_pi_1_6_0() {
    let mut checked = 0;
    for r in reference("pi16-reference-fixtures.jsonl") {
        let name = r["file"].as_str().unwrap();
        let path = fixture(name);
        assert!(path.exists(), "{name}: recorded but absent");
        let disagreement = branch_disagreement(&path, &r);
        match DELIBERATE.iter().find(|(f, _)| *f == name) {
            Some((_, why)) => assert!(
                disagreement.is_some(),
                "{name}: now agrees with Pi; drop it from DELIBERATE ({why})"
            ),
            None => {
                assert!(disagreement.is_none(), "{name}: {}", disagreement.unwrap());
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} fixtures checked");
}

/// Several roots (resetLeaf, branchWithSummary to null), and a leaf that is a label entry:
/// Pi's leaf is the last entry of the file, whatever its type.
#[test]
fn pi16_roots_keeps_the_last_entrys_chain() {
    let info = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("pi16-roots.jsonl"))
        .ok()
        .records();
    assert_eq!(info[0]["leaf"], "53cbcb8c");
    assert_eq!(info[0]["leaves"], 5);
    let roots = cmd("pi-branch")
        .arg("--leaves")
        .arg(fixture("pi16-roots.jsonl"))
        .ok()
        .records();
    let types: Vec<&str> = roots
        .iter()
        .map(|l| l["entry_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["label", "message", "message", "usage", "label"]);
}

/// The user navigated (`branch()`, nothing written) and quit: on reload the leaf is the last
/// line, a context_edit on the abandoned path, not where the user stood.
#[test]
fn pi16_navigated_away_ends_at_the_context_edit() {
    let o = cmd("pi-branch")
        .arg("--info")
        .arg(fixture("pi16-navigated-away.jsonl"))
        .ok();
    let r = &o.records()[0];
    assert_eq!(r["leaf"], "fcc93b8f");
    assert_eq!(
        (r["kept"].as_u64(), r["omitted"].as_u64()),
        (Some(3), Some(3))
    );
}

/// Calls `check` with each corpus file that has a Pi 1.6.0 reference record, and the record;
/// how many were checked. `None` when the corpus is absent.
fn each_corpus_reference(mut check: impl FnMut(&Path, &Value) -> bool) -> Option<usize> {
    let Some(corpus) = corpus() else {
        eprintln!("corpus absent: skipped");
        return None;
    };
    let mut checked = 0;
    for r in reference("pi16-reference-corpus.jsonl") {
        let path = corpus.join(r["file"].as_str().unwrap());
        if path.exists() && check(&path, &r) {
            checked += 1;
        }
    }
    Some(checked)
}

/// The corpus: pi-branch keeps the branch Pi 1.6.0 keeps on every real file.
#[test]
fn corpus_branches_match_pi_1_6_0() {
    let checked = each_corpus_reference(|path, r| {
        if let Some(why) = branch_disagreement(path, r) {
            panic!("{}: {why}", path.display());
        }
        true
    });
    if let Some(checked) = checked {
        assert!(checked > 100, "only {checked} corpus files checked");
    }
}

/// Whether pi-usage's default record for `path` has the totals of Pi's session stats `stats`:
/// input, output, cacheRead, cacheWrite and their sum exactly, cost within 1e-9 (Pi adds
/// doubles, pi-usage exact decimals), and per model the tokens and cost of Pi's own breakdown
/// (`getUsageCostBreakdown`: provider/model, and "Tools/summaries" for the calls without a
/// model, which pi-usage groups under a null provider and model). The reason when it does not.
fn usage_disagreement(path: &Path, stats: &Value) -> Option<String> {
    let records = cmd("pi-usage").arg("--json").arg(path).run().records();
    if records.len() != 1 {
        return Some(format!("{} records, not one", records.len()));
    }
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1e-9);
    let t = &records[0]["total"];
    for (ours, pis) in [
        ("input", "input"),
        ("output", "output"),
        ("cache_read", "cacheRead"),
        ("cache_write", "cacheWrite"),
        ("tokens", "total"),
    ] {
        if t[ours] != stats["tokens"][pis] {
            return Some(format!(
                "{ours} {} ≠ Pi's {}",
                t[ours], stats["tokens"][pis]
            ));
        }
    }
    let (cost, pi_cost) = (
        t["cost"].as_f64().unwrap_or(0.0),
        stats["cost"].as_f64().unwrap(),
    );
    if !near(cost, pi_cost) {
        return Some(format!("cost {cost} ≠ Pi's {pi_cost}"));
    }
    let mut ours: Vec<(String, u64, f64)> = records[0]["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let key = match (m["provider"].as_str(), m["model"].as_str()) {
                (None, None) => "Tools/summaries".to_string(),
                (p, m) => format!("{}/{}", p.unwrap_or("undefined"), m.unwrap_or("undefined")),
            };
            (
                key,
                m["tokens"].as_u64().unwrap(),
                m["cost"].as_f64().unwrap_or(0.0),
            )
        })
        .filter(|(_, tokens, cost)| *tokens > 0 || *cost > 0.0)
        .collect();
    let mut pis: Vec<(String, u64, f64)> = stats["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let key = b["key"].as_str().unwrap().to_string();
            (
                key,
                b["tokens"].as_u64().unwrap(),
                b["cost"].as_f64().unwrap(),
            )
        })
        .collect();
    ours.sort_by(|a, b| a.0.cmp(&b.0));
    pis.sort_by(|a, b| a.0.cmp(&b.0));
    let same = ours.len() == pis.len()
        && ours
            .iter()
            .zip(&pis)
            .all(|(a, b)| a.0 == b.0 && a.1 == b.1 && near(a.2, b.2));
    (!same).then(|| format!("by model {ours:?} ≠ Pi's {pis:?}"))
}

/// pi-usage's default record for each Pi 1.6.0 session has the totals and per-model figures
/// Pi's own session stats report. Pi counts the whole file (every branch) and every source:
/// assistant messages, `usage` entries, tool results' usage, compaction and branch_summary usage.
#[test]
fn pi16_usage_totals_equal_pi_session_stats() {
    let mut checked = 0;
    for r in reference("pi16-reference-fixtures.jsonl") {
        let name = r["file"].as_str().unwrap();
        if !name.starts_with("pi16-") {
            continue;
        }
        if let Some(why) = usage_disagreement(&fixture(name), &r["stats"]) {
            panic!("{name}: {why}");
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} Pi 1.6.0 sessions checked");
}

/// The same on every corpus file Pi 1.6.0 can total (its stats throw on an assistant message
/// without `usage`; those are recorded as errors and skipped here).
#[test]
fn corpus_usage_totals_equal_pi_session_stats() {
    let checked = each_corpus_reference(|path, r| {
        if r["stats"].is_null() {
            return false;
        }
        if let Some(why) = usage_disagreement(path, &r["stats"]) {
            panic!("{}: {why}", path.display());
        }
        true
    });
    if let Some(checked) = checked {
        assert!(checked > 100, "only {checked} corpus files checked");
    }
}

/// `--tree` says what Pi 1.x's new entries and messages are.
#[test]
fn tree_names_the_pi_1x_entries() {
    let tree = |name: &str| {
        cmd("pi-branch")
            .args(["--tree", "--fold", "0"])
            .arg(fixture(name))
            .ok()
            .out()
    };
    let t = tree("pi16-usage-sources.jsonl");
    for want in [
        "● d6db22e0 system (+3 tools)\n",
        "● da6aa4c2 system (−1 tool)\n",
        "● c9d59b52 usage cache_warm claude-sonnet-4-5-20250929\n",
        "● acf1759a usage prompt_probe gpt-5-mini\n",
        "● 2a3ed822 context_edit: 9b15aeee replaced\n",
        "● 46fa1ade context_edit: fc472cca omitted\n",
        "● da2ee78f assistant (deferred)\n",
        "● 2cd960ee compaction (48213 tokens before)\n",
        "● 351d8f15 compaction (31750 tokens before), keeps nothing\n",
    ] {
        assert!(t.contains(want), "{want:?} not in\n{t}");
    }
    let t = tree("pi16-roots.jsonl");
    for want in [
        // The active branch stays in column 0 past its branch point.
        "\n● ccf352ea branch_summary (from 6cdc9949)\n",
        "○ 1e585b05 branch_summary (from root)\n",
        "● 53cbcb8c label cleared on 35d1ae7f  ← leaf (active)\n",
    ] {
        assert!(t.contains(want), "{want:?} not in\n{t}");
    }
}

/// The files Pi 1.6.0 wrote, as the corpus tests read the real files, but stricter: these are
/// clean sessions, so every tool reads each without a diagnostic, from the file and from
/// stdin, and pi-sessions finds each `ok`.
#[test]
fn every_tool_reads_the_pi16_fixtures_cleanly() {
    let files: Vec<String> = reference("pi16-reference-fixtures.jsonl")
        .iter()
        .map(|r| r["file"].as_str().unwrap().to_string())
        .filter(|f| f.starts_with("pi16-"))
        .collect();
    for name in &files {
        for tool in ["pi-branch", "pi-usage", "pi-tools", "pi-compactions"] {
            let o = cmd(tool).arg(fixture(name)).run();
            assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{tool} {name}");
            let piped = cmd(tool).stdin(read_fixture(name)).run();
            assert_eq!(
                (piped.status, piped.stderr.as_str()),
                (0, ""),
                "{tool} < {name}"
            );
        }
    }
    let sessions = cmd("pi-sessions")
        .args(["--json", "--dir"])
        .arg(root().join("fixtures"))
        .run()
        .records();
    for name in &files {
        let found = sessions
            .iter()
            .find(|r| r["path"].as_str().unwrap().ends_with(&format!("/{name}")));
        assert_eq!(
            found.map(|r| &r["status"]),
            Some(&Value::from("ok")),
            "{name}"
        );
    }
}

/// The two recorded oracles agree on the corpus (what scripts/pi16/README.md and docs/FORMAT.md
/// say): every file gets the same lines, leaf and acceptance from Pi 0.73.1 and Pi 1.6.0, so a
/// pi-branch that matches one on real files matches the other.
#[test]
fn pi_0_73_1_and_1_6_0_choose_the_same_corpus_branches() {
    let old = reference("pi-reference-branches.jsonl");
    let new = reference("pi16-reference-corpus.jsonl");
    assert_eq!(old.len(), new.len(), "both recorded over the same corpus");
    for (o, n) in old.iter().zip(&new) {
        assert_eq!(o["file"], n["file"]);
        assert_eq!(o["accepted"], n["accepted"], "{}", o["file"]);
        if o["accepted"] == true {
            assert_eq!(
                (&o["lines"], &o["leaf"]),
                (&n["lines"], &n["leaf"]),
                "{}",
                o["file"]
            );
        }
    }
}

/// Types, roles and keys written with escapes (`"m\u0065ssage"`, `"r\u006fle"`, a header of
/// type `"s\u0065ssion"`) are read as Pi's `JSON.parse` reads them: the branch Pi keeps (in
/// `fixture_branches_match_pi_1_6_0`), Pi's session stats, the tool call joined with its
/// result, the compaction, the label, the messages counted, and nothing reported.
#[test]
fn escaped_names_are_read_as_pi_reads_them() {
    let path = fixture("escaped-names.jsonl");
    let pi = reference("pi16-reference-fixtures.jsonl")
        .into_iter()
        .find(|r| r["file"] == "escaped-names.jsonl")
        .expect("Pi's answer is recorded");
    assert_eq!(usage_disagreement(&path, &pi["stats"]), None);
    let usage = cmd("pi-usage").arg("--json").arg(&path).ok().records();
    assert_eq!(
        usage[0]["total"]["count"], 3,
        "two messages and a usage entry"
    );
    let calls = cmd("pi-tools").arg(&path).ok().records();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (
            &calls[0]["name"],
            &calls[0]["status"],
            &calls[0]["result"]["line"]
        ),
        (&json!("bash"), &json!("ok"), &json!(4))
    );
    let compactions = cmd("pi-compactions").arg(&path).ok().records();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["entry"], "f6");
    let labelled = cmd("pi-branch")
        .args(["--label", "listing", "--info"])
        .arg(&path)
        .ok()
        .records();
    assert_eq!(labelled[0]["leaf"], "b2");
    let file = cmd("pi-sessions").arg("--json").arg(&path).ok().records();
    assert_eq!(
        (
            &file[0]["status"],
            &file[0]["user_messages"],
            &file[0]["assistant_messages"]
        ),
        (&json!("ok"), &json!(2), &json!(2))
    );
}

/// Ids that differ only in lone surrogate escapes (`"\ud800"`, `"\ud801"`) and a written
/// U+FFFD are three ids to Pi, whose `JSON.parse` keeps a lone surrogate as a code unit of its
/// own: Pi's branch (recorded), no duplicate id, three leaves, the label on `"\ud800"` alone
/// (Pi 1.6.0's `getLabel("\ud800")` is "first", `getLabel("\ud801")` and that of U+FFFD
/// undefined, and its `getTree()` gives `r1` three children), and each call joined to its own
/// result; the same after `pi-redact --rename-ids`.
#[test]
fn ids_differing_only_in_lone_surrogates_are_kept_apart_as_pi_keeps_them() {
    let path = fixture("ids-lone-surrogates.jsonl");
    let pi = reference("pi16-reference-fixtures.jsonl")
        .into_iter()
        .find(|r| r["file"] == "ids-lone-surrogates.jsonl")
        .expect("Pi's answer is recorded");
    assert_eq!(
        pi["lines"],
        json!([1, 2, 4, 7, 8, 9]),
        "Pi's branch, recorded"
    );
    assert_eq!(branch_disagreement(&path, &pi), None);
    let tree_of = |path: &Path| {
        let text = std::fs::read(path).unwrap();
        let branch = cmd("pi-branch").arg(path).ok().stdout;
        assert_eq!(
            branch,
            physical_lines(&text, pi["lines"].as_array().unwrap())
        );
        let o = cmd("pi-branch").arg("--info").arg(path).run();
        assert_eq!((o.status, o.stderr.as_str()), (0, ""), "no duplicate id");
        let info = &o.records()[0];
        assert_eq!((&info["kept"], &info["leaves"]), (&json!(5), &json!(3)));
        let leaves: Vec<Value> = cmd("pi-branch")
            .arg("--leaves")
            .arg(path)
            .ok()
            .records()
            .iter()
            .map(|l| l["line"].clone())
            .collect();
        assert_eq!(leaves, [5, 6, 9]);
        let o = cmd("pi-tools").arg(path).run();
        assert_eq!((o.status, o.stderr.as_str()), (0, ""));
        let joined: Vec<(Value, Value, Value)> = o
            .records()
            .iter()
            .map(|c| {
                (
                    c["line"].clone(),
                    c["status"].clone(),
                    c["result"]["line"].clone(),
                )
            })
            .collect();
        assert_eq!(
            joined,
            [
                (json!(3), json!("ok"), json!(6)),
                (json!(4), json!("ok"), json!(7)),
                (json!(5), json!("no_result"), Value::Null),
            ]
        );
        let file = cmd("pi-sessions").arg("--json").arg(path).ok().records();
        assert_eq!(file[0]["leaves"], 3);
    };
    tree_of(&path);
    // The label names `"\ud800"` (line 3) alone, which is shown as U+FFFD.
    let labelled = cmd("pi-branch")
        .args(["--label", "first", "--info"])
        .arg(&path)
        .ok()
        .records();
    assert_eq!(
        (
            &labelled[0]["leaf_line"],
            &labelled[0]["kept"],
            &labelled[0]["leaf"]
        ),
        (&json!(3), &json!(2), &json!("\u{FFFD}"))
    );
    let t = TempDir::new("lone-surrogates");
    let renamed = cmd("pi-redact").arg("--rename-ids").arg(&path).ok().stdout;
    tree_of(&t.write("renamed.jsonl", &renamed));
}

/// A header whose `version` is not a count (a whole number, 0 or more) is read as Pi reads it (its
/// migration compares it as JavaScript does), and reported: `"3"` is a version 3 tree, whose
/// abandoned entry is left out (the branch Pi keeps: `fixture_branches_match_pi_1_6_0`);
/// `true` is version 1, a linear log kept whole.
#[test]
fn header_versions_not_written_as_whole_numbers_are_read_as_pi_reads_them() {
    for (name, written, version, kept) in [
        ("header-version-not-whole.jsonl", "\"3\"", 3, 3),
        ("header-version-true.jsonl", "true", 1, 4),
    ] {
        let o = cmd("pi-branch").arg("--info").arg(fixture(name)).run();
        assert_eq!(o.status, 2, "{name}");
        assert_eq!(
            o.stderr_lines(),
            [format!(
                "pi-branch: {}:1: version {written} is not a count; read as version {version}, as Pi reads it",
                fixture(name).display()
            )],
            "{name}"
        );
        let info = &o.records()[0];
        assert_eq!(
            (&info["version"], &info["kept"]),
            (&json!(version), &json!(kept)),
            "{name}"
        );
        let file = cmd("pi-sessions")
            .arg("--json")
            .arg(fixture(name))
            .run()
            .records();
        assert_eq!(
            (&file[0]["status"], &file[0]["version"]),
            (&json!("ok"), &json!(version)),
            "{name}"
        );
    }
}

/// The last entry's id is not a string id: pi-branch's leaf is the last entry with one, and
/// the diagnostic says what Pi does instead, which depends on the id: an empty one is none
/// (Pi shows an empty conversation), a number Pi follows (Pi's leaf is that entry).
#[test]
fn a_last_entry_without_a_string_id_says_what_pi_does() {
    for (name, why, pi) in [
        (
            "idless-leaf-empty-id.jsonl",
            "id is empty; entry treated as id-less",
            " has no id (Pi would show an empty conversation)",
        ),
        (
            "idless-leaf-number.jsonl",
            "id is a number, not a string; entry treated as id-less",
            "'s id is a number (Pi takes it as its leaf)",
        ),
    ] {
        let path = fixture(name);
        let o = cmd("pi-branch").arg("--info").arg(&path).run();
        assert_eq!(o.status, 2, "{name}");
        let at = format!("pi-branch: {}:5: ", path.display());
        assert_eq!(
            o.stderr_lines(),
            [
                format!("{at}{why}"),
                format!(
                    "{at}the last entry{pi}; the leaf is the last entry with a string id, line 4"
                ),
            ],
            "{name}"
        );
        assert_eq!(o.records()[0]["leaf"], "c3", "{name}");
    }
}
