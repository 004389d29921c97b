//! The map from a cell's key to its record: an open-addressed hash table (linear probing, at
//! most half full) of 8-byte entries, each a record number beside 32 bits of its key's hash. The
//! key itself is read from the record (its first cache line, which the caller reads next anyway)
//! only when those bits match, so a lookup of a free cell reads one line of the table and
//! nothing else, and a removal compares entries without reading any record. Its own table, not
//! a library's, so the grid moves can ask for an entry's line a few changes ahead
//! ([`CellMap::prefetch`]): where lone walkers carry their cells from key to key, each removal,
//! insertion and neighbour lookup missed the cache on the table before.

use super::{Cell, CellKey, NO_CELL};
use crate::prefetch::prefetch;

/// A free entry: the hash bits and record number no listed cell has (records are numbered
/// below [`NO_CELL`]).
const FREE: u64 = u64::MAX;

/// The table's length when its first cell is listed.
const FIRST_LEN: usize = 16;

/// The occupied cells by key. Every method that needs a key takes the grid's records, where the
/// keys are.
#[derive(Default)]
pub(super) struct CellMap {
    /// `hash << 32 | record`, or [`FREE`]; a power of two long (or empty), at most half listed,
    /// so every probe meets a free entry.
    entries: Vec<u64>,
    listed: usize,
}

impl CellMap {
    /// The 32 hash bits an entry keeps: the low ones also give its first place. The key's 128
    /// bits folded into 64, then `MurmurHash3`'s 64-bit finaliser, so that neighbouring cells
    /// land far apart (a linear probe must not run into its neighbours' clusters). Fixed, so
    /// runs are repeatable. The moves hash each key they change twice (once to ask for its
    /// entry ahead): against hashing it with `ahash` through `Hash` (a length and a 16-byte
    /// write), 0.3 M fewer instructions an update (callgrind, `sparse_huge` 50k).
    #[inline]
    fn hash(&self, key: &CellKey) -> u32 {
        let word = |a: i32, b: i32| u64::from(a as u32) | u64::from(b as u32) << 32;
        let mut h = word(key[0], key[1]) ^ word(key[2], key[3]).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^= h >> 33;
        h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        h ^= h >> 33;
        h as u32
    }

    #[inline]
    fn mask(&self) -> usize {
        self.entries.len() - 1
    }

    #[inline]
    fn entry(hash: u32, c: u32) -> u64 {
        u64::from(hash) << 32 | u64::from(c)
    }

    /// The record of the cell at `key`, if it is occupied. `O(1)` expected: a line of the table,
    /// and the record of each entry whose hash bits match (almost always only the one found).
    #[inline]
    pub fn get(&self, cells: &[Cell], key: CellKey) -> Option<u32> {
        if self.listed == 0 {
            return None;
        }
        let (hash, mask) = (self.hash(&key), self.mask());
        let mut at = hash as usize & mask;
        loop {
            let entry = self.entries[at];
            if entry == FREE {
                return None;
            }
            let c = entry as u32;
            if (entry >> 32) as u32 == hash && cells[c as usize].key == key {
                return Some(c);
            }
            at = (at + 1) & mask;
        }
    }

    /// Lists record `c` under its key, `cells[c].key`, which no listed record has. Doubles the
    /// table first when it would be more than half full (moving the entries by their hash bits:
    /// no record is read).
    #[inline]
    pub fn insert(&mut self, cells: &[Cell], c: u32) {
        debug_assert!(c != NO_CELL, "a cell record's number should be below NO_CELL");
        if 2 * (self.listed + 1) > self.entries.len() {
            self.grow();
        }
        let hash = self.hash(&cells[c as usize].key);
        self.put(Self::entry(hash, c));
        self.listed += 1;
    }

    /// Writes `entry` in the first free place from its own.
    #[inline]
    fn put(&mut self, entry: u64) {
        let mask = self.mask();
        let mut at = (entry >> 32) as usize & mask;
        while self.entries[at] != FREE {
            at = (at + 1) & mask;
        }
        self.entries[at] = entry;
    }

    #[cold]
    fn grow(&mut self) {
        let len = (2 * self.entries.len()).max(FIRST_LEN);
        let old = core::mem::replace(&mut self.entries, vec![FREE; len]);
        for entry in old.into_iter().filter(|&e| e != FREE) {
            self.put(entry);
        }
    }

