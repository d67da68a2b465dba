//! The document built from an input's facts: each session's header, totals and chart, and
//! one item per entry of its active branch (tool results shown with their calls).

use super::args::Args;
use super::doc::{
    count, counted, dollars, noun, Chart, ChartPoint, Image, Item, Part, Pre, Session,
};
use super::facts::{Facts, Rec};
use crate::view::{bytes, group_digits};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One line of pi-branch's output: its number and text. Its value is parsed when it is
/// rendered and dropped after, so a large session is never held parsed.
struct Line<'a> {
    no: u64,
    text: &'a [u8],
}

impl Line<'_> {
    /// The line parsed ([`super::parse_json`]: a lone surrogate shown as U+FFFD).
    fn value(&self) -> Option<Value> {
        super::parse_json(self.text)
    }
    /// The string member `key` (read by the scanner, without parsing the line).
    fn member(&self, key: &str) -> Option<String> {
        crate::json::validate(self.text)
            .ok()
            .and_then(|r| r.get(key))
            .and_then(|r| crate::json::as_str(r.bytes()).map(|s| s.into_owned()))
    }
    /// Whether its `type` is `t`.
    fn type_is(&self, t: &str) -> bool {
        self.member("type").is_some_and(|k| k == t)
    }
}

/// The sessions of the input named `file`.
pub(super) fn sessions(facts: &Facts, args: &Args, file: &str) -> Vec<Session> {
    let mut groups: Vec<Vec<Line>> = Vec::new();
    for (i, text) in facts.branch.split_inclusive(|&b| b == b'\n').enumerate() {
        let line = Line {
            no: i as u64 + 1,
            text,
        };
        if line.type_is("session") {
            groups.push(Vec::new());
        } else if groups.is_empty() && !line.type_is("title") && line.value().is_some() {
            // A fragment (entries with no header: issue 14) is a session without its header:
            // an empty line stands for it.
            groups.push(vec![Line { no: 0, text: b"" }]);
        }
        if let Some(g) = groups.last_mut() {
            g.push(line);
        }
    }
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| Builder::new(facts, &facts.tools, args, g).session(i, file))
        .collect()
}

/// The lines of `bytes`, numbered from 1.
fn lines_of(bytes: &[u8]) -> Vec<Line<'_>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .enumerate()
        .map(|(i, text)| Line {
            no: i as u64 + 1,
            text,
        })
        .collect()
}

struct Builder<'a> {
    facts: &'a Facts,
    /// pi-tools' records over the branch these lines are from, by line.
    tools: &'a HashMap<u64, Vec<Rec>>,
    args: &'a Args,
    lines: &'a [Line<'a>],
    /// Lines of tool results shown with their call.
    joined: HashSet<u64>,
    session_id: String,
    compactions_seen: usize,
}

fn s<'v>(v: &'v Value, k: &str) -> Option<&'v str> {
    v.get(k).and_then(Value::as_str)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// `in 620 · out 1,480 · cache read 16,505 · cache write 0 · $0.0123`: a recorded `usage`.
fn usage_line(u: &Value) -> Option<String> {
    if !u.is_object() {
        return None;
    }
    let n = |k| u.get(k).and_then(Value::as_u64).map(count);
    let mut parts = Vec::new();
    for (k, name) in [
        ("input", "in"),
        ("output", "out"),
        ("cacheRead", "cache read"),
        ("cacheWrite", "cache write"),
    ] {
        if let Some(v) = n(k) {
            parts.push(format!("{name} {v}"));
        }
    }
    if let Some(c) = u
        .get("cost")
        .and_then(|c| c.get("total"))
        .filter(|c| c.is_number())
    {
        parts.push(dollars(&c.to_string()));
    }
    Some(parts.join(" · "))
}

