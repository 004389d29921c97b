//! The flip scan of a stepping observer: both ends of each pair where they were at the start
//! of the tick and where they are now, a pair touched only where the answers differ; where it
//! may, the same distances judge the unchanged observers' views of it as a target. Stepping
//! observers of one cell that take the plain form share their passes over the cells
//! ([`flip_scan_batch`]).

use bevy_ecs::entity::Entity;

use super::{
    Enters, TaskBuffers, View, ask_for,
    avx_twins::avx_twins,
    each_lane, scan_cells,
    target::{ObserverEnds, judge_clean_observers, judge_into, judges_every_seer},
};
use crate::{
    components::merge_targets,
    grid::{BandTest, BothWaysView, Cell, FLIP_BATCH, FlipShape, FlipViews, RectBandTest},
    index::{BandEdge, QuietBands, Seer, TIER_BOUNDS, Touches},
    lists::remove_seen,
    slot::Slot,
    visibility::TargetState,
};

/// A stepping observer's flip scan: each member of its window (a jumped target's pair is decided
/// by that target's own scan) is tested with both ends where they were at the start of the tick
/// and where they are now; where the answers differ the pair enters or leaves, and the list and
/// set are edited in place. Nothing else changed for the pair (same radius, rules, instance), so
/// the start answer is exactly what the list holds. When the observer also scans as a target
/// ([`Slot::flip_scans_as_target`](crate::slot::Slot::flip_scans_as_target)), the same
/// distances judge the clean observers that see it, as its target scan would
/// ([`flip_scan_both_ways`]).
pub(super) fn flip_scan(
    view: View,
    o: u32,
    cells: &[u32],
    list: &mut Vec<u32>,
    set: &mut Vec<Entity>,
    scratch: &mut TaskBuffers,
) {
    let me = &view.slots[o as usize];
    let (now, start) = (me.p, view.starts[o as usize]);
    let banded = band_bounds(view, o).map(|bands| (bands, scratch.flips_so_far()));
    let (mut flips, clean_enters, clean_leaves, seers) = scratch.flips(view, o, list);
    // Both ends tested four members at a time over the cells' positions, as a disc or as a
    // rectangle.
    let shape = flip_shape(me);
    let with_z = view.grid.with_z();
    // As a target: where the clean observers of a cell see it (the target scan's test, from the
    // same distances), judged as its target scan would.
    let before = TargetState {
        p: start,
        ..me.target()
    };
    let mut judge = judge_into(
        o,
        (me.target(), before),
        view.touches,
        (clean_enters, clean_leaves, seers),
    );
    let extent = me.scan_extent(start, view.step_reach);
    if me.flip_scans_as_target() {
        flip_scan_both_ways(view, cells, extent, &mut flips, &mut judge);
    } else {
        scan_cells(view, me, cells, extent, |cell, range| {
            cell.pos.flips(range, now, start, shape, with_z, |first, bits, inside| {
                flips.record(cell, first, bits, inside);
            });
        });
    }
    flips.merge(set);
    drop(judge);
    if let Some(banded) = banded {
        record_band_crossings(view, o, cells, banded, scratch);
    }
}

avx_twins! {
    /// [`flip_scan_batch`]'s tests: observer `i`'s runs of members with a flip, of each of
    /// `cells`, go to row `i` of `runs` (rows of `row` runs), `counts[i]` of them (every run is
    /// written, and kept by counting it only if it flips: no branch on the answers). Where the CPU
    /// has AVX, compiled for it ([`avx_twins`]), so the AVX tests of each run of blocks are
    /// inlined into this loop rather than called for each run: callgrind, one thread, uniform 10k
    /// 50.49 → 49.82 M instructions an update, crowded 2k 59.09 → 58.68 M, 5% moving 50k level.
    fn batch_runs / batch_runs_avx / batch_runs_portable(
        view: View,
        views: FlipViews,
        cells: &[u32],
        runs: &mut [FlipRun],
        row: usize,
        counts: &mut [usize; FLIP_BATCH],
    ) {
        let with_z = view.grid.with_z();
        for &c in cells {
            let cell = &view.grid.cells[c as usize];
            cell.pos.flips_many::<AVX>(views, with_z, |i, first, bits, inside| {
                runs[i * row + counts[i]] = FlipRun {
                    cell: c,
                    first: first as u32,
                    bits,
                    inside,
                };
                counts[i] += usize::from(bits != 0);
            });
        }
    }
}

