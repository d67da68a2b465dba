//! Records rewritten ahead of the reader (issue 17: pi-redact on every core). On the threads
//! that prescan a large input ([`reader::Ahead`]), each entry is rewritten in the default mode
//! without the pseudonym table: its paths are left as holes ([`Hole`]), since pseudonyms are
//! numbered in the order paths are first met. The reader fills the holes in order
//! ([`Rewriter::fill`]), then checks and writes the record as it does one it rewrote itself,
//! so the output does not depend on the thread count. A record without a path is checked
//! ahead too (the residual scan needs nothing but the record), and the reader writes it as it
//! is. A record whose rewrite needs the table for more than its paths (a provider's error
//! message, masked in every mode), or in which the scan finds replaced text, is left to the
//! reader, which rewrites it (again) as it does every record on one thread. `--rename-ids`
//! numbers ids in order: with it, nothing is rewritten ahead.
//!
//! With `--keep-text` the masks of kept text need the pseudonym table, the user names met so
//! far and the secrets learned so far, so the reader rewrites every record; what the patterns
//! find in each kept text, a function of the text alone and most of the masking's work, is
//! found ahead ([`FoundAhead`]), and the reader adds the rest ([`Masker::masks`]).

use super::check;
use super::mask::{Masker, Span};
use super::rewrite::{recycle, FoundAhead, Hole, Holed, Member, Rewriter, Scratch};
use super::tally::Tally;
use crate::output::push_value;
use crate::reader::{self, Entry};
use std::any::Any;
use std::sync::Arc;

/// The [`reader::Ahead`] of pi-redact's default mode.
pub(super) struct RewriteAhead {
    pub masker: Arc<Masker>,
    /// `--keep-text`: only what the patterns find in kept text is found ahead.
    pub keep_text: bool,
    /// `--shift-time`, in milliseconds.
    pub shift: Option<i64>,
    /// The residual scan is on (no `--no-check`).
    pub check: bool,
}

/// The records of one chunk rewritten ahead: flat vectors that every record of the chunk
/// shares (each record's part marked where it starts), reused from chunk to chunk, so that a
/// record costs no heap block of its own (made on a helper thread and freed on another, such
/// blocks cost pi-tools 14 %: BENCHMARKS.md, round 13).
#[derive(Default)]
pub(super) struct Rewritten {
    records: Vec<Record>,
    out: Vec<u8>,
    holes: Vec<Hole>,
    tally: Vec<(&'static str, u64)>,
    on_purpose: Vec<(usize, usize)>,
    replaced: Vec<String>,
    replaced_in_record: Vec<(usize, usize, u64)>,
    /// `--keep-text`: what the patterns found in the records' kept texts ([`FoundAhead`]),
    /// each text's range of `spans` counted from the chunk's first.
    texts: Vec<(usize, std::ops::Range<usize>)>,
    spans: Vec<Span>,
    /// The rewriter's buffers and remembered answers, kept for the next record (taken out
    /// while a record is rewritten: an empty one costs a table of recent keys to make).
    scratch: Option<Scratch>,
    /// One record's output and tally, before they are added to the vectors.
    line: Vec<u8>,
    counts: Tally,
    /// The vector a record's members are walked into, kept empty between records.
    top: Vec<Member<'static>>,
}

/// One record of a [`Rewritten`] chunk.
struct Record {
    start: Mark,
    changed: bool,
    done: Done,
    /// What the patterns find in its kept text was found ahead (`--keep-text`).
    found: bool,
}

/// How far a record was taken ahead of the reader.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Done {
    /// Not at all: the reader rewrites it.
    No,
    /// Rewritten with a hole for each of its paths, for the reader to fill and check.
    Holed,
    /// Rewritten and checked: written as it is.
    Whole,
}

/// Where a record's part of each vector of a [`Rewritten`] starts.
#[derive(Clone, Copy)]
struct Mark {
    out: usize,
    holes: usize,
    tally: usize,
    on_purpose: usize,
    replaced: usize,
    replaced_in_record: usize,
    texts: usize,
    spans: usize,
}

impl Rewritten {
    fn mark(&self) -> Mark {
        Mark {
            out: self.out.len(),
            holes: self.holes.len(),
            tally: self.tally.len(),
            on_purpose: self.on_purpose.len(),
            replaced: self.replaced.len(),
            replaced_in_record: self.replaced_in_record.len(),
            texts: self.texts.len(),
            spans: self.spans.len(),
        }
    }

    fn clear(&mut self) {
        self.records.clear();
        self.out.clear();
        self.holes.clear();
        self.tally.clear();
        self.on_purpose.clear();
        self.replaced.clear();
        self.replaced_in_record.clear();
        self.texts.clear();
        self.spans.clear();
    }

