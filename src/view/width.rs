//! How wide a human view may be: `COLUMNS` when it is set to a number, else the width of the
//! terminal stdout is, else no limit (a view piped somewhere is not cut); and text cut or
//! wrapped to a width. Widths are terminal columns as [`shown`] measures them (a wide
//! character, `项`, takes two), the measure comfy-table's tables use too.

use std::io::IsTerminal;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The narrowest width honoured: below it the views are cut no further.
pub const MIN: usize = 40;

/// The width to fit, `None` for no limit.
pub fn columns() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return Some(n.max(MIN));
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_width().map(|n| n.max(MIN))
}

/// The width of the terminal on stdout, from the TIOCGWINSZ ioctl.
fn terminal_width() -> Option<usize> {
    // SAFETY: `winsize` is plain data that the ioctl fills in; the call reads nothing else.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

/// How many columns of a terminal `s` takes: East Asian wide and fullwidth characters and
/// emoji two, combining marks and other zero-width characters none (Unicode's annex 11, by
/// the `unicode-width` crate). Views escape control characters before they measure.
pub fn shown(s: &str) -> usize {
    s.width()
}

/// The columns one character takes when it is measured alone (a control character: none).
fn char_shown(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// `s` cut to `max` columns, its end replaced by `…` when cut.
pub fn cut(s: &str, max: usize) -> String {
    if shown(s) <= max {
        return s.to_string();
    }
    let room = max.saturating_sub(1);
    let (mut end, mut used) = (0, 0);
    for (i, c) in s.char_indices() {
        used += char_shown(c);
        if used > room {
            break;
        }
        end = i + c.len_utf8();
    }
    // A sequence can be wider than its characters measured one by one (a quotation mark
    // before a variation selector): give back characters until the rest fits.
    let mut kept = &s[..end];
    while shown(kept) > room {
        let Some(last) = kept.chars().next_back() else {
            break;
        };
        kept = &kept[..kept.len() - last.len_utf8()];
    }
    format!("{kept}…")
}

/// `body` then `tail` in `max` columns: `body` is cut to leave `tail` whole (a mark that says
/// what the line is, such as `← leaf`), unless `max` leaves `body` fewer than 2 columns; then
/// the whole is cut.
pub fn cut_before(body: &str, tail: &str, max: usize) -> String {
    let room = max.saturating_sub(shown(tail));
    if shown(body) <= room {
        return format!("{body}{tail}");
    }
    if room < 2 {
        return cut(&format!("{body}{tail}"), max);
    }
    format!("{}{tail}", cut(body, room))
}

/// `s` cut to `max` columns (0: not cut) with `…`, keeping its end (`keep_end`: an id's
/// random part, a path's last folder) or its start.
pub fn cut_keeping(s: &str, max: usize, keep_end: bool) -> String {
    if max == 0 || shown(s) <= max {
        return s.to_string();
    }
    if !keep_end {
        return cut(s, max);
    }
    let room = max - 1;
    let (mut start, mut used) = (s.len(), 0);
    for (i, c) in s.char_indices().rev() {
        used += char_shown(c);
        if used > room {
            break;
        }
        start = i;
    }
    let mut kept = &s[start..];
    while shown(kept) > room {
        let Some(first) = kept.chars().next() else {
            break;
        };
        kept = &kept[first.len_utf8()..];
    }
    format!("…{kept}")
}

/// `s` in pieces of at most `max` columns (at least one character each), in order: a line
/// wrapped where the width ends, blanks kept.
pub fn pieces(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut used, mut base) = (0, 0, 0);
    for (i, c) in s.char_indices() {
        let w = char_shown(c);
        if w == 0 && i > start {
            // A sequence may be wider than its characters (an emoji's presentation selector
            // makes `⚠` two columns): measure the piece as it is shown; when the sequence no
            // longer fits, it starts the next piece with its base character.
            let end = i + c.len_utf8();
            used = shown(&s[start..end]);
            if used > max && base > start {
                out.push(&s[start..base]);
                start = base;
                used = shown(&s[start..end]);
            }
            continue;
        }
        if used + w > max && i > start {
            out.push(&s[start..i]);
            (start, used) = (i, 0);
        }
        used += w;
        base = i;
    }
    if start < s.len() || out.is_empty() {
        out.push(&s[start..]);
    }
    out
}

/// `text` wrapped at blanks to `max` columns by textwrap; a piece that textwrap, measuring
/// character by character, let past `max` (an emoji sequence is wider than its characters)
/// is cut again where the width ends.
pub fn wrap_words(text: &str, max: usize) -> Vec<std::borrow::Cow<'_, str>> {
    let mut out = Vec::new();
    for piece in textwrap::wrap(text, max) {
        if shown(&piece) <= max {
            out.push(piece);
        } else {
            out.extend(
                pieces(&piece, max)
                    .into_iter()
                    .map(|p| p.to_string().into()),
            );
        }
    }
    out
}

