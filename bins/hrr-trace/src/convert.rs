//! `write_trace`: an archive's events as Chrome trace events.
//!
//! What each archive event becomes:
//! - every event (but `eof`): a complete slice (`X`) named by its `api` on
//!   its thread's track in the "application" process, with `seq`, `op`,
//!   `ret` and the op's sizes and pointers as args;
//! - a successful launch, copy (not `h2h`) or memset: a slice on its stream's
//!   track in the "device" process (a copy without a stream on `stream 0x0`),
//!   and a flow arrow from the call to it;
//! - a successful `stream_sync`, `event_record`, `stream_wait_event`: an
//!   instant on the stream's track; `device_sync`: an instant on the
//!   "all streams" track.
//!
//! Time. A capture event has one timestamp, `t`, taken after the call
//! returned; nothing says when it began or when its device work ran. API
//! slices therefore end at `t` and are [`NOMINAL_NS`] wide (narrower when
//! the thread's previous call ended less than that before): instant events
//! would carry the same information, but Perfetto draws them as thin
//! chevrons that are hard to hit and cannot anchor a flow arrow, while a
//! 1 µs slice is visible at any zoom that separates the calls. Device slices
//! of a capture are [`NOMINAL_NS`] wide too, placed after the call, in call
//! order per stream: they show what ran where and in which order, not for
//! how long (their args say `"timing":"nominal"`).
//!
//! A timed replay's events (`hrr-play --timing -o`) carry `dev_t` (when the
//! replay issued the operation) and `dev_ns` (its device time). The trace
//! then runs on the replay's clock: API slices end at `dev_t`, device slices
//! start there and last `dev_ns` (`"timing":"device"`), and copies show
//! bytes per second.
//!
//! All times are relative to the first event (minus [`NOMINAL_NS`], so the
//! first slice is whole) and never run backwards on a track (see
//! [`crate::tracks`]).

use std::io::{self, Write};

use hrr_core::archive::{Archive, ArchiveError};
use hrr_core::event::{DevTime, Dir, Event, MemKind, Op};
use hrr_core::event_reader::{ParallelError, ReadError, ReadOptions, Warning};

use crate::json::{Obj, TraceOut};
use crate::tracks::{APP_PID, DEVICE_PID, Tracks};

/// Width of a slice whose real duration the archive does not record.
pub const NOMINAL_NS: u64 = 1_000;

type Item = (Event, Extra);

/// What travels with an event from the parsing threads besides the event.
#[derive(Debug, Clone, Copy, Default)]
struct Extra {
    /// A timed replay's device timing.
    dev: Option<DevTime>,
    /// A launch's argument count: the arguments themselves are freed on the
    /// parsing thread, where they were allocated and are still in cache.
    kernel_args: usize,
}

/// Takes what the trace does not show out of `e`; returns what it keeps of it.
fn slim(e: &mut Event, dev: Option<DevTime>) -> Extra {
    let kernel_args = match &mut e.op {
        Op::Launch { args, .. } => std::mem::take(args).len(),
        _ => 0,
    };
    Extra { dev, kernel_args }
}

/// Why no trace could be written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The archive did not open (missing, not an archive, bad manifest).
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// An event line is malformed (names the file and line).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The trace could not be written.
    #[error("writing the trace")]
    Write(#[source] io::Error),
    /// A parsing thread could not be started.
    #[error("starting an event reader thread")]
    Spawn(#[source] io::Error),
    /// A bug: a parsing thread died.
    #[error("an event reader thread panicked")]
    ReaderPanicked,
}

/// What a trace holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TraceStats {
    /// Archive events read (the `eof` trailer included).
    pub events: u64,
    /// API slices (every event but `eof`).
    pub api_calls: u64,
    /// Device slices of kernel launches.
    pub kernels: u64,
    /// Device slices of copies.
    pub copies: u64,
    /// Device slices of memsets.
    pub memsets: u64,
    /// Sync instants on device tracks.
    pub syncs: u64,
    /// Flow arrows from a call to its device work.
    pub flows: u64,
    /// Device slices whose duration was measured (timed replay).
    pub device_timed: u64,
    /// Application threads (one track each).
    pub threads: u64,
    /// Streams (one device track each).
    pub streams: u64,
    /// Trace events written (metadata included).
    pub trace_events: u64,
    /// What the reader recovered from (torn tail, unknown ops).
    pub warnings: Vec<Warning>,
}

