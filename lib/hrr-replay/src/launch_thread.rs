//! `LaunchThread`: a backend's kernel launches made on a thread of their own,
//! so that the replay thread prepares the next events while the runtime takes
//! the last launch.
//!
//! A replayed launch costs the runtime a few microseconds of host time, and
//! the replay thread's own work per launch (reading the event, translating
//! its pointers, packing its arguments) came on top of it, in series. Here
//! the two overlap: [`LaunchThread::push`] copies the assembled launch into
//! a ring and returns; the launch thread makes the runtime calls in order.
//!
//! Order is kept by one rule, which the backend applies: before any other
//! runtime call it calls [`LaunchThread::wait`], which returns once every
//! queued launch has been made. The runtime therefore sees the calls in the
//! recorded order, from two threads that never call it at the same time.
//!
//! A launch that fails is reported by the next `wait` (or `push`), as a
//! [`DeviceError::Deferred`] naming the launch's event; the launches queued
//! after it are dropped, not made.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use hrr_core::event::LaunchAttr;

use crate::device::{DeviceError, Handle, Launch, LaunchArg, packed};
use crate::engine::watchdog::Progress;

/// Launches queued at most: about a millisecond of the runtime's time, enough
/// to ride out the replay thread's slower events without holding much memory.
pub const CAPACITY: usize = 256;

/// Idle polls of the launch thread before it parks (a few hundred
/// microseconds): a replay between two bursts of launches rarely waits longer.
const IDLE_SPINS: u32 = 4096;

/// What makes the launches on the launch thread: the backend's own launch,
/// over a copy of what it needs of the runtime.
pub trait Launcher: Send + 'static {
    /// Runs once on the launch thread before its first launch (to make the
    /// replay's context current there).
    fn bind(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }
    /// Makes `device` current on the launch thread, before the first
    /// launch queued after [`LaunchThread::select`] asked for it. The
    /// default has one device.
    fn select(&mut self, device: u32) -> Result<(), DeviceError> {
        if device == 0 {
            Ok(())
        } else {
            Err(DeviceError::Call {
                call: "select_device",
                code: -1,
                message: format!("the launch thread has one device; device {device} was asked for"),
            })
        }
    }
    /// Makes one launch.
    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError>;
}

/// A launch in the ring: [`Launch`]'s parts, owned.
struct Queued {
    event: u64,
    /// The device it is made on.
    device: u32,
    func: Handle,
    grid: [u32; 3],
    block: [u32; 3],
    shmem: u32,
    stream: Handle,
    args: Vec<u8>,
    attrs: Vec<LaunchAttr>,
}

/// What both threads see.
#[derive(Default)]
struct Shared {
    /// Launches made (or dropped after a failure), written by the launch thread.
    done: CachePadded<AtomicU64>,
    /// The launch thread is parked, or about to: `push` unparks it.
    parked: CachePadded<AtomicBool>,
    /// How many times `push` unparked the launch thread (rare: after an idle
    /// spell); the tests read it.
    wakes: AtomicU64,
    /// A launch failed; later ones are dropped until `wait` reports it.
    failed: AtomicBool,
    /// The replay is over: the launch thread ends once the ring is empty.
    stop: AtomicBool,
    /// The failure, with its event.
    error: Mutex<Option<DeviceError>>,
}

