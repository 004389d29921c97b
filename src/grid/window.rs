//! Cell keys and windows: which cells a point, a view or a cell's worth of views can reach.
//! Every window covers every point the `f32` distance test accepts (a rounding margin is added),
//! and the mapping from coordinates to keys is monotone, which is all the window logic relies on.

use core::ops::Range;

use crate::{config::IndexKind, rules::AoiVisibility, visibility::TargetState};

use super::{CellKey, Grid};

/// Cell ranges on each axis, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub lo: CellKey,
    pub hi: CellKey,
}

impl Window {
    #[inline]
    pub fn contains(&self, k: CellKey) -> bool {
        (0..4).all(|i| k[i] >= self.lo[i] && k[i] <= self.hi[i])
    }

    /// [`Self::contains`] for a cell of a plane's grid (no third axis) in the window's own
    /// instance, as every cell a view's scan looks at is: only the two plane axes can differ.
    /// Measured (callgrind per update, one thread): uniform 10k 68.00 → 67.25 M instructions,
    /// 50k 346.43 → 342.57 M, 5% moving 50k 34.52 → 34.37 M.
    #[inline]
    pub fn contains_on_plane(&self, k: CellKey) -> bool {
        debug_assert!(
            [k[2], self.lo[2], self.hi[2]] == [0; 3] && k[3] == self.lo[3] && k[3] == self.hi[3],
            "a plane's window and cell should have no third axis and share the instance"
        );
        (k[0] >= self.lo[0]) & (k[0] <= self.hi[0]) & (k[1] >= self.lo[1]) & (k[1] <= self.hi[1])
    }

    /// Every cell of one instance.
    pub fn whole(instance: u32) -> Window {
        let i = instance as i32;
        Window {
            lo: [i32::MIN, i32::MIN, i32::MIN, i],
            hi: [i32::MAX, i32::MAX, i32::MAX, i],
        }
    }

    /// Number of cells covered, saturating.
    pub(super) fn volume(&self) -> u64 {
        (0..3).fold(1u64, |acc, i| {
            let w = (i64::from(self.hi[i]) - i64::from(self.lo[i]) + 1).max(0) as u64;
            acc.saturating_mul(w)
        })
    }

    /// The smallest window that covers both.
    pub fn union(&self, other: &Window) -> Window {
        Window {
            lo: core::array::from_fn(|i| self.lo[i].min(other.lo[i])),
            hi: core::array::from_fn(|i| self.hi[i].max(other.hi[i])),
        }
    }

    /// Whether the window reaches no farther than the cells adjacent to cell `k` (in `k`'s
    /// instance): then the occupied cells it holds are `k` and some of `k`'s neighbour list.
    #[inline]
    pub fn within_one_cell_of(&self, k: CellKey) -> bool {
        self.lo[3] == k[3]
            && self.hi[3] == k[3]
            && (0..3)
                .all(|i| i64::from(self.lo[i]) >= i64::from(k[i]) - 1 && i64::from(self.hi[i]) <= i64::from(k[i]) + 1)
    }

    /// Whether the two windows share a cell.
    pub fn overlaps(&self, other: &Window) -> bool {
        (0..4).all(|i| self.lo[i] <= other.hi[i] && other.lo[i] <= self.hi[i])
    }
}

impl Grid {
    #[inline]
    pub(super) fn raw_key(&self, p: [f32; 3], instance: u32) -> CellKey {
        // `as` saturates, and the map from coordinate to key is monotone, which is all the window
        // logic relies on. Written out axis by axis: `array::from_fn` with a branch per index
        // compiled to a loop (callgrind, `sparse_huge` 50k: a quarter fewer instructions here).
        let axis = |i: usize| floor_to_i32(p[i] * self.inv);
        let z = if self.dims == 3 { axis(2) } else { 0 };
        [axis(0), axis(1), z, instance as i32]
    }

