//! The standard workload of BENCHMARKS.md, shared by the benches and `examples/scenario.rs`.

#![allow(dead_code, reason = "each includer uses a different part")]

use bevy_aoi::prelude::*;
use bevy_app::prelude::*;
use bevy_ecs::prelude::*;

/// View radius of every entity.
pub const R: f32 = 100.0;

/// `SplitMix64`.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn u01(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The scenarios.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Uniform,
    Crowded,
    SparseHuge,
    /// Percent of entities that move.
    Moving(u32),
    Static,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "uniform" => Kind::Uniform,
            "crowded" => Kind::Crowded,
            "sparse_huge" => Kind::SparseHuge,
            "static" => Kind::Static,
            _ => Kind::Moving(s.strip_prefix("moving")?.parse().ok()?),
        })
    }

    pub fn name(self) -> String {
        match self {
            Kind::Uniform => "uniform".into(),
            Kind::Crowded => "crowded".into(),
            Kind::SparseHuge => "sparse_huge".into(),
            Kind::Static => "static".into(),
            Kind::Moving(p) => format!("moving{p}"),
        }
    }
}

/// Positions and headings of `n` walkers.
#[derive(Clone)]
pub struct Walkers {
    pub kind: Kind,
    rng: Rng,
    side: f64,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    h: Vec<f64>,
    /// How far a walker steps each tick (5 unless set).
    pub speed: f64,
    /// Every `.0`-th walker steps `.1` instead (the report's fast movers).
    pub fast: Option<(usize, f64)>,
}

impl Walkers {
    pub fn new(kind: Kind, n: usize, seed: u64) -> Self {
        let side = match kind {
            Kind::Crowded => 2.0 * (n as f64).sqrt(),
            Kind::SparseHuge => 1_000_000.0,
            _ => 20.0 * (n as f64).sqrt(),
        };
        let mut rng = Rng(seed);
        let (mut x, mut y, mut h) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            x.push(rng.u01() * side);
            y.push(rng.u01() * side);
            h.push(rng.u01() * core::f64::consts::TAU);
        }
        Self {
            kind,
            rng,
            side,
            x,
            y,
            h,
            speed: 5.0,
            fast: None,
        }
    }

    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// The map side `L`.
    pub fn side(&self) -> f64 {
        self.side
    }

    pub fn moves(&self, i: usize) -> bool {
        match self.kind {
            Kind::Static => false,
            Kind::Moving(p) => (i % 100) < p as usize,
            _ => true,
        }
    }

    pub fn pos(&self, i: usize) -> [f32; 2] {
        [self.x[i] as f32, self.y[i] as f32]
    }

    /// One tick of movement.
    pub fn step(&mut self) {
        let l = self.side;
        for i in 0..self.len() {
            if !self.moves(i) {
                continue;
            }
            if self.rng.u01() < 0.02 {
                self.h[i] = self.rng.u01() * core::f64::consts::TAU;
            }
            let (mut x, mut y, mut h) = (self.x[i], self.y[i], self.h[i]);
            let speed = match self.fast {
                Some((every, fast)) if i % every == 0 => fast,
                _ => self.speed,
            };
            x += speed * h.cos();
            y += speed * h.sin();
            if x < 0.0 {
                x = -x;
                h = core::f64::consts::PI - h;
            } else if x > l {
                x = 2.0 * l - x;
                h = core::f64::consts::PI - h;
            }
            if y < 0.0 {
                y = -y;
                h = -h;
            } else if y > l {
                y = 2.0 * l - y;
                h = -h;
            }
            (self.x[i], self.y[i], self.h[i]) = (x, y, h);
        }
    }
}

/// Which walker an entity is.
#[derive(Component)]
pub struct Walker(pub u32);

/// The walkers as a resource, stepped by [`move_walkers`].
#[derive(Resource)]
pub struct World2(pub Walkers);

