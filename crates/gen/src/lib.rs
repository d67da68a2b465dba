//! A deterministic generator of realistic Pi sessions, for benchmarks and tests.
//!
//! Not part of the tools: its `pi-jsonl-gen` binary writes benchmark data with it, and the
//! scanner-equivalence test uses it to make lines to compare. The same seed gives the same
//! bytes on every machine (a xorshift generator, no platform randomness).
//!
//! What it writes follows Pi's session format: a header, then `message` entries (user text
//! and images, assistant turns with thinking blocks, text, tool calls, usage and cost,
//! tool results with long outputs full of quotes, backslashes, tabs, newlines and non-ASCII
//! text, user `!` commands as `bashExecution`), `model_change`, `thinking_level_change`,
//! `session_info`, `label`, `custom` entries, `compaction` entries (with `tokensBefore` and
//! `details`, sometimes after a context-overflow error), and abandoned branches (Pi's `/tree`:
//! the leaf moves back, sometimes with a `branch_summary`). Version 1 sessions are linear and
//! id-less, as Pi wrote them before the tree.

use std::io::{self, Write};

/// xorshift64*: small, fast, and the same everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Never zero; spread small seeds.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `p` (0..=1).
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    /// Log-uniform in `lo..=hi`: many small values, a few large ones (sizes of real outputs).
    pub fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((a + (b - a) * u).exp() as u64).clamp(lo, hi)
    }
}

/// The session format version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// Linear, no ids (Pi before the tree).
    V1,
    /// The tree format Pi writes today.
    V3,
}

/// How one session is shaped.
#[derive(Debug, Clone)]
pub struct Shape {
    pub version: Version,
    /// Stop after the entry that reaches this many bytes.
    pub target_bytes: u64,
    /// Chance per turn of going back in the tree (`/tree`), leaving a branch behind.
    pub branch_rate: f64,
    /// Chance per turn of an image (user paste or image read).
    pub image_rate: f64,
    /// Context tokens that trigger a compaction.
    pub compact_at: u64,
    /// Upper bound of one tool output in bytes (most are far smaller).
    pub max_output: u64,
}

impl Shape {
    pub fn v3(target_bytes: u64) -> Shape {
        Shape {
            version: Version::V3,
            target_bytes,
            branch_rate: 0.03,
            image_rate: 0.01,
            compact_at: 180_000,
            max_output: 40_000,
        }
    }
    pub fn v1(target_bytes: u64) -> Shape {
        Shape {
            version: Version::V1,
            ..Shape::v3(target_bytes)
        }
    }
}

/// What [`mixed_body`] strings together: plain letters (`n` and `u` among them, the letters
/// of escapes), multi-byte characters, and escapes of every kind, lone surrogates and
/// escaped backslashes before `n` and `u` included.
const BODY_PIECES: &[&str] = &[
    "a",
    "n",
    "u",
    " ",
    "é",
    "数",
    "😀",
    "\\n",
    "\\\\",
    "\\\"",
    "\\t",
    "\\/",
    "\\u000a",
    "\\u000A",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\ud800",
    "\\udc00",
    "\\\\n",
    "\\\\u",
    "\\u001b",
    "\\ud83d\\u000a",
];

/// A valid JSON string body (the text between the quotes) of at least `min_len` bytes,
/// made of escapes and multi-byte characters in random order: for tests of code that reads
/// string bodies by blocks of bytes, with pieces falling at every offset of a block.
pub fn mixed_body(rng: &mut Rng, min_len: usize) -> String {
    let mut body = String::new();
    while body.len() < min_len {
        let piece: &&str = rng.pick(BODY_PIECES);
        body.push_str(piece);
    }
    body
}

/// Appends `s` as a JSON string the way `JSON.stringify` writes it: `"` `\` and control
/// characters escaped, everything else (non-ASCII included) as it is.
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let b = s.as_bytes();
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&b[from..i]);
        if esc.is_empty() {
            out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
        } else {
            out.extend_from_slice(esc);
        }
        from = i + 1;
    }
    out.extend_from_slice(&b[from..]);
    out.push(b'"');
}

