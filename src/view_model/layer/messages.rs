//! The view layer's messages of an update, read where its passes wrote them
//! ([`ViewLayer::enters`]).

use super::{Pass, ViewLayer};
use crate::messages::{EnterView, LeaveView, TierChanged};

impl ViewLayer {
    /// This update's enters, each pass's in turn, then the serial end's: the order of the owned
    /// observers, whatever the threads. Read where the passes wrote them (a copy of the first
    /// update's millions would double its peak memory), at an exact count, so that a message
    /// writer reserves once.
    pub fn enters(&self) -> LayerMessages<'_, EnterView> {
        self.messages(|pass| &pass.enters)
    }

    /// This update's leaves, as [`Self::enters`].
    pub fn leaves(&self) -> LayerMessages<'_, LeaveView> {
        self.messages(|pass| &pass.leaves)
    }

    /// This update's tier changes, as [`Self::enters`].
    pub fn tier_changes(&self) -> LayerMessages<'_, TierChanged> {
        self.messages(|pass| &pass.tier_changes)
    }

    /// Messages of one kind (`pick`), each pass's in turn, then the serial end's.
    fn messages<T>(&self, pick: fn(&Pass) -> &Vec<T>) -> LayerMessages<'_, T> {
        let passes = self.passes[..self.used].iter().chain([&self.serial]);
        LayerMessages {
            remaining: passes.clone().map(|pass| pick(pass).len()).sum(),
            passes,
            pick,
            current: [].iter(),
        }
    }
}

/// One kind of the view layer's messages of this update ([`ViewLayer::enters`]).
#[derive(Clone)]
pub(crate) struct LayerMessages<'a, T> {
    /// The passes whose messages are still to come.
    passes: core::iter::Chain<core::slice::Iter<'a, Pass>, core::array::IntoIter<&'a Pass, 1>>,
    pick: fn(&Pass) -> &Vec<T>,
    current: core::slice::Iter<'a, T>,
    remaining: usize,
}

impl<T: Copy> Iterator for LayerMessages<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(&message) = self.current.next() {
                self.remaining -= 1;
                return Some(message);
            }
            self.current = (self.pick)(self.passes.next()?).iter();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Copy> ExactSizeIterator for LayerMessages<'_, T> {}
