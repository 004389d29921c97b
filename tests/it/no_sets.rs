//! `AoiPlugin::interest_sets` `false`: the messages stay exactly the brute-force diff while every
//! `InterestSet` stays empty (the harness checks both after every update); view-model
//! components are then bad input; `explain_view` follows what the messages said (the
//! self-check's case is in `self_check.rs`).

use bevy_aoi::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Scenario, on_each_index};

fn no_sets() -> AoiPlugin {
    AoiPlugin {
        interest_sets: false,
        ..AoiPlugin::default()
    }
}

/// Seeded scenarios with moves, teleports, spawns, despawns, radius changes, bad input, rule
/// changes and view-model components coming and going, on each index, every stepping observer
/// taking the flip scan (`flip_scan_min_seen` 0) or none; returns how many updates had
/// view-model components on some observer.
fn run(seed: u64, ticks: usize, population: usize) -> usize {
    let mut modelled = 0;
    for (plugin, flip_scan_min_seen) in on_each_index(&no_sets()).flat_map(|p| [(p.clone(), 0), (p, usize::MAX)]) {
        let mut sc = Scenario::new(seed, 150.0, 40.0, 20.0, plugin.plane);
        let mut app = Checked::new(plugin);
        app.world().insert_resource(AoiSettings {
            flip_scan_min_seen,
            ..Default::default()
        });
        for _ in 0..population {
            sc.spawn(app.world());
        }
        app.update();
        for _ in 0..ticks {
            sc.step(app.world());
            sc.step_rules(app.world());
            sc.step_view_model(app.world());
            app.update();
            let world = app.world();
            let mut q = world.query_filtered::<(), Or<(With<ViewHysteresis>, With<EnterBudget>, With<ViewTiers>)>>();
            modelled += usize::from(q.iter(world).next().is_some());
        }
        assert!(
            app.total_enters > 0 && app.total_leaves > 0,
            "the scenario should exercise both enters and leaves"
        );
    }
    modelled
}

#[test]
fn without_sets_the_messages_match_brute_force_and_every_set_stays_empty() {
    let mut modelled = 0;
    for seed in [301, 302, 303] {
        modelled += run(seed, 120, 120);
    }
    assert!(modelled > 0, "some updates should have had view-model components");
}

/// The pending `EnterView`s as (observer, target), sorted; none are left.
fn drain_enters(app: &mut App) -> Vec<(Entity, Entity)> {
    let mut enters: Vec<(Entity, Entity)> = app
        .world_mut()
        .resource_mut::<Messages<EnterView>>()
        .drain()
        .map(|m| (m.observer, m.target))
        .collect();
    enters.sort();
    enters
}

#[test]
fn without_sets_an_observer_with_a_view_model_component_is_kept_out() {
    let mut app = App::new();
    app.add_plugins(no_sets());
    let watcher = app
        .world_mut()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), EnterBudget(4)))
        .id();
    let plain = app
        .world_mut()
        .spawn((Position::new(3.0, 0.0), ViewRange::new(10.0)))
        .id();
    app.update();
    let enters = drain_enters(&mut app);
    assert!(
        enters.is_empty(),
        "{watcher} has an EnterBudget without sets, so it should be out of the index and no pair \
         with it should enter (got {enters:?})"
    );
    // Without the component it is an ordinary observer again.
    app.world_mut().entity_mut(watcher).remove::<EnterBudget>();
    app.update();
    let enters = drain_enters(&mut app);
    let mut want = vec![(watcher, plain), (plain, watcher)];
    want.sort();
    assert_eq!(
        enters, want,
        "both should enter each other's view once the budget is gone"
    );
}

#[test]
fn without_sets_explanations_agree_with_the_messages() {
    let mut app = Checked::new(no_sets());
    let mut sc = Scenario::new(153, 120.0, 30.0, 10.0, Plane::XY);
    for _ in 0..80 {
        sc.spawn(app.world());
    }
    let (mut checked, mut seen) = (0, 0);
    for _ in 0..40 {
        sc.step(app.world());
        sc.step_rules(app.world());
        app.update();
        let world = app.world();
        let everyone: Vec<Entity> = world.query::<Entity>().iter(world).collect();
        let observers: Vec<Entity> = world.query_filtered::<Entity, With<ViewRange>>().iter(world).collect();
        for &o in &observers {
            for &t in &everyone {
                let why = app.world().explain_view(o, t);
                assert_eq!(
                    why.is_visible(),
                    app.opened(o, t),
                    "explain_view({o}, {t}) = {why:?} should agree with the messages"
                );
                checked += 1;
                seen += usize::from(why.is_visible());
            }
        }
    }
    assert!(
        checked > 10_000 && seen > 100,
        "the scenario should explain many pairs ({checked}, {seen} seen)"
    );
}
