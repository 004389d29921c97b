//! Writing the owned observers' `InterestSet`s from what they show, or editing them by their
//! messages: one at a time, or all those an update left to write at once on the compute pool.

use super::{Left, Observers, Owned, Pass, ViewLayer};
use crate::components::InterestSet;

/// [`ViewLayer::write_at`] of an entity index whose set is not written at once.
pub(super) const NOT_WRITTEN: u32 = u32::MAX;

impl ViewLayer {
    /// Writes the sets the passes left to write or edit (on the compute pool: one pass over the
    /// components, each picked by its entity's index) when they are at least a quarter of the
    /// `observers`; the serial end then has only the others left. The sets are the observers'
    /// own, so the order they are written in changes nothing. Measured (`scenario`, 10k, every
    /// observer with the feature, two threads, four alternating runs, medians): uniform,
    /// hysteresis 15.9 -> 14.7 ms, tiers 16.7 -> 15.5, budget 11.7 -> 10.3; 5% moving with tiers
    /// 5.8 -> 5.1 (the serial end was about 3 ms of each uniform update).
    pub(super) fn write_sets_at_once(&mut self, owned: &mut [Owned], observers: usize, components: &mut Observers) {
        let writes = owned.iter().filter(|st| writes_set(st.left));
        if writes.count() * 4 < observers {
            return;
        }
        for (k, st) in owned.iter().enumerate() {
            if writes_set(st.left) {
                let i = st.observer.index_u32() as usize;
                if self.write_at.len() <= i {
                    self.write_at.resize(i + 1, NOT_WRITTEN);
                }
                self.write_at[i] = k as u32;
            }
        }
        let (write_at, shown, passes) = (&self.write_at, &*owned, &self.passes);
        components.par_iter_mut().for_each(|(.., mut set, entity)| {
            let at = write_at.get(entity.index_u32() as usize).copied();
            let Some(st) = at.and_then(|k| shown.get(k as usize)) else {
                return;
            };
            if st.observer == entity {
                write_left(&mut set, st, st.left, passes);
            }
        });
        for st in owned.iter_mut() {
            if writes_set(st.left) {
                self.write_at[st.observer.index_u32() as usize] = NOT_WRITTEN;
                st.left = Left::Nothing;
            }
        }
    }
}

/// Whether `left` writes or edits a set.
fn writes_set(left: Left) -> bool {
    matches!(left, Left::Write { .. } | Left::Edit { .. })
}

/// Writes or edits owned observer `st`'s `set` as `left` says (nothing for other values), the
/// edits' messages from `passes`.
pub(super) fn write_left(set: &mut InterestSet, st: &Owned, left: Left, passes: &[Pass]) {
    match left {
        Left::Write { tiered } => assign_shown(set, st, tiered),
        Left::Edit { task, enters, leaves } => edit_set(set, &passes[task as usize], enters, leaves),
        Left::Nothing | Left::Stop | Left::HandBack(_) => {}
    }
}

/// Edits `set` by the enters and the leaves in ranges `enters` and `leaves` of `pass`'s messages.
pub(super) fn edit_set(set: &mut InterestSet, pass: &Pass, enters: [u32; 2], leaves: [u32; 2]) {
    let range = |[from, to]: [u32; 2]| from as usize..to as usize;
    pass.enters[range(enters)].iter().for_each(|e| set.insert(e.target));
    pass.leaves[range(leaves)].iter().for_each(|l| set.remove(l.target));
}

/// Makes `set` what owned observer `st` shows (tiers kept when `tiered`).
pub(super) fn assign_shown(set: &mut InterestSet, st: &Owned, tiered: bool) {
    let shown = st.shown.iter().map(|sn| (sn.target, sn.tier));
    set.assign(shown, tiered, st.waiting);
}
