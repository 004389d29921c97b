//! The view model an observer can opt into on top of the exact contract: [`ViewHysteresis`]
//! against border flicker, [`EnterBudget`] against bursts of enters, and [`ViewTiers`] for level
//! of detail by distance. Each is a component on the observer, off by default; an observer with
//! none of them sees exactly what the contract says, at the speed of the plain index.
//!
//! How they work together, per update and per observer (every rule of the contract, layers,
//! hidden and always, instances, applies first):
//! - A target *qualifies* when the contract says the observer sees it (within the radius or
//!   rectangle).
//! - A seen target stays seen while it is within the view grown by the hysteresis margin; once
//!   farther, it stays `linger_ticks` more updates and leaves in the next one if it is still out
//!   there (coming back within the grown view restarts the count). A rule change (layers,
//!   hidden, instance), a despawn, a removed component or bad input makes it leave at once, and
//!   so does losing the observer's view.
//! - Qualifying targets that are not seen enter, nearest first (ties by [`Entity`] order), at
//!   most [`EnterBudget`] of them per update; the rest wait and are chosen again from scratch
//!   next update (a waiting target that stops qualifying never enters).
//! - Each seen target is in a tier: the number of [`ViewTiers`] thresholds it is beyond. It moves
//!   to a nearer tier as soon as it is within the threshold, and to a farther one only once it
//!   is beyond the threshold plus the hysteresis margin.
//!
//! Internally the index looks as far as the grown view, and the view layer
//! ([`layer`]) turns what it finds into the observer's `InterestSet` and messages.

use bevy_ecs::prelude::*;

use crate::components::on_remove_tracked;

pub(crate) mod layer;

/// Damps border flicker for an observer: a target enters at the view's edge (the contract's
/// test) but, once seen, leaves only when it is farther than the view grown by `margin` (a radius
/// `r` becomes `r + margin`, a [`ViewRect`](crate::ViewRect) grows by `margin` on each side),
/// and only after `linger_ticks` consecutive updates out there: it leaves in the update after
/// those. A target that comes back in time causes no message at all. Rule changes (layers,
/// hidden, instance), despawns, removed components and bad input still leave at once.
///
/// Any margin from 0 to `+∞` is valid (`+∞`: leaves only by rules); a negative or NaN margin is
/// bad input (the observer is kept out of the index, with a warning logged once). Adding,
/// changing or removing it takes effect in the next update without messages for targets whose
/// visibility does not change.
///
/// Cost: the index finds targets as far as the grown view, and an observer with a view-model
/// component is re-examined in an update where it changed (`O(targets seen)`), or where a
/// target it sees (before or after) moved across its view's edge or a tier threshold (with or
/// without the margin) or changed otherwise, or a lingering target's time is up, or targets wait
/// for it (then only those targets are judged, unless targets wait). For a
/// [`ViewRange`](crate::ViewRange) with at most four tier thresholds, a target moving about
/// between them costs it nothing, and when the observer itself only moves (a step), only the
/// targets that its move carries across its edge or a threshold are judged (its flip scan finds
/// them in one more pass over the positions it searches).
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let hysteresis = ViewHysteresis { margin: 2.0, linger_ticks: 0 };
/// let o = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), hysteresis)).id();
/// let t = app.world_mut().spawn(Position::new(9.0, 0.0)).id();
/// app.update();
/// app.world_mut().get_mut::<Position>(t).unwrap().x = 11.5; // beyond 10, within 12
/// app.update();
/// assert!(app.world().get::<InterestSet>(o).unwrap().contains(t), "held by the margin");
/// app.world_mut().get_mut::<Position>(t).unwrap().x = 12.5;
/// app.update();
/// assert!(!app.world().get::<InterestSet>(o).unwrap().contains(t), "beyond the margin: gone");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq)
)]
#[component(on_remove = on_remove_tracked)]
pub struct ViewHysteresis {
    /// How much farther than the view a seen target may go before it starts to leave, in world
    /// units.
    pub margin: f32,
    /// How many consecutive updates a seen target may spend beyond the grown view before it
    /// leaves (0: it leaves in the first).
    pub linger_ticks: u32,
}

