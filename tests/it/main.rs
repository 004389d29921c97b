//! Integration tests: one binary, one module per concern.

mod behaviour;
mod callbacks;
mod determinism;
mod explain;
mod harness;
mod mixed_radii;
mod oracle;
mod picture;
mod reflect;
mod rules;
mod schedule;
mod self_check;
mod soak;
mod stepping;
mod transform;
#[path = "../../benches/workload.rs"]
mod workload;
