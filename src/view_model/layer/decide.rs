//! The update of an owned observer that keeps a view-model component: what it shows holds,
//! lingers or leaves; the qualifying targets it does not show enter under its budget, nearest
//! first; every shown target gets its tier (the rules of [`crate::view_model`]).

use bevy_ecs::prelude::*;

use super::{NO_SLOT, Owned, Pass, Shown, ViewParts, shown::merge_by_target, target_slot};
use crate::{
    index::{AoiIndex, BandEdge, QuietBands, TIER_BOUNDS},
    messages::{EnterReason, EnterView, TierChanged},
    prefetch::{AHEAD, prefetch_record},
    rules::AoiVisibility,
    slot::Slot,
    view_model::tier_at,
    visibility::{ObserverState, dist2, rect_r2, sees, within},
};

/// Which of an owned observer's shown targets its pass judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Judged {
    /// Every one: it or its view changed (other than by a move its flip scan reported), or targets
    /// wait for its budget.
    Every,
    /// A quiet observer's changed and lingering ones, found by walking its list and what it shows
    /// ([`Pass::mark_listed`], [`Pass::unchanged_run`]).
    Walked,
    /// The changed targets and the due lingering ones of an observer that is quiet or only moved,
    /// marked from its seers and `Owned::lingering` ([`Pass::mark_seers`]) without reading its
    /// list.
    Seers,
}

/// An owned observer's view as the layer's rules read it: its position and its view components'
/// values, kept in [`Owned::view`] from its last pass that read its components (a quiet
/// observer's pass does not read them: they have not changed since). The pass reads a copy with
/// its thresholds lent (`T`): from the components ([`Self::of`]), or from the kept view
/// ([`Self::with_thresholds`]).
#[derive(Debug, Default)]
pub(super) struct LayerView<T = Vec<f32>> {
    /// The observer's position.
    p: [f32; 3],
    /// Its radius squared, or its rectangle's `rect_r2`.
    r2: f32,
    /// Its rectangle's half extents, if it has one.
    rect: Option<[f32; 2]>,
    /// The hysteresis margin and `linger_ticks` (0 and 0 without hysteresis).
    margin: f32,
    linger: u32,
    /// Enters allowed per update (`usize::MAX` without a budget).
    budget: usize,
    /// The tier thresholds (none without tiers), and whether it has [`ViewTiers`] (its set keeps
    /// tiers).
    ///
    /// [`ViewTiers`]: crate::ViewTiers
    thresholds: T,
    tiered: bool,
}

impl<'a> LayerView<&'a [f32]> {
    /// The view of an observer at `p` with view components `parts`.
    pub(super) fn of(parts: &ViewParts<'a>, p: [f32; 3]) -> Self {
        let &(range, rect, hysteresis, budget, tiers) = parts;
        let (r2, rect) = match (range, rect) {
            (_, Some(v)) => {
                let half = [v.half_width, v.half_height];
                (rect_r2(half), Some(half))
            }
            (Some(r), None) => (r.radius * r.radius, None),
            (None, None) => unreachable!("an indexed observer should have a view component"),
        };
        let (margin, linger) = hysteresis.map_or((0.0, 0), |h| (h.margin, h.linger_ticks));
        Self {
            p,
            r2,
            rect,
            margin,
            linger,
            budget: budget.map_or(usize::MAX, |b| b.0 as usize),
            thresholds: tiers.map_or(&[][..], |t| &t.thresholds[..]),
            tiered: tiers.is_some(),
        }
    }
}

impl LayerView {
    /// Keeps a copy of `view`.
    pub(super) fn keep(&mut self, view: &LayerView<&[f32]>) {
        (self.p, self.r2, self.rect) = (view.p, view.r2, view.rect);
        (self.margin, self.linger, self.budget) = (view.margin, view.linger, view.budget);
        self.tiered = view.tiered;
        if self.thresholds != view.thresholds {
            self.thresholds.clear();
            self.thresholds.extend_from_slice(view.thresholds);
        }
    }

    /// The same view from `p` (the observer moved, nothing else changed).
    pub(super) fn move_to(&mut self, p: [f32; 3]) {
        self.p = p;
    }

    /// Takes its thresholds out, to lend them to a copy of it ([`Self::with_thresholds`]) while
    /// the observer is decided; [`Self::put_thresholds_back`] after.
    pub(super) fn take_thresholds(&mut self) -> Vec<f32> {
        core::mem::take(&mut self.thresholds)
    }

    /// Puts back the thresholds [`Self::take_thresholds`] took.
    pub(super) fn put_thresholds_back(&mut self, thresholds: Vec<f32>) {
        self.thresholds = thresholds;
    }

