//! pi-branch's outline, the default on a terminal (`--outline` in a pipe): the conversation
//! the active branch holds, one row per entry, root to leaf (time, line, what the entry is:
//! who said what, in a few words; the tools an assistant called), under a heading that says
//! how much of the session the branch is. Not the tree: a person at a terminal usually wants
//! the conversation Pi would resume, and `--tree` shows the shape when that is the question.
//!
//! An entry's words are those `--tree` shows ([`super::tree::describe`]), with more of what was
//! said (up to [`SAID_CHARS`] characters), on one line, control characters escaped. The table fits the width ([`crate::view::table`]): the text is cut; when that is
//! not enough, the line column is left out, then the time.

use super::entries::EntryTable;
use super::resolve::ResolvedTree;
use super::store::LineStore;
use super::tree::{describe, write_heading};
use crate::diag::Diags;
use crate::json::{self, Raw};
use crate::output::{Out, Stop};
use crate::view::{self, Align, Column, Paint, Table};

/// The most of a message's text an outline row holds (the width cuts it further).
const SAID_CHARS: usize = 300;

const COLUMNS: [Column; 3] = [
    Column::fixed("time", Align::Left).drops(1),
    Column::fixed("line", Align::Right).drops(2),
    Column::fixed("entry", Align::Left).shrinks(20),
];

pub(crate) fn draw(
    out: &mut Out,
    s: &EntryTable,
    t: &ResolvedTree,
    p: &LineStore,
    d: &mut Diags,
) -> Result<(), Stop> {
    let (width, colour) = (view::width::columns(), view::colour::enabled());
    write_heading(out, s, t, t.leaves(s).len(), width)?;
    let mut table = Table::new(&COLUMNS, true);
    let mut buf = Vec::new();
    for &i in &t.kept {
        let entry = &s.entries[i as usize];
        let (time, what) = if p.line(entry, &mut buf, d) {
            let ts = json::value_at(&buf, 0)
                .ok()
                .and_then(|e| e.get("timestamp"))
                .and_then(Raw::as_str)
                .unwrap_or_default();
            (view::clock(&ts), describe(&buf, SAID_CHARS))
        } else {
            ("-".into(), "(unreadable)".into())
        };
        let paint = paint_of(&what);
        table.row(vec![
            (time, Paint::Dim),
            (entry.line().to_string(), Paint::Dim),
            (view::one_line(&what, SAID_CHARS + 80), paint),
        ]);
    }
    out.raw(view::table_with_note(&table, width, colour).as_bytes())?;
    out.raw(b"\n")
}

/// The colour of an entry's row, from its words: the user's turns stand out, failures are
/// red, entries that are not messages are dimmed.
fn paint_of(what: &str) -> Paint {
    let failed = ["(error)", "(aborted)"].iter().any(|m| what.ends_with(m));
    match what.split([':', ' ']).next().unwrap_or_default() {
        _ if failed => Paint::Error,
        "user" => Paint::Head,
        "assistant" | "custom" | "toolResult" => Paint::Plain,
        w if w.starts_with('!') => Paint::Plain,
        _ => Paint::Dim,
    }
}
