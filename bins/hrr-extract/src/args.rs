//! Command line of `hrr-extract`.

use std::path::PathBuf;

use clap::Parser;
use hrr_cli::backend::BackendArgs;

use crate::select::{Selector, SelectorError};

/// Extract one kernel launch of an hrr archive into a self-contained archive
/// that replays it alone and checks its results byte for byte.
#[derive(Debug, Parser)]
#[command(name = "hrr-extract", version)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["launch", "kernel"])))]
pub struct Args {
    /// The archive directory (NAME.hrr).
    pub archive: PathBuf,
    /// The launch to extract, by the `seq` of its event (`hrr-play --events`).
    #[arg(long, value_name = "SEQ")]
    pub launch: Option<u64>,
    /// The launch to extract, by kernel name (exact match) and 0-based index
    /// among that kernel's launches: `vadd` is `vadd#0`, the first.
    #[arg(long, value_name = "NAME[#N]")]
    pub kernel: Option<String>,
    /// Where the extracted archive goes (must not exist, or be empty).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub device: BackendArgs,
    /// How many hops of pointers stored in device memory to follow from the
    /// launch's arguments (0: the argument allocations only).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub ptr_depth: u32,
    /// Print the summary as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Replay up to the launch with every allocation translated instead of
    /// at its recorded address (as hrr-play --no-placement).
    #[arg(long)]
    pub no_placement: bool,
    /// Leave the extracted archive's events and blobs plain
    /// (`events.ndjson`) instead of compressed; also `HRR_EVENTS=plain`.
    #[arg(long)]
    pub plain: bool,
}

impl Args {
    /// The launch asked for (clap makes exactly one of `--launch` and
    /// `--kernel` present).
    pub fn selector(&self) -> Result<Selector, SelectorError> {
        match (&self.launch, &self.kernel) {
            (Some(seq), _) => Ok(Selector::Seq(*seq)),
            (None, Some(k)) => Selector::parse_kernel(k),
            (None, None) => unreachable!("clap requires --launch or --kernel"),
        }
    }
}
