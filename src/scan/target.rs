//! The target scan of a changed target: the unchanged observers whose view of it flips (and,
//! for a jumped target, the stepping observers too), each judged with the full rule.

use core::ops::Range;

use super::{Enters, TaskBuffers, View, each_bit, each_lane};
use crate::{
    config::IndexKind,
    grid::{Cell, Grid, Member},
    index::{Seer, Touches},
    rules::AoiVisibility,
    slot::{Change, OldView, Slot, observer_of},
    visibility::{ObserverState, TargetState, sees},
    wide::WideObservers,
};

/// The cells where the observers affected by one changed target are: around its old and new
/// positions (within `reach`) in their instances, or every cell of an instance where it is or
/// was `Always` visible. Each cell is listed once. Where the regions reach past the cells around
/// its own, the cells of stale members are left out ([`View::drop_stale_cells`]).
fn target_cells(view: View, me: &Slot, before: &TargetState, reach: f32, out: &mut Vec<u32>) {
    let grid = view.grid;
    let adjacent = match (
        grid.observer_region(&me.target(), reach),
        grid.observer_region(before, reach),
    ) {
        (Some(a), Some(b)) if a.overlaps(&b) => grid.cells_around(me.cell, &a.union(&b), out),
        (Some(a), None) => grid.cells_around(me.cell, &a, out),
        (a, b) => {
            for w in a.iter().chain(b.iter()) {
                grid.cells_in(w, out);
            }
            false
        }
    };
    if !adjacent {
        view.drop_stale_cells(out);
    }
}

/// The parts of cell `c` where observers of a changed target may be (its
/// [`observer_slab`](crate::grid::Grid::observer_slab)s now and at the start of the tick,
/// searched from member `near`), each member in at most one of them.
fn target_slabs(
    grid: &Grid,
    c: u32,
    near: usize,
    now: &TargetState,
    before: &TargetState,
    reach: f32,
) -> [Range<usize>; 2] {
    if grid.kind() == IndexKind::Grid {
        // The cell is listed because one of the two regions covers it: the whole cell, once.
        return [0..grid.cells[c as usize].members.len(), 0..0];
    }
    let slab = |t| grid.observer_slab(c, near, t, reach);
    match (slab(now), slab(before)) {
        (Some(a), Some(b)) if a.start <= b.end && b.start <= a.end => [a.start.min(b.start)..a.end.max(b.end), 0..0],
        (a, b) => [a.unwrap_or(0..0), b.unwrap_or(0..0)],
    }
}

/// Finds the observers whose view of one changed target flips, among those whose pairs with it
/// no other scan decides: the clean observers (the wide ones from their list, the others in the
/// cells around the target within the ordinary `reach`), and for a jumped target the stepping
/// observers too, tested where they were at the start of the tick and where they are now.
/// `any_clean` says whether any observer is clean this tick.
pub(crate) fn target(
    view: View,
    wide: &WideObservers,
    ch: &Change,
    reach: f32,
    any_clean: bool,
    scratch: &mut TaskBuffers,
) {
    let me = &view.slots[ch.slot as usize];
    // A target that only stepped, with its rules and its observers' unchanged, flips only by
    // distance; `Always` and `Hidden` ones do not depend on it.
    if !me.jumped() && (!any_clean || me.rules.mode != AoiVisibility::Normal) {
        // A stepping `Always` target's tier may change for any observer of its instance.
        if let Some(touches) = view.touches
            && any_clean
            && me.rules.mode == AoiVisibility::Always
        {
            record_always_seers(view, touches, ch, &mut scratch.seers);
        }
        return;
    }
    let (now, before) = (
        me.target(),
        OldView::at_start(ch.slot, me, view.old_views).target(ch.old_p),
    );
    let mut judge = judge_into(
        ch.slot,
        (now, before),
        view.touches,
        (&mut scratch.enters, &mut scratch.leaves, &mut scratch.seers),
    );
    if me.jumped() {
        for &w in &wide.slots {
            let o = &view.slots[w as usize];
            // A changed wide observer recomputes its own list, unless it stepped: then, as the
            // stepping members of the cells below, it is judged where it was at the start of the
            // tick and where it is now (its flip scan leaves jumped targets to their own scans).
            if !o.on_shortlist() {
                let at = o.observer_at(o.p);
                judge(w, ObserverEnds::Judge(at, at));
            } else if o.stepping() {
                judge(
                    w,
                    ObserverEnds::Judge(o.observer_at(view.starts[w as usize]), o.observer_at(o.p)),
                );
            }
        }
    } else {
        // A stepping `Normal` target, as in the cells below: the wide observers' views tested
        // four at a time (exactly, rectangles too), and an observer judged only if it sees the
        // target at either end and, while the view layer needs no touches, only where the step
        // flips the test (else it sees it at both ends or at neither). Changed ones have a
        // negative radius there.
        let with_z = view.grid.with_z();
        let every_seer = judges_every_seer(view);
        wide.places.seeing(
            0..wide.slots.len(),
            now.p,
            before.p,
            false,
            with_z,
            |start, flips, sees| {
                each_lane(sees, |j| {
                    let w = wide.slots[start + j];
                    let o = &view.slots[w as usize];
                    if (flips >> j) & 1 != 0 || every_seer {
                        let at = o.observer_at(o.p);
                        judge(w, ObserverEnds::Judge(at, at));
                    }
                });
            },
        );
    }
    if me.flip_scans_as_target() {
        // Its flip scan judged the clean observers of the cells.
        return;
    }
    let reach = if me.jumped() { reach + view.step_reach } else { reach };
    // Unless it is or was `Always` visible, an observer sees it only within its disc (around
    // a rectangle, the disc holding it), so a jumped target judges only the members whose disc
    // holds it at either end, found four at a time; otherwise every member.
    let by_distance = [now.rules.mode, before.rules.mode]
        .iter()
        .all(|&m| m != AoiVisibility::Always);
    let mut cells = core::mem::take(&mut scratch.cells);
    cells.clear();
    target_cells(view, me, &before, reach, &mut cells);
    for &c in &cells {
        let cell = &view.grid.cells[c as usize];
        let instance = cell.key[3] as u32;
        // Its own member is the place to search from in its cell (a hint only).
        let near = if c == me.cell { me.member_index as usize } else { 0 };
        let slabs = target_slabs(view.grid, c, near, &now, &before, reach);
        // A member where it was at the start of the tick and where it is now.
        let mut judge_moved = |m: &Member| {
            let end = observer_of(m, instance);
            judge(m.slot, ObserverEnds::Judge(ObserverState { p: m.start_p, ..end }, end));
        };
        if me.jumped() && by_distance {
            for range in slabs {
                cell.pos
                    .seeing(range, now.p, before.p, true, view.grid.with_z(), |start, _, sees| {
                        each_bit(&cell.members[start..], sees, |m, _| judge_moved(m));
                    });
            }
        } else if me.jumped() {
            for m in slabs.into_iter().flat_map(|r| &cell.members[r]).filter(|m| m.r2 >= 0.0) {
                judge_moved(m);
            }
        } else if view.clean_observers_may_see(cell, now.rules.member) {
            for range in slabs {
                cell.pos.seeing(
                    range,
                    now.p,
                    before.p,
                    false,
                    view.grid.with_z(),
                    |start, flips, sees| {
                        judge_clean_observers(view, cell, instance, now.rules.member, start, flips, sees, &mut judge);
                    },
                );
            }
        }
    }
    scratch.cells = cells;
}

