//! The [`Watched`] marker feature: the marker and its rule, the counts behind it (how many
//! observers of the chosen layers see each target, and which targets linger before losing the
//! marker, [`WatchTracker`]) and the system that inserts and removes it, [`update_watched`].
//! The pair engine and the view layer count as they edit the observers' lists; the tracker is a
//! resource only when [`AoiPlugin::watched`](crate::AoiPlugin::watched) is set.

use bevy_ecs::{entity::EntityHashMap, prelude::*};

#[cfg(feature = "bevy_reflect")]
use bevy_reflect::std_traits::ReflectDefault;

/// Marker the plugin keeps on targets seen by at least one observer of the layers chosen in
/// [`AoiPlugin::watched`](crate::AoiPlugin::watched). When the last such observer stops seeing
/// it, the marker stays for [`WatchedRule::linger_ticks`] AOI updates in a row without one and
/// is removed in the next ("the monster's AI sleeps a while after the last player leaves").
/// Use it as a query filter: `Query<&mut Brain, With<Watched>>`. Inserted and removed through
/// commands: systems ordered after [`AoiSystems::Last`](crate::AoiSystems::Last), or in the next
/// frame, see the change.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// const PLAYER: u32 = 1 << 0;
/// const MONSTER: u32 = 1 << 1;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin {
///     watched: Some(WatchedRule { by_layers: PLAYER, linger_ticks: 1 }),
///     ..Default::default()
/// });
/// let w = app.world_mut();
/// let player_layers = AoiLayers::new(PLAYER, AoiLayers::ALL);
/// let player = w.spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), player_layers)).id();
/// let monster = w.spawn((Position::new(5.0, 0.0), AoiLayers::new(MONSTER, PLAYER))).id();
/// app.update();
/// let watched = |app: &App| app.world().get::<Watched>(monster).is_some();
/// assert!(watched(&app), "a player sees the monster: it should be watched (its AI awake)");
/// app.world_mut().get_mut::<Position>(player).unwrap().x = 100.0;
/// app.update();
/// assert!(watched(&app), "the first update without a player should keep the marker (linger 1)");
/// app.update();
/// assert!(!watched(&app), "the marker should go once the linger has run out");
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Default, PartialEq)
)]
pub struct Watched;

/// Configuration of the [`Watched`] marker (build time, on the plugin:
/// [`AoiPlugin::watched`](crate::AoiPlugin::watched); [`Watched`] shows it in use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchedRule {
    /// Observers whose [`AoiLayers::member`](crate::AoiLayers::member) shares a bit with this
    /// mask make what they see `Watched` (e.g. the player layer).
    pub by_layers: u32,
    /// AOI updates in a row without such an observer during which the marker stays; it is
    /// removed in the next one (0: removed in the first update without one). The startup pass
    /// counts as one update.
    pub linger_ticks: u32,
}

/// Inserts and removes the [`Watched`] marker from this update's counts (added only with
/// `AoiPlugin::watched`, as the tracker is). Runs every update, changes or not, so the linger
/// counts.
pub(crate) fn update_watched(mut watch: ResMut<WatchTracker>, mut commands: Commands) {
    watch.finish(&mut commands);
}

#[derive(Default, Clone, Copy)]
struct State {
    /// Observers of the chosen layers that see the target now.
    count: u32,
    /// Whether the marker is (being) inserted.
    marked: bool,
    /// The AOI update since which nobody of the chosen layers sees it.
    quiet_since: Option<u64>,
}

/// Counts per target, keyed by entity (only targets that are seen or still marked are stored).
/// A resource only when the plugin keeps the marker.
#[derive(Resource)]
pub(crate) struct WatchTracker {
    rule: WatchedRule,
    tick: u64,
    states: EntityHashMap<State>,
    touched: Vec<Entity>,
    lingering: Vec<(Entity, u64)>,
}

impl WatchTracker {
    pub fn new(rule: WatchedRule) -> Self {
        Self {
            rule,
            tick: 0,
            states: EntityHashMap::default(),
            touched: Vec::new(),
            lingering: Vec::new(),
        }
    }

    /// Whether an observer in the `member` layers counts.
    #[inline]
    pub fn counts(&self, member: u32) -> bool {
        member & self.rule.by_layers != 0
    }

    pub fn inc(&mut self, target: Entity) {
        self.states.entry(target).or_default().count += 1;
        self.touched.push(target);
    }

    pub fn dec(&mut self, target: Entity) {
        let state = self
            .states
            .get_mut(&target)
            .expect("a target losing a watcher should have been counted");
        state.count -= 1;
        self.touched.push(target);
    }

    /// Ends one AOI update: inserts the marker on newly watched targets, starts the countdown
    /// of newly unwatched ones, and removes the marker where the countdown ran out.
    pub fn finish(&mut self, commands: &mut Commands) {
        self.tick += 1;
        let tick = self.tick;
        for e in self.touched.drain(..) {
            let Some(state) = self.states.get_mut(&e) else { continue };
            if state.count > 0 {
                state.quiet_since = None;
                if !state.marked {
                    state.marked = true;
                    commands.entity(e).try_insert(Watched);
                }
            } else if state.marked {
                if state.quiet_since.is_none() {
                    state.quiet_since = Some(tick);
                    self.lingering.push((e, tick));
                }
            } else {
                self.states.remove(&e);
            }
        }
        let linger = u64::from(self.rule.linger_ticks);
        let states = &mut self.states;
        self.lingering.retain(|&(e, since)| {
            let Some(state) = states.get(&e) else { return false };
            if state.quiet_since != Some(since) {
                return false;
            }
            if tick - since < linger {
                return true;
            }
            states.remove(&e);
            commands.entity(e).try_remove::<Watched>();
            false
        });
    }
}
