//! A result's text: copied as the input escaped it when it can be (checked as it is copied),
//! decoded when it must be (escapes the output writes differently, or --max-text may cut it),
//! and written with its size and whether it was cut.

use super::args::Args;
use crate::json::{self, Raw};
use crate::output::{self, Obj};
use std::borrow::Cow;

/// The text between the quotes of a JSON string value.
pub(super) fn string_body(raw: Raw<'_>) -> Option<&[u8]> {
    let raw = raw.bytes();
    (raw.len() >= 2 && raw[0] == b'"').then(|| &raw[1..raw.len() - 1])
}

/// A result's text: the text blocks (or the string content) joined by newlines.
#[derive(Debug, PartialEq)]
pub(super) enum ResultText<'a> {
    /// The JSON string bodies of the parts, written as they are when each is already escaped
    /// as the output escapes (checked as it is copied: [`Obj::written_lines`]), else decoded
    /// first. `utf8`: they come from a line the reader found valid UTF-8, so their own UTF-8
    /// check is skipped.
    Parts { parts: Vec<&'a [u8]>, utf8: bool },
    /// Parts found already escaped as the output escapes ([`ResultText::checked`], ahead of
    /// the reader): copied as they are; `len`, the bytes of the text they stand for.
    Written { parts: Vec<&'a [u8]>, len: usize },
    /// The joined text, decoded: --max-text may cut it.
    Decoded(Cow<'a, str>),
}

impl<'a> ResultText<'a> {
    /// The text of `parts` (string bodies): kept as they are written when --max-text cannot
    /// cut them (a text's characters are at most its escaped bytes), else decoded. `written`:
    /// the bytes of their text when each was found written as the output writes it
    /// ([`json::string_written`]) in a line known to be valid UTF-8 (`utf8`): they are then
    /// copied, not checked again.
    pub(super) fn of(
        parts: Vec<&'a [u8]>,
        written: Option<usize>,
        a: &Args,
        utf8: bool,
    ) -> ResultText<'a> {
        let newlines = parts.len().saturating_sub(1);
        let escaped_len = parts.iter().map(|p| p.len()).sum::<usize>() + newlines;
        if a.max_text.is_some_and(|max| escaped_len > max) {
            return ResultText::Decoded(Cow::Owned(decode(&parts)));
        }
        match written.filter(|_| utf8) {
            Some(len) => ResultText::Written {
                parts,
                len: len + newlines,
            },
            None => ResultText::Parts { parts, utf8 },
        }
    }

    /// The text with its parts checked now ([`ResultText::Written`] when each is written as
    /// the output writes it), so that writing it later only copies it.
    pub(super) fn checked(self) -> ResultText<'a> {
        let ResultText::Parts { parts, utf8 } = &self else {
            return self;
        };
        let mut len = parts.len().saturating_sub(1);
        for p in parts {
            match written_len(p, *utf8) {
                Some(n) => len += n,
                None => return self,
            }
        }
        let ResultText::Parts { parts, .. } = self else {
            unreachable!("matched above")
        };
        ResultText::Written { parts, len }
    }

    /// The text of a JSON value, when it is a string.
    pub(super) fn of_string(raw: Raw<'a>, a: &Args, utf8: bool) -> Option<ResultText<'a>> {
        string_body(raw).map(|b| ResultText::of(vec![b], None, a, utf8))
    }

    /// The length of the text in bytes (UTF-8), found without writing it.
    pub(super) fn bytes(&self) -> u64 {
        match self {
            ResultText::Parts { parts, utf8 } => {
                let written: Option<usize> = parts.iter().map(|p| written_len(p, *utf8)).sum();
                match written {
                    Some(len) => (len + parts.len().saturating_sub(1)) as u64,
                    None => decode(parts).len() as u64,
                }
            }
            ResultText::Written { len, .. } => *len as u64,
            ResultText::Decoded(t) => t.len() as u64,
        }
    }
}

/// The bytes of the text a string body stands for, when it is written as the output writes
/// it; `utf8`: the body is known to be valid UTF-8.
fn written_len(body: &[u8], utf8: bool) -> Option<usize> {
    if utf8 {
        json::written_len(body)
    } else {
        output::escaped_as_written(body)
    }
}

/// The text of string bodies joined by newlines, decoded.
fn decode(parts: &[&[u8]]) -> String {
    let mut text = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&json::decode_string_body(p));
    }
    text
}

/// `text`, `text_truncated` and `bytes` of a result text.
pub(super) fn write_text(o: &mut Obj<'_>, text: Option<&ResultText<'_>>, a: &Args) {
    let text = match text {
        Some(t) if !a.no_content => t,
        _ => {
            o.null("text").bool("text_truncated", false);
            o.opt_u64("bytes", text.map(ResultText::bytes));
            return;
        }
    };
    let bytes = match text {
        ResultText::Parts { parts, utf8 } => match o.written_lines("text", parts, *utf8) {
            Some(len) => {
                o.bool("text_truncated", false);
                len as u64
            }
            None => write_decoded(o, &decode(parts), a),
        },
        ResultText::Written { parts, len } => {
            o.lines_as_written("text", parts)
                .bool("text_truncated", false);
            *len as u64
        }
        ResultText::Decoded(t) => write_decoded(o, t, a),
    };
    o.u64("bytes", bytes);
}

/// `text` and `text_truncated` of a decoded text, cut at --max-text characters; its length.
fn write_decoded(o: &mut Obj<'_>, t: &str, a: &Args) -> u64 {
    match a.max_text.and_then(|max| t.char_indices().nth(max)) {
        Some((cut, _)) => o.str("text", &t[..cut]).bool("text_truncated", true),
        None => o.str("text", t).bool("text_truncated", false),
    };
    t.len() as u64
}
