//! Records kept in input order until each is settled: a tool whose record for an entry depends
//! on entries after it (pi-tools' call waits for its result, pi-compactions' record for the
//! assistant reply after it) queues the record here and writes the front of the queue as soon
//! as it is settled, so output stays in input order and only unsettled records are held.

use std::collections::VecDeque;

/// A queue of records, each known by its sequence number (its place in the input order).
pub struct Ordered<T> {
    queue: VecDeque<T>,
    /// The sequence number of `queue[0]`.
    base: u64,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered {
            queue: VecDeque::new(),
            base: 0,
        }
    }
}

impl<T> Ordered<T> {
    /// Queues `item` after every record queued before it; its sequence number.
    pub fn push(&mut self, item: T) -> u64 {
        self.queue.push_back(item);
        self.base + self.queue.len() as u64 - 1
    }

    /// The sequence number the next [`push`](Ordered::push) will give.
    pub fn next_seq(&self) -> u64 {
        self.base + self.queue.len() as u64
    }

    /// The record with sequence number `seq`, while it waits.
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut T> {
        let at = seq.checked_sub(self.base)?;
        self.queue.get_mut(usize::try_from(at).ok()?)
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The waiting records, oldest first.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.queue.iter_mut()
    }

    /// Hands `write` the records at the front that are `settled`, oldest first, and stops at
    /// the first that is not (or at `write`'s first error).
    pub fn drain_settled<E>(
        &mut self,
        settled: impl Fn(&T) -> bool,
        mut write: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.queue.front().is_some_and(&settled) {
            let item = self.queue.pop_front().expect("front is settled");
            self.base += 1;
            write(item)?;
        }
        Ok(())
    }

    /// Hands `write` every waiting record, oldest first (the session ended: nothing more can
    /// settle them).
    pub fn drain_all<E>(&mut self, write: impl FnMut(T) -> Result<(), E>) -> Result<(), E> {
        self.drain_settled(|_| true, write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drains what `settled` lets through; the values written.
    fn drained(q: &mut Ordered<(i32, bool)>, all: bool) -> Vec<i32> {
        let mut out = vec![];
        let write = |x: (i32, bool)| {
            out.push(x.0);
            Ok::<_, ()>(())
        };
        if all {
            q.drain_all(write).unwrap();
        } else {
            q.drain_settled(|x| x.1, write).unwrap();
        }
        out
    }

    #[test]
    fn writes_in_order_and_only_settled_fronts() {
        let mut q = Ordered::default();
        let a = q.push((1, false));
        let b = q.push((2, true));
        assert_eq!((a, b, q.next_seq()), (0, 1, 2));
        assert!(
            drained(&mut q, false).is_empty(),
            "the front is not settled"
        );
        q.get_mut(a).unwrap().1 = true;
        assert_eq!(drained(&mut q, false), [1, 2]);
        assert!(q.is_empty() && q.get_mut(a).is_none());
        let c = q.push((3, false));
        assert_eq!(c, 2, "sequence numbers go on after a drain");
        assert_eq!(drained(&mut q, true), [3]);
    }

    #[test]
    fn stops_at_the_first_write_error() {
        let mut q = Ordered::default();
        q.push(1);
        q.push(2);
        assert_eq!(
            q.drain_all(|x| if x == 1 { Err(x) } else { Ok(()) }),
            Err(1)
        );
        assert_eq!(q.next_seq(), 2);
        assert!(!q.is_empty());
    }
}