/// Steps the walkers and writes the positions of those that move.
pub fn move_walkers(mut w: ResMut<World2>, mut q: Query<(&Walker, &mut Position)>) {
    w.0.step();
    for (walker, mut pos) in &mut q {
        let i = walker.0 as usize;
        if w.0.moves(i) {
            // Only x and y: the 3D workload keeps each walker's height.
            [pos.x, pos.y] = w.0.pos(i);
        }
    }
}

/// A headless app with the walkers, with or without the AOI.
pub fn app(walkers: Walkers, aoi: bool) -> App {
    app_with_rules(walkers, aoi, false)
}

/// Layers of the realistic mix: 10% players (see everything), 80% monsters (see players), 10%
/// items (see nothing).
pub const PLAYER: u32 = 1;
/// See [`PLAYER`].
pub const MONSTER: u32 = 2;
/// See [`PLAYER`].
pub const ITEM: u32 = 4;

/// The layers of walker `i` in the realistic mix.
pub fn mix(i: usize) -> AoiLayers {
    match i % 10 {
        0 => AoiLayers::new(PLAYER, PLAYER | MONSTER | ITEM),
        9 => AoiLayers::new(ITEM, 0),
        _ => AoiLayers::new(MONSTER, PLAYER),
    }
}

/// As [`app`], with the realistic mix of layers when `rules` is set (the same entities, all
/// with the same `ViewRange`, move the same way either way).
pub fn app_with_rules(walkers: Walkers, aoi: bool, rules: bool) -> App {
    app_with_plugin(walkers, aoi.then(AoiPlugin::default), rules)
}

/// As [`app_with_rules`], with the AOI added as `plugin` (`None`: movement only).
pub fn app_with_plugin(walkers: Walkers, plugin: Option<AoiPlugin>, rules: bool) -> App {
    let mut app = App::new();
    if let Some(plugin) = plugin {
        app.add_plugins(plugin);
    }
    for i in 0..walkers.len() {
        let [x, y] = walkers.pos(i);
        let mut e = app
            .world_mut()
            .spawn((Walker(i as u32), Position::new(x, y), ViewRange::new(R)));
        if rules {
            e.insert(mix(i));
        }
    }
    app.insert_resource(World2(walkers)).add_systems(Update, move_walkers);
    app
}

/// As [`app`] with the AOI, every observer seeing a [`ViewRect`] of half extents `half` instead
/// of the radius `R` (the same entities moving the same way).
pub fn app_rects(walkers: Walkers, half: [f32; 2]) -> App {
    let mut app = app(walkers, true);
    to_rects(&mut app, half);
    app
}

/// Gives every observer of `app` (every entity with a `ViewRange`) a [`ViewRect`] of half
/// extents `half` instead, keeping its other components.
pub fn to_rects(app: &mut App, half: [f32; 2]) {
    let world = app.world_mut();
    let observers: Vec<Entity> = world.query_filtered::<Entity, With<ViewRange>>().iter(world).collect();
    for e in observers {
        world
            .entity_mut(e)
            .remove::<ViewRange>()
            .insert(ViewRect::new(half[0], half[1]));
    }
}

/// The half extent of the square of the same area as the disc of radius [`R`]
/// (`4 hw hh = pi R^2`).
pub fn square_half_extent() -> f32 {
    R * core::f32::consts::PI.sqrt() / 2.0
}

/// The half extents of the 16:9 rectangle (a screen) of the same area as the disc of radius
/// [`R`].
pub fn screen_half_extents() -> [f32; 2] {
    let square = square_half_extent();
    [square * (16.0f32 / 9.0).sqrt(), square * (9.0f32 / 16.0).sqrt()]
}

/// A wide observer of the mixed-radii workload, with its heading.
#[derive(Component)]
pub struct Tower(pub f32);

/// The map side, for the towers' reflection at the borders.
#[derive(Resource)]
pub struct TowerMap(pub f32);

/// As [`app`] with the AOI, plus `k` observers of radius `r_big` spread over the map on a grid.
/// When `walking`, they move 5 units a tick along a fixed heading, reflecting at the borders (no
/// random numbers drawn, so the walkers move exactly as without them).
pub fn app_mixed(walkers: Walkers, k: usize, r_big: f32, walking: bool) -> App {
    let side = walkers.side() as f32;
    let mut app = app(walkers, true);
    add_towers(&mut app, side, k, r_big, walking);
    app
}

