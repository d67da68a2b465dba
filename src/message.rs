//! Reading the parts of Pi entries that several tools need: a message's members, its text,
//! and the context size of an assistant call.

use crate::json::{self, member_named, Raw};
use crate::reader::NotedMembers;

/// The decoded size in bytes of an image block's base64 `data` (the JSON string's body as
/// written, or its text): three bytes for every four of the base64 alphabet (standard or URL
/// safe); padding, whitespace and a JSON escape's backslash are not counted.
pub fn base64_decoded_len(data: &[u8]) -> u64 {
    // Counted 64 bytes at a time into a byte-wide sum, by a test without branches: the
    // compiler turns it into vector compares (an image's data is megabytes; one byte at a
    // time it took ~14 instructions a byte, a tenth of pi-redact's run on a session with
    // images).
    let mut letters = 0u64;
    let mut blocks = data.chunks_exact(64);
    for block in &mut blocks {
        let n = block
            .iter()
            .fold(0u8, |n, &b| n.wrapping_add(u8::from(is_base64_letter(b))));
        letters += u64::from(n);
    }
    letters += blocks
        .remainder()
        .iter()
        .filter(|&&b| is_base64_letter(b))
        .count() as u64;
    letters * 3 / 4
}

/// A letter of the base64 alphabet, standard or URL safe (`A`–`Z`, `a`–`z`, `0`–`9`, `+`,
/// `/`, `-`, `_`), tested without branches. `b | 0x20` is a lower-case letter only for a
/// letter of either case.
#[inline(always)]
fn is_base64_letter(b: u8) -> bool {
    ((b | 0x20).wrapping_sub(b'a') < 26)
        | (b.wrapping_sub(b'0') < 10)
        | (b == b'+')
        | (b == b'/')
        | (b == b'-')
        | (b == b'_')
}

/// The members of a Pi `message` object the tools read, found in one pass over it. Each is the
/// raw JSON value (exact input bytes), `None` when absent. As in `JSON.parse`, the last of
/// repeated members wins, and a member name written with escapes (`"r\u006fle"`) counts.
///
/// Which role writes which: every message has `role`, `content` and a numeric `timestamp`
/// (Unix milliseconds); an assistant message `provider`, `model`, `usage`, `stopReason`,
/// `errorMessage` and `responseId` (Pi 1.x also `responseModel`, the model that answered); a
/// `toolResult` `toolCallId`, `toolName`, `isError` and `details` (Pi 1.x also `usage`, the
/// tool's own model calls, `nestedCalls`, the tools it called, and `durationMs`, the time the
/// tool itself ran); a `bashExecution` `command`, `output`, `exitCode`, `cancelled`, `truncated`,
/// `fullOutputPath` and `excludeFromContext`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Message<'a> {
    pub role: Option<Raw<'a>>,
    pub content: Option<Raw<'a>>,
    pub timestamp: Option<Raw<'a>>,
    pub provider: Option<Raw<'a>>,
    pub model: Option<Raw<'a>>,
    pub response_model: Option<Raw<'a>>,
    pub usage: Option<Raw<'a>>,
    pub stop_reason: Option<Raw<'a>>,
    pub error_message: Option<Raw<'a>>,
    pub response_id: Option<Raw<'a>>,
    pub tool_call_id: Option<Raw<'a>>,
    pub tool_name: Option<Raw<'a>>,
    pub is_error: Option<Raw<'a>>,
    pub details: Option<Raw<'a>>,
    pub nested_calls: Option<Raw<'a>>,
    pub duration_ms: Option<Raw<'a>>,
    pub command: Option<Raw<'a>>,
    pub output: Option<Raw<'a>>,
    pub exit_code: Option<Raw<'a>>,
    pub cancelled: Option<Raw<'a>>,
    pub truncated: Option<Raw<'a>>,
    pub full_output_path: Option<Raw<'a>>,
    pub exclude_from_context: Option<Raw<'a>>,
    /// The members of the `usage` object as the reader's scan noted them (none when it did
    /// not): [`Message::for_each_usage_field`] reads them instead of walking `usage` again.
    pub usage_noted: NotedMembers<'a>,
}

impl<'a> Message<'a> {
    /// Reads the members of `raw`, a `message` value (anything else gives no members).
    pub fn read(raw: Raw<'a>) -> Message<'a> {
        let mut m = Message::default();
        raw.for_each_field(|k, v| m.set(k, v));
        m
    }

    /// The message whose members (raw key, value) are `members`, in order.
    #[inline(always)]
    pub fn from_members(members: impl IntoIterator<Item = (&'a [u8], Raw<'a>)>) -> Message<'a> {
        let mut m = Message::default();
        for (k, v) in members {
            m.set(k, v);
        }
        m
    }

    /// Takes member `k` (raw name) with value `v`, when it is one the tools read. Inlined
    /// always, with [`Message::slot`], into the loop over a message's members: a call each
    /// cost as much as the match.
    #[inline(always)]
    fn set(&mut self, k: &'a [u8], v: Raw<'a>) {
        // As [`member_named`] reads a name (written out: the slot borrows `self`).
        if let Some(slot) = self.slot(k) {
            *slot = Some(v);
        } else if k.contains(&b'\\') {
            if let Some(slot) = self.slot(json::decode_string_body(k).as_bytes()) {
                *slot = Some(v);
            }
        }
    }