impl<'a> Builder<'a> {
    fn new(
        facts: &'a Facts,
        tools: &'a HashMap<u64, Vec<Rec>>,
        args: &'a Args,
        lines: &'a [Line<'a>],
    ) -> Builder<'a> {
        let mut joined = HashSet::new();
        for l in lines {
            for r in tools.get(&l.no).into_iter().flatten() {
                if let Some(n) = r
                    .value
                    .get("result")
                    .and_then(|x| x.get("line"))
                    .and_then(Value::as_u64)
                {
                    if r.value.get("by_user") != Some(&Value::Bool(true)) {
                        joined.insert(n);
                    }
                }
            }
        }
        Builder {
            facts,
            tools,
            args,
            lines,
            joined,
            session_id: String::new(),
            compactions_seen: 0,
        }
    }

    fn session(mut self, index: usize, file: &str) -> Session {
        let header = self.lines[0].value().unwrap_or(Value::Null);
        self.session_id = s(&header, "id").unwrap_or("").to_string();
        let mut forks = self.abandoned_branches();
        let mut items: Vec<Item> = forks.remove("").into_iter().flatten().collect();
        for l in &self.lines[1..] {
            if self.joined.contains(&l.no) {
                continue;
            }
            let v = l.value();
            items.push(self.item(l, v.as_ref()));
            if let Some(id) = v.as_ref().and_then(|v| s(v, "id")) {
                items.extend(forks.remove(id).into_iter().flatten());
            }
        }
        let name = self.lines[1..]
            .iter()
            .filter(|l| l.type_is("session_info"))
            .filter_map(|l| l.value())
            .filter_map(|v| s(&v, "name").map(str::trim).map(str::to_string))
            .next_back();
        Session {
            title: name.unwrap_or_else(|| match self.session_id.as_str() {
                "" => "Fragment of a session (no header)".to_string(),
                id => format!("Session {id}"),
            }),
            facts: self.header_facts(&header, index, file),
            chart: self.chart(),
            items,
        }
    }

    /// With --branches: each abandoned branch of this session as an item, by the id of the
    /// active branch's entry it left from (`""`: it shares no entry with the active branch).
    fn abandoned_branches(&self) -> HashMap<String, Vec<Item>> {
        let mut forks: HashMap<String, Vec<Item>> = HashMap::new();
        for a in self
            .facts
            .abandoned
            .iter()
            .filter(|a| a.session == self.session_id)
        {
            let lines = lines_of(&a.branch);
            let mut b = Builder::new(self.facts, &a.tools, self.args, &lines);
            b.session_id = self.session_id.clone();
            let rest = lines
                .get((a.from as usize).saturating_sub(1)..)
                .unwrap_or_default();
            let mut items = Vec::new();
            for l in rest {
                if b.joined.contains(&l.no) {
                    continue;
                }
                let v = l.value();
                items.push(Part::Nested(b.item(l, v.as_ref())));
            }
            forks.entry(a.fork.clone()).or_default().push(Item {
                kind: "abandoned",
                failed: false,
                title: format!("Abandoned branch to leaf {}", a.leaf),
                meta: vec![format!(
                    "{} after this point, not on the active branch",
                    counted(rest.len() as u64, "entry", "entries")
                )],
                parts: vec![Part::Folded("the abandoned branch".into(), items)],
            });
        }
        forks
    }

    /// The record of this session among `recs` (the `index`th session of the input).
    fn of_session<'r>(&self, recs: &'r [Rec], index: usize) -> Option<&'r Rec> {
        recs.get(index)
            .filter(|r| r.str("session").unwrap_or("") == self.session_id)
            .or_else(|| {
                recs.iter()
                    .find(|r| r.str("session").unwrap_or("") == self.session_id)
            })
    }

    fn header_facts(&self, h: &Value, index: usize, file: &str) -> Vec<(String, String)> {
        let fragment = self.lines.first().is_some_and(|l| l.text.is_empty());
        let session = match fragment {
            true => "unknown: the input has no session header (a fragment)".to_string(),
            false => self.session_id.clone(),
        };
        let mut f = vec![("session".to_string(), session)];
        f.push(("file".into(), file.to_string()));
        for (k, name) in [
            ("cwd", "cwd"),
            ("timestamp", "started"),
            ("parentSession", "forked from"),
        ] {
            if let Some(v) = s(h, k) {
                f.push((name.into(), v.to_string()));
            }
        }
        if !fragment {
            f.push((
                "version".into(),
                h.get("version")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .to_string(),
            ));
        }
        if let Some(i) = self.of_session(&self.facts.infos, index) {
            let (kept, omitted) = (i.u64("kept").unwrap_or(0), i.u64("omitted").unwrap_or(0));
            let branch = match self.args.branches {
                true => format!(
                    "{} on the active branch; {} shown in abandoned branches",
                    counted(kept, "entry", "entries"),
                    counted(omitted, "off-branch entry", "off-branch entries")
                ),
                false => format!(
                    "{} shown (the active branch); {} omitted",
                    counted(kept, "entry", "entries"),
                    counted(omitted, "off-branch entry", "off-branch entries")
                ),
            };
            f.push(("branch".into(), branch));
        }
        if let Some(u) = self.of_session(&self.facts.usages, index) {
            f.push(("totals".into(), totals(u)));
        }
        f
    }

    fn chart(&self) -> Chart {
        let mut c = Chart::default();
        for l in self.lines {
            let Some(r) = self.facts.contexts.get(&l.no) else {
                continue;
            };
            if let Some(tokens) = r.u64("recorded_context_tokens").filter(|&t| t > 0) {
                c.points.push(ChartPoint {
                    tokens,
                    window: r.u64("configured_context_window"),
                    after_compaction: r.value.get("after_compaction") == Some(&Value::Bool(true)),
                    inferred_drop: r
                        .value
                        .get("inferred_context_drop")
                        .is_some_and(|d| !d.is_null()),
                });
            }
        }
        c
    }

    /// The item of one entry of the branch.
    fn item(&mut self, l: &Line, v: Option<&Value>) -> Item {
        let Some(v) = v else {
            return self.unknown(l, None, "an entry serde_json cannot read".into());
        };
        let kind = s(v, "type").unwrap_or("");
        match kind {
            "message" => self.message(l, v),
            "compaction" => self.compaction(v),
            "branch_summary" => summary_item(
                "branch summary",
                s(v, "fromId").map(|f| format!("left entry {f}")),
                v,
            ),
            "model_change" => meta_item(format!(
                "Model set to {}/{}",
                s(v, "provider").unwrap_or("?"),
                s(v, "modelId").unwrap_or("?")
            )),
            "thinking_level_change" => meta_item(format!(
                "Thinking level set to {}",
                s(v, "thinkingLevel").unwrap_or("?")
            )),
            "label" => meta_item(match s(v, "label") {
                Some(label) => format!(
                    "Label “{label}” set on entry {}",
                    s(v, "targetId").unwrap_or("?")
                ),
                None => format!("Label cleared on entry {}", s(v, "targetId").unwrap_or("?")),
            }),
            "session_info" => meta_item(format!("Session named “{}”", s(v, "name").unwrap_or(""))),
            "custom" => self.custom_state(v),
            "custom_message" => self.custom_message(v, "extension message"),
            "usage" => self.usage_entry(v),
            "context_edit" => self.context_edit(v),
            _ => self.unknown(l, s(v, "id"), format!("type “{kind}”")),
        }
    }

    fn unknown(&self, l: &Line, id: Option<&str>, what: String) -> Item {
        let text = String::from_utf8_lossy(l.text);
        Item {
            kind: "unknown",
            failed: false,
            title: format!("Unknown entry: {what}"),
            meta: vec![match id {
                Some(id) => format!("entry {id}, shown as recorded"),
                None => "shown as recorded".to_string(),
            }],
            parts: vec![Part::Pre(Pre::cut(text.trim_end(), self.args.max_text))],
        }
    }
}

