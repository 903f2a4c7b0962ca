//! CUDA fat binaries, cubins and PTX parameter layouts.
//!
//! NVIDIA does not document these containers; the layout below is the one
//! the public re-implementations agree on (ZLUDA's `FatbinHeader` /
//! `FatbinFileHeader`, Cricket's `fat_elf_header` / `fat_text_header`,
//! cudaparsers' `fatbin.rs` / `cubin.rs`) and is checked in this crate's
//! tests against fat binaries built by nvcc 13.0. All integers little-endian.
//!
//! ```text
//! wrapper (__fatBinC_Wrapper_t, 24 bytes): u32 magic 0x466243B1, u32 version
//!     (1; 2 = relocatable device code), u64 data -> fatbin, u64 filename_or_fatbins
//! fatbin header (16 bytes): u32 magic 0xBA55ED50, u16 version 1, u16 header_size,
//!     u64 body size (bytes of entries after the header)
//! entry header (header_size bytes, 64 today):
//!   0 u16 kind (1 PTX, 2 ELF cubin)   2 u16 version 0x0101   4 u32 header_size
//!   8 u64 payload size (padded)      16 u32 compressed size  20 u32 (unknown)
//!  24 u16 PTX minor  26 u16 PTX major  28 u32 sm arch (e.g. 90)
//!  32 u32 name offset  36 u32 name length (relative to the entry header)
//!  40 u64 flags (0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4, 0x8000 zstd)
//!  48 u64 (zero)  56 u64 uncompressed size
//! payload follows the entry header; the next entry follows the payload.
//! ```
//!
//! Cubin kernel parameters live in `.nv.info.<kernel>` sections: records of
//! `u8 format, u8 attribute` then, for format 4 (`EIFMT_SVAL`), `u16 size` and
//! `size` bytes, else a `u16` value. `EIATTR_KPARAM_INFO` (0x17) has
//! `u32 index, u16 ordinal, u16 offset, u32 bits` with the parameter size in
//! `bits >> 18`; `EIATTR_CBANK_PARAM_SIZE` (0x19) holds the total.

use std::borrow::Cow;

use crate::bundle::Compression;
use crate::elf::{EM_CUDA, Elf64};
use crate::error::{CodeObjError, Result, hex_prefix};
use crate::meta::{ArgKind, ArgMeta, KernelMeta};
use crate::read::{Bytes, le_u16, le_u32};

/// Magic of the `__fatBinC_Wrapper_t` that `__cudaRegisterFatBinary` receives.
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// Size of the wrapper on a 64-bit host.
pub const WRAPPER_SIZE: usize = 24;
/// Magic of the fat binary itself.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Size of the fat binary header.
pub const FATBIN_HEADER_SIZE: usize = 16;
/// Entry kinds.
pub const KIND_PTX: u16 = 1;
/// An ELF cubin.
pub const KIND_ELF: u16 = 2;
/// Entry flags.
pub const FLAG_64BIT: u64 = 0x1;
/// Built with debug information.
pub const FLAG_DEBUG: u64 = 0x2;
/// For Linux.
pub const FLAG_LINUX: u64 = 0x10;
/// Payload compressed with LZ4.
pub const FLAG_COMPRESSED_LZ4: u64 = 0x2000;
/// Payload compressed with zstd.
pub const FLAG_COMPRESSED_ZSTD: u64 = 0x8000;
/// `.nv.info` attributes used here.
pub const EIATTR_PARAM_CBANK: u8 = 0x0a;
/// Per-parameter ordinal, offset and size.
pub const EIATTR_KPARAM_INFO: u8 = 0x17;
/// Total parameter bytes.
pub const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
/// Largest entry this crate inflates (1 GiB).
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

const FMT: &str = "CUDA fatbin";
const WFMT: &str = "CUDA fatbin wrapper";
const IFMT: &str = ".nv.info";
const MIN_ENTRY_HEADER: u32 = 64;

/// The `__fatBinC_Wrapper_t` struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatbinWrapper {
    /// The wrapper's version.
    pub version: u32,
    /// Address of the fat binary (0xBA55ED50 blob).
    pub data: u64,
    /// Version 1: file name pointer; version 2: NULL-terminated list of
    /// prelinked fat binaries.
    pub filename_or_fatbins: u64,
}

