//! The `memcpy_rect` and `memset_rect` ops: 2D and 3D copies and memsets.
//! Each pitched device operand is translated as one range, from its first
//! byte to one past its last row (it lies in one allocation, as a pitched
//! allocation is linear memory); the host side is the packed blob. A D2H
//! is checked and written to the replay archive like any other.

use super::Replayer;
use crate::engine::error::{EventFailure, Operand, ReplayError};
use hrr_core::event::{Dir, Event, rect_len, rect_span};
use hrr_core::hex::{Addr, BlobId};

/// One `memcpy_rect` event's fields.
pub(super) struct RectCopy {
    pub dir: Dir,
    pub dst: Addr,
    pub dpitch: [u64; 2],
    pub src: Addr,
    pub spitch: [u64; 2],
    pub extent: [u64; 3],
    pub stream: Option<Addr>,
    pub blob: Option<BlobId>,
}

impl Replayer<'_> {
    /// Bytes from the first byte of a pitched operand to its end, or the
    /// event's error when the geometry is impossible.
    pub(super) fn rect_span(
        e: &Event,
        op: &'static str,
        pitch: [u64; 2],
        extent: [u64; 3],
    ) -> Result<u64, ReplayError> {
        rect_span(pitch, extent)
            .filter(|_| rect_len(extent).is_some_and(|n| usize::try_from(n).is_ok()))
            .ok_or_else(|| Self::fatal(e, EventFailure::RectShape { op, pitch, extent }))
    }

    /// Replays `memcpy_rect`.
    pub(super) fn memcpy_rect(&mut self, e: &Event, c: RectCopy) -> Result<(), ReplayError> {
        let stream = self.stream(e, c.stream)?;
        if rect_len(c.extent) == Some(0) || c.dir == Dir::H2h {
            return Ok(()); // nothing reaches the device
        }
        let extent = c.extent;
        let timed = self.timed();
        match c.dir {
            Dir::H2d => {
                let span = Self::rect_span(e, "memcpy_rect dst", c.dpitch, extent)?;
                let len = rect_len(extent).unwrap_or(0);
                let live = self.device_operand(e, Operand::H2dDst, c.dst, span)?;
                let id = c
                    .blob
                    .ok_or_else(|| Self::fatal(e, EventFailure::NoSourceBlob))?;
                let bytes = self.source_blob(e, id, len)?;
                let dpitch = c.dpitch;
                let dev_time = self
                    .clock
                    .around(timed, self.dev, stream, |d| {
                        d.copy_h2d_rect(live, dpitch, &bytes, extent, stream)
                    })
                    .map_err(Self::dev_err(e))?;
                self.summary.copies.h2d_bytes += len;
                self.record_timed(e, dev_time)?;
            }
            Dir::D2h => {
                let span = Self::rect_span(e, "memcpy_rect src", c.spitch, extent)?;
                let len = rect_len(extent).unwrap_or(0);
                let live = self.device_operand(e, Operand::D2hSrc, c.src, span)?;
                // The expected bytes must be as long as the read: checked
                // before a buffer of that size is allocated for it.
                if let Some(id) = c.blob
                    && let Ok(expected) = self.archive.blobs().size(&id)
                    && expected != len
                {
                    return Err(Self::fatal(
                        e,
                        EventFailure::D2hLength {
                            size: len,
                            id,
                            expected,
                        },
                    ));
                }
                let mut buf = vec![0u8; len as usize];
                let spitch = c.spitch;
                let r = self.clock.around(timed, self.dev, stream, |d| {
                    d.copy_d2h_rect(&mut buf, live, spitch, extent, stream)
                });
                self.summary.copies.d2h_bytes += len;
                r.map_err(Self::dev_err(e))
                    .and_then(|dev_time| self.check_d2h(e, c.blob, &buf, dev_time))?;
            }
            Dir::D2d => {
                let dspan = Self::rect_span(e, "memcpy_rect dst", c.dpitch, extent)?;
                let sspan = Self::rect_span(e, "memcpy_rect src", c.spitch, extent)?;
                let d = self.device_operand(e, Operand::D2dDst, c.dst, dspan)?;
                let s = self.device_operand(e, Operand::D2dSrc, c.src, sspan)?;
                let (dpitch, spitch) = (c.dpitch, c.spitch);
                let dev_time = self
                    .clock
                    .around(timed, self.dev, stream, |dev| {
                        dev.copy_d2d_rect((d, dpitch), (s, spitch), extent, stream)
                    })
                    .map_err(Self::dev_err(e))?;
                self.record_timed(e, dev_time)?;
            }
            Dir::H2h => {}
        }
        Ok(())
    }

    /// Replays `memset_rect`: byte patterns through the device's rectangular
    /// memset, wider ones (`cuMemsetD2D16/32`) as pattern uploads row by row.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn memset_rect(
        &mut self,
        e: &Event,
        dst: Addr,
        pitch: [u64; 2],
        extent: [u64; 3],
        (value, width): (u32, u8),
        stream: Option<Addr>,
    ) -> Result<(), ReplayError> {
        let stream = self.stream(e, stream)?;
        if rect_len(extent) == Some(0) {
            return Ok(());
        }
        let span = Self::rect_span(e, "memset_rect dst", pitch, extent)?;
        let live = self.device_operand(e, Operand::MemsetDst, dst, span)?;
        let timed = self.timed();
        let row: Vec<u8> = if width > 1 {
            let pattern = value.to_le_bytes();
            let w = usize::from(width.min(4));
            (0..extent[0] as usize).map(|i| pattern[i % w]).collect()
        } else {
            Vec::new()
        };
        let dev_time = self
            .clock
            .around(timed, self.dev, stream, |d| {
                if width <= 1 {
                    return d.memset_rect(live, pitch, extent, value as u8, stream);
                }
                for off in hrr_core::event::rect_rows(pitch, extent) {
                    d.copy_h2d(live + off, &row, stream)?;
                }
                Ok(())
            })
            .map_err(Self::dev_err(e))?;
        self.record_timed(e, dev_time)
    }
}

