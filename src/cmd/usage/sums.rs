//! What a group of calls adds up to: token and cost [`Sums`], and a [`GroupUsage`] (the sums of
//! each source of its calls: assistant messages, summarization calls, usage entries (also per
//! kind) and tool results; per model; with its labels, times,
//! sessions and left-out repeats), which a `usage` record writes.

use super::calls::{BilledCall, CallSource, CallTables, Lineage, SessionFacts, TimeText};
use super::decimal::Amount;
use std::collections::BTreeMap;

/// Token and cost sums of a set of calls, exact: a token sum is a u128 of u64 counts (at most
/// u64::MAX calls, so it cannot overflow), a cost an [`Amount`] (issue 19, item 2).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sums {
    pub count: u64,
    pub input: u128,
    pub output: u128,
    pub cache_read: u128,
    pub cache_write: u128,
    pub total_tokens: u128,
    pub total_tokens_computed: u64,
    /// Sums of `reasoning` (part of output) and `cacheWrite1h` (part of cacheWrite) over the
    /// calls that wrote them, and how many did.
    pub reasoning: u128,
    pub reasoning_calls: u64,
    pub cache_write_1h: u128,
    pub cache_write_1h_calls: u64,
    pub cost: Amount,
    pub cost_missing: u64,
    /// The part of `cost` Pi marked as the provider's bill (`cost.totalFromProvider`), and
    /// how many calls it comes from.
    pub cost_from_provider: Amount,
    pub cost_from_provider_calls: u64,
    pub other: BTreeMap<Box<str>, u128>,
}

impl Sums {
    /// Adds call `c` (its other fields' names in `names`).
    pub fn add_call(&mut self, c: &BilledCall, names: &[Box<str>]) {
        self.count += 1;
        self.input += u128::from(c.tokens[0]);
        self.output += u128::from(c.tokens[1]);
        self.cache_read += u128::from(c.tokens[2]);
        self.cache_write += u128::from(c.tokens[3]);
        self.total_tokens += c.total_tokens;
        self.total_tokens_computed += u64::from(c.total_computed);
        if let Some(r) = c.reasoning {
            self.reasoning += u128::from(r);
            self.reasoning_calls += 1;
        }
        if let Some(w) = c.cache_write_1h {
            self.cache_write_1h += u128::from(w);
            self.cache_write_1h_calls += 1;
        }
        match &c.cost {
            Some(v) => {
                self.cost.add(v);
                if c.cost_from_provider {
                    self.cost_from_provider.add(v);
                    self.cost_from_provider_calls += 1;
                }
            }
            None => self.cost_missing += 1,
        }
        for (ix, v) in &c.other {
            if let Some(n) = names.get(*ix as usize) {
                match self.other.get_mut(n) {
                    Some(e) => *e += u128::from(*v),
                    None => {
                        self.other.insert(n.clone(), u128::from(*v));
                    }
                }
            }
        }
    }

    /// Adds the sums `o`.
    pub fn merge(&mut self, o: &Sums) {
        // Every member is added per call counted: sums of no call hold nothing to add (the
        // sources a group has none of, most groups' summarization, usage entries, results).
        if o.count == 0 {
            return;
        }
        self.count += o.count;
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.total_tokens += o.total_tokens;
        self.total_tokens_computed += o.total_tokens_computed;
        self.reasoning += o.reasoning;
        self.reasoning_calls += o.reasoning_calls;
        self.cache_write_1h += o.cache_write_1h;
        self.cache_write_1h_calls += o.cache_write_1h_calls;
        self.cost.merge(&o.cost);
        self.cost_missing += o.cost_missing;
        self.cost_from_provider.merge(&o.cost_from_provider);
        self.cost_from_provider_calls += o.cost_from_provider_calls;
        for (k, v) in &o.other {
            *self.other.entry(k.clone()).or_insert(0) += *v;
        }
    }

    /// input + output + cacheRead + cacheWrite: the token total Pi 1.6.0's session stats show
    /// (`reasoning` and `cacheWrite1h` are inside these, never added on top).
    pub fn tokens(&self) -> u128 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// The summed cost, or `None` when no call had a recorded cost.
    pub fn cost(&self) -> Option<&Amount> {
        (self.count == 0 || self.cost_missing < self.count).then_some(&self.cost)
    }
}

/// A label as part of a group's key: unknown (null) sorts after every string.
pub type KeyLabel = (bool, Box<str>);

/// `v` as a key label.
pub fn key_label(v: Option<&str>) -> KeyLabel {
    match v {
        Some(s) => (false, s.into()),
        None => (true, "".into()),
    }
}

/// The label a key label stands for.
pub fn label_of(v: &KeyLabel) -> Option<&str> {
    (!v.0).then_some(&*v.1)
}

