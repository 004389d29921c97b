//! The message sequence does not depend on threads (view-model features included).

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};

use crate::harness::{Checked, INDEXES, Pairs, Scenario, SetsInOrder, drift};

/// The default plugin on `index`.
fn plugin(index: IndexKind) -> AoiPlugin {
    AoiPlugin {
        index,
        ..Default::default()
    }
}

/// A checked app of `plugin`, parallel (four threads, every update split) or not.
fn app_of(plugin: AoiPlugin, parallel: bool, flip_scan_min_seen: usize) -> Checked {
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(4).build());
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        parallel,
        min_parallel_changes: 0,
        flip_scan_min_seen,
        ..Default::default()
    });
    app
}

/// [`app_of`] the default plugin on `index`.
fn app(index: IndexKind, parallel: bool, flip_scan_min_seen: usize) -> Checked {
    app_of(plugin(index), parallel, flip_scan_min_seen)
}

/// The messages and the sets' iteration order of every update (`flip_scan_min_seen` 0: every
/// stepping observer takes the flip scan).
fn record(index: IndexKind, parallel: bool, flip_scan_min_seen: usize) -> (Vec<(Pairs, Pairs)>, Vec<SetsInOrder>) {
    record_of(plugin(index), parallel, flip_scan_min_seen, Features::Random)
}

/// Which observers have view-model features in [`record_of`].
#[derive(Clone, Copy)]
enum Features {
    /// None.
    Off,
    /// A few, added and removed at random every update.
    Random,
    /// Every observer spawned at the start, a third each with a hysteresis, a budget or tiers.
    Everyone,
    /// As `Everyone`, and only every seventh entity drifts: most observers stand still, and the
    /// view layer edits their sets by their messages (from the tasks' messages when parallel).
    EveryoneFewDrift,
}

/// [`record`] for `plugin`, with view-model `features`.
fn record_of(
    plugin: AoiPlugin,
    parallel: bool,
    flip_scan_min_seen: usize,
    features: Features,
) -> (Vec<(Pairs, Pairs)>, Vec<SetsInOrder>) {
    let mut app = app_of(plugin, parallel, flip_scan_min_seen);
    let mut sc = Scenario::new(77, 400.0, 60.0, 0.0, Plane::XY);
    for _ in 0..600 {
        sc.spawn(app.world());
    }
    if let Features::Everyone | Features::EveryoneFewDrift = features {
        let mut q = app
            .world()
            .query_filtered::<Entity, Or<(With<ViewRange>, With<ViewRect>)>>();
        let observers: Vec<Entity> = q.iter(app.world()).collect();
        for (i, observer) in observers.into_iter().enumerate() {
            let mut observer = app.world().entity_mut(observer);
            match i % 3 {
                0 => observer.insert(ViewHysteresis {
                    margin: 6.0,
                    linger_ticks: 2,
                }),
                1 => observer.insert(EnterBudget(3)),
                _ => observer.insert(ViewTiers::new([20.0, 40.0])),
            };
        }
    }
    app.update();
    for _ in 0..40 {
        sc.step(app.world());
        // Layers, visibility modes and instances change too (the `Always` lists, kept apart when
        // the index's moves are split over the threads).
        sc.step_rules(app.world());
        // Observers with view-model features are decided by the view layer, in order too.
        if let Features::Random = features {
            sc.step_view_model(app.world());
        }
        // Everyone drifts, so most of the work is parallel.
        let few = matches!(features, Features::EveryoneFewDrift);
        drift(app.world(), |i| match (few && i % 7 != 0, i % 2) {
            (true, _) => (0.0, 0.0),
            (false, 0) => (3.0, 0.0),
            (false, _) => (-2.0, 0.0),
        });
        app.update();
    }
    // Renumbering rewrites every list, split over the threads when there are some.
    let renumbers = app.world().resource::<AoiStats>().renumbers;
    assert!(
        renumbers > 0,
        "the drift should make the index renumber its slots (did {renumbers} times)"
    );
    (app.log, app.sets_log)
}

#[test]
fn message_order_is_identical_with_and_without_threads() {
    for index in INDEXES {
        for flip_scan_min_seen in [0, usize::MAX] {
            message_order_is_identical_with(index, flip_scan_min_seen);
        }
    }
}

