//! The NCCL family (RCCL exports the same names): collectives recorded at
//! their own API, every entry of `nccl-api`'s table exported
//! ([`exports`]), forwarded to the real library.
//!
//! What NCCL does underneath is NCCL's, not the application's: each
//! wrapper forwards with the thread marked as inside a call (the guard's
//! first level), so the CUDA or HIP calls NCCL makes on the application's
//! thread are nested and not recorded; and a thread NCCL starts inside a
//! call (its proxy and service threads), or one such a thread starts, is
//! marked for good (`hrr_interpose::library_threads`), so nothing it calls
//! is recorded either. NCCL's own memory, kernels and copies therefore
//! never appear; the buffers the application passes are its own device
//! memory, recorded where it allocated them (or by `ncclMemAlloc` here).
//!
//! Recorded: communicator creation (`nccl_comm_init`, with a name of the
//! unique id's bytes that every rank's archive shares; `nccl_comm_split`;
//! `nccl_comm_init_all`), collectives and point-to-point operations
//! (`nccl_coll`), groups, finalize, destroy and abort, and
//! `ncclMemAlloc`/`ncclMemFree` as device allocations. Queries (version,
//! unique id, rank, count, device, async error, error strings, buffer
//! registration) are forwarded, marked, unrecorded.

// FFI: the exported entry points, reading the application's arguments.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod exports;

/// The name an archive gives a communicator's unique id: the first 32 hex
/// digits of the BLAKE3 hash of its bytes (the ranks of one communicator
/// pass the same bytes, so their archives agree; the bytes themselves,
/// which hold a bootstrap address, mean nothing at replay).
pub fn uid_name(bytes: &[u8]) -> String {
    let mut s = hrr_core::hex::BlobId::of(bytes).to_string();
    s.truncate(32);
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn uid_names_are_stable_and_distinct() {
        let a = super::uid_name(&[1; 128]);
        assert_eq!(a.len(), 32);
        assert_eq!(a, super::uid_name(&[1; 128]));
        assert_ne!(a, super::uid_name(&[2; 128]));
    }
}
