//! Which owned observers a pass looks at, and how it judges each: every shown target, or only the
//! changed and due lingering ones of an observer that is quiet or only moved ([`Judged`]); the
//! next observer's data asked for while one is decided.

use bevy_ecs::prelude::*;

use super::{
    Access, Left, NO_SLOT, Owned, Pass,
    decide::{Judged, LayerView},
    seers::SeersByObserver,
    sets::{assign_shown, edit_set},
};
use crate::{
    components::InterestSet,
    index::{AoiIndex, Touches},
    watched::WatchTracker,
};

impl Pass {
    /// Looks at each owned observer of `run` that needs it ([`needs_look`]).
    pub(super) fn look_at(
        &mut self,
        run: &mut [Owned],
        index: &AoiIndex,
        seers: &SeersByObserver,
        mut observers: Access,
        counts: Option<&WatchTracker>,
    ) {
        // Whether the observers are looked at ([`needs_look`]), known two ahead so that the
        // next one's data is asked for without waiting on the answer.
        let update = self.update;
        let looked_at = |run: &[Owned], k: usize| run.get(k).is_some_and(|st| needs_look(st, index, update));
        let (mut this_one, mut next_one) = (looked_at(run, 0), looked_at(run, 1));
        for i in 0..run.len() {
            // The next observer's shown targets and list, asked for while this one is decided
            // if it will be looked at (its `shown` is the pass's largest read: 16 bytes a
            // target; a quiet observer's pass reads its changed targets' and moves those after
            // a leave down). Asked for every observer, they made an update where nothing moved
            // about 2.5 times slower. Its `shown` up to 2 KiB, not the usual 1 (128 targets, not
            // 64: uniform 10k shows about 78): `scenario --scenario moving5 --entities 10000
            // --hysteresis 10`, one thread, pinned, eight alternating runs, 5.08-5.53 → 4.81-5.26
            // ms an update; uniform 10k with it, three runs, 17.3-18.5 → 16.9-17.7 ms.
            if next_one {
                let next = &run[i + 1];
                crate::prefetch::prefetch(&next.shown_slots);
                crate::prefetch::prefetch_up_to(&next.shown, 2048);
                // Its list, unless it is quiet: then its pass reads its seers and its lingering
                // targets instead (unless the index renumbered since, [`judging`]).
                if judging(next, index, seers) == Judged::Seers {
                    prefetch_seers(seers, next);
                } else if let Some(list) = index.lists.get(next.slot as usize) {
                    crate::prefetch::prefetch(list);
                }
            }
            let after_next = looked_at(run, i + 2);
            let st = &mut run[i];
            let looked = this_one;
            (this_one, next_one) = (next_one, after_next);
            if !looked {
                // Nothing it sees moved or changed: the pass would leave it as it is.
                self.totals.held += st.held as usize;
                continue;
            }
            self.evaluate(st, index, seers, observers.reborrow(), counts);
        }
    }

    /// One owned observer's update; what is left for the serial end goes in `st.left`. An
    /// observer judged by its seers ([`Judged::Seers`]) has the components its last pass read
    /// (`st.view`), where it was or moved to its slot's position, so only its set is looked up,
    /// and only if it changed.
    fn evaluate(
        &mut self,
        st: &mut Owned,
        index: &AoiIndex,
        seers: &SeersByObserver,
        mut observers: Access,
        counts: Option<&WatchTracker>,
    ) {
        let judged = judging(st, index, seers);
        // Where this observer's messages begin.
        let messages = (self.enters.len(), self.leaves.len());
        let mut kept = Vec::new();
        let (s, set, view) = if judged == Judged::Seers {
            if index.touches.is_changed(st.slot) {
                st.view.move_to(index.slots[st.slot as usize].p);
            }
            self.mark_seers(st, seers.of(st.slot), index);
            // Its view as its last pass read it: the thresholds taken out while it is lent.
            kept = st.view.take_thresholds();
            (st.slot, None, st.view.with_thresholds(&kept))
        } else {
            let Some((s, set, view)) = self.read_again(st, index, &mut observers, counts) else {
                return;
            };
            let marking = (judged == Judged::Walked).then_some((&index.touches, !st.lingering.is_empty()));
            self.mark_listed(&index.lists[s as usize], marking);
            (s, set, view)
        };
        let dirty = self.decide(st, s, index, &view, judged);
        if judged == Judged::Seers {
            st.view.put_thresholds_back(kept);
        }
        if !dirty {
            return;
        }
        match set {
            Some(mut set) => self.write_or_edit(&mut set, st, judged, messages),
            None => self.write_or_leave(st, observers, judged, messages),
        }
    }

