//! The marks of one observer's pass: its list's slots marked as listed, its shown targets found
//! among them, and what is left listed only (the candidates to enter). A quiet observer's are
//! marked from its seers instead ([`Pass::mark_seers`]).

use super::{NO_SLOT, Owned, Pass};
use crate::index::{AoiIndex, Touches};

/// Each observer's pass takes the next four mark values: `epoch` listed and not yet found, `+ 1`
/// found ([`Pass::find_listed`]), `+ 2` to be judged but not listed ([`Pass::mark_seers`]).
const EPOCH_STEP: u32 = 4;

/// A mark's offset from the pass's epoch for a target to judge that is not listed.
const UNLISTED: u32 = 2;

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
    /// for a quiet observer `st`: a changed target that it sees now is marked as listed and kept
    /// in `changed_listed` (in the seers' order); one that it saw and no longer sees, and a
    /// target lingering (`st.lingering`: not listed unless it changed, and then a seer), are
    /// marked to be judged ([`Self::to_judge`]). Those are the only targets whose judgement can
    /// differ from the last update's ([`Pass::decide`]), and the list is not read. Their places
    /// among the shown targets are kept in `judged_at`, ascending: each found by a binary search
    /// of `shown` by entity (a slot names its entity until the next update), so the pass need
    /// not test every shown target's slot.
    ///
    /// [`SeersByObserver`]: super::SeersByObserver
    pub(super) fn mark_seers(&mut self, st: &Owned, seers: &[(u32, bool)], index: &AoiIndex) {
        self.next_epoch();
        self.judged_at.clear();
        let targets = seers.iter().map(|&(t, _)| t).chain(st.lingering.iter().copied());
        for t in targets {
            let target = index.entities[t as usize];
            if let Ok(at) = st.shown.binary_search_by_key(&target, |sn| sn.target) {
                self.judged_at.push(at as u32);
            }
        }
        self.judged_at.sort_unstable();
        self.judged_at.dedup();
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
        for &t in &st.lingering {
            let mark = &mut self.marks[t as usize];
            if *mark != listed {
                *mark = unlisted;
            }
        }
        #[cfg(debug_assertions)]
        self.check_seers(st, index);
        #[cfg(not(debug_assertions))]
        let _ = index;
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
    /// listed), and as listed exactly the seers in the list.
    #[cfg(debug_assertions)]
    fn check_seers(&self, st: &Owned, index: &AoiIndex) {
        let touches = &index.touches;
        let list = &index.lists[st.slot as usize];
        let (bands, p) = (touches.quiet_bands(st.slot), index.slots[st.slot as usize].p);
        // A changed target that stayed in one band (its rules are not checked here).
        let stayed = |t: u32| {
            bands.is_some_and(|b| {
                let (before, now) = (index.starts[t as usize], index.slots[t as usize].p);
                b.same_band(crate::visibility::dist2(p, before), crate::visibility::dist2(p, now))
            })
        };
        let judged = |t: u32| touches.is_changed(t) && touches.was_shortlisted(t) && !stayed(t);
        for &t in list.iter().filter(|&&t| judged(t)) {
            assert!(
                self.changed_listed.contains(&t),
                "listed target slot {t} changed: it should be among the observer's seers"
            );
        }
        for &t in &st.shown_slots {
            if t == NO_SLOT || judged(t) || !list.contains(&t) {
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
