//! The distance and rectangle tests of [`Positions`](super::Positions), a run of blocks at a
//! time: each block's four members tested by one vector instruction per step (SSE on `x86_64`,
//! a scalar loop with the same arithmetic elsewhere), the answers gathered into one bit per
//! member. The batched flip scans' tests ([`flip_masks_many`]) and the both-ways tests
//! ([`disc_masks_both_ways`]) take two blocks per instruction where the CPU has AVX ([`avx`]),
//! chosen at run time by their callers, which are compiled for AVX then
//! (`scan/avx_twins.rs`). Built with `--cfg bevy_aoi_portable` (in `RUSTFLAGS`), `x86_64` takes
//! the scalar forms too, as other architectures do, which is how CI tests them (`.ci/run`).

use super::{BandTest, Block, BothWaysView, FlipShape, FlipView, FlipViews, LANES, RectBandTest};

#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
mod avx;

/// Whether this CPU runs the tests' AVX forms (detected once, then read from a cached flag), so
/// a caller may compile a whole scan for AVX and have them inlined into it.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
pub(crate) fn avx_available() -> bool {
    avx::available()
}

/// Which positions of a block a distance test reads.
#[derive(Clone, Copy, Debug)]
pub(super) enum At {
    /// The members' positions now.
    Now,
    /// Their positions at the start of the tick.
    Start,
}

impl At {
    /// The block's positions this names, one array per axis.
    #[inline(always)]
    fn of(self, block: &Block) -> &[[f32; LANES]; 3] {
        match self {
            At::Now => &block.now,
            At::Start => &block.start,
        }
    }
}

/// The squared radius a distance is compared with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Radius {
    /// The same for every member: a scanning observer's.
    Same(f32),
    /// Each member's own (negative for a member that is not an observer: it sees nothing).
    Members,
}

impl Radius {
    /// The squared radii of the block's four members.
    #[inline(always)]
    fn of(self, block: &Block) -> [f32; LANES] {
        match self {
            Radius::Same(r2) => [r2; LANES],
            Radius::Members => block.r2,
        }
    }
}

/// Bit `j` set when member `j` of `blocks` (its positions `at`) is within `radius` of `p`; the
/// third axis is tested only `with_z` (one branch per run of blocks, one copy of the loop each).
#[inline(always)]
pub(super) fn disc_mask(blocks: &[Block], (at, p): (At, [f32; 3]), radius: Radius, with_z: bool) -> u64 {
    let mut mask = 0u64;
    if with_z {
        for (k, block) in blocks.iter().enumerate() {
            mask |= u64::from(lanes_within::<true>(at.of(block), p, &radius.of(block))) << (k * LANES);
        }
    } else {
        for (k, block) in blocks.iter().enumerate() {
            mask |= u64::from(lanes_within::<false>(at.of(block), p, &radius.of(block))) << (k * LANES);
        }
    }
    mask
}

/// Two masks of [`disc_mask`] in one pass over the blocks: members' positions `a` around `pa`
/// and `b` around `pb`, with the squared radii `radius` (a flip scan's positions now and at the
/// start of the tick; a target's two points). One pass loads each block once and keeps the
/// loop's own work single: 3.7% fewer instructions in all than two passes (callgrind, uniform
/// 10k, 8 updates).
#[inline(always)]
pub(super) fn disc_masks<const WITH_Z: bool>(
    blocks: &[Block],
    (a, pa): (At, [f32; 3]),
    (b, pb): (At, [f32; 3]),
    radius: Radius,
) -> (u64, u64) {
    let (mut in_a, mut in_b) = (0u64, 0u64);
    for (k, block) in blocks.iter().enumerate() {
        let r2 = radius.of(block);
        in_a |= u64::from(lanes_within::<WITH_Z>(a.of(block), pa, &r2)) << (k * LANES);
        in_b |= u64::from(lanes_within::<WITH_Z>(b.of(block), pb, &r2)) << (k * LANES);
    }
    (in_a, in_b)
}

