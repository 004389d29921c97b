//! The pair engine: deciding every visibility change of the tick, in parallel where it pays,
//! into a deterministic order.
//!
//! A pair's visibility can only change if one of its ends is on the shortlist. The index sorts
//! the shortlist ([`crate::slot::Slot::stepping`], [`crate::slot::Slot::jumped`]): an entity
//! that moved at most the step limit (an eighth of a cell while nearly all movers move less,
//! [`crate::AoiStats::step_limit`]) and changed nothing else *stepped*; any other change
//! (teleport, radius, rules, arrival, departure) makes a *jumped* target and a *recomputing*
//! observer. Each pair with a changed end is then decided by exactly one scan
//! ([`crate::scan`]):
//!
//! | observer \ target | unchanged or stepped | jumped |
//! |---|---|---|
//! | unchanged | the target's scan (or its flip scan, below) | the target's scan |
//! | stepping (flip scan) | the observer's flip scan | the target's scan |
//! | recomputing | the observer's recompute | the observer's recompute |
//!
//! - **Changed observers**, grouped by cell so the window is looked up once per group: a
//!   *stepping* observer with a long list tests each member of its window where both were at
//!   the start of the tick and where they are now, and edits its list where the answers differ;
//!   the others (stepping observers with short lists included: for them it costs less) recompute
//!   their whole list and diff it against the old one with per-slot marks, except those that
//!   saw nobody and have nobody in the cells their view reaches: they see nobody now either and
//!   are left out of the groups (`groups.rs`, most entities of a sparse world).
//! - **Changed targets** test the observers around their old and new positions (their whole
//!   instance when they are or were `Always` visible) with the target's old and new state; a
//!   jumped target tests the stepping observers too, where they were and where they are. The
//!   few *wide* observers ([`crate::wide`]) are tested from their list instead of the cells, so
//!   the cells searched follow the ordinary radius, not the largest one.
//! - A **stepping observer** that is a disc at least as large as every ordinary radius, in
//!   `Normal` visibility, is also a stepping target whose flip scan can do its target scan's
//!   work: its window holds every cell that scan would search, and for the unchanged observers
//!   there (which did not move) the flip scan's two distances per member are the target scan's
//!   two. So its flip scan also judges them, with their own radii
//!   ([`crate::slot::Slot::flip_scans_as_target`]), and its target scan only tests the wide
//!   observers. Measured (`scenario`, 50k, one thread, three alternating runs): 5% moving
//!   5.9–7.4 → 5.3–5.7 ms an update (phase timers: the target scans 1.13 → 0.03 ms, the flip
//!   scans 2.16 → 2.45 ms), 25% moving 24.4–24.8 → 20.5–21.4 ms.
//! - Where most of a crowd moves, the **standing observers of busy cells** are put on the
//!   shortlist as steps of length zero before all this (`index/busy.rs`): stepping observers like
//!   the others, they decide their own pairs by flip scans, and the movers around them are left
//!   without standing observers to judge. Nothing in the table changes.
//!
//! Only differences touch an `InterestSet` (a merge per changed observer; per edit of an
//! unchanged one, an edit kept in the component, folded into the sorted buffer when seven are
//! kept and another comes, or when the observer changes), so sets stay sorted without being
//! sorted. Tasks take contiguous runs of cell groups (then of changed targets) and their outputs
//! are concatenated in run order, so the result does not depend on the number of threads.

mod clean;
mod counts;
mod groups;
mod pairs;
mod sets;

use bevy_ecs::{entity::Entity, resource::Resource, system::Query};
use bevy_tasks::TaskPool;
use smallvec::SmallVec;

use clean::{SetEdits, edit_unchanged};
use counts::ChangedCounts;
use groups::{Groups, Observers};
pub(crate) use pairs::Pairs;
use sets::SetVisits;

