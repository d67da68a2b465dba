//! Masking text that is kept (`--keep-text`, and provider error texts in every mode): the
//! secrets the user named (exact values), credentials the detectors know by their shape,
//! e-mail addresses, tokens that look random, and file paths (given their pseudonyms).
//! Each mask names its kind: `[secret:github-token]`, `[email]`.

use super::classes::Classes;
use super::commands;
use super::find::{self, TOKEN_MIN};
use super::paths::{looks_like_path, windows_root, Pseudonyms};
use crate::hash::FastMap;
use crate::sync::lock;
use aho_corasick::packed;
use memchr::memmem;
use regex::{Captures, Regex};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// A detector: the kind its masks name, the pattern (group `s`, when present, is the part
/// masked; the whole match otherwise), and the anchors that let most texts skip it.
struct Detector {
    kind: &'static str,
    pattern: &'static str,
    /// What every match holds: one of the anchors of each of these.
    anchors: &'static [Anchors],
    /// For a `(?i)` pattern that long text runs only where it can start (unless the text
    /// holds a character `(?i)` folds with ASCII, [`Found::folds`]).
    sites: Option<Sites>,
}

/// Where a pattern can start, and where a match starting there ends at the latest (`None`:
/// none starts there); [`find::captures_at_sites`] runs the pattern there.
#[derive(Clone, Copy)]
struct Sites {
    find: fn(&str, &Classes) -> Vec<usize>,
    reach: fn(&str, usize) -> Option<usize>,
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

    /// [`Anchors::in_text`] told by `found`, the anchors longer than a byte the text holds
    /// ([`Scan::words_in`]), where that is enough: anchors found byte for byte, none a single
    /// byte.
    fn held(self, found: &[&str]) -> Option<bool> {
        match self {
            Anchors::Exact(words) if words.iter().all(|w| w.len() > 1) => {
                Some(words.iter().any(|w| found.contains(w)))
            }
            _ => None,
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

/// The index of the AWS access key id's detector in [`DETECTORS`].
const AWS_ACCESS_KEY: usize = 2;

/// The credential detectors, most specific first (an earlier one wins where two overlap).
/// Where the bearer-token pattern is in [`DETECTORS`] (its sites are the prose rule's too;
/// found by a comparison a `const` can make: the kinds are in lower case).
const BEARER: usize = {
    let mut i = 0;
    while !DETECTORS[i].kind.eq_ignore_ascii_case("bearer-token") {
        i += 1;
    }
    i
};

const DETECTORS: &[Detector] = &[
    Detector {
        kind: "private-key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
        anchors: &[Anchors::Exact(&["-----BEGIN "])],
        sites: None,
    },
    Detector {
        kind: "url-password",
        pattern: r"[A-Za-z][A-Za-z0-9+.\-]*://(?P<s>[^\s:/]*:[^\s@/]+)@",
        anchors: &[Anchors::Exact(&["://"]), Anchors::Exact(&["@"])],
        sites: None,
    },
    Detector {
        kind: "aws-access-key",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}\b",
        anchors: &[Anchors::Exact(&[
            "AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA",
        ])],
        sites: None,
    },
    Detector {
        kind: "aws-secret-key",
        pattern: r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#,
        anchors: &[Anchors::AnyCase(&["aws"]), Anchors::Exact(&["=", ":"])],
        sites: None,
    },
    // Its name, then its value after white space: `aws configure set aws_secret_access_key V`.
    Detector {
        kind: "aws-secret-key",
        pattern: r#"(?i)aws_secret_access_key["']?\s+["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#,
        anchors: &[Anchors::AnyCase(&["aws"]), Anchors::Space],
        sites: None,
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
        sites: None,
    },
    Detector {
        kind: "gitlab-token",
        pattern: r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&[
            "glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-",
        ])],
        sites: None,
    },
    Detector {
        kind: "slack-token",
        pattern: r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        anchors: &[Anchors::Exact(&[
            "xox",
            "https://hooks.slack.com/services/",
        ])],
        sites: None,
    },
    Detector {
        kind: "anthropic-key",
        pattern: r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&["sk-ant-"])],
        sites: None,
    },
    Detector {
        kind: "openai-key",
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}",
        anchors: &[Anchors::Exact(&["sk-"])],
        sites: None,
    },
    Detector {
        kind: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_\-]{35,}",
        anchors: &[Anchors::Exact(&["AIza"])],
        sites: None,
    },
    Detector {
        kind: "stripe-key",
        pattern: r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}",
        anchors: &[Anchors::Exact(&["k_live_", "k_test_"])],
        sites: None,
    },
    // Tokens known by their prefix whose bodies the high-entropy rule would let through:
    // hexadecimal, or letters and digits of one case (or letters alone).
    Detector {
        kind: "huggingface-token",
        pattern: r"\bhf_[A-Za-z0-9]{30,}\b",
        anchors: &[Anchors::Exact(&["hf_"])],
        sites: None,
    },
    Detector {
        kind: "npm-token",
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        anchors: &[Anchors::Exact(&["npm_"])],
        sites: None,
    },
    Detector {
        kind: "pypi-token",
        pattern: r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        anchors: &[Anchors::Exact(&["pypi-AgE"])],
        sites: None,
    },
    Detector {
        kind: "sendgrid-key",
        pattern: r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b",
        anchors: &[Anchors::Exact(&["SG."])],
        sites: None,
    },
    Detector {
        kind: "digitalocean-token",
        pattern: r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        anchors: &[Anchors::Exact(&["_v1_"])],
        sites: None,
    },
    Detector {
        kind: "shopify-token",
        pattern: r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        anchors: &[Anchors::Exact(&["shp"])],
        sites: None,
    },
    Detector {
        kind: "supabase-token",
        pattern: r"\bsbp_[a-f0-9]{40}\b",
        anchors: &[Anchors::Exact(&["sbp_"])],
        sites: None,
    },
    Detector {
        kind: "databricks-token",
        pattern: r"\bdapi[a-f0-9]{32}(?:-[0-9]+)?\b",
        anchors: &[Anchors::Exact(&["dapi"])],
        sites: None,
    },
    Detector {
        kind: "mailgun-key",
        pattern: r"\bkey-[0-9a-z]{32}\b",
        anchors: &[Anchors::Exact(&["key-"])],
        sites: None,
    },
    Detector {
        kind: "age-secret-key",
        pattern: r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
        anchors: &[Anchors::Exact(&["AGE-SECRET-KEY-1"])],
        sites: None,
    },
    Detector {
        kind: "newrelic-key",
        pattern: r"\bNR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9_\-]{32})\b",
        anchors: &[Anchors::Exact(&["NRAK-", "NRII-"])],
        sites: None,
    },
    Detector {
        kind: "terraform-token",
        pattern: r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        anchors: &[Anchors::Exact(&[".atlasv1."])],
        sites: None,
    },
    Detector {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        anchors: &[Anchors::Exact(&["eyJ"])],
        sites: None,
    },
    Detector {
        kind: "mapbox-token",
        pattern: r"\b[pst]k\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}",
        anchors: &[Anchors::Exact(&["eyJ"])],
        sites: None,
    },
    Detector {
        kind: "bearer-token",
        pattern: r"(?i)\b(?:bearer|token)\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
        anchors: &[Anchors::AnyCase(&["bearer", "token"]), Anchors::Space],
        sites: Some(Sites {
            find: find::bearer_sites,
            reach: find::bearer_reach,
        }),
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
        sites: Some(Sites {
            find: find::password_sites,
            reach: find::password_reach,
        }),
    },
];

/// How [`Masker::spans`] finds the patterns' matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefilter {
    /// For a key (asked about once, short): looking for the anchors costs little, and a key
    /// that holds none of a pattern's needs that pattern neither run nor compiled (most runs
    /// in default mode then compile few or none).
    Anchors,
    /// For kept text: one pass finds where each pattern can match, and it runs there
    /// ([`sites_spans`]). Running every pattern over every byte cost 18 × pi-branch
    /// (BENCHMARKS.md, round 7); looking for each detector's anchors first, one search per
    /// anchor, cost more still (round 6), and 17 of those searches (one `memmem` searcher
    /// built for each) cost a short text ten times what its sites do (round 7).
    Sites,
}

/// The e-mail pattern's anchors: its `@`, or `%40` (in a URL).
const EMAIL: Anchors = Anchors::Exact(&["@", "%40"]);

/// The path pattern's anchors: every path it finds holds a `/` or a `\` (`~/`, `/`, a drive
/// with `\` or `/`, a UNC start).
const PATH: Anchors = Anchors::Exact(&["/", "\\"]);

/// What a masked span becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mask {
    Secret(&'static str),
    /// The value a credential's name gives in text ([`find::keyed_at_sign`],
    /// [`commands::keyed_at_option`]): `[secret:keyed]`.
    Keyed,
    Email,
    Path,
    /// A user name met in a home path, found as a word in other text
    /// ([`Pseudonyms::user_words`]): its pseudonym.
    User,
}

/// A span of a text to mask, and what it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    start: usize,
    end: usize,
    mask: Mask,
}

impl Span {
    /// Whether the span is a path's, the whole of a text `len` bytes long.
    pub(super) fn is_whole_path(&self, len: usize) -> bool {
        self.mask == Mask::Path && self.start == 0 && self.end == len
    }
}

/// What the patterns find in kept text ([`Masker::masks`] adds the exact secrets and the
/// user's words to it): a function of the text alone, found ahead of the reader on other
/// threads (`super::ahead`) and handed to [`Masker::masks`].
pub(super) fn found_in_text(text: &str) -> Vec<Span> {
    sites_spans(text)
}

/// The patterns, each compiled the first time a text may need it (compiling all of them
/// costs about as much as redacting 10 MB, and a run in the default mode needs few or none).
struct Compiled {
    detectors: Vec<OnceLock<Regex>>,
    email: OnceLock<Regex>,
    token: OnceLock<Regex>,
    path: OnceLock<Regex>,
    literals: OnceLock<Scan>,
    plain_names: OnceLock<PlainNames>,
}

/// One pass over a text for the detectors' [`Anchors::Exact`] anchors longer than a byte
/// (single bytes, such as `@` or `=`, are found with `memchr` where a pattern needs them),
/// and for the words [`commands::keyed_in_commands_spans`] starts from.
struct Scan {
    /// The anchors, sorted.
    words: Vec<&'static str>,
    /// For each byte, the range of `words` that start with it.
    starting: [(u8, u8); 256],
    /// A search for all the anchors at once (Teddy), built the first time a text is not
    /// looked through by byte ([`Scan::words_in`]); `None` where the CPU has none.
    search: OnceLock<Option<packed::Searcher>>,
    /// The bytes looked through by byte so far in the run.
    by_byte: AtomicUsize,
}

/// The longest text [`Scan::words_in`] looks through by byte, and how many bytes in all
/// before the search of them all is built. Compiling the regular expression that searched
/// for them before took 0.36 ms, more than a quarter of what the default mode takes over a
/// 1 MB session, for the one or two provider error texts a run there looks through; by byte
/// costs ~4 instructions a byte, so the bytes allowed cost about what compiling did, and a
/// run that looks through more (`--keep-text`) builds the search. (The packed search that
/// replaced the expression was not timed alone; the default mode's instructions over the
/// corpus did not change.)
const BY_BYTE: (usize, usize) = (4096, 1 << 18);

impl Scan {
    /// The scan for the anchors `keep` keeps.
    fn new(keep: fn(&str) -> bool) -> Scan {
        let mut words: Vec<&'static str> = DETECTORS
            .iter()
            .flat_map(|d| d.anchors)
            .flat_map(|a| match a {
                Anchors::Exact(w) => *w,
                _ => &[],
            })
            .chain(&commands::COMMAND_WORDS)
            .copied()
            .filter(|w| w.len() > 1 && keep(w))
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut starting = [(0, 0); 256];
        for (i, w) in words.iter().enumerate() {
            let (start, end) = &mut starting[usize::from(w.as_bytes()[0])];
            if start == end {
                *start = i as u8;
            }
            *end = i as u8 + 1;
        }
        Scan {
            words,
            starting,
            search: OnceLock::new(),
            by_byte: AtomicUsize::new(0),
        }
    }

    fn search(&self) -> Option<&packed::Searcher> {
        (self.search)
            .get_or_init(|| packed::Searcher::new(self.words.iter()))
            .as_ref()
    }

    /// Whether one of the anchors starts at `b[at]`.
    #[inline]
    fn starts_at(&self, b: &[u8], at: usize) -> bool {
        let (start, end) = self.starting[usize::from(b[at])];
        (self.words[usize::from(start)..usize::from(end)].iter())
            .any(|w| b[at..].starts_with(w.as_bytes()))
    }

    /// The anchors `text` holds, each once.
    fn words_in(&self, text: &str) -> Vec<&'static str> {
        let by_byte = text.len() <= BY_BYTE.0
            && self.by_byte.load(Ordering::Relaxed) < BY_BYTE.1
            && self.by_byte.fetch_add(text.len(), Ordering::Relaxed) < BY_BYTE.1;
        self.words_found(text, by_byte)
    }

    /// [`Scan::words_in`], looked for at every byte (`by_byte`) or where the search for them
    /// all stops ([`find::word_sites`]).
    fn words_found(&self, text: &str, by_byte: bool) -> Vec<&'static str> {
        let b = text.as_bytes();
        let mut found: Vec<&'static str> = Vec::new();
        let at_site = |at: usize| {
            let (start, end) = self.starting[usize::from(b[at])];
            for &w in &self.words[usize::from(start)..usize::from(end)] {
                // Its second byte first (every anchor has one): most places a first byte
                // starts are no anchor's, and the whole comparison is a call.
                let w2 = w.as_bytes();
                if b.get(at + 1) == Some(&w2[1])
                    && b[at..].starts_with(w2)
                    && !found.iter().any(|f| std::ptr::eq(*f, w))
                {
                    found.push(w);
                }
            }
        };
        match self.search().filter(|_| !by_byte) {
            Some(search) => find::word_sites(search, b).into_iter().for_each(at_site),
            None => (0..b.len()).for_each(at_site),
        }
        found
    }
}

impl Compiled {
    fn literals(&self) -> &Scan {
        self.literals.get_or_init(|| Scan::new(|_| true))
    }

    fn plain_names(&self) -> &PlainNames {
        self.plain_names.get_or_init(PlainNames::new)
    }

    fn detector(&self, i: usize) -> &Regex {
        self.detectors[i].get_or_init(|| Regex::new(DETECTORS[i].pattern).expect("detector"))
    }

