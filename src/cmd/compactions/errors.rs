//! Classifying the error texts of assistant messages: Pi's context-overflow patterns, the HTTP
//! status and retry attempt a text states, Pi's compaction-failure and summarization texts. Pure
//! functions of the text; only their verdicts (never the text) reach a record.

use super::overflow;
use super::trigger::{StopReason, Trigger};

/// Normalized error kinds: the only thing of an error's text that reaches a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ApiErrorKind {
    ContextOverflow,
    RateLimit,
    Timeout,
    Connection,
    Server,
    Aborted,
    Other,
}

impl ApiErrorKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            ApiErrorKind::ContextOverflow => "context_overflow",
            ApiErrorKind::RateLimit => "rate_limit",
            ApiErrorKind::Timeout => "timeout",
            ApiErrorKind::Connection => "connection",
            ApiErrorKind::Server => "server",
            ApiErrorKind::Aborted => "aborted",
            ApiErrorKind::Other => "other",
        }
    }
}

/// Whether an error text (lowercased) says the context was too long, to Pi 0.73.1 or to Pi
/// 1.6.0 ([`overflow::is_overflow_text_pi073`], [`overflow::is_overflow_text`]).
fn is_overflow_text(l: &str) -> bool {
    overflow::is_overflow_text_pi073(l) || overflow::is_overflow_text(l, None)
}

fn three_digits(b: &[u8], i: usize) -> Option<u16> {
    let d = b.get(i..i + 3)?;
    if !d.iter().all(u8::is_ascii_digit) || b.get(i + 3).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let n = (d[0] - b'0') as u16 * 100 + (d[1] - b'0') as u16 * 10 + (d[2] - b'0') as u16;
    (400..=599).contains(&n).then_some(n)
}

/// The HTTP error status (400-599) an error text states: a leading `NNN ` (as the provider
/// SDKs write it), `error (NNN)` or `failed (NNN)` (pi-ai's `<Provider> API error (NNN): …`),
/// `returned NNN`, or a number after `code`, `status` or `http` (JSON bodies, nested ones
/// included). Other numbers (an exit code 127, a year) are not statuses.
fn http_status(l: &str) -> Option<u16> {
    let b = l.as_bytes();
    if let Some(n) = three_digits(b, 0) {
        return Some(n);
    }
    for key in ["error (", "failed (", "returned "] {
        for (i, _) in l.match_indices(key) {
            let j = i + key.len();
            let closed = !key.ends_with('(') || b.get(j + 3) == Some(&b')');
            if let Some(n) = three_digits(b, j).filter(|_| closed) {
                return Some(n);
            }
        }
    }
    for key in ["code", "status", "http"] {
        for (i, _) in l.match_indices(key) {
            let mut j = i + key.len();
            let mut skipped = 0;
            while skipped < 8
                && matches!(
                    b.get(j),
                    Some(b' ' | b'"' | b'\\' | b':' | b'=' | b'/' | b'1' | b'.')
                )
            {
                // Allow `HTTP/1.1 503`: skip the version, but not a status's own digits.
                if matches!(b.get(j), Some(b'1' | b'.')) && !l[i..].starts_with("http/") {
                    break;
                }
                j += 1;
                skipped += 1;
            }
            if let Some(n) = three_digits(b, j) {
                return Some(n);
            }
        }
    }
    None
}

/// The retry attempt an error text states (`after 3 retry attempts`, `attempt 2`, `retry 2/3`).
fn retry_attempt(l: &str) -> Option<u64> {
    let num_at = |s: &str| -> Option<u64> {
        let d: String = s.chars().take_while(char::is_ascii_digit).collect();
        d.parse().ok()
    };
    for (i, _) in l.match_indices("after ") {
        let rest = &l[i + 6..];
        if let Some(n) = num_at(rest) {
            let tail = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            if tail.starts_with(" retr") || tail.starts_with(" attempt") {
                return Some(n);
            }
        }
    }
    for key in ["attempt ", "attempt #", "retry ", "retry #"] {
        for (i, _) in l.match_indices(key) {
            if let Some(n) = num_at(&l[i + key.len()..]) {
                return Some(n);
            }
        }
    }
    None
}