/// [`disc_masks`] of a flip scan (positions now around `view.now`, start positions around
/// `view.start`, the observer's squared radius `view.r2`), then the same two with each member's
/// own radius, from the same distances (the AVX form reads the view's spread values). `AVX`: with
/// AVX (two blocks per instruction), which the caller checked the CPU has ([`avx_available`]);
/// the caller is compiled for AVX itself, so the test is inlined into its loop. Measured, with
/// AVX as a call per run of blocks: callgrind per update, one thread, 5% moving 10k 7.02 → 6.71 M
/// instructions, 50k 35.12 → 33.48 M; uniform 10k and crowded 2k level; `scenario` 5% moving
/// 50k, one thread, ten alternating runs, median 9.19 → 8.99 ms (the scan waits on memory more
/// than on its instructions). Inlined into a scan compiled for AVX (stop 69), callgrind: 5%
/// moving 50k 31.36 → 30.30 M, 25% moving 20k 52.31 → 50.12 M; uniform 10k, crowded 2k and
/// `sparse_huge` 50k level.
#[inline(always)]
pub(super) fn disc_masks_both_ways<const WITH_Z: bool, const AVX: bool>(
    blocks: &[Block],
    view: &BothWaysView,
) -> [u64; 4] {
    #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
    if AVX {
        return avx::both_ways_checked::<WITH_Z>(blocks, &view.spread);
    }
    disc_masks_both_ways_sse::<WITH_Z>(blocks, view.now, view.start, view.r2)
}

/// [`disc_masks_both_ways`] in SSE (four members per instruction).
#[inline(always)]
fn disc_masks_both_ways_sse<const WITH_Z: bool>(blocks: &[Block], now: [f32; 3], start: [f32; 3], r2: f32) -> [u64; 4] {
    let mine = [r2; LANES];
    let mut masks = [0u64; 4];
    for (k, block) in blocks.iter().enumerate() {
        let (in_now, seen_now) = lanes_within_both::<WITH_Z>(&block.now, now, &mine, &block.r2);
        let (in_start, seen_start) = lanes_within_both::<WITH_Z>(&block.start, start, &mine, &block.r2);
        for (mask, bits) in masks.iter_mut().zip([in_now, in_start, seen_now, seen_start]) {
            *mask |= u64::from(bits) << (k * LANES);
        }
    }
    masks
}

/// The masks of a flip scan for several observers at once ([`disc_masks`] of a disc, [`rect_masks`]
/// of a rectangle): view `i` of `views` is observer `i`'s position now, its start position and its
/// view; `masks(i, in_now, in_start)` gets its two masks (members inside its view now, at the
/// start). The run's blocks (at most 2.5 kB) come from memory once, for the first observer, and
/// stay in cache for the others; each observer passes over them with its values and its masks in
/// registers, its masks handed on as soon as they are known. Measured against a pass over the
/// blocks that tested each block for every observer in turn (stop 54; its observers' values
/// fetched and spread over the lanes again for every block, its masks kept in memory): callgrind
/// per update, uniform 10k, one thread, 65.65 → 60.74 M instructions; `scenario` uniform 50k, one
/// thread, four alternating runs: 30.3–31.6 → 29.0–29.9 ms. With AVX, two blocks per instruction
/// ([`avx`]): callgrind 60.74 → 54.37 M instructions, `scenario` uniform 50k one thread, four
/// alternating runs, 29.3–30.4 → 28.3–29.0 ms. With AVX and discs only, the other order came back
/// and paid (stop 70, [`avx`]'s `pair_by_pair`; rectangles only too since stop 71): the values
/// spread once for the batch ([`FlipViews`]), each pair of blocks loaded once for all the
/// observers, each mask written a byte a pair, all the masks handed on at the end of the run.
/// The single observers' tests (recomputes, target scans) stay on SSE: through AVX, a call per
/// run of blocks for one observer, they were no faster where everything moves and slower at 5%
/// moving (callgrind, 20k, 13.32 → 14.06 M instructions). A flip scan judging clean observers,
/// with its four masks a run ([`disc_masks_both_ways`]), gains from AVX even so. `AVX`: with
/// AVX, which the caller checked the CPU has ([`avx_available`]), compiled for AVX itself so the
/// tests are inlined into it.
#[inline(always)]
pub(super) fn flip_masks_many<const WITH_Z: bool, const AVX: bool>(
    blocks: &[Block],
    views: FlipViews,
    masks: impl FnMut(usize, u64, u64),
) {
    #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
    if AVX {
        avx::flip_masks_checked::<WITH_Z>(blocks, views, masks);
        return;
    }
    flip_masks_many_sse::<WITH_Z>(blocks, views.views(), masks);
}

