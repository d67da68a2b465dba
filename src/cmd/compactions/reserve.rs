//! Pi's compaction reserve, as Pi finds it: `--reserve-tokens N` when given; else Pi's own
//! `settings.json` in its agent directory (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`, where
//! models.json is read from), read as Pi's `SettingsManager` reads it: Pi 1.6.0's
//! `compaction.modelOverrides["<provider>/<model id>"].reserveTokens` for the model in effect,
//! then `compaction.reserveTokens` (`getCompactionTokenSetting`; Pi 0.73.1 has only the
//! latter, `getCompactionReserveTokens`); else Pi's default, 16384.
//!
//! What the tool cannot know, and assumes: the settings are those of today, not of the day
//! the session was written; and a project's `.pi/settings.json` (which Pi merges over the
//! global file for sessions started in that project) is not read, since the session's
//! directory then may not be this machine's. Evidence resting on a reserve from the file
//! says so (rule `settings_assumed`).
//!
//! Only `compaction` is read from the file, and no diagnostic quotes it.

use std::collections::HashMap;
use std::path::Path;

/// Pi's default `compaction.reserveTokens`.
pub const PI_DEFAULT_RESERVE: u64 = 16384;

/// The largest settings.json read (as for models.json, 64 MiB).
const MAX_LEN: u64 = crate::models_json::MAX_LEN;

/// Where a reserve came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReserveSource {
    /// `--reserve-tokens`.
    Option,
    /// `compaction.reserveTokens` of settings.json.
    Settings,
    /// Pi 1.6.0's `compaction.modelOverrides["P/M"].reserveTokens`.
    SettingsModelOverride,
    /// Pi's default.
    Default,
}

impl ReserveSource {
    pub fn name(self) -> &'static str {
        match self {
            ReserveSource::Option => "option",
            ReserveSource::Settings => "settings",
            ReserveSource::SettingsModelOverride => "settings_model_override",
            ReserveSource::Default => "default",
        }
    }
}

/// The reserve for one compaction: none when the setting Pi would use is not a valid one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reserve {
    pub tokens: Option<u64>,
    pub source: ReserveSource,
    /// The setting it came from, for the evidence (`compaction.reserveTokens`, ...).
    pub key: Option<String>,
}

/// A `reserveTokens` as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// `null`: Pi 0.73.1 takes its default (`??`), Pi 1.6.0 refuses it.
    Null,
    /// A non-negative safe integer (Pi 1.6.0's test).
    Valid(u64),
    /// Anything else.
    Invalid,
}

/// The reserves of settings.json, or `--reserve-tokens`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reserves {
    option: Option<u64>,
    ordinary: Option<Value>,
    /// Pi 1.6.0's per-model overrides, by `provider/id`: `None` for an entry that is no
    /// object (which Pi refuses).
    per_model: HashMap<String, Option<Value>>,
}

impl Reserves {
    /// `--reserve-tokens` when given (settings.json is not read then), else the agent
    /// directory's settings.json when it exists. Every problem is reported as `tool: …`.
    pub fn load(tool: &'static str, option: Option<u64>) -> Reserves {
        if option.is_some() {
            return Reserves {
                option,
                ..Reserves::default()
            };
        }
        let Some(path) = crate::discover::agent_dir().map(|d| d.join("settings.json")) else {
            return Reserves::default();
        };
        if !path.exists() {
            return Reserves::default();
        }
        let (reserves, problems) = match read(&path) {
            Ok(text) => Reserves::parse(&text),
            Err(e) => (Reserves::default(), vec![e]),
        };
        for p in problems {
            crate::diag::report_global(tool, format!("{}: {p}", path.display()));
        }
        reserves
    }

