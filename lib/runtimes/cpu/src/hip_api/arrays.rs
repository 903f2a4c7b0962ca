//! Arrays, texture and surface objects.
//!
//! An array is device memory laid out densely (rows of `width × element`
//! bytes, slices of `height` rows) behind a ROCm 5.2 `struct hipArray`
//! header ([`ArrayHeader`]), so copies to, from and between arrays are the
//! 2D/3D copies of [`super::rect`] over that memory, on the same streams.
//! A texture or surface object is a pointer to a [`CpuTexture`], which CPU
//! kernels read through `hrr_cpu_texture.h` (point sampling, coordinates
//! clamped; no filtering, normalised coordinates or border colours).
//! A mipmapped array is its levels, arrays of halved extents; a texture
//! over one reads its level 0 (no level of detail).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, PoisonError};

use ::hip_api::args;
use ::hip_api::array::{
    Array3DDescriptor, ArrayCopy, ArrayDescriptor, ArrayHeader, RESOURCE_DESC_BYTES,
    RESOURCE_TYPE_ARRAY, RESOURCE_TYPE_LINEAR, RESOURCE_TYPE_MIPMAPPED_ARRAY,
    RESOURCE_TYPE_PITCH2D, Side, element_bytes,
};
use ::hip_api::rect::RectCopy;
use ::hip_api::types::{hipArray, hipChannelFormatDesc, hipMemcpy3DParms, hipMipmappedArray};

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipError, HipStream, err};
use crate::memory::DevKind;
use crate::runtime::rt;

/// What the runtime knows of a live array.
#[derive(Clone, Copy, Debug)]
struct ArrayInfo {
    /// Its memory (null for an empty array).
    data: usize,
    /// Width, height, depth in elements, each at least 1.
    extent: [usize; 3],
    /// Bytes per element.
    element: usize,
}

impl ArrayInfo {
    fn pitch(&self) -> [usize; 2] {
        let row = self.extent[0] * self.element;
        [row, row * self.extent[1]]
    }
}

/// The texture object CPU kernels read (`hrr_cpu_texture` in
/// `tests/workloads/include/hrr_cpu_texture.h`, the same layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CpuTexture {
    /// The first element.
    pub data: usize,
    /// Width, height, depth in elements.
    pub extent: [u64; 3],
    /// Row and slice pitch in bytes.
    pub pitch: [u64; 2],
    /// Bytes per element.
    pub element: u32,
    /// `hipResourceType` of the resource.
    pub resource: u32,
}

/// Live arrays by handle, live objects by handle (their boxes), and live
/// mipmapped arrays by handle (their levels' arrays).
#[derive(Default)]
struct Registry {
    arrays: HashMap<usize, ArrayInfo>,
    objects: HashMap<usize, Box<CpuTexture>>,
    mipmaps: HashMap<usize, Vec<usize>>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut g = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    f(g.get_or_insert_with(Registry::default))
}

fn array_info(a: usize) -> Result<ArrayInfo, HipError> {
    with(|r| r.arrays.get(&a).copied()).ok_or(err::INVALID_VALUE)
}

/// Makes an array of `extent` elements (a 0 dimension counting as 1).
fn create(
    out: *mut *mut hipArray,
    [w, h, d]: [usize; 3],
    format: i32,
    channels: u32,
    drv: bool,
) -> Result<(), HipError> {
    if out.is_null() || w == 0 {
        return Err(err::INVALID_VALUE);
    }
    let element = element_bytes(format, channels).ok_or(err::INVALID_VALUE)?;
    let extent = [w, h.max(1), d.max(1)];
    let size = extent
        .iter()
        .try_fold(element, |s, &n| s.checked_mul(n))
        .ok_or(err::OUT_OF_MEMORY)?;
    let data = rt()?.mem().alloc_device(size, DevKind::Device, 0)?;
    let narrow = |n: usize| u32::try_from(n).map_err(|_| err::INVALID_VALUE);
    let header = Box::new(ArrayHeader {
        data: data as *mut c_void,
        desc: hipChannelFormatDesc::of_format(format, channels),
        type_: 0,
        width: narrow(w)?,
        height: narrow(h)?,
        depth: narrow(d)?,
        format,
        channels,
        is_drv: drv,
        texture_type: 0,
    });
    let handle = Box::into_raw(header);
    with(|r| {
        r.arrays.insert(
            handle as usize,
            ArrayInfo {
                data,
                extent,
                element,
            },
        )
    });
    // SAFETY: HIP contract for the out-parameter (checked non-null).
    unsafe { put(out, handle.cast()) }
}

