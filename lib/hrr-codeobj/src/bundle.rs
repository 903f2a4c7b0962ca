//! Clang offload bundles, as `clang -x hip` embeds them behind the HIPF
//! wrapper and as `clang-offload-bundler` writes them.
//!
//! Uncompressed layout (all integers little-endian u64), from LLVM's
//! `clang/lib/Driver/OffloadBundler.cpp` (`BinaryFileHandler`):
//!
//! ```text
//! "__CLANG_OFFLOAD_BUNDLE__"            24 bytes
//! number of entries                     u64
//! per entry: offset u64, size u64, id length u64, id bytes
//! entry payloads (clang aligns each to 4096 for HIP)
//! ```
//!
//! Compressed (`CCOB`) layout, from the same file
//! (`CompressedOffloadBundle`, `RawCompressedBundleHeader`), packed:
//!
//! ```text
//! v1: "CCOB" u16 version u16 method u32 uncompressed_size             u64 hash  (20 bytes)
//! v2: "CCOB" u16 version u16 method u32 total_size u32 uncompressed_size u64 hash  (24 bytes)
//! v3: "CCOB" u16 version u16 method u64 total_size u64 uncompressed_size u64 hash  (32 bytes)
//! ```
//!
//! `method` is `llvm::compression::Format`: 0 = zlib, 1 = zstd. `total_size`
//! counts the header too; v1 has none (the stream runs to the end of the
//! blob). `hash` is the low 64 bits of the MD5 of the uncompressed bundle
//! (LLVM only reports it; so does this crate). The payload inflates to an
//! uncompressed `__CLANG_OFFLOAD_BUNDLE__`.

use std::borrow::Cow;
use std::io::Read;

use crate::error::{CodeObjError, Result, hex_prefix};
use crate::read::{Bytes, align_up};

/// Magic of an uncompressed bundle.
pub const MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";
/// Alignment of entry payloads in [`write`] (what clang uses for HIP).
pub const ALIGNMENT: u64 = 4096;
/// Largest inflated CCOB payload this crate produces (4 GiB).
pub const MAX_DECOMPRESSED: u64 = 4 << 30;
/// A CCOB may inflate to at most this many times its compressed size
/// (plus 64 MiB): real bundles compress 5-50x; this stops zip bombs.
pub const MAX_RATIO: u64 = 1024;

const FMT: &str = "offload bundle";
const CFMT: &str = "compressed offload bundle (CCOB)";

/// One entry of a bundle: target id and where its bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BundleEntry {
    /// Target id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub id: String,
    /// Byte offset of the payload from the start of the bundle.
    pub offset: u64,
    /// Payload size in bytes.
    pub size: u64,
}

impl BundleEntry {
    /// The payload inside `bundle` (the bytes this entry was parsed from).
    pub fn data<'a>(&self, bundle: &'a [u8]) -> Result<&'a [u8]> {
        Bytes::new(bundle, FMT).slice(
            self.offset,
            self.size,
            &format!("payload of entry {}", self.id),
        )
    }

    /// The parsed target id.
    pub fn target(&self) -> BundleTarget<'_> {
        BundleTarget::parse(&self.id)
    }
}

/// A parsed, uncompressed bundle.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Bundle {
    /// Its entries, in file order.
    pub entries: Vec<BundleEntry>,
}

impl Bundle {
    /// All entry ids, in file order.
    pub fn ids(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.id.clone()).collect()
    }

    /// The non-empty entry best matching `target` (see [`target_matches`]);
    /// an empty entry holds no code object and never matches.
    pub fn find(&self, target: &str) -> Option<&BundleEntry> {
        let mut best: Option<(u32, &BundleEntry)> = None;
        for e in self.entries.iter().filter(|e| e.size > 0) {
            if let Some(score) = match_score(&e.id, target)
                && best.is_none_or(|(s, _)| score > s)
            {
                best = Some((score, e));
            }
        }
        best.map(|(_, e)| e)
    }
}

