//! The view model where the observer itself steps: its flip scan reports what its move can
//! change (the targets crossing its view's edge, a tier threshold, or jumping), and the view
//! layer judges only those and its due lingering targets.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use super::{margin_two, pair, walk};
use crate::harness::{Checked, INDEXES, drift};

/// Moves observer `o` to `x` (a step under the step limit), runs a checked update, asserts that
/// it took the stepping path, and says whether it shows `t`.
fn step_observer(app: &mut Checked, o: Entity, t: Entity, x: f32) -> bool {
    app.world().get_mut::<Position>(o).unwrap().x = x;
    app.update();
    assert_eq!(
        app.world().resource::<AoiStats>().stepped,
        1,
        "the observer should have stepped (its flip scan reports what its move changed)"
    );
    app.world().get::<InterestSet>(o).unwrap().contains(t)
}

#[test]
fn an_observer_stepping_across_its_view_edge_lets_a_target_in_and_holds_it_walking_away() {
    // The target stands in the margin, listed (within the grown view) but not shown: only the
    // observer's own move brings it within the view. Each step crosses a band's bound without
    // crossing the grown view's edge.
    let (mut app, o, t) = pair(margin_two(0), 11.0);
    app.update();
    assert!(!step_observer(&mut app, o, t, 0.5), "at 10.5 it should not enter");
    assert!(step_observer(&mut app, o, t, 1.0), "on the radius it should enter");
    let held = |app: &mut Checked| app.world().resource::<AoiStats>().held;
    assert_eq!(held(&mut app), 0, "within the view it is not held");
    assert!(step_observer(&mut app, o, t, 0.0), "at 11 it should be held");
    assert_eq!(held(&mut app), 1, "beyond the view it is held by the margin");
    assert!(step_observer(&mut app, o, t, -1.0), "at 12 it should be held");
    assert!(step_observer(&mut app, o, t, 0.0), "back at 11 it should be held");
    assert!(step_observer(&mut app, o, t, 1.5), "back within the view");
    assert_eq!(held(&mut app), 0, "within the view it is not held");
    assert_eq!(
        app.world().resource::<AoiStats>().returned,
        1,
        "it came back within the view"
    );
    for x in [0.5, -0.5] {
        step_observer(&mut app, o, t, x);
    }
    assert!(!step_observer(&mut app, o, t, -1.5), "beyond 12 it should leave");
}

#[test]
fn an_observer_or_its_target_stepping_across_a_tier_threshold_retiers_it() {
    // With one threshold, and with four: the observer's bands hold every bound, so the last
    // one's crossing is not lost, whether the observer steps or the target does.
    for (thresholds, near) in [(&[5.0][..], 0), (&[2.0, 3.0, 4.0, 5.0][..], 3)] {
        let far = near + 1;
        let (mut app, o, t) = pair(ViewTiers::new(thresholds.iter().copied()), 5.5);
        app.update();
        let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
        assert_eq!(tier(&mut app), Some(far), "beyond 5 it should be in tier {far}");
        assert!(step_observer(&mut app, o, t, 1.0), "it stays in view");
        assert_eq!(tier(&mut app), Some(near), "within 5 it should be in tier {near}");
        assert!(step_observer(&mut app, o, t, 0.0), "it stays in view");
        assert_eq!(tier(&mut app), Some(far), "beyond 5 again it should be in tier {far}");
        for (x, want) in [(4.5, near), (5.5, far)] {
            assert!(walk(&mut app, o, t, x), "it stays in view");
            assert_eq!(tier(&mut app), Some(want), "at {x} it should be in tier {want}");
        }
    }
}