fn message_order_is_identical_with(index: IndexKind, flip_scan_min_seen: usize) {
    let single = record(index, false, flip_scan_min_seen);
    let multi = record(index, true, flip_scan_min_seen);
    assert!(
        single.0.iter().map(|(e, l)| e.len() + l.len()).sum::<usize>() > 1000,
        "the run should produce many messages"
    );
    assert_eq!(
        single, multi,
        "parallel and single-threaded runs should write the same messages in the same order"
    );
    assert_eq!(
        record(index, true, flip_scan_min_seen),
        multi,
        "two parallel runs should write the same sequence"
    );
}

#[test]
fn messages_only_writes_the_sequence_of_the_sets_on_any_thread_count() {
    for index in INDEXES {
        let keeping = |interest_sets| AoiPlugin {
            interest_sets,
            ..plugin(index)
        };
        let with_sets = record_of(keeping(true), false, 0, Features::Off).0;
        let single = record_of(keeping(false), false, 0, Features::Off).0;
        let multi = record_of(keeping(false), true, 0, Features::Off).0;
        assert!(
            single.iter().map(|(e, l)| e.len() + l.len()).sum::<usize>() > 1000,
            "the run should produce many messages"
        );
        assert_eq!(
            single, multi,
            "without sets, parallel and single-threaded runs should write the same messages in the same order"
        );
        assert_eq!(
            single, with_sets,
            "keeping no sets should not change the messages or their order"
        );
    }
}

/// The messages of walkers of one radius, a third of them standing still and a few jumping: the
/// pairs of the stepping walkers with the standing observers are decided by the walkers' flip
/// scans (`Slot::flip_scans_as_target`), in every task, and must join the jumping ones' target
/// scans' pairs in the same order whatever the number of tasks; or, where at least
/// `busy_cell_share` of a cell moved, by the standing observers' own flip scans.
fn record_walkers(index: IndexKind, parallel: bool, busy_cell_share: f32) -> Vec<(Pairs, Pairs)> {
    let mut app = app(index, parallel, 0);
    app.world().resource_mut::<AoiSettings>().busy_cell_share = busy_cell_share;
    for i in 0..600u32 {
        let (x, y) = ((i * 37 % 600) as f32 * 0.6, (i * 91 % 600) as f32 * 0.6);
        app.world().spawn((Position::new(x, y), ViewRange::new(40.0)));
    }
    app.update();
    for tick in 0..30 {
        drift(app.world(), |i| {
            if i % 3 == 2 {
                return (0.0, 0.0);
            }
            if (i + tick) % 40 == 0 {
                // A jump: its target scan decides its pairs with the standing observers.
                return (90.0, 0.0);
            }
            let a = (i * 7 + tick / 5) as f32 * 0.61;
            (3.0 * a.cos(), 3.0 * a.sin())
        });
        app.update();
    }
    app.log
}

#[test]
fn walkers_among_standing_observers_write_the_same_order_with_and_without_threads() {
    for index in INDEXES {
        for busy_cell_share in [f32::INFINITY, 0.0] {
            let single = record_walkers(index, false, busy_cell_share);
            assert!(
                single.iter().map(|(e, l)| e.len() + l.len()).sum::<usize>() > 1000,
                "the walkers should enter and leave views many times"
            );
            assert_eq!(
                single,
                record_walkers(index, true, busy_cell_share),
                "{index:?}, busy share {busy_cell_share}: parallel and single-threaded runs should write the same \
                 messages in the same order"
            );
        }
    }
}

/// With a view-model feature on every observer, the view layer decides them in tasks and writes
/// (or, for those standing still, edits) their sets in one pass over the components on the pool:
/// every update is held to the model (the checked app), and the messages and the sets' order
/// match one thread's.
#[test]
fn a_feature_on_every_observer_gives_the_same_messages_and_sets_on_any_thread_count() {
    for features in [Features::Everyone, Features::EveryoneFewDrift] {
        let record = |parallel| record_of(plugin(IndexKind::Grid), parallel, 32, features);
        let single = record(false);
        assert!(
            single.0.iter().map(|(e, l)| e.len() + l.len()).sum::<usize>() > 1000,
            "the run should produce many messages"
        );
        assert_eq!(
            single,
            record(true),
            "with every observer featured, parallel and single-threaded runs should write the \
             same messages and sets"
        );
    }
}
