//! The table for people (`--table`, the default on a terminal): age, size, messages, project
//! and the session's name or first prompt, one row per file; control characters escaped.

use crate::discover::{FileMeta, FileStatus};
use crate::output::{Out, Stop};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A short age: `45s`, `12m`, `3h`, `5d`, `7w`, `4mo`, `2y`.
fn age(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        86_400..=1_209_599 => format!("{}d", s / 86_400),
        1_209_600..=5_183_999 => format!("{}w", s / 604_800),
        5_184_000..=31_535_999 => format!("{}mo", s / 2_592_000),
        _ => format!("{}y", s / 31_536_000),
    }
}

/// A short size: `812B`, `4.2K`, `17M`, `1.3G`.
fn size(b: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b}B")
    } else if v < 10.0 {
        format!("{v:.1}{}", units[u])
    } else {
        format!("{v:.0}{}", units[u])
    }
}

/// Keeps the last `max` characters, with `…` in front when cut.
fn cut_left(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let mut out = String::from("…");
    out.extend(s.chars().skip(n - max + 1));
    out
}

/// The cells of one file's row: age, size, messages, project (`~` for `home`, cut to
/// `project_w` characters from the left) and title.
fn row(m: &FileMeta, now: i64, home: Option<&str>, project_w: usize) -> [String; 5] {
    let mut project = m.project.clone().unwrap_or_else(|| "-".into());
    if let Some(h) = home {
        if let Some(rest) = project.strip_prefix(h) {
            if rest.is_empty() || rest.starts_with('/') {
                project = format!("~{rest}");
            }
        }
    }
    let title = match m.status {
        FileStatus::Ok | FileStatus::MetadataOnly => m
            .name
            .clone()
            .or_else(|| m.first_prompt.clone())
            .unwrap_or_else(|| "(no prompt)".into()),
        s => format!("({})", s.name()),
    };
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        m.modified
            .map(|t| age(now - t))
            .unwrap_or_else(|| "?".into()),
        size(m.bytes),
        m.counts
            .as_ref()
            .map(|c| c.messages.to_string())
            .unwrap_or_else(|| "-".into()),
        cut_left(&crate::diag::sanitize(&project), project_w),
        crate::diag::sanitize(&title).into_owned(),
    ]
}

/// Writes the table of `metas`, as wide as `COLUMNS` says (100 by default).
pub(super) fn table(out: &mut Out, metas: &[FileMeta]) -> Result<(), Stop> {
    let width: usize = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(100);
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let now = now_ms();
    let project_w = 32.min(width / 3);
    let rows: Vec<[String; 5]> = metas
        .iter()
        .map(|m| row(m, now, home.as_deref(), project_w))
        .collect();
    let head = ["AGE", "SIZE", "MSGS", "PROJECT", "NAME"];
    let mut w = [0usize; 4];
    for r in std::iter::once(&head.map(String::from)).chain(rows.iter()) {
        for (i, c) in r.iter().take(4).enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let used: usize = w.iter().sum::<usize>() + 8;
    let name_w = width.saturating_sub(used).max(10);
    let mut line = |r: &[String]| -> Result<(), Stop> {
        let name = crate::message::truncate_chars(&r[4], name_w);
        let s = format!(
            "{:<a$}  {:>b$}  {:>c$}  {:<d$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            name,
            a = w[0],
            b = w[1],
            c = w[2],
            d = w[3]
        );
        out.buf.extend_from_slice(s.trim_end().as_bytes());
        out.end_line()
    };
    line(&head.map(String::from))?;
    for r in &rows {
        line(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_sizes_are_short() {
        assert_eq!(age(5_000), "5s");
        assert_eq!(age(3 * 3_600_000), "3h");
        assert_eq!(age(3 * 86_400_000), "3d");
        assert_eq!(age(400 * 86_400_000), "1y");
        assert_eq!(size(812), "812B");
        assert_eq!(size(4300), "4.2K");
        assert_eq!(size(17 * 1024 * 1024), "17M");
    }

    #[test]
    fn cut_left_keeps_the_end() {
        assert_eq!(cut_left("/home/u/src/project", 8), "…project");
        assert_eq!(cut_left("short", 8), "short");
    }
}
