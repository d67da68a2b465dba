//! Time: the one place where pi-jsonl reads and writes instants (zones and calendar labels are
//! [`crate::calendar`]'s).
//!
//! Pi writes ISO 8601 strings with `Date.prototype.toISOString` (`2025-12-17T19:39:21.535Z`)
//! in entry and header `timestamp`s, and Unix milliseconds (`Date.now()`) in a message's own
//! `timestamp`. Other writers produce variants (an offset such as `+02:00` or `-0500`, more or
//! fewer fractional digits, a space instead of `T`).
//!
//! # The rule
//!
//! [`parse`] (and [`parse_iso8601`], its milliseconds) accepts `YYYY-MM-DD`, optionally followed
//! by `T` (or `t`, or one space) and `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction`, optionally
//! followed by `Z`/`z` or a UTC offset ([`parse_utc_offset`]: `±HH:MM`, `±HHMM` or `±HH`).
//!
//! - No zone means UTC (Pi never writes one; a difference of two such times is right either
//!   way). A date alone is its first instant, UTC, and says so ([`DateTime::date_only`]).
//! - Fractions: any number of digits, `.` or `,` as the decimal mark; digits past the
//!   millisecond are dropped, not rounded (as `Date.parse` does).
//! - `24:00:00` (with no fraction) is the end of the day, i.e. the next day's first instant; a
//!   leap second `:60` is read as the first instant of the next minute; the year may be the
//!   expanded `±YYYYYY` form that `toISOString` writes for years outside 0..=9999 (`-000000`
//!   is not allowed). [`DateTime`] says when one of these rare forms was used, for callers
//!   that refuse them.
//! - Fields out of range (month 13, February 30, minute 60, second 61, an offset of 24 hours)
//!   are rejected, and so is anything before or after the date-time: white space included
//!   (callers that take padded text trim it themselves).
//!
//! What the callers do with it:
//!
//! - pi-tools (durations) takes the rule as it is.
//! - pi-usage (a call's time) trims the text and refuses `24:00`, leap seconds and expanded
//!   years; pi-sessions (`created`, last activity, `--since`/`--until`) trims and refuses
//!   `24:00` and expanded years. Those are the rules each tool had before the parsers were
//!   merged, kept so that no output changed.
//!
//! [`format_iso8601`] writes the `toISOString` form back.
//!
//! Parsed and written by hand, not by `jiff` (which [`crate::calendar`] uses for zones): its
//! parser follows RFC 3339 and Temporal, not `Date.parse` (no `24:00`, a leap second is not the
//! next minute, no years past ±9999 while a JavaScript `Date` reaches ±275760), and it has no
//! public day-number conversion. Building the instant through jiff's date and timestamp
//! types instead of `days_from_civil` measured 27 more instructions a timestamp (callgrind,
//! 500,000 parses) and would still need this arithmetic for the years jiff does not hold.

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// The largest distance from the epoch a JavaScript `Date` can hold, in milliseconds
/// (±100,000,000 days); beyond it `new Date(ms)` is an Invalid Date.
pub const JS_MAX_MS: i64 = 8_640_000_000_000_000;

/// An ISO 8601 date-time as [`parse`] read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub ms: i64,
    /// Only a date was given (`YYYY-MM-DD`); `ms` is its first instant, UTC.
    pub date_only: bool,
    /// The time was `24:00:00`, the end of the day.
    pub end_of_day: bool,
    /// The seconds were `60`, a leap second.
    pub leap_second: bool,
    /// The year was written in the expanded `±YYYYYY` form.
    pub expanded_year: bool,
}

/// Milliseconds since 1970-01-01T00:00:00Z of an ISO 8601 date-time, or `None` when `s` is not
/// one; see the rule in the [module documentation](self).
pub fn parse_iso8601(s: &str) -> Option<i64> {
    parse(s).map(|t| t.ms)
}

