//! The placeholders that stand for replaced text: the kind of text and its size class, never
//! its content (`[prompt · 1,234 chars]`, `[tool output · 87 lines]`, `[image · png · 34 KB]`).

/// What a replaced text was, as its placeholder names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// A user's message.
    Prompt,
    /// An assistant's text.
    Text,
    Thinking,
    /// A tool result's text or a user command's output: counted in lines.
    ToolOutput,
    /// A user's `!command`.
    Command,
    /// A compaction's or branch summary's summary.
    Summary,
    Label,
    /// A session's name.
    Name,
    /// Any other message text (custom, system messages).
    Message,
    /// A string inside a tool's arguments, details or extension data.
    Value,
    /// An object key that is not a plain identifier.
    Key,
}

impl TextKind {
    /// The name in the placeholder, and the summary's category.
    pub fn name(self) -> &'static str {
        match self {
            TextKind::Prompt => "prompt",
            TextKind::Text => "text",
            TextKind::Thinking => "thinking",
            TextKind::ToolOutput => "tool output",
            TextKind::Command => "command",
            TextKind::Summary => "summary",
            TextKind::Label => "label",
            TextKind::Name => "name",
            TextKind::Message => "message",
            TextKind::Value => "value",
            TextKind::Key => "key",
        }
    }
}

/// `n` with a comma every three digits (1,234).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The placeholder of `text` of this kind: its length in characters, or in lines for output.
pub fn of_text(kind: TextKind, text: &str) -> String {
    if kind == TextKind::ToolOutput {
        let lines = text.trim_end_matches('\n').split('\n').count() as u64;
        let unit = if lines == 1 { "line" } else { "lines" };
        return format!("[{} · {} {unit}]", kind.name(), grouped(lines));
    }
    let chars = text.chars().count() as u64;
    let unit = if chars == 1 { "char" } else { "chars" };
    format!("[{} · {} {unit}]", kind.name(), grouped(chars))
}

/// The placeholder of an image: its format (from `image/png`) and its decoded size from the
/// length of its base64 text.
pub fn of_image(mime: Option<&str>, base64_len: usize) -> String {
    let format = mime
        .and_then(|m| m.strip_prefix("image/"))
        .filter(|f| {
            !f.is_empty()
                && f.len() <= 16
                && f.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        })
        .unwrap_or("unknown");
    let bytes = (base64_len as u64) * 3 / 4;
    let size = if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{} KB", grouped((bytes + 512) / 1024))
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    };
    format!("[image · {format} · {size}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_keep_kind_and_size() {
        assert_eq!(
            of_text(TextKind::Prompt, &"x".repeat(1234)),
            "[prompt · 1,234 chars]"
        );
        assert_eq!(of_text(TextKind::Text, "é"), "[text · 1 char]");
        assert_eq!(
            of_text(TextKind::ToolOutput, "a\nb\nc\n"),
            "[tool output · 3 lines]"
        );
        assert_eq!(of_text(TextKind::ToolOutput, "a"), "[tool output · 1 line]");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(of_image(Some("image/png"), 46_424), "[image · png · 34 KB]");
        assert_eq!(of_image(None, 100), "[image · unknown · 75 B]");
        assert_eq!(
            of_image(Some("image/jpeg"), 4_000_000),
            "[image · jpeg · 2.9 MB]"
        );
    }
}