/// Whether a changed observer's scan may share its passes over the cells with others of its
/// group ([`flip_scan_batch`]): it steps, and it takes the plain flip scan (it does not judge
/// clean observers as a target in any of the group's cells, `any_clean` saying whether one
/// holds a clean observer).
#[inline]
pub(super) fn batches(me: &Slot, any_clean: bool) -> bool {
    me.stepping() && !(me.flip_scans_as_target() && any_clean)
}

/// A stepping observer's view as the flip tests take it: its rectangle, else its disc.
#[inline]
fn flip_shape(me: &Slot) -> FlipShape {
    me.rect.map_or(FlipShape::Disc(me.r2), FlipShape::Rect)
}

/// The flip scans of up to [`FLIP_BATCH`] observers of one group that [`batches`] allows, as
/// [`flip_scan`] of each would do them: their masks computed in one pass over the group's
/// cells, each run of blocks of positions brought into cache once for all of them, then each
/// observer's flips recorded in its turn, in the order its own scan finds them (so the messages
/// are the same).
/// The cells are not narrowed to each observer's own window: a cell outside it holds no member
/// within its reach at either end, so no flip of it. `next` is the list and set of the observer
/// scanned after the batch, asked for ahead with the batch's own.
pub(super) fn flip_scan_batch(
    view: View,
    os: &[u32],
    cells: &[u32],
    lists: &mut [Vec<u32>],
    sets: &mut [Vec<Entity>],
    next: Option<(&[u32], &[Entity])>,
    scratch: &mut TaskBuffers,
) {
    debug_assert!(os.len() <= FLIP_BATCH && os.len() == lists.len() && os.len() == sets.len());
    let mut views = [([0.0f32; 3], [0.0f32; 3], FlipShape::Disc(0.0)); FLIP_BATCH];
    for (v, &o) in views.iter_mut().zip(os) {
        let me = &view.slots[o as usize];
        *v = (me.p, view.starts[o as usize], flip_shape(me));
    }
    let views = scratch.spread_views.spread(&views[..os.len()]);
    // Row `i` of `runs` holds observer `i`'s runs of members with a flip, `counts[i]` of them:
    // every run is written, and kept by counting it only if it flips (no branch on the answers).
    let row: usize = cells.iter().map(|&c| view.grid.cells[c as usize].pos.run_count()).sum();
    let mut runs = core::mem::take(&mut scratch.flip_runs);
    if runs.len() < FLIP_BATCH * row {
        runs.resize(FLIP_BATCH * row, FlipRun::default());
    }
    let mut counts = [0usize; FLIP_BATCH];
    batch_runs(view, views, cells, &mut runs, row, &mut counts);
    // As the group's own loop does, the lists and sets of the observers ahead are asked for while
    // an observer's flips are recorded, but two ahead (the first observer asks for the second's
    // too), `next` after the last: measured against one ahead (`scenario` uniform 50k, one
    // thread, eight alternating runs, stop 54): 26.2–26.9 → 25.9–26.9 ms, medians 26.6 → 26.2;
    // uniform 10k and crowded 2k within the noise (three runs each).
    ask_for(lists, sets, 1, next);
    for (i, &o) in os.iter().enumerate() {
        if i + 2 <= os.len() {
            ask_for(lists, sets, i + 2, next);
        }
        let banded = band_bounds(view, o).map(|bands| (bands, scratch.flips_so_far()));
        let (mut flips, ..) = scratch.flips(view, o, &mut lists[i]);
        for run in &runs[i * row..i * row + counts[i]] {
            let cell = &view.grid.cells[run.cell as usize];
            flips.record(cell, run.first as usize, run.bits, run.inside);
        }
        flips.merge(&mut sets[i]);
        if let Some(banded) = banded {
            record_band_crossings(view, o, cells, banded, scratch);
        }
    }
    scratch.flip_runs = runs;
}

