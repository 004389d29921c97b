//! The AOI index: one slot per tracked entity, the grid, every observer's current interest list,
//! and this tick's shortlist of changed slots.

use std::collections::BTreeMap;

use bevy_ecs::{entity::EntityHashMap, prelude::*};

use crate::{
    components::{Position, ViewRange},
    config::{AoiBounds, CellSize, MAX_CELL_SIZE, MIN_CELL_SIZE, Plane},
    grid::{CellKey, Grid, Member, NO_CELL, Window, dist2},
    rules::AoiVisibility,
    wide::{WideObservers, threshold},
};

/// The visibility rules of one entity (layers, mode, instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    pub member: u32,
    pub sees: u32,
    pub mode: AoiVisibility,
    pub instance: u32,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            member: u32::MAX,
            sees: u32::MAX,
            mode: AoiVisibility::Normal,
            instance: 0,
        }
    }
}

/// A target as the visibility rule needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TargetState {
    pub in_grid: bool,
    pub p: [f32; 3],
    pub rules: Rules,
}

/// Where the observers that may see `t` are (with views of at most `reach`): around it in its
/// instance, the whole instance if it is `Always` visible, nowhere if it is hidden or unindexed.
pub(crate) fn region(grid: &Grid, t: &TargetState, reach: f32) -> Option<Window> {
    if !t.in_grid {
        return None;
    }
    match t.rules.mode {
        AoiVisibility::Hidden => None,
        AoiVisibility::Always => Some(Window::whole(t.rules.instance)),
        AoiVisibility::Normal => Some(grid.window(t.p, reach, t.rules.instance)),
    }
}

/// The one visibility rule: does an observer (position, squared radius, layers it sees,
/// instance) see this target? Every decision in the crate goes through here or through the
/// equivalent inline test of the scan (`dist2 <= r2`, shared layer bit, scannable member).
#[inline]
pub(crate) fn sees(p: [f32; 3], r2: f32, sees: u32, instance: u32, t: &TargetState) -> bool {
    t.in_grid
        && t.rules.instance == instance
        && (sees & t.rules.member) != 0
        && match t.rules.mode {
            AoiVisibility::Hidden => false,
            AoiVisibility::Always => true,
            AoiVisibility::Normal => dist2(p, t.p) <= r2,
        }
}

/// How much larger than the largest view radius the automatic cell side is.
const AUTO_SIDE_OVER_RADIUS: f32 = 1.0625;

/// The step limit as a fraction of the cell side: an entity that moved farther in one tick is
/// *jumped* rather than *stepping* ([`Slot::stepping`], [`Slot::jumped`]).
const STEP_LIMIT_OVER_SIDE: f32 = 0.125;

/// Relative slack on reaches derived from steps, far more than the rounding of the `f32`
/// distances they add up.
pub(crate) const STEP_SLACK: f32 = 1.0 + 1.0e-4;

/// Entities whose `Position` or `ViewRange` was removed (or that were despawned) since the last
/// AOI update, filled by component hooks.
#[derive(Resource, Default)]
pub(crate) struct PendingRemovals(pub Vec<Entity>);