use crate::{
    components::InterestSet,
    index::{AoiIndex, Seer},
    parallel::{join, run_jobs},
    prefetch::prefetch,
    scan::{self, MarksPool, Out, TaskBuffers, View},
    slot::Change,
    watched::WatchTracker,
};

/// Into how many tasks per thread the scans are split (of equal numbers of changed observers,
/// then of changed targets). Tasks are taken by whichever thread is free, so the scans end when
/// the last task does: with four a thread, one thread ran on alone for a median 1.6-2.2 ms of
/// uniform 50k's 20 ms of scans on two threads (a median 0.5-0.7 ms with sixteen; perf timelines
/// of `scenario --pin-threads`, four runs each, stop 76). One thread runs one task.
const SCAN_TASKS_PER_THREAD: usize = 16;

/// Fewer scan tasks than [`SCAN_TASKS_PER_THREAD`] a thread (but one a thread at least) where
/// the shortlist is short: on many threads a few hundred changes would otherwise make tasks of a
/// few observers each, whose waking costs more than their work. (On two threads, 1,000 changes
/// in 32 tasks measured level with 8: uniform 1k, `scenario`, six alternating rounds.)
const MIN_CHANGES_PER_SCAN_TASK: usize = 32;

/// The tick's work buffers and results, reused every tick.
#[derive(Default)]
pub(crate) struct PairEngine {
    scratch: Vec<TaskBuffers>,
    /// The observer scans' per-slot marks, lent to each task for its run.
    marks: MarksPool,
    /// The changed observers by cell.
    groups: Groups,
    /// The `InterestSet`s taken out of the changed observers' components and put back.
    set_visits: SetVisits,
    /// The lists of the changed observers (in `groups.order`), moved out so tasks can own them.
    taken: Vec<Vec<u32>>,
    /// Their `InterestSet` buffers, in the same order.
    taken_sets: Vec<Vec<Entity>>,
    /// Leaves of observers that stopped observing, in shortlist order.
    stopped_leaves: Vec<(u32, u32)>,
    /// How many of `scratch` the last run used (0 when nothing changed).
    in_use: usize,
    /// Observers that stopped observing (their lists were emptied).
    stopped_observers: Vec<u32>,
    /// The edits of the unchanged observers' `InterestSet`s.
    set_edits: SetEdits,
    /// The changed observers' `Watched` counts, from the start of the run to its end.
    changed_counts: ChangedCounts,
}

/// The `InterestSet`s the engine writes (changed observers' and, replaying edits, unchanged
/// ones'), with their entities.
pub(crate) type Sets<'w, 's> = Query<'w, 's, (Entity, &'static mut InterestSet)>;

/// The pair engine as the plugin's resource (its buffers are reused every update).
#[derive(Resource, Default)]
pub(crate) struct AoiPairEngine(pub PairEngine);

/// Looks up `entity`'s `InterestSet` (the lookup's own loads are not waited for: nothing
/// depends on them) and hints the CPU to bring the component into cache.
#[inline(always)]
fn prefetch_set(sets: &Sets, entity: Entity) {
    if let Ok((_, set)) = sets.get(entity) {
        prefetch(core::slice::from_ref(set));
    }
}

/// How the work is split between tasks.
#[derive(Clone, Copy)]
pub(crate) struct Parallelism<'a> {
    pub pool: Option<&'a TaskPool>,
    /// Below this many shortlisted entities, everything runs on the calling thread.
    pub min_parallel: usize,
}

