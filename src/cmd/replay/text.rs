//! The document as text for a terminal: titles in colour (when asked), parts indented, and
//! every text from the session passed through `diag::sanitize` line by line, so control and
//! invisible characters show escaped and cannot drive the terminal.

use super::doc::{Item, Part, Session};
use crate::diag::sanitize;
use std::fmt::Write;

struct Style {
    colour: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

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
    let st = Style { colour };
    let _ = writeln!(
        out,
        "{}",
        st.paint("1", &format!("== {} ==", sanitize(&s.title)))
    );
    for (k, v) in &s.facts {
        let _ = writeln!(out, "{}: {}", st.paint("2", k), sanitize(v));
    }
    out.push('\n');
    for item in &s.items {
        write_item(item, &st, 0, out);
    }
}

fn write_item(item: &Item, st: &Style, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let _ = writeln!(
        out,
        "{pad}{}",
        st.paint(colour_of(item.kind), &sanitize(&item.title))
    );
    if !item.meta.is_empty() {
        let meta: Vec<String> = item.meta.iter().map(|m| sanitize(m).into_owned()).collect();
        let _ = writeln!(out, "{pad}  {}", st.paint("2", &meta.join(" · ")));
    }
    for p in &item.parts {
        write_part(p, st, indent + 2, out);
    }
    out.push('\n');
}

fn lines(text: &str, pad: &str, out: &mut String) {
    for l in text.trim_end().lines() {
        let _ = writeln!(out, "{pad}{}", sanitize(l));
    }
}

fn write_part(p: &Part, st: &Style, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match p {
        Part::Markdown(t) => lines(t, &pad, out),
        Part::Pre(pre) => {
            lines(&pre.text, &format!("{pad}│ "), out);
            if let Some(n) = pre.cut_from {
                let _ = writeln!(
                    out,
                    "{pad}{}",
                    st.paint(
                        "2",
                        &format!("(cut: the first {} of {n} bytes shown)", pre.text.len())
                    )
                );
            }
        }
        Part::Folded(summary, parts) => {
            let _ = writeln!(
                out,
                "{pad}{}",
                st.paint("2", &format!("▸ {}", sanitize(summary)))
            );
            for p in parts {
                write_part(p, st, indent + 2, out);
            }
        }
        Part::Image(img) => {
            let _ = writeln!(out, "{pad}{}", sanitize(&img.label()));
        }
        Part::Note(n) => {
            let _ = writeln!(out, "{pad}{}", st.paint("2", &sanitize(n)));
        }
        Part::Nested(item) => write_item(item, st, indent, out),
    }
}
