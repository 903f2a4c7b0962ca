//! `device_reset`: a reset destroyed everything the program had made on
//! one device. Replay frees what it holds for the program there, after
//! that device's work is done: the device's recorded allocations (through
//! the backend, as a `free` would, so placement can hand their addresses
//! out again to the allocations the program makes next; host memory only
//! in a CUDA archive, where it is the context's), its pools, its streams
//! and events. The real device is not reset and code stays
//! loaded: a module or registered kernel the program uses again after the
//! reset needs nothing more, and what it makes anew is replayed by the
//! events that made it.

use std::collections::HashMap;

use super::Replayer;
use crate::alloc_map::Alloc;
use crate::device::PoolCall;
use crate::engine::error::{EventFailure, ReplayError};
use hrr_core::event::Event;
use hrr_core::manifest::Platform;

/// The recorded device each live allocation, pool, stream and event was
/// made on (its creating event's `dev`), by recorded base or handle.
#[derive(Default)]
pub(super) struct Owners {
    allocs: HashMap<u64, u32>,
    pools: HashMap<u64, u32>,
    streams: HashMap<u64, u32>,
    events: HashMap<u64, u32>,
}

/// What a table keeps.
#[derive(Clone, Copy)]
pub(super) enum Owned {
    Alloc,
    Pool,
    Stream,
    Event,
}

impl Owners {
    fn table(&mut self, what: Owned) -> &mut HashMap<u64, u32> {
        match what {
            Owned::Alloc => &mut self.allocs,
            Owned::Pool => &mut self.pools,
            Owned::Stream => &mut self.streams,
            Owned::Event => &mut self.events,
        }
    }

    /// `key` was made on recorded device `dev`.
    pub(super) fn made(&mut self, what: Owned, key: u64, dev: u32) {
        self.table(what).insert(key, dev);
    }

    /// `key` is gone.
    pub(super) fn gone(&mut self, what: Owned, key: u64) {
        self.table(what).remove(&key);
    }

    /// Takes the keys made on `dev` that `keep` does not keep, ascending (a
    /// stable order for the backend's calls).
    fn take(&mut self, what: Owned, dev: u32, keep: impl Fn(u64) -> bool) -> Vec<u64> {
        let t = self.table(what);
        let mut keys: Vec<u64> = t
            .iter()
            .filter(|&(&k, d)| *d == dev && !keep(k))
            .map(|(&k, _)| k)
            .collect();
        keys.sort_unstable();
        for k in &keys {
            t.remove(k);
        }
        keys
    }

    /// Forgets everything (the replay's teardown frees it all).
    pub(super) fn clear(&mut self) {
        *self = Owners::default();
    }
}

impl Replayer<'_> {
    /// Gives the program's allocation `a` (out of the replay's tables
    /// already) back: to the pool it came from, after the work before it,
    /// else to the device.
    pub(super) fn release(&mut self, e: &Event, a: &Alloc) -> Result<(), ReplayError> {
        if self.pools.take_alloc(a.base) {
            self.dev
                .pool_call(PoolCall::Free(a.live, 0))
                .map_err(Self::dev_err(e))
        } else {
            self.dev.free(a.live, a.mem).map_err(Self::dev_err(e))
        }
    }

    /// `device_reset` of recorded device `device`: its work waited for,
    /// then what the program had there freed and destroyed.
    pub(super) fn device_reset(&mut self, e: &Event, device: i32) -> Result<(), ReplayError> {
        let recorded = u32::try_from(device).map_err(|_| {
            Self::fatal(
                e,
                EventFailure::NoDevice(format!("device_reset of device {device}")),
            )
        })?;
        let local = self.local_device(e, recorded)?;
        if local != self.current_device {
            self.switch_device(e, recorded, local)?;
        }
        self.dev.device_sync().map_err(Self::dev_err(e))?;
        // CUDA's page-locked and registered host memory is the context's;
        // HIP's belongs to no device and outlives the reset.
        let with_host = self.archive.manifest().platform == Platform::Nvidia;
        let allocs = &self.space.allocs;
        let keep = |base| !with_host && allocs.find(base).is_some_and(|a| !a.mem.is_device());
        for base in self.owners.take(Owned::Alloc, recorded, keep) {
            if let Ok(a) = self.space.allocs.remove(base) {
                self.release(e, &a)?;
            }
        }
        for pool in self.owners.take(Owned::Pool, recorded, |_| false) {
            self.pool_destroy(e, hrr_core::hex::Addr(pool))?;
        }
        for s in self.owners.take(Owned::Stream, recorded, |_| false) {
            if let Some(s) = self.streams.remove(s) {
                self.dev.stream_destroy(s).map_err(Self::dev_err(e))?;
            }
        }
        for ev in self.owners.take(Owned::Event, recorded, |_| false) {
            if let Some(ev) = self.events.remove(ev) {
                self.dev.event_destroy(ev).map_err(Self::dev_err(e))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::error::ReplayError;
    use crate::engine::mem_device::MemDevice;

    use hrr_core::error_chain::chain;
    use hrr_core::event::{MemKind, Op};
    use hrr_core::hex::Addr;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const X: u64 = 0x7f00_0000_0000;
    const H: u64 = 0x7e00_0000_0000;

    fn reset(b: ArchiveBuilder) -> ArchiveBuilder {
        b.event("hipDeviceReset", Op::DeviceReset { device: 0 }, vec![])
    }

    fn run(b: ArchiveBuilder) -> Option<ReplayError> {
        super::super::replay_built(b, &mut MemDevice::new(false)).1
    }

    /// The address freed by the reset is allocated again, and the data of
    /// the second life is what the replay reads back.
    #[test]
    fn an_allocation_after_a_reset_may_have_a_freed_address() {
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(X, 64)
            .h2d(X, &[1; 64]);
        let b = reset(b).alloc(X, 64).h2d(X, &[2; 64]).d2h(X, &[2; 64]);
        assert!(run(b).is_none());
        let without = ArchiveBuilder::new(Platform::Cpu).alloc(X, 64).alloc(X, 64);
        assert!(
            run(without).is_some_and(|e| chain(&e).to_string().contains("overlaps")),
            "without the reset the second allocation collides"
        );
    }

    /// A stream made before the reset is gone after it (a use the capture
    /// saw succeed would name an unknown stream); one made again with the
    /// same handle is a new one.
    #[test]
    fn streams_made_before_a_reset_are_dropped() {
        let s = Op::StreamCreate { stream: Addr(9) };
        let sync = Op::StreamSync { stream: Addr(9) };
        let b = ArchiveBuilder::new(Platform::Cpu).event("hipStreamCreate", s.clone(), vec![]);
        let e = run(reset(b.clone()).event("hipStreamSynchronize", sync.clone(), vec![]));
        assert!(
            e.is_some_and(|e| chain(&e).to_string().contains("never created")),
            "the stream died with the reset"
        );
        let again = reset(b).event("hipStreamCreate", s, vec![]).event(
            "hipStreamSynchronize",
            sync,
            vec![],
        );
        assert!(run(again).is_none());
    }

    /// Host memory outlives a HIP reset and goes with a CUDA one.
    #[test]
    fn host_memory_goes_with_the_reset_on_cuda_only() {
        for (platform, freed) in [(Platform::Cpu, false), (Platform::Nvidia, true)] {
            let b = ArchiveBuilder::new(platform).alloc_mem(H, 64, MemKind::Pinned);
            let b = reset(b).alloc_mem(H, 64, MemKind::Pinned);
            assert_eq!(run(b).is_none(), freed, "{platform:?}");
        }
    }
}
