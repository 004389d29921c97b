//! The flip scans' disc and rectangle tests of [`masks`](super) on CPUs with AVX: two blocks
//! (eight members) per instruction, where SSE tests one. Chosen at run time, so the crate builds
//! for the `x86_64` baseline and still uses AVX where the CPU has it. The arithmetic is SSE's,
//! lane for lane (the same subtractions, multiplications and additions in
//! [`dist2`](crate::visibility::dist2)'s order, the same `abs` and comparisons as
//! [`in_rect`](crate::visibility::in_rect)), so the answers are the same bit for bit.

use core::arch::x86_64::{
    __m128, __m256, _CMP_LE_OQ, _mm_loadu_ps, _mm256_add_ps, _mm256_and_ps, _mm256_broadcast_ss, _mm256_castsi256_ps,
    _mm256_cmp_ps, _mm256_loadu_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set_m128, _mm256_set1_epi32,
    _mm256_sub_ps,
};

use super::{At, BandTest, Block, FlipShape, FlipViews, LANES, lanes_crossing};
use crate::grid::positions::{FLIP_BATCH, MASK_BITS, SPREAD, Spread, SpreadView};

/// Whether this CPU has AVX (detected once, then read from a cached flag).
#[inline(always)]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("avx")
}

/// [`flip_masks_many`](super::flip_masks_many) with AVX: for each observer of `views` (its
/// position now, at the start of the tick, and its view), its masks over `blocks` handed to
/// `masks` (members inside its view now, at the start), eight members per instruction. The
/// caller has checked [`available`].
#[inline(always)]
pub(super) fn flip_masks_checked<const WITH_Z: bool>(
    blocks: &[Block],
    views: FlipViews,
    masks: impl FnMut(usize, u64, u64),
) {
    debug_assert!(available(), "AVX should be detected before its masks are asked for");
    #[expect(
        unsafe_code,
        reason = "a function compiled for AVX, called after the CPU was checked for it; measured in \
                  `flip_masks_many`'s doc"
    )]
    // SAFETY: the caller checked `available()`, so this CPU has the AVX instructions the function
    // is compiled with.
    unsafe {
        flip_masks::<WITH_Z>(blocks, views, masks);
    }
}

/// [`flip_masks_checked`]'s work, compiled for AVX: a run of blocks for all the observers (inlined
/// into the batched flip scans' AVX compilation), two blocks at a time, the last one alone when
/// they are odd: pair by pair for all the observers when the views are all discs or all
/// rectangles ([`pair_by_pair`]), else observer by observer. Plain loops rather than
/// `array::map`, which is not compiled for AVX and was called out of line for every block.
///
/// The tests of one observer over the blocks build their masks from the last pair of blocks
/// down, shifting them eight bits a pair, rather than shifting each pair's bits by its place: no
/// shift by a count that has to be worked out and moved into place each time (callgrind, one
/// thread, uniform 10k 51.78 → 50.51 M instructions an update; the both-ways test, 5% moving
/// 50k 30.30 → 29.86 M).
#[target_feature(enable = "avx")]
#[inline]
fn flip_masks<const WITH_Z: bool>(blocks: &[Block], views: FlipViews, mut masks: impl FnMut(usize, u64, u64)) {
    let (paired, odd) = blocks.split_at(blocks.len() & !1);
    match views.spread {
        Spread::Discs(spread) => return pair_by_pair::<WITH_Z, false>(paired, odd, spread, masks),
        Spread::Rects(spread) => return pair_by_pair::<WITH_Z, true>(paired, odd, spread, masks),
        Spread::Not => {}
    }
    for (i, (now, start, shape)) in views.views().iter().enumerate() {
        let (in_now, in_start) = match shape {
            FlipShape::Disc(r2) => disc_masks8::<WITH_Z>(paired, odd, now, start, r2),
            FlipShape::Rect(half) => rect_masks8(paired, odd, now, start, half),
        };
        masks(i, in_now, in_start);
    }
}