impl PairEngine {
    /// Decides every visibility change of the tick and updates the index's lists; the pairs are
    /// then read with [`Self::enters`] and [`Self::leaves`], in the deterministic order:
    /// observers that stopped observing, changed observers by cell group, then unchanged
    /// observers by changed target: those the targets' flip scans judged (by cell group), then
    /// the target scans' (in shortlist order).
    ///
    /// The `InterestSet` of every changed observer is edited in the same pass, from buffers
    /// moved out of the components and back, so no set is copied; those of the unchanged
    /// observers and of those that stopped observing after the scans (`clean.rs`). Ends the
    /// index's tick ([`AoiIndex::end_tick`]): the shortlist is empty after. `watch` counts for
    /// the `Watched` marker, when the plugin keeps it.
    pub fn run(
        &mut self,
        index: &mut AoiIndex,
        parallelism: Parallelism,
        sets: &mut Sets,
        mut watch: Option<&mut WatchTracker>,
    ) {
        self.forget_pairs();
        if index.changes.is_empty() {
            return;
        }
        let parallel = parallelism
            .pool
            .filter(|p| p.thread_num() > 1 && index.changes.len() >= parallelism.min_parallel);
        let tasks = parallel.map_or(1, |p| {
            let by_size = index.changes.len() / MIN_CHANGES_PER_SCAN_TASK;
            (p.thread_num() * SCAN_TASKS_PER_THREAD)
                .min(by_size)
                .max(p.thread_num())
        });
        if self.scratch.len() < 2 * tasks {
            self.scratch.resize_with(2 * tasks, TaskBuffers::default);
        }
        self.in_use = 2 * tasks;
        if let Some(watch) = watch.as_deref_mut() {
            // Before the changed observers' lists change; their pairs count after the scans.
            self.changed_counts.begin(index, watch);
        }
        self.group_and_take(index, sets);
        self.recompute_observers(index, parallel, tasks);
        let order = &self.groups.order;
        // Those that see nobody are changed observers too, left out of the groups.
        let changed_observers = order.len() + self.groups.alone;
        // No capacity: never taken and still empty, or taken empty and still empty; either way
        // the component already holds this empty set.
        let taken_sets = &mut self.taken_sets;
        let put = (order.iter().zip(0..)).filter(|&(_, at)| taken_sets[at as usize].capacity() > 0);
        (self.set_visits).collect(put.map(|(&o, at)| (index.entities[o as usize], at)));
        // The sets are put back while the lists are put back, the target scans run and the
        // shortlist is cleared: none of those touch the sets. Measured (uniform 50k, two
        // threads, phase timers, two runs): the sets' put and the rest 1.19-1.21 ms one after
        // the other, 0.96-1.04 ms at once (the put alone 0.55 ms: both wait on memory). The
        // lists' put joined that second half at stop 55 (it ran alone before, at the end of the
        // scans; phase timers, `--pin-threads`, six alternating runs, medians: 0.87 → 0.54 ms
        // for the two puts and the rest; one thread level).
        let (visits, observers) = (&mut self.set_visits, index.observers);
        let scratch = &mut self.scratch[..2 * tasks];
        let put_back = |set: &mut InterestSet, buffer: &mut Vec<Entity>| set.put(core::mem::take(buffer));
        let taken = &mut self.taken;
        join(
            parallel,
            || visits.visit(sets, observers, taken_sets, put_back),
            || {
                for (&s, list) in order.iter().zip(taken.iter_mut()) {
                    index.lists[s as usize] = core::mem::take(list);
                }
                scan_targets(scratch, index, changed_observers, parallel);
                index.end_tick();
            },
        );
        self.taken_sets.clear();
        // What the changed observers see now (their lists back in the index) counts.
        if let Some(watch) = watch.as_deref_mut() {
            let changed = &self.scratch[..tasks];
            let (enters, leaves) = (
                enters_of(changed, &index.lists),
                leaves_of(&self.stopped_leaves, changed),
            );
            self.changed_counts.end(index, enters, leaves, watch);
        }
        // The target scans' pairs (after the changed observers' results) edit the unchanged
        // observers, none of which the end of the tick touched.
        let found = &self.scratch[tasks..2 * tasks];
        let (stopped, set_edits) = (&self.stopped_observers, &mut self.set_edits);
        edit_unchanged(found, stopped, index, set_edits, watch, sets, parallel);
    }

