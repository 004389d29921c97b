//! What a cell holds: its members (one record per entity, what the scans read of it) and the
//! counts kept alongside them.

use super::{CellKey, Positions};

/// One entity in a cell: its slot, its squared view radius for target scans, and its projected
/// position now and at the start of the tick. What a member says of the tick (`r2`, `start_p`,
/// `stepping`, `jumped`) holds during an update; a member changed in one update keeps those
/// values until the next update settles it (`AoiIndex::settle_members`), before any scan. The
/// member of a walker alone around its cell may be stale altogether (`index/lazy_members.rs`):
/// then only its slot (and its place) are right, and no scan but its own reads it.
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
    /// Its rectangle's half extents on the plane's two axes ([`Self::rect`]: its `r2` is then
    /// the disc around it), [`NO_RECT`] for any other member (so that the rectangle test,
    /// [`in_rect`](crate::visibility::in_rect), passes and the disc test decides alone). Kept
    /// here and in the position blocks, so that a rectangle is tested exactly without reading its
    /// slot. In place of the member's entity (52-byte members; 64 measured 3–9% slower on uniform
    /// 10k).
    pub half: [f32; 2],
}

/// [`Member::half`] of a member whose view is not a rectangle.
pub(crate) const NO_RECT: [f32; 2] = [f32::INFINITY; 2];

/// The rectangle that half extents `half` kept as [`Member::half`] stand for ([`Member::rect`]).
#[inline]
pub(crate) fn rect_of(half: [f32; 2]) -> Option<[f32; 2]> {
    Some(half).filter(|&half| half != NO_RECT)
}

// The size `Member::half`'s doc and the README's memory figures give.
const _: () = assert!(size_of::<Member>() == 52, "a grid member should take 52 bytes");

/// A tower: the members in one cell.
///
/// Two cache lines, laid out so that what the grouping pass reads of a changed observer's cell
/// that is not lone (where it is and what it holds: `key`, `members`, `near`) is the first
/// (whether a cell is lone, the grid's bits say: [`Grid::is_lone`](super::Grid::is_lone)).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Cell {
    pub key: CellKey,
    pub members: Vec<Member>,
    /// The occupied cells adjacent to this one (up to 8 in 2D, 26 in 3D), kept as cells come
    /// and go, so windows of one cell around it need no hash lookups.
    pub near: Vec<u32>,
    /// The members' positions and radii again, in blocks of four, for vectorised distance
    /// tests.
    pub pos: Positions,
    /// Members that are [clean observers](Member::is_clean_observer): observers a stepping
    /// target must test.
    pub clean: CleanObservers,
    /// Scratch tag used to group this tick's work by cell.
    pub tag: u32,
    /// Scratch: while `tag` is current, the index of this cell's group of changed observers.
    pub group: u32,
    /// Sorted-axes index only: what this tick did to the order of `members` until
    /// [`Grid::restore_order`](super::Grid::restore_order) runs.
    pub(super) disorder: Disorder,
}

impl Cell {
    /// Whether the cell holds one member and has no occupied neighbour: its member is alone in
    /// the cells around it (the walker a sparse world is made of). Reads the first cache line.
    #[inline]
    pub fn is_lone(&self) -> bool {
        self.members.len() == 1 && self.near.is_empty()
    }

    /// Edits member `idx`, keeping the count of clean observers and the position blocks right
    /// ([`Grid::edit_member`](super::Grid::edit_member), which also keeps a sorted cell's order);
    /// whether its first coordinate changed.
    // Always inlined, with `Positions::set`: the crate's later code left both out of line, a
    // call per moved member (callgrind per update, one thread: `sparse_huge` 50k 60.43 -> 59.79 M
    // instructions, uniform 10k 44.23 -> 44.11 M).
    #[inline(always)]
    pub fn edit_member(&mut self, idx: u32, edit: impl FnOnce(&mut Member)) -> bool {
        let m = &mut self.members[idx as usize];
        let x = m.p[0];
        self.clean.sub(m);
        edit(m);
        self.clean.add(m);
        self.pos.set(idx as usize, m);
        m.p[0].to_bits() != x.to_bits()
    }

    /// Sets the cell's only member to `member`, as [`Self::edit_member`] would, but reading
    /// nothing of the member or its block before (writes do not wait on a line that is not in
    /// cache; the reads of an edit do).
    #[inline(always)]
    pub fn set_only_member(&mut self, member: Member) {
        debug_assert_eq!(
            self.members.len(),
            1,
            "set_only_member should be asked of a cell of one"
        );
        self.members[0] = member;
        self.clean = CleanObservers::default();
        self.clean.add(&member);
        self.pos.set_only(&member);
    }

    /// Hints the CPU to bring member `idx` and its position block into cache (nothing if there is
    /// no such member).
    #[inline]
    pub fn prefetch_member(&self, idx: u32) {
        if let Some(m) = self.members.get(idx as usize) {
            crate::prefetch::prefetch(core::slice::from_ref(m));
            self.pos.prefetch(idx as usize);
        }
    }
}

// The layout `Cell` promises: what the grouping pass reads in the first cache line.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    size_of::<Cell>() == 128 && align_of::<Cell>() == 64 && core::mem::offset_of!(Cell, pos) == 64,
    "a cell should be two cache lines, its key, members and neighbours in the first"
);

/// How many members of a cell are [clean observers](Member::is_clean_observer): a cell without
/// them needs no test for a stepping target.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CleanObservers {
    /// Clean observers.
    pub all: u32,
}

impl CleanObservers {
    /// Counts `m` in (`by` = 1) or out (`by` = -1 as wrapping `u32::MAX`).
    #[inline]
    fn count(&mut self, m: &Member, by: u32) {
        let clean = u32::from(m.is_clean_observer());
        self.all = self.all.wrapping_add(clean.wrapping_mul(by));
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

impl Member {
    /// Its rectangle's half extents, if its view is a rectangle (a rectangle unbounded on both
    /// axes sees what the unbounded disc around it sees, and is taken as that disc).
    #[inline]
    pub fn rect(&self) -> Option<[f32; 2]> {
        rect_of(self.half)
    }

    /// An observer that did not change this tick and is not wide: every moving target tests it
    /// from the cells around it.
    #[inline]
    pub fn is_clean_observer(&self) -> bool {
        self.r2 >= 0.0 && !self.stepping
    }
}

/// What a tick did to the order of a sorted cell's members
/// ([`IndexKind::SortedAxes`](crate::config::IndexKind::SortedAxes)).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Disorder {
    /// The cell is listed in [`Grid::unsorted`](super::Grid::unsorted).
    pub listed: bool,
    /// Members appended out of order.
    pub inserted: u32,
    /// Removed members still in place, with [`TOMBSTONE`] as their slot.
    pub tombstones: u32,
}

/// The slot of a removed member of a sorted cell until the cell is compacted.
pub(super) const TOMBSTONE: u32 = u32::MAX;
