//! `AoiReplicationPlugin` with a real bevy_replicon server and two clients in one process
//! (replicon's `test_app`, no sockets). A separate test binary because it needs features the
//! other tests do not (`replicon` and `bevy_replicon/client`, built with `--ignore-rust-version`):
//!
//! `cargo test --features "replicon bevy_replicon/client" --ignore-rust-version --test replicon`
//!
//! After every exchange, each client must hold exactly the replicated entities it should: the
//! managed ones (`Replicated` + `Position`) that one of its linked observers sees or that are
//! linked to it, plus every replicated entity without a `Position`.
//! The AOI runs every frame in `PostUpdate`, then in `FixedPostUpdate` every other frame and twice
//! a frame: the visibility sync runs every frame in `PostUpdate` either way.

use std::collections::BTreeSet;

use bevy_aoi::prelude::*;
use bevy_app::{App, FixedPostUpdate, PluginGroup, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_replicon::{
    prelude::*, server::visibility::client_visibility::ClientVisibility, shared::server_entity_map::ServerEntityMap,
    test_app::ServerTestAppExt,
};
use bevy_state::app::StatesPlugin;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};

const SIDE: f32 = 600.0;
const RADIUS: f32 = 100.0;

/// A small deterministic generator (`SplitMix64`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn position(&mut self) -> Position {
        Position::new(self.unit() * SIDE, self.unit() * SIDE)
    }
}

/// Where the server runs the AOI: every frame in `PostUpdate` (the default), or in
/// `FixedPostUpdate` with the fixed loop running every other frame or twice a frame.
#[derive(Clone, Copy, Debug)]
enum Aoi {
    PostUpdate,
    FixedEveryOtherFrame,
    FixedTwicePerFrame,
}

/// A client app (`None`), or a server app running the AOI as `aoi` says.
fn app(aoi: Option<Aoi>) -> App {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        StatesPlugin,
        RepliconPlugins.set(ServerPlugin::new(PostUpdate)),
    ));
    if let Some(aoi) = aoi {
        let plugin = match aoi {
            Aoi::PostUpdate => AoiPlugin::default(),
            Aoi::FixedEveryOtherFrame | Aoi::FixedTwicePerFrame => AoiPlugin::new(FixedPostUpdate),
        };
        let step = app.world().resource::<Time<Fixed>>().timestep();
        match aoi {
            Aoi::PostUpdate => {}
            Aoi::FixedEveryOtherFrame => {
                app.insert_resource(TimeUpdateStrategy::ManualDuration(step / 2));
            }
            Aoi::FixedTwicePerFrame => {
                app.insert_resource(TimeUpdateStrategy::FixedTimesteps(2));
            }
        }
        app.add_plugins((plugin, AoiReplicationPlugin))
            .init_resource::<LateDespawns>()
            .add_systems(
                PostUpdate,
                despawn_late.after(AoiSystems::Last).before(ServerSystems::Send),
            );
    }
    app.finish();
    app
}

/// Entities to despawn after the AOI and its visibility sync ran, before replicon sends: replicon
/// forgets them in this frame's send, the AOI drops them from the sets in the next update.
#[derive(Resource, Default)]
struct LateDespawns(Vec<Entity>);

fn despawn_late(mut late: ResMut<LateDespawns>, mut commands: Commands) {
    for entity in late.0.drain(..) {
        commands.entity(entity).despawn();
    }
}

/// The server entities a client should have now.
fn expected(server: &mut World, client: Entity) -> BTreeSet<Entity> {
    let mut seen = BTreeSet::new();
    let mut links = server.query::<(Entity, &AoiClient, Option<&InterestSet>)>();
    for (entity, link, set) in links.iter(server) {
        if link.0 == client {
            seen.insert(entity);
            seen.extend(set.into_iter().flat_map(InterestSet::iter));
        }
    }
    let mut managed = server.query_filtered::<Entity, (With<Replicated>, With<Position>)>();
    let managed: BTreeSet<Entity> = managed.iter(server).collect();
    let mut unmanaged = server.query_filtered::<Entity, (With<Replicated>, Without<Position>)>();
    seen.retain(|e| managed.contains(e));
    seen.extend(unmanaged.iter(server));
    seen
}

