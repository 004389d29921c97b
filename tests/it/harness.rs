//! A headless app wrapped with a brute-force oracle that checks the whole contract after every
//! update, and a seeded random scenario driver.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};

pub use crate::workload::Rng;

/// Draws the scenarios need on top of the benchmarks' `SplitMix64`.
pub trait Draws {
    /// A whole number in `0..n`.
    fn below(&mut self, n: usize) -> usize;
    /// A number in `lo..hi`.
    fn range(&mut self, lo: f32, hi: f32) -> f32;
    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool;
}

impl Draws for Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.u01() * n as f64) as usize
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.u01() as f32
    }
    fn chance(&mut self, p: f64) -> bool {
        self.u01() < p
    }
}

/// Moves every entity by `step(i)` (`i`: its index in query order), so most of the work of
/// the next update is recomputation.
pub fn drift(world: &mut World, step: impl Fn(usize) -> (f32, f32)) {
    let mut q = world.query::<&mut Position>();
    for (i, mut p) in q.iter_mut(world).enumerate() {
        let (dx, dy) = step(i);
        p.x += dx;
        p.y += dy;
    }
}

/// `(observer, target)` pairs in message order.
pub type Pairs = Vec<(Entity, Entity)>;
/// Every observer with its set, in iteration order.
pub type SetsInOrder = Vec<(Entity, Vec<Entity>)>;

/// Both indexes: the oracle tests run their scenarios on each.
pub const INDEXES: [IndexKind; 2] = [IndexKind::Grid, IndexKind::SortedAxes];

/// `plugin` on each of the [`INDEXES`].
pub fn on_each_index(plugin: &AoiPlugin) -> impl Iterator<Item = AoiPlugin> + '_ {
    INDEXES.into_iter().map(|index| AoiPlugin {
        index,
        ..plugin.clone()
    })
}

/// An app under test plus the oracle's memory of the previous update.
pub struct Checked {
    pub app: App,
    pub plugin: AoiPlugin,
    enters: MessageCursor<EnterView>,
    leaves: MessageCursor<LeaveView>,
    /// Oracle's sets after the previous update, per observer.
    prev: BTreeMap<Entity, BTreeSet<Entity>>,
    /// Pair state rebuilt from the messages alone.
    pairs: BTreeSet<(Entity, Entity)>,
    /// AOI passes so far (the first update runs two: `PostStartup` and the main schedule).
    passes: u64,
    /// Oracle of the `Watched` marker: per target, whether it is marked and since which pass
    /// nobody of the chosen layers sees it.
    watched: BTreeMap<Entity, (bool, Option<u64>)>,
    /// Every message seen, in order, per update (for determinism checks).
    pub log: Vec<(Pairs, Pairs)>,
    /// Every observer's set in iteration order, per update (for determinism checks).
    pub sets_log: Vec<SetsInOrder>,
    pub total_enters: usize,
    pub total_leaves: usize,
}

impl Checked {
    pub fn new(plugin: AoiPlugin) -> Self {
        let mut app = App::new();
        app.add_plugins(plugin.clone());
        Self {
            app,
            plugin,
            enters: MessageCursor::default(),
            leaves: MessageCursor::default(),
            prev: BTreeMap::new(),
            pairs: BTreeSet::new(),
            passes: 0,
            watched: BTreeMap::new(),
            log: Vec::new(),
            sets_log: Vec::new(),
            total_enters: 0,
            total_leaves: 0,
        }
    }

    pub fn world(&mut self) -> &mut World {
        self.app.world_mut()
    }

    /// The projected point the oracle uses, or `None` if the entity must be out of the index.
    fn indexed(&self, pos: &Position, range: Option<&ViewRange>, rect: Option<&ViewRect>) -> Option<[f32; 3]> {
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
        // rectangle needs a 2D plane, and an entity has one view or the other.
        let bad = |v: f32| v.is_nan() || v < 0.0;
        match (range, rect) {
            (Some(_), Some(_)) => return None,
            (Some(r), None) if bad(r.radius) => return None,
            (None, Some(v)) if bad(v.half_width) || bad(v.half_height) || dims == 3 => return None,
            _ => {}
        }
        Some(p)
    }

    /// Brute force: every observer's exact set, applying the visibility rules.
    fn oracle(&mut self) -> BTreeMap<Entity, BTreeSet<Entity>> {
        type Row = (
            Entity,
            Position,
            Option<ViewRange>,
            Option<ViewRect>,
            AoiLayers,
            AoiVisibility,
            u32,
        );
        let mut q = self.app.world_mut().query::<(
            Entity,
            &Position,
            Option<&ViewRange>,
            Option<&ViewRect>,
            Option<&AoiLayers>,
            Option<&AoiVisibility>,
            Option<&AoiInstance>,
        )>();
        let all: Vec<Row> = q
            .iter(self.app.world())
            .map(|(e, p, r, rect, l, v, i)| {
                (
                    e,
                    *p,
                    r.copied(),
                    rect.copied(),
                    l.copied().unwrap_or_default(),
                    v.copied().unwrap_or_default(),
                    i.map_or(0, |i| i.0),
                )
            })
            .collect();
        let targets: Vec<(&Row, [f32; 3])> = all
            .iter()
            .filter_map(|row| self.indexed(&row.1, row.2.as_ref(), row.3.as_ref()).map(|q| (row, q)))
            .collect();
        let mut out = BTreeMap::new();
        for (o, p, r, rect, layers, _, instance) in &all {
            if r.is_none() && rect.is_none() {
                continue;
            }
            let mut set = BTreeSet::new();
            if let Some(po) = self.indexed(p, r.as_ref(), rect.as_ref()) {
                for ((t, _, _, _, t_layers, t_mode, t_instance), pt) in &targets {
                    let (dx, dy, dz) = (po[0] - pt[0], po[1] - pt[1], po[2] - pt[2]);
                    // A disc: the squared distance against the squared radius. A rectangle: each
                    // axis of the plane against its half extent.
                    let inside = match (r, rect) {
                        (Some(r), _) => dx * dx + dy * dy + dz * dz <= r.radius * r.radius,
                        (None, Some(v)) => dx.abs() <= v.half_width && dy.abs() <= v.half_height,
                        (None, None) => unreachable!("an observer should have a view"),
                    };
                    let near = match t_mode {
                        AoiVisibility::Hidden => false,
                        AoiVisibility::Always => true,
                        AoiVisibility::Normal => inside,
                    };
                    if t != o && t_instance == instance && (layers.sees & t_layers.member) != 0 && near {
                        set.insert(*t);
                    }
                }
            }
            out.insert(*o, set);
        }
        out
    }

