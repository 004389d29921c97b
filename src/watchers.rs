//! The [`Watchers`] feature: who sees a target now, the reverse of the observers'
//! `InterestSet`s, on the targets that opt in. Its component, the components (re)inserted and
//! waiting to be filled ([`PendingWatchers`], from the component's hook) and the system that
//! keeps them, [`update_watchers`], which reads this update's messages.

use bevy_ecs::{entity::Entity, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::{index::AoiIndex, pair_engine::AoiPairEngine, systems::messages, view_model::layer::ViewLayer};

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

/// Keeps [`Watchers`] in step with this update's messages, and fills newly added ones from the
/// index (a scan around the target, or its instance for an `Always` target).
pub(crate) fn update_watchers(
    index: Res<AoiIndex>,
    work: Res<AoiPairEngine>,
    layer: Res<ViewLayer>,
    mut pending: ResMut<PendingWatchers>,
    mut watchers: Query<&mut Watchers>,
    mut cells: Local<Vec<u32>>,
    mut found: Local<Vec<Entity>>,
) {
    if watchers.is_empty() {
        pending.0.clear();
        return;
    }
    let (enters, leaves) = messages(&index, &work.0, &layer);
    for e in enters {
        if let Ok(mut w) = watchers.get_mut(e.target) {
            w.push(e.observer);
        }
    }
    for l in leaves {
        if let Ok(mut w) = watchers.get_mut(l.target) {
            w.remove(l.observer);
        }
    }
    for target in pending.0.drain(..) {
        let Ok(mut w) = watchers.get_mut(target) else { continue };
        found.clear();
        if let Some(s) = index.slot_of(target) {
            index.observers_seeing(s, &mut cells, &mut found);
        }
        found.extend(layer.observers_showing(target));
        w.replace(found.iter().copied());
    }
}
