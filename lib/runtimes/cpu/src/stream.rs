//! Streams (in-order queues, one worker thread each) and events.

use crate::exec::{KernArgs, Pool};
use crate::ffi::{Dim3, HipError, err};
use crate::memory::{raw_copy, raw_fill};
use crate::module::Function;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A kernel launch, fully resolved.
pub struct LaunchOp {
    /// The kernel.
    pub func: Arc<Function>,
    /// The handle the application named it by (a `hipFunction_t`, or a
    /// registered host stub's address), which a captured launch's graph
    /// node reports back.
    pub handle: usize,
    /// Grid dimensions, in blocks.
    pub grid: Dim3,
    /// Block dimensions, in threads.
    pub block: Dim3,
    /// Dynamic shared memory, in bytes.
    pub shmem: usize,
    /// The argument segment.
    pub args: KernArgs,
}

/// One unit of stream work. Built only through the constructors below, whose
/// contracts make [`Op::run`] sound.
pub struct Op(Kind);

// Launches dominate and carry their argument segment inline (no allocation).
#[allow(clippy::large_enum_variant)]
enum Kind {
    Copy {
        dst: usize,
        src: usize,
        len: usize,
    },
    Fill {
        dst: usize,
        value: u32,
        count: usize,
        width: u8,
    },
    Launch(LaunchOp),
    Record {
        event: Arc<Event>,
        generation: u64,
    },
    Wait {
        event: Arc<Event>,
        generation: u64,
    },
    Host {
        func: hip_api::graph::HostFn,
        data: usize,
    },
}

/// What a stream op is, handed to stream capture, which turns it into a
/// graph node instead of running it.
// Moved once per captured op: the inline launch is fine, as in `Kind`.
#[allow(clippy::large_enum_variant)]
pub enum Captured {
    /// A copy.
    Copy {
        /// Destination.
        dst: usize,
        /// Source.
        src: usize,
        /// Bytes.
        len: usize,
    },
    /// A fill.
    Fill {
        /// Destination.
        dst: usize,
        /// Pattern.
        value: u32,
        /// Elements.
        count: usize,
        /// Element width in bytes.
        width: u8,
    },
    /// A launch.
    Launch(LaunchOp),
    /// A host function.
    Host {
        /// The function.
        func: hip_api::graph::HostFn,
        /// Its argument.
        data: usize,
    },
    /// An event record or wait (captured by the callers, before they
    /// touch the event: nothing of these reaches capture).
    Event,
}

impl Op {
    /// A copy of `len` bytes.
    ///
    /// # Safety
    /// Both ranges must stay valid until the op has run (device operands checked
    /// against the live allocations; host operands are the application's contract).
    pub unsafe fn copy(dst: usize, src: usize, len: usize) -> Op {
        Op(Kind::Copy { dst, src, len })
    }

    /// A fill of `count` elements of `width` bytes.
    ///
    /// # Safety
    /// `[dst, dst + count*width)` must stay valid writable memory until the op has run.
    pub unsafe fn fill(dst: usize, value: u32, count: usize, width: u8) -> Op {
        Op(Kind::Fill {
            dst,
            value,
            count,
            width,
        })
    }

    /// A kernel launch.
    ///
    /// # Safety
    /// `l.args` must hold the kernel's argument segment as its metadata lays it
    /// out; the kernel's memory accesses are the application's contract.
    pub unsafe fn launch(l: LaunchOp) -> Op {
        Op(Kind::Launch(l))
    }

    /// Marks `event`'s record `generation` done when reached.
    pub fn record(event: Arc<Event>, generation: u64) -> Op {
        Op(Kind::Record { event, generation })
    }

    /// Waits for `event`'s record `generation`.
    pub fn wait(event: Arc<Event>, generation: u64) -> Op {
        Op(Kind::Wait { event, generation })
    }

    /// A host function called with `data` (`hipLaunchHostFunc`, a graph's host node).
    ///
    /// # Safety
    /// `func` must be callable with `data` when the op runs (the application's contract).
    pub unsafe fn host(func: hip_api::graph::HostFn, data: usize) -> Op {
        Op(Kind::Host { func, data })
    }

