//! The view layer: what observers with view-model components see, from what the index finds.
//!
//! The index treats such an observer (its slot is *owned* by the layer, [`Slot::owned`]) like any
//! other, with its view grown by its hysteresis margin, but the pair engine leaves its
//! `InterestSet`, its messages and its `Watched` counts to this layer. Every update the layer
//! walks each owned observer's index list (what the grown view sees, every rule applied; of a
//! quiet one only the changed targets, below) and what it showed last update, and decides with
//! the rules of [`crate::view_model`]: holds, lingers, leaves, enters under the budget, tiers.
//! An observer that gains a view-model component is handed over with the set it had; one that
//! loses them all gets the plain set back (only the differences as messages), and is the
//! engine's again from the next update.
//!
//! Cost per update: `O(list + shown)` per owned observer the update touched ([`Touches`]: it
//! changed, or a target it sees changed) or that has targets waiting, or a lingering target whose
//! time is up or that changed more than by a move, plus sorting its entering candidates; the others
//! are skipped, since the pass would leave them as they are (a target lingering one update more is
//! counted from when it went beyond, `Shown::beyond_since`). Of a touched observer that is quiet
//! (it did not change, nothing waits for its budget) only the changed and the due lingering targets
//! are judged, and its list is not read: the target scans record, for each owned observer that did
//! not change, the changed targets it saw or sees ([`Seer`], sorted by observer in [`seers`]), and
//! the pass finds those and its due lingering targets among what it shows by binary search (by a
//! walk over their slots when they are many), loading only their state and slots
//! (`O(changed log shown)`, and moving the rest down after a leave). A changed target that stays in
//! one of the observer's [`QuietBands`] (given here from each observer's view) is not recorded, so
//! an observer whose targets only move about inside its view is not touched (a rectangle's bands
//! are its edge and its tiers' squares). An observer with a radius that only moved is judged the
//! same way when its flip scan recorded its seers: in a band pass over its window, the targets
//! that flip for its grown view or cross a bound of its bands, and with tiers its instance's
//! `Always` targets that cross one, tested one by one (the targets that jumped record
//! themselves). A quiet observer's pass reads no component (its view is kept in
//! [`Owned::view`], moved with a moving one) and, without tiers and with few messages, edits its
//! set by its messages instead of writing it whole. Nothing at all while no observer has a
//! view-model component. With Bevy's compute pool the owned observers are split into runs, one
//! task each ([`update_view_layer`]).
//!
//! Measured (`scenario --entities 10000`, every observer with the feature, two threads,
//! alternating steady medians, stop 42): one task, then one per thread: `ViewHysteresis` 21.4–22.0
//! → 15.6–16.0 ms an update, `ViewTiers` 24.7–25.0 → 16.8–17.5, `EnterBudget(8)` 17.3–20.2 →
//! 12.2–17.8; one thread level. Judging only a quiet observer's changed targets (stop 43, 5% of
//! 10k moving, one thread, medians of five alternating runs): `EnterBudget(8)` 10.41 → 7.23 ms,
//! `ViewHysteresis` 12.47 → 8.64, `ViewTiers` 17.14 → 8.82; nothing moving 0.35–0.39 →
//! 0.15–0.18 ms (0.14 without features). Reading the seers instead of the list (stop 50, the same
//! workload with `--hysteresis 10`, alternating with stop 49's code): callgrind 57.8 → 47.2 M
//! instructions an update; three runs 7.1–8.1 → 6.6–6.9 ms on one thread, 3.8–4.1 → 3.5–3.6 on
//! two. The quiet bands, the quiet pass without components and with set edits, and lingering
//! targets looked at only when due (stop 61, `moving5` 50k, one thread, three alternating runs):
//! `--hysteresis 10` 29.0–29.5 → 20.7–22.9 ms, `--tiers` 31.2–36.2 → 25.1–26.5, `--budget 8`
//! 21.5–25.1 → 14.9–15.7 (callgrind at 10k: 42.8 → 29.0, 41.0 → 29.6, 35.2 → 21.7 M
//! instructions an update); where everyone moves 3–5% dearer (`PERFORMANCE.md`). An observer that
//! only moved judged by its seers, and a lingering target judged only when due (stop 62, uniform
//! 50k, one thread, three alternating runs): `--hysteresis 10` 93.3–95.8 → 84.6–89.0 ms, `--tiers`
//! 114.4–125.2 → 85.9–89.0, `--budget 8` 76.6–92.5 → 52.4–58.6 (callgrind at 10k: 204.0 → 164.3,
//! 202.6 → 165.7, 146.0 → 99.8 M instructions an update).
//!
//! Here: the layer's state, its system and the serial end of its update; each observer's pass
//! (which observers are looked at, and how each is judged) in [`look`], the decisions for an
//! observer that keeps a view-model component in [`decide`], the marks that match its list (or
//! its seers, sorted by observer in [`seers`]) with what it shows in [`marks`], writing the sets
//! in [`sets`], hand-overs in [`handover`], the update's messages as the passes left them in
//! [`messages`], the shown targets kept sorted as targets enter in [`shown`].
//!
//! [`Touches`]: crate::index::Touches
//! [`QuietBands`]: crate::index::QuietBands
//! [`Seer`]: crate::index::Seer
//! [`Slot::owned`]: crate::slot::Slot::owned

