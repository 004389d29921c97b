//! A cell's member positions again, in blocks of four members with one array of four per axis
//! (structure of arrays within a block), so the distance tests of a scan run four members per
//! SSE instruction, while one member's values stay within a 192-byte block (an edit touches
//! three cache lines, not one per array) and a cell holds one buffer. Measured with callgrind
//! (uniform 10k, one thread): testing the 56-byte members in place took 23 instructions per
//! member (the compiler's vectorisation shuffled single lanes together), these blocks take
//! about 5. Each block also holds what a flip needs of its members ([`Lane`]), so a flip is
//! decided without loading the member's record, and the half extents of rectangular views, so a
//! rectangle is tested exactly without it either. The vector tests themselves are in [`masks`].
//!
//! The half extents took the blocks from 160 to 192 bytes (aligned to the cache lines), with
//! the disc workloads' instructions as they were and their misses within 1% (callgrind with a
//! 1 MiB last level, one thread: uniform 10k 399.4 → 402.4 k last-level misses an update, 5%
//! moving 50k 293.8 → 294.1 k); their rectangles' last line is read only in cells that hold a
//! rectangle.

use core::ops::Range;

use super::{Member, cell::rect_of};

mod masks;

use masks::{
    At, Radius, band_masks, disc_mask, disc_masks, disc_masks_both_ways, flip_masks, flip_masks_many, own_rect_masks,
    rect_band_masks,
};

/// At most this many observers' flip scans share one pass over a cell ([`Positions::flips_many`]).
/// Measured (`PERFORMANCE.md`, stop 39; `scenario` uniform 10k, one thread, six alternating
/// rounds, steady medians): 4 7.38 ms, 8 7.05 ms, 16 7.19 ms; crowded 2k 8 the fastest too.
/// Again after the batch's tests became one pass per observer over each run of blocks, with AVX
/// (stop 54; callgrind per update, uniform 10k: 4 55.17, 8 54.37, 16 53.47 M instructions;
/// `scenario`, alternating runs, steady medians, 8 against 16): uniform 50k one thread
/// 27.6–28.1 against 26.8–27.8 ms (four runs), two threads 16.3–16.9 against 16.1–16.3 ms
/// (three); uniform 10k 4.44–4.69 against 4.44–4.74 ms and crowded 2k 3.65–3.84 against
/// 3.65–3.98 ms (three each): 16.
pub(crate) const FLIP_BATCH: usize = 16;

/// Members per block: one vector instruction tests a block's four.
const LANES: usize = 4;

/// Members tested per mask: one bit each.
const MASK_BITS: usize = 64;

/// Four members' positions, start-of-tick positions and squared view radii, one array per
/// value, then what a flip scan needs of a member that flipped (only read on a flip), then the
/// half extents of the members' rectangles (only read where a member has one). Three cache
/// lines: a disc world's distance tests read the first two.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Block {
    /// Current position, per axis.
    now: [[f32; LANES]; 3],
    /// Start-of-tick position, per axis.
    start: [[f32; LANES]; 3],
    /// Squared view radius (negative: not an observer).
    r2: [f32; LANES],
    /// The member's slot.
    slot: [u32; LANES],
    /// The layers an observer's flip scan may find it in: [`Member::seen_by`], or none while it
    /// has jumped (its own target scan decides its pairs).
    flip_layers: [u32; LANES],
    /// The layers it sees while it is a [clean observer](Member::is_clean_observer) (the ones a
    /// moving target's scan tests), else none.
    clean_sees: [u32; LANES],
    /// [`Member::half`] per axis: a rectangle's half extents, `+∞` for the other members.
    half: [[f32; LANES]; 2],
}

/// An observer's view as [`Positions::flips`] tests it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FlipShape {
    /// A disc of this squared radius (the test of [`dist2`](crate::visibility::dist2)).
    Disc(f32),
    /// A rectangle of these half extents on the plane's two axes (the test of
    /// [`in_rect`](crate::visibility::in_rect)).
    Rect([f32; 2]),
}

