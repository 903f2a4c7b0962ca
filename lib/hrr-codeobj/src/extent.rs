//! How long an image is, from its first bytes: for callers that hold only a
//! pointer (`hipModuleLoadData`, `__hipRegisterFatBinary`). [`image_extent`]
//! reads headers only and says, through [`CodeObjError::needed_len`], how
//! many bytes it needs when given too few; [`read_image_extent`] drives it.

use crate::error::{CodeObjError, Result};
use crate::read::Bytes;
use crate::{bundle, cuda, elf, hipf};

/// Largest image [`image_extent`] accepts (16 GiB): a sanity bound on sizes
/// read from headers, so that a pointer-only reader never asks for more.
pub const MAX_IMAGE_SIZE: u64 = 16 << 30;
/// Most entries an uncompressed bundle may announce to [`image_extent`]
/// (clang writes a handful).
pub const MAX_BUNDLE_ENTRIES: u64 = 4096;
/// First read of [`read_image_extent`].
const INITIAL_READ: usize = 64;
/// Reads [`read_image_extent`] makes at most (a bundle may take one per entry).
const MAX_READS: usize = MAX_BUNDLE_ENTRIES as usize + 16;

const FMT: &str = "image";
const EFMT: &str = "ELF";
const SHT_NULL: u32 = 0;
const SHT_NOBITS: u32 = 8;
const PN_XNUM: u64 = 0xffff;
const ELF64_SHDR: u64 = 64;
const ELF64_PHDR: u64 = 56;

/// Magic numbers of the images [`image_extent`] sizes.
const MAGICS: [&[u8]; 4] = [
    b"\x7fELF",
    bundle::CCOB_MAGIC,
    &cuda::FATBIN_MAGIC.to_le_bytes(),
    bundle::MAGIC,
];

/// Byte length of the image that starts at `data[0]`, from its headers:
///
/// * ELF64 (either endian): the furthest of the ELF header, the section
///   header table, every section's data (not `SHT_NOBITS`), the program
///   header table and every segment's file image
/// * clang offload bundle and `CCOB`: [`bundle::extent`] (a `CCOB` v1 has no
///   size field: its whole compressed stream must be in `data`)
/// * CUDA fat binary: [`cuda::extent`]
///
/// `data` may be shorter than the image: when it lacks a header, the error is
/// [`CodeObjError::Truncated`] and [`CodeObjError::needed_len`] says how many
/// bytes from the start to provide next. Extents beyond
/// [`MAX_IMAGE_SIZE`] are refused.
pub fn image_extent(data: &[u8]) -> Result<usize> {
    let n = if elf::is_elf(data) {
        elf_extent(data)?
    } else if bundle::is_bundle(data) {
        let count = Bytes::new(data, "offload bundle").u64(24, "entry count")?;
        if count > MAX_BUNDLE_ENTRIES {
            return Err(CodeObjError::malformed(
                "offload bundle",
                24,
                format!("{count} entries (at most {MAX_BUNDLE_ENTRIES} are accepted)"),
            ));
        }
        bundle::extent(data)? as u64
    } else if bundle::is_compressed(data) {
        bundle::extent(data)? as u64
    } else if cuda::is_fatbin(data) {
        cuda::extent(data)? as u64
    } else if let Some(m) = MAGICS
        .iter()
        .filter(|m| m.len() > data.len() && m.starts_with(data))
        .min_by_key(|m| m.len())
    {
        // `data` is too short to tell: it is the start of some magic.
        return Err(CodeObjError::Truncated {
            format: FMT,
            what: "magic number".into(),
            offset: 0,
            need: m.len() as u64,
            have: data.len() as u64,
        });
    } else if data.starts_with(&hipf::MAGIC.to_le_bytes())
        || data.starts_with(&cuda::WRAPPER_MAGIC.to_le_bytes())
    {
        return Err(CodeObjError::Unsupported {
            format: FMT,
            what: "fat-binary wrapper struct: it holds a pointer to the image (hipf::parse / cuda::parse_wrapper)".into(),
        });
    } else {
        return Err(CodeObjError::Unrecognised {
            magic: crate::error::hex_prefix(data, 8),
        });
    };
    if n > MAX_IMAGE_SIZE {
        return Err(CodeObjError::malformed(
            FMT,
            0,
            format!("image extent {n} exceeds the {MAX_IMAGE_SIZE} byte limit"),
        ));
    }
    usize::try_from(n)
        .map_err(|_| CodeObjError::malformed(FMT, 0, format!("extent {n} does not fit in memory")))
}

