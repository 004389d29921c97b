//! Lone walkers: a sparse world where most entities walk alone in their cells, whose grid
//! records the index writes lazily (`index/lazy_members.rs`), checked against brute force after
//! every update while others meet them, teleport past them, turn `Always` visible, watch from
//! far and wide, or ask who sees them (`Watchers`, between updates).

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Draws, Rng};

/// What happens around the walkers besides their walk.
#[derive(Clone, Copy)]
struct Events {
    /// Walkers start in pairs heading for each other, and meet and part.
    meet: bool,
    /// A walker teleports next to another one every update.
    teleport: bool,
    /// A walker turns `Always` visible, or back, every few updates.
    always: bool,
    /// A wide observer (radius 400) steps every other update.
    wide: bool,
    /// Every walker carries `Watchers` (the observers that see it, listed between updates).
    watchers: bool,
    /// A crowd of [`CROWD`] walks in a small square among them: the index renumbers its slots.
    crowd: bool,
}

/// Entities in the crowd of [`Events::crowd`].
const CROWD: usize = 900;

/// Walkers in the world.
const WALKERS: usize = 160;
/// Half the side of the square they start in: with radii of 2 to 10 (cells of about 11), most
/// are alone in their cell and the cells around it.
const HALF_SIDE: f32 = 600.0;
/// Updates each run lasts.
const TICKS: usize = 160;

/// One walker: its entity and heading (radians).
struct Walker {
    entity: Entity,
    heading: f32,
}

/// Runs [`TICKS`] updates of [`WALKERS`] walkers with the `events` under `plugin`, a few
/// standing observers among them (so moving targets have clean observers to judge), every
/// update checked against brute force. Walkers step up to 1.2 along their heading; one in eight
/// stands still each update (its record settles, then goes stale as a clean observer). Returns
/// the app and the most grid records an update left stale.
fn walk(plugin: AoiPlugin, seed: u64, events: Events) -> (Checked, usize) {
    let mut app = Checked::new(plugin);
    let mut rng = Rng(seed);
    let mut walkers = Vec::new();
    for i in 0..WALKERS {
        let (mut x, mut y) = (rng.range(-HALF_SIDE, HALF_SIDE), rng.range(-HALF_SIDE, HALF_SIDE));
        let mut heading = rng.range(0.0, core::f32::consts::TAU);
        if events.meet && i % 2 == 1 {
            // Some 20 to 40 ahead of the walker before it, heading back at it.
            let (prev, distance) = (&walkers[i - 1], rng.range(20.0, 40.0));
            let Walker { entity, heading: h } = prev;
            let p = *app
                .world()
                .get::<Position>(*entity)
                .expect("a walker should have a Position");
            (x, y) = (p.x + distance * h.cos(), p.y + distance * h.sin());
            heading = h + core::f32::consts::PI;
        }
        let range = ViewRange::new(rng.range(2.0, 10.0));
        let entity = app.world().spawn((Position::new(x, y), range)).id();
        if events.watchers {
            app.world().entity_mut(entity).insert(Watchers::default());
        }
        walkers.push(Walker { entity, heading });
    }
    if events.crowd {
        for _ in 0..CROWD {
            let p = Position::new(rng.range(-30.0, 30.0), rng.range(300.0, 360.0));
            let heading = rng.range(0.0, core::f32::consts::TAU);
            let entity = app.world().spawn((p, ViewRange::new(rng.range(2.0, 10.0)))).id();
            walkers.push(Walker { entity, heading });
        }
    }
    // Standing observers, clean every update.
    for k in 0..12 {
        let p = Position::new(-500.0 + 90.0 * k as f32, 40.0 * (k % 3) as f32);
        app.world().spawn((p, ViewRange::new(10.0)));
    }
    let wide = events
        .wide
        .then(|| app.world().spawn((Position::new(0.0, 0.0), ViewRange::new(400.0))).id());
    app.update();
    let mut most_stale = 0;
    for tick in 0..TICKS {
        for w in &mut walkers {
            if rng.chance(0.125) {
                continue;
            }
            w.heading += rng.range(-0.3, 0.3);
            let step = rng.range(0.0, 1.2);
            let mut p = app
                .world()
                .get_mut::<Position>(w.entity)
                .expect("a walker should have a Position");
            (p.x, p.y) = (p.x + step * w.heading.cos(), p.y + step * w.heading.sin());
        }
        if events.teleport {
            let (a, b) = (rng.below(walkers.len()), rng.below(walkers.len()));
            let to = *app
                .world()
                .get::<Position>(walkers[b].entity)
                .expect("a walker should have a Position");
            let (dx, dy) = (rng.range(-15.0, 15.0), rng.range(-15.0, 15.0));
            *app.world()
                .get_mut::<Position>(walkers[a].entity)
                .expect("a walker should have a Position") = Position::new(to.x + dx, to.y + dy);
        }
        if events.always && tick % 3 == 0 {
            let w = walkers[rng.below(walkers.len())].entity;
            let mode = if rng.chance(0.5) {
                AoiVisibility::Always
            } else {
                AoiVisibility::Normal
            };
            app.world().entity_mut(w).insert(mode);
        }
        if let Some(wide) = wide.filter(|_| tick % 2 == 0) {
            let mut p = app
                .world()
                .get_mut::<Position>(wide)
                .expect("the wide observer should have a Position");
            p.x += 0.5;
        }
        app.update();
        most_stale = most_stale.max(app.world().resource::<AoiStats>().deferred_grid_writes);
    }
    (app, most_stale)
}

