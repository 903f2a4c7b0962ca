//! Host functions and stream callbacks the application enqueues, run
//! through a trampoline of this library so that the recorder knows when
//! each has run (`hrr_recorder::record::host_funcs`): a launch's snapshot
//! of host memory waits for those enqueued before it, and so sees what
//! they wrote. The trampoline calls the application's function with the
//! application's data, on the runtime's thread, in the stream's order: the
//! program sees nothing different.
//!
//! A graph's host node runs at every launch of the graph: its trampoline
//! ([`wrap_graph_host_fn`]) is made once, when the node is, and first has
//! the recorder read the host side of the device-to-host copies before it
//! (`graph_execs::host_node_runs`), which the application's function may
//! rewrite, as NVIDIA's simpleCudaGraphs does.

use std::ffi::{c_int, c_void};

use hrr_interpose::call_args::bytes;
use hrr_recorder::record::graph_execs;
use hrr_recorder::record::host_funcs::HOST_FUNCS;

/// A host function (`void (*)(void *)`).
pub type HostFn = unsafe extern "C" fn(*mut c_void);
/// A stream callback (`void (*)(stream, status, void *)`).
pub type Callback = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);

/// What the trampoline calls.
enum Target {
    Host(HostFn),
    Callback(Callback),
}

/// One enqueued call: the application's function and data, and the
/// recorder's ticket.
struct Call {
    target: Target,
    data: *mut c_void,
    ticket: u64,
}

/// `(trampoline, its data)` in place of host function `f` with `data`.
pub fn wrap_host_fn(f: HostFn, data: *mut c_void) -> (HostFn, *mut c_void) {
    (host_fn_trampoline, boxed(Target::Host(f), data))
}

/// `(trampoline, its data)` in place of stream callback `f` with `data`.
pub fn wrap_callback(f: Callback, data: *mut c_void) -> (Callback, *mut c_void) {
    (callback_trampoline, boxed(Target::Callback(f), data))
}

fn boxed(target: Target, data: *mut c_void) -> *mut c_void {
    let ticket = HOST_FUNCS.enqueued();
    Box::into_raw(Box::new(Call {
        target,
        data,
        ticket,
    }))
    .cast()
}

/// Whether `f` is this library's host-function trampoline.
pub fn is_host_fn_trampoline(f: Option<HostFn>) -> bool {
    f.is_some_and(|f| f as usize == host_fn_trampoline as HostFn as usize)
}

/// Whether `f` is this library's callback trampoline.
pub fn is_callback_trampoline(f: Option<Callback>) -> bool {
    f.is_some_and(|f| f as usize == callback_trampoline as Callback as usize)
}

/// The runtime refused the call whose trampoline data is `data`: the
/// trampoline never runs.
///
/// # Safety
/// `data` came from [`wrap_host_fn`] or [`wrap_callback`] and was handed
/// to a call that failed.
pub unsafe fn refused(data: *mut c_void) {
    // SAFETY: per the contract, our box, which nothing else will take.
    let call = unsafe { Box::from_raw(data.cast::<Call>()) };
    HOST_FUNCS.ran(call.ticket);
}

unsafe extern "C" fn host_fn_trampoline(p: *mut c_void) {
    // SAFETY: the runtime hands back the data of `wrap_host_fn`, once.
    let call = unsafe { Box::from_raw(p.cast::<Call>()) };
    if let Target::Host(f) = call.target {
        // SAFETY: the application's function with the application's data,
        // as it enqueued them.
        unsafe { f(call.data) };
    }
    HOST_FUNCS.ran(call.ticket);
}

unsafe extern "C" fn callback_trampoline(stream: *mut c_void, status: c_int, p: *mut c_void) {
    // SAFETY: the runtime hands back the data of `wrap_callback`, once.
    let call = unsafe { Box::from_raw(p.cast::<Call>()) };
    if let Target::Callback(f) = call.target {
        // SAFETY: the application's callback with the runtime's stream and
        // status and the application's data.
        unsafe { f(stream, status, call.data) };
    }
    HOST_FUNCS.ran(call.ticket);
}

/// A graph host node's function and data, for as long as any graph may hold
/// the node (never freed: graphs are copied, cloned and instantiated with
/// the node's parameters).
struct GraphHostFn {
    f: HostFn,
    data: *mut c_void,
}

/// `(trampoline, its data)` in place of a graph host node's function `f`
/// with `data`.
pub fn wrap_graph_host_fn(f: HostFn, data: *mut c_void) -> (HostFn, *mut c_void) {
    let node = Box::leak(Box::new(GraphHostFn { f, data }));
    (graph_host_trampoline, (node as *mut GraphHostFn).cast())
}

/// The id the recorder knows a graph host node's trampoline by, when `f`
/// (with `data`) is one.
pub fn graph_host_fn_id(f: Option<HostFn>, data: *mut c_void) -> Option<u64> {
    f.filter(|f| *f as usize == graph_host_trampoline as HostFn as usize)
        .map(|_| data as u64)
}

unsafe extern "C" fn graph_host_trampoline(p: *mut c_void) {
    // SAFETY: the driver hands back the data of `wrap_graph_host_fn`, a
    // leaked box that is never freed.
    let node = unsafe { &*p.cast::<GraphHostFn>() };
    // SAFETY: the host sides of the copies this node depends on, which
    // have completed: the application's memory, as its copies wrote it.
    graph_execs::host_node_runs(p as u64, |ptr, n| unsafe {
        bytes(ptr as *const c_void, n as usize)
    });
    // SAFETY: the application's function with the application's data.
    unsafe { (node.f)(node.data) };
}