    /// The op as stream capture records it.
    pub fn into_captured(self) -> Captured {
        match self.0 {
            Kind::Copy { dst, src, len } => Captured::Copy { dst, src, len },
            Kind::Fill {
                dst,
                value,
                count,
                width,
            } => Captured::Fill {
                dst,
                value,
                count,
                width,
            },
            Kind::Launch(l) => Captured::Launch(l),
            Kind::Host { func, data } => Captured::Host { func, data },
            Kind::Record { .. } | Kind::Wait { .. } => Captured::Event,
        }
    }

    /// Performs the op, except that an event record is handed back for the caller
    /// to complete once its own bookkeeping shows the op done.
    fn run_deferring_record(&self, pool: &Pool) -> Result<Option<(&Arc<Event>, u64)>, HipError> {
        match &self.0 {
            Kind::Record { event, generation } => Ok(Some((event, *generation))),
            _ => self.run(pool).map(|()| None),
        }
    }

    /// Performs the op on the current thread. A kernel that faults is an
    /// error (`hipErrorIllegalAddress` for a bad access), as on a GPU.
    pub fn run(&self, pool: &Pool) -> Result<(), HipError> {
        match &self.0 {
            // SAFETY: validity of both ranges is the contract of Op::copy.
            Kind::Copy { dst, src, len } => unsafe { raw_copy(*dst, *src, *len) },
            Kind::Fill {
                dst,
                value,
                count,
                width,
            } => {
                // SAFETY: validity of the range is the contract of Op::fill.
                unsafe { raw_fill(*dst, *value, *count, *width) }
            }
            Kind::Launch(l) => {
                // SAFETY: `l.func` keeps the code object loaded; `l.args` is the
                // kernel's argument segment (contract of Op::launch) and lives until
                // `run` returns.
                let r =
                    unsafe { pool.run(l.func.entry, l.grid, l.block, l.shmem, l.args.as_ptr()) };
                return r.map_err(|f| {
                    crate::log!(
                        "kernel {}: {} at address {:#x}; launch abandoned",
                        l.func.meta.name,
                        f.signal_name(),
                        f.addr
                    );
                    f.hip_error()
                });
            }
            Kind::Record { event, generation } => event.complete(*generation),
            Kind::Wait { event, generation } => event.wait_for(*generation),
            // SAFETY: callable with `data` (contract of Op::host).
            Kind::Host { func, data } => unsafe { func(*data as *mut std::ffi::c_void) },
        }
        Ok(())
    }
}

struct Queue {
    ops: VecDeque<Op>,
    submitted: u64,
    completed: u64,
    shutdown: bool,
    error: HipError,
}

