//! Issue 15: the same words for the same things across tools. One list says what each table
//! heading of pi-usage and pi-sessions means and which JSON field carries the same thing; the
//! tests check the headings the tools print against it, and that a word shared by two tools
//! gives the same value for the same file. Also: `--help` needs no man page.

use crate::util::{cmd, fixture, fixture_files, TempDir};
use serde_json::Value;
use std::collections::BTreeSet;

/// One word: the heading tables print, what it means, and the JSON fields that carry it
/// (`tool:field`, a `.` for a member of an object, `[]` for each element of an array).
struct Word {
    heading: &'static str,
    meaning: &'static str,
    fields: &'static [&'static str],
}

/// Every heading of pi-usage's and pi-sessions' tables, once.
const WORDS: &[Word] = &[
    Word {
        heading: "Session",
        meaning: "the session's id (the header's id)",
        fields: &["pi-usage:session", "pi-sessions:session"],
    },
    Word {
        heading: "Project",
        meaning: "the header's cwd, else the project the file's --<encoded cwd>-- folder names",
        fields: &["pi-usage:project", "pi-sessions:project"],
    },
    Word {
        heading: "Models",
        meaning: "the models of the counted calls (responseModel, else model)",
        fields: &["pi-usage:by_model[].model"],
    },
    Word {
        heading: "Cost",
        meaning: "the recorded cost of the counted calls",
        fields: &["pi-usage:total.cost"],
    },
    Word {
        heading: "Assistant msgs",
        meaning:
            "assistant messages (each one call of a model; pi-usage counts a repeated call once)",
        fields: &["pi-usage:messages.count", "pi-sessions:assistant_messages"],
    },
    Word {
        heading: "Messages",
        meaning: "message entries of every role",
        fields: &["pi-sessions:messages"],
    },
    Word {
        heading: "First",
        meaning: "the time of the first counted call",
        fields: &["pi-usage:first"],
    },
    Word {
        heading: "Last",
        meaning: "the time of the last counted call",
        fields: &["pi-usage:last"],
    },
    Word {
        heading: "Summaries",
        meaning: "summarization calls (compaction and branch summary usage)",
        fields: &["pi-usage:summarization.count"],
    },
    Word {
        heading: "Usage entries",
        meaning: "usage entries",
        fields: &["pi-usage:usage_entries.count"],
    },
    Word {
        heading: "Tool results",
        meaning: "tool results with a usage",
        fields: &["pi-usage:tool_results.count"],
    },
    Word {
        heading: "Input",
        meaning: "input tokens",
        fields: &["pi-usage:total.input"],
    },
    Word {
        heading: "Output",
        meaning: "output tokens",
        fields: &["pi-usage:total.output"],
    },
    Word {
        heading: "Cache read",
        meaning: "cache-read tokens",
        fields: &["pi-usage:total.cache_read"],
    },
    Word {
        heading: "Cache write",
        meaning: "cache-write tokens",
        fields: &["pi-usage:total.cache_write"],
    },
    Word {
        heading: "Total tokens",
        meaning: "total tokens",
        fields: &["pi-usage:total.total_tokens"],
    },
    Word {
        heading: "Provider",
        meaning: "the calls' provider (--by provider)",
        fields: &["pi-usage:provider"],
    },
    Word {
        heading: "Model",
        meaning: "one model (--by model)",
        fields: &["pi-usage:model"],
    },
    Word {
        heading: "Day",
        meaning: "a day (--by day)",
        fields: &["pi-usage:day"],
    },
    Word {
        heading: "Week",
        meaning: "an ISO week (--by week)",
        fields: &["pi-usage:week"],
    },
    Word {
        heading: "Month",
        meaning: "a month (--by month)",
        fields: &["pi-usage:month"],
    },
    Word {
        heading: "Age",
        meaning: "time since the session was last active",
        fields: &["pi-sessions:modified"],
    },
    Word {
        heading: "Size",
        meaning: "the file's size",
        fields: &["pi-sessions:bytes"],
    },
    Word {
        heading: "Name",
        meaning: "the session's name",
        fields: &["pi-sessions:name"],
    },
];

/// What a table cell holds when a label is unknown, and when a number or time is.
const NO_LABEL: &str = "(none)";
const NO_VALUE: &str = "-";