    /// Groups the changed observers by cell (and empties the lists of the changed slots that
    /// stopped observing, [`Self::flush_non_observers`]), then takes the observers' lists out of
    /// the index (`taken`) and the `InterestSet` buffers of those that saw something out of
    /// their components (`taken_sets`, none when the plugin keeps no sets), both in
    /// `groups.order`. An observer that saw nothing has an empty set (it mirrors the list): it
    /// is not looked up, and it is only written back if it now sees something, so observers
    /// that see nothing before or after cost no component access (sparse maps are mostly
    /// those). The view layer writes the sets of the observers it owns: the scans leave their
    /// empty buffers alone.
    ///
    /// Not at once on two threads: measured (uniform 50k), the grouping and the take each took
    /// about twice as long beside the other as alone (both wait on memory), so nothing was won;
    /// again on an AMD EPYC (stop 30), the take 1.1 → 1.6 ms beside the grouping.
    fn group_and_take(&mut self, index: &mut AoiIndex, sets: &mut Sets) {
        let observers = Observers {
            slots: &index.slots,
            lists: &index.lists,
            always: &index.always,
            windows_fit: index.grid.windows_fit_near_origin(index.ordinary_reach()),
        };
        self.groups.group(&mut index.grid, &observers, &index.changes);
        self.flush_non_observers(index);
        self.taken.clear();
        for &s in &self.groups.order {
            self.taken.push(core::mem::take(&mut index.lists[s as usize]));
        }
        self.taken_sets.clear();
        self.taken_sets.resize_with(self.taken.len(), Vec::new);
        let (taken, slots, keeps_sets) = (&self.taken, &index.slots, index.keeps_sets);
        let take = (self.groups.order.iter().zip(0..))
            .filter(|&(&o, at)| keeps_sets && !taken[at as usize].is_empty() && !slots[o as usize].owned());
        (self.set_visits).collect(take.map(|(&o, at)| (index.entities[o as usize], at)));
        let visit_set = |set: &mut InterestSet, buffer: &mut Vec<Entity>| *buffer = set.take();
        (self.set_visits).visit(sets, index.observers, &mut self.taken_sets, visit_set);
    }

    /// Drops the pairs of the last [`Self::run`], so an update without changes writes none.
    pub fn forget_pairs(&mut self) {
        self.in_use = 0;
        self.stopped_leaves.clear();
    }

    /// The enters of the last [`Self::run`], as `(observer, target)` slots, in message order;
    /// `lists` are the index's lists, which hold the targets of [`WHOLE_LIST`](scan::WHOLE_LIST)
    /// runs. Slots are valid until the index renumbers them
    /// ([`AoiIndex::renumber_if_scattered`]).
    pub fn enters<'a>(&'a self, lists: &'a [Vec<u32>]) -> Pairs<'a> {
        // Changed observers' results are in `scratch[..tasks]`, targets' in `scratch[tasks..]`.
        enters_of(&self.scratch[..self.in_use], lists)
    }

    /// The enters of the last [`Self::run`] as they are kept, in parts, in message order, unless
    /// some part holds a [`WHOLE_LIST`](scan::WHOLE_LIST) run (then [`Self::enters`] expands them).
    pub fn enter_parts(&self) -> Option<impl Iterator<Item = &[(u32, u32)]>> {
        let results = &self.scratch[..self.in_use];
        (!results.iter().any(|s| s.enters.runs)).then(|| results.iter().map(|s| &s.enters.pairs[..]))
    }

    /// The leaves of the last [`Self::run`], in parts, in message order ([`Self::leaves`]).
    pub fn leave_parts(&self) -> impl Iterator<Item = &[(u32, u32)]> {
        leave_parts_of(&self.stopped_leaves, &self.scratch[..self.in_use])
    }

    /// The seers the last [`Self::run`]'s scans recorded for the view layer ([`Seer`]), in
    /// parts; slots valid as in [`Self::enters`].
    pub fn seers(&self) -> impl Iterator<Item = &[Seer]> + Clone {
        (self.scratch[..self.in_use].iter()).flat_map(|s| [&s.seers[..], &s.band_seers[..]])
    }

