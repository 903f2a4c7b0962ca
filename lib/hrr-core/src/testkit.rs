//! `ArchiveBuilder`: a fluent builder that writes real archives for tests.
//!
//! Everything goes through [`ArchiveWriter`], so a test exercises the same
//! bytes a capture produces. `seq` and `t` advance by one per event unless
//! set with [`ArchiveBuilder::seq`] / [`ArchiveBuilder::at`]; host addresses
//! of copies default to a fixed fake host range unless given.
//!
//! ```no_run
//! # use hrr_core::testkit::{ArchiveBuilder, ptr_arg};
//! # use hrr_core::manifest::Platform;
//! let dir = ArchiveBuilder::new(Platform::Cpu)
//!     .alloc(0x1000, 64)
//!     .h2d(0x1000, &[1, 2, 3, 4])
//!     .launch("scale", b"\x7fELF...", [1, 1, 1], [64, 1, 1], vec![ptr_arg(0x1000)])
//!     .d2h(0x1000, &[2, 4, 6, 8])
//!     .segment(0x7f00_0000_0000, 1 << 20, 0)
//!     .write("/tmp/cap.hrr")
//!     .unwrap();
//! ```

use std::path::{Path, PathBuf};

use crate::archive_writer::{ArchiveWriter, ManifestExtra, REGIONS_DIR, WriteError};
use crate::event::{Dir, Event, KernelArg, MemKind, Op};
use crate::hex::{Addr, BlobId, HexBytes};
use crate::manifest::{ArchiveKind, Platform};
use crate::region_record::{RegionKind, RegionOp, RegionRecord};

/// Host address used for copies whose host side the test does not name.
pub const FAKE_HOST: u64 = 0x5555_0000_0000;

/// A kernel argument holding one device pointer.
pub fn ptr_arg(ptr: u64) -> KernelArg {
    KernelArg {
        offset: None,
        size: 8,
        hex: HexBytes(ptr.to_le_bytes().to_vec()),
        ptrs: vec![0],
        objs: Vec::new(),
    }
}

/// A by-value kernel argument without pointers.
pub fn value_arg(bytes: &[u8]) -> KernelArg {
    KernelArg {
        offset: None,
        size: bytes.len() as u32,
        hex: HexBytes(bytes.to_vec()),
        ptrs: Vec::new(),
        objs: Vec::new(),
    }
}

/// A by-value struct argument with device pointers embedded at `ptr_offsets`.
pub fn struct_arg(bytes: &[u8], ptr_offsets: &[u32]) -> KernelArg {
    KernelArg {
        ptrs: ptr_offsets.to_vec(),
        ..value_arg(bytes)
    }
}

/// Fluent builder of a test archive; see the module docs.
#[derive(Clone, Debug)]
pub struct ArchiveBuilder {
    kind: ArchiveKind,
    platform: Platform,
    extra: ManifestExtra,
    events: Vec<(Event, Vec<Vec<u8>>)>,
    regions: Vec<RegionRecord>,
    regions_name: String,
    next_seq: u64,
    next_t: u64,
    tid: u64,
    /// Written as hrr writes archives (compressed), or plain (the default:
    /// tests edit the files).
    compressed: bool,
}

impl ArchiveBuilder {
    /// A capture archive on `platform`.
    pub fn new(platform: Platform) -> ArchiveBuilder {
        ArchiveBuilder {
            kind: ArchiveKind::Capture,
            platform,
            extra: ManifestExtra::default(),
            events: Vec::new(),
            regions: Vec::new(),
            regions_name: "testkit".to_string(),
            next_seq: 0,
            next_t: 1_000,
            tid: 1,
            compressed: false,
        }
    }

    /// A replay archive of `capture` on `platform`.
    pub fn replay(platform: Platform, capture: &str) -> ArchiveBuilder {
        let mut b = ArchiveBuilder::new(platform);
        b.kind = ArchiveKind::Replay;
        b.extra.replay_of = Some(capture.to_string());
        b
    }

    /// Writes blobs and events compressed, as hrr's tools do.
    pub fn compressed(mut self) -> Self {
        self.compressed = true;
        self
    }

    /// The command line the manifest records.
    pub fn argv(mut self, argv: &[&str]) -> Self {
        self.extra.argv = argv.iter().map(|s| s.to_string()).collect();
        self
    }

    /// A top-level manifest field.
    pub fn manifest_field(mut self, key: &str, value: serde_json::Value) -> Self {
        self.extra.fields.insert(key.to_string(), value);
        self
    }

    /// The next event's `t`; later events continue from it.
    pub fn at(mut self, t: u64) -> Self {
        self.next_t = t;
        self
    }

    /// The next event's `seq`; later events continue from it.
    pub fn seq(mut self, seq: u64) -> Self {
        self.next_seq = seq;
        self
    }

