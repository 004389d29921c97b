//! Side-by-side report: `bevy_aoi` against the baselines of BENCHMARKS.md on the standard
//! workloads, in one process, printing per-tick medians and ratios as a Markdown table.
//!
//! `cargo bench --bench report` runs everything; `cargo bench --bench report -- uniform10000`
//! runs the scenarios whose name contains the filter; `--quick` runs fewer ticks; `--help` lists
//! the filters (an unknown flag is an error).

mod baselines;
mod workload;

use std::{hash::Hasher, time::Instant};

use bevy_aoi::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};

use baselines::{Lists, PlainGrid};
use workload::{Kind, R, Walkers};

const SEED: u64 = 0x00A0_1234;
/// Ticks run before timing (the first update builds everything).
const WARMUP: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times the AOI app's whole update; returns (median ms, counts, hash of the message stream).
fn time_app(walkers: &Walkers, aoi: bool, parallel: bool, ticks: usize) -> (f64, (usize, usize), u64) {
    time_app_with(walkers, aoi, parallel, false, ticks)
}

/// As [`time_app`], optionally with the realistic mix of layers.
fn time_app_with(
    walkers: &Walkers,
    aoi: bool,
    parallel: bool,
    rules: bool,
    ticks: usize,
) -> (f64, (usize, usize), u64) {
    let mut app = workload::app_with_rules(walkers.clone(), aoi, rules);
    app.insert_resource(AoiSettings {
        parallel,
        ..Default::default()
    });
    let mut enters = MessageCursor::<EnterView>::default();
    let mut leaves = MessageCursor::<LeaveView>::default();
    let mut hasher = std::hash::DefaultHasher::new();
    let mut times = Vec::with_capacity(ticks);
    let mut total = (0, 0);
    for tick in 0..WARMUP + ticks {
        let t = Instant::now();
        app.update();
        let dt = t.elapsed().as_secs_f64() * 1e3;
        if !aoi {
            if tick >= WARMUP {
                times.push(dt);
            }
            continue;
        }
        let world = app.world();
        let (mut e, mut l) = (0, 0);
        for m in enters.read(world.resource::<Messages<EnterView>>()) {
            hasher.write_u64(m.observer.to_bits() ^ m.target.to_bits().rotate_left(32));
            e += 1;
        }
        for m in leaves.read(world.resource::<Messages<LeaveView>>()) {
            hasher.write_u64(!(m.observer.to_bits() ^ m.target.to_bits().rotate_left(32)));
            l += 1;
        }
        if tick >= WARMUP {
            times.push(dt);
            total.0 += e;
            total.1 += l;
        }
    }
    (median(times), total, hasher.finish())
}

struct Row {
    name: String,
    movement: f64,
    aoi1: f64,
    aoi2: f64,
    same_output: bool,
    brute: Option<f64>,
    kd: f64,
    grid: f64,
    floor: f64,
    counts_agree: bool,
}

/// Counts and hashes an app's messages, tick after tick.
#[derive(Default)]
struct Recorder {
    enters: MessageCursor<EnterView>,
    leaves: MessageCursor<LeaveView>,
    hasher: std::hash::DefaultHasher,
    total: (usize, usize),
}

impl Recorder {
    /// Reads the messages of the last update; counts them if `count`.
    fn read(&mut self, app: &bevy_app::App, count: bool) {
        let world = app.world();
        let (mut e, mut l) = (0, 0);
        for m in self.enters.read(world.resource::<Messages<EnterView>>()) {
            self.hasher
                .write_u64(m.observer.to_bits() ^ m.target.to_bits().rotate_left(32));
            e += 1;
        }
        for m in self.leaves.read(world.resource::<Messages<LeaveView>>()) {
            self.hasher
                .write_u64(!(m.observer.to_bits() ^ m.target.to_bits().rotate_left(32)));
            l += 1;
        }
        if count {
            self.total.0 += e;
            self.total.1 += l;
        }
    }
}

/// Runs `f`, returning how long it took in milliseconds and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_secs_f64() * 1e3, out)
}

