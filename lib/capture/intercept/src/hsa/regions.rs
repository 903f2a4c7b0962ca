//! The built-in HSA region producer (`hrr-cap --hsa-regions`): device memory
//! an application takes straight from an HSA memory pool, which the HIP API
//! never sees, declared as region records in `regions/hsa.ndjson` of the
//! archive, so that replay can back it without a hand-made sidecar.
//!
//! Responsibilities (the C entry points are in `hsa::exports`):
//! - **the switch** ([`enabled`]): `HRR_HSA_REGIONS`, read once. Off, the
//!   interposed HSA functions only jump to the real ones.
//! - **which allocations count** ([`PoolClass`]): those from a global-segment
//!   pool of a GPU agent. A CPU agent's pool (system memory, fine- or
//!   coarse-grained) is host memory: replay never materialises host
//!   operands, so declaring it would only be noise.
//! - **the device field**: the ordinal of the pool's owning agent among the
//!   GPU agents, in `hsa_iterate_agents` order. That is how HIP numbers its
//!   devices (ROCclr enumerates the GPU agents in that order; on the CPU
//!   runtime the one GPU agent is HIP device 0), so `device` means the same
//!   as in every other region record and event.
//! - **the live set**: what was allocated and not yet freed, so a free of a
//!   recorded segment becomes its `del` (a free of anything else, e.g. a
//!   CPU-pool buffer, records nothing).
//! - **writing** ([`RegionFile`]): one `write(2)` of one whole line per
//!   record, on a file opened `O_APPEND`, as the allocation or free happens.
//!   Allocations are rare next to events (the events sink buffers because a
//!   launch costs ~100 ns; an HSA allocation costs tens of µs), so an
//!   unbuffered line costs nothing measurable and leaves nothing for a crash
//!   to lose: a SIGKILL loses at most the record of a call still inside the
//!   hook (one per thread), and a fatal signal has no buffer to flush. The
//!   file is fsynced when the archive is finished.
//!
//! Times (`t`) are CLOCK_MONOTONIC ns, the clock of the events: an `add`
//! after the allocation returned (the address exists from then on), a `del`
//! before the free is forwarded (so it precedes the `add` of whatever reuses
//! the address, even on another thread).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};

use hrr_core::error_chain::chain;

use hrr_recorder::config::ENV_HSA_REGIONS;
use hrr_recorder::record::recorder::Recorder;

/// The producer's file, under the archive's `regions/`.
pub const FILE_NAME: &str = "hsa.ndjson";
/// The `tag` of every record: ASCII `HSA` (producer-defined; replay carries it).
pub const TAG: u32 = 0x0048_5341;
/// The `producer` field of every record.
pub const PRODUCER: &str = "hsa";

/// Whether `HRR_HSA_REGIONS` asks for the producer; read once per process.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| is_on(std::env::var_os(ENV_HSA_REGIONS)))
}

/// `HRR_HSA_REGIONS`'s value: on unless unset, empty or `0`.
pub fn is_on(v: Option<OsString>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

/// What memory a pool hands out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolClass {
    /// A global-segment pool of the GPU agent with this ordinal among the
    /// GPU agents: device memory, recorded as a segment.
    Device(u32),
    /// A pool of a CPU (or other non-GPU) agent, or of another segment:
    /// host memory as far as replay is concerned; not recorded.
    Host,
    /// No agent lists the pool, or a query failed (why): not recorded, with
    /// a warning, rather than guessing a device.
    Unknown(UnplacedPool),
}

/// Why a pool could not be placed on an agent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnplacedPool {
    /// The HSA runtime does not export the queries placing needs.
    #[error("the HSA runtime lacks the agent and pool queries")]
    NoQueries,
    /// A query failed.
    #[error("{call} returned {status:#x}")]
    Query {
        /// The query, with the attribute asked for where it has one.
        call: &'static str,
        /// The `hsa_status_t` it returned.
        status: u32,
    },
    /// No agent lists the pool among its pools.
    #[error("no agent lists the pool")]
    NotListed,
}

/// A region record could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RegionWriteError {
    /// Creating `regions/`, opening the file or writing to it failed.
    #[error("{}", path.display())]
    Io {
        /// The region file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// `op` of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordOp {
    /// The segment exists from the record's `t`.
    Add,
    /// The segment is gone from the record's `t`.
    Del,
}

/// A segment allocated and not yet freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveSegment {
    /// Bytes allocated.
    pub size: u64,
    /// The owning GPU agent's ordinal (see the module docs).
    pub device: u32,
    /// The pool's handle, recorded as the producer's `pool` field.
    pub pool: u64,
}

