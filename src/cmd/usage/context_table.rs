//! pi-usage --context --table: each session's context series as text for a person, one row per
//! assistant message with a bar of its recorded context, the context window marked on the bar,
//! and compactions and inferred drops named beside it.
//!
//! Layout, fitted to the width ([`crate::view::width`]): a heading per session (id and input, first
//! model, its window and where that came from), then `line`, `time`, `context`, `fill`, the
//! bar, and a note (under the row when it does not fit beside the bar). The bar takes what
//! the other columns and [`NOTE`] leave (at least [`MIN_BAR`]); a line still too wide is cut
//! at its end.

use super::records::ContextRecord;
use crate::models_json::Window;
use crate::view::width;
use crate::view::{thousands, Paint};

/// The narrowest bar drawn.
const MIN_BAR: usize = 8;
/// The room kept for the note when the width is limited (`compacted, drop 123,456`).
const NOTE: usize = 24;
/// The bar's width when the table has no width limit.
const FREE_BAR: usize = 40;

/// What a row shows of one `context` record.
pub struct ContextRow {
    line: u64,
    time: String,
    model: Option<String>,
    context: Option<u128>,
    window: Option<Window>,
    drop: Option<u128>,
    after_compaction: bool,
}

impl ContextRow {
    pub fn of(r: &ContextRecord<'_>) -> ContextRow {
        ContextRow {
            line: r.line,
            time: r.timestamp.as_deref().map_or("-".into(), clock),
            model: r
                .model
                .as_deref()
                .map(|m| crate::diag::sanitize(m).into_owned()),
            context: r.recorded_context_tokens,
            window: r.configured_window,
            drop: r.inferred_context_drop,
            after_compaction: r.after_compaction,
        }
    }
}

/// `hh:mm` of an ISO timestamp as written (UTC as Pi writes it), else `-`.
fn clock(ts: &str) -> String {
    match (ts.get(10..11), ts.get(11..16)) {
        (Some("T" | " "), Some(hm)) if hm.as_bytes().get(2) == Some(&b':') => hm.to_string(),
        _ => "-".into(),
    }
}

