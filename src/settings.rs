//! Runtime tunables and diagnostics.

use bevy_ecs::prelude::*;

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

/// Runtime settings of the AOI systems. Added with `init_resource`, so a value inserted before
/// the plugin wins; change it at any time.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.insert_resource(AoiSettings { parallel: false, ..Default::default() })
///     .add_plugins(AoiPlugin::default());
/// assert!(!app.world().resource::<AoiSettings>().parallel, "the user's settings should win");
/// ```
#[derive(Resource, Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, Default, PartialEq)
)]
pub struct AoiSettings {
    /// Spread the grid index's classification and moves of the changed entities (where cells
    /// are crowded), the recomputation and the view layer's pass over the observers with
    /// view-model components over Bevy's `ComputeTaskPool` (with the `multi_threaded` feature,
    /// and when the pool has more than one thread), and write enters and leaves at once when both
    /// are many. The output is identical either way. `TaskPoolPlugin`'s defaults give a 2-CPU
    /// machine a compute pool of one thread: the crate guide's "Threads" shows how to ask for two.
    ///
    /// Where the process was idle before the update (a server between ticks), the operating
    /// system may wake the pool's second thread on the CPU where the first is busy and leave the
    /// two sharing it for several milliseconds: on a 2-vCPU VM, 50k entities, a 30 ms sleep
    /// before each update, two threads ran 5% moving in 3.5-4.6 ms against 3.6-4.8 ms on one,
    /// and 2.5-3.5 ms with each pool thread pinned to a CPU of its own; 25% moving 16.0-16.9
    /// against 16.6-18.5, pinned 11.5-14.4 ms. Pinning is the app's choice, made where the pool
    /// starts: `TaskPoolPlugin`'s `task_pool_options.compute.on_thread_spawn`, or
    /// `TaskPoolBuilder::on_thread_spawn` (`cargo bench --bench report -- --pin-threads`,
    /// `PERFORMANCE.md`, stop 53).
    pub parallel: bool,
    /// Updates with fewer changed entities than this run on one thread (and the view layer with
    /// fewer observers with view-model components): below a few hundred,
    /// waking tasks costs more than it saves.
    pub min_parallel_changes: usize,
    /// An observer that only *stepped* this update (moved at most the step limit,
    /// [`AoiStats::step_limit`], and changed nothing else) and saw at least this many targets
    /// before is updated by a flip scan: each neighbour is tested where both were at the start
    /// of the update and where they are now, and only the differences touch its `InterestSet`.
    /// Observers that see fewer recompute their whole set (or, having seen nobody and seeing no
    /// layer or nobody in the cells around them, are not scanned at all). The default, 1, sends
    /// every stepping observer that saw anyone through the flip scan, whose batched tests cost
    /// less than a recompute even for a few targets. Measured on the realistic mix of layers
    /// (monsters that see only players, about 8 targets each), uniform 10k, one thread:
    /// `scenario --rules` 4.9-5.1 ms an update with the earlier default of 32, 2.9 with 1;
    /// `cargo bench --bench report -- rules`, with the observers that see no layer also left
    /// unscanned, 0.99-1.02 times the world without rules before, 0.49-0.52 now (three
    /// alternating runs). The standard workloads, whose observers see none or dozens, are
    /// unchanged (callgrind, `sparse_huge` and 5% moving 50k, the same instructions). `0` sends
    /// every stepping observer through the flip scan, even those that saw nobody, whose window
    /// must also reach as far as anything stepped: in a sparse world that is most of the work
    /// (`sparse_huge` 50k about twice as slow). `usize::MAX` sends none. The messages and sets
    /// are the same either way; only the speed differs.
    pub flip_scan_min_seen: usize,
    /// A cell where, counting the cells around it, at least this share of the entities changed
    /// this update is *busy*: its observers that did not change (and saw at least
    /// [`flip_scan_min_seen`](Self::flip_scan_min_seen) targets) take the flip scan too, as if
    /// they had stepped by zero, instead of having their pairs with the movers judged by each
    /// mover and edited into their sets one by one. Where most of a crowd moves that costs less;
    /// where few move, more. Measured (`cargo bench --bench report -- busy`, uniform 50k, one
    /// thread, three runs, medians against this off): 25% moving 1.00, 50% 0.82, 75% 0.71, 95%
    /// 0.74; `scenario` alone (stop 40), 75% moving 50-53 → 41-43 ms an update. The default,
    /// 0.4, is where scanning them began to pay in a sweep of shares and crowds. The messages and
    /// sets are the same either way; only the speed differs. `0.0` scans the standing observers of
    /// every cell where anything changed; above `1.0` (or not a number) none, and nothing is
    /// counted. [`AoiStats::busy_standing`] counts them. With
    /// [`IndexKind::SortedAxes`](crate::IndexKind::SortedAxes) no cell is busy: that index scans
    /// one observer at a time, and adding the standing ones measured slower there.
    pub busy_cell_share: f32,
    /// Self-check mode: every this many AOI updates (0: never, the default), recompute every
    /// observer's `InterestSet` (without sets,
    /// [`AoiPlugin::interest_sets`](crate::AoiPlugin::interest_sets), what the messages said it
    /// sees) by brute force after the update and compare. The first divergence of a checked update
    /// is logged as an error with the pair, both positions, the radius and the rules, and counted
    /// in [`AoiStats::self_check_divergences`]. A checked update costs `O(n²)` rule tests for `n`
    /// tracked entities (10^8 at 10k: a fraction of a second on one core): meant for tests, staging
    /// servers and bug hunts, with a large interval in production. Observers with view-model
    /// components ([`ViewHysteresis`](crate::ViewHysteresis), [`EnterBudget`](crate::EnterBudget),
    /// [`ViewTiers`](crate::ViewTiers)) are not checked: their sets depend on the past.
    pub self_check_every: u32,
}