    /// For owned observer `st`'s pass unless it is judged by its seers: its slots, whether it is
    /// counted for `Watched`, and its view (`st.view`, and the [`QuietBands`] the scans get) read
    /// again. Its slot, its view and, when the pass has the observers to itself, its set (read
    /// with its view, in one lookup); `None` when it was left for the serial end (it no longer
    /// observes, or lost its view-model components).
    ///
    /// [`QuietBands`]: crate::index::QuietBands
    fn read_again<'a>(
        &mut self,
        st: &mut Owned,
        index: &AoiIndex,
        observers: &'a mut Access,
        counts: Option<&WatchTracker>,
    ) -> Option<ReadAgain<'a>> {
        // Slots only change meaning when the index renumbers them (a freed slot is reused from
        // the next update on, by when its target has left here).
        if st.renumbers != index.renumbers() {
            st.renumbers = index.renumbers();
            for (slot, sn) in st.shown_slots.iter_mut().zip(&st.shown) {
                *slot = index.slot_of(sn.target).unwrap_or(NO_SLOT);
            }
        }
        st.slot = index.slot_of(st.observer).unwrap_or(NO_SLOT);
        let slot = (st.slot != NO_SLOT && index.slots[st.slot as usize].is_observer()).then_some(st.slot);
        let o = slot.map(|s| &index.slots[s as usize]);
        // Counting follows the observer's layers now: recount what it shows if they changed.
        if let Some(w) = counts {
            let counted = o.is_some_and(|o| w.counts(o.rules.member));
            if counted != st.counted {
                self.watch_edits.extend(st.shown.iter().map(|sn| (sn.target, counted)));
                st.counted = counted;
            }
        }
        // Its view components, and its set when this pass writes it.
        let item = match observers {
            Access::Shared(q) => (q.get(st.observer).ok()).map(|(a, b, c, d, e, _, _)| ((a, b, c, d, e), None)),
            Access::Exclusive(q) => {
                (q.get_mut(st.observer).ok()).map(|(a, b, c, d, e, set, _)| ((a, b, c, d, e), Some(set)))
            }
        };
        let (Some(s), Some(o), Some((parts, set))) = (slot, o, item) else {
            self.leave_for_serial_end(st, Left::Stop);
            return None;
        };
        if !o.layered() {
            self.leave_for_serial_end(st, Left::HandBack(s));
            return None;
        }
        let view = LayerView::of(&parts, o.p);
        st.view.keep(&view);
        // Its quiet bands follow its view, not its place: looked at again only when it changed
        // other than by a move (a quiet observer's have not changed) or it has none.
        let touches = &index.touches;
        if touches.changed_more_than_moved(s) || !touches.has_quiet_bands(s) {
            let bands = view.quiet_bands();
            if touches.quiet_bands(s) != bands {
                self.quiet_bands.push((s, bands));
            }
        }
        Some((s, set, view))
    }

    /// Writes owned observer `st`'s set from what it shows when this pass has the observers to
    /// itself, else leaves it for the serial end ([`Left::Write`], [`Left::Edit`]), as
    /// [`Self::write_or_edit`].
    fn write_or_leave(&mut self, st: &mut Owned, observers: Access, judged: Judged, messages: (usize, usize)) {
        match observers {
            Access::Exclusive(q) => {
                if let Ok(mut item) = q.get_mut(st.observer) {
                    self.write_or_edit(&mut item.5, st, judged, messages);
                }
            }
            Access::Shared(_) => {
                let left = self.write_left(st, judged, messages);
                self.leave_for_serial_end(st, left);
            }
        }
    }

    /// Writes owned observer `st`'s `set` from what it shows, or edits it by its messages
    /// ([`Self::write_left`]).
    fn write_or_edit(&self, set: &mut InterestSet, st: &Owned, judged: Judged, messages: (usize, usize)) {
        match self.write_left(st, judged, messages) {
            Left::Edit { enters, leaves, .. } => edit_set(set, self, enters, leaves),
            _ => assign_shown(set, st, st.view.tiered()),
        }
    }

    /// How owned observer `st`'s set is brought up to date after its pass: the set of a quiet
    /// observer (`judged`) without tiers, for which nothing waits, changed only by its messages
    /// since `messages` (where its enters and leaves begin), so they are applied as edits,
    /// `O(messages)` ([`Left::Edit`]); any other is written whole ([`Left::Write`]).
    fn write_left(&self, st: &Owned, judged: Judged, messages: (usize, usize)) -> Left {
        let tiered = st.view.tiered();
        let edits = self.enters.len() - messages.0 + self.leaves.len() - messages.1;
        if judged == Judged::Every || tiered || st.waiting > 0 || edits > EDITS_UP_TO {
            Left::Write { tiered }
        } else {
            Left::Edit {
                task: self.task,
                enters: [messages.0 as u32, self.enters.len() as u32],
                leaves: [messages.1 as u32, self.leaves.len() as u32],
            }
        }
    }
}

/// Up to this many messages, a set is edited by them rather than written whole
/// ([`Pass::write_left`]).
const EDITS_UP_TO: usize = 4;

/// What [`Pass::read_again`] read of an owned observer: its slot, its set when the pass has the
/// observers to itself, and its view.
type ReadAgain<'a> = (u32, Option<Mut<'a, InterestSet>>, LayerView<&'a [f32]>);

/// Hints the CPU to bring owned observer `st`'s seers and lingering targets into cache. Out of
/// line: inlined, the pass ran 4% more instructions where everyone moves (`scenario`
/// uniform 10k with `--hysteresis 10`, callgrind), where it is never called.
#[inline(never)]
fn prefetch_seers(seers: &SeersByObserver, st: &Owned) {
    crate::prefetch::prefetch(seers.of(st.slot));
    crate::prefetch::prefetch(&st.lingering);
}

