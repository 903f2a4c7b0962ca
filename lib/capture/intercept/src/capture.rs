//! The recorder wired into the machinery: [`Capture`], this library's one
//! [`Sink`], and the process's recorder behind it.
//!
//! The recorder is created at the first recorded call ([`global`]), not
//! when the library is loaded: a shell or launcher that never calls a GPU
//! runtime but inherits `LD_PRELOAD` leaves no archive and claims nothing
//! (`hrr_recorder::sink::archive_claim`). Creating it starts what a capture
//! needs beside the calls: the fatal-signal flush, the fork policy and the
//! events' writer thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

use hrr_core::Addr;
use hrr_core::error_chain::chain;
use hrr_core::manifest::VaArena;
use hrr_interpose::{Exit, Sink, dl};
use hrr_recorder::config::Config;
use hrr_recorder::record::recorder::{Closing, Recorder};
use hrr_recorder::self_profile;
use hrr_recorder::sink::event_sink::LockMode;

/// The guard of this library's wrappers: first level only, this recorder.
pub type Guard = hrr_interpose::guard::Guard<Capture>;

/// This library's recorder as the machinery's [`Sink`] (a type with no
/// values: the recorder is the process's, [`global`]).
pub enum Capture {}

impl Sink for Capture {
    type Recorder = Recorder;

    #[inline(always)]
    fn recorder() -> Option<&'static Recorder> {
        global()
    }

    fn lose(rec: &Recorder, api: &str, why: &str) {
        rec.lose(api, why);
    }

    #[inline(always)]
    fn timed<T>(api: &'static str, f: impl FnOnce() -> T) -> T {
        self_profile::timed(api, f)
    }

    fn recorded() -> bool {
        existing().is_some()
    }

    fn flush_from_signal() {
        if let Some(r) = existing() {
            r.flush_from_signal();
        }
    }

    fn finish(api: &'static str, exit: Exit) {
        if let Some(r) = existing() {
            let mode = match exit {
                Exit::Normal => LockMode::Block,
                Exit::Immediate => LockMode::Try,
            };
            r.finish(api, mode, closing);
        }
    }

    fn forked() {
        deactivate();
    }
}

/// What the families and the machinery add to the finished archive's
/// manifest: the HSA region records made durable first, the calls
/// forwarded unrecorded, the driver's address arenas.
pub(crate) fn closing() -> Closing {
    // Region records are written as they happen; make them durable too
    // before the manifest says the archive is complete.
    crate::hsa::regions::sync();
    Closing {
        unrecorded: hrr_interpose::unrecorded::snapshot(),
        fields: hrr_interpose::unrecorded::manifest_fields(),
        va_arenas: hrr_va_arenas::noted()
            .into_iter()
            .map(|a| VaArena {
                base: Addr(a.base),
                size: a.size,
            })
            .collect(),
    }
}

static GLOBAL: OnceLock<Option<Recorder>> = OnceLock::new();
/// Cleared in a forked child.
static ACTIVE: AtomicBool = AtomicBool::new(true);
static SERVICES: Once = Once::new();

/// The process's recorder, created on first use from the environment;
/// `None` when recording is off (no `HRR_OUT`, a forked child, or the
/// archive could not be created — reported once on stderr).
pub fn global() -> Option<&'static Recorder> {
    if !ACTIVE.load(Ordering::Acquire) {
        return None;
    }
    let Some(rec) = GLOBAL.get_or_init(init_from_env).as_ref() else {
        ACTIVE.store(false, Ordering::Release);
        return None;
    };
    SERVICES.call_once(|| start_services(rec));
    ACTIVE.load(Ordering::Acquire).then_some(rec)
}

/// The recorder if one was created, without creating it (exit and signal
/// paths).
pub fn existing() -> Option<&'static Recorder> {
    GLOBAL.get().and_then(Option::as_ref)
}

/// Host memory about to be freed or unregistered is no longer snapshotted
/// (see `hrr_recorder::record::host_memory`): a launch on another thread
/// must not read it once the runtime has given it back. Called before the
/// release is forwarded; a release that then fails leaves it untracked
/// (its later host writes are not recorded).
pub fn untrack_host_memory(ptr: u64) {
    if let Some(r) = existing() {
        r.host_memory().untrack(ptr);
    }
}

/// Stops recording in this process (a forked child).
pub fn deactivate() {
    ACTIVE.store(false, Ordering::Release);
}

/// Path of the library that defines `hipMalloc` after this one: the runtime
/// being recorded (its name tells the platform).
pub fn runtime_path() -> Option<PathBuf> {
    dl::dlsym_next(c"hipMalloc").and_then(|p| dl::object_path(p as usize))
}

fn init_from_env() -> Option<Recorder> {
    let r = std::panic::catch_unwind(|| {
        let config = match Config::from_env() {
            Ok(Some(c)) => c,
            Ok(None) => return None,
            Err(e) => {
                eprintln!("hrr-intercept: not recording: {}", chain(&e));
                return None;
            }
        };
        let runtime = runtime_path();
        match Recorder::from_config(&config, runtime.as_deref()) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("hrr-intercept: not recording: {}", chain(&e));
                None
            }
        }
    });
    r.unwrap_or(None)
}

fn start_services(rec: &'static Recorder) {
    hrr_interpose::fatal_signals::install::<Capture>();
    rec.start_window();
    hrr_interpose::fork_policy::install::<Capture>();
    rec.start_writer();
}
