//! A cell's member positions again, one array per axis, so the distance test of a scan runs over
//! contiguous `f32`s the compiler turns into vector instructions (the members themselves are 56
//! bytes apart, which left it shuffling single lanes: measured, 23 instructions per member before,
//! see [`Positions::within`]).

use core::ops::Range;

use super::Member;

/// The positions, start-of-tick positions and squared view radii of a cell's members, index for
/// index (`x[i]` is `members[i].p[0]`, `start_x[i]` is `members[i].start_p[0]`, `r2[i]` is
/// `members[i].r2`).
#[derive(Debug, Default)]
pub(crate) struct Positions {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    start_x: Vec<f32>,
    start_y: Vec<f32>,
    start_z: Vec<f32>,
    r2: Vec<f32>,
}

/// Members tested per mask: one bit each.
const MASK_BITS: usize = 64;

impl Positions {
    /// Appends a member's position and radius.
    #[inline]
    pub fn push(&mut self, m: &Member) {
        self.x.push(m.p[0]);
        self.y.push(m.p[1]);
        self.z.push(m.p[2]);
        self.start_x.push(m.start_p[0]);
        self.start_y.push(m.start_p[1]);
        self.start_z.push(m.start_p[2]);
        self.r2.push(m.r2);
    }

    /// Removes the position at `i`, moving the last one into its place (as `Vec::swap_remove`).
    #[inline]
    pub fn swap_remove(&mut self, i: usize) {
        self.x.swap_remove(i);
        self.y.swap_remove(i);
        self.z.swap_remove(i);
        self.start_x.swap_remove(i);
        self.start_y.swap_remove(i);
        self.start_z.swap_remove(i);
        self.r2.swap_remove(i);
    }

    /// Sets the position and radius at `i` to member `m`'s.
    #[inline]
    pub fn set(&mut self, i: usize, m: &Member) {
        (self.x[i], self.y[i], self.z[i], self.r2[i]) = (m.p[0], m.p[1], m.p[2], m.r2);
        (self.start_x[i], self.start_y[i], self.start_z[i]) = (m.start_p[0], m.start_p[1], m.start_p[2]);
    }

