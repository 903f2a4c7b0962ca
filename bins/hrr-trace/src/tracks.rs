//! `Tracks`: the trace's two processes, their tracks, and where each track's
//! time stands.
//!
//! Every track gets a small `tid` from one counter, named by a `thread_name`
//! metadata event the first time it is used. The counter is shared by both
//! processes because Perfetto keys threads by tid alone (a tid seen in two
//! processes looks like one thread that moved) and reads tids as 32-bit,
//! while archive tids are 64-bit OS thread ids and streams are addresses.
//! Process-level metadata uses `tid` = `pid`, which no track uses (tracks
//! start at [`FIRST_TRACK`]).
//!
//! Each track keeps a cursor: the end of the last thing placed on it. Slices
//! never start before it, so a track's slices never overlap (Perfetto drops
//! slices that do not nest) and its events come out in time order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Write};

use crate::json::TraceOut;

/// The process holding one track per application thread (API calls).
pub const APP_PID: u32 = 1;
/// The process holding one track per stream (device work).
pub const DEVICE_PID: u32 = 2;

/// The first track's tid; the ones below are the pids' own.
pub const FIRST_TRACK: u32 = 10;

/// One track of the trace.
#[derive(Debug, Clone, Copy)]
pub struct Track {
    /// The track's tid in the trace (under its pid).
    pub tid: u32,
    /// Nanoseconds (trace time) where the last slice or instant ended.
    pub cursor: u64,
}

/// Hashes a u64 key (thread id, stream handle) with one multiplication:
/// the keys are not attacker-chosen, and two lookups per event made
/// SipHash a visible cost.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // The table indexes by the low bits: fold the well-mixed high half in.
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        // Fibonacci hashing: the product's high bits depend on all of v.
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type ByKey = HashMap<u64, Track, BuildHasherDefault<KeyHasher>>;

/// The tracks created so far.
#[derive(Debug, Default)]
pub struct Tracks {
    next_tid: u32,
    threads: ByKey,
    streams: ByKey,
    device_wide: Option<Track>,
    app_named: bool,
    device_named: bool,
}

impl Tracks {
    /// Number of application threads and streams seen.
    pub fn counts(&self) -> (usize, usize) {
        (self.threads.len(), self.streams.len())
    }

    /// The track of application thread `tid` (the archive's).
    pub fn thread<W: Write>(&mut self, out: &mut TraceOut<W>, tid: u64) -> io::Result<&mut Track> {
        if !self.threads.contains_key(&tid) {
            if !std::mem::replace(&mut self.app_named, true) {
                name_process(out, APP_PID, "application", 0)?;
            }
            let order = self.threads.len() as u64;
            let track = self.new_track();
            name_track(out, APP_PID, track.tid, &format!("thread {tid}"), order)?;
            self.threads.insert(tid, track);
        }
        Ok(self.threads.get_mut(&tid).expect("inserted above"))
    }

    /// The track of `stream` (the archive's handle; 0 is the default stream).
    pub fn stream<W: Write>(
        &mut self,
        out: &mut TraceOut<W>,
        stream: u64,
    ) -> io::Result<&mut Track> {
        if !self.streams.contains_key(&stream) {
            self.name_device(out)?;
            // The default stream first, then the others as they appear.
            let order = if stream == 0 {
                1
            } else {
                2 + self.streams.len() as u64
            };
            let track = self.new_track();
            let mut buf = [0u8; 18];
            let name = format!("stream {}", hrr_core::hex::format_addr(stream, &mut buf));
            name_track(out, DEVICE_PID, track.tid, &name, order)?;
            self.streams.insert(stream, track);
        }
        Ok(self.streams.get_mut(&stream).expect("inserted above"))
    }

    /// The track of device-wide synchronisations (`device_sync`).
    pub fn device_wide<W: Write>(&mut self, out: &mut TraceOut<W>) -> io::Result<&mut Track> {
        if self.device_wide.is_none() {
            self.name_device(out)?;
            let track = self.new_track();
            name_track(out, DEVICE_PID, track.tid, "all streams", 0)?;
            self.device_wide = Some(track);
        }
        Ok(self.device_wide.as_mut().expect("set above"))
    }

    fn name_device<W: Write>(&mut self, out: &mut TraceOut<W>) -> io::Result<()> {
        if !std::mem::replace(&mut self.device_named, true) {
            name_process(out, DEVICE_PID, "device", 1)?;
        }
        Ok(())
    }

    fn new_track(&mut self) -> Track {
        let tid = FIRST_TRACK + self.next_tid;
        self.next_tid += 1;
        Track { tid, cursor: 0 }
    }
}

fn name_process<W: Write>(
    out: &mut TraceOut<W>,
    pid: u32,
    name: &str,
    order: u64,
) -> io::Result<()> {
    out.event(b'M', pid, pid)?
        .str("name", "process_name")
        .args_str("name", name);
    out.event(b'M', pid, pid)?
        .str("name", "process_sort_index")
        .args_u64("sort_index", order);
    Ok(())
}

fn name_track<W: Write>(
    out: &mut TraceOut<W>,
    pid: u32,
    tid: u32,
    name: &str,
    order: u64,
) -> io::Result<()> {
    out.event(b'M', pid, tid)?
        .str("name", "thread_name")
        .args_str("name", name);
    out.event(b'M', pid, tid)?
        .str("name", "thread_sort_index")
        .args_u64("sort_index", order);
    Ok(())
}
