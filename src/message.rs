//! Reading the parts of Pi entries that several tools need: a message's members, its text,
//! and the context size of an assistant call.

use crate::json;

/// The members of a Pi `message` object the tools read, found in one pass over it. Each is the
/// raw JSON value (exact input bytes), `None` when absent. As in `JSON.parse`, the last of
/// repeated members wins, and a member name written with escapes (`"r\u006fle"`) counts.
///
/// Which role writes which: every message has `role`, `content` and a numeric `timestamp`
/// (Unix milliseconds); an assistant message `provider`, `model`, `usage`, `stopReason`,
/// `errorMessage` and `responseId`; a `toolResult` `toolCallId`, `toolName`, `isError` and
/// `details`; a `bashExecution` `command`, `output`, `exitCode`, `cancelled`, `truncated`,
/// `fullOutputPath` and `excludeFromContext`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Message<'a> {
    pub role: Option<&'a [u8]>,
    pub content: Option<&'a [u8]>,
    pub timestamp: Option<&'a [u8]>,
    pub provider: Option<&'a [u8]>,
    pub model: Option<&'a [u8]>,
    pub usage: Option<&'a [u8]>,
    pub stop_reason: Option<&'a [u8]>,
    pub error_message: Option<&'a [u8]>,
    pub response_id: Option<&'a [u8]>,
    pub tool_call_id: Option<&'a [u8]>,
    pub tool_name: Option<&'a [u8]>,
    pub is_error: Option<&'a [u8]>,
    pub details: Option<&'a [u8]>,
    pub command: Option<&'a [u8]>,
    pub output: Option<&'a [u8]>,
    pub exit_code: Option<&'a [u8]>,
    pub cancelled: Option<&'a [u8]>,
    pub truncated: Option<&'a [u8]>,
    pub full_output_path: Option<&'a [u8]>,
    pub exclude_from_context: Option<&'a [u8]>,
}

impl<'a> Message<'a> {
    /// Reads the members of `raw`, a `message` value (anything else gives no members).
    pub fn read(raw: &'a [u8]) -> Message<'a> {
        let mut m = Message::default();
        json::for_each_field(raw, |k, v| m.set(k, v));
        m
    }

    /// The message whose members (raw key, raw value) are `members`, in order.
    pub fn from_members(members: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Message<'a> {
        let mut m = Message::default();
        for (k, v) in members {
            m.set(k, v);
        }
        m
    }

    /// Takes member `k` (raw name) with value `v`, when it is one the tools read.
    fn set(&mut self, k: &'a [u8], v: &'a [u8]) {
        // Rare: a name written with escapes (no member name has a backslash of its own).
        let decoded;
        let name = if k.contains(&b'\\') {
            decoded = json::decode_string_body(k);
            decoded.as_bytes()
        } else {
            k
        };
        if let Some(slot) = self.slot(name) {
            *slot = Some(v);
        }
    }

    fn slot(&mut self, name: &[u8]) -> Option<&mut Option<&'a [u8]>> {
        Some(match name {
            b"role" => &mut self.role,
            b"content" => &mut self.content,
            b"timestamp" => &mut self.timestamp,
            b"provider" => &mut self.provider,
            b"model" => &mut self.model,
            b"usage" => &mut self.usage,
            b"stopReason" => &mut self.stop_reason,
            b"errorMessage" => &mut self.error_message,
            b"responseId" => &mut self.response_id,
            b"toolCallId" => &mut self.tool_call_id,
            b"toolName" => &mut self.tool_name,
            b"isError" => &mut self.is_error,
            b"details" => &mut self.details,
            b"command" => &mut self.command,
            b"output" => &mut self.output,
            b"exitCode" => &mut self.exit_code,
            b"cancelled" => &mut self.cancelled,
            b"truncated" => &mut self.truncated,
            b"fullOutputPath" => &mut self.full_output_path,
            b"excludeFromContext" => &mut self.exclude_from_context,
            _ => return None,
        })
    }

    /// Whether `role` is the string `"assistant"` as written (unescaped).
    pub fn is_assistant(&self) -> bool {
        self.role == Some(b"\"assistant\"")
    }
}