/// True for an uncompressed bundle.
pub fn is_bundle(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// True for a compressed (`CCOB`) bundle.
pub fn is_compressed(data: &[u8]) -> bool {
    data.starts_with(CCOB_MAGIC)
}

/// Parses the header of an uncompressed bundle. `check_payloads`: every
/// entry must lie inside `data` (otherwise only the header has to be there).
fn parse_header(data: &[u8], check_payloads: bool) -> Result<(Bundle, u64)> {
    let b = Bytes::new(data, FMT);
    let magic = b.slice(0, 24, "magic")?;
    if magic != MAGIC {
        return Err(CodeObjError::BadMagic {
            format: FMT,
            offset: 0,
            expected: "\"__CLANG_OFFLOAD_BUNDLE__\"".into(),
            found: format!("{:?}", String::from_utf8_lossy(magic)),
        });
    }
    let count = b.u64(24, "entry count")?;
    let mut pos: u64 = 32;
    // Each entry header takes at least 24 bytes: bound the count by what the
    // input can hold before allocating anything from it.
    let room = b.len().saturating_sub(pos) / 24;
    if count > room {
        let need = count.saturating_mul(24);
        return Err(CodeObjError::Truncated {
            format: FMT,
            what: format!("entry table of {count} entries"),
            offset: pos,
            need,
            have: b.len(),
        });
    }
    let mut entries = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let what = |f: &str| format!("entry {i} {f}");
        let offset = b.u64(pos, &what("offset"))?;
        let size = b.u64(pos + 8, &what("size"))?;
        let id_len = b.u64(pos + 16, &what("id length"))?;
        let id_bytes = b.slice(pos + 24, id_len, &what("id"))?;
        let id = std::str::from_utf8(id_bytes)
            .map_err(|_| {
                CodeObjError::entry(
                    FMT,
                    i,
                    format!("id is not UTF-8: {}", hex_prefix(id_bytes, 16)),
                )
            })?
            .to_string();
        pos += 24 + id_len; // cannot overflow: slice() checked pos + 24 + id_len <= len
        let end = offset.checked_add(size).ok_or_else(|| {
            CodeObjError::entry(
                FMT,
                i,
                format!("`{id}`: offset {offset} + size {size} overflows"),
            )
        })?;
        if check_payloads && end > b.len() {
            return Err(CodeObjError::entry(
                FMT,
                i,
                format!(
                    "`{id}`: payload [{offset}, {end}) lies outside the {} byte bundle",
                    b.len()
                ),
            ));
        }
        entries.push(BundleEntry { id, offset, size });
    }
    let header_end = pos;
    for (i, e) in entries.iter().enumerate() {
        if e.size > 0 && e.offset < header_end {
            return Err(CodeObjError::entry(
                FMT,
                i,
                format!(
                    "`{}`: payload offset {} overlaps the {header_end} byte header",
                    e.id, e.offset
                ),
            ));
        }
    }
    Ok((Bundle { entries }, header_end))
}

/// Parses an uncompressed bundle; every entry must lie inside `data`.
/// A `CCOB` gives an error pointing at [`decompress`] / [`select`].
pub fn parse(data: &[u8]) -> Result<Bundle> {
    if is_compressed(data) {
        return Err(CodeObjError::Unsupported {
            format: FMT,
            what: "compressed bundle (CCOB) in bundle::parse: call bundle::decompress first, or bundle::select".into(),
        });
    }
    parse_header(data, true).map(|(b, _)| b)
}

/// Total bytes the bundle spans from its start, read from the header alone:
/// for an uncompressed bundle the end of the furthest entry (or of the
/// header); for `CCOB` v2/v3 the total-size field. `CCOB` v1 has no size
/// field, so its compressed stream is walked (the whole stream must be in
/// `data`).
///
/// When all you have is a pointer, call this with a small slice; a
/// [`CodeObjError::Truncated`] error's [`CodeObjError::needed_len`] says how
/// much more to read.
pub fn extent(data: &[u8]) -> Result<usize> {
    let n = if is_compressed(data) {
        let h = ccob_header(data)?;
        match h.total_size {
            Some(t) => t,
            None => {
                let stream = &data[h.header_size..];
                let used = compressed_stream_len(h.method, stream, h.header_size as u64)?;
                h.header_size as u64 + used
            }
        }
    } else {
        let (bundle, header_end) = parse_header(data, false)?;
        bundle
            .entries
            .iter()
            .map(|e| e.offset + e.size) // checked in parse_header
            .fold(header_end, u64::max)
    };
    usize::try_from(n)
        .map_err(|_| CodeObjError::malformed(FMT, 0, format!("extent {n} does not fit in memory")))
}