const WORDS: &[&str] = &[
    "the",
    "file",
    "function",
    "error",
    "test",
    "build",
    "session",
    "branch",
    "value",
    "return",
    "config",
    "module",
    "parser",
    "output",
    "input",
    "should",
    "because",
    "instead",
    "update",
    "check",
    "line",
    "compile",
    "memory",
    "faster",
    "index",
    "cache",
    "token",
    "request",
    "now",
    "let",
    "me",
    "look",
    "at",
    "this",
    "fix",
    "it",
    "works",
    "fails",
    "with",
    "and",
    "café",
    "naïve",
    "Straße",
    "résumé",
    "日本語",
    "テスト",
    "数据",
    "привет",
    "—",
    "…",
    "→",
    "✓",
    "😀",
    "🚀",
    "ünïcödé",
    "`code`",
    "\"quoted\"",
    "C:\\Users\\dev",
    "a\\b",
    "50%",
];

const CODE: &[&str] = &[
    "import { readFileSync } from \"node:fs\";",
    "export function parse(input: string): Record<string, unknown> {",
    "    const lines = input.split(\"\\n\").filter((l) => l.trim() !== \"\");",
    "\tif (err) { throw new Error(`failed: ${err.message}`); }",
    "fn main() -> Result<(), Box<dyn std::error::Error>> {",
    "    let re = Regex::new(r\"^\\s*(\\w+)\\s*=\\s*\\\"(.*)\\\"$\")?;",
    "    println!(\"{} → {}\", key, value); // naïve but fine",
    "}",
    "",
    "# Überschrift — résumé of the changes ✓",
    "def handler(event, context):\r",
    "    return {\"statusCode\": 200, \"body\": json.dumps(body)}",
    "SELECT id, name FROM users WHERE email LIKE '%@example.com';",
    "  \"dependencies\": { \"typescript\": \"^5.4.0\", \"vitest\": \"^1.6.0\" },",
    "error[E0502]: cannot borrow `*self` as mutable because it is also borrowed as immutable",
    "    at Object.<anonymous> (/home/dev/project/src/index.ts:42:17)",
    "drwxr-xr-x  5 dev dev  4096 Jan  3 12:00 node_modules",
    "日本語のコメント: この関数は入力を解析します。",
    "\u{1b}[32m✓\u{1b}[0m 128 tests passed \u{1b}[2m(1.2s)\u{1b}[0m",
    "C:\\Program Files\\nodejs\\node.exe --max-old-space-size=4096",
];

const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];

const MODELS: &[(&str, &str, &str, f64, f64)] = &[
    // provider, model, api, $/Mtok input, $/Mtok output
    (
        "anthropic",
        "claude-opus-4-5",
        "anthropic-messages",
        5.0,
        25.0,
    ),
    (
        "anthropic",
        "claude-sonnet-4-5",
        "anthropic-messages",
        3.0,
        15.0,
    ),
    ("openai", "gpt-5.1-codex", "openai-responses", 1.25, 10.0),
    (
        "google",
        "gemini-2.5-pro",
        "google-generative-ai",
        1.25,
        10.0,
    ),
];

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Writes Pi sessions.
pub struct Gen {
    pub rng: Rng,
    /// Milliseconds since the epoch of the next entry.
    clock: u64,
    scratch: String,
}

/// An ISO 8601 UTC timestamp with milliseconds, as Pi writes them.
pub fn iso(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    )
}

/// The members of an assistant message after its content: api, provider and model, the
/// `usage` of `tokens` (input, output, cacheRead, cacheWrite) with its cost at the prices of
/// model `model`, `stopReason` and `timestamp`; closes the message.
fn push_usage(l: &mut Vec<u8>, model: usize, tokens: [u64; 4], stop: &str, ms: u64) {
    let (p, m, api, pin, pout) = MODELS[model];
    let [input, output, cache_read, cache_write] = tokens;
    let c_in = input as f64 * pin / 1e6;
    let c_out = output as f64 * pout / 1e6;
    let c_cr = cache_read as f64 * pin / 10.0 / 1e6;
    let c_cw = cache_write as f64 * pin * 1.25 / 1e6;
    l.extend_from_slice(format!(
        ",\"api\":\"{api}\",\"provider\":\"{p}\",\"model\":\"{m}\",\"usage\":{{\"input\":{input},\"output\":{output},\"cacheRead\":{cache_read},\"cacheWrite\":{cache_write},\"totalTokens\":{},\"cost\":{{\"input\":{c_in:?},\"output\":{c_out:?},\"cacheRead\":{c_cr:?},\"cacheWrite\":{c_cw:?},\"total\":{:?}}}}},\"stopReason\":\"{stop}\",\"timestamp\":{ms}}}",
        input + output + cache_read + cache_write,
        c_in + c_out + c_cr + c_cw
    ).as_bytes());
}