/// Decodes the 24-byte wrapper.
pub fn parse_wrapper(wrapper: &[u8]) -> Result<FatbinWrapper> {
    let b = Bytes::new(wrapper, WFMT);
    let magic = b.u32(0, "magic")?;
    if magic != WRAPPER_MAGIC {
        return Err(CodeObjError::BadMagic {
            format: WFMT,
            offset: 0,
            expected: format!("{WRAPPER_MAGIC:#010x}"),
            found: format!("{magic:#010x}"),
        });
    }
    Ok(FatbinWrapper {
        version: b.u32(4, "version")?,
        data: b.u64(8, "data pointer")?,
        filename_or_fatbins: b.u64(16, "filename_or_fatbins pointer")?,
    })
}

/// True when `data` starts with the fat binary magic.
pub fn is_fatbin(data: &[u8]) -> bool {
    data.starts_with(&FATBIN_MAGIC.to_le_bytes())
}

/// The fat binary header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatbinHeader {
    /// The header's version.
    pub version: u16,
    /// The header's size in bytes.
    pub header_size: u16,
    /// Bytes of entries after the header.
    pub body_size: u64,
}

/// Decodes the 16-byte fat binary header.
pub fn header(data: &[u8]) -> Result<FatbinHeader> {
    let b = Bytes::new(data, FMT);
    let magic = b.u32(0, "magic")?;
    if magic != FATBIN_MAGIC {
        return Err(CodeObjError::BadMagic {
            format: FMT,
            offset: 0,
            expected: format!("{FATBIN_MAGIC:#010x}"),
            found: format!("{magic:#010x} (bytes {})", hex_prefix(data, 4)),
        });
    }
    let h = FatbinHeader {
        version: b.u16(4, "version")?,
        header_size: b.u16(6, "header size")?,
        body_size: b.u64(8, "body size")?,
    };
    if (h.header_size as usize) < FATBIN_HEADER_SIZE {
        return Err(CodeObjError::malformed(
            FMT,
            6,
            format!("header size {} is below the 16 byte minimum", h.header_size),
        ));
    }
    Ok(h)
}

/// Total bytes of the fat binary (header size + body size), from the header
/// alone: what to copy when all you have is `wrapper.data`.
pub fn extent(data: &[u8]) -> Result<usize> {
    let h = header(data)?;
    let n = (h.header_size as u64)
        .checked_add(h.body_size)
        .ok_or_else(|| {
            CodeObjError::malformed(FMT, 8, format!("body size {} overflows", h.body_size))
        })?;
    usize::try_from(n)
        .map_err(|_| CodeObjError::malformed(FMT, 8, format!("extent {n} does not fit in memory")))
}

/// What a fat binary entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FatbinKind {
    /// PTX text.
    Ptx,
    /// An ELF cubin (SASS).
    Elf,
    /// A kind this crate does not know.
    Other(u16),
}

/// One entry of a fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinEntry {
    /// Its position in the fat binary.
    pub index: usize,
    /// What it holds.
    pub kind: FatbinKind,
    /// Entry header version (0x0101).
    pub version: u16,
    /// SM architecture, e.g. 90 for sm_90 / compute_90.
    pub sm_arch: u32,
    /// PTX ISA version (major, minor) as recorded in the header.
    pub ptx_version: (u16, u16),
    /// Offset of the entry header in the fat binary.
    pub header_offset: u64,
    /// Offset of the payload in the fat binary.
    pub offset: u64,
    /// Payload bytes (padded) in the fat binary.
    pub size: u64,
    /// Raw flags word.
    pub flags: u64,
    /// Whether the payload is compressed (LZ4 or zstd).
    pub compressed: bool,
    /// Compressed bytes at `offset` (meaningful when compressed).
    pub compressed_size: u32,
    /// Inflated size (meaningful when compressed).
    pub uncompressed_size: u64,
    /// Object name recorded in the entry header, if any.
    pub name: Option<String>,
}

/// How a fat binary entry is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FatbinCompression {
    /// LZ4.
    Lz4,
    /// zstd.
    Zstd,
}

impl FatbinEntry {
    /// How the payload is compressed, if it is.
    pub fn compression(&self) -> Option<FatbinCompression> {
        if self.flags & FLAG_COMPRESSED_ZSTD != 0 {
            Some(FatbinCompression::Zstd)
        } else if self.flags & FLAG_COMPRESSED_LZ4 != 0 {
            Some(FatbinCompression::Lz4)
        } else {
            None
        }
    }
}

