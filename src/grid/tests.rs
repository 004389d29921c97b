//! Tests of the grid's bookkeeping: cell positions and counts through inserts, edits, removals
//! and reordering, freed cells, and a carried lone member.

use super::*;
use crate::test_draws::Draws;
use cell::{CleanObservers, NO_RECT};

/// A member at the origin, in every layer.
pub(super) fn member(slot: u32, r2: f32) -> Member {
    Member {
        slot,
        r2,
        p: [0.0; 3],
        start_p: [0.0; 3],
        stepping: false,
        jumped: false,
        seen_by: u32::MAX,
        sees: u32::MAX,
        half: NO_RECT,
    }
}

/// Asserts that every cell's bit in `grid.lone` says whether it is lone now (freed cells
/// included), read straight from the bits (`Grid::is_lone` checks the same in debug builds).
fn assert_lone_bits_follow_cells(grid: &Grid, when: &str) {
    for (c, cell) in grid.cells.iter().enumerate() {
        assert_eq!(
            grid.lone_bit(c),
            cell.is_lone(),
            "{when}: cell {c}'s lone bit should say whether it holds one member and no neighbour"
        );
    }
}

/// `m` made a rectangle of half extents `half` (`None`: not a rectangle).
fn set_rect(m: &mut Member, half: Option<[f32; 2]>) {
    m.half = half.unwrap_or(NO_RECT);
}

#[test]
fn cell_positions_and_counts_follow_members_through_inserts_edits_removals_and_reordering() {
    for kind in [IndexKind::Grid, IndexKind::SortedAxes] {
        let mut grid = Grid::new(10.0, 2, None, kind);
        let mut draws = Draws::new(7);
        let mut next = || (draws.next_state() >> 33) as u32;
        // Where each live slot is: (cell, index).
        let mut at: std::collections::HashMap<u32, (u32, u32)> = std::collections::HashMap::new();
        for step in 0..2000u32 {
            let slot = next() % 64;
            match (at.get(&slot).copied(), next() % 3) {
                (None, _) => {
                    let mut m = member(slot, (next() % 50) as f32 - 10.0);
                    m.p = [(next() % 100) as f32 * 0.37, (next() % 100) as f32 * 0.11, 0.0];
                    let half = [(next() % 9) as f32, (next() % 9) as f32];
                    set_rect(&mut m, (next() % 2 == 0).then_some(half));
                    m.stepping = next() % 4 == 0;
                    at.insert(slot, grid.insert([(next() % 3) as i32, 0, 0, 0], m));
                }
                (Some((c, i)), 0) => {
                    at.remove(&slot);
                    if let Some(moved) = grid.remove(c, i) {
                        at.insert(moved, (c, i));
                    }
                }
                (Some((c, i)), _) => {
                    let (x, r2) = ((next() % 100) as f32 * 0.53, (next() % 50) as f32 - 10.0);
                    let half = [(next() % 9) as f32, (next() % 9) as f32];
                    let (rect, stepping) = ((next() % 2 == 0).then_some(half), next() % 4 == 0);
                    grid.edit_member(c, i, |m| {
                        (m.p[0], m.r2, m.stepping) = (x, r2, stepping);
                        set_rect(m, rect);
                    });
                }
            }
            for (c, cell) in grid.cells.iter().enumerate() {
                for (i, m) in cell.members.iter().enumerate() {
                    assert!(
                        cell.pos.holds(i, m),
                        "{kind:?}: cell {c}'s positions should mirror member {i} (tombstones too) after step {step}"
                    );
                }
                let clean = cell.members.iter().filter(|m| m.is_clean_observer());
                let counted = CleanObservers {
                    all: clean.count() as u32,
                };
                if !cell.members.is_empty() {
                    assert_eq!(
                        cell.clean, counted,
                        "{kind:?}: cell {c} should count its clean observers after step {step}"
                    );
                }
                assert_eq!(
                    cell.pos.rects(),
                    cell.members.iter().filter(|m| m.rect().is_some()).count(),
                    "{kind:?}: cell {c}'s positions should count its rectangles after step {step}"
                );
            }
            if step % 16 == 15 {
                grid.restore_order(|slot, i| {
                    if let Some(place) = at.get_mut(&slot) {
                        place.1 = i;
                    }
                });
                assert_lone_bits_follow_cells(&grid, &format!("{kind:?} after step {step}"));
                for (&slot, &(c, i)) in &at {
                    let cell = &grid.cells[c as usize];
                    let m = &cell.members[i as usize];
                    assert_eq!(m.slot, slot, "{kind:?}: slot {slot} should be where it was put");
                    assert!(
                        cell.pos.holds(i as usize, m),
                        "{kind:?}: the cell's positions should hold member {slot}'s point and radius at its index after step {step}"
                    );
                }
            }
        }
    }
}