/// The state of one session being written.
struct Tree {
    version: Version,
    next_id: u32,
    salt: u32,
    /// The current leaf's id (`None` before the first entry).
    leaf: Option<u32>,
    /// Ids on the current branch, root first (for going back and for firstKeptEntryId).
    path: Vec<u32>,
    context: u64,
    model: usize,
    written: u64,
}

impl Tree {
    fn id_text(&self, k: u32) -> String {
        // Multiplying by an odd constant is a bijection on u32: ids never repeat.
        format!("{:08x}", k.wrapping_mul(0x9E37_79B1) ^ self.salt)
    }
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        let mut rng = Rng::new(seed);
        // Somewhere in 2025-2026.
        let clock = 1_735_689_600_000 + rng.below(365 * 86_400_000);
        Gen {
            rng,
            clock,
            scratch: String::new(),
        }
    }

    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.clock += self.rng.range(lo, hi);
        self.clock
    }

    pub fn uuid(&mut self) -> String {
        let (a, b) = (self.rng.next_u64(), self.rng.next_u64());
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48) & 0x3fff,
            b & 0xffff_ffff_ffff
        )
    }

    /// Prose of about `n` bytes.
    fn prose(&mut self, n: u64) -> String {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        while (s.len() as u64) < n {
            if !s.is_empty() {
                s.push(if self.rng.chance(0.06) { '\n' } else { ' ' });
            }
            let w = WORDS[self.rng.below(WORDS.len() as u64) as usize];
            s.push_str(w);
            if self.rng.chance(0.08) {
                s.push_str(". ");
            }
        }
        let out = s.clone();
        self.scratch = s;
        out
    }

    /// Tool output of about `n` bytes: source lines, logs, listings.
    fn code(&mut self, n: u64) -> String {
        let mut s = String::with_capacity(n as usize + 64);
        let mut line = 1;
        while (s.len() as u64) < n {
            if self.rng.chance(0.3) {
                s.push_str(&format!("{line:>6}\t"));
            }
            let c = CODE[self.rng.below(CODE.len() as u64) as usize];
            s.push_str(c);
            s.push('\n');
            line += 1;
        }
        s
    }

    fn base64(&mut self, n: u64) -> String {
        let mut s = String::with_capacity(n as usize + 4);
        while (s.len() as u64) < n {
            let mut x = self.rng.next_u64();
            for _ in 0..10 {
                s.push(B64[(x & 63) as usize] as char);
                x >>= 6;
            }
        }
        while !s.len().is_multiple_of(4) {
            s.push('=');
        }
        s
    }

    /// Writes one session to `w` and returns the bytes written.
    pub fn session(&mut self, shape: &Shape, w: &mut dyn Write) -> io::Result<u64> {
        let mut t = Tree {
            version: shape.version,
            next_id: self.rng.next_u64() as u32,
            salt: self.rng.next_u64() as u32,
            leaf: None,
            path: Vec::new(),
            context: 0,
            model: self.rng.below(MODELS.len() as u64) as usize,
            written: 0,
        };
        let mut line = Vec::with_capacity(1 << 16);
        let id = self.uuid();
        let cwd = format!(
            "/home/dev/{}",
            self.rng.pick(&["pi-mono", "api-server", "données", "web"])
        );
        let ts = iso(self.tick(0, 1000));
        line.extend_from_slice(b"{\"type\":\"session\",");
        if shape.version == Version::V3 {
            line.extend_from_slice(b"\"version\":3,");
        }
        line.extend_from_slice(b"\"id\":");
        push_json_str(&mut line, &id);
        line.extend_from_slice(b",\"timestamp\":");
        push_json_str(&mut line, &ts);
        line.extend_from_slice(b",\"cwd\":");
        push_json_str(&mut line, &cwd);
        if shape.version == Version::V1 {
            let (p, m, ..) = MODELS[t.model];
            line.extend_from_slice(
                format!(",\"provider\":\"{p}\",\"modelId\":\"{m}\",\"thinkingLevel\":\"off\"")
                    .as_bytes(),
            );
        }
        line.extend_from_slice(b"}\n");
        self.flush(&mut t, &mut line, w)?;

        if shape.version == Version::V3 {
            self.model_change(&mut t, &mut line, 0, 50);
            self.flush(&mut t, &mut line, w)?;
            self.entry(&mut t, &mut line, "thinking_level_change", 0, 50, |_, l| {
                l.extend_from_slice(b",\"thinkingLevel\":\"high\"");
            });
            self.flush(&mut t, &mut line, w)?;
        }
        let mut turn = 0u64;
        while t.written < shape.target_bytes {
            turn += 1;
            self.turn(&mut t, shape, turn, &mut line, w)?;
        }
        Ok(t.written)
    }

    fn flush(&mut self, t: &mut Tree, line: &mut Vec<u8>, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(line)?;
        t.written += line.len() as u64;
        line.clear();
        Ok(())
    }

    /// Starts an entry of `kind` (id, parentId, timestamp for v3) in `line`, lets `body`
    /// add the members after those, and closes it. The entry becomes the leaf.
    fn entry(
        &mut self,
        t: &mut Tree,
        line: &mut Vec<u8>,
        kind: &str,
        dt_lo: u64,
        dt_hi: u64,
        body: impl FnOnce(&mut Gen, &mut Vec<u8>),
    ) {
        line.extend_from_slice(b"{\"type\":");
        push_json_str(line, kind);
        if t.version == Version::V3 {
            t.next_id = t.next_id.wrapping_add(1);
            let k = t.next_id;
            line.extend_from_slice(b",\"id\":");
            push_json_str(line, &t.id_text(k));
            line.extend_from_slice(b",\"parentId\":");
            match t.leaf {
                Some(p) => push_json_str(line, &t.id_text(p)),
                None => line.extend_from_slice(b"null"),
            }
            t.leaf = Some(k);
            t.path.push(k);
        }
        let ts = iso(self.tick(dt_lo, dt_hi));
        line.extend_from_slice(b",\"timestamp\":");
        push_json_str(line, &ts);
        body(self, line);
        line.extend_from_slice(b"}\n");
    }

    /// A model_change entry to the session's current model.
    fn model_change(&mut self, t: &mut Tree, line: &mut Vec<u8>, dt_lo: u64, dt_hi: u64) {
        let (p, m, ..) = MODELS[t.model];
        self.entry(t, line, "model_change", dt_lo, dt_hi, |_, l| {
            l.extend_from_slice(format!(",\"provider\":\"{p}\",\"modelId\":\"{m}\"").as_bytes());
        });
    }

    /// One user prompt and the agent's work on it, with the entries that come now and then
    /// around them. The order of the random draws is the data: keep it.
    fn turn(
        &mut self,
        t: &mut Tree,
        shape: &Shape,
        turn: u64,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let v3 = t.version == Version::V3;
        if v3 && t.path.len() > 8 && self.rng.chance(shape.branch_rate) {
            self.branch_back(t, line, w)?;
        }
        if v3 && turn % 17 == 3 {
            let name = self.prose(30);
            self.entry(t, line, "session_info", 0, 100, |_, l| {
                l.extend_from_slice(b",\"name\":");
                push_json_str(l, &name);
            });
            self.flush(t, line, w)?;
        }
        if v3 && self.rng.chance(0.03) {
            t.model = self.rng.below(MODELS.len() as u64) as usize;
            self.model_change(t, line, 100, 5000);
            self.flush(t, line, w)?;
        }
        if self.rng.chance(0.05) {
            self.user_command(t, line, w)?;
        }
        self.prompt(t, shape, line, w)?;
        self.agent_loop(t, shape, line, w)?;
        if v3 && self.rng.chance(0.04) {
            self.label(t, turn, line, w)?;
        }
        if v3 && self.rng.chance(0.05) {
            let n = self.rng.below(1000);
            self.entry(t, line, "custom", 0, 100, |_, l| {
                l.extend_from_slice(
                    format!(",\"customType\":\"agent_end\",\"data\":{{\"turns\":{n},\"ok\":true,\"tags\":[\"a\",\"b\"]}}")
                        .as_bytes(),
                );
            });
            self.flush(t, line, w)?;
        }
        Ok(())
    }

    /// Going back in the tree (Pi's `/tree`): the leaf moves up to 40 entries back, so the
    /// next entries start a new branch; half the time a branch_summary says what was left.
    fn branch_back(
        &mut self,
        t: &mut Tree,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let back = self.rng.range(1, (t.path.len() as u64 - 1).min(40)) as usize;
        let keep = t.path.len() - back;
        t.path.truncate(keep);
        t.leaf = t.path.last().copied();
        if self.rng.chance(0.5) {
            let from = t.id_text(t.leaf.unwrap_or(0));
            let summary = {
                let n = self.rng.range(200, 2000);
                self.prose(n)
            };
            let files = self.rng.chance(0.5);
            self.entry(t, line, "branch_summary", 1000, 60_000, |g, l| {
                l.extend_from_slice(b",\"fromId\":");
                push_json_str(l, &from);
                l.extend_from_slice(b",\"summary\":");
                push_json_str(l, &summary);
                if files {
                    g.details(l);
                }
            });
            self.flush(t, line, w)?;
        }
        Ok(())
    }

    /// A user `!` command (a bashExecution message) and its output.
    fn user_command(
        &mut self,
        t: &mut Tree,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let cmd = format!(
            "{} {}",
            self.rng
                .pick(&["git status", "ls -la", "cargo test", "npm run build"]),
            self.prose(10)
        );
        let out = {
            let n = self.rng.log_range(0, 20_000);
            self.code(n)
        };
        let code = if self.rng.chance(0.2) { 1 } else { 0 };
        let ms = self.clock;
        self.entry(t, line, "message", 2000, 30_000, |_, l| {
            l.extend_from_slice(b",\"message\":{\"role\":\"bashExecution\",\"command\":");
            push_json_str(l, &cmd);
            l.extend_from_slice(b",\"output\":");
            push_json_str(l, &out);
            l.extend_from_slice(
                format!(",\"exitCode\":{code},\"cancelled\":false,\"truncated\":false,\"timestamp\":{ms},\"excludeFromContext\":false}}").as_bytes(),
            );
        });
        self.flush(t, line, w)
    }

    /// The user's prompt: text, sometimes with an image.
    fn prompt(
        &mut self,
        t: &mut Tree,
        shape: &Shape,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let prompt = {
            let n = self.rng.log_range(20, 3000);
            self.prose(n)
        };
        let image = self.rng.chance(shape.image_rate);
        let img = if image {
            Some({
                let n = self.rng.log_range(8_000, 400_000);
                self.base64(n)
            })
        } else {
            None
        };
        let ms = self.clock;
        self.entry(t, line, "message", 10_000, 600_000, |_, l| {
            l.extend_from_slice(
                b",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":",
            );
            push_json_str(l, &prompt);
            l.push(b'}');
            if let Some(img) = &img {
                l.extend_from_slice(b",{\"type\":\"image\",\"data\":\"");
                l.extend_from_slice(img.as_bytes());
                l.extend_from_slice(b"\",\"mimeType\":\"image/png\"}");
            }
            l.extend_from_slice(format!("],\"timestamp\":{ms}}}").as_bytes());
        });
        self.flush(t, line, w)?;
        t.context += prompt.len() as u64 / 4 + img.as_ref().map_or(0, |_| 1500);
        Ok(())
    }

    /// The agent loop: assistant messages with tool calls and their results, the last one
    /// without calls; a compaction first whenever the context has outgrown the shape's limit.
    fn agent_loop(
        &mut self,
        t: &mut Tree,
        shape: &Shape,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let steps = self.rng.log_range(1, 12);
        for step in 0..steps {
            if t.context > shape.compact_at {
                self.compaction(t, line, w)?;
            }
            let last = step + 1 == steps;
            let calls = if last { 0 } else { self.rng.log_range(1, 3) };
            let ids: Vec<String> = (0..calls)
                .map(|_| format!("toolu_{}", &self.base64(24)[..24].replace(['+', '/'], "x")))
                .collect();
            let names: Vec<&str> = (0..calls).map(|_| *self.rng.pick(TOOLS)).collect();
            self.assistant(t, line, &ids, &names, last)?;
            self.flush(t, line, w)?;
            for (id, name) in ids.iter().zip(&names) {
                self.tool_result(t, shape, line, id, name)?;
                self.flush(t, line, w)?;
            }
        }
        Ok(())
    }

    /// A label on an entry of the current branch (now and then an empty one, which clears).
    fn label(
        &mut self,
        t: &mut Tree,
        turn: u64,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let target = t.id_text(*self.rng.pick(&t.path));
        let label = if self.rng.chance(0.8) {
            Some(format!("checkpoint-{turn}"))
        } else {
            None
        };
        self.entry(t, line, "label", 0, 100, |_, l| {
            l.extend_from_slice(b",\"targetId\":");
            push_json_str(l, &target);
            if let Some(label) = &label {
                l.extend_from_slice(b",\"label\":");
                push_json_str(l, label);
            }
        });
        self.flush(t, line, w)
    }

    fn details(&mut self, l: &mut Vec<u8>) {
        l.extend_from_slice(b",\"details\":{\"readFiles\":[");
        for i in 0..self.rng.range(0, 12) {
            if i > 0 {
                l.push(b',');
            }
            let p = format!("/home/dev/project/src/{}/mod_{i}.ts", *self.rng.pick(WORDS));
            push_json_str(l, &p);
        }
        l.extend_from_slice(b"],\"modifiedFiles\":[");
        for i in 0..self.rng.range(0, 6) {
            if i > 0 {
                l.push(b',');
            }
            let p = format!("/home/dev/project/src/lib_{i}.rs");
            push_json_str(l, &p);
        }
        l.extend_from_slice(b"]}");
    }

    fn compaction(
        &mut self,
        t: &mut Tree,
        line: &mut Vec<u8>,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let before = t.context;
        let (p, m, api, ..) = MODELS[t.model];
        if self.rng.chance(0.3) {
            // Overflow: the provider refused the request first.
            let ms = self.clock;
            self.entry(t, line, "message", 1000, 5000, |_, l| {
                l.extend_from_slice(format!(
                    ",\"message\":{{\"role\":\"assistant\",\"content\":[],\"api\":\"{api}\",\"provider\":\"{p}\",\"model\":\"{m}\",\"usage\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}},\"stopReason\":\"error\",\"errorMessage\":\"prompt is too long: {} tokens > 200000 maximum\",\"timestamp\":{ms}}}",
                    before + 40_000
                ).as_bytes());
            });
            self.flush(t, line, w)?;
        }
        let summary =
            format!(
            "## Goal\n{}\n\n## Progress\n### Done\n- [x] {}\n\n## Key Decisions\n- **{}**: {}\n",
            self.prose(300),
            self.prose(200),
            self.prose(20),
            { let n = self.rng.range(500, 6000); self.prose(n) }
        );
        let kept_at = t.path.len().saturating_sub(self.rng.range(2, 10) as usize);
        let first_kept = t.path.get(kept_at).copied();
        let index = t.written / 1000;
        let v3 = t.version == Version::V3;
        let first_kept = first_kept.map(|k| t.id_text(k));
        let hook = self.rng.chance(0.1);
        self.entry(t, line, "compaction", 5000, 60_000, |g, l| {
            l.extend_from_slice(b",\"summary\":");
            push_json_str(l, &summary);
            if v3 {
                l.extend_from_slice(b",\"firstKeptEntryId\":");
                match &first_kept {
                    Some(k) => push_json_str(l, k),
                    None => l.extend_from_slice(b"null"),
                }
            } else {
                l.extend_from_slice(format!(",\"firstKeptEntryIndex\":{index}").as_bytes());
            }
            l.extend_from_slice(format!(",\"tokensBefore\":{before}").as_bytes());
            if v3 {
                g.details(l);
                l.extend_from_slice(if hook {
                    b",\"fromHook\":true"
                } else {
                    b",\"fromHook\":false"
                });
            }
        });
        self.flush(t, line, w)?;
        t.context = before / 8;
        Ok(())
    }

    /// An assistant message: thinking and text now and then, the tool calls `ids`/`names`,
    /// and usage with its cost at the model's prices.
    fn assistant(
        &mut self,
        t: &mut Tree,
        line: &mut Vec<u8>,
        ids: &[String],
        names: &[&str],
        last: bool,
    ) -> io::Result<()> {
        let thinking = self.rng.chance(0.6).then(|| {
            let n = self.rng.log_range(50, 4000);
            self.prose(n)
        });
        let sig = thinking.as_ref().map(|_| {
            let n = self.rng.range(300, 1500);
            self.base64(n)
        });
        let text = (last || self.rng.chance(0.5)).then(|| {
            let n = self.rng.log_range(20, 5000);
            self.prose(n)
        });
        let args: Vec<Vec<u8>> = names.iter().map(|name| self.tool_arguments(name)).collect();
        let input = self.rng.range(1, 30);
        let output = self.rng.log_range(5, 8000);
        let cache_read = t.context;
        let cache_write = self.rng.log_range(0, 5_000);
        let stop = if !ids.is_empty() {
            "toolUse"
        } else if self.rng.chance(0.02) {
            "length"
        } else if self.rng.chance(0.02) {
            "aborted"
        } else {
            "stop"
        };
        let ms = self.clock;
        let model = t.model;
        self.entry(t, line, "message", 2000, 90_000, |_, l| {
            l.extend_from_slice(b",\"message\":{\"role\":\"assistant\",\"content\":[");
            let mut first = true;
            let mut sep = |l: &mut Vec<u8>| {
                if !std::mem::take(&mut first) {
                    l.push(b',');
                }
            };
            if let (Some(th), Some(sig)) = (&thinking, &sig) {
                sep(l);
                l.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":");
                push_json_str(l, th);
                l.extend_from_slice(b",\"thinkingSignature\":\"");
                l.extend_from_slice(sig.as_bytes());
                l.extend_from_slice(b"\"}");
            }
            if let Some(tx) = &text {
                sep(l);
                l.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                push_json_str(l, tx);
                l.push(b'}');
            }
            for ((id, name), a) in ids.iter().zip(names).zip(&args) {
                sep(l);
                l.extend_from_slice(b"{\"type\":\"toolCall\",\"id\":");
                push_json_str(l, id);
                l.extend_from_slice(b",\"name\":");
                push_json_str(l, name);
                l.extend_from_slice(b",\"arguments\":");
                l.extend_from_slice(a);
                l.push(b'}');
            }
            l.push(b']');
            push_usage(l, model, [input, output, cache_read, cache_write], stop, ms);
        });
        t.context += output / 2 + cache_write / 4;
        Ok(())
    }

    /// The `arguments` object of a call of tool `name`.
    fn tool_arguments(&mut self, name: &str) -> Vec<u8> {
        let mut a = Vec::new();
        match name {
            "bash" => {
                a.extend_from_slice(b"{\"command\":");
                let c = format!(
                    "cd /home/dev/project && {} | head -n 50",
                    self.rng.pick(&[
                        "rg -n \"fn main\" src",
                        "cargo test 2>&1",
                        "ls -la",
                        "git diff --stat"
                    ])
                );
                push_json_str(&mut a, &c);
                a.extend_from_slice(b",\"timeout\":120}");
            }
            "edit" => {
                a.extend_from_slice(b"{\"path\":\"/home/dev/project/src/main.rs\",\"oldText\":");
                let o = {
                    let n = self.rng.log_range(20, 2000);
                    self.code(n)
                };
                push_json_str(&mut a, &o);
                a.extend_from_slice(b",\"newText\":");
                let n = {
                    let n = self.rng.log_range(20, 2000);
                    self.code(n)
                };
                push_json_str(&mut a, &n);
                a.push(b'}');
            }
            "write" => {
                a.extend_from_slice(b"{\"path\":\"/home/dev/project/src/new.ts\",\"content\":");
                let c = {
                    let n = self.rng.log_range(100, 8000);
                    self.code(n)
                };
                push_json_str(&mut a, &c);
                a.push(b'}');
            }
            _ => {
                a.extend_from_slice(b"{\"path\":");
                let p = format!("/home/dev/project/src/{}.ts", *self.rng.pick(WORDS));
                push_json_str(&mut a, &p);
                a.push(b'}');
            }
        }
        a
    }

    fn tool_result(
        &mut self,
        t: &mut Tree,
        shape: &Shape,
        line: &mut Vec<u8>,
        id: &str,
        name: &str,
    ) -> io::Result<()> {
        let image = name == "read" && self.rng.chance(shape.image_rate);
        let out = if image {
            String::from("Read image file [image/png]")
        } else {
            {
                let n = self.rng.log_range(10, shape.max_output);
                self.code(n)
            }
        };
        let img = image.then(|| {
            let n = self.rng.log_range(8_000, 400_000);
            self.base64(n)
        });
        let is_error = self.rng.chance(0.05);
        let truncated = name == "bash" && out.len() > 50_000;
        let ms = self.clock;
        self.entry(t, line, "message", 50, 20_000, |_, l| {
            l.extend_from_slice(b",\"message\":{\"role\":\"toolResult\",\"toolCallId\":");
            push_json_str(l, id);
            l.extend_from_slice(b",\"toolName\":");
            push_json_str(l, name);
            l.extend_from_slice(b",\"content\":[{\"type\":\"text\",\"text\":");
            push_json_str(l, &out);
            l.push(b'}');
            if let Some(img) = &img {
                l.extend_from_slice(b",{\"type\":\"image\",\"data\":\"");
                l.extend_from_slice(img.as_bytes());
                l.extend_from_slice(b"\",\"mimeType\":\"image/png\"}");
            }
            l.push(b']');
            if truncated {
                l.extend_from_slice(b",\"details\":{\"truncation\":{\"truncated\":true,\"truncatedBy\":\"bytes\",\"totalLines\":4000,\"outputLines\":2000},\"fullOutputPath\":\"/tmp/pi-bash-1234.log\"}");
            }
            l.extend_from_slice(
                format!(",\"isError\":{is_error},\"timestamp\":{ms}}}").as_bytes(),
            );
        });
        t.context += out.len() as u64 / 12 + img.as_ref().map_or(0, |_| 1500);
        Ok(())
    }

    /// A file of many small entries (labels, custom state, short messages): what costs
    /// pi-branch the most memory per byte.
    pub fn many_entries(&mut self, entries: u64, w: &mut dyn Write) -> io::Result<u64> {
        let mut t = Tree {
            version: Version::V3,
            next_id: self.rng.next_u64() as u32,
            salt: self.rng.next_u64() as u32,
            leaf: None,
            path: Vec::new(),
            context: 0,
            model: 0,
            written: 0,
        };
        let mut line = Vec::with_capacity(1024);
        let id = self.uuid();
        let ts = iso(self.clock);
        line.extend_from_slice(
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{ts}\",\"cwd\":\"/home/dev/x\"}}\n").as_bytes(),
        );
        self.flush(&mut t, &mut line, w)?;
        for i in 0..entries {
            if t.path.len() > 8 && self.rng.chance(0.02) {
                let keep = t.path.len() - self.rng.range(1, 5) as usize;
                t.path.truncate(keep);
                t.leaf = t.path.last().copied();
            }
            if t.path.len() > 4096 {
                // Keep the path vector bounded; its contents only seed branch points.
                t.path.drain(..2048);
            }
            let ms = self.clock;
            self.entry(&mut t, &mut line, "message", 10, 1000, |_, l| {
                l.extend_from_slice(
                    format!(",\"message\":{{\"role\":\"user\",\"content\":\"ok {i}\",\"timestamp\":{ms}}}")
                        .as_bytes(),
                );
            });
            self.flush(&mut t, &mut line, w)?;
        }
        Ok(t.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes_and_valid_json() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        Gen::new(7).session(&Shape::v3(200_000), &mut a).unwrap();
        Gen::new(7).session(&Shape::v3(200_000), &mut b).unwrap();
        assert_eq!(a, b);
        let mut c = Vec::new();
        Gen::new(8).session(&Shape::v3(200_000), &mut c).unwrap();
        assert_ne!(a, c);
        for l in a.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            serde_json::from_slice::<serde::de::IgnoredAny>(l).unwrap();
        }
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_765_233_665_292), "2025-12-08T22:41:05.292Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn escapes_like_json_stringify() {
        let mut v = Vec::new();
        push_json_str(&mut v, "a\"b\\c\n\t\u{1}é");
        assert_eq!(v, "\"a\\\"b\\\\c\\n\\t\\u0001é\"".as_bytes());
    }
}
