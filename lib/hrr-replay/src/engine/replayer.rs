//! `Replayer`: dispatches archive events onto a [`Device`].

mod arrays;
mod collectives;
mod graphs;
mod host_memory;
mod pause;
mod pools;
mod rect;
mod relocate;
mod reset;

pub use pause::{LaunchPointer, PauseHook, Paused};

use std::collections::HashMap;
use std::time::Instant;

use crate::alloc_map::Alloc;
use crate::compare::{Verdict, compare};
use crate::device::{Device, DeviceError, Launch, LaunchArg, PoolCall};
use crate::engine::address_space::AddressSpace;
use crate::engine::blob_cache::{self, BlobCache};
use crate::engine::code_cache::CodeCache;
use crate::engine::dev_clock::DevClock;
use crate::engine::error::{EventFailure, Operand, ReplayError};
use crate::engine::launch_check;
use crate::engine::options::{D2hRecords, ReplayOptions};
use crate::engine::pinned_host::PinnedHost;
use crate::engine::prefetch;
use crate::engine::recent_launches::RecentLaunches;
use crate::engine::summary::{D2hMismatch, D2hRecord, KernelTiming, ReplaySummary};
use crate::engine::virtual_memory::VirtualMemory;
use crate::engine::watchdog::FINAL_SYNC;
use crate::handle_map::HandleMap;
use hrr_core::archive::Archive;
use hrr_core::archive_writer::ArchiveWriter;
use hrr_core::error_chain::chain;
use hrr_core::event::{DevTime, Dir, Event, KernelArg, LaunchAttr, MemKind, Op};
use hrr_core::hex::Addr;
use reset::Owned;

/// Events per batch handed from the parser thread, and batches in flight.
const PREFETCH_BATCH: usize = 256;
const PREFETCH_BATCHES: usize = 8;

type EventItem = Result<Event, hrr_core::event_reader::ReadError>;

/// The event reader once the replay loop has the events: here already, or
/// on the parser thread that reads ahead.
enum Parser<R> {
    Done(R),
    Thread(std::thread::JoinHandle<R>),
}

/// One replay of an archive onto a device.
pub struct Replayer<'a> {
    dev: &'a mut dyn Device,
    archive: &'a Archive,
    opts: &'a ReplayOptions,
    space: AddressSpace,
    streams: HandleMap,
    events: HandleMap,
    code: CodeCache,
    blobs: BlobCache,
    /// The caller's: landed blobs outlive one replay (`--loop`).
    pinned: &'a mut PinnedHost,
    summary: ReplaySummary,
    out: Option<&'a mut ArchiveWriter>,
    timings: HashMap<String, KernelTiming>,
    /// Reused scratch for D2H reads and wide memsets.
    scratch: Vec<u8>,
    /// Reused kernarg buffer.
    kernarg: Vec<u8>,
    /// Device times of the operations `--timing` records into `out`.
    clock: DevClock,
    /// CUDA virtual memory: reservations, physical handles, mappings.
    vmm: VirtualMemory,
    /// Module globals entered in the address space: recorded base →
    /// recorded module (they belong to the module, never freed as memory).
    globals: HashMap<u64, u64>,
    /// Launch attributes the device does not honour, warned about once each.
    dropped_attrs: std::collections::BTreeSet<u32>,
    /// Where to pause, if anywhere (see [`Replayer::pause_with`]).
    pause: Option<&'a mut dyn PauseHook>,
    /// Executable graphs (`graph_exec`), by recorded handle.
    graphs: graphs::Graphs,
    /// Memory pools and the allocations made from them.
    pools: pools::Pools,
    /// The events of launches that may still be queued on the launch thread.
    recent_launches: RecentLaunches,
    /// Arrays, texture and surface objects.
    arrays: arrays::Arrays,
    /// Communicators and the NCCL-API library.
    collectives: collectives::Collectives,
    /// The recorded device each allocation, pool, stream and event was
    /// made on (what a `device_reset` frees).
    owners: reset::Owners,
    /// The backend's current (local) device.
    current_device: u32,
    /// How many devices the backend has.
    device_count: u32,
}

