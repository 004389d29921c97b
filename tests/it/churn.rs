//! Churn and memory: waves of 100k entities spawned and despawned, and the whole population
//! moved far away and back. The index's memory returns to the level of the first wave (cells,
//! slots and lists are reused), and so do the process's allocated bytes (counted by the test
//! binary's allocator, so the pair engine's buffers, the sets and Bevy's tables count too) once
//! Bevy's message buffers are set aside: a `Messages` keeps two buffers per message type at the
//! largest size they reached (each wave's 1.9 M enters and leaves are ~61 MB a buffer), which
//! is Bevy's to keep, not a leak of the plugin's.
//! Run in release by `.ci/run`:
//!
//! ```text
//! cargo test --release --test it churn -- --ignored --nocapture
//! ```

use std::time::Instant;

use bevy_aoi::prelude::*;
use bevy_app::App;
use bevy_ecs::{message::Messages, prelude::*};

use crate::{Draws, Rng, allocated_bytes, harness::INDEXES};

const WAVE: usize = 100_000;

fn spawn_wave(app: &mut App, rng: &mut Rng) {
    let side = 20.0 * (WAVE as f32).sqrt();
    let batch: Vec<_> = (0..WAVE)
        .map(|i| {
            let p = Position::new(rng.range(0.0, side), rng.range(0.0, side));
            (p, ViewRange::new(if i % 10 == 0 { 100.0 } else { 40.0 }))
        })
        .collect();
    app.world_mut().spawn_batch(batch);
}

fn despawn_all(app: &mut App) {
    let world = app.world_mut();
    let all: Vec<Entity> = world.query_filtered::<Entity, With<Position>>().iter(world).collect();
    for e in all {
        world.despawn(e);
    }
}

/// Moves everyone by `dx` (far away, then back).
fn shift(app: &mut App, dx: f32) {
    let world = app.world_mut();
    for mut p in world.query::<&mut Position>().iter_mut(world) {
        p.x += dx;
    }
}

#[test]
#[ignore = "100k-entity waves: .ci/run runs it in release with -- --ignored"]
fn memory_returns_to_its_level_after_waves_of_churn() {
    for index in INDEXES {
        churn_on(index);
    }
}

/// Eight waves on one index.
fn churn_on(index: IndexKind) {
    let mut app = App::new();
    app.add_plugins(AoiPlugin {
        index,
        ..Default::default()
    });
    app.insert_resource(AoiSettings {
        parallel: false,
        ..Default::default()
    });
    let mut rng = Rng(161);
    let (mut levels, mut process) = (Vec::new(), Vec::new());
    for wave in 0..8 {
        let start = Instant::now();
        spawn_wave(&mut app, &mut rng);
        app.update();
        let spawned = app.world().resource::<AoiStats>().clone();
        assert_eq!(spawned.entities, WAVE, "every spawned entity should be tracked");
        shift(&mut app, 1.0e6);
        app.update();
        shift(&mut app, -1.0e6);
        app.update();
        despawn_all(&mut app);
        // Two updates: the leaves, then the messages' double buffer turning over.
        app.update();
        app.update();
        let stats = app.world().resource::<AoiStats>().clone();
        assert_eq!(
            (stats.entities, stats.observers, stats.cells),
            (0, 0, 0),
            "after despawning everyone the index should hold nothing"
        );
        let level = app.world().aoi_index_bytes();
        let with_messages = allocated_bytes();
        // Nothing reads these messages: fresh buffers drop Bevy's retained capacity.
        app.insert_resource(Messages::<EnterView>::default());
        app.insert_resource(Messages::<LeaveView>::default());
        let without_messages = allocated_bytes();
        println!(
            "churn {index:?} wave {wave}: {WAVE} spawned, moved 1e6 away and back, despawned: {:.2} s, \
             {} cells at peak; the index holds {:.1} MB, the process {:.1} MB ({:.1} MB with Bevy's message buffers)",
            start.elapsed().as_secs_f64(),
            spawned.cells,
            level as f64 / 1e6,
            without_messages as f64 / 1e6,
            with_messages as f64 / 1e6,
        );
        levels.push(level);
        process.push(without_messages);
    }
    // The first wave grows the index's buffers to their working size; later waves reuse them.
    let first = levels[0];
    for (wave, &level) in levels.iter().enumerate().skip(1) {
        assert!(
            level <= first + first / 20,
            "{index:?}: wave {wave} left the index holding {level} bytes, more than 5% over wave 0's {first}: \
             something grows with churn"
        );
    }
    // Bevy's own bookkeeping of freed entities grows once, on the second wave (~6 MB, the same
    // without the plugin): the process's level is the second wave's.
    let second = process[1];
    for (wave, &bytes) in process.iter().enumerate().skip(2) {
        assert!(
            bytes <= second + second / 20,
            "{index:?}: after wave {wave} the process holds {bytes} bytes besides Bevy's message buffers, \
             more than 5% over wave 1's {second}: something outside the index grows with churn"
        );
    }
}