/// Destroys an array made by [`create`].
fn destroy(array: *mut hipArray) -> Result<(), HipError> {
    let a = array as usize;
    let info = with(|r| r.arrays.remove(&a)).ok_or(err::INVALID_VALUE)?;
    let rt = rt()?;
    let _ = rt.device_synchronize();
    rt.mem().free_device(info.data, &[DevKind::Device])?;
    // SAFETY: `a` was made by `Box::into_raw` in `create` and is removed
    // from the registry just now, so it is freed once.
    drop(unsafe { Box::from_raw(array.cast::<ArrayHeader>()) });
    Ok(())
}

/// Makes a mipmapped array of `levels` levels, level 0 of `extent`
/// elements, each next level of half the last's extent (rounded down, at
/// least 1, in the dimensions the array has).
fn create_mipmap(
    out: *mut *mut hipMipmappedArray,
    extent: [usize; 3],
    (format, channels): (i32, u32),
    levels: u32,
    drv: bool,
) -> Result<(), HipError> {
    if out.is_null() || levels == 0 || extent[0] == 0 {
        return Err(err::INVALID_VALUE);
    }
    let mut made: Vec<usize> = Vec::with_capacity(levels as usize);
    for l in 0..levels {
        let e = extent.map(|n| if n == 0 { 0 } else { (n >> l.min(63)).max(1) });
        let mut a: *mut hipArray = std::ptr::null_mut();
        if let Err(e) = create(&mut a, e, format, channels, drv) {
            for a in made {
                let _ = destroy(a as *mut hipArray);
            }
            return Err(e);
        }
        made.push(a as usize);
    }
    // The handle: a box of its own, so that it is unique and never an array.
    let handle = Box::into_raw(Box::new(0u64)) as usize;
    with(|r| r.mipmaps.insert(handle, made));
    // SAFETY: HIP contract for the out-parameter (checked non-null).
    unsafe { put(out, handle as *mut hipMipmappedArray) }
}

/// Level `level` of a live mipmapped array.
fn mipmap_level(
    out: *mut *mut hipArray,
    mipmap: *const hipMipmappedArray,
    level: u32,
) -> Result<(), HipError> {
    let a = with(|r| {
        r.mipmaps
            .get(&(mipmap as usize))
            .and_then(|l| l.get(level as usize).copied())
    })
    .ok_or(err::INVALID_VALUE)?;
    // SAFETY: HIP contract for the out-parameter (`put` checks non-null).
    unsafe { put(out, a as *mut hipArray) }
}

/// Destroys a mipmapped array made by [`create_mipmap`], its levels with it.
fn destroy_mipmap(mipmap: *mut hipMipmappedArray) -> Result<(), HipError> {
    let levels = with(|r| r.mipmaps.remove(&(mipmap as usize))).ok_or(err::INVALID_VALUE)?;
    for a in levels {
        destroy(a as *mut hipArray)?;
    }
    // SAFETY: made by `Box::into_raw` in `create_mipmap`, removed from the
    // registry just now, so freed once.
    drop(unsafe { Box::from_raw(mipmap.cast::<u64>()) });
    Ok(())
}

pub(super) unsafe fn hipMallocMipmappedArray(a: args::hipMallocMipmappedArray) -> HipError {
    guard(|| {
        // SAFETY: HIP contract: `desc` points at a channel description.
        let desc = unsafe { a.desc.as_ref() }.ok_or(err::INVALID_VALUE)?;
        let format = desc.format().ok_or(err::INVALID_VALUE)?;
        let e = a.extent;
        create_mipmap(
            a.mipmappedArray,
            [e.width, e.height, e.depth],
            format,
            a.numLevels,
            false,
        )
    })
}

pub(super) unsafe fn hipMipmappedArrayCreate(a: args::hipMipmappedArrayCreate) -> HipError {
    guard(|| {
        let p = a.pMipmappedArrayDesc.cast::<Array3DDescriptor>();
        // SAFETY: HIP contract: a `HIP_ARRAY3D_DESCRIPTOR` (checked non-null).
        let d = unsafe { p.as_ref() }.ok_or(err::INVALID_VALUE)?;
        create_mipmap(
            a.pHandle,
            [d.width, d.height, d.depth],
            (d.format, d.channels),
            a.numMipmapLevels,
            true,
        )
    })
}

pub(super) unsafe fn hipGetMipmappedArrayLevel(a: args::hipGetMipmappedArrayLevel) -> HipError {
    guard(|| mipmap_level(a.levelArray, a.mipmappedArray, a.level))
}

