//! Arrays, texture and surface objects: `array_create`, `array_plane`,
//! `array_destroy`, `mipmap_create`, `mipmap_level`, `mipmap_destroy`,
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
    /// Mipmapped arrays, and each one's level 0 descriptor.
    mipmaps: HandleMap,
    mipmap_descs: HashMap<u64, ArrayDesc>,
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
        if desc.element_bytes().is_none() && desc.format != ArrayDesc::NV12 {
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

    /// Replays `array_plane`: the live parent's plane, mapped like an
    /// array of its own (it goes with its parent: no destroy).
    pub(super) fn array_plane(
        &mut self,
        e: &Event,
        array: Addr,
        parent: Addr,
        plane: u32,
    ) -> Result<(), ReplayError> {
        let live = self
            .arrays
            .arrays
            .get(parent.0)
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(parent)))?;
        let live = self
            .dev
            .array_plane(live, plane)
            .map_err(Self::dev_err(e))?;
        self.arrays.arrays.insert(array.0, live);
        // An NV12 array's planes hold 8-bit elements of 1 (luma) or 2
        // (chroma) channels.
        if let Some(d) = self.arrays.descs.get(&parent.0).copied()
            && d.format == ArrayDesc::NV12
        {
            let halve = |n: u64| if plane == 0 { n } else { n / 2 };
            let desc = ArrayDesc {
                format: 0x01,
                channels: if plane == 0 { 1 } else { 2 },
                extent: [halve(d.extent[0]), halve(d.extent[1]), d.extent[2]],
                flags: 0,
            };
            self.arrays.descs.insert(array.0, desc);
        }
        Ok(())
    }

    /// Replays `mipmap_create`.
    pub(super) fn mipmap_create(
        &mut self,
        e: &Event,
        mipmap: Addr,
        desc: ArrayDesc,
        levels: u32,
    ) -> Result<(), ReplayError> {
        if desc.element_bytes().is_none() || levels == 0 {
            return Err(Self::shape(
                e,
                format!(
                    "mipmapped array of format {:#x} with {} channels, {levels} levels: no runtime makes such an array",
                    desc.format, desc.channels
                ),
            ));
        }
        let live = self
            .dev
            .mipmap_create(&desc, levels)
            .map_err(Self::dev_err(e))?;
        self.arrays.mipmaps.insert(mipmap.0, live);
        self.arrays.mipmap_descs.insert(mipmap.0, desc);
        Ok(())
    }

    /// Replays `mipmap_level`: the live mipmapped array's level, mapped like
    /// an array (it goes with its mipmapped array: no destroy).
    pub(super) fn mipmap_level(
        &mut self,
        e: &Event,
        array: Addr,
        mipmap: Addr,
        level: u32,
    ) -> Result<(), ReplayError> {
        let live = self
            .arrays
            .mipmaps
            .get(mipmap.0)
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(mipmap)))?;
        let live = self
            .dev
            .mipmap_level(live, level)
            .map_err(Self::dev_err(e))?;
        self.arrays.arrays.insert(array.0, live);
        if let Some(d) = self.arrays.mipmap_descs.get(&mipmap.0).copied() {
            self.arrays.descs.insert(array.0, d.level(level));
        }
        Ok(())
    }

    /// Replays `mipmap_destroy`.
    pub(super) fn mipmap_destroy(&mut self, e: &Event, mipmap: Addr) -> Result<(), ReplayError> {
        let live = self
            .arrays
            .mipmaps
            .remove(mipmap.0)
            .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(mipmap)))?;
        self.arrays.mipmap_descs.remove(&mipmap.0);
        self.dev.mipmap_destroy(live).map_err(Self::dev_err(e))
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
            RES_MIPMAPPED => self
                .arrays
                .mipmaps
                .get(word)
                .ok_or_else(|| Self::fatal(e, EventFailure::UnknownArray(Addr(word))))?,
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

#[cfg(test)]
mod tests {
    use hrr_core::archive::Archive;
    use hrr_core::error_chain::chain;
    use hrr_core::event::{Dir, Op};
    use hrr_core::hex::{Addr, BlobId};
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    use crate::engine::Replayer;
    use crate::engine::address_space::AddressSpace;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::options::ReplayOptions;
    use crate::engine::pinned_host::PinnedHost;
    use crate::engine::summary::ReplaySummary;

    fn run(b: ArchiveBuilder) -> (ReplaySummary, Option<String>) {
        let t = tempfile::tempdir().unwrap();
        let a = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let mut dev = MemDevice::new(false);
        let opts = ReplayOptions::default();
        let mut pinned = PinnedHost::new(0);
        let (s, e) = Replayer::new(
            &mut dev,
            &a,
            &opts,
            AddressSpace::default(),
            None,
            &mut pinned,
        )
        .run(|_| {});
        (s, e.map(|e| chain(&e).to_string()))
    }