    /// Where record `i`'s part of each vector starts, and where the next record's does.
    fn bounds(&self, i: usize) -> (Mark, Mark) {
        let next = self.records.get(i + 1).map_or(self.mark(), |n| n.start);
        (self.records[i].start, next)
    }

    /// Record `i` of the chunk as it was rewritten ahead; `None` when the reader rewrites it.
    pub fn get(&self, i: usize) -> Option<Holed<'_>> {
        let r = self.records.get(i).filter(|r| r.done != Done::No)?;
        let (a, b) = self.bounds(i);
        Some(Holed {
            out: &self.out[a.out..b.out],
            holes: &self.holes[a.holes..b.holes],
            changed: r.changed,
            whole: r.done == Done::Whole,
            tally: &self.tally[a.tally..b.tally],
            on_purpose: &self.on_purpose[a.on_purpose..b.on_purpose],
            replaced: &self.replaced[a.replaced..b.replaced],
            replaced_in_record: &self.replaced_in_record
                [a.replaced_in_record..b.replaced_in_record],
        })
    }

    /// What the patterns found in record `i`'s kept text, into `into` (empty), when it was
    /// found ahead.
    pub fn found(&self, i: usize, into: &mut FoundAhead) {
        if !self.records.get(i).is_some_and(|r| r.found) {
            return;
        }
        let (a, b) = self.bounds(i);
        into.known = true;
        let texts = self.texts[a.texts..b.texts].iter();
        (into.texts).extend(texts.map(|(at, r)| (*at, r.start - a.spans..r.end - a.spans)));
        into.spans.extend_from_slice(&self.spans[a.spans..b.spans]);
        // In the walk's order, which is the record's; sorted, so a look-up does not rely on it.
        into.texts.sort_unstable_by_key(|t| t.0);
    }

    /// Rewrites `e` and adds it to the chunk's records.
    fn add(&mut self, e: &Entry<'_>, how: &RewriteAhead) {
        let start = self.mark();
        let kind = e.kind().unwrap_or_default();
        let (top, message) = super::walk(e, recycle(std::mem::take(&mut self.top)));
        self.counts.clear();
        let scratch = self.scratch.take().unwrap_or_default();
        let mut rw = Rewriter::ahead(how.keep_text, &how.masker, &mut self.counts, scratch);
        rw.shift = how.shift;
        let changed = rw.record(&kind, e.object, &top, message, e.is_utf8(), &mut self.line);
        rw.count();
        let done = if how.keep_text {
            let base = self.spans.len();
            let texts = rw.found.texts.drain(..);
            (self.texts).extend(texts.map(|(at, r)| (at, r.start + base..r.end + base)));
            self.spans.append(&mut rw.found.spans);
            Done::No
        } else if rw.needs_paths {
            Done::No
        } else if rw.holes.is_empty() {
            // Written as the reader would write it, and checked as it would check it.
            if !changed {
                self.line.clear();
                push_value(&mut self.line, &e.object);
            }
            let secrets = how.masker.exact();
            match how.check && check::residual(&self.line, &rw.check, secrets, &e.object).is_some()
            {
                true => Done::No,
                false => Done::Whole,
            }
        } else {
            self.holes.extend_from_slice(&rw.holes);
            self.on_purpose.extend_from_slice(&rw.check.on_purpose);
            self.replaced.append(&mut rw.check.replaced);
            (self.replaced_in_record).extend_from_slice(&rw.check.replaced_in_record);
            Done::Holed
        };
        self.scratch = Some(rw.into_scratch());
        self.top = recycle(top);
        if done != Done::No {
            self.out.extend_from_slice(&self.line);
            self.tally.extend_from_slice(self.counts.counts());
        }
        self.records.push(Record {
            start,
            changed,
            done,
            found: how.keep_text,
        });
    }
}

impl reader::Ahead for RewriteAhead {
    fn chunk(&self, used: Option<Box<dyn Any + Send>>) -> Box<dyn Any + Send> {
        match used.map(|u| u.downcast::<Rewritten>()) {
            Some(Ok(mut store)) => {
                store.clear();
                store
            }
            _ => Box::<Rewritten>::default(),
        }
    }

