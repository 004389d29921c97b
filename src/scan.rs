//! The three scans of the pair engine, each deciding one kind of pair (the table of who decides
//! which pair is in `interest.rs`):
//! - [`observer_group`]: a cell's changed observers. A *stepping* observer tests each member of
//!   its window at the start and at the end of the tick and edits its list where the two differ
//!   (a flip scan); any other changed observer recomputes its whole list.
//! - [`target`]: one changed target against the observers that did not change (and, for a
//!   *jumped* target, against the stepping observers too).
//!
//! With the sorted-axes index each instance is one cell, sorted along `x`, and every scan narrows
//! it to the slab within its reach ([`Grid::slab`]); nothing else differs.

use core::ops::Range;
use std::collections::BTreeMap;

use bevy_ecs::entity::Entity;

use crate::{
    components::{merge_targets, reserve_with_headroom},
    config::IndexKind,
    grid::{Cell, FlipShape, Grid, Member},
    index::{AoiIndex, Touches},
    lists::remove_seen,
    prefetch::prefetch,
    rules::AoiVisibility,
    slot::{Change, Slot, observer_of},
    visibility::{ObserverState, TargetState, in_rect, observer_region, observer_slab, sees},
    wide::WideObservers,
};

/// In a buffer of enters, `(o, WHOLE_LIST)` stands for every entry of `o`'s list after the
/// tick, in order: an observer that saw nothing before entered all it sees now. The first update
/// thus does not hold each of its millions of enters twice (in the lists and as pairs).
pub(crate) const WHOLE_LIST: u32 = u32::MAX;

/// Per-task buffers, kept between ticks.
#[derive(Default)]
pub(crate) struct TaskBuffers {
    /// Per slot: the epoch at which it was last seen in the list being recomputed.
    marks: Vec<u32>,
    epoch: u32,
    cells: Vec<u32>,
    found: Vec<u32>,
    /// One observer's entering and leaving targets, merged into its `InterestSet` at the end.
    entering: Vec<Entity>,
    leaving: Vec<Entity>,
    /// This task's enters and leaves, as `(observer, target)` slots, in decision order.
    pub enters: Enters,
    pub leaves: Vec<(u32, u32)>,
}

impl TaskBuffers {
    /// A fresh even mark value; old marks can never collide with it.
    fn next_epoch(&mut self, slots: usize) -> u32 {
        if self.marks.len() < slots {
            self.marks.resize(slots, 0);
        }
        if self.epoch >= u32::MAX - 2 {
            self.marks.fill(0);
            self.epoch = 0;
        }
        self.epoch += 2;
        self.epoch
    }

    pub fn clear(&mut self) {
        self.enters.clear();
        self.leaves.clear();
    }
}

/// Enters as `(observer, target)` slots, where `(o, WHOLE_LIST)` stands for all of `o`'s list.
#[derive(Default)]
pub(crate) struct Enters {
    pub pairs: Vec<(u32, u32)>,
    /// How many enters `pairs` stands for, runs expanded.
    pub count: usize,
}

impl Enters {
    /// `o` now sees `t`.
    #[inline]
    fn push(&mut self, o: u32, t: u32) {
        self.pairs.push((o, t));
        self.count += 1;
    }

    /// `o` now sees all of its list, `len` targets, and saw nothing before.
    fn push_whole_list(&mut self, o: u32, len: usize) {
        self.pairs.push((o, WHOLE_LIST));
        self.count += len;
    }

    fn clear(&mut self) {
        self.pairs.clear();
        self.count = 0;
    }
}

/// What the scans read: the grid, the slots, the `Always`-visible slots per instance, and the
/// largest step of the tick.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub grid: &'a Grid,
    pub slots: &'a [Slot],
    /// `slots[s].entity`, packed.
    pub entities: &'a [Entity],
    pub always: &'a BTreeMap<u32, Vec<u32>>,
    pub step_reach: f32,
    /// Where target scans mark the observers the view layer must look at, while it owns some.
    pub touches: Option<&'a Touches>,
}

