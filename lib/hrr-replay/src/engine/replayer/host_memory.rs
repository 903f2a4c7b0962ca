//! Host memory the device reads and writes (mapped pinned, registered,
//! managed): `host_write` puts the bytes the application's host code wrote
//! into the replay's own memory for that range before the launch that reads
//! them; `host_read` checks, at a synchronisation, the bytes kernels wrote
//! there, like a D2H copy's result (counted in the `d2h` summary, and written
//! to the replay archive for `hrr-diff`).
//!
//! A D2H copy into such a range lands there too, as the application's did:
//! a launch may read it next, and a `host_read` at the following
//! synchronisation counts its bytes as the device's (a framework's pinned
//! staging buffer that a pending launch reached).
//!
//! All go through the device's copies: the replay's memory for a recorded
//! pinned, registered or managed allocation is the device's own (host memory
//! on the CPU runtime, pinned or managed memory on a GPU), which its copies
//! reach wherever it lies.

use super::Replayer;
use crate::engine::error::{EventFailure, Operand, ReplayError};
use hrr_core::event::{Event, MemKind};
use hrr_core::hex::{Addr, BlobId};

impl Replayer<'_> {
    /// Replays `host_write`: the recorded bytes into the replay's memory.
    pub(super) fn host_write(
        &mut self,
        e: &Event,
        ptr: Addr,
        size: u64,
        blob: BlobId,
    ) -> Result<(), ReplayError> {
        let live = self.device_operand(e, Operand::HostWriteDst, ptr, size)?;
        let bytes = self.source_blob(e, blob, size)?;
        self.dev
            .copy_h2d(live, &bytes, None)
            .map_err(Self::dev_err(e))
    }

    /// Puts a D2H copy's bytes, read from the device, where the application's
    /// landed, when that is a recorded allocation of the runtime's host
    /// memory (elsewhere the application's own memory: nothing to keep).
    pub(super) fn land_in_host_memory(
        &mut self,
        e: &Event,
        dst: Addr,
        bytes: &[u8],
    ) -> Result<(), ReplayError> {
        let live = match self.space.allocs.find(dst.0) {
            Some(a) if a.mem != MemKind::Device => {
                self.space.allocs.translate_range(dst.0, bytes.len() as u64)
            }
            _ => None,
        };
        match live {
            Some(live) => self
                .dev
                .copy_h2d(live, bytes, None)
                .map_err(Self::dev_err(e)),
            None => Ok(()),
        }
    }

    /// Replays `host_read`: reads the replay's memory for the range (the
    /// device has synchronised: the recorded sync came just before) and
    /// checks it against the recorded bytes.
    pub(super) fn host_read(
        &mut self,
        e: &Event,
        ptr: Addr,
        size: u64,
        blob: BlobId,
    ) -> Result<(), ReplayError> {
        let live = self.device_operand(e, Operand::HostReadSrc, ptr, size)?;
        if let Ok(expected) = self.archive.blobs().size(&blob)
            && expected != size
        {
            return Err(Self::fatal(
                e,
                EventFailure::D2hLength {
                    size,
                    id: blob,
                    expected,
                },
            ));
        }
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        buf.resize(size as usize, 0);
        let result = self
            .dev
            .copy_d2h(&mut buf, live, None)
            .map_err(Self::dev_err(e))
            .and_then(|()| self.check_d2h(e, Some(blob), &buf, None));
        self.scratch = buf;
        result
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::ReplayError;
    use crate::engine::mem_device::MemDevice;
    use hrr_core::error_chain::chain;
    use hrr_core::event::{MemKind, Op};
    use hrr_core::hex::{Addr, BlobId};
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const HOST: u64 = 0x7f55_0000_0000;

    fn replay(b: ArchiveBuilder) -> (crate::engine::ReplaySummary, Option<ReplayError>) {
        super::super::replay_built(b, &mut MemDevice::new(false))
    }

    fn pinned(b: ArchiveBuilder) -> ArchiveBuilder {
        b.event(
            "hipHostMalloc",
            Op::Alloc {
                ptr: Addr(HOST),
                size: 64,
                mem: MemKind::Pinned,
            },
            vec![],
        )
    }

    #[test]
    fn written_bytes_are_read_back_and_checked() {
        let data = vec![7u8; 16];
        let b = pinned(ArchiveBuilder::new(Platform::Cpu))
            .event(
                "hipLaunchKernel",
                Op::HostWrite {
                    ptr: Addr(HOST + 8),
                    size: 16,
                    blob: BlobId::of(&data),
                },
                vec![data.clone()],
            )
            .event(
                "hipDeviceSynchronize",
                Op::HostRead {
                    ptr: Addr(HOST + 8),
                    size: 16,
                    blob: BlobId::of(&data),
                },
                vec![data.clone()],
            );
        let (s, err) = replay(b);
        assert!(err.is_none(), "{err:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));

        // Bytes the replay's memory does not hold fail the check.
        let other = vec![9u8; 16];
        let b = pinned(ArchiveBuilder::new(Platform::Cpu)).event(
            "hipDeviceSynchronize",
            Op::HostRead {
                ptr: Addr(HOST),
                size: 16,
                blob: BlobId::of(&other),
            },
            vec![other],
        );
        let (s, err) = replay(b);
        assert!(err.is_none(), "{err:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (0, 1));
    }

    #[test]
    fn a_range_outside_recorded_memory_is_fatal_and_named() {
        let data = vec![1u8; 8];
        let b = pinned(ArchiveBuilder::new(Platform::Cpu)).event(
            "hipLaunchKernel",
            Op::HostWrite {
                ptr: Addr(HOST + 60),
                size: 8,
                blob: BlobId::of(&data),
            },
            vec![data],
        );
        let (_, err) = replay(b);
        let msg = chain(&err.expect("fatal")).to_string();
        assert!(
            msg.contains("host_write dst") && msg.contains("overruns"),
            "{msg}"
        );
    }
}
