//! The exported HIP entry points, with the exact C signatures of Debian's HIP 5.2
//! `hip/hip_runtime_api.h` (and `hip_ext.h`, and the compiler-emitted
//! `__hipRegister*` family). Every body runs under [`guard`]: no panic crosses
//! the boundary, and failures become the thread's last error.
//!
//! Safety contract of every export: that of the HIP API it implements (pointer
//! arguments valid for what HIP says is read or written through them).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::error::{self, guard, guard_value};
use crate::exec::KernArgs;
use crate::ffi::{
    self, Dim3, HipDeviceProp, HipError, HipEvent, HipFunction, HipModule, HipPointerAttribute,
    HipStream, attr, err,
};
use crate::memory::{Class, DevKind, HostKind};
use crate::module;
use crate::runtime::{self, MAX_SHARED_PER_BLOCK, rt};
use crate::stream::Op;
use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

/// Writes an out-parameter.
///
/// # Safety
/// `p` is null or valid for a write of `T`.
unsafe fn put<T>(p: *mut T, v: T) -> Result<(), HipError> {
    if p.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: non-null, and valid for writes per this function's contract.
    unsafe { p.write(v) };
    Ok(())
}

thread_local! {
    static CURRENT_DEVICE: Cell<c_int> = const { Cell::new(0) };
    static CALL_CONFIG: RefCell<Vec<(Dim3, Dim3, usize, usize)>> = const { RefCell::new(Vec::new()) };
}

fn check_device(id: c_int) -> Result<(), HipError> {
    if id == 0 {
        Ok(())
    } else {
        Err(err::INVALID_DEVICE)
    }
}

fn copy_str(dst: &mut [c_char], s: &str) {
    let n = dst.len().saturating_sub(1);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(n)) {
        *d = b as c_char;
    }
}

fn cpu_count() -> c_int {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int
}

/// The properties of the one CPU "device".
pub fn device_properties() -> Result<HipDeviceProp, HipError> {
    let rt = rt()?;
    let total = rt.mem().capacity();
    // SAFETY: every field of hipDeviceProp_t is an integer, an array of integers or
    // a raw pointer, for all of which all-zero bytes are a valid value.
    let mut p: HipDeviceProp = unsafe { std::mem::zeroed() };
    copy_str(&mut p.name, "hrr cpu");
    copy_str(&mut p.gcn_arch_name, "cpu");
    p.total_global_mem = total;
    p.shared_mem_per_block = MAX_SHARED_PER_BLOCK;
    p.regs_per_block = 65536;
    p.warp_size = 64;
    p.max_threads_per_block = runtime::MAX_THREADS_PER_BLOCK as c_int;
    p.max_threads_dim = [1024, 1024, 1024];
    p.max_grid_size = [i32::MAX, i32::MAX, i32::MAX];
    p.clock_rate = 2_000_000;
    p.memory_clock_rate = 1_000_000;
    p.memory_bus_width = 64;
    p.total_const_mem = 64 * 1024;
    p.major = 1;
    p.minor = 0;
    p.multi_processor_count = cpu_count();
    p.l2_cache_size = 4 << 20;
    p.max_threads_per_multi_processor = 1024;
    p.clock_instruction_rate = 1_000_000;
    p.arch = 0xFFFF; // every hipDeviceArch_t feature but dynamic parallelism
    p.concurrent_kernels = 1;
    p.max_shared_memory_per_multi_processor = MAX_SHARED_PER_BLOCK;
    p.can_map_host_memory = 1;
    p.integrated = 1;
    p.mem_pitch = i32::MAX as usize;
    p.texture_alignment = 256;
    p.texture_pitch_alignment = 256;
    p.managed_memory = 1;
    p.direct_managed_mem_access_from_host = 1;
    p.concurrent_managed_access = 1;
    p.pageable_memory_access = 1;
    p.pageable_memory_access_uses_host_page_tables = 1;
    Ok(p)
}

