//! Sorting the shortlist into stepping and jumped changes and moving them in the grid
//! ([`AoiIndex::classify_and_move`]): on the calling thread, or split over the compute pool in
//! three phases. The split (grid index only) first classifies runs of the shortlist, each run
//! owning its range of slots (the shortlist is in slot order), and sorts each change into one
//! that stays in its cell or one that moves; then edits the members that stay in place, each
//! task owning a range of cells; then makes the cell changes (and keeps the lists of
//! `Always`-visible slots) on the calling thread, in shortlist order. On the calling thread, one
//! pass classifies the changes and edits the members that stay in place (or leaves them stale,
//! [`super::lazy_members`]), then the cell changes follow in shortlist order. An edit in place
//! changes no member's place, and a cell with a member that stays is neither freed nor carried
//! away, so either way the grid ends as if each change were moved in turn.

use bevy_tasks::TaskPool;
use smallvec::SmallVec;

use super::{
    AoiIndex,
    step_limit::{StepLimit, StepLimits},
};
use crate::{
    config::IndexKind,
    grid::{Cell, CellKey, Grid, Member, NO_CELL, NO_RECT},
    parallel::run_jobs,
    prefetch::{AHEAD, prefetch},
    rules::AoiVisibility,
    slot::{Change, OldView, STEP_SLACK, Slot},
    visibility::{always_in, dist2, scan_layers},
};

/// The split ([`AoiIndex::classify_and_move_split`]) needs at least this many changes per
/// occupied cell on average. Where each walker is alone in its cell (`sparse_huge` 50k, about one
/// change a cell), the split touched each change's slot and cell on both cores for little work
/// shared: `cargo bench --bench report -- sparse_huge`, three runs each, 1t / 2t 0.96-1.03 with
/// the one pass against 0.85-1.03 with the split (uniform 50k has about 30 changes a cell).
const SPLIT_CHANGES_PER_CELL: usize = 4;

/// What [`classify`] compares a change with.
struct StepRules {
    /// The longest step in force (farther is a jump), and the others to count moves against.
    limits: StepLimits,
    /// The ordinary reach: a stepping disc observer at least this large scans as a target too.
    reach: f32,
    /// A stepping observer takes the flip scan if it saw at least this many targets.
    flip_scan_min_seen: usize,
}

/// What the pass on the calling thread ([`AoiIndex::classify_and_move`]) does with a change's
/// grid member ([`AoiIndex::member_move`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum MemberMove {
    /// It stays in its cell and leaves its member stale ([`AoiIndex::may_leave_stale`]).
    LeaveStale,
    /// It stays in its cell and its member is edited in place.
    Edit,
    /// It changes cell, enters the grid or leaves it: moved after the pass
    /// ([`AoiIndex::change_cells`]); `lazy` says whether a carry of its cell may leave its member
    /// stale (as [`Self::LeaveStale`] would, its cell lone at the start of the moves).
    ChangeCell { lazy: bool },
}

/// A change whose slot changes cell, enters the grid or leaves it ([`AoiIndex::change_cells`]).
#[derive(Clone, Copy)]
pub(super) struct CellChange {
    /// The changed slot.
    pub slot: u32,
    /// The key of its cell now.
    pub key: CellKey,
    /// Whether, if its lone cell is carried, its member may be left stale
    /// ([`AoiIndex::may_leave_stale`] held before any cell change of the update).
    pub lazy: bool,
}

/// One run's share of [`AoiIndex::classify_and_move_split`], its buffers kept between updates.
#[derive(Default)]
pub(super) struct MovePlan {
    /// By the task that owns their cell: the run's slots that stay in their cell.
    stays: Vec<Vec<u32>>,
    /// The run's slots that change cell, enter or leave the grid, with their new cell keys.
    moving: Vec<CellChange>,
    /// The places on the shortlist of the run's changes whose `Always` visibility changed.
    always: Vec<u32>,
    /// The run's moves, counted against the step limits.
    counts: StepLimit,
    /// The run's largest step, and how many of its changes stepped.
    largest: f32,
    stepped: usize,
    /// Whether one of the run's jumped changes is or was `Always` visible.
    always_jumped: bool,
}

