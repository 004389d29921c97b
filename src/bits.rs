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

/// The set bits, ascending: `O(words + set bits)`.
pub(crate) fn iter(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    (0..).zip(words).flat_map(|(w, &word)| {
        let mut left = word;
        core::iter::from_fn(move || {
            (left != 0).then(|| {
                let bit = left.trailing_zeros() as usize;
                left &= left - 1;
                w * 64 + bit
            })
        })
    })
}

/// Whether bit `i` is set.
#[inline(always)]
pub(crate) fn contains(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// Whether bit `i` is set, every bit past the last word being clear.
#[inline(always)]
pub(crate) fn contains_or_past(words: &[u64], i: usize) -> bool {
    words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iter_gives_the_set_bits_ascending_across_words() {
        let mut words = [0u64; 3];
        for i in [0, 5, 63, 64, 130, 191] {
            insert(&mut words, i);
        }
        remove(&mut words, 5);
        assert_eq!(
            iter(&words).collect::<Vec<_>>(),
            [0, 63, 64, 130, 191],
            "the set bits, ascending, each once"
        );
        assert!(
            contains(&words, 130) && !contains(&words, 5),
            "contains follows the edits"
        );
        assert_eq!(iter(&[0, 0]).count(), 0, "an empty set has no bits");
        assert!(
            contains_or_past(&words, 191) && !contains_or_past(&words, 192),
            "a bit past the last word should be clear"
        );
    }
}
