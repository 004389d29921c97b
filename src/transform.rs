//! Transform sync (feature `transform`): [`Position`] kept from `GlobalTransform`, so a game that
//! moves entities with `Transform` never writes `Position` by hand.

use bevy_ecs::prelude::*;
use bevy_transform::components::GlobalTransform;

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::components::Position;

/// Opt-in: the plugin copies this entity's `GlobalTransform` translation into its [`Position`]
/// every update, in [`AoiSystems::First`](crate::AoiSystems::First), after Bevy's transform
/// propagation (`TransformSystems::Propagate`) when both run in the same schedule (the default
/// `PostUpdate`). All three coordinates are copied; the plugin's [`Plane`](crate::Plane)
/// decides which count. Only entities whose `GlobalTransform` changed (or that just got the
/// marker) are written, and `Position` is left untouched when the value is the same, so a
/// standing entity costs nothing. Entities without a `GlobalTransform` are skipped.
///
/// In a fixed-timestep schedule (`AoiPlugin::new(FixedPostUpdate)`) the copy sees the
/// `GlobalTransform` propagated in the last frame's `PostUpdate`.
///
/// avian's prelude also exports a `Position`: import ours by path (`bevy_aoi::Position`) or
/// rename it (`use bevy_aoi::prelude::{Position as AoiPosition, *};`).
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// use bevy_transform::{TransformPlugin, components::Transform};
/// let mut app = App::new();
/// app.add_plugins((TransformPlugin, AoiPlugin::default()));
/// let e = app
///     .world_mut()
///     .spawn((Transform::from_xyz(3.0, 4.0, 0.0), AoiTransformSync, ViewRange::new(10.0)))
///     .id();
/// app.update();
/// assert_eq!(app.world().get::<Position>(e), Some(&Position::new(3.0, 4.0)));
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
#[require(Position)]
pub struct AoiTransformSync;

/// Synced entities whose transform moved, or that just opted in.
type ToSync = (
    With<AoiTransformSync>,
    Or<(Changed<GlobalTransform>, Added<AoiTransformSync>)>,
);

/// Copies `GlobalTransform` into `Position` for [`AoiTransformSync`] entities.
pub(crate) fn sync_positions(mut synced: Query<(&GlobalTransform, &mut Position), ToSync>) {
    for (transform, mut position) in &mut synced {
        let t = transform.translation();
        position.set_if_neq(Position::new_3d(t.x, t.y, t.z));
    }
}
