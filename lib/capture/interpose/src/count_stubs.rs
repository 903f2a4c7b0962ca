//! Counting stubs: call counts for functions this library has no wrapper
//! for, whatever their signature.
//!
//! A stub is 16 bytes of machine code, `lock inc [count_i]; jmp [target_i]`:
//! it touches no argument register, no vector register and not the stack,
//! so the call reaches `target_i` exactly as the caller made it and returns
//! straight to the caller. Handing out a stub instead of a function's
//! address (from a `cuGetProcAddress` or `dlsym` answer) therefore costs the
//! program one atomic increment per call and tells the recorder how often a
//! function it cannot record was called. There are [`STUBS`] of them;
//! [`stub_for`] hands out one per distinct target, and `None` once they are
//! used up. x86_64 only ([`stub_for`] answers `None` elsewhere).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// Stubs available to a process.
pub const STUBS: usize = 1024;

#[cfg(target_arch = "x86_64")]
mod asm {
    use std::sync::atomic::{AtomicU64, AtomicUsize};

    /// Bytes of code per stub (`lock inc` 8 + `jmp` 6, aligned to 16).
    pub const STUB_BYTES: usize = 16;

    core::arch::global_asm!(
        ".pushsection .text.hrr_count_stubs,\"ax\",@progbits",
        ".p2align 4",
        ".globl hrr_count_stubs",
        ".hidden hrr_count_stubs",
        "hrr_count_stubs:",
        ".set hrr_stub_i, 0",
        ".rept {n}",
        "lock inc qword ptr [rip + hrr_count_stub_counts + 8 * hrr_stub_i]",
        "jmp qword ptr [rip + hrr_count_stub_targets + 8 * hrr_stub_i]",
        ".p2align 4, 0xcc",
        ".set hrr_stub_i, hrr_stub_i + 1",
        ".endr",
        ".popsection",
        ".pushsection .bss.hrr_count_stubs,\"aw\",@nobits",
        ".p2align 6",
        ".globl hrr_count_stub_counts",
        ".hidden hrr_count_stub_counts",
        "hrr_count_stub_counts:",
        ".zero 8 * {n}",
        ".globl hrr_count_stub_targets",
        ".hidden hrr_count_stub_targets",
        "hrr_count_stub_targets:",
        ".zero 8 * {n}",
        ".popsection",
        n = const super::STUBS,
    );

    unsafe extern "C" {
        pub static hrr_count_stubs: [u8; super::STUBS * STUB_BYTES];
        pub static hrr_count_stub_counts: [AtomicU64; super::STUBS];
        pub static hrr_count_stub_targets: [AtomicUsize; super::STUBS];
    }
}

struct Pool {
    /// Target address → stub index.
    by_target: BTreeMap<usize, usize>,
    /// Name of each stub's function, by index.
    names: Vec<String>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    by_target: BTreeMap::new(),
    names: Vec::new(),
});

/// The address of a stub that counts calls and jumps to `target` (a
/// function named `name`): the same stub for the same target every time.
/// `None` when the stubs are used up or on another architecture.
pub fn stub_for(target: usize, name: &str) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::Ordering;
        let mut p = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&i) = p.by_target.get(&target) {
            return Some(stub_address(i));
        }
        let i = p.names.len();
        if i >= STUBS || target == 0 {
            return None;
        }
        // SAFETY: an in-bounds element of the stub data (atomics, shared).
        unsafe { asm::hrr_count_stub_targets[i].store(target, Ordering::Release) };
        p.names.push(name.to_string());
        p.by_target.insert(target, i);
        Some(stub_address(i))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (target, name);
        None
    }
}

#[cfg(target_arch = "x86_64")]
fn stub_address(i: usize) -> usize {
    // Only the address of the stub table is taken, never its bytes.
    let base = std::ptr::addr_of!(asm::hrr_count_stubs) as usize;
    base + i * asm::STUB_BYTES
}

/// Calls made through each stub so far: (name, count), stubs never called
/// left out.
pub fn counts() -> Vec<(String, u64)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::Ordering;
        let p = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        p.names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                // SAFETY: an in-bounds element of the stub data.
                let c = unsafe { asm::hrr_count_stub_counts[i].load(Ordering::Relaxed) };
                (c > 0).then(|| (n.clone(), c))
            })
            .collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    extern "C" fn add(a: i32, b: i64) -> i64 {
        i64::from(a) + b
    }

    /// Nine integer arguments (three on the stack) and floats in xmm registers.
    #[allow(clippy::too_many_arguments)]
    extern "C" fn many(
        a: u8,
        b: u16,
        c: u32,
        d: u64,
        x: f64,
        e: i64,
        f: i64,
        g: i64,
        h: i64,
        y: f32,
    ) -> f64 {
        f64::from(a)
            + f64::from(b)
            + f64::from(c)
            + d as f64
            + x
            + (e + f + g + h) as f64
            + f64::from(y)
    }

    type Add = extern "C" fn(i32, i64) -> i64;
    type Many = extern "C" fn(u8, u16, u32, u64, f64, i64, i64, i64, i64, f32) -> f64;

    fn count_of(name: &str) -> u64 {
        counts()
            .into_iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, c)| c)
    }

    #[test]
    fn stubs_pass_every_argument_through_and_count() {
        let target = add as Add as usize;
        let s = stub_for(target, "add").unwrap();
        assert_ne!(s, target);
        assert_eq!(stub_for(target, "add"), Some(s), "one stub per target");
        // SAFETY: the stub jumps to `add`, whose type this is.
        let f: extern "C" fn(i32, i64) -> i64 = unsafe { std::mem::transmute(s) };
        assert_eq!(f(2, 40), 42);
        assert_eq!(f(-5, 1 << 40), (1 << 40) - 5);
        assert_eq!(count_of("add"), 2);

        let s = stub_for(many as Many as usize, "many").unwrap();
        // SAFETY: as above.
        let g: extern "C" fn(u8, u16, u32, u64, f64, i64, i64, i64, i64, f32) -> f64 =
            unsafe { std::mem::transmute(s) };
        let want = many(1, 2, 3, 4, 0.5, 5, 6, 7, 8, 0.25);
        assert_eq!(g(1, 2, 3, 4, 0.5, 5, 6, 7, 8, 0.25), want);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    (0..1000).for_each(|_| {
                        let _ = g(1, 2, 3, 4, 0.5, 5, 6, 7, 8, 0.25);
                    })
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(count_of("many"), 4001, "atomic across threads");
        assert!(stub_for(0, "null").is_none());
    }
}
