//! The address arenas a GPU driver reserves, noted at capture; and the
//! recorded address ranges a replay keeps clear of the driver's own
//! mappings until the driver can reserve them there.
//!
//! # Why
//!
//! Pointers a program stores *inside* device memory (a table of device
//! pointers, a linked structure) are valid at replay only if every
//! allocation lives at its recorded address. The CUDA driver hands device
//! addresses out of large address ranges it reserves itself with an
//! anonymous `PROT_NONE` `mmap` and no address hint (on the H100 and H200
//! with driver 580: 448 MiB and 8 GiB, plus one per large reservation), so
//! the kernel puts them at a random base in every process, and a replay's
//! arenas may cover the capture's addresses. Measured on the H100
//! (`docs/results/cuda-address-hints-h100-2026-12-07.txt`),
//! `cuMemAddressReserve` honours its address hint (32 MiB-aligned) where
//! the range is free at that moment *and* was free when `cuInit` ran: the
//! driver takes whatever was mapped then as in use for good, so a range
//! held by a placeholder during `cuInit` can never be reserved.
//!
//! # How
//!
//! - **Noting** (capture): this crate defines `mmap` (and its alias
//!   `mmap64`), so a process that links it and exports the symbol
//!   dynamically (the preloaded capture library, `hrr-play`, `hrr-extract`)
//!   sees every `mmap` a shared library makes through its PLT, the driver's
//!   included. Each call is made as the raw system call, and an anonymous
//!   private `PROT_NONE` reservation of at least [`MIN_ARENA`] bytes with no
//!   address hint is noted ([`noted`]: what the capture library writes into
//!   the manifest, in order), for whoever studies an archive's address space.
//! - **Steering** (replay): once [`keep_clear`] has named the ranges replay
//!   will reserve, a mapping made without an address that the kernel put
//!   over one of them is moved below it, so the driver's arenas never cover
//!   them and the driver sees them free when it starts.
//! - **Holding** (replay): after `cuInit`, [`hold`] puts inaccessible
//!   placeholders over those ranges, so that nothing else of the process
//!   (thread stacks, the allocator's large blocks) lands there before
//!   placement reserves them; right before reserving one, the backend gives
//!   it up with [`unhold`].
//!
//! Nothing changes for the program: a mapping of the size it asked for, at
//! an address it did not choose. Why by hand: no crate interposes `mmap`;
//! the system call is the only way to forward it without `dlsym`, which may
//! itself call `mmap` (through `malloc`).

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

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

/// Ranges (`[start, end)`, sorted, disjoint) no mapping made without an
/// address may cover; set once, before the driver starts.
static CLEAR: OnceLock<Vec<(u64, u64)>> = OnceLock::new();

/// Mappings are moved in steps of this (the GPU's granule; the driver's
/// arenas need no more than page alignment, this keeps them tidy).
const STEER_ALIGN: u64 = 2 << 20;

/// How many places a moved mapping tries before it stays where the kernel
/// put it.
const STEER_TRIES: usize = 64;

/// Names the ranges (`[start, end)`) that mappings made without an address
/// must stay clear of from now on (see the crate docs); call before the
/// driver starts. Only the first call counts: returns whether it was this one.
pub fn keep_clear(spans: &[(u64, u64)]) -> bool {
    let mut v: Vec<(u64, u64)> = spans.iter().copied().filter(|&(b, e)| b < e).collect();
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (b, e) in v {
        match merged.last_mut() {
            Some(last) if b <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((b, e)),
        }
    }
    CLEAR.set(merged).is_ok()
}

/// The lowest kept range that meets `[at, at + len)`.
fn kept_in(clear: &[(u64, u64)], at: u64, len: u64) -> Option<(u64, u64)> {
    let end = at.saturating_add(len);
    // The first range ending after `at`; it meets when it starts before `end`.
    let i = clear.partition_point(|&(_, e)| e <= at);
    clear.get(i).copied().filter(|&(b, _)| b < end)
}

