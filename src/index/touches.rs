//! Which observers the view layer must look at this update ([`Touches`]).

use core::sync::atomic::{AtomicU32, Ordering};

use crate::{bits, slot::Slot};

/// Per slot, whether something the view layer must look at happened to it as an observer this
/// update: it changed (it or one of its components), or a target it sees before or after the
/// update changed. An owned observer nothing touched, with nothing lingering or waiting, would
/// come out of the layer's pass unchanged, so the layer skips it: a world where few entities
/// move costs the layer only the observers around them.
///
/// Marked only while the layer owns some slot ([`AoiIndex::owned`](super::AoiIndex)), and by the
/// scans only for the slots it owns, with the [`Seer`]s they record; the scans mark from several
/// tasks at once (relaxed atomic stores of one value: the outcome is a set, whatever the order).
#[derive(Default)]
pub(crate) struct Touches {
    /// Per slot: the update it was last touched in.
    marks: Vec<AtomicU32>,
    /// This update's number (0 is never one, so fresh marks never match).
    epoch: u32,
    /// Per slot, one bit: whether change pickup observed it this update (it or one of its
    /// components changed, or it was despawned). A pair with neither end changed is judged as it
    /// was last update, so the layer's pass over an owned observer that did not change looks only
    /// at its changed targets. 1 bit a slot, so that it stays in the first-level cache (6 KB at
    /// 50k slots).
    changed: Vec<u64>,
    /// Whether any bit of `changed` is set.
    any_changed: bool,
    /// Per slot, one bit: whether it changed other than by a move this update
    /// ([`Self::change_more_than_moved`]): its rules, its view or its components, or it was
    /// despawned or left the index.
    more_than_moved: Vec<u64>,
    /// Per slot, one bit: whether the view layer owns it ([`Slot::owned`], kept beside the flag
    /// by [`AoiIndex::set_owned`] and [`Self::owned_from`]): only owned observers' [`Seer`]s are
    /// recorded, so an observer the layer does not own costs a bit test, not a record.
    ///
    /// [`Slot::owned`]: crate::slot::Slot::owned
    /// [`AoiIndex::set_owned`]: super::AoiIndex::set_owned
    owned: Vec<u64>,
    /// Per slot, one bit: whether the view layer gave its [`QuietBands`]
    /// ([`Self::set_quiet_bands`]); then its view's edge is in `edges`, and its tier bounds in
    /// `tier_bounds` when its bit in `tiered` is set (those two grow as the layer gives bands).
    /// Apart, and 4 bytes a slot for the edge (the only bound of an observer without tiers),
    /// since the scans look them up for every observer that sees a changed target at both ends.
    banded: Vec<u64>,
    edges: Vec<f32>,
    tiered: Vec<u64>,
    tier_bounds: Vec<[f32; TIER_BOUNDS]>,
    /// Debug builds, per slot, one bit: whether it was put on this update's shortlist by change
    /// pickup (the view layer checks its seers against it).
    #[cfg(debug_assertions)]
    shortlisted: Vec<u64>,
}

