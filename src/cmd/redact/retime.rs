//! `--shift-time`: every timestamp moved by one constant (ISO strings and millisecond numbers),
//! so the shape of a session in time stays and its dates do not.

use crate::time::{format_iso8601, parse_iso8601};

/// Reads a shift: a signed whole number with an optional unit, `s` (the default), `m`, `h`
/// or `d` (`-3d`, `+90m`, `3600`); milliseconds.
pub fn parse_shift(s: &str) -> Result<i64, String> {
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let per = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("unknown unit {unit:?}: use s, m, h or d")),
    };
    let n: i64 = num
        .strip_prefix('+')
        .unwrap_or(num)
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of s, m, h or d"))?;
    n.checked_mul(per)
        .filter(|ms| ms.abs() <= 100 * 365 * 86_400_000)
        .ok_or_else(|| format!("{s:?}: more than a hundred years"))
}

/// A timestamp's text moved by `shift` ms: an ISO string is written as `toISOString` writes
/// it, a whole number of milliseconds as digits; `None` for anything else (kept as it is).
pub fn shifted(raw: &[u8], shift: i64) -> Option<String> {
    if raw.first() == Some(&b'"') {
        let s = crate::json::as_str(raw)?;
        let ms = parse_iso8601(&s)?;
        return Some(format_iso8601(ms.checked_add(shift)?));
    }
    let n: i64 = std::str::from_utf8(raw).ok()?.parse().ok()?;
    Some(n.checked_add(shift)?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_and_their_units() {
        assert_eq!(parse_shift("3600"), Ok(3_600_000));
        assert_eq!(parse_shift("-1d"), Ok(-86_400_000));
        assert_eq!(parse_shift("+90m"), Ok(5_400_000));
        assert!(parse_shift("1w").is_err());
        assert!(parse_shift("x").is_err());
        assert!(parse_shift("999999999d").is_err());
        assert_eq!(
            shifted(br#""2026-06-01T10:00:00.000Z""#, -86_400_000).as_deref(),
            Some("2026-05-31T10:00:00.000Z")
        );
        assert_eq!(
            shifted(b"1780308001000", 1000).as_deref(),
            Some("1780308002000")
        );
        assert_eq!(shifted(b"1.5", 1000), None);
        assert_eq!(shifted(br#""yesterday""#, 1000), None);
    }
}
