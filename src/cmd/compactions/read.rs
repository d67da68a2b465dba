//! Reading the members pi-compactions needs from an entry: pure functions of its bytes (the
//! one diagnostic, for a `tokensBefore` that is not a count, goes to the [`Diags`] given).

use super::records::SummaryFacts;
use crate::diag::{Diags, Kind};
use crate::json;
use crate::message;
use crate::reader::Entry;
use std::borrow::Cow;

/// The string a raw member holds, decoded.
pub(super) fn str_of(raw: Option<&[u8]>) -> Option<Cow<'_, str>> {
    raw.and_then(json::as_str)
}

/// The recorded context size of an assistant message's usage: `None` when none of input,
/// cacheRead and cacheWrite is a count, or when they sum to zero (a member that is not a
/// count counts as zero).
pub(super) fn usage_context(usage: Option<&[u8]>) -> Option<u64> {
    let u = usage?;
    // One pass over the members (as json::get: the last of repeated members wins).
    let (mut iv, mut rv, mut wv) = (None, None, None);
    json::for_each_field(u, |k, v| {
        if json::key_is(k, "input") {
            iv = Some(v);
        } else if json::key_is(k, "cacheRead") {
            rv = Some(v);
        } else if json::key_is(k, "cacheWrite") {
            wv = Some(v);
        }
    });
    let n = |v: Option<&[u8]>| v.and_then(json::as_u64);
    let (i, r, w) = (n(iv), n(rv), n(wv));
    if i.is_none() && r.is_none() && w.is_none() {
        return None;
    }
    let sum = message::context_tokens(i.unwrap_or(0), r.unwrap_or(0), w.unwrap_or(0));
    (sum > 0).then_some(sum)
}

/// The strings of a JSON array (other elements left out); `None` when `raw` is no array.
fn string_list(raw: Option<&[u8]>) -> Option<Vec<String>> {
    let raw = raw.filter(|r| r.first() == Some(&b'['))?;
    let mut v = Vec::new();
    json::for_each_element(raw, |e| {
        if let Some(s) = json::as_str(e) {
            v.push(s.into_owned());
        }
    });
    Some(v)
}

/// An entry's `details`, when it is an object.
pub(super) fn details<'a>(e: &Entry<'a>) -> Option<&'a [u8]> {
    e.get("details").filter(|d| d.first() == Some(&b'{'))
}

/// What a compaction or branch_summary entry records of its summary (the text only when
/// `keep_text`) and of the files (from its `details`).
pub(super) fn summary_facts(
    e: &Entry<'_>,
    details: Option<&[u8]>,
    keep_text: bool,
) -> SummaryFacts {
    let summary = e.str("summary");
    SummaryFacts {
        bytes: summary.as_ref().map(|t| t.len() as u64),
        text: if keep_text {
            summary.map(Cow::into_owned)
        } else {
            None
        },
        read_files: details.and_then(|d| string_list(json::get(d, "readFiles"))),
        modified_files: details.and_then(|d| string_list(json::get(d, "modifiedFiles"))),
        from_hook: e.get("fromHook").and_then(json::as_bool),
    }
}

/// A compaction's `tokensBefore`: `None` when absent or null, and when it is not a count
/// (which is reported).
pub(super) fn tokens_before(e: &Entry<'_>, d: &mut Diags) -> Option<u64> {
    match e.get("tokensBefore") {
        None | Some(b"null") => None,
        Some(raw) => {
            let n = json::as_u64(raw);
            if n.is_none() {
                d.report(
                    Some(e.line.no),
                    Kind::BadField,
                    format!(
                        "compaction tokensBefore is a {}, not a count; treated as unknown",
                        json::kind_name(raw)
                    ),
                );
            }
            n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_input_plus_cache_and_never_zero() {
        let c = |u: &str| usage_context(Some(u.as_bytes()));
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
    fn string_lists_keep_only_strings() {
        assert_eq!(
            string_list(Some(br#"["a",1,"b"]"#)),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(string_list(Some(b"{}")), None);
        assert_eq!(string_list(None), None);
    }
}
