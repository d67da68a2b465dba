//! The error texts Pi 1.6.0 takes for a context overflow: the patterns of pi-ai 1.6.0's
//! `isContextOverflow` (`dist/utils/overflow.js`: `OVERFLOW_PATTERNS`, minus the texts its
//! `NON_OVERFLOW_PATTERNS` exclude, plus Cerebras' body-less 400/413 for provider `cerebras`),
//! written out by hand: each regular expression there is one clause here, in its order. The
//! text is matched lowercased (the expressions are case-insensitive). Pi 1.6.0 recovers from
//! such an error by compacting (reason `overflow`); from any other error it does not.

/// The end of a run of ASCII digits (and commas, when `commas`) starting at `i`, when the run
/// is not empty.
fn digits_end(b: &[u8], i: usize, commas: bool) -> Option<usize> {
    let n = b[i.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit() || (commas && **c == b','))
        .count();
    (n > 0).then_some(i + n)
}

/// Whether `l` has `before`, then digits (commas too when `commas`), then `after`.
fn number_between(l: &str, before: &str, commas: bool, after: &str) -> bool {
    let b = l.as_bytes();
    l.match_indices(before).any(|(i, _)| {
        digits_end(b, i + before.len(), commas).is_some_and(|j| l[j..].starts_with(after))
    })
}

/// `exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))`
fn exceeds_maximum_context_length(l: &str) -> bool {
    const LEADS: [&str; 6] = [
        "exceeds ",
        "exceeds the ",
        "exceeds model's ",
        "exceeds models ",
        "exceeds the model's ",
        "exceeds the models ",
    ];
    let b = l.as_bytes();
    l.match_indices("maximum context length").any(|(i, m)| {
        if !LEADS.iter().any(|lead| l[..i].ends_with(lead)) {
            return false;
        }
        let rest = i + m.len();
        let of = l[rest..].starts_with(" of ")
            && digits_end(b, rest + 4, true).is_some_and(|j| l[j..].starts_with(" token"));
        let ws = l[rest..].len() - l[rest..].trim_start().len();
        let paren = l[rest + ws..].starts_with('(')
            && digits_end(b, rest + ws + 1, true).is_some_and(|j| l[j..].starts_with(')'));
        of || paren
    })
}

/// `exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?`
fn exceeds_allowed_input_length(l: &str) -> bool {
    const M: &str = "maximum allowed input length of ";
    let b = l.as_bytes();
    l.match_indices(M).any(|(i, _)| {
        (l[..i].ends_with("exceeds ") || l[..i].ends_with("exceeds the "))
            && digits_end(b, i + M.len(), true).is_some_and(|j| l[j..].starts_with(" token"))
    })
}

/// `input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)`
fn input_longer_than_context(l: &str) -> bool {
    let b = l.as_bytes();
    l.match_indices("input (").any(|(i, m)| {
        let Some(j) = digits_end(b, i + m.len(), false) else {
            return false;
        };
        let Some(rest) = l[j..].strip_prefix(" tokens) is longer than the model") else {
            return false;
        };
        let rest = rest
            .strip_prefix("'s")
            .or_else(|| rest.strip_prefix('s'))
            .unwrap_or(rest);
        let Some(rest) = rest.strip_prefix(" context length (") else {
            return false;
        };
        let k = l.len() - rest.len();
        digits_end(b, k, false).is_some_and(|e| l[e..].starts_with(" tokens)"))
    })
}

/// `prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?`
fn prompt_has_configured_size(l: &str) -> bool {
    const M: &str = "prompt has ";
    const MID: &str = ", but the configured context size is ";
    let b = l.as_bytes();
    l.match_indices(M).any(|(i, _)| {
        let Some(j) = digits_end(b, i + M.len(), true) else {
            return false;
        };
        let rest = &l[j..];
        let Some(rest) = rest
            .strip_prefix(" tokens")
            .or_else(|| rest.strip_prefix(" token"))
        else {
            return false;
        };
        let Some(rest) = rest.strip_prefix(MID) else {
            return false;
        };
        let k = l.len() - rest.len();
        digits_end(b, k, true).is_some_and(|e| l[e..].starts_with(" token"))
    })
}