/// The headings of a table: its first line, split at runs of two spaces or more.
fn headings(table: &str) -> Vec<String> {
    let first = table.lines().next().unwrap_or_default();
    first
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn word(heading: &str) -> &'static Word {
    WORDS
        .iter()
        .find(|w| w.heading == heading)
        .unwrap_or_else(|| panic!("heading {heading:?} is not in WORDS: give it a meaning"))
}

fn usage_table(args: &[&str], files: &[&std::path::Path]) -> String {
    let o = cmd("pi-usage")
        .arg("--table")
        .args(args)
        .args(files)
        .env("COLUMNS", "1000")
        .run();
    o.out()
}

fn sessions_table(args: &[&str], dir: &std::path::Path) -> String {
    let o = cmd("pi-sessions")
        .arg("--table")
        .args(args)
        .arg(dir)
        .env("COLUMNS", "1000")
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    o.out()
}

/// A JSON field of `rec` by its path in [`Word::fields`] (after the `tool:`); `[]` collects
/// the member of every element.
fn field(rec: &Value, path: &str) -> Option<Value> {
    let mut cur = vec![rec.clone()];
    for part in path.split('.') {
        let (name, each) = match part.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (part, false),
        };
        let mut next = Vec::new();
        for v in cur {
            let m = v.get(name)?.clone();
            if each {
                next.extend(m.as_array()?.iter().cloned());
            } else {
                next.push(m);
            }
        }
        cur = next;
    }
    Some(if path.contains("[]") {
        Value::Array(cur)
    } else {
        cur.pop()?
    })
}

/// Every heading pi-usage and pi-sessions print is in the list, once, and the list names only
/// fields the tools write.
#[test]
fn every_heading_has_one_meaning() {
    let all = [
        fixture("usage-basic.jsonl"),
        fixture("pi16-usage-sources.jsonl"),
    ];
    let files: Vec<&std::path::Path> = all.iter().map(|p| p.as_path()).collect();
    let mut seen = BTreeSet::new();
    for by in [
        "session", "model", "provider", "day", "week", "month", "project",
    ] {
        for h in headings(&usage_table(&["--by", by, "--total"], &files)) {
            seen.insert(word(&h).heading);
        }
    }
    for h in headings(&sessions_table(&[], &fixture("sessions-tree"))) {
        seen.insert(word(&h).heading);
    }
    let listed: BTreeSet<&str> = WORDS.iter().map(|w| w.heading).collect();
    assert_eq!(listed.len(), WORDS.len(), "a heading is listed twice");
    assert_eq!(seen, listed, "a listed heading no table prints");
    // The fields named are fields the tools write.
    let usage = cmd("pi-usage")
        .args(["--json", "--by", "session"])
        .arg(fixture("usage-basic.jsonl"))
        .run()
        .records();
    let sessions = cmd("pi-sessions")
        .arg("--json")
        .arg(fixture("usage-basic.jsonl"))
        .run()
        .records();
    for w in WORDS {
        for f in w.fields {
            let (tool, path) = f.split_once(':').unwrap();
            let rec = if tool == "pi-usage" {
                &usage[0]
            } else {
                &sessions[0]
            };
            assert!(field(rec, path).is_some(), "{f} ({})", w.meaning);
        }
    }
}

/// A word two tools share means the same there: for each single-session fixture, the fields
/// the list gives for it carry the same value in pi-usage's record and pi-sessions' record,
/// and pi-sessions' table shows the Cost and Models pi-usage's table shows for that file.
#[test]
fn shared_words_give_the_same_values() {
    let mut compared = 0;
    for f in fixture_files() {
        let sessions = cmd("pi-sessions").arg("--json").arg(&f).run().records();
        let usage = cmd("pi-usage").arg("--json").arg(&f).run().records();
        if sessions.len() != 1 || sessions[0]["headers"] != 1 || usage.len() != 1 {
            continue;
        }
        for w in WORDS {
            let (Some(u), Some(s)) = (
                w.fields.iter().find(|f| f.starts_with("pi-usage:")),
                w.fields.iter().find(|f| f.starts_with("pi-sessions:")),
            ) else {
                continue;
            };
            let uv = field(&usage[0], &u["pi-usage:".len()..]);
            let sv = field(&sessions[0], &s["pi-sessions:".len()..]);
            if w.heading == "Assistant msgs" && usage[0]["duplicates"] != 0 {
                // pi-usage counts a repeated call once (and says so in `duplicates`);
                // pi-sessions counts the entries.
                continue;
            }
            assert_eq!(uv, sv, "{}: {} ({})", f.display(), w.heading, w.meaning);
        }
        let u = usage_table(&["--by", "session"], &[&f]);
        let s = sessions_table(&[], &f);
        for h in ["Cost", "Models"] {
            assert_eq!(
                cell(&u, h, 2),
                cell(&s, h, 1),
                "{}: {h}\n{u}\n{s}",
                f.display()
            );
        }
        compared += 1;
    }
    assert!(compared >= 40, "only {compared} fixtures compared");
}