impl<'a> Replayer<'a> {
    /// A replay of `archive` onto `dev` over `space`, writing D2H results
    /// to `out` when given.
    pub fn new(
        dev: &'a mut dyn Device,
        archive: &'a Archive,
        opts: &'a ReplayOptions,
        space: AddressSpace,
        out: Option<&'a mut ArchiveWriter>,
        pinned: &'a mut PinnedHost,
    ) -> Replayer<'a> {
        Replayer {
            dev,
            archive,
            opts,
            space,
            streams: HandleMap::new(),
            events: HandleMap::new(),
            code: CodeCache::default(),
            blobs: BlobCache::default(),
            pinned,
            summary: ReplaySummary::default(),
            out,
            timings: HashMap::new(),
            scratch: Vec::new(),
            kernarg: Vec::new(),
            clock: DevClock::default(),
            vmm: VirtualMemory::default(),
            globals: HashMap::new(),
            dropped_attrs: Default::default(),
            pause: None,
            graphs: Default::default(),
            pools: pools::Pools::default(),
            recent_launches: RecentLaunches::default(),
            arrays: arrays::Arrays::default(),
            collectives: collectives::Collectives::default(),
            owners: reset::Owners::default(),
            current_device: 0,
            device_count: 1,
        }
    }

    /// Lets `hook` pause the replay before an event of its choosing; the
    /// replay ends after the pause.
    pub fn pause_with(mut self, hook: &'a mut dyn PauseHook) -> Self {
        self.pause = Some(hook);
        self
    }

    /// Replays every event; `progress` is called with the count done so far.
    pub fn run(mut self, mut progress: impl FnMut(u64)) -> (ReplaySummary, Option<ReplayError>) {
        let start = Instant::now();
        // Each run starts on device 0, whatever an earlier one (`--loop`)
        // left current.
        self.device_count = self.dev.device_count();
        if self.device_count > 1
            && let Err(e) = self.dev.select_device(0)
        {
            return (self.summary, Some(ReplayError::FirstDevice(e)));
        }
        // Regions loaded with `--no-regions` only recognise pointers; they are
        // not reported as in use.
        if self.space.regions_enabled {
            self.summary.regions_records = self.space.regions.records().len() as u64;
            self.summary.regions_streams = self.space.regions.streams() as u64;
        }
        let reader = match self.archive.events(self.opts.read) {
            Ok(r) => r,
            Err(e) => return (self.summary, Some(e.into())),
        };
        // The first batch is parsed here: an archive that fits in it (a
        // short capture, a test, a fuzz input) replays without a thread,
        // whose start and join cost more than such a replay.
        let mut reader = reader;
        let mut first = Vec::with_capacity(PREFETCH_BATCH);
        let mut read_all = false;
        while first.len() < PREFETCH_BATCH {
            let Some(item) = reader.next() else {
                read_all = true;
                break;
            };
            let last = item.is_err();
            first.push(item);
            if last {
                read_all = true;
                break;
            }
        }
        // The rest is parsed one batch ahead on its own thread: on a
        // launch-heavy archive parsing is a third of the engine's per-event
        // time, and it overlaps with the runtime calls of the previous batch.
        // Replayed batches go back to it to be dropped there too: freeing an
        // event's strings and argument buffers is not free either.
        let (parser, rest, recycle) = if read_all {
            (Parser::Done(reader), None, None)
        } else {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<EventItem>>(PREFETCH_BATCHES);
            let (recycle, recycled) = std::sync::mpsc::channel::<Vec<EventItem>>();
            let handle = std::thread::spawn(move || {
                let mut batch = Vec::with_capacity(PREFETCH_BATCH);
                for item in reader.by_ref() {
                    if batch.is_empty() {
                        while let Ok(done) = recycled.try_recv() {
                            drop(done);
                        }
                    }
                    let last = item.is_err();
                    batch.push(item);
                    if (batch.len() == PREFETCH_BATCH || last)
                        && tx
                            .send(std::mem::replace(
                                &mut batch,
                                Vec::with_capacity(PREFETCH_BATCH),
                            ))
                            .is_err()
                    {
                        break;
                    }
                    if last {
                        break;
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
                reader
            });
            (Parser::Thread(handle), Some(rx), Some(recycle))
        };
        if self.opts.launch_thread && !self.opts.timing && !self.opts.continue_on_error {
            match self.dev.launch_thread(true, self.opts.progress.as_ref()) {
                Ok(on) => self.summary.launch_thread = on,
                Err(e) => self.summary.warnings.push(format!(
                    "launches are made on the replay thread: {}",
                    chain(&e)
                )),
            }
        }
        let mut span: Option<(u64, u64)> = None;
        let mut error = None;
        'events: for mut batch in std::iter::once(first).chain(rest.into_iter().flatten()) {
            // The parser ends its batch at a read error and sends nothing
            // after it: reported once the events before it are replayed.
            let read_error = match batch.iter().position(Result::is_err) {
                Some(i) => batch.drain(i..).next().and_then(Result::err),
                None => None,
            };
            // Only events are left in the batch (a read error ends it).
            for (i, event) in batch.iter().flatten().enumerate() {
                // The parser thread wrote the next events' pieces on its own
                // core: fetched now, they are in cache when their turn comes
                // (their pointers, one event ahead of their bytes).
                if let Some(Ok(next)) = batch.get(i + 2) {
                    prefetch::event_top(next);
                }
                if let Some(Ok(next)) = batch.get(i + 1) {
                    prefetch::event_bytes(next);
                }
                span = Some(span.map_or((event.t, event.t), |(a, b)| {
                    (a.min(event.t), b.max(event.t))
                }));
                self.summary.events += 1;
                if let Some(p) = &self.opts.progress {
                    p.enter(event.seq);
                }
                if self
                    .opts
                    .interrupt
                    .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
                {
                    error = Some(ReplayError::Interrupted {
                        seq: event.seq,
                        api: event.api.clone(),
                    });
                    break 'events;
                }
                if self.pause.as_mut().is_some_and(|h| h.pause_before(event)) {
                    self.pause(event);
                    break 'events;
                }
                if let Err(e) = self.step(event) {
                    let e = self.recent_launches.relabel(e);
                    match e {
                        ReplayError::Fatal { .. } if self.opts.continue_on_error => {
                            eprintln!("hrr-play: error: {}", chain(&e));
                            self.summary.errors += 1;
                        }
                        e => {
                            error = Some(e);
                            break 'events;
                        }
                    }
                }
                if self.summary.events.is_multiple_of(1024) {
                    progress(self.summary.events);
                }
            }
            if let Some(recycle) = &recycle {
                let _ = recycle.send(batch);
            }
            if let Some(e) = read_error {
                error = Some(e.into());
                break;
            }
        }
        // The receiver is gone: a parser still reading stops at its next send.
        let reader = match parser {
            Parser::Done(r) => r,
            Parser::Thread(handle) => match handle.join() {
                Ok(r) => r,
                Err(_) => {
                    return (self.summary, Some(ReplayError::ParserPanicked));
                }
            },
        };
        progress(self.summary.events);
        for w in reader.warnings() {
            self.summary.warnings.push(w.to_string());
        }
        self.summary.warnings.extend(self.pinned.take_warning());
        if let Some(p) = &self.opts.progress {
            p.enter(FINAL_SYNC);
        }
        // A launch that failed after the last event's call is reported here.
        if self.summary.launch_thread
            && let Err(e) = self.dev.launch_thread(false, None)
            && error.is_none()
        {
            error = Some(self.recent_launches.relabel(ReplayError::FinalSync(e)));
        }
        if error.is_none()
            && let Err(e) = self.dev.device_sync()
        {
            error = Some(ReplayError::FinalSync(e));
        }
        if let Some((first, last)) = span {
            let outside = self.space.regions.outside_span(first, last);
            if outside > 0 {
                self.summary.warnings.push(format!(
                    "{outside} region record(s) fall outside the archive's event span \
                     [{first}, {last}] ns: is the sidecar from another run or clock?"
                ));
            }
        }
        self.summary.region_segs_materialised = self.space.regions.materialised();
        self.summary.region_segs_failed = self.space.regions.failed();
        self.summary.placement = std::mem::take(&mut self.space.placed);
        self.summary.placement.enabled = self.space.placement.enabled();
        self.summary.wall_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut timings: Vec<KernelTiming> = self.timings.drain().map(|(_, t)| t).collect();
        timings.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
        self.summary.kernels = timings;
        self.teardown();
        (self.summary, error)
    }

    /// Frees what the replay allocated, so `--loop` starts clean.
    fn teardown(&mut self) {
        let _ = self.dev.device_sync();
        self.release_graphs();
        for a in self.space.allocs.iter().copied().collect::<Vec<Alloc>>() {
            if self.vmm.is_reservation(a.base) || self.globals.contains_key(&a.base) {
                continue;
            }
            if self.pools.take_alloc(a.base) {
                let _ = self.dev.pool_call(PoolCall::Free(a.live, 0));
            } else {
                let _ = self.dev.free(a.live, a.mem);
            }
        }
        self.pools_teardown();
        self.owners.clear();
        self.vmm.teardown(self.dev);
        self.globals.clear();
        for (_, s) in self.streams.drain() {
            let _ = self.dev.stream_destroy(s);
        }
        for (_, e) in self.events.drain() {
            let _ = self.dev.event_destroy(e);
        }
        self.code.unload_all(self.dev);
        self.clock.release(self.dev);
    }

    /// `--timing` with a replay archive: device work is timed on the device
    /// and recorded into the archive.
    fn timed(&self) -> bool {
        self.opts.timing && self.out.is_some()
    }

    /// Records a timed launch, copy or memset into the replay archive with
    /// its device time. The archive stays self-contained: a launch's code
    /// object is adopted into it, an upload's source blob is left out.
    fn record_timed(&mut self, e: &Event, dev: Option<DevTime>) -> Result<(), ReplayError> {
        let (Some(out), Some(_)) = (self.out.as_deref_mut(), dev) else {
            return Ok(());
        };
        let mut rec;
        let event = match &e.op {
            Op::Launch { code, .. } => {
                out.adopt_blob(self.archive.blobs(), code)?;
                e
            }
            Op::Memcpy { blob: Some(_), .. } | Op::MemcpyRect { blob: Some(_), .. } => {
                rec = e.clone();
                if let Op::Memcpy { blob, .. } | Op::MemcpyRect { blob, .. } = &mut rec.op {
                    *blob = None;
                }
                &rec
            }
            _ => e,
        };
        Ok(out.append_timed(event, dev)?)
    }

    fn fatal(e: &Event, what: impl Into<EventFailure>) -> ReplayError {
        ReplayError::Fatal {
            seq: e.seq,
            api: e.api.clone(),
            what: Box::new(what.into()),
        }
    }

    /// A device call's failure as event `e`'s fatal error, for `map_err`.
    fn dev_err(e: &Event) -> impl Fn(DeviceError) -> ReplayError + '_ {
        move |err| Self::fatal(e, err)
    }

    /// The shared device-operand path, with the DESIGN.md §5 fatal wording.
    fn device_operand(
        &mut self,
        e: &Event,
        role: Operand,
        addr: Addr,
        len: u64,
    ) -> Result<u64, ReplayError> {
        match self.space.translate_or_materialise(self.dev, addr.0, len) {
            Ok(live) => Ok(live),
            // The start is mapped, the end is not: say so, with the allocation.
            Err(_) if let Some(a) = self.space.allocs.find(addr.0) => Err(Self::fatal(
                e,
                EventFailure::Overrun {
                    role,
                    addr,
                    len,
                    base: a.base,
                    size: a.size,
                },
            )),
            Err(u) => Err(Self::fatal(e, EventFailure::unmapped(role, u))),
        }
    }

    /// A pointer in kernel argument `i` at byte `off`, through the shared path.
    fn arg_pointer(
        &mut self,
        e: &Event,
        i: usize,
        off: usize,
        value: u64,
    ) -> Result<u64, ReplayError> {
        self.space
            .translate_or_materialise(self.dev, value, 0)
            .map_err(|u| {
                let role = Operand::LaunchArg {
                    arg: i,
                    offset: off,
                };
                Self::fatal(e, EventFailure::unmapped(role, u))
            })
    }

    fn stream(&mut self, e: &Event, s: Option<Addr>) -> Result<Option<u64>, ReplayError> {
        match s {
            None => Ok(None),
            Some(s) => self
                .streams
                .get(s.0)
                .map(Some)
                .ok_or_else(|| Self::fatal(e, EventFailure::UnknownStream(s))),
        }
    }

    /// Moves the region timeline to the event's time.
    fn advance_regions(&mut self, e: &Event) {
        for err in self.space.advance_to(self.dev, e.t) {
            self.summary.warnings.push(format!(
                "event {}: freeing a deleted segment: {}",
                e.seq,
                chain(&err)
            ));
        }
    }

    fn step(&mut self, e: &Event) -> Result<(), ReplayError> {
        self.advance_regions(e);
        if e.ret != 0 && !collectives::in_progress(e) {
            // A call that failed at capture did nothing there; it does nothing here.
            self.summary.skipped_failed += 1;
            return Ok(());
        }
        // The call ran on the event's device: its local one is made current.
        let local = self.opts.device_map.local(e.dev);
        // The trailer is no call (its writer says device 0).
        if local != self.current_device && !matches!(e.op, Op::Eof { .. }) {
            self.switch_device(e, e.dev, local)?;
        }
        match &e.op {
            Op::Alloc { ptr, size, mem } => {
                let live = self
                    .space
                    .allocate(self.dev, ptr.0, *size, *mem, || {
                        format!("event {} ({}): {:#x}+{size}", e.seq, e.api, ptr.0)
                    })
                    .map_err(Self::dev_err(e))?;
                let alloc = Alloc {
                    base: ptr.0,
                    size: *size,
                    mem: *mem,
                    live,
                    materialised: false,
                };
                self.space
                    .allocs
                    .insert(alloc)
                    .map_err(|err| Self::fatal(e, err))?;
                self.owners.made(Owned::Alloc, ptr.0, e.dev);
            }
            Op::HostRegister { ptr, size } => {
                let live = self
                    .dev
                    .alloc(*size, MemKind::Pinned)
                    .map_err(Self::dev_err(e))?;
                let alloc = Alloc {
                    base: ptr.0,
                    size: *size,
                    mem: MemKind::Pinned,
                    live,
                    materialised: false,
                };
                self.space
                    .allocs
                    .insert(alloc)
                    .map_err(|err| Self::fatal(e, err))?;
                self.owners.made(Owned::Alloc, ptr.0, e.dev);
            }
            Op::Free { ptr, .. } | Op::HostUnregister { ptr } => {
                if ptr.0 == 0 {
                    return Ok(());
                }
                let a = self
                    .space
                    .allocs
                    .remove(ptr.0)
                    .map_err(|err| Self::fatal(e, err))?;
                self.owners.gone(Owned::Alloc, ptr.0);
                self.release(e, &a)?;
            }
            Op::Memcpy {
                dir,
                dst,
                src,
                size,
                stream,
                blob,
            } => self.memcpy(e, *dir, *dst, *src, *size, *stream, *blob)?,
            Op::Memset {
                dst,
                value,
                size,
                width,
                stream,
            } => {
                let live = self.device_operand(e, Operand::MemsetDst, *dst, *size)?;
                let stream = self.stream(e, *stream)?;
                // Wider patterns are rare; they are written as pattern copies,
                // a bounded chunk at a time (a multiple of 1, 2 and 4, so the
                // pattern stays in phase across chunks).
                const CHUNK: u64 = 1 << 20;
                let pattern_fill = *width > 1;
                if pattern_fill {
                    let pattern = value.to_le_bytes();
                    let w = usize::from((*width).min(4));
                    self.scratch.clear();
                    self.scratch
                        .extend((0..(*size).min(CHUNK) as usize).map(|i| pattern[i % w]));
                }
                let timed = self.timed();
                let scratch = &self.scratch;
                let dev_time = self
                    .clock
                    .around(timed, self.dev, stream, |d| {
                        if !pattern_fill {
                            return d.memset(live, *value as u8, *size, stream);
                        }
                        let mut done = 0;
                        while done < *size {
                            let n = (*size - done).min(CHUNK) as usize;
                            d.copy_h2d(live + done, &scratch[..n], stream)?;
                            done += n as u64;
                        }
                        Ok(())
                    })
                    .map_err(Self::dev_err(e))?;
                self.record_timed(e, dev_time)?;
            }
            Op::Launch {
                name,
                code,
                grid,
                block,
                shmem,
                stream,
                args,
                attrs,
                ..
            } => {
                if let Some(f) = &self.opts.kernel_filter
                    && !name.contains(f.as_str())
                {
                    self.summary.skipped_filtered += 1;
                    return Ok(());
                }
                let dims = (*grid, *block, *shmem);
                if !self.launch(e, name, *code, dims, *stream, args, attrs)? {
                    return Ok(()); // skipped: not replayed
                }
            }
            Op::StreamCreate { stream } => {
                let s = self.dev.stream_create().map_err(Self::dev_err(e))?;
                self.streams.insert(stream.0, s);
                self.owners.made(Owned::Stream, stream.0, e.dev);
            }
            Op::StreamDestroy { stream } => {
                self.owners.gone(Owned::Stream, stream.0);
                if let Some(s) = self.streams.remove(stream.0) {
                    self.dev.stream_destroy(s).map_err(Self::dev_err(e))?;
                }
            }
            Op::StreamSync { stream } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                self.dev.stream_sync(s).map_err(Self::dev_err(e))?;
            }
            Op::StreamWaitEvent { stream, event } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                if let Some(ev) = self.events.get(event.0) {
                    self.dev
                        .stream_wait_event(s, ev)
                        .map_err(Self::dev_err(e))?;
                }
            }
            Op::DeviceSync => self.dev.device_sync().map_err(Self::dev_err(e))?,
            Op::DeviceReset { device } => self.device_reset(e, *device)?,
            Op::EventCreate { event } => {
                let ev = self.dev.event_create().map_err(Self::dev_err(e))?;
                self.events.insert(event.0, ev);
                self.owners.made(Owned::Event, event.0, e.dev);
            }
            Op::EventDestroy { event } => {
                self.owners.gone(Owned::Event, event.0);
                if let Some(ev) = self.events.remove(event.0) {
                    self.dev.event_destroy(ev).map_err(Self::dev_err(e))?;
                }
            }
            Op::EventRecord { event, stream } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                let ev = self
                    .events
                    .get(event.0)
                    .ok_or_else(|| Self::fatal(e, EventFailure::UnknownEvent(*event)))?;
                self.dev.event_record(ev, s).map_err(Self::dev_err(e))?;
            }
            Op::EventSync { event } => {
                if let Some(ev) = self.events.get(event.0) {
                    self.dev.event_sync(ev).map_err(Self::dev_err(e))?;
                }
            }
            // The device an event ran on is its `dev`, made current above
            // (a `set_device` or `ctx_set` carries the device it made
            // current); replay runs in each device's primary context.
            Op::SetDevice { .. }
            | Op::CtxCreate { .. }
            | Op::CtxSet { .. }
            | Op::CtxDestroy { .. } => {}
            Op::VaReserve { ptr, size } => self
                .vmm
                .reserve(self.dev, &mut self.space, ptr.0, *size)
                .map_err(|w| Self::fatal(e, w))?,
            Op::VaFree { ptr, .. } => self
                .vmm
                .free(self.dev, &mut self.space, ptr.0)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemCreate { handle, size, mem } => self
                .vmm
                .create(self.dev, handle.0, *size, *mem)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemRelease { handle } => self
                .vmm
                .release(self.dev, handle.0)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemMap {
                ptr,
                size,
                offset,
                handle,
            } => self
                .vmm
                .map(self.dev, &self.space, ptr.0, *size, *offset, handle.0)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemUnmap { ptr, size } => self
                .vmm
                .unmap(self.dev, &self.space, ptr.0, *size)
                .map_err(|w| Self::fatal(e, w))?,
            // Mappings are made accessible as they are mapped.
            Op::MemAccess { .. } => {}
            Op::MemRetain { ptr, handle } => self
                .vmm
                .retain(ptr.0, handle.0)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemExport { handle, shareable } => self
                .vmm
                .export(handle.0, *shareable)
                .map_err(|w| Self::fatal(e, w))?,
            Op::MemImport { handle, shareable } => self
                .vmm
                .import(handle.0, *shareable)
                .map_err(|w| Self::fatal(e, w))?,
            // The application's host code is not replayed: a no-op at the
            // same place of the stream keeps its order.
            Op::NcclCommInit {
                comm,
                uid,
                nranks,
                rank,
            } => self.nccl_comm_init(e, *comm, uid, *nranks, *rank)?,
            Op::NcclCommSplit {
                parent,
                color,
                key,
                comm,
            } => self.nccl_comm_split(e, *parent, *color, *key, *comm)?,
            Op::NcclCommInitAll { comms, devices } => self.nccl_comm_init_all(e, comms, devices)?,
            Op::NcclCommFinalize { comm } => self.nccl_comm_end(e, *comm, false)?,
            Op::NcclCommDestroy { comm } => self.nccl_comm_end(e, *comm, true)?,
            Op::NcclGroupStart => self.nccl_group(e, true)?,
            Op::NcclGroupEnd => self.nccl_group(e, false)?,
            Op::NcclColl {
                coll,
                src,
                dst,
                count,
                dtype,
                redop,
                root,
                peer,
                comm,
                stream,
            } => self.nccl_coll(
                e,
                coll,
                *src,
                *dst,
                *count,
                *dtype,
                *redop,
                root.or(*peer),
                *comm,
                *stream,
            )?,
            Op::HostFunc { stream } => {
                let stream = self.stream(e, Some(*stream))?.unwrap_or(0);
                self.dev.host_func(stream).map_err(Self::dev_err(e))?;
            }
            Op::MemcpyPeer {
                dst,
                src,
                size,
                stream,
                dst_device,
                src_device,
            } => self.memcpy_peer(e, (*dst, *dst_device), (*src, *src_device), *size, *stream)?,
            Op::PeerAccess { peer } => self.peer_access(e, *peer)?,
            Op::Global {
                module,
                name,
                code,
                ptr,
                size,
            } => self.global(e, module.0, name, *code, ptr.0, *size)?,
            Op::ModuleUnload { module } => {
                // Its globals go with it (modules themselves load lazily).
                let gone: Vec<u64> = self
                    .globals
                    .iter()
                    .filter(|&(_, m)| *m == module.0)
                    .map(|(&b, _)| b)
                    .collect();
                for b in gone {
                    self.globals.remove(&b);
                    let _ = self.space.allocs.remove(b);
                }
            }
            Op::Relocate { dst, size, blob } => self.relocate(e, *dst, *size, *blob)?,
            Op::GraphExec { exec, nodes, .. } => self.graph_exec(e, *exec, nodes)?,
            Op::GraphLaunch {
                exec,
                stream,
                blobs,
            } => self.graph_launch(e, *exec, *stream, blobs)?,
            Op::GraphExecDestroy { exec } => self.graph_exec_destroy(e, *exec)?,
            Op::HostWrite { ptr, size, blob } => self.host_write(e, *ptr, *size, *blob)?,
            Op::HostRead { ptr, size, blob } => self.host_read(e, *ptr, *size, *blob)?,
            Op::MemcpyRect {
                dir,
                dst,
                dpitch,
                src,
                spitch,
                extent,
                stream,
                blob,
            } => self.memcpy_rect(
                e,
                rect::RectCopy {
                    dir: *dir,
                    dst: *dst,
                    dpitch: *dpitch,
                    src: *src,
                    spitch: *spitch,
                    extent: *extent,
                    stream: *stream,
                    blob: *blob,
                },
            )?,
            Op::MemsetRect {
                dst,
                pitch,
                extent,
                value,
                width,
                stream,
            } => self.memset_rect(e, *dst, *pitch, *extent, (*value, *width), *stream)?,
            Op::PoolCreate { pool } => self.pool_create(e, *pool)?,
            Op::PoolDestroy { pool } => self.pool_destroy(e, *pool)?,
            Op::PoolTrim { pool, size } => {
                self.call_pool(e, *pool, |p| PoolCall::Trim(p, *size))?;
            }
            Op::PoolAttr { pool, attr, value } => {
                self.call_pool(e, *pool, |p| PoolCall::SetAttr(p, *attr, *value))?;
            }
            Op::DevicePool { pool, .. } => self.call_pool(e, *pool, PoolCall::SetDevice)?,
            Op::PoolAlloc {
                ptr,
                size,
                pool,
                stream,
            } => self.pool_alloc(e, (*ptr, *size), *pool, *stream)?,
            Op::ArrayCreate {
                array,
                format,
                channels,
                extent,
                flags,
            } => self.array_create(
                e,
                *array,
                crate::device::ArrayDesc {
                    format: *format,
                    channels: *channels,
                    extent: *extent,
                    flags: *flags,
                },
            )?,
            Op::ArrayPlane {
                array,
                parent,
                plane,
            } => self.array_plane(e, *array, *parent, *plane)?,
            Op::MipmapCreate {
                mipmap,
                format,
                channels,
                extent,
                flags,
                levels,
            } => self.mipmap_create(
                e,
                *mipmap,
                crate::device::ArrayDesc {
                    format: *format,
                    channels: *channels,
                    extent: *extent,
                    flags: *flags,
                },
                *levels,
            )?,
            Op::MipmapLevel {
                array,
                mipmap,
                level,
            } => self.mipmap_level(e, *array, *mipmap, *level)?,
            Op::MipmapDestroy { mipmap } => self.mipmap_destroy(e, *mipmap)?,
            Op::ArrayDestroy { array } => self.array_destroy(e, *array)?,
            Op::MemcpyArray {
                dir,
                dst,
                dpitch,
                dpos,
                src,
                spitch,
                spos,
                extent,
                stream,
                blob,
            } => self.memcpy_array(
                e,
                arrays::ArrayCopyEvent {
                    dir: *dir,
                    dst: *dst,
                    dpitch: *dpitch,
                    dpos: *dpos,
                    src: *src,
                    spitch: *spitch,
                    spos: *spos,
                    extent: *extent,
                    stream: *stream,
                    blob: *blob,
                },
            )?,
            Op::TexCreate {
                obj,
                res,
                tex_desc,
                view,
            } => self.object_create(
                e,
                *obj,
                &res.0,
                Some((&tex_desc.0, view.as_ref().map(|v| &v.0[..]))),
            )?,
            Op::SurfCreate { obj, res } => self.object_create(e, *obj, &res.0, None)?,
            Op::TexDestroy { obj } | Op::SurfDestroy { obj } => self.object_destroy(e, *obj)?,
            // Modules load lazily at first launch; nothing to do for these.
            Op::ModuleLoad { .. } | Op::Function { .. } => {}
            Op::Eof { .. } => self.summary.trailer = true,
        }
        self.summary.replayed += 1;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn memcpy(
        &mut self,
        e: &Event,
        dir: Dir,
        dst: Addr,
        src: Addr,
        size: u64,
        stream: Option<Addr>,
        blob: Option<hrr_core::hex::BlobId>,
    ) -> Result<(), ReplayError> {
        let stream = self.stream(e, stream)?;
        let timed = self.timed();
        match dir {
            Dir::H2d => {
                // Only the device destination is translated; `src` is a host pointer.
                let live = self.device_operand(e, Operand::H2dDst, dst, size)?;
                let id = blob.ok_or_else(|| Self::fatal(e, EventFailure::NoSourceBlob))?;
                let store = self.archive.blobs();
                let dev = &mut *self.dev;
                // Large blobs go through pinned memory, as the application's
                // fast copies did; small ones through the blob cache.
                let pinned = if size as usize > blob_cache::MAX_CACHED {
                    self.pinned
                        .blob(|n| dev.host_buffer(n), store, &id, size as usize)
                        .map_err(|err| Self::fatal(e, err))?
                } else {
                    None
                };
                let cached;
                let bytes = match pinned {
                    Some(b) => b,
                    None => {
                        cached = self
                            .blobs
                            .get_sized(store, &id, Some(size))
                            .map_err(|err| Self::fatal(e, err))?;
                        &*cached
                    }
                };
                if bytes.len() as u64 != size {
                    let len = bytes.len() as u64;
                    return Err(Self::fatal(e, EventFailure::BlobSize { id, len, size }));
                }
                let t0 = Instant::now();
                let dev_time = self
                    .clock
                    .around(timed, dev, stream, |d| d.copy_h2d(live, bytes, stream))
                    .map_err(Self::dev_err(e))?;
                self.summary.copies.h2d_ms += t0.elapsed().as_secs_f64() * 1e3;
                self.summary.copies.h2d_bytes += size;
                self.record_timed(e, dev_time)?;
            }
            Dir::D2h => {
                // The host destination is not materialised; only a recorded
                // allocation of the runtime's host memory is translated (below).
                let live = self.device_operand(e, Operand::D2hSrc, src, size)?;
                // The expected bytes must be as long as the read: checked
                // before a buffer of `size` bytes is allocated for it.
                if let Some(id) = blob
                    && let Ok(expected) = self.archive.blobs().size(&id)
                    && expected != size
                {
                    return Err(Self::fatal(
                        e,
                        EventFailure::D2hLength { size, id, expected },
                    ));
                }
                // Large reads land in pinned memory, as the application's fast ones did.
                let dev = &mut *self.dev;
                let mut pinned = if size as usize > blob_cache::MAX_CACHED {
                    self.pinned.lend_d2h(|n| dev.host_buffer(n), size as usize)
                } else {
                    None
                };
                let mut heap = std::mem::take(&mut self.scratch);
                let buf = match pinned.as_deref_mut() {
                    Some(b) => &mut b[..size as usize],
                    None => {
                        heap.clear();
                        heap.resize(size as usize, 0);
                        &mut heap[..]
                    }
                };
                let t0 = Instant::now();
                let r = self
                    .clock
                    .around(timed, dev, stream, |d| d.copy_d2h(buf, live, stream));
                self.summary.copies.d2h_ms += t0.elapsed().as_secs_f64() * 1e3;
                self.summary.copies.d2h_bytes += size;
                let result = r.map_err(Self::dev_err(e)).and_then(|dev_time| {
                    self.land_in_host_memory(e, dst, buf)?;
                    self.check_d2h(e, blob, buf, dev_time)
                });
                if let Some(b) = pinned {
                    self.pinned.give_back(b);
                }
                self.scratch = heap;
                result?;
            }
            Dir::D2d => {
                let d = self.device_operand(e, Operand::D2dDst, dst, size)?;
                let s = self.device_operand(e, Operand::D2dSrc, src, size)?;
                let dev_time = self
                    .clock
                    .around(timed, self.dev, stream, |dev| {
                        dev.copy_d2d(d, s, size, stream)
                    })
                    .map_err(Self::dev_err(e))?;
                self.record_timed(e, dev_time)?;
            }
            // Host to host touches no device state.
            Dir::H2h => {}
        }
        Ok(())
    }

    /// Makes local device `local` (recorded device `recorded`) current for
    /// event `e`.
    #[cold]
    fn switch_device(&mut self, e: &Event, recorded: u32, local: u32) -> Result<(), ReplayError> {
        self.local_device(e, recorded)?;
        self.dev.select_device(local).map_err(Self::dev_err(e))?;
        self.current_device = local;
        self.summary.devices.insert(recorded, local);
        self.summary.device_switches += 1;
        Ok(())
    }

    /// The local device of recorded device `recorded`, which must exist
    /// (hrr-play checks the manifest's devices before the replay; an
    /// archive that does not list them is checked here, event by event).
    fn local_device(&self, e: &Event, recorded: u32) -> Result<u32, ReplayError> {
        let local = self.opts.device_map.local(recorded);
        if local >= self.device_count {
            let why = self
                .opts
                .device_map
                .no_local_device(recorded, local, self.device_count);
            return Err(Self::fatal(e, EventFailure::NoDevice(why)));
        }
        Ok(local)
    }

    /// `peer_access`: the current device may access recorded device
    /// `peer`'s memory, enabled between the devices they map to (a peer
    /// folded onto the current device needs none; enabled already counts as
    /// done, in the backends). Devices of this machine that cannot access
    /// each other are refused, by name, before the copies and kernels that
    /// rely on it.
    fn peer_access(&mut self, e: &Event, peer: i32) -> Result<(), ReplayError> {
        let Ok(peer) = u32::try_from(peer) else {
            return Ok(());
        };
        let local = self.local_device(e, peer)?;
        if local == self.current_device {
            return Ok(());
        }
        if self.dev.can_access_peer(local).map_err(Self::dev_err(e))? == Some(false) {
            return Err(Self::fatal(
                e,
                EventFailure::NoDevice(format!(
                    "device {} cannot access device {local}'s memory on this machine (recorded device {} to device {peer}): no peer access between them",
                    self.current_device, e.dev
                )),
            ));
        }
        self.dev.peer_access(local).map_err(Self::dev_err(e))
    }

    /// `memcpy_peer`: a peer copy between the two sides' local devices, or
    /// a device-to-device copy when both map to one (a side whose device
    /// was not recorded is the event's).
    fn memcpy_peer(
        &mut self,
        e: &Event,
        (dst, dst_device): (Addr, Option<i32>),
        (src, src_device): (Addr, Option<i32>),
        size: u64,
        stream: Option<Addr>,
    ) -> Result<(), ReplayError> {
        let recorded = |d: Option<i32>| d.and_then(|d| u32::try_from(d).ok()).unwrap_or(e.dev);
        let dst_local = self.local_device(e, recorded(dst_device))?;
        let src_local = self.local_device(e, recorded(src_device))?;
        if dst_local == src_local {
            return self.memcpy(e, Dir::D2d, dst, src, size, stream, None);
        }
        let d = self.device_operand(e, Operand::D2dDst, dst, size)?;
        let s = self.device_operand(e, Operand::D2dSrc, src, size)?;
        let stream = self.stream(e, stream)?;
        let timed = self.timed();
        let dev_time = self
            .clock
            .around(timed, self.dev, stream, |dev| {
                dev.copy_peer(d, dst_local, s, src_local, size, stream)
            })
            .map_err(Self::dev_err(e))?;
        self.record_timed(e, dev_time)
    }

    /// Upload source blob `id`, which the event says is `size` bytes: read
    /// through the blob cache and checked to be that long.
    fn source_blob(
        &mut self,
        e: &Event,
        id: hrr_core::hex::BlobId,
        size: u64,
    ) -> Result<blob_cache::BlobBytes, ReplayError> {
        let bytes = self
            .blobs
            .get(self.archive.blobs(), &id)
            .map_err(|err| Self::fatal(e, err))?;
        if bytes.len() as u64 != size {
            let len = bytes.len() as u64;
            return Err(Self::fatal(e, EventFailure::BlobSize { id, len, size }));
        }
        Ok(bytes)
    }

    fn check_d2h(
        &mut self,
        e: &Event,
        blob: Option<hrr_core::hex::BlobId>,
        actual: &[u8],
        dev_time: Option<DevTime>,
    ) -> Result<(), ReplayError> {
        if let Some(out) = self.out.as_deref_mut() {
            let id = out.put_blob(actual)?;
            let mut rec = e.clone();
            match &mut rec.op {
                Op::Memcpy { blob, .. }
                | Op::MemcpyRect { blob, .. }
                | Op::MemcpyArray { blob, .. } => *blob = Some(id),
                Op::HostRead { blob, .. } => *blob = id,
                _ => {}
            }
            out.append_timed(&rec, dev_time)?;
            // On disk at once: a replay that stops later, however it stops
            // (a watchdog or a signal ends the process), keeps every D2H
            // it read back. One write per D2H, beside the blob's file.
            out.flush()?;
        }
        self.check_bytes(e, None, blob, actual)
    }

    /// Compares bytes a D2H read (a copy, a graph's `node`) against the
    /// expected blob, counting the verdict (and keeping it, when the
    /// options ask: [`ReplayOptions::d2h_records`]).
    fn check_bytes(
        &mut self,
        e: &Event,
        node: Option<u32>,
        blob: Option<hrr_core::hex::BlobId>,
        actual: &[u8],
    ) -> Result<(), ReplayError> {
        let Some(id) = blob else {
            self.summary.d2h_unchecked += 1;
            return Ok(());
        };
        let expected = self
            .blobs
            .get_sized(self.archive.blobs(), &id, Some(actual.len() as u64))
            .map_err(|err| Self::fatal(e, err))?;
        if expected.len() != actual.len() {
            return Err(Self::fatal(
                e,
                EventFailure::D2hLength {
                    size: actual.len() as u64,
                    id,
                    expected: expected.len() as u64,
                },
            ));
        }
        let c = compare(&expected, actual, &self.opts.tolerance);
        let mismatch = match c.verdict {
            Verdict::Exact => {
                self.summary.d2h_exact += 1;
                None
            }
            Verdict::WithinTolerance => {
                self.summary.d2h_tolerance += 1;
                None
            }
            Verdict::Mismatch => {
                let m = D2hMismatch {
                    seq: e.seq,
                    api: e.api.clone(),
                    size: actual.len() as u64,
                    first_diff: c.first_diff,
                    bytes_differing: c.bytes_differing,
                    max_abs: c.max_abs,
                    max_rel: c.max_rel,
                };
                self.summary.d2h_fail += 1;
                self.summary.mismatches.push(m.clone());
                Some(m)
            }
        };
        if self.opts.d2h_records != D2hRecords::Off {
            let bytes = (mismatch.is_some() && self.opts.d2h_records == D2hRecords::FailedBytes)
                .then(|| actual.to_vec());
            self.summary.d2h_records.push(D2hRecord {
                seq: e.seq,
                node,
                api: e.api.clone(),
                size: actual.len() as u64,
                digest: hrr_core::hex::BlobId::of(actual),
                verdict: c.verdict,
                mismatch,
                bytes,
            });
        }
        Ok(())
    }

    /// A module global: the replay's copy of the variable stands for the
    /// recorded one, so copies to and from it (`cudaMemcpyToSymbol`)
    /// translate.
    fn global(
        &mut self,
        e: &Event,
        module: u64,
        name: &str,
        code: hrr_core::hex::BlobId,
        ptr: u64,
        size: u64,
    ) -> Result<(), ReplayError> {
        if self.globals.contains_key(&ptr) {
            return Ok(()); // looked up again
        }
        let archive = self.archive;
        let m = self
            .code
            .module(self.dev, code, |id| {
                archive.blobs().get(id).map(|b| b.to_vec())
            })
            .map_err(|source| {
                Self::fatal(
                    e,
                    EventFailure::Global {
                        name: name.to_owned(),
                        source,
                    },
                )
            })?;
        let (live, live_size) = self.dev.global(m, name).map_err(|source| {
            Self::fatal(
                e,
                EventFailure::GlobalLookup {
                    name: name.to_owned(),
                    source,
                },
            )
        })?;
        if live_size != size {
            return Err(Self::fatal(
                e,
                EventFailure::GlobalSize {
                    name: name.to_owned(),
                    live: live_size,
                    size,
                },
            ));
        }
        let alloc = Alloc {
            base: ptr,
            size,
            mem: MemKind::Device,
            live,
            materialised: false,
        };
        self.space
            .allocs
            .insert(alloc)
            .map_err(|err| Self::fatal(e, err))?;
        self.globals.insert(ptr, module);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        e: &Event,
        name: &str,
        code: hrr_core::hex::BlobId,
        (grid, block, shmem): ([u32; 3], [u32; 3], u32),
        stream: Addr,
        args: &[KernelArg],
        attrs: &[LaunchAttr],
    ) -> Result<bool, ReplayError> {
        let stream = self.stream(e, Some(stream))?.unwrap_or(0);
        let platform = self.archive.manifest().platform;
        launch_check::check_launch_grid(platform, grid, block)
            .map_err(|why| Self::fatal(e, why))?;
        let (offsets, end) =
            launch_check::kernarg_layout(args).map_err(|why| Self::fatal(e, why))?;
        let archive = self.archive;
        let func = self
            .code
            .function(self.dev, code, name, |id| {
                archive.blobs().get(id).map(|b| b.to_vec())
            })
            .map_err(|source| {
                let name = name.to_string();
                Self::fatal(e, EventFailure::Kernel { name, source })
            })?;
        // Assemble the kernarg buffer in place (reused across launches),
        // translating every recorded device pointer, top-level or embedded.
        // Sizes and offsets were bounded by `kernarg_layout`.
        let mut kernarg = std::mem::take(&mut self.kernarg);
        kernarg.clear();
        kernarg.resize(end, 0);
        let assembled = self.translate_args(e, args, &offsets, &mut kernarg);
        if let Err(err) = assembled {
            self.kernarg = kernarg;
            // A pointer replay cannot translate: the kernel would run on a
            // capture-time address. Never launched; under
            // --continue-on-error skipped and counted.
            if self.opts.continue_on_error {
                eprintln!("hrr-play: error: {}; launch skipped", chain(&err));
                self.summary.skipped_untranslatable += 1;
                return Ok(false);
            }
            return Err(err);
        }
        let launch_args = [LaunchArg {
            offset: 0,
            bytes: &kernarg,
        }];
        let kept: Vec<LaunchAttr>;
        let attrs = if attrs.iter().all(|a| self.dev.launch_attr_supported(a.id)) {
            attrs
        } else {
            for a in attrs {
                if !self.dev.launch_attr_supported(a.id) && self.dropped_attrs.insert(a.id) {
                    self.summary.warnings.push(format!(
                        "event {} ({}): launch attribute {} is not replayed by this backend; \
                         launches go without it",
                        e.seq, e.api, a.id
                    ));
                }
            }
            kept = attrs
                .iter()
                .filter(|a| self.dev.launch_attr_supported(a.id))
                .cloned()
                .collect();
            &kept
        };
        let launch = Launch {
            event: e.seq,
            func,
            grid,
            block,
            shmem,
            stream,
            args: &launch_args,
            attrs,
        };
        if self.opts.timing {
            let t0 = Instant::now();
            let dev_time = self
                .clock
                .around(self.out.is_some(), self.dev, Some(stream), |d| {
                    d.launch(&launch)
                })
                .map_err(Self::dev_err(e))?;
            self.dev.stream_sync(stream).map_err(Self::dev_err(e))?;
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            let t = self
                .timings
                .entry(name.to_string())
                .or_insert_with(|| KernelTiming {
                    name: name.to_string(),
                    ..KernelTiming::default()
                });
            t.launches += 1;
            t.total_ms += ms;
            t.max_ms = t.max_ms.max(ms);
            self.record_timed(e, dev_time)?;
        } else {
            if self.summary.launch_thread {
                self.recent_launches.note(e);
            }
            self.dev.launch(&launch).map_err(Self::dev_err(e))?;
        }
        self.kernarg = kernarg;
        self.summary.launches += 1;
        Ok(true)
    }
}

