//! Tests of the blocks' four-lane tests against the scalar ones, on lattice points (many at
//! exactly the radius) and off the plane.

use core::ops::Range;

use super::{
    masks::{band_masks, disc_masks_both_ways, flip_masks_many},
    *,
};
use crate::{
    test_draws::Draws,
    visibility::{dist2 as scalar_dist2, in_rect, rect_r2, within as scalar_within},
};

/// Points on a lattice around `p` (so many are at exactly the radius) and, `with_z`, a few
/// off its plane.
fn points(n: usize, with_z: bool) -> Vec<Member> {
    let mut draws = Draws::new(11);
    (0..n)
        .map(|i| {
            let state = draws.next_state();
            let (a, b) = ((state >> 40) % 11, (state >> 20) % 11);
            let mut m = crate::grid::tests::member(i as u32, ((state >> 8) % 40) as f32 - 5.0);
            m.p = [
                a as f32 - 5.0,
                b as f32 - 5.0,
                if with_z && i % 7 == 0 { 0.5 } else { 0.0 },
            ];
            m
        })
        .collect()
}

/// `members` with every fifth observer's view made a rectangle (half extents from the lattice,
/// so many points lie on its edges; its `r2` the disc around it, as the index keeps it).
fn with_rects(mut members: Vec<Member>) -> Vec<Member> {
    for (i, m) in members
        .iter_mut()
        .enumerate()
        .filter(|(i, m)| i % 5 == 0 && m.r2 >= 0.0)
    {
        let half = [(i % 4) as f32 + 1.0, (i % 3) as f32 + 0.5];
        (m.half, m.r2) = (half, rect_r2(half));
    }
    members
}

/// Whether member `m`, at `p`, sees `q`: the scalar rule's view test (its rectangle's if it has
/// one).
fn member_sees(m: &Member, p: [f32; 3], q: [f32; 3]) -> bool {
    scalar_within(p, m.r2, m.rect(), q)
}

#[test]
fn within_answers_as_the_scalar_distance_test_including_at_the_radius() {
    for with_z in [true, false] {
        within_answers_as_the_scalar_distance_test(with_z);
    }
}

fn within_answers_as_the_scalar_distance_test(with_z: bool) {
    let members = points(150, with_z);
    let mut pos = Positions::default();
    pos.rebuild(&members);
    let p = [0.0, 0.0, 0.0];
    for r2 in [-1.0, 0.0, 9.0, 25.0, 25.5, 1.0e9] {
        for range in [0..150, 3..150, 0..64, 64..129, 5..6, 7..7] {
            let mut got = Vec::new();
            pos.within(range.clone(), p, r2, with_z, |start, mut mask| {
                while mask != 0 {
                    got.push(start + mask.trailing_zeros() as usize);
                    mask &= mask - 1;
                }
            });
            let want: Vec<usize> = range.filter(|&i| scalar_dist2(members[i].p, p) <= r2).collect();
            assert_eq!(
                got, want,
                "r2 {r2}, with_z {with_z}: the vector test should accept exactly what \
                 `dist2 <= r2` accepts"
            );
        }
    }
}

#[test]
fn seeing_reports_each_members_own_view_at_both_points() {
    for with_z in [true, false] {
        seeing_reports_each_members_own_view(with_z);
    }
}

/// [`points`], every third member stepped (its start position one off on each plane axis).
fn points_every_third_stepped(n: usize, with_z: bool) -> Vec<Member> {
    let mut members = points(n, with_z);
    for (i, m) in members.iter_mut().enumerate() {
        let off = if i % 3 == 0 { 1.0 } else { 0.0 };
        m.start_p = [m.p[0] + off, m.p[1] - off, m.p[2]];
    }
    members
}

