//! The document as text for a terminal: titles in colour (when asked), parts indented, and
//! every text from the session passed through `diag::sanitize` line by line, so control and
//! invisible characters show escaped and cannot drive the terminal. Given a width (COLUMNS,
//! else the terminal's; none in a pipe), lines are wrapped to it and keep their indentation:
//! prose at blanks (textwrap), code and output at the width, each piece behind its `│ `.

use super::doc::{Item, Part, Session};
use crate::diag::sanitize;
use crate::view::width;
use std::fmt::Write;

struct Style {
    colour: bool,
    width: Option<usize>,
}

/// How a line is wrapped when it is longer than the width.
#[derive(Clone, Copy)]
enum Wrap {
    /// At blanks, a word longer than the line cut where the line ends.
    Words,
    /// Where the line ends, blanks and all (code, command output).
    Columns,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Writes `text` (one line, sanitized) behind `pad`, wrapped to the width with `pad`
    /// before every piece, each piece painted `code` when there is one.
    fn line(&self, pad: &str, text: &str, wrap: Wrap, code: Option<&str>, out: &mut String) {
        self.line_under(pad, pad, text, wrap, code, out);
    }

    /// As [`Style::line`], with `cont` before each piece after the first.
    fn line_under(
        &self,
        pad: &str,
        cont: &str,
        text: &str,
        wrap: Wrap,
        code: Option<&str>,
        out: &mut String,
    ) {
        let room = self.width.map(|w| {
            w.saturating_sub(width::shown(pad).max(width::shown(cont)))
                .max(MIN_ROOM)
        });
        let pieces: Vec<std::borrow::Cow<'_, str>> = match (room, wrap) {
            (Some(room), _) if width::shown(text) <= room => vec![text.into()],
            (Some(room), Wrap::Words) => width::wrap_words(text, room),
            (Some(room), Wrap::Columns) => width::pieces(text, room)
                .into_iter()
                .map(Into::into)
                .collect(),
            (None, _) => vec![text.into()],
        };
        for (i, piece) in pieces.iter().enumerate() {
            let lead = if i == 0 { pad } else { cont };
            let piece = match code {
                Some(code) => self.paint(code, piece),
                None => piece.to_string(),
            };
            let _ = writeln!(out, "{lead}{piece}");
        }
    }
}

/// The fewest columns a wrapped line gets, however deep its indentation.
const MIN_ROOM: usize = 20;

/// A failed tool call or command: bold red, as pi-tools paints an error (`Paint::Error`).
const FAILED: &str = "1;31";

fn colour_of(kind: &str) -> &'static str {
    match kind {
        "user" => "1;34",
        "assistant" => "1;32",
        "tool" | "command" => "1;33",
        "compaction" | "summary" => "1;35",
        "unknown" => "1;31",
        _ => "1;36",
    }
}

pub(super) fn session(s: &Session, colour: bool, out: &mut String) {
    let st = Style {
        colour,
        width: width::columns(),
    };
    let title = format!("== {} ==", sanitize(&s.title));
    st.line("", &title, Wrap::Words, Some("1"), out);
    for (k, v) in &s.facts {
        // The name painted, the value after it; a long value goes on under the name.
        let fact = format!("{k}: {}", sanitize(v));
        let mut wrapped = String::new();
        st.line_under("", "  ", &fact, Wrap::Words, None, &mut wrapped);
        let rest = wrapped.strip_prefix(k.as_str()).unwrap_or(&wrapped);
        let _ = write!(out, "{}{rest}", st.paint("2", k));
    }
    out.push('\n');
    for item in &s.items {
        write_item(item, &st, 0, out);
    }
}

fn write_item(item: &Item, st: &Style, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let title = sanitize(&item.title);
    let (title_code, meta_code) = match item.failed {
        true => (FAILED, FAILED),
        false => (colour_of(item.kind), "2"),
    };
    st.line(&pad, &title, Wrap::Words, Some(title_code), out);
    if !item.meta.is_empty() {
        let meta: Vec<String> = item.meta.iter().map(|m| sanitize(m).into_owned()).collect();
        st.line(
            &format!("{pad}  "),
            &meta.join(" · "),
            Wrap::Words,
            Some(meta_code),
            out,
        );
    }
    for p in &item.parts {
        write_part(p, st, indent + 2, out);
    }
    out.push('\n');
}

fn lines(st: &Style, text: &str, pad: &str, wrap: Wrap, out: &mut String) {
    for l in text.trim_end().lines() {
        st.line(pad, &sanitize(&expand_tabs(l)), wrap, None, out);
    }
}

/// `line` with each tab replaced by blanks to the next column of eight, columns counted as
/// the terminal shows the text before it.
fn expand_tabs(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\t') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for piece in line.split_inclusive('\t') {
        let text = piece.strip_suffix('\t');
        let shown = text.unwrap_or(piece);
        out.push_str(shown);
        column += width::shown(&sanitize(shown));
        if text.is_some() {
            let blanks = 8 - column % 8;
            out.extend(std::iter::repeat_n(' ', blanks));
            column += blanks;
        }
    }
    out.into()
}

fn write_part(p: &Part, st: &Style, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match p {
        Part::Markdown(t) => lines(st, t, &pad, Wrap::Words, out),
        Part::Pre(pre) => {
            lines(st, &pre.text, &format!("{pad}│ "), Wrap::Columns, out);
            if let Some(note) = pre.cut_note() {
                st.line(&pad, &format!("({note})"), Wrap::Words, Some("2"), out);
            }
        }
        Part::Folded(summary, parts) => {
            let summary = format!("▸ {}", sanitize(summary));
            st.line(&pad, &summary, Wrap::Words, Some("2"), out);
            for p in parts {
                write_part(p, st, indent + 2, out);
            }
        }
        Part::Image(img) => st.line(&pad, &sanitize(&img.label()), Wrap::Words, None, out),
        Part::Note(n) => st.line(&pad, &sanitize(n), Wrap::Words, Some("2"), out),
        Part::Nested(item) => write_item(item, st, indent, out),
    }
}
