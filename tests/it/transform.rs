//! Transform sync (feature `transform`): walkers moved only through `Transform`, some of them
//! children that move with their parent, keep `Position` equal to their `GlobalTransform` in the
//! same frame, and the AOI contract holds after every update.
#![cfg(feature = "transform")]

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;
use bevy_transform::{
    TransformPlugin,
    components::{GlobalTransform, Transform},
};

use crate::harness::{Checked, Draws, Rng};

#[test]
fn positions_follow_global_transforms_in_the_same_frame() {
    let mut app = Checked::new(AoiPlugin::default());
    app.app.add_plugins(TransformPlugin);
    let mut rng = Rng(131);
    let mut parents = Vec::new();
    for i in 0..60 {
        let t = Transform::from_xyz(rng.range(-100.0, 100.0), rng.range(-100.0, 100.0), 0.0);
        let e = app.world().spawn((t, AoiTransformSync, ViewRange::new(25.0)));
        if i % 6 == 0 {
            parents.push(e.id());
        }
    }
    // Children: only their parent moves, their `GlobalTransform` follows by propagation.
    let mut children = Vec::new();
    for &p in &parents {
        let offset = Transform::from_xyz(12.0, -5.0, 0.0);
        children.push(app.world().spawn((offset, AoiTransformSync, ChildOf(p))).id());
    }
    // Entities that opt out keep their own `Position`.
    let manual = app
        .world()
        .spawn((Transform::from_xyz(500.0, 0.0, 0.0), Position::new(1.0, 1.0)))
        .id();
    for tick in 0..120 {
        let mut q = app.world().query_filtered::<&mut Transform, Without<ChildOf>>();
        for (i, mut t) in q.iter_mut(app.world()).enumerate() {
            let a = (i * 13 + tick / 7) as f32 * 0.37;
            t.translation.x += 3.0 * a.cos();
            t.translation.y += 3.0 * a.sin();
        }
        app.update();
        let mut synced = app
            .world()
            .query_filtered::<(Entity, &GlobalTransform, &Position), With<AoiTransformSync>>();
        for (e, g, p) in synced.iter(app.world()) {
            let t = g.translation();
            assert_eq!(
                *p,
                Position::new_3d(t.x, t.y, t.z),
                "{e}'s Position should equal its GlobalTransform after update {tick}"
            );
        }
    }
    assert_eq!(
        app.world().get::<Position>(manual),
        Some(&Position::new(1.0, 1.0)),
        "an entity without AoiTransformSync should keep its own Position"
    );
    assert!(
        app.total_enters > 100 && app.total_leaves > 100,
        "the walkers should enter and leave views"
    );
    assert_eq!(children.len(), parents.len(), "every parent should carry a child");
}
