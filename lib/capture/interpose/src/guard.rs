//! `Guard`: the entry condition of every exported wrapper.
//!
//! - **First level only.** A thread-local depth marks the thread as inside a
//!   recorded call. A runtime that calls its own public entry points (which
//!   the preload interposes too), or the recorder querying the runtime,
//!   reaches a wrapper with the mark set and is forwarded unrecorded.
//! - **A library's own threads are never first level.** A thread started
//!   inside a call of a library that works from threads of its own (NCCL's
//!   proxies; [`inside_library`]), or by such a thread, is marked for good
//!   when it starts (`hrr_interpose::library_threads`): its calls are the
//!   library's, not the application's.
//! - **No panic crosses the FFI boundary.** Recorder work runs under
//!   `catch_unwind`; a panic costs that one event (counted, reported on
//!   stderr by the [`Sink`]), never the application's result.

use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::Sink;

thread_local! {
    // Const, no destructor: usable during TLS teardown too.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Proof that this call is the first level and `S`'s recorder is on.
pub struct Guard<S: Sink> {
    rec: &'static S::Recorder,
    api: &'static str,
    _sink: PhantomData<S>,
}

impl<S: Sink> Guard<S> {
    /// `None`: forward the call without recording (nested call, recording
    /// off, forked child, archive finished).
    pub fn enter(api: &'static str) -> Option<Guard<S>> {
        if !Self::first_level() {
            return None;
        }
        Self::enter_first(api)
    }

    /// Marks the thread as inside a recorded call; `false` when it already
    /// was (a nested call: forward it unrecorded, and leave the mark to its
    /// owner). Tested and set in one access to the thread-local (each is a
    /// `__tls_get_addr` call in this library). Marked before the recorder
    /// is created: its creation must not record anything of its own.
    #[inline(always)]
    pub fn first_level() -> bool {
        DEPTH.with(|d| d.replace(1)) == 0
    }

    /// After [`Guard::first_level`] said `true`: the guard, or `None`
    /// (recording off, forked child, archive finished) with the mark gone.
    pub fn enter_first(api: &'static str) -> Option<Guard<S>> {
        match catch_unwind(S::recorder) {
            Ok(Some(rec)) => Some(Guard {
                rec,
                api,
                _sink: PhantomData,
            }),
            _ => {
                DEPTH.with(|d| d.set(0));
                None
            }
        }
    }

    /// The entry point being recorded.
    pub fn api(&self) -> &'static str {
        self.api
    }

    /// The recorder (for a check before the call; its work runs in
    /// [`Guard::run`]).
    #[inline(always)]
    pub fn recorder(&self) -> &'static S::Recorder {
        self.rec
    }

    /// Runs recorder work; `None` if it panicked (the event is lost, the
    /// application is not affected). Inlined, with the recording it runs,
    /// into each wrapper: on a repeated launch that saves about 70 of the
    /// recorder's ~1 000 instructions and a few stack lines (docs/PERFORMANCE.md),
    /// for about 180 KB more code in the library.
    #[inline]
    pub fn run<T>(&self, f: impl FnOnce(&'static S::Recorder) -> T) -> Option<T> {
        let rec = self.rec;
        let r = S::timed(self.api, || catch_unwind(AssertUnwindSafe(|| f(rec))));
        match r {
            Ok(v) => Some(v),
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                // Reporting may itself panic (stderr closed): swallow that too.
                let _ = catch_unwind(AssertUnwindSafe(|| S::lose(rec, self.api, &msg)));
                None
            }
        }
    }
}

impl<S: Sink> Drop for Guard<S> {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(0));
    }
}

/// Takes back the mark of a [`Guard::first_level`] call that records
/// nothing.
pub fn unmark() {
    DEPTH.with(|d| d.set(0));
}

// ------------------------------------------------------------ library threads

thread_local! {
    // Calls of a library whose threads are its own, in progress on this
    // thread (see `inside_library`).
    static LIBRARY: Cell<u32> = const { Cell::new(0) };
    // This thread was started by such a library.
    static LIBRARY_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a call into a library that does device work of its own from
/// threads it starts (NCCL's and RCCL's proxy threads): a thread started
/// meanwhile on this thread is the library's
/// ([`starting_library_thread`]). Marking the call itself first level is
/// the caller's business (its guard).
#[inline]
pub fn inside_library<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            LIBRARY.with(|l| l.set(l.get().saturating_sub(1)));
        }
    }
    LIBRARY.with(|l| l.set(l.get() + 1));
    let _leave = Leave;
    f()
}

/// Whether a thread this thread starts now belongs to a library (see
/// [`inside_library`]): started from inside one of its calls, or by one
/// of its threads.
pub fn starting_library_thread() -> bool {
    LIBRARY.with(Cell::get) > 0 || LIBRARY_THREAD.with(Cell::get)
}

/// Makes the current thread, just started, a library's: every call it
/// makes is nested for good (first level never), so nothing it does is
/// recorded as the application's; its own threads are the library's too.
pub fn become_library_thread() {
    LIBRARY_THREAD.with(|t| t.set(true));
    DEPTH.with(|d| d.set(1));
}
