//! The oracle's model of the view-model features (hysteresis, enter budget, tiers), written
//! from the rules in the crate's docs, one update at a time, independently of the plugin's code.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_ecs::entity::Entity;

/// An observer's view-model components, as the oracle reads them.
#[derive(Clone, Debug, Default)]
pub struct Features {
    pub hysteresis: Option<ViewHysteresis>,
    pub budget: Option<EnterBudget>,
    pub tiers: Option<ViewTiers>,
}

impl Features {
    /// Whether any feature is on (the observer's sets follow the model, not the plain rule).
    pub fn any(&self) -> bool {
        self.hysteresis.is_some() || self.budget.is_some() || self.tiers.is_some()
    }

    /// Whether the components are bad input (the entity is kept out of the index).
    pub fn bad(&self) -> bool {
        let bad_margin = self.hysteresis.is_some_and(|h| h.margin.is_nan() || h.margin < 0.0);
        let bad_tiers = self.tiers.as_ref().is_some_and(|t| {
            t.thresholds.len() > 255 || t.thresholds.iter().any(|d| d.is_nan() || *d < 0.0) || !t.thresholds.is_sorted()
        });
        bad_margin || bad_tiers
    }

    pub fn margin(&self) -> f32 {
        self.hysteresis.map_or(0.0, |h| h.margin)
    }

    fn thresholds(&self) -> &[f32] {
        self.tiers.as_ref().map_or(&[], |t| &t.thresholds)
    }
}

/// One target the rules allow an observer to see (instance, layers, not hidden), where the
/// distance decides.
pub struct Allowed {
    pub target: Entity,
    /// Squared distance on the plane (or in the volume).
    pub d2: f32,
    /// Within the view (the contract's test; `Always` targets always).
    pub inside: bool,
    /// Within the view grown by the margin (`Always` targets always).
    pub inside_grown: bool,
    /// Whether it is within the disc or square of side `d` (`beyond(d)` is its negation).
    pub within: Box<dyn Fn(f32) -> bool>,
}

/// A shown target's state.
#[derive(Clone, Copy, Debug)]
pub struct Shown {
    /// Consecutive updates beyond the grown view.
    pub out_for: u32,
    pub tier: u8,
}

/// What an observer with features shows, carried from update to update.
#[derive(Clone, Debug, Default)]
pub struct Observer {
    pub shown: BTreeMap<Entity, Shown>,
    pub waiting: usize,
    /// The targets waiting for the budget after the last update.
    pub waited: BTreeSet<Entity>,
}

/// One update of an observer: the tier changes of targets that stay, and the targets that
/// entered after waiting for the budget.
pub struct Step {
    pub tier_changes: TierChanges,
    pub after_waiting: Vec<Entity>,
}

/// One update's tier changes of targets that stay, `(observer, target, tier)`.
pub type TierChanges = Vec<(Entity, Entity, u8)>;

impl Observer {
    /// Starts from what the observer showed before it had features (all in tier 0).
    pub fn handed_over(shown: impl IntoIterator<Item = Entity>) -> Self {
        Self {
            shown: shown.into_iter().map(|t| (t, Shown { out_for: 0, tier: 0 })).collect(),
            waiting: 0,
            waited: BTreeSet::new(),
        }
    }

    /// One update: `allowed` are the targets the rules allow now (anything else shown leaves at
    /// once).
    pub fn update(&mut self, me: Entity, features: &Features, allowed: &[Allowed]) -> Step {
        let by_target: BTreeMap<Entity, &Allowed> = allowed.iter().map(|a| (a.target, a)).collect();
        let linger = features.hysteresis.map_or(0, |h| h.linger_ticks);
        let margin = features.margin();
        let thresholds = features.thresholds();
        let mut changes = Vec::new();
        let mut next = BTreeMap::new();
        for (&t, &s) in &self.shown {
            let Some(a) = by_target.get(&t) else { continue };
            let out_for = if a.inside_grown { 0 } else { s.out_for + 1 };
            if out_for > linger {
                continue;
            }
            // Step by step: nearer while within the next threshold in, farther while beyond the
            // next threshold out plus the margin.
            let mut tier = s.tier as usize;
            tier = tier.min(thresholds.len());
            while tier > 0 && (a.within)(thresholds[tier - 1]) {
                tier -= 1;
            }
            while tier < thresholds.len() && !(a.within)(thresholds[tier] + margin) {
                tier += 1;
            }
            if tier as u8 != s.tier {
                changes.push((me, t, tier as u8));
            }
            next.insert(
                t,
                Shown {
                    out_for,
                    tier: tier as u8,
                },
            );
        }
        let mut candidates: Vec<&Allowed> = allowed
            .iter()
            .filter(|a| a.inside && !self.shown.contains_key(&a.target))
            .collect();
        candidates.sort_by(|a, b| a.d2.partial_cmp(&b.d2).unwrap().then(a.target.cmp(&b.target)));
        let budget = features.budget.map_or(usize::MAX, |b| b.0 as usize);
        let mut after_waiting = Vec::new();
        for a in candidates.iter().take(budget) {
            let tier = thresholds.iter().filter(|&&d| !(a.within)(d)).count() as u8;
            next.insert(a.target, Shown { out_for: 0, tier });
            if self.waited.contains(&a.target) {
                after_waiting.push(a.target);
            }
        }
        self.waiting = candidates.len().saturating_sub(budget);
        self.waited = candidates.iter().skip(budget).map(|a| a.target).collect();
        self.shown = next;
        Step {
            tier_changes: changes,
            after_waiting,
        }
    }
}
