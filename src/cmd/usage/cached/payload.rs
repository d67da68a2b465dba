//! What pi-usage's cache keeps of a file (format 2): a *summary* in the index, which a run that
//! finds the file unchanged reads where it lies, and the *details*, the calls one by one, in
//! the details files ([`crate::cache`]).
//!
//! The summary: the sessions (id, cwd, parent), the tables the calls point into (models, names
//! of other usage fields, kinds of usage entries), the resume point of a file that may grow,
//! and the calls *summed ahead*: per session and model, the [`GroupUsage`] that adding each of
//! its calls in input order gives (repeats within the file left out and counted), with the
//! file's distinct call identities as a sorted array of 16-byte numbers. When the report's
//! groups depend on nothing of a call but its session and model, and none of the file's
//! identities was seen in an earlier input, the sums stand for the calls; else the calls are
//! read from the details.
//!
//! The sums are exact (token counts and costs as the report keeps them). They are kept only when
//! adding them is exactly adding the calls: not when two calls of the file at one time write it
//! two ways (which of them is a group's first or last would depend on the order the sums are
//! added in).

use super::Resume;
use crate::cache::codec::{Reader, Writer};
use crate::cmd::usage::calls::{
    BilledCall, CallSource, CallTables, InputCalls, Lineage, SessionFacts, TimeText,
};
#[cfg(test)]
use crate::cmd::usage::decimal::format_decimal;
use crate::cmd::usage::decimal::{parse_cost, Amount, Cost};
use crate::cmd::usage::sums::{key_label, label_of, GroupUsage, Sums};
use crate::hash::Hash128Set;
use std::collections::BTreeMap;

/// The summary's flag: the sums are kept (they stand for the calls).
const SUMMED: u8 = 1;
/// The summary's flag: a call identity repeats within the file.
const REPEATS: u8 = 2;

/// The sums of a file's calls by session and model: (session, model, the sums).
pub type SessionSums = Vec<(u32, u32, GroupUsage)>;

/// A summary as a run that takes the sums reads it: the strings where they lie.
pub struct Summary<'c> {
    pub sessions: Vec<SessionFacts>,
    pub models: Vec<(Option<&'c str>, Option<&'c str>)>,
    /// Whether a call identity repeats within the file (the sums left the repeats out).
    pub repeats: bool,
    /// (session, model, the sums of its calls), by session.
    pub sums: SessionSums,
    /// The file's distinct call identities, 16 bytes each (little-endian), sorted.
    pub identities: &'c [u8],
}

impl Summary<'_> {
    /// The identities, as numbers.
    pub fn identities(&self) -> impl ExactSizeIterator<Item = u128> + Clone + '_ {
        identities(self.identities)
    }
}

