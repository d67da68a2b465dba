//! pi-replay (issue 16): golden Markdown for fixtures covering every entry kind; the HTML page
//! escapes session text, forbids every external request and is checked by a real browser
//! (headless Chromium, when installed; `.ci/run` installs it); terminal text neutralises
//! control characters; the privacy switches; the header's numbers are pi-usage's and
//! pi-branch's.

use crate::util::*;
use std::path::PathBuf;

/// The fixtures rendered to golden Markdown (tests/data/replay/<name>.md). Together they hold
/// every entry kind and message role Pi writes, Pi 1.x's included, and unknown ones.
const GOLDEN: &[&str] = &[
    "replay-every-kind",
    "replay-injection",
    "replay-file-changes",
    "ids-lone-surrogates",
    "pi16-usage-sources",
    "pi16-branched-session",
    "tools-bash-execution",
    "tools-image",
    "branch-summary",
    "compaction-overflow",
    "v1-linear",
    "v2-hook-message",
    "two-sessions",
    "omp-compaction-fields",
];

/// pi-replay run from the project root on `fixtures/<name>.jsonl` (a relative path, so the
/// golden files do not depend on where the checkout is).
fn replay(name: &str, args: &[&str]) -> Output {
    cmd("pi-replay")
        .dir(&root())
        .args(args)
        .arg(format!("fixtures/{name}.jsonl"))
        .ok()
}

/// The fixtures rendered with --branches (tests/data/replay/<name>-branches.md).
const GOLDEN_BRANCHES: &[&str] = &[
    "replay-every-kind",
    "tools-abandoned-branch",
    "compaction-branches",
    "pi16-navigated-away",
    "pi16-roots",
    "branched",
];

fn golden_path(name: &str) -> PathBuf {
    root().join("tests/data/replay").join(format!("{name}.md"))
}

#[test]
fn markdown_matches_the_golden_files() {
    let bless = std::env::var_os("PI_JSONL_BLESS").is_some();
    let mut stale = Vec::new();
    let plain = GOLDEN
        .iter()
        .map(|n| (n.to_string(), *n, &["--format", "md"][..]));
    let branches = GOLDEN_BRANCHES.iter().map(|n| {
        (
            format!("{n}-branches"),
            *n,
            &["--format", "md", "--branches"][..],
        )
    });
    for (golden, name, args) in plain.chain(branches) {
        let got = replay(name, args).out();
        let path = golden_path(&golden);
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            stale.push(format!("{name}:\n--- want\n{want}\n--- got\n{got}"));
        }
    }
    assert!(
        stale.is_empty(),
        "golden Markdown differs (PI_JSONL_BLESS=1 cargo test --test tests replay:: rewrites it):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_entry_kind_has_its_block() {
    let md = replay("replay-every-kind", &["--format", "md"]).out();
    for title in [
        "### Model set to anthropic/claude-sonnet-4-5",
        "### Thinking level set to medium",
        "### User",
        "### Assistant",
        "<summary>thinking</summary>",
        "#### Tool call: read",
        "\\[image: png, 70 B\\]",
        // No duration: the call shares its message with another and its result records no
        // durationMs, so the 5 s between the entries are not its own time.
        "*error (is\\_error) · exit code 101*\n",
        "*error (aborted\\_turn)*",
        "### User command",
        "### Branch summary",
        "### Compaction",
        "trigger: overflow (inferred",
        "### Label “restart” set on entry e11",
        "### Session named “Slow tests”",
        "### Extension state: todo",
        "### Extension message: reminder",
        "### Usage: cache\\_warm",
        "### Context edit of entry e06",
        "### System message",
        "### Extension message: legacy",
        "### Branch summary (as a message)",
        "### Compaction summary (as a message)",
        "### Unknown entry: message role “reviewer”",
        "### Unknown entry: type “future\\_entry”",
        "### Tool result without its call: bash",
        "(answered by claude-sonnet-4-5-20250929)",
    ] {
        assert!(md.contains(title), "missing {title:?} in:\n{md}");
    }
    // The abandoned branch is left out and counted.
    assert!(!md.contains("Abandoned answer."));
    assert!(md.contains("2 off-branch entries omitted"));
}

#[test]
fn the_header_gives_pi_usage_totals_and_pi_branch_counts() {
    for name in [
        "replay-every-kind",
        "pi16-usage-sources",
        "pi16-branched-session",
    ] {
        let md = replay(name, &["--format", "md"]).out();
        let usage = cmd("pi-usage")
            .args(["--json"])
            .arg(fixture(&format!("{name}.jsonl")))
            .ok();
        let rec = &usage.records()[0];
        // The cost as pi-usage's table writes it (its last column).
        let table = cmd("pi-usage")
            .args(["--table"])
            .arg(fixture(&format!("{name}.jsonl")))
            .ok()
            .out();
        let cost = table
            .lines()
            .nth(2)
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap();
        let t = &rec["total"];
        let tokens = format!("{}", t["tokens"]);
        let digits: String = md
            .lines()
            .find(|l| l.starts_with("- **totals**"))
            .unwrap()
            .split(" tokens")
            .next()
            .unwrap()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        assert_eq!(digits, tokens, "{name}");
        assert!(
            md.contains(&format!("), {cost}, ")),
            "{name}: cost {cost} not in header"
        );
        let info = &cmd("pi-branch")
            .arg("--info")
            .arg(fixture(&format!("{name}.jsonl")))
            .ok()
            .records()[0];
        assert!(
            md.contains(&format!("; {} off-branch entries omitted", info["omitted"])),
            "{name}"
        );
    }
}

#[test]
fn branches_shows_each_abandoned_branch_where_it_left() {
    let md = replay("replay-every-kind", &["--format", "md", "--branches"]).out();
    let fork = md.find("$ git status --short").unwrap();
    let abandoned = md.find("### Abandoned branch to leaf e09").unwrap();
    let summary = md.find("### Branch summary").unwrap();
    assert!(fork < abandoned && abandoned < summary, "{md}");
    assert!(md.contains("*2 entries after this point, not on the active branch*"));
    assert!(md.contains("Abandoned answer."));
}

#[test]
fn branches_shows_a_branch_that_shares_no_entry_with_the_active_one_first() {
    // pi16-roots.jsonl has three roots; the branches from the other two share only the header
    // with the active branch (they used to be left out).
    let md = replay("pi16-roots", &["--format", "md", "--branches"]).out();
    let first_entry = md.find("### System message").unwrap();
    for leaf in ["63661689", "7d5b7985"] {
        let at = md
            .find(&format!("### Abandoned branch to leaf {leaf}"))
            .unwrap_or_else(|| panic!("no branch to {leaf}:\n{md}"));
        assert!(at < first_entry, "{md}");
    }
    assert!(md.contains("Write a streaming parser."));
}

#[test]
fn max_text_cuts_outputs_and_states_the_full_size() {
    let md = replay(
        "replay-every-kind",
        &["--format", "md", "--max-text", "100"],
    )
    .out();
    assert!(
        md.contains("*(cut: the first 100 of 650 bytes shown)*"),
        "{md}"
    );
    assert!(!md.contains("test slow ... FAILED"));
    let html = replay(
        "replay-every-kind",
        &["--format", "html", "--max-text", "100"],
    )
    .out();
    assert!(html.contains("cut: the first 100 of 650 shown (650 B in all)"));
}

