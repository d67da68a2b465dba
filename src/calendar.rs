//! Calendar arithmetic for grouping by day, week and month (instants are read and the
//! day-number arithmetic is done by [`crate::time`]).
//!
//! - [`Zone`]: UTC, a fixed offset, or a zone read from the system's TZif files (`TZDIR` or
//!   `/usr/share/zoneinfo`), including the POSIX TZ rule at the end of the file that covers
//!   times past its table; [`Zone::local`] follows `TZ` and `/etc/localtime` as the C library
//!   does.
//! - [`Date`]: a civil date with its ISO week (`2026-W18`) and month (`2026-05`).
//!
//! Everything here works on untrusted text and files: bad input is an `Err`/`None`, never a
//! panic.

use crate::time::{self, days_from_civil, days_in_month, is_leap};
use std::path::{Path, PathBuf};

const DAY_SECS: i64 = 86_400;

/// A civil (proleptic Gregorian) date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

impl Date {
    /// The date of a day number (days since 1970-01-01).
    pub fn from_days(z: i64) -> Date {
        let (year, month, day) = time::civil_from_days(z);
        Date { year, month, day }
    }

    fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// ISO weekday: Monday 1 … Sunday 7.
    pub fn iso_weekday(&self) -> u32 {
        // 1970-01-01 was a Thursday (4).
        ((self.days() + 3).rem_euclid(7) + 1) as u32
    }

    /// The ISO 8601 week-numbering year and week (weeks start on Monday; week 1 holds the
    /// year's first Thursday).
    pub fn iso_week(&self) -> (i64, u32) {
        let ordinal = self.days() - days_from_civil(self.year, 1, 1) + 1;
        let wd = self.iso_weekday() as i64;
        let week = (ordinal - wd + 10) / 7;
        if week < 1 {
            (self.year - 1, weeks_in_year(self.year - 1))
        } else if week > weeks_in_year(self.year) as i64 {
            (self.year + 1, 1)
        } else {
            (self.year, week as u32)
        }
    }

    /// `YYYY-MM-DD`.
    pub fn day_label(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `YYYY-Www` (ISO week).
    pub fn week_label(&self) -> String {
        let (y, w) = self.iso_week();
        format!("{y:04}-W{w:02}")
    }

    /// `YYYY-MM`.
    pub fn month_label(&self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }
}

fn weeks_in_year(y: i64) -> u32 {
    let jan1 = Date {
        year: y,
        month: 1,
        day: 1,
    }
    .iso_weekday();
    if jan1 == 4 || (jan1 == 3 && is_leap(y)) {
        53
    } else {
        52
    }
}

/// A time zone: how far local time is from UTC at a given instant.
#[derive(Debug, Clone)]
pub enum Zone {
    Utc,
    /// Seconds east of UTC.
    Fixed(i32),
    /// A zone from a TZif file, or a POSIX TZ string.
    Rules(Box<Tzif>),
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
            if let Some(p) = PosixTz::parse(s) {
                return Ok(Zone::Rules(Box::new(Tzif::from_posix(p))));
            }
        }
        Err(format!(
            "unknown time zone `{s}` (not in {} and not a POSIX TZ string)",
            zoneinfo_dir().display()
        ))
    }

    fn from_file(path: &Path) -> Result<Zone, String> {
        let data = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        Tzif::parse(&data)
            .map(|t| Zone::Rules(Box::new(t)))
            .ok_or_else(|| format!("{} is not a valid TZif file", path.display()))
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
        match self {
            Zone::Utc => 0,
            Zone::Fixed(o) => *o,
            Zone::Rules(t) => t.offset_at(secs),
        }
    }

    /// The local date at the instant `ms` (milliseconds since the epoch).
    pub fn date_of(&self, ms: i64) -> Date {
        let secs = ms.div_euclid(1000);
        let local = secs + i64::from(self.offset_at(secs));
        Date::from_days(local.div_euclid(DAY_SECS))
    }
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

/// The transitions of a TZif file, and the POSIX TZ rule for times after the last one.
#[derive(Debug, Clone)]
pub struct Tzif {
    /// Transition instants (seconds since the epoch), ascending.
    times: Vec<i64>,
    /// For each transition, the index of its local time type.
    types: Vec<u8>,
    /// UT offset (seconds east) of each local time type.
    offsets: Vec<i32>,
    /// The footer rule (v2+ files), used after the last transition.
    footer: Option<PosixTz>,
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        let s = self.take(4)?;
        Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
}

