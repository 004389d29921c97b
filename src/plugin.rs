//! [`AoiPlugin`] and the [`AoiSystems`] set it schedules.

use bevy_app::{App, Plugin, PostStartup, PostUpdate};
use bevy_ecs::{
    intern::Interned,
    prelude::*,
    schedule::{ScheduleLabel, SystemSet},
};

use crate::{
    components::PendingRemovals,
    config::{AoiBounds, CellSize, IndexKind, Plane, validate},
    index::AoiIndex,
    messages::{EnterView, LeaveView, TierChanged},
    pair_engine::AoiPairEngine,
    settings::{AoiSettings, AoiStats},
    systems::{compute_interest, trigger_messages, update_index, write_messages},
    view_model::layer::{ViewLayer, update_view_layer},
    watched::{WatchTracker, WatchedRule, update_watched},
    watchers::{PendingWatchers, update_watchers},
};

/// The AOI systems, chained in this order in the plugin's schedule (and once in `PostStartup`,
/// so entities spawned in `Startup` are right on the first frame). Order your systems against
/// these: read messages `.after(AoiSystems::Last)` in the same schedule, or in the next frame.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Sent(usize);
/// #[derive(Component)]
/// struct Walker;
///
/// // Moves for this frame's AOI update go before it...
/// fn walk(mut walkers: Query<&mut Position, With<Walker>>) {
///     walkers.iter_mut().for_each(|mut p| p.x += 1.0);
/// }
/// // ... and what reads its results, after it.
/// fn replicate(mut enters: MessageReader<EnterView>, mut sent: ResMut<Sent>) {
///     sent.0 += enters.read().count(); // send each target to its observer's client here
/// }
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default())
///     .init_resource::<Sent>()
///     .add_systems(PostUpdate, walk.before(AoiSystems::First))
///     .add_systems(PostUpdate, replicate.after(AoiSystems::Last));
/// app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0)));
/// app.world_mut().spawn((Position::new(-11.0, 0.0), Walker));
/// app.update();
/// assert_eq!(app.world().resource::<Sent>().0, 1, "the walk should bring the two within 10");
/// ```
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AoiSystems {
    /// Runs first: systems that move entities for this frame's AOI go before it. Empty, except
    /// with the `transform` feature, where it copies `GlobalTransform` into `Position` for
    /// `AoiTransformSync` entities (after transform propagation).
    First,
    /// Picks up moved, added, removed and re-ranged entities and moves them in the grid. When it
    /// ends, the index holds this frame's positions; `InterestSet`s still hold last frame's.
    UpdateIndex,
    /// Recomputes the interest of the changed entities. When it ends, every
    /// [`InterestSet`](crate::InterestSet) and [`Watchers`](crate::Watchers) is exact for this
    /// frame's positions and rules (the [`Watched`](crate::Watched) marker changes are queued
    /// as commands, visible to systems after [`AoiSystems::Last`]).
    ComputeInterest,
    /// Writes [`EnterView`]/[`LeaveView`]/[`TierChanged`] (and triggers them, if enabled). When
    /// it ends, this frame's messages are readable.
    WriteMessages,
    /// Runs last. Empty, except with the `replicon` feature's `AoiReplicationPlugin`, which
    /// updates replicon's client visibility here (in `PostUpdate`): when it ends, every client
    /// is set to receive exactly what its observers see.
    Last,
}

/// Adds area-of-interest management: [`Position`](crate::Position),
/// [`ViewRange`](crate::ViewRange), [`ViewRect`](crate::ViewRect) and
/// [`InterestSet`](crate::InterestSet) components, the
/// [`EnterView`]/[`LeaveView`]/[`TierChanged`] messages, the view-model components
/// ([`ViewHysteresis`](crate::ViewHysteresis), [`EnterBudget`](crate::EnterBudget),
/// [`ViewTiers`](crate::ViewTiers)) and the [`AoiSystems`] that keep them.
///
/// The fields are build-time choices; runtime tunables are in [`AoiSettings`]. A bad value
/// panics when the plugin is built, with a message saying how to fix it. With the
/// `bevy_reflect` feature (default) it also registers the crate's public components,
/// resources and messages for reflection.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// App::new().add_plugins(AoiPlugin {
///     plane: Plane::XZ,
///     cell_size: CellSize::Fixed(50.0),
///     ..AoiPlugin::new(FixedPostUpdate)
/// });
/// ```
#[derive(Clone, Debug)]
pub struct AoiPlugin {
    /// The schedule the AOI runs in. Default `PostUpdate` (always runs); use `FixedPostUpdate`
    /// when the game drives fixed time (without `bevy_time`, `Fixed*` schedules never run).
    pub schedule: Interned<dyn ScheduleLabel>,
    /// How neighbours are found. Default [`IndexKind::Grid`].
    pub index: IndexKind,
    /// Grid cell side. Default [`CellSize::Auto`].
    pub cell_size: CellSize,
    /// Which axes are used. Default [`Plane::XY`].
    pub plane: Plane,
    /// World bounds. Default `None` (unbounded).
    pub bounds: Option<AoiBounds>,
    /// Also trigger every message as an [`EntityEvent`] on its observer. Default `false`
    /// (triggering costs about twice as much as writing the message).
    pub entity_events: bool,
    /// Keep the [`Watched`](crate::Watched) marker on targets seen by observers of the chosen
    /// layers. Default `None` (no marker, no counting).
    pub watched: Option<WatchedRule>,
    /// Keep every observer's [`InterestSet`](crate::InterestSet). Default `true`.
    ///
    /// With `false` the plugin writes no `InterestSet` (they stay empty) and only the messages (and
    /// [`Watchers`](crate::Watchers), [`Watched`](crate::Watched)) say who sees what: for games
    /// that read [`EnterView`]/[`LeaveView`] and keep what they need themselves, as the classic AOI
    /// libraries' enter and leave callbacks do. Keeping the sets sorted costs 8 bytes per visible
    /// pair and, where much moves, a good share of the update: measured on one thread (`README.md`,
    /// "Messages only"), the own cost without them is 0.58 to 0.73 times the default's in the
    /// uniform and 5% moving worlds, and about 0.4 times in a crowd. The view-model components
    /// ([`ViewHysteresis`](crate::ViewHysteresis), [`EnterBudget`](crate::EnterBudget),
    /// [`ViewTiers`](crate::ViewTiers)) decide what a set shows, so they need the sets: without
    /// them, an observer that has one is bad input (kept out of the index, with a warning logged
    /// once). The `replicon` feature's `AoiReplicationPlugin` reads the sets and panics when it is
    /// built beside `false`.
    pub interest_sets: bool,
}

