//! End-to-end tests: the real binaries (hrr-cap, hrr-sidecar, hrr-play,
//! hrr-diff) over real HIP C workloads on the CPU runtime, as the shell
//! pipelines of DESIGN.md §1.
//!
//! One test binary; the harness (`hrr_tests`) builds the tools once per
//! process and compiles the workloads once per process.

mod collectives;
mod complete_claims;
mod compression;
mod copies;
mod device_reset;
mod devices;
mod direct;
mod durability;
mod engine;
mod extract;
mod generate;
mod graphs;
mod hip_backend;
mod host_memory;
mod hostile;
mod hostile_input;
mod hsa_regions;
mod jobs;
mod nondeterminism;
mod partial;
mod placement;
mod programs_api;
mod replay_diff;
mod seed;
mod self_profile;
mod unrecorded;
mod windows;
mod workloads;
