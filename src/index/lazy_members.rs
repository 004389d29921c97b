//! Lazy member writes for lone walkers: a changed slot whose cell is [lone](Grid::is_lone) (its
//! only member, no occupied neighbour) may leave its grid member as an earlier update wrote it,
//! whether it stays in its cell or the cell is carried to the next one
//! ([`Grid::carry_lone_member`]), since in most updates nothing but the walker itself reads that
//! cell, and the walker's own scans skip its own member. In a sparse world that is most of the
//! moves, each a member and a position block scattered over the heap (`sparse_huge` 50k: see
//! `PERFORMANCE.md`, stops 84 and 85).
//!
//! Why no scan judges such a member wrongly. Its entity started the update in a cell that was
//! lone then, and is in its member's cell now (the same cell, or the one it was carried to); its
//! member may say otherwise (written as it crossed into the cell, it holds a start in the cell it
//! left; not written at the carry, it holds where it was before). Every scan judges a pair by
//! distance tests of at most [the largest ordinary radius](AoiIndex::stale_members_unread), each
//! between two points at the same time (where both were at the start of the update, or where both are now). While that
//! reach is under a cell's side, an entity that started the update in none of the cells around
//! the stale member's start cell, and ends it in none of the cells around its cell now, sees it at
//! neither end and is seen by it at neither. A move leaves a member stale only if its cell was
//! lone at the start of the moves ([`AoiIndex::may_leave_stale`], asked before any cell change):
//! nobody started the update next to it. Before the scans, [`AoiIndex::write_stale_members`]
//! writes those whose cells lost their lone bit in the moves ([`Grid::lost_lone`]; a carried cell
//! that lands next to others loses it then), and every one when the update's scans reach farther
//! or judge without distance (a wide observer changed, a jumped target is or was `Always` visible,
//! views as wide as the cells). So at the scans, no entity but a stale member's own started the
//! update next to its start cell or ends it next to its cell: a scan lists that cell only where
//! its window reaches past the cells around its scanner's, and there leaves it out
//! (`View::drop_stale_cells` in `scan.rs`). A rebuilt grid writes every member. Between updates,
//! [`AoiIndex::observers_seeing`] searches the cells around an entity by where members are now (a
//! stale member's position lies in its cell), and meets a stale member only in a whole instance,
//! where it judges without distance.

use super::AoiIndex;
use crate::{bits, grid::CellKey};

#[cfg(doc)]
use crate::grid::Grid;

/// Which grid members are stale, and what this update allows.
#[derive(Default)]
pub(super) struct LazyMembers {
    /// Bit `s` is set while slot `s`'s grid member may be stale: written by an earlier update, so
    /// that only its slot, its cell and its index there are right. (The split's edits in place,
    /// `index/moves.rs`, write members whole without clearing their bits: such a bit costs one
    /// more write.)
    stale: Vec<u64>,
    /// Whether this update's moves may leave members stale: the grid index without bounds.
    allowed: bool,
    /// Whether some jumped change of this update is or was `Always` visible (its target scan
    /// searches its whole instance, and judges without distance; a stepping one's does not).
    pub always_jumped: bool,
}

impl AoiIndex {
    /// Before the moves of an update: forgets the cells that lost their lone bit in the last
    /// ([`Grid::begin_moves`]) and notes whether members may be left stale.
    pub(super) fn begin_lazy_writes(&mut self) {
        self.grid.begin_moves();
        self.lazy.allowed = self.grid.windows_fit_near_origin(0.0);
        self.lazy.always_jumped = false;
        let words = self.slots.len().div_ceil(64);
        if self.lazy.stale.len() < words {
            self.lazy.stale.resize(words, 0);
        }
    }

