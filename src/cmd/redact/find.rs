//! Finding the patterns of [`super::mask`] in kept text without running each regular
//! expression over every byte: one pass finds the sites where a pattern can match, and the
//! pattern runs only there (the path pattern and the random-token one are matched by hand). Each finder gives the same matches, in the same order, as the
//! pattern's `find_iter`/`captures_iter` over the whole text (the test oracle in `mask.rs`
//! compares the two on generated texts). Why each is the same:
//!
//! - Leftmost-first search: after a match ending at `e` the next match is the one starting
//!   first at or after `e` (preferred by the pattern's order among those starting there).
//!   When every match starts at a known site, the search from a site `s` with no match in
//!   `e..s` finds the same one; and when every match starting at `s` ends by `w`, a search of
//!   the text cut at `w` from `s` sees the same matches starting at `s` (the regex crate's
//!   `*_at` searches see the text before `s`, so `\b` and `^` are read as over the whole
//!   text; none of the windowed patterns looks past a match's end).
//! - Windows between blanks: the path and e-mail patterns never match an ASCII blank
//!   (space, tab, line feed) but as the path pattern's first character. So the blanks cut
//!   the text into windows, each starting at a blank, that no match crosses: a window
//!   holding none of the bytes every match holds (`/`, `\`, `@`) holds no match.
//! - By hand: the random-token pattern's matches are the maximal runs of its class
//!   ([`token_runs`]); the path pattern is read alternative by alternative ([`path_at`]).

use super::classes::{Block, Classes};
use super::rewrite::{credential_words, names_a_credential};
use aho_corasick::packed;
use aho_corasick::Span;
use regex::Regex;

/// Whether `b` is a blank that cuts windows (all are `\s`; other white space only makes
/// windows longer, never wrong).
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t')
}

/// A class of [`Block`] (the bits of one kind of byte).
pub type Class = fn(&Block) -> u64;

/// The windows of `text` (of classes `c`) between blanks that hold a byte of class
/// `needle`: `(start, end)`, each starting at a blank (or the text's start, or the previous
/// window's end) and ending before the next blank (or at the text's end), in order.
pub fn windows<'t>(
    text: &'t [u8],
    c: &'t Classes,
    needle: Class,
) -> impl Iterator<Item = (usize, usize)> + 't {
    let mut from = 0;
    std::iter::from_fn(move || {
        let hit = c.first(needle, from, text.len())?;
        let start = c.last(|b| b.blank, from, hit).unwrap_or(from);
        let end = c.first(|b| b.blank, hit, text.len()).unwrap_or(text.len());
        debug_assert!(text[start + 1..end].iter().all(|&b| !is_blank(b)));
        from = end;
        Some((start, end))
    })
}

/// Every match of `re` in the windows of `text` (of classes `c`) that hold a byte of class
/// `needle`, in order, as `find_iter` over the whole text finds them: `each(start, end)`
/// (for patterns that match no blank but as their first character, and need a `needle`);
/// `may_hold(c, from, end)` says whether the rest `from..end` of a window can hold a match
/// (the pattern runs only while it can). `re` gives the pattern, asked for only where it runs
/// (so that a text with no window where it can match never compiles it).
pub fn matches_in_windows<'r>(
    re: impl Fn() -> &'r Regex,
    text: &str,
    c: &Classes,
    needle: Class,
    may_hold: fn(&Classes, usize, usize) -> bool,
    mut each: impl FnMut(usize, usize),
) {
    for (start, end) in windows(text.as_bytes(), c, needle) {
        let cut = &text[..end];
        let mut at = start;
        while may_hold(c, at, end) {
            let Some(m) = re().find_at(cut, at) else {
                break;
            };
            // The windowed patterns match no empty string: each match moves on.
            at = m.end();
            each(m.start(), m.end());
        }
    }
}

/// Every match of `re` that starts at one of `sites` (in order, each a character boundary
/// where a match may start, and every match starts at one of them), as `captures_iter` over
/// the whole text finds them. `reach(text, site)` says where a match starting at `site` ends
/// at the latest, or `None` where none can start. `re` gives the pattern, asked for only at
/// a site with a reach (so that a text with none never compiles it).
pub fn captures_at_sites<'t, 'r>(
    re: impl Fn() -> &'r Regex,
    text: &'t str,
    sites: &[usize],
    reach: fn(&str, usize) -> Option<usize>,
    mut each: impl FnMut(regex::Captures<'t>),
) {
    let mut after = 0;
    for &site in sites {
        if site < after {
            continue;
        }
        let Some(end) = reach(text, site) else {
            continue;
        };
        let Some(c) = re().captures_at(&text[..end], site) else {
            continue;
        };
        let m = c.get(0).expect("group 0");
        // A match starting later in the window is found (whole) from its own site.
        if m.start() == site {
            after = m.end();
            each(c);
        }
    }
}

/// The paths the path pattern finds in the windows of `text` that hold a `/` or a `\`, in
/// order, as `captures_iter` over the whole text finds them: `each(start, end)` of each
/// match's group `s` (the path). The pattern is matched by hand ([`path_at`]): through the
/// regex crate each match cost about 1,600 instructions, most of a text's cost.
pub fn paths_in_windows(text: &str, c: &Classes, mut each: impl FnMut(usize, usize)) {
    for (start, end) in windows(text.as_bytes(), c, |b| b.separator) {
        let mut at = start;
        while may_hold_path(c, at, end) {
            let Some((path, after)) = first_path(text, c, at, end) else {
                break;
            };
            each(path, after);
            at = after;
        }
    }
}

/// The first match of the path pattern starting in `at..end` ([`path_at`] at each start, as
/// leftmost-first takes it). A match's group starts at a `/`, a `~`, a `\` or a drive letter
/// before its `:` ([`path_group`]), at most 7 bytes after the match's start (`file://`): so
/// [`path_at`] is asked only at the starts up to 8 bytes before one of those bytes (the
/// class `path` of [`Block`]).
fn first_path(text: &str, c: &Classes, at: usize, end: usize) -> Option<(usize, usize)> {
    let mut m = at;
    while let Some(g) = c.first(|b| b.path, m, end) {
        m = m.max(g.saturating_sub(8));
        while m <= g {
            if let Some(found) = path_at(text, m) {
                return Some(found);
            }
            m += 1;
        }
    }
    None
}

/// What an ASCII byte is to the path pattern, as bits ([`PATH_BYTES`]).
const SPACE: u8 = 1;
/// `"'`<>()[]{},;|`: no path holds one.
const NOT_IN_PATH: u8 = 2;
const BACKSLASH: u8 = 4;
const SLASH: u8 = 8;
/// `"'`([=:,<>|`: what a path may follow (white space too).
const BEFORE_PATH: u8 = 16;

/// The bits of each ASCII byte (white space as `\s` has it in ASCII).
static PATH_BYTES: [u8; 128] = {
    let mut bits = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let c = i as u8;
        let mut v = 0;
        if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            v |= SPACE | BEFORE_PATH;
        }
        if matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b','
                | b';'
                | b'|'
        ) {
            v |= NOT_IN_PATH;
        }
        if matches!(
            c,
            b'"' | b'\'' | b'`' | b'(' | b'[' | b'=' | b':' | b',' | b'<' | b'>' | b'|'
        ) {
            v |= BEFORE_PATH;
        }
        if c == b'\\' {
            v |= BACKSLASH;
        }
        if c == b'/' {
            v |= SLASH;
        }
        bits[i] = v;
        i += 1;
    }
    bits
};

/// `[^\s"'`<>()\[\]{},;|\\]` (a Unix path's run after its `/`).
const UNIX_STOP: u8 = SPACE | NOT_IN_PATH | BACKSLASH;
/// `[^\s"'`<>()\[\]{},;|\\/]` (the first character after a drive or a share).
const FIRST_STOP: u8 = UNIX_STOP | SLASH;
/// `[^\s"'`<>()\[\]{},;|]` (the rest of a Windows path: `\` and `/` in it).
const REST_STOP: u8 = SPACE | NOT_IN_PATH;

/// Where the run of characters that starts at `at` ends: at white space (`\s`), or at an
/// ASCII byte with one of the bits `stops` ([`PATH_BYTES`]).
fn path_run(text: &str, at: usize, stops: u8) -> usize {
    let b = text.as_bytes();
    let mut i = at;
    while let Some(&c) = b.get(i) {
        if c.is_ascii() {
            if PATH_BYTES[usize::from(c)] & stops != 0 {
                break;
            }
            i += 1;
        } else {
            match text[i..].chars().next() {
                Some(ch) if !ch.is_whitespace() => i += ch.len_utf8(),
                _ => break,
            }
        }
    }
    i
}

/// Where a Windows path's rest `[^C1][^C2]*` (see [`path_at`]) starting at `at` ends, if it
/// has its first character.
fn windows_rest(text: &str, at: usize) -> Option<usize> {
    let first = path_run(text, at, FIRST_STOP);
    // The first character alone, then the run, which allows `\` and `/`.
    let one = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    (first > at).then(|| path_run(text, one, REST_STOP))
}

/// The path pattern's group `s` at `at`, where it ends if it matches there: `~?/` and a
/// run; a drive, `:`, `\`, `\\` or `/`, and the rest; `\\server\` and the rest. The three
/// start with different characters, so at most one applies; each run is greedy and ends
/// the pattern, so its longest run is the match.
fn path_group(text: &str, at: usize) -> Option<usize> {
    let b = &text.as_bytes()[at..];
    let unix = |from: usize| {
        let end = path_run(text, from, UNIX_STOP);
        (end > from).then_some(end)
    };
    match b {
        [b'~', b'/', ..] => unix(at + 2),
        [b'/', ..] => unix(at + 1),
        [d, b':', b'\\', b'\\', ..] if d.is_ascii_alphabetic() => {
            // `\\\\?` takes the second `\` first; without it, that `\` is no first character.
            windows_rest(text, at + 4)
        }
        [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic() => windows_rest(text, at + 3),
        [b'\\', b'\\', s, ..] if s.is_ascii_alphanumeric() => {
            let server = |c: u8| c.is_ascii_alphanumeric() || b"._$-".contains(&c);
            let name = at + 3 + b[3..].iter().position(|&c| !server(c))?;
            let sep = name > at + 3 && text.as_bytes()[name] == b'\\';
            sep.then(|| windows_rest(text, name + 1)).flatten()
        }
        _ => None,
    }
}

/// The path pattern at `start` (a match starting there, as leftmost-first takes it): what a
/// path follows (`^` at the text's start, then one of `\s"'`(\[=:,<>|`, a written `\n`, `\r`
/// or `\t`, `file://`, in that order), then the group ([`path_group`]); failing that, a home
/// path ([`home_at`]). Returns the group's start and end.
pub fn path_at(text: &str, start: usize) -> Option<(usize, usize)> {
    if !text.is_char_boundary(start) {
        return None;
    }
    if start == 0 {
        if let Some(end) = path_group(text, 0) {
            return Some((0, end));
        }
    }
    let b = &text.as_bytes()[start..];
    let after = match b {
        [b'\\', b'n' | b'r' | b't', ..] => Some(start + 2),
        [b'f', b'i', b'l', b'e', b':', b'/', b'/', ..] => Some(start + 7),
        [c, ..] if c.is_ascii() => {
            let follows = PATH_BYTES[usize::from(*c)] & BEFORE_PATH != 0;
            follows.then_some(start + 1)
        }
        _ => text[start..]
            .chars()
            .next()
            .filter(|c| c.is_whitespace())
            .map(|c| start + c.len_utf8()),
    };
    if let Some(found) = after.and_then(|a| path_group(text, a).map(|end| (a, end))) {
        return Some(found);
    }
    home_at(text, start)
}

/// Whether `c` can be part of a path's name where a home root follows it (`x/home/…` is a
/// relative path, `./home/…` too): an ASCII letter or digit, `.`, `_`, `-`, `/`, `\`, `~`.
pub fn continues_a_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '\\' | '~')
}

