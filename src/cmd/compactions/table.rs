//! pi-compactions --table: one line per session with compactions or compaction failures, for
//! a person.

use super::trigger::{Basis, Trigger};
use crate::diag;

/// What the table line of a session counts.
#[derive(Default)]
pub(super) struct SessionTally {
    compactions: u64,
    /// Compactions by trigger and by basis, in the order of [`Trigger::ALL`] and [`Basis::ALL`].
    triggers: [u64; 5],
    bases: [u64; 3],
    failures: u64,
    max_tokens_before: Option<u64>,
}

impl SessionTally {
    pub fn count_compaction(&mut self, trigger: Trigger, basis: Basis, tokens_before: Option<u64>) {
        self.compactions += 1;
        self.triggers[trigger.index()] += 1;
        self.bases[basis.index()] += 1;
        if let Some(n) = tokens_before {
            self.max_tokens_before = Some(self.max_tokens_before.map_or(n, |m| m.max(n)));
        }
    }

    pub fn count_failure(&mut self) {
        self.failures += 1;
    }

    /// The session's line (without its newline); `None` when it had neither compactions nor
    /// failures.
    pub fn line(&self, file: &str, session: &str) -> Option<String> {
        if self.compactions == 0 && self.failures == 0 {
            return None;
        }
        let plural = |n: u64, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let triggers: Vec<String> = Trigger::ALL
            .iter()
            .zip(self.triggers)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        let bases: Vec<String> = Basis::ALL
            .iter()
            .zip(self.bases)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        let mut line = format!(
            "{} {}: {}",
            diag::sanitize(file),
            diag::sanitize(session),
            plural(self.compactions, "compaction")
        );
        if self.compactions > 0 {
            line.push_str(&format!(": {} ({})", triggers.join(", "), bases.join(", ")));
        }
        line.push_str(&format!("; {}", plural(self.failures, "failure")));
        match self.max_tokens_before {
            Some(n) => line.push_str(&format!("; largest tokens_before {n}")),
            None if self.compactions > 0 => line.push_str("; tokens_before not recorded"),
            None => {}
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_by_trigger_and_basis() {
        let mut t = SessionTally::default();
        assert_eq!(t.line("f", "s"), None);
        t.count_compaction(Trigger::Overflow, Basis::Inferred, Some(5));
        t.count_compaction(Trigger::Manual, Basis::Recorded, Some(9));
        t.count_failure();
        assert_eq!(
            t.line("f", "s").unwrap(),
            "f s: 2 compactions: manual 1, overflow 1 (recorded 1, inferred 1); 1 failure; largest tokens_before 9"
        );
        let mut t = SessionTally::default();
        t.count_compaction(Trigger::Unknown, Basis::Unknown, None);
        assert_eq!(
            t.line("f", "s").unwrap(),
            "f s: 1 compaction: unknown 1 (unknown 1); 0 failures; tokens_before not recorded"
        );
    }
}