/// The replay thread's end of the launch thread. Dropping it waits for the
/// queued launches and ends the thread.
pub struct LaunchThread {
    ring: rtrb::Producer<Queued>,
    /// Argument buffers the launch thread is done with, to reuse.
    spare: rtrb::Consumer<Vec<u8>>,
    /// Launches pushed.
    sent: u64,
    /// The device the next launches are made on ([`LaunchThread::select`]).
    device: u32,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl LaunchThread {
    /// Starts the launch thread over `launcher`; it marks each launch it
    /// makes in `progress`, for the watchdog.
    pub fn start(
        launcher: impl Launcher,
        progress: Option<Arc<Progress>>,
    ) -> std::io::Result<LaunchThread> {
        let (ring, rx) = rtrb::RingBuffer::new(CAPACITY);
        let (back, spare) = rtrb::RingBuffer::new(CAPACITY);
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("hrr-launch".into())
            .spawn({
                let shared = shared.clone();
                move || run(launcher, rx, back, &shared, progress.as_deref())
            })?;
        Ok(LaunchThread {
            ring,
            spare,
            sent: 0,
            device: 0,
            shared,
            thread: Some(thread),
        })
    }

    /// `Device::launch_thread` for a backend that keeps its launch thread in
    /// `slot`: `on` starts one over `launcher()` if none runs (a thread that
    /// cannot start is `call`'s error), off stops it, waiting for its
    /// launches. Returns whether one runs.
    pub fn switch<L: Launcher>(
        slot: &mut Option<LaunchThread>,
        on: bool,
        call: &'static str,
        launcher: impl FnOnce() -> L,
        progress: Option<&Arc<Progress>>,
    ) -> Result<bool, DeviceError> {
        match (on, slot.take()) {
            (true, None) => {
                let thread = LaunchThread::start(launcher(), progress.cloned());
                *slot = Some(thread.map_err(|e| DeviceError::Backend {
                    call,
                    source: Box::new(e),
                })?);
            }
            (true, running) => *slot = running,
            (false, Some(q)) => q.stop()?,
            (false, None) => {}
        }
        Ok(slot.is_some())
    }

    /// Queues launch `l` and returns; waits only while the ring is full. An
    /// earlier launch's failure is returned instead.
    pub fn push(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        if self.shared.failed.load(Ordering::Relaxed) {
            self.wait()?;
        }
        let mut args = self.spare.pop().unwrap_or_default();
        args.extend_from_slice(&packed(l.args));
        let mut job = Queued {
            event: l.event,
            device: self.device,
            func: l.func,
            grid: l.grid,
            block: l.block,
            shmem: l.shmem,
            stream: l.stream,
            args,
            attrs: l.attrs.to_vec(),
        };
        loop {
            match self.ring.push(job) {
                Ok(()) => break,
                Err(rtrb::PushError::Full(back)) => {
                    job = back;
                    // Full means a millisecond of launches ahead: sleeping
                    // keeps this thread off the ring's indices meanwhile.
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }
        self.sent += 1;
        // The push's store must be visible before `parked` is read, or a
        // launch thread parking right now would sleep past this launch.
        fence(Ordering::SeqCst);
        if self.shared.parked.load(Ordering::SeqCst)
            && let Some(t) = &self.thread
        {
            self.shared.wakes.fetch_add(1, Ordering::Relaxed);
            t.thread().unpark();
        }
        Ok(())
    }

    /// The launches queued from now on are made on `device` (the backend's
    /// current device changed; the launch thread follows it, in order).
    pub fn select(&mut self, device: u32) {
        self.device = device;
    }

    /// Returns once every queued launch has been made; the first that
    /// failed, if one did (the ones after it were dropped).
    pub fn wait(&self) -> Result<(), DeviceError> {
        let mut polls = 0u32;
        while self.shared.done.load(Ordering::Acquire) != self.sent {
            if self.thread.as_ref().is_none_or(|t| t.is_finished()) {
                return Err(DeviceError::Backend {
                    call: "launch",
                    source: "the launch thread ended with launches queued".into(),
                });
            }
            // Polling less often leaves the counter's cache line to the
            // launch thread, which writes it after every launch. A long wait
            // (a full ring, a slow launch) sleeps: spinning would take a core
            // from the runtime's own threads.
            if polls < 1024 {
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
            polls = polls.saturating_add(1);
        }
        if self.shared.failed.load(Ordering::Acquire) {
            let e = self.shared.error.lock().map(|mut e| e.take());
            self.shared.failed.store(false, Ordering::Release);
            if let Ok(Some(e)) = e {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Waits for the queued launches ([`LaunchThread::wait`]) and ends the thread.
    pub fn stop(mut self) -> Result<(), DeviceError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), DeviceError> {
        if self.thread.is_none() {
            return Ok(());
        }
        let waited = self.wait();
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        waited
    }
}

impl Drop for LaunchThread {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The launch thread: launches in ring order until told to stop.
fn run(
    mut launcher: impl Launcher,
    mut rx: rtrb::Consumer<Queued>,
    mut back: rtrb::Producer<Vec<u8>>,
    shared: &Shared,
    progress: Option<&Progress>,
) {
    let mut bound = false;
    let mut device = 0u32;
    let mut done = 0u64;
    loop {
        let Ok(mut job) = rx.pop() else {
            if !idle(&rx, shared) {
                return;
            }
            continue;
        };
        if !shared.failed.load(Ordering::Acquire) {
            let args = [LaunchArg {
                offset: 0,
                bytes: &job.args,
            }];
            let l = Launch {
                event: job.event,
                func: job.func,
                grid: job.grid,
                block: job.block,
                shmem: job.shmem,
                stream: job.stream,
                args: &args,
                attrs: &job.attrs,
            };
            if let Some(p) = progress {
                p.launch_begin(job.event);
            }
            // A panic must not leave the replay thread waiting for a count
            // that never comes: it becomes this launch's error.
            let made = std::panic::catch_unwind(AssertUnwindSafe(|| {
                if !bound {
                    launcher.bind()?;
                    bound = true;
                }
                if job.device != device {
                    launcher.select(job.device)?;
                    device = job.device;
                }
                launcher.launch(&l)
            }))
            .unwrap_or_else(|_| {
                Err(DeviceError::Backend {
                    call: "launch",
                    source: "the launch thread panicked".into(),
                })
            });
            if let Some(p) = progress {
                p.launch_end();
            }
            if let Err(e) = made {
                if let Ok(mut slot) = shared.error.lock() {
                    *slot = Some(DeviceError::Deferred {
                        event: job.event,
                        source: Box::new(e),
                    });
                }
                shared.failed.store(true, Ordering::Release);
            }
        }
        job.args.clear();
        let _ = back.push(job.args);
        done += 1;
        shared.done.store(done, Ordering::Release);
    }
}

/// Waits for the next launch: spins a while, then parks. False: stop.
fn idle(rx: &rtrb::Consumer<Queued>, shared: &Shared) -> bool {
    for _ in 0..IDLE_SPINS {
        if !rx.is_empty() {
            return true;
        }
        std::hint::spin_loop();
    }
    shared.parked.store(true, Ordering::SeqCst);
    // Pairs with `push`'s fence: either it sees `parked`, or this sees its launch.
    fence(Ordering::SeqCst);
    if rx.is_empty() {
        if shared.stop.load(Ordering::SeqCst) {
            return false;
        }
        // The timeout is a backstop only: `push` unparks.
        std::thread::park_timeout(Duration::from_millis(10));
    }
    shared.parked.store(false, Ordering::SeqCst);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Records each launch's function and the thread it ran on; fails the
    /// launch of function `fail`.
    struct Recorder {
        seen: mpsc::Sender<(Handle, Vec<u8>, std::thread::ThreadId)>,
        fail: Handle,
    }

    impl Launcher for Recorder {
        fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
            if l.func == self.fail {
                return Err(DeviceError::Call {
                    call: "cuLaunchKernel",
                    code: 1,
                    message: "invalid value".into(),
                });
            }
            let bytes = packed(l.args).into_owned();
            self.seen
                .send((l.func, bytes, std::thread::current().id()))
                .expect("receiver lives");
            Ok(())
        }
    }

    fn start(
        fail: Handle,
    ) -> (
        LaunchThread,
        mpsc::Receiver<(Handle, Vec<u8>, std::thread::ThreadId)>,
    ) {
        let (seen, rx) = mpsc::channel();
        (
            LaunchThread::start(Recorder { seen, fail }, None).expect("thread"),
            rx,
        )
    }

    fn push(q: &mut LaunchThread, event: u64, func: Handle, byte: u8) -> Result<(), DeviceError> {
        let bytes = [byte; 12];
        let args = [
            LaunchArg {
                offset: 0,
                bytes: &bytes[..4],
            },
            LaunchArg {
                offset: 8,
                bytes: &bytes[4..],
            },
        ];
        q.push(&Launch {
            event,
            func,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            stream: 0,
            args: &args,
            attrs: &[],
        })
    }

    #[test]
    fn launches_are_made_in_order_on_another_thread_with_their_own_arguments() {
        let (mut q, seen) = start(u64::MAX);
        // More than the ring holds, so that `push` also waits for room.
        for i in 0..(3 * CAPACITY as u64) {
            push(&mut q, i, i, i as u8).unwrap();
        }
        q.wait().unwrap();
        let got: Vec<_> = seen.try_iter().collect();
        assert_eq!(
            got.len(),
            3 * CAPACITY,
            "wait returned before every launch was made"
        );
        for (i, (func, bytes, thread)) in got.iter().enumerate() {
            assert_eq!(*func, i as u64);
            let b = i as u8;
            assert_eq!(bytes, &[b, b, b, b, 0, 0, 0, 0, b, b, b, b, b, b, b, b]);
            assert_ne!(*thread, std::thread::current().id());
        }
    }

    #[test]
    fn a_failed_launch_is_reported_by_the_next_wait_naming_its_event_and_later_ones_are_dropped() {
        let (mut q, seen) = start(7);
        push(&mut q, 100, 1, 0).unwrap();
        push(&mut q, 101, 7, 0).unwrap();
        // The failure may already be known here, and then `push` reports it.
        let e = match push(&mut q, 102, 3, 0) {
            Err(e) => e,
            Ok(()) => q.wait().unwrap_err(),
        };
        assert!(
            matches!(e, DeviceError::Deferred { event: 101, .. }),
            "{e:?}"
        );
        assert_eq!(e.call(), "cuLaunchKernel");
        let made: Vec<Handle> = seen.try_iter().map(|(f, ..)| f).collect();
        assert_eq!(made, [1], "the launch after the failed one was made");
        // Reported once; launches after the report are made again.
        push(&mut q, 103, 4, 0).unwrap();
        q.wait().unwrap();
        assert_eq!(seen.try_iter().map(|(f, ..)| f).collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn a_thread_parked_while_idle_wakes_for_the_next_launch() {
        let (mut q, seen) = start(u64::MAX);
        // The thread may also wake by its timeout just as `push` looks, and
        // then needs no unpark: a few tries are each very likely to catch it parked.
        for i in 0..5 {
            while !q.shared.parked.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            push(&mut q, i, i + 1, 0).unwrap();
            q.wait().unwrap();
            assert_eq!(
                seen.try_iter().map(|(f, ..)| f).collect::<Vec<_>>(),
                [i + 1]
            );
        }
        assert!(
            q.shared.wakes.load(Ordering::Relaxed) >= 1,
            "push left the parked thread to its timeout"
        );
    }

    #[test]
    fn stop_waits_for_the_queued_launches() {
        let (mut q, seen) = start(u64::MAX);
        for i in 0..50 {
            push(&mut q, i, i, 0).unwrap();
        }
        q.stop().unwrap();
        assert_eq!(seen.try_iter().count(), 50);
    }
}