impl Replayer<'_> {
    /// Copies each argument into `kernarg` at its offset and translates its
    /// pointers: the ones the capture marked, and unmarked words that point
    /// into recorded or declared memory ([`launch_check::unmarked_pointers`]).
    /// Any pointer that does not translate is an error: the launch must not run.
    fn translate_args(
        &mut self,
        e: &Event,
        args: &[KernelArg],
        offsets: &[u32],
        kernarg: &mut [u8],
    ) -> Result<(), ReplayError> {
        for (i, (arg, &base)) in args.iter().zip(offsets).enumerate() {
            let base = base as usize;
            let bytes = &mut kernarg[base..base + arg.hex.0.len()];
            bytes.copy_from_slice(&arg.hex.0);
            for &off in &arg.ptrs {
                let off = off as usize;
                let value = u64::from_le_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
                if value == 0 {
                    continue;
                }
                let live = self.arg_pointer(e, i, off, value)?;
                bytes[off..off + 8].copy_from_slice(&live.to_le_bytes());
            }
            // Texture and surface objects are handles of the runtime's, not
            // addresses: each maps to the object replay made for it.
            for &off in &arg.objs {
                let off = off as usize;
                let Some(word) = bytes.get(off..off + 8) else {
                    return Err(Self::fatal(
                        e,
                        EventFailure::ArrayShape(format!(
                            "argument {i}: object offset {off} leaves no 8-byte word"
                        )),
                    ));
                };
                let value = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                if value == 0 {
                    continue;
                }
                let live = self
                    .arrays
                    .object(value)
                    .ok_or_else(|| Self::fatal(e, EventFailure::UnknownObject(Addr(value))))?;
                bytes[off..off + 8].copy_from_slice(&live.to_le_bytes());
            }
            let unmarked = launch_check::unmarked_pointers(
                bytes,
                &arg.ptrs,
                &self.space.allocs,
                &self.space.regions,
            );
            for off in unmarked {
                let value = u64::from_le_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
                let live = self.arg_pointer(e, i, off, value)?;
                bytes[off..off + 8].copy_from_slice(&live.to_le_bytes());
                self.summary.declared_ptrs += 1;
            }
        }
        Ok(())
    }
}

