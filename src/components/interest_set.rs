//! [`InterestSet`]: an observer's targets, sorted by entity, with the few recent edits
//! ([`pending`]) that are not in its sorted buffer yet; and the buffer edits the pair engine
//! makes when it merges a changed observer's flips.

use bevy_ecs::{entity::Entity, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

mod pending;

use pending::{PendingEdits, ROOM};

/// What an observer sees now: every other target within its [`ViewRange`](crate::ViewRange)
/// or [`ViewRect`](crate::ViewRect), kept exact by the plugin after each update of
/// [`AoiSystems::ComputeInterest`](crate::AoiSystems::ComputeInterest) (for an observer with
/// [`ViewHysteresis`](crate::ViewHysteresis) or [`EnterBudget`](crate::EnterBudget), what those
/// rules keep and let in), each target with its tier ([`ViewTiers`](crate::ViewTiers)), and how
/// many targets wait for the budget. Empty when the plugin keeps no sets
/// ([`AoiPlugin::interest_sets`](crate::AoiPlugin::interest_sets) `false`: messages only).
///
/// Read-only for users (its contents can only be changed by the plugin; replacing it, directly
/// or through reflection, leaves the set out of step with the index, since the plugin only
/// applies differences to it, which the self-check mode,
/// [`AoiSettings::self_check_every`](crate::AoiSettings::self_check_every), reports; nothing
/// else is harmed). To stop an entity observing, remove its `ViewRange` or `ViewRect` (the set is
/// emptied, with a `LeaveView` per target); do not remove the `InterestSet` itself from an
/// observer. Iteration is in ascending [`Entity`] order (its `Ord`), so it is deterministic and
/// does not depend on the thread count or on the order changes happened in.
///
/// Its change tick (`Changed<InterestSet>`) moves in every update that edits it, and in every
/// update that rescans its observer (one that changed, or a standing one in a busy cell,
/// [`AoiSettings::busy_cell_share`](crate::AoiSettings::busy_cell_share)), even when nothing in
/// it changed: [`EnterView`](crate::EnterView) and [`LeaveView`](crate::LeaveView) say exactly
/// what did.
///
/// Stored as a `Vec` sorted by entity plus up to seven recent edits (targets added or removed)
/// kept in the component itself: an observer that did not move gains or loses a target now and
/// then, and editing the sorted buffer in place would read all of it (about ten cache lines for
/// a typical view) where the component's own lines are at hand. The edits are folded into the
/// buffer when the room is full or when the observer itself changes. Measured (`scenario`, 5%
/// of 50k moving, one thread): replaying the standing observers' edits 1.97-2.50 ms ->
/// 1.11-1.41 ms an update; callgrind, last-level misses 423 k -> 337 k an update.
///
/// Costs: [`contains`](Self::contains) is a look at the edits and a binary search, `O(log n)`
/// (about 7 steps for the 78 targets of a typical MMO view); [`iter`](Self::iter) is `O(1)` to
/// start and a step (merging the edits in as it goes); [`len`](Self::len) and
/// [`is_empty`](Self::is_empty) are `O(1)`.
///
/// Reflected as an opaque value (its `Debug`, `PartialEq`, `Default` and `Clone` compare and
/// show the targets, not the storage).
///
/// ```
/// use bevy_aoi::prelude::*;
/// let set = InterestSet::default();
/// assert!(set.is_empty() && !set.contains(bevy_ecs::entity::Entity::PLACEHOLDER));
/// ```
#[derive(Component, Clone, Default)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(opaque),
    reflect(Component, Debug, Default, PartialEq, Clone)
)]
#[repr(C)]
pub struct InterestSet {
    /// Sorted by entity, as of the last fold of `pending`.
    targets: Vec<Entity>,
    /// Targets added or removed since ([`PendingEdits`]); right after `targets`, what the pair
    /// engine's passes over many sets read.
    pending: PendingEdits,
    /// What only the view layer writes ([`ViewPart`]); none until it writes some.
    view: Option<Box<ViewPart>>,
}

