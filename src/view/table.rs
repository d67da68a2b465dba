//! A table for a person, fitted to a width: comfy-table lays it out (measuring each cell as
//! shown: wide characters count two, colour codes nothing); this module decides which columns
//! are left out. Each [`Column`] says how narrow it may get and when it is dropped, so each
//! view's man page can state its order:
//!
//! 1. when the table does not fit whole, the columns blank in every row are left out first
//!    (they say nothing, so even a column with no rank goes, before any cell is cut);
//! 2. a column that may shrink does, down to its `min`, and its cells are cut (one-line rows)
//!    or wrapped (rows of several lines);
//! 3. when the columns at their narrowest are still too wide, the column with the highest
//!    `drop` rank is left out, then the next, until the rest fit; a column with no rank
//!    that holds something is never left out (a width that cannot hold those is exceeded:
//!    [`super::width::MIN`] keeps that from happening for the views here).
//!
//! Without a width (a pipe with no `COLUMNS`) nothing shrinks or drops; one-line rows keep
//! their cells' own length.

use super::colour::Paint;
use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, Row, Table as Layout, TableStyle, Width,
};

/// The blanks between two columns.
const GAP: u16 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A column: its head, alignment, narrowest width and drop rank.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub head: &'static str,
    pub align: Align,
    /// The narrowest the column gets before the table drops columns; `None`: it never shrinks
    /// (times, numbers, statuses).
    pub min: Option<u16>,
    /// When it is left out: the highest rank goes first; `None`: never.
    pub drop: Option<u8>,
}

impl Column {
    /// A column that neither shrinks nor drops.
    pub const fn fixed(head: &'static str, align: Align) -> Column {
        Column {
            head,
            align,
            min: None,
            drop: None,
        }
    }
    /// This column shrinks down to `min`.
    pub const fn shrinks(mut self, min: u16) -> Column {
        self.min = Some(min);
        self
    }
    /// The narrowest it shrinks to: its `min`, but never narrower than its head (a head is
    /// not wrapped).
    fn narrowest(&self) -> Option<u16> {
        let head = u16::try_from(self.head.chars().count()).unwrap_or(u16::MAX);
        self.min.map(|m| m.max(head))
    }
    /// This column is left out at `rank` (higher first).
    pub const fn drops(mut self, rank: u8) -> Column {
        self.drop = Some(rank);
        self
    }
}

/// A table being filled: its columns and rows of painted cells.
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<(String, Paint)>>,
    /// Rows are one line each (cells cut), not wrapped.
    one_line: bool,
}

impl Table {
    /// A table whose cells are cut to one line (`one_line`) or wrapped.
    pub fn new(columns: &[Column], one_line: bool) -> Table {
        Table {
            columns: columns.to_vec(),
            rows: Vec::new(),
            one_line,
        }
    }

    /// Adds a row; its cells must be one-line text (see [`super::one_line`]).
    pub fn row(&mut self, cells: Vec<(String, Paint)>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines ending in `\n`, at most `width` wide (`None`: no limit), in colour
    /// when `colour`; and the heads of the columns left out.
    pub fn render(&self, width: Option<usize>, colour: bool) -> (String, LeftOut) {
        let mut t = Layout::new();
        t.force_no_tty().load_style(heading_rule());
        if self.one_line {
            // A one-line cell is cut where its column ends, not at the last blank before:
            // comfy-table moves a word that does not fit to a second line, which is then
            // cut away, so a long word (a path, text without blanks, as Chinese is written)
            // would leave only the words before it. No cell holds a NUL (control characters
            // are escaped), so with NUL as the delimiter a cell is one word, split by width.
            t.set_delimiter('\0');
        }
        t.set_header(
            self.columns
                .iter()
                .map(|c| Paint::Head.apply(c.head, colour))
                .collect::<Vec<_>>(),
        );
        for cells in &self.rows {
            let mut row = Row::from(
                cells
                    .iter()
                    .map(|(text, paint)| paint.apply(text, colour))
                    .collect::<Vec<_>>(),
            );
            if self.one_line && width.is_some() {
                row.max_height(1);
            }
            t.add_row(row);
        }
        let widest: Vec<usize> = t
            .column_max_content_widths()
            .iter()
            .map(|&w| usize::from(w))
            .collect();
        let floors = self.floors(&widest);
        let empty = self.empty_columns();
        let kept = self.kept(&widest, &floors, &empty, width);
        // The last column shown has no gap after it.
        let last = (0..kept.len()).rev().find(|&i| kept[i]).unwrap_or(0);
        for (i, c) in self.columns.iter().enumerate() {
            let Some(col) = t.column_mut(i) else { continue };
            let gap = if i == last { 0 } else { GAP };
            col.set_padding((0, gap));
            col.set_cell_alignment(match c.align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
            if !kept[i] {
                col.set_constraint(ColumnConstraint::Hidden);
            } else if c.min.is_some() {
                // comfy-table's bounds include the padding.
                let floor = u16::try_from(floors[i]).unwrap_or(u16::MAX);
                col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(floor + gap)));
            } else {
                col.set_constraint(ColumnConstraint::ContentWidth);
            }
        }
        if let Some(w) = width {
            t.set_width(u16::try_from(w).unwrap_or(u16::MAX));
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let left_out = |was_empty: bool| {
            (0..self.columns.len())
                .filter(|&i| !kept[i] && empty[i] == was_empty)
                .map(|i| self.columns[i].head)
                .collect()
        };
        let left = LeftOut {
            cut: left_out(false),
            empty: left_out(true),
        };
        (out, left)
    }

    /// The columns empty (blank) in every row; none when there are no rows.
    fn empty_columns(&self) -> Vec<bool> {
        (0..self.columns.len())
            .map(|i| {
                !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| r.get(i).is_none_or(|(text, _)| text.trim().is_empty()))
            })
            .collect()
    }

