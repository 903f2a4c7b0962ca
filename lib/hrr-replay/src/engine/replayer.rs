//! `Replayer`: dispatches archive events onto a [`Device`].

mod pause;
mod relocate;

pub use pause::{LaunchPointer, PauseHook, Paused};

use std::collections::HashMap;
use std::time::Instant;

use crate::alloc_map::Alloc;
use crate::compare::{Verdict, compare};
use crate::device::{Device, DeviceError, Launch, LaunchArg};
use crate::engine::address_space::{AddressSpace, Unmapped};
use crate::engine::blob_cache::{self, BlobCache};
use crate::engine::code_cache::CodeCache;
use crate::engine::options::ReplayOptions;
use crate::engine::pinned_host::PinnedHost;
use crate::engine::summary::{D2hMismatch, KernelTiming, ReplaySummary};
use crate::handle_map::HandleMap;
use crate::region_timeline::RegionClass;
use hrr_core::archive::Archive;
use hrr_core::archive_writer::ArchiveWriter;
use hrr_core::event::arg_offsets;
use hrr_core::event::{Dir, Event, KernelArg, MemKind, Op};
use hrr_core::hex::Addr;

/// Events per batch handed from the parser thread, and batches in flight.
const PREFETCH_BATCH: usize = 256;
const PREFETCH_BATCHES: usize = 8;

type EventItem = Result<Event, hrr_core::event_reader::ReadError>;

/// Why replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The archive itself is unreadable or inconsistent (exit 2).
    #[error("{0}")]
    Format(String),
    /// An event could not be replayed (exit 1): the DESIGN.md §5 fatal line.
    #[error("event {seq} ({api}): {what}")]
    Fatal { seq: u64, api: String, what: String },
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
    /// Where to pause, if anywhere (see [`Replayer::pause_with`]).
    pause: Option<&'a mut dyn PauseHook>,
}