impl Touches {
    /// Starts an update: no slot is touched.
    pub fn begin(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m.get_mut() = 0);
            self.epoch = 1;
        }
        if self.any_changed {
            self.changed.iter_mut().for_each(|bits| *bits = 0);
            self.more_than_moved.iter_mut().for_each(|bits| *bits = 0);
            self.any_changed = false;
        }
        #[cfg(debug_assertions)]
        self.shortlisted.iter_mut().for_each(|bits| *bits = 0);
    }

    /// Makes room for slot numbers below `slots`.
    pub fn grow(&mut self, slots: usize) {
        if self.marks.len() < slots {
            self.marks.resize_with(slots, AtomicU32::default);
            self.changed.resize(slots.div_ceil(64), 0);
            self.more_than_moved.resize(slots.div_ceil(64), 0);
            self.owned.resize(slots.div_ceil(64), 0);
            self.banded.resize(slots.div_ceil(64), 0);
            self.tiered.resize(slots.div_ceil(64), 0);
            #[cfg(debug_assertions)]
            self.shortlisted.resize(slots.div_ceil(64), 0);
        }
    }

    /// Marks observer slot `o` as touched.
    #[inline]
    pub fn touch(&self, o: u32) {
        self.marks[o as usize].store(self.epoch, Ordering::Relaxed);
    }

    /// Marks slot `s` as changed this update, and touched as an observer.
    #[inline]
    pub fn change(&mut self, s: u32) {
        self.touch(s);
        bits::insert(&mut self.changed, s as usize);
        self.any_changed = true;
    }

    /// Whether slot `s` was marked by [`Self::change`] this update.
    #[inline]
    pub fn is_changed(&self, s: u32) -> bool {
        bits::contains(&self.changed, s as usize)
    }

    /// [`Self::change`] for a change other than a move (change pickup observed the slot whole).
    #[inline]
    pub fn change_more_than_moved(&mut self, s: u32) {
        self.change(s);
        bits::insert(&mut self.more_than_moved, s as usize);
    }

    /// Whether slot `s` was marked by [`Self::change_more_than_moved`] this update.
    #[inline]
    pub fn changed_more_than_moved(&self, s: u32) -> bool {
        bits::contains(&self.more_than_moved, s as usize)
    }

    /// Debug builds: records that change pickup put slot `s` on this update's shortlist.
    #[cfg(debug_assertions)]
    pub fn note_shortlisted(&mut self, s: u32) {
        bits::insert(&mut self.shortlisted, s as usize);
    }

    /// Debug builds: whether [`Self::note_shortlisted`] recorded slot `s` this update.
    #[cfg(debug_assertions)]
    pub fn was_shortlisted(&self, s: u32) -> bool {
        bits::contains(&self.shortlisted, s as usize)
    }

    /// Sets or clears slot `s`'s bit of the slots the view layer owns (as its flag changes:
    /// [`AoiIndex::set_owned`](super::AoiIndex::set_owned) changes both).
    #[inline]
    pub fn set_owned(&mut self, s: u32, on: bool) {
        self.forget_quiet_bands(s);
        if on {
            bits::insert(&mut self.owned, s as usize);
        } else {
            bits::remove(&mut self.owned, s as usize);
        }
    }

    /// The slots the view layer owns, ascending: `O(slots / 64 + owned)`.
    pub fn owned_slots(&self) -> impl Iterator<Item = u32> + '_ {
        bits::iter(&self.owned).map(|s| s as u32)
    }

    /// Whether the view layer owns slot `s` ([`Self::set_owned`]).
    #[inline]
    pub fn is_owned(&self, s: u32) -> bool {
        bits::contains(&self.owned, s as usize)
    }

    /// The bits of the slots the view layer owns, read again from `slots` (after a renumbering
    /// moved them).
    pub fn owned_from(&mut self, slots: &[Slot]) {
        self.owned.iter_mut().for_each(|word| *word = 0);
        // They were given by slot: the layer gives them again as it looks at each observer.
        self.banded.iter_mut().for_each(|word| *word = 0);
        for (s, slot) in (0..).zip(slots) {
            if slot.owned() {
                self.set_owned(s, true);
            }
        }
    }

    /// Gives owned observer slot `s`'s [`QuietBands`] (the view layer, after its pass over the
    /// observer), or takes them back (`None`): from the next update on, the scans leave out its
    /// seers that stay in one band.
    pub fn set_quiet_bands(&mut self, s: u32, bands: Option<QuietBands>) {
        let Some(bands) = bands else {
            self.forget_quiet_bands(s);
            return;
        };
        let at = s as usize;
        if self.edges.len() <= at {
            self.edges.resize(self.marks.len().max(at + 1), 0.0);
        }
        bits::insert(&mut self.banded, at);
        self.edges[at] = bands.edge;
        match bands.tiers {
            Some(tiers) => {
                if self.tier_bounds.len() <= at {
                    self.tier_bounds.resize(self.edges.len(), [0.0; TIER_BOUNDS]);
                }
                self.tier_bounds[at] = tiers;
                bits::insert(&mut self.tiered, at);
            }
            None => bits::remove(&mut self.tiered, at),
        }
    }

    /// Observer slot `s`'s [`QuietBands`], if the view layer gave them since it last changed hands
    /// or the index renumbered.
    pub fn quiet_bands(&self, s: u32) -> Option<QuietBands> {
        let at = s as usize;
        bits::contains(&self.banded, at).then(|| QuietBands {
            edge: self.edges[at],
            tiers: bits::contains(&self.tiered, at).then(|| self.tier_bounds[at]),
        })
    }

    /// Whether owned observer slot `o`'s judgement of an `Always` target it sees may change with
    /// the distance as far as the scans can tell: it has tiers, or the layer gave it no
    /// [`QuietBands`] (without tiers such a target is in its view at any distance).
    #[inline]
    pub fn always_by_distance(&self, o: u32) -> bool {
        let at = o as usize;
        !bits::contains(&self.banded, at) || bits::contains(&self.tiered, at)
    }

    /// Whether a target at squared distances `before` and `now` from owned observer slot `o`
    /// stays in one of its [`QuietBands`] (`false` when the layer gave none): as
    /// [`QuietBands::same_band`], with one lookup of 4 bytes for an observer without tiers.
    #[inline]
    pub fn stays_in_band(&self, o: u32, before: f32, now: f32) -> bool {
        let at = o as usize;
        if !bits::contains(&self.banded, at) {
            return false;
        }
        let edge = self.edges[at];
        if (before > edge) != (now > edge) {
            return false;
        }
        !bits::contains(&self.tiered, at) || same_side(&self.tier_bounds[at], before, now)
    }

    /// Forgets slot `s`'s [`QuietBands`]: every seer of it is recorded again.
    fn forget_quiet_bands(&mut self, s: u32) {
        bits::remove(&mut self.banded, s as usize);
    }

    /// Whether observer slot `o` was touched this update.
    pub fn is_touched(&self, o: u32) -> bool {
        self.marks[o as usize].load(Ordering::Relaxed) == self.epoch
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.marks.capacity() * size_of::<AtomicU32>()
            + (self.changed.capacity() + self.more_than_moved.capacity() + self.owned.capacity()) * size_of::<u64>()
            + (self.banded.capacity() + self.tiered.capacity()) * size_of::<u64>()
            + self.edges.capacity() * size_of::<f32>()
            + self.tier_bounds.capacity() * size_of::<[f32; TIER_BOUNDS]>()
    }
}

