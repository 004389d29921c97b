//! The self-check mode ([`AoiSettings::self_check_every`]): on sampled updates, every observer's
//! `InterestSet` (when the plugin keeps none, the index's list of what it sees) is recomputed by
//! brute force and the first divergence is reported (observers with view-model components, whose
//! sets depend on the past, are skipped).

use bevy_ecs::prelude::*;

use crate::{
    components::InterestSet,
    index::AoiIndex,
    settings::{AoiSettings, AoiStats},
    visibility::dist2,
    visibility::sees,
};

/// Runs the check every `self_check_every` updates (never when 0). Cost of a checked update:
/// `O(n²)` rule tests for `n` tracked entities, plus sorting each observer's expected set.
pub(crate) fn self_check(
    settings: Res<AoiSettings>,
    index: Res<AoiIndex>,
    sets: Query<&InterestSet>,
    mut stats: ResMut<AoiStats>,
    mut updates: Local<u64>,
    mut expected: Local<Vec<Entity>>,
    mut got: Local<Vec<Entity>>,
) {
    let every = settings.self_check_every;
    *updates += 1;
    if every == 0 || !(*updates).is_multiple_of(u64::from(every)) {
        return;
    }
    stats.self_checks += 1;
    let (slots, entities) = (&index.slots, &index.entities);
    // Observers with view-model components show what their past decides: not checked here.
    for (o, &observer) in slots
        .iter()
        .zip(entities)
        .filter(|(o, _)| o.is_observer() && !o.owned())
    {
        expected.clear();
        let found = (slots.iter().zip(entities))
            .filter(|&(t, &target)| target != observer && sees(&o.observer_at(o.p), &t.target()));
        expected.extend(found.map(|(_, &target)| target));
        expected.sort_unstable();
        got.clear();
        if index.keeps_sets {
            got.extend(sets.get(observer).into_iter().flat_map(InterestSet::iter));
        } else {
            // No sets: the index's list is what the messages said.
            let list = index
                .slot_of(observer)
                .map_or(&[][..], |s| &index.lists[s as usize][..]);
            got.extend(list.iter().map(|&t| entities[t as usize]));
            got.sort_unstable();
        }
        if *got == *expected {
            continue;
        }
        stats.self_check_divergences += 1;
        // The first target on which the two differ, and which way.
        let extra = got.iter().find(|t| expected.binary_search(t).is_err());
        let missing = expected.iter().find(|t| got.binary_search(t).is_err());
        let (is_extra, is_missing) = if index.keeps_sets {
            (
                "is in its InterestSet but should not be",
                "should be in its InterestSet but is not",
            )
        } else {
            (
                "was entered by the messages but should not be seen",
                "should be seen but was not entered",
            )
        };
        let (target, why) = match (extra, missing) {
            (Some(&t), _) => (t, is_extra),
            (None, Some(&t)) => (t, is_missing),
            (None, None) => (observer, "InterestSet is not sorted"),
        };
        let t = index.slot_of(target).map(|s| &slots[s as usize]);
        log::error!(
            "bevy_aoi self-check: target {target} {why} of observer {} (observer at {:?}, radius {}, \
             rules {:?}; target at {:?}, rules {:?}, squared distance {:?})",
            observer,
            o.p,
            o.radius,
            o.rules,
            t.map(|t| t.p),
            t.map(|t| t.rules),
            t.map(|t| dist2(o.p, t.p)),
        );
        // One report per checked update: the first divergence says where to look.
        return;
    }
}
