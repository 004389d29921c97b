//! The unchanged observers' side of the target scans' pairs: each pair edits the observer's list
//! in the index and its `InterestSet`. The two are separate memory and separate work, so with a
//! second thread they run at once: the lists on the calling thread, the sets on the other.

use bevy_ecs::entity::Entity;
use bevy_tasks::TaskPool;

use super::{Sets, prefetch_set};
use crate::{
    index::AoiIndex,
    lists::remove_seen,
    parallel::join,
    prefetch::{AHEAD, prefetch, prefetch_end},
    radix::sort_by_u32_key,
    scan::{TaskBuffers, WHOLE_LIST},
    slot::Slot,
    watched::WatchTracker,
};

/// One edit of an unchanged observer's `InterestSet`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SetEdit {
    /// Whose set.
    observer: Entity,
    /// The target that entered or left it.
    target: Entity,
    /// The target entered (else it left).
    entered: bool,
}

/// The buffers of the set edits, kept between updates.
#[derive(Default)]
pub(super) struct SetEdits {
    edits: Vec<SetEdit>,
    /// The radix sort's second buffer.
    spare: Vec<SetEdit>,
}

/// Empties the `InterestSet`s of the observers that `stopped` observing, and applies the target
/// scans' pairs (`found`: each task's enters, then each task's leaves, in task order) to the
/// unchanged observers: their lists in the index, with the `Watched` counts, and their
/// `InterestSet`s (except those of the observers the view layer owns, which it writes; none when
/// the plugin keeps no sets). With `pool`, the sets are edited on another thread while this one
/// edits the lists: both wait on memory scattered over the heap, one miss after another, so the
/// two overlap. Each side makes the same edits in the same order whichever way it runs.
///
/// Measured (`scenario`, 50k, two threads, alternating runs of the code before and after,
/// steady medians): 5% moving 4.70, 4.71, 4.58 -> 3.98, 4.06, 3.92 ms an update on a quiet
/// machine, medians of four noisier pairs 6.29 -> 5.51 ms, and 25% moving 23.4 -> 20.3 ms; one
/// thread unchanged (callgrind, 5% moving: 39.55 -> 39.71 M instructions, 317 k -> 302 k
/// last-level misses an update). Before, the lists were edited and then the sets, on one
/// thread (1.0-1.4 ms each with two threads, the rest of the update ~4 ms).
pub(super) fn edit_unchanged(
    found: &[TaskBuffers],
    stopped: &[u32],
    index: &mut AoiIndex,
    set_edits: &mut SetEdits,
    mut watch: Option<&mut WatchTracker>,
    sets: &mut Sets,
    pool: Option<&TaskPool>,
) {
    let (slots, entities, some_owned) = (&index.slots[..], &index.entities[..], index.owned > 0);
    let lists = &mut index.lists;
    // A second thread only when there are pairs and sets to edit (no pairs where every observer
    // changed).
    let keeps_sets = index.keeps_sets;
    let pairs: usize = found.iter().map(|s| s.enters.pairs.len() + s.leaves.len()).sum();
    join(
        pool.filter(|_| pairs > 0 && keeps_sets),
        || {
            if !keeps_sets {
                return;
            }
            // Observers that stopped observing see nothing now.
            for &o in stopped {
                if let Ok((_, mut set)) = sets.get_mut(entities[o as usize]) {
                    set.clear();
                }
            }
            edit_sets(found, slots, entities, some_owned, set_edits, sets);
        },
        || {
            // All enters first, then all leaves, each in task order: the same sequence of list
            // edits (so the same list order) whatever the number of tasks.
            let enters = found.iter().flat_map(|s| &s.enters.pairs);
            edit_lists(lists, slots, entities, some_owned, watch.as_deref_mut(), enters, true);
            let leaves = found.iter().flat_map(|s| &s.leaves);
            edit_lists(lists, slots, entities, some_owned, watch, leaves, false);
        },
    );
}

