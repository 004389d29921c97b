//! The changed observers grouped by cell, so each group's window is looked up once.

use crate::{grid::Grid, prefetch::AHEAD, slot::Change, slot::Slot};

/// Changed observers grouped by cell (a counting sort over the touched cells only), kept
/// between updates.
#[derive(Default)]
pub(crate) struct Groups {
    /// Cells holding changed observers, in first-seen order, and where each group starts in
    /// `order`.
    pub cells: Vec<(u32, u32)>,
    /// The changed observers' slots, group after group (each group in shortlist order).
    pub order: Vec<u32>,
    /// The changed observers' places in the shortlist with their groups, in shortlist order, and
    /// each group's next place in `order`: the counting sort's own buffers.
    grouped: Vec<(u32, u32)>,
    cursors: Vec<u32>,
    /// The value of [`Cell::tag`](crate::grid::Cell::tag) that marks a cell as grouped in this
    /// update.
    tag: u32,
}

impl Groups {
    /// Groups the observers among `changes` by cell. Only the first pass reads the cell records
    /// (each asked for a few changes ahead: in a sparse world every change has a cell of its
    /// own, scattered over the heap); the others run over the sort's own buffers.
    pub fn group(&mut self, grid: &mut Grid, slots: &[Slot], changes: &[Change]) {
        self.tag = self.tag.wrapping_add(1);
        if self.tag == 0 {
            grid.cells.iter_mut().for_each(|c| c.tag = 0);
            self.tag = 1;
        }
        self.cells.clear();
        self.grouped.clear();
        for (i, change) in changes.iter().enumerate() {
            if let Some(ahead) = changes.get(i + AHEAD) {
                grid.prefetch_cell(slots[ahead.slot as usize].cell);
            }
            let slot = &slots[change.slot as usize];
            if slot.is_observer() {
                let cell = &mut grid.cells[slot.cell as usize];
                if cell.tag != self.tag {
                    cell.tag = self.tag;
                    cell.group = self.cells.len() as u32;
                    self.cells.push((slot.cell, 0));
                }
                self.cells[cell.group as usize].1 += 1;
                self.grouped.push((i as u32, cell.group));
            }
        }
        // Counts become starts.
        let mut start = 0;
        self.cursors.clear();
        for g in &mut self.cells {
            (g.1, start) = (start, start + g.1);
            self.cursors.push(g.1);
        }
        self.order.clear();
        self.order.resize(start as usize, 0);
        for &(i, g) in &self.grouped {
            let at = &mut self.cursors[g as usize];
            self.order[*at as usize] = changes[i as usize].slot;
            *at += 1;
        }
    }
}
