//! `zst`: the compressed forms of an archive's files (docs/FORMAT.md,
//! *Compression*): standard zstd frames, read with bounded memory and
//! written so that readers can bound them.
//!
//! Responsibilities:
//! - Reading: [`Decoder`] streams a file's frames with the decoder's window
//!   capped ([`WINDOW_LOG_MAX`]) and its output capped (`limit`), so a
//!   hostile frame (a tiny file that inflates to gigabytes, a header whose
//!   content size lies, a frame cut short) is an error naming the file and
//!   the reason, never a memory blow-up or a panic.
//! - Blobs: [`encode_blob`] compresses a blob into one frame that records
//!   its content size, or says it does not pay ([`worth_it`]);
//!   [`decode_blob`] reads such a file back into exactly that many bytes,
//!   no more than its caller expects.
//! - Events: [`compress_file`] writes the compressed copy of a finished
//!   events file and makes it durable before anyone removes the original.
//!
//! Hashes are never of the compressed bytes: a blob's name is the hash of
//! what [`decode_blob`] returns, which its callers check.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Suffix of a compressed file's name: `events.ndjson.zst`, `<h>.zst`.
pub const SUFFIX: &str = ".zst";

/// Level of blobs compressed by `hrr-cap`, `hrr-play -o`, repair and
/// `hrr-extract` (zstd's fast end: docs/PERFORMANCE.md, *Compression*, has
/// the measurements; the capture library's own compressor uses level 1).
pub const BLOB_LEVEL: i32 = 3;

/// Level of an events file compressed when its archive is finished: on a
/// launch loop's events level 1 is both the fastest and the smallest of
/// 1–12 (docs/PERFORMANCE.md, *Compression*), and its speed is what the
/// capture's end costs.
pub const EVENTS_LEVEL: i32 = 1;

/// Largest decoder window accepted (2^27 = 128 MiB, zstd's default cap):
/// what one decoder may allocate, whatever a frame header asks. hrr's
/// writers use far smaller windows at their levels.
pub const WINDOW_LOG_MAX: u32 = 27;

/// A compressed blob is kept only when it saves at least this fraction
/// (1/8) of the raw size; otherwise the raw bytes are stored.
pub const MIN_SAVING_DIVISOR: usize = 8;

/// Blobs smaller than this are stored raw: a frame's header and the file
/// system's block make compressing them pointless.
pub const MIN_BLOB: usize = 512;

impl ZstError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ZstError::NoContentSize { path }
            | ZstError::NotZstd { path }
            | ZstError::TooLarge { path, .. }
            | ZstError::Decode { path, .. } => path,
        }
    }
}

/// Why a compressed file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ZstError {
    /// The file's frame does not record its content size (hrr writes it).
    #[error("{}: compressed file without its content size in the frame header", path.display())]
    NoContentSize {
        /// The file.
        path: PathBuf,
    },
    /// The frame header is not a zstd frame header.
    #[error("{}: not a zstd frame (bad magic or header)", path.display())]
    NotZstd {
        /// The file.
        path: PathBuf,
    },
    /// The frame says it holds more than its reader allows.
    #[error(
        "{}: the frame header says it decompresses to {declared} bytes, more than the {limit} \
         expected",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What its header says.
        declared: u64,
        /// What the reader allows.
        limit: u64,
    },
    /// Decoding failed: a truncated or corrupt frame, a lying header.
    #[error("{}: {}", path.display(), source)]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        #[source]
        source: io::Error,
    },
}

/// Whether a compressed form of `raw` bytes that takes `compressed` bytes
/// is worth storing: it saves at least 1/[`MIN_SAVING_DIVISOR`].
pub fn worth_it(raw: usize, compressed: usize) -> bool {
    compressed <= raw - raw / MIN_SAVING_DIVISOR
}

/// The content size a zstd frame header at the start of `head` records:
/// `Ok(None)` when it records none; an error when `head` is no frame
/// header.
pub fn content_size(head: &[u8], path: &Path) -> Result<Option<u64>, ZstError> {
    zstd::zstd_safe::get_frame_content_size(head).map_err(|_| ZstError::NotZstd {
        path: path.to_path_buf(),
    })
}

/// Bytes enough for any frame header (zstd's `ZSTD_FRAMEHEADERSIZE_MAX`).
pub const HEADER_MAX: usize = 18;