struct Counts {
    isut: usize,
    isstd: usize,
    leap: usize,
    time: usize,
    typ: usize,
    chars: usize,
}

fn header(c: &mut Cursor<'_>) -> Option<(u8, Counts)> {
    if c.take(4)? != b"TZif" {
        return None;
    }
    let version = c.take(1)?[0];
    c.take(15)?;
    let mut n = [0usize; 6];
    for v in &mut n {
        *v = c.u32()? as usize;
    }
    Some((
        version,
        Counts {
            isut: n[0],
            isstd: n[1],
            leap: n[2],
            time: n[3],
            typ: n[4],
            chars: n[5],
        },
    ))
}

impl Tzif {
    fn from_posix(p: PosixTz) -> Tzif {
        Tzif {
            times: Vec::new(),
            types: Vec::new(),
            offsets: vec![p.std_offset],
            footer: Some(p),
        }
    }

    /// Parses a TZif file (RFC 8536, versions 1 to 4).
    pub fn parse(b: &[u8]) -> Option<Tzif> {
        let mut c = Cursor { b, i: 0 };
        let (version, n) = header(&mut c)?;
        let (n, time_size) = if version >= b'2' {
            // Skip the 32-bit block; the 64-bit one follows with its own header.
            let skip = n.time * 5 + n.typ * 6 + n.chars + n.leap * 8 + n.isstd + n.isut;
            c.take(skip)?;
            let (_, n2) = header(&mut c)?;
            (n2, 8)
        } else {
            (n, 4)
        };
        if n.typ == 0 {
            return None;
        }
        let mut times = Vec::with_capacity(n.time);
        for _ in 0..n.time {
            let s = c.take(time_size)?;
            times.push(if time_size == 8 {
                i64::from_be_bytes(s.try_into().ok()?)
            } else {
                i64::from(i32::from_be_bytes(s.try_into().ok()?))
            });
        }
        let types = c.take(n.time)?.to_vec();
        if types.iter().any(|&t| t as usize >= n.typ) {
            return None;
        }
        let mut offsets = Vec::with_capacity(n.typ);
        for _ in 0..n.typ {
            let s = c.take(6)?;
            offsets.push(i32::from_be_bytes([s[0], s[1], s[2], s[3]]));
        }
        c.take(n.chars + n.leap * (time_size + 4) + n.isstd + n.isut)?;
        let mut footer = None;
        if version >= b'2' {
            let rest = &b[c.i.min(b.len())..];
            if let Some(body) = rest.strip_prefix(b"\n") {
                if let Some(end) = body.iter().position(|&x| x == b'\n') {
                    let text = std::str::from_utf8(&body[..end]).ok()?;
                    if !text.is_empty() {
                        footer = PosixTz::parse(text);
                    }
                }
            }
        }
        Some(Tzif {
            times,
            types,
            offsets,
            footer,
        })
    }

    fn offset_at(&self, t: i64) -> i32 {
        match self.times.last() {
            None => match &self.footer {
                Some(f) => f.offset_at(t),
                None => self.offsets[0],
            },
            Some(&last) if t >= last && self.footer.is_some() => {
                self.footer.as_ref().map_or(0, |f| f.offset_at(t))
            }
            Some(_) => {
                let k = self.times.partition_point(|&x| x <= t);
                if k == 0 {
                    self.offsets[0]
                } else {
                    self.offsets[self.types[k - 1] as usize]
                }
            }
        }
    }
}