/// Runs [`walk`] with `events` under `plugin` for three seeds, each expected to have opened
/// and closed pairs, and to have left most walkers' records stale in some update if `lazy`, or
/// none after any update if not.
fn walks(plugin: AoiPlugin, events: Events, lazy: bool) {
    for seed in [1, 2, 3] {
        let (app, most_stale) = walk(plugin.clone(), seed, events);
        if lazy {
            assert!(
                most_stale > WALKERS / 2,
                "most walkers should have walked alone with stale records (at most {most_stale} did)"
            );
        } else {
            assert_eq!(most_stale, 0, "no record should have been left stale after an update");
        }
        assert!(
            app.total_enters > 0 && app.total_leaves > 0,
            "walkers should have come into view and left it"
        );
        if events.crowd {
            let renumbers = app.app.world().resource::<AoiStats>().renumbers;
            assert!(renumbers > 0, "the crowd should have made the index renumber its slots");
        }
    }
}

/// [`walks`] under the default plugin, expected to leave records stale.
fn default_walks(events: Events) {
    walks(AoiPlugin::default(), events, true);
}

/// No events: the walkers and the standing observers alone.
const NONE: Events = Events {
    meet: false,
    teleport: false,
    always: false,
    wide: false,
    watchers: false,
    crowd: false,
};

#[test]
fn lone_walkers_alone_match_brute_force() {
    default_walks(NONE);
}

#[test]
fn lone_walkers_that_meet_and_part_match_brute_force() {
    default_walks(Events { meet: true, ..NONE });
}

#[test]
fn lone_walkers_with_teleports_beside_them_match_brute_force() {
    default_walks(Events { teleport: true, ..NONE });
}

#[test]
fn lone_walkers_turning_always_visible_match_brute_force() {
    default_walks(Events { always: true, ..NONE });
}

#[test]
fn lone_walkers_under_a_moving_wide_observer_match_brute_force() {
    default_walks(Events { wide: true, ..NONE });
}

#[test]
fn lone_walkers_watched_between_updates_match_brute_force() {
    default_walks(Events {
        meet: true,
        watchers: true,
        ..NONE
    });
}

#[test]
fn lone_walkers_beside_a_crowd_renumbered_match_brute_force() {
    default_walks(Events {
        meet: true,
        crowd: true,
        ..NONE
    });
}

/// Cells smaller than the views: a view reaches past the cells around its own, so every record
/// is written before the scans.
#[test]
fn lone_walkers_in_cells_smaller_than_their_views_match_brute_force() {
    let small_cells = AoiPlugin {
        cell_size: CellSize::Fixed(6.0),
        ..Default::default()
    };
    walks(small_cells, Events { meet: true, ..NONE }, false);
}

/// An app whose observers step as soon as they move (`flip_scan_min_seen` 0), so that a walker
/// that sees nobody steps as an observer and its record carries its radius.
fn stepping_app() -> Checked {
    let mut app = Checked::new(AoiPlugin::default());
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 0,
        ..Default::default()
    });
    app
}

