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
        (
            "pi-sessions --paths0 | pi-redact --files0-from - --out-dir shared/",
            "Every session, each to its own file under shared/, in one run: a path gets the same pseudonym in all of them (xargs -0 would split a long list into runs that name paths apart).",
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

    /// A dotenv file (`NAME=value` lines, read as dotenv reads them) whose values are secrets:
    /// masked wherever they occur; a line it cannot read is an error (repeatable).
    #[arg(long = "secrets-from", value_name = "FILE")]
    pub secrets_from: Vec<PathBuf>,

    /// An environment variable whose value is a secret: masked wherever it occurs (repeatable).
    #[arg(long = "secret-env", value_name = "NAME")]
    pub secret_env: Vec<String>,

    /// With --keep-text, read each input once and write as it is read (for a stream that does
    /// not end, or in half the time): a secret or user name first revealed by a later record
    /// is then not masked in the text before it. By default the inputs are read twice, first
    /// to learn what they reveal (stdin and FIFOs kept in a temporary file to read again).
    #[arg(long)]
    pub one_pass: bool,

    /// Skip the residual scan (by default a line that would still hold replaced input text or
    /// a named secret is not written, and the run ends with status 2).
    #[arg(long)]
    pub no_check: bool,

    /// Move every timestamp by SHIFT: a signed whole number of seconds, or of minutes, hours
    /// or days with `m`, `h`, `d` (`--shift-time=-30d`). A UUIDv7 session id still holds the
    /// session's start: add --rename-ids to hide it.
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

/// The values of a dotenv text, read as the `dotenvy` crate reads a `.env` file (the values a
/// program loading it gets; the process environment is not changed): `NAME=value` lines,
/// `export ` allowed, blanks around `=`, `#` comments on their own line or after a value,
/// single quotes taken literally, double quotes with `\n`, `\"`, `\$` escapes and spanning
/// several lines, `${NAME}` substituted. Empty values are left out. A value of several lines
/// gives each of its lines too (trimmed; a text may show a part of it). `Err`: the first line
/// that cannot be read (counted from 1; a quote never closed is reported at its line), and why.
pub fn dotenv_values(text: &str) -> Result<Vec<String>, (usize, &'static str)> {
    let mut out = Vec::new();
    for pair in dotenvy::from_read_iter(text.as_bytes()) {
        match pair {
            Ok((_, v)) if v.is_empty() => {}
            Ok((_, v)) => {
                if v.contains('\n') {
                    out.extend(
                        v.lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty())
                            .map(String::from),
                    );
                }
                out.push(v);
            }
            Err(e) => {
                // dotenvy tells the text it could not read (the line, its value, or from an
                // unclosed quote to the end), not where: its first place in the file says.
                let (at, why) = match &e {
                    dotenvy::Error::LineParse(what, _) => (
                        text.find(what.as_str()).filter(|_| !what.is_empty()),
                        "no NAME=value pair as dotenv reads one (an unclosed quote, a blank or an unknown escape in a value?): its secret would not be masked",
                    ),
                    _ => (None, "not a dotenv text"),
                };
                let line = at.map_or(1, |at| text[..at].matches('\n').count() + 1);
                return Err((line, why));
            }
        }
    }
    Ok(out)
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
            let values = dotenv_values(&text)
                .map_err(|(line, why)| format!("{}:{line}: --secrets-from: {why}", f.display()))?;
            out.extend(values);
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

    /// The forms read before dotenvy read the files (a line that is no pair is now an error,
    /// [`dotenv_errors_say_where`]).
    #[test]
    fn dotenv_lines() {
        let text = "# c\nA=1\nexport B=\"two words\"\nC='x'\n\nD=\nE = spaced \n";
        assert_eq!(
            dotenv_values(text).unwrap(),
            ["1", "two words", "x", "spaced"]
        );
    }

    /// Comments after values, quotes of either kind, escapes, `export` with blanks, `${NAME}`,
    /// and values of several lines (each line a value too), as dotenv reads them.
    #[test]
    fn dotenv_comments_quotes_and_lines() {
        let text = concat!(
            "A=\"quoted-Val-111\" # prod key\n",
            "B=unquoted-Val-222 # prod key\n",
            "C='single-Val-333' # c\n",
            "export  D = spaced-Val-444\n",
            "E=\"esc-\\$Val-555\"\n",
            "F=${A}-ref-666\n",
            "ML=\"Zebra-first-line-77\n  Zebra-second-line-88\"\n",
            "NL=\"one-55\\ntwo-66\"\n",
            "S='lit\\n$x'\n",
        );
        assert_eq!(
            dotenv_values(text).unwrap(),
            [
                "quoted-Val-111",
                "unquoted-Val-222",
                "single-Val-333",
                "spaced-Val-444",
                "esc-$Val-555",
                "quoted-Val-111-ref-666",
                "Zebra-first-line-77",
                "Zebra-second-line-88",
                "Zebra-first-line-77\n  Zebra-second-line-88",
                "one-55",
                "two-66",
                "one-55\ntwo-66",
                "lit\\n$x",
            ]
        );
    }

    /// A text dotenv cannot read is an error at its line, never skipped: a secret of it would
    /// not be masked.
    #[test]
    fn dotenv_errors_say_where() {
        for (text, line) in [
            ("A=1\nnot a pair\nB=2\n", 2),
            ("A=1\n\nB=two words\n", 3),
            ("A=1\nB=\"never closed\nC=3\n", 2),
            ("A=1\nB='never closed\n", 2),
            ("A=\"bad \\q escape\"\n", 1),
        ] {
            assert_eq!(dotenv_values(text).map_err(|e| e.0), Err(line), "{text:?}");
        }
    }
}