/// Reads the frame header at the start of `file` and returns the content
/// size it records (required), at most `limit`.
pub fn declared_size(file: &File, path: &Path, limit: u64) -> Result<u64, ZstError> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; HEADER_MAX];
    let mut n = 0;
    while n < head.len() {
        match file.read_at(&mut head[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(ZstError::Decode {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    let declared = content_size(&head[..n], path)?.ok_or_else(|| ZstError::NoContentSize {
        path: path.to_path_buf(),
    })?;
    if declared > limit {
        return Err(ZstError::TooLarge {
            path: path.to_path_buf(),
            declared,
            limit,
        });
    }
    Ok(declared)
}

/// The content size the frame header of compressed file `path` records
/// (`None`: unreadable, no frame, or no size recorded): for progress and
/// `hrr-play --info`, never trusted for memory.
pub fn file_content_size(path: &Path) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let (file, _) = crate::safe_fs::open_regular(path, crate::safe_fs::Follow::No).ok()?;
    let mut head = [0u8; HEADER_MAX];
    let n = file.read_at(&mut head, 0).ok()?;
    content_size(&head[..n], path).ok().flatten()
}

/// A streaming reader of a compressed file's content: the decoder's window
/// is capped at [`WINDOW_LOG_MAX`], and producing more than `limit` bytes
/// is an error (`InvalidData`, saying so) instead of more output. Decoder
/// errors are worded for the user: a file that ends inside a frame is
/// "truncated", any other failure "corrupt".
pub struct Decoder<R: BufRead> {
    inner: zstd::stream::read::Decoder<'static, R>,
    produced: u64,
    limit: u64,
}

impl<R: BufRead> Decoder<R> {
    /// Decodes `reader`, allowing at most `limit` bytes out.
    pub fn new(reader: R, limit: u64) -> io::Result<Decoder<R>> {
        let mut inner = zstd::stream::read::Decoder::with_buffer(reader)?;
        inner.window_log_max(WINDOW_LOG_MAX)?;
        Ok(Decoder {
            inner,
            produced: 0,
            limit,
        })
    }

    /// Bytes produced so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }
}

impl<R: BufRead> Read for Decoder<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // One byte past the limit is asked for, so that going over shows.
        let room = self.limit.saturating_sub(self.produced).saturating_add(1);
        let want = out.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut out[..want]).map_err(explain)?;
        self.produced += n as u64;
        if self.produced > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "decompresses to more than the {} bytes expected (a zip bomb or a corrupt \
                     frame)",
                    self.limit
                ),
            ));
        }
        Ok(n)
    }
}

/// The decoder's error in the user's terms.
fn explain(e: io::Error) -> io::Error {
    let kind = e.kind();
    let what = if kind == io::ErrorKind::UnexpectedEof {
        "truncated: the file ends inside a zstd frame"
    } else {
        "corrupt zstd data"
    };
    io::Error::new(
        if kind == io::ErrorKind::UnexpectedEof {
            kind
        } else {
            io::ErrorKind::InvalidData
        },
        format!("{what} ({e})"),
    )
}

/// Compresses `raw` into one frame that records its content size, with
/// `cctx` (reused between blobs); `None` when it does not pay
/// ([`worth_it`], [`MIN_BLOB`]). `out` is the buffer written, reused.
pub fn encode_blob(
    cctx: &mut zstd::bulk::Compressor<'static>,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> Option<()> {
    if raw.len() < MIN_BLOB {
        return None;
    }
    out.clear();
    out.reserve(zstd::zstd_safe::compress_bound(raw.len()));
    cctx.compress_to_buffer(raw, out).ok()?;
    worth_it(raw.len(), out.len()).then_some(())
}

/// A compressor for blobs at [`BLOB_LEVEL`], with the content size in
/// every frame header (what [`decode_blob`] requires).
pub fn blob_compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(BLOB_LEVEL)?;
    c.include_contentsize(true)?;
    c.include_checksum(false)?;
    Ok(c)
}

/// The content of compressed blob file `file` (`path` in messages): one
/// frame whose header records its size, at most `limit` bytes; the bytes
/// decoded must be exactly that size. Memory: the declared size, never
/// more. The caller checks the hash.
pub fn decode_blob(file: &File, path: &Path, limit: u64) -> Result<Vec<u8>, ZstError> {
    let declared = declared_size(file, path, limit)?;
    decode_declared(BufReader::with_capacity(64 << 10, file), path, declared)
}

