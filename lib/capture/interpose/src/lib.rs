//! The interposition machinery of `libhrr_intercept.so`, shared by its
//! families and knowing none of them: when a wrapper records ([`guard`]),
//! how it reaches the next definition ([`real_fn`], [`dl`]), how a
//! family's signature table becomes exported wrappers ([`exports`]), how a
//! wrapper reads the arguments and out-parameters of the call it forwarded
//! ([`call_args`]), which calls it forwards without recording
//! ([`unrecorded`], [`count_stubs`]), and what the process's end, fatal
//! signals and `fork` do to a capture ([`process_exit`], [`fatal_signals`],
//! [`fork_policy`], [`no_capture_note`]); `dlsym` itself, answered for a
//! family ([`dlsym_hook`]).
//!
//! It never names the recorder. It reaches it through [`Sink`], which the
//! preloaded library (`hrr-intercept`) implements: a wrapper's guard is a
//! `Guard<S>` for that one `S`, so every call into the recorder is resolved
//! at compile time (no indirect call on a wrapper's path).
//!
//! The exported C entry points themselves (`_exit`, `_Exit`, `dlsym`, the
//! families' wrappers) are made by macros expanded in the preloaded
//! library: a program linking this crate interposes nothing.
//!
//! `unsafe` is denied crate-wide and allowed per module where it is the
//! point: reading the application's memory, calling or finding C
//! functions, signal handlers, machine code.

#![deny(unsafe_code)]

// Reads the application's memory on the word of a call the runtime accepted.
#[allow(unsafe_code)]
pub mod call_args;
// Machine code and the counters it increments.
#[allow(unsafe_code)]
pub mod count_stubs;
// `dlsym`, `dladdr` and `dlopen` behind safe functions.
#[allow(unsafe_code)]
pub mod dl;
// The `dlsym` trampoline (a naked function) and its macro.
#[allow(unsafe_code)]
pub mod dlsym_hook;
// The macros that make exported C entry points, and forwarding through them.
#[allow(unsafe_code)]
pub mod exports;
// A signal handler and `sigaction`.
#[allow(unsafe_code)]
pub mod fatal_signals;
// `pthread_atfork`.
#[allow(unsafe_code)]
pub mod fork_policy;
pub mod guard;
// `pthread_create`, and the trampoline a library's threads start at.
#[allow(unsafe_code)]
pub mod library_threads;
pub mod no_capture_note;
// `exit_group`, and the macro that makes `_exit`, `_Exit` and a `.fini_array`
// entry.
#[allow(unsafe_code)]
pub mod process_exit;
// Addresses from `dlsym` called as functions.
#[allow(unsafe_code)]
pub mod real_fn;
pub mod unrecorded;

// For the exported macros, whatever the expanding crate imports.
#[doc(hidden)]
pub use api_table as __api_table;

/// The recorder as the machinery needs it, implemented by the preloaded
/// library for its recorder: made on first use, handed to the wrappers'
/// recording work, told about panics, signals, `fork` and the process's
/// end. All associated functions: one implementation per process, called
/// through a type parameter (`Guard<S>`), so statically.
pub trait Sink: 'static {
    /// What recording work is handed ([`guard::Guard::run`]).
    type Recorder: Sync + 'static;

    /// The process's recorder, created at the first recorded call; `None`
    /// when this process does not record (no archive asked for, a forked
    /// child, the archive finished or not creatable).
    fn recorder() -> Option<&'static Self::Recorder>;

    /// An event lost: recording work for `api` panicked (`why`).
    fn lose(rec: &Self::Recorder, api: &str, why: &str);

    /// Runs `f`, the recording work of a call to `api`, timed where the
    /// recorder profiles itself.
    #[inline(always)]
    fn timed<T>(api: &'static str, f: impl FnOnce() -> T) -> T {
        let _ = api;
        f()
    }

    /// Whether this process created a recorder (at exit: one that did not
    /// leaves `hrr-cap` a note, [`no_capture_note`]).
    fn recorded() -> bool;

    /// Writes what is buffered, from a fatal-signal handler: only
    /// async-signal-safe calls, and nothing in a child that shares the
    /// recording process's memory (`vfork`).
    fn flush_from_signal();

    /// Finishes the archive as the process ends by `api` (`exit`, `_exit`,
    /// `_Exit`); only in the process that created it, and once.
    fn finish(api: &'static str, exit: Exit);

    /// In a forked child, before it runs code of its own: the child is not
    /// recorded.
    fn forked();
}

/// How the process ends, for [`Sink::finish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit()` or a return from `main`: after every `atexit` handler;
    /// locks may be waited for.
    Normal,
    /// `_exit()` / `_Exit()`, possibly from a signal handler: a lock held
    /// by this very thread must not be waited for, only tried.
    Immediate,
}
