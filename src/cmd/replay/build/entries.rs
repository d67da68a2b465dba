//! The items of the entry kinds that carry more than a line: messages of every role (tool
//! calls joined to their results), compactions, extension entries, Pi 1.x usage entries and
//! context edits.

use super::*;

/// Outputs, and the texts of a write or edit, of at most this many lines and bytes are shown
/// open; longer ones folded.
const OPEN_LINES: usize = 8;
const OPEN_BYTES: usize = 600;

impl Builder<'_> {
    pub(super) fn message(&mut self, l: &Line, v: &Value) -> Item {
        let m = v.get("message").unwrap_or(&Value::Null);
        let max = self.args.max_text;
        match s(m, "role") {
            Some("user") => Item {
                kind: "user",
                failed: false,
                title: "User".into(),
                meta: Vec::new(),
                parts: content_parts(m.get("content"), max),
            },
            Some("assistant") => self.assistant(l, m),
            Some("toolResult") => self.lone_result(l, m),
            Some("bashExecution") => self.command(l, m),
            Some("custom") | Some("hookMessage") => self.custom_message(m, "extension message"),
            Some("branchSummary") => summary_item("branch summary (as a message)", None, m),
            Some("compactionSummary") => summary_item("compaction summary (as a message)", None, m),
            Some("system") => self.system(m),
            Some(role) => self.unknown(l, s(v, "id"), format!("message role “{role}”")),
            None => self.unknown(l, s(v, "id"), "message without a role".into()),
        }
    }

    fn assistant(&mut self, l: &Line, m: &Value) -> Item {
        let mut meta = Vec::new();
        let model = match (s(m, "provider"), s(m, "model")) {
            (Some(p), Some(x)) => Some(format!("{p}/{x}")),
            (None, Some(x)) => Some(x.to_string()),
            _ => None,
        };
        if let Some(model) = model {
            match s(m, "responseModel") {
                Some(r) if Some(r) != s(m, "model") => {
                    meta.push(format!("{model} (answered by {r})"))
                }
                _ => meta.push(model),
            }
        }
        if let Some(u) = m.get("usage").and_then(usage_line) {
            meta.push(u);
        }
        if let Some(r) = s(m, "stopReason").filter(|r| *r != "stop" && *r != "toolUse") {
            meta.push(format!("stop reason: {r}"));
        }
        if let Some(ms) = m.get("durationMs").and_then(Value::as_u64) {
            meta.push(crate::view::duration(ms.try_into().unwrap_or(i64::MAX)));
        }
        let mut parts = Vec::new();
        if let Some(e) = s(m, "errorMessage") {
            parts.push(Part::Note(format!("Error: {e}")));
        }
        let calls: Vec<&Rec> = self.tools.get(&l.no).into_iter().flatten().collect();
        let mut left_out = 0;
        let mut nth_call = 0;
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::Array(b)) => b.clone(),
            Some(Value::String(t)) => vec![serde_json::json!({"type": "text", "text": t})],
            _ => Vec::new(),
        };
        for b in &blocks {
            match s(b, "type") {
                Some("thinking") if self.args.no_thinking => left_out += 1,
                Some("thinking") => parts.push(thinking(b)),
                Some("toolCall") => {
                    // pi-tools writes a message's calls in block order: the record in this
                    // block's place when its id is this block's (ids that differ only in lone
                    // surrogates look alike here), else the record with the id, else the place.
                    let same_id =
                        |r: &&&Rec| r.str("call_id").is_some() && r.str("call_id") == s(b, "id");
                    let rec = calls
                        .get(nth_call)
                        .filter(same_id)
                        .or_else(|| calls.iter().find(same_id))
                        .or_else(|| calls.get(nth_call))
                        .copied();
                    nth_call += 1;
                    parts.push(Part::Nested(self.call(b, rec)));
                }
                _ => parts.extend(content_parts(
                    Some(&Value::Array(vec![b.clone()])),
                    self.args.max_text,
                )),
            }
        }
        if left_out > 0 {
            parts.push(Part::Note(format!(
                "{} left out (--no-thinking)",
                counted(left_out, "thinking block", "thinking blocks")
            )));
        }
        Item {
            kind: "assistant",
            failed: false,
            title: "Assistant".into(),
            meta,
            parts,
        }
    }

    /// A tool call with its joined result, from pi-tools' record.
    fn call(&self, b: &Value, rec: Option<&Rec>) -> Item {
        let name = s(b, "name").unwrap_or("?");
        let mut meta = Vec::new();
        let mut parts = Vec::new();
        let args = b.get("arguments").unwrap_or(&Value::Null);
        let change = file_change(name, args);
        match &change {
            Some((path, texts)) => {
                parts.push(Part::Pre(Pre::cut(path, self.args.max_text)));
                for (label, text) in texts {
                    parts.extend(self.text_block(label, text));
                }
            }
            None => {
                let shown = match s(args, "command") {
                    Some(c) if args.as_object().is_some_and(|o| o.len() == 1) => c.to_string(),
                    _ => pretty(args),
                };
                parts.push(Part::Pre(Pre::cut(&shown, self.args.max_text)));
            }
        }
        if let Some(r) = rec {
            meta.extend(status_meta(r));
            if let Some(res) = r.value.get("result").filter(|x| !x.is_null()) {
                let images = self.result_images(res);
                let full = res.get("bytes").and_then(Value::as_u64);
                let output = self.output(res.get("text").and_then(Value::as_str), full, images);
                // After the labelled texts of a change, the output is labelled too: it would
                // read as the end of the last text on a terminal.
                if change.is_some() && !output.is_empty() {
                    parts.push(Part::Note("result:".into()));
                }
                parts.extend(output);
            }
        }
        Item {
            kind: "tool",
            failed: rec.is_some_and(failed),
            title: format!("Tool call: {name}"),
            meta,
            parts,
        }
    }

    /// A text of the arguments under its label (`content`, `old text`), cut to --max-text;
    /// the label alone, saying so, when the text is empty.
    fn text_block(&self, label: &str, text: &str) -> Vec<Part> {
        if text.is_empty() {
            return vec![Part::Note(format!("{label}: empty"))];
        }
        let pre = Pre::cut(text, self.args.max_text);
        let lines = text.lines().count();
        if shown_open(&pre, lines, text.len()) {
            return vec![Part::Note(format!("{label}:")), Part::Pre(pre)];
        }
        let about = format!(
            "{label}: {}, {}",
            counted(lines as u64, "line", "lines"),
            bytes(text.len() as u64)
        );
        vec![Part::Folded(about, vec![Part::Pre(pre)])]
    }

    /// The images of the result entry at `res.line`.
    fn result_images(&self, res: &Value) -> Vec<Part> {
        let Some(n) = res.get("line").and_then(Value::as_u64) else {
            return Vec::new();
        };
        let entry = self
            .lines
            .get(n.saturating_sub(self.lines[0].no) as usize)
            .filter(|l| l.no == n)
            .and_then(Line::value);
        let content = entry
            .as_ref()
            .and_then(|v| v.get("message"))
            .and_then(|m| m.get("content"));
        match content {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| s(b, "type") == Some("image"))
                .map(|b| {
                    Part::Image(Image {
                        mime: s(b, "mimeType").map(str::to_string),
                        data: s(b, "data").unwrap_or("").to_string(),
                    })
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// An output: open when short, folded when long, cut to --max-text, left out with
    /// --no-tool-output (its size still stated). `full`: the whole text's size in bytes when
    /// `text` was cut already (pi-tools --max-text).
    fn output(&self, text: Option<&str>, full: Option<u64>, images: Vec<Part>) -> Vec<Part> {
        let mut parts = Vec::new();
        // An empty text cut from a longer one (--max-text 0) is still shown as cut.
        let cut = full.is_some_and(|n| n > 0);
        if let Some(t) = text.filter(|t| !t.is_empty() || cut) {
            let full = full.map_or(t.len(), |n| n as usize).max(t.len());
            let mut pre = Pre::cut(t, self.args.max_text);
            if full > t.len() {
                pre.cut_from = Some(full);
            }
            let lines = t.lines().count();
            let about = match pre.cut_from {
                None => format!(
                    "output: {}, {}",
                    counted(lines as u64, "line", "lines"),
                    bytes(full as u64)
                ),
                Some(_) => format!("output: {}", bytes(full as u64)),
            };
            if self.args.no_tool_output {
                parts.push(Part::Note(format!("{about}, left out (--no-tool-output)")));
            } else if shown_open(&pre, lines, full) {
                parts.push(Part::Pre(pre));
            } else {
                parts.push(Part::Folded(about, vec![Part::Pre(pre)]));
            }
        }
        if self.args.no_tool_output && !images.is_empty() {
            parts.push(Part::Note(format!(
                "{} left out (--no-tool-output)",
                counted(images.len() as u64, "image", "images")
            )));
        } else {
            parts.extend(images);
        }
        parts
    }

    /// A tool result no call in the branch joins (pi-tools: orphan or duplicate).
    fn lone_result(&self, l: &Line, m: &Value) -> Item {
        let rec = self.tools.get(&l.no).and_then(|v| v.first());
        let status = rec.and_then(|r| r.str("status")).unwrap_or("not joined");
        let text = rec.and_then(|r| r.str("text"));
        let images = content_parts(m.get("content"), self.args.max_text)
            .into_iter()
            .filter(|p| matches!(p, Part::Image(_)))
            .collect();
        Item {
            kind: "tool",
            failed: rec.is_some_and(failed),
            title: format!(
                "Tool result without its call: {}",
                s(m, "toolName").unwrap_or("?")
            ),
            meta: vec![format!(
                "{status} (call id {})",
                s(m, "toolCallId").unwrap_or("?")
            )],
            parts: self.output(text, rec.and_then(|r| r.u64("bytes")), images),
        }
    }

    /// A user's `!command` (bashExecution), with pi-tools' verdict.
    fn command(&self, l: &Line, m: &Value) -> Item {
        let rec = self.tools.get(&l.no).and_then(|v| v.first());
        let mut meta: Vec<String> = rec.map(status_meta).unwrap_or_default();
        for (k, what) in [
            ("cancelled", "cancelled"),
            ("truncated", "output truncated by Pi"),
            ("excludeFromContext", "not shown to the model (!!)"),
        ] {
            if m.get(k) == Some(&Value::Bool(true)) {
                meta.push(what.into());
            }
        }
        if let Some(p) = s(m, "fullOutputPath") {
            meta.push(format!("full output saved at {p}"));
        }
        let mut parts = vec![Part::Pre(Pre::cut(
            &format!("$ {}", s(m, "command").unwrap_or("")),
            self.args.max_text,
        ))];
        parts.extend(self.output(s(m, "output"), None, Vec::new()));
        Item {
            kind: "command",
            failed: rec.is_some_and(failed),
            title: "User command".into(),
            meta,
            parts,
        }
    }

    fn system(&self, m: &Value) -> Item {
        let mut parts = Vec::new();
        for (k, what) in [
            ("toolsAdded", "tools added"),
            ("toolsRemoved", "tools removed"),
        ] {
            if let Some(Value::Array(tools)) = m.get(k) {
                let names: Vec<&str> = tools.iter().filter_map(|t| s(t, "name")).collect();
                parts.push(Part::Note(format!("{what}: {}", names.join(", "))));
            }
        }
        if let Some(sections) = m.get("sections").filter(|x| !x.is_null()) {
            parts.push(Part::Folded(
                "sections".into(),
                vec![Part::Pre(Pre::cut(&pretty(sections), self.args.max_text))],
            ));
        }
        parts.extend(content_parts(
            m.get("content").filter(|c| c.as_str() != Some("")),
            self.args.max_text,
        ));
        Item {
            kind: "meta",
            failed: false,
            title: "System message".into(),
            meta: Vec::new(),
            parts,
        }
    }

    pub(super) fn compaction(&mut self, v: &Value) -> Item {
        let nth = self.compactions_seen;
        self.compactions_seen += 1;
        let mut item = summary_item("compaction", None, v);
        item.kind = "compaction";
        let mut meta = Vec::new();
        if let Some(n) = v.get("tokensBefore").and_then(Value::as_u64) {
            meta.push(format!("{} before", counted(n, "token", "tokens")));
        }
        if let Some(r) = self.facts.compaction(&self.session_id, s(v, "id"), nth) {
            let trigger = r.str("trigger").unwrap_or("unknown");
            let basis = r.str("basis").unwrap_or("unknown");
            let evidence = r
                .value
                .get("evidence")
                .and_then(|e| e.get(0))
                .and_then(|e| s(e, "detail"))
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            meta.push(format!("trigger: {trigger} ({basis}{evidence})"));
        }
        // oh-my-pi 18.3's provider-native compaction may keep nothing by id (`""`).
        if let Some(k) = s(v, "firstKeptEntryId").filter(|k| !k.is_empty()) {
            meta.push(format!("keeps from entry {k}"));
        }
        if let Some(k) = s(v, "providerReplayThroughEntryId") {
            meta.push(format!(
                "the provider's own compaction carries the branch through entry {k}"
            ));
        }
        meta.append(&mut item.meta);
        item.meta = meta;
        item
    }

    pub(super) fn custom_state(&self, v: &Value) -> Item {
        Item {
            kind: "meta",
            failed: false,
            title: format!("Extension state: {}", s(v, "customType").unwrap_or("?")),
            meta: vec!["not in the model's context".into()],
            parts: vec![Part::Folded(
                "data".into(),
                vec![Part::Pre(Pre::cut(
                    &pretty(v.get("data").unwrap_or(&Value::Null)),
                    self.args.max_text,
                ))],
            )],
        }
    }

    pub(super) fn custom_message(&self, v: &Value, what: &str) -> Item {
        let shown = if v.get("display") == Some(&Value::Bool(false)) {
            "in the model's context, hidden in Pi"
        } else {
            "in the model's context"
        };
        Item {
            kind: "custom",
            failed: false,
            title: format!(
                "{}: {}",
                capitalized(what),
                s(v, "customType").unwrap_or("?")
            ),
            meta: vec![shown.into()],
            parts: content_parts(v.get("content"), self.args.max_text),
        }
    }

    pub(super) fn usage_entry(&self, v: &Value) -> Item {
        let mut meta = Vec::new();
        if let (Some(p), Some(m)) = (s(v, "provider"), s(v, "model")) {
            meta.push(format!("{p}/{m}"));
        }
        if let Some(u) = v.get("usage").and_then(usage_line) {
            meta.push(u);
        }
        if let Some(n) = s(v, "note") {
            meta.push(format!("note: {n}"));
        }
        Item {
            kind: "meta",
            failed: false,
            title: format!("Usage: {}", s(v, "kind").unwrap_or("?")),
            meta,
            parts: Vec::new(),
        }
    }

    pub(super) fn context_edit(&self, v: &Value) -> Item {
        let target = s(v, "targetId").unwrap_or("?");
        let parts = match v.get("replacement") {
            None | Some(Value::Null) => vec![Part::Note(
                "removed from what the model sees (the history keeps it)".into(),
            )],
            Some(r) => vec![Part::Folded(
                "replacement".into(),
                vec![Part::Pre(Pre::cut(&pretty(r), self.args.max_text))],
            )],
        };
        Item {
            kind: "meta",
            failed: false,
            title: format!("Context edit of entry {target}"),
            meta: Vec::new(),
            parts,
        }
    }
}

fn thinking(b: &Value) -> Part {
    if b.get("redacted") == Some(&Value::Bool(true)) {
        return Part::Note("thinking redacted by the provider".into());
    }
    Part::Folded(
        "thinking".into(),
        vec![Part::Markdown(s(b, "thinking").unwrap_or("").to_string())],
    )
}

/// A file's path and the texts of a change to it, each under its label.
type FileChange<'v> = (&'v str, Vec<(String, String)>);

/// The arguments of a `write` or `edit` call as a person reads them: the path, then each
/// text under its label: `content` (write), or `old text` and `new text` of each replacement
/// (edit). The replacements are read as Pi 1.6.0's edit tool reads them before it runs
/// (`prepareEditArguments`): `edits[]`; `edits` given as a JSON string (some models send
/// that), parsed; a lone replacement object for a list of one; and the older
/// `oldText`/`newText` beside `path`, after any `edits`. `None` when the arguments hold
/// anything else (another member, a text that is not a string, a replacement with other
/// members, none at all): they are shown as JSON, nothing left out.
fn file_change<'v>(name: &str, args: &'v Value) -> Option<FileChange<'v>> {
    let o = args.as_object()?;
    let text = |k: &str| o.get(k).and_then(Value::as_str);
    let path = text("path")?;
    let known: &[&str] = match name {
        "write" => &["path", "content"],
        "edit" => &["path", "edits", "oldText", "newText"],
        _ => return None,
    };
    if o.keys().any(|k| !known.contains(&k.as_str())) {
        return None;
    }
    if name == "write" {
        return Some((path, vec![("content".into(), text("content")?.into())]));
    }
    let replacement = |e: &Value| -> Option<(String, String)> {
        let e = e.as_object().filter(|e| e.len() == 2)?;
        let t = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
        Some((t("oldText")?, t("newText")?))
    };
    let replacements = |v: &Value| -> Option<Vec<(String, String)>> {
        match v {
            Value::Array(es) => es.iter().map(replacement).collect(),
            e => Some(vec![replacement(e)?]),
        }
    };
    let mut edits = match o.get("edits") {
        None => Vec::new(),
        Some(Value::String(s)) => replacements(&serde_json::from_str(s).ok()?)?,
        Some(v) => replacements(v)?,
    };
    match (o.get("oldText"), o.get("newText")) {
        (None, None) => {}
        (Some(old), Some(new)) => edits.push((old.as_str()?.into(), new.as_str()?.into())),
        _ => return None,
    }
    if edits.is_empty() {
        return None;
    }
    let n = edits.len();
    let mut blocks = Vec::new();
    for (i, (old, new)) in edits.into_iter().enumerate() {
        let which = match n {
            1 => String::new(),
            _ => format!(" ({} of {n})", i + 1),
        };
        blocks.push((format!("old text{which}"), old));
        blocks.push((format!("new text{which}"), new));
    }
    Some((path, blocks))
}

