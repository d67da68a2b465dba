//! Masking text that is kept (`--keep-text`, and provider error texts in every mode): the
//! secrets the user named (exact values), credentials the detectors know by their shape,
//! e-mail addresses, tokens that look random, and file paths (given their pseudonyms).
//! Each mask names its kind: `[secret:github-token]`, `[email]`.

use super::paths::{looks_like_path, windows_root, Pseudonyms};
use regex::Regex;
use std::sync::OnceLock;

/// A detector: the kind its masks name, the pattern (group `s`, when present, is the part
/// masked; the whole match otherwise), and the anchors that let most texts skip it.
struct Detector {
    kind: &'static str,
    pattern: &'static str,
    /// What every match holds: one of the anchors of each of these.
    anchors: &'static [Anchors],
}

/// Literal strings one of which every match of a pattern holds (read off the pattern: each
/// of its alternatives starts with or holds one; a `[=:]` or `\s` the pattern needs is one
/// too): a text that holds none cannot match, and the pattern is not run on it. A prefilter no weaker than its pattern (a test checks each on
/// matching texts).
#[derive(Debug, Clone, Copy)]
enum Anchors {
    /// Found byte for byte.
    Exact(&'static [&'static str]),
    /// Found in any ASCII case (the pattern is `(?i)`). Unicode case folding also matches `k`
    /// with the Kelvin sign and `s` with the long s: a text holding either always runs.
    AnyCase(&'static [&'static str]),
    /// A white space character (what `\s` matches: Unicode's White_Space, as
    /// `char::is_whitespace`).
    Space,
}

impl Anchors {
    /// Whether `text` holds one of the anchors (so the pattern may match it).
    fn in_text(self, text: &str) -> bool {
        match self {
            Anchors::Exact(words) => words
                .iter()
                .any(|w| memchr::memmem::find(text.as_bytes(), w.as_bytes()).is_some()),
            Anchors::AnyCase(words) => {
                text.contains(['\u{212A}', '\u{17F}'])
                    || words
                        .iter()
                        .any(|w| contains_any_case(text.as_bytes(), w.as_bytes()))
            }
            Anchors::Space => text.contains(char::is_whitespace),
        }
    }
}

/// Whether `text` holds `word` (ASCII, lower case, not empty) in any ASCII case.
fn contains_any_case(text: &[u8], word: &[u8]) -> bool {
    let first = word[0];
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), text).any(|at| {
        text[at..]
            .get(..word.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(word))
    })
}

/// The credential detectors, most specific first (an earlier one wins where two overlap).
const DETECTORS: &[Detector] = &[
    Detector {
        kind: "private-key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
        anchors: &[Anchors::Exact(&["-----BEGIN "])],
    },
    Detector {
        kind: "url-password",
        pattern: r"[A-Za-z][A-Za-z0-9+.\-]*://(?P<s>[^\s:/@]*:[^\s@/]+)@",
        anchors: &[Anchors::Exact(&["://"]), Anchors::Exact(&["@"])],
    },
    Detector {
        kind: "aws-access-key",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}\b",
        anchors: &[Anchors::Exact(&[
            "AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA",
        ])],
    },
    Detector {
        kind: "aws-secret-key",
        pattern: r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#,
        anchors: &[Anchors::AnyCase(&["aws"]), Anchors::Exact(&["=", ":"])],
    },
    Detector {
        kind: "github-token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        anchors: &[Anchors::Exact(&[
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
        ])],
    },
    Detector {
        kind: "gitlab-token",
        pattern: r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&[
            "glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-",
        ])],
    },
    Detector {
        kind: "slack-token",
        pattern: r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        anchors: &[Anchors::Exact(&[
            "xox",
            "https://hooks.slack.com/services/",
        ])],
    },
    Detector {
        kind: "anthropic-key",
        pattern: r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&["sk-ant-"])],
    },
    Detector {
        kind: "openai-key",
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&["sk-"])],
    },
    Detector {
        kind: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_\-]{35,}",
        anchors: &[Anchors::Exact(&["AIza"])],
    },
    Detector {
        kind: "stripe-key",
        pattern: r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}",
        anchors: &[Anchors::Exact(&["k_live_", "k_test_"])],
    },
    Detector {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        anchors: &[Anchors::Exact(&["eyJ"])],
    },
    Detector {
        kind: "bearer-token",
        pattern: r"(?i)\b(?:bearer|token)\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
        anchors: &[Anchors::AnyCase(&["bearer", "token"]), Anchors::Space],
    },
    Detector {
        kind: "password",
        pattern: r#"(?i)(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|auth)["']?\s*[=:]\s*["']?(?P<s>[A-Za-z0-9!@#$%^&*+/=_\-~]*[0-9!@#$%^&*+=~][A-Za-z0-9!@#$%^&*+/=_\-~]*)"#,
        anchors: &[
            Anchors::AnyCase(&[
                "password", "passwd", "pwd", "secret", "token", "api", "access", "auth",
            ]),
            Anchors::Exact(&["=", ":"]),
        ],
    },
];