/// The identities of a summary's array of them, as numbers.
pub fn identities(array: &[u8]) -> impl ExactSizeIterator<Item = u128> + Clone + '_ {
    array
        .chunks_exact(16)
        .map(|c| u128::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// The summary of the calls `c` of a file, and its resume point; and its weight, how many
/// distinct identities it holds.
pub fn encode_summary(c: &InputCalls, resume: Option<&Resume>) -> (Vec<u8>, u64) {
    let mut w = Writer::default();
    w.var(c.sessions.len() as u64);
    for s in &c.sessions {
        w.str(&s.id);
        w.opt_str(s.cwd.as_deref());
        w.opt_str(s.parent.as_deref());
    }
    let t = &c.tables;
    w.var(t.models.len() as u64);
    for (p, m) in &t.models {
        w.opt_str(p.as_deref());
        w.opt_str(m.as_deref());
    }
    w.var(t.names.len() as u64);
    for n in &t.names {
        w.str(n);
    }
    w.var(t.kinds.len() as u64);
    for k in &t.kinds {
        w.opt_str(k.as_deref());
    }
    w.opt(resume, |w, r| {
        for v in [
            r.header_no,
            r.header_offset,
            r.header_len,
            r.header_hash,
            r.lines,
        ] {
            w.u64(v);
        }
    });
    let (sums, identities, repeats) = summed(c);
    let exact = times_agree(c);
    w.u8(if exact { SUMMED } else { 0 } | if repeats { REPEATS } else { 0 });
    if exact {
        w.var(sums.len() as u64);
        for ((session, model), g) in &sums {
            w.var(u64::from(*session));
            w.var(u64::from(*model));
            encode_group(&mut w, g);
        }
    }
    w.var(identities.len() as u64);
    for id in &identities {
        w.u128(*id);
    }
    (w.0, identities.len() as u64)
}

/// The calls of `c` summed by session and model as the report adds them (repeats within the
/// file left out), the distinct identities sorted, and whether any repeats.
fn summed(c: &InputCalls) -> (BTreeMap<(u32, u32), GroupUsage>, Vec<u128>, bool) {
    let mut seen = Hash128Set::default();
    let mut repeats = false;
    let mut sums: BTreeMap<(u32, u32), GroupUsage> = BTreeMap::new();
    for (session, call) in &c.calls {
        let dup = call.identity.is_some_and(|h| !seen.insert(h));
        repeats |= dup;
        let g = sums.entry((*session, call.model)).or_default();
        g.add(call, dup, &c.tables);
    }
    let mut identities: Vec<u128> = seen.into_iter().collect();
    identities.sort_unstable();
    (sums, identities, repeats)
}

/// Whether no two calls of `c` at one time write it two ways.
fn times_agree(c: &InputCalls) -> bool {
    let mut times: Vec<(i64, &str)> = (c.calls.iter())
        .filter_map(|(_, call)| call.time.as_ref().map(|(ms, t)| (*ms, t.as_str())))
        .collect();
    times.sort_unstable();
    times
        .windows(2)
        .all(|w| w[0].0 != w[1].0 || w[0].1 == w[1].1)
}

fn encode_group(w: &mut Writer, g: &GroupUsage) {
    for s in [
        &g.messages,
        &g.summarization,
        &g.usage_entries,
        &g.tool_results,
        &g.subagents,
    ] {
        encode_sums(w, s);
    }
    w.var(g.usage_kinds.len() as u64);
    for (kind, s) in &g.usage_kinds {
        w.opt_str(label_of(kind));
        encode_sums(w, s);
    }
    w.var(g.nested_calls);
    w.var(g.nested_calls_incomplete);
    for t in [&g.first, &g.last] {
        w.opt(t.as_ref(), |w, (ms, text)| {
            w.i64(*ms);
            w.str(text.as_str());
        });
    }
    w.var(g.duplicates);
}

/// A [`Sums`]; an empty one in a byte.
fn encode_sums(w: &mut Writer, s: &Sums) {
    let empty = *s == Sums::default();
    w.opt((!empty).then_some(s), |w, s| {
        w.var(s.count);
        for v in [
            s.input,
            s.output,
            s.cache_read,
            s.cache_write,
            s.total_tokens,
        ] {
            w.var128(v);
        }
        w.var(s.total_tokens_computed);
        w.var128(s.reasoning);
        w.var(s.reasoning_calls);
        w.var128(s.cache_write_1h);
        w.var(s.cache_write_1h_calls);
        encode_amount(w, &s.cost);
        w.var(s.cost_missing);
        encode_amount(w, &s.cost_from_provider);
        w.var(s.cost_from_provider_calls);
        w.var(s.other.len() as u64);
        for (name, v) in &s.other {
            w.str(name);
            w.var128(*v);
        }
    });
}

fn encode_amount(w: &mut Writer, a: &Amount) {
    let (lo, hi, fine) = a.to_parts();
    w.var128(lo);
    w.var(hi);
    w.opt(fine, |w, (places, units)| {
        w.var(u64::from(places));
        w.bytes(&units);
    });
}

fn decode_amount(r: &mut Reader<'_>) -> Option<Amount> {
    let (lo, hi) = (r.var128()?, r.var()?);
    let fine = r.opt(|r| Some((u32::try_from(r.var()?).ok()?, r.bytes()?)))?;
    Amount::from_parts(lo, hi, fine)
}

/// The summary in `bytes` as a run that takes the sums reads it, its sums decoded into `sums`
/// (emptied first; its room used again); `None` when it keeps no sums (or is damaged).
pub fn summary(bytes: &[u8], mut sums: SessionSums) -> Option<Summary<'_>> {
    let mut r = Reader::new(bytes);
    let sessions = sessions(&mut r)?;
    let mut models = Vec::with_capacity(r.count(2)?);
    for _ in 0..models.capacity() {
        models.push((r.opt(Reader::str)?, r.opt(Reader::str)?));
    }
    // The tables only the calls point into: passed over, not read as text.
    for _ in 0..r.count(1)? {
        r.bytes()?;
    }
    for _ in 0..r.count(1)? {
        r.opt(Reader::bytes)?;
    }
    resume(&mut r)?;
    let flags = r.u8()?;
    if flags & SUMMED == 0 {
        return None;
    }
    let n = r.count(6)?;
    sums.clear();
    sums.reserve(n);
    for _ in 0..n {
        let session = index(&mut r, sessions.len())?;
        let model = index(&mut r, models.len())?;
        // Decoded where it is kept: a group is ~1.4 KB, moved several times when returned.
        sums.push((session, model, GroupUsage::default()));
        decode_group(&mut r, &mut sums.last_mut()?.2)?;
    }
    let n = r.count(16)?;
    let identities = r.raw(n * 16)?;
    r.is_empty().then_some(Summary {
        sessions,
        models,
        repeats: flags & REPEATS != 0,
        sums,
        identities,
    })
}

