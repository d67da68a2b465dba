//! Reading the members pi-compactions needs from an entry: pure functions of its bytes (the
//! one diagnostic, for a `tokensBefore` that is not a count, goes to the [`Diags`] given).

use super::records::{SummaryFacts, SummaryUsage};
use super::trigger::ReplyUsage;
use crate::diag::{Diags, Kind};
use crate::json::{member_named, Raw};
use crate::kinds::FROM_EXTENSION_KEYS;
use crate::message::{token_value, Message};
use crate::reader::Entry;
use std::borrow::Cow;

/// The string a member holds, decoded.
pub(super) fn str_of(raw: Option<Raw<'_>>) -> Option<Cow<'_, str>> {
    raw.and_then(Raw::as_str)
}

/// The string a member holds, for telling names apart: its bytes as written when it has no
/// escape (not checked as UTF-8: text that is not cannot equal a name), else decoded as
/// [`str_of`] decodes it. Spares decoding a role or stop reason on every message.
pub(super) fn name_of(raw: Option<Raw<'_>>) -> Option<Cow<'_, [u8]>> {
    let raw = raw?;
    match raw.bytes() {
        [b'"', body @ .., b'"'] if !body.contains(&b'\\') => Some(Cow::Borrowed(body)),
        _ => raw.as_str().map(|s| match s {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }),
    }
}

/// The counts of an assistant message's `usage` that pi-compactions reads, read in one pass
/// over its members (the last of repeated members wins, as `JSON.parse` keeps): each `None`
/// when absent or not a count (`1e3` is 1000, as pi-usage reads counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct UsageCounts {
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    total_tokens: Option<u64>,
}

impl UsageCounts {
    /// The counts of the message's `usage` (all `None` when there is none), its members as
    /// the reader noted them when it did ([`Message::for_each_usage_field`]).
    pub(super) fn of(m: &Message<'_>) -> UsageCounts {
        // [input, output, cacheRead, cacheWrite, totalTokens]
        let mut values: [Option<Raw<'_>>; 5] = [None; 5];
        m.for_each_usage_field(|k, v| {
            let slot = member_named(k, |name| match name {
                b"input" => Some(0),
                b"output" => Some(1),
                b"cacheRead" => Some(2),
                b"cacheWrite" => Some(3),
                b"totalTokens" => Some(4),
                _ => None,
            });
            if let Some(i) = slot {
                values[i] = Some(v);
            }
        });
        let [iv, ov, rv, wv, tv] = values.map(|v| v.and_then(|v| token_value(v).ok().flatten()));
        UsageCounts {
            input: iv,
            output: ov,
            cache_read: rv,
            cache_write: wv,
            total_tokens: tv,
        }
    }

    /// The recorded context size: `None` when none of input, cacheRead and cacheWrite is a
    /// count, or when they sum to zero (a member that is not a count counts as zero).
    pub(super) fn context(&self) -> Option<u128> {
        let (i, r, w) = (self.input, self.cache_read, self.cache_write);
        if i.is_none() && r.is_none() && w.is_none() {
            return None;
        }
        // input + cacheRead + cacheWrite, exact: the sum may pass u64::MAX (issue 19, item 2).
        let sum: u128 = [i, r, w].iter().map(|v| u128::from(v.unwrap_or(0))).sum();
        (sum > 0).then_some(sum)
    }

    /// The token counts as Pi reads them (a count that is absent or invalid is 0).
    pub(super) fn reply(&self) -> ReplyUsage {
        ReplyUsage {
            input: self.input.unwrap_or(0),
            output: self.output.unwrap_or(0),
            cache_read: self.cache_read.unwrap_or(0),
            cache_write: self.cache_write.unwrap_or(0),
            total_tokens: self.total_tokens.unwrap_or(0),
        }
    }
}

/// The counts of `usage` (all `None` when there is none), walked.
#[cfg(test)]
fn usage_counts(usage: Option<Raw<'_>>) -> UsageCounts {
    UsageCounts::of(&Message {
        usage,
        ..Message::default()
    })
}

/// The recorded context size of an assistant message's usage ([`UsageCounts::context`]).
#[cfg(test)]
fn usage_context(usage: Option<Raw<'_>>) -> Option<u128> {
    usage_counts(usage).context()
}

/// The token counts of an assistant message's `usage` as Pi reads them
/// ([`UsageCounts::reply`]).
#[cfg(test)]
fn reply_usage(usage: Option<Raw<'_>>) -> ReplyUsage {
    usage_counts(usage).reply()
}

/// The strings of a JSON array (other elements left out); `None` when `raw` is no array.
fn string_list(raw: Option<Raw<'_>>) -> Option<Vec<String>> {
    let raw = raw.filter(|r| r.first() == Some(&b'['))?;
    let mut v = Vec::new();
    raw.for_each_element(|e| {
        if let Some(s) = e.as_str() {
            v.push(s.into_owned());
        }
    });
    Some(v)
}

/// An entry's `details`, when it is an object.
pub(super) fn details<'a>(e: &Entry<'a>) -> Option<Raw<'a>> {
    e.get("details").filter(|d| d.first() == Some(&b'{'))
}