    #[inline(always)]
    fn slot(&mut self, name: &[u8]) -> Option<&mut Option<Raw<'a>>> {
        Some(match name {
            b"role" => &mut self.role,
            b"content" => &mut self.content,
            b"timestamp" => &mut self.timestamp,
            b"provider" => &mut self.provider,
            b"model" => &mut self.model,
            b"responseModel" => &mut self.response_model,
            b"usage" => &mut self.usage,
            b"stopReason" => &mut self.stop_reason,
            b"errorMessage" => &mut self.error_message,
            b"responseId" => &mut self.response_id,
            b"toolCallId" => &mut self.tool_call_id,
            b"toolName" => &mut self.tool_name,
            b"isError" => &mut self.is_error,
            b"details" => &mut self.details,
            b"nestedCalls" => &mut self.nested_calls,
            b"durationMs" => &mut self.duration_ms,
            b"command" => &mut self.command,
            b"output" => &mut self.output,
            b"exitCode" => &mut self.exit_code,
            b"cancelled" => &mut self.cancelled,
            b"truncated" => &mut self.truncated,
            b"fullOutputPath" => &mut self.full_output_path,
            b"excludeFromContext" => &mut self.exclude_from_context,
            _ => return None,
        })
    }

    /// Calls `f(raw_key, value)` for each member of `usage` (nothing when it is absent or no
    /// object): those the reader noted when they are its members, else walked.
    pub fn for_each_usage_field(&self, f: impl FnMut(&'a [u8], Raw<'a>)) {
        if let Some(usage) = self.usage {
            for_each_field_noted(usage, self.usage_noted, f);
        }
    }

    /// Whether `role` is the string `"assistant"` (escapes decoded, as Pi reads it).
    pub fn is_assistant(&self) -> bool {
        self.role.is_some_and(|r| r.is_str("assistant"))
    }

    /// Whether `role` is the string `"toolResult"` (escapes decoded, as Pi reads it).
    pub fn is_tool_result(&self) -> bool {
        self.role.is_some_and(|r| r.is_str("toolResult"))
    }

    /// The model Pi attributes an assistant message's usage to: `responseModel ?? model` (Pi
    /// 1.6.0's usage-totals.js), a `responseModel` that is not a string counting as absent.
    pub fn billed_model(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.response_model
            .and_then(Raw::as_str)
            .or_else(|| self.model.and_then(Raw::as_str))
    }
}

/// What a tool result says of how it went, by the rule pi-tools' `status` and `evidence` and
/// pi-branch's "(error)" mark follow: its `isError` when true, else an exit code in its
/// `details` ([`details_exit_code`]), else nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultOutcome {
    /// `isError` is true: failed.
    IsError,
    /// An exit code in `details`: failed when not 0.
    ExitCode(i64),
    /// Nothing in it says it failed.
    NoError,
}

impl ResultOutcome {
    /// The outcome of a result whose `isError` is `is_error` and whose `details` hold the exit
    /// code `exit_code`.
    pub fn of(is_error: Option<bool>, exit_code: Option<i64>) -> ResultOutcome {
        match (is_error, exit_code) {
            (Some(true), _) => ResultOutcome::IsError,
            (_, Some(n)) => ResultOutcome::ExitCode(n),
            (_, None) => ResultOutcome::NoError,
        }
    }

    pub fn failed(self) -> bool {
        !matches!(self, ResultOutcome::ExitCode(0) | ResultOutcome::NoError)
    }
}

/// A tool result's exit code: `details.exitCode` when it is an integer, else
/// `details.exit_code` when it is one ([`as_i64`]: a string such as `"1"` is none). The last
/// of repeated members counts, as `JSON.parse` keeps; `details` is read once.
pub fn details_exit_code(details: Raw<'_>) -> Option<i64> {
    let (mut camel, mut snake) = (None, None);
    details.for_each_field(|k, v| {
        match member_named(k, |name| match name {
            b"exitCode" => Some(true),
            b"exit_code" => Some(false),
            _ => None,
        }) {
            Some(true) => camel = Some(v),
            Some(false) => snake = Some(v),
            None => {}
        }
    });
    camel.and_then(as_i64).or_else(|| snake.and_then(as_i64))
}

/// A JSON number that is an integer (negative ones included).
pub fn as_i64(raw: Raw<'_>) -> Option<i64> {
    if let Ok(s) = std::str::from_utf8(&raw) {
        if let Ok(n) = s.parse::<i64>() {
            return Some(n);
        }
    }
    let f = raw.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
}

/// A token member of a Pi `usage` object. `input`, `output`, `cacheRead` and `cacheWrite` add
/// up to Pi's session total; `reasoning` is a part of `output` and `cacheWrite1h` a part of
/// `cacheWrite` (pi-ai's `Usage`), never added on top; `totalTokens` is the provider's total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenField {
    Input,
    Output,
    CacheRead,
    CacheWrite,
    TotalTokens,
    Reasoning,
    CacheWrite1h,
}

