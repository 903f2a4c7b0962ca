//! Memory pools: `pool_create`, `pool_destroy`, `pool_trim`, `pool_attr`,
//! `device_pool` and `pool_alloc`. Recorded pools map to the device's own
//! ([`Device::pool_create`](crate::device::Device::pool_create)); a device
//! without pools answers `None`, and allocations from such a pool are
//! plain allocations (placed at their recorded address where possible).
//! A pool allocation is entered in the address space like any other, so a
//! pool that hands the same address out again (alloc, free, alloc) simply
//! replaces the freed entry: translation follows the live one.

use std::collections::{HashMap, HashSet};

use super::Replayer;
use crate::alloc_map::Alloc;
use crate::device::PoolCall;
use crate::engine::error::{EventFailure, ReplayError};
use hrr_core::event::{Event, MemKind};
use hrr_core::hex::Addr;

/// The replay's pools and what came from them.
#[derive(Default)]
pub(super) struct Pools {
    /// Recorded pool → the device's pool (`None`: the device has none).
    pools: HashMap<u64, Option<u64>>,
    /// Recorded bases of live allocations made from a real device pool.
    from_pool: HashSet<u64>,
}

impl Pools {
    /// Whether the allocation at recorded `base` came from a device pool.
    pub(super) fn take_alloc(&mut self, base: u64) -> bool {
        self.from_pool.remove(&base)
    }
}

impl Replayer<'_> {
    fn pool(&self, e: &Event, pool: Addr) -> Result<Option<u64>, ReplayError> {
        self.pools
            .pools
            .get(&pool.0)
            .copied()
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownPool(pool)))
    }

    pub(super) fn pool_create(&mut self, e: &Event, pool: Addr) -> Result<(), ReplayError> {
        let live = self.dev.pool_create().map_err(Self::dev_err(e))?;
        self.pools.pools.insert(pool.0, live);
        self.owners.made(super::Owned::Pool, pool.0, e.dev);
        Ok(())
    }

    pub(super) fn pool_destroy(&mut self, e: &Event, pool: Addr) -> Result<(), ReplayError> {
        self.owners.gone(super::Owned::Pool, pool.0);
        if let Some(Some(live)) = self.pools.pools.remove(&pool.0) {
            self.dev
                .pool_call(PoolCall::Destroy(live))
                .map_err(Self::dev_err(e))?;
        }
        Ok(())
    }

    /// `call` on the device's pool for recorded `pool` (`pool_trim`,
    /// `pool_attr`, `device_pool`); nothing where the device has no pools.
    pub(super) fn call_pool(
        &mut self,
        e: &Event,
        pool: Addr,
        call: impl FnOnce(u64) -> PoolCall,
    ) -> Result<(), ReplayError> {
        if let Some(live) = self.pool(e, pool)? {
            self.dev.pool_call(call(live)).map_err(Self::dev_err(e))?;
        }
        Ok(())
    }

    pub(super) fn pool_alloc(
        &mut self,
        e: &Event,
        (ptr, size): (Addr, u64),
        pool: Addr,
        stream: Addr,
    ) -> Result<(), ReplayError> {
        let live_pool = self.pool(e, pool)?;
        let stream = self.stream(e, Some(stream))?.unwrap_or(0);
        let live = match live_pool {
            Some(p) => self
                .dev
                .pool_alloc(p, size, stream)
                .map_err(Self::dev_err(e))?,
            None => self
                .space
                .allocate(self.dev, ptr.0, size, MemKind::Device, || {
                    format!("event {} ({}): {:#x}+{size}", e.seq, e.api, ptr.0)
                })
                .map_err(Self::dev_err(e))?,
        };
        let alloc = Alloc {
            base: ptr.0,
            size,
            mem: MemKind::Device,
            live,
            materialised: false,
        };
        self.space
            .allocs
            .insert(alloc)
            .map_err(|err| Self::fatal(e, err))?;
        if live_pool.is_some() {
            self.pools.from_pool.insert(ptr.0);
        }
        self.owners.made(super::Owned::Alloc, ptr.0, e.dev);
        Ok(())
    }

    /// Destroys the pools still alive (after their allocations were freed).
    pub(super) fn pools_teardown(&mut self) {
        for (_, live) in self.pools.pools.drain() {
            if let Some(p) = live {
                let _ = self.dev.pool_call(PoolCall::Destroy(p));
            }
        }
        self.pools.from_pool.clear();
    }
}

#[cfg(test)]
mod tests {

    use crate::engine::error::ReplayError;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::summary::ReplaySummary;

    use hrr_core::event::Op;
    use hrr_core::hex::Addr;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const X: u64 = 0x7f00_0000_0000;
    const POOL: u64 = 0x5500;

    fn run(b: ArchiveBuilder, dev: &mut MemDevice) -> (ReplaySummary, Option<ReplayError>) {
        super::super::replay_built(b, dev)
    }

    fn pool_alloc(b: ArchiveBuilder, ptr: u64, size: u64) -> ArchiveBuilder {
        b.event(
            "hipMallocFromPoolAsync",
            Op::PoolAlloc {
                ptr: Addr(ptr),
                size,
                pool: Addr(POOL),
                stream: Addr(0),
            },
            vec![],
        )
    }

    /// A pool that hands the same address out twice (alloc, free, alloc):
    /// each use translates to the allocation live at that moment, on a
    /// device with pools (which reuses the block too) and without.
    fn reuse() -> ArchiveBuilder {
        let b = ArchiveBuilder::new(Platform::Cpu).event(
            "hipMemPoolCreate",
            Op::PoolCreate { pool: Addr(POOL) },
            vec![],
        );
        let b = b.event(
            "hipMemPoolSetAttribute",
            Op::PoolAttr {
                pool: Addr(POOL),
                attr: 4,
                value: u64::MAX,
            },
            vec![],
        );
        let b = pool_alloc(b, X, 256)
            .h2d(X, &[1; 256])
            .d2h(X, &[1; 256])
            .free(X);
        let b = pool_alloc(b, X, 256)
            .h2d(X + 16, &[2; 16])
            .d2h(X + 16, &[2; 16]);
        let b = pool_alloc(b, X + 4096, 64).d2h(X + 4096, &[0; 64]);
        b.free(X)
            .free(X + 4096)
            .event(
                "hipMemPoolTrimTo",
                Op::PoolTrim {
                    pool: Addr(POOL),
                    size: 0,
                },
                vec![],
            )
            .event(
                "hipMemPoolDestroy",
                Op::PoolDestroy { pool: Addr(POOL) },
                vec![],
            )
    }

    #[test]
    fn reused_pool_addresses_translate_to_the_live_allocation() {
        for has_pools in [true, false] {
            let mut dev = MemDevice::new(false);
            dev.has_pools = has_pools;
            let (s, e) = run(reuse(), &mut dev);
            assert!(e.is_none(), "{e:?}");
            assert_eq!((s.d2h_exact, s.d2h_fail), (3, 0), "pools: {has_pools}");
            assert!(
                dev.pool_allocs.is_empty(),
                "every pool allocation given back"
            );
        }
    }

    #[test]
    fn a_pool_never_created_is_fatal() {
        let b = pool_alloc(ArchiveBuilder::new(Platform::Cpu), X, 64);
        let (_, e) = run(b, &mut MemDevice::new(false));
        let msg = hrr_core::error_chain::chain(&e.expect("fatal")).to_string();
        assert!(
            msg.contains("memory pool 0x5500 was never created"),
            "{msg}"
        );
    }
}
