//! --out-dir: one HTML page per input, and an index of every page in the folder. Each file
//! is written beside its final name and renamed into place, and the index is rebuilt from the
//! folder after each page, so pi-replay processes running at once (`xargs -P`) leave a
//! complete index: the last one to finish lists every page.

use super::{args::Args, html, render, with_bytes, Format, PiFiles};
use crate::diag::{Diags, Kind};
use crate::input::Source;
use crate::output::{Out, Stop};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// The name of the index page.
const INDEX: &str = "index.html";

/// The page of each of `sources`, by its place: its name, or (`Err`) the earlier input whose
/// page has that name (two inputs `a/s.jsonl` and `b/s.jsonl`): the second is not written,
/// where it would replace the first's page of this run.
pub(super) fn page_names(sources: &[Source]) -> Vec<Result<String, String>> {
    let mut first: HashMap<String, String> = HashMap::new();
    sources
        .iter()
        .map(|src| {
            let name = page_name(src);
            match first.get(&name) {
                Some(other) => Err(other.clone()),
                None => {
                    first.insert(name.clone(), src.name());
                    Ok(name)
                }
            }
        })
        .collect()
}

/// Renders `src` into its page `name` in `dir` (`Err`: the page of an earlier input, not
/// written), then rewrites the index.
pub(super) fn page(
    args: &Args,
    pi: &PiFiles,
    dir: &Path,
    src: &Source,
    name: &Result<String, String>,
    d: &mut Diags,
) -> Result<(), Stop> {
    let name = match name {
        Ok(n) => n.clone(),
        Err(other) => {
            d.report(
                None,
                Kind::Io,
                format!(
                    "its page {} is that of {other} in this run: not written",
                    page_name(src)
                ),
            );
            return Ok(());
        }
    };
    let mut body = Out::held();
    let rendered = with_bytes(src, d, |b, d| {
        render(args, pi, Format::Html, false, b, &src.name(), &mut body, d)
    })?;
    let Some(title) = rendered else {
        return Ok(());
    };
    let title = title.unwrap_or_else(|| format!("{name} (no session)"));
    let mut page = html::head(&title).into_bytes();
    page.extend_from_slice(&body.buf);
    page.extend_from_slice(html::TAIL.as_bytes());
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| replace(dir, &name, &page)) {
        d.report(
            None,
            Kind::Io,
            format!("cannot write {}: {e}", dir.join(&name).display()),
        );
        return Ok(());
    }
    if let Err(e) = write_index(dir) {
        d.report(
            None,
            Kind::Io,
            format!("cannot write {}: {e}", dir.join(INDEX).display()),
        );
    }
    Ok(())
}

/// `s.jsonl` → `s.html`; `index.jsonl` → `index-page.html` (`index.html` is the index);
/// stdin → `stdin.html`.
fn page_name(src: &Source) -> String {
    let stem = match src {
        Source::Stdin => None,
        Source::Path(p) => p.file_stem().map(|s| s.to_string_lossy().into_owned()),
    };
    match stem.filter(|s| !s.is_empty()) {
        Some(s) if s == "index" => "index-page.html".into(),
        Some(s) => format!("{s}.html"),
        None => "stdin.html".into(),
    }
}

/// Writes `bytes` to `dir/name` through a temporary file renamed into place. The temporary
/// name is this process's and this call's own: the inputs of one run are written on several
/// threads, each rewriting the index.
fn replace(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{call}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))
}

/// The title of the page at `path`: its `<title>`, as pi-replay wrote it (escaped already).
fn title_of(path: &Path) -> Option<String> {
    let mut head = vec![0; 4096];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head[..n]);
    let start = head.find("<title>")? + "<title>".len();
    let end = start + head[start..].find("</title>")?;
    Some(head[start..end].to_string())
}

/// Rewrites `dir/index.html`: a link to every `.html` page in `dir`, by name.
fn write_index(dir: &Path) -> std::io::Result<()> {
    let mut pages: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html") && n != INDEX && !n.starts_with('.'))
        .collect();
    pages.sort();
    let mut page = html::head("Pi sessions");
    page.push_str("<section class=\"session\">\n<h1>Pi sessions</h1>\n<ul>\n");
    for p in &pages {
        let title = title_of(&dir.join(p)).unwrap_or_else(|| html_text(p));
        page.push_str(&format!(
            "<li><a href=\"{}\">{title}</a> <span class=\"note\">{}</span></li>\n",
            href(p),
            html_text(p)
        ));
    }
    page.push_str("</ul>\n</section>\n");
    page.push_str(html::TAIL);
    replace(dir, INDEX, page.as_bytes())
}

fn html_text(s: &str) -> String {
    super::markdown::html_escape(s)
}

/// A file name as a relative URL: every byte but letters, digits, `.`, `_` and `-`
/// percent-encoded.
fn href(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
