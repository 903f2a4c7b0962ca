//! `ReplaySummary`: what a replay did, printed as the stable DESIGN.md §5 lines
//! or as JSON.

use std::fmt;

use serde::Serialize;

use crate::compare::Verdict;
use crate::engine::address_space::PlacementCount;
use hrr_core::hex::BlobId;

/// One D2H whose bytes differ beyond tolerance.
#[derive(Debug, Clone, Default, Serialize)]
pub struct D2hMismatch {
    /// The event's `seq`.
    pub seq: u64,
    /// Its entry point.
    pub api: String,
    /// Bytes copied.
    pub size: u64,
    /// Offset of the first differing byte.
    pub first_diff: Option<u64>,
    /// Bytes that differ.
    pub bytes_differing: u64,
    /// Largest absolute error (0 without an element type).
    pub max_abs: f64,
    /// Largest relative error.
    pub max_rel: f64,
}

/// One D2H result as a replay checked it, kept when
/// [`crate::engine::ReplayOptions::d2h_records`] asks (several replays of
/// one archive are compared through these: [`crate::engine::runs`]).
#[derive(Debug, Clone)]
pub struct D2hRecord {
    /// The event's `seq`.
    pub seq: u64,
    /// For a graph launch's device-to-host node: the node's index.
    pub node: Option<u32>,
    /// Its entry point.
    pub api: String,
    /// Bytes read back.
    pub size: u64,
    /// Hash of the bytes read back.
    pub digest: BlobId,
    /// How they compared with the capture's.
    pub verdict: Verdict,
    /// The details, when they did not match.
    pub mismatch: Option<D2hMismatch>,
    /// The bytes, when they did not match and
    /// [`crate::engine::D2hRecords::FailedBytes`] asked for them.
    pub bytes: Option<Vec<u8>>,
}

/// A D2H whose bytes differ between replays of the same archive
/// (`hrr-play --runs N`): nondeterministic, not a failure unless `--strict`.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct NondeterministicD2h {
    /// The event's `seq`.
    pub seq: u64,
    /// For a graph launch's device-to-host node: the node's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Its entry point.
    pub api: String,
    /// Bytes read back.
    pub size: u64,
    /// Replays that read it back.
    pub runs: u32,
    /// Of those, the replays whose bytes differ from the first replay's.
    pub differing: u32,
}

impl fmt::Display for NondeterministicD2h {
    /// `event SEQ (API)[ node N] size S: D of R runs differ from the first`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {} ({})", self.seq, self.api)?;
        if let Some(n) = self.node {
            write!(f, " node {n}")?;
        }
        write!(
            f,
            " size {}: {} of {} runs differ from the first",
            self.size, self.differing, self.runs
        )
    }
}

/// Per-kernel host-side timing (`--timing`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelTiming {
    /// Kernel name.
    pub name: String,
    /// Launches timed.
    pub launches: u64,
    /// Their total time.
    pub total_ms: f64,
    /// The longest one.
    pub max_ms: f64,
}

/// Bytes moved by replayed copies and the time the device calls took
/// (host wall clock around each call; copies complete before returning).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CopyTiming {
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Time spent in those copies.
    pub h2d_ms: f64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// Time spent in those copies.
    pub d2h_ms: f64,
}

