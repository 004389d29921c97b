//! The marks of one observer's pass: its list's slots marked as listed, its shown targets found
//! among them, and what is left listed only (the candidates to enter). A quiet observer's are
//! marked from its seers instead ([`Pass::mark_seers`]).

use super::{NO_SLOT, Owned, Pass, look::LingeringDue};
use crate::index::{AoiIndex, Touches};

/// Each observer's pass takes the next four mark values: `epoch` listed and not yet found, `+ 1`
/// found ([`Pass::find_listed`]), `+ 2` to be judged but not listed ([`Pass::mark_seers`]).
const EPOCH_STEP: u32 = 4;

/// A mark's offset from the pass's epoch for a target to judge that is not listed.
const UNLISTED: u32 = 2;

/// [`Pass::mark_seers`] finds the places of the targets to judge by walking an observer's shown
/// targets when they are more than one in this many of them (as after a move), else by a binary
/// search each (as for a quiet observer).
const WALK_FROM: usize = 8;

impl Pass {
    /// Starts an observer's pass: marks the slots of its `list` as listed. For a quiet observer
    /// (`quiet`: the index's changed slots, and whether targets it shows linger) its changed
    /// targets are also kept, in list order, in `changed_listed`, and only they are marked while
    /// nothing lingers (a lingering target is told from the others by not being listed).
    pub(super) fn mark_listed(&mut self, list: &[u32], quiet: Option<(&Touches, bool)>) {
        self.next_epoch();
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

    /// Starts an observer's pass over its seers `seers` ([`SeersByObserver`]) instead of its list,
    /// for an observer `st` judged by them ([`Judged::Seers`]: it is quiet, or it only moved): a
    /// changed target that it sees now is marked as listed and kept in `changed_listed` (in the
    /// seers' order); one that it saw and no longer sees, and a target lingering
    /// (`st.lingering`) that is due ([`LingeringDue`]) or a seer, are marked to be judged
    /// ([`Self::to_judge`]). Those are the only targets whose judgement can differ from the last
    /// update's ([`Pass::decide`]), and the list is not read. Their places among the shown
    /// targets are kept in `judged_at`, ascending: when they are few each is found by a binary
    /// search of `shown` by entity (a slot names its entity until the next update), else by a
    /// walk over the shown targets' slots ([`WALK_FROM`]); the pass need not load every shown
    /// target's slot.
    ///
    /// [`SeersByObserver`]: super::SeersByObserver
    /// [`Judged::Seers`]: super::decide::Judged::Seers
    pub(super) fn mark_seers(&mut self, st: &Owned, seers: &[(u32, bool)], index: &AoiIndex) {
        self.next_epoch();
        self.judged_at.clear();
        let (listed, unlisted) = (self.epoch, self.epoch + UNLISTED);
        for &(t, sees_now) in seers {
            let mark = &mut self.marks[t as usize];
            debug_assert!(
                *mark != listed && *mark != unlisted,
                "the scans should name target slot {t} once among an observer's seers"
            );
            if sees_now {
                *mark = listed;
                self.changed_listed.push(t);
            } else {
                *mark = unlisted;
            }
        }
        // A target lingering before is judged when it is due or a seer; else it is left as it is:
        // it still lingers, with its tier, one update more (`Shown::beyond_since`).
        let due = LingeringDue::of(st, index, self.update);
        let mut lingering = 0;
        for &(t, until) in &st.lingering {
            let mark = &mut self.marks[t as usize];
            if *mark != listed && (*mark == unlisted || due.target(t, until)) {
                *mark = unlisted;
            }
            lingering += usize::from(*mark == unlisted);
        }
        let marks = &self.marks;
        let to_judge = |t: u32| t != NO_SLOT && [listed, unlisted].contains(&marks[t as usize]);
        let lingering_judged = st.lingering.iter().map(|&(t, _)| t).filter(|&t| to_judge(t));
        let judged = seers.iter().map(|&(t, _)| t).chain(lingering_judged);
        // Their places: found by binary search of `shown` when they are few, else by walking the
        // shown targets' slots (4 bytes a target) and testing their marks.
        if (seers.len() + lingering) * WALK_FROM > st.shown.len() {
            for t in judged {
                crate::prefetch::prefetch_record(&index.slots[t as usize]);
            }
            let places = (0..).zip(&st.shown_slots);
            self.judged_at
                .extend(places.filter(|&(_, &t)| to_judge(t)).map(|(at, _)| at));
        } else {
            for t in judged {
                crate::prefetch::prefetch_record(&index.slots[t as usize]);
                let target = index.entities[t as usize];
                if let Ok(at) = st.shown.binary_search_by_key(&target, |sn| sn.target) {
                    self.judged_at.push(at as u32);
                }
            }
            self.judged_at.sort_unstable();
            self.judged_at.dedup();
        }
        #[cfg(debug_assertions)]
        self.check_seers(st, index);
        #[cfg(not(debug_assertions))]
        let _ = index;
    }

    /// Whether target slot `t` was marked or found in this observer's pass (listed, found, or to
    /// be judged though not listed).
    pub(super) fn judged(&self, t: u32) -> bool {
        self.marks[t as usize].wrapping_sub(self.epoch) <= UNLISTED
    }

    /// After [`Self::mark_seers`]: whether shown target slot `t` is to be judged (it changed, or it
    /// lingers), before it is found.
    #[inline]
    pub(super) fn to_judge(&self, t: u32) -> bool {
        let mark = self.marks[t as usize];
        mark == self.epoch || mark == self.epoch + UNLISTED
    }

    /// Debug builds: [`Self::mark_seers`] marked to be judged every shown target that the walk
    /// over the list and the shown targets ([`Self::mark_listed`], [`Pass::decide`]) would judge
    /// (one that changed, other than a change that left it as it was as a target, not on the
    /// update's shortlist, or that stayed in one of the observer's quiet bands, or one not
    /// listed; of an observer that moved, any that did not stay in one band), and as listed
    /// exactly the seers in the list.
    #[cfg(debug_assertions)]
    fn check_seers(&self, st: &Owned, index: &AoiIndex) {
        let touches = &index.touches;
        let list = &index.lists[st.slot as usize];
        let bands = touches.quiet_bands(st.slot);
        // Where a slot was at the start of the update, and is now.
        let moved = |t: u32| touches.is_changed(t) && touches.was_shortlisted(t);
        let now = |t: u32| index.slots[t as usize].p;
        let before = |t: u32| if moved(t) { index.starts[t as usize] } else { now(t) };
        let (o, observer_moved) = (st.slot, moved(st.slot));
        // A target that stayed in one band (its rules are not checked here); an `Always` one is
        // in the view at any distance, so only its tier bounds count.
        let stayed = |t: u32| {
            bands.is_some_and(|b| {
                let ends = ((before(o), before(t)), (now(o), now(t)));
                if index.slots[t as usize].rules.mode == crate::rules::AoiVisibility::Always {
                    b.same_tier_band(ends.0, ends.1)
                } else {
                    b.same_band(ends.0, ends.1)
                }
            })
        };
        // The observer's own move (it was band scanned) or the target's.
        let judged = |t: u32| (observer_moved || moved(t)) && !stayed(t);
        for &t in list.iter().filter(|&&t| judged(t)) {
            assert!(
                self.changed_listed.contains(&t),
                "listed target slot {t} changed: it should be among the observer's seers"
            );
        }
        // Of the targets not listed, one lingering before is judged only when it is due.
        let due = LingeringDue::of(st, index, self.update);
        let judged_unlisted = |t: u32| match st.lingering.iter().find(|&&(l, _)| l == t) {
            Some(&(_, until)) => due.target(t, until),
            None => true,
        };
        for &t in &st.shown_slots {
            let must = if list.contains(&t) {
                judged(t)
            } else {
                judged_unlisted(t)
            };
            if t == NO_SLOT || must {
                assert!(
                    t != NO_SLOT && self.to_judge(t),
                    "shown target slot {t} changed or is not listed: it should be judged"
                );
            }
        }
        for &t in &self.changed_listed {
            assert!(list.contains(&t), "seer slot {t} is seen now: it should be in the list");
        }
        let to_judge: Vec<u32> = (0..st.shown_slots.len() as u32)
            .filter(|&at| self.to_judge(st.shown_slots[at as usize]))
            .collect();
        assert_eq!(
            self.judged_at, to_judge,
            "the places found for the seers and lingering targets should be those of the shown targets marked to judge"
        );
        for &t in list {
            assert!(
                self.marks[t as usize] != self.epoch + UNLISTED,
                "listed slot {t} is marked as no longer seen (or lingering): it should not be listed"
            );
        }
    }

    /// A fresh mark for the next observer's pass; no changed targets kept yet.
    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(EPOCH_STEP);
        if self.epoch < EPOCH_STEP {
            // Wrapped: no stale mark may match (0 to 3 are never an epoch's).
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = EPOCH_STEP;
        }
        self.changed_listed.clear();
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
