//! Focused tests, one behaviour each; every update is also checked against brute force.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::Checked;

fn app() -> Checked {
    Checked::new(AoiPlugin::default())
}

/// The observer's set, sorted (the set itself keeps the index's order).
fn set(app: &mut Checked, e: Entity) -> Vec<Entity> {
    let mut v: Vec<Entity> = app
        .world()
        .get::<InterestSet>(e)
        .expect("observer should have an InterestSet")
        .iter()
        .collect();
    v.sort();
    v
}

#[test]
fn boundary_counts_as_inside_and_self_is_never_seen() {
    let mut app = app();
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(5.0))).id();
    let at = app.world().spawn(Position::new(3.0, 4.0)).id();
    let out = app.world().spawn(Position::new(5.0, 0.001)).id();
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![at],
        "a target exactly at the radius should be seen, one past it not"
    );
    assert!(
        !app.world().get::<InterestSet>(o).unwrap().contains(out),
        "contains should agree with iter"
    );
}

#[test]
fn despawn_of_either_side_closes_every_pair() {
    let mut app = app();
    let a = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let b = app.world().spawn((Position::new(1.0, 0.0), ViewRange::new(10.0))).id();
    let c = app.world().spawn(Position::new(2.0, 0.0)).id();
    app.update();
    assert_eq!(app.visible_pairs(), 4, "a and b should see each other and c");
    app.world().despawn(c);
    app.update();
    assert_eq!(app.visible_pairs(), 2, "despawning a target should close its pairs");
    app.world().despawn(a);
    app.update();
    assert_eq!(
        app.visible_pairs(),
        0,
        "despawning an observer should close its pairs both ways"
    );
    assert!(set(&mut app, b).is_empty(), "b should see nobody");
}

#[test]
fn an_entity_given_a_despawned_ones_index_in_the_same_update_is_a_new_entity() {
    let mut app = app();
    let a = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let b = app.world().spawn((Position::new(1.0, 0.0), ViewRange::new(10.0))).id();
    app.update();
    // Bevy's allocator keeps freed indices back until 128 have been freed, then hands them out
    // again, the last first: free b and enough untracked entities, then spawn until b's index
    // comes back (the entities without a Position on the way are not tracked).
    let fillers: Vec<Entity> = (0..200).map(|_| app.world().spawn_empty().id()).collect();
    app.world().despawn(b);
    fillers.into_iter().for_each(|f| {
        app.world().despawn(f);
    });
    let c = (0..1000)
        .map(|_| app.world().spawn_empty().id())
        .find(|e| e.index() == b.index())
        .expect("Bevy should hand the despawned entity's index out again (what this test is about)");
    (app.world().entity_mut(c)).insert((Position::new(2.0, 0.0), ViewRange::new(10.0)));
    app.update();
    assert_eq!(
        set(&mut app, a),
        vec![c],
        "a should see the new entity, not the despawned one"
    );
    assert_eq!(set(&mut app, c), vec![a], "the new entity should see a");
    app.world().entity_mut(c).insert(Position::new(3.0, 0.0));
    app.update();
    assert_eq!(
        set(&mut app, a),
        vec![c],
        "a should still see the new entity after it moved"
    );
}

#[test]
fn removing_and_reinserting_components_balances_messages() {
    let mut app = app();
    let a = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let b = app.world().spawn(Position::new(1.0, 0.0)).id();
    app.update();
    app.world().entity_mut(a).remove::<ViewRange>();
    app.update();
    assert!(
        set(&mut app, a).is_empty(),
        "without ViewRange the InterestSet should be emptied"
    );
    app.world().entity_mut(a).insert(ViewRange::new(10.0));
    app.world().entity_mut(b).remove::<Position>();
    app.update();
    assert!(
        set(&mut app, a).is_empty(),
        "b has no Position, so a should see nothing"
    );
    app.world().entity_mut(b).insert(Position::new(2.0, 0.0));
    app.update();
    assert_eq!(
        set(&mut app, a),
        vec![b],
        "b should be seen again once it has a Position"
    );
    assert_eq!(
        (app.total_enters, app.total_leaves),
        (2, 1),
        "enter, leave (range removed), enter (b back)"
    );
}

#[test]
fn range_changes_grow_and_shrink_the_set() {
    let mut app = app();
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(1.0))).id();
    let near = app.world().spawn(Position::new(5.0, 0.0)).id();
    let far = app.world().spawn(Position::new(50.0, 0.0)).id();
    app.update();
    assert!(set(&mut app, o).is_empty());
    app.world().get_mut::<ViewRange>(o).unwrap().radius = 100.0;
    app.update();
    let mut both = vec![near, far];
    both.sort();
    assert_eq!(set(&mut app, o), both, "a grown range should see both");
    app.world().get_mut::<ViewRange>(o).unwrap().radius = 6.0;
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![near],
        "a shrunk range should keep only the near one"
    );
}