pub(super) unsafe fn hipMipmappedArrayGetLevel(a: args::hipMipmappedArrayGetLevel) -> HipError {
    guard(|| mipmap_level(a.pLevelArray, a.hMipMappedArray, a.level))
}

pub(super) unsafe fn hipFreeMipmappedArray(a: args::hipFreeMipmappedArray) -> HipError {
    guard(|| destroy_mipmap(a.mipmappedArray))
}

pub(super) unsafe fn hipMipmappedArrayDestroy(a: args::hipMipmappedArrayDestroy) -> HipError {
    guard(|| destroy_mipmap(a.hMipmappedArray))
}

pub(super) unsafe fn hipMallocArray(a: args::hipMallocArray) -> HipError {
    guard(|| {
        // SAFETY: HIP contract: `desc` points at a channel description.
        let desc = unsafe { a.desc.as_ref() }.ok_or(err::INVALID_VALUE)?;
        let (format, channels) = desc.format().ok_or(err::INVALID_VALUE)?;
        create(a.array, [a.width, a.height, 0], format, channels, false)
    })
}

pub(super) unsafe fn hipMalloc3DArray(a: args::hipMalloc3DArray) -> HipError {
    guard(|| {
        // SAFETY: HIP contract: `desc` points at a channel description.
        let desc = unsafe { a.desc.as_ref() }.ok_or(err::INVALID_VALUE)?;
        let (format, channels) = desc.format().ok_or(err::INVALID_VALUE)?;
        let e = a.extent;
        create(
            a.array,
            [e.width, e.height, e.depth],
            format,
            channels,
            false,
        )
    })
}

pub(super) unsafe fn hipArrayCreate(a: args::hipArrayCreate) -> HipError {
    guard(|| {
        let p = a.pAllocateArray.cast::<ArrayDescriptor>();
        // SAFETY: HIP contract: a `HIP_ARRAY_DESCRIPTOR` (checked non-null).
        let d = unsafe { p.as_ref() }.ok_or(err::INVALID_VALUE)?;
        create(
            a.pHandle,
            [d.width, d.height, 0],
            d.format,
            d.channels,
            true,
        )
    })
}

pub(super) unsafe fn hipArray3DCreate(a: args::hipArray3DCreate) -> HipError {
    guard(|| {
        let p = a.pAllocateArray.cast::<Array3DDescriptor>();
        // SAFETY: HIP contract: a `HIP_ARRAY3D_DESCRIPTOR` (checked non-null).
        let d = unsafe { p.as_ref() }.ok_or(err::INVALID_VALUE)?;
        create(
            a.array,
            [d.width, d.height, d.depth],
            d.format,
            d.channels,
            true,
        )
    })
}

pub(super) unsafe fn hipFreeArray(a: args::hipFreeArray) -> HipError {
    guard(|| destroy(a.array))
}

pub(super) unsafe fn hipArrayDestroy(a: args::hipArrayDestroy) -> HipError {
    guard(|| destroy(a.array))
}

/// A side as linear memory: an array's data at its position, checked to
/// hold `extent`.
fn linear(side: Side, extent: [usize; 3]) -> Result<(usize, [usize; 2]), HipError> {
    match side {
        Side::Linear { ptr, pitch } => Ok((ptr, pitch)),
        Side::Array { array, pos } => {
            let info = array_info(array)?;
            let pitch = info.pitch();
            let fits =
                |p: usize, e: usize, limit: usize| p.checked_add(e).is_some_and(|end| end <= limit);
            if !(fits(pos[0], extent[0], pitch[0])
                && fits(pos[1], extent[1], info.extent[1])
                && fits(pos[2], extent[2], info.extent[2]))
            {
                return Err(err::INVALID_VALUE);
            }
            Ok((
                info.data + pos[2] * pitch[1] + pos[1] * pitch[0] + pos[0],
                pitch,
            ))
        }
    }
}

/// A copy that names an array as the copy over the arrays' memory it is,
/// each array side checked to hold the extent.
fn rect_of(c: ArrayCopy) -> Result<RectCopy, HipError> {
    let (dst, dpitch) = linear(c.dst, c.extent)?;
    let (src, spitch) = linear(c.src, c.extent)?;
    Ok(RectCopy {
        dst,
        dpitch,
        src,
        spitch,
        extent: c.extent,
        kind: c.kind,
    })
}

/// A graph copy node naming an array (`hipMemcpy3DParms`, the extent and
/// an array's position in elements) as the copy over the arrays' memory it
/// is now: a launch resolves its arrays when it runs the node.
pub(crate) fn graph_array_rect(p: &hipMemcpy3DParms) -> Result<RectCopy, HipError> {
    let c = p.array_copy(element_of).map_err(|_| err::INVALID_VALUE)?;
    rect_of(c)
}

