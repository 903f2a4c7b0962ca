//! The implementations behind the generated HSA exports (`super`), one per
//! table entry, each taking the entry's argument struct.

#![allow(clippy::missing_safety_doc)]

use crate::error::guard_hsa;
use crate::ffi::{
    self, HsaAgent, HsaMemoryPool, HsaStatus, hsa_agent_info, hsa_pool_info, hsa_status,
};
use crate::memory::{Class, DevKind, HostKind};
use crate::runtime::{lock, rt};
use hsa_sys::raw::args;
use std::ffi::{c_char, c_void};

pub const CPU_AGENT: HsaAgent = HsaAgent {
    handle: 0x4870_0001,
};
pub const GPU_AGENT: HsaAgent = HsaAgent {
    handle: 0x4870_0002,
};
pub const CPU_POOL: HsaMemoryPool = HsaMemoryPool {
    handle: 0x4870_1001,
};
pub const GPU_POOL: HsaMemoryPool = HsaMemoryPool {
    handle: 0x4870_1002,
};

fn initialized() -> Result<&'static crate::runtime::Runtime, HsaStatus> {
    let rt = rt().map_err(|_| hsa_status::ERROR_NOT_INITIALIZED)?;
    if *lock(&rt.hsa_refs) == 0 {
        return Err(hsa_status::ERROR_NOT_INITIALIZED);
    }
    Ok(rt)
}

/// # Safety
/// `p` is null or valid for a write of `T`.
unsafe fn put<T>(p: *mut c_void, v: T) -> Result<HsaStatus, HsaStatus> {
    if p.is_null() {
        return Err(hsa_status::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-null and sized for T by the HSA attribute's documented type.
    unsafe { p.cast::<T>().write_unaligned(v) };
    Ok(hsa_status::SUCCESS)
}

fn name64(s: &str) -> [c_char; 64] {
    let mut out = [0 as c_char; 64];
    for (d, b) in out.iter_mut().zip(s.bytes().take(63)) {
        *d = b as c_char;
    }
    out
}

fn physical_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        pages as usize * size as usize
    } else {
        1 << 30
    }
}

pub(super) unsafe fn hsa_init(a: args::hsa_init) -> HsaStatus {
    let _ = a;
    guard_hsa(|| {
        let rt = rt().map_err(|_| hsa_status::ERROR_OUT_OF_RESOURCES)?;
        *lock(&rt.hsa_refs) += 1;
        Ok(hsa_status::SUCCESS)
    })
}

pub(super) unsafe fn hsa_shut_down(a: args::hsa_shut_down) -> HsaStatus {
    let _ = a;
    guard_hsa(|| {
        let rt = initialized()?;
        let mut r = lock(&rt.hsa_refs);
        if *r == 0 {
            return Err(hsa_status::ERROR_NOT_INITIALIZED);
        }
        *r -= 1;
        Ok(hsa_status::SUCCESS)
    })
}

pub(super) unsafe fn hsa_status_string(a: args::hsa_status_string) -> HsaStatus {
    let args::hsa_status_string {
        status,
        status_string: out,
    } = a;
    guard_hsa(|| {
        let s = match status {
            hsa_status::SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
            hsa_status::INFO_BREAK => c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.",
            hsa_status::ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.",
            hsa_status::ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
            hsa_status::ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
            hsa_status::ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
            hsa_status::ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero.",
            hsa_status::ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.",
            hsa_status::ERROR => c"HSA_STATUS_ERROR: A generic error has occurred.",
            _ => return Err(hsa_status::ERROR_INVALID_ARGUMENT),
        };
        // SAFETY: HSA contract for the out-parameter.
        unsafe { put(out.cast(), s.as_ptr()) }
    })
}

