//! `libhrr_hip_cpu.so`: a CPU implementation of the HIP runtime subset hrr needs
//! (plus a minimal HSA memory-pool API). Memory operations really copy and kernels
//! really run, on CPU threads; see DESIGN.md §2.
//!
//! * Device memory: one large `MAP_NORESERVE` reservation carved first-fit
//!   ([`range_alloc`]); live allocations in an ordered map ([`addr_map`]), so a bad
//!   device operand is `hipErrorInvalidValue`, never a crash.
//! * Streams: in-order queues with a worker thread each; the null stream is the
//!   legacy synchronising stream ([`runtime`]).
//! * Kernels: CPU code objects (ELF + `.hrr.kernels` JSON, see
//!   `tests/workloads/include/hrr_cpu_kernel.h`), one call per block on a thread
//!   pool ([`exec`]); a kernel's memory fault is a launch error
//!   (`hipErrorIllegalAddress`), not a signal that kills the process ([`fault`]).
//!
//! Unsafe code lives in the export modules ([`hip_api`], [`hsa_api`]) and the
//! few system-level modules (mmap, dlopen, kernel calls); the allocator and
//! address map forbid it, and code objects are parsed by (safe) `hrr-codeobj`.
//! * Devices: `HRR_CPU_DEVICES=N` of them (default 1), all of whose memory is
//!   the one reservation; an allocation or stream belongs to the device
//!   current at its creation ([`devices`]).
//!
//! Set `HRR_CPU_LOG=1` for diagnostics, `HRR_CPU_DEVICE_MEMORY=16G` to size the
//! reservation (shared by the devices), `HRR_CPU_THREADS=N` for the pool.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod addr_map;
pub mod devices;
pub mod error;
pub mod exec;
pub mod fault;
pub mod ffi;
pub mod graph;
// The HIP C API: every export is documented by hip_runtime_api.h, whose
// names it keeps (the module is being rewritten; its own docs come with that).
#[allow(missing_docs)]
pub mod hip_api;
// The HSA C API subset: each export keeps its name from hsa.h and
// hsa_ext_amd.h, which document it.
#[allow(missing_docs)]
pub mod hsa_api;
pub mod memory;
pub mod module;
pub mod range_alloc;
pub mod runtime;
pub mod stream;