/// The code object for `target` out of a bundle (compressed or not).
///
/// `target` is a device target id as HIP reports it (`gfx90a`,
/// `gfx90a:sramecc+:xnack-`, `cpu`) or a full bundle entry id. An entry
/// matches when its processor is the same and none of its features
/// contradicts the device's (`gfx90a` matches `...--gfx90a:xnack-` and
/// `...--gfx90a`); the most specific match wins. Host entries never match.
/// A plain ELF is returned as it is. No match: an error listing the targets.
pub fn select<'a>(data: &'a [u8], target: &str) -> Result<Cow<'a, [u8]>> {
    if crate::elf::is_elf(data) {
        return Ok(Cow::Borrowed(data));
    }
    if is_compressed(data) {
        let inner = decompress(data)?;
        let bundle = parse(&inner)?;
        let e = pick(&bundle, target)?;
        return Ok(Cow::Owned(e.data(&inner)?.to_vec()));
    }
    let bundle = parse(data)?;
    let e = pick(&bundle, target)?;
    Ok(Cow::Borrowed(e.data(data)?))
}

/// Entry ids of a bundle, compressed or not.
pub fn targets(data: &[u8]) -> Result<Vec<String>> {
    if is_compressed(data) {
        Ok(parse(&decompress(data)?)?.ids())
    } else {
        Ok(parse(data)?.ids())
    }
}

fn pick<'b>(bundle: &'b Bundle, target: &str) -> Result<&'b BundleEntry> {
    bundle
        .find(target)
        .ok_or_else(|| CodeObjError::NoMatchingTarget {
            target: target.to_string(),
            available: bundle.ids(),
        })
}

/// A bundle entry id split the way LLVM's `OffloadTargetInfo` splits it:
/// `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleTarget<'a> {
    /// `hip`, `hipv4`, `host`, `openmp`, ...
    pub kind: &'a str,
    /// The triple (`amdgcn-amd-amdhsa-`, `x86_64-unknown-linux-gnu`).
    pub triple: &'a str,
    /// Processor and features (`gfx90a:xnack-`, `cpu`), possibly empty.
    pub target_id: &'a str,
}

impl<'a> BundleTarget<'a> {
    /// Splits an entry id into its kind, triple and target id.
    pub fn parse(id: &'a str) -> Self {
        let parts: Vec<&str> = id.splitn(6, '-').collect();
        let kind = parts[0];
        let rest = id.get(kind.len() + 1..).unwrap_or("");
        let target_id = match parts.len() {
            6 => parts[5],
            // Old ids such as `hip-amdgcn-amd-amdhsa-gfx906` have a 3-part triple.
            5 if looks_like_processor(parts[4]) => parts[4],
            _ => "",
        };
        let triple = rest
            .strip_suffix(target_id)
            .map(|t| t.strip_suffix('-').unwrap_or(t))
            .unwrap_or(rest);
        BundleTarget {
            kind,
            triple,
            target_id,
        }
    }

    /// The processor (`gfx90a`) without features.
    pub fn processor(&self) -> &'a str {
        self.target_id.split(':').next().unwrap_or("")
    }
}

fn looks_like_processor(s: &str) -> bool {
    let p = s.split(':').next().unwrap_or("");
    p.starts_with("gfx") || p.starts_with("sm_") || p == "cpu"
}

/// Features of a target id: `gfx90a:sramecc+:xnack-` → [("sramecc", '+'), ("xnack", '-')].
fn features(target_id: &str) -> Vec<(&str, char)> {
    target_id
        .split(':')
        .skip(1)
        .filter_map(|f| {
            let sign = f.chars().last()?;
            if sign == '+' || sign == '-' {
                Some((&f[..f.len() - 1], sign))
            } else {
                None
            }
        })
        .collect()
}

