//! The update's seers by observer ([`SeersByObserver`]): what the layer's pass over an owned
//! observer that did not change reads instead of its whole list and everything it shows.

use crate::{bits, index::Seer};

/// The seers the scans recorded this update ([`Seer`]), by observer slot: observer `o`'s
/// changed targets, each with whether `o` sees it now, in one range. Built once an update before
/// the passes, in `O(seers + slots)` (a counting sort by observer); a range is in the scans'
/// order, each target once (the scans judge each pair once).
#[derive(Default)]
pub(super) struct SeersByObserver {
    /// Observer `o`'s targets are `targets[start[o]..start[o + 1]]`.
    start: Vec<u32>,
    /// A target's slot, and whether the observer sees it now.
    targets: Vec<(u32, bool)>,
    /// Per slot, one bit: the observer moved, and its flip scan recorded all its seers whose
    /// judgement its move could change (its band pass); empty when none did.
    band_scanned: Vec<u64>,
}

impl SeersByObserver {
    /// Sorts the seers of `parts` by observer, for an index of `slots` slots, and notes the
    /// observers of `band_scanned` (parts too; [`Self::band_scanned`]).
    pub fn build<'a>(
        &mut self,
        slots: usize,
        parts: impl Iterator<Item = &'a [Seer]> + Clone,
        band_scanned: impl Iterator<Item = &'a [u32]>,
    ) {
        self.band_scanned.clear();
        for &o in band_scanned.flatten() {
            if self.band_scanned.is_empty() {
                self.band_scanned.resize(slots.div_ceil(64), 0);
            }
            bits::insert(&mut self.band_scanned, o as usize);
        }
        // Observer `o` is counted at `o + 2`; after the sums, `start[o + 1]` is where its range
        // begins, and after the scatter, where it ends (so where `o + 1`'s begins).
        self.start.clear();
        self.targets.clear();
        if parts.clone().all(<[Seer]>::is_empty) {
            // No seer (nothing changed near an unchanged owned observer): nothing to sort.
            return;
        }
        self.start.resize(slots + 2, 0);
        let mut total = 0;
        for part in parts.clone() {
            for seer in part {
                self.start[seer.observer as usize + 2] += 1;
            }
            total += part.len();
        }
        for i in 2..self.start.len() {
            self.start[i] += self.start[i - 1];
        }
        self.targets.resize(total, (0, false));
        for seer in parts.flat_map(|part| part.iter()) {
            let at = &mut self.start[seer.observer as usize + 1];
            self.targets[*at as usize] = (seer.target, seer.sees_now);
            *at += 1;
        }
    }

    /// Whether observer slot `o` moved and its flip scan recorded, as its seers, every target whose
    /// judgement the move could change (with those of the targets that jumped, all the targets to
    /// judge but its lingering ones): `O(1)`.
    pub fn band_scanned(&self, o: u32) -> bool {
        !self.band_scanned.is_empty() && bits::contains(&self.band_scanned, o as usize)
    }

    /// Observer slot `o`'s changed targets: `O(1)`.
    pub fn of(&self, o: u32) -> &[(u32, bool)] {
        match self.start.get(o as usize..o as usize + 2) {
            Some(&[from, to]) => &self.targets[from as usize..to as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_observer_gets_its_seers_in_the_order_they_came() {
        let seer = |observer, target, sees_now| Seer {
            observer,
            target,
            sees_now,
        };
        let first = [seer(3, 7, true), seer(0, 1, false), seer(3, 2, false)];
        let second = [seer(4, 9, true), seer(0, 5, true)];
        let mut by_observer = SeersByObserver::default();
        by_observer.build(5, [&first[..], &second[..]].into_iter(), [&[3u32][..]].into_iter());
        assert_eq!(
            by_observer.of(0),
            [(1, false), (5, true)],
            "observer 0's seers, in order"
        );
        assert_eq!(by_observer.of(1), [], "observer 1 saw no changed target");
        assert_eq!(
            by_observer.of(3),
            [(7, true), (2, false)],
            "observer 3's seers, in order"
        );
        assert_eq!(by_observer.of(4), [(9, true)], "the last slot's seers");
        assert!(
            by_observer.band_scanned(3) && !by_observer.band_scanned(4),
            "only observer 3's band pass should be noted"
        );
        by_observer.build(5, core::iter::empty(), core::iter::empty());
        assert_eq!(by_observer.of(3), [], "a new update should forget the last one's seers");
        assert!(
            !by_observer.band_scanned(3),
            "a new update should forget the last one's band passes"
        );
    }
}