#[test]
fn a_target_jumping_in_and_out_of_a_stepping_observers_view_enters_and_leaves() {
    // A jump is decided by the target's own scan, not by the observer's flip scan.
    let (mut app, o, t) = pair(margin_two(0), 50.0);
    app.update();
    app.world().get_mut::<Position>(t).unwrap().x = 4.0;
    assert!(step_observer(&mut app, o, t, 1.0), "a target jumping into view enters");
    app.world().get_mut::<Position>(t).unwrap().x = 60.0;
    assert!(
        !step_observer(&mut app, o, t, 2.0),
        "a target jumping out of view leaves"
    );
}

#[test]
fn a_lingering_target_beyond_the_view_retiers_as_its_observer_steps_away() {
    // A threshold beyond the radius: where the observer is sets a lingering target's tier too.
    // With nothing else in view, the observer takes the flip scan only with no minimum seen.
    let features = (margin_two(10), ViewTiers::new([15.0]));
    let (mut app, o, t) = pair(features, 5.0);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    assert!(walk(&mut app, o, t, 13.0), "beyond 12: lingers");
    let tier = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().tier_of(t);
    assert_eq!(
        tier(&mut app),
        Some(0),
        "within the threshold it stays in the near tier"
    );
    for x in [-1.0, -2.0, -3.0, -4.0] {
        assert!(step_observer(&mut app, o, t, x), "still lingering");
        assert_eq!(tier(&mut app), Some(0), "within threshold and margin it stays near");
    }
    assert!(step_observer(&mut app, o, t, -5.0), "still lingering");
    assert_eq!(
        tier(&mut app),
        Some(1),
        "beyond threshold and margin it is in the far tier"
    );
}

/// [`pair`] with a tiered observer (one threshold at 20, beyond its radius of 10) and an
/// `Always`-visible target at `x`, the observer taking the flip scan with nothing else in view.
fn tiered_and_always(x: f32) -> (Checked, Entity, Entity) {
    let (mut app, o, t) = pair(ViewTiers::new([20.0]), x);
    app.world().entity_mut(t).insert(AoiVisibility::Always);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    app.update();
    (app, o, t)
}

/// The tier in which observer `o` shows `t`.
fn tier(app: &mut Checked, o: Entity, t: Entity) -> Option<u8> {
    app.world().get::<InterestSet>(o).unwrap().tier_of(t)
}

/// Moves observer `o` to `y` on the y axis and target `t` to `x` on the x axis, runs a checked
/// update, and asserts that `stepped` entities stepped (the others jumped or stood).
fn move_both(app: &mut Checked, (o, y): (Entity, f32), (t, x): (Entity, f32), stepped: usize) {
    app.world().get_mut::<Position>(o).unwrap().y = y;
    app.world().get_mut::<Position>(t).unwrap().x = x;
    app.update();
    assert_eq!(
        app.world().resource::<AoiStats>().stepped,
        stepped,
        "{stepped} of the observer and the target should have stepped"
    );
}

#[test]
fn an_observer_stepping_across_a_tier_threshold_retiers_an_always_target_beyond_its_view() {
    // The target stands beyond the view, seen only because it is `Always` visible: no distance
    // test of the observer's window finds it, so its tier is tested on its own.
    let (mut app, o, t) = tiered_and_always(20.5);
    assert_eq!(tier(&mut app, o, t), Some(1), "beyond 20 it should be in the far tier");
    for (x, want) in [(1.0, 0), (0.0, 1)] {
        assert!(step_observer(&mut app, o, t, x), "an Always target stays in view");
        assert_eq!(
            tier(&mut app, o, t),
            Some(want),
            "at {} the tier should be {want}",
            20.5 - x
        );
    }
}

#[test]
fn a_stepping_always_target_retiers_for_a_stepping_observer_where_nobody_stands_still() {
    // Both step and nobody else is there, so no target scan runs: the observer's scan tests the
    // target from where it started. The observer steps across the line between them, which
    // alone would leave the target beyond the threshold.
    let (mut app, o, t) = tiered_and_always(20.5);
    assert_eq!(tier(&mut app, o, t), Some(1), "beyond 20 it should be in the far tier");
    move_both(&mut app, (o, 0.5), (t, 19.6), 2);
    assert_eq!(tier(&mut app, o, t), Some(0), "within 20 it should be in the near tier");
}

