//! The human views (issue 15): each one's text at widths 60, 80 and 160, with and without
//! colour, fits the width and holds what it must; and on a real terminal (driven by `script`
//! or tmux) each tool chooses its human view, and JSON Lines (or its pipe format) in a pipe.

use crate::util::*;

const WIDTHS: [usize; 3] = [60, 80, 160];

/// `s` without its colour codes (CSI sequences).
fn plain(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The columns `line` takes on a terminal, counted here independently of the tools (which
/// use the `unicode-width` crate): two for the wide characters the fixtures hold (CJK
/// ideographs and punctuation, fullwidth forms, Hangul, emoji), none for combining marks and
/// joiners, one for anything else.
fn columns(line: &str) -> usize {
    line.chars()
        .map(|c| match u32::from(c) {
            0x300..=0x36f | 0x200b..=0x200d | 0xfe00..=0xfe0f => 0,
            0x1100..=0x115f
            | 0x2705
            | 0x2e80..=0x303e
            | 0x3041..=0x33ff
            | 0x3400..=0x4dbf
            | 0x4e00..=0x9fff
            | 0xa000..=0xa4cf
            | 0xac00..=0xd7a3
            | 0xf900..=0xfaff
            | 0xfe30..=0xfe4f
            | 0xff00..=0xff60
            | 0xffe0..=0xffe6
            | 0x1f300..=0x1f64f
            | 0x1f900..=0x1f9ff
            | 0x20000..=0x3fffd => 2,
            _ => 1,
        })
        .sum()
}

/// How the colour is asked for, and whether the view is coloured then (stdout is a pipe).
const COLOURS: [(&[&str], Option<&str>, bool); 4] = [
    (&["--color", "always"], None, true),
    (&["--color", "never"], None, false),
    // auto in a pipe: no colour, NO_COLOR or not.
    (&[], Some("1"), false),
    // always wins over NO_COLOR.
    (&["--color", "always"], Some("1"), true),
];

/// Runs `tool args` at every width and colour choice; checks the width, the colour, and that
/// every line of `want` is in the text (colour codes left out). Returns the texts at 60
/// columns without colour.
fn check_view(tool: &str, args: &[&str], want: &[&str]) -> String {
    let mut narrow = String::new();
    for width in WIDTHS {
        for (colour_args, no_color, coloured) in COLOURS {
            let mut c = cmd(tool)
                .args(colour_args)
                .args(args)
                .env("COLUMNS", width.to_string());
            c = match no_color {
                Some(v) => c.env("NO_COLOR", v),
                None => c.env_remove("NO_COLOR"),
            };
            let o = c.run();
            assert!(o.status == 0, "{tool} {args:?}: {}", o.stderr);
            let raw = o.out();
            let what = format!("{tool} {args:?} {colour_args:?} NO_COLOR={no_color:?} at {width}");
            assert_eq!(raw.contains('\u{1b}'), coloured, "{what}:\n{raw}");
            let text = plain(&raw);
            for line in text.lines() {
                assert!(
                    columns(line) <= width,
                    "{what}: a line of {} columns:\n{line}",
                    columns(line)
                );
            }
            for w in want {
                assert!(text.contains(w), "{what}: {w:?} missing in\n{text}");
            }
            if width == 60 && !coloured {
                narrow = text;
            }
        }
    }
    narrow
}

#[test]
fn pi_tools_table_fits_every_width_and_highlights_errors() {
    let f = fixture_str("tools-session.jsonl");
    let narrow = check_view(
        "pi-tools",
        &["--table", &f],
        &[
            "session s-tools",
            "status",
            "error",
            "no_result",
            "Summary by tool",
            "all",
        ],
    );
    // At 60 columns the line column, first in the drop order, is left out and said so.
    assert!(narrow.contains("(left out to fit: line)"), "{narrow}");
    // Each call is a row with its name, status and argument preview; the footer sums per name.
    let wide = plain(
        &cmd("pi-tools")
            .args(["--table", "--color", "never", &f])
            .env("COLUMNS", "160")
            .ok()
            .out(),
    );
    let row = wide.lines().find(|l| l.contains("ls -l missing")).unwrap();
    for w in ["10:00:02", "bash", "error", "ls: cannot access"] {
        assert!(row.contains(w), "{w:?} not in {row:?}");
    }
    // The edit, alone in its message, took the 100 ms between its entries.
    let row = wide.lines().find(|l| l.contains("Could not find")).unwrap();
    for w in ["10:00:05", "edit", "error", "100ms"] {
        assert!(row.contains(w), "{w:?} not in {row:?}");
    }
    // Neither bash call has a duration (one shares its message with another call, one is a
    // user's command): the total time is unknown.
    let bash = wide.lines().rfind(|l| l.starts_with("bash ")).unwrap();
    assert_eq!(
        bash.split_whitespace().collect::<Vec<_>>(),
        ["bash", "2", "1", "0", "-"]
    );
    // Every edit has its duration: the total is exact. Over all tools it is a least.
    let edit = wide.lines().rfind(|l| l.starts_with("edit ")).unwrap();
    assert_eq!(
        edit.split_whitespace().collect::<Vec<_>>(),
        ["edit", "1", "1", "0", "100ms"]
    );
    let all = wide.lines().rfind(|l| l.starts_with("all ")).unwrap();
    assert_eq!(
        all.split_whitespace().collect::<Vec<_>>(),
        ["all", "5", "2", "1", "≥100ms"]
    );
    // A call with no result has no duration: its total time is unknown, not zero.
    let find = wide.lines().rfind(|l| l.starts_with("find ")).unwrap();
    assert_eq!(
        find.split_whitespace().collect::<Vec<_>>(),
        ["find", "1", "0", "1", "-"]
    );
    // A session without tool calls says so instead of showing nothing.
    let none = cmd("pi-tools")
        .args([
            "--table",
            "--color",
            "never",
            &fixture_str("branched.jsonl"),
        ])
        .ok()
        .out();
    assert_eq!(none, "No tool calls.\n");
    // Errors are red and bold; the status of a good call is not painted.
    let coloured = cmd("pi-tools")
        .args(["--table", "--color", "always", &f])
        .env("COLUMNS", "160")
        .ok()
        .out();
    assert!(
        coloured.contains("\u{1b}[1m\u{1b}[31merror\u{1b}[0m"),
        "{coloured}"
    );
}

#[test]
fn pi_tools_table_neutralises_control_characters() {
    let f = fixture_str("tools-text-escapes.jsonl");
    let o = cmd("pi-tools")
        .args(["--table", "--color", "never", &f])
        .env("COLUMNS", "160")
        .ok()
        .out();
    assert!(!o.contains('\u{1b}'), "{o:?}");
    assert!(!o.chars().any(|c| c.is_control() && c != '\n'), "{o:?}");
}

#[test]
fn pi_compactions_table_fits_every_width() {
    let args = [
        fixture_str("compaction-overflow.jsonl"),
        fixture_str("compaction-failures.jsonl"),
    ];
    let narrow = check_view(
        "pi-compactions",
        &["--table", &args[0], &args[1]],
        &["trigger", "overflow", "180,500", "failed", "8 failures"],
    );
    // The first kept entry and the line go first; trigger and tokens before stay.
    assert!(
        narrow.contains("(left out to fit: line, first kept)")
            || narrow.contains("(left out to fit: time, line, first kept)"),
        "{narrow}"
    );
}

/// A failure says so at every width: the columns blank in every row (tokens before and
/// after, first kept) are left out before its basis (`failed`), and the note says why.
#[test]
fn pi_compactions_failures_stay_failures_when_narrow() {
    let f = fixture_str("compaction-failures.jsonl");
    for width in [40, 50, 60] {
        let t = cmd("pi-compactions")
            .args(["--table", "--color", "never", &f])
            .env("COLUMNS", width.to_string())
            .ok()
            .out();
        let rows = t.lines().filter(|l| l.contains("failed")).count();
        assert_eq!(rows, 8, "at {width}:\n{t}");
        let words = t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("first kept (empty in every row))"),
            "at {width}:\n{t}"
        );
    }
}

/// The first kept entry is one line wherever it is shown: the evidence wraps, it does not.
#[test]
fn pi_compactions_first_kept_is_never_wrapped() {
    let f = fixture_str("compaction-branches.jsonl");
    let mut shown = 0;
    for width in [60, 70, 80, 90, 100, 160] {
        let t = cmd("pi-compactions")
            .args(["--table", "--color", "never", &f])
            .env("COLUMNS", width.to_string())
            .ok()
            .out();
        if t.contains("first kept  ") {
            shown += 1;
            assert!(t.contains("a3 (line 4)"), "at {width}:\n{t}");
        } else {
            assert!(
                t.contains("left out to fit:") && t.contains("first kept)"),
                "{t}"
            );
        }
    }
    assert!(shown >= 3, "first kept shown at {shown} widths");
}

#[test]
fn pi_branch_outline_and_tree_fit_every_width() {
    let f = fixture_str("compaction-branches.jsonl");
    let narrow = check_view(
        "pi-branch",
        &["--outline", &f],
        &[
            "user: \"start\"",
            "assistant: \"on A\"",
            "compaction (101 tokens before)",
        ],
    );
    // Only the active branch: the abandoned one is not in the outline.
    assert!(!narrow.contains("branch B"), "{narrow}");
    // More of what was said than the tree's 60 characters, as the width allows, on one line.
    let f2 = fixture_str("redact-everything.jsonl");
    let wide = check_view("pi-branch", &["--outline", &f2], &["user: \"Please fix"]);
    assert!(!wide.contains("ghp_"), "cut at 60 columns:\n{wide}");
    let o = cmd("pi-branch")
        .args(["--outline", "--color", "never", &f2])
        .env("COLUMNS", "160")
        .ok()
        .out();
    assert!(
        o.contains("user: \"Please fix /home/ana/src/app/main.rs; my key is ghp_abcdefghijklmnopqrstuvwxyz0123456789\""),
        "{o}"
    );
    // The tree fits and keeps the active branch in column 0.
    let tree = check_view(
        "pi-branch",
        &["--tree", &f],
        &["○ a5 user", "← leaf (active)"],
    );
    for active in ["● a1 ", "● a3 ", "● a10 "] {
        assert!(
            tree.lines().any(|l| l.starts_with(active)),
            "{active:?} not in column 0:\n{tree}"
        );
    }
}

/// The tree's `← leaf` marks are the leaves `--info` counts at every width: a long entry is
/// cut before its mark, never the mark (without colour it alone says which leaf is active).
#[test]
fn pi_branch_tree_keeps_its_leaf_marks_at_every_width() {
    for name in [
        "branched.jsonl",
        "pi16-branched-session.jsonl",
        "views-wide-characters.jsonl",
        "redact-everything.jsonl",
    ] {
        let f = fixture_str(name);
        let info = cmd("pi-branch").args(["--info", &f]).ok().out();
        let leaves: usize = info
            .split("\"leaves\":")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no leaves in {info}"));
        for width in [40, 42, 45, 50, 60, 80] {
            let tree = cmd("pi-branch")
                .args(["--tree", "--color", "never", &f])
                .env("COLUMNS", width.to_string())
                .ok()
                .out();
            let what = format!("{name} at {width}:\n{tree}");
            assert_eq!(tree.matches("  ← leaf (active)").count(), 1, "{what}");
            assert_eq!(tree.matches("  ← leaf").count(), leaves, "{what}");
            assert!(tree.lines().all(|l| columns(l) <= width), "{what}");
        }
    }
}

#[test]
fn pi_usage_tables_fit_every_width() {
    let f = fixture_str("usage-since-days.jsonl");
    check_view("pi-usage", &["--table", &f], &["Session", "Total"]);
    check_view(
        "pi-usage",
        &["--table", "--by", "day,model", "--tz", "UTC", &f],
        &["Day"],
    );
    let c = fixture_str("compaction-overflow.jsonl");
    check_view("pi-usage", &["--context", "--table", &c], &["s-overflow"]);
}

/// Text written in Chinese, with emoji, in every part of a view: a line fits in columns, not
/// characters (a wide character takes two); table columns stay aligned; and a one-line cell
/// without blanks is cut where its column ends, not left out whole.
#[test]
fn views_measure_wide_characters_in_columns() {
    let f = fixture_str("views-wide-characters.jsonl");
    let at = |tool: &str, args: &[&str], width: usize| {
        cmd(tool)
            .args(["--color", "never"])
            .args(args)
            .arg(&f)
            .env("COLUMNS", width.to_string())
            .ok()
            .out()
    };
    check_view("pi-usage", &["--table", &f], &["0b6e2d8a4f17", "$0.0113"]);
    let by = ["--table", "--by", "project,model", "--total"];
    check_view(
        "pi-usage",
        &[&by[..], &[f.as_str()]].concat(),
        // Cut, a project keeps its end: its own folder.
        &["网页应用"],
    );
    check_view(
        "pi-sessions",
        &["--table", &f],
        &["0b6e2d8a4f17", "修复构建"],
    );
    check_view(
        "pi-branch",
        &["--tree", &f],
        &["● 3f9b2d10 user: \"请帮我修复"],
    );
    check_view("pi-branch", &["--outline", &f], &["user: \"请帮我修复"]);
    check_view("pi-tools", &["--table", &f], &["ls 源代码"]);
    for width in WIDTHS {
        // pi-usage's table: its last column (Cost) is aligned right, so every line from the
        // heads to the total ends in the same column.
        let t = at("pi-usage", &by, width);
        let rows: Vec<&str> = t
            .lines()
            .take_while(|l| !l.starts_with("not shown"))
            .collect();
        assert!(rows.len() == 5, "at {width}:\n{t}");
        assert!(
            rows.iter().all(|l| columns(l) == columns(rows[0])),
            "pi-usage at {width}, not aligned:\n{t}"
        );
        // pi-sessions': the name's cell, after the project's, starts in the column its head
        // does.
        let t = at("pi-sessions", &["--table"], width);
        let lines: Vec<&str> = t.lines().collect();
        let start = |l: &str, text: &str| l.find(text).map(|i| columns(&l[..i]));
        let (head, cell) = (start(lines[0], "Name"), start(lines[1], "修复构建"));
        assert!(
            head.is_some() && head == cell,
            "pi-sessions at {width}:\n{t}"
        );
    }
    // At 60 columns the outline's rows are cut to the width, within their text.
    let outline = at("pi-branch", &["--outline"], 60);
    assert!(
        outline.contains("assistant: \"好的，我先看看")
            && outline.contains("assistant: \"目录名是"),
        "{outline}"
    );
}

/// pi-replay's text wraps to the width and keeps each line's indentation: prose at blanks,
/// code and output where the width ends behind their `│ `, so nothing is lost; in a pipe
/// without COLUMNS no line is wrapped.
#[test]
fn pi_replay_text_wraps_to_the_width() {
    let f = fixture_str("replay-every-kind.jsonl");
    let text = ["--format", "text", f.as_str()];
    check_view("pi-replay", &text, &["Tool call: bash", "│ cargo test"]);
    let wide = fixture_str("views-wide-characters.jsonl");
    check_view(
        "pi-replay",
        &["--format", "text", &wide],
        &["请帮我修复构建错误"],
    );
    let whole = cmd("pi-replay")
        .args(["--color", "never"])
        .args(text)
        .env_remove("COLUMNS")
        .ok()
        .out();
    let at_60 = cmd("pi-replay")
        .args(["--color", "never"])
        .args(text)
        .env("COLUMNS", "60")
        .ok()
        .out();
    let long = whole
        .lines()
        .find(|l| l.starts_with("  │ {\"type\":\"future_entry\"") && columns(l) > 60)
        .expect("the unknown entry's JSON on one line");
    // Its pieces at 60 columns, each behind the same `│ `, make the line again.
    let start = at_60
        .lines()
        .position(|l| l.starts_with("  │ {\"type\":\"future_entry\""))
        .unwrap();
    let mut joined = String::from("  │ ");
    for l in at_60.lines().skip(start) {
        let Some(piece) = l.strip_prefix("  │ ") else {
            break;
        };
        joined.push_str(piece);
    }
    assert_eq!(joined, long, "{at_60}");
    // Prose goes on under its own indentation.
    let totals = at_60
        .lines()
        .position(|l| l.starts_with("totals: "))
        .unwrap();
    assert!(
        at_60.lines().nth(totals + 1).unwrap().starts_with("  "),
        "{at_60}"
    );
}

/// pi-usage's table leaves out no key of its grouping to fit the width: with `--by project`
/// the project is what tells the rows apart (beside a session it is only information, and
/// goes), and the total row keeps its `Total`.
#[test]
fn pi_usage_table_keeps_the_keys_of_its_grouping() {
    let wide = fixture_str("views-wide-characters.jsonl");
    let huge = fixture_str("usage-huge-sums.jsonl");
    let basic = fixture_str("usage-basic.jsonl");
    let at_40 = |args: &[&str]| {
        cmd("pi-usage")
            .args(["--table", "--color", "never"])
            .args(args)
            .env("COLUMNS", "40")
            .ok()
            .out()
    };
    let t = at_40(&["--by", "project,model", "--total", &wide]);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("Project  "), "{t}");
    assert!(lines[2].starts_with("…目/网页应用 "), "{t}");
    assert!(lines[4].starts_with("Total  "), "{t}");
    // Numbers too wide for 40 columns: the table is wider, and still says whose they are.
    let t = at_40(&["--by", "project", &huge, &basic]);
    assert!(t.lines().any(|l| l.starts_with("/home/u/proj ")), "{t}");
    // Beside a session, the project is left out first among the labels.
    let t = at_40(&[&wide]);
    assert!(
        t.contains("not shown, to fit COLUMNS:") && t.contains("Project"),
        "{t}"
    );
    assert!(!t.lines().next().unwrap().contains("Project"), "{t}");
}

