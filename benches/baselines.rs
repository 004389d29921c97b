//! The baselines of BENCHMARKS.md: brute force, a kd-tree rebuilt every tick (kiddo), a plain
//! exact grid, and the answer floor. Each keeps per-observer sorted visible lists and
//! merge-diffs them against the previous tick, counting enters and leaves.

#![allow(dead_code, reason = "each includer uses a different part")]

use std::collections::HashMap;

use kiddo::{KdTree, SquaredEuclidean};

use crate::workload::{R, sees};

/// Merge-diffs two sorted lists, counting `(enters, leaves)`.
#[inline]
pub fn diff(old: &[u32], new: &[u32]) -> (usize, usize) {
    let (mut i, mut j, mut enters, mut leaves) = (0, 0, 0, 0);
    while i < old.len() && j < new.len() {
        match old[i].cmp(&new[j]) {
            core::cmp::Ordering::Less => {
                leaves += 1;
                i += 1;
            }
            core::cmp::Ordering::Greater => {
                enters += 1;
                j += 1;
            }
            core::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    (enters + new.len() - j, leaves + old.len() - i)
}

/// Per-observer lists, old and new, swapped every tick.
#[derive(Default)]
pub struct Lists {
    pub old: Vec<Vec<u32>>,
    pub new: Vec<Vec<u32>>,
}

impl Lists {
    /// Diffs every observer's new list against its old one, then swaps.
    pub fn finish(&mut self) -> (usize, usize) {
        let mut total = (0, 0);
        for (o, n) in self.old.iter().zip(&self.new) {
            let (e, l) = diff(o, n);
            total.0 += e;
            total.1 += l;
        }
        core::mem::swap(&mut self.old, &mut self.new);
        total
    }

    fn reset(&mut self, n: usize) {
        self.old.resize_with(n, Vec::new);
        self.new.resize_with(n, Vec::new);
        self.new.iter_mut().for_each(Vec::clear);
    }
}

/// All pairs.
pub fn brute(pos: &[[f32; 2]], lists: &mut Lists) -> (usize, usize) {
    lists.reset(pos.len());
    for (o, &p) in pos.iter().enumerate() {
        let list = &mut lists.new[o];
        for (t, &q) in pos.iter().enumerate() {
            if t != o && sees(p, q) {
                list.push(t as u32);
            }
        }
    }
    lists.finish()
}

/// kiddo kd-tree rebuilt every tick, one radius query per observer.
pub fn kdtree(pos: &[[f32; 2]], lists: &mut Lists) -> (usize, usize) {
    lists.reset(pos.len());
    let mut tree: KdTree<f32, 2> = KdTree::with_capacity(pos.len());
    for (i, p) in pos.iter().enumerate() {
        tree.add(p, i as u64);
    }
    // A hair wider than R², then the exact test, so the result is the crate's.
    let query = R * R * 1.0001;
    for (o, p) in pos.iter().enumerate() {
        let list = &mut lists.new[o];
        for n in tree.within_unsorted::<SquaredEuclidean>(p, query) {
            let t = n.item as usize;
            if t != o && sees(*p, pos[t]) {
                list.push(t as u32);
            }
        }
        list.sort_unstable();
    }
    lists.finish()
}

/// Plain exact grid: cell = R, cells rebuilt every tick, 3x3 cells scanned, lists sorted.
#[derive(Default)]
pub struct PlainGrid {
    cells: HashMap<(i32, i32), Vec<u32>>,
}

impl PlainGrid {
    pub fn run(&mut self, pos: &[[f32; 2]], lists: &mut Lists) -> (usize, usize) {
        self.fill(pos, lists);
        lists.finish()
    }

    /// Computes every observer's sorted list into `lists.new`.
    pub fn fill(&mut self, pos: &[[f32; 2]], lists: &mut Lists) {
        lists.reset(pos.len());
        self.cells.values_mut().for_each(Vec::clear);
        let key = |p: [f32; 2]| ((p[0] / R).floor() as i32, (p[1] / R).floor() as i32);
        for (i, &p) in pos.iter().enumerate() {
            self.cells.entry(key(p)).or_default().push(i as u32);
        }
        for (o, &p) in pos.iter().enumerate() {
            let (cx, cy) = key(p);
            let list = &mut lists.new[o];
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if let Some(cell) = self.cells.get(&(cx + dx, cy + dy)) {
                        for &t in cell {
                            if t as usize != o && sees(p, pos[t as usize]) {
                                list.push(t);
                            }
                        }
                    }
                }
            }
            list.sort_unstable();
        }
    }
}

/// The answer floor: the true lists are given (computed untimed); walk every visible pair once
/// computing its squared distance, then merge-diff against the previous tick.
pub fn floor(pos: &[[f32; 2]], truth: &mut Lists) -> (usize, usize, f32) {
    let mut acc = 0.0f32;
    for (o, list) in truth.new.iter().enumerate() {
        let p = pos[o];
        for &t in list {
            let q = pos[t as usize];
            let (dx, dy) = (p[0] - q[0], p[1] - q[1]);
            acc += dx * dx + dy * dy;
        }
    }
    let (e, l) = truth.finish();
    (e, l, acc)
}
