//! The moves that change pickup gathers before it observes them
//! ([`AoiIndex::observe_moves`](super::AoiIndex::observe_moves)): each new position written at
//! its slot and a bit set per slot, so that they come out in slot order without a sort.

use crate::{
    bits,
    components::Position,
    prefetch::{AHEAD, prefetch_record},
};

/// This update's moved entities that have a slot, by slot. Pushing a move is `O(1)`: the place
/// of its position is asked for, and it is written [`AHEAD`] pushes later. Taking the moves
/// reads the bits in order (`O(slots / 64 + moves)`) and forgets them. Holds 12 bytes and a bit
/// per slot, kept between updates.
///
/// Measured against gathering `(slot, position)` pairs in the ECS's order and radix-sorting them
/// (`PERFORMANCE.md`, stop 53): uniform 50k, two threads, phase timers, the sort alone took
/// 0.29-0.38 ms an update, the gathering then 0.19 ms against 0.42-0.45 ms here, and the index's
/// next pass ran faster after it (0.70 -> 0.38 ms); report, one thread, six alternating runs:
/// 27.5-29.3 -> 27.3-28.6 ms an update.
#[derive(Default)]
pub(crate) struct GatheredMoves {
    /// By slot: the new position of a gathered move (stale where its bit is clear).
    positions: Vec<Position>,
    /// One bit per slot, 64 slots a word: whether the slot's move was gathered.
    gathered: Vec<u64>,
    /// The last [`AHEAD`] moves pushed, not yet written (push `i` at `i % AHEAD`).
    waiting: [(u32, Position); AHEAD],
    /// How many moves were pushed since the last take.
    pushed: usize,
}

impl GatheredMoves {
    /// Records `position` as slot `s`'s move; a later move of the same slot replaces it.
    #[inline]
    pub fn push(&mut self, s: u32, position: Position) {
        if self.positions.len() <= s as usize {
            self.grow(s as usize + 1);
        }
        prefetch_record(&self.positions[s as usize]);
        let at = self.pushed % AHEAD;
        if self.pushed >= AHEAD {
            let (earlier, p) = self.waiting[at];
            self.write(earlier, p);
        }
        self.waiting[at] = (s, position);
        self.pushed += 1;
    }

    #[inline(always)]
    fn write(&mut self, s: u32, position: Position) {
        let s = s as usize;
        self.positions[s] = position;
        bits::insert(&mut self.gathered, s);
    }

    /// Room for `slots` slots (`Vec`'s growth: amortised `O(1)` a slot).
    #[cold]
    fn grow(&mut self, slots: usize) {
        self.positions.resize(slots, Position::default());
        self.gathered.resize(slots.div_ceil(64), 0);
    }

    /// Whether no move is gathered. `O(slots / 64)`.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.pushed == 0 && self.gathered.iter().all(|&w| w == 0)
    }

    /// Calls `observe(slot, position)` for each gathered move in slot order, and forgets them.
    #[inline]
    pub fn take_in_slot_order(&mut self, mut observe: impl FnMut(u32, &Position)) {
        for i in self.pushed.saturating_sub(AHEAD)..self.pushed {
            let (s, p) = self.waiting[i % AHEAD];
            self.write(s, p);
        }
        self.pushed = 0;
        for (w, word) in self.gathered.iter_mut().enumerate() {
            let mut bits = core::mem::take(word);
            while bits != 0 {
                let s = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                observe(s as u32, &self.positions[s]);
            }
        }
    }

    /// Heap bytes held (capacities).
    pub fn heap_bytes(&self) -> usize {
        self.positions.capacity() * size_of::<Position>() + self.gathered.capacity() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(moves: &mut GatheredMoves) -> Vec<(u32, f32)> {
        let mut seen = Vec::new();
        moves.take_in_slot_order(|s, p| seen.push((s, p.x)));
        seen
    }

    #[test]
    fn moves_come_out_once_each_in_slot_order_with_their_last_position() {
        let mut moves = GatheredMoves::default();
        let at = |x: f32| Position::new(x, 0.0);
        for (s, x) in [
            (130u32, 1.0),
            (3, 2.0),
            (64, 3.0),
            (63, 4.0),
            (0, 5.0),
            (3, 6.0),
            (1000, 7.0),
        ] {
            moves.push(s, at(x));
        }
        assert_eq!(
            taken(&mut moves),
            [(0, 5.0), (3, 6.0), (63, 4.0), (64, 3.0), (130, 1.0), (1000, 7.0)],
            "each gathered slot should come out once, in slot order, with the position gathered last"
        );
        assert!(moves.is_empty(), "taking the moves should forget them");
        assert_eq!(taken(&mut moves), [], "nothing should come out of an empty gathering");
        moves.push(5, at(8.0));
        assert_eq!(
            taken(&mut moves),
            [(5, 8.0)],
            "a new update's moves should come out alone"
        );
    }

    /// More moves than wait to be written: the earliest are written as later ones come, a
    /// slot pushed again long after its first move still ends with its last position.
    #[test]
    fn many_moves_come_out_like_a_sort_of_the_last_move_per_slot() {
        let mut moves = GatheredMoves::default();
        let mut draws = crate::test_draws::Draws::new(53);
        for round in 0..3 {
            let mut expected = std::collections::BTreeMap::new();
            for i in 0..(AHEAD as u32 * 5 + round) {
                let s = draws.below(300) as u32;
                moves.push(s, Position::new(i as f32, 0.0));
                expected.insert(s, i as f32);
            }
            assert_eq!(
                taken(&mut moves),
                expected.into_iter().collect::<Vec<_>>(),
                "round {round}: every slot should come out once, in order, with its last position"
            );
        }
    }
}