/// Performs a copy that names an array, on `stream`.
///
/// # Safety
/// HIP's contract for the host operands of a copy.
pub(super) unsafe fn copy_array(c: ArrayCopy, stream: HipStream) -> Result<(), HipError> {
    let rect = rect_of(c)?;
    // SAFETY: per this function's contract; array sides are device memory
    // the runtime owns, checked to hold the extent.
    unsafe { super::rect::copy_rect(rect, stream) }
}

/// The element size of a live array, for `hipMemcpy3D`'s element counts.
pub(super) fn element_of(a: *mut hipArray) -> Option<usize> {
    array_info(a as usize).ok().map(|i| i.element)
}

/// A 2D copy between `array` at (`x` bytes, `y`) and linear memory.
///
/// # Safety
/// HIP's contract for the host operands of the copy.
unsafe fn copy_2d(
    array: usize,
    (x, y): (usize, usize),
    (other, pitch): (usize, usize),
    (width, height): (usize, usize),
    (to_array, kind): (bool, ffi::HipMemcpyKind),
    stream: HipStream,
) -> Result<(), HipError> {
    let a = Side::Array {
        array,
        pos: [x, y, 0],
    };
    let l = Side::Linear {
        ptr: other,
        pitch: [pitch, pitch.saturating_mul(height)],
    };
    let (dst, src) = if to_array { (a, l) } else { (l, a) };
    let c = ArrayCopy {
        dst,
        src,
        extent: [width, height, 1],
        kind,
    };
    // SAFETY: per this function's contract.
    unsafe { copy_array(c, stream) }
}

/// A 1D copy of `count` bytes at byte `offset` of an array's first row.
///
/// # Safety
/// HIP's contract for the host operands of the copy.
unsafe fn copy_1d(
    array: usize,
    (x, y): (usize, usize),
    other: usize,
    count: usize,
    (to_array, kind): (bool, ffi::HipMemcpyKind),
) -> Result<(), HipError> {
    // SAFETY: per this function's contract.
    unsafe {
        copy_2d(
            array,
            (x, y),
            (other, count),
            (count, 1),
            (to_array, kind),
            std::ptr::null_mut(),
        )
    }
}

const SYNC: HipStream = std::ptr::null_mut();

pub(super) unsafe fn hipMemcpy2DToArray(a: args::hipMemcpy2DToArray) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_2d(
            a.dst as usize,
            (a.wOffset, a.hOffset),
            (a.src as usize, a.spitch),
            (a.width, a.height),
            (true, a.kind),
            SYNC,
        )
    })
}

pub(super) unsafe fn hipMemcpy2DToArrayAsync(a: args::hipMemcpy2DToArrayAsync) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_2d(
            a.dst as usize,
            (a.wOffset, a.hOffset),
            (a.src as usize, a.spitch),
            (a.width, a.height),
            (true, a.kind),
            a.stream,
        )
    })
}

pub(super) unsafe fn hipMemcpy2DFromArray(a: args::hipMemcpy2DFromArray) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_2d(
            a.src as usize,
            (a.wOffset, a.hOffset),
            (a.dst as usize, a.dpitch),
            (a.width, a.height),
            (false, a.kind),
            SYNC,
        )
    })
}

pub(super) unsafe fn hipMemcpy2DFromArrayAsync(a: args::hipMemcpy2DFromArrayAsync) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_2d(
            a.src as usize,
            (a.wOffset, a.hOffset),
            (a.dst as usize, a.dpitch),
            (a.width, a.height),
            (false, a.kind),
            a.stream,
        )
    })
}

pub(super) unsafe fn hipMemcpyToArray(a: args::hipMemcpyToArray) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_1d(
            a.dst as usize,
            (a.wOffset, a.hOffset),
            a.src as usize,
            a.count,
            (true, a.kind),
        )
    })
}

pub(super) unsafe fn hipMemcpyFromArray(a: args::hipMemcpyFromArray) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_1d(
            a.srcArray as usize,
            (a.wOffset, a.hOffset),
            a.dst as usize,
            a.count,
            (false, a.kind),
        )
    })
}

pub(super) unsafe fn hipMemcpyHtoA(a: args::hipMemcpyHtoA) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_1d(
            a.dstArray as usize,
            (a.dstOffset, 0),
            a.srcHost as usize,
            a.count,
            (true, ffi::MEMCPY_HOST_TO_DEVICE),
        )
    })
}