/// Limits how many targets enter an observer's view per update, against bursts of traffic when
/// it teleports or walks into a crowd: at most `self.0` enters per update, the nearest first
/// (by squared distance on the plugin's plane or volume, for a rectangle too; ties by
/// [`Entity`] order). The others wait ([`InterestSet::waiting`](crate::InterestSet::waiting),
/// [`AoiStats::waiting`](crate::AoiStats::waiting)) and are chosen again, nearest first, in the
/// next updates; a waiting target that stops qualifying never enters and causes no message.
/// Its [`EnterView`](crate::EnterView) says [`EnterReason::WaitedForBudget`](crate::EnterReason)
/// when it enters. Leaves are never delayed. `EnterBudget(0)` lets nothing enter.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// app.update(); // the first update runs the AOI twice (`PostStartup`, then `PostUpdate`)
/// let observer = (Position::new(0.0, 0.0), ViewRange::new(10.0), EnterBudget(2));
/// let o = app.world_mut().spawn(observer).id();
/// for x in 1..=5 {
///     app.world_mut().spawn(Position::new(x as f32, 0.0));
/// }
/// app.update();
/// let set = app.world().get::<InterestSet>(o).unwrap();
/// assert_eq!((set.len(), set.waiting()), (2, 3), "two entered, the nearest; three wait");
/// assert!(set.iter_with_tiers().all(|(t, _)| app.world().get::<Position>(t).unwrap().x <= 2.0));
/// app.update();
/// let set = app.world().get::<InterestSet>(o).unwrap();
/// assert_eq!((set.len(), set.waiting()), (4, 1), "two more entered in the next update");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq)
)]
#[component(on_remove = on_remove_tracked)]
pub struct EnterBudget(pub u32);

/// Grades an observer's view into rings for level of detail: a seen target's tier is the number
/// of thresholds it is beyond (tier 0: within the first). For a [`ViewRange`](crate::ViewRange)
/// a threshold `d` is the disc of radius `d` (`dist2 <= d²`); for a
/// [`ViewRect`](crate::ViewRect) it is the square `|dx| <= d && |dy| <= d` (within the
/// rectangle, nested rectangles). With [`ViewHysteresis`], a target moves to a farther tier only
/// once it is beyond the threshold plus the margin; to a nearer one as soon as it is within.
///
/// The tier is readable with [`InterestSet::tier_of`](crate::InterestSet::tier_of) and
/// [`InterestSet::iter_with_tiers`](crate::InterestSet::iter_with_tiers);
/// [`EnterView`](crate::EnterView) and [`LeaveView`](crate::LeaveView) carry it, and
/// [`TierChanged`](crate::TierChanged) says when it changes for a target that stays. Thresholds
/// must be ascending, non-negative and not NaN, at most 255 of them; others are bad input (the
/// observer is kept out of the index, with a warning logged once).
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default());
/// let tiers = ViewTiers::new([10.0, 30.0]);
/// let o = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(50.0), tiers)).id();
/// let near = app.world_mut().spawn(Position::new(5.0, 0.0)).id();
/// let far = app.world_mut().spawn(Position::new(40.0, 0.0)).id();
/// app.update();
/// let set = app.world().get::<InterestSet>(o).unwrap();
/// assert_eq!((set.tier_of(near), set.tier_of(far)), (Some(0), Some(2)));
/// ```
#[derive(Component, Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq)
)]
#[component(on_remove = on_remove_tracked)]
pub struct ViewTiers {
    /// The distance thresholds, ascending.
    pub thresholds: Vec<f32>,
}

impl ViewTiers {
    /// Tiers split at these distances (ascending).
    pub fn new(thresholds: impl IntoIterator<Item = f32>) -> Self {
        Self {
            thresholds: thresholds.into_iter().collect(),
        }
    }

    /// Why these thresholds are bad input, if they are.
    pub(crate) fn problem(&self) -> Option<&'static str> {
        let ascending = self.thresholds.windows(2).all(|w| w[0] <= w[1]);
        let valid = self.thresholds.iter().all(|&d| d >= 0.0);
        (!(ascending && valid && self.thresholds.len() <= 255))
            .then_some("its ViewTiers thresholds are not at most 255 ascending, non-negative numbers")
    }
}

/// The tier of a target at `q` for an observer at `p` (a rectangle's tiers are squares): how
/// many `thresholds` it is beyond, each grown by `extra` (0, or the hysteresis margin).
pub(crate) fn tier_at(p: [f32; 3], q: [f32; 3], rect: bool, thresholds: &[f32], extra: f32) -> u8 {
    let d2 = crate::visibility::dist2(p, q);
    let beyond = |d: f32| {
        let d = d + extra;
        if rect {
            !crate::visibility::in_rect(p, [d, d], q)
        } else {
            d2 > d * d
        }
    };
    // Ascending thresholds: the ones it is beyond come first (a short list: scanned).
    thresholds.iter().take_while(|&&d| beyond(d)).count() as u8
}
