//! The shortlist through the update: sorted, then classified (stepping or jumped) and moved in
//! the grid (`moves.rs`) before the pair engine runs ([`AoiIndex::apply_changes`]), and cleared
//! after it ([`AoiIndex::end_tick`]); the grid members it changed are settled at the start of the
//! next update ([`AoiIndex::settle_members`]).

use bevy_tasks::TaskPool;

use super::AoiIndex;
use crate::{
    config::{CellSize, MAX_CELL_SIZE, MIN_CELL_SIZE},
    grid::{Grid, Member, NO_CELL},
    slot::{Flag, Slot},
    wide::{threshold, wide_limit},
};

/// How much larger than the largest view radius the automatic cell side is: enough that a
/// stepping observer's flip scan (its radius, plus its step and the tick's largest step) stays
/// within the cells adjacent to its own while those two steps are under an eighth of the radius,
/// so a cell group's window is its neighbour list rather than 25 cells looked up by key.
/// Measured (`PERFORMANCE.md`, stop 32): 1.125 against 1.0625, uniform 50k one thread 48.6–48.9
/// → 45.3–47.1 ms an update, two threads 28.8–29.8 → 27.3–27.9 ms; 1.25 no better.
const AUTO_SIDE_OVER_RADIUS: f32 = 1.125;

impl AoiIndex {
    /// Settles the members the last update left ([`Self::settle_members`]), adds the standing
    /// observers of the cells where (with their neighbours) at least `busy_cell_share` of the
    /// members changed ([`Self::scan_standing_in_busy_cells`]), puts the changed slots in slot
    /// order, sorts them into stepping and jumped ones (stepping observers take the flip scan if
    /// they saw at least `flip_scan_min_seen` targets), then moves them in the grid (rebuilding
    /// it if the automatic cell side must change) and, for the sorted-axes index, restores the
    /// order of the lists ([`Grid::restore_order`]). Until the next update settles them, their
    /// members carry what the scans need: recomputing observers `r2 = -1` (target scans skip
    /// them), stepping ones their start position; except the members of walkers alone around
    /// their cells, which may be left stale while no scan reads them
    /// ([`super::lazy_members`]; written here otherwise, [`Self::write_stale_members`]). With
    /// `pool`, the classification and the moves are split over it ([`Self::classify_and_move`]).
    pub fn apply_changes(&mut self, flip_scan_min_seen: usize, busy_cell_share: f32, pool: Option<&TaskPool>) {
        // This update's count of standing observers added, also when there is nothing to add to.
        self.busy.scanned = 0;
        if self.changes.is_empty() {
            return;
        }
        self.settle_members();
        self.scan_standing_in_busy_cells(busy_cell_share, flip_scan_min_seen);
        // In slot order, which is space order after a renumbering: the passes over the changes
        // then walk the slots, cells and lists nearly in memory order instead of the order the
        // ECS found the entities in.
        self.change_keys
            .sort(&mut self.changes, &mut self.spare_changes, |c| c.slot);
        // Where each changed slot was at the start of the tick, for its grid member and its flip
        // scan (in slot order: one stream of writes).
        for ch in &self.changes {
            self.starts[ch.slot as usize] = ch.old_p;
        }
        self.update_wide();
        self.place_wide();
        let rebuild = self.wanted_side();
        self.begin_lazy_writes();
        self.classify_and_move(flip_scan_min_seen, rebuild.is_none(), pool);
        if let Some(side) = rebuild {
            self.rebuild(side);
        }
        self.write_stale_members();
        let slots = &mut self.slots;
        // Members that changed places in a sorted cell count like cell changes in the grid.
        self.relinks += self.grid.restore_order(|s, idx| slots[s as usize].member_index = idx);
    }

    /// Re-derives the wide threshold from the radii when it moved far enough
    /// ([`WideObservers::settled`](crate::wide::WideObservers::settled)); then reclassifies every
    /// observer (`O(slots)`) and lists the wide ones in slot order.
    fn update_wide(&mut self) {
        let limit = wide_limit(self.observers);
        let above = threshold(&self.radii, limit);
        if self.wide.settled(above, limit) {
            return;
        }
        self.wide.above = above;
        self.wide.slots.clear();
        for s in 0..self.slots.len() {
            let slot = &mut self.slots[s];
            let wide = slot.is_observer() && self.wide.is_wide(slot.radius);
            if wide {
                self.wide.slots.push(s as u32);
            }
            if wide != slot.wide() {
                slot.set_wide(wide);
                let (cell, idx, r2) = (slot.cell, slot.member_index, slot.scan_r2());
                if cell != NO_CELL {
                    self.grid.edit_member(cell, idx, |m| m.r2 = r2);
                }
            }
        }
    }

    /// Refreshes [`WideObservers::places`](crate::wide::WideObservers::places) from the slots.
    fn place_wide(&mut self) {
        let mut places = core::mem::take(&mut self.wide.places);
        places.clear();
        for &w in &self.wide.slots {
            let slot = &self.slots[w as usize];
            let member = Member {
                r2: if slot.on_shortlist() { -1.0 } else { slot.r2 },
                ..self.member(w)
            };
            places.push(&member);
        }
        self.wide.places = places;
    }

