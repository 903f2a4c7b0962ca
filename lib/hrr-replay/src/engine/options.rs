//! `ReplayOptions`: how `hrr-play` asked for a replay.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::compare::Tolerance;
use crate::engine::watchdog::Progress;
use hrr_core::event_reader::ReadOptions;

#[derive(Debug, Clone, Default)]
/// How a replay runs (the `hrr-play` flags that shape it).
pub struct ReplayOptions {
    /// How events are read.
    pub read: ReadOptions,
    /// How D2H results are compared.
    pub tolerance: Tolerance,
    /// Load `regions/*` and materialise declared segments (`--no-regions` clears it).
    pub regions: bool,
    /// A region sidecar that does not parse stops the replay instead of being warned about.
    pub regions_strict: bool,
    /// Report a failing event and go on instead of stopping.
    pub continue_on_error: bool,
    /// Launch only kernels whose name contains this.
    pub kernel_filter: Option<String>,
    /// Synchronise after every launch and time it.
    pub timing: bool,
    /// Graphs run node by node in dependency order instead of through the
    /// device's graph API (`--no-graphs`, for debugging).
    pub no_graphs: bool,
    /// Let the backend make launches on a thread of its own, overlapped with
    /// the replay thread's work ([`crate::launch_thread`]); not with
    /// `timing` or `continue_on_error`, which need each launch's outcome at
    /// its event.
    pub launch_thread: bool,
    /// Where the replayer marks each event it starts, for a watchdog.
    pub progress: Option<Arc<Progress>>,
    /// Set (by a signal handler) when the user asked the replay to stop: the
    /// replayer looks at it before each event and stops with
    /// [`crate::engine::ReplayError::Interrupted`].
    pub interrupt: Option<&'static AtomicBool>,
    /// Which local device replays each recorded one (`--device-map`).
    pub device_map: crate::device_map::DeviceMap,
    /// What the summary keeps of each checked D2H, to compare several
    /// replays of one archive ([`crate::engine::runs`]).
    pub d2h_records: D2hRecords,
    /// The NCCL-API library collectives are replayed through (`--nccl-lib`,
    /// `HRR_NCCL_LIBRARY`); `None`: the backend's own
    /// ([`crate::device::Device::collectives_library`]).
    pub collectives_library: Option<std::path::PathBuf>,
    /// Where the processes of a job replay meet to share a communicator's
    /// unique id (`HRR_RENDEZVOUS`, set by `hrr-play JOB` for its
    /// children); `None` outside a job replay.
    pub rendezvous: Option<std::path::PathBuf>,
}

/// What a replay keeps of each D2H result it checks, in
/// [`crate::engine::ReplaySummary::d2h_records`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum D2hRecords {
    /// Nothing (one replay: the counts say it all).
    #[default]
    Off,
    /// Its verdict and a hash of its bytes.
    Digests,
    /// The same, and the bytes of a result that failed against the capture
    /// (runs are then compared with each other within the tolerance).
    FailedBytes,
}
