//! The [`Watchers`] feature: who sees a target now, the reverse of the observers'
//! `InterestSet`s, on the targets that opt in. Its component, the components (re)inserted and
//! waiting to be filled ([`PendingWatchers`], from the component's hook) and the system that
//! keeps them, [`update_watchers`], which reads this update's messages.

use bevy_ecs::{entity::Entity, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::{
    bits,
    index::AoiIndex,
    pair_engine::AoiPairEngine,
    prefetch::{AHEAD, prefetch},
    radix::sort_by_u32_key,
    systems::engine_pairs,
    view_model::layer::ViewLayer,
};

/// Who sees this entity now: the reverse of the observers' [`InterestSet`](crate::InterestSet)s,
/// kept exactly in step with them (same update). Opt-in: add it to the targets that broadcast
/// their state ("send my move to everyone who sees me"). Read-only for users.
///
/// Added to an entity that is already seen, it is filled with the current observers in the
/// next AOI update. Order: deterministic (the order the observers started seeing it, with
/// swap-removal on leave). Costs: [`contains`](Self::contains) is a linear scan, `O(n)`; the
/// others are `O(1)`.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let player = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let chest = app.world_mut().spawn((Position::new(3.0, 0.0), Watchers::default())).id();
/// app.update();
/// let watchers = app.world().get::<Watchers>(chest).unwrap();
/// assert!(watchers.contains(player), "the player sees the chest, so it should watch it");
/// app.world_mut().get_mut::<Position>(player).unwrap().x = 100.0;
/// app.update();
/// let watchers = app.world().get::<Watchers>(chest).unwrap();
/// assert!(watchers.is_empty(), "nobody should see the chest once the player walked away");
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
#[component(on_insert = on_insert_watchers)]
pub struct Watchers {
    observers: Vec<Entity>,
}

impl Watchers {
    /// Whether `observer` sees this entity now. `O(n)`.
    pub fn contains(&self, observer: Entity) -> bool {
        self.observers.contains(&observer)
    }

    /// The observers that see this entity. `O(1)` to start, `O(1)` a step.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Entity> + '_ {
        self.observers.iter().copied()
    }

    /// How many observers see this entity. `O(1)`.
    pub fn len(&self) -> usize {
        self.observers.len()
    }

    /// Whether nobody sees this entity. `O(1)`.
    pub fn is_empty(&self) -> bool {
        self.observers.is_empty()
    }

    pub(crate) fn push(&mut self, observer: Entity) {
        self.observers.push(observer);
    }

    pub(crate) fn remove(&mut self, observer: Entity) {
        if let Some(at) = self.observers.iter().position(|&o| o == observer) {
            self.observers.swap_remove(at);
        }
    }

    pub(crate) fn replace(&mut self, observers: impl Iterator<Item = Entity>) {
        self.observers.clear();
        self.observers.extend(observers);
    }
}

/// Entities whose `Watchers` was (re)inserted and must be filled.
#[derive(Resource, Default)]
pub(crate) struct PendingWatchers(pub Vec<Entity>);

fn on_insert_watchers(mut world: bevy_ecs::world::DeferredWorld, ctx: bevy_ecs::lifecycle::HookContext) {
    if let Some(mut pending) = world.get_resource_mut::<PendingWatchers>() {
        pending.0.push(ctx.entity);
    }
}

/// [`update_watchers`]' buffers, kept between updates.
#[derive(Default)]
pub(crate) struct WatchersBuffers {
    /// The cells around a newly watched target.
    cells: Vec<u32>,
    /// The observers found seeing it.
    found: Vec<Entity>,
    /// Bit `i`: an entity of index `i` has `Watchers`.
    marked: Vec<u64>,
    /// Up to [`EDITS_PER_BATCH`] edits in message order, then sorted by target; and the sort's
    /// second buffer.
    edits: Vec<WatchersEdit>,
    spare: Vec<WatchersEdit>,
}

/// An edit of `target`'s `Watchers`: `observer` starts seeing it, or stops.
#[derive(Clone, Copy)]
struct WatchersEdit {
    target: Entity,
    observer: Entity,
    entered: bool,
}

/// The edits applied at a time: sorted by target, so each component is looked up once per
/// batch and in the order of the entities' records; bounded, so that the first update's millions
/// of enters do not need a buffer of their own (24 bytes an edit: 1.5 MiB a batch, twice with
/// the sort's buffer). Measured (`scenario --watchers 50000`, uniform 50k, one thread, pinned,
/// three alternating runs): 2^14 41.1-43.9 ms an update, 2^16 38.4-40.0, 2^18 38.7-38.9.
const EDITS_PER_BATCH: usize = 1 << 16;

