//! A bevy_replicon server that sends each client only what its player sees, with clients in
//! the same process (replicon's `test_app`: no sockets, no transport crate). Monsters wander a
//! square map and a few respawn every tick; each client has one player, who walks too. Every
//! tick the server updates, each client receives its messages, and the example checks that the
//! entities on each client are exactly its player and what the player's `InterestSet` holds.
//! Prints a line every `--report-every` ticks and the bytes each client received.
//!
//! ```text
//! cargo run --release --example replicated_server --features "replicon bevy_replicon/client" --ignore-rust-version
//! ```
//!
//! Flags (`--help` lists them; a bad flag prints one line and exits 2): `--clients N` (default
//! 3), `--monsters M` (2000), `--ticks T` (200), `--seed S` (1), `--report-every K` (50),
//! `--everything` (leave `AoiReplicationPlugin` out: every client gets every entity, for
//! comparison). `--ignore-rust-version`: bevy_replicon's `bevy` dependency declares Rust 1.97.1;
//! it builds and runs on 1.95.

use std::collections::BTreeSet;

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::prelude::*;
use bevy_replicon::{prelude::*, shared::server_entity_map::ServerEntityMap, test_app::ServerTestAppExt};
use bevy_state::app::StatesPlugin;
use bevy_time::TimePlugin;
use clap::Parser;
use rng::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[path = "common/cli.rs"]
mod cli;
#[path = "common/rng.rs"]
mod rng;

/// Players' view radius.
const VIEW: f32 = 100.0;
/// Units a monster moves per tick.
const SPEED: f32 = 4.0;

/// The replicated copy of `Position` that clients receive (bevy_aoi's own `Position` is not
/// serializable; a game replicates its own transform or position type).
#[derive(Component, Clone, Copy, PartialEq)]
struct NetPosition(f32, f32);

impl Serialize for NetPosition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.0, self.1).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for NetPosition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <(f32, f32)>::deserialize(deserializer).map(|(x, y)| NetPosition(x, y))
    }
}

#[derive(Component)]
struct Monster;

#[derive(Resource)]
struct Side(f32);

#[derive(Parser)]
#[command(about = "A bevy_replicon server sending each in-process client only what its player sees")]
struct Args {
    /// Number of clients, one player each.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=64))]
    clients: u64,
    /// Number of wandering monsters.
    #[arg(long, default_value_t = 2000)]
    monsters: usize,
    /// Number of ticks to run.
    #[arg(long, default_value_t = 200)]
    ticks: usize,
    /// Seed of the world and of the wandering.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print a progress line every this many ticks.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    report_every: u64,
    /// Leave `AoiReplicationPlugin` out: every client is sent every entity (for comparison).
    #[arg(long)]
    everything: bool,
}

fn replicon_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        StatesPlugin,
        RepliconPlugins.set(ServerPlugin::new(PostUpdate)),
    ))
    .replicate::<NetPosition>();
    app
}

