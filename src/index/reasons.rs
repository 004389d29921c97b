//! Why a pair entered or left: [`EnterReason`] and [`LeaveReason`] from the pair's two slots at
//! the start and at the end of the update.
//!
//! The index keeps, until the update's messages are written, the start-of-update record of every
//! slot that *turned* this update: joined or left the index, became or stopped being an
//! observer, changed rules, or lost its `Position`. A slot that only moved or changed its view
//! did not turn; a pair of two such slots is decided by the distance, which costs one lookup per
//! slot.

use super::AoiIndex;
use crate::{
    messages::{EnterReason, LeaveReason},
    slot::{OldView, Slot},
    visibility::{Rules, verdict},
};

/// The marker of a slot that did not turn this update.
pub(super) const NOT_TURNED: u32 = u32::MAX;

/// What the reasons read of a slot at one moment.
#[derive(Clone, Copy)]
struct Moment {
    indexed: bool,
    observer: bool,
    rules: Rules,
}

impl Moment {
    fn now(slot: &Slot) -> Self {
        Self {
            indexed: slot.in_grid(),
            observer: slot.is_observer(),
            rules: slot.rules,
        }
    }

    fn before(old: &OldView) -> Self {
        Self {
            indexed: old.in_grid,
            observer: old.in_grid && old.r2 >= 0.0,
            rules: old.rules,
        }
    }
}

/// Whether the slot changed more than its position or view since it had view `old`.
pub(super) fn turned(old: &OldView, slot: &Slot) -> bool {
    !slot.has_position()
        || slot.in_grid() != old.in_grid
        || slot.is_observer() != Moment::before(old).observer
        || slot.rules != old.rules
}

impl AoiIndex {
    /// Slot `s` at the start of the update.
    fn before(&self, s: u32) -> Moment {
        match self.turned[s as usize] {
            NOT_TURNED => Moment::now(&self.slots[s as usize]),
            at => Moment::before(&self.turns[at as usize].1),
        }
    }

    /// Whether no slot turned this update: every enter is then [`EnterReason::CameIntoRange`]
    /// and every leave [`LeaveReason::OutOfRange`] (the common update, where entities only move).
    #[inline]
    pub fn nothing_turned(&self) -> bool {
        self.turns.is_empty()
    }

    /// Whether observer slot `o` was not an observer in the index at the start of the update:
    /// every enter of its is [`EnterReason::Appeared`] (the message writer asks once per
    /// observer, since the engine lists each observer's enters together).
    #[inline(never)]
    pub fn observer_appeared(&self, o: u32) -> bool {
        self.turned[o as usize] != NOT_TURNED && !self.before(o).observer
    }

    /// Why observer slot `o` started seeing target slot `t` this update, the budget aside (the
    /// view layer knows that one). Both are indexed now. Valid until the messages are written.
    #[inline]
    pub fn enter_reason(&self, o: u32, t: u32) -> EnterReason {
        if self.turned[o as usize] == NOT_TURNED && self.turned[t as usize] == NOT_TURNED {
            EnterReason::CameIntoRange
        } else {
            self.turned_enter_reason(o, t)
        }
    }

    /// [`Self::enter_reason`] when `o` or `t` turned.
    #[inline(never)]
    fn turned_enter_reason(&self, o: u32, t: u32) -> EnterReason {
        let (bo, bt) = (self.before(o), self.before(t));
        let (no, nt) = (&self.slots[o as usize], &self.slots[t as usize]);
        if !bo.observer || !bt.indexed {
            EnterReason::Appeared
        } else if bo.rules.instance != bt.rules.instance {
            EnterReason::InstanceChanged
        } else if verdict(bo.rules.sees, &bt.rules) != verdict(no.rules.sees, &nt.rules) {
            EnterReason::RulesChanged
        } else {
            EnterReason::CameIntoRange
        }
    }

    /// Why observer slot `o` stopped seeing target slot `t` this update, which it saw at its
    /// start; `None` for an entity the index no longer tracks. Valid until the messages are
    /// written.
    #[inline]
    pub fn leave_reason(&self, o: Option<u32>, t: Option<u32>) -> LeaveReason {
        let quiet = |s: Option<u32>| s.is_some_and(|s| self.turned[s as usize] == NOT_TURNED);
        if quiet(o) && quiet(t) {
            LeaveReason::OutOfRange
        } else {
            self.turned_leave_reason(o, t)
        }
    }

    /// [`Self::leave_reason`] when `o` or `t` turned or is gone.
    #[inline(never)]
    fn turned_leave_reason(&self, o: Option<u32>, t: Option<u32>) -> LeaveReason {
        // A slot and its state, if its entity is still tracked.
        let tracked = |s: Option<u32>| {
            s.map(|s| (s, &self.slots[s as usize]))
                .filter(|(_, slot)| slot.has_position())
        };
        let Some((o, no)) = tracked(o).filter(|(_, no)| !no.in_grid() || no.is_observer()) else {
            return LeaveReason::ObserverGone;
        };
        let Some((t, nt)) = tracked(t) else {
            return LeaveReason::TargetGone;
        };
        let (bo, bt) = (self.before(o), self.before(t));
        if !no.in_grid() || !nt.in_grid() {
            LeaveReason::BadInput
        } else if no.rules.instance != nt.rules.instance {
            LeaveReason::InstanceChanged
        } else if verdict(bo.rules.sees, &bt.rules) != verdict(no.rules.sees, &nt.rules) {
            LeaveReason::RulesChanged
        } else {
            LeaveReason::OutOfRange
        }
    }

    /// Records the slot of change `i` of this tick's shortlist if it turned (before the end of
    /// the tick resets the slot and clears the shortlist).
    #[inline]
    pub(super) fn record_if_turned(&mut self, i: usize) {
        let s = self.changes[i].slot;
        let slot = &self.slots[s as usize];
        // Every turn changes the view: a slot that only moved is done with one flag.
        if !slot.view_changed() {
            return;
        }
        let old = self.old_views[s as usize];
        if turned(&old, slot) {
            self.turned[s as usize] = self.turns.len() as u32;
            self.turns.push((s, old));
        }
    }

    /// Forgets this update's turns once its messages are written.
    pub(super) fn forget_turns(&mut self) {
        for (s, _) in self.turns.drain(..) {
            self.turned[s as usize] = NOT_TURNED;
        }
    }
}