/// The bounds of a moving owned observer's [`QuietBands`] that lie within its grown view, for
/// its band pass ([`record_band_crossings`]): beyond that view a target is not listed (it lingers,
/// and the layer judges a lingering target when it is due), and a crossing of its edge is a flip.
#[derive(Clone, Copy)]
struct BandBounds {
    /// A disc's: squared distances, its edge among them. A rectangle's: its tiers' half sides.
    bounds: [f32; 1 + TIER_BOUNDS],
    len: usize,
    /// A rectangle's edge: its view's half extents, without the margin.
    rect_edge: Option<[f32; 2]>,
    /// With tiers, where its instance has `Always` targets: all of its quiet bands, which those
    /// targets' tiers follow at any distance ([`record_always_crossings`]).
    always: Option<QuietBands>,
}

/// For the view layer: whether the flip scan of stepping observer `o` records its seers, and the
/// bounds of its band pass ([`record_band_crossings`]). It does if the layer owns it, it only
/// moved this tick (its view-model components are as they were), and the layer gave it
/// [`QuietBands`]. Nothing to ask while the layer owns no observer.
#[inline]
fn band_bounds(view: View, o: u32) -> Option<BandBounds> {
    view.touches.and_then(|touches| owned_band_bounds(view, touches, o))
}

/// [`band_bounds`] while the layer owns some observer; out of line, so the flip scans stay as they
/// were without it.
#[inline(never)]
fn owned_band_bounds(view: View, touches: &Touches, o: u32) -> Option<BandBounds> {
    if !touches.is_owned(o) || touches.changed_more_than_moved(o) {
        return None;
    }
    let bands = touches.quiet_bands(o)?;
    let me = &view.slots[o as usize];
    let has_always = view.always.get(&me.rules.instance).is_some_and(|a| !a.is_empty());
    let mut within = BandBounds {
        bounds: [0.0; 1 + TIER_BOUNDS],
        len: 0,
        rect_edge: None,
        always: (has_always && bands.tiers.is_some()).then_some(bands),
    };
    // The bounds within its grown view (beyond, nothing it shows can cross them), each once:
    // without a margin a threshold's two bounds are one.
    // A disc's edge is one of its bounds; a rectangle's is tested apart.
    let (disc_edge, reach) = match (bands.edge, me.rect) {
        (BandEdge::Disc(edge), None) => (Some(edge), me.r2),
        (BandEdge::Rect(edge), Some(grown)) => {
            within.rect_edge = Some(edge);
            (None, grown[0].max(grown[1]))
        }
        _ => return None,
    };
    for b in disc_edge.into_iter().chain(bands.tiers.into_iter().flatten()) {
        if b < reach && !within.bounds[..within.len].contains(&b) {
            within.bounds[within.len] = b;
            within.len += 1;
        }
    }
    Some(within)
}

/// For the view layer, the end of a moving observer's flip scan that records its seers
/// ([`band_bounds`]): its flips (the task's enters and leaves from `flipped` on,
/// [`TaskBuffers::flips_so_far`]) are its seers; its band pass adds the members of its window that
/// it sees at both ends and whose distances at the two ends lie on different sides of one of
/// `bands`' bounds, one more pass over the window's positions (the distances computed once for all
/// the bounds), if there are any; for a rectangle, those on different sides of its edge or of one
/// of its tiers' squares ([`rect_band_crossings`]). Then notes that its seers are complete
/// ([`TaskBuffers::band_scanned`]): with those of the targets that jumped (their own target scans
/// record them), the layer judges only those and its due lingering targets, as for an observer
/// that did not change. Out of line, as the scans' other work for the layer.
///
/// [`rect_band_crossings`]: crate::grid::Positions::rect_band_crossings
#[inline(never)]
fn record_band_crossings(
    view: View,
    o: u32,
    cells: &[u32],
    (bands, flipped): (BandBounds, (usize, usize)),
    scratch: &mut TaskBuffers,
) {
    scratch.band_scanned.push(o);
    let seer = |(target, sees_now)| Seer {
        observer: o,
        target,
        sees_now,
    };
    let entered = scratch.enters.pairs[flipped.0..].iter().map(|&(_, t)| (t, true));
    let left = scratch.leaves[flipped.1..].iter().map(|&(_, t)| (t, false));
    scratch.band_seers.extend(entered.chain(left).map(seer));
    if let Some(quiet) = bands.always {
        record_always_crossings(view, o, &quiet, &mut scratch.band_seers);
    }
    let me = &view.slots[o as usize];
    let (start, bounds) = (view.starts[o as usize], &bands.bounds[..bands.len]);
    let extent = me.scan_extent(start, view.step_reach);
    let (layers, with_z, seers) = (me.rules.sees, view.grid.with_z(), &mut scratch.band_seers);
    let mut record = |cell: &Cell, first: usize, crossed: u64| {
        each_lane(crossed, |j| {
            let lane = cell.pos.lane(first + j);
            if lane.slot != o && layers & lane.flip_layers != 0 {
                seers.push(Seer {
                    observer: o,
                    target: lane.slot,
                    sees_now: true,
                });
            }
        });
    };
    if let (Some(edge), Some(grown)) = (bands.rect_edge, me.rect) {
        let test = RectBandTest {
            now: me.p,
            start,
            grown,
            edge,
            bounds,
        };
        scan_cells(view, me, cells, extent, |cell, range| {
            cell.pos
                .rect_band_crossings(range, test, |first, crossed| record(cell, first, crossed));
        });
    } else if !bounds.is_empty() {
        let test = BandTest {
            now: me.p,
            start,
            grown: me.r2,
            bounds,
        };
        scan_cells(view, me, cells, extent, |cell, range| {
            cell.pos
                .band_crossings(range, test, with_z, |first, crossed| record(cell, first, crossed));
        });
    }
}

