//! Arrays, texture and surface objects: `array_create`, `array_destroy`,
//! `memcpy_array`, `tex_create`, `tex_destroy`, `surf_create`,
//! `surf_destroy`. Arrays and objects are handles, mapped from the
//! recorded one to the backend's own; a linear side of an array copy is
//! translated like a `memcpy_rect` operand, and a resource viewing linear
//! memory has its pointer translated. A download from an array is a D2H:
//! checked and written to the replay archive.

use std::collections::HashMap;

use super::Replayer;
use crate::device::{ArrayCopy, ArrayDesc, ArraySide, Handle, HostSide};
use crate::engine::error::{EventFailure, Operand, ReplayError};
use crate::handle_map::HandleMap;
use hrr_core::event::{Dir, Event, rect_len};
use hrr_core::hex::{Addr, BlobId};

/// Byte offset, in both families' resource descriptions, of the array
/// handle or device pointer a resource views (after a 4-byte type, padded
/// to 8).
const RES_HANDLE: usize = 8;

/// Resource types, the same numbers in both families.
const RES_ARRAY: u32 = 0;
const RES_MIPMAPPED: u32 = 1;

/// Live arrays and objects, by recorded handle.
#[derive(Default)]
pub(super) struct Arrays {
    arrays: HandleMap,
    descs: HashMap<u64, ArrayDesc>,
    /// Texture and surface objects: recorded handle → (live, surface).
    objects: HashMap<u64, (Handle, bool)>,
}

impl Arrays {
    /// The live object a recorded kernel-argument word names.
    pub(super) fn object(&self, recorded: u64) -> Option<Handle> {
        self.objects.get(&recorded).map(|&(h, _)| h)
    }
}

/// One `memcpy_array` event's fields.
pub(super) struct ArrayCopyEvent {
    pub dir: Dir,
    pub dst: Addr,
    pub dpitch: Option<[u64; 2]>,
    pub dpos: Option<[u64; 3]>,
    pub src: Addr,
    pub spitch: Option<[u64; 2]>,
    pub spos: Option<[u64; 3]>,
    pub extent: [u64; 3],
    pub stream: Option<Addr>,
    pub blob: Option<BlobId>,
}