/// One tracked entity.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub entity: Entity,
    /// Projected position (meaningful while `in_grid`).
    pub p: [f32; 3],
    /// Projected position at the start of this tick (equal to `p` between ticks).
    pub start_p: [f32; 3],
    /// Squared view radius, or -1 when the entity is not an observer.
    pub r2: f32,
    /// View radius (0 when not an observer).
    pub radius: f32,
    /// Where its member is in the grid, or `NO_CELL`.
    pub cell: u32,
    pub idx: u32,
    /// Whether the entity should be indexed now (valid position and range).
    pub in_grid: bool,
    /// Whether the entity still has a `Position`; the slot is freed at the end of the tick if not.
    pub live: bool,
    /// Whether the entity is on this tick's shortlist.
    pub dirty: bool,
    /// Whether a bad-input warning was logged for it.
    pub warned: bool,
    /// Whether it is a wide observer ([`crate::wide`]): target scans test it from the wide list,
    /// so its grid member carries no scan radius.
    pub wide: bool,
    /// On the shortlist as an observer that only stepped (same radius and rules, indexed before
    /// and after, moved at most the step limit, not wide) and saw at least
    /// `AoiSettings::flip_scan_min_seen` targets: instead of recomputing its list it tests each
    /// member of its window at the start and at the end of the tick, and edits the list where
    /// the two differ.
    pub stepping: bool,
    /// On the shortlist as a target that did more than step (moved past the step limit, changed
    /// rules, joined or left the index): stepping observers skip it, its own target scan decides
    /// its pairs with them.
    pub jumped: bool,
    /// Layers, visibility mode and instance.
    pub rules: Rules,
}

impl Slot {
    /// A slot for `entity`, not yet indexed.
    fn free(entity: Entity) -> Self {
        Self {
            entity,
            p: [0.0; 3],
            start_p: [0.0; 3],
            r2: -1.0,
            radius: 0.0,
            cell: NO_CELL,
            idx: 0,
            in_grid: false,
            live: true,
            dirty: false,
            warned: false,
            wide: false,
            stepping: false,
            jumped: false,
            rules: Rules::default(),
        }
    }

    /// This slot as a target, now.
    #[inline]
    pub fn target(&self) -> TargetState {
        TargetState {
            in_grid: self.in_grid,
            p: self.p,
            rules: self.rules,
        }
    }

    #[inline]
    pub fn is_observer(&self) -> bool {
        self.in_grid && self.r2 >= 0.0
    }

    /// The squared radius its grid member carries for target scans: negative when target scans
    /// must skip it (not an observer, wide, or recomputing its whole list this tick).
    #[inline]
    fn scan_r2(&self) -> f32 {
        if self.wide || (self.dirty && !self.stepping) {
            -1.0
        } else {
            self.r2
        }
    }

    /// How far from its position now a stepping observer's flip scan must look: its radius, plus
    /// its own step, plus the largest step of any target (`step_reach`), with a little slack for
    /// rounding. Other observers look as far as their radius.
    #[inline]
    pub fn scan_reach(&self, step_reach: f32) -> f32 {
        if self.stepping {
            (self.radius + dist2(self.start_p, self.p).sqrt() + step_reach) * STEP_SLACK
        } else {
            self.radius
        }
    }
}

/// What a changed slot was at the start of the tick.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Change {
    pub slot: u32,
    pub old_in: bool,
    pub old_p: [f32; 3],
    pub old_r2: f32,
    pub old_rules: Rules,
}

impl Change {
    /// The slot as a target, at the start of the tick.
    #[inline]
    pub fn old_target(&self) -> TargetState {
        TargetState {
            in_grid: self.old_in,
            p: self.old_p,
            rules: self.old_rules,
        }
    }
}

/// Why an entity is kept out of the index.
fn bad_input(p: [f32; 3], radius: Option<f32>, bounds: Option<&AoiBounds>, dims: usize) -> Option<&'static str> {
    if !p.iter().all(|c| c.is_finite()) {
        return Some("its Position is not finite");
    }
    if let Some(b) = bounds
        && !b.accepts(p, dims)
    {
        return Some("its Position is farther outside the AoiPlugin bounds than one bounds size");
    }
    if let Some(r) = radius
        && !(r >= 0.0 && (r * r).is_finite())
    {
        return Some("its ViewRange radius is negative, NaN, or so large that its square overflows");
    }
    None
}

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
    /// This tick's shortlist.
    pub changes: Vec<Change>,
    /// Multiset of observer radii (as bits; positive floats order like their bits).
    radii: BTreeMap<u32, u32>,
    /// Per instance: the indexed `Always`-visible slots, in the order they became so.
    pub always: BTreeMap<u32, Vec<u32>>,
    /// The few observers whose radius stands out ([`crate::wide`]).
    pub wide: WideObservers,
    /// Number of indexed observers.
    pub observers: usize,
    /// The largest step of this tick's stepping targets, with slack (0 between ticks).
    pub step_reach: f32,
    /// How many changed slots only stepped, in the last tick that had changes.
    stepped: usize,
    /// Cell changes since slots were last numbered in space order (see [`Self::renumber`]).
    relinks: usize,
    renumbered: usize,
}

