//! The links between occupied cells and their occupied neighbours: kept as cells are created,
//! carried and freed, they answer a window that reaches no farther than the adjacent cells
//! without hashing, and tell an observer alone in its cell from one with company nearby.

use smallvec::SmallVec;

use super::{CellKey, Grid, Window};

impl Grid {
    /// Calls `f` with the key of each cell adjacent to `key`, in `z`, `y`, `x` order, skipping
    /// those past the `i32` range and, given the key a lone cell is carried `from`, those
    /// adjacent to `from` (free, as `from` had no occupied neighbour) and `from` itself. Loops
    /// written out: the iterator chain they replace cost about 600 instructions more a carried
    /// cell, over its two walks, the hints' and the links' (callgrind, `sparse_huge` 50k).
    #[inline]
    pub(super) fn for_each_neighbour(&self, key: CellKey, from: Option<CellKey>, mut f: impl FnMut(CellKey)) {
        let dz = i32::from(self.dims == 3);
        for z in -dz..=dz {
            for y in -1..=1 {
                for x in -1..=1 {
                    if [x, y, z] == [0, 0, 0] {
                        continue;
                    }
                    let (Some(kx), Some(ky), Some(kz)) =
                        (key[0].checked_add(x), key[1].checked_add(y), key[2].checked_add(z))
                    else {
                        continue;
                    };
                    let k = [kx, ky, kz, key[3]];
                    if !from.is_some_and(|from| next_door(from, k)) {
                        f(k);
                    }
                }
            }
        }
    }

    /// Links cell `c` (at `key`) and its occupied neighbours both ways, looking up every
    /// neighbour but those known to be free (given the key `c` was carried `from`:
    /// [`Self::for_each_neighbour`]).
    pub(super) fn link_neighbours(&mut self, c: u32, key: CellKey, from: Option<CellKey>) {
        let mut found: SmallVec<[u32; 8]> = SmallVec::new();
        self.for_each_neighbour(key, from, |k| found.extend(self.map.get(&self.cells, k)));
        for &n in &found {
            self.cells[n as usize].near.push(c);
            self.cells[c as usize].near.push(n);
            self.note_lone(n);
        }
        if !found.is_empty() {
            self.note_lone(c);
        }
    }

    /// Unlinks the freed cell `c` and its neighbours, both ways.
    pub(super) fn unlink_neighbours(&mut self, c: u32) {
        let near = core::mem::take(&mut self.cells[c as usize].near);
        for &n in &near {
            let theirs = &mut self.cells[n as usize].near;
            let at = theirs
                .iter()
                .position(|&x| x == c)
                .expect("neighbour links should be mutual");
            theirs.swap_remove(at);
            self.note_lone(n);
        }
        drop(near);
    }

    /// Like [`Self::cells_in`], for a window around the occupied cell `c`: when the window
    /// reaches no farther than the adjacent cells, it is answered from `c`'s neighbour list
    /// without hashing. Returns whether it was (so every cell listed is `c` or adjacent to it).
    pub fn cells_around(&self, c: u32, w: &Window, out: &mut Vec<u32>) -> bool {
        let cell = &self.cells[c as usize];
        let k = cell.key;
        if !w.within_one_cell_of(k) {
            self.cells_in(w, out);
            return false;
        }
        if w.contains(k) {
            out.push(c);
        }
        for &n in &cell.near {
            if w.contains(self.cells[n as usize].key) {
                out.push(n);
            }
        }
        true
    }

    /// Whether the window of `reach` around `p`, a point of occupied cell `c`
    /// ([`Self::window_axes`]), holds no member but `c`'s only one: `c` has one member and no
    /// occupied neighbour, and the window reaches no farther than the cells adjacent to `c`
    /// ([`Self::window_within_one_cell`]; not computed when `fits` says that windows of `reach`
    /// [fit near the origin](Self::windows_fit_near_origin) and `p` is
    /// [there](Self::point_near_origin): callgrind, `sparse_huge` 50k, 74.72 → 72.74 M
    /// instructions an update). `O(1)`: reads `c`'s [lone](Self::is_lone) bit, and `c`'s record
    /// only when the shortcut does not apply.
    #[inline]
    pub fn holds_one_member_only(&self, c: u32, p: [f32; 3], reach: [f32; 3], fits: bool) -> bool {
        if !self.is_lone(c) {
            return false;
        }
        let key = || self.cells[c as usize].key;
        let within = || self.window_within_one_cell(p, reach, key());
        if fits && self.point_near_origin(p) {
            debug_assert!(
                self.near_origin(key()),
                "a point near the origin should have its cell there"
            );
            debug_assert!(
                within(),
                "a window that fits near the origin should fit around every point there"
            );
            return true;
        }
        within()
    }
}

