//! The shortlist through the update: sorted and classified (stepping or jumped), moved in the
//! grid before the pair engine runs ([`AoiIndex::apply_changes`]), and cleared after it
//! ([`AoiIndex::end_tick`]); the grid members it changed are settled at the start of the next
//! update ([`AoiIndex::settle_members`]).

use super::{AoiIndex, step_limit::StepLimits};
use crate::{
    config::{CellSize, MAX_CELL_SIZE, MIN_CELL_SIZE},
    grid::{CellKey, Grid, Member, NO_CELL},
    prefetch::AHEAD,
    rules::AoiVisibility,
    slot::{Flag, STEP_SLACK, Slot},
    visibility::{always_in, dist2, scan_layers},
    wide::{threshold, wide_limit},
};

/// What [`AoiIndex::classify_step`] compares a change with.
struct StepRules {
    /// The longest step in force (farther is a jump), and the others to count moves against.
    limits: StepLimits,
    /// The ordinary reach: a stepping disc observer at least this large scans as a target too.
    reach: f32,
    /// A stepping observer takes the flip scan if it saw at least this many targets.
    flip_scan_min_seen: usize,
}

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
    /// them), stepping ones their start position.
    pub fn apply_changes(&mut self, flip_scan_min_seen: usize, busy_cell_share: f32) {
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
        self.classify_and_move(flip_scan_min_seen, rebuild.is_none());
        if let Some(side) = rebuild {
            self.rebuild(side);
        }
        let slots = &mut self.slots;
        // Members that changed places in a sorted cell count like cell changes in the grid.
        self.relinks += self.grid.restore_order(|s, idx| slots[s as usize].member_index = idx);
    }

    /// One pass over the shortlist: keeps the `Always` lists in step ([`Self::update_always`]),
    /// sorts each change into stepping or jumped ([`Self::classify_step`]) and, when `moves`,
    /// moves it in the grid (or edits its member in place); records the largest step. One pass
    /// over the changes and their slots rather than three: uniform 50k, one thread, three
    /// alternating runs with phase timers, the index's whole update after change pickup 3.65-3.78
    /// → 3.18-3.28 ms.
    fn classify_and_move(&mut self, flip_scan_min_seen: usize, moves: bool) {
        let steps = StepRules {
            limits: self.step_limit.limits(self.grid.side()),
            // A flip scan finds the clean observers that see the scanning target too when its
            // window holds every cell the target scan would search (the ordinary reach around
            // both of its points).
            reach: self.ordinary_reach(),
            flip_scan_min_seen,
        };
        let mut largest = 0.0f32;
        self.stepped = 0;
        // The new cell key of change `j` at `j % AHEAD`, from `AHEAD` changes before its move on,
        // where its cell change is asked for ahead ([`Self::key_ahead`]).
        let mut keys = [CellKey::default(); AHEAD];
        for (j, key) in keys.iter_mut().enumerate().take(self.changes.len()) {
            *key = self.key_ahead(j);
        }
        for i in 0..self.changes.len() {
            if moves {
                self.prefetch_grid_ahead(i, |i| self.changes.get(i).map(|ch| ch.slot), |_| true);
            }
            let key = keys[i % AHEAD];
            if moves && i + AHEAD < self.changes.len() {
                keys[i % AHEAD] = self.key_ahead(i + AHEAD);
            }
            self.update_always(i);
            if let Some(step) = self.classify_step(i, &steps) {
                largest = largest.max(step);
                self.stepped += 1;
            }
            if moves {
                self.move_one(self.changes[i].slot, key);
            }
        }
        self.step_reach = largest * STEP_SLACK;
        self.step_limit.choose_next();
    }

    /// The cell key of change `j`'s slot now. Computed `AHEAD` changes before its move, so
    /// that the cell map's entries a cell change will look up are asked for then
    /// ([`Grid::prefetch_cell_change`]; the slot and its cell record were asked for earlier by
    /// [`Self::prefetch_grid_ahead`]). `sparse_huge` 50k, whose walkers carry about 4,400 cells
    /// an update: see `PERFORMANCE.md`, stop 31.
    #[inline]
    fn key_ahead(&self, j: usize) -> CellKey {
        let slot = &self.slots[self.changes[j].slot as usize];
        let key = self.grid.key(slot.p, slot.rules.instance);
        if slot.in_grid() && slot.cell != NO_CELL {
            self.grid.prefetch_cell_change(slot.cell, key);
        }
        key
    }

    /// Moves changed slot `s` to the cell of `key`, the cell of its position now (or edits its
    /// member in place).
    #[inline]
    fn move_one(&mut self, s: u32, key: CellKey) {
        let slot = &self.slots[s as usize];
        let (in_grid, cell, idx) = (slot.in_grid(), slot.cell, slot.member_index);
        if cell != NO_CELL {
            if in_grid && self.grid.cells[cell as usize].key == key {
                let member = self.member(s);
                self.grid.edit_member(cell, idx, |m| *m = member);
                return;
            }
            // Its own branch, not a flag on the one above: the flag cost every member that stays
            // in its cell (uniform 10k, callgrind, 75.82 → 75.96 M instructions an update).
            if in_grid && self.grid.carry_lone_member(cell, key) {
                let member = self.member(s);
                self.grid.edit_member(cell, idx, |m| *m = member);
                // A cell change all the same (renumbering counts them).
                self.relinks += 1;
                return;
            }
            self.unlink(s);
        }
        if in_grid {
            self.link(s, key);
        }
    }

    fn unlink(&mut self, s: u32) {
        let slot = &mut self.slots[s as usize];
        let (cell, idx) = (slot.cell, slot.member_index);
        slot.cell = NO_CELL;
        if let Some(moved) = self.grid.remove(cell, idx) {
            self.slots[moved as usize].member_index = idx;
        }
    }

    /// While entry `i` of a list of slots (`slot_at`) is handled, asks for the grid records of
    /// the slots ahead that are `wanted`: the cell record of entry `i + 2 * AHEAD`, then (that
    /// record being cached by now) the member and position block of entry `i + AHEAD`. Cells are
    /// scattered over the heap, one dependent load after another.
    #[inline]
    fn prefetch_grid_ahead(&self, i: usize, slot_at: impl Fn(usize) -> Option<u32>, wanted: impl Fn(&Slot) -> bool) {
        let slot = |i: usize| slot_at(i).map(|s| &self.slots[s as usize]).filter(|slot| wanted(slot));
        if let Some(slot) = slot(i + 2 * AHEAD) {
            self.grid.prefetch_cell(slot.cell);
        }
        if let Some(slot) = slot(i + AHEAD) {
            self.grid.prefetch_member(slot.cell, slot.member_index);
        }
    }

    /// The grid member of a slot.
    #[inline]
    fn member(&self, s: u32) -> Member {
        let slot = &self.slots[s as usize];
        Member {
            slot: s,
            r2: slot.scan_r2(),
            p: slot.p,
            // Only a changed slot moved this tick.
            start_p: if slot.on_shortlist() {
                self.starts[s as usize]
            } else {
                slot.p
            },
            stepping: slot.stepping(),
            jumped: slot.jumped(),
            seen_by: scan_layers(&slot.rules),
            sees: slot.rules.sees,
            rect: slot.rect.is_some(),
            entity: self.entities[s as usize],
        }
    }

    /// Keeps the per-instance lists of `Always`-visible slots in step with change `i` of the
    /// shortlist.
    #[inline]
    fn update_always(&mut self, i: usize) {
        let ch = &self.changes[i];
        let slot = &self.slots[ch.slot as usize];
        let (was, is) = (always_in(&ch.old_target()), always_in(&slot.target()));
        if was == is {
            return;
        }
        if let Some(i) = was {
            let list = self
                .always
                .get_mut(&i)
                .expect("an Always slot's instance should have a list");
            let at = list
                .iter()
                .position(|&x| x == ch.slot)
                .expect("an Always slot should be listed");
            list.remove(at);
            if list.is_empty() {
                self.always.remove(&i);
            }
        }
        if let Some(i) = is {
            self.always.entry(i).or_default().push(ch.slot);
        }
    }

    /// Sorts change `i` of the shortlist into a stepping observer, a stepping target or a jumped
    /// target ([`Slot::stepping`](crate::slot::Slot::stepping),
    /// [`Slot::jumped`](crate::slot::Slot::jumped)); its step if it stepped.
    #[inline]
    fn classify_step(&mut self, i: usize, rules: &StepRules) -> Option<f32> {
        let ch = &self.changes[i];
        let seen = self.lists[ch.slot as usize].len();
        let slot = &mut self.slots[ch.slot as usize];
        let step = dist2(ch.old_p, slot.p).sqrt();
        let moved = ch.old_in && slot.in_grid() && ch.old_rules == slot.rules;
        // A step of length zero (a standing observer of a busy cell, or a change of radius
        // alone) is not a move for the step limit.
        if moved && step > 0.0 {
            self.step_limit.count(step, &rules.limits);
        }
        let steps = moved && step <= rules.limits.in_force();
        slot.set_jumped(!steps);
        // A wide observer steps too (a disc of finite radius: its flip scan has a group of its
        // own), but does not judge the clean observers as a target over its whole window.
        let stepping = steps
            && (!slot.wide() || (slot.rect.is_none() && slot.r2.is_finite()))
            && ch.old_r2 >= 0.0
            && ch.old_r2.to_bits() == slot.r2.to_bits()
            && ch.old_rect == slot.rect
            && seen >= rules.flip_scan_min_seen;
        slot.set_stepping(stepping);
        slot.set_flip_scans_as_target(
            stepping
                && !slot.wide()
                && slot.rect.is_none()
                && slot.rules.mode == AoiVisibility::Normal
                && slot.radius >= rules.reach,
        );
        steps.then_some(step)
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

    fn link(&mut self, s: u32, key: CellKey) {
        let member = self.member(s);
        let (cell, idx) = self.grid.insert(key, member);
        let slot = &mut self.slots[s as usize];
        slot.cell = cell;
        slot.member_index = idx;
        self.relinks += 1;
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

    /// Re-buckets every indexed slot into a grid with a new side.
    fn rebuild(&mut self, side: f32) {
        log::debug!("bevy_aoi: cell side {} -> {side}", self.grid.side());
        self.grid = Grid::new(side, self.plane.dims(), self.bounds, self.grid.kind());
        for s in 0..self.slots.len() as u32 {
            self.slots[s as usize].cell = NO_CELL;
            let slot = &self.slots[s as usize];
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
            slot.clear(&[Flag::OnShortlist, Flag::Stepping, Flag::Jumped]);
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
                if slot.owned() {
                    slot.set_owned(false);
                    self.owned -= 1;
                }
                self.by_entity.remove(entity);
                // Free the buffer: a reused slot should not inherit another entity's capacity.
                self.lists[s] = Vec::new();
                self.free_slots.push(s as u32);
            }
        }
        self.changes.clear();
        self.step_reach = 0.0;
    }

    /// Resets the grid members [`Self::end_tick`] left unsettled, except those of slots on this
    /// update's shortlist (their moves write new members): their start position becomes their
    /// position, and they step no more. Runs before the moves, so every scan of this update
    /// reads settled members. Change pickup counts the unsettled slots that are back on the
    /// shortlist; when all are, this is `O(1)`.
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
            let slot = &mut self.slots[self.unsettled[i] as usize];
            let settled_now = settles(slot);
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