/// [`flip_masks_many`] without AVX: [`flip_masks`] of each observer in turn.
#[inline(always)]
pub(super) fn flip_masks_many_sse<const WITH_Z: bool>(
    blocks: &[Block],
    views: &[FlipView],
    mut masks: impl FnMut(usize, u64, u64),
) {
    for (i, &(now, start, shape)) in views.iter().enumerate() {
        let (in_now, in_start) = flip_masks::<WITH_Z>(blocks, now, start, shape);
        masks(i, in_now, in_start);
    }
}

/// The two masks of one observer's flip scan over `blocks`: the members inside its view around
/// `now` (their positions now) and around `start` (their start-of-tick positions).
#[inline(always)]
pub(super) fn flip_masks<const WITH_Z: bool>(
    blocks: &[Block],
    now: [f32; 3],
    start: [f32; 3],
    shape: FlipShape,
) -> (u64, u64) {
    match shape {
        FlipShape::Disc(r2) => disc_masks::<WITH_Z>(blocks, (At::Now, now), (At::Start, start), Radius::Same(r2)),
        FlipShape::Rect(half) => rect_masks(blocks, now, start, half),
    }
}

/// The masks of a moving observer's band pass over `blocks` ([`Positions::band_crossings`]):
/// the members that flip for the disc of squared radius `test.grown` (within it around
/// `test.now`, their positions now, and not around `test.start`, their start positions, or the
/// other way round), and those whose squared distances at the two ends lie on different sides of
/// one of `test.bounds` (`d > bound`, as the view layer tests them). Each member's two distances
/// are computed once for all the bounds; with AVX, two blocks per instruction ([`avx`]).
///
/// [`Positions::band_crossings`]: super::Positions::band_crossings
#[inline(always)]
pub(super) fn band_masks<const WITH_Z: bool>(blocks: &[Block], test: BandTest) -> (u64, u64) {
    #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
    if avx::available() {
        return avx::band_masks_checked::<WITH_Z>(blocks, test);
    }
    band_masks_sse::<WITH_Z>(blocks, test)
}

/// [`band_masks`] without AVX, a block at a time.
#[inline(always)]
pub(super) fn band_masks_sse<const WITH_Z: bool>(blocks: &[Block], test: BandTest) -> (u64, u64) {
    let (mut flips, mut crossings) = (0u64, 0u64);
    for (k, block) in blocks.iter().enumerate() {
        let (flipped, crossed) = lanes_crossing::<WITH_Z>(block, test);
        flips |= u64::from(flipped) << (k * LANES);
        crossings |= u64::from(crossed) << (k * LANES);
    }
    (flips, crossings)
}

/// The mask of [`Positions::rect_band_crossings`](super::Positions::rect_band_crossings) over
/// `blocks`, a block at a time.
#[inline(always)]
pub(super) fn rect_band_masks(blocks: &[Block], test: RectBandTest) -> u64 {
    (blocks.iter().enumerate()).fold(0, |crossed, (k, block)| {
        crossed | u64::from(lanes_crossing_rect(block, test)) << (k * LANES)
    })
}

