//! `bevy_replicon` integration (feature `replicon`): each client is sent exactly the replicated
//! entities that its observers see.
//!
//! The plugin keeps, per client, how many of the client's linked entities count each target (an
//! observer counts every target of its [`InterestSet`], and itself), and flips one bit of
//! replicon's per-client visibility when a count goes to or from zero. It reads the
//! `InterestSet`s, not the messages, so it does not depend on how often the AOI ran.

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::{entity::EntityHashMap, prelude::*};
use bevy_replicon::{
    prelude::{Replicated, ScopeLifetime, ServerSystems},
    server::visibility::{client_visibility::ClientVisibility, filters_mask::FilterBit, registry::FilterRegistry},
    shared::replication::registry::ReplicationRegistry,
};

use crate::{
    components::{InterestSet, Position},
    plugin::{AoiPlugin, AoiSystems},
};

/// Links an entity to the `bevy_replicon` client its view feeds: the client entity on the server
/// (the one with `ConnectedClient`).
///
/// With [`AoiReplicationPlugin`], a replicated entity that has a [`Position`] is sent to a client
/// exactly while at least one of the client's linked observers has it in its [`InterestSet`],
/// or is itself linked to that client (a player always has its own avatar). A client may link
/// any number of entities; each target is counted, so losing one view does not hide what another
/// still sees. Linking, relinking to another client and unlinking (removing the component or
/// despawning the entity) take effect in the same frame, before replicon sends; a link made late
/// is filled from the observer's current `InterestSet`.
///
/// When a client disconnects, despawn or unlink its observers: the counts of a client are kept
/// as long as something links to it.
///
/// ```
/// use bevy_aoi::prelude::*;
/// use bevy_ecs::prelude::*;
/// let mut world = World::new();
/// let client = world.spawn_empty().id(); // in a game: the entity with `ConnectedClient`
/// world.spawn((Position::new(0.0, 0.0), ViewRange::new(100.0), AoiClient(client)));
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "bevy_reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Hash)
)]
pub struct AoiClient(pub Entity);

/// Sends each `bevy_replicon` client only the replicated entities its observers see (feature
/// `replicon`). Add it after `RepliconPlugins` (with replicon's `server` feature) and
/// [`AoiPlugin`]; link observers to clients with [`AoiClient`].
///
/// Which entities it manages: those with both `Replicated` and a [`Position`]. Each is visible to
/// a client exactly while the client's linked observers see it or it is linked to the client
/// itself; replicated entities without a `Position` are left alone (visible to every client
/// unless something else hides them), and an entity that loses its `Position` or `Replicated`
/// is handed back visible. The visibility is one filter bit of replicon's `ClientVisibility`
/// (registered with `FilterRegistry::register_scope::<Entity>`, lifetime `WhileVisible`: the
/// client despawns what it stops seeing), set in `PostUpdate` in [`AoiSystems::Last`] (after
/// the AOI's update when it runs in `PostUpdate`) and before `ServerSystems::Send`, so a change
/// reaches the client in the frame it happens.
///
/// Costs per frame: one pass over the linked entities (their change ticks), a sorted diff of the
/// `InterestSet` of each linked observer that changed, one hash update per target entering or
/// leaving it, and a visibility update per client whose count of a target goes to or from zero.
/// A client that connects costs one pass over the managed entities; a managed entity that
/// appears costs one visibility update per client. Memory: per linked observer, a copy of its
/// set; per client, a count per target it sees. replicon's visibility lists what is *hidden*, so
/// replicon itself stores an entry per client and managed entity the client does not see.
///
/// # Panics
///
/// When the app is finished, if [`AoiPlugin`] or replicon's server (`RepliconPlugins` with the
/// `server` feature) is missing, or if the `AoiPlugin` keeps no `InterestSet`s
/// ([`AoiPlugin::interest_sets`] `false`).
///
/// ```no_run
/// use bevy_app::prelude::*;
/// use bevy_aoi::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_replicon::prelude::*;
///
/// # let mut app = App::new();
/// app.add_plugins((RepliconPlugins, AoiPlugin::default(), AoiReplicationPlugin))
///     .add_observer(spawn_player);
///
/// /// Each client that joins gets a player whose view decides what the client is sent.
/// fn spawn_player(join: On<Add<AuthorizedClient>>, mut commands: Commands) {
///     commands.spawn((
///         Replicated,
///         Position::new(0.0, 0.0),
///         ViewRange::new(100.0),
///         AoiClient(join.entity),
///     ));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AoiReplicationPlugin;

impl Plugin for AoiReplicationPlugin {
    fn build(&self, app: &mut App) {
        #[cfg(feature = "bevy_reflect")]
        app.register_type::<AoiClient>();
        app.init_resource::<ClientViews>().add_systems(
            PostUpdate,
            sync_client_visibility
                .in_set(AoiSystems::Last)
                .before(ServerSystems::Send),
        );
    }

