//! The usage report: calls come in, in input order, and are added into the groups the
//! dimensions make (and the grand total); repeats of calls already counted are left out.
//! Records are written as their groups are done: a session's when the next one begins, the
//! others at the end.

use super::args::Dim;
use super::calls::{BilledCall, CallTables, InputCalls, Lineage, SessionFacts};
use super::range::TimeRange;
use super::records::UsageRecord;
use super::sums::{key_label, label_of, GroupLabels, GroupUsage, KeyLabel};
use super::table;
use crate::calendar::Zone;
use crate::hash::{hash128, Hash128Set};
use crate::output::{Out, Stop};
use crate::record::Record;
use std::collections::BTreeMap;

/// A group's key: the values of the dimensions, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct GroupKey {
    /// Session occurrence (input order), 0 when sessions are not a dimension.
    session: u64,
    labels: Vec<KeyLabel>,
}

/// The report a run writes: its groups, the grand total, and the calls counted so far.
pub struct UsageReport {
    dims: Vec<Dim>,
    zone: Zone,
    /// The calls counted (--since, --until).
    range: TimeRange,
    dedup: bool,
    want_total: bool,
    table: bool,
    seen: Hash128Set,
    /// Ids of the sessions read so far, by their [`hash128`] (no copy of each id).
    seen_ids: Hash128Set,
    groups: BTreeMap<GroupKey, GroupUsage>,
    total: GroupUsage,
    next_session: u64,
    /// The groups written, with --table: the table's rows.
    rows: Vec<GroupUsage>,
    /// The input being read.
    file: String,
}

/// What decides a call's group besides its session: its time and its (provider, model).
#[derive(Clone, Copy)]
struct CallAt<'a> {
    ms: Option<i64>,
    model: (Option<&'a str>, Option<&'a str>),
}

/// A session the report is taking calls of, and its occurrence number (input order).
pub struct ReportedSession {
    occ: u64,
    facts: SessionFacts,
}

/// What the record of the group `key` says about it besides its sums.
fn labels(dims: &[Dim], key: &GroupKey, s: &SessionFacts, file: &str) -> GroupLabels {
    let mut l = GroupLabels::default();
    let mut vals = key.labels.iter().map(label_of);
    for d in dims {
        if *d == Dim::Session {
            l.session = crate::reader::session_id(&s.id).map(str::to_owned);
            l.file = Some(file.to_string());
            l.project = s.cwd.clone();
            l.parent_session = s.parent.clone();
            l.lineage = Some(s.lineage.name());
            continue;
        }
        let v = vals.next().flatten().map(str::to_string);
        match d {
            Dim::Session => {}
            Dim::Project => l.project = v,
            Dim::Provider => l.provider = v,
            Dim::Model => l.model = v,
            Dim::Day => l.day = v,
            Dim::Week => l.week = v,
            Dim::Month => l.month = v,
        }
    }
    l
}

impl UsageReport {
    pub fn new(
        dims: Vec<Dim>,
        zone: Zone,
        range: TimeRange,
        dedup: bool,
        want_total: bool,
        table: bool,
    ) -> UsageReport {
        UsageReport {
            dims,
            zone,
            range,
            dedup,
            want_total,
            table,
            seen: Hash128Set::default(),
            seen_ids: Hash128Set::default(),
            groups: BTreeMap::new(),
            total: GroupUsage::default(),
            next_session: 0,
            rows: Vec::new(),
            file: String::new(),
        }
    }

    /// The group of a call at `ms` of `model` (or of a session, `call` = `None`), created with
    /// its labels when new.
    fn group(&mut self, cur: &ReportedSession, call: Option<CallAt<'_>>) -> &mut GroupUsage {
        let date = call.and_then(|c| c.ms).map(|ms| self.zone.date_of(ms));
        let model = call.map(|c| c.model);
        let s = &cur.facts;
        let mut key = GroupKey {
            session: 0,
            labels: Vec::new(),
        };
        for d in &self.dims {
            match d {
                Dim::Session => key.session = cur.occ,
                Dim::Project => key.labels.push(key_label(s.cwd.as_deref())),
                Dim::Provider => key.labels.push(key_label(model.and_then(|m| m.0))),
                Dim::Model => key.labels.push(key_label(model.and_then(|m| m.1))),
                Dim::Day | Dim::Week | Dim::Month => {
                    let v = date.map(|dt| match d {
                        Dim::Day => dt.day_label(),
                        Dim::Week => dt.week_label(),
                        _ => dt.month_label(),
                    });
                    key.labels.push(key_label(v.as_deref()));
                }
            }
        }
        let dims = &self.dims;
        self.groups
            .entry(key)
            .or_insert_with_key(|key| GroupUsage::new(labels(dims, key, s, &self.file)))
    }