/// For the view layer, the `Always` targets of a moving tiered observer's instance among its
/// seers ([`record_band_crossings`]): those it sees whose distances at the two ends, as a disc
/// or a rectangle measures them, lie on different sides of one of its `quiet` bands' tier bounds
/// ([`QuietBands::same_tier_band`]: an `Always` target is seen at any distance, so its view's
/// edge changes nothing, and its tier follows the distance). No distance test of the window finds
/// them (a flip scan leaves them to their instance's list, and they may stand beyond it), so each
/// is tested here, at both ends, a stepping one from where it started (its target scan names it
/// only to the observers that did not change, and where everyone moves none runs). A jumped one
/// is left to its own target scan, which records its seers.
#[inline(never)]
fn record_always_crossings(view: View, o: u32, quiet: &QuietBands, seers: &mut Vec<Seer>) {
    let me = &view.slots[o as usize];
    let (now, start) = (me.p, view.starts[o as usize]);
    let always = view.always.get(&me.rules.instance).map_or(&[][..], Vec::as_slice);
    for &a in always {
        let target = &view.slots[a as usize];
        if a == o || me.rules.sees & target.rules.member == 0 || target.jumped() {
            continue;
        }
        let started = if target.on_shortlist() {
            view.starts[a as usize]
        } else {
            target.p
        };
        if !quiet.same_tier_band((start, started), (now, target.p)) {
            seers.push(Seer {
                observer: o,
                target: a,
                sees_now: true,
            });
        }
    }
}

/// A run of members (from `first`, in `cell`) with flips of one observer of a
/// [`flip_scan_batch`]: bit `j` of `bits` for member `first + j`, entering if set in `inside`.
#[derive(Clone, Copy, Default)]
pub(super) struct FlipRun {
    cell: u32,
    first: u32,
    bits: u64,
    inside: u64,
}

/// Where a flip scan records its observer's flips: the observer's list, the targets entering and
/// leaving its set, and the task's pairs.
struct Flips<'a> {
    view: View<'a>,
    o: u32,
    /// The layers it sees.
    layers: u32,
    list: &'a mut Vec<u32>,
    entering: &'a mut Vec<Entity>,
    leaving: &'a mut Vec<Entity>,
    enters: &'a mut Enters,
    leaves: &'a mut Vec<(u32, u32)>,
}

impl TaskBuffers {
    /// Where the next flip scan's flips begin among the task's enters and leaves.
    fn flips_so_far(&self) -> (usize, usize) {
        (self.enters.pairs.len(), self.leaves.len())
    }

    /// Where observer `o`'s flip scan records its flips (its entering and leaving targets
    /// cleared first), and where it records the pairs it judges as a target and their seers.
    fn flips<'a>(
        &'a mut self,
        view: View<'a>,
        o: u32,
        list: &'a mut Vec<u32>,
    ) -> (Flips<'a>, &'a mut Enters, &'a mut Vec<(u32, u32)>, &'a mut Vec<Seer>) {
        self.entering.clear();
        self.leaving.clear();
        let flips = Flips {
            view,
            o,
            layers: view.slots[o as usize].rules.sees,
            list,
            entering: &mut self.entering,
            leaving: &mut self.leaving,
            enters: &mut self.enters,
            leaves: &mut self.leaves,
        };
        (flips, &mut self.clean_enters, &mut self.clean_leaves, &mut self.seers)
    }
}

