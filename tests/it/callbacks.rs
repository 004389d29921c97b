//! User code that misbehaves during the AOI's update: entity-event observers and systems inside
//! the AOI's sets that despawn the observer or the target, spawn hundreds of entities, move
//! entities, remove `ViewRange` or `Position`, or change rules. Nothing panics, messages keep
//! alternating, and the next update is exact again (checked against brute force).

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Draws, Rng, Scenario};

/// What a misbehaving callback does with the pair it is told about.
#[derive(Clone, Copy, Debug)]
enum Mischief {
    DespawnTarget,
    DespawnObserver,
    SpawnHundreds,
    MoveBoth,
    RemoveViewRange,
    RemovePosition,
    ChangeRules,
}

const ALL: [Mischief; 7] = [
    Mischief::DespawnTarget,
    Mischief::DespawnObserver,
    Mischief::SpawnHundreds,
    Mischief::MoveBoth,
    Mischief::RemoveViewRange,
    Mischief::RemovePosition,
    Mischief::ChangeRules,
];

/// The mischief in force, a counter so only some events misbehave, whether it is on, and how
/// many waves of spawns are left (each wave's enters trigger more events).
#[derive(Resource)]
struct Doing(Mischief, u32, bool, u32);

fn misbehave(commands: &mut Commands, doing: &mut Doing, observer: Entity, target: Entity) {
    doing.1 += 1;
    if !doing.2 || !doing.1.is_multiple_of(7) {
        return;
    }
    match doing.0 {
        Mischief::DespawnTarget => {
            commands.entity(target).try_despawn();
        }
        Mischief::DespawnObserver => {
            commands.entity(observer).try_despawn();
        }
        Mischief::SpawnHundreds => {
            if doing.3 > 0 {
                doing.3 -= 1;
                for i in 0..200 {
                    let p = Position::new((i % 20) as f32 * 6.0 - 60.0, (i / 20) as f32 * 6.0 - 30.0);
                    commands.spawn((p, ViewRange::new(15.0)));
                }
            }
        }
        Mischief::MoveBoth => {
            let k = doing.1 as f32;
            commands
                .entity(observer)
                .try_insert(Position::new(k % 90.0 - 45.0, 10.0));
            commands
                .entity(target)
                .try_insert(Position::new(-(k % 70.0) + 35.0, -10.0));
        }
        Mischief::RemoveViewRange => {
            commands.entity(observer).try_remove::<ViewRange>();
        }
        Mischief::RemovePosition => {
            commands.entity(target).try_remove::<Position>();
        }
        Mischief::ChangeRules => {
            let layers = AoiLayers::new(1 << (doing.1 % 3), 1 << (doing.1 % 2));
            commands.entity(target).try_insert((layers, AoiInstance(doing.1 % 2)));
        }
    }
}

/// Entity-event observers on `EnterView` and `LeaveView` doing the mischief.
fn via_entity_events(app: &mut Checked) {
    app.app
        .add_observer(|ev: On<EnterView>, mut commands: Commands, mut doing: ResMut<Doing>| {
            let e = *ev.event();
            misbehave(&mut commands, &mut doing, e.observer, e.target);
        });
    app.app
        .add_observer(|ev: On<LeaveView>, mut commands: Commands, mut doing: ResMut<Doing>| {
            let e = *ev.event();
            misbehave(&mut commands, &mut doing, e.observer, e.target);
        });
}

/// A system between `ComputeInterest` and `WriteMessages` doing the mischief to some pairs of
/// the sets just computed.
fn via_system_inside_the_sets(app: &mut Checked) {
    let inside = |sets: Query<(Entity, &InterestSet)>, mut commands: Commands, mut doing: ResMut<Doing>| {
        for (o, set) in &sets {
            if let Some(t) = set.iter().next() {
                misbehave(&mut commands, &mut doing, o, t);
            }
        }
    };
    app.app.add_systems(
        bevy_app::PostUpdate,
        inside
            .after(AoiSystems::ComputeInterest)
            .before(AoiSystems::WriteMessages),
    );
}

fn run(mischief: Mischief, hook: fn(&mut Checked), seed: u64) {
    let mut app = Checked::new(AoiPlugin {
        entity_events: true,
        ..Default::default()
    });
    app.world().insert_resource(Doing(mischief, 0, false, 4));
    hook(&mut app);
    let mut sc = Scenario::new(seed, 80.0, 20.0, 0.0, Plane::XY);
    for _ in 0..120 {
        sc.spawn(app.world());
    }
    // A clean first update (it runs the AOI twice: `PostStartup` and the main schedule).
    app.update();
    let mut rng = Rng(seed);
    for _ in 0..40 {
        // Forget what the callbacks despawned.
        let world = app.world();
        sc.entities.retain(|&e| world.get_entity(e).is_ok());
        sc.step(app.world());
        let misbehave = rng.chance(0.7);
        app.world().resource_mut::<Doing>().2 = misbehave;
        if misbehave {
            app.update_lenient();
        } else {
            // A quiet update: the AOI must have caught up with all the mischief at once.
            app.update();
        }
    }
    // Quiet for good: every update exact.
    app.world().resource_mut::<Doing>().2 = false;
    app.update();
    app.update();
    let seen = app.world().resource::<Doing>().1;
    assert!(
        seen > 100,
        "the callbacks should have run many times ({seen}) for {mischief:?}"
    );
    // Nothing leaks: the index tracks exactly the entities that have a `Position`.
    let world = app.world();
    let positioned = world.query_filtered::<(), With<Position>>().iter(world).count();
    let tracked = world.resource::<AoiStats>().entities;
    assert_eq!(
        tracked, positioned,
        "after {mischief:?} the index should track exactly the entities with a Position"
    );
}

#[test]
fn entity_event_observers_that_misbehave_do_not_break_the_contract() {
    for (i, mischief) in ALL.into_iter().enumerate() {
        run(mischief, via_entity_events, 200 + i as u64);
    }
}

#[test]
fn systems_inside_the_aoi_sets_that_misbehave_do_not_break_the_contract() {
    for (i, mischief) in ALL.into_iter().enumerate() {
        run(mischief, via_system_inside_the_sets, 300 + i as u64);
    }
}