    /// Checks every `Watchers` against the oracle's sets.
    fn check_watchers(&mut self, expected: &BTreeMap<Entity, BTreeSet<Entity>>) {
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
    fn check_watched(&mut self, expected: &BTreeMap<Entity, BTreeSet<Entity>>) {
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

    /// Runs one update and checks the whole contract.
    pub fn update(&mut self) {
        self.app.update();
        let expected = self.oracle();
        // 1. Exact sets.
        let mut q = self
            .app
            .world_mut()
            .query::<(Entity, &InterestSet, Has<ViewRange>, Has<ViewRect>)>();
        let mut order = Vec::new();
        for (e, set, range, rect) in q.iter(self.app.world()) {
            let observer = range || rect;
            order.push((e, set.iter().collect()));
            let mut got: Vec<Entity> = set.iter().collect();
            got.sort();
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "InterestSet of {e} should hold no duplicates"
            );
            assert_eq!(set.len(), got.len(), "len should count the entries of {e}");
            assert!(
                got.iter().all(|t| set.contains(*t)),
                "contains should agree with iter for {e}"
            );
            let want: Vec<Entity> = expected
                .get(&e)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            if observer {
                assert_eq!(
                    got, want,
                    "InterestSet of observer {e} should equal the brute-force set"
                );
            } else {
                assert!(
                    got.is_empty(),
                    "{e} lost its ViewRange or ViewRect, so its InterestSet should be empty"
                );
            }
            for t in &got {
                assert!(
                    self.app.world().get_entity(*t).is_ok(),
                    "InterestSet of {e} should not name despawned {t}"
                );
            }
        }
        // 2. Messages are exactly the diff.
        let (enters, leaves) = self.read_messages();
        let mut want_enters = Vec::new();
        let mut want_leaves = Vec::new();
        let empty = BTreeSet::new();
        let observers: BTreeSet<Entity> = expected.keys().chain(self.prev.keys()).copied().collect();
        for o in observers {
            let now = expected.get(&o).unwrap_or(&empty);
            let before = self.prev.get(&o).unwrap_or(&empty);
            want_enters.extend(now.difference(before).map(|t| (o, *t)));
            want_leaves.extend(before.difference(now).map(|t| (o, *t)));
        }
        let mut got_enters = enters.clone();
        let mut got_leaves = leaves.clone();
        got_enters.sort();
        got_leaves.sort();
        assert_eq!(
            got_enters, want_enters,
            "EnterView messages should be exactly the new pairs"
        );
        assert_eq!(
            got_leaves, want_leaves,
            "LeaveView messages should be exactly the lost pairs"
        );
        // 3. Alternation per pair, from the messages alone.
        self.check_alternation(&enters, &leaves);
        let live_pairs: BTreeSet<(Entity, Entity)> = expected
            .iter()
            .flat_map(|(o, s)| s.iter().map(move |t| (*o, *t)))
            .collect();
        assert_eq!(
            self.pairs, live_pairs,
            "pairs opened by messages should be exactly the visible pairs"
        );
        self.total_enters += enters.len();
        self.total_leaves += leaves.len();
        self.check_watchers(&expected);
        self.check_watched(&expected);
        self.log.push((enters, leaves));
        self.sets_log.push(order);
        self.prev = expected;
    }

    /// This update's messages, as `(observer, target)` pairs in message order.
    fn read_messages(&mut self) -> (Pairs, Pairs) {
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
    fn check_alternation(&mut self, enters: &Pairs, leaves: &Pairs) {
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

    /// One update in which user code may change the world after the AOI ran (entity-event
    /// observers, systems inside the AOI's sets): checks what must hold at once (per pair,
    /// messages alternate; no set names a despawned entity is *not* required, since a callback
    /// may despawn after the sets were written), and takes the sets as they are, so the next
    /// [`Self::update`] checks that the AOI catches up with everything in one update.
    pub fn update_lenient(&mut self) {
        self.app.update();
        let (enters, leaves) = self.read_messages();
        self.check_alternation(&enters, &leaves);
        self.total_enters += enters.len();
        self.total_leaves += leaves.len();
        // The AOI's view is what the messages opened; observers that still exist hold it in
        // their sets (one despawned by user code lost its set, and gets its leaves next update).
        self.prev = BTreeMap::new();
        for &(o, t) in &self.pairs {
            self.prev.entry(o).or_default().insert(t);
        }
        let world = self.app.world();
        for (o, want) in &self.prev {
            if let Some(set) = world.get::<InterestSet>(*o) {
                let got: BTreeSet<Entity> = set.iter().collect();
                assert_eq!(
                    &got, want,
                    "{o}'s set should hold exactly the pairs the messages opened"
                );
            }
        }
    }

    /// Number of visible pairs now.
    pub fn visible_pairs(&self) -> usize {
        self.pairs.len()
    }
}

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
        let r = world.get::<ViewRange>(e)?.radius;
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
