//! Rewriting one record: the JSON walked member by member and written again, structure,
//! keys, numbers, booleans, ids, types, names and times copied as their input text, free text
//! replaced (a placeholder, or the text masked with `--keep-text`), paths given pseudonyms,
//! signatures dropped. What each member is comes from where it stands (the entry's type, the
//! message's role, the content block's type): [`Act`] says what is done with it.

use super::ids::Renames;
use super::mask::{found_in_text, Also, Masker, Span, KEYS_REMEMBERED, USAGE_KEYS};
use super::paths::{looks_like_path, Pseudonyms};
use super::placeholder::{
    image_size, is_nested_placeholder, is_placeholder, of_image, of_text, push_placeholder, Size,
    TextKind,
};
use super::retime::shifted;
use super::tally::Tally;
use super::written::Written;
use crate::hash::{hash_str, FastMap};
use crate::json::{self, Element, Raw, TextCounts};
use crate::output::{push_escaped, push_value, write_str};
use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::ops::Range;

/// Nesting deeper than this inside tool arguments, details or extension data is replaced by
/// one placeholder (the walk recurses; Pi's own records are a few levels deep).
const MAX_DEPTH: usize = 128;

/// What is done with one member's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    /// Copied as it is (ids, types, roles, stop reasons, numbers, flags).
    Keep,
    /// A name someone chose (a provider, a model, a tool, an extension's type): copied as it
    /// is, unless it holds a path, a credential or an e-mail address ([`Rewriter::name`]).
    Name,
    /// Left out (signatures, encrypted reasoning).
    Drop,
    /// Free text: a placeholder, or masked with `--keep-text`; a non-string is walked as data.
    Text(TextKind),
    /// A message's content: a string, or an array of blocks whose text is of this kind.
    Content(TextKind),
    /// Text a tool classifies (a provider's error message): kept, masked, in every mode.
    Masked,
    /// A path: its pseudonym.
    Path,
    /// A session's working directory: its pseudonym, which also names its sessions folder.
    Cwd,
    /// Data: keys and value types kept, strings replaced, except the labels of its kind.
    Data(Labels),
    /// A message object.
    Message,
    /// A timestamp: moved with `--shift-time`.
    Time,
    /// An entry id or a reference to one: renamed with `--rename-ids`.
    Id,
    /// The session header's id: renamed with `--rename-ids`.
    SessionId,
    /// An image block's data: the placeholder [`Rewriter::image`] holds (data otherwise).
    ImageData,
}

/// Which strings of data are labels, kept as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Labels {
    /// None (tool arguments, extension data).
    None,
    /// Compaction and branch summary details: short identifiers under `trigger`, `reason`, ...
    Details,
    /// A tool result's `nestedCalls` (Pi 1.x): each call's `id`, `name`, `status`.
    NestedCalls,
    /// A `usage` object pi-usage reads (its `cost` too): its members' names are field names,
    /// which pi-usage reports (`other`'s sums), so any name is kept unless the masker finds
    /// something in it; its strings are data. Only where pi-usage reads one: an assistant or
    /// tool result message's `usage`, a `usage`, `model_usage`, `compaction` or
    /// `branch_summary` entry's, an oh-my-pi `task` tool result's `details.usage`; a `usage`
    /// anywhere else (tool arguments, extension data) is data like any other.
    Usage,
    /// An oh-my-pi `task` tool result's `details`: its `usage` is [`Labels::Usage`], the rest
    /// data ([`Labels::None`]).
    TaskDetails,
    /// With `--keep-text`, the value of a member whose key names a credential
    /// ([`names_a_credential`]): each string of it masked whole, `[secret:keyed]`.
    Credential,
}

/// The mask of a string under a key that names a credential.
const KEYED: &str = "[secret:keyed]";

/// Whether a key of data names a credential (its value is masked whole with `--keep-text`):
/// its last word, or its last two, is a credential's name. Words are split at `_`, `-`, `.`,
/// blanks and other signs, at a lower-case letter followed by a capital, and before the last
/// capital of a run followed by a lower-case letter (`DB_PASSWORD`, `apiKey`, `X-Api-Key`,
/// `APIKey`), digits left out, case ignored. The last word decides because it is what the
/// key names: `passwordFile` is a file, `authorName` a name, `maxTokens` and `input_tokens`
/// counts, `key` alone (a key pressed, a sort key) no credential. A last word that only ends
/// with `password`, `passwd`, `secret` or `token` (`PGPASSWORD`, `csrftoken`: names glued
/// without a separator) names one too, and so does a last word of capitals that ends with
/// `PASS` (`PGPASS`, `SMTPPASS`; not `BYPASS` nor [`NOT_PASSWORDS`]'s others). Kept text
/// names credentials the same way ([`super::find::keyed_at_sign`]).
pub(super) fn names_a_credential(key: &str) -> bool {
    if key.is_ascii() {
        let (last, second) = last_two_words(key.as_bytes());
        return credential_words(last, second);
    }
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = key.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphabetic() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let starts = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if starts && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        // ASCII as it is (its case is asked: `PGPASS`), the rest folded (the Kelvin sign
        // is a `k`).
        if c.is_ascii() {
            word.push(c);
        } else {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let last = |n: usize| words.len().checked_sub(n).map(|i| words[i].as_bytes());
    credential_words(last(1), last(2))
}

/// The last two words of an ASCII key, split as [`names_a_credential`] splits them (read
/// back from its end, with no allocation: kept text asks for every name before a `=` or a
/// `:` that ends as a credential's does).
fn last_two_words(k: &[u8]) -> (Option<&[u8]>, Option<&[u8]>) {
    // A word starts at `i` (a letter after a letter): a capital after a lower-case letter, or
    // the last capital of a run followed by a lower-case letter.
    let starts = |i: usize| {
        k[i].is_ascii_uppercase()
            && (k[i - 1].is_ascii_lowercase()
                || k[i - 1].is_ascii_uppercase()
                    && k.get(i + 1).is_some_and(u8::is_ascii_lowercase))
    };
    let word_before = |end: usize| {
        let e = k[..end].iter().rposition(u8::is_ascii_alphabetic)? + 1;
        let mut s = e - 1;
        while s > 0 && k[s - 1].is_ascii_alphabetic() && !starts(s) {
            s -= 1;
        }
        Some((s, e))
    };
    let Some((s1, e1)) = word_before(k.len()) else {
        return (None, None);
    };
    (Some(&k[s1..e1]), word_before(s1).map(|(s, e)| &k[s..e]))
}

/// Whether a key whose last word is `last` (and the one before it `second`) names a
/// credential ([`names_a_credential`]); case ignored.
pub(super) fn credential_words(last: Option<&[u8]>, second: Option<&[u8]>) -> bool {
    let is = |w: Option<&[u8]>, names: &[&str]| {
        w.is_some_and(|w| names.iter().any(|n| w.eq_ignore_ascii_case(n.as_bytes())))
    };
    let one = is(
        last,
        &[
            "password",
            "passwords",
            "passwd",
            "pass",
            "pwd",
            // `PW=V`, `DB_PW`, `pw:` (a word of its own only: `npw` is none).
            "pw",
            "passphrase",
            "secret",
            "secrets",
            "token",
            "auth",
            "authorization",
            "credential",
            "credentials",
            "cookie",
            "cookies",
            "bearer",
            "apikey",
            "accesskey",
            "privatekey",
            // A wallet's seed phrase.
            "mnemonic",
        ],
    );
    let two = is(last, &["key"])
        && is(
            second,
            &[
                "api",
                "access",
                "private",
                "secret",
                "auth",
                "session",
                "encryption",
                "signing",
                "master",
                "client",
                // Azure's storage `AccountKey`; New Relic's `license_key`.
                "account",
                "license",
                // Azure API Management's `Ocp-Apim-Subscription-Key`.
                "subscription",
                // A wireless network's key.
                "wpa",
                "wep",
                "wifi",
            ],
        );
    let phrase = is(last, &["phrase"]) && is(second, &["seed", "recovery"]);
    // Rails' `secret_key_base`.
    let key_base = is(last, &["base"]) && is(second, &["key"]);
    let glued = last.is_some_and(|w| {
        ["password", "passwd", "secret", "token"].iter().any(|end| {
            w.len() > end.len() && w[w.len() - end.len()..].eq_ignore_ascii_case(end.as_bytes())
        })
    });
    // An environment variable's `PGPASS`, `SMTPPASS`: capitals only, not an English word.
    let capitals_pass = last.is_some_and(|w| {
        w.len() > 4
            && w.ends_with(b"PASS")
            && w.iter().all(u8::is_ascii_uppercase)
            && !NOT_PASSWORDS.contains(&w)
    });
    one || two || phrase || key_base || glued || capitals_pass
}

/// Words that end with `PASS` and name no password.
const NOT_PASSWORDS: &[&[u8]] = &[
    b"BYPASS",
    b"COMPASS",
    b"SURPASS",
    b"TRESPASS",
    b"ENCOMPASS",
    b"OVERPASS",
    b"UNDERPASS",
    b"FIRSTPASS",
    b"MULTIPASS",
    b"ONEPASS",
    b"TWOPASS",
    b"SINGLEPASS",
];

/// Whether an object's `name` or `key` member (in any case) is a string that names a
/// credential ([`names_a_credential`]): a variable written as a pair, whose `value` member is
/// the credential (`{"name":"DB_PASSWORD","value":"V"}`, as Kubernetes and ECS write an
/// environment, and lists of headers `{"key":"X-Api-Key","value":"V"}`).
fn names_a_credential_pair(object: Raw<'_>, utf8: bool) -> bool {
    let mut named = false;
    object.for_each_field(|k, v| {
        named = named
            || (k.eq_ignore_ascii_case(b"name") || k.eq_ignore_ascii_case(b"key"))
                && v.first() == Some(&b'"')
                && str_of(&v, utf8).is_some_and(|s| names_a_credential(&s));
    });
    named
}

/// Member names that hold signatures or encrypted reasoning, dropped wherever they stand.
fn is_signature(key: &str) -> bool {
    matches!(
        key,
        "thinkingSignature"
            | "textSignature"
            | "thoughtSignature"
            | "signature"
            | "encrypted_content"
            | "encryptedContent"
    )
}

/// Input text of a record that is not valid UTF-8, copied with its bad bytes replaced
/// ([`push_value`]): out of line, where the copy of a valid record is inline.
#[inline(never)]
fn push_checked(out: &mut Vec<u8>, text: &[u8]) {
    push_value(out, text);
}

/// Writes the array `raw`, each element as `element` writes it.
fn write_array(raw: Raw<'_>, out: &mut Vec<u8>, mut element: impl FnMut(Raw<'_>, &mut Vec<u8>)) {
    out.push(b'[');
    let mut first = true;
    raw.for_each_element(|el| {
        if !first {
            out.push(b',');
        }
        first = false;
        element(el, out);
    });
    out.push(b']');
}