/// A moving observer's band test ([`Positions::band_crossings`]): where it is now and where it was
/// at the start of the tick, its grown view's squared radius, and the squared distances of its
/// quiet bands' bounds within that view.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BandTest<'a> {
    /// The observer's position now.
    pub now: [f32; 3],
    /// Its position at the start of the tick.
    pub start: [f32; 3],
    /// Its grown view's squared radius.
    pub grown: f32,
    /// The bounds, squared distances below `grown`.
    pub bounds: &'a [f32],
}

/// A moving rectangle's band test ([`Positions::rect_band_crossings`]): where it is now and where
/// it was at the start of the tick, its grown view's half extents, its view's (the edge of its
/// quiet bands), and its tiers' bounds, half sides of squares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RectBandTest<'a> {
    /// The observer's position now.
    pub now: [f32; 3],
    /// Its position at the start of the tick.
    pub start: [f32; 3],
    /// Its grown view's half extents.
    pub grown: [f32; 2],
    /// Its view's half extents, without the margin.
    pub edge: [f32; 2],
    /// The tiers' bounds, compared with a member's larger offset on the plane's two axes.
    pub bounds: &'a [f32],
}

// The module docs count on this size.
const _: () = assert!(
    size_of::<Block>() == 192,
    "a block should hold four members in three cache lines"
);

/// One member's values as a block holds them: what a scan needs of a member whose distance test
/// flipped, read from the block the test has just loaded instead of the member's own record
/// (one more cache miss per flip).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lane {
    pub slot: u32,
    pub p: [f32; 3],
    pub r2: f32,
    /// [`Block::flip_layers`].
    pub flip_layers: u32,
    /// [`Block::clean_sees`].
    pub clean_sees: u32,
    /// Its rectangle's half extents, if its view is one.
    pub rect: Option<[f32; 2]>,
}

/// The positions, start-of-tick positions, squared view radii, flip data ([`Lane`]) and
/// rectangles' half extents of a cell's members, index for index (member `i` is lane `i % 4` of
/// block `i / 4`). Lanes past the last member hold stale values; every test masks them out.
#[derive(Debug, Default)]
pub(crate) struct Positions {
    blocks: Vec<Block>,
    /// How many members (`u32`, so that a cell stays two cache lines).
    len: u32,
    /// How many members have a rectangular view ([`Member::rect`]): only then do the tests of
    /// the members' own views ([`Self::seeing`], [`Self::flips_both_ways`]) read the half
    /// extents.
    rects: u32,
}

impl Positions {
    /// Appends a member's values.
    #[inline]
    pub fn push(&mut self, m: &Member) {
        if self.len().is_multiple_of(LANES) {
            if self.blocks.len() == self.blocks.capacity() {
                // Grow by an eighth: most cells of a sparse world hold one member, and `Vec`'s
                // own first allocation would be four blocks (448 bytes).
                self.blocks.reserve_exact((self.blocks.len() / 8).max(1));
            }
            self.blocks.push(Block::default());
        }
        self.len += 1;
        self.write(self.len() - 1, m);
        self.rects += u32::from(m.rect().is_some());
    }

    /// Removes member `i`, moving the last one into its place (as `Vec::swap_remove`).
    #[inline]
    pub fn swap_remove(&mut self, i: usize) {
        let last = self.len() - 1;
        self.rects -= u32::from(self.lane(i).rect.is_some());
        if i != last {
            let (b, l) = (last / LANES, last % LANES);
            let from = self.blocks[b];
            let to = &mut self.blocks[i / LANES];
            let j = i % LANES;
            for axis in 0..3 {
                to.now[axis][j] = from.now[axis][l];
                to.start[axis][j] = from.start[axis][l];
            }
            to.r2[j] = from.r2[l];
            to.slot[j] = from.slot[l];
            to.flip_layers[j] = from.flip_layers[l];
            to.clean_sees[j] = from.clean_sees[l];
            for axis in 0..2 {
                to.half[axis][j] = from.half[axis][l];
            }
        }
        self.len = last as u32;
        self.blocks.truncate(self.len().div_ceil(LANES));
    }

