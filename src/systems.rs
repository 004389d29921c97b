//! The systems of the plugin's [`AoiSystems`](crate::AoiSystems) steps: change pickup and the
//! grid moves, the pair engine's run, and the messages' writing (and triggering, with
//! `AoiPlugin::entity_events`). The optional features' systems are beside their data:
//! `watchers.rs`, `watched.rs`, `view_model/layer.rs`, `transform.rs`.

use bevy_ecs::{prelude::*, query::QueryItem};

use crate::{
    components::{PendingRemovals, Position, ViewRange, ViewRect},
    index::AoiIndex,
    messages::{EnterReason, EnterView, LeaveReason, LeaveView, TierChanged},
    pair_engine::{AoiPairEngine, PairEngine, Parallelism, Sets},
    parallel::{join, task_pool},
    rules::{AoiInstance, AoiLayers, AoiVisibility},
    settings::{AoiSettings, AoiStats},
    slot::Sight,
    view_model::{EnterBudget, ViewHysteresis, ViewTiers, layer::ViewLayer},
    visibility::Rules,
    watched::WatchTracker,
};

/// What the index reads of an entity.
type Tracked = (
    &'static Position,
    Option<&'static ViewRange>,
    Option<&'static ViewRect>,
    Option<&'static AoiLayers>,
    Option<&'static AoiVisibility>,
    Option<&'static AoiInstance>,
    ViewModel,
);
/// An observer's view-model components.
type ViewModel = (
    Option<&'static ViewHysteresis>,
    Has<EnterBudget>,
    Option<&'static ViewTiers>,
);
/// Entities whose rule or view-model components were written since the last AOI update. Those
/// whose `ViewRange` was are found by a `Changed<ViewRange>` query of their own, and those whose
/// position was by a `Changed<Position>` one, which reads nothing else.
///
/// Apart from `ViewRange`, this `Or` scans only the entities that have one of its components
/// (none in a world without rules or view-model components), where one `Or` with `ViewRange` in
/// it scanned every observer through Bevy's per-entity `Or` machinery: callgrind per update,
/// one thread, nothing moving 50k 2.88 → 2.22 M instructions (the scan 27 → 13 instructions an
/// entity), 5% moving 50k 29.40 → 28.73 M, `sparse_huge` 50k 59.78 → 59.28 M; where every
/// observer has a view-model component, two scans where there was one (nothing moving 50k with
/// `ViewHysteresis`: 6.73 → 6.88 M). Likewise, a `Position` query of its own against one
/// query of both, observing every changed entity whole: `sparse_huge` 50k 75.6 → 60.2 M,
/// uniform 10k 68.9 → 65.8 M, 5% moving 50k 34.7 → 34.1 M.
///
/// Nested by how common the components are: Bevy's `Or` checks, for every entity it scans, each
/// member's "is in this archetype" flag, then all of them again when nothing changed; a nested
/// `Or` absent from the archetype is one flag.
type RulesReviewed = Or<(
    Or<(
        Changed<AoiLayers>,
        Changed<AoiInstance>,
        Changed<AoiVisibility>,
        Changed<ViewRect>,
    )>,
    Or<(Changed<ViewHysteresis>, Changed<EnterBudget>, Changed<ViewTiers>)>,
)>;

/// The index's view of one entity's [`Tracked`] components: its position, its view (grown by
/// its hysteresis margin), its rules, and whether it has view-model components (bad input when
/// the plugin keeps no `InterestSet`s: `keeps_sets` false).
fn state<'a>(
    (position, range, rect, layers, visibility, instance, (hysteresis, budget, tiers)): QueryItem<'a, 'a, Tracked>,
    keeps_sets: bool,
) -> (&'a Position, Sight, Rules, bool) {
    let margin = hysteresis.map_or(0.0, |h| h.margin);
    let modelled = hysteresis.is_some() || budget || tiers.is_some();
    let problem = if modelled && !keeps_sets {
        Some(
            "it has ViewHysteresis, EnterBudget or ViewTiers, which need InterestSets: remove it, or build AoiPlugin with `interest_sets: true`",
        )
    } else if margin.is_nan() || margin < 0.0 {
        Some("its ViewHysteresis margin is negative or NaN")
    } else {
        tiers.and_then(ViewTiers::problem)
    };
    // A bad radius or half extent stays as it is, for the index to report.
    let grow = |v: f32| if v >= 0.0 { v + margin } else { v };
    let sight = match (range, rect, problem) {
        (None, None, _) => Sight::Blind,
        (Some(_), Some(_), _) => Sight::Bad("it has both ViewRange and ViewRect: keep one"),
        (_, _, Some(why)) => Sight::Bad(why),
        (Some(range), None, None) => Sight::Radius(grow(range.radius)),
        (None, Some(rect), None) => Sight::Rect([grow(rect.half_width), grow(rect.half_height)]),
    };
    let layered = matches!(sight, Sight::Radius(_) | Sight::Rect(_)) && modelled;
    let layers = layers.copied().unwrap_or_default();
    let rules = Rules {
        member: layers.member,
        sees: layers.sees,
        mode: visibility.copied().unwrap_or_default(),
        instance: instance.map_or(0, |i| i.0),
    };
    (position, sight, rules, layered)
}