/// Whether bundle entry `id` can run on device `target` (see [`select`]).
pub fn target_matches(id: &str, target: &str) -> bool {
    match_score(id, target).is_some()
}

fn match_score(id: &str, target: &str) -> Option<u32> {
    if id == target {
        return Some(u32::MAX);
    }
    let t = BundleTarget::parse(id);
    if t.kind == "host" || t.target_id.is_empty() {
        return None;
    }
    let want = target.rsplit_once("--").map_or(target, |(_, id)| id);
    let want_proc = want.split(':').next().unwrap_or("");
    if want_proc.is_empty() || t.processor() != want_proc {
        return None;
    }
    let have = features(want);
    let entry = features(t.target_id);
    for (f, s) in &entry {
        if have.iter().any(|(hf, hs)| hf == f && hs != s) {
            return None;
        }
    }
    Some(1 + entry.len() as u32)
}

/// Writes an uncompressed bundle with each payload aligned to [`ALIGNMENT`],
/// as clang does for HIP.
pub fn write(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let header: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offsets = Vec::with_capacity(entries.len());
    let mut pos = header as u64;
    for (_, data) in entries {
        pos = align_up(pos, ALIGNMENT).expect("bundle size overflows u64");
        offsets.push(pos);
        pos += data.len() as u64;
    }
    let mut out = Vec::with_capacity(pos as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for ((id, data), off) in entries.iter().zip(&offsets) {
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, data), off) in entries.iter().zip(&offsets) {
        out.resize(*off as usize, 0);
        out.extend_from_slice(data);
    }
    out
}

/// Compression method of a `CCOB` (`llvm::compression::Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// zlib (method 0).
    Zlib,
    /// zstd (method 1).
    Zstd,
}

impl Compression {
    /// The method's number in the header.
    pub fn method_id(self) -> u16 {
        match self {
            Compression::Zlib => 0,
            Compression::Zstd => 1,
        }
    }
}

/// A decoded `CCOB` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CcobHeader {
    /// 1, 2 or 3.
    pub version: u16,
    /// How the bundle is compressed.
    pub method: Compression,
    /// Total bytes of the compressed bundle, header included (v2, v3).
    pub total_size: Option<u64>,
    /// Size of the inflated `__CLANG_OFFLOAD_BUNDLE__`.
    pub uncompressed_size: u64,
    /// Low 64 bits of the MD5 of the inflated bundle.
    pub hash: u64,
    /// 20, 24 or 32.
    pub header_size: usize,
}

/// Decodes the `CCOB` header.
pub fn ccob_header(data: &[u8]) -> Result<CcobHeader> {
    let b = Bytes::new(data, CFMT);
    let magic = b.slice(0, 4, "magic")?;
    if magic != CCOB_MAGIC {
        return Err(CodeObjError::BadMagic {
            format: CFMT,
            offset: 0,
            expected: "\"CCOB\"".into(),
            found: hex_prefix(magic, 4),
        });
    }
    let version = b.u16(4, "version")?;
    let method_id = b.u16(6, "compression method")?;
    let (total_size, uncompressed_size, hash, header_size) = match version {
        1 => (
            None,
            b.u32(8, "v1 uncompressed size")? as u64,
            b.u64(12, "v1 hash")?,
            20,
        ),
        2 => (
            Some(b.u32(8, "v2 total size")? as u64),
            b.u32(12, "v2 uncompressed size")? as u64,
            b.u64(16, "v2 hash")?,
            24,
        ),
        3 => (
            Some(b.u64(8, "v3 total size")?),
            b.u64(16, "v3 uncompressed size")?,
            b.u64(24, "v3 hash")?,
            32,
        ),
        v => {
            return Err(CodeObjError::Unsupported {
                format: CFMT,
                what: format!("version {v} at offset 4 (known: 1, 2, 3)"),
            });
        }
    };
    let method = match method_id {
        0 => Compression::Zlib,
        1 => Compression::Zstd,
        m => {
            return Err(CodeObjError::Unsupported {
                format: CFMT,
                what: format!("compression method {m} at offset 6 (known: 0 = zlib, 1 = zstd)"),
            });
        }
    };
    if let Some(t) = total_size
        && t < header_size as u64
    {
        return Err(CodeObjError::malformed(
            CFMT,
            8,
            format!("total size {t} is smaller than the {header_size} byte v{version} header"),
        ));
    }
    Ok(CcobHeader {
        version,
        method,
        total_size,
        uncompressed_size,
        hash,
        header_size,
    })
}

