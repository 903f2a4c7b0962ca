//! [`HipDevice`]'s arrays, copies that name them, and texture and surface
//! objects: `hipArray3DCreate`, `hipArrayDestroy`, `hipMipmappedArrayCreate`
//! (`GetLevel`, `Destroy`), `hipMemcpy3D`(`Async`),
//! `hipCreateTextureObject`, `hipCreateSurfaceObject` and their destroys.
//! The recorded descriptions are HIP's own structs (`hipResourceDesc`,
//! `hipTextureDesc`, `hipResourceViewDesc`), passed as recorded once the
//! engine has put the live array or pointer in the resource.

use std::ffi::c_void;

use hip_api::array::{
    Array3DDescriptor, RESOURCE_DESC_BYTES, RESOURCE_VIEW_DESC_BYTES, TEXTURE_DESC_BYTES,
};
use hip_api::types::{
    hipArray, hipExtent, hipMemcpy3DParms, hipMipmappedArray, hipPitchedPtr, hipPos,
};
use hrr_replay::device::{
    ArrayCopy, ArrayDesc, ArraySide, DeviceError, Handle, HostSide, description_words, unsupported,
};

use crate::ffi::{self, ArrayApi, MipmapApi};
use crate::hip_device::{HipDevice, ptr};

/// The recorded descriptor as `HIP_ARRAY3D_DESCRIPTOR`.
fn descriptor(d: &ArrayDesc) -> Array3DDescriptor {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Array3DDescriptor {
        width: size(d.extent[0]),
        height: size(d.extent[1]),
        depth: size(d.extent[2]),
        format: d.format as i32,
        channels: d.channels,
        flags: d.flags,
    }
}

impl HipDevice {
    fn array_api(&self, call: &'static str) -> Result<&ArrayApi, DeviceError> {
        self.rt.arrays.as_ref().ok_or_else(|| unsupported(call))
    }

    pub(crate) fn hip_array_create(&mut self, d: &ArrayDesc) -> Result<Handle, DeviceError> {
        let api = self.array_api("hipArray3DCreate")?;
        let desc = descriptor(d);
        let mut array: *mut hipArray = std::ptr::null_mut();
        // SAFETY: a descriptor of HIP_ARRAY3D_DESCRIPTOR's layout, and an
        // out-parameter for the handle.
        let code = unsafe { (api.hipArray3DCreate)(&mut array, (&raw const desc).cast()) };
        self.check("hipArray3DCreate", code)?;
        Ok(array as u64)
    }

    fn mipmap_api(&self, call: &'static str) -> Result<&MipmapApi, DeviceError> {
        self.rt.mipmaps.as_ref().ok_or_else(|| unsupported(call))
    }

    pub(crate) fn hip_mipmap_create(
        &mut self,
        d: &ArrayDesc,
        levels: u32,
    ) -> Result<Handle, DeviceError> {
        let api = self.mipmap_api("hipMipmappedArrayCreate")?;
        let mut desc = descriptor(d);
        let mut mipmap: *mut hipMipmappedArray = std::ptr::null_mut();
        // SAFETY: a descriptor of HIP_ARRAY3D_DESCRIPTOR's layout, and an
        // out-parameter for the handle.
        let code =
            unsafe { (api.hipMipmappedArrayCreate)(&mut mipmap, (&raw mut desc).cast(), levels) };
        self.check("hipMipmappedArrayCreate", code)?;
        Ok(mipmap as u64)
    }

    pub(crate) fn hip_mipmap_level(
        &mut self,
        mipmap: Handle,
        level: u32,
    ) -> Result<Handle, DeviceError> {
        let api = self.mipmap_api("hipMipmappedArrayGetLevel")?;
        let mut array: *mut hipArray = std::ptr::null_mut();
        // SAFETY: a mipmapped array this backend created, and an
        // out-parameter for the level's handle.
        let code = unsafe {
            (api.hipMipmappedArrayGetLevel)(&mut array, mipmap as usize as *mut _, level)
        };
        self.check("hipMipmappedArrayGetLevel", code)?;
        Ok(array as u64)
    }

