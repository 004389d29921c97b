//! Renumbering slots in space order, so neighbours have neighbouring numbers.

use bevy_ecs::entity::Entity;
use bevy_tasks::TaskPool;

use super::AoiIndex;
use crate::{
    parallel::run_jobs,
    prefetch::{AHEAD, prefetch},
    slot::Slot,
};

impl AoiIndex {
    /// Renumbers the slots so that entities of neighbouring cells have neighbouring numbers:
    /// indexed slots in row-major cell order, then tracked slots outside the grid, then free
    /// slots. Only runs between ticks (the shortlist is empty).
    pub(super) fn renumber(&mut self, pool: Option<&TaskPool>) {
        debug_assert!(self.changes.is_empty(), "slots should only be renumbered between ticks");
        debug_assert!(
            self.turns.is_empty(),
            "slots should be renumbered after the messages are written"
        );
        self.relinks = 0;
        let n = self.slots.len();
        let mut cells: Vec<u32> = (0..self.grid.cells.len() as u32)
            .filter(|&c| !self.grid.cells[c as usize].members.is_empty())
            .collect();
        cells.sort_unstable_by_key(|&c| {
            let k = self.grid.cells[c as usize].key;
            (k[3], k[2], k[1], k[0])
        });
        const UNSET: u32 = u32::MAX;
        let mut new_of_old = vec![UNSET; n];
        let mut next = 0u32;
        for &c in &cells {
            for m in &self.grid.cells[c as usize].members {
                new_of_old[m.slot as usize] = next;
                next += 1;
            }
        }
        for (s, slot) in self.slots.iter().enumerate() {
            if new_of_old[s] == UNSET && slot.has_position() {
                new_of_old[s] = next;
                next += 1;
            }
        }
        self.free_slots.clear();
        for target in new_of_old.iter_mut().filter(|t| **t == UNSET) {
            *target = next;
            self.free_slots.push(next);
            next += 1;
        }
        self.free_slots.reverse();
        let remap = |s: &mut u32| *s = new_of_old[*s as usize];
        for cell in &mut self.grid.cells {
            cell.members.iter_mut().for_each(|m| remap(&mut m.slot));
            cell.pos.remap_slots(remap);
        }
        remap_lists(&mut self.lists, &new_of_old, pool);
        self.by_entity.remap_slots(remap);
        for list in self.always.values_mut() {
            list.iter_mut().for_each(remap);
        }
        self.wide.slots.iter_mut().for_each(remap);
        self.unsettled.iter_mut().for_each(remap);
        permute(&mut self.slots, &new_of_old, Slot::free);
        permute(&mut self.entities, &new_of_old, || Entity::PLACEHOLDER);
        permute(&mut self.lists, &new_of_old, Vec::new);
        self.renumbered += 1;
        #[cfg(debug_assertions)]
        self.check_links();
    }

    /// Debug check: the entity map, the slots and the grid members agree.
    #[cfg(debug_assertions)]
    fn check_links(&self) {
        for (index, generation, s) in self.by_entity.iter() {
            let slot = &self.slots[s as usize];
            let e = self.entities[s as usize];
            assert_eq!(
                (e.index_u32(), e.generation().to_bits()),
                (index, generation),
                "slot {s} should belong to the entity whose index maps to it"
            );
            if slot.cell != crate::grid::NO_CELL {
                let m = &self.grid.cells[slot.cell as usize].members[slot.member_index as usize];
                assert_eq!((m.slot, m.entity), (s, e), "slot {s}'s member should point back at it");
            }
        }
        for &f in &self.free_slots {
            assert!(
                !self.slots[f as usize].has_position(),
                "free slot {f} should not belong to an entity with a Position"
            );
        }
    }
}

/// Renames every slot in `lists` by `new_of_old`: most of a renumbering's work (uniform 50k:
/// 3.9 M entries in 50k buffers scattered over the heap). Each list is asked for `AHEAD` lists
/// ahead, and with `pool` the lists are split in one part per thread.
fn remap_lists(lists: &mut [Vec<u32>], new_of_old: &[u32], pool: Option<&TaskPool>) {
    let remap = |part: &mut [Vec<u32>]| {
        for i in 0..part.len() {
            if let Some(next) = part.get(i + AHEAD) {
                prefetch(next);
            }
            part[i].iter_mut().for_each(|s| *s = new_of_old[*s as usize]);
        }
    };
    let threads = pool.map_or(1, TaskPool::thread_num);
    run_jobs(pool, lists.chunks_mut(lists.len().div_ceil(threads).max(1)), &remap);
}

/// Moves `v[i]` to `v[new_of_old[i]]` (a permutation: every `fill` is overwritten).
fn permute<T>(v: &mut Vec<T>, new_of_old: &[u32], fill: impl Fn() -> T) {
    let mut out: Vec<T> = (0..v.len()).map(|_| fill()).collect();
    for (i, item) in v.drain(..).enumerate() {
        out[new_of_old[i] as usize] = item;
    }
    *v = out;
}
