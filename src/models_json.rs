//! The configured context windows of Pi's `models.json`, for every tool that needs them
//! (pi-usage --context, pi-compactions).
//!
//! `models.json` (in `PI_CODING_AGENT_DIR`, default `~/.pi/agent`) configures providers:
//! `providers.<provider>.models[]` (custom models, each with an `id` and an optional
//! `contextWindow`, which Pi defaults to 128000) and `providers.<provider>.modelOverrides.<id>`
//! (partial overrides, among them `contextWindow`). Pi matches a model on provider and id; a
//! later `models[]` entry with the same id replaces an earlier one (custom models are upserted
//! by id), and `modelOverrides` apply last, on top of built-in and custom models alike: current
//! Pi composes a provider's models as built-in, then `models[]` upserts, then extension
//! models, then `modelOverrides` ("the topmost user-config layer", `provider-composer.ts` in
//! pi-mono's coding-agent). Older Pi (`model-registry.ts`) applied overrides to built-in models
//! only, so there a `models[]` entry won; the current rule is the one followed here.
//!
//! When models.json configures no window for a model, the window of Pi's own built-in
//! catalogue is used ([`crate::models_builtin`], generated from the pi-ai package by
//! `scripts/pi-models`), as Pi itself falls back to its built-in models.
//!
//! The file also holds API keys and headers. This module reads nothing but provider names,
//! model ids and `contextWindow` values, and its error messages never quote the file.

/// How a configured context window is found, as the man pages of the tools that read
/// models.json say it (one text, so that they cannot say different things).
macro_rules! window_rule_text {
    () => {
        concat!("Context windows come from Pi's models.json (--models FILE, else models.json in PI_CODING_AGENT_DIR, else ~/.pi/agent/models.json) and are matched on provider and model id, as current Pi resolves them: providers.P.modelOverrides.M.contextWindow when it is set (Pi applies modelOverrides last, over custom and built-in models alike); else the contextWindow of the providers.P.models[] entry with id M (the last one when the id repeats), or Pi's default 128000 when that entry has none. A model models.json does not mention has the contextWindow of Pi's built-in catalogue when it is one of the models Pi ships (from @earendil-works/pi-ai ", crate::models_builtin::pi_ai_version!(), ", or, for a model that version no longer lists, from the @mariozechner/pi-ai 0.73.1 that older sessions were written with; read by scripts/pi-models), and no window otherwise. A contextWindow that is not a positive integer is reported and ignored. A missing default models.json is not an error; an unreadable or invalid one, one that is not a regular file (a FIFO, a device) or is larger than 64 MiB, or a missing --models FILE, is reported and no windows are used. Nothing but context window sizes is ever read from models.json, which holds API keys, and no diagnostic quotes it.")
    };
}
pub(crate) use window_rule_text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest models.json read (64 MiB): a real one is a few kilobytes.
pub const MAX_LEN: u64 = 64 << 20;

/// Pi's default `contextWindow` for a custom model that does not set one.
pub const PI_DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// Where a configured context window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `providers.P.models[].contextWindow`.
    Models,
    /// A `providers.P.models[]` entry without `contextWindow`: Pi's default, 128000.
    ModelsDefault,
    /// `providers.P.modelOverrides.M.contextWindow`.
    ModelOverrides,
    /// Not in models.json: a catalogue Pi ships ([`crate::models_builtin`]), named.
    Builtin(&'static str),
}

impl WindowSource {
    pub fn name(self) -> &'static str {
        match self {
            WindowSource::Models => "models",
            WindowSource::ModelsDefault => "models_default",
            WindowSource::ModelOverrides => "model_overrides",
            WindowSource::Builtin(_) => "builtin",
        }
    }

    /// The catalogue a built-in window was read from (`@earendil-works/pi-ai 1.6.0`), `None`
    /// for a window from models.json.
    pub fn catalogue(self) -> Option<&'static str> {
        match self {
            WindowSource::Builtin(c) => Some(c),
            _ => None,
        }
    }
}

/// The current catalogue, the first the built-in windows come from, as records name it.
pub const BUILTIN_CATALOGUE: &str = concat!(
    "@earendil-works/pi-ai ",
    crate::models_builtin::pi_ai_version!()
);