fn seeing_reports_each_members_own_view(with_z: bool) {
    let members = with_rects(points_every_third_stepped(150, with_z));
    assert!(
        members.iter().any(|m| m.rect().is_some()),
        "some members should have rectangles"
    );
    let mut pos = Positions::default();
    pos.rebuild(&members);
    let (now, before) = ([0.0, 0.0, 0.0], [1.0, -2.0, 0.0]);
    for (range, moved) in [0..150, 1..100, 64..65]
        .into_iter()
        .flat_map(|r| [(r.clone(), false), (r, true)])
    {
        let (mut flips, mut sees) = (Vec::new(), Vec::new());
        pos.seeing(range.clone(), now, before, moved, with_z, |start, f, s| {
            for j in 0..64 {
                if (f >> j) & 1 != 0 {
                    flips.push(start + j);
                }
                if (s >> j) & 1 != 0 {
                    sees.push(start + j);
                }
            }
        });
        let seen_now = |i: usize| member_sees(&members[i], members[i].p, now);
        let from = |i: usize| if moved { members[i].start_p } else { members[i].p };
        let seen_before = |i: usize| member_sees(&members[i], from(i), before);
        let want_sees: Vec<usize> = range.clone().filter(|&i| seen_now(i) || seen_before(i)).collect();
        let want_flips: Vec<usize> = range.filter(|&i| seen_now(i) != seen_before(i)).collect();
        assert_eq!(
            sees, want_sees,
            "with_z {with_z}, members moved {moved}: members seeing the target at either point should be \
             reported"
        );
        assert_eq!(
            flips, want_flips,
            "with_z {with_z}, members moved {moved}: members seeing it at exactly one point should be flips"
        );
    }
}

/// The forms of the flip scans' tests this CPU runs (`AVX` false, then true where it has AVX).
fn avx_forms() -> Vec<bool> {
    #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
    if avx_available() {
        return vec![false, true];
    }
    vec![false]
}

/// [`Positions::flips_both_ways`] in the form `avx` names ([`avx_forms`]).
fn flips_both_ways_in(
    avx: bool,
    pos: &Positions,
    range: Range<usize>,
    (now, start, r2): ([f32; 3], [f32; 3], f32),
    with_z: bool,
    every_seer: bool,
    hits: impl FnMut(usize, u64, u64, u64, u64),
) {
    let view = BothWaysView::new(now, start, r2);
    if avx {
        pos.flips_both_ways::<true>(range, &view, with_z, every_seer, hits);
    } else {
        pos.flips_both_ways::<false>(range, &view, with_z, every_seer, hits);
    }
}

#[test]
fn flips_both_ways_answer_as_the_scalar_view_tests_with_both_views() {
    for (with_z, avx) in [true, false]
        .into_iter()
        .flat_map(|z| avx_forms().into_iter().map(move |a| (z, a)))
    {
        // Members that did not move (start = now), as the clean observers whose view of the
        // scanning observer is tested: their own radii vary, some are rectangles, some are not
        // observers.
        let mut members = with_rects(points(150, with_z));
        members.iter_mut().for_each(|m| m.start_p = m.p);
        let mut pos = Positions::default();
        pos.rebuild(&members);
        let (now, start, r2) = ([0.0, 0.0, 0.0], [1.0, -2.0, 0.0], 9.0);
        for range in [0..150, 1..100, 64..65] {
            let mut got = Vec::new();
            let ends = (now, start, r2);
            flips_both_ways_in(avx, &pos, range.clone(), ends, with_z, true, |first, f, i, sn, ss| {
                for j in 0..64 {
                    let bit = |m: u64| (m >> j) & 1 != 0;
                    if range.contains(&(first + j)) && (bit(f) || bit(sn) || bit(ss)) {
                        got.push((first + j, bit(f), bit(i), bit(sn), bit(ss)));
                    }
                }
            });
            let within = |a, b, r2: f32| scalar_dist2(a, b) <= r2;
            let want: Vec<_> = range
                .map(|k| {
                    let m = &members[k];
                    let (inside, was) = (within(m.p, now, r2), within(m.start_p, start, r2));
                    (
                        k,
                        inside != was,
                        inside,
                        member_sees(m, m.p, now),
                        member_sees(m, m.p, start),
                    )
                })
                .filter(|&(_, flip, _, seen_now, seen_start)| flip || seen_now || seen_start)
                .collect();
            assert_eq!(
                got, want,
                "with_z {with_z}, AVX {avx}: the observer's flips and the members' own views of it at \
                 both points should be the scalar tests' answers, every seer reported"
            );
        }
    }
    // A member that sees it at both points, in a run with no flip either way: reported only
    // when every seer is wanted.
    let mut seer = crate::grid::tests::member(0, 100.0);
    (seer.p, seer.start_p) = ([0.5, 0.0, 0.0], [0.5, 0.0, 0.0]);
    let mut pos = Positions::default();
    pos.push(&seer);
    for (every_seer, avx) in [false, true]
        .into_iter()
        .flat_map(|e| avx_forms().into_iter().map(move |a| (e, a)))
    {
        let mut runs = 0;
        flips_both_ways_in(
            avx,
            &pos,
            0..1,
            ([0.0; 3], [1.0, -2.0, 0.0], 9.0),
            false,
            every_seer,
            |_, f, _, sn, ss| {
                assert_eq!(
                    (f, sn, ss),
                    (0, 1, 1),
                    "the run should hold no flip and the seer at both points"
                );
                runs += 1;
            },
        );
        assert_eq!(
            runs,
            usize::from(every_seer),
            "a run without flips should be reported exactly when every seer is wanted"
        );
    }
}