    fn email(&self) -> &Regex {
        self.email.get_or_init(|| {
            // The `@` may be percent-encoded, in a URL's query (`?email=ana%40example.com`).
            // Any character beyond ASCII in the local part and the domain (`josé@example.com`,
            // `ana@bücher.de`), which [`email_span`] then narrows; the top-level domain in
            // ASCII, so that text written without spaces after an address is not read into it.
            Regex::new(
                r"[A-Za-z0-9._%+\-\x{80}-\x{10FFFF}]+(?:@|%40)[A-Za-z0-9\-\x{80}-\x{10FFFF}]+(?:\.[A-Za-z0-9\-\x{80}-\x{10FFFF}]+)*\.[A-Za-z]{2,}",
            )
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
        // Or (group `h`) it starts at a home root, `/home/`, `/Users/`, `/root/` or a drive's
        // `Users` folder (`C:\Users\`), which names a user: after anything that cannot
        // continue a name (not a letter, a digit, `._-/\~`), maybe through a one-letter option
        // (`-I/home/…`), so that `@/Users/…`, `**/home/…`, `{/home/…`, `：C:\Users\…` are
        // paths, and `./home/…` or `x/home/…` are not.
        self.path.get_or_init(|| {
            Regex::new(concat!(
                r#"(?:^|[\s"'`(\[=:,<>|]|\\[nrt]|file://)(?P<s>~?/[^\s"'`<>()\[\]{},;|\\]+"#,
                r#"|[A-Za-z]:(?:\\\\?|/)[^\s"'`<>()\[\]{},;|\\/][^\s"'`<>()\[\]{},;|]*"#,
                r#"|\\\\[A-Za-z0-9][A-Za-z0-9._$\-]+\\[^\s"'`<>()\[\]{},;|\\/][^\s"'`<>()\[\]{},;|]*)"#,
                r#"|(?:^|[^A-Za-z0-9._\-/\\~])(?:-[A-Za-z])?(?P<h>/(?:home|Users|root)/[^\s"'`<>()\[\]{},;|\\]*"#,
                r#"|[A-Za-z]:(?:\\\\?|/)[Uu][Ss][Ee][Rr][Ss][\\/][^\s"'`<>()\[\]{},;|]*)"#
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
        literals: OnceLock::new(),
        plain_names: OnceLock::new(),
    })
}

/// The masker of one run: the exact secrets the user named, and what each kind of mask counts.
#[derive(Default)]
pub struct Masker {
    /// Exact secret values (`--secrets-from`, `--secret-env`), longest first.
    exact: Vec<String>,
    /// A searcher for each of `exact`, made once (not once for each text).
    exact_finders: Vec<memmem::Finder<'static>>,
    /// [`Masker::key_finds_any`]'s answers so far, for every rewriter of the run.
    keys: Mutex<FastMap<String, bool>>,
    /// [`Masker::name_spans`]'s answers so far (a session names its model in every message).
    names: Mutex<FastMap<String, Vec<Span>>>,
    /// The secrets kept text held so far in the run, masked wherever they occur again.
    learned: Mutex<Learned>,
    /// How many secrets `learned` holds (read without its lock: most runs learn none).
    learned_count: AtomicUsize,
    /// Whether the masker finds nothing in any of [`USAGE_KEYS`]: answered when it is made,
    /// and kept among the answers of `keys`, so that a usage object copied whole
    /// ([`Masker::usage_keys_plain`]) and one rewritten member by member agree.
    usage_keys_plain: bool,
}

/// The keys Pi writes in a usage object and its `cost` (pi-ai's `Usage`, 0.73.1 to 1.6.0).
pub const USAGE_KEYS: [&str; 10] = [
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "cacheWrite1h",
    "reasoning",
    "totalTokens",
    "cost",
    "total",
    "totalFromProvider",
];

/// At most this many secrets found in kept text are remembered for the rest of the run.
pub const LEARNED: usize = 4096;

/// The secrets found in kept text so far ([`Masker::learn`]), each with its kind. A text is
/// searched for all of them at once by their first [`PREFIX`] bytes (every secret learned has
/// at least [`super::check::MIN_LEN`] characters): a bit for each prefix's hash rules out
/// most places of a text, and the table of prefixes gives the secrets that may start at the
/// others. Learning a secret adds to both; no search is built again (a regular expression of
/// them all, built again every 16 secrets learned, cost the corpus' sessions 45 % of their
/// `--keep-text` time: BENCHMARKS.md, round 35).
#[derive(Default)]
struct Learned {
    /// In the order learned, with their kinds.
    secrets: Vec<(String, &'static str)>,
    /// The secrets (their places in `secrets`) by their first [`PREFIX`] bytes.
    by_prefix: FastMap<u64, SmallVec<[u32; 1]>>,
    /// [`FILTER_BITS`] bits: for each secret, one set for each [`GRAM`] bytes of its first
    /// [`PREFIX`] that start [`STRIDE`] places or fewer from its start ([`filter_bit`]);
    /// empty until a secret is learned.
    filter: Vec<u64>,
}

/// How many bytes of a learned secret find it in a text.
const PREFIX: usize = super::check::MIN_LEN;

/// A text is looked at [`GRAM`] bytes every [`STRIDE`] bytes: whatever its place, a secret
/// ([`PREFIX`] bytes at least) has its first bytes at one of the places looked at, at most
/// `STRIDE - 1` bytes into it, so [`GRAM`] of its first [`PREFIX`] stand there.
const GRAM: usize = 4;
const STRIDE: usize = PREFIX + 1 - GRAM;

/// The size of [`Learned`]'s filter: 32 KiB, a bit in 13 set for [`LEARNED`] secrets.
const FILTER_BITS: usize = 1 << 18;

/// `bytes`' first [`PREFIX`] bytes, as one number.
fn prefix_of(bytes: &[u8]) -> u64 {
    let mut p = [0; PREFIX];
    p.copy_from_slice(&bytes[..PREFIX]);
    u64::from_le_bytes(p)
}

/// The [`GRAM`] bytes at `bytes`' start, as one number.
fn gram_of(bytes: &[u8]) -> u32 {
    let mut g = [0; GRAM];
    g.copy_from_slice(&bytes[..GRAM]);
    u32::from_le_bytes(g)
}

/// The bit of [`Learned`]'s filter a gram sets (the top bits of a multiplicative hash).
fn filter_bit(gram: u32) -> usize {
    (u64::from(gram).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FILTER_BITS.trailing_zeros()))
        as usize
}

impl Learned {
    /// Adds a secret (of at least [`PREFIX`] bytes); `false` when it was known or too short.
    fn add(&mut self, kind: &'static str, secret: &str) -> bool {
        let Some(head) = secret.as_bytes().get(..PREFIX) else {
            return false;
        };
        let prefix = prefix_of(head);
        let ids = self.by_prefix.entry(prefix).or_default();
        if ids.iter().any(|&k| self.secrets[k as usize].0 == secret) {
            return false;
        }
        ids.push(self.secrets.len() as u32);
        self.secrets.push((secret.to_string(), kind));
        if self.filter.is_empty() {
            self.filter = vec![0; FILTER_BITS / 64];
        }
        for into in 0..STRIDE {
            let bit = filter_bit(gram_of(&head[into..]));
            self.filter[bit / 64] |= 1 << (bit % 64);
        }
        true
    }

    /// The learned secrets that `text` holds, with their kinds and every place they start
    /// (inside or across another as well), in the order they first occur in it.
    fn in_text(&self, text: &str) -> Vec<Held> {
        let mut held: Vec<Held> = Vec::new();
        if self.filter.is_empty() {
            return held;
        }
        let b = text.as_bytes();
        let mut at = 0;
        while let Some(gram) = b.get(at..at + GRAM) {
            let bit = filter_bit(gram_of(gram));
            if self.filter[bit / 64] & (1 << (bit % 64)) != 0 {
                // The secrets this place is the first looked at of: those starting after the
                // place before it, up to this one.
                for start in at.saturating_sub(STRIDE - 1)..=at {
                    let Some(head) = b.get(start..start + PREFIX) else {
                        break;
                    };
                    for &k in self.by_prefix.get(&prefix_of(head)).into_iter().flatten() {
                        let (secret, kind) = &self.secrets[k as usize];
                        if !b[start..].starts_with(secret.as_bytes()) {
                            continue;
                        }
                        match held.iter_mut().find(|h| h.id == k) {
                            Some(h) => h.starts.push(start),
                            None => held.push(Held {
                                id: k,
                                kind,
                                secret: secret.clone(),
                                starts: vec![start],
                            }),
                        }
                    }
                }
            }
            at += STRIDE;
        }
        held
    }
}

/// Strings masked wherever they occur in a record's kept text besides what the masker finds
/// (kind, text): what a second rewrite of the record masks ([`super::rewrite::Rewriter::also`]),
/// each with its searcher, made once for the record (made for each text, they had cost the
/// corpus' sessions 14 % of `--keep-text`'s instructions).
#[derive(Default)]
pub struct Also {
    strings: Vec<(&'static str, String)>,
    finders: Vec<memmem::Finder<'static>>,
}

impl Also {
    pub fn new(strings: Vec<(&'static str, String)>) -> Also {
        let finders = (strings.iter())
            .map(|(_, s)| memmem::Finder::new(s).into_owned())
            .collect();
        Also { strings, finders }
    }
}

/// A learned secret a text holds ([`Learned::in_text`]).
struct Held {
    /// Its place among the secrets learned.
    id: u32,
    kind: &'static str,
    secret: String,
    /// Every place it starts in the text, in order (overlapping ones too).
    starts: Vec<usize>,
}

/// Whether a secret found in kept text is remembered for the rest of the run: not a path's or
/// an address's, 8 characters or more, and 12 or more when it reads as a word (letters of one
/// case, or a capital and lower-case letters), which it would mask everywhere after
/// (`POSTGRES_PASSWORD=postgres`, `TOKEN=development`).
fn is_learned(kind: &str, secret: &str) -> bool {
    let b = secret.as_bytes();
    let word = b.iter().all(u8::is_ascii_lowercase)
        || b.iter().all(u8::is_ascii_uppercase)
        || b.first().is_some_and(u8::is_ascii_uppercase)
            && b[1..].iter().all(u8::is_ascii_lowercase);
    let least = if word {
        LEARNED_WORD
    } else {
        super::check::MIN_LEN
    };
    !matches!(kind, "path" | "email") && secret.chars().count() >= least
}

/// The shortest word ([`is_learned`]) remembered as a secret.
const LEARNED_WORD: usize = 12;

/// At most this many keys' answers are remembered (a bound on the memory they take).
pub const KEYS_REMEMBERED: usize = 1 << 16;

/// The shortest exact secret value masked (shorter ones, such as `PORT=3000`, would mask
/// ordinary text everywhere).
pub const MIN_EXACT: usize = 6;

impl Masker {
    pub fn new(mut exact: Vec<String>) -> Masker {
        exact.retain(|s| s.chars().count() >= MIN_EXACT);
        exact.sort_by_key(|s| std::cmp::Reverse(s.len()));
        exact.dedup();
        let exact_finders = (exact.iter())
            .map(|s| memmem::Finder::new(s).into_owned())
            .collect();
        let mut masker = Masker {
            exact,
            exact_finders,
            keys: Mutex::default(),
            names: Mutex::default(),
            learned: Mutex::default(),
            learned_count: AtomicUsize::new(0),
            usage_keys_plain: false,
        };
        let found = USAGE_KEYS
            .iter()
            .filter(|k| masker.key_finds_any(k))
            .count();
        masker.usage_keys_plain = found == 0;
        masker
    }

    /// Whether the masker finds nothing in any of [`USAGE_KEYS`] (it finds nothing in them
    /// unless a secret the user named is one of those words).
    pub fn usage_keys_plain(&self) -> bool {
        self.usage_keys_plain
    }

    /// Remembers a secret found in kept text (or under a credential's key) for the rest of the
    /// run ([`is_learned`]).
    pub fn learn(&self, kind: &'static str, secret: &str) {
        if !is_learned(kind, secret) || self.learned_count.load(Ordering::Relaxed) >= LEARNED {
            return;
        }
        let mut l = lock(&self.learned);
        if l.add(kind, secret) {
            self.learned_count.store(l.secrets.len(), Ordering::Relaxed);
        }
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
        also: &Also,
        found: impl FnMut(&'static str, &str),
    ) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        self.masks(text, paths, also, None, found, |start, end, mask| {
            out.push_str(&text[at..start]);
            out.push_str(mask);
            at = end;
        });
        out.push_str(&text[at..]);
        out
    }

    /// The masks of `text`, in order: `each(start, end, mask)` for each span of it that
    /// [`Masker::mask`] replaces and what it writes there (a path may keep its own text);
    /// `found(kind, original)` is told of each replaced, as by [`Masker::mask`]. What lies
    /// between the spans stays as it is, so a text can be written from its input as written
    /// ([`super::written`]). `ahead`: [`found_in_text`] of `text`, when it was found ahead.
    pub fn masks(
        &self,
        text: &str,
        paths: &mut Pseudonyms,
        also: &Also,
        ahead: Option<&[Span]>,
        found: impl FnMut(&'static str, &str),
        each: impl FnMut(usize, usize, &str),
    ) {
        let held = match self.learned_count.load(Ordering::Relaxed) {
            0 => Vec::new(),
            _ => lock(&self.learned).in_text(text),
        };
        let mut spans = match ahead {
            Some(found) => self.merged(text, &held, also, found.to_vec()),
            None => self.spans(text, &held, also, Prefilter::Sites),
        };
        if !paths.user_words().is_empty() {
            let sites = paths.user_word_sites(text);
            add_user_words(text, paths.user_words(), &sites, &mut spans);
        }
        self.apply(text, spans, paths, found, each);
    }

    /// Whether a name kept as written, as it is written (`raw`, quotes included), may hold
    /// something [`Masker::name_spans`] finds. Any name may hold a secret the user named. A
    /// plain name (letters, digits, `.`, `_`, `-`, as most model names are) can hold
    /// only the credentials that start with one of their anchors (`ghp_`, `sk-`, `AKIA`,
    /// ...); any other find needs a byte of `/ \ @ : =` or a space (other blanks are written
    /// as escapes, with a `\`), or 15 bytes (the shortest credential the detectors take,
    /// `xoxb-` and ten more).
    #[inline]
    pub(super) fn name_may_hold(&self, raw: &[u8]) -> bool {
        // Most kept names are short (`message`, `toolUse`): one look at each byte.
        if raw.len() < 15 + 2 && self.exact.is_empty() {
            return raw.first() == Some(&b'"') && raw.iter().any(|&b| NAME_SIGN[usize::from(b)]);
        }
        self.long_name_may_hold(raw)
    }

    /// [`Masker::name_may_hold`] of a name of 15 bytes or more, or any name when the user
    /// named secrets.
    fn long_name_may_hold(&self, raw: &[u8]) -> bool {
        let Some(name) = raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) else {
            return false;
        };
        if !self.exact.is_empty() {
            return true;
        }
        compiled().plain_names().may_hold(name)
    }

    /// What a name kept as written (a provider, a model, a tool) holds to mask:
    /// the secrets the user named, the credentials the detectors find, e-mail addresses and
    /// paths, in order ([`Patterns::Names`]). A function of the name alone (and of the named
    /// secrets), so a rewriter without the pseudonym table finds what the reader finds.
    pub(super) fn name_spans(&self, name: &str) -> Vec<Span> {
        if let Some(spans) = lock(&self.names).get(name) {
            return spans.clone();
        }
        let proposed = pattern_spans(name, Patterns::Names);
        let spans = self.merged(name, &[], &Also::default(), proposed);
        let mut names = lock(&self.names);
        if names.len() < KEYS_REMEMBERED {
            names.insert(name.to_string(), spans.clone());
        }
        spans
    }

    /// `name` with its [`Masker::name_spans`] (`spans`) masked as [`Masker::mask`] masks
    /// text; `found(kind, original)` is told of each.
    pub(super) fn mask_name(
        &self,
        name: &str,
        spans: Vec<Span>,
        paths: &mut Pseudonyms,
        found: impl FnMut(&'static str, &str),
    ) -> String {
        let mut out = String::with_capacity(name.len());
        let mut at = 0;
        self.apply(name, spans, paths, found, |start, end, mask| {
            out.push_str(&name[at..start]);
            out.push_str(mask);
            at = end;
        });
        out.push_str(&name[at..]);
        out
    }

    /// Masks `spans` of `text` (in order, none overlapping): `each(start, end, mask)` for
    /// each, `found(kind, original)` told of each replaced, the secrets learned.
    fn apply(
        &self,
        text: &str,
        spans: Vec<Span>,
        paths: &mut Pseudonyms,
        mut found: impl FnMut(&'static str, &str),
        mut each: impl FnMut(usize, usize, &str),
    ) {
        let mut secret = String::new();
        let mut learn: Vec<(&'static str, usize, usize)> = Vec::new();
        for s in spans {
            let original = &text[s.start..s.end];
            match s.mask {
                Mask::User | Mask::Secret("user") => {
                    let pseudonym = paths.user_word(original).unwrap_or("user").to_string();
                    found("user", original);
                    each(s.start, s.end, &pseudonym);
                }
                Mask::Path | Mask::Secret("path") => {
                    let pseudonym = paths.path(original);
                    if pseudonym != original {
                        found("path", original);
                    }
                    each(s.start, s.end, &pseudonym);
                }
                Mask::Email | Mask::Secret("email") => {
                    found("email", original);
                    each(s.start, s.end, "[email]");
                }
                Mask::Keyed => {
                    found("keyed", original);
                    learn.push(("keyed", s.start, s.end));
                    each(s.start, s.end, "[secret:keyed]");
                }
                Mask::Secret(kind) => {
                    found(kind, original);
                    learn.push((kind, s.start, s.end));
                    secret.clear();
                    secret.push_str("[secret:");
                    secret.push_str(kind);
                    secret.push(']');
                    each(s.start, s.end, &secret);
                }
            }
        }
        for (kind, start, end) in learn {
            self.learn(kind, &text[start..end]);
        }
    }

    /// Whether `text` holds anything to mask (a key that looks like an identifier may still
    /// be a token).
    pub fn finds_any(&self, text: &str) -> bool {
        !self
            .spans(text, &[], &Also::default(), Prefilter::Anchors)
            .is_empty()
    }

    /// [`Masker::finds_any`] for a key, asked once a run: keys repeat on every record, and
    /// each rewriter (one per chunk in flight when records are rewritten on several threads)
    /// would otherwise ask again for each, at several thousand instructions an answer.
    pub fn key_finds_any(&self, key: &str) -> bool {
        if let Some(&found) = lock(&self.keys).get(key) {
            return found;
        }
        // Asked without the lock held: two threads may both ask for a new key, and agree.
        let found = self.finds_any(key);
        let mut keys = lock(&self.keys);
        if keys.len() < KEYS_REMEMBERED {
            keys.insert(key.to_string(), found);
        }
        found
    }

    /// The spans to mask, in order, none overlapping (an earlier finder wins).
    /// `held`: the learned secrets `text` holds.
    fn spans(&self, text: &str, held: &[Held], also: &Also, pre: Prefilter) -> Vec<Span> {
        let proposed = match pre {
            Prefilter::Anchors => pattern_spans(text, Patterns::Anchored),
            Prefilter::Sites => sites_spans(text),
        };
        self.merged(text, held, also, proposed)
    }

    /// [`Masker::spans`], given what the patterns found (`proposed`, in their order): the
    /// exact secrets, the learned ones `text` holds (`held`) and `also` first, longest first,
    /// then each pattern's span that overlaps none kept.
    fn merged(&self, text: &str, held: &[Held], also: &Also, proposed: Vec<Span>) -> Vec<Span> {
        // Kept in order and none overlapping, so only the last span starting before a new
        // one's end can overlap it (each new span was compared with every span kept, which
        // cost a text with hundreds of paths their square).
        let mut spans: Vec<Span> = Vec::new();
        let add = |start: usize, end: usize, mask: Mask, spans: &mut Vec<Span>| {
            let at = spans.partition_point(|s| s.start < end);
            if start < end && (at == 0 || spans[at - 1].end <= start) {
                spans.insert(at, Span { start, end, mask });
            }
        };
        // A credential's value given by its name replaces the secrets found inside it (the
        // password pattern's value stops at a `.`, a random token at a `$`: the rest of the
        // value would stay), keeping the kind of one that starts where it does; it gives way
        // to a span that reaches out of it.
        let add_keyed = |start: usize, end: usize, spans: &mut Vec<Span>| {
            let to = spans.partition_point(|s| s.start < end);
            let from = spans[..to].partition_point(|s| s.end <= start);
            let inside = spans[from..to]
                .iter()
                .all(|s| start <= s.start && s.end <= end);
            if start >= end || !inside {
                return;
            }
            let mask = match spans[from..to].first() {
                Some(s)
                    if s.start == start && !matches!(s.mask, Mask::Secret("path" | "email")) =>
                {
                    match s.mask {
                        Mask::Secret(_) => s.mask,
                        _ => Mask::Keyed,
                    }
                }
                _ => Mask::Keyed,
            };
            spans.splice(from..to, [Span { start, end, mask }]);
        };
        // Where each string is: found by its searcher, made once (the exact secrets and
        // `also`), or known (the learned ones).
        enum Places<'a> {
            Finder(&'a memmem::Finder<'static>),
            Known(&'a [usize]),
        }
        let mut exact: Vec<(&'static str, &str, Places<'_>)> = (self.exact.iter())
            .zip(&self.exact_finders)
            .map(|(s, f)| ("listed", s.as_str(), Places::Finder(f)))
            .collect();
        exact.extend(
            held.iter()
                .map(|h| (h.kind, h.secret.as_str(), Places::Known(&h.starts))),
        );
        let also = also.strings.iter().zip(&also.finders);
        exact.extend(also.map(|((k, s), f)| (*k, s.as_str(), Places::Finder(f))));
        // Longest first: a longer string wins over one it contains or overlaps.
        exact.sort_by_key(|(_, s, _)| std::cmp::Reverse(s.len()));
        for (kind, secret, places) in exact {
            if secret.is_empty() {
                continue;
            }
            let mut at = |i: usize| {
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
            };
            // Each string's places that do not overlap, from the left (as `match_indices`).
            let b = text.as_bytes();
            match places {
                Places::Finder(f) => f.find_iter(b).for_each(at),
                Places::Known(starts) => {
                    let mut next = 0;
                    for &i in starts {
                        if i >= next {
                            at(i);
                            next = i + secret.len();
                        }
                    }
                }
            }
        }
        for p in proposed {
            if p.mask == Mask::Keyed {
                add_keyed(p.start, p.end, &mut spans);
            } else {
                add(p.start, p.end, p.mask, &mut spans);
            }
        }
        spans
    }
}

/// What a detector's match masks: its group `s`, or the whole match (none shorter than 6
/// bytes).
fn detector_span(kind: &'static str, m: &Captures<'_>) -> Option<Span> {
    let g = m.name("s").or_else(|| m.get(0)).expect("group 0");
    if kind == "password" && names_a_shell_variable(g.as_str()) {
        return None;
    }
    (g.len() >= 6).then(|| Span {
        start: g.start(),
        end: g.end(),
        mask: Mask::Secret(kind),
    })
}

/// Whether a value is a shell variable's reference (`token=$GITHUB_TOKEN`): `$` and a name of
/// letters and `_`. A name with a digit is masked (`$ecr3t`: a password that starts with `$`
/// is likelier than such a variable).
fn names_a_shell_variable(v: &str) -> bool {
    v.strip_prefix('$').is_some_and(|name| {
        !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_')
    })
}

/// A blank that starts an option after it (`--token`): what the class `option` looks behind.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t')
}

/// A random-token pattern's match that is a token known by its prefix whose body no entropy
/// test takes ([`prefixed_token`]), or that looks random, or that has the shape of an AWS
/// secret access key in a text that holds an AWS access key id, or that ends with a Mailchimp
/// API key ([`mailchimp_key`]: hexadecimal, which looks random to no entropy test).
fn token_span(text: &str, start: usize, end: usize) -> Option<Span> {
    let run = &text[start..end];
    let (kind, start) = if let Some(kind) = prefixed_token(text.as_bytes(), start, end) {
        (kind, start)
    } else if looks_random(run) {
        ("high-entropy", start)
    } else if aws_secret_beside_key_id(text, run) {
        ("aws-secret-key", start)
    } else {
        ("mailchimp-key", end - mailchimp_key(run.as_bytes())?)
    };
    Some(Span {
        start,
        end,
        mask: Mask::Secret(kind),
    })
}

/// A token known by its prefix whose body is hexadecimal or of one case, which no entropy
/// test takes: the prefix, the body's length, what the body holds, the kind.
struct Prefixed(&'static str, usize, fn(&[u8]) -> bool, &'static str);

/// The tokens [`prefixed_token`] knows. A random-token run is one of them when it is the
/// prefix and such a body, whole.
const PREFIXED: &[Prefixed] = &[
    Prefixed("pul-", 40, lower_hex, "pulumi-token"),
    Prefixed("SK", 32, hex, "twilio-key"),
    Prefixed("sntryu_", 64, lower_hex, "sentry-token"),
    Prefixed("CLOJARS_", 60, lower_hex, "clojars-token"),
    Prefixed("oy2", 43, lower_or_digit, "nuget-key"),
    // HubSpot's private app token: its region, then a UUID.
    Prefixed("pat-na1-", 36, uuid, "hubspot-token"),
    Prefixed("pat-eu1-", 36, uuid, "hubspot-token"),
    Prefixed("sk_", 48, lower_hex, "elevenlabs-key"),
    Prefixed("lsv2_pt_", 43, langsmith, "langsmith-key"),
    Prefixed("lsv2_sk_", 43, langsmith, "langsmith-key"),
    Prefixed("rubygems_", 48, lower_hex, "rubygems-token"),
    Prefixed("shippo_live_", 40, lower_hex, "shippo-token"),
    Prefixed("shippo_test_", 40, lower_hex, "shippo-token"),
    Prefixed("bkua_", 40, lower_hex, "buildkite-token"),
    Prefixed("PMAK-", 59, postman, "postman-key"),
    // Plaid's access token: its environment, then a UUID.
    Prefixed("access-sandbox-", 36, uuid, "plaid-token"),
    Prefixed("access-development-", 36, uuid, "plaid-token"),
    Prefixed("access-production-", 36, uuid, "plaid-token"),
];

/// The lengths of [`PREFIXED`]'s tokens, a bit each (all under 128): most runs have none of
/// them, and are turned away by one look.
const PREFIXED_LENGTHS: u128 = {
    let mut bits = 0;
    let mut i = 0;
    while i < PREFIXED.len() {
        let Prefixed(prefix, len, ..) = &PREFIXED[i];
        bits |= 1 << (prefix.len() + *len);
        i += 1;
    }
    bits
};

fn is_lower_hex(c: &u8) -> bool {
    matches!(c, b'0'..=b'9' | b'a'..=b'f')
}

fn lower_hex(b: &[u8]) -> bool {
    b.iter().all(is_lower_hex)
}

fn hex(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_hexdigit)
}

fn lower_or_digit(b: &[u8]) -> bool {
    b.iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Whether `b` is groups of lower-case hexadecimal digits of the lengths `groups`, `sep`
/// between them.
fn hex_groups(b: &[u8], groups: &[usize], sep: u8) -> bool {
    let mut at = 0;
    for (k, &n) in groups.iter().enumerate() {
        let joined = k == 0 || b.get(at - 1) == Some(&sep);
        if !joined || !b.get(at..at + n).is_some_and(lower_hex) {
            return false;
        }
        at += n + 1;
    }
    at == b.len() + 1
}

/// A UUID in lower case: `8-4-4-4-12` hexadecimal digits.
fn uuid(b: &[u8]) -> bool {
    hex_groups(b, &[8, 4, 4, 4, 12], b'-')
}

/// LangSmith's key after its prefix: 32 hexadecimal digits, `_` and 10 more.
fn langsmith(b: &[u8]) -> bool {
    hex_groups(b, &[32, 10], b'_')
}

/// Postman's key after `PMAK-`: 24 hexadecimal digits, `-` and 34 more.
fn postman(b: &[u8]) -> bool {
    hex_groups(b, &[24, 34], b'-')
}

/// The kind of the token known by its prefix ([`PREFIXED`]) that the random-token run
/// `b[start..end]` is, or of the key of a Braintree access token
/// (`access_token$production$ID$` before 32 hexadecimal digits; the run is the key, since
/// `$` ends a run) or of an Airtable personal access token (`pat`, 14 letters and digits and
/// `.` before 64 hexadecimal digits: `.` ends a run too).
fn prefixed_token(b: &[u8], start: usize, end: usize) -> Option<&'static str> {
    let run = &b[start..end];
    let length = run.len() < 128 && PREFIXED_LENGTHS >> run.len() & 1 == 1;
    let known = |Prefixed(prefix, len, body, _): &&Prefixed| {
        run.len() == prefix.len() + len
            && run.starts_with(prefix.as_bytes())
            && body(&run[prefix.len()..])
    };
    if let Some(Prefixed(.., kind)) = length.then(|| PREFIXED.iter().find(known)).flatten() {
        return Some(kind);
    }
    let before = &b[..start];
    if run.len() == 32 && lower_hex(run) {
        // Braintree's: `$`, the merchant's 16 letters and digits and `$` before the run.
        let s = start.checked_sub(18)?;
        let head = &before[s..];
        let named = ["access_token$production", "access_token$sandbox"]
            .iter()
            .any(|n| before[..s].ends_with(n.as_bytes()));
        let id = head[0] == b'$' && head[17] == b'$' && lower_or_digit(&head[1..17]);
        return (named && id).then_some("braintree-token");
    }
    if run.len() == 64 && lower_hex(run) {
        // Airtable's: `pat`, 14 letters and digits and `.` before the run, after no letter
        // or digit.
        let s = start.checked_sub(18)?;
        let head = &before[s..];
        let id = head.starts_with(b"pat")
            && head[17] == b'.'
            && head[3..17].iter().all(u8::is_ascii_alphanumeric)
            && (s == 0 || !before[s - 1].is_ascii_alphanumeric());
        return id.then_some("airtable-token");
    }
    None
}

/// The length of the Mailchimp API key that ends `run`, if one does: 32 lower-case
/// hexadecimal digits, `-us` and its data centre's number (one or two digits), the digits at
/// the run's start or after a sign (`apikey=…`, `:…`), not after a letter or a digit.
fn mailchimp_key(run: &[u8]) -> Option<usize> {
    // Most runs end otherwise: the end first, looked at from the back.
    let dc = run.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if !matches!(dc, 1 | 2) {
        return None;
    }
    let len = 32 + 3 + dc;
    let start = run.len().checked_sub(len)?;
    let (hex, us) = run[start..].split_at(32);
    let alone = start == 0 || !run[start - 1].is_ascii_alphanumeric();
    let key = us.starts_with(b"-us") && lower_hex(hex) && alone;
    key.then_some(len)
}

/// Whether `run` (a random-token pattern's match in `text`) is 40 characters of base64
/// with a `/` or a `+`, letters of both cases and a digit, in a text that holds an AWS access
/// key id: an AWS secret access key written beside its id (a `credentials.csv`, a
/// `key secret` pair), which [`looks_random`] leaves, since a `/` between short parts reads
/// as a path.
fn aws_secret_beside_key_id(text: &str, run: &str) -> bool {
    let b = run.as_bytes();
    let base64 = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'+');
    let shape = b.len() == 40
        && b.iter().all(base64)
        && b.iter().any(|c| matches!(c, b'/' | b'+'))
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_digit);
    shape && compiled().detector(AWS_ACCESS_KEY).is_match(text)
}

/// What a path pattern's match masks, given its group `s` (`start..end`): the path (a
/// Windows one up to its text's escapes), when it is one.
fn path_span(text: &str, start: usize, end: usize) -> Option<Span> {
    let found = windows_in_json_text(&text[start..end]);
    // A lone `/word` in text is more often a command (`/compact`) than a path.
    let deep = found.starts_with('~')
        || found[1..].contains('/')
        || windows_root(found).is_some_and(|r| found[r..].contains(['\\', '/']));
    (deep && looks_like_path(found)).then(|| Span {
        start,
        end: start + found.len() + home_name_more(text, start, start + found.len()),
        mask: Mask::Path,
    })
}

/// A path that [`find::paths_not_seen`] found (`~ana/x`, `$HOME/x`, `\/home\/ana`).
fn path_not_seen(start: usize, end: usize) -> Span {
    Span {
        start,
        end,
        mask: Mask::Path,
    }
}

/// The user names of `users` ([`Pseudonyms::user_words`]) found as words in `text` (in any
/// ASCII case, no letter, digit or `_` on either side, but for the `F` or `C` of a separator
/// percent-encoded before it: `%2Fhome%2Fana%2F`), each added to `spans` (in order, none
/// overlapping) where no span is: after every other finder, so a path, an address or a
/// token that holds the name is masked whole. `sites`: where each name occurs, by name then
/// start ([`Pseudonyms::user_word_sites`]).
fn add_user_words(
    text: &str,
    users: &[(String, String)],
    sites: &[(usize, usize)],
    spans: &mut Vec<Span>,
) {
    let word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let encoded_separator = |before: &[u8]| {
        let last = &before[before.len().saturating_sub(3)..];
        last.eq_ignore_ascii_case(b"%2f") || last.eq_ignore_ascii_case(b"%5c")
    };
    for &(k, start) in sites {
        let end = start + users[k].0.len();
        let whole = text.is_char_boundary(start)
            && text.is_char_boundary(end)
            && (!word_char(text[..start].chars().next_back())
                || encoded_separator(&text.as_bytes()[..start]))
            && !word_char(text[end..].chars().next());
        let at = spans.partition_point(|s| s.start < end);
        if whole && (at == 0 || spans[at - 1].end <= start) {
            spans.insert(
                at,
                Span {
                    start,
                    end,
                    mask: Mask::User,
                },
            );
        }
    }
}

/// The most words a user's name with spaces is read through (`/Users/Ana Belle/…`).
const HOME_NAME_WORDS: usize = 3;

/// How far the path `start..end` of `text` goes on past `end` when it stops inside a user's
/// name with a space: a home root (`/home/`, `/Users/`, a drive's `Users`) and one name, no
/// separator after it, then (within [`HOME_NAME_WORDS`] words, each after one space, none
/// holding a `=` or a `:`, which would make it an assignment or a list) a word that a
/// separator ends: `/Users/Ana Belle/Library` is read as `Ana Belle`'s home and the
/// path goes on to the next space. 0 when it does not (`/home/ana and more`).
fn home_name_more(text: &str, start: usize, end: usize) -> usize {
    let path = &text[start..end];
    let windows = windows_root(path).is_some() && !path.starts_with('\\');
    let root = if windows {
        let users = path.find(['\\', '/']).map(|i| i + 1);
        let users = users.map(|i| i + usize::from(path[i..].starts_with('\\')));
        let home = users.and_then(|i| path.get(i..i + 6));
        match home {
            Some(h)
                if h.as_bytes()[..5].eq_ignore_ascii_case(b"users") && h.ends_with(['\\', '/']) =>
            {
                users.map(|i| i + 6 + usize::from(path[i + 6..].starts_with('\\')))
            }
            // A drive's top-level folder: its name may have spaces (`Documents and Settings`,
            // `Program Files`), and the user's name comes after it.
            _ => users,
        }
    } else {
        ["/home/", "/Users/"]
            .iter()
            .find(|r| path.starts_with(*r))
            .map(|r| r.len())
    };
    let Some(root) = root else {
        return 0;
    };
    let name = &path[root..];
    if name.is_empty() || name.contains(['/', '\\']) {
        return 0;
    }
    let b = text.as_bytes();
    let mut at = end;
    for _ in 0..HOME_NAME_WORDS {
        if b.get(at) != Some(&b' ') {
            return 0;
        }
        let word = at + 1;
        at = word
            + text[word..]
                .find(|c: char| !is_path_char(c) || matches!(c, '/' | '=' | ':'))
                .unwrap_or(text.len() - word);
        let sep = match b.get(at) {
            Some(b'/') => true,
            Some(b'\\') => windows,
            _ => false,
        };
        if at > word && sep {
            // The rest of the path, to where it stops (a Windows one up to its escapes).
            let stops = |c: char| !is_path_char(c) && (!windows || c != '\\');
            let rest = text[at + 1..]
                .find(stops)
                .map_or(text.len(), |i| at + 1 + i);
            let whole = &text[start..rest];
            let whole = if windows {
                windows_in_json_text(whole)
            } else {
                whole
            };
            return (start + whole.len()).max(at) - end;
        }
        if at == word {
            return 0;
        }
    }
    0
}

/// What a long name kept as written ([`Masker::name_may_hold`]) is looked through for: the
/// anchors a plain name (letters, digits, `.`, `_`, `-`) can hold, and each byte's class.
struct PlainNames {
    anchors: Scan,
    /// [`PLAIN`], [`ANCHOR`] (plain, and the first byte of an anchor) or [`OTHER`].
    class: [u8; 256],
}

const PLAIN: u8 = 0;
const ANCHOR: u8 = 1;
const OTHER: u8 = 2;

impl PlainNames {
    fn new() -> PlainNames {
        // A name is not looked at for what commands give (`Patterns::Names`).
        let anchors = Scan::new(|w| is_plain(w) && !commands::COMMAND_WORDS.contains(&w));
        let mut class = [OTHER; 256];
        for b in 0..=255u8 {
            if is_plain_byte(b) {
                let (start, end) = anchors.starting[usize::from(b)];
                class[usize::from(b)] = if start == end { PLAIN } else { ANCHOR };
            }
        }
        PlainNames { anchors, class }
    }

    /// Whether `name` holds a byte that is not plain or one of the anchors.
    fn may_hold(&self, name: &[u8]) -> bool {
        (0..name.len()).any(|at| match self.class[usize::from(name[at])] {
            PLAIN => false,
            ANCHOR => self.anchors.starts_at(name, at),
            _ => true,
        })
    }
}

/// Which patterns [`pattern_spans`] runs, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patterns {
    /// Every pattern over the whole text: the test oracle of [`sites_spans`].
    Every,
    /// Each pattern only on a text that holds its anchors.
    Anchored,
    /// As `Anchored`, for a name kept as written ([`Masker::name_spans`]): the credential
    /// detectors, paths and e-mail addresses, not random tokens (a model's name may look
    /// random: `Qwen3-30B-A3B-Instruct`) nor a credential's value given by its name.
    Names,
}

/// The bytes of which a short name needs one to hold anything [`Masker::name_spans`] finds:
/// `/ \ @ % : =` and the space.
const NAME_SIGN: [bool; 256] = {
    let mut t = [false; 256];
    let signs = b"/\\@%:= ";
    let mut i = 0;
    while i < signs.len() {
        t[signs[i] as usize] = true;
        i += 1;
    }
    t
};

/// A byte of a plain name ([`Masker::name_may_hold`]).
fn is_plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// Whether `s` is a plain name: letters, digits, `.`, `_` and `-`.
fn is_plain(s: &str) -> bool {
    s.bytes().all(is_plain_byte)
}

/// The spans the patterns propose, in the order [`Masker::spans`] takes them (the detectors,
/// paths, e-mail addresses, random tokens), each pattern run over the whole text, or only
/// on a text that holds one of its anchors ([`Patterns`]).
fn pattern_spans(text: &str, which: Patterns) -> Vec<Span> {
    let anchors = which != Patterns::Every;
    let names = which == Patterns::Names;
    // The anchors longer than a byte found in one pass (a search for each cost a key ~5,000
    // instructions).
    let words = anchors.then(|| compiled().literals().words_in(text));
    let may = |a: Anchors| match &words {
        Some(found) => a.held(found).unwrap_or_else(|| a.in_text(text)),
        None => true,
    };
    let (email, token, path) = (may(EMAIL), !names && text.len() >= TOKEN_MIN, may(PATH));
    let detectors: Vec<usize> = (0..DETECTORS.len())
        .filter(|&i| DETECTORS[i].anchors.iter().all(|&a| may(a)))
        .collect();
    let mut out = Vec::new();
    let b = text.as_bytes();
    let signs = memchr::memchr2_iter(b'=', b':', b);
    let options = memchr::memchr_iter(b'-', b).filter(|&i| i == 0 || is_blank(b[i - 1]));
    let keyed = |out: &mut Vec<Span>| {
        if names {
            return;
        }
        let mut push = |start, end| {
            out.push(Span {
                start,
                end,
                mask: Mask::Keyed,
            })
        };
        find::keyed_spans(text, signs, options, &mut push);
        let mut tokens: Vec<usize> = find::any_case_sites(b, "token").collect();
        tokens.extend(find::any_case_sites(b, "bearer"));
        tokens.sort_unstable();
        let passwords = find::any_case_sites(b, "password");
        find::keyed_in_prose_spans(text, passwords, tokens.into_iter(), &mut push);
        find::keyed_in_code_spans(text, &mut push);
        let holds = |w: &str| match &words {
            Some(found) => found.contains(&w),
            None => text.contains(w),
        };
        let blanks = || memchr::memchr3_iter(b' ', b'\t', b'\n', b);
        let capital_blanks = blanks().filter(|&i| i > 0 && b[i - 1].is_ascii_uppercase());
        let word_blanks = blanks().filter(|&i| {
            let at = |back: usize, c: u8| i >= back && b[i - back] | 0x20 == c;
            at(1, b'y') && (at(2, b'b') || at(2, b'e') && at(3, b'k'))
                || at(1, b'e') && at(2, b's') && at(3, b'a')
                || at(1, b't') && (at(2, b'e') || at(4, b'a'))
        });
        commands::keyed_in_commands_spans(text, holds, capital_blanks, word_blanks, push);
        find::password_hashes(text, |start, end| out.push(hash_span(start, end)));
    };
    if detectors.is_empty() && !email && !token && !path {
        keyed(&mut out);
        return out;
    }
    // Compiled the first time one runs (a run may need none).
    let c = compiled();
    for &i in &detectors {
        let kind = DETECTORS[i].kind;
        let found = c.detector(i).captures_iter(text);
        out.extend(found.filter_map(|m| detector_span(kind, &m)));
    }
    keyed(&mut out);
    // Paths before e-mail addresses and random tokens: a path is pseudonymised whole, its random-looking names
    // too (an address or a token masked inside it would leave the rest, the home folder, as it was).
    let paths = path.then(|| c.path().captures_iter(text));
    let paths = paths
        .into_iter()
        .flatten()
        .map(|m| m.name("s").or_else(|| m.name("h")).expect("path group"));
    out.extend(paths.filter_map(|g| path_span(text, g.start(), g.end())));
    if path {
        find::paths_not_seen(text, |start, end| out.push(path_not_seen(start, end)));
    }
    let emails = email.then(|| c.email().find_iter(text));
    out.extend(
        emails
            .into_iter()
            .flatten()
            .filter_map(|m| email_span(text, m.start(), m.end())),
    );
    let tokens = token.then(|| c.token().find_iter(text));
    let tokens = tokens.into_iter().flatten();
    out.extend(tokens.filter_map(|m| token_span(text, m.start(), m.end())));
    out
}

/// For the fuzz target ([`super::check_written`]): the finders of kept text find in `text`
/// what every pattern run over the whole of it finds (the oracle of the test
/// `sites_find_what_the_patterns_find`). Panics where they differ.
pub fn check_sites(text: &str) {
    assert_eq!(
        sites_spans(text),
        pattern_spans(text, Patterns::Every),
        "{text:?}"
    );
}

/// What one pass over a long text found of the detectors' anchors.
struct Found<'t> {
    text: &'t str,
    classes: &'t Classes,
    /// The anchors found byte for byte (those longer than a byte).
    literals: Vec<&'static str>,
    /// The text holds the Kelvin sign or the long s, which `(?i)` equates with `k` and `s`:
    /// the `(?i)` detectors run over the whole text.
    folds: bool,
}

impl<'t> Found<'t> {
    fn of(text: &'t str, classes: &'t Classes) -> Found<'t> {
        let found = compiled().literals().words_in(text);
        // Read off the class `fold`: the last byte of each, looked back from.
        let b = text.as_bytes();
        let folds = classes.iter(|c| c.fold, 0).any(|i| {
            let ends = |tail: &[u8]| i + 1 >= tail.len() && b[i + 1 - tail.len()..=i] == *tail;
            ends("\u{212A}".as_bytes()) || ends("\u{17F}".as_bytes())
        });
        Found {
            text,
            classes,
            literals: found,
            folds,
        }
    }

    /// Whether the text holds one of `a` (what [`Anchors::in_text`] says, from this pass).
    fn holds(&self, a: Anchors) -> bool {
        if let Some(held) = a.held(&self.literals) {
            return held;
        }
        match a {
            Anchors::AnyCase(words) if !self.folds => words.iter().any(|&w| match w {
                // Read off the class `aws` (the `s` of each, in any case).
                "aws" => self.classes.iter(|c| c.aws, 0).next().is_some(),
                w => find::any_case_sites(self.text.as_bytes(), w)
                    .next()
                    .is_some(),
            }),
            _ => a.in_text(self.text),
        }
    }
}

/// The spans the patterns propose in a long text, the same as [`pattern_spans`] over the
/// whole text (the test `sites_find_what_the_patterns_find` compares them), found where
/// each can match: a detector runs over a text that holds its anchors (one pass for all of
/// them), or only at the sites where its words start ([`Detector::reach`]); e-mail addresses
/// and paths in the windows between blanks that hold an `@`, a `/` or a `\`; random tokens
/// by their runs of bytes ([`find`] says why each is the same).
fn sites_spans(text: &str) -> Vec<Span> {
    let c = compiled();
    let classes = Classes::of(text.as_bytes());
    let found = Found::of(text, &classes);
    let mut out = Vec::new();
    // Where `bearer` and `token` start: the bearer pattern's sites, and the prose rule's
    // ([`find::keyed_in_prose_spans`]), found once.
    let bearer = find::bearer_sites(text, &classes);
    for (i, d) in DETECTORS.iter().enumerate() {
        let take = |m: Captures<'_>| out.extend(detector_span(d.kind, &m));
        match d.sites {
            Some(sites) if !found.folds => {
                let own;
                let at = if i == BEARER {
                    &bearer
                } else {
                    own = (sites.find)(text, &classes);
                    &own
                };
                find::captures_at_sites(|| c.detector(i), text, at, sites.reach, take);
            }
            _ if d.anchors.iter().all(|&a| found.holds(a)) => {
                c.detector(i).captures_iter(text).for_each(take);
            }
            _ => {}
        }
    }
    let b = text.as_bytes();
    let options = (b.first() == Some(&b'-')).then_some(0);
    let options = options.into_iter().chain(classes.iter(|c| c.option, 0));
    let mut keyed = |start, end| {
        out.push(Span {
            start,
            end,
            mask: Mask::Keyed,
        })
    };
    find::keyed_spans(text, classes.iter(|c| c.sign, 0), options, &mut keyed);
    let passwords = find::password_word_sites(b, &classes);
    find::keyed_in_prose_spans(text, passwords, bearer.iter().copied(), &mut keyed);
    find::keyed_in_code_spans(text, &mut keyed);
    let capital_blanks = classes.iter(|c| c.capital_blank, 0);
    let word_blanks = classes.iter(|c| c.word_blank, 0);
    let held = |w| found.literals.contains(&w);
    commands::keyed_in_commands_spans(text, held, capital_blanks, word_blanks, keyed);
    find::password_hashes(text, |start, end| out.push(hash_span(start, end)));
    let paths = |start, end| out.extend(path_span(text, start, end));
    find::paths_in_windows(text, &classes, paths);
    if classes.first(|b| b.separator, 0, text.len()).is_some() {
        find::paths_not_seen(text, |start, end| out.push(path_not_seen(start, end)));
    }
    find::matches_in_windows(
        || c.email(),
        text,
        &classes,
        |b| b.at,
        find::may_hold_at,
        |start, end| out.extend(email_span(text, start, end)),
    );
    let tokens = find::token_runs(text.as_bytes(), &classes);
    out.extend(tokens.filter_map(|(start, end)| token_span(text, start, end)));
    out
}

/// An e-mail pattern's match narrowed to the characters an address holds as text holds one:
/// its local part to [`in_local_part`]'s (text before it written without spaces,
/// `发送到ana@x.com`, is no part of it), its domain to letters and digits of any script, `.`
/// and `-` (`ana@x.com，见README.md`). None when no local part is left, no domain that ends
/// with `.` and two ASCII letters or more, or when the domain names a high-density image's
/// file (`icon@2x.png`: digits and `x` before the first `.`).
fn email_span(text: &str, start: usize, end: usize) -> Option<Span> {
    let s = &text[start..end];
    let (at, sign) = match memchr::memchr(b'@', s.as_bytes()) {
        Some(at) => (at, 1),
        None => (memmem::find(s.as_bytes(), b"%40")?, 3),
    };
    let (mut local, mut domain) = (0, &s[at + sign..]);
    if !s.is_ascii() {
        // An ASCII match is an address whole: the pattern's ASCII is what both parts hold.
        local = s[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| in_local_part(c))
            .last()
            .map(|(i, _)| i)?;
        let in_domain = |c: char| c.is_alphanumeric() || c == '.' || c == '-';
        let cut = domain.char_indices().find(|&(_, c)| !in_domain(c));
        domain = &domain[..cut.map_or(domain.len(), |(i, _)| i)];
        // What is left still ends as the pattern's domain does: `.` and two ASCII letters.
        let b = domain.as_bytes();
        let top = b.len()
            - b.iter()
                .rev()
                .take_while(|c| c.is_ascii_alphabetic())
                .count();
        if top < 2 || b.len() - top < 2 || b[top - 1] != b'.' {
            return None;
        }
    }
    let b = domain.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let image = digits > 0 && b[digits..].starts_with(b"x.");
    (!image).then_some(Span {
        start: start + local,
        end: start + at + sign + domain.len(),
        mask: Mask::Email,
    })
}

/// Whether `c` may be a character of an address's local part as text holds one: ASCII
/// letters, digits and `._%+-`, and the letters and digits of the scripts that write spaces
/// between words (Latin, Greek, Cyrillic, Armenian, Vietnamese's Latin: `josé`, `müller`);
/// not those of scripts written without them (Chinese, Japanese, Thai…, whose text runs on
/// into an address) nor other signs.
fn in_local_part(c: char) -> bool {
    let spaced = matches!(c, '\u{80}'..='\u{58F}' | '\u{1E00}'..='\u{1EFF}');
    c.is_ascii_alphanumeric() || "._%+-".contains(c) || spaced && c.is_alphanumeric()
}

/// A password hash's salt and hash ([`find::password_hashes`]).
fn hash_span(start: usize, end: usize) -> Span {
    Span {
        start,
        end,
        mask: Mask::Secret("password-hash"),
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
    use pi_jsonl_gen::Rng;

    /// What the masker finds in a name kept as written, `name_may_hold` lets through: the
    /// shortest of each credential the detectors take, and names made of their pieces.
    #[test]
    fn a_name_that_holds_anything_is_looked_at() {
        let masker = Masker::new(Vec::new());
        let holds = |name: &str| {
            let mut raw = Vec::new();
            crate::output::write_str(&mut raw, name);
            let found = !masker.name_spans(name).is_empty();
            assert!(!found || masker.name_may_hold(&raw), "{name:?}");
            found
        };
        for shortest in [
            "xoxb-0123456789",
            "sk-0123456789abcdefghij",
            "AKIA0123456789ABCDEF",
            "eyJabcdefgh.eyJabcdefgh.abcdefgh",
            "a@b.co",
            "a%40b.co",
            "/a/b",
            "~/a",
            "C:\\a\\b",
        ] {
            assert!(holds(shortest), "{shortest:?}");
        }
        #[rustfmt::skip]
        let pieces = [
            "xox", "b-", "sk-", "ant-", "AKIA", "ASIA", "ghp_", "gh", "s_", "github_pat_",
            "glpat-", "gldt-", "AIza", "eyJ", "rk_live_", "pk_test_", "0", "7", "a", "Z", "-",
            "_", ".", "/", "~", "@", "%40", ":", "=", " ", "\t", "token", "bearer", "pwd", "aws",
            "key", "secret", "https://", "-----BEGIN ", "PRIVATE KEY-----", "\u{a0}", "é",
        ];
        let mut rng = Rng::new(17);
        let mut found = [0; 2];
        for _ in 0..200_000 {
            let mut name = String::new();
            while name.len() < rng.below(48) as usize {
                name.push_str(pieces[rng.below(pieces.len() as u64) as usize]);
            }
            found[usize::from(is_plain(&name))] += usize::from(holds(&name));
        }
        assert!(found[0] > 1000 && found[1] > 200, "{found:?}");
        // Plain names that hold no anchor are not looked at.
        for plain in [
            "toolUse",
            "claude-sonnet-4-5",
            "anthropic-messages",
            "toolu_01A09q90qw",
        ] {
            assert!(
                !masker.name_may_hold(format!("\"{plain}\"").as_bytes()),
                "{plain}"
            );
        }
        // With a named secret, every name is looked at.
        let listed = Masker::new(vec!["qq-qq-qq".to_string()]);
        assert!(listed.name_may_hold(b"\"qq\""));
        assert!(!listed.name_spans("a qq-qq-qq").is_empty());
        assert!(!masker.name_may_hold(b"\"qq\""));
    }

    fn mask(m: &Masker, t: &str) -> String {
        m.mask(t, &mut Pseudonyms::default(), &Also::default(), |_, _| {})
    }

    /// The learned secrets a text holds are every one it holds, wherever (inside another, one
    /// the start of another, across two, sharing a first 8 bytes, not ASCII), in the order
    /// they first occur, each once; learning one twice or one too short adds nothing.
    #[test]
    fn learned_secrets_are_found_wherever_they_occur() {
        const PIECES: &[&str] = &["ab", "cdefgh", "ij", "kl€", "mnopqrst", "é", " ", "Z9", "x"];
        let mut rng = Rng::new(35);
        let (mut several, mut overlapping) = (0, 0);
        for round in 0..300 {
            let mut learned = Learned::default();
            let mut secrets: Vec<String> = Vec::new();
            let piece = |rng: &mut Rng, lo, hi| -> String {
                let n = rng.range(lo, hi);
                (0..n).map(|_| *rng.pick(PIECES)).collect()
            };
            for _ in 0..rng.range(1, 40) {
                let s = piece(&mut rng, 1, 6);
                let new = s.len() >= PREFIX && !secrets.contains(&s);
                assert_eq!(learned.add("high-entropy", &s), new, "{s:?}");
                if new {
                    secrets.push(s);
                }
            }
            for _ in 0..20 {
                let text = piece(&mut rng, 0, 30);
                // Each secret the text holds, with every place it starts (overlapping too),
                // by its first place, then in the order learned.
                let mut want: Vec<(Vec<usize>, &str)> = (secrets.iter())
                    .map(|s| {
                        let b = text.as_bytes();
                        let starts = (0..b.len()).filter(|&i| b[i..].starts_with(s.as_bytes()));
                        (starts.collect::<Vec<_>>(), s.as_str())
                    })
                    .filter(|(starts, _)| !starts.is_empty())
                    .collect();
                want.sort_by_key(|(starts, _)| starts[0]);
                let got = learned.in_text(&text);
                let got: Vec<(Vec<usize>, &str)> = (got.iter())
                    .map(|h| (h.starts.clone(), h.secret.as_str()))
                    .collect();
                assert_eq!(got, want, "round {round}, {text:?}");
                several += usize::from(want.len() > 1);
                overlapping += usize::from(
                    want.iter()
                        .any(|(starts, s)| starts.windows(2).any(|w| w[1] < w[0] + s.len())),
                );
            }
        }
        assert!(several > 100, "{several}");
        assert!(overlapping > 10, "{overlapping}");
    }

    /// The exact secrets, the learned ones and `also` are masked where `match_indices` finds
    /// each (from the left, none overlapping the one before), the longest first: a learned
    /// secret that a longer one overlaps is not masked again one place further on.
    #[test]
    fn strings_masked_everywhere_are_found_from_the_left() {
        let m = Masker::new(vec!["qqqqqqqqqqbb".into()]);
        m.learn("keyed", "bbbbbbbbbbbb");
        let also = Also::new(vec![("email", "ccccccccccdd".into())]);
        let text = format!(
            "{}{}, {}{}",
            "q".repeat(10),
            "b".repeat(30),
            "c".repeat(30),
            "d".repeat(2)
        );
        let got = m.mask(&text, &mut Pseudonyms::default(), &also, |_, _| {});
        // `qq…bb` at 0; `bb…` at 10 overlaps it, the next from the left is at 22; `cc…dd` at
        // 62 (the text's end).
        let want = format!(
            "[secret:listed]{}[secret:keyed]{}, {}[email]",
            "b".repeat(10),
            "b".repeat(6),
            "c".repeat(20)
        );
        assert_eq!(got, want);
        // The learned secret twice in a row, then a part of it: masked twice.
        let twice = format!("{}{}", "b".repeat(30), "q".repeat(10));
        let got = m.mask(
            &twice,
            &mut Pseudonyms::default(),
            &Also::default(),
            |_, _| {},
        );
        let want = format!(
            "[secret:keyed][secret:keyed]{}{}",
            "b".repeat(6),
            "q".repeat(10)
        );
        assert_eq!(got, want);
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
            // Letters of any script, in the local part and the domain.
            (
                "josé@example.com, Müller.Ana@gmx.de, ana@bücher.de, ана@почта.рф.ru",
                "[email], [email], [email], [email]",
            ),
            // Text written without spaces runs on into an address: not part of it.
            (
                "发送到ana@x.com即可，邮箱是bo@qq.com。ana@x.com으로 보내기, ส่งana@x.co.thครับ",
                "发送到[email]即可，邮箱是[email]。[email]으로 보내기, ส่ง[email]ครับ",
            ),
            (
                "发给ana@x.com，见README.md；或ana@例え.jp",
                "发给[email]，见README.md；或[email]",
            ),
            // In a URL, its `@` percent-encoded.
            (
                "curl 'https://x.io/users?email=ana.b%2Bx%40example.co.uk&page=2' and 100%40 50%",
                "curl 'https://x.io/users?email=[email]&page=2' and 100%40 50%",
            ),
            // A high-density image's name (`@2x`), not an address; in a URL too.
            (
                "icon@2x.png logo@3x.webp ?url=%2Fimg%2Flogo%402x.png&w=32 ana@2xcompany.com",
                "icon@2x.png logo@3x.webp ?url=%2Fimg%2Flogo%402x.png&w=32 [email]",
            ),
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

    /// A key's answer is the masker's, remembered for the run, for any thread: a key that is
    /// a token or holds an exact secret is found every time it is asked.
    #[test]
    fn keys_are_answered_as_texts_once_for_every_thread() {
        let m = Masker::new(vec!["hunter2hunter2".into()]);
        let keys = [
            "file_path",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "x_hunter2hunter2",
            "oldText",
        ];
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..2 {
                        for k in keys {
                            assert_eq!(m.key_finds_any(k), m.finds_any(k), "{k}");
                        }
                    }
                });
            }
        });
        let found: Vec<bool> = keys.iter().map(|k| m.key_finds_any(k)).collect();
        assert_eq!(found, [false, true, true, true, false]);
        // Each asked key once, besides the usage keys asked when the masker was made.
        assert_eq!(m.keys.lock().unwrap().len(), USAGE_KEYS.len() + keys.len());
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
            "aws_secret_access_key ",
            "AWS_SECRET_ACCESS_KEY\t'",
            "https://bob@example.com:hunter22@db",
            "hf_",
            "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",
            "npm_",
            "npm_a8Kf93jdLq02mZx7Pq1wRt5yUv6BnC4dEe9H",
            "pypi-AgE",
            "pypi-AgEIcHlwaS5vcmcCJGE0ZjVhNDRjLTg2YjMtNDk2Ny1hNzQyLTUyYjg2NTU1MzZmMwACKl",
            "SG.",
            "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",
            "dop_v1_",
            "dop_v1_4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a5c8e1b4d7f0a3c6e9b2d5f8a",
            "shpat_",
            "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",
            "sbp_4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a",
            "dapi1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
            "dapi",
            "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
            "key-",
            "AGE-SECRET-KEY-1QQPQZFWNZ8PL6DRN6RCJ2LPNKVHLXMGJQ3SCZZCM9MJTSS6DDQASGXWSTM",
            "AGE-SECRET-KEY-1",
            "NRAK-EHMI5SKOEWQKUR3JQ64NQ6PUXCM",
            "NRII-",
            "YSJYgOuwgz7z54.atlasv1.l2dVAMH2vWD6qeSPt5Pv74GDqQ7EyIMfkRrXnUbNgHwQyPzTsLcVdAeKmJhGfDsA",
            ".atlasv1.",
            "sk.eyJ1IjoiYW5hIiwiYSI6ImNrbTB4eTEyMzQ1Njc4OSJ9.Zb4dE6fG8hI0jK2lM4nO6p",
            "pk.eyJ",
            "4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e",
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
        for _ in 0..50_000 {
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

    /// Pieces of kept text for [`sites_find_what_the_patterns_find`]: each detector's
    /// secrets and their words in other cases and spacings, e-mail addresses, paths of every
    /// form the path pattern knows and what it may follow, long runs of token bytes, white
    /// space of every kind (Unicode's included), and the characters `(?i)` folds.
    const SITE_PIECES: &[&str] = &[
        "AKIAIOSFODNN7EXAMPLE",
        "%40",
        "ana%40x.io",
        "ASIA",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_",
        "glpat-abcdefghij0123456789",
        "gldt-",
        "xoxb-1234567890-abcdefghij",
        "https://hooks.slack.com/services/T00/B00/xyz",
        "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk-",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
        "sk_live_abcdefghij0123456789",
        "pk_test_",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w",
        "eyJ",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws key: ",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws configure set aws_secret_access_key ",
        "postgres://bob:hunter22@db.example.org/x",
        "https://bob@example.com:hunter22@db",
        "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",
        "hf_",
        "npm_a8Kf93jdLq02mZx7Pq1wRt5yUv6BnC4dEe9H",
        "pypi-AgEIcHlwaS5vcmcCJGE0ZjVhNDRjLTg2YjMtNDk2Ny1hNzQyLTUyYjg2NTU1MzZmMwACKl",
        "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",
        "dop_v1_4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a5c8e1b4d7f0a3c6e9b2d5f8a",
        "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",
        "sbp_4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a",
        "dapi1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d-2",
        "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
        "AGE-SECRET-KEY-1QQPQZFWNZ8PL6DRN6RCJ2LPNKVHLXMGJQ3SCZZCM9MJTSS6DDQASGXWSTM",
        "NRAK-EHMI5SKOEWQKUR3JQ64NQ6PUXCM",
        "NRII-x3pq_7Rk2mZ0aB4cD6eF8gH1iJ3kL5mN",
        "YSJYgOuwgz7z54.atlasv1.l2dVAMH2vWD6qeSPt5Pv74GDqQ7EyIMfkRrXnUbNgHwQyPzTsLcVdAeKmJhGfDsA",
        "sk.eyJ1IjoiYW5hIiwiYSI6ImNrbTB4eTEyMzQ1Njc4OSJ9.Zb4dE6fG8hI0jK2lM4nO6p",
        "://",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n",
        "-----END RSA PRIVATE KEY-----",
        "Bearer ",
        "bearer\t",
        "token ",
        "TOKEN\u{a0}",
        "Token\u{2003}",
        "tokens",
        "abcdefghij0123456789+/=_-",
        "password",
        "PassWd",
        "pwd",
        "secret",
        "api_key",
        "API-KEY",
        "apikey",
        "access_key",
        "Auth",
        "author",
        "=",
        ":",
        " = ",
        ": '",
        "\"",
        "'",
        "x9!",
        "correct-horse-9",
        // Credentials' names, options and what their values may be.
        "OPENAI_API_KEY=",
        "DB_PASSWORD",
        "X-Auth-Token: ",
        "Authorization: Basic ",
        "Cookie: ",
        "--password ",
        "--token",
        " -u ana:",
        "mysql -p",
        "machine h ",
        " login ",
        "password ",
        "git config ",
        "github.token ",
        "echo '",
        " | sudo -S ",
        "printf ",
        "sshpass -p ",
        "docker login -p ",
        "redis-cli -a ",
        "zip -P ",
        "7z a -p",
        "keytool -storepass ",
        " -U ana%",
        "-passin pass:",
        "htpasswd -b f u ",
        "-nb ",
        "rabbitmqctl add_user u ",
        "sqlplus ",
        "userid=u/",
        "nmcli ",
        "wpa_passphrase h ",
        "net user ana ",
        "net use \\\\s\\d ",
        " /user:a ",
        "xfreerdp3 /p:",
        " /gp:",
        "vault login ",
        "ansible-vault encrypt_string ",
        " --name ",
        " | ansible-vault encrypt_string",
        "token ",
        "Bearer ",
        "password => '",
        " | docker login --password-stdin",
        " | chpasswd",
        "chpasswd <<< ",
        "<<<",
        "{\"c\":\"echo ",
        " --passphrase-fd 0 ",
        " | wrangler secret put X",
        " | npx vercel env add X",
        "gh secret set ",
        "[\"API_KEY\"] = ",
        "['token']=",
        "| DB_PASSWORD | ",
        " | `",
        "- name: DB_PASSWORD\n  value: ",
        "setx API_KEY ",
        "\nENV DB_PASS\t",
        "set SECRET ",
        " API_TOKEN <<< ",
        "firebase functions:secrets:set ",
        "variable \"db_password\" {\n default = ",
        "secret_key_base: ",
        "CREATE USER a IDENTIFIED BY ",
        "grant all to u identified by ",
        "vercel env add API_KEY production ",
        "= PASSWORD(",
        "{\"key\": \"API_KEY\", \"value\": \"",
        "set -x DB_PASS ",
        "password ",
        "docker run -u 1000:",
        "'password' => '",
        ":api_key => ",
        "define('DB_PASSWORD', '",
        ".login(",
        "auth=(",
        "Auth(",
        "', '",
        ")",
        "<password>",
        "</password>",
        "key=\"token\" ",
        " value=\"",
        "ConvertTo-SecureString ",
        " -AsPlainText",
        "AKIAIOSFODNN7EXAMPLE,",
        "quokkavalue",
        "string",
        "$TOKEN",
        "self.token",
        "==",
        "::",
        "\\\"",
        "@",
        "ana@example.com",
        "a.b+c@mail.example.co.uk",
        "josé@bücher.de",
        "发送到",
        "，",
        "/",
        "\\",
        "/home/ana/src/app/main.rs",
        "~/src/x.txt",
        "C:\\Users\\ana\\x.md",
        "C:/Users/ana",
        "C:\\\\Users\\\\ana\\\\x.rs\\n",
        "\\\\srv\\share\\a.md",
        "\\n/srv/x/y.txt",
        "file:///srv/x/y.mjs",
        "(/etc/hosts)",
        "/compact",
        // Home roots after what ends a name, or continues one; names with spaces.
        "/home/",
        "/Users/ana",
        "/root/x",
        "C:\\Users\\",
        "c:/users/ana",
        "C:\\\\Users\\\\ana",
        "@",
        "-I",
        "**",
        "{",
        "$",
        "\u{7}",
        "：",
        "路径",
        "./home/x",
        " Belle/x",
        " Belle\\y",
        "_019da4d7-d222-715c-ad16-deea6d602ac6.jsonl",
        "Qm9vZ3JhbmRvbVRva2VuWFl6MTIz9x7",
        "0123456789abcdef0123456789abcdef",
        "$2b$12$",
        "$apr1$x$",
        "pbkdf2_sha256$",
        "\\/",
        "localhost:5432:",
        "*:",
        "set -gx ",
        "API key: ",
        "my passphrase ",
        "Pp9Phrase7w",
        "OTP secret ",
        "JBSWY3DPEHPK3PXP",
        "\", \"",
        "(\"API_KEY",
        "PGPASS=",
        "a_long_identifier_name_here",
        " ",
        "  ",
        "\n",
        "\t",
        "\r",
        "\u{b}",
        "\u{85}",
        "\u{a0}",
        "\u{3000}",
        "\u{212A}",
        "\u{17F}",
        "é",
        "日本",
        "x",
        "Z",
        "7",
        ".",
        ",",
        "-",
    ];

    /// The one pass over long text finds what every pattern run over the whole text finds
    /// (the oracle, [`pattern_spans`] without anchors), and so do the patterns run only on a
    /// text that holds their anchors (as a key is asked): on texts built from [`SITE_PIECES`]
    /// and on generated JSON string bodies (backslashes, escapes and multi-byte characters),
    /// each also cut at every character boundary near its blanks and needles.
    #[test]
    fn sites_find_what_the_patterns_find() {
        let mut rng = pi_jsonl_gen::Rng::new(17);
        let mut matched: Vec<(&str, usize)> = Vec::new();
        let check = |text: &str, matched: &mut Vec<(&str, usize)>| {
            let want = pattern_spans(text, Patterns::Every);
            assert_eq!(sites_spans(text), want, "{text:?}");
            // The anchors (what a key is asked with) skip no pattern that matches.
            assert_eq!(pattern_spans(text, Patterns::Anchored), want, "{text:?}");
            for s in &want {
                let kind = match s.mask {
                    Mask::Secret(k) => k,
                    Mask::Keyed => "keyed",
                    Mask::Email => "email",
                    Mask::Path => "path",
                    Mask::User => "user",
                };
                match matched.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => matched.push((kind, 1)),
                }
            }
        };
        for round in 0..20_000 {
            let text: String = if round % 10 == 0 {
                let len = rng.range(1, 300) as usize;
                pi_jsonl_gen::mixed_body(&mut rng, len)
            } else if round % 10 == 5 {
                // Any characters: ASCII (punctuation, blanks, controls) and beyond.
                let n = rng.range(1, 80);
                let any = |rng: &mut pi_jsonl_gen::Rng| match rng.below(3) {
                    0 => char::from(rng.below(128) as u8),
                    1 => char::from_u32(rng.range(128, 0x3100) as u32).unwrap_or('\u{fffd}'),
                    _ => *rng.pick(&['/', '\\', ':', '@', '=', ' ', 'k', 'K', '\u{212A}']),
                };
                (0..n).map(|_| any(&mut rng)).collect()
            } else {
                let n = rng.range(1, 24);
                (0..n).map(|_| *rng.pick(SITE_PIECES)).collect()
            };
            check(&text, &mut matched);
            if round % 40 == 0 {
                // Cut before and after every byte that ends a window or starts a site.
                for (i, b) in text.bytes().enumerate() {
                    if !b" \n\t@/\\:=tTaApPsSbB".contains(&b) {
                        continue;
                    }
                    for at in [i, i + 1] {
                        if text.is_char_boundary(at) {
                            check(&text[..at], &mut matched);
                            check(&text[at..], &mut matched);
                        }
                    }
                }
            }
        }
        // Not a test of nothing: every pattern proposed spans many times.
        let kinds = DETECTORS.iter().map(|d| d.kind);
        for kind in kinds.chain(["email", "high-entropy", "path", "keyed", "password-hash"]) {
            let n = matched.iter().find(|(k, _)| *k == kind).map_or(0, |m| m.1);
            assert!(n >= 50, "{kind}: {n} spans ({matched:?})");
        }
    }

    /// The anchors a text holds are the same found at every byte as where the search for
    /// them all stops, and are those it contains.
    #[test]
    fn anchor_words_are_found_by_byte_as_by_the_search() {
        let scan = Scan::new(|_| true);
        let mut rng = pi_jsonl_gen::Rng::new(23);
        let mut seen: Vec<(&str, usize)> = scan.words.iter().map(|&w| (w, 0)).collect();
        // The site pieces, the anchors, and each anchor but its last byte (a near miss).
        let mut pieces: Vec<&str> = SITE_PIECES.to_vec();
        pieces.extend(scan.words.iter().flat_map(|w| [*w, &w[..w.len() - 1]]));
        for round in 0..5_000 {
            let text: String = if round % 4 == 0 {
                let len = rng.range(1, 300) as usize;
                pi_jsonl_gen::mixed_body(&mut rng, len)
            } else {
                let n = rng.range(1, 24);
                (0..n).map(|_| *rng.pick(&pieces)).collect()
            };
            let sorted = |mut v: Vec<&'static str>| {
                v.sort_unstable();
                v
            };
            let want: Vec<&str> = scan
                .words
                .iter()
                .copied()
                .filter(|w| text.contains(w))
                .collect();
            assert_eq!(sorted(scan.words_found(&text, true)), want, "{text:?}");
            assert_eq!(sorted(scan.words_found(&text, false)), want, "{text:?}");
            for w in want {
                seen.iter_mut().find(|(s, _)| *s == w).expect("a word").1 += 1;
            }
        }
        // Not a test of nothing: every anchor is found.
        assert!(seen.iter().all(|&(_, n)| n >= 5), "{seen:?}");
    }

