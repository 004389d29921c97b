//! Everyone steps a little every tick (the common case of a live game), mixed with the random
//! actions of the oracle scenarios: teleports, radius and rule changes, spawns and despawns.
//! Stepping entities take the flip-test path, everything else the full recompute; every update
//! is checked against brute force.

use bevy_aoi::prelude::*;
use bevy_ecs::entity::Entity;

use crate::harness::{Checked, Scenario, drift, on_each_index};

/// Runs 120 ticks of 220 walkers whose step lengths cycle through `steps`; stepping observers
/// that saw at least `flip_scan_min_seen` targets take the flip scan.
fn run(plugin: AoiPlugin, seed: u64, rules: bool, steps: &'static [f32], flip_scan_min_seen: usize) -> Checked {
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen,
        ..Default::default()
    });
    let mut sc = Scenario::new(seed, 120.0, 30.0, 10.0, Plane::XY);
    for _ in 0..220 {
        sc.spawn(app.world());
    }
    app.update();
    let mut stepped = 0;
    for tick in 0..120 {
        // Headings turn with the tick and differ per entity; some stand still.
        drift(app.world(), |i| {
            let len = steps[(i + tick) % steps.len()];
            let a = (i * 7 + tick / 5) as f32 * 0.61;
            (len * a.cos(), len * a.sin())
        });
        sc.step(app.world());
        if rules {
            sc.step_rules(app.world());
        }
        app.update();
        stepped += app.world().resource::<AoiStats>().stepped;
    }
    assert!(
        stepped > 100 * 120,
        "most walkers should have taken the stepping path (stepped {stepped} times)"
    );
    assert!(
        app.total_enters > 1000 && app.total_leaves > 1000,
        "walkers should enter and leave views many times"
    );
    app
}

#[test]
fn walkers_that_step_every_tick_match_brute_force() {
    for (seed, flip_scan_min_seen) in [(101, 0), (102, 0), (103, 8)] {
        for plugin in on_each_index(&AoiPlugin::default()) {
            run(plugin, seed, false, &[0.0, 1.5, 3.0, 4.0], flip_scan_min_seen);
        }
    }
}

#[test]
fn walkers_faster_than_an_eighth_of_a_cell_step_too_and_match_brute_force() {
    // Steps of a fifth to two fifths of the automatic cell side (about 29 here) for three in
    // four walkers: most moves are longer than an eighth of it, so the step limit rises and they
    // step (`run` asserts that most walkers did), with windows that reach farther.
    for (seed, flip_scan_min_seen) in [(104, 0), (105, 8)] {
        for plugin in on_each_index(&AoiPlugin::default()) {
            let mut app = run(plugin, seed, false, &[6.0, 9.0, 12.0, 0.0], flip_scan_min_seen);
            let stats = app.world().resource::<AoiStats>();
            assert!(
                stats.step_limit >= stats.cell_side * 0.25,
                "the step limit ({}) should be at least a quarter of the cell side ({}) when most moves \
                 are longer than an eighth of it",
                stats.step_limit,
                stats.cell_side
            );
        }
    }
}

#[test]
fn a_few_fast_walkers_raise_the_step_limit_and_match_brute_force() {
    // One walker in ten steps 12 (over an eighth and a quarter of the cell side of about 29, under
    // half of it), the others at most 3: more than one move in 256 would jump, so the limit
    // should rise to half the side and the fast walkers step too.
    let steps = &[1.0, 2.0, 3.0, 1.5, 2.5, 0.5, 1.0, 2.0, 3.0, 12.0];
    for plugin in on_each_index(&AoiPlugin::default()) {
        let mut app = run(plugin, 106, false, steps, 0);
        let stats = app.world().resource::<AoiStats>();
        assert_eq!(
            stats.step_limit,
            stats.cell_side * 0.5,
            "the step limit should be half the cell side ({}) when one move in ten is longer than a quarter \
             of it",
            stats.cell_side
        );
    }
}

