//! Time zones and the calendar labels pi-usage groups by: day, ISO week and month.
//!
//! - [`Zone`]: UTC, a fixed offset, or a zone from the system's TZif files (`TZDIR` or
//!   `/usr/share/zoneinfo`) or a POSIX TZ string; [`Zone::local`] follows `TZ` and
//!   `/etc/localtime` as the C library does. Which spec names which zone is decided here; the
//!   TZif and POSIX TZ formats are read, and offsets found, by `jiff`.
//! - [`Date`]: a local date with its labels `2026-05-01`, `2026-W18` and `2026-05`, for any
//!   instant a JavaScript `Date` can hold (years −271821 to 275760).
//!
//! Everything here works on untrusted text and files: bad input is an `Err`, never a panic.
//!
//! jiff's instants and dates stop at the years −9999 and 9999. The Gregorian calendar repeats
//! every 400 years, weekdays included, and so does every zone's rule past its last transition
//! (and its first time type before the first), so an instant outside is moved by whole
//! 400-year cycles into jiff's range and its date moved back by as many years.

use crate::time;
use jiff::civil;
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;
use std::path::{Path, PathBuf};

/// Seconds in 400 Gregorian years: 146,097 days, a whole number of weeks.
const CYCLE_SECS: i64 = 146_097 * 86_400;

/// A local (proleptic Gregorian) date. (Not `PartialEq`: one date near jiff's ends can be held
/// moved or not; compare [`Date::day_label`]s.)
#[derive(Debug, Clone, Copy)]
pub struct Date {
    /// The date, moved into jiff's years by whole 400-year cycles when outside them.
    civil: civil::Date,
    /// The years it was moved by (a multiple of 400; 0 for years −9999 to 9999).
    years_moved: i64,
}

impl Date {
    pub fn year(&self) -> i64 {
        i64::from(self.civil.year()) + self.years_moved
    }

    pub fn month(&self) -> u32 {
        self.civil.month().unsigned_abs().into()
    }

    pub fn day(&self) -> u32 {
        self.civil.day().unsigned_abs().into()
    }

    /// The ISO 8601 week-numbering year and week (weeks start on Monday; week 1 holds the
    /// year's first Thursday).
    pub fn iso_week(&self) -> (i64, u32) {
        let w = self.civil.iso_week_date();
        (
            i64::from(w.year()) + self.years_moved,
            w.week().unsigned_abs().into(),
        )
    }

    /// `YYYY-MM-DD`.
    pub fn day_label(&self) -> String {
        format!(
            "{}-{:02}-{:02}",
            Year(self.year()),
            self.month(),
            self.day()
        )
    }

    /// `YYYY-Www` (ISO week).
    pub fn week_label(&self) -> String {
        let (y, w) = self.iso_week();
        format!("{}-W{w:02}", Year(y))
    }

    /// `YYYY-MM`.
    pub fn month_label(&self) -> String {
        format!("{}-{:02}", Year(self.year()), self.month())
    }
}

/// A year in a label: at least four digits, after a minus sign when it is before year 0
/// (ISO 8601's expanded form: `-0001` for 2 BC, not `-001`; year 0 is `0000`). Issue 19,
/// item 11: the week of 0000-01-01 belongs to week-year -1 and was labelled `-001-W52`.
struct Year(i64);

impl std::fmt::Display for Year {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 < 0 {
            write!(f, "-{:04}", self.0.unsigned_abs())
        } else {
            write!(f, "{:04}", self.0)
        }
    }
}

/// A time zone: how far local time is from UTC at a given instant.
#[derive(Debug, Clone)]
pub enum Zone {
    Utc,
    /// A UTC offset given as one (`+05:30`).
    Fixed(Offset),
    /// A zone from a TZif file, or a POSIX TZ string.
    Rules(TimeZone),
}