impl TokenField {
    /// Every token field, with its name in a `usage` object.
    pub const ALL: [(TokenField, &'static str); 7] = [
        (TokenField::Input, "input"),
        (TokenField::Output, "output"),
        (TokenField::CacheRead, "cacheRead"),
        (TokenField::CacheWrite, "cacheWrite"),
        (TokenField::TotalTokens, "totalTokens"),
        (TokenField::Reasoning, "reasoning"),
        (TokenField::CacheWrite1h, "cacheWrite1h"),
    ];

    /// The field named `name`.
    pub fn named(name: &str) -> Option<TokenField> {
        Self::named_bytes(name.as_bytes())
    }

    /// The field named `name` (bytes, compared as they are).
    pub fn named_bytes(name: &[u8]) -> Option<TokenField> {
        Self::ALL
            .iter()
            .find(|(_, n)| n.as_bytes() == name)
            .map(|(f, _)| *f)
    }

    /// Its name in a `usage` object.
    pub fn name(self) -> &'static str {
        Self::ALL[self as usize].1
    }
}

/// One member of a Pi `usage` object, as [`for_each_usage_member`] hands it out.
pub enum UsageMember<'a> {
    /// A token field: its count, `Ok(None)` for null, or why it is not a count.
    Token(TokenField, Result<Option<u64>, String>),
    /// `cost`, as written.
    Cost(Raw<'a>),
    /// Any other member that holds a number (its name decoded).
    OtherNumber(std::borrow::Cow<'a, str>, Raw<'a>),
}

/// Calls `f(raw_key, value)` for each member of the object `object`: `noted` when the reader
/// noted them as its members ([`NotedMembers::of`]), else walked.
pub fn for_each_field_noted<'a>(
    object: Raw<'a>,
    noted: NotedMembers<'a>,
    mut f: impl FnMut(&'a [u8], Raw<'a>),
) {
    match noted.of(object) {
        Some(members) => members.for_each(|(k, v)| f(k, v)),
        None => object.for_each_field(f),
    }
}

/// Hands out the members of the `usage` object `usage` that matter for billing: the token
/// fields, `cost`, and other numbers; members of other kinds are skipped. One reading of a
/// `usage` object for pi-usage and pi-tools; `noted`: its members as the reader noted them
/// ([`for_each_field_noted`]).
pub fn for_each_usage_member<'a>(
    usage: Raw<'a>,
    noted: NotedMembers<'a>,
    mut f: impl FnMut(UsageMember<'a>),
) {
    for_each_field_noted(usage, noted, |k, v| {
        let member = |key: &[u8]| match key {
            b"cost" => Some(UsageMember::Cost(v)),
            _ => TokenField::named_bytes(key).map(|t| UsageMember::Token(t, token_value(v))),
        };
        if let Some(m) = member_named(k, member) {
            return f(m);
        }
        // Another name is decoded only when it names a number.
        if v.first().is_some_and(|c| c.is_ascii_digit() || *c == b'-') {
            let key = match std::str::from_utf8(k) {
                Ok(s) if !k.contains(&b'\\') => std::borrow::Cow::Borrowed(s),
                _ => json::decode_string_body(k),
            };
            f(UsageMember::OtherNumber(key, v))
        }
        // Otherwise not a number (a future object or string member): skipped.
    });
}

/// The members of a `usage.cost` object that matter: `total` (the best total Pi had) and
/// `totalFromProvider` (whether that total is the provider's billed cost, not a catalog
/// estimate), each as written; `None` when absent.
pub fn cost_total<'a>(cost: Raw<'a>) -> (Option<Raw<'a>>, Option<Raw<'a>>) {
    let (mut total, mut from_provider) = (None, None);
    cost.for_each_field(|k, v| {
        let slot = member_named(k, |name| match name {
            b"total" => Some(0),
            b"totalFromProvider" => Some(1),
            _ => None,
        });
        match slot {
            Some(0) => total = Some(v),
            Some(_) => from_provider = Some(v),
            None => {}
        }
    });
    (total, from_provider)
}

/// The text of a cost's `total` and `totalFromProvider` ([`cost_total_text`]).
pub type CostText<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// [`cost_total`] as the text of each value: the `cost` Pi writes read from one member's quote
/// to the next ([`flat_cost_total`]), any other walked.
pub fn cost_total_text<'a>(cost: Raw<'a>) -> CostText<'a> {
    flat_cost_total(cost.bytes()).unwrap_or_else(|| {
        let (total, from_provider) = cost_total(cost);
        (total.map(Raw::bytes), from_provider.map(Raw::bytes))
    })
}