    /// A home root starts a path after any character that cannot continue a name (and after
    /// a one-letter option), not inside a relative path or a URL; the path is pseudonymised
    /// whole, random-looking names too; a user's name with a space is read to its separator.
    #[test]
    fn home_paths_start_after_what_ends_a_name_and_are_masked_whole() {
        let m = Masker::default();
        let cases = [
            ("at @/home/ana/x.ts", "at @/home/user1/file1.ts"),
            ("\u{7}/Users/ana/x", "\u{7}/Users/user1/dir1"),
            ("gcc -I/home/ana/inc", "gcc -I/home/user1/dir1"),
            (r"路径：C:\Users\ana\x.ps1", r"路径：C:\Users\user1\file1.ps1"),
            ("{/root/x/y}", "{/root/dir1/dir2}"),
            ("**/Users/ana/x**", "**/Users/user1/dir1"),
            ("./home/x/y src/home/x", "./home/x/y src/home/x"),
            ("https://example.com/home/x", "https://example.com/home/x"),
            (
                "/home/ana/.pi/agent/sessions/--home-ana--/2026-04-19T08-25-00-706Z_019da4d7-d222-715c-ad16-deea6d602ac6.jsonl",
                "/home/user1/dir1/dir2/dir3/dir4/file1.jsonl",
            ),
            (
                "(/home/ana/node_modules/.pnpm/pkg@1.2.3_Zq8RkT3mWx9LpV2bNc7YdF4hJs6/x.js)",
                "(/home/user1/dir1/dir2/dir3/file1.js)",
            ),
            ("/Users/Ana Belle/Library/x y", "/Users/user1/dir1/dir2 y"),
            (r"C:\Users\Ana Belle\Docs\x.rs", r"C:\Users\user1\dir1\file1.rs"),
            ("/home/ana and then /tmp", "/home/user1 and then /tmp"),
            ("HOME=/home/ana PATH=/x/y", "HOME=/home/user1 PATH=/dir1/dir2"),
            ("/home/ana/.git/ana@example.com/x", "/home/user1/dir1/dir2/dir3"),
            ("mail ana@example.com/x", "mail [email]/x"),
        ];
        for (text, want) in cases {
            assert_eq!(mask(&m, text), want, "{text}");
        }
    }