/// The cell under `heading` in row `row` of a table (the headings are row 0). Columns are
/// two spaces apart and no cell of the rows compared is empty or holds two spaces.
fn cell(table: &str, heading: &str, row: usize) -> String {
    let i = headings(table).iter().position(|h| h == heading).unwrap();
    let line = table.lines().nth(row).unwrap();
    let cells = headings(line);
    cells.get(i).cloned().unwrap_or_default()
}

/// What is unknown reads the same in both tables: a label `(none)`, a number or time `-`. A
/// header without `cwd` outside any project folder has no project in either tool; inside one,
/// both tools name the project the folder stands for.
#[test]
fn unknown_reads_the_same_and_projects_agree() {
    let t = TempDir::new("words");
    let plain = t.write(
        "no-cwd.jsonl",
        "{\"type\":\"session\",\"version\":3,\"id\":\"s-nocwd\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\n\
         {\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    let u = usage_table(&[], &[&plain]);
    let s = sessions_table(&[], &plain);
    assert_eq!(cell(&u, "Project", 2), NO_LABEL, "{u}");
    assert_eq!(cell(&s, "Project", 1), NO_LABEL, "{s}");
    assert_eq!(cell(&s, "Name", 1), NO_LABEL, "{s}");
    assert_eq!(cell(&u, "First", 2), NO_VALUE, "{u}");
    assert_eq!(cell(&u, "Models", 2), NO_VALUE, "{u}");
    assert_eq!(cell(&s, "Models", 1), NO_VALUE, "{s}");
    // The tree fixture's session has no cwd: both tools decode its folder.
    let tree = fixture(
        "sessions-tree/--nonexistent-pi-jsonl-tree--/2026-03-01T10-00-00-000Z_s-tree.jsonl",
    );
    let su = cmd("pi-usage").arg("--json").arg(&tree).run().records();
    let ss = cmd("pi-sessions").arg("--json").arg(&tree).run().records();
    assert_eq!(ss[0]["project_source"], "decoded_partial");
    assert_eq!(su[0]["project"], ss[0]["project"]);
    assert_eq!(su[0]["project"], "/nonexistent-pi-jsonl-tree");
    // The header's cwd wins over the folder in both.
    let run = fixture("sessions-tree/--nonexistent-pi-jsonl-tree--/2026-03-01T10-00-00-000Z_s-tree/run-0/session.jsonl");
    let su = cmd("pi-usage").arg("--json").arg(&run).run().records();
    assert_eq!(su[0]["project"], "/nonexistent/pi-jsonl/tree");
}

/// `--help` is enough without the man page: it ends with the ENVIRONMENT section, naming every
/// variable the man page's does, and says how to get the whole manual; `-h` says where.
#[test]
fn help_needs_no_man_page() {
    for tool in [
        "pi-branch",
        "pi-tools",
        "pi-usage",
        "pi-compactions",
        "pi-sessions",
        "pi-replay",
        "pi-redact",
    ] {
        let help = cmd(tool).arg("--help").run().out();
        let man = cmd(tool).arg("--man").run().out();
        let env = man
            .split(".SH ENVIRONMENT\n")
            .nth(1)
            .and_then(|s| s.split(".SH ").next())
            .unwrap();
        assert!(help.contains("ENVIRONMENT:"), "{tool}");
        assert!(help.contains("--man"), "{tool}");
        // Every variable: a word of capitals, digits and underscores with an underscore or a
        // known name.
        let vars: BTreeSet<&str> = env
            .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .filter(|w| {
                w.len() > 2 && (w.contains('_') || ["HOME", "TZ", "TZDIR", "COLUMNS"].contains(w))
            })
            .collect();
        for v in vars {
            assert!(help.contains(v), "{tool} --help does not name {v}");
        }
        let short = cmd(tool).arg("-h").run().out();
        assert!(
            short.contains("--help") && short.contains("--man"),
            "{tool}"
        );
        // The quiet and verbose options every tool has.
        assert!(
            help.contains("--quiet") && help.contains("--verbose"),
            "{tool}"
        );
    }
}
