//! A headless game server tick loop with the classic MMO visibility rules: players (2%),
//! monsters (88%) and items (10%) on a square map. Players see everything; monsters see players
//! (aggro) but not items; items see nothing. A monster's AI (here: wandering) runs only while it
//! is `Watched` by a player, and sleeps 30 ticks after the last player leaves. A few players log
//! out and in every tick. Prints a progress line every `--report-every` ticks and a summary.
//!
//! ```text
//! cargo run --release --example headless_simulation -- --entities 20000 --ticks 300 --seed 7
//! ```
//!
//! Flags (`--help` lists them; a bad flag prints one line and exits 2): `--entities N` (default
//! 5000), `--ticks T` (300), `--seed S` (1), `--report-every K` (50), `--svg FILE` (write a
//! picture of the last tick: cells, entities by kind, three players' views, watched monsters),
//! `--screens` (players see a 16:9 `ViewRect` of the same area instead of a radius),
//! `--game-masters N` (N hidden cameras with `ViewRange::unlimited()` at the centre), and the
//! players' view model: `--hysteresis M` (a target leaves only `M` units beyond the view,
//! `ViewHysteresis`) with `--linger T` (after `T` ticks out there), `--budget N` (at most `N`
//! enters per tick, nearest first, `EnterBudget`), `--tiers` (near/middle/far rings,
//! `ViewTiers`: near targets are replicated every tick, middle ones every 4th, far ones every
//! 16th). The summary says what they changed: messages avoided, targets waiting, tier changes,
//! replication sends; and it counts the messages by reason (`EnterReason`, `LeaveReason`).
//!
//! ```text
//! cargo run --release --example headless_simulation -- --entities 2000 --ticks 100 --svg aoi.svg
//! ```

use std::time::Instant;

use clap::Parser;

#[path = "common/cli.rs"]
mod cli;
#[path = "common/rng.rs"]
mod rng;
#[path = "common/svg.rs"]
mod svg;

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::prelude::*;
use rng::Rng;

const PLAYER: u32 = 1 << 0;
const MONSTER: u32 = 1 << 1;
const ITEM: u32 = 1 << 2;
/// View radius of players (what their client is sent).
const PLAYER_VIEW: f32 = 100.0;
/// Aggro radius of monsters.
const MONSTER_VIEW: f32 = 40.0;
/// Units moved per tick.
const SPEED: f32 = 4.0;
/// Ticks a monster stays awake after the last player stops seeing it.
const AI_LINGER: u32 = 30;

#[derive(Component)]
struct Player;

#[derive(Component)]
struct Monster;

/// A game master's camera: an unlimited view, hidden from everyone.
#[derive(Component)]
struct GameMaster;

#[derive(Component)]
struct Heading(f32);

#[derive(Resource)]
struct Side(f32);

#[derive(Resource, Default)]
struct Stats {
    enters: u64,
    leaves: u64,
    aggro: u64,
    wakeups: u64,
    /// Held targets that came back within view: each avoided a leave and an enter.
    returned: u64,
    tier_changes: u64,
    /// Most targets waiting for an enter budget in one tick.
    peak_waiting: usize,
    /// Replication sends by tier cadence, and what sending every target every tick would be.
    sends: u64,
    sends_every_tick: u64,
    /// Messages by reason.
    enter_reasons: std::collections::BTreeMap<EnterReason, u64>,
    leave_reasons: std::collections::BTreeMap<LeaveReason, u64>,
}

/// Ticks between replications of a target in each tier: near, middle, far.
const TIER_CADENCE: [u64; 3] = [1, 4, 16];

