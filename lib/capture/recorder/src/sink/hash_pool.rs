//! The recorder's hashing threads.
//!
//! A large blob is hashed on several cores (BLAKE3's tree, through rayon),
//! inside the application's process. Rayon's global pool has a thread per
//! core, and each idle worker spins and yields a while before it sleeps:
//! on the H200 host a 200-step PyTorch capture's burst of code objects kept
//! 16 workers busy for 37–54 ms of CPU in all, beside an application that
//! has its own pool per core. So the recorder hashes in a pool of its own,
//! of a few threads (named `hrr-hash-N`, asynchronous signals blocked like
//! the writer's), and only blobs that are hashed in parallel go to it.

use std::sync::OnceLock;

use hrr_core::BlobId;

use crate::sys;

/// Threads of the pool: at most this many, and no more than the cores.
const THREADS: usize = 4;

/// The id of `bytes`, hashed in the recorder's pool when they are hashed in
/// parallel (else on the calling thread, as when the pool cannot be made).
pub fn id_of(bytes: &[u8]) -> BlobId {
    run(bytes.len(), || BlobId::of(bytes))
}

/// `hash()`, the hash of `len` bytes, run where [`id_of`] runs it.
fn run<R: Send>(len: usize, hash: impl FnOnce() -> R + Send) -> R {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    if !BlobId::hashed_in_parallel(len) {
        return hash();
    }
    let pool = POOL.get_or_init(|| {
        rayon_core::ThreadPoolBuilder::new()
            .num_threads(THREADS.min(hrr_core::cores()))
            .thread_name(|i| format!("hrr-hash-{i}"))
            .start_handler(|_| sys::block_async_signals())
            .build()
            .ok()
    });
    match pool {
        Some(p) => p.install(hash),
        None => hash(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_blob_hashes_in_the_pool_to_the_same_id() {
        let big: Vec<u8> = (0..(9u32 << 20))
            .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
            .collect();
        let (id, on) = run(big.len(), || {
            let name = std::thread::current().name().map(str::to_owned);
            (BlobId::of(&big), name)
        });
        assert_eq!(id.0, *blake3::hash(&big).as_bytes());
        assert!(
            on.as_deref().is_some_and(|n| n.starts_with("hrr-hash-")),
            "{on:?}"
        );
        let small = run(16, || std::thread::current().name().map(str::to_owned));
        assert_ne!(
            small.as_deref().map(|n| n.starts_with("hrr-hash-")),
            Some(true)
        );
    }
}
