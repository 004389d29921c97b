//! The three scans of the pair engine, each deciding one kind of pair (the table of who decides
//! which pair is in `pair_engine.rs`):
//! - [`observer_group`]: a cell's changed observers. A *stepping* observer tests each member of
//!   its window at the start and at the end of the tick and edits its list where the two differ
//!   (a flip scan, [`flip`]; where it may, it also judges the unchanged observers' views of it
//!   as a target, from the same distances); any other changed observer recomputes its whole
//!   list.
//! - [`target()`] ([`mod@target`]): one changed target against the observers that did not
//!   change (and, for a jumped target, against the stepping observers too).
//!
//! With the sorted-axes index each instance is one cell, sorted along `x`, and every scan narrows
//! it to the slab within its reach ([`Grid::slab`]); nothing else differs.

use core::ops::Range;
use std::collections::BTreeMap;

use bevy_ecs::entity::Entity;

mod avx_twins;
mod flip;
mod marks;
mod target;

use flip::{FlipRun, flip_scan, flip_scan_batch};
use marks::Marks;
pub(crate) use marks::MarksPool;
pub(crate) use target::target;

use crate::{
    bits,
    components::{merge_targets, reserve_with_headroom},
    config::IndexKind,
    grid::{Cell, FLIP_BATCH, Grid, Member, SpreadViews},
    index::{AoiIndex, Seer, Touches},
    prefetch::prefetch,
    slot::{OldView, Slot},
    visibility::in_rect,
};

/// In a buffer of enters, `(o, WHOLE_LIST)` stands for every entry of `o`'s list after the
/// tick, in order: an observer that saw nothing before entered all it sees now. The first update
/// thus does not hold each of its millions of enters twice (in the lists and as pairs).
pub(crate) const WHOLE_LIST: u32 = u32::MAX;

/// Per-task buffers, kept between ticks.
#[derive(Default)]
pub(crate) struct TaskBuffers {
    /// Lent by the engine's [`MarksPool`] for the task's run (empty between runs).
    pub marks: Marks,
    cells: Vec<u32>,
    found: Vec<u32>,
    /// One observer's entering and leaving targets, merged into its `InterestSet` at the end.
    entering: Vec<Entity>,
    leaving: Vec<Entity>,
    /// This task's enters and leaves, as `(observer, target)` slots, in decision order.
    pub enters: Enters,
    pub leaves: Vec<(u32, u32)>,
    /// The pairs its flip scans decided for their observers as targets
    /// ([`Slot::flip_scans_as_target`]): `(clean observer, target)` slots, in decision order.
    /// They join the target scans' results, whose lists they edit.
    pub clean_enters: Enters,
    pub clean_leaves: Vec<(u32, u32)>,
    /// For the view layer, while it owns some slot: the observers it owns that did not change and
    /// saw a changed target at either time, as its target scan or its flip scan as a target
    /// judged them.
    pub seers: Vec<Seer>,
    /// For the view layer: the seers that the flip scans of moving observers it owns recorded
    /// (`flip::band_bounds`), and those observers, whose seers are complete
    /// (`flip::record_band_crossings`).
    pub band_seers: Vec<Seer>,
    pub band_scanned: Vec<u32>,
    /// The runs with flips of a batch of flip scans, by observer ([`flip_scan_batch`]).
    flip_runs: Vec<FlipRun>,
    /// The values of a batch of flip scans' observers spread for the AVX tests.
    spread_views: SpreadViews,
}

impl TaskBuffers {
    pub fn clear(&mut self) {
        self.enters.clear();
        self.leaves.clear();
        self.clean_enters.clear();
        self.clean_leaves.clear();
        self.seers.clear();
        self.band_seers.clear();
        self.band_scanned.clear();
    }
}

/// Enters as `(observer, target)` slots, where `(o, WHOLE_LIST)` stands for all of `o`'s list.
#[derive(Default)]
pub(crate) struct Enters {
    pub pairs: Vec<(u32, u32)>,
    /// How many enters `pairs` stands for, runs expanded.
    pub count: usize,
    /// Whether `pairs` holds a [`WHOLE_LIST`] run.
    pub runs: bool,
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
        self.runs = true;
    }

    fn clear(&mut self) {
        self.pairs.clear();
        self.count = 0;
        self.runs = false;
    }
}

