//! Mixed view radii: a crowd of ordinary observers plus a few (or sixty) wide ones
//! (watchtowers, game-master cameras) that walk, teleport and change radius across classes;
//! every update is checked against brute force.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Draws, INDEXES, Scenario};

/// Radius of the crowd's observers in these scenarios.
const ORDINARY: f32 = 20.0;
/// Radii of the wide observers.
const WIDE: [f32; 6] = [300.0, 300.0, 300.0, 300.0, 900.0, 900.0];

/// A default plugin on `index` and a scenario of `n` entities (the harness's mix of observers,
/// ordinary radius [`ORDINARY`]) spread over `[-scale, scale]`, spawned.
fn crowd(seed: u64, index: IndexKind, scale: f32, n: usize) -> (Checked, Scenario) {
    let mut app = Checked::new(AoiPlugin {
        index,
        ..Default::default()
    });
    let mut sc = Scenario::new(seed, scale, ORDINARY, 0.0, Plane::XY);
    for _ in 0..n {
        sc.spawn(app.world());
    }
    (app, sc)
}

fn run(seed: u64, index: IndexKind) -> Checked {
    let (mut app, mut sc) = crowd(seed, index, 400.0, 250);
    let wide: Vec<Entity> = WIDE
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            let p = Position::new(-300.0 + 120.0 * i as f32, 50.0 * (i % 2) as f32);
            app.world().spawn((p, ViewRange::new(r))).id()
        })
        .collect();
    app.update();
    for tick in 0..150 {
        sc.step(app.world());
        for (i, &w) in wide.iter().enumerate() {
            let step = if i % 2 == 0 { 7.0 } else { -5.0 };
            let mut p = app.world().get_mut::<Position>(w).unwrap();
            p.x = if p.x.abs() > 450.0 {
                -p.x.signum() * 400.0
            } else {
                p.x + step
            };
            p.y += step * 0.5;
        }
        let k = wide[sc.rng.below(wide.len())];
        match tick % 20 {
            // Teleport far away, then back into the crowd.
            3 => app.world().get_mut::<Position>(k).unwrap().x = 1.0e6,
            4 => *app.world().get_mut::<Position>(k).unwrap() = sc.point(),
            // Shrink to an ordinary radius, then grow back (across the classes).
            9 => app.world().get_mut::<ViewRange>(k).unwrap().radius = ORDINARY,
            13 => {
                for (&w, &r) in wide.iter().zip(&WIDE) {
                    app.world().get_mut::<ViewRange>(w).unwrap().radius = r;
                }
            }
            // An ordinary observer of the crowd becomes wide for a while.
            16 => {
                let e = sc.entities[sc.rng.below(sc.entities.len())];
                if let Some(mut r) = app.world().get_mut::<ViewRange>(e) {
                    r.radius = 700.0;
                }
            }
            _ => {}
        }
        app.update();
    }
    app
}

#[test]
fn wide_observers_among_a_crowd_match_brute_force() {
    for (seed, index) in [91, 92, 93].into_iter().flat_map(|s| INDEXES.map(|i| (s, i))) {
        let mut app = run(seed, index);
        let stats = app.world().resource::<AoiStats>().clone();
        assert!(
            stats.wide_observers > 0,
            "the outstanding radii should have been set apart as wide observers"
        );
        assert!(
            stats.cell_side < 4.0 * ORDINARY * 1.5,
            "the automatic cell side should follow the ordinary radii, not the wide ones (is {})",
            stats.cell_side
        );
        assert!(app.total_enters > 1000, "the scenario should produce many enters");
    }
}