/// Whether a text of `lines` lines and `full` bytes, shown as `pre`, is shown open; a longer
/// one, or one cut, is folded behind a line that says its size.
fn shown_open(pre: &Pre, lines: usize, full: usize) -> bool {
    pre.cut_from.is_none() && lines <= OPEN_LINES && full <= OPEN_BYTES
}

/// Whether pi-tools gives the call the status `error` (the status its meta line states).
fn failed(r: &Rec) -> bool {
    r.str("status") == Some("error")
}

/// A tool call's status, exit code and duration as pi-tools gives them.
fn status_meta(r: &Rec) -> Vec<String> {
    let mut meta = Vec::new();
    let status = r.str("status").unwrap_or("unknown");
    let evidence = r.str("evidence").unwrap_or("");
    meta.push(match status {
        "ok" => "ok".to_string(),
        "no_result" => "no result".to_string(),
        other => format!("{other} ({evidence})"),
    });
    if let Some(c) = r
        .value
        .get("result")
        .and_then(|x| x.get("exit_code"))
        .and_then(Value::as_i64)
    {
        meta.push(format!("exit code {c}"));
    }
    if let Some(ms) = r.u64("duration_ms") {
        meta.push(crate::view::duration(ms.try_into().unwrap_or(i64::MAX)));
    }
    meta
}
