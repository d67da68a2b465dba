//! `--out-dir DIR`: each input written to its own file under DIR, laid out as Pi lays out its
//! sessions store, from the rewritten header: `DIR/--<cwd pseudonym>--/<time>_<id>.jsonl`. So a
//! redacted store decodes as the original did, and no name keeps the original's text.
//! A file is written whole or not at all: into a temporary file, moved in place at the end,
//! removed when the residual scan withheld a record. An existing file is never replaced.

use crate::json::{self, Raw};
use std::path::{Path, PathBuf};

/// Pi's folder name for a working directory: `--` + the path without its leading separator,
/// separators and `:` turned into `-`, + `--`.
pub fn folder_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// Where an input's redacted sessions go, from its first rewritten header line (`None`: the
/// input had no session; `n` numbers such inputs).
pub fn target(dir: &Path, header: Option<&[u8]>, n: u64) -> PathBuf {
    let fields = header
        .and_then(|h| json::validate(h).ok())
        .map(|raw: Raw<'_>| {
            let s = |k| raw.get(k).and_then(Raw::as_str).map(|v| v.into_owned());
            (s("cwd"), s("timestamp"), s("id"))
        });
    let safe = |s: &str| {
        s.chars()
            .map(|c| {
                if c == '/' || c == '\\' || c.is_control() {
                    '-'
                } else {
                    c
                }
            })
            .collect::<String>()
    };
    match fields {
        Some((cwd, Some(time), Some(id))) => {
            let name = format!(
                "{}_{}.jsonl",
                safe(&time.replace([':', '.'], "-")),
                safe(&id)
            );
            match cwd {
                Some(c) => dir.join(safe(&folder_name(&c))).join(name),
                None => dir.join(name),
            }
        }
        _ => dir.join(format!("not-a-session-{n}.jsonl")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laid_out_as_pi_lays_out_its_store() {
        assert_eq!(folder_name("/home/user1/dir1"), "--home-user1-dir1--");
        let h = br#"{"type":"session","version":3,"id":"abc","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/user1/dir1"}"#;
        assert_eq!(
            target(Path::new("out"), Some(h), 1),
            Path::new("out/--home-user1-dir1--/2026-06-01T10-00-00-000Z_abc.jsonl")
        );
        assert_eq!(
            target(Path::new("out"), None, 2),
            Path::new("out/not-a-session-2.jsonl")
        );
        let odd = br#"{"type":"session","id":"../x","timestamp":"t"}"#;
        assert_eq!(
            target(Path::new("out"), Some(odd), 3),
            Path::new("out/t_..-x.jsonl")
        );
    }
}