fn sessions(r: &mut Reader<'_>) -> Option<Vec<SessionFacts>> {
    let n = r.count(3)?;
    let mut sessions = Vec::with_capacity(n);
    for _ in 0..n {
        sessions.push(SessionFacts {
            id: r.string()?,
            cwd: r.opt_string()?,
            parent: r.opt_string()?,
            lineage: Lineage::None,
        });
    }
    Some(sessions)
}

fn resume(r: &mut Reader<'_>) -> Option<Option<Resume>> {
    r.opt(|r| {
        Some(Resume {
            header_no: r.u64()?,
            header_offset: r.u64()?,
            header_len: r.u64()?,
            header_hash: r.u64()?,
            lines: r.u64()?,
        })
    })
}

/// Decodes a group's sums into `g` (a new group).
fn decode_group(r: &mut Reader<'_>, g: &mut GroupUsage) -> Option<()> {
    for s in [
        &mut g.messages,
        &mut g.summarization,
        &mut g.usage_entries,
        &mut g.tool_results,
        &mut g.subagents,
    ] {
        decode_sums(r, s)?;
    }
    for _ in 0..r.count(2)? {
        let kind = key_label(r.opt(Reader::str)?);
        let mut s = Sums::default();
        decode_sums(r, &mut s)?;
        g.usage_kinds.insert(kind, s);
    }
    g.nested_calls = r.var()?;
    g.nested_calls_incomplete = r.var()?;
    let time = |r: &mut Reader<'_>| r.opt(|r| Some((r.i64()?, TimeText::new(r.str()?))));
    g.first = time(r)?;
    g.last = time(r)?;
    g.duplicates = r.var()?;
    Some(())
}

/// Decodes sums into `s` (new sums: left as they are when none were kept).
fn decode_sums(r: &mut Reader<'_>, s: &mut Sums) -> Option<()> {
    r.opt(|r| {
        s.count = r.var()?;
        s.input = r.var128()?;
        s.output = r.var128()?;
        s.cache_read = r.var128()?;
        s.cache_write = r.var128()?;
        s.total_tokens = r.var128()?;
        s.total_tokens_computed = r.var()?;
        s.reasoning = r.var128()?;
        s.reasoning_calls = r.var()?;
        s.cache_write_1h = r.var128()?;
        s.cache_write_1h_calls = r.var()?;
        s.cost = decode_amount(r)?;
        s.cost_missing = r.var()?;
        s.cost_from_provider = decode_amount(r)?;
        s.cost_from_provider_calls = r.var()?;
        for _ in 0..r.count(2)? {
            s.other.insert(r.str()?.into(), r.var128()?);
        }
        Some(())
    })?;
    Some(())
}

/// The sessions and tables of a summary (the calls empty, the file's name empty, every
/// lineage `None`) and its resume point; `None` when it is damaged.
pub fn decode_tables(bytes: &[u8]) -> Option<(InputCalls, Option<Resume>)> {
    let mut r = Reader::new(bytes);
    let mut c = InputCalls {
        sessions: sessions(&mut r)?,
        ..InputCalls::default()
    };
    // Each name is interned where it was: the indexes the calls hold stay right.
    let t = &mut c.tables;
    for i in 0..r.count(2)? {
        let (p, m) = (r.opt(Reader::str)?, r.opt(Reader::str)?);
        (t.model(p, m) as usize == i).then_some(())?;
    }
    for i in 0..r.count(1)? {
        (t.name(r.str()?) as usize == i).then_some(())?;
    }
    for i in 0..r.count(1)? {
        (t.kind(r.opt(Reader::str)?) as usize == i).then_some(())?;
    }
    Some((c, resume(&mut r)?))
}

