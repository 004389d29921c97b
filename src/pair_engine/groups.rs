//! The changed observers grouped by cell, so each group's window is looked up once (a wide
//! observer in a group of its own); those that [see nobody](sees_nobody) around them are left
//! out, as they need no scan.

use std::collections::BTreeMap;

use crate::{
    grid::{Grid, NO_CELL},
    prefetch::AHEAD,
    slot::Change,
    slot::Slot,
    visibility::sees_no_layer,
};

/// Changed observers grouped by cell (a counting sort over the touched cells only), kept
/// between updates. A group's window is its widest view's, so a changed wide observer
/// ([`crate::wide`]) has a group of its own: grouped with its cell's ordinary observers, it made
/// them scan its whole window (callgrind, `scenario --entities 10000 --single-thread --towers 10
/// --towers-walk`, ten radius-1000 observers walking among 10k walkers: 85.6 → 67.5 M
/// instructions an update, against 62.2 M without them).
#[derive(Default)]
pub(crate) struct Groups {
    /// Each group's cell, in first-seen order (a cell may head several groups: its ordinary
    /// observers' and each wide one's), and where the group starts in `order`.
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
    /// Changed observers left out of the groups because they [see nobody](sees_nobody) (this
    /// update's count).
    pub alone: usize,
    /// The changed slots that are not observers but saw something (their lists are not empty):
    /// they stopped observing. In shortlist order; found by the same pass, so the engine does not
    /// walk the shortlist and its slots again to find them.
    pub stopped: Vec<u32>,
}

/// What [`Groups::group`] reads besides the grid: the slots, each slot's list (what it saw at
/// the start of the update), the `Always`-visible slots per instance, and whether the window of
/// every ordinary view [fits near the origin](Grid::windows_fit_near_origin).
pub(crate) struct Observers<'a> {
    pub slots: &'a [Slot],
    pub lists: &'a [Vec<u32>],
    pub always: &'a BTreeMap<u32, Vec<u32>>,
    pub windows_fit: bool,
}

/// Whether changed observer `s` (its slot `slot`) sees nobody now and saw nobody at the start of
/// the update, so no pair with it as observer changes and it needs no scan: its list is empty, and
/// either it sees no layer (the rule's verdict is then never, whatever the distance or the target's
/// visibility mode: an item in a world of players and monsters), or no slot of its instance is
/// `Always` visible and its view now reaches no cell beyond those adjacent to its own
/// ([`Grid::window_within_one_cell`]), which hold nobody but itself. Most observers of a sparse
/// world are such (`sparse_huge`: nearly all). Not for a stepping observer: its flip scan may also
/// judge, as a target, the unchanged observers that see it, a little beyond its own view
/// ([`Slot::flip_scans_as_target`](crate::slot::Slot::flip_scans_as_target)). An observer the view
/// layer owns may be left out too: the layer walks its list (empty) whenever it changed. `O(1)`:
/// its list and its cell's [lone](Grid::is_lone) bit (its cell record only where the windows'
/// shortcut near the origin does not apply, [`Grid::holds_one_member_only`]).
#[inline]
fn sees_nobody(grid: &Grid, observers: &Observers, s: u32, slot: &Slot) -> bool {
    if slot.stepping() || !observers.lists[s as usize].is_empty() {
        return false;
    }
    if sees_no_layer(slot.rules.sees) {
        return true;
    }
    if observers.always.contains_key(&slot.rules.instance) {
        return false;
    }
    // A wide observer's view is larger than the ordinary ones.
    let fits = observers.windows_fit && !slot.wide();
    grid.holds_one_member_only(slot.cell, slot.p, slot.view_extent(), fits)
}

