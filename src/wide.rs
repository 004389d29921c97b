//! Radius classes: the few observers whose view is much wider than the others'.
//!
//! A moving target must find every unchanged observer that may see it. Searching the grid around
//! it within the largest radius makes one watchtower of radius 3000 cost every walker of radius
//! 100 a window 900 times larger. Instead, the largest radii are set apart: at most
//! [`WIDE_LIMIT`] observers whose radius is more than [`WIDE_FACTOR`] times the radius of the
//! `WIDE_LIMIT + 1`-th largest one are *wide*. A moving target tests each wide observer directly
//! (one distance test each) and searches the grid only within the largest *ordinary* radius,
//! which is also what the automatic cell side follows.

use std::collections::BTreeMap;

/// At most this many observers are wide (when the threshold is set).
pub(crate) const WIDE_LIMIT: u32 = 64;

/// An observer is wide when its radius is more than this many times the radius of the
/// `WIDE_LIMIT + 1`-th largest one.
pub(crate) const WIDE_FACTOR: f32 = 2.0;

/// The wide observers and the radius above which an observer is wide.
#[derive(Debug)]
pub(crate) struct WideObservers {
    /// Observers with a radius strictly above this are wide. Recomputed from the radii on
    /// every update with changes ([`threshold`]); `+∞` until the first one.
    pub above: f32,
    /// The wide observers' slots, in a deterministic order (slot order when the threshold last
    /// changed, then the order they became wide).
    pub slots: Vec<u32>,
}

impl Default for WideObservers {
    fn default() -> Self {
        Self {
            above: f32::INFINITY,
            slots: Vec::new(),
        }
    }
}

impl WideObservers {
    /// Whether an observer of this radius is wide under the current threshold.
    #[inline]
    pub fn is_wide(&self, radius: f32) -> bool {
        radius > self.above
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
/// the radius of the `WIDE_LIMIT + 1`-th largest observer (or of the smallest, when there are
/// fewer). So at most [`WIDE_LIMIT`] observers are wide, and only when their radius really
/// stands out. Walks at most `WIDE_LIMIT + 1` distinct radii.
pub(crate) fn threshold(radii: &BTreeMap<u32, u32>) -> f32 {
    let mut larger = 0;
    let mut radius = 0.0;
    for (&bits, &count) in radii.iter().rev() {
        radius = f32::from_bits(bits);
        larger += count;
        if larger > WIDE_LIMIT {
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
        let t = threshold(&radii(&[(100.0, 10_000), (1000.0, 10), (3000.0, 2)]));
        assert_eq!(t, 200.0, "the threshold should follow the ordinary radius");
    }

    #[test]
    fn no_more_than_the_limit_are_wide() {
        let t = threshold(&radii(&[(100.0, 10_000), (1000.0, 100)]));
        assert_eq!(
            t, 2000.0,
            "with more large observers than the limit, they should be ordinary"
        );
    }

    #[test]
    fn a_small_world_uses_its_smallest_radius() {
        let t = threshold(&radii(&[(50.0, 3), (70.0, 2)]));
        assert_eq!(
            t, 100.0,
            "with fewer observers than the limit, the smallest radius should count"
        );
        assert_eq!(threshold(&BTreeMap::new()), 0.0, "no observers give a zero threshold");
    }
}