// `ViewPart`'s docs count on this size.
const _: () = assert!(
    size_of::<InterestSet>() == 96,
    "an InterestSet should be 96 bytes: the buffer, the pending edits and the boxed view part"
);

/// The part of an [`InterestSet`] only the view layer writes, always with the whole set
/// ([`InterestSet::assign`]). Boxed, so the component is 96 bytes, not 120: the pair engine's
/// passes over every changed observer's component (taking the buffers out and putting them back)
/// stream a fifth fewer bytes.
#[derive(Clone, Debug, Default)]
struct ViewPart {
    /// The tier of each target, in the same order; empty for an observer without
    /// [`ViewTiers`](crate::ViewTiers) (every target in tier 0). A tiered set has no pending
    /// edits.
    tiers: Vec<u8>,
    /// Targets waiting for the observer's [`EnterBudget`](crate::EnterBudget).
    waiting: u32,
}

impl PartialEq for InterestSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.waiting() == other.waiting()
            && self.iter_with_tiers().eq(other.iter_with_tiers())
    }
}

impl Eq for InterestSet {}

impl core::fmt::Debug for InterestSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("InterestSet")
            .field("targets", &DebugTargets(self))
            .field("tiers", &self.tiers())
            .field("waiting", &self.waiting())
            .finish()
    }
}

/// The targets of an `InterestSet`, for its `Debug` (the storage would show the pending edits
/// apart).
struct DebugTargets<'a>(&'a InterestSet);

impl core::fmt::Debug for DebugTargets<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl InterestSet {
    /// Whether `target` is seen now. `O(log n)`: a binary search, after a look at the few
    /// recent edits.
    pub fn contains(&self, target: Entity) -> bool {
        match self.pending.edit_of(target) {
            Some(added) => added,
            None => self.targets.binary_search(&target).is_ok(),
        }
    }

