//! The CUDA driver layer (`cu*`): the one layer every CUDA program reaches,
//! whether through the shared runtime, a static runtime (nvcc's default,
//! cuBLAS's own), or the driver API itself.
//!
//! Three routes lead a program to this library's wrappers:
//! - **exports** (`api`): the wrappers are exported under the driver's
//!   names, so a program linked with `-lcuda` calls them directly;
//! - **`dlsym`** (`hrr_interpose::dlsym_hook` → [`on_dlsym`]): a lookup in
//!   `libcuda.so.1`'s handle of a function wrapped here returns the wrapper
//!   (the runtime's `dlsym(libcuda, "cuGetProcAddress_v2")`, PyTorch's ~90
//!   direct lookups, Triton's launcher);
//! - **`cuGetProcAddress`** (`proc`): the wrapper calls the real one, then
//!   hands out the wrapper of exactly the variant the driver answered
//!   (`routes`), and itself when asked for `cuGetProcAddress` — the runtime
//!   looks up every other driver function through that pointer, and
//!   `cudaGetDriverEntryPoint` goes through it too.
//!
//! A function the program obtains that is not wrapped here goes out as the
//! real function when it has no device effect (`routes::has_no_device_effect`),
//! else as a counting stub (`hrr_interpose::count_stubs`): its calls are counted
//! as unrecorded (`hrr_interpose::unrecorded`).
//!
//! One event per effect: every wrapper enters the shared `Guard`, so a
//! driver call made inside a recorded runtime call (`cudaMalloc` →
//! `cuMemAlloc_v2`) is forwarded unrecorded and the runtime's wrapper's event
//! (with the runtime's name) stands for it. What a program does at the
//! driver level directly, or through a runtime this library does not see
//! (static), is recorded here under the driver's names. Bookkeeping that
//! later launches need — modules, functions, kernels, globals — is kept at
//! any depth (`code`).
//!
//! Layout: [`routes`], [`code`](mod@code) and [`copy_pieces`] are safe, GPU-free logic (unit-tested);
//! `libcuda`, `api`, `proc`, `record`, `rect_pools`, `arrays` and `graphs` are the FFI (left out of unit
//! tests, like the other exports).

pub mod code;
pub mod copy_pieces;
pub mod routes;

// The FFI, each reading the application's arguments or calling the driver:
// the exported entry points (`api`, `proc`), what they record (`record`,
// `rect_pools`, `arrays`, `graphs`), the loaded driver (`libcuda`).
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod api;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod arrays;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod graphs;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod libcuda;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod proc;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod record;
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod rect_pools;

use std::sync::LazyLock;

static CODE: LazyLock<code::DriverCode> = LazyLock::new(code::DriverCode::new);

/// The process's driver-layer modules and functions.
pub fn code() -> &'static code::DriverCode {
    &CODE
}

/// `dlsym(handle, name)` answered `real` (a symbol starting "cu"): what the
/// program gets instead.
#[cfg(not(test))]
pub fn on_dlsym(
    _handle: *mut std::ffi::c_void,
    name: &[u8],
    real: *mut std::ffi::c_void,
) -> *mut std::ffi::c_void {
    let Some(lib) = libcuda::get() else {
        return real;
    };
    let route = lib
        .table
        .route_dlsym(name, real as usize, hrr_interpose::dl::object_base);
    proc::hand_out(name, real, route, "dlsym")
}

/// Without the exports (unit tests) nothing is routed.
#[cfg(test)]
pub fn on_dlsym(
    _handle: *mut std::ffi::c_void,
    _name: &[u8],
    real: *mut std::ffi::c_void,
) -> *mut std::ffi::c_void {
    real
}