    /// A copy of this view with its `thresholds` (taken out of it) lent.
    pub(super) fn with_thresholds<'a>(&self, thresholds: &'a [f32]) -> LayerView<&'a [f32]> {
        LayerView {
            p: self.p,
            r2: self.r2,
            rect: self.rect,
            margin: self.margin,
            linger: self.linger,
            budget: self.budget,
            thresholds,
            tiered: self.tiered,
        }
    }
}

impl<T: AsRef<[f32]>> LayerView<T> {
    /// Whether a target beyond its grown view has the same tier wherever it is: every threshold
    /// is within the view (below the radius, or within each half extent of a rectangle), so such
    /// a target is beyond each threshold plus the margin.
    pub(super) fn tier_fixed_beyond(&self) -> bool {
        self.thresholds.as_ref().last().is_none_or(|&d| match self.rect {
            None => d * d < self.r2,
            Some([hw, hh]) => d <= hw.min(hh),
        })
    }

    /// Whether its set keeps tiers (it has [`ViewTiers`](crate::ViewTiers)).
    pub(super) fn tiered(&self) -> bool {
        self.tiered
    }

    /// Whether judging a listed target reads its slot: for the view test when the view is grown
    /// by a margin, or for the tier.
    fn reads_listed_slots(&self) -> bool {
        self.margin != 0.0 || !self.thresholds.as_ref().is_empty()
    }

    /// The contract's own test, the view not grown: `Always` targets are within any view.
    fn inside(&self, t: &Slot) -> bool {
        t.rules.mode == AoiVisibility::Always || within(self.p, self.r2, self.rect, t.p)
    }

    /// The tier at `q` of a target now in `tier`: nearer as soon as it is within a threshold,
    /// farther only beyond the threshold plus the margin.
    fn next_tier(&self, tier: u8, q: [f32; 3]) -> u8 {
        let plain = self.tier_at(q);
        if plain <= tier {
            plain
        } else {
            tier_at(self.p, q, self.rect.is_some(), self.thresholds.as_ref(), self.margin).max(tier)
        }
    }

    /// The tier at `q` with no margin (an entering target's).
    fn tier_at(&self, q: [f32; 3]) -> u8 {
        tier_at(self.p, q, self.rect.is_some(), self.thresholds.as_ref(), 0.0)
    }

    /// The bounds of the tests above on a seen target's place ([`QuietBands`]): the view's edge
    /// ([`Self::inside`]), each threshold with no margin and with the margin
    /// ([`Self::next_tier`], as [`tier_at`] computes them), as squared distances for a disc and
    /// as half sides of squares for a rectangle. `None` for more thresholds than the bands hold.
    pub(super) fn quiet_bands(&self) -> Option<QuietBands> {
        let thresholds = self.thresholds.as_ref();
        if 2 * thresholds.len() > TIER_BOUNDS {
            return None;
        }
        let tiers = (!thresholds.is_empty()).then(|| {
            let mut bounds = [f32::INFINITY; TIER_BOUNDS];
            for (pair, &d) in bounds.chunks_exact_mut(2).zip(thresholds) {
                let grown = d + self.margin;
                let bound = |d: f32| if self.rect.is_some() { d } else { d * d };
                pair.copy_from_slice(&[bound(d), bound(grown)]);
            }
            bounds
        });
        let edge = self.rect.map_or(BandEdge::Disc(self.r2), BandEdge::Rect);
        Some(QuietBands { edge, tiers })
    }
}

impl Pass {
    /// One update of owned observer `st` (slot `s`, its list marked by [`Self::mark_listed`] or
    /// its seers by [`Self::mark_seers`]) that keeps a view-model component, its view `view`.
    /// Unless `judged` is [`Judged::Every`], neither it (but for a move its flip scan reported)
    /// nor its view changed and nothing waits for its budget, so only its changed and lingering
    /// targets are looked at ([`Self::hold_linger_or_leave`]). Whether anything it shows changed
    /// (its set is to be written).
    pub(super) fn decide(
        &mut self,
        st: &mut Owned,
        s: u32,
        index: &AoiIndex,
        view: &LayerView<&[f32]>,
        judged: Judged,
    ) -> bool {
        let (held, retiered, left) = self.hold_linger_or_leave(st, s, index, view, judged);
        let mut dirty = st.fresh | retiered | left;
        dirty |= self.admit(st, s, index, view);
        st.fresh = false;
        self.totals.waiting += st.waiting as usize;
        st.held = held;
        self.totals.held += held as usize;
        dirty
    }