/// Replays the archive `b` writes onto `dev` with the default options: the
/// engine's unit tests' run.
#[cfg(test)]
pub(crate) fn replay_built(
    b: hrr_core::testkit::ArchiveBuilder,
    dev: &mut crate::engine::mem_device::MemDevice,
) -> (ReplaySummary, Option<ReplayError>) {
    let t = tempfile::tempdir().unwrap();
    let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
    replay_archive(&archive, dev)
}

/// Replays `archive` onto `dev` with the default options.
#[cfg(test)]
pub(crate) fn replay_archive(
    archive: &Archive,
    dev: &mut crate::engine::mem_device::MemDevice,
) -> (ReplaySummary, Option<ReplayError>) {
    let opts = ReplayOptions::default();
    let mut pinned = PinnedHost::new(0);
    Replayer::new(
        dev,
        archive,
        &opts,
        AddressSpace::default(),
        None,
        &mut pinned,
    )
    .run(|_| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::event::arg_offsets;
    use hrr_core::hex::HexBytes;

    fn arg(size: u32, offset: Option<u32>) -> KernelArg {
        KernelArg {
            offset,
            size,
            hex: HexBytes(vec![0; size as usize]),
            ptrs: vec![],
            objs: Vec::new(),
        }
    }

    use crate::engine::mem_device::MemDevice;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    const DEV: u64 = 0x7f00_0000_0000;

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31) ^ seed)
            .collect()
    }

    /// Replays `b` onto `dev` `loops` times with one `PinnedHost` of
    /// `budget` bytes (as `hrr-play --loop`); the last summary.
    fn replay_loops(
        b: ArchiveBuilder,
        dev: &mut MemDevice,
        budget: usize,
        loops: usize,
    ) -> ReplaySummary {
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let opts = ReplayOptions::default();
        let mut pinned = PinnedHost::new(budget);
        let mut last = None;
        for _ in 0..loops {
            let space = AddressSpace::default();
            let r = Replayer::new(&mut *dev, &archive, &opts, space, None, &mut pinned);
            let (s, e) = r.run(|_| {});
            assert!(e.is_none(), "{e:?}");
            last = Some(s);
        }
        last.expect("at least one loop")
    }

    fn replay(b: ArchiveBuilder, dev: &mut MemDevice, budget: usize) -> ReplaySummary {
        replay_loops(b, dev, budget, 1)
    }

    /// An archive of `n` events (an allocation, then uploads and checked
    /// reads), with a malformed line in place of event `bad` when given.
    fn events_archive(dir: &std::path::Path, n: usize, bad: Option<usize>) -> Archive {
        let mut b = ArchiveBuilder::new(Platform::Cpu).alloc(DEV, 64);
        for i in 1..n {
            let bytes = pattern(64, i as u8);
            b = if i % 2 == 1 {
                b.h2d(DEV, &bytes)
            } else {
                b.d2h(DEV, &pattern(64, (i - 1) as u8))
            };
        }
        let path = b.write(dir).unwrap();
        if let Some(bad) = bad {
            let events = path.join("events.ndjson");
            let text = std::fs::read_to_string(&events).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            lines[bad] = "{garbage";
            std::fs::write(&events, lines.join("\n") + "\n").unwrap();
        }
        Archive::open(path).unwrap()
    }

    /// The first batch of events is parsed on the replaying thread, the rest
    /// (if any) on the parser thread: every event is replayed once, in
    /// order, and a malformed line stops the replay after the events before
    /// it, wherever the batches end.
    #[test]
    fn events_replay_alike_within_the_first_batch_and_beyond() {
        let t = tempfile::tempdir().unwrap();
        let b = PREFETCH_BATCH;
        for n in [1, 2, b - 1, b, b + 1, 3 * b + 7] {
            let archive = events_archive(&t.path().join(format!("{n}.hrr")), n, None);
            let (s, e) = super::replay_archive(&archive, &mut MemDevice::new(false));
            assert!(e.is_none(), "{n} events: {e:?}");
            // The eof trailer is an event too.
            assert_eq!(s.events, n as u64 + 1, "{n} events");
            assert_eq!(
                (s.d2h_exact, s.d2h_fail),
                (((n - 1) / 2) as u64, 0),
                "{n} events"
            );
        }
        for bad in [3, b - 1, b, b + 1, 2 * b + 3] {
            let dir = t.path().join(format!("bad-{bad}.hrr"));
            let archive = events_archive(&dir, 3 * b, Some(bad));
            let (s, e) = super::replay_archive(&archive, &mut MemDevice::new(false));
            assert_eq!(s.events, bad as u64, "malformed line {}", bad + 1);
            let e = chain(&e.expect("a malformed line stops the replay")).to_string();
            assert!(
                e.contains(&format!("events.ndjson:{}", bad + 1)),
                "malformed line {}: {e}",
                bad + 1
            );
        }
    }

    #[test]
    fn large_copies_go_through_host_buffers_and_are_checked_from_them() {
        let up = pattern(1 << 20, 1);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 1 << 20)
            .h2d(DEV, &up)
            .h2d(DEV, &up)
            .d2h(DEV, &up);
        let mut dev = MemDevice::new(true);
        let s = replay(b.clone(), &mut dev, 64 << 20);
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
        assert_eq!(dev.h2d_from_host_buffer, [true, true]);
        assert_eq!(dev.d2h_into_host_buffer, [true]);
        assert_eq!(
            dev.host_buffers.len(),
            2,
            "the blob landed once, plus the D2H buffer"
        );

        // Replayed again (`--loop`): the landed blob and the D2H buffer stay.
        let mut dev = MemDevice::new(true);
        assert_eq!(replay_loops(b.clone(), &mut dev, 64 << 20, 3).d2h_exact, 1);
        assert_eq!(dev.h2d_from_host_buffer, [true; 6]);
        assert_eq!(
            dev.host_buffers.len(),
            2,
            "nothing pinned after the first loop"
        );

        // What lands in the D2H buffer is what is compared: a device that
        // returned other bytes fails the check.
        let wrong = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 1 << 20)
            .h2d(DEV, &up)
            .d2h(DEV, &pattern(1 << 20, 2));
        let s = replay(wrong, &mut MemDevice::new(true), 64 << 20);
        assert_eq!((s.d2h_exact, s.d2h_fail), (0, 1));

        // Pinned memory running out is a warning, not a failed replay.
        let mut dev = MemDevice::new(true);
        dev.fail_host_buffers = true;
        let s = replay(b.clone(), &mut dev, 64 << 20);
        assert_eq!(s.d2h_exact, 1);
        assert_eq!(dev.h2d_from_host_buffer, [false, false]);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("no pinned host memory")),
            "{:?}",
            s.warnings
        );

        // Budget 0, or a backend without host buffers: copies from the blobs.
        for (pinned, budget) in [(true, 0), (false, 64 << 20)] {
            let mut dev = MemDevice::new(pinned);
            let s = replay(b.clone(), &mut dev, budget);
            assert_eq!(s.d2h_exact, 1);
            assert!(dev.host_buffers.is_empty());
            assert_eq!(dev.h2d_from_host_buffer, [false, false]);
        }
    }

    #[test]
    fn small_copies_stay_out_of_host_buffers() {
        let small = pattern(blob_cache::MAX_CACHED, 3);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 1 << 20)
            .h2d(DEV, &small)
            .d2h(DEV, &small);
        let mut dev = MemDevice::new(true);
        assert_eq!(replay(b, &mut dev, 64 << 20).d2h_exact, 1);
        assert!(dev.host_buffers.is_empty());
    }

    /// Replays `b` once with `opts` and regions loaded but `enabled` or not.
    fn replay_with(
        b: ArchiveBuilder,
        dev: &mut MemDevice,
        opts: &ReplayOptions,
        enabled: bool,
    ) -> (ReplaySummary, Option<ReplayError>) {
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let space = AddressSpace {
            regions: crate::engine::load_regions(&archive, false, &mut Vec::new()).unwrap(),
            regions_enabled: enabled,
            ..AddressSpace::default()
        };
        let mut pinned = PinnedHost::new(0);
        Replayer::new(dev, &archive, opts, space, None, &mut pinned).run(|_| {})
    }

    #[test]
    fn unmarked_pointers_into_recorded_memory_are_translated() {
        use hrr_core::testkit::value_arg;
        let dev_ptr = 0x7f00_0040_0000u64;
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(dev_ptr, 64)
            .launch(
                "k",
                b"code",
                [1, 1, 1],
                [1, 1, 1],
                vec![value_arg(&(dev_ptr + 16).to_le_bytes())],
            );
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        let (s, e) = replay_with(b, &mut dev, &ReplayOptions::default(), false);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(s.launches, 1);
        assert_eq!(dev.launches, [(0x1000_0000u64 + 16).to_le_bytes().to_vec()]);
    }

    #[test]
    fn a_launch_with_an_untranslatable_pointer_is_never_run() {
        use hrr_core::testkit::ptr_arg;
        let seg = 0x7e00_0040_0000u64;
        let b = ArchiveBuilder::new(Platform::Cpu)
            .segment(seg, 4096, 0)
            .launch("k", b"code", [1, 1, 1], [1, 1, 1], vec![ptr_arg(seg)]);
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        // Fatal by default...
        let (_, e) = replay_with(b.clone(), &mut dev, &ReplayOptions::default(), false);
        let e = chain(&e.unwrap()).to_string();
        assert!(
            e.contains("launch arg 0+0 0x7e0000400000 not mapped (in declared segment"),
            "{e}"
        );
        // ...skipped and counted under --continue-on-error.
        let opts = ReplayOptions {
            continue_on_error: true,
            ..ReplayOptions::default()
        };
        let (s, e) = replay_with(b, &mut dev, &opts, false);
        assert!(e.is_none(), "{e:?}");
        assert!(dev.launches.is_empty(), "the kernel ran");
        assert_eq!((s.launches, s.skipped_untranslatable), (0, 1));
        assert!(!s.passed());
        assert!(
            s.to_string()
                .contains("skipped : 1 launches (untranslatable pointer)\n")
        );
        assert!(
            s.to_string().contains("regions : 0 records"),
            "not in use: {s}"
        );
    }

    #[test]
    fn timing_records_device_work_with_device_times_into_the_replay_archive() {
        use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
        use hrr_core::event_reader::ReadOptions;
        use hrr_core::manifest::ArchiveKind;

        let data = pattern(4096, 5);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 8192)
            .h2d(DEV, &data)
            .memset(DEV + 4096, 7, 4096)
            .d2d(DEV + 4096, DEV, 4096)
            .d2h(DEV, &data);
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        for timing in [false, true] {
            let dir = t.path().join(format!("r-{timing}.hrr"));
            let mut out = ArchiveWriter::create(
                &dir,
                ArchiveKind::Replay,
                Platform::Cpu,
                ManifestExtra::default(),
            )
            .unwrap();
            let opts = ReplayOptions {
                timing,
                ..ReplayOptions::default()
            };
            let mut dev = MemDevice::new(false);
            let mut pinned = PinnedHost::new(0);
            let r = Replayer::new(
                &mut dev,
                &archive,
                &opts,
                AddressSpace::default(),
                Some(&mut out),
                &mut pinned,
            );
            let (s, e) = r.run(|_| {});
            assert!(e.is_none() && s.d2h_exact == 1, "{e:?} {s:?}");
            out.finish().unwrap();
            let mut reader = Archive::open(&dir)
                .unwrap()
                .events(ReadOptions::strict())
                .unwrap();
            let mut got = Vec::new();
            while let Some(ev) = reader.next() {
                let ev = ev.unwrap();
                let timed = reader.dev_time().is_some();
                let blob = matches!(ev.op, Op::Memcpy { blob: Some(_), .. });
                got.push((ev.op.name(), ev.seq, timed, blob));
            }
            let want: &[_] = if timing {
                // The upload's blob stays in the capture; the D2H keeps the bytes read back.
                &[
                    ("memcpy", 1, true, false),
                    ("memset", 2, true, false),
                    ("memcpy", 3, true, false),
                    ("memcpy", 4, true, true),
                    ("eof", 5, false, false),
                ]
            } else {
                &[("memcpy", 4, false, true), ("eof", 5, false, false)]
            };
            assert_eq!(got, want, "timing {timing}");
        }
    }

    #[test]
    fn each_d2h_line_is_on_disk_before_the_replay_goes_on() {
        use hrr_core::archive_writer::{ArchiveWriter, EVENTS_FILE, ManifestExtra};
        use hrr_core::manifest::ArchiveKind;

        // Two checked reads, then an operand no allocation holds: fatal.
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 64)
            .h2d(DEV, &pattern(64, 1))
            .d2h(DEV, &pattern(64, 1))
            .d2h(DEV, &pattern(64, 1))
            .memset(DEV + (1 << 20), 0, 4);
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let dir = t.path().join("r.hrr");
        let mut out = ArchiveWriter::create(
            &dir,
            ArchiveKind::Replay,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        let opts = ReplayOptions::default();
        let mut dev = MemDevice::new(false);
        let mut pinned = PinnedHost::new(0);
        let r = Replayer::new(
            &mut dev,
            &archive,
            &opts,
            AddressSpace::default(),
            Some(&mut out),
            &mut pinned,
        );
        let (s, e) = r.run(|_| {});
        assert!(
            matches!(e, Some(ReplayError::Fatal { seq: 4, .. })),
            "{e:?}"
        );
        assert_eq!(s.d2h_exact, 2);
        // Nothing finished or abandoned the writer (a watchdog or a signal
        // ends the process around it): both lines are in the file already.
        let text = std::fs::read_to_string(dir.join(EVENTS_FILE)).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        std::mem::forget(out);
    }

    #[test]
    fn an_interrupt_stops_the_replay_before_its_next_event() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static STOP: AtomicBool = AtomicBool::new(false);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 64)
            .h2d(DEV, &pattern(64, 1))
            .d2h(DEV, &pattern(64, 1));
        let opts = ReplayOptions {
            interrupt: Some(&STOP),
            ..ReplayOptions::default()
        };
        let mut dev = MemDevice::new(false);
        let (s, e) = replay_with(b.clone(), &mut dev, &opts, false);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(s.d2h_exact, 1);
        STOP.store(true, Ordering::Relaxed);
        let (s, e) = replay_with(b, &mut dev, &opts, false);
        let e = e.expect("interrupted");
        assert_eq!(chain(&e).to_string(), "event 0 (hipMalloc): interrupted");
        assert_eq!((s.replayed, s.d2h_exact), (0, 0));
    }

    #[test]
    fn d2h_records_keep_verdicts_digests_and_failed_bytes_when_asked() {
        let good = pattern(64, 1);
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 64)
            .h2d(DEV, &good)
            .d2h(DEV, &good)
            .d2h(DEV, &pattern(64, 2));
        let mut dev = MemDevice::new(false);
        let (s, _) = replay_with(b.clone(), &mut dev, &ReplayOptions::default(), false);
        assert!(s.d2h_records.is_empty(), "off by default");
        for (records, kept) in [
            (D2hRecords::Digests, false),
            (D2hRecords::FailedBytes, true),
        ] {
            let opts = ReplayOptions {
                d2h_records: records,
                ..ReplayOptions::default()
            };
            let (s, e) = replay_with(b.clone(), &mut dev, &opts, false);
            assert!(e.is_none(), "{e:?}");
            let got: Vec<_> = s
                .d2h_records
                .iter()
                .map(|r| {
                    (
                        r.seq,
                        r.verdict,
                        r.digest,
                        r.mismatch.is_some(),
                        r.bytes.is_some(),
                    )
                })
                .collect();
            let digest = hrr_core::hex::BlobId::of(&good);
            assert_eq!(
                got,
                [
                    (2, Verdict::Exact, digest, false, false),
                    (3, Verdict::Mismatch, digest, true, kept),
                ],
                "{records:?}"
            );
        }
    }

    #[test]
    fn natural_packing_aligns_each_argument() {
        let args = [arg(4, None), arg(8, None), arg(2, None), arg(16, None)];
        assert_eq!(arg_offsets(&args), vec![0, 8, 16, 24]);
        let given = [arg(8, Some(0)), arg(4, Some(12))];
        assert_eq!(arg_offsets(&given), vec![0, 12]);
    }

    /// Replays `b` onto `dev`, returning the summary and the error.
    fn replay_result(
        b: ArchiveBuilder,
        dev: &mut MemDevice,
    ) -> (ReplaySummary, Option<ReplayError>) {
        super::replay_built(b, dev)
    }

    const VA: u64 = 0x7f40_0000_0000;
    const CHUNK: u64 = 2 << 20;

    /// PyTorch's expandable segment: a large reservation, 2 MiB pieces
    /// mapped into it one after the other, a buffer across the boundary.
    fn expandable(b: ArchiveBuilder) -> ArchiveBuilder {
        b.event(
            "cuMemAddressReserve",
            Op::VaReserve {
                ptr: Addr(VA),
                size: 64 * CHUNK,
            },
            vec![],
        )
        .event(
            "cuMemCreate",
            Op::MemCreate {
                handle: Addr(0xa1),
                size: CHUNK,
                mem: MemKind::Device,
            },
            vec![],
        )
        .event(
            "cuMemMap",
            Op::MemMap {
                ptr: Addr(VA),
                size: CHUNK,
                offset: 0,
                handle: Addr(0xa1),
            },
            vec![],
        )
        .event(
            "cuMemCreate",
            Op::MemCreate {
                handle: Addr(0xa2),
                size: CHUNK,
                mem: MemKind::Device,
            },
            vec![],
        )
        .event(
            "cuMemMap",
            Op::MemMap {
                ptr: Addr(VA + CHUNK),
                size: CHUNK,
                offset: 0,
                handle: Addr(0xa2),
            },
            vec![],
        )
        .event(
            "cuMemSetAccess",
            Op::MemAccess {
                ptr: Addr(VA),
                size: 2 * CHUNK,
            },
            vec![],
        )
    }

    #[test]
    fn a_buffer_across_two_mapped_pieces_replays_contiguously() {
        let data = pattern(1 << 20, 7);
        let across = VA + CHUNK - (1 << 19);
        let b = expandable(ArchiveBuilder::new(Platform::Nvidia))
            .h2d(across, &data)
            .d2h(across, &data)
            .d2h(VA + CHUNK, &data[1 << 19..]);
        let mut dev = MemDevice::new(false);
        let (s, e) = replay_result(b, &mut dev);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (2, 0));
        // The pieces are separate physical allocations, mapped side by side
        // in one replay reservation of the recorded size.
        assert_eq!(dev.reserved.len(), 0, "freed at teardown");
        assert!(dev.mapped.is_empty() && dev.physical.is_empty());
    }

    #[test]
    fn unmapped_or_unreserved_vmm_operands_are_fatal() {
        // Access after the second piece was unmapped: the device refuses.
        let data = pattern(4096, 1);
        let b = expandable(ArchiveBuilder::new(Platform::Nvidia))
            .event(
                "cuMemUnmap",
                Op::MemUnmap {
                    ptr: Addr(VA + CHUNK),
                    size: CHUNK,
                },
                vec![],
            )
            .h2d(VA + CHUNK, &data);
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        let e = chain(&e.expect("fails")).to_string();
        assert!(e.contains("outside every allocation and mapping"), "{e}");
        // A mapping outside every reservation.
        let b = ArchiveBuilder::new(Platform::Nvidia)
            .event(
                "cuMemCreate",
                Op::MemCreate {
                    handle: Addr(1),
                    size: CHUNK,
                    mem: MemKind::Device,
                },
                vec![],
            )
            .event(
                "cuMemMap",
                Op::MemMap {
                    ptr: Addr(VA),
                    size: CHUNK,
                    offset: 0,
                    handle: Addr(1),
                },
                vec![],
            );
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        let e = chain(&e.expect("fails")).to_string();
        assert!(e.contains("not inside a reserved range"), "{e}");
        // A handle never created.
        let b = ArchiveBuilder::new(Platform::Nvidia)
            .event(
                "cuMemAddressReserve",
                Op::VaReserve {
                    ptr: Addr(VA),
                    size: CHUNK,
                },
                vec![],
            )
            .event(
                "cuMemMap",
                Op::MemMap {
                    ptr: Addr(VA),
                    size: CHUNK,
                    offset: 0,
                    handle: Addr(9),
                },
                vec![],
            );
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        assert!(chain(&e.unwrap()).to_string().contains("never created"));
    }

    #[test]
    fn released_and_freed_vmm_state_is_gone() {
        let b = expandable(ArchiveBuilder::new(Platform::Nvidia))
            .event(
                "cuMemUnmap",
                Op::MemUnmap {
                    ptr: Addr(VA),
                    size: 2 * CHUNK,
                },
                vec![],
            )
            .event(
                "cuMemRelease",
                Op::MemRelease { handle: Addr(0xa1) },
                vec![],
            )
            .event(
                "cuMemAddressFree",
                Op::VaFree {
                    ptr: Addr(VA),
                    size: 64 * CHUNK,
                },
                vec![],
            )
            .alloc(VA, 4096);
        // The reservation's range is free again for an ordinary allocation.
        let (s, e) = replay_result(b, &mut MemDevice::new(false));
        assert!(e.is_none(), "{e:?}");
        assert_eq!(s.replayed, 11);
    }

    /// NCCL's free: the handle retained from the address and released,
    /// unmapped, released again. Each release drops one reference; the
    /// replay's allocation goes once, with the last.
    #[test]
    fn retained_handles_are_counted_like_the_drivers() {
        let data = pattern(4096, 5);
        let release = |b: ArchiveBuilder, h: u64| {
            b.event("cuMemRelease", Op::MemRelease { handle: Addr(h) }, vec![])
        };
        let retain = |b: ArchiveBuilder| {
            b.event(
                "cuMemRetainAllocationHandle",
                Op::MemRetain {
                    ptr: Addr(VA + CHUNK + 64),
                    handle: Addr(0xa2),
                },
                vec![],
            )
        };
        let mut b = expandable(ArchiveBuilder::new(Platform::Nvidia)).h2d(VA + CHUNK, &data);
        b = retain(b);
        b = release(b, 0xa2);
        b = b.d2h(VA + CHUNK, &data);
        b = b.event(
            "cuMemUnmap",
            Op::MemUnmap {
                ptr: Addr(VA + CHUNK),
                size: CHUNK,
            },
            vec![],
        );
        b = release(b, 0xa2);
        let mut dev = MemDevice::new(false);
        let (s, e) = replay_result(b.clone(), &mut dev);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
        // A third release is one more than the references.
        let (_, e) = replay_result(release(b, 0xa2), &mut MemDevice::new(false));
        assert!(chain(&e.unwrap()).to_string().contains("never created"));
        // Released while mapped, retained again from the mapping.
        let b = retain(release(
            expandable(ArchiveBuilder::new(Platform::Nvidia)),
            0xa2,
        ))
        .h2d(VA + CHUNK, &data)
        .d2h(VA + CHUNK, &data);
        let b = release(b, 0xa2);
        let (s, e) = replay_result(b, &mut MemDevice::new(false));
        assert!(e.is_none(), "{e:?}");
        assert_eq!(s.d2h_exact, 1);
        // Nothing mapped there.
        let b = ArchiveBuilder::new(Platform::Nvidia).event(
            "cuMemRetainAllocationHandle",
            Op::MemRetain {
                ptr: Addr(VA),
                handle: Addr(0xa2),
            },
            vec![],
        );
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        assert!(chain(&e.unwrap()).to_string().contains("nothing is mapped"));
    }

    /// A handle exported and imported in one process is the same memory:
    /// mapped twice, a write through one mapping reads back through the
    /// other.
    #[test]
    fn an_imported_handle_is_the_exported_allocation() {
        let data = pattern(4096, 9);
        let b = expandable(ArchiveBuilder::new(Platform::Nvidia))
            .event(
                "cuMemExportToShareableHandle",
                Op::MemExport {
                    handle: Addr(0xa1),
                    shareable: 17,
                },
                vec![],
            )
            .event(
                "cuMemImportFromShareableHandle",
                Op::MemImport {
                    handle: Addr(0xb1),
                    shareable: 17,
                },
                vec![],
            )
            .event(
                "cuMemMap",
                Op::MemMap {
                    ptr: Addr(VA + 2 * CHUNK),
                    size: CHUNK,
                    offset: 0,
                    handle: Addr(0xb1),
                },
                vec![],
            )
            .h2d(VA, &data)
            .d2h(VA + 2 * CHUNK, &data)
            .event(
                "cuMemRelease",
                Op::MemRelease { handle: Addr(0xa1) },
                vec![],
            )
            .event(
                "cuMemRelease",
                Op::MemRelease { handle: Addr(0xb1) },
                vec![],
            );
        let mut dev = MemDevice::new(false);
        let (s, e) = replay_result(b, &mut dev);
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 0));
        // Never exported.
        let b = ArchiveBuilder::new(Platform::Nvidia).event(
            "cuMemImportFromShareableHandle",
            Op::MemImport {
                handle: Addr(0xb1),
                shareable: 18,
            },
            vec![],
        );
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        assert!(chain(&e.unwrap()).to_string().contains("never exported"));
    }

    #[test]
    fn module_globals_translate_to_the_replay_copy() {
        let code = b"fake code object".to_vec();
        let id = hrr_core::BlobId::of(&code);
        let g = 0x7f55_0000_1000u64;
        let data = pattern(256, 3);
        let b = ArchiveBuilder::new(Platform::Nvidia)
            .module_load(0x99, &code)
            .event(
                "cuModuleGetGlobal_v2",
                Op::Global {
                    module: Addr(0x99),
                    name: "table".into(),
                    code: id,
                    ptr: Addr(g),
                    size: 256,
                },
                vec![code.clone()],
            )
            .h2d(g + 16, &data[..64])
            .d2h(g + 16, &data[..64]);
        let mut dev = MemDevice::new(false);
        let live = dev.alloc(256, MemKind::Device).unwrap();
        dev.globals.insert("table".into(), (live, 256));
        let (s, e) = replay_result(b.clone(), &mut dev);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(s.d2h_exact, 1);
        let mut back = [0u8; 64];
        dev.copy_d2h(&mut back, live + 16, None).unwrap();
        assert_eq!(
            &back[..],
            &data[..64],
            "written through the replay's global"
        );
        // A global of another size at replay is refused.
        let mut dev = MemDevice::new(false);
        let live = dev.alloc(128, MemKind::Device).unwrap();
        dev.globals.insert("table".into(), (live, 128));
        let (_, e) = replay_result(b.clone(), &mut dev);
        assert!(
            chain(&e.unwrap())
                .to_string()
                .contains("128 bytes at replay, 256 at capture")
        );
        // A backend that cannot find it by name stops the replay, naming it.
        let (_, e) = replay_result(b, &mut MemDevice::new(false));
        let msg = chain(&e.unwrap()).to_string();
        assert!(
            msg.contains("event 1 (cuModuleGetGlobal_v2)")
                && msg.contains("global table: not found in its module"),
            "{msg}"
        );
    }
}