impl<'a> Replayer<'a> {
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
            pause: None,
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
        self.summary.regions_records = self.space.regions.records().len() as u64;
        self.summary.regions_streams = self.space.regions.streams() as u64;
        let reader = match self.archive.events(self.opts.read) {
            Ok(r) => r,
            Err(e) => return (self.summary, Some(ReplayError::Format(e.to_string()))),
        };
        // Parsing runs one batch ahead on its own thread: on a launch-heavy
        // archive it is a third of the engine's per-event time, and it
        // overlaps with the runtime calls of the previous batch.
        // Replayed batches go back to it to be dropped there too: freeing an
        // event's strings and argument buffers is not free either.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<EventItem>>(PREFETCH_BATCHES);
        let (recycle, recycled) = std::sync::mpsc::channel::<Vec<EventItem>>();
        let parser = std::thread::spawn(move || {
            let mut reader = reader;
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
        let mut span: Option<(u64, u64)> = None;
        let mut error = None;
        'events: for batch in rx {
            for item in &batch {
                let event = match item {
                    Ok(e) => e,
                    Err(e) => {
                        error = Some(ReplayError::Format(e.to_string()));
                        break 'events;
                    }
                };
                span = Some(span.map_or((event.t, event.t), |(a, b)| {
                    (a.min(event.t), b.max(event.t))
                }));
                self.summary.events += 1;
                if self.pause.as_mut().is_some_and(|h| h.pause_before(event)) {
                    self.pause(event);
                    break 'events;
                }
                if let Err(e) = self.step(event) {
                    match e {
                        ReplayError::Fatal { .. } if self.opts.continue_on_error => {
                            eprintln!("hrr-play: error: {e}");
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
            let _ = recycle.send(batch);
        }
        // The receiver is gone: a parser still reading stops at its next send.
        let reader = match parser.join() {
            Ok(r) => r,
            Err(_) => {
                return (
                    self.summary,
                    Some(ReplayError::Format(
                        "the event parser thread panicked".into(),
                    )),
                );
            }
        };
        progress(self.summary.events);
        for w in reader.warnings() {
            self.summary.warnings.push(w.to_string());
        }
        self.summary.warnings.extend(self.pinned.take_warning());
        if error.is_none()
            && let Err(e) = self.dev.device_sync()
        {
            error = Some(ReplayError::Format(e.to_string()));
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
        for a in self.space.allocs.iter().copied().collect::<Vec<Alloc>>() {
            let _ = self.dev.free(a.live, a.mem);
        }
        for (_, s) in self.streams.drain() {
            let _ = self.dev.stream_destroy(s);
        }
        for (_, e) in self.events.drain() {
            let _ = self.dev.event_destroy(e);
        }
        self.code.unload_all(self.dev);
    }

    fn fatal(e: &Event, what: impl Into<String>) -> ReplayError {
        ReplayError::Fatal {
            seq: e.seq,
            api: e.api.clone(),
            what: what.into(),
        }
    }

    fn dev_err(e: &Event, err: DeviceError) -> ReplayError {
        Self::fatal(e, err.to_string())
    }

    /// The shared device-operand path, with the DESIGN.md §5 fatal wording.
    fn device_operand(
        &mut self,
        e: &Event,
        role: &str,
        addr: Addr,
        len: u64,
    ) -> Result<u64, ReplayError> {
        self.space
            .translate_or_materialise(self.dev, addr.0, len)
            .map_err(|u| Self::fatal(e, describe_unmapped(role, &u)))
    }

    /// A pointer in kernel argument `i` at byte `off`, through the shared path.
    /// The role text is only built when translation fails.
    fn arg_pointer(
        &mut self,
        e: &Event,
        i: usize,
        off: usize,
        value: u64,
    ) -> Result<u64, ReplayError> {
        self.space
            .translate_or_materialise(self.dev, value, 0)
            .map_err(|u| Self::fatal(e, describe_unmapped(&format!("launch arg {i}+{off}"), &u)))
    }

    fn stream(&mut self, e: &Event, s: Option<Addr>) -> Result<Option<u64>, ReplayError> {
        match s {
            None => Ok(None),
            Some(s) => self
                .streams
                .get(s.0)
                .map(Some)
                .ok_or_else(|| Self::fatal(e, format!("stream {s} was never created"))),
        }
    }

    /// Moves the region timeline to the event's time.
    fn advance_regions(&mut self, e: &Event) {
        for err in self.space.advance_to(self.dev, e.t) {
            self.summary
                .warnings
                .push(format!("event {}: freeing a deleted segment: {err}", e.seq));
        }
    }

    fn step(&mut self, e: &Event) -> Result<(), ReplayError> {
        self.advance_regions(e);
        if e.ret != 0 {
            // A call that failed at capture did nothing there; it does nothing here.
            self.summary.skipped_failed += 1;
            return Ok(());
        }
        match &e.op {
            Op::Alloc { ptr, size, mem } => {
                let live = self
                    .dev
                    .alloc(*size, *mem)
                    .map_err(|err| Self::dev_err(e, err))?;
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
                    .map_err(|err| Self::fatal(e, err.to_string()))?;
            }
            Op::HostRegister { ptr, size } => {
                let live = self
                    .dev
                    .alloc(*size, MemKind::Pinned)
                    .map_err(|err| Self::dev_err(e, err))?;
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
                    .map_err(|err| Self::fatal(e, err.to_string()))?;
            }
            Op::Free { ptr, .. } | Op::HostUnregister { ptr } => {
                if ptr.0 == 0 {
                    return Ok(());
                }
                let a = self
                    .space
                    .allocs
                    .remove(ptr.0)
                    .map_err(|err| Self::fatal(e, err.to_string()))?;
                self.dev
                    .free(a.live, a.mem)
                    .map_err(|err| Self::dev_err(e, err))?;
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
                let live = self.device_operand(e, "memset dst", *dst, *size)?;
                let stream = self.stream(e, *stream)?;
                let r = if *width <= 1 {
                    self.dev.memset(live, *value as u8, *size, stream)
                } else {
                    // Wider patterns are rare; write them as a pattern copy.
                    let pattern = value.to_le_bytes();
                    let w = usize::from((*width).min(4));
                    self.scratch.clear();
                    self.scratch
                        .extend((0..*size as usize).map(|i| pattern[i % w]));
                    self.dev.copy_h2d(live, &self.scratch, stream)
                };
                r.map_err(|err| Self::dev_err(e, err))?;
            }
            Op::Launch {
                name,
                code,
                grid,
                block,
                shmem,
                stream,
                args,
                ..
            } => {
                if let Some(f) = &self.opts.kernel_filter
                    && !name.contains(f.as_str())
                {
                    self.summary.skipped_filtered += 1;
                    return Ok(());
                }
                self.launch(e, name, *code, *grid, *block, *shmem, *stream, args)?;
            }
            Op::StreamCreate { stream } => {
                let s = self
                    .dev
                    .stream_create()
                    .map_err(|err| Self::dev_err(e, err))?;
                self.streams.insert(stream.0, s);
            }
            Op::StreamDestroy { stream } => {
                if let Some(s) = self.streams.remove(stream.0) {
                    self.dev
                        .stream_destroy(s)
                        .map_err(|err| Self::dev_err(e, err))?;
                }
            }
            Op::StreamSync { stream } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                self.dev
                    .stream_sync(s)
                    .map_err(|err| Self::dev_err(e, err))?;
            }
            Op::StreamWaitEvent { stream, event } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                if let Some(ev) = self.events.get(event.0) {
                    self.dev
                        .stream_wait_event(s, ev)
                        .map_err(|err| Self::dev_err(e, err))?;
                }
            }
            Op::DeviceSync => self
                .dev
                .device_sync()
                .map_err(|err| Self::dev_err(e, err))?,
            Op::EventCreate { event } => {
                let ev = self
                    .dev
                    .event_create()
                    .map_err(|err| Self::dev_err(e, err))?;
                self.events.insert(event.0, ev);
            }
            Op::EventDestroy { event } => {
                if let Some(ev) = self.events.remove(event.0) {
                    self.dev
                        .event_destroy(ev)
                        .map_err(|err| Self::dev_err(e, err))?;
                }
            }
            Op::EventRecord { event, stream } => {
                let s = self.stream(e, Some(*stream))?.unwrap_or(0);
                let ev = self
                    .events
                    .get(event.0)
                    .ok_or_else(|| Self::fatal(e, format!("event {event} was never created")))?;
                self.dev
                    .event_record(ev, s)
                    .map_err(|err| Self::dev_err(e, err))?;
            }
            Op::EventSync { event } => {
                if let Some(ev) = self.events.get(event.0) {
                    self.dev
                        .event_sync(ev)
                        .map_err(|err| Self::dev_err(e, err))?;
                }
            }
            Op::SetDevice { device } => {
                if *device != 0 {
                    self.summary.warnings.push(format!(
                        "event {}: set_device {device}: replay uses one device",
                        e.seq
                    ));
                }
            }
            Op::Relocate { dst, size, blob } => self.relocate(e, *dst, *size, *blob)?,
            // Modules load lazily at first launch; nothing to do for these.
            Op::ModuleLoad { .. }
            | Op::ModuleUnload { .. }
            | Op::Function { .. }
            | Op::Eof { .. } => {}
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
        match dir {
            Dir::H2d => {
                // Only the device destination is translated; `src` is a host pointer.
                let live = self.device_operand(e, "h2d dst", dst, size)?;
                let id = blob.ok_or_else(|| Self::fatal(e, "h2d memcpy has no source blob"))?;
                let store = self.archive.blobs();
                let dev = &mut *self.dev;
                // Large blobs go through pinned memory, as the application's
                // fast copies did; small ones through the blob cache.
                let pinned = if size as usize > blob_cache::MAX_CACHED {
                    self.pinned
                        .blob(|n| dev.host_buffer(n), store, &id, size as usize)
                        .map_err(|err| Self::fatal(e, err.to_string()))?
                } else {
                    None
                };
                let cached;
                let bytes = match pinned {
                    Some(b) => b,
                    None => {
                        cached = self
                            .blobs
                            .get(store, &id)
                            .map_err(|err| Self::fatal(e, err.to_string()))?;
                        &*cached
                    }
                };
                if bytes.len() as u64 != size {
                    return Err(Self::fatal(
                        e,
                        format!(
                            "blob {id} holds {} bytes, memcpy size is {size}",
                            bytes.len()
                        ),
                    ));
                }
                let t0 = Instant::now();
                dev.copy_h2d(live, bytes, stream)
                    .map_err(|err| Self::dev_err(e, err))?;
                self.summary.copies.h2d_ms += t0.elapsed().as_secs_f64() * 1e3;
                self.summary.copies.h2d_bytes += size;
            }
            Dir::D2h => {
                // The host destination is never translated nor materialised.
                let live = self.device_operand(e, "d2h src", src, size)?;
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
                let r = dev.copy_d2h(buf, live, stream);
                self.summary.copies.d2h_ms += t0.elapsed().as_secs_f64() * 1e3;
                self.summary.copies.d2h_bytes += size;
                let result = r
                    .map_err(|err| Self::dev_err(e, err))
                    .and_then(|()| self.check_d2h(e, blob, buf));
                if let Some(b) = pinned {
                    self.pinned.give_back(b);
                }
                self.scratch = heap;
                result?;
            }
            Dir::D2d => {
                let d = self.device_operand(e, "d2d dst", dst, size)?;
                let s = self.device_operand(e, "d2d src", src, size)?;
                self.dev
                    .copy_d2d(d, s, size, stream)
                    .map_err(|err| Self::dev_err(e, err))?;
            }
            // Host to host touches no device state.
            Dir::H2h => {}
        }
        Ok(())
    }

    fn check_d2h(
        &mut self,
        e: &Event,
        blob: Option<hrr_core::hex::BlobId>,
        actual: &[u8],
    ) -> Result<(), ReplayError> {
        if let Some(out) = self.out.as_deref_mut() {
            let id = out
                .put_blob(actual)
                .map_err(|err| ReplayError::Format(err.to_string()))?;
            let mut rec = e.clone();
            if let Op::Memcpy { blob, .. } = &mut rec.op {
                *blob = Some(id);
            }
            out.append(&rec)
                .map_err(|err| ReplayError::Format(err.to_string()))?;
        }
        let Some(id) = blob else {
            self.summary.d2h_unchecked += 1;
            return Ok(());
        };
        let expected = self
            .blobs
            .get(self.archive.blobs(), &id)
            .map_err(|err| Self::fatal(e, err.to_string()))?;
        let c = compare(&expected, actual, &self.opts.tolerance);
        match c.verdict {
            Verdict::Exact => self.summary.d2h_exact += 1,
            Verdict::WithinTolerance => self.summary.d2h_tolerance += 1,
            Verdict::Mismatch => {
                self.summary.d2h_fail += 1;
                self.summary.mismatches.push(D2hMismatch {
                    seq: e.seq,
                    api: e.api.clone(),
                    size: actual.len() as u64,
                    first_diff: c.first_diff,
                    bytes_differing: c.bytes_differing,
                    max_abs: c.max_abs,
                    max_rel: c.max_rel,
                });
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        e: &Event,
        name: &str,
        code: hrr_core::hex::BlobId,
        grid: [u32; 3],
        block: [u32; 3],
        shmem: u32,
        stream: Addr,
        args: &[KernelArg],
    ) -> Result<(), ReplayError> {
        let stream = self.stream(e, Some(stream))?.unwrap_or(0);
        let archive = self.archive;
        let func = self
            .code
            .function(self.dev, code, name, |id| {
                archive
                    .blobs()
                    .get(id)
                    .map(|b| b.to_vec())
                    .map_err(|err| err.to_string())
            })
            .map_err(|err| Self::fatal(e, format!("kernel {name}: {err}")))?;
        // Assemble the kernarg buffer in place (reused across launches),
        // translating every recorded device pointer, top-level or embedded.
        let offsets = arg_offsets(args);
        let end = args
            .iter()
            .zip(&offsets)
            .map(|(a, &o)| o as usize + a.hex.0.len())
            .max()
            .unwrap_or(0);
        let mut kernarg = std::mem::take(&mut self.kernarg);
        kernarg.clear();
        kernarg.resize(end, 0);
        for (i, (arg, &base)) in args.iter().zip(&offsets).enumerate() {
            let base = base as usize;
            let bytes = &mut kernarg[base..base + arg.hex.0.len()];
            bytes.copy_from_slice(&arg.hex.0);
            for &off in &arg.ptrs {
                let off = off as usize;
                let Some(word) = bytes.get(off..off + 8) else {
                    return Err(Self::fatal(
                        e,
                        format!(
                            "launch arg {i}: pointer offset {off} outside its {} bytes",
                            bytes.len()
                        ),
                    ));
                };
                let value = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                if value == 0 {
                    continue;
                }
                let live = self.arg_pointer(e, i, off, value)?;
                bytes[off..off + 8].copy_from_slice(&live.to_le_bytes());
            }
            for off in self.declared_pointers(bytes, &arg.ptrs) {
                let value = u64::from_le_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
                let live = self.arg_pointer(e, i, off, value)?;
                bytes[off..off + 8].copy_from_slice(&live.to_le_bytes());
                self.summary.declared_ptrs += 1;
            }
        }
        let launch_args = [LaunchArg {
            offset: 0,
            bytes: &kernarg,
        }];
        let launch = Launch {
            func,
            grid,
            block,
            shmem,
            stream,
            args: &launch_args,
        };
        if self.opts.timing {
            let t0 = Instant::now();
            self.dev
                .launch(&launch)
                .map_err(|err| Self::dev_err(e, err))?;
            self.dev
                .stream_sync(stream)
                .map_err(|err| Self::dev_err(e, err))?;
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
        } else {
            self.dev
                .launch(&launch)
                .map_err(|err| Self::dev_err(e, err))?;
        }
        self.kernarg = kernarg;
        self.summary.launches += 1;
        Ok(())
    }
}

impl Replayer<'_> {
    /// Offsets of words in an argument that point into memory only a sidecar
    /// declares. The recorder matched argument words against the allocations
    /// it saw; memory it never saw (an HSA pool, a driver-API allocation) can
    /// only be recognised here, once the sidecar says it exists. Same rules
    /// as capture: every byte offset, values and low halves below 0x10000
    /// skipped; words the capture already marked are left alone.
    fn declared_pointers(&self, bytes: &[u8], known: &[u32]) -> Vec<usize> {
        let mut found = Vec::new();
        if !self.space.regions_enabled || self.space.regions.records().is_empty() {
            return found;
        }
        let covered = |off: usize| {
            known
                .iter()
                .any(|&k| off + 8 > k as usize && off < k as usize + 8)
        };
        let mut off = 0;
        while off + 8 <= bytes.len() {
            let v = u64::from_le_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
            let plausible = v >= 0x10000 && (v as u32) >= 0x10000;
            if plausible
                && self.space.regions.may_contain(v)
                && !covered(off)
                && self.space.regions.classify(v) != RegionClass::None
            {
                found.push(off);
                off += 8;
            } else {
                off += 1;
            }
        }
        found
    }
}

fn describe_unmapped(role: &str, u: &Unmapped) -> String {
    let mut s = format!("{role} {:#x} not mapped", u.addr);
    match u.class {
        RegionClass::InBlock { base, size } => {
            s += &format!(" (in declared block {base:#x}+{size})")
        }
        RegionClass::InSegment { base, size } => {
            s += &format!(" (in declared segment {base:#x}+{size})")
        }
        RegionClass::None => {}
    }
    if let Some(err) = &u.materialise_error {
        s += &format!("; materialising its segment failed: {err}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::hex::HexBytes;

    fn arg(size: u32, offset: Option<u32>) -> KernelArg {
        KernelArg {
            offset,
            size,
            hex: HexBytes(vec![0; size as usize]),
            ptrs: vec![],
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

    #[test]
    fn natural_packing_aligns_each_argument() {
        let args = [arg(4, None), arg(8, None), arg(2, None), arg(16, None)];
        assert_eq!(arg_offsets(&args), vec![0, 8, 16, 24]);
        let given = [arg(8, Some(0)), arg(4, Some(12))];
        assert_eq!(arg_offsets(&given), vec![0, 12]);
    }
}