#[test]
fn privacy_switches_leave_out_thinking_and_outputs() {
    let md = replay(
        "replay-every-kind",
        &["--format", "md", "--no-thinking", "--no-tool-output"],
    )
    .out();
    assert!(!md.contains("Look at the *profile* first."));
    assert!(
        md.contains("*1 thinking block left out (--no\\-thinking)*")
            || md.contains("1 thinking block left out")
    );
    assert!(!md.contains("test t0 ... ok"));
    assert!(!md.contains(" M src/lib.rs"));
    assert!(md.contains("output: 41 lines, 650 B, left out"));
    assert!(md.contains("1 image left out"));
}

/// --redact renders what pi-redact writes: the fixture's prompt, secret, paths, user name,
/// output and file name appear without it and not with it, in every format, and the tool
/// calls and numbers are still there.
#[test]
fn redact_renders_the_redacted_session() {
    let private = [
        "Please fix",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "/home/ana",
        "main.rs",
        "redact-everything",
    ];
    for format in ["html", "md", "text"] {
        let plain = replay("redact-everything", &["--format", format]).out();
        for p in private {
            assert!(plain.contains(p), "{format}: the test's premise: {p}");
        }
        let o = replay("redact-everything", &["--format", format, "--redact"]);
        assert_eq!(o.stderr, "", "{format}");
        let page = o.out();
        for p in private {
            assert!(!page.contains(p), "{format}: {p} survived --redact");
        }
        assert!(page.contains("[prompt · "), "{format}: placeholders shown");
        assert!(
            page.contains("/home/user1/dir1/dir2"),
            "{format}: pseudonyms shown"
        );
        assert!(page.contains("read"), "{format}: the tool's name is kept");
    }
}

/// The tags pi-replay's page may contain; anything else is markup from the session.
const TAGS: &[&str] = &[
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "section",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "dl",
    "dt",
    "dd",
    "article",
    "p",
    "pre",
    "details",
    "summary",
    "figure",
    "img",
    "svg",
    "text",
    "line",
    "polyline",
    "circle",
    "div",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "del",
    "input",
    "br",
    "hr",
    "blockquote",
    "span",
];

/// Every tag in `html`: its name and its text (a `<` escaped by a backslash, as Markdown
/// escapes it, opens none).
fn tags(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        if rest[..i].ends_with('\\') {
            rest = &rest[i + 1..];
            continue;
        }
        let end = rest[i..].find('>').map(|j| i + j + 1).unwrap_or(rest.len());
        let tag = &rest[i..end];
        let name: String = tag[1..]
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        out.push((name, tag.to_string()));
        rest = &rest[end..];
    }
    out
}

#[test]
fn a_session_cannot_inject_markup_or_script_into_the_page() {
    let html = replay("replay-injection", &["--format", "html"]).out();
    let csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">";
    assert!(html.contains(csp));
    assert_eq!(
        html.matches("<style>").count(),
        1,
        "only the page's own style"
    );
    for (name, tag) in tags(&html) {
        assert!(
            TAGS.contains(&name.as_str()),
            "a tag from the session: {tag}"
        );
        let lower = tag.to_ascii_lowercase();
        assert!(!lower.contains(" on"), "an event handler: {tag}");
        assert!(!lower.contains("javascript:"), "a script URL: {tag}");
        if name == "img" {
            assert!(
                ["png", "jpeg", "gif", "webp"]
                    .iter()
                    .any(|t| tag.contains(&format!(" src=\"data:image/{t};base64,"))),
                "an image not inlined: {tag}"
            );
        }
        if name == "a" && tag.starts_with("<a") {
            assert!(
                tag.contains("href=\"#\"") || tag.contains("href=\"http"),
                "{tag}"
            );
        }
    }
    // The text is there, escaped.
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;iframe"));
}

#[test]
fn markdown_holds_no_markup_from_the_session() {
    let md = replay("replay-injection", &["--format", "md"]).out();
    // Outside fenced blocks (shown as text by every viewer), the only tags are pi-replay's
    // folds.
    let mut fenced: Option<String> = None;
    let mut prose = String::new();
    for line in md.lines() {
        match &fenced {
            Some(f) if line == f => fenced = None,
            Some(_) => {}
            None if line.starts_with("```") => {
                fenced = Some(line.trim_end_matches("text").to_string())
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    for (name, tag) in tags(&prose) {
        assert!(
            ["details", "summary"].contains(&name.as_str()),
            "a tag from the session: {tag}"
        );
    }
    assert!(
        !md.chars().any(|c| c.is_control() && c != '\n'),
        "a control character"
    );
    assert!(md.contains("\\u{1b}]0;title\\u{7} \\u{202e}evil"));
}

#[test]
fn terminal_text_neutralises_control_characters() {
    let text = replay("replay-injection", &["--format", "text"]).out();
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(!text.contains('\u{202e}'));
    assert!(text.contains("\\u{1b}[31mred"));
    assert!(text.contains("\\u{202e}evil"));
}

#[test]
fn color_always_paints_text_into_a_pipe_and_never_leaves_it_plain() {
    let plain = replay("tools-image", &["--format", "text"]).out();
    assert!(!plain.contains('\x1b'));
    let o = cmd("pi-replay")
        .args(["--format", "text", "--color", "always"])
        .arg(fixture("tools-image.jsonl"))
        .env_remove("NO_COLOR")
        .ok()
        .out();
    assert!(o.contains("\x1b[1;32mAssistant\x1b[0m"), "{o:?}");
    let o = cmd("pi-replay")
        .args(["--format", "text", "--color", "never"])
        .arg(fixture("tools-image.jsonl"))
        .env_remove("NO_COLOR")
        .ok()
        .out();
    assert!(!o.contains('\x1b'));
}

#[test]
fn html_is_the_default_away_from_a_terminal_and_one_page_holds_every_input() {
    let o = cmd("pi-replay")
        .arg(fixture("replay-every-kind.jsonl"))
        .arg(fixture("tools-image.jsonl"))
        .ok()
        .out();
    assert!(o.starts_with("<!DOCTYPE html>"));
    assert_eq!(o.matches("<html").count(), 1);
    assert_eq!(o.matches("<section class=\"session\">").count(), 2);
    assert!(o.ends_with("</html>\n"));
    // Images inline: the user's, and the read tool's results.
    assert_eq!(o.matches("src=\"data:image/png;base64,").count(), 3);
    // A context chart with the inferred drop after the compaction.
    assert!(o.contains("<svg class=\"chart\""));
    assert!(o.contains("<circle class=\"drop\""));
}

/// The inputs of one run are written on several threads, each rewriting the index: no two
/// of them may share a temporary file (a race that failed about one run in fifteen).
#[test]
fn out_dir_with_inputs_written_at_once_reports_nothing() {
    let dir = TempDir::new("pi-replay-site-threads");
    let inputs = [
        "replay-every-kind.jsonl",
        "tools-image.jsonl",
        "branched.jsonl",
        "tools-session.jsonl",
    ];
    for run in 0..30 {
        let site = dir.path().join(format!("site{run}"));
        cmd("pi-replay")
            .args(["--threads", "4", "--out-dir"])
            .arg(&site)
            .args(inputs.map(fixture))
            .ok();
        assert_eq!(std::fs::read_dir(&site).unwrap().count(), inputs.len() + 1);
    }
}

#[test]
fn out_dir_writes_a_page_per_input_and_an_index_of_every_page() {
    let dir = TempDir::new("pi-replay-site");
    let site = dir.path().join("site");
    cmd("pi-replay")
        .arg("--out-dir")
        .arg(&site)
        .arg(fixture("replay-every-kind.jsonl"))
        .arg(fixture("tools-image.jsonl"))
        .ok();
    // A later run (as `xargs -n1` makes) adds its page to the index.
    let o = cmd("pi-replay")
        .arg("--out-dir")
        .arg(&site)
        .arg(fixture("replay-injection.jsonl"))
        .ok();
    assert!(o.stdout.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "index.html",
            "replay-every-kind.html",
            "replay-injection.html",
            "tools-image.html"
        ]
    );
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("<a href=\"replay-every-kind.html\">Slow tests</a>"));
    assert!(index.contains("<a href=\"tools-image.html\">Session s-image</a>"));
    assert!(index.contains("<a href=\"replay-injection.html\">&lt;script&gt;"));
    for n in &names {
        let page = std::fs::read_to_string(site.join(n)).unwrap();
        for (name, tag) in tags(&page) {
            assert!(
                TAGS.contains(&name.as_str()),
                "{n}: a tag from the session: {tag}"
            );
        }
    }
    let page = std::fs::read_to_string(site.join("replay-every-kind.html")).unwrap();
    assert!(page.contains("<title>Slow tests</title>"));
}

#[test]
fn bad_input_is_reported_and_the_rest_rendered() {
    let o = cmd("pi-replay")
        .args(["--format", "md"])
        .arg(fixture("glued.jsonl"))
        .run();
    assert_eq!(o.status, 2);
    assert!(o.stderr.starts_with("pi-replay: "), "{}", o.stderr);
    assert!(o.out().starts_with("# "));
}

// ---------------------------------------------------------------------------------------
// The browser

fn chromium() -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| PathBuf::from(d).join("chromium"))
        .find(|p| p.is_file())
}