    /// Sets member `i`'s values to `m`'s.
    #[inline]
    pub fn set(&mut self, i: usize, m: &Member) {
        let was = self.lane(i).rect.is_some();
        self.write(i, m);
        self.rects = self.rects - u32::from(was) + u32::from(m.rect().is_some());
    }

    /// Writes `m`'s values into member `i`'s lanes (the count of rectangles left to the caller).
    #[inline]
    fn write(&mut self, i: usize, m: &Member) {
        let (block, j) = (&mut self.blocks[i / LANES], i % LANES);
        for axis in 0..3 {
            block.now[axis][j] = m.p[axis];
            block.start[axis][j] = m.start_p[axis];
        }
        block.r2[j] = m.r2;
        block.slot[j] = m.slot;
        block.flip_layers[j] = flip_layers(m);
        block.clean_sees[j] = clean_sees(m);
        (block.half[0][j], block.half[1][j]) = (m.half[0], m.half[1]);
    }

    /// How many members have a rectangular view.
    #[cfg(test)]
    pub fn rects(&self) -> usize {
        self.rects as usize
    }

    /// How many members.
    #[inline(always)]
    fn len(&self) -> usize {
        self.len as usize
    }

    /// Renames every member's slot with `remap` (after the index renumbered its slots).
    pub fn remap_slots(&mut self, remap: impl Fn(&mut u32)) {
        for i in 0..self.len() {
            remap(&mut self.blocks[i / LANES].slot[i % LANES]);
        }
    }