/// An object's members, raw key (between its quotes) and value, in order: read in one pass,
/// where looking one up and then walking them all would read the object twice.
pub type Members<'a> = Vec<Member<'a>>;

pub use crate::reader::{recycle, Member};

/// The members of the object `raw`.
pub fn members(raw: Raw<'_>) -> Members<'_> {
    let mut m = Vec::new();
    raw.for_each_field(|k, v| m.push((k, v)));
    m
}

/// The value of the last member named `key` (the one `JSON.parse` keeps): [`json::key_is`],
/// with the backslash a longer key needs looked for by [`has_backslash`].
fn last<'a>(members: &[Member<'a>], key: &str) -> Option<Raw<'a>> {
    members
        .iter()
        .rev()
        .find(|(k, _)| {
            short_eq(k, key.as_bytes())
                || k.len() > key.len() && has_backslash(k) && json::key_is(k, key)
        })
        .map(|&(_, v)| v)
}

/// `a == b`, for keys: up to 16 bytes compared as two overlapping words each, without the
/// call to `memcmp` a slice comparison makes (1.8-2.3 % of pi-redact's samples, most of it
/// for the names of members).
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let half = |s: &[u8], at: usize| u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
    match n {
        0..=3 => a == b,
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// Whether `b` holds a backslash. Keys are a few bytes long, and every member's is asked
/// ([`Rewriter::key_name`], [`last`]): up to 16 bytes are read as two overlapping words
/// and tested without a loop, where the byte loop for short slices took ~4 instructions a
/// byte.
#[inline]
fn has_backslash(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether a byte of `w` is a backslash: a zero byte of `w ^ 0x5c5c…`, found exactly.
    let any = |w: u64| {
        let v = w ^ (ONES * u64::from(b'\\'));
        v.wrapping_sub(ONES) & !v & HIGH != 0
    };
    let n = b.len();
    match n {
        0..=3 => b.contains(&b'\\'),
        4..=7 => {
            let word = |at: usize| {
                u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
                    | 0xffff_ffff << 32
            };
            any(word(0)) || any(word(n - 4))
        }
        8..=16 => {
            let word = |at: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[at..at + 8]);
                u64::from_le_bytes(w)
            };
            any(word(0)) || any(word(n - 8))
        }
        _ => memchr::memchr(b'\\', b).is_some(),
    }
}

/// [`last`], a string, decoded ([`str_of`]); empty when there is none.
fn last_str<'a>(members: &[Member<'a>], key: &str, utf8: bool) -> Cow<'a, str> {
    last(members, key)
        .and_then(|v| str_of(v.bytes(), utf8))
        .unwrap_or_default()
}

/// The string `raw`, decoded; `None` when it is not a string. `utf8`: its record is valid
/// UTF-8, so a string without escapes is its own text, taken as it is (no check, no copy).
fn str_of(raw: &[u8], utf8: bool) -> Option<Cow<'_, str>> {
    let body = raw.get(1..raw.len().wrapping_sub(1))?;
    if utf8 && raw.first() == Some(&b'"') && memchr::memchr(b'\\', body).is_none() {
        // SAFETY: the record is valid UTF-8 and the body lies between two of its quotes
        // (ASCII), so it is whole characters of it.
        return Some(Cow::Borrowed(unsafe {
            std::str::from_utf8_unchecked(body)
        }));
    }
    json::as_str(raw)
}

/// Where the object at `b[at]` ends, when it is a usage object [`Rewriter::usage_as_is`] copies
/// (holding at most `nest` more levels of them), each key (with its quotes) and each value but
/// an object noted by `note` as a range of `b`.
fn usage_members(
    b: &[u8],
    mut at: usize,
    nest: usize,
    note: &mut impl FnMut(usize, usize),
) -> Option<usize> {
    if b.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    if b.get(at) == Some(&b'}') {
        return Some(at + 1);
    }
    loop {
        if b.get(at) != Some(&b'"') {
            return None;
        }
        // The key, its closing quote and the colon: one of the keys (looked for among those
        // with its first letter, where finding the quote first cost a `memchr` call a key).
        let rest = b.get(at + 1..)?;
        let first = *rest.first()?;
        let key = USAGE_KEYS.iter().map(|k| k.as_bytes()).find(|k| {
            k[0] == first
                && rest.get(..k.len()).is_some_and(|r| short_eq(r, k))
                && rest.get(k.len()..k.len() + 2) == Some(b"\":")
        })?;
        note(at, at + key.len() + 2);
        at += key.len() + 3;
        let start = at;
        at = match *b.get(at)? {
            b'{' if nest > 0 => usage_members(b, at, nest - 1, note)?,
            b'-' | b'0'..=b'9' => {
                let digits = |c: &u8| matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-');
                at + b[at..].iter().take_while(|c| digits(c)).count()
            }
            b't' if b[at..].starts_with(b"true") => at + 4,
            b'f' if b[at..].starts_with(b"false") => at + 5,
            b'n' if b[at..].starts_with(b"null") => at + 4,
            _ => return None,
        };
        if b[start] != b'{' {
            note(start, at);
        }
        match b.get(at) {
            Some(b',') => at += 1,
            Some(b'}') => return Some(at + 1),
            _ => return None,
        }
    }
}

/// The entry types [`entry_act`] tells apart: an entry's type is matched once a record, not
/// once a member (a `match` on a pair of strings compared the type again for each member,
/// through calls to `bcmp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryType {
    Session,
    Compaction,
    BranchSummary,
    Usage,
    ModelUsage,
    ThinkingLevelChange,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    Title,
    Other,
}

impl EntryType {
    fn of(kind: &str) -> EntryType {
        match kind {
            "session" => EntryType::Session,
            "compaction" => EntryType::Compaction,
            "branch_summary" => EntryType::BranchSummary,
            "usage" => EntryType::Usage,
            "model_usage" => EntryType::ModelUsage,
            "thinking_level_change" => EntryType::ThinkingLevelChange,
            "custom" => EntryType::Custom,
            "custom_message" => EntryType::CustomMessage,
            "label" => EntryType::Label,
            "session_info" => EntryType::SessionInfo,
            "title" => EntryType::Title,
            _ => EntryType::Other,
        }
    }
}

/// What a top-level member of an entry of type `kind` is.
fn entry_act(kind: EntryType, key: &str) -> Act {
    use EntryType::*;
    match (kind, key) {
        (Session, "id") => Act::SessionId,
        // oh-my-pi's `providerReplayThroughEntryId`: the last entry the provider's own
        // compaction carries.
        (
            _,
            "id"
            | "parentId"
            | "targetId"
            | "fromId"
            | "firstKeptEntryId"
            | "providerReplayThroughEntryId",
        ) => Act::Id,
        (_, "timestamp") => Act::Time,
        (_, "type") => Act::Keep,
        // Who was billed, on any entry that says (compaction, branch summary, usage entries).
        (_, "provider" | "model" | "modelId" | "responseModel") => Act::Name,
        (_, "api") => Act::Keep,
        (Session, "cwd") => Act::Cwd,
        (Session, "parentSession") => Act::Path,
        (Session, "version") => Act::Keep,
        (_, "message") => Act::Message,
        (ThinkingLevelChange, "thinkingLevel") => Act::Keep,
        // `fromExtension`: oh-my-pi's `fromHook`.
        (Compaction, "tokensBefore" | "fromHook" | "fromExtension" | "tokensAfter" | "method") => {
            Act::Keep
        }
        (Compaction, "shortSummary") => Act::Text(TextKind::Summary),
        (Compaction | BranchSummary, "summary") => Act::Text(TextKind::Summary),
        (Compaction, "systemMessage") => Act::Text(TextKind::Message),
        (Compaction | BranchSummary, "details") => Act::Data(Labels::Details),
        (Usage | ModelUsage | Compaction | BranchSummary, "usage") => Act::Data(Labels::Usage),
        (BranchSummary, "fromHook" | "fromExtension") => Act::Keep,
        (Custom | CustomMessage, "customType") => Act::Name,
        (Custom | CustomMessage, "display") => Act::Keep,
        (CustomMessage, "content") => Act::Content(TextKind::Message),
        (Label, "label") => Act::Text(TextKind::Label),
        (SessionInfo, "name") => Act::Text(TextKind::Name),
        (Usage, "kind") => Act::Keep,
        // oh-my-pi's title slot: its title is a name; the rest (version, source, time, the
        // padding spaces) says nothing private.
        (Title, "title") => Act::Text(TextKind::Name),
        (Title, "v" | "source" | "updatedAt" | "pad") => Act::Keep,
        // oh-my-pi's model calls outside the transcript: what they were for.
        (ModelUsage, "purpose" | "role" | "stopReason") => Act::Keep,
        (Usage, "note") => Act::Text(TextKind::Message),
        _ if is_signature(key) => Act::Drop,
        _ => Act::Data(Labels::None),
    }
}