    /// A copy between the host and an array (its handle `array`, at `pos`).
    fn copy(dir: Dir, array: u64, pos: [u64; 3], extent: [u64; 3], blob: &[u8]) -> Op {
        let host = (Addr(0x1000), Some([extent[0], extent[0] * extent[1]]), None);
        let arr = (Addr(array), None, Some(pos));
        let ((dst, dpitch, dpos), (src, spitch, spos)) = match dir {
            Dir::H2d => (arr, host),
            _ => (host, arr),
        };
        Op::MemcpyArray {
            dir,
            dst,
            dpitch,
            dpos,
            src,
            spitch,
            spos,
            extent,
            stream: None,
            blob: Some(BlobId::of(blob)),
        }
    }

    /// An 8×4 NV12 array; its planes looked up; the luma and chroma planes
    /// filled; a window of the chroma plane downloaded.
    fn planes(expected: &[u8]) -> ArchiveBuilder {
        let luma: Vec<u8> = (0..32).collect();
        let chroma: Vec<u8> = (100..116).collect();
        let plane = |array, plane| Op::ArrayPlane {
            array: Addr(array),
            parent: Addr(0xa0),
            plane,
        };
        ArchiveBuilder::new(Platform::Nvidia)
            .event(
                "cuArray3DCreate_v2",
                Op::ArrayCreate {
                    array: Addr(0xa0),
                    format: 0xb0,
                    channels: 3,
                    extent: [8, 4, 0],
                    flags: 0,
                },
                vec![],
            )
            .event("cuArrayGetPlane", plane(0xa1, 1), vec![])
            .event("cuArrayGetPlane", plane(0xa2, 0), vec![])
            .event(
                "cuMemcpy2D_v2",
                copy(Dir::H2d, 0xa2, [0; 3], [8, 4, 1], &luma),
                vec![luma.clone()],
            )
            .event(
                "cuMemcpy2D_v2",
                copy(Dir::H2d, 0xa1, [0; 3], [8, 2, 1], &chroma),
                vec![chroma.clone()],
            )
            .event(
                "cuMemcpy2D_v2",
                copy(Dir::D2h, 0xa1, [2, 1, 0], [4, 1, 1], expected),
                vec![expected.to_vec()],
            )
    }

    /// A mipmapped array of 8×6 floats, 3 levels (8×6, 4×3, 2×1); level 1
    /// looked up, filled and a window of it downloaded.
    fn mipmap(expected: &[u8]) -> ArchiveBuilder {
        let data: Vec<u8> = (0..48).collect();
        ArchiveBuilder::new(Platform::Nvidia)
            .event(
                "cuMipmappedArrayCreate",
                Op::MipmapCreate {
                    mipmap: Addr(0xb0),
                    format: 0x20,
                    channels: 1,
                    extent: [8, 6, 0],
                    flags: 0,
                    levels: 3,
                },
                vec![],
            )
            .event(
                "cuMipmappedArrayGetLevel",
                Op::MipmapLevel {
                    array: Addr(0xb1),
                    mipmap: Addr(0xb0),
                    level: 1,
                },
                vec![],
            )
            .event(
                "cuMemcpy3D_v2",
                copy(Dir::H2d, 0xb1, [0; 3], [16, 3, 1], &data),
                vec![data.clone()],
            )
            .event(
                "cuMemcpy3D_v2",
                copy(Dir::D2h, 0xb1, [4, 2, 0], [8, 1, 1], expected),
                vec![expected.to_vec()],
            )
            .event(
                "cuMipmappedArrayDestroy",
                Op::MipmapDestroy { mipmap: Addr(0xb0) },
                vec![],
            )
    }

    #[test]
    fn mipmap_levels_are_arrays_of_halved_extents() {
        let (s, e) = run(mipmap(&[36, 37, 38, 39, 40, 41, 42, 43]));
        assert_eq!(e, None);
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
        // Level 1 is 4 floats wide: a row past its end does not fit.
        let b = mipmap(&[0; 8]).event(
            "cuMemcpy3D_v2",
            copy(Dir::D2h, 0xb1, [0, 3, 0], [16, 1, 1], &[0; 16]),
            vec![vec![0; 16]],
        );
        assert!(run(b).1.is_some());
        // A level of a mipmapped array the replay never made stops it.
        let b = ArchiveBuilder::new(Platform::Nvidia).event(
            "cuMipmappedArrayGetLevel",
            Op::MipmapLevel {
                array: Addr(0xb1),
                mipmap: Addr(0xb0),
                level: 0,
            },
            vec![],
        );
        let e = run(b).1.expect("fatal");
        assert!(e.contains("0xb0"), "{e}");
    }

    #[test]
    fn array_planes_are_arrays_of_the_replay_s_own_array() {
        let (s, e) = run(planes(&[110, 111, 112, 113]));
        assert_eq!(e, None);
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
        // The luma plane's bytes are elsewhere: a download expecting them fails.
        let (s, _) = run(planes(&[10, 11, 12, 13]));
        assert_eq!(s.d2h_fail, 1);
        // A plane of an array the replay never made stops it.
        let b = ArchiveBuilder::new(Platform::Nvidia).event(
            "cuArrayGetPlane",
            Op::ArrayPlane {
                array: Addr(0xa1),
                parent: Addr(0xa0),
                plane: 1,
            },
            vec![],
        );
        let e = run(b).1.expect("fatal");
        assert!(
            e.contains("event 0 (cuArrayGetPlane)") && e.contains("0xa0"),
            "{e}"
        );
    }
}