#[test]
fn a_jumping_always_target_retiers_for_a_stepping_observer() {
    // The jump is the target's own scan's to report, the step the observer's.
    let (mut app, o, t) = tiered_and_always(20.5);
    for (y, x, want) in [(0.5, 5.0, 0), (1.0, 30.0, 1)] {
        move_both(&mut app, (o, y), (t, x), 1);
        assert_eq!(tier(&mut app, o, t), Some(want), "at {x} the tier should be {want}");
    }
}

#[test]
fn a_stepping_always_target_retiers_for_an_observer_standing_and_one_stepping() {
    // The standing observer learns of the step from the target's scan, the stepping one from its
    // own: each once.
    let (mut app, standing, t) = tiered_and_always(20.5);
    let stepping = app
        .world()
        .spawn((Position::new(0.0, 2.0), ViewRange::new(10.0), ViewTiers::new([20.0])))
        .id();
    app.update();
    for o in [standing, stepping] {
        assert_eq!(tier(&mut app, o, t), Some(1), "beyond 20 it should be in the far tier");
    }
    move_both(&mut app, (stepping, 2.5), (t, 19.6), 2);
    for o in [standing, stepping] {
        assert_eq!(
            tier(&mut app, o, t),
            Some(0),
            "at 19.6 to 19.8 it should be in the near tier"
        );
    }
}

/// A checked app with an observer at the origin seeing a 10 × 4 rectangle with `features`, and a
/// target at `at`.
fn rect_pair(features: impl Bundle, at: [f32; 2]) -> (Checked, Entity, Entity) {
    let mut app = Checked::new(AoiPlugin::default());
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRect::new(10.0, 4.0), features))
        .id();
    let t = app.world().spawn(Position::new(at[0], at[1])).id();
    app.update();
    (app, o, t)
}

/// Moves `e` to `at`, runs a checked update, and asserts that it stepped (a move under the
/// step limit: the scans report what its step changed).
fn move_to(app: &mut Checked, e: Entity, at: [f32; 2]) {
    *app.world().get_mut::<Position>(e).unwrap() = Position::new(at[0], at[1]);
    app.update();
    assert_eq!(app.world().resource::<AoiStats>().stepped, 1, "it should have stepped");
}

#[test]
fn a_rectangle_retiers_by_its_squares_whether_it_steps_or_its_target_does() {
    // Its tiers are squares: the target's tier follows the axis where it is farther, which the
    // distance does not (at 3 and 2.5 it is 3.9 away, yet on the square of 3, so within it).
    let (mut app, o, t) = rect_pair(ViewTiers::new([3.0]), [5.0, 2.5]);
    let expect = |app: &mut Checked, want, why| assert_eq!(tier(app, o, t), Some(want), "{why}");
    expect(&mut app, 1, "5 away on the first axis it should be in the far tier");
    for (x, want) in [(1.0, 1), (2.0, 0), (1.2, 1)] {
        move_to(&mut app, o, [x, 0.0]);
        expect(
            &mut app,
            want,
            "the observer stepping should retier it by the larger offset",
        );
    }
    for (at, want) in [([4.2, 2.5], 0), ([4.2, 3.5], 1), ([4.0, 2.6], 0)] {
        move_to(&mut app, t, at);
        expect(
            &mut app,
            want,
            "the target stepping should retier it by the larger offset",
        );
    }
}