impl Zone {
    /// Reads a zone given on the command line: `UTC` (or `Z`), `local`, a fixed offset
    /// (`+05:30`, `-0500`, `+09`), or a zone name looked up in the system's zoneinfo
    /// (`Europe/Berlin`); failing that, a POSIX TZ string (`EST5EDT,M3.2.0,M11.1.0`).
    pub fn parse(spec: &str) -> Result<Zone, String> {
        let s = spec.trim();
        if s.eq_ignore_ascii_case("utc") || s == "Z" || s == "z" {
            return Ok(Zone::Utc);
        }
        if s.eq_ignore_ascii_case("local") {
            return Zone::local();
        }
        if s.starts_with('+') || s.starts_with('-') {
            return time::parse_utc_offset(s)
                .and_then(|o| Offset::from_seconds(o).ok())
                .map(Zone::Fixed)
                .ok_or_else(|| format!("bad UTC offset `{s}` (expected e.g. +05:30 or -05:00)"));
        }
        Zone::named(s)
    }

    fn named(s: &str) -> Result<Zone, String> {
        if valid_zone_name(s) {
            if let Some(path) = zoneinfo_path(s) {
                return Zone::from_file(&path);
            }
        }
        if s.bytes().any(|c| c.is_ascii_digit()) {
            if let Some(tz) = posix_zone(s) {
                return Ok(Zone::Rules(tz));
            }
        }
        Err(format!(
            "unknown time zone `{s}` (not in {} and not a POSIX TZ string)",
            zoneinfo_dir().display()
        ))
    }

    fn from_file(path: &Path) -> Result<Zone, String> {
        let data = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        TimeZone::tzif(&path.to_string_lossy(), &data)
            .map(Zone::Rules)
            .map_err(|_| format!("{} is not a valid TZif file", path.display()))
    }

    /// The local zone as the C library finds it: `TZ` (a zone name, `:name`, an absolute path
    /// or a POSIX TZ string; empty means UTC), else `/etc/localtime`, else UTC.
    pub fn local() -> Result<Zone, String> {
        match std::env::var("TZ") {
            Ok(tz) => {
                let t = tz.strip_prefix(':').unwrap_or(&tz).trim();
                if t.is_empty() || t.eq_ignore_ascii_case("utc") {
                    Ok(Zone::Utc)
                } else if t.starts_with('/') {
                    Zone::from_file(Path::new(t)).map_err(|e| format!("TZ={tz}: {e}"))
                } else {
                    Zone::named(t).map_err(|e| format!("TZ={tz}: {e}"))
                }
            }
            Err(_) => {
                let p = Path::new("/etc/localtime");
                if p.exists() {
                    Zone::from_file(p)
                } else {
                    Ok(Zone::Utc)
                }
            }
        }
    }

    /// Seconds east of UTC at the instant `secs` (seconds since the epoch).
    pub fn offset_at(&self, secs: i64) -> i32 {
        self.offset(within_jiff(secs).0).seconds()
    }

    fn offset(&self, instant: Timestamp) -> Offset {
        match self {
            Zone::Utc => Offset::UTC,
            Zone::Fixed(o) => *o,
            Zone::Rules(tz) => tz.to_offset(instant),
        }
    }

    /// The local date at the instant `ms` (milliseconds since the epoch).
    pub fn date_of(&self, ms: i64) -> Date {
        let (instant, years_moved) = within_jiff(ms.div_euclid(1000));
        Date {
            civil: self.offset(instant).to_datetime(instant).date(),
            years_moved,
        }
    }
}

