//! CPU code objects: clang offload bundles, ELF extents, and the `.hrr.kernels`
//! JSON metadata. Private to this crate for now (hrr-codeobj will own this later).
#![forbid(unsafe_code)]

use crate::ffi::{HipError, err};
use object::{Object, ObjectSection};
use serde::Deserialize;

pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
/// Bundle entry ids holding a CPU code object, in order of preference.
pub const CPU_BUNDLE_IDS: [&str; 2] =
    ["hipv4-x86_64-unknown-linux-gnu-cpu", "hip-x86_64-unknown-linux-gnu-cpu"];
pub const METADATA_SECTION: &str = ".hrr.kernels";
/// Largest image we accept (sanity bound when sizing images from raw pointers).
pub const MAX_IMAGE: u64 = 1 << 34;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeObjError {
    NotCodeObject,
    Truncated,
    NoCpuEntry,
    WrongArch(String),
    NoMetadata,
    BadMetadata(String),
}

impl CodeObjError {
    pub fn hip_error(&self) -> HipError {
        match self {
            CodeObjError::NoCpuEntry | CodeObjError::WrongArch(_) => err::NO_BINARY_FOR_GPU,
            _ => err::INVALID_IMAGE,
        }
    }
}

impl std::fmt::Display for CodeObjError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodeObjError::NotCodeObject => write!(f, "not an ELF object or clang offload bundle"),
            CodeObjError::Truncated => write!(f, "truncated code object"),
            CodeObjError::NoCpuEntry => write!(f, "offload bundle has no {} entry", CPU_BUNDLE_IDS[0]),
            CodeObjError::WrongArch(a) => write!(f, "code object is for {a}, not this CPU"),
            CodeObjError::NoMetadata => write!(f, "no {METADATA_SECTION} section"),
            CodeObjError::BadMetadata(m) => write!(f, "bad {METADATA_SECTION} metadata: {m}"),
        }
    }
}

/// One kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ArgMeta {
    #[serde(alias = ".offset")]
    pub offset: usize,
    #[serde(alias = ".size")]
    pub size: usize,
    #[serde(default, alias = ".value_kind")]
    pub value_kind: String,
}

/// One kernel, normalised: `symbol` defaults to `name`, `kernarg_size` covers every argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMeta {
    pub name: String,
    pub symbol: String,
    pub kernarg_size: usize,
    pub args: Vec<ArgMeta>,
}

#[derive(Deserialize)]
struct RawKernel {
    #[serde(alias = ".name")]
    name: String,
    #[serde(default, alias = ".symbol")]
    symbol: Option<String>,
    #[serde(default, alias = ".kernarg_segment_size")]
    kernarg_segment_size: Option<usize>,
    #[serde(default, alias = ".args")]
    args: Vec<ArgMeta>,
}

#[derive(Deserialize)]
struct RawDoc {
    #[serde(alias = "amdhsa.kernels")]
    kernels: Vec<RawKernel>,
}

/// Parses the `.hrr.kernels` section: one or more JSON documents, each possibly
/// NUL-terminated (the linker concatenates the sections of several objects).
pub fn parse_metadata(bytes: &[u8]) -> Result<Vec<KernelMeta>, CodeObjError> {
    let mut out = Vec::new();
    for chunk in bytes.split(|&b| b == 0) {
        if chunk.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let doc: RawDoc =
            serde_json::from_slice(chunk).map_err(|e| CodeObjError::BadMetadata(e.to_string()))?;
        for k in doc.kernels {
            let mut end = 0usize;
            for a in &k.args {
                let e = a
                    .offset
                    .checked_add(a.size)
                    .ok_or_else(|| CodeObjError::BadMetadata(format!("{}: argument overflows", k.name)))?;
                end = end.max(e);
            }
            let kernarg_size = k.kernarg_segment_size.unwrap_or(0).max(end);
            if kernarg_size > 1 << 20 {
                return Err(CodeObjError::BadMetadata(format!("{}: kernarg segment too large", k.name)));
            }
            let symbol = match k.symbol {
                Some(s) if !s.is_empty() && !s.ends_with(".kd") => s,
                _ => k.name.clone(),
            };
            out.push(KernelMeta { name: k.name, symbol, kernarg_size, args: k.args });
        }
    }
    if out.is_empty() && !bytes.iter().any(|&b| b != 0 && !b.is_ascii_whitespace()) {
        return Err(CodeObjError::BadMetadata("empty".into()));
    }
    Ok(out)
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}
fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}
fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

/// The entries of a clang offload bundle: (id, byte range within the bundle).
pub fn bundle_entries(data: &[u8]) -> Result<Vec<(String, std::ops::Range<usize>)>, CodeObjError> {
    let mut entries = Vec::new();
    walk_bundle(&mut |off, len| data.get(off as usize..(off as usize).checked_add(len)?).map(<[u8]>::to_vec), &mut |id, o, s| {
        let (o, s) = (o as usize, s as usize);
        if o.checked_add(s).is_none_or(|e| e > data.len()) {
            return Err(CodeObjError::Truncated);
        }
        entries.push((id, o..o + s));
        Ok(())
    })?;
    Ok(entries)
}