impl AoiIndex {
    /// Sorts each change of the shortlist into stepping or jumped ([`classify`]), keeps the
    /// `Always` lists in step ([`Self::update_always`]) and, when `moves`, moves it in the grid
    /// (or edits its member in place); records the largest step. On `pool` (when it moves, the
    /// index is the grid and there are at least [`SPLIT_CHANGES_PER_CELL`] changes per occupied
    /// cell) in three phases ([`Self::classify_and_move_split`]), else in one pass here
    /// ([`Self::classify_and_move_here`]); the same grid and slots either way.
    pub(super) fn classify_and_move(&mut self, flip_scan_min_seen: usize, moves: bool, pool: Option<&TaskPool>) {
        let steps = StepRules {
            limits: self.step_limit.limits(self.grid.side()),
            // A flip scan finds the clean observers that see the scanning target too when its
            // window holds every cell the target scan would search (the ordinary reach around
            // both of its points).
            reach: self.ordinary_reach(),
            flip_scan_min_seen,
        };
        let crowded = self.changes.len() >= SPLIT_CHANGES_PER_CELL * self.grid.occupied();
        let split = pool.filter(|_| moves && crowded && self.grid.kind() == IndexKind::Grid);
        let (largest, stepped) = match split {
            Some(pool) => self.classify_and_move_split(&steps, pool),
            None => self.classify_and_move_here(&steps, moves),
        };
        self.stepped = stepped;
        self.step_reach = largest * STEP_SLACK;
        self.step_limit.choose_next();
    }

    /// [`Self::classify_and_move`] on the calling thread: one pass over the changes and their
    /// slots classifies them and edits (or [leaves stale](Self::may_leave_stale)) the members
    /// of those that stay in their cells, as the split's first two phases do; then the cell
    /// changes are made in shortlist order ([`Self::change_cells`]), as its third does, so the
    /// grid ends as the split leaves it. The largest step and how many stepped.
    ///
    /// One pass rather than three: uniform 50k, one thread, three alternating runs with phase
    /// timers, the index's whole update after change pickup 3.65-3.78 → 3.18-3.28 ms. The cell
    /// changes after it (stop 84): a pass whose members stay stale is short, so a cell change
    /// inside it found the records it had asked for still on their way (`sparse_huge` 50k: see
    /// `PERFORMANCE.md`, stop 84).
    fn classify_and_move_here(&mut self, steps: &StepRules, moves: bool) -> (f32, usize) {
        let (mut largest, mut stepped) = (0.0f32, 0);
        let mut moving = core::mem::take(&mut self.moving_here);
        moving.clear();
        // The new cell key of change `j` and what its move does to its member, at `j % AHEAD`,
        // from `AHEAD` changes before its move on. Its member is asked for only if it is edited
        // (the cell changes after this pass ask for their own).
        let mut ahead = [(CellKey::default(), MemberMove::Edit); AHEAD];
        for (j, next) in ahead.iter_mut().enumerate().take(self.changes.len()) {
            *next = self.member_move(j);
        }
        for i in 0..self.changes.len() {
            let (key, member_move) = ahead[i % AHEAD];
            if moves {
                if i + AHEAD < self.changes.len() {
                    ahead[i % AHEAD] = self.member_move(i + AHEAD);
                }
                let slot_at = |i| self.changes.get(i).map(|ch: &Change| ch.slot);
                let record_only = ahead[i % AHEAD].1 != MemberMove::Edit;
                self.prefetch_grid_ahead_unless(i, slot_at, |_| true, |_| record_only);
            }
            let always_at_an_end = self.update_always(i);
            let ch = &self.changes[i];
            let (seen, slot) = (self.lists[ch.slot as usize].len(), &mut self.slots[ch.slot as usize]);
            let old = OldView::at_start(ch.slot, slot, &self.old_views);
            if let Some(step) = classify(ch, &old, seen, slot, steps, &mut self.step_limit) {
                largest = largest.max(step);
                stepped += 1;
            }
            self.lazy.always_jumped |= always_at_an_end && slot.jumped();
            if !moves {
                continue;
            }
            let (s, slot) = (ch.slot, &self.slots[ch.slot as usize]);
            match member_move {
                MemberMove::LeaveStale => self.leave_stale(s),
                // Its start (in this cell, where the slot was) and its position now.
                MemberMove::Edit => self.write_whole_member(s, slot.cell, slot.member_index),
                MemberMove::ChangeCell { lazy } => moving.push(CellChange { slot: s, key, lazy }),
            }
        }
        self.change_cells(&moving);
        self.moving_here = moving;
        (largest, stepped)
    }

