//! A headless game server tick loop: players and monsters wander a square map; a monster wakes
//! when a player enters its view and falls asleep when no player is in view; a few players log
//! out and in every tick. Prints a progress line every `--report-every` ticks and a summary.
//!
//! ```text
//! cargo run --release --example headless_simulation -- --entities 20000 --ticks 300 --seed 7
//! ```
//!
//! Flags: `--entities N` (default 5000), `--ticks T` (300), `--seed S` (1), `--report-every K`
//! (50), `--players-percent P` (10).

use std::time::Instant;

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::prelude::*;

/// View radius of players (what their client is sent).
const PLAYER_VIEW: f32 = 100.0;
/// Aggro radius of monsters.
const MONSTER_VIEW: f32 = 40.0;
/// Units moved per tick.
const SPEED: f32 = 4.0;

#[derive(Component)]
struct Player;

/// A monster's AI state: awake while a player is in its view.
#[derive(Component, Default)]
struct Monster {
    awake: bool,
}

#[derive(Component)]
struct Heading(f32);

#[derive(Resource)]
struct Config {
    side: f32,
    players_percent: u32,
}

/// xorshift64*, enough for wandering.
#[derive(Resource)]
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    }
}

#[derive(Resource, Default)]
struct Stats {
    enters: u64,
    leaves: u64,
    awake: u32,
    wakeups: u64,
}

fn spawn_one(commands: &mut Commands, rng: &mut Rng, cfg: &Config, player: bool) {
    let pos = Position::new(rng.next_f32() * cfg.side, rng.next_f32() * cfg.side);
    let heading = Heading(rng.next_f32() * core::f32::consts::TAU);
    if player {
        commands.spawn((Player, pos, heading, ViewRange::new(PLAYER_VIEW)));
    } else {
        commands.spawn((Monster::default(), pos, heading, ViewRange::new(MONSTER_VIEW)));
    }
}

fn setup(mut commands: Commands, mut rng: ResMut<Rng>, cfg: Res<Config>, args: Res<Args>) {
    for i in 0..args.entities {
        let player = (i % 100) < cfg.players_percent as usize;
        spawn_one(&mut commands, &mut rng, &cfg, player);
    }
}

/// Everyone wanders and bounces off the map edges.
fn wander(mut q: Query<(&mut Position, &mut Heading)>, mut rng: ResMut<Rng>, cfg: Res<Config>) {
    for (mut p, mut h) in &mut q {
        if rng.next_f32() < 0.05 {
            h.0 = rng.next_f32() * core::f32::consts::TAU;
        }
        let (x, y) = (p.x + SPEED * h.0.cos(), p.y + SPEED * h.0.sin());
        if !(0.0..=cfg.side).contains(&x) || !(0.0..=cfg.side).contains(&y) {
            h.0 += core::f32::consts::PI;
        } else {
            *p = Position::new(x, y);
        }
    }
}

/// A few players log out (despawn) and as many log in, so sets see churn every tick.
fn churn(mut commands: Commands, players: Query<Entity, With<Player>>, mut rng: ResMut<Rng>, cfg: Res<Config>) {
    for e in &players {
        if rng.next_f32() < 0.002 {
            commands.entity(e).despawn();
            spawn_one(&mut commands, &mut rng, &cfg, true);
        }
    }
}

/// Monster AI reacting to AOI messages, in the same frame, right after the AOI: a monster whose
/// view changed re-checks its (exact) `InterestSet` for players.
fn monster_ai(
    mut enters: MessageReader<EnterView>,
    mut leaves: MessageReader<LeaveView>,
    mut monsters: Query<(&mut Monster, &InterestSet)>,
    players: Query<(), With<Player>>,
    mut stats: ResMut<Stats>,
) {
    let mut changed: Vec<Entity> = enters.read().map(|e| e.observer).collect();
    let entered = changed.len();
    changed.extend(leaves.read().map(|l| l.observer));
    stats.enters += entered as u64;
    stats.leaves += (changed.len() - entered) as u64;
    for observer in changed {
        // LeaveView may name a despawned observer (a player who logged out): `get_mut` skips it.
        let Ok((mut monster, sees)) = monsters.get_mut(observer) else {
            continue;
        };
        let awake = sees.iter().any(|t| players.contains(t));
        if awake != monster.awake {
            monster.awake = awake;
            if awake {
                stats.awake += 1;
                stats.wakeups += 1;
            } else {
                stats.awake -= 1;
            }
        }
    }
}

#[derive(Resource)]
struct Args {
    entities: usize,
    ticks: usize,
    seed: u64,
    report_every: usize,
    players_percent: u32,
}

fn parse_args() -> Args {
    let mut args = Args {
        entities: 5000,
        ticks: 300,
        seed: 1,
        report_every: 50,
        players_percent: 10,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let num = || -> u64 {
            value
                .parse()
                .unwrap_or_else(|_| panic!("{flag} takes a whole number, got {value:?}"))
        };
        match flag.as_str() {
            "--entities" => args.entities = num() as usize,
            "--ticks" => args.ticks = num() as usize,
            "--seed" => args.seed = num(),
            "--report-every" => args.report_every = (num() as usize).max(1),
            "--players-percent" => args.players_percent = num().min(100) as u32,
            _ => panic!("unknown flag {flag}; see the doc comment of examples/headless_simulation.rs"),
        }
    }
    args
}

fn main() {
    let args = parse_args();
    // One entity per 400 square units, as in the benchmarks.
    let side = 20.0 * (args.entities as f32).sqrt();
    let (ticks, report_every) = (args.ticks, args.report_every);
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default())
        .insert_resource(Config {
            side,
            players_percent: args.players_percent,
        })
        .insert_resource(Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1))
        .insert_resource(args)
        .init_resource::<Stats>()
        .add_systems(Startup, setup)
        .add_systems(Update, (wander, churn).chain())
        .add_systems(PostUpdate, monster_ai.after(AoiSystems::Last));

    println!("tick | enters | leaves | mean interest | awake monsters | ms/tick");
    let start = Instant::now();
    let mut window = Instant::now();
    let mut last = (0, 0);
    for tick in 1..=ticks {
        app.update();
        if tick % report_every == 0 || tick == ticks {
            let world = app.world_mut();
            let mut sets = world.query::<&InterestSet>();
            let (count, total) = sets
                .iter(world)
                .fold((0usize, 0usize), |(c, t), s| (c + 1, t + s.len()));
            let stats = world.resource::<Stats>();
            let ms = window.elapsed().as_secs_f64() * 1e3 / report_every as f64;
            println!(
                "{tick:>4} | {:>6} | {:>6} | {:>13.1} | {:>14} | {ms:>7.2}",
                stats.enters - last.0,
                stats.leaves - last.1,
                total as f64 / count.max(1) as f64,
                stats.awake,
            );
            last = (stats.enters, stats.leaves);
            window = Instant::now();
        }
    }
    let world = app.world_mut();
    let mut sets = world.query::<&InterestSet>();
    let pairs: usize = sets.iter(world).map(InterestSet::len).sum();
    let stats = world.resource::<Stats>();
    println!(
        "summary: {ticks} ticks in {:.2} s ({:.2} ms/tick), {} enters, {} leaves, {} monster wake-ups; \
         enters - leaves = {} = visible pairs now {}: {}",
        start.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64() * 1e3 / ticks as f64,
        stats.enters,
        stats.leaves,
        stats.wakeups,
        stats.enters - stats.leaves,
        pairs,
        if stats.enters - stats.leaves == pairs as u64 {
            "balanced"
        } else {
            "UNBALANCED"
        },
    );
}