/// Loads `page` in headless Chromium with the network unreachable; its console messages and
/// a screenshot.
fn load(
    chromium: &PathBuf,
    dir: &TempDir,
    page: &std::path::Path,
    shot: &str,
) -> (Vec<String>, Vec<u8>) {
    let png = dir.path().join(shot);
    let o = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1000,1400",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (console, std::fs::read(&png).unwrap_or_default())
}

#[test]
fn chromium_loads_each_page_without_a_console_message_and_draws_it() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: chromium is not installed (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    let dir = TempDir::new("pi-replay-browser");
    let blank = dir.write("blank.html", "<!DOCTYPE html><html><body></body></html>");
    let (console, blank_png) = load(&chromium, &dir, &blank, "blank.png");
    assert!(console.is_empty(), "{console:?}");
    assert!(!blank_png.is_empty(), "no screenshot of the blank page");
    // The check can fail: a page under the same policy that asks for an outside image is
    // refused, and the refusal is a console message.
    let head = String::from_utf8(replay("tools-image", &["--format", "html"]).stdout).unwrap();
    let leaky = head.replace(
        "<main>",
        "<main><img src=\"https://example.invalid/x.png\">",
    );
    let leaky = dir.write("leaky.html", leaky);
    let (console, _) = load(&chromium, &dir, &leaky, "leaky.png");
    assert!(!console.is_empty(), "a refused request was not seen");
    // The index --out-dir writes, and a page with its abandoned branches.
    let site = dir.path().join("site");
    cmd("pi-replay")
        .arg("--out-dir")
        .arg(&site)
        .args(["--branches", "--max-text", "50"])
        .arg(fixture("replay-every-kind.jsonl"))
        .ok();
    for page in ["index.html", "replay-every-kind.html"] {
        let (console, png) = load(
            &chromium,
            &dir,
            &site.join(page),
            &format!("site-{page}.png"),
        );
        assert!(console.is_empty(), "{page}: console messages: {console:?}");
        assert_ne!(png, blank_png, "{page}: the screenshot is blank");
    }
    for name in GOLDEN {
        let html = replay(name, &["--format", "html"]).stdout;
        let page = dir.write(&format!("{name}.html"), &html);
        let (console, png) = load(&chromium, &dir, &page, &format!("{name}.png"));
        assert!(console.is_empty(), "{name}: console messages: {console:?}");
        assert!(png.starts_with(b"\x89PNG"), "{name}: no screenshot");
        assert_ne!(png, blank_png, "{name}: the screenshot is blank");
    }
}

#[test]
fn every_corpus_file_renders_in_every_format() {
    let Some(files) = corpus_files_or_skip() else {
        return;
    };
    for f in files {
        for format in ["html", "md", "text"] {
            let o = cmd("pi-replay").args(["--format", format]).arg(&f).run();
            assert!(
                o.status == 0 || o.status == 2,
                "{}: {}",
                f.display(),
                o.stderr
            );
            assert!(!o.stdout.is_empty() || o.status == 2, "{}", f.display());
        }
    }
}

#[test]
fn run_bytes_writes_what_the_binary_writes_for_every_fixture() {
    use clap::Parser;
    use pi_jsonl::cmd::replay::{Args, Replay};
    use pi_jsonl::diag::Diags;
    use pi_jsonl::output::Out;
    use pi_jsonl::tool::Tool;
    for f in fixture_files() {
        let input = std::fs::read(&f).unwrap();
        for args in [
            &["--format", "html"][..],
            &["--format", "md", "--branches"][..],
        ] {
            let bin = cmd("pi-replay").args(args).stdin(input.clone()).run();
            let a = Args::try_parse_from(std::iter::once("pi-replay").chain(args.iter().copied()))
                .unwrap();
            let mut out = Out::held();
            let mut d = Diags::new("pi-replay", "<stdin>", false);
            Replay::run_bytes(&a, &input, &mut out, &mut d).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.buf),
                bin.out(),
                "{}: {args:?}",
                f.display()
            );
            assert_eq!(d.held(), bin.stderr, "{}", f.display());
        }
    }
}

/// A fragment (entries with no header: issue 14) is rendered as a session without one, said
/// so, with its conversation; exit 0 with pi-branch's notes.
#[test]
fn a_fragment_is_rendered_and_called_one() {
    let o = cmd("pi-replay")
        .args(["--format", "md"])
        .arg(fixture("fragment-branched.jsonl"))
        .run();
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(o.stderr.contains("read as a fragment"), "{}", o.stderr);
    let md = o.out();
    assert!(
        md.starts_with("# Fragment of a session (no header)\n"),
        "{md}"
    );
    assert!(
        md.contains("unknown: the input has no session header"),
        "{md}"
    );
    for said in ["two answers, please", "second", "welcome"] {
        assert!(md.contains(said), "{said}: {md}");
    }
}

#[test]
fn a_long_page_holds_its_entries_in_groups_the_browser_may_leave_unlaid() {
    // 120 entries: groups of 50, 50 and 20 (then the page opens in the time of its parse:
    // BENCHMARKS.md, pi-replay).
    let mut session = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"long\",\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"cwd\":\"/p\"}\n",
    );
    for i in 0..120 {
        let parent = match i {
            0 => "null".to_string(),
            _ => format!("\"e{}\"", i - 1),
        };
        session.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2026-05-01T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"entry {i}\"}}}}\n"
        ));
    }
    let html = cmd("pi-replay")
        .args(["--format", "html"])
        .stdin(session)
        .ok()
        .out();
    let groups: Vec<&str> = html.split("<div class=\"items\">").skip(1).collect();
    assert_eq!(groups.len(), 3, "{html}");
    for (g, want) in groups.iter().zip([50, 50, 20]) {
        assert_eq!(g.matches("<article class=\"item user\">").count(), want);
    }
    assert!(html.contains("div.items { content-visibility: auto;"));
}

