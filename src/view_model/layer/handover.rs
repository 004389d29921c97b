//! Observers changing hands between the pair engine and the view layer: taken over with the set
//! they show, given back with the plain set the index holds (only the differences as messages),
//! or let go with everything leaving when they stop observing.

use super::{LayerView, Left, NO_SLOT, Observers, Owned, Pass, Shown, ViewLayer, enter_reason, target_slot};
use crate::{index::AoiIndex, messages::EnterView, watched::WatchTracker};

impl ViewLayer {
    /// Takes over the observers that became owned this update ([`AoiIndex::newly_owned`]), each
    /// with the set it shows now, counted for `Watched` as the engine counted it (with the
    /// layers it was in before).
    pub(super) fn take_over(&mut self, index: &mut AoiIndex, observers: &Observers, watch: Option<&WatchTracker>) {
        for (observer, old_member) in core::mem::take(&mut index.newly_owned) {
            if self.by_observer.insert(observer, ()).is_some() {
                continue;
            }
            let shown: Vec<Shown> = observers.get(observer).map_or(Vec::new(), |item| {
                (item.5.iter()).map(|target| Shown::new(target, 0)).collect()
            });
            let shown_slots = (shown.iter())
                .map(|sn| index.slot_of(sn.target).unwrap_or(NO_SLOT))
                .collect();
            self.owned.push(Owned {
                observer,
                shown,
                shown_slots,
                counted: watch.is_some_and(|w| w.counts(old_member)),
                waiting: 0,
                waited: Vec::new(),
                held: 0,
                lingering: Vec::new(),
                slot: NO_SLOT,
                renumbers: usize::MAX,
                fresh: true,
                linger_until: u64::MAX,
                view: LayerView::default(),
                left: Left::Nothing,
            });
        }
    }
}

impl Pass {
    /// Lets go of owned observer `st`, which no longer observes: everything it shows leaves, and
    /// its set (if it still has one) is emptied.
    pub(super) fn stop_observing(&mut self, st: &Owned, index: &AoiIndex, observers: &mut Observers) {
        let o = (st.slot != NO_SLOT).then_some(st.slot);
        for (sn, &t) in st.shown.iter().zip(&st.shown_slots) {
            self.leave(st.observer, sn, index.leave_reason(o, target_slot(index, sn, t)), false);
        }
        if let Ok(mut item) = observers.get_mut(st.observer)
            && !item.5.holds(&[], false, 0)
        {
            item.5.clear();
        }
    }

    /// Gives owned observer `st` (slot `s`) back to the engine, which lost its last view-model
    /// component: its set becomes the plain one in the index's list, with an enter for each
    /// listed target it did not show and a leave for each shown target not listed.
    pub(super) fn hand_back(&mut self, st: &mut Owned, s: u32, index: &AoiIndex, observers: &mut Observers) {
        let list = &index.lists[s as usize];
        self.mark_listed(list, None);
        st.waited.sort_unstable();
        for (sn, &t) in st.shown.iter().zip(&st.shown_slots) {
            if !self.find_listed(t) {
                let reason = index.leave_reason(Some(s), target_slot(index, sn, t));
                self.leave(st.observer, sn, reason, st.counted);
            }
        }
        for &t in list {
            if !self.listed_only(t) {
                continue;
            }
            let target = index.entities[t as usize];
            self.enters.push(EnterView {
                observer: st.observer,
                target,
                tier: 0,
                reason: enter_reason(index, &st.waited, s, t),
            });
            if st.counted {
                self.watch_edits.push((target, true));
            }
        }
        self.sorted.clear();
        self.sorted
            .extend(list.iter().map(|&t| (index.entities[t as usize], 0)));
        self.sorted.sort_unstable();
        if let Ok(mut item) = observers.get_mut(st.observer)
            && !item.5.holds(&self.sorted, false, 0)
        {
            item.5.assign(self.sorted.iter().copied(), false, 0);
        }
    }
}
