//! `BlobCache`: small blobs kept after their first (hash-checked) read.
//!
//! Applications upload the same small inputs and read back the same small
//! results over and over; each blob read is an open, a read, a close and a
//! BLAKE3 pass. Only blobs up to [`MAX_CACHED`] bytes are kept, [`BUDGET`]
//! bytes in all, so replay memory stays bounded by live allocations plus the
//! largest blob plus this constant.

use std::collections::HashMap;
use std::sync::Arc;

use hrr_core::blob_store::{BlobError, BlobStore};
use hrr_core::hex::BlobId;

pub const MAX_CACHED: usize = 64 * 1024;
pub const BUDGET: usize = 32 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct BlobCache {
    map: HashMap<BlobId, Arc<[u8]>>,
    bytes: usize,
}

/// A blob's bytes, cached or read for this use only.
pub enum BlobBytes {
    Cached(Arc<[u8]>),
    Read(hrr_core::blob_store::Blob),
}

impl std::ops::Deref for BlobBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            BlobBytes::Cached(b) => b,
            BlobBytes::Read(b) => b,
        }
    }
}

impl BlobCache {
    pub fn get(&mut self, store: &BlobStore, id: &BlobId) -> Result<BlobBytes, BlobError> {
        self.get_sized(store, id, None)
    }

    /// [`BlobCache::get`] of a blob the event says is `size` bytes: a
    /// compressed one is never decoded past that ([`BlobStore::get_sized`]).
    pub fn get_sized(
        &mut self,
        store: &BlobStore,
        id: &BlobId,
        size: Option<u64>,
    ) -> Result<BlobBytes, BlobError> {
        if let Some(b) = self.map.get(id) {
            return Ok(BlobBytes::Cached(b.clone()));
        }
        let blob = match size {
            Some(n) => store.get_sized(id, n)?,
            None => store.get(id)?,
        };
        if blob.len() > MAX_CACHED {
            return Ok(BlobBytes::Read(blob));
        }
        if self.bytes + blob.len() > BUDGET {
            // Simplest bounded policy: start over. Workloads that repeat blobs
            // refill it at once; ones that don't gain nothing from eviction order.
            self.map.clear();
            self.bytes = 0;
        }
        let b: Arc<[u8]> = Arc::from(&*blob);
        self.bytes += b.len();
        self.map.insert(*id, b.clone());
        Ok(BlobBytes::Cached(b))
    }
}
