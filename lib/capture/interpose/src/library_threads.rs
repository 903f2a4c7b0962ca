//! `pthread_create`, interposed so that a thread a library starts from
//! inside one of its calls (or from one of its own threads) is the
//! library's: see [`guard::inside_library`](crate::guard::inside_library).
//! Any other thread is started exactly as asked, through the next
//! definition; a library thread starts at a trampoline that marks it
//! ([`guard::become_library_thread`](crate::guard::become_library_thread))
//! and then runs the routine it was given. Cost: one thread-local read per
//! thread started.

use std::ffi::c_void;

/// `void *(*)(void *)`.
pub type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

/// `pthread_create`'s C type.
pub type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    StartRoutine,
    *mut c_void,
) -> libc::c_int;

/// What a library thread's trampoline runs.
struct Start {
    routine: StartRoutine,
    arg: *mut c_void,
}

extern "C" fn library_thread(p: *mut c_void) -> *mut c_void {
    // SAFETY: `p` is the `Start` `create` leaked for this thread, taken once.
    let start = unsafe { Box::from_raw(p.cast::<Start>()) };
    crate::guard::become_library_thread();
    (start.routine)(start.arg)
}

/// `pthread_create` through `real`, the next definition.
///
/// # Safety
/// `pthread_create`'s contract for the arguments.
pub unsafe fn create(
    real: PthreadCreate,
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
) -> libc::c_int {
    if !crate::guard::starting_library_thread() {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { real(thread, attr, routine, arg) };
    }
    let start = Box::into_raw(Box::new(Start { routine, arg }));
    // SAFETY: the caller's thread and attributes; the trampoline takes
    // `start` back.
    let ret = unsafe { real(thread, attr, library_thread, start.cast()) };
    if ret != 0 {
        // SAFETY: no thread was started: `start` is still ours.
        drop(unsafe { Box::from_raw(start) });
    }
    ret
}

/// Defines `pthread_create` in the expanding library (the preloaded one).
#[macro_export]
macro_rules! pthread_create_export {
    () => {
        /// `pthread_create`, interposed (see `hrr_interpose::library_threads`).
        ///
        /// # Safety
        /// As glibc's `pthread_create`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn pthread_create(
            thread: *mut ::libc::pthread_t,
            attr: *const ::libc::pthread_attr_t,
            routine: $crate::library_threads::StartRoutine,
            arg: *mut ::std::ffi::c_void,
        ) -> ::libc::c_int {
            match $crate::real!(pthread_create: $crate::library_threads::PthreadCreate) {
                // SAFETY: the caller's arguments, under pthread_create's contract.
                Some(real) => unsafe {
                    $crate::library_threads::create(real, thread, attr, routine, arg)
                },
                None => ::libc::EAGAIN,
            }
        }
    };
}