/// The members of `block` inside the grown rectangle at both ends and crossing its edge or one of
/// its tiers' squares, in SSE: the offsets and `abs` of [`in_rect`](crate::visibility::in_rect),
/// the larger of the two offsets as `f32::max` takes it (neither is NaN), so the answers are the
/// scalar tests'.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn lanes_crossing_rect(block: &Block, test: RectBandTest) -> u32 {
    use core::arch::x86_64::{
        __m128, _mm_and_ps, _mm_castsi128_ps, _mm_cmple_ps, _mm_loadu_ps, _mm_max_ps, _mm_movemask_ps, _mm_set1_epi32,
        _mm_set1_ps, _mm_sub_ps,
    };
    #[expect(unsafe_code, reason = "SSE loads and comparisons, as in `sse_lanes_in_rects`")]
    // SAFETY: SSE and SSE2 are part of the x86_64 baseline; each load reads exactly the four
    // `f32`s of an array it is given by reference.
    unsafe {
        let abs = _mm_castsi128_ps(_mm_set1_epi32(i32::MAX));
        let offsets = |axes: &[[f32; LANES]; 3], p: [f32; 3]| {
            let off =
                |axis: usize| _mm_and_ps(_mm_sub_ps(_mm_loadu_ps(axes[axis].as_ptr()), _mm_set1_ps(p[axis])), abs);
            (off(0), off(1))
        };
        let (now, start) = (offsets(&block.now, test.now), offsets(&block.start, test.start));
        let within = |d: __m128, b: f32| _mm_movemask_ps(_mm_cmple_ps(d, _mm_set1_ps(b))) as u32;
        let inside = |(x, y): (__m128, __m128), [hw, hh]: [f32; 2]| within(x, hw) & within(y, hh);
        let (larger_now, larger_start) = (_mm_max_ps(now.0, now.1), _mm_max_ps(start.0, start.1));
        let edge = inside(now, test.edge) ^ inside(start, test.edge);
        let crossed = (test.bounds.iter()).fold(edge, |crossed, &b| {
            crossed | (within(larger_now, b) ^ within(larger_start, b))
        });
        crossed & inside(now, test.grown) & inside(start, test.grown)
    }
}

/// [`lanes_crossing_rect`] on other architectures.
#[cfg(any(not(target_arch = "x86_64"), bevy_aoi_portable))]
#[inline(always)]
fn lanes_crossing_rect(block: &Block, test: RectBandTest) -> u32 {
    use crate::visibility::in_rect;
    (0..LANES).fold(0, |crossed, j| {
        let at = |axes: &[[f32; LANES]; 3]| [axes[0][j], axes[1][j], 0.0];
        let (now, start) = (at(&block.now), at(&block.start));
        let larger = |q: [f32; 3], p: [f32; 3]| (q[0] - p[0]).abs().max((q[1] - p[1]).abs());
        let (larger_now, larger_start) = (larger(now, test.now), larger(start, test.start));
        let inside = |half| (in_rect(test.now, half, now), in_rect(test.start, half, start));
        let (edge_now, edge_start) = inside(test.edge);
        let tiers = (test.bounds.iter()).any(|&b| (larger_now <= b) != (larger_start <= b));
        let (grown_now, grown_start) = inside(test.grown);
        crossed | u32::from(grown_now && grown_start && (edge_now != edge_start || tiers)) << j
    })
}

/// The masks of the members whose own rectangle holds a target ([`in_rect`] with the member's
/// half extents, `+∞` for a member without one, whose mask bit is then set): their positions
/// `a` around the target's `pa` and `b` around `pb`, in one pass over the blocks as
/// [`disc_masks`]. With the members' own discs (each rectangle's the disc around it, which holds
/// it: [`rect_r2`]) it gives every member's exact test.
///
/// [`in_rect`]: crate::visibility::in_rect
/// [`rect_r2`]: crate::visibility::rect_r2
#[inline(always)]
pub(super) fn own_rect_masks(blocks: &[Block], (a, pa): (At, [f32; 3]), (b, pb): (At, [f32; 3])) -> (u64, u64) {
    let (mut in_a, mut in_b) = (0u64, 0u64);
    for (k, block) in blocks.iter().enumerate() {
        in_a |= u64::from(lanes_in_own_rects(a.of(block), pa, &block.half)) << (k * LANES);
        in_b |= u64::from(lanes_in_own_rects(b.of(block), pb, &block.half)) << (k * LANES);
    }
    (in_a, in_b)
}

