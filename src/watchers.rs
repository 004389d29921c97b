//! The [`Watchers`] feature: who sees a target now, the reverse of the observers'
//! `InterestSet`s, on the targets that opt in. Its component, the components (re)inserted and
//! waiting to be filled ([`PendingWatchers`], from the component's hook) and the system that
//! keeps them, [`update_watchers`], which reads this update's messages.

use bevy_ecs::{entity::Entity, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::{bits, index::AoiIndex, pair_engine::AoiPairEngine, systems::engine_pairs, view_model::layer::ViewLayer};

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
}

/// Keeps [`Watchers`] in step with this update's messages, and fills newly added ones from the
/// index (a scan around the target, or its instance for an `Always` target).
///
/// The messages are read in their order, the pair engine's as the slot pairs they are made from:
/// a target's `Watchers` is looked up only when some entity with that index has one (`marked`,
/// a bit per entity index), so a few `Watchers` among many entities cost a bit test per
/// message. Measured (`scenario` uniform 50k, one thread, pinned, alternating runs): when every
/// message was built, its reason judged and its target looked up, ten observers with `Watchers`
/// cost 28.3 → 31.2-31.5 ms an update; now 26.9-27.5 → 27.8-28.1. Against that code, two runs
/// each: ten 28.9-29.9 → 27.1-27.5 ms, 5,000 31.4-32.4 → 29.6, all 50,000 51.4-51.6 → 48.9.
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
    let WatchersBuffers { cells, found, marked } = &mut *buffers;
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
    let mut edit = |observer: Entity, target: Entity, entered: bool| {
        if is_marked(target)
            && let Ok((_, mut w)) = watchers.get_mut(target)
        {
            if entered { w.push(observer) } else { w.remove(observer) }
        }
    };
    let (engine_enters, engine_leaves) = engine_pairs(&index, &work.0);
    let entity = |s: u32| index.entities[s as usize];
    engine_enters.for_each(|(o, t)| edit(entity(o), entity(t), true));
    layer.enters().for_each(|e| edit(e.observer, e.target, true));
    engine_leaves.for_each(|(o, t)| edit(entity(o), entity(t), false));
    layer.leaves().for_each(|l| edit(l.observer, l.target, false));
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