    /// The side the automatic cell size wants now, if it differs from the current one.
    fn wanted_side(&mut self) -> Option<f32> {
        if self.cell_size != CellSize::Auto {
            return None;
        }
        let max = self.ordinary_reach();
        if max <= 0.0 {
            return None;
        }
        let side = self.grid.side();
        if self.side_chosen && max >= side * 0.5 && max <= side * 2.0 {
            return None;
        }
        self.side_chosen = true;
        // A little over the largest ordinary radius, so a view from anywhere in a cell, with the
        // window's rounding margin and the tick's steps, stays within the adjacent cells.
        Some((max * AUTO_SIDE_OVER_RADIUS).clamp(MIN_CELL_SIZE, MAX_CELL_SIZE))
    }

    /// Re-buckets every indexed slot into a grid with a new side, each member written anew (none
    /// stays stale, [`super::lazy_members`]).
    fn rebuild(&mut self, side: f32) {
        log::debug!("bevy_aoi: cell side {} -> {side}", self.grid.side());
        self.grid = Grid::new(side, self.plane.dims(), self.bounds, self.grid.kind());
        for s in 0..self.slots.len() as u32 {
            self.note_written(s);
            let slot = &mut self.slots[s as usize];
            slot.cell = NO_CELL;
            if slot.in_grid() {
                let key = self.grid.key(slot.p, slot.rules.instance);
                self.link(s, key);
            }
        }
    }

    /// Clears the shortlist: the slots that turned are recorded for the messages' reasons,
    /// changed observers become clean again, and slots of entities that lost their `Position`
    /// are freed (their numbers are reused from the next tick on).
    ///
    /// Their grid members keep this update's radius for target scans, start position and step
    /// flags until [`Self::settle_members`] resets them at the start of the next update with
    /// changes, before any scan (a slot that changes again gets a new member from its move
    /// instead). Between updates the one reader of members, [`Self::observers_seeing`], takes
    /// the radius from the slot. Where most entities move every update that is one grid edit
    /// a change instead of two (the member, its cell and its position block are scattered).
    /// Measured (`scenario`, one thread, 50k, three alternating runs with phase timers): this
    /// pass 1.4-1.5 ms → 0.22 ms and the settling 0.15-0.19 ms for uniform, 1.2 → 0.24 and
    /// 0.13-0.16 ms for `sparse_huge`; the moves after it unchanged within 0.25 ms.
    pub fn end_tick(&mut self) {
        for i in 0..self.changes.len() {
            // In the same pass as the reset below, which does not change what turned.
            self.record_if_turned(i);
            let s = self.changes[i].slot as usize;
            let slot = &mut self.slots[s];
            slot.clear(&[Flag::OnShortlist, Flag::Stepping, Flag::Jumped, Flag::ViewChanged]);
            if slot.cell != NO_CELL {
                slot.set_unsettled(true);
                self.unsettled.push(s as u32);
            }
            if !slot.has_position() {
                debug_assert!(
                    slot.cell == NO_CELL,
                    "a slot without Position should have left the grid"
                );
                let entity = self.entities[s];
                self.set_owned(s as u32, false);
                self.by_entity.remove(entity);
                // Free the buffer: a reused slot should not inherit another entity's capacity.
                self.lists[s] = Vec::new();
                self.free_slots.push(s as u32);
            }
        }
        self.changes.clear();
        self.step_reach = 0.0;
        debug_assert_eq!(
            self.narrow_observers,
            self.slots.iter().filter(|slot| slot.sees_some_layers()).count(),
            "the count of observers that see only some layers should follow their slots"
        );
        debug_assert!(
            (0..)
                .zip(&self.slots)
                .all(|(s, slot)| self.touches.is_owned(s) == slot.owned()),
            "the bits of the slots the view layer owns should follow their slots"
        );
    }

    /// Resets the grid members [`Self::end_tick`] left unsettled, except those of slots on this
    /// update's shortlist (their moves write new members) and stale ones (written whole when they
    /// are written, [`super::lazy_members`]): their start position becomes their position, and
    /// they step no more. Runs before the moves, so every scan of this update reads settled
    /// members. Change pickup counts the unsettled slots that are back on the shortlist; when all
    /// are, this is `O(1)`.
    fn settle_members(&mut self) {
        // Where everything that changed last update changed again (everyone moving, or the same
        // few), there is nothing to settle: no pass over their slots.
        debug_assert!(
            self.unsettled_back <= self.unsettled.len(),
            "only unsettled slots should be counted back"
        );
        let back = core::mem::take(&mut self.unsettled_back);
        if back == self.unsettled.len() {
            self.unsettled.clear();
            return;
        }
        let settles = |slot: &Slot| slot.unsettled() && slot.cell != NO_CELL;
        for i in 0..self.unsettled.len() {
            self.prefetch_grid_ahead(i, |i| self.unsettled.get(i).copied(), settles);
            let s = self.unsettled[i];
            // A stale member is written whole when it is written ([`super::lazy_members`]).
            let stale = self.is_stale(s);
            let slot = &mut self.slots[s as usize];
            let settled_now = settles(slot) && !stale;
            // Off the list, whichever way: the flag marks exactly the slots on it.
            slot.set_unsettled(false);
            if settled_now {
                let (c, idx, r2, p) = (slot.cell, slot.member_index, slot.settled_r2(), slot.p);
                self.grid.edit_member(c, idx, |m| {
                    m.r2 = r2;
                    m.start_p = p;
                    m.stepping = false;
                    m.jumped = false;
                });
            }
        }
        self.unsettled.clear();
    }
}
