//! The rules' components on top of distance: layers (who may see whom), hidden and
//! always-visible entities, map instances. The rule itself, which every stage calls, is
//! `visibility.rs`. Layers and hidden entities are tested inside the spatial scan (a bit test
//! per candidate); `Always`-visible targets are appended from a per-instance list; instances
//! have their own cells. Every change of a rule's component updates the affected pairs in the
//! same update, with balanced enter/leave messages.
//!
//! The full visibility rule: observer `o` sees target `t` when both are indexed, `t != o`, they
//! are in the same [`AoiInstance`], `o`'s [`AoiLayers::sees`] shares a bit with `t`'s
//! [`AoiLayers::member`], `t` is not [`AoiVisibility::Hidden`], and either `t` is
//! [`AoiVisibility::Always`] or `t` is within `o`'s [`ViewRange`](crate::ViewRange) (or its
//! [`ViewRect`](crate::ViewRect)).

use bevy_ecs::prelude::*;

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::components::on_remove_tracked;

/// Which layers an entity belongs to and which layers it sees, as bit masks (32 layers).
///
/// Without this component an entity belongs to every layer and sees every layer. Changing it
/// at run time updates every affected pair in the next AOI update. Layers are tested inside
/// the spatial scan (a bit test per candidate), so filtered-out targets cost no more than far
/// ones.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// // The classic MMO case: players see monsters, NPCs and items (and each other); monsters see
/// // players (to aggro) but not items; items see nothing.
/// const PLAYER: u32 = 1 << 0;
/// const MONSTER: u32 = 1 << 1;
/// const NPC: u32 = 1 << 2;
/// const ITEM: u32 = 1 << 3;
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let w = app.world_mut();
/// let player = w.spawn((Position::new(0.0, 0.0), ViewRange::new(50.0),
///     AoiLayers::new(PLAYER, PLAYER | MONSTER | NPC | ITEM))).id();
/// let monster = w.spawn((Position::new(10.0, 0.0), ViewRange::new(50.0),
///     AoiLayers::new(MONSTER, PLAYER))).id();
/// w.spawn((Position::new(5.0, 0.0), AoiLayers::new(ITEM, 0)));
/// app.update();
/// let sees = |e| app.world().get::<InterestSet>(e).unwrap().len();
/// assert_eq!(sees(player), 2, "the player should see the monster and the item");
/// assert_eq!(sees(monster), 1, "the monster should see the player only");
/// ```
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
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let w = app.world_mut();
/// let player = w.spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let boss = w.spawn((Position::new(5000.0, 0.0), AoiVisibility::Always)).id();
/// let game_master = w.spawn((Position::new(1.0, 0.0), AoiVisibility::Hidden)).id();
/// app.update();
/// let set = app.world().get::<InterestSet>(player).unwrap();
/// assert!(set.contains(boss), "an `Always` target should be seen whatever the distance");
/// assert!(!set.contains(game_master), "a `Hidden` target should be seen by no one");
/// ```
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
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let player = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let ghost = app.world_mut().spawn((Position::new(1.0, 0.0), AoiInstance(7))).id();
/// app.update();
/// let sees_ghost = |app: &App| app.world().get::<InterestSet>(player).unwrap().contains(ghost);
/// assert!(!sees_ghost(&app), "entities in different instances should never see each other");
/// app.world_mut().get_mut::<AoiInstance>(ghost).unwrap().0 = 0;
/// app.update();
/// assert!(sees_ghost(&app), "in the player's instance, the ghost should be seen");
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq, Hash)
)]
#[component(on_remove = on_remove_tracked)]
pub struct AoiInstance(pub u32);