/// Writes the trace of `archive` to `sink`, calling `progress` with the
/// bytes of `events.ndjson` read so far; returns the sink.
///
/// Events are parsed on [`parse_threads`] threads, a chunk of the file
/// each, and converted here in file order.
pub fn write_trace<W: Write>(
    archive: &Archive,
    sink: W,
    read: ReadOptions,
    mut progress: impl FnMut(u64),
) -> Result<(W, TraceStats), TraceError> {
    let reader = archive.events_parallel(read)?.threads(parse_threads());
    let mut conv = Converter::new(sink);
    let warnings = reader
        .run(
            |mut e, dev| {
                let extra = slim(&mut e, dev);
                (e, extra)
            },
            |items: &[Item], bytes| {
                for (e, extra) in items {
                    conv.event(e, *extra)?;
                }
                progress(bytes);
                Ok(())
            },
        )
        .map_err(|e| match e {
            ParallelError::Read(e) => TraceError::Read(e),
            ParallelError::Sink(e) => TraceError::Write(e),
            ParallelError::Spawn(e) => TraceError::Spawn(e),
            ParallelError::Panicked => TraceError::ReaderPanicked,
        })?;
    let mut stats = conv.stats;
    stats.warnings = warnings;
    let (threads, streams) = conv.tracks.counts();
    stats.threads = threads as u64;
    stats.streams = streams as u64;
    stats.trace_events = conv.out.events();
    let m = archive.manifest();
    let metadata = serde_json::json!({
        "hrr_archive": archive.path().display().to_string(),
        "hrr_kind": m.kind,
        "hrr_platform": m.platform,
        "hrr_complete": archive.is_complete(),
        "hrr_events": stats.events,
        "hrr_kernels": stats.kernels,
        "hrr_copies": stats.copies,
        "hrr_memsets": stats.memsets,
        "hrr_device_timing": if stats.device_timed > 0 { "device" } else { "nominal" },
        "hrr_tool": concat!("hrr-trace ", env!("CARGO_PKG_VERSION")),
    });
    let sink = conv.out.finish(&metadata).map_err(TraceError::Write)?;
    Ok((sink, stats))
}

/// Threads parsing the events file: one per core the process may use
/// (parsing costs more than converting, which runs beside them), up to
/// [`MAX_PARSE_THREADS`].
pub fn parse_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_PARSE_THREADS))
}

/// Parsing threads beyond which the converting thread is the bound: an
/// event costs it about two thirds of what it costs a parser.
pub const MAX_PARSE_THREADS: usize = 4;

/// A slice already placed: its track and extent (trace ns).
#[derive(Debug, Clone, Copy)]
struct Slice {
    tid: u32,
    start: u64,
    dur: u64,
}

/// Turns archive events into trace events, one at a time.
struct Converter<W: Write> {
    out: TraceOut<W>,
    tracks: Tracks,
    /// Archive time of trace time 0, set by the first event.
    base: Option<u64>,
    stats: TraceStats,
    /// Reused for device slice names.
    name: String,
}

impl<W: Write> Converter<W> {
    fn new(sink: W) -> Self {
        Converter {
            out: TraceOut::new(sink),
            tracks: Tracks::default(),
            base: None,
            stats: TraceStats::default(),
            name: String::new(),
        }
    }

