//! Recorded handlers of arrays, texture and surface objects: array
//! creation and destruction (`array_create`, `array_destroy`, the
//! descriptor as the driver-style format and channel count), mipmapped
//! arrays and their levels (`mipmap_create`, `mipmap_level`,
//! `mipmap_destroy`), copies to,
//! from and between arrays (`memcpy_array`, the host side's packed bytes as
//! the blob), and texture and surface objects (`tex_create`, `surf_create`,
//! their descriptions as bytes, and their destroys). `hipMemcpy3D` and
//! `hipMemcpyParam2D` naming an array come here from [`super::rect`].

use std::ffi::c_void;

use api_table::Entry;
use hip_api::args;
use hip_api::array::{
    Array3DDescriptor, ArrayCopy as HipArrayCopy, ArrayDescriptor, RESOURCE_DESC_BYTES,
    RESOURCE_VIEW_DESC_BYTES, Side, TEXTURE_DESC_BYTES,
};
use hip_api::types::hipChannelFormatDesc;
use hrr_core::Dir;

use super::memory::sync_stream;
use super::{intercept, resolve_dir};
use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError, HipStream};
use hrr_interpose::call_args::{bytes, gather, out_addr};
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_interpose::unrecorded::Counter;
use hrr_recorder::record::arrays::{ArrayCopyRec, ArrayShape, ArraySide};
use hrr_recorder::record::recorder::{Order, Recorder};

// ---------------------------------------------------------------- arrays

/// The recorded shape of a runtime channel description (`hipMallocArray`):
/// format 0 when HIP defines none for it (the replay then refuses it).
///
/// # Safety
/// `desc` is null or points at a channel description.
unsafe fn shape_of(
    desc: *const hipChannelFormatDesc,
    extent: [usize; 3],
    flags: u32,
) -> ArrayShape {
    // SAFETY: per the contract.
    let (format, channels) = unsafe { desc.as_ref() }
        .and_then(hipChannelFormatDesc::format)
        .unwrap_or((0, 0));
    ArrayShape {
        format: format as u32,
        channels,
        extent: extent.map(|n| n as u64),
        flags,
    }
}

/// The recorded shape of a driver-style 3D descriptor (`hipArray3DCreate`,
/// level 0 of `hipMipmappedArrayCreate`).
///
/// # Safety
/// `desc` is null or points at a `HIP_ARRAY3D_DESCRIPTOR`.
unsafe fn shape_3d(desc: *const Array3DDescriptor) -> ArrayShape {
    // SAFETY: per the contract.
    let d = unsafe { desc.as_ref() }.copied().unwrap_or_default();
    ArrayShape {
        format: d.format as u32,
        channels: d.channels,
        extent: [d.width as u64, d.height as u64, d.depth as u64],
        flags: d.flags,
    }
}

#[inline]
pub unsafe fn hipMallocArray(
    real: &'static Real<args::hipMallocArray>,
    a: args::hipMallocArray,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success, when the runtime wrote it; the
            // description is the application's.
            let (h, shape) = (
                out_addr(ret, a.array),
                shape_of(a.desc, [a.width, a.height, 0], a.flags),
            );
            r.array_create(api, ret, h, shape)
        })
    }
}

#[inline]
pub unsafe fn hipMalloc3DArray(
    real: &'static Real<args::hipMalloc3DArray>,
    a: args::hipMalloc3DArray,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            let e = a.extent;
            // SAFETY: as in `hipMallocArray`.
            let (h, shape) = (
                out_addr(ret, a.array),
                shape_of(a.desc, [e.width, e.height, e.depth], a.flags),
            );
            r.array_create(api, ret, h, shape)
        })
    }
}