impl Default for AoiSettings {
    fn default() -> Self {
        Self {
            parallel: true,
            min_parallel_changes: 256,
            flip_scan_min_seen: 1,
            busy_cell_share: 0.4,
            self_check_every: 0,
        }
    }
}

/// What the last AOI update did, for diagnostics and tuning. Read-only; refreshed by every AOI
/// update (the index counters only by those that had changes, since they cannot change
/// otherwise).
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0)));
/// let target = app.world_mut().spawn(Position::new(1.0, 0.0)).id();
/// app.update();
/// app.world_mut().get_mut::<Position>(target).unwrap().x = 50.0;
/// app.update();
/// let stats = app.world().resource::<AoiStats>();
/// assert_eq!((stats.entities, stats.observers, stats.changed), (2, 1, 1));
/// assert_eq!((stats.enters, stats.leaves), (0, 1), "the target walked out of view");
/// ```
#[derive(Resource, Clone, Debug, Default, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, Default, PartialEq)
)]
pub struct AoiStats {
    /// Entities with a `Position` the index tracks (including those kept out as bad input).
    pub entities: usize,
    /// Indexed observers.
    pub observers: usize,
    /// Occupied grid cells (with [`IndexKind::SortedAxes`](crate::IndexKind::SortedAxes): the
    /// sorted lists, one per instance that has entities).
    pub cells: usize,
    /// Current cell side, in world units (with
    /// [`IndexKind::SortedAxes`](crate::IndexKind::SortedAxes): only the base of the step limit).
    pub cell_side: f32,
    /// The step limit the next update applies, in world units: an entity that moves farther in
    /// one update (or changes anything but its position) takes a full recompute rather than
    /// [`stepped`](Self::stepped)'s flip scan. An eighth of the cell side while all but one in
    /// 256 of the last update's moves were that short, else a quarter or half of it (the
    /// smallest that all but one in 256 stayed within): a jump costs several times a step, so
    /// a world with more than a few fast movers steps too, with wider scan windows.
    pub step_limit: f32,
    /// Observers whose radius stands out from the others (each with a radius over twice that
    /// of the (k+1)-th largest observer when the threshold was last derived, k one observer in
    /// eight within 64 and 256): moving targets test them directly (a target that only stepped,
    /// four at a time) instead of searching the grid that far, and the automatic cell side
    /// ignores them.
    pub wide_observers: usize,
    /// Entities that changed in the last update (moved, re-ranged, added or removed): its
    /// shortlist, less the standing observers of busy cells
    /// ([`busy_standing`](Self::busy_standing)).
    pub changed: usize,
    /// Of those, the entities that only *stepped*: moved at most the step limit
    /// ([`step_limit`](Self::step_limit)) and changed nothing else. Their pairs are decided by
    /// testing each neighbour where both were at the start of the update and where they are now,
    /// without recomputing whole lists; the others (teleports, radius or rule changes, arrivals
    /// and departures) take a full recompute.
    pub stepped: usize,
    /// Observers that did not change but took the flip scan in the last update, their cell being
    /// busy ([`AoiSettings::busy_cell_share`]; 0 after an update without changes); not counted
    /// in [`changed`](Self::changed) or [`stepped`](Self::stepped).
    pub busy_standing: usize,
    /// `EnterView` messages of the last update.
    pub enters: usize,
    /// `LeaveView` messages of the last update.
    pub leaves: usize,
    /// Targets shown only thanks to [`ViewHysteresis`](crate::ViewHysteresis) after the last
    /// update: beyond their observer's view, within its margin or lingering.
    pub held: usize,
    /// Of the targets held at the start of the last update, those back within the view: each
    /// avoided a `LeaveView` and an `EnterView`.
    pub returned: usize,
    /// Targets that qualify to enter but wait for their observer's
    /// [`EnterBudget`](crate::EnterBudget), summed over observers.
    pub waiting: usize,
    /// [`TierChanged`](crate::TierChanged) messages of the last update.
    pub tier_changes: usize,
    /// Updates the self-check mode has checked since the plugin was added (a running total).
    pub self_checks: u64,
    /// Checked updates that found a set differing from brute force (a running total; 0 unless
    /// something is wrong).
    pub self_check_divergences: u64,
    /// Entities whose record in the grid the index left as an earlier update wrote it, after the
    /// last update: walkers alone in their cell with no entity in the cells around, whose
    /// records nobody else's scan reads there. Each is written when that may change (an entity
    /// comes near, a scan reaches farther). A diagnostic: most walkers of a sparse world, none
    /// in a crowd or with [`IndexKind::SortedAxes`](crate::IndexKind::SortedAxes).
    pub deferred_grid_writes: usize,
    /// How many times the index renumbered its slots in space order since the plugin was added
    /// (a running total, unlike the other fields; a locality optimisation that runs after
    /// entities have changed cell about once each, on dense maps).
    pub renumbers: usize,
}
