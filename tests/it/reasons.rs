//! The oracle of [`EnterReason`] and [`LeaveReason`], written from their docs (the first reason
//! that applies, judged from the pair's two entities at the start and at the end of the update),
//! and hand-made updates that cause each reason.

use std::collections::BTreeMap;

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Scenario, on_each_index};

/// What the reasons read of one entity at one moment (absent: no `Position`, or despawned).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moment {
    /// In the index: valid position, and valid view components if any.
    pub indexed: bool,
    /// Indexed, with a view.
    pub observer: bool,
    pub layers: AoiLayers,
    pub mode: AoiVisibility,
    pub instance: u32,
}

/// Every tracked entity's moment.
pub type Moments = BTreeMap<Entity, Moment>;

/// What the layers and the mode say of a pair, before the distance: never, always, or by
/// distance.
fn verdict(o: &Moment, t: &Moment) -> Option<bool> {
    if o.layers.sees & t.layers.member == 0 {
        return Some(false);
    }
    match t.mode {
        AoiVisibility::Hidden => Some(false),
        AoiVisibility::Always => Some(true),
        AoiVisibility::Normal => None,
    }
}

/// The reason of an enter of `(o, t)`, both seen now, from `before` and `now` (the budget
/// aside: the caller knows whether `t` waited).
pub fn enter(before: &Moments, now: &Moments, o: Entity, t: Entity) -> EnterReason {
    let (Some(bo), Some(bt)) = (before.get(&o), before.get(&t)) else {
        return EnterReason::Appeared;
    };
    let (no, nt) = (&now[&o], &now[&t]);
    if !bo.observer || !bt.indexed {
        EnterReason::Appeared
    } else if bo.instance != bt.instance {
        EnterReason::InstanceChanged
    } else if verdict(bo, bt) != verdict(no, nt) {
        EnterReason::RulesChanged
    } else {
        EnterReason::CameIntoRange
    }
}

/// The reason of a leave of `(o, t)`, seen at the start of the update.
pub fn leave(before: &Moments, now: &Moments, o: Entity, t: Entity) -> LeaveReason {
    let Some(no) = now.get(&o).filter(|no| !no.indexed || no.observer) else {
        return LeaveReason::ObserverGone;
    };
    let Some(nt) = now.get(&t) else {
        return LeaveReason::TargetGone;
    };
    let (bo, bt) = (&before[&o], &before[&t]);
    if !no.indexed || !nt.indexed {
        LeaveReason::BadInput
    } else if no.instance != nt.instance {
        LeaveReason::InstanceChanged
    } else if verdict(bo, bt) != verdict(no, nt) {
        LeaveReason::RulesChanged
    } else {
        LeaveReason::OutOfRange
    }
}

/// One update's messages of one observer, as `(target, reason)`: enters, then leaves.
type Said = (Vec<(Entity, EnterReason)>, Vec<(Entity, LeaveReason)>);

/// This update's messages of `observer`.
fn said(app: &mut Checked, observer: Entity) -> Said {
    let world = app.world();
    let enters = (world.resource::<Messages<EnterView>>().iter_current_update_messages())
        .filter(|m| m.observer == observer)
        .map(|m| (m.target, m.reason))
        .collect();
    let leaves = (world.resource::<Messages<LeaveView>>().iter_current_update_messages())
        .filter(|m| m.observer == observer)
        .map(|m| (m.target, m.reason))
        .collect();
    (enters, leaves)
}