    /// The owned observers whose flip scans recorded all the seers their moves could change, in
    /// the last [`Self::run`] (a band pass each; `TaskBuffers::band_scanned`), in parts.
    pub fn band_scanned(&self) -> impl Iterator<Item = &[u32]> {
        self.scratch[..self.in_use].iter().map(|s| &s.band_scanned[..])
    }

    /// The leaves of the last [`Self::run`], like [`Self::enters`]: those of observers that
    /// stopped observing first.
    pub fn leaves(&self) -> Pairs<'_> {
        leaves_of(&self.stopped_leaves, &self.scratch[..self.in_use])
    }

    /// Changed slots that are no longer observers (found by the grouping pass) leave everything
    /// they saw; the view layer sends the leaves of those it owns.
    fn flush_non_observers(&mut self, index: &mut AoiIndex) {
        self.stopped_leaves.clear();
        self.stopped_observers.clear();
        for &s in &self.groups.stopped {
            let list = &mut index.lists[s as usize];
            if index.slots[s as usize].owned() {
                list.clear();
                continue;
            }
            self.stopped_observers.push(s);
            self.stopped_leaves.extend(list.drain(..).map(|t| (s, t)));
        }
    }

    /// Scans the changed observers by cell group ([`scan::observer_group`]) in `tasks` parts of
    /// `groups.order`, on `pool`, editing the taken lists and sets; [`Self::run`] puts the lists
    /// back into the index.
    fn recompute_observers(&mut self, index: &AoiIndex, pool: Option<&TaskPool>, tasks: usize) {
        let view = View::of(index);
        let total = self.groups.order.len();
        let per_task = total.div_ceil(tasks).max(1);
        // Task `k` takes observers `k * per_task..(k + 1) * per_task` of `order`, which may start
        // or end inside a cell group (a crowded cell is shared between tasks; each part looks
        // its window up). Outputs concatenate in task order, i.e. in `order`.
        let groups = &self.groups.cells[..];
        let order = &self.groups.order[..];
        let mut taken = &mut self.taken[..];
        let mut taken_sets = &mut self.taken_sets[..];
        let mut jobs: SmallVec<[_; 16]> = SmallVec::new();
        for (k, scratch) in self.scratch[..tasks].iter_mut().enumerate() {
            let (lo, hi) = ((k * per_task).min(total), ((k + 1) * per_task).min(total));
            let (lists, rest) = core::mem::take(&mut taken).split_at_mut(hi - lo);
            taken = rest;
            let (sets, rest) = core::mem::take(&mut taken_sets).split_at_mut(hi - lo);
            taken_sets = rest;
            // The group holding observer `lo`.
            let first = groups.partition_point(|g| g.1 as usize <= lo).saturating_sub(1);
            jobs.push((lo..hi, first, lists, sets, scratch));
        }
        type Job<'a> = (
            core::ops::Range<usize>,
            usize,
            &'a mut [Vec<u32>],
            &'a mut [Vec<Entity>],
            &'a mut TaskBuffers,
        );
        let marks = &self.marks;
        let run = |(range, mut g, lists, sets, scratch): Job| {
            scratch.clear();
            scratch.marks = marks.lend();
            let mut at = range.start;
            while at < range.end {
                let group_end = groups.get(g + 1).map_or(total, |n| n.1 as usize);
                let end = group_end.min(range.end);
                let (a, b) = (at - range.start, end - range.start);
                let (lists, after) = lists[a..].split_at_mut(b - a);
                let (sets, sets_after) = sets[a..].split_at_mut(b - a);
                let out = Out {
                    lists,
                    sets,
                    next: after.first().zip(sets_after.first()).map(|(l, s)| (&l[..], &s[..])),
                };
                // The window (and so the order of the cells scanned) comes from the whole
                // group, not this task's part of it, so the order never depends on the split.
                let group = &order[groups[g].1 as usize..group_end];
                let reach = group
                    .iter()
                    .map(|&o| view.slots[o as usize].scan_reach(view.starts[o as usize], view.step_reach))
                    .fold(0.0, f32::max);
                scan::observer_group(view, groups[g].0, reach, &order[at..end], out, scratch);
                at = end;
                g += 1;
            }
            marks.give_back(core::mem::take(&mut scratch.marks));
        };
        run_jobs(pool, jobs, &run);
    }
}

