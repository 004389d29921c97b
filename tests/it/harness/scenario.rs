//! The seeded random scenario driver: spawns, moves, teleports, component changes and despawns.

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use super::{Draws, Rng};

/// Random actions over a population, driven by a seed. `scale` is the world size.
#[derive(Clone)]
pub struct Scenario {
    pub rng: Rng,
    pub entities: Vec<Entity>,
    pub scale: f32,
    pub radius: f32,
    /// Grid step where points are snapped to exercise cell borders (0: no snapping).
    pub snap: f32,
    pub plane: Plane,
}

impl Scenario {
    pub fn new(seed: u64, scale: f32, radius: f32, snap: f32, plane: Plane) -> Self {
        Self {
            rng: Rng(seed),
            entities: Vec::new(),
            scale,
            radius,
            snap,
            plane,
        }
    }

    fn coord(&mut self) -> f32 {
        let v = self.rng.range(-self.scale, self.scale);
        if self.snap > 0.0 && self.rng.chance(0.3) {
            (v / self.snap).round() * self.snap
        } else {
            v
        }
    }

    pub fn point(&mut self) -> Position {
        let (x, y, z) = (self.coord(), self.coord(), self.coord());
        match self.plane {
            Plane::XY => Position::new(x, y),
            _ => Position::new_3d(x, y, z),
        }
    }

    fn some(&mut self) -> Option<Entity> {
        (!self.entities.is_empty()).then(|| self.entities[self.rng.below(self.entities.len())])
    }

    fn range(&mut self) -> ViewRange {
        let r = match self.rng.below(100) {
            0..=9 => 0.0,
            10..=19 => self.radius * 4.0,
            // Unlimited, and finite radii whose square overflows (they see the whole instance).
            20 => f32::INFINITY,
            21 => f32::MAX,
            22 => 1.0e30,
            _ => self.rng.range(0.2, 1.5) * self.radius,
        };
        ViewRange::new(r)
    }

    /// A rectangular view: mostly about the radius's size, sometimes flat, zero or unlimited on
    /// one axis, now and then bad.
    fn rect(&mut self) -> ViewRect {
        let mut side = || match self.rng.below(100) {
            0..=7 => 0.0,
            8..=11 => f32::INFINITY,
            12 => f32::NAN,
            13 => -1.0,
            _ => self.rng.range(0.1, 1.5) * self.radius,
        };
        ViewRect::new(side(), side())
    }

    pub fn spawn(&mut self, world: &mut World) -> Entity {
        let p = self.point();
        let e = if self.rng.chance(0.6) {
            // A fifth of the observers see a rectangle, in the planes that have one.
            if self.plane != Plane::XYZ && self.rng.chance(0.2) {
                let v = self.rect();
                world.spawn((p, v)).id()
            } else {
                let r = self.range();
                world.spawn((p, r)).id()
            }
        } else {
            world.spawn(p).id()
        };
        self.entities.push(e);
        e
    }

    /// A point exactly on `e`'s view boundary: `r` away along the first axis, or on an edge or
    /// a corner of its rectangle.
    fn boundary_of(&mut self, world: &World, e: Entity) -> Option<Position> {
        let p = *world.get::<Position>(e)?;
        if let Some(v) = world.get::<ViewRect>(e) {
            let (dx, dy) = match self.rng.below(3) {
                0 => (v.half_width, 0.0),
                1 => (0.0, -v.half_height),
                _ => (-v.half_width, v.half_height),
            };
            return Some(match self.plane {
                Plane::XZ => Position::new_3d(p.x + dx, p.y, p.z + dy),
                _ => Position::new_3d(p.x + dx, p.y + dy, p.z),
            });
        }
        let mut r = world.get::<ViewRange>(e)?.radius;
        // Or on a tier threshold, or a threshold or the radius plus the hysteresis margin.
        if let Some(tiers) = world.get::<ViewTiers>(e).filter(|t| !t.thresholds.is_empty())
            && self.rng.chance(0.5)
        {
            r = tiers.thresholds[self.rng.below(tiers.thresholds.len())];
        }
        if let Some(h) = world.get::<ViewHysteresis>(e)
            && self.rng.chance(0.5)
        {
            r += h.margin;
        }
        Some(Position::new_3d(p.x + r, p.y, p.z))
    }

    /// A few random changes of the visibility rules: layers, hidden/always, instances, and
    /// `Watchers` added or removed.
    /// Returns how many changes it made.
    pub fn step_rules(&mut self, world: &mut World) -> usize {
        const MEMBERS: [u32; 3] = [1, 2, 4];
        const SEES: [u32; 5] = [1, 2 | 4, 7, 0, u32::MAX];
        let n = self.rng.below(4);
        for done in 0..n {
            let Some(e) = self.some() else { return done };
            match self.rng.below(9) {
                0 | 1 => {
                    let layers = AoiLayers::new(MEMBERS[self.rng.below(3)], SEES[self.rng.below(5)]);
                    world.entity_mut(e).insert(layers);
                }
                2 => {
                    world.entity_mut(e).remove::<AoiLayers>();
                }
                3 => {
                    let modes = [AoiVisibility::Normal, AoiVisibility::Hidden, AoiVisibility::Always];
                    let mut mode = modes[self.rng.below(3)];
                    // Always is for a few entities: keep it rare.
                    if mode == AoiVisibility::Always && self.rng.chance(0.5) {
                        mode = AoiVisibility::Normal;
                    }
                    world.entity_mut(e).insert(mode);
                }
                4 => {
                    world.entity_mut(e).remove::<AoiVisibility>();
                }
                5 => {
                    let instance = AoiInstance(self.rng.below(3) as u32);
                    world.entity_mut(e).insert(instance);
                }
                6 => {
                    world.entity_mut(e).remove::<AoiInstance>();
                }
                7 => {
                    world.entity_mut(e).insert(Watchers::default());
                }
                _ => {
                    world.entity_mut(e).remove::<Watchers>();
                }
            }
        }
        n
    }

