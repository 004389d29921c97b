//! The engine's pairs as one iterator over its buffers.

use smallvec::SmallVec;

use crate::scan::WHOLE_LIST;

/// `(observer, target)` slot pairs spread over several buffers, read in order, with
/// [`WHOLE_LIST`] runs expanded from `lists`; its exact length lets a batch write reserve once.
pub(crate) struct Pairs<'a> {
    parts: SmallVec<[&'a [(u32, u32)]; 17]>,
    part: usize,
    at: usize,
    lists: &'a [Vec<u32>],
    /// The run being expanded: its observer and the targets still to yield.
    run: (u32, &'a [u32]),
    left: usize,
}

impl<'a> Pairs<'a> {
    /// The pairs of `parts`, in order, `count` of them once the [`WHOLE_LIST`] runs are expanded
    /// from `lists`.
    pub(super) fn new(parts: impl Iterator<Item = &'a [(u32, u32)]>, lists: &'a [Vec<u32>], count: usize) -> Self {
        Self {
            parts: parts.collect(),
            part: 0,
            at: 0,
            lists,
            run: (0, &[]),
            left: count,
        }
    }
}

impl Iterator for Pairs<'_> {
    type Item = (u32, u32);

    #[inline]
    fn next(&mut self) -> Option<(u32, u32)> {
        loop {
            if let Some((&t, rest)) = self.run.1.split_first() {
                self.run.1 = rest;
                self.left -= 1;
                return Some((self.run.0, t));
            }
            let part = self.parts.get(self.part)?;
            let Some(&(o, t)) = part.get(self.at) else {
                self.part += 1;
                self.at = 0;
                continue;
            };
            self.at += 1;
            if t == WHOLE_LIST {
                self.run = (o, &self.lists[o as usize]);
            } else {
                self.left -= 1;
                return Some((o, t));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Pairs<'_> {}
