//! The index's per-observer lists of target slots. They are unordered (an enter pushes, a leave
//! swaps the last entry into its place), so a leave must find its target: a short list is
//! searched sixteen entries at a time, branch-free within each group (callgrind, uniform 10k, 8
//! updates, one thread: 0.8% fewer instructions in all than `iter().position`).

/// Where `target` is in `list`, if it is there (the first place). `O(n)`, sixteen comparisons
/// per branch.
#[inline]
pub(crate) fn position_of(list: &[u32], target: u32) -> Option<usize> {
    const GROUP: usize = 16;
    let mut groups = list.chunks_exact(GROUP);
    for (g, group) in (&mut groups).enumerate() {
        let hits = (group.iter().enumerate()).fold(0u32, |hits, (j, &t)| hits | u32::from(t == target) << j);
        if hits != 0 {
            return Some(g * GROUP + hits.trailing_zeros() as usize);
        }
    }
    let rest = groups.remainder();
    rest.iter()
        .position(|&t| t == target)
        .map(|j| list.len() - rest.len() + j)
}

/// Removes `target` from `list` (swapping the last entry into its place).
///
/// # Panics
/// If `target` is not in `list`: the caller knows it is there (its pair was visible).
#[inline]
pub(crate) fn remove_seen(list: &mut Vec<u32>, target: u32) {
    let at =
        position_of(list, target).expect("a target seen at the start of the tick should be in the observer's list");
    list.swap_remove(at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_of_finds_the_first_place_of_every_entry_and_nothing_else() {
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 77, 200] {
            // Every value twice when the list is long enough, so "first" matters.
            let list: Vec<u32> = (0..len as u32).map(|i| (i * 7) % (len as u32 / 2 + 1)).collect();
            for target in 0..len as u32 + 2 {
                assert_eq!(
                    position_of(&list, target),
                    list.iter().position(|&t| t == target),
                    "position_of({target}) in a list of {len} should be the first place it is at"
                );
            }
        }
    }
}