/// A changed target that an unchanged observer the view layer owns saw at the start of the update
/// or sees now, as the target scans (or a flip scan judging as a target) judged the pair; or, for
/// an owned observer that only moved, a target its flip scan's band pass found flipping or
/// crossing a bound of its [`QuietBands`], or a jumped target it saw or sees. Each such pair is
/// recorded once (and the observer touched). The layer's pass over such an observer looks only at
/// these targets ([`crate::view_model::layer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seer {
    /// The observer's slot.
    pub observer: u32,
    /// The target's slot.
    pub target: u32,
    /// Whether the observer sees the target now (it is in the observer's list after the update).
    pub sees_now: bool,
}

/// The distances from an owned observer, as squared distances, where the view layer's judgement
/// of a target it sees (within its grown view) can change while the observer itself stays as it
/// is: its view's edge, and each tier threshold with and without the hysteresis margin. A
/// changed target that the observer sees at both ends, that keeps its rules (its visibility mode
/// is part of the view test), and whose squared distance at the start and at the end of the
/// update is on the same side of each bound comes out of the pass as it came out of the last one
/// (the layer's tests at both ends give the same answers, and the pass applied to its own result
/// changes nothing), so the scans do not record it as a seer ([`Touches::stays_in_band`]); an
/// observer all of whose changed targets stay so is not looked at. Given by the layer for disc
/// views with few enough thresholds (see `view_model::layer`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct QuietBands {
    /// The view's edge (its radius squared).
    pub edge: f32,
    /// The tier bounds, in any order, unused ones `+∞` (nothing is beyond); `None` without tiers.
    pub tiers: Option<[f32; TIER_BOUNDS]>,
}