#[inline]
pub unsafe fn hipArrayCreate(
    real: &'static Real<args::hipArrayCreate>,
    a: args::hipArrayCreate,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: a `HIP_ARRAY_DESCRIPTOR` the call read, when non-null.
            let d = a
                .pAllocateArray
                .cast::<ArrayDescriptor>()
                .as_ref()
                .copied()
                .unwrap_or_default();
            let shape = ArrayShape {
                format: d.format as u32,
                channels: d.channels,
                extent: [d.width as u64, d.height as u64, 0],
                flags: 0,
            };
            // SAFETY: read only after success.
            r.array_create(api, ret, out_addr(ret, a.pHandle), shape)
        })
    }
}

#[inline]
pub unsafe fn hipArray3DCreate(
    real: &'static Real<args::hipArray3DCreate>,
    a: args::hipArray3DCreate,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: a `HIP_ARRAY3D_DESCRIPTOR` the call read, when non-null.
            let shape = shape_3d(a.pAllocateArray.cast());
            // SAFETY: read only after success.
            r.array_create(api, ret, out_addr(ret, a.array), shape)
        })
    }
}

#[inline]
pub unsafe fn hipFreeArray(
    real: &'static Real<args::hipFreeArray>,
    a: args::hipFreeArray,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.array_destroy(api, ret, a.array as u64)
        })
    }
}

#[inline]
pub unsafe fn hipArrayDestroy(
    real: &'static Real<args::hipArrayDestroy>,
    a: args::hipArrayDestroy,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.array_destroy(api, ret, a.array as u64)
        })
    }
}

// ---------------------------------------------------------------- mipmapped arrays

#[inline]
pub unsafe fn hipMallocMipmappedArray(
    real: &'static Real<args::hipMallocMipmappedArray>,
    a: args::hipMallocMipmappedArray,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            let e = a.extent;
            // SAFETY: as in `hipMallocArray`.
            let (h, shape) = (
                out_addr(ret, a.mipmappedArray),
                shape_of(a.desc, [e.width, e.height, e.depth], a.flags),
            );
            r.mipmap_create(api, ret, h, shape, a.numLevels)
        })
    }
}

#[inline]
pub unsafe fn hipMipmappedArrayCreate(
    real: &'static Real<args::hipMipmappedArrayCreate>,
    a: args::hipMipmappedArrayCreate,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: a `HIP_ARRAY3D_DESCRIPTOR` the call read, when non-null.
            let shape = shape_3d(a.pMipmappedArrayDesc.cast());
            // SAFETY: read only after success.
            let h = out_addr(ret, a.pHandle);
            r.mipmap_create(api, ret, h, shape, a.numMipmapLevels)
        })
    }
}

#[inline]
pub unsafe fn hipGetMipmappedArrayLevel(
    real: &'static Real<args::hipGetMipmappedArrayLevel>,
    a: args::hipGetMipmappedArrayLevel,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success.
            let h = out_addr(ret, a.levelArray);
            r.mipmap_level(api, ret, h, a.mipmappedArray as u64, a.level)
        })
    }
}

#[inline]
pub unsafe fn hipMipmappedArrayGetLevel(
    real: &'static Real<args::hipMipmappedArrayGetLevel>,
    a: args::hipMipmappedArrayGetLevel,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success.
            let h = out_addr(ret, a.pLevelArray);
            r.mipmap_level(api, ret, h, a.hMipMappedArray as u64, a.level)
        })
    }
}

#[inline]
pub unsafe fn hipFreeMipmappedArray(
    real: &'static Real<args::hipFreeMipmappedArray>,
    a: args::hipFreeMipmappedArray,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.mipmap_destroy(api, ret, a.mipmappedArray as u64)
        })
    }
}

#[inline]
pub unsafe fn hipMipmappedArrayDestroy(
    real: &'static Real<args::hipMipmappedArrayDestroy>,
    a: args::hipMipmappedArrayDestroy,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.mipmap_destroy(api, ret, a.hMipmappedArray as u64)
        })
    }
}

// ---------------------------------------------------------------- copies

