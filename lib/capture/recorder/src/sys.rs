//! The few libc calls the recorder makes, each behind a safe function.
//!
//! Everything here that a fatal-signal handler may call ([`write_all`],
//! [`pread_exact`], [`write_file_renamed`], [`write_file_renamed_with`],
//! [`gettid_raw`], [`yield_now`]) is a direct system-call wrapper: no
//! allocation, no locks, so it stays async-signal-safe.

use std::cell::Cell;
use std::os::fd::RawFd;

thread_local! {
    // Const-initialised and without a destructor: readable at any point of a
    // thread's life, including TLS teardown and signal handlers.
    static TID: Cell<u64> = const { Cell::new(0) };
}

/// The kernel thread id of the caller, cached per thread.
pub fn gettid() -> u64 {
    TID.with(|t| {
        let v = t.get();
        if v != 0 {
            return v;
        }
        let v = gettid_raw();
        t.set(v);
        v
    })
}

/// `gettid(2)` without the cache (async-signal-safe; also right in a
/// `vfork` child, which shares the parent's thread-locals).
pub fn gettid_raw() -> u64 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// An identity of the calling thread that costs no system call and no
/// thread-local lookup (`pthread_self`: the thread pointer, in glibc). It
/// can be compared, not given to the kernel; async-signal-safe in glibc.
pub fn thread_self() -> u64 {
    // SAFETY: pthread_self takes no arguments and cannot fail.
    unsafe { libc::pthread_self() as u64 }
}

/// The CPU's time-stamp counter (x86_64), `None` elsewhere.
#[inline(always)]
pub fn tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC reads a counter; it has no operands in memory.
    return Some(unsafe { std::arch::x86_64::_rdtsc() });
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Whether the kernel keeps its clocks from the TSC (the clocksource it
/// chooses only for an invariant TSC in step across CPUs).
pub fn tsc_is_the_clocksource() -> bool {
    std::fs::read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim_ascii() == b"tsc")
}

/// `getpid(2)`.
pub fn getpid() -> u32 {
    // SAFETY: getpid takes no arguments and cannot fail.
    unsafe { libc::getpid() as u32 }
}

/// CLOCK_MONOTONIC in nanoseconds (the archive's clock, DESIGN.md §4).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Hints the CPU to bring the cache lines of `bytes` in (x86_64; nothing
/// elsewhere). The sink calls it for the room its next line will take: that
/// room was last touched by the writer thread, and fetching it while the
/// application is inside the runtime saves the misses of the next copy
/// (measured on the H200: about 60 ns of a recorded launch).
pub fn prefetch(bytes: &[std::mem::MaybeUninit<u8>]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: PREFETCHT0 is a hint; it never faults or changes memory,
        // and the address is inside a live allocation of ours anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Writes all of `bytes` to `fd` with write(2), retrying on EINTR and short
/// writes. Async-signal-safe. Any other error is `Err(errno)` (`EIO` for a
/// write that made no progress).
pub fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), i32> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe a live slice we borrow.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(libc::EIO);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Fills `dst` from `fd` at `offset` with pread(2), retrying on EINTR and
/// short reads. Async-signal-safe. `Err(errno)` otherwise (`EIO` at the
/// file's end).
pub fn pread_exact(fd: RawFd, mut dst: &mut [u8], mut offset: u64) -> Result<(), i32> {
    while !dst.is_empty() {
        // SAFETY: the pointer and length describe a live slice we borrow
        // mutably.
        let n = unsafe {
            libc::pread(
                fd,
                dst.as_mut_ptr().cast(),
                dst.len(),
                offset as libc::off_t,
            )
        };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(libc::EIO);
        }
        dst = &mut dst[n as usize..];
        offset += n as u64;
    }
    Ok(())
}

/// Writes `data` to a new file `tmp` (mode 0600, never an existing file)
/// and renames it to `path`, in the same directory; both are
/// NUL-terminated. No link is followed, the directory included (it is
/// opened `O_NOFOLLOW` and the file made relative to it); a missing
/// directory is made (mode 0700, one level): the blob store's fan-out
/// directories are made here, off the recording thread, where a `mkdir`
/// cost it tens of microseconds per new one. On failure the temporary is
/// removed. Plain system calls on a buffer of our own only:
/// async-signal-safe.
pub fn write_file_renamed(tmp: &[u8], path: &[u8], data: &[u8]) -> Result<(), i32> {
    write_file_renamed_with(tmp, path, |fd| write_all(fd, data))
}

