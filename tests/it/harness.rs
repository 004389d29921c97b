//! A headless app wrapped with a brute-force oracle that checks the whole contract after every
//! update, and a seeded random scenario driver.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};

use crate::{
    model::{self, Allowed, Features},
    reasons::{self, Moment, Moments},
};

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
    /// The view-model state of observers with view-model components.
    model: BTreeMap<Entity, model::Observer>,
    /// After this update: the tiers of observers with view-model components (others: all 0),
    /// their waiting counts, and the tier changes of targets that stayed.
    tiers: BTreeMap<Entity, BTreeMap<Entity, u8>>,
    prev_tiers: BTreeMap<Entity, BTreeMap<Entity, u8>>,
    waiting: BTreeMap<Entity, usize>,
    tier_changes: model::TierChanges,
    tier_cursor: MessageCursor<TierChanged>,
    /// Every tracked entity as the reasons see it, after the previous update and after this one.
    before: Moments,
    now: Moments,
    /// This update's enters of targets that waited for their observer's budget.
    after_waiting: BTreeSet<(Entity, Entity)>,
    /// Whether `before` is what the AOI saw (not after [`Self::update_lenient`], where user code
    /// changed the world after the AOI ran).
    reasons_known: bool,
    /// How many messages gave each reason so far (checked ones only).
    pub enter_reasons: BTreeMap<EnterReason, usize>,
    pub leave_reasons: BTreeMap<LeaveReason, usize>,
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
            model: BTreeMap::new(),
            tiers: BTreeMap::new(),
            prev_tiers: BTreeMap::new(),
            waiting: BTreeMap::new(),
            tier_changes: Vec::new(),
            tier_cursor: MessageCursor::default(),
            before: Moments::new(),
            now: Moments::new(),
            after_waiting: BTreeSet::new(),
            reasons_known: true,
            enter_reasons: BTreeMap::new(),
            leave_reasons: BTreeMap::new(),
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
    fn indexed(
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
        // components of an observer are bad input too.
        let bad = |v: f32| v.is_nan() || v < 0.0;
        match (range, rect) {
            (Some(_), Some(_)) => return None,
            (Some(r), None) if bad(r.radius) => return None,
            (None, Some(v)) if bad(v.half_width) || bad(v.half_height) || dims == 3 => return None,
            (Some(_), None) | (None, Some(_)) if features.bad() => return None,
            _ => {}
        }
        Some(p)
    }

    /// Brute force: every observer's exact set, applying the visibility rules, and for
    /// observers with view-model components the model's set ([`crate::model`]), whose tiers,
    /// waiting counts and tier changes it records.
    fn oracle(&mut self) -> BTreeMap<Entity, BTreeSet<Entity>> {
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
                modelled.insert(*o, model);
            }
            out.insert(*o, set);
        }
        // Observers without features, or no longer observing, leave the model.
        self.model = modelled;
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
            let got: Vec<Entity> = set.iter().collect();
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "InterestSet of {e} should iterate in ascending order, without duplicates"
            );
            assert_eq!(set.len(), got.len(), "len should count the entries of {e}");
            assert_eq!(set.iter().len(), got.len(), "iter's exact size should be len for {e}");
            // What it sees now and what it saw (so removals are asked about too).
            let saw = self.prev.get(&e).into_iter().flatten();
            assert!(
                got.iter()
                    .chain(saw)
                    .all(|t| set.contains(*t) == got.binary_search(t).is_ok()),
                "contains should agree with iter for {e}, for what it sees and what it saw"
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
        self.check_view_model();
        self.check_reasons();
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
        self.prev_tiers = core::mem::take(&mut self.tiers);
        self.before = core::mem::take(&mut self.now);
        self.reasons_known = true;
    }

    /// The tier of `target` for `observer` in `tiers` (0 for observers without view-model
    /// components).
    fn tier_in(tiers: &BTreeMap<Entity, BTreeMap<Entity, u8>>, observer: Entity, target: Entity) -> u8 {
        tiers.get(&observer).and_then(|t| t.get(&target)).copied().unwrap_or(0)
    }

    /// The view-model clauses: every set's tiers and waiting count, the tiers the messages
    /// carry, and the tier changes (read before [`Self::read_messages`], which consumes the
    /// enters and leaves: this reads its own cursors' copies).
    fn check_view_model(&mut self) {
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
    }

    /// Every message's reason is the oracle's ([`reasons`]; enters of targets that waited for the
    /// budget say so). Read from copies of the cursors, like [`Self::check_view_model`].
    fn check_reasons(&mut self) {
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
        self.reasons_known = false;
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
