//! The records pi-compactions writes, each a type that writes itself (docs/FORMAT.md describes
//! them field by field), and what a compaction report is made of while it waits for the
//! message that gives its `context_after`.

use super::errors::{ApiError, FailureText};
use super::reserve::ReserveSource;
use super::session::{EntryId, ModelIx};
use super::trigger::{Basis, Evidence, Trigger};
use crate::models_json::Window;
use crate::output::Obj;
use crate::record::Record;

/// The fields every pi-compactions record starts with: the session, the input and the entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct EntryPlace<'a> {
    pub session: &'a str,
    pub file: &'a str,
    pub line: u64,
    pub entry: Option<&'a str>,
    pub timestamp: Option<&'a str>,
}

impl EntryPlace<'_> {
    fn write(&self, o: &mut Obj<'_>) {
        o.opt_str("session", crate::reader::session_id(self.session))
            .str("file", self.file)
            .u64("line", self.line)
            .opt_str("entry", self.entry)
            .opt_str("timestamp", self.timestamp);
    }
}

/// The opt-in fields a run writes (`--summary`, `--files`).
#[derive(Debug, Clone, Copy)]
pub(super) struct OptIn {
    pub summary: bool,
    pub file_lists: bool,
}

/// What a compaction or branch_summary entry records of its summary and of the files.
#[derive(Debug, Default)]
pub(super) struct SummaryFacts {
    /// The summary's size in UTF-8 bytes.
    pub bytes: Option<u64>,
    /// Its text, when `--summary` asks for it.
    pub text: Option<String>,
    /// `details.readFiles` and `details.modifiedFiles`.
    pub read_files: Option<Vec<String>>,
    pub modified_files: Option<Vec<String>>,
    /// Whether an extension wrote the entry: `fromHook`, or oh-my-pi's `fromExtension`
    /// (`from_hook_key` says which was read).
    pub from_hook: Option<bool>,
    pub from_hook_key: &'static str,
    /// The summarization's `usage` (Pi 1.x), when recorded as an object.
    pub usage: Option<SummaryUsage>,
}

/// The `usage` a compaction or branch_summary entry records: each count null when absent or
/// not a count; `cost` the text of `cost.total` as written.
#[derive(Debug, Default)]
pub(super) struct SummaryUsage {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    pub total_tokens: Option<u64>,
    pub cost: Option<Vec<u8>>,
}

impl SummaryFacts {
    /// `summary_bytes`, `files`, `from_hook` and `usage`.
    fn write_counts(&self, o: &mut Obj<'_>) {
        let count = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.len() as u64);
        o.opt_u64("summary_bytes", self.bytes)
            .obj("files", |f| {
                f.opt_u64("read", count(&self.read_files))
                    .opt_u64("modified", count(&self.modified_files));
            })
            .opt_bool("from_hook", self.from_hook);
        match &self.usage {
            None => {
                o.null("usage");
            }
            Some(u) => {
                o.obj("usage", |f| {
                    f.opt_u64("input", u.input)
                        .opt_u64("output", u.output)
                        .opt_u64("cache_read", u.cache_read)
                        .opt_u64("cache_write", u.cache_write)
                        .opt_u64("total_tokens", u.total_tokens)
                        .opt_raw("cost", u.cost.as_deref());
                });
            }
        }
    }

    /// The opt-in texts: `summary`, `read_files` and `modified_files`.
    fn write_texts(&self, o: &mut Obj<'_>, opt_in: OptIn) {
        if opt_in.summary {
            o.opt_str("summary", self.text.as_deref());
        }
        if opt_in.file_lists {
            write_list(o, "read_files", self.read_files.as_deref());
            write_list(o, "modified_files", self.modified_files.as_deref());
        }
    }
}

fn write_list(o: &mut Obj<'_>, key: &str, v: Option<&[String]>) {
    match v {
        Some(v) => {
            o.strs(key, v.iter().map(String::as_str));
        }
        None => {
            o.null(key);
        }
    }
}

/// `a - b`, exact (issue 19, item 2: it was clamped to the range of i64, while pi-usage
/// --context wrote its drop exactly).
fn signed_difference(a: u128, b: u128) -> i128 {
    // Context sizes are sums of three u64 counts: below 2^66, so the difference fits.
    a as i128 - b as i128
}

