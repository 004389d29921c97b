//! # `bevy_aoi`
//!
//! Exact area-of-interest (AOI) management for Bevy game servers and simulations: every observer
//! keeps the set of entities within its view radius, and the plugin says exactly when an entity
//! enters or leaves that set, so the game replicates only what each client sees, wakes monsters
//! when a player comes near, and broadcasts only to those who see.
//!
//! ## Quick reference
//! - [`AoiPlugin`]: add it once; build-time choices (schedule, [`Plane`], [`CellSize`],
//!   [`AoiBounds`], entity events).
//! - [`Position`]: where an entity is; every entity with one is a *target*.
//! - [`ViewRange`]: makes an entity an *observer*; requires [`InterestSet`].
//! - [`InterestSet`]: what the observer sees now (read-only, sorted by [`Entity`](bevy_ecs::entity::Entity),
//!   `contains` is a binary search).
//! - [`EnterView`] / [`LeaveView`]: the changes of this update, as messages (and optionally as
//!   entity events).
//! - [`AoiSystems`]: the public, chained system set to order against.
//! - [`AoiSettings`]: runtime tunables; [`AoiStats`]: what the last update did.
//! - Visibility rules ([`rules`](crate::AoiLayers) module docs): [`AoiLayers`] (who may see
//!   whom), [`AoiVisibility`] (hidden / always visible), [`AoiInstance`] (map instances),
//!   [`Watchers`] (who sees me), [`Watched`] (AI activation marker, see [`WatchedRule`]).
//!
//! ## Quick start
//! ```
//! use bevy_app::prelude::*;
//! use bevy_ecs::prelude::*;
//! use bevy_aoi::prelude::*;
//!
//! fn on_view(mut enters: MessageReader<EnterView>, mut leaves: MessageReader<LeaveView>) {
//!     for e in enters.read() {
//!         println!("{} now sees {}", e.observer, e.target);
//!     }
//!     for l in leaves.read() {
//!         println!("{} no longer sees {}", l.observer, l.target);
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins(AoiPlugin::default()) // runs in PostUpdate by default
//!     .add_systems(Startup, |mut c: Commands| {
//!         c.spawn((Position::new(0.0, 0.0), ViewRange::new(100.0))); // observer (and target)
//!         c.spawn(Position::new(50.0, 0.0)); // target only
//!     })
//!     .add_systems(PostUpdate, on_view.after(AoiSystems::Last));
//! app.update();
//! let mut q = app.world_mut().query::<&InterestSet>();
//! assert_eq!(q.single(app.world()).unwrap().len(), 1, "the observer should see the target on frame 1");
//! ```
//!
//! ## The contract
//! After every update, for every observer with a finite position and a valid radius `r`, its
//! [`InterestSet`] is exactly the other indexed targets at distance `<= r` (in the plugin's
//! plane or volume, computed as `dx*dx + dy*dy (+ dz*dz) <= r*r` in `f32`). The messages written
//! in that update are exactly the difference from the previous sets; per `(observer, target)` pair
//! enters and leaves alternate, including on despawn and component removal; no set names a
//! despawned entity; and the message order is deterministic, whatever the number of threads.
//!
//! ## Scheduling
//! The plugin runs in `PostUpdate` by default ([`AoiPlugin::schedule`]), chained as
//! [`AoiSystems`]. Move entities in `Update`; read messages either in `PostUpdate`
//! `.after(AoiSystems::Last)` (same frame) or in `Update` of the next frame. Messages live for
//! two updates.
//!
//! ## Bad input
//! A non-finite position, a negative/NaN/infinite radius (or one whose square overflows), or a
//! position farther outside the configured [`AoiBounds`] than one bounds size keeps that entity
//! out of the index: it sees nothing, nobody sees it (a pair it was in gets its [`LeaveView`]),
//! and a warning is logged once for that entity. Bad plugin configuration panics at build time.
//!
//! ## Performance
//! Work follows change: an update where nothing moved costs one change-detection scan; an update
//! where `k` entities moved costs in proportion to those `k` neighbourhoods. Memory follows the
//! number of entities, not the map area (cells exist only where entities are). See the README
//! for measured figures. Diagnostics: `RUST_LOG=bevy_aoi=debug`.

mod components;
mod config;
mod grid;
mod index;
mod interest;
mod messages;
mod plugin;
mod rules;
mod scan;
mod settings;
mod slot;
mod systems;
mod visibility;
mod watch;
mod wide;

pub use components::{InterestSet, Position, ViewRange};
pub use config::{AoiBounds, CellSize, Plane};
pub use messages::{EnterView, LeaveView};
pub use plugin::{AoiPlugin, AoiSystems};
pub use rules::{AoiInstance, AoiLayers, AoiVisibility, Watched, WatchedRule, Watchers};
pub use settings::{AoiSettings, AoiStats};

/// Everything a game needs: `use bevy_aoi::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AoiBounds, AoiInstance, AoiLayers, AoiPlugin, AoiSettings, AoiStats, AoiSystems, AoiVisibility, CellSize,
        EnterView, InterestSet, LeaveView, Plane, Position, ViewRange, Watched, WatchedRule, Watchers,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
