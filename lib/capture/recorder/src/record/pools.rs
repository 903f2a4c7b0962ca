//! Recording memory pools: `pool_create`, `pool_destroy`, `pool_trim`,
//! `pool_attr`, `device_pool`, and `pool_alloc` (an allocation from a pool,
//! live device memory from then on, freed by a recorded `free`).
//!
//! Only pools the application created are recorded as pools. A device's
//! default pool (`hipDeviceGetDefaultMemPool`) was never created, and what
//! is allocated from it is what `hipMallocAsync` allocates: recorded as a
//! plain `alloc`; settings of such a pool (attributes, trims, making it
//! current again) change nothing replay reproduces and are not recorded.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hrr_core::MemKind;
use hrr_core::event::Op;
use hrr_core::hex::Addr;

use super::recorder::Recorder;

/// A pool call, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolOp {
    /// Created (its handle).
    Create(u64),
    /// Destroyed.
    Destroy(u64),
    /// Trimmed down to `.1` bytes.
    Trim(u64, u64),
    /// Attribute `.1` set to `.2`.
    Attr(u64, u32, u64),
    /// Made device `.0`'s current pool.
    Device(i32, u64),
}

/// The pools the application created and has not destroyed, with the
/// device current when each was made.
static CREATED: Mutex<Option<HashMap<u64, u32>>> = Mutex::new(None);

/// Whether `pool` is one the application created (`note`: create or forget it).
fn created(pool: u64, note: Option<bool>) -> bool {
    let mut g = CREATED.lock().unwrap_or_else(PoisonError::into_inner);
    let set = g.get_or_insert_with(HashMap::new);
    match note {
        Some(true) => set.insert(pool, super::current_device::current()).is_none(),
        Some(false) => set.remove(&pool).is_some(),
        None => set.contains_key(&pool),
    }
}

/// Forgets the pools made on `device` (a device reset destroyed them).
pub(crate) fn forget_device(device: u32) {
    let mut g = CREATED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(set) = g.as_mut() {
        set.retain(|_, d| *d != device);
    }
}

impl Recorder {
    /// Records a pool call (not one about a pool the application did not
    /// create: see the module docs).
    pub fn pool(&self, api: &str, ret: i32, op: PoolOp) {
        let known = match op {
            PoolOp::Create(p) => ret != 0 || created(p, Some(true)),
            PoolOp::Destroy(p) => created(p, if ret == 0 { Some(false) } else { None }),
            PoolOp::Trim(p, _) | PoolOp::Attr(p, ..) | PoolOp::Device(_, p) => created(p, None),
        };
        if !known {
            return;
        }
        let op = match op {
            PoolOp::Create(p) => Op::PoolCreate {
                pool: Addr(if ret == 0 { p } else { 0 }),
            },
            PoolOp::Destroy(p) => Op::PoolDestroy { pool: Addr(p) },
            PoolOp::Trim(p, keep) => Op::PoolTrim {
                pool: Addr(p),
                size: keep,
            },
            PoolOp::Attr(p, attr, value) => Op::PoolAttr {
                pool: Addr(p),
                attr,
                value,
            },
            PoolOp::Device(device, p) => Op::DevicePool {
                device,
                pool: Addr(p),
            },
        };
        self.op(api, ret, &op);
    }

    /// Records an allocation from `pool` ordered on `stream` (from a pool
    /// the application did not create: a plain `alloc`).
    pub fn pool_alloc(&self, api: &str, ret: i32, ptr: u64, size: u64, pool: u64, stream: u64) {
        if !created(pool, None) {
            return self.alloc(api, ret, ptr, size, MemKind::Device);
        }
        let ptr = if ret == 0 { ptr } else { 0 };
        if ptr != 0 {
            self.allocs().insert(ptr, size, MemKind::Device);
        }
        let op = Op::PoolAlloc {
            ptr: Addr(ptr),
            size,
            pool: Addr(pool),
            stream: Addr(stream),
        };
        self.op(api, ret, &op);
    }
}

#[cfg(test)]
mod tests {
    use super::created;

    #[test]
    fn created_pools_are_remembered_until_destroyed() {
        let p = 0x7777_0001;
        assert!(!created(p, None), "a default pool was never created");
        assert!(created(p, Some(true)));
        assert!(created(p, None));
        assert!(
            created(p, Some(false)),
            "destroying a created pool is recorded"
        );
        assert!(!created(p, None));
    }
}
