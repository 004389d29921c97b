//! Bit sets kept as `u64` words, bit `i` of the set in word `i / 64`: the slots or entity
//! indices a pass marks and another tests.

/// Sets bit `i`.
#[inline(always)]
pub(crate) fn insert(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// Clears bit `i`.
#[inline(always)]
pub(crate) fn remove(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}

/// Whether bit `i` is set.
#[inline(always)]
pub(crate) fn contains(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}