/// Reads an ISO 8601 date-time by the rule in the [module documentation](self).
pub fn parse(s: &str) -> Option<DateTime> {
    let b = s.as_bytes();
    let mut p = Cursor { b, i: 0 };
    let expanded_year = matches!(b.first()?, b'+' | b'-');
    let year = if expanded_year {
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
    } else {
        p.digits(4)? as i64
    };
    p.expect(b'-')?;
    let month = p.digits(2)?;
    p.expect(b'-')?;
    let day = p.digits(2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut t = DateTime {
        ms: days_from_civil(year, month, day) * DAY_MS,
        date_only: true,
        end_of_day: false,
        leap_second: false,
        expanded_year,
    };
    if p.i == b.len() {
        return Some(t);
    }
    t.date_only = false;
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
    t.end_of_day = hour == 24 && minute == 0 && second == 0 && frac_ms == 0;
    t.leap_second = second == 60;
    if (hour > 23 && !t.end_of_day) || minute > 59 || second > 60 {
        return None;
    }
    t.ms += ((i64::from(hour) * 60 + i64::from(minute)) * 60 + i64::from(second)) * 1000
        + i64::from(frac_ms);
    match p.peek() {
        None => {}
        Some(b'Z' | b'z') if p.i + 1 == b.len() => {}
        // Local time = UTC + offset, so UTC = local - offset.
        Some(b'+' | b'-') => t.ms -= i64::from(parse_utc_offset(&s[p.i..])?) * 1000,
        Some(_) => return None,
    }
    Some(t)
}

/// A UTC offset, `±HH:MM`, `±HHMM` or `±HH` and nothing else, in seconds east of UTC; `None`
/// for anything else or for hours over 23 or minutes over 59. (`-00:00` is UTC.)
pub fn parse_utc_offset(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let mut p = Cursor { b, i: 1 };
    let h = p.digits(2)?;
    let m = match p.peek() {
        None => 0,
        Some(b':') => {
            p.i += 1;
            p.digits(2)?
        }
        Some(_) => p.digits(2)?,
    };
    if p.i != b.len() || h > 23 || m > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60) as i32)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, as JavaScript's `toISOString` writes an instant, for years