/// Picks up this update's changes and moves the changed entities in the grid. Three `Changed`
/// scans read change ticks only: one over the observers for a changed `ViewRange`, one over the
/// entities that have rule or view-model components for a change of those ([`RulesReviewed`];
/// none in a world without them), both observing their changed entities whole (each once), then
/// one over all entities for `Position`, whose changed entities have only their position read
/// where nothing else of theirs changed (most changes), in slot order
/// ([`AoiIndex::observe_moves`]).
pub(crate) fn update_index(
    mut index: ResMut<AoiIndex>,
    mut pending: ResMut<PendingRemovals>,
    ranged: Query<(Entity, Tracked), Changed<ViewRange>>,
    ruled: Query<(Entity, Tracked, Option<Ref<ViewRange>>), RulesReviewed>,
    moved: Query<(Entity, &Position), Changed<Position>>,
    current: Query<Tracked>,
    settings: Res<AoiSettings>,
) {
    index.touches.begin();
    let keeps_sets = index.keeps_sets;
    let state_of = |entity| current.get(entity).ok().map(|tracked| state(tracked, keeps_sets));
    for entity in pending.0.drain(..) {
        index.observe(entity, state_of(entity));
    }
    // `for_each` rather than `for`: Bevy's dense fold (callgrind, nothing moving 50k: 2.38 → 2.20
    // M instructions an update; the `Position` scan below was level either way).
    ranged.iter().for_each(|(entity, tracked)| {
        index.observe(entity, Some(state(tracked, keeps_sets)));
    });
    // Those observed for their `ViewRange` already are not observed again.
    ruled.iter().for_each(|(entity, tracked, range)| {
        if !range.is_some_and(|range| range.is_changed()) {
            index.observe(entity, Some(state(tracked, keeps_sets)));
        }
    });
    // An entity without a slot (new) is observed whole at once, so slots are handed out in the
    // ECS's order; the others' moves are gathered and observed in slot order.
    for (entity, position) in &moved {
        match index.slot_of(entity) {
            Some(s) => index.moves.push(s, *position),
            None => index.observe_slot(entity, None, state_of(entity)),
        }
    }
    index.observe_moves(|index, entity, s| index.observe_slot(entity, Some(s), state_of(entity)));
    let pool = task_pool(&settings).filter(|_| index.changes.len() >= settings.min_parallel_changes);
    index.apply_changes(settings.flip_scan_min_seen, settings.busy_cell_share, pool);
}

/// Decides what changed and updates the `InterestSet`s; the pairs wait in the engine for
/// [`write_messages`].
pub(crate) fn compute_interest(
    mut index: ResMut<AoiIndex>,
    mut work: ResMut<AoiPairEngine>,
    settings: Res<AoiSettings>,
    mut stats: ResMut<AoiStats>,
    mut sets: Sets,
    mut watch: Option<ResMut<WatchTracker>>,
) {
    let index = &mut *index;
    let work = &mut work.0;
    stats.changed = index.changes.len() - index.busy_standing();
    if index.changes.is_empty() {
        work.forget_pairs();
        stats.stepped = 0;
        stats.busy_standing = 0;
        return;
    }
    let parallelism = Parallelism {
        pool: task_pool(&settings),
        min_parallel: settings.min_parallel_changes,
    };
    work.run(index, parallelism, &mut sets, watch.as_deref_mut());
    index.stats(&mut stats);
}