/// One scenario, every strategy stepped in turn each tick (interleaved), so machine noise hits
/// them alike: the movement-only app, `bevy_aoi` on one and on two threads, then the baselines
/// (kd-tree, plain grid, answer floor, brute force) on the same positions.
fn scenario(kind: Kind, n: usize, ticks: usize, with_brute: bool) -> Row {
    let walkers = Walkers::new(kind, n, SEED);
    let mut apps = [
        workload::app(walkers.clone(), false),
        workload::app(walkers.clone(), true),
        workload::app(walkers.clone(), true),
    ];
    for (app, parallel) in apps[1..].iter_mut().zip([false, true]) {
        app.insert_resource(AoiSettings {
            parallel,
            ..Default::default()
        });
    }
    let mut recorders = [Recorder::default(), Recorder::default()];
    let mut w = walkers.clone();
    let mut pos = Vec::new();
    let (mut kd_lists, mut grid_lists, mut truth, mut brute_lists) =
        (Lists::default(), Lists::default(), Lists::default(), Lists::default());
    let (mut grid, mut filler) = (PlainGrid::default(), PlainGrid::default());
    // Per strategy: times, then (enters, leaves) totals for the baselines.
    let mut times: [Vec<f64>; 7] = Default::default();
    let mut counts = [(0usize, 0usize); 4];
    let mut sink = 0.0;
    for tick in 0..WARMUP + ticks {
        let timing = tick >= WARMUP;
        let mut dt = [0.0; 7];
        for (k, app) in apps.iter_mut().enumerate() {
            dt[k] = timed(|| app.update()).0;
            if k > 0 {
                recorders[k - 1].read(app, timing);
            }
        }
        // The apps move in `Update` before their AOI runs, so the baselines step first too.
        w.step();
        pos.clear();
        pos.extend((0..w.len()).map(|i| w.pos(i)));
        let (t, kd) = timed(|| baselines::kdtree(&pos, &mut kd_lists));
        dt[3] = t;
        let (t, gr) = timed(|| grid.run(&pos, &mut grid_lists));
        dt[4] = t;
        // The true lists are filled untimed; only the walk and the diff are timed.
        filler.fill(&pos, &mut truth);
        let (t, (fe, fl, acc)) = timed(|| baselines::floor(&pos, &mut truth));
        dt[5] = t;
        sink += acc;
        let br = with_brute.then(|| timed(|| baselines::brute(&pos, &mut brute_lists)));
        if let Some((t, _)) = br {
            dt[6] = t;
        }
        if timing {
            for (k, c) in [kd, gr, (fe, fl), br.map_or((0, 0), |b| b.1)].into_iter().enumerate() {
                counts[k].0 += c.0;
                counts[k].1 += c.1;
            }
            for (k, t) in dt.into_iter().enumerate() {
                times[k].push(t);
            }
        }
    }
    std::hint::black_box(sink);
    let [movement, aoi1, aoi2, kd, gridt, floor, brute] = times.map(median);
    let (c1, c2) = (recorders[0].total, recorders[1].total);
    let [ckd, cg, cf, cb] = counts;
    let counts_agree = c1 == c2 && c1 == ckd && c1 == cg && c1 == cf && (!with_brute || cb == c1);
    if !counts_agree {
        eprintln!(
            "count mismatch {}: aoi {c1:?}/{c2:?} kd {ckd:?} grid {cg:?} floor {cf:?} brute {cb:?}",
            kind.name()
        );
    }
    let [h1, h2] = recorders.map(|r| r.hasher.finish());
    Row {
        name: format!("{} {n}", kind.name()),
        movement,
        aoi1: aoi1 - movement,
        aoi2: aoi2 - movement,
        same_output: h1 == h2 && c1 == c2,
        brute: with_brute.then_some(brute),
        kd,
        grid: gridt,
        floor,
        counts_agree,
    }
}

/// What `--help` prints.
const USAGE: &str = "\
Side-by-side report of bevy_aoi against the baselines (Markdown tables on stdout).

Usage: cargo bench --bench report -- [--quick] [FILTER]...

  FILTER   run only the scenarios and groups whose name contains it: the scenarios uniform1000,
           uniform10000, uniform50000, crowded2000, sparse_huge50000, moving550000,
           static50000 (so `uniform` or `sparse` work), the groups rules, mixed, rect,
           contains, index, view_model, scale; none runs everything
  --quick  fewer ticks per scenario
  --help   print this";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    if let Some(bad) = args.iter().find(|a| a.starts_with('-') && *a != "--quick") {
        eprintln!("error: unknown flag `{bad}` (see --help)");
        std::process::exit(2);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let ticks = if quick { 5 } else { 15 };
    let plan = [
        (Kind::Uniform, 1_000, true),
        (Kind::Uniform, 10_000, true),
        (Kind::Uniform, 50_000, true),
        (Kind::Crowded, 2_000, true),
        (Kind::SparseHuge, 50_000, false),
        (Kind::Moving(5), 50_000, false),
        (Kind::Static, 50_000, false),
    ];
    println!(
        "| scenario | movement only | bevy_aoi own (1 thread) | bevy_aoi own (2 threads) | kd-tree rebuild | plain grid | brute force | answer floor | aoi/floor | kd/aoi | grid/aoi | brute/aoi | 1t/2t | same output 1t/2t | counts agree |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (kind, n, brute) in plan {
        let name = format!("{}{n}", kind.name());
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let r = scenario(kind, n, ticks, brute);
        let ms = |v: f64| format!("{v:.3} ms");
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.1} | {:.1} | {} | {:.2} | {} | {} |",
            r.name,
            ms(r.movement),
            ms(r.aoi1),
            ms(r.aoi2),
            ms(r.kd),
            ms(r.grid),
            r.brute.map_or("-".into(), ms),
            ms(r.floor),
            r.aoi1 / r.floor,
            r.kd / r.aoi1,
            r.grid / r.aoi1,
            r.brute.map_or("-".into(), |b| format!("{:.0}", b / r.aoi1)),
            r.aoi1 / r.aoi2,
            r.same_output,
            r.counts_agree,
        );
    }
    if filter.is_empty() || filter.iter().any(|f| "rules".contains(f.as_str())) {
        rules_cost(ticks);
    }
    if filter.is_empty() || filter.iter().any(|f| "mixed".contains(f.as_str())) {
        mixed_cost(ticks);
    }
    if filter.is_empty() || filter.iter().any(|f| "rect".contains(f.as_str())) {
        rect_cost(ticks);
    }
    if filter.is_empty() || filter.iter().any(|f| "contains".contains(f.as_str())) {
        contains_cost();
    }
    if filter.is_empty() || filter.iter().any(|f| "index".contains(f.as_str())) {
        index_cost(ticks);
    }
    if filter.is_empty() || filter.iter().any(|f| "view_model".contains(f.as_str())) {
        view_model_cost(ticks);
        crowd_teleport();
    }
    if filter.is_empty() || filter.iter().any(|f| "scale".contains(f.as_str())) {
        scale_cost(if quick { 3 } else { 5 });
    }
}