/// One record as its NDJSON line (with the newline): the binding fields in
/// the documented order, then `producer` and `pool` (readers ignore fields
/// they do not know).
pub fn record_line(op: RecordOp, base: u64, seg: &LiveSegment, t: u64) -> String {
    let op = match op {
        RecordOp::Add => "add",
        RecordOp::Del => "del",
    };
    let mut s = String::with_capacity(192);
    // Writing into a String cannot fail.
    let _ = writeln!(
        s,
        "{{\"op\":\"{op}\",\"kind\":\"segment\",\"base\":\"{base:#x}\",\"size\":{},\"device\":{},\
         \"t\":{t},\"tag\":{TAG},\"producer\":\"{PRODUCER}\",\"pool\":\"{:#x}\"}}",
        seg.size, seg.device, seg.pool
    );
    s
}

/// `regions/hsa.ndjson`, created with its directory at the first record.
pub struct RegionFile {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl RegionFile {
    /// The file of the archive at `archive`; nothing is created yet.
    pub fn new(archive: &Path) -> RegionFile {
        RegionFile {
            path: archive
                .join(hrr_core::archive_writer::REGIONS_DIR)
                .join(FILE_NAME),
            file: Mutex::new(None),
        }
    }

    /// Where the records go.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Option<File>> {
        self.file.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one whole line with one write (see the module docs).
    pub fn append(&self, line: &str) -> Result<(), RegionWriteError> {
        let err = |source| RegionWriteError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = self.lock();
        if file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(err)?;
            }
            let f = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&self.path)
                .map_err(err)?;
            *file = Some(f);
        }
        let f = file.as_mut().expect("opened above");
        f.write_all(line.as_bytes()).map_err(err)
    }

    /// fsyncs the file if it exists. Only tries the lock: this runs on the
    /// exit paths, possibly from a signal handler that interrupted an append
    /// (the lines are in the page cache then, and survive the process).
    pub fn sync(&self) {
        let file = match self.file.try_lock() {
            Ok(f) => f,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if let Some(f) = file.as_ref() {
            hrr_recorder::sys::fsync(f.as_raw_fd());
        }
    }
}

/// The producer's state for one archive.
pub struct HsaRegions {
    file: RegionFile,
    live: Mutex<HashMap<u64, LiveSegment>>,
    pools: Mutex<HashMap<u64, PoolClass>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HsaRegions {
    /// The producer of the archive at `archive`: nothing live, no pool known.
    pub fn new(archive: &Path) -> HsaRegions {
        HsaRegions {
            file: RegionFile::new(archive),
            live: Mutex::new(HashMap::new()),
            pools: Mutex::new(HashMap::new()),
        }
    }

    /// The region file records are appended to.
    pub fn file(&self) -> &RegionFile {
        &self.file
    }

    /// The class of `pool`, asking `classify` (the HSA runtime) once per
    /// pool. The boolean is true the first time a pool is classified.
    pub fn pool_class(&self, pool: u64, classify: impl FnOnce() -> PoolClass) -> (PoolClass, bool) {
        if let Some(c) = lock(&self.pools).get(&pool) {
            return (c.clone(), false);
        }
        // Not under the lock: classifying calls into the HSA runtime.
        let c = classify();
        lock(&self.pools).insert(pool, c.clone());
        (c, true)
    }

    /// A successful allocation of a device pool: live from `t`.
    pub fn allocated(&self, base: u64, seg: LiveSegment, t: u64) -> Result<(), RegionWriteError> {
        lock(&self.live).insert(base, seg);
        self.file.append(&record_line(RecordOp::Add, base, &seg, t))
    }

    /// Before a free is forwarded: the segment at `base`, taken out of the
    /// live set (so a concurrent allocation that reuses the address after
    /// the free is not confused with it). `None`: not a recorded segment.
    pub fn take(&self, base: u64) -> Option<LiveSegment> {
        lock(&self.live).remove(&base)
    }

    /// The free failed: the segment is still live.
    pub fn restore(&self, base: u64, seg: LiveSegment) {
        lock(&self.live).insert(base, seg);
    }

    /// The free succeeded: the segment stopped being live at `t` (taken
    /// before the free was forwarded).
    pub fn freed(&self, base: u64, seg: LiveSegment, t: u64) -> Result<(), RegionWriteError> {
        self.file.append(&record_line(RecordOp::Del, base, &seg, t))
    }
}

/// The process's producer state (one recorder per process, so one archive).
static STATE: OnceLock<HsaRegions> = OnceLock::new();

fn state(r: &Recorder) -> &'static HsaRegions {
    STATE.get_or_init(|| HsaRegions::new(r.dir()))
}

/// The exports' hook after a successful `hsa_amd_memory_pool_allocate` of
/// `size` bytes at `base` from `pool`, at `t`.
pub fn on_allocate(
    r: &Recorder,
    pool: u64,
    size: u64,
    base: u64,
    t: u64,
    classify: impl FnOnce() -> PoolClass,
) {
    if base == 0 || size == 0 {
        return;
    }
    let st = state(r);
    let (class, first) = st.pool_class(pool, classify);
    let device = match class {
        PoolClass::Device(d) => d,
        PoolClass::Host => return,
        PoolClass::Unknown(why) => {
            if first {
                r.warn(&format!(
                    "hsa_amd_memory_pool_allocate: pool {pool:#x} not recorded as device memory: {why}"
                ));
            }
            return;
        }
    };
    let seg = LiveSegment { size, device, pool };
    if let Err(e) = st.allocated(base, seg, t) {
        r.warn(&format!("region record of {base:#x} lost: {}", chain(&e)));
    }
}