/// Walks one observer through every reason, one cause per update, checking what it is told
/// (and the whole contract, reasons included, through [`Checked`]). `features` go on the
/// observer: the same walk must give the same reasons through the view layer.
fn walk(features: impl Bundle + Clone) {
    let mut app = Checked::new(AoiPlugin::default());
    let o = app
        .world()
        .spawn((
            Position::new(0.0, 0.0),
            ViewRange::new(10.0),
            AoiLayers::new(1, 1),
            features.clone(),
        ))
        .id();
    // (The first update's first pass runs before the messages' buffers turn: start after it.)
    app.update();
    let t = app.world().spawn(Position::new(5.0, 0.0)).id();
    let step = |app: &mut Checked, change: &dyn Fn(&mut World)| {
        change(app.world());
        app.update();
        said(app, o)
    };
    let set = |x: f32| move |w: &mut World| w.get_mut::<Position>(t).unwrap().x = x;
    use EnterReason as E;
    use LeaveReason as L;
    let enter = |r: E| (vec![(t, r)], vec![]);
    let leave = |r: L| (vec![], vec![(t, r)]);
    assert_eq!(step(&mut app, &|_| {}), enter(E::Appeared), "the target spawned");
    assert_eq!(step(&mut app, &set(50.0)), leave(L::OutOfRange));
    assert_eq!(step(&mut app, &set(5.0)), enter(E::CameIntoRange));
    let shrink = |r: f32| move |w: &mut World| w.get_mut::<ViewRange>(o).unwrap().radius = r;
    assert_eq!(step(&mut app, &shrink(2.0)), leave(L::OutOfRange), "the view shrank");
    assert_eq!(step(&mut app, &shrink(10.0)), enter(E::CameIntoRange), "the view grew");
    let mode = |m: AoiVisibility| move |w: &mut World| _ = w.entity_mut(t).insert(m);
    assert_eq!(step(&mut app, &mode(AoiVisibility::Hidden)), leave(L::RulesChanged));
    assert_eq!(step(&mut app, &mode(AoiVisibility::Normal)), enter(E::RulesChanged));
    let layers = |l: AoiLayers| move |w: &mut World| _ = w.entity_mut(t).insert(l);
    assert_eq!(step(&mut app, &layers(AoiLayers::new(2, 2))), leave(L::RulesChanged));
    assert_eq!(step(&mut app, &layers(AoiLayers::new(1, 1))), enter(E::RulesChanged));
    // An `Always` target far away: the rules let it in and, when it stops being one, take it out.
    app.world().get_mut::<Position>(t).unwrap().x = 50.0;
    app.update();
    assert_eq!(step(&mut app, &mode(AoiVisibility::Always)), enter(E::RulesChanged));
    assert_eq!(step(&mut app, &mode(AoiVisibility::Normal)), leave(L::RulesChanged));
    // A change of rules that makes no difference to the pair leaves the distance as the reason.
    let both = |w: &mut World| {
        w.get_mut::<Position>(t).unwrap().x = 5.0;
        w.entity_mut(t).insert(AoiLayers::new(3, 3));
    };
    assert_eq!(step(&mut app, &both), enter(E::CameIntoRange));
    let instance = |i: u32| move |w: &mut World| _ = w.entity_mut(t).insert(AoiInstance(i));
    assert_eq!(step(&mut app, &instance(1)), leave(L::InstanceChanged));
    assert_eq!(step(&mut app, &instance(0)), enter(E::InstanceChanged));
    // The observer moving to the target's instance and back says the same.
    let own_instance = |i: u32| move |w: &mut World| _ = w.entity_mut(o).insert(AoiInstance(i));
    assert_eq!(step(&mut app, &own_instance(2)), leave(L::InstanceChanged));
    assert_eq!(step(&mut app, &own_instance(0)), enter(E::InstanceChanged));
    assert_eq!(step(&mut app, &set(f32::NAN)), leave(L::BadInput));
    assert_eq!(step(&mut app, &set(5.0)), enter(E::Appeared), "valid again");
    let bad_radius = |w: &mut World| w.get_mut::<ViewRange>(o).unwrap().radius = -1.0;
    assert_eq!(
        step(&mut app, &bad_radius),
        leave(L::BadInput),
        "the observer became bad input"
    );
    assert_eq!(
        step(&mut app, &shrink(10.0)),
        enter(E::Appeared),
        "the observer is valid again"
    );
    let unpositioned = |w: &mut World| _ = w.entity_mut(t).remove::<Position>();
    assert_eq!(step(&mut app, &unpositioned), leave(L::TargetGone));
    let positioned = |w: &mut World| _ = w.entity_mut(t).insert(Position::new(5.0, 0.0));
    assert_eq!(step(&mut app, &positioned), enter(E::Appeared));
    let blind = |w: &mut World| _ = w.entity_mut(o).remove::<ViewRange>();
    assert_eq!(
        step(&mut app, &blind),
        leave(L::ObserverGone),
        "the observer lost its view"
    );
    let sighted = |w: &mut World| _ = w.entity_mut(o).insert((ViewRange::new(10.0), features.clone()));
    assert_eq!(step(&mut app, &sighted), enter(E::Appeared));
    assert_eq!(step(&mut app, &|w| _ = w.despawn(t)), leave(L::TargetGone));
    let other = app.world().spawn(Position::new(1.0, 1.0)).id();
    app.update();
    let gone = step(&mut app, &|w| _ = w.despawn(o));
    assert_eq!(
        gone,
        (vec![], vec![(other, L::ObserverGone)]),
        "the observer was despawned"
    );
}