/// The two indexes side by side on every workload, one thread: the movement-only, grid and
/// sorted-axes apps are updated in turn every tick; each index's own cost, their ratio, and
/// whether both ended with the same sets. "mixed" adds 10 static observers of radius 1000 to
/// uniform 10k; "3d" gives uniform 10k heights over an eighth of the map side, with
/// `Plane::XYZ`.
fn index_cost(ticks: usize) {
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
                app.insert_resource(AoiSettings {
                    parallel: false,
                    ..Default::default()
                });
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

/// Mixed view radii: uniform 10k at radius 100 plus `k` observers of radius `R_big` (up to
/// unlimited), static or walking, against the same world without them (default plugin
/// settings, one thread; the movement-only, plain and mixed apps are updated in turn every
/// tick).
fn mixed_cost(ticks: usize) {
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
    ] {
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app_mixed(walkers.clone(), k, r_big, walking),
        ];
        for app in &mut apps[1..] {
            app.insert_resource(AoiSettings {
                parallel: false,
                ..Default::default()
            });
        }
        let t = time_interleaved(&mut apps, ticks);
        let (plain, mixed) = (t[1] - t[0], t[2] - t[0]);
        let how = if walking { "walking" } else { "static" };
        println!(
            "| k = {k}, R_big = {r_big}, {how} | {mixed:.3} ms | {plain:.3} ms | {:.2} | ≤ 1.3 |",
            mixed / plain
        );
    }
}

/// Rectangular views (`ViewRect`): uniform 10k where every observer sees a rectangle of the
/// same area as the disc of radius `R` (a square, and a 16:9 screen), against the same world
/// with discs (one thread; the movement-only, disc and rectangle apps are updated in turn).
fn rect_cost(ticks: usize) {
    let n = 10_000;
    let walkers = Walkers::new(Kind::Uniform, n, SEED);
    // Same area as the disc: 4 hw hh = pi R^2.
    let square = R * core::f32::consts::PI.sqrt() / 2.0;
    let (w16, h9) = (square * (16.0f32 / 9.0).sqrt(), square * (9.0f32 / 16.0).sqrt());
    let mut apps = [
        workload::app(walkers.clone(), false),
        workload::app(walkers.clone(), true),
        workload::app_rects(walkers.clone(), [square, square]),
        workload::app_rects(walkers.clone(), [w16, h9]),
    ];
    for app in &mut apps[1..] {
        app.insert_resource(AoiSettings {
            parallel: false,
            ..Default::default()
        });
    }
    let t = time_interleaved(&mut apps, ticks);
    let disc = t[1] - t[0];
    println!();
    println!("| uniform {n}, every observer's view, same area, 1 thread | bevy_aoi own | / disc |");
    println!("|---|---|---|");
    println!("| disc, radius {R} | {disc:.3} ms | 1.00 |");
    for (name, own) in [
        (format!("square, half side {square:.1}"), t[2] - t[0]),
        (format!("16:9, half extents {w16:.1} x {h9:.1}"), t[3] - t[0]),
    ] {
        println!("| {name} | {own:.3} ms | {:.2} |", own / disc);
    }
}

