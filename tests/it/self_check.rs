//! The self-check mode: silent on a correct index through random scenarios (with `InterestSet`s,
//! and without, where it checks what the messages said), and it catches a
//! divergence injected into an `InterestSet` (the component replaced behind the plugin's back),
//! which harms nothing else.

use bevy_aoi::prelude::*;

use crate::harness::{Checked, Scenario};

/// A seeded scenario with rule changes, `plugin` self-checking every update: every check should
/// pass.
fn passes_every_self_check(plugin: AoiPlugin, seed: u64) {
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        self_check_every: 1,
        ..Default::default()
    });
    let mut sc = Scenario::new(seed, 120.0, 30.0, 10.0, Plane::XY);
    for _ in 0..100 {
        sc.spawn(app.world());
    }
    for _ in 0..50 {
        sc.step(app.world());
        sc.step_rules(app.world());
        app.update();
    }
    let stats = app.world().resource::<AoiStats>().clone();
    assert!(
        stats.self_checks >= 50,
        "every update should have been checked ({})",
        stats.self_checks
    );
    assert_eq!(stats.self_check_divergences, 0, "a correct index should never diverge");
    assert!(
        app.visible_pairs() > 0,
        "the scenario should have visible pairs to check"
    );
}

#[test]
fn a_correct_index_passes_every_self_check() {
    passes_every_self_check(AoiPlugin::default(), 151);
}

#[test]
fn without_sets_the_self_check_reads_what_the_messages_said() {
    // The sets are empty: a check of them would diverge at once.
    let no_sets = AoiPlugin {
        interest_sets: false,
        ..Default::default()
    };
    passes_every_self_check(no_sets, 152);
}

#[test]
fn an_injected_divergence_is_caught() {
    use bevy_app::App;

    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    app.insert_resource(AoiSettings {
        self_check_every: 2,
        ..Default::default()
    });
    let observer = app
        .world_mut()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0)))
        .id();
    app.world_mut().spawn(Position::new(3.0, 0.0));
    app.update();
    app.update();
    let clean = app.world().resource::<AoiStats>().clone();
    assert!(clean.self_checks > 0, "the interval should have come round");
    assert_eq!(clean.self_check_divergences, 0, "nothing is wrong yet");
    // Empty the observer's set behind the plugin's back; nothing moves, so no update fixes it.
    *app.world_mut().get_mut::<InterestSet>(observer).unwrap() = InterestSet::default();
    app.update();
    app.update();
    let stats = app.world().resource::<AoiStats>().clone();
    assert!(
        stats.self_check_divergences >= 1,
        "the self-check should have caught the emptied set ({stats:?})"
    );
}

/// A set replaced behind the plugin's back gets edits that change nothing (removals of targets it
/// no longer has, more than its room of pending edits holds): no panic (debug asserts included),
/// no length beyond what exists, and the other observers keep the contract.
#[test]
fn a_replaced_set_that_keeps_being_edited_harms_nothing() {
    use bevy_app::App;
    use bevy_ecs::entity::Entity;

    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    app.insert_resource(AoiSettings {
        self_check_every: 1,
        ..Default::default()
    });
    let tampered = app
        .world_mut()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0)))
        .id();
    let other = app
        .world_mut()
        .spawn((Position::new(1000.0, 0.0), ViewRange::new(10.0)))
        .id();
    // Walkers that cross the tampered observer's view edge back and forth, and one that stays
    // beside the other observer.
    let walkers: Vec<Entity> = (0..12)
        .map(|i| app.world_mut().spawn(Position::new(9.0, i as f32 * 0.1)).id())
        .collect();
    let beside = app.world_mut().spawn(Position::new(1003.0, 0.0)).id();
    app.update();
    *app.world_mut().get_mut::<InterestSet>(tampered).unwrap() = InterestSet::default();
    for update in 0..40 {
        let x = if update % 2 == 0 { 11.0 } else { 9.0 };
        for &w in &walkers {
            app.world_mut().get_mut::<Position>(w).unwrap().x = x;
        }
        app.update();
        let set = app.world().get::<InterestSet>(tampered).unwrap();
        assert!(
            set.len() <= walkers.len() && set.iter().count() <= walkers.len(),
            "update {update}: a replaced set should never count more targets than exist ({set:?})"
        );
        let seen: Vec<Entity> = app.world().get::<InterestSet>(other).unwrap().iter().collect();
        assert_eq!(
            seen,
            [beside],
            "update {update}: the other observer should keep the contract"
        );
    }
    // (Here the set happens to come right again: emptied while its walkers were in view, it
    // lost them all at once in the next update. Whether the self-check reports a replaced set
    // is `an_injected_divergence_is_caught`'s to show.)
}