/// A compaction as read, with its trigger: a `compaction_report` once `context_after` is
/// settled.
pub(super) struct CompactionFacts {
    pub line: u64,
    pub entry: Option<EntryId>,
    pub timestamp: Option<String>,
    pub tokens_before: Option<u64>,
    /// oh-my-pi's `tokensAfter` (its estimate of the context after the rewrite) and `method`.
    pub tokens_after: Option<u64>,
    pub method: Option<String>,
    /// oh-my-pi's `providerReplayThroughEntryId` as recorded, and the line of that entry.
    pub replay_through: Option<(String, Option<u64>)>,
    /// `firstKeptEntryId` and `firstKeptEntryIndex` as recorded, and the line of that entry.
    pub first_kept_entry: Option<String>,
    pub first_kept_index: Option<u64>,
    pub first_kept_line: Option<u64>,
    /// `firstKeptEntryId` is the compaction's own id: Pi 1.x's retain-none compaction.
    pub retain_none: bool,
    pub summarized: SummaryFacts,
    /// The size of its `systemMessage` as written.
    pub system_message_bytes: Option<u64>,
    pub trigger: Trigger,
    pub basis: Basis,
    pub evidence: Vec<Evidence>,
    /// The model in effect, in the session's model table.
    pub model: ModelIx,
    /// Its context window, and where that came from.
    pub window: Option<Window>,
    /// Pi's reserve used (none when the setting is invalid), and where it came from.
    pub reserve: (Option<u64>, ReserveSource),
    pub context_after: Option<u128>,
    pub context_after_line: Option<u64>,
}

/// `compaction_report`: one compaction.
pub(super) struct CompactionReport<'a> {
    pub session: &'a str,
    pub file: &'a str,
    pub facts: &'a CompactionFacts,
    /// The provider and model id in effect.
    pub model: Option<(&'a str, &'a str)>,
    pub opt_in: OptIn,
}

impl Record for CompactionReport<'_> {
    const TYPE: &'static str = "compaction_report";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "timestamp",
        "tokens_before",
        "tokens_after",
        "first_kept",
        "first_kept.entry",
        "first_kept.index",
        "first_kept.line",
        "first_kept.found",
        "retain_none",
        "method",
        "replay_through",
        "replay_through.entry",
        "replay_through.line",
        "replay_through.found",
        "summary_bytes",
        "files",
        "files.read",
        "files.modified",
        "from_hook",
        "usage",
        "usage.input",
        "usage.output",
        "usage.cache_read",
        "usage.cache_write",
        "usage.total_tokens",
        "usage.cost",
        "system_message_bytes",
        "trigger",
        "basis",
        "evidence",
        "evidence[].rule",
        "evidence[].line",
        "evidence[].entry",
        "evidence[].detail",
        "provider",
        "model",
        "configured_window",
        "configured_window_source",
        "window_catalogue",
        "reserve_tokens",
        "reserve_source",
        "context_after",
        "context_after_line",
        "inferred_drop",
        "summary",
        "read_files",
        "modified_files",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let (mut after, mut digits) = (itoa::Buffer::new(), itoa::Buffer::new());
        let r = self.facts;
        EntryPlace {
            session: self.session,
            file: self.file,
            line: r.line,
            entry: r.entry.as_ref().map(EntryId::text).as_deref(),
            timestamp: r.timestamp.as_deref(),
        }
        .write(o);
        o.opt_u64("tokens_before", r.tokens_before)
            .opt_u64("tokens_after", r.tokens_after)
            .obj("first_kept", |f| {
                f.opt_str("entry", r.first_kept_entry.as_deref())
                    .opt_u64("index", r.first_kept_index)
                    .opt_u64("line", r.first_kept_line)
                    .bool("found", r.first_kept_line.is_some());
            })
            .bool("retain_none", r.retain_none)
            .opt_str("method", r.method.as_deref());
        match &r.replay_through {
            None => o.null("replay_through"),
            Some((entry, line)) => o.obj("replay_through", |t| {
                t.str("entry", entry)
                    .opt_u64("line", *line)
                    .bool("found", line.is_some());
            }),
        };
        r.summarized.write_counts(o);
        o.opt_u64("system_message_bytes", r.system_message_bytes)
            .str("trigger", r.trigger.name())
            .str("basis", r.basis.name())
            .arr("evidence", |a| {
                for e in &r.evidence {
                    a.obj(|o| {
                        o.str("rule", e.rule)
                            .u64("line", e.line)
                            .opt_str("entry", e.entry.as_deref())
                            .str("detail", &e.detail);
                    });
                }
            });
        o.opt_str("provider", self.model.map(|m| m.0))
            .opt_str("model", self.model.map(|m| m.1))
            .opt_u64("configured_window", r.window.map(|w| w.tokens))
            .opt_str(
                "configured_window_source",
                r.window.map(|w| w.source.name()),
            )
            .opt_str(
                "window_catalogue",
                r.window.and_then(|w| w.source.catalogue()),
            )
            .opt_u64("reserve_tokens", r.reserve.0)
            .str("reserve_source", r.reserve.1.name())
            .opt_raw(
                "context_after",
                r.context_after.map(|c| after.format(c).as_bytes()),
            )
            .opt_u64("context_after_line", r.context_after_line)
            .opt_raw(
                "inferred_drop",
                match (r.tokens_before, r.context_after) {
                    (Some(b), Some(a)) => Some(digits.format(signed_difference(b.into(), a))),
                    _ => None,
                }
                .map(str::as_bytes),
            );
        r.summarized.write_texts(o, self.opt_in);
    }
}

