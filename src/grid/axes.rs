//! The sorted-axes index ([`IndexKind::SortedAxes`]): one cell per instance, its members kept
//! sorted by their first coordinate. During a tick the grid's edits leave the order disturbed
//! (moved members stay in place, new ones are appended, removed ones become tombstones); before
//! the scans, [`Grid::restore_order`] compacts the tombstones and re-sorts by insertion, whose work
//! follows the moves (a tick's steps pass few neighbours), or by one stable sort when many members
//! arrived. A scan then narrows a cell to its slab ([`Grid::slab`]): the members whose first
//! coordinate is within reach, its two ends galloped outward from the scanning entity's own index.

use core::ops::Range;

use super::{
    Grid, Member,
    cell::{Disorder, TOMBSTONE},
    window::margin,
};
use crate::config::IndexKind;

/// Above this many members appended to a cell in one tick, its order is restored by one stable
/// sort (`O(n log n)`) rather than by insertion (`O(n)` per appended member).
const SORT_ABOVE_INSERTS: u32 = 16;

impl Grid {
    /// Notes that this tick disturbed the order of sorted cell `c`, and what (`how`).
    pub(super) fn disturb(&mut self, c: u32, how: impl FnOnce(&mut Disorder)) {
        let d = &mut self.cells[c as usize].disorder;
        if !d.listed {
            d.listed = true;
            self.unsorted.push(c);
        }
        how(d);
    }

    /// Removes the member at `(c, idx)` of a sorted cell: it stays in place as a tombstone no
    /// scan can find (no layers, no radius) until [`Self::restore_order`] compacts the cell.
    pub(super) fn bury(&mut self, c: u32, idx: u32) {
        let cell = &mut self.cells[c as usize];
        let m = &mut cell.members[idx as usize];
        cell.clean.sub(m);
        m.slot = TOMBSTONE;
        m.r2 = -1.0;
        m.seen_by = 0;
        m.sees = 0;
        m.stepping = false;
        cell.pos.set(idx as usize, m);
        self.disturb(c, |d| d.tombstones += 1);
    }

    /// Restores the order of every sorted cell this tick disturbed: drops tombstones, frees the
    /// cells they emptied, and sorts by the first coordinate. `placed(slot, index)` is called for
    /// every member whose index changed (and possibly for others). Returns how many times a
    /// member moved past another in cells restored by insertion alone (members that changed
    /// places, as cell changes are in the grid). A no-op for the grid, whose cells have no order.
    pub fn restore_order(&mut self, mut placed: impl FnMut(u32, u32)) -> usize {
        let mut unsorted = core::mem::take(&mut self.unsorted);
        let mut passes = 0;
        for &c in &unsorted {
            let cell = &mut self.cells[c as usize];
            let d = core::mem::take(&mut cell.disorder);
            let members = &mut cell.members;
            if d.tombstones == 0 && d.inserted <= SORT_ABOVE_INSERTS {
                let moved = insertion_sort(members, &mut placed);
                if moved > 0 {
                    // Edits kept the positions in step; only a reordering needs them rebuilt.
                    cell.pos.rebuild(members);
                }
                passes += moved;
                continue;
            }
            if d.tombstones > 0 {
                members.retain(|m| m.slot != TOMBSTONE);
            }
            if d.inserted > SORT_ABOVE_INSERTS {
                members.sort_by(|a, b| a.p[0].total_cmp(&b.p[0]));
            } else {
                insertion_sort(members, |_, _| ());
            }
            for (i, m) in members.iter().enumerate() {
                placed(m.slot, i as u32);
            }
            cell.pos.rebuild(members);
            if members.is_empty() {
                self.free_cell(c);
            } else {
                self.note_lone(c);
            }
        }
        unsorted.clear();
        self.unsorted = unsorted;
        passes
    }

    /// The index range of the members of cell `c` that may be within `reach` of coordinate `x`
    /// on the first axis (`reach = +∞`: all of them): for a sorted cell, the slab, widened by the
    /// windows' rounding margin so that every member the exact test may accept is in it; for the
    /// grid, the whole cell. Its ends are searched outward from index `near` (a member close to
    /// `x`: the scanning entity's own), so the cost is `O(log d)` for ends `d` members away,
    /// touching memory around `near` rather than all over the cell. Always inlined: with a mere
    /// hint, the two compilations of the both-ways flip scan (AVX and baseline) called it out of
    /// line (callgrind, 5% moving 50k: 0.25 M instructions an update, 1.4% of them more).
    #[inline(always)]
    pub fn slab(&self, c: u32, near: usize, x: f32, reach: f32) -> Range<usize> {
        let members = &self.cells[c as usize].members;
        if self.kind == IndexKind::Grid {
            return 0..members.len();
        }
        sorted_slab(members, near, x, reach)
    }
}

/// [`Grid::slab`] of a sorted cell, out of line so the grid's scan loops stay as small as they
/// were (measured: inlined, the grid's observer scans ran 5% more instructions).
#[inline(never)]
fn sorted_slab(members: &[Member], near: usize, x: f32, reach: f32) -> Range<usize> {
    let m = margin(x, reach);
    let (lo, hi) = (x - reach - m, x + reach + m);
    partition_near(members, near, |m| m.p[0] < lo)..partition_near(members, near, |m| m.p[0] <= hi)
}

