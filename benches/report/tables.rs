//! The report's other tables: the two indexes side by side, mixed radii, fast movers,
//! rectangles, the rules' cost, `InterestSet::contains`, scale and partly moving crowds (each
//! selected by its filter word); the view model's and messages only's are in `view_tables.rs`.

use std::{hash::Hasher, time::Instant};

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use super::{SEED, WARMUP, median, time_app, time_app_with, timed};
use crate::workload::{self, Kind, R, Walkers};

/// The two indexes side by side on every workload, one thread: the movement-only, grid and
/// sorted-axes apps are updated in turn every tick; each index's own cost, their ratio, and
/// whether both ended with the same sets. "mixed" adds 10 static observers of radius 1000 to
/// uniform 10k; "3d" gives uniform 10k heights over an eighth of the map side, with
/// `Plane::XYZ`.
pub(crate) fn index_cost(ticks: usize) {
    println!();
    println!("| workload, 1 thread | grid own | sorted axes own | sorted axes / grid | same sets |");
    println!("|---|---|---|---|---|");
    let plan = [
        ("uniform1000", Kind::Uniform, 1_000),
        ("uniform10000", Kind::Uniform, 10_000),
        ("uniform50000", Kind::Uniform, 50_000),
        ("crowded2000", Kind::Crowded, 2_000),
        ("sparse_huge50000", Kind::SparseHuge, 50_000),
        ("moving5_50000", Kind::Moving(5), 50_000),
        ("static50000", Kind::Static, 50_000),
        ("mixed10000", Kind::Uniform, 10_000),
        ("3d10000", Kind::Uniform, 10_000),
    ];
    for (name, kind, n) in plan {
        let walkers = Walkers::new(kind, n, SEED);
        let side = walkers.side() as f32;
        let (mixed, xyz) = (name.starts_with("mixed"), name.starts_with("3d"));
        let make = |index: Option<IndexKind>| {
            let plugin = index.map(|index| AoiPlugin {
                index,
                plane: if xyz { Plane::XYZ } else { Plane::XY },
                ..Default::default()
            });
            let aoi = plugin.is_some();
            let mut app = workload::app_with_plugin(walkers.clone(), plugin, false);
            if aoi {
                one_thread(core::slice::from_mut(&mut app));
                if mixed {
                    workload::add_towers(&mut app, side, 10, 1000.0, false);
                }
            }
            if xyz {
                workload::lift(&mut app, side);
            }
            app
        };
        let mut apps = [
            make(None),
            make(Some(IndexKind::Grid)),
            make(Some(IndexKind::SortedAxes)),
        ];
        let t = time_interleaved(&mut apps, ticks);
        let (grid, axes) = (t[1] - t[0], t[2] - t[0]);
        let same = sets_digest(&mut apps[1]) == sets_digest(&mut apps[2]);
        println!("| {name} | {grid:.3} ms | {axes:.3} ms | {:.2} | {same} |", axes / grid);
    }
}

/// A digest of every observer's `InterestSet` (in query order, which spawning the same
/// entities the same way makes the same).
fn sets_digest(app: &mut bevy_app::App) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    let world = app.world_mut();
    for (e, set) in world.query::<(Entity, &InterestSet)>().iter(world) {
        hasher.write_u64(e.to_bits());
        set.iter().for_each(|t| hasher.write_u64(t.to_bits()));
        hasher.write_u64(u64::MAX);
    }
    hasher.finish()
}

/// Updates `apps` interleaved (the first moves only; the others, on one thread, run the AOI) and
/// prints a table titled `title`: each AOI app's own cost (its time less the first app's) on the
/// row `rows` names, against the first AOI app's (the column `versus`).
pub(crate) fn own_cost_table(apps: &mut [bevy_app::App], ticks: usize, title: &str, versus: &str, rows: &[String]) {
    one_thread(&mut apps[1..]);
    own_cost_rows(apps, ticks, title, versus, rows);
}

