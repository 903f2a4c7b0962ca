//! `Guard`: the entry condition of every exported wrapper.
//!
//! - **First level only.** A thread-local depth marks the thread as inside a
//!   recorded call. A runtime that calls its own public entry points (which
//!   the preload interposes too), or the recorder querying the runtime,
//!   reaches a wrapper with the mark set and is forwarded unrecorded.
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
