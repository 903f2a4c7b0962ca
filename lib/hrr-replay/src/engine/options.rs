//! `ReplayOptions`: how `hrr-play` asked for a replay.

use std::sync::Arc;

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
}
