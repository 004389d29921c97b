//! Build-time configuration of [`AoiPlugin`](crate::AoiPlugin): which axes are used, which index
//! finds neighbours, how large the grid cells are, and optional world bounds.

/// Which axes of [`Position`](crate::Position) the grid and the distance use.
///
/// Chosen once, on the plugin. Distances are Euclidean in the chosen plane or volume.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin { plane: Plane::XZ, ..Default::default() });
/// let hero = app.world_mut().spawn((Position::new_3d(0.0, 0.0, 0.0), ViewRange::new(5.0))).id();
/// // 5 away on the ground (x, z), 100 up: `y` is ignored in `XZ`.
/// let bird = app.world_mut().spawn(Position::new_3d(3.0, 100.0, 4.0)).id();
/// app.update();
/// assert!(app.world().get::<InterestSet>(hero).unwrap().contains(bird));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Plane {
    /// `x` and `y` (2D games, top-down maps). `z` is ignored.
    #[default]
    XY,
    /// `x` and `z` (3D games on the ground, `y` up). `y` is ignored.
    XZ,
    /// All three axes: spherical view ranges and 3D cells (space games, flying units).
    XYZ,
}

impl Plane {
    /// Projects a point onto the axes this plane uses; the unused axis becomes 0.
    #[inline]
    pub(crate) fn project(self, x: f32, y: f32, z: f32) -> [f32; 3] {
        match self {
            Plane::XY => [x, y, 0.0],
            Plane::XZ => [x, z, 0.0],
            Plane::XYZ => [x, y, z],
        }
    }

    /// How many axes the grid is cut along.
    #[inline]
    pub(crate) fn dims(self) -> usize {
        match self {
            Plane::XY | Plane::XZ => 2,
            Plane::XYZ => 3,
        }
    }
}

/// How the index finds the entities near a view. Both support every rule and view shape and give
/// the same `InterestSet`s and the same messages; the order of one update's messages may differ
/// between them, but for each it is deterministic (the same whatever the number of threads). They
/// differ in cost (the README's "Which index" table has measured ratios).
///
/// Chosen once, on the plugin. Parses from `grid` and `sorted-axes` (for command lines and
/// configuration files).
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let index: IndexKind = "sorted-axes".parse().unwrap();
/// App::new().add_plugins(AoiPlugin {
///     index,
///     ..Default::default()
/// });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// The sparse tower grid: entities bucketed into square (cubic in 3D) cells of
    /// [`CellSize`]; a view scans the cells it overlaps. Faster on every workload measured (equal
    /// when nothing moves): the recommended choice.
    #[default]
    Grid,
    /// The classic write-ups' sorted ("cross-linked") list: the entities of each instance kept
    /// sorted along the plane's first axis (`x`), re-sorted by insertion as they move (work
    /// follows the moves); a view scans the slab of entities whose `x` is within its reach (its
    /// ends galloped from the entity's own place in the list) and the rule tests the other axes
    /// exactly. The slab spans the whole map across `x`, so it holds more candidates than the
    /// grid's cells: measured 1.7× to 3.6× slower than the grid on the standard workloads (level
    /// where nothing moves), and about 1.8× slower on a huge sparse map where each entity is
    /// alone (where the grid does not scan an observer with nobody in the cells around it; the
    /// README's "Which index" table). [`CellSize`] then only sets the base of the step limit
    /// between the flip scan and a full recompute
    /// ([`AoiStats::step_limit`](crate::AoiStats::step_limit)).
    SortedAxes,
}

impl core::str::FromStr for IndexKind {
    type Err = String;

    /// `grid` or `sorted-axes`; anything else is an error that lists those two.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "grid" => Ok(IndexKind::Grid),
            "sorted-axes" => Ok(IndexKind::SortedAxes),
            _ => Err(format!("unknown index {s:?}: use grid or sorted-axes")),
        }
    }
}