pub(super) unsafe fn hipMemcpyAtoH(a: args::hipMemcpyAtoH) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        copy_1d(
            a.srcArray as usize,
            (a.srcOffset, 0),
            a.dst as usize,
            a.count,
            (false, ffi::MEMCPY_DEVICE_TO_HOST),
        )
    })
}

/// The object a resource description makes: what CPU kernels read.
///
/// # Safety
/// `res` is null or points at a `hipResourceDesc`.
unsafe fn object_of(res: *const u8) -> Result<CpuTexture, HipError> {
    if res.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: per the contract, `res` holds a whole `hipResourceDesc`.
    let b = unsafe { std::slice::from_raw_parts(res, RESOURCE_DESC_BYTES) };
    let word = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let int = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let ty = int(0);
    match ty {
        RESOURCE_TYPE_ARRAY | RESOURCE_TYPE_MIPMAPPED_ARRAY => {
            // A mipmapped array is read at its level 0.
            let array = if ty == RESOURCE_TYPE_ARRAY {
                word(8) as usize
            } else {
                with(|r| r.mipmaps.get(&(word(8) as usize)).map(|l| l[0]))
                    .ok_or(err::INVALID_VALUE)?
            };
            let info = array_info(array)?;
            let p = info.pitch();
            Ok(CpuTexture {
                data: info.data,
                extent: info.extent.map(|n| n as u64),
                pitch: [p[0] as u64, p[1] as u64],
                element: info.element as u32,
                resource: ty as u32,
            })
        }
        RESOURCE_TYPE_LINEAR | RESOURCE_TYPE_PITCH2D => {
            // devPtr at 8, a hipChannelFormatDesc at 16, then (linear)
            // sizeInBytes or (2D) width, height, pitchInBytes at 40.
            let desc = hipChannelFormatDesc {
                x: int(16),
                y: int(20),
                z: int(24),
                w: int(28),
                f: int(32),
            };
            let (format, channels) = desc.format().ok_or(err::INVALID_VALUE)?;
            let element = element_bytes(format, channels).ok_or(err::INVALID_VALUE)? as u64;
            let (w, h, pitch) = if ty == RESOURCE_TYPE_LINEAR {
                let size = word(40);
                (size / element, 1, size)
            } else {
                (word(40), word(48), word(56))
            };
            rt()?
                .check_fill(word(8) as usize, pitch.saturating_mul(h) as usize)
                .map_err(|_| err::INVALID_VALUE)?;
            Ok(CpuTexture {
                data: word(8) as usize,
                extent: [w, h, 1],
                pitch: [pitch, pitch * h],
                element: element as u32,
                resource: ty as u32,
            })
        }
        _ => Err(err::NOT_SUPPORTED),
    }
}

/// Registers an object and returns its handle.
fn register(t: CpuTexture) -> *mut c_void {
    let b = Box::new(t);
    let h = (&*b as *const CpuTexture).cast_mut().cast::<c_void>();
    with(|r| r.objects.insert(h as usize, b));
    h
}

fn unregister(h: *mut c_void) -> Result<(), HipError> {
    with(|r| r.objects.remove(&(h as usize)))
        .map(drop)
        .ok_or(err::INVALID_VALUE)
}

pub(super) unsafe fn hipCreateTextureObject(a: args::hipCreateTextureObject) -> HipError {
    guard(|| {
        if a.pTexDesc.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a resource description.
        let t = unsafe { object_of(a.pResDesc.cast()) }?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(a.pTexObject, register(t)) }
    })
}

pub(super) unsafe fn hipDestroyTextureObject(a: args::hipDestroyTextureObject) -> HipError {
    guard(|| unregister(a.textureObject))
}

pub(super) unsafe fn _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(
    a: args::_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc,
) -> HipError {
    guard(|| {
        // SAFETY: HIP contract: a resource description.
        let t = unsafe { object_of(a.pResDesc.cast()) }?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(a.pSurfObject, register(t)) }
    })
}

pub(super) unsafe fn _Z23hipDestroySurfaceObjectP13__hip_surface(
    a: args::_Z23hipDestroySurfaceObjectP13__hip_surface,
) -> HipError {
    guard(|| unregister(a.surfaceObject))
}

/// A channel description by value (no error to report).
pub(super) unsafe fn hipCreateChannelDesc(a: args::hipCreateChannelDesc) -> hipChannelFormatDesc {
    hipChannelFormatDesc {
        x: a.x,
        y: a.y,
        z: a.z,
        w: a.w,
        f: a.f,
    }
}
