//! Which observers the view layer must look at this update ([`Touches`]).

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Per slot, whether something the view layer must look at happened to it as an observer this
/// update: it changed (it or one of its components), or a target it sees before or after the
/// update changed. An owned observer nothing touched, with nothing lingering or waiting, would
/// come out of the layer's pass unchanged, so the layer skips it: a world where few entities
/// move costs the layer only the observers around them.
///
/// Marked only while the layer owns some slot ([`AoiIndex::owned`](super::AoiIndex)); the scans
/// mark from several tasks at once (relaxed atomic stores of one value: the outcome is a set,
/// whatever the order).
#[derive(Default)]
pub(crate) struct Touches {
    /// Per slot: the update it was last touched in.
    marks: Vec<AtomicU32>,
    /// This update's number (0 is never one, so fresh marks never match).
    epoch: u32,
    /// An `Always`-visible target stepped: its tier may change for any observer of its instance.
    everyone: AtomicBool,
    /// Per slot, one bit: whether change pickup observed it this update (it or one of its
    /// components changed, or it was despawned). A pair with neither end changed is judged as it
    /// was last update, so the layer's pass over an owned observer that did not change looks only
    /// at its changed targets. 1 bit a slot, so that it stays in the first-level cache (6 KB at
    /// 50k slots).
    changed: Vec<u64>,
    /// Whether any bit of `changed` is set.
    any_changed: bool,
}

impl Touches {
    /// Starts an update: no slot is touched.
    pub fn begin(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m.get_mut() = 0);
            self.epoch = 1;
        }
        *self.everyone.get_mut() = false;
        if self.any_changed {
            self.changed.iter_mut().for_each(|bits| *bits = 0);
            self.any_changed = false;
        }
    }

    /// Makes room for slot numbers below `slots`.
    pub fn grow(&mut self, slots: usize) {
        if self.marks.len() < slots {
            self.marks.resize_with(slots, AtomicU32::default);
            self.changed.resize(slots.div_ceil(64), 0);
        }
    }

    /// Marks observer slot `o` as touched.
    #[inline]
    pub fn touch(&self, o: u32) {
        self.marks[o as usize].store(self.epoch, Ordering::Relaxed);
    }

    /// Marks slot `s` as changed this update, and touched as an observer.
    #[inline]
    pub fn change(&mut self, s: u32) {
        self.touch(s);
        self.changed[s as usize / 64] |= 1 << (s % 64);
        self.any_changed = true;
    }

    /// Whether slot `s` was marked by [`Self::change`] this update.
    #[inline]
    pub fn is_changed(&self, s: u32) -> bool {
        self.changed[s as usize / 64] & (1 << (s % 64)) != 0
    }

    /// Marks every observer as touched.
    pub fn touch_everyone(&self) {
        self.everyone.store(true, Ordering::Relaxed);
    }

    /// Whether observer slot `o` was touched this update.
    pub fn is_touched(&self, o: u32) -> bool {
        self.everyone.load(Ordering::Relaxed) || self.marks[o as usize].load(Ordering::Relaxed) == self.epoch
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.marks.capacity() * size_of::<AtomicU32>() + self.changed.capacity() * size_of::<u64>()
    }
}