/// More wide observers than a few dozen: sixty of radius 200 among a crowd of 1,600 (the
/// scenario's mix of radii, 20 and below mostly), a third of them walking each update (mostly
/// short steps, which wide observers take as flip scans), one teleporting or shrinking to an
/// ordinary radius now and then, all growing back together.
#[test]
fn many_wide_observers_match_brute_force() {
    for (seed, index) in [111].into_iter().flat_map(|s| INDEXES.map(|i| (s, i))) {
        let (mut app, mut sc) = crowd(seed, index, 400.0, 1600);
        let big: Vec<Entity> = (0..60)
            .map(|_| {
                let p = sc.point();
                app.world().spawn((p, ViewRange::new(200.0))).id()
            })
            .collect();
        app.update();
        let mut most_wide = 0;
        for tick in 0..40 {
            sc.step(app.world());
            for (i, &b) in big.iter().enumerate() {
                // Small steps (within the step limit: they take the flip scan) and, now and
                // then, a longer one.
                if (i + tick) % 3 == 0 {
                    let long = (i + tick) % 9 == 0;
                    let mut p = app.world().get_mut::<Position>(b).unwrap();
                    p.x += if long { 4.0 } else { 1.0 };
                    p.y -= if long { 3.0 } else { 0.5 };
                }
            }
            let k = big[sc.rng.below(big.len())];
            match tick % 10 {
                2 => *app.world().get_mut::<Position>(k).unwrap() = sc.point(),
                5 => app.world().get_mut::<ViewRange>(k).unwrap().radius = ORDINARY,
                8 => {
                    for &b in &big {
                        app.world().get_mut::<ViewRange>(b).unwrap().radius = 200.0;
                    }
                }
                _ => {}
            }
            app.update();
            most_wide = most_wide.max(app.world().resource::<AoiStats>().wide_observers);
        }
        assert!(
            most_wide > 64,
            "the radius-200 observers should have been set apart as wide (at most {most_wide} were)"
        );
        assert!(app.total_enters > 1000, "the scenario should produce many enters");
    }
}

/// Unlimited views (`+∞`) and finite radii whose square overflows (`f32::MAX`, `1e30`) among a
/// crowd with rules (layers, hidden, always, instances): they walk, teleport to the ends of `f32`
/// and back, and switch between huge, ordinary and unlimited; targets also jump to the ends of
/// `f32`. Checked against brute force after every update.
#[test]
fn unlimited_and_overflowing_radii_see_their_whole_instance() {
    const HUGE: [f32; 4] = [f32::INFINITY, f32::INFINITY, f32::MAX, 1.0e30];
    const FAR: [f32; 4] = [3.0e38, -3.0e38, 1.0e20, -f32::MAX];
    for (seed, index) in [101, 102, 103].into_iter().flat_map(|s| INDEXES.map(|i| (s, i))) {
        let (mut app, mut sc) = crowd(seed, index, 300.0, 200);
        let huge: Vec<Entity> = HUGE
            .iter()
            .map(|&r| {
                let p = sc.point();
                app.world().spawn((p, ViewRange::new(r))).id()
            })
            .collect();
        app.update();
        let mut unlimited_seen = 0;
        for tick in 0..120 {
            sc.step(app.world());
            sc.step_rules(app.world());
            let k = huge[sc.rng.below(huge.len())];
            match tick % 10 {
                // A huge observer walks, or teleports to the end of `f32` and back.
                0 | 5 => {
                    let mut p = app.world().get_mut::<Position>(k).unwrap();
                    p.x += 3.0;
                }
                2 => app.world().get_mut::<Position>(k).unwrap().x = FAR[sc.rng.below(FAR.len())],
                3 => *app.world().get_mut::<Position>(k).unwrap() = sc.point(),
                // Across the classes: ordinary, then back to huge.
                4 => app.world().get_mut::<ViewRange>(k).unwrap().radius = ORDINARY,
                7 => {
                    for (&h, &r) in huge.iter().zip(&HUGE) {
                        app.world().get_mut::<ViewRange>(h).unwrap().radius = r;
                    }
                }
                // A target of the crowd jumps to the far end of `f32`.
                8 => {
                    let e = sc.entities[sc.rng.below(sc.entities.len())];
                    if let Some(mut p) = app.world().get_mut::<Position>(e) {
                        p.y = FAR[sc.rng.below(FAR.len())];
                    }
                }
                _ => {}
            }
            app.update();
            unlimited_seen += app.world().get::<InterestSet>(huge[0]).map_or(0, InterestSet::len);
        }
        assert!(
            unlimited_seen > 120 * 50,
            "the unlimited observer should see a good part of the crowd (saw {unlimited_seen} over 120 updates)"
        );
    }
}
