//! Change pickup: what the index learns of each changed entity. An entity observed whole
//! ([`AoiIndex::observe`]) has its view derived again from all its tracked components; one whose
//! position alone changed (most changes) has only the new position checked and written
//! ([`AoiIndex::observe_position`]). Either goes on the shortlist, with what its slot was at the
//! start of the update, if anything differs.

use std::collections::BTreeMap;

use bevy_ecs::entity::Entity;

use super::AoiIndex;
use crate::{
    components::Position,
    slot::{Change, Flag, OldView, Sight, bad_input, bad_position},
    visibility::{Rules, rect_r2},
};

impl AoiIndex {
    /// Records the current state of `entity` (`None`: no `Position` any more, or despawned).
    /// Cheap when nothing differs from what is indexed.
    pub fn observe(&mut self, entity: Entity, state: Option<(&Position, Sight, Rules, bool)>) {
        self.observe_slot(entity, self.slot_of(entity), state);
    }

    /// [`Self::observe`] with `entity`'s slot already looked up ([`Self::slot_of`], with no slot
    /// freed since: slots are freed only when an update ends).
    pub fn observe_slot(&mut self, entity: Entity, slot: Option<u32>, state: Option<(&Position, Sight, Rules, bool)>) {
        debug_assert_eq!(slot, self.slot_of(entity), "the slot given should be the entity's");
        let s = match (slot, state) {
            (Some(s), _) => s,
            (None, Some(_)) => self.alloc_slot(entity),
            (None, None) => return,
        };
        let (has_position, p, sight, rules, layered) = match state {
            Some((pos, sight, rules, layered)) => {
                (true, self.plane.project(pos.x, pos.y, pos.z), sight, rules, layered)
            }
            None => (false, [0.0; 3], Sight::Blind, Rules::default(), false),
        };
        let problem = if has_position {
            bad_input(p, sight, self.bounds.as_ref(), self.plane.dims())
        } else {
            None
        };
        let in_grid = has_position && problem.is_none();
        // `+ 0.0` turns -0.0 into 0.0, so radii order like their bits.
        let (r2, radius, rect) = match sight {
            _ if !in_grid => (-1.0, 0.0, None),
            Sight::Radius(r) => (r * r, r + 0.0, None),
            Sight::Rect(half) => {
                let half = half.map(|h| h + 0.0);
                let r2 = rect_r2(half);
                (r2, r2.sqrt(), Some(half))
            }
            Sight::Blind | Sight::Bad(_) => (-1.0, 0.0, None),
        };
        if self.owned > 0 {
            // Whatever changed (a component of the view model included), the layer looks.
            self.touches.change_more_than_moved(s);
        }
        // The view layer takes it over from this update, with what it showed until now.
        if layered && self.set_owned(s, true) {
            self.newly_owned.push((entity, self.slots[s as usize].rules.member));
        }
        let slot = &mut self.slots[s as usize];
        if let Some(why) = problem
            && !slot.warned()
        {
            slot.set_warned(true);
            log::warn!("bevy_aoi: {entity} is kept out of the AOI index because {why} (warned once per entity)");
        }
        // Everything but the position as it was: most changes are moves.
        let same_view = slot.flags_are(&[
            (Flag::HasPosition, has_position),
            (Flag::InGrid, in_grid),
            (Flag::Layered, layered),
        ]) && slot.r2.to_bits() == r2.to_bits()
            && slot.rect.map(|h| h.map(f32::to_bits)) == rect.map(|h| h.map(f32::to_bits))
            && slot.rules == rules;
        if same_view && (!in_grid || slot.p == p) {
            return;
        }
        self.shortlist(s);
        let slot = &mut self.slots[s as usize];
        if same_view {
            // A move: the position is all there is to write (the radius and the wide list are
            // as they were, as when nothing changed).
            slot.p = p;
            return;
        }
        // The view it had at the start of the tick, before its first change of view this tick.
        if !slot.view_changed() {
            slot.set_view_changed(true);
            self.old_views[s as usize] = OldView::of(slot);
        }
        // The radius count and the wide list change only with the radius or observer-ness (most
        // changes are moves: no map edit for them).
        let was = (slot.is_observer(), slot.radius.to_bits());
        let was_narrow = slot.sees_some_layers();
        slot.set_has_position(has_position);
        slot.set_in_grid(in_grid);
        slot.p = p;
        slot.r2 = r2;
        slot.radius = radius;
        slot.rect = rect;
        slot.rules = rules;
        slot.set_layered(layered);
        let is = (slot.is_observer(), slot.radius.to_bits());
        self.narrow_observers = self.narrow_observers + usize::from(slot.sees_some_layers()) - usize::from(was_narrow);
        if was != is {
            if was.0 {
                remove_radius(&mut self.radii, was.1);
                self.observers -= 1;
            }
            if is.0 {
                *self.radii.entry(is.1).or_default() += 1;
                self.observers += 1;
            }
        }
        let wide = is.0 && self.wide.is_wide(slot.radius);
        if wide != slot.wide() {
            slot.set_wide(wide);
            if wide {
                self.wide.slots.push(s);
            } else {
                self.wide.remove(s);
            }
        }
    }

