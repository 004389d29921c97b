//! A seeded generator for the unit tests' random cases: a 64-bit linear congruential generator
//! (Knuth's MMIX constants), read from its high bits, the well-mixed ones. Tests only.

/// The unit tests' draws: the same sequence for the same seed.
pub(crate) struct Draws(u64);

impl Draws {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next state, all 64 bits (draw from its high ones).
    pub fn next_state(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// A whole number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_state() >> 33) % n
    }
}