/// `compaction_failure`: an assistant message whose error text is one of Pi's
/// compaction-failure texts.
pub(super) struct CompactionFailure<'a> {
    pub at: EntryPlace<'a>,
    pub failure: &'a FailureText,
    pub stop_reason: Option<&'a str>,
    /// The provider and model id of the message (or in effect).
    pub model: Option<(&'a str, &'a str)>,
}

impl Record for CompactionFailure<'_> {
    const TYPE: &'static str = "compaction_failure";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "timestamp",
        "trigger",
        "failure",
        "summarization",
        "error_kind",
        "http_status",
        "retry_attempt",
        "stop_reason",
        "provider",
        "model",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let f = self.failure;
        self.at.write(o);
        o.str("trigger", f.trigger.name())
            .str("failure", f.failure)
            .opt_str("summarization", f.summarization)
            .str("error_kind", f.kind.name())
            .opt_u64("http_status", f.status.map(u64::from))
            .opt_u64("retry_attempt", f.retry)
            .opt_str("stop_reason", self.stop_reason)
            .opt_str("provider", self.model.map(|m| m.0))
            .opt_str("model", self.model.map(|m| m.1));
    }
}

/// `assistant_error` (with `--errors`): an ordinary API error.
pub(super) struct AssistantError<'a> {
    pub at: EntryPlace<'a>,
    pub error: &'a ApiError,
    pub stop_reason: Option<&'a str>,
    /// The provider and model id of the message (or in effect).
    pub model: Option<(&'a str, &'a str)>,
}

impl Record for AssistantError<'_> {
    const TYPE: &'static str = "assistant_error";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "timestamp",
        "stop_reason",
        "error_kind",
        "http_status",
        "retry_attempt",
        "provider",
        "model",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        self.at.write(o);
        o.opt_str("stop_reason", self.stop_reason)
            .str("error_kind", self.error.kind.name())
            .opt_u64("http_status", self.error.status.map(u64::from))
            .opt_u64("retry_attempt", self.error.retry)
            .opt_str("provider", self.model.map(|m| m.0))
            .opt_str("model", self.model.map(|m| m.1));
    }
}

/// `branch_summary_report` (with `--branch-summaries`): one branch_summary entry.
pub(super) struct BranchSummaryReport<'a> {
    pub at: EntryPlace<'a>,
    /// Its `parentId`: the entry navigated to.
    pub target: Option<&'a str>,
    pub from_id: Option<&'a str>,
    /// Whether an entry with that id exists earlier in the session.
    pub from_found: bool,
    /// `fromId` is `"root"`: Pi 1.x left no entry (the leaf was reset).
    pub from_root: bool,
    pub summarized: &'a SummaryFacts,
    pub opt_in: OptIn,
}

impl Record for BranchSummaryReport<'_> {
    const TYPE: &'static str = "branch_summary_report";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "timestamp",
        "target",
        "from_id",
        "from_found",
        "from_root",
        "summary_bytes",
        "files",
        "files.read",
        "files.modified",
        "from_hook",
        "usage",
        "usage.input",
        "usage.output",
        "usage.cache_read",
        "usage.cache_write",
        "usage.total_tokens",
        "usage.cost",
        "summary",
        "read_files",
        "modified_files",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        self.at.write(o);
        o.opt_str("target", self.target)
            .opt_str("from_id", self.from_id)
            .bool("from_found", self.from_found)
            .bool("from_root", self.from_root);
        self.summarized.write_counts(o);
        self.summarized.write_texts(o, self.opt_in);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    /// Issue 19, item 2: a drop is exact, never clamped to the range of i64.
    fn item_2_signed_differences_are_exact() {
        assert_eq!(super::signed_difference(3, 5), -2);
        assert_eq!(
            super::signed_difference(u64::MAX.into(), 0),
            i128::from(u64::MAX)
        );
        assert_eq!(
            super::signed_difference(0, u64::MAX.into()),
            -i128::from(u64::MAX)
        );
    }
}
