//! `libhrr_nccl_cpu.so`: the NCCL/RCCL API (`nccl-api`'s table) for hrr's
//! CPU runtime, so that programs using collectives run, are captured and
//! replay on any machine.
//!
//! It is real, not a mock: a collective reads every rank's data and writes
//! the reduced, gathered or broadcast result. It works as the real
//! libraries do where the capture can see it:
//!
//! - it calls the HIP runtime through the HIP API ([`hip`]: resolved in
//!   the process's global scope, so under `hrr-cap` through the capture
//!   library, as a real RCCL's calls are), from the application's thread
//!   and from a *proxy thread* of each communicator, which does the
//!   collectives' copies;
//! - ranks are processes (or one process) of one machine; they exchange
//!   through files in a directory that the unique id names ([`exchange`]);
//! - groups (`ncclGroupStart`/`End`) defer the operations to the group's
//!   end, where sends are made before receives.
//!
//! - `ncclCommSplit` gathers every rank's color and key through the
//!   parent's exchange; `ncclCommInitAll` makes one rank per device of
//!   this process, whose operations meet in a group.
//!
//! Limits: operators are the built-in ones (sum, prod, max, min, avg; no
//! `ncclRedOpCreatePreMulSum`); fp8 types are moved, not reduced.

#![deny(unsafe_code)]

pub mod comm;
pub mod exchange;
// FFI: the HIP runtime's entry points, called.
#[allow(unsafe_code)]
pub mod hip;
pub mod reduce;

// FFI: the exported C entry points, reading and writing the caller's memory.
#[allow(unsafe_code)]
mod exports;