#[test]
fn rect_flips_answer_as_the_scalar_rectangle_test_including_at_the_edges() {
    let members = stepping_points(150, true);
    let mut pos = Positions::default();
    pos.rebuild(&members);
    let (now, start) = ([0.0, 0.0, 0.0], [1.0, -1.0, 0.0]);
    for half in [[0.0, 0.0], [2.0, 3.0], [3.0, 3.0], [4.5, 1.0], [1.0e9, 2.0]] {
        for range in [0..150, 3..150, 64..129, 5..6] {
            let (mut flips, mut inside) = (Vec::new(), Vec::new());
            pos.flips(range.clone(), now, start, FlipShape::Rect(half), true, |first, f, i| {
                for (member, entering) in flips_of(first, f, i) {
                    flips.push(member);
                    inside.push(entering);
                }
            });
            let at = |p, q| in_rect(p, half, q);
            let want: Vec<usize> = range
                .filter(|&i| at(now, members[i].p) != at(start, members[i].start_p))
                .collect();
            let want_inside: Vec<bool> = want.iter().map(|&i| at(now, members[i].p)).collect();
            assert_eq!(
                flips, want,
                "half extents {half:?}: the vector test should flip exactly where `in_rect` does"
            );
            assert_eq!(inside, want_inside, "a flip's side now should be `in_rect`'s");
        }
    }
}

#[test]
fn flips_many_answers_as_each_observers_own_flip_scan() {
    for (with_z, len) in BATCH_WORLDS {
        flips_many_answers_as_each_observers_own(with_z, len);
    }
}

/// The worlds of [`batch_world`] the batch's tests run on, with and without z: 142 members end
/// in a run of four blocks, 137 in a run of three (AVX tests blocks in pairs, then the odd one
/// alone).
const BATCH_WORLDS: [(bool, usize); 4] = [(true, 142), (false, 142), (true, 137), (false, 137)];

/// [`points`] with start positions a lattice step away, so some members cross each view's edge.
fn stepping_points(n: usize, with_z: bool) -> Vec<Member> {
    let mut members = points(n, with_z);
    for (i, m) in members.iter_mut().enumerate() {
        m.start_p = [m.p[0] + (i % 3) as f32 - 1.0, m.p[1] + (i % 5) as f32 - 2.0, m.p[2]];
    }
    members
}

/// The flips a scan reports for a run from `first` (bit `j` of `flips` and `inside` for member
/// `first + j`): each flipped member's index and whether it is in the view now.
fn flips_of(first: usize, flips: u64, inside: u64) -> impl Iterator<Item = (usize, bool)> {
    (0..64)
        .filter(move |j| (flips >> j) & 1 != 0)
        .map(move |j| (first + j, (inside >> j) & 1 != 0))
}

