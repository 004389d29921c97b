//! Runs one standard benchmark scenario (see `benches/workload.rs`) for a number of ticks and
//! prints the time per tick, so its peak memory can be read with `/usr/bin/time -v`:
//!
//! ```text
//! cargo build --release --example scenario
//! /usr/bin/time -v target/release/examples/scenario --scenario sparse_huge --entities 50000 --ticks 30
//! ```
//!
//! `--help` lists the flags: `--scenario` (`uniform`, `crowded`, `sparse_huge`, `static`,
//! `moving5`), `--entities`, `--ticks`, `--no-aoi` (movement only), `--single-thread`, `--index`,
//! `--no-sets` (`AoiPlugin::interest_sets` `false`), `--rules` (the report's mix of players,
//! monsters and items in layers), view-model features on every observer (`--hysteresis MARGIN`,
//! `--budget N`, `--tiers`, `--tier-thresholds N`), rectangles for discs (`--rect`), the mixed-radii workload's big observers
//! (`--towers K --tower-radius R`, standing, or walking with `--towers-walk`), the `Watched` marker
//! counted by every observer (`--watched`), `Watchers` on some observers (`--watchers N`),
//! `Always`-visible beacons (`--always N`, standing, or walking with `--always-walk`); and between
//! updates, untimed, `--evict-mib N` (the data pushed out of the caches, as the bench report's
//! baselines also do) and `--pause-ms N` (a sleep, as a server's between ticks); `--pin-threads`
//! pins each compute thread to a CPU of its own.

#[path = "../benches/threads.rs"]
mod threads;
#[path = "../benches/workload.rs"]
mod workload;

use std::time::Instant;

use bevy_aoi::prelude::{
    AoiLayers, AoiPlugin, EnterBudget, IndexKind, ViewHysteresis, ViewTiers, WatchedRule, Watchers,
};
use clap::Parser;

#[path = "common/cli.rs"]
mod cli;

/// Runs one standard benchmark scenario and prints the time per tick (for `/usr/bin/time -v`).
#[derive(Parser)]
struct Args {
    /// Scenario: `uniform`, `crowded`, `sparse_huge`, `static`, or `movingP` (P percent of
    /// entities move).
    #[arg(long, default_value = "uniform", value_parser = parse_kind)]
    scenario: workload::Kind,
    /// Number of entities.
    #[arg(long, default_value_t = 50_000)]
    entities: usize,
    /// Number of ticks to run.
    #[arg(long, default_value_t = 30)]
    ticks: usize,
    /// Run the movement alone, without the AOI.
    #[arg(long)]
    no_aoi: bool,
    /// Turn off the parallel recompute.
    #[arg(long)]
    single_thread: bool,
    /// `AoiSettings::flip_scan_min_seen`: stepping observers seeing at least this many targets
    /// take the flip scan.
    #[arg(long, default_value_t = bevy_aoi::prelude::AoiSettings::default().flip_scan_min_seen)]
    flip_scan_min_seen: usize,
    /// `AoiSettings::busy_cell_share`: the standing observers of cells where at least this share
    /// of the entities changed take the flip scan too.
    #[arg(long, default_value_t = bevy_aoi::prelude::AoiSettings::default().busy_cell_share)]
    busy_cell_share: f32,
    /// The index: `grid` or `sorted-axes`.
    #[arg(long, default_value = "grid")]
    index: IndexKind,
    /// Keep no `InterestSet`s (`AoiPlugin::interest_sets` `false`): the messages only.
    #[arg(long)]
    no_sets: bool,
    /// The realistic mix of layers (the report's `rules` workload): 10% players seeing
    /// everything, 80% monsters seeing players, 10% items seeing nothing.
    #[arg(long)]
    rules: bool,
    /// Every observer gets a `ViewHysteresis` with this margin (linger 3 ticks).
    #[arg(long)]
    hysteresis: Option<f32>,
    /// Every observer gets an `EnterBudget` of this many enters per tick.
    #[arg(long)]
    budget: Option<u32>,
    /// Every observer gets `ViewTiers` at a third and two thirds of its radius (or as
    /// `--tier-thresholds` says).
    #[arg(long)]
    tiers: bool,
    /// With `--tiers`, this many thresholds instead, spread evenly within the radius.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..))]
    tier_thresholds: u8,
    /// Every observer sees a 16:9 `ViewRect` of the same area as its disc instead (after the
    /// view-model flags above are applied).
    #[arg(long)]
    rect: bool,
    /// Adds this many big observers spread over the map (the mixed-radii workload's).
    #[arg(long, default_value_t = 0)]
    towers: usize,
    /// The big observers' radius.
    #[arg(long, default_value_t = 1000.0)]
    tower_radius: f32,
    /// The big observers walk 5 units a tick (else they stand).
    #[arg(long)]
    towers_walk: bool,
    /// Adds this many `Always`-visible entities spread over the map (beacons every observer sees
    /// at any distance), standing unless `--always-walk`.
    #[arg(long, default_value_t = 0)]
    always: usize,
    /// The beacons walk 5 units a tick (else they stand).
    #[arg(long)]
    always_walk: bool,
    /// Keeps the `Watched` marker (`AoiPlugin::watched`) with every observer counting (the
    /// feature's worst case: a count per message).
    #[arg(long)]
    watched: bool,
    /// Gives this many observers `Watchers` (who sees them; each costs an edit per message of
    /// its own, and every message a bit test).
    #[arg(long, default_value_t = 0)]
    watchers: usize,
    /// `AoiPlugin::cell_size`: a fixed cell side in world units (`CellSize::Auto` without it).
    #[arg(long, value_parser = parse_side)]
    cell_size: Option<f32>,
    /// Reads and writes this many MiB between updates, untimed, so that each update finds its
    /// data out of the caches (as the bench report's baselines also leave it; a sleep,
    /// `--pause-ms`, comes nearer the report's slowdown).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(..=16384))]
    evict_mib: u32,
    /// Sleeps this many milliseconds between updates, untimed (as a server between ticks).
    #[arg(long, default_value_t = 0)]
    pause_ms: u64,
    /// Pins each thread of Bevy's compute pool (one per CPU) to a CPU of its own (Linux; see
    /// `benches/threads.rs` for why).
    #[arg(long)]
    pin_threads: bool,
}