    /// The cell key of change `j`'s slot now, and what its move does to its member: if it stays
    /// in its cell, edited in place or [left stale](Self::may_leave_stale), else moved with a
    /// cell change after the pass. Reads its slot and its cell's record. Asked `AHEAD` changes
    /// before the move: none of it changes but by the slot's own move, and the pass makes no
    /// cell change.
    #[inline(always)]
    fn member_move(&self, j: usize) -> (CellKey, MemberMove) {
        let s = self.changes[j].slot;
        let slot = &self.slots[s as usize];
        let key = self.grid.key(slot.p, slot.rules.instance);
        let member_move = if !stays_in_cell(slot, &self.grid, key) {
            let lazy = slot.in_grid() && slot.cell != NO_CELL && self.may_leave_stale(s, key);
            MemberMove::ChangeCell { lazy }
        } else if self.may_leave_stale(s, key) {
            MemberMove::LeaveStale
        } else {
            MemberMove::Edit
        };
        (key, member_move)
    }

    /// [`Self::classify_and_move`] on `pool`, for the grid index, in the three phases of the
    /// module doc. The largest step and how many stepped.
    fn classify_and_move_split(&mut self, steps: &StepRules, pool: &TaskPool) -> (f32, usize) {
        let tasks = pool.thread_num();
        if self.move_plans.len() < tasks {
            self.move_plans.resize_with(tasks, MovePlan::default);
        }
        for plan in &mut self.move_plans[..tasks] {
            plan.stays.resize_with(tasks, Vec::new);
            plan.stays.iter_mut().for_each(Vec::clear);
            plan.moving.clear();
            plan.always.clear();
            (plan.largest, plan.stepped, plan.always_jumped) = (0.0, 0, false);
        }
        // Task `k` owns cells `k * per_owner..(k + 1) * per_owner`.
        let per_owner = self.grid.cells.len().div_ceil(tasks).max(1);
        self.plan_runs(steps, pool, per_owner);
        self.edit_in_place(pool, per_owner);
        let (mut largest, mut stepped) = (0.0f32, 0);
        for k in 0..tasks {
            let plan = &mut self.move_plans[k];
            self.step_limit.absorb(&mut plan.counts);
            largest = largest.max(plan.largest);
            stepped += plan.stepped;
            self.lazy.always_jumped |= plan.always_jumped;
            let (moving, always) = (core::mem::take(&mut plan.moving), core::mem::take(&mut plan.always));
            self.change_cells(&moving);
            for &i in &always {
                // Whether it is or was `Always` visible is in the plan already.
                self.update_always(i as usize);
            }
            (self.move_plans[k].moving, self.move_plans[k].always) = (moving, always);
        }
        (largest, stepped)
    }

