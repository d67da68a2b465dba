//! Reading the parts of Pi entries that several tools need: message roles and text.

use crate::json;

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
    fn truncates_by_characters() {
        assert_eq!(truncate_chars("héllo  wörld", 5), "héll…");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