/// [`cost_total_text`] of the `cost` Pi writes: a validated object of numbers (or literals)
/// without blanks whose names have no escape (`{"input":3.3e-5,…,"total":0.0209796}`), read
/// from one member's quote to the next, two compares a byte (a walk of the object cost four
/// times as much: issue 20). `None` for any other text, which the walk reads; what it finds
/// is what the walk finds (the test holds it to that).
fn flat_cost_total(b: &[u8]) -> Option<CostText<'_>> {
    if b.first() != Some(&b'{') {
        return None;
    }
    let (mut total, mut from_provider) = (None, None);
    // At the `{` or `,` before a member.
    let mut i = 0;
    loop {
        // Its name: no escape, so its first quote ends it; then `:` right after.
        if b.get(i + 1) != Some(&b'"') {
            return None;
        }
        let name_at = i + 2;
        let name_len = find_either(b, name_at, b'"', b'\\')? - name_at;
        let colon = name_at + name_len + 1;
        if b[colon - 1] != b'"' || b.get(colon) != Some(&b':') {
            return None;
        }
        // A number or literal (no string or container, no blank before it), up to the `,`
        // or `}` that follows it (a scalar holds neither) with no blank before that.
        let at = colon + 1;
        if matches!(
            b.get(at),
            None | Some(b'"' | b'{' | b'[' | b' ' | b'\t' | b'\n' | b'\r')
        ) {
            return None;
        }
        let end = find_either(b, at, b',', b'}')?;
        if b[end - 1].is_ascii_whitespace() {
            return None;
        }
        let slot = match &b[name_at..name_at + name_len] {
            b"total" => Some(&mut total),
            b"totalFromProvider" => Some(&mut from_provider),
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = Some(&b[at..end]);
        }
        match b[end] {
            b',' => i = end,
            _ if end + 1 == b.len() => return Some((total, from_provider)),
            _ => return None,
        }
    }
}

/// The index of the first byte of `b` at or after `from` that is `x` or `y`; `None` when there
/// is none (or `from` is past the end).
#[inline(always)]
fn find_either(b: &[u8], from: usize, x: u8, y: u8) -> Option<usize> {
    Some(from + memchr::memchr2(x, y, b.get(from..)?)?)
}

/// What a tool result's `nestedCalls` (`{calls: [{status, …}], complete}`) says: how many calls
/// it lists, how many of them failed or had not finished, and whether it is `complete` (false:
/// Pi dropped calls or arguments from the record, so the counts are a lower bound).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NestedCalls {
    pub count: u64,
    pub errors: u64,
    pub unfinished: u64,
    pub complete: Option<bool>,
}

impl NestedCalls {
    /// The summary of `nested`, a `nestedCalls` value; `None` when it is not an object.
    pub fn read(nested: Raw<'_>) -> Option<NestedCalls> {
        if nested.first() != Some(&b'{') {
            return None;
        }
        let mut n = NestedCalls {
            complete: nested.get("complete").and_then(Raw::as_bool),
            ..NestedCalls::default()
        };
        if let Some(calls) = nested.get("calls") {
            calls.for_each_element(|c| {
                n.count += 1;
                match c.get("status").and_then(Raw::as_str).as_deref() {
                    Some("error") => n.errors += 1,
                    Some("unfinished") => n.unfinished += 1,
                    _ => {}
                }
            });
        }
        Some(n)
    }
}