/// A POSIX TZ rule such as `EST5EDT,M3.2.0,M11.1.0` or `<+0530>-5:30`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PosixTz {
    /// Seconds east of UTC in standard time.
    std_offset: i32,
    dst: Option<Dst>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Dst {
    offset: i32,
    start: (RuleDay, i32),
    end: (RuleDay, i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuleDay {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(u32),
    /// `n`: day 0..=365, February 29 counted.
    Julian0(u32),
    /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    Mwd(u32, u32, u32),
}

impl RuleDay {
    fn day_number(self, y: i64) -> i64 {
        let jan1 = days_from_civil(y, 1, 1);
        match self {
            RuleDay::Julian1(n) => {
                let n = i64::from(n);
                jan1 + n - 1 + i64::from(is_leap(y) && n >= 60)
            }
            RuleDay::Julian0(n) => jan1 + i64::from(n),
            RuleDay::Mwd(m, w, d) => {
                let first = days_from_civil(y, m, 1);
                let wd_first = (first + 4).rem_euclid(7); // 0 = Sunday
                let mut day =
                    first + (i64::from(d) - wd_first).rem_euclid(7) + 7 * (i64::from(w) - 1);
                let last = first + i64::from(days_in_month(y, m)) - 1;
                while day > last {
                    day -= 7;
                }
                day
            }
        }
    }
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn num(&mut self, max_digits: usize) -> Option<u32> {
        let start = self.i;
        let mut v = 0u32;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            if self.i - start == max_digits {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
            self.i += 1;
        }
        (self.i > start).then_some(v)
    }
    fn name(&mut self) -> Option<()> {
        if self.eat(b'<') {
            let start = self.i;
            while self.peek()? != b'>' {
                self.i += 1;
            }
            let ok = self.i - start >= 3;
            self.i += 1;
            ok.then_some(())
        } else {
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.i += 1;
            }
            (self.i - start >= 3).then_some(())
        }
    }
    /// `[+-]h[h][:mm[:ss]]` as seconds; `max_h` bounds the hours.
    fn hms(&mut self, max_h: u32) -> Option<i32> {
        let neg = if self.eat(b'-') {
            true
        } else {
            self.eat(b'+');
            false
        };
        let h = self.num(3)?;
        let mut s = 0;
        let mut m = 0;
        if self.eat(b':') {
            m = self.num(2)?;
            if self.eat(b':') {
                s = self.num(2)?;
            }
        }
        if h > max_h || m > 59 || s > 59 {
            return None;
        }
        let v = (h * 3600 + m * 60 + s) as i32;
        Some(if neg { -v } else { v })
    }
    fn rule(&mut self) -> Option<(RuleDay, i32)> {
        let day = if self.eat(b'J') {
            let n = self.num(3)?;
            if !(1..=365).contains(&n) {
                return None;
            }
            RuleDay::Julian1(n)
        } else if self.eat(b'M') {
            let m = self.num(2)?;
            if !self.eat(b'.') {
                return None;
            }
            let w = self.num(1)?;
            if !self.eat(b'.') {
                return None;
            }
            let d = self.num(1)?;
            if !(1..=12).contains(&m) || !(1..=5).contains(&w) || d > 6 {
                return None;
            }
            RuleDay::Mwd(m, w, d)
        } else {
            let n = self.num(3)?;
            if n > 365 {
                return None;
            }
            RuleDay::Julian0(n)
        };
        let time = if self.eat(b'/') { self.hms(167)? } else { 7200 };
        Some((day, time))
    }
}

impl PosixTz {
    /// Parses a POSIX TZ string (with RFC 8536's extensions: hours up to 167 in rule times).
    pub fn parse(s: &str) -> Option<PosixTz> {
        let mut p = P {
            b: s.as_bytes(),
            i: 0,
        };
        p.name()?;
        // POSIX offsets are west of UTC; ours are east.
        let std_offset = -p.hms(24)?;
        if p.peek().is_none() {
            return Some(PosixTz {
                std_offset,
                dst: None,
            });
        }
        p.name()?;
        let offset = match p.peek() {
            Some(b',') | None => std_offset + 3600,
            _ => -p.hms(24)?,
        };
        let (start, end) = if p.eat(b',') {
            let a = p.rule()?;
            if !p.eat(b',') {
                return None;
            }
            (a, p.rule()?)
        } else {
            // No rule: the US rule, as most C libraries assume.
            (
                (RuleDay::Mwd(3, 2, 0), 7200),
                (RuleDay::Mwd(11, 1, 0), 7200),
            )
        };
        if p.peek().is_some() {
            return None;
        }
        Some(PosixTz {
            std_offset,
            dst: Some(Dst { offset, start, end }),
        })
    }

    fn offset_at(&self, t: i64) -> i32 {
        let Some(dst) = &self.dst else {
            return self.std_offset;
        };
        let year = Date::from_days((t + i64::from(self.std_offset)).div_euclid(DAY_SECS)).year;
        // Transition instants in UTC: the start is given in standard time, the end in DST.
        let start = dst.start.0.day_number(year) * DAY_SECS + i64::from(dst.start.1)
            - i64::from(self.std_offset);
        let end =
            dst.end.0.day_number(year) * DAY_SECS + i64::from(dst.end.1) - i64::from(dst.offset);
        let in_dst = if start < end {
            start <= t && t < end
        } else {
            !(end <= t && t < start)
        };
        if in_dst {
            dst.offset
        } else {
            self.std_offset
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        time::parse_iso8601(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn civil_round_trip() {
        for z in [-800_000, -1, 0, 1, 59, 10_956, 20_000, 2_932_896] {
            let d = Date::from_days(z);
            assert_eq!(days_from_civil(d.year, d.month, d.day), z);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn iso_weeks() {
        let w = |y, m, d| {
            Date {
                year: y,
                month: m,
                day: d,
            }
            .week_label()
        };
        assert_eq!(w(2026, 1, 1), "2026-W01"); // a Thursday
        assert_eq!(w(2021, 1, 3), "2020-W53"); // a Sunday after a 53-week year
        assert_eq!(w(2024, 12, 30), "2025-W01"); // a Monday
        assert_eq!(w(2026, 5, 1), "2026-W18");
        assert_eq!(w(2020, 12, 31), "2020-W53");
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
        let ny = PosixTz::parse("EST5EDT,M3.2.0,M11.1.0").unwrap();
        // 2026 DST: from 2026-03-08 07:00 UTC to 2026-11-01 06:00 UTC.
        assert_eq!(ny.offset_at(ms("2026-03-08T06:59:59Z") / 1000), -5 * 3600);
        assert_eq!(ny.offset_at(ms("2026-03-08T07:00:00Z") / 1000), -4 * 3600);
        assert_eq!(ny.offset_at(ms("2026-11-01T05:59:59Z") / 1000), -4 * 3600);
        assert_eq!(ny.offset_at(ms("2026-11-01T06:00:00Z") / 1000), -5 * 3600);
        // Southern hemisphere: DST spans the new year.
        let syd = PosixTz::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").unwrap();
        assert_eq!(syd.offset_at(ms("2026-01-15T00:00:00Z") / 1000), 11 * 3600);
        assert_eq!(syd.offset_at(ms("2026-07-15T00:00:00Z") / 1000), 10 * 3600);
        let ist = PosixTz::parse("<+0530>-5:30").unwrap();
        assert_eq!(ist.offset_at(0), 5 * 3600 + 1800);
        assert_eq!(PosixTz::parse("JST-9").unwrap().offset_at(0), 9 * 3600);
        for bad in [
            "",
            "E5",
            "EST",
            "EST5EDT,M3.2.0",
            "EST5EDT,M13.2.0,M11.1.0",
            "EST5x",
        ] {
            assert_eq!(PosixTz::parse(bad), None, "{bad}");
        }
    }

    /// A hand-built TZif v2 file: one transition, two types, and a footer.
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
        // v2 block: a transition at 1,000,000 s from +1h to +2h.
        hdr(&mut b, 1, 2, 8);
        b.extend_from_slice(&1_000_000i64.to_be_bytes());
        b.push(1);
        b.extend_from_slice(&3600i32.to_be_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&7200i32.to_be_bytes());
        b.extend_from_slice(&[1, 4]);
        b.extend_from_slice(b"ONE\0TWO\0");
        b.push(b'\n');
        b.extend_from_slice(footer.as_bytes());
        b.push(b'\n');
        b
    }

    #[test]
    fn tzif_table_then_footer() {
        let t = Tzif::parse(&tzif_v2("<+03>-3")).unwrap();
        assert_eq!(t.offset_at(0), 3600);
        assert_eq!(t.offset_at(999_999), 3600);
        // From the last transition on, the footer rule applies.
        assert_eq!(t.offset_at(1_000_000), 3 * 3600);
        let t = Tzif::parse(&tzif_v2("")).unwrap();
        assert_eq!(t.offset_at(2_000_000), 7200);
        // Truncated or foreign files are errors, not panics.
        let full = tzif_v2("<+03>-3");
        for n in 0..full.len() - 10 {
            let _ = Tzif::parse(&full[..n]);
        }
        assert!(Tzif::parse(b"not a tzif file at all, really not").is_none());
    }

    #[test]
    fn system_zoneinfo_when_present() {
        if !Path::new("/usr/share/zoneinfo/America/New_York").exists() {
            return;
        }
        let z = Zone::Rules(Box::new(
            Tzif::parse(&std::fs::read("/usr/share/zoneinfo/America/New_York").unwrap()).unwrap(),
        ));
        assert_eq!(z.offset_at(ms("2026-07-01T12:00:00Z") / 1000), -4 * 3600);
        assert_eq!(z.offset_at(ms("2026-01-01T12:00:00Z") / 1000), -5 * 3600);
        assert_eq!(z.offset_at(ms("2090-07-01T12:00:00Z") / 1000), -4 * 3600);
        assert_eq!(
            z.date_of(ms("2026-05-02T03:00:00Z")).day_label(),
            "2026-05-01"
        );
    }
}