#[test]
fn a_plain_observer_is_told_every_reason() {
    walk(());
}

#[test]
fn a_view_model_observer_is_told_the_same_reasons() {
    // A zero margin and no linger: the view layer decides, with the plain rule's outcome.
    walk(ViewHysteresis {
        margin: 0.0,
        linger_ticks: 0,
    });
}

#[test]
fn targets_held_back_by_the_budget_say_they_waited() {
    let mut app = Checked::new(AoiPlugin::default());
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), EnterBudget(1)))
        .id();
    app.update();
    let near = app.world().spawn(Position::new(3.0, 0.0)).id();
    let far = app.world().spawn(Position::new(4.0, 0.0)).id();
    app.update();
    assert_eq!(said(&mut app, o).0, vec![(near, EnterReason::Appeared)]);
    app.update();
    assert_eq!(said(&mut app, o).0, vec![(far, EnterReason::WaitedForBudget)]);
    // Given back without a budget: what waited enters at once, and says so.
    let (a, b) = (Position::new(5.0, 0.0), Position::new(6.0, 0.0));
    let (a, b) = (app.world().spawn(a).id(), app.world().spawn(b).id());
    app.update();
    assert_eq!(said(&mut app, o).0, vec![(a, EnterReason::Appeared)]);
    app.world().entity_mut(o).remove::<EnterBudget>();
    app.update();
    assert_eq!(said(&mut app, o).0, vec![(b, EnterReason::WaitedForBudget)]);
}

#[test]
fn a_lingering_target_leaves_out_of_range() {
    let mut app = Checked::new(AoiPlugin::default());
    let hysteresis = ViewHysteresis {
        margin: 5.0,
        linger_ticks: 2,
    };
    let o = app
        .world()
        .spawn((Position::new(0.0, 0.0), ViewRange::new(10.0), hysteresis))
        .id();
    let t = app.world().spawn(Position::new(5.0, 0.0)).id();
    app.update();
    app.world().get_mut::<Position>(t).unwrap().x = 30.0;
    for _ in 0..2 {
        app.update();
        assert_eq!(said(&mut app, o), (vec![], vec![]), "it lingers");
    }
    app.update();
    assert_eq!(said(&mut app, o).1, vec![(t, LeaveReason::OutOfRange)]);
}

/// Random scenarios (moves, teleports, spawns, despawns, bad input, rule and view-model changes)
/// give every reason, each checked against the oracle by [`Checked`].
#[test]
fn random_scenarios_give_every_reason_as_the_oracle_says() {
    let plugin = AoiPlugin::default();
    let (mut enters, mut leaves) = (BTreeMap::new(), BTreeMap::new());
    for plugin in on_each_index(&plugin) {
        let mut sc = Scenario::new(121, 120.0, 40.0, 20.0, Plane::XY);
        let mut app = Checked::new(plugin);
        for _ in 0..120 {
            sc.spawn(app.world());
        }
        for _ in 0..30 {
            sc.step_view_model(app.world());
        }
        app.update();
        for _ in 0..150 {
            sc.step(app.world());
            sc.step_view_model(app.world());
            sc.step_rules(app.world());
            app.update();
        }
        for (r, n) in &app.enter_reasons {
            *enters.entry(*r).or_insert(0) += n;
        }
        for (r, n) in &app.leave_reasons {
            *leaves.entry(*r).or_insert(0) += n;
        }
    }
    assert_eq!(enters.len(), 5, "every enter reason should occur: {enters:?}");
    assert_eq!(leaves.len(), 6, "every leave reason should occur: {leaves:?}");
}
