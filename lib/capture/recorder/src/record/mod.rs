//! Family-agnostic recording: the capture state with one method per recorded
//! call ([`recorder`]) and what events need to know — live allocations
//! ([`live_allocs`]), code objects and kernels ([`code_objects`], keyed with
//! [`handle_hasher`]), launch arguments ([`kernel_args`]) and the launch
//! lines they make ([`event_line`]: arguments scanned for pointers, the
//! launch-head cache), the repeat-launch path ([`launch_memo`]), host
//! memory kernels read and write ([`host_memory`]) and the host functions
//! that may write it ([`host_funcs`]), 2D/3D copies
//! ([`rect`]), memory pools ([`pools`]) and executable graphs
//! ([`graph_execs`], read back by [`graph_walk`]), the device each call ran
//! on ([`current_device`]), capture windows
//! ([`window`]) and the archives the recorder writes (`out`).

pub mod arrays;
pub mod code_objects;
pub mod communicators;
pub mod current_device;
pub mod event_line;
pub mod graph_execs;
pub mod graph_walk;
pub mod handle_hasher;
pub mod host_funcs;
// Reads the tracked host ranges themselves (see its `track`).
#[allow(unsafe_code)]
pub mod host_memory;
pub mod kernel_args;
pub mod launch_memo;
pub mod live_allocs;
pub(crate) mod out;
pub mod pools;
pub mod recorder;
pub mod rect;
pub mod window;
