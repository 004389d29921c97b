//! The components users put on entities: [`Position`], [`ViewRange`] or [`ViewRect`], and the
//! read-only [`InterestSet`] the plugin maintains.

use bevy_ecs::{entity::Entity, lifecycle::HookContext, prelude::*, world::DeferredWorld};
#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

mod interest_set;

pub use interest_set::{InterestSet, InterestSetIter};
pub(crate) use interest_set::{merge_targets, reserve_with_headroom};

/// Where an entity is. Every entity with a `Position` is a *target*: observers can see it.
///
/// Mutate it in place every tick (`*pos = Position::new(..)` or field writes); the plugin picks up
/// the change through change detection. Writing the same value again costs one comparison.
/// Which two axes count is the plugin's [`Plane`](crate::Plane) (`XY` by default).
///
/// A non-finite coordinate keeps the entity out of the index (it sees nothing and nobody sees it)
/// and logs a warning once; it rejoins as soon as its position is finite again.
///
/// ```
/// use bevy_aoi::prelude::*;
/// let mut p = Position::new(3.0, 4.0);
/// p.x += 1.0;
/// assert_eq!(p, Position::new_3d(4.0, 4.0, 0.0));
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
#[component(on_remove = on_remove_tracked)]
pub struct Position {
    /// X coordinate.
    pub x: f32,
    /// Y coordinate (up in [`Plane::XZ`](crate::Plane::XZ) games, where it is ignored).
    pub y: f32,
    /// Z coordinate (ignored in [`Plane::XY`](crate::Plane::XY)).
    pub z: f32,
}

impl Position {
    /// A 2D position (`z = 0`).
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y, z: 0.0 }
    }

    /// A 3D position.
    pub const fn new_3d(x: f32, y: f32, z: f32) -> Self {
        Self { x, y, z }
    }
}

/// Makes an entity an *observer* that sees every target within `radius` (the boundary counts as
/// inside). Requires [`InterestSet`], which is inserted automatically.
///
/// Change `radius` at any time; sets grow and shrink in the next AOI update. Any radius from 0
/// to `+∞` is valid and follows the contract's test `dx² + dy² ≤ r²` in `f32`: an unlimited
/// radius ([`ViewRange::unlimited`]) sees every target of its instance, and so does any radius
/// whose square overflows to `+∞` (above about `1.84e19`, up to `f32::MAX`); layers, hidden
/// targets and instances still apply. Game masters, spectators, minimap feeds and AI directors
/// are such observers. A negative or NaN radius keeps the entity out of the index (as observer
/// and as target) and logs a warning once. Removing `ViewRange` empties the `InterestSet` with a
/// [`LeaveView`](crate::LeaveView) per target.
///
/// Cost of a huge radius: such an observer finds its targets by walking the occupied cells of its
/// instance (not empty space), so it costs `O(targets in its instance)` whenever it is
/// recomputed (when it moves, changes range or rules); a moving target tests it directly, two
/// distance tests (see [`AoiStats::wide_observers`](crate::AoiStats::wide_observers)).
///
/// ```
/// use bevy_aoi::prelude::*;
/// use bevy_ecs::prelude::*;
/// let mut world = World::new();
/// let e = world.spawn((Position::new(0.0, 0.0), ViewRange::new(100.0))).id();
/// assert!(world.get::<InterestSet>(e).is_some(), "ViewRange should require InterestSet");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq)
)]
#[require(InterestSet)]
#[component(on_remove = on_remove_tracked)]
pub struct ViewRange {
    /// How far this observer sees, in world units.
    pub radius: f32,
}

impl ViewRange {
    /// A view range of `radius` world units.
    pub const fn new(radius: f32) -> Self {
        Self { radius }
    }

