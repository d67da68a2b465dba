//! The document as GitHub-flavoured Markdown. Session text that is Markdown (user and
//! assistant text, summaries) is written as it is; every other text from the session is
//! escaped, or fenced, so it cannot change the document's structure.

use super::doc::{Item, Part, Pre, Session};
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
            if !t.is_empty() {
                let _ = writeln!(out, "{t}\n");
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
    use pulldown_cmark::{Event, Options, Parser};
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

/// `t` with control characters (but line breaks and tabs) and invisible format characters
/// written as `\u{…}`, as `diag::sanitize` writes them: they cannot hide or reorder text.
pub(super) fn visible(t: &str) -> std::borrow::Cow<'_, str> {
    let hidden =
        |c: char| (c.is_control() && c != '\n' && c != '\t') || crate::diag::is_invisible(c);
    if !t.chars().any(hidden) {
        return t.into();
    }
    let mut out = String::with_capacity(t.len() + 8);
    for c in t.chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.into()
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
    let _ = writeln!(
        out,
        "{f}text\n{}\n{f}\n",
        visible(pre.text.trim_end_matches('\n'))
    );
    if let Some(n) = pre.cut_from {
        let _ = writeln!(
            out,
            "*(cut: the first {} of {} bytes shown)*\n",
            pre.text.len(),
            n
        );
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
