//! A radix sort by a `u32` key, for the per-update lists put in slot or entity order (the
//! shortlist, the `InterestSet` visits and edits): tens of thousands of items whose keys are
//! dense small numbers, where a comparison sort spends `O(n log n)` unpredictable branches.

/// Bits of the key sorted per pass: 2048 counters (8 KiB, on the stack), so a key below
/// 2²² (four million slots or entity indices) takes two passes.
const DIGIT_BITS: u32 = 11;
/// Below this many items a comparison sort is cheaper than clearing the counters.
const RADIX_FROM: usize = 512;

/// Sorts `items` by `key`, stably, using `spare` as the second buffer (its contents are
/// replaced; the two buffers may swap allocations). A least-significant-digit radix sort:
/// one counting pass and one scatter per [`DIGIT_BITS`] of the largest key, `O(n)` each, after
/// one pass that returns at once when the items are already in order.
pub(crate) fn sort_by_u32_key<T: Copy>(items: &mut Vec<T>, spare: &mut Vec<T>, key: impl Fn(&T) -> u32) {
    // Already sorted is common (a shortlist found in slot order): one read-only pass.
    if items.is_sorted_by_key(&key) {
        return;
    }
    if items.len() < RADIX_FROM {
        items.sort_by_key(|t| key(t));
        return;
    }
    let bits = items.iter().fold(0, |acc, t| acc | key(t));
    let buckets = 1usize << DIGIT_BITS;
    let mut counts = [0u32; 1 << DIGIT_BITS];
    // Sized once: after each pass the two buffers swap, and both hold `items.len()` entries.
    spare.clear();
    spare.resize(items.len(), items[0]);
    let mut shift = 0;
    while shift < u32::BITS && bits >> shift != 0 {
        let digit = |t: &T| (key(t) >> shift) as usize & (buckets - 1);
        counts.fill(0);
        items.iter().for_each(|t| counts[digit(t)] += 1);
        let mut start = 0;
        for count in &mut counts {
            (*count, start) = (start, start + *count);
        }
        for t in items.iter() {
            let at = &mut counts[digit(t)];
            spare[*at as usize] = *t;
            *at += 1;
        }
        core::mem::swap(items, spare);
        shift += DIGIT_BITS;
    }
}

/// The buffers of a radix sort of large items by their keys alone ([`Self::sort`]), kept between
/// updates.
#[derive(Default)]
pub(crate) struct KeySort {
    keys: Vec<u64>,
    spare: Vec<u64>,
}

impl KeySort {
    /// Sorts `items` like [`sort_by_u32_key`], but moves each item once: the radix passes run
    /// over `(key, place)` pairs (8 bytes each, cached where the items are not), then the items
    /// are gathered in that order into `spare` (their two buffers swap). For items much larger
    /// than their key, such as the shortlist's records when they were 52 bytes: uniform 50k,
    /// ~1.28 → ~0.76 ms an update (phase timers).
    pub fn sort<T: Copy>(&mut self, items: &mut Vec<T>, spare: &mut Vec<T>, key: impl Fn(&T) -> u32) {
        // Already sorted (the common shortlist): one read-only pass, not a second in
        // `sort_by_u32_key`.
        if items.is_sorted_by_key(&key) {
            return;
        }
        if items.len() < RADIX_FROM {
            sort_by_u32_key(items, spare, key);
            return;
        }
        self.keys.clear();
        let places = items.iter().zip(0u64..);
        self.keys.extend(places.map(|(t, at)| u64::from(key(t)) << 32 | at));
        // Equal keys keep their places' order: the sort stays stable.
        sort_by_u32_key(&mut self.keys, &mut self.spare, |k| (k >> 32) as u32);
        spare.clear();
        spare.extend(self.keys.iter().map(|&k| items[k as u32 as usize]));
        core::mem::swap(items, spare);
    }

    /// Heap bytes held (capacities).
    pub fn heap_bytes(&self) -> usize {
        (self.keys.capacity() + self.spare.capacity()) * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sorts_sort_like_a_stable_comparison_sort_for_every_size_and_key_width() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut spare, mut large_spare, mut key_sort) = (Vec::new(), Vec::new(), KeySort::default());
        for len in [0, 1, 2, RADIX_FROM - 1, RADIX_FROM, 5_000, 70_000] {
            for key_bits in [1, 11, 12, 22, 23, 32] {
                let mask = if key_bits == 32 { u32::MAX } else { (1 << key_bits) - 1 };
                // (key, original position): stability shows in the positions of equal keys.
                let mut items: Vec<(u32, u32)> = (0..len as u32).map(|i| (next() as u32 & mask, i)).collect();
                let mut expected = items.clone();
                expected.sort_by_key(|&(k, _)| k);
                // The same items in large records, sorted by their keys alone.
                let mut large: Vec<((u32, u32), [u64; 4])> = items.iter().map(|&t| (t, [u64::from(t.1); 4])).collect();
                key_sort.sort(&mut large, &mut large_spare, |t| t.0.0);
                sort_by_u32_key(&mut items, &mut spare, |&(k, _)| k);
                assert_eq!(
                    items, expected,
                    "{len} items with {key_bits}-bit keys should come out in key order, equal keys in their first order"
                );
                assert!(
                    large.iter().map(|t| t.0).eq(expected.iter().copied())
                        && large.iter().all(|t| t.1 == [u64::from(t.0.1); 4]),
                    "{len} large items with {key_bits}-bit keys should come out whole, in key order, equal keys in \
                     their first order"
                );
            }
        }
    }
}