/// The members of [`points`] with start positions a lattice step away, the last `150 - len`
/// removed again, and a batch of observers.
fn batch_world(with_z: bool, len: usize) -> (Positions, Vec<FlipView>) {
    let mut members = stepping_points(150, with_z);
    // The last members removed again: their lanes keep stale values that would flip, entering
    // (inside the views now) and leaving (inside them at the start).
    for (i, m) in members[len..].iter_mut().enumerate() {
        let (inside, outside) = ([0.0, 1.0, 0.0], [30.0, 30.0, 0.0]);
        (m.p, m.start_p) = if i % 2 == 0 {
            (inside, outside)
        } else {
            (outside, inside)
        };
    }
    let mut pos = Positions::default();
    pos.rebuild(&members);
    for i in (len..150).rev() {
        pos.swap_remove(i);
    }
    // Observers at different points, steps and radii (one at exactly a lattice distance), every
    // third a rectangle (its half extents on the lattice too).
    let all: Vec<FlipView> = (0..FLIP_BATCH)
        .map(|i| {
            let (x, y) = ((i % 8) as f32 - 3.0, if i < 8 { 1.0 } else { -1.0 });
            let shape = if i % 3 == 2 {
                FlipShape::Rect([1.0 + (i % 4) as f32, 2.5])
            } else {
                FlipShape::Disc([0.0, 4.0, 9.0, 25.0][i % 4] + i as f32)
            };
            ([x, y, 0.0], [x + 0.5, y - 1.0, 0.0], shape)
        })
        .collect();
    (pos, all)
}

/// The batches the batch tests try of a world's observers: as they are (discs and rectangles,
/// which AVX tests one by one), with every rectangle a disc and with every disc a rectangle
/// (which AVX tests pair of blocks by pair of blocks, every observer in turn).
fn batches(all: &[FlipView]) -> [Vec<FlipView>; 3] {
    let discs = all.iter().map(|&(now, start, shape)| match shape {
        FlipShape::Rect([hw, hh]) => (now, start, FlipShape::Disc(hw * hw + hh)),
        disc => (now, start, disc),
    });
    let rects = all.iter().map(|&(now, start, shape)| match shape {
        FlipShape::Disc(r2) => (now, start, FlipShape::Rect([r2.sqrt(), 1.0 + r2 / 4.0])),
        rect => (now, start, rect),
    });
    [all.to_vec(), discs.collect(), rects.collect()]
}

fn flips_many_answers_as_each_observers_own(with_z: bool, len: usize) {
    let (pos, all) = batch_world(with_z, len);
    let mut spread = SpreadViews::default();
    for (batch, n) in batches(&all).iter().flat_map(|b| [1, 2, FLIP_BATCH].map(|n| (b, n))) {
        let views = &batch[..n];
        let mut got = vec![Vec::new(); n];
        pos.flips_many::<false>(spread.spread(views), with_z, |i, first, f, inside| {
            got[i].extend(flips_of(first, f, inside));
        });
        if avx_forms().contains(&true) {
            let mut with_avx = vec![Vec::new(); n];
            pos.flips_many::<true>(spread.spread(views), with_z, |i, first, f, inside| {
                with_avx[i].extend(flips_of(first, f, inside));
            });
            assert_eq!(
                with_avx, got,
                "with_z {with_z}, {len} members: AVX should find the same flips"
            );
        }
        for (i, &(now, start, shape)) in views.iter().enumerate() {
            let mut want = Vec::new();
            pos.flips(0..len, now, start, shape, with_z, |first, f, inside| {
                want.extend(flips_of(first, f, inside));
            });
            assert!(!want.is_empty(), "observer {i} of {n} should have flips to compare");
            assert_eq!(
                got[i], want,
                "with_z {with_z}, {len} members: observer {i} of {n} should get its own flip \
                 scan's flips, in order"
            );
        }
    }
}

