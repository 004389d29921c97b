//! The sparse tower grid: only occupied cells exist, each holding its members' positions inline
//! so a scan streams through memory instead of chasing entity ids, and again in blocks of four
//! members, one array per value ([`Positions`]), for the scans' vectorised distance tests.
//!
//! The sorted-axes index ([`IndexKind::SortedAxes`]) is the same structure with one cell per
//! instance whose members are kept sorted along the first axis ([`axes`]): every cell-level step
//! of the pair engine is shared, and scans narrow each cell to the slab within reach.
//!
//! Here: inserts, removals and edits. What a cell holds is in [`cell`], the map from key to cell
//! in [`cell_map`], the links between neighbouring cells in [`neighbours`], cell keys and windows
//! in [`window`].

use crate::config::{AoiBounds, IndexKind};

mod axes;
mod cell;
mod cell_map;
mod neighbours;
mod positions;
mod window;

pub(crate) use cell::{Cell, Member, NO_RECT};
use cell_map::CellMap;
use neighbours::next_door;
pub(crate) use positions::{BandTest, FLIP_BATCH, FlipShape, Positions, RectBandTest};
pub(crate) use window::Window;

/// Integer coordinates of a cell, then its map instance (as `i32` bits). The third coordinate is
/// always 0 in 2D planes. Instances never share a cell, so each has its own index.
pub(crate) type CellKey = [i32; 4];

/// A freed cell keeps buffers of up to this many members for its next use.
const KEPT_CELL_CAPACITY: usize = 8;

/// Marks "no cell" in slot locations.
pub(crate) const NO_CELL: u32 = u32::MAX;

/// The grid itself.
pub(crate) struct Grid {
    side: f32,
    inv: f32,
    dims: usize,
    clamp: Option<Window>,
    map: CellMap,
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
            map: CellMap::default(),
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

    /// Whether positions use the third axis (an `XYZ` plane); in 2D it is 0 for every member.
    #[inline]
    pub fn with_z(&self) -> bool {
        self.dims == 3
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
            + self.map.heap_bytes()
            + self.free.capacity() * size_of::<u32>()
            + self.unsorted.capacity() * size_of::<u32>()
    }

    /// Number of occupied cells.
    pub fn occupied(&self) -> usize {
        self.map.len()
    }