/// The instant `secs` seconds after the epoch, moved by whole 400-year cycles into jiff's
/// range when outside it, and the years it was moved by.
fn within_jiff(secs: i64) -> (Timestamp, i64) {
    let (min, max) = (Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    let cycles = if secs > max {
        (secs - max).div_euclid(CYCLE_SECS) + 1
    } else if secs < min {
        -((min - secs).div_euclid(CYCLE_SECS) + 1)
    } else {
        0
    };
    let moved = secs - cycles * CYCLE_SECS;
    // In range by construction: max - CYCLE_SECS < moved <= max, or min <= moved < min + CYCLE_SECS.
    let instant = Timestamp::from_second(moved).expect("moved into jiff's range");
    (instant, cycles * 400)
}

/// A POSIX TZ string as jiff reads it. One with a DST name but no rule (`EST5EDT`), which
/// jiff refuses, takes the US rule, as most C libraries assume.
fn posix_zone(s: &str) -> Option<TimeZone> {
    TimeZone::posix(s)
        .or_else(|_| TimeZone::posix(&format!("{s},M3.2.0,M11.1.0")))
        .ok()
}

fn valid_zone_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && s.split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'_' | b'-' | b'+'))
}

fn zoneinfo_dir() -> PathBuf {
    std::env::var_os("TZDIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/zoneinfo"))
}

