//! Rectangular views (`ViewRect`): crowds of rectangle observers stepping every tick (flip scans
//! and stepping targets around clean rectangles), teleporting, changing shape (also to the same
//! enclosing disc, half extents swapped) and swapping to a radius and back, in both 2D planes;
//! the bad-input cases; every update against brute force.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Draws, INDEXES, Scenario, drift};

/// 200 entities, about half of them rectangle observers, walking for 100 ticks in `plane`.
fn run(plane: Plane, index: IndexKind, seed: u64, flip_scan_min_seen: usize) -> (Checked, usize) {
    let mut app = Checked::new(AoiPlugin {
        plane,
        index,
        ..Default::default()
    });
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen,
        ..Default::default()
    });
    let mut sc = Scenario::new(seed, 100.0, 25.0, 5.0, plane);
    for _ in 0..100 {
        sc.spawn(app.world());
    }
    let rects: Vec<Entity> = (0..100)
        .map(|i| {
            let p = sc.point();
            let (hw, hh) = (10.0 + (i % 7) as f32 * 4.0, 6.0 + (i % 5) as f32 * 5.0);
            app.world().spawn((p, ViewRect::new(hw, hh))).id()
        })
        .collect();
    app.update();
    let mut seen_by_rects = 0;
    for tick in 0..100 {
        drift(app.world(), |i| {
            let a = (i * 5 + tick / 4) as f32 * 0.73;
            let len = [0.0, 1.0, 2.5][(i + tick) % 3];
            (len * a.cos(), len * a.sin())
        });
        sc.step(app.world());
        let r = rects[sc.rng.below(rects.len())];
        match tick % 10 {
            // Half extents swapped: the same enclosing disc, another rectangle.
            2 => {
                if let Some(mut v) = app.world().get_mut::<ViewRect>(r) {
                    *v = ViewRect::new(v.half_height, v.half_width);
                }
            }
            4 => *app.world().get_mut::<Position>(r).unwrap() = sc.point(),
            6 => {
                if let Some(mut v) = app.world().get_mut::<ViewRect>(r) {
                    v.half_width *= 1.5;
                }
            }
            _ => {}
        }
        app.update();
        let world = app.world();
        seen_by_rects += rects
            .iter()
            .filter_map(|&r| world.get::<InterestSet>(r))
            .map(InterestSet::len)
            .sum::<usize>();
    }
    (app, seen_by_rects)
}

#[test]
fn rectangle_observers_match_brute_force_in_both_planes() {
    for ((plane, seed, flip), index) in [
        (Plane::XY, 201, 0),
        (Plane::XY, 202, 256),
        (Plane::XZ, 203, 0),
        (Plane::XZ, 204, 4),
    ]
    .into_iter()
    .flat_map(|case| INDEXES.map(|index| (case, index)))
    {
        let (app, seen) = run(plane, index, seed, flip);
        assert!(
            seen > 100 * 100 * 3,
            "{plane:?}: the rectangles should see a good part of the crowd (saw {seen})"
        );
        assert!(
            app.total_enters > 2000 && app.total_leaves > 2000,
            "views should change often"
        );
    }
}

#[test]
fn a_rectangle_sees_its_edges_and_corners_and_nothing_beyond() {
    let mut app = Checked::new(AoiPlugin::default());
    let w = app.world();
    let o = w.spawn((Position::new(0.0, 0.0), ViewRect::new(16.0, 9.0))).id();
    let inside: Vec<Entity> = [(16.0, 9.0), (-16.0, -9.0), (16.0, 0.0), (0.0, -9.0), (15.9, 8.9)]
        .into_iter()
        .map(|(x, y)| w.spawn(Position::new(x, y)).id())
        .collect();
    // Within the enclosing disc (radius 18.4) but outside the rectangle, and just beyond an edge.
    for (x, y) in [(16.1, 0.0), (0.0, 9.1), (12.0, 12.0), (-17.0, 1.0)] {
        w.spawn(Position::new(x, y));
    }
    app.update();
    let mut got: Vec<Entity> = app.world().get::<InterestSet>(o).unwrap().iter().collect();
    let mut want = inside;
    got.sort();
    want.sort();
    assert_eq!(
        got, want,
        "the rectangle should hold exactly its inside, boundary included"
    );
}

#[test]
fn bad_rectangles_are_kept_out_and_come_back() {
    for plane in [Plane::XY, Plane::XYZ] {
        let mut app = Checked::new(AoiPlugin {
            plane,
            ..Default::default()
        });
        let w = app.world();
        let seer = w.spawn((Position::new(0.0, 0.0), ViewRange::new(50.0))).id();
        let both = w
            .spawn((Position::new(1.0, 0.0), ViewRange::new(5.0), ViewRect::new(5.0, 5.0)))
            .id();
        let negative = w.spawn((Position::new(2.0, 0.0), ViewRect::new(-1.0, 5.0))).id();
        let nan = w.spawn((Position::new(3.0, 0.0), ViewRect::new(5.0, f32::NAN))).id();
        app.update();
        let seen = |app: &mut Checked| app.world().get::<InterestSet>(seer).unwrap().len();
        assert_eq!(seen(&mut app), 0, "{plane:?}: every bad entity should be kept out");
        app.world().entity_mut(both).remove::<ViewRange>();
        *app.world().get_mut::<ViewRect>(negative).unwrap() = ViewRect::new(1.0, 5.0);
        *app.world().get_mut::<ViewRect>(nan).unwrap() = ViewRect::new(5.0, f32::INFINITY);
        app.update();
        // In Plane::XYZ a rectangle has no plane to lie in: kept out even with good values.
        let rejoined = if plane == Plane::XYZ { 0 } else { 3 };
        assert_eq!(seen(&mut app), rejoined, "{plane:?}: views made valid should rejoin");
        if plane == Plane::XYZ {
            app.world()
                .entity_mut(both)
                .remove::<ViewRect>()
                .insert(ViewRange::new(5.0));
            app.update();
            assert_eq!(
                seen(&mut app),
                1,
                "in 3D, a radius instead of the rectangle should rejoin"
            );
        }
    }
}