impl<'a> View<'a> {
    /// What the scans read of the index.
    pub fn of(index: &'a AoiIndex) -> Self {
        Self {
            grid: &index.grid,
            slots: &index.slots,
            entities: &index.entities,
            always: &index.always,
            step_reach: index.step_reach,
            touches: (index.owned > 0).then_some(&index.touches),
        }
    }
}

/// Where one group's results go: the observers' lists and `InterestSet` buffers.
pub(crate) struct Out<'a> {
    pub lists: &'a mut [Vec<u32>],
    pub sets: &'a mut [Vec<Entity>],
}

/// Decides every pair of (some of) the changed observers of one cell; `reach` is the largest
/// [scan reach](Slot::scan_reach) of the cell's whole group, so the cells are listed in the
/// same order however the group is split between tasks.
pub(crate) fn observer_group(
    view: View,
    cell: u32,
    reach: f32,
    observers: &[u32],
    out: Out,
    scratch: &mut TaskBuffers,
) {
    let grid = view.grid;
    let window = grid.cell_window(grid.cells[cell as usize].key, reach);
    let mut cells = core::mem::take(&mut scratch.cells);
    cells.clear();
    grid.cells_around(cell, &window, &mut cells);
    for (i, &o) in observers.iter().enumerate() {
        // The next observer's list and set live elsewhere on the heap and are read first thing:
        // ask for them now, while this observer's scan runs.
        if let (Some(list), Some(set)) = (out.lists.get(i + 1), out.sets.get(i + 1)) {
            prefetch(list);
            prefetch(set);
        }
        let (list, set) = (&mut out.lists[i], &mut out.sets[i]);
        if view.slots[o as usize].stepping {
            flip_scan(view, o, &cells, list, set, scratch);
        } else {
            recompute(view, o, &cells, list, set, scratch);
        }
    }
    scratch.cells = cells;
}

/// Calls `hit` with every member of `cells` within observer `me`'s
/// [scan extent](Slot::scan_extent) (as [`scan_cells`]) for which `test` holds. The test is run
/// branch-free over 64 members at a time, then only the hits are visited.
#[inline(always)]
fn scan_members(view: View, me: &Slot, cells: &[u32], test: impl Fn(&Member) -> bool, mut hit: impl FnMut(&Member)) {
    scan_cells(view, me, cells, me.scan_extent(view.step_reach), |cell, range| {
        for chunk in cell.members[range].chunks(64) {
            let mask = chunk
                .iter()
                .enumerate()
                .fold(0u64, |mask, (j, m)| mask | u64::from(test(m)) << j);
            each_bit(chunk, mask, |m, _| hit(m));
        }
    });
}

/// Calls `each(cell, range)` with the members of `cells` within `extent` of observer `me` on
/// each axis, as index ranges (the cells of that window; in a sorted cell, its
/// [slab](Grid::slab)).
#[inline(always)]
fn scan_cells<'g>(
    view: View<'g>,
    me: &Slot,
    cells: &[u32],
    extent: [f32; 3],
    mut each: impl FnMut(&'g Cell, Range<usize>),
) {
    let grid = view.grid;
    let mine = grid.window_axes(me.p, extent, me.rules.instance);
    for &c in cells {
        let cell = &grid.cells[c as usize];
        if mine.contains(cell.key) {
            each(cell, grid.slab(c, me.member_index as usize, me.p[0], extent[0]));
        }
    }
}

/// Calls `hit(member, j)` for each bit `j` of `mask`, the members counted from `run[0]`.
#[inline(always)]
fn each_bit<'m>(run: &'m [Member], mask: u64, mut hit: impl FnMut(&'m Member, usize)) {
    each_lane(mask, |j| hit(&run[j], j));
}

/// Calls `hit(j)` for each bit `j` of `mask`, lowest first.
#[inline(always)]
fn each_lane(mut mask: u64, mut hit: impl FnMut(usize)) {
    while mask != 0 {
        let j = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        hit(j);
    }
}

