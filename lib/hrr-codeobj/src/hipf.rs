//! The HIP fat-binary wrapper that clang emits for `__hipRegisterFatBinary`:
//!
//! ```c
//! struct __CudaFatBinaryWrapper { uint32_t magic;   /* 0x48495046 "HIPF" */
//!                                 uint32_t version; /* 1 */
//!                                 void *binary;     /* offload bundle (or CCOB) */
//!                                 void *dummy1; };
//! ```

use crate::error::{CodeObjError, Result, hex_prefix};
use crate::read::Bytes;

/// `"HIPF"` read as a little-endian u32.
pub const MAGIC: u32 = 0x4849_5046;
/// Size of the wrapper on a 64-bit host.
pub const WRAPPER_SIZE: usize = 24;

/// A decoded HIPF wrapper. `binary` is a host address: the caller turns it
/// into bytes (then [`crate::bundle::extent`] tells how many).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HipfWrapper {
    /// The wrapper's version.
    pub version: u32,
    /// Address of the clang offload bundle (`__CLANG_OFFLOAD_BUNDLE__` or `CCOB`).
    pub binary: u64,
    /// The trailing `dummy1` pointer (unused by HIP).
    pub dummy: u64,
}

/// Decodes the 24-byte wrapper.
pub fn parse(wrapper: &[u8]) -> Result<HipfWrapper> {
    let b = Bytes::new(wrapper, "HIPF wrapper");
    let magic = b.u32(0, "magic")?;
    if magic != MAGIC {
        return Err(CodeObjError::BadMagic {
            format: "HIPF wrapper",
            offset: 0,
            expected: format!("{MAGIC:#010x} (\"FPIH\" in memory)"),
            found: format!("{magic:#010x} (bytes {})", hex_prefix(wrapper, 4)),
        });
    }
    Ok(HipfWrapper {
        version: b.u32(4, "version")?,
        binary: b.u64(8, "binary pointer")?,
        dummy: b.u64(16, "dummy1 pointer")?,
    })
}

/// Encodes a wrapper (tests and tooling).
pub fn write(w: &HipfWrapper) -> [u8; WRAPPER_SIZE] {
    let mut out = [0u8; WRAPPER_SIZE];
    out[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    out[4..8].copy_from_slice(&w.version.to_le_bytes());
    out[8..16].copy_from_slice(&w.binary.to_le_bytes());
    out[16..24].copy_from_slice(&w.dummy.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let w = HipfWrapper {
            version: 1,
            binary: 0x7f00_1234_5000,
            dummy: 0,
        };
        let b = write(&w);
        assert_eq!(&b[..4], b"FPIH");
        assert_eq!(parse(&b).unwrap(), w);
        let e = parse(&b[..12]).unwrap_err();
        assert_eq!(e.needed_len(), Some(16));
        assert!(e.to_string().contains("binary pointer"), "{e}");
        assert!(matches!(
            parse(b"CCOB\0\0\0\0"),
            Err(CodeObjError::BadMagic { .. })
        ));
    }
}