/// Moves `e` by `(dx, dy)`.
fn move_by(app: &mut Checked, e: Entity, dx: f32, dy: f32) {
    let mut p = app.world().get_mut::<Position>(e).expect("it should have a Position");
    (p.x, p.y) = (p.x + dx, p.y + dy);
}

/// 300 walkers far from everything, stepping 4 an update: past a quarter of a cell of 11.25, so
/// the step limit rises to half a cell.
struct FastWalkers(Vec<Entity>);

impl FastWalkers {
    /// Spawns them along `y = 0` from `x = 10,000`, 20 apart.
    fn spawn(app: &mut Checked) -> Self {
        Self(
            (0..300)
                .map(|i| app.world().spawn(Position::new(10_000.0 + 20.0 * i as f32, 0.0)).id())
                .collect(),
        )
    }

    /// Steps each 4 along `x`.
    fn step(&self, app: &mut Checked) {
        for &f in &self.0 {
            move_by(app, f, 4.0, 0.0);
        }
    }
}

/// A walker whose record was written as it crossed into a lone cell holds its start in the cell
/// it left, and the next update leaves that record stale: a target that jumps from beside the
/// cell left behind searches (its views' reach plus the largest step) two cells around where it
/// started, so it lists the walker's cell, and must leave it out, or it judges the walker where it
/// started the update before. Cells of 11.25 (views of 10), a step limit of half a cell (fast
/// walkers far away), and `flip_scan_min_seen` 0, so the walker steps as an observer and its
/// record carries its radius.
#[test]
fn a_walker_that_crossed_into_a_lone_cell_is_judged_where_it_started_the_update() {
    let mut app = stepping_app();
    let walker = app
        .world()
        .spawn((Position::new(16.75, 8.0), ViewRange::new(10.0)))
        .id();
    let fast = FastWalkers::spawn(&mut app);
    app.update();
    // Within its cell (1, 0), while the fast walkers set the step limit to half a cell.
    fast.step(&mut app);
    move_by(&mut app, walker, 0.0, -4.0);
    app.update();
    let limit = app.world().resource::<AoiStats>().step_limit;
    assert!(limit > 4.5, "the step limit should be half a cell (it is {limit})");
    // Across into the lone cell (1, -1), carried there, its start at (16.75, 4.0); a target
    // arrives in cell (1, 1), 7.3 from that start and two cells from the walker's cell.
    fast.step(&mut app);
    move_by(&mut app, walker, 0.0, -4.5);
    let target = app.world().spawn(Position::new(16.75, 11.3)).id();
    app.update();
    // The walker steps within its cell; the target jumps to cell (3, 0), from 11.8 of the
    // walker's start to 23 of its end: it sees the target at neither.
    fast.step(&mut app);
    move_by(&mut app, walker, 0.0, -0.5);
    *app.world()
        .get_mut::<Position>(target)
        .expect("the target should have a Position") = Position::new(39.4, 5.6);
    app.update();
    assert!(
        !app.opened(walker, target),
        "the walker should never have seen the target"
    );
}

/// The crossing of the test above, seen by a stepping observer: the walker's record, stale in
/// the update after it crossed into a lone cell, holds a start 9.8 from where the observer
/// starts that update, two cells above the walker's. The observer's flip scan reaches past the
/// cells around its own (its radius plus its step and the largest step), so it lists the
/// walker's cell, and must leave it out, or it takes the walker for one it saw at the start.
#[test]
fn a_stepping_observer_two_cells_away_leaves_a_stale_walker_out() {
    let mut app = stepping_app();
    let walker = app
        .world()
        .spawn((Position::new(16.75, 1.5), ViewRange::new(10.0)))
        .id();
    let observer = app
        .world()
        .spawn((Position::new(16.75, 11.3), ViewRange::new(10.0)))
        .id();
    let fast = FastWalkers::spawn(&mut app);
    app.update();
    assert!(
        app.opened(observer, walker),
        "the observer should see the walker 9.8 away"
    );
    fast.step(&mut app);
    app.update();
    let limit = app.world().resource::<AoiStats>().step_limit;
    assert!(limit > 5.0, "the step limit should be half a cell (it is {limit})");
    // Across into cell (1, -1), 14.8 from the observer, stepping (5 is within the limit).
    fast.step(&mut app);
    move_by(&mut app, walker, 0.0, -5.0);
    app.update();
    assert!(!app.opened(observer, walker), "the walker should have left the view");
    // The walker steps within its lone cell, its record left stale (its start at 1.5); the
    // observer steps within cell (1, 1).
    fast.step(&mut app);
    move_by(&mut app, walker, 0.0, -0.5);
    move_by(&mut app, observer, 0.0, 0.5);
    app.update();
    assert!(
        app.world().resource::<AoiStats>().deferred_grid_writes > 0,
        "the walker's record should have been left stale"
    );
    assert!(
        !app.opened(observer, walker),
        "the observer should still not see the walker"
    );
}

