//! The scans over a cell's [`Positions`], a run of up to [`MASK_BITS`] members at a time: which
//! members are within a disc, which flip for an observer's view, which cross a band, and which
//! see a point; each answer a bit mask per run, from the vector tests of [`masks`](super::masks).

use core::ops::Range;

use super::masks::{
    At, Radius, band_masks, disc_mask, disc_masks, disc_masks_both_ways, flip_masks, flip_masks_many, own_rect_masks,
    rect_band_masks,
};
use super::{BandTest, Block, BothWaysView, FlipShape, FlipViews, LANES, MASK_BITS, Positions, RectBandTest};

impl Positions {
    /// Calls `hits(start, mask)` for each run of up to [`MASK_BITS`] members from `start` (`start`
    /// a multiple of four, the run's first block) with a hit in `range`: bit `j` of `mask` is set
    /// when member `start + j` is in `range` and within squared distance `r2` of `p`
    /// (`dist2 <= r2`, the same arithmetic as [`dist2`](crate::visibility::dist2), so the answer is
    /// exactly the scalar test's). `with_z`: the positions use the third axis (else it is 0 on both
    /// sides and its arithmetic, which adds exactly 0, is skipped).
    #[inline(always)]
    pub fn within(&self, range: Range<usize>, p: [f32; 3], r2: f32, with_z: bool, mut hits: impl FnMut(usize, u64)) {
        self.runs(range, |start, blocks, valid| {
            let mask = disc_mask(blocks, (At::Now, p), Radius::Same(r2), with_z) & valid;
            if mask != 0 {
                hits(start, mask);
            }
        });
    }

    /// Calls `hits(start, flips, inside)` for each run of members from `start` (as
    /// [`within`](Self::within)) with a flip in `range` for an observer's view `shape`: bit `j`
    /// of `flips` set when member `start + j` is in the view around `now` but its start-of-tick
    /// position is not in the view around `start_p`, or the other way round (an observer's flip
    /// scan, both ends moving), and of `inside` when it is in the view around `now`. `with_z` as
    /// for [`within`](Self::within).
    #[inline(always)]
    pub fn flips(
        &self,
        range: Range<usize>,
        now: [f32; 3],
        start_p: [f32; 3],
        shape: FlipShape,
        with_z: bool,
        mut hits: impl FnMut(usize, u64, u64),
    ) {
        let inside = |blocks: &[Block]| {
            if with_z {
                flip_masks::<true>(blocks, now, start_p, shape)
            } else {
                flip_masks::<false>(blocks, now, start_p, shape)
            }
        };
        self.runs(range, |start, blocks, valid| {
            let (in_now, in_start) = inside(blocks);
            let (in_now, in_start) = (in_now & valid, in_start & valid);
            if in_now != in_start {
                hits(start, in_now ^ in_start, in_now);
            }
        });
    }

    /// For the view layer, a moving observer's band pass: calls `hits(start, crossed)` for each
    /// run of members from `start` (as [`within`](Self::within)) with a crossing in `range`: bit
    /// `j` of `crossed` set when the squared distances of member `start + j` from the observer at
    /// the two ends ([`BandTest`]) lie on different sides of one of its bounds, and it does not
    /// flip for its grown view (as [`flips`](Self::flips) tests it: so it is within that view at
    /// both ends). `with_z` as for [`within`](Self::within).
    #[inline(always)]
    pub fn band_crossings(&self, range: Range<usize>, test: BandTest, with_z: bool, mut hits: impl FnMut(usize, u64)) {
        self.runs(range, |start, blocks, valid| {
            let (flips, crossings) = if with_z {
                band_masks::<true>(blocks, test)
            } else {
                band_masks::<false>(blocks, test)
            };
            let crossed = crossings & !flips & valid;
            if crossed != 0 {
                hits(start, crossed);
            }
        });
    }

    /// [`band_crossings`](Self::band_crossings) for a moving rectangle: bit `j` of `crossed` set
    /// when member `start + j` is inside its grown view at both ends and, at the two ends, on
    /// different sides of its view's edge or of one of its tiers' squares (compared with the
    /// member's larger offset on the plane's two axes, as
    /// [`QuietBands`](crate::index::QuietBands) of a rectangle are). Rectangles are views of a
    /// plane: the third axis is not read.
    #[inline(always)]
    pub fn rect_band_crossings(&self, range: Range<usize>, test: RectBandTest, mut hits: impl FnMut(usize, u64)) {
        self.runs(range, |start, blocks, valid| {
            let crossed = rect_band_masks(blocks, test) & valid;
            if crossed != 0 {
                hits(start, crossed);
            }
        });
    }

    /// How many runs of [`MASK_BITS`] members the scans split the members into.
    #[inline]
    pub fn run_count(&self) -> usize {
        self.len().div_ceil(MASK_BITS)
    }

    /// [`flips`](Self::flips) of up to [`FLIP_BATCH`](super::FLIP_BATCH) observers over all the
    /// members, each run of blocks brought into cache once for all of them: view `i` of `views`
    /// is observer `i`'s position now, its start position and its view; calls `hits(i, start,
    /// flips, inside)` for each run and observer `i`, as soon as its masks are known (observer by
    /// observer, not through a buffer of the run's masks: callgrind, one thread, uniform 10k
    /// 49.82 → 48.67 M instructions an update; AVX's test of discs pair by pair knows them all
    /// at the end of the run), also where `flips` is 0 (the caller records without a branch).
    ///
    /// `AVX`: the tests take AVX's form ([`flip_masks_many`]); only for a caller compiled for AVX
    /// that checked the CPU has it ([`avx_available`](super::avx_available)).
    #[inline(always)]
    pub fn flips_many<const AVX: bool>(
        &self,
        views: FlipViews,
        with_z: bool,
        mut hits: impl FnMut(usize, usize, u64, u64),
    ) {
        self.runs(0..self.len(), |start, blocks, valid| {
            let masks = |i, in_now: u64, in_start: u64| {
                let (in_now, in_start) = (in_now & valid, in_start & valid);
                hits(i, start, in_now ^ in_start, in_now);
            };
            if with_z {
                flip_masks_many::<true, AVX>(blocks, views, masks);
            } else {
                flip_masks_many::<false, AVX>(blocks, views, masks);
            }
        });
    }