    /// The grand total of what was read so far.
    pub fn total(&self) -> &GroupUsage {
        &self.total
    }

    /// A new input named `file` begins.
    pub fn input(&mut self, file: &str) {
        file.clone_into(&mut self.file);
    }

    /// A session of the current input begins: it takes the calls that follow.
    pub fn session(&mut self, mut s: SessionFacts, out: &mut Out) -> Result<ReportedSession, Stop> {
        // A fork whose original is not among the FILE arguments may still have been read
        // before it (sessions back to back on stdin): Pi names a session file after its id.
        if s.lineage == Lineage::Unresolved
            && s.parent
                .as_deref()
                .and_then(session_id_of_path)
                .is_some_and(|id| self.seen_ids.contains(&hash128(id.as_bytes())))
        {
            s.lineage = Lineage::Resolved;
        }
        self.seen_ids.insert(hash128(s.id.as_bytes()));
        if self.dims.contains(&Dim::Session) {
            // A session's calls are all read once the next one begins: its groups are done.
            self.flush(out)?;
        }
        let cur = ReportedSession {
            occ: self.next_session,
            facts: s,
        };
        self.next_session += 1;
        if self.range.is_limited() {
            // A session counts only when one of its calls is in the range (see `call`).
            return Ok(cur);
        }
        self.total.enter(cur.occ, &cur.facts);
        if !self.dims.is_empty() && self.dims.iter().all(|d| d.session_level()) {
            self.group(&cur, None).enter(cur.occ, &cur.facts);
        }
        Ok(cur)
    }

    /// A call of session `cur` (`tables` are its input's).
    pub fn call(&mut self, cur: &ReportedSession, c: &BilledCall, tables: &CallTables) {
        if !self.range.contains(c.time.as_ref().map(|t| t.0)) {
            return;
        }
        self.total.enter(cur.occ, &cur.facts);
        let dup = self.dedup && c.identity.is_some_and(|h| !self.seen.insert(h));
        if !self.dims.is_empty() {
            let (p, m) = &tables.models[c.model as usize];
            let at = CallAt {
                ms: c.time.as_ref().map(|t| t.0),
                model: (p.as_deref(), m.as_deref()),
            };
            let g = self.group(cur, Some(at));
            g.enter(cur.occ, &cur.facts);
            g.add(c, dup, tables);
        }
        self.total.add(c, dup, tables);
    }

    /// Whether calls summed ahead by session and model (pi-usage's cache) can stand for the
    /// calls themselves: no call's time decides its group or whether it counts.
    pub fn takes_summed(&self) -> bool {
        !self.range.is_limited() && !self.dims.iter().any(|d| d.timed())
    }

    /// Whether repeats are left out (not --no-dedup).
    pub fn dedups(&self) -> bool {
        self.dedup
    }

    /// Makes room for `n` call identities (about as many as the inputs hold): the set of those
    /// seen is then sized once rather than grown (at most 2^22 at once, 64 MiB).
    pub fn expect_identities(&mut self, n: u64) {
        if self.dedup {
            self.seen.reserve(n.min(1 << 22) as usize);
        }
    }

    /// Makes room for the ids of `n` sessions (one per input, at least, for inputs that are
    /// files of sessions): the set of those seen is then sized once rather than grown (at most
    /// 2^20 at once).
    pub fn expect_sessions(&mut self, n: usize) {
        self.seen_ids.reserve(n.min(1 << 20));
    }

