//! The per-slot marks a recompute diffs its observer's old list with ([`Marks`]), and the pool
//! that lends them to the scan tasks ([`MarksPool`]).

use std::sync::{Mutex, PoisonError};

/// Per slot: the epoch at which it was last seen in the list being recomputed (a `u32` for every
/// slot of the index, grown on first use).
#[derive(Default)]
pub(crate) struct Marks {
    marks: Vec<u32>,
    epoch: u32,
}

impl Marks {
    /// A fresh even mark value for an index of `slots` slots; old marks can never collide with
    /// it.
    pub fn next_epoch(&mut self, slots: usize) -> u32 {
        if self.marks.len() < slots {
            self.marks.resize(slots, 0);
        }
        if self.epoch >= u32::MAX - 2 {
            self.marks.fill(0);
            self.epoch = 0;
        }
        self.epoch += 2;
        self.epoch
    }
}

impl core::ops::Index<usize> for Marks {
    type Output = u32;

    #[inline(always)]
    fn index(&self, slot: usize) -> &u32 {
        &self.marks[slot]
    }
}

impl core::ops::IndexMut<usize> for Marks {
    #[inline(always)]
    fn index_mut(&mut self, slot: usize) -> &mut u32 {
        &mut self.marks[slot]
    }
}

/// The [`Marks`] of the observer scans, lent to one task at a time for its whole run and given
/// back after: there are as many as tasks ran at once (the threads), not one per task, so the
/// scans can be split finely without a slot count of `u32`s for each part (at a million
/// entities, 4 MB each).
#[derive(Default)]
pub(crate) struct MarksPool(Mutex<Vec<Marks>>);

impl MarksPool {
    /// Marks no other task holds (new ones, empty, when all are lent).
    pub fn lend(&self) -> Marks {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    /// Takes back marks [`Self::lend`] gave.
    pub fn give_back(&self, marks: Marks) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(marks);
    }

    /// How many marks the pool holds (all of them between scans).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Marks, MarksPool};

    #[test]
    fn marks_given_back_are_lent_again_with_their_epoch() {
        let pool = MarksPool::default();
        let mut marks = pool.lend();
        let e = marks.next_epoch(8);
        marks[3] = e;
        pool.give_back(marks);
        assert_eq!(pool.len(), 1, "the pool should keep the marks given back");
        let mut again = pool.lend();
        assert_eq!(pool.len(), 0, "lent marks should leave the pool");
        assert_eq!(again[3], e, "the same marks should be lent again, not new ones");
        let next = again.next_epoch(8);
        assert!(next > e, "a later epoch should never equal an earlier mark");
        assert_ne!(again[3], next, "an old mark should not read as this epoch's");
        let other = pool.lend();
        assert_eq!(
            other.marks.len(),
            0,
            "with all marks lent, new empty ones should be made"
        );
    }

    #[test]
    fn epochs_wrap_by_clearing_the_marks() {
        let mut marks = Marks {
            marks: vec![u32::MAX - 1; 4],
            epoch: u32::MAX - 1,
        };
        let e = marks.next_epoch(4);
        assert_eq!(e, 2, "the epoch should start again after a wrap");
        assert!(
            (0..4).all(|s| marks[s] != e),
            "no old mark should equal the first epoch after a wrap"
        );
    }
}