/// The details of the calls `c`: each call with its session.
pub fn encode_details(c: &InputCalls) -> Vec<u8> {
    let mut w = Writer::default();
    w.var(c.calls.len() as u64);
    for (session, call) in &c.calls {
        w.var(u64::from(*session));
        encode_call(&mut w, call);
    }
    w.0
}

/// Reads the details `bytes` into `c`, whose sessions and tables they point into; `None` when
/// they are damaged.
pub fn decode_details(bytes: &[u8], c: &mut InputCalls) -> Option<()> {
    let mut r = Reader::new(bytes);
    let n = r.count(30)?;
    c.calls.reserve_exact(n);
    for _ in 0..n {
        let session = index(&mut r, c.sessions.len())?;
        let call = decode_call(&mut r, &c.tables)?;
        c.calls.push((session, call));
    }
    r.is_empty().then_some(())
}

fn encode_call(w: &mut Writer, c: &BilledCall) {
    match c.source {
        CallSource::Message => w.u8(0),
        CallSource::Summarization => w.u8(1),
        CallSource::UsageEntry(k) => {
            w.u8(2);
            w.var(u64::from(k));
        }
        CallSource::ToolResult => w.u8(3),
        CallSource::SubagentTask => w.u8(4),
    }
    w.var(u64::from(c.model));
    w.opt(c.time.as_ref(), |w, (ms, text)| {
        w.i64(*ms);
        w.str(text.as_str());
    });
    w.opt(c.identity, Writer::u128);
    for t in c.tokens {
        w.var(t);
    }
    w.var128(c.total_tokens);
    w.bool(c.total_computed);
    w.opt_var(c.reasoning);
    w.opt_var(c.cache_write_1h);
    w.opt(c.cost.as_ref(), |w, cost| match cost {
        Cost::Units(v) => {
            w.u8(0);
            w.var128(*v);
        }
        fine => {
            w.u8(1);
            w.str(&fine.to_text());
        }
    });
    w.bool(c.cost_from_provider);
    w.opt(c.nested, |w, (n, incomplete)| {
        w.var(n);
        w.bool(incomplete);
    });
    w.var(c.other.len() as u64);
    for (name, v) in &c.other {
        w.var(u64::from(*name));
        w.var(*v);
    }
}

/// An index into a table of `len` items.
fn index(r: &mut Reader<'_>, len: usize) -> Option<u32> {
    r.var()
        .filter(|&i| i < len as u64)
        .and_then(|i| u32::try_from(i).ok())
}