pub(super) unsafe fn hsa_iterate_agents(a: args::hsa_iterate_agents) -> HsaStatus {
    let args::hsa_iterate_agents { callback, data } = a;
    guard_hsa(|| {
        initialized()?;
        let cb = callback.ok_or(hsa_status::ERROR_INVALID_ARGUMENT)?;
        for a in [CPU_AGENT, GPU_AGENT] {
            // SAFETY: the application's callback, called as HSA documents.
            let s = unsafe { cb(a, data) };
            if s != hsa_status::SUCCESS {
                return Ok(s);
            }
        }
        Ok(hsa_status::SUCCESS)
    })
}

pub(super) unsafe fn hsa_agent_get_info(a: args::hsa_agent_get_info) -> HsaStatus {
    let args::hsa_agent_get_info {
        agent,
        attribute,
        value,
    } = a;
    guard_hsa(|| {
        initialized()?;
        let gpu = match agent {
            GPU_AGENT => true,
            CPU_AGENT => false,
            _ => return Err(hsa_status::ERROR_INVALID_AGENT),
        };
        // `value` points at storage of the attribute's type (HSA contract).
        match attribute {
            // SAFETY: `value` holds 64 chars (HSA contract for NAME).
            hsa_agent_info::NAME => unsafe {
                put(value, name64(if gpu { "hrr-cpu" } else { "hrr-host" }))
            },
            // SAFETY: `value` holds 64 chars (HSA contract for VENDOR_NAME).
            hsa_agent_info::VENDOR_NAME => unsafe { put(value, name64("hrr")) },
            // SAFETY: `value` holds an hsa_device_type_t (HSA contract for DEVICE).
            hsa_agent_info::DEVICE => unsafe {
                put(
                    value,
                    if gpu {
                        ffi::HSA_DEVICE_TYPE_GPU
                    } else {
                        ffi::HSA_DEVICE_TYPE_CPU
                    },
                )
            },
            // SAFETY: `value` holds a u32 (HSA contract for NODE).
            hsa_agent_info::NODE => unsafe { put(value, u32::from(gpu)) },
            _ => Err(hsa_status::ERROR_INVALID_ARGUMENT),
        }
    })
}

pub(super) unsafe fn hsa_amd_agent_iterate_memory_pools(
    a: args::hsa_amd_agent_iterate_memory_pools,
) -> HsaStatus {
    let args::hsa_amd_agent_iterate_memory_pools {
        agent,
        callback,
        data,
    } = a;
    guard_hsa(|| {
        initialized()?;
        let cb = callback.ok_or(hsa_status::ERROR_INVALID_ARGUMENT)?;
        let pool = match agent {
            GPU_AGENT => GPU_POOL,
            CPU_AGENT => CPU_POOL,
            _ => return Err(hsa_status::ERROR_INVALID_AGENT),
        };
        // SAFETY: the application's callback, called as HSA documents.
        Ok(unsafe { cb(pool, data) })
    })
}

pub(super) unsafe fn hsa_amd_memory_pool_get_info(
    a: args::hsa_amd_memory_pool_get_info,
) -> HsaStatus {
    let args::hsa_amd_memory_pool_get_info {
        memory_pool: pool,
        attribute,
        value,
    } = a;
    guard_hsa(|| {
        let rt = initialized()?;
        let gpu = match pool {
            GPU_POOL => true,
            CPU_POOL => false,
            _ => return Err(hsa_status::ERROR_INVALID_MEMORY_POOL),
        };
        let size = if gpu {
            rt.mem().capacity()
        } else {
            physical_memory()
        };
        let flags = if gpu {
            ffi::HSA_POOL_FLAG_COARSE_GRAINED
        } else {
            ffi::HSA_POOL_FLAG_FINE_GRAINED | ffi::HSA_POOL_FLAG_KERNARG_INIT
        };
        // `value` points at storage of the attribute's type (HSA contract).
        match attribute {
            // SAFETY: `value` holds a segment enum (u32).
            hsa_pool_info::SEGMENT => unsafe { put(value, ffi::HSA_AMD_SEGMENT_GLOBAL) },
            // SAFETY: `value` holds the u32 flags.
            hsa_pool_info::GLOBAL_FLAGS => unsafe { put(value, flags) },
            // SAFETY: `value` holds a size_t.
            hsa_pool_info::SIZE | hsa_pool_info::ALLOC_MAX_SIZE => unsafe { put(value, size) },
            // SAFETY: `value` holds a bool.
            hsa_pool_info::RUNTIME_ALLOC_ALLOWED => unsafe { put(value, true) },
            // SAFETY: `value` holds a size_t.
            hsa_pool_info::RUNTIME_ALLOC_GRANULE | hsa_pool_info::RUNTIME_ALLOC_ALIGNMENT => unsafe {
                put(value, crate::memory::HSA_ALIGN as usize)
            },
            // SAFETY: `value` holds a bool.
            hsa_pool_info::ACCESSIBLE_BY_ALL => unsafe { put(value, !gpu) },
            _ => Err(hsa_status::ERROR_INVALID_ARGUMENT),
        }
    })
}