/// Adds the `k` observers of radius `r_big` of [`app_mixed`] to an app whose map side is `side`.
pub fn add_towers(app: &mut App, side: f32, k: usize, r_big: f32, walking: bool) {
    for (i, [x, y]) in spread(side, k).enumerate() {
        let heading = i as f32 * 2.399_963;
        app.world_mut()
            .spawn((Position::new(x, y), ViewRange::new(r_big), Tower(heading)));
    }
    if walking {
        walk_towers(app, side);
    }
}

/// Adds `k` `Always`-visible entities (world-wide beacons: every observer sees them at any
/// distance) spread over the map on a grid, to an app whose map side is `side`. When `walking`,
/// they move as the towers of [`app_mixed`] do.
pub fn add_beacons(app: &mut App, side: f32, k: usize, walking: bool) {
    for (i, [x, y]) in spread(side, k).enumerate() {
        let mut beacon = app.world_mut().spawn((Position::new(x, y), AoiVisibility::Always));
        if walking {
            beacon.insert(Tower(i as f32 * 2.399_963));
        }
    }
    if walking {
        walk_towers(app, side);
    }
}

/// `k` points spread over a map of side `side` on a square grid, row by row, each at the centre of
/// its square.
fn spread(side: f32, k: usize) -> impl Iterator<Item = [f32; 2]> {
    let per_row = (k as f64).sqrt().ceil() as usize;
    let at = move |c: usize| (c as f32 + 0.5) / per_row as f32 * side;
    (0..k).map(move |i| [at(i % per_row), at(i / per_row)])
}

/// Moves the entities with a [`Tower`] every update ([`move_towers`]), once however often asked.
fn walk_towers(app: &mut App, side: f32) {
    if !app.world().contains_resource::<TowerMap>() {
        app.insert_resource(TowerMap(side)).add_systems(Update, move_towers);
    }
}

/// Gives every walker of `app` a height in `0..side / 8`, drawn from its number (for the 3D
/// workload, with a [`Plane::XYZ`] plugin; walkers keep their height as they move).
pub fn lift(app: &mut App, side: f32) {
    let world = app.world_mut();
    for (walker, mut pos) in world.query::<(&Walker, &mut Position)>().iter_mut(world) {
        let mut rng = Rng(u64::from(walker.0));
        pos.z = rng.u01() as f32 * side / 8.0;
    }
}

/// Moves the towers of [`app_mixed`].
pub fn move_towers(map: Res<TowerMap>, mut q: Query<(&mut Tower, &mut Position)>) {
    let l = map.0;
    for (mut tower, mut pos) in &mut q {
        let h = &mut tower.0;
        let (mut x, mut y) = (pos.x + 5.0 * h.cos(), pos.y + 5.0 * h.sin());
        if x < 0.0 || x > l {
            x = x.clamp(0.0, l);
            *h = core::f32::consts::PI - *h;
        }
        if y < 0.0 || y > l {
            y = y.clamp(0.0, l);
            *h = -*h;
        }
        *pos = Position::new(x, y);
    }
}

/// Exact visibility, as the crate computes it.
#[inline]
pub fn sees(a: [f32; 2], b: [f32; 2]) -> bool {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    dx * dx + dy * dy + 0.0 <= R * R
}

/// Inserts `features` on every observer of `app` (view-model components: hysteresis, budgets,
/// tiers).
pub fn add_to_observers(app: &mut App, features: impl Bundle + Clone) {
    add_to_first_observers(app, usize::MAX, features);
}

/// Inserts `features` on the first `count` observers of `app`, in query order.
pub fn add_to_first_observers(app: &mut App, count: usize, features: impl Bundle + Clone) {
    let world = app.world_mut();
    let mut observers = world.query_filtered::<Entity, With<ViewRange>>();
    let observers: Vec<Entity> = observers.iter(world).take(count).collect();
    for e in observers {
        world.entity_mut(e).insert(features.clone());
    }
}