/// Whether the layer must look at owned observer `st` in update `update`: something touched it
/// (see [`Touches`]), or targets wait for it, or a lingering target is due
/// ([`lingering_due`]), or it is new here, or its slot is not the one it knows (freed, or
/// renumbered: then the slots of what it shows are looked up again when it is next looked at).
fn needs_look(st: &Owned, index: &AoiIndex, update: u64) -> bool {
    st.fresh
        || st.waiting > 0
        || lingering_due(st, index, update)
        || index.entities.get(st.slot as usize) != Some(&st.observer)
        || index.touches.is_touched(st.slot)
}

/// Whether a target lingering for owned observer `st` (beyond its grown view at its last pass)
/// must be judged in update `update` ([`LingeringDue`]), or the index renumbered (their slots are
/// stale). A move back into the grown view touches the observer (the target is its seer).
/// Otherwise each is still out there, with the same tier, one update more (`Shown::beyond_since`
/// counts it).
fn lingering_due(st: &Owned, index: &AoiIndex, update: u64) -> bool {
    if st.lingering.is_empty() {
        return false;
    }
    if update >= st.linger_until || st.renumbers != index.renumbers() {
        return true;
    }
    let due = LingeringDue::of(st, index, update);
    st.lingering.iter().any(|&(t, until)| due.target(t, until))
}

/// Which of the targets lingering for an owned observer must be judged in an update.
pub(super) struct LingeringDue<'a> {
    touches: &'a Touches,
    update: u64,
    /// Whether a move may change a lingering target's tier: a threshold lies beyond the view
    /// ([`LayerView::tier_fixed_beyond`]).
    ///
    /// [`LayerView::tier_fixed_beyond`]: super::decide::LayerView::tier_fixed_beyond
    moves_count: bool,
    /// Whether the observer moved (and moves count).
    observer_moved: bool,
}

impl<'a> LingeringDue<'a> {
    /// For owned observer `st` in update `update`.
    pub(super) fn of(st: &Owned, index: &'a AoiIndex, update: u64) -> Self {
        let (touches, moves_count) = (&index.touches, !st.view.tier_fixed_beyond());
        let observer_moved =
            moves_count && index.entities.get(st.slot as usize) == Some(&st.observer) && touches.is_changed(st.slot);
        Self {
            touches,
            update,
            moves_count,
            observer_moved,
        }
    }

    /// Whether lingering target slot `t`, which leaves in update `until` unless it comes back,
    /// must be judged: its time is up, or it changed other than by a move (its rules, or it was
    /// despawned), or it or the observer moved while moves count.
    pub(super) fn target(&self, t: u32, until: u64) -> bool {
        self.update >= until
            || self.touches.changed_more_than_moved(t)
            || (self.moves_count && (self.observer_moved || self.touches.is_changed(t)))
    }
}

/// Which of owned observer `st`'s shown targets its pass judges this update (asked before the
/// pass looks its slots up again): of a quiet one ([`is_quiet`]) its changed and lingering ones,
/// its changed ones being its seers, unless the index renumbered since its last pass (the slots it
/// knows are stale); of one that only moved, the same when its flip scan recorded its seers
/// ([`moved_by_bands`]); else every one.
fn judging(st: &Owned, index: &AoiIndex, seers: &SeersByObserver) -> Judged {
    let slots_known = st.renumbers == index.renumbers();
    if is_quiet(st, index) {
        if slots_known { Judged::Seers } else { Judged::Walked }
    } else if slots_known && moved_by_bands(st, index, seers) {
        Judged::Seers
    } else {
        Judged::Every
    }
}

/// Whether owned observer `st` changed only by a move and its seers name every target whose
/// judgement can differ from its last pass's but its lingering ones: its flip scan's band pass
/// recorded the targets that flip for its grown view or cross one of its quiet bands' bounds
/// ([`SeersByObserver::band_scanned`]: it is owned, its view-model components are as they were,
/// the layer gave it bands), and the targets that jumped recorded themselves. It is in the slot
/// it knows, not new here, and no target waits for its budget.
fn moved_by_bands(st: &Owned, index: &AoiIndex, seers: &SeersByObserver) -> bool {
    !st.fresh
        && st.waiting == 0
        && index.entities.get(st.slot as usize) == Some(&st.observer)
        && seers.band_scanned(st.slot)
}

/// Whether owned observer `st` is quiet this update: it is in the slot it knows (not freed, not
/// moved by a renumbering), it did not change (nor did its view-model components), it is not new
/// here, and no target waits for its budget. Then only its changed targets
/// ([`Touches::is_changed`](crate::index::Touches::is_changed)) and those lingering can come out
/// of its pass differently from the last update.
fn is_quiet(st: &Owned, index: &AoiIndex) -> bool {
    !st.fresh
        && st.waiting == 0
        && index.entities.get(st.slot as usize) == Some(&st.observer)
        && !index.touches.is_changed(st.slot)
}
