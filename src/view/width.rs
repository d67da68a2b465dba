//! How wide a human view may be: `COLUMNS` when it is set to a number, else the width of the
//! terminal stdout is, else no limit (a view piped somewhere is not cut); and text cut or
//! wrapped to a width.

use std::io::IsTerminal;

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

/// `s` cut to `max` characters, its end replaced by `…` when cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to `max` characters (0: not cut) with `…`, keeping its end (`keep_end`: an id's
/// random part, a path's last folder) or its start.
pub fn cut_keeping(s: &str, max: usize, keep_end: bool) -> String {
    let n = s.chars().count();
    if n <= max || max == 0 {
        return s.to_string();
    }
    if !keep_end {
        return cut(s, max);
    }
    let mut out = String::from('…');
    out.extend(s.chars().skip(n + 1 - max));
    out
}

/// How a column of a plain text table may be narrowed: its cells cut to no fewer than `min`
/// characters (0: never cut), keeping their end or their start.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub head: &'static str,
    pub min: usize,
    pub keep_end: bool,
}

/// Fits a plain text table (`rows`, the heads first, columns two blanks apart) to `limit`
/// characters: the cells of the column that may be cut and is widest are cut first, each to
/// no less than its `min`, until the table fits or nothing more can be cut; then columns are
/// left out in `drop_order` (by head) until it fits. The indexes of the columns kept, in
/// order. pi-usage's and pi-sessions' tables fit this way (their man pages state each order).
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
    let width_of = |rows: &[Vec<String>], i: usize| {
        rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)
    };
    let total = |rows: &[Vec<String>], keep: &[usize]| {
        keep.iter().map(|&i| width_of(rows, i)).sum::<usize>() + 2 * keep.len().saturating_sub(1)
    };
    while total(rows, &keep) > limit {
        let widest = (0..cols.len())
            .filter(|&i| cols[i].min > 0 && width_of(rows, i) > cols[i].min)
            .max_by_key(|&i| width_of(rows, i));
        let Some(i) = widest else { break };
        let over = total(rows, &keep) - limit;
        let to = width_of(rows, i).saturating_sub(over).max(cols[i].min);
        for r in rows.iter_mut().skip(1) {
            r[i] = cut_keeping(&r[i], to, cols[i].keep_end);
        }
    }
    for name in drop_order {
        if total(rows, &keep) <= limit {
            break;
        }
        keep.retain(|&i| cols[i].head != *name);
    }
    keep
}

/// `text`'s lines wrapped at spaces to `max` characters (a word longer than that stays whole);
/// continuation lines are indented by two spaces.
pub fn wrap(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut len = 0;
        for (i, word) in line.split(' ').enumerate() {
            let n = word.chars().count();
            if i > 0 && len + 1 + n > max {
                out.push_str("\n  ");
                len = 2;
            } else if i > 0 {
                out.push(' ');
                len += 1;
            }
            out.push_str(word);
            len += n;
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cut_keeps_short_text_and_marks_a_cut() {
        assert_eq!(super::cut("abc", 3), "abc");
        assert_eq!(super::cut("abcd", 3), "ab…");
        assert_eq!(super::cut("éééé", 2), "é…");
        assert_eq!(super::wrap("aa bb cc\nd\n", 5), "aa bb\n  cc\nd\n");
        assert_eq!(super::wrap("abcdefgh ij\n", 4), "abcdefgh\n  ij\n");
    }
}
