//! Recording the driver's arrays (`array_create`, `array_destroy`; planes
//! and mipmapped arrays: `array_plane`, `mipmap_*`), copies
//! naming them (`memcpy_array`) and texture and surface objects
//! (`tex_create`, `surf_create`, their destroys). The CUDA runtime's
//! `cudaMallocArray`, `cudaMemcpy2DToArray` and `cudaCreateTextureObject`
//! reach these entry points through `cuGetProcAddress`. A 2D/3D copy whose
//! description names a `CUarray` comes here from [`super::rect_pools`].

use std::ffi::c_void;

use cuda_api::array::{
    CUDA_ARRAY_DESCRIPTOR, CUDA_ARRAY3D_DESCRIPTOR, RESOURCE_DESC_BYTES, RESOURCE_VIEW_DESC_BYTES,
    TEXTURE_DESC_BYTES,
};
use cuda_api::rect::{ArrayCopy, CopySide, Side};
use cuda_api::{CUDA_SUCCESS, CUresult, CUstream};
use hrr_core::Dir;
use hrr_interpose::call_args::{bytes, gather};
use hrr_recorder::record::arrays::{ArrayCopyRec, ArrayShape, ArraySide};
use hrr_recorder::record::recorder::Recorder;

use super::record::{on_device, out, s};
use super::rect_pools::wait_for_d2h;

/// `cuArrayCreate_v2`: a 1D or 2D array (depth 0).
///
/// # Safety
/// `handle` is the call's out-parameter; `desc` null or the descriptor the
/// driver read.
pub unsafe fn create_2d(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    handle: *const u64,
    desc: *const CUDA_ARRAY_DESCRIPTOR,
) {
    // SAFETY: per the contract.
    let d = unsafe { desc.as_ref() }.copied().unwrap_or_default();
    let shape = ArrayShape {
        format: d.format as u32,
        channels: d.num_channels,
        extent: [d.width as u64, d.height as u64, 0],
        flags: 0,
    };
    // SAFETY: per the contract, written on success.
    r.array_create(api, ret, unsafe { out(ret, handle) }, shape);
}

/// The recorded shape of a 3D descriptor (`cuArray3DCreate_v2`, level 0
/// of `cuMipmappedArrayCreate`).
///
/// # Safety
/// `desc` is null or the descriptor the driver read.
unsafe fn shape_3d(desc: *const CUDA_ARRAY3D_DESCRIPTOR) -> ArrayShape {
    // SAFETY: per the contract.
    let d = unsafe { desc.as_ref() }.copied().unwrap_or_default();
    ArrayShape {
        format: d.format as u32,
        channels: d.num_channels,
        extent: [d.width as u64, d.height as u64, d.depth as u64],
        flags: d.flags,
    }
}

/// `cuArray3DCreate_v2`.
///
/// # Safety
/// As [`create_2d`].
pub unsafe fn create_3d(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    handle: *const u64,
    desc: *const CUDA_ARRAY3D_DESCRIPTOR,
) {
    // SAFETY: per the contract.
    let shape = unsafe { shape_3d(desc) };
    // SAFETY: per the contract, written on success.
    r.array_create(api, ret, unsafe { out(ret, handle) }, shape);
}

/// `cuMipmappedArrayCreate`: level 0's descriptor and the level count.
///
/// # Safety
/// As [`create_2d`].
pub unsafe fn mipmap_create(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    handle: *const u64,
    desc: *const CUDA_ARRAY3D_DESCRIPTOR,
    levels: u32,
) {
    // SAFETY: per the contract.
    let shape = unsafe { shape_3d(desc) };
    // SAFETY: per the contract, written on success.
    r.mipmap_create(api, ret, unsafe { out(ret, handle) }, shape, levels);
}

