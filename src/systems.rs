//! The systems the plugin schedules, one per [`AoiSystems`](crate::AoiSystems) step.

use bevy_ecs::prelude::*;
use bevy_tasks::ComputeTaskPool;

use crate::{
    components::{InterestSet, Position, ViewRange},
    index::{AoiIndex, PendingRemovals},
    interest::{Edit, Split, Work},
    messages::{EnterView, LeaveView, Outbox},
    settings::{AoiSettings, AoiStats},
};

/// What the index reads of an entity.
type Tracked = (Entity, &'static Position, Option<&'static ViewRange>);
/// Entities whose position or range was written since the last AOI update.
type Moved = Or<(Changed<Position>, Changed<ViewRange>)>;

/// The interest computation's reusable buffers.
#[derive(Resource, Default)]
pub(crate) struct AoiWork(pub Work);

/// Picks up this update's changes (the `Changed` scan is the only pass over all entities, and
/// it reads change ticks only) and moves the changed entities in the grid.
pub(crate) fn update_index(
    mut index: ResMut<AoiIndex>,
    mut pending: ResMut<PendingRemovals>,
    changed: Query<Tracked, Moved>,
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
    mut stats: ResMut<AoiStats>,
    mut sets: Query<&mut InterestSet>,
) {
    let index = &mut *index;
    stats.changed = index.changes.len();
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
    let work = &mut work.0;
    work.run(index, split, &mut sets, |enter, observer, target| {
        if enter {
            outbox.enters.push(EnterView { observer, target });
        } else {
            outbox.leaves.push(LeaveView { observer, target });
        }
    });
    sync_sets(index, work, &mut sets);
    index.end_tick();
    index.stats(&mut stats);
    stats.enters = outbox.enters.len();
    stats.leaves = outbox.leaves.len();
}

/// Mirrors the index's lists into the `InterestSet` components of the observers that stopped
/// observing and of the unchanged ones (the changed ones were written during the computation).
/// Same order as the lists, so the unchanged observers' sets take the same push/swap-remove
/// edits.
fn sync_sets(index: &AoiIndex, work: &Work, sets: &mut Query<&mut InterestSet>) {
    let entity = |s: u32| index.entities[s as usize];
    for &o in &work.flushed_observers {
        if let Ok(mut set) = sets.get_mut(entity(o)) {
            set.replace(core::iter::empty());
        }
    }
    for &(o, edit) in &work.edits {
        if let Ok(mut set) = sets.get_mut(entity(o)) {
            match edit {
                Edit::Push(t) => set.push(entity(t)),
                Edit::SwapRemove(at) => set.swap_remove(at as usize),
            }
        }
    }
}
