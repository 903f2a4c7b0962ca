//! The collective API of NCCL and RCCL, declared once: the C types
//! ([`types`]), the signature table ([`nccl_fn!`], [`nccl_fns!`], in the
//! `api-table` crate's shape: [`fns`]`::NAME` each entry's C function type,
//! [`args`]`::NAME` its arguments as a struct), the collectives by name
//! ([`Coll`]), and a loader with a safe wrapper ([`loader::Nccl`]) through
//! which replay issues them.
//!
//! Three crates speak this API: the capture library (exports and forwards
//! every entry of the table), the replay engine (loads the real library),
//! and hrr's stand-in library for the CPU runtime (implements it).

#![deny(unsafe_code)]

mod table;
pub mod types;

// FFI: a loaded library's entry points, called.
#[allow(unsafe_code)]
pub mod loader;

/// `fns::NAME`: each table entry's `unsafe extern "C" fn` type.
// Each item is the header's entry point, documented there.
#[allow(missing_docs)]
pub mod fns {
    use crate::types::*;
    crate::nccl_fns!(
        api_table::for_each,
        [crate::nccl_fn, api_table::fn_type, []]
    );
}

/// `args::NAME`: each table entry's arguments as a struct (one public field
/// per parameter), implementing [`api_table::Entry`].
// Each item is the header's entry point, documented there.
#[allow(unsafe_code, missing_docs)]
pub mod args {
    use crate::types::*;
    crate::nccl_fns!(
        api_table::for_each,
        [crate::nccl_fn, api_table::entry_struct, []]
    );
}

/// A collective or point-to-point operation, as the archive names it
/// (`nccl_coll`'s `coll`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    /// `ncclAllReduce`.
    AllReduce,
    /// `ncclBroadcast` (and `ncclBcast`, in place).
    Broadcast,
    /// `ncclReduce`.
    Reduce,
    /// `ncclAllGather` (`count` per rank).
    AllGather,
    /// `ncclReduceScatter` (`count` per rank).
    ReduceScatter,
    /// `ncclSend`.
    Send,
    /// `ncclRecv`.
    Recv,
}

impl Coll {
    /// Every operation.
    pub const ALL: [Coll; 7] = [
        Coll::AllReduce,
        Coll::Broadcast,
        Coll::Reduce,
        Coll::AllGather,
        Coll::ReduceScatter,
        Coll::Send,
        Coll::Recv,
    ];

    /// Its name in an archive.
    pub fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "all_reduce",
            Coll::Broadcast => "broadcast",
            Coll::Reduce => "reduce",
            Coll::AllGather => "all_gather",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::Send => "send",
            Coll::Recv => "recv",
        }
    }

    /// The operation named `name` in an archive.
    pub fn from_name(name: &str) -> Option<Coll> {
        Coll::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The entry point that issues it.
    pub fn api(self) -> &'static str {
        match self {
            Coll::AllReduce => "ncclAllReduce",
            Coll::Broadcast => "ncclBroadcast",
            Coll::Reduce => "ncclReduce",
            Coll::AllGather => "ncclAllGather",
            Coll::ReduceScatter => "ncclReduceScatter",
            Coll::Send => "ncclSend",
            Coll::Recv => "ncclRecv",
        }
    }

    /// Whether it takes a reduction operator.
    pub fn reduces(self) -> bool {
        matches!(self, Coll::AllReduce | Coll::Reduce | Coll::ReduceScatter)
    }
}

#[cfg(test)]
mod tests {
    use super::Coll;

    #[test]
    fn names_round_trip() {
        for c in Coll::ALL {
            assert_eq!(Coll::from_name(c.name()), Some(c));
        }
        assert_eq!(Coll::from_name("all_to_all"), None);
    }
}
