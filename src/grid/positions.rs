//! A cell's member positions again, in blocks of four members with one array of four per axis
//! (structure of arrays within a block), so the distance tests of a scan run four members per
//! SSE instruction, while one member's values stay within a 192-byte block (an edit touches
//! three cache lines, not one per array) and a cell holds one buffer. Measured with callgrind
//! (uniform 10k, one thread): testing the 56-byte members in place took 23 instructions per
//! member (the compiler's vectorisation shuffled single lanes together), these blocks take
//! about 5. Each block also holds what a flip needs of its members ([`Lane`]), so a flip is
//! decided without loading the member's record, and the half extents of rectangular views, so a
//! rectangle is tested exactly without it either. The scans over a run of blocks are in [`scans`],
//! the vector tests themselves in [`masks`].
//!
//! The half extents took the blocks from 160 to 192 bytes (aligned to the cache lines), with
//! the disc workloads' instructions as they were and their misses within 1% (callgrind with a
//! 1 MiB last level, one thread: uniform 10k 399.4 → 402.4 k last-level misses an update, 5%
//! moving 50k 293.8 → 294.1 k); their rectangles' last line is read only in cells that hold a
//! rectangle.

use super::{Member, cell::rect_of};

mod masks;
mod scans;

#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
pub(crate) use masks::avx_available;

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

/// An observer of a batched flip scan: its position now, at the start of the tick, and its view.
pub(crate) type FlipView = ([f32; 3], [f32; 3], FlipShape);

/// The lanes of an AVX vector: two blocks.
const SPREAD: usize = 2 * LANES;

/// The observers of a batched flip scan ([`Positions::flips_many`]), at most [`FLIP_BATCH`], and
/// for the AVX tests each value of theirs spread over the lanes of a vector, once for the whole
/// batch rather than for each run of blocks it tests ([`SpreadViews::spread`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlipViews<'a> {
    views: &'a [FlipView],
    /// The views' values spread for the AVX tests, if they were.
    #[cfg_attr(
        any(not(target_arch = "x86_64"), bevy_aoi_portable),
        expect(dead_code, reason = "read by the AVX tests only")
    )]
    spread: Spread<'a>,
}

impl FlipViews<'_> {
    /// The observers' views, in order.
    #[inline(always)]
    pub fn views(&self) -> &[FlipView] {
        self.views
    }
}

/// One observer's values for the AVX tests, each [`SPREAD`] times over: for a disc its position
/// now (three axes), at the start of the tick (three) and its squared radius; for a rectangle
/// its position now on the plane's two axes, at the start (two) and its half extents (two), the
/// seventh row unused.
pub(crate) type SpreadView = [[f32; SPREAD]; 7];

/// The values of a batch's views spread for the AVX tests ([`FlipViews`]), one [`SpreadView`] an
/// observer, in order.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    any(not(target_arch = "x86_64"), bevy_aoi_portable),
    expect(dead_code, reason = "read by the AVX tests only")
)]
pub(crate) enum Spread<'a> {
    /// Not spread: the CPU has no AVX, or the batch holds both discs and rectangles (the AVX
    /// tests take its views one by one, from [`FlipViews::views`]).
    Not,
    /// Every view is a disc.
    Discs(&'a [SpreadView]),
    /// Every view is a rectangle.
    Rects(&'a [SpreadView]),
}

/// The buffer that [`FlipViews`] spread their values into, kept between batches: room for a
/// whole batch, written in place. A `Vec` extended by an iterator of [`SpreadView`]s for discs
/// and rectangles moved each one through the stack: callgrind, uniform 10k, 48.08 M instructions
/// an update, against 44.42 M written in place.
#[derive(Debug)]
pub(crate) struct SpreadViews(
    #[cfg_attr(
        any(not(target_arch = "x86_64"), bevy_aoi_portable),
        expect(dead_code, reason = "read by the AVX tests only")
    )]
    Box<[SpreadView; FLIP_BATCH]>,
);

impl Default for SpreadViews {
    fn default() -> Self {
        Self(Box::new([[[0.0; SPREAD]; 7]; FLIP_BATCH]))
    }
}

