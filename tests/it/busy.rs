//! Busy cells (`AoiSettings::busy_cell_share`): where most of a cell's entities changed, its
//! standing observers take the flip scan too (the grid index only). Which observers scan changes
//! only the speed: every update is checked against brute force with the rule off, on everywhere
//! and at its default, for crowds where a quarter, half or nearly all of the walkers move.

use bevy_aoi::prelude::*;

use crate::harness::{Checked, on_each_index};

/// The rule off: no cell is ever busy.
const OFF: f32 = f32::INFINITY;

/// 400 entities of radius 12 on a 100 × 100 square (about 18 in each view), one in ten a
/// rectangle, one in ten graded in tiers (the view layer owns those), two of radius 150 (wide:
/// they see everything); `moving_in_8` of each 8 walk (the others stand still, the wide ones
/// too), for 40 ticks with the given `busy_cell_share`, every update checked against brute
/// force. Returns the app and the standing observers scanned, summed over the updates.
fn crowd(plugin: AoiPlugin, moving_in_8: usize, busy_cell_share: f32) -> (Checked, usize) {
    let mut app = Checked::new(plugin);
    app.world().insert_resource(AoiSettings {
        flip_scan_min_seen: 4,
        busy_cell_share,
        ..Default::default()
    });
    for i in 0..400u32 {
        let p = Position::new((i * 37 % 400) as f32 * 0.25, (i * 91 % 400) as f32 * 0.25);
        let entity = match i % 10 {
            _ if i < 2 => app.world().spawn((p, ViewRange::new(150.0))).id(),
            3 => app.world().spawn((p, ViewRect::new(10.0, 7.0))).id(),
            _ => app.world().spawn((p, ViewRange::new(12.0))).id(),
        };
        if i % 10 == 7 {
            app.world().entity_mut(entity).insert(ViewTiers::new([4.0, 8.0]));
        }
    }
    app.update();
    let mut scanned = 0;
    for tick in 0..40usize {
        let mut positions = app.world().query::<&mut Position>();
        for (i, mut p) in positions.iter_mut(app.world()).enumerate() {
            if i < 2 || i % 8 >= moving_in_8 {
                continue;
            }
            let a = (i * 7 + tick / 5) as f32 * 0.61;
            p.x = (p.x + 1.5 * a.cos()).rem_euclid(100.0);
            p.y = (p.y + 1.5 * a.sin()).rem_euclid(100.0);
        }
        app.update();
        scanned += app.world().resource::<AoiStats>().busy_standing;
    }
    assert!(
        app.total_enters > 500 && app.total_leaves > 500,
        "walkers should enter and leave views many times ({} enters, {} leaves)",
        app.total_enters,
        app.total_leaves
    );
    (app, scanned)
}

#[test]
fn standing_observers_of_busy_cells_match_brute_force() {
    for plugin in on_each_index(&AoiPlugin::default()) {
        for moving_in_8 in [2, 4, 7] {
            let (_, off) = crowd(plugin.clone(), moving_in_8, OFF);
            assert_eq!(off, 0, "with the rule off no standing observer should be scanned");
            let (_, everywhere) = crowd(plugin.clone(), moving_in_8, 0.0);
            if plugin.index == IndexKind::Grid {
                assert!(
                    everywhere > 1000,
                    "with a share of 0 the standing observers around walkers should be scanned (were \
                     {everywhere} times, {moving_in_8} in 8 moving)"
                );
            } else {
                assert_eq!(everywhere, 0, "the sorted-axes index should have no busy cells");
            }
            crowd(plugin.clone(), moving_in_8, AoiSettings::default().busy_cell_share);
        }
    }
}

#[test]
fn the_default_share_scans_standing_observers_where_most_move_and_not_where_few_do() {
    // The share of the standing observer-updates (40 updates of 50 or 350 standing) scanned.
    let share = AoiSettings::default().busy_cell_share;
    let (_, few) = crowd(AoiPlugin::default(), 1, share);
    let few = few as f32 / (40.0 * 350.0);
    let (mut app, most) = crowd(AoiPlugin::default(), 7, share);
    let most = most as f32 / (40.0 * 50.0);
    assert!(
        most > 0.5 && few < 0.05,
        "the default share should scan most standing observers with 7 in 8 moving (scanned {most:.3} of them) \
         and few with 1 in 8 ({few:.3})"
    );
    // The scanned observers are counted apart: `changed` and `stepped` are the walkers.
    let stats = app.world().resource::<AoiStats>();
    assert!(
        stats.busy_standing > 0 && stats.changed <= 7 * 400 / 8 && stats.stepped <= stats.changed,
        "changed ({}) should count only the walkers (at most {}), stepped ({}) at most those, \
         busy_standing ({}) the others",
        stats.changed,
        7 * 400 / 8,
        stats.stepped,
        stats.busy_standing
    );
    // An update where nothing changed scans nobody.
    app.update();
    let stats = app.world().resource::<AoiStats>();
    assert_eq!(
        (stats.changed, stats.busy_standing),
        (0, 0),
        "an update without changes should count no change and no busy standing observer"
    );
}