/// The path pattern's second alternative at `start`: a home root ([`home_group`]) after `^`
/// or any character that does not continue a name ([`continues_a_name`]: an `@` mention, a
/// control character, `*`, `{`, `$`, `#`, a full-width colon, a Chinese character), each
/// maybe followed by a one-letter option (`-I/home/…`), in that order.
fn home_at(text: &str, start: usize) -> Option<(usize, usize)> {
    let after_prefix = |at: usize| {
        let b = &text.as_bytes()[at..];
        if let [b'-', l, ..] = b {
            if l.is_ascii_alphabetic() {
                if let Some(end) = home_group(text, at + 2) {
                    return Some((at + 2, end));
                }
            }
        }
        home_group(text, at).map(|end| (at, end))
    };
    if start == 0 {
        if let Some(found) = after_prefix(0) {
            return Some(found);
        }
    }
    let c = text[start..].chars().next()?;
    if continues_a_name(c) {
        return None;
    }
    after_prefix(start + c.len_utf8())
}

/// The group of the home alternative at `at`, where it ends: `/home/`, `/Users/` or
/// `/root/` and a Unix run (maybe empty); or a drive, `\`, `\\` or `/`, `Users` in any ASCII
/// case, `\` or `/`, and the rest of a Windows path. Each ends where the first alternative's
/// group at `at` would ([`path_group`]): only where it may start differs.
fn home_group(text: &str, at: usize) -> Option<usize> {
    let b = &text.as_bytes()[at..];
    for root in [&b"/home/"[..], b"/Users/", b"/root/"] {
        if b.starts_with(root) {
            return Some(path_run(text, at + root.len(), UNIX_STOP));
        }
    }
    let users = match b {
        [d, b':', b'\\', b'\\', ..] if d.is_ascii_alphabetic() => 4,
        [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic() => 3,
        _ => return None,
    };
    let name = b.get(users..users + 6)?;
    let home = name[..5].eq_ignore_ascii_case(b"users") && matches!(name[5], b'\\' | b'/');
    home.then(|| path_run(text, at + users + 6, REST_STOP))
}

/// The searches for ` is `, ` was ` and `\/`, made once (making one costs about as much as
/// searching a short text).
fn finders() -> &'static [memchr::memmem::Finder<'static>; 3] {
    static F: std::sync::OnceLock<[memchr::memmem::Finder<'static>; 3]> =
        std::sync::OnceLock::new();
    F.get_or_init(|| [" is ", " was ", "\\/"].map(|w| memchr::memmem::Finder::new(w.as_bytes())))
}

/// Paths the path pattern does not see start, in order: `each(start, end)` of each. They
/// start at the text's start or after a character that cannot continue a name
/// ([`continues_a_name`]):
///
/// - `~name/…`, the home of the user `name` (a letter or `_`, then letters, digits, `.`,
///   `_`, `-`), and the Unix run after it (maybe empty);
/// - a reference to the home ([`super::paths::home_ref`]: `$HOME/`, `${HOME}/`,
///   `%USERPROFILE%\`, …) and the run after it (a Windows one with either separator), not
///   empty;
/// - a path with every `/` written `\/` (JSON text quoted in text, as some writers escape
///   `/`): two components or more, each a Unix run after its `\/`, and a last `\/`.
pub fn paths_not_seen(text: &str, mut each: impl FnMut(usize, usize)) {
    let b = text.as_bytes();
    let starts = |at: usize| {
        at == 0
            || text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| !continues_a_name(c))
    };
    let mut after = 0;
    let mut found = |start: usize, end: usize, after: &mut usize| {
        if start >= *after && end > start {
            each(start, end);
            *after = end;
        }
    };
    // `~`, `$` and `%`, and the `\/` sequences, in the text's order.
    let mut signs = memchr::memchr3_iter(b'~', b'$', b'%', b).peekable();
    let mut escaped = finders()[2].find_iter(b).peekable();
    loop {
        let at = match (signs.peek(), escaped.peek()) {
            (Some(&s), Some(&e)) if s < e => signs.next(),
            (Some(_), Some(_)) | (None, Some(_)) => escaped.next(),
            (Some(_), None) => signs.next(),
            (None, None) => break,
        };
        let Some(at) = at else { break };
        if at < after || !starts(at) {
            continue;
        }
        match b[at] {
            b'~' => {
                let name = at + 1;
                let first = b
                    .get(name)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
                let end = skip_class(b, name, |c| {
                    c.is_ascii_alphanumeric() || b"._-".contains(&c)
                });
                if first && b.get(end) == Some(&b'/') {
                    found(at, path_run(text, end + 1, UNIX_STOP), &mut after);
                }
            }
            b'$' | b'%' => {
                if let Some(root) = super::paths::home_ref(&text[at..]) {
                    let rest = at + root + 1;
                    let end = path_run(text, rest, REST_STOP);
                    if end > rest {
                        found(at, end, &mut after);
                    }
                }
            }
            _ => {
                let (mut end, mut parts) = (at, 0);
                while b[end..].starts_with(b"\\/") {
                    let run = path_run(text, end + 2, UNIX_STOP);
                    if run == end + 2 {
                        // A last `\/` (a folder's), or `\/\/`: the path ends after it.
                        end += 2;
                        break;
                    }
                    end = run;
                    parts += 1;
                }
                if parts >= 2 {
                    found(at, end, &mut after);
                }
            }
        }
    }
}

/// Whether the part `from..end` of a window (of classes `c`) can hold a match of the path
/// pattern: its path holds a `/`, or starts as a Windows path (`:\`) or a UNC one (`\\`)
/// does (a `\` after a `:` or a `\` inside the part; the class `drive` also has a `\`
/// after `/` or `~`, which only makes this say yes where no path follows).
pub fn may_hold_path(c: &Classes, from: usize, end: usize) -> bool {
    c.first(|b| b.slash, from, end).is_some() || c.first(|b| b.drive, from + 1, end).is_some()
}

/// Whether the part `from..end` of a window can hold an e-mail address (or anything else
/// that needs an `@`).
pub fn may_hold_at(c: &Classes, from: usize, end: usize) -> bool {
    c.first(|b| b.at, from, end).is_some()
}

/// The shortest run the random-token pattern matches.
pub const TOKEN_MIN: usize = 24;

/// The matches of `[A-Za-z0-9+/_=\-]{24,}` in `text` (of classes `c`), in order:
/// leftmost-first and greedy on one class repeated, they are the maximal runs of the class
/// of 24 bytes or more. Each holds a byte of the class `long` (the last of 24 in a row):
/// the run around the first one after the last run is measured on the class `token`.
pub fn token_runs<'t>(text: &'t [u8], c: &'t Classes) -> impl Iterator<Item = (usize, usize)> + 't {
    let mut from = 0;
    std::iter::from_fn(move || {
        let last = c.first(|b| b.long, from, text.len())?;
        let first = last + 1 - TOKEN_MIN;
        let start = c.last(|b| !b.token, 0, first).map_or(0, |i| i + 1);
        let end = c
            .first(|b| !b.token, last, text.len())
            .unwrap_or(text.len());
        from = end;
        Some((start, end))
    })
}

/// Where the white space at `at` (what `\s` matches: Unicode's White_Space, as
/// `char::is_whitespace`) ends; `at` is a character boundary.
fn skip_space(text: &str, at: usize) -> usize {
    text[at..]
        .char_indices()
        .find(|&(_, c)| !c.is_whitespace())
        .map_or(text.len(), |(i, _)| at + i)
}

/// Where the run of bytes `class` holds (ASCII ones) that starts at `at` ends.
fn skip_class(text: &[u8], at: usize, class: impl Fn(u8) -> bool) -> usize {
    text[at..]
        .iter()
        .position(|&b| !class(b))
        .map_or(text.len(), |i| at + i)
}

/// The bearer-token pattern `\b(?:bearer|token)\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})` at a site
/// where one of its words starts: the word is the run of letters there (a letter after it
/// leaves no `\s`), then white space, then the token's run, of 16 bytes or more.
pub fn bearer_reach(text: &str, site: usize) -> Option<usize> {
    let word = skip_class(text.as_bytes(), site, |b| b.is_ascii_alphabetic());
    let token = skip_space(text, word);
    let end = skip_class(text.as_bytes(), token, |b| {
        b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b)
    });
    (token > word && end - token >= 16).then_some(end)
}

/// The password pattern (`(?:password|…|auth)["']?\s*[=:]\s*["']?(?P<s>[…]*[0-9!@#$%^&*+=~][…]*)`)
/// at a site where one of its words starts: the word is the run of letters, `_` and `-`
/// there (anything else of that class after it leaves no `["']?\s*[=:]`), an optional
/// quote, white space, `=` or `:`, white space, an optional quote, and the value's run.
pub fn password_reach(text: &str, site: usize) -> Option<usize> {
    let b = text.as_bytes();
    let quote = |at: usize| at + usize::from(matches!(b.get(at), Some(b'"' | b'\'')));
    let word = skip_class(b, site, |c| {
        c.is_ascii_alphabetic() || c == b'_' || c == b'-'
    });
    let sign = skip_space(text, quote(word));
    if !matches!(b.get(sign), Some(b'=' | b':')) {
        return None;
    }
    let value = quote(skip_space(text, sign + 1));
    Some(skip_class(b, value, |b| {
        b.is_ascii_alphanumeric() || b"!@#$%^&*+/=_-~".contains(&b)
    }))
}

/// Every place in `text` where one of the words of `search` starts, in order (overlapping
/// ones too): the search goes on one byte after each place it stops at.
pub fn word_sites(search: &packed::Searcher, text: &[u8]) -> Vec<usize> {
    let mut sites = Vec::new();
    let mut at = 0;
    while let Some(m) = (at < text.len())
        .then(|| search.find_in(text, Span::from(at..text.len())))
        .flatten()
    {
        sites.push(m.start());
        at = m.start() + 1;
    }
    sites
}

/// English letters, most frequent first: a word is looked for by its rarest letter.
const LETTER_FREQUENCY: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";

/// Every start of `word` (ASCII letters, lower case) in `text` in any ASCII case, in order:
/// found by its rarest letter, in either case (`memchr2`), and compared around it.
pub fn any_case_sites<'t>(text: &'t [u8], word: &'t str) -> impl Iterator<Item = usize> + 't {
    let w = word.as_bytes();
    let rank = |c: &u8| LETTER_FREQUENCY.iter().position(|f| f == c);
    let pivot = (0..w.len()).max_by_key(|&i| rank(&w[i])).unwrap_or(0);
    let (lower, upper) = (w[pivot], w[pivot].to_ascii_uppercase());
    memchr::memchr2_iter(lower, upper, text).filter_map(move |hit| {
        let at = hit.checked_sub(pivot)?;
        let here = text.get(at..at + w.len())?;
        here.eq_ignore_ascii_case(w).then_some(at)
    })
}