    /// Replaces everything with `members`' positions and radii, in order (after a sorted cell is
    /// reordered).
    pub fn rebuild(&mut self, members: &[Member]) {
        self.x.clear();
        self.y.clear();
        self.z.clear();
        self.start_x.clear();
        self.start_y.clear();
        self.start_z.clear();
        self.r2.clear();
        for m in members {
            self.push(m);
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let axes = [
            &self.x,
            &self.y,
            &self.z,
            &self.start_x,
            &self.start_y,
            &self.start_z,
            &self.r2,
        ];
        axes.iter().map(|v| v.capacity() * size_of::<f32>()).sum()
    }

    /// Whether index `i` holds member `m`'s position and radius (bit for bit).
    #[cfg(test)]
    pub fn holds(&self, i: usize, m: &Member) -> bool {
        let held = [
            self.x[i],
            self.y[i],
            self.z[i],
            self.start_x[i],
            self.start_y[i],
            self.start_z[i],
            self.r2[i],
        ];
        let [x, y, z] = m.p;
        let [sx, sy, sz] = m.start_p;
        held.map(f32::to_bits) == [x, y, z, sx, sy, sz, m.r2].map(f32::to_bits)
            && [&self.x, &self.y, &self.z, &self.start_x, &self.start_y, &self.start_z]
                .iter()
                .all(|v| v.len() == self.r2.len())
    }

    /// Calls `hits(start, mask)` for each run of up to [`MASK_BITS`] positions of `range`
    /// beginning at index `start`: bit `j` of `mask` is set when the position at `start + j` is
    /// within squared distance `r2` of `p` (`dist2 <= r2`, the same arithmetic as
    /// [`dist2`](super::dist2), so the answer is exactly the scalar test's). Branch-free over the
    /// positions, eight at a time (two or one vector instructions per step, whatever the target).
    #[inline(always)]
    pub fn within(&self, range: Range<usize>, p: [f32; 3], r2: f32, mut hits: impl FnMut(usize, u64)) {
        let (x, y, z) = (&self.x[range.clone()], &self.y[range.clone()], &self.z[range.clone()]);
        for start in (0..x.len()).step_by(MASK_BITS) {
            let end = (start + MASK_BITS).min(x.len());
            let mask = disc_mask::<false>(&x[start..end], &y[start..end], &z[start..end], p, r2, &[]);
            if mask != 0 {
                hits(range.start + start, mask);
            }
        }
    }

    /// Calls `hits(start, flips, inside)` for each run of up to [`MASK_BITS`] members of `range`
    /// beginning at index `start` with a flip: bit `j` of `flips` set when member `start + j` is
    /// within squared distance `r2` of `now` but its start-of-tick position is not within `r2`
    /// of `start_p`, or the other way round (an observer's flip scan, both ends moving), and of
    /// `inside` when it is within `r2` of `now`.
    #[inline(always)]
    pub fn flips(
        &self,
        range: Range<usize>,
        now: [f32; 3],
        start_p: [f32; 3],
        r2: f32,
        mut hits: impl FnMut(usize, u64, u64),
    ) {
        let r = range.clone();
        let (x, y, z) = (&self.x[r.clone()], &self.y[r.clone()], &self.z[r.clone()]);
        let (sx, sy, sz) = (&self.start_x[r.clone()], &self.start_y[r.clone()], &self.start_z[r]);
        for start in (0..x.len()).step_by(MASK_BITS) {
            let run = start..(start + MASK_BITS).min(x.len());
            let in_now = disc_mask::<false>(&x[run.clone()], &y[run.clone()], &z[run.clone()], now, r2, &[]);
            let in_start = disc_mask::<false>(&sx[run.clone()], &sy[run.clone()], &sz[run], start_p, r2, &[]);
            if in_now != in_start {
                hits(range.start + start, in_now ^ in_start, in_now);
            }
        }
    }

    /// Calls `hits(start, flips, sees)` for each run of up to [`MASK_BITS`] members of `range`
    /// beginning at index `start` of which at least one sees a target at `now` or at `before`
    /// with its own radius (`dist2(member, target) <= r2`, as [`within`](Self::within)): bit
    /// `j` of `sees` is set when member `start + j` sees it at either point, and of `flips` when
    /// at exactly one. Members that are not observers have a negative `r2` and see nothing.
    #[inline(always)]
    pub fn seeing(&self, range: Range<usize>, now: [f32; 3], before: [f32; 3], mut hits: impl FnMut(usize, u64, u64)) {
        let r = range.clone();
        let (x, y, z, r2) = (&self.x[r.clone()], &self.y[r.clone()], &self.z[r.clone()], &self.r2[r]);
        for start in (0..x.len()).step_by(MASK_BITS) {
            let end = (start + MASK_BITS).min(x.len());
            let (x, y, z) = (&x[start..end], &y[start..end], &z[start..end]);
            let r2 = &r2[start..end];
            let in_now = disc_mask::<true>(x, y, z, now, 0.0, r2);
            let in_before = disc_mask::<true>(x, y, z, before, 0.0, r2);
            if in_now | in_before != 0 {
                hits(range.start + start, in_now ^ in_before, in_now | in_before);
            }
        }
    }
}

/// Bit `j` of the (at most 64) points set when point `j` is within squared distance `r2` of `p`
/// (`EACH`: within its own, `each[j]`).
#[inline(always)]
fn disc_mask<const EACH: bool>(x: &[f32], y: &[f32], z: &[f32], p: [f32; 3], r2: f32, each: &[f32]) -> u64 {
    let n = x.len();
    let whole = n - n % LANES;
    let mut mask = 0u64;
    let (x4, y4, z4) = (x.chunks_exact(LANES), y.chunks_exact(LANES), z.chunks_exact(LANES));
    let mut each4 = each.chunks_exact(LANES);
    for (k, ((x4, y4), z4)) in x4.zip(y4).zip(z4).enumerate() {
        let r2 = if EACH {
            *four(each4.next().expect("each point should have its radius"))
        } else {
            [r2; LANES]
        };
        mask |= u64::from(lanes_within(four(x4), four(y4), four(z4), p, &r2)) << (k * LANES);
    }
    for j in whole..n {
        let r2 = if EACH { each[j] } else { r2 };
        mask |= u64::from(dist2(x[j], y[j], z[j], p) <= r2) << j;
    }
    mask
}

/// Points tested by one vector instruction.
const LANES: usize = 4;

/// A chunk of [`LANES`] points as an array.
#[inline(always)]
fn four(v: &[f32]) -> &[f32; LANES] {
    v.try_into().expect("a chunk should hold LANES points")
}

/// Bit `j` set when point `j` of the four is within `r2` of `p`, in SSE: the same operations in
/// the same order as [`dist2`], so the same answers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes_within(x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES], p: [f32; 3], r2: &[f32; LANES]) -> u32 {
    use core::arch::x86_64::{
        _mm_add_ps, _mm_cmple_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_mul_ps, _mm_set1_ps, _mm_sub_ps,
    };
    #[expect(
        unsafe_code,
        reason = "the compiler's own vectorisation of this loop shuffled lanes (12-13 instructions \
                  a member); measured with callgrind, uniform 10k: see the README's performance notes"
    )]
    // SAFETY: SSE is part of the x86_64 baseline, so every CPU this code runs on has these
    // instructions; the loads read exactly the four `f32`s of each array, which are borrowed.
    unsafe {
        let axis = |v: &[f32; LANES], c: f32| _mm_sub_ps(_mm_loadu_ps(v.as_ptr()), _mm_set1_ps(c));
        let (dx, dy, dz) = (axis(x, p[0]), axis(y, p[1]), axis(z, p[2]));
        let d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
        _mm_movemask_ps(_mm_cmple_ps(d, _mm_loadu_ps(r2.as_ptr()))) as u32
    }
}