/// Moves `r`, a fresh mapping of `len` bytes made without an address, below
/// the kept ranges it covers; returns where it is now (`r` itself when it
/// covers none; where the kernel puts it again when no free place below
/// was found).
///
/// # Safety
/// `r` must be the mapping just made with these arguments, used by no one.
unsafe fn steer(
    r: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    let Some(clear) = CLEAR.get() else {
        return r;
    };
    let len64 = len as u64;
    let Some((mut below, _)) = kept_in(clear, r as u64, len64) else {
        return r;
    };
    // SAFETY: the caller's mapping, unused; re-made below or as before.
    unsafe { libc::munmap(r, len) };
    for _ in 0..STEER_TRIES {
        let Some(at) = below.checked_sub(len64).map(|a| a & !(STEER_ALIGN - 1)) else {
            break;
        };
        if at < STEER_ALIGN {
            break;
        }
        if let Some((b, _)) = kept_in(clear, at, len64) {
            below = b;
            continue;
        }
        // SAFETY: NOREPLACE fails rather than replace any mapping.
        let p = unsafe {
            sys_mmap(
                at as *mut c_void,
                len,
                prot,
                flags | libc::MAP_FIXED_NOREPLACE,
                fd,
                off,
            )
        };
        if p as u64 == at {
            return p;
        }
        if p != libc::MAP_FAILED {
            // A kernel that took NOREPLACE for a hint put it elsewhere.
            // SAFETY: the mapping just made, used by no one.
            unsafe { libc::munmap(p, len) };
        }
        // Something lies there: try below it.
        below = at;
    }
    // SAFETY: the caller's arguments again: where the kernel likes.
    unsafe { sys_mmap(std::ptr::null_mut(), len, prot, flags, fd, off) }
}

// ---------------------------------------------------------------- holding

/// Ranges held free for the replay's own reservations: base → end.
static HELD: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// Holds the address ranges `spans` (`[start, end)`, page-aligned) with
/// inaccessible placeholders until [`unhold`] gives them up, so that
/// nothing else of the process is put there meanwhile. Must run after the
/// driver started (`cuInit`), which would take them as in use for good. A
/// range something already holds is skipped. Returns how many were held.
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
/// caller to reserve there at once. Returns whether one did (`false`: the
/// range was never held, or was given up before).
pub fn unhold(base: u64, len: u64) -> bool {
    let end = base.saturating_add(len);
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    let meeting: Vec<(u64, u64)> = held
        .range(..end)
        .filter(|&(_, &e)| e > base)
        .map(|(&b, &e)| (b, e))
        .collect();
    for &(b, e) in &meeting {
        held.remove(&b);
        // SAFETY: a placeholder `hold` made, which nothing uses.
        unsafe { libc::munmap(b as *mut c_void, (e - b) as usize) };
    }
    !meeting.is_empty()
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
    // SAFETY: the caller's arguments, unchanged.
    let mut r = unsafe { sys_mmap(addr, len, prot, flags, fd, off) };
    if r == libc::MAP_FAILED {
        return r;
    }
    if addr.is_null() && flags & (libc::MAP_FIXED | libc::MAP_FIXED_NOREPLACE) == 0 {
        // SAFETY: the mapping just made for the caller, not yet returned.
        r = unsafe { steer(r, len, prot, flags, fd, off) };
    }
    if r != libc::MAP_FAILED && is_arena(addr, len, prot, flags) {
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

        // Steering: where the kernel would put the next arena is kept
        // clear, and the arena lands below it instead.
        let len = GIB;
        let would = reserve(len);
        release(would, len);
        let kept = (would, would + len as u64);
        assert!(keep_clear(&[kept]));
        assert!(!keep_clear(&[kept]), "only the first call counts");
        let moved = reserve(len);
        assert!(
            moved + len as u64 <= kept.0,
            "{moved:#x} should lie below the kept {:#x}..{:#x}",
            kept.0,
            kept.1
        );
        assert!(noted().contains(&Arena {
            base: moved,
            size: len as u64
        }));
        release(moved, len);
        assert_eq!(kept_in(&[(10, 20), (30, 40)], 20, 10), None);
        assert_eq!(kept_in(&[(10, 20), (30, 40)], 15, 100), Some((10, 20)));
        assert_eq!(kept_in(&[(10, 20), (30, 40)], 25, 6), Some((30, 40)));
    }
}