/// The password pattern's words as they end before its `["']?\s*[=:]` (each ends with one
/// of `dtnyh`).
const PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "accesskey",
    "access_key",
    "access-key",
    "auth",
];

/// Whether one of [`PASSWORD_WORDS`] ends with `two` (lower case); a test holds it to them.
fn password_word_end(two: [u8; 2]) -> bool {
    matches!(&two, b"rd" | b"wd" | b"et" | b"en" | b"ey" | b"th")
}

/// Where the password pattern can start, in order: its word ends a run of letters, `_` and
/// `-` (what follows a word is a quote, white space, `=` or `:`), which is followed by an
/// optional quote, white space and `=` or `:`. So each `=` and `:` is looked back from:
/// over blanks and any non-ASCII byte (white space beyond ASCII is; going too far back
/// only adds a site the pattern then rejects), a quote, and the run, whose end is compared
/// with the words that end with its last two letters (the signs are the class `sign` of
/// [`Block`]).
pub fn password_sites(text: &str, c: &Classes) -> Vec<usize> {
    let b = text.as_bytes();
    let mut sites = Vec::new();
    for sign in c.iter(|b| b.sign, 0) {
        let mut end = sign;
        while end > 0
            && (b[end - 1].is_ascii_whitespace() || b[end - 1] == 0x0b || b[end - 1] >= 0x80)
        {
            end -= 1;
        }
        if end > 0 && matches!(b[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        // Most signs follow no word's last letter.
        // Most signs follow no word's last two letters (every word is 3 letters or more).
        let lower = |i: usize| b[i].to_ascii_lowercase();
        let Some(two) = end.checked_sub(2).map(|i| [lower(i), lower(i + 1)]) else {
            continue;
        };
        if !password_word_end(two) {
            continue;
        }
        let run = &b[..end];
        for w in PASSWORD_WORDS {
            let (w, n) = (w.as_bytes(), w.len());
            if w.ends_with(&two) && n <= end && run[end - n..].eq_ignore_ascii_case(w) {
                sites.push(end - n);
            }
        }
    }
    sites.sort_unstable();
    sites.dedup();
    sites
}

/// Where `password` starts in any case, in order: four bytes before each `w` of `ssw` (the
/// class `ssw` of [`Block`]), compared there.
pub fn password_word_sites<'t>(text: &'t [u8], c: &'t Classes) -> impl Iterator<Item = usize> + 't {
    c.iter(|b| b.ssw, 0).filter_map(|w| {
        let at = w.checked_sub(4)?;
        let word = text.get(at..at + 8)?;
        word.eq_ignore_ascii_case(b"password").then_some(at)
    })
}

/// Where the bearer-token pattern can start, in order: where `bearer` or `token` does (in
/// any ASCII case), looked for two bytes before each `bea` and three before each `oke` (the
/// class `bearer` of [`Block`]: its bits come in order, and so do the words' starts). They
/// are [`keyed_in_prose_spans`]' `tokens` too, found once for both.
pub fn bearer_sites(text: &str, c: &Classes) -> Vec<usize> {
    let b = text.as_bytes();
    let mut sites = Vec::new();
    for hit in c.iter(|b| b.bearer, 0) {
        let (word, back) = match b[hit] | 0x20 {
            b'a' => ("bearer", 2),
            _ => ("token", 3),
        };
        let Some(at) = hit.checked_sub(back) else {
            continue;
        };
        let here = b.get(at..at + word.len());
        if here.is_some_and(|w| w.eq_ignore_ascii_case(word.as_bytes())) {
            sites.push(at);
        }
    }
    sites
}

/// A byte of a name a value may follow in text (`DB_PASSWORD`, `X-Api-Key`, `--token`,
/// `spring.datasource.password`).
pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Where the name that ends at `end` starts: the run of [`is_name_byte`] before it.
fn name_start(b: &[u8], end: usize) -> usize {
    end - b[..end]
        .iter()
        .rev()
        .take_while(|&&c| is_name_byte(c))
        .count()
}

/// Whether the name that ends at `end` of `b` ends as a name of a credential does (its last
/// letters, digits and signs after them left out, are one of [`names_a_credential`]'s last
/// words): a cheap test before the name is read whole and asked about.
fn ends_as_a_credential(b: &[u8], end: usize) -> bool {
    let mut e = end;
    while e > 0 && matches!(b[e - 1], b'0'..=b'9' | b'_' | b'-' | b'.') {
        e -= 1;
    }
    let Some(last) = e.checked_sub(1).map(|i| b[i]) else {
        return false;
    };
    let words: &[&str] = match last | 0x20 {
        b'd' => &["pwd", "passwd", "password"],
        b'w' => &["pw"],
        b's' => &["pass", "secrets", "passwords", "cookies", "credentials"],
        b'e' if ends_any_case(&b[..e], "base") => {
            // Rails' `secret_key_base`: `base` after `key`, apart or glued.
            let k = e - 4 - usize::from(e > 4 && matches!(b[e - 5], b'_' | b'-'));
            return k >= 3 && b[k - 3..k].eq_ignore_ascii_case(b"key");
        }
        b'e' => &["cookie", "phrase"],
        b'c' => &["mnemonic"],
        b't' => &["secret"],
        b'n' => &["token", "authorization"],
        b'h' => &["auth"],
        b'l' => &["credential"],
        b'r' => &["bearer"],
        b'y' => &["key"],
        _ => return false,
    };
    words
        .iter()
        .any(|w| e >= w.len() && b[e - w.len()..e].eq_ignore_ascii_case(w.as_bytes()))
}

/// Whether the name `name` (ASCII, [`is_name_byte`]) names a credential, asked of
/// [`names_a_credential`] only when it ends as one does.
/// `pwd` alone is the working directory in text (the shell's command and variable, code's
/// `pwd = process.cwd()`), not a password as a data key's `pwd` is.
pub(super) fn names_a_credential_in_text(name: &[u8]) -> bool {
    ends_as_a_credential(name, name.len())
        && !name.eq_ignore_ascii_case(b"pwd")
        && std::str::from_utf8(name).is_ok_and(names_a_credential)
}

/// Whether the name `b[start..end]` names a credential in text ([`names_a_credential_in_text`]),
/// or, when it is `key` or `phrase`, with the word one space before it (`API key`, `access
/// key`, `seed phrase`; `access token` is a `token`).
fn names_in_text(b: &[u8], start: usize, end: usize) -> bool {
    let name = &b[start..end];
    if names_a_credential_in_text(name) {
        return true;
    }
    let two_words = name.eq_ignore_ascii_case(b"key") || name.eq_ignore_ascii_case(b"phrase");
    if !two_words || start == 0 || b[start - 1] != b' ' {
        return false;
    }
    let first = start
        - 1
        - b[..start - 1]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
    first < start - 1 && credential_words(Some(name), Some(&b[first..start - 1]))
}

/// Whether `name` ends with `word` (lower case) in any ASCII case.
fn ends_any_case(name: &[u8], word: &str) -> bool {
    name.len() >= word.len()
        && name[name.len() - word.len()..].eq_ignore_ascii_case(word.as_bytes())
}

/// Whether the name that ends at `end` ([`name_start`]) names a credential in text
/// ([`names_in_text`]).
fn named_before(b: &[u8], end: usize) -> bool {
    let start = name_start(b, end);
    start < end && names_in_text(b, start, end)
}

/// Where an unquoted value starting at `at` ends: at white space, a quote or a backtick, one
/// of `,;)]}<>`, or a `\` that starts an escape written out (`\"`, `\n`: text that quotes
/// JSON).
pub(super) fn unquoted_end(b: &[u8], at: usize) -> usize {
    let mut i = at;
    while let Some(&c) = b.get(i) {
        let stop = c.is_ascii_whitespace()
            || c == 0x0b
            || matches!(
                c,
                b'"' | b'\'' | b'`' | b',' | b';' | b')' | b']' | b'}' | b'<' | b'>'
            )
            || c == b'\\' && matches!(b.get(i + 1), Some(b'"' | b'\'' | b'n' | b'r' | b't'));
        if stop {
            break;
        }
        i += 1;
    }
    i
}

/// The quote that opens a value at `at` (`"`, `'`, a backtick, or `\"` or `\'` in text that
/// quotes JSON or a shell line), if one does.
pub(super) fn quote_at(b: &[u8], at: usize) -> Option<&[u8]> {
    match b.get(at..)? {
        [b'"' | b'\'' | b'`', ..] => Some(&b[at..at + 1]),
        [b'\\', b'"' | b'\'', ..] => Some(&b[at..at + 2]),
        _ => None,
    }
}

/// The value of a quoted value whose quote `q` opens at `at`: up to the same quote, or the
/// end of the line when the line holds none.
pub(super) fn quoted_value(b: &[u8], at: usize, q: &[u8]) -> (usize, usize) {
    let start = at + q.len();
    let line = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
    let end = memchr::memmem::find(&b[start..line], q).map_or(line, |i| start + i);
    (start, end)
}

/// The value at `at`: the [`quoted_value`] when a quote opens it, else up to `bare_end`.
pub(super) fn value_at(b: &[u8], at: usize, bare_end: usize) -> (usize, usize) {
    quote_at(b, at).map_or((at, bare_end), |q| quoted_value(b, at, q))
}

/// Whether a value ends its line: only blanks after it, then the line's or the text's end, a
/// quote (the end of a quoted argument: `-H 'X-Api-Key: v'`), `\n`, `\r`, `\"`, `\'`
/// written out, or a comment after a blank (`password: V  # prod`, as YAML, dotenv files and
/// shells write one: a `#` alone or before a blank).
fn ends_its_line(b: &[u8], at: usize) -> bool {
    let mut i = at;
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let comment = || {
        i > at
            && b.get(i) == Some(&b'#')
            && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r'))
    };
    comment()
        || matches!(
            b.get(i..),
            None | Some(
                [] | [b'\n' | b'\r' | b'"' | b'\'' | b'`', ..]
                    | [b'\\', b'n' | b'r' | b'"' | b'\'', ..]
            )
        )
}

/// Words that are a type or a literal in code (`password: string`, `token = null`): a value
/// that is one of them (in any case) is no credential.
const CODE_WORDS: &[&str] = &[
    "string",
    "str",
    "number",
    "int",
    "integer",
    "float",
    "bool",
    "boolean",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "any",
    "unknown",
    "object",
    "bytes",
    "void",
];

/// Whether an unquoted value is code, not a credential: a reference (`$TOKEN`, `${X}`,
/// `%X%`, `{{ secrets.X }}`, `<your-token>`), a call or an index (a `(` or `[` in it), a type
/// or a literal ([`CODE_WORDS`]), a mask already written (`[secret:…]`), or stars.
fn is_code(v: &[u8]) -> bool {
    v.is_empty()
        || matches!(v[0], b'$' | b'%' | b'{' | b'<' | b'[' | b'(' | b'*' | b'&')
        || v.contains(&b'(')
        || v.contains(&b'[')
        || CODE_WORDS
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w.as_bytes()))
}

