//! Radius classes: the few observers whose view is much wider than the others'.
//!
//! A moving target must find every unchanged observer that may see it. Searching the grid around
//! it within the largest radius makes one watchtower of radius 3000 cost every walker of radius
//! 100 a window 900 times larger. Instead, the largest radii are set apart: the observers whose
//! radius is more than [`WIDE_FACTOR`] times the radius of the `limit + 1`-th largest one are
//! *wide* (at most `limit` when the threshold is derived, one in eight observers within
//! [`FEWEST_WIDE_LIMIT`] and [`WIDE_LIMIT`], [`wide_limit`]). A moving target tests each
//! wide observer directly and searches the grid only within the largest *ordinary* radius, which
//! is also what the automatic cell side follows. A target that only stepped tests the wide
//! observers' positions four at a time ([`WideObservers::places`]) where it was and where it is,
//! and judges with the full rule only those its step may flip: measured (`cargo bench --bench
//! report -- mixed`, three alternating runs), ten static radius-1000 observers among 10k walkers
//! cost 1.29-1.31× the world without them when each was judged, 1.08-1.15× now. A jumped target
//! judges every wide observer (a stepping one where it was and where it is). A wide observer
//! that steps takes the flip scan like the others, in a group of its own (its window is its
//! own), and leaves the clean observers' views of it to its target scan (`PERFORMANCE.md`, stop
//! 41: ten walking radius-1000 observers among 10k walkers, callgrind 67.5 → 65.2 M
//! instructions an update, 62.2 M without them).
//!
//! The threshold is re-derived only when it moved by more than a factor of two, or when more than
//! twice the limit of observers have become wide under the old one: reclassifying costs a pass
//! over every slot, so radii that drift a little never trigger it. Any threshold gives exact
//! results; it only decides which path finds an observer.

use std::collections::BTreeMap;

use crate::grid::Positions;

/// At most this many observers are wide (when the threshold is set), however many there are. Every
/// moving target tests them four at a time, so more cost every walker a little; fewer let a class
/// of large views dictate the cell side for everyone. Measured (callgrind,
/// `scenario --entities 10000 --single-thread --towers 100 --tower-radius 300`, 10k walkers of
/// radius 100 plus a hundred of radius 300): at most 64 (the cell side then follows the hundred)
/// 195.8 M instructions an update standing, 195.4 M walking; 256: 76.2 M and 69.6 M (66.8 M once
/// wide observers stepped too), against 62.2 M without them; ten or two big observers unchanged. At
/// 50k (`scenario`, one thread) 250 of radius 300 walking: 82 -> 46 ms an update, about 42 ms
/// without them.
pub(crate) const WIDE_LIMIT: u32 = 256;

/// At most this many observers are wide in a world of up to eight times as many, where
/// [`wide_limit`] would allow fewer: a few big views among a few hundred are still set apart.
pub(crate) const FEWEST_WIDE_LIMIT: u32 = 64;

/// An observer is wide when its radius is more than this many times the radius of the
/// `limit + 1`-th largest one ([`wide_limit`]).
pub(crate) const WIDE_FACTOR: f32 = 2.0;

/// How many observers may be wide among `observers`: one in eight, within
/// [`FEWEST_WIDE_LIMIT`] and [`WIDE_LIMIT`], so a class of large views stays a minority.
pub(crate) fn wide_limit(observers: usize) -> u32 {
    (observers / 8).clamp(FEWEST_WIDE_LIMIT as usize, WIDE_LIMIT as usize) as u32
}

/// The wide observers and the radius above which an observer is wide.
#[derive(Debug)]
pub(crate) struct WideObservers {
    /// Observers with a radius strictly above this are wide. Derived from the radii
    /// ([`threshold`]) when [`Self::settled`] says so; `+∞` until the first derivation.
    pub above: f32,
    /// The wide observers' slots, in a deterministic order (slot order when the threshold last
    /// changed, then the order they became wide).
    pub slots: Vec<u32>,
    /// Their positions and squared radii, index for index with `slots`, refreshed before each
    /// update's scans, so a stepping target tests them four at a time and judges only those
    /// its step may flip (an observer on the shortlist has a negative radius here: its own
    /// recompute decides its pairs).
    pub places: Positions,
}

impl Default for WideObservers {
    fn default() -> Self {
        Self {
            above: f32::INFINITY,
            slots: Vec::new(),
            places: Positions::default(),
        }
    }
}

