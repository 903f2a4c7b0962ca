//! Recording memory pools: `pool_create`, `pool_destroy`, `pool_trim`,
//! `pool_attr`, `device_pool`, and `pool_alloc` (an allocation from a pool,
//! live device memory from then on, freed by a recorded `free`).

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

impl Recorder {
    /// Records a pool call.
    pub fn pool(&self, api: &str, ret: i32, op: PoolOp) {
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

    /// Records an allocation from `pool` ordered on `stream`.
    pub fn pool_alloc(&self, api: &str, ret: i32, ptr: u64, size: u64, pool: u64, stream: u64) {
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