/// Bit `j` set when point `j` of the four is within `r2` of `p` (other architectures).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn lanes_within(x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES], p: [f32; 3], r2: &[f32; LANES]) -> u32 {
    (0..LANES).fold(0, |bits, j| bits | u32::from(dist2(x[j], y[j], z[j], p) <= r2[j]) << j)
}

/// [`dist2`](super::dist2) with the point given by coordinates.
#[inline(always)]
fn dist2(x: f32, y: f32, z: f32, p: [f32; 3]) -> f32 {
    super::dist2([x, y, z], p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::dist2 as scalar_dist2;

    /// Points on a lattice around `p` (so many are at exactly the radius) and a few off it.
    fn points(n: usize) -> Vec<Member> {
        let mut state = 11u64;
        (0..n)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let (a, b) = ((state >> 40) % 11, (state >> 20) % 11);
                let mut m = crate::grid::tests::member(i as u32, ((state >> 8) % 40) as f32 - 5.0);
                m.p = [a as f32 - 5.0, b as f32 - 5.0, if i % 7 == 0 { 0.5 } else { 0.0 }];
                m
            })
            .collect()
    }

    #[test]
    fn within_answers_as_the_scalar_distance_test_including_at_the_radius() {
        let members = points(150);
        let mut pos = Positions::default();
        pos.rebuild(&members);
        let p = [0.0, 0.0, 0.0];
        for r2 in [-1.0, 0.0, 9.0, 25.0, 25.5, 1.0e9] {
            for range in [0..150, 3..150, 0..64, 64..129, 5..6, 7..7] {
                let mut got = Vec::new();
                pos.within(range.clone(), p, r2, |start, mut mask| {
                    while mask != 0 {
                        got.push(start + mask.trailing_zeros() as usize);
                        mask &= mask - 1;
                    }
                });
                let want: Vec<usize> = range.filter(|&i| scalar_dist2(members[i].p, p) <= r2).collect();
                assert_eq!(
                    got, want,
                    "r2 {r2}: the vector test should accept exactly what `dist2 <= r2` accepts"
                );
            }
        }
    }

    #[test]
    fn seeing_reports_each_members_own_radius_at_both_points() {
        let members = points(150);
        let mut pos = Positions::default();
        pos.rebuild(&members);
        let (now, before) = ([0.0, 0.0, 0.0], [1.0, -2.0, 0.0]);
        for range in [0..150, 1..100, 64..65] {
            let (mut flips, mut sees) = (Vec::new(), Vec::new());
            pos.seeing(range.clone(), now, before, |start, f, s| {
                for j in 0..64 {
                    if (f >> j) & 1 != 0 {
                        flips.push(start + j);
                    }
                    if (s >> j) & 1 != 0 {
                        sees.push(start + j);
                    }
                }
            });
            let at = |i: usize, q| scalar_dist2(members[i].p, q) <= members[i].r2;
            let want_sees: Vec<usize> = range.clone().filter(|&i| at(i, now) || at(i, before)).collect();
            let want_flips: Vec<usize> = range.filter(|&i| at(i, now) != at(i, before)).collect();
            assert_eq!(
                sees, want_sees,
                "members seeing the target at either point should be reported"
            );
            assert_eq!(
                flips, want_flips,
                "members seeing it at exactly one point should be flips"
            );
        }
    }
}