/// Runs `script` (JavaScript) at the end of `page` in headless Chromium at `width` pixels;
/// the text it leaves in `<pre id="result">`. The page's policy is taken out of this copy, so
/// that the script may run.
fn measure(chromium: &PathBuf, dir: &TempDir, page: &str, width: u32, script: &str) -> String {
    let csp_end = page
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .map(|i| {
            let end = i + page[i..].find('>').unwrap() + 1;
            (i, end)
        });
    let mut page = page.to_string();
    if let Some((i, end)) = csp_end {
        page.replace_range(i..end, "");
    }
    let page = page.replace(
        "</body>",
        &format!("<pre id=\"result\"></pre><script>{script}</script></body>"),
    );
    let path = dir.write(&format!("measured-{width}.html"), page);
    let o = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--hide-scrollbars",
            "--dump-dom",
        ])
        .arg(format!("--window-size={width},2000"))
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", path.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"result\">")
        .unwrap_or_else(|| panic!("no result in {dom}"))
        + "<pre id=\"result\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    dom[start..end].to_string()
}

/// Long unbroken text (a URL, inline code, a path, a session name, a table's cells, a line of
/// a code block, tool arguments and output) stays inside the page at a narrow width and a
/// wide one: prose wraps, tables and code blocks scroll; nothing is drawn past its box (the
/// groups of items clip what overflows them: content-visibility).
#[test]
fn chromium_shows_long_unbroken_text_whole_at_every_width() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: chromium is not installed (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    let long = |s: &str| s.repeat(60);
    let user = format!(
        "See https://example.com/{} and `{}` and /a/{}ok",
        long("aaaa"),
        long("code"),
        long("dir_name/")
    );
    let assistant = format!(
        "# {}\\n\\n| a | b |\\n|---|---|\\n| {} | `{}` |\\n\\n```\\n{}\\n```\\n\\n> {}",
        long("Heading"),
        long("cell text "),
        long("xxxx"),
        long("let x = 1; "),
        long("quoted")
    );
    let session = format!(
        concat!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{long_id}\",\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"cwd\":\"/{long_id}\"}}\n",
            "{{\"type\":\"session_info\",\"id\":\"n\",\"parentId\":null,\"timestamp\":\"2026-05-01T10:00:00.500Z\",\"name\":\"{long_id}\"}}\n",
            "{{\"type\":\"message\",\"id\":\"u\",\"parentId\":\"n\",\"timestamp\":\"2026-05-01T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{user}\"}}}}\n",
            "{{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"u\",\"timestamp\":\"2026-05-01T10:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{assistant}\"}},{{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"read\",\"arguments\":{{\"path\":\"/{long_id}\"}}}}],\"provider\":\"p\",\"model\":\"m\",\"stopReason\":\"toolUse\"}}}}\n",
            "{{\"type\":\"message\",\"id\":\"r\",\"parentId\":\"a\",\"timestamp\":\"2026-05-01T10:00:03.000Z\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"toolName\":\"read\",\"content\":[{{\"type\":\"text\",\"text\":\"{long_id}\"}}],\"isError\":false}}}}\n",
        ),
        long_id = long("session"),
        user = user,
        assistant = assistant,
    );
    let page = cmd("pi-replay")
        .args(["--format", "html"])
        .stdin(session)
        .ok()
        .out();
    // Every element drawn past the content box of `main` and not inside a box that scrolls
    // sideways; and whether the page itself is wider than the window.
    let script = r#"
const main = document.querySelector('main');
const ms = getComputedStyle(main);
const right = main.getBoundingClientRect().right - parseFloat(ms.paddingRight);
const bad = [];
const scrolling = [];
function walk(e) {
  for (const c of e.children) {
    const r = c.getBoundingClientRect();
    if (r.right > right + 1) bad.push(c.tagName + '.' + c.className + ' ends at ' + Math.round(r.right) + ' > ' + Math.round(right));
    const s = getComputedStyle(c);
    if (s.overflowX === 'hidden' || s.overflowX === 'clip') {
      if (c.scrollWidth > c.clientWidth + 1) bad.push(c.tagName + '.' + c.className + ' clips its content');
      continue;
    }
    if (s.overflowX === 'auto' || s.overflowX === 'scroll') {
      if (c.scrollWidth > c.clientWidth + 1) scrolling.push(c.tagName);
      continue;
    }
    walk(c);
  }
}
walk(main);
if (document.documentElement.scrollWidth > window.innerWidth) bad.push('the page is wider than the window');
document.getElementById('result').textContent = JSON.stringify({bad, scrolling, width: window.innerWidth});
"#;
    let dir = TempDir::new("pi-replay-long-text");
    // A phone's width and a desktop's (a headless window is no narrower than 500 px).
    for width in [500, 1280] {
        let got = measure(&chromium, &dir, &page, width, script);
        let v: serde_json::Value =
            serde_json::from_str(&got).unwrap_or_else(|e| panic!("{e}: {got}"));
        assert_eq!(v["bad"], serde_json::json!([]), "at {width} px: {got}");
        // The table and the code block scroll (the prose around them wraps; tool arguments
        // and outputs wrap).
        assert_eq!(
            v["scrolling"],
            serde_json::json!(["TABLE", "PRE"]),
            "at {width} px: {got}"
        );
    }
}

/// A session of one linear branch: the header, then `entries` (each a `message` object's
/// JSON), each the child of the one before.
fn linear_session(id: &str, messages: &[&str]) -> String {
    let mut s = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"cwd\":\"/p\"}}\n"
    );
    for (i, m) in messages.iter().enumerate() {
        let parent = match i {
            0 => "null".to_string(),
            _ => format!("\"e{}\"", i - 1),
        };
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2026-05-01T10:00:{:02}.000Z\",\"message\":{m}}}\n",
            i + 1
        ));
    }
    s
}

/// The headings of a Markdown document and the text of its code blocks, as a CommonMark
/// reader finds them; and its HTML tags outside code.
fn markdown_outline(md: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let (mut headings, mut code, mut html) = (Vec::new(), Vec::new(), Vec::new());
    let (mut in_heading, mut in_code) = (None::<String>, None::<String>);
    for e in Parser::new(md) {
        match e {
            Event::Start(Tag::Heading { .. }) => in_heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.extend(in_heading.take()),
            Event::Start(Tag::CodeBlock(_)) => in_code = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => code.extend(in_code.take()),
            Event::Text(t) => {
                if let Some(h) = in_heading.as_mut().or(in_code.as_mut()) {
                    h.push_str(&t);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => html.push(h.trim().to_string()),
            _ => {}
        }
    }
    (headings, code, html)
}

/// A message whose code fence is left open (or holds a longer fence's run of backticks) ends
/// with its message: the entries after it are still headings, a fold's `</details>` still
/// closes it, and the code is still code.
#[test]
fn markdown_closes_each_message_s_open_code_fence() {
    let assistant = |content: &str| {
        format!(
            "{{\"role\":\"assistant\",\"content\":{content},\"provider\":\"p\",\"model\":\"m\",\"stopReason\":\"stop\"}}"
        )
    };
    let session = linear_session(
        "fences",
        &[
            r#"{"role":"user","content":"Unclosed fence:\n\n```js\nlet x = 1;"}"#,
            &assistant(
                r#"[{"type":"thinking","thinking":"```\nthinking code"},{"type":"text","text":"- item\n\n  ~~~\n  in a list"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"grep '```' README.md"}}]"#,
            ),
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"```\n````"}],"isError":false}"#,
            r#"{"role":"user","content":"> ```\n> quoted code"}"#,
            &assistant(r#"[{"type":"text","text":"````md\n```\nnested\n```"}]"#),
            r#"{"role":"user","content":"```"}"#,
            r#"{"role":"user","content":"last"}"#,
        ],
    );
    let md = cmd("pi-replay")
        .args(["--format", "md"])
        .stdin(session)
        .ok()
        .out();
    let (headings, code, html) = markdown_outline(&md);
    assert_eq!(
        headings,
        [
            "Session fences",
            "User",
            "Assistant",
            "Tool call: bash",
            "User",
            "Assistant",
            "User",
            "User"
        ],
        "{md}"
    );
    for c in [
        "let x = 1;",
        "thinking code",
        "in a list",
        "quoted code",
        "```\nnested\n```",
    ] {
        assert!(
            code.iter().any(|b| b.trim_end() == c),
            "{c:?} not a code block in {code:?}:\n{md}"
        );
    }
    assert!(html.contains(&"</details>".to_string()), "{html:?}\n{md}");
    assert!(md.ends_with("last\n\n"), "{md}");
}