/// What a member of a message with this role (and tool name, of a tool result) is.
fn message_act(role: &str, tool: &str, key: &str) -> Act {
    match key {
        "provider" | "model" | "responseModel" | "toolName" | "customType" => Act::Name,
        "role" | "stopReason" | "api" | "responseId" | "toolCallId" | "id" => Act::Keep,
        "fromId" | "firstKeptEntryId" => Act::Id,
        "timestamp" => Act::Time,
        "content" => Act::Content(match role {
            "user" => TextKind::Prompt,
            "assistant" => TextKind::Text,
            "toolResult" => TextKind::ToolOutput,
            _ => TextKind::Message,
        }),
        "errorMessage" => Act::Masked,
        "command" => Act::Text(TextKind::Command),
        "output" => Act::Text(TextKind::ToolOutput),
        "fullOutputPath" => Act::Path,
        "summary" => Act::Text(TextKind::Summary),
        "details" if matches!(role, "compactionSummary" | "branchSummary") => {
            Act::Data(Labels::Details)
        }
        "nestedCalls" => Act::Data(Labels::NestedCalls),
        "usage" if matches!(role, "assistant" | "toolResult") => Act::Data(Labels::Usage),
        "details" if role == "toolResult" && tool == "task" => Act::Data(Labels::TaskDetails),
        _ if is_signature(key) => Act::Drop,
        _ => Act::Data(Labels::None),
    }
}

/// The content blocks [`block_act`] tells apart (matched once a block, as [`EntryType`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockType {
    Text,
    Thinking,
    ToolCall,
    Image,
    RedactedThinking,
    Other,
}

impl BlockType {
    fn of(block: &str) -> BlockType {
        match block {
            "text" => BlockType::Text,
            "thinking" => BlockType::Thinking,
            "toolCall" => BlockType::ToolCall,
            "image" => BlockType::Image,
            "redacted_thinking" => BlockType::RedactedThinking,
            _ => BlockType::Other,
        }
    }
}

/// What a member of a content block of this type is (`kind`: the text's kind in this message).
fn block_act(block: BlockType, kind: TextKind, key: &str) -> Act {
    use BlockType::*;
    match (block, key) {
        (_, "type") => Act::Keep,
        (Text, "text") => Act::Text(kind),
        (Thinking, "thinking") => Act::Text(TextKind::Thinking),
        (ToolCall, "name" | "namespace") => Act::Name,
        (ToolCall, "id") => Act::Keep,
        (ToolCall, "arguments") => Act::Data(Labels::None),
        (Image, "mimeType") => Act::Keep,
        (Image, "data") => Act::ImageData,
        (RedactedThinking, "data") => Act::Drop,
        _ if is_signature(key) => Act::Drop,
        _ => Act::Data(Labels::None),
    }
}

/// Keys that name a path in tool arguments and details (their one-line string values get
/// pseudonyms, relative ones too).
fn names_a_path(key: &str) -> bool {
    let k = key.as_bytes();
    let is = |name: &str| k.eq_ignore_ascii_case(name.as_bytes());
    k.windows(4).any(|w| w.eq_ignore_ascii_case(b"path"))
        || k.len() >= 5 && k[k.len() - 5..].eq_ignore_ascii_case(b"files")
        || [
            "cwd",
            "dir",
            "directory",
            "file",
            "filename",
            "folder",
            "root",
        ]
        .into_iter()
        .any(is)
}

/// Keys of extension details whose short identifier values are labels, kept.
fn names_a_label(key: &str) -> bool {
    matches!(
        key,
        "trigger" | "reason" | "kind" | "type" | "status" | "mode" | "source"
    )
}

/// The most characters a placeholder has (`[tool output · 18,446,744,073,709,551,615 lines]`,
/// an image's with a long format): a longer text is none.
const PLACEHOLDER_MAX_CHARS: usize = 64;

/// The last answers of [`Rewriter::is_plain_key`] for identifier keys, one per slot chosen by
/// a key's length and three of its bytes: a key seen again (a tool's arguments name the same
/// few keys in every call) is answered by one comparison, without hashing it for
/// `keys_checked`. An answer is a function of the key alone, so a slot holds it until another
/// key takes the slot.
pub struct KeysRecent {
    slots: Vec<(String, bool)>,
}

impl Default for KeysRecent {
    fn default() -> Self {
        KeysRecent {
            slots: vec![(String::new(), false); KeysRecent::SLOTS],
        }
    }
}

impl KeysRecent {
    const SLOTS: usize = 256;

    #[inline]
    fn slot(name: &str) -> usize {
        let b = name.as_bytes();
        let Some((&first, &last)) = b.first().zip(b.last()) else {
            return 0;
        };
        let mix = u32::from(first)
            | u32::from(b[b.len() / 2]) << 8
            | u32::from(last) << 16
            | (b.len() as u32) << 24;
        (mix.wrapping_mul(0x9E37_79B1) >> 24) as usize % KeysRecent::SLOTS
    }

    /// The answer held for `name` in `slot`, if that slot holds it. An empty slot holds the
    /// empty string, which is not an identifier: answered `false`, as it is.
    #[inline]
    fn get(&self, slot: usize, name: &str) -> Option<bool> {
        let (held, plain) = &self.slots[slot];
        short_eq(held.as_bytes(), name.as_bytes()).then_some(*plain)
    }

    fn set(&mut self, slot: usize, name: &str, plain: bool) {
        let (held, answer) = &mut self.slots[slot];
        held.clear();
        held.push_str(name);
        *answer = plain;
    }
}

/// A key or label written as it is: a plain identifier (`file_path`, `old-string`), short.
fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// [`Masker::mask`] of `text`, and where each mask stands in it (`marks`, in order).
fn masked_with_marks(
    masker: &Masker,
    text: &str,
    paths: &mut Pseudonyms,
    also: &Also,
    ahead: Option<&[Span]>,
    found: impl FnMut(&'static str, &str),
    marks: &mut Vec<(usize, usize)>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    masker.masks(text, paths, also, ahead, found, |start, end, mask| {
        out.push_str(&text[at..start]);
        marks.push((out.len(), out.len() + mask.len()));
        out.push_str(mask);
        at = end;
    });
    out.push_str(&text[at..]);
    out
}

/// What the residual scan needs of the line being written: the input strings that were
/// replaced (none may appear in the output) and what the output holds on purpose: input text
/// copied (an id, a model name, a key) and what stands for replaced input (a placeholder, a
/// pseudonym, a mask). A replaced string found only inside one of those is no leak (a text
/// that is itself a placeholder, a path that is another path's pseudonym).
#[derive(Default)]
pub struct LineCheck {
    /// Replaced input strings of at least [`super::check::MIN_LEN`] characters.
    pub replaced: Vec<String>,
    /// Once `replaced` is long (a record of many paths), the place in it of the first string
    /// of each hash.
    pub(super) replaced_at: FastMap<u64, usize>,
    /// Replaced texts of at least [`super::check::MIN_LEN`] characters, as written in the
    /// record: the byte ranges of their string bodies (decoded only when the scan needs them)
    /// and their lengths in characters.
    pub replaced_in_record: Vec<(usize, usize, u64)>,
    /// Byte ranges of the output line written on purpose, in the order written: input text
    /// copied as it is, and what was written in place of input (placeholders, pseudonyms,
    /// masks, shifted times, new ids). Made of the run's own vocabulary, counts and input
    /// kept on purpose, such a range shows nothing of the input it stands for.
    pub on_purpose: Vec<(usize, usize)>,
    /// What kept text had masked (kind, original): a second rewrite masks these everywhere
    /// on the record ([`Rewriter::also`]).
    pub masked: Vec<(&'static str, String)>,
    /// Whether the record the ranges of `replaced_in_record` lie in is valid UTF-8.
    pub record_utf8: bool,
}

impl LineCheck {
    /// Adds `s` to `replaced` unless it is there already: a path or address masked many times
    /// on a line is looked for once. Looked up by hash once there are many, where looking
    /// through them all for each made a record of 20,000 paths take 0.3 s.
    fn note_replaced(&mut self, s: &str) {
        const LOOKED_THROUGH: usize = 32;
        let new = if self.replaced.len() < LOOKED_THROUGH {
            !self.replaced.iter().any(|r| r == s)
        } else {
            if self.replaced_at.is_empty() {
                for (i, r) in self.replaced.iter().enumerate() {
                    self.replaced_at.entry(hash_str(r)).or_insert(i);
                }
            }
            match self.replaced_at.entry(hash_str(s)) {
                Entry::Vacant(v) => {
                    v.insert(self.replaced.len());
                    true
                }
                // Another string of the same hash is looked for among them all.
                Entry::Occupied(o) => {
                    self.replaced[*o.get()] != s && !self.replaced.iter().any(|r| r == s)
                }
            }
        };
        if new {
            self.replaced.push(s.to_string());
        }
    }

    /// Emptied for another line (its vectors kept).
    fn clear(&mut self) {
        self.replaced.clear();
        self.replaced_at.clear();
        self.replaced_in_record.clear();
        self.on_purpose.clear();
        self.masked.clear();
    }
}

/// The rewriter of one run (its pseudonyms and secrets are shared by every file).
pub struct Rewriter<'r> {
    pub keep_text: bool,
    pub masker: &'r Masker,
    /// `None` for a record rewritten ahead of the reader: its paths are left as [`Hole`]s,
    /// which the reader fills in order ([`Rewriter::fill`]).
    pub paths: Option<&'r mut Pseudonyms>,
    pub tally: &'r mut Tally,
    /// What the current record replaced, added to `tally` by [`Rewriter::count`] once the
    /// record is done: a record rewritten twice (`Redactor::write`) counts once.
    counts: Tally,
    /// `--shift-time`, in milliseconds.
    pub shift: Option<i64>,
    /// `--rename-ids`.
    pub renames: Option<&'r mut Renames>,
    pub check: LineCheck,
    /// Strings to mask wherever they occur in kept text of this record, besides what the
    /// masker finds: set for a second rewrite of a record whose first one left a masked
    /// string unmasked in another of its texts (where no detector saw it).
    pub also: Also,
    /// The placeholder of the image block being written, for its `data`.
    image: Option<String>,
    /// Identifier keys of data the masker was asked about: whether it found anything.
    keys_checked: FastMap<String, bool>,
    /// The last answers of [`Rewriter::is_plain_key`], looked up before `keys_checked`.
    keys_recent: KeysRecent,
    /// Where the current record's text starts in memory (its strings are slices of it).
    record_start: usize,
    /// Whether anything of the current record was changed.
    changed: bool,
    /// Whether the current record is valid UTF-8 (then so is each of its strings, and its
    /// text is copied without checking it again).
    utf8: bool,
    /// The strings of the content block being written whose texts were counted as the block
    /// was read (the address of each one's opening quote, and its counts).
    counted: Vec<(usize, TextCounts)>,
    /// The vector a content block's members are read into, kept empty between arrays (an
    /// allocation and a free for each array were 0.3 % of the instructions).
    blocks: Vec<Member<'static>>,
    /// Kept text decoded where it is written as `write_str` writes it (its buffers reused).
    written: Written,
    /// The paths of the record left for the reader, in order (without a pseudonym table).
    pub holes: Vec<Hole>,
    /// What the patterns find in the record's kept texts (`--keep-text`): found here by a
    /// rewriter without a pseudonym table, ahead of the reader; given to the reader's.
    pub found: FoundAhead,
    /// The keys of the object being written that were replaced: what each was, and what was
    /// written for it ([`Rewriter::key`] keeps them distinct).
    keys_replaced: Vec<(String, String)>,
    /// The record needs the pseudonym table for more than its paths (text masked in every
    /// mode: a provider's error message): the reader rewrites it.
    pub needs_paths: bool,
}

/// A path of a record rewritten ahead of the reader: where its pseudonym goes in the output,
/// and where the string lies in the record.
#[derive(Debug, Clone, Copy)]
pub struct Hole {
    /// Where the pseudonym goes in the output written ahead.
    pub at: usize,
    /// The path's string as written (quotes included): `from..to` of the record.
    pub from: usize,
    pub to: usize,
    /// A session's working directory ([`Pseudonyms::cwd`]).
    pub cwd: bool,
}

/// A record as it was rewritten ahead of the reader ([`Rewriter::ahead`]), for
/// [`Rewriter::fill`]: its output with a hole for each path, and what the rewriter noted.
pub struct Holed<'d> {
    pub out: &'d [u8],
    pub holes: &'d [Hole],
    pub changed: bool,
    /// Written whole and checked: `out` is the line to write (the other members are empty).
    pub whole: bool,
    pub tally: &'d [(&'static str, u64)],
    pub on_purpose: &'d [(usize, usize)],
    pub replaced: &'d [String],
    pub replaced_in_record: &'d [(usize, usize, u64)],
}

