//! A headless app wrapped with a brute-force oracle ([`oracle`]) that checks the whole contract
//! after every update (the sets here, the rest in [`checks`]), and a seeded random scenario
//! driver ([`scenario`]).

use std::collections::{BTreeMap, BTreeSet};

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};

use crate::{model, reasons::Moments};

pub use crate::workload::Rng;
pub use scenario::Scenario;

mod checks;
mod oracle;
mod scenario;

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

/// Moves every entity by `step(i)` (`i`: its index in query order; one given no step is left
/// unchanged), so most of the work of the next update is recomputation.
pub fn drift(world: &mut World, step: impl Fn(usize) -> (f32, f32)) {
    let mut q = world.query::<&mut Position>();
    for (i, mut p) in q.iter_mut(world).enumerate() {
        let (dx, dy) = step(i);
        // A zero step leaves the component unchanged (not even marked changed).
        if (dx, dy) != (0.0, 0.0) {
            p.x += dx;
            p.y += dy;
        }
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
    /// their waiting counts, how many targets they show beyond their view (held), and the tier
    /// changes of targets that stayed.
    tiers: BTreeMap<Entity, BTreeMap<Entity, u8>>,
    prev_tiers: BTreeMap<Entity, BTreeMap<Entity, u8>>,
    waiting: BTreeMap<Entity, usize>,
    held: usize,
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
            held: 0,
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
            if !self.plugin.interest_sets {
                // The messages (checked below) are all there is.
                assert!(
                    got.is_empty(),
                    "with `interest_sets: false` the InterestSet of {e} should stay empty"
                );
                continue;
            }
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
        for (o, want) in self.prev.iter().filter(|_| self.plugin.interest_sets) {
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

    /// Whether the messages so far leave `(observer, target)` open (entered and not left).
    pub fn opened(&self, observer: Entity, target: Entity) -> bool {
        self.pairs.contains(&(observer, target))
    }
}
