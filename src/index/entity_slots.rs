//! Which slot each tracked entity has: an array indexed by the entity's index.

use bevy_ecs::entity::Entity;

/// [`EntitySlots`] entry of an index no tracked entity has.
const UNTRACKED: u32 = u32::MAX;

/// The slot of each tracked entity, in an array indexed by the entity's index, each entry with
/// the generation it belongs to. Bevy hands out entity indices densely from 0 and reuses freed
/// ones, so the array is as long as the largest index of a tracked entity: 8 bytes an index.
/// A lookup is one read where a hash map's is two (its control bytes, then its bucket), and
/// change pickup, which meets the entities in table order (spawn order until entities are
/// despawned and their indices reused), reads the array nearly in order.
#[derive(Default)]
pub(crate) struct EntitySlots {
    /// By entity index: the tracked entity's generation bits and slot, or [`UNTRACKED`].
    by_index: Vec<(u32, u32)>,
    len: usize,
}

impl EntitySlots {
    /// The slot of `entity`, if it is tracked. `O(1)`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<u32> {
        let &(generation, slot) = self.by_index.get(entity.index_u32() as usize)?;
        (slot != UNTRACKED && generation == entity.generation().to_bits()).then_some(slot)
    }

    /// Tracks `entity` in `slot`. An entity with the same index and an older generation (one
    /// despawned this update, its slot still to be freed) is no longer found.
    pub fn insert(&mut self, entity: Entity, slot: u32) {
        let i = entity.index_u32() as usize;
        if self.by_index.len() <= i {
            self.by_index.resize(i + 1, (0, UNTRACKED));
        }
        if self.by_index[i].1 == UNTRACKED {
            self.len += 1;
        }
        self.by_index[i] = (entity.generation().to_bits(), slot);
    }

    /// Stops tracking `entity` (nothing if it is not tracked, as when a newer entity with its
    /// index took its place).
    pub fn remove(&mut self, entity: Entity) {
        if self.get(entity).is_some() {
            self.by_index[entity.index_u32() as usize].1 = UNTRACKED;
            self.len -= 1;
        }
    }

    /// Renames every slot with `remap` (after the index renumbered its slots).
    pub fn remap_slots(&mut self, remap: impl Fn(&mut u32)) {
        (self.by_index.iter_mut())
            .filter(|(_, slot)| *slot != UNTRACKED)
            .for_each(|(_, slot)| remap(slot));
    }

    /// Each tracked entity's index, generation bits and slot.
    #[cfg(debug_assertions)]
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        (0..)
            .zip(&self.by_index)
            .filter(|(_, e)| e.1 != UNTRACKED)
            .map(|(i, &(g, s))| (i, g, s))
    }

    /// How many entities are tracked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Heap bytes held (capacity).
    pub fn heap_bytes(&self) -> usize {
        self.by_index.capacity() * size_of::<(u32, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use bevy_ecs::entity::{EntityGeneration, EntityIndex};

    use super::*;

    fn entity(index: u32, generation: u32) -> Entity {
        let index = EntityIndex::from_raw_u32(index).expect("a small index should be valid");
        Entity::from_index_and_generation(index, EntityGeneration::FIRST.after_versions(generation))
    }

    #[test]
    fn finds_each_tracked_entity_and_no_other_generation_of_its_index() {
        let mut slots = EntitySlots::default();
        slots.insert(entity(5, 0), 1);
        slots.insert(entity(2, 3), 7);
        assert_eq!(
            slots.get(entity(5, 0)),
            Some(1),
            "a tracked entity should be found in its slot"
        );
        assert_eq!(
            slots.get(entity(2, 3)),
            Some(7),
            "a tracked entity should be found in its slot"
        );
        assert_eq!(
            slots.get(entity(5, 1)),
            None,
            "another generation of a tracked index should not be found"
        );
        assert_eq!(slots.get(entity(3, 0)), None, "an untracked index should not be found");
        assert_eq!(
            slots.get(entity(900, 0)),
            None,
            "an index past the array should not be found"
        );
        assert_eq!(slots.len(), 2, "two entities should be tracked");
        // A newer generation of index 5 takes its place; removing the older one then does nothing.
        slots.insert(entity(5, 1), 4);
        slots.remove(entity(5, 0));
        assert_eq!(
            slots.get(entity(5, 1)),
            Some(4),
            "the newer generation should keep its slot"
        );
        assert_eq!(
            slots.get(entity(5, 0)),
            None,
            "the older generation should no longer be found"
        );
        assert_eq!(slots.len(), 2, "the newer generation should count once");
        slots.remove(entity(5, 1));
        slots.remap_slots(|s| *s += 10);
        assert_eq!(slots.get(entity(5, 1)), None, "a removed entity should not be found");
        assert_eq!(
            slots.get(entity(2, 3)),
            Some(17),
            "a remapped slot should be found renamed"
        );
        assert_eq!(slots.len(), 1, "one entity should be left");
    }
}