/// Whether a moving target must look at every clean observer that sees it at either point, not
/// only where the view test flips: when the view layer wants its touches.
#[inline]
pub(super) fn judges_every_seer(view: View) -> bool {
    view.touches.is_some()
}

/// Where a target scan's judge records: the pairs that enter, those that leave, and the view
/// layer's seers.
pub(super) type JudgeOut<'a> = (&'a mut Enters, &'a mut Vec<(u32, u32)>, &'a mut Vec<Seer>);

/// An observer as a target scan's judge is given it.
#[derive(Clone, Copy, Debug)]
pub(super) enum ObserverEnds {
    /// To judge with the full rule: as it was at the start of the tick, and as it is now.
    Judge(ObserverState, ObserverState),
    /// An observer at this position that sees the target at both times (a disc observer whose
    /// disc holds it at both ends, not judged again).
    SeesBoth([f32; 3]),
}

/// A target scan's judge for target slot `t` (in state `now`, and `before` at the start of the
/// tick): given observer `o` to judge as `start` at the start of the tick and as `end` now,
/// records the pair in `enters` or `leaves` if `o` sees the target now and not before or the
/// other way round, and, for the view layer (`touches`), its seer if it sees the target at either
/// time ([`record_seer`]). Given an observer that sees it at both times
/// ([`ObserverEnds::SeesBoth`]), only its seer is recorded.
#[inline(always)]
pub(super) fn judge_into<'a>(
    t: u32,
    (now, before): (TargetState, TargetState),
    touches: Option<&'a Touches>,
    (enters, leaves, seers): JudgeOut<'a>,
) -> impl FnMut(u32, ObserverEnds) + 'a {
    move |o, ends| {
        // Its own member, met in its own cell, may be stale (`index::lazy_members`); an entity
        // is never paired with itself.
        if o == t {
            return;
        }
        let (is, was, p) = match ends {
            ObserverEnds::Judge(start, end) => (sees(&end, &now), sees(&start, &before), end.p),
            ObserverEnds::SeesBoth(p) => (true, true, p),
        };
        if is != was {
            if is {
                enters.push(o, t);
            } else {
                leaves.push((o, t));
            }
        }
        if let Some(touches) = touches
            && (is || was)
        {
            let seer = Seer {
                observer: o,
                target: t,
                sees_now: is,
            };
            record_seer(touches, seers, seer, p, (&before, &now), is && was);
        }
    }
}