fn parse_kind(s: &str) -> Result<workload::Kind, String> {
    workload::Kind::parse(s)
        .ok_or_else(|| format!("unknown scenario {s:?} (uniform, crowded, sparse_huge, static, movingP)"))
}

fn parse_side(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        // The range `AoiPlugin` accepts (it panics at build time outside it).
        Ok(side) if (1.0e-3..=1.0e12).contains(&side) => Ok(side),
        _ => Err(format!("{s:?} is not a cell side (world units, from 0.001 to 1e12)")),
    }
}

fn main() {
    let args: Args = cli::parse_or_exit();
    if args.pin_threads {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        threads::start_compute_pool(cpus, true);
    }
    let aoi = !args.no_aoi;
    let walkers = workload::Walkers::new(args.scenario, args.entities, 0x00A0_1234);
    let side = walkers.side() as f32;
    let plugin = AoiPlugin {
        index: args.index,
        interest_sets: !args.no_sets,
        cell_size: args
            .cell_size
            .map_or(bevy_aoi::prelude::CellSize::Auto, bevy_aoi::prelude::CellSize::Fixed),
        watched: args.watched.then_some(WatchedRule {
            by_layers: AoiLayers::ALL,
            linger_ticks: 30,
        }),
        ..Default::default()
    };
    let mut app = workload::app_with_plugin(walkers, aoi.then_some(plugin), args.rules);
    if let Some(margin) = args.hysteresis {
        let linger_ticks = 3;
        workload::add_to_observers(&mut app, ViewHysteresis { margin, linger_ticks });
    }
    if let Some(budget) = args.budget {
        workload::add_to_observers(&mut app, EnterBudget(budget));
    }
    if args.tiers {
        let n = f32::from(args.tier_thresholds);
        let thresholds = (1..=args.tier_thresholds).map(|k| workload::R * f32::from(k) / (n + 1.0));
        workload::add_to_observers(&mut app, ViewTiers::new(thresholds));
    }
    if args.rect {
        workload::to_rects(&mut app, workload::screen_half_extents());
    }
    if args.watchers > 0 {
        workload::add_to_first_observers(&mut app, args.watchers, Watchers::default());
    }
    if args.always > 0 {
        workload::add_beacons(&mut app, side, args.always, args.always_walk);
    }
    if args.towers > 0 {
        workload::add_towers(&mut app, side, args.towers, args.tower_radius, args.towers_walk);
    }
    app.insert_resource(bevy_aoi::prelude::AoiSettings {
        parallel: !args.single_thread,
        flip_scan_min_seen: args.flip_scan_min_seen,
        busy_cell_share: args.busy_cell_share,
        ..Default::default()
    });
    let mut evict = vec![0u8; (args.evict_mib as usize) << 20];
    let mut times = Vec::with_capacity(args.ticks);
    for _ in 0..args.ticks {
        if !evict.is_empty() {
            // A load and a store a cache line (a `fill` becomes a `memset` whose non-temporal
            // stores pass the caches by).
            for line in evict.chunks_mut(64) {
                line[0] = line[0].wrapping_add(1);
            }
            std::hint::black_box(&mut evict);
        }
        if args.pause_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(args.pause_ms));
        }
        let t = Instant::now();
        app.update();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let per_tick = times.iter().sum::<f64>() / args.ticks as f64;
    // The first update builds everything; the steady state is the median of the others.
    let mut steady = times.get(1..).unwrap_or_default().to_vec();
    steady.sort_by(f64::total_cmp);
    let median = steady.get(steady.len() / 2).copied().unwrap_or(per_tick);
    println!(
        "{} {}: {} ticks, {per_tick:.3} ms per tick, first {:.3} ms, steady median {median:.3} ms (aoi: {aoi})",
        args.scenario.name(),
        args.entities,
        args.ticks,
        times.first().copied().unwrap_or_default(),
    );
}