/// The entries of a fat binary; every entry must lie inside `data` and
/// inside the body the header announces.
pub fn entries(data: &[u8]) -> Result<Vec<FatbinEntry>> {
    let h = header(data)?;
    let b = Bytes::new(data, FMT);
    let start = h.header_size as u64;
    let end = start.checked_add(h.body_size).ok_or_else(|| {
        CodeObjError::malformed(FMT, 8, format!("body size {} overflows", h.body_size))
    })?;
    b.slice(start, h.body_size, "fatbin body")?;
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let index = out.len();
        let ew = |f: &str| format!("entry {index} {f}");
        if end - pos < MIN_ENTRY_HEADER as u64 {
            // Trailing padding inside the body is legal; anything else is not.
            if b.slice(pos, end - pos, "padding")?.iter().all(|&x| x == 0) {
                break;
            }
            return Err(CodeObjError::Truncated {
                format: FMT,
                what: ew("header"),
                offset: pos,
                need: MIN_ENTRY_HEADER as u64,
                have: end,
            });
        }
        let kind = b.u16(pos, &ew("kind"))?;
        let version = b.u16(pos + 2, &ew("version"))?;
        let hsize = b.u32(pos + 4, &ew("header size"))?;
        if hsize < MIN_ENTRY_HEADER {
            return Err(CodeObjError::entry(
                FMT,
                index,
                format!(
                    "header size {hsize} at offset {} is below {MIN_ENTRY_HEADER}",
                    pos + 4
                ),
            ));
        }
        let size = b.u64(pos + 8, &ew("payload size"))?;
        let compressed_size = b.u32(pos + 16, &ew("compressed size"))?;
        let minor = b.u16(pos + 24, &ew("PTX minor"))?;
        let major = b.u16(pos + 26, &ew("PTX major"))?;
        let sm_arch = b.u32(pos + 28, &ew("arch"))?;
        let name_off = b.u32(pos + 32, &ew("name offset"))?;
        let name_len = b.u32(pos + 36, &ew("name length"))?;
        let flags = b.u64(pos + 40, &ew("flags"))?;
        let uncompressed_size = b.u64(pos + 56, &ew("uncompressed size"))?;
        let offset = pos + hsize as u64;
        let next = offset
            .checked_add(size)
            .filter(|&n| n <= end)
            .ok_or_else(|| {
                CodeObjError::entry(
                    FMT,
                    index,
                    format!("payload [{offset}, +{size}) runs past the body end {end}"),
                )
            })?;
        let compressed = flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD) != 0;
        if compressed && compressed_size as u64 > size {
            return Err(CodeObjError::entry(
                FMT,
                index,
                format!("compressed size {compressed_size} exceeds the {size} byte payload"),
            ));
        }
        let name = if name_off != 0 && name_len != 0 {
            b.slice(pos + name_off as u64, name_len as u64, "name")
                .ok()
                .and_then(|n| std::str::from_utf8(n).ok())
                .map(|s| s.trim_end_matches('\0').to_string())
        } else {
            None
        };
        out.push(FatbinEntry {
            index,
            kind: match kind {
                KIND_PTX => FatbinKind::Ptx,
                KIND_ELF => FatbinKind::Elf,
                k => FatbinKind::Other(k),
            },
            version,
            sm_arch,
            ptx_version: (major, minor),
            header_offset: pos,
            offset,
            size,
            flags,
            compressed,
            compressed_size,
            uncompressed_size,
            name,
        });
        pos = next;
    }
    Ok(out)
}

