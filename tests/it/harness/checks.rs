//! The checks of one update beyond the sets: `Watchers`, `Watched`, the view model's tiers and
//! waiting counts, the messages' reasons and their alternation per pair.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use super::{Checked, Pairs};
use crate::{model, reasons};

impl Checked {
    /// Checks every `Watchers` against the oracle's sets.
    pub(super) fn check_watchers(&mut self, expected: &BTreeMap<Entity, BTreeSet<Entity>>) {
        let mut q = self.app.world_mut().query::<(Entity, &Watchers)>();
        for (t, w) in q.iter(self.app.world()) {
            let mut got: Vec<Entity> = w.iter().collect();
            got.sort();
            let want: Vec<Entity> = expected
                .iter()
                .filter(|(_, s)| s.contains(&t))
                .map(|(o, _)| *o)
                .collect();
            assert_eq!(got, want, "Watchers of {t} should be exactly the observers that see it");
        }
    }

    /// Advances the `Watched` oracle by this update's AOI passes and checks the markers.
    pub(super) fn check_watched(&mut self, expected: &BTreeMap<Entity, BTreeSet<Entity>>) {
        let passes = if self.passes == 0 { 2 } else { 1 };
        let Some(rule) = self.plugin.watched else {
            self.passes += passes;
            return;
        };
        let mut q = self.app.world_mut().query::<(Entity, Option<&AoiLayers>)>();
        let counting: BTreeSet<Entity> = q
            .iter(self.app.world())
            .filter(|(_, l)| l.copied().unwrap_or_default().member & rule.by_layers != 0)
            .map(|(e, _)| e)
            .collect();
        let seen: BTreeSet<Entity> = expected
            .iter()
            .filter(|(o, _)| counting.contains(o))
            .flat_map(|(_, s)| s.iter().copied())
            .collect();
        for _ in 0..passes {
            self.passes += 1;
            for t in &seen {
                self.watched.insert(*t, (true, None));
            }
            for (t, (marked, quiet)) in self.watched.iter_mut() {
                if seen.contains(t) || !*marked {
                    continue;
                }
                let since = *quiet.get_or_insert(self.passes);
                if self.passes - since >= u64::from(rule.linger_ticks) {
                    *marked = false;
                    *quiet = None;
                }
            }
            self.watched.retain(|_, (marked, _)| *marked);
        }
        let mut q = self.app.world_mut().query::<(Entity, Has<Watched>)>();
        for (e, has) in q.iter(self.app.world()) {
            let want = self.watched.get(&e).is_some_and(|(marked, _)| *marked);
            assert_eq!(
                has,
                want,
                "{e} should {}be Watched after pass {}",
                if want { "" } else { "not " },
                self.passes
            );
        }
    }

    /// The tier of `target` for `observer` in `tiers` (0 for observers without view-model
    /// components).
    pub(super) fn tier_in(tiers: &BTreeMap<Entity, BTreeMap<Entity, u8>>, observer: Entity, target: Entity) -> u8 {
        tiers.get(&observer).and_then(|t| t.get(&target)).copied().unwrap_or(0)
    }

    /// The view-model clauses: every set's tiers and waiting count, the tiers the messages carry,
    /// the held count, and the tier changes (read before [`Self::read_messages`], which consumes
    /// the enters and leaves: this reads its own cursors' copies).
    pub(super) fn check_view_model(&mut self) {
        let world = self.app.world();
        let mut q = world
            .try_query::<(Entity, &InterestSet)>()
            .expect("InterestSet should be registered");
        for (o, set) in q.iter(world) {
            for (t, tier) in set.iter_with_tiers() {
                assert_eq!(
                    tier,
                    Self::tier_in(&self.tiers, o, t),
                    "{o} should show {t} in the model's tier"
                );
            }
            let waiting = self.waiting.get(&o).copied().unwrap_or(0);
            assert_eq!(
                set.waiting(),
                waiting,
                "{o} should have as many targets waiting as the model"
            );
        }
        let mut enters = self.enters.clone();
        for m in enters.read(world.resource::<Messages<EnterView>>()) {
            let want = Self::tier_in(&self.tiers, m.observer, m.target);
            assert_eq!(m.tier, want, "{m:?} should carry the tier its target entered in");
        }
        let mut leaves = self.leaves.clone();
        for m in leaves.read(world.resource::<Messages<LeaveView>>()) {
            let want = Self::tier_in(&self.prev_tiers, m.observer, m.target);
            assert_eq!(m.tier, want, "{m:?} should carry the tier its target had");
        }
        let mut got: model::TierChanges = self
            .tier_cursor
            .read(world.resource::<Messages<TierChanged>>())
            .map(|m| (m.observer, m.target, m.tier))
            .collect();
        got.sort();
        let mut want = self.tier_changes.clone();
        want.sort();
        assert_eq!(
            got, want,
            "TierChanged messages should be exactly the model's tier changes"
        );
        let stats = world.resource::<AoiStats>();
        assert_eq!(
            stats.waiting,
            self.waiting.values().sum::<usize>(),
            "AoiStats::waiting should total the waiting targets"
        );
        assert_eq!(
            stats.held, self.held,
            "AoiStats::held should count the shown targets beyond their observer's view"
        );
    }

    /// Every message's reason is the oracle's ([`reasons`]; enters of targets that waited for the
    /// budget say so). Read from copies of the cursors, like [`Self::check_view_model`].
    pub(super) fn check_reasons(&mut self) {
        if !self.reasons_known {
            return;
        }
        let world = self.app.world();
        let mut enters = self.enters.clone();
        for m in enters.read(world.resource::<Messages<EnterView>>()) {
            let want = if self.after_waiting.contains(&(m.observer, m.target)) {
                EnterReason::WaitedForBudget
            } else {
                reasons::enter(&self.before, &self.now, m.observer, m.target)
            };
            assert_eq!(m.reason, want, "{m:?} should give the oracle's reason");
            *self.enter_reasons.entry(want).or_default() += 1;
        }
        let mut leaves = self.leaves.clone();
        for m in leaves.read(world.resource::<Messages<LeaveView>>()) {
            let want = reasons::leave(&self.before, &self.now, m.observer, m.target);
            assert_eq!(m.reason, want, "{m:?} should give the oracle's reason");
            *self.leave_reasons.entry(want).or_default() += 1;
        }
    }

    /// This update's messages, as `(observer, target)` pairs in message order.
    pub(super) fn read_messages(&mut self) -> (Pairs, Pairs) {
        let world = self.app.world();
        let enters = self
            .enters
            .read(world.resource::<Messages<EnterView>>())
            .map(|m| (m.observer, m.target))
            .collect();
        let leaves = self
            .leaves
            .read(world.resource::<Messages<LeaveView>>())
            .map(|m| (m.observer, m.target))
            .collect();
        (enters, leaves)
    }

    /// Per pair, enters and leaves alternate (from the messages alone).
    pub(super) fn check_alternation(&mut self, enters: &Pairs, leaves: &Pairs) {
        for pair in leaves {
            assert!(
                self.pairs.remove(pair),
                "LeaveView {pair:?} should follow an EnterView of the same pair"
            );
        }
        for &pair in enters {
            assert!(
                self.pairs.insert(pair),
                "EnterView {pair:?} should not repeat without a LeaveView between"
            );
        }
    }
}