    /// One pass over what the observer shows, its list marked ([`Self::mark_listed`]: what its
    /// grown view sees): a shown target found in the list holds (held by the hysteresis when
    /// beyond the view itself) and may change tier; one not found lingers while its rules allow
    /// and `linger_ticks` last, or leaves (its message recorded, its entry dropped). Then the
    /// listed targets not shown and within the view become candidates, in list order. Returns
    /// how many are held (those lingering are left in `st.lingering`), and whether a tier changed
    /// or a target left.
    ///
    /// For a quiet observer (`judged` not [`Judged::Every`]: its list marked only where the
    /// targets changed, unless some linger) a target that did not change and is listed is kept
    /// as it is: with both ends where they were and the same rules it was listed last update too,
    /// so found, and every test above gives what it gave then (the tier too: `next_tier` returns
    /// the tier it is given at the same distance); nothing waits, so only changed targets can be
    /// new candidates. Where few entities move, that skips loading nearly every shown target's
    /// state and slot, the pass's largest cost; with [`Judged::Seers`] its list is not read
    /// either (its changed targets are its seers, [`Self::mark_seers`]). The same holds for an
    /// observer that only moved, judged by its seers: a target that is not one stayed within its
    /// grown view and between the same bounds of its [`QuietBands`], where every test above
    /// gives what it gave. A lingering target not due is left as it is too (it lingers one update
    /// more, counted from `Shown::beyond_since`).
    fn hold_linger_or_leave(
        &mut self,
        st: &mut Owned,
        s: u32,
        index: &AoiIndex,
        view: &LayerView<&[f32]>,
        judged: Judged,
    ) -> (u32, bool, bool) {
        let (quiet, by_seers) = (judged != Judged::Every, judged == Judged::Seers);
        // Those lingering now are gathered apart and kept at the end (pushing onto the observer's
        // own list in the loop made the compiler reload its other buffers after every push).
        let lingered = !st.lingering.is_empty();
        self.lingering.clear();
        let update = self.update as u32;
        // A quiet observer's count starts from the last update's: what it keeps as it is holds
        // as it held, and each target looked at is taken out of the count, then counted again.
        let mut held = if quiet { st.held } else { 0 };
        let (mut retiered, mut left) = (false, false);
        // What decides whether a target not found may linger: the rules, not the distance.
        let o = &index.slots[s as usize];
        let rules_only = ObserverState {
            p: view.p,
            r2: f32::INFINITY,
            rect: None,
            sees: o.rules.sees,
            instance: o.rules.instance,
        };
        let (mut kept, mut i, len) = (0, 0, st.shown.len());
        (self.next_judged, self.shown_len) = (0, len);
        while i < len {
            if quiet {
                // The targets up to the next one to judge are kept as they are (moved down only
                // after a target left).
                let end = i + self.unchanged_run(&st.shown_slots[i..], index, by_seers, lingered);
                if kept != i {
                    st.shown.copy_within(i..end, kept);
                    st.shown_slots.copy_within(i..end, kept);
                }
                kept += end - i;
                i = end;
                if i == len {
                    break;
                }
            }
            // Judging every shown target loads each one's slot, scattered over the slots: the
            // slot `AHEAD` targets on is asked for meanwhile. Measured (`scenario`, 10k, one
            // thread, medians of alternating runs): uniform, hysteresis 25.5 -> 24.7 ms and tiers
            // 27.7 -> 26.0 (five runs); 5% moving with tiers (the movers judge all) 9.5 -> 8.5
            // (four).
            if !quiet
                && view.reads_listed_slots()
                && let Some(ahead) = st.shown_slots.get(i + AHEAD).and_then(|&a| index.slots.get(a as usize))
            {
                prefetch_record(ahead);
            }
            let (t, mut sn) = (st.shown_slots[i], st.shown[i]);
            i += 1;
            if quiet {
                held -= u32::from(sn.held);
            }
            if self.find_listed(t) {
                sn.lingering = false;
                // Without a margin the list is the view itself (the same test on the same
                // values): a listed target is inside, and its slot is read only for its tier.
                let now_inside = view.margin == 0.0 || view.inside(&index.slots[t as usize]);
                if sn.held && now_inside {
                    self.totals.returned += 1;
                }
                sn.held = !now_inside;
                held += u32::from(sn.held);
                if !view.thresholds.is_empty() || sn.tier != 0 {
                    let tier = view.next_tier(sn.tier, index.slots[t as usize].p);
                    retiered |= retier(&mut self.tier_changes, st.observer, &mut sn, tier);
                }
            } else {
                // Beyond the grown view (lingers), or its rules fail (leaves).
                let tracked = target_slot(index, &sn, t);
                let ts = tracked.map(|t| &index.slots[t as usize]);
                let allowed = ts.is_some_and(|ts| sees(&rules_only, &ts.target()));
                // Beyond since this update if it was listed until now.
                if !sn.lingering {
                    (sn.lingering, sn.beyond_since) = (true, update);
                }
                let beyond = update.wrapping_sub(sn.beyond_since).saturating_add(1);
                if let Some(ts) = ts.filter(|_| allowed && beyond <= view.linger) {
                    sn.held = true;
                    held += 1;
                    // It leaves in the update where its count passes `linger_ticks`.
                    let leaves_in = u64::from(view.linger - beyond) + 1;
                    self.lingering.push((t, self.update.saturating_add(leaves_in)));
                    let tier = view.next_tier(sn.tier, ts.p);
                    retiered |= retier(&mut self.tier_changes, st.observer, &mut sn, tier);
                } else {
                    left = true;
                    let reason = index.leave_reason(Some(s), tracked);
                    self.leave(st.observer, &sn, reason, st.counted);
                    continue;
                }
            }
            st.shown[kept] = sn;
            st.shown_slots[kept] = t;
            kept += 1;
        }
        st.shown.truncate(kept);
        st.shown_slots.truncate(kept);
        if by_seers {
            // Those lingering before that were not judged linger on ([`Self::mark_seers`]).
            st.lingering.retain(|&(t, _)| !self.judged(t));
        } else {
            st.lingering.clear();
        }
        st.lingering.extend_from_slice(&self.lingering);
        st.linger_until = st.lingering.iter().map(|&(_, until)| until).min().unwrap_or(u64::MAX);
        self.candidates.clear();
        let changed_listed = core::mem::take(&mut self.changed_listed);
        let listed = if quiet {
            &changed_listed
        } else {
            &index.lists[s as usize]
        };
        for &t in listed {
            if !self.listed_only(t) {
                continue;
            }
            let ts = &index.slots[t as usize];
            if view.inside(ts) {
                self.candidates
                    .push((dist2(view.p, ts.p), index.entities[t as usize], t));
            }
        }
        self.changed_listed = changed_listed;
        (held, retiered, left)
    }