    /// A value a credential's name gives in text is masked whatever its shape (no digit or
    /// sign in it, where the password pattern needs one): assignments, YAML, headers, options,
    /// quoted JSON; a secret found inside it gives its kind to the whole value. Code, prose,
    /// references and masks already written stay.
    #[test]
    fn values_named_as_credentials_in_text() {
        let m = Masker::default();
        let masked = [
            // Pairs in braces: Erlang's and Elixir's options and headers.
            (
                "[{password, \"hunter2\"}, {:api_token, 'quokka'}, { \"Token\" , \"q1\" }]",
                "[{password, \"[secret:keyed]\"}, {:api_token, '[secret:keyed]'}, { \"Token\" , \"[secret:keyed]\" }]",
            ),
            // A wallet's seed phrase: every word of it, to the line's end.
            (
                "MNEMONIC=\"test test test test test test test test test test test junk\"",
                "MNEMONIC=\"[secret:keyed]\"",
            ),
            (
                "SEED_PHRASE=abandon ability able about above absent absorb abstract absurd abuse\nx",
                "SEED_PHRASE=[secret:keyed]\nx",
            ),
            (
                "my recovery phrase: legal winner thank year wave sausage worth useful legal winner",
                "my recovery phrase: [secret:keyed]",
            ),
            (
                "export OPENAI_API_KEY=quokkakeyvalue && ls",
                "export OPENAI_API_KEY=[secret:keyed] && ls",
            ),
            ("PASSWORD=hunter", "PASSWORD=[secret:keyed]"),
            (
                "PW=Qz7wPl2mXa ./deploy.sh; export DB_PW=hunter2x\npw: Vt3nQa8yRe",
                "PW=[secret:keyed] ./deploy.sh; export DB_PW=[secret:keyed]\npw: [secret:keyed]",
            ),
            ("set DB_PW Qz7wPl2mXa", "set DB_PW [secret:keyed]"),
            // A user and a password given as a login.
            (
                "login: ana / Hb4kTr9sLx. Creds: ana@x.io/Hb4kTr9s! LOGIN=admin:Vt3nQa8yRf",
                "login: ana / [secret:keyed]. Creds: [email]/[secret:keyed]! LOGIN=admin:[secret:keyed]",
            ),
            (
                "credentials: root / Qq5wEr7tYu for the staging box\nuser/pass: ana / Hb4kTr9sLx",
                "credentials: root / [secret:keyed] for the staging box\nuser/pass: [secret:keyed]",
            ),
            // Code's default where the variable is not set.
            (
                "const token = process.env.GITHUB_TOKEN || \"Po9iUy7tReWq\"; API_KEY = env[\"API_KEY\"] ?? 'dev-key'",
                "const token = process.env.GITHUB_TOKEN || \"[secret:keyed]\"; API_KEY = env[\"API_KEY\"] ?? '[secret:keyed]'",
            ),
            (
                "SECRET_KEY = os.environ.get('SECRET_KEY') or 'dev-secret'\n  secret: cfg.secret ?? \"pw\",",
                "SECRET_KEY = os.environ.get('SECRET_KEY') or '[secret:keyed]'\n  secret: cfg.secret ?? \"[secret:keyed]\",",
            ),
            ("MY_APP_PASS='plain words'", "MY_APP_PASS='[secret:keyed]'"),
            (
                "SECRET_KEY=django-insecure-8b$x!k2@q",
                "SECRET_KEY=[secret:keyed]",
            ),
            ("PGPASSWORD=quokkapw psql", "PGPASSWORD=[secret:keyed] psql"),
            ("db.password=hunter.two", "db.password=[secret:keyed]"),
            ("passphrase: quokkaphrase", "passphrase: [secret:keyed]"),
            // Issue 17, item 3: a passphrase of several words to the end of its line (it
            // was kept, a known limit).
            ("passphrase: correct horse", "passphrase: [secret:keyed]"),
            (
                "the password is hunter2x9.",
                "the password is [secret:keyed].",
            ),
            (
                "I set my password to Zx9kLm2Q7 yesterday; WPA key: Zx9kLm2QC",
                "I set my password to [secret:keyed] yesterday; WPA key: [secret:keyed]",
            ),
            (
                "The password for the staging DB is Hunter2Staging! and the API key to prod was 'q z'",
                "The password for the staging DB is [secret:keyed]! and the API key to prod was '[secret:keyed]'",
            ),
            ("SECRET_KEY = 'quokka'", "SECRET_KEY = '[secret:keyed]'"),
            (
                r#"{\"token\":\"quokkatok\"}"#,
                r#"{\"token\":\"[secret:keyed]\"}"#,
            ),
            (
                "curl -H 'Authorization: Basic YW5hOnMzY3IzdA==' -H 'X-Api-Key: quokkav' x",
                "curl -H 'Authorization: Basic [secret:keyed]' -H 'X-Api-Key: [secret:keyed]' x",
            ),
            (
                "Authorization: Bearer quokkabearer\nnext",
                "Authorization: Bearer [secret:keyed]\nnext",
            ),
            ("Cookie: sid=quokka; lang=en", "Cookie: [secret:keyed]"),
            (
                "Set-Cookie: session=quokka; Path=/\nok",
                "Set-Cookie: [secret:keyed]\nok",
            ),
            (
                "curl -u ana:quokkapass https://x",
                "curl -u ana:[secret:keyed] https://x",
            ),
            (
                "http -a ana:quokka1 GET x; xh -a 'ana:quokka2' x; lftp -u ana,quokka3 sftp://h",
                "http -a ana:[secret:keyed] GET x; xh -a 'ana:[secret:keyed]' x; lftp -u ana,[secret:keyed] sftp://h",
            ),
            (
                "mysql -u root -pquokkapass db",
                "mysql -u root -p[secret:keyed] db",
            ),
            ("app --password quokkapass", "app --password [secret:keyed]"),
            ("--token 'quokka tok' x", "--token '[secret:keyed]' x"),
            (
                "sshpass -p 'quokka pass' ssh h; sshpass -pquokkapass ssh h",
                "sshpass -p '[secret:keyed]' ssh h; sshpass -p[secret:keyed] ssh h",
            ),
            (
                "docker login -u ana -p quokkapass r.io && docker run -p 80:80 x",
                "docker login -u ana -p [secret:keyed] r.io && docker run -p 80:80 x",
            ),
            (
                "podman login quay.io -u ana -p \"quokka\"",
                "podman login quay.io -u ana -p \"[secret:keyed]\"",
            ),
            (
                "redis-cli -h h -a quokkapass ping",
                "redis-cli -h h -a [secret:keyed] ping",
            ),
            (
                "machine h.io\n  login ana\n  password quokka1\nmachine b login c password 'q u'",
                "machine h.io\n  login ana\n  password [secret:keyed]\nmachine b login c password '[secret:keyed]'",
            ),
            (
                "git config --global github.token quokkatok; npm config set //r.org/:_authToken q-1",
                "git config --global github.token [secret:keyed]; npm config set //r.org/:_authToken [secret:keyed]",
            ),
            (
                "bash -c \"git config github.token quokkatok\"; X=$(yarn config set npmAuthToken q-2)",
                "bash -c \"git config github.token [secret:keyed]\"; X=$(yarn config set npmAuthToken [secret:keyed])",
            ),
            (
                "echo 'quokka pw' | sudo -S ls; printf 'quokka\\n' | sudo --stdin -k ls",
                "echo '[secret:keyed]' | sudo -S ls; printf '[secret:keyed]\\n' | sudo --stdin -k ls",
            ),
            // Options programs read a password by, whatever their names say.
            (
                "zip -P quokka1 o.zip f; unzip -P 'quo kka' o.zip; 7z a -pquokka2 o.7z f",
                "zip -P [secret:keyed] o.zip f; unzip -P '[secret:keyed]' o.zip; 7z a -p[secret:keyed] o.7z f",
            ),
            (
                "ldapsearch -D cn=a -w quokka3 -b dc=x; sudo /usr/bin/openssl enc -k quokka4",
                "ldapsearch -D cn=a -w [secret:keyed] -b dc=x; sudo /usr/dir1/dir2 enc -k [secret:keyed]",
            ),
            (
                "keytool -list -storepass quokka5 -keypass quokka6; ssh-keygen -P old1 -N new1 -f k",
                "keytool -list -storepass [secret:keyed] -keypass [secret:keyed]; ssh-keygen -P [secret:keyed] -N [secret:keyed] -f k",
            ),
            (
                "az login -u a -p quokka7; mongosh -u a -p quokka8; gh secret set X -b quokka9",
                "az login -u a -p [secret:keyed]; mongosh -u a -p [secret:keyed]; gh secret set X -b [secret:keyed]",
            ),
            (
                "docker exec r redis-cli -a quokka10; sqlcmd -U sa -P quokka11 -Q q",
                "docker exec r redis-cli -a [secret:keyed]; sqlcmd -U sa -P [secret:keyed] -Q q",
            ),
            // Single-dash long options, as Go writes its flags.
            ("vault -token quokka12 x", "vault -token [secret:keyed] x"),
            // Samba's user and password; OpenSSL's `pass:`.
            (
                "smbclient //h/s -U ana%quokka13; rpcclient -U'ana%quokka14' h",
                "smbclient //h/s -U ana%[secret:keyed]; rpcclient -U'ana%[secret:keyed]' h",
            ),
            (
                "openssl pkcs12 -passin pass:quokka15 -passout 'pass:quokka16'",
                "openssl pkcs12 -passin pass:[secret:keyed] -passout 'pass:[secret:keyed]'",
            ),
            // By place.
            (
                "htpasswd -bc .htpasswd ana quokka17; htpasswd -B -C 10 -nb ana 'quo kka'",
                "htpasswd -bc .htpasswd ana [secret:keyed]; htpasswd -B -C 10 -nb ana '[secret:keyed]'",
            ),
            (
                "rabbitmqctl add_user ana quokka18; wpa_passphrase Home quokka19",
                "rabbitmqctl add_user ana [secret:keyed]; wpa_passphrase Home [secret:keyed]",
            ),
            (
                "nmcli dev wifi connect Home password quokka20; nmcli c modify x wifi-sec.psk 'q 21'",
                "nmcli dev wifi connect Home password [secret:keyed]; nmcli c modify x wifi-sec.psk '[secret:keyed]'",
            ),
            (
                "sqlplus -S ana/quokka22@//db:1521/x; expdp userid=ana/quokka23@orcl dumpfile=d",
                "sqlplus -S ana/[secret:keyed]@//db:1521/x; expdp userid=ana/[secret:keyed]@orcl dumpfile=d",
            ),
            // Piped to what reads a password on its standard input.
            (
                "echo quokka24 | docker login -u ana --password-stdin r.io",
                "echo [secret:keyed] | docker login -u ana --password-stdin r.io",
            ),
            (
                "printf '%s' quokka25 | gh auth login --with-token; echo 'ana:quokka26' | chpasswd",
                "printf '%s' [secret:keyed] | gh auth login --with-token; echo 'ana:[secret:keyed]' | chpasswd",
            ),
            (
                "echo quokka27 | passwd --stdin ana; chpasswd <<< 'ana:quokka28'",
                "echo [secret:keyed] | passwd --stdin ana; chpasswd <<< 'ana:[secret:keyed]'",
            ),
            // Code: hashes' pairs, a call's name and value, logins, XML.
            (
                "['password' => 'quokka31', :api_key => \"quokka32\"]",
                "['password' => '[secret:keyed]', :api_key => \"[secret:keyed]\"]",
            ),
            (
                "define( 'DB_PASSWORD', 'quokka33' ); os.environ.setdefault(\"SECRET_KEY\", \"q34\")",
                "define( 'DB_PASSWORD', '[secret:keyed]' ); os.environ.setdefault(\"SECRET_KEY\", \"[secret:keyed]\")",
            ),
            (
                "smtp.login('ana', 'quokka35'); get(u, auth=('ana', 'q36')); HTTPBasicAuth(u, 'q37')",
                "smtp.login('ana', '[secret:keyed]'); get(u, auth=('ana', '[secret:keyed]')); HTTPBasicAuth(u, '[secret:keyed]')",
            ),
            (
                "<Password>quokka38</Password><add key=\"DbPassword\" value=\"quokka39\"/>",
                "<Password>[secret:keyed]</Password><add key=\"DbPassword\" value=\"[secret:keyed]\"/>",
            ),
            (
                "$p = ConvertTo-SecureString 'quokka40' -AsPlainText -Force",
                "$p = ConvertTo-SecureString '[secret:keyed]' -AsPlainText -Force",
            ),
            // In text that quotes JSON, once or twice, words end at escapes written out.
            (
                r#"{\"c\":\"htpasswd -b f ana quokka29\nls\"} \"machine h password quokka30\\n\\\"x"#,
                r#"{\"c\":\"htpasswd -b f ana [secret:keyed]\nls\"} \"machine h password [secret:keyed]\\n\\\"x"#,
            ),
            // The password pattern's value stops at `.`: the whole value goes, as `password`.
            ("password=hunter22.two", "password=[secret:password]"),
            // A `.pgpass` line's password, to the end of a line it starts.
            (
                "localhost:5432:app:ana:quokka 41\n10.0.0.2:*:*:ana:quokka42",
                "localhost:5432:app:ana:[secret:keyed]\n10.0.0.2:*:*:ana:[secret:keyed]",
            ),
            (
                r#"echo "*:*:*:ana:quokka43" >> pgpass; echo 'db:5432:x:y:q44'"#,
                r#"echo "*:*:*:ana:[secret:keyed]" >> pgpass; echo 'db:5432:x:y:[secret:keyed]'"#,
            ),
            (r"1\tdb.local:6432:*:ana:quokka45\n", r"1\tdb.local:6432:*:ana:[secret:keyed]\n"),
            // Names that end with `PASS` glued to other capitals.
            (
                "PGPASS=quokka46 psql; SMTPPASS: quokka47",
                "PGPASS=[secret:keyed] psql; SMTPPASS: [secret:keyed]",
            ),
            // A two-word name before `:` (`API key`, `access token`).
            (
                "the API key: quokka48\nAccess token = 'q49'",
                "the API key: [secret:keyed]\nAccess token = '[secret:keyed]'",
            ),
            // fish's `set` and a call's name and value before more arguments.
            (
                "set -gx API_TOKEN quokka50; set -x DB_PASS 'q51'",
                "set -gx API_TOKEN [secret:keyed]; set -x DB_PASS '[secret:keyed]'",
            ),
            // Cloud stores' secrets, and a program's option given with `=`.
            (
                "az keyvault secret set --vault-name v -n db --value quokka55; gh secret set X --body=q56",
                "az keyvault secret set --vault-name v -n db --value [secret:keyed]; gh secret set X --body=[secret:keyed]",
            ),
            (
                "aws ssm put-parameter --name ab --value 'quokka57' --type SecureString; aws secretsmanager create-secret --name x --secret-string q58",
                "aws ssm put-parameter --name ab --value '[secret:keyed]' --type SecureString; aws secretsmanager create-secret --name x --secret-string [secret:keyed]",
            ),
            // A variable's name is kept in backticks only (Markdown's code), not in quotes.
            (
                "JWT_SECRET=\"MY_APP_SECRET\" and Signing key: `X_TOKEN_SECRET`",
                "JWT_SECRET=\"[secret:keyed]\" and Signing key: `X_TOKEN_SECRET`",
            ),
            (
                "rclone config create s3r s3 access_key_id AKIDX secret_access_key quokka66 region eu",
                "rclone config create s3r s3 access_key_id AKIDX secret_access_key [secret:keyed] region eu",
            ),
            (
                "rclone config update box pass 'q67' && rclone config password ftp pass q68",
                "rclone config update box pass '[secret:keyed]' && rclone config password ftp pass [secret:keyed]",
            ),
            // A command quoted whole in JSON text.
            (
                r#"{"command":"echo quokka64 | sudo -S ls"} {\"c\":\"printf '%s' q65 | passwd --stdin a\"}"#,
                r#"{"command":"echo [secret:keyed] | sudo -S ls"} {\"c\":\"printf '%s' [secret:keyed] | passwd --stdin a\"}"#,
            ),
            // A here-string to what reads a password on its standard input.
            (
                "sudo -S <<< 'quokka61' apt update; gpg --batch --passphrase-fd 0 -c f <<<q62",
                "sudo -S <<< '[secret:keyed]' apt update; gpg --batch --passphrase-fd 0 -c f <<<[secret:keyed]",
            ),
            (
                "gh auth login --with-token <<< quokka63",
                "gh auth login --with-token <<< [secret:keyed]",
            ),
            // A password one space after its name; a short token after `token` or `Bearer`.
            (
                "use password quokka53 for admin; DB_PASSWORD 'q 54'. password x1 ok",
                "use password [secret:keyed] for admin; DB_PASSWORD '[secret:keyed]'. password x1 ok",
            ),
            (
                "token quokka55x, GITHUB_TOKEN qu0kka56 and Bearer quokka57.",
                "token [secret:keyed], GITHUB_TOKEN [secret:keyed] and Bearer [secret:keyed].",
            ),
            // Windows' `net`, FreeRDP, HashiCorp's vault, ansible-vault.
            (
                "net user ana quokka91 /add; {\"command\":\"NET USER bob q92\"}",
                "net user ana [secret:keyed] /add; {\"command\":\"NET USER bob [secret:keyed]\"}",
            ),
            (
                "net use Z: \\\\fs\\d quokka93 /user:ana\nnet use \\\\fs\\d /user:ana 'q 94'",
                "net use Z: \\\\dir1\\dir2 [secret:keyed] /user:ana\nnet use \\\\dir1\\dir2 /user:ana '[secret:keyed]'",
            ),
            (
                "xfreerdp3 /v:h /u:ana /p:quokka95 '/gp:q 96'; sdl-freerdp /pth:q97",
                "xfreerdp3 /v:h /u:ana /p:[secret:keyed] '/gp:[secret:keyed]'; sdl-freerdp /pth:[secret:keyed]",
            ),
            (
                "VAULT_ADDR=https://v:8200 vault login s.quokka98",
                "VAULT_ADDR=https://v:8200 vault login [secret:keyed]",
            ),
            (
                "ansible-vault encrypt_string --vault-id dev@a 'q 99' --name pw; echo -n q100 | ansible-vault encrypt_string",
                "ansible-vault encrypt_string --vault-id dev@a '[secret:keyed]' --name pw; echo -n [secret:keyed] | ansible-vault encrypt_string",
            ),
            // A bare name's pair (Perl), closed where the pair ends.
            (
                "my %db = (user => 'ana', password => 'q101'); f(token => \"q102\")",
                "my %db = (user => 'ana', password => '[secret:keyed]'); f(token => \"[secret:keyed]\")",
            ),
            // Piped to a command that stores a secret.
            (
                "echo quokka71 | npx wrangler secret put API_KEY; printf '%s' q72 | docker secret create db -",
                "echo [secret:keyed] | npx wrangler secret put API_KEY; printf '%s' [secret:keyed] | docker secret create db -",
            ),
            (
                "echo -n quokka73 | vercel env add DB_URL production; echo q74 | gh secret set X",
                "echo -n [secret:keyed] | vercel env add DB_URL production; echo [secret:keyed] | gh secret set X",
            ),
            // Piped to a command that encodes or encrypts it.
            (
                "echo -n 'ana:q103' | base64 -w0; printf %s quokka104 | sudo base64; echo q105 | openssl enc -aes256 -pbkdf2",
                "echo -n '[secret:keyed]' | base64 -w0; printf %s [secret:keyed] | sudo base64; echo [secret:keyed] | openssl enc -aes256 -pbkdf2",
            ),
            // A quote that opens a value, after an apostrophe or a closed quote on its line.
            (
                "it's password: 'quokka106'; echo \"x\" password: \"q107\"\nsay \"hi\"; token=$TOK3N\n{\"c\": \"say \\\"hi\", \"password\": \"q108\"}",
                "it's password: '[secret:keyed]'; echo \"x\" password: \"[secret:keyed]\"\nsay \"hi\"; token=[secret:password]\n{\"c\": \"say \\\"hi\", \"password\": \"[secret:keyed]\"}",
            ),
            // A comment after a value that ends its line.
            (
                "DB_PASSWORD: quokkaxy  # prod\nAPI_TOKEN = quokkaz #\npassphrase: correct horse # x",
                "DB_PASSWORD: [secret:keyed]  # prod\nAPI_TOKEN = [secret:keyed] #\npassphrase: [secret:keyed] # x",
            ),
            // A Markdown table's row that gives a credential's name its value.
            (
                "| Variable | Value |\n|---|---|\n| DB_PASSWORD | quokka84 |\n| `API_TOKEN` | `q85` |",
                "| Variable | Value |\n|---|---|\n| DB_PASSWORD | [secret:keyed] |\n| `API_TOKEN` | `[secret:keyed]` |",
            ),
            // Calls that take a user and a password.
            (
                r#"client.auth("ana", "quokka79"); new NetworkCredential("ana", "q80"); x.Authenticate('a', 'q81')"#,
                r#"client.auth("ana", "[secret:keyed]"); new NetworkCredential("ana", "[secret:keyed]"); x.Authenticate('a', '[secret:keyed]')"#,
            ),
            // A variable written as a pair: its value when its name names a credential.
            (
                "env:\n  - name: MODE\n    value: prod\n  - name: DB_PASSWORD\n    value: \"quokka75\"\n",
                "env:\n  - name: MODE\n    value: prod\n  - name: DB_PASSWORD\n    value: \"[secret:keyed]\"\n",
            ),
            (
                r#"[{"Name":"API_KEY","Value":"quokka76"}] set { name = "db.password" value = "q77" }"#,
                r#"[{"Name":"API_KEY","Value":"[secret:keyed]"}] set { name = "db.password" value = "[secret:keyed]" }"#,
            ),
            (
                r#"{\"key\": \"X-Auth-Token\", \"value\": \"quokka78\"}"#,
                r#"{\"key\": \"X-Auth-Token\", \"value\": \"[secret:keyed]\"}"#,
            ),
            // A subscript's name (`os.environ["NAME"] = V`).
            (
                r#"os.environ["OPENAI_API_KEY"] = "quokka69"; $_ENV['DB_PASSWORD']='q70'"#,
                r#"os.environ["OPENAI_API_KEY"] = "[secret:keyed]"; $_ENV['DB_PASSWORD']='[secret:keyed]'"#,
            ),
            // A variable named in capitals given its value by words.
            (
                "setx API_KEY quokka90 /M; setenv DB_PASS 'q91'; launchctl setenv API_TOKEN q92",
                "setx API_KEY [secret:keyed] /M; setenv DB_PASS '[secret:keyed]'; launchctl setenv API_TOKEN [secret:keyed]",
            ),
            (
                "RUN make\nENV STRIPE_SECRET_KEY quokka93\ndoppler secrets set API_KEY q94; netlify env:set AUTH_TOKEN q95",
                "RUN make\nENV STRIPE_SECRET_KEY [secret:keyed]\ndoppler secrets set API_KEY [secret:keyed]; netlify env:set AUTH_TOKEN [secret:keyed]",
            ),
            // A here-string or a pipe to a command that stores a secret.
            (
                "npx wrangler secret put API_KEY <<< \"quokka96\"; firebase functions:secrets:set DB_PASSWORD <<< q97",
                "npx wrangler secret put API_KEY <<< \"[secret:keyed]\"; firebase functions:secrets:set DB_PASSWORD <<< [secret:keyed]",
            ),
            (
                "echo -n quokka98 | gcloud secrets versions add api-key --data-file=-; echo q99 | doppler secrets set X",
                "echo -n [secret:keyed] | gcloud secrets versions add api-key --data-file=-; echo [secret:keyed] | doppler secrets set X",
            ),
            // SQL's password for a user; a program's `-p`; a store of secrets.
            (
                "CREATE USER app IDENTIFIED BY 'numbat1'; ALTER USER r IDENTIFIED WITH sha2 BY \"numbat2\"; CREATE USER o IDENTIFIED BY numbat3;",
                "CREATE USER app IDENTIFIED BY '[secret:keyed]'; ALTER USER r IDENTIFIED WITH sha2 BY \"[secret:keyed]\"; CREATE USER o IDENTIFIED BY [secret:keyed];",
            ),
            (
                "create user app identified by 'numbat8'; alter user scott identified by Tiger8x;\ncreate database link l connect to u identified with sha2 by \"numbat9\"",
                "create user app identified by '[secret:keyed]'; alter user scott identified by [secret:keyed];\ncreate database link l connect to u identified with sha2 by \"[secret:keyed]\"",
            ),
            (
                "vercel env add API_KEY production <<< \"numbat10\"",
                "vercel env add API_KEY production <<< \"[secret:keyed]\"",
            ),
            (
                "SET PASSWORD FOR 'root'@'localhost' = PASSWORD('numbat4'); user.set_password(\"numbat5\")",
                "SET PASSWORD FOR 'root'@'localhost' = PASSWORD('[secret:keyed]'); user.set_password(\"[secret:keyed]\")",
            ),
            (
                "psexec \\\\host -u ana -p numbat6 cmd; echo numbat7 | keyring set system ana",
                "psexec \\\\host -u ana -p [secret:keyed] cmd; echo [secret:keyed] | keyring set system ana",
            ),
            // Terraform's default for a variable named as a credential; Rails' key base.
            (
                "variable \"db_password\" {\n  type    = string\n  default = \"wombat1\"\n}",
                "variable \"db_password\" {\n  type    = string\n  default = \"[secret:keyed]\"\n}",
            ),
            (
                "secret_key_base: wombat2\nSECRET_KEY_BASE=wombat3 secretKeyBase = 'wombat4'",
                "secret_key_base: [secret:keyed]\nSECRET_KEY_BASE=[secret:keyed] secretKeyBase = '[secret:keyed]'",
            ),
            (
                r#"[Environment]::SetEnvironmentVariable("API_KEY", "quokka52", "User")"#,
                r#"[Environment]::SetEnvironmentVariable("API_KEY", "[secret:keyed]", "User")"#,
            ),
        ];
        for (text, want) in masked {
            assert_eq!(mask(&m, text), want, "{text}");
        }
        let kept = [
            "password: string;",
            "token?: string",
            "apiKey: resolvedApiKey, pwd.slice(0)",
            "apiKey: apiKey",
            "token = getToken()",
            "const token = process.env.GITHUB_TOKEN",
            "token = self.token",
            "connect(user=user, password=password, token=self.token)",
            "Password: must be at least eight characters",
            // A credential named too far back, behind a sign, or no value's shape.
            "the password for the one big old DB is x9y8z7w6, the token for, it is 8ab3c9d1",
            "the token for this request is stored; a set of tokens on disk is 4096-bytes",
            "change the password to something longer; the password to the router is in the drawer",
            // Issue 17, item 3: a passphrase ends its line; this one does not.
            "passphrase: battery staple, then more",
            "the phrase: hello world; mnemonic = opcodes[i]; const mnemonic = bip39.generateMnemonic()",
            "{user, \"ana\"}, {password, Pw}, {x, password, \"v\"}, {password, \"a\", \"b\"}, #{password => \"${PW}\"}",
            "password=${DB_PASSWORD} TOKEN=$(cat f) token: <your token>",
            "if token == null or secret != x",
            "max_tokens=4096 sortKey=name key=Enter",
            "see the --token flag, or use --password PASSWORD",
            "git push -u origin main; mkdir -p build; ls -pquokka",
            "docker run -p 8080:80 x; docker login; ssh -p 22 h; tar -a -cf x.zip y",
            "sshpass -p $SSHPASS ssh h; redis-cli -a -n 2",
            "The machine has a login screen; the password is kept. machine x password $PW",
            "git config user.name ana; git config credential.helper store; config token is",
            "config token index now; the config token. fails; make config password quokka1",
            "echo $PW | sudo -S ls; echo hi | sudo ls; cat x | sudo tee y",
            "date -u +%Y-%m-%d; docker run -u 1000:1000 -p 8080:80 x; docker compose run --user 0:0 y",
            "pip install -U x; diff -U3 a b; psql -U postgres; grep -P x; rsync -P a b; mysql -P 3306",
            "echo \"$PW\" | docker login --password-stdin; cat t | gh auth login --with-token",
            "openssl pkcs12 -passin env:PW -passout file:pw.txt; openssl req -passout stdin",
            "zip -r o.zip d; 7z x a.7z -oout; ssh-keygen -N '' -f k; ssh-keygen -p -f k",
            "gh pr create -b body; security find-generic-password -s svc -w; redis-cli -p 6380",
            "htpasswd -c f ana; sqlplus / as sysdba; sqlplus /nolog; nmcli dev wifi list",
            "wpa_passphrase Home; rabbitmqctl list_users; mongosh -u admin -p",
            "echo x || passwd --stdin ana; echo hi | tee y",
            "xs.map((password) => check(password)); f = x => 'password'; login(user, pw)",
            "define('WP_DEBUG', 'true'); greet('name', 'Ana'); auth=(user, pw); Auth(u, '')",
            "<token>{{ t }}</token><password></password><secret>\nx</secret>",
            "<input name=\"password\" value=\"\"><add key=\"Name\" value=\"x\"/>",
            "psql --no-password -h host",
            "password=[secret:password] and [secret:keyed]",
            "secret: true",
            "std::token::Token, https://auth:",
            "git push -u https://github.com/ana/x.git main; git push -u origin HEAD:refs/x",
            "http -a ana GET x; tar -a -cf x.tar.gz y; ls -a a:b; lftp -u ana sftp://h",
            "pwd = `~${pwd.slice(home.length)}`; PWD=/srv",
            "token = process.env.TOKEN || ''; name = env.TOKEN || 'x'; token = f(x) || g('y'); token = a.b; c || 'd'",
            "token = os.getenv('TOKEN') or default; token = cfg.token ?? `${h}`; secret: x.secret || \"${T}\"",
            "login: ana / password; login: the/Main2Test.rs; logins: 3; creds: see lib/x86_64-linux; LOGIN=ana",
            "npw=abc12345; pw = getpass(); PWM=abc12345; pw: string; PW=$PW",
            r#"headers: { cookie: req.headers.get("cookie") || "" }"#,
            r#""next-auth": "^5.0.0-beta.25", "better-auth": "1.2.3""#,
            // Not `.pgpass` lines: a compiler's place, a time, an address and port.
            "src/main.rs:12:5: error: x; a.rs:12:5: warning: unused: y; 12:30:45:123:x; ::1:8080:a:b:c",
            "at 10.0.0.1:80 and host:80/x:y:z; a:b:c:d:e",
            r#"{\"at\":\"2026-06-09T13:34:21Z\",\"url\":\"https://h.io/x\"} Signing key: `X_TOKEN_SECRET`"#,
            "BYPASS=1 COMPASS=north; bypass: x; primary key: id; the key: k; API key: none",
            "password reset; the password manager; password v2.0.1; password sha256; password 'x; password ${PW}",
            "az group create --name g --value x; aws s3 ls --value x; gh pr create --body=x; --value=1",
            r#"{"c":"xecho a1 | sudo -S x"} $(echo $PW | sudo -S x) "#,
            "rclone config create token drive; rclone config show pass; rclone config create x sftp pass $P",
            "sudo -S ls <<< $PW; gpg --passphrase-fd 3 <<< x1; cat <<< quokka; sudo ls <<< y",
            r#"if cfg["password"] == pw: x["token"] = get_token(); a[i] = quokka; env["TOKEN"] = $T"#,
            "echo hi | gh secret list; cat f | wrangler secret put X; echo $T | gh secret set X",
            "- name: DB_PASSWORD\n  valueFrom: x\n- name: MODE\n  value: prod\n{\"key\": \"key\", \"value\": \"Enter\"}",
            r#"{"name": "API_TOKEN"} {"value": "kept"}; name = "token_count" value = "quokka9""#,
            r#"author("ana", "quokka"); loginfo("a", "b"); getCredentialsPath("a", "b"); auth(user, pw)"#,
            "Token: abc1 #3 in the list; password: see below#1\ntoken: xyz #2 of them",
            "| API_KEY | Required | The key |\n| DB_PASSWORD | `${DB_PASSWORD}` | x |\n| TOKEN | abc |\n| a password | quokka86 |\n| PASSWORD | quokka87\n| `better-auth` | `better-auth` |\n| api_key | `apiKey` |",
            "a || wrangler secret put y; echo x | docker secret ls; echo x | vercel env ls; echo y | gh set",
            "passwordless login1234; --password $PW; password_file abc12345; set -x EDITOR vim; set -gx TOKEN $T; set -l x y; set -e API_TOKEN",
            r#"SetEnvironmentVariable("API_KEY", $k, "User"); f("TOKEN", "", 1)"#,
            "set API_KEY before you start; setx API_KEY $KEY; setx PATH x1; ENV NODE_ENV production",
            "The ENV API_KEY line; echo ENV API_TOKEN x1; setx API_KEY --help; set GITHUB_TOKEN in ci",
            "SELECT password FROM users WHERE TOKEN IS NULL; export API_KEY x1; settings API_KEY x2",
            "cat <<< x1 | wc; wrangler secret put API_KEY <<< $KEY; gh secret list API_KEY <<< x2",
            "variable \"region\" {\n  default = \"eu-west-1\"\n}\nvariable \"db_password\" {\n  default = null\n}",
            "x_default = \"v1\"; locals { default = \"v2\" }; database: production01; keybase: k1",
            "SELECT a FROM t ORDER BY id; GROUP BY x; IDENTIFIED BY; CREATE USER a IDENTIFIED BY PASSWORD;",
            "The user is identified by their email; a request identified by id1; user identified by tiger",
            "Identified by their user name, Grant Identified By Ana, the role is identified by x.",
            "vercel env ls API_KEY production <<< x1; vercel env add API_KEY <<< $KEY",
            "user.set_password(pw); getPassword(\"db\"); password('$PW'); psexec -s cmd; echo x | keyring get s a",
            "run net user to list them; net user ana /delete; net user ana *; net use Z: \\\\s\\d * /user:ana",
            "the vault login page; vault login -method=userpass username=ana; vault login -",
            "ansible-vault encrypt secrets.yml; xfreerdp /v:h /u:ana /cert:ignore; the freerdp /p: option",
            "the token limit; token count2; tokens quokkaz12; Bearer token; access token abc",
            "const f = token => \"Bearer \" + token; g = password => 'x' + password;",
            // What is no secret piped to an encoder; a prompt's text; a variable's reference.
            "cat key.pem | base64; echo $TOKEN | base64 -d; openssl rand -base64 32; echo a || base64",
            "read -sp \"Password: \" pw; read -p 'API token: ' TOKEN\necho \"DB_PASSWORD:\" \"$PW\"; read -p \"Password: \" p2; echo \"ok\"",
            "tool --token=$GITHUB_TOKEN; token=$SECRET x --api-key=\"$API_KEY\"",
            // A quote left open at the text's end after an option that takes a value (read
            // past the text's end before).
            "htpasswd -b -C '",
        ];
        for text in kept {
            assert_eq!(mask(&m, text), text);
        }
    }

