//! One tracked entity's state ([`Slot`]) and what a changed one was at the start of the tick
//! ([`Change`], [`OldView`]).

use crate::{
    config::AoiBounds,
    grid::{Member, NO_CELL},
    visibility::dist2,
    visibility::{ObserverState, Rules, TargetState},
};

/// Relative slack on reaches derived from steps, far more than the rounding of the `f32`
/// distances they add up.
pub(crate) const STEP_SLACK: f32 = 1.0 + 1.0e-4;

/// One tracked entity, in 60 bytes (88 until stop 32): the passes over the slots stream fewer
/// cache lines and a lookup of one reads at most two (measured in `PERFORMANCE.md`, stop 32).
/// Its entity is in the index's packed array, its position at the start of the tick in the
/// index's `starts`, and its yes/no states are bits ([`Flag`]).
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    /// Projected position (meaningful while `in_grid`).
    pub p: [f32; 3],
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
    /// Layers, visibility mode and instance.
    pub rules: Rules,
    /// Its [`Flag`]s, one bit each.
    flags: u16,
}

/// Defines [`Flag`] and, for each flag, a getter and a setter on [`Slot`].
macro_rules! slot_flags {
    ($($(#[$doc:meta])* $name:ident, $get:ident, $set:ident;)*) => {
        /// The yes/no states of a [`Slot`], one bit each of its `flags`.
        #[derive(Clone, Copy, Debug)]
        #[repr(u16)]
        pub(crate) enum Flag {
            $($(#[$doc])* $name,)*
        }

        impl Slot {
            $(
                $(#[$doc])*
                #[inline(always)]
                pub fn $get(&self) -> bool {
                    self.flags & Flag::$name.bit() != 0
                }

                #[doc = concat!("Sets [`Self::", stringify!($get), "`].")]
                #[inline(always)]
                pub fn $set(&mut self, on: bool) {
                    let bit = Flag::$name.bit();
                    self.flags = if on { self.flags | bit } else { self.flags & !bit };
                }
            )*
        }

        /// A flag's name, value, getter and setter, for the tests.
        #[cfg(test)]
        type Accessors = (&'static str, Flag, fn(&Slot) -> bool, fn(&mut Slot, bool));

        /// Every flag's name, value, getter and setter, for the tests.
        #[cfg(test)]
        const FLAG_ACCESSORS: &[Accessors] = &[$((stringify!($get), Flag::$name, Slot::$get, Slot::$set)),*];
    };
}

slot_flags! {
    /// Whether the entity is indexed now (it has a valid position, and a valid range if any).
    InGrid, in_grid, set_in_grid;
    /// Whether the entity still has a `Position`; the slot is freed at the end of the tick if not.
    HasPosition, has_position, set_has_position;
    /// Whether the entity is on this tick's shortlist.
    OnShortlist, on_shortlist, set_on_shortlist;
    /// Whether its grid member still carries the last update's start position and step flags
    /// (it is on the index's list of unsettled slots) and it has not changed again since.
    Unsettled, unsettled, set_unsettled;
    /// Whether a bad-input warning was logged for it.
    Warned, warned, set_warned;
    /// Whether it is a wide observer ([`crate::wide`]): target scans test it from the wide list,
    /// so its grid member carries no scan radius.
    Wide, wide, set_wide;
    /// On the shortlist as an observer that only stepped (same radius and rules, indexed before
    /// and after, moved at most the step limit; if wide, a disc of finite radius) and saw at least
    /// `AoiSettings::flip_scan_min_seen` targets: instead of recomputing its list it tests each
    /// member of its window at the start and at the end of the tick, and edits the list where
    /// the two differ.
    Stepping, stepping, set_stepping;
    /// On the shortlist as a target that did more than step (moved past the step limit, changed
    /// rules, joined or left the index): stepping observers skip it, its own target scan decides
    /// its pairs with them.
    Jumped, jumped, set_jumped;
    /// On the shortlist as a stepping observer whose flip scan also decides its pairs as a
    /// target with the clean observers of its window (a disc at least as large as any ordinary
    /// radius, not wide, `Normal` visibility): the same two distances per member answer both,
    /// and its own target scan then tests only the wide observers.
    FlipScansAsTarget, flip_scans_as_target, set_flip_scans_as_target;
    /// It is an observer with a view-model component ([`crate::view_model`]); its radius or
    /// rectangle here is grown by its hysteresis margin.
    Layered, layered, set_layered;
    /// The view layer owns its `InterestSet`, messages and `Watched` counts (from the update it
    /// became layered until the layer hands it back); the pair engine only keeps its list.
    Owned, owned, set_owned;
    /// On the shortlist with a view (indexed or not, radius, rectangle, rules) other than at the
    /// start of the tick, which the index keeps in its `old_views` ([`OldView`]).
    ViewChanged, view_changed, set_view_changed;
}

impl Flag {
    /// Its bit in a slot's `flags`.
    #[inline(always)]
    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl Slot {
    /// Clears every flag of `flags` in one step.
    #[inline(always)]
    pub fn clear(&mut self, flags: &[Flag]) {
        let mask = flags.iter().fold(0, |mask, &f| mask | f.bit());
        self.flags &= !mask;
    }

    /// Whether each flag of `flags` (each named once) is as given, in one masked compare.
    #[inline(always)]
    pub fn flags_are(&self, flags: &[(Flag, bool)]) -> bool {
        let mask = flags.iter().fold(0, |mask, &(f, _)| mask | f.bit());
        let want = (flags.iter()).fold(0, |want, &(f, on)| if on { want | f.bit() } else { want });
        self.flags & mask == want
    }

    /// A slot not yet indexed (its entity goes in the index's packed array).
    pub fn free() -> Self {
        Self {
            p: [0.0; 3],
            r2: -1.0,
            radius: 0.0,
            rect: None,
            cell: NO_CELL,
            member_index: 0,
            rules: Rules::default(),
            flags: Flag::HasPosition.bit(),
        }
    }

    /// This slot as a target, now.
    #[inline]
    pub fn target(&self) -> TargetState {
        TargetState {
            in_grid: self.in_grid(),
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
        self.in_grid() && self.r2 >= 0.0
    }

    /// An observer that sees only some layers (counted in `AoiIndex::narrow_observers`).
    #[inline]
    pub fn sees_some_layers(&self) -> bool {
        self.is_observer() && self.rules.sees != crate::rules::AoiLayers::ALL
    }

    /// The squared radius its grid member carries for target scans: negative when target scans
    /// must skip it (not an observer, wide, or recomputing its whole list this tick).
    #[inline]
    pub fn scan_r2(&self) -> f32 {
        if self.on_shortlist() && !self.stepping() {
            -1.0
        } else {
            self.settled_r2()
        }
    }

    /// [`Self::scan_r2`] between updates: negative when not an observer or wide.
    #[inline]
    pub fn settled_r2(&self) -> f32 {
        if self.wide() { -1.0 } else { self.r2 }
    }

    /// How far from its position now a stepping observer's flip scan must look: its radius, plus
    /// its own step (from `start`, where it was at the start of the tick), plus the largest step
    /// of any target (`step_reach`), with a little slack for rounding. Other observers look as
    /// far as their radius.
    #[inline]
    pub fn scan_reach(&self, start: [f32; 3], step_reach: f32) -> f32 {
        if self.stepping() {
            (self.radius + dist2(start, self.p).sqrt() + step_reach) * STEP_SLACK
        } else {
            self.radius
        }
    }

    /// How far from it its own scan must look on each axis: [`Self::scan_reach`] on every axis
    /// for a radius (`+∞` when its square overflows: the whole instance), or for a rectangular
    /// view its half extents (plus the same steps and slack when stepping), which is tighter than
    /// the disc around the rectangle.
    #[inline]
    pub fn scan_extent(&self, start: [f32; 3], step_reach: f32) -> [f32; 3] {
        match self.rect {
            None => axes_of(self.scan_reach(start, step_reach)),
            Some([hw, hh]) if self.stepping() => {
                let extra = dist2(start, self.p).sqrt() + step_reach;
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

/// A changed slot on the shortlist: its number and where it was at the start of the tick. The
/// rest of what it was then is its [`OldView`]: its slot's own fields, unless its view changed
/// this tick ([`Slot::view_changed`]; the index keeps the old one apart, `old_views`). Most
/// changes are moves, and every pass over the shortlist streams these records: 16 bytes instead
/// of the 52 that held the view too. `scenario`, `sparse_huge` 50k, one thread, six alternating
/// runs: 4.13 → 3.88 ms an update (`PERFORMANCE.md`, stop 57); uniform and 5% moving level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Change {
    pub slot: u32,
    pub old_p: [f32; 3],
}

const _: () = assert!(size_of::<Change>() == 16, "a shortlist record should be 16 bytes");

impl Change {
    /// A change of slot `s`, which is `slot` at the start of the tick.
    #[inline]
    pub fn from_slot(s: u32, slot: &Slot) -> Self {
        Self { slot: s, old_p: slot.p }
    }
}

/// What a changed slot's view was at the start of the tick: whether it was indexed, its squared
/// radius, rectangle and rules (its position is in its [`Change`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OldView {
    pub in_grid: bool,
    pub r2: f32,
    pub rect: Option<[f32; 2]>,
    pub rules: Rules,
}

impl OldView {
    /// The view of `slot` now.
    #[inline]
    pub fn of(slot: &Slot) -> Self {
        Self {
            in_grid: slot.in_grid(),
            r2: slot.r2,
            rect: slot.rect,
            rules: slot.rules,
        }
    }

    /// The view of changed slot `s` (`slot`) at the start of the tick: kept in `old_views`
    /// when it changed, else its slot's now.
    #[inline]
    pub fn at_start(s: u32, slot: &Slot, old_views: &[OldView]) -> Self {
        if slot.view_changed() {
            old_views[s as usize]
        } else {
            Self::of(slot)
        }
    }

    /// The slot as a target at the start of the tick, at `p` (its [`Change::old_p`]).
    #[inline]
    pub fn target(&self, p: [f32; 3]) -> TargetState {
        TargetState {
            in_grid: self.in_grid,
            p,
            rules: self.rules,
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

/// A grid member of `instance` as an observer, where it is now.
#[inline]
pub(crate) fn observer_of(m: &Member, instance: u32) -> ObserverState {
    ObserverState {
        p: m.p,
        r2: m.r2,
        rect: m.rect(),
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
    if let Some(why) = bad_position(p, bounds, dims) {
        return Some(why);
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

/// What is wrong with projected position `p` (the position part of [`bad_input`]), if anything.
#[inline(always)]
pub(crate) fn bad_position(p: [f32; 3], bounds: Option<&AoiBounds>, dims: usize) -> Option<&'static str> {
    if !p.iter().all(|c| c.is_finite()) {
        return Some("its Position is not finite");
    }
    if let Some(b) = bounds
        && !b.accepts(p, dims)
    {
        return Some("its Position is farther outside the AoiPlugin bounds than one bounds size");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_no_larger_than_a_cache_line() {
        assert!(
            size_of::<Slot>() <= 64,
            "a slot should take at most 64 bytes (it is {}); see its doc",
            size_of::<Slot>()
        );
    }

    #[test]
    fn each_flag_is_its_own_bit() {
        assert!(FLAG_ACCESSORS.len() <= 16, "the flags should fit the u16");
        for &(name, _, _, set) in FLAG_ACCESSORS {
            for base in [false, true] {
                let mut slot = Slot::free();
                for &(_, _, _, set_other) in FLAG_ACCESSORS {
                    set_other(&mut slot, base);
                }
                set(&mut slot, !base);
                for &(other, _, get_other, _) in FLAG_ACCESSORS {
                    let want = if other == name { !base } else { base };
                    assert_eq!(
                        get_other(&slot),
                        want,
                        "setting {name} to {} with every other flag {base} should leave {other} {want}",
                        !base
                    );
                }
            }
        }
    }

    #[test]
    fn flags_are_compares_exactly_the_flags_given() {
        // Every pair of two flags, each state of the two and each wanted value, the other flags
        // on or off: the masked compare should agree with the two getters.
        for &(a, flag_a, get_a, set_a) in FLAG_ACCESSORS {
            for &(b, flag_b, get_b, set_b) in FLAG_ACCESSORS.iter().filter(|f| f.0 != a) {
                for bits in 0..32u32 {
                    let [others, on_a, on_b, want_a, want_b] = core::array::from_fn(|k| bits >> k & 1 != 0);
                    let mut slot = Slot::free();
                    FLAG_ACCESSORS.iter().for_each(|&(_, _, _, set)| set(&mut slot, others));
                    set_a(&mut slot, on_a);
                    set_b(&mut slot, on_b);
                    let same = get_a(&slot) == want_a && get_b(&slot) == want_b;
                    assert_eq!(
                        slot.flags_are(&[(flag_a, want_a), (flag_b, want_b)]),
                        same,
                        "flags_are should say whether {a} is {want_a} and {b} is {want_b} \
                         (they are {} and {})",
                        get_a(&slot),
                        get_b(&slot)
                    );
                }
            }
        }
    }

    #[test]
    fn a_free_slot_has_a_position_and_nothing_else() {
        let slot = Slot::free();
        for &(name, _, get, _) in FLAG_ACCESSORS {
            assert_eq!(
                get(&slot),
                name == "has_position",
                "a free slot's {name} should be {}",
                name == "has_position"
            );
        }
    }
}