/// Whether [`Masker::spans`] looks for each pattern's anchors before running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefilter {
    /// For a key (asked about once, short) or a text of at most [`SHORT_TEXT`] bytes: looking
    /// for the anchors costs little, and a text that holds none of a pattern's needs that
    /// pattern neither run nor compiled (most runs in default mode then compile few or none).
    Anchors,
    /// For longer kept text: every pattern runs. The regular expressions find their own
    /// literal prefixes with vector code; looking for each detector's anchors first, one
    /// search per anchor, made `--keep-text` slower (BENCHMARKS.md).
    None,
}

/// Kept text up to this length is looked at with [`Prefilter::Anchors`] too: on so few bytes
/// the anchors cost little, and the default mode, which masks only short texts (error
/// messages), then compiles only the patterns whose anchors it meets.
const SHORT_TEXT: usize = 128;

/// The e-mail pattern's anchor: its `@`.
const EMAIL: Anchors = Anchors::Exact(&["@"]);

/// The path pattern's anchors: every path it finds holds a `/` or a `\` (`~/`, `/`, a drive
/// with `\` or `/`, a UNC start).
const PATH: Anchors = Anchors::Exact(&["/", "\\"]);

/// The shortest text the random-token pattern can match (a run of 24 token characters).
const TOKEN_MIN: usize = 24;

/// What a masked span becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mask {
    Secret(&'static str),
    Email,
    Path,
}

struct Span {
    start: usize,
    end: usize,
    mask: Mask,
}

/// The patterns, each compiled the first time a text may need it (compiling all of them
/// costs about as much as redacting 10 MB, and a run in the default mode needs few or none).
struct Compiled {
    detectors: Vec<OnceLock<Regex>>,
    email: OnceLock<Regex>,
    token: OnceLock<Regex>,
    path: OnceLock<Regex>,
}

impl Compiled {
    fn detector(&self, i: usize) -> &Regex {
        self.detectors[i].get_or_init(|| Regex::new(DETECTORS[i].pattern).expect("detector"))
    }

