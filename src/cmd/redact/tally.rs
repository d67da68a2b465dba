//! The summary of a run: what was replaced, by category, and how often.

use std::collections::BTreeMap;

/// Counts by category (`prompt`, `path`, `image`, `signature`, `github-token`, ...).
#[derive(Default, Debug, Clone)]
pub struct Tally {
    counts: BTreeMap<&'static str, u64>,
}

impl Tally {
    pub fn add(&mut self, category: &'static str) {
        *self.counts.entry(category).or_insert(0) += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.counts.iter().map(|(k, v)| (*k, *v))
    }

    /// One line for people: `prompt 12, path 40, ...` (`nothing` when nothing was replaced).
    pub fn line(&self) -> String {
        if self.counts.is_empty() {
            return "nothing".to_string();
        }
        self.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
