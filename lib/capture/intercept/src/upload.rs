//! A synchronous upload's source hashed while the copy runs, on the
//! recorder's pool, instead of after it (`Recorder::forward_h2d`): for a
//! 256 MiB pinned copy the hash took several times the copy's own time.
//! Only memory the runtime allocated or registered is read before the
//! call's success proves it valid: the recorder knows it is mapped.

/// Forwards a synchronous H2D copy of `size` bytes from `src` with `call`,
/// exactly once, its source hashed meanwhile when it lies in host memory
/// the runtime allocated or registered (`Recorder::forward_h2d`); the
/// call's result and that hash, for `Recorder::memcpy_hashed`.
///
/// # Safety
/// `call` is the copy's call with the application's arguments, `src` and
/// `size` its source operand.
pub unsafe fn forward_h2d<R: Copy>(
    g: &crate::capture::Guard,
    src: *const std::ffi::c_void,
    size: usize,
    call: impl FnOnce() -> R,
) -> (R, Option<hrr_recorder::record::recorder::Prehashed>) {
    let mut call = Some(call);
    let mut ret = None;
    let pre = g
        .run(|r| {
            if !r.is_host_range(src as u64, size) {
                return None;
            }
            // SAFETY: the range lies in live host memory the runtime
            // allocated or registered, mapped until the program frees it,
            // which it cannot do while its thread waits in this call
            // (another thread freeing the source of a copy in flight races
            // the program's own call). Only read, as the copy reads it.
            let bytes = unsafe { hrr_interpose::call_args::bytes(src, size) };
            let forward = || {
                let v = (call.take().expect("called once"))();
                ret = Some(v);
                v
            };
            r.forward_h2d(bytes, forward).1
        })
        .flatten();
    match (ret, call) {
        (Some(v), _) => (v, pre),
        // The recorder gave up before the call: made here.
        (None, Some(c)) => (c(), None),
        (None, None) => unreachable!("a forwarded call returns its result"),
    }
}