/// A (provider, model) pair as labels, owned (a `by_model` key) or borrowed (a call's), so
/// that the map is searched with a borrowed one.
pub trait LabelPair {
    fn labels(&self) -> (Option<&str>, Option<&str>);
}

impl LabelPair for (KeyLabel, KeyLabel) {
    fn labels(&self) -> (Option<&str>, Option<&str>) {
        (label_of(&self.0), label_of(&self.1))
    }
}

impl LabelPair for (Option<&str>, Option<&str>) {
    fn labels(&self) -> (Option<&str>, Option<&str>) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn LabelPair + 'a> for (KeyLabel, KeyLabel) {
    fn borrow(&self) -> &(dyn LabelPair + 'a) {
        self
    }
}

/// The order of [`KeyLabel`]s: unknown (null) after every string.
fn label_order(v: Option<&str>) -> (bool, &str) {
    (v.is_none(), v.unwrap_or(""))
}

impl Ord for dyn LabelPair + '_ {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        let ((p, m), (op, om)) = (self.labels(), o.labels());
        (label_order(p), label_order(m)).cmp(&(label_order(op), label_order(om)))
    }
}

impl PartialOrd for dyn LabelPair + '_ {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for dyn LabelPair + '_ {
    fn eq(&self, o: &Self) -> bool {
        self.labels() == o.labels()
    }
}

impl Eq for dyn LabelPair + '_ {}

/// What a record says about its group besides the sums.
#[derive(Debug, Default, Clone)]
pub struct GroupLabels {
    pub session: Option<String>,
    pub file: Option<String>,
    pub project: Option<String>,
    pub parent_session: Option<String>,
    pub lineage: Option<&'static str>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub month: Option<String>,
    pub week: Option<String>,
    pub day: Option<String>,
}

/// The sums of one group.
#[derive(Debug, Default, Clone)]
pub struct GroupUsage {
    pub labels: GroupLabels,
    pub messages: Sums,
    pub summarization: Sums,
    pub usage_entries: Sums,
    pub tool_results: Sums,
    /// oh-my-pi's `task` results' sub-agent usage ([`CallSource::SubagentTask`]): in no
    /// total, no model's sums, no `first` or `last`.
    pub subagents: Sums,
    /// The usage entries by `kind`.
    pub usage_kinds: BTreeMap<KeyLabel, Sums>,
    pub by_model: BTreeMap<(KeyLabel, KeyLabel), Sums>,
    /// The nested calls listed on the counted tool results, and the results whose list Pi
    /// marked incomplete.
    pub nested_calls: u64,
    pub nested_calls_incomplete: u64,
    pub first: Option<(i64, TimeText)>,
    pub last: Option<(i64, TimeText)>,
    pub duplicates: u64,
    pub sessions: u64,
    pub forks: u64,
    pub forks_unresolved: u64,
    /// The last session occurrence counted in `sessions`, plus one.
    seen_session: u64,
}

impl GroupUsage {
    /// A group with `labels` and nothing counted yet.
    pub fn new(labels: GroupLabels) -> GroupUsage {
        GroupUsage {
            labels,
            ..GroupUsage::default()
        }
    }

    /// Counts session `s`, occurrence `occ` of the input, unless already counted.
    pub fn enter(&mut self, occ: u64, s: &SessionFacts) {
        if self.seen_session == occ + 1 {
            return;
        }
        self.seen_session = occ + 1;
        self.sessions += 1;
        if s.lineage != Lineage::None {
            self.forks += 1;
        }
        if s.lineage == Lineage::Unresolved {
            self.forks_unresolved += 1;
        }
    }

    /// Adds call `c`, or counts it as left out when it is a repeat (`dup`).
    pub fn add(&mut self, c: &BilledCall, dup: bool, tables: &CallTables) {
        if dup {
            // `duplicates` counts the calls the totals leave out as repeats (--calls writes
            // them, marked); a repeat of sub-agent usage is only left out of `subagents`.
            if c.source != CallSource::SubagentTask {
                self.duplicates += 1;
            }
            return;
        }
        let names = &tables.names;
        match c.source {
            CallSource::SubagentTask => return self.subagents.add_call(c, names),
            CallSource::Message => self.messages.add_call(c, names),
            CallSource::Summarization => self.summarization.add_call(c, names),
            CallSource::ToolResult => self.tool_results.add_call(c, names),
            CallSource::UsageEntry(kind) => {
                self.usage_entries.add_call(c, names);
                let kind = tables.kinds.get(kind as usize).and_then(Option::as_deref);
                self.usage_kinds
                    .entry(key_label(kind))
                    .or_default()
                    .add_call(c, names);
            }
        }
        if let Some((count, incomplete)) = c.nested {
            self.nested_calls += count;
            self.nested_calls_incomplete += u64::from(incomplete);
        }
        let (p, m) = &tables.models[c.model as usize];
        let pair = (p.as_deref(), m.as_deref());
        // Found by a search of the sorted map without building a key (issue 19, item 4: a
        // scan made a group of 100,000 models quadratic).
        match self.by_model.get_mut(&pair as &dyn LabelPair) {
            Some(s) => s.add_call(c, names),
            None => self
                .by_model
                .entry((key_label(pair.0), key_label(pair.1)))
                .or_default()
                .add_call(c, names),
        }
        if let Some((ms, text)) = &c.time {
            if self.first.as_ref().is_none_or(|f| *ms < f.0) {
                self.first = Some((*ms, text.clone()));
            }
            if self.last.as_ref().is_none_or(|l| *ms > l.0) {
                self.last = Some((*ms, text.clone()));
            }
        }
    }

