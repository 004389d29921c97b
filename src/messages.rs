//! [`EnterView`] and [`LeaveView`]: what changed in the interest sets this update.
//!
//! Both are written once per update, in [`AoiSystems::WriteMessages`](crate::AoiSystems), in a
//! deterministic order (the same inputs give the same sequence, whatever the thread count). For
//! every `(observer, target)` pair the stream alternates enter, leave, enter, ...; a pair whose
//! observer or target is despawned, loses its component or becomes bad input gets its
//! [`LeaveView`] in the same update, so enters and leaves always balance. A `LeaveView` may thus
//! name an entity that no longer exists: use `commands.get_entity`, not `entity`, on it.
//!
//! # Reading them
//! - **In batches** (the usual way, and the cheap one: ~16 ns a message): a system with
//!   `MessageReader<EnterView>` either ordered `.after(AoiSystems::Last)` in the plugin's schedule
//!   (same frame) or in any schedule of the next frame (e.g. `Update`). Messages live for two
//!   frames: a reader that runs less often than every other update loses some.
//! - **Per entity**: with [`AoiPlugin::entity_events`](crate::AoiPlugin::entity_events) on, each
//!   message is also triggered as an [`EntityEvent`] targeting the observer, so an observer
//!   (`On<EnterView>`) attached to a player entity hears only what that player sees. The triggers
//!   are queued as commands inside [`AoiSystems::WriteMessages`](crate::AoiSystems) and applied
//!   before the batch is written, so entity observers run before any `MessageReader` sees it.
//!   Inside an observer system, `ev.observer()` is the *observer system's* entity; the AOI observer
//!   is the field, `ev.event().observer`.
//!
//! ```
//! use bevy_app::prelude::*;
//! use bevy_ecs::prelude::*;
//! use bevy_aoi::prelude::*;
//!
//! #[derive(Resource, Default)]
//! struct Seen(Vec<(Entity, Entity)>);
//!
//! fn record(mut enters: MessageReader<EnterView>, mut seen: ResMut<Seen>) {
//!     seen.0.extend(enters.read().map(|e| (e.observer, e.target)));
//! }
//!
//! let mut app = App::new();
//! app.add_plugins(AoiPlugin::default())
//!     .init_resource::<Seen>()
//!     .add_systems(PostUpdate, record.after(AoiSystems::Last));
//! let a = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
//! let b = app.world_mut().spawn(Position::new(3.0, 4.0)).id();
//! app.update();
//! assert_eq!(app.world().resource::<Seen>().0, vec![(a, b)], "a should see b, 5 units away");
//! ```

use bevy_ecs::prelude::*;

/// `observer` started seeing `target` this update.
///
/// A [`Message`] (read with `MessageReader<EnterView>`) and, when
/// [`AoiPlugin::entity_events`](crate::AoiPlugin::entity_events) is on, also an [`EntityEvent`]
/// triggered on `observer`.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub struct EnterView {
    /// The observer, the entity with the [`ViewRange`](crate::ViewRange) or
    /// [`ViewRect`](crate::ViewRect) (the event target).
    #[event_target]
    pub observer: Entity,
    /// The entity it now sees.
    pub target: Entity,
    /// The target's distance tier ([`ViewTiers`](crate::ViewTiers)): 0 is the nearest ring; always
    /// 0 for an observer without tiers.
    pub tier: u8,
}

/// `observer` stopped seeing `target` this update (moved apart, range shrank, either side lost
/// its components or was despawned).
///
/// Same delivery as [`EnterView`].
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub struct LeaveView {
    /// The observer, the entity with the [`ViewRange`](crate::ViewRange) or
    /// [`ViewRect`](crate::ViewRect) (the event target; may be despawned).
    #[event_target]
    pub observer: Entity,
    /// The entity it no longer sees (may be despawned).
    pub target: Entity,
    /// The tier the target was in until now ([`ViewTiers`](crate::ViewTiers)); always 0 for an
    /// observer without tiers.
    pub tier: u8,
}

/// A target `observer` keeps seeing moved to another distance tier of its
/// [`ViewTiers`](crate::ViewTiers) this update (enters and leaves carry their tier instead).
///
/// Written in [`AoiSystems::WriteMessages`](crate::AoiSystems) after the update's
/// [`EnterView`]s and [`LeaveView`]s, in a deterministic order; same delivery as [`EnterView`].
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub struct TierChanged {
    /// The observer, the entity with the [`ViewTiers`](crate::ViewTiers) (the event target).
    #[event_target]
    pub observer: Entity,
    /// The target it sees.
    pub target: Entity,
    /// Its tier now (0 is the nearest ring).
    pub tier: u8,
}
