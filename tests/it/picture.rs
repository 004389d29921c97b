//! The AOI picture (`headless_simulation --svg`): well-formed SVG with one mark per entity, a
//! ring per watched monster and a line per seen target, for a snapshot taken from a real app.

use bevy_aoi::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;

use crate::harness::{Draws, Rng};

#[path = "../../examples/common/svg.rs"]
mod svg;

/// Three observers and a crowd of targets, one update; a snapshot of it.
fn snapshot() -> svg::Snapshot {
    let mut app = App::new();
    app.add_plugins(AoiPlugin::default());
    let mut rng = Rng(7);
    let observers: Vec<Entity> = (0..3)
        .map(|i| {
            let p = Position::new(100.0 + 150.0 * i as f32, 200.0);
            app.world_mut().spawn((p, ViewRange::new(60.0))).id()
        })
        .collect();
    for _ in 0..200 {
        let p = Position::new(rng.range(0.0, 500.0), rng.range(0.0, 500.0));
        app.world_mut().spawn(p);
    }
    app.update();
    let world = app.world_mut();
    let mut all = world.query::<(Entity, &Position)>();
    let marks = all
        .iter(world)
        .map(|(e, p)| svg::Mark {
            x: p.x,
            y: p.y,
            kind: if observers.contains(&e) {
                svg::Kind::Player
            } else if e.index_u32() % 3 == 0 {
                svg::Kind::Item
            } else {
                svg::Kind::Monster
            },
            watched: e.index_u32() % 5 == 0,
        })
        .collect();
    let views = observers
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            let p = *world.get::<Position>(o).unwrap();
            let set = world.get::<InterestSet>(o).unwrap();
            svg::View {
                x: p.x,
                y: p.y,
                radius: 60.0,
                // The first view drawn as a screen (the picture only; the set is the disc's).
                rect: (i == 0).then_some([60.0, 34.0]),
                sees: set
                    .iter()
                    .map(|t| world.get::<Position>(t).map(|q| (q.x, q.y)).unwrap())
                    .collect(),
            }
        })
        .collect();
    svg::Snapshot {
        side: 500.0,
        cell: world.resource::<AoiStats>().cell_side,
        tick: 1,
        marks,
        views,
    }
}

#[test]
fn the_picture_parses_and_shows_one_mark_per_entity() {
    let shot = snapshot();
    let text = svg::render(&shot, 600.0);
    let doc = roxmltree::Document::parse(&text).expect("the picture should be well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "the root should be an svg element");
    let class_starts = |prefix: &str| {
        root.descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').next() == Some(prefix))
            })
            .count()
    };
    assert_eq!(class_starts("mark"), shot.marks.len(), "one mark per entity");
    assert_eq!(
        class_starts("watched"),
        shot.marks.iter().filter(|m| m.watched).count(),
        "one ring per watched entity"
    );
    let seen: usize = shot.views.iter().map(|v| v.sees.len()).sum();
    assert!(seen > 0, "the observers should see some of the crowd");
    let view_lines = root
        .descendants()
        .filter(|n| n.attribute("class") == Some("view"))
        .flat_map(|g| g.children().filter(|c| c.tag_name().name() == "line"))
        .count();
    assert_eq!(view_lines, seen, "one line per target an observer sees");
    let shapes = |name: &str| {
        root.descendants()
            .filter(|n| n.attribute("class") == Some("view"))
            .flat_map(|g| g.children().filter(move |c| c.tag_name().name() == name))
            .count()
    };
    assert_eq!(
        (shapes("circle"), shapes("rect")),
        (shot.views.len() - 1, 1),
        "each view should be drawn as its shape: discs as circles, the screen as a rectangle"
    );
    assert!(text.contains("tick 1"), "the legend should show the tick");
}
