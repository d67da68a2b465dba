//! The summary of a run: what was replaced, by category, and how often.

/// Counts by category (`prompt`, `path`, `image`, `signature`, `github-token`, ...). A few
/// dozen categories at most, counted once per replaced text: a list looked through, each
/// category name compared by address first (the same literal each time), is cheaper than a
/// sorted map; it is sorted when read.
#[derive(Default, Debug, Clone)]
pub struct Tally {
    counts: Vec<(&'static str, u64)>,
}

impl Tally {
    pub fn add(&mut self, category: &'static str) {
        self.add_n(category, 1);
    }

    /// Adds `n` to a category's count.
    pub fn add_n(&mut self, category: &'static str, n: u64) {
        let same = |k: &&'static str| std::ptr::eq(*k, category) || *k == category;
        match self.counts.iter_mut().find(|(k, _)| same(k)) {
            Some((_, c)) => *c += n,
            None => self.counts.push((category, n)),
        }
    }

    /// Adds counts ([`Tally::counts`] of another).
    pub fn add_counts(&mut self, counts: &[(&'static str, u64)]) {
        for &(category, n) in counts {
            self.add_n(category, n);
        }
    }

    /// The counts as they were added (categories in the order first met).
    pub fn counts(&self) -> &[(&'static str, u64)] {
        &self.counts
    }

    /// Emptied (its memory kept).
    pub fn clear(&mut self) {
        self.counts.clear();
    }

    /// The categories in order of their names, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let mut sorted = self.counts.clone();
        sorted.sort_unstable();
        sorted.into_iter()
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

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn counts_by_category_in_name_order() {
        let mut t = Tally::default();
        assert_eq!(t.line(), "nothing");
        let path = String::from("path");
        // The same name from another place (another address) is the same category.
        let other: &'static str = Box::leak(path.into_boxed_str());
        for c in ["prompt", "path", "image", "prompt", other] {
            t.add(c);
        }
        assert_eq!(t.line(), "image 1, path 2, prompt 2");
        assert_eq!(t.iter().count(), 3);
    }
}