/// A model's context window and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub tokens: u64,
    pub source: WindowSource,
}

/// Context windows by provider and model id.
#[derive(Debug, Default, Clone)]
pub struct Models {
    windows: HashMap<(String, String), Window>,
}

/// The default location: `$PI_CODING_AGENT_DIR/models.json`, else `~/.pi/agent/models.json`.
pub fn default_path() -> Option<PathBuf> {
    crate::discover::agent_dir().map(|d| d.join("models.json"))
}

/// The windows a tool uses: from `explicit` (its `--models FILE`), else from the default
/// models.json when that exists. Every problem is reported on stderr as `tool: …` (a bad entry
/// is left out; a file that cannot be read or parsed gives no windows at all).
pub fn load_for(tool: &'static str, explicit: Option<&Path>) -> Models {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match default_path() {
            Some(p) if p.exists() => p,
            _ => return Models::empty(),
        },
    };
    match Models::load(&path) {
        Ok((m, warnings)) => {
            for w in warnings {
                crate::diag::report_global(tool, format!("{}: {w}", path.display()));
            }
            m
        }
        Err(e) => {
            crate::diag::report_global(
                tool,
                format!("models.json: {e}; no configured context windows"),
            );
            Models::empty()
        }
    }
}

impl Models {
    /// No configured windows.
    pub fn empty() -> Models {
        Models::default()
    }

    /// Reads `path`. Problems with single entries (a `contextWindow` that is not a positive
    /// integer) are returned as warnings naming provider and model only; the entry is ignored.
    /// Only a regular file is read, and at most [`MAX_LEN`] bytes of it: a FIFO, a device
    /// or a file larger than that is refused, not waited for or held (issue 19, item 6).
    pub fn load(path: &Path) -> Result<(Models, Vec<String>), String> {
        use std::io::Read;
        let at = |e: String| format!("{}: {e}", path.display());
        let file = crate::input::open::open_regular(path)
            .map_err(|e| at(e.to_string()))?
            .map_err(|kind| at(format!("{kind}, not a regular file; not read")))?;
        let mut text = Vec::new();
        file.take(MAX_LEN + 1)
            .read_to_end(&mut text)
            .map_err(|e| at(e.to_string()))?;
        if text.len() as u64 > MAX_LEN {
            return Err(at(format!("larger than {} MiB; not read", MAX_LEN >> 20)));
        }
        Models::parse(&text).map_err(at)
    }

    /// Parses the text of a `models.json`.
    pub fn parse(text: &[u8]) -> Result<(Models, Vec<String>), String> {
        let v: serde_json::Value = serde_json::from_slice(text).map_err(|e| {
            // Only the kind of error and its place: the message could otherwise quote the file.
            format!(
                "not valid JSON ({:?} error at line {}, column {})",
                e.classify(),
                e.line(),
                e.column()
            )
            .to_lowercase()
        })?;
        let mut m = Models::default();
        let mut warnings = Vec::new();
        let Some(providers) = v.get("providers").and_then(|p| p.as_object()) else {
            return Err("no `providers` object".into());
        };
        for (provider, cfg) in providers {
            let mut custom: HashMap<&str, Window> = HashMap::new();
            if let Some(models) = cfg.get("models").and_then(|x| x.as_array()) {
                for model in models {
                    let Some(id) = model.get("id").and_then(|x| x.as_str()) else {
                        continue;
                    };
                    let w = match model.get("contextWindow") {
                        None | Some(serde_json::Value::Null) => Some(Window {
                            tokens: PI_DEFAULT_CONTEXT_WINDOW,
                            source: WindowSource::ModelsDefault,
                        }),
                        Some(x) => positive(x).map(|tokens| Window {
                            tokens,
                            source: WindowSource::Models,
                        }),
                    };
                    match w {
                        // A later entry with the same id replaces an earlier one, as in Pi.
                        Some(w) => {
                            custom.insert(id, w);
                        }
                        None => {
                            custom.remove(id);
                            warnings.push(format!(
                                "provider {provider:?} model {id:?}: contextWindow is not a positive integer; ignored"
                            ));
                        }
                    }
                }
            }
            if let Some(ov) = cfg.get("modelOverrides").and_then(|x| x.as_object()) {
                for (id, o) in ov {
                    match o.get("contextWindow") {
                        None | Some(serde_json::Value::Null) => {}
                        Some(x) => match positive(x) {
                            Some(tokens) => {
                                custom.insert(
                                    id,
                                    Window {
                                        tokens,
                                        source: WindowSource::ModelOverrides,
                                    },
                                );
                            }
                            None => warnings.push(format!(
                                "provider {provider:?} modelOverrides {id:?}: contextWindow is not a positive integer; ignored"
                            )),
                        },
                    }
                }
            }
            for (id, w) in custom {
                m.windows.insert((provider.clone(), id.to_string()), w);
            }
        }
        Ok((m, warnings))
    }

