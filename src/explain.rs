//! AOI queries on a [`World`] for games and support tools: why a pair is or is not in view
//! ([`AoiWorldExt::explain_view`]), and how much memory the index holds.

use bevy_ecs::{entity::Entity, world::World};

use crate::{
    components::{InterestSet, ViewRange, ViewRect},
    index::AoiIndex,
    rules::AoiVisibility,
    visibility::dist2,
    visibility::sees,
};

/// Why an observer does or does not see a target, as of the last AOI update (what its
/// [`InterestSet`] says; without sets, [`AoiPlugin::interest_sets`](crate::AoiPlugin) `false`,
/// what the messages said). [`Self::is_visible`] is exactly whether the set holds the target
/// (for observers with view-model components, through [`Self::ViewModel`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ViewExplanation {
    /// The observer is not tracked: it has no `Position` (or the plugin is not added).
    ObserverNotTracked,
    /// The observer has no [`ViewRange`] or [`ViewRect`].
    NotAnObserver,
    /// The observer is kept out of the index as bad input (a non-finite position, a bad radius
    /// or rectangle, both a radius and a rectangle, a view-model component when the plugin keeps
    /// no sets, or a position far outside the bounds); a warning said which when it happened.
    ObserverKeptOut,
    /// The target is not tracked: it has no `Position`.
    TargetNotTracked,
    /// The target is kept out of the index as bad input.
    TargetKeptOut,
    /// The same entity: an observer never sees itself.
    SameEntity,
    /// They are in different [`AoiInstance`](crate::AoiInstance)s.
    OtherInstance {
        /// The observer's instance.
        observer: u32,
        /// The target's instance.
        target: u32,
    },
    /// No layer the observer sees is one the target is in ([`AoiLayers`](crate::AoiLayers)).
    NoSharedLayer {
        /// The layers the observer sees.
        observer_sees: u32,
        /// The layers the target is in.
        target_member: u32,
    },
    /// The target is [`AoiVisibility::Hidden`]: nobody sees it.
    Hidden,
    /// The target is [`AoiVisibility::Always`]: everyone of its instance whose layers allow it
    /// sees it, whatever the distance.
    Always,
    /// The distance rule decides: seen when `squared_distance <= squared_radius` (in `f32`, in
    /// the plugin's plane or volume), the boundary counting as inside.
    Distance {
        /// Squared distance between the two, as the index computed it.
        squared_distance: f32,
        /// The observer's squared view radius.
        squared_radius: f32,
    },
    /// The observer's [`ViewRect`] decides: seen when `|dx| <= half_width` and
    /// `|dy| <= half_height` (in `f32`, on the plugin's plane), the boundary counting as inside.
    Rectangle {
        /// Target minus observer along the plane's first axis, as the index computed it.
        dx: f32,
        /// Target minus observer along the plane's second axis.
        dy: f32,
        /// The observer's half width.
        half_width: f32,
        /// The observer's half height.
        half_height: f32,
    },
    /// The observer has view-model components ([`ViewHysteresis`](crate::ViewHysteresis),
    /// [`EnterBudget`](crate::EnterBudget), [`ViewTiers`](crate::ViewTiers)) and the rules
    /// allow the pair: whether the target is shown also depends on the past (held by the
    /// margin, lingering, or waiting for the budget).
    ViewModel {
        /// Whether its set holds the target.
        shown: bool,
        /// Whether the contract's test (the view itself, not grown by the margin) holds now.
        within_view: bool,
    },
}

impl ViewExplanation {
    /// Whether the observer sees the target.
    pub fn is_visible(&self) -> bool {
        match *self {
            Self::Always => true,
            Self::Distance {
                squared_distance,
                squared_radius,
            } => squared_distance <= squared_radius,
            Self::Rectangle {
                dx,
                dy,
                half_width,
                half_height,
            } => dx.abs() <= half_width && dy.abs() <= half_height,
            Self::ViewModel { shown, .. } => shown,
            _ => false,
        }
    }

    /// For the distance rule: how far inside the view the target is (negative: how far
    /// outside), `radius - distance` in world units; `+∞` for a view whose squared radius is
    /// `+∞` (unlimited, or so large that its square overflows), which sees every distance. For a
    /// rectangle: how far inside its nearer edge (`min(half_width - |dx|, half_height - |dy|)`;
    /// negative: how far outside the edge it is farthest beyond).
    pub fn margin(&self) -> Option<f32> {
        match *self {
            Self::Distance {
                squared_distance,
                squared_radius,
            } if squared_radius == f32::INFINITY => {
                debug_assert!(
                    squared_distance <= squared_radius,
                    "an unlimited view should see every distance"
                );
                Some(f32::INFINITY)
            }
            Self::Distance {
                squared_distance,
                squared_radius,
            } => Some(squared_radius.sqrt() - squared_distance.sqrt()),
            Self::Rectangle {
                dx,
                dy,
                half_width,
                half_height,
            } => Some((half_width - dx.abs()).min(half_height - dy.abs())),
            _ => None,
        }
    }
}

