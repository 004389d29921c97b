// The README is the crate guide (one source for both): its examples run as doctests.
#![doc = include_str!("../README.md")]
mod bits;
mod components;
mod config;
mod explain;
mod grid;
mod index;
mod lists;
mod messages;
mod pair_engine;
mod parallel;
mod plugin;
mod prefetch;
mod radix;
#[cfg(feature = "replicon")]
mod replicon;
mod rules;
mod scan;
mod self_check;
mod settings;
mod slot;
mod systems;
#[cfg(test)]
mod test_draws;
#[cfg(feature = "transform")]
mod transform;
mod view_model;
mod visibility;
mod watched;
mod watchers;
mod wide;

pub use components::{InterestSet, InterestSetIter, Position, ViewRange, ViewRect};
pub use config::{AoiBounds, CellSize, IndexKind, Plane};
pub use explain::{AoiWorldExt, ViewExplanation};
pub use messages::{EnterReason, EnterView, LeaveReason, LeaveView, TierChanged};
pub use plugin::{AoiPlugin, AoiSystems};
#[cfg(feature = "replicon")]
pub use replicon::{AoiClient, AoiReplicationPlugin};
pub use rules::{AoiInstance, AoiLayers, AoiVisibility};
pub use settings::{AoiSettings, AoiStats};
#[cfg(feature = "transform")]
pub use transform::AoiTransformSync;
pub use view_model::{EnterBudget, ViewHysteresis, ViewTiers};
pub use watched::{Watched, WatchedRule};
pub use watchers::Watchers;

/// Everything a game needs: `use bevy_aoi::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "transform")]
    pub use crate::AoiTransformSync;
    pub use crate::{
        AoiBounds, AoiInstance, AoiLayers, AoiPlugin, AoiSettings, AoiStats, AoiSystems, AoiVisibility, AoiWorldExt,
        CellSize, EnterBudget, EnterReason, EnterView, IndexKind, InterestSet, LeaveReason, LeaveView, Plane, Position,
        TierChanged, ViewExplanation, ViewHysteresis, ViewRange, ViewRect, ViewTiers, Watched, WatchedRule, Watchers,
    };
    #[cfg(feature = "replicon")]
    pub use crate::{AoiClient, AoiReplicationPlugin};
}