/// What the patterns find in a record's kept texts ([`found_in_text`]), found ahead of the
/// reader: for each text in which they find anything, where its string starts in the record,
/// and its spans.
#[derive(Default)]
pub struct FoundAhead {
    /// Whether the record's kept texts were all looked at (a text not among `texts` holds
    /// nothing the patterns find).
    pub known: bool,
    /// Each text's string's offset in the record, and its part of `spans`, by offset.
    pub texts: Vec<(usize, Range<usize>)>,
    pub spans: Vec<Span>,
}

impl FoundAhead {
    pub fn clear(&mut self) {
        self.known = false;
        self.texts.clear();
        self.spans.clear();
    }

    /// What the patterns found in the text whose string starts at `at`, if it was looked at.
    fn of(&self, at: usize) -> Option<&[Span]> {
        if !self.known {
            return None;
        }
        let i = self.texts.partition_point(|t| t.0 < at);
        match self.texts.get(i) {
            Some((t, range)) if *t == at => self.spans.get(range.clone()),
            _ => Some(&[]),
        }
    }

    /// Notes what the patterns find in the text whose string starts at `at`.
    fn add(&mut self, at: usize, text: &str) {
        let start = self.spans.len();
        self.spans.extend(found_in_text(text));
        if self.spans.len() > start {
            self.texts.push((at, start..self.spans.len()));
        }
    }
}

/// What a rewriter keeps from one record to the next: its buffers, and the masker's answers
/// for keys.
#[derive(Default)]
pub struct Scratch {
    check: LineCheck,
    keys_checked: FastMap<String, bool>,
    keys_recent: KeysRecent,
    counted: Vec<(usize, TextCounts)>,
    written: Written,
    holes: Vec<Hole>,
    found: FoundAhead,
    blocks: Vec<Member<'static>>,
}