    fn finish(&self, app: &mut App) {
        assert!(
            app.is_plugin_added::<AoiPlugin>(),
            "AoiReplicationPlugin needs AoiPlugin: add `AoiPlugin::default()` (or your configured AoiPlugin) to the app"
        );
        assert!(
            app.get_added_plugins::<AoiPlugin>().iter().all(|p| p.interest_sets),
            "AoiReplicationPlugin reads the observers' InterestSets: build AoiPlugin with `interest_sets: true` (the default)"
        );
        let world = app.world_mut();
        assert!(
            world.contains_resource::<FilterRegistry>() && world.contains_resource::<ReplicationRegistry>(),
            "AoiReplicationPlugin needs `bevy_replicon`'s server: add `RepliconPlugins` (`bevy_replicon` with the `server` feature) to the app"
        );
        let bit = world.resource_scope(|world, mut filters: Mut<FilterRegistry>| {
            world.resource_scope(|world, mut registry: Mut<ReplicationRegistry>| {
                filters.register_scope::<Entity>(world, &mut registry, ScopeLifetime::WhileVisible)
            })
        });
        world.insert_resource(AoiVisibilityBit(bit));
    }
}

/// The `ClientVisibility` bit this plugin owns.
#[derive(Resource)]
struct AoiVisibilityBit(FilterBit);

/// How many of each client's linked entities count each target.
#[derive(Default)]
struct Counts {
    /// Client → target → count (no zero counts are stored; a client with none has no entry).
    per_client: EntityHashMap<EntityHashMap<u32>>,
    /// `(client, target)` pairs whose count went to or from zero since they were last applied.
    flipped: Vec<(Entity, Entity)>,
}

impl Counts {
    fn get(&self, client: Entity, target: Entity) -> u32 {
        self.per_client
            .get(&client)
            .and_then(|targets| targets.get(&target))
            .copied()
            .unwrap_or(0)
    }

    fn add(&mut self, client: Entity, target: Entity) {
        let count = self.per_client.entry(client).or_default().entry(target).or_insert(0);
        *count += 1;
        if *count == 1 {
            self.flipped.push((client, target));
        }
    }

    fn remove(&mut self, client: Entity, target: Entity) {
        let targets = self
            .per_client
            .get_mut(&client)
            .expect("a client with a counted target should have counts");
        let count = targets.get_mut(&target).expect("a counted target should have a count");
        *count -= 1;
        if *count == 0 {
            targets.remove(&target);
            self.flipped.push((client, target));
            if targets.is_empty() {
                self.per_client.remove(&client);
            }
        }
    }
}

/// An entity linked to a client, and the targets counted for it.
struct Link {
    client: Entity,
    /// Its `InterestSet` when last synced, sorted by `Entity`.
    seen: Vec<Entity>,
}

/// The per-client counts and the links they come from.
#[derive(Resource, Default)]
struct ClientViews {
    counts: Counts,
    links: EntityHashMap<Link>,
}

impl ClientViews {
    fn link(&mut self, entity: Entity, client: Entity, seen: &[Entity]) {
        self.counts.add(client, entity);
        for &target in seen {
            self.counts.add(client, target);
        }
        self.links.insert(
            entity,
            Link {
                client,
                seen: seen.to_vec(),
            },
        );
    }

    fn unlink(&mut self, entity: Entity) {
        let Some(link) = self.links.remove(&entity) else {
            return;
        };
        self.counts.remove(link.client, entity);
        for target in link.seen {
            self.counts.remove(link.client, target);
        }
    }

    /// Counts the difference between what `entity` saw when last synced and `seen`.
    fn update_seen(&mut self, entity: Entity, seen: &[Entity]) {
        let link = self
            .links
            .get_mut(&entity)
            .expect("an entity to update should be linked");
        let counts = &mut self.counts;
        for_each_difference(&link.seen, seen, |target, entered| {
            if entered {
                counts.add(link.client, target);
            } else {
                counts.remove(link.client, target);
            }
        });
        link.seen.clear();
        link.seen.extend_from_slice(seen);
    }
}

