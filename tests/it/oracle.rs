//! Seeded random scenarios checked against brute force after every update.

use bevy_aoi::prelude::*;

use crate::harness::{Checked, Scenario, drift, on_each_index};

/// Drives a seeded scenario (`population` entities, then `ticks` random steps, with random rule
/// changes when `rules` is set) on each index, the harness checking every update against brute
/// force.
fn run(plugin: AoiPlugin, sc: Scenario, ticks: usize, population: usize, rules: bool) {
    for plugin in on_each_index(&plugin) {
        run_on(plugin, sc.clone(), ticks, population, rules);
    }
}

/// [`run`] on the plugin's own index.
fn run_on(plugin: AoiPlugin, mut sc: Scenario, ticks: usize, population: usize, rules: bool) -> Checked {
    let mut app = Checked::new(plugin);
    for _ in 0..population {
        sc.spawn(app.world());
    }
    if rules {
        sc.step_rules(app.world());
    }
    app.update();
    for _ in 0..ticks {
        sc.step(app.world());
        if rules {
            sc.step_rules(app.world());
        }
        app.update();
    }
    assert!(
        app.total_enters > 0 && app.total_leaves > 0,
        "the scenario should exercise both enters and leaves"
    );
    app
}

/// A scenario in the plugin's plane.
fn scenario(plugin: &AoiPlugin, seed: u64, scale: f32, radius: f32, snap: f32) -> Scenario {
    Scenario::new(seed, scale, radius, snap, plugin.plane)
}

#[test]
fn random_scenarios_match_brute_force_with_auto_cells() {
    let plugin = AoiPlugin::default();
    for seed in [1, 2, 3, 4] {
        run(
            plugin.clone(),
            scenario(&plugin, seed, 200.0, 40.0, 40.0),
            150,
            120,
            false,
        );
    }
}

#[test]
fn random_scenarios_match_brute_force_with_small_fixed_cells() {
    // Views span many cells; snapped points land on cell borders.
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(7.0),
        ..Default::default()
    };
    for seed in [11, 12] {
        run(
            plugin.clone(),
            scenario(&plugin, seed, 150.0, 30.0, 7.0),
            120,
            100,
            false,
        );
    }
}

#[test]
fn random_scenarios_match_brute_force_with_huge_cells() {
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(10_000.0),
        ..Default::default()
    };
    run(plugin.clone(), scenario(&plugin, 21, 300.0, 50.0, 0.0), 100, 80, false);
}

#[test]
fn random_scenarios_match_brute_force_in_xz_and_xyz() {
    let plugin = AoiPlugin {
        plane: Plane::XZ,
        ..Default::default()
    };
    run(
        plugin.clone(),
        scenario(&plugin, 31, 200.0, 40.0, 20.0),
        100,
        100,
        false,
    );
    let plugin = AoiPlugin {
        plane: Plane::XYZ,
        ..Default::default()
    };
    run(
        plugin.clone(),
        scenario(&plugin, 32, 120.0, 50.0, 25.0),
        100,
        100,
        false,
    );
}

#[test]
fn random_scenarios_match_brute_force_with_bounds() {
    let plugin = AoiPlugin {
        bounds: Some(AoiBounds::new_2d((-100.0, -100.0), (100.0, 100.0))),
        cell_size: CellSize::Fixed(20.0),
        ..Default::default()
    };
    // Points reach 3x the bounds: some are clamped into border cells, some are bad input.
    run(
        plugin.clone(),
        scenario(&plugin, 41, 300.0, 40.0, 20.0),
        120,
        100,
        false,
    );
}

