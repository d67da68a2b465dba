//! pi-usage --context: one `context` record per assistant message, following each entry's
//! branch (through `parentId`) so that the previous message is the one before it on the same
//! branch, and inferring a context drop where the recorded context shrank sharply.

use super::collect::TOKEN_FIELDS;
use super::context_table::{self, ContextRow};
use super::records::ContextRecord;
use crate::diag::{Diags, Kind};
use crate::json::Raw;
use crate::message::token_value;
use crate::message::Message;
use crate::models_json::Models;
use crate::output::{Out, Stop};
use crate::reader::{Entry, Header, ParentLink, SessionVisitor};
use crate::record::Record;
use std::collections::HashMap;

/// A drop is inferred when the recorded context falls below this share of the previous one.
const DROP_RATIO: f64 = 0.7;

/// The recorded context before an entry, on its branch.
#[derive(Debug, Clone, Copy, Default)]
struct ContextBefore {
    /// The recorded context of the last assistant message with non-zero usage.
    prev: Option<u128>,
    /// Whether a compaction came after that message.
    compaction: bool,
}

impl ContextBefore {
    /// The context before the entry after `record`'s message: a message with non-zero usage
    /// starts the count anew; any other leaves it as it was.
    fn after(self, record: &ContextRecord<'_>) -> ContextBefore {
        match live(record.recorded_context_tokens) {
            Some(c) => ContextBefore {
                prev: Some(c),
                compaction: false,
            },
            None => self,
        }
    }
}

/// The session being read: its id and the context before each entry read so far.
pub struct SessionContexts {
    id: String,
    by_id: HashMap<Box<[u8]>, ContextBefore>,
    /// The context after the previous entry (for entries without a known parent).
    last: ContextBefore,
    /// With --table: the rows of the session's table.
    rows: Vec<ContextRow>,
}

/// Writes the `context` records of one input (a [`SessionVisitor`]).
pub struct ContextWriter<'a, 'w> {
    pub out: &'a mut Out<'w>,
    /// The input's name.
    pub file: String,
    pub models: &'a Models,
    /// With --table, the width to fit (`Some(None)`: no limit); `None` writes records.
    pub table: Option<Option<usize>>,
}

impl SessionVisitor for ContextWriter<'_, '_> {
    type Session = SessionContexts;

    fn header(&mut self, h: &Header<'_>, _d: &mut Diags) -> Result<SessionContexts, Stop> {
        Ok(SessionContexts {
            id: h.id.clone(),
            by_id: HashMap::new(),
            last: ContextBefore::default(),
            rows: Vec::new(),
        })
    }

    fn entry(&mut self, s: &mut SessionContexts, e: &Entry<'_>, d: &mut Diags) -> Result<(), Stop> {
        // The state this entry continues from: its parent's, else the previous entry's.
        let mut before = match e.parent() {
            ParentLink::Root => ContextBefore::default(),
            ParentLink::Id(p) => s.by_id.get(p.as_ref()).copied().unwrap_or(s.last),
            ParentLink::Absent | ParentLink::NotString(_) => s.last,
        };
        match e.get("type").map(Raw::unescaped).as_deref() {
            Some(b"\"compaction\"") => before.compaction = true,
            Some(b"\"message\"") => {
                if let Some(message) = e.message().filter(Message::is_assistant) {
                    let record =
                        context_record(&self.file, &s.id, self.models, e, &message, before, d);
                    match self.table {
                        Some(_) => s.rows.push(ContextRow::of(&record)),
                        None => record.write(self.out)?,
                    }
                    before = before.after(&record);
                }
            }
            _ => {}
        }
        if let Some(id) = e.key("id") {
            s.by_id.insert(id.as_ref().into(), before);
        }
        s.last = before;
        Ok(())
    }