impl SpreadViews {
    /// The batch of `views` (at most [`FLIP_BATCH`]), its values spread into this buffer if the
    /// CPU has AVX and its views are all discs or all rectangles ([`Spread`]).
    pub fn spread<'a>(&'a mut self, views: &'a [FlipView]) -> FlipViews<'a> {
        assert!(
            views.len() <= FLIP_BATCH,
            "a flip batch should hold at most {FLIP_BATCH} observers"
        );
        #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
        if avx_available() {
            return FlipViews {
                views,
                spread: self.spread_alike(views),
            };
        }
        FlipViews {
            views,
            spread: Spread::Not,
        }
    }

    /// Spreads the values of `views` into this buffer if they are all discs or all rectangles.
    #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
    fn spread_alike(&mut self, views: &[FlipView]) -> Spread<'_> {
        let rects = matches!(views.first(), Some((_, _, FlipShape::Rect(_))));
        for (&(now, start, shape), spread) in views.iter().zip(self.0.iter_mut()) {
            let values = match shape {
                FlipShape::Disc(r2) if !rects => disc_values(now, start, r2),
                FlipShape::Rect([hw, hh]) if rects => [now[0], now[1], start[0], start[1], hw, hh, 0.0],
                _ => return Spread::Not,
            };
            spread_into(spread, values);
        }
        let spread = &self.0[..views.len()];
        if rects {
            Spread::Rects(spread)
        } else {
            Spread::Discs(spread)
        }
    }
}

/// A disc's values in [`SpreadView`]'s order: its position now, at the start, its squared radius.
#[inline(always)]
fn disc_values(now: [f32; 3], start: [f32; 3], r2: f32) -> [f32; 7] {
    [now[0], now[1], now[2], start[0], start[1], start[2], r2]
}

/// Writes each of `values` [`SPREAD`] times over into its row of `spread`.
#[inline(always)]
fn spread_into(spread: &mut SpreadView, values: [f32; 7]) {
    for (row, value) in spread.iter_mut().zip(values) {
        *row = [value; SPREAD];
    }
}

/// A stepping disc observer's values for the both-ways tests
/// ([`Positions::flips_both_ways`]): its position now, at the start of the tick and its squared
/// radius, and the same values spread over the lanes ([`SpreadView`], a disc's rows) once for its
/// whole scan. Before, the AVX test spread them again for each run of blocks, about 35
/// instructions a cell: callgrind, one thread, 5% moving 50k 29.72 → 29.42 M instructions an
/// update, 25% moving 20k 48.97 → 48.35 M.
#[derive(Clone, Debug)]
pub(crate) struct BothWaysView {
    /// The observer's position now.
    pub now: [f32; 3],
    /// Its position at the start of the tick.
    pub start: [f32; 3],
    /// Its squared radius.
    pub r2: f32,
    /// The same values spread for the AVX test.
    #[cfg_attr(
        any(not(target_arch = "x86_64"), bevy_aoi_portable),
        expect(dead_code, reason = "read by the AVX tests only")
    )]
    spread: SpreadView,
}

impl BothWaysView {
    /// The values of an observer at `now` that was at `start`, of squared radius `r2`.
    #[inline(always)]
    pub fn new(now: [f32; 3], start: [f32; 3], r2: f32) -> Self {
        let mut spread = [[0.0; SPREAD]; 7];
        spread_into(&mut spread, disc_values(now, start, r2));
        Self { now, start, r2, spread }
    }
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
    // Always inlined: see `Cell::edit_member`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, m: &Member) {
        let was = self.lane(i).rect.is_some();
        self.write(i, m);
        self.rects = self.rects - u32::from(was) + u32::from(m.rect().is_some());
    }

    /// Sets the only member's values to `m`'s, reading nothing of what they were (no load to
    /// wait on where the block is not in cache).
    #[inline(always)]
    pub fn set_only(&mut self, m: &Member) {
        debug_assert_eq!(self.len(), 1, "set_only should be asked of one member");
        self.write(0, m);
        self.rects = u32::from(m.rect().is_some());
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