/// The chart draws each message's configured window, in steps where the model changes (here
/// from a 200,000-token window to one of 1,048,576), never one window for every message.
#[test]
fn the_chart_draws_each_message_s_window() {
    let assistant = |provider: &str, model: &str, input: u64| {
        format!(
            "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"step\"}}],\"provider\":\"{provider}\",\"model\":\"{model}\",\"usage\":{{\"input\":{input},\"output\":10,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":{},\"cost\":{{\"total\":0}}}},\"stopReason\":\"stop\"}}",
            input + 10
        )
    };
    let session = linear_session(
        "mixed-windows",
        &[
            r#"{"role":"user","content":"go"}"#,
            &assistant("zai", "glm-5.1", 119990),
            &assistant("zai", "glm-5.1", 159990),
            &assistant("zai", "glm-5.1", 194990),
            &assistant("google-vertex", "gemini-3.1-pro-preview", 197990),
        ],
    );
    let dir = TempDir::new("pi-replay-windows");
    let html = cmd("pi-replay")
        .args(["--format", "html", "--models"])
        .arg(dir.write("models.json", "{\"providers\":{}}"))
        .stdin(session)
        .ok()
        .out();
    let svg = &html[html.find("<svg").unwrap()..html.find("</svg>").unwrap()];
    assert!(
        svg.contains("configured windows 200,000 to 1,048,576 (dashed, per message)"),
        "{svg}"
    );
    let windows: Vec<&str> = svg
        .lines()
        .filter(|l| l.starts_with("<line class=\"window\""))
        .collect();
    assert_eq!(windows.len(), 2, "{svg}");
    assert!(
        windows[0].contains("<title>configured window 200,000: messages 1 to 3</title>"),
        "{svg}"
    );
    assert!(
        windows[1].contains("<title>configured window 1,048,576: message 4</title>"),
        "{svg}"
    );
    // The first step ends where the second begins, between messages 3 and 4.
    let attr = |l: &str, a: &str| -> f64 {
        let at = l.find(&format!(" {a}=\"")).unwrap() + a.len() + 3;
        l[at..at + l[at..].find('"').unwrap()].parse().unwrap()
    };
    assert_eq!(attr(windows[0], "x2"), attr(windows[1], "x1"), "{svg}");
    assert!(attr(windows[0], "y1") > attr(windows[1], "y1"), "{svg}");
}

/// A models.json that cannot be read, or holds a bad entry, is reported once a run, by
/// pi-replay, whatever the number of inputs and the format.
#[test]
fn models_json_problems_are_reported_once_by_pi_replay() {
    let dir = TempDir::new("pi-replay-models");
    let bad = dir.write(
        "models.json",
        r#"{"providers":{"p":{"models":[{"id":"m","contextWindow":-1}]}}}"#,
    );
    let missing = dir.path().join("missing.json");
    for models in [&bad, &missing] {
        for format in ["md", "html", "text"] {
            let o = cmd("pi-replay")
                .args(["--format", format, "--models"])
                .arg(models)
                .arg(fixture("branched.jsonl"))
                .arg(fixture("tools-image.jsonl"))
                .run();
            assert_eq!(o.status, 2, "{format}: {}", o.stderr);
            let lines = o.stderr_lines();
            assert_eq!(lines.len(), 1, "{format}: {}", o.stderr);
            assert!(
                lines[0].starts_with("pi-replay: ")
                    && lines[0].contains(&*models.to_string_lossy()),
                "{format}: {}",
                o.stderr
            );
        }
    }
}

/// Sums past u64 (tokens, costs) are shown as pi-usage gives them, not as 0; costs are written
/// as pi-usage's table writes them, in the header and on each assistant turn.
#[test]
fn the_header_gives_sums_past_u64_and_costs_as_pi_usage_s_table() {
    let md = replay("usage-huge-sums", &["--format", "md"]).out();
    assert!(
        md.contains("- **totals**: 110,680,464,442,257,309,690 tokens (input 55,340,232,221,128,654,845, output 55,340,232,221,128,654,845, cache read 0, cache write 0), $300,000,000,000,000,000,000.0000, 3 calls"),
        "{md}"
    );
    let text = replay("pi16-navigated-away", &["--format", "text"]).out();
    assert!(text.contains("cache write 0), $0.0053, 3 calls"), "{text}");
    assert!(
        text.contains("in 500 · out 5 · cache read 0 · cache write 0 · $0.0016 ·"),
        "{text}"
    );
}

/// An input that holds no session (an empty folder, an empty stdin) gives a whole page that
/// says so, exit 0 with nothing reported (the folder's note aside, as every tool gives it), as
/// the other tools give no record; Markdown and text give nothing.
#[test]
fn no_session_gives_a_whole_page_that_says_so() {
    let dir = TempDir::new("pi-replay-empty");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let note = format!(
        "pi-replay: {}: note: no session files (*.jsonl) under this directory\n",
        empty.display()
    );
    for (what, o, said) in [
        ("folder", cmd("pi-replay").arg(&empty).run(), note.as_str()),
        ("stdin", cmd("pi-replay").stdin("").run(), ""),
    ] {
        assert_eq!((o.status, o.stderr.as_str()), (0, said), "{what}");
        let page = o.out();
        assert!(page.starts_with("<!DOCTYPE html>"), "{what}: {page}");
        assert!(page.ends_with("</html>\n"), "{what}: {page}");
        assert!(
            page.contains("<p class=\"note\">No session in the input.</p>"),
            "{what}: {page}"
        );
    }
    for format in ["md", "text"] {
        let o = cmd("pi-replay")
            .args(["--format", format])
            .arg(&empty)
            .run();
        assert_eq!(
            (o.status, o.out(), o.stderr),
            (0, String::new(), note.clone())
        );
    }
    // A page with a session does not say it.
    let page = replay("branched", &["--format", "html"]).out();
    assert!(!page.contains("No session in the input."));
}

