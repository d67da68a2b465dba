//! pi-usage --since / --until: which calls count, by their time. A bound is a day (whole days
//! in the `--tz` zone, both ends included) or an instant (a full timestamp with its zone).

use crate::calendar::{Date, Zone};
use crate::time;

/// One end of the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A calendar day (year, month, day), in the `--tz` zone.
    Day(i64, u32, u32),
    /// An instant, milliseconds since the epoch.
    Instant(i64),
}

/// Reads a `--since`/`--until` value: `2026-03-01`, `20260301` (ccusage's form), or a full
/// ISO 8601 timestamp with `Z` or a UTC offset (`2026-03-01T09:30:00+01:00`).
pub fn parse_bound(s: &str) -> Result<Bound, String> {
    let t = s.trim();
    let dashed;
    let text = if t.len() == 8 && t.bytes().all(|b| b.is_ascii_digit()) {
        dashed = format!("{}-{}-{}", &t[..4], &t[4..6], &t[6..]);
        dashed.as_str()
    } else {
        t
    };
    let bad = || {
        format!("`{s}` is not a date (2026-03-01 or 20260301) or a timestamp with a zone (2026-03-01T09:30:00Z)")
    };
    let parsed = time::parse(text).ok_or_else(bad)?;
    if parsed.date_only {
        let b = text.as_bytes();
        let num = |r: std::ops::Range<usize>| text.get(r).and_then(|x| x.parse().ok());
        // A plain `YYYY-MM-DD` (time::parse checked it); the expanded year form is refused.
        if b.len() != 10 {
            return Err(bad());
        }
        return match (num(0..4), num(5..7), num(8..10)) {
            (Some(y), Some(m), Some(d)) => Ok(Bound::Day(y as i64, m, d)),
            _ => Err(bad()),
        };
    }
    // A timestamp must say its zone: its time part ends in Z or an offset.
    let time_part = text.get(11..).unwrap_or("");
    if !time_part.contains(['Z', 'z', '+', '-']) {
        return Err(format!(
            "`{s}` has no zone: end it with Z or an offset such as +01:00, or give a date"
        ));
    }
    Ok(Bound::Instant(parsed.ms))
}

/// The calls that count: those whose time lies between `since` and `until`, both included.
#[derive(Debug, Clone)]
pub struct TimeRange {
    pub since: Option<Bound>,
    pub until: Option<Bound>,
    pub zone: Zone,
}

impl TimeRange {
    /// Whether the range limits anything (a call without a time then does not count).
    pub fn is_limited(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether a call at `ms` (`None`: no known time) counts.
    pub fn contains(&self, ms: Option<i64>) -> bool {
        if !self.is_limited() {
            return true;
        }
        let Some(ms) = ms else {
            return false;
        };
        let day = |d: Date| (d.year(), d.month(), d.day());
        let after = match self.since {
            None => true,
            Some(Bound::Instant(t)) => ms >= t,
            Some(Bound::Day(y, m, d)) => day(self.zone.date_of(ms)) >= (y, m, d),
        };
        let before = match self.until {
            None => true,
            Some(Bound::Instant(t)) => ms <= t,
            Some(Bound::Day(y, m, d)) => day(self.zone.date_of(ms)) <= (y, m, d),
        };
        after && before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_in_three_forms() {
        assert_eq!(parse_bound("2026-03-01"), Ok(Bound::Day(2026, 3, 1)));
        assert_eq!(parse_bound("20260301"), Ok(Bound::Day(2026, 3, 1)));
        assert_eq!(
            parse_bound("2026-03-01T01:00:00+01:00"),
            Ok(Bound::Instant(
                time::parse_iso8601("2026-03-01T00:00:00Z").unwrap()
            ))
        );
        assert!(parse_bound("2026-03-01T01:00:00")
            .unwrap_err()
            .contains("no zone"));
        for bad in [
            "2026-02-30",
            "20261301",
            "yesterday",
            "2026-3-1",
            "+002026-03-01",
        ] {
            assert!(parse_bound(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn days_are_whole_days_in_the_zone_and_both_ends_count() {
        let ms = |s| time::parse_iso8601(s).unwrap();
        let r = TimeRange {
            since: Some(Bound::Day(2026, 3, 1)),
            until: Some(Bound::Day(2026, 3, 1)),
            zone: Zone::parse("+05:00").unwrap(),
        };
        // 2026-03-01 at +05:00 is 2026-02-28T19:00Z to 2026-03-01T18:59:59.999Z.
        assert!(r.contains(Some(ms("2026-02-28T19:00:00Z"))));
        assert!(r.contains(Some(ms("2026-03-01T18:59:59.999Z"))));
        assert!(!r.contains(Some(ms("2026-02-28T18:59:59.999Z"))));
        assert!(!r.contains(Some(ms("2026-03-01T19:00:00Z"))));
        assert!(!r.contains(None));
        let open = TimeRange {
            since: None,
            until: None,
            zone: Zone::Utc,
        };
        assert!(open.contains(None));
        let instant = TimeRange {
            since: Some(Bound::Instant(ms("2026-03-01T10:00:00Z"))),
            until: Some(Bound::Instant(ms("2026-03-01T11:00:00Z"))),
            zone: Zone::Utc,
        };
        assert!(instant.contains(Some(ms("2026-03-01T10:00:00Z"))));
        assert!(instant.contains(Some(ms("2026-03-01T11:00:00Z"))));
        assert!(!instant.contains(Some(ms("2026-03-01T11:00:00.001Z"))));
    }
}
