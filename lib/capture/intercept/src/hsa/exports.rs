//! HSA pool allocations, for the built-in region producer
//! (`hrr-cap --hsa-regions`, see `hsa::regions`): `hsa_amd_memory_pool_allocate`
//! and `hsa_amd_memory_pool_free`, generated from hsa-sys's signature table
//! (`hsa_sys::hsa_fn!`, checked against Debian's `hsa/hsa_ext_amd.h`, ROCm 5.2).
//!
//! - **Off** (no `HRR_HSA_REGIONS`, the default): each is a jump to the next
//!   definition. Nothing else runs: no recorder is created, no HSA query is
//!   made, nothing is written.
//! - **On**: the call is forwarded unchanged and its result returned as is.
//!   Only a first-level call is recorded (`Guard`): an allocation the HIP
//!   runtime makes inside a recorded HIP call is that call's business (ROCm's
//!   `hipMalloc` allocates through this very function). After a successful
//!   allocation the pool is placed once with the runtime's own queries
//!   (`hsa_amd_memory_pool_get_info`, `hsa_iterate_agents`,
//!   `hsa_agent_get_info`, `hsa_amd_agent_iterate_memory_pools`), none of
//!   which allocates from a pool or comes back here.
//!
//! The `hsa_amd_vmem_*` API (ROCm 6: reserve, handle create, map, unmap,
//! release) is not interposed: Debian's ROCm 5.2 headers, against which every
//! export is ABI-checked, do not declare it, and the CPU runtime does not
//! implement it, so a wrapper could be neither checked nor tested.

use std::ffi::c_void;

use hsa_sys::raw::{
    HSA_AGENT_INFO_DEVICE, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, HSA_AMD_SEGMENT_GLOBAL,
    HSA_DEVICE_TYPE_GPU, HSA_STATUS_ERROR, HSA_STATUS_INFO_BREAK, HSA_STATUS_SUCCESS,
    PFN_hsa_agent_get_info, PFN_hsa_amd_agent_iterate_memory_pools,
    PFN_hsa_amd_memory_pool_allocate, PFN_hsa_amd_memory_pool_free,
    PFN_hsa_amd_memory_pool_get_info, PFN_hsa_iterate_agents, args, fns, hsa_agent_t,
    hsa_amd_memory_pool_t, hsa_status_t,
};

use crate::capture::Guard;
use crate::hsa::regions::{self, PoolClass, UnplacedPool};
use hrr_interpose::real;
use hrr_recorder::sys;

/// What a wrapper returns when no later library defines the function (it is
/// only reachable through a lookup in the global scope that found us).
fn missing(api: &str) -> hsa_status_t {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("hrr-intercept: {api}: not defined by any library after the interposer");
    }
    HSA_STATUS_ERROR
}

/// Callback of the table's lookup: the exported definition of one entry
/// point (its C signature is hsa-sys's table line), handing its arguments to
/// `HANDLER` as the table's argument struct.
macro_rules! export {
    ($handler:ident $name:ident ($($p:ident : $t:ty),* $(,)?) -> $r:ty) => {
        #[doc = concat!("`", stringify!($name), "`: see `", stringify!($handler), "`.")]
        ///
        /// # Safety
        /// The HSA API's contract for this entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($p: $t),*) -> $r {
            // SAFETY: the application's arguments, under the contract the
            // handler has.
            unsafe { $handler(args::$name { $($p),* }) }
        }
        // The export has exactly the table's type.
        const _: fns::$name = $name;
    };
}

hsa_sys::hsa_fn! { hsa_amd_memory_pool_allocate, export, [allocate] }
hsa_sys::hsa_fn! { hsa_amd_memory_pool_free, export, [free] }

/// `hsa_amd_memory_pool_allocate`: forwarded to the real one; with the
/// producer on, a successful first-level allocation from a GPU agent's
/// global pool is recorded as a segment `add`.
///
/// # Safety
/// The HSA API's contract: `ptr` is null or valid for writing one pointer,
/// and `memory_pool` is a pool of the runtime the call is forwarded to.
#[inline(always)]
unsafe fn allocate(a: args::hsa_amd_memory_pool_allocate) -> hsa_status_t {
    let args::hsa_amd_memory_pool_allocate {
        memory_pool,
        size,
        flags,
        ptr,
    } = a;
    const API: &str = "hsa_amd_memory_pool_allocate";
    let Some(f) = real!(hsa_amd_memory_pool_allocate: PFN_hsa_amd_memory_pool_allocate) else {
        return missing(API);
    };
    // SAFETY: the application's arguments, forwarded unchanged.
    let call = || unsafe { f(memory_pool, size, flags, ptr) };
    if !regions::enabled() {
        return call();
    }
    let Some(g) = Guard::enter(API) else {
        return call();
    };
    let ret = call();
    if ret == HSA_STATUS_SUCCESS && !ptr.is_null() {
        let t = sys::monotonic_ns();
        // SAFETY: the call succeeded, so the runtime wrote the address to *ptr.
        let base = unsafe { ptr.read_unaligned() } as u64;
        g.run(|r| {
            regions::on_allocate(r, memory_pool.handle, size as u64, base, t, || {
                classify(memory_pool)
            })
        });
    }
    ret
}