/// Applies `edits` (in message order) to the targets' `Watchers`, then clears them. Sorted
/// stably by target, so the edits of one target keep their order, and so its component's
/// order is the one the messages give; each component and its buffer are asked for [`AHEAD`]
/// edits past the current target's.
fn apply(watchers: &mut Query<(Entity, &mut Watchers)>, edits: &mut Vec<WatchersEdit>, spare: &mut Vec<WatchersEdit>) {
    sort_by_u32_key(edits, spare, |e| e.target.index_u32());
    let mut run = 0;
    while run < edits.len() {
        let target = edits[run].target;
        let len = edits[run..].iter().take_while(|e| e.target == target).count();
        if let Some(next) = edits.get(run + len + AHEAD)
            && let Ok((_, w)) = watchers.get(next.target)
        {
            prefetch(core::slice::from_ref(w));
            prefetch(&w.observers[..]);
        }
        if let Ok((_, mut w)) = watchers.get_mut(target) {
            for e in &edits[run..run + len] {
                if e.entered {
                    w.push(e.observer);
                } else {
                    w.remove(e.observer);
                }
            }
        }
        run += len;
    }
    edits.clear();
}

/// Keeps [`Watchers`] in step with this update's messages, and fills newly added ones from the
/// index (a scan around the target, or its instance for an `Always` target).
///
/// The messages are read in their order, the pair engine's as the slot pairs they are made from.
/// A target's `Watchers` is looked up only when some entity with that index has one (`marked`, a
/// bit per entity index: a target that left the index this update has no slot to mark, and its
/// leaves still count), and a pair's observer is read only then, so a few `Watchers` among many
/// entities cost a bit test per message. The marked targets' edits are applied in batches sorted
/// by target ([`apply`]).
///
/// Measured (`scenario` uniform 50k, one thread, pinned, alternating runs): when every message
/// was built, its reason judged and its target looked up, ten observers with `Watchers` cost
/// 28.3 → 31.2-31.5 ms an update; then 26.9-27.5 → 27.8-28.1. Against that code, two runs each:
/// ten 28.9-29.9 → 27.1-27.5 ms, 5,000 31.4-32.4 → 29.6, all 50,000 51.4-51.6 → 48.9. Reading
/// the observer only for a marked target: callgrind, uniform 10k, ten `Watchers`, 57.59 → 56.66
/// M instructions an update (53.52 without `Watchers`). The edits applied one at a time in
/// message order, each a component lookup, all 50,000 (`scenario --watchers 50000`, three
/// alternating runs): 52.4-56.1 ms an update; in sorted batches 38.4-40.0 (5% moving 6.80-7.14
/// → 4.93-5.17).
pub(crate) fn update_watchers(
    index: Res<AoiIndex>,
    work: Res<AoiPairEngine>,
    layer: Res<ViewLayer>,
    mut pending: ResMut<PendingWatchers>,
    mut watchers: Query<(Entity, &mut Watchers)>,
    mut buffers: Local<WatchersBuffers>,
) {
    if watchers.is_empty() {
        pending.0.clear();
        return;
    }
    let WatchersBuffers {
        cells,
        found,
        marked,
        edits,
        spare,
    } = &mut *buffers;
    marked.fill(0);
    for (target, _) in &watchers {
        let i = target.index_u32() as usize;
        if marked.len() <= i / 64 {
            marked.resize(i / 64 + 1, 0);
        }
        bits::insert(marked, i);
    }
    let is_marked = |target: Entity| {
        let i = target.index_u32() as usize;
        i / 64 < marked.len() && bits::contains(marked, i)
    };
    // The engine's pairs are slots: a pair's observer is read only when its target is marked.
    let (engine_enters, engine_leaves) = engine_pairs(&index, &work.0);
    let entity = |s: u32| index.entities[s as usize];
    let in_order = (engine_enters.map(|(o, t)| (o, entity(t))))
        .filter(|&(_, t)| is_marked(t))
        .map(|(o, t)| (entity(o), t, true))
        .chain(
            (layer.enters())
                .filter(|e| is_marked(e.target))
                .map(|e| (e.observer, e.target, true)),
        )
        .chain(
            (engine_leaves.map(|(o, t)| (o, entity(t))))
                .filter(|&(_, t)| is_marked(t))
                .map(|(o, t)| (entity(o), t, false)),
        )
        .chain(
            (layer.leaves())
                .filter(|l| is_marked(l.target))
                .map(|l| (l.observer, l.target, false)),
        );
    for (observer, target, entered) in in_order {
        edits.push(WatchersEdit {
            target,
            observer,
            entered,
        });
        if edits.len() == EDITS_PER_BATCH {
            apply(&mut watchers, edits, spare);
        }
    }
    apply(&mut watchers, edits, spare);
    for target in pending.0.drain(..) {
        let Ok((_, mut w)) = watchers.get_mut(target) else {
            continue;
        };
        found.clear();
        if let Some(s) = index.slot_of(target) {
            index.observers_seeing(s, cells, found);
        }
        found.extend(layer.observers_showing(target));
        w.replace(found.iter().copied());
    }
}
