//! Where Pi keeps its files: the agent directory and the sessions directory, found from the
//! environment as Pi finds them.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The sessions directory and the variable it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionsDir {
    pub path: PathBuf,
    /// `PI_CODING_AGENT_SESSION_DIR`, `PI_CODING_AGENT_DIR` or `HOME`.
    pub from: &'static str,
}

/// The sessions directory, as Pi finds it, from the process environment.
pub fn sessions_dir() -> Result<SessionsDir, String> {
    sessions_dir_with(|k| std::env::var_os(k))
}

/// The sessions directory from the variables `var` looks up. An empty variable counts as
/// unset (as in Pi); a leading `~/` is expanded with `HOME`.
pub fn sessions_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Result<SessionsDir, String> {
    if let Some(v) = set_var(&var, "PI_CODING_AGENT_SESSION_DIR") {
        return Ok(SessionsDir {
            path: expand_home(&var, v),
            from: "PI_CODING_AGENT_SESSION_DIR",
        });
    }
    match agent_dir_with(&var) {
        Some((dir, from)) => Ok(SessionsDir {
            path: dir.join("sessions"),
            from,
        }),
        None => Err(
            "cannot find the sessions directory: none of PI_CODING_AGENT_SESSION_DIR, PI_CODING_AGENT_DIR and HOME is set"
                .into(),
        ),
    }
}

/// Pi's agent directory (where it keeps `models.json` and, by default, `sessions/`), from the
/// process environment; see [`agent_dir_with`].
pub fn agent_dir() -> Option<PathBuf> {
    agent_dir_with(|k| std::env::var_os(k)).map(|(p, _)| p)
}

/// Pi's agent directory and the variable it came from: `PI_CODING_AGENT_DIR` (a leading `~/`
/// expanded with `HOME`), else `~/.pi/agent`; `None` when neither is set. An empty variable
/// counts as unset, as in Pi.
pub fn agent_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Option<(PathBuf, &'static str)> {
    if let Some(v) = set_var(&var, "PI_CODING_AGENT_DIR") {
        return Some((expand_home(&var, v), "PI_CODING_AGENT_DIR"));
    }
    let home = set_var(&var, "HOME")?;
    Some((PathBuf::from(home).join(".pi").join("agent"), "HOME"))
}

fn set_var(var: impl Fn(&str) -> Option<OsString>, k: &str) -> Option<OsString> {
    var(k).filter(|v| !v.is_empty())
}

/// `~` or a leading `~/` replaced by `HOME` (when it is set).
fn expand_home(var: impl Fn(&str) -> Option<OsString>, v: OsString) -> PathBuf {
    let b = v.as_bytes();
    match set_var(var, "HOME") {
        Some(h) if b == b"~" => PathBuf::from(h),
        Some(h) if b.starts_with(b"~/") => PathBuf::from(h).join(OsStr::from_bytes(&b[2..])),
        _ => PathBuf::from(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_dir_follows_pi_precedence() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let d = sessions_dir_with(env(&[
            ("HOME", "/h"),
            ("PI_CODING_AGENT_DIR", "/a"),
            ("PI_CODING_AGENT_SESSION_DIR", "/s"),
        ]))
        .unwrap();
        assert_eq!(d.path, PathBuf::from("/s"));
        let d = sessions_dir_with(env(&[
            ("HOME", "/h"),
            ("PI_CODING_AGENT_DIR", "~/x"),
            ("PI_CODING_AGENT_SESSION_DIR", ""),
        ]))
        .unwrap();
        assert_eq!(
            (d.path, d.from),
            (PathBuf::from("/h/x/sessions"), "PI_CODING_AGENT_DIR")
        );
        let d = sessions_dir_with(env(&[("HOME", "/h")])).unwrap();
        assert_eq!(d.path, PathBuf::from("/h/.pi/agent/sessions"));
        assert!(sessions_dir_with(env(&[])).is_err());
        // The agent directory alone (where models.json is), by the same rules.
        assert_eq!(
            agent_dir_with(env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "~")])),
            Some((PathBuf::from("/h"), "PI_CODING_AGENT_DIR"))
        );
        assert_eq!(
            agent_dir_with(env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "")])),
            Some((PathBuf::from("/h/.pi/agent"), "HOME"))
        );
        assert_eq!(
            agent_dir_with(env(&[("PI_CODING_AGENT_DIR", "~/x")])),
            Some((PathBuf::from("~/x"), "PI_CODING_AGENT_DIR"))
        );
        assert_eq!(agent_dir_with(env(&[("HOME", "")])), None);
    }
}