/// What the scans read: the grid, the slots, the `Always`-visible slots per instance, and the
/// largest step of the tick.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub grid: &'a Grid,
    pub slots: &'a [Slot],
    /// Each slot's entity.
    pub entities: &'a [Entity],
    /// Each slot's position at the start of the tick.
    pub starts: &'a [[f32; 3]],
    /// The views of the slots whose view changed this tick, at its start
    /// ([`OldView::at_start`]).
    pub old_views: &'a [OldView],
    pub always: &'a BTreeMap<u32, Vec<u32>>,
    pub step_reach: f32,
    /// Where target scans mark the observers the view layer must look at, while it owns some.
    pub touches: Option<&'a Touches>,
    /// Whether the scans edit their observers' `InterestSet` buffers (else the buffers are
    /// empty and stay so: [`AoiIndex::keeps_sets`]).
    pub keeps_sets: bool,
    /// Whether some observer sees only some layers ([`AoiIndex::narrow_observers`]), on the
    /// grid index: only then can a cell's clean observers all be blind to a target's layers,
    /// and only a grid's cells are small enough to ask (a sorted instance is one cell).
    pub narrow_sees: bool,
    /// Bit `s` is set while slot `s`'s grid member is stale ([`AoiIndex::stale_member_bits`]).
    pub stale: &'a [u64],
}

impl<'a> View<'a> {
    /// What the scans read of the index.
    pub fn of(index: &'a AoiIndex) -> Self {
        Self {
            grid: &index.grid,
            slots: &index.slots,
            entities: &index.entities,
            starts: &index.starts,
            old_views: &index.old_views,
            always: &index.always,
            step_reach: index.step_reach,
            touches: (index.owned > 0).then_some(&index.touches),
            keeps_sets: index.keeps_sets,
            narrow_sees: index.narrow_observers > 0 && index.grid.kind() == IndexKind::Grid,
            stale: index.stale_member_bits(),
        }
    }

    /// Drops from `cells` the cells that hold a stale member: lone cells, listed only where a
    /// window reaches past the cells around its scanner's. A stale member's entity is in its
    /// cell now and started the update in a cell that was lone then (the same, or the one its
    /// cell was carried from), while the scanner did not start next to that cell and does not
    /// end next to this one: at both ends it is out of every view the scans test, whatever its
    /// member says (`index/lazy_members.rs`). `O(cells listed)`: a lone bit each, and the member
    /// of a lone cell.
    pub fn drop_stale_cells(self, cells: &mut Vec<u32>) {
        let grid = self.grid;
        cells.retain(|&c| {
            let only = || grid.cells[c as usize].members[0].slot as usize;
            !(grid.is_lone(c) && bits::contains_or_past(self.stale, only()))
        });
    }

    /// Whether some clean observer of `cell` may see a target of layers `member`: it has clean
    /// observers, and (while some observer sees only some layers) one of them sees one of those
    /// layers. Measured (`headless_simulation --entities 50000`, callgrind, 60 updates less 30):
    /// monsters that see only players, among players that all walk, 111.6 -> 99.5 M
    /// instructions an update.
    #[inline]
    pub fn clean_observers_may_see(self, cell: &Cell, member: u32) -> bool {
        cell.clean.all > 0 && (!self.narrow_sees || cell.pos.clean_sees_any() & member != 0)
    }
}

/// Where one group's results go: the observers' lists and `InterestSet` buffers; and those of
/// the observer the task scans next, after the group, if any (asked for ahead like the group's
/// own: where groups are small, as when few entities move, that is most observers).
pub(crate) struct Out<'a> {
    pub lists: &'a mut [Vec<u32>],
    pub sets: &'a mut [Vec<Entity>],
    pub next: Option<(&'a [u32], &'a [Entity])>,
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
    if !grid.cells_around(cell, &window, &mut cells) {
        view.drop_stale_cells(&mut cells);
    }
    // The stepping observers that take the plain flip scan share their passes over the cells,
    // up to `FLIP_BATCH` at a time; the others are scanned one by one. (A sorted instance is one
    // cell, scanned by each observer's own slab.)
    let batches = grid.kind() == IndexKind::Grid;
    let any_clean = cells.iter().any(|&c| grid.cells[c as usize].clean.all > 0);
    let mut i = 0;
    while i < observers.len() {
        let batch = observers[i..]
            .iter()
            .take(if batches { FLIP_BATCH } else { 0 })
            .take_while(|&&o| flip::batches(&view.slots[o as usize], any_clean))
            .count();
        if batch >= 2 {
            let (lists, lists_after) = out.lists[i..].split_at_mut(batch);
            let (sets, sets_after) = out.sets[i..].split_at_mut(batch);
            let next = first_of(lists_after, sets_after, out.next);
            flip_scan_batch(view, &observers[i..i + batch], &cells, lists, sets, next, scratch);
            i += batch;
            continue;
        }
        // The next observer's list and set live elsewhere on the heap and are read first thing:
        // ask for them now, while this observer's scan runs.
        ask_for(out.lists, out.sets, i + 1, out.next);
        let (o, list, set) = (observers[i], &mut out.lists[i], &mut out.sets[i]);
        if view.slots[o as usize].stepping() {
            flip_scan(view, o, &cells, list, set, scratch);
        } else {
            recompute(view, o, &cells, list, set, scratch);
        }
        i += 1;
    }
    scratch.cells = cells;
}