impl Replayer<'_> {
    fn shape(e: &Event, why: impl Into<String>) -> ReplayError {
        Self::fatal(e, EventFailure::ArrayShape(why.into()))
    }

    /// Replays `array_create`.
    pub(super) fn array_create(
        &mut self,
        e: &Event,
        array: Addr,
        desc: ArrayDesc,
    ) -> Result<(), ReplayError> {
        if desc.element_bytes().is_none() {
            return Err(Self::shape(
                e,
                format!(
                    "array format {:#x} with {} channels: no runtime makes such an array",
                    desc.format, desc.channels
                ),
            ));
        }
        let live = self.dev.array_create(&desc).map_err(Self::dev_err(e))?;
        self.arrays.arrays.insert(array.0, live);
        self.arrays.descs.insert(array.0, desc);
        Ok(())
    }

    /// Replays `array_destroy`.
    pub(super) fn array_destroy(&mut self, e: &Event, array: Addr) -> Result<(), ReplayError> {
        let live = self
            .arrays
            .arrays
            .remove(array.0)
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(array)))?;
        self.arrays.descs.remove(&array.0);
        self.dev.array_destroy(live).map_err(Self::dev_err(e))
    }

    /// One side of an array copy: an array (with a position), device memory
    /// (translated over its whole span) or the host buffer.
    pub(super) fn array_side(
        &mut self,
        e: &Event,
        (handle, pitch, pos): (Addr, Option<[u64; 2]>, Option<[u64; 3]>),
        (device, role): (bool, Operand),
        extent: [u64; 3],
    ) -> Result<ArraySide, ReplayError> {
        if let Some(pos) = pos {
            let array = self
                .arrays
                .arrays
                .get(handle.0)
                .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(handle)))?;
            let element = self
                .arrays
                .descs
                .get(&handle.0)
                .and_then(ArrayDesc::element_bytes)
                .unwrap_or(1);
            return Ok(ArraySide::Array {
                array,
                pos,
                element,
            });
        }
        if !device {
            return Ok(ArraySide::Host);
        }
        let pitch =
            pitch.ok_or_else(|| Self::shape(e, "memcpy_array: a linear side without its pitch"))?;
        let span = Self::rect_span(e, "memcpy_array", pitch, extent)?;
        let ptr = self.device_operand(e, role, handle, span)?;
        Ok(ArraySide::Device { ptr, pitch })
    }

    /// Replays `memcpy_array`.
    pub(super) fn memcpy_array(&mut self, e: &Event, c: ArrayCopyEvent) -> Result<(), ReplayError> {
        let stream = self.stream(e, c.stream)?;
        let Some(len) = rect_len(c.extent).filter(|&n| usize::try_from(n).is_ok()) else {
            return Err(Self::shape(
                e,
                format!("memcpy_array: extent {:?} overflows", c.extent),
            ));
        };
        if len == 0 {
            return Ok(());
        }
        let (dst_dev, src_dev, droll, sroll) = match c.dir {
            Dir::H2d => (true, false, Operand::H2dDst, Operand::H2dDst),
            Dir::D2h => (false, true, Operand::D2hSrc, Operand::D2hSrc),
            Dir::D2d => (true, true, Operand::D2dDst, Operand::D2dSrc),
            Dir::H2h => return Ok(()), // nothing reaches the device
        };
        let dst = self.array_side(e, (c.dst, c.dpitch, c.dpos), (dst_dev, droll), c.extent)?;
        let src = self.array_side(e, (c.src, c.spitch, c.spos), (src_dev, sroll), c.extent)?;
        let extent = c.extent;
        match c.dir {
            Dir::H2d => {
                let id = c
                    .blob
                    .ok_or_else(|| Self::fatal(e, EventFailure::NoSourceBlob))?;
                let bytes = self.source_blob(e, id, len)?;
                self.dev
                    .copy_array(ArrayCopy {
                        dst,
                        src,
                        extent,
                        stream,
                        host: HostSide::Src(&bytes),
                    })
                    .map_err(Self::dev_err(e))?;
                self.summary.copies.h2d_bytes += len;
            }
            Dir::D2h => {
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
                let r = self.dev.copy_array(ArrayCopy {
                    dst,
                    src,
                    extent,
                    stream,
                    host: HostSide::Dst(&mut buf),
                });
                self.summary.copies.d2h_bytes += len;
                r.map_err(Self::dev_err(e))
                    .and_then(|()| self.check_d2h(e, c.blob, &buf, None))?;
            }
            _ => self
                .dev
                .copy_array(ArrayCopy {
                    dst,
                    src,
                    extent,
                    stream,
                    host: HostSide::None,
                })
                .map_err(Self::dev_err(e))?,
        }
        Ok(())
    }

    /// The recorded resource description with the array or pointer it
    /// views replaced by the live one.
    fn live_resource(&mut self, e: &Event, res: &[u8]) -> Result<Vec<u8>, ReplayError> {
        if res.len() < RES_HANDLE + 8 {
            return Err(Self::shape(
                e,
                format!("resource description of {} bytes: too short", res.len()),
            ));
        }
        let mut out = res.to_vec();
        let ty = u32::from_le_bytes(res[..4].try_into().expect("4 bytes"));
        let word = u64::from_le_bytes(res[RES_HANDLE..RES_HANDLE + 8].try_into().expect("8 bytes"));
        let live = match ty {
            RES_ARRAY => self
                .arrays
                .arrays
                .get(word)
                .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(Addr(word))))?,
            RES_MIPMAPPED => {
                return Err(Self::shape(
                    e,
                    "a resource over a mipmapped array: mipmapped arrays are not recorded",
                ));
            }
            // Linear and pitched 2D memory: the pointer must lie in memory
            // the replay has.
            _ => self.device_operand(e, Operand::D2dSrc, Addr(word), 1)?,
        };
        out[RES_HANDLE..RES_HANDLE + 8].copy_from_slice(&live.to_le_bytes());
        Ok(out)
    }

    /// Replays `tex_create` (`tex` given) or `surf_create`.
    pub(super) fn object_create(
        &mut self,
        e: &Event,
        obj: Addr,
        res: &[u8],
        tex: Option<(&[u8], Option<&[u8]>)>,
    ) -> Result<(), ReplayError> {
        let res = self.live_resource(e, res)?;
        let live = match tex {
            Some((desc, view)) => self.dev.tex_create(&res, desc, view),
            None => self.dev.surf_create(&res),
        }
        .map_err(Self::dev_err(e))?;
        self.arrays.objects.insert(obj.0, (live, tex.is_none()));
        Ok(())
    }

    /// Replays `tex_destroy` and `surf_destroy`.
    pub(super) fn object_destroy(&mut self, e: &Event, obj: Addr) -> Result<(), ReplayError> {
        let (live, surface) = self
            .arrays
            .objects
            .remove(&obj.0)
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownObject(obj)))?;
        self.dev
            .object_destroy(live, surface)
            .map_err(Self::dev_err(e))
    }
}