    /// Adds `o`: calls of one `model` summed ahead in input order by [`GroupUsage::add`]
    /// (pi-usage's cache), which adds what adding each of them would (their sessions are not
    /// counted: [`GroupUsage::enter`]). Exact when the calls of `o` that share a time with
    /// a call of this group came after it, or write that time as it does.
    pub fn add_summed(&mut self, model: (Option<&str>, Option<&str>), o: &GroupUsage) {
        self.messages.merge(&o.messages);
        self.summarization.merge(&o.summarization);
        self.usage_entries.merge(&o.usage_entries);
        self.tool_results.merge(&o.tool_results);
        self.subagents.merge(&o.subagents);
        for (kind, s) in &o.usage_kinds {
            match self.usage_kinds.get_mut(kind) {
                Some(mine) => mine.merge(s),
                None => {
                    self.usage_kinds.insert(kind.clone(), s.clone());
                }
            }
        }
        self.nested_calls += o.nested_calls;
        self.nested_calls_incomplete += o.nested_calls_incomplete;
        let sources = [
            &o.messages,
            &o.summarization,
            &o.usage_entries,
            &o.tool_results,
        ];
        // Repeats alone add nothing to the model's sums (as in `add`).
        if sources.iter().any(|s| s.count > 0) {
            let mine = match self.by_model.get_mut(&model as &dyn LabelPair) {
                Some(s) => s,
                None => {
                    let k = (key_label(model.0), key_label(model.1));
                    self.by_model.entry(k).or_default()
                }
            };
            for s in sources {
                mine.merge(s);
            }
        }
        if let Some((ms, text)) = &o.first {
            if self.first.as_ref().is_none_or(|f| *ms < f.0) {
                self.first = Some((*ms, text.clone()));
            }
        }
        if let Some((ms, text)) = &o.last {
            if self.last.as_ref().is_none_or(|l| *ms > l.0) {
                self.last = Some((*ms, text.clone()));
            }
        }
        self.duplicates += o.duplicates;
    }

    /// Every source: `messages` + `summarization` + `usage_entries` + `tool_results`.
    pub fn total(&self) -> Sums {
        let mut t = self.messages.clone();
        t.merge(&self.summarization);
        t.merge(&self.usage_entries);
        t.merge(&self.tool_results);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::super::calls::ModelKey;
    use super::*;

    /// Issue 19, item 4: a group's models are found by a search of its sorted map, not by a
    /// scan (a scan took minutes on 100,000 distinct models): each of them, called twice, is
    /// found again and summed once. (Speed is measured in docs/TESTING.md, not asserted.)
    #[test]
    fn item_4_many_models_in_a_group_are_found_by_search() {
        let mut tables = CallTables::default();
        let models: Vec<ModelKey> = (0..100_000)
            .map(|i| (Some("p".into()), Some(format!("model-{i:06}").into())))
            .chain([(None, None)])
            .collect();
        for (p, m) in &models {
            tables.model(p.as_deref(), m.as_deref());
        }
        let call = |model: u32| BilledCall {
            source: CallSource::Message,
            model,
            time: None,
            identity: None,
            tokens: [1, 0, 0, 0],
            total_tokens: 1,
            total_computed: false,
            reasoning: None,
            cache_write_1h: None,
            cost: None,
            cost_from_provider: false,
            nested: None,
            other: Vec::new(),
        };
        let mut g = GroupUsage::default();
        for i in (0..models.len() as u32).chain(0..models.len() as u32) {
            g.add(&call(i), false, &tables);
        }
        assert_eq!(g.by_model.len(), models.len());
        assert!(g.by_model.values().all(|s| s.count == 2 && s.input == 2));
        // Sorted as before: by provider then model, unknown (null) last.
        let keys: Vec<_> = g.by_model.keys().map(|k| k.labels()).collect();
        assert_eq!(keys[0], (Some("p"), Some("model-000000")));
        assert_eq!(keys[models.len() - 1], (None, None));
    }
}
