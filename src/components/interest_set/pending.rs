//! The few edits an `InterestSet` holds beside its sorted buffer: targets added to it or removed
//! from it since the buffer was last brought up to date, kept in the component itself.
//!
//! An unchanged observer's set gains or loses one target now and then (a target walked across
//! its view edge). Editing the sorted buffer in place finds the target's place and shifts the
//! rest: it reads the whole buffer, about ten cache lines for a typical view, while the
//! component's own lines are already in cache (the edit looked the component up). Kept here, the
//! edit touches only those; the buffer is brought up to date ("folded") once the room is full,
//! or when the pair engine takes the buffer out to merge a changed observer's flips.

use bevy_ecs::entity::Entity;

/// How many edits the room holds (seven make the edits 64 bytes, a cache line's worth; a room
/// of three measured no better for the other workloads and worse for 5% moving, see
/// `PERFORMANCE.md`).
pub(crate) const ROOM: usize = 7;

const _: () = assert!(ROOM <= 8, "the `removed` mask should have a bit for each edit");

/// Up to [`ROOM`] edits, sorted by target: each adds a target that is not in the buffer or
/// removes one that is.
///
/// `repr(C)`, the counts first: the pair engine's passes over many sets read only whether there
/// are edits, right after the set's buffer ([`InterestSet`](super::InterestSet) is `repr(C)`
/// too), so they read the component's first 26 bytes only.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct PendingEdits {
    count: u8,
    /// Bit `i`: `targets[i]` is removed (else added).
    removed: u8,
    targets: [Entity; ROOM],
}

impl Default for PendingEdits {
    fn default() -> Self {
        Self {
            targets: [Entity::PLACEHOLDER; ROOM],
            count: 0,
            removed: 0,
        }
    }
}

impl PendingEdits {
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether the room is full.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.count as usize == ROOM
    }

    /// Targets added less targets removed.
    #[inline]
    pub fn len_change(&self) -> isize {
        let removed = self.removed.count_ones() as isize;
        self.count as isize - 2 * removed
    }

    /// The edits, sorted by target: `(target, added)`.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Entity, bool)> + Clone + '_ {
        (0..self.count as usize).map(|i| (self.targets[i], self.added(i)))
    }

    /// Edit `i` in target order: `(target, added)`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(Entity, bool)> {
        (i < self.count as usize).then(|| (self.targets[i], self.added(i)))
    }

    /// Whether edit `i` adds its target (else it removes it).
    #[inline]
    fn added(&self, i: usize) -> bool {
        self.removed >> i & 1 == 0
    }

    /// `Some(true)` if `target` was added, `Some(false)` if it was removed, `None` if it was
    /// not edited. `O(ROOM)`.
    #[inline]
    pub fn edit_of(&self, target: Entity) -> Option<bool> {
        let at = self.targets[..self.count as usize].iter().position(|&t| t == target)?;
        Some(self.added(at))
    }

    /// Records `target` added (`added`) or removed; `false` if the room is full and nothing was
    /// recorded. Adding a target removed here (or the other way round) cancels the two edits.
    #[inline]
    pub fn record(&mut self, target: Entity, added: bool) -> bool {
        let n = self.count as usize;
        let at = self.targets[..n].iter().position(|&t| t >= target).unwrap_or(n);
        if at < n && self.targets[at] == target {
            if self.added(at) != added {
                // The opposite edit: the buffer is right again for this target.
                self.targets.copy_within(at + 1..n, at);
                let removed = u32::from(self.removed);
                let below = removed & ((1 << at) - 1);
                self.removed = (below | (removed >> (at + 1)) << at) as u8;
                self.count -= 1;
            }
            return true;
        }
        if n == ROOM {
            return false;
        }
        self.targets.copy_within(at..n, at + 1);
        self.targets[at] = target;
        let removed = u32::from(self.removed);
        let below = removed & ((1 << at) - 1);
        self.removed = (below | u32::from(!added) << at | (removed >> at) << (at + 1)) as u8;
        self.count += 1;
        true
    }

    /// Forgets every edit.
    #[inline]
    pub fn clear(&mut self) {
        self.count = 0;
        self.removed = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bevy_ecs::entity::EntityIndex;

    use super::*;
    use crate::test_draws::Draws;

    fn entity(i: u32) -> Entity {
        Entity::from_index(EntityIndex::from_raw_u32(i).expect("a small index should be valid"))
    }

    #[test]
    fn records_cancel_and_refuse_like_a_map_of_edits() {
        let mut draws = Draws::new(3);
        let mut next = |n: u64| draws.below(n);
        for round in 0..2000 {
            let mut edits = PendingEdits::default();
            let mut want: BTreeMap<Entity, bool> = BTreeMap::new();
            for _ in 0..next(20) {
                let (t, added) = (next(12) as u32, next(2) == 0);
                let recorded = edits.record(entity(t), added);
                match want.get(&entity(t)) {
                    Some(&was) if was != added => {
                        assert!(recorded, "round {round}: an opposite edit should always cancel");
                        want.remove(&entity(t));
                    }
                    Some(_) => assert!(recorded, "round {round}: a repeated edit should be taken"),
                    None if want.len() == ROOM => {
                        assert!(!recorded, "round {round}: a new edit should be refused when full");
                    }
                    None => {
                        assert!(recorded, "round {round}: a new edit should fit");
                        want.insert(entity(t), added);
                    }
                }
                let got: Vec<(Entity, bool)> = edits.iter().collect();
                let expected: Vec<(Entity, bool)> = want.iter().map(|(&t, &a)| (t, a)).collect();
                assert_eq!(
                    got, expected,
                    "round {round}: the edits should be the map's, sorted by entity"
                );
                let change = want.values().map(|&a| if a { 1 } else { -1 }).sum::<isize>();
                assert_eq!(edits.len_change(), change, "round {round}: adds less removes");
                assert_eq!(edits.is_full(), want.len() == ROOM);
                for t in 0..12 {
                    assert_eq!(
                        edits.edit_of(entity(t)),
                        want.get(&entity(t)).copied(),
                        "round {round}: edit of {t}"
                    );
                }
            }
        }
    }
}