impl AoiIndex {
    pub fn new(plane: Plane, cell_size: CellSize, bounds: Option<AoiBounds>) -> Self {
        let (side, chosen) = match cell_size {
            CellSize::Fixed(s) => (s, true),
            CellSize::Auto => (1.0, false),
        };
        Self {
            plane,
            bounds,
            cell_size,
            side_chosen: chosen,
            grid: Grid::new(side, plane.dims(), bounds),
            slots: Vec::new(),
            entities: Vec::new(),
            free_slots: Vec::new(),
            by_entity: EntityHashMap::default(),
            lists: Vec::new(),
            changes: Vec::new(),
            radii: BTreeMap::new(),
            always: BTreeMap::new(),
            wide: WideObservers::default(),
            observers: 0,
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

    /// Pushes every observer that sees slot `s` now into `out` (the grid around it within the
    /// ordinary reach, then the wide observers). `cells` is a scratch buffer. Only valid between
    /// ticks (no slot on the shortlist).
    pub fn observers_seeing(&self, s: u32, cells: &mut Vec<u32>, out: &mut Vec<Entity>) {
        let t = self.slots[s as usize].target();
        cells.clear();
        if let Some(w) = region(&self.grid, &t, self.ordinary_reach()) {
            self.grid.cells_in(&w, cells);
        }
        for &c in cells.iter() {
            let cell = &self.grid.cells[c as usize];
            let instance = cell.key[3] as u32;
            let found = cell.members.iter().filter(|m| m.slot != s && m.r2 >= 0.0);
            out.extend(
                found
                    .filter(|m| sees(m.p, m.r2, m.sees, instance, &t))
                    .map(|m| m.entity),
            );
        }
        for &w in &self.wide.slots {
            let o = &self.slots[w as usize];
            if w != s && sees(o.p, o.r2, o.rules.sees, o.rules.instance, &t) {
                out.push(o.entity);
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
                (self.slots.len() - 1) as u32
            }
        };
        self.by_entity.insert(entity, s);
        s
    }

    /// Records the current state of `entity` (`None`: no `Position` any more, or despawned).
    /// Cheap when nothing differs from what is indexed.
    pub fn observe(&mut self, entity: Entity, state: Option<(&Position, Option<&ViewRange>, Rules)>) {
        let s = match (self.by_entity.get(&entity), state) {
            (Some(&s), _) => s,
            (None, Some(_)) => self.alloc_slot(entity),
            (None, None) => return,
        };
        let (live, p, radius, rules) = match state {
            Some((pos, range, rules)) => (
                true,
                self.plane.project(pos.x, pos.y, pos.z),
                range.map(|r| r.radius),
                rules,
            ),
            None => (false, [0.0; 3], None, Rules::default()),
        };
        let problem = if live {
            bad_input(p, radius, self.bounds.as_ref(), self.plane.dims())
        } else {
            None
        };
        let in_grid = live && problem.is_none();
        let r2 = match radius {
            Some(r) if in_grid => r * r,
            _ => -1.0,
        };
        let slot = &mut self.slots[s as usize];
        if let Some(why) = problem
            && !slot.warned
        {
            slot.warned = true;
            log::warn!("bevy_aoi: {entity} is kept out of the AOI index because {why} (warned once per entity)");
        }
        if slot.live == live
            && slot.in_grid == in_grid
            && slot.r2.to_bits() == r2.to_bits()
            && slot.rules == rules
            && (!in_grid || slot.p == p)
        {
            return;
        }
        if !slot.dirty {
            slot.dirty = true;
            self.changes.push(Change {
                slot: s,
                old_in: slot.in_grid,
                old_p: slot.p,
                old_r2: slot.r2,
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
        slot.live = live;
        slot.in_grid = in_grid;
        slot.p = p;
        slot.r2 = r2;
        slot.rules = rules;
        // `+ 0.0` turns -0.0 into 0.0, so radii order like their bits.
        slot.radius = if r2 >= 0.0 { radius.unwrap_or(0.0) + 0.0 } else { 0.0 };
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
    /// (rebuilding it if the automatic cell side must change). Until [`Self::end_tick`] their
    /// members carry what the scans need: recomputing observers `r2 = -1` (target scans skip
    /// them), stepping ones their start position.
    pub fn apply_changes(&mut self, flip_scan_min_seen: usize) {
        if self.changes.is_empty() {
            return;
        }
        self.update_always();
        self.update_wide();
        self.classify_steps(flip_scan_min_seen);
        if let Some(side) = self.wanted_side() {
            self.rebuild(side);
            return;
        }
        for i in 0..self.changes.len() {
            let s = self.changes[i].slot;
            let slot = &self.slots[s as usize];
            let (in_grid, p, cell, idx) = (slot.in_grid, slot.p, slot.cell, slot.idx);
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
        let (cell, idx) = (slot.cell, slot.idx);
        slot.cell = NO_CELL;
        if let Some(moved) = self.grid.remove(cell, idx) {
            self.slots[moved as usize].idx = idx;
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
            seen_by: if slot.rules.mode == AoiVisibility::Normal {
                slot.rules.member
            } else {
                0
            },
            sees: slot.rules.sees,
            entity: slot.entity,
        }
    }

    /// Keeps the per-instance lists of `Always`-visible slots in step with the shortlist.
    fn update_always(&mut self) {
        for ch in &self.changes {
            let slot = &self.slots[ch.slot as usize];
            let was = (ch.old_in && ch.old_rules.mode == AoiVisibility::Always).then_some(ch.old_rules.instance);
            let is = (slot.in_grid && slot.rules.mode == AoiVisibility::Always).then_some(slot.rules.instance);
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
                let (cell, idx, r2) = (slot.cell, slot.idx, slot.scan_r2());
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
        slot.idx = idx;
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
        self.grid = Grid::new(side, self.plane.dims(), self.bounds);
        for s in 0..self.slots.len() as u32 {
            self.slots[s as usize].cell = NO_CELL;
            let slot = &self.slots[s as usize];
            if slot.in_grid {
                let key = self.grid.key(slot.p, slot.rules.instance);
                self.link(s, key);
            }
        }
    }

    /// Clears the shortlist: changed observers become clean again, and slots of entities that
    /// lost their `Position` are freed.
    pub fn end_tick(&mut self) {
        for i in 0..self.changes.len() {
            let s = self.changes[i].slot as usize;
            let slot = &mut self.slots[s];
            slot.dirty = false;
            slot.stepping = false;
            slot.jumped = false;
            slot.start_p = slot.p;
            if slot.cell != NO_CELL {
                let (c, idx, r2, p) = (slot.cell, slot.idx, slot.scan_r2(), slot.p);
                self.grid.edit_member(c, idx, |m| {
                    m.r2 = r2;
                    m.start_p = p;
                    m.stepping = false;
                    m.jumped = false;
                });
            }
            if !slot.live {
                debug_assert!(
                    slot.cell == NO_CELL,
                    "a slot without Position should have left the grid"
                );
                let entity = slot.entity;
                self.by_entity.remove(&entity);
                self.lists[s].clear();
                self.free_slots.push(s as u32);
            }
        }
        self.changes.clear();
        self.step_reach = 0.0;
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

    /// Renumbers the slots so that entities of neighbouring cells have neighbouring numbers:
    /// indexed slots in row-major cell order, then tracked slots outside the grid, then free
    /// slots. Only runs between ticks (the shortlist is empty).
    fn renumber(&mut self) {
        debug_assert!(self.changes.is_empty(), "slots should only be renumbered between ticks");
        self.relinks = 0;
        let n = self.slots.len();
        let mut cells: Vec<u32> = (0..self.grid.cells.len() as u32)
            .filter(|&c| !self.grid.cells[c as usize].members.is_empty())
            .collect();
        cells.sort_unstable_by_key(|&c| {
            let k = self.grid.cells[c as usize].key;
            (k[3], k[2], k[1], k[0])
        });
        const UNSET: u32 = u32::MAX;
        let mut new_of_old = vec![UNSET; n];
        let mut next = 0u32;
        for &c in &cells {
            for m in &self.grid.cells[c as usize].members {
                new_of_old[m.slot as usize] = next;
                next += 1;
            }
        }
        for (s, slot) in self.slots.iter().enumerate() {
            if new_of_old[s] == UNSET && slot.live {
                new_of_old[s] = next;
                next += 1;
            }
        }
        self.free_slots.clear();
        for target in new_of_old.iter_mut().filter(|t| **t == UNSET) {
            *target = next;
            self.free_slots.push(next);
            next += 1;
        }
        self.free_slots.reverse();
        let remap = |s: &mut u32| *s = new_of_old[*s as usize];
        for cell in &mut self.grid.cells {
            cell.members.iter_mut().for_each(|m| remap(&mut m.slot));
        }
        for list in &mut self.lists {
            list.iter_mut().for_each(remap);
        }
        self.by_entity.values_mut().for_each(remap);
        for list in self.always.values_mut() {
            list.iter_mut().for_each(remap);
        }
        self.wide.slots.iter_mut().for_each(remap);
        permute(&mut self.slots, &new_of_old, || Slot::free(Entity::PLACEHOLDER));
        permute(&mut self.entities, &new_of_old, || Entity::PLACEHOLDER);
        permute(&mut self.lists, &new_of_old, Vec::new);
        self.renumbered += 1;
        #[cfg(debug_assertions)]
        self.check_links();
    }

    /// Debug check: the entity map, the slots and the grid members agree.
    #[cfg(debug_assertions)]
    fn check_links(&self) {
        for (&e, &s) in &self.by_entity {
            let slot = &self.slots[s as usize];
            assert_eq!(slot.entity, e, "slot {s} should belong to {e}");
            assert_eq!(
                self.entities[s as usize], e,
                "the packed entity of slot {s} should be {e}"
            );
            if slot.cell != NO_CELL {
                let m = &self.grid.cells[slot.cell as usize].members[slot.idx as usize];
                assert_eq!((m.slot, m.entity), (s, e), "slot {s}'s member should point back at it");
            }
        }
        for &f in &self.free_slots {
            assert!(!self.slots[f as usize].live, "free slot {f} should not be live");
        }
    }

    /// Fills the counters the index knows.
    pub fn stats(&self, stats: &mut crate::settings::AoiStats) {
        stats.entities = self.by_entity.len();
        stats.observers = self.observers;
        stats.cells = self.grid.occupied();
        stats.cell_side = self.grid.side();
        stats.wide_observers = self.wide.slots.len();
        stats.stepped = self.stepped;
        stats.renumbers = self.renumbered;
    }
}

/// Moves `v[i]` to `v[new_of_old[i]]` (a permutation: every `fill` is overwritten).
fn permute<T>(v: &mut Vec<T>, new_of_old: &[u32], fill: impl Fn() -> T) {
    let mut out: Vec<T> = (0..v.len()).map(|_| fill()).collect();
    for (i, item) in v.drain(..).enumerate() {
        out[new_of_old[i] as usize] = item;
    }
    *v = out;
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