    /// Random view-model features: one of hysteresis (margins from 0 to unlimited, lingers of
    /// 0 to 3 updates), an enter budget (0 to 5) or tiers, now and then bad.
    fn features(&mut self) -> (Option<ViewHysteresis>, Option<EnterBudget>, Option<ViewTiers>) {
        match self.rng.below(3) {
            0 => {
                let margin = match self.rng.below(20) {
                    0 => 0.0,
                    1 => f32::INFINITY,
                    2 => f32::NAN,
                    3 => -1.0,
                    _ => self.rng.range(0.0, 0.5) * self.radius,
                };
                let linger_ticks = self.rng.below(4) as u32;
                (Some(ViewHysteresis { margin, linger_ticks }), None, None)
            }
            1 => (None, Some(EnterBudget(self.rng.below(6) as u32)), None),
            _ => {
                let n = self.rng.below(4);
                let mut thresholds: Vec<f32> = (0..n).map(|_| self.rng.range(0.0, 1.2) * self.radius).collect();
                thresholds.sort_by(f32::total_cmp);
                if self.rng.chance(0.05) {
                    thresholds.reverse();
                    thresholds.push(f32::NAN);
                }
                (None, None, Some(ViewTiers::new(thresholds)))
            }
        }
    }

    /// A few random changes of view-model features (hysteresis, budgets, tiers): added on top of
    /// what an entity has, replaced, or removed. Returns how many changes it made.
    pub fn step_view_model(&mut self, world: &mut World) -> usize {
        let n = self.rng.below(4);
        for done in 0..n {
            let Some(e) = self.some() else { return done };
            let mut entity = world.entity_mut(e);
            match self.rng.below(5) {
                0 => {
                    entity.remove::<ViewHysteresis>();
                }
                1 => {
                    entity.remove::<EnterBudget>();
                }
                2 => {
                    entity.remove::<ViewTiers>();
                }
                _ => {
                    let (h, b, t) = self.features();
                    let mut entity = world.entity_mut(e);
                    if let Some(h) = h {
                        entity.insert(h);
                    }
                    if let Some(b) = b {
                        entity.insert(b);
                    }
                    if let Some(t) = t {
                        entity.insert(t);
                    }
                }
            }
        }
        n
    }

    /// One tick of random changes; returns how many it made.
    pub fn step(&mut self, world: &mut World) -> usize {
        let n = self.rng.below(12);
        for _ in 0..n {
            let action = self.rng.below(100);
            let Some(e) = self.some() else {
                self.spawn(world);
                continue;
            };
            match action {
                0..=34 => {
                    // small move
                    if let Some(mut p) = world.get_mut::<Position>(e) {
                        let d = self.radius * 0.3;
                        p.x += self.rng.range(-d, d);
                        p.y += self.rng.range(-d, d);
                        p.z += self.rng.range(-d, d);
                    }
                }
                35..=44 => {
                    let p = self.point();
                    if let Some(mut pos) = world.get_mut::<Position>(e) {
                        *pos = p;
                    }
                }
                45..=52 => {
                    self.spawn(world);
                }
                53..=58 => {
                    world.despawn(e);
                    self.entities.retain(|x| *x != e);
                }
                59..=62 => {
                    let r = self.range();
                    if let Some(mut v) = world.get_mut::<ViewRange>(e) {
                        *v = r;
                    }
                }
                63 => {
                    // A rectangle on top of whatever it has (with a radius: bad input).
                    let v = self.rect();
                    world.entity_mut(e).insert(v);
                }
                64 => {
                    world.entity_mut(e).remove::<ViewRect>();
                }
                65 => {
                    let v = self.rect();
                    if let Some(mut old) = world.get_mut::<ViewRect>(e) {
                        *old = v;
                    }
                }
                66 => {
                    // Swap a radius for a rectangle, or back.
                    if world.get::<ViewRect>(e).is_some() {
                        let r = self.range();
                        world.entity_mut(e).remove::<ViewRect>().insert(r);
                    } else {
                        let v = self.rect();
                        world.entity_mut(e).remove::<ViewRange>().insert(v);
                    }
                }
                67..=70 => {
                    world.entity_mut(e).remove::<Position>();
                }
                71..=74 => {
                    let p = self.point();
                    world.entity_mut(e).insert(p);
                }
                75..=78 => {
                    world.entity_mut(e).remove::<ViewRange>();
                }
                79..=82 => {
                    let r = self.range();
                    world.entity_mut(e).insert(r);
                }
                83..=86 => {
                    // exactly on someone's view boundary
                    if let Some(o) = self.some()
                        && let Some(p) = self.boundary_of(world, o)
                        && let Some(mut pos) = world.get_mut::<Position>(e)
                    {
                        *pos = p;
                    }
                }
                87..=89 => {
                    // bad input, fixed later by other actions
                    if self.rng.chance(0.5) {
                        let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][self.rng.below(3)];
                        if let Some(mut p) = world.get_mut::<Position>(e) {
                            p.x = bad;
                        }
                    } else if let Some(mut v) = world.get_mut::<ViewRange>(e) {
                        v.radius = [f32::NAN, -1.0, f32::NEG_INFINITY][self.rng.below(3)];
                    }
                }
                90..=93 => {
                    // touch without changing
                    if let Some(mut p) = world.get_mut::<Position>(e) {
                        p.set_changed();
                    }
                }
                _ => {
                    // despawn and respawn in the same tick
                    world.despawn(e);
                    self.entities.retain(|x| *x != e);
                    self.spawn(world);
                }
            }
        }
        n
    }
}