/// The payload of `entry`, inflated when compressed (PTX keeps its trailing
/// NUL padding).
pub fn payload<'a>(data: &'a [u8], entry: &FatbinEntry) -> Result<Cow<'a, [u8]>> {
    let b = Bytes::new(data, FMT);
    let raw = b.slice(
        entry.offset,
        entry.size,
        &format!("entry {} payload", entry.index),
    )?;
    let Some(c) = entry.compression() else {
        return Ok(Cow::Borrowed(raw));
    };
    let stream = &raw[..(entry.compressed_size as usize).min(raw.len())];
    let limit = entry.uncompressed_size;
    let cap = MAX_DECOMPRESSED.min(
        (stream.len() as u64)
            .saturating_mul(crate::bundle::MAX_RATIO)
            .saturating_add(64 << 20),
    );
    if limit > cap {
        return Err(CodeObjError::entry(
            FMT,
            entry.index,
            format!("uncompressed size {limit} is beyond the limit {cap}"),
        ));
    }
    let out = match c {
        FatbinCompression::Lz4 => lz4_block_decompress(stream, limit as usize).map_err(|what| {
            CodeObjError::Decompress {
                format: FMT,
                offset: entry.offset,
                what: format!("entry {} (LZ4): {what}", entry.index),
            }
        })?,
        FatbinCompression::Zstd => {
            crate::bundle::inflate(Compression::Zstd, stream, limit, entry.offset, FMT)?
        }
    };
    if out.len() as u64 != limit {
        return Err(CodeObjError::Decompress {
            format: FMT,
            offset: entry.offset,
            what: format!(
                "entry {} inflated to {} bytes, header announces {limit}",
                entry.index,
                out.len()
            ),
        });
    }
    Ok(Cow::Owned(out))
}

/// LZ4 block format decoder (what fatbin flag 0x2000 means), producing at
/// most `max_out` bytes.
pub fn lz4_block_decompress(input: &[u8], max_out: usize) -> std::result::Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::with_capacity(max_out.min(1 << 20));
    let mut i = 0usize;
    let byte = |i: usize| {
        input
            .get(i)
            .copied()
            .ok_or_else(|| format!("input ends at byte {i}"))
    };
    let ext_len = |i: &mut usize, mut n: usize| -> std::result::Result<usize, String> {
        loop {
            let b = byte(*i)?;
            *i += 1;
            n = n.checked_add(b as usize).ok_or("length overflows")?;
            if b != 255 {
                return Ok(n);
            }
        }
    };
    loop {
        let token = byte(i)?;
        i += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit = ext_len(&mut i, lit)?;
        }
        let lit_end = i
            .checked_add(lit)
            .filter(|&e| e <= input.len())
            .ok_or_else(|| {
                format!(
                    "literal run of {lit} bytes at input byte {i} runs past the {} byte input",
                    input.len()
                )
            })?;
        if out.len() + lit > max_out {
            return Err(format!("output exceeds the announced {max_out} bytes"));
        }
        out.extend_from_slice(&input[i..lit_end]);
        i = lit_end;
        if i == input.len() {
            return Ok(out);
        }
        let lo = byte(i)?;
        let hi = byte(i + 1)?;
        i += 2;
        let back = u16::from_le_bytes([lo, hi]) as usize;
        if back == 0 || back > out.len() {
            return Err(format!(
                "match offset {back} at input byte {} with {} bytes output",
                i - 2,
                out.len()
            ));
        }
        let mut mlen = (token & 15) as usize;
        if mlen == 15 {
            mlen = ext_len(&mut i, mlen)?;
        }
        mlen += 4;
        if out.len() + mlen > max_out {
            return Err(format!("output exceeds the announced {max_out} bytes"));
        }
        let from = out.len() - back;
        for k in 0..mlen {
            let v = out[from + k];
            out.push(v);
        }
    }
}

/// One kernel parameter from a cubin's `EIATTR_KPARAM_INFO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CubinParam {
    /// The parameter's position.
    pub ordinal: u16,
    /// Offset in the parameter buffer.
    pub offset: u16,
    /// Its size in bytes.
    pub size: u16,
}

/// A kernel's parameter layout from a cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CubinKernel {
    /// Mangled kernel name (from the `.nv.info.<name>` section name).
    pub name: String,
    /// Parameters ordered by ordinal.
    pub params: Vec<CubinParam>,
    /// `EIATTR_CBANK_PARAM_SIZE`, when present.
    pub param_size: Option<u16>,
}

impl CubinKernel {
    /// As generic metadata: every parameter `by_value` (CUDA metadata does not
    /// say which are pointers), `kernarg_segment_size` the parameter size.
    pub fn to_kernel_meta(&self) -> KernelMeta {
        let end = self
            .params
            .iter()
            .map(|p| p.offset as u32 + p.size as u32)
            .max()
            .unwrap_or(0);
        KernelMeta {
            name: self.name.clone(),
            symbol: self.name.clone(),
            kernarg_segment_size: end.max(self.param_size.unwrap_or(0) as u32),
            args: self
                .params
                .iter()
                .map(|p| ArgMeta {
                    offset: p.offset as u32,
                    size: p.size as u32,
                    kind: ArgKind::ByValue,
                    address_space: None,
                    name: None,
                })
                .collect(),
        }
    }
}