/// The message of engine enter `(o, t)`. Without `JUDGED` its reason is the distance's, which is
/// right only when nothing turned ([`AoiIndex::nothing_turned`]: the common update, whose loop
/// then stays as tight as a copy). `appeared` remembers the last observer asked about (the engine
/// lists each observer's enters together, so whether it appeared is asked once).
#[inline]
fn enter_message<const JUDGED: bool>(index: &AoiIndex, appeared: &mut (u32, bool), o: u32, t: u32) -> EnterView {
    let reason = if !JUDGED {
        EnterReason::CameIntoRange
    } else {
        if appeared.0 != o {
            *appeared = (o, index.observer_appeared(o));
        }
        if appeared.1 {
            EnterReason::Appeared
        } else {
            index.enter_reason(o, t)
        }
    };
    EnterView {
        observer: index.entities[o as usize],
        target: index.entities[t as usize],
        tier: 0,
        reason,
    }
}

/// The message of engine leave `(o, t)`, judged like [`enter_message`].
#[inline]
fn leave_message<const JUDGED: bool>(index: &AoiIndex, o: u32, t: u32) -> LeaveView {
    let reason = if JUDGED {
        index.leave_reason(Some(o), Some(t))
    } else {
        LeaveReason::OutOfRange
    };
    LeaveView {
        observer: index.entities[o as usize],
        target: index.entities[t as usize],
        tier: 0,
        reason,
    }
}

/// This update's messages: the pair engine's, then the view layer's ([`write_messages`] writes
/// this sequence). Valid until `write_messages` renumbers the slots.
fn messages<'a>(
    index: &'a AoiIndex,
    work: &'a PairEngine,
    layer: &'a ViewLayer,
) -> (
    impl Iterator<Item = EnterView> + 'a,
    impl Iterator<Item = LeaveView> + 'a,
) {
    let (enters, leaves) = engine_messages(index, work);
    (enters.chain(layer.enters()), leaves.chain(layer.leaves()))
}

/// This update's messages of the pair engine, except for the observers the view layer owns
/// (the layer's come after them, [`messages`]).
fn engine_messages<'a>(
    index: &'a AoiIndex,
    work: &'a PairEngine,
) -> (
    impl Iterator<Item = EnterView> + 'a,
    impl Iterator<Item = LeaveView> + 'a,
) {
    let (enters, leaves) = engine_pairs(index, work);
    let mut appeared = (u32::MAX, false);
    let enters = enters.map(move |(o, t)| enter_message::<true>(index, &mut appeared, o, t));
    (enters, leaves.map(move |(o, t)| leave_message::<true>(index, o, t)))
}

/// The pairs [`engine_messages`] turns into messages, as `(observer, target)` slots in the same
/// order: the pair engine's enters and leaves, except those of the observers the view layer owns.
pub(crate) fn engine_pairs<'a>(
    index: &'a AoiIndex,
    work: &'a PairEngine,
) -> (
    impl Iterator<Item = (u32, u32)> + 'a,
    impl Iterator<Item = (u32, u32)> + 'a,
) {
    // While no observer is owned, no pair needs the lookup.
    let any_owned = index.owned > 0;
    let engine_owns = move |&(o, _): &(u32, u32)| !any_owned || !index.slots[o as usize].owned();
    (
        work.enters(&index.lists).filter(engine_owns),
        work.leaves().filter(engine_owns),
    )
}

/// Triggers this update's messages as entity events (added only with `AoiPlugin::entity_events`).
pub(crate) fn trigger_messages(
    index: Res<AoiIndex>,
    work: Res<AoiPairEngine>,
    layer: Res<ViewLayer>,
    mut commands: Commands,
) {
    let (enters, leaves) = messages(&index, &work.0, &layer);
    enters.for_each(|ev| commands.trigger(ev));
    leaves.for_each(|ev| commands.trigger(ev));
    layer.tier_changes().for_each(|ev| commands.trigger(ev));
}