/// Changed targets against unchanged observers (`changed_observers` of the observers changed).
/// Results go to the scratch buffers after the observers' (`scratch[tasks..2 * tasks]`), after
/// the pairs the flip scans judged for their observers as targets; [`edit_unchanged`] then
/// applies them to those observers' lists and sets.
fn scan_targets(scratch: &mut [TaskBuffers], index: &AoiIndex, changed_observers: usize, pool: Option<&TaskPool>) {
    let tasks = scratch.len() / 2;
    let (groups, out) = scratch.split_at_mut(tasks);
    out.iter_mut().for_each(TaskBuffers::clear);
    // The pairs flip scans decided for their observers as targets come first, in task order
    // (so in `order`), then the target scans': the same sequence whatever the number of tasks.
    for group in groups.iter() {
        out[0].enters.pairs.extend_from_slice(&group.clean_enters.pairs);
        out[0].enters.count += group.clean_enters.count;
        out[0].leaves.extend_from_slice(&group.clean_leaves);
    }
    let any_clean = index.observers > changed_observers;
    let view = View::of(index);
    // With no clean observer, a target that only stepped has nothing to judge (`scan::target`
    // returns at once for it; the view layer's touches it would add are already there, every
    // observer having changed), and a jumped one only the stepping observers: where everyone
    // moves and nobody jumped, or everything jumped (the first update, a mass teleport), that
    // spares a pass over the shortlist and its slots, and in the second case every jumped
    // target's search of the cells around it (the first update of uniform 50k, `scenario`,
    // three alternating runs: one thread 256-272 -> 245-251 ms, two 194-200 -> 188-192 ms).
    if !any_clean && (index.none_jumped() || index.none_stepped()) {
        return;
    }
    let changes = &index.changes[..];
    let (reach, wide) = (index.ordinary_reach(), &index.wide);
    let per_task = changes.len().div_ceil(tasks).max(1);
    let run = |(part, scratch): (&[Change], &mut TaskBuffers)| {
        for ch in part {
            scan::target(view, wide, ch, reach, any_clean, scratch);
        }
    };
    run_jobs(pool, changes.chunks(per_task).zip(out.iter_mut()), &run);
}

/// The enters of the tasks' `results`, in order, with the targets of their
/// [`WHOLE_LIST`](scan::WHOLE_LIST) runs from `lists`.
fn enters_of<'a>(results: &'a [TaskBuffers], lists: &'a [Vec<u32>]) -> Pairs<'a> {
    let count = results.iter().map(|s| s.enters.count).sum();
    Pairs::new(results.iter().map(|s| &s.enters.pairs[..]), lists, count)
}

/// `first`, then the leaves of the tasks' `results`, in order.
fn leaves_of<'a>(first: &'a [(u32, u32)], results: &'a [TaskBuffers]) -> Pairs<'a> {
    let count = leave_parts_of(first, results).map(<[_]>::len).sum();
    Pairs::new(leave_parts_of(first, results), &[], count)
}

/// [`leaves_of`] as the buffers hold them: `first`, then each task's leaves.
fn leave_parts_of<'a>(first: &'a [(u32, u32)], results: &'a [TaskBuffers]) -> impl Iterator<Item = &'a [(u32, u32)]> {
    core::iter::once(first).chain(results.iter().map(|s| &s.leaves[..]))
}
