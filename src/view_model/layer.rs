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
//! [`Touches`]: crate::index::Touches

use bevy_ecs::{entity::EntityHashMap, prelude::*};

use crate::{
    components::{InterestSet, ViewRange, ViewRect},
    grid::dist2,
    index::AoiIndex,
    messages::{EnterReason, EnterView, LeaveReason, LeaveView, TierChanged},
    rules::AoiVisibility,
    settings::AoiStats,
    slot::Slot,
    systems::AoiPairEngine,
    view_model::{EnterBudget, ViewHysteresis, ViewTiers, tier_at},
    visibility::{ObserverState, rect_r2, sees, within},
    watch::WatchTracker,
};

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
    /// Found in the observer's list this update.
    found: bool,
    /// Leaving this update.
    leaving: bool,
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
    /// Per slot: the update it was marked in and its place in the observer's `shown`.
    marks: Vec<(u32, u32)>,
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
    for (observer, old_member) in core::mem::take(&mut index.newly_owned) {
        if layer.by_observer.insert(observer, ()).is_some() {
            continue;
        }
        // Handed over with the set it shows (counted by the engine with its old layers).
        let shown = observers.get(observer).map_or(Vec::new(), |item| {
            let set = &item.5;
            set.iter()
                .map(|target| Shown {
                    target,
                    slot: index.slot_of(target).unwrap_or(NO_SLOT),
                    linger: 0,
                    tier: 0,
                    held: false,
                    found: false,
                    leaving: false,
                })
                .collect()
        });
        layer.owned.push(Owned {
            observer,
            shown,
            counted: watch.as_ref().is_some_and(|w| w.counts(old_member)),
            waiting: 0,
            waited: Vec::new(),
            held: 0,
            lingering: 0,
            slot: NO_SLOT,
            renumbers: usize::MAX,
            fresh: true,
        });
    }
    if layer.marks.len() < index.slots.len() {
        layer.marks.resize(index.slots.len(), (0, 0));
    }
    let mut totals = Totals::default();
    let mut owned = core::mem::take(&mut layer.owned);
    let mut dropped = false;
    for st in &mut owned {
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
            // No longer observing: everything leaves; the set (if any) is emptied.
            let o = (st.slot != NO_SLOT).then_some(st.slot);
            for sn in &st.shown {
                self.leave(st.observer, sn, index.leave_reason(o, target_slot(index, sn)), None);
            }
            if let Some(mut item) = observers.get_mut(st.observer).ok()
                && !item.5.holds(&[], false, 0)
            {
                item.5.clear();
            }
            return false;
        };
        let list = &index.lists[s as usize];
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Wrapped: no stale mark may match.
            self.marks.iter_mut().for_each(|m| *m = (0, 0));
            self.epoch = 1;
        }
        let epoch = self.epoch;
        for (i, sn) in st.shown.iter_mut().enumerate() {
            sn.found = false;
            sn.leaving = false;
            if sn.slot != NO_SLOT {
                self.marks[sn.slot as usize] = (epoch, i as u32);
            }
        }
        let mut dirty = st.fresh;
        if !o.layered {
            // Handed back: the set becomes the plain one the index holds.
            st.waited.sort_unstable();
            for &t in list {
                let (e, i) = self.marks[t as usize];
                if e == epoch {
                    st.shown[i as usize].found = true;
                } else {
                    let target = index.entities[t as usize];
                    self.enters.push(EnterView {
                        observer: st.observer,
                        target,
                        tier: 0,
                        reason: enter_reason(index, &st.waited, s, t),
                    });
                    if st.counted
                        && let Some(w) = watch
                    {
                        w.inc(target);
                    }
                }
            }
            for sn in st.shown.iter().filter(|sn| !sn.found) {
                let reason = index.leave_reason(Some(s), target_slot(index, sn));
                self.leave(st.observer, sn, reason, watch.as_mut().filter(|_| st.counted));
            }
            self.sorted.clear();
            self.sorted
                .extend(list.iter().map(|&t| (index.entities[t as usize], 0)));
            self.sorted.sort_unstable();
            if !item.5.holds(&self.sorted, false, 0) {
                item.5.assign(self.sorted.iter().copied(), false, 0);
            }
            return false;
        }
        let (range, rect, hysteresis, budget, tiers) = (item.0, item.1, item.2, item.3, item.4);
        let (r2, rect) = match (range, rect) {
            (_, Some(v)) => {
                let half = [v.half_width, v.half_height];
                (rect_r2(half), Some(half))
            }
            (Some(r), None) => (r.radius * r.radius, None),
            (None, None) => unreachable!("an indexed observer should have a view component"),
        };
        let (margin, linger) = hysteresis.map_or((0.0, 0), |h| (h.margin, h.linger_ticks));
        let budget = budget.map_or(usize::MAX, |b| b.0 as usize);
        let thresholds = tiers.map_or(&[][..], |t| &t.thresholds[..]);
        let po = o.p;
        // The contract's own test, the view not grown: `Always` targets are within any view.
        let inside = |t: &Slot| t.rules.mode == AoiVisibility::Always || within(po, r2, rect, t.p);
        let next_tier = |tier: u8, q: [f32; 3]| {
            let plain = tier_at(po, q, rect.is_some(), thresholds, 0.0);
            if plain <= tier {
                plain
            } else {
                tier_at(po, q, rect.is_some(), thresholds, margin).max(tier)
            }
        };
        self.candidates.clear();
        // Shown targets held by the hysteresis, and those of them lingering, counted as decided.
        let (mut held, mut lingering) = (0u32, 0u32);
        for &t in list {
            let ts = &index.slots[t as usize];
            let (e, i) = self.marks[t as usize];
            if e != epoch {
                if inside(ts) {
                    self.candidates.push((dist2(po, ts.p), ts.entity, t));
                }
                continue;
            }
            let sn = &mut st.shown[i as usize];
            sn.found = true;
            sn.linger = 0;
            let now_inside = inside(ts);
            if sn.held && now_inside {
                totals.returned += 1;
            }
            sn.held = !now_inside;
            held += u32::from(sn.held);
            dirty |= retier(&mut self.tier_changes, st.observer, sn, next_tier(sn.tier, ts.p));
        }
        // Shown but not found: beyond the grown view (lingers), or its rules fail (leaves).
        let rules_only = ObserverState {
            p: po,
            r2: f32::INFINITY,
            rect: None,
            sees: o.rules.sees,
            instance: o.rules.instance,
        };
        for sn in st.shown.iter_mut().filter(|sn| !sn.found) {
            let ts = target_slot(index, sn).map(|t| &index.slots[t as usize]);
            let allowed = ts.is_some_and(|ts| sees(&rules_only, &ts.target()));
            sn.linger += 1;
            if let Some(ts) = ts.filter(|_| allowed && sn.linger <= linger) {
                sn.held = true;
                held += 1;
                lingering += 1;
                dirty |= retier(&mut self.tier_changes, st.observer, sn, next_tier(sn.tier, ts.p));
            } else {
                sn.leaving = true;
            }
        }
        for sn in st.shown.iter().filter(|sn| sn.leaving) {
            dirty = true;
            let reason = index.leave_reason(Some(s), target_slot(index, sn));
            self.leave(st.observer, sn, reason, watch.as_mut().filter(|_| st.counted));
        }
        st.shown.retain(|sn| !sn.leaving);
        // The nearest qualifying targets enter, up to the budget, nearest first; the others
        // wait. Without a budget to apply, they enter in list order.
        let admitted = self.candidates.len().min(budget);
        if admitted < self.candidates.len() {
            let nearest = |a: &(f32, Entity, u32), b: &(f32, Entity, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
            if admitted > 0 {
                self.candidates.select_nth_unstable_by(admitted - 1, nearest);
            }
            self.candidates[..admitted].sort_unstable_by(nearest);
        }
        // Which of them waited for the budget last update (`waited` is in no order): each waiting
        // one looked up in the admitted ones, sorted; nothing to do when none waited.
        self.after_waiting.clear();
        if !st.waited.is_empty() {
            self.sorted_admitted.clear();
            self.sorted_admitted
                .extend(self.candidates[..admitted].iter().map(|&(_, target, _)| target));
            self.sorted_admitted.sort_unstable();
            let admitted_ones = &self.sorted_admitted;
            self.after_waiting
                .extend(st.waited.iter().filter(|w| admitted_ones.binary_search(w).is_ok()));
            self.after_waiting.sort_unstable();
        }
        // A new observer's enters all say it appeared (nothing waited for it): asked once.
        let appeared = admitted > 0 && index.observer_appeared(s);
        self.entering.clear();
        for &(_, target, t) in &self.candidates[..admitted] {
            let tier = tier_at(po, index.slots[t as usize].p, rect.is_some(), thresholds, 0.0);
            self.entering.push(Shown {
                target,
                slot: t,
                linger: 0,
                tier,
                held: false,
                found: true,
                leaving: false,
            });
            self.enters.push(EnterView {
                observer: st.observer,
                target,
                tier,
                reason: if appeared {
                    EnterReason::Appeared
                } else {
                    enter_reason(index, &self.after_waiting, s, t)
                },
            });
            if st.counted
                && let Some(w) = watch
            {
                w.inc(target);
            }
            dirty = true;
        }
        merge_by_target(&mut st.shown, &mut self.entering);
        st.waited.clear();
        st.waited
            .extend(self.candidates[admitted..].iter().map(|&(_, target, _)| target));
        let waiting = (self.candidates.len() - admitted) as u32;
        dirty |= waiting != st.waiting;
        st.waiting = waiting;
        st.fresh = false;
        totals.waiting += waiting as usize;
        (st.held, st.lingering) = (held, lingering);
        totals.held += held as usize;
        if dirty {
            let shown = st.shown.iter().map(|sn| (sn.target, sn.tier));
            item.5.assign(shown, tiers.is_some(), waiting);
        }
        true
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
    let slot = index.slots.get(sn.slot as usize)?;
    (slot.entity == sn.target).then_some(sn.slot)
}

