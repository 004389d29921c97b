//! The systems the plugin schedules, one per [`AoiSystems`](crate::AoiSystems) step.

use bevy_ecs::prelude::*;
use bevy_tasks::ComputeTaskPool;

use crate::{
    components::{InterestSet, Position, ViewRange},
    index::{AoiIndex, PendingRemovals},
    interest::{Split, Work},
    messages::{EnterView, LeaveView, Outbox},
    settings::AoiSettings,
};

/// The interest computation's reusable buffers.
#[derive(Resource, Default)]
pub(crate) struct AoiWork(pub Work);

/// Picks up this update's changes (the `Changed` scan is the only pass over all entities, and
/// it reads change ticks only) and moves the changed entities in the grid.
pub(crate) fn update_index(
    mut index: ResMut<AoiIndex>,
    mut pending: ResMut<PendingRemovals>,
    changed: Query<(Entity, &Position, Option<&ViewRange>), Or<(Changed<Position>, Changed<ViewRange>)>>,
    current: Query<(&Position, Option<&ViewRange>)>,
) {
    for entity in pending.0.drain(..) {
        index.observe(entity, current.get(entity).ok());
    }
    for (entity, position, range) in &changed {
        index.observe(entity, Some((position, range)));
    }
    index.apply_changes();
}

/// Recomputes what changed, updates the `InterestSet`s and fills the outbox.
pub(crate) fn compute_interest(
    mut index: ResMut<AoiIndex>,
    mut work: ResMut<AoiWork>,
    mut outbox: ResMut<Outbox>,
    settings: Res<AoiSettings>,
    mut sets: Query<&mut InterestSet>,
) {
    let index = &mut *index;
    if index.changes.is_empty() {
        return;
    }
    let pool = if settings.parallel && cfg!(feature = "multi_threaded") {
        ComputeTaskPool::try_get().map(|p| &**p)
    } else {
        None
    };
    let split = Split {
        pool,
        min_parallel: settings.min_parallel_changes,
    };
    let outbox = &mut *outbox;
    outbox.enters.clear();
    outbox.leaves.clear();
    work.0.run(index, split, |enter, observer, target| {
        if enter {
            outbox.enters.push(EnterView { observer, target });
        } else {
            outbox.leaves.push(LeaveView { observer, target });
        }
    });
    index.end_tick();
    apply(
        &mut sets,
        outbox.enters.iter().map(|e| (e.observer, e.target)),
        InterestSet::insert,
    );
    apply(
        &mut sets,
        outbox.leaves.iter().map(|e| (e.observer, e.target)),
        InterestSet::remove,
    );
}

fn apply(
    sets: &mut Query<&mut InterestSet>,
    pairs: impl Iterator<Item = (Entity, Entity)>,
    op: fn(&mut InterestSet, Entity) -> bool,
) {
    let mut current: Option<(Entity, Mut<InterestSet>)> = None;
    for (observer, target) in pairs {
        if current.as_ref().is_none_or(|(e, _)| *e != observer) {
            drop(current.take());
            current = sets.get_mut(observer).ok().map(|set| (observer, set));
        }
        if let Some((_, set)) = current.as_mut() {
            let changed = op(set, target);
            debug_assert!(changed, "InterestSet of {observer} should change for {target}");
        }
    }
}