/// Inflates a `CCOB` into the uncompressed `__CLANG_OFFLOAD_BUNDLE__` it holds.
/// The output must have exactly the size the header announces.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    let h = ccob_header(data)?;
    let end = match h.total_size {
        Some(t) => {
            if t > data.len() as u64 {
                return Err(CodeObjError::Truncated {
                    format: CFMT,
                    what: "compressed payload".into(),
                    offset: h.header_size as u64,
                    need: t - h.header_size as u64,
                    have: data.len() as u64,
                });
            }
            t as usize
        }
        None => data.len(),
    };
    let stream = &data[h.header_size..end];
    let ratio_cap = (stream.len() as u64)
        .saturating_mul(MAX_RATIO)
        .saturating_add(64 << 20);
    let cap = MAX_DECOMPRESSED.min(ratio_cap);
    if h.uncompressed_size > cap {
        return Err(CodeObjError::malformed(
            CFMT,
            if h.version == 3 {
                16
            } else {
                8 + 4 * (h.version as u64 - 1)
            },
            format!(
                "uncompressed size {} is beyond the limit {cap} for {} compressed bytes",
                h.uncompressed_size,
                stream.len()
            ),
        ));
    }
    let out = inflate(
        h.method,
        stream,
        h.uncompressed_size,
        h.header_size as u64,
        CFMT,
    )?;
    if out.len() as u64 != h.uncompressed_size {
        return Err(CodeObjError::Decompress {
            format: CFMT,
            offset: h.header_size as u64,
            what: format!(
                "inflated to {} bytes, header announces {}",
                out.len(),
                h.uncompressed_size
            ),
        });
    }
    Ok(out)
}

