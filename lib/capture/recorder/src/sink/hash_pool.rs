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

//!
//! A very large blob of a synchronous copy ([`WIDE_FROM`] bytes and more)
//! is hashed by a wider pool (`hrr-hash-wide-N`, a thread per core up to
//! [`WIDE_THREADS`]) while the application's thread is blocked in that
//! call anyway: one 256 MiB blob took the 4 threads about 19 ms on the
//! H100 host, beside a copy of 5 ms. [`id_while`] hashes an H2D copy's
//! source while the copy itself runs on the calling thread.

use std::sync::OnceLock;

use hrr_core::BlobId;

use crate::sys;

/// Threads of the pool: at most this many, and no more than the cores.
const THREADS: usize = 4;

/// Threads of the wide pool: a thread per core, at most this many
/// (`benches/hash_threads.rs`).
pub const WIDE_THREADS: usize = 16;

/// Blobs from this size are hashed by the wide pool when the application's
/// thread is blocked in a synchronous call.
pub const WIDE_FROM: usize = 16 << 20;

/// The id of `bytes`, hashed in the recorder's pool when they are hashed in
/// parallel (else on the calling thread, as when the pool cannot be made).
pub fn id_of(bytes: &[u8]) -> BlobId {
    run(pool(bytes.len(), false), || BlobId::of(bytes))
}

/// [`id_of`] for a caller whose application thread is blocked in a
/// synchronous call: a very large blob goes to the wide pool.
pub fn id_of_blocked(bytes: &[u8]) -> BlobId {
    run(pool(bytes.len(), true), || BlobId::of(bytes))
}

/// Runs `call` on the calling thread while `bytes` are hashed in the pool
/// ([`id_of_blocked`]'s); returns both once both are done. `bytes` are
/// only read, and no longer once this returns. Too small to be hashed in
/// parallel, or without a pool, they are hashed after `call`.
pub fn id_while<R>(bytes: &[u8], call: impl FnOnce() -> R) -> (R, BlobId) {
    let Some(p) = pool(bytes.len(), true) else {
        let r = call();
        return (r, BlobId::of(bytes));
    };
    let mut id = None;
    // The scope's body runs here; its spawned hash in the pool; the scope
    // returns when both are done.
    let r = p.in_place_scope(|s| {
        s.spawn(|_| id = Some(BlobId::of(bytes)));
        call()
    });
    let id = id.unwrap_or_else(|| BlobId::of(bytes));
    (r, id)
}

/// The pool that hashes `len` bytes (`None`: the calling thread);
/// `blocked`: the application's thread waits in a synchronous call.
fn pool(len: usize, blocked: bool) -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    static WIDE: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    if !BlobId::hashed_in_parallel(len) {
        return None;
    }
    let cores = hrr_core::cores();
    let make = |n: usize, name: &'static str| {
        rayon_core::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(move |i| format!("{name}-{i}"))
            .start_handler(|_| sys::block_async_signals())
            .build()
            .ok()
    };
    if blocked && len >= WIDE_FROM && cores > THREADS {
        return WIDE
            .get_or_init(|| make(WIDE_THREADS.min(cores), "hrr-hash-wide"))
            .as_ref();
    }
    POOL.get_or_init(|| make(THREADS.min(cores), "hrr-hash"))
        .as_ref()
}

/// `hash()` run in `pool`, else here.
fn run<R: Send>(pool: Option<&rayon_core::ThreadPool>, hash: impl FnOnce() -> R + Send) -> R {
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
        let (id, on) = run(pool(big.len(), false), || {
            let name = std::thread::current().name().map(str::to_owned);
            (BlobId::of(&big), name)
        });
        assert_eq!(id.0, *blake3::hash(&big).as_bytes());
        assert!(
            on.as_deref().is_some_and(|n| n.starts_with("hrr-hash-")),
            "{on:?}"
        );
        let small = run(pool(16, false), || {
            std::thread::current().name().map(str::to_owned)
        });
        assert_ne!(
            small.as_deref().map(|n| n.starts_with("hrr-hash-")),
            Some(true)
        );
    }

    #[test]
    fn a_copy_runs_here_while_its_source_is_hashed() {
        let big: Vec<u8> = (0..(9u32 << 20)).map(|i| (i >> 3) as u8).collect();
        let here = std::thread::current().id();
        let (ran, id) = id_while(&big, || std::thread::current().id());
        assert_eq!(ran, here, "the call runs on the calling thread");
        assert_eq!(id.0, *blake3::hash(&big).as_bytes());
        let (_, small) = id_while(b"tiny", || ());
        assert_eq!(small, BlobId::of(b"tiny"));
        assert_eq!(id_of_blocked(&big), id);
    }
}
