//! The records pi-branch writes, `branch_info` (`--info`) and `leaf` (`--leaves`): each a
//! typed [`Record`] with the fields docs/FORMAT.md lists for it.

use crate::diag::Counts;
use crate::output::Obj;
use crate::record::Record;
use std::borrow::Cow;

/// `branch_info`: what pi-branch kept of one session and what it left out.
pub struct BranchInfo<'a> {
    pub session: &'a str,
    pub file: &'a str,
    pub version: u64,
    /// The leaf's id; `None` for a v1 session or when no leaf was found.
    pub leaf: Option<Cow<'a, str>>,
    pub leaf_line: Option<u64>,
    pub entries: u64,
    pub kept: u64,
    pub omitted: u64,
    pub leaves: u64,
    /// Diagnostics reported while reading the session, by kind.
    pub diagnostics: Counts,
}

impl Record for BranchInfo<'_> {
    const TYPE: &'static str = "branch_info";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "version",
        "leaf",
        "leaf_line",
        "entries",
        "kept",
        "omitted",
        "leaves",
        "diagnostics",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        o.opt_str("session", crate::reader::session_id(self.session))
            .str("file", self.file)
            .u64("version", self.version)
            .opt_str("leaf", self.leaf.as_deref())
            .opt_u64("leaf_line", self.leaf_line)
            .u64("entries", self.entries)
            .u64("kept", self.kept)
            .u64("omitted", self.omitted)
            .u64("leaves", self.leaves)
            .obj("diagnostics", |o| {
                for (k, n) in self.diagnostics.iter() {
                    o.u64(k, n);
                }
            });
    }
}

/// `leaf`: one leaf of a session's tree.
pub struct Leaf<'a> {
    pub session: &'a str,
    pub file: &'a str,
    /// Its id; `None` in a v1 session.
    pub entry: Option<Cow<'a, str>>,
    pub line: u64,
    pub entry_type: Option<Cow<'a, str>>,
    pub depth: u64,
    pub timestamp: Option<Cow<'a, str>>,
    pub label: Option<&'a str>,
    pub active: bool,
    /// `None` leaves the field out (no `--preview`); `Some(None)` writes null.
    pub preview: Option<Option<String>>,
}

impl Record for Leaf<'_> {
    const TYPE: &'static str = "leaf";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "entry",
        "line",
        "entry_type",
        "depth",
        "timestamp",
        "label",
        "active",
        "preview",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        o.opt_str("session", crate::reader::session_id(self.session))
            .str("file", self.file)
            .opt_str("entry", self.entry.as_deref())
            .u64("line", self.line)
            .opt_str("entry_type", self.entry_type.as_deref())
            .u64("depth", self.depth)
            .opt_str("timestamp", self.timestamp.as_deref())
            .opt_str("label", self.label)
            .bool("active", self.active);
        if let Some(preview) = &self.preview {
            o.opt_str("preview", preview.as_deref());
        }
    }
}