fn spawn_player(commands: &mut Commands, rng: &mut Rng, side: f32, args: &Args) {
    let screens = args.screens;
    let pos = Position::new(rng.next_f32() * side, rng.next_f32() * side);
    let heading = Heading(rng.next_f32() * core::f32::consts::TAU);
    let layers = AoiLayers::new(PLAYER, PLAYER | MONSTER | ITEM);
    // Players broadcast their moves to whoever sees them: they keep a `Watchers` set.
    let mut player = commands.spawn((Player, pos, heading, layers, Watchers::default()));
    if screens {
        // A 16:9 screen of the same area as the disc: 4 hw hh = pi r^2.
        let half_side = PLAYER_VIEW * core::f32::consts::PI.sqrt() / 2.0;
        player.insert(ViewRect::new(half_side * 4.0 / 3.0, half_side * 3.0 / 4.0));
    } else {
        player.insert(ViewRange::new(PLAYER_VIEW));
    }
    if let Some(margin) = args.hysteresis {
        player.insert(ViewHysteresis {
            margin,
            linger_ticks: args.linger,
        });
    }
    if let Some(budget) = args.budget {
        player.insert(EnterBudget(budget));
    }
    if args.tiers {
        // Near, middle and far thirds of the view (of the half height for a screen).
        let third = if screens {
            PLAYER_VIEW * 0.6 / 3.0
        } else {
            PLAYER_VIEW / 3.0
        };
        player.insert(ViewTiers::new([third, 2.0 * third]));
    }
}

fn setup(mut commands: Commands, mut rng: ResMut<Rng>, side: Res<Side>, args: Res<Args>) {
    for _ in 0..args.game_masters {
        let centre = Position::new(side.0 / 2.0, side.0 / 2.0);
        let layers = AoiLayers::new(0, PLAYER | MONSTER);
        commands.spawn((
            GameMaster,
            centre,
            ViewRange::unlimited(),
            layers,
            AoiVisibility::Hidden,
        ));
    }
    for i in 0..args.entities {
        let pos = Position::new(rng.next_f32() * side.0, rng.next_f32() * side.0);
        let heading = Heading(rng.next_f32() * core::f32::consts::TAU);
        match i % 50 {
            0 => spawn_player(&mut commands, &mut rng, side.0, &args),
            1..=5 => {
                commands.spawn((pos, AoiLayers::new(ITEM, 0)));
            }
            _ => {
                let layers = AoiLayers::new(MONSTER, PLAYER);
                commands.spawn((Monster, pos, heading, ViewRange::new(MONSTER_VIEW), layers));
            }
        }
    }
}

fn step(p: &mut Position, h: &mut Heading, rng: &mut Rng, side: f32) {
    if rng.next_f32() < 0.05 {
        h.0 = rng.next_f32() * core::f32::consts::TAU;
    }
    let (x, y) = (p.x + SPEED * h.0.cos(), p.y + SPEED * h.0.sin());
    if !(0.0..=side).contains(&x) || !(0.0..=side).contains(&y) {
        h.0 += core::f32::consts::PI;
    } else {
        *p = Position::new(x, y);
    }
}

/// Players always move.
fn move_players(mut q: Query<(&mut Position, &mut Heading), With<Player>>, mut rng: ResMut<Rng>, side: Res<Side>) {
    for (mut p, mut h) in &mut q {
        step(&mut p, &mut h, &mut rng, side.0);
    }
}

/// Monsters whose AI runs: those the `Watched` marker is on.
type AwakeMonster = (With<Monster>, With<Watched>);

/// Monster AI: runs only for monsters a player sees (or saw within `AI_LINGER` ticks).
fn monster_ai(mut q: Query<(&mut Position, &mut Heading), AwakeMonster>, mut rng: ResMut<Rng>, side: Res<Side>) {
    for (mut p, mut h) in &mut q {
        step(&mut p, &mut h, &mut rng, side.0);
    }
}

/// A few players log out (despawn) and as many log in, so sets see churn every tick.
fn churn(
    mut commands: Commands,
    players: Query<Entity, With<Player>>,
    mut rng: ResMut<Rng>,
    side: Res<Side>,
    args: Res<Args>,
) {
    for e in &players {
        if rng.next_f32() < 0.002 {
            commands.entity(e).despawn();
            spawn_player(&mut commands, &mut rng, side.0, &args);
        }
    }
}