#[cfg(test)]
mod tests {

    use crate::engine::error::ReplayError;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::summary::ReplaySummary;

    use hrr_core::event::{Dir, Op};
    use hrr_core::hex::{Addr, BlobId};
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const DEV: u64 = 0x7f00_0000_0000;
    const HOST: u64 = 0x5555_0000;

    fn run(b: ArchiveBuilder) -> (ReplaySummary, Option<ReplayError>) {
        super::super::replay_built(b, &mut MemDevice::new(false))
    }

    fn copy(
        dir: Dir,
        dst: u64,
        dpitch: u64,
        src: u64,
        spitch: u64,
        extent: [u64; 3],
        bytes: Option<&[u8]>,
    ) -> (Op, Vec<Vec<u8>>) {
        let op = Op::MemcpyRect {
            dir,
            dst: Addr(dst),
            dpitch: [dpitch, dpitch * extent[1]],
            src: Addr(src),
            spitch: [spitch, spitch * extent[1]],
            extent,
            stream: None,
            blob: bytes.map(BlobId::of),
        };
        (op, bytes.map(|b| vec![b.to_vec()]).unwrap_or_default())
    }

    /// A pitched upload, a pitched device-to-device copy into a second
    /// buffer, a 2D memset, and a pitched download: the packed bytes come
    /// back, the padding between rows stays untouched (checked by plain
    /// downloads of the whole buffers).
    #[test]
    fn pitched_copies_move_rows_and_leave_the_padding() {
        let (w, h, pitch) = (5u64, 3u64, 8u64);
        let packed: Vec<u8> = (1..=15).collect();
        let (up, up_blobs) = copy(Dir::H2d, DEV, pitch, HOST, w, [w, h, 1], Some(&packed));
        let (dd, _) = copy(Dir::D2d, DEV + 4096, 16, DEV, pitch, [w, h, 1], None);
        let (down, down_blobs) = copy(Dir::D2h, HOST, w, DEV + 4096, 16, [w, h, 1], Some(&packed));
        let mut whole = vec![0u8; 24];
        for y in 0..3 {
            whole[y * 8..y * 8 + 5].copy_from_slice(&packed[y * 5..y * 5 + 5]);
        }
        let mut set = whole.clone();
        for y in 1..3 {
            set[y * 8 + 1..y * 8 + 3].fill(0xab);
        }
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 24)
            .alloc(DEV + 4096, 48)
            .event("hipMemcpy2D", up, up_blobs)
            .event("hipMemcpy2D", dd, vec![])
            .event("hipMemcpy2D", down, down_blobs)
            .d2h(DEV, &whole)
            .event(
                "hipMemset2D",
                Op::MemsetRect {
                    dst: Addr(DEV + 9),
                    pitch: [8, 0],
                    extent: [2, 2, 1],
                    value: 0xab,
                    width: 1,
                    stream: None,
                },
                vec![],
            )
            .d2h(DEV, &set);
        let (s, e) = run(b);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (3, 0));
    }

    /// A 3D copy: two slices of two rows, slice pitch larger than the rows.
    #[test]
    fn slices_land_at_their_slice_pitch() {
        let packed: Vec<u8> = (1..=12).collect();
        let up = Op::MemcpyRect {
            dir: Dir::H2d,
            dst: Addr(DEV),
            dpitch: [4, 16],
            src: Addr(HOST),
            spitch: [3, 6],
            extent: [3, 2, 2],
            stream: None,
            blob: Some(BlobId::of(&packed)),
        };
        let mut whole = vec![0u8; 32];
        whole[0..3].copy_from_slice(&packed[0..3]);
        whole[4..7].copy_from_slice(&packed[3..6]);
        whole[16..19].copy_from_slice(&packed[6..9]);
        whole[20..23].copy_from_slice(&packed[9..12]);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 32)
            .event("hipMemcpy3D", up, vec![packed.clone()])
            .d2h(DEV, &whole);
        let (s, e) = run(b);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
    }

    /// Rows wider than their pitch, and rows past the allocation's end, are
    /// the event's error, named.
    #[test]
    fn impossible_geometry_is_a_clear_error() {
        let (bad, blobs) = copy(Dir::H2d, DEV, 4, HOST, 8, [8, 2, 1], Some(&[0; 16]));
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 64)
            .event("hipMemcpy2D", bad, blobs);
        let msg = hrr_core::error_chain::chain(&run(b).1.expect("fatal")).to_string();
        assert!(
            msg.contains("hipMemcpy2D")
                && msg.contains("memcpy_rect dst: extent [8, 2, 1] does not fit pitch [4, 8]"),
            "{msg}"
        );
        let (past, blobs) = copy(Dir::H2d, DEV, 32, HOST, 8, [8, 3, 1], Some(&[0; 24]));
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 64)
            .event("hipMemcpy2D", past, blobs);
        let msg = hrr_core::error_chain::chain(&run(b).1.expect("fatal")).to_string();
        assert!(msg.contains("h2d dst"), "{msg}");
    }
}