use bevy_ecs::{entity::EntityHashMap, prelude::*};

use crate::{
    components::{InterestSet, ViewRange, ViewRect},
    index::{AoiIndex, QuietBands},
    messages::{EnterView, LeaveReason, LeaveView, TierChanged},
    pair_engine::AoiPairEngine,
    parallel::{run_jobs, task_pool},
    settings::{AoiSettings, AoiStats},
    view_model::{EnterBudget, ViewHysteresis, ViewTiers},
    watched::WatchTracker,
};

mod decide;
mod handover;
mod look;
mod marks;
mod messages;
mod seers;
mod sets;
mod shown;

use decide::{LayerView, enter_reason};
use seers::SeersByObserver;
use sets::write_left;

/// A shown target's slot when it is no longer tracked.
const NO_SLOT: u32 = u32::MAX;

/// One target an owned observer shows (its slot is kept apart, in [`Owned::shown_slots`]).
#[derive(Clone, Copy, Debug)]
struct Shown {
    target: Entity,
    /// While it lingers: the update it went beyond the grown view in, the low 32 bits of
    /// [`ViewLayer::update`] (it has been beyond for `update - beyond_since + 1` updates,
    /// wrapping), so a pass that leaves it as it is need not count it.
    beyond_since: u32,
    tier: u8,
    /// Shown only thanks to the hysteresis (beyond the view itself).
    held: bool,
    /// Beyond the grown view, shown while `linger_ticks` last.
    lingering: bool,
}

impl Shown {
    /// A target shown in the view (or held within the grown view), at `tier`.
    fn new(target: Entity, tier: u8) -> Self {
        Self {
            target,
            beyond_since: 0,
            tier,
            held: false,
            lingering: false,
        }
    }
}

/// One owned observer.
#[derive(Debug)]
struct Owned {
    observer: Entity,
    /// Sorted by target, like the `InterestSet` it is copied to.
    shown: Vec<Shown>,
    /// The slot of each shown target, in the same order, refreshed when the index renumbered or
    /// freed it: apart, so that the pass over a quiet observer reads 4 bytes a shown target.
    shown_slots: Vec<u32>,
    /// Whether its shown targets count for the `Watched` marker.
    counted: bool,
    waiting: u32,
    /// The targets waiting for its budget at the end of the last update, in no order.
    waited: Vec<Entity>,
    /// How many shown targets the hysteresis held (beyond the view) after the last update, and
    /// those of them lingering (beyond the grown view too): each one's slot, and the update
    /// ([`ViewLayer::update`]) it leaves in unless it comes back.
    held: u32,
    lingering: Vec<(u32, u64)>,
    /// Its slot, and how many times the index had renumbered when the slots were last looked up.
    slot: u32,
    renumbers: usize,
    /// Its set has not been written by the layer yet.
    fresh: bool,
    /// The update ([`ViewLayer::update`]) by when a target lingering leaves unless it comes back
    /// (`u64::MAX` if none): until then it is not looked at for its lingering targets, nor are
    /// they judged, unless one of them changes ([`look`]).
    linger_until: u64,
    /// Its view, as its last pass that read its components found it.
    view: LayerView,
    /// What this update's pass over it left for the serial end of the update.
    left: Left,
}