type Reader<'a> = dyn FnMut(u64, usize) -> Option<Vec<u8>> + 'a;

fn walk_bundle(
    read: &mut Reader<'_>,
    each: &mut dyn FnMut(String, u64, u64) -> Result<(), CodeObjError>,
) -> Result<u64, CodeObjError> {
    let hdr = read(0, 32).ok_or(CodeObjError::Truncated)?;
    if &hdr[..24] != BUNDLE_MAGIC {
        return Err(CodeObjError::NotCodeObject);
    }
    let n = u64_at(&hdr, 24).ok_or(CodeObjError::Truncated)?;
    if n > 4096 {
        return Err(CodeObjError::Truncated);
    }
    let mut pos = 32u64;
    let mut extent = pos;
    for _ in 0..n {
        let e = read(pos, 24).ok_or(CodeObjError::Truncated)?;
        let (off, size, id_len) = (u64_at(&e, 0).unwrap_or(0), u64_at(&e, 8).unwrap_or(0), u64_at(&e, 16).unwrap_or(0));
        if id_len > 4096 || off > MAX_IMAGE || size > MAX_IMAGE {
            return Err(CodeObjError::Truncated);
        }
        let id = read(pos + 24, id_len as usize).ok_or(CodeObjError::Truncated)?;
        pos += 24 + id_len;
        extent = extent.max(pos).max(off + size);
        each(String::from_utf8_lossy(&id).into_owned(), off, size)?;
    }
    Ok(extent)
}

/// The CPU code object inside a bundle.
pub fn bundle_cpu_entry(data: &[u8]) -> Result<&[u8], CodeObjError> {
    let entries = bundle_entries(data)?;
    for want in CPU_BUNDLE_IDS {
        if let Some((_, r)) = entries.iter().find(|(id, r)| id == want && !r.is_empty()) {
            return Ok(&data[r.clone()]);
        }
    }
    Err(CodeObjError::NoCpuEntry)
}

/// Byte length of an ELF64 image read through `read` (headers, sections, segments).
fn elf_extent(read: &mut Reader<'_>, base: u64) -> Result<u64, CodeObjError> {
    let h = read(base, 64).ok_or(CodeObjError::Truncated)?;
    if &h[..4] != ELF_MAGIC {
        return Err(CodeObjError::NotCodeObject);
    }
    if h[4] != 2 || h[5] != 1 {
        return Err(CodeObjError::WrongArch("a non-ELF64-little-endian target".into()));
    }
    let t = CodeObjError::Truncated;
    let phoff = u64_at(&h, 32).ok_or(t.clone())?;
    let shoff = u64_at(&h, 40).ok_or(t.clone())?;
    let phentsize = u64::from(u16_at(&h, 54).ok_or(t.clone())?);
    let phnum = u64::from(u16_at(&h, 56).ok_or(t.clone())?);
    let shentsize = u64::from(u16_at(&h, 58).ok_or(t.clone())?);
    let shnum = u64::from(u16_at(&h, 60).ok_or(t.clone())?);
    if phoff > MAX_IMAGE || shoff > MAX_IMAGE {
        return Err(t);
    }
    let mut extent = 64u64.max(phoff + phentsize * phnum).max(shoff + shentsize * shnum);
    if shnum > 0 && shentsize >= 40 {
        let sht = read(base + shoff, (shentsize * shnum) as usize).ok_or(t.clone())?;
        for i in 0..shnum as usize {
            let s = &sht[i * shentsize as usize..];
            let ty = u32_at(s, 4).ok_or(t.clone())?;
            let (off, size) = (u64_at(s, 24).ok_or(t.clone())?, u64_at(s, 32).ok_or(t.clone())?);
            if ty != 8 && ty != 0 && off <= MAX_IMAGE && size <= MAX_IMAGE {
                extent = extent.max(off + size);
            }
        }
    }
    if phnum > 0 && phentsize >= 56 {
        let pht = read(base + phoff, (phentsize * phnum) as usize).ok_or(t.clone())?;
        for i in 0..phnum as usize {
            let p = &pht[i * phentsize as usize..];
            let (off, size) = (u64_at(p, 8).ok_or(t.clone())?, u64_at(p, 32).ok_or(t.clone())?);
            if off <= MAX_IMAGE && size <= MAX_IMAGE {
                extent = extent.max(off + size);
            }
        }
    }
    if extent > MAX_IMAGE {
        return Err(t);
    }
    Ok(extent)
}

