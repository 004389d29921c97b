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
        self.remap_stale(&new_of_old);
        permute(&mut new_of_old, &mut self.slots, &mut self.entities, &mut self.lists);
        trim_slack(&mut self.slots);
        trim_slack(&mut self.entities);
        trim_slack(&mut self.lists);
        if self.owned > 0 {
            self.touches.owned_from(&self.slots);
        }
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
                assert_eq!(m.slot, s, "slot {s}'s member should point back at it");
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

/// Moves each slot's record, entity and list from `i` to `new_of_old[i]`, in place: each cycle
/// of the permutation is followed with swaps, every swap putting one slot where it belongs, and
/// `new_of_old` is left the identity. The slots `AHEAD` swaps along the cycle (whose numbers are
/// still the original ones there) are asked for ahead. Measured (uniform 50k, a timer around it,
/// 28 renumberings): 1.3-2.1 ms; copying into fresh buffers faulted their pages in at every
/// renumbering (0.8-3.7 ms, 3 MB of slots alone), and the same swaps without asking ahead
/// waited on each slot in turn (2.7-3.1 ms).
fn permute(new_of_old: &mut [u32], slots: &mut [Slot], entities: &mut [Entity], lists: &mut [Vec<u32>]) {
    debug_assert!(
        slots.len() == new_of_old.len() && entities.len() == new_of_old.len() && lists.len() == new_of_old.len(),
        "every per-slot array should have one entry per slot"
    );
    for i in 0..new_of_old.len() {
        let mut ahead = i;
        for _ in 0..AHEAD {
            ahead = new_of_old[ahead] as usize;
        }
        loop {
            let j = new_of_old[i] as usize;
            if j == i {
                break;
            }
            ahead = new_of_old[ahead] as usize;
            prefetch(core::slice::from_ref(&slots[ahead]));
            prefetch(core::slice::from_ref(&lists[ahead]));
            slots.swap(i, j);
            entities.swap(i, j);
            lists.swap(i, j);
            new_of_old.swap(i, j);
        }
    }
}

/// Gives back the room `v`'s growth left beyond an eighth to spare (the slack the lists keep,
/// [`reserve_with_headroom`](crate::components::reserve_with_headroom)): after `Vec`'s doubling
/// up to half of a per-slot array can be unused. The copies [`permute`] replaced left each array
/// at its exact length; in place, this keeps the index's memory within an eighth of that
/// (the churn test's level), and only reallocates after the slots grew.
fn trim_slack<T>(v: &mut Vec<T>) {
    let keep = v.len() + v.len() / 8;
    if v.capacity() > keep {
        v.shrink_to(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_draws::Draws;

    #[test]
    fn trim_slack_gives_back_room_beyond_an_eighth_and_leaves_the_rest() {
        let mut grown: Vec<u32> = Vec::with_capacity(1000);
        grown.extend(0..100);
        trim_slack(&mut grown);
        assert!(
            (112..200).contains(&grown.capacity()),
            "100 entries should keep room for about 112, not {}",
            grown.capacity()
        );
        assert_eq!(grown, (0..100).collect::<Vec<_>>(), "trimming should keep the entries");
        let mut snug: Vec<u32> = Vec::with_capacity(110);
        snug.extend(0..100);
        let at = snug.as_ptr();
        trim_slack(&mut snug);
        assert!(
            snug.capacity() == 110 && core::ptr::eq(at, snug.as_ptr()),
            "a buffer within an eighth of its length should be left where it is"
        );
    }

    /// Every slot's record, entity and list lands at its new number, for shuffled permutations
    /// of several sizes.
    #[test]
    fn permute_moves_each_slot_to_its_new_number() {
        let mut draws = Draws::new(7);
        for n in [0usize, 1, 2, 3, 17, 500] {
            let mut new_of_old: Vec<u32> = (0..n as u32).collect();
            // A Fisher-Yates shuffle: fixed points and cycles of several lengths.
            for i in (1..n).rev() {
                new_of_old.swap(i, draws.below(i as u64 + 1) as usize);
            }
            let mut slots: Vec<Slot> = (0..n as u32)
                .map(|i| {
                    let mut slot = Slot::free();
                    slot.cell = i;
                    slot
                })
                .collect();
            let mut entities: Vec<Entity> = (0..n as u32)
                .map(|i| Entity::from_raw_u32(i).expect("a small index should make a valid entity"))
                .collect();
            let mut lists: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i; i as usize % 3]).collect();
            let expected = new_of_old.clone();
            permute(&mut new_of_old, &mut slots, &mut entities, &mut lists);
            for (old, &new) in expected.iter().enumerate() {
                let at = new as usize;
                assert_eq!(slots[at].cell, old as u32, "slot {old}'s record should move to {new}");
                assert_eq!(
                    entities[at].index_u32(),
                    old as u32,
                    "slot {old}'s entity should move to {new}"
                );
                assert_eq!(
                    lists[at],
                    vec![old as u32; old % 3],
                    "slot {old}'s list should move to {new}"
                );
            }
            assert!(
                new_of_old.iter().enumerate().all(|(i, &n)| n as usize == i),
                "the permutation should be left the identity"
            );
        }
    }
}