/// The recorded form of a copy's side.
fn side(s: Side) -> ArraySide {
    match s {
        Side::Array { array, pos } => ArraySide::Array {
            array: array as u64,
            pos: pos.map(|p| p as u64),
        },
        Side::Linear { ptr, pitch } => ArraySide::Linear {
            ptr: ptr as u64,
            pitch: pitch.map(|p| p as u64),
        },
    }
}

/// The shared body of every copy that names an array: the copy decoded
/// before the call (`decode`, given the recorder for arrays' element
/// sizes; `None` forwards and counts it), the direction resolved (an array
/// is device memory), the packed host side gathered after a successful
/// call.
///
/// # Safety
/// `a` holds the application's arguments; `decode` describes its copy.
pub(super) unsafe fn copy<A: Entry<Ret = HipError>>(
    real: &Real<A>,
    calls: &'static Counter,
    a: A,
    decode: impl FnOnce(&Recorder) -> Option<HipArrayCopy>,
    stream: Option<HipStream>,
) -> HipError {
    let api = A::NAME;
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let Some(g) = Guard::enter(api) else {
        // SAFETY: per this function's contract.
        return unsafe { a.call(f) };
    };
    let Some(Some(c)) = g.run(decode) else {
        // SAFETY: per this function's contract.
        let ret = unsafe { a.call(f) };
        calls.bump();
        return ret;
    };
    // A linear side's address decides a `hipMemcpyDefault`; an array is
    // device memory.
    let addr = |s: Side| match s {
        Side::Linear { ptr, .. } => ptr as u64,
        Side::Array { .. } => 0,
    };
    let dir = g
        .run(|r| match c.kind {
            hip::MEMCPY_DEFAULT => {
                let dev = |s: Side| match s {
                    Side::Array { .. } => true,
                    Side::Linear { ptr, .. } => r.is_device(ptr as u64).unwrap_or(true),
                };
                Dir::between(dev(c.src), dev(c.dst))
            }
            k => resolve_dir(r, k, addr(c.dst), addr(c.src)),
        })
        .unwrap_or(Dir::H2h);
    let rec = ArrayCopyRec {
        dir,
        dst: side(c.dst),
        src: side(c.src),
        extent: c.extent.map(|e| e as u64),
        stream: stream.map(|s| s as u64),
    };
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    g.run(|r| {
        let data = match (dir, rec.src, rec.dst) {
            _ if ret != hip::err::SUCCESS => None,
            (Dir::H2d, ArraySide::Linear { ptr, pitch }, _) if r.is_device(ptr) != Some(true) => {
                // SAFETY: the runtime accepted and read every row at the source.
                Some(unsafe { gather(ptr, pitch, rec.extent) })
            }
            (Dir::D2h, _, ArraySide::Linear { ptr, pitch }) if r.is_device(ptr) != Some(true) => {
                if let Some(s) = stream {
                    sync_stream(s);
                }
                // SAFETY: the runtime wrote every row at the destination, and
                // the copy has completed.
                Some(unsafe { gather(ptr, pitch, rec.extent) })
            }
            _ => None,
        };
        r.memcpy_array(api, ret, &rec, data.as_deref());
    });
    ret
}

/// A 2D copy between an array at (`x` bytes, `y`) and linear memory.
fn copy_2d(
    array: *const c_void,
    (x, y): (usize, usize),
    (other, pitch): (usize, usize),
    (width, height): (usize, usize),
    (to_array, kind): (bool, hip::HipMemcpyKind),
) -> HipArrayCopy {
    let a = Side::Array {
        array: array as usize,
        pos: [x, y, 0],
    };
    let l = Side::Linear {
        ptr: other,
        pitch: [pitch, pitch.saturating_mul(height)],
    };
    let (dst, src) = if to_array { (a, l) } else { (l, a) };
    HipArrayCopy {
        dst,
        src,
        extent: [width, height, 1],
        kind,
    }
}