/// Parameter layouts of every kernel in a cubin (ELF, `e_machine` 190).
pub fn cubin_params(cubin: &[u8]) -> Result<Vec<CubinKernel>> {
    let e = Elf64::parse(cubin)?;
    if e.machine() != EM_CUDA {
        return Err(CodeObjError::Unsupported {
            format: "cubin",
            what: format!("ELF machine {} (CUDA is {EM_CUDA})", e.machine()),
        });
    }
    let mut out = Vec::new();
    for (name, s) in e.named_sections() {
        let Some(kname) = name.strip_prefix(b".nv.info.") else {
            continue;
        };
        let kname = String::from_utf8_lossy(kname).into_owned();
        let sname = format!(".nv.info.{kname}");
        let data = e.section_data(s, &sname)?;
        out.push(parse_nv_info(&kname, data)?);
    }
    Ok(out)
}

/// Parses the records of one `.nv.info.<kernel>` section.
pub fn parse_nv_info(kernel: &str, data: &[u8]) -> Result<CubinKernel> {
    let mut params = Vec::new();
    let mut param_size = None;
    let mut pos = 0usize;
    let err = |pos: usize, what: String| {
        CodeObjError::malformed(IFMT, pos as u64, format!("{kernel}: {what}"))
    };
    while pos < data.len() {
        let (Some(&fmt), Some(&attr)) = (data.get(pos), data.get(pos + 1)) else {
            return Err(err(pos, "record header cut short".into()));
        };
        let val =
            le_u16(data, pos + 2).ok_or_else(|| err(pos, "record header cut short".into()))?;
        match fmt {
            1..=3 => {
                if attr == EIATTR_CBANK_PARAM_SIZE {
                    param_size = Some(val);
                }
                pos += 4;
            }
            4 => {
                let len = val as usize;
                let body = data.get(pos + 4..pos + 4 + len).ok_or_else(|| {
                    err(
                        pos,
                        format!("attribute {attr:#x}: {len} byte value runs past the section"),
                    )
                })?;
                if attr == EIATTR_KPARAM_INFO {
                    if len < 12 {
                        return Err(err(
                            pos,
                            format!("EIATTR_KPARAM_INFO value is {len} bytes, expected 12"),
                        ));
                    }
                    let ordinal = le_u16(body, 4).unwrap_or(0);
                    let offset = le_u16(body, 6).unwrap_or(0);
                    let bits = le_u32(body, 8).unwrap_or(0);
                    params.push(CubinParam {
                        ordinal,
                        offset,
                        size: ((bits >> 18) & 0x3fff) as u16,
                    });
                }
                pos += 4 + len;
            }
            f => return Err(err(pos, format!("unknown record format {f}"))),
        }
    }
    params.sort_by_key(|p| p.ordinal);
    Ok(CubinKernel {
        name: kernel.to_string(),
        params,
        param_size,
    })
}

/// One `.param` of a PTX `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    /// The parameter's name.
    pub name: String,
    /// Its offset in the parameter buffer.
    pub offset: u32,
    /// Its size in bytes.
    pub size: u32,
    /// Its alignment.
    pub align: u32,
    /// The parameter carries `.ptr` (a pointer, when the compiler says so).
    pub pointer: bool,
}

/// A PTX kernel's parameter layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxKernel {
    /// The entry's name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<PtxParam>,
}

impl PtxKernel {
    /// Bytes of the parameter buffer: the end of the last parameter.
    pub fn param_size(&self) -> u32 {
        self.params
            .iter()
            .map(|p| p.offset + p.size)
            .max()
            .unwrap_or(0)
    }

    /// As generic metadata; `.ptr` parameters become `global_buffer`.
    pub fn to_kernel_meta(&self) -> KernelMeta {
        KernelMeta {
            name: self.name.clone(),
            symbol: self.name.clone(),
            kernarg_segment_size: self.param_size(),
            args: self
                .params
                .iter()
                .map(|p| ArgMeta {
                    offset: p.offset,
                    size: p.size,
                    kind: if p.pointer {
                        ArgKind::GlobalBuffer
                    } else {
                        ArgKind::ByValue
                    },
                    address_space: None,
                    name: Some(p.name.clone()),
                })
                .collect(),
        }
    }
}

