//! The AOI index: one slot per tracked entity, the grid, every observer's current interest list,
//! and this tick's shortlist of changed slots.

use std::collections::BTreeMap;

use bevy_ecs::{entity::EntityHashMap, prelude::*};

mod reasons;
mod renumber;
mod touches;

pub(crate) use touches::Touches;

use crate::{
    components::Position,
    config::{AoiBounds, CellSize, IndexKind, MAX_CELL_SIZE, MIN_CELL_SIZE, Plane},
    grid::{CellKey, Grid, Member, NO_CELL, dist2},
    prefetch::{AHEAD, prefetch},
    radix::sort_by_u32_key,
    slot::{Change, STEP_SLACK, Sight, Slot, bad_input, observer_of},
    visibility::{Rules, always_in, observer_region, observer_slab, rect_r2, scan_layers, sees},
    wide::{WideObservers, threshold},
};

/// How much larger than the largest view radius the automatic cell side is.
const AUTO_SIDE_OVER_RADIUS: f32 = 1.0625;

/// The step limit as a fraction of the cell side: an entity that moved farther in one tick is
/// *jumped* rather than *stepping* ([`Slot::stepping`], [`Slot::jumped`]).
const STEP_LIMIT_OVER_SIDE: f32 = 0.125;

/// The index resource. Internal: users see its results through `InterestSet` and the messages.
#[derive(Resource)]
pub(crate) struct AoiIndex {
    pub plane: Plane,
    pub bounds: Option<AoiBounds>,
    cell_size: CellSize,
    side_chosen: bool,
    pub grid: Grid,
    pub slots: Vec<Slot>,
    /// `slots[s].entity`, packed, for the hot slot-to-entity lookups.
    pub entities: Vec<Entity>,
    free_slots: Vec<u32>,
    by_entity: EntityHashMap<u32>,
    /// Per slot: the slots it sees now, in no particular order.
    pub lists: Vec<Vec<u32>>,
    /// This tick's shortlist, in slot order from [`Self::apply_changes`] on.
    pub changes: Vec<Change>,
    /// The second buffer of the shortlist's radix sort.
    spare_changes: Vec<Change>,
    /// Per slot: where its start-of-update record is in `turns` if it turned this update
    /// ([`reasons`]), else `reasons::NOT_TURNED`.
    turned: Vec<u32>,
    /// The start-of-update records of the slots that turned, kept until the messages are written.
    turns: Vec<Change>,
    /// Multiset of observer radii (as bits; positive floats order like their bits).
    radii: BTreeMap<u32, u32>,
    /// Per instance: the indexed `Always`-visible slots, in the order they became so.
    pub always: BTreeMap<u32, Vec<u32>>,
    /// The few observers whose radius stands out ([`crate::wide`]).
    pub wide: WideObservers,
    /// Number of indexed observers.
    pub observers: usize,
    /// Number of slots the view layer owns ([`Slot::owned`]): while 0 the engine has no owned
    /// observers to skip.
    pub owned: usize,
    /// Entities that became owned this update, with the layers they were in before (what their
    /// shown targets were counted with for `Watched`).
    pub newly_owned: Vec<(Entity, u32)>,
    /// Owned slots the view layer gave back this update ([`Self::release`]).
    released: Vec<u32>,
    /// The observers the view layer must look at this update.
    pub touches: Touches,
    /// The largest step of this tick's stepping targets, with slack (0 between ticks).
    pub step_reach: f32,
    /// How many changed slots only stepped, in the last tick that had changes.
    stepped: usize,
    /// Cell changes since slots were last numbered in space order (see [`Self::renumber`]).
    relinks: usize,
    renumbered: usize,
}

impl AoiIndex {
    pub fn new(plane: Plane, kind: IndexKind, cell_size: CellSize, bounds: Option<AoiBounds>) -> Self {
        let (side, chosen) = match cell_size {
            CellSize::Fixed(s) => (s, true),
            CellSize::Auto => (1.0, false),
        };
        Self {
            plane,
            bounds,
            cell_size,
            side_chosen: chosen,
            grid: Grid::new(side, plane.dims(), bounds, kind),
            slots: Vec::new(),
            entities: Vec::new(),
            free_slots: Vec::new(),
            by_entity: EntityHashMap::default(),
            lists: Vec::new(),
            changes: Vec::new(),
            spare_changes: Vec::new(),
            turned: Vec::new(),
            turns: Vec::new(),
            radii: BTreeMap::new(),
            always: BTreeMap::new(),
            wide: WideObservers::default(),
            observers: 0,
            owned: 0,
            newly_owned: Vec::new(),
            released: Vec::new(),
            touches: Touches::default(),
            step_reach: 0.0,
            stepped: 0,
            relinks: 0,
            renumbered: 0,
        }
    }