/// What a compaction or branch_summary entry records of its summary (the text only when
/// `keep_text`) and of the files (from its `details`).
pub(super) fn summary_facts(
    e: &Entry<'_>,
    details: Option<Raw<'_>>,
    keep_text: bool,
    d: &mut Diags,
) -> SummaryFacts {
    let summary = e.str("summary");
    let (from_hook, from_hook_key) = from_hook(e, d);
    SummaryFacts {
        bytes: summary.as_ref().map(|t| t.len() as u64),
        text: if keep_text {
            summary.map(Cow::into_owned)
        } else {
            None
        },
        read_files: details.and_then(|d| string_list(d.get("readFiles"))),
        modified_files: details.and_then(|d| string_list(d.get("modifiedFiles"))),
        from_hook,
        from_hook_key,
        usage: e.get("usage").and_then(summary_usage),
    }
}

/// The `usage` of a compaction or branch_summary entry (Pi 1.x: the summarization's call):
/// `None` unless it is an object. A member that is not a count is null (pi-usage reports it);
/// the cost is `cost.total` as written, when it is a non-negative number.
fn summary_usage(u: Raw<'_>) -> Option<SummaryUsage> {
    if u.first() != Some(&b'{') {
        return None;
    }
    let count = |key: &str| u.get(key).and_then(|v| token_value(v).ok().flatten());
    let cost = u
        .get("cost")
        .and_then(|c| c.get("total"))
        .filter(|t| t.first().is_some_and(u8::is_ascii_digit));
    Some(SummaryUsage {
        input: count("input"),
        output: count("output"),
        cache_read: count("cacheRead"),
        cache_write: count("cacheWrite"),
        total_tokens: count("totalTokens"),
        cost: cost.map(|c| c.bytes().to_vec()),
    })
}

/// The size in bytes of a compaction's `systemMessage` as written (Pi 1.x: the prompt and
/// tool checkpoint at the boundary); `None` when absent or null. Its text is never read.
pub(super) fn system_message_bytes(e: &Entry<'_>) -> Option<u64> {
    e.get("systemMessage")
        .filter(|m| !m.is_null())
        .map(|m| m.len() as u64)
}

/// Whether an extension wrote an entry, as recorded ([`FROM_EXTENSION_KEYS`]: Pi's
/// `fromHook`, else oh-my-pi's `fromExtension`), and the key it was read from. `None` when
/// both are absent or null, and when the value is not a boolean (which is reported, as other
/// bad fields are: issue 19, item 11).
fn from_hook(e: &Entry<'_>, d: &mut Diags) -> (Option<bool>, &'static str) {
    let Some((key, raw)) = FROM_EXTENSION_KEYS
        .into_iter()
        .find_map(|k| e.get(k).filter(|v| !v.is_null()).map(|v| (k, v)))
    else {
        return (None, "fromHook");
    };
    let b = raw.as_bool();
    if b.is_none() {
        d.report(
            Some(e.line.no),
            Kind::BadField,
            format!(
                "{} {key} is a {}, not a boolean; treated as unknown",
                e.kind().as_deref().unwrap_or("entry"),
                raw.kind_name()
            ),
        );
    }
    (b, key)
}

