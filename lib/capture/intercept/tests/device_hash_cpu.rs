//! The device hash's tree (`src/cuda/device_hash.cu`: chunk, parent and
//! compression functions, the per-group level-by-level merge with the odd
//! node promoted, ROOT on the last compression), compiled as plain C and run
//! serially, against the `blake3` crate: the name a device-hashed blob gets
//! must be the one the archive's check computes.

unsafe extern "C" {
    /// `tests/c/device_hash_cpu.c`, linked by the crate's build script.
    fn hrr_test_device_hash_serial(input: *const u8, len: u64, out: *mut u8) -> i32;
}

fn device_hash_serial(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    // SAFETY: `bytes` is readable for its length and `out` writable for 32
    // bytes, all the C function touches.
    let rc = unsafe {
        hrr_test_device_hash_serial(bytes.as_ptr(), bytes.len() as u64, out.as_mut_ptr())
    };
    assert_eq!(rc, 0, "out of memory");
    out
}

/// `n` pseudo-random bytes (BLAKE3's extendable output of a fixed key).
fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    blake3::Hasher::new()
        .update(b"device hash test input")
        .finalize_xof()
        .fill(&mut v);
    v
}

#[test]
fn the_device_tree_hashes_like_blake3() {
    let sizes = [
        0,
        1,
        63,
        64,
        65,
        1023,
        1024,
        1025,
        2048,
        2049,
        3 * 1024 + 5,
        // Past one group of 256 chunks, and not a whole number of them.
        256 * 1024 + 1,
        (1 << 20) + 7,
        17 << 20,
    ];
    let data = random(17 << 20);
    for n in sizes {
        let bytes = &data[..n];
        assert_eq!(
            hex(&device_hash_serial(bytes)),
            blake3::hash(bytes).to_hex().to_string(),
            "{n} bytes"
        );
    }
}

#[test]
fn an_unaligned_start_hashes_the_same() {
    // A copy's source may start anywhere in an allocation.
    let data = random(70_000);
    let bytes = &data[3..];
    assert_eq!(
        hex(&device_hash_serial(bytes)),
        blake3::hash(bytes).to_hex().to_string()
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
