//! The sparse tower grid: only occupied cells exist, each holding its members' positions inline
//! so a scan streams through memory instead of chasing entity ids, and again in blocks of four
//! members, one array per value ([`Positions`]), for the scans' vectorised distance tests.
//!
//! The sorted-axes index ([`IndexKind::SortedAxes`]) is the same structure with one cell per
//! instance whose members are kept sorted along the first axis ([`axes`]): every cell-level step
//! of the pair engine is shared, and scans narrow each cell to the slab within reach.

use std::collections::HashMap;

use ahash::RandomState;
use bevy_ecs::entity::Entity;

use crate::config::{AoiBounds, IndexKind};

mod axes;
mod positions;

pub(crate) use positions::Positions;

/// Integer coordinates of a cell, then its map instance (as `i32` bits). The third coordinate is
/// always 0 in 2D planes. Instances never share a cell, so each has its own index.
pub(crate) type CellKey = [i32; 4];

/// A freed cell keeps buffers of up to this many members for its next use.
const KEPT_CELL_CAPACITY: usize = 8;

/// Marks "no cell" in slot locations.
pub(crate) const NO_CELL: u32 = u32::MAX;

/// One entity in a cell: its slot, its squared view radius for target scans, and its projected
/// position now and at the start of the tick.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member {
    pub slot: u32,
    /// Squared view radius for scans around moving targets: negative when they must skip it (not
    /// an observer, wide, or recomputing its whole list this tick).
    pub r2: f32,
    pub p: [f32; 3],
    /// Where it was at the start of the tick (equal to `p` unless it steps this tick).
    pub start_p: [f32; 3],
    /// It is an observer stepping this tick (`Slot::stepping` in the index): its own flip
    /// scan decides its pairs with other steppers and unchanged targets.
    pub stepping: bool,
    /// As a target, it changed this tick in a way flip scans cannot follow
    /// (`Slot::jumped` in the index): flip scans skip it, its own target scan decides.
    pub jumped: bool,
    /// The layers it is in, as distance scans may find it: 0 unless its visibility is `Normal`
    /// (`Always` entities are found through their instance's list, `Hidden` ones not at all).
    pub seen_by: u32,
    /// The layers it sees (as an observer).
    pub sees: u32,
    /// Its view is a rectangle: `r2` is the disc around it, a prefilter; the exact test needs the
    /// half extents from its slot ([`observer_of`](crate::slot::observer_of)). Kept in the
    /// padding: members stay 56 bytes (64 measured 3–9% slower on uniform 10k).
    pub rect: bool,
    /// The entity, so a scan can write `InterestSet`s without looking slots up.
    pub entity: Entity,
}

/// A tower: the members in one cell.
#[derive(Debug, Default)]
pub(crate) struct Cell {
    pub key: CellKey,
    pub members: Vec<Member>,
    /// The members' positions and radii again, in blocks of four, for vectorised distance
    /// tests.
    pub pos: Positions,
    /// Members that are [clean observers](Member::is_clean_observer): observers a stepping
    /// target must test.
    pub clean: CleanObservers,
    /// Scratch tag used to group this tick's work by cell.
    pub tag: u32,
    /// Scratch counter that goes with `tag`.
    pub count: u32,
    /// The occupied cells adjacent to this one (up to 8 in 2D, 26 in 3D), kept as cells come
    /// and go, so windows of one cell around it need no hash lookups.
    pub near: Vec<u32>,
    /// Sorted-axes index only: what this tick did to the order of `members` until
    /// [`Grid::restore_order`] runs.
    disorder: Disorder,
}

/// How many members of a cell are [clean observers](Member::is_clean_observer), and how many of
/// those have a rectangular view: a stepping target judges those whenever the disc around them
/// holds it at either end, so a cell without them needs only the target's flips.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CleanObservers {
    /// Clean observers.
    pub all: u32,
    /// Clean observers with a [rectangular view](Member::rect).
    pub rects: u32,
}

impl CleanObservers {
    /// Counts `m` in (`by` = 1) or out (`by` = -1 as wrapping `u32::MAX`).
    #[inline]
    fn count(&mut self, m: &Member, by: u32) {
        let clean = u32::from(m.is_clean_observer());
        self.all = self.all.wrapping_add(clean.wrapping_mul(by));
        self.rects = self.rects.wrapping_add((clean & u32::from(m.rect)).wrapping_mul(by));
    }

