//! The session stores on this machine: Pi's sessions directory ([`super::sessions_dir`]) and
//! oh-my-pi's (`~/.omp/agent/sessions`, and `~/.omp/profiles/<name>/agent/sessions` for each
//! named profile), chosen with `--store pi|omp|all`.

use super::location::sessions_dir_with;
use clap::ValueEnum;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Which stores to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Store {
    /// Pi's sessions directory.
    Pi,
    /// oh-my-pi's: its agent's and each profile's.
    Omp,
    /// Both, those that exist.
    All,
}

/// A store's sessions directory, and what says it is there (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreDir {
    pub path: PathBuf,
    /// `pi (from HOME)`, `omp`, `omp profile work`, ...
    pub what: String,
}

/// The sessions directories of `store`, from the variables `var` looks up, in that order (Pi's
/// first, then oh-my-pi's agent, then its profiles by name). With [`Store::All`] only those
/// that are directories; otherwise every one asked for, so that a missing one can be reported.
/// `Err` when not even one can be named (no HOME, for instance).
pub fn store_dirs(
    store: Store,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<StoreDir>, String> {
    let mut dirs = Vec::new();
    let mut why_none = Vec::new();
    if matches!(store, Store::Pi | Store::All) {
        match sessions_dir_with(&var) {
            Ok(d) => dirs.push(StoreDir {
                path: d.path,
                what: format!("pi (from {})", d.from),
            }),
            Err(e) => why_none.push(e),
        }
    }
    if matches!(store, Store::Omp | Store::All) {
        match var("HOME").filter(|h| !h.is_empty()) {
            Some(home) => dirs.extend(omp_dirs(&PathBuf::from(home).join(".omp"))),
            None => why_none.push("cannot find oh-my-pi's sessions: HOME is not set".into()),
        }
    }
    if store == Store::All {
        dirs.retain(|d| d.path.is_dir());
    }
    if dirs.is_empty() && !why_none.is_empty() {
        return Err(why_none.join("; "));
    }
    Ok(dirs)
}

/// oh-my-pi's sessions directories under its config root `omp` (`~/.omp`): the agent's, then
/// each named profile's, by name. The agent's is left out when it is missing and a profile's
/// is there: oh-my-pi's store is then the profiles' (nothing to report missing).
fn omp_dirs(omp: &Path) -> Vec<StoreDir> {
    let mut dirs = vec![StoreDir {
        path: omp.join("agent").join("sessions"),
        what: "omp".into(),
    }];
    let mut profiles: Vec<OsString> = std::fs::read_dir(omp.join("profiles"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    profiles.sort();
    for name in profiles {
        let path = omp
            .join("profiles")
            .join(&name)
            .join("agent")
            .join("sessions");
        if path.is_dir() {
            dirs.push(StoreDir {
                path,
                what: format!("omp profile {}", name.to_string_lossy()),
            });
        }
    }
    if dirs.len() > 1 && !dirs[0].path.is_dir() {
        dirs.remove(0);
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn stores_are_pi_then_omp_then_its_profiles() {
        let home = std::env::temp_dir().join(format!("pi-jsonl-stores-{}", std::process::id()));
        let _ = fs::remove_dir_all(&home);
        for d in [
            ".pi/agent/sessions",
            ".omp/agent/sessions",
            ".omp/profiles/work/agent/sessions",
            ".omp/profiles/bare/agent",
        ] {
            fs::create_dir_all(home.join(d)).unwrap();
        }
        let h = home.clone();
        let env = move |k: &str| (k == "HOME").then(|| h.clone().into_os_string());
        let paths = |s| -> Vec<PathBuf> {
            store_dirs(s, &env)
                .unwrap()
                .into_iter()
                .map(|d| d.path.strip_prefix(&home).unwrap().to_path_buf())
                .collect()
        };
        let want = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(paths(Store::Pi), want(&[".pi/agent/sessions"]));
        assert_eq!(
            paths(Store::Omp),
            want(&[".omp/agent/sessions", ".omp/profiles/work/agent/sessions"])
        );
        assert_eq!(
            paths(Store::All),
            want(&[
                ".pi/agent/sessions",
                ".omp/agent/sessions",
                ".omp/profiles/work/agent/sessions"
            ])
        );
        // Only a profile's store: oh-my-pi's store is that one, the agent's is not missing.
        fs::remove_dir_all(home.join(".omp/agent")).unwrap();
        assert_eq!(
            paths(Store::Omp),
            want(&[".omp/profiles/work/agent/sessions"])
        );
        fs::remove_dir_all(home.join(".omp")).unwrap();
        // Asked for by name, a missing store is still named (to be reported); `all` skips it.
        assert_eq!(paths(Store::Omp), want(&[".omp/agent/sessions"]));
        assert_eq!(paths(Store::All), want(&[".pi/agent/sessions"]));
        assert!(store_dirs(Store::All, |_| None).is_err());
        let _ = fs::remove_dir_all(&home);
    }
}
