//! A picture of the AOI as a standalone SVG: the grid's cells, every entity coloured by kind,
//! a few observers' view circles with a line to each target they see, `Watched` monsters
//! ringed, a legend and the tick. Shared by `headless_simulation --svg` and the tests.

use std::fmt::Write;

/// What an entity is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Player,
    Monster,
    Item,
}

impl Kind {
    fn colour(self) -> &'static str {
        match self {
            Kind::Player => "#1f6feb",
            Kind::Monster => "#d1242f",
            Kind::Item => "#9a6700",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Player => "player",
            Kind::Monster => "monster",
            Kind::Item => "item",
        }
    }
}

/// One entity.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    pub x: f32,
    pub y: f32,
    pub kind: Kind,
    /// Carries the `Watched` marker (its AI runs).
    pub watched: bool,
}

/// One observer's view: where it is, its radius (or its rectangle's half extents), and where the
/// targets it sees are.
#[derive(Clone, Debug)]
pub struct View {
    pub x: f32,
    pub y: f32,
    pub radius: f32,
    pub rect: Option<[f32; 2]>,
    pub sees: Vec<(f32, f32)>,
}

/// Everything the picture shows.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The map is `[0, side]²`.
    pub side: f32,
    /// The grid's cell side (`AoiStats::cell_side`).
    pub cell: f32,
    pub tick: u64,
    pub marks: Vec<Mark>,
    pub views: Vec<View>,
}

/// Renders the snapshot, `px` pixels wide (map area; the legend adds a band below it).
pub fn render(s: &Snapshot, px: f32) -> String {
    let k = px / s.side.max(1.0);
    let legend = 70.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{px:.0}" height="{:.0}" viewBox="0 0 {px:.0} {:.0}" font-family="sans-serif" font-size="13">"#,
        px + legend,
        px + legend
    );
    let _ = writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    // Cells: grid lines every cell side (skipped when there would be more than 200 a side).
    if s.cell > 0.0 && s.side / s.cell <= 200.0 {
        let _ = write!(out, r##"<g class="cells" stroke="#d8dee4" stroke-width="1">"##);
        let mut v = 0.0;
        while v <= s.side {
            let p = v * k;
            let _ = write!(out, r#"<line x1="{p:.1}" y1="0" x2="{p:.1}" y2="{px:.1}"/>"#);
            let _ = write!(out, r#"<line x1="0" y1="{p:.1}" x2="{px:.1}" y2="{p:.1}"/>"#);
            v += s.cell;
        }
        let _ = writeln!(out, "</g>");
    }
    // Views: a circle (or a rectangle) and a line to each seen target.
    for view in &s.views {
        let (cx, cy) = (view.x * k, px - view.y * k);
        let _ = write!(out, r##"<g class="view" stroke="#1f6feb">"##);
        let fill = r##"fill="#1f6feb" fill-opacity="0.06" stroke-width="1.5""##;
        let _ = match view.rect {
            None => write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{:.1}" {fill}/>"#,
                view.radius * k
            ),
            Some([hw, hh]) => write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" {fill}/>"#,
                cx - hw * k,
                cy - hh * k,
                2.0 * hw * k,
                2.0 * hh * k
            ),
        };
        for &(tx, ty) in &view.sees {
            let _ = write!(
                out,
                r#"<line x1="{cx:.1}" y1="{cy:.1}" x2="{:.1}" y2="{:.1}" stroke-opacity="0.35" stroke-width="0.8"/>"#,
                tx * k,
                px - ty * k
            );
        }
        let _ = writeln!(out, "</g>");
    }
    // Entities, one mark each (y up, as in the simulation).
    let _ = write!(out, r#"<g class="entities">"#);
    for m in &s.marks {
        let (x, y) = (m.x * k, px - m.y * k);
        let r = if m.kind == Kind::Player { 3.5 } else { 2.2 };
        let _ = write!(
            out,
            r#"<circle class="mark {}" cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{}"/>"#,
            m.kind.name(),
            m.kind.colour()
        );
        if m.watched {
            let _ = write!(
                out,
                r##"<circle class="watched" cx="{x:.1}" cy="{y:.1}" r="{:.1}" fill="none" stroke="#bf8700" stroke-width="1.2"/>"##,
                r + 2.5
            );
        }
    }
    let _ = writeln!(out, "</g>");
    // Legend and tick.
    let y = px + 25.0;
    let _ = write!(out, r#"<g class="legend">"#);
    let mut x = 10.0;
    for kind in [Kind::Player, Kind::Monster, Kind::Item] {
        let _ = write!(
            out,
            r#"<circle cx="{x}" cy="{y}" r="5" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            kind.colour(),
            x + 10.0,
            y + 4.5,
            kind.name()
        );
        x += 90.0;
    }
    let _ = write!(
        out,
        r##"<circle cx="{x}" cy="{y}" r="6" fill="none" stroke="#bf8700" stroke-width="1.2"/><text x="{}" y="{}">watched (AI awake)</text>"##,
        x + 10.0,
        y + 4.5
    );
    let _ = write!(
        out,
        r##"<text x="10" y="{}" fill="#57606a">tick {} · {} entities · lines: what {} players see · grid: cells of {:.0} units</text>"##,
        y + 30.0,
        s.tick,
        s.marks.len(),
        s.views.len(),
        s.cell
    );
    let _ = writeln!(out, "</g>\n</svg>");
    out
}