/// Hints the CPU to bring the list and set of observer `k` of `lists` and `sets` (`next`'s past
/// their end) into cache.
#[inline(always)]
fn ask_for(lists: &[Vec<u32>], sets: &[Vec<Entity>], k: usize, next: Option<(&[u32], &[Entity])>) {
    let k = k.min(lists.len());
    if let Some((list, set)) = first_of(&lists[k..], &sets[k..], next) {
        prefetch(list);
        prefetch(set);
    }
}

/// The first of `lists` and `sets` (the next observers' to scan), else `or`.
fn first_of<'a>(
    lists: &'a [Vec<u32>],
    sets: &'a [Vec<Entity>],
    or: Option<(&'a [u32], &'a [Entity])>,
) -> Option<(&'a [u32], &'a [Entity])> {
    lists.first().zip(sets.first()).map(|(l, s)| (&l[..], &s[..])).or(or)
}

/// Calls `hit` with every member of `cells` within observer `me`'s
/// [view extent](Slot::view_extent) (as [`scan_cells`]; a recompute, so `me` is not stepping)
/// for which `test` holds. The test is run branch-free over 64 members at a time, then only the
/// hits are visited.
#[inline(always)]
fn scan_members(view: View, me: &Slot, cells: &[u32], test: impl Fn(&Member) -> bool, mut hit: impl FnMut(&Member)) {
    scan_cells(view, me, cells, me.view_extent(), |cell, range| {
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
    let on_plane = !grid.with_z();
    for &c in cells {
        let cell = &grid.cells[c as usize];
        let inside = if on_plane {
            mine.contains_on_plane(cell.key)
        } else {
            mine.contains(cell.key)
        };
        if inside {
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

/// Recomputes one changed observer's whole list from the members of its window, then its
/// instance's `Always`-visible targets, and diffs it against the old list with per-slot marks
/// (no list is sorted); only the differences are merged into its `InterestSet`.
fn recompute(view: View, o: u32, cells: &[u32], list: &mut Vec<u32>, set: &mut Vec<Entity>, scratch: &mut TaskBuffers) {
    let me = &view.slots[o as usize];
    let e = scratch.marks.next_epoch(view.slots.len());
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
    // The view layer writes the sets of the observers it owns.
    let edits_set = view.keeps_sets && !me.owned();
    if list.is_empty() {
        // Everything found entered: one run instead of a pair each (the first update's millions).
        if !found.is_empty() {
            scratch.enters.push_whole_list(o, found.len());
            if edits_set {
                let entities = found.iter().map(|&t| view.entities[t as usize]);
                scratch.entering.extend(entities);
            }
        }
    } else {
        for &t in found.iter() {
            let mark = &mut scratch.marks[t as usize];
            if *mark == e {
                *mark = e | 1;
            } else {
                scratch.enters.push(o, t);
                if edits_set {
                    scratch.entering.push(view.entities[t as usize]);
                }
            }
        }
    }
    for &t in list.iter() {
        if scratch.marks[t as usize] == e {
            scratch.leaves.push((o, t));
            if edits_set {
                scratch.leaving.push(view.entities[t as usize]);
            }
        }
    }
    list.clear();
    reserve_with_headroom(list, found.len());
    list.extend_from_slice(found);
    if edits_set {
        merge_targets(set, &mut scratch.entering, &mut scratch.leaving);
    }
}
