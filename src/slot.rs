//! One tracked entity's state ([`Slot`]) and what a changed one was at the start of the tick
//! ([`Change`]).

use bevy_ecs::entity::Entity;

use crate::{
    config::AoiBounds,
    grid::{Member, NO_CELL},
    visibility::dist2,
    visibility::{ObserverState, Rules, TargetState},
};

/// Relative slack on reaches derived from steps, far more than the rounding of the `f32`
/// distances they add up.
pub(crate) const STEP_SLACK: f32 = 1.0 + 1.0e-4;

/// One tracked entity.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub entity: Entity,
    /// Projected position (meaningful while `in_grid`).
    pub p: [f32; 3],
    /// Projected position at the start of this tick (equal to `p` between ticks).
    pub start_p: [f32; 3],
    /// Squared view radius (for a rectangular view, that of the disc around it), or -1 when the
    /// entity is not an observer.
    pub r2: f32,
    /// View radius (for a rectangular view, `sqrt(r2)`; 0 when not an observer): how far the
    /// windows of moving targets must reach to find it.
    pub radius: f32,
    /// Half extents of a rectangular view ([`ViewRect`](crate::ViewRect)), `None` for a radius.
    pub rect: Option<[f32; 2]>,
    /// The cell its grid member is in, or `NO_CELL`.
    pub cell: u32,
    /// Where its member is in that cell's member list.
    pub member_index: u32,
    /// Whether the entity is indexed now (it has a valid position, and a valid range if any).
    pub in_grid: bool,
    /// Whether the entity still has a `Position`; the slot is freed at the end of the tick if not.
    pub has_position: bool,
    /// Whether the entity is on this tick's shortlist.
    pub on_shortlist: bool,
    /// Whether its grid member still carries the last update's start position and step flags
    /// (it is on the index's list of unsettled slots) and it has not changed again since.
    pub unsettled: bool,
    /// Whether a bad-input warning was logged for it.
    pub warned: bool,
    /// Whether it is a wide observer ([`crate::wide`]): target scans test it from the wide list,
    /// so its grid member carries no scan radius.
    pub wide: bool,
    /// On the shortlist as an observer that only stepped (same radius and rules, indexed before
    /// and after, moved at most the step limit, not wide) and saw at least
    /// `AoiSettings::flip_scan_min_seen` targets: instead of recomputing its list it tests each
    /// member of its window at the start and at the end of the tick, and edits the list where
    /// the two differ.
    pub stepping: bool,
    /// On the shortlist as a target that did more than step (moved past the step limit, changed
    /// rules, joined or left the index): stepping observers skip it, its own target scan decides
    /// its pairs with them.
    pub jumped: bool,
    /// On the shortlist as a stepping observer whose flip scan also decides its pairs as a
    /// target with the clean observers of its window (a disc at least as large as any ordinary
    /// radius, `Normal` visibility): the same two distances per member answer both, and its own
    /// target scan then tests only the wide observers.
    pub flip_scans_as_target: bool,
    /// Layers, visibility mode and instance.
    pub rules: Rules,
    /// It is an observer with a view-model component ([`crate::view_model`]); its radius or
    /// rectangle here is grown by its hysteresis margin.
    pub layered: bool,
    /// The view layer owns its `InterestSet`, messages and `Watched` counts (from the update it
    /// became layered until the layer hands it back); the pair engine only keeps its list.
    pub owned: bool,
}

impl Slot {
    /// A slot for `entity`, not yet indexed.
    pub fn free(entity: Entity) -> Self {
        Self {
            entity,
            p: [0.0; 3],
            start_p: [0.0; 3],
            r2: -1.0,
            radius: 0.0,
            rect: None,
            cell: NO_CELL,
            member_index: 0,
            in_grid: false,
            has_position: true,
            on_shortlist: false,
            unsettled: false,
            warned: false,
            wide: false,
            stepping: false,
            jumped: false,
            flip_scans_as_target: false,
            rules: Rules::default(),
            layered: false,
            owned: false,
        }
    }

    /// This slot as a target, now.
    #[inline]
    pub fn target(&self) -> TargetState {
        TargetState {
            in_grid: self.in_grid,
            p: self.p,
            rules: self.rules,
        }
    }

    /// This slot as an observer, at `p` (its position now, or at the start of the tick).
    #[inline]
    pub fn observer_at(&self, p: [f32; 3]) -> ObserverState {
        ObserverState {
            p,
            r2: self.r2,
            rect: self.rect,
            sees: self.rules.sees,
            instance: self.rules.instance,
        }
    }

    #[inline]
    pub fn is_observer(&self) -> bool {
        self.in_grid && self.r2 >= 0.0
    }

    /// The squared radius its grid member carries for target scans: negative when target scans
    /// must skip it (not an observer, wide, or recomputing its whole list this tick).
    #[inline]
    pub fn scan_r2(&self) -> f32 {
        if self.on_shortlist && !self.stepping {
            -1.0
        } else {
            self.settled_r2()
        }
    }