/// Whether a value is a name in code: an identifier, or one reached through others
/// (`process.env.TOKEN`, `self.password`, maybe with a `!` after it).
fn is_code_name(v: &[u8]) -> bool {
    let ident = |p: &[u8]| {
        p.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && p.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    let path = v.strip_suffix(b"!").unwrap_or(v);
    path.split(|&c| c == b'.').all(ident)
}

/// Whether two names are the same but for case and signs (`apiKey` and `API_KEY`).
pub(super) fn same_name(a: &[u8], b: &[u8]) -> bool {
    let letters = |s: &[u8]| {
        s.iter()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(u8::to_ascii_lowercase)
            .collect::<Vec<u8>>()
    };
    letters(a) == letters(b)
}

/// Whether a quoted value is a reference, a template, a version or a mask, not a credential
/// (`"${DB_PASSWORD}"`, `"<token>"`, `"{{ secrets.X }}"`, `` `~${rest}` ``, a package's
/// `"next-auth": "^5.0.0"`, `"[secret:keyed]"`).
pub(super) fn is_reference(v: &[u8]) -> bool {
    let template = memchr::memmem::find(v, b"${").is_some();
    let version = {
        let digits = v
            .iter()
            .position(|c| !b"^~<>=v ".contains(c))
            .unwrap_or(v.len());
        let rest = &v[digits..];
        let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        n > 0 && rest.get(n) == Some(&b'.')
    };
    v.is_empty()
        || matches!(v[0], b'$' | b'%' | b'{' | b'<')
        || v.starts_with(b"[secret:")
        || template
        || version
}

/// Whether a value quoted by `q` names a variable in Markdown's code: in backticks, capitals,
/// digits and `_` that name a credential (`Signing key: `TOKEN_SECRET``). In quotes such a
/// value may be the secret (`JWT_SECRET="MY_APP_SECRET"`).
fn names_a_variable(q: &[u8], v: &[u8]) -> bool {
    q == b"`"
        && v.contains(&b'_')
        && v[0].is_ascii_uppercase()
        && v.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        && names_a_credential_in_text(v)
}

/// Schemes an `Authorization` header's credentials follow.
const SCHEMES: &[&str] = &[
    "basic",
    "bearer",
    "token",
    "digest",
    "negotiate",
    "ntlm",
    "bot",
    "apikey",
];

/// The value a credential's name gives at the sign `=` or `:` at `sign` of `text`, to mask
/// whole (`[secret:keyed]`): `NAME=value`, `NAME = value`, `NAME: value`, `"NAME": "value"`,
/// `NAME := value`, a URL's `?token=value`, an option's `--password=value`, where NAME names
/// a credential as a data key does ([`names_a_credential`]).
///
/// - A quoted value (in `"`, `'`, a backtick, or `\"` written out) is masked to its closing
///   quote (the line's end without one).
/// - An unquoted value runs to white space, a quote, one of `,;)]}<>` or a written escape.
///   It is masked after `=` with no blank around it (a shell or dotenv assignment, a URL's
///   query, an option); after `:`, or `=` with blanks around it (YAML, a header, code), only
///   when it ends its line ([`ends_its_line`]) and is not a name in code reached through
///   others (`self.password`) or the name itself (`apiKey: apiKey`): in prose (`Password:
///   must be long`) and in code (`apiKey: apiKey,`) such a word is rarely one.
/// - Never masked: references and code ([`is_code`], [`is_reference`]), a keyword argument
///   (`password=password)`, `token=self.token,`: a name in code before `,` or `)`),
///   comparisons (`==`, `!=`, `<=`), an arrow after a name not quoted (a hash's pair is
///   [`keyed_at_arrow`]'s), a Rust or C++ path (`::`), a URL's scheme
///   (`://`).
/// - An `Authorization` header's value after its scheme (`Basic`, `Bearer`, ...) is the
///   credential; a `Cookie` or `Set-Cookie` header's is the rest of its line (every cookie).
/// - Code given as the value (`token = process.env.TOKEN || "V"`) may have a quoted default
///   after it ([`code_default`]).
/// - After `login`, `logins` or `creds`, and after a credential's name whose value is masked
///   no other way, a user and a password (`login: ana / V`: [`login_value`]).
/// - A FreeRDP client's `/p:V` ([`super::commands::freerdp_option`]).
pub fn keyed_at_sign(text: &str, sign: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let before = sign.checked_sub(1).map(|i| b[i]);
    let mut after = sign + 1;
    if b[sign] == b':' {
        let freerdp = matches!(
            b[..sign],
            [.., b'/', b'p'] | [.., b'/', b'g', b'p'] | [.., b'/', b'p', b't', b'h']
        );
        if let Some(value) = freerdp
            .then(|| super::commands::freerdp_option(b, sign))
            .flatten()
        {
            return Some(value);
        }
        match b.get(sign + 1..) {
            Some([b':', ..]) | Some([b'/', b'/', ..]) => return None,
            Some([b'=', ..]) => after += 1,
            _ => {}
        }
        if before == Some(b':') {
            return None;
        }
        if b.get(sign + 1)
            .is_some_and(|&c| c.is_ascii_digit() || c == b'*')
        {
            if let Some(value) = pgpass_password(b, sign) {
                return Some(value);
            }
        }
    } else {
        let compound = b"!<>=:+-*/|&%^";
        if before.is_some_and(|c| compound.contains(&c))
            || matches!(b.get(sign + 1), Some(b'=' | b'~'))
        {
            return None;
        }
        if b.get(sign + 1) == Some(&b'>') {
            return keyed_at_arrow(b, sign);
        }
        if let Some(value) = keyed_attribute(b, sign) {
            return value;
        }
        if let Some(value) = query_secret(b, sign) {
            return Some(value);
        }
    }
    // The name: before blanks and a closing quote (`"password": `, `\"token\":`), and the
    // `]` of a subscript (`os.environ["API_KEY"] = `, `$_ENV['TOKEN']=`).
    let mut end = skip_back_blanks(b, sign);
    let mut spaced = end < sign;
    if end > 1 && b[end - 1] == b']' && matches!(b[end - 2], b'"' | b'\'') {
        end -= 1;
    }
    let end = before_closing_quote(b, end);
    let named = ends_as_a_credential(b, end);
    // `value` and `default` asked about only where the name ends as they do: most signs
    // follow no name.
    let given = || {
        end >= 5
            && match b[end - 1] | 0x20 {
                b'e' => value_of_a_named_pair(b, end),
                b't' => default_of_a_named_variable(b, end),
                _ => false,
            }
    };
    if !named && !given() {
        // A login's name ends with `n` or `s` (`login`, `creds`): most names end otherwise.
        let login = end >= 5 && matches!(b[end - 1] | 0x20, b'n' | b's');
        return login.then(|| login_after_name(b, end, after)).flatten();
    }
    let start = name_start(b, end);
    let name = &b[start..end];
    if named && !names_in_text(b, start, end) {
        return None;
    }
    let v = skip_blanks(b, after);
    spaced |= v > after || b[sign] == b':';
    let lower_end = |w: &str| ends_any_case(name, w);
    let seed = lower_end("mnemonic") || lower_end("phrase") && !lower_end("passphrase");
    if lower_end("cookie") || lower_end("cookies") || seed {
        // Every cookie, every word of a seed phrase: the rest of the line, or of its quoted
        // argument.
        let (vs, ve) = match quote_at(b, v) {
            Some(q) => quoted_value(b, v, q),
            None => {
                let line = memchr::memchr(b'\n', &b[v..]).map_or(b.len(), |i| v + i);
                let mut e = v;
                while e < line
                    && !matches!(b[e], b'"' | b'\'' | b'`' | b'\r')
                    && !(b[e] == b'\\' && matches!(b.get(e + 1), Some(b'"' | b'\'' | b'n' | b'r')))
                {
                    e += 1;
                }
                while e > v && matches!(b[e - 1], b' ' | b'\t') {
                    e -= 1;
                }
                // Code that reads a cookie (`cookie: req.headers.get("cookie")`).
                if is_code(&b[v..unquoted_end(b, v)]) {
                    return None;
                }
                (v, e)
            }
        };
        return (!is_reference(&b[vs..ve])).then_some((vs, ve));
    }
    if let Some(q) = quote_at(b, v) {
        let (vs, ve) = quoted_value(b, v, q);
        if closes_a_quote(b, v, q, ve) {
            return None;
        }
        let value = &b[vs..ve];
        return (!is_reference(value) && !names_a_variable(q, value)).then_some((vs, ve));
    }
    let mut ve = unquoted_end(b, v);
    let mut vs = v;
    if lower_end("authorization") {
        let scheme = &b[v..ve];
        if SCHEMES
            .iter()
            .any(|s| scheme.eq_ignore_ascii_case(s.as_bytes()))
            && b.get(ve) == Some(&b' ')
        {
            vs = ve + 1;
            while b.get(vs) == Some(&b' ') {
                vs += 1;
            }
            ve = unquoted_end(b, vs);
            let value = &b[vs..ve];
            return (!is_code(value)).then_some((vs, ve));
        }
    }
    let value = &b[vs..ve];
    if is_code(value) {
        return code_default(b, ve);
    }
    if !spaced {
        let argument = is_code_name(value) && matches!(b.get(ve), Some(b',' | b')'));
        return (!argument).then_some((vs, ve));
    }
    let code = value.contains(&b'.') && is_code_name(value) || same_name(value, name);
    if code {
        return code_default(b, ve);
    }
    if ends_its_line(b, ve) {
        return Some((vs, ve));
    }
    (b[sign] == b':')
        .then(|| passphrase_end(b, vs, ve))
        .flatten()
        .map(|e| (vs, e))
        .or_else(|| login_value(b, vs))
}

/// Whether the quote `q` at `at` closes a quote opened before it on its line: a prompt's
/// text that ends with the name (`read -p "Password: " pw; echo "ok"`), no value after it.
/// A `'` only when it is not closed again on the line (its value would end at `end`): prose's
/// apostrophes (`it's password: 'V'`) open nothing. A quote escaped (`\"` in `"say \"hi"`) is
/// not counted as one.
fn closes_a_quote(b: &[u8], at: usize, q: &[u8], end: usize) -> bool {
    let line = line_start(b, at);
    let closed = b[end..].starts_with(q);
    let escaped = |i: usize| q.len() == 1 && i > 0 && b[i - 1] == b'\\';
    let before = memchr::memmem::find_iter(&b[line..at], q).filter(|&i| !escaped(line + i));
    (q != b"'" || !closed) && before.count() % 2 == 1
}

/// Where the line that holds `at` starts: after the last line feed before it.
pub(super) fn line_start(b: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1)
}

/// Where a key that ends at `end` ends before its closing quote, if one ends it (`"password"`,
/// `\"token\"` written out in text that quotes JSON).
fn before_closing_quote(b: &[u8], end: usize) -> usize {
    if end == 0 || !matches!(b[end - 1], b'"' | b'\'') {
        return end;
    }
    end - 1 - usize::from(end > 1 && b[end - 2] == b'\\')
}