fn meta_item(title: String) -> Item {
    Item {
        kind: "meta",
        failed: false,
        title,
        meta: Vec::new(),
        parts: Vec::new(),
    }
}

/// A summary entry (branch summary, or a message holding one): the summary folded.
fn summary_item(what: &str, from: Option<String>, v: &Value) -> Item {
    let mut meta: Vec<String> = from.into_iter().collect();
    if let Some(u) = v.get("usage").and_then(usage_line) {
        meta.push(format!("summarization: {u}"));
    }
    for key in crate::kinds::FROM_EXTENSION_KEYS {
        if v.get(key) == Some(&Value::Bool(true)) {
            meta.push(format!("written by an extension ({key})"));
        }
    }
    let summary = s(v, "summary").unwrap_or("");
    Item {
        kind: "summary",
        failed: false,
        title: capitalized(what),
        meta,
        parts: vec![Part::Folded(
            format!("summary ({})", bytes(summary.len() as u64)),
            vec![Part::Markdown(summary.to_string())],
        )],
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The session's totals line from its pi-usage record.
fn totals(u: &Rec) -> String {
    // As written: pi-usage's sums may pass u64.
    let t = |k: &str| {
        u.raw_number(&["total", k])
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .map_or_else(|| "0".into(), |n| group_digits(&n))
    };
    // The noun of a sum: singular for 1 alone.
    let noun_of = |k: &str, one, many| {
        let one_alone = u.raw_number(&["total", k]).is_some_and(|n| n == "1");
        noun(if one_alone { 1 } else { 0 }, one, many)
    };
    let cost = u
        .raw_number(&["total", "cost"])
        .map(|c| dollars(&c))
        .unwrap_or_else(|| "no cost recorded".into());
    format!(
        "{} {} (input {}, output {}, cache read {}, cache write {}), {cost}, {} {}: the whole file, every branch, as pi-usage counts it",
        t("tokens"),
        noun_of("tokens", "token", "tokens"),
        t("input"),
        t("output"),
        t("cache_read"),
        t("cache_write"),
        t("count"),
        noun_of("count", "call", "calls"),
    )
}

/// The parts of a message's `content`: a string, or text / image / other blocks.
fn content_parts(c: Option<&Value>, max: usize) -> Vec<Part> {
    match c {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(t)) => vec![Part::Markdown(t.clone())],
        Some(Value::Array(blocks)) => blocks.iter().map(|b| block(b, max)).collect(),
        Some(other) => vec![Part::Pre(Pre::cut(&pretty(other), max))],
    }
}

fn block(b: &Value, max: usize) -> Part {
    match s(b, "type") {
        Some("text") => Part::Markdown(s(b, "text").unwrap_or("").to_string()),
        Some("image") => Part::Image(Image {
            mime: s(b, "mimeType").map(str::to_string),
            data: s(b, "data").unwrap_or("").to_string(),
        }),
        _ => Part::Folded(
            "unknown content block".into(),
            vec![Part::Pre(Pre::cut(&pretty(b), max))],
        ),
    }
}

mod entries;