    /// [`Self::scan_r2`] between updates: negative when not an observer or wide.
    #[inline]
    pub fn settled_r2(&self) -> f32 {
        if self.wide { -1.0 } else { self.r2 }
    }

    /// How far from its position now a stepping observer's flip scan must look: its radius, plus
    /// its own step, plus the largest step of any target (`step_reach`), with a little slack for
    /// rounding. Other observers look as far as their radius.
    #[inline]
    pub fn scan_reach(&self, step_reach: f32) -> f32 {
        if self.stepping {
            (self.radius + dist2(self.start_p, self.p).sqrt() + step_reach) * STEP_SLACK
        } else {
            self.radius
        }
    }

    /// How far from it its own scan must look on each axis: [`Self::scan_reach`] on every axis
    /// for a radius (`+∞` when its square overflows: the whole instance), or for a rectangular
    /// view its half extents (plus the same steps and slack when stepping), which is tighter than
    /// the disc around the rectangle.
    #[inline]
    pub fn scan_extent(&self, step_reach: f32) -> [f32; 3] {
        match self.rect {
            None => axes_of(self.scan_reach(step_reach)),
            Some([hw, hh]) if self.stepping => {
                let extra = dist2(self.start_p, self.p).sqrt() + step_reach;
                [(hw + extra) * STEP_SLACK, (hh + extra) * STEP_SLACK, 0.0]
            }
            Some(_) => self.view_extent(),
        }
    }

    /// How far from it its view reaches on each axis now: its radius on every axis (`+∞` when
    /// its square overflows) or its half extents. [`Self::scan_extent`] of an observer that is
    /// not stepping; a recompute of a stepping one needs no more.
    #[inline]
    pub fn view_extent(&self) -> [f32; 3] {
        match self.rect {
            None => axes_of(self.radius),
            Some([hw, hh]) => [hw, hh, 0.0],
        }
    }
}

/// What a changed slot was at the start of the tick.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Change {
    pub slot: u32,
    pub old_in: bool,
    pub old_p: [f32; 3],
    pub old_r2: f32,
    pub old_rect: Option<[f32; 2]>,
    pub old_rules: Rules,
}

impl Change {
    /// The slot as a target, at the start of the tick.
    #[inline]
    pub fn old_target(&self) -> TargetState {
        TargetState {
            in_grid: self.old_in,
            p: self.old_p,
            rules: self.old_rules,
        }
    }
}

/// A disc's reach on each axis: `r` on every axis, or `+∞` when its square overflows (the whole
/// instance).
#[inline]
fn axes_of(r: f32) -> [f32; 3] {
    if r * r == f32::INFINITY {
        [f32::INFINITY; 3]
    } else {
        [r; 3]
    }
}

/// A grid member of `instance` as an observer, where it is now (a rectangular view's half
/// extents come from its slot).
#[inline]
pub(crate) fn observer_of(m: &Member, instance: u32, slots: &[Slot]) -> ObserverState {
    ObserverState {
        p: m.p,
        r2: m.r2,
        rect: if m.rect { slots[m.slot as usize].rect } else { None },
        sees: m.sees,
        instance,
    }
}

/// What an entity's view components ask for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Sight {
    /// Not an observer.
    Blind,
    /// A [`ViewRange`](crate::ViewRange) radius.
    Radius(f32),
    /// A [`ViewRect`](crate::ViewRect)'s half extents.
    Rect([f32; 2]),
    /// Bad input found in the components, and why.
    Bad(&'static str),
}

/// Why an entity is kept out of the index.
pub(crate) fn bad_input(p: [f32; 3], sight: Sight, bounds: Option<&AoiBounds>, dims: usize) -> Option<&'static str> {
    if !p.iter().all(|c| c.is_finite()) {
        return Some("its Position is not finite");
    }
    if let Some(b) = bounds
        && !b.accepts(p, dims)
    {
        return Some("its Position is farther outside the AoiPlugin bounds than one bounds size");
    }
    // Any radius or half extent from 0 to +inf is valid (a square that overflows is +inf: every
    // finite position).
    let bad = |v: f32| v.is_nan() || v < 0.0;
    match sight {
        Sight::Blind => None,
        Sight::Radius(r) if bad(r) => Some("its ViewRange radius is negative or NaN"),
        Sight::Radius(_) => None,
        Sight::Rect(half) if half.into_iter().any(bad) => Some("its ViewRect half extents are negative or NaN"),
        Sight::Rect(_) if dims == 3 => {
            Some("it has a ViewRect, which needs a 2D plane (Plane::XY or Plane::XZ), and the plugin uses Plane::XYZ")
        }
        Sight::Rect(_) => None,
        Sight::Bad(why) => Some(why),
    }
}