/// Rows never look alike for being cut: a key of the grouping (model, project, session) is
/// cut no further than its different values stay different, counts that are zero in every
/// row are left out first, and the note says which those were.
#[test]
fn pi_usage_table_rows_stay_told_apart_when_cut() {
    let dir = TempDir::new("usage-keys");
    let mut files = Vec::new();
    for (n, (cwd, model)) in [
        ("/home/u/work/client-alpha/app", "claude-opus-4-5-20251101"),
        ("/home/u/work/client-beta/app", "claude-opus-4-7-20251201"),
    ]
    .into_iter()
    .enumerate()
    {
        let session = format!(
            concat!(
                r#"{{"type":"session","version":3,"id":"s-{n}","timestamp":"2026-05-01T09:59:00.000Z","cwd":"{cwd}"}}"#,
                "\n",
                r#"{{"type":"message","id":"a{n}","parentId":null,"timestamp":"2026-05-01T10:00:05.000Z","message":{{"role":"assistant","content":[],"provider":"anthropic","model":"{model}","usage":{{"input":123456,"output":654321,"cacheRead":1234567,"cacheWrite":7654321,"totalTokens":9666665,"cost":{{"total":12.5}}}},"stopReason":"stop","timestamp":1777629605000}}}}"#,
                "\n"
            ),
            n = n,
            cwd = cwd,
            model = model
        );
        files.push(dir.write(&format!("s{n}.jsonl"), session));
    }
    for (by, want) in [
        (
            "model",
            ["claude-opus-4-5-20251101", "claude-opus-4-7-20251201"],
        ),
        ("project", ["alpha/app", "beta/app"]),
    ] {
        for width in [40, 60, 80, 132] {
            let t = cmd("pi-usage")
                .args(["--table", "--color", "never", "--by", by])
                .args(&files)
                .env("COLUMNS", width.to_string())
                .ok()
                .out();
            let rows: Vec<&str> = t.lines().skip(2).take(2).collect();
            let what = format!("--by {by} at {width}:\n{t}");
            for w in want {
                // Cut, a value still holds the part that tells it from the other.
                let part = if by == "model" { &w[..15] } else { w };
                assert!(rows.iter().any(|r| r.contains(part)), "{part}: {what}");
            }
            if width < 132 {
                assert!(
                    t.replace("\n  ", " ")
                        .contains("Summaries, Usage entries, Tool results (zero in every row)"),
                    "{what}"
                );
            }
        }
    }
    // Where the width allows, zero columns go and the key is whole.
    let t = cmd("pi-usage")
        .args(["--table", "--color", "never", "--by", "project"])
        .args(&files)
        .env("COLUMNS", "132")
        .ok()
        .out();
    assert!(t.contains("/home/u/work/client-alpha/app "), "{t}");
}