    /// A new `position` for slot `s`, none of whose other tracked components changed since it
    /// was last observed: what [`Self::observe_slot`] would do with all of them, without reading
    /// the others again. Says `false`, writing nothing, where that is more than a move: the slot
    /// is not in the grid (its last position or view was bad input), or `position` is bad input.
    #[inline]
    pub fn observe_position(&mut self, s: u32, position: &Position) -> bool {
        let slot = &self.slots[s as usize];
        if !slot.in_grid() {
            return false;
        }
        // The view layer takes over a slot that gains view-model components when it is observed
        // whole, and gives it back only once it has lost them (or stopped observing).
        debug_assert!(
            !slot.layered() || slot.owned(),
            "a slot with view-model components should be owned by the view layer"
        );
        let p = self.plane.project(position.x, position.y, position.z);
        if bad_position(p, self.bounds.as_ref(), self.plane.dims()).is_some() {
            return false;
        }
        if self.owned > 0 {
            self.touches.change(s);
        }
        if self.slots[s as usize].p != p {
            self.shortlist(s);
            self.slots[s as usize].p = p;
        }
        true
    }

    /// Observes the moves gathered in [`Self::moves`] ([`Self::observe_position`]) in slot
    /// order, and calls `whole(index, entity, slot)` for each one that is more than a move (to
    /// observe it whole). Observing them in slot order rather than the ECS's (slots are in space
    /// order, the ECS's entities in spawn order) makes the pass over the slots a stream instead
    /// of a cache miss per entity, and leaves the shortlist in slot order (its sort in
    /// [`Self::apply_changes`] then finds it sorted). `O(slots / 64 + moves)`. Measured against
    /// observing each move as the ECS found it, its slot asked for eight entities ahead
    /// (`cargo bench --bench report`, three alternating runs, `PERFORMANCE.md`, stop 52): uniform
    /// 50k, one thread, 28.3-31.6 -> 27.4-28.1 ms; `sparse_huge` and 5% moving level.
    pub fn observe_moves(&mut self, mut whole: impl FnMut(&mut Self, Entity, u32)) {
        let mut moves = core::mem::take(&mut self.moves);
        moves.take_in_slot_order(|s, position| {
            if !self.observe_position(s, position) {
                whole(self, self.entities[s as usize], s);
            }
        });
        self.moves = moves;
    }

    /// Puts slot `s` on this update's shortlist, with what it was before this update's change
    /// (once: a slot already there stays as it is).
    #[inline(always)]
    fn shortlist(&mut self, s: u32) {
        let slot = &mut self.slots[s as usize];
        if !slot.on_shortlist() {
            slot.set_on_shortlist(true);
            if slot.unsettled() {
                // Its move writes a new member: nothing to settle.
                slot.set_unsettled(false);
                self.unsettled_back += 1;
            }
            self.changes.push(Change::from_slot(s, slot));
            #[cfg(debug_assertions)]
            self.touches.note_shortlisted(s);
        }
    }
}

/// Takes one observer of radius `bits` (a radius's bits) out of the multiset of radii.
fn remove_radius(radii: &mut BTreeMap<u32, u32>, bits: u32) {
    let count = radii
        .get_mut(&bits)
        .expect("an indexed observer's radius should be in the multiset");
    *count -= 1;
    if *count == 0 {
        radii.remove(&bits);
    }
}

#[cfg(test)]
mod tests {
    use bevy_ecs::entity::{EntityGeneration, EntityIndex};

    use super::*;
    use crate::config::{CellSize, IndexKind, Plane};

    #[test]
    fn a_slot_whose_view_changes_twice_in_a_tick_keeps_the_view_it_started_with() {
        let mut index = AoiIndex::new(Plane::XY, IndexKind::Grid, CellSize::Fixed(10.0), None, true);
        let index_of = EntityIndex::from_raw_u32(3).expect("a small index should be valid");
        let entity = Entity::from_index_and_generation(index_of, EntityGeneration::FIRST);
        let at = Position::new(1.0, 2.0);
        let observe = |index: &mut AoiIndex, radius: f32| {
            index.observe(entity, Some((&at, Sight::Radius(radius), Rules::default(), false)));
        };
        observe(&mut index, 5.0);
        index.apply_changes(0, 1.0, None);
        index.end_tick();
        let s = index.slot_of(entity).expect("the entity should have a slot");
        observe(&mut index, 7.0);
        observe(&mut index, 9.0);
        let old = OldView::at_start(s, &index.slots[s as usize], &index.old_views);
        assert_eq!(
            (old.in_grid, old.r2),
            (true, 25.0),
            "the view at the start of the tick should be the one before both changes"
        );
        assert_eq!(index.slots[s as usize].r2, 81.0, "the slot should hold the latest view");
        index.apply_changes(0, 1.0, None);
        index.end_tick();
        let slot = &index.slots[s as usize];
        assert!(
            !slot.view_changed(),
            "the end of the tick should clear the flag, so the next tick starts from the slot"
        );
    }
}
