//! The replay engine: DESIGN.md §5's rules over any [`crate::device::Device`].

mod address_space;
mod blob_cache;
mod code_cache;
mod dev_clock;
mod error;
pub mod launch_check;
#[cfg(any(test, feature = "testkit"))]
pub mod mem_device;
mod options;
mod pinned_host;
mod placement;
mod prefetch;
mod recent_launches;
mod replayer;
pub mod runs;
mod summary;
mod virtual_memory;
pub mod watchdog;

pub use address_space::{AddressSpace, MaterialiseError, PlacementCount, Unmapped};
pub use code_cache::{CodeCache, CodeError};
pub use error::{EventFailure, Operand, RegionsError, ReplayError};
pub use hrr_core::event::arg_offsets;
pub use options::{D2hRecords, ReplayOptions};
pub use pinned_host::PinnedHost;
pub use placement::{Placed, Placement, Reservation, plan as placement_plan, reservations};
pub use replayer::{LaunchPointer, PauseHook, Paused, Replayer};
pub use summary::{
    CopyTiming, D2hMismatch, D2hRecord, KernelTiming, NondeterministicD2h, ReplaySummary,
};
pub use virtual_memory::{Mapped, Physical, VirtualMemory};

use crate::region_timeline::RegionTimeline;
use hrr_core::archive::Archive;
use hrr_core::error_chain::chain;
use hrr_core::region_record::RegionRecord;

/// Loads the archive's region sidecars (`regions/*.ndjson`, `regions/*.hrrr`),
/// torn tails recovered with warnings. A sidecar that does not parse is an
/// error under `strict`, else a warning pushed to `warnings` and the file is
/// left out (loudly: replay may then stop on an unmapped operand).
pub fn load_regions(
    archive: &Archive,
    strict: bool,
    warnings: &mut Vec<String>,
) -> Result<RegionTimeline, RegionsError> {
    let files = archive.try_region_files()?;
    let mut streams: Vec<Vec<RegionRecord>> = Vec::new();
    for path in files {
        match archive.load_region_file(&path) {
            Ok(mut stream) => {
                warnings.extend(stream.warnings.iter().map(|w| w.to_string()));
                if strict && !stream.warnings.is_empty() {
                    let warning = stream.warnings.swap_remove(0);
                    return Err(RegionsError::Recovered { path, warning });
                }
                streams.push(stream.records);
            }
            Err(e) if strict => return Err(e.into()),
            Err(e) => warnings.push(format!("region sidecar left out: {}", chain(&e))),
        }
    }
    Ok(RegionTimeline::new(streams))
}