/// Calls `f(target, true)` for each target in `new` but not `old`, `f(target, false)` for each
/// in `old` but not `new`; both sorted. `O(old + new)`.
fn for_each_difference(old: &[Entity], new: &[Entity], mut f: impl FnMut(Entity, bool)) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < new.len() {
        match old[i].cmp(&new[j]) {
            std::cmp::Ordering::Less => {
                f(old[i], false);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                f(new[j], true);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    old[i..].iter().for_each(|&target| f(target, false));
    new[j..].iter().for_each(|&target| f(target, true));
}

/// Entities whose visibility this plugin manages.
type Managed = (With<Position>, With<Replicated>);
/// Managed entities that just became managed.
type NewlyManaged = (Managed, Or<(Added<Position>, Added<Replicated>)>);
/// Linked entities whose link or view changed.
type LinkChanged = Or<(Changed<AoiClient>, Changed<InterestSet>)>;

/// Updates the counts from the linked entities, then replicon's visibility bit of every
/// (client, target) pair whose answer may have changed.
#[expect(clippy::too_many_arguments, reason = "a system's parameters")]
fn sync_client_visibility(
    bit: Res<AoiVisibilityBit>,
    mut views: ResMut<ClientViews>,
    mut unlinked: RemovedComponents<AoiClient>,
    linked: Query<(Entity, &AoiClient, Option<&InterestSet>), LinkChanged>,
    still_linked: Query<(), With<AoiClient>>,
    mut lost_position: RemovedComponents<Position>,
    mut lost_replicated: RemovedComponents<Replicated>,
    alive: Query<()>,
    managed: Query<Entity, Managed>,
    newly_managed: Query<Entity, NewlyManaged>,
    mut clients: Query<(Entity, &mut ClientVisibility)>,
    mut seen: Local<Vec<Entity>>,
) {
    let bit = bit.0;
    let views = &mut *views;
    for entity in unlinked.read() {
        if !still_linked.contains(entity) {
            views.unlink(entity);
        }
    }
    for (entity, client, set) in &linked {
        seen.clear();
        seen.extend(set.into_iter().flat_map(InterestSet::iter));
        let seen = &seen[..];
        match views.links.get(&entity).map(|link| link.client) {
            Some(linked_to) if linked_to == client.0 => views.update_seen(entity, seen),
            Some(_) => {
                views.unlink(entity);
                views.link(entity, client.0, seen);
            }
            None => views.link(entity, client.0, seen),
        }
    }

    // Handed back: no longer managed, visible to every client (unless something else hides it).
    for entity in lost_position.read().chain(lost_replicated.read()) {
        if alive.contains(entity) && !managed.contains(entity) {
            for (_, mut visibility) in &mut clients {
                visibility.set(entity, bit, true);
            }
        }
    }
    // A client that just connected sees only what it counts.
    for (client, mut visibility) in &mut clients {
        if visibility.is_added() {
            for target in &managed {
                if views.counts.get(client, target) == 0 {
                    visibility.set(target, bit, false);
                }
            }
        }
    }
    for target in &newly_managed {
        for (client, mut visibility) in &mut clients {
            visibility.set(target, bit, views.counts.get(client, target) > 0);
        }
    }
    let mut flipped = std::mem::take(&mut views.counts.flipped);
    for &(client, target) in &flipped {
        // A despawned target is skipped: replicon drops its visibility entries itself.
        if managed.contains(target)
            && let Ok((_, mut visibility)) = clients.get_mut(client)
        {
            visibility.set(target, bit, views.counts.get(client, target) > 0);
        }
    }
    flipped.clear();
    views.counts.flipped = flipped;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entities(n: u32) -> Vec<Entity> {
        (1..=n)
            .map(|i| Entity::from_raw_u32(i).expect("a small index should be a valid entity"))
            .collect()
    }

    #[test]
    fn difference_reports_each_side_once() {
        let e = entities(6);
        // Sorted by `Entity`'s own order, as `InterestSet`s are (not necessarily by index).
        let sorted = |mut v: Vec<Entity>| {
            v.sort();
            v
        };
        let (old, new) = (sorted(vec![e[0], e[1], e[3]]), sorted(vec![e[1], e[2], e[4], e[5]]));
        let mut seen = Vec::new();
        for_each_difference(&old, &new, |t, entered| seen.push((t, entered)));
        let mut expected = vec![(e[0], false), (e[2], true), (e[3], false), (e[4], true), (e[5], true)];
        expected.sort();
        assert_eq!(
            seen, expected,
            "the difference should list each target that left or entered once, in entity order"
        );
    }

    #[test]
    fn counts_flip_only_at_zero_and_forget_empty_clients() {
        let e = entities(3);
        let (client, target) = (e[0], e[1]);
        let mut counts = Counts::default();
        counts.add(client, target);
        counts.add(client, target);
        counts.remove(client, target);
        assert_eq!(counts.get(client, target), 1, "two adds and a remove should leave one");
        assert_eq!(counts.flipped, vec![(client, target)], "only the first add should flip");
        counts.remove(client, target);
        assert_eq!(counts.flipped.len(), 2, "the last remove should flip");
        assert!(
            counts.per_client.is_empty(),
            "a client with no counts should be forgotten"
        );
    }
}
