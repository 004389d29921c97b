//! Scheduling: no ambiguities, Startup entities right on frame 1, custom schedules.

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::{
    prelude::*,
    schedule::{LogLevel, ScheduleBuildSettings, ScheduleLabel},
};

#[test]
fn aoi_systems_have_no_ambiguities() {
    let with_everything = AoiPlugin {
        entity_events: true,
        watched: Some(WatchedRule {
            by_layers: 1,
            linger_ticks: 1,
        }),
        ..Default::default()
    };
    for plugin in [AoiPlugin::default(), with_everything] {
        let mut app = App::new();
        app.add_plugins(plugin);
        for label in [PostUpdate.intern(), PostStartup.intern()] {
            app.edit_schedule(label, |s| {
                s.set_build_settings(ScheduleBuildSettings {
                    ambiguity_detection: LogLevel::Error,
                    ..Default::default()
                });
            });
        }
        app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(1.0)));
        // Building a schedule with an ambiguity panics here.
        app.update();
        app.update();
    }
}

#[test]
fn startup_entities_are_right_on_the_first_frame() {
    #[derive(Resource, Default)]
    struct SeenInUpdate(usize);
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default())
        .init_resource::<SeenInUpdate>()
        .add_systems(Startup, |mut c: Commands| {
            c.spawn((Position::new(0.0, 0.0), ViewRange::new(10.0)));
            c.spawn(Position::new(10.0, 0.0));
        })
        .add_systems(
            Update,
            |sets: Query<&InterestSet>, mut seen: ResMut<SeenInUpdate>, mut enters: MessageReader<EnterView>| {
                seen.0 = sets.iter().map(InterestSet::len).sum::<usize>() + 100 * enters.read().count();
            },
        );
    app.update();
    assert_eq!(
        app.world().resource::<SeenInUpdate>().0,
        101,
        "Update of frame 1 should see the Startup pair in the InterestSet and one EnterView"
    );
}

#[test]
fn runs_in_a_custom_schedule() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::new(PreUpdate));
    let o = app
        .world_mut()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(5.0)))
        .id();
    app.world_mut().spawn(Position::new(5.0, 0.0));
    app.update();
    assert_eq!(
        app.world().get::<InterestSet>(o).unwrap().len(),
        1,
        "the AOI should run in PreUpdate"
    );
}