/// Writes this update's messages straight from the engine's and the view layer's buffers (the
/// engine's batch, then the layer's; enters and leaves at once when they are many and a second
/// thread is free), then lets the index renumber its slots if they have scattered.
pub(crate) fn write_messages(
    mut index: ResMut<AoiIndex>,
    work: Res<AoiPairEngine>,
    layer: Res<ViewLayer>,
    (mut enter_writer, mut leave_writer, mut tier_writer): Writers,
    settings: Res<AoiSettings>,
    mut stats: ResMut<AoiStats>,
) {
    let (index_ref, work) = (&*index, &work.0);
    let many = || work.enters(&index_ref.lists).len().min(work.leaves().len()) >= SPLIT_MESSAGES_FROM;
    let pool = task_pool(&settings).filter(|_| many());
    let (enters, leaves) = if index_ref.owned == 0 {
        // Every engine pair is a message: written straight from the engine's buffers
        // (`write_engine_enters`), then the layer's (it may still have leaves of observers that
        // were despawned).
        let quiet = index_ref.nothing_turned();
        join(
            pool,
            || {
                let engine = write_engine_enters(index_ref, work, quiet, &mut enter_writer);
                engine + enter_writer.write_batch(layer.enters()).len()
            },
            || {
                let engine = write_engine_leaves(index_ref, work, quiet, &mut leave_writer);
                engine + leave_writer.write_batch(layer.leaves()).len()
            },
        )
    } else {
        // The engine's (filtered: pushed one by one), then the layer's in one exact batch.
        let (enters, leaves) = engine_messages(index_ref, work);
        join(
            pool,
            || enter_writer.write_batch(enters).len() + enter_writer.write_batch(layer.enters()).len(),
            || leave_writer.write_batch(leaves).len() + leave_writer.write_batch(layer.leaves()).len(),
        )
    };
    stats.enters = enters;
    stats.leaves = leaves;
    tier_writer.write_batch(layer.tier_changes());
    index.end_messages();
    index.renumber_if_scattered(task_pool(&settings));
    stats.renumbers = index.renumbers();
}

/// The plugin's message writers.
type Writers<'w> = (
    MessageWriter<'w, EnterView>,
    MessageWriter<'w, LeaveView>,
    MessageWriter<'w, TierChanged>,
);

/// Writes every engine enter's message, judged like [`enter_message`] (unjudged when the update
/// is `quiet`: nothing turned); how many. One batch per buffer of the engine's
/// ([`PairEngine::enter_parts`]): a slice's iterator of known length lets Bevy's buffer be
/// written without a test per message (callgrind, one thread: uniform 10k 53.62 → 51.73 M
/// instructions an update, 5% moving 50k 32.08 → 31.34 M; one batch over the parts chained was
/// pushed message by message). Where some observer's enters are kept as a run over its list
/// (as in the first update), one batch over all of them at their exact count instead: Bevy's
/// buffer then grows once, to their number, not by doubling batch after batch.
fn write_engine_enters(
    index: &AoiIndex,
    work: &PairEngine,
    quiet: bool,
    writer: &mut MessageWriter<EnterView>,
) -> usize {
    if quiet {
        write_enters::<false>(index, work, writer)
    } else {
        write_enters::<true>(index, work, writer)
    }
}

/// [`write_engine_enters`], judged or not.
fn write_enters<const JUDGED: bool>(
    index: &AoiIndex,
    work: &PairEngine,
    writer: &mut MessageWriter<EnterView>,
) -> usize {
    let mut appeared = (u32::MAX, false);
    let message = |(o, t)| enter_message::<JUDGED>(index, &mut appeared, o, t);
    match work.enter_parts() {
        Some(parts) => write_parts(writer, parts, message),
        None => writer.write_batch(work.enters(&index.lists).map(message)).len(),
    }
}

/// Writes every engine leave's message like [`write_engine_enters`], a batch per buffer (a leave
/// is never kept as a run).
fn write_engine_leaves(
    index: &AoiIndex,
    work: &PairEngine,
    quiet: bool,
    writer: &mut MessageWriter<LeaveView>,
) -> usize {
    if quiet {
        write_parts(writer, work.leave_parts(), |(o, t)| leave_message::<false>(index, o, t))
    } else {
        write_parts(writer, work.leave_parts(), |(o, t)| leave_message::<true>(index, o, t))
    }
}

/// Writes the `message` of each pair of `parts`, a batch per part; how many.
fn write_parts<'a, M: Message>(
    writer: &mut MessageWriter<M>,
    parts: impl Iterator<Item = &'a [(u32, u32)]>,
    mut message: impl FnMut((u32, u32)) -> M,
) -> usize {
    let mut written = 0;
    for part in parts {
        written += writer.write_batch(part.iter().map(|&pair| message(pair))).len();
    }
    written
}

/// Enters and leaves are written at once (to their own message buffers, each in its order) when
/// both have at least this many: below, waking a second thread costs more than it saves.
const SPLIT_MESSAGES_FROM: usize = 4096;