    /// Pushes the ids of the occupied cells in `w` into `out`, in a deterministic order. When the
    /// window covers more cells than are occupied, walks the occupied cells instead, so a huge
    /// view never walks empty space.
    pub fn cells_in(&self, w: &Window, out: &mut Vec<u32>) {
        if w.volume() <= self.map.len() as u64 {
            for z in w.lo[2]..=w.hi[2] {
                for y in w.lo[1]..=w.hi[1] {
                    for x in w.lo[0]..=w.hi[0] {
                        if let Some(c) = self.map.get(&self.cells, [x, y, z, w.lo[3]]) {
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
        let c = match self.map.get(&self.cells, key) {
            Some(c) => c,
            None => {
                let c = match self.free.pop() {
                    Some(c) => c,
                    None => {
                        self.cells.push(Cell::default());
                        (self.cells.len() - 1) as u32
                    }
                };
                self.cells[c as usize].key = key;
                self.map.insert(&self.cells, c);
                self.link_neighbours(c, key, None);
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

    /// Carries cell `c` over to the adjacent cell `key` with its one member, when `c` has no
    /// occupied neighbour (so `key` is free): the walk of a lone entity in a sparse world. Leaves
    /// the grid as [`Self::remove`] then [`Self::insert`] would (the freed record is the one
    /// reused, its member at index 0, the same neighbour links in the same order), but probes the
    /// map only for the neighbours of `key` that are not also `c`'s (known free): 3 or 5 of 8 in
    /// 2D, and no removal and re-insertion of the member. Returns whether it did; the caller
    /// then edits the member to its new values. `sparse_huge` 50k: about 6% off the update
    /// (measured in `PERFORMANCE.md`, stop 29).
    #[inline(never)]
    pub fn carry_lone_member(&mut self, c: u32, key: CellKey) -> bool {
        let cell = &self.cells[c as usize];
        let from = cell.key;
        let lone = cell.is_lone() && cell.members.capacity() <= KEPT_CELL_CAPACITY;
        if self.kind != IndexKind::Grid || !lone || !next_door(from, key) {
            return false;
        }
        self.map.remove(from, c);
        self.cells[c as usize].key = key;
        self.map.insert(&self.cells, c);
        self.link_neighbours(c, key, Some(from));
        true
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
        self.map.remove(key, c);
        self.unlink_neighbours(c);
        self.free.push(c);
    }

    /// Hints the CPU to bring cell `c`'s record into cache (nothing for [`NO_CELL`]): the first
    /// of two steps, the record holding where the members are.
    #[inline]
    pub fn prefetch_cell(&self, c: u32) {
        if let Some(cell) = self.cells.get(c as usize) {
            crate::prefetch::prefetch(core::slice::from_ref(cell));
        }
    }

    /// When a member of cell `c` is about to move to the cell of `key`, hints the CPU to bring
    /// the cell map's entries it will look up into cache: both keys' and, when `c` is
    /// [lone](Cell::is_lone) (so the move carries it, [`Self::carry_lone_member`], unless its
    /// buffers are a crowd's), its new neighbours'. Nothing when `key` is `c`'s own. Each is a
    /// miss on the table otherwise: `sparse_huge`'s 50k walkers change cells about 2,800 times
    /// an update (counted at stop 57).
    #[inline]
    pub fn prefetch_cell_change(&self, c: u32, key: CellKey) {
        let cell = &self.cells[c as usize];
        let from = cell.key;
        if from == key {
            return;
        }
        self.map.prefetch(from);
        self.map.prefetch(key);
        if cell.is_lone() {
            self.for_each_neighbour(key, Some(from), |k| self.map.prefetch(k));
        }
    }

    /// Hints the CPU to bring the member at `(c, idx)` and its position block into cache, a few
    /// edits before [`Self::edit_member`] or [`Self::remove`] reach it (cells are scattered over
    /// the heap). Nothing if there is no such member.
    #[inline]
    pub fn prefetch_member(&self, c: u32, idx: u32) {
        if let Some(cell) = self.cells.get(c as usize) {
            cell.prefetch_member(idx);
        }
    }

    /// Edits the member at `(c, idx)`, keeping the cell's count of clean observers right (and, in
    /// a sorted cell, noting a move for [`Self::restore_order`]).
    // Always inlined: once the split moves (`index/moves.rs`) added call sites, the inliner kept
    // it apart (callgrind per update, one thread: `sparse_huge` 50k 76.14 -> 75.57 M
    // instructions, uniform 10k 69.00 -> 68.88 M).
    #[inline(always)]
    pub fn edit_member(&mut self, c: u32, idx: u32, edit: impl FnOnce(&mut Member)) {
        let moved = self.cells[c as usize].edit_member(idx, edit);
        if moved && self.kind == IndexKind::SortedAxes {
            self.disturb(c, |_| ());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_draws::Draws;
    use cell::{CleanObservers, NO_RECT};

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
            half: NO_RECT,
        }
    }

    /// `m` made a rectangle of half extents `half` (`None`: not a rectangle).
    fn set_rect(m: &mut Member, half: Option<[f32; 2]>) {
        m.half = half.unwrap_or(NO_RECT);
    }

    #[test]
    fn cell_positions_and_counts_follow_members_through_inserts_edits_removals_and_reordering() {
        for kind in [IndexKind::Grid, IndexKind::SortedAxes] {
            let mut grid = Grid::new(10.0, 2, None, kind);
            let mut draws = Draws::new(7);
            let mut next = || (draws.next_state() >> 33) as u32;
            // Where each live slot is: (cell, index).
            let mut at: std::collections::HashMap<u32, (u32, u32)> = std::collections::HashMap::new();
            for step in 0..2000u32 {
                let slot = next() % 64;
                match (at.get(&slot).copied(), next() % 3) {
                    (None, _) => {
                        let mut m = member(slot, (next() % 50) as f32 - 10.0);
                        m.p = [(next() % 100) as f32 * 0.37, (next() % 100) as f32 * 0.11, 0.0];
                        let half = [(next() % 9) as f32, (next() % 9) as f32];
                        set_rect(&mut m, (next() % 2 == 0).then_some(half));
                        m.stepping = next() % 4 == 0;
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
                        let half = [(next() % 9) as f32, (next() % 9) as f32];
                        let (rect, stepping) = ((next() % 2 == 0).then_some(half), next() % 4 == 0);
                        grid.edit_member(c, i, |m| {
                            (m.p[0], m.r2, m.stepping) = (x, r2, stepping);
                            set_rect(m, rect);
                        });
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
                        all: clean.count() as u32,
                    };
                    if !cell.members.is_empty() {
                        assert_eq!(
                            cell.clean, counted,
                            "{kind:?}: cell {c} should count its clean observers after step {step}"
                        );
                    }
                    assert_eq!(
                        cell.pos.rects(),
                        cell.members.iter().filter(|m| m.rect().is_some()).count(),
                        "{kind:?}: cell {c}'s positions should count its rectangles after step {step}"
                    );
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
    fn a_carried_lone_member_leaves_the_grid_as_a_removal_then_an_insert_would() {
        // Left alone in a cell whose buffers a crowd grew, a walker is not carried: a removal
        // frees those buffers (a reused cell should not inherit another place's crowd).
        let mut grid = Grid::new(1.0, 2, None, IndexKind::Grid);
        let (c, _) = grid.insert([0, 0, 0, 0], member(0, 1.0));
        for slot in 1..=KEPT_CELL_CAPACITY as u32 {
            grid.insert([0, 0, 0, 0], member(slot, 1.0));
        }
        for _ in 1..=KEPT_CELL_CAPACITY {
            grid.remove(c, 1);
        }
        assert!(
            !grid.carry_lone_member(c, [1, 0, 0, 0]),
            "a walker alone in a crowd-sized cell should leave it as a removal would"
        );
        let (lone, _) = grid.insert([5, 5, 0, 0], member(99, 1.0));
        assert!(
            grid.carry_lone_member(lone, [6, 5, 0, 0]),
            "a walker alone in a small cell with nobody around should be carried"
        );
        for dims in [2, 3] {
            let new_grid = || Grid::new(1.0, dims, None, IndexKind::Grid);
            let (mut carried, mut moved) = (new_grid(), new_grid());
            let mut draws = Draws::new(11);
            let mut next = |n: u64| draws.below(n) as i32;
            // Thirty walkers in a box of 12 cells a side (a few crowd, most walk alone); one step
            // in eight is a jump of up to 3 cells.
            let mut keys: Vec<CellKey> = Vec::new();
            for slot in 0..30 {
                let key = [next(12), next(12), if dims == 3 { next(12) } else { 0 }, 0];
                for grid in [&mut carried, &mut moved] {
                    grid.insert(key, member(slot, 1.0));
                }
                keys.push(key);
            }
            let mut carries = 0;
            for step in 0..4000 {
                let slot = next(30) as usize;
                let from = keys[slot];
                let reach = if next(8) == 0 { 3 } else { 1 };
                let mut key = from;
                for k in &mut key[..dims] {
                    *k += next(2 * reach as u64 + 1) - reach;
                }
                if key == from {
                    continue;
                }
                let c = moved
                    .map
                    .get(&moved.cells, from)
                    .expect("a walker's cell should be listed under its key");
                let i = moved.cells[c as usize]
                    .members
                    .iter()
                    .position(|m| m.slot == slot as u32)
                    .expect("a walker should be in the cell of its key") as u32;
                moved.remove(c, i);
                moved.insert(key, member(slot as u32, 1.0));
                if carried.carry_lone_member(c, key) {
                    carries += 1;
                } else {
                    carried.remove(c, i);
                    carried.insert(key, member(slot as u32, 1.0));
                }
                keys[slot] = key;
                assert_eq!(
                    carried.map.entries(&carried.cells),
                    moved.map.entries(&moved.cells),
                    "{dims}D step {step}: the cell maps should match"
                );
                assert_eq!(
                    carried.free, moved.free,
                    "{dims}D step {step}: the free records should match"
                );
                for (c, (a, b)) in carried.cells.iter().zip(&moved.cells).enumerate() {
                    let slots = |cell: &Cell| cell.members.iter().map(|m| m.slot).collect::<Vec<_>>();
                    assert_eq!(
                        slots(a),
                        slots(b),
                        "{dims}D step {step}: cell {c} should hold the same members"
                    );
                    assert_eq!(
                        a.members.capacity(),
                        b.members.capacity(),
                        "{dims}D step {step}: cell {c} should keep the same buffer (a lone walker's crowd-sized one is freed)"
                    );
                    if !a.members.is_empty() {
                        assert_eq!(
                            (a.key, &a.near),
                            (b.key, &b.near),
                            "{dims}D step {step}: cell {c}'s key and neighbour links (in order) should match"
                        );
                    }
                }
            }
            assert!(
                carries > 500,
                "{dims}D: many steps should be carries of lone walkers, saw {carries}"
            );
        }
    }
}