    /// Overrides the `api` of the last event added.
    pub fn api(mut self, api: &str) -> Self {
        if let Some((e, _)) = self.events.last_mut() {
            e.api = api.to_string();
        }
        self
    }

    /// Overrides the `dev` (device) of the last event added.
    pub fn dev(mut self, dev: u32) -> Self {
        if let Some((e, _)) = self.events.last_mut() {
            e.dev = dev;
        }
        self
    }

    /// Overrides the `ret` of the last event added.
    pub fn ret(mut self, ret: i64) -> Self {
        if let Some((e, _)) = self.events.last_mut() {
            e.ret = ret;
        }
        self
    }

    /// Adds any operation, with `blobs` stored alongside.
    pub fn event(mut self, api: &str, op: Op, blobs: Vec<Vec<u8>>) -> Self {
        let e = Event {
            seq: self.next_seq,
            t: self.next_t,
            tid: self.tid,
            api: api.to_string(),
            ret: 0,
            dev: 0,
            op,
        };
        self.next_seq += 1;
        self.next_t += 1;
        self.events.push((e, blobs));
        self
    }

    /// A device allocation.
    pub fn alloc(self, ptr: u64, size: u64) -> Self {
        self.alloc_mem(ptr, size, MemKind::Device)
    }

    /// An allocation of memory kind `mem`.
    pub fn alloc_mem(self, ptr: u64, size: u64, mem: MemKind) -> Self {
        let api = match mem {
            MemKind::Device => "hipMalloc",
            MemKind::Managed => "hipMallocManaged",
            MemKind::Host | MemKind::Pinned => "hipHostMalloc",
        };
        self.event(
            api,
            Op::Alloc {
                ptr: Addr(ptr),
                size,
                mem,
            },
            vec![],
        )
    }

    /// A free.
    pub fn free(self, ptr: u64) -> Self {
        self.event(
            "hipFree",
            Op::Free {
                ptr: Addr(ptr),
                mem: None,
            },
            vec![],
        )
    }

    /// H2D copy of `bytes` into device `dst` from the fake host range.
    pub fn h2d(self, dst: u64, bytes: &[u8]) -> Self {
        self.copy(Dir::H2d, dst, FAKE_HOST, bytes.len() as u64, Some(bytes))
    }

    /// D2H copy from device `src` whose expected result is `expected`.
    pub fn d2h(self, src: u64, expected: &[u8]) -> Self {
        self.d2h_to(FAKE_HOST, src, expected)
    }

    /// D2H copy into the host address `host_dst`.
    pub fn d2h_to(self, host_dst: u64, src: u64, expected: &[u8]) -> Self {
        self.copy(
            Dir::D2h,
            host_dst,
            src,
            expected.len() as u64,
            Some(expected),
        )
    }

    /// D2H copy of `size` bytes that recorded no result blob.
    pub fn d2h_unrecorded(self, src: u64, size: u64) -> Self {
        self.copy(Dir::D2h, FAKE_HOST, src, size, None)
    }

    /// A device-to-device copy.
    pub fn d2d(self, dst: u64, src: u64, size: u64) -> Self {
        self.copy(Dir::D2d, dst, src, size, None)
    }

    fn copy(self, dir: Dir, dst: u64, src: u64, size: u64, bytes: Option<&[u8]>) -> Self {
        let blob = bytes.map(BlobId::of);
        let op = Op::Memcpy {
            dir,
            dst: Addr(dst),
            src: Addr(src),
            size,
            stream: None,
            blob,
        };
        self.event(
            "hipMemcpy",
            op,
            bytes.map(|b| vec![b.to_vec()]).unwrap_or_default(),
        )
    }

    /// `hipMemset(dst, value, size)` (byte pattern).
    pub fn memset(self, dst: u64, value: u8, size: u64) -> Self {
        let op = Op::Memset {
            dst: Addr(dst),
            value: u32::from(value),
            size,
            width: 1,
            stream: None,
        };
        self.event("hipMemset", op, vec![])
    }

    /// A module loaded from `code`.
    pub fn module_load(self, module: u64, code: &[u8]) -> Self {
        let op = Op::ModuleLoad {
            module: Addr(module),
            code: BlobId::of(code),
        };
        self.event("hipModuleLoadData", op, vec![code.to_vec()])
    }

    /// A launch of kernel `name` from code object `code` on the default
    /// stream. Argument offsets are packed in order, each aligned to its
    /// size (at most 8), as the compiler lays out kernarg segments.
    pub fn launch(
        self,
        name: &str,
        code: &[u8],
        grid: [u32; 3],
        block: [u32; 3],
        mut args: Vec<KernelArg>,
    ) -> Self {
        let offsets = crate::event::arg_offsets(&args);
        for (a, off) in args.iter_mut().zip(offsets) {
            a.offset = Some(off);
        }
        let op = Op::Launch {
            name: name.to_string(),
            code: BlobId::of(code),
            func: None,
            grid,
            block,
            shmem: 0,
            stream: Addr(0),
            args,
            attrs: vec![],
        };
        self.event("hipModuleLaunchKernel", op, vec![code.to_vec()])
    }