/// Parameter layouts of every `.entry` in PTX text (offsets follow the
/// natural alignment or `.align`, like the CUDA ABI).
pub fn ptx_params(ptx: &str) -> Result<Vec<PtxKernel>> {
    const PFMT: &str = "PTX";
    let mut out = Vec::new();
    let mut rest = ptx;
    while let Some(at) = find_entry(rest) {
        let after = &rest[at + ".entry".len()..];
        let open = after.find('(');
        let brace = after.find('{');
        let name_end = [open, brace, after.find(';')]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(after.len());
        let name = after[..name_end].trim().to_string();
        if name.is_empty() {
            return Err(CodeObjError::malformed(
                PFMT,
                (ptx.len() - rest.len() + at) as u64,
                ".entry without a name",
            ));
        }
        let mut params = Vec::new();
        let mut consumed = name_end;
        if open == Some(name_end) {
            let close = after[name_end..].find(')').ok_or_else(|| {
                CodeObjError::malformed(
                    PFMT,
                    (ptx.len() - rest.len() + at) as u64,
                    format!("{name}: parameter list not closed"),
                )
            })? + name_end;
            let list = &after[name_end + 1..close];
            let mut cur = 0u32;
            for (i, p) in list
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .enumerate()
            {
                let param = parse_ptx_param(p, cur).map_err(|what| {
                    CodeObjError::field(PFMT, format!("{name}.param[{i}]"), what)
                })?;
                cur = param.offset.checked_add(param.size).ok_or_else(|| {
                    CodeObjError::field(
                        PFMT,
                        format!("{name}.param[{i}]"),
                        "parameter buffer overflows",
                    )
                })?;
                params.push(param);
            }
            consumed = close + 1;
        }
        out.push(PtxKernel { name, params });
        rest = &after[consumed..];
    }
    Ok(out)
}

fn find_entry(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(".entry") {
        let at = from + i;
        let before_ok = at == 0 || s.as_bytes()[at - 1].is_ascii_whitespace();
        let after_ok = s
            .as_bytes()
            .get(at + 6)
            .is_some_and(|c| c.is_ascii_whitespace());
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + 6;
    }
    None
}

fn parse_ptx_param(p: &str, cur: u32) -> std::result::Result<PtxParam, String> {
    let toks: Vec<&str> = p.split_whitespace().collect();
    if toks.first() != Some(&".param") {
        return Err(format!("expected `.param`, found `{p}`"));
    }
    let mut elem = 0u32;
    let mut align = None;
    let mut pointer = false;
    let mut name = None;
    let mut it = toks[1..].iter();
    while let Some(&t) = it.next() {
        match t {
            ".align" => {
                let v = it.next().ok_or(".align without a value")?;
                let a: u32 = v.parse().map_err(|_| format!("bad .align `{v}`"))?;
                if a == 0 || !a.is_power_of_two() || a > 4096 {
                    return Err(format!("bad .align {a}"));
                }
                align = Some(a);
            }
            ".ptr" => pointer = true,
            t if t.starts_with('.') => {
                if let Some(sz) = ptx_type_size(t) {
                    elem = sz;
                }
            }
            t => name = Some(t),
        }
    }
    let name = name.ok_or("parameter without a name")?;
    if elem == 0 {
        return Err(format!("parameter `{name}` has no known type"));
    }
    let (base, count) = match name.split_once('[') {
        Some((b, n)) => {
            let n = n.trim_end_matches(']');
            (
                b,
                n.parse::<u32>()
                    .map_err(|_| format!("bad array length `{n}`"))?,
            )
        }
        None => (name, 1),
    };
    let size = elem.checked_mul(count).ok_or("parameter size overflows")?;
    let align = align.unwrap_or(elem);
    let offset = crate::read::align_up(cur as u64, align as u64)
        .and_then(|o| u32::try_from(o).ok())
        .ok_or("parameter offset overflows")?;
    Ok(PtxParam {
        name: base.to_string(),
        offset,
        size,
        align,
        pointer,
    })
}

fn ptx_type_size(t: &str) -> Option<u32> {
    Some(match t {
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        ".b128" => 16,
        _ => return None,
    })
}

