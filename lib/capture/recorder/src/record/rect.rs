//! Recording 2D/3D copies and memsets (`memcpy_rect`, `memset_rect`): the
//! events keep the geometry, the blob the packed bytes. Family-agnostic:
//! HIP's and the CUDA driver's handlers both describe their copies as a
//! [`RectCopy`].

use hrr_core::Dir;
use hrr_core::event::Op;
use hrr_core::hex::Addr;

use super::recorder::Recorder;

/// A 2D or 3D copy's operands, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectCopy {
    /// The direction, resolved before the call.
    pub dir: Dir,
    /// First byte written.
    pub dst: u64,
    /// Row and slice pitch at the destination.
    pub dpitch: [u64; 2],
    /// First byte read.
    pub src: u64,
    /// Row and slice pitch at the source.
    pub spitch: [u64; 2],
    /// Width in bytes, rows, slices.
    pub extent: [u64; 3],
    /// `None`: a synchronous API.
    pub stream: Option<u64>,
}

impl Recorder {
    /// Records a 2D/3D copy; `data` is the packed blob (H2D source, D2H
    /// result) when the call succeeded and the bytes could be read.
    pub fn memcpy_rect(&self, api: &str, ret: i32, c: &RectCopy, data: Option<&[u8]>) {
        let blob = match data {
            Some(d) if ret == 0 => self.put_blob(api, d),
            _ => None,
        };
        let op = Op::MemcpyRect {
            dir: c.dir,
            dst: Addr(c.dst),
            dpitch: c.dpitch,
            src: Addr(c.src),
            spitch: c.spitch,
            extent: c.extent,
            stream: c.stream.map(Addr),
            blob,
        };
        self.op(api, ret, &op);
    }

    /// Records a 2D/3D memset of a `width`-byte pattern.
    #[allow(clippy::too_many_arguments)]
    pub fn memset_rect(
        &self,
        api: &str,
        ret: i32,
        dst: u64,
        pitch: [u64; 2],
        extent: [u64; 3],
        (value, width): (u32, u8),
        stream: Option<u64>,
    ) {
        let op = Op::MemsetRect {
            dst: Addr(dst),
            pitch,
            extent,
            value,
            width,
            stream: stream.map(Addr),
        };
        self.op(api, ret, &op);
    }
}