/// Runs `command` (a shell command line) on a new terminal: `script` from util-linux, else a
/// tmux session; `None` (with a note) when neither is installed.
fn on_terminal(command: &str) -> Option<String> {
    on_terminal_at(command, 100)
}

/// [`on_terminal`] with `COLUMNS` set to `columns` (the tmux window that wide too).
pub(crate) fn on_terminal_at(command: &str, columns: usize) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let has = |name: &str| std::env::split_paths(&path).any(|d| d.join(name).is_file());
    let columns = columns.to_string();
    let env = [("COLUMNS", columns.as_str()), ("TZ", "UTC")];
    if has("script") {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", command, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .env_remove("NO_COLOR")
            .env_remove("PI_JSONL_ASSUME_TTY")
            .env("HOME", root().join("fixtures").join("no-home"));
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().expect("script runs");
        return Some(String::from_utf8_lossy(&o.stdout).replace("\r\n", "\n"));
    }
    if has("tmux") {
        let dir = TempDir::new("tmux");
        let out = dir.path().join("out");
        let wrapped = format!("{command} > {out}.t; mv {out}.t {out}", out = out.display());
        let sock = format!("pi-jsonl-views-{}", std::process::id());
        let status = std::process::Command::new("tmux")
            .args(["-L", &sock, "new-session", "-d", "-x", &columns, "-y", "50"])
            .args([
                "env",
                &format!("COLUMNS={columns}"),
                "TZ=UTC",
                "sh",
                "-c",
                &wrapped,
            ])
            .env_remove("NO_COLOR")
            .status()
            .expect("tmux runs");
        assert!(status.success());
        // The output file appears when the command has finished (no timing assumed: polled).
        while !out.exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = std::process::Command::new("tmux")
            .args(["-L", &sock, "kill-server"])
            .status();
        return Some(std::fs::read_to_string(&out).unwrap());
    }
    eprintln!("views: neither script nor tmux is installed; the terminal test is skipped");
    None
}