    fn event(&mut self, e: &Event, extra: Extra) -> io::Result<()> {
        let dev = extra.dev;
        self.stats.events += 1;
        if let Op::Eof { .. } = e.op {
            return Ok(());
        }
        let at = dev.map_or(e.t, |d| d.t);
        let base = *self.base.get_or_insert(at.saturating_sub(NOMINAL_NS));
        let call = self.api_slice(e, at.saturating_sub(base), extra)?;
        if e.ret != 0 {
            // A call that failed did nothing on the device.
            return Ok(());
        }
        let done = call.start + call.dur;
        match &e.op {
            Op::Launch {
                name,
                grid,
                block,
                shmem,
                stream,
                ..
            } => {
                let work = self.device_slice(stream.0, done, dev)?;
                let mut o = self.open_device(e.seq, work, name, "kernel", dev)?;
                o.dim3("grid", *grid)
                    .dim3("block", *block)
                    .u64("shmem", (*shmem).into());
                drop(o);
                self.stats.kernels += 1;
                self.flow(e.seq, call, work)?;
            }
            Op::Memcpy {
                dir,
                dst,
                src,
                size,
                stream,
                ..
            } if *dir != Dir::H2h => {
                let work = self.device_slice(stream.map_or(0, |s| s.0), done, dev)?;
                self.name.clear();
                self.name.push_str("memcpy ");
                self.name.push_str(dir.as_str());
                self.name.push(' ');
                push_human_bytes(&mut self.name, *size);
                let name = std::mem::take(&mut self.name);
                let mut o = self.open_device(e.seq, work, &name, "copy", dev)?;
                o.lit("dir", dir.as_str())
                    .u64("bytes", *size)
                    .addr("dst", dst.0)
                    .addr("src", src.0);
                if let Some(d) = dev.filter(|d| d.ns > 0) {
                    let per_s = u128::from(*size) * 1_000_000_000 / u128::from(d.ns);
                    o.u64("bytes_per_s", u64::try_from(per_s).unwrap_or(u64::MAX));
                }
                drop(o);
                self.name = name;
                self.stats.copies += 1;
                self.flow(e.seq, call, work)?;
            }
            Op::Memset {
                dst,
                value,
                size,
                width,
                stream,
            } => {
                let work = self.device_slice(stream.map_or(0, |s| s.0), done, dev)?;
                self.name.clear();
                self.name.push_str("memset ");
                push_human_bytes(&mut self.name, *size);
                let name = std::mem::take(&mut self.name);
                let mut o = self.open_device(e.seq, work, &name, "memset", dev)?;
                o.u64("bytes", *size)
                    .addr("dst", dst.0)
                    .u64("value", (*value).into())
                    .u64("width", (*width).into());
                drop(o);
                self.name = name;
                self.stats.memsets += 1;
                self.flow(e.seq, call, work)?;
            }
            Op::StreamSync { stream } => {
                self.stream_instant(e.seq, stream.0, done, "stream_sync", None)?
            }
            Op::EventRecord { event, stream } => {
                self.stream_instant(e.seq, stream.0, done, "event_record", Some(event.0))?
            }
            Op::StreamWaitEvent { stream, event } => {
                self.stream_instant(e.seq, stream.0, done, "stream_wait_event", Some(event.0))?
            }
            // A reset waits for the device's work as a sync does.
            Op::DeviceSync | Op::DeviceReset { .. } => {
                let track = self.tracks.device_wide(&mut self.out)?;
                let ts = done.max(track.cursor);
                track.cursor = ts;
                let tid = track.tid;
                self.out
                    .event(b'i', DEVICE_PID, tid)?
                    .lit("name", e.op.name())
                    .lit("cat", "sync")
                    .lit("s", "t")
                    .us("ts", ts)
                    .args(e.seq);
                self.stats.syncs += 1;
            }
            _ => {}
        }
        Ok(())
    }

