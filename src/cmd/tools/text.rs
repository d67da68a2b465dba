//! A result's text: kept as the input escaped it when it can be copied as it is, decoded when
//! it must be (escapes the output writes differently, or --max-text may cut it), and written
//! with its size and whether it was cut.

use super::args::Args;
use crate::json::{self, Raw};
use crate::output::{self, Obj};

/// The text between the quotes of a JSON string value.
pub(super) fn string_body(raw: Raw<'_>) -> Option<&[u8]> {
    let raw = raw.bytes();
    (raw.len() >= 2 && raw[0] == b'"').then(|| &raw[1..raw.len() - 1])
}

/// A result's text: the text blocks (or the string content) joined by newlines.
pub(super) enum ResultText<'a> {
    /// The JSON string bodies of the parts, each already escaped as the output escapes (see
    /// [`output::escaped_as_written`]): written as they are, never decoded. `bytes` is the
    /// length of the joined text.
    Escaped { parts: Vec<&'a [u8]>, bytes: u64 },
    /// The joined text, decoded.
    Decoded(String),
}

impl<'a> ResultText<'a> {
    /// The text of `parts` (string bodies); kept escaped when every part is written as the
    /// output would write it and --max-text cannot cut it (its characters are at most its
    /// escaped bytes). `utf8`: the parts come from a line the reader found valid UTF-8, so
    /// their own check is skipped.
    pub(super) fn of(parts: Vec<&'a [u8]>, a: &Args, utf8: bool) -> ResultText<'a> {
        let newlines = parts.len().saturating_sub(1);
        let escaped_len = parts.iter().map(|p| p.len()).sum::<usize>() + newlines;
        if a.max_text.is_none_or(|max| escaped_len <= max) {
            let lens: Option<Vec<usize>> = parts
                .iter()
                .map(|p| {
                    if utf8 {
                        json::written_len(p)
                    } else {
                        output::escaped_as_written(p)
                    }
                })
                .collect();
            if let Some(lens) = lens {
                let bytes = (lens.iter().sum::<usize>() + newlines) as u64;
                return ResultText::Escaped { parts, bytes };
            }
        }
        let mut text = String::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&json::decode_string_body(p));
        }
        ResultText::Decoded(text)
    }

    /// The text of a JSON value, when it is a string.
    pub(super) fn of_string(raw: Raw<'a>, a: &Args, utf8: bool) -> Option<ResultText<'a>> {
        string_body(raw).map(|b| ResultText::of(vec![b], a, utf8))
    }

    /// The length of the text in bytes (UTF-8).
    pub(super) fn bytes(&self) -> u64 {
        match self {
            ResultText::Escaped { bytes, .. } => *bytes,
            ResultText::Decoded(t) => t.len() as u64,
        }
    }
}

/// `text`, `text_truncated` and `bytes` of a result text.
pub(super) fn write_text(o: &mut Obj<'_>, text: Option<&ResultText<'_>>, a: &Args) {
    if a.no_content {
        o.null("text").bool("text_truncated", false);
    } else {
        match text {
            None => {
                o.null("text").bool("text_truncated", false);
            }
            Some(ResultText::Escaped { parts, .. }) => {
                o.escaped_lines("text", parts).bool("text_truncated", false);
            }
            Some(ResultText::Decoded(t)) => {
                match a.max_text.and_then(|max| t.char_indices().nth(max)) {
                    Some((cut, _)) => {
                        o.str("text", &t[..cut]).bool("text_truncated", true);
                    }
                    None => {
                        o.str("text", t).bool("text_truncated", false);
                    }
                }
            }
        }
    }
    o.opt_u64("bytes", text.map(ResultText::bytes));
}
