//! The document as GitHub-flavoured Markdown. Session text that is Markdown (user and
//! assistant text, summaries) is written as it is; every other text from the session is
//! escaped, or fenced, so it cannot change the document's structure.

use super::doc::{Item, Part, Pre, Session};
use pulldown_cmark::Options;
use std::fmt::Write;

pub(super) fn session(s: &Session, out: &mut String) {
    let _ = writeln!(out, "# {}\n", escape(&s.title));
    for (k, v) in &s.facts {
        let _ = writeln!(out, "- **{k}**: {}", escape(v));
    }
    out.push('\n');
    for item in &s.items {
        write_item(item, 2, out);
    }
}

fn write_item(item: &Item, level: usize, out: &mut String) {
    let _ = writeln!(out, "{} {}\n", "#".repeat(level + 1), escape(&item.title));
    if !item.meta.is_empty() {
        let meta: Vec<String> = item.meta.iter().map(|m| escape(m)).collect();
        let _ = writeln!(out, "*{}*\n", meta.join(" · "));
    }
    for p in &item.parts {
        write_part(p, level, out);
    }
}

fn write_part(p: &Part, level: usize, out: &mut String) {
    match p {
        Part::Markdown(t) => {
            let t = inert_html(&visible(t));
            let t = t.trim_end();
            if t.is_empty() {
            } else if let Some(t) = closed_fence(t) {
                let _ = writeln!(out, "{t}\n");
            } else {
                // A fence not closed by a line of its own: the text shown as it is.
                fence(&Pre::cut(t, t.len()), out);
            }
        }
        Part::Pre(pre) => fence(pre, out),
        Part::Folded(summary, parts) => {
            let _ = writeln!(
                out,
                "<details><summary>{}</summary>\n",
                html_escape(summary)
            );
            for p in parts {
                write_part(p, level, out);
            }
            out.push_str("</details>\n\n");
        }
        Part::Image(img) => {
            let _ = writeln!(out, "{}\n", escape(&img.label()));
        }
        Part::Note(n) => {
            let _ = writeln!(out, "*{}*\n", escape(n));
        }
        Part::Nested(item) => write_item(item, level + 1, out),
    }
}

/// `t` with the raw HTML in it (blocks and inline tags, as CommonMark finds them) made
/// text: its `<` written `&lt;`, so a viewer shows it instead of running it. Code spans and
/// blocks keep theirs (they show as text anyway).
fn inert_html(t: &str) -> String {
    use pulldown_cmark::{Event, Parser};
    let mut out = String::with_capacity(t.len());
    let mut done = 0;
    for (e, range) in Parser::new_ext(t, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH)
        .into_offset_iter()
    {
        if matches!(e, Event::Html(_) | Event::InlineHtml(_)) && range.start >= done {
            out.push_str(&t[done..range.start]);
            out.push_str(&t[range.clone()].replace('<', "&lt;"));
            done = range.end;
        }
    }
    out.push_str(&t[done..]);
    out
}

/// `t` (Markdown, its end trimmed) made to end where it ends: a code fence it leaves open,
/// which would hold every entry after it, closed by a line of the same fence. `None` when
/// that line does not close it.
fn closed_fence(t: &str) -> Option<std::borrow::Cow<'_, str>> {
    let Some((c, run)) = open_fence(t) else {
        return Some(t.into());
    };
    let closed = format!("{t}\n{}", c.to_string().repeat(run));
    open_fence(&closed).is_none().then_some(closed.into())
}

/// The fence (its character and length) of a code block `t` leaves open: one that holds a
/// paragraph written after `t`, as each entry after a message is.
fn open_fence(t: &str) -> Option<(char, usize)> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let probe = format!("{t}\n\nafter");
    let after = probe.len() - "after".len();
    let mut fence = None;
    for (e, r) in Parser::new_ext(
        &probe,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .into_offset_iter()
    {
        match e {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                let open = probe[r.start..].trim_start_matches([' ', '>']);
                fence = open
                    .chars()
                    .next()
                    .map(|c| (c, open.len() - open.trim_start_matches(c).len()));
            }
            Event::End(TagEnd::CodeBlock) => fence = None,
            Event::Text(_) if r.end > after => return fence,
            _ => {}
        }
    }
    None
}

/// `t` with control characters (but line breaks and tabs; a CR before a LF is part of the
/// line break, and dropped) and invisible format characters (but those text needs, see
/// [`needed_by_text`]) written as `\u{…}`, as `diag::sanitize` writes them: they cannot hide
/// or reorder text.
pub(super) fn visible(t: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || (crate::diag::is_invisible(c) && !needed_by_text(c))
    };
    if !t.chars().any(hidden) {
        return t.into();
    }
    let mut out = String::with_capacity(t.len() + 8);
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// The format characters that scripts and emoji need and that neither hide nor reorder the
/// text around them: the zero-width non-joiner and joiner (Persian, Indic scripts, emoji
/// sequences such as 👨‍💻), the soft hyphen, the tag characters of subdivision flags, and the
/// prefixed number signs and format controls of Arabic, Syriac, Kaithi, Egyptian
/// hieroglyphs, shorthand and musical notation. HTML and Markdown keep them; the terminal
/// view (`diag::sanitize`) still escapes them. Bidirectional controls, zero-width spaces,
/// the word joiner, the byte order mark and the line and paragraph separators stay escaped.
fn needed_by_text(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x0600..=0x0605
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x200C..=0x200D
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0020..=0xE007F
    )
}

/// A fenced block whose fence is longer than any run of backticks in the text.
fn fence(pre: &Pre, out: &mut String) {
    let mut longest = 0;
    let mut run = 0;
    for c in pre.text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let f = "`".repeat((longest + 1).max(3));
    // Nothing left of a cut text: the note alone.
    if !(pre.text.is_empty() && pre.cut_from.is_some()) {
        let _ = writeln!(
            out,
            "{f}text\n{}\n{f}\n",
            visible(pre.text.trim_end_matches(['\r', '\n']))
        );
    }
    if let Some(note) = pre.cut_note() {
        let _ = writeln!(out, "*({note})*\n");
    }
}

/// Text made inert in Markdown, inside a line that starts with markup of ours (a heading, a
/// list item, emphasis): each character that can open markup there escaped, line breaks
/// turned into spaces.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in visible(s).chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for HTML (the `<summary>` of a fold).
pub(super) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in visible(s).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
