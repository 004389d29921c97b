//! Side-by-side report: `bevy_aoi` against the baselines of BENCHMARKS.md on the standard
//! workloads, in one process, printing per-tick medians and ratios as a Markdown table.
//!
//! `cargo bench --bench report` runs everything; `cargo bench --bench report -- uniform10000`
//! runs the scenarios whose name contains the filter; `--quick` runs fewer ticks;
//! `--pin-threads` pins each compute thread to a CPU of its own (`threads.rs`); `--help` lists
//! the filters (an unknown flag is an error).

mod baselines;
#[path = "report/tables.rs"]
mod tables;
mod threads;
#[path = "report/view_tables.rs"]
mod view_tables;
mod workload;

use std::{hash::Hasher, time::Instant};

use bevy_aoi::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};

use baselines::{Lists, PlainGrid};
use tables::{busy_cost, contains_cost, fast_cost, index_cost, mixed_cost, rect_cost, rules_cost, scale_cost};
use view_tables::{crowd_teleport, messages_only_cost, view_model_cost};
use workload::{Kind, Walkers};

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

/// Updates each of `apps` once, in turn, timing each into `dt`; the messages of the AOI apps (all
/// but the first) go to `recorders`, counted when `count`.
fn update_in_turn(apps: &mut [bevy_app::App], recorders: &mut [Recorder], count: bool, dt: &mut [f64]) {
    for (k, app) in apps.iter_mut().enumerate() {
        dt[k] = timed(|| app.update()).0;
        if k > 0 {
            recorders[k - 1].read(app, count);
        }
    }
}

/// Steps the baselines' copy of the walkers and writes their positions to `pos`.
fn step_positions(w: &mut Walkers, pos: &mut Vec<[f32; 2]>) {
    w.step();
    pos.clear();
    pos.extend((0..w.len()).map(|i| w.pos(i)));
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
        update_in_turn(&mut apps, &mut recorders, timing, &mut dt);
        // The apps move in `Update` before their AOI runs, so the baselines step first too.
        step_positions(&mut w, &mut pos);
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

Usage: cargo bench --bench report -- [--quick] [--pin-threads] [FILTER]...

  FILTER   run only the scenarios and groups whose name contains it: the scenarios uniform1000,
           uniform10000, uniform50000, crowded2000, sparse_huge50000, moving550000,
           static50000 (so `uniform` or `sparse` work), the groups rules, mixed, fast,
           rect, contains, index, view_model, scale, messages_only, busy; none
           runs everything
  --quick        fewer ticks per scenario
  --pin-threads  pin each of the two compute threads to a CPU of its own (Linux; see
                 benches/threads.rs for why)
  --help         print this";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let flags = ["--quick", "--pin-threads"];
    if let Some(bad) = args.iter().find(|a| a.starts_with('-') && !flags.contains(&a.as_str())) {
        eprintln!("error: unknown flag `{bad}` (see --help)");
        std::process::exit(2);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let pin = args.iter().any(|a| a == "--pin-threads");
    threads::start_compute_pool(2, pin);
    println!(
        "Two compute threads, {}.\n",
        if pin { "each pinned to a CPU" } else { "not pinned" }
    );
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
    let selected = |kind: Kind, n: usize| {
        let name = format!("{}{n}", kind.name());
        filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()))
    };
    if plan.iter().any(|&(kind, n, _)| selected(kind, n)) {
        println!(
            "| scenario | movement only | bevy_aoi own (1 thread) | bevy_aoi own (2 threads) | kd-tree rebuild | plain grid | brute force | answer floor | aoi/floor | kd/aoi | grid/aoi | brute/aoi | 1t/2t | same output 1t/2t | counts agree |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    }
    for (kind, n, brute) in plan {
        if !selected(kind, n) {
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
    if filter.is_empty() || filter.iter().any(|f| "fast".contains(f.as_str())) {
        fast_cost(ticks);
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
    if filter.is_empty() || filter.iter().any(|f| "messages_only".contains(f.as_str())) {
        messages_only_cost(ticks);
    }
    if filter.is_empty() || filter.iter().any(|f| "busy".contains(f.as_str())) {
        busy_cost(ticks);
    }
}
