//! How a replay that cannot finish still leaves its output archive right.
//!
//! Three threads may end an `hrr-play` process: the replay thread (the
//! normal way: it finishes or abandons the `-o` archive and prints the
//! summary), the watchdog (a runtime call that never returns), and the
//! interrupt watcher (SIGINT or SIGTERM while the replay thread is stuck in
//! such a call). Whoever [`claim`]s the end first does it; the others stand
//! down, so the verdict is printed once.
//!
//! The replay engine writes each D2H line of the `-o` archive to disk as it
//! validates it, so a thread that ends the process around a stuck runtime
//! call only has to mark the manifest: [`mark_stopped`].
//!
//! Signals: the first SIGINT or SIGTERM sets [`INTERRUPTED`], which the
//! replayer reads before each event (it then stops like a fatal event,
//! exit 128 + the signal). A replay stuck in one runtime call never gets to
//! the next event, so the watcher thread gives it [`GRACE`] and then ends
//! the process itself. A second signal has its default effect.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::time::Duration;

use hrr_core::archive_writer::EVENTS_FILE;
use hrr_core::blob_store::{BLOBS_DIR, BlobStore};
use hrr_core::manifest::{INCOMPLETE_FIELD, Manifest, ManifestError};

/// Set by the first SIGINT or SIGTERM.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Which signal set it.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Write end of the pipe that wakes the watcher thread (-1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// 0 while nobody ends the process; 1 once someone does.
static ENDING: AtomicU8 = AtomicU8::new(0);

/// How long an interrupted replay has to stop by itself before the watcher
/// ends the process around it.
pub const GRACE: Duration = Duration::from_secs(2);

/// Claims the end of the process for the calling thread: `true` for the
/// first caller only.
pub fn claim() -> bool {
    ENDING
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// For a thread that lost [`claim`]: another thread is ending the process.
pub fn wait_for_the_end() -> ! {
    loop {
        std::thread::park();
    }
}

/// The exit status of a replay stopped by the signal that set
/// [`INTERRUPTED`]: 128 + its number, as a shell reports it.
pub fn interrupted_status() -> u8 {
    128u8.saturating_add(SIGNAL.load(Ordering::Relaxed).clamp(0, 127) as u8)
}

/// Marks the replay archive at `dir` as stopped: `complete:false`, `reason`
/// in `incomplete`, the counts of what is on disk. For a thread that ends
/// the process while the replay thread owns the archive's writer.
pub fn mark_stopped(dir: &Path, reason: &str) -> Result<(), ManifestError> {
    let mut m = Manifest::read(dir)?;
    let lines = std::fs::read(dir.join(EVENTS_FILE))
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
        .unwrap_or(0);
    m.complete = false;
    m.events = lines;
    m.blobs = BlobStore::new(dir.join(BLOBS_DIR))
        .list()
        .map_or(0, |l| l.len() as u64);
    m.extra.insert(INCOMPLETE_FIELD.into(), reason.into());
    m.write_atomic(dir)
}

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::Relaxed);
    INTERRUPTED.store(true, Ordering::Release);
    let fd = WAKE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: write(2) is async-signal-safe; `byte` outlives the call
        // and the descriptor is the pipe's write end, never closed.
        unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    }
}

/// Installs the SIGINT and SIGTERM handlers and starts the watcher thread,
/// which calls `stuck(signal)` when the replay has not stopped [`GRACE`]
/// after a signal (`stuck` is expected to end the process).
pub fn watch_signals(stuck: impl FnOnce(i32) + Send + 'static) -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_end, write_end] = fds;
    WAKE.store(write_end, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("hrr-interrupt".into())
        .spawn(move || {
            let mut byte = 0u8;
            loop {
                // SAFETY: reads one byte into `byte` from the pipe's read
                // end, which this thread owns and never closes.
                let n = unsafe { libc::read(read_end, (&raw mut byte).cast(), 1) };
                if n == 1 || INTERRUPTED.load(Ordering::Acquire) {
                    break;
                }
                if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
            std::thread::sleep(GRACE);
            stuck(SIGNAL.load(Ordering::Relaxed));
        })?;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid value to fill in.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // The second signal has its default effect (ends the process).
        sa.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
        // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: installs a handler that only stores atomics and calls
        // write(2), both async-signal-safe; `sa` is fully initialised.
        if unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
    use hrr_core::manifest::{ArchiveKind, Platform};

    #[test]
    fn a_stopped_archive_says_why_and_counts_what_is_on_disk() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("r.hrr");
        let mut w = ArchiveWriter::create(
            &dir,
            ArchiveKind::Replay,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        let id = w.put_blob(b"abcd").unwrap();
        let e = hrr_core::Event {
            seq: 3,
            t: 1,
            tid: 1,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op: hrr_core::Op::Memcpy {
                dst: hrr_core::Addr(0x1000),
                src: hrr_core::Addr(0x7f00_0000_0000),
                size: 4,
                dir: hrr_core::event::Dir::D2h,
                stream: None,
                blob: Some(id),
            },
        };
        w.append(&e).unwrap();
        w.flush().unwrap();
        // The process ends around the writer: it is never finished.
        std::mem::forget(w);
        mark_stopped(&dir, "the replay stopped: event 4 (x): no progress").unwrap();
        let a = hrr_core::archive::Archive::open(&dir).unwrap();
        let m = a.manifest();
        assert_eq!((m.complete, m.events, m.blobs), (false, 1, 1));
        assert_eq!(
            a.incomplete_reason().as_deref(),
            Some("the replay stopped: event 4 (x): no progress")
        );
    }
}
