//! The components users put on entities: [`Position`], [`ViewRange`] or [`ViewRect`], and the
//! read-only [`InterestSet`] the plugin maintains.

use bevy_ecs::{entity::Entity, lifecycle::HookContext, prelude::*, world::DeferredWorld};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

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
/// Cost: about that of a disc of the same area (measured 0.97–0.99×). Its own scans look at the
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
/// assert_eq!(set.as_slice(), [on_screen]);
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

/// What an observer sees now: every other target within its [`ViewRange`] or [`ViewRect`], kept
/// exact by the plugin after each update of
/// [`AoiSystems::ComputeInterest`](crate::AoiSystems::ComputeInterest) (for an observer with
/// [`ViewHysteresis`](crate::ViewHysteresis) or [`EnterBudget`](crate::EnterBudget), what those
/// rules keep and let in), each target with its tier ([`ViewTiers`](crate::ViewTiers)), and how
/// many targets wait for the budget.
///
/// Read-only for users (its contents can only be changed by the plugin; writing them through
/// reflection leaves the set out of step with the index until its observer changes, which the
/// self-check mode, [`AoiSettings::self_check_every`](crate::AoiSettings::self_check_every),
/// reports). To stop an entity observing, remove its `ViewRange` or `ViewRect` (the set is
/// emptied, with a `LeaveView` per target); do not remove the `InterestSet` itself from an
/// observer. Stored as a contiguous `Vec` sorted by
/// [`Entity`] (its `Ord`), so iteration order is deterministic and does not depend on the thread
/// count or on the order changes happened in.
///
/// Costs: [`contains`](Self::contains) is a binary search, `O(log n)` (about 7 steps for the 78
/// targets of a typical MMO view); [`iter`](Self::iter), [`as_slice`](Self::as_slice),
/// [`len`](Self::len) and [`is_empty`](Self::is_empty) are `O(1)` to start. The plugin adds and
/// removes single targets with a search and a shift of the entries after it (`O(n)` bytes moved,
/// a few hundred bytes for a typical view).
///
/// ```
/// use bevy_aoi::prelude::*;
/// let set = InterestSet::default();
/// assert!(set.is_empty() && !set.contains(bevy_ecs::entity::Entity::PLACEHOLDER));
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
pub struct InterestSet {
    targets: Vec<Entity>,
    /// The tier of each target, in the same order; empty for an observer without
    /// [`ViewTiers`](crate::ViewTiers) (every target in tier 0).
    tiers: Vec<u8>,
    /// Targets waiting for the observer's [`EnterBudget`](crate::EnterBudget).
    waiting: u32,
}

impl InterestSet {
    /// Whether `target` is seen now. `O(log n)`, a binary search.
    pub fn contains(&self, target: Entity) -> bool {
        self.targets.binary_search(&target).is_ok()
    }