/// An in-order queue with its own worker thread.
pub struct Stream {
    /// The flags it was created with.
    pub flags: u32,
    /// The device current at its creation.
    pub device: u32,
    q: Mutex<Queue>,
    work: Condvar,
    done: Condvar,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Stream {
    /// A stream with its worker started.
    pub fn new(flags: u32, pool: Arc<Pool>) -> Result<Arc<Stream>, HipError> {
        let s = Arc::new(Stream {
            flags,
            device: crate::devices::current(),
            q: Mutex::new(Queue {
                ops: VecDeque::new(),
                submitted: 0,
                completed: 0,
                shutdown: false,
                error: 0,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            thread: Mutex::new(None),
        });
        let w = s.clone();
        let h = std::thread::Builder::new()
            .name("hrr-cpu-stream".into())
            .spawn(move || w.worker(&pool))
            .map_err(|_| err::OUT_OF_MEMORY)?;
        *lock(&s.thread) = Some(h);
        Ok(s)
    }

    /// Whether the legacy null stream waits for it.
    pub fn blocking(&self) -> bool {
        self.flags & crate::ffi::STREAM_NON_BLOCKING == 0
    }

    fn worker(&self, pool: &Pool) {
        loop {
            let op = {
                let mut q = lock(&self.q);
                loop {
                    if let Some(op) = q.ops.pop_front() {
                        break op;
                    }
                    if q.shutdown {
                        return;
                    }
                    q = self.work.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let r = catch_unwind(AssertUnwindSafe(|| op.run_deferring_record(pool)));
            let mut q = lock(&self.q);
            q.completed += 1;
            // The first failure is kept for the next synchronisation.
            let failed = match &r {
                Err(_) => Some(err::LAUNCH_FAILURE),
                Ok(Err(e)) => Some(*e),
                Ok(Ok(_)) => None,
            };
            if let Some(e) = failed
                && q.error == 0
            {
                q.error = e;
            }
            drop(q);
            self.done.notify_all();
            // A record completes after the stream counts it done, so that whoever
            // waits on the event then sees the stream idle too.
            if let Ok(Ok(Some((event, generation)))) = r {
                event.complete(generation);
            }
            drop(op);
        }
    }

    /// Queues `op`.
    pub fn enqueue(&self, op: Op) {
        let mut q = lock(&self.q);
        q.ops.push_back(op);
        q.submitted += 1;
        drop(q);
        self.work.notify_one();
    }

    /// Waits for everything submitted so far; returns (and clears) a deferred error.
    pub fn synchronize(&self) -> HipError {
        let mut q = lock(&self.q);
        let target = q.submitted;
        while q.completed < target {
            q = self.done.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        std::mem::take(&mut q.error)
    }

    /// Whether everything queued has run.
    pub fn idle(&self) -> bool {
        let q = lock(&self.q);
        q.completed == q.submitted
    }

    /// Drains the queue and stops the worker.
    pub fn shutdown(&self) {
        self.synchronize();
        lock(&self.q).shutdown = true;
        self.work.notify_all();
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
    }
}

struct EventState {
    requested: u64,
    done: u64,
    time: Option<Instant>,
}

/// A `hipEvent_t`: records are numbered, waiters wait for a number.
pub struct Event {
    /// The flags it was created with.
    pub flags: u32,
    /// The device current at its creation.
    pub device: u32,
    st: Mutex<EventState>,
    cv: Condvar,
}

impl Event {
    /// An event never recorded.
    pub fn new(flags: u32) -> Event {
        Event {
            flags,
            device: crate::devices::current(),
            st: Mutex::new(EventState {
                requested: 0,
                done: 0,
                time: None,
            }),
            cv: Condvar::new(),
        }
    }

    /// Starts a record; the returned generation completes when the stream reaches it.
    pub fn begin_record(&self) -> u64 {
        let mut s = lock(&self.st);
        s.requested += 1;
        s.requested
    }

    /// The generation a waiter must see (the latest record issued).
    pub fn latest(&self) -> u64 {
        lock(&self.st).requested
    }

    /// Marks record `generation` done.
    pub fn complete(&self, generation: u64) {
        let mut s = lock(&self.st);
        if generation > s.done {
            s.done = generation;
            s.time = Some(Instant::now());
        }
        drop(s);
        self.cv.notify_all();
    }

    /// Waits until record `generation` is done.
    pub fn wait_for(&self, generation: u64) {
        let mut s = lock(&self.st);
        while s.done < generation {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits for the latest record.
    pub fn synchronize(&self) {
        let g = self.latest();
        self.wait_for(g);
    }

    /// Whether every record issued is done.
    pub fn is_complete(&self) -> bool {
        let s = lock(&self.st);
        s.done >= s.requested
    }

    /// The time of the latest completed record: `Err(NOT_READY)` while one is
    /// pending, `Err(INVALID_HANDLE)` if never recorded.
    pub fn time(&self) -> Result<Instant, HipError> {
        let s = lock(&self.st);
        if s.requested == 0 {
            return Err(err::INVALID_HANDLE);
        }
        if s.done < s.requested {
            return Err(err::NOT_READY);
        }
        s.time.ok_or(err::INVALID_HANDLE)
    }
}
