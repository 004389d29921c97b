//! The marks of one observer's pass: its list's slots marked as listed, its shown targets found
//! among them, and what is left listed only (the candidates to enter).

use super::{NO_SLOT, Pass};
use crate::index::Touches;

impl Pass {
    /// Starts an observer's pass: marks the slots of its `list` as listed. For a quiet observer
    /// (`quiet`: the index's changed slots, and whether targets it shows linger) its changed
    /// targets are also kept, in list order, in `changed_listed`, and only they are marked while
    /// nothing lingers (a lingering target is told from the others by not being listed).
    pub(super) fn mark_listed(&mut self, list: &[u32], quiet: Option<(&Touches, bool)>) {
        self.epoch = self.epoch.wrapping_add(2);
        if self.epoch < 2 {
            // Wrapped: no stale mark may match (0 and 1 are never an epoch).
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 2;
        }
        self.changed_listed.clear();
        match quiet {
            None => {
                for &t in list {
                    self.marks[t as usize] = self.epoch;
                }
            }
            Some((touches, lingering)) => {
                for &t in list {
                    if touches.is_changed(t) {
                        self.marks[t as usize] = self.epoch;
                        self.changed_listed.push(t);
                    } else if lingering {
                        self.marks[t as usize] = self.epoch;
                    }
                }
            }
        }
    }

    /// Whether the shown target of slot `t` is in the list marked by [`Self::mark_listed`]
    /// (found); marks its slot found, so later calls for the same slot say `false`.
    pub(super) fn find_listed(&mut self, t: u32) -> bool {
        let listed = t != NO_SLOT && self.marks[t as usize] == self.epoch;
        if listed {
            self.marks[t as usize] = self.epoch + 1;
        }
        listed
    }

    /// Whether listed slot `t` is not shown: listed by [`Self::mark_listed`] and not found by
    /// [`Self::find_listed`] since.
    pub(super) fn listed_only(&self, t: u32) -> bool {
        self.marks[t as usize] == self.epoch
    }
}