/// A stepping observer's flip scan: each member of its window (a jumped target's pair is decided
/// by that target's own scan) is tested with both ends where they were at the start of the tick
/// and where they are now; where the answers differ the pair enters or leaves, and the list and
/// set are edited in place. Nothing else changed for the pair (same radius, rules, instance), so
/// the start answer is exactly what the list holds.
fn flip_scan(view: View, o: u32, cells: &[u32], list: &mut Vec<u32>, set: &mut Vec<Entity>, scratch: &mut TaskBuffers) {
    let me = &view.slots[o as usize];
    let (now, start, layers) = (me.p, me.start_p, me.rules.sees);
    scratch.entering.clear();
    scratch.leaving.clear();
    let mut flip = |target: u32, entity: Entity, inside_now: bool| {
        if inside_now {
            list.push(target);
            scratch.entering.push(entity);
            scratch.enters.push(o, target);
        } else {
            remove_seen(list, target);
            scratch.leaving.push(entity);
            scratch.leaves.push((o, target));
        }
    };
    // Both ends tested four members at a time over the cells' positions, as a disc or as a
    // rectangle; a flip's slot and layers are in the block just tested, its entity in the packed
    // array (the member's own record would be one more cache miss per flip).
    let shape = me.rect.map_or(FlipShape::Disc(me.r2), FlipShape::Rect);
    scan_cells(view, me, cells, me.scan_extent(view.step_reach), |cell, range| {
        cell.pos
            .flips(range, now, start, shape, view.grid.with_z(), |first, flips, inside| {
                each_lane(flips, |j| {
                    let lane = cell.pos.lane(first + j);
                    if lane.slot != o && layers & lane.flip_layers != 0 {
                        flip(lane.slot, view.entities[lane.slot as usize], (inside >> j) & 1 != 0);
                    }
                });
            });
    });
    // The view layer writes the sets of the observers it owns.
    if !me.owned {
        merge_targets(set, &mut scratch.entering, &mut scratch.leaving);
    }
}

/// Recomputes one changed observer's whole list from the members of its window, then its
/// instance's `Always`-visible targets, and diffs it against the old list with per-slot marks
/// (no list is sorted); only the differences are merged into its `InterestSet`.
fn recompute(view: View, o: u32, cells: &[u32], list: &mut Vec<u32>, set: &mut Vec<Entity>, scratch: &mut TaskBuffers) {
    let me = &view.slots[o as usize];
    let e = scratch.next_epoch(view.slots.len());
    for &t in list.iter() {
        scratch.marks[t as usize] = e;
    }
    scratch.found.clear();
    let found = &mut scratch.found;
    let (p, layers) = (me.p, me.rules.sees);
    let candidate = move |m: &Member| (m.slot != o) & ((layers & m.seen_by) != 0);
    // One copy of the loop per view shape, so a radius pays nothing for rectangles.
    match me.rect {
        None => {
            // Its disc now: a stepping observer's wider extent is for flip scans only.
            let own = &view.grid.cells[me.cell as usize];
            scan_cells(view, me, cells, me.view_extent(), |cell, range| {
                cell.pos
                    .within(range.clone(), p, me.r2, view.grid.with_z(), |start, mask| {
                        // Its own member always hits: dropped from the mask without reading it
                        // (in a sparse world it is the only hit).
                        let mine = (me.member_index as usize).wrapping_sub(start);
                        let mask = if core::ptr::eq(cell, own) && mine < 64 {
                            mask & !(1 << mine)
                        } else {
                            mask
                        };
                        each_bit(&cell.members[start..], mask, |m, _| {
                            if candidate(m) {
                                found.push(m.slot);
                            }
                        });
                    });
            });
        }
        Some(half) => {
            let seen = |m: &Member| in_rect(p, half, m.p) & candidate(m);
            scan_members(view, me, cells, seen, |m| found.push(m.slot));
        }
    }
    // `Always`-visible targets of the instance, whatever the distance.
    for &a in view.always.get(&me.rules.instance).map_or(&[][..], Vec::as_slice) {
        if a != o && (me.rules.sees & view.slots[a as usize].rules.member) != 0 {
            found.push(a);
        }
    }
    scratch.entering.clear();
    scratch.leaving.clear();
    if list.is_empty() {
        // Everything found entered: one run instead of a pair each (the first update's millions).
        if !found.is_empty() {
            scratch.enters.push_whole_list(o, found.len());
            let entities = found.iter().map(|&t| view.entities[t as usize]);
            scratch.entering.extend(entities);
        }
    } else {
        for &t in found.iter() {
            let mark = &mut scratch.marks[t as usize];
            if *mark == e {
                *mark = e | 1;
            } else {
                scratch.enters.push(o, t);
                scratch.entering.push(view.entities[t as usize]);
            }
        }
    }
    for &t in list.iter() {
        if scratch.marks[t as usize] == e {
            scratch.leaves.push((o, t));
            scratch.leaving.push(view.entities[t as usize]);
        }
    }
    list.clear();
    reserve_with_headroom(list, found.len());
    list.extend_from_slice(found);
    // The view layer writes the sets of the observers it owns.
    if !me.owned {
        merge_targets(set, &mut scratch.entering, &mut scratch.leaving);
    }
}