/// The rows of one session as text, `columns` wide at most (`None`: no limit).
pub fn render(session: &str, file: &str, rows: &[ContextRow], columns: Option<usize>) -> String {
    let mut out = heading(session, file, rows, columns);
    if rows.is_empty() {
        out.push_str("  (no assistant messages)\n");
        return out;
    }
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            [
                r.line.to_string(),
                r.time.clone(),
                r.context.map_or("-".into(), thousands),
                fill(r).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let head = ["line", "time", "context", "fill"];
    let w: Vec<usize> = (0..4)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let fixed: usize = w.iter().sum::<usize>() + 2 * 4;
    let bar_w = match columns {
        None => FREE_BAR,
        // The bar gets what is left after the numbers and room for a note.
        Some(c) => c.saturating_sub(fixed + 1 + NOTE).max(MIN_BAR),
    };
    let scale = rows
        .iter()
        .filter_map(|r| r.context)
        .chain(
            rows.iter()
                .filter_map(|r| r.window.map(|w| u128::from(w.tokens))),
        )
        .max()
        .unwrap_or(0);
    let colour = crate::view::colour::enabled();
    let heads = format!(
        "{:>w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
        head[0],
        head[1],
        head[2],
        head[3],
        "context (│ window)",
        w0 = w[0],
        w1 = w[1],
        w2 = w[2],
        w3 = w[3]
    );
    let heads = match columns {
        Some(c) => width::cut(&heads, c),
        None => heads,
    };
    out.push_str(&Paint::Head.apply(&heads, colour));
    out.push('\n');
    let mut model = rows.first().and_then(|r| r.model.clone());
    for (r, c) in rows.iter().zip(&cells) {
        let mut line = format!(
            "{:>w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
            c[0],
            c[1],
            c[2],
            c[3],
            bar(r.context, r.window, scale, bar_w),
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        );
        let n = note(r, &mut model);
        // A note that does not fit beside the bar goes under it, on a line of its own, moved
        // left as far as it needs to fit whole.
        let mut below = None;
        if !n.is_empty() {
            let beside = width::shown(line.trim_end()) + 1 + width::shown(&n);
            match columns {
                Some(c) if beside > c => {
                    let indent = fixed.min(c.saturating_sub(width::shown(&n)));
                    below = Some(format!("{:indent$}{n}", ""));
                }
                _ => {
                    line.push(' ');
                    line.push_str(&n);
                }
            }
        }
        for line in std::iter::once(line).chain(below) {
            let line = match columns {
                Some(c) => width::cut(line.trim_end(), c),
                None => line.trim_end().to_string(),
            };
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The session's heading: its id and input, then its first model and window.
fn heading(session: &str, file: &str, rows: &[ContextRow], columns: Option<usize>) -> String {
    let first = rows.iter().find(|r| r.model.is_some());
    let model = first.and_then(|r| r.model.as_deref()).unwrap_or("(none)");
    let window = match first.and_then(|r| r.window) {
        Some(w) => {
            let from = match w.source.catalogue() {
                Some(c) => format!("built in, {c}"),
                None => format!("models.json, {}", w.source.name()),
            };
            format!("window {} ({from})", thousands(w.tokens.into()))
        }
        None => "window unknown".into(),
    };
    let lines = [
        format!(
            "session {}  {}",
            crate::diag::sanitize(session),
            crate::diag::sanitize(file)
        ),
        format!("model {model}"),
        window,
    ];
    let colour = crate::view::colour::enabled();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let l = match columns {
            Some(c) => width::cut(l, c),
            None => l.clone(),
        };
        // The session's line in bold.
        let paint = if i == 0 { Paint::Head } else { Paint::Plain };
        out.push_str(&paint.apply(&l, colour));
        out.push('\n');
    }
    out
}

/// The fill of the window, `57%`, when both are known.
fn fill(r: &ContextRow) -> Option<String> {
    let (c, w) = (r.context?, r.window?);
    Some(format!(
        "{}%",
        (c * 100 + u128::from(w.tokens) / 2) / u128::from(w.tokens)
    ))
}

/// A bar `width` wide: `█` for the context, `│` where the window ends, `·` for the rest of the
/// window; all relative to `scale` (the largest context or window of the session).
fn bar(context: Option<u128>, window: Option<Window>, scale: u128, width: usize) -> String {
    if scale == 0 {
        return " ".repeat(width);
    }
    let cells = |v: u128| ((v * width as u128 + scale / 2) / scale).min(width as u128) as usize;
    // Any context shows: a sliver rounds up to one cell.
    let filled = context.map_or(0, |c| if c > 0 { cells(c).max(1) } else { 0 });
    let edge = window.map(|w| cells(u128::from(w.tokens)).max(1) - 1);
    let mut s = String::with_capacity(width * 3);
    for i in 0..width {
        s.push(match (i < filled, edge) {
            (_, Some(e)) if i == e => '│',
            (true, _) => '█',
            (false, Some(e)) if i < e => '·',
            _ => ' ',
        });
    }
    s
}

/// What else a row says: a compaction before it, an inferred drop, a new model.
fn note(r: &ContextRow, model: &mut Option<String>) -> String {
    let mut parts = Vec::new();
    if r.after_compaction {
        parts.push("compacted".to_string());
    }
    if let Some(d) = r.drop {
        parts.push(format!("drop {}", thousands(d)));
    }
    if r.model.is_some() && r.model != *model {
        parts.push(format!("model {}", r.model.as_deref().unwrap_or("")));
        model.clone_from(&r.model);
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models_json::WindowSource;

    #[test]
    fn bars_mark_the_window_and_scale_to_the_largest() {
        let w = Some(Window {
            tokens: 100,
            source: WindowSource::Builtin("c"),
        });
        assert_eq!(bar(Some(50), w, 100, 10), "█████····│");
        assert_eq!(bar(Some(100), w, 100, 10), "█████████│");
        assert_eq!(bar(Some(200), w, 200, 10), "████│█████");
        assert_eq!(bar(Some(30), None, 60, 4), "██  ");
        assert_eq!(bar(Some(1), None, 1000, 4), "█   ");
        assert_eq!(bar(None, None, 0, 3), "   ");
        assert_eq!(clock("2026-05-01T10:07:01.000Z"), "10:07");
        assert_eq!(clock("yesterday"), "-");
    }
}