/// Whether cells `a` and `b` are the same or adjacent (in one instance, at most one apart on
/// every axis).
#[inline]
pub(super) fn next_door(a: CellKey, b: CellKey) -> bool {
    a[3] == b[3] && (0..3).all(|i| (i64::from(a[i]) - i64::from(b[i])).abs() <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::IndexKind;
    use crate::grid::tests::member;

    #[test]
    fn neighbour_lists_follow_cells_and_answer_adjacent_windows() {
        let mut grid = Grid::new(10.0, 2, None, IndexKind::Grid);
        let m = |slot| member(slot, -1.0);
        let (a, ia) = grid.insert([0, 0, 0, 0], m(0));
        let (b, _) = grid.insert([1, 1, 0, 0], m(1));
        let (c, _) = grid.insert([2, 0, 0, 0], m(2));
        assert_eq!(
            grid.cells[a as usize].near,
            vec![b],
            "diagonal neighbours should be linked"
        );
        assert_eq!(grid.cells[b as usize].near, vec![a, c], "b touches both");
        let mut out = Vec::new();
        assert!(
            grid.cells_around(b, &grid.window([15.0, 15.0, 0.0], 9.0, 0), &mut out),
            "an adjacent window should be answered from the neighbour list"
        );
        assert_eq!(
            out,
            vec![b, a, c],
            "an adjacent window should list b and its occupied neighbours"
        );
        grid.remove(a, ia);
        assert_eq!(grid.cells[b as usize].near, vec![c], "a freed cell should be unlinked");
        out.clear();
        assert!(
            !grid.cells_around(b, &grid.window([15.0, 15.0, 0.0], 30.0, 0), &mut out),
            "a wider window should not be answered from the neighbour list"
        );
        assert_eq!(
            out,
            vec![b, c],
            "a wider window should fall back to walking the occupied cells"
        );
    }

    /// The shortcut of [`Grid::holds_one_member_only`] (`fits`, from
    /// [`Grid::windows_fit_near_origin`]) gives the full test's answer for a lone member near the
    /// origin, at the edge of where it applies, and far beyond it (where it does not apply: there
    /// the margin for rounding is wider than a cell).
    #[test]
    fn a_lone_member_holds_its_window_alone_with_the_shortcut_as_without() {
        let side = 30.0;
        let mut grid = Grid::new(side, 2, None, IndexKind::Grid);
        assert!(
            grid.windows_fit_near_origin(20.0),
            "a reach of 20 should fit cells of 30"
        );
        // 29 is under 63/64 of the side, but not with the margin of a point 2^16 cells out, whose
        // window does not fit from near the edge of its cell.
        assert!(
            !grid.windows_fit_near_origin(29.0),
            "a reach of 29 should not fit cells of 30 with the margin of the farthest point"
        );
        let edge = 65_535.02 * side;
        for reach in [20.0, 29.0] {
            for x in [15.0, 29.0, edge, 65_535.5 * side, 65_536.5 * side, 1.0e9, -1.0e9] {
                let mut m = member(0, reach * reach);
                m.p = [x, 15.0, 0.0];
                let (c, _) = grid.insert(grid.key(m.p, 0), m);
                assert_eq!(
                    grid.holds_one_member_only(c, m.p, [reach; 3], grid.windows_fit_near_origin(reach)),
                    grid.holds_one_member_only(c, m.p, [reach; 3], false),
                    "at x = {x}, reach {reach}, the shortcut should give the full test's answer"
                );
                grid.remove(c, 0);
            }
        }
        assert!(
            !grid.window_within_one_cell([edge, 15.0, 0.0], [29.0; 3], grid.key([edge, 15.0, 0.0], 0)),
            "the window of 29 from near the edge of a cell 2^16 cells out should not fit"
        );
    }
}
