//! [`EnterView`] and [`LeaveView`]: what changed in the interest sets this update, and why
//! ([`EnterReason`], [`LeaveReason`]).
//!
//! How and when to read them, and what their order promises, is on [`EnterView`].

use bevy_ecs::prelude::*;

/// `observer` started seeing `target` this update.
///
/// A [`Message`] (read with `MessageReader<EnterView>`) and, when
/// [`AoiPlugin::entity_events`](crate::AoiPlugin::entity_events) is on, also an [`EntityEvent`]
/// triggered on `observer`.
///
/// Enters and leaves ([`LeaveView`]) are written once per update, in
/// [`AoiSystems::WriteMessages`](crate::AoiSystems), in a deterministic order (the same inputs
/// give the same sequence, whatever the thread count). For every `(observer, target)` pair the
/// stream alternates enter, leave, enter, ...; a pair whose observer or target is despawned,
/// loses its component or becomes bad input gets its [`LeaveView`] in the same update, so enters
/// and leaves always balance. A `LeaveView` may thus name an entity that no longer exists: use
/// `commands.get_entity`, not `entity`, on it.
///
/// # Reading them
/// - **In batches** (the usual way, and the cheap one: ~16 ns a message): a system with
///   `MessageReader<EnterView>` either ordered `.after(AoiSystems::Last)` in the plugin's schedule
///   (same frame) or in any schedule of the next frame (e.g. `Update`). Messages live for two
///   frames: a reader that runs less often than every other update loses some.
/// - **Per entity**: with [`AoiPlugin::entity_events`](crate::AoiPlugin::entity_events) on, each
///   message is also triggered as an [`EntityEvent`] targeting the observer, so an observer
///   (`On<EnterView>`) attached to a player entity hears only what that player sees. The triggers
///   are queued as commands inside [`AoiSystems::WriteMessages`](crate::AoiSystems) and applied
///   before the batch is written, so entity observers run before any `MessageReader` sees it.
///   Inside an observer system, `ev.observer()` is the *observer system's* entity; the AOI observer
///   is the field, `ev.event().observer`.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Seen(Vec<(Entity, Entity)>);
///
/// fn record(mut enters: MessageReader<EnterView>, mut seen: ResMut<Seen>) {
///     seen.0.extend(enters.read().map(|e| (e.observer, e.target)));
/// }
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default())
///     .init_resource::<Seen>()
///     .add_systems(PostUpdate, record.after(AoiSystems::Last));
/// let a = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let b = app.world_mut().spawn(Position::new(3.0, 4.0)).id();
/// app.update();
/// assert_eq!(app.world().resource::<Seen>().0, vec![(a, b)], "a should see b, 5 units away");
/// ```
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
    /// Why it entered.
    pub reason: EnterReason,
}

/// `observer` stopped seeing `target` this update (moved apart, range shrank, rules changed,
/// either side lost its components, was despawned or became bad input: see [`LeaveReason`]).
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
    /// Why it left.
    pub reason: LeaveReason,
}

/// A target `observer` keeps seeing moved to another distance tier of its
/// [`ViewTiers`](crate::ViewTiers) this update (enters and leaves carry their tier instead).
///
/// Written in [`AoiSystems::WriteMessages`](crate::AoiSystems) after the update's
/// [`EnterView`]s and [`LeaveView`]s, in a deterministic order; same delivery as [`EnterView`].
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let tiers = ViewTiers::new([10.0]);
/// let o = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(50.0), tiers)).id();
/// let t = app.world_mut().spawn(Position::new(40.0, 0.0)).id();
/// app.update();
/// app.world_mut().get_mut::<Position>(t).unwrap().x = 5.0;
/// app.update();
/// let changes = app.world().resource::<Messages<TierChanged>>();
/// let changes: Vec<_> = changes.iter_current_update_messages().copied().collect();
/// let walked_in = TierChanged { observer: o, target: t, tier: 0 };
/// assert_eq!(changes, [walked_in], "the target came within 10: the nearest tier");
/// ```
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

/// Why an [`EnterView`] happened: the first of these that applies, judged from the two entities
/// at the start and at the end of the update.
///
/// Each is decided from the pair's two entities alone, so every path (plain observers, view-model
/// observers, the first update) gives the same reason for the same change. Cheap: a pair whose
/// two entities only moved or changed their view costs one lookup per entity.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let player = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let npc = app.world_mut().spawn(Position::new(50.0, 0.0)).id();
/// app.update();
/// app.world_mut().get_mut::<Position>(npc).unwrap().x = 5.0;
/// app.update();
/// let enters = app.world().resource::<Messages<EnterView>>();
/// let last = enters.iter_current_update_messages().last().copied().unwrap();
/// assert_eq!((last.observer, last.target), (player, npc));
/// assert_eq!(last.reason, EnterReason::CameIntoRange, "the npc walked into the player's view");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub enum EnterReason {
    /// The observer's [`EnterBudget`](crate::EnterBudget) held the target back in an earlier
    /// update (it was waiting at the end of the last one).
    WaitedForBudget,
    /// The observer or the target was not in the index at the start of the update: spawned, got
    /// its [`Position`](crate::Position) (the target) or its view component (the observer), or
    /// was bad input until now and is valid again.
    Appeared,
    /// The observer and the target were in different [`AoiInstance`](crate::AoiInstance)s at the
    /// start of the update: one of them moved into the other's.
    InstanceChanged,
    /// What the rules say of the pair changed: the layers now let the observer see the target,
    /// or the target's [`AoiVisibility`](crate::AoiVisibility) changed (from `Hidden`, or to or
    /// from `Always`).
    RulesChanged,
    /// None of the above: the distance decided (one of them moved, or the view grew).
    CameIntoRange,
}

/// Why a [`LeaveView`] happened: the first of these that applies, judged like [`EnterReason`].
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_aoi::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let player = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
/// let npc = app.world_mut().spawn(Position::new(5.0, 0.0)).id();
/// let coin = app.world_mut().spawn(Position::new(1.0, 0.0)).id();
/// app.update();
/// app.world_mut().get_mut::<Position>(npc).unwrap().x = 50.0;
/// app.world_mut().despawn(coin);
/// app.update();
/// let leaves = app.world().resource::<Messages<LeaveView>>();
/// let reason_of = |target| {
///     let leave = leaves.iter_current_update_messages().find(|l| l.target == target).unwrap();
///     assert_eq!(leave.observer, player);
///     leave.reason
/// };
/// assert_eq!(reason_of(npc), LeaveReason::OutOfRange, "the npc walked out of view");
/// assert_eq!(reason_of(coin), LeaveReason::TargetGone, "the coin was despawned");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub enum LeaveReason {
    /// The observer was despawned, lost its [`Position`](crate::Position) or its view component
    /// ([`ViewRange`](crate::ViewRange) or [`ViewRect`](crate::ViewRect)).
    ObserverGone,
    /// The target was despawned or lost its [`Position`](crate::Position).
    TargetGone,
    /// The observer or the target became bad input and was taken out of the index (see the
    /// crate guide, "Bad input at run time").
    BadInput,
    /// The observer and the target are now in different [`AoiInstance`](crate::AoiInstance)s.
    InstanceChanged,
    /// What the rules say of the pair changed: the layers no longer let the observer see the
    /// target, or the target's [`AoiVisibility`](crate::AoiVisibility) changed (to `Hidden`, or
    /// to or from `Always`).
    RulesChanged,
    /// None of the above: the distance decided (one of them moved, or the view shrank). With a
    /// [`ViewHysteresis`](crate::ViewHysteresis), only after the margin and the linger.
    OutOfRange,
}