/// Records a copy that names an array; the host side's rows are read once
/// the call succeeded (a D2H one after its stream finished).
///
/// # Safety
/// The call succeeded (or `ret` says not): every row of a host source was
/// read, every row of a host destination written.
pub unsafe fn copy(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    c: &ArrayCopy,
    stream: Option<CUstream>,
) {
    let dev = |side: CopySide| match side {
        CopySide::Array { .. } => true,
        CopySide::Linear { ptr, side, .. } => on_device(r, side, ptr),
    };
    let dir = Dir::between(dev(c.src), dev(c.dst));
    let recorded = |side: CopySide| match side {
        CopySide::Array { array, pos } => ArraySide::Array { array, pos },
        CopySide::Linear { ptr, pitch, .. } => ArraySide::Linear { ptr, pitch },
    };
    let rec = ArrayCopyRec {
        dir,
        dst: recorded(c.dst),
        src: recorded(c.src),
        extent: c.extent,
        stream: stream.map(s),
    };
    let data = match (dir, c.src, c.dst) {
        _ if ret != CUDA_SUCCESS => None,
        (Dir::H2d, CopySide::Linear { ptr, pitch, .. }, _) => {
            // SAFETY: per the contract, every host source row was read.
            Some(unsafe { gather(ptr, pitch, c.extent) })
        }
        (Dir::D2h, _, CopySide::Linear { ptr, pitch, .. }) => {
            wait_for_d2h(api, stream);
            // SAFETY: per the contract, every host destination row was
            // written, and the copy is done.
            Some(unsafe { gather(ptr, pitch, c.extent) })
        }
        _ => None,
    };
    r.memcpy_array(api, ret, &rec, data.as_deref());
}

/// One side of a 1D array copy (`cuMemcpyHtoA_v2`, …).
#[derive(Clone, Copy)]
pub enum Flat {
    /// An array, from byte `offset` of its first row.
    Array(u64, usize),
    /// Host memory.
    Host(u64),
    /// Device memory.
    Device(u64),
}

/// A 1D copy of `n` bytes naming an array, recorded as [`copy`] does.
///
/// # Safety
/// As [`copy`].
pub unsafe fn copy_1d(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    (dst, src): (Flat, Flat),
    n: usize,
    stream: Option<CUstream>,
) {
    let n = n as u64;
    let side = |f: Flat| match f {
        Flat::Array(array, offset) => CopySide::Array {
            array,
            pos: [offset as u64, 0, 0],
        },
        Flat::Host(ptr) => CopySide::Linear {
            ptr,
            pitch: [n, n],
            side: Side::Host,
        },
        Flat::Device(ptr) => CopySide::Linear {
            ptr,
            pitch: [n, n],
            side: Side::Device,
        },
    };
    let c = ArrayCopy {
        dst: side(dst),
        src: side(src),
        extent: [n, 1, 1],
    };
    // SAFETY: per the contract.
    unsafe { copy(r, api, ret, &c, stream) }
}

/// `cuTexObjectCreate` (`tex` given: the texture and view descriptions) or
/// `cuSurfObjectCreate`: the descriptions' bytes, read only after success.
///
/// # Safety
/// `obj` is the call's out-parameter; after success `res` (and `tex`, and
/// `view` when non-null) point at the whole descriptions the driver read.
pub unsafe fn object_create(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    obj: *const u64,
    res: *const c_void,
    tex: Option<(*const c_void, *const c_void)>,
) {
    let read = |p: *const c_void, n: usize| -> &[u8] {
        if ret != CUDA_SUCCESS {
            return &[];
        }
        // SAFETY: per the contract, after success.
        unsafe { bytes(p, n) }
    };
    let tex = tex.map(|(t, v)| {
        let v = read(v, RESOURCE_VIEW_DESC_BYTES);
        (read(t, TEXTURE_DESC_BYTES), (!v.is_empty()).then_some(v))
    });
    // SAFETY: per the contract, written on success.
    let handle = unsafe { out(ret, obj) };
    r.object_create(api, ret, handle, read(res, RESOURCE_DESC_BYTES), tex);
}