/// Reacts to the AOI messages in the same frame, right after the AOI: counts them, and counts
/// "aggro" (a player entering a monster's view).
fn on_view(
    mut enters: MessageReader<EnterView>,
    mut leaves: MessageReader<LeaveView>,
    mut tiers: MessageReader<TierChanged>,
    aoi: Res<AoiStats>,
    monsters: Query<(), With<Monster>>,
    woke: Query<(), (With<Monster>, Added<Watched>)>,
    mut stats: ResMut<Stats>,
) {
    for e in enters.read() {
        stats.enters += 1;
        *stats.enter_reasons.entry(e.reason).or_default() += 1;
        if monsters.contains(e.observer) {
            stats.aggro += 1;
        }
    }
    for l in leaves.read() {
        stats.leaves += 1;
        *stats.leave_reasons.entry(l.reason).or_default() += 1;
    }
    stats.wakeups += woke.iter().count() as u64;
    stats.tier_changes += tiers.read().count() as u64;
    stats.returned += aoi.returned as u64;
    stats.peak_waiting = stats.peak_waiting.max(aoi.waiting);
}

/// A server's replication by tier: each player is sent its near targets every tick, its middle
/// ones every 4th tick and its far ones every 16th (counted here, not sent).
fn replicate_by_tier(players: Query<&InterestSet, With<Player>>, mut stats: ResMut<Stats>, mut tick: Local<u64>) {
    *tick += 1;
    for set in &players {
        for (_, tier) in set.iter_with_tiers() {
            let every = TIER_CADENCE[usize::from(tier).min(TIER_CADENCE.len() - 1)];
            stats.sends += u64::from((*tick).is_multiple_of(every));
        }
        stats.sends_every_tick += set.len() as u64;
    }
}

/// A headless game server loop: players, monsters and items under the classic MMO visibility
/// rules; monsters' AI runs only while a player sees them.
#[derive(Parser, Resource)]
struct Args {
    /// Number of entities (2% players, 88% monsters, 10% items).
    #[arg(long, default_value_t = 5000)]
    entities: usize,
    /// Number of ticks to run.
    #[arg(long, default_value_t = 300)]
    ticks: usize,
    /// Seed of the world and of the wandering.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print a progress line every this many ticks.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    report_every: u64,
    /// Write an SVG picture of the last tick to this file.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Players see a 16:9 screen (`ViewRect`) of the same area as their view disc.
    #[arg(long)]
    screens: bool,
    /// Add this many game-master cameras (`ViewRange::unlimited()`, hidden, seeing players and
    /// monsters): they see the whole map.
    #[arg(long, default_value_t = 0)]
    game_masters: usize,
    /// The AOI index: `grid` or `sorted-axes`.
    #[arg(long, default_value = "grid")]
    index: IndexKind,
    /// Players keep a target until it is this many units beyond their view (`ViewHysteresis`).
    #[arg(long, value_parser = non_negative)]
    hysteresis: Option<f32>,
    /// With `--hysteresis`: ticks a target may spend beyond the margin before it leaves.
    #[arg(long, default_value_t = 0)]
    linger: u32,
    /// Players admit at most this many new targets per tick, nearest first (`EnterBudget`).
    #[arg(long)]
    budget: Option<u32>,
    /// Players grade their view into near, middle and far thirds (`ViewTiers`), replicated
    /// every tick, every 4th and every 16th.
    #[arg(long)]
    tiers: bool,
}

/// A margin: a non-negative number of world units.
fn non_negative(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a non-negative number")),
    }
}

