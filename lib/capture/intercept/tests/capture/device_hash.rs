//! The device hash of large D2H copies (`cuda::device_hash`), end to end on
//! the stand-in driver and NVRTC (`tests/c/fake_cuda`): the real capture
//! library compiles `device_hash.cu` through the stand-in NVRTC, loads it,
//! allocates its scratch and result page and launches its kernels, which
//! the stand-in driver runs with the same source compiled as C. What is
//! proven here is the driver side — load, launch, result, first check,
//! fallbacks, contexts that die — and that every blob is named by its
//! bytes; the kernels on a GPU are the GPU pass's `device_hash` cases.

use std::process::Output;

use crate::harness::{Captured, capture_with, cuda_program, fake_cuda, text};
use hrr_core::{BlobId, Dir, Op};

/// Bytes of each copy `tests/c/device_hash.c` makes.
const BYTES: usize = 8 << 20;

/// The bytes of copy `k` (as the program fills them).
fn copy_bytes(k: u32) -> Vec<u8> {
    (0..BYTES as u32 / 4)
        .flat_map(|i| {
            ((i + 1).wrapping_mul(0x9E37_79B1) ^ k.wrapping_mul(0x85EB_CA6B)).to_le_bytes()
        })
        .collect()
}

/// `tests/c/device_hash.c MODE` captured with the stand-in libraries and
/// `vars` (HRR_LOG on): its output, and the archive.
fn captured(mode: &str, vars: &[(&str, &str)]) -> (tempfile::TempDir, Output, Captured) {
    let app = cuda_program("device_hash", &["cuda", "cudart"]);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(format!("{mode}.hrr"));
    let fake = fake_cuda();
    let mut env: Vec<(&str, &std::ffi::OsStr)> = vec![
        ("LD_LIBRARY_PATH", fake.as_os_str()),
        ("HRR_LOG", "1".as_ref()),
    ];
    env.extend(vars.iter().map(|(k, v)| (*k, v.as_ref())));
    let out = capture_with(&dir, &app, &[mode], &env);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("device_hash: OK"),
        "{mode}: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    let c = Captured::open(&dir);
    assert!(c.manifest.complete, "{mode}: {stderr}");
    (t, out, c)
}

/// What the program printed for `key=`.
fn printed(out: &Output, key: &str) -> u64 {
    let stdout = text(&out.stdout);
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {stdout}"))
}

/// The archive's two D2H copies hold copies 1 and 2, each blob named by
/// the BLAKE3 of its bytes; nothing of the hash's own driver calls (its
/// scratch, result page, module, launches) is recorded.
fn assert_copies_right(c: &Captured) {
    let d2h: Vec<BlobId> = c
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Memcpy {
                dir: Dir::D2h,
                blob,
                size,
                ..
            } => {
                assert_eq!(size, BYTES as u64, "{e:?}");
                Some(blob.unwrap_or_else(|| panic!("no blob: {e:?}")))
            }
            _ => None,
        })
        .collect();
    assert_eq!(d2h.len(), 2, "{:?}", c.events);
    for (k, id) in (1..).zip(&d2h) {
        let want = copy_bytes(k);
        let got = c.blob(id);
        assert!(got == want, "copy {k}: the blob holds other bytes");
        assert_eq!(*id, BlobId(*blake3::hash(&got).as_bytes()), "copy {k}");
    }
    let allocs = c
        .events
        .iter()
        .filter(|e| matches!(e.op, Op::Alloc { .. }))
        .count();
    assert_eq!(allocs, 2, "the program's two allocations only");
    assert!(
        !c.events
            .iter()
            .any(|e| matches!(e.op, Op::Launch { .. } | Op::ModuleLoad { .. })),
        "{:?}",
        c.events
    );
}

/// How many `device hash: loaded in context CTX` lines stderr holds.
fn loads(out: &Output, ctx: &str) -> usize {
    text(&out.stderr)
        .matches(&format!("device hash: loaded in context {ctx} (device 0)"))
        .count()
}

#[test]
fn large_d2h_copies_are_hashed_on_the_device_and_named_by_their_bytes() {
    let (_t, out, c) = captured("primary", &[]);
    let stderr = text(&out.stderr);
    // Loaded once in the context; two launches (chunks, then the groups'
    // nodes) per 8 MiB copy; the first result checked, and agreeing.
    assert_eq!(loads(&out, "0xc00"), 1, "{stderr}");
    assert_eq!(printed(&out, "hash_launches"), 4, "{stderr}");
    assert!(
        !stderr.contains("hashed on the host") && !stderr.contains("failed"),
        "{stderr}"
    );
    assert_copies_right(&c);
}