#[test]
fn stepping_walkers_with_rule_changes_and_small_cells_match_brute_force() {
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(11.0),
        ..Default::default()
    };
    for seed in [111, 112] {
        for plugin in on_each_index(&plugin) {
            run(plugin, seed, true, &[0.5, 1.0, 1.3, 40.0], 0);
        }
    }
}

/// Walkers of radius 30 stepping among as many that stand still (every other one in query
/// order); one in ten of all sees a 20 × 12 rectangle (which the disc of radius 23.3 around it
/// holds), `big` of those standing see a radius of 45 (larger than the walkers' but not wide),
/// and, `layered`, one in ten grades its view in tiers (the view layer owns it and must look at
/// every target it sees that moves, flip or not: its tier may change); 60 ticks, every update
/// checked against brute force. The standing observers of busy cells take the flip scan
/// themselves where at least `busy_cell_share` of a cell moved.
fn walkers_among_standing_observers(plugin: AoiPlugin, big: usize, layered: bool, busy_cell_share: f32) -> Checked {
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        busy_cell_share,
        ..Default::default()
    });
    for i in 0..300u32 {
        let (x, y) = ((i * 37 % 300) as f32 * 0.4, (i * 91 % 300) as f32 * 0.4);
        let p = Position::new(x, y);
        let entity = if (i as usize) < big {
            app.world().spawn((p, ViewRange::new(45.0))).id()
        } else if i % 10 == 3 {
            app.world().spawn((p, ViewRect::new(20.0, 12.0))).id()
        } else {
            app.world().spawn((p, ViewRange::new(30.0))).id()
        };
        if layered && i % 10 == 7 {
            app.world().entity_mut(entity).insert(ViewTiers::new([10.0, 20.0]));
        }
    }
    app.update();
    for tick in 0..60 {
        drift(app.world(), |i| {
            if i < big || i % 2 == 1 {
                return (0.0, 0.0);
            }
            let a = (i * 7 + tick / 6) as f32 * 0.61;
            (2.5 * a.cos(), 2.5 * a.sin())
        });
        app.update();
    }
    assert!(
        app.total_enters > 1000 && app.total_leaves > 1000,
        "walkers should enter and leave the standing observers' views many times"
    );
    app
}

#[test]
fn walkers_stepping_past_standing_observers_match_brute_force() {
    // One radius: each walker's flip scan also finds the standing observers that see it
    // (`Slot::flip_scans_as_target`), rectangles and, with the view layer, every observer whose
    // disc holds it included. Larger standing observers: a walker's window is too small for
    // them, so its target scan searches the cells as before. With no busy cells (the standing
    // observers judged by the walkers), and with every cell where someone walked busy (the
    // standing observers there scanning for themselves).
    for (big, layered) in [(0, false), (0, true), (10, false)] {
        for plugin in on_each_index(&AoiPlugin::default()) {
            for busy_cell_share in [f32::INFINITY, 0.0] {
                walkers_among_standing_observers(plugin.clone(), big, layered, busy_cell_share);
            }
        }
    }
}

#[test]
fn a_target_jumping_away_from_an_observer_stepping_out_of_its_region_leaves() {
    // Cells of side 10: the observer at 10.5 sees the target at 20.5 (the boundary), then
    // steps back into cell 0 while the target teleports away. The pair is decided by the
    // target's scan, whose cells must reach the observer's new cell, one step past the
    // target's old view window.
    let mut app = Checked::new(AoiPlugin {
        cell_size: CellSize::Fixed(10.0),
        ..Default::default()
    });
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    let observer = app.world().spawn((Position::new(10.5, 0.0), ViewRange::new(10.0))).id();
    let target = app.world().spawn(Position::new(20.5, 0.0)).id();
    app.update();
    assert_eq!(
        app.total_enters, 1,
        "the observer should first see the target on its boundary"
    );
    app.world().get_mut::<Position>(observer).unwrap().x = 9.5;
    app.world().get_mut::<Position>(target).unwrap().x = 1000.0;
    app.update();
    let stats = app.world().resource::<AoiStats>().clone();
    assert_eq!(
        stats.stepped, 1,
        "the observer should have stepped and the target jumped"
    );
    assert_eq!(app.total_leaves, 1, "the target should have left the observer's view");
}

