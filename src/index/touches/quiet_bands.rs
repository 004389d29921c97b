//! An owned observer's [`QuietBands`]: the bounds around it where the view layer's judgement of a
//! target can change, and the tests of a target's two ends against them.

use crate::visibility::dist2;
#[cfg(any(test, debug_assertions))]
use crate::visibility::in_rect;

/// Where, around an owned observer, the view layer's judgement of a target it sees (within its
/// grown view) can change while the observer itself stays as it is: its view's edge, and each
/// tier threshold with and without the hysteresis margin. A changed target that the observer
/// sees at both ends, that keeps its rules (its visibility mode is part of the view test), and
/// that is on the same side of each bound at the start and at the end of the update comes out of
/// the pass as it came out of the last one (the layer's tests at both ends give the same answers,
/// and the pass applied to its own result changes nothing), so the scans do not record it as a
/// seer ([`Touches::stays_in_band`]); an observer all of whose changed targets stay so is not
/// looked at. An `Always` target is in the view at any distance, so for it the tier bounds alone
/// count ([`Self::same_tier_band`]). Given by the layer for views with few enough thresholds (see
/// `view_model::layer`).
///
/// [`Touches::stays_in_band`]: super::Touches::stays_in_band
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct QuietBands {
    /// The view's edge.
    pub edge: BandEdge,
    /// The tier bounds, in any order, unused ones `+∞` (nothing is beyond); `None` without tiers.
    /// A disc's are squared distances; a rectangle's (whose tiers are squares) distances on the
    /// axis where the target is farther ([`larger_offset`]).
    pub tiers: Option<[f32; TIER_BOUNDS]>,
}

/// The edge of an observer's view in its [`QuietBands`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum BandEdge {
    /// A disc of this squared radius: a target is beyond where its squared distance is larger.
    Disc(f32),
    /// A rectangle of these half extents: a target is beyond where [`in_rect`] fails.
    Rect([f32; 2]),
}

/// How far `q` is from `p` on the plane axis where it is farther, as a rectangle's tiers (squares)
/// measure it: `q` is beyond the square of half side `d` exactly where this is larger than `d`
/// (the offsets [`in_rect`] takes, so the same answers).
#[inline]
pub(super) fn larger_offset(p: [f32; 3], q: [f32; 3]) -> f32 {
    (q[0] - p[0]).abs().max((q[1] - p[1]).abs())
}

/// How many tier bounds [`QuietBands`] holds: four thresholds, each with and without the margin.
pub(crate) const TIER_BOUNDS: usize = 8;

impl QuietBands {
    /// Whether a target at `before.1`, seen from the observer at `before.0`, and at `now.1`, seen
    /// from `now.0`, is on the same side of every bound. Debug builds' checks
    /// ([`Touches::stays_in_band`] is the scans' form).
    ///
    /// [`Touches::stays_in_band`]: super::Touches::stays_in_band
    #[cfg(any(test, debug_assertions))]
    pub fn same_band(&self, before: ([f32; 3], [f32; 3]), now: ([f32; 3], [f32; 3])) -> bool {
        let ((p0, q0), (p1, q1)) = (before, now);
        let edge = match self.edge {
            BandEdge::Disc(r2) => same_side(&[r2], dist2(p0, q0), dist2(p1, q1)),
            BandEdge::Rect(half) => in_rect(p0, half, q0) == in_rect(p1, half, q1),
        };
        edge && self.same_tier_band(before, now)
    }

    /// [`Self::same_band`] without the view's edge: whether the target is on the same side of
    /// every tier bound (`true` without tiers). The test of an `Always` target, seen at any
    /// distance, whose tier alone follows the distance: a moving tiered observer's
    /// (`scan::flip::record_always_crossings`) and a standing one's
    /// (`scan::target::record_always_seers`).
    #[inline]
    pub fn same_tier_band(&self, before: ([f32; 3], [f32; 3]), now: ([f32; 3], [f32; 3])) -> bool {
        let Some(tiers) = &self.tiers else {
            return true;
        };
        let measure = |(p, q)| match self.edge {
            BandEdge::Disc(_) => dist2(p, q),
            BandEdge::Rect(_) => larger_offset(p, q),
        };
        same_side(tiers, measure(before), measure(now))
    }
}

/// Whether distances `before` and `now` (squared for a disc, [`larger_offset`]s for a
/// rectangle) are on the same side of each of `bounds` (`d > bound` is the view layer's test for
/// beyond).
#[inline]
pub(super) fn same_side(bounds: &[f32], before: f32, now: f32) -> bool {
    // Without a branch a bound, so that the compiler tests several at once.
    !bounds
        .iter()
        .fold(false, |crossed, &b| crossed | ((before > b) != (now > b)))
}