/// A sparse world of walkers, where many observers have nobody in the cells around theirs and
/// are not scanned while they saw nobody (`pair_engine/groups.rs`): they must still see whoever
/// walks, teleports or spawns near them, and `Always` targets, layers and radius changes must
/// still reach them; with and without bounds (clamped border cells), on both indexes. Each of
/// the rule's five conditions, left out, fails this test.
#[test]
fn random_sparse_scenarios_where_many_observers_are_alone_match_brute_force() {
    // Cells a little larger than most views, so most views reach only the adjacent cells.
    let plain = AoiPlugin {
        cell_size: CellSize::Fixed(50.0),
        ..Default::default()
    };
    let bounded = AoiPlugin {
        bounds: Some(AoiBounds::new_2d((-250.0, -250.0), (250.0, 250.0))),
        ..plain.clone()
    };
    for plugin in [plain, bounded] {
        for plugin in on_each_index(&plugin) {
            for seed in [91, 92, 93] {
                let mut app = Checked::new(plugin.clone());
                let mut sc = scenario(&plugin, seed, 400.0, 30.0, 0.0);
                for _ in 0..60 {
                    sc.spawn(app.world());
                }
                app.update();
                for tick in 0..150 {
                    // Everyone walks a few units a tick, so neighbours come near through the
                    // adjacent cells, besides the scenario's random actions.
                    drift(app.world(), |i| {
                        let a = (i * 13 + tick / 7) as f32 * 0.77;
                        (4.0 * a.cos(), 4.0 * a.sin())
                    });
                    sc.step(app.world());
                    sc.step_rules(app.world());
                    app.update();
                }
                assert!(
                    app.total_enters > 50 && app.total_leaves > 50,
                    "walkers in a sparse world should still meet and part"
                );
            }
        }
    }
}

#[test]
fn random_scenarios_match_brute_force_when_crowded() {
    let plugin = AoiPlugin::default();
    run(plugin.clone(), scenario(&plugin, 51, 30.0, 25.0, 5.0), 80, 150, false);
}

#[test]
fn dense_world_where_everyone_crosses_cells_matches_brute_force() {
    // Dense enough (several entities per cell) and moving enough that the index renumbers its
    // slots in space order, more than once, while every update is checked.
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(8.0),
        ..Default::default()
    };
    for plugin in on_each_index(&plugin) {
        dense_world_on(plugin);
    }
}

/// [`dense_world_where_everyone_crosses_cells_matches_brute_force`] on the plugin's index.
fn dense_world_on(plugin: AoiPlugin) {
    let index = plugin.index;
    let mut app = Checked::new(plugin);
    let mut sc = Scenario::new(61, 20.0, 12.0, 0.0, Plane::XY);
    for _ in 0..300 {
        sc.spawn(app.world());
    }
    app.update();
    for tick in 0..40 {
        sc.step(app.world());
        // Back and forth over half a cell: about every other step crosses a border.
        drift(app.world(), |i| {
            let d = if (i + tick) % 2 == 0 { 4.0 } else { -4.0 };
            (d, -d * 0.5)
        });
        app.update();
    }
    let renumbers = app.world().resource::<AoiStats>().renumbers;
    assert!(
        renumbers >= 2,
        "the {index:?} index should have renumbered its slots (did {renumbers} times)"
    );
}

#[test]
fn random_rule_changes_match_brute_force() {
    // Layers, hidden/always, instances and Watchers change at random while entities move.
    let plugin = AoiPlugin::default();
    for seed in [71, 72, 73] {
        run(
            plugin.clone(),
            scenario(&plugin, seed, 200.0, 40.0, 20.0),
            150,
            120,
            true,
        );
    }
}

#[test]
fn random_rule_changes_match_brute_force_with_small_cells_and_watched() {
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(9.0),
        watched: Some(WatchedRule {
            by_layers: 1,
            linger_ticks: 3,
        }),
        ..Default::default()
    };
    for seed in [81, 82] {
        run(
            plugin.clone(),
            scenario(&plugin, seed, 200.0, 40.0, 20.0),
            150,
            100,
            true,
        );
    }
    let plugin = AoiPlugin {
        watched: Some(WatchedRule {
            by_layers: 2 | 4,
            linger_ticks: 0,
        }),
        ..Default::default()
    };
    run(plugin.clone(), scenario(&plugin, 83, 200.0, 40.0, 20.0), 120, 100, true);
}