/// Applies `pairs` (all entering, or all leaving) to the unchanged observers' lists, and counts
/// them for the `Watched` marker (not for the observers the view layer owns: it counts those).
fn edit_lists<'p>(
    lists: &mut [Vec<u32>],
    slots: &[Slot],
    entities: &[Entity],
    some_owned: bool,
    mut watch: Option<&mut WatchTracker>,
    pairs: impl Iterator<Item = &'p (u32, u32)> + Clone,
    entered: bool,
) {
    // The observers are in no order and their lists scattered over the heap: each observer's
    // list record (and slot, when it is read) is asked for `2 * AHEAD` pairs ahead, then (the
    // record being cached by now) its list `AHEAD` pairs ahead (an enter writes at its end, a
    // leave searches all of it). The slot is read only while the `Watched` marker is counted:
    // otherwise it is one miss an edit for nothing.
    let reads_slot = watch.is_some();
    let mut far = pairs.clone().skip(2 * AHEAD);
    let mut near = pairs.clone().skip(AHEAD);
    for &(o, t) in pairs {
        if let Some(&(next, _)) = far.next() {
            prefetch(core::slice::from_ref(&lists[next as usize]));
            if reads_slot {
                prefetch(core::slice::from_ref(&slots[next as usize]));
            }
        }
        if let Some(&(next, _)) = near.next() {
            let list = &lists[next as usize];
            if entered { prefetch_end(list) } else { prefetch(list) }
        }
        debug_assert!(t != WHOLE_LIST, "target scans should record single pairs");
        let list = &mut lists[o as usize];
        if entered {
            list.push(t);
        } else {
            remove_seen(list, t);
        }
        if let Some(watch) = watch.as_deref_mut()
            && !(some_owned && slots[o as usize].owned())
            && watch.counts(slots[o as usize].rules.member)
        {
            let target = entities[t as usize];
            if entered { watch.inc(target) } else { watch.dec(target) }
        }
    }
}

/// Applies the pairs of `found` (enters, then leaves) to the unchanged observers' `InterestSet`s,
/// except those of the observers the view layer owns (`some_owned`: it owns some).
fn edit_sets(
    found: &[TaskBuffers],
    slots: &[Slot],
    entities: &[Entity],
    some_owned: bool,
    set_edits: &mut SetEdits,
    sets: &mut Sets,
) {
    let edits = &mut set_edits.edits;
    edits.clear();
    let enters = found.iter().flat_map(|s| &s.enters.pairs).map(|&pair| (pair, true));
    let leaves = found.iter().flat_map(|s| &s.leaves).map(|&pair| (pair, false));
    let pairs = enters.chain(leaves);
    // While the view layer owns some observers, each pair's observer slot is read (and asked
    // for `AHEAD` pairs ahead: the observers are in no order).
    let mut ahead = pairs.clone().skip(AHEAD);
    for ((o, t), entered) in pairs {
        if some_owned {
            if let Some(((next, _), _)) = ahead.next() {
                prefetch(core::slice::from_ref(&slots[next as usize]));
            }
            if slots[o as usize].owned() {
                continue;
            }
        }
        edits.push(SetEdit {
            observer: entities[o as usize],
            target: entities[t as usize],
            entered,
        });
    }
    // In the order of the observers' entities (a radix sort by entity index; an observer's
    // edits keep their order), which (unless entities were despawned and their indices reused)
    // is the order of their table rows, and each set is asked for ahead in two steps, its
    // component `2 * AHEAD` edits ahead, then (the component being cached by now) its buffer
    // `AHEAD` edits ahead if the edit will fold the set's pending edits into it (an edit is
    // otherwise kept in the component, see `InterestSet`): the sets are scattered over memory.
    // An observer's edits are of different targets, so their order does not matter. Measured:
    // 5% moving 50k, one thread, 11.5 k edits per update: 13.0 -> 11.8 ms per update (entity
    // order and the buffer asked for), then about 8.4 -> 7.6 (the record first); the replay
    // 1.97-2.50 -> 1.11-1.41 ms with the edits kept in the component (stop 26).
    sort_by_u32_key(edits, &mut set_edits.spare, |e| e.observer.index_u32());
    let mut far = edits.iter().skip(2 * AHEAD);
    let mut near = edits.iter().skip(AHEAD);
    for edit in edits.iter() {
        if let Some(next) = far.next() {
            prefetch_set(sets, next.observer);
        }
        if let Some(next) = near.next()
            && let Ok((_, set)) = sets.get(next.observer)
        {
            prefetch(set.buffer_to_fold());
        }
        if let Ok((_, mut set)) = sets.get_mut(edit.observer) {
            if edit.entered {
                set.insert(edit.target);
            } else {
                set.remove(edit.target);
            }
        }
    }
}