    /// The first phase: each run of the shortlist (one task each, with the range of slots from
    /// its first change's to its last's) classifies its changes ([`classify`]) and sorts them into
    /// those that stay in their cell (by the task that owns the cell, `per_owner` cells a task)
    /// and those that move, with their new cell keys, into its [`MovePlan`].
    fn plan_runs(&mut self, steps: &StepRules, pool: &TaskPool, per_owner: usize) {
        let per_run = self.changes.len().div_ceil(pool.thread_num()).max(1);
        let (grid, lists, old_views) = (&self.grid, &self.lists[..], &self.old_views[..]);
        let mut slots = &mut self.slots[..];
        let mut jobs: SmallVec<[_; 16]> = SmallVec::new();
        let (mut first, mut base) = (0, 0);
        for (run, plan) in self.changes.chunks(per_run).zip(&mut self.move_plans) {
            let end = run.last().expect("a run should hold a change").slot as usize + 1;
            let (own, after) = core::mem::take(&mut slots).split_at_mut(end - base);
            slots = after;
            jobs.push((first, run, (own, base), plan));
            (first, base) = (first + run.len(), end);
        }
        type Run<'a> = (usize, &'a [Change], (&'a mut [Slot], usize), &'a mut MovePlan);
        let plan_run = |(first, run, (slots, base), plan): Run| {
            for (j, ch) in run.iter().enumerate() {
                if let Some(ahead) = run.get(j + AHEAD) {
                    grid.prefetch_cell(slots[ahead.slot as usize - base].cell);
                }
                let slot = &mut slots[ch.slot as usize - base];
                let old = OldView::at_start(ch.slot, slot, old_views);
                let (was, is) = (always_in(&old.target(ch.old_p)), always_in(&slot.target()));
                if was != is {
                    plan.always.push((first + j) as u32);
                }
                let seen = lists[ch.slot as usize].len();
                if let Some(step) = classify(ch, &old, seen, slot, steps, &mut plan.counts) {
                    plan.largest = plan.largest.max(step);
                    plan.stepped += 1;
                }
                plan.always_jumped |= (was.is_some() || is.is_some()) && slot.jumped();
                let key = grid.key(slot.p, slot.rules.instance);
                if stays_in_cell(slot, grid, key) {
                    plan.stays[slot.cell as usize / per_owner].push(ch.slot);
                } else {
                    plan.moving.push(CellChange {
                        slot: ch.slot,
                        key,
                        lazy: false,
                    });
                }
            }
        };
        run_jobs(Some(pool), jobs, &plan_run);
    }

    /// The second phase: each task edits in place the members of its cells (`per_owner` cells a
    /// task) that stay there, run after run; nothing else touches those cells meanwhile.
    fn edit_in_place(&mut self, pool: &TaskPool, per_owner: usize) {
        let plans = &self.move_plans[..pool.thread_num()];
        let (slots, starts) = (&self.slots[..], &self.starts[..]);
        let edit_cells = |(owner, cells): (usize, &mut [Cell])| {
            let base = owner * per_owner;
            let cell_of = |s: u32| slots[s as usize].cell as usize - base;
            for stays in plans.iter().map(|plan| &plan.stays[owner]) {
                for (j, &s) in stays.iter().enumerate() {
                    // The cell record, then (that record cached by now) the member and its block.
                    if let Some(&ahead) = stays.get(j + 2 * AHEAD) {
                        prefetch(core::slice::from_ref(&cells[cell_of(ahead)]));
                    }
                    if let Some(&ahead) = stays.get(j + AHEAD) {
                        cells[cell_of(ahead)].prefetch_member(slots[ahead as usize].member_index);
                    }
                    let member = member_of(slots, starts, s);
                    cells[cell_of(s)].edit_member(slots[s as usize].member_index, |m| *m = member);
                }
            }
        };
        run_jobs(
            Some(pool),
            self.grid.cells.chunks_mut(per_owner).enumerate(),
            &edit_cells,
        );
    }