/// A stepping observer that saw nobody and has nobody in the cells around it still takes its
/// flip scan, which also decides, as a target, the views of the unchanged observers that saw it
/// (its target scan leaves them to it): here one two cells away, which stops seeing it. Other
/// changed observers that see nobody around them are not scanned at all (`pair_engine/groups.rs`).
#[test]
fn a_lonely_stepping_observer_still_ends_the_views_of_those_that_saw_it() {
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(100.0),
        ..Default::default()
    };
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    // It sees only layer 2, so nobody; the other (the largest radius is its, so its flip scan
    // judges the other's view of it) sees it from cell 2 while it is in cell 1.
    let lonely = (Position::new(111.0, 50.0), ViewRange::new(99.0), AoiLayers::new(1, 2));
    let lonely = app.world().spawn(lonely).id();
    let far = (Position::new(200.0, 50.0), ViewRange::new(90.0), AoiLayers::new(1, 1));
    let far = app.world().spawn(far).id();
    app.update();
    let sees = |app: &mut Checked| app.world().get::<InterestSet>(far).is_some_and(|s| s.contains(lonely));
    assert!(sees(&mut app), "the far observer should see it 89 away");
    // A step of 12 (under an eighth of a cell) into cell 0, 101 away from the far observer.
    app.world()
        .get_mut::<Position>(lonely)
        .expect("the lonely observer should have a Position")
        .x = 99.0;
    app.update();
    assert_eq!(app.world().resource::<AoiStats>().stepped, 1, "it should have stepped");
    assert!(!sees(&mut app), "the far observer should no longer see it");
    assert_eq!(app.total_leaves, 1, "the far observer's view of it should have ended");
}

/// A target that jumped one update and stands still the next, when that next update rebuilds the
/// grid (the automatic cell side follows the radii of 70 observers far away, which grew past
/// twice the side; so many that none is wide): its rebuilt grid member must no longer say it
/// jumped, or a stepping observer's flip scan would pass over it and miss it entering.
#[test]
fn a_target_that_jumped_is_found_by_a_flip_scan_after_a_rebuild() {
    for plugin in on_each_index(&AoiPlugin::default()) {
        let mut app = Checked::new(plugin);
        app.world().insert_resource(AoiSettings {
            flip_scan_min_seen: 0,
            ..Default::default()
        });
        let walker = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
        let target = app.world().spawn(Position::new(60.0, 0.0)).id();
        let growers: Vec<Entity> = (0..70)
            .map(|i| {
                let far = Position::new(500.0 + 3.0 * i as f32, 500.0);
                app.world().spawn((far, ViewRange::new(10.0))).id()
            })
            .collect();
        app.update();
        // The target jumps to just outside the walker's view.
        app.world().get_mut::<Position>(target).unwrap().x = 10.5;
        app.update();
        let side = app.world().resource::<AoiStats>().cell_side;
        // The walker steps into range of the still target while the far observers' radii grow
        // (the grid is rebuilt with a larger side in the same update).
        app.world().get_mut::<Position>(walker).unwrap().x = 1.0;
        for &grower in &growers {
            app.world().get_mut::<ViewRange>(grower).unwrap().radius = 30.0;
        }
        app.update();
        let stats = app.world().resource::<AoiStats>();
        assert!(
            stats.cell_side > 2.0 * side,
            "the grid should have been rebuilt with a larger side ({side} -> {})",
            stats.cell_side
        );
        assert!(
            app.world().get::<InterestSet>(walker).unwrap().contains(target),
            "the walker should see the target it stepped up to"
        );
    }
}