    /// The seen targets, in ascending [`Entity`] order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Entity> + '_ {
        self.targets.iter().copied()
    }

    /// The seen targets as a slice, in ascending [`Entity`] order.
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

    /// The tier of `target` if it is seen ([`ViewTiers`](crate::ViewTiers): 0 is the nearest
    /// ring; always 0 for an observer without tiers). `O(log n)`, a binary search.
    pub fn tier_of(&self, target: Entity) -> Option<u8> {
        let at = self.targets.binary_search(&target).ok()?;
        Some(self.tiers.get(at).copied().unwrap_or(0))
    }

    /// The seen targets with their tiers, in ascending [`Entity`] order. `O(1)` to start.
    pub fn iter_with_tiers(&self) -> impl ExactSizeIterator<Item = (Entity, u8)> + '_ {
        let tiered = !self.tiers.is_empty();
        self.targets
            .iter()
            .enumerate()
            .map(move |(i, &t)| (t, if tiered { self.tiers[i] } else { 0 }))
    }

    /// How many targets qualify to enter but wait for the observer's
    /// [`EnterBudget`](crate::EnterBudget) (0 without a budget), as of the last AOI update.
    pub fn waiting(&self) -> usize {
        self.waiting as usize
    }

    /// Moves the buffer out (the interest computation edits it and puts it back).
    pub(crate) fn take(&mut self) -> Vec<Entity> {
        core::mem::take(&mut self.targets)
    }

    /// Puts a buffer back; it must be sorted ([`merge_targets`]).
    pub(crate) fn put(&mut self, targets: Vec<Entity>) {
        debug_assert!(targets.is_sorted(), "an InterestSet buffer should be sorted");
        self.targets = targets;
    }

    /// Empties the set, keeping the buffer.
    pub(crate) fn clear(&mut self) {
        self.targets.clear();
        self.tiers.clear();
        self.waiting = 0;
    }

    /// Whether the set holds exactly `seen` (sorted by entity; tiers empty when untiered) and
    /// `waiting`.
    pub(crate) fn holds(&self, seen: &[(Entity, u8)], tiered: bool, waiting: u32) -> bool {
        self.waiting == waiting
            && self.targets.len() == seen.len()
            && self.targets.iter().zip(seen).all(|(t, s)| *t == s.0)
            && (if tiered {
                self.tiers.iter().eq(seen.iter().map(|s| &s.1))
            } else {
                self.tiers.is_empty()
            })
    }

    /// Replaces the contents with `seen` (sorted by entity), keeping tiers only when `tiered`.
    pub(crate) fn assign(&mut self, seen: impl Iterator<Item = (Entity, u8)> + Clone, tiered: bool, waiting: u32) {
        debug_assert!(
            seen.clone().is_sorted(),
            "an InterestSet should be assigned sorted targets"
        );
        self.targets.clear();
        self.targets.extend(seen.clone().map(|s| s.0));
        self.tiers.clear();
        if tiered {
            self.tiers.extend(seen.map(|s| s.1));
        }
        self.waiting = waiting;
    }

    /// Adds `target` in its place.
    pub(crate) fn insert(&mut self, target: Entity) {
        insert_target(&mut self.targets, target);
    }

    /// Removes `target` if it is there.
    pub(crate) fn remove(&mut self, target: Entity) {
        remove_target(&mut self.targets, target);
    }
}

/// Makes room for `len` entries with an eighth more to spare, instead of `Vec`'s doubling: the
/// millions of per-observer buffers grow a little at a time, and doubling them would leave up to
/// half of their memory unused. Growth stays geometric, so pushes stay amortized `O(1)`.
#[inline]
pub(crate) fn reserve_with_headroom<T>(v: &mut Vec<T>, len: usize) {
    if v.capacity() < len {
        v.reserve_exact(len + len / 8 + 4 - v.len());
    }
}

/// Where `target` is in a sorted buffer of targets (`Err`: where it would go). Short buffers are
/// scanned forward rather than bisected: the shift after an insert or remove is linear anyway,
/// and a buffer that is not in cache streams in faster than it answers seven dependent probes.
#[inline]
fn find_target(targets: &[Entity], target: Entity) -> Result<usize, usize> {
    const SCAN_UP_TO: usize = 128;
    if targets.len() > SCAN_UP_TO {
        return targets.binary_search(&target);
    }
    match targets.iter().position(|t| *t >= target) {
        Some(at) if targets[at] == target => Ok(at),
        Some(at) => Err(at),
        None => Err(targets.len()),
    }
}

/// Inserts `target` into a sorted buffer of targets (nothing if it is there already).
#[inline]
pub(crate) fn insert_target(targets: &mut Vec<Entity>, target: Entity) {
    if let Err(at) = find_target(targets, target) {
        targets.insert(at, target);
    }
}