/// One call, its indexes checked against `tables`.
fn decode_call(r: &mut Reader<'_>, tables: &CallTables) -> Option<BilledCall> {
    let source = match r.u8()? {
        0 => CallSource::Message,
        1 => CallSource::Summarization,
        2 => CallSource::UsageEntry(index(r, tables.kinds.len())?),
        3 => CallSource::ToolResult,
        4 => CallSource::SubagentTask,
        _ => return None,
    };
    let model = index(r, tables.models.len())?;
    let time = r.opt(|r| Some((r.i64()?, TimeText::new(r.str()?))))?;
    let identity = r.opt(Reader::u128)?;
    let tokens = [r.var()?, r.var()?, r.var()?, r.var()?];
    let total_tokens = r.var128()?;
    let total_computed = r.bool()?;
    let reasoning = r.opt_var()?;
    let cache_write_1h = r.opt_var()?;
    let cost = r.opt(|r| match r.u8()? {
        0 => Some(Cost::Units(r.var128()?)),
        1 => parse_cost(r.str()?.as_bytes()).ok(),
        _ => None,
    })?;
    let cost_from_provider = r.bool()?;
    let nested = r.opt(|r| Some((r.var()?, r.bool()?)))?;
    let n = r.count(2)?;
    let mut other = Vec::with_capacity(n);
    for _ in 0..n {
        other.push((index(r, tables.names.len())?, r.var()?));
    }
    Some(BilledCall {
        source,
        model,
        time,
        identity,
        tokens,
        total_tokens,
        total_computed,
        reasoning,
        cache_write_1h,
        cost,
        cost_from_provider,
        nested,
        other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(model: u32, ms: i64, time: &str, identity: u128, cost: Cost) -> BilledCall {
        BilledCall {
            source: CallSource::Message,
            model,
            time: Some((ms, TimeText::new(time))),
            identity: Some(identity),
            tokens: [1, 2, 3, 4],
            total_tokens: 10,
            total_computed: false,
            reasoning: None,
            cache_write_1h: None,
            cost: Some(cost),
            cost_from_provider: false,
            nested: None,
            other: Vec::new(),
        }
    }

    fn input(calls: Vec<BilledCall>) -> InputCalls {
        let mut c = InputCalls::default();
        c.tables.model(Some("p"), Some("m1"));
        c.tables.model(Some("p"), Some("m2"));
        c.sessions.push(SessionFacts {
            id: "s".into(),
            cwd: None,
            parent: None,
            lineage: Lineage::None,
        });
        c.calls = calls.into_iter().map(|call| (0, call)).collect();
        c
    }

    #[test]
    fn the_sums_read_back_with_the_identities_sorted_and_repeats_left_out() {
        let c = input(vec![
            call(1, 5, "t5", 9, Cost::Units(3)),
            call(0, 1, "t1", 4, Cost::Units(1)),
            call(0, 1, "t1", 4, Cost::Units(1)),
        ]);
        let (bytes, weight) = encode_summary(&c, None);
        let s = summary(&bytes, Vec::new()).expect("summed");
        assert!(s.repeats);
        assert_eq!(s.identities().collect::<Vec<_>>(), vec![4, 9]);
        assert_eq!(weight, 2);
        assert_eq!(
            s.models,
            vec![(Some("p"), Some("m1")), (Some("p"), Some("m2"))]
        );
        let by_model: Vec<(u32, u64, u64, String)> = (s.sums.iter())
            .map(|(_, m, g)| {
                (
                    *m,
                    g.messages.count,
                    g.duplicates,
                    format_decimal(&g.messages.cost),
                )
            })
            .collect();
        let cost = |units: &str| format!("0.{units:0>18}").trim_end_matches('0').to_string();
        assert_eq!(by_model, vec![(0, 1, 1, cost("1")), (1, 1, 0, cost("3"))]);
        // The calls read back from the details, as they were.
        let (mut back, resume) = decode_tables(&bytes).unwrap();
        assert!(resume.is_none());
        decode_details(&encode_details(&c), &mut back).unwrap();
        assert_eq!(back.calls.len(), 3);
        assert_eq!(encode_details(&back), encode_details(&c));
    }

    #[test]
    fn no_sums_are_kept_where_adding_them_is_not_adding_the_calls() {
        // One instant written two ways.
        let two_ways = input(vec![
            call(0, 1, "2026-01-01T00:00:00Z", 1, Cost::Units(1)),
            call(1, 1, "2026-01-01T00:00:00.000Z", 2, Cost::Units(1)),
        ]);
        assert!(summary(&encode_summary(&two_ways, None).0, Vec::new()).is_none());
        // Still the tables for the calls.
        assert!(decode_tables(&encode_summary(&two_ways, None).0).is_some());
    }

    #[test]
    fn cost_sums_finer_than_1e_18_read_back_exactly() {
        let cost = |t: &str| parse_cost(t.as_bytes()).unwrap();
        let c = input(vec![
            call(0, 1, "t1", 1, cost("0.0010530000000000001")),
            call(0, 2, "t2", 2, cost("1e-19")),
            call(
                0,
                3,
                "t3",
                3,
                cost("340282366920938463463.374607431768211455"),
            ),
            call(
                0,
                4,
                "t4",
                4,
                cost("340282366920938463463.374607431768211455"),
            ),
        ]);
        let (bytes, _) = encode_summary(&c, None);
        let s = summary(&bytes, Vec::new()).expect("summed");
        let mut want = Amount::default();
        for (_, call) in &c.calls {
            want.add(call.cost.as_ref().unwrap());
        }
        assert_eq!(
            format_decimal(&s.sums[0].2.messages.cost),
            format_decimal(&want)
        );
        assert_eq!(s.sums[0].2.messages.cost, want);
    }
}