    /// The slot of a tracked entity.
    pub fn slot_of(&self, entity: Entity) -> Option<u32> {
        self.by_entity.get(&entity).copied()
    }

    /// Hints the CPU to bring `entity`'s slot into cache (nothing if it has none), a few entities
    /// before [`Self::observe`] reaches it.
    #[inline]
    pub fn prefetch_slot(&self, entity: Entity) {
        if let Some(s) = self.slot_of(entity) {
            prefetch(core::slice::from_ref(&self.slots[s as usize]));
        }
    }

    /// Pushes every observer that sees slot `s` now into `out` (the grid around it within the
    /// ordinary reach, then the wide observers), except those the view layer owns (it knows what
    /// they show). `cells` is a scratch buffer. Only valid between ticks (no slot on the
    /// shortlist).
    pub fn observers_seeing(&self, s: u32, cells: &mut Vec<u32>, out: &mut Vec<Entity>) {
        let t = self.slots[s as usize].target();
        cells.clear();
        if let Some(w) = observer_region(&self.grid, &t, self.ordinary_reach()) {
            self.grid.cells_in(&w, cells);
        }
        for &c in cells.iter() {
            let cell = &self.grid.cells[c as usize];
            let instance = cell.key[3] as u32;
            let hint = if c == self.slots[s as usize].cell {
                self.slots[s as usize].member_index as usize
            } else {
                0
            };
            let near = observer_slab(&self.grid, c, hint, &t, self.ordinary_reach()).unwrap_or(0..0);
            // Observers the view layer owns are the layer's to list.
            let found =
                (cell.members[near].iter()).filter(|m| m.slot != s && m.r2 >= 0.0 && !self.shown_by_layer(m.slot));
            out.extend(
                found
                    .filter(|m| sees(&observer_of(m, instance, &self.slots), &t))
                    .map(|m| m.entity),
            );
        }
        for &w in &self.wide.slots {
            let o = &self.slots[w as usize];
            if w != s && !self.shown_by_layer(w) && sees(&o.observer_at(o.p), &t) {
                out.push(o.entity);
            }
        }
    }

    /// Gives slot `s` back to the pair engine once this update's messages are written (the
    /// view layer let it go; until then the engine's pairs for it are still not its messages).
    pub fn release(&mut self, s: u32) {
        if self.slots[s as usize].owned {
            self.released.push(s);
        }
    }

    /// Whether the view layer owns slot `s`'s set now (owned, and not released this update);
    /// no slot is looked at while the layer owns none.
    pub fn shown_by_layer(&self, s: u32) -> bool {
        self.owned > 0 && self.slots[s as usize].owned && !self.released.contains(&s)
    }

    /// Ends the update once its messages are written: the slots the view layer released are the
    /// engine's again, and the reasons' records are forgotten.
    pub fn end_messages(&mut self) {
        self.forget_turns();
        for s in self.released.drain(..) {
            let slot = &mut self.slots[s as usize];
            if slot.owned {
                slot.owned = false;
                self.owned -= 1;
            }
        }
    }

    /// The largest view radius among indexed observers that are not wide (0 if none): how far
    /// around a moving target the grid is searched, and what the automatic cell side follows.
    pub fn ordinary_reach(&self) -> f32 {
        self.radii
            .range(..=self.wide.above.to_bits())
            .next_back()
            .map_or(0.0, |(&bits, _)| f32::from_bits(bits))
    }