/// Applies one observer's enters and leaves to its sorted buffer of targets: a few changes one
/// by one, many in one pass each (sorting the two lists first, `O(n + k log k)` for `k`
/// changes).
pub(crate) fn merge_targets(targets: &mut Vec<Entity>, enters: &mut [Entity], leaves: &mut [Entity]) {
    /// Up to this many changes, each is applied on its own (a binary search and a shift of a
    /// buffer the scan has just brought into cache) rather than by two passes over all of it.
    const ONE_BY_ONE_UP_TO: usize = 8;
    if enters.len() + leaves.len() <= ONE_BY_ONE_UP_TO {
        // The scan prefetched this buffer: bisecting it costs a few cached probes.
        for &t in leaves.iter() {
            if let Ok(at) = targets.binary_search(&t) {
                targets.remove(at);
            }
        }
        reserve_with_headroom(targets, targets.len() + enters.len());
        for &t in enters.iter() {
            if let Err(at) = targets.binary_search(&t) {
                targets.insert(at, t);
            }
        }
        return;
    }
    if !leaves.is_empty() {
        leaves.sort_unstable();
        let mut l = 0;
        targets.retain(|t| {
            while l < leaves.len() && leaves[l] < *t {
                l += 1;
            }
            !(l < leaves.len() && leaves[l] == *t)
        });
    }
    if !enters.is_empty() {
        enters.sort_unstable();
        // Merge from the back into the grown buffer.
        let (mut i, mut j) = (targets.len(), enters.len());
        reserve_with_headroom(targets, i + j);
        targets.resize(i + j, Entity::PLACEHOLDER);
        for k in (0..targets.len()).rev() {
            if j == 0 {
                break;
            }
            if i > 0 && targets[i - 1] > enters[j - 1] {
                targets[k] = targets[i - 1];
                i -= 1;
            } else {
                targets[k] = enters[j - 1];
                j -= 1;
            }
        }
    }
}

/// Removes `target` from a sorted buffer of targets (nothing if it is not there).
#[inline]
pub(crate) fn remove_target(targets: &mut Vec<Entity>, target: Entity) {
    if let Ok(at) = find_target(targets, target) {
        targets.remove(at);
    }
}

impl<'a> IntoIterator for &'a InterestSet {
    type Item = Entity;
    type IntoIter = core::iter::Copied<core::slice::Iter<'a, Entity>>;

    fn into_iter(self) -> Self::IntoIter {
        self.targets.iter().copied()
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use bevy_ecs::entity::{EntityGeneration, EntityIndex};

    use super::*;

    #[test]
    fn merge_targets_gives_the_sorted_set_after_the_changes_few_or_many() {
        let mut state = 5u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        // Some entities share an index with another generation: the order is on all the bits.
        let entity = |i: u64| {
            let index = EntityIndex::from_raw_u32(i as u32 % 40).expect("a small index should be valid");
            Entity::from_index_and_generation(index, EntityGeneration::FIRST.after_versions(i as u32 / 40))
        };
        for round in 0..2000 {
            let before: BTreeSet<u64> = (0..next(30)).map(|_| next(80)).collect();
            let changes = if round % 2 == 0 { next(9) } else { 9 + next(30) };
            let (mut enters, mut leaves) = (Vec::new(), Vec::new());
            let mut want = before.clone();
            for _ in 0..changes {
                let i = next(80);
                let new = !enters.contains(&entity(i)) && !leaves.contains(&entity(i));
                if new && before.contains(&i) {
                    leaves.push(entity(i));
                    want.remove(&i);
                } else if new {
                    enters.push(entity(i));
                    want.insert(i);
                }
            }
            let mut targets: Vec<Entity> = before.iter().map(|&i| entity(i)).collect();
            targets.sort_unstable();
            merge_targets(&mut targets, &mut enters, &mut leaves);
            let mut want: Vec<Entity> = want.into_iter().map(entity).collect();
            want.sort_unstable();
            assert_eq!(
                targets, want,
                "round {round}: the buffer should be the old set minus the leaves plus the enters, sorted"
            );
        }
    }
}
