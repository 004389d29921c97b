//! Divan benches of one `app.update()` on the standard workloads (BENCHMARKS.md), with the AOI
//! and with movement only, so the AOI's own cost is the difference. The side-by-side report
//! with baselines and ratios is `benches/report.rs`.
//!
//! `cargo bench --bench aoi`

mod workload;

use divan::Bencher;
use workload::{Kind, Walkers};

const SEED: u64 = 0x00A0_1234;
/// Updates run before timing (the first one builds the index).
const WARMUP: usize = 3;
const UNIFORM_SIZES: [usize; 3] = [1_000, 10_000, 50_000];

fn main() {
    divan::main();
}

fn run(bencher: Bencher, kind: Kind, n: usize, aoi: bool) {
    let mut app = workload::app(Walkers::new(kind, n, SEED), aoi);
    for _ in 0..WARMUP {
        app.update();
    }
    bencher.bench_local(|| app.update());
}

#[divan::bench(args = UNIFORM_SIZES, sample_count = 20, sample_size = 1)]
fn uniform(bencher: Bencher, n: usize) {
    run(bencher, Kind::Uniform, n, true);
}

#[divan::bench(args = UNIFORM_SIZES, sample_count = 20, sample_size = 1)]
fn uniform_movement_only(bencher: Bencher, n: usize) {
    run(bencher, Kind::Uniform, n, false);
}

#[divan::bench(args = [2_000], sample_count = 20, sample_size = 1)]
fn crowded(bencher: Bencher, n: usize) {
    run(bencher, Kind::Crowded, n, true);
}

#[divan::bench(args = [50_000], sample_count = 20, sample_size = 1)]
fn sparse_huge(bencher: Bencher, n: usize) {
    run(bencher, Kind::SparseHuge, n, true);
}

#[divan::bench(args = [50_000], sample_count = 20, sample_size = 1)]
fn moving_5_percent(bencher: Bencher, n: usize) {
    run(bencher, Kind::Moving(5), n, true);
}

#[divan::bench(args = [50_000], sample_count = 20, sample_size = 1)]
fn static_world(bencher: Bencher, n: usize) {
    run(bencher, Kind::Static, n, true);
}