#[test]
fn a_rectangle_stepping_lets_a_target_in_across_its_edge_and_holds_it_by_the_margin() {
    // The target stands in the margin above the rectangle (within 6 on the second axis, not 4):
    // listed, not shown, until the observer's own steps bring it within the edge.
    let (mut app, o, t) = rect_pair(margin_two(0), [3.0, 4.5]);
    let shows = |app: &mut Checked| app.world().get::<InterestSet>(o).unwrap().contains(t);
    assert!(!shows(&mut app), "4.5 above a half height of 4 it should not enter");
    move_to(&mut app, o, [0.0, 0.3]);
    assert!(!shows(&mut app), "4.2 above it should not enter");
    move_to(&mut app, o, [0.0, 0.5]);
    assert!(shows(&mut app), "on the edge it should enter");
    move_to(&mut app, o, [0.0, -0.5]);
    move_to(&mut app, o, [0.0, -1.0]);
    assert!(
        shows(&mut app),
        "5.5 above, within the grown rectangle, it should be held"
    );
    move_to(&mut app, t, [3.0, 4.8]);
    assert!(
        shows(&mut app),
        "the target stepping within the margin should stay held"
    );
    let held = |app: &mut Checked| app.world().resource::<AoiStats>().held;
    assert_eq!(held(&mut app), 1, "beyond the edge it is held by the margin");
    move_to(&mut app, t, [3.0, 4.0]);
    move_to(&mut app, t, [3.0, 2.9]);
    assert_eq!(
        held(&mut app),
        0,
        "stepping back within the edge of the observer standing, it is no longer held"
    );
}

#[test]
fn walking_rectangles_with_hysteresis_and_tiers_match_the_model() {
    // Rectangles of many shapes walking among walking discs and targets (a few always visible),
    // in small steps (their flip scans' band passes report what crosses an edge or a square) and
    // now and then a long one; every update checked against the model.
    for index in INDEXES {
        let mut app = Checked::new(AoiPlugin {
            index,
            ..Default::default()
        });
        let mut rectangles = Vec::new();
        for i in 0..240usize {
            let at = Position::new((i * 37 % 100) as f32, (i * 53 % 100) as f32);
            let (hw, hh) = (6.0 + (i % 5) as f32 * 2.0, 4.0 + (i % 3) as f32 * 3.0);
            let margin = ViewHysteresis {
                margin: [0.0, 1.5, 3.0][i % 3],
                linger_ticks: (i % 4) as u32,
            };
            let tiers = ViewTiers::new([2.0 + (i % 2) as f32, 5.0, 9.0]);
            let mut e = app.world().spawn(at);
            match i % 4 {
                0 => e.insert((ViewRect::new(hw, hh), margin, tiers)),
                1 => e.insert((ViewRect::new(hw, hh), tiers)),
                2 => e.insert((ViewRange::new(hw), margin)),
                // A few targets seen at any distance, their tiers following them.
                _ if i % 20 == 3 => e.insert(AoiVisibility::Always),
                _ => &mut e,
            };
            if i % 4 < 2 {
                rectangles.push(e.id());
            }
        }
        app.update();
        let (mut stepped, mut tier_changes, mut shown_by_rectangles) = (0, 0, 0);
        for tick in 0..80usize {
            drift(app.world(), |i| {
                let a = (i * 7 + tick / 3) as f32 * 0.61;
                let len = if (i + tick) % 41 == 0 {
                    30.0
                } else {
                    [0.0, 0.7, 1.6][(i + tick) % 3]
                };
                (len * a.cos(), len * a.sin())
            });
            app.update();
            let world = app.world();
            let stats = world.resource::<AoiStats>();
            (stepped, tier_changes) = (stepped + stats.stepped, tier_changes + stats.tier_changes);
            shown_by_rectangles += (rectangles.iter())
                .filter_map(|&r| world.get::<InterestSet>(r))
                .map(InterestSet::len)
                .sum::<usize>();
        }
        assert!(
            stepped > 0 && tier_changes > 0 && shown_by_rectangles > 0,
            "{index:?}: the observers should step, retier their targets and the rectangles show \
             some ({stepped} steps, {tier_changes} tier changes, {shown_by_rectangles} shown)"
        );
    }
}