/// How many tier bounds [`QuietBands`] holds: four thresholds, each with and without the margin.
pub(crate) const TIER_BOUNDS: usize = 8;

impl QuietBands {
    /// Whether a target at squared distances `before` and `now` from the observer is on the same
    /// side of every bound (`d2 > bound` is the layer's test for beyond). Debug builds' checks
    /// ([`Touches::stays_in_band`] is the scans' form).
    #[cfg(any(test, debug_assertions))]
    pub fn same_band(&self, before: f32, now: f32) -> bool {
        same_side(&[self.edge], before, now) && self.tiers.is_none_or(|tiers| same_side(&tiers, before, now))
    }
}

/// Whether squared distances `before` and `now` are on the same side of each of `bounds`
/// (`d > bound` is the view layer's test for beyond).
#[inline]
pub(crate) fn same_side(bounds: &[f32], before: f32, now: f32) -> bool {
    // Without a branch a bound, so that the compiler tests several at once.
    !bounds
        .iter()
        .fold(false, |crossed, &b| crossed | ((before > b) != (now > b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_stays_in_band_only_between_the_same_bounds() {
        let mut touches = Touches::default();
        touches.grow(3);
        let plain = QuietBands {
            edge: 100.0,
            tiers: None,
        };
        let tiered = QuietBands {
            edge: 100.0,
            tiers: Some([9.0, 16.0, 36.0, 49.0, 64.0, 70.0, f32::INFINITY, f32::INFINITY]),
        };
        touches.set_quiet_bands(1, Some(plain));
        touches.set_quiet_bands(2, Some(tiered));
        assert_eq!(
            touches.quiet_bands(2),
            Some(tiered),
            "the bands should be kept as given"
        );
        let cases = [
            (1.0, 8.0),
            (1.0, 9.5),
            (10.0, 15.0),
            (10.0, 17.0),
            (50.0, 99.0),
            (60.0, 66.0),
            (65.0, 69.0),
            (99.0, 100.0),
            (100.0, 100.5),
            (101.0, 120.0),
        ];
        for (o, bands) in [(1, plain), (2, tiered)] {
            for (before, now) in cases {
                assert_eq!(
                    touches.stays_in_band(o, before, now),
                    bands.same_band(before, now),
                    "observer {o}, {before} -> {now}: the scans' test should agree with the bands'"
                );
            }
        }
        assert!(touches.stays_in_band(2, 17.0, 35.0), "between two tier bounds it stays");
        assert!(!touches.stays_in_band(2, 15.0, 17.0), "across a tier bound it does not");
        assert!(
            !touches.stays_in_band(2, 65.0, 71.0),
            "across the last tier bound it does not"
        );
        assert!(
            touches.stays_in_band(1, 15.0, 17.0),
            "without tiers only the edge counts"
        );
        assert!(!touches.stays_in_band(1, 100.0, 100.5), "across the edge it does not");
        assert!(
            !touches.stays_in_band(0, 1.0, 1.0),
            "an observer given no bands records every seer"
        );
        assert!(
            !touches.always_by_distance(1) && touches.always_by_distance(2) && touches.always_by_distance(0),
            "an Always target's judgement follows the distance with tiers or without bands only"
        );
        touches.set_owned(1, true);
        assert!(!touches.stays_in_band(1, 1.0, 1.0), "changing hands forgets the bands");
        touches.set_quiet_bands(2, None);
        assert_eq!(touches.quiet_bands(2), None, "bands taken back are gone");
    }
}
