//! What a job keeps of one input: its sessions, and per billed call a few numbers and
//! indexes (tokens, recorded cost, time, model, identity), never the input's text.

use super::decimal::Cost;
use std::collections::HashMap;

/// Whether a session is a fork, and whether its original is in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lineage {
    None,
    Resolved,
    Unresolved,
}

impl Lineage {
    /// The name a `usage` record gives it.
    pub fn name(self) -> &'static str {
        match self {
            Lineage::None => "none",
            Lineage::Resolved => "resolved",
            Lineage::Unresolved => "unresolved",
        }
    }
}

/// What a usage record says of a session: from its header, and its fork lineage.
pub struct SessionFacts {
    pub id: String,
    /// The project: the header's `cwd`, else the one the file's `--<encoded cwd>--` folder
    /// names (as pi-sessions decodes it).
    pub cwd: Option<String>,
    /// The header's `parentSession`.
    pub parent: Option<String>,
    pub lineage: Lineage,
}

/// A timestamp's text as written: inline up to 30 bytes (Pi writes 24), so a call and the
/// first/last of a group need no allocation for it; on the heap beyond.
#[derive(Debug, Clone)]
pub enum TimeText {
    Inline(u8, [u8; 30]),
    Heap(Box<str>),
}

impl TimeText {
    /// `s`, kept.
    pub fn new(s: &str) -> TimeText {
        let mut b = [0; 30];
        match b.get_mut(..s.len()) {
            Some(head) => {
                head.copy_from_slice(s.as_bytes());
                TimeText::Inline(s.len() as u8, b)
            }
            None => TimeText::Heap(s.into()),
        }
    }

    /// The text kept.
    pub fn as_str(&self) -> &str {
        match self {
            // Whole UTF-8 text copied in `new`: never fails.
            TimeText::Inline(n, b) => {
                std::str::from_utf8(&b[..usize::from(*n)]).unwrap_or_default()
            }
            TimeText::Heap(s) => s,
        }
    }
}

/// Where a billed call was recorded: the sources Pi 1.6.0's session stats add up, kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallSource {
    /// An assistant message's `usage`.
    Message,
    /// A `compaction` or `branch_summary` entry's `usage`.
    Summarization,
    /// A `usage` entry (Pi 1.x), its `kind` an index into [`CallTables::kinds`].
    UsageEntry(u32),
    /// A `toolResult` message's `usage` (Pi 1.x: the tool's own model calls).
    ToolResult,
    /// oh-my-pi's `task` tool result's `details.usage`: the calls of the sub-agents it ran,
    /// summed. Reported apart and in no total: the sub-agents' own session files hold those
    /// calls.
    SubagentTask,
}

/// One billed call: a few numbers and indexes, no payload (240 bytes on 64-bit targets).
pub struct BilledCall {
    pub source: CallSource,
    /// Index into [`CallTables::models`].
    pub model: u32,
    /// The call's time (ms since the epoch) and its text as written.
    pub time: Option<(i64, TimeText)>,
    pub identity: Option<u128>,
    /// input, output, cacheRead, cacheWrite.
    pub tokens: [u64; 4],
    /// As recorded, else the sum of `tokens` (exact: it may pass u64::MAX).
    pub total_tokens: u128,
    pub total_computed: bool,
    /// `reasoning` (part of output) and `cacheWrite1h` (part of cacheWrite), when written.
    pub reasoning: Option<u64>,
    pub cache_write_1h: Option<u64>,
    /// The recorded `cost.total`.
    pub cost: Option<Cost>,
    /// Whether `cost.totalFromProvider` is true: the cost is the provider's bill.
    pub cost_from_provider: bool,
    /// A tool result's `nestedCalls`: the calls it lists, and whether the list is incomplete.
    pub nested: Option<(u64, bool)>,
    /// (index into [`CallTables::names`], value) of other numeric usage fields.
    pub other: Vec<(u32, u64)>,
}

/// (provider, model) of a call.
pub type ModelKey = (Option<Box<str>>, Option<Box<str>>);

/// The names an input's calls point to: their models, the names of other usage fields, and
/// the kinds of usage entries, each stored once.
#[derive(Default)]
pub struct CallTables {
    pub models: Vec<ModelKey>,
    model_index: HashMap<ModelKey, u32>,
    /// The model of the last call.
    last_model: u32,
    /// Names of the other numeric usage fields.
    pub names: Vec<Box<str>>,
    name_index: HashMap<Box<str>, u32>,
    /// `kind`s of usage entries (`None`: absent or not a string).
    pub kinds: Vec<Option<Box<str>>>,
    kind_index: HashMap<Option<Box<str>>, u32>,
}

/// The sessions and calls of one input (only its tables when it is streamed into the report):
/// the calls point into `tables`.
#[derive(Default)]
pub struct InputCalls {
    pub file: String,
    pub sessions: Vec<SessionFacts>,
    pub tables: CallTables,
    /// (index into `sessions`, call), in input order.
    pub calls: Vec<(u32, BilledCall)>,
}

impl InputCalls {
    /// No calls yet of the input named `file`.
    pub fn new(file: String) -> InputCalls {
        InputCalls {
            file,
            ..InputCalls::default()
        }
    }
}

/// The index of `k` in `list`, added when new.
fn intern<K: Clone + Eq + std::hash::Hash>(
    list: &mut Vec<K>,
    index: &mut HashMap<K, u32>,
    k: K,
) -> u32 {
    if let Some(&i) = index.get(&k) {
        return i;
    }
    let i = list.len() as u32;
    list.push(k.clone());
    index.insert(k, i);
    i
}

impl CallTables {
    /// The index of (provider, model) in `models`, added when new.
    pub fn model(&mut self, provider: Option<&str>, model: Option<&str>) -> u32 {
        // Calls in a row mostly use one model: the last one found is tried first, without
        // building a key.
        if let Some((p, m)) = self.models.get(self.last_model as usize) {
            if p.as_deref() == provider && m.as_deref() == model {
                return self.last_model;
            }
        }
        let k: ModelKey = (provider.map(Into::into), model.map(Into::into));
        let i = intern(&mut self.models, &mut self.model_index, k);
        self.last_model = i;
        i
    }

    /// The index of usage field name `n` in `names`, added when new.
    pub fn name(&mut self, n: &str) -> u32 {
        match self.name_index.get(n) {
            Some(&i) => i,
            None => intern(&mut self.names, &mut self.name_index, n.into()),
        }
    }

    /// The index of usage entry kind `k` in `kinds`, added when new.
    pub fn kind(&mut self, k: Option<&str>) -> u32 {
        intern(&mut self.kinds, &mut self.kind_index, k.map(Into::into))
    }
}
