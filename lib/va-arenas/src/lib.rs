//! The address arenas a GPU driver reserves, noted at capture; and the
//! recorded address ranges a replay keeps free for itself until the driver
//! can reserve them there.
//!
//! # Why
//!
//! Pointers a program stores *inside* device memory (a table of device
//! pointers, a linked structure) are valid at replay only if every
//! allocation lives at its recorded address. The CUDA driver hands device
//! addresses out of large address ranges it reserves itself with an
//! anonymous `PROT_NONE` `mmap` and no address hint (on the H100 and H200
//! with driver 580: 448 MiB and 8 GiB, plus one per large reservation), so
//! the kernel puts them at a random base in every process. Measured on the
//! H100 (`docs/results/cuda-address-hints-h100-2026-12-07.txt`),
//! `cuMemAddressReserve` honours its address hint only for a reservation
//! of whole 32 MiB blocks in address space nothing else holds: the driver
//! then maps a range of its own at that address. Smaller reservations, and
//! any inside the driver's arenas, come from its arenas wherever it likes.
//!
//! # How
//!
//! - **Noting** (capture): this crate defines `mmap` (and its alias
//!   `mmap64`), so a process that links it and exports the symbol
//!   dynamically (the preloaded capture library) sees every `mmap` a shared
//!   library makes through its PLT, the driver's included. Each call is
//!   forwarded unchanged as the raw system call, and an anonymous private
//!   `PROT_NONE` reservation of at least [`MIN_ARENA`] bytes with no address
//!   hint is noted ([`noted`]: what the capture library writes into the
//!   manifest, in order), for whoever studies an archive's address space.
//! - **Holding** (replay): before the driver starts, [`hold`] puts
//!   inaccessible placeholders over the ranges replay will reserve, so that
//!   the driver's arenas land elsewhere; right before reserving one, the
//!   backend gives it up with [`unhold`].
//!
//! Nothing changes for the program: a reservation of the size it asked
//! for, at an address it did not choose. Why by hand: no crate interposes
//! `mmap`; the system call is the only way to forward it without `dlsym`,
//! which may itself call `mmap` (through `malloc`).

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

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

// ---------------------------------------------------------------- holding

/// Ranges held free for the replay's own reservations: base → end.
static HELD: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// Holds the address ranges `spans` (`[start, end)`, page-aligned) with
/// inaccessible placeholders until [`unhold`] gives them up, so that
/// nothing else of the process — the driver's own arenas above all, which
/// it puts wherever the kernel chooses — is put there meanwhile. Must run
/// before the driver starts. A range something already holds is skipped.
/// Returns how many were held.
pub fn hold(spans: &[(u64, u64)]) -> usize {
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    let mut n = 0;
    for &(b, e) in spans {
        let len = (e - b) as usize;
        // SAFETY: NOREPLACE fails rather than replace any mapping; the
        // placeholder is anonymous, inaccessible and backs nothing.
        let r = unsafe {
            sys_mmap(
                b as *mut c_void,
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if r as u64 == b {
            held.insert(b, e);
            n += 1;
        } else if r != libc::MAP_FAILED {
            // A kernel that took NOREPLACE for a hint put it elsewhere.
            // SAFETY: the mapping just made, used by no one.
            unsafe { libc::munmap(r, len) };
        }
    }
    n
}

/// Gives up every held range that meets `[base, base + len)`, for the
/// caller to reserve there at once.
pub fn unhold(base: u64, len: u64) {
    let end = base.saturating_add(len);
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    let meeting: Vec<(u64, u64)> = held
        .range(..end)
        .filter(|&(_, &e)| e > base)
        .map(|(&b, &e)| (b, e))
        .collect();
    for (b, e) in meeting {
        held.remove(&b);
        // SAFETY: a placeholder `hold` made, which nothing uses.
        unsafe { libc::munmap(b as *mut c_void, (e - b) as usize) };
    }
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
    // SAFETY: the caller's arguments, unchanged.
    let r = unsafe { sys_mmap(addr, len, prot, flags, fd, off) };
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

    // One test: noting and holding are process-wide.
    #[test]
    fn arenas_are_noted_and_held_ranges_kept_free_until_given_up() {
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

        // A range the kernel's top-down placement never picks by itself.
        let base = 0x3f00_0000_0000u64;
        let span = (base, base + GIB as u64);
        assert_eq!(hold(&[span]), 1);
        assert_eq!(hold(&[span]), 0, "held already: skipped");
        let at = |hint: u64| {
            // SAFETY: NOREPLACE never replaces a mapping.
            unsafe {
                hook(
                    hint as *mut c_void,
                    1 << 20,
                    libc::PROT_NONE,
                    ANON | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            }
        };
        assert_eq!(at(base + (1 << 20)), libc::MAP_FAILED, "held");
        unhold(base + (2 << 20), 1);
        let p = at(base + (1 << 20));
        assert_eq!(p as u64, base + (1 << 20), "given up");
        release(p as u64, 1 << 20);
    }
}