/// `input token count.*exceeds the maximum` (`.` stops at a line end).
fn input_token_count_exceeds(l: &str) -> bool {
    l.lines().any(|line| {
        line.find("input token count")
            .is_some_and(|i| line[i..].contains("exceeds the maximum"))
    })
}

/// `^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))`
fn http_413(l: &str) -> bool {
    if let Some(rest) = l.strip_prefix("413") {
        if rest.is_empty() || rest.starts_with(':') || rest.starts_with(char::is_whitespace) {
            return true;
        }
    }
    l.match_indices(" api error (413):").any(|(i, _)| {
        i > 0
            && l.as_bytes()[..i]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b' ' | b'-'))
    })
}

/// Cerebras' `^4(?:00|13)\s*(?:status code)?\s*\(no body\)`.
fn cerebras_bodyless(l: &str) -> bool {
    let Some(rest) = l.strip_prefix("400").or_else(|| l.strip_prefix("413")) else {
        return false;
    };
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix("status code")
        .unwrap_or(rest)
        .trim_start();
    rest.starts_with("(no body)")
}

/// Whether the error text `l` (lowercased) is a rate limit or an unavailable service, which
/// both Pi 0.73.1 and 1.6.0 never take for an overflow, whatever else it says.
pub(super) fn is_throttling_text(l: &str) -> bool {
    l.starts_with("throttling error:")
        || l.starts_with("service unavailable:")
        || l.contains("rate limit")
        || l.contains("too many requests")
}

/// Whether Pi 1.6.0 takes the error text `l` (lowercased) of a message from `provider` for a
/// context overflow.
pub(super) fn is_overflow_text(l: &str, provider: Option<&str>) -> bool {
    if is_throttling_text(l) {
        return false;
    }
    const PLAIN: &[&str] = &[
        "prompt too long",
        "prompt is too long",
        "prompt exceeds max length",
        "request_too_large",
        "input is too long for requested model",
        "exceeds the context window",
        "context window exceeded",
        "reduce the length of the messages",
        "exceeds the available context size",
        "greater than the context length",
        "context window exceeds limit",
        "exceeded model token limit",
        "model_context_window_exceeded",
        "range of input length should be",
        "context_length_exceeded",
        "context_length exceeded",
        "context length_exceeded",
        "context length exceeded",
        "too many tokens",
        "token limit exceeded",
    ];
    PLAIN.iter().any(|p| l.contains(p))
        || exceeds_maximum_context_length(l)
        || input_token_count_exceeds(l)
        || number_between(l, "maximum prompt length is ", false, "")
        || number_between(l, "maximum context length is ", false, " tokens")
        || exceeds_allowed_input_length(l)
        || input_longer_than_context(l)
        || number_between(l, "exceeds the limit of ", false, "")
        || number_between(
            l,
            "too large for model with ",
            false,
            " maximum context length",
        )
        || prompt_has_configured_size(l)
        || http_413(l)
        || (provider == Some("cerebras") && cerebras_bodyless(l))
}