impl<'r> Rewriter<'r> {
    pub fn new(
        keep_text: bool,
        masker: &'r Masker,
        paths: &'r mut Pseudonyms,
        tally: &'r mut Tally,
    ) -> Rewriter<'r> {
        Rewriter::with(keep_text, masker, Some(paths), tally, Scratch::default())
    }

    /// A rewriter without the pseudonym table, for records rewritten ahead of the reader,
    /// with the buffers of `scratch` ([`Rewriter::into_scratch`] gives them back). In the
    /// default mode their paths are left as [`Hole`]s; with `keep_text` what is written is
    /// of no use, and what the patterns find in kept text is noted instead ([`FoundAhead`]).
    pub fn ahead(
        keep_text: bool,
        masker: &'r Masker,
        tally: &'r mut Tally,
        scratch: Scratch,
    ) -> Rewriter<'r> {
        Rewriter::with(keep_text, masker, None, tally, scratch)
    }

    fn with(
        keep_text: bool,
        masker: &'r Masker,
        paths: Option<&'r mut Pseudonyms>,
        tally: &'r mut Tally,
        scratch: Scratch,
    ) -> Rewriter<'r> {
        Rewriter {
            keep_text,
            masker,
            paths,
            tally,
            counts: Tally::default(),
            shift: None,
            renames: None,
            check: scratch.check,
            also: Also::default(),
            image: None,
            keys_checked: scratch.keys_checked,
            keys_recent: scratch.keys_recent,
            record_start: 0,
            changed: false,
            utf8: false,
            counted: scratch.counted,
            written: scratch.written,
            holes: scratch.holes,
            found: scratch.found,
            blocks: scratch.blocks,
            needs_paths: false,
            keys_replaced: Vec::new(),
        }
    }

    /// The buffers and remembered answers, for the next rewriter.
    pub fn into_scratch(self) -> Scratch {
        Scratch {
            check: self.check,
            keys_checked: self.keys_checked,
            keys_recent: self.keys_recent,
            counted: self.counted,
            written: self.written,
            holes: self.holes,
            found: self.found,
            blocks: self.blocks,
        }
    }

    /// Writes the record `object` (an entry or a header of type `kind`) rewritten into `out`
    /// (cleared first), from its members as the reader found them (`top`), and those of its
    /// `message` object when the reader noted them. `known_utf8`: the reader found the record's
    /// line valid UTF-8 ([`Entry::is_utf8`]), so it is not checked again. `false` when nothing
    /// needed changing: the caller may copy the input.
    ///
    /// [`Entry::is_utf8`]: crate::reader::Entry::is_utf8
    pub fn record(
        &mut self,
        kind: &str,
        object: Raw<'_>,
        top: &[Member<'_>],
        message: Option<(Raw<'_>, &[Member<'_>])>,
        known_utf8: bool,
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        self.start(object, known_utf8);
        out.push(b'{');
        let outer = std::mem::take(&mut self.keys_replaced);
        let mut first = true;
        let kind = EntryType::of(kind);
        for &(key, value) in top {
            self.member(
                key,
                value,
                &mut first,
                out,
                0,
                |name| entry_act(kind, name),
                |rw, out| {
                    // The message the reader read: its members as it found them.
                    match message.filter(|(m, _)| m.bytes().as_ptr() == value.bytes().as_ptr()) {
                        Some((_, m)) => rw.message(m, out, 1),
                        None => rw.value(Act::Message, value, out, 1, "message"),
                    }
                },
            );
        }
        self.keys_replaced = outer;
        out.push(b'}');
        self.changed
    }

    /// Writes into `out` (cleared first) the record `object` as it was rewritten ahead of the
    /// reader without the pseudonym table (`done`), each of its holes filled in order with its
    /// path's pseudonym: what [`Rewriter::record`] writes and notes for the record, with the
    /// table as it stands. `false` when nothing needed changing.
    pub fn fill(
        &mut self,
        object: Raw<'_>,
        known_utf8: bool,
        done: &Holed<'_>,
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        self.start(object, known_utf8);
        self.changed = done.changed;
        self.counts.add_counts(done.tally);
        (self.check.replaced_in_record).extend_from_slice(done.replaced_in_record);
        // The strings replaced ahead come before the paths' here, where the walk may have met
        // them between: the order decides only which string a record's diagnostic counts,
        // and a record that leaks with a path replaced is rewritten again on the reader
        // (`Redactor::write`), whose second rewrite is the one that counts. They passed
        // `Rewriter::replaced`'s length test ahead.
        for s in done.replaced {
            self.check.note_replaced(s);
        }
        let (mut own, mut from) = (0, 0);
        for hole in done.holes.iter().map(Some).chain([None]) {
            let to = hole.map_or(done.out.len(), |h| h.at);
            // What was written ahead moves on by what the holes before it were filled with.
            let shift = out.len() - from;
            out.extend_from_slice(&done.out[from..to]);
            while let Some(&(a, b)) = done.on_purpose.get(own).filter(|k| k.1 <= to) {
                self.check.on_purpose.push((a + shift, b + shift));
                own += 1;
            }
            if let Some(h) = hole {
                self.path_of(
                    object.bytes().get(h.from..h.to).unwrap_or_default(),
                    out,
                    h.cwd,
                );
            }
            from = to;
        }
        self.changed
    }

    /// Adds what the record last rewritten replaced to the run's tally (once a record, however
    /// often it was rewritten).
    pub fn count(&mut self) {
        self.tally.add_counts(self.counts.counts());
        self.counts.clear();
    }

    /// Readies the rewriter for the record `object`.
    fn start(&mut self, object: Raw<'_>, known_utf8: bool) {
        self.counts.clear();
        self.check.clear();
        self.holes.clear();
        self.needs_paths = false;
        self.changed = false;
        self.record_start = object.bytes().as_ptr() as usize;
        self.utf8 = known_utf8 || simdutf8::basic::from_utf8(object.bytes()).is_ok();
        self.check.record_utf8 = self.utf8;
    }

    /// Writes an object of these members, each value treated as `act` says.
    fn members(
        &mut self,
        members: &[Member<'_>],
        out: &mut Vec<u8>,
        depth: usize,
        act: impl Fn(&str) -> Act,
    ) {
        out.push(b'{');
        let outer = std::mem::take(&mut self.keys_replaced);
        let mut first = true;
        for &(key, value) in members {
            self.member(key, value, &mut first, out, depth, &act, |rw, out| {
                rw.value(Act::Message, value, out, depth + 1, "message")
            });
        }
        self.keys_replaced = outer;
        out.push(b'}');
    }

    /// Writes one member of an object (after a comma unless it is the `first` written), its
    /// value treated as `act` says; a message by `message`.
    #[allow(clippy::too_many_arguments)]
    fn member(
        &mut self,
        key: &[u8],
        value: Raw<'_>,
        first: &mut bool,
        out: &mut Vec<u8>,
        depth: usize,
        act: impl Fn(&str) -> Act,
        message: impl FnOnce(&mut Self, &mut Vec<u8>),
    ) {
        let name = self.key_name(key);
        let a = act(&name);
        if a == Act::Drop {
            self.changed = true;
            self.counts.add("signature");
            return;
        }
        if !*first {
            out.push(b',');
        }
        *first = false;
        self.key(key, &name, a, out);
        if a == Act::Message && value.first() == Some(&b'{') {
            message(self, out);
        } else if !matches!(value.first(), Some(b'{' | b'['))
            && match a {
                Act::Keep => true,
                Act::Name => !self.masker.name_may_hold(&value),
                Act::Id => self.renames.is_none(),
                Act::Time => self.shift.is_none(),
                _ => false,
            }
        {
            // What `value` does with it, without the call (most members are kept as they are).
            self.keep(&value, out);
        } else {
            self.value(a, value, out, depth + 1, &name);
        }
    }

    /// A member's name: its key decoded.
    #[inline]
    fn key_name<'k>(&self, key: &'k [u8]) -> Cow<'k, str> {
        if self.utf8 && !has_backslash(key) {
            // SAFETY: the record is valid UTF-8 (`record` checked it) and a key is the text
            // between two of its quotes (ASCII), so whole characters of it.
            return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(key) });
        }
        json::decode_string_body(key)
    }

    /// Writes a message object of these members.
    fn message(&mut self, m: &[Member<'_>], out: &mut Vec<u8>, depth: usize) {
        let role = last_str(m, "role", self.utf8);
        let tool = last_str(m, "toolName", self.utf8);
        self.members(m, out, depth, |k| message_act(&role, &tool, k));
    }

    /// Whether a key of data is written as it is: an identifier in which the masker finds
    /// nothing. The masker's answer for each key is remembered (keys repeat on every record):
    /// here, without a lock, and by the masker for every rewriter of the run.
    fn is_plain_key(&mut self, name: &str) -> bool {
        let slot = KeysRecent::slot(name);
        if let Some(plain) = self.keys_recent.get(slot, name) {
            return plain;
        }
        let plain = self.is_plain_key_checked(name);
        if is_identifier(name) {
            self.keys_recent.set(slot, name, plain);
        }
        plain
    }

    /// [`Rewriter::is_plain_key`] without the recent answers.
    #[inline(never)]
    fn is_plain_key_checked(&mut self, name: &str) -> bool {
        // Only identifiers are remembered: a key found is one.
        if let Some(&found) = self.keys_checked.get(name) {
            return !found;
        }
        if !is_identifier(name) {
            return false;
        }
        let found = self.masker.key_finds_any(name);
        if self.keys_checked.len() < KEYS_REMEMBERED {
            self.keys_checked.insert(name.to_string(), found);
        }
        !found
    }

    /// Writes a member's key: as it is, but a key of data is replaced unless it is an
    /// identifier in which the masker finds nothing, and a key of a `usage` object when the
    /// masker finds something in it.
    #[inline(always)]
    fn key(&mut self, raw_key: &[u8], name: &str, act: Act, out: &mut Vec<u8>) {
        if let Act::Data(labels) = act {
            if self.key_is_replaced(name, labels) {
                return self.key_replaced(name, out);
            }
        }
        let start = out.len();
        out.push(b'"');
        self.copy(out, raw_key);
        out.push(b'"');
        self.check.on_purpose.push((start, out.len()));
        out.push(b':');
    }

    /// Whether [`Rewriter::key`] replaces a key of data. Out of line, as what follows: the
    /// common path (a key copied as it is) is inline in the walk of the members.
    #[inline(never)]
    fn key_is_replaced(&mut self, name: &str, labels: Labels) -> bool {
        match labels {
            Labels::Usage => !self.is_plain_key(name) && self.masker.key_finds_any(name),
            _ => !self.is_plain_key(name),
        }
    }

    /// [`Rewriter::key`] of a key it replaces: out of line, so that the common path (a key
    /// copied as it is) keeps a small frame.
    #[inline(never)]
    fn key_replaced(&mut self, name: &str, out: &mut Vec<u8>) {
        let mut found: Vec<(&'static str, String)> = Vec::new();
        // Where what stands for input lies in what is written: the placeholder, or each
        // mask (the rest of a masked key is the key as it is).
        let mut marks = Vec::new();
        let written = if self.keep_text {
            let Some(paths) = self.paths.as_deref_mut() else {
                self.needs_paths = true;
                return;
            };
            let note = |kind, orig: &str| found.push((kind, orig.to_string()));
            masked_with_marks(self.masker, name, paths, &self.also, None, note, &mut marks)
        } else if is_placeholder(TextKind::Key, name) {
            // Already a key's placeholder (a redacted file redacted again): kept.
            marks.push((0, name.len()));
            name.to_string()
        } else {
            found.push((TextKind::Key.name(), name.to_string()));
            let placeholder = of_text(TextKind::Key, name);
            marks.push((0, placeholder.len()));
            placeholder
        };
        for (kind, orig) in &found {
            self.counts.add(kind);
            self.replaced(orig);
        }
        self.changed |= !found.is_empty();
        let distinct = self.distinct_key(name, written.clone());
        if distinct != written {
            // Numbered: ` · 2` inside a closing bracket (a mask's or the placeholder's,
            // which takes it in) or after the key.
            let open = written
                .strip_suffix(']')
                .filter(|o| distinct.starts_with(o));
            match (open, marks.last_mut()) {
                (Some(_), Some(last)) if last.1 == written.len() => last.1 = distinct.len(),
                (Some(_), _) => {}
                _ if distinct.starts_with(&written) => {}
                _ => marks.clear(),
            }
        }
        self.write_marked(out, &distinct, &marks);
        out.push(b':');
    }

    /// What is written for the replaced key `name` of the object being written, `written`
    /// made distinct from what was written for its other replaced keys: two keys of one
    /// object whose placeholders (or masks) are the same would be one key to `JSON.parse`, so
    /// the second is numbered, `[key · 11 chars · 2]`. The same key written twice (a key
    /// repeated in the input) is written the same way twice.
    fn distinct_key(&mut self, name: &str, written: String) -> String {
        if let Some((_, w)) = self.keys_replaced.iter().find(|(n, _)| n == name) {
            return w.clone();
        }
        let taken = |w: &str, keys: &[(String, String)]| keys.iter().any(|(_, k)| k == w);
        let mut distinct = written.clone();
        let mut n = 1;
        while taken(&distinct, &self.keys_replaced) {
            n += 1;
            distinct = match written.strip_suffix(']') {
                Some(open) => format!("{open} · {n}]"),
                None => format!("{written} · {n}"),
            };
        }
        self.keys_replaced
            .push((name.to_string(), distinct.clone()));
        distinct
    }

    fn value(&mut self, act: Act, raw: Raw<'_>, out: &mut Vec<u8>, depth: usize, key: &str) {
        match act {
            // A member kept as written is a name, a number or a flag: an object or an array
            // there (which no writer of sessions puts) is data like any other, not copied
            // unread (`"provider":{"apiKey":"…"}`).
            Act::Keep | Act::Name if matches!(raw.first(), Some(b'{' | b'[')) => {
                self.data(raw, out, depth, key, Labels::None)
            }
            Act::Name if raw.first() == Some(&b'"') => self.name(raw, out),
            Act::Keep | Act::Name | Act::Drop => self.keep(&raw, out),
            Act::Text(kind) if raw.first() == Some(&b'"') => self.text(kind, raw, out),
            Act::Content(kind) => self.content(kind, raw, out, depth),
            Act::Masked if raw.first() == Some(&b'"') => self.masked(raw, out),
            Act::Path if raw.first() == Some(&b'"') => self.path(raw, out, false),
            Act::Cwd if raw.first() == Some(&b'"') => self.path(raw, out, true),
            Act::Message if raw.first() == Some(&b'{') => self.message(&members(raw), out, depth),
            Act::Data(Labels::Usage) if self.usage_as_is(&raw, out, depth) => {}
            Act::Data(labels) => {
                let labels = if self.keep_text && names_a_credential(key) {
                    Labels::Credential
                } else {
                    labels
                };
                self.data(raw, out, depth, key, labels)
            }
            Act::Time => self.time(raw, out),
            Act::Id | Act::SessionId => self.id(act, raw, out),
            Act::ImageData if self.image.is_some() => self.image_data(raw, out),
            _ => self.data(raw, out, depth, key, Labels::None),
        }
    }

    /// A timestamp, moved by `--shift-time` when it reads as one.
    fn time(&mut self, raw: Raw<'_>, out: &mut Vec<u8>) {
        match self.shift.and_then(|ms| shifted(&raw, ms)) {
            Some(t) if raw.first() == Some(&b'"') => {
                self.changed = true;
                self.write_own(out, &t);
            }
            Some(t) => {
                self.changed = true;
                let start = out.len();
                out.extend_from_slice(t.as_bytes());
                self.check.on_purpose.push((start, out.len()));
            }
            None => self.keep(&raw, out),
        }
    }

    /// An id or a reference to one, renamed by `--rename-ids` when it is a string.
    fn id(&mut self, act: Act, raw: Raw<'_>, out: &mut Vec<u8>) {
        let Some(renames) = self.renames.as_deref_mut() else {
            return self.keep(&raw, out);
        };
        // Keyed as Pi compares ids: two that differ only in lone surrogates get two names.
        let Some(id) = raw.as_key() else {
            return self.keep(&raw, out);
        };
        let new = if act == Act::SessionId {
            renames.session()
        } else {
            renames.entry(&id)
        };
        self.changed |= new.as_bytes() != &*id;
        self.write_own(out, &new);
    }

    /// A name kept as written (a provider, a model, a tool, an extension's type): as it is,
    /// unless it holds a secret the user named, a credential, an e-mail address or a path,
    /// which are masked in it as in kept text (a path gets its pseudonym). Masked or not, the
    /// name is written on purpose: the residual scan looks at it only for the named secrets.
    /// (A name that cannot hold any, [`Masker::name_may_hold`], is copied before this.)
    fn name(&mut self, raw: Raw<'_>, out: &mut Vec<u8>) {
        let name = str_of(&raw, self.utf8).unwrap_or_default();
        let spans = self.masker.name_spans(&name);
        if spans.is_empty() {
            return self.keep(&raw, out);
        }
        if let [span] = spans[..] {
            if span.is_whole_path(name.len()) {
                // A path and nothing more (a local model's file): written as a path is, a
                // hole ahead of the reader.
                return self.path(raw, out, false);
            }
        }
        let Some(paths) = self.paths.as_deref_mut() else {
            // Ahead of the reader: a path's pseudonym needs the table.
            self.needs_paths = true;
            return self.keep(&raw, out);
        };
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let note = |kind, orig: &str| found.push((kind, orig.to_string()));
        let masked = self.masker.mask_name(&name, spans, paths, note);
        if found.is_empty() {
            // Only paths that are their own pseudonyms (a file redacted again).
            return self.keep(&raw, out);
        }
        self.write_own(out, &masked);
        for (kind, orig) in found {
            self.counts.add(kind);
            self.replaced(&orig);
        }
        self.changed = true;
    }

    fn keep(&mut self, raw: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        self.copy(out, raw);
        self.check.on_purpose.push((start, out.len()));
    }

    /// Writes `s`, which stands for input (a placeholder, a pseudonym, a mask), as a JSON
    /// string, noted as written on purpose: the residual scan does not take what it holds
    /// for input left in (a text that is itself a placeholder, a path that is another path's
    /// pseudonym).
    fn write_own(&mut self, out: &mut Vec<u8>, s: &str) {
        let start = out.len();
        write_str(out, s);
        self.check.on_purpose.push((start, out.len()));
    }

    /// Writes `s` as a JSON string, its ranges `marks` (what stands for input in it: a
    /// placeholder, masks) noted as written on purpose, the rest not.
    fn write_marked(&mut self, out: &mut Vec<u8>, s: &str, marks: &[(usize, usize)]) {
        out.push(b'"');
        let mut at = 0;
        for &(a, b) in marks {
            push_escaped(out, &s[at..a]);
            let start = out.len();
            push_escaped(out, &s[a..b]);
            self.check.on_purpose.push((start, out.len()));
            at = b;
        }
        push_escaped(out, &s[at..]);
        out.push(b'"');
    }

    /// Copies input text of the record (checked once for the whole record). Inline: it is
    /// called for every key and kept value, and most of them are a few bytes.
    #[inline]
    fn copy(&self, out: &mut Vec<u8>, text: &[u8]) {
        if self.utf8 {
            out.extend_from_slice(text);
        } else {
            push_checked(out, text);
        }
    }

    /// Notes a replaced input string for the residual scan (which looks for it as it would
    /// be written inside a JSON string).
    fn replaced(&mut self, s: &str) {
        // A character is at most 4 bytes: long strings need no count.
        let min = super::check::MIN_LEN;
        let long = s.len() >= 4 * min || (s.len() >= min && s.chars().count() >= min);
        if long {
            self.check.note_replaced(s);
        }
    }

    /// Free text: its placeholder, or (`--keep-text`) the text masked.
    fn text(&mut self, kind: TextKind, raw: Raw<'_>, out: &mut Vec<u8>) {
        let body = raw
            .bytes()
            .get(1..raw.len().saturating_sub(1))
            .unwrap_or_default();
        if body.is_empty() {
            return self.keep(&raw, out);
        }
        if self.keep_text {
            return self.masked(raw, out);
        }
        // Already a placeholder of this kind, whatever its number (a redacted file redacted
        // again): kept, so that redacting twice writes what redacting once did. Only a text
        // as short as one can be is read (a character takes at most 6 bytes written).
        if body[0] == b'['
            && body.len() <= 6 * PLACEHOLDER_MAX_CHARS
            && str_of(&raw, self.utf8).is_some_and(|s| is_placeholder(kind, &s))
        {
            return self.keep(&raw, out);
        }
        // The placeholder needs only the text's size: read from the string as written, which
        // spares decoding (and copying) every replaced text.
        let counted = self.counted.iter().find(|c| c.0 == raw.as_ptr() as usize);
        let size = match (self.utf8, counted) {
            (true, Some(&(_, counts))) => Size::of_counts(counts, body),
            (true, None) => Size::of_utf8_json_body(body),
            (false, _) => Size::of_json_body(body)
                .unwrap_or_else(|| Size::of(&raw.as_str().unwrap_or_default())),
        };
        let start = out.len();
        out.push(b'"');
        push_placeholder(out, kind, size);
        out.push(b'"');
        self.check.on_purpose.push((start, out.len()));
        self.counts.add(kind.name());
        // The residual scan decodes the text only if the line can hold it.
        if size.chars >= super::check::MIN_LEN as u64 {
            let at = raw.bytes().as_ptr() as usize - self.record_start;
            self.check
                .replaced_in_record
                .push((at + 1, at + raw.len() - 1, size.chars));
        }
        self.changed = true;
    }

    /// A text in which the masker found nothing, written as it is. With `--keep-text` it is
    /// input like any kept text, not a part written on purpose: a string masked elsewhere on
    /// the record that it holds is a leak the residual scan finds (and the record's second
    /// rewrite masks). In the default mode it is a provider's error message, kept on purpose
    /// where every other text is a placeholder (it may repeat a text replaced beside it).
    fn unmasked(&mut self, raw: &[u8], out: &mut Vec<u8>) {
        if self.keep_text {
            self.copy(out, raw);
        } else {
            self.keep(raw, out);
        }
    }

    /// Text kept with its secrets, e-mail addresses and paths masked: written from its
    /// input as written when its escapes are those `write_str` writes ([`Written`]).
    fn masked(&mut self, raw: Raw<'_>, out: &mut Vec<u8>) {
        let at = raw.as_ptr() as usize - self.record_start;
        let body = raw.bytes().get(1..raw.len().wrapping_sub(1));
        let Some(paths) = self.paths.as_deref_mut() else {
            if self.keep_text {
                // Ahead of the reader: what the patterns find in the text the reader masks.
                match body.filter(|body| self.utf8 && self.written.read(body)) {
                    Some(_) => self.found.add(at, &self.written.text),
                    None => self
                        .found
                        .add(at, &str_of(&raw, self.utf8).unwrap_or_default()),
                }
            } else {
                self.needs_paths = true;
            }
            return self.keep(&raw, out);
        };
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let note = |kind, orig: &str| found.push((kind, orig.to_string()));
        let ahead = self.found.of(at);
        match body.filter(|body| self.utf8 && self.written.read(body)) {
            Some(body) => {
                let (masker, also) = (self.masker, &self.also);
                let marks = &mut self.check.on_purpose;
                let w = &mut self.written;
                if !w.write_masked(body, masker, paths, also, ahead, note, out, marks) {
                    return self.unmasked(&raw, out);
                }
            }
            None => {
                let s = str_of(&raw, self.utf8).unwrap_or_default();
                let mut marks = Vec::new();
                let (masker, also) = (self.masker, &self.also);
                let masked = masked_with_marks(masker, &s, paths, also, ahead, note, &mut marks);
                if found.is_empty() {
                    return self.unmasked(&raw, out);
                }
                self.write_marked(out, &masked, &marks);
            }
        }
        for (kind, orig) in found {
            self.counts.add(kind);
            self.replaced(&orig);
            if orig.chars().count() >= super::check::MIN_LEN {
                self.check.masked.push((kind, orig));
            }
        }
        self.changed = true;
    }

    /// A string under a key that names a credential (`--keep-text`): masked whole, whatever
    /// it holds (an empty string, or the mask itself, kept).
    fn keyed(&mut self, raw: Raw<'_>, out: &mut Vec<u8>) {
        let s = str_of(&raw, self.utf8).unwrap_or_default();
        if s.is_empty() || s == KEYED {
            return self.keep(&raw, out);
        }
        self.counts.add("keyed");
        // Learned in order, by the reader (a rewriter ahead of it has no table).
        if self.paths.is_some() {
            self.masker.learn("keyed", &s);
        }
        self.replaced(&s);
        if s.chars().count() >= super::check::MIN_LEN {
            self.check.masked.push(("keyed", s.to_string()));
        }
        self.changed = true;
        self.write_own(out, KEYED);
    }

    /// A path (a session's `cwd` with `cwd`): its pseudonym; ahead of the reader, a
    /// [`Hole`] for it.
    fn path(&mut self, raw: Raw<'_>, out: &mut Vec<u8>, cwd: bool) {
        if self.paths.is_none() {
            let from = raw.as_ptr() as usize - self.record_start;
            let to = from + raw.len();
            return self.holes.push(Hole {
                at: out.len(),
                from,
                to,
                cwd,
            });
        }
        self.path_of(&raw, out, cwd);
    }

    /// [`Rewriter::path`] of the path string written as `raw`, with the pseudonym table (the
    /// reader's: the rewriters ahead of it, which have none, leave a hole instead).
    fn path_of(&mut self, raw: &[u8], out: &mut Vec<u8>, cwd: bool) {
        let s = str_of(raw, self.utf8).unwrap_or_default();
        let Some(paths) = self.paths.as_deref_mut() else {
            return;
        };
        let p = if cwd { paths.cwd(&s) } else { paths.path(&s) };
        if p == *s {
            return self.keep(raw, out);
        }
        self.counts.add("path");
        self.replaced(&s);
        if s.chars().count() >= super::check::MIN_LEN {
            self.check.masked.push(("path", s.to_string()));
        }
        self.changed = true;
        self.write_own(out, &p);
    }

    /// A message's content: a string, or blocks.
    fn content(&mut self, kind: TextKind, raw: Raw<'_>, out: &mut Vec<u8>, depth: usize) {
        match raw.first() {
            Some(b'"') => self.text(kind, raw, out),
            Some(b'[') => {
                // Each block read once: its members as the array is walked.
                out.push(b'[');
                let mut first = true;
                // One vector for every block's members: no allocation per block.
                let mut m: Members<'_> = recycle(std::mem::take(&mut self.blocks));
                raw.for_each_element_or_fields(|el| {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    match el {
                        Element::Object(fields) => {
                            // Its texts counted as their ends are found (the members
                            // `block_act` takes for text), for their placeholders: with
                            // `--keep-text` they are masked, and only skipped here.
                            m.clear();
                            self.counted.clear();
                            let placeholders = !self.keep_text;
                            let is_text = |k: &[u8]| {
                                placeholders && (short_eq(k, b"text") || short_eq(k, b"thinking"))
                            };
                            while let Some((k, v, counts)) = fields.next_counted(is_text) {
                                if let Some(c) = counts {
                                    self.counted.push((v.as_ptr() as usize, c));
                                }
                                m.push((k, v));
                            }
                            self.block(kind, &m, out, depth + 1);
                            self.counted.clear();
                        }
                        Element::Other(el) if el.first() == Some(&b'"') => self.text(kind, el, out),
                        Element::Other(el) => self.data(el, out, depth + 1, "", Labels::None),
                    }
                });
                self.blocks = recycle(m);
                out.push(b']');
            }
            _ => self.data(raw, out, depth, "", Labels::None),
        }
    }

    /// A content block: text, thinking, a tool call, an image, or another kind. An image's
    /// placeholder is made before its members are walked (it needs the MIME type, which may
    /// come after the data).
    fn block(&mut self, kind: TextKind, m: &[Member<'_>], out: &mut Vec<u8>, depth: usize) {
        let block = BlockType::of(&last_str(m, "type", self.utf8));
        self.image = (block == BlockType::Image)
            .then(|| last(m, "data").filter(|d| d.first() == Some(&b'"')))
            .flatten()
            .map(|data| {
                let mime = last(m, "mimeType").and_then(Raw::as_str);
                let data = data.bytes();
                let body = data
                    .get(1..data.len().saturating_sub(1))
                    .unwrap_or_default();
                // Already an image's placeholder (a redacted file redacted again): itself.
                let written = (body.len() <= 6 * PLACEHOLDER_MAX_CHARS
                    && body.starts_with(b"[image"))
                .then(|| std::str::from_utf8(body).ok())
                .flatten()
                .filter(|t| image_size(t).is_some());
                match written {
                    Some(p) => p.to_string(),
                    None => of_image(mime.as_deref(), crate::message::base64_decoded_len(body)),
                }
            });
        self.members(m, out, depth, |k| block_act(block, kind, k));
        self.image = None;
    }

    /// An image block's data: its placeholder (kept when the data is that placeholder).
    fn image_data(&mut self, raw: Raw<'_>, out: &mut Vec<u8>) {
        let placeholder = self.image.take().unwrap_or_default();
        let data = raw.bytes();
        if data.len() == placeholder.len() + 2
            && data.get(1..data.len() - 1) == Some(placeholder.as_bytes())
        {
            return self.keep(&raw, out);
        }
        self.changed = true;
        self.counts.add("image");
        self.write_own(out, &placeholder);
    }

    /// Data: keys and value types kept; numbers, booleans and null copied; strings replaced
    /// (paths given pseudonyms, labels of details kept).
    fn data(&mut self, raw: Raw<'_>, out: &mut Vec<u8>, depth: usize, key: &str, labels: Labels) {
        if depth > MAX_DEPTH {
            // Already the placeholder of data nested too deep (a redacted file redacted again).
            let nested = raw.first() == Some(&b'"')
                && raw.len() <= 6 * PLACEHOLDER_MAX_CHARS
                && str_of(&raw, self.utf8).is_some_and(|s| is_nested_placeholder(&s));
            if nested {
                return self.keep(&raw, out);
            }
            self.changed = true;
            self.counts.add(TextKind::Value.name());
            return self.write_own(out, &format!("[value · nested · {} bytes]", raw.len()));
        }
        match raw.first() {
            Some(b'{') => {
                let keep_text = self.keep_text;
                let utf8 = self.utf8;
                let act = |k: &str| match k {
                    _ if is_signature(k) => Act::Drop,
                    _ if labels == Labels::Credential => Act::Data(labels),
                    _ if keep_text
                        && k.eq_ignore_ascii_case("value")
                        && names_a_credential_pair(raw, utf8) =>
                    {
                        Act::Data(Labels::Credential)
                    }
                    "usage" if labels == Labels::TaskDetails => Act::Data(Labels::Usage),
                    _ if labels == Labels::TaskDetails => Act::Data(Labels::None),
                    _ => Act::Data(labels),
                };
                out.push(b'{');
                let outer = std::mem::take(&mut self.keys_replaced);
                let mut first = true;
                raw.for_each_field(|k, v| {
                    self.member(k, v, &mut first, out, depth, act, |rw, out| {
                        rw.value(Act::Data(labels), v, out, depth + 1, "message")
                    })
                });
                self.keys_replaced = outer;
                out.push(b'}');
            }
            Some(b'[') => {
                let labels = match labels {
                    Labels::TaskDetails => Labels::None,
                    _ => labels,
                };
                write_array(raw, out, |el, out| {
                    self.data(el, out, depth + 1, key, labels)
                })
            }
            Some(b'"') => self.data_string(raw, out, key, labels),
            _ => self.keep(&raw, out),
        }
    }

    /// Copies a usage object written as Pi writes it, whole: every key one of [`USAGE_KEYS`]
    /// (in which the masker finds nothing), every value a number, a flag, `null` or such an
    /// object, no space between. What [`Rewriter::data`] writes of it member by member, with
    /// the same ranges noted as written on purpose (each key and each value), at about a
    /// quarter of the cost: an assistant message's usage has 11 members, a quarter of the
    /// members pi-redact walks in a session. `false`, with nothing written, for any other.
    fn usage_as_is(&mut self, raw: &[u8], out: &mut Vec<u8>, depth: usize) -> bool {
        if depth + 2 > MAX_DEPTH || !self.masker.usage_keys_plain() {
            return false;
        }
        let noted = self.check.on_purpose.len();
        let base = out.len();
        let whole = usage_members(raw, 0, 1, &mut |a, b| {
            self.check.on_purpose.push((base + a, base + b))
        }) == Some(raw.len());
        if whole {
            out.extend_from_slice(raw);
        } else {
            self.check.on_purpose.truncate(noted);
        }
        whole
    }

    fn data_string(&mut self, raw: Raw<'_>, out: &mut Vec<u8>, key: &str, labels: Labels) {
        if labels == Labels::Credential {
            return self.keyed(raw, out);
        }
        // A string with a space is text: no label or one-line value holds one (its
        // placeholder is written without decoding it). A path may: under a key that names
        // one, the whole value is its path, spaces and all (`/Users/Ana Belle/…`).
        if raw.len() > 32 && memchr::memchr(b' ', &raw).is_some() && !names_a_path(key) {
            return self.text(TextKind::Value, raw, out);
        }
        let s = str_of(&raw, self.utf8).unwrap_or_default();
        let one_line = || {
            !s.is_empty()
                && s.len() <= 4096
                && !s.starts_with(char::is_whitespace)
                && !s
                    .chars()
                    .any(|c| c.is_control() || c.is_whitespace() && c != ' ')
        };
        let label = match labels {
            Labels::None | Labels::Usage | Labels::TaskDetails | Labels::Credential => false,
            Labels::Details => names_a_label(key) && is_identifier(&s) && s.len() <= 32,
            Labels::NestedCalls => {
                matches!(key, "id" | "name" | "status" | "namespace") && is_identifier(&s)
            }
        };
        // A label is a name too: one holding a credential is not kept.
        let label =
            label && (!self.masker.name_may_hold(&raw) || self.masker.name_spans(&s).is_empty());
        if label {
            self.keep(&raw, out)
        } else if looks_like_path(&s) || (one_line() && names_a_path(key)) {
            self.path(raw, out, false)
        } else {
            self.text(TextKind::Value, raw, out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{has_backslash, names_a_credential, names_a_path, short_eq, LineCheck};

    /// Keys compared as slices compare: equal ones, and ones of the same length that differ
    /// in one byte at every place, or of another length.
    #[test]
    fn short_keys_compare_as_slices() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert!(short_eq(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!short_eq(&a, &b), "{n} {at}");
            }
            assert!(!short_eq(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!short_eq(&a, &longer), "{n}");
        }
    }

    /// A backslash is found at every place of every length, and none where there is none
    /// (bytes either side of it, `0x5c` with its high bit set, `0x5b`, `0x5d`, `0xdc`).
    #[test]
    fn backslashes_are_found_at_every_place() {
        for fill in [b'a', 0x5b, 0x5d, 0xdc, 0x00, 0xff, 0x1c] {
            for n in 0..40 {
                let mut b = vec![fill; n];
                assert!(!has_backslash(&b), "{fill} {n}");
                for at in 0..n {
                    b[at] = b'\\';
                    assert!(has_backslash(&b), "{fill} {n} {at}");
                    b[at] = fill;
                }
            }
        }
    }

    /// Keys whose last word (or last two) names a credential, however they are written, and
    /// keys that only hold such a word elsewhere, or a plural count.
    #[test]
    fn keys_that_name_a_credential() {
        for key in [
            "password",
            "Password",
            "DB_PASSWORD",
            "db-pass",
            "passwd",
            "pwd",
            "passphrase",
            "client_secret",
            "secrets",
            "token",
            "access_token",
            "sessionToken",
            "X-Auth-Token",
            "api_key",
            "apiKey",
            "APIKey",
            "X-Api-Key",
            "apikey",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "private_key",
            "auth",
            "basic_auth",
            "Authorization",
            "Proxy-Authorization",
            "credentials",
            "Cookie",
            "Set-Cookie",
            "password2",
            "PGPASSWORD",
            "csrftoken",
            "MYSQLPASSWD",
            "AccountKey",
            "NEW_RELIC_LICENSE_KEY",
            "MNEMONIC",
            "walletMnemonic",
            "SEED_PHRASE",
            "recoveryPhrase",
            "wifi_key",
            "WPA_KEY",
            "Ocp-Apim-Subscription-Key",
            "pw",
            "DB_PW",
            "adminPw",
        ] {
            assert!(names_a_credential(key), "{key}");
        }
        for key in [
            "",
            "tokens",
            "maxTokens",
            "max_tokens",
            "input_tokens",
            "tokenCount",
            "authorName",
            "author",
            "passwordFile",
            "secretName",
            "key",
            "sortKey",
            "keyboard",
            "bypass",
            "compass",
            "oauth",
            "passage",
            "command",
            "path",
            "tokens_used",
            "secretary",
            "phrase",
            "searchPhrase",
            "mnemonics",
            "npw",
            "DBPW",
            "pws",
        ] {
            assert!(!names_a_credential(key), "{key}");
        }
    }

    /// ASCII keys are split without allocating, as every other key is: the same answers on
    /// generated keys of credential words, case changes, digits and signs.
    #[test]
    fn ascii_keys_are_split_as_other_keys_are() {
        let pieces = [
            "pass", "Pass", "PASS", "word", "Word", "api", "API", "Key", "key", "KEY", "token",
            "Token", "s", "auth", "Author", "ization", "_", "-", ".", "2", " ", "x", "X", "secret",
            "SECRET", "pg", "PG", "cookie", "Bearer", "cred", "entials",
        ];
        let mut rng = pi_jsonl_gen::Rng::new(23);
        let mut named = 0;
        for _ in 0..50_000 {
            let n = rng.range(0, 6) as usize;
            let key: String = (0..n).map(|_| *rng.pick(&pieces)).collect();
            // The same key after a non-ASCII sign (no letter, so no part of a word) takes
            // the other way.
            let other = format!("·{key}");
            assert_eq!(
                names_a_credential(&key),
                names_a_credential(&other),
                "{key}"
            );
            named += usize::from(names_a_credential(&key));
        }
        assert!(named > 1000, "{named}");
    }

    /// Keys that name a path, matched without case: the path, files, directory and root keys
    /// of Pi's tools and others', and not keys that only look alike.
    #[test]
    fn keys_that_name_a_path() {
        for key in [
            "path",
            "file_path",
            "filePath",
            "PATH",
            "outputPath",
            "files",
            "changedFiles",
            "cwd",
            "Dir",
            "directory",
            "file",
            "FileName",
            "folder",
            "root",
            "pathé",
        ] {
            assert!(names_a_path(key), "{key}");
        }
        for key in [
            "",
            "pat",
            "content",
            "filesize",
            "rootDir",
            "files_changed",
            "dirs",
            "ﬁles",
            "command",
            "oldText",
            "é",
        ] {
            assert!(!names_a_path(key), "{key}");
        }
    }

    /// Each string once, in the order first noted, whether the list is looked through or
    /// looked up by hash (past its first 32).
    #[test]
    fn replaced_strings_are_noted_once_in_order() {
        let mut check = LineCheck::default();
        for offset in [0, 500] {
            let mut want: Vec<String> = Vec::new();
            for i in 0..3000u64 {
                let s = format!("/home/ana/f{}", (i * 7919 + offset) % 1000);
                if !want.contains(&s) {
                    want.push(s.clone());
                }
                check.note_replaced(&s);
            }
            assert_eq!(check.replaced, want);
            // The next line's strings, the same ones in another order.
            check.clear();
        }
    }
}

/// The usage objects copied whole ([`Rewriter::usage_as_is`]) are written, and noted for the
/// residual scan, exactly as member by member.
#[cfg(test)]
mod usage_tests {
    use super::{usage_members, Act, Labels, Rewriter};
    use crate::cmd::redact::{mask::Masker, paths::Pseudonyms, tally::Tally};

    /// What `rewrite` writes of `usage`, the ranges it notes, and whether it changed anything.
    fn written(
        masker: &Masker,
        usage: &[u8],
        keep_text: bool,
        rewrite: impl FnOnce(&mut Rewriter<'_>, crate::json::Raw<'_>, &mut Vec<u8>),
    ) -> (Vec<u8>, Vec<(usize, usize)>, bool) {
        let (mut paths, mut tally) = (Pseudonyms::default(), Tally::default());
        let mut rw = Rewriter::new(keep_text, masker, &mut paths, &mut tally);
        let raw = crate::json::validate(usage).expect("valid JSON");
        rw.start(raw, false);
        let mut out = b"{\"usage\":".to_vec();
        rewrite(&mut rw, raw, &mut out);
        (out, rw.check.on_purpose.clone(), rw.changed)
    }

    /// Whether `usage` is written alike both ways, in both modes (panics where not); `true`
    /// when it is copied whole.
    fn agree(masker: &Masker, usage: &str) -> bool {
        for keep_text in [false, true] {
            let fast = written(masker, usage.as_bytes(), keep_text, |rw, raw, out| {
                rw.value(Act::Data(Labels::Usage), raw, out, 3, "usage")
            });
            let slow = written(masker, usage.as_bytes(), keep_text, |rw, raw, out| {
                rw.data(raw, out, 3, "usage", Labels::Usage)
            });
            assert_eq!(fast, slow, "{usage} (keep text: {keep_text})");
        }
        masker.usage_keys_plain()
            && usage_members(usage.as_bytes(), 0, 1, &mut |_, _| {}) == Some(usage.len())
    }

    #[test]
    fn usage_copied_whole_is_written_as_member_by_member() {
        let masker = Masker::new(Vec::new());
        let pi = r#"{"input":11,"output":223,"cacheRead":497,"cacheWrite":4654,"totalTokens":5385,"cost":{"input":3.3e-05,"output":0.003345,"cacheRead":0.0001491,"cacheWrite":0.0174525,"total":0.0209796}}"#;
        assert!(agree(&masker, pi));
        assert!(agree(
            &masker,
            r#"{"reasoning":0,"cacheWrite1h":-1,"cost":{"totalFromProvider":true,"total":null},"input":false}"#
        ));
        assert!(agree(&masker, "{}"));
        // Members of another kind are rewritten member by member, the same either way.
        let pieces = [
            r#""input":1"#,
            r#""cost":{"total":2}"#,
            r#""cost":{"total":{"input":3}}"#,
            r#""inputTokens":4"#,
            r#""in\u0070ut":5"#,
            r#""input":"/home/ana/x.rs""#,
            r#""output":"a long text with spaces in it, replaced""#,
            r#""cost":[1,2]"#,
            r#""apiKey":"sk-ant-0123456789abcdef0123456789abcdef""#,
            r#""input" : 6"#,
            r#""input":7 "#,
        ];
        let mut rng = pi_jsonl_gen::Rng::new(7);
        let mut whole = 0;
        for _ in 0..2000 {
            let n = rng.range(0, 5) as usize;
            let members: Vec<&str> = (0..n).map(|_| *rng.pick(&pieces)).collect();
            whole += usize::from(agree(&masker, &format!("{{{}}}", members.join(","))));
        }
        // Both ways were taken, each many times.
        assert!((200..1800).contains(&whole), "{whole}");
        // A secret the user named that is one of Pi's usage keys: the key is masked either way.
        let named = Masker::new(vec!["cacheRead".into()]);
        assert!(!agree(&named, pi));
    }
}