    /// An unlimited view (radius `+∞`): every target of the observer's instance, whatever the
    /// distance, that its layers and the targets' visibility modes allow.
    ///
    /// ```
    /// use bevy_app::prelude::*;
    /// use bevy_aoi::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins(AoiPlugin::default());
    /// let gm = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::unlimited())).id();
    /// app.world_mut().spawn(Position::new(1.0e30, -1.0e30));
    /// app.world_mut().spawn((Position::new(5.0, 0.0), AoiVisibility::Hidden));
    /// app.update();
    /// let sees = app.world().get::<InterestSet>(gm).unwrap().len();
    /// assert_eq!(sees, 1, "the game master should see the far target, not the hidden one");
    /// ```
    pub const fn unlimited() -> Self {
        Self { radius: f32::INFINITY }
    }

    /// Whether this view sees every target of its instance whatever the distance: its radius is
    /// `+∞` or so large that its square overflows `f32`.
    pub fn is_unlimited(&self) -> bool {
        self.radius * self.radius == f32::INFINITY
    }
}

/// Makes an entity an *observer* that sees an axis-aligned rectangle centred on it, instead of
/// the disc of a [`ViewRange`]: a target is seen when `|dx| <= half_width` and
/// `|dy| <= half_height` on the plugin's plane (`x`/`y` in [`Plane::XY`](crate::Plane::XY),
/// `x`/`z` in [`Plane::XZ`](crate::Plane::XZ)), the boundary inside, with every visibility rule
/// (layers, hidden, always, instances) as for a radius. The screen of a 2D game's client.
/// Requires [`InterestSet`], which is inserted automatically.
///
/// Change it at any time. Half extents from 0 to `+∞` are valid (`+∞` on one axis: a band).
/// A negative or NaN half extent, a `ViewRect` together with a `ViewRange` on one entity (keep
/// one), or a `ViewRect` with [`Plane::XYZ`](crate::Plane::XYZ) (no plane to lay it in) keeps the
/// entity out of the index as bad input, with a warning logged once. Removing it empties the
/// `InterestSet` with a [`LeaveView`](crate::LeaveView) per target.
///
/// Cost: a little more than a disc of the same area (measured 1.1–1.2× where everyone moves,
/// about 1.3× where 5% move: the README's "Other workloads"). Its own scans look at the
/// cells within its half extents; a moving target finds it within the disc around the rectangle
/// (radius `sqrt(half_width² + half_height²)`), which also counts for the automatic cell side
/// and the wide observers; the exact test is two comparisons instead of a squared distance.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let w = app.world_mut();
/// let screen = w.spawn((Position::new(0.0, 0.0), ViewRect::new(16.0, 9.0))).id();
/// let on_screen = w.spawn(Position::new(15.0, -9.0)).id(); // on the bottom edge: inside
/// w.spawn(Position::new(0.0, 10.0)); // within 16 of the centre, but above the screen
/// app.update();
/// let set = app.world().get::<InterestSet>(screen).unwrap();
/// assert_eq!(set.iter().collect::<Vec<_>>(), [on_screen]);
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq)
)]
#[require(InterestSet)]
#[component(on_remove = on_remove_tracked)]
pub struct ViewRect {
    /// How far it sees along the plane's first axis (`x`), each way.
    pub half_width: f32,
    /// How far it sees along the plane's second axis (`y`, or `z` in `Plane::XZ`), each way.
    pub half_height: f32,
}

impl ViewRect {
    /// A rectangular view of `half_width` by `half_height` each way.
    pub const fn new(half_width: f32, half_height: f32) -> Self {
        Self {
            half_width,
            half_height,
        }
    }
}

/// Entities whose `Position`, view or rules component was removed (or that were despawned) since
/// the last AOI update, filled by [`on_remove_tracked`].
#[derive(Resource, Default)]
pub(crate) struct PendingRemovals(pub Vec<Entity>);

/// Records the entity so the next AOI update re-examines it (removal and despawn both land here).
/// The plugin may not be added (a bare `World`), so the resource is optional.
pub(crate) fn on_remove_tracked(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut pending) = world.get_resource_mut::<PendingRemovals>() {
        pending.0.push(ctx.entity);
    }
}