/// Normalizes an error: `text` is the error message lowercased.
fn classify(l: &str, aborted: bool, status: Option<u16>) -> ApiErrorKind {
    if aborted {
        return ApiErrorKind::Aborted;
    }
    if is_overflow_text(l) {
        return ApiErrorKind::ContextOverflow;
    }
    match status {
        Some(429) => return ApiErrorKind::RateLimit,
        Some(408 | 504) => return ApiErrorKind::Timeout,
        Some(500..=599) => return ApiErrorKind::Server,
        _ => {}
    }
    let any = |ps: &[&str]| ps.iter().any(|p| l.contains(p));
    if any(&[
        "rate limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "quota",
        "usage limit",
        "resource exhausted",
        "resource_exhausted",
    ]) {
        ApiErrorKind::RateLimit
    } else if any(&[
        "timed out",
        "timeout",
        "time out",
        "deadline exceeded",
        "etimedout",
    ]) {
        ApiErrorKind::Timeout
    } else if any(&["abort", "cancelled", "canceled"]) {
        ApiErrorKind::Aborted
    } else if any(&[
        "connection",
        "econnreset",
        "econnrefused",
        "enotfound",
        "eai_again",
        "epipe",
        "socket hang up",
        "network",
        "fetch failed",
        "terminated",
        "other side closed",
    ]) {
        ApiErrorKind::Connection
    } else if any(&[
        "overloaded",
        "internal server error",
        "server error",
        "server_error",
        "service unavailable",
        "bad gateway",
        "internal error",
        "unavailable",
    ]) {
        ApiErrorKind::Server
    } else {
        ApiErrorKind::Other
    }
}

/// What a compaction-failure text says (see [`failure_of`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FailureText {
    /// The compaction the text belongs to.
    pub trigger: Trigger,
    /// Which of Pi's failure texts it is (`auto_compaction`, `overflow_recovery`, ...).
    pub failure: &'static str,
    /// `history` or `turn_prefix` when the cause is a failed summarization request.
    pub summarization: Option<&'static str>,
    pub kind: ApiErrorKind,
    pub status: Option<u16>,
    pub retry: Option<u64>,
}

/// The failure texts Pi builds (agent-session.ts, compaction.ts), with the trigger each belongs
/// to. "Auto-compaction failed" is what Pi writes for a threshold compaction; overflow recovery
/// has its own texts.
const FAILURES: &[(&str, Trigger, &str)] = &[
    (
        "Auto-compaction failed: ",
        Trigger::Threshold,
        "auto_compaction",
    ),
    (
        "Context overflow recovery failed",
        Trigger::Overflow,
        "overflow_recovery",
    ),
    (
        "Truncated response recovery failed",
        Trigger::Overflow,
        "truncation_recovery",
    ),
    ("Context overflow: ", Trigger::Overflow, "overflow_recovery"),
    ("Compaction failed: ", Trigger::Manual, "manual_compaction"),
    ("Summarization failed: ", Trigger::Unknown, "summarization"),
    (
        "Turn prefix summarization failed: ",
        Trigger::Unknown,
        "turn_prefix_summarization",
    ),
];

const SUMMARIZATION: &[(&str, &str)] = &[
    ("Summarization failed: ", "history"),
    ("Turn prefix summarization failed: ", "turn_prefix"),
];

/// The compaction failure an assistant message's error text reports, if it is one.
pub(super) fn failure_of(msg: &str, aborted: bool) -> Option<FailureText> {
    let t = msg.trim_start();
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    let &(prefix, trigger, failure) = FAILURES.iter().find(|(p, _, _)| t.starts_with(p))?;
    let mut cause = &t[prefix.len()..];
    let mut summarization = None;
    if failure == "summarization" {
        summarization = Some("history");
    } else if failure == "turn_prefix_summarization" {
        summarization = Some("turn_prefix");
    }
    loop {
        let c = cause.trim_start();
        let c = c.strip_prefix("Error: ").unwrap_or(c);
        match SUMMARIZATION.iter().find(|(p, _)| c.starts_with(p)) {
            Some((p, s)) => {
                summarization = Some(s);
                cause = &c[p.len()..];
            }
            None => {
                cause = c;
                break;
            }
        }
    }
    if prefix == "Context overflow: " {
        cause = cause
            .strip_suffix(" Your input may be too large for the context window.")
            .unwrap_or(cause);
    }
    let l = cause.to_ascii_lowercase();
    let status = http_status(&l);
    let gave_up = cause.starts_with("after one compact-and-retry attempt");
    let kind = if gave_up && prefix.starts_with("Context overflow recovery") {
        // Pi gave up: the context still overflowed after compacting once.
        ApiErrorKind::ContextOverflow
    } else if gave_up {
        ApiErrorKind::Other
    } else {
        classify(&l, aborted, status)
    };
    Some(FailureText {
        trigger,
        failure,
        summarization,
        kind,
        status,
        retry: retry_attempt(&l),
    })
}