/// Kernel parameter layouts of a fat binary: from the first cubin entry that
/// has any (layouts do not depend on the SM), else from the PTX.
pub fn kernels(fatbin: &[u8]) -> Result<Vec<KernelMeta>> {
    let ents = entries(fatbin)?;
    let mut last_err = None;
    for e in ents.iter().filter(|e| e.kind == FatbinKind::Elf) {
        match payload(fatbin, e).and_then(|p| cubin_params(&p)) {
            Ok(k) => return Ok(k.iter().map(CubinKernel::to_kernel_meta).collect()),
            Err(err) => last_err = Some(err),
        }
    }
    if let Some(e) = ents.iter().find(|e| e.kind == FatbinKind::Ptx) {
        let p = payload(fatbin, e)?;
        let text = String::from_utf8_lossy(&p);
        return Ok(ptx_params(text.trim_end_matches('\0'))?
            .iter()
            .map(PtxKernel::to_kernel_meta)
            .collect());
    }
    Err(last_err.unwrap_or(CodeObjError::NoMetadata {
        format: FMT,
        what: format!("no cubin or PTX entry among {} entries", ents.len()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_literals_and_overlapping_matches() {
        // "abc" then a match of 9 at distance 3 -> "abcabcabcabc", then literal "Z".
        let block = [0x35, b'a', b'b', b'c', 3, 0, 0x10, b'Z'];
        assert_eq!(lz4_block_decompress(&block, 100).unwrap(), b"abcabcabcabcZ");
        // The output limit is enforced.
        assert!(lz4_block_decompress(&block, 5).is_err());
        // Extended literal length (15 + 255 + 10 = 280).
        let mut b = vec![0xf0, 255, 10];
        b.extend(std::iter::repeat_n(b'x', 280));
        assert_eq!(lz4_block_decompress(&b, 1000).unwrap().len(), 280);
        assert!(lz4_block_decompress(&[0xf0, 255], 1000).is_err());
        assert!(lz4_block_decompress(&[], 10).is_err());
    }

    #[test]
    fn ptx_param_layout() {
        let ptx = ".visible .entry k(\n .param .u8 k_param_0,\n .param .align 16 .b8 k_param_1[32],\n \
                   .param .u64 .ptr .global .align 4 k_param_2\n)\n{ ret; }\n.entry empty()\n{ }\n";
        let ks = ptx_params(ptx).unwrap();
        assert_eq!(ks.len(), 2);
        let p: Vec<_> = ks[0]
            .params
            .iter()
            .map(|p| (p.offset, p.size, p.pointer))
            .collect();
        assert_eq!(p, [(0, 1, false), (16, 32, false), (48, 8, true)]);
        assert_eq!(ks[1].name, "empty");
        assert!(ks[1].params.is_empty());
        let m = ks[0].to_kernel_meta();
        assert_eq!(m.pointer_offsets(), [48]);
        assert!(ptx_params(".entry k(.param .u32").is_err());
        assert!(ptx_params(".entry k(.param .align 3 .b8 x[2])").is_err());
    }

    #[test]
    fn nv_info_records() {
        // HVAL CBANK_PARAM_SIZE 0x1c, then KPARAM_INFO ordinal 1 offset 8 size 8.
        let mut d = vec![0x03, EIATTR_CBANK_PARAM_SIZE, 0x1c, 0x00];
        d.extend_from_slice(&[0x04, EIATTR_KPARAM_INFO, 12, 0]);
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(&1u16.to_le_bytes());
        d.extend_from_slice(&8u16.to_le_bytes());
        d.extend_from_slice(&((8u32 << 18) | 0x1f000).to_le_bytes());
        let k = parse_nv_info("k", &d).unwrap();
        assert_eq!(k.param_size, Some(0x1c));
        assert_eq!(
            k.params,
            [CubinParam {
                ordinal: 1,
                offset: 8,
                size: 8
            }]
        );
        assert!(parse_nv_info("k", &[0x07, 0, 0, 0]).is_err());
    }

    #[test]
    fn wrapper() {
        let mut w = WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&0x1000u64.to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(
            parse_wrapper(&w).unwrap(),
            FatbinWrapper {
                version: 1,
                data: 0x1000,
                filename_or_fatbins: 0
            }
        );
        assert!(matches!(
            parse_wrapper(&w[..20]),
            Err(CodeObjError::Truncated { .. })
        ));
        w[0] = 0;
        assert!(matches!(
            parse_wrapper(&w),
            Err(CodeObjError::BadMagic { .. })
        ));
    }
}