fn zoneinfo_path(name: &str) -> Option<PathBuf> {
    let p = zoneinfo_dir().join(name);
    p.is_file().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        time::parse_iso8601(s).unwrap_or_else(|| panic!("{s}"))
    }

    /// The day, week and month labels of the instant `ms` in `zone`.
    fn labels(zone: &Zone, ms: i64) -> [String; 3] {
        let d = zone.date_of(ms);
        [d.day_label(), d.week_label(), d.month_label()]
    }

    fn system_zone(name: &str) -> Option<Zone> {
        if !Path::new("/usr/share/zoneinfo").join(name).is_file() {
            eprintln!("no system zoneinfo for {name}; skipped");
            return None;
        }
        Some(Zone::parse(name).unwrap())
    }

    #[test]
    fn iso_weeks() {
        let w = |day: &str| Zone::Utc.date_of(ms(day)).week_label();
        assert_eq!(w("2026-01-01"), "2026-W01"); // a Thursday
        assert_eq!(w("2021-01-03"), "2020-W53"); // a Sunday after a 53-week year
        assert_eq!(w("2024-12-30"), "2025-W01"); // a Monday
        assert_eq!(w("2026-05-01"), "2026-W18");
        assert_eq!(w("2020-12-31"), "2020-W53");
    }

    #[test]
    fn labels_as_javascript_dates_reach() {
        // The ends of a JavaScript Date's range and the years just past jiff's (±9999). The
        // weeks as Python's isocalendar gives them for the dates whole 400-year cycles away
        // (2160-09-13, 2179-04-20, 2000-01-01, 2000-12-31).
        let utc = |ms| labels(&Zone::Utc, ms);
        assert_eq!(
            utc(time::JS_MAX_MS),
            ["275760-09-13", "275760-W37", "275760-09"]
        );
        assert_eq!(
            utc(-time::JS_MAX_MS),
            ["-271821-04-20", "-271821-W16", "-271821-04"]
        );
        assert_eq!(utc(ms("9999-12-31T23:59:59.999Z"))[0], "9999-12-31");
        // 10000-01-01 is a Saturday: still in week 52 of 9999.
        assert_eq!(
            utc(ms("+010000-01-01T00:00:00Z")),
            ["10000-01-01", "9999-W52", "10000-01"]
        );
        assert_eq!(
            utc(ms("-010000-12-31T23:59:59Z")),
            ["-10000-12-31", "-10000-W52", "-10000-12"]
        );
        assert_eq!(utc(ms("-000001-01-01"))[0], "-0001-01-01");
        // Never a panic, whatever the number.
        for ms in [i64::MIN, i64::MIN + 1, i64::MAX] {
            let _ = utc(ms);
            let _ = Zone::parse("EST5EDT,M3.2.0,M11.1.0").unwrap().date_of(ms);
        }
    }

    /// Days from 1970-01-01 to the proleptic Gregorian date `y-m-d` (any year).
    fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    fn civil_from_days(days: i64) -> (i64, i64, i64) {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        (
            if m <= 2 {
                yoe + era * 400 + 1
            } else {
                yoe + era * 400
            },
            m,
            d,
        )
    }

    /// ISO 8601 by its rule: a week is Monday to Sunday and belongs to the year its Thursday
    /// is in; week 1 is the one holding that year's first Thursday.
    fn iso_week_by_rule(days: i64) -> (i64, u32) {
        let monday_based = (days + 3).rem_euclid(7); // 1970-01-01 was a Thursday
        let thursday = days - monday_based + 3;
        let (year, _, _) = civil_from_days(thursday);
        let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
        (year, week as u32)
    }

    /// Issue 19, item 11: week labels around year 0 and in negative years are the ISO 8601
    /// proleptic Gregorian ones, as are day labels, for every day of years -802 to 802, the
    /// years around jiff's ends and around a JavaScript Date's.
    #[test]
    fn item_11_week_labels_of_year_0_and_negative_years() {
        let day_ms = 86_400_000i64;
        let mut ranges = vec![(days_from_civil(-802, 1, 1), days_from_civil(802, 12, 31))];
        for y in [-10_400, -10_000, -9_999, 9_999, 10_000, 10_400] {
            ranges.push((days_from_civil(y - 1, 12, 1), days_from_civil(y + 1, 1, 31)));
        }
        let js_days = time::JS_MAX_MS / day_ms;
        ranges.push((-js_days, -js_days + 800));
        ranges.push((js_days - 800, js_days));
        for (from, to) in ranges {
            for days in from..=to {
                let d = Zone::Utc.date_of(days * day_ms + 12 * 3_600_000);
                let (y, m, dd) = civil_from_days(days);
                assert_eq!((d.year(), d.month(), d.day()), (y, m as u32, dd as u32));
                let want = iso_week_by_rule(days);
                assert_eq!(d.iso_week(), want, "{}", d.day_label());
                // Labels: a sign only before year 0, then at least four digits.
                let (wy, ww) = want;
                let year = |y: i64| {
                    let digits = format!("{:04}", y.unsigned_abs());
                    if y < 0 {
                        format!("-{digits}")
                    } else {
                        digits
                    }
                };
                assert_eq!(d.week_label(), format!("{}-W{ww:02}", year(wy)));
                assert_eq!(d.day_label(), format!("{}-{m:02}-{dd:02}", year(y)));
                assert_eq!(d.month_label(), format!("{}-{m:02}", year(y)));
            }
        }
        let labels = |day: &str| labels(&Zone::Utc, ms(day));
        // 0000-01-01 is a Saturday: in the last week of year -1 (1 BC is year 0, 2 BC is -1).
        assert_eq!(labels("0000-01-01"), ["0000-01-01", "-0001-W52", "0000-01"]);
        assert_eq!(labels("0000-01-03"), ["0000-01-03", "0000-W01", "0000-01"]);
        assert_eq!(labels("0000-12-31"), ["0000-12-31", "0000-W52", "0000-12"]);
        assert_eq!(
            labels("-000001-12-31"),
            ["-0001-12-31", "-0001-W52", "-0001-12"]
        );
        assert_eq!(labels("0001-01-01"), ["0001-01-01", "0001-W01", "0001-01"]);
    }

    #[test]
    fn fixed_offsets_move_the_date() {
        let z = Zone::parse("-05:00").unwrap();
        assert_eq!(
            z.date_of(ms("2026-05-02T03:00:00Z")).day_label(),
            "2026-05-01"
        );
        let z = Zone::parse("+05:30").unwrap();
        assert_eq!(
            z.date_of(ms("2026-05-01T19:00:00Z")).day_label(),
            "2026-05-02"
        );
        assert!(Zone::parse("+5").is_err());
        assert!(Zone::parse("+24:00").is_err());
        assert!(Zone::parse("../../etc/passwd").is_err());
    }

    #[test]
    fn posix_rules() {
        let ny = posix_zone("EST5EDT,M3.2.0,M11.1.0")
            .map(Zone::Rules)
            .unwrap();
        let at = |z: &Zone, t| z.offset_at(ms(t) / 1000);
        // 2026 DST: from 2026-03-08 07:00 UTC to 2026-11-01 06:00 UTC.
        assert_eq!(at(&ny, "2026-03-08T06:59:59Z"), -5 * 3600);
        assert_eq!(at(&ny, "2026-03-08T07:00:00Z"), -4 * 3600);
        assert_eq!(at(&ny, "2026-11-01T05:59:59Z"), -4 * 3600);
        assert_eq!(at(&ny, "2026-11-01T06:00:00Z"), -5 * 3600);
        // Southern hemisphere: DST spans the new year.
        let syd = Zone::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").unwrap();
        assert_eq!(at(&syd, "2026-01-15T00:00:00Z"), 11 * 3600);
        assert_eq!(at(&syd, "2026-07-15T00:00:00Z"), 10 * 3600);
        let ist = Zone::parse("<+0530>-5:30").unwrap();
        assert_eq!(ist.offset_at(0), 5 * 3600 + 1800);
        assert_eq!(Zone::parse("JST-9").unwrap().offset_at(0), 9 * 3600);
        // A DST name without a rule takes the US rule.
        let us = posix_zone("XST5XDT").map(Zone::Rules).unwrap();
        assert_eq!(at(&us, "2026-03-08T07:00:00Z"), -4 * 3600);
        assert_eq!(at(&us, "2026-11-01T06:00:00Z"), -5 * 3600);
        for bad in [
            "",
            "E5",
            "EST",
            "EST5EDT,M3.2.0",
            "EST5EDT,M13.2.0,M11.1.0",
            "EST5x",
            "EST5,M3.2.0,M11.1.0",
        ] {
            assert!(posix_zone(bad).is_none(), "{bad}");
        }
        let e = Zone::parse("Mars/Olympus").unwrap_err();
        assert!(
            e.starts_with("unknown time zone `Mars/Olympus` (not in "),
            "{e}"
        );
    }

    /// A hand-built TZif v2 file: one transition (at 1,000,000 s, from +1h to +2h), two
    /// types, and a footer.
    fn tzif_v2(footer: &str) -> Vec<u8> {
        let mut b = Vec::new();
        let hdr = |b: &mut Vec<u8>, time: u32, typ: u32, chars: u32| {
            b.extend_from_slice(b"TZif2");
            b.extend_from_slice(&[0; 15]);
            for n in [0, 0, 0, time, typ, chars] {
                b.extend_from_slice(&u32::to_be_bytes(n));
            }
        };
        // v1 block: no transitions, one type.
        hdr(&mut b, 0, 1, 4);
        b.extend_from_slice(&0i32.to_be_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(b"UTC\0");
        // v2 block.
        hdr(&mut b, 1, 2, 8);
        b.extend_from_slice(&1_000_000i64.to_be_bytes());
        b.push(1);
        b.extend_from_slice(&3600i32.to_be_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&7200i32.to_be_bytes());
        b.extend_from_slice(&[0, 4]);
        b.extend_from_slice(b"ONE\0TWO\0");
        b.push(b'\n');
        b.extend_from_slice(footer.as_bytes());
        b.push(b'\n');
        b
    }

    #[test]
    fn tzif_table_then_footer() {
        let dir = std::env::temp_dir().join(format!("pi-jsonl-tzif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, data: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, data).unwrap();
            Zone::from_file(&p)
        };
        let t = file("rule", &tzif_v2("TWO-2THR,M3.5.0,M10.5.0/3")).unwrap();
        assert_eq!(t.offset_at(0), 3600);
        assert_eq!(t.offset_at(999_999), 3600);
        assert_eq!(t.offset_at(1_000_000), 7200);
        // After the last transition, the footer rule applies.
        assert_eq!(t.offset_at(ms("1970-07-01T00:00:00Z") / 1000), 3 * 3600);
        assert_eq!(t.offset_at(ms("2070-07-01T00:00:00Z") / 1000), 3 * 3600);
        assert_eq!(t.offset_at(ms("2070-12-01T00:00:00Z") / 1000), 2 * 3600);
        // No footer: the last type from then on.
        let t = file("empty", &tzif_v2("")).unwrap();
        assert_eq!(t.offset_at(ms("2070-07-01T00:00:00Z") / 1000), 7200);
        // Truncated or foreign files are errors, not panics.
        let full = tzif_v2("TWO-2");
        for n in 0..full.len() - 10 {
            let _ = file("cut", &full[..n]);
        }
        let e = file("junk", b"not a tzif file at all, really not").unwrap_err();
        assert_eq!(
            e,
            format!("{} is not a valid TZif file", dir.join("junk").display())
        );
        let e = Zone::from_file(&dir.join("absent")).unwrap_err();
        assert!(
            e.starts_with(&format!("reading {}: ", dir.join("absent").display())),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn system_zoneinfo_when_present() {
        let Some(z) = system_zone("America/New_York") else {
            return;
        };
        let at = |t| z.offset_at(ms(t) / 1000);
        assert_eq!(at("2026-07-01T12:00:00Z"), -4 * 3600);
        assert_eq!(at("2026-01-01T12:00:00Z"), -5 * 3600);
        assert_eq!(at("2090-07-01T12:00:00Z"), -4 * 3600);
        // Before the first transition: local mean time, -4:56:02.
        assert_eq!(at("1800-01-01T00:00:00Z"), -(4 * 3600 + 56 * 60 + 2));
        assert_eq!(
            z.date_of(ms("2026-05-02T03:00:00Z")).day_label(),
            "2026-05-01"
        );
    }

    /// Expected labels worked out by hand from each zone's offsets (not by jiff): the last
    /// second of a local day and the first of the next, on both sides of DST transitions.
    #[test]
    fn labels_around_transitions() {
        /// An instant (UTC) and its local day, week and month labels.
        type Labelled = (&'static str, [&'static str; 3]);
        let cases: &[(&str, &[Labelled])] = &[
            (
                // CET +1, CEST +2; 2026: 03-29 01:00Z to 10-25 01:00Z.
                "Europe/Berlin",
                &[
                    (
                        "2026-03-28T22:59:59Z",
                        ["2026-03-28", "2026-W13", "2026-03"],
                    ),
                    (
                        "2026-03-28T23:00:00Z",
                        ["2026-03-29", "2026-W13", "2026-03"],
                    ),
                    (
                        "2026-03-29T21:59:59Z",
                        ["2026-03-29", "2026-W13", "2026-03"],
                    ),
                    (
                        "2026-03-29T22:00:00Z",
                        ["2026-03-30", "2026-W14", "2026-03"],
                    ),
                    (
                        "2026-03-31T21:59:59Z",
                        ["2026-03-31", "2026-W14", "2026-03"],
                    ),
                    (
                        "2026-03-31T22:00:00Z",
                        ["2026-04-01", "2026-W14", "2026-04"],
                    ),
                    (
                        "2026-10-24T21:59:59Z",
                        ["2026-10-24", "2026-W43", "2026-10"],
                    ),
                    (
                        "2026-10-24T22:00:00Z",
                        ["2026-10-25", "2026-W43", "2026-10"],
                    ),
                    (
                        "2026-10-25T22:59:59Z",
                        ["2026-10-25", "2026-W43", "2026-10"],
                    ),
                    (
                        "2026-10-25T23:00:00Z",
                        ["2026-10-26", "2026-W44", "2026-10"],
                    ),
                    (
                        "2020-12-31T22:59:59Z",
                        ["2020-12-31", "2020-W53", "2020-12"],
                    ),
                    (
                        "2020-12-31T23:00:00Z",
                        ["2021-01-01", "2020-W53", "2021-01"],
                    ),
                ],
            ),
            (
                // EST -5, EDT -4; 2026: 03-08 07:00Z to 11-01 06:00Z; 2006 (the old US rule,
                // from the table): from 04-02 07:00Z.
                "America/New_York",
                &[
                    (
                        "2026-03-08T04:59:59Z",
                        ["2026-03-07", "2026-W10", "2026-03"],
                    ),
                    (
                        "2026-03-08T05:00:00Z",
                        ["2026-03-08", "2026-W10", "2026-03"],
                    ),
                    (
                        "2026-03-09T03:59:59Z",
                        ["2026-03-08", "2026-W10", "2026-03"],
                    ),
                    (
                        "2026-03-09T04:00:00Z",
                        ["2026-03-09", "2026-W11", "2026-03"],
                    ),
                    (
                        "2026-11-01T03:59:59Z",
                        ["2026-10-31", "2026-W44", "2026-10"],
                    ),
                    (
                        "2026-11-01T04:00:00Z",
                        ["2026-11-01", "2026-W44", "2026-11"],
                    ),
                    (
                        "2026-11-02T04:59:59Z",
                        ["2026-11-01", "2026-W44", "2026-11"],
                    ),
                    (
                        "2026-11-02T05:00:00Z",
                        ["2026-11-02", "2026-W45", "2026-11"],
                    ),
                    (
                        "2006-04-02T04:59:59Z",
                        ["2006-04-01", "2006-W13", "2006-04"],
                    ),
                    (
                        "2006-04-03T03:59:59Z",
                        ["2006-04-02", "2006-W13", "2006-04"],
                    ),
                    (
                        "2006-04-03T04:00:00Z",
                        ["2006-04-03", "2006-W14", "2006-04"],
                    ),
                ],
            ),
            (
                // +10:30 standard, +11 in DST (a half-hour change); 2026: DST until
                // 04-04 15:00Z and from 10-03 15:30Z. 2100 is past the table: the footer rule.
                "Australia/Lord_Howe",
                &[
                    (
                        "2026-04-04T12:59:59Z",
                        ["2026-04-04", "2026-W14", "2026-04"],
                    ),
                    (
                        "2026-04-04T13:00:00Z",
                        ["2026-04-05", "2026-W14", "2026-04"],
                    ),
                    (
                        "2026-04-05T13:29:59Z",
                        ["2026-04-05", "2026-W14", "2026-04"],
                    ),
                    (
                        "2026-04-05T13:30:00Z",
                        ["2026-04-06", "2026-W15", "2026-04"],
                    ),
                    (
                        "2026-10-03T13:29:59Z",
                        ["2026-10-03", "2026-W40", "2026-10"],
                    ),
                    (
                        "2026-10-03T13:30:00Z",
                        ["2026-10-04", "2026-W40", "2026-10"],
                    ),
                    (
                        "2026-10-04T12:59:59Z",
                        ["2026-10-04", "2026-W40", "2026-10"],
                    ),
                    (
                        "2026-10-04T13:00:00Z",
                        ["2026-10-05", "2026-W41", "2026-10"],
                    ),
                    (
                        "2026-01-10T13:15:00Z",
                        ["2026-01-11", "2026-W02", "2026-01"],
                    ),
                    (
                        "2026-07-10T13:15:00Z",
                        ["2026-07-10", "2026-W28", "2026-07"],
                    ),
                    (
                        "2100-01-10T13:15:00Z",
                        ["2100-01-11", "2100-W02", "2100-01"],
                    ),
                    (
                        "2100-07-10T13:15:00Z",
                        ["2100-07-10", "2100-W27", "2100-07"],
                    ),
                ],
            ),
        ];
        for (name, instants) in cases {
            let Some(zone) = system_zone(name) else {
                continue;
            };
            for (utc, want) in *instants {
                assert_eq!(labels(&zone, ms(utc)), *want, "{name} at {utc}");
            }
        }
    }
}
