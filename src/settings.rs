//! Runtime tunables.

use bevy_ecs::prelude::*;

/// Runtime settings of the AOI systems. Added with `init_resource`, so a value inserted before
/// the plugin wins; change it at any time.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.insert_resource(AoiSettings { parallel: false, ..Default::default() })
///     .add_plugins(AoiPlugin::default());
/// assert!(!app.world().resource::<AoiSettings>().parallel, "the user's settings should win");
/// ```
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct AoiSettings {
    /// Spread the recomputation over Bevy's `ComputeTaskPool` (with the `multi_threaded` feature,
    /// and when the pool has more than one thread). The output is identical either way.
    pub parallel: bool,
    /// Updates with fewer changed entities than this run on one thread: below a few hundred,
    /// waking tasks costs more than it saves.
    pub min_parallel_changes: usize,
}

impl Default for AoiSettings {
    fn default() -> Self {
        Self {
            parallel: true,
            min_parallel_changes: 256,
        }
    }
}