/// The masks of the members inside the rectangle of half extents `half` around `now` (their
/// positions now) and around `start` (their start-of-tick positions), in one pass over the blocks
/// as [`disc_masks`] ([`in_rect`](crate::visibility::in_rect)).
#[inline(always)]
pub(super) fn rect_masks(blocks: &[Block], now: [f32; 3], start: [f32; 3], half: [f32; 2]) -> (u64, u64) {
    let (mut in_now, mut in_start) = (0u64, 0u64);
    for (k, block) in blocks.iter().enumerate() {
        in_now |= u64::from(lanes_in_rect(&block.now, now, half)) << (k * LANES);
        in_start |= u64::from(lanes_in_rect(&block.start, start, half)) << (k * LANES);
    }
    (in_now, in_start)
}

/// Bit `j` set when point `j` of the four is inside the rectangle of half extents `half` around
/// `p`: [`lanes_in_own_rects`] with `half` as every member's, in SSE.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn lanes_in_rect(positions: &[[f32; LANES]; 3], p: [f32; 3], [hw, hh]: [f32; 2]) -> u32 {
    use core::arch::x86_64::_mm_set1_ps;
    #[expect(unsafe_code, reason = "SSE, as `sse_lanes_in_rects`")]
    // SAFETY: SSE is part of the x86_64 baseline.
    unsafe {
        sse_lanes_in_rects(positions, p, [_mm_set1_ps(hw), _mm_set1_ps(hh)])
    }
}

/// Bit `j` set when `p` is inside the rectangle of half extents `half[0][j]`, `half[1][j]` around
/// point `j` of the four, in SSE.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn lanes_in_own_rects(positions: &[[f32; LANES]; 3], p: [f32; 3], [hw, hh]: &[[f32; LANES]; 2]) -> u32 {
    use core::arch::x86_64::_mm_loadu_ps;
    #[expect(unsafe_code, reason = "SSE, as `sse_lanes_in_rects`")]
    // SAFETY: SSE is part of the x86_64 baseline; each load reads exactly the four `f32`s of an
    // array it is given by reference.
    unsafe {
        sse_lanes_in_rects(positions, p, [_mm_loadu_ps(hw.as_ptr()), _mm_loadu_ps(hh.as_ptr())])
    }
}

/// Bit `j` set when point `j` of the four and `p` are at most `half[0]`'s lane `j` apart on the
/// first axis and `half[1]`'s on the second: the same operations as
/// [`in_rect`](crate::visibility::in_rect) (`abs` clears the sign bit, so whichever of the two
/// is the centre, the same answers). One observer's half extents broadcast
/// ([`lanes_in_rect`]), or each member's own ([`lanes_in_own_rects`]).
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn sse_lanes_in_rects([x, y, _]: &[[f32; LANES]; 3], p: [f32; 3], [hw, hh]: [core::arch::x86_64::__m128; 2]) -> u32 {
    use core::arch::x86_64::{
        _mm_and_ps, _mm_castsi128_ps, _mm_cmple_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_set1_epi32, _mm_set1_ps,
        _mm_sub_ps,
    };
    #[expect(
        unsafe_code,
        reason = "as `lanes_within`: rectangular views' flip scans, uniform 10k, own cost / same \
                  world with discs, three alternating runs: 1.18-1.27 with the compiler's loop over \
                  the blocks, 0.81-1.12 with this (1.38-1.47 reading each member's record)"
    )]
    // SAFETY: SSE and SSE2 are part of the x86_64 baseline; each load reads exactly the four
    // `f32`s of an array it is given by reference.
    unsafe {
        let abs = _mm_castsi128_ps(_mm_set1_epi32(i32::MAX));
        let off = |v: &[f32; LANES], c: f32| _mm_and_ps(_mm_sub_ps(_mm_loadu_ps(v.as_ptr()), _mm_set1_ps(c)), abs);
        let in_x = _mm_cmple_ps(off(x, p[0]), hw);
        let in_y = _mm_cmple_ps(off(y, p[1]), hh);
        _mm_movemask_ps(_mm_and_ps(in_x, in_y)) as u32
    }
}

