//! The [`Watched`] marker feature: the marker and its rule, the counts behind it (how many
//! observers of the chosen layers see each target, and which targets linger before losing the
//! marker, [`WatchTracker`]) and the system that inserts and removes it, [`update_watched`].
//! The pair engine and the view layer count as they edit the observers' lists; the tracker is a
//! resource only when [`AoiPlugin::watched`](crate::AoiPlugin::watched) is set.

use bevy_ecs::prelude::*;

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

/// One entity index's count. A target owns the entry of its index while its generation is the
/// entry's: an entity index is live for one entity at a time, so an entry left by a despawned
/// entity is taken over when a new one of the same index is first counted.
#[derive(Default, Clone, Copy)]
struct State {
    /// The generation of the entity the entry belongs to (`Entity::generation`).
    generation: u32,
    /// Observers of the chosen layers that see the target now.
    count: u32,
    /// The AOI update since which nobody of the chosen layers sees it (while `quiet`).
    quiet_since: u32,
    /// Whether nobody of the chosen layers has seen it since `quiet_since`.
    quiet: bool,
    /// Whether the marker is (being) inserted.
    marked: bool,
    /// Whether it is in this update's touched list.
    touched: bool,
}

/// Counts per target, one entry per entity index up to the highest index counted (16 bytes
/// each). A resource only when the plugin keeps the marker.
///
/// Measured (`scenario --watched`: uniform 50k, every observer counting, one thread, pinned,
/// three alternating runs): 31.1-33.4 ms an update with the counts in a hash map keyed by
/// entity and a touched entry per count, 29.1-30.5 ms per entity index with each target touched
/// once, 26.3-27.1 ms without the marker.
#[derive(Resource)]
pub(crate) struct WatchTracker {
    rule: WatchedRule,
    /// AOI updates ended so far, wrapping (only differences are read).
    tick: u32,
    states: Vec<State>,
    /// The targets whose count changed this update, each once.
    touched: Vec<Entity>,
    /// The targets that lost their last counting observer, with the update they lost it in.
    lingering: Vec<(Entity, u32)>,
}

impl WatchTracker {
    pub fn new(rule: WatchedRule) -> Self {
        Self {
            rule,
            tick: 0,
            states: Vec::new(),
            touched: Vec::new(),
            lingering: Vec::new(),
        }
    }

    /// Whether an observer in the `member` layers counts.
    #[inline]
    pub fn counts(&self, member: u32) -> bool {
        member & self.rule.by_layers != 0
    }

    /// One more counting observer sees `target`.
    pub fn inc(&mut self, target: Entity) {
        let (i, generation) = (target.index_u32() as usize, target.generation().to_bits());
        if i >= self.states.len() {
            self.states.resize(i + 1, State::default());
        }
        let state = &mut self.states[i];
        if state.generation != generation {
            // The entry's entity is gone (only one entity of an index is live at a time).
            *state = State {
                generation,
                ..State::default()
            };
        }
        state.count += 1;
        if !state.touched {
            state.touched = true;
            self.touched.push(target);
        }
    }

    /// One counting observer fewer sees `target`. Nothing if its entry was taken over: then
    /// `target` is gone, and its count with it.
    pub fn dec(&mut self, target: Entity) {
        let Some(state) = own_state(&mut self.states, target) else {
            return;
        };
        state.count = state
            .count
            .checked_sub(1)
            .expect("a target losing a watcher should have been counted");
        if !state.touched {
            state.touched = true;
            self.touched.push(target);
        }
    }

    /// Ends one AOI update: inserts the marker on newly watched targets, starts the countdown
    /// of newly unwatched ones, and removes the marker where the countdown ran out.
    pub fn finish(&mut self, commands: &mut Commands) {
        self.tick = self.tick.wrapping_add(1);
        let tick = self.tick;
        for e in self.touched.drain(..) {
            let Some(state) = own_state(&mut self.states, e) else {
                continue;
            };
            state.touched = false;
            if state.count > 0 {
                state.quiet = false;
                if !state.marked {
                    state.marked = true;
                    commands.entity(e).try_insert(Watched);
                }
            } else if state.marked && !state.quiet {
                (state.quiet, state.quiet_since) = (true, tick);
                self.lingering.push((e, tick));
            }
        }
        let linger = self.rule.linger_ticks;
        let states = &mut self.states;
        self.lingering.retain(|&(e, since)| {
            let Some(state) = own_state(states, e) else {
                return false;
            };
            if !(state.quiet && state.quiet_since == since) {
                return false;
            }
            if tick.wrapping_sub(since) < linger {
                return true;
            }
            (state.marked, state.quiet) = (false, false);
            commands.entity(e).try_remove::<Watched>();
            false
        });
    }
}