    /// A device synchronisation.
    pub fn device_sync(self) -> Self {
        self.event("hipDeviceSynchronize", Op::DeviceSync, vec![])
    }

    /// Declares a hidden segment in the builder's region sidecar.
    pub fn segment(self, base: u64, size: u64, t: u64) -> Self {
        self.region(RegionRecord::segment(base, size, t))
    }

    /// Ends a declared segment at `t`.
    pub fn segment_del(self, base: u64, t: u64) -> Self {
        self.region(RegionRecord {
            op: RegionOp::Del,
            ..RegionRecord::segment(base, 0, t)
        })
    }

    /// Declares a block (a sub-range of known memory).
    pub fn block(self, base: u64, size: u64, t: u64) -> Self {
        self.region(RegionRecord {
            kind: RegionKind::Block,
            ..RegionRecord::segment(base, size, t)
        })
    }

    /// A region sidecar record.
    pub fn region(mut self, record: RegionRecord) -> Self {
        self.regions.push(record);
        self
    }

    /// Name of the sidecar file (`regions/NAME.ndjson`), `testkit` by default.
    pub fn regions_name(mut self, name: &str) -> Self {
        self.regions_name = name.to_string();
        self
    }

    /// Writes a finished archive to `dir` and returns its path.
    pub fn write(self, dir: impl AsRef<Path>) -> Result<PathBuf, WriteError> {
        let (w, dir) = self.write_events(dir.as_ref())?;
        w.finish()?;
        Ok(dir)
    }

    /// Writes the archive as a crashed capture leaves it: events flushed, no
    /// `eof`, manifest `complete:false`.
    pub fn write_unfinished(self, dir: impl AsRef<Path>) -> Result<PathBuf, WriteError> {
        let (w, dir) = self.write_events(dir.as_ref())?;
        drop(w);
        Ok(dir)
    }

    fn write_events(self, dir: &Path) -> Result<(ArchiveWriter, PathBuf), WriteError> {
        let mut w = ArchiveWriter::create(dir, self.kind, self.platform, self.extra)?
            .compress(self.compressed);
        for (event, blobs) in &self.events {
            for b in blobs {
                w.put_blob(b)?;
            }
            w.append(event)?;
        }
        if !self.regions.is_empty() {
            let path = dir
                .join(REGIONS_DIR)
                .join(format!("{}.ndjson", self.regions_name));
            let text: String = self.regions.iter().map(RegionRecord::to_line).collect();
            std::fs::write(&path, text).map_err(|source| WriteError::Io { path, source })?;
        }
        w.flush()?;
        Ok((w, dir.to_path_buf()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Archive;
    use crate::event_reader::ReadOptions;

    #[test]
    fn builds_a_readable_archive() {
        let t = tempfile::tempdir().unwrap();
        let dir = ArchiveBuilder::new(Platform::Cpu)
            .argv(&["./app"])
            .alloc(0x1000, 64)
            .h2d(0x1000, b"abcd")
            .at(5_000)
            .launch(
                "k",
                b"code",
                [1, 1, 1],
                [1, 1, 1],
                vec![value_arg(&[1]), ptr_arg(0x1000)],
            )
            .d2h_to(0x7000, 0x1000, b"dcba")
            .api("hipMemcpyAsync")
            .segment(0x9000, 4096, 0)
            .segment_del(0x9000, 9_000)
            .write(t.path().join("cap.hrr"))
            .unwrap();
        let a = Archive::open(&dir).unwrap();
        assert!(a.is_complete());
        assert_eq!(a.manifest().argv, ["./app"]);
        let events: Vec<Event> = a
            .events(ReadOptions::strict())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(events[2].t, 5_000);
        assert_eq!(events[3].api, "hipMemcpyAsync");
        let Op::Launch { args, code, .. } = &events[2].op else {
            panic!()
        };
        assert_eq!(
            args.iter().map(|a| a.offset).collect::<Vec<_>>(),
            [Some(0), Some(8)]
        );
        assert_eq!(&*a.blobs().get(code).unwrap(), b"code");
        let Op::Memcpy {
            dst, blob: Some(b), ..
        } = &events[3].op
        else {
            panic!()
        };
        assert_eq!(*dst, Addr(0x7000));
        assert_eq!(&*a.blobs().get(b).unwrap(), b"dcba");
        let regions = a.load_regions().unwrap();
        assert_eq!(regions[0].records.len(), 2);
    }
}
