//! The one visibility rule, and the forms the scans use it in.
//!
//! An observer sees a target when both are indexed, they share an instance, a layer the observer
//! sees is one the target is in, and the target is `Always` visible or `Normal` and within the
//! view ([`within`]: `dist2 <= r2` for a radius, `|dx| <= hw && |dy| <= hh` for a rectangle, the
//! boundary inside). [`sees`] is that rule for one pair. The observer scans walk grid cells,
//! which hold one instance each, and test each member with [`within`] and
//! `sees & scan_layers(member) != 0`, where [`scan_layers`] folds the visibility mode into the
//! layers (`Hidden` and `Always` targets are never found by distance); `Always` targets are
//! appended from their instance's list. The grid says where the observers that may see a target
//! are ([`Grid::observer_region`](crate::grid::Grid::observer_region)).

use crate::rules::AoiVisibility;

/// The visibility rules of one entity (layers, mode, instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    pub member: u32,
    pub sees: u32,
    pub mode: AoiVisibility,
    pub instance: u32,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            member: u32::MAX,
            sees: u32::MAX,
            mode: AoiVisibility::Normal,
            instance: 0,
        }
    }
}

/// A target as the visibility rule needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TargetState {
    pub in_grid: bool,
    pub p: [f32; 3],
    pub rules: Rules,
}

/// Squared distance between two projected points. Every distance decision for a radius goes
/// through this one function (by way of [`within`]), so the same pair always gets the same
/// answer.
#[inline(always)]
pub(crate) fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    let dx = a[0] - b[0];
    let dy = a[1] - b[1];
    let dz = a[2] - b[2];
    dx * dx + dy * dy + dz * dz
}

/// Whether `q` is within the view of an observer at `p`: within squared radius `r2`, or, for a
/// rectangular view (`rect = Some([hw, hh])`, 2D planes only), within `hw` and `hh` on the
/// plane's two axes. The boundary is inside. Every distance decision goes through here.
#[inline(always)]
pub(crate) fn within(p: [f32; 3], r2: f32, rect: Option<[f32; 2]>, q: [f32; 3]) -> bool {
    match rect {
        None => dist2(p, q) <= r2,
        Some(half) => in_rect(p, half, q),
    }
}

/// The rectangle half of [`within`]: `q` is within `hw` and `hh` of `p` on the plane's two axes.
#[inline(always)]
pub(crate) fn in_rect(p: [f32; 3], [hw, hh]: [f32; 2], q: [f32; 3]) -> bool {
    ((q[0] - p[0]).abs() <= hw) & ((q[1] - p[1]).abs() <= hh)
}

/// The squared radius of the disc around a rectangular view of half extents `hw`, `hh`: every
/// point the rectangle test accepts has `dist2 <= ` this, exactly in `f32` (the squares and the
/// sum round monotonically, in the same order as [`dist2`]), so it serves as a prefilter and for
/// the windows.
#[inline]
pub(crate) fn rect_r2([hw, hh]: [f32; 2]) -> f32 {
    hw * hw + hh * hh
}

/// An observer as the visibility rule needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObserverState {
    pub p: [f32; 3],
    /// Squared view radius (for a rectangle, [`rect_r2`] of it).
    pub r2: f32,
    /// Half extents of a rectangular view.
    pub rect: Option<[f32; 2]>,
    /// The layers it sees.
    pub sees: u32,
    pub instance: u32,
}

/// The visibility rule: does this observer see this target? Target scans, the `Watchers` fill
/// and every before/after comparison call it; the observer scans apply the same rule to grid
/// members in the form of [`within`] and [`scan_layers`].
#[inline]
pub(crate) fn sees(o: &ObserverState, t: &TargetState) -> bool {
    t.in_grid
        && t.rules.instance == o.instance
        && match verdict(o.sees, &t.rules) {
            Verdict::Never => false,
            Verdict::Always => true,
            Verdict::ByDistance => within(o.p, o.r2, o.rect, t.p),
        }
}

/// What the layers and the visibility mode say of a pair in one instance (the part of the rule
/// before the distance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No layer in common, or the target is `Hidden`.
    Never,
    /// The target is `Always` visible.
    Always,
    /// The distance decides.
    ByDistance,
}

/// [`Verdict`] of an observer seeing the layers `sees` for a target with rules `t`.
#[inline]
pub(crate) fn verdict(sees: u32, t: &Rules) -> Verdict {
    if sees & t.member == 0 {
        return Verdict::Never;
    }
    match t.mode {
        AoiVisibility::Hidden => Verdict::Never,
        AoiVisibility::Always => Verdict::Always,
        AoiVisibility::Normal => Verdict::ByDistance,
    }
}

/// Whether an observer seeing the layers `sees` sees nobody, whatever the distances and the
/// targets' rules: [`verdict`] is [`Verdict::Never`] for every target when it sees no layer.
#[inline]
pub(crate) fn sees_no_layer(sees: u32) -> bool {
    sees == 0
}

/// The instance in which `t` is visible to every observer whatever the distance (it is indexed
/// and `Always` visible), if any.
#[inline]
pub(crate) fn always_in(t: &TargetState) -> Option<u32> {
    (t.in_grid && t.rules.mode == AoiVisibility::Always).then_some(t.rules.instance)
}

/// The layers a scan by distance may find an entity in: its member layers if it is `Normal`,
/// none otherwise (`Always` targets come from their instance's list, `Hidden` ones never).
#[inline]
pub(crate) fn scan_layers(rules: &Rules) -> u32 {
    if rules.mode == AoiVisibility::Normal {
        rules.member
    } else {
        0
    }
}