/// The cost of the visibility rules: uniform 10k with 10% players, 80% monsters, 10% items
/// (layers), against the same workload without rules. One thread.
fn rules_cost(ticks: usize) {
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
fn contains_cost() {
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
fn scale_cost(ticks: usize) {
    println!();
    println!("| scale, 1 thread | first update | bevy_aoi own per update | index bytes per entity |");
    println!("|---|---|---|---|");
    for (kind, n, name) in [
        (Kind::Uniform, 200_000, "200k, all moving"),
        (Kind::Moving(1), 1_000_000, "1M, 1% moving"),
    ] {
        let walkers = Walkers::new(kind, n, SEED);
        let mut apps = [workload::app(walkers.clone(), false), workload::app(walkers, true)];
        apps[1].insert_resource(AoiSettings {
            parallel: false,
            ..Default::default()
        });
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

/// The view model's cost: uniform 10k where every observer has one feature (or all three),
/// against the same world without them (one thread; the movement-only, plain and featured apps
/// are updated in turn every tick).
fn view_model_cost(ticks: usize) {
    let n = 10_000;
    let walkers = Walkers::new(Kind::Uniform, n, SEED);
    let hysteresis = ViewHysteresis {
        margin: R * 0.1,
        linger_ticks: 3,
    };
    let tiers = || ViewTiers::new([R / 3.0, R * 2.0 / 3.0]);
    let mut apps = [
        workload::app(walkers.clone(), false),
        workload::app(walkers.clone(), true),
        workload::app(walkers.clone(), true),
        workload::app(walkers.clone(), true),
        workload::app(walkers.clone(), true),
        workload::app(walkers.clone(), true),
    ];
    workload::add_to_observers(&mut apps[2], hysteresis);
    workload::add_to_observers(&mut apps[3], EnterBudget(8));
    workload::add_to_observers(&mut apps[4], tiers());
    workload::add_to_observers(&mut apps[5], (hysteresis, EnterBudget(8), tiers()));
    for app in &mut apps[1..] {
        app.insert_resource(AoiSettings {
            parallel: false,
            ..Default::default()
        });
    }
    let t = time_interleaved(&mut apps, ticks);
    let plain = t[1] - t[0];
    println!();
    println!("| uniform {n}, every observer with, 1 thread | bevy_aoi own | / all off |");
    println!("|---|---|---|");
    println!("| nothing (all off) | {plain:.3} ms | 1.00 |");
    for (name, own) in [
        (format!("ViewHysteresis (margin {}, linger 3)", R * 0.1), t[2] - t[0]),
        ("EnterBudget(8)".to_string(), t[3] - t[0]),
        (format!("ViewTiers [{:.1}, {:.1}]", R / 3.0, R * 2.0 / 3.0), t[4] - t[0]),
        ("all three".to_string(), t[5] - t[0]),
    ] {
        println!("| {name} | {own:.3} ms | {:.2} |", own / plain);
    }
}

/// An observer teleports into a crowd of 2,000 (crowded 2000, everyone within everyone's
/// radius): how many targets enter its view in each of the next updates, with and without an
/// `EnterBudget`.
fn crowd_teleport() {
    let walkers = Walkers::new(Kind::Crowded, 2_000, SEED);
    let side = walkers.side() as f32;
    println!();
    println!(
        "| a visitor teleports into crowded 2000 | enters per update, updates 1, 2, 3, ... | updates until all in | peak enters for it |"
    );
    println!("|---|---|---|---|");
    for budget in [None, Some(500), Some(100)] {
        let mut app = workload::app(walkers.clone(), true);
        let visitor = app
            .world_mut()
            .spawn((Position::new(side * 100.0, side * 100.0), ViewRange::new(R)))
            .id();
        if let Some(b) = budget {
            app.world_mut().entity_mut(visitor).insert(EnterBudget(b));
        }
        for _ in 0..WARMUP {
            app.update();
        }
        *app.world_mut().get_mut::<Position>(visitor).unwrap() = Position::new(side / 2.0, side / 2.0);
        let mut per_update = Vec::new();
        let mut cursor = MessageCursor::<EnterView>::default();
        let world = app.world();
        cursor.read(world.resource::<Messages<EnterView>>()).for_each(drop);
        for _ in 0..40 {
            app.update();
            let world = app.world();
            let enters = cursor.read(world.resource::<Messages<EnterView>>());
            per_update.push(enters.filter(|m| m.observer == visitor).count());
            if world.get::<InterestSet>(visitor).unwrap().waiting() == 0 {
                break;
            }
        }
        let name = budget.map_or("no budget".to_string(), |b| format!("EnterBudget({b})"));
        let first: Vec<String> = per_update.iter().take(8).map(ToString::to_string).collect();
        let more = if per_update.len() > 8 { ", ..." } else { "" };
        println!(
            "| {name} | {}{more} | {} | {} |",
            first.join(", "),
            per_update.len(),
            per_update.iter().max().unwrap_or(&0)
        );
    }
}
