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

/// The size of a text as a placeholder states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub chars: u64,
    /// Lines, trailing line feeds not counted as starting one (`"a\n"` is one line).
    pub lines: u64,
}

impl Size {
    pub fn of(text: &str) -> Size {
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
        let trailing = text.len() - text.trim_end_matches('\n').len();
        Size {
            chars: text.chars().count() as u64,
            lines: (newlines - trailing + 1) as u64,
        }
    }

    /// The size of the text of a JSON string body (between its quotes), read without decoding
    /// it (as [`crate::json::decode_string_body`] decodes: a surrogate pair is one character,
    /// a lone surrogate one U+FFFD); `None` when the body is not valid UTF-8 (decode it then:
    /// each invalid sequence becomes a U+FFFD).
    pub fn of_json_body(body: &[u8]) -> Option<Size> {
        let text = simdutf8::basic::from_utf8(body).ok()?;
        let (mut chars, mut newlines, mut trailing) = (0u64, 0u64, 0u64);
        let mut i = 0;
        while i < body.len() {
            let j = memchr::memchr(b'\\', &body[i..]).map_or(body.len(), |p| i + p);
            if j > i {
                // `\\` is ASCII: `i` and `j` are character boundaries.
                chars += text[i..j].chars().count() as u64;
                trailing = 0;
            }
            if j == body.len() {
                break;
            }
            let hex = |at: usize| {
                let h = std::str::from_utf8(body.get(at..at + 4)?).ok()?;
                u32::from_str_radix(h, 16).ok()
            };
            let (newline, len) = match body.get(j + 1) {
                Some(b'u') => match hex(j + 2) {
                    Some(0xD800..=0xDBFF)
                        if body.get(j + 6..j + 8) == Some(b"\\u")
                            && matches!(hex(j + 8), Some(0xDC00..=0xDFFF)) =>
                    {
                        (false, 12)
                    }
                    Some(0x0A) => (true, 6),
                    _ => (false, 6),
                },
                Some(b'n') => (true, 2),
                Some(_) => (false, 2),
                // A lone `\` at the end is kept as it is.
                None => (false, 1),
            };
            chars += 1;
            if newline {
                newlines += 1;
                trailing += 1;
            } else {
                trailing = 0;
            }
            i = j + len;
        }
        Some(Size {
            chars,
            lines: newlines - trailing + 1,
        })
    }
}

/// The placeholder of `text` of this kind: its length in characters, or in lines for output.
pub fn of_text(kind: TextKind, text: &str) -> String {
    of_size(kind, Size::of(text))
}

/// The placeholder of a text of this kind and size.
pub fn of_size(kind: TextKind, size: Size) -> String {
    if kind == TextKind::ToolOutput {
        let unit = if size.lines == 1 { "line" } else { "lines" };
        return format!("[{} · {} {unit}]", kind.name(), grouped(size.lines));
    }
    let unit = if size.chars == 1 { "char" } else { "chars" };
    format!("[{} · {} {unit}]", kind.name(), grouped(size.chars))
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
    fn sizes_read_from_json_bodies_are_the_decoded_texts_sizes() {
        let bodies: &[&[u8]] = &[
            b"plain",
            b"two\\nlines\\n\\n",
            b"\\u000a\\u000aonly after",
            b"\\n\\n",
            b"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00 \\ud800x \\udc00 \\\"q\\\" \\\\n",
            b"tab\\there\\r\\n",
            b"end\\",
        ];
        for body in bodies {
            let text = crate::json::decode_string_body(body);
            assert_eq!(
                Size::of_json_body(body),
                Some(Size::of(&text)),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        assert_eq!(Size::of_json_body(b"bad \xff"), None);
    }

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
