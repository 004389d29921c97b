//! Running work on the compute task pool in a fixed split, so results never depend on the
//! thread count: [`task_pool`] when the settings allow it, [`join`] for two halves, [`run_jobs`]
//! for a list of jobs.

use std::sync::Once;

use bevy_tasks::{ComputeTaskPool, TaskPool};

use crate::settings::AoiSettings;

/// Bevy's compute pool when the settings allow spreading work over it and it has a second
/// thread. The first time the pool has one thread on a machine with more CPUs, says so once in
/// the log ([`one_thread_note`]).
pub(crate) fn task_pool(settings: &AoiSettings) -> Option<&'static TaskPool> {
    let pool = if settings.parallel && cfg!(feature = "multi_threaded") {
        ComputeTaskPool::try_get().map(|p| &**p)
    } else {
        None
    };
    if let Some(pool) = pool.filter(|p| p.thread_num() == 1) {
        static NOTED: Once = Once::new();
        NOTED.call_once(|| {
            let cpus = std::thread::available_parallelism().map_or(1, usize::from);
            if let Some(note) = one_thread_note(pool.thread_num(), cpus) {
                log::info!("{note}");
            }
        });
    }
    pool.filter(|p| p.thread_num() > 1)
}

/// What to tell the user when Bevy's compute pool has `pool_threads` threads on a machine with
/// `cpus` CPUs, if anything: with `TaskPoolPlugin`'s defaults (in `MinimalPlugins` and
/// `DefaultPlugins`) a 2-CPU machine gives the IO and async compute pools one thread each and
/// the compute pool the one left, so the AOI runs on one thread there.
fn one_thread_note(pool_threads: usize, cpus: usize) -> Option<String> {
    (pool_threads == 1 && cpus > 1).then(|| {
        format!(
            "bevy_aoi: Bevy's compute pool has 1 thread on this {cpus}-CPU machine, so the AOI runs \
             on one thread; give the pool more with TaskPoolPlugin's compute min_threads (README, \
             \"Threads\")"
        )
    })
}

/// Runs `a` and `b`, at once on `pool` (`b` on the calling thread) or one after the other
/// without one; their results.
pub(crate) fn join<A: Send, B>(pool: Option<&TaskPool>, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    match pool {
        Some(pool) => {
            let (mut first, mut second) = (None, None);
            pool.scope(|sc| {
                let first = &mut first;
                sc.spawn(async move { *first = Some(a()) });
                second = Some(b());
            });
            let done = "both halves of a join should have run when its scope ended";
            (first.expect(done), second.expect(done))
        }
        None => (a(), b()),
    }
}

/// Runs every job, each as a task on `pool`, or in order on this thread without one. Jobs write
/// only to what they own, so the results do not depend on which way they ran.
pub(crate) fn run_jobs<J: Send>(pool: Option<&TaskPool>, jobs: impl IntoIterator<Item = J>, run: &(impl Fn(J) + Sync)) {
    match pool {
        Some(pool) => {
            pool.scope(|sc| {
                for job in jobs {
                    sc.spawn(async move { run(job) });
                }
            });
        }
        None => jobs.into_iter().for_each(run),
    }
}

#[cfg(test)]
mod tests {
    use super::one_thread_note;

    #[test]
    fn a_one_thread_pool_is_noted_only_where_more_cpus_are_idle() {
        let note = one_thread_note(1, 2).expect("a one-thread pool on two CPUs should be noted");
        assert!(
            note.contains("2-CPU") && note.contains("min_threads"),
            "the note should say how to fix it: {note}"
        );
        assert_eq!(one_thread_note(1, 1), None, "one thread on one CPU is all there is");
        assert_eq!(one_thread_note(2, 2), None, "a pool of two threads spreads the work");
    }
}