/// Where the key that ends at `end` starts, when it is the whole name `word` (lower case) in
/// any case.
fn key_named(b: &[u8], end: usize, word: &str) -> Option<usize> {
    let start = end.checked_sub(word.len())?;
    let whole = start == 0 || !is_name_byte(b[start - 1]);
    (whole && b[start..end].eq_ignore_ascii_case(word.as_bytes())).then_some(start)
}

/// How far before a `value` key [`value_of_a_named_pair`] looks for its `name`.
const PAIR_REACH: usize = 256;

/// Whether the key that ends at `end` (before its closing quote, if any; `end` ≥ 5) is
/// `value`, in any case, and the `name` or `key` before it in the same object or list item
/// (the nearest such key within [`PAIR_REACH`] bytes, no `{` or `}` between) is a string that
/// names a credential as a data key does ([`names_a_credential`]): a variable written as a pair,
/// `{"name": "DB_PASSWORD", "value": "V"}` (Kubernetes, ECS, lists of headers), `- name:
/// API_TOKEN` then `value: V` (YAML), `name = "db.password"` then `value = "V"` (HCL).
fn value_of_a_named_pair(b: &[u8], end: usize) -> bool {
    let Some(start) = key_named(b, end, "value") else {
        return false;
    };
    let from = start.saturating_sub(PAIR_REACH);
    let mut at = start;
    while let Some(i) = b[from..at].iter().rposition(|c| b":={}".contains(c)) {
        at = from + i;
        if matches!(b[at], b'{' | b'}') {
            return false;
        }
        let ke = before_closing_quote(b, skip_back_blanks(b, at));
        let key = &b[name_start(b, ke)..ke];
        if key.eq_ignore_ascii_case(b"name") || key.eq_ignore_ascii_case(b"key") {
            let v = skip_blanks(b, at + 1);
            let (vs, ve) = value_at(b, v, unquoted_end(b, v));
            return std::str::from_utf8(&b[vs..ve]).is_ok_and(names_a_credential);
        }
    }
    false
}

/// Whether the key that ends at `end` (`end` ≥ 5) is `default`, in any case, in the block of
/// a variable named as a credential as a data key is ([`names_a_credential`]): Terraform's
/// `variable "db_password" {` then `default = "V"`, the nearest `{` before the key within
/// [`PAIR_REACH`] bytes, no `}` between.
fn default_of_a_named_variable(b: &[u8], end: usize) -> bool {
    let Some(start) = key_named(b, end, "default") else {
        return false;
    };
    let from = start.saturating_sub(PAIR_REACH);
    let Some(open) = b[from..start]
        .iter()
        .rposition(|c| matches!(c, b'{' | b'}'))
    else {
        return false;
    };
    let qe = skip_back_blanks(b, from + open);
    if b[from + open] != b'{' || qe < 2 || b[qe - 1] != b'"' {
        return false;
    }
    let Some(qs) = memchr::memrchr(b'"', &b[..qe - 1]) else {
        return false;
    };
    let keyword = skip_back_blanks(b, qs);
    b[..keyword].ends_with(b"variable")
        && (keyword == 8 || !is_name_byte(b[keyword - 9]))
        && std::str::from_utf8(&b[qs + 1..qe - 1]).is_ok_and(names_a_credential)
}

/// The password of a `.pgpass` line (`HOST:PORT:DATABASE:USER:PASSWORD`) whose first `:` is
/// at `sign`: the host a word of letters, digits and `.-_*` with a letter, a `.` or a `*` in
/// it, after the line's start, a blank, a quote, `=` or `(`; the port digits or `*`; the
/// database and the user letters, digits and `._-*@$+`; the password not empty, without a `:`
/// that is not escaped (`\:`). It runs to the end of its line when the host starts the line
/// (a password may hold spaces), else where an unquoted value ends ([`unquoted_end`]: `echo
/// "*:*:*:ana:V" >> ~/.pgpass`).
fn pgpass_password(b: &[u8], sign: usize) -> Option<(usize, usize)> {
    let port = match b[sign + 1] {
        b'*' => 1,
        _ => skip_class(b, sign + 1, |c| c.is_ascii_digit()) - sign - 1,
    };
    if port > 5 || b.get(sign + 1 + port) != Some(&b':') {
        return None;
    }
    let host_byte = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'*');
    let mut hs = sign - b[..sign].iter().rev().take_while(|c| host_byte(c)).count();
    // After an escape written out (`\n`, `\t`: text that quotes JSON), its letter is no host's.
    let escape = hs > 0 && b[hs - 1] == b'\\' && matches!(b[hs], b'n' | b't');
    let line_start = hs == 0 || b[hs - 1] == b'\n' || escape && b[hs] == b'n';
    hs += usize::from(escape);
    let host = &b[hs..sign];
    let opens = |c: u8| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b'=' | b'(');
    if host.is_empty()
        || !host
            .iter()
            .any(|c| c.is_ascii_alphabetic() || matches!(c, b'.' | b'*'))
        || !(line_start || escape || opens(b[hs - 1]))
    {
        return None;
    }
    // The database and the user: names (not JSON's `\"url\"` after a time's `13:34:21Z`).
    let mut at = sign + 1 + port + 1;
    for _ in 0..2 {
        let end = skip_class(b, at, |c| {
            c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'*' | b'@' | b'$' | b'+')
        });
        if end == at || b.get(end) != Some(&b':') {
            return None;
        }
        at = end + 1;
    }
    let end = if line_start {
        let mut e = at;
        while e < b.len()
            && !matches!(b[e], b'\n' | b'\r')
            && !(b[e] == b'\\' && matches!(b.get(e + 1), Some(b'n' | b'r')))
        {
            e += 1;
        }
        skip_back_blanks(b, e)
    } else {
        unquoted_end(b, at)
    };
    let value = &b[at..end];
    let unescaped_colon = value
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b':' && (i == 0 || value[i - 1] != b'\\'));
    (!value.is_empty() && !unescaped_colon && !is_reference(value)).then_some((at, end))
}

/// The quoted value a hash's pair gives a credential's name or symbol at the arrow `=>` at
/// `sign` (PHP's `'password' => 'V'`, Ruby's `"token" => "V"` and `:password => 'V'`, Perl's
/// `password => 'V'`). After a bare name, which may be a function's parameter (`token =>
/// "Bearer " + token`), only a value closed on its line that ends the pair: blanks, then a
/// `,`, `;`, `)`, `]`, `}` or the line's end. An arrow after `)` is a function's
/// (`(password) => …`).
fn keyed_at_arrow(b: &[u8], sign: usize) -> Option<(usize, usize)> {
    let end = skip_back_blanks(b, sign);
    let (start, end, bare) = match b[..end].last()? {
        q @ (b'"' | b'\'') => {
            let open = b[..end - 1].iter().rposition(|c| c == q)?;
            (open + 1, end - 1, false)
        }
        _ => {
            let start = b[..end]
                .iter()
                .rposition(|&c| !is_name_byte(c))
                .map_or(0, |i| i + 1);
            let symbol = start > 0 && b[start - 1] == b':';
            (start, end, !symbol)
        }
    };
    // The value first: most arrows after a bare name are functions' (`x => x.id`).
    let v = skip_blanks(b, sign + 2);
    let q = quote_at(b, v)?;
    if start == end || !names_a_credential_in_text(&b[start..end]) {
        return None;
    }
    let (vs, ve) = quoted_value(b, v, q);
    if bare {
        if !b[ve..].starts_with(q) {
            return None;
        }
        let after = skip_blanks(b, ve + q.len());
        let ends = matches!(
            b.get(after),
            None | Some(b',' | b';' | b')' | b']' | b'}' | b'\n')
        );
        if !ends {
            return None;
        }
    }
    (!is_reference(&b[vs..ve])).then_some((vs, ve))
}

/// At the `=` of a signed URL's signature in its query (after `?` or `&`): Azure's `sig` (a
/// shared access signature), CloudFront's `Signature`, Amazon's `X-Amz-Signature` and
/// Google's `X-Goog-Signature`, whose value (16 characters or more, up to the next `&` or
/// `#`) is base64 percent-encoded, or hexadecimal, which no entropy test sees as random; or
/// an API's `key` there (`?key=V&cx=1`), when its value reads as a key ([`reads_as_a_key`]:
/// not `?key=uploads/a.png`).
fn query_secret(b: &[u8], sign: usize) -> Option<(usize, usize)> {
    let name = match b[..sign] {
        [.., b's', b'i', b'g'] | [.., b'k', b'e', b'y'] => sign - 3,
        [.., b'S', b'i', b'g', b'n', b'a', b't', b'u', b'r', b'e'] => {
            // `X-` and a vendor's name before it, or nothing.
            let mut start = sign - 9;
            if b[..start].ends_with(b"-") {
                let vendor = b[..start - 1]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .count();
                start -= 1 + vendor;
                (vendor > 0 && b[..start].ends_with(b"X-")).then_some(())?;
                start -= 2;
            }
            start
        }
        _ => return None,
    };
    matches!(name.checked_sub(1).map(|i| b[i]), Some(b'?' | b'&')).then_some(())?;
    let end = unquoted_end(b, sign + 1);
    let end = memchr::memchr2(b'&', b'#', &b[sign + 1..end]).map_or(end, |i| sign + 1 + i);
    let shaped = match b[..sign].ends_with(b"key") {
        true => reads_as_a_key(&b[sign + 1..end]),
        false => end - sign > 16,
    };
    shaped.then_some((sign + 1, end))
}

/// At the `=` of a `value=` attribute (XML, HTML) after a `key="NAME"` or `name="NAME"` one
/// that names a credential (.NET's `<add key="Password" value="V"/>`): the quoted value;
/// `Some(None)` where the pair names none, `None` where this is no such attribute.
fn keyed_attribute(b: &[u8], sign: usize) -> Option<Option<(usize, usize)>> {
    if sign < 5 || !b[sign - 5..sign].eq_ignore_ascii_case(b"value") {
        return None;
    }
    let q = quote_at(b, sign + 1)?;
    // The attribute before: `key="NAME" ` or `name='NAME' `.
    let end = skip_back_blanks(b, sign - 5);
    let close = end
        .checked_sub(1)
        .filter(|&i| matches!(b[i], b'"' | b'\''))?;
    let open = b[..close].iter().rposition(|&c| c == b[close])?;
    let attribute = &b[..open];
    let named = [&b"key="[..], b"name="].iter().any(|a| {
        attribute.len() >= a.len() && attribute[attribute.len() - a.len()..].eq_ignore_ascii_case(a)
    });
    if !named {
        return None;
    }
    if !names_a_credential_in_text(&b[open + 1..close]) {
        return Some(None);
    }
    let (vs, ve) = quoted_value(b, sign + 1, q);
    Some((!is_reference(&b[vs..ve])).then_some((vs, ve)))
}

/// `at` moved past the spaces and tabs at it.
pub(super) fn skip_blanks(b: &[u8], at: usize) -> usize {
    skip_class(b, at, |c| c == b' ' || c == b'\t')
}

/// `end` moved back over the spaces and tabs before it.
fn skip_back_blanks(b: &[u8], mut end: usize) -> usize {
    while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    end
}