/// Joins the text of a message `content` (a string, or blocks of which `text` ones count).
pub fn content_text(content: Raw<'_>) -> Option<String> {
    if let Some(s) = content.as_str() {
        return Some(s.into_owned());
    }
    let mut parts: Vec<String> = Vec::new();
    content.for_each_element(|block| {
        if block.get("type").is_some_and(|t| t.is_str("text")) {
            if let Some(t) = block.get("text").and_then(Raw::as_str) {
                parts.push(t.into_owned());
            }
        }
    });
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The text of a user message entry (a whole line, read again from its file), when it is one
/// and has text. The line is bytes from the file, not a scanned value: one validating scan
/// finds its `type` and `message` (the last of each, as `Raw::get` finds them).
pub fn user_text(line: &[u8]) -> Option<String> {
    let (mut kind, mut message) = (None, None);
    json::scan_members(line, 0, |k, v| {
        if json::key_is(k, "type") {
            kind = Some(v);
        } else if json::key_is(k, "message") {
            message = Some(v);
        }
    })
    .ok()?;
    if !kind.is_some_and(|k| k.is_str("message")) {
        return None;
    }
    let msg = message?;
    if !msg.get("role").is_some_and(|r| r.is_str("user")) {
        return None;
    }
    content_text(msg.get("content")?).filter(|t| !t.trim().is_empty())
}

/// At most `max` characters of `s` (whitespace runs folded to one space), with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let folded: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    // No room even for the `…`: nothing.
    if max == 0 {
        return String::new();
    }
    let mut out: String = folded.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A token count, or why it is not one (for the diagnostic). A whole number written with an
/// exponent or a zero fraction (`1e3`, `1000.0`) is the count it stands for, as Pi's
/// JavaScript reads it; a whole number past u64::MAX is "too large", never "not a whole
/// number" (issue 19, item 11).
/// (Shared by pi-usage and pi-compactions: one reading of Pi's token numbers.)
#[inline]
pub fn token_value(raw: Raw<'_>) -> Result<Option<u64>, String> {
    // Most counts are short runs of digits: read at once, in one pass that also checks each
    // is a digit (19 digits cannot pass u64::MAX). Inlined where a count is read; anything
    // else is read by the general reading, out of line.
    if (1..=19).contains(&raw.len()) {
        let digits = raw.iter().try_fold(0u64, |n, &c| {
            let d = c.wrapping_sub(b'0');
            (d <= 9).then(|| n * 10 + u64::from(d))
        });
        if let Some(n) = digits {
            return Ok(Some(n));
        }
    }
    token_value_general(raw)
}

/// [`token_value`] of a value that is no short run of digits.
#[inline(never)]
fn token_value_general(raw: Raw<'_>) -> Result<Option<u64>, String> {
    if raw.is_null() {
        return Ok(None);
    }
    if let Some(v) = raw.as_u64() {
        return Ok(Some(v));
    }
    match raw.as_f64() {
        Some(f) if f < 0.0 => Err(format!("is negative ({})", short_text(&raw))),
        Some(_) => match whole_number(&raw) {
            Some(Some(v)) => Ok(Some(v)),
            Some(None) => Err(format!(
                "is too large to count (over {}: {})",
                u64::MAX,
                short_text(&raw)
            )),
            None => Err(format!("is not a whole number ({})", short_text(&raw))),
        },
        None => Err(format!("is a {}, not a number", raw.kind_name())),
    }
}

/// The whole number a non-negative JSON number's text stands for, exactly: `Some(Some(n))`,
/// `Some(None)` when it is whole but past u64::MAX, `None` when it has a fraction.
pub fn whole_number(text: &[u8]) -> Option<Option<u64>> {
    let text = text.strip_prefix(b"-").unwrap_or(text);
    let (mantissa, exponent) = match text.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, &b""[..]),
    };
    let (int, frac) = match mantissa.iter().position(|&c| c == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &b""[..]),
    };
    let digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let digits = match digits.iter().position(|&c| c != b'0') {
        Some(first) => &digits[first..],
        None => return Some(Some(0)),
    };
    let zeros = digits.iter().rev().take_while(|&&c| c == b'0').count();
    let digits = &digits[..digits.len() - zeros];
    // The power of ten the significant digits are scaled by; an exponent too long for i64 is
    // past any count either way.
    let exp = std::str::from_utf8(exponent).ok().and_then(|e| {
        let e = e.strip_prefix('+').unwrap_or(e);
        if e.is_empty() {
            Some(0)
        } else {
            e.parse::<i64>().ok()
        }
    });
    let exp = match exp {
        Some(e) => e,
        None if exponent.first() == Some(&b'-') => return None,
        None => return Some(None),
    };
    let scale = i128::from(exp) - frac.len() as i128 + zeros as i128;
    if scale < 0 {
        return None;
    }
    if digits.len() as i128 + scale > 20 {
        return Some(None);
    }
    let mut v: u128 = 0;
    for &c in digits {
        v = v * 10 + u128::from(c - b'0');
    }
    v *= 10u128.pow(scale as u32);
    Some(u64::try_from(v).ok())
}

