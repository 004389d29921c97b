//! The components users put on entities: [`Position`], [`ViewRange`], and the read-only
//! [`InterestSet`] the plugin maintains.

use bevy_ecs::{entity::Entity, lifecycle::HookContext, prelude::*, world::DeferredWorld};

use crate::index::PendingRemovals;

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
/// Change `radius` at any time; sets grow and shrink in the next AOI update. A negative, NaN or
/// infinite radius, or one whose square overflows `f32`, keeps the entity out of the index (as
/// observer and as target) and logs a warning once. Removing `ViewRange` empties the
/// `InterestSet` with a [`LeaveView`](crate::LeaveView) per target.
///
/// ```
/// use bevy_aoi::prelude::*;
/// use bevy_ecs::prelude::*;
/// let mut world = World::new();
/// let e = world.spawn((Position::new(0.0, 0.0), ViewRange::new(100.0))).id();
/// assert!(world.get::<InterestSet>(e).is_some(), "ViewRange should require InterestSet");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
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
}

/// What an observer sees now: every other target within its [`ViewRange`], kept exact by the
/// plugin after each update of [`AoiSystems::ComputeInterest`](crate::AoiSystems::ComputeInterest).
///
/// Read-only for users (its contents can only be changed by the plugin). To stop an entity
/// observing, remove its `ViewRange` (the set is emptied, with a `LeaveView` per target); do not
/// remove the `InterestSet` itself from an observer. Stored as a contiguous
/// `Vec` in a deterministic order (the order the index found the targets in: the same inputs give
/// the same order, whatever the thread count), not sorted: keeping it sorted would cost a search
/// and a shift per change, which at tens of thousands of changes per tick is as much as the whole
/// interest computation.
///
/// Costs: [`contains`](Self::contains) is a linear scan of the slice, `O(n)` at about a
/// nanosecond per entry (for many lookups in one large set, collect it into a hash set first);
/// [`iter`](Self::iter), [`len`](Self::len) and [`is_empty`](Self::is_empty) are `O(1)` to start.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub struct InterestSet {
    targets: Vec<Entity>,
}

impl InterestSet {
    /// Whether `target` is seen now. `O(n)`, a scan of contiguous memory.
    pub fn contains(&self, target: Entity) -> bool {
        self.targets.contains(&target)
    }

    /// The seen targets, in the set's deterministic order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Entity> + '_ {
        self.targets.iter().copied()
    }

    /// The seen targets as a slice.
    pub fn as_slice(&self) -> &[Entity] {
        &self.targets
    }

    /// How many targets are seen.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether nothing is seen.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Moves the buffer out (the interest computation fills it and puts it back).
    pub(crate) fn take(&mut self) -> Vec<Entity> {
        core::mem::take(&mut self.targets)
    }

    /// Puts a buffer filled by the interest computation back.
    pub(crate) fn put(&mut self, targets: Vec<Entity>) {
        self.targets = targets;
    }

    /// Replaces the contents, keeping the buffer.
    pub(crate) fn replace(&mut self, targets: impl Iterator<Item = Entity>) {
        self.targets.clear();
        self.targets.extend(targets);
    }

    /// Adds `target` at the end (the index's list does the same, so both stay aligned).
    pub(crate) fn push(&mut self, target: Entity) {
        self.targets.push(target);
    }

    /// Removes the entry at `at` by moving the last one there, like the index's list. Ignores an
    /// index past the end, which only a set overwritten by the user can produce (it is rewritten
    /// whole the next time its observer changes).
    pub(crate) fn swap_remove(&mut self, at: usize) {
        if at < self.targets.len() {
            self.targets.swap_remove(at);
        }
    }
}

impl<'a> IntoIterator for &'a InterestSet {
    type Item = Entity;
    type IntoIter = core::iter::Copied<core::slice::Iter<'a, Entity>>;

    fn into_iter(self) -> Self::IntoIter {
        self.targets.iter().copied()
    }
}

/// Records the entity so the next AOI update re-examines it (removal and despawn both land here).
/// The plugin may not be added (a bare `World`), so the resource is optional.
pub(crate) fn on_remove_tracked(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut pending) = world.get_resource_mut::<PendingRemovals>() {
        pending.0.push(ctx.entity);
    }
}