    /// The cell of a projected point in an instance, clamped into the bounds if there are any.
    #[inline]
    pub fn key(&self, p: [f32; 3], instance: u32) -> CellKey {
        if self.kind == IndexKind::SortedAxes {
            return [0, 0, 0, instance as i32];
        }
        let k = self.raw_key(p, instance);
        match &self.clamp {
            None => k,
            Some(c) => [
                k[0].clamp(c.lo[0], c.hi[0]),
                k[1].clamp(c.lo[1], c.hi[1]),
                k[2].clamp(c.lo[2], c.hi[2]),
                k[3],
            ],
        }
    }

    /// Every cell that can hold a point within `r` of `p`. The margin covers the rounding of the
    /// `f32` distance test, so a target the test accepts is always inside the window. When `r²`
    /// overflows to `+∞` the test accepts every finite point (even one whose squared distance
    /// overflows too), so the window is the whole instance.
    #[inline]
    pub fn window(&self, p: [f32; 3], r: f32, instance: u32) -> Window {
        if r * r == f32::INFINITY {
            return Window::whole(instance);
        }
        self.window_axes(p, [r; 3], instance)
    }

    /// Every cell that can hold a point within `reach[i]` of `p` along each axis `i` (the window
    /// of a rectangular view, whose test is per axis), with the same rounding margin as
    /// [`Self::window`].
    #[inline]
    pub fn window_axes(&self, p: [f32; 3], reach: [f32; 3], instance: u32) -> Window {
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for i in 0..self.dims {
            let (r, m) = (reach[i], margin(p[i], reach[i]));
            lo[i] = p[i] - r - m;
            hi[i] = p[i] + r + m;
        }
        Window {
            lo: self.key(lo, instance),
            hi: self.key(hi, instance),
        }
    }

    /// Whether [`Self::window_axes`]`(p, reach, ..)` reaches no farther than the cells adjacent
    /// to `key`, the cell of `p` ([`Window::within_one_cell_of`]): the same answer, without
    /// turning the window's corners into keys. Each corner coordinate `y` is computed as there,
    /// then compared with the cell's neighbours' bounds as floats, since `floor(y) >= n` exactly
    /// when `y >= n` for a whole `n` (below 2^23, `n` is exact as an `f32`; farther out the keys
    /// are computed, though the margin alone keeps such a window wider than three cells). Every
    /// changed observer alone in a sparse world asks this each update (`sparse_huge` 50k:
    /// measured in `PERFORMANCE.md`, stop 31).
    #[inline]
    pub fn window_within_one_cell(&self, p: [f32; 3], reach: [f32; 3], key: CellKey) -> bool {
        let exact = |k: i32| k.unsigned_abs() < 1 << 23;
        if self.kind == IndexKind::SortedAxes || self.clamp.is_some() || !key[..3].iter().all(|&k| exact(k)) {
            return self.window_axes(p, reach, key[3] as u32).within_one_cell_of(key);
        }
        let within = (0..self.dims).all(|i| {
            let (r, m) = (reach[i], margin(p[i], reach[i]));
            let (lo, hi) = ((p[i] - r - m) * self.inv, (p[i] + r + m) * self.inv);
            lo >= (key[i] - 1) as f32 && hi < (key[i] + 2) as f32
        });
        debug_assert_eq!(
            within,
            self.window_axes(p, reach, key[3] as u32).within_one_cell_of(key),
            "the float comparison should answer as the window's keys do"
        );
        within
    }

    /// Whether the window of `reach` around any point of a cell [near the
    /// origin](Self::near_origin) stays within the cells adjacent to that point's:
    /// [`Self::window_within_one_cell`] holds for it (checked in debug builds where this is
    /// used), as `reach` with the margin of the farthest such point is under 63/64 of the side,
    /// which leaves room for the keys' rounding there. Grid index without bounds only. `O(1)`.
    pub fn windows_fit_near_origin(&self, reach: f32) -> bool {
        let farthest = NEAR_ORIGIN as f32 * self.side;
        self.kind == IndexKind::Grid
            && self.clamp.is_none()
            && (reach + margin(farthest, reach)) * self.inv <= 63.0 / 64.0
    }

    /// Whether cell `key` is within [`NEAR_ORIGIN`] cells of the origin on every axis in use.
    #[inline]
    pub fn near_origin(&self, key: CellKey) -> bool {
        key[..self.dims].iter().all(|k| k.unsigned_abs() < NEAR_ORIGIN)
    }