/// `NAME: COPY, stream STREAM;` in terms of the arguments `a`: a copy that
/// names an array, recorded as `memcpy_array`.
macro_rules! array_copies {
    ($a:ident; $($name:ident: $copy:expr, stream $stream:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            static CALLS: Counter = Counter::new(<args::$name as Entry>::NAME);
            let c: HipArrayCopy = $copy;
            // SAFETY: the export's contract: the application's arguments,
            // which describe this copy.
            unsafe { copy(real, &CALLS, $a, |_| Some(c), $stream) }
        }
    )*};
}

array_copies! { a;
    hipMemcpy2DToArray: copy_2d(a.dst.cast(), (a.wOffset, a.hOffset), (a.src as usize, a.spitch), (a.width, a.height), (true, a.kind)), stream None;
    hipMemcpy2DToArrayAsync: copy_2d(a.dst.cast(), (a.wOffset, a.hOffset), (a.src as usize, a.spitch), (a.width, a.height), (true, a.kind)), stream Some(a.stream);
    hipMemcpy2DFromArray: copy_2d(a.src.cast(), (a.wOffset, a.hOffset), (a.dst as usize, a.dpitch), (a.width, a.height), (false, a.kind)), stream None;
    hipMemcpy2DFromArrayAsync: copy_2d(a.src.cast(), (a.wOffset, a.hOffset), (a.dst as usize, a.dpitch), (a.width, a.height), (false, a.kind)), stream Some(a.stream);
    hipMemcpyToArray: copy_2d(a.dst.cast(), (a.wOffset, a.hOffset), (a.src as usize, a.count), (a.count, 1), (true, a.kind)), stream None;
    hipMemcpyFromArray: copy_2d(a.srcArray.cast(), (a.wOffset, a.hOffset), (a.dst as usize, a.count), (a.count, 1), (false, a.kind)), stream None;
    hipMemcpyHtoA: copy_2d(a.dstArray.cast(), (a.dstOffset, 0), (a.srcHost as usize, a.count), (a.count, 1), (true, hip::MEMCPY_HOST_TO_DEVICE)), stream None;
    hipMemcpyAtoH: copy_2d(a.srcArray.cast(), (a.srcOffset, 0), (a.dst as usize, a.count), (a.count, 1), (false, hip::MEMCPY_DEVICE_TO_HOST)), stream None;
}

// ---------------------------------------------------------------- objects

#[inline]
pub unsafe fn hipCreateTextureObject(
    real: &'static Real<args::hipCreateTextureObject>,
    a: args::hipCreateTextureObject,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: the descriptions the call read (whole structs), the
            // handle written on success.
            let (obj, res, tex, view) = (
                out_addr(ret, a.pTexObject),
                bytes(a.pResDesc.cast(), RESOURCE_DESC_BYTES),
                bytes(a.pTexDesc.cast(), TEXTURE_DESC_BYTES),
                bytes(a.pResViewDesc.cast(), RESOURCE_VIEW_DESC_BYTES),
            );
            let view = (!view.is_empty()).then_some(view);
            r.object_create(api, ret, obj, res, Some((tex, view)))
        })
    }
}

#[inline]
pub unsafe fn hipDestroyTextureObject(
    real: &'static Real<args::hipDestroyTextureObject>,
    a: args::hipDestroyTextureObject,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.object_destroy(api, ret, a.textureObject as u64, false)
        })
    }
}

#[inline]
pub unsafe fn _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(
    real: &'static Real<args::_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc>,
    a: args::_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: the description the call read, the handle written on
            // success.
            let (obj, res) = (
                out_addr(ret, a.pSurfObject),
                bytes(a.pResDesc.cast(), RESOURCE_DESC_BYTES),
            );
            r.object_create(api, ret, obj, res, None)
        })
    }
}

#[inline]
pub unsafe fn _Z23hipDestroySurfaceObjectP13__hip_surface(
    real: &'static Real<args::_Z23hipDestroySurfaceObjectP13__hip_surface>,
    a: args::_Z23hipDestroySurfaceObjectP13__hip_surface,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.object_destroy(api, ret, a.surfaceObject as u64, true)
        })
    }
}