    /// The split's third phase for one run, or the one pass's cell changes: slots that change
    /// cell, enter or leave the grid, in shortlist order, with their new cell keys
    /// ([`Self::move_one`]). The cell map's entries a cell change will look up are asked for
    /// `AHEAD` changes before it ([`Self::prefetch_cell_change`]), with its member unless the
    /// change is lazy (a carry leaves it stale); its cell record `2 * AHEAD` before.
    /// `sparse_huge` 50k, whose walkers change cells about 2,800 times an update (counted at stop
    /// 57): see `PERFORMANCE.md`, stops 31, 57 and 85.
    fn change_cells(&mut self, moving: &[CellChange]) {
        for (j, change) in moving.iter().enumerate() {
            if let Some(far) = moving.get(j + 2 * AHEAD) {
                self.grid.prefetch_cell(self.slots[far.slot as usize].cell);
            }
            if let Some(ahead) = moving.get(j + AHEAD) {
                let slot = &self.slots[ahead.slot as usize];
                if !ahead.lazy {
                    self.grid.prefetch_member(slot.cell, slot.member_index);
                }
                self.prefetch_cell_change(ahead.slot, ahead.key);
            }
            self.move_one(change);
        }
    }

    /// Asks for the cell map's entries that moving slot `s` to the cell of `key` will look up
    /// ([`Grid::prefetch_cell_change`](crate::grid::Grid::prefetch_cell_change)), if it is in a
    /// cell and stays in the grid.
    #[inline]
    fn prefetch_cell_change(&self, s: u32, key: CellKey) {
        let slot = &self.slots[s as usize];
        if slot.in_grid() && slot.cell != NO_CELL {
            self.grid.prefetch_cell_change(slot.cell, key);
        }
    }

