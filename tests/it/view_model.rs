//! The view model (hysteresis, enter budgets, tiers): seeded random scenarios checked against
//! the oracle's model after every update, and a few walks through each rule.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Scenario, on_each_index};

mod moving;

/// What random runs exercised, from `AoiStats` after each update.
#[derive(Default, Debug)]
struct Seen {
    held: usize,
    returned: usize,
    waiting: usize,
    tier_changes: usize,
}

/// Drives a seeded scenario on each index where a good share of the observers have view-model
/// features, toggled at random every tick along with moves, teleports, spawns, despawns, radius
/// and rectangle changes, bad input and (with `rules`) rule changes. Adds to `seen` what the
/// runs exercised.
fn run(seen: &mut Seen, plugin: &AoiPlugin, sc: &Scenario, ticks: usize, population: usize, rules: bool) {
    for plugin in on_each_index(plugin) {
        let mut sc = sc.clone();
        let mut app = Checked::new(plugin);
        for _ in 0..population {
            sc.spawn(app.world());
        }
        for _ in 0..population / 4 {
            sc.step_view_model(app.world());
        }
        app.update();
        for _ in 0..ticks {
            sc.step(app.world());
            sc.step_view_model(app.world());
            if rules {
                sc.step_rules(app.world());
            }
            app.update();
            let stats = app.world().resource::<AoiStats>();
            seen.held += stats.held;
            seen.returned += stats.returned;
            seen.waiting += stats.waiting;
            seen.tier_changes += stats.tier_changes;
        }
    }
}

impl Seen {
    fn assert_every_feature(&self) {
        assert!(
            self.held > 0 && self.returned > 0 && self.waiting > 0 && self.tier_changes > 0,
            "the scenarios should exercise every feature: {self:?}"
        );
    }
}

#[test]
fn random_view_model_scenarios_match_the_model() {
    let plugin = AoiPlugin::default();
    let mut seen = Seen::default();
    for seed in [101, 102, 103] {
        let sc = Scenario::new(seed, 120.0, 40.0, 20.0, Plane::XY);
        run(&mut seen, &plugin, &sc, 150, 120, false);
    }
    seen.assert_every_feature();
}

#[test]
fn random_view_model_scenarios_with_rule_changes_and_watched_match_the_model() {
    let plugin = AoiPlugin {
        cell_size: CellSize::Fixed(15.0),
        watched: Some(WatchedRule {
            by_layers: 1,
            linger_ticks: 2,
        }),
        ..Default::default()
    };
    let mut seen = Seen::default();
    for seed in [111, 112] {
        let sc = Scenario::new(seed, 120.0, 40.0, 20.0, Plane::XY);
        run(&mut seen, &plugin, &sc, 150, 120, true);
    }
    seen.assert_every_feature();
}

#[test]
fn random_view_model_scenarios_in_xz_and_when_crowded_match_the_model() {
    let plugin = AoiPlugin {
        plane: Plane::XZ,
        ..Default::default()
    };
    let mut seen = Seen::default();
    run(
        &mut seen,
        &plugin,
        &Scenario::new(121, 120.0, 40.0, 20.0, Plane::XZ),
        120,
        100,
        true,
    );
    let plugin = AoiPlugin::default();
    run(
        &mut seen,
        &plugin,
        &Scenario::new(122, 30.0, 25.0, 5.0, Plane::XY),
        80,
        150,
        false,
    );
    seen.assert_every_feature();
}

/// An app with one observer at the origin (radius 10, `features`) and one target at `x`.
fn pair(features: impl Bundle, x: f32) -> (Checked, Entity, Entity) {
    let mut app = Checked::new(AoiPlugin::default());
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), features))
        .id();
    let t = app.world().spawn(Position::new(x, 0.0)).id();
    app.update();
    (app, o, t)
}

/// A hysteresis margin of 2 (a radius of 10 grows to 12), held `linger_ticks` updates.
fn margin_two(linger_ticks: u32) -> ViewHysteresis {
    ViewHysteresis {
        margin: 2.0,
        linger_ticks,
    }
}

/// Moves `t` to `x`, runs a checked update, and says whether `o` shows it.
fn walk(app: &mut Checked, o: Entity, t: Entity, x: f32) -> bool {
    app.world().get_mut::<Position>(t).unwrap().x = x;
    app.update();
    app.world().get::<InterestSet>(o).unwrap().contains(t)
}

