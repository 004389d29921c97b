//! Bookkeeping for the [`Watched`] marker: how many observers of the chosen
//! layers see each target, and which targets are lingering before losing the marker.

use bevy_ecs::{entity::EntityHashMap, prelude::*};

use crate::rules::{Watched, WatchedRule};

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
pub(crate) struct WatchTracker {
    pub rule: WatchedRule,
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
