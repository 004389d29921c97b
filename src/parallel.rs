//! Running work on the compute task pool in a fixed split, so results never depend on the
//! thread count: [`task_pool`] when the settings allow it, [`join`] for two halves, [`run_jobs`]
//! for a list of jobs.

use bevy_tasks::{ComputeTaskPool, TaskPool};

use crate::settings::AoiSettings;

/// Bevy's compute pool when the settings allow spreading work over it and it has a second
/// thread.
pub(crate) fn task_pool(settings: &AoiSettings) -> Option<&'static TaskPool> {
    let pool = if settings.parallel && cfg!(feature = "multi_threaded") {
        ComputeTaskPool::try_get().map(|p| &**p)
    } else {
        None
    };
    pool.filter(|p| p.thread_num() > 1)
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
