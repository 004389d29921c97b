//! Visibility rules on top of distance: layers (who may see whom), hidden and always-visible
//! entities, map instances, the reverse "who sees me" set, and the `Watched` marker for AI
//! activation. Layers and hidden entities are tested inside the spatial scan (a bit test per
//! candidate); `Always`-visible targets are appended from a per-instance list; instances have
//! their own cells. Every change of a rule's component updates the affected pairs in the same
//! update, with balanced enter/leave messages.
//!
//! The full visibility rule: observer `o` sees target `t` when both are indexed, `t != o`, they
//! are in the same [`AoiInstance`], `o`'s [`AoiLayers::sees`] shares a bit with `t`'s
//! [`AoiLayers::member`], `t` is not [`AoiVisibility::Hidden`], and either `t` is
//! [`AoiVisibility::Always`] or `t` is within `o`'s [`ViewRange`](crate::ViewRange) (or its
//! [`ViewRect`](crate::ViewRect)).
//!
//! ```
//! use bevy_app::prelude::*;
//! use bevy_ecs::prelude::*;
//! use bevy_aoi::prelude::*;
//!
//! // The classic MMO case: players see monsters, NPCs and items (and each other); monsters see
//! // players (to aggro) but not items; items see nothing.
//! const PLAYER: u32 = 1 << 0;
//! const MONSTER: u32 = 1 << 1;
//! const NPC: u32 = 1 << 2;
//! const ITEM: u32 = 1 << 3;
//!
//! let mut app = App::new();
//! app.add_plugins(AoiPlugin::default());
//! let w = app.world_mut();
//! let player = w.spawn((Position::new(0.0, 0.0), ViewRange::new(50.0),
//!     AoiLayers::new(PLAYER, PLAYER | MONSTER | NPC | ITEM))).id();
//! let monster = w.spawn((Position::new(10.0, 0.0), ViewRange::new(50.0),
//!     AoiLayers::new(MONSTER, PLAYER))).id();
//! let item = w.spawn((Position::new(5.0, 0.0), AoiLayers::new(ITEM, 0))).id();
//! app.update();
//! let sees = |e| app.world().get::<InterestSet>(e).unwrap().len();
//! assert_eq!(sees(player), 2, "the player should see the monster and the item");
//! assert_eq!(sees(monster), 1, "the monster should see the player only");
//! ```

use bevy_ecs::{entity::Entity, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::components::on_remove_tracked;

/// Which layers an entity belongs to and which layers it sees, as bit masks (32 layers).
///
/// Without this component an entity belongs to every layer and sees every layer. Changing it
/// at run time updates every affected pair in the next AOI update. Layers are tested inside
/// the spatial scan (a bit test per candidate), so filtered-out targets cost no more than far
/// ones.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq, Hash)
)]
#[component(on_remove = on_remove_tracked)]
pub struct AoiLayers {
    /// The layers this entity is in (what observers' `sees` is tested against).
    pub member: u32,
    /// The layers this entity sees when it is an observer.
    pub sees: u32,
}

impl AoiLayers {
    /// Every layer.
    pub const ALL: u32 = u32::MAX;

    /// In the `member` layers, seeing the `sees` layers.
    pub const fn new(member: u32, sees: u32) -> Self {
        Self { member, sees }
    }
}

impl Default for AoiLayers {
    fn default() -> Self {
        Self::new(Self::ALL, Self::ALL)
    }
}

/// Whether distance applies to seeing this entity. Default [`AoiVisibility::Normal`].
///
/// Toggling it at run time updates every affected pair in the next AOI update. It only changes
/// how the entity is *seen*; what it sees as an observer is unchanged. Layers and instances
/// still apply to [`Always`](Self::Always) entities. A toggle of `Always` touches every observer
/// of the instance once, so it is meant for a few entities (world bosses, global effects), not
/// for thousands toggled every tick.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq, Hash)
)]
#[component(on_remove = on_remove_tracked)]
pub enum AoiVisibility {
    /// Seen by observers within range.
    #[default]
    Normal,
    /// Seen by no one (stealth, game masters).
    Hidden,
    /// Seen by every observer of its instance, whatever the distance (world boss, global effect).
    Always,
}

/// The map instance (dungeon copy, shard, parallel world) an entity is in. Default `0`, the
/// single world map. Entities in different instances never see each other; each instance has
/// its own cells in the index, so a view never scans another instance's entities (the parallel
/// work is split by changed observers, whatever their instance).
/// Moving an entity to another instance leaves everyone of the old one and enters the new one
/// in the same update.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq, Hash)
)]
#[component(on_remove = on_remove_tracked)]
pub struct AoiInstance(pub u32);

/// Who sees this entity now: the reverse of the observers' [`InterestSet`](crate::InterestSet)s,
/// kept exactly in step with them (same update). Opt-in: add it to the targets that broadcast
/// their state ("send my move to everyone who sees me"). Read-only for users.
///
/// Added to an entity that is already seen, it is filled with the current observers in the
/// next AOI update. Order: deterministic (the order the observers started seeing it, with
/// swap-removal on leave). Costs: [`contains`](Self::contains) is a linear scan, `O(n)`; the
/// others are `O(1)`.
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

/// Marker the plugin keeps on targets seen by at least one observer of the layers chosen in
/// [`AoiPlugin::watched`](crate::AoiPlugin::watched). When the last such observer stops seeing
/// it, the marker stays for [`WatchedRule::linger_ticks`] AOI updates in a row without one and
/// is removed in the next ("the monster's AI sleeps a while after the last player leaves").
/// Use it as a query filter: `Query<&mut Brain, With<Watched>>`. Inserted and removed through
/// commands: systems ordered after [`AoiSystems::Last`](crate::AoiSystems::Last), or in the next
/// frame, see the change.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
pub struct Watched;

/// Configuration of the [`Watched`] marker (build time, on the plugin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchedRule {
    /// Observers whose [`AoiLayers::member`] shares a bit with this mask make what they see
    /// `Watched` (e.g. the player layer).
    pub by_layers: u32,
    /// AOI updates in a row without such an observer during which the marker stays; it is
    /// removed in the next one (0: removed in the first update without one). The startup pass
    /// counts as one update.
    pub linger_ticks: u32,
}

/// Entities whose `Watchers` was (re)inserted and must be filled.
#[derive(Resource, Default)]
pub(crate) struct PendingWatchers(pub Vec<Entity>);

fn on_insert_watchers(mut world: bevy_ecs::world::DeferredWorld, ctx: bevy_ecs::lifecycle::HookContext) {
    if let Some(mut pending) = world.get_resource_mut::<PendingWatchers>() {
        pending.0.push(ctx.entity);
    }
}