    /// Whether the move of changed slot `s`, whose cell is now that of `key`, may leave its grid
    /// member stale, if it stays in its cell or its cell is carried there: members may be left
    /// stale this update, its cell is lone, its view did not change, and the cell of `key` is
    /// near the origin (where [`Grid::windows_fit_near_origin`] answers; a carry checks the cell
    /// it leaves as well, `AoiIndex::move_one`). Asked while the members that stay are edited,
    /// before any cell change of the update ([`AoiIndex::classify_and_move`]), so the cell was
    /// lone at the start of the moves: no entity started the update in the cells around. (If it
    /// is not lone when the moves are done, [`Self::write_stale_members`] writes it.) Reads the
    /// slot and a bit.
    #[inline(always)]
    pub(super) fn may_leave_stale(&self, s: u32, key: CellKey) -> bool {
        let slot = &self.slots[s as usize];
        // The cheapest first: a crowd's members fail the lone bit.
        self.lazy.allowed && self.grid.is_lone(slot.cell) && !slot.view_changed() && self.grid.near_origin(key)
    }

    /// Marks slot `s`'s member stale.
    #[inline(always)]
    pub(super) fn leave_stale(&mut self, s: u32) {
        bits::insert(&mut self.lazy.stale, s as usize);
    }

    /// Marks slot `s`'s member as written (a move wrote it whole, or it left the grid).
    #[inline(always)]
    pub(super) fn note_written(&mut self, s: u32) {
        let s = s as usize;
        if s / 64 < self.lazy.stale.len() {
            bits::remove(&mut self.lazy.stale, s);
        }
    }

    /// Whether slot `s`'s grid member is stale. `O(1)`.
    #[inline(always)]
    pub(super) fn is_stale(&self, s: u32) -> bool {
        bits::contains_or_past(&self.lazy.stale, s as usize)
    }

    /// Whether this update's scans leave the stale members of lone cells unread, once the
    /// moves are done: no wide observer changed (its scans reach past the adjacent cells), no
    /// jumped target is or was `Always` visible (its scan judges without distance), and the
    /// largest ordinary radius, the farthest any distance test of a scan reaches (each tests
    /// two points at the same time, start or now, against one observer's view), with its
    /// rounding margin, is under 63/64 of a cell's side ([`Grid::windows_fit_near_origin`]):
    /// less than two points of cells that are not adjacent are apart, near the origin.
    fn stale_members_unread(&self) -> bool {
        !self.lazy.always_jumped
            && self.wide.slots.iter().all(|&w| !self.slots[w as usize].on_shortlist())
            && self.grid.windows_fit_near_origin(self.ordinary_reach())
    }

    /// After the moves, before any scan: writes the stale members the scans may read. Those of
    /// the cells that lost their lone bit in the moves, or every one when the scans may read
    /// any ([`Self::stale_members_unread`] does not hold). (A rebuilt grid wrote every member.)
    /// `O(cells that lost their lone bit)`, or `O(slots / 64 + stale members)`.
    pub(super) fn write_stale_members(&mut self) {
        if self.stale_members_unread() {
            let lost = core::mem::take(&mut self.grid.lost_lone);
            for &c in &lost {
                for idx in 0..self.grid.cells[c as usize].members.len() {
                    let s = self.grid.cells[c as usize].members[idx].slot;
                    if self.is_stale(s) {
                        self.write_member(s);
                    }
                }
            }
            self.grid.lost_lone = lost;
            return;
        }
        let mut stale = core::mem::take(&mut self.lazy.stale);
        for s in bits::iter(&stale) {
            self.write_member(s as u32);
        }
        stale.fill(0);
        self.lazy.stale = stale;
    }

    /// Bit `s` is set while slot `s`'s grid member is stale (the slice may end before the last
    /// slot's word: the bits past it are clear).
    pub(crate) fn stale_member_bits(&self) -> &[u64] {
        &self.lazy.stale
    }

    /// How many grid members are stale. `O(slots / 64)`.
    pub(super) fn stale_members(&self) -> usize {
        self.lazy.stale.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Writes slot `s`'s grid member whole, from its slot (in its cell, as it was).
    fn write_member(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        let (c, idx) = (slot.cell, slot.member_index);
        self.write_whole_member(s, c, idx);
    }

    /// Renames the stale members' slots by `new_of_old` (a renumbering).
    pub(super) fn remap_stale(&mut self, new_of_old: &[u32]) {
        let old = core::mem::take(&mut self.lazy.stale);
        let mut stale = vec![0; new_of_old.len().div_ceil(64)];
        for s in bits::iter(&old) {
            bits::insert(&mut stale, new_of_old[s] as usize);
        }
        self.lazy.stale = stale;
    }
}