/// `target`'s entry in `states`, if it is still its own.
fn own_state(states: &mut [State], target: Entity) -> Option<&mut State> {
    let state = states.get_mut(target.index_u32() as usize)?;
    (state.generation == target.generation().to_bits()).then_some(state)
}

#[cfg(test)]
mod tests {
    use bevy_ecs::world::CommandQueue;

    use super::*;

    /// A tracker that counts every observer, lingering one update.
    fn tracker() -> WatchTracker {
        WatchTracker::new(WatchedRule {
            by_layers: u32::MAX,
            linger_ticks: 1,
        })
    }

    /// Ends an update (the commands go to an empty world: only the tracker is looked at).
    fn finish(watch: &mut WatchTracker) {
        let (world, mut queue) = (World::new(), CommandQueue::default());
        watch.finish(&mut Commands::new(&mut queue, &world));
    }

    /// Whether `e` is (being) marked, and how many counting observers see it (`None`: its entry
    /// is another entity's).
    fn marked(watch: &WatchTracker, e: Entity) -> Option<(bool, u32)> {
        let state = watch.states.get(e.index_u32() as usize)?;
        (state.generation == e.generation().to_bits()).then_some((state.marked, state.count))
    }

    fn entity(index: u32, generation: u32) -> Entity {
        let first = Entity::from_raw_u32(index).expect("a small index should make a valid entity");
        Entity::from_index_and_generation(first.index(), first.generation().after_versions(generation))
    }

    #[test]
    fn counts_mark_and_linger() {
        let (mut watch, a) = (tracker(), entity(3, 0));
        watch.inc(a);
        watch.inc(a);
        watch.dec(a);
        finish(&mut watch);
        assert_eq!(marked(&watch, a), Some((true, 1)), "one observer still sees it: marked");
        watch.dec(a);
        finish(&mut watch);
        assert_eq!(
            marked(&watch, a),
            Some((true, 0)),
            "the first quiet update should keep it (linger 1)"
        );
        finish(&mut watch);
        assert_eq!(
            marked(&watch, a),
            Some((false, 0)),
            "the second quiet update should unmark it"
        );
        assert!(
            watch.lingering.is_empty() && watch.touched.is_empty(),
            "nothing should be left"
        );
    }

    /// A despawned target's index reused by a new entity in the same update, its leaves counted
    /// after or before the newcomer's enters: the newcomer's count is its own.
    #[test]
    fn a_reused_index_counts_the_new_entity_alone() {
        for old_leaves_first in [false, true] {
            let (mut watch, old, new) = (tracker(), entity(5, 0), entity(5, 1));
            watch.inc(old);
            watch.inc(old);
            finish(&mut watch);
            if old_leaves_first {
                watch.dec(old);
                watch.dec(old);
                watch.inc(new);
            } else {
                watch.inc(new);
                watch.dec(old);
                watch.dec(old);
            }
            finish(&mut watch);
            assert_eq!(
                marked(&watch, new),
                Some((true, 1)),
                "the newcomer is seen once (old first: {old_leaves_first})"
            );
            assert_eq!(
                marked(&watch, old),
                None,
                "the gone entity's entry should be the newcomer's"
            );
            watch.dec(new);
            finish(&mut watch);
            finish(&mut watch);
            assert_eq!(
                marked(&watch, new),
                Some((false, 0)),
                "the newcomer should linger, then go unmarked"
            );
            assert!(
                watch.lingering.is_empty(),
                "no countdown should be left (old first: {old_leaves_first})"
            );
        }
    }
}