/// AOI queries on a [`World`] (from exclusive systems, tests and tools).
pub trait AoiWorldExt {
    /// Why `observer` does or does not see `target` right now (as of the last AOI update).
    /// `O(1)`: two entity lookups and one test of the rule.
    ///
    /// ```
    /// use bevy_app::prelude::*;
    /// use bevy_aoi::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins(AoiPlugin::default());
    /// let guard = app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    /// let thief = app.world_mut().spawn(Position::new(12.0, 0.0)).id();
    /// app.update();
    /// let why = app.world().explain_view(guard, thief);
    /// assert!(!why.is_visible());
    /// assert_eq!(why.margin(), Some(-2.0), "the thief is 2 units outside the guard's view");
    /// ```
    fn explain_view(&self, observer: Entity, target: Entity) -> ViewExplanation;

    /// Heap bytes the AOI index holds now (slots, grid cells and members, per-observer lists,
    /// maps): a count of capacities, hash tables approximated; 0 without the plugin. It grows to
    /// the working size and stays there (buffers are reused, not shrunk). Not included: the
    /// `InterestSet` components and Bevy's message buffers. `O(slots + cells)`.
    fn aoi_index_bytes(&self) -> usize;
}

impl AoiWorldExt for World {
    fn explain_view(&self, observer: Entity, target: Entity) -> ViewExplanation {
        let Some(index) = self.get_resource::<AoiIndex>() else {
            return ViewExplanation::ObserverNotTracked;
        };
        let answer = explain(index, observer, target);
        let owned = index.slot_of(observer).is_some_and(|s| index.slots[s as usize].owned());
        // The index's view of an owned observer is grown by its margin: judge the view itself.
        let within_view = match answer {
            _ if !owned => return answer,
            ViewExplanation::Always => true,
            ViewExplanation::Distance { squared_distance, .. } => self
                .get::<ViewRange>(observer)
                .is_some_and(|r| squared_distance <= r.radius * r.radius),
            ViewExplanation::Rectangle { dx, dy, .. } => self
                .get::<ViewRect>(observer)
                .is_some_and(|v| dx.abs() <= v.half_width && dy.abs() <= v.half_height),
            _ => return answer,
        };
        let shown = self
            .get::<InterestSet>(observer)
            .is_some_and(|set| set.contains(target));
        ViewExplanation::ViewModel { shown, within_view }
    }

    fn aoi_index_bytes(&self) -> usize {
        self.get_resource::<AoiIndex>().map_or(0, AoiIndex::heap_bytes)
    }
}

/// [`AoiWorldExt::explain_view`] on the index.
fn explain(index: &AoiIndex, observer: Entity, target: Entity) -> ViewExplanation {
    use ViewExplanation::*;
    let Some(o) = index.slot_of(observer).map(|s| &index.slots[s as usize]) else {
        return ObserverNotTracked;
    };
    if !o.in_grid() {
        return ObserverKeptOut;
    }
    if !o.is_observer() {
        return NotAnObserver;
    }
    let Some(t) = index.slot_of(target).map(|s| &index.slots[s as usize]) else {
        return TargetNotTracked;
    };
    if observer == target {
        return SameEntity;
    }
    if !t.in_grid() {
        return TargetKeptOut;
    }
    let answer = if o.rules.instance != t.rules.instance {
        OtherInstance {
            observer: o.rules.instance,
            target: t.rules.instance,
        }
    } else if o.rules.sees & t.rules.member == 0 {
        NoSharedLayer {
            observer_sees: o.rules.sees,
            target_member: t.rules.member,
        }
    } else {
        match t.rules.mode {
            AoiVisibility::Hidden => Hidden,
            AoiVisibility::Always => Always,
            AoiVisibility::Normal => match o.rect {
                None => Distance {
                    squared_distance: dist2(o.p, t.p),
                    squared_radius: o.r2,
                },
                Some([half_width, half_height]) => Rectangle {
                    dx: t.p[0] - o.p[0],
                    dy: t.p[1] - o.p[1],
                    half_width,
                    half_height,
                },
            },
        }
    };
    debug_assert_eq!(
        answer.is_visible(),
        sees(&o.observer_at(o.p), &t.target()),
        "an explanation should agree with the visibility rule"
    );
    answer
}