/// Why target slot `t` enters the view of owned observer slot `o`; `waited` (sorted) holds at
/// least those of the entering targets that waited for its budget at the end of the last update.
fn enter_reason(index: &AoiIndex, waited: &[Entity], o: u32, t: u32) -> EnterReason {
    if !waited.is_empty() && waited.binary_search(&index.entities[t as usize]).is_ok() {
        EnterReason::WaitedForBudget
    } else {
        index.enter_reason(o, t)
    }
}

/// Merges `entering` (any order; emptied) into `shown`, keeping `shown` sorted by target: one
/// pass from the back, `O(shown + k log k)` for `k` entering.
fn merge_by_target(shown: &mut Vec<Shown>, entering: &mut Vec<Shown>) {
    if entering.is_empty() {
        return;
    }
    entering.sort_unstable_by_key(|sn| sn.target);
    let (mut i, mut j) = (shown.len(), entering.len());
    shown.resize(i + j, entering[0]);
    for k in (0..shown.len()).rev() {
        if j == 0 {
            break;
        }
        if i > 0 && shown[i - 1].target > entering[j - 1].target {
            shown[k] = shown[i - 1];
            i -= 1;
        } else {
            shown[k] = entering[j - 1];
            j -= 1;
        }
    }
    entering.clear();
}

/// Moves shown target `sn` of `observer` to `tier`, recording a [`TierChanged`] if it differs;
/// whether it did.
fn retier(changes: &mut Vec<TierChanged>, observer: Entity, sn: &mut Shown, tier: u8) -> bool {
    if tier == sn.tier {
        return false;
    }
    sn.tier = tier;
    changes.push(TierChanged {
        observer,
        target: sn.target,
        tier,
    });
    true
}
