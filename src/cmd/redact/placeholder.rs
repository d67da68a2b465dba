//! The placeholders that stand for replaced text: the kind of text and its size class, never
//! its content (`[prompt · 1,234 chars]`, `[tool output · 87 lines]`, `[image · png · 34 KB]`).

use crate::json;

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

/// Writes `n` with a comma every three digits (1,234) at the end of `out`.
fn push_grouped(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    for (i, &c) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(b',');
        }
        out.push(c);
    }
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
    /// it ([`Size::of_utf8_json_body`]); `None` when the body is not valid UTF-8 (decode it
    /// then: each invalid sequence becomes a U+FFFD).
    pub fn of_json_body(body: &[u8]) -> Option<Size> {
        simdutf8::basic::from_utf8(body).ok()?;
        Some(Size::of_utf8_json_body(body))
    }

    /// The size of the text of a JSON string body known to be valid UTF-8 (its record was
    /// checked), read in one pass without decoding it ([`json::text_counts`], which counts as
    /// [`crate::json::decode_string_body`] decodes: a surrogate pair is one character, a lone
    /// surrogate one U+FFFD). On a body that is not UTF-8 the answer means nothing.
    pub fn of_utf8_json_body(body: &[u8]) -> Size {
        Size::of_counts(json::text_counts(body), body)
    }

    /// The size of the text of a JSON string body from its counts ([`json::text_counts`]).
    pub fn of_counts(counts: json::TextCounts, body: &[u8]) -> Size {
        Size {
            chars: counts.chars,
            lines: (counts.line_feeds + 1).saturating_sub(trailing_newlines(body)),
        }
    }
}

/// How many escaped line feeds (`\n`, `\u000a`) end the body, one after another.
fn trailing_newlines(body: &[u8]) -> u64 {
    // Whether the backslash at `at` starts an escape: an odd run of backslashes ends there.
    let starts = |at: usize| {
        body[..=at]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count()
            % 2
            == 1
    };
    let (mut end, mut n) = (body.len(), 0);
    loop {
        let rest = &body[..end];
        if rest.ends_with(b"\\n") && starts(end - 2) {
            end -= 2;
        } else if rest.len() >= 6
            && rest[end - 6..end - 4] == *b"\\u"
            && rest[end - 4..].eq_ignore_ascii_case(b"000a")
            && starts(end - 6)
        {
            end -= 6;
        } else {
            return n;
        }
        n += 1;
    }
}

/// The placeholder of `text` of this kind: its length in characters, or in lines for output.
pub fn of_text(kind: TextKind, text: &str) -> String {
    of_size(kind, Size::of(text))
}