pub(super) unsafe fn hsa_amd_memory_pool_allocate(
    a: args::hsa_amd_memory_pool_allocate,
) -> HsaStatus {
    let args::hsa_amd_memory_pool_allocate {
        memory_pool: pool,
        size,
        flags: _,
        ptr,
    } = a;
    guard_hsa(|| {
        let rt = initialized()?;
        if ptr.is_null() {
            return Err(hsa_status::ERROR_INVALID_ARGUMENT);
        }
        if size == 0 {
            return Err(hsa_status::ERROR_INVALID_ALLOCATION);
        }
        let r = match pool {
            GPU_POOL => rt.mem().alloc_device(size, DevKind::Hsa, 0),
            CPU_POOL => rt.mem().alloc_host(size, HostKind::HsaHost, 0),
            _ => return Err(hsa_status::ERROR_INVALID_MEMORY_POOL),
        };
        let p = r.map_err(|_| hsa_status::ERROR_OUT_OF_RESOURCES)?;
        // SAFETY: HSA contract for the out-parameter (checked non-null).
        unsafe { put(ptr.cast(), p as *mut c_void) }
    })
}

pub(super) unsafe fn hsa_amd_memory_pool_free(a: args::hsa_amd_memory_pool_free) -> HsaStatus {
    let args::hsa_amd_memory_pool_free { ptr } = a;
    guard_hsa(|| {
        let rt = initialized()?;
        if ptr.is_null() {
            return Ok(hsa_status::SUCCESS);
        }
        let _ = rt.device_synchronize();
        let mut mem = rt.mem();
        let r = mem
            .free_device(ptr as usize, &[DevKind::Hsa])
            .or_else(|_| mem.free_host(ptr as usize, &[HostKind::HsaHost]));
        r.map(|_| hsa_status::SUCCESS)
            .map_err(|_| hsa_status::ERROR_INVALID_ARGUMENT)
    })
}

pub(super) unsafe fn hsa_amd_agents_allow_access(
    a: args::hsa_amd_agents_allow_access,
) -> HsaStatus {
    let args::hsa_amd_agents_allow_access {
        num_agents,
        agents,
        flags: _,
        ptr,
    } = a;
    guard_hsa(|| {
        let rt = initialized()?;
        if num_agents == 0 || agents.is_null() || ptr.is_null() {
            return Err(hsa_status::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: HSA contract: `agents` holds `num_agents` entries.
        let list = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
        if list.iter().any(|a| *a != CPU_AGENT && *a != GPU_AGENT) {
            return Err(hsa_status::ERROR_INVALID_AGENT);
        }
        match rt.mem().classify(ptr as usize) {
            Class::Device {
                kind: DevKind::Hsa, ..
            }
            | Class::Host {
                kind: HostKind::HsaHost,
                ..
            } => Ok(hsa_status::SUCCESS),
            _ => Err(hsa_status::ERROR_INVALID_ARGUMENT),
        }
    })
}