/// The masks of a batch of discs, or (`RECT`) of rectangles, over a run of blocks, pair by
/// pair: each pair's members loaded once and tested against every observer in turn (its values
/// read from `spread`, [`Spread`] once for the batch), its bits stored as one byte of the
/// observer's mask; the `odd` last block in both halves of a vector (its four bits kept).
///
/// Observer by observer, each pair's members were loaded and put together again for every
/// observer (8 of the 29 instructions per pair and observer); pair by pair, 21. Callgrind per
/// update, one thread: uniform 10k 47.79 → 44.86 M instructions, crowded 2k 57.48 → 53.14 M,
/// `--tiers` 160.98 → 157.43 M, 25% moving 20k 49.29 → 48.62 M, 5% moving 50k 29.88 → 29.48 M;
/// `--rect` 59.48 → 59.63 M (its batches then still tested observer by observer).
/// With four observers an iteration: uniform 10k 43.96 M, crowded 2k 51.78 M, `--tiers`
/// 156.29 M. Rectangles so too (stop 71): `--rect` 59.57 → 53.80 M, uniform 10k 44.23 M.
#[target_feature(enable = "avx")]
#[inline]
fn pair_by_pair<const WITH_Z: bool, const RECT: bool>(
    paired: &[Block],
    odd: &[Block],
    spread: &[SpreadView],
    mut masks: impl FnMut(usize, u64, u64),
) {
    const PAIRS: usize = MASK_BITS / SPREAD;
    assert!(
        paired.len() + odd.len() <= 2 * PAIRS,
        "a run should hold at most {MASK_BITS} members"
    );
    // Observer `i`'s masks now and at the start, a byte a pair of blocks.
    let mut bytes = [[[0u8; PAIRS]; 2]; FLIP_BATCH];
    let bytes = &mut bytes[..spread.len()];
    let inside = |m, v: &SpreadView, at| view_bits::<WITH_Z, RECT>(m, v, at);
    for (k, pair) in paired.chunks_exact(2).enumerate() {
        let (lo, hi) = (&pair[0], &pair[1]);
        let (now, start) = (members8(&lo.now, &hi.now), members8(&lo.start, &hi.start));
        let test = |v: &SpreadView, b: &mut [[u8; PAIRS]; 2]| {
            b[0][k] = inside(now, v, At::Now);
            b[1][k] = inside(start, v, At::Start);
        };
        // Four observers an iteration, the loop's own instructions shared (callgrind, uniform
        // 10k: 44.86 M an update one at a time, 44.26 M two, 43.96 M four).
        let whole = spread.len() & !3;
        let (four_views, four_bytes) = (spread[..whole].chunks_exact(4), bytes[..whole].chunks_exact_mut(4));
        for (v, b) in four_views.zip(four_bytes) {
            test(&v[0], &mut b[0]);
            test(&v[1], &mut b[1]);
            test(&v[2], &mut b[2]);
            test(&v[3], &mut b[3]);
        }
        for (v, b) in spread[whole..].iter().zip(&mut bytes[whole..]) {
            test(v, b);
        }
    }
    if let [block] = odd {
        let k = paired.len() / 2;
        let (now, start) = (members8(&block.now, &block.now), members8(&block.start, &block.start));
        for (v, b) in spread.iter().zip(bytes.iter_mut()) {
            b[0][k] = inside(now, v, At::Now) & ONE_BLOCK as u8;
            b[1][k] = inside(start, v, At::Start) & ONE_BLOCK as u8;
        }
    }
    // Counted against `FLIP_BATCH` so the caller's arrays of a batch need no bounds check.
    for (i, [in_now, in_start]) in (0..FLIP_BATCH).zip(bytes.iter()) {
        masks(i, u64::from_le_bytes(*in_now), u64::from_le_bytes(*in_start));
    }
}

/// Bit `j` set when member `j` of the eight (`m`, per axis: [`members8`]) is inside the view of
/// `v` (a disc's, or with `RECT` a rectangle's, [`SpreadView`]) around its own point at the same
/// end of the tick as the members' positions (`at`: now, or at the start).
#[target_feature(enable = "avx")]
#[inline]
fn view_bits<const WITH_Z: bool, const RECT: bool>(m: [__m256; 3], v: &SpreadView, at: At) -> u8 {
    let end = match at {
        At::Now => 0,
        At::Start => 1,
    };
    if RECT {
        let first = 2 * end;
        let p = [load8(&v[first]), load8(&v[first + 1])];
        return rect_bits8(m, p, [load8(&v[4]), load8(&v[5])]);
    }
    disc_bits8::<WITH_Z>(m, disc_point8(v, 3 * end), load8(&v[6]))
}

/// Bit `j` set when member `j` of the eight (`m`, per axis: [`members8`]) is within squared
/// distance `r2` of `p` ([`spread`] over the lanes), as [`dist2`](crate::visibility::dist2)
/// compares.
#[target_feature(enable = "avx")]
#[inline]
fn disc_bits8<const WITH_Z: bool>(m: [__m256; 3], p: [__m256; 3], r2: __m256) -> u8 {
    _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(distances8::<WITH_Z>(m, p), r2)) as u8
}