/// [`own_cost_table`] with the apps' AOI settings as they are (two threads by default).
pub(crate) fn own_cost_rows(apps: &mut [bevy_app::App], ticks: usize, title: &str, versus: &str, rows: &[String]) {
    let t = time_interleaved(apps, ticks);
    let base = t[1] - t[0];
    println!();
    println!("| {title} | bevy_aoi own | / {versus} |");
    println!("|---|---|---|");
    for (name, time) in rows.iter().zip(&t[1..]) {
        let own = time - t[0];
        println!("| {name} | {own:.3} ms | {:.2} |", own / base);
    }
}

/// Runs the AOI of each of `apps` on the calling thread only (`AoiSettings::parallel` off).
pub(crate) fn one_thread(apps: &mut [bevy_app::App]) {
    for app in apps {
        app.insert_resource(AoiSettings {
            parallel: false,
            ..Default::default()
        });
    }
}

/// Updates every app once per tick, in turn, timing each; returns each app's median per tick.
fn time_interleaved(apps: &mut [bevy_app::App], ticks: usize) -> Vec<f64> {
    let mut times = vec![Vec::with_capacity(ticks); apps.len()];
    for tick in 0..WARMUP + ticks {
        for (app, times) in apps.iter_mut().zip(&mut times) {
            let t = Instant::now();
            app.update();
            if tick >= WARMUP {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    times.into_iter().map(median).collect()
}

/// Fast movers: uniform 10k whose walkers step farther than the standard 5 a tick (an eighth of
/// the automatic cell side is 14), each world against the standard one, one thread: the two
/// worlds' movement-only and AOI apps are updated in turn every tick. With the step limit that
/// follows the moves (`AoiStats::step_limit`), the fast ones step rather than jump once more
/// than one move in 256 would jump.
pub(crate) fn fast_cost(ticks: usize) {
    let n = 10_000;
    let walkers = |speed: f64, fast: Option<(usize, f64)>| {
        let mut walkers = Walkers::new(Kind::Uniform, n, SEED);
        (walkers.speed, walkers.fast) = (speed, fast);
        walkers
    };
    println!();
    println!("| uniform {n}, 1 thread | bevy_aoi own | everyone at 5 | ratio | step limit / cell side | stepped |");
    println!("|---|---|---|---|---|---|");
    for (name, speed, fast) in [
        ("one in 1,000 at 20 a tick", 5.0, Some((1_000, 20.0))),
        ("one in 50 at 20", 5.0, Some((50, 20.0))),
        ("one in 10 at 20", 5.0, Some((10, 20.0))),
        ("everyone at 15", 15.0, None),
    ] {
        let mut apps = [
            workload::app(walkers(5.0, None), false),
            workload::app(walkers(5.0, None), true),
            workload::app(walkers(speed, fast), false),
            workload::app(walkers(speed, fast), true),
        ];
        one_thread(&mut apps[1..]);
        let t = time_interleaved(&mut apps, ticks);
        let (standard, own) = (t[1] - t[0], t[3] - t[2]);
        let stats = apps[3].world().resource::<AoiStats>();
        println!(
            "| {name} | {own:.3} ms | {standard:.3} ms | {:.2} | {:.3} | {:.1}% |",
            own / standard,
            stats.step_limit / stats.cell_side,
            100.0 * stats.stepped as f64 / stats.changed.max(1) as f64
        );
    }
}

/// Mixed view radii: uniform 10k at radius 100 plus `k` observers of radius `R_big` (up to
/// unlimited; the target's cases, then a hundred of radius 300), static or walking, against the
/// same world without them (default plugin
/// settings, one thread; the movement-only, plain and mixed apps are updated in turn every
/// tick).
pub(crate) fn mixed_cost(ticks: usize) {
    let n = 10_000;
    let walkers = Walkers::new(Kind::Uniform, n, SEED);
    println!();
    println!("| uniform {n} + k observers of radius R_big, 1 thread | bevy_aoi own | without them | ratio | target |");
    println!("|---|---|---|---|---|");
    for (k, r_big, walking) in [
        (10, 1000.0, false),
        (2, 3000.0, false),
        (10, 1000.0, true),
        (2, 3000.0, true),
        // Unlimited views (game masters, spectators): they see all 10k.
        (2, f32::INFINITY, false),
        (2, f32::INFINITY, true),
        // Beyond the targets: a hundred smaller big views (bosses, turrets).
        (100, 300.0, false),
        (100, 300.0, true),
    ] {
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app_mixed(walkers.clone(), k, r_big, walking),
        ];
        one_thread(&mut apps[1..]);
        let t = time_interleaved(&mut apps, ticks);
        let (plain, mixed) = (t[1] - t[0], t[2] - t[0]);
        let how = if walking { "walking" } else { "static" };
        let target = if k <= 10 { "≤ 1.3" } else { "(none)" };
        println!(
            "| k = {k}, R_big = {r_big}, {how} | {mixed:.3} ms | {plain:.3} ms | {:.2} | {target} |",
            mixed / plain
        );
    }
}

/// Rectangular views (`ViewRect`): uniform 10k and 5% moving 50k where every observer sees a
/// rectangle of the same area as the disc of radius `R` (a square, and a 16:9 screen), against
/// the same world with discs (one thread; the movement-only, disc and rectangle apps are updated
/// in turn).
pub(crate) fn rect_cost(ticks: usize) {
    let square = workload::square_half_extent();
    let [w16, h9] = workload::screen_half_extents();
    for (kind, n) in [(Kind::Uniform, 10_000), (Kind::Moving(5), 50_000)] {
        let walkers = Walkers::new(kind, n, SEED);
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app_rects(walkers.clone(), [square, square]),
            workload::app_rects(walkers.clone(), [w16, h9]),
        ];
        own_cost_table(
            &mut apps,
            ticks,
            &format!("{} {n}, every observer's view, same area, 1 thread", kind.name()),
            "disc",
            &[
                format!("disc, radius {R}"),
                format!("square, half side {square:.1}"),
                format!("16:9, half extents {w16:.1} x {h9:.1}"),
            ],
        );
    }
}

/// The cost of the visibility rules: uniform 10k with 10% players, 80% monsters, 10% items
/// (layers), against the same workload without rules. One thread.
pub(crate) fn rules_cost(ticks: usize) {
    let n = 10_000;
    let walkers = Walkers::new(Kind::Uniform, n, SEED);
    let (movement, _, _) = time_app(&walkers, false, false, ticks);
    let (plain, cp, _) = time_app_with(&walkers, true, false, false, ticks);
    let (rules, cr, _) = time_app_with(&walkers, true, false, true, ticks);
    println!();
    println!("| uniform {n}, 1 thread | bevy_aoi own | enters+leaves per tick |");
    println!("|---|---|---|");
    let per_tick = |c: (usize, usize)| (c.0 + c.1) / ticks;
    println!("| no rules | {:.3} ms | {} |", plain - movement, per_tick(cp));
    println!(
        "| layers: 10% players, 80% monsters, 10% items | {:.3} ms | {} |",
        rules - movement,
        per_tick(cr)
    );
    println!("rules / no rules: {:.2}", (rules - movement) / (plain - movement));
}

/// `InterestSet::contains` (a binary search in the sorted set) beside a linear scan of its
/// targets (`iter().any`), on the real sets of uniform 10k (~78 targets) and crowded 2k
/// (~2000), asking for every observer a target it sees and one it does not.
pub(crate) fn contains_cost() {
    println!();
    println!("| sets of | targets per set | `contains` | linear scan | scan / contains |");
    println!("|---|---|---|---|---|");
    for (kind, n) in [(Kind::Uniform, 10_000), (Kind::Crowded, 2_000)] {
        let mut app = workload::app(Walkers::new(kind, n, SEED), true);
        app.update();
        let world = app.world_mut();
        let sets: Vec<InterestSet> = world.query::<&InterestSet>().iter(world).cloned().collect();
        let absent = world.spawn_empty().id();
        let probes: Vec<(usize, Entity)> = sets
            .iter()
            .enumerate()
            .flat_map(|(i, s)| [(i, s.iter().nth(s.len() / 2).unwrap_or(absent)), (i, absent)])
            .collect();
        let average = sets.iter().map(InterestSet::len).sum::<usize>() / sets.len().max(1);
        let time = |f: &dyn Fn(&InterestSet, Entity) -> bool| {
            let runs: Vec<f64> = (0..7)
                .map(|_| {
                    let t = Instant::now();
                    let hits = probes.iter().filter(|&&(i, e)| f(&sets[i], e)).count();
                    std::hint::black_box(hits);
                    t.elapsed().as_secs_f64() * 1e9 / probes.len() as f64
                })
                .collect();
            median(runs)
        };
        let fast = time(&|s, e| s.contains(e));
        let slow = time(&|s, e| s.iter().any(|t| t == e));
        println!(
            "| {} {n} | {average} | {fast:.1} ns | {slow:.1} ns | {:.1} |",
            kind.name(),
            slow / fast
        );
    }
}

/// Scale: 200k entities all moving and 1M entities of which 1% move (uniform density), one
/// thread; per-update time (movement-only and AOI apps updated in turn), the first update, and
/// the index's bytes per entity.
pub(crate) fn scale_cost(ticks: usize) {
    println!();
    println!("| scale, 1 thread | first update | bevy_aoi own per update | index bytes per entity |");
    println!("|---|---|---|---|");
    for (kind, n, name) in [
        (Kind::Uniform, 200_000, "200k, all moving"),
        (Kind::Moving(1), 1_000_000, "1M, 1% moving"),
    ] {
        let walkers = Walkers::new(kind, n, SEED);
        let mut apps = [workload::app(walkers.clone(), false), workload::app(walkers, true)];
        one_thread(&mut apps[1..]);
        let first = timed(|| apps[1].update()).0;
        apps[0].update();
        let t = time_interleaved(&mut apps, ticks);
        let bytes = apps[1].world().aoi_index_bytes();
        println!(
            "| {name} | {first:.0} ms | {:.1} ms | {:.0} |",
            t[1] - t[0],
            bytes as f64 / n as f64
        );
    }
}

/// Partly moving crowds: uniform 50k of which a share walks, the default plugin beside the same
/// with busy cells off (`AoiSettings::busy_cell_share` above 1: the standing observers' pairs
/// with the walkers are judged by the walkers), one thread: the movement-only app and the two
/// AOI apps updated in turn every tick; each AOI app's own cost, their ratio, and whether both
/// ended with the same sets.
pub(crate) fn busy_cost(ticks: usize) {
    println!();
    println!("| uniform 50000, 1 thread | busy cells off, own | default, own | default / off | same sets |");
    println!("|---|---|---|---|---|");
    for percent in [25, 50, 75, 95] {
        let walkers = Walkers::new(Kind::Moving(percent), 50_000, SEED);
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app(walkers, true),
        ];
        one_thread(&mut apps[1..]);
        apps[1].world_mut().resource_mut::<AoiSettings>().busy_cell_share = f32::INFINITY;
        let t = time_interleaved(&mut apps, ticks);
        let (off, on) = (t[1] - t[0], t[2] - t[0]);
        let same = sets_digest(&mut apps[1]) == sets_digest(&mut apps[2]);
        println!(
            "| {percent}% moving | {off:.3} ms | {on:.3} ms | {:.2} | {same} |",
            on / off
        );
    }
}