impl Default for AoiPlugin {
    fn default() -> Self {
        Self::new(PostUpdate)
    }
}

impl AoiPlugin {
    /// The plugin with default settings, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            index: IndexKind::Grid,
            cell_size: CellSize::Auto,
            plane: Plane::XY,
            bounds: None,
            entity_events: false,
            watched: None,
            interest_sets: true,
        }
    }
}

impl Plugin for AoiPlugin {
    fn build(&self, app: &mut App) {
        validate(self.cell_size, self.bounds, self.plane);
        #[cfg(feature = "bevy_reflect")]
        app.register_type::<crate::Position>()
            .register_type::<crate::ViewRange>()
            .register_type::<crate::ViewRect>()
            .register_type::<crate::InterestSet>()
            .register_type::<crate::AoiLayers>()
            .register_type::<crate::AoiVisibility>()
            .register_type::<crate::AoiInstance>()
            .register_type::<crate::Watchers>()
            .register_type::<crate::Watched>()
            .register_type::<AoiSettings>()
            .register_type::<AoiStats>()
            .register_type::<crate::ViewHysteresis>()
            .register_type::<crate::EnterBudget>()
            .register_type::<crate::ViewTiers>()
            .register_type::<EnterView>()
            .register_type::<LeaveView>()
            .register_type::<crate::EnterReason>()
            .register_type::<crate::LeaveReason>()
            .register_type::<TierChanged>();
        #[cfg(all(feature = "bevy_reflect", feature = "transform"))]
        app.register_type::<crate::AoiTransformSync>();
        app.add_message::<EnterView>()
            .add_message::<LeaveView>()
            .add_message::<TierChanged>()
            .init_resource::<ViewLayer>()
            .init_resource::<AoiSettings>()
            .init_resource::<AoiStats>()
            .init_resource::<PendingRemovals>()
            .init_resource::<PendingWatchers>()
            .init_resource::<AoiPairEngine>()
            .insert_resource(AoiIndex::new(
                self.plane,
                self.index,
                self.cell_size,
                self.bounds,
                self.interest_sets,
            ));
        if let Some(rule) = self.watched {
            app.insert_resource(WatchTracker::new(rule));
        }
        for schedule in [self.schedule, PostStartup.intern()] {
            app.configure_sets(
                schedule,
                (
                    AoiSystems::First,
                    AoiSystems::UpdateIndex,
                    AoiSystems::ComputeInterest,
                    AoiSystems::WriteMessages,
                    AoiSystems::Last,
                )
                    .chain(),
            )
            .add_systems(
                schedule,
                (
                    update_index.in_set(AoiSystems::UpdateIndex),
                    (
                        compute_interest,
                        update_view_layer,
                        update_watchers,
                        crate::self_check::self_check,
                    )
                        .chain()
                        .in_set(AoiSystems::ComputeInterest),
                    write_messages.in_set(AoiSystems::WriteMessages),
                ),
            );
            #[cfg(feature = "transform")]
            app.add_systems(
                schedule,
                crate::transform::sync_positions
                    .after(bevy_transform::TransformSystems::Propagate)
                    .in_set(AoiSystems::First),
            );
            // Systems with commands cost a sync point each update: only add them when they have
            // work to do.
            if self.watched.is_some() {
                app.add_systems(
                    schedule,
                    update_watched
                        .after(update_watchers)
                        .in_set(AoiSystems::ComputeInterest),
                );
            }
            if self.entity_events {
                app.add_systems(
                    schedule,
                    trigger_messages
                        .before(write_messages)
                        .in_set(AoiSystems::WriteMessages),
                );
            }
        }
    }
}
