//! The context chart: an inline SVG of the recorded context (input + cache read + cache write)
//! of each assistant message on the branch, with each message's configured window (a step
//! where the model changes), the compactions and pi-usage's inferred context drops marked.
//! Numbers only: no session text reaches it.

use super::doc::{count, counted, Chart};
use std::fmt::Write;

const W: f64 = 800.0;
const H: f64 = 194.0;
const PAD: f64 = 30.0;
/// Below the plot: two lines of legend.
const BELOW: f64 = 44.0;

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
        .flat_map(|p| [Some(p.tokens), p.window])
        .flatten()
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
    let y = |t: u64| H - BELOW - (H - PAD - BELOW) * (t as f64 / top);
    let _ = writeln!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"recorded context per assistant message\">"
    );
    let _ = writeln!(
        out,
        "<text x=\"{PAD}\" y=\"16\">recorded context per assistant message, {}; top {}</text>",
        counted(n as u64, "message", "messages"),
        counted(top as u64, "token", "tokens"),
    );
    // Each run of messages with one window, from half-way after the message before it to
    // half-way before the message after it: a step where the model (or its window) changes.
    let mut start = 0;
    for i in 0..n {
        let w = c.points[i].window;
        if i + 1 < n && c.points[i + 1].window == w {
            continue;
        }
        if let Some(w) = w {
            let x1 = if start == 0 {
                PAD
            } else {
                (x(start - 1) + x(start)) / 2.0
            };
            let x2 = if i + 1 == n {
                W - PAD
            } else {
                (x(i) + x(i + 1)) / 2.0
            };
            let which = match start == i {
                true => format!("message {}", i + 1),
                false => format!("messages {} to {}", start + 1, i + 1),
            };
            let _ = writeln!(
                out,
                "<line class=\"window\" x1=\"{x1:.1}\" x2=\"{x2:.1}\" y1=\"{0:.1}\" y2=\"{0:.1}\"><title>configured window {1}: {which}</title></line>",
                y(w),
                count(w)
            );
        }
        start = i + 1;
    }
    for (i, p) in c.points.iter().enumerate() {
        if p.after_compaction {
            let _ = writeln!(
                out,
                "<line class=\"compaction\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{PAD}\" y2=\"{1}\"><title>compaction before message {2}</title></line>",
                x(i),
                H - BELOW,
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
    let _ = writeln!(
        out,
        "<text x=\"{PAD}\" y=\"{}\">{}</text>\n<text x=\"{PAD}\" y=\"{}\">compactions: orange lines; inferred context drops: red dots</text>",
        H - 22.0,
        windows_label(c),
        H - 8.0
    );
    out.push_str("</svg>\n");
}

/// What the chart says of the windows it draws: the one window, or the least and the most,
/// and how many messages have none known.
fn windows_label(c: &Chart) -> String {
    let known: Vec<u64> = c.points.iter().filter_map(|p| p.window).collect();
    let unknown = c.points.len() - known.len();
    let (Some(&least), Some(&most)) = (known.iter().min(), known.iter().max()) else {
        return "no configured window known".into();
    };
    let mut label = match least == most {
        true => format!("configured window {} (dashed)", count(least)),
        false => format!(
            "configured windows {} to {} (dashed, per message)",
            count(least),
            count(most)
        ),
    };
    if unknown > 0 {
        label.push_str(&format!(
            "; none known for {}",
            counted(unknown as u64, "message", "messages")
        ));
    }
    label
}
