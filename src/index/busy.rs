//! Busy cells: where a good share of the entities in and around a cell changed this update
//! ([`AoiSettings::busy_cell_share`](crate::AoiSettings::busy_cell_share)), its standing
//! observers are put on the shortlist too, as steps of length zero
//! ([`AoiIndex::scan_standing_in_busy_cells`]).
//!
//! A standing (unchanged) observer's pairs with the movers around it are otherwise decided by
//! each mover: its flip scan judges the standing observers in its window as a target (the
//! both-ways scan, one mover at a time) and the flips become edits of the standing observers'
//! lists and sets, scattered over the heap. Where much of a crowd moves that costs more than the
//! standing observers scanning for themselves: each then takes the flip scan (the same two
//! tests per member; a step of length zero is a step like any other, so the table of who decides
//! which pair, in `pair_engine.rs`, is unchanged), its flips merged into its set at once, and a
//! window without standing observers lets its movers share their passes
//! ([`crate::scan`], the batched flip scans). Which observers are scanned changes only the speed:
//! every pair is decided exactly once either way.
//!
//! The grid index only: the sorted-axes index scans one observer at a time (no batches), and
//! its one cell per instance makes the share the instance's, so the rule would add every standing
//! observer; measured there, slower (`PERFORMANCE.md`, stop 40).

use super::AoiIndex;
use crate::{
    config::IndexKind,
    grid::{Grid, NO_CELL},
    slot::Change,
};

/// The shortlist's changes counted by cell (the cell a changed entity was in before the tick),
/// to find the busy cells; the buffers are kept between updates.
#[derive(Default)]
pub(crate) struct BusyCells {
    /// Per cell: how many of its members changed (0 for the cells not in `cells`).
    counts: Vec<u32>,
    /// The cells with a count, in the order they were first counted.
    cells: Vec<u32>,
    /// The standing observers this update put on the shortlist (read for the stats after the
    /// shortlist is cleared; reset when the next update applies its changes).
    pub scanned: usize,
}

impl BusyCells {
    /// Counts a change of a member of `cell` ([`NO_CELL`]: an entity not in the grid, not
    /// counted).
    #[inline]
    fn count(&mut self, cell: u32) {
        if cell == NO_CELL {
            return;
        }
        let c = cell as usize;
        if c >= self.counts.len() {
            self.counts.resize(c + 1, 0);
        }
        if self.counts[c] == 0 {
            self.cells.push(cell);
        }
        self.counts[c] += 1;
    }

    /// How many members of cell `c` changed.
    #[inline]
    fn of(&self, c: u32) -> u32 {
        self.counts.get(c as usize).copied().unwrap_or(0)
    }

    /// Whether at least `share` of the members of cell `c` and of its neighbours changed. The
    /// neighbours are counted too because a cell's movers and standing observers scan the
    /// cells around it, and because they smooth the share of a cell of a few members (where
    /// some cells of a crowd are busy and some not, the movers next to the standing observers
    /// left pay as before, and the scanned ones pay too: measured, worse than either). A cell
    /// where under half the share changed is not busy whatever its neighbours (none is read).
    fn is_busy(&self, grid: &Grid, c: u32, share: f32) -> bool {
        let Some(cell) = grid.cells.get(c as usize) else {
            return false;
        };
        let (mut changed, mut members) = (self.of(c), cell.members.len());
        if (changed as f32) < 0.5 * share * members as f32 {
            return false;
        }
        for &n in &cell.near {
            changed += self.of(n);
            members += grid.cells[n as usize].members.len();
        }
        // A share that is not a number makes no cell busy.
        changed as f32 >= share * members as f32
    }
}

impl AoiIndex {
    /// Puts on the shortlist, as steps of length zero, the standing observers of the cells
    /// where, with their neighbours, at least `share` of the members changed (module doc): those
    /// that would take the flip scan (they saw at least `flip_scan_min_seen` targets), are not
    /// wide, and are not the view layer's (it looks at the observers that changed,
    /// [`Touches`](super::Touches)). Runs after the members are settled and before the shortlist
    /// is put in slot order (the one sort places them too). Costs a pass over the shortlist and
    /// its slots (read by the pickup a moment before; carrying each change's cell in its record
    /// instead did not pay, `PERFORMANCE.md` stop 40), a look at each cell where something
    /// changed (and its neighbours, if it is nearly busy itself) and a pass over the members of
    /// the busy ones. Where every entity changed there is nobody to add, with a share above 1
    /// (or not a number) no cell can be busy, and the sorted-axes index has no busy cells
    /// (module doc): nothing is counted.
    pub(super) fn scan_standing_in_busy_cells(&mut self, share: f32, flip_scan_min_seen: usize) {
        let busy = &mut self.busy;
        let someone_stands = self.changes.len() < self.slots.len() - self.free_slots.len();
        let can_be_busy = share <= 1.0 && self.grid.kind() == IndexKind::Grid;
        if !someone_stands || !can_be_busy {
            return;
        }
        for ch in &self.changes {
            busy.count(self.slots[ch.slot as usize].cell);
        }
        for &c in &busy.cells {
            if !busy.is_busy(&self.grid, c, share) {
                continue;
            }
            for m in &self.grid.cells[c as usize].members {
                let slot = &mut self.slots[m.slot as usize];
                let scans = slot.is_observer()
                    && !slot.on_shortlist()
                    && !slot.wide()
                    && !slot.owned()
                    && self.lists[m.slot as usize].len() >= flip_scan_min_seen;
                if scans {
                    slot.set_on_shortlist(true);
                    self.changes.push(Change::from_slot(m.slot, slot));
                    busy.scanned += 1;
                }
            }
        }
        for &c in &busy.cells {
            busy.counts[c as usize] = 0;
        }
        busy.cells.clear();
    }
}