    /// The seen targets, in ascending [`Entity`] order. `O(1)` to start, `O(1)` a step.
    pub fn iter(&self) -> InterestSetIter<'_> {
        InterestSetIter {
            targets: self.targets.iter(),
            pending: &self.pending,
            next_edit: 0,
        }
    }

    /// How many targets are seen.
    pub fn len(&self) -> usize {
        // Saturating: only a set replaced behind the plugin's back can hold a removal of a
        // target it does not have.
        self.targets.len().saturating_add_signed(self.pending.len_change())
    }

    /// Whether nothing is seen.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tier of `target` if it is seen ([`ViewTiers`](crate::ViewTiers): 0 is the nearest
    /// ring; always 0 for an observer without tiers). `O(log n)`, a binary search.
    pub fn tier_of(&self, target: Entity) -> Option<u8> {
        if !self.pending.is_empty() {
            // Untiered (see `ViewPart::tiers`).
            return self.contains(target).then_some(0);
        }
        let at = self.targets.binary_search(&target).ok()?;
        Some(self.tiers().get(at).copied().unwrap_or(0))
    }

    /// The seen targets with their tiers, in ascending [`Entity`] order. `O(1)` to start.
    pub fn iter_with_tiers(&self) -> impl ExactSizeIterator<Item = (Entity, u8)> + '_ {
        let tiers = self.tiers();
        self.iter()
            .enumerate()
            .map(move |(i, t)| (t, tiers.get(i).copied().unwrap_or(0)))
    }

    /// How many targets qualify to enter but wait for the observer's
    /// [`EnterBudget`](crate::EnterBudget) (0 without a budget), as of the last AOI update.
    pub fn waiting(&self) -> usize {
        self.view.as_ref().map_or(0, |view| view.waiting as usize)
    }

    /// The tier of each target, in order; empty when untiered.
    fn tiers(&self) -> &[u8] {
        self.view.as_ref().map_or(&[], |view| &view.tiers)
    }

    /// Moves the buffer out, up to date (the interest computation edits it and puts it back).
    pub(crate) fn take(&mut self) -> Vec<Entity> {
        self.fold();
        core::mem::take(&mut self.targets)
    }

    /// Puts a buffer back, the whole set; it must be sorted ([`merge_targets`]). (A set the
    /// engine did not take, since it was empty, may hold edits that cancel out: they go too.)
    pub(crate) fn put(&mut self, targets: Vec<Entity>) {
        debug_assert!(targets.is_sorted(), "an InterestSet buffer should be sorted");
        self.pending.clear();
        self.targets = targets;
    }

    /// The sorted buffer if the next edit would fold the pending edits into it (the room is
    /// full), else nothing: what an edit ahead should ask the cache for.
    pub(crate) fn buffer_to_fold(&self) -> &[Entity] {
        if self.pending.is_full() { &self.targets } else { &[] }
    }

    /// Empties the set, keeping the buffer.
    pub(crate) fn clear(&mut self) {
        self.targets.clear();
        self.pending.clear();
        if let Some(view) = &mut self.view {
            view.tiers.clear();
            view.waiting = 0;
        }
    }

    /// Whether the set holds exactly `seen` (sorted by entity; tiers empty when untiered) and
    /// `waiting`.
    pub(crate) fn holds(&self, seen: &[(Entity, u8)], tiered: bool, waiting: u32) -> bool {
        self.waiting() == waiting as usize
            && self.len() == seen.len()
            && self.iter().zip(seen).all(|(t, s)| t == s.0)
            && (if tiered {
                self.tiers().iter().eq(seen.iter().map(|s| &s.1))
            } else {
                self.tiers().is_empty()
            })
    }

    /// Replaces the contents with `seen` (sorted by entity), keeping tiers only when `tiered`.
    pub(crate) fn assign(&mut self, seen: impl Iterator<Item = (Entity, u8)> + Clone, tiered: bool, waiting: u32) {
        debug_assert!(
            seen.clone().is_sorted(),
            "an InterestSet should be assigned sorted targets"
        );
        self.pending.clear();
        self.targets.clear();
        self.targets.extend(seen.clone().map(|s| s.0));
        if tiered || waiting > 0 || self.view.is_some() {
            let view = self.view.get_or_insert_default();
            view.tiers.clear();
            if tiered {
                view.tiers.extend(seen.map(|s| s.1));
            }
            view.waiting = waiting;
        }
    }

    /// Adds `target`, which is not in the set: recorded as a pending edit, or, when the room is
    /// full, the pending edits are folded into the buffer and `target` inserted in its place.
    pub(crate) fn insert(&mut self, target: Entity) {
        self.edit(target, true);
    }

    /// Removes `target`, which is in the set (as [`Self::insert`]).
    pub(crate) fn remove(&mut self, target: Entity) {
        self.edit(target, false);
    }

    /// Adds `target` (`added`, not in the set) or removes it (in the set). Not checked: a set
    /// replaced behind the plugin's back may get edits that change nothing, and stays out of
    /// step (see the type's doc) without harm to anything else.
    #[inline]
    fn edit(&mut self, target: Entity, added: bool) {
        if !self.pending.record(target, added) {
            self.fold();
            if added {
                insert_target(&mut self.targets, target);
            } else {
                remove_target(&mut self.targets, target);
            }
        }
    }

    /// Applies the pending edits to the buffer.
    fn fold(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let (mut enters, mut leaves) = ([Entity::PLACEHOLDER; ROOM], [Entity::PLACEHOLDER; ROOM]);
        let (mut e, mut l) = (0, 0);
        for (t, added) in self.pending.iter() {
            if added {
                enters[e] = t;
                e += 1;
            } else {
                leaves[l] = t;
                l += 1;
            }
        }
        merge_targets(&mut self.targets, &mut enters[..e], &mut leaves[..l]);
        self.pending.clear();
    }
}