/// What the pass over an owned observer leaves for the serial end of the update, which has the
/// `InterestSet` components (the passes run on several threads when there are many observers).
#[derive(Clone, Copy, Debug, Default)]
enum Left {
    /// Nothing.
    #[default]
    Nothing,
    /// Its set is to be written from what it shows, tiers kept when `tiered`.
    Write { tiered: bool },
    /// Its set is to be edited by its messages: the enters and the leaves in these ranges of the
    /// messages of the pass of `task` ([`Pass::write_or_leave`]).
    Edit {
        task: u32,
        enters: [u32; 2],
        leaves: [u32; 2],
    },
    /// It no longer observes: everything it shows leaves, its set is emptied.
    Stop,
    /// It has no view-model component any more: handed back to the engine (its slot).
    HandBack(u32),
}

/// The layer's state and this update's messages.
#[derive(Resource, Default)]
pub(crate) struct ViewLayer {
    owned: Vec<Owned>,
    by_observer: EntityHashMap<()>,
    /// One pass for each task of the update's parallel part (a run of owned observers each), and
    /// one for its serial end.
    passes: Vec<Pass>,
    serial: Pass,
    /// By entity index: the place in `owned` of an observer whose set is written at once
    /// ([`Self::write_sets_at_once`]), else [`NOT_WRITTEN`](sets::NOT_WRITTEN).
    write_at: Vec<u32>,
    /// How many of `passes` this update used: their messages, then the serial end's, are this
    /// update's ([`Self::enters`]).
    used: usize,
    /// This update's seers, by observer: what a quiet observer's pass reads.
    seers: SeersByObserver,
    /// How many updates the layer ran with observers to look at.
    update: u64,
}

/// The buffers and results of the passes over a run of owned observers.
#[derive(Default)]
struct Pass {
    /// Per slot, in the pass over one observer: `epoch` while the slot is in its list and not
    /// found among its shown targets, `epoch + 1` once found there; older values mean neither.
    marks: Vec<u32>,
    /// This observer's mark (a multiple of 4, advanced by 4 each observer: `marks.rs`).
    epoch: u32,
    /// The update it runs in ([`ViewLayer::update`]).
    update: u64,
    /// Its place among the update's passes (its task).
    task: u32,
    /// A quiet observer's changed listed targets, in list order ([`Self::mark_listed`]), or in
    /// its seers' order ([`Self::mark_seers`]).
    changed_listed: Vec<u32>,
    /// A quiet observer's shown targets to judge, as places in its `shown`, ascending
    /// ([`Self::mark_seers`]); how many of them its pass has reached; and how many targets it
    /// showed when its pass began.
    judged_at: Vec<u32>,
    next_judged: usize,
    shown_len: usize,
    /// The observer's targets found lingering by its pass, for `Owned::lingering`.
    lingering: Vec<(u32, u64)>,
    /// This observer's qualifying targets that are not shown: squared distance, entity, slot.
    candidates: Vec<(f32, Entity, u32)>,
    /// The entering candidates, sorted, and those of them that waited for the budget last
    /// update, sorted.
    sorted_admitted: Vec<Entity>,
    after_waiting: Vec<Entity>,
    /// The candidates entering now and their slots, sorted by entity to merge into `shown`.
    entering: Vec<(Shown, u32)>,
    /// A handed-back observer's plain set, sorted before it is written.
    sorted: Vec<(Entity, u8)>,
    /// The run's messages, in order.
    enters: Vec<EnterView>,
    leaves: Vec<LeaveView>,
    tier_changes: Vec<TierChanged>,
    /// The run's changes to the `Watched` counts, in order (`true`: a watcher more).
    watch_edits: Vec<(Entity, bool)>,
    /// The [`QuietBands`] of the run's observers whose bands changed, by slot, for the index.
    quiet_bands: Vec<(u32, Option<QuietBands>)>,
    totals: Totals,
    /// How many of the run's observers have something left for the serial end.
    left_for_serial_end: usize,
}

/// Totals of one update, for [`AoiStats`].
#[derive(Default)]
struct Totals {
    held: usize,
    returned: usize,
    waiting: usize,
}