    /// Whether point `p` lies within `NEAR_ORIGIN - 1` cells of the origin on every axis in use,
    /// so that its cell is [near the origin](Self::near_origin) without its key being computed
    /// (for a grid without bounds, whose keys are the coordinates in cells rounded down).
    #[inline]
    pub fn point_near_origin(&self, p: [f32; 3]) -> bool {
        let limit = (NEAR_ORIGIN - 1) as f32;
        p[..self.dims].iter().all(|&x| (x * self.inv).abs() < limit)
    }

    /// The window of every point inside cell `key`, widened by `r` (used to scan once for all
    /// observers of one cell): the union of [`Self::window`] around the cell's low and high
    /// corners, computed from those two corners' keys only (the window logic is monotone).
    pub fn cell_window(&self, key: CellKey, r: f32) -> Window {
        let instance = key[3] as u32;
        if r * r == f32::INFINITY {
            return Window::whole(instance);
        }
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for i in 0..self.dims {
            let (a, b) = (key[i] as f32 * self.side, (key[i] as f32 + 1.0) * self.side);
            lo[i] = a - r - margin(a, r);
            hi[i] = b + r + margin(b, r);
        }
        Window {
            lo: self.key(lo, instance),
            hi: self.key(hi, instance),
        }
    }

    /// Where the observers that may see `t` are (with views of at most `reach`): around it in its
    /// instance, the whole instance if it is `Always` visible, nowhere if it is hidden or
    /// unindexed.
    pub fn observer_region(&self, t: &TargetState, reach: f32) -> Option<Window> {
        if !t.in_grid {
            return None;
        }
        match t.rules.mode {
            AoiVisibility::Hidden => None,
            AoiVisibility::Always => Some(Window::whole(t.rules.instance)),
            AoiVisibility::Normal => Some(self.window(t.p, reach, t.rules.instance)),
        }
    }

    /// In cell `c`, the members that may be observers of `t` with views of at most `reach`: the
    /// cell's part of [`Self::observer_region`] (for the sorted-axes index, the first-axis
    /// [slab](Self::slab) around `t`, searched from member `near`; for the grid, the whole cell),
    /// or `None` when the cell is not in that region's instance or the region is empty.
    pub fn observer_slab(&self, c: u32, near: usize, t: &TargetState, reach: f32) -> Option<Range<usize>> {
        let cell = &self.cells[c as usize];
        if !t.in_grid || t.rules.instance != cell.key[3] as u32 {
            return None;
        }
        match t.rules.mode {
            AoiVisibility::Hidden => None,
            AoiVisibility::Always => Some(0..cell.members.len()),
            AoiVisibility::Normal if reach * reach == f32::INFINITY => Some(0..cell.members.len()),
            AoiVisibility::Normal => Some(self.slab(c, near, t.p[0], reach)),
        }
    }
}

/// How many cells from the origin [`Grid::windows_fit_near_origin`] answers for: there a cell's
/// key and a point's coordinate in cells are known to far better than a 64th of a cell (`f32`
/// keeps 24 bits).
const NEAR_ORIGIN: u32 = 1 << 16;

/// How far beyond `r` around coordinate `c` a window must reach so that every point the distance
/// test accepts is inside: the test can accept a point up to ~3 ulps of `r` beyond `r` on one
/// axis, and the two subtractions that build a window round by up to an ulp of `|c| + r` each;
/// 1e-6 of `|c| + r` is more than three times that.
#[inline(always)]
pub(super) fn margin(c: f32, r: f32) -> f32 {
    (c.abs() + r) * 1.0e-6 + f32::MIN_POSITIVE
}