    /// The narrowest each column gets, given its widest cell (head included): that width for
    /// a column that does not shrink, else its `min` (never more than its widest cell).
    fn floors(&self, widest: &[usize]) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                let w = widest.get(i).copied().unwrap_or(0);
                match self.columns[i].narrowest() {
                    Some(min) => w.min(usize::from(min)),
                    None => w,
                }
            })
            .collect()
    }

    /// Which columns are kept at `width`: when the table does not fit whole (every column
    /// at its `widest`), the columns `empty` in every row go first (whatever their rank: they
    /// say nothing, and a cell cut beside them would be a loss for nothing), then columns by
    /// rank until their `floors` and the gaps fit.
    fn kept(
        &self,
        widest: &[usize],
        floors: &[usize],
        empty: &[bool],
        width: Option<usize>,
    ) -> Vec<bool> {
        let mut kept = vec![true; self.columns.len()];
        let Some(width) = width else { return kept };
        let fits_at = |widths: &[usize], kept: &[bool]| {
            let shown = kept.iter().filter(|&&k| k).count();
            let need: usize = (0..kept.len())
                .filter(|&i| kept[i])
                .map(|i| widths[i])
                .sum();
            need + usize::from(GAP) * shown.saturating_sub(1) <= width
        };
        let fits = |kept: &[bool]| fits_at(floors, kept);
        if !fits_at(widest, &kept) {
            for (k, &e) in kept.iter_mut().zip(empty) {
                *k = !e;
            }
        }
        loop {
            if fits(&kept) {
                return kept;
            }
            let next = (0..kept.len())
                .filter(|&i| kept[i] && self.columns[i].drop.is_some())
                .max_by_key(|&i| self.columns[i].drop);
            match next {
                Some(i) => kept[i] = false,
                None => return kept,
            }
        }
    }
}

/// The columns a table left out to fit its width: `cut` by rank, `empty` for being blank in
/// every row.
#[derive(Debug, Default)]
pub struct LeftOut {
    pub cut: Vec<&'static str>,
    pub empty: Vec<&'static str>,
}

impl LeftOut {
    /// The note under a table that left columns out, if it did.
    pub fn note(&self) -> Option<String> {
        let empty = format!("{} (empty in every row)", self.empty.join(", "));
        let said = match (self.cut.is_empty(), self.empty.is_empty()) {
            (true, true) => return None,
            (false, true) => self.cut.join(", "),
            (true, false) => empty,
            (false, false) => format!("{}; {empty}", self.cut.join(", ")),
        };
        Some(format!("(left out to fit: {said})"))
    }
}

