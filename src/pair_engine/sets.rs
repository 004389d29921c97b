//! Visiting the changed observers' `InterestSet` components: their buffers are taken out before
//! the scans (which edit them as plain vectors) and put back after.

use bevy_ecs::entity::Entity;

use super::Sets;
use super::prefetch_set;
use crate::{
    components::InterestSet,
    prefetch::{AHEAD, prefetch_record},
    radix::sort_by_u32_key,
};

/// [`SetVisits::visit_at`] of an entity index whose set is not visited.
const NOT_VISITED: u32 = u32::MAX;

/// The sets to visit and the visit's buffers, kept between updates.
#[derive(Default)]
pub(crate) struct SetVisits {
    /// The observers whose sets are visited, each with its buffer's place (sorted by entity when
    /// the sets are looked up one by one); and the radix sort's second buffer.
    visits: Vec<(Entity, u32)>,
    spare: Vec<(Entity, u32)>,
    /// By entity index: a visited observer's buffer place, else [`NOT_VISITED`] (a visit in one
    /// pass over the components).
    visit_at: Vec<u32>,
}

impl SetVisits {
    /// Lists the sets to visit: each observer with the place of its buffer.
    pub fn collect(&mut self, observers: impl Iterator<Item = (Entity, u32)>) {
        self.visits.clear();
        self.visits.extend(observers);
    }

    /// Calls `visit` with the `InterestSet` of each collected observer and its buffer in
    /// `buffers`; `observers` is how many observers there are in all.
    ///
    /// When they are a good share of the sets (at least a quarter of the observers), in one pass
    /// over the components in their own order, picking the wanted ones by entity index: no
    /// lookup per set and no sort (uniform 50k, four alternating `scenario` runs: one thread
    /// ~42.3 → ~41.4 ms an update, two ~25.8 → ~25.0; uniform 10k 1.7% fewer instructions).
    /// The buffers, in group order, are met there in no order: each is asked for a few entities
    /// ahead (stop 79, uniform 50k, `scenario --pin-threads`: perf put the pass's samples on the
    /// load of each buffer's place; with the hint, one thread, the pass's samples about a fifth
    /// fewer, and on two threads the take and put running alone 7.5 and 5.7% of the wall time
    /// before, 4.2 and 4.1% after; twelve alternating rounds, medians 32.1 → 30.4 ms an update;
    /// uniform 10k, whose places fit the second-level cache, pays the hint's instructions:
    /// callgrind 44.19 → 44.76 M an update, not timed).
    /// Otherwise in the order of the observers' entities (the order of the entities' records and
    /// table rows in memory, unless entities were despawned and their indices reused), each set
    /// looked up and asked for a few ahead.
    pub fn visit(
        &mut self,
        sets: &mut Sets,
        observers: usize,
        buffers: &mut [Vec<Entity>],
        visit: impl Fn(&mut InterestSet, &mut Vec<Entity>),
    ) {
        if self.visits.len() * 4 >= observers {
            for &(observer, at) in &self.visits {
                let i = observer.index_u32() as usize;
                if self.visit_at.len() <= i {
                    self.visit_at.resize(i + 1, NOT_VISITED);
                }
                self.visit_at[i] = at;
            }
            for (entity, mut set) in sets.iter_mut() {
                let i = entity.index_u32() as usize;
                // The buffers are in group order, met here in the components' order: the place
                // of the entity `AHEAD` indices on is asked for (a hint: the components are in
                // entity order unless indices were reused).
                if let Some(&ahead) = self.visit_at.get(i + AHEAD)
                    && ahead != NOT_VISITED
                {
                    prefetch_record(&buffers[ahead as usize]);
                }
                let at = self.visit_at.get(i).copied();
                if let Some(at) = at.filter(|&at| at != NOT_VISITED) {
                    visit(&mut set, &mut buffers[at as usize]);
                }
            }
            for &(observer, _) in &self.visits {
                self.visit_at[observer.index_u32() as usize] = NOT_VISITED;
            }
            return;
        }
        sort_by_u32_key(&mut self.visits, &mut self.spare, |v| v.0.index_u32());
        let mut ahead = self.visits.iter().skip(AHEAD);
        for &(observer, at) in &self.visits {
            if let Some(&(next, _)) = ahead.next() {
                prefetch_set(sets, next);
            }
            if let Ok((_, mut set)) = sets.get_mut(observer) {
                visit(&mut set, &mut buffers[at as usize]);
            }
        }
    }
}