impl CopyTiming {
    fn gbps(bytes: u64, ms: f64) -> f64 {
        if ms > 0.0 {
            bytes as f64 / 1e6 / ms
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
/// What one replay did: the counts `hrr-play` prints and `--json` writes.
pub struct ReplaySummary {
    /// Events read.
    pub events: u64,
    /// Events replayed.
    pub replayed: u64,
    /// Kernels launched.
    pub launches: u64,
    /// Calls that failed at capture and so were not replayed.
    pub skipped_failed: u64,
    /// Launches left out by `--kernel-filter`.
    pub skipped_filtered: u64,
    /// Launches not run under `--continue-on-error` because a pointer
    /// argument could not be translated (the replay then fails).
    pub skipped_untranslatable: u64,
    /// Region sidecar records loaded.
    pub regions_records: u64,
    /// Region sidecar files they came from.
    pub regions_streams: u64,
    /// Declared segments backed with live memory.
    pub region_segs_materialised: u64,
    /// Declared segments that could not be backed.
    pub region_segs_failed: u64,
    /// Allocations placed at their recorded addresses.
    pub placement: PlacementCount,
    /// Each recorded device the replay switched to, and the local device
    /// it ran on (empty when every event ran on device 0).
    pub devices: std::collections::BTreeMap<u32, u32>,
    /// How many times the replay changed the current device.
    pub device_switches: u64,
    /// Argument words the capture did not mark that replay recognised as
    /// pointers (into declared regions, or recorded allocations).
    pub declared_ptrs: u64,
    /// D2H results identical to the capture's.
    pub d2h_exact: u64,
    /// D2H results within tolerance.
    pub d2h_tolerance: u64,
    /// D2H results outside tolerance.
    pub d2h_fail: u64,
    /// D2H events without an expected blob (nothing to compare).
    pub d2h_unchecked: u64,
    /// D2H results whose bytes differ between replays of the archive
    /// (`hrr-play --runs N`; always 0 for one replay).
    pub d2h_nondeterministic: u64,
    /// Each failing D2H.
    pub mismatches: Vec<D2hMismatch>,
    /// Each nondeterministic D2H.
    pub nondeterministic: Vec<NondeterministicD2h>,
    /// Each checked D2H result, when the options asked for them.
    #[serde(skip)]
    pub d2h_records: Vec<D2hRecord>,
    /// Events that failed under `--continue-on-error`.
    pub errors: u64,
    /// What went wrong without stopping replay.
    pub warnings: Vec<String>,
    /// Per-kernel timings (`--timing`).
    pub kernels: Vec<KernelTiming>,
    /// Copy volumes and times.
    pub copies: CopyTiming,
    /// Wall time of the replay.
    pub wall_ms: f64,
    /// Launches were made on a thread of the backend's own
    /// ([`crate::launch_thread`]).
    pub launch_thread: bool,
    /// The archive's `eof` trailer was replayed (it is counted in `events`
    /// and `replayed`, and is none of the application's events).
    #[serde(skip)]
    pub trailer: bool,
}

impl ReplaySummary {
    /// The application's events replayed: [`ReplaySummary::replayed`]
    /// without the `eof` trailer.
    pub fn replayed_events(&self) -> u64 {
        self.replayed - u64::from(self.trailer && self.replayed > 0)
    }

    /// D2H results that passed.
    pub fn d2h_pass(&self) -> u64 {
        self.d2h_exact + self.d2h_tolerance
    }

    /// Whether every D2H passed and no event failed.
    pub fn passed(&self) -> bool {
        self.d2h_fail == 0 && self.errors == 0 && self.skipped_untranslatable == 0
    }
}

impl fmt::Display for ReplaySummary {
    /// The stable, greppable summary lines (without the final PASS/FAIL).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "events : {} read, {} replayed, {} launches",
            self.events, self.replayed, self.launches
        )?;
        if self.skipped_failed > 0 {
            writeln!(f, "skipped : {} failed at capture", self.skipped_failed)?;
        }
        if self.skipped_untranslatable > 0 {
            writeln!(
                f,
                "skipped : {} launches (untranslatable pointer)",
                self.skipped_untranslatable
            )?;
        }
        if self.skipped_filtered > 0 {
            writeln!(f, "filtered : {} launches", self.skipped_filtered)?;
        }
        writeln!(
            f,
            "regions : {} records from {} stream(s)",
            self.regions_records, self.regions_streams
        )?;
        write!(
            f,
            "region segs : {} materialised",
            self.region_segs_materialised
        )?;
        if self.region_segs_failed > 0 {
            write!(f, ", {} failed", self.region_segs_failed)?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "placement : {} of {} allocations at recorded addresses",
            self.placement.placed, self.placement.allocations
        )?;
        if self.device_switches > 0 {
            let on: Vec<String> = self
                .devices
                .iter()
                .map(|(r, l)| format!("{r} on local {l}"))
                .collect();
            writeln!(
                f,
                "devices : {} ({} switches)",
                on.join(", "),
                self.device_switches
            )?;
        }
        write!(
            f,
            "d2h : {} pass ({} exact, {} within tolerance), {} fail",
            self.d2h_pass(),
            self.d2h_exact,
            self.d2h_tolerance,
            self.d2h_fail
        )?;
        if self.d2h_nondeterministic > 0 {
            write!(f, ", {} nondeterministic", self.d2h_nondeterministic)?;
        }
        writeln!(f)?;
        if self.errors > 0 {
            writeln!(f, "errors : {}", self.errors)?;
        }
        Ok(())
    }
}

impl fmt::Display for CopyTiming {
    /// The `--timing` line for copies.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "copies : h2d {} bytes in {:.3} ms ({:.2} GB/s), d2h {} bytes in {:.3} ms ({:.2} GB/s)",
            self.h2d_bytes,
            self.h2d_ms,
            Self::gbps(self.h2d_bytes, self.h2d_ms),
            self.d2h_bytes,
            self.d2h_ms,
            Self::gbps(self.d2h_bytes, self.d2h_ms)
        )
    }
}