#[test]
fn cells_are_freed_when_empty_and_huge_windows_walk_only_occupied_cells() {
    let mut grid = Grid::new(1.0, 2, None, IndexKind::Grid);
    let m = |slot| member(slot, 1.0);
    let (c0, i0) = grid.insert([0, 0, 0, 0], m(0));
    let (c1, _) = grid.insert([1_000_000, 5, 0, 0], m(1));
    assert_eq!(grid.occupied(), 2, "two members in two cells should make two cells");
    let mut out = Vec::new();
    grid.cells_in(&grid.window([0.0; 3], 1.0e7, 0), &mut out);
    assert_eq!(
        out,
        vec![c0, c1],
        "a huge window should list exactly the occupied cells"
    );
    assert_eq!(grid.remove(c0, i0), None, "removing the last member should move nobody");
    assert_eq!(grid.occupied(), 1, "an emptied cell should be freed");
    assert_eq!(
        grid.cells[c1 as usize].clean.all, 1,
        "observer count should follow members"
    );
}

#[test]
fn a_carried_lone_member_leaves_the_grid_as_a_removal_then_an_insert_would() {
    // Left alone in a cell whose buffers a crowd grew, a walker is not carried: a removal
    // frees those buffers (a reused cell should not inherit another place's crowd).
    let mut grid = Grid::new(1.0, 2, None, IndexKind::Grid);
    let (c, _) = grid.insert([0, 0, 0, 0], member(0, 1.0));
    for slot in 1..=KEPT_CELL_CAPACITY as u32 {
        grid.insert([0, 0, 0, 0], member(slot, 1.0));
    }
    for _ in 1..=KEPT_CELL_CAPACITY {
        grid.remove(c, 1);
    }
    assert!(
        !grid.carry_lone_member(c, [1, 0, 0, 0]),
        "a walker alone in a crowd-sized cell should leave it as a removal would"
    );
    let (lone, _) = grid.insert([5, 5, 0, 0], member(99, 1.0));
    assert!(
        grid.carry_lone_member(lone, [6, 5, 0, 0]),
        "a walker alone in a small cell with nobody around should be carried"
    );
    for dims in [2, 3] {
        let new_grid = || Grid::new(1.0, dims, None, IndexKind::Grid);
        let (mut carried, mut moved) = (new_grid(), new_grid());
        let mut draws = Draws::new(11);
        let mut next = |n: u64| draws.below(n) as i32;
        // Thirty walkers in a box of 12 cells a side (a few crowd, most walk alone); one step
        // in eight is a jump of up to 3 cells.
        let mut keys: Vec<CellKey> = Vec::new();
        for slot in 0..30 {
            let key = [next(12), next(12), if dims == 3 { next(12) } else { 0 }, 0];
            for grid in [&mut carried, &mut moved] {
                grid.insert(key, member(slot, 1.0));
            }
            keys.push(key);
        }
        let mut carries = 0;
        for step in 0..4000 {
            let slot = next(30) as usize;
            let from = keys[slot];
            let reach = if next(8) == 0 { 3 } else { 1 };
            let mut key = from;
            for k in &mut key[..dims] {
                *k += next(2 * reach as u64 + 1) - reach;
            }
            if key == from {
                continue;
            }
            let c = moved
                .map
                .get(&moved.cells, from)
                .expect("a walker's cell should be listed under its key");
            let i = moved.cells[c as usize]
                .members
                .iter()
                .position(|m| m.slot == slot as u32)
                .expect("a walker should be in the cell of its key") as u32;
            moved.remove(c, i);
            moved.insert(key, member(slot as u32, 1.0));
            if carried.carry_lone_member(c, key) {
                carries += 1;
            } else {
                carried.remove(c, i);
                carried.insert(key, member(slot as u32, 1.0));
            }
            keys[slot] = key;
            assert_eq!(
                carried.map.entries(&carried.cells),
                moved.map.entries(&moved.cells),
                "{dims}D step {step}: the cell maps should match"
            );
            assert_eq!(
                carried.free, moved.free,
                "{dims}D step {step}: the free records should match"
            );
            for grid in [&carried, &moved] {
                assert_lone_bits_follow_cells(grid, &format!("{dims}D step {step}"));
            }
            for (c, (a, b)) in carried.cells.iter().zip(&moved.cells).enumerate() {
                let slots = |cell: &Cell| cell.members.iter().map(|m| m.slot).collect::<Vec<_>>();
                assert_eq!(
                    slots(a),
                    slots(b),
                    "{dims}D step {step}: cell {c} should hold the same members"
                );
                assert_eq!(
                    a.members.capacity(),
                    b.members.capacity(),
                    "{dims}D step {step}: cell {c} should keep the same buffer (a lone walker's crowd-sized one is freed)"
                );
                if !a.members.is_empty() {
                    assert_eq!(
                        (a.key, &a.near),
                        (b.key, &b.near),
                        "{dims}D step {step}: cell {c}'s key and neighbour links (in order) should match"
                    );
                }
            }
        }
        assert!(
            carries > 500,
            "{dims}D: many steps should be carries of lone walkers, saw {carries}"
        );
    }
}

