//! The report's tables of what the view sees: the view model's cost, a visitor teleporting into
//! a crowd with and without an `EnterBudget`, and messages only beside the default plugin (each
//! selected by its filter word).

use std::hash::Hasher;

use bevy_aoi::prelude::*;
use bevy_ecs::{message::MessageCursor, prelude::*};

use super::{Recorder, SEED, WARMUP, median, step_positions, timed, update_in_turn};
use crate::{
    baselines::{self, Lists, PlainGrid},
    tables::{one_thread, own_cost_rows, own_cost_table},
    workload::{self, Kind, R, Walkers},
};

/// The view model's cost: uniform 10k where every observer has one feature (or all three),
/// against the same world without them, on one thread, then on two (the movement-only, plain
/// and featured apps are updated in turn every tick).
pub(crate) fn view_model_cost(ticks: usize) {
    let n = 10_000;
    let walkers = Walkers::new(Kind::Uniform, n, SEED);
    let hysteresis = ViewHysteresis {
        margin: R * 0.1,
        linger_ticks: 3,
    };
    let tiers = || ViewTiers::new([R / 3.0, R * 2.0 / 3.0]);
    let rows = [
        "nothing (all off)".to_string(),
        format!("ViewHysteresis (margin {}, linger 3)", R * 0.1),
        "EnterBudget(8)".to_string(),
        format!("ViewTiers [{:.1}, {:.1}]", R / 3.0, R * 2.0 / 3.0),
        "all three".to_string(),
    ];
    for threads in [1, 2] {
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app(walkers.clone(), true),
            workload::app(walkers.clone(), true),
            workload::app(walkers.clone(), true),
            workload::app(walkers.clone(), true),
        ];
        workload::add_to_observers(&mut apps[2], hysteresis);
        workload::add_to_observers(&mut apps[3], EnterBudget(8));
        workload::add_to_observers(&mut apps[4], tiers());
        workload::add_to_observers(&mut apps[5], (hysteresis, EnterBudget(8), tiers()));
        let title = format!(
            "uniform {n}, every observer with, {threads} thread{}",
            if threads > 1 { "s" } else { "" }
        );
        if threads == 1 {
            own_cost_table(&mut apps, ticks, &title, "all off", &rows);
        } else {
            own_cost_rows(&mut apps, ticks, &title, "all off", &rows);
        }
    }
}

/// An observer teleports into a crowd of 2,000 (crowded 2000, everyone within everyone's
/// radius): how many targets enter its view in each of the next updates, with and without an
/// `EnterBudget`.
pub(crate) fn crowd_teleport() {
    let walkers = Walkers::new(Kind::Crowded, 2_000, SEED);
    let side = walkers.side() as f32;
    println!();
    println!(
        "| a visitor teleports into crowded 2000 | enters per update, updates 1, 2, 3, ... | updates until all in | peak enters for it |"
    );
    println!("|---|---|---|---|");
    for budget in [None, Some(500), Some(100)] {
        let mut app = workload::app(walkers.clone(), true);
        let visitor = app
            .world_mut()
            .spawn((Position::new(side * 100.0, side * 100.0), ViewRange::new(R)))
            .id();
        if let Some(b) = budget {
            app.world_mut().entity_mut(visitor).insert(EnterBudget(b));
        }
        for _ in 0..WARMUP {
            app.update();
        }
        *app.world_mut().get_mut::<Position>(visitor).unwrap() = Position::new(side / 2.0, side / 2.0);
        let mut per_update = Vec::new();
        let mut cursor = MessageCursor::<EnterView>::default();
        let world = app.world();
        cursor.read(world.resource::<Messages<EnterView>>()).for_each(drop);
        for _ in 0..40 {
            app.update();
            let world = app.world();
            let enters = cursor.read(world.resource::<Messages<EnterView>>());
            per_update.push(enters.filter(|m| m.observer == visitor).count());
            if world.get::<InterestSet>(visitor).unwrap().waiting() == 0 {
                break;
            }
        }
        let name = budget.map_or("no budget".to_string(), |b| format!("EnterBudget({b})"));
        let first: Vec<String> = per_update.iter().take(8).map(ToString::to_string).collect();
        let more = if per_update.len() > 8 { ", ..." } else { "" };
        println!(
            "| {name} | {}{more} | {} | {} |",
            first.join(", "),
            per_update.len(),
            per_update.iter().max().unwrap_or(&0)
        );
    }
}

/// Messages only (`AoiPlugin::interest_sets` `false`) beside the default plugin, one thread:
/// the movement-only app and the two AOI apps updated in turn every tick, then the answer floor
/// on the same positions; each AOI app's own cost, their ratio, the messages-only app against
/// the floor, and whether both apps wrote the same message stream.
pub(crate) fn messages_only_cost(ticks: usize) {
    println!();
    println!(
        "| workload, 1 thread | with sets own | messages only own | messages only / with sets | messages only / floor | same messages |"
    );
    println!("|---|---|---|---|---|---|");
    for (kind, n) in [
        (Kind::Uniform, 10_000),
        (Kind::Uniform, 50_000),
        (Kind::Crowded, 2_000),
        (Kind::Moving(5), 50_000),
        (Kind::SparseHuge, 50_000),
    ] {
        let walkers = Walkers::new(kind, n, SEED);
        let messages_only = AoiPlugin {
            interest_sets: false,
            ..Default::default()
        };
        let mut apps = [
            workload::app(walkers.clone(), false),
            workload::app(walkers.clone(), true),
            workload::app_with_plugin(walkers.clone(), Some(messages_only), false),
        ];
        one_thread(&mut apps[1..]);
        let mut recorders = [Recorder::default(), Recorder::default()];
        let (mut w, mut pos, mut truth, mut filler) = (walkers, Vec::new(), Lists::default(), PlainGrid::default());
        let mut times: [Vec<f64>; 4] = Default::default();
        for tick in 0..WARMUP + ticks {
            let mut dt = [0.0; 4];
            update_in_turn(&mut apps, &mut recorders, true, &mut dt);
            step_positions(&mut w, &mut pos);
            filler.fill(&pos, &mut truth);
            let (t, (_, _, sink)) = timed(|| baselines::floor(&pos, &mut truth));
            std::hint::black_box(sink);
            dt[3] = t;
            if tick >= WARMUP {
                times.iter_mut().zip(dt).for_each(|(times, t)| times.push(t));
            }
        }
        let [movement, with_sets, without, floor] = times.map(median);
        let (with_sets, without) = (with_sets - movement, without - movement);
        let [a, b] = recorders.map(|r| (r.total, r.hasher.finish()));
        println!(
            "| {} {n} | {with_sets:.3} ms | {without:.3} ms | {:.2} | {:.2} | {} |",
            kind.name(),
            without / with_sets,
            without / floor,
            a == b
        );
    }
}