    fn record(&self, facts: &mut (dyn Any + Send), e: &Entry<'_>) {
        if let Some(store) = facts.downcast_mut::<Rewritten>() {
            store.add(e, self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Args, Redactor, RunState};
    use crate::diag::Diags;
    use crate::input::chunks;
    use crate::output::Out;
    use crate::reader::{self, Spares, Visitor};

    /// Paths the reader fills in order: a working directory, a path in a tool's arguments
    /// beside a key that is replaced, paths that are their own pseudonyms, a path whose input
    /// is an earlier path's pseudonym beside a value whose input is the placeholder written
    /// ahead after a hole (no leak: each lies inside what was written on purpose, once the
    /// holes are filled and what follows them moved on), a provider's error message holding a
    /// path (masked: the reader rewrites it), a tool's name that is its path argument's text
    /// (copied on purpose after the path's hole is filled), a record with nothing to change
    /// written with blanks (copied as it is), no line feed at the end.
    const CLUES: &str = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/home/ana/proj"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/home/ana/proj/src/main.rs","the file path":"/home/ana/proj/README.md","paths":["/","~","..","/tmp","./x"]}}],"stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"read","arguments":{"a":"/home/ana/proj/src/main.rs","x":"y","b":"/home/user1/dir1/dir2/file1.rs","c":"[value · 1 char]"}}],"stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03Z","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"cannot open /home/ana/proj/secret.txt"}}"#,
        "\n",
        r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c4","arguments":{"path":"/home/ana/proj/lib.rs"},"name":"/home/ana/proj/lib.rs"}],"stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type": "custom", "id": "c9", "parentId": "a4"}"#,
        "\n",
        r#"{"type":"message","id":"a5","parentId":"c9","timestamp":"2026-01-01T00:00:05Z","message":{"role":"assistant","content":[],"provider":"local","model":"llama:/home/ana/proj/m.gguf","stopReason":"stop"}}"#,
    );

    /// pi-redact with `args` over `data`: its output, diagnostics, summary and withheld
    /// records, and how many records it took as rewritten ahead (whole, holed, with what the
    /// patterns find in their kept text found ahead). With
    /// `chunk`, every chunk of that size is prescanned (on the reader's thread or a
    /// helper's) and its records rewritten ahead.
    fn redact(args: &[&str], data: &[u8], chunk: Option<usize>) -> (String, [u64; 3]) {
        let argv = std::iter::once("pi-redact").chain(args.iter().copied());
        let args = <Args as clap::Parser>::parse_from(argv);
        let mut state = RunState::new(&args).unwrap();
        let mut out = Out::held();
        let mut d = Diags::new("pi-redact", "f", false);
        let mut v = Redactor::new(&args, &mut state, &mut out);
        let ahead = v.ahead();
        match chunk {
            None => reader::read(data, false, &mut d, &mut v),
            Some(chunk) => {
                let spares = Spares::for_helpers(1);
                let work = |offset, bytes| {
                    reader::prescan(
                        bytes,
                        offset,
                        reader::Notes::MESSAGES,
                        ahead.as_deref(),
                        &spares,
                    )
                };
                chunks::in_order(data, chunk, 1, work, work, |next| {
                    reader::read_lines_prescanned(next, &spares, false, &mut d, &mut v)
                })
            }
        }
        .unwrap();
        let (withheld, taken) = (v.withheld, v.taken);
        let report = format!(
            "{}\n{}\n{}\n{withheld}",
            String::from_utf8_lossy(&out.buf),
            d.held(),
            state.tally.line()
        );
        (report, taken)
    }

    /// Every fixture, and `more`.
    fn inputs_and(more: &str) -> Vec<Vec<u8>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
            .collect();
        inputs.push(more.as_bytes().to_vec());
        inputs
    }

    /// Whatever the chunks and whoever rewrites a record, the output, diagnostics and
    /// summary are the reader's alone: paths are numbered in the order the reader meets them.
    #[test]
    fn records_rewritten_ahead_are_written_as_the_reader_writes_them() {
        let inputs = inputs_and(CLUES);
        let mut taken = [0; 2];
        for args in [&[][..], &["--shift-time", "-2h"], &["--no-check"]] {
            for data in &inputs {
                let (want, none) = redact(args, data, None);
                assert_eq!(none, [0; 3], "nothing is rewritten ahead on one thread");
                for chunk in [1, 97, 4096, 1 << 20] {
                    let (got, took) = redact(args, data, Some(chunk));
                    let start = String::from_utf8_lossy(&data[..data.len().min(120)]);
                    assert_eq!(got, want, "{args:?}, chunk {chunk}, input {start:?}");
                    taken = [taken[0] + took[0], taken[1] + took[1]];
                }
            }
        }
        assert!(taken[0] > 0 && taken[1] > 0, "both kinds taken: {taken:?}");
        // The clues' error message is the reader's own; a2 is written (its `c`, a value's
        // placeholder already, as it is).
        let (got, took) = redact(&[], CLUES.as_bytes(), Some(1 << 20));
        assert!(!got.contains("still holds"), "{got}");
        assert!(
            got.contains(
                r#"{"a":"/home/user1/dir1/dir2/file1.rs","x":"[value · 1 char]","b":"/home/user2/dir4/dir5/file3.rs","c":"[value · 1 char]"}"#
            ),
            "{got}"
        );
        assert!(
            got.contains("cannot open /home/user1/dir1/file4.txt"),
            "{got}"
        );
        // a4's tool name, a path, gets the pseudonym its argument gets.
        assert!(
            got.contains(r#""arguments":{"path":"/home/user1/dir1/file5.rs"},"name":"/home/user1/dir1/file5.rs""#),
            "{got}"
        );
        // a5's model holds a path after its own text: masked by the reader.
        assert!(
            got.contains(r#""model":"llama:/home/user1/dir1/file6.gguf""#),
            "{got}"
        );
        // Taken: the record without a path, whole; a1, a2 and a4 with holes (a4's tool name
        // is a path, a hole too; a5's model needs the table, the reader's).
        assert_eq!(took, [1, 3, 0]);
        // A named secret in a record with holes (a2's time, copied on purpose): found by the
        // reader once they are filled, and the record withheld.
        let env = std::env::temp_dir().join(format!("pi-jsonl-ahead-{}.env", std::process::id()));
        std::fs::write(&env, "NAMED=2026-01-01T00:00:02Z\n").unwrap();
        let args = ["--secrets-from", env.to_str().unwrap()];
        let (got, took) = redact(&args, CLUES.as_bytes(), Some(1 << 20));
        let _ = std::fs::remove_file(&env);
        assert!(
            got.contains(":3: the rewritten record still holds 20 characters"),
            "{got}"
        );
        assert_eq!(took, [1, 3, 0]);
    }

    /// Kept text whose masks depend on what the reader met before: a secret learned from a
    /// credential's value (`keyed`), not known before it, found again later in text where no
    /// pattern finds it, alone and inside a longer word; a GitHub token met again; a user
    /// name met in a home path, then as a word; a path met again; a text with escapes
    /// `write_str` does not write (masked from its decoded text); an e-mail address.
    const KEPT: &str = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/home/ana/proj"}"#,
        "\n",
        r#"{"type":"message","id":"u0","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"not yet known: Zq7Rt2Lm9Xw4Pv"}}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":"u0","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for ana@example.com"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls /home/ana/proj/src","api_key":"Zq7Rt2Lm9Xw4Pv"}}],"stopReason":"toolUse"}}"#,
        "\n",
        r#"{"type":"message","id":"u1","parentId":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"ana said Zq7Rt2Lm9Xw4Pv and xZq7Rt2Lm9Xw4Pvx and abcdefghijklmnopqrstuvwxyz0123456789 in /home/ana/proj/src"}}"#,
        "\n",
        r#"{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"\u0061na\/x: /home/ana/proj/src/a.rs ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}"#,
        "\n",
    );

    /// With `--keep-text` what the patterns find in kept text is found ahead and the reader
    /// writes what it writes alone, whatever it learned before; with `--rename-ids` alone
    /// nothing is rewritten ahead (ids are numbered in order).
    #[test]
    fn keep_text_finds_ahead_and_rename_ids_rewrites_on_the_reader() {
        let (got, took) = redact(&["--rename-ids"], CLUES.as_bytes(), Some(1 << 20));
        assert_eq!(took, [0; 3]);
        assert_eq!(got, redact(&["--rename-ids"], CLUES.as_bytes(), None).0);
        let mut inputs = inputs_and(CLUES);
        inputs.push(KEPT.as_bytes().to_vec());
        let mut found = 0;
        for args in [&["--keep-text"][..], &["--keep-text", "--rename-ids"]] {
            for data in &inputs {
                let want = redact(args, data, None).0;
                for chunk in [1, 97, 1 << 20] {
                    let (got, took) = redact(args, data, Some(chunk));
                    let start = String::from_utf8_lossy(&data[..data.len().min(120)]);
                    assert_eq!(got, want, "{args:?}, chunk {chunk}, input {start:?}");
                    assert_eq!(took[..2], [0, 0], "{args:?}");
                    found += took[2];
                }
            }
        }
        assert!(found > 0);
        // The learned secrets are masked where only the reader knows them.
        let (got, took) = redact(&["--keep-text"], KEPT.as_bytes(), Some(1 << 20));
        assert_eq!(took, [0, 0, 4], "{got}");
        assert!(got.contains("not yet known: Zq7Rt2Lm9Xw4Pv"), "{got}");
        let after = &got[got.find(r#""id":"a1""#).unwrap()..];
        for leaked in ["Zq7Rt2Lm9Xw4Pv", "ghp_", "ana", "proj"] {
            assert!(!after.contains(leaked), "{leaked}: {got}");
        }
        assert!(
            got.contains("user1 said [secret:keyed] and x[secret:keyed]x"),
            "{got}"
        );
    }
}