/// A walker whose cell had an occupied neighbour at the start of the update is carried into the
/// next cell after that neighbour (first in slot order) jumped away: its cell is lone when it is
/// carried, but its record must be written, or the neighbour's search around where it started
/// (two cells from the walker's new cell) leaves the walker out and misses that it saw the
/// neighbour there. Cells of 11.25 (a view of 10), and a step limit of half a cell (fast walkers
/// far away), so the walker steps.
#[test]
fn a_walker_carried_after_its_neighbour_left_first_is_judged_where_it_started() {
    let mut app = Checked::new(AoiPlugin::default());
    // An observer of the walker's radius: the same archetype, so its slot comes first.
    let neighbour = app.world().spawn((Position::new(11.2, 5.0), ViewRange::new(10.0))).id();
    let walker = app.world().spawn((Position::new(21.0, 5.0), ViewRange::new(10.0))).id();
    let fast = FastWalkers::spawn(&mut app);
    app.update();
    assert!(
        app.opened(walker, neighbour),
        "the walker should see its neighbour 9.8 away"
    );
    fast.step(&mut app);
    app.update();
    let limit = app.world().resource::<AoiStats>().step_limit;
    assert!(limit > 2.0, "the step limit should be half a cell (it is {limit})");
    // The neighbour jumps far away; the walker steps from cell (1, 0) into (2, 0).
    fast.step(&mut app);
    *app.world()
        .get_mut::<Position>(neighbour)
        .expect("the neighbour should have a Position") = Position::new(500.0, 500.0);
    app.world()
        .get_mut::<Position>(walker)
        .expect("the walker should have a Position")
        .x = 23.0;
    app.update();
    assert!(
        !app.opened(walker, neighbour),
        "the walker should have lost sight of its neighbour"
    );
}

/// A walker alone in the world that crosses into the next cell has its cell record carried there
/// and its record left stale, as when it stays in its cell: both updates defer its one write.
#[test]
fn a_lone_walker_crossing_a_cell_border_leaves_its_record_stale() {
    let mut app = Checked::new(AoiPlugin::default());
    let walker = app.world().spawn((Position::new(11.0, 5.0), ViewRange::new(10.0))).id();
    app.update();
    for (x, step) in [(11.1, "within its cell"), (11.4, "across into the next cell")] {
        app.world()
            .get_mut::<Position>(walker)
            .expect("the walker should have a Position")
            .x = x;
        app.update();
        assert_eq!(
            app.world().resource::<AoiStats>().deferred_grid_writes,
            1,
            "a step {step} should leave the walker's record stale"
        );
    }
}

