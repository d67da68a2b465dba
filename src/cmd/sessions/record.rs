//! The `session_file` record: one per file, as docs/FORMAT.md describes it.

use crate::discover::{FileMeta, WrittenParts};
use crate::output::Obj;
use crate::record::Record;

/// What pi-sessions says about one file.
pub struct SessionFile<'a> {
    pub file: &'a FileMeta<'a>,
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
        r.str("path", &path);
        part(r, m, 0);
        r.opt_str("parent_file", parent.as_deref())
            .str("role", m.found.role.name());
        part(r, m, 1);
        r.opt_str("project", m.project.as_deref())
            .opt_str("project_source", m.project_source.map(|s| s.name()));
        part(r, m, 2);
        if let Some(n) = self.prompt_chars {
            let p = m
                .first_prompt
                .as_deref()
                .map(|t| crate::message::truncate_chars(t, n));
            r.opt_str("first_prompt", p.as_deref());
        }
    }
}

/// The members of `m`'s record that come from its file's content, written: the three runs
/// between those that come from where the file was found (path, parent file and role; project),
/// for a cache to keep and a later run to write as they are ([`part`]).
pub fn written_parts(m: &FileMeta<'_>) -> WrittenParts<'static> {
    let mut bytes = Vec::new();
    let mut ends = [0; 2];
    for (i, end) in ends.iter_mut().enumerate() {
        write_part(&mut Obj::continued(&mut bytes), m, i);
        *end = bytes.len();
    }
    write_part(&mut Obj::continued(&mut bytes), m, 2);
    WrittenParts {
        bytes: bytes.into(),
        ends,
    }
}

/// Part `i` of the members that come from the content: as `m.written` holds it, else written.
fn part(r: &mut Obj<'_>, m: &FileMeta<'_>, i: usize) {
    match &m.written {
        Some(w) => {
            r.members(w.part(i));
        }
        None => write_part(r, m, i),
    }
}

/// Writes part `i` (0, 1 or 2) of the members that come from `m`'s content.
fn write_part(r: &mut Obj<'_>, m: &FileMeta<'_>, i: usize) {
    let c = m.counts.as_ref();
    match i {
        0 => {
            r.opt_str("session", m.session.as_deref())
                .opt_u64("version", m.version)
                .str("status", m.status.name())
                .opt_str("reason", m.reason.as_deref());
        }
        1 => {
            r.opt_str("cwd", m.cwd.as_deref());
        }
        _ => {
            r.opt_str("name", m.name.as_deref())
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
                r.strs("models", m.models.iter().map(|m| m.as_ref()));
            } else {
                r.null("models");
            }
            r.u64("bad_lines", m.bad_lines);
        }
    }
}

/// A path as text: `to_str` first, which checks a valid path faster than `to_string_lossy`
/// walks it.
fn text(p: &std::path::Path) -> std::borrow::Cow<'_, str> {
    p.to_str().map_or_else(|| p.to_string_lossy(), Into::into)
}