#[test]
fn check_mode_compares_each_copy_and_off_mode_leaves_the_device_alone() {
    let (_t, out, c) = captured("primary", &[("HRR_DEVICE_HASH", "check")]);
    let stderr = text(&out.stderr);
    let agree: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with(&format!(
                "hrr-intercept: cuda: device hash: {BYTES} bytes: "
            ))
        })
        .collect();
    assert_eq!(agree.len(), 2, "{stderr}");
    for (k, l) in (1..).zip(&agree) {
        let h = blake3::hash(&copy_bytes(k)).to_hex();
        assert!(
            l.ends_with(&format!("{h} agrees with the host's {h}")),
            "{l}"
        );
    }
    assert_eq!(printed(&out, "hash_launches"), 4);
    assert_copies_right(&c);

    let (_t, out, c) = captured("primary", &[("HRR_DEVICE_HASH", "off")]);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("device hash"), "{stderr}");
    assert_eq!(printed(&out, "hash_launches"), 0);
    assert_copies_right(&c);
}

#[test]
fn a_device_hash_that_disagrees_with_the_host_turns_it_off_for_the_process() {
    // The stand-in kernel gets the hash wrong: the first result is checked
    // against the host's hash, which names the blob; the second copy is
    // not hashed on the device at all.
    let (_t, out, c) = captured("primary", &[("FAKE_CUDA_WRONG_HASH", "1")]);
    let stderr = text(&out.stderr);
    let right = blake3::hash(&copy_bytes(1)).to_hex();
    let line = stderr
        .lines()
        .find(|l| l.ends_with("hashed on the host from now on"))
        .unwrap_or_else(|| panic!("no disagreement reported:\n{stderr}"));
    assert!(
        line.starts_with("hrr-intercept: cuda: device hash: ")
            && line.contains(&format!(" for {BYTES} bytes, the host's {right}:"))
            && !line.contains(&format!("device hash: {right}")),
        "{line}"
    );
    assert_eq!(printed(&out, "hash_launches"), 2, "{stderr}");
    assert_copies_right(&c);
}

#[test]
fn a_context_destroyed_and_made_again_at_its_handle_loads_the_hash_anew() {
    // The second cuCtxCreate gets the destroyed context's handle value;
    // the hash launched in it must be its own, not the dead context's.
    let (_t, out, c) = captured("destroy", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(printed(&out, "same"), 1, "{stderr}");
    assert_eq!(loads(&out, "0xd00"), 2, "{stderr}");
    assert_eq!(printed(&out, "hash_launches"), 4, "{stderr}");
    assert!(!stderr.contains("failed"), "{stderr}");
    assert_copies_right(&c);
}

#[test]
fn a_reset_primary_context_loads_the_hash_anew_and_the_reset_is_recorded() {
    // cudaDeviceReset: the stand-in runtime calls the cuDevicePrimaryCtxReset
    // it looked up through cuGetProcAddress, as libcudart does.
    let (_t, out, c) = captured("reset", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(printed(&out, "same"), 1, "{stderr}");
    assert_eq!(loads(&out, "0xc00"), 2, "{stderr}");
    assert_eq!(printed(&out, "hash_launches"), 4, "{stderr}");
    assert!(!stderr.contains("failed"), "{stderr}");
    assert_copies_right(&c);
    // Recorded (the `_v2` symbol serves both names), nothing unrecorded.
    let resets: Vec<&str> = c
        .events
        .iter()
        .filter(|e| matches!(e.op, Op::DeviceReset { device: 0 }))
        .map(|e| e.api.as_str())
        .collect();
    assert_eq!(resets.len(), 1, "{resets:?}\n{stderr}");
    assert!(
        resets[0].starts_with("cuDevicePrimaryCtxReset"),
        "{resets:?}"
    );
    assert!(stderr.contains("\nunrecorded : 0 calls\n"), "{stderr}");
    assert!(c.manifest.unrecorded.is_empty());
}

#[test]
fn a_primary_context_released_by_its_last_holder_loads_the_hash_anew() {
    let (_t, out, c) = captured("release", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(printed(&out, "same"), 1, "{stderr}");
    assert_eq!(loads(&out, "0xc00"), 2, "{stderr}");
    assert_eq!(printed(&out, "hash_launches"), 4, "{stderr}");
    assert_copies_right(&c);
}
