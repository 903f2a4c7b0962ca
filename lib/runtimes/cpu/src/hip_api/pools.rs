//! Stream-ordered memory pools: `hipMemPoolCreate`/`Destroy`/`TrimTo`/
//! `SetAttribute`, `hipDeviceSetMemPool`, `hipMallocFromPoolAsync`, and the
//! pool side of `hipMallocAsync`/`hipFreeAsync`/`hipFree`.
//!
//! A pool really keeps memory: a block given back (`hipFreeAsync`, after the
//! work queued on its stream before it) stays allocated in the pool's free
//! list, and the next allocation that fits takes the most recently freed
//! such block, at the same address, with whatever bytes it held (as a GPU
//! runtime's pool reuses memory). `hipMemPoolTrimTo` and destroying the
//! pool give free blocks back to the device. `hipMallocAsync` allocates
//! from the device's current pool once `hipDeviceSetMemPool` chose one;
//! before that (the default pool) it allocates plainly, as it always did.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{HipError, err};
use crate::memory::DevKind;
use crate::runtime::{lock, rt};

/// Pool sizes are multiples of this (a block serves any request it covers).
const BLOCK_ALIGN: usize = 256;
/// The last settable `hipMemPoolAttr` (`hipMemPoolAttrUsedMemHigh`).
const LAST_ATTR: i32 = 8;
/// `hipMemPoolAttrReleaseThreshold`, from which on values are u64s.
const FIRST_U64_ATTR: i32 = 4;

struct Pool {
    /// Blocks given back and not yet released: (address, size), oldest first.
    free: Vec<(usize, usize)>,
    /// `hipMemPoolAttrReleaseThreshold` (kept; the CPU has nothing to release early).
    release_threshold: u64,
}

#[derive(Default)]
struct Pools {
    next: usize,
    pools: HashMap<usize, Pool>,
    /// Live pool blocks: address → (pool, block size).
    blocks: HashMap<usize, (usize, usize)>,
    /// The device's current pool (0: the default, plain allocations).
    current: usize,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn with_pools<R>(f: impl FnOnce(&mut Pools) -> R) -> R {
    f(lock(&POOLS).get_or_insert_with(Pools::default))
}

/// A reset of device 0 destroyed every pool (their blocks were device 0's
/// memory, freed with it).
pub(super) fn forget_all() {
    *lock(&POOLS) = None;
}

/// A block of at least `size` bytes from `pool`.
fn pool_alloc(pool: usize, size: usize) -> Result<usize, HipError> {
    let size = size
        .checked_next_multiple_of(BLOCK_ALIGN)
        .ok_or(err::OUT_OF_MEMORY)?;
    let reused = with_pools(|ps| {
        let p = ps.pools.get_mut(&pool).ok_or(err::INVALID_VALUE)?;
        let hit = p.free.iter().rposition(|&(_, s)| s >= size);
        let block = hit.map(|i| p.free.remove(i));
        if let Some((addr, s)) = block {
            ps.blocks.insert(addr, (pool, s));
        }
        Ok::<_, HipError>(block.map(|b| b.0))
    })?;
    if let Some(addr) = reused {
        return Ok(addr);
    }
    let addr = rt()?.mem().alloc_device(size, DevKind::Device, 0)?;
    with_pools(|ps| ps.blocks.insert(addr, (pool, size)));
    Ok(addr)
}

/// Gives `addr` back to its pool when it is a pool block (`true`); the
/// caller has waited for the work before it. A block of a destroyed pool
/// goes back to the device.
pub(super) fn give_back(addr: usize) -> Result<bool, HipError> {
    // Some(true): kept by its pool; Some(false): its pool is gone.
    // A block already given back is freed twice: refused, or the pool would
    // later hand out memory the device no longer holds.
    let twice = with_pools(|ps| {
        ps.pools
            .values()
            .any(|p| p.free.iter().any(|b| b.0 == addr))
    });
    if twice {
        return Err(err::INVALID_VALUE);
    }
    let kept = with_pools(|ps| {
        let (pool, size) = ps.blocks.remove(&addr)?;
        let p = ps.pools.get_mut(&pool);
        Some(p.map(|p| p.free.push((addr, size))).is_some())
    });
    match kept {
        None => Ok(false),
        Some(true) => Ok(true),
        Some(false) => {
            rt()?.mem().free_device(addr, &[DevKind::Device])?;
            Ok(true)
        }
    }
}

/// The device's current pool, when one was set.
pub(super) fn current_pool() -> Option<usize> {
    with_pools(|ps| (ps.current != 0).then_some(ps.current))
}

/// Allocates from `pool` for `hipMallocAsync` / `hipMallocFromPoolAsync`.
pub(super) fn alloc_from(pool: usize, size: usize) -> Result<usize, HipError> {
    if size == 0 {
        return Ok(0);
    }
    pool_alloc(pool, size)
}

/// Releases free blocks of `pool` until it holds at most `keep` free bytes.
fn trim(pool: usize, keep: usize) -> Result<(), HipError> {
    let release = with_pools(|ps| {
        let p = ps.pools.get_mut(&pool).ok_or(err::INVALID_VALUE)?;
        let mut held: usize = p.free.iter().map(|b| b.1).sum();
        let mut out = Vec::new();
        // Oldest first: the most recently freed blocks are the likeliest reused.
        while held > keep && !p.free.is_empty() {
            let b = p.free.remove(0);
            held -= b.1;
            out.push(b.0);
        }
        Ok::<_, HipError>(out)
    })?;
    let rt = rt()?;
    for addr in release {
        rt.mem().free_device(addr, &[DevKind::Device])?;
    }
    Ok(())
}

pub(super) unsafe fn hipMemPoolCreate(a: args::hipMemPoolCreate) -> HipError {
    let args::hipMemPoolCreate {
        mem_pool,
        pool_props,
    } = a;
    guard(|| {
        if mem_pool.is_null() || pool_props.is_null() {
            return Err(err::INVALID_VALUE);
        }
        rt()?;
        let h = with_pools(|ps| {
            ps.next += 1;
            // Opaque, non-null, never dereferenced: a pool number in the
            // upper half of the address space no allocation reaches.
            let h = 0xffff_8000_0000_0000usize + ps.next * 64;
            ps.pools.insert(
                h,
                Pool {
                    free: Vec::new(),
                    release_threshold: 0,
                },
            );
            h
        });
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(mem_pool, h as *mut c_void) }
    })
}