/// The cells where the observers affected by one changed target are: around its old and new
/// positions (within `reach`) in their instances, or every cell of an instance where it is or
/// was `Always` visible. Each cell is listed once.
fn target_cells(grid: &Grid, me: &Slot, ch: &Change, reach: f32, out: &mut Vec<u32>) {
    match (
        observer_region(grid, &me.target(), reach),
        observer_region(grid, &ch.old_target(), reach),
    ) {
        (Some(a), Some(b)) if a.overlaps(&b) => grid.cells_around(me.cell, &a.union(&b), out),
        (Some(a), None) => grid.cells_around(me.cell, &a, out),
        (a, b) => {
            for w in a.iter().chain(b.iter()) {
                grid.cells_in(w, out);
            }
        }
    }
}

/// The parts of cell `c` where observers of a changed target may be (its
/// [`observer_slab`]s now and at the start of the tick, searched from member `near`), each member
/// in at most one of them.
fn target_slabs(
    grid: &Grid,
    c: u32,
    near: usize,
    now: &TargetState,
    before: &TargetState,
    reach: f32,
) -> [Range<usize>; 2] {
    if grid.kind() == IndexKind::Grid {
        // The cell is listed because one of the two regions covers it: the whole cell, once.
        return [0..grid.cells[c as usize].members.len(), 0..0];
    }
    let slab = |t| observer_slab(grid, c, near, t, reach);
    match (slab(now), slab(before)) {
        (Some(a), Some(b)) if a.start <= b.end && b.start <= a.end => [a.start.min(b.start)..a.end.max(b.end), 0..0],
        (a, b) => [a.unwrap_or(0..0), b.unwrap_or(0..0)],
    }
}

