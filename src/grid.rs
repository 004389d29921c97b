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

use crate::{
    bits,
    config::{AoiBounds, IndexKind},
};

mod axes;
mod cell;
mod cell_map;
mod neighbours;
mod positions;
mod window;

pub(crate) use cell::{Cell, Member, NO_RECT};
use cell_map::CellMap;
use neighbours::next_door;
#[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
pub(crate) use positions::avx_available;
pub(crate) use positions::{
    BandTest, BothWaysView, FLIP_BATCH, FlipShape, FlipViews, Positions, RectBandTest, SpreadViews,
};
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
    /// Bit `c` is set while cell `c` is [lone](Cell::is_lone) ([`Self::note_lone`] keeps it as
    /// members and neighbour links come and go): [`Self::holds_one_member_only`] asks it without
    /// reading the cell's record, which in a sparse world is a cache line of its own for every
    /// changed observer.
    lone: Vec<u64>,
    /// The cells whose lone bit went down since [`Self::begin_moves`] last ran, some perhaps
    /// more than once, some perhaps lone again or freed since.
    pub lost_lone: Vec<u32>,
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
            lone: Vec::new(),
            lost_lone: Vec::new(),
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
            + self.lone.capacity() * size_of::<u64>()
            + self.lost_lone.capacity() * size_of::<u32>()
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
        self.note_lone(c);
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
        } else {
            self.note_lone(c);
        }
        moved
    }

    /// Carries cell `c` over to the adjacent cell `key` with its one member, when `c` has no
    /// occupied neighbour (so `key` is free): the walk of a lone entity in a sparse world. Leaves
    /// the grid as [`Self::remove`] then [`Self::insert`] would (the freed record is the one
    /// reused, its member at index 0, the same neighbour links in the same order), but probes the
    /// map only for the neighbours of `key` that are not also `c`'s (known free): 3 or 5 of 8 in
    /// 2D, and no removal and re-insertion of the member. Returns whether it did; the caller
    /// then writes the member ([`Cell::set_only_member`]) or leaves it stale (the index's lazy
    /// member writes). `sparse_huge` 50k: about 6% off the update
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
        self.note_lone(c);
        self.free.push(c);
    }

    /// Sets cell `c`'s bit in [`Self::lone`] to whether it is [lone](Cell::is_lone) now: called
    /// wherever its members or its neighbour links change.
    #[inline]
    fn note_lone(&mut self, c: u32) {
        let c = c as usize;
        if self.lone.len() <= c / 64 {
            self.lone.resize(self.cells.len().div_ceil(64), 0);
        }
        if self.cells[c].is_lone() {
            bits::insert(&mut self.lone, c);
        } else if bits::contains(&self.lone, c) {
            bits::remove(&mut self.lone, c);
            self.lost_lone.push(c as u32);
        }
    }

    /// Starts a tick's moves: forgets the cells that lost their lone bit before
    /// ([`Self::lost_lone`]).
    pub fn begin_moves(&mut self) {
        self.lost_lone.clear();
    }

    /// Whether cell `c` is [lone](Cell::is_lone), from [`Self::lone`] (its record unread). `O(1)`.
    #[inline]
    pub fn is_lone(&self, c: u32) -> bool {
        let lone = self.lone_bit(c as usize);
        debug_assert_eq!(
            lone,
            self.cells[c as usize].is_lone(),
            "cell {c}'s lone bit should follow its members and neighbour links"
        );
        lone
    }

    /// Cell `c`'s bit in [`Self::lone`] (every cell is noted when it is created, so its word
    /// exists).
    #[inline]
    fn lone_bit(&self, c: usize) -> bool {
        bits::contains(&self.lone, c)
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
mod tests;