/// The targets of an [`InterestSet`] in ascending [`Entity`] order ([`InterestSet::iter`]): the
/// sorted buffer with the pending edits merged in as it goes.
pub struct InterestSetIter<'a> {
    targets: core::slice::Iter<'a, Entity>,
    pending: &'a PendingEdits,
    /// The first pending edit not merged in yet.
    next_edit: usize,
}

impl Iterator for InterestSetIter<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        loop {
            let Some((edited, added)) = self.pending.get(self.next_edit) else {
                return self.targets.next().copied();
            };
            match self.targets.as_slice().first() {
                Some(&t) if t < edited => {
                    self.targets.next();
                    return Some(t);
                }
                Some(&t) if t == edited => {
                    // Removed (an added target is not in the buffer).
                    self.targets.next();
                    self.next_edit += 1;
                }
                _ => {
                    self.next_edit += 1;
                    if added {
                        return Some(edited);
                    }
                }
            }
        }
    }

    /// Exact: the buffer's rest, plus the adds and less the removes not merged in yet (those
    /// removes are of targets still ahead in the buffer).
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let edits = (self.next_edit..).map_while(|i| self.pending.get(i));
        let change: isize = edits.map(|(_, added)| if added { 1 } else { -1 }).sum();
        let left = self.targets.len().saturating_add_signed(change);
        (left, Some(left))
    }
}

impl ExactSizeIterator for InterestSetIter<'_> {}

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
    /// buffer the scan has just brought into cache) rather than by two passes over all of it...
    const ONE_BY_ONE_UP_TO: usize = 8;
    /// ... and up to this many in a buffer of at most [`SHORT`] targets, whose shifts are short
    /// (callgrind per update, uniform 10k: 72.51 → 70.08 M instructions with 16 changes in any
    /// buffer, but crowded 2k, 2,000 targets a set, slower in alternating runs; 32 no better).
    const ONE_BY_ONE_IN_SHORT_UP_TO: usize = 16;
    /// See [`ONE_BY_ONE_IN_SHORT_UP_TO`].
    const SHORT: usize = 256;
    let one_by_one = if targets.len() <= SHORT {
        ONE_BY_ONE_IN_SHORT_UP_TO
    } else {
        ONE_BY_ONE_UP_TO
    };
    if enters.len() + leaves.len() <= one_by_one {
        // The scan prefetched this buffer: bisecting it costs a few cached probes. A leave and
        // an enter together shift only the entries between their places (callgrind, uniform
        // 10k: 1.0% fewer instructions an update than a removal and an insertion each).
        let paired = enters.len().min(leaves.len());
        for (&old, &new) in leaves.iter().zip(enters.iter()) {
            replace_target(targets, old, new);
        }
        for &t in &leaves[paired..] {
            if let Ok(at) = targets.binary_search(&t) {
                targets.remove(at);
            }
        }
        reserve_with_headroom(targets, targets.len() + enters.len() - paired);
        for &t in &enters[paired..] {
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

/// Removes `old` from a sorted buffer of targets (if it is there) and inserts `new` (if it is not),
/// shifting only the entries between their places.
#[inline]
fn replace_target(targets: &mut Vec<Entity>, old: Entity, new: Entity) {
    match (targets.binary_search(&old), targets.binary_search(&new)) {
        (Ok(from), Err(to)) if from < to => {
            targets.copy_within(from + 1..to, from);
            targets[to - 1] = new;
        }
        (Ok(from), Err(to)) => {
            targets.copy_within(to..from, to + 1);
            targets[to] = new;
        }
        (Ok(_), Ok(_)) if old == new => {}
        (Ok(from), Ok(_)) => {
            targets.remove(from);
        }
        (Err(_), Err(to)) => targets.insert(to, new),
        (Err(_), Ok(_)) => {}
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
    type IntoIter = InterestSetIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests;