    fn alloc_slot(&mut self, entity: Entity) -> u32 {
        let slot = Slot::free(entity);
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.slots[s as usize] = slot;
                self.entities[s as usize] = entity;
                s
            }
            None => {
                self.slots.push(slot);
                self.entities.push(entity);
                self.lists.push(Vec::new());
                self.turned.push(reasons::NOT_TURNED);
                self.touches.grow(self.slots.len());
                (self.slots.len() - 1) as u32
            }
        };
        self.by_entity.insert(entity, s);
        s
    }

    /// Records the current state of `entity` (`None`: no `Position` any more, or despawned).
    /// Cheap when nothing differs from what is indexed.
    pub fn observe(&mut self, entity: Entity, state: Option<(&Position, Sight, Rules, bool)>) {
        let s = match (self.by_entity.get(&entity), state) {
            (Some(&s), _) => s,
            (None, Some(_)) => self.alloc_slot(entity),
            (None, None) => return,
        };
        let (has_position, p, sight, rules, layered) = match state {
            Some((pos, sight, rules, layered)) => {
                (true, self.plane.project(pos.x, pos.y, pos.z), sight, rules, layered)
            }
            None => (false, [0.0; 3], Sight::Blind, Rules::default(), false),
        };
        let problem = if has_position {
            bad_input(p, sight, self.bounds.as_ref(), self.plane.dims())
        } else {
            None
        };
        let in_grid = has_position && problem.is_none();
        // `+ 0.0` turns -0.0 into 0.0, so radii order like their bits.
        let (r2, radius, rect) = match sight {
            _ if !in_grid => (-1.0, 0.0, None),
            Sight::Radius(r) => (r * r, r + 0.0, None),
            Sight::Rect(half) => {
                let half = half.map(|h| h + 0.0);
                let r2 = rect_r2(half);
                (r2, r2.sqrt(), Some(half))
            }
            Sight::Blind | Sight::Bad(_) => (-1.0, 0.0, None),
        };
        if self.owned > 0 {
            // Whatever changed (a component of the view model included), the layer looks.
            self.touches.touch(s);
        }
        let slot = &mut self.slots[s as usize];
        if layered && !slot.owned {
            // The view layer takes it over from this update, with what it showed until now.
            slot.owned = true;
            self.owned += 1;
            self.newly_owned.push((entity, slot.rules.member));
        }
        if let Some(why) = problem
            && !slot.warned
        {
            slot.warned = true;
            log::warn!("bevy_aoi: {entity} is kept out of the AOI index because {why} (warned once per entity)");
        }
        if slot.has_position == has_position
            && slot.in_grid == in_grid
            && slot.r2.to_bits() == r2.to_bits()
            && slot.rect.map(|h| h.map(f32::to_bits)) == rect.map(|h| h.map(f32::to_bits))
            && slot.rules == rules
            && slot.layered == layered
            && (!in_grid || slot.p == p)
        {
            return;
        }
        if !slot.on_shortlist {
            slot.on_shortlist = true;
            self.changes.push(Change {
                slot: s,
                old_in: slot.in_grid,
                old_p: slot.p,
                old_r2: slot.r2,
                old_rect: slot.rect,
                old_rules: slot.rules,
            });
        }
        if slot.is_observer() {
            remove_radius(&mut self.radii, slot.radius);
            self.observers -= 1;
        }
        if slot.wide {
            slot.wide = false;
            self.wide.remove(s);
        }
        slot.has_position = has_position;
        slot.in_grid = in_grid;
        slot.p = p;
        slot.r2 = r2;
        slot.radius = radius;
        slot.rect = rect;
        slot.rules = rules;
        slot.layered = layered;
        if slot.is_observer() {
            *self.radii.entry(slot.radius.to_bits()).or_default() += 1;
            self.observers += 1;
            if self.wide.is_wide(slot.radius) {
                slot.wide = true;
                self.wide.slots.push(s);
            }
        }
    }

    /// Sorts this tick's changed slots into stepping and jumped ones (stepping observers take the
    /// flip scan if they saw at least `flip_scan_min_seen` targets), then moves them in the grid
    /// (rebuilding it if the automatic cell side must change) and, for the sorted-axes index,
    /// restores the order of the lists ([`Grid::restore_order`]). Until [`Self::end_tick`] their
    /// members carry what the scans need: recomputing observers `r2 = -1` (target scans skip
    /// them), stepping ones their start position.
    pub fn apply_changes(&mut self, flip_scan_min_seen: usize) {
        if self.changes.is_empty() {
            return;
        }
        // In slot order, which is space order after a renumbering: the passes over the changes
        // then walk the slots, cells and lists nearly in memory order instead of the order the
        // ECS found the entities in.
        sort_by_u32_key(&mut self.changes, &mut self.spare_changes, |c| c.slot);
        self.update_always();
        self.update_wide();
        self.classify_steps(flip_scan_min_seen);
        if let Some(side) = self.wanted_side() {
            self.rebuild(side);
        } else {
            self.move_changed();
        }
        let slots = &mut self.slots;
        // Members that changed places in a sorted cell count like cell changes in the grid.
        self.relinks += self.grid.restore_order(|s, idx| slots[s as usize].member_index = idx);
    }

    /// Moves this tick's changed slots in the grid (or edits their members in place).
    fn move_changed(&mut self) {
        for i in 0..self.changes.len() {
            self.prefetch_grid_of_change(i);
            let s = self.changes[i].slot;
            let slot = &self.slots[s as usize];
            let (in_grid, p, cell, idx) = (slot.in_grid, slot.p, slot.cell, slot.member_index);
            let key = self.grid.key(p, slot.rules.instance);
            if cell != NO_CELL {
                if in_grid && self.grid.cells[cell as usize].key == key {
                    let member = self.member(s);
                    self.grid.edit_member(cell, idx, |m| *m = member);
                    continue;
                }
                self.unlink(s);
            }
            if in_grid {
                self.link(s, key);
            }
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

    /// While change `i` is handled, asks for the grid records of those ahead: the cell record of
    /// change `i + 2 * AHEAD`, then (that record being cached by now) the member and position
    /// block of change `i + AHEAD`. Cells are scattered over the heap, one dependent load after
    /// another.
    #[inline]
    fn prefetch_grid_of_change(&self, i: usize) {
        let slot_of_change = |i: usize| self.changes.get(i).map(|ch| &self.slots[ch.slot as usize]);
        if let Some(slot) = slot_of_change(i + 2 * AHEAD) {
            self.grid.prefetch_cell(slot.cell);
        }
        if let Some(slot) = slot_of_change(i + AHEAD) {
            self.grid.prefetch_member(slot.cell, slot.member_index);
        }
    }

    /// The grid member of a slot.
    fn member(&self, s: u32) -> Member {
        let slot = &self.slots[s as usize];
        Member {
            slot: s,
            r2: slot.scan_r2(),
            p: slot.p,
            start_p: slot.start_p,
            stepping: slot.stepping,
            jumped: slot.jumped,
            seen_by: scan_layers(&slot.rules),
            sees: slot.rules.sees,
            rect: slot.rect.is_some(),
            entity: slot.entity,
        }
    }

    /// Keeps the per-instance lists of `Always`-visible slots in step with the shortlist.
    fn update_always(&mut self) {
        for ch in &self.changes {
            let slot = &self.slots[ch.slot as usize];
            let (was, is) = (always_in(&ch.old_target()), always_in(&slot.target()));
            if was == is {
                continue;
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
    }

    /// Sorts this tick's changed slots into stepping observers, stepping targets and jumped
    /// targets ([`Slot::stepping`], [`Slot::jumped`]), and records the largest step.
    fn classify_steps(&mut self, flip_scan_min_seen: usize) {
        let limit = self.grid.side() * STEP_LIMIT_OVER_SIDE;
        let mut largest = 0.0f32;
        self.stepped = 0;
        for ch in &self.changes {
            let slot = &mut self.slots[ch.slot as usize];
            let step = dist2(ch.old_p, slot.p).sqrt();
            let steps = ch.old_in && slot.in_grid && ch.old_rules == slot.rules && step <= limit;
            slot.jumped = !steps;
            slot.stepping = steps
                && !slot.wide
                && ch.old_r2 >= 0.0
                && ch.old_r2.to_bits() == slot.r2.to_bits()
                && ch.old_rect == slot.rect
                && self.lists[ch.slot as usize].len() >= flip_scan_min_seen;
            if steps {
                largest = largest.max(step);
                self.stepped += 1;
            }
        }
        self.step_reach = largest * STEP_SLACK;
    }

    /// Re-derives the wide threshold from the radii when it moved far enough
    /// ([`WideObservers::settled`]); then reclassifies every observer (`O(slots)`) and lists the
    /// wide ones in slot order.
    fn update_wide(&mut self) {
        let above = threshold(&self.radii);
        if self.wide.settled(above) {
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
            if wide != slot.wide {
                slot.wide = wide;
                let (cell, idx, r2) = (slot.cell, slot.member_index, slot.scan_r2());
                if cell != NO_CELL {
                    self.grid.edit_member(cell, idx, |m| m.r2 = r2);
                }
            }
        }
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
        // A little over the largest ordinary radius, so a view from anywhere in a cell, with the window's
        // rounding margin, stays within the adjacent cells.
        Some((max * AUTO_SIDE_OVER_RADIUS).clamp(MIN_CELL_SIZE, MAX_CELL_SIZE))
    }

    /// Re-buckets every indexed slot into a grid with a new side.
    fn rebuild(&mut self, side: f32) {
        log::debug!("bevy_aoi: cell side {} -> {side}", self.grid.side());
        self.grid = Grid::new(side, self.plane.dims(), self.bounds, self.grid.kind());
        for s in 0..self.slots.len() as u32 {
            self.slots[s as usize].cell = NO_CELL;
            let slot = &self.slots[s as usize];
            if slot.in_grid {
                let key = self.grid.key(slot.p, slot.rules.instance);
                self.link(s, key);
            }
        }
    }

    /// Clears the shortlist: the slots that turned are recorded for the messages' reasons,
    /// changed observers become clean again, and slots of entities that lost their `Position`
    /// are freed (their numbers are reused from the next tick on).
    pub fn end_tick(&mut self) {
        self.record_turns();
        for i in 0..self.changes.len() {
            self.prefetch_grid_of_change(i);
            let s = self.changes[i].slot as usize;
            let slot = &mut self.slots[s];
            slot.on_shortlist = false;
            slot.stepping = false;
            slot.jumped = false;
            slot.start_p = slot.p;
            if slot.cell != NO_CELL {
                let (c, idx, r2, p) = (slot.cell, slot.member_index, slot.scan_r2(), slot.p);
                self.grid.edit_member(c, idx, |m| {
                    m.r2 = r2;
                    m.start_p = p;
                    m.stepping = false;
                    m.jumped = false;
                });
            }
            if !slot.has_position {
                debug_assert!(
                    slot.cell == NO_CELL,
                    "a slot without Position should have left the grid"
                );
                let entity = slot.entity;
                if slot.owned {
                    slot.owned = false;
                    self.owned -= 1;
                }
                self.by_entity.remove(&entity);
                // Free the buffer: a reused slot should not inherit another entity's capacity.
                self.lists[s] = Vec::new();
                self.free_slots.push(s as u32);
            }
        }
        self.changes.clear();
        self.step_reach = 0.0;
    }

    /// Renumbers the slots in space order when entities have scattered (see below). Runs after
    /// the tick's messages are written, since it changes what the slots of their pairs mean.
    pub fn renumber_if_scattered(&mut self) {
        // Once the entities changed cell about once each, neighbours no longer have nearby slot
        // numbers; renumbering costs about one tick of list copying and keeps every per-slot
        // access of the scans (marks, lists) within a few cache lines per observer. It only
        // pays where cells are shared (dense maps); with one entity per cell there is nothing
        // to gather.
        let tracked = self.by_entity.len();
        if self.relinks > 64 && self.relinks > tracked && tracked >= 4 * self.grid.occupied() {
            self.renumber();
        }
    }

    /// How many times the slots were renumbered since the index was built.
    pub fn renumbers(&self) -> usize {
        self.renumbered
    }

    /// Heap bytes the index holds: slots, grid, lists, maps and buffers (capacities, hash tables
    /// approximately).
    pub fn heap_bytes(&self) -> usize {
        let lists: usize = self.lists.iter().map(|l| l.capacity() * size_of::<u32>()).sum();
        let always: usize = self.always.values().map(|l| 24 + l.capacity() * size_of::<u32>()).sum();
        lists
            + always
            + self.grid.heap_bytes()
            + self.slots.capacity() * size_of::<Slot>()
            + self.entities.capacity() * size_of::<Entity>()
            + self.free_slots.capacity() * size_of::<u32>()
            + self.by_entity.capacity() * (size_of::<(Entity, u32)>() + 1)
            + self.lists.capacity() * size_of::<Vec<u32>>()
            + (self.changes.capacity() + self.spare_changes.capacity() + self.turns.capacity()) * size_of::<Change>()
            + self.turned.capacity() * size_of::<u32>()
            + self.radii.len() * 3 * size_of::<(u32, u32)>()
            + self.wide.slots.capacity() * size_of::<u32>()
            + self.touches.heap_bytes()
    }

    /// Fills the counters the index knows.
    pub fn stats(&self, stats: &mut crate::settings::AoiStats) {
        stats.entities = self.by_entity.len();
        stats.observers = self.observers;
        stats.cells = self.grid.occupied();
        stats.cell_side = self.grid.side();
        stats.wide_observers = self.wide.slots.len();
        stats.stepped = self.stepped;
    }
}

fn remove_radius(radii: &mut BTreeMap<u32, u32>, r: f32) {
    let bits = r.to_bits();
    let count = radii
        .get_mut(&bits)
        .expect("an indexed observer's radius should be in the multiset");
    *count -= 1;
    if *count == 0 {
        radii.remove(&bits);
    }
}
