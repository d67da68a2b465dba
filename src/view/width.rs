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
