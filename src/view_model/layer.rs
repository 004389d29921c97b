//! The view layer: what observers with view-model components see, from what the index finds.
//!
//! The index treats such an observer (its slot is *owned* by the layer, [`Slot::owned`]) like any
//! other, with its view grown by its hysteresis margin, but the pair engine leaves its
//! `InterestSet`, its messages and its `Watched` counts to this layer. Every update the layer
//! walks each owned observer's index list (what the grown view sees, every rule applied) and
//! what it showed last update, and decides with the rules of [`crate::view_model`]: holds,
//! lingers, leaves, enters under the budget, tiers. An observer that gains a view-model
//! component is handed over with the set it had; one that loses them all gets the plain set
//! back (only the differences as messages), and is the engine's again from the next update.
//!
//! Cost per update: `O(list + shown)` per owned observer the update touched ([`Touches`]: it or
//! a target it sees changed) or that has targets lingering or waiting, plus sorting its entering
//! candidates; the others are skipped, since the pass would leave them as they are. Nothing at
//! all while no observer has a view-model component.
//!
//! Here: the layer's state, its system and each observer's pass; the decisions for an observer
//! that keeps a view-model component in [`decide`], hand-overs in [`handover`].
//!
//! [`Touches`]: crate::index::Touches
//! [`Slot::owned`]: crate::slot::Slot::owned

use bevy_ecs::{entity::EntityHashMap, prelude::*, query::QueryItem};

use crate::{
    components::{InterestSet, ViewRange, ViewRect},
    index::AoiIndex,
    interest::AoiPairEngine,
    messages::{EnterView, LeaveReason, LeaveView, TierChanged},
    settings::AoiStats,
    view_model::{EnterBudget, ViewHysteresis, ViewTiers},
    watch::WatchTracker,
};

mod decide;
mod handover;

use decide::enter_reason;

/// A shown target's slot when it is no longer tracked.
const NO_SLOT: u32 = u32::MAX;

/// One target an owned observer shows.
#[derive(Clone, Copy, Debug)]
struct Shown {
    target: Entity,
    /// Its slot, refreshed when the index renumbered or freed it.
    slot: u32,
    /// Consecutive updates spent beyond the grown view.
    linger: u32,
    tier: u8,
    /// Shown only thanks to the hysteresis (beyond the view itself).
    held: bool,
}

/// One owned observer.
#[derive(Debug)]
struct Owned {
    observer: Entity,
    /// Sorted by target, like the `InterestSet` it is copied to.
    shown: Vec<Shown>,
    /// Whether its shown targets count for the `Watched` marker.
    counted: bool,
    waiting: u32,
    /// The targets waiting for its budget at the end of the last update, in no order.
    waited: Vec<Entity>,
    /// Shown targets held by the hysteresis (beyond the view), and those of them lingering
    /// (beyond the grown view too), after the last update.
    held: u32,
    lingering: u32,
    /// Its slot, and how many times the index had renumbered when the slots were last looked up.
    slot: u32,
    renumbers: usize,
    /// Its set has not been written by the layer yet.
    fresh: bool,
}

/// The layer's state and this update's messages.
#[derive(Resource, Default)]
pub(crate) struct ViewLayer {
    owned: Vec<Owned>,
    by_observer: EntityHashMap<()>,
    /// Per slot, in the pass over one observer: `epoch` while the slot is in its list and not
    /// found among its shown targets, `epoch + 1` once found there; older values mean neither.
    marks: Vec<u32>,
    /// This pass's mark (even, from 2; advanced by 2 each pass).
    epoch: u32,
    /// This observer's qualifying targets that are not shown: squared distance, entity, slot.
    candidates: Vec<(f32, Entity, u32)>,
    /// The entering candidates, sorted, and those of them that waited for the budget last
    /// update, sorted.
    sorted_admitted: Vec<Entity>,
    after_waiting: Vec<Entity>,
    /// The candidates entering now, sorted by entity to merge into `shown`.
    entering: Vec<Shown>,
    /// A handed-back observer's plain set, sorted before it is written.
    sorted: Vec<(Entity, u8)>,
    /// This update's messages, written after the engine's.
    pub enters: Vec<EnterView>,
    pub leaves: Vec<LeaveView>,
    pub tier_changes: Vec<TierChanged>,
}

/// Totals of one update, for [`AoiStats`].
#[derive(Default)]
struct Totals {
    held: usize,
    returned: usize,
    waiting: usize,
}

/// What the layer reads of an owned observer.
type ObserverItem = (
    Option<&'static ViewRange>,
    Option<&'static ViewRect>,
    Option<&'static ViewHysteresis>,
    Option<&'static EnterBudget>,
    Option<&'static ViewTiers>,
    &'static mut InterestSet,
);

/// One owned observer's [`ObserverItem`], as the query gives it.
type ObserverView<'w, 's> = QueryItem<'w, 's, ObserverItem>;

