//! `explain_view`: its answer agrees with every `InterestSet` in random scenarios with rule
//! changes, and it names the reason in hand-built cases.

use bevy_aoi::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, INDEXES, Scenario};

#[test]
fn explanations_agree_with_the_sets_in_random_scenarios() {
    for (seed, index) in [141, 142].into_iter().zip(INDEXES) {
        let mut app = Checked::new(AoiPlugin {
            index,
            ..Default::default()
        });
        let mut sc = Scenario::new(seed, 120.0, 30.0, 10.0, Plane::XY);
        for _ in 0..80 {
            sc.spawn(app.world());
        }
        let (mut checked, mut view_model) = (0, 0);
        for _ in 0..60 {
            sc.step(app.world());
            sc.step_rules(app.world());
            sc.step_view_model(app.world());
            app.update();
            let world = app.world();
            let everyone: Vec<Entity> = world.query::<Entity>().iter(world).collect();
            let mut observers = world.query_filtered::<(Entity, &InterestSet), With<ViewRange>>();
            for (o, set) in observers.iter(world) {
                for &t in &everyone {
                    let why = world.explain_view(o, t);
                    assert_eq!(
                        why.is_visible(),
                        set.contains(t),
                        "explain_view({o}, {t}) = {why:?} should agree with {o}'s InterestSet"
                    );
                    checked += 1;
                    view_model += usize::from(matches!(why, ViewExplanation::ViewModel { .. }));
                }
            }
        }
        assert!(
            checked > 10_000 && view_model > 100,
            "the scenario should explain many pairs (did {checked}, {view_model} with view-model features)"
        );
    }
}

#[test]
fn each_reason_is_named() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let w = app.world_mut();
    let o = w
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), AoiLayers::new(1, 1 | 2)))
        .id();
    let near = w.spawn(Position::new(6.0, 8.0)).id();
    let far = w.spawn(Position::new(30.0, 0.0)).id();
    let hidden = w.spawn((Position::new(1.0, 0.0), AoiVisibility::Hidden)).id();
    let always = w.spawn((Position::new(900.0, 0.0), AoiVisibility::Always)).id();
    let elsewhere = w.spawn((Position::new(1.0, 0.0), AoiInstance(3))).id();
    let wrong_layer = w.spawn((Position::new(1.0, 0.0), AoiLayers::new(4, 0))).id();
    let bad = w.spawn(Position::new(f32::NAN, 0.0)).id();
    let no_position = w.spawn_empty().id();
    let plain = w.spawn(Position::new(0.0, 0.0)).id();
    app.update();
    let w = app.world();
    let distance = |d2: f32| ViewExplanation::Distance {
        squared_distance: d2,
        squared_radius: 100.0,
    };
    let cases = [
        (o, near, distance(100.0), true),
        (o, far, distance(900.0), false),
        (o, hidden, ViewExplanation::Hidden, false),
        (o, always, ViewExplanation::Always, true),
        (
            o,
            elsewhere,
            ViewExplanation::OtherInstance { observer: 0, target: 3 },
            false,
        ),
        (
            o,
            wrong_layer,
            ViewExplanation::NoSharedLayer {
                observer_sees: 3,
                target_member: 4,
            },
            false,
        ),
        (o, bad, ViewExplanation::TargetKeptOut, false),
        (o, no_position, ViewExplanation::TargetNotTracked, false),
        (o, o, ViewExplanation::SameEntity, false),
        (plain, o, ViewExplanation::NotAnObserver, false),
        (bad, o, ViewExplanation::ObserverKeptOut, false),
        (no_position, o, ViewExplanation::ObserverNotTracked, false),
    ];
    for (observer, target, want, visible) in cases {
        let why = w.explain_view(observer, target);
        assert_eq!(why, want, "explain_view({observer}, {target}) should be {want:?}");
        assert_eq!(why.is_visible(), visible, "{want:?} should say visible = {visible}");
    }
    assert_eq!(
        w.explain_view(o, near).margin(),
        Some(0.0),
        "near is exactly on the boundary"
    );
}

#[test]
fn an_unlimited_view_sees_every_distance_with_an_infinite_margin() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let w = app.world_mut();
    let gm = w.spawn((Position::new(-3.0e38, 0.0), ViewRange::unlimited())).id();
    let huge = w.spawn((Position::new(0.0, 0.0), ViewRange::new(1.0e30))).id();
    let far = w.spawn(Position::new(3.0e38, 0.0)).id();
    app.update();
    let w = app.world();
    for observer in [gm, huge] {
        let why = w.explain_view(observer, far);
        assert!(why.is_visible(), "{observer} should see the far target: {why:?}");
        assert_eq!(
            why.margin(),
            Some(f32::INFINITY),
            "an unlimited view's margin should be +inf"
        );
    }
    assert!(ViewRange::unlimited().is_unlimited() && ViewRange::new(f32::MAX).is_unlimited());
    assert!(
        !ViewRange::new(1.0e18).is_unlimited(),
        "1e18 squared is finite: a limited view"
    );
}

#[test]
fn a_rectangle_is_explained_by_its_axes() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let w = app.world_mut();
    let screen = w.spawn((Position::new(0.0, 0.0), ViewRect::new(16.0, 9.0))).id();
    let corner = w.spawn(Position::new(-16.0, 9.0)).id();
    let above = w.spawn(Position::new(4.0, 12.0)).id();
    app.update();
    let w = app.world();
    let why = w.explain_view(screen, corner);
    assert_eq!(
        why,
        ViewExplanation::Rectangle {
            dx: -16.0,
            dy: 9.0,
            half_width: 16.0,
            half_height: 9.0
        },
        "the corner should be explained by its offsets on both axes"
    );
    assert!(
        why.is_visible() && why.margin() == Some(0.0),
        "a corner is on the boundary: {why:?}"
    );
    let why = w.explain_view(screen, above);
    assert!(
        !why.is_visible(),
        "a target above the screen should not be seen: {why:?}"
    );
    assert_eq!(why.margin(), Some(-3.0), "it is 3 units beyond the top edge");
}