/// No borders; a rule under the heads.
fn heading_rule() -> TableStyle {
    TableStyle::new().header_separator(comfy_table::LineStyle::none().fill('─'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let cols = [
            Column::fixed("time", Align::Left),
            Column::fixed("n", Align::Right).drops(1),
            Column::fixed("text", Align::Left).shrinks(8).drops(2),
            Column::fixed("more", Align::Left).shrinks(6),
        ];
        let mut t = Table::new(&cols, true);
        t.row(vec![
            ("09:30:12".into(), Paint::Plain),
            ("1234".into(), Paint::Error),
            ("a long text that needs room".into(), Paint::Plain),
            ("another long text here".into(), Paint::Dim),
        ]);
        t
    }

    #[test]
    fn fits_by_shrinking_then_dropping_in_rank_order() {
        let t = sample();
        let (wide, left) = t.render(None, false);
        assert!(left.note().is_none());
        assert!(wide.contains("a long text that needs room"), "{wide}");
        for (width, gone) in [(60, vec![]), (30, vec!["text"]), (20, vec!["n", "text"])] {
            let (text, left) = t.render(Some(width), false);
            assert_eq!(left.cut, gone, "{text}");
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
        }
        let (coloured, _) = t.render(Some(30), true);
        assert!(coloured.contains("\u{1b}["));
        let plain: String = anstream_free(&coloured);
        assert_eq!(plain, t.render(Some(30), false).0);
    }

    /// Found on the corpus: a shrinking column narrower than its `min` (its cells empty) and
    /// a last column left out made the rule under the heads wider than the width.
    #[test]
    fn the_rule_fits_when_a_column_is_narrow_or_the_last_is_dropped() {
        let cols = [
            Column::fixed("time", Align::Left),
            Column::fixed("name", Align::Left).shrinks(8),
            Column::fixed("arguments", Align::Left).shrinks(10).drops(1),
            Column::fixed("evidence", Align::Left).shrinks(16).drops(2),
        ];
        let mut t = Table::new(&cols, true);
        t.row(vec![
            ("12:52:31".into(), Paint::Plain),
            ("mcp".into(), Paint::Plain),
            ("{\"action\": \"list\", \"more\": 1}".into(), Paint::Plain),
            (String::new(), Paint::Plain),
        ]);
        for width in [40, 44, 60] {
            let (text, _) = t.render(Some(width), false);
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{width}: {line:?}\n{text}");
            }
        }
        // At 40 the arguments would be cut: the evidence column, empty, goes first, and only
        // it. At 60 the table fits whole and keeps it.
        let (text, left) = t.render(Some(40), false);
        assert_eq!((left.cut, left.empty), (vec![], vec!["evidence"]), "{text}");
        assert!(t.render(Some(60), false).1.note().is_none());
        let mut wide = Table::new(&cols, true);
        wide.row(vec![
            ("12:52:31".into(), Paint::Plain),
            ("mcp".into(), Paint::Plain),
            ("{\"action\": \"list\", \"more\": 1}".into(), Paint::Plain),
            ("a long piece of evidence".into(), Paint::Plain),
        ]);
        let (text, left) = wide.render(Some(40), false);
        assert_eq!(left.cut, ["evidence"], "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
        assert!(text.contains("12:52:31  mcp   {\"action\""), "{text}");
    }

    /// A column blank in every row goes before any column by rank, even one that never
    /// drops, and before any cell is cut, but only when the table does not fit whole.
    #[test]
    fn columns_empty_in_every_row_go_first() {
        let cols = [
            Column::fixed("trigger", Align::Left),
            Column::fixed("basis", Align::Left).drops(1),
            Column::fixed("before", Align::Right),
            Column::fixed("evidence", Align::Left).shrinks(16).drops(2),
        ];
        let mut t = Table::new(&cols, true);
        for trigger in ["threshold", "overflow"] {
            t.row(vec![
                (trigger.into(), Paint::Plain),
                ("failed".into(), Paint::Error),
                (String::new(), Paint::Plain),
                ("overflow_recovery, context_overflow".into(), Paint::Plain),
            ]);
        }
        let (text, left) = t.render(Some(36), false);
        assert!(left.cut.is_empty(), "{text}");
        assert_eq!(left.empty, ["before"], "{text}");
        assert_eq!(
            left.note().as_deref(),
            Some("(left out to fit: before (empty in every row))")
        );
        assert!(text.contains("threshold  failed  overflow"), "{text}");
        let (text, left) = t.render(Some(30), false);
        assert_eq!(
            (left.cut, left.empty),
            (vec!["evidence"], vec!["before"]),
            "{text}"
        );
        // Where the columns would fit only by cutting a cell, the empty column goes instead.
        let (text, left) = t.render(Some(56), false);
        assert_eq!(left.empty, ["before"], "{text}");
        assert!(
            text.contains("overflow_recovery, context_overflow"),
            "{text}"
        );
        // A table that fits keeps its empty columns.
        let (text, left) = t.render(Some(62), false);
        assert!(left.note().is_none() && text.contains("before"), "{text}");
        let (text, left) = t.render(None, false);
        assert!(left.note().is_none() && text.contains("before"), "{text}");
    }

    /// `s` without its colour codes.
    fn anstream_free(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
