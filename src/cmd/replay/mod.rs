//! pi-replay: sessions rendered for a person to read, as one self-contained HTML page,
//! GitHub-flavoured Markdown, or text for a terminal.
//!
//! pi-replay composes the other tools rather than repeating them: `facts` runs pi-branch,
//! pi-tools, pi-usage and pi-compactions over each input's bytes and keeps their records;
//! `build` turns the active branch and those records into a `doc` (sessions of items made of
//! parts); `markdown`, `html` (with `chart`, the context chart) and `text` render it. An input
//! is held whole while it is rendered (the page is, too).

mod args;
mod build;
mod chart;
mod doc;
mod facts;
mod html;
mod markdown;
mod site;
mod text;

pub use args::{Args, Format, MAN};

use crate::cli::ManPage;
use crate::cmd::compactions;
use crate::diag::{Diags, Kind};
use crate::input::{self, Contents, Opened};
use crate::models_json::{self, Models};
use crate::output::{Out, Stop};
use crate::record::Described;
use crate::tool::Tool;
use facts::Facts;
use std::io::IsTerminal;
use std::process::ExitCode;

/// pi-replay writes documents, not records.
pub const RECORDS: &[Described] = &[];

/// replay: the tool.
pub struct Replay;

/// A line of JSON parsed for rendering. serde_json refuses a string with a lone surrogate
/// escape (`"\ud800"`), which `JSON.parse` and the scanner take; such a line is parsed with
/// each lone surrogate read as U+FFFD, which is how every view shows one. `None` for a line
/// that is not JSON.
fn parse_json(text: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(text)
        .ok()
        .or_else(|| serde_json::from_slice(&lone_surrogates_as_fffd(text)?).ok())
}

/// `text` with each lone surrogate escape (`\ud800`, a lead not followed by a trail, or a
/// trail alone) written `\ufffd`, the same length; `None` when it holds none.
fn lone_surrogates_as_fffd(text: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u32> {
        let hex = text.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &text[i..]).map(|p| i + p) {
        match unit(at) {
            Some(0xD800..=0xDBFF) if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) => i = at + 12,
            Some(0xD800..=0xDFFF) => {
                out.get_or_insert_with(|| text.to_vec())[at..at + 6].copy_from_slice(b"\\ufffd");
                i = at + 6;
            }
            // Any other escape: passed whole, so the second byte of `\\` starts none.
            _ => i = at + 2,
        }
        if i >= text.len() {
            break;
        }
    }
    out
}

/// What Pi's own files in its agent directory say that a replay needs, read once a run and
/// their problems reported once: the context windows (models.json, or `--models`) and the
/// compaction reserves (settings.json), as pi-usage and pi-compactions read them.
pub(super) struct PiFiles {
    models: Models,
    reserves: compactions::Reserves,
}

impl PiFiles {
    fn load(args: &Args) -> PiFiles {
        PiFiles {
            models: models_json::load_for("pi-replay", args.models.as_deref()),
            reserves: compactions::Reserves::load("pi-replay", None),
        }
    }
}

impl Tool for Replay {
    type Args = Args;
    const MAN: ManPage = MAN;

    fn run(args: &Args) -> ExitCode {
        let sources = args.inputs.sources();
        let terminal = std::io::stdout().is_terminal();
        let format = args
            .format
            .unwrap_or(if terminal { Format::Text } else { Format::Html });
        // Text is coloured as every human view is (--color, NO_COLOR).
        let colour = crate::view::colour::enabled();
        let pi = PiFiles::load(args);
        // Whether the head was written, and whether any input held a session.
        let (mut started, mut any) = (false, false);
        let pages = match args.out_dir {
            Some(_) => site::page_names(&sources),
            None => Vec::new(),
        };
        input::run(
            "pi-replay",
            &sources,
            args.inputs.threads(),
            |src, out, d| {
                if let Some(dir) = &args.out_dir {
                    let at = sources.iter().position(|s| std::ptr::eq(s, src));
                    let name = at
                        .and_then(|i| pages.get(i))
                        .cloned()
                        .unwrap_or_else(|| site::page_names(std::slice::from_ref(src)).remove(0));
                    return site::page(args, &pi, dir, src, &name, d).map(|()| false);
                }
                if std::ptr::eq(src, &sources[0]) {
                    start(format, out)?;
                }
                with_bytes(src, d, |b, d| {
                    render(args, &pi, format, colour, b, &src.name(), out, d)
                })
                .map(|title| title.flatten().is_some())
            },
            |r, out| match r {
                Some(session) => {
                    (started, any) = (true, any || session);
                    Ok(())
                }
                None if args.out_dir.is_none() => {
                    // No input at all (an empty folder): the page still starts.
                    if !started {
                        start(format, out)?;
                    }
                    if !any {
                        empty(format, out)?;
                    }
                    end(format, out)
                }
                None => Ok(()),
            },
        )
    }