/// --out-dir: two inputs of one run whose pages would have one name are reported, the first
/// in argument order written, the second not; an input named `index.jsonl` has a page of its
/// own (not the index's, not stdin's).
#[test]
fn out_dir_reports_inputs_whose_pages_would_share_a_name() {
    let dir = TempDir::new("pi-replay-site-names");
    let a = dir.write("a/s.jsonl", read_fixture("branched.jsonl"));
    let b = dir.write("b/s.jsonl", read_fixture("tools-image.jsonl"));
    let index = dir.write("c/index.jsonl", read_fixture("replay-every-kind.jsonl"));
    let site = dir.path().join("site");
    let o = cmd("pi-replay")
        .args(["--threads", "3", "--out-dir"])
        .arg(&site)
        .args([&a, &b, &index])
        .run();
    assert_eq!(o.status, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        format!(
            "pi-replay: {}: its page s.html is that of {} in this run: not written\n",
            b.display(),
            a.display()
        )
    );
    let mut names: Vec<String> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["index-page.html", "index.html", "s.html"]);
    let page = std::fs::read_to_string(site.join("s.html")).unwrap();
    assert!(
        page.contains("Session s-branched"),
        "the first input's page"
    );
    let page = std::fs::read_to_string(site.join("index-page.html")).unwrap();
    assert!(page.contains("<title>Slow tests</title>"));
}

/// With --branches the header says the off-branch entries are shown, not omitted.
#[test]
fn branches_header_says_the_off_branch_entries_are_shown() {
    let md = replay("branched", &["--format", "md", "--branches"]).out();
    assert!(
        md.contains("- **branch**: 5 entries on the active branch; 2 off-branch entries shown in abandoned branches\n"),
        "{md}"
    );
    assert!(!md.contains("omitted"), "{md}");
}

/// The joiners and other format characters that scripts and emoji need (ZWJ in 👨‍💻, ZWNJ in
/// Persian, tag characters in a subdivision flag) are written as they are in HTML and
/// Markdown; bidirectional controls and zero-width spaces are still shown as `\u{…}`, and
/// everything is on a terminal.
#[test]
fn format_characters_scripts_need_are_kept_in_html_and_markdown() {
    let text = "Persian: می\u{200c}خواهم, Hindi: क्\u{200d}ष, coder: 👨\u{200d}💻, flag: 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}, soft: co\u{ad}op; hidden: a\u{200b}b \u{202e}evil \u{2066}x\u{2069}";
    let session = linear_session(
        "joiners",
        &[&format!(
            "{{\"role\":\"user\",\"content\":{}}}",
            serde_json::to_string(text).unwrap()
        )],
    );
    for format in ["md", "html"] {
        let out = cmd("pi-replay")
            .args(["--format", format])
            .stdin(session.clone())
            .ok()
            .out();
        for kept in [
            "می\u{200c}خواهم",
            "क्\u{200d}ष",
            "👨\u{200d}💻",
            "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
            "co\u{ad}op",
        ] {
            assert!(out.contains(kept), "{format}: {kept:?} not kept in {out}");
        }
        for escaped in ["a\\u{200b}b", "\\u{202e}evil", "\\u{2066}x\\u{2069}"] {
            assert!(out.contains(escaped), "{format}: {escaped} not in {out}");
        }
    }
    let out = cmd("pi-replay")
        .args(["--format", "text"])
        .stdin(session)
        .ok()
        .out();
    assert!(out.contains("👨\\u{200d}💻"), "{out}");
}

/// A CR before a LF ends a line (Windows output), in every format: no `\u{d}` at each line's
/// end; a tab in the text view is spaces to the next column of eight, not `\t`.
#[test]
fn crlf_ends_lines_and_tabs_are_expanded_on_a_terminal() {
    let session = linear_session(
        "crlf",
        &[
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"main.py"}}],"provider":"p","model":"m","stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"import os\r\n\r\ndef main():\r\n\tprint('hi')\r\nab\tc\r\n"}],"isError":false}"#,
            r#"{"role":"user","content":"first line\r\nsecond line"}"#,
        ],
    );
    for format in ["md", "html"] {
        let out = cmd("pi-replay")
            .args(["--format", format])
            .stdin(session.clone())
            .ok()
            .out();
        assert!(!out.contains("\\u{d}"), "{format}: {out}");
        assert!(!out.contains('\r'), "{format}: {out}");
        assert!(
            out.contains("import os\n\ndef main():\n\tprint("),
            "{format}: {out}"
        );
        assert!(out.contains("first line\nsecond line"), "{format}: {out}");
    }
    let out = cmd("pi-replay")
        .args(["--format", "text"])
        .stdin(session)
        .ok()
        .out();
    assert!(!out.contains("\\t") && !out.contains("\\r"), "{out}");
    assert!(out.contains("│         print('hi')\n"), "{out}");
    assert!(out.contains("│ ab      c\n"), "{out}");
}

/// --max-text 0 shows no text of outputs, arguments and commands, and says of each that it
/// was cut, with its size: no output left out without a word, no empty block.
#[test]
fn max_text_0_says_every_cut_and_leaves_no_empty_block() {
    let md = replay("replay-every-kind", &["--format", "md", "--max-text", "0"]).out();
    assert!(!md.contains("```text\n\n```"), "{md}");
    // The bash call's output (650 bytes) and its command.
    assert!(md.contains("*(cut: none of the 650 bytes shown)*"), "{md}");
    assert!(md.contains("<summary>output: 650 B</summary>"), "{md}");
    assert!(md.contains("*(cut: none of the 10 bytes shown)*"), "{md}");
    let html = replay(
        "replay-every-kind",
        &["--format", "html", "--max-text", "0"],
    )
    .out();
    assert!(!html.contains("<pre></pre>"), "{html}");
    assert!(html.contains("cut: none of the 650 bytes shown"), "{html}");
    let text = replay(
        "replay-every-kind",
        &["--format", "text", "--max-text", "0"],
    )
    .out();
    assert!(
        text.contains("(cut: none of the 650 bytes shown)"),
        "{text}"
    );
}

#[test]
fn an_image_pi_redact_replaced_keeps_the_size_it_had() {
    // The fixture's images are 96 base64 letters with two of padding: 70 bytes.
    let plain = replay("replay-every-kind", &["--format", "text"]).out();
    assert_eq!(plain.matches("[image: png, 70 B]").count(), 2, "{plain}");
    // Markdown escapes the brackets.
    for format in ["text", "md", "html"] {
        let shown = replay("replay-every-kind", &["--format", format, "--redact"]).out();
        assert_eq!(
            shown.matches("image: png, 70 B, redacted").count(),
            2,
            "{format}:\n{shown}"
        );
    }
    let redacted = cmd("pi-redact")
        .arg(root().join("fixtures/replay-every-kind.jsonl"))
        .ok()
        .out();
    assert_eq!(
        redacted.matches("[image · png · 70 B]").count(),
        2,
        "{redacted}"
    );
}

/// A session of one assistant message with usage (1 token, 1 call): a thinking block, a
/// call that fails (is_error) and one that does not; the failed result holds one line and
/// one image.
fn one_failed_call() -> String {
    linear_session(
        "failed",
        &[
            r#"{"role":"user","content":"read it"}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"nope"}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"ok.txt"}}],"provider":"p","model":"m","usage":{"input":1,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":1,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"ENOENT: no such file"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}],"isError":true}"#,
            r#"{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"fine"}],"isError":false}"#,
        ],
    )
}

