//! With the `bevy_reflect` feature (default), the plugin registers its public types, so
//! inspectors and scenes can read them.
#![cfg(feature = "bevy_reflect")]

use bevy_aoi::prelude::*;
use bevy_app::App;
use bevy_ecs::reflect::AppTypeRegistry;
use bevy_reflect::{Reflect, structs::GetField};

#[test]
fn the_plugin_registers_its_public_types() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let registry = app.world().resource::<AppTypeRegistry>().read();
    let names = [
        core::any::type_name::<Position>(),
        core::any::type_name::<ViewRange>(),
        core::any::type_name::<InterestSet>(),
        core::any::type_name::<AoiLayers>(),
        core::any::type_name::<AoiVisibility>(),
        core::any::type_name::<AoiInstance>(),
        core::any::type_name::<Watchers>(),
        core::any::type_name::<Watched>(),
        core::any::type_name::<AoiSettings>(),
        core::any::type_name::<AoiStats>(),
        core::any::type_name::<EnterView>(),
        core::any::type_name::<LeaveView>(),
        core::any::type_name::<TierChanged>(),
        core::any::type_name::<EnterReason>(),
        core::any::type_name::<LeaveReason>(),
        core::any::type_name::<ViewRect>(),
        core::any::type_name::<ViewHysteresis>(),
        core::any::type_name::<EnterBudget>(),
        core::any::type_name::<ViewTiers>(),
    ];
    for name in names {
        assert!(
            registry.get_with_type_path(name).is_some(),
            "{name} should be registered by the plugin"
        );
    }
}

#[test]
fn a_reflected_position_and_interest_set_read_like_the_components() {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let observer = app
        .world_mut()
        .spawn((Position::new(1.5, -2.0), ViewRange::new(10.0)))
        .id();
    let target = app.world_mut().spawn(Position::new(3.0, 0.0)).id();
    app.update();
    let position = app.world().get::<Position>(observer).unwrap();
    let reflected: &dyn Reflect = position;
    assert_eq!(
        position.get_field::<f32>("y"),
        Some(&-2.0),
        "the reflected y should be the component's"
    );
    assert_eq!(
        reflected.reflect_partial_eq(&Position::new(1.5, -2.0)),
        Some(true),
        "reflected equality should compare like PartialEq"
    );
    let set = app.world().get::<InterestSet>(observer).unwrap();
    let reflected: &dyn Reflect = set;
    assert_eq!(
        reflected.reflect_partial_eq(set),
        Some(true),
        "the reflected set should compare like PartialEq"
    );
    assert_eq!(
        reflected.reflect_partial_eq(&InterestSet::default()),
        Some(false),
        "a set that sees something should differ from the empty one"
    );
    let shown = format!("{reflected:?}");
    assert!(
        shown.contains(&format!("{target:?}")),
        "the reflected set's Debug should list what the observer sees ({shown})"
    );
}