/// Runs the view layer (see the module doc) after the pair engine.
pub(crate) fn update_view_layer(
    mut index: ResMut<AoiIndex>,
    mut layer: ResMut<ViewLayer>,
    mut work: ResMut<AoiPairEngine>,
    mut stats: ResMut<AoiStats>,
    mut observers: Query<ObserverItem>,
) {
    let layer = &mut *layer;
    layer.enters.clear();
    layer.leaves.clear();
    layer.tier_changes.clear();
    if layer.owned.is_empty() && index.newly_owned.is_empty() {
        stats.held = 0;
        stats.returned = 0;
        stats.waiting = 0;
        stats.tier_changes = 0;
        return;
    }
    let watch = &mut work.0.watch;
    layer.take_over(&mut index, &observers, watch);
    if layer.marks.len() < index.slots.len() {
        layer.marks.resize(index.slots.len(), 0);
    }
    let mut totals = Totals::default();
    let mut owned = core::mem::take(&mut layer.owned);
    let mut dropped = false;
    for i in 0..owned.len() {
        // The next observer's shown targets and list, asked for while this one is decided (its
        // `shown` is the pass's largest read: 24 bytes a target).
        if let Some(next) = owned.get(i + 1) {
            crate::prefetch::prefetch(&next.shown);
            if let Some(list) = index.lists.get(next.slot as usize) {
                crate::prefetch::prefetch(list);
            }
        }
        let st = &mut owned[i];
        if !needs_look(st, &index) {
            // Nothing it sees moved or changed: the pass would leave it as it is.
            totals.held += st.held as usize;
            continue;
        }
        let keep = layer.evaluate(st, &index, &mut observers, watch, &mut totals);
        if !keep {
            dropped = true;
            layer.by_observer.remove(&st.observer);
            if let Some(s) = index.slot_of(st.observer) {
                index.release(s);
            }
        }
    }
    if dropped {
        owned.retain(|st| layer.by_observer.contains_key(&st.observer));
    }
    layer.owned = owned;
    stats.held = totals.held;
    stats.returned = totals.returned;
    stats.waiting = totals.waiting;
    stats.tier_changes = layer.tier_changes.len();
}

impl ViewLayer {
    /// One owned observer's update; `false` when the layer gives it back (it stopped observing
    /// or has no view-model component any more).
    fn evaluate(
        &mut self,
        st: &mut Owned,
        index: &AoiIndex,
        observers: &mut Query<ObserverItem>,
        watch: &mut Option<WatchTracker>,
        totals: &mut Totals,
    ) -> bool {
        // Slots only change meaning when the index renumbers them (a freed slot is reused from
        // the next update on, by when its target has left here).
        if st.renumbers != index.renumbers() {
            st.renumbers = index.renumbers();
            for sn in &mut st.shown {
                sn.slot = index.slot_of(sn.target).unwrap_or(NO_SLOT);
            }
        }
        st.slot = index.slot_of(st.observer).unwrap_or(NO_SLOT);
        let slot = (st.slot != NO_SLOT && index.slots[st.slot as usize].is_observer()).then_some(st.slot);
        let o = slot.map(|s| &index.slots[s as usize]);
        // Counting follows the observer's layers now: recount what it shows if they changed.
        if let Some(w) = watch {
            let counts = o.is_some_and(|o| w.counts(o.rules.member));
            if counts != st.counted {
                for sn in &st.shown {
                    if counts { w.inc(sn.target) } else { w.dec(sn.target) }
                }
                st.counted = counts;
            }
        }
        let item = observers.get_mut(st.observer).ok();
        let (Some(s), Some(o), Some(mut item)) = (slot, o, item) else {
            self.stop_observing(st, index, observers);
            return false;
        };
        self.mark_listed(&index.lists[s as usize]);
        if !o.layered() {
            self.hand_back(st, s, index, &mut item, watch);
            return false;
        }
        self.decide(st, s, index, &mut item, watch, totals);
        true
    }

    /// Starts an observer's pass: marks the slots of its `list` as listed.
    fn mark_listed(&mut self, list: &[u32]) {
        self.epoch = self.epoch.wrapping_add(2);
        if self.epoch < 2 {
            // Wrapped: no stale mark may match (0 and 1 are never an epoch).
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 2;
        }
        for &t in list {
            self.marks[t as usize] = self.epoch;
        }
    }

    /// Whether shown target `sn` is in the list marked by [`Self::mark_listed`] (found); marks
    /// its slot found, so later calls for the same slot say `false`.
    fn find_listed(&mut self, sn: &Shown) -> bool {
        let listed = sn.slot != NO_SLOT && self.marks[sn.slot as usize] == self.epoch;
        if listed {
            self.marks[sn.slot as usize] = self.epoch + 1;
        }
        listed
    }

    /// Whether listed slot `t` is not shown: listed by [`Self::mark_listed`] and not found by
    /// [`Self::find_listed`] since.
    fn listed_only(&self, t: u32) -> bool {
        self.marks[t as usize] == self.epoch
    }

    /// Records `sn` leaving `observer`'s view (uncounting it when `watch` is given).
    fn leave(&mut self, observer: Entity, sn: &Shown, reason: LeaveReason, watch: Option<&mut WatchTracker>) {
        self.leaves.push(LeaveView {
            observer,
            target: sn.target,
            tier: sn.tier,
            reason,
        });
        if let Some(w) = watch {
            w.dec(sn.target);
        }
    }

    /// The observers owned by the layer that show `target` now: a binary search in each one's
    /// shown targets.
    pub fn observers_showing(&self, target: Entity) -> impl Iterator<Item = Entity> + '_ {
        self.owned
            .iter()
            .filter(move |st| st.shown.binary_search_by_key(&target, |sn| sn.target).is_ok())
            .map(|st| st.observer)
    }
}

/// Whether the layer must look at owned observer `st` this update: something touched it (see
/// [`Touches`](crate::index::Touches)), or it has targets lingering or waiting, or it is new here,
/// or its slot is not the one it knows (freed, or renumbered: then the slots of what it shows are
/// looked up again when it is next looked at).
fn needs_look(st: &Owned, index: &AoiIndex) -> bool {
    st.fresh
        || st.waiting > 0
        || st.lingering > 0
        || index.entities.get(st.slot as usize) != Some(&st.observer)
        || index.touches.is_touched(st.slot)
}

/// The slot of shown target `sn` while the index tracks it (a freed slot still names its
/// entity until the next update).
fn target_slot(index: &AoiIndex, sn: &Shown) -> Option<u32> {
    (index.entities.get(sn.slot as usize) == Some(&sn.target)).then_some(sn.slot)
}