    /// Counts a new member in.
    #[inline]
    pub fn add(&mut self, m: &Member) {
        self.count(m, 1);
    }

    /// Counts a leaving member out.
    #[inline]
    pub fn sub(&mut self, m: &Member) {
        self.count(m, u32::MAX);
    }
}

/// What a tick did to the order of a sorted cell's members ([`IndexKind::SortedAxes`]).
#[derive(Debug, Default, Clone, Copy)]
struct Disorder {
    /// The cell is listed in [`Grid::unsorted`].
    listed: bool,
    /// Members appended out of order.
    inserted: u32,
    /// Removed members still in place, with [`TOMBSTONE`] as their slot.
    tombstones: u32,
}

/// The slot of a removed member of a sorted cell until the cell is compacted.
const TOMBSTONE: u32 = u32::MAX;

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

    /// Every cell of one instance.
    pub fn whole(instance: u32) -> Window {
        let i = instance as i32;
        Window {
            lo: [i32::MIN, i32::MIN, i32::MIN, i],
            hi: [i32::MAX, i32::MAX, i32::MAX, i],
        }
    }

    /// Number of cells covered, saturating.
    fn volume(&self) -> u64 {
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

    /// Whether the two windows share a cell.
    pub fn overlaps(&self, other: &Window) -> bool {
        (0..4).all(|i| self.lo[i] <= other.hi[i] && other.lo[i] <= self.hi[i])
    }
}

/// The grid itself.
pub(crate) struct Grid {
    side: f32,
    inv: f32,
    dims: usize,
    clamp: Option<Window>,
    map: HashMap<CellKey, u32, RandomState>,
    pub cells: Vec<Cell>,
    free: Vec<u32>,
    kind: IndexKind,
    /// Sorted-axes index only: cells whose member order this tick disturbed.
    unsorted: Vec<u32>,
}

impl Grid {
    pub fn new(side: f32, dims: usize, bounds: Option<AoiBounds>, kind: IndexKind) -> Self {
        let mut grid = Self {
            side,
            inv: 1.0 / side,
            dims,
            clamp: None,
            map: HashMap::with_hasher(RandomState::with_seeds(1, 2, 3, 4)),
            cells: Vec::new(),
            free: Vec::new(),
            kind,
            unsorted: Vec::new(),
        };
        grid.clamp = bounds.map(|b| Window {
            lo: grid.raw_key(b.min, 0),
            hi: grid.raw_key(b.max, 0),
        });
        grid
    }

    /// The side of a cell; for the sorted-axes index, only the base of the step limit.
    pub fn side(&self) -> f32 {
        self.side
    }

    /// Which index this grid is.
    pub fn kind(&self) -> IndexKind {
        self.kind
    }

    /// Heap bytes the grid holds (capacities, not lengths; hash tables approximately).
    pub fn heap_bytes(&self) -> usize {
        let cells: usize = self
            .cells
            .iter()
            .map(|c| {
                c.members.capacity() * size_of::<Member>() + c.pos.heap_bytes() + c.near.capacity() * size_of::<u32>()
            })
            .sum();
        cells
            + self.cells.capacity() * size_of::<Cell>()
            + self.map.capacity() * (size_of::<(CellKey, u32)>() + 1)
            + self.free.capacity() * size_of::<u32>()
            + self.unsorted.capacity() * size_of::<u32>()
    }