/// Bit `j` set when member `j` of the eight (`m`, per axis: [`members8`]) is inside the
/// rectangle of half extents `half` around `p` (the plane's two axes, spread over the lanes):
/// the operations of [`in_rect`](crate::visibility::in_rect), `abs` clearing the sign bit.
#[target_feature(enable = "avx")]
#[inline]
fn rect_bits8(m: [__m256; 3], p: [__m256; 2], half: [__m256; 2]) -> u8 {
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX));
    let off = |axis: usize| _mm256_and_ps(_mm256_sub_ps(m[axis], p[axis]), abs);
    let in_x = _mm256_cmp_ps::<_CMP_LE_OQ>(off(0), half[0]);
    let in_y = _mm256_cmp_ps::<_CMP_LE_OQ>(off(1), half[1]);
    _mm256_movemask_ps(_mm256_and_ps(in_x, in_y)) as u8
}

/// One disc observer's two masks over the `paired` blocks, eight members per instruction, and
/// the `odd` last block in both halves of a vector (its four bits kept): the observer's values
/// are spread over the lanes once, for both. Before, the odd block took the SSE test, with the
/// values spread again over its four lanes: callgrind, one thread, uniform 10k 48.66 → 48.46 M
/// instructions an update, crowded 2k level.
#[target_feature(enable = "avx")]
#[inline]
fn disc_masks8<const WITH_Z: bool>(
    paired: &[Block],
    odd: &[Block],
    now: &[f32; 3],
    start: &[f32; 3],
    r2: &f32,
) -> (u64, u64) {
    let r2 = _mm256_broadcast_ss(r2);
    observer_masks8(paired, odd, (spread(now), spread(start)), |lo, hi, p| {
        u64::from(disc_bits8::<WITH_Z>(members8(lo, hi), p, r2))
    })
}

/// One rectangle observer's two masks over the `paired` blocks, eight members per instruction
/// (the operations of [`in_rect`](crate::visibility::in_rect): `abs` clears the sign bit), and
/// the `odd` last block in both halves of a vector, as [`disc_masks8`] (callgrind, uniform 10k
/// `--rect`, 60.42 → 60.28 M instructions an update).
#[target_feature(enable = "avx")]
#[inline]
fn rect_masks8(paired: &[Block], odd: &[Block], now: &[f32; 3], start: &[f32; 3], half: &[f32; 2]) -> (u64, u64) {
    let half = [_mm256_broadcast_ss(&half[0]), _mm256_broadcast_ss(&half[1])];
    observer_masks8(paired, odd, (spread(now), spread(start)), |lo, hi, p| {
        u64::from(rect_bits8(members8(lo, hi), [p[0], p[1]], half))
    })
}

/// One observer's two masks over the `paired` blocks and the `odd` last one (in both halves of
/// a vector, its four bits kept), for [`disc_masks8`] and [`rect_masks8`]: `inside(lo, hi, p)`
/// are the bits of the two blocks' members (`lo`'s four, then `hi`'s, at one end of the tick)
/// inside the observer's view around `p`, its position at the same end (`now` or `start`, as
/// [`spread`] gives it).
#[target_feature(enable = "avx")]
#[inline]
fn observer_masks8(
    paired: &[Block],
    odd: &[Block],
    (now, start): ([__m256; 3], [__m256; 3]),
    inside: impl Fn(&[[f32; LANES]; 3], &[[f32; LANES]; 3], [__m256; 3]) -> u64,
) -> (u64, u64) {
    let (mut in_now, mut in_start) = (0u64, 0u64);
    if let [block] = odd {
        in_now = inside(&block.now, &block.now, now) & ONE_BLOCK;
        in_start = inside(&block.start, &block.start, start) & ONE_BLOCK;
    }
    for pair in paired.chunks_exact(2).rev() {
        let (lo, hi) = (&pair[0], &pair[1]);
        in_now = in_now << (2 * LANES) | inside(&lo.now, &hi.now, now);
        in_start = in_start << (2 * LANES) | inside(&lo.start, &hi.start, start);
    }
    (in_now, in_start)
}