    /// The call's slice on its thread's track, ending at `end` (trace ns).
    fn api_slice(&mut self, e: &Event, end: u64, extra: Extra) -> io::Result<Slice> {
        let track = self.tracks.thread(&mut self.out, e.tid)?;
        let end = end.max(track.cursor);
        let start = end.saturating_sub(NOMINAL_NS).max(track.cursor);
        track.cursor = end;
        let slice = Slice {
            tid: track.tid,
            start,
            dur: end - start,
        };
        let mut o = self.out.event(b'X', APP_PID, slice.tid)?;
        o.str("name", &e.api)
            .lit("cat", "api")
            .us("ts", slice.start)
            .us("dur", slice.dur)
            .args(e.seq)
            .lit("op", e.op.name())
            .i64("ret", e.ret);
        // The device the call ran on, where it is not device 0 (as on the line).
        if e.dev != 0 {
            o.u64("dev", u64::from(e.dev));
        }
        api_args(&mut o, &e.op, extra.kernel_args);
        if let Some(d) = extra.dev {
            o.u64("dev_t", d.t).u64("dev_ns", d.ns);
        }
        drop(o);
        self.stats.api_calls += 1;
        Ok(slice)
    }

    /// Places device work on `stream`'s track: from `at` (or when the stream
    /// is free), for its measured time or [`NOMINAL_NS`].
    fn device_slice(&mut self, stream: u64, at: u64, dev: Option<DevTime>) -> io::Result<Slice> {
        let track = self.tracks.stream(&mut self.out, stream)?;
        let start = at.max(track.cursor);
        let dur = dev.map_or(NOMINAL_NS, |d| d.ns);
        track.cursor = start + dur;
        Ok(Slice {
            tid: track.tid,
            start,
            dur,
        })
    }

    /// Opens a device slice's event, down to its common args.
    fn open_device(
        &mut self,
        seq: u64,
        work: Slice,
        name: &str,
        cat: &'static str,
        dev: Option<DevTime>,
    ) -> io::Result<Obj<'_>> {
        if dev.is_some() {
            self.stats.device_timed += 1;
        }
        let mut o = self.out.event(b'X', DEVICE_PID, work.tid)?;
        o.str("name", name)
            .lit("cat", cat)
            .us("ts", work.start)
            .us("dur", work.dur)
            .args(seq)
            .lit("timing", if dev.is_some() { "device" } else { "nominal" });
        Ok(o)
    }

    /// An instant on `stream`'s track, once the work before it is done.
    fn stream_instant(
        &mut self,
        seq: u64,
        stream: u64,
        at: u64,
        name: &'static str,
        event: Option<u64>,
    ) -> io::Result<()> {
        let track = self.tracks.stream(&mut self.out, stream)?;
        let ts = at.max(track.cursor);
        track.cursor = ts;
        let tid = track.tid;
        let mut o = self.out.event(b'i', DEVICE_PID, tid)?;
        o.lit("name", name)
            .lit("cat", "sync")
            .lit("s", "t")
            .us("ts", ts)
            .args(seq);
        if let Some(ev) = event {
            o.addr("event", ev);
        }
        drop(o);
        self.stats.syncs += 1;
        Ok(())
    }

    /// A flow arrow from a call to its device work, both ends strictly
    /// inside their slices: Perfetto binds a flow to the slice open at the
    /// end's timestamp, and at a slice's edge that may be its neighbour.
    fn flow(&mut self, id: u64, from: Slice, to: Slice) -> io::Result<()> {
        if from.dur < 2 || to.dur < 2 {
            return Ok(());
        }
        self.out
            .event(b's', APP_PID, from.tid)?
            .lit("name", "issue")
            .lit("cat", "flow")
            .u64("id", id)
            .us("ts", from.start + from.dur / 2);
        self.out
            .event(b'f', DEVICE_PID, to.tid)?
            .lit("name", "issue")
            .lit("cat", "flow")
            .u64("id", id)
            .lit("bp", "e")
            .us("ts", to.start + to.dur / 2);
        self.stats.flows += 1;
        Ok(())
    }
}