/// Review item 1: a count of one takes the singular noun, in every format ("1 call", not
/// "1 calls" nor "1 call(s)").
#[test]
fn a_count_of_one_takes_the_singular_noun_in_every_format() {
    let args = ["--no-thinking", "--no-tool-output"];
    for format in ["md", "html", "text"] {
        let out = cmd("pi-replay")
            .args(["--format", format])
            .args(args)
            .stdin(one_failed_call())
            .ok()
            .out();
        for want in [
            "1 thinking block left out",
            "output: 1 line, 20 B, left out",
            "1 image left out",
            " 1 call: the whole file",
            "1 token (input 1,",
        ] {
            assert!(out.contains(want), "{format}: {want:?} in {out}");
        }
        assert!(!out.contains("(s)"), "{format}: {out}");
        let one = linear_session("one", &[r#"{"role":"user","content":"hi"}"#]);
        let out = cmd("pi-replay")
            .args(["--format", format])
            .stdin(one)
            .ok()
            .out();
        assert!(
            out.contains("1 entry shown (the active branch); 0 off-branch entries omitted"),
            "{format}: {out}"
        );
    }
    let html = cmd("pi-replay")
        .args(["--format", "html"])
        .stdin(one_failed_call())
        .ok()
        .out();
    assert!(
        html.contains("recorded context per assistant message, 1 message;"),
        "{html}"
    );
    // More than one keeps the plural.
    let md = replay("tools-session", &["--format", "md"]).out();
    assert!(md.contains(" 3 calls: the whole file"), "{md}");
}

/// Review item 2: a call pi-tools gives the status error is in pi-tools' error style on a
/// terminal (bold red: its title and its status line), has the class `failed` in HTML, drawn
/// in `--bad`, and says `error` in words in Markdown; the call that went well is none of
/// these.
#[test]
fn a_failed_tool_call_is_shown_in_the_error_style() {
    let dir = TempDir::new("pi-replay-failed");
    let file = dir.write("failed.jsonl", one_failed_call());
    let command = format!(
        "{} --format text {}",
        bin_dir().join("pi-replay").display(),
        file.display()
    );
    // As a person sees it: on a terminal, coloured as every view is by default there.
    if let Some(text) = crate::views::on_terminal_at(&command, 100) {
        assert!(
            text.contains("\x1b[1;31mTool call: read\x1b[0m\n    \x1b[1;31merror (is_error)"),
            "{text:?}"
        );
        assert!(
            text.contains("\x1b[1;33mTool call: read\x1b[0m\n    \x1b[2mok"),
            "{text:?}"
        );
        assert_eq!(text.matches("\x1b[1;31m").count(), 2, "{text:?}");
    }
    let html = cmd("pi-replay")
        .args(["--format", "html"])
        .stdin(one_failed_call())
        .ok()
        .out();
    assert_eq!(
        html.matches("<article class=\"item tool failed\">").count(),
        1,
        "{html}"
    );
    assert_eq!(
        html.matches("<article class=\"item tool\">").count(),
        1,
        "{html}"
    );
    let md = cmd("pi-replay")
        .args(["--format", "md"])
        .stdin(one_failed_call())
        .ok()
        .out();
    assert!(md.contains("*error (is\\_error)"), "{md}");
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: chromium is not installed (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    // The failed call's title and status line, and its border, in --bad (#b3261e, light).
    let script = r#"
const c = (sel, p) => [...document.querySelectorAll(sel)].map(e => getComputedStyle(e)[p]);
document.getElementById('result').textContent = JSON.stringify({
  failed: [c('article.failed > h2', 'color'), c('article.failed > p.meta', 'color'), c('article.failed', 'borderTopColor')],
  ok: [c('article.tool:not(.failed) > h2', 'color'), c('article.tool:not(.failed) > p.meta', 'color'), c('article.tool:not(.failed)', 'borderTopColor')],
});
"#;
    let got = measure(&chromium, &dir, &html, 1000, script);
    let v: serde_json::Value = serde_json::from_str(&got).unwrap_or_else(|e| panic!("{e}: {got}"));
    let bad = "rgb(179, 38, 30)";
    assert_eq!(
        v["failed"],
        serde_json::json!([[bad], [bad], [bad]]),
        "{got}"
    );
    for colours in v["ok"].as_array().unwrap() {
        assert_eq!(colours.as_array().unwrap().len(), 1, "{got}");
        assert_ne!(colours[0], bad, "{got}");
    }
}

/// Review item 3: the arguments of write and edit calls are shown as a person reads them: the
/// path, then each text whole as a block (Pi 1.x's and 0.73's `edits[]`, the older
/// `oldText`/`newText`), not one JSON string of escaped line breaks; fenced in Markdown past
/// any backtick run, escaped in HTML, cut to --max-text. Arguments of another shape stay
/// JSON.
#[test]
fn write_and_edit_arguments_are_shown_as_texts() {
    let content = "# Notes\n```sh\nrm -rf /\n```\n<script>alert(1)</script>\n";
    let calls = serde_json::json!([
        {"type": "toolCall", "id": "w", "name": "write",
         "arguments": {"path": "notes.md", "content": content}},
        {"type": "toolCall", "id": "e", "name": "edit",
         "arguments": {"path": "src/a.rs", "edits": [
            {"oldText": "let a = 1;\nlet b = 2;", "newText": "let a = 10;"},
            {"oldText": "fn old() {}", "newText": ""}]}},
        {"type": "toolCall", "id": "l", "name": "edit",
         "arguments": {"path": "b.rs", "oldText": "x\ny", "newText": "z"}},
        {"type": "toolCall", "id": "x", "name": "edit",
         "arguments": {"path": "c.rs", "edits": [{"oldText": "p\nq", "newText": "r"}], "extra": 1}},
    ]);
    let assistant = serde_json::json!({"role": "assistant", "content": calls,
        "provider": "p", "model": "m", "stopReason": "toolUse"})
    .to_string();
    let result = |id: &str, text: &str| {
        serde_json::json!({"role": "toolResult", "toolCallId": id, "toolName": "edit",
            "content": [{"type": "text", "text": text}], "isError": false})
        .to_string()
    };
    let (w, e, l, x) = (
        result("w", "Wrote notes.md"),
        result("e", "Edited src/a.rs"),
        result("l", "Edited b.rs"),
        result("x", "Edited c.rs"),
    );
    let session = linear_session("edits", &[&assistant, &w, &e, &l, &x]);
    let render = |format: &str, more: &[&str]| {
        cmd("pi-replay")
            .args(["--format", format])
            .args(more)
            .stdin(session.clone())
            .ok()
            .out()
    };
    let md = render("md", &[]);
    let (_, code, html_tags) = markdown_outline(&md);
    assert!(
        html_tags
            .iter()
            .all(|t| t.starts_with("<details") || t.starts_with("</details")),
        "{html_tags:?}"
    );
    for want in [
        content,
        "notes.md\n",
        "src/a.rs\n",
        "let a = 1;\nlet b = 2;\n",
        "let a = 10;\n",
        "fn old() {}\n",
        "x\ny\n",
        "z\n",
        "Wrote notes.md\n",
    ] {
        assert!(code.iter().any(|c| c == want), "{want:?} in {code:?}\n{md}");
    }
    assert!(md.contains("````text\n# Notes\n```sh\n"), "{md}");
    for want in [
        "*content:*",
        "*old text (1 of 2):*",
        "*new text (2 of 2): empty*",
        "*old text:*",
        "*result:*",
    ] {
        assert!(md.contains(want), "{want} in {md}");
    }
    // Another shape: the arguments as JSON, every member shown.
    assert!(md.contains("\"extra\": 1"), "{md}");
    assert!(md.contains("\"oldText\": \"p\\nq\""), "{md}");
    assert!(!md.contains("let a = 1;\\nlet b"), "{md}");

    let html = render("html", &[]);
    assert!(
        html.contains(
            "<pre># Notes\n```sh\nrm -rf /\n```\n&lt;script&gt;alert(1)&lt;/script&gt;\n</pre>"
        ),
        "{html}"
    );
    assert!(html.contains("<pre>let a = 1;\nlet b = 2;</pre>"), "{html}");
    assert!(!html.contains("<script>"), "{html}");

    let text = render("text", &[]);
    assert!(
        text.contains(
            "  Tool call: edit\n    ok\n    │ src/a.rs\n    old text (1 of 2):\n    │ let a = 1;\n    │ let b = 2;\n    new text (1 of 2):\n    │ let a = 10;\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    new text (2 of 2): empty\n    result:\n    │ Edited src/a.rs\n"),
        "{text}"
    );

    // --max-text cuts each text, and says so.
    let md = render("md", &["--max-text", "4"]);
    assert!(md.contains("```text\n# No\n```"), "{md}");
    assert!(
        md.contains(&format!(
            "*(cut: the first 4 of {} bytes shown)*",
            content.len()
        )),
        "{md}"
    );
    assert!(
        md.contains("```text\nlet \n```\n\n*(cut: the first 4 of 21 bytes shown)*"),
        "{md}"
    );
}

/// An edit's replacements are read as Pi 1.6.0's edit tool reads them before it runs
/// (`prepareEditArguments`): `edits` sent as a JSON string is parsed, a lone replacement is a
/// list of one, `oldText`/`newText` beside `edits` is one more, last; a string that is not
/// such JSON stays JSON. A long text of a write is folded behind its size, as a long output
/// is; a short one stays open.
#[test]
fn file_changes_are_read_as_pis_edit_tool_reads_them() {
    let md = replay("replay-file-changes", &["--format", "md"]).out();
    // The call of one file, from its path to the next heading.
    let call = |path: &str| -> String {
        let from = md.find(&format!("```text\n{path}\n```")).expect(path);
        let rest = &md[from..];
        rest[..rest.find("\n### ").unwrap_or(rest.len())].to_string()
    };
    let readme = call("README.md");
    assert!(
        readme.contains("<details><summary>content: 24 lines, 1 KB</summary>\n\n```text\n# app\n"),
        "{readme}"
    );
    assert!(!readme.contains("*content:*"), "{readme}");
    let ignore = call(".gitignore");
    assert!(
        ignore.contains("*content:*\n\n```text\ntarget/\n```"),
        "{ignore}"
    );
    assert!(!ignore.contains("<details>"), "{ignore}");
    // `edits` as a JSON string holding an array.
    let lib = call("src/lib.rs");
    assert!(
        lib.contains("*old text:*\n\n```text\npub fn add(a: i32, b: i32)\n```\n\n*new text:*\n\n```text\npub fn add(a: i64, b: i64)\n```"),
        "{lib}"
    );
    assert!(!lib.contains("\"edits\""), "{lib}");
    // One replacement object.
    let cargo = call("Cargo.toml");
    assert!(
        cargo.contains("*old text:*\n\n```text\nedition = \"2018\"\n```"),
        "{cargo}"
    );
    // `edits[]` and the older pair beside it: the pair last.
    let util = call("src/util.rs");
    assert!(
        util.contains("*old text (1 of 2):*\n\n```text\nuse std::io;\n```"),
        "{util}"
    );
    assert!(
        util.contains("*old text (2 of 2):*\n\n```text\n// TODO\n```"),
        "{util}"
    );
    assert!(util.contains("*new text (2 of 2): empty*"), "{util}");
    // A string that is not JSON: every member shown as JSON.
    assert!(
        md.contains("\"edits\": \"[{oldText: 'a', newText: 'b'}]\",\n  \"path\": \"src/util.rs\""),
        "{md}"
    );
    // HTML folds the long content in a <details> of its own.
    let html = replay("replay-file-changes", &["--format", "html"]).out();
    assert!(
        html.contains("<details><summary>content: 24 lines, 1 KB</summary>"),
        "{html}"
    );
}

/// A compaction's trigger is pi-compactions' with the same reserve: Pi's settings.json in its
/// agent directory (compaction.reserveTokens), read once a run; its problems are reported.
#[test]
fn the_compaction_trigger_takes_the_reserve_from_pi_settings_json() {
    let agent = TempDir::new("replay-settings");
    let trigger = |settings: &str| {
        agent.write("settings.json", settings);
        let o = cmd("pi-replay")
            .env("PI_CODING_AGENT_DIR", agent.path())
            .args(["--format", "md"])
            .arg(fixture("compaction-settings-reserve.jsonl"))
            .run();
        let out = o.out();
        let line = out
            .lines()
            .find(|l| l.contains("tokens before"))
            .unwrap_or_default()
            .to_string();
        (o.status, line, o.stderr)
    };
    let (status, line, _) = trigger("{}");
    assert_eq!(status, 0);
    assert!(line.contains("trigger: manual"), "{line}");
    assert!(line.contains("reserve 16384"), "{line}");
    let (status, line, _) = trigger(r#"{"compaction":{"reserveTokens":50000}}"#);
    assert_eq!(status, 0);
    assert!(line.contains("trigger: unknown"), "{line}");
    assert!(line.contains("reserve 50000 = 150000"), "{line}");
    let (status, _, stderr) = trigger(r#"{"compaction":{"reserveTokens":"x"}}"#);
    assert_eq!(status, 2);
    assert_eq!(stderr.matches("settings.json").count(), 1, "{stderr}");
}

/// Entries whose strings hold lone surrogate escapes (which serde_json refuses and Pi reads)
/// are rendered as every other entry is, each lone surrogate shown as U+FFFD, and their calls
/// joined to their results as pi-tools joins them.
#[test]
fn entries_with_lone_surrogates_are_rendered() {
    for format in ["md", "text", "html"] {
        let out = replay("ids-lone-surrogates", &["--format", format]).out();
        assert!(!out.contains("cannot read"), "{format}: {out}");
        for want in ["ls d801", "out d801", "first"] {
            assert!(out.contains(want), "{format}: {want} in {out}");
        }
    }
    let md = replay("ids-lone-surrogates", &["--format", "md"]).out();
    assert!(
        md.contains("### Label “first” set on entry \u{FFFD}"),
        "{md}"
    );
}

/// Two calls of one message whose ids differ only in lone surrogates (one id each to Pi and
/// pi-tools, both shown as U+FFFD) are each shown with their own result.
#[test]
fn calls_of_one_message_keep_their_own_results_when_ids_differ_in_lone_surrogates() {
    let assistant = r#"{"role":"assistant","content":[{"type":"toolCall","id":"\ud800","name":"bash","arguments":{"command":"ls first"}},{"type":"toolCall","id":"\ud801","name":"bash","arguments":{"command":"ls second"}}],"provider":"p","model":"m","stopReason":"toolUse"}"#;
    let result = |id: &str, text: &str| {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#
        )
    };
    let (a, b) = (
        result(r"\ud800", "out first"),
        result(r"\ud801", "out second"),
    );
    let session = linear_session("lone", &[assistant, &a, &b]);
    let md = cmd("pi-replay")
        .args(["--format", "md"])
        .stdin(session)
        .ok()
        .out();
    let (_, code, _) = markdown_outline(&md);
    let at = |t: &str| code.iter().position(|c| c == &format!("{t}\n"));
    for (call, out) in [("ls first", "out first"), ("ls second", "out second")] {
        let (c, o) = (at(call), at(out));
        assert!(
            c.is_some() && o == c.map(|c| c + 1),
            "{call} then {out}: {code:?}"
        );
    }
}