/// A value's text for a diagnostic, cut to 32 characters.
pub(crate) fn short_text(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    if s.chars().count() > 32 {
        let mut t: String = s.chars().take(31).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte is a base64 letter exactly when it is alphanumeric or one of `+ / - _`,
    /// and data of any length, in blocks and their remainder, counts its letters so.
    #[test]
    fn base64_letters_are_counted_as_the_alphabet_says() {
        let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_');
        for b in 0..=255u8 {
            assert_eq!(is_base64_letter(b), plain(b), "{b}");
        }
        let all: Vec<u8> = (0..=255u8).cycle().take(2000).collect();
        let mut rng = pi_jsonl_gen::Rng::new(17);
        let noisy: Vec<u8> = (0..3000)
            .map(|_| match rng.range(0, 4) {
                0 => *rng.pick(b"=\\n \r\t\"\xff"),
                _ => *rng.pick(b"ABCXYZabcxyz0189+/-_"),
            })
            .collect();
        for data in [&all[..], &noisy[..]] {
            for len in (0..data.len()).step_by(7).chain([data.len()]) {
                for start in [0, 1, 63] {
                    let d = data.get(start..len).unwrap_or_default();
                    let want = d.iter().filter(|&&b| plain(b)).count() as u64 * 3 / 4;
                    assert_eq!(base64_decoded_len(d), want, "{start}..{len}");
                }
            }
        }
    }

    /// isError true decides first; then an exit code, `exitCode` before `exit_code`, each
    /// the last of its name, only when an integer.
    #[test]
    fn a_result_fails_by_is_error_then_by_a_non_zero_exit_code() {
        let code = |d: &str| details_exit_code(json::validate(d.as_bytes()).unwrap());
        assert_eq!(code(r#"{"exitCode":2}"#), Some(2));
        assert_eq!(code(r#"{"exit_code":-9}"#), Some(-9));
        assert_eq!(code(r#"{"exitCode":0,"exit_code":1}"#), Some(0));
        assert_eq!(code(r#"{"exitCode":"1","exit_code":3}"#), Some(3));
        assert_eq!(code(r#"{"exitCode":1,"exitCode":null}"#), None);
        assert_eq!(code(r#"{"exit\u0043ode":4}"#), Some(4));
        assert_eq!(code(r#"[{"exitCode":1}]"#), None);
        let failed = |e, c| ResultOutcome::of(e, c).failed();
        assert!(failed(Some(true), Some(0)) && failed(Some(false), Some(2)));
        assert!(failed(None, Some(-9)) && failed(Some(true), None));
        assert!(!failed(Some(false), Some(0)) && !failed(None, None));
        assert_eq!(
            ResultOutcome::of(Some(true), Some(1)),
            ResultOutcome::IsError
        );
        assert_eq!(ResultOutcome::of(None, Some(0)), ResultOutcome::ExitCode(0));
    }

    /// Each member the tools read lands in its own slot, written plainly or with an escape;
    /// names one byte off (shorter, longer, another letter) land nowhere.
    #[test]
    fn each_member_name_has_its_slot() {
        type Get = for<'m> fn(&Message<'m>) -> Option<Raw<'m>>;
        let names: [(&str, Get); 23] = [
            ("role", |m| m.role),
            ("content", |m| m.content),
            ("timestamp", |m| m.timestamp),
            ("provider", |m| m.provider),
            ("model", |m| m.model),
            ("responseModel", |m| m.response_model),
            ("usage", |m| m.usage),
            ("stopReason", |m| m.stop_reason),
            ("errorMessage", |m| m.error_message),
            ("responseId", |m| m.response_id),
            ("toolCallId", |m| m.tool_call_id),
            ("toolName", |m| m.tool_name),
            ("isError", |m| m.is_error),
            ("details", |m| m.details),
            ("nestedCalls", |m| m.nested_calls),
            ("durationMs", |m| m.duration_ms),
            ("command", |m| m.command),
            ("output", |m| m.output),
            ("exitCode", |m| m.exit_code),
            ("cancelled", |m| m.cancelled),
            ("truncated", |m| m.truncated),
            ("fullOutputPath", |m| m.full_output_path),
            ("excludeFromContext", |m| m.exclude_from_context),
        ];
        let set = |m: &Message<'_>| names.iter().filter(|(_, get)| get(m).is_some()).count();
        for (i, (name, get)) in names.iter().enumerate() {
            let escaped = format!("\\u{:04x}{}", name.as_bytes()[0], &name[1..]);
            for written in [name.to_string(), escaped] {
                let text = format!(r#"{{"{written}":{i}}}"#);
                let m = Message::read(json::validate(text.as_bytes()).unwrap());
                assert_eq!(
                    get(&m).map(|v| v.to_vec()),
                    Some(i.to_string().into_bytes())
                );
                assert_eq!(set(&m), 1, "{text}");
            }
            let mut other = name.as_bytes().to_vec();
            *other.last_mut().unwrap() ^= 0x20;
            for near in [
                &name[1..],
                &format!("{name}s"),
                std::str::from_utf8(&other).unwrap(),
            ] {
                let text = format!(r#"{{"{near}":1}}"#);
                let m = Message::read(json::validate(text.as_bytes()).unwrap());
                assert_eq!(set(&m), 0, "{text}");
            }
        }
    }

    /// Issue 19, item 11: `1e30` and `18446744073709551616` are whole numbers, too large to
    /// count; `1e3` and `1000.0` are 1000.
    #[test]
    fn item_11_whole_numbers_are_whole_however_written() {
        let w = |s: &str| whole_number(s.as_bytes());
        assert_eq!(w("1e3"), Some(Some(1000)));
        assert_eq!(w("1000.0"), Some(Some(1000)));
        assert_eq!(w("1.5e1"), Some(Some(15)));
        assert_eq!(w("12500e-2"), Some(Some(125)));
        assert_eq!(w("0.0"), Some(Some(0)));
        assert_eq!(w("0e99999999999999999999"), Some(Some(0)));
        assert_eq!(w("18446744073709551615.0"), Some(Some(u64::MAX)));
        assert_eq!(w("18446744073709551616"), Some(None));
        assert_eq!(w("1e30"), Some(None));
        assert_eq!(w("1E+99999999999999999999"), Some(None));
        assert_eq!(w("1.5"), None);
        assert_eq!(w("15e-1"), None);
        assert_eq!(w("1e-99999999999999999999"), None);
        let t = |s: &str| token_value(crate::json::validate(s.as_bytes()).unwrap());
        assert_eq!(t("1e3"), Ok(Some(1000)));
        assert!(t("1e30").unwrap_err().starts_with("is too large to count"));
        assert!(t("18446744073709551616")
            .unwrap_err()
            .starts_with("is too large to count"));
        assert!(t("1.5").unwrap_err().starts_with("is not a whole number"));
    }

    #[test]
    fn user_text_reads_strings_and_blocks() {
        let a = br#"{"type":"message","message":{"role":"user","content":"hi there"}}"#;
        let b = br#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}}"#;
        let c = br#"{"type":"message","message":{"role":"assistant","content":"no"}}"#;
        assert_eq!(user_text(a).as_deref(), Some("hi there"));
        assert_eq!(user_text(b).as_deref(), Some("a b"));
        assert_eq!(user_text(c), None);
    }

    #[test]
    fn message_fields_in_one_pass_escaped_keys_too() {
        let m = br#"{"r\u006fle":"assistant","content":[{"type":"text","text":"usage"}],"model":"a","model":"b","stopReason":"stop"}"#;
        let f = Message::read(json::validate(m).unwrap());
        assert!(f.is_assistant());
        assert_eq!(f.model.as_deref(), Some(&b"\"b\""[..]));
        assert_eq!(f.stop_reason.as_deref(), Some(&b"\"stop\""[..]));
        assert_eq!(f.usage, None);
        assert_eq!(
            f.content.as_deref(),
            Some(&br#"[{"type":"text","text":"usage"}]"#[..])
        );
        // Every member, in any order, the last of repeats winning.
        let t = br#"{"toolCallId":"c1","toolName":"bash","isError":false,"details":{"exitCode":2},"exitCode":1,"cancelled":true,"truncated":false,"fullOutputPath":"/t","excludeFromContext":true,"command":"ls","output":"x","timestamp":1,"responseId":"r","errorMessage":"e","provider":"p","usage":{},"role":"toolResult","role":"bashExecution"}"#;
        let f = Message::read(json::validate(t).unwrap());
        assert!(!f.is_assistant());
        assert_eq!(f.role.as_deref(), Some(&b"\"bashExecution\""[..]));
        assert_eq!(f.details.as_deref(), Some(&br#"{"exitCode":2}"#[..]));
        for (got, want) in [
            (f.tool_call_id, "\"c1\""),
            (f.tool_name, "\"bash\""),
            (f.is_error, "false"),
            (f.exit_code, "1"),
            (f.cancelled, "true"),
            (f.truncated, "false"),
            (f.full_output_path, "\"/t\""),
            (f.exclude_from_context, "true"),
            (f.command, "\"ls\""),
            (f.output, "\"x\""),
            (f.timestamp, "1"),
            (f.response_id, "\"r\""),
            (f.error_message, "\"e\""),
            (f.provider, "\"p\""),
            (f.usage, "{}"),
        ] {
            assert_eq!(got.as_deref(), Some(want.as_bytes()));
        }
        assert_eq!(Message::read(json::validate(b"[1]").unwrap()).role, None);
    }

    /// Pi 1.x: one reading of a `usage` object (its token fields, `reasoning` and
    /// `cacheWrite1h` among them, `cost` and other numbers), of `cost`, of `nestedCalls`, and
    /// the model usage is keyed by (`responseModel ?? model`).
    /// Issue 20: the short reading of a run of digits gives what the general reading gives,
    /// at every length up to and past u64::MAX's 20 digits.
    #[test]
    fn short_digit_runs_read_as_the_general_reading_reads_them() {
        let t = |s: &str| token_value(json::validate(s.as_bytes()).unwrap());
        for text in [
            "0",
            "7",
            "42",
            "1234567890123456789",
            "9999999999999999999",
            "10000000000000000000",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
        ] {
            let general = json::as_u64(text.as_bytes());
            match t(text) {
                Ok(n) => assert_eq!(n, general, "{text}"),
                Err(why) => {
                    assert_eq!(general, None, "{text}");
                    assert!(why.starts_with("is too large to count"), "{text}: {why}");
                }
            }
        }
        assert_eq!(
            t("9999999999999999999"),
            Ok(Some(9_999_999_999_999_999_999))
        );
        assert_eq!(t("null"), Ok(None));
        assert!(t("-1").unwrap_err().starts_with("is negative"));
    }

    /// Issue 20: names are matched as written before any decoding; one written with escapes
    /// is still the name it stands for, and another number's name is still decoded.
    #[test]
    fn usage_and_message_names_written_with_escapes_still_count() {
        let u = br#"{"c\u006fst":{"total":1},"\u0069nput":5,"aud\u0069o":6,"input":7}"#;
        let mut seen = Vec::new();
        for_each_usage_member(json::validate(u).unwrap(), NotedMembers::default(), |m| {
            seen.push(match m {
                UsageMember::Token(f, n) => format!("{}={n:?}", f.name()),
                UsageMember::Cost(c) => format!("cost={:?}", cost_total(c).0.map(Raw::bytes)),
                UsageMember::OtherNumber(n, v) => format!("{n}:{}", String::from_utf8_lossy(&v)),
            })
        });
        let want = [
            "cost=Some([49])",
            "input=Ok(Some(5))",
            "audio:6",
            "input=Ok(Some(7))",
        ];
        assert_eq!(seen, want);
        let m = br#"{"r\u006fle":"assistant","usag\u0065":{},"model":"m","api":"x"}"#;
        let m = Message::read(json::validate(m).unwrap());
        assert!(m.is_assistant());
        assert_eq!(m.usage.as_deref(), Some(&b"{}"[..]));
        assert_eq!(m.model.as_deref(), Some(&br#""m""#[..]));
    }

    #[test]
    fn pi1_usage_members_nested_calls_and_the_billed_model() {
        let u = br#"{"input":1,"output":"x","reasoning":2,"cacheWrite1h":null,"cacheR\u0065ad":3,"audio":4,"note":"n","cost":{"total":0.5,"totalFromProvider":true}}"#;
        let mut seen = Vec::new();
        for_each_usage_member(json::validate(u).unwrap(), NotedMembers::default(), |m| {
            seen.push(match m {
                UsageMember::Token(f, Ok(n)) => format!("{}={n:?}", f.name()),
                UsageMember::Token(f, Err(_)) => format!("{}=bad", f.name()),
                UsageMember::Cost(c) => {
                    let (t, p) = cost_total(c);
                    format!(
                        "cost={:?}/{:?}",
                        t.and_then(Raw::as_f64),
                        p.and_then(Raw::as_bool)
                    )
                }
                UsageMember::OtherNumber(n, v) => format!("{n}:{}", String::from_utf8_lossy(&v)),
            })
        });
        assert_eq!(
            seen,
            [
                "input=Some(1)",
                "output=bad",
                "reasoning=Some(2)",
                "cacheWrite1h=None",
                "cacheRead=Some(3)",
                "audio:4",
                "cost=Some(0.5)/Some(true)"
            ]
        );
        let n = |s: &str| NestedCalls::read(json::validate(s.as_bytes()).unwrap());
        assert_eq!(
            n(
                r#"{"calls":[{"status":"ok"},{"status":"error"},{"status":"unfinished"},{}],"complete":false}"#
            ),
            Some(NestedCalls {
                count: 4,
                errors: 1,
                unfinished: 1,
                complete: Some(false)
            })
        );
        assert_eq!(n(r#"{"complete":true}"#).map(|c| c.count), Some(0));
        assert_eq!(n("[1]"), None);
        fn m(s: &str) -> Message<'_> {
            Message::read(json::validate(s.as_bytes()).unwrap())
        }
        let a = m(r#"{"role":"assistant","model":"m","responseModel":"m-2026"}"#);
        assert_eq!(a.billed_model().as_deref(), Some("m-2026"));
        let b = m(r#"{"role":"assistant","model":"m","responseModel":null}"#);
        assert_eq!(b.billed_model().as_deref(), Some("m"));
        assert!(m(r#"{"role":"toolResult"}"#).is_tool_result());
    }

    /// Issue 20: the `cost` Pi writes is read from member to member, and what that finds is
    /// what the walk finds; any other text (blanks, an escaped name, a value that is no
    /// number or literal, no object) is walked.
    #[test]
    fn flat_costs_read_as_the_walk_reads_them() {
        let flat = [
            r#"{"input":3.3e-5,"output":0.003345,"cacheRead":0.0001491,"cacheWrite":0.0174525,"total":0.0209796}"#,
            r#"{"total":1,"totalFromProvider":true}"#,
            r#"{"total":1,"total":-2.5E+3,"totalFromProvider":false,"totalFromProvider":null}"#,
            r#"{"totals":1,"Total":2,"totalFromProviders":true,"":0}"#,
            r#"{"total":null}"#,
        ];
        let walked = [
            r#"{}"#,
            r#"{ "total":1}"#,
            r#"{"total" :1}"#,
            r#"{"total": 1}"#,
            r#"{"total":1 }"#,
            r#"{"total":1 ,"x":2}"#,
            r#"{"t\u006ftal":1,"total":2}"#,
            r#"{"total":2,"t\u006ftal":3}"#,
            r#"{"total":2,"x\"":3}"#,
            r#"{"total":"1"}"#,
            r#"{"a":{"total":1},"total":2}"#,
            r#"{"total":2,"a":[1,{"total":3}]}"#,
            r#"{"a":"x\",\"total\":9","total":2}"#,
            "[1]",
            "1",
            r#""{\"total\":1}""#,
        ];
        for text in flat.iter().chain(&walked) {
            let raw = json::validate(text.as_bytes()).unwrap();
            let (t, p) = cost_total(raw);
            let walk = (t.map(Raw::bytes), p.map(Raw::bytes));
            assert_eq!(cost_total_text(raw), walk, "{text}");
            assert_eq!(
                flat_cost_total(raw.bytes()).is_some(),
                flat.contains(text),
                "{text}"
            );
        }
        let raw = json::validate(flat[2].as_bytes()).unwrap();
        assert_eq!(
            flat_cost_total(raw.bytes()),
            Some((Some(&b"-2.5E+3"[..]), Some(&b"null"[..])))
        );
    }

    /// The word-at-a-time search finds what a byte-by-byte one finds, from every start, on
    /// bytes of every kind (the two sought side by side, bytes past 0x7f, zeros).
    #[test]
    fn find_either_is_the_first_of_either_byte() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = [
            b',', b'}', b'"', b'\\', 0, 0x7f, 0x80, 0xab, 0xff, b'a', b'-', b'1',
        ];
        for _ in 0..3000 {
            let len = (next() % 40) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    0 => alphabet[(next() % alphabet.len() as u64) as usize],
                    _ => next() as u8,
                })
                .collect();
            for (a, b) in [(b',', b'}'), (b'"', b'\\'), (0, 0xff), (0x80, 0x7f)] {
                for from in 0..=len + 1 {
                    let plain = text
                        .get(from..)
                        .and_then(|t| t.iter().position(|&c| c == a || c == b))
                        .map(|p| from + p);
                    assert_eq!(find_either(&text, from, a, b), plain, "{text:?} {from}");
                }
            }
        }
    }

    #[test]
    fn truncates_by_characters() {
        assert_eq!(truncate_chars("héllo  wörld", 5), "héll…");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