    pub(crate) fn hip_mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        let api = self.mipmap_api("hipMipmappedArrayDestroy")?;
        // SAFETY: a mipmapped array this backend created.
        let code = unsafe { (api.hipMipmappedArrayDestroy)(mipmap as usize as *mut _) };
        self.check("hipMipmappedArrayDestroy", code)
    }

    pub(crate) fn hip_array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        let api = self.array_api("hipArrayDestroy")?;
        // SAFETY: an array this backend created.
        let code = unsafe { (api.hipArrayDestroy)(array as usize as *mut hipArray) };
        self.check("hipArrayDestroy", code)
    }

    pub(crate) fn hip_copy_array(&mut self, c: ArrayCopy<'_>) -> Result<(), DeviceError> {
        let api = self.array_api("hipMemcpy3D")?;
        let [w, h, d] = c.extent;
        // `hipMemcpy3D` counts the extent and an array's x in elements.
        let element = [c.dst, c.src]
            .into_iter()
            .find_map(|s| match s {
                ArraySide::Array { element, .. } => Some(element.max(1)),
                _ => None,
            })
            .unwrap_or(1);
        let (host, host_len) = match &c.host {
            HostSide::None => (0u64, 0usize),
            HostSide::Src(b) => (b.as_ptr() as u64, b.len()),
            HostSide::Dst(b) => (b.as_ptr() as u64, b.len()),
        };
        if host_len as u64 != w.saturating_mul(h).saturating_mul(d) && host != 0 {
            return Err(DeviceError::Call {
                call: "hipMemcpy3D",
                code: -1,
                message: "the host buffer is not the copy's size".into(),
            });
        }
        let zero = hipPos { x: 0, y: 0, z: 0 };
        let side = |s: ArraySide| -> Result<(*mut hipArray, hipPos, hipPitchedPtr), DeviceError> {
            let pitched = |p: u64, pitch: [u64; 2]| {
                let ysize = pitch[1].checked_div(pitch[0]).unwrap_or(0);
                hipPitchedPtr {
                    ptr: ptr(p),
                    pitch: pitch[0] as usize,
                    xsize: w as usize,
                    ysize: ysize as usize,
                }
            };
            Ok(match s {
                ArraySide::Array { array, pos, .. } => (
                    array as usize as *mut hipArray,
                    hipPos {
                        x: (pos[0] / element) as usize,
                        y: pos[1] as usize,
                        z: pos[2] as usize,
                    },
                    pitched(0, [0, 0]),
                ),
                ArraySide::Device { ptr: p, pitch } => {
                    if pitch[0] != 0 && pitch[1] % pitch[0] != 0 {
                        return Err(DeviceError::Call {
                            call: "hipMemcpy3D",
                            code: -1,
                            message: format!("slice pitch {} is not whole rows", pitch[1]),
                        });
                    }
                    (std::ptr::null_mut(), zero, pitched(p, pitch))
                }
                ArraySide::Host => (std::ptr::null_mut(), zero, pitched(host, [w, w * h])),
            })
        };
        let (dst_array, dst_pos, dst_ptr) = side(c.dst)?;
        let (src_array, src_pos, src_ptr) = side(c.src)?;
        let kind = match (&c.host, c.dst, c.src) {
            (HostSide::Src(_), ..) => ffi::MEMCPY_HOST_TO_DEVICE,
            (HostSide::Dst(_), ..) => ffi::MEMCPY_DEVICE_TO_HOST,
            _ => ffi::MEMCPY_DEVICE_TO_DEVICE,
        };
        let p = hipMemcpy3DParms {
            srcArray: src_array,
            srcPos: src_pos,
            srcPtr: src_ptr,
            dstArray: dst_array,
            dstPos: dst_pos,
            dstPtr: dst_ptr,
            extent: hipExtent {
                width: (w / element) as usize,
                height: h as usize,
                depth: d as usize,
            },
            kind,
        };
        let borrowed = !matches!(c.host, HostSide::None);
        // SAFETY: a description of live arrays, translated device memory and
        // a host buffer holding the whole copy, alive for this call (waited
        // for below when it is asynchronous).
        let code = unsafe {
            match c.stream {
                None => (api.hipMemcpy3D)(&p),
                Some(s) => (api.hipMemcpy3DAsync)(&p, ptr(s)),
            }
        };
        self.check("hipMemcpy3D", code)?;
        if let (Some(s), true) = (c.stream, borrowed) {
            // SAFETY: a stream handle the runtime gave.
            let code = unsafe { (self.rt.api.hipStreamSynchronize)(ptr(s)) };
            self.check("hipStreamSynchronize", code)?;
        }
        Ok(())
    }

    pub(crate) fn hip_tex_create(
        &mut self,
        res: &[u8],
        tex: &[u8],
        view: Option<&[u8]>,
    ) -> Result<Handle, DeviceError> {
        const CALL: &str = "hipCreateTextureObject";
        let api = self.array_api(CALL)?;
        let res = description_words(CALL, res, RESOURCE_DESC_BYTES)?;
        let tex = description_words(CALL, tex, TEXTURE_DESC_BYTES)?;
        let view = view
            .map(|v| description_words(CALL, v, RESOURCE_VIEW_DESC_BYTES))
            .transpose()?;
        let mut obj: *mut c_void = std::ptr::null_mut();
        // SAFETY: the recorded structs, whole and aligned; the resource holds
        // the live array or pointer.
        let code = unsafe {
            (api.hipCreateTextureObject)(
                &mut obj,
                res.as_ptr().cast(),
                tex.as_ptr().cast(),
                view.as_ref()
                    .map_or(std::ptr::null(), |v| v.as_ptr().cast()),
            )
        };
        self.check(CALL, code)?;
        Ok(obj as u64)
    }

    pub(crate) fn hip_surf_create(&mut self, res: &[u8]) -> Result<Handle, DeviceError> {
        const CALL: &str = "hipCreateSurfaceObject";
        let api = self.array_api(CALL)?;
        let res = description_words(CALL, res, RESOURCE_DESC_BYTES)?;
        let mut obj: *mut c_void = std::ptr::null_mut();
        // SAFETY: the recorded resource, whole and aligned, holding the live
        // array or pointer.
        let code = unsafe {
            (api._Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc)(
                &mut obj,
                res.as_ptr().cast(),
            )
        };
        self.check(CALL, code)?;
        Ok(obj as u64)
    }

    pub(crate) fn hip_object_destroy(
        &mut self,
        obj: Handle,
        surface: bool,
    ) -> Result<(), DeviceError> {
        let api = self.array_api("hipDestroyTextureObject")?;
        // SAFETY: an object this backend created.
        let code = unsafe {
            if surface {
                (api._Z23hipDestroySurfaceObjectP13__hip_surface)(ptr(obj))
            } else {
                (api.hipDestroyTextureObject)(ptr(obj))
            }
        };
        self.check("hipDestroyTextureObject", code)
    }
}