/// An ordinary API error, normalized (see [`api_error`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ApiError {
    pub kind: ApiErrorKind,
    pub status: Option<u16>,
    pub retry: Option<u64>,
}

/// The API error an assistant message reports with its error text `text` and its stopReason:
/// `None` when it reports none (it did not end in error or aborted and has no error text).
pub(super) fn api_error(text: Option<&str>, stop: StopReason) -> Option<ApiError> {
    let is_error = matches!(stop, StopReason::Error | StopReason::Aborted)
        || text.is_some_and(|t| !t.is_empty());
    if !is_error {
        return None;
    }
    let l = text.unwrap_or("").to_ascii_lowercase();
    let status = http_status(&l);
    // `classify` tests the overflow patterns first, so an error that says the context was too
    // long is a context overflow whatever its stopReason (aborted excepted).
    Some(ApiError {
        kind: classify(&l, stop == StopReason::Aborted, status),
        status,
        retry: retry_attempt(&l),
    })
}

/// Whether Pi 0.73.1 takes an assistant message for an explicit context overflow:
/// stopReason error with an error text in its patterns ([`overflow::is_overflow_text_pi073`]).
pub(super) fn is_pi073_overflow_error(stop: StopReason, text: Option<&str>) -> bool {
    stop == StopReason::Error
        && text.is_some_and(|t| overflow::is_overflow_text_pi073(&t.to_lowercase()))
}