/// [`band_masks`](super::band_masks) with AVX, two blocks (eight members) per instruction. The
/// caller has checked [`available`].
#[inline(always)]
pub(super) fn band_masks_checked<const WITH_Z: bool>(blocks: &[Block], test: BandTest) -> (u64, u64) {
    debug_assert!(available(), "AVX should be detected before its masks are asked for");
    #[expect(
        unsafe_code,
        reason = "a function compiled for AVX, called after the CPU was checked for it: a moving \
                  observer's band pass, callgrind per update, uniform 10k with `--tiers`, see \
                  `PERFORMANCE.md`"
    )]
    // SAFETY: the caller checked `available()`, so this CPU has the AVX instructions the function
    // is compiled with.
    unsafe {
        band_masks8::<WITH_Z>(blocks, test.now, test.start, test.grown, test.bounds)
    }
}

/// [`band_masks_checked`]'s work, compiled for AVX: the squared distances of two blocks' members
/// at the two ends computed once, compared with `grown` and each of `bounds` (as scalars: with the
/// [`BandTest`] itself, 26% more instructions here, callgrind, uniform 10k with `--tiers`); the
/// last block alone by the SSE test when they are odd.
#[target_feature(enable = "avx")]
fn band_masks8<const WITH_Z: bool>(
    blocks: &[Block],
    now: [f32; 3],
    start: [f32; 3],
    grown: f32,
    bounds: &[f32],
) -> (u64, u64) {
    let (paired, odd) = blocks.split_at(blocks.len() & !1);
    let (mut flips, mut crossings) = (0u64, 0u64);
    if let [block] = odd {
        let test = BandTest {
            now,
            start,
            grown,
            bounds,
        };
        let (flipped, crossed) = lanes_crossing::<WITH_Z>(block, test);
        (flips, crossings) = (u64::from(flipped), u64::from(crossed));
    }
    let grown8 = _mm256_broadcast_ss(&grown);
    let (now, start) = (spread(&now), spread(&start));
    for pair in paired.chunks_exact(2).rev() {
        let (lo, hi) = (&pair[0], &pair[1]);
        let d_now = distance8::<WITH_Z>(&lo.now, &hi.now, now);
        let d_start = distance8::<WITH_Z>(&lo.start, &hi.start, start);
        let within = |d, r2| _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d, r2)) as u8;
        let differs = |r2| within(d_now, r2) ^ within(d_start, r2);
        let crossed = bounds
            .iter()
            .fold(0, |crossed, b| crossed | differs(_mm256_broadcast_ss(b)));
        flips = flips << (2 * LANES) | u64::from(differs(grown8));
        crossings = crossings << (2 * LANES) | u64::from(crossed);
    }
    (flips, crossings)
}

/// [`disc_masks_both_ways`](super::disc_masks_both_ways) with AVX, two blocks (eight members)
/// per instruction. The caller has checked [`available`].
#[inline(always)]
pub(super) fn both_ways_checked<const WITH_Z: bool>(blocks: &[Block], view: &SpreadView) -> [u64; 4] {
    debug_assert!(available(), "AVX should be detected before its masks are asked for");
    #[expect(
        unsafe_code,
        reason = "a function compiled for AVX, called after the CPU was checked for it: a stepping \
                  observer's flip scan judging clean observers, see `PERFORMANCE.md`"
    )]
    // SAFETY: the caller checked `available()`, so this CPU has the AVX instructions the function
    // is compiled with.
    unsafe {
        both_ways8::<WITH_Z>(blocks, view)
    }
}

/// [`both_ways_checked`]'s work, compiled for AVX: each pair of blocks' distances at the two ends
/// computed once and compared with the observer's `r2` and the members' own, the observer's
/// values read as spread once for its whole scan
/// ([`BothWaysView`](crate::grid::positions::BothWaysView)); the odd last block in both halves
/// of a vector (its four bits kept). Before, the odd block took the SSE test, its values spread
/// again over four lanes: callgrind, one thread, 5% moving 50k 29.77 → 29.72 M instructions an
/// update, 25% moving 20k 49.06 → 48.96 M.
#[target_feature(enable = "avx")]
#[inline]
fn both_ways8<const WITH_Z: bool>(blocks: &[Block], view: &SpreadView) -> [u64; 4] {
    let (paired, odd) = blocks.split_at(blocks.len() & !1);
    let r2_8 = load8(&view[6]);
    let bits = |lo: &Block, hi: &Block| {
        let own = _mm256_set_m128(load(&hi.r2), load(&lo.r2));
        let d_now = distance8::<WITH_Z>(&lo.now, &hi.now, disc_point8(view, 0));
        let d_start = distance8::<WITH_Z>(&lo.start, &hi.start, disc_point8(view, 3));
        let within = |d, r2| u64::from(_mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d, r2)) as u8);
        [
            within(d_now, r2_8),
            within(d_start, r2_8),
            within(d_now, own),
            within(d_start, own),
        ]
    };
    let mut masks = match odd {
        [block] => {
            // Written out rather than by `array::map`, which is not compiled for AVX.
            let [a, b, c, d] = bits(block, block);
            [a & ONE_BLOCK, b & ONE_BLOCK, c & ONE_BLOCK, d & ONE_BLOCK]
        }
        _ => [0; 4],
    };
    for pair in paired.chunks_exact(2).rev() {
        for (mask, bits) in masks.iter_mut().zip(bits(&pair[0], &pair[1])) {
            *mask = *mask << (2 * LANES) | bits;
        }
    }
    masks
}