/// 0..=9999 (all Pi writes). Other years are written as plain numbers of at least four digits
/// (`-001`, `12345`), not in `toISOString`'s `±YYYYYY` form.
pub fn format_iso8601(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
    let rest = ms.rem_euclid(DAY_MS);
    if (0..=9999).contains(&y) {
        // Years 0 to 9999, the common case, digit by digit (`format!` costs ten times as much:
        // pi-sessions writes two of these per file).
        let fields = [
            (y, 4),
            (i64::from(m), 2),
            (i64::from(d), 2),
            (rest / 3_600_000, 2),
            (rest / 60_000 % 60, 2),
            (rest / 1000 % 60, 2),
            (rest % 1000, 3),
        ];
        let mut out = String::with_capacity(24);
        for ((v, width), sep) in fields.into_iter().zip(["-", "-", "T", ":", ":", ".", "Z"]) {
            for p in (0..width).rev() {
                out.push(char::from(b'0' + (v / 10i64.pow(p) % 10) as u8));
            }
            out.push_str(sep);
        }
        return out;
    }
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// The instant of a numeric timestamp in milliseconds (as `Date.now()` writes them), as a
/// JavaScript `Date` would hold it: truncated toward zero; `None` for NaN, infinities and
/// values beyond ±[`JS_MAX_MS`] (an Invalid Date).
pub fn millis_from_number(ms: f64) -> Option<i64> {
    (ms.is_finite() && ms.abs() <= JS_MAX_MS as f64).then(|| ms.trunc() as i64)
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

// ---------------------------------------------------------------------------------------------
// The proleptic Gregorian calendar (H. Hinnant's era-based algorithms), for any year

/// Whether `y` is a leap year.
fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// The number of days of month `m` (1..=12) of year `y`.
fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // 0..=399
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // 0..=146096
    era * 146_097 + doe - 719_468
}

/// The date (year, month, day) of a day number (days since 1970-01-01).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {

    #[test]
    fn iso8601_digit_by_digit_is_what_format_writes() {
        let by_format = |ms: i64| {
            let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
            let rest = ms.rem_euclid(DAY_MS);
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                rest / 3_600_000,
                rest / 60_000 % 60,
                rest / 1000 % 60,
                rest % 1000
            )
        };
        let year_10000 = 253_402_300_800_000;
        for ms in [
            0,
            1,
            -1,
            999,
            1_777_716_000_000,
            1_777_716_123_456,
            -62_167_219_200_000,
            -62_167_219_200_001,
            year_10000 - 1,
            year_10000,
            JS_MAX_MS,
            -JS_MAX_MS,
        ] {
            assert_eq!(format_iso8601(ms), by_format(ms), "{ms}");
        }
    }

    use super::parse_iso8601 as p;
    use super::*;

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
    #[test]
    fn what_the_other_parsers_were_tested_with() {
        // From pi-usage's former parser.
        assert_eq!(p("2026-05-01T10:00:00.123Z"), Some(1_777_629_600_123));
        assert_eq!(p("2026-05-01T05:00:00.123-05:00"), Some(1_777_629_600_123));
        assert_eq!(p("2026-05-01T15:30:00.123+0530"), Some(1_777_629_600_123));
        assert_eq!(p("2026-05-01T10:00:00.1234567Z"), Some(1_777_629_600_123));
        assert_eq!(p("2026-05-01T10:00Z"), Some(1_777_629_600_000));
        assert_eq!(p("2026-05-01"), Some(1_777_593_600_000));
        assert_eq!(p("2026-05-01T10:00:00"), Some(1_777_629_600_000));
        // From pi-sessions' former parser.
        assert_eq!(p("2026-01-02"), Some(1_767_312_000_000));
        assert_eq!(p("2026-01-02T03:04:05+02:00"), p("2026-01-02T01:04:05Z"));
        assert_eq!(p("2026-01-02 03:04"), p("2026-01-02T03:04:00.000Z"));
        for bad in [
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-02-30",
            "2026-01-02T25:00",
            "2026-05-01T10:00:00.Z",
            "2026-05-01T10:00:00+5",
            "2026-05-01T10:00:00Zjunk",
            "2026-05-01X10:00:00Z",
            "2026-1-2",
            "1e12",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn says_which_rare_forms_were_used() {
        let t = parse("2026-01-02").unwrap();
        assert!(t.date_only && !t.end_of_day && !t.leap_second && !t.expanded_year);
        let t = parse("2026-01-02T00:00:00Z").unwrap();
        assert!(!t.date_only);
        assert!(parse("2025-01-01T24:00:00Z").unwrap().end_of_day);
        assert!(!parse("2025-01-01T23:00:00Z").unwrap().end_of_day);
        assert!(parse("2016-12-31T23:59:60Z").unwrap().leap_second);
        assert!(parse("2016-12-31T23:59:60.5Z").unwrap().leap_second);
        assert!(parse("+002025-12-17").unwrap().expanded_year);
        assert!(parse("+002025-12-17").unwrap().date_only);
        assert!(!parse("2025-12-17").unwrap().expanded_year);
    }

    #[test]
    fn utc_offsets() {
        assert_eq!(parse_utc_offset("+05:30"), Some(19_800));
        assert_eq!(parse_utc_offset("+0530"), Some(19_800));
        assert_eq!(parse_utc_offset("-05"), Some(-18_000));
        assert_eq!(parse_utc_offset("-00:00"), Some(0));
        assert_eq!(parse_utc_offset("+23:59"), Some(86_340));
        for bad in [
            "",
            "+",
            "+5",
            "+05:",
            "+05:3",
            "+053",
            "+05:30:00",
            "+24:00",
            "+05:60",
            "05:30",
            "+05 ",
            "Z",
        ] {
            assert_eq!(parse_utc_offset(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formats_like_to_iso_string() {
        assert_eq!(
            format_iso8601(1_777_629_600_123),
            "2026-05-01T10:00:00.123Z"
        );
        assert_eq!(format_iso8601(-1), "1969-12-31T23:59:59.999Z");
        for s in [
            "2026-04-21T08:59:18.596Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            assert_eq!(format_iso8601(p(s).unwrap()), s);
        }
        // Outside 0..=9999 the year is a plain number (not toISOString's ±YYYYYY).
        assert_eq!(
            format_iso8601(p("-000001-01-01").unwrap()),
            "-001-01-01T00:00:00.000Z"
        );
        assert_eq!(format_iso8601(JS_MAX_MS), "275760-09-13T00:00:00.000Z");
        // Never a panic, whatever the number.
        for ms in [i64::MIN, i64::MIN + 1, i64::MAX] {
            let _ = format_iso8601(ms);
        }
    }

    #[test]
    fn numeric_milliseconds_as_javascript_holds_them() {
        assert_eq!(
            millis_from_number(1_777_696_200_000.0),
            Some(1_777_696_200_000)
        );
        assert_eq!(millis_from_number(1.9), Some(1));
        assert_eq!(millis_from_number(-1.9), Some(-1));
        assert_eq!(millis_from_number(8.64e15), Some(JS_MAX_MS));
        assert_eq!(millis_from_number(-8.64e15), Some(-JS_MAX_MS));
        assert_eq!(millis_from_number(8.64e15 + 1.0), None);
        assert_eq!(millis_from_number(f64::NAN), None);
        assert_eq!(millis_from_number(f64::INFINITY), None);
    }

    #[test]
    fn civil_round_trip() {
        for z in [-800_000, -1, 0, 1, 59, 10_956, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert!(is_leap(2000) && !is_leap(2100));
    }
}