/// [`image_extent`] for a caller that can only read a prefix of the image:
/// `read(n)` returns the first `n` bytes (or more), `None` when it cannot.
/// Starts with 64 bytes and then asks for exactly what
/// [`CodeObjError::needed_len`] says, never beyond [`MAX_IMAGE_SIZE`] and for
/// a bounded number of reads.
///
/// FFI callers holding only a pointer build the slice themselves (the unsafe
/// part stays with them): `read_image_extent(|n| Some(unsafe {
/// std::slice::from_raw_parts(ptr, n) }))`. Every read it makes lies within
/// what the image's own headers declare, except the first 64 bytes.
pub fn read_image_extent<'a>(mut read: impl FnMut(usize) -> Option<&'a [u8]>) -> Result<usize> {
    let mut n = INITIAL_READ;
    for _ in 0..MAX_READS {
        let data = match read(n) {
            Some(d) if d.len() >= n => d,
            got => {
                return Err(CodeObjError::Truncated {
                    format: FMT,
                    what: "image (the reader could not supply it)".into(),
                    offset: 0,
                    need: n as u64,
                    have: got.map_or(0, |d| d.len() as u64),
                });
            }
        };
        let e = match image_extent(data) {
            Ok(len) => return Ok(len),
            Err(e) => e,
        };
        match e.needed_len() {
            Some(need) if need > MAX_IMAGE_SIZE => {
                return Err(CodeObjError::malformed(
                    FMT,
                    0,
                    format!(
                        "headers ask for {need} bytes, beyond the {MAX_IMAGE_SIZE} byte limit ({e})"
                    ),
                ));
            }
            // needed_len() > data.len() >= n: every read grows.
            Some(need) if need > data.len() as u64 => n = need as usize,
            _ => return Err(e),
        }
    }
    Err(CodeObjError::malformed(
        FMT,
        0,
        format!("image extent still unknown after {MAX_READS} reads"),
    ))
}

/// Reads of one ELF, in its byte order.
struct Elf<'a> {
    b: Bytes<'a>,
    big: bool,
}

impl Elf<'_> {
    fn u16(&self, at: u64, what: &str) -> Result<u64> {
        let v = self.b.u16(at, what)?;
        Ok(u64::from(if self.big { v.swap_bytes() } else { v }))
    }

    fn u32(&self, at: u64, what: &str) -> Result<u32> {
        let v = self.b.u32(at, what)?;
        Ok(if self.big { v.swap_bytes() } else { v })
    }

    fn u64(&self, at: u64, what: &str) -> Result<u64> {
        let v = self.b.u64(at, what)?;
        Ok(if self.big { v.swap_bytes() } else { v })
    }

    /// `start + len`, bounded by [`MAX_IMAGE_SIZE`].
    fn end(at: u64, start: u64, len: u64, what: &str) -> Result<u64> {
        start
            .checked_add(len)
            .filter(|&e| e <= MAX_IMAGE_SIZE)
            .ok_or_else(|| {
                CodeObjError::malformed(
                    EFMT,
                    at,
                    format!(
                        "{what} [{start}, +{len}) reaches beyond the {MAX_IMAGE_SIZE} byte limit"
                    ),
                )
            })
    }

    /// The table of `num` entries of `entsize` bytes at `off`, which must be in
    /// the input (a Truncated error asks for all of it).
    fn table(
        &self,
        field: u64,
        off: u64,
        entsize: u64,
        num: u64,
        min: u64,
        what: &str,
    ) -> Result<u64> {
        if num == 0 {
            return Ok(0);
        }
        if entsize < min {
            return Err(CodeObjError::malformed(
                EFMT,
                field,
                format!("{what} entry size {entsize} is below the {min} byte ELF64 minimum"),
            ));
        }
        let size = entsize.saturating_mul(num);
        let end = Self::end(field, off, size, what)?;
        self.b.slice(off, size, what)?;
        Ok(end)
    }
}

