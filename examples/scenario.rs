//! Runs one standard benchmark scenario (see `benches/workload.rs`) for a number of ticks and
//! prints the time per tick, so its peak memory can be read with `/usr/bin/time -v`:
//!
//! ```text
//! cargo build --release --example scenario
//! /usr/bin/time -v target/release/examples/scenario --scenario sparse_huge --entities 50000 --ticks 30
//! ```
//!
//! `--no-aoi` runs the movement alone; `--single-thread` turns off the parallel recompute. Scenarios: `uniform`, `crowded`, `sparse_huge`, `static`, `moving5`.

#[path = "../benches/workload.rs"]
mod workload;

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut kind, mut n, mut ticks, mut aoi, mut single) = (workload::Kind::Uniform, 50_000, 30, true, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--scenario" => {
                let s = args.next().unwrap_or_default();
                kind = workload::Kind::parse(&s).unwrap_or_else(|| panic!("unknown scenario {s:?}"));
            }
            "--entities" => {
                n = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--entities takes a number");
            }
            "--ticks" => {
                ticks = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--ticks takes a number");
            }
            "--no-aoi" => aoi = false,
            "--single-thread" => single = true,
            other => panic!("unknown argument {other:?}; see the doc comment of examples/scenario.rs"),
        }
    }
    let mut app = workload::app(workload::Walkers::new(kind, n, 0x00A0_1234), aoi);
    app.insert_resource(bevy_aoi::prelude::AoiSettings {
        parallel: !single,
        ..Default::default()
    });
    let start = Instant::now();
    for _ in 0..ticks {
        app.update();
    }
    let per_tick = start.elapsed().as_secs_f64() * 1e3 / ticks as f64;
    println!(
        "{} {n}: {ticks} ticks, {per_tick:.3} ms per tick (aoi: {aoi})",
        kind.name()
    );
}
