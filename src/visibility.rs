//! The one visibility rule, and the forms the scans use it in.
//!
//! An observer sees a target when both are indexed, they share an instance, a layer the observer
//! sees is one the target is in, and the target is `Always` visible or `Normal` and within the
//! radius (`dist2 <= r2`, the boundary inside). [`sees`] is that rule for one pair. The observer
//! scans walk grid cells, which hold one instance each, and test each member with `dist2 <= r2`
//! and `sees & scan_layers(member) != 0`, where [`scan_layers`] folds the visibility mode into
//! the layers (`Hidden` and `Always` targets are never found by distance); `Always` targets are
//! appended from their instance's list. [`observer_region`] says where the observers that may see a target
//! are.

use crate::{
    grid::{Grid, Window, dist2},
    rules::AoiVisibility,
};

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

/// Where the observers that may see `t` are (with views of at most `reach`): around it in its
/// instance, the whole instance if it is `Always` visible, nowhere if it is hidden or unindexed.
pub(crate) fn observer_region(grid: &Grid, t: &TargetState, reach: f32) -> Option<Window> {
    if !t.in_grid {
        return None;
    }
    match t.rules.mode {
        AoiVisibility::Hidden => None,
        AoiVisibility::Always => Some(Window::whole(t.rules.instance)),
        AoiVisibility::Normal => Some(grid.window(t.p, reach, t.rules.instance)),
    }
}

/// The visibility rule: does an observer (position, squared radius, layers it sees, instance)
/// see this target? Target scans, the `Watchers` fill and every before/after comparison call it;
/// the observer scans apply the same rule to grid members in the form of [`scan_layers`].
#[inline]
pub(crate) fn sees(p: [f32; 3], r2: f32, sees: u32, instance: u32, t: &TargetState) -> bool {
    t.in_grid
        && t.rules.instance == instance
        && (sees & t.rules.member) != 0
        && match t.rules.mode {
            AoiVisibility::Hidden => false,
            AoiVisibility::Always => true,
            AoiVisibility::Normal => dist2(p, t.p) <= r2,
        }
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