/// Whether Pi 0.73.1 takes the error text `l` (lowercased) for a context overflow: the
/// patterns of pi-ai 0.73.1's `isContextOverflow` (`dist/utils/overflow.js`, `OVERFLOW_PATTERNS`
/// minus what its `NON_OVERFLOW_PATTERNS` exclude), one clause each in its order. Fewer than
/// 1.6.0's, and its Cerebras pattern (body-less 400/413) holds for any provider. Pi 0.73.1's
/// `AgentSession._checkCompaction` compacts for overflow (and retries) after such an error of
/// the model in effect, and after no other error text.
pub(super) fn is_overflow_text_pi073(l: &str) -> bool {
    if is_throttling_text(l) {
        return false;
    }
    const PLAIN: &[&str] = &[
        "prompt is too long",
        "request_too_large",
        "input is too long for requested model",
        "exceeds the context window",
        "reduce the length of the messages",
        "exceeds the available context size",
        "greater than the context length",
        "context window exceeds limit",
        "exceeded model token limit",
        "model_context_window_exceeded",
        "prompt too long; exceeded context length",
        "prompt too long; exceeded max context length",
        "context_length_exceeded",
        "context_length exceeded",
        "context length_exceeded",
        "context length exceeded",
        "too many tokens",
        "token limit exceeded",
    ];
    PLAIN.iter().any(|p| l.contains(p))
        || input_token_count_exceeds(l)
        || number_between(l, "maximum prompt length is ", false, "")
        || number_between(l, "maximum context length is ", false, " tokens")
        || number_between(l, "exceeds the limit of ", false, "")
        || number_between(
            l,
            "too large for model with ",
            false,
            " maximum context length",
        )
        || cerebras_bodyless(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pi16(t: &str) -> bool {
        is_overflow_text(&t.to_lowercase(), Some("faux"))
    }

    /// The examples of pi-ai 1.6.0's comments, one or more per pattern (the same texts the
    /// truth script checks against pi-ai itself).
    #[test]
    fn every_pattern_of_pi_ai_1_6_0_matches_its_example() {
        for t in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            r#"{"code":"1261","message":"Prompt exceeds max length"}"#,
            r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "Input is too long for requested model.",
            "Your input exceeds the context window of this model",
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "litellm.ContextWindowExceededError: Context Window exceeded for given call.",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens",
            "Input length 140000 exceeds the maximum allowed input length of 131,072 tokens.",
            "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
            "prompt token count of 140000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Prompt contains 140000 tokens, too large for model with 131072 maximum context length",
            "Prompt has 140,000 tokens, but the configured context size is 131,072 tokens",
            "model_context_window_exceeded",
            "prompt too long; exceeded max context length by 1200 tokens",
            "Range of input length should be [1, 129024]",
            "context length exceeded",
            "too many tokens",
            "token limit exceeded",
            r#"github-copilot API error (413): {"message":"failed to parse request","code":""}"#,
            "413: payload too large",
        ] {
            assert!(pi16(t), "{t}");
        }
    }

    #[test]
    fn near_misses_and_exclusions_are_no_overflow() {
        for t in [
            "ThrottlingException: Too many tokens, please wait before trying again. rate limit",
            "Throttling error: too many tokens",
            "429 Too Many Requests",
            "This model's maximum context length is 131072",
            "maximum context length of 131072 tokens",
            "exceeds the maximum context length of many tokens",
            "input token count\nexceeds the maximum",
            "error 413",
            "4130 things",
            "my/api API error (413): x",
            "400 status code (no body)",
        ] {
            assert!(!pi16(t), "{t}");
        }
        assert!(is_overflow_text(
            "400 status code (no body)",
            Some("cerebras")
        ));
        assert!(is_overflow_text("413 (no body)", Some("cerebras")));
    }

    fn pi073(t: &str) -> bool {
        is_overflow_text_pi073(&t.to_lowercase())
    }

    /// The examples of pi-ai 0.73.1's comments (and each pattern's own words for its generic
    /// fallbacks), the texts `scripts/pi-truth/truth.mjs --pi 0.73.1` checks against pi-ai
    /// 0.73.1 itself; and texts only 1.6.0 takes for an overflow, which 0.73.1 does not.
    #[test]
    fn pi_ai_0_73_1_patterns_and_only_those() {
        for t in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "Input is too long for requested model.",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens",
            "prompt token count of 140000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
            "model_context_window_exceeded",
            "prompt too long; exceeded max context length by 1200 tokens",
            "prompt too long; exceeded context length by 1200 tokens",
            "context_length_exceeded",
            "too many tokens",
            "token limit exceeded",
            "400 status code (no body)",
            "413 (no body)",
        ] {
            assert!(pi073(t), "{t}");
        }
        for t in [
            r#"{"code":"1261","message":"Prompt exceeds max length"}"#,
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "litellm.ContextWindowExceededError: Context Window exceeded for given call.",
            "Input length 140000 exceeds the maximum allowed input length of 131072 tokens.",
            "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
            "Prompt has 140000 tokens, but the configured context size is 131072 tokens",
            "Range of input length should be [1, 129024]",
            r#"github-copilot API error (413): {"message":"failed to parse request","code":""}"#,
            "Input length (265330) exceeds model's maximum context length (262144).",
            "prompt too long",
            "Throttling error: too many tokens",
            "429 Too Many Requests: token limit exceeded",
        ] {
            assert!(!pi073(t), "{t}");
        }
    }
}
