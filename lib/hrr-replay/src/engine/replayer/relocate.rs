//! The `relocate` op: recorded device addresses stored in device memory,
//! translated in place. `hrr-extract` writes it after uploading a snapshot
//! whose words point into other allocations (pointer tables an earlier
//! kernel built): the bytes hold recorded addresses, which mean nothing to
//! the device until replaced by their translations.

use super::Replayer;
use crate::engine::error::{EventFailure, Operand, ReplayError};
use hrr_core::event::{Event, decode_relocations};
use hrr_core::hex::{Addr, BlobId};

impl Replayer<'_> {
    /// Replays `relocate`: reads `[dst, dst + size)`, translates each
    /// non-zero word at the blob's offsets, and writes the range back.
    pub(super) fn relocate(
        &mut self,
        e: &Event,
        dst: Addr,
        size: u64,
        blob: BlobId,
    ) -> Result<(), ReplayError> {
        let offsets: Vec<u64> = {
            let bytes = self
                .blobs
                .get(self.archive.blobs(), &blob)
                .map_err(|err| Self::fatal(e, err))?;
            let Some(offsets) = decode_relocations(&bytes) else {
                return Err(Self::fatal(
                    e,
                    EventFailure::RelocateBlob {
                        id: blob,
                        len: bytes.len() as u64,
                    },
                ));
            };
            offsets.collect()
        };
        if let Some(&bad) = offsets
            .iter()
            .find(|&&o| o.checked_add(8).is_none_or(|end| end > size))
        {
            return Err(Self::fatal(
                e,
                EventFailure::RelocateOffset { offset: bad, size },
            ));
        }
        let live = self.device_operand(e, Operand::RelocateDst, dst, size)?;
        let mut buf = vec![0u8; size as usize];
        self.dev
            .copy_d2h(&mut buf, live, None)
            .map_err(Self::dev_err(e))?;
        for off in offsets {
            let o = off as usize;
            let word = u64::from_le_bytes(buf[o..o + 8].try_into().expect("8 bytes"));
            if word == 0 {
                continue;
            }
            let translated = self
                .space
                .translate_or_materialise(self.dev, word, 0)
                .map_err(|u| {
                    let role = Operand::RelocateWord { dst, offset: off };
                    Self::fatal(e, EventFailure::unmapped(role, u))
                })?;
            buf[o..o + 8].copy_from_slice(&translated.to_le_bytes());
        }
        self.dev
            .copy_h2d(live, &buf, None)
            .map_err(Self::dev_err(e))
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::ReplayError;
    use crate::engine::mem_device::MemDevice;
    use hrr_core::error_chain::chain;
    use hrr_core::event::{Op, encode_relocations};
    use hrr_core::hex::{Addr, BlobId};
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const TABLE: u64 = 0x7f00_0000_0000;
    const DATA: u64 = 0x7f00_0001_0000;
    /// Where MemDevice puts the first and second allocations.
    const LIVE_DATA: u64 = 0x1000_1000;

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn relocate(b: ArchiveBuilder, dst: u64, size: u64, offsets: &[u64]) -> ArchiveBuilder {
        let blob = encode_relocations(offsets);
        let op = Op::Relocate {
            dst: Addr(dst),
            size,
            blob: BlobId::of(&blob),
        };
        b.event("hrr-extract", op, vec![blob])
    }

    fn replay(b: ArchiveBuilder) -> (crate::engine::ReplaySummary, Option<ReplayError>) {
        super::super::replay_built(b, &mut MemDevice::new(false))
    }

    fn table() -> ArchiveBuilder {
        ArchiveBuilder::new(Platform::Cpu)
            .alloc(TABLE, 32)
            .alloc(DATA, 64)
            .h2d(TABLE, &words(&[DATA, 0, DATA + 8, 7777]))
    }

    #[test]
    fn listed_words_are_translated_in_place() {
        let b = relocate(table(), TABLE, 32, &[0, 8, 16]);
        let b = b.d2h(TABLE, &words(&[LIVE_DATA, 0, LIVE_DATA + 8, 7777]));
        let (s, e) = replay(b);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0), "{s:?}");
    }

    #[test]
    fn bad_relocations_are_fatal_and_named() {
        for (offsets, dst, size, want) in [
            (
                vec![24u64],
                TABLE,
                32,
                "relocate word 0x7f0000000000+24 0x1e61 not mapped",
            ),
            (
                vec![28],
                TABLE,
                32,
                "relocate offset 28 leaves no 8-byte word",
            ),
            (
                vec![0],
                TABLE + 16,
                32,
                "relocate dst 0x7f0000000010 + 32 overruns the allocation at 0x7f0000000000 (size 32)",
            ),
            (
                vec![0],
                DATA + 0x1000,
                8,
                "relocate dst 0x7f0000011000 not mapped",
            ),
        ] {
            let (_, e) = replay(relocate(table(), dst, size, &offsets));
            let msg = e.map(|e| chain(&e).to_string()).unwrap_or_default();
            assert!(msg.contains(want), "{msg}");
        }
    }
}
