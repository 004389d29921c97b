//! Which observers the view layer must look at this update ([`Touches`]), and the bands around
//! an observer where a target that moves changes nothing it shows ([`QuietBands`]).

use core::sync::atomic::{AtomicU32, Ordering};

use crate::{
    bits,
    slot::Slot,
    visibility::{dist2, in_rect},
};

mod quiet_bands;

pub(crate) use quiet_bands::{BandEdge, QuietBands, TIER_BOUNDS};
use quiet_bands::{larger_offset, same_side};

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
    /// ([`Self::set_quiet_bands`]); then its view's edge is in `edges` (a disc's) or, when its bit
    /// in `boxed` is set, in `rect_edges` (a rectangle's), and its tier bounds in `tier_bounds`
    /// when its bit in `tiered` is set (the three grow as the layer gives bands). Apart, and 4
    /// bytes a slot for a disc's edge (the only bound of an observer without tiers), since the
    /// scans look them up for every observer that sees a changed target at both ends.
    banded: Vec<u64>,
    edges: Vec<f32>,
    boxed: Vec<u64>,
    rect_edges: Vec<[f32; 2]>,
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
            self.boxed.resize(slots.div_ceil(64), 0);
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
        match bands.edge {
            BandEdge::Disc(r2) => {
                self.edges[at] = r2;
                bits::remove(&mut self.boxed, at);
            }
            BandEdge::Rect(half) => {
                if self.rect_edges.len() <= at {
                    self.rect_edges.resize(self.edges.len(), [0.0; 2]);
                }
                self.rect_edges[at] = half;
                bits::insert(&mut self.boxed, at);
            }
        }
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
            edge: if bits::contains(&self.boxed, at) {
                BandEdge::Rect(self.rect_edges[at])
            } else {
                BandEdge::Disc(self.edges[at])
            },
            tiers: bits::contains(&self.tiered, at).then(|| self.tier_bounds[at]),
        })
    }

    /// Whether observer slot `s` has [`QuietBands`] ([`Self::quiet_bands`] is `Some`), one bit
    /// read.
    #[inline]
    pub fn has_quiet_bands(&self, s: u32) -> bool {
        bits::contains(&self.banded, s as usize)
    }

    /// Whether owned observer slot `o`'s judgement of an `Always` target it sees may change with
    /// the distance as far as the scans can tell: it has tiers, or the layer gave it no
    /// [`QuietBands`] (without tiers such a target is in its view at any distance).
    #[inline]
    pub fn always_by_distance(&self, o: u32) -> bool {
        let at = o as usize;
        !bits::contains(&self.banded, at) || bits::contains(&self.tiered, at)
    }

    /// Whether a target at `before` and then at `now` stays in one of the [`QuietBands`] of owned
    /// observer slot `o`, standing at `p` (`false` when the layer gave none): as
    /// [`QuietBands::same_band`], with one lookup of 4 bytes for a disc without tiers.
    #[inline]
    pub fn stays_in_band(&self, o: u32, p: [f32; 3], before: [f32; 3], now: [f32; 3]) -> bool {
        let at = o as usize;
        if !bits::contains(&self.banded, at) {
            return false;
        }
        if bits::contains(&self.boxed, at) {
            return self.stays_in_rect_band(at, p, before, now);
        }
        let (before, now) = (dist2(p, before), dist2(p, now));
        let edge = self.edges[at];
        if (before > edge) != (now > edge) {
            return false;
        }
        !bits::contains(&self.tiered, at) || same_side(&self.tier_bounds[at], before, now)
    }

    /// [`Self::stays_in_band`] for a rectangle's bands (slot `at`'s bit in `boxed` is set).
    #[inline(never)]
    fn stays_in_rect_band(&self, at: usize, p: [f32; 3], before: [f32; 3], now: [f32; 3]) -> bool {
        let half = self.rect_edges[at];
        if in_rect(p, half, before) != in_rect(p, half, now) {
            return false;
        }
        let (before, now) = (larger_offset(p, before), larger_offset(p, now));
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
            + (self.banded.capacity() + self.boxed.capacity() + self.tiered.capacity()) * size_of::<u64>()
            + self.edges.capacity() * size_of::<f32>()
            + self.rect_edges.capacity() * size_of::<[f32; 2]>()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_stays_in_band_only_between_the_same_bounds() {
        let mut touches = Touches::default();
        touches.grow(4);
        let plain = QuietBands {
            edge: BandEdge::Disc(100.0),
            tiers: None,
        };
        let tiered = QuietBands {
            edge: BandEdge::Disc(100.0),
            tiers: Some([9.0, 16.0, 36.0, 49.0, 64.0, 70.0, f32::INFINITY, f32::INFINITY]),
        };
        // A rectangle's tiers are squares, its bounds half sides.
        let rect = QuietBands {
            edge: BandEdge::Rect([10.0, 6.0]),
            tiers: Some([
                2.0,
                3.0,
                5.0,
                5.5,
                f32::INFINITY,
                f32::INFINITY,
                f32::INFINITY,
                f32::INFINITY,
            ]),
        };
        touches.set_quiet_bands(1, Some(plain));
        touches.set_quiet_bands(2, Some(tiered));
        touches.set_quiet_bands(3, Some(rect));
        for (s, bands) in [(2, tiered), (3, rect)] {
            assert_eq!(touches.quiet_bands(s), Some(bands), "the bands should be kept as given");
        }
        // The observer stands at `p`; each target moves from the first point to the second.
        let p = [1.0, -2.0, 0.0];
        let at = |x: f32, y: f32| [p[0] + x, p[1] + y, 0.0];
        let cases = [
            (at(1.0, 2.0), at(2.0, 2.0)),
            (at(1.0, 0.0), at(3.0, 0.5)),
            (at(3.0, 1.0), at(-3.0, -2.5)),
            (at(3.0, 2.0), at(4.0, 1.0)),
            (at(4.0, 1.0), at(5.0, 2.0)),
            (at(8.0, 1.0), at(7.0, 5.0)),
            (at(3.5, 1.0), at(4.0, -4.0)),
            (at(4.0, 0.0), at(0.0, 5.2)),
            (at(9.0, 5.0), at(9.0, 6.5)),
            (at(9.9, 0.0), at(0.0, 5.9)),
            (at(10.0, 0.0), at(10.0, 0.5)),
            (at(-11.0, 0.0), at(0.0, 12.0)),
        ];
        for (o, bands) in [(1, plain), (2, tiered), (3, rect)] {
            for (before, now) in cases {
                assert_eq!(
                    touches.stays_in_band(o, p, before, now),
                    bands.same_band((p, before), (p, now)),
                    "observer {o}, {before:?} -> {now:?}: the scans' test should agree with the bands'"
                );
            }
        }
        let stays = |touches: &Touches, o, (x0, y0), (x1, y1)| touches.stays_in_band(o, p, at(x0, y0), at(x1, y1));
        let walks = [
            (2, (4.0, 1.0), (5.0, 2.0), true, "between two tier bounds it stays"),
            (2, (3.0, 2.0), (4.0, 1.0), false, "across a tier bound it does not"),
            (
                2,
                (8.0, 1.0),
                (7.0, 5.0),
                false,
                "across the last tier bound it does not",
            ),
            (1, (3.0, 2.0), (4.0, 1.0), true, "without tiers only the edge counts"),
            (1, (10.0, 0.0), (10.0, 0.5), false, "across the edge it does not"),
            (
                3,
                (3.5, 1.0),
                (4.0, -4.0),
                true,
                "between two of a rectangle's squares it stays",
            ),
            (
                3,
                (4.0, 0.0),
                (0.0, 5.2),
                false,
                "across one of a rectangle's squares it does not",
            ),
            (
                3,
                (9.0, 5.0),
                (9.0, 6.5),
                false,
                "across a rectangle's edge it does not",
            ),
            (
                3,
                (9.9, 0.0),
                (0.0, 5.9),
                true,
                "within a rectangle, beyond its squares, it stays",
            ),
            (
                0,
                (1.0, 1.0),
                (1.0, 1.0),
                false,
                "an observer given no bands records every seer",
            ),
        ];
        for (o, from, to, want, why) in walks {
            assert_eq!(stays(&touches, o, from, to), want, "{why}");
        }
        assert!(
            !touches.always_by_distance(1) && touches.always_by_distance(2) && touches.always_by_distance(0),
            "an Always target's judgement follows the distance with tiers or without bands only"
        );
        touches.set_owned(1, true);
        assert!(
            !stays(&touches, 1, (1.0, 1.0), (1.0, 1.0)),
            "changing hands forgets the bands"
        );
        touches.set_quiet_bands(2, None);
        assert_eq!(touches.quiet_bands(2), None, "bands taken back are gone");
        touches.set_quiet_bands(3, Some(plain));
        assert_eq!(
            touches.quiet_bands(3),
            Some(plain),
            "a rectangle's bands given again as a disc's should be the disc's"
        );
    }
}