/// The server entities a client has now.
fn replicated(client: &mut World) -> BTreeSet<Entity> {
    let mut remote = client.query_filtered::<Entity, With<Remote>>();
    let map = client.resource::<ServerEntityMap>().to_server();
    remote
        .iter(client)
        .map(|e| *map.get(&e).expect("a remote entity should map to a server entity"))
        .collect()
}

struct World3 {
    server: App,
    clients: [App; 2],
    client_entities: [Entity; 2],
    /// Per client, summed over the checks: replicated entities it had, and managed ones it had not.
    had: [usize; 2],
    hidden: [usize; 2],
}

impl World3 {
    fn new(aoi: Aoi) -> Self {
        let mut server = app(Some(aoi));
        let mut clients = [app(None), app(None)];
        for client in &mut clients {
            server.connect_client(client);
        }
        let client_entities = clients
            .each_ref()
            .map(|c| **c.world().resource::<bevy_replicon::test_app::TestClientEntity>());
        Self {
            server,
            clients,
            client_entities,
            had: [0; 2],
            hidden: [0; 2],
        }
    }

    /// One server update, then each client exchanges and updates; checks every client.
    fn step_and_check(&mut self, tick: usize, despawned: &[Entity]) {
        self.server.update();
        for (i, client) in self.clients.iter_mut().enumerate() {
            self.server.exchange_with_client(client);
            client.update();
            let want = expected(self.server.world_mut(), self.client_entities[i]);
            let have = replicated(client.world_mut());
            assert_eq!(
                have,
                want,
                "tick {tick}: client {i} should have exactly what its observers see (missing: {:?}, extra: {:?})",
                want.difference(&have).collect::<Vec<_>>(),
                have.difference(&want).collect::<Vec<_>>()
            );
            let mut managed = self
                .server
                .world_mut()
                .query_filtered::<(), (With<Replicated>, With<Position>)>();
            self.had[i] += have.len();
            self.hidden[i] += managed.iter(self.server.world()).count() - (have.len() - 1);
        }
        for (i, &client) in self.client_entities.iter().enumerate() {
            let visibility = self
                .server
                .world()
                .get::<ClientVisibility>(client)
                .expect("a connected client should have ClientVisibility");
            for &gone in despawned {
                assert!(
                    visibility.get(gone).is_empty(),
                    "tick {tick}: client {i} should keep no visibility state for despawned {gone}"
                );
            }
        }
    }
}

#[test]
fn each_client_is_sent_exactly_what_its_observers_see() {
    for aoi in [Aoi::PostUpdate, Aoi::FixedEveryOtherFrame, Aoi::FixedTwicePerFrame] {
        run(aoi);
    }
}

