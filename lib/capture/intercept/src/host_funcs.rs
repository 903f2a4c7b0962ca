//! Host functions and stream callbacks the application enqueues, run
//! through a trampoline of this library so that the recorder knows when
//! each has run (`hrr_recorder::record::host_funcs`): a launch's snapshot
//! of host memory waits for those enqueued before it, and so sees what
//! they wrote. The trampoline calls the application's function with the
//! application's data, on the runtime's thread, in the stream's order: the
//! program sees nothing different.

use std::ffi::{c_int, c_void};

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