/// Extent of an ELF64 image (see [`image_extent`]).
fn elf_extent(data: &[u8]) -> Result<u64> {
    let b = Bytes::new(data, EFMT);
    b.slice(0, 64, "ELF64 header")?;
    if data[4] != 2 {
        return Err(CodeObjError::Unsupported {
            format: EFMT,
            what: format!("class {} (only 64-bit ELF images are sized)", data[4]),
        });
    }
    let big = match data[5] {
        1 => false,
        2 => true,
        d => {
            return Err(CodeObjError::malformed(
                EFMT,
                5,
                format!("data encoding {d} (1 = little, 2 = big endian)"),
            ));
        }
    };
    let r = Elf { b, big };
    let phoff = r.u64(32, "e_phoff")?;
    let shoff = r.u64(40, "e_shoff")?;
    let phentsize = r.u16(54, "e_phentsize")?;
    let mut phnum = r.u16(56, "e_phnum")?;
    let shentsize = r.u16(58, "e_shentsize")?;
    let mut shnum = r.u16(60, "e_shnum")?;
    let mut extent = 64u64;
    if shoff != 0 {
        if shnum == 0 || phnum == PN_XNUM {
            // Extended numbering: the counts live in section header 0.
            r.table(40, shoff, shentsize, 1, ELF64_SHDR, "section header 0")?;
            if shnum == 0 {
                shnum = r.u64(shoff + 32, "section header 0 sh_size")?;
            }
            if phnum == PN_XNUM {
                phnum = u64::from(r.u32(shoff + 44, "section header 0 sh_info")?);
            }
        }
        extent = extent.max(r.table(
            40,
            shoff,
            shentsize,
            shnum,
            ELF64_SHDR,
            "section header table",
        )?);
        for i in 0..shnum {
            let s = shoff + i * shentsize; // inside the table, which is in `data`
            let ty = r.u32(s + 4, "sh_type")?;
            if ty == SHT_NULL || ty == SHT_NOBITS {
                continue;
            }
            let (off, size) = (r.u64(s + 24, "sh_offset")?, r.u64(s + 32, "sh_size")?);
            extent = extent.max(Elf::end(s + 24, off, size, &format!("section {i}"))?);
        }
    }
    if phoff != 0 {
        extent = extent.max(r.table(
            32,
            phoff,
            phentsize,
            phnum,
            ELF64_PHDR,
            "program header table",
        )?);
        for i in 0..phnum {
            let p = phoff + i * phentsize;
            let (off, size) = (r.u64(p + 8, "p_offset")?, r.u64(p + 32, "p_filesz")?);
            extent = extent.max(Elf::end(p + 8, off, size, &format!("segment {i}"))?);
        }
    }
    Ok(extent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe() -> Vec<u8> {
        std::fs::read(std::env::current_exe().unwrap()).unwrap()
    }

    #[test]
    fn own_binary_extent_equals_file_length() {
        // The test executable is an ELF64 file: its extent is its length, and
        // a pointer-only reader finds it in a few reads.
        let exe = exe();
        assert_eq!(image_extent(&exe).unwrap(), exe.len());
        let mut reads = Vec::new();
        let n = read_image_extent(|n| {
            reads.push(n);
            exe.get(..n)
        })
        .unwrap();
        assert_eq!(n, exe.len());
        assert!(reads.len() <= 4, "{reads:?}");
        assert!(reads.iter().all(|&r| r <= exe.len()), "{reads:?}");
        // A prefix without the section header table asks for all of it.
        let e = image_extent(&exe[..4096]).unwrap_err();
        let shoff = u64::from_le_bytes(exe[40..48].try_into().unwrap());
        assert!(e.needed_len().unwrap() > shoff, "{e}");
    }

    #[test]
    fn short_and_foreign_inputs() {
        for k in 0..4 {
            assert_eq!(
                image_extent(&b"\x7fELF"[..k]).unwrap_err().needed_len(),
                Some(4),
                "{k}"
            );
        }
        assert_eq!(image_extent(b"__CLANG").unwrap_err().needed_len(), Some(24));
        assert_eq!(
            image_extent(b"\x7fELF\x02\x01").unwrap_err().needed_len(),
            Some(64)
        );
        let b = bundle::MAGIC;
        assert_eq!(image_extent(b).unwrap_err().needed_len(), Some(32));
        assert!(matches!(
            image_extent(b"definitely not"),
            Err(CodeObjError::Unrecognised { .. })
        ));
        assert!(matches!(
            image_extent(&hipf::write(&hipf::HipfWrapper {
                version: 1,
                binary: 0,
                dummy: 0
            })),
            Err(CodeObjError::Unsupported { .. })
        ));
        // 32-bit ELF and bad byte orders.
        let mut h = exe()[..64].to_vec();
        h[4] = 1;
        assert!(matches!(
            image_extent(&h),
            Err(CodeObjError::Unsupported { .. })
        ));
        h[4] = 2;
        h[5] = 9;
        assert!(matches!(
            image_extent(&h),
            Err(CodeObjError::Malformed { offset: 5, .. })
        ));
        // A reader that runs dry.
        assert!(matches!(
            read_image_extent(|_| None),
            Err(CodeObjError::Truncated { need: 64, .. })
        ));
        assert!(read_image_extent(|_| Some(&b"\x7fELF"[..])).is_err());
    }

    /// An ELF64 header with the given tables (little endian).
    fn header(shoff: u64, shnum: u16, phoff: u64, phnum: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..6].copy_from_slice(b"\x7fELF\x02\x01");
        h[32..40].copy_from_slice(&phoff.to_le_bytes());
        h[40..48].copy_from_slice(&shoff.to_le_bytes());
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[56..58].copy_from_slice(&phnum.to_le_bytes());
        h[58..60].copy_from_slice(&64u16.to_le_bytes());
        h[60..62].copy_from_slice(&shnum.to_le_bytes());
        h
    }

    fn shdr(ty: u32, off: u64, size: u64, info: u32) -> Vec<u8> {
        let mut s = vec![0u8; 64];
        s[4..8].copy_from_slice(&ty.to_le_bytes());
        s[24..32].copy_from_slice(&off.to_le_bytes());
        s[32..40].copy_from_slice(&size.to_le_bytes());
        s[44..48].copy_from_slice(&info.to_le_bytes());
        s
    }

    #[test]
    fn sections_nobits_and_extended_numbering() {
        // shnum = 0: the count (3) is sh_size of section 0, which is SHT_NULL
        // and does not count itself; NOBITS data takes no file space.
        let mut img = header(64, 0, 0, 0);
        img.extend(shdr(SHT_NULL, 0, 3, 0));
        img.extend(shdr(1, 400, 100, 0));
        img.extend(shdr(SHT_NOBITS, 0, 1 << 40, 0));
        img.resize(500, 0);
        assert_eq!(image_extent(&img).unwrap(), 500);
        // phnum = PN_XNUM: the count is sh_info of section 0.
        let mut img = header(64, 1, 128, 0xffff);
        img.extend(shdr(SHT_NULL, 0, 0, 1));
        let mut p = vec![0u8; 56];
        p[8..16].copy_from_slice(&1000u64.to_le_bytes());
        p[32..40].copy_from_slice(&24u64.to_le_bytes());
        img.extend(p);
        assert_eq!(image_extent(&img).unwrap(), 1024);
        // Sizes beyond 16 GiB, overflows and short entries are refused.
        let mut img = header(64, 1, 0, 0);
        img.extend(shdr(1, 1 << 34, 1, 0));
        assert!(matches!(
            image_extent(&img),
            Err(CodeObjError::Malformed { .. })
        ));
        let mut img = header(64, 1, 0, 0);
        img.extend(shdr(1, u64::MAX, 2, 0));
        assert!(matches!(
            image_extent(&img),
            Err(CodeObjError::Malformed { .. })
        ));
        let img = header(u64::MAX - 8, 2, 0, 0);
        assert!(matches!(
            image_extent(&img),
            Err(CodeObjError::Malformed { .. })
        ));
        let mut img = header(64, 1, 0, 0);
        img[58] = 40;
        assert!(matches!(
            image_extent(&img),
            Err(CodeObjError::Malformed { offset: 40, .. })
        ));
        // A section header table past a 16 GiB extended count is not read.
        let mut img = header(64, 0, 0, 0);
        img.extend(shdr(SHT_NULL, 0, u64::MAX / 64, 0));
        assert!(matches!(
            image_extent(&img),
            Err(CodeObjError::Malformed { .. })
        ));
        assert!(read_image_extent(|n| img.get(..n)).is_err());
    }

    #[test]
    fn big_endian_elf() {
        let mut h = vec![0u8; 64];
        h[..6].copy_from_slice(b"\x7fELF\x02\x02");
        h[40..48].copy_from_slice(&64u64.to_be_bytes());
        h[58..60].copy_from_slice(&64u16.to_be_bytes());
        h[60..62].copy_from_slice(&2u16.to_be_bytes());
        h.extend(vec![0u8; 64]);
        let mut s = vec![0u8; 64];
        s[4..8].copy_from_slice(&1u32.to_be_bytes());
        s[24..32].copy_from_slice(&300u64.to_be_bytes());
        s[32..40].copy_from_slice(&50u64.to_be_bytes());
        h.extend(s);
        assert_eq!(image_extent(&h).unwrap(), 350);
    }

    #[test]
    fn bundles_and_fatbins() {
        let b = bundle::write(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-x86_64-unknown-linux-gnu-cpu", b"\x7fELF-ish"),
        ]);
        assert_eq!(image_extent(&b).unwrap(), b.len());
        assert_eq!(read_image_extent(|n| b.get(..n)).unwrap(), b.len());
        let c = bundle::compress(&b, bundle::Compression::Zstd, 3, None).unwrap();
        assert_eq!(read_image_extent(|n| c.get(..n)).unwrap(), c.len());
        // Too many entries for a real bundle.
        let mut h = bundle::MAGIC.to_vec();
        h.extend_from_slice(&(MAX_BUNDLE_ENTRIES + 1).to_le_bytes());
        assert!(matches!(
            image_extent(&h),
            Err(CodeObjError::Malformed { offset: 24, .. })
        ));
        let mut f = cuda::FATBIN_MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&[1, 0, 16, 0]);
        f.extend_from_slice(&100u64.to_le_bytes());
        assert_eq!(image_extent(&f).unwrap(), 116);
        assert_eq!(image_extent(&f[..8]).unwrap_err().needed_len(), Some(16));
    }
}
