//! The AOI index: one slot per tracked entity, the grid, every observer's current interest list,
//! and this tick's shortlist of changed slots.
//!
//! Here: the index's state. How a change is picked up is in [`pickup`] ([`AoiIndex::observe`]);
//! the shortlist's passes before and after the pair engine are in [`shortlist`] (with the
//! standing observers of busy cells added in [`busy`]), how a change moves in the grid in
//! [`moves`] (a lone walker's grid member written lazily, [`lazy_members`]), the space-order
//! renumbering in [`renumber`], the messages' reasons in [`reasons`], the view layer's marks in
//! [`touches`].

use std::collections::BTreeMap;

use bevy_ecs::prelude::*;
use bevy_tasks::TaskPool;

mod busy;
mod entity_slots;
mod gathered;
mod lazy_members;
mod moves;
mod pickup;
mod reasons;
mod renumber;
mod shortlist;
mod step_limit;
mod touches;

pub(crate) use touches::{BandEdge, QuietBands, Seer, TIER_BOUNDS, Touches};

use busy::BusyCells;
use entity_slots::EntitySlots;
use gathered::GatheredMoves;
use step_limit::StepLimit;

use crate::{
    config::{AoiBounds, CellSize, IndexKind, Plane},
    grid::{Grid, Member},
    radix::KeySort,
    slot::{Change, OldView, Slot, observer_of},
    visibility::{ObserverState, sees},
    wide::WideObservers,
};

/// The index resource. Internal: users see its results through `InterestSet` and the messages.
#[derive(Resource)]
pub(crate) struct AoiIndex {
    pub plane: Plane,
    pub bounds: Option<AoiBounds>,
    cell_size: CellSize,
    side_chosen: bool,
    pub grid: Grid,
    pub slots: Vec<Slot>,
    /// Per slot: its entity (kept apart from the slots, for the hot slot-to-entity lookups).
    pub entities: Vec<Entity>,
    /// Per slot on the shortlist: its projected position at the start of this tick, written when
    /// [`Self::apply_changes`] has sorted the shortlist (a slot off the shortlist is where it
    /// started; its entry here is stale). Kept apart so that a slot fits a cache line (measured
    /// in `PERFORMANCE.md`, stop 32); read by the flip scans and the grid moves.
    pub starts: Vec<[f32; 3]>,
    /// Per slot on the shortlist with [`Slot::view_changed`]: its view at the start of this tick
    /// (any other entry is stale; a changed slot that only moved has its slot's view,
    /// [`OldView::at_start`]). 36 bytes a slot: a list of this tick's changed views with 4 bytes
    /// a slot for where each is measured slower (`cargo bench --bench report -- --pin-threads
    /// sparse`, five alternating runs: `bevy_aoi` own 3.00-3.15 → 3.12-3.25 ms).
    pub old_views: Vec<OldView>,
    free_slots: Vec<u32>,
    by_entity: EntitySlots,
    /// Per slot: the slots it sees now, in no particular order.
    pub lists: Vec<Vec<u32>>,
    /// This tick's shortlist, in slot order from [`Self::apply_changes`] on (the standing
    /// observers of busy cells, [`busy`], included).
    pub changes: Vec<Change>,
    /// The shortlist counted by cell, for the standing observers of busy cells ([`busy`]).
    busy: BusyCells,
    /// The second buffer of the shortlist's sort.
    spare_changes: Vec<Change>,
    /// This update's moved entities that have a slot, gathered in the ECS's order and observed
    /// in slot order ([`Self::observe_moves`]).
    pub moves: GatheredMoves,
    /// The shortlist sort's keys.
    change_keys: KeySort,
    /// Slots whose grid member still carries the last update's start position and step flags:
    /// [`Self::end_tick`] leaves them, since a slot that changes again gets a new member
    /// anyway, and [`Self::settle_members`] resets the others before the next update's scans.
    unsettled: Vec<u32>,
    /// How many of `unsettled` are back on the shortlist this update (their
    /// [`Slot::unsettled`] flag taken down as they were observed): when all are, there is
    /// nothing to settle and no pass over them.
    unsettled_back: usize,
    /// Per slot: where its start-of-update record is in `turns` if it turned this update
    /// ([`reasons`]), else `reasons::NOT_TURNED`.
    turned: Vec<u32>,
    /// The slots that turned, with their views at the start of the update, kept until the
    /// messages are written.
    turns: Vec<(u32, OldView)>,
    /// Multiset of observer radii (as bits; positive floats order like their bits).
    radii: BTreeMap<u32, u32>,
    /// Per instance: the indexed `Always`-visible slots, in the order they became so.
    pub always: BTreeMap<u32, Vec<u32>>,
    /// The few observers whose radius stands out ([`crate::wide`]).
    pub wide: WideObservers,
    /// Number of indexed observers.
    pub observers: usize,
    /// Indexed observers that see only some layers (their [`AoiLayers`](crate::AoiLayers)
    /// `sees` is not `ALL`). While there are none, every clean observer sees every target, and
    /// the scans do not ask which layers a cell's clean observers see
    /// ([`View::narrow_sees`](crate::scan::View::narrow_sees)).
    pub narrow_observers: usize,
    /// Number of slots the view layer owns ([`Slot::owned`], changed with the flag by
    /// [`Self::set_owned`]): while 0 the engine has no owned observers to skip.
    pub owned: usize,
    /// Entities that became owned this update, with the layers they were in before (what their
    /// shown targets were counted with for `Watched`).
    pub newly_owned: Vec<(Entity, u32)>,
    /// Owned slots the view layer gave back this update ([`Self::release`]).
    released: Vec<u32>,
    /// The observers the view layer must look at this update.
    pub touches: Touches,
    /// Whether the engine writes the observers' `InterestSet`s
    /// ([`AoiPlugin::interest_sets`](crate::AoiPlugin::interest_sets)).
    pub keeps_sets: bool,
    /// The largest step of this tick's stepping targets, with slack (0 between ticks).
    pub step_reach: f32,
    /// How many changed slots only stepped, in the last tick that had changes.
    stepped: usize,
    /// How far a change may move and still only step; follows the moves.
    step_limit: StepLimit,
    /// Cell changes since slots were last numbered in space order (see [`Self::renumber`]).
    relinks: usize,
    renumbered: usize,
    /// The runs of the shortlist's classification and moves split over the compute pool.
    move_plans: Vec<moves::MovePlan>,
    /// The classification and moves on the calling thread: the changes that change cell, enter
    /// or leave the grid, with their new cell keys, moved after the others.
    moving_here: Vec<moves::CellChange>,
    /// Which grid members are stale ([`lazy_members`]).
    lazy: lazy_members::LazyMembers,
}

