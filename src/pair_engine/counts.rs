//! The `Watched` counts of the changed observers ([`WatchTracker`]). An observer that counts
//! before and after the update counts its pairs: each enter one more, each leave one less, which
//! is its list's difference. One that starts or stops counting (its layers changed) counts its
//! whole list. The unchanged observers' pairs are counted where their lists are edited
//! (`clean.rs`); the view layer counts the observers it owns.
//!
//! Measured (`scenario`, 50k, one thread, pinned, every observer counting, alternating runs):
//! when every changed observer's whole list stopped counting and counted again, uniform took
//! 81.5-84.0 ms an update and 5% moving 5.8-6.0; counting pairs, 29.0-30.3 and 3.7-3.8. Without
//! the marker: 25.3 and 3.1-3.2.

use super::Pairs;
use crate::{bits, index::AoiIndex, slot::OldView, watched::WatchTracker};

/// What the changed observers' counts need from the start of the run to its end.
#[derive(Default)]
pub(super) struct ChangedCounts {
    /// Bit `s`: changed slot `s` counts before and after the update, so its pairs are counted.
    by_pairs: Vec<u64>,
    /// Changed slots that count after the update and did not before: their new lists count.
    gained: Vec<u32>,
}

impl ChangedCounts {
    /// Before the scans, the changed observers' lists still as they were: the lists of those
    /// that no longer count stop counting, and the others are noted.
    pub fn begin(&mut self, index: &AoiIndex, watch: &mut WatchTracker) {
        self.gained.clear();
        self.by_pairs.clear();
        self.by_pairs.resize(index.slots.len().div_ceil(64), 0);
        for ch in &index.changes {
            let (s, slot) = (ch.slot, &index.slots[ch.slot as usize]);
            if slot.owned() {
                continue;
            }
            let old = OldView::at_start(s, slot, &index.old_views);
            match (watch.counts(old.rules.member), watch.counts(slot.rules.member)) {
                (true, true) => bits::insert(&mut self.by_pairs, s as usize),
                (true, false) => {
                    let list = &index.lists[s as usize];
                    list.iter().for_each(|&t| watch.dec(index.entities[t as usize]));
                }
                (false, true) => self.gained.push(s),
                (false, false) => {}
            }
        }
    }

    /// After the scans, the changed observers' lists back in the index: counts the changed
    /// observers' `enters` and `leaves` (all of theirs, in any order) for those noted, and the
    /// new lists of those that started counting.
    pub fn end(&self, index: &AoiIndex, enters: Pairs, leaves: Pairs, watch: &mut WatchTracker) {
        let by_pairs = |o: u32| bits::contains(&self.by_pairs, o as usize);
        let target = |t: u32| index.entities[t as usize];
        leaves
            .filter(|&(o, _)| by_pairs(o))
            .for_each(|(_, t)| watch.dec(target(t)));
        enters
            .filter(|&(o, _)| by_pairs(o))
            .for_each(|(_, t)| watch.inc(target(t)));
        for &s in &self.gained {
            index.lists[s as usize].iter().for_each(|&t| watch.inc(target(t)));
        }
    }
}