/// How a column of a plain text table may be narrowed: its cells cut to no fewer than `min`
/// columns (0: never cut), keeping their end or their start. A `key` column (what tells the
/// rows apart: the grouping's labels) is cut no further than its different cells stay
/// different.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub head: &'static str,
    pub min: usize,
    pub keep_end: bool,
    pub key: bool,
    /// Its cells say nothing (every count zero): when the table does not fit whole, it is
    /// left out before any other is cut, if it is in the drop order.
    pub blank: bool,
    /// It gives up its width first: cut down to its floor (as far as the width needs) before
    /// any other column is cut. For a column whose cells only need to be told apart (an id
    /// beside text that is read).
    pub yields: bool,
}

/// Fits a plain text table (`rows`, the heads first, columns two blanks apart) to `limit`
/// columns: blank columns of `drop_order` are left out when the table does not fit whole;
/// then columns are left out in `drop_order` (by head) while the others would not fit
/// even with the cells of those that may be cut cut to their floor; then the columns that
/// yield ([`Cut::yields`]) are cut towards their floor; then the widest columns that may be
/// cut are cut down to the next widest, and so on, evening them out (never below a floor),
/// until the table fits, so a column kept is cut no more than the width needs and no column
/// is cut to its floor while another keeps a width above it. A column's floor is its `min`
/// and its head (which is not cut); a key column's is also the narrowest at which no two of
/// its different cells are cut alike, so rows never look the same for being cut. The indexes
/// of the columns kept, in order. pi-usage's and pi-sessions' tables fit this way (their man
/// pages state each order).
pub fn cut_then_drop(
    cols: &[Cut],
    rows: &mut [Vec<String>],
    drop_order: &[&str],
    limit: Option<usize>,
) -> Vec<usize> {
    let mut keep: Vec<usize> = (0..cols.len()).collect();
    let Some(limit) = limit else {
        return keep;
    };
    let mut widths: Vec<usize> = (0..cols.len()).map(|i| column_width(rows, i)).collect();
    // The narrowest each column gets: its `min` and its head, or its width if it is never cut.
    let floors: Vec<usize> = (0..cols.len())
        .map(|i| match cols[i].min {
            0 => widths[i],
            min => {
                let floor = widths[i].min(min.max(rows.first().map_or(0, |h| shown(&h[i]))));
                if cols[i].key {
                    distinct_from(rows, i, floor, widths[i], cols[i].keep_end)
                } else {
                    floor
                }
            }
        })
        .collect();
    let total = |of: &[usize], keep: &[usize]| {
        keep.iter().map(|&i| of[i]).sum::<usize>() + 2 * keep.len().saturating_sub(1)
    };
    if total(&widths, &keep) > limit {
        keep.retain(|&i| !(cols[i].blank && drop_order.contains(&cols[i].head)));
    }
    for name in drop_order {
        if total(&floors, &keep) <= limit {
            break;
        }
        keep.retain(|&i| cols[i].head != *name);
    }
    let cut_to = |i: usize, to: usize, rows: &mut [Vec<String>], widths: &mut [usize]| {
        if to < widths[i] {
            for r in rows.iter_mut().skip(1) {
                r[i] = cut_keeping(&r[i], to, cols[i].keep_end);
            }
            widths[i] = column_width(rows, i);
        }
    };
    for &i in keep.iter().filter(|&&i| cols[i].yields) {
        let over = total(&widths, &keep).saturating_sub(limit);
        cut_to(
            i,
            widths[i].saturating_sub(over).max(floors[i]),
            rows,
            &mut widths,
        );
    }
    // The level: the widest any column that may be cut keeps. The highest at which the table
    // fits, found by halves (the table's width grows with it); each such column is then cut
    // to it, or to its floor when that is higher.
    let over = total(&widths, &keep).saturating_sub(limit);
    let cuttable: Vec<usize> = (keep.iter().copied())
        .filter(|&i| widths[i] > floors[i])
        .collect();
    if over > 0 && !cuttable.is_empty() {
        let at = |level: usize| {
            let mut w = widths.clone();
            for &i in &cuttable {
                w[i] = w[i].min(level).max(floors[i]);
            }
            total(&w, &keep)
        };
        let (mut lo, mut hi) = (0, cuttable.iter().map(|&i| widths[i]).max().unwrap_or(0));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if at(mid) <= limit {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        for &i in &cuttable {
            cut_to(i, widths[i].min(lo).max(floors[i]), rows, &mut widths);
        }
    }
    keep
}

/// The narrowest width from `lo` to `hi` at which column `i`'s different cells (the heads
/// aside) are still different once cut to it. Cut alike at one width, two cells are cut alike
/// at every narrower one, so the width is searched by halves.
fn distinct_from(
    rows: &[Vec<String>],
    i: usize,
    mut lo: usize,
    mut hi: usize,
    keep_end: bool,
) -> usize {
    let distinct = |w: usize| {
        let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
        rows.iter().skip(1).all(|r| {
            let cell = r[i].as_str();
            *seen.entry(cut_keeping(cell, w, keep_end)).or_insert(cell) == cell
        })
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if distinct(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The width of column `i` of a plain text table: its widest cell, in columns.
pub fn column_width(rows: &[Vec<String>], i: usize) -> usize {
    rows.iter().map(|r| shown(&r[i])).max().unwrap_or(0)
}

/// `cell` padded with blanks to `width` columns, on its right (`left`: aligned left) or its
/// left.
pub fn aligned(cell: &str, width: usize, left: bool) -> String {
    let pad = " ".repeat(width.saturating_sub(shown(cell)));
    if left {
        format!("{cell}{pad}")
    } else {
        format!("{pad}{cell}")
    }
}

/// `text`'s lines wrapped at spaces to `max` columns (a word longer than that stays whole);
/// continuation lines are indented by two spaces.
pub fn wrap(text: &str, max: usize) -> String {
    let options = textwrap::Options::new(max)
        .subsequent_indent("  ")
        .break_words(false);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        for piece in textwrap::wrap(line, &options) {
            out.push_str(&piece);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// A key column is cut no further than its different cells stay different; an other
    /// column of the same cells is cut to its `min`, and a column is left out first.
    #[test]
    fn key_columns_stay_told_apart() {
        use super::{cut_then_drop, Cut};
        let cut = |head, key| Cut {
            head,
            min: 6,
            keep_end: false,
            key,
            blank: false,
            yields: false,
        };
        let cols = [cut("model", true), cut("other", false), cut("n", false)];
        let rows = |n: &str| {
            let mut r = vec![vec!["model".to_string(), "other".into(), n.into()]];
            for m in ["claude-opus-4-5", "claude-opus-4-7", "gpt-5"] {
                r.push(vec![m.into(), m.into(), "12345".into()]);
            }
            r
        };
        // The key needs all 15 columns, the other is cut to 6: 15 + 2 + 6 + 2 + 5 = 30.
        let mut t = rows("n");
        assert_eq!(cut_then_drop(&cols, &mut t, &["n"], Some(30)), [0, 1, 2]);
        assert_eq!(t[1], ["claude-opus-4-5", "claud…", "12345"]);
        assert_eq!(t[2][0], "claude-opus-4-7");
        // Narrower: `n` is left out before the key is cut.
        let mut t = rows("n");
        assert_eq!(cut_then_drop(&cols, &mut t, &["n"], Some(25)), [0, 1]);
        assert_eq!(t[1][0], "claude-opus-4-5");
        // Cells that differ sooner are cut sooner, as far as they still differ.
        let mut t = rows("n");
        t[2][0] = "claude-sonnet".into();
        assert_eq!(cut_then_drop(&cols, &mut t, &["n"], Some(17)), [0, 1]);
        assert_eq!(
            [&t[1][0], &t[2][0], &t[3][0]],
            ["claude-o…", "claude-s…", "gpt-5"]
        );
    }

    /// The columns that may be cut are evened out: the widest is cut down to the next widest
    /// before that one is cut, not to its floor while the other keeps its width; a column that
    /// yields is cut first, to what tells its cells apart.
    #[test]
    fn columns_are_cut_evenly_and_a_yielding_one_first() {
        use super::{cut_then_drop, shown, Cut};
        let col = |head, min, yields| Cut {
            head,
            min,
            keep_end: yields,
            key: yields,
            blank: false,
            yields,
        };
        let rows = || {
            vec![
                vec!["id".to_string(), "name".into(), "project".into()],
                vec!["id-0001".into(), "n".repeat(40), "p".repeat(20)],
                vec!["id-0002".into(), "n".repeat(40), "p".repeat(20)],
            ]
        };
        let widths = |t: &[Vec<String>]| [0, 1, 2].map(|i| super::column_width(t, i));
        // 7 + 40 + 20 and the gaps: 71. At 51 the name is cut to 24, not to 20 first.
        let plain = [
            col("id", 0, false),
            col("name", 6, false),
            col("project", 6, false),
        ];
        let mut t = rows();
        cut_then_drop(&plain, &mut t, &[], Some(51));
        assert_eq!(widths(&t), [7, 20, 20]);
        let mut t = rows();
        cut_then_drop(&plain, &mut t, &[], Some(41));
        assert_eq!(widths(&t), [7, 15, 15]);
        // Narrower: both at their floor, the id whole (it does not yield here).
        let mut t = rows();
        cut_then_drop(&plain, &mut t, &[], Some(20));
        assert_eq!(widths(&t), [7, 6, 7]);
        // The id yields: it goes to 7 columns only if its cells need them ("…0001" is enough
        // with a floor of 5), before the others are cut.
        let ids = [
            col("id", 5, true),
            col("name", 6, false),
            col("project", 6, false),
        ];
        let mut t = rows();
        cut_then_drop(&ids, &mut t, &[], Some(61));
        assert_eq!(widths(&t), [5, 32, 20]);
        assert_eq!(t[1][0], "…0001");
        assert!(t.iter().all(|r| r.iter().all(|c| shown(c) <= 32)));
    }

    #[test]
    fn cut_keeps_short_text_and_marks_a_cut() {
        assert_eq!(super::cut("abc", 3), "abc");
        assert_eq!(super::cut("abcd", 3), "ab…");
        assert_eq!(super::cut("éééé", 2), "é…");
        assert_eq!(super::wrap("aa bb cc\nd\n", 5), "aa bb\n  cc\nd\n");
        assert_eq!(super::wrap("abcdefgh ij\n", 4), "abcdefgh\n  ij\n");
    }

    /// A column is left out before the others are cut below what the width leaves them: the
    /// column kept takes the room the one left out gave back.
    #[test]
    fn columns_kept_are_cut_only_as_far_as_the_width_needs() {
        use super::{cut_then_drop, shown, Cut};
        let cols = [
            Cut {
                head: "id",
                min: 0,
                keep_end: false,
                key: false,
                blank: false,
                yields: false,
            },
            Cut {
                head: "text",
                min: 5,
                keep_end: false,
                key: false,
                blank: false,
                yields: false,
            },
            Cut {
                head: "more",
                min: 0,
                keep_end: false,
                key: false,
                blank: false,
                yields: false,
            },
        ];
        let text = "项目 and thirty columns of it!"; // 30 columns
        let mut rows = vec![
            vec!["id".to_string(), "text".into(), "more".into()],
            vec!["a1".into(), text.into(), "twenty columns here!".into()],
        ];
        assert_eq!(shown(text), 30);
        let keep = cut_then_drop(&cols, &mut rows, &["more"], Some(30));
        assert_eq!(keep, [0, 1]);
        assert_eq!(rows[1][1], "项目 and thirty columns o…");
        // Nothing left out when the cut alone fits; nothing cut without a width.
        let mut rows2 = rows.clone();
        rows2[1][1] = text.into();
        assert_eq!(
            cut_then_drop(&cols, &mut rows2, &["more"], Some(33)),
            [0, 1, 2]
        );
        assert_eq!(shown(&rows2[1][1]), 7);
        rows2[1][1] = text.into();
        assert_eq!(cut_then_drop(&cols, &mut rows2, &["more"], None), [0, 1, 2]);
        assert_eq!(rows2[1][1], text);
    }

    /// Widths are columns: a wide character takes two, a combining mark none, and a cut never
    /// leaves half of a wide character's room unfilled past the width.
    #[test]
    fn wide_characters_take_two_columns() {
        use super::{cut, cut_keeping, shown, wrap};
        assert_eq!(shown("项目"), 4);
        assert_eq!(shown("e\u{301}"), 1);
        assert_eq!(cut("项目应用", 8), "项目应用");
        assert_eq!(cut("项目应用", 7), "项目应…");
        // Three columns left for text before the `…`: one wide character fits, not two.
        assert_eq!(cut("项目应用", 4), "项…");
        assert_eq!(cut("a项目", 4), "a项…");
        assert_eq!(cut_keeping("/home/项目/应用", 7, true), "…/应用");
        assert_eq!(cut_keeping("/home/项目/应用", 6, true), "…/应用");
        assert_eq!(cut_keeping("/home/项目/应用", 5, true), "…应用");
        assert_eq!(cut_keeping("项目应用", 6, false), "项目…");
        assert_eq!(wrap("项目 应用 网页\n", 9), "项目 应用\n  网页\n");
        assert_eq!(super::pieces("项目ab c", 3), ["项", "目a", "b c"]);
        assert_eq!(super::pieces("项", 1), ["项"]);
        assert_eq!(super::pieces("", 5), [""]);
        // `⚠` followed by the emoji selector is two columns, not one.
        assert_eq!(super::pieces("ab⚠\u{fe0f}c", 3), ["ab", "⚠\u{fe0f}c"]);
        assert_eq!(super::pieces("a⚠\u{fe0f}c", 3), ["a⚠\u{fe0f}", "c"]);
        let warn = "x ⚠\u{fe0f}⚠\u{fe0f}⚠\u{fe0f} y";
        for max in 3..10 {
            for p in super::wrap_words(warn, max) {
                assert!(shown(&p) <= max, "{p:?} at {max}");
            }
        }
        for max in 1..12 {
            for s in ["项目应用程序", "a项b目c", "/home/li/项目/网页应用"] {
                assert!(shown(&cut(s, max)) <= max, "{s} at {max}");
                assert!(shown(&cut_keeping(s, max, true)) <= max, "{s} at {max}");
            }
        }
    }
}