/// A compaction's `firstKeptEntryIndex` (v1): `None` when absent or null, and when it is not
/// a count (which is reported, as other bad fields are: issue 19, item 11).
pub(super) fn first_kept_index(e: &Entry<'_>, d: &mut Diags) -> Option<u64> {
    let raw = e.get("firstKeptEntryIndex").filter(|v| !v.is_null())?;
    let n = token_value(raw);
    if let Err(why) = &n {
        d.report(
            Some(e.line.no),
            Kind::BadField,
            format!("compaction firstKeptEntryIndex {why}; treated as unknown"),
        );
    }
    n.ok().flatten()
}

/// A compaction's count `name` (`tokensBefore`; oh-my-pi's `tokensAfter`): `None` when absent
/// or null, and when it is not a count (which is reported).
pub(super) fn recorded_count(e: &Entry<'_>, name: &str, d: &mut Diags) -> Option<u64> {
    match e.get(name) {
        None => None,
        Some(raw) if raw.is_null() => None,
        Some(raw) => {
            let n = token_value(raw);
            if let Err(why) = &n {
                d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!("compaction {name} {why}; treated as unknown"),
                );
            }
            n.ok().flatten()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// Issue 20: a name is read as written when it has no escape, decoded when it has one;
    /// anything but a string is no name.
    #[test]
    fn names_as_written_or_decoded() {
        let n =
            |s: &str| name_of(Some(json::validate(s.as_bytes()).unwrap())).map(|b| b.into_owned());
        assert_eq!(n(r#""assistant""#).as_deref(), Some(&b"assistant"[..]));
        assert_eq!(n(r#""assist\u0061nt""#).as_deref(), Some(&b"assistant"[..]));
        assert_eq!(n(r#""""#).as_deref(), Some(&b""[..]));
        assert_eq!(n("1"), None);
        assert_eq!(n("null"), None);
        assert_eq!(name_of(None), None);
    }

    #[test]
    fn context_is_input_plus_cache_and_never_zero() {
        let c = |u: &str| usage_context(Some(json::validate(u.as_bytes()).unwrap()));
        assert_eq!(
            c(r#"{"input":3000,"output":9,"cacheRead":0,"cacheWrite":1000}"#),
            Some(4000)
        );
        assert_eq!(c(r#"{"input":0,"cacheRead":0}"#), None);
        assert_eq!(c(r#"{"output":5}"#), None);
        assert_eq!(c(r#"{"input":"x","cacheRead":7}"#), Some(7));
        assert_eq!(
            c(r#"{"input":1,"input":2}"#),
            Some(2),
            "the last member wins"
        );
        assert_eq!(usage_context(None), None);
    }

    #[test]
    fn summary_usage_reads_counts_and_the_recorded_cost() {
        let u = |t: &'static str| summary_usage(json::validate(t.as_bytes()).unwrap());
        let full = u(r#"{"input":10,"output":2,"cacheRead":0,"cacheWrite":3,"totalTokens":15,"cost":{"total":0.25}}"#)
            .unwrap();
        assert_eq!(
            (
                full.input,
                full.output,
                full.cache_read,
                full.cache_write,
                full.total_tokens
            ),
            (Some(10), Some(2), Some(0), Some(3), Some(15))
        );
        assert_eq!(full.cost.as_deref(), Some(&b"0.25"[..]));
        let odd = u(r#"{"input":"x","output":-1,"cost":{"total":-2}}"#).unwrap();
        assert_eq!((odd.input, odd.output, odd.cost), (None, None, None));
        assert!(u("null").is_none() && u("[1]").is_none());
    }

    #[test]
    fn reply_usage_reads_every_count_in_one_pass() {
        let u = |t: &'static str| reply_usage(Some(json::validate(t.as_bytes()).unwrap()));
        let r =
            u(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":0,"input":5}"#);
        assert_eq!(
            (r.input, r.output, r.cache_read, r.cache_write),
            (5, 2, 3, 4)
        );
        assert_eq!(r.pi_context(), 14, "totalTokens 0: the sum");
        assert_eq!(r.input_read(), 8);
        assert_eq!(u(r#"{"totalTokens":9,"input":"x"}"#).pi_context(), 9);
        assert_eq!(reply_usage(None), ReplyUsage::default());
    }

    #[test]
    fn string_lists_keep_only_strings() {
        let list = |text: &'static [u8]| string_list(Some(json::validate(text).unwrap()));
        assert_eq!(
            list(br#"["a",1,"b"]"#),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(list(b"{}"), None);
        assert_eq!(string_list(None), None);
    }
}