    /// Member `i`'s values.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> Lane {
        let (block, j) = (&self.blocks[i / LANES], i % LANES);
        Lane {
            slot: block.slot[j],
            p: block.now.map(|axis| axis[j]),
            r2: block.r2[j],
            flip_layers: block.flip_layers[j],
            clean_sees: block.clean_sees[j],
            // The third cache line, read only where some member has a rectangle.
            rect: if self.rects > 0 {
                rect_of([block.half[0][j], block.half[1][j]])
            } else {
                None
            },
        }
    }

    /// Hints the CPU to bring member `i`'s block into cache (nothing if there is none).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(block) = self.blocks.get(i / LANES) {
            crate::prefetch::prefetch(core::slice::from_ref(block));
        }
    }

    /// The layers that some clean observer among the members sees ([`Lane::clean_sees`] of
    /// them all): a target of none of them has no clean observer here. Reads one line per block,
    /// the line a distance test of the block reads too.
    pub fn clean_sees_any(&self) -> u32 {
        let (full, tail) = (self.len() / LANES, self.len() % LANES);
        let any = |lanes: &[u32]| lanes.iter().fold(0, |any, &sees| any | sees);
        let whole = self.blocks[..full].iter().fold(0, |acc, b| acc | any(&b.clean_sees));
        whole | self.blocks.get(full).map_or(0, |b| any(&b.clean_sees[..tail]))
    }

    /// Removes everything, keeping the buffer.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
        self.rects = 0;
    }

    /// Replaces everything with `members`' values, in order (after a sorted cell is reordered).
    pub fn rebuild(&mut self, members: &[Member]) {
        self.clear();
        for m in members {
            self.push(m);
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * size_of::<Block>()
    }

    /// Whether index `i` holds member `m`'s values (bit for bit), and nothing is held past the
    /// last member's block.
    #[cfg(test)]
    pub fn holds(&self, i: usize, m: &Member) -> bool {
        let (block, j) = (&self.blocks[i / LANES], i % LANES);
        let held = [0, 1, 2]
            .map(|a| block.now[a][j])
            .into_iter()
            .chain([0, 1, 2].map(|a| block.start[a][j]));
        let want = m.p.into_iter().chain(m.start_p);
        i < self.len()
            && held.map(f32::to_bits).eq(want.map(f32::to_bits))
            && block.r2[j].to_bits() == m.r2.to_bits()
            && block.slot[j] == m.slot
            && block.flip_layers[j] == flip_layers(m)
            && block.clean_sees[j] == clean_sees(m)
            && [block.half[0][j], block.half[1][j]].map(f32::to_bits) == m.half.map(f32::to_bits)
            && self.blocks.len() == self.len().div_ceil(LANES)
    }

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

    /// [`flips`](Self::flips) of up to [`FLIP_BATCH`] observers over all the members, each run
    /// of blocks brought into cache once for all of them: `views[i]` is observer `i`'s position
    /// now, its start position and its view; calls `hits(i, start, flips, inside)` for each run
    /// and observer `i`, also where `flips` is 0 (the caller records without a branch).
    #[inline(always)]
    pub fn flips_many(
        &self,
        views: &[([f32; 3], [f32; 3], FlipShape)],
        with_z: bool,
        mut hits: impl FnMut(usize, usize, u64, u64),
    ) {
        let mut masks = [(0u64, 0u64); FLIP_BATCH];
        let masks = &mut masks[..views.len()];
        self.runs(0..self.len(), |start, blocks, valid| {
            if with_z {
                flip_masks_many::<true>(blocks, views, masks);
            } else {
                flip_masks_many::<false>(blocks, views, masks);
            }
            for (i, &(in_now, in_start)) in masks.iter().enumerate() {
                let (in_now, in_start) = (in_now & valid, in_start & valid);
                hits(i, start, in_now ^ in_start, in_now);
            }
        });
    }

    /// [`flips`](Self::flips) for a disc of squared radius `r2`, and in the same pass each
    /// member's own view of the scanning observer as a target at its two points (a stepping
    /// observer is a stepping target too): calls `hits(start, flips, inside, seen_now,
    /// seen_start)` for each run with a flip either way (`every_seer`: or with a member that
    /// sees it at either point, as [`seeing`](Self::seeing) reports), bit `j` of `seen_now` set
    /// when member `start + j` sees `now` with its own view (as [`seeing`](Self::seeing) tests
    /// it), of `seen_start` when its start-of-tick position sees `start_p`. Both views share the
    /// two distances per member; for a member that did not move this tick (its start position is
    /// its position, as for every clean observer) `seen_start` is [`seeing`](Self::seeing)'s test
    /// at `start_p` bit for bit.
    #[expect(clippy::too_many_arguments, reason = "the two points, the radius and what to report")]
    #[inline(always)]
    pub fn flips_both_ways(
        &self,
        range: Range<usize>,
        now: [f32; 3],
        start_p: [f32; 3],
        r2: f32,
        with_z: bool,
        every_seer: bool,
        mut hits: impl FnMut(usize, u64, u64, u64, u64),
    ) {
        let rects = self.rects > 0;
        self.runs(range, |start, blocks, valid| {
            let [in_now, in_start, mut seen_now, mut seen_start] = if with_z {
                disc_masks_both_ways::<true>(blocks, now, start_p, r2)
            } else {
                disc_masks_both_ways::<false>(blocks, now, start_p, r2)
            }
            .map(|mask| mask & valid);
            if rects {
                let (in_rect_now, in_rect_start) = own_rect_masks(blocks, (At::Now, now), (At::Start, start_p));
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

/// The layers an observer's flip scan may find `m` in: its [`Member::seen_by`], or none while it
/// has jumped.
#[inline]
fn flip_layers(m: &Member) -> u32 {
    if m.jumped { 0 } else { m.seen_by }
}

/// The layers `m` sees while it is a clean observer, else none.
#[inline]
fn clean_sees(m: &Member) -> u32 {
    if m.is_clean_observer() { m.sees } else { 0 }
}

#[cfg(test)]
mod tests;