/// A walker whose record is stale when the index renumbers its slots keeps it marked stale under
/// its new number: standing still after, it is written when a target arrives beside its cell,
/// which would otherwise see the walker where its record last put it. The walker (first spawned)
/// walks three updates at the top of the map; a crowd (400 later ones in one cell, a quarter of
/// the map lower) jumps a cell in the fourth, so the index renumbers the crowd first.
/// `flip_scan_min_seen` 0, so the walker steps as an observer and its record carries its radius.
#[test]
fn a_walker_stale_when_slots_are_renumbered_is_written_when_a_target_comes() {
    let mut app = stepping_app();
    let walker = app
        .world()
        .spawn((Position::new(0.5, 2000.0), ViewRange::new(10.0)))
        .id();
    let crowd: Vec<Entity> = (0..400)
        .map(|i| {
            let p = Position::new(1000.0 + (i % 20) as f32 * 0.2, 1000.0 + (i / 20) as f32 * 0.2);
            app.world().spawn(p).id()
        })
        .collect();
    app.update();
    // Its record written at 1.5 (the first move after its arrival), then left stale.
    for _ in 1..=3 {
        app.world()
            .get_mut::<Position>(walker)
            .expect("the walker should have a Position")
            .x += 1.0;
        app.update();
    }
    for &c in &crowd {
        app.world()
            .get_mut::<Position>(c)
            .expect("a crowd member should have a Position")
            .x += 11.25;
    }
    app.update();
    let renumbers = app.world().resource::<AoiStats>().renumbers;
    assert_eq!(renumbers, 1, "the crowd's jump should have renumbered the slots once");
    // Standing at 3.5, it does not see a target at -7.0 (its record's 1.5 would).
    app.world().spawn(Position::new(-7.0, 2000.0));
    app.update();
    assert_eq!(app.total_enters, 0, "the walker should see nobody");
}

/// A walker whose view shrinks as it steps within its lone cell (fixed cells of 6, a view of 10
/// shrunk to 2), then a target that jumps from two cells above it to three cells to its right, all
/// checked against brute force.
#[test]
fn a_walker_whose_view_changes_in_a_lone_cell_is_judged_with_its_new_view() {
    let mut app = Checked::new(AoiPlugin {
        cell_size: CellSize::Fixed(6.0),
        ..Default::default()
    });
    let walker = app.world().spawn((Position::new(5.3, 5.3), ViewRange::new(10.0))).id();
    let target = app.world().spawn(Position::new(6.5, 12.5)).id();
    app.update();
    assert!(app.opened(walker, target), "the walker should see the target 7.1 away");
    // A step: it steps as an observer (it sees someone), its record written.
    *app.world()
        .get_mut::<Position>(walker)
        .expect("the walker should have a Position") = Position::new(5.4, 5.4);
    app.update();
    // A step and a view of 2: it no longer sees the target.
    *app.world()
        .get_mut::<Position>(walker)
        .expect("the walker should have a Position") = Position::new(5.5, 5.5);
    app.world().entity_mut(walker).insert(ViewRange::new(2.0));
    app.update();
    assert!(
        !app.opened(walker, target),
        "the walker should have lost sight of the target"
    );
    *app.world()
        .get_mut::<Position>(target)
        .expect("the target should have a Position") = Position::new(20.0, 3.0);
    app.update();
    assert!(!app.opened(walker, target), "the walker should not see the target");
}

/// A walker whose cell had a neighbour at the start of the update has its record written, though
/// that neighbour, first in slot order, jumps away in the same update: the neighbour's search
/// from where it started reaches the walker's cell, and a stale record would put the walker where
/// the update before started. `flip_scan_min_seen` 0, so the walker steps as an observer and its
/// record carries its radius.
#[test]
fn a_walker_whose_neighbour_left_first_is_judged_where_it_started_the_update() {
    let mut app = stepping_app();
    // The target first, so it moves before the walker in every update.
    let target = app.world().spawn(Position::new(500.0, 500.0)).id();
    let walker = app.world().spawn((Position::new(5.0, 5.0), ViewRange::new(10.0))).id();
    app.update();
    // The walker steps to 5.5; the target arrives in the cell beside, 10.1 away (9.6 from 5.0).
    app.world()
        .get_mut::<Position>(walker)
        .expect("the walker should have a Position")
        .x = 5.5;
    *app.world()
        .get_mut::<Position>(target)
        .expect("the target should have a Position") = Position::new(-4.6, 5.0);
    app.update();
    // The target jumps away, then the walker steps to 6.0: it saw the target at neither end.
    *app.world()
        .get_mut::<Position>(target)
        .expect("the target should have a Position") = Position::new(500.0, 500.0);
    app.world()
        .get_mut::<Position>(walker)
        .expect("the walker should have a Position")
        .x = 6.0;
    app.update();
    assert_eq!(
        (app.total_enters, app.total_leaves),
        (0, 0),
        "the walker should never have seen the target"
    );
}