impl Groups {
    /// Groups the observers among `changes` by cell (each wide one alone), leaving out those
    /// that [see nobody](sees_nobody), and lists the changes that [stopped](Self::stopped)
    /// observing. Only the first pass reads cell records, those of the observers whose cell is
    /// not [lone](Grid::is_lone) (each asked for a few changes ahead: cells are scattered over
    /// the heap; in a sparse world nearly every cell is lone, and its bit says so without its
    /// record); the others run over the sort's own buffers.
    pub fn group(&mut self, grid: &mut Grid, observers: &Observers, changes: &[Change]) {
        let slots = observers.slots;
        self.tag = self.tag.wrapping_add(1);
        if self.tag == 0 {
            grid.cells.iter_mut().for_each(|c| c.tag = 0);
            self.tag = 1;
        }
        self.cells.clear();
        self.grouped.clear();
        self.stopped.clear();
        self.alone = 0;
        for (i, change) in changes.iter().enumerate() {
            if let Some(ahead) = changes.get(i + AHEAD) {
                // A lone cell's record is read only off the shortcut of `holds_one_member_only`.
                let cell = slots[ahead.slot as usize].cell;
                if cell != NO_CELL && !grid.is_lone(cell) {
                    grid.prefetch_cell(cell);
                }
            }
            let slot = &slots[change.slot as usize];
            if slot.is_observer() {
                if sees_nobody(grid, observers, change.slot, slot) {
                    self.alone += 1;
                    continue;
                }
                let group = if slot.wide() {
                    // A group of its own: a group's window is its widest view's, and the
                    // ordinary observers of its cell would otherwise scan that whole window too.
                    self.cells.push((slot.cell, 0));
                    self.cells.len() as u32 - 1
                } else {
                    let cell = &mut grid.cells[slot.cell as usize];
                    if cell.tag != self.tag {
                        cell.tag = self.tag;
                        cell.group = self.cells.len() as u32;
                        self.cells.push((slot.cell, 0));
                    }
                    cell.group
                };
                self.cells[group as usize].1 += 1;
                self.grouped.push((i as u32, group));
            } else if !observers.lists[change.slot as usize].is_empty() {
                self.stopped.push(change.slot);
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

#[cfg(test)]
mod tests {
    use bevy_app::App;

    use crate::{pair_engine::AoiPairEngine, prelude::*};

    /// Observers far from everyone are left out of the groups whatever changed (a move, a new
    /// radius); those with a neighbour around them are not, even if they see nobody.
    #[test]
    fn observers_alone_around_their_cell_are_left_out_of_the_groups() {
        let mut app = App::new();
        app.add_plugins(AoiPlugin {
            cell_size: CellSize::Fixed(100.0),
            ..Default::default()
        });
        let far_apart = [0.0, 1000.0, 2000.0].map(|x| {
            app.world_mut()
                .spawn((Position::new(x, 0.0), ViewRange::new(50.0)))
                .id()
        });
        // Two in adjacent cells, 180 apart: neither sees the other, but each has a neighbour.
        let pair = [5000.0, 5180.0].map(|x| {
            app.world_mut()
                .spawn((Position::new(x, 0.0), ViewRange::new(50.0)))
                .id()
        });
        app.update();
        for (i, e) in far_apart.into_iter().chain(pair).enumerate() {
            let mut entity = app.world_mut().entity_mut(e);
            if i == 1 {
                entity.insert(ViewRange::new(60.0));
            } else {
                entity.get_mut::<Position>().expect("it should have a Position").y += 1.0;
            }
        }
        app.update();
        let engine = &app.world().resource::<AoiPairEngine>().0;
        assert_eq!(
            engine.groups.alone, 3,
            "the three far-apart observers should have been left out"
        );
        assert_eq!(
            engine.groups.order.len(),
            2,
            "the two with a neighbour should have been grouped"
        );
    }

    /// Observers that see no layer are left out of the groups even among neighbours (they see
    /// nobody, whatever the distance), unless they saw someone at the start of the update.
    #[test]
    fn observers_that_see_no_layer_are_left_out_of_the_groups() {
        let mut app = App::new();
        app.add_plugins(AoiPlugin {
            cell_size: CellSize::Fixed(100.0),
            ..Default::default()
        });
        let crowd: Vec<_> = (0..4)
            .map(|i| {
                app.world_mut()
                    .spawn((Position::new(i as f32 * 10.0, 0.0), ViewRange::new(50.0)))
                    .id()
            })
            .collect();
        // The first two see no layer from the start; the third sees everyone, then nothing.
        for &e in &crowd[..2] {
            app.world_mut().entity_mut(e).insert(AoiLayers::new(1, 0));
        }
        app.update();
        assert_eq!(
            app.world().get::<InterestSet>(crowd[2]).map(InterestSet::len),
            Some(3),
            "the third should see the other three before its layers change"
        );
        for (i, &e) in crowd.iter().enumerate() {
            let mut entity = app.world_mut().entity_mut(e);
            entity.get_mut::<Position>().expect("it should have a Position").y += 1.0;
            if i == 2 {
                entity.insert(AoiLayers::new(1, 0));
            }
        }
        app.update();
        let engine = &app.world().resource::<AoiPairEngine>().0;
        assert_eq!(
            engine.groups.alone, 2,
            "the two that saw nobody and see no layer should have been left out"
        );
        assert_eq!(
            engine.groups.order.len(),
            2,
            "the one that lost its layers (it must leave its targets) and the one that sees \
             everyone should have been grouped"
        );
        assert_eq!(
            app.world().get::<InterestSet>(crowd[2]).map(InterestSet::len),
            Some(0),
            "the one that lost its layers should see nobody"
        );
    }

    /// A changed wide observer is grouped alone, so the ordinary observers of its cell keep the
    /// window of their own views rather than scanning its.
    #[test]
    fn a_wide_observer_is_grouped_apart_from_its_cells_ordinary_ones() {
        let mut app = App::new();
        app.add_plugins(AoiPlugin {
            cell_size: CellSize::Fixed(50.0),
            ..Default::default()
        });
        // One cell: three radius-10 observers and one of radius 100 (wide: over twice the
        // others' radius).
        let observers = [(0.0, 10.0), (5.0, 10.0), (10.0, 10.0), (15.0, 100.0)]
            .map(|(x, r)| app.world_mut().spawn((Position::new(x, 1.0), ViewRange::new(r))).id());
        app.update();
        for e in observers {
            let mut entity = app.world_mut().entity_mut(e);
            entity.get_mut::<Position>().expect("it should have a Position").y += 1.0;
        }
        app.update();
        assert_eq!(
            app.world().resource::<AoiStats>().wide_observers,
            1,
            "one observer should be wide"
        );
        let groups = &app.world().resource::<AoiPairEngine>().0.groups;
        let sizes: Vec<usize> = (groups.cells.iter().map(|g| g.1 as usize))
            .chain([groups.order.len()])
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        assert_eq!(
            sizes,
            [3, 1],
            "the ordinary observers should share one group and the wide one have its own"
        );
        assert!(
            groups.cells.iter().all(|g| g.0 == groups.cells[0].0),
            "both groups should be of the one cell"
        );
    }
}