/// The side of a grid cell ("tower").
///
/// Cells only exist where entities are, so the size never costs memory; it trades the number of
/// cells a view touches against the number of far candidates tested per cell.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// app.add_plugins(AoiPlugin::default()); // `CellSize::Auto`
/// app.world_mut().spawn((Position::new(0.0, 0.0), ViewRange::new(100.0)));
/// app.update();
/// let side = app.world().resource::<AoiStats>().cell_side;
/// assert_eq!(side, 112.5, "the automatic side should be 1.125 times the radius in use");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CellSize {
    /// Derived from the view ranges in use: the side is 1.125 times the largest *ordinary*
    /// [`ViewRange`](crate::ViewRange) radius when the first observer appears (so a view from
    /// anywhere in a cell stays within the 3×3 cells around it, even grown by the steps of an
    /// observer and a target that walk less than a sixteenth of that radius a tick each), and is
    /// re-derived (the grid is rebuilt once) whenever that radius leaves `[side / 2, side * 2]`.
    /// A few observers whose radius stands out (each over twice the radius of the (k+1)-th
    /// largest, k one observer in eight within 64 and 256, counted in
    /// [`AoiStats::wide_observers`](crate::AoiStats::wide_observers)) do not count: watchtowers,
    /// bosses or game-master cameras never coarsen the grid for everyone else.
    #[default]
    Auto,
    /// A fixed side, in world units. Must be finite and greater than zero.
    Fixed(f32),
}

/// An axis-aligned box that bounds the world, in the plugin's [`Plane`] coordinates.
///
/// With bounds, the grid is clamped like the classic fixed tower grids: entities slightly outside
/// the box go into the border cells (distances stay exact). An entity farther outside than one box
/// size on any axis is treated as bad input: it is kept out of the index and a warning is logged
/// once. For [`Plane::XY`] the box is `min.x..=max.x` by `min.y..=max.y`; for [`Plane::XZ`] the
/// second component of `min`/`max` bounds `z`.
///
/// ```
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// let mut app = App::new();
/// let bounds = AoiBounds::new_2d((0.0, 0.0), (1000.0, 1000.0));
/// app.add_plugins(AoiPlugin { bounds: Some(bounds), ..Default::default() });
/// let w = app.world_mut();
/// let scout = w.spawn((Position::new(-5.0, 10.0), ViewRange::new(20.0))).id();
/// let camp = w.spawn(Position::new(5.0, 10.0)).id();
/// let lost = w.spawn(Position::new(5000.0, 0.0)).id(); // logs a warning once
/// app.update();
/// let set = app.world().get::<InterestSet>(scout).unwrap();
/// assert!(set.contains(camp), "just outside the box is still exact, in a border cell");
/// let why = app.world().explain_view(scout, lost);
/// assert_eq!(why, ViewExplanation::TargetKeptOut, "far outside the box is bad input");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AoiBounds {
    /// Lowest corner (`[x, y, z]`, or `[x, z, _]` for [`Plane::XZ`]).
    pub min: [f32; 3],
    /// Highest corner.
    pub max: [f32; 3],
}

impl AoiBounds {
    /// A 2D box from `(min_x, min_y)` to `(max_x, max_y)` (for [`Plane::XZ`], read `y` as `z`).
    pub fn new_2d(min: (f32, f32), max: (f32, f32)) -> Self {
        Self {
            min: [min.0, min.1, 0.0],
            max: [max.0, max.1, 0.0],
        }
    }

    /// A 3D box, for [`Plane::XYZ`].
    pub fn new_3d(min: [f32; 3], max: [f32; 3]) -> Self {
        Self { min, max }
    }

    /// Whether a projected point is near enough to the box to be indexed (see the type docs).
    #[inline]
    pub(crate) fn accepts(&self, p: [f32; 3], dims: usize) -> bool {
        (0..dims).all(|i| {
            let size = self.max[i] - self.min[i];
            p[i] >= self.min[i] - size && p[i] <= self.max[i] + size
        })
    }
}

/// The largest accepted fixed cell side: beyond it every map is a single cell.
pub(crate) const MAX_CELL_SIZE: f32 = 1.0e12;
/// The smallest cell side: below it cell coordinates stop meaning anything in `f32`.
pub(crate) const MIN_CELL_SIZE: f32 = 1.0e-3;

/// Panics with a message that says how to fix a bad configuration.
pub(crate) fn validate(cell_size: CellSize, bounds: Option<AoiBounds>, plane: Plane) {
    if let CellSize::Fixed(side) = cell_size {
        assert!(
            side.is_finite() && (MIN_CELL_SIZE..=MAX_CELL_SIZE).contains(&side),
            "AoiPlugin: cell_size CellSize::Fixed({side}) is invalid; use a finite side between \
             {MIN_CELL_SIZE} and {MAX_CELL_SIZE} world units (about the typical view radius), or \
             CellSize::Auto"
        );
    }
    if let Some(b) = bounds {
        for i in 0..plane.dims() {
            assert!(
                b.min[i].is_finite() && b.max[i].is_finite() && b.min[i] < b.max[i],
                "AoiPlugin: bounds {b:?} are invalid on axis {i}; every used axis needs finite \
                 min < max (or leave bounds as None for an unbounded world)"
            );
        }
    }
}