fn main() {
    let args: Args = cli::parse_or_exit();
    // One monster per 1600 square units, as in `headless_simulation`.
    let side = 40.0 * (args.monsters.max(1) as f32).sqrt();
    let mut server = replicon_app();
    server
        .add_plugins(AoiPlugin::default())
        .insert_resource(Side(side))
        .insert_resource(Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1))
        .add_systems(Update, (wander, respawn))
        .add_systems(
            PostUpdate,
            copy_positions.after(AoiSystems::Last).before(ServerSystems::Send),
        );
    if !args.everything {
        server.add_plugins(AoiReplicationPlugin);
    }
    server.finish();
    let mut clients: Vec<App> = (0..args.clients)
        .map(|_| {
            let mut client = replicon_app();
            client.init_resource::<ClientReplicationStats>(); // counted only when present
            client
        })
        .collect();
    let mut players = Vec::new();
    for (i, client) in clients.iter_mut().enumerate() {
        client.finish();
        server.connect_client(client);
        let client_entity = **client.world().resource::<bevy_replicon::test_app::TestClientEntity>();
        let at = side * (i as f32 + 0.5) / args.clients as f32;
        players.push(
            server
                .world_mut()
                .spawn((
                    Replicated,
                    Position::new(at, at),
                    NetPosition(at, at),
                    ViewRange::new(VIEW),
                    AoiClient(client_entity),
                ))
                .id(),
        );
    }
    let world = server.world_mut();
    for _ in 0..args.monsters {
        let mut rng = world.resource_mut::<Rng>();
        let (x, y) = (rng.next_f32() * side, rng.next_f32() * side);
        world.spawn((Monster, Replicated, Position::new(x, y), NetPosition(x, y)));
    }
    println!(
        "{} clients, {} monsters on a {side:.0} x {side:.0} map, view radius {VIEW}{}",
        args.clients,
        args.monsters,
        if args.everything {
            ", without AoiReplicationPlugin (every client gets everything)"
        } else {
            ""
        }
    );

    let mut sent = vec![0usize; clients.len()];
    for tick in 1..=args.ticks {
        server.update();
        for (i, client) in clients.iter_mut().enumerate() {
            server.exchange_with_client(client);
            client.update();
            let has = on_client(client.world_mut());
            sent[i] += has.len();
            if !args.everything {
                let set = server
                    .world()
                    .get::<InterestSet>(players[i])
                    .expect("a player should have an InterestSet");
                let sees: BTreeSet<Entity> = set.iter().chain([players[i]]).collect();
                assert_eq!(
                    has, sees,
                    "tick {tick}: client {i} should hold exactly its player and what it sees"
                );
            }
        }
        if tick % args.report_every as usize == 0 || tick == args.ticks {
            let counts: Vec<String> = clients
                .iter_mut()
                .map(|c| on_client(c.world_mut()).len().to_string())
                .collect();
            println!("tick {tick:>4}: entities on each client: {}", counts.join(", "));
        }
    }
    let total = args.monsters + players.len();
    for (i, client) in clients.iter().enumerate() {
        let stats = client.world().resource::<ClientReplicationStats>();
        println!(
            "client {i}: {:.1} of {total} entities on average, {} replication bytes received in {} ticks",
            sent[i] as f64 / args.ticks.max(1) as f64,
            stats.bytes,
            args.ticks
        );
    }
    if !args.everything {
        println!("checked every tick: each client held exactly its player and what the player sees");
    }
}

/// The server entities a client holds.
fn on_client(client: &mut World) -> BTreeSet<Entity> {
    let mut remote = client.query_filtered::<Entity, With<Remote>>();
    let map = client.resource::<ServerEntityMap>().to_server();
    remote.iter(client).filter_map(|e| map.get(&e).copied()).collect()
}

/// Monsters and players walk a random step each tick.
fn wander(mut walkers: Query<&mut Position>, mut rng: ResMut<Rng>, side: Res<Side>) {
    for mut p in &mut walkers {
        p.x = (p.x + (rng.next_f32() * 2.0 - 1.0) * SPEED).clamp(0.0, side.0);
        p.y = (p.y + (rng.next_f32() * 2.0 - 1.0) * SPEED).clamp(0.0, side.0);
    }
}

/// A few monsters die and respawn elsewhere every tick.
fn respawn(mut commands: Commands, monsters: Query<Entity, With<Monster>>, mut rng: ResMut<Rng>, side: Res<Side>) {
    for monster in monsters.iter().take(3) {
        commands.entity(monster).despawn();
        let (x, y) = (rng.next_f32() * side.0, rng.next_f32() * side.0);
        commands.spawn((Monster, Replicated, Position::new(x, y), NetPosition(x, y)));
    }
}

/// What the clients receive: the AOI's position, written only when it changed.
fn copy_positions(mut moved: Query<(&Position, &mut NetPosition), Changed<Position>>) {
    for (p, mut net) in &mut moved {
        net.set_if_neq(NetPosition(p.x, p.y));
    }
}
