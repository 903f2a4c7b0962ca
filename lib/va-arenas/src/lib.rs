//! The address arenas a GPU driver reserves, noted at capture and steered
//! to the same bases at replay.
//!
//! # Why
//!
//! Pointers a program stores *inside* device memory (a table of device
//! pointers, a linked structure) are valid at replay only if every
//! allocation lives at its recorded address. The CUDA driver hands
//! `cuMemAlloc` addresses out of large address ranges it reserves itself
//! with an anonymous `PROT_NONE` `mmap` and no address hint (on an H200 with
//! driver 580: one of 448 MiB for small allocations, one of 8 GiB for larger
//! ones), so the kernel puts them at a random base in every process — while
//! *within* an arena the driver's allocator is deterministic: the same
//! sequence of allocations gets the same offsets. Asking the driver for an
//! address with `cuMemAddressReserve` does not help: its hint is ignored
//! outside its own arenas. Steering the arena reservations themselves to
//! the recorded bases does: measured, the same allocations then return the
//! recorded addresses.
//!
//! # How
//!
//! This crate defines `mmap` (and its alias `mmap64`), so a process that
//! links it and exports the symbol dynamically (the preloaded capture
//! library; `hrr-play` and `hrr-extract` with `--export-dynamic-symbol`)
//! sees every `mmap` a shared library makes through its PLT, the driver's
//! included. Each call is forwarded unchanged as the raw system call, and:
//!
//! - an anonymous private `PROT_NONE` reservation of at least
//!   [`MIN_ARENA`] bytes with no address hint is **noted** ([`noted`]: what
//!   the capture library writes into the manifest, in order);
//! - once a replay has installed a plan ([`steer`]) before the driver
//!   starts, such a reservation whose size matches a planned arena not yet
//!   used is first tried at that arena's base (`MAP_FIXED_NOREPLACE`: never
//!   over an existing mapping); where the base is taken, it is made as asked.
//!
//! Nothing changes for the program: the result is a reservation of the size
//! it asked for, at an address it did not choose. Why by hand: no crate
//! interposes `mmap`; the system call is the only way to forward it without
//! `dlsym`, which may itself call `mmap` (through `malloc`).

#![allow(unsafe_code)]

use std::ffi::{c_int, c_long, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The smallest reservation treated as an arena (256 MiB): far above what
/// allocators reserve for themselves, below the driver's smallest arena.
pub const MIN_ARENA: u64 = 256 << 20;

/// How many arenas are noted at most (a driver makes a handful per device).
const MAX_NOTED: usize = 64;

/// One arena: its base address and size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arena {
    /// Start of the reservation.
    pub base: u64,
    /// Its length in bytes.
    pub size: u64,
}

/// Whether a call is an arena reservation: anonymous, private, `PROT_NONE`,
/// no hint, no fixed address, at least [`MIN_ARENA`] bytes.
fn is_arena(addr: *mut c_void, len: usize, prot: c_int, flags: c_int) -> bool {
    addr.is_null()
        && prot == libc::PROT_NONE
        && flags & (libc::MAP_ANONYMOUS | libc::MAP_PRIVATE)
            == libc::MAP_ANONYMOUS | libc::MAP_PRIVATE
        && flags & (libc::MAP_FIXED | libc::MAP_FIXED_NOREPLACE) == 0
        && len as u64 >= MIN_ARENA
}

// ---------------------------------------------------------------- noting

/// Noted arenas: slots `0..NOTED_LEN` are filled (size first, then base).
static NOTED_BASE: [AtomicU64; MAX_NOTED] = [const { AtomicU64::new(0) }; MAX_NOTED];
static NOTED_SIZE: [AtomicU64; MAX_NOTED] = [const { AtomicU64::new(0) }; MAX_NOTED];
static NOTED_LEN: AtomicUsize = AtomicUsize::new(0);

/// No allocation, no lock: `mmap` may run in a signal handler or inside
/// `malloc`.
fn note(base: u64, size: u64) {
    let i = NOTED_LEN.fetch_add(1, Ordering::AcqRel);
    if i < MAX_NOTED {
        NOTED_SIZE[i].store(size, Ordering::Relaxed);
        NOTED_BASE[i].store(base, Ordering::Release);
    }
}

/// The arenas this process reserved so far, in the order it made them
/// (a slot being written concurrently is left out).
pub fn noted() -> Vec<Arena> {
    let n = NOTED_LEN.load(Ordering::Acquire).min(MAX_NOTED);
    (0..n)
        .filter_map(|i| {
            let base = NOTED_BASE[i].load(Ordering::Acquire);
            let size = NOTED_SIZE[i].load(Ordering::Relaxed);
            (base != 0 && size != 0).then_some(Arena { base, size })
        })
        .collect()
}

// ---------------------------------------------------------------- steering

struct Planned {
    arena: Arena,
    used: AtomicBool,
}

static PLAN: OnceLock<Vec<Planned>> = OnceLock::new();
static STEERED: AtomicUsize = AtomicUsize::new(0);
static MISSED: AtomicUsize = AtomicUsize::new(0);