/// 300 ticks of players and targets moving, linking and despawning, checked after every exchange.
fn run(aoi: Aoi) {
    let mut w = World3::new(aoi);
    let [a, b] = w.client_entities;
    let mut rng = Rng(0x5EED_0A01);
    let world = w.server.world_mut();
    // Client a has two players far apart; client b one, and later a second one linked late.
    let mut player = |at: f32, client: Entity| {
        world
            .spawn((
                Replicated,
                Position::new(at, at),
                ViewRange::new(RADIUS),
                AoiClient(client),
            ))
            .id()
    };
    let mut observers = vec![player(50.0, a), player(550.0, a), player(300.0, b)];
    let late = world.spawn((Replicated, rng.position(), ViewRange::new(RADIUS))).id();
    let mut targets: Vec<Entity> = (0..150)
        .map(|_| world.spawn((Replicated, rng.position())).id())
        .collect();
    // Replicated without a Position: never touched, every client has them.
    let unmanaged = world.spawn(Replicated).id();
    // Not replicated: never on a client.
    world.spawn(rng.position());
    let mut despawned = Vec::new();

    for tick in 0..300 {
        let world = w.server.world_mut();
        let mut positions = world.query::<&mut Position>();
        for mut p in positions.iter_mut(world) {
            p.x = (p.x + rng.unit() * 16.0 - 8.0).clamp(0.0, SIDE);
            p.y = (p.y + rng.unit() * 16.0 - 8.0).clamp(0.0, SIDE);
        }
        match tick {
            40 => {
                world.entity_mut(late).insert(AoiClient(b));
                observers.push(late);
            }
            // A player of a moves to client b, then its link is removed, then restored.
            90 => {
                world.entity_mut(observers[1]).insert(AoiClient(b));
            }
            130 => {
                world.entity_mut(observers[1]).remove::<AoiClient>();
            }
            170 => {
                world.entity_mut(observers[1]).insert(AoiClient(a));
            }
            // A player despawns (its views go with it).
            200 => {
                let gone = observers.remove(2);
                world.despawn(gone);
                despawned.push(gone);
            }
            // The unmanaged entity gains a Position (now managed), then loses it (handed back).
            220 => {
                world.entity_mut(unmanaged).insert(Position::new(50.0, 50.0));
            }
            260 => {
                world.entity_mut(unmanaged).remove::<Position>();
            }
            _ => {}
        }
        // Targets come and go; one jumps across the map.
        if tick % 3 == 0 {
            let gone = targets.swap_remove(rng.below(targets.len()));
            world.despawn(gone);
            despawned.push(gone);
            targets.push(world.spawn((Replicated, rng.position())).id());
            // One that some observer sees goes late (after the sync, before the send).
            let mut sets = world.query::<&InterestSet>();
            let seen: BTreeSet<Entity> = sets.iter(world).flat_map(InterestSet::iter).collect();
            if let Some(i) = targets.iter().position(|t| seen.contains(t)) {
                let gone = targets.swap_remove(i);
                world.resource_mut::<LateDespawns>().0.push(gone);
                despawned.push(gone);
                targets.push(world.spawn((Replicated, rng.position())).id());
            }
            let jumper = targets[rng.below(targets.len())];
            *world
                .get_mut::<Position>(jumper)
                .expect("a target should have a position") = rng.position();
        }
        w.step_and_check(tick, &despawned);
    }
    for i in 0..2 {
        println!(
            "{aoi:?}: client {i}: {} replicated and {} hidden over 300 checks",
            w.had[i], w.hidden[i]
        );
        assert!(
            w.had[i] > 300 * 3 && w.hidden[i] > 300 * 100,
            "{aoi:?}: client {i} should both receive entities and have most hidden (had {}, hidden {})",
            w.had[i],
            w.hidden[i]
        );
    }
}

#[test]
fn a_client_that_connects_late_gets_only_what_it_sees() {
    let mut server = app(Some(Aoi::PostUpdate));
    let mut early = app(None);
    server.connect_client(&mut early);
    let early_entity = **early.world().resource::<bevy_replicon::test_app::TestClientEntity>();
    let world = server.world_mut();
    world.spawn((
        Replicated,
        Position::new(0.0, 0.0),
        ViewRange::new(RADIUS),
        AoiClient(early_entity),
    ));
    let near = world.spawn((Replicated, Position::new(10.0, 0.0))).id();
    let far = world.spawn((Replicated, Position::new(500.0, 0.0))).id();
    server.update();

    let mut late = app(None);
    server.connect_client(&mut late);
    let late_entity = **late.world().resource::<bevy_replicon::test_app::TestClientEntity>();
    let player = server
        .world_mut()
        .spawn((
            Replicated,
            Position::new(500.0, 10.0),
            ViewRange::new(RADIUS),
            AoiClient(late_entity),
        ))
        .id();
    for _ in 0..2 {
        server.update();
        server.exchange_with_client(&mut late);
        late.update();
    }
    assert_eq!(
        replicated(late.world_mut()),
        BTreeSet::from([far, player]),
        "the late client should get its own player and what it sees, not {near}"
    );
}

#[test]
#[should_panic(expected = "AoiReplicationPlugin reads the observers' InterestSets")]
fn the_replication_plugin_refuses_an_aoi_plugin_without_sets() {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        StatesPlugin,
        RepliconPlugins.set(ServerPlugin::new(PostUpdate)),
    ));
    app.add_plugins((
        AoiPlugin {
            interest_sets: false,
            ..Default::default()
        },
        AoiReplicationPlugin,
    ));
    app.finish();
}
