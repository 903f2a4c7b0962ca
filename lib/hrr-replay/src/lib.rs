//! hrr-replay: the replay engine. It reads an archive through `hrr-core` and
//! dispatches its events onto any [`device::Device`] (the HIP and CUDA backends,
//! or a test device), translating recorded addresses through [`alloc_map`],
//! handles through [`handle_map`], and declared memory through
//! [`region_timeline`]; [`compare`] judges each D2H result. Allocations are
//! placed at their recorded addresses where the device can
//! (`engine::Placement`; backends keep their mappings with [`granules`]).

pub mod alloc_map;
pub mod compare;
pub mod device;
pub mod device_map;
pub mod engine;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod granules;
pub mod graph;
pub mod handle_map;
pub mod launch_thread;
pub mod region_segments;
pub mod region_timeline;
