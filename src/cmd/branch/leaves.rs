//! What `--info` and `--leaves` ask of a resolved tree: its leaves and how deep each entry is.

use super::entries::{EntryTable, NONE};
use super::resolve::ResolvedTree;

impl ResolvedTree {
    /// Leaves: live entries with an id that no entry names as its parent.
    pub(crate) fn leaves(&self, s: &EntryTable) -> Vec<u32> {
        if s.version < 2 {
            return s
                .entries
                .len()
                .checked_sub(1)
                .map(|i| i as u32)
                .into_iter()
                .collect();
        }
        let mut has_child = vec![false; s.entries.len()];
        for &p in &self.parent_of {
            if p != NONE {
                has_child[p as usize] = true;
            }
        }
        (0..s.entries.len() as u32)
            .filter(|&i| {
                s.entries[i as usize].id != NONE && self.live[i as usize] && !has_child[i as usize]
            })
            .collect()
    }

    /// Entries from the root to each entry (cycles cut), computed once for all entries.
    pub(crate) fn depths(&self) -> Vec<u64> {
        const UNKNOWN: u64 = u64::MAX;
        let n = self.parent_of.len();
        let mut depth = vec![UNKNOWN; n];
        let mut stack = Vec::new();
        let mut in_stack = vec![false; n];
        for start in 0..n {
            let mut cur = start as u32;
            while cur != NONE && depth[cur as usize] == UNKNOWN && !in_stack[cur as usize] {
                in_stack[cur as usize] = true;
                stack.push(cur);
                cur = self.parent_of[cur as usize];
            }
            let mut base = if cur == NONE || in_stack[cur as usize] {
                0
            } else {
                depth[cur as usize]
            };
            while let Some(x) = stack.pop() {
                in_stack[x as usize] = false;
                base += 1;
                depth[x as usize] = base;
            }
        }
        depth
    }
}