pub(super) unsafe fn hipMemPoolDestroy(a: args::hipMemPoolDestroy) -> HipError {
    let pool = a.mem_pool as usize;
    guard(|| {
        let rt = rt()?;
        let _ = rt.device_synchronize();
        let p = with_pools(|ps| {
            if ps.current == pool {
                ps.current = 0;
            }
            ps.pools.remove(&pool)
        })
        .ok_or(err::INVALID_VALUE)?;
        for (addr, _) in p.free {
            rt.mem().free_device(addr, &[DevKind::Device])?;
        }
        Ok(())
    })
}

pub(super) unsafe fn hipMemPoolTrimTo(a: args::hipMemPoolTrimTo) -> HipError {
    guard(|| trim(a.mem_pool as usize, a.min_bytes_to_hold))
}

pub(super) unsafe fn hipMemPoolSetAttribute(a: args::hipMemPoolSetAttribute) -> HipError {
    let args::hipMemPoolSetAttribute {
        mem_pool,
        attr,
        value,
    } = a;
    guard(|| {
        if value.is_null() || !(1..=LAST_ATTR).contains(&attr) {
            return Err(err::INVALID_VALUE);
        }
        let v = if attr >= FIRST_U64_ATTR {
            // SAFETY: HIP contract: a u64 value for these attributes (checked non-null).
            unsafe { value.cast::<u64>().read_unaligned() }
        } else {
            // SAFETY: HIP contract: an int value for the reuse flags.
            u64::from(unsafe { value.cast::<i32>().read_unaligned() } != 0)
        };
        with_pools(|ps| {
            let p = ps
                .pools
                .get_mut(&(mem_pool as usize))
                .ok_or(err::INVALID_VALUE)?;
            if attr == FIRST_U64_ATTR {
                p.release_threshold = v;
            }
            Ok(())
        })
    })
}

pub(super) unsafe fn hipDeviceSetMemPool(a: args::hipDeviceSetMemPool) -> HipError {
    let args::hipDeviceSetMemPool { device, mem_pool } = a;
    guard(|| {
        if device != 0 {
            return Err(err::INVALID_DEVICE);
        }
        with_pools(|ps| {
            if !ps.pools.contains_key(&(mem_pool as usize)) {
                return Err(err::INVALID_VALUE);
            }
            ps.current = mem_pool as usize;
            Ok(())
        })
    })
}

pub(super) unsafe fn hipMallocFromPoolAsync(a: args::hipMallocFromPoolAsync) -> HipError {
    let args::hipMallocFromPoolAsync {
        dev_ptr,
        size,
        mem_pool,
        stream,
    } = a;
    guard(|| {
        if dev_ptr.is_null() {
            return Err(err::INVALID_VALUE);
        }
        rt()?.target(stream as usize)?;
        let p = alloc_from(mem_pool as usize, size)?;
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(dev_ptr, p as *mut c_void) }
    })
}