    #[test]
    fn password_hashes_keep_their_scheme() {
        let m = Masker::default();
        let masked = [
            (
                "ana:$apr1$Zk3pQ9xY$Kq2Hf8sLm4Vn7Rt1Wp0Zx.",
                "ana:$apr1$[secret:password-hash]",
            ),
            (
                r#""password_hash": "$2b$12$abc.defghijklmnopqrstuOp9Q0xk7Lm2Vn8Tp4Yz1Hc6Gd3Fj5K""#,
                r#""password_hash": "$2b$[secret:password-hash]""#,
            ),
            (
                "root:$6$saltsalt$QmV4b2xhZGlFeGFtcGxlSGFzaFZhbHVlMTIz:19000:0:99999:7:::",
                "root:$6$[secret:password-hash]:19000:0:99999:7:::",
            ),
            (
                "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA and",
                "$argon2id$[secret:password-hash] and",
            ),
            (
                "ana:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7\n",
                "ana:$y$[secret:password-hash]\n",
            ),
            // Django's and Werkzeug's: the scheme before the first `$`.
            (
                "pbkdf2_sha256$600000$Qx8Ls2Vm$Zk3pQ9xYKq2Hf8sLm4Vn7Rt1Wp0ZxAb3dE9fG=",
                "pbkdf2_sha256$[secret:password-hash]",
            ),
            (
                "'scrypt:32768:8:1$Zk3pQ9xYKq2Hf8sL$4f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f'",
                "'scrypt:32768:8:1$[secret:password-hash]'",
            ),
        ];
        for (text, want) in masked {
            assert_eq!(mask(&m, text), want, "{text}");
        }
        let kept = [
            "awk '{print $1$2$3$4$5$6$7$8$9$10$11$12}'; echo $1$HOME; costs $5$ or $6$",
            "PS1='$ '; ${a}$b; $apr1$short$x; cost: $2b$12$ then",
        ];
        for text in kept {
            assert_eq!(mask(&m, text), text);
        }
    }