    fn end(&mut self, s: SessionContexts, _d: &mut Diags) -> Result<(), Stop> {
        match self.table {
            Some(columns) => {
                let text = context_table::render(&s.id, &self.file, &s.rows, columns);
                self.out.raw(text.as_bytes())
            }
            None => Ok(()),
        }
    }
}

/// The `context` record of assistant message `m` of entry `e`, in session `session` of input
/// `file`, with the context its branch had `before` it.
fn context_record<'a>(
    file: &'a str,
    session: &'a str,
    models: &Models,
    e: &Entry<'a>,
    m: &Message<'a>,
    before: ContextBefore,
    d: &mut Diags,
) -> ContextRecord<'a> {
    let usage = m.usage.filter(|u| u.first() == Some(&b'{'));
    let (recorded, context) = match usage {
        Some(u) => recorded_tokens(u, e.line.no, d),
        None => ([None; 4], None),
    };
    let provider = m.provider.and_then(Raw::as_str);
    let model = m.model.and_then(Raw::as_str);
    let window = match (&provider, &model) {
        (Some(p), Some(id)) => models.window(p, id),
        _ => None,
    };
    let fill_ratio = match (context, window) {
        (Some(c), Some(w)) => Some(((c as f64 / w.tokens as f64) * 1e6).round() / 1e6),
        _ => None,
    };
    let live = live(context);
    ContextRecord {
        session,
        file,
        line: e.line.no,
        entry: e.str("id"),
        timestamp: e.str("timestamp"),
        provider,
        model,
        stop_reason: m.stop_reason.and_then(Raw::as_str),
        recorded,
        recorded_context_tokens: context,
        configured_window: window,
        fill_ratio,
        previous_context_tokens: before.prev.filter(|_| live.is_some()),
        inferred_context_drop: inferred_drop(live, before.prev),
        after_compaction: live.is_some() && before.compaction,
    }
}

/// The token fields of `usage` (an object), each `None` when invalid (reported), and the
/// recorded context: input + cacheRead + cacheWrite, `None` when one of them is invalid.
fn recorded_tokens(usage: Raw<'_>, line: u64, d: &mut Diags) -> ([Option<u64>; 4], Option<u128>) {
    let mut t: [Option<u64>; 4] = [None; 4];
    let mut ok = true;
    for (i, f) in TOKEN_FIELDS.iter().enumerate() {
        match usage.get(f).map(token_value) {
            None | Some(Ok(None)) => t[i] = Some(0),
            Some(Ok(Some(n))) => t[i] = Some(n),
            Some(Err(why)) => {
                d.report(
                    Some(line),
                    Kind::BadField,
                    format!("usage.{f} {why}; not counted"),
                );
                if i != 1 {
                    ok = false;
                }
            }
        }
    }
    // input + cacheRead + cacheWrite, exact: the sum may pass u64::MAX (issue 19, item 2).
    let context = ok.then(|| {
        [0, 2, 3]
            .iter()
            .map(|&i| u128::from(t[i].unwrap_or(0)))
            .sum()
    });
    (t, context)
}

/// The recorded context when it shows one: zero-usage messages neither show nor hide a drop.
fn live(context: Option<u128>) -> Option<u128> {
    context.filter(|&c| c > 0)
}

/// The drop from the previous recorded context `prev` to `live`, when it fell below
/// [`DROP_RATIO`] of it.
fn inferred_drop(live: Option<u128>, prev: Option<u128>) -> Option<u128> {
    match (live, prev) {
        (Some(c), Some(p)) if (c as f64) < (p as f64) * DROP_RATIO => Some(p - c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_is_a_fall_below_seventy_percent() {
        assert_eq!(inferred_drop(Some(69), Some(100)), Some(31));
        assert_eq!(inferred_drop(Some(70), Some(100)), None);
        assert_eq!(inferred_drop(Some(150), Some(100)), None);
        assert_eq!(inferred_drop(Some(10), None), None);
        assert_eq!(inferred_drop(None, Some(100)), None);
    }
}