// ------------------------------------------------------------------- device

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> HipError {
    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt().map(|_| ())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> HipError {
    guard(|| {
        rt()?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(count, 1) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDevice(device: *mut c_int) -> HipError {
    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(device, CURRENT_DEVICE.with(Cell::get)) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipSetDevice(device: c_int) -> HipError {
    guard(|| {
        check_device(device)?;
        rt()?;
        CURRENT_DEVICE.with(|c| c.set(device));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceGet(device: *mut c_int, ordinal: c_int) -> HipError {
    guard(|| {
        check_device(ordinal)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(device, ordinal) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceGetName(
    name: *mut c_char,
    len: c_int,
    device: c_int,
) -> HipError {
    guard(|| {
        check_device(device)?;
        if name.is_null() || len <= 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: `name` holds `len` bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(name, len as usize) };
        dst.fill(0);
        copy_str(dst, "hrr cpu");
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    guard(|| rt()?.device_synchronize())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceReset() -> HipError {
    guard(|| rt()?.reset())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDeviceProperties(
    prop: *mut HipDeviceProp,
    device: c_int,
) -> HipError {
    guard(|| {
        check_device(device)?;
        let p = device_properties()?;
        // SAFETY: HIP contract: `prop` points at a hipDeviceProp_t.
        unsafe { put(prop, p) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceGetAttribute(
    pi: *mut c_int,
    attribute: c_int,
    device: c_int,
) -> HipError {
    guard(|| {
        check_device(device)?;
        let p = device_properties()?;
        let clamp = |v: usize| v.min(i32::MAX as usize) as c_int;
        let v = match attribute {
            attr::ECC_ENABLED => p.ecc_enabled,
            attr::CAN_MAP_HOST_MEMORY => p.can_map_host_memory,
            attr::CLOCK_RATE => p.clock_rate,
            attr::COMPUTE_MODE => p.compute_mode,
            attr::CONCURRENT_KERNELS => p.concurrent_kernels,
            attr::CONCURRENT_MANAGED_ACCESS => p.concurrent_managed_access,
            attr::COOPERATIVE_LAUNCH => p.cooperative_launch,
            attr::INTEGRATED => p.integrated,
            attr::L2_CACHE_SIZE => p.l2_cache_size,
            attr::COMPUTE_CAPABILITY_MAJOR => p.major,
            attr::COMPUTE_CAPABILITY_MINOR => p.minor,
            attr::MANAGED_MEMORY => p.managed_memory,
            attr::MAX_BLOCK_DIM_X => p.max_threads_dim[0],
            attr::MAX_BLOCK_DIM_Y => p.max_threads_dim[1],
            attr::MAX_BLOCK_DIM_Z => p.max_threads_dim[2],
            attr::MAX_GRID_DIM_X => p.max_grid_size[0],
            attr::MAX_GRID_DIM_Y => p.max_grid_size[1],
            attr::MAX_GRID_DIM_Z => p.max_grid_size[2],
            attr::MAX_THREADS_PER_BLOCK => p.max_threads_per_block,
            attr::MAX_THREADS_PER_MULTIPROCESSOR => p.max_threads_per_multi_processor,
            attr::MEMORY_BUS_WIDTH => p.memory_bus_width,
            attr::MEMORY_CLOCK_RATE => p.memory_clock_rate,
            attr::MULTIPROCESSOR_COUNT => p.multi_processor_count,
            attr::PAGEABLE_MEMORY_ACCESS => p.pageable_memory_access,
            attr::PCI_BUS_ID => p.pci_bus_id,
            attr::PCI_DEVICE_ID => p.pci_device_id,
            attr::MAX_REGISTERS_PER_BLOCK => p.regs_per_block,
            attr::MAX_SHARED_MEMORY_PER_BLOCK => clamp(p.shared_mem_per_block),
            attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => {
                clamp(p.max_shared_memory_per_multi_processor)
            }
            attr::TOTAL_CONSTANT_MEMORY => clamp(p.total_const_mem),
            attr::UNIFIED_ADDRESSING => 1,
            attr::WARP_SIZE => p.warp_size,
            _ => return Err(err::INVALID_VALUE),
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pi, v) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> HipError {
    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(version, ffi::HIP_VERSION) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> HipError {
    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(version, ffi::HIP_VERSION) })
}

// ------------------------------------------------------------------- memory

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError {
    guard(|| {
        if ptr.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let p = if size == 0 {
            0
        } else {
            rt()?.mem().alloc_device(size, DevKind::Device, 0)?
        };
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> HipError {
    guard(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let rt = rt()?;
        let _ = rt.device_synchronize();
        rt.mem()
            .free_device(ptr as usize, &[DevKind::Device, DevKind::Managed])
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    guard(|| {
        if ptr.is_null() || (flags != ffi::MEM_ATTACH_GLOBAL && flags != ffi::MEM_ATTACH_HOST) {
            return Err(err::INVALID_VALUE);
        }
        let p = if size == 0 {
            0
        } else {
            rt()?.mem().alloc_device(size, DevKind::Managed, flags)?
        };
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    guard(|| {
        if ptr.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let p = if size == 0 {
            0
        } else {
            rt()?.mem().alloc_host(size, HostKind::Pinned, flags)?
        };
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> HipError {
    // SAFETY: same contract as hipHostMalloc.
    unsafe { hipHostMalloc(ptr, size, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> HipError {
    guard(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let rt = rt()?;
        let _ = rt.device_synchronize();
        rt.mem().free_host(ptr as usize, &[HostKind::Pinned])
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipFreeHost(ptr: *mut c_void) -> HipError {
    // SAFETY: same contract as hipHostFree.
    unsafe { hipHostFree(ptr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> HipError {
    guard(|| {
        if ptr.is_null() || size == 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?.mem().register_host(ptr as usize, size, flags)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> HipError {
    guard(|| {
        let rt = rt()?;
        let _ = rt.device_synchronize();
        rt.mem().unregister_host(ptr as usize)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    dev: *mut *mut c_void,
    host: *mut c_void,
    flags: c_uint,
) -> HipError {
    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        match rt()?.mem().classify(host as usize) {
            Class::Host { .. }
            | Class::Device {
                kind: DevKind::Managed,
                ..
            } => {}
            _ => return Err(err::INVALID_VALUE),
        }
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(dev, host) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> HipError {
    guard(|| {
        let (f, t) = {
            let m = rt()?.mem();
            (m.free_bytes(), m.capacity())
        };
        // SAFETY: HIP contract for the out-parameters.
        unsafe {
            put(free, f)?;
            put(total, t)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipPointerGetAttributes(
    attributes: *mut HipPointerAttribute,
    ptr: *const c_void,
) -> HipError {
    guard(|| {
        if ptr.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let p = ptr as *mut c_void;
        let a = match rt()?.mem().classify(ptr as usize) {
            Class::Device { kind, flags, .. } => HipPointerAttribute {
                memory_type: ffi::MEMORY_TYPE_DEVICE,
                device: 0,
                device_pointer: p,
                host_pointer: if kind == DevKind::Managed {
                    p
                } else {
                    std::ptr::null_mut()
                },
                is_managed: c_int::from(kind == DevKind::Managed),
                allocation_flags: flags,
            },
            Class::Host { flags, .. } => HipPointerAttribute {
                memory_type: ffi::MEMORY_TYPE_HOST,
                device: 0,
                device_pointer: p,
                host_pointer: p,
                is_managed: 0,
                allocation_flags: flags,
            },
            Class::Stale | Class::Unknown => return Err(err::INVALID_VALUE),
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(attributes, a) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemGetAddressRange(
    base: *mut *mut c_void,
    size: *mut usize,
    ptr: *mut c_void,
) -> HipError {
    guard(|| {
        let (b, s) = match rt()?.mem().classify(ptr as usize) {
            Class::Device { base, size, .. } | Class::Host { base, size, .. } => (base, size),
            _ => return Err(err::NOT_FOUND),
        };
        // SAFETY: HIP contract: each out-parameter is null or writable.
        unsafe {
            if !base.is_null() {
                put(base, b as *mut c_void)?;
            }
            if !size.is_null() {
                put(size, s)?;
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> HipError {
    guard(|| {
        let s = match rt()?.mem().classify(ptr as usize) {
            Class::Device { size, .. } | Class::Host { size, .. } => size,
            _ => return Err(err::INVALID_VALUE),
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(size, s) }
    })
}

// --------------------------------------------------------------- memcpy/set

/// # Safety
/// HIP's contract for host operands of a copy.
unsafe fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    kind: ffi::HipMemcpyKind,
    stream: HipStream,
) -> Result<(), HipError> {
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    let (d, s) = (dst as usize, src as usize);
    rt.check_copy(d, s, len, kind)?;
    if len == 0 {
        return Ok(());
    }
    // SAFETY: device operands were just checked against the live allocations; host
    // operands are valid per this function's contract.
    let op = unsafe { Op::copy(d, s, len) };
    rt.submit(&target, op)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: ffi::HipMemcpyKind,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, kind, std::ptr::null_mut()) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: ffi::HipMemcpyKind,
    stream: HipStream,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, kind, stream) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyHtoD(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_HOST_TO_DEVICE,
            std::ptr::null_mut(),
        )
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoH(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_DEVICE_TO_HOST,
            std::ptr::null_mut(),
        )
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoD(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_DEVICE_TO_DEVICE,
            std::ptr::null_mut(),
        )
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyHtoDAsync(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
    stream: HipStream,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_HOST_TO_DEVICE, stream) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
    stream: HipStream,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_DEVICE_TO_HOST, stream) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoDAsync(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
    stream: HipStream,
) -> HipError {
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_DEVICE_TO_DEVICE, stream) })
}

fn memset(
    dst: *mut c_void,
    value: u32,
    count: usize,
    width: u8,
    stream: HipStream,
) -> Result<(), HipError> {
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    let bytes = count
        .checked_mul(usize::from(width))
        .ok_or(err::INVALID_VALUE)?;
    rt.check_fill(dst as usize, bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the whole destination range was just checked to lie in one live,
    // device-accessible allocation.
    let op = unsafe { Op::fill(dst as usize, value, count, width) };
    rt.submit(&target, op)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> HipError {
    guard(|| memset(dst, u32::from(value as u8), size, 1, std::ptr::null_mut()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: HipStream,
) -> HipError {
    guard(|| memset(dst, u32::from(value as u8), size, 1, stream))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD8(dst: *mut c_void, value: u8, count: usize) -> HipError {
    guard(|| memset(dst, u32::from(value), count, 1, std::ptr::null_mut()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD8Async(
    dst: *mut c_void,
    value: u8,
    count: usize,
    stream: HipStream,
) -> HipError {
    guard(|| memset(dst, u32::from(value), count, 1, stream))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD16(dst: *mut c_void, value: u16, count: usize) -> HipError {
    guard(|| memset(dst, u32::from(value), count, 2, std::ptr::null_mut()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD16Async(
    dst: *mut c_void,
    value: u16,
    count: usize,
    stream: HipStream,
) -> HipError {
    guard(|| memset(dst, u32::from(value), count, 2, stream))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD32(dst: *mut c_void, value: c_int, count: usize) -> HipError {
    guard(|| memset(dst, value as u32, count, 4, std::ptr::null_mut()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD32Async(
    dst: *mut c_void,
    value: c_int,
    count: usize,
    stream: HipStream,
) -> HipError {
    guard(|| memset(dst, value as u32, count, 4, stream))
}

// ------------------------------------------------------------------ streams

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreateWithFlags(
    stream: *mut HipStream,
    flags: c_uint,
) -> HipError {
    guard(|| {
        if stream.is_null() || flags & !ffi::STREAM_NON_BLOCKING != 0 {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.create_stream(flags)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(stream, h as HipStream) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut HipStream) -> HipError {
    // SAFETY: same contract.
    unsafe { hipStreamCreateWithFlags(stream, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreateWithPriority(
    stream: *mut HipStream,
    flags: c_uint,
    _priority: c_int,
) -> HipError {
    // SAFETY: same contract.
    unsafe { hipStreamCreateWithFlags(stream, flags) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamDestroy(stream: HipStream) -> HipError {
    guard(|| rt()?.destroy_stream(stream as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamSynchronize(stream: HipStream) -> HipError {
    guard(|| rt()?.stream_synchronize(stream as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamQuery(stream: HipStream) -> HipError {
    guard(|| rt()?.stream_query(stream as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamWaitEvent(
    stream: HipStream,
    event: HipEvent,
    flags: c_uint,
) -> HipError {
    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?.stream_wait_event(stream as usize, event as usize)
    })
}

// ------------------------------------------------------------------- events

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut HipEvent, flags: c_uint) -> HipError {
    guard(|| {
        if event.is_null() || flags & !0x7 != 0 {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.create_event(flags);
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(event, h as HipEvent) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreate(event: *mut HipEvent) -> HipError {
    // SAFETY: same contract.
    unsafe { hipEventCreateWithFlags(event, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventDestroy(event: HipEvent) -> HipError {
    guard(|| rt()?.destroy_event(event as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventRecord(event: HipEvent, stream: HipStream) -> HipError {
    guard(|| rt()?.record_event(event as usize, stream as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventSynchronize(event: HipEvent) -> HipError {
    guard(|| {
        rt()?.event(event as usize)?.synchronize();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventQuery(event: HipEvent) -> HipError {
    guard(|| {
        if rt()?.event(event as usize)?.is_complete() {
            Ok(())
        } else {
            Err(err::NOT_READY)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: HipEvent,
    stop: HipEvent,
) -> HipError {
    guard(|| {
        if ms.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let v = rt()?.elapsed_ms(start as usize, stop as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(ms, v) }
    })
}

// ------------------------------------------------------------------ modules

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoad(module: *mut HipModule, fname: *const c_char) -> HipError {
    guard(|| {
        if module.is_null() || fname.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(fname) };
        let path = std::path::Path::new(
            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes()),
        );
        let image = std::fs::read(path).map_err(|e| {
            crate::log!("hipModuleLoad {}: {e}", path.display());
            err::FILE_NOT_FOUND
        })?;
        let h = rt()?.load_module(&image)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(module, h as HipModule) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut HipModule,
    image: *const c_void,
) -> HipError {
    guard(|| {
        if module.is_null() || image.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: `image` is a complete code object.
        let bytes = unsafe { module::image_from_ptr(image.cast()) }?;
        let h = rt()?.load_module(bytes)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(module, h as HipModule) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut HipModule,
    image: *const c_void,
    _num_options: c_uint,
    _options: *mut c_int,
    _option_values: *mut *mut c_void,
) -> HipError {
    // SAFETY: same contract as hipModuleLoadData (JIT options are ignored).
    unsafe { hipModuleLoadData(module, image) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleUnload(module: HipModule) -> HipError {
    guard(|| rt()?.unload_module(module as usize))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut HipFunction,
    module: HipModule,
    name: *const c_char,
) -> HipError {
    guard(|| {
        if function.is_null() || name.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a NUL-terminated kernel name.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| err::NOT_FOUND)?;
        let h = rt()?.get_function(module as usize, name)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(function, h as HipFunction) }
    })
}

/// Packs a kernel's argument segment from `kernelParams` or `extra`.
///
/// # Safety
/// HIP's contract: `params` holds one pointer per host (non-hidden) kernel
/// argument, each to a value of that argument's size; `extra` is a
/// HIP_LAUNCH_PARAM_* list ending in END.
unsafe fn pack_args(
    func: &crate::module::Function,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<KernArgs, HipError> {
    if !params.is_null() && !extra.is_null() {
        return Err(err::INVALID_VALUE);
    }
    if !params.is_null() {
        let mut ka = KernArgs::zeroed(func.kernarg_size);
        let buf = ka.bytes_mut();
        for (i, a) in func.meta.host_args().enumerate() {
            // SAFETY: one entry per host argument (contract).
            let p = unsafe { *params.add(i) };
            if p.is_null() {
                return Err(err::INVALID_VALUE);
            }
            // In bounds: kernarg_size covers the end of every host argument.
            let dst = &mut buf[a.offset as usize..a.end() as usize];
            // SAFETY: `p` points at `a.size` readable bytes (contract); `dst` is a
            // distinct buffer of exactly that size.
            unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), dst.as_mut_ptr(), dst.len()) };
        }
        return Ok(ka);
    }
    if !extra.is_null() {
        let (mut buf, mut size) = (std::ptr::null::<u8>(), None::<usize>);
        let mut i = 0usize;
        loop {
            if i > 64 {
                return Err(err::INVALID_VALUE);
            }
            // SAFETY: the list is terminated by HIP_LAUNCH_PARAM_END (contract).
            let tag = unsafe { *extra.add(i) } as usize;
            match tag {
                ffi::LAUNCH_PARAM_END => break,
                ffi::LAUNCH_PARAM_BUFFER_POINTER => {
                    // SAFETY: a marker is followed by its value (contract).
                    buf = unsafe { *extra.add(i + 1) }.cast();
                }
                ffi::LAUNCH_PARAM_BUFFER_SIZE => {
                    // SAFETY: the value of BUFFER_SIZE points at a size_t (contract).
                    let p = unsafe { *extra.add(i + 1) }.cast::<usize>();
                    if p.is_null() {
                        return Err(err::INVALID_VALUE);
                    }
                    // SAFETY: as above.
                    size = Some(unsafe { p.read_unaligned() });
                }
                _ => return Err(err::INVALID_VALUE),
            }
            i += 2;
        }
        let size = size.ok_or(err::INVALID_VALUE)?;
        if (buf.is_null() && size > 0) || size > 1 << 20 {
            return Err(err::INVALID_VALUE);
        }
        let mut ka = KernArgs::zeroed(size.max(func.kernarg_size));
        if size > 0 {
            // SAFETY: `buf` holds `size` readable bytes (contract); `ka` is distinct
            // and at least that large.
            unsafe { std::ptr::copy_nonoverlapping(buf, ka.bytes_mut().as_mut_ptr(), size) };
        }
        return Ok(ka);
    }
    if func.meta.host_arg_count() == 0 {
        Ok(KernArgs::zeroed(func.kernarg_size))
    } else {
        Err(err::INVALID_VALUE)
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: HipFunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    guard(|| {
        let rt = rt()?;
        let func = rt.function(f as usize)?;
        // SAFETY: HIP contract for kernelParams / extra.
        let args = unsafe { pack_args(&func, kernel_params, extra) }?;
        let (grid, block) = (
            Dim3::new(grid_x, grid_y, grid_z),
            Dim3::new(block_x, block_y, block_z),
        );
        // SAFETY: `args` was packed per the kernel's own metadata.
        unsafe { rt.launch(func, grid, block, shared as usize, args, stream as usize) }
    })
}

/// ROCm 5.x declares hipExtModuleLaunchKernel in C++ (`hip_ext.h` has no
/// `extern "C"`), so hipcc-built applications call this mangled name.
///
/// # Safety
/// As [`hipExtModuleLaunchKernel`].
#[unsafe(export_name = "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j")]
pub unsafe extern "C" fn hipExtModuleLaunchKernel_cxx(
    f: HipFunction,
    global_x: u32,
    global_y: u32,
    global_z: u32,
    local_x: u32,
    local_y: u32,
    local_z: u32,
    shared: usize,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start_event: HipEvent,
    stop_event: HipEvent,
    flags: u32,
) -> HipError {
    // SAFETY: same contract, forwarded unchanged.
    unsafe {
        hipExtModuleLaunchKernel(
            f,
            global_x,
            global_y,
            global_z,
            local_x,
            local_y,
            local_z,
            shared,
            stream,
            kernel_params,
            extra,
            start_event,
            stop_event,
            flags,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    f: HipFunction,
    global_x: u32,
    global_y: u32,
    global_z: u32,
    local_x: u32,
    local_y: u32,
    local_z: u32,
    shared: usize,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start_event: HipEvent,
    stop_event: HipEvent,
    _flags: u32,
) -> HipError {
    guard(|| {
        let rt = rt()?;
        let func = rt.function(f as usize)?;
        if local_x == 0 || local_y == 0 || local_z == 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract for kernelParams / extra.
        let args = unsafe { pack_args(&func, kernel_params, extra) }?;
        let grid = Dim3::new(
            global_x.div_ceil(local_x),
            global_y.div_ceil(local_y),
            global_z.div_ceil(local_z),
        );
        let block = Dim3::new(local_x, local_y, local_z);
        if !start_event.is_null() {
            rt.record_event(start_event as usize, stream as usize)?;
        }
        // SAFETY: `args` was packed per the kernel's own metadata.
        unsafe { rt.launch(func, grid, block, shared, args, stream as usize) }?;
        if !stop_event.is_null() {
            rt.record_event(stop_event as usize, stream as usize)?;
        }
        Ok(())
    })
}

// ------------------------------------------------------ compiler launch path

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    guard_value(std::ptr::null_mut(), || match rt() {
        Ok(rt) => rt.register_fatbin(data as usize) as *mut *mut c_void,
        Err(_) => std::ptr::null_mut(),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_uint,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut Dim3,
    _grid_dim: *mut Dim3,
    _w_size: *mut c_int,
) {
    let r = guard(|| {
        let name = if !device_name.is_null() {
            device_name
        } else {
            device_function.cast_const()
        };
        if name.is_null() || host_function.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: the compiler passes NUL-terminated kernel names.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        rt()?.register_function(modules as usize, host_function as usize, &name)
    });
    if r != err::SUCCESS {
        crate::log!("__hipRegisterFunction failed: {r}");
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    let _ = guard(|| rt()?.unregister_fatbin(modules as usize));
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: HipStream,
) -> HipError {
    guard(|| {
        CALL_CONFIG.with(|c| c.borrow_mut().push((grid, block, shared, stream as usize)));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut HipStream,
) -> HipError {
    guard(|| {
        let (g, b, s, st) = CALL_CONFIG
            .with(|c| c.borrow_mut().pop())
            .ok_or(err::MISSING_CONFIGURATION)?;
        // SAFETY: the compiler passes valid out-parameters.
        unsafe {
            put(grid, g)?;
            put(block, b)?;
            put(shared, s)?;
            put(stream, st as HipStream)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    num_blocks: Dim3,
    dim_blocks: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: HipStream,
) -> HipError {
    guard(|| {
        let rt = rt()?;
        let func = rt.host_function(function_address as usize)?;
        // SAFETY: HIP contract: args[i] points at argument i.
        let ka = unsafe { pack_args(&func, args, std::ptr::null_mut()) }?;
        // SAFETY: `ka` was packed per the kernel's own metadata.
        unsafe { rt.launch(func, num_blocks, dim_blocks, shared, ka, stream as usize) }
    })
}

// ------------------------------------------------------------------- errors

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetLastError() -> HipError {
    guard_value(err::UNKNOWN, error::take_last)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipPeekAtLastError() -> HipError {
    guard_value(err::UNKNOWN, error::peek_last)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetErrorString(e: HipError) -> *const c_char {
    guard_value(c"unknown error".as_ptr(), || {
        error::error_string(e).as_ptr()
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetErrorName(e: HipError) -> *const c_char {
    guard_value(c"hipErrorUnknown".as_ptr(), || {
        error::error_name(e).as_ptr()
    })
}