#[test]
fn a_sorted_cell_left_with_one_member_after_its_order_is_restored_is_lone() {
    let mut grid = Grid::new(10.0, 2, None, IndexKind::SortedAxes);
    let (c, _) = grid.insert([0, 0, 0, 0], member(0, 1.0));
    assert_lone_bits_follow_cells(&grid, "one member");
    assert!(
        grid.is_lone(c),
        "a cell with one member and no neighbour should be lone"
    );
    let (_, i) = grid.insert([0, 0, 0, 0], member(1, 1.0));
    grid.restore_order(|_, _| ());
    assert!(!grid.is_lone(c), "a cell with two members should not be lone");
    grid.remove(c, i);
    grid.restore_order(|_, _| ());
    assert_lone_bits_follow_cells(&grid, "a tombstone dropped");
    assert!(
        grid.is_lone(c),
        "a sorted cell left with one member should be lone again"
    );
}

/// [`Cell::set_only_member`], which reads nothing of the member it replaces, leaves the cell as
/// an edit would: the member, its block's lane, the count of clean observers and the count of
/// rectangles, between every two of a clean observer, a stepping one, a non-observer and a
/// rectangle.
#[test]
fn setting_a_cells_only_member_counts_it_as_an_edit_would() {
    let stepping = Member {
        stepping: true,
        ..member(0, 4.0)
    };
    let mut rect = member(0, 8.0);
    set_rect(&mut rect, Some([2.0, 1.0]));
    let kinds = [member(0, 4.0), stepping, member(0, -1.0), rect];
    for (i, old) in kinds.iter().enumerate() {
        for (j, new) in kinds.iter().enumerate() {
            let new = Member {
                p: [3.0, 1.0, 0.0],
                ..*new
            };
            let (mut edited, mut set) = (
                Grid::new(10.0, 2, None, IndexKind::Grid),
                Grid::new(10.0, 2, None, IndexKind::Grid),
            );
            let (c, _) = edited.insert([0, 0, 0, 0], *old);
            set.insert([0, 0, 0, 0], *old);
            edited.edit_member(c, 0, |m| *m = new);
            set.cells[c as usize].set_only_member(new);
            let (a, b) = (&edited.cells[c as usize], &set.cells[c as usize]);
            assert_eq!(
                (
                    format!("{:?}", a.members),
                    a.clean,
                    format!("{:?}", a.pos.lane(0)),
                    a.pos.rects()
                ),
                (
                    format!("{:?}", b.members),
                    b.clean,
                    format!("{:?}", b.pos.lane(0)),
                    b.pos.rects()
                ),
                "member kind {i} replaced by kind {j}: the cell should be as an edit leaves it"
            );
        }
    }
}
