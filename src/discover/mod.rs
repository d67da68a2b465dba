//! Finding session files: where Pi keeps them, a walk of the tree, and what each file is.
//!
//! pi-sessions prints what this module finds; every other tool reads the same files when it is
//! given no FILE and its stdin is a terminal ([`default_sources`], called from
//! [`crate::cli::Inputs::sources`]).
//!
//! - [`location`]: [`sessions_dir`] is `PI_CODING_AGENT_SESSION_DIR`, else
//!   `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`; [`agent_dir`] likewise.
//! - [`walk`](mod@walk): every file with a wanted extension below the roots (walkdir), each
//!   placed in Pi's layout by [`layout`] ([`Found`]).
//! - [`project`]: the project path a `--<encoded cwd>--` folder name stands for.
//! - [`probe`](mod@probe): the first record only, to tell files that are not sessions from the
//!   others without reading everything.
//! - [`describe`](mod@describe) with `meter`: one streaming pass over a file with the reader,
//!   counting what a `session_file` record needs.
//! - [`progress`]: the progress line on stderr.
//! - [`stat`](mod@stat): files looked up thousands at a time, each relative to its folder.
//! - [`stores`]: Pi's sessions directory and oh-my-pi's (`--store pi|omp|all`).
//! - [`defaults`]: every tool's default input, and the session files under a directory
//!   given as FILE.

pub mod defaults;
pub mod describe;
pub mod layout;
pub mod location;
mod meter;
pub mod probe;
pub mod progress;
pub mod project;
pub mod stat;
pub mod stores;
pub mod walk;

pub use defaults::{
    default_sources, expand_directories, map_in_order, map_in_parts, report_problems,
    session_sources, stat_files, stdin_is_terminal, take_input_metadata, Known, KnownFiles,
    SessionSources, ASSUME_TTY_VAR,
};
pub use describe::{
    describe, describe_bytes, FileMeta, FileReport, FileStatus, SessionCounts, WrittenParts,
};
pub use layout::{Found, Role};
pub use location::{agent_dir, agent_dir_with, sessions_dir, sessions_dir_with, SessionsDir};
pub use probe::{probe, probe_file, probe_nonempty, Probe};
pub use progress::Progress;
pub use project::{decode_project, ProjectCache, ProjectSource};
pub use stat::{Stat, Stats};
pub use stores::{store_dirs, Store, StoreDir};
pub use walk::{walk, Walk};

use crate::time;
use std::borrow::Cow;
use std::path::Path;

/// A timestamp or a `--since`/`--until` bound by pi-sessions' rule: [`time::parse`] of the
/// trimmed text, refusing `24:00` and expanded years (the rule pi-sessions had before the
/// parsers were merged into [`time`]). Milliseconds since the epoch, and whether only a date
/// was given.
pub(crate) fn parse_iso(s: &str) -> Option<(i64, bool)> {
    time::parse(s.trim())
        .filter(|t| !(t.end_of_day || t.expanded_year))
        .map(|t| (t.ms, t.date_only))
}

/// [`parse_iso`] without the date-only flag.
pub(crate) fn parse_iso_ms(s: &str) -> Option<i64> {
    parse_iso(s).map(|(t, _)| t)
}

/// A name for stderr and records.
pub(crate) fn display(p: &Path) -> Cow<'_, str> {
    p.to_string_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips_and_rejects_nonsense() {
        for s in [
            "2026-04-21T08:59:18.596Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            assert_eq!(time::format_iso8601(parse_iso_ms(s).unwrap()), s);
        }
        assert_eq!(parse_iso("2026-01-02"), Some((1_767_312_000_000, true)));
        assert_eq!(
            parse_iso_ms("2026-01-02T03:04:05+02:00"),
            parse_iso_ms("2026-01-02T01:04:05Z")
        );
        assert_eq!(
            parse_iso_ms("2026-01-02 03:04"),
            parse_iso_ms("2026-01-02T03:04:00.000Z")
        );
        assert_eq!(
            parse_iso_ms("2026-01-02T03:04:05.1234567Z"),
            parse_iso_ms("2026-01-02T03:04:05.123Z")
        );
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30",
            "2026-01-02T25:00",
            "2026-01-02T03:04:05Zjunk",
            "yesterday",
            "2026-1-2",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
        // pi-sessions' own rule on top of time::parse: padded text is trimmed, a leap second
        // is read; 24:00 and expanded years are refused.
        assert_eq!(parse_iso(" 2026-01-02 "), Some((1_767_312_000_000, true)));
        assert_eq!(
            parse_iso_ms("2016-12-31T23:59:60Z"),
            parse_iso_ms("2017-01-01T00:00:00Z")
        );
        for bad in ["2026-01-02T24:00:00Z", "+002026-01-02"] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
