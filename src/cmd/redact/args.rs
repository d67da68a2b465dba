//! pi-redact's command line, the secrets it is told of (dotenv files, environment
//! variables), and the man page's prose (the prose itself is in `man/*.txt`).

use crate::cli::{Inputs, ManPage};
use clap::Parser;
use std::path::PathBuf;

pub const MAN: ManPage = ManPage {
    name: "pi-redact",
    summary:
        "write a shareable copy of Pi sessions: same tree, same numbers, none of the private text",
    description: include_str!("man/description.txt"),
    output: include_str!("man/output.txt"),
    environment: include_str!("man/environment.txt"),
    examples: &[
        (
            "pi-redact session.jsonl > shareable.jsonl",
            "Every prompt, output and path replaced; the tree and the numbers kept.",
        ),
        (
            "pi-redact --keep-text --secrets-from ~/.env session.jsonl > review.jsonl",
            "Text kept, with the values of ~/.env, credentials, e-mail addresses and paths masked.",
        ),
        (
            "pi-redact s.jsonl | pi-usage",
            "The same usage as pi-usage s.jsonl.",
        ),
    ],
};

#[derive(Parser, Debug)]
#[command(
    name = "pi-redact",
    version,
    about = "Write a shareable copy of Pi sessions: the same tree and numbers, prompts, outputs, paths and secrets replaced.",
    long_about = None
)]
pub struct Args {
    #[command(flatten)]
    pub inputs: Inputs,

    /// Keep the text, masking secrets, e-mail addresses and paths in it (instead of replacing
    /// every text by a placeholder).
    #[arg(long)]
    pub keep_text: bool,

    /// A dotenv file (`NAME=value` lines) whose values are secrets: masked wherever they occur
    /// (repeatable).
    #[arg(long = "secrets-from", value_name = "FILE")]
    pub secrets_from: Vec<PathBuf>,

    /// An environment variable whose value is a secret: masked wherever it occurs (repeatable).
    #[arg(long = "secret-env", value_name = "NAME")]
    pub secret_env: Vec<String>,

    /// Skip the residual scan (by default a line that would still hold replaced input text or
    /// a named secret is not written, and the run ends with status 2).
    #[arg(long)]
    pub no_check: bool,

    /// Move every timestamp by SHIFT: a signed whole number of seconds, or of minutes, hours
    /// or days with `m`, `h`, `d` (`--shift-time=-30d`).
    #[arg(long, value_name = "SHIFT", allow_hyphen_values = true)]
    pub shift_time: Option<String>,

    /// Rename entry ids (`00000001`, ...: consistently within each session, parent links,
    /// labels' targets and compactions' first kept entries included) and session ids.
    #[arg(long)]
    pub rename_ids: bool,

    /// Write each input to its own file under DIR instead of stdout, named and placed as Pi
    /// places sessions (`DIR/--<cwd pseudonym>--/<time>_<id>.jsonl`, from the rewritten
    /// header). An existing file is not replaced; an input with a withheld record is not written.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// At the end, say on stderr what was replaced, by category and count.
    #[arg(long)]
    pub report: bool,
}

/// The values of a dotenv text: `NAME=value` lines (`export ` allowed, `#` comments and blank
/// lines skipped, one pair of matching quotes around the value removed).
pub fn dotenv_values(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                return None;
            }
            let l = l.strip_prefix("export ").unwrap_or(l);
            let (_, v) = l.split_once('=')?;
            let v = v.trim();
            let unquoted = [('"', '"'), ('\'', '\'')]
                .iter()
                .find_map(|&(a, b)| v.strip_prefix(a).and_then(|x| x.strip_suffix(b)))
                .unwrap_or(v);
            (!unquoted.is_empty()).then(|| unquoted.to_string())
        })
        .collect()
}

impl Args {
    /// The secrets the user named: the dotenv files' values and the variables' values. A file
    /// that cannot be read, or a variable that is not set, is an error (`Err` says which): a
    /// secret the user meant to mask must not be silently left in.
    pub fn secrets(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for f in &self.secrets_from {
            let text = std::fs::read_to_string(f)
                .map_err(|e| format!("--secrets-from {}: {e}", f.display()))?;
            out.extend(dotenv_values(&text));
        }
        for name in &self.secret_env {
            match std::env::var(name) {
                Ok(v) if !v.is_empty() => out.push(v),
                _ => return Err(format!("--secret-env {name}: the variable is not set")),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_lines() {
        let text = "# c\nA=1\nexport B=\"two words\"\nC='x'\n\nD=\nnot a pair\nE = spaced \n";
        assert_eq!(dotenv_values(text), ["1", "two words", "x", "spaced"]);
    }
}