/// Installs the replay's plan: the recorded arenas, in recorded order. Must
/// run before the driver reserves its arenas (before it is initialised);
/// only the first call counts. Returns whether this call installed it.
pub fn steer(plan: &[Arena]) -> bool {
    let planned = plan
        .iter()
        .map(|&arena| Planned {
            arena,
            used: AtomicBool::new(false),
        })
        .collect();
    PLAN.set(planned).is_ok()
}

/// How steering went: arenas made at their recorded base, and arena
/// reservations whose planned base was taken.
pub fn steering() -> (usize, usize) {
    (
        STEERED.load(Ordering::Relaxed),
        MISSED.load(Ordering::Relaxed),
    )
}

/// The first unused planned arena of `size` bytes, now marked used.
fn take_planned(size: u64) -> Option<u64> {
    PLAN.get()?.iter().find_map(|p| {
        (p.arena.size == size && !p.used.swap(true, Ordering::AcqRel)).then_some(p.arena.base)
    })
}

// ---------------------------------------------------------------- the hook

/// The `mmap` system call.
///
/// # Safety
/// As `mmap(2)`: with `MAP_FIXED`, `addr` must not cover memory in use.
unsafe fn sys_mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    // SAFETY: the caller's contract; syscall sets errno and returns -1 on
    // failure, which is MAP_FAILED.
    let r: c_long = unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, off) };
    r as *mut c_void
}

/// What the exported `mmap` does (see the crate docs).
///
/// # Safety
/// As `mmap(2)`.
pub unsafe fn hook(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    if !is_arena(addr, len, prot, flags) {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { sys_mmap(addr, len, prot, flags, fd, off) };
    }
    let mut r = libc::MAP_FAILED;
    if let Some(base) = take_planned(len as u64) {
        // SAFETY: NOREPLACE fails rather than replace a mapping; a kernel
        // too old to know the flag takes `base` as a hint.
        r = unsafe {
            sys_mmap(
                base as *mut c_void,
                len,
                prot,
                flags | libc::MAP_FIXED_NOREPLACE,
                fd,
                off,
            )
        };
        if r as u64 == base {
            STEERED.fetch_add(1, Ordering::Relaxed);
        } else {
            MISSED.fetch_add(1, Ordering::Relaxed);
        }
    }
    if r == libc::MAP_FAILED {
        // SAFETY: the caller's arguments, unchanged.
        r = unsafe { sys_mmap(addr, len, prot, flags, fd, off) };
    }
    if r != libc::MAP_FAILED {
        note(r as u64, len as u64);
    }
    r
}

/// libc's `mmap`, forwarded as the system call (see the crate docs).
///
/// # Safety
/// As `mmap(2)`.
#[cfg(not(test))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    // SAFETY: the application's arguments, under mmap's own contract.
    unsafe { hook(addr, len, prot, flags, fd, off) }
}

/// glibc's 64-bit-offset name of the same call (`off_t` is 64-bit here).
///
/// # Safety
/// As `mmap(2)`.
#[cfg(all(not(test), target_pointer_width = "64"))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    // SAFETY: as `mmap`.
    unsafe { hook(addr, len, prot, flags, fd, off) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: usize = 1 << 30;
    const ANON: c_int = libc::MAP_ANONYMOUS | libc::MAP_PRIVATE;

    fn reserve(len: usize) -> u64 {
        // SAFETY: a fresh reservation, no hint.
        let p = unsafe { hook(std::ptr::null_mut(), len, libc::PROT_NONE, ANON, -1, 0) };
        assert_ne!(p, libc::MAP_FAILED);
        p as u64
    }

    fn release(base: u64, len: usize) {
        // SAFETY: a reservation this test made and no one uses.
        assert_eq!(unsafe { libc::munmap(base as *mut c_void, len) }, 0);
    }

    // One test: noting and the plan are process-wide.
    #[test]
    fn arenas_are_noted_and_steered_back_to_their_base() {
        // Small, hinted, or readable reservations are not arenas.
        assert!(!is_arena(
            std::ptr::null_mut(),
            1 << 20,
            libc::PROT_NONE,
            ANON
        ));
        assert!(!is_arena(std::ptr::null_mut(), GIB, libc::PROT_READ, ANON));
        assert!(!is_arena(0x1000 as *mut c_void, GIB, libc::PROT_NONE, ANON));

        let first = reserve(GIB);
        assert!(noted().contains(&Arena {
            base: first,
            size: GIB as u64
        }));
        release(first, GIB);

        // A base the kernel's top-down placement never picks by itself.
        let base = 0x3f00_0000_0000;
        assert!(steer(&[Arena {
            base,
            size: GIB as u64
        }]));
        let steered = reserve(GIB);
        assert_eq!(steered, base, "steered to the planned base");
        assert_eq!(steering(), (1, 0));
        // Used up: the next one of that size, and one of a size not
        // planned, go wherever the kernel puts them.
        let next = reserve(GIB);
        let other = reserve(2 * GIB);
        assert!(next != base && other != base);
        assert_eq!(steering(), (1, 0));
        assert!(noted().contains(&Arena {
            base,
            size: GIB as u64
        }));
        release(steered, GIB);
        release(next, GIB);
        release(other, 2 * GIB);
    }
}
