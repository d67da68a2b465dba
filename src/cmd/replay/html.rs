//! The document as one self-contained HTML page: no script, no external request (the
//! Content-Security-Policy forbids both), folding by `<details>`, light and dark by
//! `prefers-color-scheme`, images inline as data: URIs. Every text from the session is
//! escaped; Markdown is rendered with pulldown-cmark, its raw HTML shown as text, its images
//! not loaded and its links kept only when they lead to a web page or an anchor.

use super::chart;
use super::doc::{counted, Image, Item, Part, Pre, Session};
use super::markdown::{html_escape as esc, visible};
use crate::view::bytes;
use base64::Engine;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use std::fmt::Write;

/// The page before the first session, titled `title` (escaped here).
pub(super) fn head(title: &str) -> String {
    format!(
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
            "<meta name=\"referrer\" content=\"no-referrer\">\n",
            "<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n<main>\n"
        ),
        esc(title),
        include_str!("page.css")
    )
}

/// The page after the last session.
pub(super) const TAIL: &str = "</main>\n</body>\n</html>\n";

pub(super) fn session(s: &Session, out: &mut String) {
    let _ = writeln!(
        out,
        "<section class=\"session\">\n<h1>{}</h1>\n<dl>",
        esc(&s.title)
    );
    for (k, v) in &s.facts {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    }
    out.push_str("</dl>\n");
    chart::svg(&s.chart, out);
    for (i, item) in s.items.iter().enumerate() {
        if i % GROUP == 0 {
            if i > 0 {
                out.push_str("</div>\n");
            }
            out.push_str("<div class=\"items\">\n");
        }
        write_item(item, out);
    }
    if !s.items.is_empty() {
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

/// The items are written in groups of this many, each a `div.items` that the page's style
/// lets the browser leave unlaid and unpainted while it is off screen (`content-visibility:
/// auto`): a page of tens of thousands of entries opens in the time it takes to parse it.
/// Groups rather than each item: on the page of a 100 MB session, one such box per item cost
/// Chromium twice the time of one per fifty (BENCHMARKS.md).
const GROUP: usize = 50;

fn write_item(item: &Item, out: &mut String) {
    let failed = if item.failed { " failed" } else { "" };
    let _ = writeln!(
        out,
        "<article class=\"item {}{failed}\">\n<h2>{}</h2>",
        item.kind,
        esc(&item.title)
    );
    if !item.meta.is_empty() {
        let meta: Vec<String> = item.meta.iter().map(|m| esc(m)).collect();
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", meta.join(" · "));
    }
    for p in &item.parts {
        write_part(p, out);
    }
    out.push_str("</article>\n");
}

fn write_part(p: &Part, out: &mut String) {
    match p {
        Part::Markdown(t) => markdown(t, out),
        Part::Pre(pre) => write_pre(pre, out),
        Part::Folded(summary, parts) => {
            let _ = writeln!(out, "<details><summary>{}</summary>", esc(summary));
            for p in parts {
                write_part(p, out);
            }
            out.push_str("</details>\n");
        }
        Part::Image(img) => image(img, out),
        Part::Note(n) => {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(n));
        }
        Part::Nested(item) => write_item(item, out),
    }
}

fn write_pre(pre: &Pre, out: &mut String) {
    // Nothing left of a cut text: the note alone.
    if !(pre.text.is_empty() && pre.cut_from.is_some()) {
        let _ = writeln!(out, "<pre>{}</pre>", esc(&pre.text));
    }
    match pre.cut_from {
        Some(n) if pre.text.is_empty() => {
            let _ = writeln!(
                out,
                "<p class=\"note\">cut: none of the {} shown ({} in all)</p>",
                counted(n as u64, "byte", "bytes"),
                bytes(n as u64)
            );
        }
        Some(n) => {
            let _ = writeln!(
                out,
                "<p class=\"note\">cut: the first {} of {} shown ({} in all)</p>",
                pre.text.len(),
                n,
                bytes(n as u64)
            );
        }
        None => {}
    }
}

/// The image types shown inline (others are named, not shown: an SVG could hold a script).
const INLINE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

fn image(img: &Image, out: &mut String) {
    let known = img
        .mime
        .as_deref()
        .and_then(|m| INLINE_TYPES.iter().find(|t| **t == m));
    let engine = base64::engine::general_purpose::STANDARD;
    let decoded = engine.decode(img.data.trim()).ok();
    match (known, decoded) {
        (Some(mime), Some(bytes)) => {
            let _ = writeln!(
                out,
                "<figure><img alt=\"{}\" src=\"data:{mime};base64,{}\"></figure>",
                esc(&img.label()),
                engine.encode(&bytes)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "<p class=\"note\">{} (not shown)</p>",
                esc(&img.label())
            );
        }
    }
}

/// Markdown rendered, with raw HTML shown as text, images named instead of loaded, and links
/// kept only to http(s), mailto and anchors.
fn markdown(t: &str, out: &mut String) {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    let events = Parser::new_ext(t, opts).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Text(t) => Event::Text(CowStr::from(visible(&t).into_owned())),
        Event::Code(t) => Event::Code(CowStr::from(visible(&t).into_owned())),
        Event::Start(Tag::Image { dest_url, .. }) => {
            Event::Text(CowStr::from(format!("[image: {dest_url}] ")))
        }
        Event::End(TagEnd::Image) => Event::Text(CowStr::from("")),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let safe = ["http://", "https://", "mailto:", "#"]
                .iter()
                .any(|p| dest_url.to_ascii_lowercase().starts_with(p));
            let dest_url = if safe { dest_url } else { CowStr::from("#") };
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        e => e,
    });
    out.push_str("<div class=\"md\">");
    pulldown_cmark::html::push_html(out, events);
    out.push_str("</div>\n");
}
