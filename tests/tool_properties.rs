//! Property tests of pi-tools and pi-usage over generated sessions, run through the binaries.

use crate::util::*;
use proptest::prelude::*;

fn header(id: &str) -> String {
    format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/p\"}}\n")
}

/// A turn: an assistant message with some tool calls, then results: each call answered 0, 1
/// or 2 times (a duplicate), plus orphan results for ids no call has.
#[derive(Debug, Clone)]
struct Turn {
    answers: Vec<u8>,
    orphans: u8,
    bash: bool,
}

fn turns() -> impl Strategy<Value = Vec<Turn>> {
    prop::collection::vec(
        (prop::collection::vec(0u8..3, 0..4), 0u8..2, any::<bool>()).prop_map(
            |(answers, orphans, bash)| Turn {
                answers,
                orphans,
                bash,
            },
        ),
        1..8,
    )
}

struct Expect {
    calls: usize,
    orphans: usize,
    duplicates: usize,
}

fn tools_session(sid: &str, turns: &[Turn]) -> (String, Expect) {
    let mut s = header(sid);
    let mut e = Expect {
        calls: 0,
        orphans: 0,
        duplicates: 0,
    };
    let mut prev = "null".to_string();
    let mut n = 0;
    let mut push = |s: &mut String, body: String, prev: &mut String| {
        n += 1;
        let id = format!("{sid}-{n}");
        s.push_str(&format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{prev},\"timestamp\":\"2026-01-01T00:00:{:02}Z\",\"message\":{body}}}\n", n % 60));
        *prev = format!("\"{id}\"");
    };
    for (t, turn) in turns.iter().enumerate() {
        let blocks: Vec<String> = (0..turn.answers.len())
            .map(|c| format!("{{\"type\":\"toolCall\",\"id\":\"{sid}-c{t}-{c}\",\"name\":\"read\",\"arguments\":{{\"path\":\"f{c}\"}}}}"))
            .collect();
        push(
            &mut s,
            format!(
                "{{\"role\":\"assistant\",\"content\":[{}],\"stopReason\":\"toolUse\"}}",
                blocks.join(",")
            ),
            &mut prev,
        );
        e.calls += turn.answers.len();
        for (c, &k) in turn.answers.iter().enumerate() {
            for _ in 0..k {
                push(&mut s, format!("{{\"role\":\"toolResult\",\"toolCallId\":\"{sid}-c{t}-{c}\",\"toolName\":\"read\",\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}],\"isError\":false}}"), &mut prev);
            }
            e.duplicates += usize::from(k.saturating_sub(1));
        }
        for o in 0..turn.orphans {
            push(&mut s, format!("{{\"role\":\"toolResult\",\"toolCallId\":\"{sid}-orphan-{t}-{o}\",\"toolName\":\"read\",\"content\":[],\"isError\":false}}"), &mut prev);
            e.orphans += 1;
        }
        if turn.bash {
            push(&mut s, "{\"role\":\"bashExecution\",\"command\":\"ls\",\"output\":\"\",\"exitCode\":0,\"cancelled\":false,\"truncated\":false}".into(), &mut prev);
            e.calls += 1;
        }
    }
    (s, e)
}

fn usage_session(sid: &str, calls: &[(u32, u32, u32, u32)]) -> String {
    let mut s = header(sid);
    let mut prev = "null".to_string();
    for (i, (inp, out, cr, cost)) in calls.iter().enumerate() {
        let id = format!("{sid}-{i}");
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{prev},\"timestamp\":\"2026-01-0{}T10:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m{}\",\"usage\":{{\"input\":{inp},\"output\":{out},\"cacheRead\":{cr},\"cacheWrite\":0,\"totalTokens\":{},\"cost\":{{\"total\":{}}}}}}}}}\n",
            1 + i % 3,
            i % 2,
            inp + out + cr,
            f64::from(*cost) / 1e6,
        ));
        prev = format!("\"{id}\"");
    }
    s
}

fn total(args: &[&str], files: &[std::path::PathBuf]) -> serde_json::Value {
    let o = cmd("pi-usage")
        .args(["--json", "--total"])
        .args(args)
        .args(files)
        .ok();
    let r = o.records();
    assert_eq!(r.len(), 1, "{}", o.out());
    r[0]["total"].clone()
}

