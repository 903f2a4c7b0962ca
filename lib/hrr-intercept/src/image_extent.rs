//! `image_extent`: how many bytes a code object spans when all the recorder
//! has is a pointer to its first byte (`hipModuleLoadData`,
//! `__hipRegisterFatBinary`).
//!
//! The image is read through a *prefix reader*: a function returning the
//! first `n` bytes. Sizes are discovered from headers alone, growing the
//! prefix only as far as the headers say the image goes, so nothing past the
//! end of the application's buffer is ever touched:
//!
//! - ELF64: the furthest of the header, the program and section header
//!   tables, every section's file bytes and every segment's file bytes.
//! - clang offload bundles (plain and `CCOB`): `hrr_codeobj::bundle::extent`,
//!   re-asked with the length its `Truncated` error names.

use hrr_codeobj::bundle;

/// Largest image the recorder will copy (1 GiB): a hostile or corrupt header
/// must not make it read gigabytes past a buffer.
pub const MAX_IMAGE: u64 = 1 << 30;

/// Why an image's size could not be determined.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExtentError {
    #[error("unrecognised code object (first bytes {0})")]
    Unknown(String),
    #[error("{0}")]
    Malformed(String),
    #[error("image claims {0} bytes, more than the {MAX_IMAGE} byte limit")]
    TooLarge(u64),
}

/// The size of the image at the start of `prefix`'s memory.
pub fn image_extent<'a>(prefix: impl Fn(usize) -> &'a [u8]) -> Result<usize, ExtentError> {
    let head = prefix(4);
    if head == b"\x7fELF" {
        elf_extent(&prefix)
    } else if head == &bundle::MAGIC[..4] || head == bundle::CCOB_MAGIC {
        bundle_extent(&prefix)
    } else {
        Err(ExtentError::Unknown(
            head.iter().map(|b| format!("{b:02x}")).collect(),
        ))
    }
}

fn checked(n: u64) -> Result<usize, ExtentError> {
    if n > MAX_IMAGE {
        Err(ExtentError::TooLarge(n))
    } else {
        Ok(n as usize)
    }
}

fn bundle_extent<'a>(prefix: &impl Fn(usize) -> &'a [u8]) -> Result<usize, ExtentError> {
    // The fixed part of either header; then as much as each error asks for.
    let mut len = 16usize;
    for _ in 0..64 {
        match bundle::extent(prefix(len)) {
            Ok(n) => return checked(n as u64),
            Err(e) => match e.needed_len() {
                Some(need) if need as usize > len => len = checked(need)?,
                _ => return Err(ExtentError::Malformed(e.to_string())),
            },
        }
    }
    Err(ExtentError::Malformed(
        "offload bundle header did not converge".into(),
    ))
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[o], b[o + 1]]))
}
fn u32_at(b: &[u8], o: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

const SHT_NOBITS: u64 = 8;

fn elf_extent<'a>(prefix: &impl Fn(usize) -> &'a [u8]) -> Result<usize, ExtentError> {
    let h = prefix(64);
    if h[4] != 2 || h[5] != 1 {
        return Err(ExtentError::Malformed(
            "only little-endian ELF64 code objects are supported".into(),
        ));
    }
    let (phoff, shoff) = (u64_at(h, 0x20), u64_at(h, 0x28));
    let (phentsize, mut phnum) = (u16_at(h, 0x36), u16_at(h, 0x38));
    let (shentsize, mut shnum) = (u16_at(h, 0x3a), u16_at(h, 0x3c));
    let table_end = |off: u64, size: u64, n: u64| -> Result<u64, ExtentError> {
        let end = size.checked_mul(n).and_then(|t| off.checked_add(t));
        end.filter(|&e| e <= MAX_IMAGE)
            .ok_or(ExtentError::TooLarge(u64::MAX))
    };
    let mut end = 64u64;
    if shoff != 0 {
        if shentsize < 0x28 {
            return Err(ExtentError::Malformed(format!(
                "section header size {shentsize}"
            )));
        }
        // More than 0xff00 sections: the real count is in section 0's sh_size.
        if shnum == 0 {
            let first = prefix(checked(table_end(shoff, shentsize, 1)?)?);
            shnum = u64_at(first, shoff as usize + 0x20);
        }
        let t_end = table_end(shoff, shentsize, shnum)?;
        let table = prefix(checked(t_end)?);
        for i in 0..shnum {
            let s = (shoff + i * shentsize) as usize;
            if u32_at(table, s + 4) == SHT_NOBITS {
                continue;
            }
            let e = u64_at(table, s + 0x18).checked_add(u64_at(table, s + 0x20));
            end = end.max(e.ok_or(ExtentError::TooLarge(u64::MAX))?);
        }
        end = end.max(t_end);
    }
    if phoff != 0 && phnum != 0 {
        if phentsize < 0x28 {
            return Err(ExtentError::Malformed(format!(
                "program header size {phentsize}"
            )));
        }
        phnum = phnum.min(0xffff);
        let t_end = table_end(phoff, phentsize, phnum)?;
        let table = prefix(checked(t_end)?);
        for i in 0..phnum {
            let p = (phoff + i * phentsize) as usize;
            let e = u64_at(table, p + 8).checked_add(u64_at(table, p + 0x20));
            end = end.max(e.ok_or(ExtentError::TooLarge(u64::MAX))?);
        }
        end = end.max(t_end);
    }
    checked(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefix reader over `data` that panics if asked for more than it has
    /// (the stand-in for "read past the application's buffer").
    fn reader<'a>(data: &'a [u8]) -> impl Fn(usize) -> &'a [u8] + 'a {
        move |n| {
            assert!(
                n <= data.len(),
                "read {n} bytes of a {} byte image",
                data.len()
            );
            &data[..n]
        }
    }

    #[test]
    fn elf_extent_is_the_file_size_of_a_real_object() {
        // The test binary's own ELF: a real file with sections after the
        // section table or before it, whichever the linker chose.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(image_extent(reader(&exe)), Ok(exe.len()));
        let mut padded = exe.clone();
        padded.extend_from_slice(&[0xAA; 100]);
        assert_eq!(
            image_extent(reader(&padded)),
            Ok(exe.len()),
            "trailing bytes are not the image"
        );
    }

    #[test]
    fn bundle_extent_from_a_pointer() {
        let so = b"\x7fELF-not-really".to_vec();
        let b = bundle::write(&[
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-x86_64-unknown-linux-gnu-cpu", &so),
        ]);
        let mut padded = b.clone();
        padded.extend_from_slice(&[0u8; 8192]);
        assert_eq!(image_extent(reader(&padded)), Ok(b.len()));
    }

    #[test]
    fn garbage_is_an_error() {
        let junk = [0x42u8; 64];
        assert!(matches!(
            image_extent(reader(&junk)),
            Err(ExtentError::Unknown(_))
        ));
        let mut elf = [0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[0x28..0x30].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
        elf[0x3a] = 64;
        elf[0x3c] = 3;
        assert!(matches!(
            image_extent(reader(&elf)),
            Err(ExtentError::TooLarge(_))
        ));
    }
}