/// The op's own fields, as args of its API slice (`kernel_args`: a launch's
/// argument count, see [`Extra`]).
fn api_args(o: &mut Obj<'_>, op: &Op, kernel_args: usize) {
    match op {
        Op::Alloc { ptr, size, mem } => {
            o.addr("ptr", ptr.0)
                .u64("size", *size)
                .lit("mem", mem_name(*mem));
        }
        Op::Free { ptr, .. } | Op::HostUnregister { ptr } => {
            o.addr("ptr", ptr.0);
        }
        Op::HostRegister { ptr, size } => {
            o.addr("ptr", ptr.0).u64("size", *size);
        }
        Op::Memcpy {
            dir,
            dst,
            src,
            size,
            stream,
            ..
        } => {
            o.lit("dir", dir.as_str())
                .addr("dst", dst.0)
                .addr("src", src.0)
                .u64("size", *size);
            if let Some(s) = stream {
                o.addr("stream", s.0);
            }
        }
        Op::Memset {
            dst,
            value,
            size,
            width,
            stream,
        } => {
            o.addr("dst", dst.0)
                .u64("value", (*value).into())
                .u64("size", *size)
                .u64("width", (*width).into());
            if let Some(s) = stream {
                o.addr("stream", s.0);
            }
        }
        Op::ModuleLoad { module, .. } | Op::ModuleUnload { module } => {
            o.addr("module", module.0);
        }
        Op::Function { module, name, func } => {
            o.addr("module", module.0)
                .str("kernel", name)
                .addr("func", func.0);
        }
        Op::Launch {
            name,
            grid,
            block,
            shmem,
            stream,
            ..
        } => {
            o.str("kernel", name)
                .dim3("grid", *grid)
                .dim3("block", *block)
                .u64("shmem", (*shmem).into())
                .addr("stream", stream.0)
                .u64("kernel_args", kernel_args as u64);
        }
        Op::StreamCreate { stream } | Op::StreamDestroy { stream } | Op::StreamSync { stream } => {
            o.addr("stream", stream.0);
        }
        Op::StreamWaitEvent { stream, event } | Op::EventRecord { event, stream } => {
            o.addr("stream", stream.0).addr("event", event.0);
        }
        Op::EventCreate { event } | Op::EventDestroy { event } | Op::EventSync { event } => {
            o.addr("event", event.0);
        }
        Op::SetDevice { device } => {
            o.i64("device", (*device).into());
        }
        Op::CtxCreate { ctx, device } => {
            o.addr("ctx", ctx.0).i64("device", (*device).into());
        }
        Op::CtxDestroy { ctx } => {
            o.addr("ctx", ctx.0);
        }
        Op::CtxSet { ctx, device } => {
            o.addr("ctx", ctx.0);
            if let Some(d) = device {
                o.i64("device", (*d).into());
            }
        }
        Op::VaReserve { ptr, size }
        | Op::VaFree { ptr, size }
        | Op::MemUnmap { ptr, size }
        | Op::MemAccess { ptr, size } => {
            o.addr("ptr", ptr.0).u64("size", *size);
        }
        Op::MemCreate { handle, size, mem } => {
            o.addr("handle", handle.0)
                .u64("size", *size)
                .lit("mem", mem_name(*mem));
        }
        Op::MemRelease { handle } => {
            o.addr("handle", handle.0);
        }
        Op::MemMap {
            ptr,
            size,
            offset,
            handle,
        } => {
            o.addr("ptr", ptr.0)
                .u64("size", *size)
                .u64("offset", *offset)
                .addr("handle", handle.0);
        }
        Op::Global {
            module,
            name,
            ptr,
            size,
            ..
        } => {
            o.addr("module", module.0)
                .str("name", name)
                .addr("ptr", ptr.0)
                .u64("size", *size);
        }
        Op::Relocate { dst, size, .. } => {
            o.addr("dst", dst.0).u64("size", *size);
        }
        Op::GraphExec { exec, graph, nodes } => {
            o.addr("exec", exec.0)
                .addr("graph", graph.0)
                .u64("nodes", nodes.len() as u64);
        }
        Op::GraphLaunch { exec, stream, .. } => {
            o.addr("exec", exec.0).addr("stream", stream.0);
        }
        Op::GraphExecDestroy { exec } => {
            o.addr("exec", exec.0);
        }
        Op::HostWrite { ptr, size, .. } | Op::HostRead { ptr, size, .. } => {
            o.addr("ptr", ptr.0).u64("size", *size);
        }
        Op::MemcpyRect {
            dir,
            dst,
            src,
            extent,
            stream,
            ..
        }
        | Op::MemcpyArray {
            dir,
            dst,
            src,
            extent,
            stream,
            ..
        } => {
            o.lit("dir", dir.as_str())
                .addr("dst", dst.0)
                .addr("src", src.0)
                .u64("size", hrr_core::event::rect_len(*extent).unwrap_or(0));
            if let Some(s) = stream {
                o.addr("stream", s.0);
            }
        }
        Op::MemsetRect {
            dst,
            extent,
            value,
            stream,
            ..
        } => {
            o.addr("dst", dst.0)
                .u64("value", (*value).into())
                .u64("size", hrr_core::event::rect_len(*extent).unwrap_or(0));
            if let Some(s) = stream {
                o.addr("stream", s.0);
            }
        }
        Op::PoolCreate { pool } | Op::PoolDestroy { pool } | Op::DevicePool { pool, .. } => {
            o.addr("pool", pool.0);
        }
        Op::PoolTrim { pool, size } => {
            o.addr("pool", pool.0).u64("size", *size);
        }
        Op::PoolAttr { pool, attr, value } => {
            o.addr("pool", pool.0)
                .u64("attr", (*attr).into())
                .u64("value", *value);
        }
        Op::PoolAlloc {
            ptr, size, pool, ..
        } => {
            o.addr("ptr", ptr.0).u64("size", *size).addr("pool", pool.0);
        }
        Op::MemRetain { ptr, handle } => {
            o.addr("ptr", ptr.0).addr("handle", handle.0);
        }
        Op::MemExport { handle, shareable } | Op::MemImport { handle, shareable } => {
            o.addr("handle", handle.0).u64("shareable", *shareable);
        }
        Op::HostFunc { stream } => {
            o.addr("stream", stream.0);
        }
        Op::MemcpyPeer {
            dst,
            src,
            size,
            stream,
            dst_device,
            src_device,
        } => {
            o.addr("dst", dst.0).addr("src", src.0).u64("size", *size);
            if let Some(s) = stream {
                o.addr("stream", s.0);
            }
            if let Some(d) = dst_device {
                o.i64("dst_device", (*d).into());
            }
            if let Some(d) = src_device {
                o.i64("src_device", (*d).into());
            }
        }
        Op::PeerAccess { peer } => {
            o.i64("peer", (*peer).into());
        }
        Op::DeviceReset { device } => {
            o.i64("device", (*device).into());
        }
        Op::NcclCommInit {
            comm,
            uid,
            nranks,
            rank,
        } => {
            o.addr("comm", comm.0)
                .str("uid", uid)
                .u64("nranks", (*nranks).into())
                .u64("rank", (*rank).into());
        }
        Op::NcclCommSplit {
            parent,
            color,
            key,
            comm,
        } => {
            o.addr("parent", parent.0)
                .i64("color", (*color).into())
                .i64("key", (*key).into());
            if let Some(c) = comm {
                o.addr("comm", c.0);
            }
        }
        Op::NcclCommInitAll { comms, devices } => {
            o.u64("comms", comms.len() as u64).str(
                "devices",
                &devices
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        Op::NcclCommFinalize { comm } | Op::NcclCommDestroy { comm } => {
            o.addr("comm", comm.0);
        }
        Op::NcclColl {
            coll,
            src,
            dst,
            count,
            dtype,
            comm,
            stream,
            ..
        } => {
            o.str("coll", coll)
                .addr("src", src.map_or(0, |a| a.0))
                .addr("dst", dst.map_or(0, |a| a.0))
                .u64("count", *count)
                .u64("dtype", (*dtype).into())
                .addr("comm", comm.0)
                .addr("stream", stream.0);
        }
        Op::NcclGroupStart | Op::NcclGroupEnd => {}
        Op::ArrayCreate {
            array,
            format,
            channels,
            extent,
            flags,
        } => {
            o.addr("array", array.0)
                .u64("format", u64::from(*format))
                .u64("channels", u64::from(*channels))
                .u64("width", extent[0])
                .u64("height", extent[1])
                .u64("depth", extent[2])
                .u64("flags", u64::from(*flags));
        }
        Op::ArrayDestroy { array } => {
            o.addr("array", array.0);
        }
        Op::MipmapCreate {
            mipmap,
            format,
            channels,
            extent,
            levels,
            ..
        } => {
            o.addr("mipmap", mipmap.0)
                .u64("format", u64::from(*format))
                .u64("channels", u64::from(*channels))
                .u64("width", extent[0])
                .u64("height", extent[1])
                .u64("depth", extent[2])
                .u64("levels", u64::from(*levels));
        }
        Op::MipmapLevel {
            array,
            mipmap,
            level,
        } => {
            o.addr("array", array.0)
                .addr("mipmap", mipmap.0)
                .u64("level", u64::from(*level));
        }
        Op::MipmapDestroy { mipmap } => {
            o.addr("mipmap", mipmap.0);
        }
        Op::ArrayPlane {
            array,
            parent,
            plane,
        } => {
            o.addr("array", array.0)
                .addr("parent", parent.0)
                .u64("plane", u64::from(*plane));
        }
        Op::TexCreate { obj, .. }
        | Op::TexDestroy { obj }
        | Op::SurfCreate { obj, .. }
        | Op::SurfDestroy { obj } => {
            o.addr("obj", obj.0);
        }
        Op::DeviceSync | Op::Eof { .. } => {}
    }
}

fn mem_name(mem: MemKind) -> &'static str {
    match mem {
        MemKind::Device => "device",
        MemKind::Host => "host",
        MemKind::Managed => "managed",
        MemKind::Pinned => "pinned",
    }
}

/// Appends `512 B`, `4.0 KiB`, `1.5 MiB`, `2.0 GiB`… (one decimal, rounded
/// half up; integer arithmetic: float formatting was a tenth of the time
/// spent per copy).
pub fn push_human_bytes(out: &mut String, n: u64) {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut digits = itoa::Buffer::new();
    if n < 1024 {
        out.push_str(digits.format(n));
        out.push_str(" B");
        return;
    }
    let mut unit = 0;
    // The largest unit not above n.
    while unit + 1 < UNITS.len() && n >> (10 * (unit + 2)) > 0 {
        unit += 1;
    }
    let scale = 1u128 << (10 * (unit + 1));
    let tenths = (u128::from(n) * 10 + scale / 2) / scale;
    out.push_str(digits.format(tenths / 10));
    out.push('.');
    out.push(char::from(b'0' + (tenths % 10) as u8));
    out.push(' ');
    out.push_str(UNITS[unit]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_a_human_wrote_them() {
        let human = |n| {
            let mut s = String::new();
            push_human_bytes(&mut s, n);
            s
        };
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1024), "1.0 KiB");
        assert_eq!(human(4096), "4.0 KiB");
        assert_eq!(human(1536 + 51), "1.5 KiB");
        assert_eq!(human(1536 + 52), "1.6 KiB");
        assert_eq!(human((1 << 20) - 1), "1024.0 KiB");
        assert_eq!(human(1 << 20), "1.0 MiB");
        assert_eq!(human(3 << 29), "1.5 GiB");
        assert_eq!(human(u64::MAX), "16.0 EiB");
    }
}