/// [`decode_blob`] of a compressed blob held in memory.
pub fn decode_bytes(bytes: &[u8], path: &Path, limit: u64) -> Result<Vec<u8>, ZstError> {
    let head = &bytes[..bytes.len().min(HEADER_MAX)];
    let declared = content_size(head, path)?.ok_or_else(|| ZstError::NoContentSize {
        path: path.to_path_buf(),
    })?;
    if declared > limit {
        return Err(ZstError::TooLarge {
            path: path.to_path_buf(),
            declared,
            limit,
        });
    }
    decode_declared(bytes, path, declared)
}

/// Decodes `r` into exactly `declared` bytes (see [`decode_blob`]).
fn decode_declared(r: impl BufRead, path: &Path, declared: u64) -> Result<Vec<u8>, ZstError> {
    let decode = |source| ZstError::Decode {
        path: path.to_path_buf(),
        source,
    };
    let mut d = Decoder::new(r, declared).map_err(decode)?;
    let mut out = vec![
        0u8;
        usize::try_from(declared).map_err(|_| ZstError::TooLarge {
            path: path.to_path_buf(),
            declared,
            limit: usize::MAX as u64,
        })?
    ];
    d.read_exact(&mut out).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof && d.produced() < declared {
            decode(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "decompresses to {} bytes, fewer than the {declared} its frame header says \
                     (truncated or a lying header)",
                    d.produced()
                ),
            ))
        } else {
            decode(e)
        }
    })?;
    // Nothing may follow: the frame's end (and its content size check),
    // then the file's.
    let mut probe = [0u8; 1];
    match d.read(&mut probe) {
        Ok(0) => Ok(out),
        Ok(_) => Err(decode(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("decompresses to more than the {declared} bytes its frame header says"),
        ))),
        Err(e) => Err(decode(e)),
    }
}