/// Values code gives a credential without `=` or `:`, in order of where each is found:
///
/// - a quoted name and a quoted value, a call's two arguments (`define('DB_PASSWORD', 'V')`,
///   `os.environ.setdefault("SECRET_KEY", "V")`, `config.set('api_key', 'V')`), or the
///   first two of three (`SetEnvironmentVariable("API_KEY", "V", "User")`);
/// - a quoted password, the second of two arguments to a login (`smtp.login(user, 'V')`,
///   `ftp.login('ana', 'V')`), to `…auth(` (`HTTPBasicAuth('ana', 'V')`), `…authenticate(`,
///   `…Credential(` or `…Credentials(` ([`LOGIN_CALLS`]) or in requests' `auth=(USER, 'V')`;
/// - an XML element named as a credential (`<password>V</password>`,
///   `<DbPassword>V</DbPassword>`), its text up to the closing tag, on one line.
///
/// A reference (`'${PW}'`) is kept, and so is a password given by a variable (`login(user,
/// pw)`): it is no secret in the text.
pub fn keyed_in_code_spans(text: &str, mut each: impl FnMut(usize, usize)) {
    let b = text.as_bytes();
    // From each `)` right after a quote (far fewer than commas) back to the comma.
    let commas = memchr::memchr_iter(b')', b).filter_map(|close| {
        let end = skip_back_blanks(b, close).checked_sub(1)?;
        let q = b[end];
        if !matches!(q, b'"' | b'\'') {
            return None;
        }
        let open = (b[..end].iter())
            .rposition(|&c| c == q || c == b'\n')
            .filter(|&i| b[i] == q)?;
        let open = open - usize::from(open > 0 && b[open - 1] == b'\\');
        skip_back_blanks(b, open)
            .checked_sub(1)
            .filter(|&i| b[i] == b',')
    });
    let mut found: Vec<(usize, usize)> = commas
        .filter_map(|comma| second_argument(b, comma))
        .collect();
    found.extend(memchr::memmem::find_iter(b, b"</").filter_map(|close| element_text(b, close)));
    found.sort_unstable();
    for (start, end) in found {
        each(start, end);
    }
}

/// The quoted second argument after the `,` at `comma` of a two-argument call that gives a
/// credential ([`keyed_in_code_spans`]).
fn second_argument(b: &[u8], comma: usize) -> Option<(usize, usize)> {
    let v = skip_blanks(b, comma + 1);
    let q = quote_at(b, v)?;
    let (vs, ve) = quoted_value(b, v, q);
    if !b[ve..].starts_with(q) {
        return None;
    }
    let after = skip_blanks(b, ve + q.len());
    if b.get(after) != Some(&b')') || is_reference(&b[vs..ve]) {
        return None;
    }
    // The first argument, and the `(` before it.
    let end = skip_back_blanks(b, comma);
    let (named, open) = if matches!(b[..end].last(), Some(b'"' | b'\'')) {
        let (ns, ne, before) = quoted_before(b, comma)?;
        let name = &b[ns..ne];
        if b[before] == b',' {
            // Three arguments: the first names, the second is the value
            // (`SetEnvironmentVariable("API_KEY", "V", "User")`).
            let given = !name.is_empty() && !is_reference(name);
            return (given && named_first(b, before)).then_some((ns, ne));
        }
        (names_a_credential_in_text(name), before)
    } else {
        let open = b[..end]
            .iter()
            .rposition(|&c| matches!(c, b'(' | b',' | b')' | b'\n'))?;
        (false, open)
    };
    if b[open] != b'(' {
        return None;
    }
    if named {
        return Some((vs, ve));
    }
    // The call: `….login(`, `…auth(`, `…Credential(`, or the tuple after `auth=`.
    let callee_end = skip_back_blanks(b, open);
    let callee_start = b[..callee_end]
        .iter()
        .rposition(|&c| !is_name_byte(c))
        .map_or(0, |i| i + 1);
    let callee = &b[callee_start..callee_end];
    let login = LOGIN_CALLS.iter().any(|c| ends_any_case(callee, c));
    let tuple = callee.is_empty() && {
        let sign = callee_end.checked_sub(1).filter(|&i| b[i] == b'=');
        sign.is_some_and(|i| ends_any_case(&b[..skip_back_blanks(b, i)], "auth"))
    };
    (login || tuple).then_some((vs, ve))
}

/// How the names of calls that take a user and a password end (any case): `smtp.login(`,
/// `client.auth(`, `HTTPBasicAuth(`, `authenticate(`, `new NetworkCredential(`,
/// `UsernamePasswordCredentials(`.
const LOGIN_CALLS: &[&str] = &["login", "auth", "authenticate", "credential", "credentials"];

/// Whether the argument before the `,` at `comma` is a call's first, quoted, and names a
/// credential.
fn named_first(b: &[u8], comma: usize) -> bool {
    quoted_before(b, comma)
        .is_some_and(|(s, e, open)| b[open] == b'(' && names_a_credential_in_text(&b[s..e]))
}

/// The quoted argument that ends before the `,` at `comma` (blanks between): its text's
/// start and end, and where the last byte before its opening quote (blanks skipped) is.
fn quoted_before(b: &[u8], comma: usize) -> Option<(usize, usize, usize)> {
    let end = skip_back_blanks(b, comma);
    let &q @ (b'"' | b'\'') = b[..end].last()? else {
        return None;
    };
    let start = b[..end - 1].iter().rposition(|&c| c == q)?;
    let before = skip_back_blanks(b, start).checked_sub(1)?;
    Some((start + 1, end - 1, before))
}

/// The text of an XML element named as a credential, whose closing tag `</NAME>` starts at
/// `close`: from the end of its opening tag `<NAME>` (or `<NAME …>`), on the same line.
fn element_text(b: &[u8], close: usize) -> Option<(usize, usize)> {
    let ns = close + 2;
    let ne = skip_class(b, ns, is_name_byte);
    let name = &b[ns..ne];
    if b.get(ne) != Some(&b'>') || !names_a_credential_in_text(name) {
        return None;
    }
    let gt = b[..close]
        .iter()
        .rposition(|&c| matches!(c, b'>' | b'<' | b'\n'))?;
    let lt = b[..gt].iter().rposition(|&c| matches!(c, b'<' | b'\n'))?;
    let opened = b[gt] == b'>'
        && b[lt] == b'<'
        && b[lt + 1..].starts_with(name)
        && matches!(b.get(lt + 1 + name.len()), Some(b'>' | b' '));
    let (vs, ve) = (gt + 1, close);
    (opened && vs < ve && !is_reference(&b[vs..ve])).then_some((vs, ve))
}

/// The schemes of password hashes written `$ID$…` (crypt(3)'s MD5, SHA-256, SHA-512 and
/// yescrypt, Apache's `apr1`, bcrypt's, Argon2's, and passlib's others).
const HASH_IDS: &[&[u8]] = &[
    b"1",
    b"2",
    b"2a",
    b"2b",
    b"2x",
    b"2y",
    b"5",
    b"6",
    b"7",
    b"y",
    b"gy",
    b"apr1",
    b"md5",
    b"sha1",
    b"argon2i",
    b"argon2d",
    b"argon2id",
    b"scrypt",
    b"pbkdf2",
    b"pbkdf2-sha256",
    b"pbkdf2-sha512",
];

/// What the scheme written before a hash's first `$` starts with (Django's `pbkdf2_sha256$…`,
/// `bcrypt_sha256$…`, `argon2$…`; Werkzeug's `pbkdf2:sha256:600000$…`, `scrypt:32768:8:1$…`).
const HASH_SCHEMES: &[&[u8]] = &[b"pbkdf2", b"bcrypt", b"argon2", b"scrypt"];

/// The fewest characters of a hash's last part (after its last `$`): 22 in the shortest
/// schemes (MD5-crypt, Argon2's 16 bytes), so that `$1$2$3` (awk's fields) is none.
const HASH_MIN: usize = 20;

/// Password hashes in `text`, in order: what follows a scheme written `$ID$` ([`HASH_IDS`],
/// the `$` first in its word) or a scheme before the first `$` ([`HASH_SCHEMES`]): a run of
/// letters, digits and `./+=-_,$` (a `/` may be written `\/`) with a `$` in it, its last part
/// [`HASH_MIN`] characters or more of letters, digits and `./+=-_`. The scheme is kept
/// (`$2b$[secret:password-hash]`): the salt and the hash are what the run is.
pub fn password_hashes(text: &str, mut each: impl FnMut(usize, usize)) {
    let b = text.as_bytes();
    let mut next = 0;
    for d in memchr::memchr_iter(b'$', b) {
        if d < next {
            continue;
        }
        let Some(start) = hash_start(b, d) else {
            continue;
        };
        let (run, end) = hash_end(b, start);
        if let Some(end) = end {
            each(start, end);
        }
        // A `$` later in the run starts none: its run ends where this one does, with the
        // same last part (a text of `$1$2$3…` is read once).
        next = end.unwrap_or(run);
    }
}

/// Where a hash starts after the `$` at `d`, when a scheme ends there ([`password_hashes`]).
fn hash_start(b: &[u8], d: usize) -> Option<usize> {
    let word_start = |i: usize| i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    if word_start(d) {
        let id = skip_class(b, d + 1, |c| c.is_ascii_alphanumeric() || c == b'-');
        let known = b.get(id) == Some(&b'$') && HASH_IDS.contains(&&b[d + 1..id]);
        return known.then_some(id + 1);
    }
    let ws = d - b[..d]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b':'))
        .count();
    let scheme = HASH_SCHEMES.iter().any(|s| b[ws..d].starts_with(s));
    (scheme && word_start(ws)).then_some(d + 1)
}

/// Where the run that starts at `start` ends, and where the hash does when the run is one
/// ([`password_hashes`]).
fn hash_end(b: &[u8], start: usize) -> (usize, Option<usize>) {
    let part =
        |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'/' | b'+' | b'=' | b'-' | b'_');
    let (mut i, mut last) = (start, None);
    loop {
        match b.get(i) {
            Some(&c) if part(c) || c == b',' => i += 1,
            Some(b'$') => {
                last = Some(i + 1);
                i += 1;
            }
            Some(b'\\') if b.get(i + 1) == Some(&b'/') => i += 2,
            _ => break,
        }
    }
    // The last part: from its last `$`, of what a hash is written with.
    let Some(from) = last else {
        return (i, None);
    };
    let mut end = from;
    while end < i && (part(b[end]) || b[end] == b'\\') {
        end += 1;
    }
    (i, (end - from >= HASH_MIN).then_some(end))
}

/// The most words an unquoted passphrase after `NAME:` is read through.
const PASSPHRASE_WORDS: usize = 8;

/// Words that make a run of words a sentence, not a passphrase (`Password: must be at
/// least 8 characters`, `token: used to sign requests`): [`PROSE_WORDS`] and these.
const SENTENCE_WORDS: &[&str] = &[
    "be", "been", "must", "should", "will", "would", "can", "cannot", "could", "may", "not", "no",
    "it", "its", "was", "were", "has", "have", "had", "this", "these", "those", "you", "your",
    "we", "our", "they", "their", "at", "by", "than", "into", "see", "use", "used", "set", "here",
    "there", "then", "now", "so", "but", "do", "does", "did",
];