/// [`lanes_in_rect`] on other architectures: [`lanes_in_own_rects`] with `half` as every
/// member's.
#[cfg(any(not(target_arch = "x86_64"), bevy_aoi_portable))]
#[inline(always)]
fn lanes_in_rect(positions: &[[f32; LANES]; 3], p: [f32; 3], [hw, hh]: [f32; 2]) -> u32 {
    lanes_in_own_rects(positions, p, &[[hw; LANES], [hh; LANES]])
}

/// [`lanes_in_own_rects`] on other architectures.
#[cfg(any(not(target_arch = "x86_64"), bevy_aoi_portable))]
#[inline(always)]
fn lanes_in_own_rects([x, y, _]: &[[f32; LANES]; 3], p: [f32; 3], [hw, hh]: &[[f32; LANES]; 2]) -> u32 {
    (0..LANES).fold(0, |bits, j| {
        bits | u32::from(crate::visibility::in_rect([x[j], y[j], 0.0], [hw[j], hh[j]], p)) << j
    })
}

/// Bit `j` set when point `j` of the four is within `r2[j]` of `p`: the same operations in the
/// same order as [`dist2`](crate::visibility::dist2) (in SSE on `x86_64`), so the same answers.
/// Without `WITH_Z` the third axis is left out: where it is 0 on both sides
/// [`dist2`](crate::visibility::dist2) adds exactly `+0.0` to a sum of squares, which changes no
/// comparison.
#[inline(always)]
fn lanes_within<const WITH_Z: bool>(axes: &[[f32; LANES]; 3], p: [f32; 3], r2: &[f32; LANES]) -> u32 {
    lanes_within_both::<WITH_Z>(axes, p, r2, r2).0
}

/// [`lanes_within`] with two sets of squared radii, `r2` and `r2_too`, from one computation of
/// the distances, in SSE.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn lanes_within_both<const WITH_Z: bool>(
    axes: &[[f32; LANES]; 3],
    p: [f32; 3],
    r2: &[f32; LANES],
    r2_too: &[f32; LANES],
) -> (u32, u32) {
    use core::arch::x86_64::{_mm_cmple_ps, _mm_loadu_ps, _mm_movemask_ps};
    let d = lanes_dist2::<WITH_Z>(axes, p);
    #[expect(unsafe_code, reason = "a vector load of an array given by reference")]
    // SAFETY: SSE is part of the x86_64 baseline; the load reads exactly the four `f32`s of `r2`.
    let within = |r2: &[f32; LANES]| unsafe { _mm_movemask_ps(_mm_cmple_ps(d, _mm_loadu_ps(r2.as_ptr()))) as u32 };
    (within(r2), within(r2_too))
}