/// What the layer reads and writes of an owned observer.
type ObserverItem = (
    Option<&'static ViewRange>,
    Option<&'static ViewRect>,
    Option<&'static ViewHysteresis>,
    Option<&'static EnterBudget>,
    Option<&'static ViewTiers>,
    &'static mut InterestSet,
    Entity,
);

/// The owned observers, as the layer's system gets them.
type Observers<'w, 's> = Query<'w, 's, ObserverItem>;

/// An owned observer's view components.
type ViewParts<'a> = (
    Option<&'a ViewRange>,
    Option<&'a ViewRect>,
    Option<&'a ViewHysteresis>,
    Option<&'a EnterBudget>,
    Option<&'a ViewTiers>,
);

/// How a pass reaches the observers: shared by the tasks of the parallel part (their sets are
/// written at the serial end), or all its own on one thread (each set written as it is decided,
/// with the one lookup).
enum Access<'q, 'w, 's> {
    Shared(&'q Observers<'w, 's>),
    Exclusive(&'q mut Observers<'w, 's>),
}

impl<'w, 's> Access<'_, 'w, 's> {
    /// The same access, lent for one observer's update.
    fn reborrow(&mut self) -> Access<'_, 'w, 's> {
        match self {
            Access::Shared(q) => Access::Shared(q),
            Access::Exclusive(q) => Access::Exclusive(q),
        }
    }
}

/// Runs the view layer (see the module doc) after the pair engine. With Bevy's compute pool
/// (as the engine's [`AoiSettings::parallel`] and [`AoiSettings::min_parallel_changes`] allow),
/// the owned observers are split into runs, one task each, which decide what they show and
/// record their messages apart; the sets are then written (on the pool too when they are many,
/// [`ViewLayer::write_sets_at_once`]; each set is its observer's own), and the messages are read
/// from the runs in turn ([`ViewLayer::enters`]), so the output does not depend on the threads.
pub(crate) fn update_view_layer(
    mut index: ResMut<AoiIndex>,
    mut layer: ResMut<ViewLayer>,
    work: Res<AoiPairEngine>,
    mut stats: ResMut<AoiStats>,
    settings: Res<AoiSettings>,
    mut observers: Observers,
    mut watch: Option<ResMut<WatchTracker>>,
) {
    let layer = &mut *layer;
    layer.used = 0;
    layer.serial.clear_messages();
    if layer.owned.is_empty() && index.newly_owned.is_empty() {
        stats.held = 0;
        stats.returned = 0;
        stats.waiting = 0;
        stats.tier_changes = 0;
        return;
    }
    layer
        .seers
        .build(index.slots.len(), work.0.seers(), work.0.band_scanned());
    let watch = watch.as_deref_mut();
    layer.take_over(&mut index, &observers, watch.as_deref());
    let mut owned = core::mem::take(&mut layer.owned);
    let pool = task_pool(&settings).filter(|_| owned.len() >= settings.min_parallel_changes.max(2));
    let tasks = pool.map_or(1, |pool| pool.thread_num());
    if layer.passes.len() < tasks {
        layer.passes.resize_with(tasks, Pass::default);
    }
    let slots = index.slots.len();
    layer.update += 1;
    for (task, pass) in (0..).zip(layer.passes.iter_mut().chain([&mut layer.serial])) {
        pass.begin(slots);
        (pass.task, pass.update) = (task, layer.update);
    }
    let counts = watch.as_deref();
    if pool.is_some() {
        let per_task = owned.len().div_ceil(tasks);
        let runs = owned.chunks_mut(per_task).zip(&mut layer.passes);
        let (shared, seers) = (&observers, &layer.seers);
        run_jobs(pool, runs, &|(run, pass)| {
            pass.look_at(run, &index, seers, Access::Shared(shared), counts);
        });
    } else {
        let access = Access::Exclusive(&mut observers);
        layer.passes[0].look_at(&mut owned, &index, &layer.seers, access, counts);
    }
    for pass in &mut layer.passes[..tasks] {
        for (s, bands) in pass.quiet_bands.drain(..) {
            index.touches.set_quiet_bands(s, bands);
        }
    }
    let any_left = layer.passes[..tasks].iter().any(|pass| pass.left_for_serial_end > 0);
    if any_left {
        if pool.is_some() {
            layer.write_sets_at_once(&mut owned, index.observers, &mut observers);
        }
        layer.serial_end(&mut owned, &mut index, &mut observers);
    }
    layer.owned = owned;
    layer.used = tasks;
    let totals = layer.gather(watch);
    stats.held = totals.held;
    stats.returned = totals.returned;
    stats.waiting = totals.waiting;
    stats.tier_changes = layer.tier_changes().len();
}

