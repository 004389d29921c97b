//! The set's merges against a `BTreeSet`, with seeded random cases.

use std::collections::BTreeSet;

use bevy_ecs::entity::{EntityGeneration, EntityIndex};

use super::*;
use crate::test_draws::Draws;

#[test]
fn merge_targets_gives_the_sorted_set_after_the_changes_few_or_many() {
    let mut draws = Draws::new(5);
    let mut next = |n: u64| draws.below(n);
    // Some entities share an index with another generation: the order is on all the bits.
    let entity = |i: u64| {
        let index = EntityIndex::from_raw_u32(i as u32 % 40).expect("a small index should be valid");
        Entity::from_index_and_generation(index, EntityGeneration::FIRST.after_versions(i as u32 / 40))
    };
    for round in 0..2000 {
        let before: BTreeSet<u64> = (0..next(30)).map(|_| next(80)).collect();
        let changes = if round % 2 == 0 { next(9) } else { 9 + next(30) };
        let (mut enters, mut leaves) = (Vec::new(), Vec::new());
        let mut want = before.clone();
        for _ in 0..changes {
            let i = next(80);
            let new = !enters.contains(&entity(i)) && !leaves.contains(&entity(i));
            if new && before.contains(&i) {
                leaves.push(entity(i));
                want.remove(&i);
            } else if new {
                enters.push(entity(i));
                want.insert(i);
            }
        }
        let mut targets: Vec<Entity> = before.iter().map(|&i| entity(i)).collect();
        targets.sort_unstable();
        merge_targets(&mut targets, &mut enters, &mut leaves);
        let mut want: Vec<Entity> = want.into_iter().map(entity).collect();
        want.sort_unstable();
        assert_eq!(
            targets, want,
            "round {round}: the buffer should be the old set minus the leaves plus the enters, sorted"
        );
    }
}

#[test]
fn replace_target_removes_the_old_and_inserts_the_new_wherever_they_are() {
    let mut draws = Draws::new(6);
    let mut next = |n: u64| draws.below(n);
    let entity = |i: u64| Entity::from_index(EntityIndex::from_raw_u32(i as u32).expect("a small index"));
    for round in 0..2000 {
        let before: BTreeSet<u64> = (0..next(20)).map(|_| next(40)).collect();
        // Either may be in the buffer or not, and they may be the same target.
        let (old, new) = (next(40), next(40));
        let mut want = before.clone();
        want.remove(&old);
        want.insert(new);
        let mut targets: Vec<Entity> = before.iter().map(|&i| entity(i)).collect();
        targets.sort_unstable();
        replace_target(&mut targets, entity(old), entity(new));
        let mut want: Vec<Entity> = want.into_iter().map(entity).collect();
        want.sort_unstable();
        assert_eq!(
            targets, want,
            "round {round}: replacing {old} by {new} should remove the one and insert the other, sorted"
        );
    }
}