    /// Moves the changed slot of `change`, which does not stay in its cell, to the cell of its
    /// key, the cell of its position now (carrying its lone cell there,
    /// [`Grid::carry_lone_member`], or out of its cell and into that one), or out of the grid if
    /// it left it. A carried cell's member is left stale if the change is `lazy` and the cell it
    /// left is near the origin too (`index/lazy_members.rs`).
    #[inline(always)]
    fn move_one(&mut self, change: &CellChange) {
        let CellChange { slot: s, key, lazy } = *change;
        let slot = &self.slots[s as usize];
        let (in_grid, cell, idx) = (slot.in_grid(), slot.cell, slot.member_index);
        debug_assert!(
            !stays_in_cell(slot, &self.grid, key),
            "a slot that stays in its cell should have been edited in place"
        );
        if cell != NO_CELL {
            let from = self.grid.cells[cell as usize].key;
            if in_grid && self.grid.carry_lone_member(cell, key) {
                debug_assert_eq!(idx, 0, "a carried cell's member should be its first");
                if lazy && self.grid.near_origin(from) {
                    self.leave_stale(s);
                } else {
                    // Its only member, written without a read of the old one.
                    let member = self.member(s);
                    self.grid.cells[cell as usize].set_only_member(member);
                    self.note_written(s);
                }
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

    /// Writes slot `s`'s grid member whole, at index `idx` of cell `c`, and notes it written.
    #[inline(always)]
    pub(super) fn write_whole_member(&mut self, s: u32, c: u32, idx: u32) {
        let member = self.member(s);
        self.grid.edit_member(c, idx, |m| *m = member);
        self.note_written(s);
    }

    fn unlink(&mut self, s: u32) {
        self.note_written(s);
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
    pub(super) fn prefetch_grid_ahead(
        &self,
        i: usize,
        slot_at: impl Fn(usize) -> Option<u32>,
        wanted: impl Fn(&Slot) -> bool,
    ) {
        self.prefetch_grid_ahead_unless(i, slot_at, wanted, |_| false);
    }

    /// [`Self::prefetch_grid_ahead`], but the member and block of a slot `s` for which
    /// `record_only(s)` holds are not asked for (only its cell record).
    #[inline]
    fn prefetch_grid_ahead_unless(
        &self,
        i: usize,
        slot_at: impl Fn(usize) -> Option<u32>,
        wanted: impl Fn(&Slot) -> bool,
        record_only: impl Fn(u32) -> bool,
    ) {
        let slot = |i: usize| slot_at(i).filter(|&s| wanted(&self.slots[s as usize]));
        if let Some(s) = slot(i + 2 * AHEAD) {
            self.grid.prefetch_cell(self.slots[s as usize].cell);
        }
        if let Some(s) = slot(i + AHEAD).filter(|&s| !record_only(s)) {
            let slot = &self.slots[s as usize];
            self.grid.prefetch_member(slot.cell, slot.member_index);
        }
    }

    /// The grid member of a slot ([`member_of`]).
    #[inline]
    pub(super) fn member(&self, s: u32) -> Member {
        member_of(&self.slots, &self.starts, s)
    }

    /// Keeps the per-instance lists of `Always`-visible slots in step with change `i` of the
    /// shortlist; whether the change is or was `Always` visible.
    #[inline(always)]
    fn update_always(&mut self, i: usize) -> bool {
        let ch = &self.changes[i];
        let slot = &self.slots[ch.slot as usize];
        let old = OldView::at_start(ch.slot, slot, &self.old_views);
        let (was, is) = (always_in(&old.target(ch.old_p)), always_in(&slot.target()));
        let at_an_end = was.is_some() || is.is_some();
        if was == is {
            return at_an_end;
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
        at_an_end
    }

    /// Adds slot `s` to the cell of `key`, its member written whole (its start, if it moved,
    /// lies elsewhere).
    pub(super) fn link(&mut self, s: u32, key: CellKey) {
        let member = self.member(s);
        let (cell, idx) = self.grid.insert(key, member);
        self.note_written(s);
        let slot = &mut self.slots[s as usize];
        slot.cell = cell;
        slot.member_index = idx;
        self.relinks += 1;
    }
}

/// Whether `slot`, whose cell is now that of `key`, stays in its cell: it is in one and stays in
/// the grid, and the cell is `key`'s. Such a move edits the member in place (or leaves it
/// stale); the split's first phase and the one pass ([`AoiIndex::member_move`]) ask the same
/// question, and [`AoiIndex::move_one`] checks that its slots do not stay.
#[inline(always)]
fn stays_in_cell(slot: &Slot, grid: &Grid, key: CellKey) -> bool {
    slot.in_grid() && slot.cell != NO_CELL && grid.cells[slot.cell as usize].key == key
}

/// The grid member of slot `s`, from the index's `slots` and `starts`.
#[inline]
fn member_of(slots: &[Slot], starts: &[[f32; 3]], s: u32) -> Member {
    let slot = &slots[s as usize];
    Member {
        slot: s,
        r2: slot.scan_r2(),
        p: slot.p,
        // Only a changed slot moved this tick.
        start_p: if slot.on_shortlist() {
            starts[s as usize]
        } else {
            slot.p
        },
        stepping: slot.stepping(),
        jumped: slot.jumped(),
        seen_by: scan_layers(&slot.rules),
        sees: slot.rules.sees,
        half: slot.rect.unwrap_or(NO_RECT),
    }
}

/// Sorts change `ch` of the shortlist, whose view was `old` at the start of the tick, whose
/// observer saw `seen` targets and is `slot` now, into a stepping observer, a stepping target or
/// a jumped target ([`Slot::stepping`], [`Slot::jumped`]), its move counted in `counts`; its step
/// if it stepped.
#[inline(always)]
fn classify(
    ch: &Change,
    old: &OldView,
    seen: usize,
    slot: &mut Slot,
    rules: &StepRules,
    counts: &mut StepLimit,
) -> Option<f32> {
    let step = dist2(ch.old_p, slot.p).sqrt();
    let moved = old.in_grid && slot.in_grid() && old.rules == slot.rules;
    // A step of length zero (a standing observer of a busy cell, or a change of radius
    // alone) is not a move for the step limit.
    if moved && step > 0.0 {
        counts.count(step, &rules.limits);
    }
    let steps = moved && step <= rules.limits.in_force();
    slot.set_jumped(!steps);
    // A wide observer steps too (a disc of finite radius: its flip scan has a group of its
    // own), but does not judge the clean observers as a target over its whole window.
    let stepping = steps
        && (!slot.wide() || (slot.rect.is_none() && slot.r2.is_finite()))
        && old.r2 >= 0.0
        && old.r2.to_bits() == slot.r2.to_bits()
        && old.rect == slot.rect
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