    /// Counts the identities `ids` (distinct) as seen and says `true` when none was seen
    /// before (or repeats are not left out); else counts none of them and says `false`: the
    /// input's calls must then be taken one by one.
    pub fn see_new(&mut self, ids: impl ExactSizeIterator<Item = u128> + Clone) -> bool {
        if !self.dedup {
            return true;
        }
        self.seen.reserve(ids.len());
        for (n, id) in ids.clone().enumerate() {
            if !self.seen.insert(id) {
                for undo in ids.take(n) {
                    self.seen.remove(&undo);
                }
                return false;
            }
        }
        true
    }

    /// Calls of session `cur` and of `model` summed ahead in input order ([`GroupUsage::add`]
    /// of each): added as the calls would be, when [`Self::takes_summed`] and their identities
    /// were new ([`Self::see_new`]).
    pub fn summed(
        &mut self,
        cur: &ReportedSession,
        model: (Option<&str>, Option<&str>),
        g: &GroupUsage,
    ) {
        self.total.enter(cur.occ, &cur.facts);
        if !self.dims.is_empty() {
            let group = self.group(cur, Some(CallAt { ms: None, model }));
            group.enter(cur.occ, &cur.facts);
            group.add_summed(model, g);
        }
        self.total.add_summed(model, g);
    }

    /// The current input ended.
    pub fn end_input(&mut self, out: &mut Out) -> Result<(), Stop> {
        if self.dims.contains(&Dim::Session) {
            self.flush(out)?;
        }
        Ok(())
    }

    /// The sessions and calls of one input, read in full.
    pub fn file(&mut self, input: InputCalls, out: &mut Out) -> Result<(), Stop> {
        self.input(&input.file);
        self.sessions(input.sessions, &input.calls, &input.tables, out)?;
        self.end_input(out)
    }

    /// Sessions of the current input and their calls, as kept by a job (`calls` point to
    /// `sessions` by index and into `tables`); the last session, which may go on taking
    /// calls (a large input handed over in the middle of its reading).
    pub fn sessions(
        &mut self,
        sessions: Vec<SessionFacts>,
        calls: &[(u32, BilledCall)],
        tables: &CallTables,
        out: &mut Out,
    ) -> Result<Option<ReportedSession>, Stop> {
        let mut calls = calls.iter().peekable();
        let mut last = None;
        for (index, s) in sessions.into_iter().enumerate() {
            let session = self.session(s, out)?;
            while let Some((_, c)) = calls.next_if(|(i, _)| *i as usize == index) {
                self.call(&session, c, tables);
            }
            last = Some(session);
        }
        Ok(last)
    }

    /// Writes the groups done (or keeps them as rows of the table).
    fn flush(&mut self, out: &mut Out) -> Result<(), Stop> {
        let groups = std::mem::take(&mut self.groups);
        for (_, g) in groups {
            if self.table {
                self.rows.push(g);
            } else {
                UsageRecord {
                    group: &g,
                    grand_total: false,
                }
                .write(out)?;
            }
        }
        Ok(())
    }

    /// Every input was read: the groups left, then the table or the grand total.
    pub fn finish(&mut self, out: &mut Out) -> Result<(), Stop> {
        self.flush(out)?;
        if self.table {
            let show_total = self.want_total || self.rows.len() != 1;
            let text = table::render(
                &self.dims,
                &mut self.rows,
                &self.total,
                show_total,
                &self.zone,
                crate::view::width::columns(),
            );
            return out.raw(text.as_bytes());
        }
        if self.want_total {
            UsageRecord {
                group: &self.total,
                grand_total: true,
            }
            .write(out)?;
        }
        Ok(())
    }
}

/// The session id in a Pi session file name, `<time>_<id>.jsonl` (the whole stem when it
/// has no `_`).
fn session_id_of_path(p: &str) -> Option<&str> {
    let name = p.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let id = stem.rsplit_once('_').map_or(stem, |(_, id)| id);
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_from_pi_file_names() {
        let p = "/home/u/.pi/agent/sessions/--x--/2026-04-21T08-59-18-596Z_cb9b4411-f084.jsonl";
        assert_eq!(session_id_of_path(p), Some("cb9b4411-f084"));
        assert_eq!(session_id_of_path(r"C:\s\a_b.jsonl"), Some("b"));
        assert_eq!(session_id_of_path("plain.jsonl"), Some("plain"));
        assert_eq!(session_id_of_path("/x/"), None);
    }
}