#[test]
fn band_crossings_answer_as_the_scalar_distance_tests_at_every_bound() {
    // Lattice points, many at exactly a bound; every third member stepped.
    let bounds = [4.0, 9.0, 16.0];
    for with_z in [true, false] {
        let members = points_every_third_stepped(150, with_z);
        let mut pos = Positions::default();
        pos.rebuild(&members);
        let (now, start, grown) = ([0.0, 0.0, 0.0], [1.0, -1.0, 0.0], 25.0);
        let within = |d2: f32, r2: f32| d2 <= r2;
        let ends = |i: usize| (scalar_dist2(members[i].p, now), scalar_dist2(members[i].start_p, start));
        let crosses = |i: usize| {
            let (d_now, d_start) = ends(i);
            let differs = |b: f32| within(d_now, b) != within(d_start, b);
            !differs(grown) && bounds.iter().any(|&b| differs(b))
        };
        for range in [0..150, 1..100, 64..65] {
            let mut got = Vec::new();
            let test = BandTest {
                now,
                start,
                grown,
                bounds: &bounds,
            };
            pos.band_crossings(range.clone(), test, with_z, |first, crossed| {
                got.extend((0..64).filter(|j| (crossed >> j) & 1 != 0).map(|j| first + j));
            });
            let whole = range.len() == members.len();
            let want: Vec<usize> = range.filter(|&i| crosses(i)).collect();
            assert!(!whole || !want.is_empty(), "the lattice should hold crossings");
            assert_eq!(
                got, want,
                "with_z {with_z}: the band pass should report exactly the members on different \
                 sides of a bound at the two ends that do not flip for the grown view"
            );
        }
    }
}

#[test]
fn rect_band_crossings_answer_as_the_rectangle_bands_at_every_edge_and_square() {
    use crate::index::{BandEdge, QuietBands};
    // Lattice points on the plane, many on an edge or a square; every third member stepped.
    let members = points_every_third_stepped(150, false);
    let mut pos = Positions::default();
    pos.rebuild(&members);
    let (now, start) = ([0.0, 0.0, 0.0], [1.0, -1.0, 0.0]);
    // Squares apart from the edge's sides (at 3 and 2): a member can cross a side without crossing
    // a square, and a square without crossing a side.
    let (grown, edge, bounds) = ([4.0, 3.0], [3.0, 2.0], [1.0, 2.5]);
    let mut tiers = [f32::INFINITY; crate::index::TIER_BOUNDS];
    tiers[..bounds.len()].copy_from_slice(&bounds);
    let bands = QuietBands {
        edge: BandEdge::Rect(edge),
        tiers: Some(tiers),
    };
    let seen = |m: &Member| in_rect(now, grown, m.p) && in_rect(start, grown, m.start_p);
    let crosses = |m: &Member| seen(m) && !bands.same_band((start, m.start_p), (now, m.p));
    // With the grown view as its edge (held at both ends) the bands are the squares alone.
    let squares = QuietBands {
        edge: BandEdge::Rect(grown),
        tiers: Some(tiers),
    };
    let crosses_square = |m: &Member| !squares.same_band((start, m.start_p), (now, m.p));
    let crosses_edge = |m: &Member| in_rect(now, edge, m.p) != in_rect(start, edge, m.start_p);
    assert!(
        members.iter().any(|m| crosses(m) && !crosses_square(m))
            && members.iter().any(|m| crosses(m) && !crosses_edge(m)),
        "the lattice should hold members crossing only the edge and members crossing only a square"
    );
    for range in [0..150, 1..100, 64..65] {
        let mut got = Vec::new();
        let test = RectBandTest {
            now,
            start,
            grown,
            edge,
            bounds: &bounds,
        };
        pos.rect_band_crossings(range.clone(), test, |first, crossed| {
            got.extend((0..64).filter(|j| (crossed >> j) & 1 != 0).map(|j| first + j));
        });
        let whole = range.len() == members.len();
        let want: Vec<usize> = range.filter(|&i| crosses(&members[i])).collect();
        assert!(!whole || !want.is_empty(), "the lattice should hold crossings");
        assert_eq!(
            got, want,
            "the rectangle's band pass should report exactly the members inside its grown view at \
             both ends that cross its edge or one of its squares"
        );
    }
}