/// `hsa_amd_memory_pool_free`: forwarded to the real one; with the producer
/// on, the free of a recorded segment is recorded as its `del` (timed before
/// the call, which may hand the address out again).
///
/// # Safety
/// The HSA API's contract: `ptr` is null or an address the runtime's pool
/// allocation returned.
#[inline(always)]
unsafe fn free(a: args::hsa_amd_memory_pool_free) -> hsa_status_t {
    let args::hsa_amd_memory_pool_free { ptr } = a;
    const API: &str = "hsa_amd_memory_pool_free";
    let Some(f) = real!(hsa_amd_memory_pool_free: PFN_hsa_amd_memory_pool_free) else {
        return missing(API);
    };
    // SAFETY: the application's argument, forwarded unchanged.
    let call = || unsafe { f(ptr) };
    if !regions::enabled() {
        return call();
    }
    let Some(g) = Guard::enter(API) else {
        return call();
    };
    let base = ptr as u64;
    // Before the free: the address may be handed out again the moment it returns.
    let t = sys::monotonic_ns();
    let live = g.run(|r| regions::on_free_begin(r, base)).flatten();
    let ret = call();
    if let Some(seg) = live {
        g.run(|r| regions::on_free_end(r, base, seg, t, ret == HSA_STATUS_SUCCESS));
    }
    ret
}

// ------------------------------------------------------------- placing a pool

/// `hsa_iterate_agents` callback: collects the agents into `*data`.
///
/// # Safety
/// `data` is the `Vec<hsa_agent_t>` [`classify`] passes, not otherwise in use.
unsafe extern "C" fn push_agent(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: per the contract.
    let v = unsafe { &mut *data.cast::<Vec<hsa_agent_t>>() };
    v.push(agent);
    HSA_STATUS_SUCCESS
}

/// `hsa_amd_agent_iterate_memory_pools` callback: stops at the pool sought.
///
/// # Safety
/// `data` is the `(pool sought, found)` pair [`classify`] passes.
unsafe extern "C" fn find_pool(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: per the contract.
    let (want, found) = unsafe { &mut *data.cast::<(u64, bool)>() };
    if pool.handle == *want {
        *found = true;
        return HSA_STATUS_INFO_BREAK;
    }
    HSA_STATUS_SUCCESS
}

/// Where `pool`'s memory lives: see [`PoolClass`] for the rule.
fn classify(pool: hsa_amd_memory_pool_t) -> PoolClass {
    let (Some(pool_info), Some(iterate), Some(agent_info), Some(pools)) = (
        real!(hsa_amd_memory_pool_get_info: PFN_hsa_amd_memory_pool_get_info),
        real!(hsa_iterate_agents: PFN_hsa_iterate_agents),
        real!(hsa_agent_get_info: PFN_hsa_agent_get_info),
        real!(hsa_amd_agent_iterate_memory_pools: PFN_hsa_amd_agent_iterate_memory_pools),
    ) else {
        return PoolClass::Unknown(UnplacedPool::NoQueries);
    };
    let mut segment = u32::MAX;
    // SAFETY: SEGMENT writes one hsa_amd_segment_t (u32) into `segment`.
    let s = unsafe {
        pool_info(
            pool,
            HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
            (&raw mut segment).cast(),
        )
    };
    if s != HSA_STATUS_SUCCESS {
        return PoolClass::Unknown(UnplacedPool::Query {
            call: "hsa_amd_memory_pool_get_info(SEGMENT)",
            status: s,
        });
    }
    if segment != HSA_AMD_SEGMENT_GLOBAL {
        return PoolClass::Host;
    }
    let mut agents: Vec<hsa_agent_t> = Vec::new();
    // SAFETY: push_agent has the callback's C signature and `data` is
    // `agents`, alive and not otherwise used during the iteration.
    let s = unsafe { iterate(Some(push_agent), (&raw mut agents).cast()) };
    if s != HSA_STATUS_SUCCESS {
        return PoolClass::Unknown(UnplacedPool::Query {
            call: "hsa_iterate_agents",
            status: s,
        });
    }
    let mut gpus = 0u32;
    for agent in agents {
        let mut device = u32::MAX;
        // SAFETY: HSA_AGENT_INFO_DEVICE writes one hsa_device_type_t (u32).
        let s = unsafe { agent_info(agent, HSA_AGENT_INFO_DEVICE, (&raw mut device).cast()) };
        if s != HSA_STATUS_SUCCESS {
            return PoolClass::Unknown(UnplacedPool::Query {
                call: "hsa_agent_get_info(DEVICE)",
                status: s,
            });
        }
        let mut sought = (pool.handle, false);
        // SAFETY: find_pool has the callback's C signature and `data` is
        // `sought`, alive and not otherwise used during the iteration.
        let s = unsafe { pools(agent, Some(find_pool), (&raw mut sought).cast()) };
        if s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK {
            return PoolClass::Unknown(UnplacedPool::Query {
                call: "hsa_amd_agent_iterate_memory_pools",
                status: s,
            });
        }
        let gpu = device == HSA_DEVICE_TYPE_GPU;
        if sought.1 {
            return if gpu {
                PoolClass::Device(gpus)
            } else {
                PoolClass::Host
            };
        }
        gpus += u32::from(gpu);
    }
    PoolClass::Unknown(UnplacedPool::NotListed)
}