impl WideObservers {
    /// Whether an observer of this radius is wide under the current threshold.
    #[inline]
    pub fn is_wide(&self, radius: f32) -> bool {
        radius > self.above
    }

    /// Whether the current threshold may stay, given the one the radii want now and the
    /// [limit](wide_limit): it moved by at most a factor of two and no more than twice the limit
    /// of observers are wide.
    pub fn settled(&self, wanted: f32, limit: u32) -> bool {
        self.slots.len() <= 2 * limit as usize && wanted <= self.above * 2.0 && wanted >= self.above * 0.5
    }

    /// Forgets a slot that stopped being a wide observer. `O(wide observers)`.
    pub fn remove(&mut self, slot: u32) {
        let at = self
            .slots
            .iter()
            .position(|&s| s == slot)
            .expect("a slot marked wide should be in the wide list");
        self.slots.remove(at);
    }
}

/// The threshold for a multiset of observer radii (radius bits → count): [`WIDE_FACTOR`] times
/// the radius of the `limit + 1`-th largest observer (or of the smallest, when there are
/// fewer). So at most `limit` observers are wide, and only when their radius really stands out.
/// Walks at most `limit + 1` distinct radii.
pub(crate) fn threshold(radii: &BTreeMap<u32, u32>, limit: u32) -> f32 {
    let mut larger = 0;
    let mut radius = 0.0;
    for (&bits, &count) in radii.iter().rev() {
        radius = f32::from_bits(bits);
        larger += count;
        if larger > limit {
            break;
        }
    }
    radius * WIDE_FACTOR
}

#[cfg(test)]
mod tests {
    use super::*;

    fn radii(list: &[(f32, u32)]) -> BTreeMap<u32, u32> {
        list.iter().map(|&(r, n)| (r.to_bits(), n)).collect()
    }

    #[test]
    fn a_few_large_radii_stand_apart_from_the_crowd() {
        let t = threshold(
            &radii(&[(100.0, 10_000), (1000.0, 10), (3000.0, 2)]),
            wide_limit(10_012),
        );
        assert_eq!(t, 200.0, "the threshold should follow the ordinary radius");
    }

    #[test]
    fn no_more_than_the_limit_are_wide() {
        let limit = wide_limit(10_000);
        assert_eq!(limit, WIDE_LIMIT, "a large world should allow the most");
        let t = threshold(&radii(&[(100.0, 10_000), (1000.0, limit)]), limit);
        assert_eq!(t, 200.0, "as many large observers as the limit should be wide");
        let t = threshold(&radii(&[(100.0, 10_000), (1000.0, limit + 1)]), limit);
        assert_eq!(
            t, 2000.0,
            "with more large observers than the limit, they should be ordinary"
        );
    }

    #[test]
    fn the_limit_is_one_observer_in_eight_within_its_bounds() {
        assert_eq!(
            wide_limit(0),
            FEWEST_WIDE_LIMIT,
            "a small world should allow the fewest"
        );
        assert_eq!(wide_limit(8 * 100 + 7), 100, "one in eight in between");
        assert_eq!(wide_limit(1_000_000), WIDE_LIMIT, "a huge world should allow the most");
    }

    #[test]
    fn the_threshold_moves_only_when_it_moved_far_or_too_many_are_wide() {
        let mut wide = WideObservers::default();
        let limit = FEWEST_WIDE_LIMIT;
        assert!(
            !wide.settled(200.0, limit),
            "the first derivation should always be taken"
        );
        wide.above = 200.0;
        assert!(wide.settled(250.0, limit), "a small drift should keep the threshold");
        assert!(wide.settled(100.0, limit), "a halving should still keep it");
        assert!(!wide.settled(99.0, limit), "more than halving should move it");
        assert!(!wide.settled(401.0, limit), "more than doubling should move it");
        wide.slots = (0..=2 * limit).collect();
        assert!(!wide.settled(200.0, limit), "too many wide observers should move it");
    }

    #[test]
    fn a_small_world_uses_its_smallest_radius() {
        let t = threshold(&radii(&[(50.0, 3), (70.0, 2)]), wide_limit(5));
        assert_eq!(
            t, 100.0,
            "with fewer observers than the limit, the smallest radius should count"
        );
        let none = threshold(&BTreeMap::new(), wide_limit(0));
        assert_eq!(none, 0.0, "no observers give a zero threshold");
    }
}
