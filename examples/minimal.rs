//! The smallest complete use of `bevy_aoi`: one observer, two targets, one of which walks past.
//!
//! `cargo run --example minimal`

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::prelude::*;

#[derive(Component)]
struct Walker;

fn main() {
    App::new()
        .add_plugins(AoiPlugin::default())
        .add_systems(Startup, |mut commands: Commands| {
            commands.spawn((Name("guard"), Position::new(0.0, 0.0), ViewRange::new(10.0)));
            commands.spawn((Name("tree"), Position::new(3.0, 4.0)));
            commands.spawn((Name("walker"), Walker, Position::new(-20.0, 1.0)));
        })
        .add_systems(Update, walk)
        .add_systems(PostUpdate, report.after(AoiSystems::Last))
        .set_runner(|mut app| {
            for _ in 0..9 {
                app.update();
            }
            AppExit::Success
        })
        .run();
}

#[derive(Component)]
struct Name(&'static str);

fn walk(mut q: Query<&mut Position, With<Walker>>) {
    for mut p in &mut q {
        p.x += 5.0;
    }
}

fn report(mut enters: MessageReader<EnterView>, mut leaves: MessageReader<LeaveView>, names: Query<&Name>) {
    let name = |e: Entity| names.get(e).map_or("(despawned)", |n| n.0);
    for e in enters.read() {
        println!("{} now sees {}", name(e.observer), name(e.target));
    }
    for l in leaves.read() {
        println!("{} no longer sees {}", name(l.observer), name(l.target));
    }
}