/// The exports' hook before `hsa_amd_memory_pool_free(base)` is forwarded.
pub fn on_free_begin(r: &Recorder, base: u64) -> Option<LiveSegment> {
    state(r).take(base)
}

/// The exports' hook after it: `ok` when the free succeeded; `t` from before.
pub fn on_free_end(r: &Recorder, base: u64, seg: LiveSegment, t: u64, ok: bool) {
    let st = state(r);
    if !ok {
        st.restore(base, seg);
        return;
    }
    if let Err(e) = st.freed(base, seg, t) {
        r.warn(&format!("region record of {base:#x} lost: {}", chain(&e)));
    }
}

/// Makes the records durable; called when the archive is finished.
pub fn sync() {
    if let Some(st) = STATE.get() {
        st.file.sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::region_record::{RegionKind, RegionOp, load_region_file, read_region_ndjson};
    use std::error::Error as _;

    fn seg(device: u32) -> LiveSegment {
        LiveSegment {
            size: 262_144,
            device,
            pool: 0x4870_1002,
        }
    }

    #[test]
    fn the_switch() {
        assert!(!is_on(None));
        assert!(!is_on(Some("".into())));
        assert!(!is_on(Some("0".into())));
        assert!(is_on(Some("1".into())));
        assert!(is_on(Some("yes".into())));
    }

    #[test]
    fn lines_are_region_records_with_the_producer_fields() {
        let line = record_line(RecordOp::Add, 0x7fbe_0140_0000, &seg(1), 42);
        assert_eq!(
            line,
            "{\"op\":\"add\",\"kind\":\"segment\",\"base\":\"0x7fbe01400000\",\"size\":262144,\
             \"device\":1,\"t\":42,\"tag\":4739905,\"producer\":\"hsa\",\"pool\":\"0x48701002\"}\n"
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["producer"], "hsa");
        assert_eq!(v["tag"], TAG);
    }

    #[test]
    fn records_are_on_disk_as_soon_as_they_are_made() {
        let t = tempfile::tempdir().unwrap();
        let st = HsaRegions::new(t.path());
        assert!(
            !st.file().path().exists(),
            "created at the first record only"
        );
        st.allocated(0x1000, seg(0), 10).unwrap();
        st.allocated(0x9000, seg(0), 11).unwrap();
        // No flush, no drop: what a SIGKILL now would leave.
        let recs = read_region_ndjson(st.file().path()).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (
                recs[0].op,
                recs[0].kind,
                recs[0].base,
                recs[0].size,
                recs[0].t,
                recs[0].tag
            ),
            (RegionOp::Add, RegionKind::Segment, 0x1000, 262_144, 10, TAG)
        );
        let taken = st.take(0x1000).unwrap();
        assert!(st.take(0x1000).is_none(), "taken once");
        st.freed(0x1000, taken, 20).unwrap();
        // A failed free puts the segment back; nothing is written.
        let s = st.take(0x9000).unwrap();
        st.restore(0x9000, s);
        assert_eq!(st.take(0x9000), Some(s));
        st.file().sync();
        let s = load_region_file(st.file().path()).unwrap();
        assert!(s.warnings.is_empty());
        assert_eq!(s.records.len(), 3);
        assert_eq!((s.records[2].op, s.records[2].t), (RegionOp::Del, 20));
    }

    #[test]
    fn pools_are_classified_once() {
        let t = tempfile::tempdir().unwrap();
        let st = HsaRegions::new(t.path());
        let mut asked = 0;
        for _ in 0..3 {
            st.pool_class(7, || {
                asked += 1;
                PoolClass::Device(0)
            });
        }
        assert_eq!(asked, 1);
        assert_eq!(
            st.pool_class(8, || PoolClass::Host),
            (PoolClass::Host, true)
        );
        assert_eq!(
            st.pool_class(8, || unreachable!()),
            (PoolClass::Host, false)
        );
    }

    #[test]
    fn an_unwritable_archive_is_an_error_not_a_panic() {
        let t = tempfile::tempdir().unwrap();
        // `regions` is a file: the directory cannot be made.
        std::fs::write(t.path().join("regions"), b"").unwrap();
        let st = HsaRegions::new(t.path());
        let e = st.allocated(0x1000, seg(0), 1).unwrap_err();
        assert!(e.to_string().contains("regions/hsa.ndjson"), "{e}");
        assert!(e.source().is_some(), "the OS error is the cause");
    }
}