    fn email(&self) -> &Regex {
        self.email.get_or_init(|| {
            Regex::new(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
                .expect("e-mail pattern")
        })
    }

    fn token(&self) -> &Regex {
        self.token.get_or_init(|| {
            Regex::new(&format!(r"[A-Za-z0-9+/_=\-]{{{TOKEN_MIN},}}")).expect("token pattern")
        })
    }

    fn path(&self) -> &Regex {
        // A path starts the text, follows a blank, a quote, a bracket, an operator, a written
        // `\n`, or is the path of a `file://` URL; it is absolute, `~/`, or a Windows path:
        // a drive with `\`, `/` or `\\` between components, or `\\server\share` (a server
        // name of two characters or more, and one `\` after it: JSON text quoted in text holds
        // `\\n` often, UNC paths seldom).
        self.path.get_or_init(|| {
            Regex::new(concat!(
                r#"(?:^|[\s"'`(\[=:,<>|]|\\[nrt]|file://)(?P<s>~?/[^\s"'`<>()\[\]{},;|\\]+"#,
                r#"|[A-Za-z]:(?:\\\\?|/)[^\s"'`<>()\[\]{},;|\\/][^\s"'`<>()\[\]{},;|]*"#,
                r#"|\\\\[A-Za-z0-9][A-Za-z0-9._$\-]+\\[^\s"'`<>()\[\]{},;|\\/][^\s"'`<>()\[\]{},;|]*)"#
            ))
            .expect("path pattern")
        })
    }
}

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| Compiled {
        detectors: DETECTORS.iter().map(|_| OnceLock::new()).collect(),
        email: OnceLock::new(),
        token: OnceLock::new(),
        path: OnceLock::new(),
    })
}

/// The masker of one run: the exact secrets the user named, and what each kind of mask counts.
#[derive(Default)]
pub struct Masker {
    /// Exact secret values (`--secrets-from`, `--secret-env`), longest first.
    exact: Vec<String>,
}

/// The shortest exact secret value masked (shorter ones, such as `PORT=3000`, would mask
/// ordinary text everywhere).
pub const MIN_EXACT: usize = 6;

impl Masker {
    pub fn new(mut exact: Vec<String>) -> Masker {
        exact.retain(|s| s.chars().count() >= MIN_EXACT);
        exact.sort_by_key(|s| std::cmp::Reverse(s.len()));
        exact.dedup();
        Masker { exact }
    }

    /// The exact secrets, for the residual scan.
    pub fn exact(&self) -> &[String] {
        &self.exact
    }