    /// Number of occupied cells.
    pub fn occupied(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn raw_key(&self, p: [f32; 3], instance: u32) -> CellKey {
        // `as` saturates, and the map from coordinate to key is monotone, which is all the window
        // logic relies on.
        core::array::from_fn(|i| {
            if i < self.dims {
                floor_to_i32(p[i] * self.inv)
            } else if i == 3 {
                instance as i32
            } else {
                0
            }
        })
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
            Some(c) => core::array::from_fn(|i| if i < 3 { k[i].clamp(c.lo[i], c.hi[i]) } else { k[i] }),
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

    /// Pushes the ids of the occupied cells in `w` into `out`, in a deterministic order. When the
    /// window covers more cells than are occupied, walks the occupied cells instead, so a huge
    /// view never walks empty space.
    pub fn cells_in(&self, w: &Window, out: &mut Vec<u32>) {
        if w.volume() <= self.map.len() as u64 {
            for z in w.lo[2]..=w.hi[2] {
                for y in w.lo[1]..=w.hi[1] {
                    for x in w.lo[0]..=w.hi[0] {
                        if let Some(&c) = self.map.get(&[x, y, z, w.lo[3]]) {
                            out.push(c);
                        }
                    }
                }
            }
        } else {
            for (c, cell) in self.cells.iter().enumerate() {
                if !cell.members.is_empty() && w.contains(cell.key) {
                    out.push(c as u32);
                }
            }
        }
    }

    /// Adds a member to the cell of `key`, creating the cell if needed. Returns `(cell, index)`.
    pub fn insert(&mut self, key: CellKey, member: Member) -> (u32, u32) {
        let c = match self.map.get(&key) {
            Some(&c) => c,
            None => {
                let c = match self.free.pop() {
                    Some(c) => c,
                    None => {
                        self.cells.push(Cell::default());
                        (self.cells.len() - 1) as u32
                    }
                };
                self.cells[c as usize].key = key;
                self.map.insert(key, c);
                self.link_neighbours(c, key);
                c
            }
        };
        let cell = &mut self.cells[c as usize];
        cell.clean.add(&member);
        cell.members.push(member);
        cell.pos.push(&member);
        let idx = (cell.members.len() - 1) as u32;
        if self.kind == IndexKind::SortedAxes {
            self.disturb(c, |d| d.inserted += 1);
        }
        (c, idx)
    }

    /// Removes the member at `(c, idx)`, freeing the cell when it empties. Returns the slot of the
    /// member moved into `idx`, whose location the caller must update. (A sorted cell keeps the
    /// member as a tombstone until [`Self::restore_order`] compacts it, and moves nobody now.)
    pub fn remove(&mut self, c: u32, idx: u32) -> Option<u32> {
        if self.kind == IndexKind::SortedAxes {
            self.bury(c, idx);
            return None;
        }
        let cell = &mut self.cells[c as usize];
        let gone = cell.members.swap_remove(idx as usize);
        cell.pos.swap_remove(idx as usize);
        cell.clean.sub(&gone);
        let moved = cell.members.get(idx as usize).map(|m| m.slot);
        if cell.members.is_empty() {
            self.free_cell(c);
        }
        moved
    }

    /// Frees the emptied cell `c`.
    fn free_cell(&mut self, c: u32) {
        let cell = &mut self.cells[c as usize];
        // Free large buffers (a reused cell should not inherit another place's crowd); keep small
        // ones, so entities walking from cell to cell in a sparse world do not allocate 8 buffers
        // at every crossing.
        if cell.members.capacity() > KEPT_CELL_CAPACITY {
            cell.members = Vec::new();
            cell.pos = Positions::default();
        } else {
            cell.members.clear();
            cell.pos.clear();
        }
        let key = cell.key;
        self.map.remove(&key);
        self.unlink_neighbours(c);
        self.free.push(c);
    }

    /// The keys of the cells adjacent to `key` (skipping those past the `i32` range).
    fn neighbour_keys(&self, key: CellKey) -> impl Iterator<Item = CellKey> + use<> {
        let dz = if self.dims == 3 { -1..=1 } else { 0..=0 };
        dz.flat_map(|z| (-1..=1).flat_map(move |y| (-1..=1).map(move |x| [x, y, z])))
            .filter(|d| *d != [0, 0, 0])
            .filter_map(move |d| {
                Some([
                    key[0].checked_add(d[0])?,
                    key[1].checked_add(d[1])?,
                    key[2].checked_add(d[2])?,
                    key[3],
                ])
            })
    }

    fn link_neighbours(&mut self, c: u32, key: CellKey) {
        for k in self.neighbour_keys(key) {
            if let Some(&n) = self.map.get(&k) {
                self.cells[n as usize].near.push(c);
                self.cells[c as usize].near.push(n);
            }
        }
    }

    fn unlink_neighbours(&mut self, c: u32) {
        let near = core::mem::take(&mut self.cells[c as usize].near);
        for &n in &near {
            let theirs = &mut self.cells[n as usize].near;
            let at = theirs
                .iter()
                .position(|&x| x == c)
                .expect("neighbour links should be mutual");
            theirs.swap_remove(at);
        }
        drop(near);
    }

    /// Like [`Self::cells_in`], for a window around the occupied cell `c`: when the window
    /// reaches no farther than the adjacent cells, it is answered from `c`'s neighbour list
    /// without hashing.
    pub fn cells_around(&self, c: u32, w: &Window, out: &mut Vec<u32>) {
        let cell = &self.cells[c as usize];
        let k = cell.key;
        let adjacent = w.lo[3] == k[3]
            && w.hi[3] == k[3]
            && (0..3).all(|i| i64::from(w.lo[i]) >= i64::from(k[i]) - 1 && i64::from(w.hi[i]) <= i64::from(k[i]) + 1);
        if !adjacent {
            self.cells_in(w, out);
            return;
        }
        if w.contains(k) {
            out.push(c);
        }
        for &n in &cell.near {
            if w.contains(self.cells[n as usize].key) {
                out.push(n);
            }
        }
    }

    /// Hints the CPU to bring cell `c`'s record into cache (nothing for [`NO_CELL`]): the first
    /// of two steps, the record holding where the members are.
    #[inline]
    pub fn prefetch_cell(&self, c: u32) {
        if let Some(cell) = self.cells.get(c as usize) {
            crate::prefetch::prefetch(core::slice::from_ref(cell));
        }
    }

    /// Hints the CPU to bring the member at `(c, idx)` and its position block into cache, a few
    /// edits before [`Self::edit_member`] or [`Self::remove`] reach it (cells are scattered over
    /// the heap). Nothing if there is no such member.
    #[inline]
    pub fn prefetch_member(&self, c: u32, idx: u32) {
        if let Some(cell) = self.cells.get(c as usize)
            && let Some(m) = cell.members.get(idx as usize)
        {
            crate::prefetch::prefetch(core::slice::from_ref(m));
            cell.pos.prefetch(idx as usize);
        }
    }

    /// Edits the member at `(c, idx)`, keeping the cell's count of clean observers right (and, in
    /// a sorted cell, noting a move for [`Self::restore_order`]).
    pub fn edit_member(&mut self, c: u32, idx: u32, edit: impl FnOnce(&mut Member)) {
        let cell = &mut self.cells[c as usize];
        let m = &mut cell.members[idx as usize];
        let x = m.p[0];
        cell.clean.sub(m);
        edit(m);
        cell.clean.add(m);
        cell.pos.set(idx as usize, m);
        let moved = m.p[0].to_bits() != x.to_bits();
        if moved && self.kind == IndexKind::SortedAxes {
            self.disturb(c, |_| ());
        }
    }
}

impl Member {
    /// An observer that did not change this tick and is not wide: every moving target tests it
    /// from the cells around it.
    #[inline]
    pub fn is_clean_observer(&self) -> bool {
        self.r2 >= 0.0 && !self.stepping
    }
}

/// How far beyond `r` around coordinate `c` a window must reach so that every point the distance
/// test accepts is inside: the test can accept a point up to ~3 ulps of `r` beyond `r` on one
/// axis, and the two subtractions that build a window round by up to an ulp of `|c| + r` each;
/// 1e-6 of `|c| + r` is more than three times that.
#[inline(always)]
fn margin(c: f32, r: f32) -> f32 {
    (c.abs() + r) * 1.0e-6 + f32::MIN_POSITIVE
}

/// `x.floor() as i32` (saturating, NaN to 0), without the call to `floorf` that `f32::floor`
/// compiles to on CPUs without SSE4.1: truncate, then step down if that rounded up.
#[inline(always)]
fn floor_to_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) > x { t.saturating_sub(1) } else { t }
}