#[test]
fn on_a_terminal_each_tool_shows_its_human_view_and_in_a_pipe_its_records() {
    let bin = |t: &str| bin_dir().join(t).display().to_string();
    let f = |n: &str| fixture_str(n);
    // (tool and arguments, text of the human view, first byte of the pipe's output)
    let cases = [
        (
            format!("{} {}", bin("pi-tools"), f("tools-session.jsonl")),
            "Summary by tool",
            "{",
        ),
        (
            format!(
                "{} {}",
                bin("pi-compactions"),
                f("compaction-overflow.jsonl")
            ),
            "1 compaction: overflow 1",
            "{",
        ),
        (
            format!("{} {}", bin("pi-branch"), f("branched.jsonl")),
            "user: \"kept follow-up\"",
            "{",
        ),
        (
            format!("{} {}", bin("pi-usage"), f("usage-since-days.jsonl")),
            "Total",
            "{",
        ),
        (
            format!(
                "{} {}",
                bin("pi-sessions"),
                root().join("fixtures").display()
            ),
            "Session",
            "{",
        ),
        (
            format!("{} {}", bin("pi-replay"), f("branched.jsonl")),
            "kept follow-up",
            "<",
        ),
    ];
    for (command, human, piped) in cases {
        let Some(tty) = on_terminal(&command) else {
            return;
        };
        assert!(tty.contains(human), "{command} on a terminal:\n{tty}");
        assert!(!tty.starts_with('{'), "{command} on a terminal:\n{tty}");
        // Coloured by default on a terminal.
        assert!(
            tty.contains('\u{1b}'),
            "{command}: no colour on a terminal:\n{tty}"
        );
        let pipe = on_terminal(&format!("{command} | cat")).unwrap();
        assert!(pipe.starts_with(piped), "{command} | cat:\n{pipe}");
        assert!(!pipe.contains('\u{1b}'), "{command} | cat:\n{pipe}");
        // NO_COLOR turns the colour off on a terminal; --color always turns it back on.
        let no_color = on_terminal(&format!("env NO_COLOR=1 {command}")).unwrap();
        assert!(
            no_color.contains(human),
            "{command} with NO_COLOR:\n{no_color}"
        );
        assert!(
            !no_color.contains('\u{1b}'),
            "{command} with NO_COLOR:\n{no_color}"
        );
        let always = on_terminal(&format!("env NO_COLOR=1 {command} --color always")).unwrap();
        assert!(
            always.contains('\u{1b}'),
            "{command} --color always:\n{always}"
        );
        // --json forces the records on a terminal (pi-replay has no records to force).
        if !command.contains("pi-replay") {
            let json = on_terminal(&format!("{command} --json")).unwrap();
            assert!(
                json.starts_with('{'),
                "{command} --json on a terminal:\n{json}"
            );
        }
    }
}