    /// Renders `input` as if it came on stdin, in the format asked (HTML when none is).
    fn run_bytes(args: &Args, input: &[u8], out: &mut Out, d: &mut Diags) -> Result<(), Stop> {
        let format = args.format.unwrap_or(Format::Html);
        let pi = PiFiles::load(args);
        start(format, out)?;
        if render(args, &pi, format, false, input, "<stdin>", out, d)?.is_none() {
            empty(format, out)?;
        }
        end(format, out)
    }
}

/// Calls `f` with the bytes of `src` (mapped, read whole, or read from a stream); `None`
/// when it cannot be opened (reported). A named file with no record is reported as every
/// tool reports it.
fn with_bytes<R>(
    src: &input::Source,
    d: &mut Diags,
    f: impl FnOnce(&[u8], &mut Diags) -> Result<R, Stop>,
) -> Result<Option<R>, Stop> {
    let f = |b: &[u8], d: &mut Diags| {
        if !src.is_stdin() && b.iter().all(u8::is_ascii_whitespace) {
            d.report(None, Kind::MissingHeader, "empty file: no session header");
        }
        f(b, d)
    };
    let Some(opened) = Opened::open(src, d) else {
        return Ok(None);
    };
    opened
        .contents(|c| match c {
            Contents::Mapped(m) => f(m.bytes(), d),
            Contents::Whole(b, err) => {
                let r = f(b, d);
                if let Some(e) = err {
                    d.report(None, Kind::Io, format!("read error: {e}"));
                }
                r
            }
            Contents::Stream(r) => {
                let mut b = Vec::new();
                if let Err(e) = r.read_to_end(&mut b) {
                    d.report(None, Kind::Io, format!("read error: {e}"));
                }
                f(&b, d)
            }
        })
        .map(Some)
}

/// What comes before the first input (the HTML page's head).
fn start(format: Format, out: &mut Out) -> Result<(), Stop> {
    match format {
        Format::Html => out.raw(html::head("Pi session replay").as_bytes()),
        Format::Md | Format::Text => Ok(()),
    }
}

/// What stands for the sessions when the inputs held none (the page would be blank).
fn empty(format: Format, out: &mut Out) -> Result<(), Stop> {
    match format {
        Format::Html => out.raw(b"<p class=\"note\">No session in the input.</p>\n"),
        Format::Md | Format::Text => Ok(()),
    }
}

/// What comes after the last input.
fn end(format: Format, out: &mut Out) -> Result<(), Stop> {
    match format {
        Format::Html => out.raw(html::TAIL.as_bytes()),
        Format::Md | Format::Text => Ok(()),
    }
}

/// Renders the sessions of one input named `file`, with what Pi's files say (`pi`); the first
/// session's title.
#[allow(clippy::too_many_arguments)]
fn render(
    args: &Args,
    pi: &PiFiles,
    format: Format,
    colour: bool,
    input: &[u8],
    file: &str,
    out: &mut Out,
    d: &mut Diags,
) -> Result<Option<String>, Stop> {
    let redacted;
    let (input, file) = if args.redact {
        let withheld;
        (redacted, withheld) = crate::cmd::redact::redacted(input);
        if withheld > 0 {
            d.report(
                None,
                Kind::BadField,
                format!(
                    "{withheld} {} still held private text after redaction: left out",
                    doc::noun(withheld, "record", "records")
                ),
            );
        }
        // The file's name may say whose it is (Pi names a session's folder after its cwd).
        (&redacted[..], "[redacted]")
    } else {
        (input, file)
    };
    let facts = Facts::gather(input, pi, args.branches, args.max_text, d)?;
    let mut buf = String::new();
    let mut title = None;
    for s in build::sessions(&facts, args, file) {
        title.get_or_insert_with(|| s.title.clone());
        match format {
            Format::Md => markdown::session(&s, &mut buf),
            Format::Html => html::session(&s, &mut buf),
            Format::Text => text::session(&s, colour, &mut buf),
        }
        out.raw(buf.as_bytes())?;
        buf.clear();
    }
    Ok(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lone surrogates (a lead alone, a lead before a lead, a trail alone) become `\ufffd`;
    /// pairs, other escapes and an escaped backslash before `ud800` stay; so serde_json reads
    /// the line, each lone one as U+FFFD.
    #[test]
    fn lone_surrogates_are_read_as_u_fffd() {
        let fixed =
            |t: &str| lone_surrogates_as_fffd(t.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(fixed(r#"["\ud800"]"#).as_deref(), Some(r#"["\ufffd"]"#));
        assert_eq!(
            fixed(r#"["a\uDBFF\ud800\udc00\udc01b"]"#).as_deref(),
            Some(r#"["a\ufffd\ud800\udc00\ufffdb"]"#)
        );
        for kept in [
            r#"["\\ud800"]"#,
            r#"["\ud83d\ude00"]"#,
            r#"["\u0041\n\"\\"]"#,
            r#"["\"#,
        ] {
            assert_eq!(fixed(kept), None, "{kept}");
        }
        let v = parse_json(br#"{"id":"\ud801","t":"\\ud800 \ud83d\ude00"}"#).unwrap();
        assert_eq!(v["id"], "\u{FFFD}");
        assert_eq!(v["t"], "\\ud800 \u{1F600}");
        assert!(parse_json(b"{").is_none());
    }
}
