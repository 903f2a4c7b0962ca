//! Command line of `hrr-cap`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Which runtime family the application uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    /// Detect from the runtime library the application loads.
    Auto,
    /// HIP (ROCm's libamdhip64, or hrr's CPU runtime): detected the same way.
    Hip,
    /// CUDA (libcudart): recorded by the CUDA family of the capture library.
    Cuda,
}

/// Record an application's GPU runtime calls (HIP or CUDA) into an hrr archive.
#[derive(Debug, Parser)]
#[command(
    name = "hrr-cap",
    version,
    trailing_var_arg = true,
    after_help = "Exit status: the application's own (128+S when signal S killed it); 74 when \
                  the application succeeded but a blob of the archive is missing or not what \
                  its name says (the archive is marked incomplete); 2 when hrr-cap could not \
                  run the application."
)]
pub struct Args {
    /// Archive directory to create (default: hrr-<app>-<UTC time>.hrr).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub platform: PlatformArg,
    /// Also record device memory the application takes straight from HSA
    /// memory pools (hsa_amd_memory_pool_allocate/free) as region records in
    /// DIR/regions/hsa.ndjson, so replay needs no hand-made sidecar for it.
    #[arg(long)]
    pub hsa_regions: bool,
    /// Do not check the archive's blobs after the application ends. By
    /// default every blob file is hashed and every blob an event names is
    /// looked for; a missing or corrupt one marks the archive incomplete
    /// and, when the application succeeded, makes the exit status 74.
    #[arg(long)]
    pub no_verify: bool,
    /// Keep the finished archive's events plain (`events.ndjson`) instead of
    /// compressing them to `events.ndjson.zst` (as `HRR_EVENTS=plain` does).
    #[arg(long)]
    pub plain: bool,
    /// Record only windows of the run: `profiler` (cudaProfilerStart,
    /// cuProfilerStart or hipProfilerStart to the matching stop),
    /// `launches:A..B` (the A-th to the B-th kernel launch, 0-based,
    /// inclusive) or `signal[:NAME]` (SIGUSR2, or the signal named, opens
    /// a window at the next kernel launch; the next one closes it). The
    /// first window goes to DIR, the K-th to NAME-wK.hrr beside it.
    #[arg(long, value_name = "SPEC", value_parser = parse_window)]
    pub window: Option<hrr_core::window::WindowSpec>,
    /// The application and its arguments (after `--`).
    #[arg(required = true, num_args = 1.., value_name = "APP ARGS")]
    pub command: Vec<OsString>,
}

fn parse_window(s: &str) -> Result<hrr_core::window::WindowSpec, String> {
    hrr_core::window::WindowSpec::parse(s).map_err(|e| e.to_string())
}