/// The placeholder of a text of this kind and size.
pub fn of_size(kind: TextKind, size: Size) -> String {
    let mut out = Vec::new();
    push_placeholder(&mut out, kind, size);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes [`of_size`] at the end of `out` (no allocation: it is written for most texts).
pub fn push_placeholder(out: &mut Vec<u8>, kind: TextKind, size: Size) {
    let (n, one, many) = if kind == TextKind::ToolOutput {
        (size.lines, "line", "lines")
    } else {
        (size.chars, "char", "chars")
    };
    out.push(b'[');
    out.extend_from_slice(kind.name().as_bytes());
    out.extend_from_slice(" · ".as_bytes());
    push_grouped(out, n);
    out.push(b' ');
    out.extend_from_slice(if n == 1 { one } else { many }.as_bytes());
    out.push(b']');
}

/// Whether `text` is a placeholder of this kind as [`push_placeholder`] writes one, whatever
/// its number (`[prompt · 1,234 chars]`, `[tool output · 1 line]`): such a text is written as
/// it is, so a redacted file redacted again is unchanged. A key's may be numbered as
/// [`super::rewrite`] numbers the keys of one object (`[key · 11 chars · 2]`).
pub fn is_placeholder(kind: TextKind, text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix('[')
        .and_then(|t| t.strip_prefix(kind.name()))
        .and_then(|t| t.strip_prefix(" · "))
        .and_then(|t| t.strip_suffix(']'))
    else {
        return false;
    };
    let inner = match inner.rsplit_once(" · ") {
        Some((size, n)) if kind == TextKind::Key && is_count(n) && n != "0" && n != "1" => size,
        _ => inner,
    };
    let Some((n, unit)) = inner.split_once(' ') else {
        return false;
    };
    let digits: String = n.chars().filter(|&c| c != ',').collect();
    let Some(count) = digits.parse::<u64>().ok().filter(|_| is_count(&digits)) else {
        return false;
    };
    let mut grouped = Vec::new();
    push_grouped(&mut grouped, count);
    let (one, many) = if kind == TextKind::ToolOutput {
        ("line", "lines")
    } else {
        ("char", "chars")
    };
    grouped == n.as_bytes() && unit == if count == 1 { one } else { many }
}

/// Whether `s` is a number as written in a placeholder: digits, no leading zero.
fn is_count(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// Whether `text` is the placeholder [`super::rewrite`] writes for data nested too deep
/// (`[value · nested · 1,234 bytes]`).
pub fn is_nested_placeholder(text: &str) -> bool {
    text.strip_prefix("[value · nested · ")
        .and_then(|t| t.strip_suffix(" bytes]"))
        .is_some_and(is_count)
}

/// The placeholder of an image: its format (from `image/png`) and its size, `decoded` bytes
/// ([`crate::message::base64_decoded_len`] of its data).
pub fn of_image(mime: Option<&str>, decoded: u64) -> String {
    let format = mime
        .and_then(|m| m.strip_prefix("image/"))
        .filter(|f| {
            !f.is_empty()
                && f.len() <= 16
                && f.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        })
        .unwrap_or("unknown");
    format!("[image · {format} · {}]", crate::view::bytes(decoded))
}

/// The size an image placeholder ([`of_image`]) gives (`34 KB`), if `text` is one.
pub fn image_size(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("[image · ")?.strip_suffix(']')?;
    let (format, size) = inner.split_once(" · ")?;
    (!format.contains(' ') && !size.contains('·')).then_some(size)
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
            b"\\n\\n\\n",
            "sixteen bytes!\\nx\\\\\\\\\\u00e9t\\ud83d\\ude00 long enough to cross a chunk: \\u000a\\n"
                .as_bytes(),
            "éééééééééééééééééééééééé\\n\\n".as_bytes(),
            "0123456789abcde\\u000A".as_bytes(),
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

    /// Bodies made of escapes and multi-byte characters in every order and at every offset
    /// of the 64-byte blocks: the size read is the decoded text's.
    #[test]
    fn sizes_of_mixed_bodies_across_blocks() {
        let mut rng = pi_jsonl_gen::Rng::new(0x2545_f491_4f6c_dd1d);
        for round in 0..3000 {
            let body = pi_jsonl_gen::mixed_body(&mut rng, round % 200);
            let text = crate::json::decode_string_body(body.as_bytes());
            assert_eq!(
                Size::of_utf8_json_body(body.as_bytes()),
                Size::of(&text),
                "{body}"
            );
        }
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
        assert_eq!(of_image(Some("image/png"), 34_818), "[image · png · 34 KB]");
        assert_eq!(of_image(None, 75), "[image · unknown · 75 B]");
        assert_eq!(
            of_image(Some("image/jpeg"), 3_000_000),
            "[image · jpeg · 2.9 MB]"
        );
        assert_eq!(image_size("[image · png · 34 KB]"), Some("34 KB"));
        assert_eq!(image_size("[image · png]"), None);
        assert_eq!(image_size("iVBORw0KGgo="), None);
    }

    #[test]
    fn placeholders_are_told_whatever_their_number() {
        let kinds = [
            TextKind::Prompt,
            TextKind::Text,
            TextKind::ToolOutput,
            TextKind::Summary,
            TextKind::Value,
            TextKind::Key,
        ];
        for kind in kinds {
            for n in [0, 1, 2, 999, 1000, 1_234_567, u64::MAX] {
                let size = Size { chars: n, lines: n };
                let p = of_size(kind, size);
                assert!(is_placeholder(kind, &p), "{p}");
                let other = if kind == TextKind::Text {
                    TextKind::Prompt
                } else {
                    TextKind::Text
                };
                assert!(!is_placeholder(other, &p), "{p} is no {}", other.name());
            }
        }
        assert!(is_placeholder(TextKind::Key, "[key · 11 chars · 2]"));
        assert!(!is_placeholder(TextKind::Value, "[value · 11 chars · 2]"));
        for not in [
            "[text · 1 chars]",
            "[text · 2 char]",
            "[text · 1234 chars]",
            "[text · 01 chars]",
            "[text · 1,23 chars]",
            "[text · chars]",
            "[text · 5 lines]",
            "[text ·  5 chars]",
            "[text · 5 chars] ",
            "[text · -5 chars]",
            "[key · 11 chars · 1]",
            "[key · 11 chars · 02]",
            "text · 5 chars",
        ] {
            assert!(
                !is_placeholder(TextKind::Text, not) && !is_placeholder(TextKind::Key, not),
                "{not}"
            );
        }
        assert!(is_nested_placeholder("[value · nested · 1234 bytes]"));
        assert!(!is_nested_placeholder("[value · nested · x bytes]"));
    }
}
