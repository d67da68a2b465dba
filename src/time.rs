//! Timestamps: the ISO 8601 strings Pi writes (`Date.prototype.toISOString`, e.g.
//! `2025-12-17T19:39:21.535Z`), and the variants other writers produce (an offset such as
//! `+02:00` or `-0500`, more or fewer fractional digits, a space instead of `T`).
//!
//! Parsed by hand: the grammar is small and a date library would be the largest dependency of
//! the project for one function.

/// Milliseconds since 1970-01-01T00:00:00Z of an ISO 8601 date-time, or `None` when `s` is not
/// one.
///
/// Accepted: `YYYY-MM-DD`, optionally followed by `T` (or `t`, or one space) and `HH:MM`,
/// `HH:MM:SS` or `HH:MM:SS.fraction` (any number of digits, `,` also accepted as the decimal
/// mark; digits past milliseconds are dropped, not rounded), optionally followed by `Z`/`z` or an
/// offset `±HH:MM`, `±HHMM` or `±HH`. The year may be the expanded `±YYYYYY` form that
/// `toISOString` writes for years outside 0..=9999. A date-time without a zone is read as UTC
/// (Pi never writes one; a difference of two such times is right either way). `24:00:00` is
/// the end of the day; a leap second `:60` is read as the first instant of the next minute.
/// Fields out of range (month 13, February 30, minute 60, an offset of 24 hours) are rejected.
pub fn parse_iso8601(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let mut p = Cursor { b, i: 0 };
    let year = match b.first()? {
        b'+' | b'-' => {
            let neg = b[0] == b'-';
            p.i = 1;
            let y = p.digits(6)? as i64;
            if neg {
                if y == 0 {
                    return None; // ISO 8601 forbids -000000
                }
                -y
            } else {
                y
            }
        }
        _ => p.digits(4)? as i64,
    };
    p.expect(b'-')?;
    let month = p.digits(2)?;
    p.expect(b'-')?;
    let day = p.digits(2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let mut ms: i64 = 0;
    if p.i < b.len() {
        match b[p.i] {
            b'T' | b't' | b' ' => p.i += 1,
            _ => return None,
        }
        let hour = p.digits(2)?;
        p.expect(b':')?;
        let minute = p.digits(2)?;
        let mut second = 0;
        let mut frac_ms = 0;
        if p.peek() == Some(b':') {
            p.i += 1;
            second = p.digits(2)?;
            if matches!(p.peek(), Some(b'.' | b',')) {
                p.i += 1;
                let start = p.i;
                while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                    p.i += 1;
                }
                let frac = &b[start..p.i];
                if frac.is_empty() {
                    return None;
                }
                for k in 0..3 {
                    frac_ms = frac_ms * 10 + frac.get(k).map_or(0, |c| u32::from(c - b'0'));
                }
            }
        }
        let end_of_day = hour == 24 && minute == 0 && second == 0 && frac_ms == 0;
        if (hour > 23 && !end_of_day) || minute > 59 || second > 60 {
            return None;
        }
        ms = ((i64::from(hour) * 60 + i64::from(minute)) * 60 + i64::from(second)) * 1000
            + i64::from(frac_ms);
        match p.peek() {
            None => {}
            Some(b'Z' | b'z') => p.i += 1,
            Some(sign @ (b'+' | b'-')) => {
                p.i += 1;
                let oh = p.digits(2)?;
                let om = match p.peek() {
                    Some(b':') => {
                        p.i += 1;
                        p.digits(2)?
                    }
                    Some(b'0'..=b'9') => p.digits(2)?,
                    _ => 0,
                };
                if oh > 23 || om > 59 {
                    return None;
                }
                let off = (i64::from(oh) * 60 + i64::from(om)) * 60_000;
                // Local time = UTC + offset, so UTC = local - offset.
                ms -= if sign == b'+' { off } else { -off };
            }
            Some(_) => return None,
        }
        if p.i != b.len() {
            return None;
        }
    }
    Some(days * 86_400_000 + ms)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }
    /// Exactly `n` ASCII digits.
    fn digits(&mut self, n: usize) -> Option<u32> {
        let d = self.b.get(self.i..self.i + n)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(d.iter().fold(0, |a, c| a * 10 + u32::from(c - b'0')))
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the well-known era-based formula).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // 0..=399
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // 0..=146096
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::parse_iso8601 as p;

    #[test]
    fn pi_timestamps() {
        assert_eq!(p("1970-01-01T00:00:00.000Z"), Some(0));
        // Checked against JavaScript: new Date("2025-12-17T19:39:21.535Z").getTime()
        assert_eq!(p("2025-12-17T19:39:21.535Z"), Some(1_766_000_361_535));
        assert_eq!(p("2026-02-03T03:12:09.317Z"), Some(1_770_088_329_317));
        assert_eq!(p("2000-02-29T12:00:00Z"), Some(951_825_600_000));
    }

    #[test]
    fn offsets() {
        let z = p("2025-12-17T19:39:21.535Z").unwrap();
        assert_eq!(p("2025-12-17T14:39:21.535-05:00"), Some(z));
        assert_eq!(p("2025-12-17T14:39:21.535-0500"), Some(z));
        assert_eq!(p("2025-12-17T14:39:21.535-05"), Some(z));
        assert_eq!(p("2025-12-18T01:09:21.535+05:30"), Some(z));
        assert_eq!(p("2025-12-17T19:39:21.535+00:00"), Some(z));
        assert_eq!(p("2025-12-17T19:39:21.535-00:00"), Some(z));
        assert_eq!(p("2025-12-17t19:39:21.535z"), Some(z));
        assert_eq!(p("2025-12-17 19:39:21.535Z"), Some(z));
        // No zone: read as UTC.
        assert_eq!(p("2025-12-17T19:39:21.535"), Some(z));
    }

    #[test]
    fn fractions_and_precision() {
        let base = p("2025-01-01T00:00:00Z").unwrap();
        assert_eq!(p("2025-01-01T00:00:00.5Z"), Some(base + 500));
        assert_eq!(p("2025-01-01T00:00:00.05Z"), Some(base + 50));
        assert_eq!(p("2025-01-01T00:00:00.123456789Z"), Some(base + 123));
        assert_eq!(p("2025-01-01T00:00:00.9999Z"), Some(base + 999));
        assert_eq!(p("2025-01-01T00:00:00,25Z"), Some(base + 250));
        assert_eq!(p("2025-01-01T00:01Z"), Some(base + 60_000));
        assert_eq!(p("2025-01-01"), Some(base));
    }

    #[test]
    fn calendar_edges() {
        assert_eq!(p("1969-12-31T23:59:59.999Z"), Some(-1));
        assert_eq!(p("1900-03-01T00:00:00Z"), Some(-2_203_891_200_000));
        assert_eq!(p("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        assert_eq!(p("2025-01-01T24:00:00Z"), p("2025-01-02T00:00:00Z"));
        assert_eq!(p("2016-12-31T23:59:60Z"), p("2017-01-01T00:00:00Z"));
        assert_eq!(
            p("+002025-12-17T19:39:21.535Z"),
            p("2025-12-17T19:39:21.535Z")
        );
        assert_eq!(
            p("+275760-09-13T00:00:00.000Z"),
            Some(8_640_000_000_000_000)
        );
        assert_eq!(p("-000001-01-01T00:00:00.000Z"), Some(-62_198_755_200_000));
        assert_eq!(p("0000-01-01T00:00:00Z"), Some(-62_167_219_200_000));
    }

    #[test]
    fn rejects_what_is_not_a_date_time() {
        for bad in [
            "",
            "2025",
            "2025-1-01",
            "2025-13-01T00:00:00Z",
            "2025-00-10",
            "2025-02-29T00:00:00Z",
            "1900-02-29",
            "2025-04-31",
            "2025-01-01T25:00:00Z",
            "2025-01-01T24:00:01Z",
            "2025-01-01T10:60:00Z",
            "2025-01-01T10:00:61Z",
            "2025-01-01T10:00:00.Z",
            "2025-01-01T10:00:00ZZ",
            "2025-01-01T10:00:00+24:00",
            "2025-01-01T10:00:00+05:60",
            "2025-01-01T10:00:00+5",
            "2025-01-01T10",
            "2025-01-01X10:00:00Z",
            "2025-01-01T10:00:00 Z",
            " 2025-01-01",
            "-000000-01-01",
            "1766000357543",
            "2025-01-01T10:00:00Z trailing",
            "２０２５-01-01",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }
}