/// Length of an image (ELF or offload bundle) known only by its start, read
/// piecewise through `read(offset, len)`.
pub fn image_extent(read: &mut Reader<'_>) -> Result<u64, CodeObjError> {
    let magic = read(0, 4).ok_or(CodeObjError::Truncated)?;
    if magic == ELF_MAGIC {
        return elf_extent(read, 0);
    }
    let magic = read(0, 24).ok_or(CodeObjError::Truncated)?;
    if magic == BUNDLE_MAGIC {
        return walk_bundle(read, &mut |_, _, _| Ok(()));
    }
    Err(CodeObjError::NotCodeObject)
}

/// Takes an image (ELF or bundle) and returns the CPU ELF inside it.
pub fn cpu_elf(image: &[u8]) -> Result<&[u8], CodeObjError> {
    if image.starts_with(BUNDLE_MAGIC) {
        let e = bundle_cpu_entry(image)?;
        if !e.starts_with(ELF_MAGIC) {
            return Err(CodeObjError::NotCodeObject);
        }
        Ok(e)
    } else if image.starts_with(ELF_MAGIC) {
        Ok(image)
    } else {
        Err(CodeObjError::NotCodeObject)
    }
}

fn host_arch() -> object::Architecture {
    if cfg!(target_arch = "x86_64") {
        object::Architecture::X86_64
    } else if cfg!(target_arch = "aarch64") {
        object::Architecture::Aarch64
    } else {
        object::Architecture::Unknown
    }
}

/// Checks the ELF's machine and returns its kernel metadata.
pub fn elf_kernels(elf: &[u8]) -> Result<Vec<KernelMeta>, CodeObjError> {
    let file = object::File::parse(elf).map_err(|_| CodeObjError::NotCodeObject)?;
    if file.architecture() != host_arch() {
        return Err(CodeObjError::WrongArch(format!("{:?}", file.architecture())));
    }
    let sec = file.section_by_name(METADATA_SECTION).ok_or(CodeObjError::NoMetadata)?;
    let data = sec.data().map_err(|_| CodeObjError::Truncated)?;
    parse_metadata(data)
}

/// Writes a clang offload bundle (used by tests and tools).
pub fn write_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut hdr_len = 32u64;
    for (id, _) in entries {
        hdr_len += 24 + id.len() as u64;
    }
    let mut out = Vec::new();
    out.extend_from_slice(BUNDLE_MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut off = hdr_len.next_multiple_of(4096);
    let mut offs = Vec::new();
    for (id, data) in entries {
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
        offs.push(off);
        off = (off + data.len() as u64).next_multiple_of(4096);
    }
    for ((_, data), o) in entries.iter().zip(offs) {
        out.resize(o as usize, 0);
        out.extend_from_slice(data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_shapes() {
        let j = br#"{"kernels":[{"name":"saxpy","symbol":"saxpy","kernarg_segment_size":24,"args":[{"offset":0,"size":8,"value_kind":"global_buffer"},{"offset":8,"size":4,"value_kind":"by_value"}]}]}"#;
        let mut v = j.to_vec();
        v.push(0);
        v.extend_from_slice(br#"{"kernels":[{".name":"k2",".symbol":"k2.kd",".args":[{".offset":0,".size":16}]}]}"#);
        v.push(0);
        let k = parse_metadata(&v).unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].kernarg_size, 24);
        assert_eq!(k[0].args[1].value_kind, "by_value");
        assert_eq!(k[1].symbol, "k2");
        assert_eq!(k[1].kernarg_size, 16);
        assert!(parse_metadata(b"{nope").is_err());
        assert!(parse_metadata(br#"{"kernels":[{"name":"x","args":[{"offset":18446744073709551615,"size":2}]}]}"#).is_err());
    }

    #[test]
    fn bundle_roundtrip_and_extent() {
        let elf = b"\x7fELF-not-really".to_vec();
        let b = write_bundle(&[("host-x86_64-unknown-linux-gnu", b""), (CPU_BUNDLE_IDS[0], &elf)]);
        assert_eq!(bundle_cpu_entry(&b).unwrap(), &elf[..]);
        let mut rd = |o: u64, l: usize| b.get(o as usize..o as usize + l).map(<[u8]>::to_vec);
        assert_eq!(image_extent(&mut rd).unwrap(), b.len() as u64);
        let other = write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &elf)]);
        assert_eq!(bundle_cpu_entry(&other), Err(CodeObjError::NoCpuEntry));
        assert_eq!(bundle_entries(&b[..40]), Err(CodeObjError::Truncated));
        assert_eq!(cpu_elf(b"garbage"), Err(CodeObjError::NotCodeObject));
    }

    #[test]
    fn own_binary_extent_matches_file() {
        // The test executable itself is an ELF64 file: its extent is its length.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let mut rd = |o: u64, l: usize| exe.get(o as usize..o as usize + l).map(<[u8]>::to_vec);
        assert_eq!(image_extent(&mut rd).unwrap(), exe.len() as u64);
        assert_eq!(elf_kernels(&exe), Err(CodeObjError::NoMetadata));
    }
}