/// Finds the observers whose view of one changed target flips, among those whose pairs with it
/// no other scan decides: the clean observers (the wide ones from their list, the others in the
/// cells around the target within the ordinary `reach`), and for a jumped target the stepping
/// observers too, tested where they were at the start of the tick and where they are now.
/// `any_clean` says whether any observer is clean this tick.
pub(crate) fn target(
    view: View,
    wide: &WideObservers,
    ch: &Change,
    reach: f32,
    any_clean: bool,
    scratch: &mut TaskBuffers,
) {
    let me = &view.slots[ch.slot as usize];
    // A target that only stepped, with its rules and its observers' unchanged, flips only by
    // distance; `Always` and `Hidden` ones do not depend on it.
    if !me.jumped && (!any_clean || me.rules.mode != AoiVisibility::Normal) {
        // A stepping `Always` target's tier may change for any observer of its instance.
        if let Some(touches) = view.touches
            && me.rules.mode == AoiVisibility::Always
        {
            touches.touch_everyone();
        }
        return;
    }
    let (now, before) = (me.target(), ch.old_target());
    // Records the pair if observer `o` (as `start` at the start of the tick, as `end` now) sees
    // the target now and not before, or the other way round; and, for the view layer, touches
    // `o` if it sees the target at either time.
    let mut judge = |o: u32, start: ObserverState, end: ObserverState| {
        let (is, was) = (sees(&end, &now), sees(&start, &before));
        if is != was {
            if is {
                scratch.enters.push(o, ch.slot);
            } else {
                scratch.leaves.push((o, ch.slot));
            }
        }
        if let Some(touches) = view.touches
            && (is || was)
        {
            touches.touch(o);
        }
    };
    if me.jumped {
        for &w in &wide.slots {
            let o = &view.slots[w as usize];
            // A changed wide observer recomputes its own list.
            if !o.on_shortlist {
                let at = o.observer_at(o.p);
                judge(w, at, at);
            }
        }
    } else {
        // A stepping `Normal` target, as in the cells below: the wide observers' discs (a
        // rectangle's disc around it) tested four at a time, and an observer judged only if its
        // disc holds the target at either end (else it sees it at neither) and, for a disc
        // while the view layer needs no touches, only where the step flips the test (else it
        // sees it at both ends or at neither). Changed ones have a negative radius there.
        let with_z = view.grid.with_z();
        let every_seer = view.touches.is_some();
        wide.places
            .seeing(0..wide.slots.len(), now.p, before.p, with_z, |start, flips, sees| {
                each_lane(sees, |j| {
                    let w = wide.slots[start + j];
                    let o = &view.slots[w as usize];
                    if (flips >> j) & 1 != 0 || o.rect.is_some() || every_seer {
                        let at = o.observer_at(o.p);
                        judge(w, at, at);
                    }
                });
            });
    }
    let reach = if me.jumped { reach + view.step_reach } else { reach };
    let mut cells = core::mem::take(&mut scratch.cells);
    cells.clear();
    target_cells(view.grid, me, ch, reach, &mut cells);
    for &c in &cells {
        let cell = &view.grid.cells[c as usize];
        let instance = cell.key[3] as u32;
        // Its own member is the place to search from in its cell (a hint only).
        let near = if c == me.cell { me.member_index as usize } else { 0 };
        let slabs = target_slabs(view.grid, c, near, &now, &before, reach);
        if me.jumped {
            for m in slabs.into_iter().flat_map(|r| &cell.members[r]).filter(|m| m.r2 >= 0.0) {
                let end = observer_of(m, instance, view.slots);
                judge(m.slot, ObserverState { p: m.start_p, ..end }, end);
            }
        } else if cell.clean.all > 0 {
            // A stepping `Normal` target in its own instance's cells: `sees` reduces to the
            // layers and the two distances, tested four members at a time over the cells'
            // positions with each member's own radius. For a rectangular view the distances
            // test the disc around it: being in that disc at either end makes it a candidate,
            // judged exactly.
            let (member, touches) = (now.rules.member, view.touches);
            let candidate = |m: &Member| m.is_clean_observer() & ((m.sees & member) != 0);
            // Only the flips need judging, unless the view layer wants every observer that sees
            // the target or a rectangle must be judged exactly (then each candidate's record is
            // read).
            let every_seer = touches.is_some() || cell.clean.rects > 0;
            for range in slabs {
                cell.pos
                    .seeing(range, now.p, before.p, view.grid.with_z(), |start, flips, sees| {
                        if !every_seer {
                            // Every clean observer here has a disc: its block lane holds all that
                            // the rule reads of it.
                            each_lane(flips, |j| {
                                let lane = cell.pos.lane(start + j);
                                if lane.clean_sees & member != 0 {
                                    let at = ObserverState {
                                        p: lane.p,
                                        r2: lane.r2,
                                        rect: None,
                                        sees: lane.clean_sees,
                                        instance,
                                    };
                                    judge(lane.slot, at, at);
                                }
                            });
                            return;
                        }
                        each_bit(&cell.members[start..], sees, |m, j| {
                            if !candidate(m) {
                                return;
                            }
                            if (flips >> j) & 1 != 0 || m.rect {
                                // A flip, or a rectangular view whose disc around it saw the target
                                // at either end: judged exactly.
                                let at = observer_of(m, instance, view.slots);
                                judge(m.slot, at, at);
                            } else if let Some(touches) = touches {
                                // For the view layer, a disc observer that sees the target at both
                                // ends is touched without judging it (the disc test is its whole
                                // rule here, and it does not flip).
                                touches.touch(m.slot);
                            }
                        });
                    });
            }
        }
    }
    scratch.cells = cells;
}