/// `members.partition_point(pred)` for a `pred` that holds on a prefix, found by galloping
/// outward from index `hint` then searching the last gallop's range: `O(log d)` probes for an
/// answer `d` away from the hint.
fn partition_near(members: &[Member], hint: usize, pred: impl Fn(&Member) -> bool) -> usize {
    let n = members.len();
    let hint = hint.min(n);
    if hint < n && pred(&members[hint]) {
        // Every index up to `lo - 1` holds; the answer is in `lo..=lo + step - 1`, or the end.
        let (mut lo, mut step) = (hint + 1, 1);
        while lo + step <= n && pred(&members[lo + step - 1]) {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(n);
        lo + members[lo..hi].partition_point(pred)
    } else {
        // No index from `hi` on holds; the answer is in `hi - step + 1..=hi`, or from 0.
        let (mut hi, mut step) = (hint, 1);
        while hi >= step && !pred(&members[hi - step]) {
            hi -= step;
            step *= 2;
        }
        let lo = hi.saturating_sub(step);
        lo + members[lo..hi].partition_point(pred)
    }
}

/// Sorts `members` by first coordinate by insertion, calling `placed(slot, index)` for each
/// member it moves: `O(n + passes)`. Returns the passes: how many times a member moved past
/// another.
fn insertion_sort(members: &mut [Member], mut placed: impl FnMut(u32, u32)) -> usize {
    let mut passes = 0;
    for i in 1..members.len() {
        if members[i - 1].p[0] <= members[i].p[0] {
            continue;
        }
        let m = members[i];
        let mut j = i;
        while j > 0 && members[j - 1].p[0] > m.p[0] {
            members[j] = members[j - 1];
            placed(members[j].slot, j as u32);
            j -= 1;
        }
        members[j] = m;
        placed(m.slot, j as u32);
        passes += i - j;
    }
    passes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{NO_CELL, cell::CleanObservers};

    /// A member at `x` on the first axis; even slots are observers.
    fn member(slot: u32, x: f32) -> Member {
        let r2 = if slot.is_multiple_of(2) { 4.0 } else { -1.0 };
        Member {
            p: [x, 0.0, 0.0],
            start_p: [x, 0.0, 0.0],
            ..super::super::tests::member(slot, r2)
        }
    }

    /// Random inserts, moves (small steps and jumps) and removes in two instances, the order
    /// restored after each round: every cell stays sorted with no tombstones, every slot's
    /// location points at its member, emptied cells are freed, counts of clean observers
    /// follow, and slabs hold exactly the members within reach (and a little margin).
    #[test]
    fn sorted_cells_stay_sorted_and_slabs_hold_what_is_within_reach() {
        let mut grid = Grid::new(10.0, 2, None, IndexKind::SortedAxes);
        let mut at: Vec<(u32, u32)> = vec![(NO_CELL, 0); 300];
        let mut x = vec![0.0f32; 300];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for round in 0..60 {
            for s in 0..300u32 {
                let roll = next();
                let (c, idx) = at[s as usize];
                if c == NO_CELL {
                    if roll < 0.3 || round == 0 {
                        x[s as usize] = (next() * 200.0).round() - 100.0;
                        let instance = u32::from(next() < 0.3);
                        let key = grid.key([x[s as usize], 5.0, 0.0], instance);
                        at[s as usize] = grid.insert(key, member(s, x[s as usize]));
                    }
                } else if roll < 0.05 {
                    assert_eq!(grid.remove(c, idx), None, "a sorted cell should move nobody on removal");
                    at[s as usize] = (NO_CELL, 0);
                } else if roll < 0.6 {
                    let step = if roll < 0.1 { 80.0 } else { 2.0 };
                    x[s as usize] += ((next() - 0.5) * step).round();
                    let moved = x[s as usize];
                    grid.edit_member(c, idx, |m| m.p[0] = moved);
                }
            }
            grid.restore_order(|s, idx| at[s as usize].1 = idx);
            let mut live = 0;
            for (c, cell) in grid.cells.iter().enumerate() {
                if cell.members.is_empty() {
                    continue;
                }
                live += 1;
                assert!(
                    cell.members.windows(2).all(|w| w[0].p[0] <= w[1].p[0]),
                    "cell {c} should be sorted by x after round {round}"
                );
                let observers = cell.members.iter().filter(|m| m.is_clean_observer());
                assert_eq!(
                    cell.clean,
                    CleanObservers {
                        all: observers.count() as u32,
                    },
                    "clean observers should be counted"
                );
                for (i, m) in cell.members.iter().enumerate() {
                    assert_ne!(m.slot, TOMBSTONE, "tombstones should be compacted");
                    assert_eq!(
                        at[m.slot as usize],
                        (c as u32, i as u32),
                        "slot {} should point at its member",
                        m.slot
                    );
                }
                let searches = [(0.0, 10.0), (-37.0, 0.0), (55.5, 3.25), (0.0, f32::INFINITY)];
                for ((centre, reach), near) in searches.into_iter().zip([0, 7, cell.members.len() / 2, usize::MAX]) {
                    let slab = grid.slab(c as u32, near, centre, reach);
                    for (i, m) in cell.members.iter().enumerate() {
                        let (d, inside) = ((m.p[0] - centre).abs(), slab.contains(&i));
                        assert!(
                            inside || d > reach,
                            "x {} is within {reach} of {centre}: in the slab",
                            m.p[0]
                        );
                        assert!(
                            !inside || d <= reach + 1.0e-3,
                            "x {} is beyond {reach} of {centre}: not in the slab",
                            m.p[0]
                        );
                    }
                }
            }
            assert_eq!(grid.occupied(), live, "emptied cells should be freed");
            assert!(live <= 2, "two instances make at most two sorted cells");
        }
    }
}
