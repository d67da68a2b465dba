//! The `session_file` record: one per file, as docs/FORMAT.md describes it.

use crate::discover::FileMeta;
use crate::output::Obj;
use crate::record::Record;

/// What pi-sessions says about one file.
pub struct SessionFile<'a> {
    pub file: &'a FileMeta,
    /// With `--prompts`: the first user prompt is written, cut to this many characters.
    pub prompt_chars: Option<usize>,
}

impl Record for SessionFile<'_> {
    const TYPE: &'static str = "session_file";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "path",
        "session",
        "version",
        "status",
        "reason",
        "parent_file",
        "role",
        "cwd",
        "project",
        "project_source",
        "name",
        "parent_session",
        "created",
        "modified",
        "modified_source",
        "bytes",
        "lines",
        "headers",
        "entries",
        "messages",
        "user_messages",
        "assistant_messages",
        "leaves",
        "compactions",
        "unknown_entries",
        "unknown_roles",
        "models",
        "bad_lines",
        "first_prompt",
    ];

    fn write_fields(&self, r: &mut Obj<'_>) {
        let m = self.file;
        let path = text(&m.found.path);
        let parent = m.found.parent_file.as_deref().map(text);
        let c = m.counts.as_ref();
        r.str("path", &path)
            .opt_str("session", m.session.as_deref())
            .opt_u64("version", m.version)
            .str("status", m.status.name())
            .opt_str("reason", m.reason.as_deref())
            .opt_str("parent_file", parent.as_deref())
            .str("role", m.found.role.name())
            .opt_str("cwd", m.cwd.as_deref())
            .opt_str("project", m.project.as_deref())
            .opt_str("project_source", m.project_source.map(|s| s.name()))
            .opt_str("name", m.name.as_deref())
            .opt_str("parent_session", m.parent_session.as_deref())
            .opt_str(
                "created",
                m.created.map(crate::time::format_iso8601).as_deref(),
            )
            .opt_str(
                "modified",
                m.modified.map(crate::time::format_iso8601).as_deref(),
            )
            .opt_str("modified_source", m.modified_source)
            .u64("bytes", m.bytes)
            .u64("lines", m.lines)
            .u64("headers", m.headers)
            .opt_u64("entries", c.map(|c| c.entries))
            .opt_u64("messages", c.map(|c| c.messages))
            .opt_u64("user_messages", c.map(|c| c.user_messages))
            .opt_u64("assistant_messages", c.map(|c| c.assistant_messages))
            .opt_u64("leaves", c.map(|c| c.leaves))
            .opt_u64("compactions", c.map(|c| c.compactions))
            .opt_u64("unknown_entries", c.map(|c| c.unknown_entries))
            .opt_u64("unknown_roles", c.map(|c| c.unknown_roles));
        if c.is_some() {
            r.strs("models", m.models.iter().map(String::as_str));
        } else {
            r.null("models");
        }
        r.u64("bad_lines", m.bad_lines);
        if let Some(n) = self.prompt_chars {
            let p = m
                .first_prompt
                .as_deref()
                .map(|t| crate::message::truncate_chars(t, n));
            r.opt_str("first_prompt", p.as_deref());
        }
    }
}

/// A path as text: `to_str` first, which checks a valid path faster than `to_string_lossy`
/// walks it.
fn text(p: &std::path::Path) -> std::borrow::Cow<'_, str> {
    p.to_str().map_or_else(|| p.to_string_lossy(), Into::into)
}