/// Squared distance between two projected points. Every distance decision for a radius goes
/// through this one function (by way of [`within`](crate::visibility::within)), so the same pair
/// always gets the same answer.
#[inline(always)]
pub(crate) fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    let dx = a[0] - b[0];
    let dy = a[1] - b[1];
    let dz = a[2] - b[2];
    dx * dx + dy * dy + dz * dz
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member at the origin, in every layer.
    pub(super) fn member(slot: u32, r2: f32) -> Member {
        Member {
            slot,
            r2,
            p: [0.0; 3],
            start_p: [0.0; 3],
            stepping: false,
            jumped: false,
            seen_by: u32::MAX,
            sees: u32::MAX,
            rect: false,
            entity: Entity::PLACEHOLDER,
        }
    }

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
    fn cell_positions_and_counts_follow_members_through_inserts_edits_removals_and_reordering() {
        for kind in [IndexKind::Grid, IndexKind::SortedAxes] {
            let mut grid = Grid::new(10.0, 2, None, kind);
            let mut state = 7u64;
            let mut next = || {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) as u32
            };
            // Where each live slot is: (cell, index).
            let mut at: HashMap<u32, (u32, u32)> = HashMap::new();
            for step in 0..2000u32 {
                let slot = next() % 64;
                match (at.get(&slot).copied(), next() % 3) {
                    (None, _) => {
                        let mut m = member(slot, (next() % 50) as f32 - 10.0);
                        m.p = [(next() % 100) as f32 * 0.37, (next() % 100) as f32 * 0.11, 0.0];
                        (m.rect, m.stepping) = (next() % 2 == 0, next() % 4 == 0);
                        at.insert(slot, grid.insert([(next() % 3) as i32, 0, 0, 0], m));
                    }
                    (Some((c, i)), 0) => {
                        at.remove(&slot);
                        if let Some(moved) = grid.remove(c, i) {
                            at.insert(moved, (c, i));
                        }
                    }
                    (Some((c, i)), _) => {
                        let (x, r2) = ((next() % 100) as f32 * 0.53, (next() % 50) as f32 - 10.0);
                        let (rect, stepping) = (next() % 2 == 0, next() % 4 == 0);
                        grid.edit_member(c, i, |m| (m.p[0], m.r2, m.rect, m.stepping) = (x, r2, rect, stepping));
                    }
                }
                for (c, cell) in grid.cells.iter().enumerate() {
                    for (i, m) in cell.members.iter().enumerate() {
                        assert!(
                            cell.pos.holds(i, m),
                            "{kind:?}: cell {c}'s positions should mirror member {i} (tombstones too) after step {step}"
                        );
                    }
                    let clean = cell.members.iter().filter(|m| m.is_clean_observer());
                    let counted = CleanObservers {
                        all: clean.clone().count() as u32,
                        rects: clean.filter(|m| m.rect).count() as u32,
                    };
                    if !cell.members.is_empty() {
                        assert_eq!(
                            cell.clean, counted,
                            "{kind:?}: cell {c} should count its clean observers and their rectangles after step {step}"
                        );
                    }
                }
                if step % 16 == 15 {
                    grid.restore_order(|slot, i| {
                        if let Some(place) = at.get_mut(&slot) {
                            place.1 = i;
                        }
                    });
                    for (&slot, &(c, i)) in &at {
                        let cell = &grid.cells[c as usize];
                        let m = &cell.members[i as usize];
                        assert_eq!(m.slot, slot, "{kind:?}: slot {slot} should be where it was put");
                        assert!(
                            cell.pos.holds(i as usize, m),
                            "{kind:?}: the cell's positions should hold member {slot}'s point and radius at its index after step {step}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn cells_are_freed_when_empty_and_huge_windows_walk_only_occupied_cells() {
        let mut grid = Grid::new(1.0, 2, None, IndexKind::Grid);
        let m = |slot| member(slot, 1.0);
        let (c0, i0) = grid.insert([0, 0, 0, 0], m(0));
        let (c1, _) = grid.insert([1_000_000, 5, 0, 0], m(1));
        assert_eq!(grid.occupied(), 2, "two members in two cells should make two cells");
        let mut out = Vec::new();
        grid.cells_in(&grid.window([0.0; 3], 1.0e7, 0), &mut out);
        assert_eq!(
            out,
            vec![c0, c1],
            "a huge window should list exactly the occupied cells"
        );
        assert_eq!(grid.remove(c0, i0), None, "removing the last member should move nobody");
        assert_eq!(grid.occupied(), 1, "an emptied cell should be freed");
        assert_eq!(
            grid.cells[c1 as usize].clean.all, 1,
            "observer count should follow members"
        );
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
        grid.cells_around(b, &grid.window([15.0, 15.0, 0.0], 9.0, 0), &mut out);
        assert_eq!(
            out,
            vec![b, a, c],
            "an adjacent window should list b and its occupied neighbours"
        );
        grid.remove(a, ia);
        assert_eq!(grid.cells[b as usize].near, vec![c], "a freed cell should be unlinked");
        out.clear();
        grid.cells_around(b, &grid.window([15.0, 15.0, 0.0], 30.0, 0), &mut out);
        assert_eq!(
            out,
            vec![b, c],
            "a wider window should fall back to walking the occupied cells"
        );
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