/// Where an unquoted value of several words after `NAME:` ends (a passphrase: `password:
/// correct horse battery staple`), given its first word `vs..ve`: words of letters, digits
/// and signs, each after one space or tab, up to [`PASSPHRASE_WORDS`] of them, that run to
/// the end of the line ([`ends_its_line`]), none of them a word of a sentence
/// ([`PROSE_WORDS`], [`SENTENCE_WORDS`]), nor code ([`is_code`]), nor a command's option ([`is_option`]), the last not ending with a
/// `.` (a sentence's end). `None` when the value is one word or reads as a sentence.
fn passphrase_end(b: &[u8], vs: usize, ve: usize) -> Option<usize> {
    let sentence = |w: &[u8]| {
        let bare = w.strip_suffix(b".").unwrap_or(w);
        PROSE_WORDS
            .iter()
            .chain(SENTENCE_WORDS)
            .any(|s| bare.eq_ignore_ascii_case(s.as_bytes()))
            || is_code(w)
            || is_option(w)
    };
    let (mut end, mut words) = (ve, 1);
    if sentence(&b[vs..ve]) {
        return None;
    }
    while words < PASSPHRASE_WORDS && matches!(b.get(end), Some(b' ' | b'\t')) {
        let ws = end + 1;
        let we = unquoted_end(b, ws);
        if we == ws || sentence(&b[ws..we]) {
            return None;
        }
        (end, words) = (we, words + 1);
        if ends_its_line(b, end) {
            return (b[end - 1] != b'.').then_some(end);
        }
    }
    None
}

/// Whether the word `w` is a command line's option (`-p`, `--out`): a `-`, then a letter.
fn is_option(w: &[u8]) -> bool {
    let name = w.strip_prefix(b"--").or_else(|| w.strip_prefix(b"-"));
    name.is_some_and(|n| n.first().is_some_and(u8::is_ascii_alphabetic))
}

/// The value a credential's name gives in prose at `is`, where ` is ` or ` was ` starts
/// (`the password is hunter2x9`, `my API key was "x y"`, `the password for the staging DB
/// is V`): the name is the word before it (`password`, `token`), or the two before it when
/// the last is `key` (`API key`), and names a credential ([`names_in_text`]), or the
/// credential is named before `for`, `to`, `of` or `on` a few words before
/// ([`named_before_preposition`]); the value is a quoted one, or the next word (to white
/// space or a quote, without the sentence's `.,;:!?)` after it) when it reads as a secret: 6
/// characters or more, and a digit or one of `!@#$%^&*+=~?` in it, so that `is stored in the
/// keychain` or `was rotated` stay. References, code and masks already written are kept.
pub fn keyed_in_prose(text: &str, is: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let verb = if b[is..].starts_with(b" is ") { 4 } else { 5 };
    // The value first: most words after `is` are prose, and the name is dearer to read.
    let (vs, ve) = prose_value(b, is + verb)?;
    let start = name_start(b, is);
    let named = start < is && (names_in_text(b, start, is) || named_before_preposition(b, start));
    named.then_some((vs, ve))
}

/// The value at `v` after ` is ` or ` was ` ([`keyed_in_prose`]), when it reads as a secret.
fn prose_value(b: &[u8], v: usize) -> Option<(usize, usize)> {
    if let Some(q) = quote_at(b, v) {
        let (vs, ve) = quoted_value(b, v, q);
        let value = &b[vs..ve];
        return (!is_reference(value) && !names_a_variable(q, value)).then_some((vs, ve));
    }
    let mut ve = v;
    while b
        .get(ve)
        .is_some_and(|c| !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`'))
    {
        ve += 1;
    }
    let ve = before_sentence_end(b, v, ve);
    let value = &b[v..ve];
    let secret = value.len() >= 6
        && value
            .iter()
            .any(|c| c.is_ascii_digit() || b"!@#$%^&*+=~?".contains(c));
    (secret && !is_code(value) && !is_reference(value)).then_some((v, ve))
}

/// Whether a credential is named before `for`, `to`, `of` or `on` at most four words (each
/// after one space, no sign between) before the word that starts at `at`: `the password for
/// the staging DB`, `the API key to prod`, `the token of the bot`.
fn named_before_preposition(b: &[u8], mut at: usize) -> bool {
    for _ in 0..4 {
        if at < 2 || b[at - 1] != b' ' {
            return false;
        }
        let end = at - 1;
        let start = name_start(b, end);
        if start == end {
            return false;
        }
        let word = &b[start..end];
        if [&b"for"[..], b"to", b"of", b"on"]
            .iter()
            .any(|p| word.eq_ignore_ascii_case(p))
        {
            return start >= 2 && b[start - 1] == b' ' && named_before(b, start - 1);
        }
        at = start;
    }
    false
}

/// The end of the word `b[v..ve]` without the `.,;:!?)` of a sentence after it.
fn before_sentence_end(b: &[u8], v: usize, mut ve: usize) -> usize {
    while ve > v && matches!(b[ve - 1], b'.' | b',' | b';' | b':' | b'!' | b'?' | b')') {
        ve -= 1;
    }
    ve
}

/// [`keyed_in_prose`] at every ` is ` and ` was ` of `text`, in order, then
/// [`password_and_value`] at each of `passwords`, where `password` starts (in any case), then
/// [`token_and_value`] at each of `tokens`, where `token` or `bearer` starts (in any case).
pub fn keyed_in_prose_spans(
    text: &str,
    passwords: impl Iterator<Item = usize>,
    tokens: impl Iterator<Item = usize>,
    mut each: impl FnMut(usize, usize),
) {
    let b = text.as_bytes();
    // The shortest: `pwd is x1234!`.
    if b.len() < 13 {
        return;
    }
    let [is, was, _] = finders();
    let mut sites: Vec<usize> = is.find_iter(b).collect();
    let is = sites.len();
    sites.extend(was.find_iter(b));
    if is > 0 && sites.len() > is {
        sites.sort_unstable();
    }
    for s in sites {
        if let Some((start, end)) = keyed_in_prose(text, s) {
            each(start, end);
        }
    }
    for at in passwords {
        if let Some((start, end)) = password_and_value(b, at) {
            each(start, end);
        }
    }
    for at in tokens {
        if let Some((start, end)) = token_and_value(b, at) {
            each(start, end);
        }
    }
}

/// The names whose value is a user and a password ([`login_value`]): `login: ana / V`.
/// `credentials` and `pass` (`user/pass: ana / V`) name credentials and take one too.
const LOGIN_NAMES: &[&str] = &["login", "logins", "creds"];

/// A byte of a login's user ([`login_value`]).
fn is_user_byte(c: u8) -> bool {
    is_name_byte(c) || c == b'@'
}

/// The longest user [`login_value`] reads.
const USER_MAX: usize = 32;

/// The value after a name of [`LOGIN_NAMES`] (any case) that ends at `end` and the sign
/// before `after`, when it is a login ([`login_value`]).
#[inline(never)]
fn login_after_name(b: &[u8], end: usize, after: usize) -> Option<(usize, usize)> {
    // The name's last bytes, and no byte of a name before them.
    let is = |w: &str| {
        ends_any_case(&b[..end], w) && (end == w.len() || !is_name_byte(b[end - w.len() - 1]))
    };
    if !LOGIN_NAMES.iter().any(|w| is(w)) {
        return None;
    }
    login_value(b, skip_blanks(b, after))
}

/// The password of a login given as a user and a password at `v` (`ana / V`, `admin/V`,
/// `ana:V`): a user of letters, digits, `.`, `_`, `-` and `@`, then `/` with a space each side
/// or none, or `:`, then a word that reads as a password ([`reads_as_a_password`]).
fn login_value(b: &[u8], v: usize) -> Option<(usize, usize)> {
    let user = b[v..]
        .iter()
        .take(USER_MAX + 1)
        .take_while(|&&c| is_user_byte(c));
    let ue = v + user.count();
    if ue == v || ue - v > USER_MAX {
        return None;
    }
    let vs = match b.get(ue..) {
        Some([b' ', b'/', b' ', ..]) => ue + 3,
        Some([b'/' | b':', ..]) => ue + 1,
        _ => return None,
    };
    let ve = before_sentence_end(b, vs, unquoted_end(b, vs));
    reads_as_a_password(&b[vs..ve]).then_some((vs, ve))
}

/// The quoted default that code gives a credential after the code that reads it, `from` on:
/// the first `||`, `??` or ` or ` on its line (before a `;`, within [`PAIR_REACH`]), and a
/// quoted value after it (`token = process.env.TOKEN || "V"`, `secret: cfg.secret ?? 'V'`,
/// `SECRET_KEY = os.environ.get("SECRET_KEY") or "V"`): the secret wherever the variable is
/// not set. An empty one (`|| ''`) is no value.
fn code_default(b: &[u8], from: usize) -> Option<(usize, usize)> {
    let reach = &b[from..b.len().min(from + PAIR_REACH)];
    let rest = &reach[..memchr::memchr2(b'\n', b';', reach).unwrap_or(reach.len())];
    let op = (0..rest.len()).find(|&i| {
        matches!(
            rest[i..],
            [b'|', b'|', ..] | [b'?', b'?', ..] | [b' ', b'o', b'r', b' ', ..]
        )
    })?;
    let after = from + op + if rest[op] == b' ' { 4 } else { 2 };
    let (vs, ve, _) = quoted_password(b, skip_blanks(b, after))?;
    Some((vs, ve))
}

/// The word one space after a name that ends with `token` or `bearer` at `at` (`token
/// hGAkWvj7FAc9`, `GITHUB_TOKEN x9Yz…`, `Bearer V`) when it reads as a password
/// ([`reads_as_a_password`]: 8 characters or more, a letter and a digit in it), without the
/// sentence's `.,;:!?)` after it: the bearer-token pattern takes such words from 16
/// characters on, this rule the shorter ones (`token limit`, `token count` stay).
fn token_and_value(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let len = if b[at] | 0x20 == b't' { 5 } else { 6 };
    let end = at + len;
    if b.get(end) != Some(&b' ') {
        return braced_pair(b, end);
    }
    // The value first: most words after `token ` are prose (`token usage`).
    let v = end + 1;
    let ve = before_sentence_end(b, v, unquoted_end(b, v));
    let named = || names_a_credential_in_text(&b[name_start(b, at)..end]);
    (reads_as_a_password(&b[v..ve]) && named()).then_some((v, ve))
}

/// The value one space after a name of a key, a secret or a passphrase that ends at `blank`
/// (`api key V`, `private key 0x…`, `secret V`, `client_secret V`, `api key "V"`, `OTP secret
/// JBSW…`: a name that ends with `key` and names a credential with the word before it, or one
/// that ends with `secret`; `passphrase V`, `seed phrase "V"`), with no sign between them.
/// A key's value when it reads as a key ([`reads_as_a_key`]), a passphrase's when it is
/// quoted or reads as a password ([`reads_as_a_password`]); quoted, or a word without the
/// sentence's `.,;:!?)` after it: prose names keys far more often than it gives one.
pub(super) fn key_and_value(b: &[u8], blank: usize) -> Option<(usize, usize)> {
    let ends = |w: &[u8]| blank >= w.len() && b[blank - w.len()..blank].eq_ignore_ascii_case(w);
    let phrase = ends(b"phrase");
    if b[blank] != b' ' || !(phrase || ends(b"key") || ends(b"secret")) {
        return None;
    }
    let quoted = quoted_password(b, blank + 1);
    let (v, ve) = match quoted {
        Some((vs, ve, _)) => (vs, ve),
        None => (
            blank + 1,
            before_sentence_end(b, blank + 1, unquoted_end(b, blank + 1)),
        ),
    };
    let value = &b[v..ve];
    let reads = match phrase {
        true => quoted.is_some() || reads_as_a_password(value),
        false => reads_as_a_key(value),
    };
    if !reads {
        return None;
    }
    named_before(b, blank).then_some((v, ve))
}

/// Whether a word reads as a key rather than a word: 32 hexadecimal digits or more (with
/// `0x` before them or not: an API key, a wallet's private key); 16 characters or more of
/// letters, digits and `+/=_-` with a capital, a lower-case letter and a digit; or a
/// one-time password's secret in base32 (capitals and `2`-`7`, a digit among them, 16, 24,
/// 32… characters).
fn reads_as_a_key(v: &[u8]) -> bool {
    let digits = v.strip_prefix(b"0x").unwrap_or(v);
    let hex = digits.len() >= 32 && digits.iter().all(u8::is_ascii_hexdigit);
    let mixed = v.len() >= 16
        && v.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"+/=_-".contains(c))
        && v.iter().any(u8::is_ascii_uppercase)
        && v.iter().any(u8::is_ascii_lowercase)
        && v.iter().any(u8::is_ascii_digit);
    let base32 = v.len() >= 16
        && v.len().is_multiple_of(8)
        && v.iter()
            .all(|c| c.is_ascii_uppercase() || (b'2'..=b'7').contains(c))
        && v.iter().any(u8::is_ascii_digit);
    hex || mixed || base32
}

/// The value one space after a name that ends with `password` at `at` (`password
/// hunter2x9`, `admin password 'V'`, `DB_PASSWORD V`, and after `to`: `set my password to
/// hunter2x9`), with no sign between them: a quoted value, or a word (without the
/// sentence's `.,;:!?)` after it) of 8 characters or more, letters, digits and
/// `!@#$%^&*+=~?_-`, with a letter and a digit in it (`password reset`, `password manager`,
/// `password hash` stay).
fn password_and_value(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let end = at + "password".len();
    if b.get(end) == Some(&b'(') {
        return password_call(b, name_start(b, at), end);
    }
    if b.get(end) != Some(&b' ') {
        return braced_pair(b, end);
    }
    if !names_a_credential_in_text(&b[name_start(b, at)..end]) {
        return None;
    }
    // `set my password to V`: the value after `to` as after the name.
    let to = b[end + 1..].starts_with(b"to ");
    let v = end + 1 + if to { 3 } else { 0 };
    if quote_at(b, v).is_some() {
        return quoted_password(b, v).map(|(vs, ve, _)| (vs, ve));
    }
    let ve = before_sentence_end(b, v, unquoted_end(b, v));
    reads_as_a_password(&b[v..ve]).then_some((v, ve))
}

/// The quoted second of a pair in braces whose first, the name that ends at `end` (quoted or
/// an atom), names a credential (Erlang's `{password, "V"}`, Elixir's `{:api_token, "V"}`
/// and `{"db_password", "V"}`): Erlang's and Elixir's options and headers. Asked where
/// `password`, `token` and `bearer` end ([`password_and_value`], [`token_and_value`]).
fn braced_pair(b: &[u8], end: usize) -> Option<(usize, usize)> {
    let start = name_start(b, end);
    let (open, after) = match (start.checked_sub(1).map(|i| b[i]), b.get(end)) {
        (Some(q @ (b'"' | b'\'')), Some(&c)) if c == q => (start - 1, end + 1),
        (Some(b':'), _) => (start - 1, end),
        _ => (start, end),
    };
    let brace = skip_back_blanks(b, open).checked_sub(1)?;
    let comma = skip_blanks(b, after);
    if b[brace] != b'{' || b.get(comma) != Some(&b',') {
        return None;
    }
    let v = skip_blanks(b, comma + 1);
    let q = quote_at(b, v)?;
    let (vs, ve) = quoted_value(b, v, q);
    let closed = b[ve..].starts_with(q) && b.get(skip_blanks(b, ve + q.len())) == Some(&b'}');
    let named = || names_a_credential_in_text(&b[start..end]);
    (closed && !is_reference(&b[vs..ve]) && named()).then_some((vs, ve))
}

/// The quoted password a call named `password`, `set_password` or `make_password` (any case,
/// `_` or not, a method's too: MySQL's `PASSWORD('V')`, Django's `user.set_password("V")`) is
/// given as its only argument; the name `b[start..end]`, its `(` at `end`.
fn password_call(b: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
    let called = &b[start..end];
    let method = called
        .iter()
        .rposition(|&c| c == b'.')
        .map_or(called, |i| &called[i + 1..]);
    let letters = || {
        method
            .iter()
            .filter(|&&c| c != b'_')
            .map(u8::to_ascii_lowercase)
    };
    let named = ["password", "setpassword", "makepassword"]
        .iter()
        .any(|w| letters().eq(w.bytes()));
    let (vs, ve, after) = named.then(|| quoted_password(b, end + 1)).flatten()?;
    (b.get(after) == Some(&b')')).then_some((vs, ve))
}

/// The quoted password at `at`: its value and where its closing quote ends, when a quote
/// opens it, it is closed on its line, and it is neither empty nor a reference.
fn quoted_password(b: &[u8], at: usize) -> Option<(usize, usize, usize)> {
    let q = quote_at(b, at)?;
    let (vs, ve) = quoted_value(b, at, q);
    let closed = b[ve..].starts_with(q);
    (closed && vs < ve && !is_reference(&b[vs..ve])).then_some((vs, ve, ve + q.len()))
}

/// Whether an unquoted word given as a password reads as one: 8 characters or more, letters,
/// digits and `!@#$%^&*+=~?_-`, with a letter and a digit in it, and no code.
fn reads_as_a_password(value: &[u8]) -> bool {
    value.len() >= 8
        && value
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"!@#$%^&*+=~?_-".contains(c))
        && value.iter().any(u8::is_ascii_digit)
        && value.iter().any(u8::is_ascii_alphabetic)
        && !is_code(value)
}