#[test]
fn teleports_of_any_length_are_exact() {
    let mut app = app();
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let t = app.world().spawn((Position::new(1.0, 0.0), ViewRange::new(10.0))).id();
    app.update();
    for (x, seen) in [
        (1.0e7, false),
        (-3.0e6, false),
        (9.0, true),
        (1.0e9, false),
        (-10.0, true),
    ] {
        app.world().get_mut::<Position>(t).unwrap().x = x;
        app.update();
        assert_eq!(
            set(&mut app, o).len(),
            usize::from(seen),
            "after teleporting to x = {x}"
        );
    }
}

#[test]
fn bad_input_is_kept_out_without_disturbing_others() {
    let mut app = app();
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let t = app.world().spawn(Position::new(1.0, 0.0)).id();
    let bad = app
        .world()
        .spawn((Position::new(2.0, 0.0), ViewRange::new(f32::NAN)))
        .id();
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![t],
        "an entity with a NaN range should be out of the index"
    );
    assert!(
        set(&mut app, bad).is_empty(),
        "an entity with a NaN range should see nothing"
    );
    app.world().get_mut::<Position>(t).unwrap().x = f32::INFINITY;
    app.world().get_mut::<ViewRange>(bad).unwrap().radius = 3.0;
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![bad],
        "a target at infinity should leave; a fixed range should join"
    );
    app.world().get_mut::<ViewRange>(bad).unwrap().radius = -1.0;
    app.world().get_mut::<Position>(t).unwrap().x = 1.0;
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![t],
        "a negative range should leave; a finite position should rejoin"
    );
    app.world().get_mut::<ViewRange>(o).unwrap().radius = 1.0e30;
    app.world().get_mut::<Position>(t).unwrap().x = -1.0e35;
    app.update();
    assert_eq!(
        set(&mut app, o),
        vec![t],
        "a radius whose square overflows should see every valid target however far (not be bad input)"
    );
}

#[test]
fn huge_finite_range_sees_everything_without_walking_empty_cells() {
    let mut app = Checked::new(AoiPlugin {
        cell_size: CellSize::Fixed(1.0),
        ..Default::default()
    });
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(1.0e18)))
        .id();
    for i in 0..10 {
        app.world().spawn(Position::new(i as f32 * 1.0e6, -(i as f32) * 3.0e5));
    }
    // 1e36 cells lie in that window; only the occupied ones may be visited.
    app.update();
    assert_eq!(set(&mut app, o).len(), 10, "a huge range should see all targets");
}

#[test]
fn entity_events_reach_observers_on_the_observer_entity() {
    #[derive(Resource, Default)]
    struct Heard(Vec<(Entity, Entity, bool)>);
    let mut app = Checked::new(AoiPlugin {
        entity_events: true,
        ..Default::default()
    });
    app.world().init_resource::<Heard>();
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    app.world()
        .entity_mut(o)
        .observe(|ev: On<EnterView>, mut h: ResMut<Heard>| {
            h.0.push((ev.event().observer, ev.event().target, true));
        });
    app.world()
        .entity_mut(o)
        .observe(|ev: On<LeaveView>, mut h: ResMut<Heard>| {
            h.0.push((ev.event().observer, ev.event().target, false));
        });
    let t = app.world().spawn(Position::new(1.0, 0.0)).id();
    app.update();
    app.world().despawn(t);
    app.update();
    assert_eq!(
        app.world().resource::<Heard>().0,
        vec![(o, t, true), (o, t, false)],
        "the observer entity should hear its enter and leave"
    );
}

#[test]
fn nothing_moving_writes_nothing() {
    let mut app = app();
    for i in 0..50 {
        app.world().spawn((Position::new(i as f32, 0.0), ViewRange::new(5.0)));
    }
    app.update();
    let before = app.total_enters;
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(app.total_enters, before, "no change should write no message");
}

#[test]
#[should_panic(expected = "cell_size CellSize::Fixed(0) is invalid")]
fn zero_cell_size_panics_at_build() {
    bevy_app::App::new().add_plugins(AoiPlugin {
        cell_size: CellSize::Fixed(0.0),
        ..Default::default()
    });
}

#[test]
#[should_panic(expected = "bounds")]
fn inverted_bounds_panic_at_build() {
    bevy_app::App::new().add_plugins(AoiPlugin {
        bounds: Some(AoiBounds::new_2d((10.0, 0.0), (0.0, 10.0))),
        ..Default::default()
    });
}

#[test]
fn a_target_moving_past_a_still_observer_is_seen() {
    let mut app = Checked::new(AoiPlugin {
        cell_size: CellSize::Fixed(4.0),
        ..Default::default()
    });
    let o = app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let t = app.world().spawn(Position::new(50.0, 0.0)).id();
    app.update();
    for x in [30.0, 9.0, 2.0, -11.0] {
        app.world().get_mut::<Position>(t).unwrap().x = x;
        app.update();
    }
    assert_eq!(
        (app.total_enters, app.total_leaves),
        (1, 1),
        "o should see t pass by once"
    );
    assert!(set(&mut app, o).is_empty());
}