/// Whether Pi 1.6.0 takes an assistant message from `provider` for an explicit context
/// overflow: stopReason error with an error text in its patterns ([`overflow`]).
pub(super) fn is_pi16_overflow_error(
    stop: StopReason,
    text: Option<&str>,
    provider: Option<&str>,
) -> bool {
    stop == StopReason::Error
        && text.is_some_and(|t| overflow::is_overflow_text(&t.to_lowercase(), provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_patterns_follow_pi() {
        for t in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "400 This model's maximum context length is 131072 tokens. However, you requested 170072 tokens",
            "prompt token count of 9 exceeds the limit of 8",
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "413 status code (no body)",
            "400 (no body)",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "error: context_length_exceeded",
        ] {
            assert!(is_overflow_text(&t.to_ascii_lowercase()), "{t}");
        }
        for t in [
            "ThrottlingException: Too many tokens, please wait before trying again. rate limit",
            "429 Too Many Requests",
            "Connection error.",
            "400 Unsupported value: 'none' is not supported",
        ] {
            assert!(!is_overflow_text(&t.to_ascii_lowercase()), "{t}");
        }
    }

    #[test]
    fn http_status_is_found_where_providers_put_it() {
        let s = |t: &str| http_status(&t.to_ascii_lowercase());
        assert_eq!(s("429 Usage limit reached"), Some(429));
        assert_eq!(s("{\"error\":{\"code\": 503}}"), Some(503));
        assert_eq!(s("{\\n  \\\"code\\\": 429,"), Some(429));
        assert_eq!(s("request failed with status code 502"), Some(502));
        assert_eq!(s("HTTP/1.1 504 Gateway Timeout"), Some(504));
        assert_eq!(s("Connection error."), None);
        assert_eq!(s("error code 12345"), None);
        assert_eq!(s("1234 things"), None);
        assert_eq!(s("process exited with code 127"), None);
        assert_eq!(s("200 ok"), None);
    }

    /// Every way pi-ai (0.73.1 and 1.6.0 dist) writes a status into an error text:
    /// `formatProviderError` (`<prefix> (<status>): …`, `<status>: …`, with prefixes such as
    /// `Mistral API error`, `OpenAI API error`, `Azure OpenAI API error`, `<label> error`),
    /// `<status> <statusText>: …`, `Error Code <code>: …`, `status=<status>;`, `Request failed
    /// with status <status>`, `<label> returned <status>`, `failed (<status>)`,
    /// `(HTTP <status>)`, `(status <status>)`.
    #[test]
    fn http_status_in_every_pi_ai_error_format() {
        let s = |t: &str| http_status(&t.to_ascii_lowercase());
        for (t, n) in [
            ("Mistral API error (503): upstream connect error", 503),
            ("OpenAI API error (429): Rate limit reached", 429),
            ("Azure OpenAI API error (500): boom", 500),
            ("llama.cpp error (502): bad gateway", 502),
            ("503: {\"message\":\"unavailable\"}", 503),
            ("502 Bad Gateway: upstream (server_error)", 502),
            ("Error Code 503: overloaded", 503),
            ("HTTP request failed. status=503; url=x; body=y", 503),
            ("Request failed with status 504", 504),
            ("Classifier returned 503", 503),
            ("OpenAI Codex token refresh failed (401): nope", 401),
            ("xAI OAuth refresh failed (HTTP 503): x", 503),
            ("Kimi Code device token request failed (status 500): x", 500),
        ] {
            assert_eq!(s(t), Some(n), "{t}");
        }
        for t in [
            "tool failed (127): exit",
            "error (2024): in the year",
            "returned 1234 rows",
            "it returned 200",
        ] {
            assert_eq!(s(t), None, "{t}");
        }
        let e = api_error(
            Some("Mistral API error (503): upstream connect error"),
            StopReason::Error,
        )
        .unwrap();
        assert_eq!((e.kind, e.status), (ApiErrorKind::Server, Some(503)));
    }

    #[test]
    fn retry_attempts() {
        let r = |t: &str| retry_attempt(&t.to_ascii_lowercase());
        assert_eq!(r("Aborted after 3 retry attempts"), Some(3));
        assert_eq!(r("failed after 2 retries"), Some(2));
        assert_eq!(r("retry attempt 4 of 5"), Some(4));
        assert_eq!(r("Connection error."), None);
    }

    #[test]
    fn failures_are_recognized_only_by_pi_texts() {
        let f = failure_of(
            "Auto-compaction failed: Summarization failed: 429 rate limit",
            false,
        )
        .unwrap();
        assert_eq!(
            (f.trigger, f.failure, f.summarization),
            (Trigger::Threshold, "auto_compaction", Some("history"))
        );
        assert_eq!((f.kind, f.status), (ApiErrorKind::RateLimit, Some(429)));
        assert!(failure_of("500 upstream compaction failed: x", false).is_none());
        assert!(failure_of("prompt is too long", false).is_none());
        let f = failure_of("Context overflow: compaction failed. Your input may be too large for the context window.", false).unwrap();
        assert_eq!(
            (f.trigger, f.kind),
            (Trigger::Overflow, ApiErrorKind::Other)
        );
    }

    #[test]
    fn api_errors_need_a_failed_stop_or_an_error_text() {
        let e = |t: Option<&str>, stop| api_error(t, stop).map(|e| (e.kind, e.status, e.retry));
        assert_eq!(e(None, StopReason::Stop), None);
        assert_eq!(e(Some(""), StopReason::ToolUse), None);
        assert_eq!(
            e(None, StopReason::Aborted),
            Some((ApiErrorKind::Aborted, None, None))
        );
        assert_eq!(
            e(None, StopReason::Error),
            Some((ApiErrorKind::Other, None, None))
        );
        assert_eq!(
            e(Some("429 Too Many Requests, retry 2/3"), StopReason::Error),
            Some((ApiErrorKind::RateLimit, Some(429), Some(2)))
        );
        assert_eq!(
            e(Some("prompt is too long"), StopReason::Error),
            Some((ApiErrorKind::ContextOverflow, None, None))
        );
        assert_eq!(
            e(Some("prompt is too long"), StopReason::Aborted),
            Some((ApiErrorKind::Aborted, None, None))
        );
    }

    #[test]
    fn an_overflow_error_needs_stop_reason_error() {
        assert!(is_pi073_overflow_error(
            StopReason::Error,
            Some("Prompt is too long")
        ));
        assert!(!is_pi073_overflow_error(
            StopReason::Length,
            Some("prompt is too long")
        ));
        assert!(!is_pi073_overflow_error(
            StopReason::Error,
            Some("500 internal error")
        ));
        assert!(!is_pi073_overflow_error(StopReason::Error, None));
        // Pi 1.6.0's, not 0.73.1's.
        assert!(!is_pi073_overflow_error(
            StopReason::Error,
            Some("Range of input length should be [1, 129024]")
        ));
        assert!(is_pi16_overflow_error(
            StopReason::Error,
            Some("Range of input length should be [1, 129024]"),
            None
        ));
    }
}