    /// How many of a quiet observer's shown targets of slots `slots` (the last ones of its
    /// shown targets, from where its pass is) come before the next one to judge: `by_seers`
    /// ([`Judged::Seers`]), the next of the places [`Self::mark_seers`] found (a seer or a
    /// lingering target, [`Self::to_judge`]); else one that changed ([`Touches::is_changed`]), or
    /// (with targets `lingering`) one not listed, found by a tight loop over 4 bytes a target.
    ///
    /// [`Touches::is_changed`]: crate::index::Touches::is_changed
    fn unchanged_run(&mut self, slots: &[u32], index: &AoiIndex, by_seers: bool, lingering: bool) -> usize {
        if by_seers {
            let from = self.shown_len - slots.len();
            let place = self
                .judged_at
                .get(self.next_judged)
                .map_or(self.shown_len, |&at| at as usize);
            self.next_judged += 1;
            debug_assert!(
                place == self.shown_len || (place >= from && self.to_judge(slots[place - from])),
                "a seer's place should hold a target to judge"
            );
            return place - from;
        }
        let touches = &index.touches;
        // Listed: with nothing lingering, every shown target was listed last update.
        let judge = |&t: &u32| t == NO_SLOT || touches.is_changed(t) || (lingering && !self.listed_only(t));
        slots.iter().position(judge).unwrap_or(slots.len())
    }

    /// The nearest candidates enter, up to the budget, nearest first (in list order without a
    /// budget to apply); the others wait (`st.waited`, `st.waiting`). Whether anything entered
    /// or the number waiting changed.
    fn admit(&mut self, st: &mut Owned, s: u32, index: &AoiIndex, view: &LayerView<&[f32]>) -> bool {
        let admitted = self.candidates.len().min(view.budget);
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
            let tier = view.tier_at(index.slots[t as usize].p);
            let sn = Shown::new(target, tier);
            self.entering.push((sn, t));
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
            if st.counted {
                self.watch_edits.push((target, true));
            }
        }
        merge_by_target(&mut st.shown, &mut st.shown_slots, &mut self.entering);
        st.waited.clear();
        st.waited
            .extend(self.candidates[admitted..].iter().map(|&(_, target, _)| target));
        let waiting = (self.candidates.len() - admitted) as u32;
        let changed = admitted > 0 || waiting != st.waiting;
        st.waiting = waiting;
        changed
    }
}

/// Why target slot `t` enters the view of owned observer slot `o`; `waited` (sorted) holds at
/// least those of the entering targets that waited for its budget at the end of the last update.
pub(super) fn enter_reason(index: &AoiIndex, waited: &[Entity], o: u32, t: u32) -> EnterReason {
    if !waited.is_empty() && waited.binary_search(&index.entities[t as usize]).is_ok() {
        EnterReason::WaitedForBudget
    } else {
        index.enter_reason(o, t)
    }
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