#[test]
fn hysteresis_holds_a_target_within_the_margin_and_for_its_linger_ticks() {
    let (mut app, o, t) = pair(margin_two(2), 11.0);
    assert!(
        !app.world().get::<InterestSet>(o).unwrap().contains(t),
        "beyond 10 it should not enter"
    );
    assert!(walk(&mut app, o, t, 10.0), "on the radius it should enter");
    let enters = app.total_enters;
    for x in [11.5, 12.0, 9.0, 12.0, 11.0] {
        assert!(walk(&mut app, o, t, x), "within radius + margin ({x}) it should stay");
    }
    assert_eq!(
        app.total_enters, enters,
        "coming back within the margin should cause no message"
    );
    assert_eq!(app.total_leaves, 0, "within the margin nothing should leave");
    // Beyond 12: two updates of grace, then it leaves.
    assert!(walk(&mut app, o, t, 12.5), "first update out: lingers");
    assert!(walk(&mut app, o, t, 30.0), "second update out: lingers");
    assert!(walk(&mut app, o, t, 11.9), "back within the margin: the count restarts");
    assert!(walk(&mut app, o, t, 13.0), "out again: lingers");
    assert!(walk(&mut app, o, t, 13.0), "out again: lingers");
    assert!(!walk(&mut app, o, t, 13.0), "third consecutive update out: leaves");
    assert_eq!(app.world().resource::<AoiStats>().leaves, 1, "one LeaveView");
    // A rule change leaves at once, even within the view.
    assert!(walk(&mut app, o, t, 5.0), "back in view");
    app.world().entity_mut(t).insert(AoiVisibility::Hidden);
    app.update();
    assert!(
        !app.world().get::<InterestSet>(o).unwrap().contains(t),
        "a hidden target should leave at once"
    );
}

#[test]
fn a_target_held_by_the_margin_that_turns_always_visible_is_no_longer_held() {
    // Its distance stays in one of the standing observer's quiet bands (beyond the view, within
    // the margin): only its mode tells the layer that it is within the view now, and back.
    let (mut app, o, t) = pair(margin_two(0), 5.0);
    assert!(walk(&mut app, o, t, 11.0), "within the margin it should be held");
    let held = |app: &mut Checked| app.world().resource::<AoiStats>().held;
    assert_eq!(held(&mut app), 1, "beyond the view it is held by the margin");
    for (mode, expected) in [(AoiVisibility::Always, 0), (AoiVisibility::Normal, 1)] {
        app.world().entity_mut(t).insert(mode);
        app.update();
        assert_eq!(
            held(&mut app),
            expected,
            "an {mode:?} target standing where it was should be held only when Normal"
        );
    }
}

#[test]
fn a_lingering_target_that_turns_hidden_or_stands_still_leaves_when_it_should() {
    // Beyond the grown view a target is not looked at again until its time is up, unless it
    // changes more than by a move.
    let (mut app, o, t) = pair(margin_two(3), 5.0);
    assert!(walk(&mut app, o, t, 20.0), "first update out: lingers");
    app.world().entity_mut(t).insert(AoiVisibility::Hidden);
    app.update();
    let shows = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().contains(t);
    assert!(
        !shows(&mut app),
        "a lingering target turned hidden should leave at once"
    );
    app.world().entity_mut(t).insert(AoiVisibility::Normal);
    assert!(walk(&mut app, o, t, 5.0), "back in view");
    assert!(walk(&mut app, o, t, 20.0), "first update out: lingers");
    for update in 2..=3 {
        app.update();
        assert!(
            shows(&mut app),
            "standing still out there, update {update} out: lingers"
        );
    }
    app.update();
    assert!(!shows(&mut app), "standing still, the fourth update out: leaves");
}

#[test]
fn a_lingering_target_moving_across_a_threshold_beyond_the_view_retiers() {
    // A threshold beyond the radius: where a lingering target is out there sets its tier.
    let features = (margin_two(5), ViewTiers::new([15.0]));
    let (mut app, o, t) = pair(features, 5.0);
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert!(walk(&mut app, o, t, 13.0), "beyond 12: lingers");
    assert_eq!(
        tier(&mut app),
        Some(0),
        "within the threshold it stays in the near tier"
    );
    assert!(walk(&mut app, o, t, 18.0), "still lingering");
    assert_eq!(
        tier(&mut app),
        Some(1),
        "beyond threshold and margin it is in the far tier"
    );
}

#[test]
fn a_crowd_enters_nearest_first_within_the_budget() {
    let mut app = Checked::new(AoiPlugin::default());
    let crowd: Vec<Entity> = (0..200)
        .map(|i| {
            let (x, y) = ((i % 20) as f32, (i / 20) as f32);
            app.world().spawn(Position::new(1000.0 + x, 1000.0 + y)).id()
        })
        .collect();
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(50.0), EnterBudget(30)))
        .id();
    app.update();
    // Teleport into the crowd's corner: 200 qualify, 30 enter per update, nearest first.
    app.world().get_mut::<Position>(o).unwrap().x = 1000.0;
    app.world().get_mut::<Position>(o).unwrap().y = 1000.0;
    let mut by_distance: Vec<(f32, Entity)> = crowd
        .iter()
        .map(|&e| {
            let p = app.world().get::<Position>(e).unwrap();
            ((p.x - 1000.0).powi(2) + (p.y - 1000.0).powi(2), e)
        })
        .collect();
    by_distance.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut shown = 0;
    for update in 1..=7 {
        app.update();
        let waiting = app.world().resource::<AoiStats>().waiting;
        let set = app.world().get::<InterestSet>(o).unwrap();
        assert_eq!(
            set.len() - shown,
            30.min(200 - shown),
            "update {update}: the budget should be used up"
        );
        assert_eq!(set.waiting(), 200 - set.len(), "the others should wait");
        assert_eq!(waiting, 200 - set.len(), "AoiStats should count them");
        let mut nearest: Vec<Entity> = by_distance[..set.len()].iter().map(|d| d.1).collect();
        nearest.sort();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            nearest,
            "update {update}: the nearest should have entered"
        );
        shown = set.len();
    }
    assert_eq!(
        shown, 200,
        "every qualifying target should have entered after 7 updates"
    );
}

