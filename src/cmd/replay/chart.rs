//! The context chart: an inline SVG of the recorded context (input + cache read + cache write)
//! of each assistant message on the branch, with the configured window, the compactions and
//! pi-usage's inferred context drops marked. Numbers only: no session text reaches it.

use super::doc::{count, Chart};
use std::fmt::Write;

const W: f64 = 800.0;
const H: f64 = 180.0;
const PAD: f64 = 30.0;

pub(super) fn svg(c: &Chart, out: &mut String) {
    if c.points.is_empty() {
        out.push_str(
            "<p class=\"note\">No assistant message with recorded usage: no context chart.</p>\n",
        );
        return;
    }
    let top = c
        .points
        .iter()
        .map(|p| p.tokens)
        .chain(c.window)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let n = c.points.len();
    let x = |i: usize| {
        PAD + (W - 2.0 * PAD)
            * if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.5
            }
    };
    let y = |t: u64| H - PAD - (H - 2.0 * PAD) * (t as f64 / top);
    let _ = writeln!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"recorded context per assistant message\">"
    );
    let _ = writeln!(
        out,
        "<text x=\"{PAD}\" y=\"16\">recorded context per assistant message, {n} message(s); top {} tokens{}</text>",
        count(top as u64),
        match c.window {
            Some(w) => format!("; configured window {} (dashed)", count(w)),
            None => "; no configured window known".into(),
        }
    );
    if let Some(w) = c.window {
        let _ = writeln!(
            out,
            "<line class=\"window\" x1=\"{PAD}\" x2=\"{}\" y1=\"{1:.1}\" y2=\"{1:.1}\"/>",
            W - PAD,
            y(w)
        );
    }
    for (i, p) in c.points.iter().enumerate() {
        if p.after_compaction {
            let _ = writeln!(
                out,
                "<line class=\"compaction\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{PAD}\" y2=\"{1}\"><title>compaction before message {2}</title></line>",
                x(i),
                H - PAD,
                i + 1
            );
        }
    }
    let pts: Vec<String> = c
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.tokens)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline class=\"line\" points=\"{}\"/>",
        pts.join(" ")
    );
    for (i, p) in c.points.iter().enumerate() {
        if p.inferred_drop {
            let _ = writeln!(
                out,
                "<circle class=\"drop\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\"><title>inferred context drop at message {}</title></circle>",
                x(i),
                y(p.tokens),
                i + 1
            );
        }
    }
    let _ = writeln!(out, "<text x=\"{PAD}\" y=\"{}\">compactions: orange lines; inferred context drops: red dots</text>", H - 8.0);
    out.push_str("</svg>\n");
}