/// The value of a Markdown table's row whose cell after the `|` at `pipe` holds a
/// credential's name alone, in backticks or not (`| DB_PASSWORD | V |`; not a package's,
/// lower case with a `-`: `better-auth`): the next cell's text, closed by a `|` on the same
/// line, when it is quoted (`"V"`, `'V'`, `` `V` ``) and no reference, or one word that reads
/// as a password ([`reads_as_a_password`]); not the name again.
pub(super) fn table_cell_value(b: &[u8], pipe: usize) -> Option<(usize, usize)> {
    let line = memchr::memchr(b'\n', &b[pipe + 1..]).map_or(b.len(), |i| pipe + 1 + i);
    let cell_end = |from: usize| memchr::memchr(b'|', &b[from..line]).map(|i| from + i);
    let trimmed = |s: usize, e: usize| {
        let s = skip_blanks(b, s).min(e);
        (s, skip_back_blanks(b, e).max(s))
    };
    let next = cell_end(pipe + 1)?;
    let (mut ns, mut ne) = trimmed(pipe + 1, next);
    if ne - ns > 2 && b[ns] == b'`' && b[ne - 1] == b'`' {
        (ns, ne) = (ns + 1, ne - 1);
    }
    let name = &b[ns..ne];
    // A package's name reads as one (`better-auth`, `next-auth`): lower case with a `-`.
    let package = name.contains(&b'-') && !name.iter().any(u8::is_ascii_uppercase);
    if package || !name.iter().all(|&c| is_name_byte(c)) || !names_a_credential_in_text(name) {
        return None;
    }
    let (mut vs, mut ve) = trimmed(next + 1, cell_end(next + 1)?);
    let quoted = ve - vs > 2 && matches!(b[vs], b'"' | b'\'' | b'`') && b[ve - 1] == b[vs];
    if quoted {
        (vs, ve) = (vs + 1, ve - 1);
    }
    let value = &b[vs..ve];
    let secret = if quoted {
        !is_reference(value)
    } else {
        reads_as_a_password(value)
    };
    (secret && !same_name(value, name)).then_some((vs, ve))
}

/// Words that follow an option in prose (`the --token flag`, `--password or ...`): no value.
pub(super) const PROSE_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "argument",
    "as",
    "flag",
    "for",
    "from",
    "if",
    "in",
    "is",
    "of",
    "on",
    "only",
    "option",
    "or",
    "parameter",
    "that",
    "the",
    "to",
    "when",
    "which",
    "with",
];

/// The values credentials' names give in `text` ([`keyed_at_sign`] at each of `signs`, then
/// [`keyed_at_option`] at each of `options`), in that order.
pub fn keyed_spans(
    text: &str,
    signs: impl Iterator<Item = usize>,
    options: impl Iterator<Item = usize>,
    mut each: impl FnMut(usize, usize),
) {
    for s in signs {
        if let Some((start, end)) = keyed_at_sign(text, s) {
            each(start, end);
        }
    }
    for o in options {
        if let Some((start, end)) = super::commands::keyed_at_option(text, o) {
            each(start, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_runs_are_the_maximal_runs_of_24() {
        let mut rng = pi_jsonl_gen::Rng::new(7);
        let pieces = ["a", "Z", "9", "/", "=", " ", ".", "é", "-", "_", "+", "\n"];
        for _ in 0..3000 {
            let n = rng.range(0, 200) as usize;
            let t: String = (0..n).map(|_| *rng.pick(&pieces)).collect();
            let b = t.as_bytes();
            let mut want = Vec::new();
            let mut i = 0;
            while i < b.len() {
                let token = |c: u8| c.is_ascii_alphanumeric() || b"+/_=-".contains(&c);
                let j = skip_class(b, i, token);
                if j - i >= TOKEN_MIN {
                    want.push((i, j));
                }
                i = j + 1;
            }
            let c = Classes::of(b);
            assert_eq!(token_runs(b, &c).collect::<Vec<_>>(), want, "{t:?}");
        }
    }

    #[test]
    fn password_word_ends_are_the_words_ends() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let ends = PASSWORD_WORDS
                    .iter()
                    .any(|w| w.as_bytes().ends_with(&[a, b]));
                assert_eq!(password_word_end([a, b]), ends, "{a} {b}");
            }
        }
    }

    #[test]
    fn windows_cut_at_blanks() {
        let t = b"ab /x y\tc@d e/f\\g /";
        let c = Classes::of(t);
        let w: Vec<_> = windows(t, &c, |b| b.separator).collect();
        assert_eq!(w, vec![(2, 5), (11, 17), (17, 19)]);
        let c = Classes::of(b"a/b");
        let w: Vec<_> = windows(b"a/b", &c, |b| b.slash).collect();
        assert_eq!(w, vec![(0, 3)]);
        let c = Classes::of(t);
        assert_eq!(windows(t, &c, |b| b.at).collect::<Vec<_>>(), vec![(7, 11)]);
    }
}