#[test]
fn tiers_follow_distance_with_the_hysteresis_margin() {
    let features = (
        ViewTiers::new([3.0, 6.0]),
        ViewHysteresis {
            margin: 1.0,
            linger_ticks: 0,
        },
    );
    let (mut app, o, t) = pair(features, 2.0);
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert_eq!(tier(&mut app), Some(0), "within 3: the nearest tier");
    for (x, want) in [
        (3.5, 0),
        (4.5, 1),
        (3.5, 1),
        (3.0, 0),
        (6.9, 1),
        (7.5, 2),
        (9.0, 2),
        (10.9, 2),
        (2.0, 0),
    ] {
        walk(&mut app, o, t, x);
        assert_eq!(tier(&mut app), Some(want), "at {x} the tier should be {want}");
    }
    assert!(!walk(&mut app, o, t, 11.5), "beyond radius + margin it leaves");
}

#[test]
fn an_always_target_stepping_across_a_tier_threshold_retiers_for_an_observer_standing_still() {
    // The target is far beyond the view, seen only because it is `Always` visible; its small
    // steps are the index's cheapest path, which decides no pair by distance.
    let (mut app, o, t) = pair(ViewTiers::new([20.0]), 21.0);
    app.world().entity_mut(t).insert(AoiVisibility::Always);
    app.update();
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert_eq!(tier(&mut app), Some(1), "beyond 20 it should be in the far tier");
    assert!(walk(&mut app, o, t, 20.0), "an Always target stays in view");
    assert_eq!(
        tier(&mut app),
        Some(0),
        "on the threshold it should be in the near tier"
    );
}

#[test]
fn an_observer_standing_still_retiers_a_walker_whose_flip_scan_finds_it() {
    // The target is an observer of the same radius taking the flip scan, which also decides its
    // pairs as a target (`Slot::flip_scans_as_target`): a step that flips no view either way
    // must still reach the view layer.
    let mut app = Checked::new(AoiPlugin::default());
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), ViewTiers::new([5.0])))
        .id();
    let t = app.world().spawn((Position::new(5.5, 0.0), ViewRange::new(10.0))).id();
    app.update();
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert_eq!(tier(&mut app), Some(1), "beyond 5 it should be in the far tier");
    // A step of 1, under the step limit (an eighth of the cell side of ~10.6).
    assert!(walk(&mut app, o, t, 4.5), "it stays in view");
    assert_eq!(
        app.world().resource::<AoiStats>().stepped,
        1,
        "the walker should have stepped"
    );
    assert_eq!(tier(&mut app), Some(0), "within 5 it should be in the near tier");
}

#[test]
fn a_wide_observer_standing_still_retiers_a_target_stepping_across_a_threshold() {
    // Among observers of radius 10, one of radius 1000 stands out: a moving target tests it from
    // the wide list, where a step that flips no view must still reach the view layer.
    let mut app = Checked::new(AoiPlugin::default());
    for i in 0..4 {
        let far_away = Position::new(5000.0 + 50.0 * i as f32, 0.0);
        app.world().spawn((far_away, ViewRange::new(10.0)));
    }
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(1000.0), ViewTiers::new([300.0])))
        .id();
    let t = app.world().spawn(Position::new(300.5, 0.0)).id();
    app.update();
    assert_eq!(
        app.world().resource::<AoiStats>().wide_observers,
        1,
        "the radius-1000 observer should be wide"
    );
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert_eq!(tier(&mut app), Some(1), "beyond 300 it should be in the far tier");
    // A step of 1, under the step limit (an eighth of the cell side of ~10.6).
    assert!(walk(&mut app, o, t, 299.5), "it stays in view");
    assert_eq!(
        app.world().resource::<AoiStats>().stepped,
        1,
        "the target should have taken the stepping path"
    );
    assert_eq!(tier(&mut app), Some(0), "within 300 it should be in the near tier");
}

#[test]
fn the_last_featured_observer_handed_back_leaves_its_messages_once() {
    // Held by the hysteresis (beyond 10, within 12): handed back, the plain view lets it go.
    let (mut app, o, t) = pair(margin_two(2), 5.0);
    assert!(walk(&mut app, o, t, 11.0), "within the margin it should be held");
    app.world().entity_mut(o).remove::<ViewHysteresis>();
    app.update();
    assert_eq!(
        app.world().resource::<AoiStats>().leaves,
        1,
        "handed back, the held target should leave"
    );
    // No observer has a view-model component now: the next updates write nothing.
    for _ in 0..2 {
        app.update();
        let stats = app.world().resource::<AoiStats>();
        assert_eq!(
            (stats.enters, stats.leaves),
            (0, 0),
            "the hand-back's messages should not be written again"
        );
    }
}
