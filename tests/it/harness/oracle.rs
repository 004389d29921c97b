//! The brute-force oracle: which entities the index must hold, and every observer's exact set.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use super::Checked;
use crate::{
    model::{self, Allowed, Features},
    reasons::Moment,
};

impl Checked {
    /// The projected point the oracle uses, or `None` if the entity must be out of the index.
    pub(super) fn indexed(
        &self,
        pos: &Position,
        range: Option<&ViewRange>,
        rect: Option<&ViewRect>,
        features: &Features,
    ) -> Option<[f32; 3]> {
        let p = match self.plugin.plane {
            Plane::XY => [pos.x, pos.y, 0.0],
            Plane::XZ => [pos.x, pos.z, 0.0],
            Plane::XYZ => [pos.x, pos.y, pos.z],
        };
        let dims = if self.plugin.plane == Plane::XYZ { 3 } else { 2 };
        if !p.iter().all(|c| c.is_finite()) {
            return None;
        }
        if let Some(b) = self.plugin.bounds {
            for (i, c) in p.iter().enumerate().take(dims) {
                let size = b.max[i] - b.min[i];
                if *c < b.min[i] - size || *c > b.max[i] + size {
                    return None;
                }
            }
        }
        // Every radius and half extent from 0 to +inf is valid; negative and NaN are not. A
        // rectangle needs a 2D plane, and an entity has one view or the other. Bad view-model
        // components of an observer are bad input too, and any when the plugin keeps no sets.
        let bad = |v: f32| v.is_nan() || v < 0.0;
        match (range, rect) {
            (Some(_), Some(_)) => return None,
            (Some(r), None) if bad(r.radius) => return None,
            (None, Some(v)) if bad(v.half_width) || bad(v.half_height) || dims == 3 => return None,
            (Some(_), None) | (None, Some(_)) if features.bad() => return None,
            (Some(_), None) | (None, Some(_)) if features.any() && !self.plugin.interest_sets => return None,
            _ => {}
        }
        Some(p)
    }

