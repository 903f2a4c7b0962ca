//! Command line of `hrr-play`.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use hrr_cli::backend::BackendArgs;
use hrr_replay::device_map::DeviceMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DType {
    Auto,
    F32,
    F16,
    Bf16,
    F64,
}

/// Replay an hrr archive and byte-compare its device-to-host outputs.
#[derive(Debug, Parser)]
#[command(name = "hrr-play", version)]
pub struct Args {
    /// The archive directory (NAME.hrr), or a job: the name a
    /// multi-process run was recorded as (`hrr-cap -o NAME.hrr`, whose
    /// `NAME.job.json` is beside it) or its job file.
    pub archive: PathBuf,
    /// Replay ARCHIVE alone even when it names a job (one process of it).
    #[arg(long)]
    pub no_job: bool,
    /// A job: replay at most N of its processes at once (default: all of
    /// them, as processes that talk to each other need).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Write a replay archive holding the D2H bytes replay read back
    /// (with --repair: where the repaired archive goes).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Leave the -o archive's events and blobs plain (`events.ndjson`)
    /// instead of compressed (`events.ndjson.zst`); also `HRR_EVENTS=plain`.
    #[arg(long)]
    pub plain: bool,
    #[command(flatten)]
    pub device: BackendArgs,
    /// Replay recorded device R on local device L, for each `R=L` (devices
    /// not named keep their number). Several recorded devices may share one
    /// local device: their peer copies become device-to-device copies.
    #[arg(long, value_name = "R=L,…", value_parser = DeviceMap::parse)]
    pub device_map: Option<DeviceMap>,
    /// Print what the archive holds and exit; needs no runtime.
    #[arg(long)]
    pub info: bool,
    /// Print every event and exit; needs no runtime (NDJSON with --json).
    #[arg(long)]
    pub events: bool,
    /// Rewrite a torn or crashed archive as a clean one (in place, or to -o).
    #[arg(long)]
    pub repair: bool,
    /// Launch only kernels whose name contains this string.
    #[arg(long)]
    pub kernel_filter: Option<String>,
    /// Synchronise after every launch and report per-kernel times; with -o,
    /// the replay archive also records each launch, copy and memset with its
    /// device time (`dev_t`, `dev_ns`).
    #[arg(long)]
    pub timing: bool,
    /// Pinned host memory (MiB) for large uploads kept between uses on a GPU
    /// backend; 0 copies straight from the blob files.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub pinned_cache: usize,
    /// Replay the archive N times (benchmarking); D2H is validated every time.
    #[arg(long = "loop", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub loops: u32,
    /// Replay the archive N times (N >= 2) and compare each D2H across the
    /// replays: one whose bytes differ between them is nondeterministic
    /// (counted, named on stderr, not a failure unless --strict); one on
    /// which they agree and the capture does not fails. Agreeing runs do not
    /// prove determinism. With -o, the output holds the first run's D2H.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "loops",
        value_parser = clap::value_parser!(u32).range(2..)
    )]
    pub runs: Option<u32>,
    /// Ignore region sidecars: nothing is materialised.
    #[arg(long)]
    pub no_regions: bool,
    /// Translate every allocation instead of mapping it at its recorded
    /// address (pointers stored inside device memory then go stale).
    #[arg(long)]
    pub no_placement: bool,
    /// Replay GPU graphs node by node, in dependency order, instead of
    /// through the device's graph API (for debugging).
    #[arg(long)]
    pub no_graphs: bool,
    /// Make every launch on the replay thread, in series with its own work,
    /// instead of on a thread of their own (for debugging and comparison).
    #[arg(long)]
    pub no_launch_thread: bool,
    /// The NCCL-API library collectives are replayed through (default: the
    /// backend's: libnccl.so.2 on CUDA, librccl.so.1 on ROCm,
    /// libhrr_nccl_cpu.so beside the CPU runtime); also `HRR_NCCL_LIBRARY`.
    #[arg(long, value_name = "LIB")]
    pub nccl_lib: Option<PathBuf>,
    /// A region sidecar that does not parse is fatal.
    #[arg(long)]
    pub regions_strict: bool,
    /// Report failing events and go on.
    #[arg(long)]
    pub continue_on_error: bool,
    /// Unknown event ops are errors, not warnings; an incomplete capture
    /// fails the replay (exit 1) even with --allow-partial; a capture with
    /// calls the capture library forwarded without recording them (the
    /// manifest's `unrecorded`) is refused (exit 1); with --runs, a
    /// nondeterministic D2H fails; so does a device allocation that could
    /// not be placed at its recorded address.
    #[arg(long)]
    pub strict: bool,
    /// Accept an incomplete capture (killed, disk full, events lost): the
    /// events it holds are replayed and a pass is `PASS (partial: …)`, exit
    /// 0. Without it, such a replay ends `FAIL (partial: …)`, exit 1; so
    /// does one that replayed no event at all, even with it.
    #[arg(long)]
    pub allow_partial: bool,
    /// Seconds without progress (a launch or sync that never returns)
    /// before the replay is stopped with a fatal error; 0 = never.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub watchdog: u64,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Absolute tolerance for floating-point D2H comparison.
    #[arg(long, default_value_t = 0.0)]
    pub atol: f64,
    /// Relative tolerance for floating-point D2H comparison.
    #[arg(long, default_value_t = 0.0)]
    pub rtol: f64,
    /// Element type for tolerant comparison.
    #[arg(long, value_enum, default_value = "auto")]
    pub dtype: DType,
    /// Byte-exact comparison only (ignore --atol/--rtol).
    #[arg(long)]
    pub exact: bool,
}