/// Inflates `stream`, producing at most `limit` bytes (one more is read to
/// detect overlong data; the caller compares lengths).
pub(crate) fn inflate(
    method: Compression,
    stream: &[u8],
    limit: u64,
    offset: u64,
    format: &'static str,
) -> Result<Vec<u8>> {
    let derr = |e: std::io::Error| CodeObjError::Decompress {
        format,
        offset,
        what: format!("{method:?}: {e}"),
    };
    // Never preallocate from the (untrusted) announced size.
    let mut out = Vec::with_capacity(limit.min(1 << 20) as usize);
    match method {
        Compression::Zlib => {
            flate2::read::ZlibDecoder::new(stream)
                .take(limit.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(derr)?;
        }
        Compression::Zstd => {
            let mut d = zstd::stream::read::Decoder::with_buffer(stream).map_err(derr)?;
            // 2^27 (128 MiB) is zstd's default limit and what LLVM's
            // long-distance-matching compression uses; a frame asking for a
            // larger window is refused instead of allocated.
            d.window_log_max(27).map_err(derr)?;
            d.take(limit.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(derr)?;
        }
    }
    Ok(out)
}

/// Length of the compressed stream at the start of `stream` (for CCOB v1).
fn compressed_stream_len(method: Compression, stream: &[u8], offset: u64) -> Result<u64> {
    match method {
        Compression::Zstd => zstd::zstd_safe::find_frame_compressed_size(stream)
            .map(|n| n as u64)
            .map_err(|code| CodeObjError::Decompress {
                format: CFMT,
                offset,
                what: format!("zstd frame: {}", zstd::zstd_safe::get_error_name(code)),
            }),
        Compression::Zlib => {
            let mut d = flate2::read::ZlibDecoder::new(stream);
            let cap = (stream.len() as u64)
                .saturating_mul(MAX_RATIO)
                .saturating_add(64 << 20);
            std::io::copy(&mut (&mut d).take(cap), &mut std::io::sink()).map_err(|e| {
                CodeObjError::Decompress {
                    format: CFMT,
                    offset,
                    what: format!("zlib: {e}"),
                }
            })?;
            Ok(d.total_in())
        }
    }
}

/// Wraps an uncompressed bundle into a `CCOB` of `version` 1, 2 or 3 (tests
/// and tooling; the hash field is written as 0 unless `hash` is given).
pub fn compress(
    bundle: &[u8],
    method: Compression,
    version: u16,
    hash: Option<u64>,
) -> Result<Vec<u8>> {
    let payload = match method {
        Compression::Zlib => {
            use std::io::Write;
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(bundle)
                .and_then(|_| e.finish())
                .map_err(|e| CodeObjError::Decompress {
                    format: CFMT,
                    offset: 0,
                    what: format!("zlib compress: {e}"),
                })?
        }
        Compression::Zstd => {
            zstd::bulk::compress(bundle, 3).map_err(|e| CodeObjError::Decompress {
                format: CFMT,
                offset: 0,
                what: format!("zstd compress: {e}"),
            })?
        }
    };
    let hash = hash.unwrap_or(0);
    let mut out = Vec::with_capacity(32 + payload.len());
    out.extend_from_slice(CCOB_MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&method.method_id().to_le_bytes());
    let too_big = |what: &str| CodeObjError::Unsupported {
        format: CFMT,
        what: format!("{what} exceeds the 32-bit fields of version {version}"),
    };
    match version {
        1 => {
            out.extend_from_slice(
                &u32::try_from(bundle.len())
                    .map_err(|_| too_big("size"))?
                    .to_le_bytes(),
            );
        }
        2 => {
            let total = u32::try_from(24 + payload.len()).map_err(|_| too_big("total size"))?;
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(
                &u32::try_from(bundle.len())
                    .map_err(|_| too_big("size"))?
                    .to_le_bytes(),
            );
        }
        3 => {
            out.extend_from_slice(&((32 + payload.len()) as u64).to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u64).to_le_bytes());
        }
        v => {
            return Err(CodeObjError::Unsupported {
                format: CFMT,
                what: format!("version {v} (known: 1, 2, 3)"),
            });
        }
    }
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_ids_split_like_llvm() {
        let t = BundleTarget::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        assert_eq!(
            (t.kind, t.triple, t.target_id),
            ("hipv4", "amdgcn-amd-amdhsa-", "gfx90a:sramecc+:xnack-")
        );
        assert_eq!(t.processor(), "gfx90a");
        let t = BundleTarget::parse("hipv4-x86_64-unknown-linux-gnu-cpu");
        assert_eq!(
            (t.kind, t.triple, t.target_id),
            ("hipv4", "x86_64-unknown-linux-gnu", "cpu")
        );
        let t = BundleTarget::parse("host-x86_64-unknown-linux");
        assert_eq!((t.kind, t.target_id), ("host", ""));
        let t = BundleTarget::parse("hip-amdgcn-amd-amdhsa-gfx906");
        assert_eq!(
            (t.kind, t.triple, t.target_id),
            ("hip", "amdgcn-amd-amdhsa", "gfx906")
        );
        let t = BundleTarget::parse("");
        assert_eq!((t.kind, t.target_id), ("", ""));
    }

    #[test]
    fn target_matching() {
        let id = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";
        assert!(target_matches(id, "gfx90a"));
        assert!(target_matches(id, "gfx90a:xnack-"));
        assert!(target_matches(id, "gfx90a:sramecc+:xnack-"));
        assert!(!target_matches(id, "gfx90a:xnack+"));
        assert!(!target_matches(id, "gfx908"));
        assert!(!target_matches(id, "gfx90"));
        assert!(target_matches(
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "gfx90a:xnack+"
        ));
        assert!(target_matches("hipv4-x86_64-unknown-linux-gnu-cpu", "cpu"));
        assert!(target_matches("hip-x86_64-unknown-linux-gnu-cpu", "cpu"));
        assert!(!target_matches(
            "hip-x86_64-unknown-linux-gnu-cpu",
            "gfx90a"
        ));
        assert!(!target_matches("host-x86_64-unknown-linux-gnu-", "cpu"));
        assert!(!target_matches("host-x86_64-unknown-linux-gnu-", ""));
        assert!(target_matches(id, "amdgcn-amd-amdhsa--gfx90a:xnack-"));
        assert!(target_matches(id, id));
    }

    #[test]
    fn most_specific_entry_wins() {
        let b = write(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"generic"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"xnack-on"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"xnack-off"),
        ]);
        assert_eq!(
            &*select(&b, "gfx90a:sramecc+:xnack-").unwrap(),
            b"xnack-off"
        );
        assert_eq!(&*select(&b, "gfx90a:xnack+").unwrap(), b"xnack-on");
        // No xnack setting on the device: the first compatible, most specific.
        assert_eq!(&*select(&b, "gfx90a").unwrap(), b"xnack-on");
        let b = write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"generic")]);
        assert_eq!(&*select(&b, "gfx90a:xnack+").unwrap(), b"generic");
    }

    #[test]
    fn cpu_entries_old_and_new_kind_and_empty_entries() {
        for id in [
            "hipv4-x86_64-unknown-linux-gnu-cpu",
            "hip-x86_64-unknown-linux-gnu-cpu",
        ] {
            let b = write(&[
                ("host-x86_64-unknown-linux-gnu-", b""),
                (id, b"\x7fELF cpu"),
            ]);
            assert_eq!(&*select(&b, "cpu").unwrap(), b"\x7fELF cpu", "{id}");
        }
        // An empty entry holds no code object: the next match is used, or none.
        let b = write(&[
            ("hipv4-x86_64-unknown-linux-gnu-cpu", b""),
            ("hip-x86_64-unknown-linux-gnu-cpu", b"old"),
        ]);
        assert_eq!(&*select(&b, "cpu").unwrap(), b"old");
        let b = write(&[("hipv4-x86_64-unknown-linux-gnu-cpu", b"")]);
        assert!(matches!(
            select(&b, "cpu"),
            Err(CodeObjError::NoMatchingTarget { .. })
        ));
    }

    #[test]
    fn writer_layout() {
        let b = write(&[
            ("a-b-c-d-e-f", b"xyz"),
            ("host-x86_64-unknown-linux-gnu-", b""),
        ]);
        let p = parse(&b).unwrap();
        assert_eq!(
            p.entries[0],
            BundleEntry {
                id: "a-b-c-d-e-f".into(),
                offset: 4096,
                size: 3
            }
        );
        assert_eq!(p.entries[1].offset, 8192);
        assert_eq!(p.entries[1].size, 0);
        assert_eq!(extent(&b).unwrap(), b.len());
        assert_eq!(p.entries[0].data(&b).unwrap(), b"xyz");
        assert_eq!(write(&[]).len(), 32);
        assert!(parse(&write(&[])).unwrap().entries.is_empty());
    }

    #[test]
    fn ccob_header_sizes_match_llvm() {
        let inner = write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"code")]);
        for (v, hs) in [(1u16, 20usize), (2, 24), (3, 32)] {
            for m in [Compression::Zlib, Compression::Zstd] {
                let c = compress(&inner, m, v, Some(0x1122)).unwrap();
                let h = ccob_header(&c).unwrap();
                assert_eq!(h.header_size, hs);
                assert_eq!(h.hash, 0x1122);
                assert_eq!(
                    h.total_size,
                    if v == 1 { None } else { Some(c.len() as u64) }
                );
                assert_eq!(extent(&c).unwrap(), c.len());
                assert_eq!(decompress(&c).unwrap(), inner);
                assert_eq!(&*select(&c, "gfx90a").unwrap(), b"code");
            }
        }
        assert!(compress(&inner, Compression::Zlib, 4, None).is_err());
    }
}