    /// Brute force: every observer's exact set, applying the visibility rules, and for
    /// observers with view-model components the model's set ([`crate::model`]), whose tiers,
    /// waiting counts and tier changes it records.
    pub(super) fn oracle(&mut self) -> BTreeMap<Entity, BTreeSet<Entity>> {
        type Row = (
            Entity,
            Position,
            Option<ViewRange>,
            Option<ViewRect>,
            AoiLayers,
            AoiVisibility,
            u32,
            Features,
        );
        let mut q = self.app.world_mut().query::<(
            Entity,
            &Position,
            (Option<&ViewRange>, Option<&ViewRect>),
            Option<&AoiLayers>,
            Option<&AoiVisibility>,
            Option<&AoiInstance>,
            (Option<&ViewHysteresis>, Option<&EnterBudget>, Option<&ViewTiers>),
        )>();
        let all: Vec<Row> = q
            .iter(self.app.world())
            .map(|(e, p, (r, rect), l, v, i, (h, b, t))| {
                (
                    e,
                    *p,
                    r.copied(),
                    rect.copied(),
                    l.copied().unwrap_or_default(),
                    v.copied().unwrap_or_default(),
                    i.map_or(0, |i| i.0),
                    Features {
                        hysteresis: h.copied(),
                        budget: b.copied(),
                        tiers: t.cloned(),
                    },
                )
            })
            .collect();
        self.now = all
            .iter()
            .map(|(e, p, r, rect, layers, mode, instance, features)| {
                let indexed = self.indexed(p, r.as_ref(), rect.as_ref(), features).is_some();
                let moment = Moment {
                    indexed,
                    observer: indexed && (r.is_some() || rect.is_some()),
                    layers: *layers,
                    mode: *mode,
                    instance: *instance,
                };
                (*e, moment)
            })
            .collect();
        self.after_waiting.clear();
        let targets: Vec<(&Row, [f32; 3])> = all
            .iter()
            .filter_map(|row| {
                self.indexed(&row.1, row.2.as_ref(), row.3.as_ref(), &row.7)
                    .map(|q| (row, q))
            })
            .collect();
        // The first update runs the AOI twice (`PostStartup`, then the main schedule).
        let passes = if self.log.is_empty() { 2 } else { 1 };
        let mut out = BTreeMap::new();
        let mut modelled = BTreeMap::new();
        self.tiers.clear();
        self.waiting.clear();
        self.held = 0;
        self.tier_changes.clear();
        for (o, p, r, rect, layers, _, instance, features) in &all {
            if r.is_none() && rect.is_none() {
                continue;
            }
            let mut set = BTreeSet::new();
            // Given back without features: the targets that waited for the budget enter.
            let handed_back = self.model.get(o).filter(|_| !features.any());
            let waited = handed_back.map(|m| m.waited.clone()).unwrap_or_default();
            let Some(po) = self.indexed(p, r.as_ref(), rect.as_ref(), features) else {
                out.insert(*o, set);
                continue;
            };
            let margin = features.margin();
            let mut allowed = Vec::new();
            for ((t, _, _, _, t_layers, t_mode, t_instance, _), pt) in &targets {
                let (dx, dy, dz) = (po[0] - pt[0], po[1] - pt[1], po[2] - pt[2]);
                let d2 = dx * dx + dy * dy + dz * dz;
                // A disc: the squared distance against the squared radius. A rectangle: each
                // axis of the plane against its half extent. `grow` widens the view.
                let inside = |grow: f32| match (r, rect) {
                    (Some(r), _) => d2 <= (r.radius + grow) * (r.radius + grow),
                    (None, Some(v)) => dx.abs() <= v.half_width + grow && dy.abs() <= v.half_height + grow,
                    (None, None) => unreachable!("an observer should have a view"),
                };
                let by_distance = match t_mode {
                    AoiVisibility::Hidden => continue,
                    AoiVisibility::Always => false,
                    AoiVisibility::Normal => true,
                };
                if t == o || t_instance != instance || (layers.sees & t_layers.member) == 0 {
                    continue;
                }
                if !features.any() {
                    if !by_distance || inside(0.0) {
                        set.insert(*t);
                        if waited.contains(t) {
                            self.after_waiting.insert((*o, *t));
                        }
                    }
                    continue;
                }
                // Tier rings: discs for a radius, squares for a rectangle.
                let square = rect.is_some() && r.is_none();
                allowed.push(Allowed {
                    target: *t,
                    d2,
                    inside: !by_distance || inside(0.0),
                    inside_grown: !by_distance || inside(margin),
                    within: Box::new(move |d: f32| {
                        if square {
                            dx.abs() <= d && dy.abs() <= d
                        } else {
                            d2 <= d * d
                        }
                    }),
                });
            }
            if features.any() {
                let mut model = self
                    .model
                    .remove(o)
                    .unwrap_or_else(|| model::Observer::handed_over(self.prev.get(o).into_iter().flatten().copied()));
                for _ in 0..passes {
                    let step = model.update(*o, features, &allowed);
                    self.tier_changes.extend(step.tier_changes);
                    self.after_waiting
                        .extend(step.after_waiting.into_iter().map(|t| (*o, t)));
                }
                set.extend(model.shown.keys().copied());
                self.tiers
                    .insert(*o, model.shown.iter().map(|(t, s)| (*t, s.tier)).collect());
                self.waiting.insert(*o, model.waiting);
                let beyond_view: BTreeSet<Entity> = (allowed.iter()).filter(|a| !a.inside).map(|a| a.target).collect();
                self.held += model.shown.keys().filter(|t| beyond_view.contains(t)).count();
                modelled.insert(*o, model);
            }
            out.insert(*o, set);
        }
        // Observers without features, or no longer observing, leave the model.
        self.model = modelled;
        out
    }
}