/// The context an assistant call filled, from its recorded usage: input + cacheRead +
/// cacheWrite (the whole prompt the model read, cached or not; output is not part of it). This
/// is the size Pi compares with the context window. Saturating: never wraps.
pub fn context_tokens(input: u64, cache_read: u64, cache_write: u64) -> u64 {
    input.saturating_add(cache_read).saturating_add(cache_write)
}

/// Joins the text of a message `content` (a string, or blocks of which `text` ones count).
pub fn content_text(content: &[u8]) -> Option<String> {
    if let Some(s) = json::as_str(content) {
        return Some(s.into_owned());
    }
    let mut parts: Vec<String> = Vec::new();
    json::for_each_element(content, |block| {
        if json::get(block, "type") == Some(b"\"text\"") {
            if let Some(t) = json::get(block, "text").and_then(json::as_str) {
                parts.push(t.into_owned());
            }
        }
    });
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The text of a user message entry (a whole line), when it is one and has text.
pub fn user_text(line: &[u8]) -> Option<String> {
    if json::get(line, "type") != Some(b"\"message\"") {
        return None;
    }
    let msg = json::get(line, "message")?;
    if json::get(msg, "role") != Some(b"\"user\"") {
        return None;
    }
    content_text(json::get(msg, "content")?).filter(|t| !t.trim().is_empty())
}

/// At most `max` characters of `s` (whitespace runs folded to one space), with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let folded: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    let mut out: String = folded.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_reads_strings_and_blocks() {
        let a = br#"{"type":"message","message":{"role":"user","content":"hi there"}}"#;
        let b = br#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}}"#;
        let c = br#"{"type":"message","message":{"role":"assistant","content":"no"}}"#;
        assert_eq!(user_text(a).as_deref(), Some("hi there"));
        assert_eq!(user_text(b).as_deref(), Some("a b"));
        assert_eq!(user_text(c), None);
    }

    #[test]
    fn message_fields_in_one_pass_escaped_keys_too() {
        let m = br#"{"r\u006fle":"assistant","content":[{"type":"text","text":"usage"}],"model":"a","model":"b","stopReason":"stop"}"#;
        let f = Message::read(m);
        assert!(f.is_assistant());
        assert_eq!(f.model, Some(&b"\"b\""[..]));
        assert_eq!(f.stop_reason, Some(&b"\"stop\""[..]));
        assert_eq!(f.usage, None);
        assert_eq!(f.content, Some(&br#"[{"type":"text","text":"usage"}]"#[..]));
        // Every member, in any order, the last of repeats winning.
        let t = br#"{"toolCallId":"c1","toolName":"bash","isError":false,"details":{"exitCode":2},"exitCode":1,"cancelled":true,"truncated":false,"fullOutputPath":"/t","excludeFromContext":true,"command":"ls","output":"x","timestamp":1,"responseId":"r","errorMessage":"e","provider":"p","usage":{},"role":"toolResult","role":"bashExecution"}"#;
        let f = Message::read(t);
        assert!(!f.is_assistant());
        assert_eq!(f.role, Some(&b"\"bashExecution\""[..]));
        assert_eq!(f.details, Some(&br#"{"exitCode":2}"#[..]));
        for (got, want) in [
            (f.tool_call_id, "\"c1\""),
            (f.tool_name, "\"bash\""),
            (f.is_error, "false"),
            (f.exit_code, "1"),
            (f.cancelled, "true"),
            (f.truncated, "false"),
            (f.full_output_path, "\"/t\""),
            (f.exclude_from_context, "true"),
            (f.command, "\"ls\""),
            (f.output, "\"x\""),
            (f.timestamp, "1"),
            (f.response_id, "\"r\""),
            (f.error_message, "\"e\""),
            (f.provider, "\"p\""),
            (f.usage, "{}"),
        ] {
            assert_eq!(got, Some(want.as_bytes()));
        }
        assert_eq!(Message::read(b"[1]").role, None);
    }

    #[test]
    fn context_is_input_and_cache_and_never_wraps() {
        assert_eq!(context_tokens(1000, 9000, 5), 10_005);
        assert_eq!(context_tokens(u64::MAX, 1, 0), u64::MAX);
    }

    #[test]
    fn truncates_by_characters() {
        assert_eq!(truncate_chars("héllo  wörld", 5), "héll…");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