/// The bits of an eight-lane mask that belong to its first block (`lo`'s, in [`distance8`]).
const ONE_BLOCK: u64 = (1 << LANES) - 1;

/// A point's coordinates, each spread over the eight lanes by a broadcast from memory (one
/// `vbroadcastss`). AVX has no broadcast from a register: `_mm256_set1_ps` of a loaded value
/// took a shuffle and an insert besides the load, for every value and observer of a run. Every
/// value the tests here spread is broadcast from memory so: callgrind, one thread, uniform 10k
/// 48.46 → 47.79 M instructions an update, crowded 2k 58.00 → 57.48 M, uniform 10k `--rect`
/// 60.28 → 59.48 M, `--tiers` 161.64 → 160.98 M; 5% moving and 25% moving level.
#[target_feature(enable = "avx")]
#[inline]
fn spread(p: &[f32; 3]) -> [__m256; 3] {
    [
        _mm256_broadcast_ss(&p[0]),
        _mm256_broadcast_ss(&p[1]),
        _mm256_broadcast_ss(&p[2]),
    ]
}

/// The two blocks' members (`lo`'s four, then `hi`'s), per axis.
#[target_feature(enable = "avx")]
#[inline]
fn members8(lo: &[[f32; LANES]; 3], hi: &[[f32; LANES]; 3]) -> [__m256; 3] {
    let axis = |a: usize| _mm256_set_m128(load(&hi[a]), load(&lo[a]));
    [axis(0), axis(1), axis(2)]
}

/// The squared distances of eight members (`m`, per axis: [`members8`]) from the point `p`
/// ([`spread`] over the lanes), in [`dist2`](crate::visibility::dist2)'s order.
#[target_feature(enable = "avx")]
#[inline]
fn distances8<const WITH_Z: bool>(m: [__m256; 3], p: [__m256; 3]) -> __m256 {
    let (dx, dy) = (_mm256_sub_ps(m[0], p[0]), _mm256_sub_ps(m[1], p[1]));
    let d = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
    if !WITH_Z {
        return d;
    }
    let dz = _mm256_sub_ps(m[2], p[2]);
    _mm256_add_ps(d, _mm256_mul_ps(dz, dz))
}

/// The squared distances of the two blocks' members (`lo`'s four, then `hi`'s) from the point
/// `p` ([`spread`] over the lanes).
#[target_feature(enable = "avx")]
#[inline]
fn distance8<const WITH_Z: bool>(lo: &[[f32; LANES]; 3], hi: &[[f32; LANES]; 3], p: [__m256; 3]) -> __m256 {
    distances8::<WITH_Z>(members8(lo, hi), p)
}

/// The point a disc's [`SpreadView`] holds in its rows `first..first + 3` (its position now
/// from row 0, at the start from row 3), per axis as [`spread`] gives it.
#[target_feature(enable = "avx")]
#[inline]
fn disc_point8(v: &SpreadView, first: usize) -> [__m256; 3] {
    [load8(&v[first]), load8(&v[first + 1]), load8(&v[first + 2])]
}

/// The eight `f32`s of `v` as a vector.
#[target_feature(enable = "avx")]
#[inline]
fn load8(v: &[f32; SPREAD]) -> __m256 {
    #[expect(unsafe_code, reason = "a vector load of an array given by reference")]
    // SAFETY: AVX is enabled for this function; the load reads exactly the eight `f32`s of `v`.
    unsafe {
        _mm256_loadu_ps(v.as_ptr())
    }
}

/// The four `f32`s of `v` as a vector.
#[inline(always)]
fn load(v: &[f32; LANES]) -> __m128 {
    #[expect(unsafe_code, reason = "a vector load of an array given by reference")]
    // SAFETY: SSE is part of the x86_64 baseline; the load reads exactly the four `f32`s of `v`.
    unsafe {
        _mm_loadu_ps(v.as_ptr())
    }
}