    /// The anchors and command words are found in one packed search, which takes at most 64
    /// strings: past that, every text would be looked through by byte.
    #[test]
    fn anchors_fit_one_packed_search() {
        let scan = compiled().literals();
        assert!(scan.words.len() <= 64, "{} anchors", scan.words.len());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("ssse3") {
            assert!(scan.search().is_some());
        }
    }

    /// Tokens whose bodies the high-entropy rule lets through (hexadecimal, one case, letters
    /// alone) are found by their prefixes; an AWS secret key after its name and a blank; a
    /// URL's password after a user that is an e-mail address.
    #[test]
    fn tokens_known_by_their_prefix() {
        let m = Masker::default();
        let hex = "4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a5c8e1b4d7f0a3c6e9b2d5f8a";
        let found = [
            ("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", "huggingface-token"),
            ("npm_a8Kf93jdLq02mZx7Pq1wRt5yUv6BnC4dEe9H", "npm-token"),
            (
                "pypi-AgEIcHlwaS5vcmcCJGE0ZjVhNDRjLTg2YjMtNDk2Ny1hNzQyLTUyYjg2NTU1MzZm",
                "pypi-token",
            ),
            (
                "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",
                "sendgrid-key",
            ),
            (&format!("dop_v1_{hex}"), "digitalocean-token"),
            (&format!("shpat_{}", &hex[..32]), "shopify-token"),
            (&format!("sbp_{}", &hex[..40]), "supabase-token"),
            (&format!("dapi{}-2", &hex[..32]), "databricks-token"),
            ("key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "mailgun-key"),
            ("0f9e8d7c6b5a49382716f5e4d3c2b1a0-us21", "mailchimp-key"),
            (
                "AGE-SECRET-KEY-1QQPQZFWNZ8PL6DRN6RCJ2LPNKVHLXMGJQ3SCZZCM9MJTSS6DDQASGXWSTM",
                "age-secret-key",
            ),
            ("NRAK-EHMI5SKOEWQKUR3JQ64NQ6PUXCM", "newrelic-key"),
            ("NRII-x3pq_7Rk2mZ0aB4cD6eF8gH1iJ3kL5mN", "newrelic-key"),
            (
                "YSJYgOuwgz7z54.atlasv1.l2dVAMH2vWD6qeSPt5Pv74GDqQ7EyIMfkRrXnUbNgHwQyPzTsLcVdAeKmJhGfDsA",
                "terraform-token",
            ),
            ("sk.eyJ1IjoiYW5hIiwiYSI6ImNrbTB4eTEyMzQ1Njc4OSJ9.Zb4dE6fG8hI0jK2lM4nO6p", "mapbox-token"),
            // Hexadecimal or one case after the prefix: no entropy test takes them.
            (&format!("pul-{}", &hex[..40]), "pulumi-token"),
            (&format!("SK{}", &hex[..32]), "twilio-key"),
            (&format!("sntryu_{hex}"), "sentry-token"),
            (&format!("CLOJARS_{}", &hex[..60]), "clojars-token"),
            ("oy2k5a843xco8a4hmkk6pzgy0oranpe6x1togx992dq7aj", "nuget-key"),
            ("pat-na1-c1d460fa-e4e7-2b00-5d28-4ba6492933cb", "hubspot-token"),
            (&format!("sk_{}", &hex[..48]), "elevenlabs-key"),
            (&format!("lsv2_pt_{}_{}", &hex[..32], &hex[32..42]), "langsmith-key"),
            (&format!("rubygems_{}", &hex[..48]), "rubygems-token"),
            (&format!("shippo_live_{}", &hex[..40]), "shippo-token"),
            (&format!("bkua_{}", &hex[..40]), "buildkite-token"),
            (&format!("PMAK-{}-{}", &hex[..24], &hex[24..58]), "postman-key"),
            ("access-sandbox-c1d460fa-e4e7-2b00-5d28-4ba6492933cb", "plaid-token"),
        ];
        for (token, kind) in found {
            let text = format!("use {token} now");
            assert_eq!(
                mask(&m, &text),
                format!("use [secret:{kind}] now"),
                "{token}"
            );
        }
        assert_eq!(
            mask(
                &m,
                "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            ),
            "aws configure set aws_secret_access_key [secret:aws-secret-key]"
        );
        // An AWS secret access key written beside its id, not alone (a `/` between short
        // parts reads as a path).
        assert_eq!(
            mask(
                &Masker::default(),
                "ana,AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
            ),
            "ana,[secret:aws-access-key],[secret:aws-secret-key]\n"
        );
        assert_eq!(DETECTORS[AWS_ACCESS_KEY].kind, "aws-access-key");
        let alone = "key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        assert_eq!(mask(&Masker::default(), alone), alone);
        assert_eq!(
            mask(&m, "ftp://ana@example.com:hunter22@host/x"),
            "ftp://[secret:url-password]@host/x"
        );
        // Near misses: a word after the prefix, a hash without one.
        for kept in [
            "hf_hub_download(repo_id) key-value-store dapi SG.x npm_config_cache".to_string(),
            format!("commit {} and {}", &hex[..40], &hex[..32]),
            "see http://localhost:3000/@vite/client".into(),
            // Not Mailchimp's: too short, upper case, no data centre, glued to a word.
            format!("{}-us6 {}-us6", &hex[..31], hex[..32].to_uppercase()),
            format!("{}-us {}-usa x{}-us6", &hex[..32], &hex[..32], &hex[..32]),
        ] {
            assert_eq!(mask(&m, &kept), kept);
        }
        // Braintree's access token: the key after the merchant's id.
        let braintree = format!("access_token$production$a489rp4cp5rjss54${}", &hex[32..]);
        assert_eq!(
            mask(&m, &format!("BT={braintree} x")),
            "BT=access_token$production$a489rp4cp5rjss54$[secret:braintree-token] x"
        );
        // Airtable's: the 64 digits after `pat`, its id and `.`.
        assert_eq!(
            mask(&Masker::default(), &format!("AT=patAbCdEfGh123456.{hex} x")),
            "AT=patAbCdEfGh123456.[secret:airtable-token] x"
        );
        // Near misses of the prefixes: glued to a word, a body too short or too long, of the
        // wrong case, a UUID that is no token's.
        for kept in [
            format!("TASK{} pul-{} SK{}", &hex[..32], &hex[..39], &hex[..33]),
            format!(
                "sntryu_{} CLOJARS_{} oy2{}",
                &hex[..63],
                hex[..60].to_uppercase(),
                &hex[..42]
            ),
            "pat-na1-c1d460fa-e4e7-2b00-5d28 id-na1-c1d460fa-e4e7-2b00-5d28-4ba6492933cb".into(),
            format!("sk_{} lsv2_pt_{}", &hex[..47], &hex[..43]),
            format!(
                "xpatAbCdEfGh123456.{hex} patAbCdEfGh12345.{hex} patAbCdEfGh123456.{}",
                &hex[..63]
            ),
            format!(
                "access_token$staging$a489rp4cp5rjss54${} $a489rp4cp5rjss54${}",
                &hex[..32],
                &hex[..32]
            ),
        ] {
            // A masker of its own: the one above learned the tokens, masked wherever they
            // occur.
            assert_eq!(mask(&Masker::default(), &kept), kept);
        }
        // After a sign, the key alone.
        let key = format!("{}-us6", &hex[..32]);
        assert_eq!(
            mask(&m, &format!("mc={key} x")),
            "mc=[secret:mailchimp-key] x"
        );
    }

    /// A signed URL's signature, which grants what the URL names to whoever holds it: Azure's
    /// `sig` (base64, percent-encoded, so no run of it is long enough to look random), and
    /// Amazon's, Google's (hexadecimal) and CloudFront's.
    #[test]
    fn signed_urls() {
        let hex = "4f9a2c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f2a5c8e1b4d7f0a3c6e9b2d5f8a";
        for (url, want) in [
            (
                "https://a.blob.core.windows.net/c/f?sv=2021-06-08&sp=r&sig=Ab3d%2BGhIj%2FKlMnOp%3D",
                "https://a.blob.core.windows.net/c/f?sv=2021-06-08&sp=r&sig=[secret:keyed]".to_string(),
            ),
            (
                &format!("'https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&X-Amz-Signature={hex}'"),
                "'https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&X-Amz-Signature=[secret:keyed]'".into(),
            ),
            (
                &format!("https://storage.googleapis.com/b/o?X-Goog-Signature={hex}{hex}&x=1 ok"),
                "https://storage.googleapis.com/b/o?X-Goog-Signature=[secret:keyed]&x=1 ok".into(),
            ),
            (
                "https://d1.cloudfront.net/v.mp4?Expires=1767225600&Signature=Qk9~x2Lp-Zr7Tq1Wm4~Ys8Ua#t&Key-Pair-Id=K2",
                "https://d1.cloudfront.net/v.mp4?Expires=1767225600&Signature=[secret:keyed]#t&Key-Pair-Id=K2".into(),
            ),
            (
                &format!("https://api.example.com/v1/s?key=Zq8vN3kP1xR7Lm3Q&cx=1 and ?q=a&key={hex}"),
                "https://api.example.com/v1/s?key=[secret:keyed]&cx=1 and ?q=a&key=[secret:keyed]".into(),
            ),
        ] {
            assert_eq!(mask(&Masker::default(), url), want);
        }
        // Not a signature: too short, not a query's parameter, another word before it.
        for text in [
            "https://x.com/a?sig=abc123abc123abc&b=2",
            "sig=Ab3d%2BGhIj%2FKlMnOp%3D in the text",
            "https://x.com/a?config=Ab3d%2BGhIj%2FKlMnOp%3D",
            "https://x.com/a?XSignature=Ab3d%2BGhIj%2FKlMnOp%3D",
            "https://x.com/a?Y-Amz-Signature=Ab3d%2BGhIj%2FKlMnOp%3D",
            "https://x.com/a?X--Signature=Ab3d%2BGhIj%2FKlMnOp%3D",
            "https://x.com/a?signature=Ab3d%2BGhIj%2FKlMnOp%3D",
            // A key no key's shape, or no query's.
            "https://x.com/a?key=uploads/2026/report.pdf&key=ArrowDown monkey=Zq8vN3kP1xR7Lm3Q",
            "https://x.com/a?hotkey=Zq8vN3kP1xR7Lm3Q key=Zq8vN3kP1xR7Lm3Q",
        ] {
            assert_eq!(mask(&Masker::default(), text), text);
        }
    }

    /// A key one space after its name, no sign between (`api key V`, `private key 0x…`,
    /// `secret V`), when no word looks like it: hexadecimal of 32 digits or more, or 16
    /// characters or more with capitals, lower-case letters and digits.
    #[test]
    fn a_key_one_space_after_its_name() {
        let hex = "9f86d081884c7d659a2feaa0c55ad015";
        for (text, want) in [
            (format!("dd api key {hex}"), "dd api key [secret:keyed]"),
            (
                format!("wallet private key 0x{hex}{hex}."),
                "wallet private key [secret:keyed].",
            ),
            (
                format!("the secret {hex} here"),
                "the secret [secret:keyed] here",
            ),
            (
                "client_secret Xy7kP2qRs9TuVw3X, then".into(),
                "client_secret [secret:keyed], then",
            ),
            ("API Key AbCdEf0123456789".into(), "API Key [secret:keyed]"),
            (
                format!("my api key \"{hex}\" and the secret 'Zk4f2a9c1e7b3d5f8a0c2e4b6dQ'"),
                "my api key \"[secret:keyed]\" and the secret '[secret:keyed]'",
            ),
            (
                "OTP secret JBSWY3DPEHPK3PXP, 2FA secret key JBSWY3DPEHPK3PXTJBSWY3DP".into(),
                "OTP secret [secret:keyed], 2FA secret key [secret:keyed]",
            ),
            (
                "my passphrase Pp9Phrase7w; the Passphrase \"correct horse battery\"".into(),
                "my passphrase [secret:keyed]; the Passphrase \"[secret:keyed]\"",
            ),
            (
                "my seed phrase 'abandon ability able about'".into(),
                "my seed phrase '[secret:keyed]'",
            ),
        ] {
            assert_eq!(mask(&Masker::default(), &text), want);
        }
        for text in [
            // Prose: not a key's shape, or a name no credential's.
            "the api key is stored in the keychain; the private key file",
            "the secret sauce, a secret db-credentials-v2 and secret MY_TOKEN_2",
            "monkey 9f86d081884c7d659a2feaa0c55ad015 and the key 9f86d081884c7d659a2feaa0c55ad015",
            "api key\t9f86d081884c7d659a2feaa0c55ad015 and api key 9f86d081884c7d659a2feaa0c55ad01",
            "api key ${API_KEY} and api key \"$KEY\"",
            "the api key \"from the vault\" and the secret 'handshake' or \"9f86d081\"",
            // Not base32 of a whole number of bytes, no digit, prose after a passphrase.
            "the secret JBSWY3DPEHPK3PXPA and the secret CONFIGURATIONSXYZ",
            "the passphrase prompt, a passphrase $PASSPHRASE and the phrase \"hello world\"",
            "in that case \"Zk4f2a9c1e7b3d5f8a0c2e4b6dQ\", a database Pp9Phrase7w",
        ] {
            assert_eq!(mask(&Masker::default(), text), text);
        }
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
            m.mask(win, &mut p, &Also::default(), |_, _| {}),
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