impl Flips<'_> {
    /// Merges the targets that entered and left into the observer's `set`, unless the view
    /// layer writes its set (it owns the observer) or no sets are kept.
    fn merge(self, set: &mut Vec<Entity>) {
        if self.view.keeps_sets && !self.view.slots[self.o as usize].owned() {
            merge_targets(set, self.entering, self.leaving);
        }
    }

    /// Records the flips of a run of `cell`'s members from `first`: bit `j` of `bits` for member
    /// `first + j`, entering if its bit in `inside` is set; the observer itself and members its
    /// layers do not see are skipped. A flip's slot and layers are in the block just tested,
    /// its entity in the packed array (the member's own record would be one more cache miss per
    /// flip). A loop rather than a closure: the flip scans call it from two places, and a
    /// closure called from two places was no longer inlined (uniform 10k, 3% more instructions).
    #[inline(always)]
    fn record(&mut self, cell: &Cell, first: usize, mut bits: u64, inside: u64) {
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let lane = cell.pos.lane(first + j);
            if lane.slot == self.o || self.layers & lane.flip_layers == 0 {
                continue;
            }
            let (target, entity) = (lane.slot, self.view.entities[lane.slot as usize]);
            if (inside >> j) & 1 != 0 {
                self.list.push(target);
                self.entering.push(entity);
                self.enters.push(self.o, target);
            } else {
                remove_seen(self.list, target);
                self.leaving.push(entity);
                self.leaves.push((self.o, target));
            }
        }
    }
}

avx_twins! {
    /// A flip scan's tests of the members of `cells` within `extent` for a stepping disc observer
    /// that also scans as a target
    /// ([`Slot::flip_scans_as_target`](crate::slot::Slot::flip_scans_as_target)): its flips go to
    /// `flips`; in the cells where clean observers may see it, the clean observers whose view of
    /// it flips, judged as [`target`](super::target()) would, go to `judge` (elsewhere its flips
    /// alone are tested, as the plain flip scan tests them). Its work is out of line, so the
    /// plain flip scan's loop stays as small as it was (inlined, uniform 10k ran 2.6% more
    /// instructions with nothing to judge). One call for all the cells, so what it sets up
    /// before its loops (about a hundred instructions) is not repeated for each cell: callgrind,
    /// one thread, 5% moving 50k 33.48 → 32.08 M instructions an update, 25% moving 20k 56.44 →
    /// 53.65 M, uniform 10k level.
    ///
    /// Where the CPU has AVX the whole scan is compiled for it ([`avx_twins`]), so the AVX test
    /// of each run of blocks is inlined into its loop rather than called: callgrind, one thread,
    /// 5% moving 50k 31.36 → 30.30 M instructions an update, 25% moving 20k 52.31 → 50.12 M,
    /// uniform 10k level.
    fn flip_scan_both_ways / both_ways_avx / both_ways_portable(
        view: View,
        cells: &[u32],
        extent: [f32; 3],
        flips: &mut Flips,
        judge: &mut impl FnMut(u32, ObserverEnds),
    ) {
        let (me, start) = (&view.slots[flips.o as usize], view.starts[flips.o as usize]);
        let (shape, with_z, every_seer) = (flip_shape(me), view.grid.with_z(), judges_every_seer(view));
        let both_ways = BothWaysView::new(me.p, start, me.r2);
        scan_cells(view, me, cells, extent, |cell, range| {
            if !view.clean_observers_may_see(cell, me.rules.member) {
                cell.pos
                    .flips(range, me.p, start, shape, with_z, |first, bits, inside| {
                        flips.record(cell, first, bits, inside);
                    });
                return;
            }
            let instance = cell.key[3] as u32;
            let each = |first, bits, inside, seen_now: u64, seen_start: u64| {
                flips.record(cell, first, bits, inside);
                let (bits, sees) = (seen_now ^ seen_start, seen_now | seen_start);
                judge_clean_observers(view, cell, instance, me.rules.member, first, bits, sees, judge);
            };
            (cell.pos).flips_both_ways::<AVX>(range, &both_ways, with_z, every_seer, each);
        });
    }
}