    /// The window of `model` at `provider`: the one models.json configures, else the one of
    /// Pi's built-in catalogue, else none.
    pub fn window(&self, provider: &str, model: &str) -> Option<Window> {
        self.windows
            .get(&(provider.to_string(), model.to_string()))
            .copied()
            .or_else(|| builtin_window(provider, model))
    }

    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

/// The window Pi's built-in catalogue gives `model` at `provider`.
pub fn builtin_window(provider: &str, model: &str) -> Option<Window> {
    let wanted = (provider.as_bytes(), model.as_bytes());
    let i = (catalogue::ROWS.binary_search_by(|r| r.names().cmp(&wanted))).ok()?;
    let row = &catalogue::ROWS[i];
    let name = crate::models_builtin::CATALOGUES.get(usize::from(row.catalogue))?;
    Some(Window {
        tokens: row.tokens,
        source: WindowSource::Builtin(name),
    })
}

/// Pi's built-in catalogue ([`crate::models_builtin::MODELS`]) as the binary holds it: its
/// names back to back in one array of bytes and its rows as numbers, both made at compile
/// time. A table of `&str` is a table of pointers, each one fixed up by the dynamic linker at
/// every start of a position-independent binary: the catalogue's 4,332 were two thirds of
/// every tool's relocations, and their pages copied for each process (0.1 ms of a start).
mod catalogue {
    use crate::models_builtin::MODELS;

    /// A row: its provider and model id (`provider` then `model` bytes of [`TEXT`] from
    /// `start`), the window, the catalogue.
    pub struct Row {
        start: u32,
        provider: u16,
        model: u16,
        pub tokens: u64,
        pub catalogue: u8,
    }

    impl Row {
        /// The provider and the model id, as bytes (ordered as the strings are).
        pub fn names(&self) -> (&'static [u8], &'static [u8]) {
            let start = self.start as usize;
            let model = start + usize::from(self.provider);
            (
                &TEXT[start..model],
                &TEXT[model..model + usize::from(self.model)],
            )
        }
    }

    const TEXT_LEN: usize = {
        let mut len = 0;
        let mut i = 0;
        while i < MODELS.len() {
            len += MODELS[i].0.len() + MODELS[i].1.len();
            i += 1;
        }
        len
    };

    /// Every row's provider and model id, in row order.
    static TEXT: [u8; TEXT_LEN] = {
        let mut text = [0; TEXT_LEN];
        let (mut i, mut at) = (0, 0);
        while i < MODELS.len() {
            let (p, m) = (MODELS[i].0.as_bytes(), MODELS[i].1.as_bytes());
            let mut k = 0;
            while k < p.len() + m.len() {
                text[at + k] = if k < p.len() { p[k] } else { m[k - p.len()] };
                k += 1;
            }
            at += p.len() + m.len();
            i += 1;
        }
        text
    };