    /// Takes record `c`, listed under `key`, out of the map, shifting back the entries after it
    /// that may then sit nearer their own places (so no probe ever needs a marker for a removal).
    ///
    /// # Panics
    /// If `c` is not listed under `key`: the grid only removes cells it listed.
    #[inline]
    pub fn remove(&mut self, key: CellKey, c: u32) {
        let (wanted, mask) = (Self::entry(self.hash(&key), c), self.mask());
        let mut hole = (wanted >> 32) as usize & mask;
        while self.entries[hole] != wanted {
            assert!(
                self.entries[hole] != FREE,
                "cell record {c} should be listed under its key {key:?}"
            );
            hole = (hole + 1) & mask;
        }
        let mut next = hole;
        loop {
            next = (next + 1) & mask;
            let entry = self.entries[next];
            if entry == FREE {
                break;
            }
            // It may fill the hole if its own place is not after the hole (cyclically): then
            // every probe for it still passes no free entry on the way.
            let own = (entry >> 32) as usize & mask;
            if next.wrapping_sub(own) & mask >= next.wrapping_sub(hole) & mask {
                self.entries[hole] = entry;
                hole = next;
            }
        }
        self.entries[hole] = FREE;
        self.listed -= 1;
    }

    /// Hints the CPU to bring the table's line where a lookup, insertion or removal of `key`
    /// starts into cache. A hint only.
    #[inline]
    pub fn prefetch(&self, key: CellKey) {
        if !self.entries.is_empty() {
            prefetch(core::slice::from_ref(
                &self.entries[self.hash(&key) as usize & self.mask()],
            ));
        }
    }

    /// How many cells are listed.
    pub fn len(&self) -> usize {
        self.listed
    }

    /// Heap bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * size_of::<u64>()
    }

    /// The listed `(key, record)` pairs, sorted (for tests comparing two grids).
    #[cfg(test)]
    pub fn entries(&self, cells: &[Cell]) -> Vec<(CellKey, u32)> {
        let mut entries: Vec<_> = (self.entries.iter())
            .filter(|&&e| e != FREE)
            .map(|&e| (cells[e as u32 as usize].key, e as u32))
            .collect();
        entries.sort_unstable();
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_draws::Draws;

    /// Records at the given keys.
    fn cells_at(keys: &[CellKey]) -> Vec<Cell> {
        (keys.iter()).map(|&key| Cell { key, ..Cell::default() }).collect()
    }

    #[test]
    fn lookups_follow_insertions_and_removals_through_growth_and_shifted_clusters() {
        // Keys in a small block, so clusters form and removals shift entries back; every record
        // in and out many times, checked against a plain list after each step.
        let keys: Vec<CellKey> = (0..400).map(|i| [i % 20, i / 20, 0, i % 3]).collect();
        let cells = cells_at(&keys);
        let mut map = CellMap::default();
        let mut listed = vec![false; keys.len()];
        let mut draws = Draws::new(7);
        for step in 0..20_000 {
            let c = draws.below(keys.len() as u64) as usize;
            if listed[c] {
                map.remove(keys[c], c as u32);
            } else {
                map.insert(&cells, c as u32);
            }
            listed[c] = !listed[c];
            assert_eq!(
                map.len(),
                listed.iter().filter(|&&l| l).count(),
                "step {step}: the map should count the listed cells"
            );
            assert!(
                2 * map.len() <= map.entries.len(),
                "step {step}: the table should stay at most half full"
            );
            if step % 97 == 0 || step > 19_900 {
                for (i, &key) in keys.iter().enumerate() {
                    assert_eq!(
                        map.get(&cells, key),
                        listed[i].then_some(i as u32),
                        "step {step}: key {key:?} should be found exactly while listed"
                    );
                }
            }
        }
        assert_eq!(
            map.get(&cells, [99, 99, 0, 0]),
            None,
            "a key never listed should not be found"
        );
    }

    #[test]
    fn keys_whose_hash_bits_collide_are_told_apart_by_the_records_keys() {
        let (a, b) = ([-82, 100, 0, 0], [-4, 55, 0, 0]);
        let map = CellMap::default();
        assert_eq!(
            map.hash(&a),
            map.hash(&b),
            "the test needs two keys with the same hash bits"
        );
        let cells = cells_at(&[a, b]);
        let mut map = CellMap::default();
        map.insert(&cells, 0);
        assert_eq!(
            map.get(&cells, b),
            None,
            "a key sharing only its hash bits should not be found"
        );
        map.insert(&cells, 1);
        assert_eq!(
            map.get(&cells, a),
            Some(0),
            "the first of two colliding keys should be found"
        );
        assert_eq!(
            map.get(&cells, b),
            Some(1),
            "the second of two colliding keys should be found"
        );
        map.remove(a, 0);
        assert_eq!(
            map.get(&cells, b),
            Some(1),
            "removing one colliding key should keep the other"
        );
    }

    #[test]
    #[should_panic(expected = "should be listed under its key")]
    fn removing_a_cell_that_is_not_listed_panics() {
        let cells = cells_at(&[[0, 0, 0, 0], [1, 0, 0, 0]]);
        let mut map = CellMap::default();
        map.insert(&cells, 0);
        map.remove([1, 0, 0, 0], 1);
    }
}
