//! Devices: initialisation, selection, properties and attributes, versions,
//! peer access (the CPU "devices", `HRR_CPU_DEVICES` of them: `devices`).

use std::ffi::{c_char, c_int};

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipDeviceProp, HipError, attr, err};
use crate::runtime::{self, MAX_SHARED_PER_BLOCK, rt};

/// Device ordinal `id`, if the runtime has it.
fn check_device(id: c_int) -> Result<u32, HipError> {
    rt()?.devices.check(id)
}

/// A device's name: device 0 keeps the one-device runtime's.
fn device_name(device: u32) -> String {
    if device == 0 {
        "hrr cpu".to_string()
    } else {
        format!("hrr cpu {device}")
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

/// The properties of CPU device `device`.
pub fn device_properties(device: u32) -> Result<HipDeviceProp, HipError> {
    let rt = rt()?;
    let (_, total) = rt.mem().device_info(device, rt.devices.count());
    // SAFETY: every field of hipDeviceProp_t is an integer, an array of integers or
    // a raw pointer, for all of which all-zero bytes are a valid value.
    let mut p: HipDeviceProp = unsafe { std::mem::zeroed() };
    copy_str(&mut p.name, &device_name(device));
    p.pci_device_id = device as c_int;
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

pub(super) unsafe fn hipInit(a: args::hipInit) -> HipError {
    let args::hipInit { flags } = a;

    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt().map(|_| ())
    })
}

pub(super) unsafe fn hipGetDeviceCount(a: args::hipGetDeviceCount) -> HipError {
    let args::hipGetDeviceCount { count } = a;

    guard(|| {
        let n = rt()?.devices.count() as c_int;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(count, n) }
    })
}

pub(super) unsafe fn hipGetDevice(a: args::hipGetDevice) -> HipError {
    let args::hipGetDevice { deviceId: device } = a;

    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(device, crate::devices::current() as c_int) })
}

pub(super) unsafe fn hipSetDevice(a: args::hipSetDevice) -> HipError {
    let args::hipSetDevice { deviceId: device } = a;

    guard(|| {
        crate::devices::set_current(check_device(device)?);
        Ok(())
    })
}

pub(super) unsafe fn hipDeviceGet(a: args::hipDeviceGet) -> HipError {
    let args::hipDeviceGet { device, ordinal } = a;

    guard(|| {
        check_device(ordinal)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(device, ordinal) }
    })
}

pub(super) unsafe fn hipDeviceGetName(a: args::hipDeviceGetName) -> HipError {
    let args::hipDeviceGetName { name, len, device } = a;

    guard(|| {
        let device = check_device(device)?;
        if name.is_null() || len <= 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: `name` holds `len` bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(name, len as usize) };
        dst.fill(0);
        copy_str(dst, &device_name(device));
        Ok(())
    })
}

pub(super) unsafe fn hipDeviceSynchronize(a: args::hipDeviceSynchronize) -> HipError {
    let args::hipDeviceSynchronize {} = a;

    guard(|| rt()?.current_device_synchronize())
}

/// `hipProfilerStart`: no profiler here; succeeds and does nothing (a
/// capture window's trigger all the same).
pub(super) unsafe fn hipProfilerStart(a: args::hipProfilerStart) -> HipError {
    let args::hipProfilerStart {} = a;

    guard(|| Ok(()))
}

/// `hipProfilerStop`: as [`hipProfilerStart`].
pub(super) unsafe fn hipProfilerStop(a: args::hipProfilerStop) -> HipError {
    let args::hipProfilerStop {} = a;

    guard(|| Ok(()))
}

/// `hipDeviceReset`: the current device reset (`Runtime::reset`); the
/// pools go with device 0, the only one that has them.
pub(super) unsafe fn hipDeviceReset(a: args::hipDeviceReset) -> HipError {
    let args::hipDeviceReset {} = a;

    guard(|| reset(crate::devices::current()))
}

/// `hipDevicePrimaryCtxReset`: device `dev`'s primary context reset, which
/// here is a reset of the device (as [`hipDeviceReset`]).
pub(super) unsafe fn hipDevicePrimaryCtxReset(a: args::hipDevicePrimaryCtxReset) -> HipError {
    let args::hipDevicePrimaryCtxReset { dev } = a;

    guard(|| reset(check_device(dev)?))
}

fn reset(device: u32) -> Result<(), HipError> {
    let rt = rt()?;
    rt.reset(device)?;
    if device == 0 {
        super::pools::forget_all();
    }
    Ok(())
}

pub(super) unsafe fn hipGetDeviceProperties(a: args::hipGetDeviceProperties) -> HipError {
    let args::hipGetDeviceProperties {
        prop,
        deviceId: device,
    } = a;

    guard(|| {
        let p = device_properties(check_device(device)?)?;
        // SAFETY: HIP contract: `prop` points at a hipDeviceProp_t.
        unsafe { put(prop, p) }
    })
}

pub(super) unsafe fn hipDeviceGetAttribute(a: args::hipDeviceGetAttribute) -> HipError {
    let args::hipDeviceGetAttribute {
        pi,
        attr: attribute,
        deviceId: device,
    } = a;

    guard(|| {
        let p = device_properties(check_device(device)?)?;
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

pub(super) unsafe fn hipDriverGetVersion(a: args::hipDriverGetVersion) -> HipError {
    let args::hipDriverGetVersion {
        driverVersion: version,
    } = a;

    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(version, ffi::HIP_VERSION) })
}

pub(super) unsafe fn hipRuntimeGetVersion(a: args::hipRuntimeGetVersion) -> HipError {
    let args::hipRuntimeGetVersion {
        runtimeVersion: version,
    } = a;

    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe { put(version, ffi::HIP_VERSION) })
}

/// The current context is the device's primary one: a device sync.
pub(super) unsafe fn hipCtxSynchronize(a: args::hipCtxSynchronize) -> HipError {
    let args::hipCtxSynchronize {} = a;
    guard(|| rt()?.current_device_synchronize())
}

/// `hipDeviceCanAccessPeer`: every other device (a device is not its own
/// peer, as on ROCm and CUDA).
pub(super) unsafe fn hipDeviceCanAccessPeer(a: args::hipDeviceCanAccessPeer) -> HipError {
    let args::hipDeviceCanAccessPeer {
        canAccessPeer,
        deviceId,
        peerDeviceId,
    } = a;
    guard(|| {
        let can = rt()?.devices.can_access(deviceId, peerDeviceId)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(canAccessPeer, c_int::from(can)) }
    })
}

/// `hipDeviceEnablePeerAccess`: the current device may access `peer`'s
/// memory (it always can: all of it is host memory; the state is kept for
/// the errors a GPU gives: itself, twice).
pub(super) unsafe fn hipDeviceEnablePeerAccess(a: args::hipDeviceEnablePeerAccess) -> HipError {
    let args::hipDeviceEnablePeerAccess {
        peerDeviceId,
        flags,
    } = a;
    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?.devices.enable_peer(peerDeviceId)
    })
}

/// `hipDeviceDisablePeerAccess`: undoes [`hipDeviceEnablePeerAccess`].
pub(super) unsafe fn hipDeviceDisablePeerAccess(a: args::hipDeviceDisablePeerAccess) -> HipError {
    let args::hipDeviceDisablePeerAccess { peerDeviceId } = a;
    guard(|| rt()?.devices.disable_peer(peerDeviceId))
}