    /// Parses the text of a settings.json as Pi does: a file that is not JSON, or not an
    /// object, is Pi's defaults (Pi reports it and goes on with `{}`). Problems are returned,
    /// naming keys only.
    fn parse(text: &[u8]) -> (Reserves, Vec<String>) {
        let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
        let mut problems = Vec::new();
        let mut r = Reserves::default();
        // Pi: an empty file is `{}`.
        if text.is_empty() {
            return (r, problems);
        }
        let v: serde_json::Value = match serde_json::from_slice(text) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!(
                    "not valid JSON ({} error at line {}, column {}); Pi then uses its default settings, reserve {PI_DEFAULT_RESERVE}",
                    format!("{:?}", e.classify()).to_lowercase(),
                    e.line(),
                    e.column()
                ));
                return (r, problems);
            }
        };
        if !v.is_object() {
            problems.push(format!(
                "not a JSON object; Pi then uses its default settings, reserve {PI_DEFAULT_RESERVE}"
            ));
            return (r, problems);
        }
        let Some(compaction) = v.get("compaction").filter(|c| c.is_object()) else {
            return (r, problems);
        };
        let value = |x: &serde_json::Value| match x {
            serde_json::Value::Null => Value::Null,
            x => match x.as_u64() {
                Some(n) if n < (1 << 53) => Value::Valid(n),
                _ => Value::Invalid,
            },
        };
        if let Some(x) = compaction.get("reserveTokens") {
            let v = value(x);
            if !matches!(v, Value::Valid(_)) {
                problems.push(
                    "compaction.reserveTokens is not a non-negative integer (Pi 1.6.0 refuses it); no reserve is known, so no threshold is inferred".into(),
                );
            }
            r.ordinary = Some(v);
        }
        if let Some(o) = compaction.get("modelOverrides").and_then(|o| o.as_object()) {
            for (key, entry) in o {
                let v = match entry {
                    serde_json::Value::Object(e) => match e.get("reserveTokens") {
                        None => continue,
                        Some(x) => Some(value(x)),
                    },
                    _ => None,
                };
                if !matches!(v, Some(Value::Valid(_))) {
                    problems.push(format!(
                        "compaction.modelOverrides[{key:?}]: reserveTokens is not a non-negative integer, or the entry no object (Pi 1.6.0 refuses it); no reserve is known for that model in Pi 1.x sessions"
                    ));
                }
                r.per_model.insert(key.clone(), v);
            }
        }
        (r, problems)
    }

    /// The reserve for a compaction with the model `model` (provider, id) in effect, in a
    /// session of Pi 1.x (`pi1`) or 0.73.1.
    pub(super) fn for_model(&self, model: Option<(&str, &str)>, pi1: bool) -> Reserve {
        let reserve = |tokens, source, key: Option<String>| Reserve {
            tokens,
            source,
            key,
        };
        if let Some(n) = self.option {
            return reserve(Some(n), ReserveSource::Option, None);
        }
        let ordinary_key = || Some("compaction.reserveTokens".to_string());
        if pi1 {
            // Pi 1.6.0 checks the ordinary setting first: an invalid one throws whatever the
            // override.
            if matches!(self.ordinary, Some(Value::Null | Value::Invalid)) {
                return reserve(None, ReserveSource::Settings, ordinary_key());
            }
            let key = model.map(|(p, m)| format!("{p}/{m}"));
            if let Some(v) = key.as_ref().and_then(|k| self.per_model.get(k)) {
                let k = key.as_deref().unwrap_or_default();
                let tokens = match v {
                    Some(Value::Valid(n)) => Some(*n),
                    _ => None,
                };
                return reserve(
                    tokens,
                    ReserveSource::SettingsModelOverride,
                    Some(format!("compaction.modelOverrides[{k:?}].reserveTokens")),
                );
            }
        }
        match self.ordinary {
            Some(Value::Valid(n)) => reserve(Some(n), ReserveSource::Settings, ordinary_key()),
            Some(Value::Invalid) => reserve(None, ReserveSource::Settings, ordinary_key()),
            // Pi 0.73.1: `reserveTokens ?? 16384` (1.6.0's refusal of null is above).
            Some(Value::Null) | None => {
                reserve(Some(PI_DEFAULT_RESERVE), ReserveSource::Default, None)
            }
        }
    }
}

/// The bytes of a regular file of at most [`MAX_LEN`] bytes.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = crate::input::open::open_regular(path)
        .map_err(|e| e.to_string())?
        .map_err(|kind| format!("{kind}, not a regular file; not read"))?;
    let mut text = Vec::new();
    file.take(MAX_LEN + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_LEN {
        return Err(format!("larger than {} MiB; not read", MAX_LEN >> 20));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str, model: (&str, &str), pi1: bool) -> (Option<u64>, &'static str) {
        let r = Reserves::parse(text.as_bytes())
            .0
            .for_model(Some(model), pi1);
        (r.tokens, r.source.name())
    }

    #[test]
    fn read_as_pi_reads_it() {
        let m = ("p", "m");
        assert_eq!(tokens("", m, true), (Some(16384), "default"));
        assert_eq!(tokens("{}", m, true), (Some(16384), "default"));
        assert_eq!(
            tokens(r#"{"compaction":5}"#, m, false),
            (Some(16384), "default")
        );
        assert_eq!(
            tokens("\u{feff}{\"compaction\":{\"reserveTokens\":0}}", m, true),
            (Some(0), "settings")
        );
        let both = r#"{"compaction":{"reserveTokens":1000,"modelOverrides":{"p/m":{"reserveTokens":2000},"p/x":{"keepRecentTokens":1}}}}"#;
        assert_eq!(
            tokens(both, m, true),
            (Some(2000), "settings_model_override")
        );
        assert_eq!(tokens(both, m, false), (Some(1000), "settings"), "0.73.1");
        assert_eq!(tokens(both, ("p", "x"), true), (Some(1000), "settings"));
        // null: 0.73.1's `??` takes the default, 1.6.0 refuses it.
        let null = r#"{"compaction":{"reserveTokens":null}}"#;
        assert_eq!(tokens(null, m, false), (Some(16384), "default"));
        assert_eq!(tokens(null, m, true), (None, "settings"));
        for bad in ["-1", "1.5", "\"50000\"", "9007199254740992"] {
            let text = format!(r#"{{"compaction":{{"reserveTokens":{bad}}}}}"#);
            let (r, problems) = Reserves::parse(text.as_bytes());
            assert_eq!(r.for_model(Some(m), true).tokens, None, "{bad}");
            assert_eq!(problems.len(), 1, "{bad}");
        }
        assert_eq!(
            tokens(
                r#"{"compaction":{"reserveTokens":9007199254740991}}"#,
                m,
                true
            ),
            (Some(9007199254740991), "settings")
        );
        let (r, problems) = Reserves::parse(br#"[1,"SECRET"]"#);
        assert_eq!(r.for_model(Some(m), true).source, ReserveSource::Default);
        assert!(!problems[0].contains("SECRET"));
        let (_, problems) = Reserves::parse(br#"{"apiKey":"SECRET" "#);
        assert!(!problems[0].contains("SECRET") && problems[0].contains("line 1"));
    }

    #[test]
    fn the_option_wins() {
        let r = Reserves {
            option: Some(7),
            ..Reserves::parse(br#"{"compaction":{"reserveTokens":1000}}"#).0
        };
        assert_eq!(r.for_model(None, true).tokens, Some(7));
        assert_eq!(r.for_model(None, true).source, ReserveSource::Option);
    }
}
