//! Integration tests: one binary, one module per concern.

mod behaviour;
mod busy;
mod callbacks;
mod churn;
mod determinism;
mod explain;
mod harness;
mod lone_walkers;
mod mixed_radii;
mod model;
mod no_sets;
mod oracle;
mod picture;
mod reasons;
mod rect;
mod reflect;
mod rules;
mod schedule;
mod self_check;
mod soak;
mod stepping;
mod transform;
mod view_model;
#[path = "../../benches/workload.rs"]
mod workload;

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicIsize, Ordering},
};

pub(crate) use harness::{Draws, Rng};

/// Bytes allocated now by this test binary (all threads).
pub(crate) fn allocated_bytes() -> isize {
    ALLOCATED.load(Ordering::Relaxed)
}

static ALLOCATED: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting the bytes it holds (for the churn test).
struct Counting;

// SAFETY: every call forwards to `System` with the same arguments; the counter is bookkeeping.
#[expect(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; this one only counts and forwards to System"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;