/// Records `seer` if the view layer owns its observer and the observer did not change other than
/// by a move, and touches the observer: the layer looks at no other observer, and one that
/// changed otherwise judges every target it shows. (A moving one's seers are read only when its
/// flip scan recorded the rest, `flip::record_band_crossings`.) Left out when the observer did
/// not move (at `p`, where it has stayed), sees the target at both ends (`both`), and the target,
/// keeping its rules, stays in one of the observer's [`QuietBands`](crate::index::QuietBands)
/// (given by the layer): the layer's pass would leave it as it is. Out of line, so the scans'
/// loops stay as they were without it (`headless_simulation` 50k, no view-model component,
/// callgrind: 99.4 M instructions an update before seers, 99.6 M after).
#[inline(never)]
fn record_seer(
    touches: &Touches,
    seers: &mut Vec<Seer>,
    seer: Seer,
    p: [f32; 3],
    (before, now): (&TargetState, &TargetState),
    both: bool,
) {
    let o = seer.observer;
    if !touches.is_owned(o) || touches.changed_more_than_moved(o) {
        return;
    }
    // A moving observer (judged as a stepping one by a jumped target) was at `p` only now: its
    // seer is recorded in any case (it is touched already, having changed).
    let moved = touches.is_changed(o);
    if !moved && both && before.rules == now.rules && touches.stays_in_band(o, p, before.p, now.p) {
        return;
    }
    touches.touch(o);
    seers.push(seer);
}

/// For the view layer, the seers of a stepping `Always` target: the owned observers of its
/// instance that did not change, see its layers and may judge it by the distance
/// ([`Touches::always_by_distance`]: with tiers, its tier follows the distance at any distance),
/// each recorded and touched unless the target stays on one side of each of the observer's tier
/// bounds ([`QuietBands::same_tier_band`]; the view's edge changes nothing for a target seen at any
/// distance). Those that changed are left to their own flip scans
/// (`flip::record_always_crossings`), or judge everything they show.
/// `O(owned observers)` a stepping `Always` target, each one's slot read. Out of line, as
/// [`record_seer`].
///
/// [`QuietBands::same_tier_band`]: crate::index::QuietBands::same_tier_band
#[inline(never)]
fn record_always_seers(view: View, touches: &Touches, ch: &Change, seers: &mut Vec<Seer>) {
    let me = &view.slots[ch.slot as usize];
    for o in touches.owned_slots() {
        // The bits first: the slot is read only for those that may judge it so.
        if o == ch.slot || touches.is_changed(o) || !touches.always_by_distance(o) {
            continue;
        }
        let observer = &view.slots[o as usize];
        let (rules, target) = (&observer.rules, &me.rules);
        if rules.instance != target.instance || rules.sees & target.member == 0 {
            continue;
        }
        // Neither the observer nor the target's rules changed, and the target is in the view at
        // any distance: only its tier bounds count, as for a moving observer
        // (`flip::record_always_crossings`).
        let ends = ((observer.p, ch.old_p), (observer.p, me.p));
        if touches.quiet_bands(o).is_some_and(|b| b.same_tier_band(ends.0, ends.1)) {
            continue;
        }
        touches.touch(o);
        seers.push(Seer {
            observer: o,
            target: ch.slot,
            sees_now: true,
        });
    }
}

/// Judges the clean observers of a run of `cell`'s members from `start` against a stepping
/// `Normal` target of layer `member`, from the tests of its two points with each member's own
/// view (bit `j` for member `start + j`: `flips` where they differ, `sees` where either holds;
/// exact for rectangles too, [`Positions::seeing`]). The rule reduces to the layers and those
/// tests, so only the flips need judging, unless the view layer wants every observer that sees
/// the target.
///
/// [`Positions::seeing`]: crate::grid::Positions::seeing
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "one run's masks and where they come from")]
pub(super) fn judge_clean_observers(
    view: View,
    cell: &Cell,
    instance: u32,
    member: u32,
    start: usize,
    flips: u64,
    sees: u64,
    judge: &mut impl FnMut(u32, ObserverEnds),
) {
    if !judges_every_seer(view) {
        // A clean observer's block lane holds all that the rule reads of it.
        each_lane(flips, |j| {
            let lane = cell.pos.lane(start + j);
            if lane.clean_sees & member != 0 {
                let at = ObserverState {
                    p: lane.p,
                    r2: lane.r2,
                    rect: lane.rect,
                    sees: lane.clean_sees,
                    instance,
                };
                judge(lane.slot, ObserverEnds::Judge(at, at));
            }
        });
        return;
    }
    each_bit(&cell.members[start..], sees, |m, j| {
        if !(m.is_clean_observer() & ((m.sees & member) != 0)) {
            return;
        }
        if (flips >> j) & 1 != 0 {
            let at = observer_of(m, instance);
            judge(m.slot, ObserverEnds::Judge(at, at));
        } else {
            // For the view layer, an observer that sees the target at both ends is its seer
            // without judging it (the view test is its whole rule here, and it does not flip).
            judge(m.slot, ObserverEnds::SeesBoth(m.p));
        }
    });
}