fn micro(v: &serde_json::Value) -> i64 {
    (v.as_f64().unwrap() * 1e6).round() as i64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// One tool_call record per toolCall block and bashExecution, one orphan record per
    /// result without a call, one duplicate record per extra result.
    #[test]
    fn pi_tools_emits_one_record_per_call_and_per_orphan(a in turns(), b in turns()) {
        let (sa, ea) = tools_session("a", &a);
        let (sb, eb) = tools_session("b", &b);
        let o = cmd("pi-tools").stdin(format!("{sa}{sb}")).ok();
        let recs = o.records();
        let count = |t: &str, st: Option<&str>| recs.iter().filter(|r| r["type"] == t && st.is_none_or(|s| r["status"] == s)).count();
        prop_assert_eq!(count("tool_call", None), ea.calls + eb.calls);
        prop_assert_eq!(count("tool_result", Some("orphan")), ea.orphans + eb.orphans);
        prop_assert_eq!(count("tool_result", Some("duplicate")), ea.duplicates + eb.duplicates);
        prop_assert_eq!(recs.len(), ea.calls + eb.calls + ea.orphans + eb.orphans + ea.duplicates + eb.duplicates);
    }

    /// pi-usage over several files equals the sum of its runs per file; a file given twice
    /// is counted once by default.
    #[test]
    fn pi_usage_over_files_is_the_sum_per_file(
        sessions in prop::collection::vec(prop::collection::vec((0u32..5000, 0u32..500, 0u32..90000, 0u32..100000), 0..6), 1..5)
    ) {
        let t = TempDir::new("usage-prop");
        let files: Vec<_> = sessions.iter().enumerate()
            .map(|(i, calls)| t.write(&format!("s{i}.jsonl"), usage_session(&format!("s{i}"), calls)))
            .collect();
        let all = total(&[], &files);
        let (mut count, mut input, mut output, mut cache, mut cost) = (0, 0, 0, 0, 0);
        for f in &files {
            let one = total(&[], std::slice::from_ref(f));
            count += one["count"].as_u64().unwrap();
            input += one["input"].as_u64().unwrap();
            output += one["output"].as_u64().unwrap();
            cache += one["cache_read"].as_u64().unwrap();
            cost += micro(&one["cost"]);
        }
        prop_assert_eq!(all["count"].as_u64().unwrap(), count);
        prop_assert_eq!(all["input"].as_u64().unwrap(), input);
        prop_assert_eq!(all["output"].as_u64().unwrap(), output);
        prop_assert_eq!(all["cache_read"].as_u64().unwrap(), cache);
        prop_assert_eq!(micro(&all["cost"]), cost);
        let want: u64 = sessions.iter().flatten().map(|c| u64::from(c.0)).sum();
        prop_assert_eq!(input, want);
        let twice = total(&[], &[files.clone(), files.clone()].concat());
        prop_assert_eq!(&twice["input"], &all["input"]);
        let counted_twice = total(&["--no-dedup"], &[files.clone(), files].concat());
        prop_assert_eq!(counted_twice["input"].as_u64().unwrap(), 2 * input);
    }
}

/// The string tokens of a JSON Lines text (keys and values): where each one's body starts.
fn string_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'"' {
            starts.push(i + 1);
            i += 1;
            while text[i] != b'"' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
        }
        i += 1;
    }
    starts
}

/// Issue 19, item 8: every record line every tool writes is valid UTF-8 JSON, whatever string
/// of the input holds invalid UTF-8. Each variant of each base fixture has invalid sequences
/// (a lone byte, a truncated sequence, an encoded surrogate, an overlong form) in one string,
/// key or value, so every field is one in some variant.
#[test]
fn item_8_every_record_line_is_utf8_json() {
    const BAD: &[u8] = b"\xff<\xe2\x82>\xed\xa0\x80<\xc0\xaf>";
    let t = TempDir::new("invalid-utf8-everywhere");
    let mut files = Vec::new();
    for base in [
        "tools-session.jsonl",
        "tools-bash-execution.jsonl",
        "tools-image.jsonl",
        "tools-odd-values.jsonl",
        "compaction-recorded.jsonl",
        "branch-summary.jsonl",
        "labels.jsonl",
        "session-meta.jsonl",
        "branched.jsonl",
    ] {
        let text = read_fixture(base);
        for (k, at) in string_starts(&text).into_iter().enumerate() {
            let mut variant = text[..at].to_vec();
            variant.extend_from_slice(BAD);
            variant.extend_from_slice(&text[at..]);
            files.push(t.write(&format!("{base}.{k}.jsonl"), variant));
        }
    }
    assert!(files.len() > 500, "{} variants", files.len());
    let runs: &[(&str, &[&str])] = &[
        ("pi-tools", &[]),
        ("pi-tools", &["--no-content"]),
        ("pi-usage", &[]),
        ("pi-usage", &["--by", "session,model,provider,day"]),
        ("pi-usage", &["--context"]),
        (
            "pi-compactions",
            &["--summary", "--files", "--branch-summaries"],
        ),
        ("pi-compactions", &["--errors"]),
        ("pi-branch", &["--info"]),
        ("pi-branch", &["--leaves", "--preview"]),
    ];
    let check = |what: &str, o: &Output| {
        assert!(!o.stdout.is_empty(), "{what}: no output; {}", o.stderr);
        for line in o.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let text = std::str::from_utf8(line).unwrap_or_else(|e| {
                panic!("{what}: not UTF-8 ({e}): {}", String::from_utf8_lossy(line))
            });
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
        }
    };
    for (bin, args) in runs {
        let o = cmd(bin).args(*args).args(&files).run();
        check(&format!("{bin} {args:?}"), &o);
    }
    let o = cmd("pi-sessions")
        .args(["--json", "--prompts", "--dir"])
        .arg(t.path())
        .run();
    check("pi-sessions", &o);
}