/// Compresses the finished events file `src` into `dst` (a new file,
/// `create_new`, mode 0600), at [`EVENTS_LEVEL`], one frame that records
/// the content size, and fsyncs it. Returns the bytes read and written.
/// `dst` is removed again if anything fails.
pub fn compress_file(src: &Path, dst: &Path) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let input = File::open(src)?;
    let len = input.metadata()?.len();
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(crate::safe_fs::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dst)?;
    let r = (|| {
        let mut enc = zstd::stream::write::Encoder::new(io::BufWriter::new(&out), EVENTS_LEVEL)?;
        enc.include_contentsize(true)?;
        enc.set_pledged_src_size(Some(len))?;
        let copied = io::copy(&mut BufReader::with_capacity(1 << 20, &input), &mut enc)?;
        if copied != len {
            return Err(io::Error::other(format!(
                "{} changed size while it was compressed ({len} then {copied} bytes)",
                src.display()
            )));
        }
        enc.finish()?.flush()?;
        out.sync_all()?;
        Ok((len, out.metadata()?.len()))
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(dst);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn blob_file(raw: &[u8]) -> Vec<u8> {
        let mut c = blob_compressor().unwrap();
        let mut out = Vec::new();
        encode_blob(&mut c, raw, &mut out).expect("compressible");
        out
    }

    #[test]
    fn a_blob_round_trips_and_incompressible_bytes_stay_raw() {
        let t = tempfile::tempdir().unwrap();
        let raw: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 7).to_le_bytes())
            .collect();
        let p = write(t.path(), "b.zst", &blob_file(&raw));
        let got = decode_blob(&File::open(&p).unwrap(), &p, raw.len() as u64).unwrap();
        assert_eq!(got, raw);
        // Random bytes do not compress: stored raw.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                // xorshift64: bytes no compressor can shrink.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        let mut c = blob_compressor().unwrap();
        assert!(encode_blob(&mut c, &noise, &mut Vec::new()).is_none());
        assert!(encode_blob(&mut c, &[0; 100], &mut Vec::new()).is_none());
    }

    #[test]
    fn a_bomb_is_refused_before_it_is_decoded() {
        let t = tempfile::tempdir().unwrap();
        // 1 GiB of zeros in a few kilobytes.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
        enc.include_contentsize(true).unwrap();
        enc.set_pledged_src_size(Some(1 << 30)).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..1024 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let p = write(t.path(), "bomb.zst", &bomb);
        let e = decode_blob(&File::open(&p).unwrap(), &p, 4096).unwrap_err();
        assert!(
            matches!(e, ZstError::TooLarge { declared, limit: 4096, .. } if declared == 1 << 30)
        );
        assert!(e.to_string().contains("bomb.zst"), "{e}");
    }

    #[test]
    fn a_bomb_without_a_size_is_stopped_at_the_limit() {
        // A streamed frame records no size: the decoder's cap stops it.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        let mut d = Decoder::new(&bomb[..], 1 << 20).unwrap();
        let e = io::copy(&mut d, &mut io::sink()).unwrap_err();
        assert!(e.to_string().contains("more than the 1048576 bytes"), "{e}");
        let t = tempfile::tempdir().unwrap();
        let p = write(t.path(), "nosize.zst", &bomb);
        let e = decode_blob(&File::open(&p).unwrap(), &p, u64::MAX).unwrap_err();
        assert!(matches!(e, ZstError::NoContentSize { .. }), "{e}");
    }

    #[test]
    fn a_truncated_frame_is_an_error_saying_so() {
        let raw = vec![7u8; 200_000];
        let z = blob_file(&raw);
        let t = tempfile::tempdir().unwrap();
        let p = write(t.path(), "cut.zst", &z[..z.len() - 3]);
        let e = decode_blob(&File::open(&p).unwrap(), &p, 1 << 30).unwrap_err();
        assert!(e.to_string().contains("cut.zst"), "{e}");
        assert!(
            e.to_string().contains("truncated"),
            "{}",
            crate::error_chain::chain(&e)
        );
        let mut d = Decoder::new(&z[..z.len() - 3], u64::MAX).unwrap();
        let e = io::copy(&mut d, &mut io::sink()).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn a_header_that_lies_about_the_size_is_an_error() {
        let raw: Vec<u8> = (0..200_000u32).map(|i| (i % 13) as u8).collect();
        let mut z = blob_file(&raw);
        // Frame header: magic (4), descriptor (1), then the content size
        // (a 4-byte field for this size, no window byte: single segment).
        let fhd = z[4];
        assert_eq!(fhd >> 6, 2, "a 4-byte content size field");
        assert_ne!(fhd & 0x20, 0, "single segment");
        let size = u32::from_le_bytes(z[5..9].try_into().unwrap());
        assert_eq!(size as usize, raw.len());
        z[5..9].copy_from_slice(&(size - 1000).to_le_bytes());
        let t = tempfile::tempdir().unwrap();
        let p = write(t.path(), "lies.zst", &z);
        let e = decode_blob(&File::open(&p).unwrap(), &p, 1 << 30).unwrap_err();
        assert!(e.to_string().contains("lies.zst"), "{e}");
        z[5..9].copy_from_slice(&(size + 1000).to_le_bytes());
        std::fs::write(&p, &z).unwrap();
        let e = decode_blob(&File::open(&p).unwrap(), &p, 1 << 30).unwrap_err();
        assert!(e.to_string().contains("lies.zst"), "{e}");
    }

    #[test]
    fn garbage_is_not_a_frame() {
        let t = tempfile::tempdir().unwrap();
        let p = write(t.path(), "junk.zst", b"definitely not zstd at all");
        let e = decode_blob(&File::open(&p).unwrap(), &p, 1 << 30).unwrap_err();
        assert!(matches!(e, ZstError::NotZstd { .. }), "{e}");
    }

    #[test]
    fn an_events_file_compresses_to_one_standard_frame() {
        let t = tempfile::tempdir().unwrap();
        let text: String = (0..5000)
            .map(|i| format!("{{\"seq\":{i},\"op\":\"launch\"}}\n"))
            .collect();
        let src = write(t.path(), "events.ndjson", text.as_bytes());
        let dst = t.path().join("events.ndjson.zst");
        let (raw, packed) = compress_file(&src, &dst).unwrap();
        assert_eq!(raw, text.len() as u64);
        assert!(packed * 10 < raw, "{packed} of {raw}");
        let z = std::fs::read(&dst).unwrap();
        assert_eq!(content_size(&z, &dst).unwrap(), Some(raw));
        assert_eq!(zstd::decode_all(&z[..]).unwrap(), text.as_bytes());
        // The destination is new: never written over.
        assert!(compress_file(&src, &dst).is_err());
        assert!(dst.exists());
    }
}