    /// `text` with every secret, e-mail address, random-looking token and path masked;
    /// `found(kind, original)` is told of each.
    /// `also`: strings masked elsewhere on the same record (kind, text), masked wherever they
    /// occur here too (see [`super::rewrite::Rewriter::also`]).
    pub fn mask(
        &self,
        text: &str,
        paths: &mut Pseudonyms,
        also: &[(&'static str, String)],
        mut found: impl FnMut(&'static str, &str),
    ) -> String {
        let pre = if text.len() <= SHORT_TEXT {
            Prefilter::Anchors
        } else {
            Prefilter::None
        };
        let spans = self.spans(text, also, pre);
        if spans.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for s in spans {
            out.push_str(&text[at..s.start]);
            let original = &text[s.start..s.end];
            match s.mask {
                Mask::Path | Mask::Secret("path") => {
                    let pseudonym = paths.path(original);
                    if pseudonym != original {
                        found("path", original);
                    }
                    out.push_str(&pseudonym);
                }
                Mask::Email | Mask::Secret("email") => {
                    found("email", original);
                    out.push_str("[email]");
                }
                Mask::Secret(kind) => {
                    found(kind, original);
                    out.push_str("[secret:");
                    out.push_str(kind);
                    out.push(']');
                }
            }
            at = s.end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// Whether `text` holds anything to mask (a key that looks like an identifier may still
    /// be a token).
    pub fn finds_any(&self, text: &str) -> bool {
        !self.spans(text, &[], Prefilter::Anchors).is_empty()
    }

    /// The spans to mask, in order, none overlapping (an earlier finder wins).
    fn spans(&self, text: &str, also: &[(&'static str, String)], pre: Prefilter) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        let add = |start: usize, end: usize, mask: Mask, spans: &mut Vec<Span>| {
            if start < end && !spans.iter().any(|s| s.start < end && start < s.end) {
                spans.push(Span { start, end, mask });
            }
        };
        // Longest first: a longer string wins over one it contains or overlaps.
        let mut exact: Vec<(&'static str, &String)> =
            self.exact.iter().map(|s| ("listed", s)).collect();
        exact.extend(also.iter().map(|(k, s)| (*k, s)));
        exact.sort_by_key(|(_, s)| std::cmp::Reverse(s.len()));
        for (kind, secret) in exact {
            for (i, _) in text.match_indices(secret.as_str()) {
                let mut end = i + secret.len();
                if kind == "path" {
                    // A path masked elsewhere found inside a longer path (one the path
                    // pattern did not see start): the whole longer path gets its pseudonym.
                    // Masking the prefix alone would leave the rest as it was, and a
                    // pseudonym's last `/` before that rest could spell again a shorter path
                    // masked elsewhere (`…/dir2/` + `node_modules/` holds `/node_modules/`).
                    end = path_end(text, end);
                }
                add(i, end, Mask::Secret(kind), &mut spans);
            }
        }
        // With the prefilter, each pattern runs only on a text that holds one of its anchors;
        // the patterns are compiled the first time one runs (a run may need none).
        let may = |anchors: Anchors| pre == Prefilter::None || anchors.in_text(text);
        let (email, token, path) = (may(EMAIL), text.len() >= TOKEN_MIN, may(PATH));
        let detectors: Vec<usize> = (0..DETECTORS.len())
            .filter(|&i| DETECTORS[i].anchors.iter().all(|&a| may(a)))
            .collect();
        if detectors.is_empty() && !email && !token && !path {
            spans.sort_by_key(|s| s.start);
            return spans;
        }
        let c = compiled();
        for &i in &detectors {
            let kind = DETECTORS[i].kind;
            for m in c.detector(i).captures_iter(text) {
                let g = m.name("s").or_else(|| m.get(0)).expect("group 0");
                if g.len() < 6 {
                    continue;
                }
                add(g.start(), g.end(), Mask::Secret(kind), &mut spans);
            }
        }
        let emails = email.then(|| c.email().find_iter(text));
        for m in emails.into_iter().flatten() {
            add(m.start(), m.end(), Mask::Email, &mut spans);
        }
        let tokens = token.then(|| c.token().find_iter(text));
        for m in tokens.into_iter().flatten() {
            if looks_random(m.as_str()) {
                add(m.start(), m.end(), Mask::Secret("high-entropy"), &mut spans);
            }
        }
        let paths = path.then(|| c.path().captures_iter(text));
        for m in paths.into_iter().flatten() {
            let g = m.name("s").expect("path group");
            let found = windows_in_json_text(g.as_str());
            // A lone `/word` in text is more often a command (`/compact`) than a path.
            let deep = found.starts_with('~')
                || found[1..].contains('/')
                || windows_root(found).is_some_and(|r| found[r..].contains(['\\', '/']));
            if deep && looks_like_path(found) {
                add(g.start(), g.start() + found.len(), Mask::Path, &mut spans);
            }
        }
        spans.sort_by_key(|s| s.start);
        spans
    }
}

/// A Windows path found in text, cut where the text's own escapes start: in JSON text, where
/// every `\` of a path is doubled (`C:\\\\Users\\\\ana`), a lone `\` starts an escape (`\n`), not
/// a component.
fn windows_in_json_text(path: &str) -> &str {
    let doubled = path.get(1..4) == Some(":\\\\") || path.starts_with("\\\\\\\\");
    if !doubled {
        return path;
    }
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'\\')) => i += 2,
            (b'\\', _) => return &path[..i],
            _ => i += 1,
        }
    }
    path
}

/// Whether `c` can be part of a path written in text (what the path pattern allows).
fn is_path_char(c: char) -> bool {
    !c.is_whitespace() && !"\"'`<>()[]{},;|\\".contains(c)
}

/// Where the run of path characters that goes on at `end` stops.
fn path_end(text: &str, end: usize) -> usize {
    text[end..]
        .char_indices()
        .find(|&(_, c)| !is_path_char(c))
        .map_or(text.len(), |(i, _)| end + i)
}

/// Whether a run of token characters looks like a random credential rather than a word, a
/// path or a hash: letters of both cases and digits, and more than 4.2 bits of entropy per
/// character (hex digests, at most 4, and identifiers stay).
fn looks_random(s: &str) -> bool {
    let b = s.as_bytes();
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let digit = b.iter().any(u8::is_ascii_digit);
    if !(lower && upper && digit) || s.contains('/') && s.split('/').all(|p| p.len() < 20) {
        return false;
    }
    let mut counts = [0u32; 256];
    for &c in b {
        counts[usize::from(c)] += 1;
    }
    let n = b.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum();
    entropy > 4.2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(m: &Masker, t: &str) -> String {
        m.mask(t, &mut Pseudonyms::default(), &[], |_, _| {})
    }

    #[test]
    fn detectors_name_their_kind() {
        let m = Masker::default();
        let cases = [
            (
                "key AKIAIOSFODNN7EXAMPLE here",
                "key [secret:aws-access-key] here",
            ),
            (
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "[secret:github-token]",
            ),
            ("glpat-abcdefghij0123456789", "[secret:gitlab-token]"),
            ("xoxb-1234567890-abcdefghij", "[secret:slack-token]"),
            (
                "sk-ant-api03-abcdefghijklmnopqrstuvwx",
                "[secret:anthropic-key]",
            ),
            ("sk-proj-abcdefghijklmnopqrstuvwx", "[secret:openai-key]"),
            (
                "https://bob:hunter22@db.example.org/x",
                "https://[secret:url-password]@db.example.org/x",
            ),
            ("mail ana@example.com now", "mail [email] now"),
            ("cat /home/ana/.ssh/id_rsa", "cat /home/user1/dir1/dir2"),
            ("password=correct-horse-9", "password=[secret:password]"),
            (
                "apiKey: resolvedApiKey, pwd.slice(0)",
                "apiKey: resolvedApiKey, pwd.slice(0)",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(mask(&m, text), want, "{text}");
        }
    }

    /// The prefilter is no weaker than the patterns: each pattern that matches a text finds
    /// one of its anchors in it. Texts built from credentials of every kind and pieces of
    /// them (in other cases, with the Kelvin sign and the long s that Unicode case folding
    /// equates with `k` and `s`), in random orders and noise.
    #[test]
    fn anchors_are_in_every_text_a_pattern_matches() {
        let c = compiled();
        let pieces = [
            "AKIAIOSFODNN7EXAMPLE",
            "ASIA",
            "AROA",
            "ghp_",
            "gho_",
            "github_pat_",
            "glpat-",
            "gldt-",
            "xoxb-",
            "https://hooks.slack.com/services/",
            "sk-",
            "sk-ant-",
            "AIza",
            "sk_live_",
            "pk_test_",
            "rk_",
            "eyJ",
            "eyJhbGciOiJIUzI1NiJ9",
            ".",
            "aws",
            "AWS",
            "Aws_Secret",
            "secret",
            "SECRET",
            "key",
            "Key",
            "=",
            ":",
            " ",
            "\"",
            "'",
            "@",
            "example.com",
            "://",
            "https://",
            "bob:hunter22",
            "Bearer ",
            "token ",
            "TOKEN",
            "tO\u{212A}en",
            "\u{17F}ecret",
            "pa\u{17F}\u{17F}word",
            "password",
            "PassWd",
            "pwd",
            "api_key",
            "API-KEY",
            "access_key",
            "Auth",
            "-----BEGIN ",
            "RSA ",
            "PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "/",
            "\\",
            "~/",
            "C:",
            "home",
            "abcdefghij0123456789",
            "ABCDEFGHIJKLMNOP",
            "Qm9vZ3Jhbm",
            "x9",
            "é",
            "日本",
            "\n",
            "\t",
            "-",
            "_",
            "+",
            "0123456789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w",
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aw\u{17F} key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aw\u{17F}",
            "postgres://bob:hunter22@db",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        // How often each pattern matched (the detectors, then e-mail, path, token).
        let mut matched = [0u32; DETECTORS.len() + 3];
        for _ in 0..30_000 {
            let text: String = (0..1 + next(12))
                .map(|_| pieces[next(pieces.len())])
                .collect();
            for (i, d) in DETECTORS.iter().enumerate() {
                if c.detector(i).is_match(&text) {
                    matched[i] += 1;
                    let all = d.anchors.iter().all(|a| a.in_text(&text));
                    assert!(all, "{}: {text:?}", d.kind);
                }
            }
            let n = DETECTORS.len();
            if c.email().is_match(&text) {
                matched[n] += 1;
                assert!(EMAIL.in_text(&text), "email: {text:?}");
            }
            if c.path().is_match(&text) {
                matched[n + 1] += 1;
                assert!(PATH.in_text(&text), "path: {text:?}");
            }
            if c.token().is_match(&text) {
                matched[n + 2] += 1;
                assert!(text.len() >= TOKEN_MIN, "token: {text:?}");
            }
        }
        // Not a test of nothing: every pattern matched many of the texts.
        assert!(
            matched.iter().all(|&m| m >= 20),
            "matches per pattern: {matched:?}"
        );
    }

    #[test]
    fn private_keys_and_jwts() {
        let m = Masker::default();
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(mask(&m, pem), "a\n[secret:private-key]\nb");
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(mask(&m, jwt), "[secret:jwt]");
    }

    #[test]
    fn listed_secrets_and_what_stays() {
        let m = Masker::new(vec!["s3cr3t-value".into(), "3000".into()]);
        assert_eq!(
            mask(&m, "x s3cr3t-value y 3000"),
            "x [secret:listed] y 3000"
        );
        let plain =
            "a git sha 0123456789abcdef0123456789abcdef01234567 and a_long_identifier_name_here";
        assert_eq!(mask(&m, plain), plain);
        assert_eq!(
            mask(&m, "random Qm9vZ3JhbmRvbVRva2VuWFl6MTIz9x7"),
            "random [secret:high-entropy]"
        );
        assert_eq!(
            mask(&m, "see https://example.com/a/b"),
            "see https://example.com/a/b"
        );
        assert_eq!(mask(&m, "run /compact now"), "run /compact now");
        // Windows paths: with `\`, `/`, doubled `\` (in JSON text, up to its next escape), UNC.
        let mut p = Pseudonyms::default();
        let win = r#"open C:\Users\ana\src\main.rs, C:/Users/ana/src/x.txt, {"p":"C:\\Users\\ana\\src\\main.rs\n"} \\srv\share\a.md"#;
        assert_eq!(
            m.mask(win, &mut p, &[], |_, _| {}),
            r#"open C:\Users\user1\dir1\file1.rs, C:/Users/user1/dir1/file2.txt, {"p":"C:\\Users\\user1\\dir1\\file1.rs\n"} \\dir2\dir3\file3.md"#
        );
        assert_eq!(mask(&m, r"see C:\x or a:b"), r"see C:\dir1 or a:b");
        // Escapes of JSON text quoted in text are not UNC paths.
        let quoted = r#"split(\"\\n\"); "\\n\\n01 x"; \\n\\nthe"#;
        assert_eq!(mask(&m, quoted), quoted);
        // A local file's URL: its path.
        assert_eq!(
            mask(&m, "at (file:///srv/x/y.mjs:1:7)"),
            "at (file:///srv/dir1/dir2)"
        );
        // Paths in text that is itself escaped JSON (`\n` written out).
        assert_eq!(
            mask(&m, r"a.json\n/srv/x/y.txt\n"),
            r"a.json\n/srv/dir1/file1.txt\n"
        );
    }
}