impl ViewLayer {
    /// The serial end of the update, in the observers' order: writes or edits the sets the
    /// passes left to write (unless [`Self::write_sets_at_once`] did), and lets go of the
    /// observers that stopped observing or lost their view-model components (on one thread only
    /// those are left for it).
    fn serial_end(&mut self, owned: &mut Vec<Owned>, index: &mut AoiIndex, observers: &mut Observers) {
        let mut dropped = false;
        for st in owned.iter_mut() {
            match core::mem::take(&mut st.left) {
                Left::Nothing => continue,
                left @ (Left::Write { .. } | Left::Edit { .. }) => {
                    if let Ok(mut item) = observers.get_mut(st.observer) {
                        write_left(&mut item.5, st, left, &self.passes);
                    }
                    continue;
                }
                Left::Stop => self.serial.stop_observing(st, index, observers),
                Left::HandBack(s) => self.serial.hand_back(st, s, index, observers),
            }
            dropped = true;
            self.by_observer.remove(&st.observer);
            if let Some(s) = index.slot_of(st.observer) {
                index.release(s);
            }
        }
        if dropped {
            owned.retain(|st| self.by_observer.contains_key(&st.observer));
        }
    }

    /// Applies the `Watched` edits of the passes used in turn, then the serial end's; the
    /// update's totals. (Their messages stay where they are: [`Self::enters`].)
    fn gather(&mut self, mut watch: Option<&mut WatchTracker>) -> Totals {
        let mut totals = Totals::default();
        for pass in self.passes[..self.used].iter_mut().chain([&mut self.serial]) {
            if let Some(w) = watch.as_deref_mut() {
                for (target, more) in pass.watch_edits.drain(..) {
                    if more { w.inc(target) } else { w.dec(target) }
                }
            }
            totals.held += pass.totals.held;
            totals.returned += pass.totals.returned;
            totals.waiting += pass.totals.waiting;
        }
        totals
    }
}

impl Pass {
    /// Readies the pass for an update of an index of `slots` slots.
    fn begin(&mut self, slots: usize) {
        if self.marks.len() < slots {
            self.marks.resize(slots, 0);
        }
        self.clear_messages();
        self.watch_edits.clear();
        self.quiet_bands.clear();
        self.totals = Totals::default();
        self.left_for_serial_end = 0;
    }

    /// Drops the last update's messages.
    fn clear_messages(&mut self) {
        self.enters.clear();
        self.leaves.clear();
        self.tier_changes.clear();
    }

    /// Leaves `left` of owned observer `st` for the serial end of the update.
    fn leave_for_serial_end(&mut self, st: &mut Owned, left: Left) {
        st.left = left;
        self.left_for_serial_end += 1;
    }

    /// Records `sn` leaving `observer`'s view (uncounting it when `counted`).
    fn leave(&mut self, observer: Entity, sn: &Shown, reason: LeaveReason, counted: bool) {
        self.leaves.push(LeaveView {
            observer,
            target: sn.target,
            tier: sn.tier,
            reason,
        });
        if counted {
            self.watch_edits.push((sn.target, false));
        }
    }
}

impl ViewLayer {
    /// The observers owned by the layer that show `target` now: a binary search in each one's
    /// shown targets.
    pub fn observers_showing(&self, target: Entity) -> impl Iterator<Item = Entity> + '_ {
        self.owned
            .iter()
            .filter(move |st| st.shown.binary_search_by_key(&target, |sn| sn.target).is_ok())
            .map(|st| st.observer)
    }
}

/// The slot of shown target `sn`, known as `t`, while the index tracks it (a freed slot still
/// names its entity until the next update).
fn target_slot(index: &AoiIndex, sn: &Shown, t: u32) -> Option<u32> {
    (index.entities.get(t as usize) == Some(&sn.target)).then_some(t)
}