    /// [`flips`](Self::flips) for the disc `view` (a stepping observer's points `view.now` and
    /// `view.start` and its squared radius), and in the same pass each member's own view of the
    /// scanning observer as a target at its two points (a stepping observer is a stepping target
    /// too): calls `hits(start, flips, inside, seen_now, seen_start)` for each run with a flip
    /// either way (`every_seer`: or with a member that sees it at either point, as
    /// [`seeing`](Self::seeing) reports), bit `j` of `seen_now` set when member `start + j` sees
    /// `view.now` with its own view (as [`seeing`](Self::seeing) tests it), of `seen_start` when
    /// its start-of-tick position sees `view.start`. Both views share the two distances per
    /// member; for a member that did not move this tick (its start position is its position, as
    /// for every clean observer) `seen_start` is [`seeing`](Self::seeing)'s test at `view.start`
    /// bit for bit.
    ///
    /// `AVX`: the tests take AVX's form ([`disc_masks_both_ways`]); only for a caller compiled
    /// for AVX that checked the CPU has it ([`avx_available`](super::avx_available)).
    #[inline(always)]
    pub fn flips_both_ways<const AVX: bool>(
        &self,
        range: Range<usize>,
        view: &BothWaysView,
        with_z: bool,
        every_seer: bool,
        mut hits: impl FnMut(usize, u64, u64, u64, u64),
    ) {
        let rects = self.rects > 0;
        self.runs(range, |start, blocks, valid| {
            let [in_now, in_start, mut seen_now, mut seen_start] = if with_z {
                disc_masks_both_ways::<true, AVX>(blocks, view)
            } else {
                disc_masks_both_ways::<false, AVX>(blocks, view)
            }
            .map(|mask| mask & valid);
            if rects {
                let (in_rect_now, in_rect_start) = own_rect_masks(blocks, (At::Now, view.now), (At::Start, view.start));
                (seen_now, seen_start) = (seen_now & in_rect_now, seen_start & in_rect_start);
            }
            if in_now != in_start || seen_now != seen_start || (every_seer && seen_now | seen_start != 0) {
                hits(start, in_now ^ in_start, in_now, seen_now, seen_start);
            }
        });
    }

    /// Calls `hits(start, flips, sees)` for each run of members from `start` (as
    /// [`within`](Self::within)) of which at least one in `range` sees a target at `now` or at
    /// `before` with its own view: within its radius (`dist2(member, target) <= r2`), and for a
    /// rectangle (whose `r2` is the disc around it) within its half extents too, so the test is
    /// exact for every member (a cell's half extents are read only where it has a rectangle).
    /// Bit `j` of `sees` is set when member `start + j` sees it at either point, and of `flips`
    /// when at exactly one.
    /// `before` is tested from each member's position at the start of the tick when
    /// `members_moved` (the stepping observers a jumped target judges), else from its position
    /// now. Members that are not observers have a negative `r2` and see nothing. `with_z` as for
    /// [`within`](Self::within).
    #[inline(always)]
    pub fn seeing(
        &self,
        range: Range<usize>,
        now: [f32; 3],
        before: [f32; 3],
        members_moved: bool,
        with_z: bool,
        mut hits: impl FnMut(usize, u64, u64),
    ) {
        let from = if members_moved { At::Start } else { At::Now };
        let rects = self.rects > 0;
        self.runs(range, |start, blocks, valid| {
            let before = (from, before);
            let (mut in_now, mut in_before) = if with_z {
                disc_masks::<true>(blocks, (At::Now, now), before, Radius::Members)
            } else {
                disc_masks::<false>(blocks, (At::Now, now), before, Radius::Members)
            };
            if rects {
                let (in_rect_now, in_rect_before) = own_rect_masks(blocks, (At::Now, now), before);
                (in_now, in_before) = (in_now & in_rect_now, in_before & in_rect_before);
            }
            let (in_now, in_before) = (in_now & valid, in_before & valid);
            if in_now | in_before != 0 {
                hits(start, in_now ^ in_before, in_now | in_before);
            }
        });
    }

    /// Calls `each(start, blocks, valid)` for the blocks covering `range` (clamped to the
    /// members), up to 16 blocks at a time: `start` is the index of the first block's first
    /// member, and bit `j` of `valid` says member `start + j` is in `range`.
    #[inline(always)]
    fn runs(&self, range: Range<usize>, mut each: impl FnMut(usize, &[Block], u64)) {
        let end = range.end.min(self.len());
        let mut start = range.start - range.start % LANES;
        while start < end {
            let stop = (start + MASK_BITS).min(end);
            let blocks = &self.blocks[start / LANES..stop.div_ceil(LANES)];
            let below = |n: usize| if n >= MASK_BITS { u64::MAX } else { (1u64 << n) - 1 };
            let valid = below(stop - start) & !below(range.start.saturating_sub(start));
            each(start, blocks, valid);
            start = stop;
        }
    }
}