impl AoiIndex {
    pub fn new(
        plane: Plane,
        kind: IndexKind,
        cell_size: CellSize,
        bounds: Option<AoiBounds>,
        keeps_sets: bool,
    ) -> Self {
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
            starts: Vec::new(),
            old_views: Vec::new(),
            free_slots: Vec::new(),
            by_entity: EntitySlots::default(),
            lists: Vec::new(),
            changes: Vec::new(),
            spare_changes: Vec::new(),
            moves: GatheredMoves::default(),
            change_keys: KeySort::default(),
            unsettled: Vec::new(),
            unsettled_back: 0,
            turned: Vec::new(),
            turns: Vec::new(),
            radii: BTreeMap::new(),
            always: BTreeMap::new(),
            wide: WideObservers::default(),
            observers: 0,
            narrow_observers: 0,
            owned: 0,
            newly_owned: Vec::new(),
            released: Vec::new(),
            touches: Touches::default(),
            keeps_sets,
            step_reach: 0.0,
            stepped: 0,
            busy: BusyCells::default(),
            step_limit: StepLimit::default(),
            relinks: 0,
            move_plans: Vec::new(),
            moving_here: Vec::new(),
            renumbered: 0,
            lazy: lazy_members::LazyMembers::default(),
        }
    }

    /// The slot of a tracked entity.
    pub fn slot_of(&self, entity: Entity) -> Option<u32> {
        self.by_entity.get(entity)
    }

    /// Pushes every observer that sees slot `s` now into `out` (the grid around it within the
    /// ordinary reach, then the wide observers), except those the view layer owns (it knows what
    /// they show). `cells` is a scratch buffer. Only valid between ticks (no slot on the
    /// shortlist).
    pub fn observers_seeing(&self, s: u32, cells: &mut Vec<u32>, out: &mut Vec<Entity>) {
        let t = self.slots[s as usize].target();
        cells.clear();
        if let Some(w) = self.grid.observer_region(&t, self.ordinary_reach()) {
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
            let near = self
                .grid
                .observer_slab(c, hint, &t, self.ordinary_reach())
                .unwrap_or(0..0);
            // Observers the view layer owns are the layer's to list. A member may still carry
            // the last update's radius ([`Self::end_tick`]): its slot's settled one counts. A
            // stale member ([`lazy_members`]) is met here only in a whole instance, searched for
            // an `Always` target, which judges without distance: it lies in a lone cell, out of
            // the window around any other entity.
            let found = (cell.members[near].iter()).filter(|m| m.slot != s && !self.shown_by_layer(m.slot));
            let seeing = |m: &&Member| {
                let r2 = self.slots[m.slot as usize].settled_r2();
                r2 >= 0.0
                    && sees(
                        &ObserverState {
                            r2,
                            ..observer_of(m, instance)
                        },
                        &t,
                    )
            };
            out.extend(found.filter(seeing).map(|m| self.entities[m.slot as usize]));
        }
        for &w in &self.wide.slots {
            let o = &self.slots[w as usize];
            if w != s && !self.shown_by_layer(w) && sees(&o.observer_at(o.p), &t) {
                out.push(self.entities[w as usize]);
            }
        }
    }

    /// Gives slot `s` back to the pair engine once this update's messages are written (the
    /// view layer let it go; until then the engine's pairs for it are still not its messages).
    pub fn release(&mut self, s: u32) {
        if self.slots[s as usize].owned() {
            self.released.push(s);
        }
    }

    /// Whether the view layer owns slot `s`'s set now (owned, and not released this update);
    /// no slot is looked at while the layer owns none.
    pub fn shown_by_layer(&self, s: u32) -> bool {
        self.owned > 0 && self.slots[s as usize].owned() && !self.released.contains(&s)
    }

    /// Ends the update once its messages are written: the slots the view layer released are the
    /// engine's again, and the reasons' records are forgotten.
    pub fn end_messages(&mut self) {
        self.forget_turns();
        let mut released = core::mem::take(&mut self.released);
        for s in released.drain(..) {
            self.set_owned(s, false);
        }
        self.released = released;
    }

    /// Hands slot `s` to the view layer (`owned`) or gives it back to the engine: the slot's
    /// flag, its bit in [`Touches`] and the count [`Self::owned`] change together. Whether it
    /// changed hands (`false` when it already was so).
    pub(crate) fn set_owned(&mut self, s: u32, owned: bool) -> bool {
        let slot = &mut self.slots[s as usize];
        if slot.owned() == owned {
            return false;
        }
        slot.set_owned(owned);
        self.touches.set_owned(s, owned);
        if owned {
            self.owned += 1;
        } else {
            self.owned -= 1;
        }
        true
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
        let slot = Slot::free();
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.slots[s as usize] = slot;
                self.entities[s as usize] = entity;
                s
            }
            None => {
                self.old_views.push(OldView::of(&slot));
                self.slots.push(slot);
                self.entities.push(entity);
                self.starts.push([0.0; 3]);
                self.lists.push(Vec::new());
                self.turned.push(reasons::NOT_TURNED);
                self.touches.grow(self.slots.len());
                (self.slots.len() - 1) as u32
            }
        };
        self.by_entity.insert(entity, s);
        s
    }

    /// Renumbers the slots in space order when entities have scattered (see below). Runs after
    /// the tick's messages are written, since it changes what the slots of their pairs mean.
    pub fn renumber_if_scattered(&mut self, pool: Option<&TaskPool>) {
        // Once the entities changed cell about once each, neighbours no longer have nearby slot
        // numbers; renumbering keeps every per-slot access of the scans (marks, lists) within a
        // few cache lines per observer. It costs a fraction of an update, mostly renaming the
        // slots in every list (uniform 50k, every 17 updates or so, a timer around it: 3.7-5.0
        // ms on two threads, 5.2-7.6 ms on one; `PERFORMANCE.md`, stop 49). It only pays where
        // cells are shared (dense maps); with one entity per cell there is nothing to gather.
        let tracked = self.by_entity.len();
        if self.relinks > 64 && self.relinks > tracked && tracked >= 4 * self.grid.occupied() {
            self.renumber(pool);
        }
    }

    /// How many of this tick's shortlist are standing observers of busy cells ([`busy`]): the
    /// rest changed.
    pub fn busy_standing(&self) -> usize {
        self.busy.scanned
    }

    /// Whether every change on this tick's shortlist only stepped (none jumped). Valid from
    /// [`Self::apply_changes`] to [`Self::end_tick`].
    pub fn none_jumped(&self) -> bool {
        self.stepped == self.changes.len()
    }

    /// Whether every change on this tick's shortlist jumped (none stepped, so no observer takes
    /// the flip scan). Valid from [`Self::apply_changes`] to [`Self::end_tick`].
    pub fn none_stepped(&self) -> bool {
        self.stepped == 0
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
            + self.starts.capacity() * size_of::<[f32; 3]>()
            + self.free_slots.capacity() * size_of::<u32>()
            + self.by_entity.heap_bytes()
            + self.lists.capacity() * size_of::<Vec<u32>>()
            + (self.changes.capacity() + self.spare_changes.capacity()) * size_of::<Change>()
            + self.old_views.capacity() * size_of::<OldView>()
            + self.turns.capacity() * size_of::<(u32, OldView)>()
            + self.change_keys.heap_bytes()
            + self.moves.heap_bytes()
            + (self.turned.capacity() + self.unsettled.capacity()) * size_of::<u32>()
            + self.radii.len() * 3 * size_of::<(u32, u32)>()
            + self.wide.slots.capacity() * size_of::<u32>()
            + self.wide.places.heap_bytes()
            + self.touches.heap_bytes()
    }

    /// Fills the counters the index knows.
    pub fn stats(&self, stats: &mut crate::settings::AoiStats) {
        stats.entities = self.by_entity.len();
        stats.observers = self.observers;
        stats.cells = self.grid.occupied();
        stats.cell_side = self.grid.side();
        stats.wide_observers = self.wide.slots.len();
        // Every standing observer a busy cell added stepped (by zero).
        stats.stepped = self.stepped - self.busy.scanned;
        stats.busy_standing = self.busy.scanned;
        stats.step_limit = self.grid.side() * self.step_limit.over_side();
        stats.deferred_grid_writes = self.stale_members();
    }
}
