//! The self-check mode: silent on a correct index through random scenarios, and it catches a
//! divergence injected into an `InterestSet` (through reflection, the one way to write a set
//! from outside).

use bevy_aoi::prelude::*;

use crate::harness::{Checked, Scenario};

#[test]
fn a_correct_index_passes_every_self_check() {
    let mut app = Checked::new(AoiPlugin::default());
    app.world().insert_resource(AoiSettings {
        self_check_every: 1,
        ..Default::default()
    });
    let mut sc = Scenario::new(151, 120.0, 30.0, 10.0, Plane::XY);
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