/// The squared distances of the four points of `axes` from `p`, in SSE: the same operations in
/// the same order as [`dist2`](crate::visibility::dist2) (the third axis only `WITH_Z`).
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
fn lanes_dist2<const WITH_Z: bool>([x, y, z]: &[[f32; LANES]; 3], p: [f32; 3]) -> core::arch::x86_64::__m128 {
    use core::arch::x86_64::{_mm_add_ps, _mm_loadu_ps, _mm_mul_ps, _mm_set1_ps, _mm_sub_ps};
    #[expect(
        unsafe_code,
        reason = "the compiler's own vectorisation of this loop shuffled lanes (12-13 instructions \
                  a member, 4-5 with this); measured with callgrind, see PERFORMANCE.md"
    )]
    // SAFETY: SSE is part of the x86_64 baseline, so every CPU this code runs on has these
    // instructions; each load reads exactly the four `f32`s of an array it is given by reference.
    unsafe {
        let axis = |v: &[f32; LANES], c: f32| _mm_sub_ps(_mm_loadu_ps(v.as_ptr()), _mm_set1_ps(c));
        let (dx, dy) = (axis(x, p[0]), axis(y, p[1]));
        let d = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
        if WITH_Z {
            let dz = axis(z, p[2]);
            _mm_add_ps(d, _mm_mul_ps(dz, dz))
        } else {
            d
        }
    }
}

/// Bits `j` of the four members of `block` ([`band_masks`]): on different sides of `grown` at the
/// two ends, and of one of `bounds`; the distances as [`lanes_dist2`] computes them, in SSE.
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
#[inline(always)]
pub(super) fn lanes_crossing<const WITH_Z: bool>(block: &Block, test: BandTest) -> (u32, u32) {
    use core::arch::x86_64::{__m128, _mm_cmple_ps, _mm_movemask_ps, _mm_set1_ps};
    let (d_now, d_start) = (
        lanes_dist2::<WITH_Z>(&block.now, test.now),
        lanes_dist2::<WITH_Z>(&block.start, test.start),
    );
    #[expect(unsafe_code, reason = "SSE comparisons, as in `lanes_within_both`")]
    // SAFETY: SSE is part of the x86_64 baseline, so every CPU this code runs on has these
    // instructions.
    let within = |d: __m128, r2: f32| unsafe { _mm_movemask_ps(_mm_cmple_ps(d, _mm_set1_ps(r2))) as u32 };
    let flipped = within(d_now, test.grown) ^ within(d_start, test.grown);
    let crossed = (test.bounds.iter()).fold(0, |crossed, &b| crossed | (within(d_now, b) ^ within(d_start, b)));
    (flipped, crossed)
}

/// [`lanes_crossing`] on other architectures (the third axis only `WITH_Z`, as above).
#[cfg(any(not(target_arch = "x86_64"), bevy_aoi_portable))]
#[inline(always)]
pub(super) fn lanes_crossing<const WITH_Z: bool>(block: &Block, test: BandTest) -> (u32, u32) {
    let (now, start) = (test.now, test.start);
    (0..LANES).fold((0, 0), |(flipped, crossed), j| {
        let at =
            |axes: &[[f32; LANES]; 3], p: [f32; 3]| [axes[0][j], axes[1][j], if WITH_Z { axes[2][j] } else { p[2] }];
        let d_now = crate::visibility::dist2(at(&block.now, now), now);
        let d_start = crate::visibility::dist2(at(&block.start, start), start);
        let differs = |b: f32| (d_now <= b) != (d_start <= b);
        let bit = u32::from(test.bounds.iter().any(|&b| differs(b))) << j;
        (flipped | u32::from(differs(test.grown)) << j, crossed | bit)
    })
}

/// [`lanes_within`] with two sets of squared radii (other architectures; the third axis only
/// `WITH_Z`, as above).
#[cfg(any(not(target_arch = "x86_64"), bevy_aoi_portable))]
#[inline(always)]
fn lanes_within_both<const WITH_Z: bool>(
    [x, y, z]: &[[f32; LANES]; 3],
    p: [f32; 3],
    r2: &[f32; LANES],
    r2_too: &[f32; LANES],
) -> (u32, u32) {
    (0..LANES).fold((0, 0), |(bits, bits_too), j| {
        let q = [x[j], y[j], if WITH_Z { z[j] } else { p[2] }];
        let d = crate::visibility::dist2(q, p);
        (
            bits | u32::from(d <= r2[j]) << j,
            bits_too | u32::from(d <= r2_too[j]) << j,
        )
    })
}
