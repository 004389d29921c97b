//! Bevy's `ComputeTaskPool` for the bench report and `examples/scenario.rs`: a number of
//! threads, each optionally pinned to a CPU of its own.
//!
//! Why pin: on the 2-vCPU VM of `PERFORMANCE.md` (stop 53), after the process had been idle
//! for a while (a sleep between updates, or the report's baselines running on the main thread),
//! Linux woke the pool's second thread on the CPU where the first was busy and left the two
//! sharing it for up to 20 ms while the other CPU stayed idle: an update's jobs ran one after
//! the other at half speed. Pinned, each thread runs where it was put.

use std::sync::atomic::{AtomicUsize, Ordering};

use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};

/// Starts the `ComputeTaskPool` with `threads` threads (call it before the first app is built;
/// a pool already started is left as it is). With `pin`, the `k`-th thread started runs only on
/// the `k`-th CPU this process may use (modulo their number); where that cannot be done (not
/// Linux, or the call fails) each thread says so on stderr and runs unpinned.
pub fn start_compute_pool(threads: usize, pin: bool) {
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    ComputeTaskPool::get_or_init(|| {
        let builder = TaskPoolBuilder::new().num_threads(threads);
        if !pin {
            return builder.build();
        }
        builder
            .on_thread_spawn(|| {
                let k = STARTED.fetch_add(1, Ordering::Relaxed);
                if let Err(why) = pin_this_thread(k) {
                    eprintln!("warning: compute thread {k} is not pinned: {why}");
                }
            })
            .build()
    });
}

/// Pins the calling thread to the `k`-th CPU of those it may run on.
#[cfg(target_os = "linux")]
fn pin_this_thread(k: usize) -> Result<(), String> {
    let size = size_of::<libc::cpu_set_t>();
    #[expect(
        unsafe_code,
        reason = "sched_getaffinity and sched_setaffinity are C calls; the benches pin their \
                  compute threads with them (libc is a dev-dependency only)"
    )]
    // SAFETY: `cpu_set_t` is a plain bit array, valid when zeroed; both calls read or write
    // exactly `size` bytes of the set they are given, and 0 names the calling thread.
    unsafe {
        let mut allowed: libc::cpu_set_t = core::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut allowed) != 0 {
            return Err(format!("sched_getaffinity failed: {}", std::io::Error::last_os_error()));
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &allowed))
            .collect();
        let Some(&cpu) = cpus.get(k % cpus.len().max(1)) else {
            return Err("the process may run on no CPU".into());
        };
        let mut one: libc::cpu_set_t = core::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        if libc::sched_setaffinity(0, size, &one) != 0 {
            return Err(format!("sched_setaffinity failed: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Pinning is only done on Linux.
#[cfg(not(target_os = "linux"))]
fn pin_this_thread(_k: usize) -> Result<(), String> {
    Err("pinning is only done on Linux".into())
}