    pub static ROWS: [Row; MODELS.len()] = {
        let mut rows = [const {
            Row {
                start: 0,
                provider: 0,
                model: 0,
                tokens: 0,
                catalogue: 0,
            }
        }; MODELS.len()];
        let (mut i, mut at) = (0, 0);
        while i < MODELS.len() {
            let (p, m, tokens, _, catalogue) = MODELS[i];
            assert!(p.len() <= u16::MAX as usize && m.len() <= u16::MAX as usize);
            rows[i] = Row {
                start: at as u32,
                provider: p.len() as u16,
                model: m.len() as u16,
                tokens,
                catalogue,
            };
            at += p.len() + m.len();
            i += 1;
        }
        assert!(at == TEXT_LEN && at <= u32::MAX as usize);
        rows
    };
}

fn positive(v: &serde_json::Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return (n > 0).then_some(n);
    }
    let f = v.as_f64()?;
    (f > 0.0 && f.fract() == 0.0 && f < 1e15).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_models_defaults_and_overrides() {
        let text = br#"{"providers":{
            "ollama":{"baseUrl":"http://x","apiKey":"SECRET-KEY","models":[
                {"id":"llama","contextWindow":8192},
                {"id":"qwen"},
                {"id":"dup","contextWindow":1000},
                {"id":"dup","contextWindow":2000},
                {"id":"bad","contextWindow":-5}
            ],"modelOverrides":{"qwen":{"contextWindow":32768}}},
            "anthropic":{"modelOverrides":{"claude-x":{"contextWindow":500000,"name":"n"},"claude-y":{"name":"only a name"}}}
        }}"#;
        let (m, warnings) = Models::parse(text).unwrap();
        let w = |p, id| m.window(p, id).map(|w| (w.tokens, w.source));
        assert_eq!(w("ollama", "llama"), Some((8192, WindowSource::Models)));
        assert_eq!(
            w("ollama", "qwen"),
            Some((32768, WindowSource::ModelOverrides))
        );
        assert_eq!(w("ollama", "dup"), Some((2000, WindowSource::Models)));
        assert_eq!(w("ollama", "bad"), None);
        assert_eq!(
            w("anthropic", "claude-x"),
            Some((500000, WindowSource::ModelOverrides))
        );
        assert_eq!(w("anthropic", "claude-y"), None);
        assert_eq!(w("openai", "llama"), None);
        assert_eq!(warnings.len(), 1);
        assert!(!warnings[0].contains("SECRET"));
        let (m, _) = Models::parse(br#"{"providers":{"p":{"models":[{"id":"d"}]}}}"#).unwrap();
        assert_eq!(
            m.window("p", "d").map(|w| (w.tokens, w.source)),
            Some((128_000, WindowSource::ModelsDefault))
        );
    }

    #[test]
    fn model_overrides_win_and_nothing_else_is_needed() {
        // Formerly pi-compactions' own reader, which let models[] win and gave a models[] entry
        // without contextWindow no window; current Pi applies modelOverrides last and defaults
        // contextWindow to 128000.
        let (m, _) = Models::parse(br#"{"providers":{"a":{"apiKey":"k","models":[{"id":"m","contextWindow":1000}],"modelOverrides":{"m":{"contextWindow":5},"n":{"contextWindow":7}}},"b":{"models":[{"id":"z"}]}}}"#).unwrap();
        let w = |p, id| m.window(p, id).map(|w| w.tokens);
        assert_eq!(w("a", "m"), Some(5));
        assert_eq!(w("a", "n"), Some(7));
        assert_eq!(w("b", "z"), Some(128_000));
        assert!(Models::parse(b"[1]").is_err());
        assert!(Models::parse(b"{\"providers\":3}").is_err());
    }

    /// Issue 19, item 6: a FIFO, a device or an endless file as models.json is refused
    /// at once, never waited for or read without end.
    #[test]
    fn item_6_only_a_regular_models_json_of_bounded_size_is_read() {
        for dev in ["/dev/zero", "/dev/null"] {
            let e = Models::load(Path::new(dev)).unwrap_err();
            assert_eq!(
                e,
                format!("{dev}: a character device, not a regular file; not read")
            );
        }
        let dir = std::env::temp_dir().join(format!("pi-jsonl-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("models.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = Models::load(&fifo).unwrap_err();
            assert!(e.ends_with(": a FIFO, not a regular file; not read"), "{e}");
        }
        let big = dir.join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_LEN + 1).unwrap();
        let e = Models::load(&big).unwrap_err();
        assert!(e.ends_with(": larger than 64 MiB; not read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_never_quote_the_file() {
        let e = Models::parse(br#"{"providers":{"p":{"apiKey":"sk-SECRET" "#).unwrap_err();
        assert!(!e.contains("SECRET"), "{e}");
        assert!(e.contains("line 1"), "{e}");
        assert!(Models::parse(br#"{"apiKey":"sk-SECRET"}"#)
            .unwrap_err()
            .contains("providers"));
    }
}
