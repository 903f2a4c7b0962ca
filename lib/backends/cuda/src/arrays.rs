//! [`CudaDevice`]'s arrays, copies that name them, and texture and surface
//! objects: `cuArray3DCreate_v2`, `cuArrayGetPlane`, `cuArrayDestroy`,
//! `cuMipmappedArrayCreate`/`GetLevel`/`Destroy`,
//! `cuMemcpy3D_v2` (and
//! `cuMemcpy3DAsync_v2`) for every array copy, `cuTexObjectCreate`,
//! `cuSurfObjectCreate` and their destroys. The recorded descriptions are
//! CUDA's own structs (`CUDA_RESOURCE_DESC`, `CUDA_TEXTURE_DESC`,
//! `CUDA_RESOURCE_VIEW_DESC`), passed as recorded once the engine has put
//! the live array or pointer in the resource.

use std::ffi::c_void;

use cuda_api::array::{
    CUDA_ARRAY3D_DESCRIPTOR, RESOURCE_DESC_BYTES, RESOURCE_VIEW_DESC_BYTES, TEXTURE_DESC_BYTES,
};
use cuda_api::rect::CUDA_MEMCPY3D;
use cuda_api::{CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use hrr_replay::device::{
    ArrayCopy, ArrayDesc, ArraySide, Device, DeviceError, Handle, HostSide, description_words,
};

use crate::device::{CudaDevice, ptr};

/// A failure of the arguments, before any driver call.
fn refused(call: &'static str, message: String) -> DeviceError {
    DeviceError::Call {
        call,
        code: -1,
        message,
    }
}

/// One side of a `CUDA_MEMCPY3D`: memory type, host pointer, device
/// pointer, array, position (x in bytes), row pitch, rows per slice.
struct Side3d {
    ty: u32,
    host: u64,
    dev: u64,
    array: u64,
    pos: [u64; 3],
    pitch: u64,
    height: u64,
}

/// The recorded descriptor as `CUDA_ARRAY3D_DESCRIPTOR`.
fn descriptor(d: &ArrayDesc) -> CUDA_ARRAY3D_DESCRIPTOR {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    CUDA_ARRAY3D_DESCRIPTOR {
        width: size(d.extent[0]),
        height: size(d.extent[1]),
        depth: size(d.extent[2]),
        format: d.format as i32,
        num_channels: d.channels,
        flags: d.flags,
    }
}

/// The `CUDA_MEMCPY3D` of an array copy (`host`: the packed host side's
/// address, when a side is host memory): every replayed array copy, and
/// every array copy node of a replayed graph.
pub(crate) fn memcpy3d(
    dst: ArraySide,
    src: ArraySide,
    [w, h, d]: [u64; 3],
    host: Option<u64>,
) -> Result<CUDA_MEMCPY3D, DeviceError> {
    const CALL: &str = "cuMemcpy3D_v2";
    let side = |s: ArraySide| -> Result<Side3d, DeviceError> {
        Ok(match s {
            ArraySide::Array { array, pos, .. } => Side3d {
                ty: CU_MEMORYTYPE_ARRAY,
                host: 0,
                dev: 0,
                array,
                pos,
                pitch: 0,
                height: 0,
            },
            ArraySide::Device { ptr, pitch } => {
                // CUDA_MEMCPY3D's slice pitch is a number of rows.
                if pitch[0] != 0 && pitch[1] % pitch[0] != 0 {
                    return Err(refused(
                        CALL,
                        format!("slice pitch {} is not whole rows", pitch[1]),
                    ));
                }
                Side3d {
                    ty: CU_MEMORYTYPE_DEVICE,
                    host: 0,
                    dev: ptr,
                    array: 0,
                    pos: [0; 3],
                    pitch: pitch[0],
                    height: pitch[1].checked_div(pitch[0]).unwrap_or(0),
                }
            }
            ArraySide::Host => Side3d {
                ty: CU_MEMORYTYPE_HOST,
                host: host.unwrap_or(0),
                dev: 0,
                array: 0,
                pos: [0; 3],
                pitch: w,
                height: h,
            },
        })
    };
    let (s, t) = (side(src)?, side(dst)?);
    let n = |v: u64| v as usize;
    Ok(CUDA_MEMCPY3D {
        src_x_in_bytes: n(s.pos[0]),
        src_y: n(s.pos[1]),
        src_z: n(s.pos[2]),
        src_lod: 0,
        src_memory_type: s.ty,
        src_host: ptr(s.host),
        src_device: s.dev,
        src_array: ptr(s.array),
        reserved0: std::ptr::null_mut(),
        src_pitch: n(s.pitch),
        src_height: n(s.height),
        dst_x_in_bytes: n(t.pos[0]),
        dst_y: n(t.pos[1]),
        dst_z: n(t.pos[2]),
        dst_lod: 0,
        dst_memory_type: t.ty,
        dst_host: ptr(t.host),
        dst_device: t.dev,
        dst_array: ptr(t.array),
        reserved1: std::ptr::null_mut(),
        dst_pitch: n(t.pitch),
        dst_height: n(t.height),
        width_in_bytes: n(w),
        height: n(h),
        depth: n(d),
    })
}

impl CudaDevice {
    pub(crate) fn cu_array_create(&mut self, d: &ArrayDesc) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuArray3DCreate_v2";
        let f = self.optional(self.driver().api().cuArray3DCreate, CALL)?;
        let desc = descriptor(d);
        let mut array: *mut c_void = std::ptr::null_mut();
        // SAFETY: a descriptor of CUDA_ARRAY3D_DESCRIPTOR's layout, and an
        // out-parameter for the handle.
        self.call(CALL, |_| unsafe { f(&mut array, (&raw const desc).cast()) })?;
        Ok(array as u64)
    }

    pub(crate) fn cu_array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        const CALL: &str = "cuArrayDestroy";
        let f = self.optional(self.driver().api().cuArrayDestroy, CALL)?;
        // SAFETY: an array this backend created.
        self.call(CALL, |_| unsafe { f(ptr(array)) })
    }

    pub(crate) fn cu_mipmap_create(
        &mut self,
        d: &ArrayDesc,
        levels: u32,
    ) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuMipmappedArrayCreate";
        let f = self.optional(self.driver().api().cuMipmappedArrayCreate, CALL)?;
        let desc = descriptor(d);
        let mut mipmap: *mut c_void = std::ptr::null_mut();
        // SAFETY: a descriptor of CUDA_ARRAY3D_DESCRIPTOR's layout, and an
        // out-parameter for the handle.
        self.call(CALL, |_| unsafe {
            f(&mut mipmap, (&raw const desc).cast(), levels)
        })?;
        Ok(mipmap as u64)
    }

    pub(crate) fn cu_mipmap_level(
        &mut self,
        mipmap: Handle,
        level: u32,
    ) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuMipmappedArrayGetLevel";
        let f = self.optional(self.driver().api().cuMipmappedArrayGetLevel, CALL)?;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: a mipmapped array this backend created, and an out-parameter.
        self.call(CALL, |_| unsafe { f(&mut out, ptr(mipmap), level) })?;
        Ok(out as u64)
    }

    pub(crate) fn cu_mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        const CALL: &str = "cuMipmappedArrayDestroy";
        let f = self.optional(self.driver().api().cuMipmappedArrayDestroy, CALL)?;
        // SAFETY: a mipmapped array this backend created.
        self.call(CALL, |_| unsafe { f(ptr(mipmap)) })
    }

    pub(crate) fn cu_array_plane(
        &mut self,
        array: Handle,
        plane: u32,
    ) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuArrayGetPlane";
        let f = self.optional(self.driver().api().cuArrayGetPlane, CALL)?;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: an array this backend created, and an out-parameter.
        self.call(CALL, |_| unsafe { f(&mut out, ptr(array), plane) })?;
        Ok(out as u64)
    }

    pub(crate) fn cu_copy_array(&mut self, c: ArrayCopy<'_>) -> Result<(), DeviceError> {
        const CALL: &str = "cuMemcpy3D_v2";
        let api = self.driver().api();
        let sync = self.optional(api.cuMemcpy3D, CALL)?;
        let asynchronous = self.optional(api.cuMemcpy3DAsync, "cuMemcpy3DAsync_v2")?;
        let [w, h, d] = c.extent;
        let host = match &c.host {
            HostSide::None => None,
            HostSide::Src(b) => Some((b.as_ptr() as u64, b.len())),
            HostSide::Dst(b) => Some((b.as_ptr() as u64, b.len())),
        };
        if let Some((_, len)) = host
            && len as u64 != w.saturating_mul(h).saturating_mul(d)
        {
            return Err(refused(
                CALL,
                "the host buffer is not the copy's size".into(),
            ));
        }
        let p = memcpy3d(c.dst, c.src, c.extent, host.map(|(p, _)| p))?;
        let desc = (&raw const p).cast();
        match c.stream {
            // SAFETY: a description of CUDA_MEMCPY3D's layout naming live
            // arrays, translated device memory and a host buffer holding the
            // whole copy, alive for this call.
            None => self.call(CALL, |_| unsafe { sync(desc) })?,
            // SAFETY: as above; the host buffer is waited for below.
            Some(st) => self.call("cuMemcpy3DAsync_v2", |_| unsafe {
                asynchronous(desc, ptr(st))
            })?,
        }
        if let (Some(st), Some(_)) = (c.stream, host) {
            self.stream_sync(st)?;
        }
        Ok(())
    }

    pub(crate) fn cu_tex_create(
        &mut self,
        res: &[u8],
        tex: &[u8],
        view: Option<&[u8]>,
    ) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuTexObjectCreate";
        let f = self.optional(self.driver().api().cuTexObjectCreate, CALL)?;
        let res = description_words(CALL, res, RESOURCE_DESC_BYTES)?;
        let tex = description_words(CALL, tex, TEXTURE_DESC_BYTES)?;
        let view = view
            .map(|v| description_words(CALL, v, RESOURCE_VIEW_DESC_BYTES))
            .transpose()?;
        let mut obj = 0u64;
        // SAFETY: the recorded structs, whole and aligned; the resource holds
        // the live array or pointer.
        self.call(CALL, |_| unsafe {
            f(
                &mut obj,
                res.as_ptr().cast(),
                tex.as_ptr().cast(),
                view.as_ref()
                    .map_or(std::ptr::null(), |v| v.as_ptr().cast()),
            )
        })?;
        Ok(obj)
    }

    pub(crate) fn cu_surf_create(&mut self, res: &[u8]) -> Result<Handle, DeviceError> {
        const CALL: &str = "cuSurfObjectCreate";
        let f = self.optional(self.driver().api().cuSurfObjectCreate, CALL)?;
        let res = description_words(CALL, res, RESOURCE_DESC_BYTES)?;
        let mut obj = 0u64;
        // SAFETY: the recorded resource, whole and aligned, holding the live
        // array or pointer.
        self.call(CALL, |_| unsafe { f(&mut obj, res.as_ptr().cast()) })?;
        Ok(obj)
    }

    pub(crate) fn cu_object_destroy(
        &mut self,
        obj: Handle,
        surface: bool,
    ) -> Result<(), DeviceError> {
        let api = self.driver().api();
        if surface {
            let f = self.optional(api.cuSurfObjectDestroy, "cuSurfObjectDestroy")?;
            // SAFETY: an object this backend created.
            self.call("cuSurfObjectDestroy", |_| unsafe { f(obj) })
        } else {
            let f = self.optional(api.cuTexObjectDestroy, "cuTexObjectDestroy")?;
            // SAFETY: an object this backend created.
            self.call("cuTexObjectDestroy", |_| unsafe { f(obj) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_copies_name_the_array_and_a_packed_host_side() {
        let array = ArraySide::Array {
            array: 0xa1,
            pos: [8, 1, 0],
            element: 4,
        };
        let c = memcpy3d(ArraySide::Host, array, [16, 2, 1], Some(0x1000)).unwrap();
        assert_eq!(
            (
                c.src_memory_type,
                c.src_array as u64,
                c.src_x_in_bytes,
                c.src_y
            ),
            (CU_MEMORYTYPE_ARRAY, 0xa1, 8, 1)
        );
        assert_eq!(
            (
                c.dst_memory_type,
                c.dst_host as u64,
                c.dst_pitch,
                c.dst_height
            ),
            (CU_MEMORYTYPE_HOST, 0x1000, 16, 2)
        );
        let dev = ArraySide::Device {
            ptr: 0x7000,
            pitch: [64, 100],
        };
        let e = memcpy3d(dev, array, [16, 2, 1], None).unwrap_err();
        assert!(e.to_string().contains("not whole rows"), "{e}");
    }

    #[test]
    fn descriptions_are_copied_whole_and_short_ones_refused() {
        let bytes: Vec<u8> = (0..144u8).collect();
        let w = description_words("t", &bytes, RESOURCE_DESC_BYTES).unwrap();
        assert_eq!(w.len(), 18);
        assert_eq!(w[1], u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]));
        let e = description_words("t", &bytes[..100], TEXTURE_DESC_BYTES).unwrap_err();
        assert!(e.to_string().contains("100 bytes, 104 needed"), "{e}");
    }
}