/// `x.floor() as i32` (saturating, NaN to 0), without the call to `floorf` that `f32::floor`
/// compiles to on CPUs without SSE4.1: truncate, then step down if that rounded up.
#[inline(always)]
fn floor_to_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) > x { t.saturating_sub(1) } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_draws::Draws;
    use crate::{config::AoiBounds, visibility::dist2};

    #[test]
    fn a_cell_window_is_the_union_of_the_windows_around_its_corners() {
        for (side, dims) in [(10.0, 2), (0.37, 3), (1.0e4, 2)] {
            let grid = Grid::new(side, dims, None, IndexKind::Grid);
            for (key, r) in [
                ([0, 0, 0, 0], 5.0),
                ([-3, 7, 0, 2], 0.0),
                ([123_456, -98_765, 0, 0], 33.3),
                ([5, -5, if dims == 3 { 9 } else { 0 }, 1], 1.0e6),
                ([1, 1, 0, 0], 1.0e30),
            ] {
                let instance = key[3] as u32;
                let corner = |d: f32| core::array::from_fn(|i| if i < dims { (key[i] as f32 + d) * side } else { 0.0 });
                let union = grid
                    .window(corner(0.0), r, instance)
                    .union(&grid.window(corner(1.0), r, instance));
                assert_eq!(
                    grid.cell_window(key, r),
                    union,
                    "the window of cell {key:?} widened by {r} should be the union of its corners' windows"
                );
            }
        }
    }

    #[test]
    fn contains_on_plane_agrees_with_contains_for_a_plane_grid() {
        let grid = Grid::new(10.0, 2, None, IndexKind::Grid);
        let mut draws = Draws::new(11);
        let mut coordinate = || draws.below(200) as f32 - 100.0;
        for _ in 0..2000 {
            let (p, r) = ([coordinate(), coordinate(), 0.0], coordinate().abs() / 4.0);
            let w = grid.window_axes(p, [r; 3], 3);
            let k = grid.key([coordinate(), coordinate(), 0.0], 3);
            assert_eq!(
                w.contains_on_plane(k),
                w.contains(k),
                "the plane's test should answer as the four-axis one for cell {k:?} and window {w:?}"
            );
        }
    }

    #[test]
    fn window_covers_every_point_the_distance_test_accepts() {
        let grid = Grid::new(10.0, 2, None, IndexKind::Grid);
        let p = [0.1, -19.95, 0.0];
        let r = 10.0;
        let w = grid.window(p, r, 0);
        for i in -400..=400 {
            for j in -400..=400 {
                let t = [p[0] + i as f32 * 0.05, p[1] + j as f32 * 0.05, 0.0];
                if dist2(p, t) <= r * r {
                    assert!(
                        w.contains(grid.key(t, 0)),
                        "{t:?} is in range so its cell should be in {w:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn window_covers_accepted_points_far_from_the_origin() {
        // At 1e6 the f32 spacing is 0.0625: walk points around the view boundary ulp by ulp.
        let grid = Grid::new(106.25, 2, None, IndexKind::Grid);
        for &(px, py) in &[(1.0e6_f32, -3.0e5_f32), (-7.5e5, 999_999.9), (0.3, 2.0e6)] {
            let p = [px, py, 0.0];
            let r = 100.0;
            let w = grid.window(p, r, 0);
            for dir in [-1.0f32, 1.0] {
                let mut x = px + dir * (r - 1.0);
                for _ in 0..200 {
                    let t = [x, py, 0.0];
                    if dist2(p, t) <= r * r {
                        assert!(
                            w.contains(grid.key(t, 0)),
                            "{t:?} is in range of {p:?} so its cell should be in {w:?}"
                        );
                    }
                    x = if dir > 0.0 { x.next_up() } else { x.next_down() };
                }
            }
        }
    }

    #[test]
    fn a_window_is_known_within_one_cell_as_its_keys_would_tell() {
        // Sides, points and reaches drawn so that corners often land on cell borders (whole
        // multiples of the side, reaches of whole sides and just under), in 2D and 3D, far from
        // the origin and near the 2^23 limit of the float comparison, with bounds (which clamp
        // keys) and without.
        let mut draws = Draws::new(5);
        let mut next = |n: u64| draws.below(n);
        let (mut within, mut checked) = (0, 0);
        for case in 0..20_000 {
            let side = [1.0, 0.37, 10.0, 106.25, 1.0e4][next(5) as usize];
            let dims = 2 + next(2) as usize;
            let bounds = (next(4) == 0).then(|| AoiBounds {
                min: [-50.0 * side; 3],
                max: [50.0 * side; 3],
            });
            let grid = Grid::new(side, dims, bounds, IndexKind::Grid);
            let far = [0.0, 1.0e3, 8.0e6, -8.4e6][next(4) as usize];
            let p: [f32; 3] = core::array::from_fn(|i| {
                if i >= dims {
                    return 0.0;
                }
                let whole = (far + next(40) as f32 - 20.0) * side;
                [
                    whole,
                    whole + side * next(100) as f32 / 100.0,
                    whole - f32::EPSILON * whole.abs(),
                ][next(3) as usize]
            });
            let reach: [f32; 3] = core::array::from_fn(|_| {
                let r = side * next(5) as f32 / 4.0;
                [r, r * (1.0 - f32::EPSILON), r + side * 1.0e-3, f32::INFINITY][next(4) as usize]
            });
            let key = grid.key(p, 3);
            let want = grid.window_axes(p, reach, 3).within_one_cell_of(key);
            // The function asserts the same in debug builds; ask it here in release ones too.
            assert_eq!(
                grid.window_within_one_cell(p, reach, key),
                want,
                "case {case}: side {side}, {dims}D, p {p:?}, reach {reach:?}: should answer as the keys do"
            );
            within += usize::from(want);
            checked += 1;
        }
        assert!(
            within > checked / 10 && within < checked * 9 / 10,
            "the cases should often be within one cell and often not ({within} of {checked})"
        );
        // Reaches stepped an ulp at a time across the one that puts a corner exactly on the
        // border of the neighbouring cell (the equality case of each comparison).
        let mut on_border = 0;
        for side in [1.0f32, 0.37, 106.25] {
            let grid = Grid::new(side, 2, None, IndexKind::Grid);
            for p in [[0.5 * side, 0.25 * side, 0.0], [1.0e3 * side + 0.3, -7.0 * side, 0.0]] {
                let key = grid.key(p, 0);
                for corner in [p[0] - key[0] as f32 * side, (key[0] + 1) as f32 * side - p[0]] {
                    let mut r = corner + side - margin(p[0], corner + side);
                    for _ in 0..64 {
                        r = r.next_down();
                    }
                    for _ in 0..128 {
                        let reach = [r, 0.0, 0.0];
                        let (lo, hi) = (
                            (p[0] - r - margin(p[0], r)) * grid.inv,
                            (p[0] + r + margin(p[0], r)) * grid.inv,
                        );
                        on_border += usize::from(lo == (key[0] - 1) as f32 || hi == (key[0] + 2) as f32);
                        assert_eq!(
                            grid.window_within_one_cell(p, reach, key),
                            grid.window_axes(p, reach, 0).within_one_cell_of(key),
                            "side {side}, p {p:?}, reach {r}: should answer as the keys do on the border"
                        );
                        r = r.next_up();
                    }
                }
            }
        }
        assert!(on_border > 0, "some reaches should put a corner exactly on a border");
    }

    #[test]
    fn floor_to_i32_matches_floor_then_cast() {
        let mut values = vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            -1.0,
            1.0,
            -1.5,
            2.0e9,
            -2.0e9,
            3.0e9,
            -3.0e9,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            2_147_483_520.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
        ];
        let mut x = 1.0e-3f32;
        while x < 1.0e10 {
            values.extend([x, -x, x.next_up(), -x.next_up(), x.next_down(), -x.next_down()]);
            x *= 1.37;
        }
        for v in values {
            assert_eq!(
                floor_to_i32(v),
                v.floor() as i32,
                "floor_to_i32({v:e}) should equal floor-then-cast"
            );
        }
    }

    #[test]
    fn bounds_clamp_keys_into_border_cells() {
        let grid = Grid::new(
            10.0,
            2,
            Some(AoiBounds::new_2d((0.0, 0.0), (100.0, 100.0))),
            IndexKind::Grid,
        );
        assert_eq!(
            grid.key([-50.0, 150.0, 0.0], 7),
            [0, 10, 0, 7],
            "outside points should go to border cells"
        );
    }
}