#[test]
fn the_band_tests_answer_alike_with_avx_and_without() {
    let bounds = [4.0, 9.0, 16.0, 20.0, 24.0];
    for (with_z, len) in BATCH_WORLDS {
        let (pos, _) = batch_world(with_z, len);
        for run in pos.blocks.chunks(MASK_BITS / LANES) {
            let test = BandTest {
                now: [0.5, -0.5, 0.0],
                start: [1.5, 0.5, 0.0],
                grown: 25.0,
                bounds: &bounds,
            };
            let (chosen, sse) = if with_z {
                (band_masks::<true>(run, test), masks::band_masks_sse::<true>(run, test))
            } else {
                (
                    band_masks::<false>(run, test),
                    masks::band_masks_sse::<false>(run, test),
                )
            };
            assert_eq!(
                chosen,
                sse,
                "with_z {with_z}, {len} members, a run of {} blocks: the band masks should not \
                 depend on the instruction set",
                run.len()
            );
        }
    }
}

/// Where the batch's tests put observer `i`'s two masks: `masks[i]`.
fn into_masks(masks: &mut [(u64, u64); FLIP_BATCH]) -> impl FnMut(usize, u64, u64) + '_ {
    move |i, in_now, in_start| masks[i] = (in_now, in_start)
}

#[test]
fn the_batch_tests_answer_alike_with_avx_and_without() {
    // Each form this CPU runs (only the baseline's on a CPU without AVX) against the SSE tests,
    // every run (even and odd numbers of blocks), stale lanes included.
    let mut spread = SpreadViews::default();
    for (with_z, len) in BATCH_WORLDS {
        let (pos, all) = batch_world(with_z, len);
        for (views, run) in batches(&all)
            .iter()
            .flat_map(|b| pos.blocks.chunks(MASK_BITS / LANES).map(move |r| (b, r)))
        {
            let mut sse = [(0, 0); FLIP_BATCH];
            if with_z {
                masks::flip_masks_many_sse::<true>(run, views, into_masks(&mut sse));
            } else {
                masks::flip_masks_many_sse::<false>(run, views, into_masks(&mut sse));
            }
            for avx in avx_forms() {
                let mut chosen = [(0, 0); FLIP_BATCH];
                let got = into_masks(&mut chosen);
                match (with_z, avx) {
                    (true, true) => flip_masks_many::<true, true>(run, spread.spread(views), got),
                    (true, false) => flip_masks_many::<true, false>(run, spread.spread(views), got),
                    (false, true) => flip_masks_many::<false, true>(run, spread.spread(views), got),
                    (false, false) => flip_masks_many::<false, false>(run, spread.spread(views), got),
                }
                assert_eq!(
                    chosen,
                    sse,
                    "with_z {with_z}, AVX {avx}, {len} members, a run of {} blocks: the masks \
                     should not depend on the instruction set",
                    run.len()
                );
            }
        }
    }
}

#[test]
fn the_both_ways_tests_answer_alike_with_avx_and_without() {
    // Every run (even and odd numbers of blocks), stale lanes included; on a CPU without AVX
    // there is only the baseline's form.
    for (with_z, len) in BATCH_WORLDS {
        let (pos, _) = batch_world(with_z, len);
        for run in pos.blocks.chunks(MASK_BITS / LANES) {
            let view = BothWaysView::new([0.5, -0.5, 0.0], [1.5, 0.5, 0.0], 16.0);
            let masks = |avx| match (with_z, avx) {
                (true, true) => disc_masks_both_ways::<true, true>(run, &view),
                (true, false) => disc_masks_both_ways::<true, false>(run, &view),
                (false, true) => disc_masks_both_ways::<false, true>(run, &view),
                (false, false) => disc_masks_both_ways::<false, false>(run, &view),
            };
            for avx in avx_forms() {
                assert_eq!(
                    masks(avx),
                    masks(false),
                    "with_z {with_z}, {len} members, a run of {} blocks: the both-ways masks should \
                     not depend on the instruction set",
                    run.len()
                );
            }
        }
    }
}