fn main() {
    let args: Args = cli::parse_or_exit();
    if args.linger > 0 && args.hysteresis.is_none() {
        eprintln!("error: --linger needs --hysteresis (try --help)");
        std::process::exit(2);
    }
    // One entity per 1600 square units: players' views cover about a third of the map.
    let side = 40.0 * (args.entities as f32).sqrt();
    let (ticks, report_every, svg_path) = (args.ticks, args.report_every as usize, args.svg.clone());
    let mut app = App::new();
    app.add_plugins(AoiPlugin {
        index: args.index,
        watched: Some(WatchedRule {
            by_layers: PLAYER,
            linger_ticks: AI_LINGER,
        }),
        ..Default::default()
    })
    .insert_resource(Side(side))
    .insert_resource(Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1))
    .insert_resource(args)
    .init_resource::<Stats>()
    .add_systems(Startup, setup)
    .add_systems(Update, (move_players, monster_ai, churn).chain())
    .add_systems(PostUpdate, (on_view, replicate_by_tier).after(AoiSystems::Last));

    println!("tick | enters | leaves | mean interest | awake monsters | mean watchers/player | ms/tick");
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
            let awake = world
                .query_filtered::<(), (With<Monster>, With<Watched>)>()
                .iter(world)
                .count();
            let mut w = world.query::<&Watchers>();
            let (players, watchers) = w.iter(world).fold((0usize, 0usize), |(c, t), s| (c + 1, t + s.len()));
            let stats = world.resource::<Stats>();
            let ms = window.elapsed().as_secs_f64() * 1e3 / report_every as f64;
            println!(
                "{tick:>4} | {:>6} | {:>6} | {:>13.1} | {awake:>14} | {:>20.1} | {ms:>7.2}",
                stats.enters - last.0,
                stats.leaves - last.1,
                total as f64 / count.max(1) as f64,
                watchers as f64 / players.max(1) as f64,
            );
            last = (stats.enters, stats.leaves);
            window = Instant::now();
        }
    }
    if let Some(path) = svg_path {
        let picture = svg::render(&snapshot(app.world_mut(), side, ticks as u64), 900.0);
        match std::fs::write(&path, picture) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
    let world = app.world_mut();
    let mut cameras = world.query_filtered::<&InterestSet, With<GameMaster>>();
    for (i, set) in cameras.iter(world).enumerate() {
        println!(
            "game master {i} sees {} players and monsters (the whole map)",
            set.len()
        );
    }
    let mut sets = world.query::<&InterestSet>();
    let pairs: usize = sets.iter(world).map(InterestSet::len).sum();
    let stats = world.resource::<Stats>();
    let args = world.resource::<Args>();
    if args.hysteresis.is_some() {
        println!(
            "hysteresis: {} times a held target came back in view: {} messages avoided",
            stats.returned,
            2 * stats.returned
        );
    }
    if args.budget.is_some() {
        println!(
            "enter budget: at most {} targets waited in one tick",
            stats.peak_waiting
        );
    }
    if args.tiers {
        println!(
            "tiers: {} tier changes; replication by tier sent {} target updates instead of {} ({:.0}%)",
            stats.tier_changes,
            stats.sends,
            stats.sends_every_tick,
            100.0 * stats.sends as f64 / stats.sends_every_tick.max(1) as f64
        );
    }
    println!("enters by reason: {:?}", stats.enter_reasons);
    println!("leaves by reason: {:?}", stats.leave_reasons);
    println!(
        "summary: {ticks} ticks in {:.2} s ({:.2} ms/tick), {} enters, {} leaves, {} aggro events, \
         {} monster wake-ups; enters - leaves = {} = visible pairs now {}: {}",
        start.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64() * 1e3 / ticks as f64,
        stats.enters,
        stats.leaves,
        stats.aggro,
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

/// What the picture shows: every entity, and the views of the first three players.
fn snapshot(world: &mut World, side: f32, tick: u64) -> svg::Snapshot {
    let mut q = world.query::<(&Position, Has<Player>, Has<Monster>, Has<Watched>)>();
    let marks = q
        .iter(world)
        .map(|(p, player, monster, watched)| svg::Mark {
            x: p.x,
            y: p.y,
            kind: match (player, monster) {
                (true, _) => svg::Kind::Player,
                (_, true) => svg::Kind::Monster,
                _ => svg::Kind::Item,
            },
            watched,
        })
        .collect();
    let mut players =
        world.query_filtered::<(&Position, Option<&ViewRange>, Option<&ViewRect>, &InterestSet), With<Player>>();
    let views = players
        .iter(world)
        .take(3)
        .map(|(p, range, rect, set)| svg::View {
            x: p.x,
            y: p.y,
            radius: range.map_or(0.0, |r| r.radius),
            rect: rect.map(|r| [r.half_width, r.half_height]),
            sees: set
                .iter()
                .filter_map(|t| world.get::<Position>(t).map(|q| (q.x, q.y)))
                .collect(),
        })
        .collect();
    svg::Snapshot {
        side,
        cell: world.resource::<AoiStats>().cell_side,
        tick,
        marks,
        views,
    }
}