/// [`write_file_renamed`] of what `fill` writes to the new file's
/// descriptor (open for reading too): renamed to `path` only when `fill`
/// succeeded, else removed (an errno of the file's own making becomes
/// `E::from(errno)`). Async-signal-safe when `fill` is.
pub fn write_file_renamed_with<E: From<i32>>(
    tmp: &[u8],
    path: &[u8],
    fill: impl FnOnce(RawFd) -> Result<(), E>,
) -> Result<(), E> {
    fn split(p: &[u8]) -> Option<(&[u8], &[u8])> {
        let slash = p.iter().rposition(|&b| b == b'/')?;
        (p.last() == Some(&0)).then_some((&p[..slash], &p[slash + 1..]))
    }
    let (Some((dir, tmp_name)), Some((path_dir, name))) = (split(tmp), split(path)) else {
        return Err(E::from(libc::EINVAL));
    };
    if dir != path_dir || dir.is_empty() {
        return Err(E::from(libc::EINVAL));
    }
    let mut dir_c = [0u8; libc::PATH_MAX as usize];
    if dir.len() >= dir_c.len() {
        return Err(E::from(libc::ENAMETOOLONG));
    }
    dir_c[..dir.len()].copy_from_slice(dir);
    let open_dir = || {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `dir_c` is NUL-terminated (zeroed past `dir`) and ours.
        unsafe { libc::open(dir_c.as_ptr().cast(), flags) }
    };
    let mut dfd = open_dir();
    if dfd < 0 && errno() == libc::ENOENT {
        // SAFETY: as above.
        if unsafe { libc::mkdir(dir_c.as_ptr().cast(), 0o700) } != 0 && errno() != libc::EEXIST {
            return Err(E::from(errno()));
        }
        dfd = open_dir();
    }
    if dfd < 0 {
        return Err(E::from(errno()));
    }
    // Read-write: `fill` may read back what it wrote.
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dfd` is the directory just opened; `tmp_name` is
    // NUL-terminated (it ends `tmp`, checked above).
    let fd = unsafe { libc::openat(dfd, tmp_name.as_ptr().cast(), flags, 0o600 as libc::c_uint) };
    let mut r = if fd < 0 {
        Err(E::from(errno()))
    } else {
        fill(fd)
    };
    // SAFETY: `fd` is the descriptor just opened, closed once.
    if fd >= 0 && unsafe { libc::close(fd) } != 0 && r.is_ok() {
        r = Err(E::from(errno()));
    }
    let rename = || {
        // SAFETY: both names are NUL-terminated and relative to `dfd`.
        unsafe { libc::renameat(dfd, tmp_name.as_ptr().cast(), dfd, name.as_ptr().cast()) }
    };
    if r.is_ok() && rename() != 0 {
        r = Err(E::from(errno()));
    }
    if r.is_err() && fd >= 0 {
        // SAFETY: as above.
        unsafe { libc::unlinkat(dfd, tmp_name.as_ptr().cast(), 0) };
    }
    // SAFETY: `dfd` is ours, closed once.
    unsafe { libc::close(dfd) };
    r
}

fn errno() -> i32 {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// `sched_yield(2)` (async-signal-safe).
pub fn yield_now() {
    // SAFETY: no arguments, no memory touched.
    unsafe { libc::sched_yield() };
}

/// Blocks the process-directed asynchronous signals (TERM, INT, HUP, QUIT,
/// USR1, USR2, ALRM) on the calling thread, so the kernel delivers them to
/// an application thread instead (the recorder's writer thread calls this).
pub fn block_async_signals() {
    // SAFETY: an all-zero sigset_t is valid storage; sigemptyset/sigaddset
    // fill it; pthread_sigmask only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGALRM,
        ] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// `fsync(2)`.
pub fn fsync(fd: RawFd) {
    // SAFETY: fsync only takes the descriptor number; a bad one gives EBADF.
    unsafe { libc::fsync(fd) };
}

/// The application's command line, from /proc/self/cmdline.
pub fn argv() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Installs `handler` for signal `signo` (`SA_RESTART`: the application's
/// interrupted system calls go on).
pub fn catch_signal(signo: i32, handler: extern "C" fn(i32)) {
    // SAFETY: an all-zero sigaction is valid storage, filled before use;
    // the handler is async-signal-safe (its caller's contract) and lives
    // for the process.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(signo, &sa, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tid_is_cached_and_per_thread() {
        let main = gettid();
        assert_eq!(main, gettid_raw());
        let other = std::thread::spawn(gettid).join().unwrap();
        assert_ne!(main, other);
    }

    #[test]
    fn a_renamed_file_gets_its_missing_directory_but_never_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let c = |p: std::path::PathBuf| {
            let mut v = p.into_os_string().into_encoded_bytes();
            v.push(0);
            v
        };
        let dir = t.path().join("ab");
        write_file_renamed(&c(dir.join(".tmp-1")), &c(dir.join("blob")), b"x").unwrap();
        assert_eq!(std::fs::read(dir.join("blob")).unwrap(), b"x");
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // Existing: used as it is; no temporary is left.
        write_file_renamed(&c(dir.join(".tmp-2")), &c(dir.join("other")), b"y").unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["blob", "other"]);
        // A link in the directory's place, to a directory or to nothing, is
        // refused, and nothing lands where it points.
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        for (link, to) in [("cd", elsewhere.clone()), ("ef", t.path().join("nowhere"))] {
            let link = t.path().join(link);
            std::os::unix::fs::symlink(&to, &link).unwrap();
            let r = write_file_renamed(&c(link.join(".tmp-3")), &c(link.join("b")), b"z");
            assert!(
                matches!(r, Err(libc::ENOTDIR | libc::ELOOP)),
                "{link:?}: {r:?}"
            );
        }
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert!(!t.path().join("nowhere").exists());
        // Both names in one directory, NUL-terminated.
        let other = t.path().join("other");
        assert_eq!(
            write_file_renamed(&c(dir.join(".tmp-4")), &c(other.join("b")), b"z"),
            Err(libc::EINVAL)
        );
        assert_eq!(
            write_file_renamed(
                dir.join(".tmp-5").as_os_str().as_encoded_bytes(),
                &c(dir.join("c")),
                b"z"
            ),
            Err(libc::EINVAL)
        );
    }

    #[test]
    fn write_all_reports_bad_fd() {
        assert_eq!(write_all(-1, b"x"), Err(libc::EBADF));
        assert!(write_all(-1, b"").is_ok(), "nothing to write is success");
    }
}
