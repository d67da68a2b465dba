//! Records waiting to be written in input order: a compaction report waits for the first
//! assistant message after it on its branch (its `context_after`), at most [`MAX_WAIT`]
//! entries, and every record after it waits behind it; on the way it notes whether the first
//! message after it on its branch is a reply (a retried turn). The queue is an [`Ordered`].

use super::records::CompactionFacts;
use super::session::EntryId;
use super::trigger::Place;
use crate::hash::FastSet;
use crate::ordered::Ordered;

/// Entries after a compaction within which its `context_after` is looked for.
pub(super) const MAX_WAIT: u64 = 10_000;

/// A record in the queue.
pub(super) enum Waiting {
    /// Written already; it waits only for the records before it.
    Written(Vec<u8>),
    Compaction(AwaitingContext),
}

impl Waiting {
    /// Whether the record can be written once those before it are.
    pub fn settled(&self) -> bool {
        match self {
            Waiting::Written(_) => true,
            Waiting::Compaction(w) => w.done,
        }
    }
}

/// A compaction report waiting for the message that gives its `context_after`.
pub(super) struct AwaitingContext {
    pub facts: Box<CompactionFacts>,
    /// Ids (their keys) descending from the compaction; `None` when file order decides (no id).
    descendants: Option<FastSet<Box<[u8]>>>,
    /// Entries seen since the compaction.
    age: u64,
    done: bool,
    /// Whether the first message after it on its branch has been seen.
    first_message_seen: bool,
    /// That message, when it is an assistant reply (no new prompt came first): a retried turn.
    pub retried: Option<Place>,
}

/// The kind of message an entry is, as far as a waiting compaction cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StepMessage {
    User,
    Assistant,
}

/// What an entry after a waiting compaction tells it.
pub(super) struct Step<'a> {
    pub line: u64,
    pub id: Option<&'a EntryId>,
    /// Its parent's id as its key (`json::string_key`), when it names one.
    pub parent: Option<&'a [u8]>,
    pub is_compaction: bool,
    /// A user or assistant message.
    pub message: Option<StepMessage>,
    /// The recorded context size of an assistant message (see `usage_context`).
    pub context: Option<u128>,
}

impl AwaitingContext {
    /// The compaction `facts` on the entry with id `id` (none in a `linear` log).
    pub fn new(facts: Box<CompactionFacts>, id: Option<&EntryId>, linear: bool) -> AwaitingContext {
        let descendants = match (id, linear) {
            (Some(i), false) => {
                let mut set = FastSet::default();
                set.insert(Box::<[u8]>::from(i.key()));
                Some(set)
            }
            _ => None,
        };
        AwaitingContext {
            facts,
            descendants,
            age: 0,
            done: false,
            first_message_seen: false,
            retried: None,
        }
    }

    /// Looks at the next entry: an assistant message with a context on the compaction's branch
    /// settles it, as do another compaction there and [`MAX_WAIT`] entries.
    fn see(&mut self, step: &Step<'_>) {
        if self.done {
            return;
        }
        self.age += 1;
        let on_branch = match &self.descendants {
            None => true,
            Some(set) => step.parent.is_some_and(|p| set.contains(p)),
        };
        if on_branch {
            if let (Some(m), false) = (step.message, self.first_message_seen) {
                self.first_message_seen = true;
                if m == StepMessage::Assistant {
                    self.retried = Some(Place {
                        line: step.line,
                        id: step.id.cloned(),
                    });
                }
            }
            if step.is_compaction {
                self.done = true;
            } else if let Some(c) = step.context {
                self.facts.context_after = Some(c);
                self.facts.context_after_line = Some(step.line);
                self.done = true;
            } else if let (Some(set), Some(i)) = (self.descendants.as_mut(), step.id) {
                set.insert(i.key().into());
            }
        }
        if !self.done && self.age >= MAX_WAIT {
            self.done = true;
        }
    }
}

/// Shows the next entry to every compaction waiting in `queue`.
pub(super) fn see_entry(queue: &mut Ordered<Waiting>, step: &Step<'_>) {
    for waiting in queue.iter_mut() {
        if let Waiting::Compaction(w) = waiting {
            w.see(step);
        }
    }
}
