//! Focused tests of the visibility rules; every update is also checked against brute force.

use std::collections::BTreeMap;

use bevy_aoi::prelude::*;
use bevy_ecs::prelude::*;

use crate::harness::{Checked, Draws, Rng, drift, on_each_index};

const PLAYER: u32 = 1;
const MONSTER: u32 = 2;
const ITEM: u32 = 4;

fn sorted(app: &mut Checked, e: Entity) -> Vec<Entity> {
    let mut v: Vec<Entity> = app
        .world()
        .get::<InterestSet>(e)
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn both(a: Entity, b: Entity) -> Vec<Entity> {
    let mut v = vec![a, b];
    v.sort();
    v
}

#[test]
fn classic_layers_players_monsters_items() {
    let mut app = Checked::new(AoiPlugin::default());
    let w = app.world();
    let player = w
        .spawn((
            Position::new(0.0, 0.0),
            ViewRange::new(50.0),
            AoiLayers::new(PLAYER, AoiLayers::ALL),
        ))
        .id();
    let monster = w
        .spawn((
            Position::new(10.0, 0.0),
            ViewRange::new(50.0),
            AoiLayers::new(MONSTER, PLAYER),
        ))
        .id();
    let item = w
        .spawn((Position::new(5.0, 0.0), ViewRange::new(50.0), AoiLayers::new(ITEM, 0)))
        .id();
    app.update();
    assert_eq!(
        sorted(&mut app, player),
        both(monster, item),
        "players should see monsters and items"
    );
    assert_eq!(
        sorted(&mut app, monster),
        vec![player],
        "monsters should see players, not items"
    );
    assert!(sorted(&mut app, item).is_empty(), "items should see nothing");
    // The monster is charmed: it now sees monsters and items, not players.
    app.world()
        .entity_mut(monster)
        .insert(AoiLayers::new(MONSTER, MONSTER | ITEM));
    app.update();
    assert_eq!(
        sorted(&mut app, monster),
        vec![item],
        "a layer change should update the monster's pairs"
    );
    assert_eq!(
        sorted(&mut app, player),
        both(monster, item),
        "the player's pairs should not change"
    );
}

#[test]
fn hidden_and_always_visible_toggle_at_run_time() {
    let mut app = Checked::new(AoiPlugin::default());
    let w = app.world();
    let near = w.spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let far = w.spawn((Position::new(1000.0, 0.0), ViewRange::new(10.0))).id();
    let gm = w
        .spawn((Position::new(1.0, 0.0), ViewRange::new(10.0), AoiVisibility::Hidden))
        .id();
    let boss = w.spawn((Position::new(500.0, 500.0), AoiVisibility::Always)).id();
    app.update();
    assert_eq!(
        sorted(&mut app, near),
        vec![boss],
        "the hidden GM should be unseen, the boss seen from anywhere"
    );
    assert_eq!(
        sorted(&mut app, far),
        vec![boss],
        "the boss should be seen whatever the distance"
    );
    assert_eq!(
        sorted(&mut app, gm),
        both(near, boss),
        "a hidden observer should still see (the boss too)"
    );
    app.world().entity_mut(gm).insert(AoiVisibility::Normal);
    app.world().entity_mut(boss).insert(AoiVisibility::Normal);
    app.update();
    assert_eq!(
        sorted(&mut app, near),
        vec![gm],
        "an unhidden GM should be seen; the boss only in range"
    );
    assert!(
        sorted(&mut app, far).is_empty(),
        "a normal boss out of range should leave"
    );
}

#[test]
fn moving_to_another_instance_leaves_and_enters_in_one_update() {
    let mut app = Checked::new(AoiPlugin::default());
    let w = app.world();
    let a = w.spawn((Position::new(0.0, 0.0), ViewRange::new(10.0))).id();
    let b = w
        .spawn((Position::new(1.0, 0.0), ViewRange::new(10.0), AoiInstance(1)))
        .id();
    let c = w
        .spawn((Position::new(2.0, 0.0), ViewRange::new(10.0), AoiInstance(1)))
        .id();
    app.update();
    assert!(
        sorted(&mut app, a).is_empty(),
        "entities of different instances should not see each other"
    );
    assert_eq!(
        sorted(&mut app, b),
        vec![c],
        "entities of one instance should see each other"
    );
    let before = (app.total_enters, app.total_leaves);
    app.world().entity_mut(a).insert(AoiInstance(1));
    app.update();
    assert_eq!(
        sorted(&mut app, a),
        both(b, c),
        "a should see the new instance's entities"
    );
    assert_eq!(
        (app.total_enters - before.0, app.total_leaves - before.1),
        (4, 0),
        "a's move should enter 4 pairs"
    );
    app.world().entity_mut(a).remove::<AoiInstance>();
    app.update();
    assert!(
        sorted(&mut app, a).is_empty(),
        "back in instance 0, a should see nobody"
    );
}

#[test]
fn watchers_added_late_are_filled_and_follow_the_sets() {
    let mut app = Checked::new(AoiPlugin::default());
    let w = app.world();
    let t = w.spawn(Position::new(0.0, 0.0)).id();
    let o1 = w.spawn((Position::new(1.0, 0.0), ViewRange::new(5.0))).id();
    let o2 = w.spawn((Position::new(2.0, 0.0), ViewRange::new(5.0))).id();
    app.update();
    app.world().entity_mut(t).insert(Watchers::default());
    app.update();
    let watchers = |app: &mut Checked| {
        let mut v: Vec<Entity> = app.world().get::<Watchers>(t).unwrap().iter().collect();
        v.sort();
        v
    };
    assert_eq!(
        watchers(&mut app),
        both(o1, o2),
        "a late Watchers should be filled with the current observers"
    );
    app.world().get_mut::<Position>(o2).unwrap().x = 100.0;
    app.update();
    assert_eq!(
        watchers(&mut app),
        vec![o1],
        "Watchers should drop an observer that moved away"
    );
}

/// An app keeping the `Watched` marker for the player layer (`linger_ticks`), and a player at
/// (3, 0) who sees 5 units around.
fn with_a_player(linger_ticks: u32) -> (Checked, Entity) {
    let mut app = Checked::new(AoiPlugin {
        watched: Some(WatchedRule {
            by_layers: PLAYER,
            linger_ticks,
        }),
        ..Default::default()
    });
    let player = (app.world())
        .spawn((
            Position::new(3.0, 0.0),
            ViewRange::new(5.0),
            AoiLayers::new(PLAYER, AoiLayers::ALL),
        ))
        .id();
    (app, player)
}

#[test]
fn watched_marker_lingers_after_the_last_player_leaves() {
    let (mut app, player) = with_a_player(2);
    let monster = (app.world())
        .spawn((
            Position::new(0.0, 0.0),
            ViewRange::new(5.0),
            AoiLayers::new(MONSTER, PLAYER),
        ))
        .id();
    app.update();
    let watched = |app: &mut Checked| app.world().get::<Watched>(monster).is_some();
    assert!(watched(&mut app), "a monster seen by a player should be Watched");
    app.world().get_mut::<Position>(player).unwrap().x = 100.0;
    app.update();
    assert!(watched(&mut app), "the marker should stay in the first quiet update");
    app.update();
    assert!(watched(&mut app), "the marker should stay in the second quiet update");
    app.update();
    assert!(!watched(&mut app), "the marker should go in the third quiet update");
    assert!(
        app.world().get::<Watched>(player).is_none(),
        "the player is seen by no player: never Watched"
    );
}

/// A watched monster despawned and another spawned in the same frame, reusing its entity index:
/// the newcomer's marker follows its own count (the counts are kept per entity index).
#[test]
fn watched_marker_follows_an_entity_index_reused_in_one_frame() {
    let (mut app, player) = with_a_player(1);
    let monster = (Position::new(0.0, 0.0), AoiLayers::new(MONSTER, PLAYER));
    let old = app.world().spawn(monster).id();
    app.update();
    // Despawned without giving its index back, so that the new monster gets the same index
    // with the next generation, as Bevy's allocator may hand it out.
    let new = app
        .world()
        .despawn_no_free(old)
        .expect("the old monster should be despawned");
    app.world()
        .spawn_at(new, monster)
        .expect("the new monster should spawn at the reused index");
    assert!(
        new != old && new.index_u32() == old.index_u32(),
        "the new monster should reuse the index"
    );
    app.update();
    let watched = |app: &mut Checked| app.world().get::<Watched>(new).is_some();
    assert!(
        watched(&mut app),
        "the new monster, seen by the player, should be Watched"
    );
    app.world().get_mut::<Position>(player).unwrap().x = 100.0;
    app.update();
    assert!(watched(&mut app), "the marker should stay in the first quiet update");
    app.update();
    assert!(
        !watched(&mut app),
        "the marker should go in the second quiet update: the old monster's count is not the new one's"
    );
}

/// `Watchers` order, as documented: the order the observers started seeing the target, a
/// leaving observer's place taken by the last one (swap-removal), an update's enters before its
/// leaves, in the messages' order (the pair engine's, then the view layer's: a third of the
/// observers have hysteresis). Checked against the messages replayed, every update of a
/// random walk after the first (which fills the new components from the index), on both
/// indexes.
#[test]
fn watchers_keep_the_order_the_messages_give() {
    for plugin in on_each_index(&AoiPlugin::default()) {
        let mut app = Checked::new(plugin);
        let mut rng = Rng(29);
        let mut targets = Vec::new();
        for i in 0..240 {
            let at = Position::new(rng.range(0.0, 200.0), rng.range(0.0, 200.0));
            let mut e = app.world().spawn((at, ViewRange::new(rng.range(15.0, 40.0))));
            if i % 3 == 0 {
                e.insert(ViewHysteresis {
                    margin: 5.0,
                    linger_ticks: 1,
                });
            }
            if i % 4 == 0 {
                e.insert(Watchers::default());
                targets.push(e.id());
            }
        }
        // The first update fills the new components from the index, in its own order.
        app.update();
        let watchers = |app: &mut Checked, t: Entity| -> Vec<Entity> {
            app.world().get::<Watchers>(t).expect("a target").iter().collect()
        };
        let mut model: BTreeMap<Entity, Vec<Entity>> = targets.iter().map(|&t| (t, watchers(&mut app, t))).collect();
        for tick in 1..30 {
            let steps: Vec<(f32, f32)> = (0..240).map(|_| (rng.range(-6.0, 6.0), rng.range(-6.0, 6.0))).collect();
            drift(app.world(), |i| steps[i]);
            app.update();
            let (enters, leaves) = app.log.last().expect("the update should be logged").clone();
            for (o, t) in enters {
                model.entry(t).and_modify(|w| w.push(o));
            }
            for (o, t) in leaves {
                model.entry(t).and_modify(|w| {
                    let at = w.iter().position(|&x| x == o).expect("a leave should follow an enter");
                    w.swap_remove(at);
                });
            }
            for (&t, want) in &model {
                assert_eq!(
                    &watchers(&mut app, t),
                    want,
                    "update {tick}: {t}'s Watchers should be in the messages' order"
                );
            }
        }
        assert!(
            app.total_leaves > 100,
            "the walk should make observers leave ({})",
            app.total_leaves
        );
    }
}
