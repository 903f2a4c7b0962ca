//! [`ParallelReader`]: one mapped events file parsed on several threads and
//! delivered in file order.
//!
//! The map is cut into chunks of about [`ParallelReader::CHUNK_BYTES`] that
//! end at a newline, so every line lies whole in one chunk. Worker threads
//! claim chunks in file order and parse each with an ordinary
//! [`EventReader`] over its bytes; the calling thread takes the parsed
//! chunks in file order and hands their events to the caller's sink. What a
//! chunk cannot know alone is settled there, in order: the line numbers (a
//! chunk's reader counts from its own start) and whether an `eof` trailer
//! came in an earlier chunk. So the events, the warnings and the first error
//! are exactly those one [`EventReader`] over the file yields (the tests
//! compare the two), with the same limits for hostile input.
//!
//! Responsibilities besides: memory stays bounded (at most
//! [`WINDOW_PER_THREAD`] chunks per worker are claimed ahead of the one the
//! caller is taking), a chunk's events are freed on the worker that
//! allocated them (glibc's `malloc` slows down for every thread when one
//! frees another's memory), and the pages of a parsed chunk are dropped
//! from the mapping as [`MappedEvents`] does.
//!
//! A compressed events file (`….zst`) has nothing to map: it is decoded as
//! a stream and parsed on the calling thread, delivered in batches of the
//! same events, warnings and errors.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use memmap2::{Mmap, UncheckedAdvice};

use super::{
    EventReader, MAX_LINE, MappedEvents, ReadError, ReadOptions, Warning, after_eof, is_zst,
    map_events, open_zst,
};
use crate::event::{DevTime, Event};

/// Chunks a worker may have claimed ahead of the caller (parsed, waiting to
/// be taken, or being parsed).
pub const WINDOW_PER_THREAD: usize = 4;

/// Why a [`ParallelReader::run`] stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ParallelError<E> {
    /// An event line is malformed (the error [`EventReader`] gives).
    #[error(transparent)]
    Read(ReadError),
    /// The sink failed.
    #[error(transparent)]
    Sink(E),
    /// A worker thread could not be started.
    #[error("starting an event reader thread")]
    Spawn(#[source] io::Error),
    /// A bug: a worker thread panicked.
    #[error("an event reader thread panicked")]
    Panicked,
}

/// A mapped events file, to be read on several threads (see the module docs).
pub struct ParallelReader {
    path: PathBuf,
    /// Empty for a compressed file, which is streamed instead.
    map: Mmap,
    /// The uncompressed length of a compressed file (its frame header's
    /// word; `None` for a mapped file).
    stream_len: Option<u64>,
    options: ReadOptions,
    threads: usize,
    chunk_bytes: usize,
}

impl ParallelReader {
    /// Bytes per chunk: about a thousand events, so that claiming and
    /// reordering chunks costs nothing next to parsing them, and few enough
    /// that the first chunk is parsed quickly.
    pub const CHUNK_BYTES: usize = 256 << 10;

    /// Opens and maps an events file as [`EventReader::open_mapped`] does
    /// (a regular file; it must not shrink while it is read). One worker
    /// thread until [`ParallelReader::threads`] says otherwise.
    pub fn open(path: impl AsRef<Path>, options: ReadOptions) -> Result<Self, ReadError> {
        let path = path.as_ref();
        let (map, stream_len) = if is_zst(path) {
            let len = crate::zst::file_content_size(path).unwrap_or(0);
            let empty = memmap2::MmapOptions::new()
                .map_anon()
                .and_then(|m| m.make_read_only())
                .map_err(|source| ReadError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
            (empty, Some(len))
        } else {
            (map_events(path)?, None)
        };
        Ok(ParallelReader {
            map,
            stream_len,
            path: path.to_path_buf(),
            options,
            threads: 1,
            chunk_bytes: Self::CHUNK_BYTES,
        })
    }

    /// Parses on `n` worker threads (at least one; no more than there are
    /// chunks).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// Cuts chunks of about `n` bytes (at least one; a chunk always ends at
    /// a newline or the file's end, so a longer line makes a longer chunk).
    pub fn chunk_bytes(mut self, n: usize) -> Self {
        self.chunk_bytes = n.max(1);
        self
    }

    /// The file's length in bytes (what the sink's progress counts up to).
    pub fn len(&self) -> u64 {
        self.stream_len.unwrap_or(self.map.len() as u64)
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads every event: `convert` turns each into a `T` on the worker
    /// that parsed it (with its device timing, as
    /// [`EventReader::dev_time`] gives it); `sink` gets them on the calling
    /// thread, in file order, a chunk at a time, with the bytes read so far.
    ///
    /// Returns the warnings, in file order, when every event was delivered;
    /// else the first error in file order, after the events before it were
    /// delivered, or the sink's error (nothing after is delivered).
    pub fn run<T, E, C, S>(self, convert: C, mut sink: S) -> Result<Vec<Warning>, ParallelError<E>>
    where
        T: Send,
        C: Fn(Event, Option<DevTime>) -> T + Sync,
        S: FnMut(&[T], u64) -> Result<(), E>,
    {
        if self.stream_len.is_some() {
            return self.run_stream(convert, sink);
        }
        let chunks = self.map.len().div_ceil(self.chunk_bytes);
        let threads = self.threads.min(chunks).max(1);
        let claims = Claims {
            state: Mutex::new(ClaimState {
                next_start: 0,
                next_index: 0,
                taken: 0,
                stop: false,
            }),
            wake: Condvar::new(),
            window: threads * WINDOW_PER_THREAD,
        };
        let (tx, rx) = mpsc::channel::<Parsed<T>>();
        std::thread::scope(|scope| {
            let mut workers = Vec::with_capacity(threads);
            let mut recycle = Vec::with_capacity(threads);
            // Whatever way the caller's side ends, the workers stop.
            let _stop = StopOnDrop(&claims);
            for id in 0..threads {
                let (give_back, recycled) = mpsc::channel();
                let worker = Worker {
                    id,
                    reader: &self,
                    claims: &claims,
                    convert: &convert,
                    tx: tx.clone(),
                    recycled,
                };
                let handle = std::thread::Builder::new()
                    .name(format!("hrr-events-{id}"))
                    .spawn_scoped(scope, move || worker.run())
                    .map_err(ParallelError::Spawn)?;
                workers.push(handle);
                recycle.push(give_back);
            }
            // Only the workers' senders are left: the channel ends with them.
            drop(tx);
            let result = self.take_in_order(&rx, &claims, &recycle, &mut sink);
            claims.stop();
            drop(rx);
            let mut panicked = false;
            for w in workers {
                panicked |= w.join().is_err();
            }
            match result {
                // A chunk a dead worker never sent ends the delivery early.
                Ok(_) | Err(ParallelError::Panicked) if panicked => Err(ParallelError::Panicked),
                r => r,
            }
        })
    }

    /// [`ParallelReader::run`] of a compressed file: one reader over the
    /// decoded stream, on this thread, its events delivered a batch at a
    /// time.
    fn run_stream<T, E, C, S>(
        self,
        convert: C,
        mut sink: S,
    ) -> Result<Vec<Warning>, ParallelError<E>>
    where
        C: Fn(Event, Option<DevTime>) -> T,
        S: FnMut(&[T], u64) -> Result<(), E>,
    {
        const BATCH: usize = 1024;
        let stream = open_zst(&self.path).map_err(ParallelError::Read)?;
        let mut reader = EventReader::from_reader(stream, self.path.clone()).options(self.options);
        let mut items = Vec::with_capacity(BATCH);
        while let Some(item) = reader.next() {
            match item {
                Ok(e) => items.push(convert(e, reader.dev_time())),
                Err(e) => {
                    sink(&items, reader.bytes_read()).map_err(ParallelError::Sink)?;
                    return Err(ParallelError::Read(e));
                }
            }
            if items.len() == BATCH {
                sink(&items, reader.bytes_read()).map_err(ParallelError::Sink)?;
                items.clear();
            }
        }
        if !items.is_empty() {
            sink(&items, reader.bytes_read()).map_err(ParallelError::Sink)?;
        }
        Ok(reader.take_warnings())
    }

    /// The caller's side: takes parsed chunks in file order and settles
    /// what depends on the chunks before them.
    fn take_in_order<T, E>(
        &self,
        rx: &mpsc::Receiver<Parsed<T>>,
        claims: &Claims,
        recycle: &[mpsc::Sender<Vec<T>>],
        sink: &mut impl FnMut(&[T], u64) -> Result<(), E>,
    ) -> Result<Vec<Warning>, ParallelError<E>> {
        let mut early: BTreeMap<usize, Parsed<T>> = BTreeMap::new();
        let mut next = 0;
        // Lines before the chunk being taken.
        let mut lines = 0;
        let mut eof_line = None;
        let mut warnings = Vec::new();
        let mut done = false;
        while !done {
            let Ok(parsed) = rx.recv() else {
                // Every worker is gone: all chunks were sent, unless one
                // panicked (its chunk is missing).
                return if early.is_empty() {
                    Ok(warnings)
                } else {
                    Err(ParallelError::Panicked)
                };
            };
            early.insert(parsed.index, parsed);
            while let Some(p) = early.remove(&next) {
                next += 1;
                claims.taken(next);
                if let (Some(eof), Some(first)) = (eof_line, p.first_line) {
                    // The chunk's reader did not know of the trailer.
                    return Err(ParallelError::Read(after_eof(
                        self.path.clone(),
                        lines + first,
                        eof,
                    )));
                }
                warnings.extend(p.warnings.into_iter().map(|w| w.shift_lines(lines)));
                sink(&p.items, p.end as u64).map_err(ParallelError::Sink)?;
                if let Some(e) = p.error {
                    return Err(ParallelError::Read(match p.eof_line {
                        // Its message names the trailer's line, too.
                        Some(eof) if p.after_eof => {
                            after_eof(self.path.clone(), lines + e.line(), lines + eof)
                        }
                        _ => e.shift_lines(lines),
                    }));
                }
                if let Some(eof) = p.eof_line {
                    eof_line.get_or_insert(lines + eof);
                }
                lines += p.lines;
                done = p.end == self.map.len();
                // A worker that has finished no longer takes them back; the
                // events are then freed here.
                let _ = recycle[p.worker].send(p.items);
            }
        }
        Ok(warnings)
    }
}

/// One chunk, parsed.
struct Parsed<T> {
    /// Its place in the file: chunk 0, 1, …
    index: usize,
    /// The worker that parsed it (and allocated its events).
    worker: usize,
    /// Offset just past its last byte.
    end: usize,
    items: Vec<T>,
    /// Lines counted from the chunk's start, as are the lines below.
    error: Option<ReadError>,
    warnings: Vec<Warning>,
    lines: u64,
    first_line: Option<u64>,
    eof_line: Option<u64>,
    /// `error` is that of an event after `eof_line`.
    after_eof: bool,
}

/// Where the chunks stand; workers claim the next one under its lock.
struct Claims {
    state: Mutex<ClaimState>,
    /// Signalled when the caller takes a chunk, or on stop.
    wake: Condvar,
    window: usize,
}

struct ClaimState {
    /// Offset of the first byte no chunk holds yet.
    next_start: usize,
    /// Index of the next chunk to claim.
    next_index: usize,
    /// Chunks the caller has taken.
    taken: usize,
    stop: bool,
}

impl Claims {
    fn lock(&self) -> MutexGuard<'_, ClaimState> {
        // Nothing under the lock can leave the state half-updated.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn taken(&self, n: usize) {
        self.lock().taken = n;
        self.wake.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }

    /// The next chunk of `data` to parse, `(index, start, end)`, once the
    /// window allows it; `None` when there is none or the reading stopped.
    fn claim(&self, data: &[u8], chunk_bytes: usize) -> Option<(usize, usize, usize)> {
        let mut s = self.lock();
        while !s.stop && s.next_index >= s.taken + self.window {
            s = self.wake.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        if s.stop || s.next_start >= data.len() {
            return None;
        }
        let start = s.next_start;
        // Found under the lock, so that the file is scanned for chunk ends
        // once. No further than a line may reach: a line no longer than
        // MAX_LINE ends within MAX_LINE + 1 bytes of `from`. Without a
        // newline there, the chunk is cut: it holds more than MAX_LINE bytes
        // of one line, which its reader reports as too long, so nothing
        // after it is read — an endless line costs MAX_LINE bytes, as it
        // does [`EventReader`], not a pass over the rest of the file.
        let from = start.saturating_add(chunk_bytes - 1).min(data.len());
        let reach = from.saturating_add(MAX_LINE as usize + 1).min(data.len());
        let end = match memchr::memchr(b'\n', &data[from..reach]) {
            Some(i) => from + i + 1,
            None => reach,
        };
        let index = s.next_index;
        s.next_start = if end < data.len() && data[end - 1] != b'\n' {
            data.len()
        } else {
            end
        };
        s.next_index += 1;
        Some((index, start, end))
    }
}

/// Stops the workers when dropped: the caller's side ended, by an error,
/// a panic in the sink, or normally (they have finished then).
struct StopOnDrop<'a>(&'a Claims);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

struct Worker<'a, T, C> {
    id: usize,
    reader: &'a ParallelReader,
    claims: &'a Claims,
    convert: &'a C,
    tx: mpsc::Sender<Parsed<T>>,
    /// Item buffers the caller is done with.
    recycled: mpsc::Receiver<Vec<T>>,
}

impl<T, C: Fn(Event, Option<DevTime>) -> T> Worker<'_, T, C> {
    fn run(self) {
        // A panic here must not leave the others waiting for a chunk that
        // will never be taken.
        let _stop = StopOnPanic(self.claims);
        let data: &[u8] = &self.reader.map;
        let mut spare: Vec<Vec<T>> = Vec::new();
        while let Some((index, start, end)) = self.claims.claim(data, self.reader.chunk_bytes) {
            for mut items in self.recycled.try_iter() {
                // Dropped here, where they were allocated.
                items.clear();
                if spare.len() < WINDOW_PER_THREAD {
                    spare.push(items);
                }
            }
            let mut items = spare.pop().unwrap_or_default();
            let mut reader = EventReader::from_reader(&data[start..end], self.reader.path.clone())
                .options(self.reader.options);
            let mut error = None;
            while let Some(item) = reader.next() {
                match item {
                    Ok(e) => items.push((self.convert)(e, reader.dev_time())),
                    Err(e) => error = Some(e),
                }
            }
            if error.is_none() && end < data.len() && data[end - 1] != b'\n' {
                // A chunk cut inside an over-long line (see `Claims::claim`)
                // ends in that line's error; should it not, reading still
                // stops here, never short of the file without saying so.
                error = Some(ReadError::Malformed {
                    path: self.reader.path.clone(),
                    line: reader.line() + 1,
                    reason: format!("line longer than {MAX_LINE} bytes"),
                });
            }
            release_pages(&self.reader.map, start, end);
            let parsed = Parsed {
                index,
                worker: self.id,
                end,
                items,
                error,
                warnings: reader.take_warnings(),
                lines: reader.line(),
                first_line: reader.first_line,
                eof_line: reader.eof_line,
                after_eof: reader.after_eof,
            };
            if self.tx.send(parsed).is_err() {
                return;
            }
        }
    }
}

struct StopOnPanic<'a>(&'a Claims);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Drops the pages lying wholly inside `start..end` from the mapping, as
/// [`MappedEvents`] does behind its reader. Pages shared with a neighbour
/// chunk stay: another worker may be reading them.
fn release_pages(map: &Mmap, start: usize, end: usize) {
    let page = page_size();
    let lo = start.next_multiple_of(page);
    let hi = end - end % page;
    if hi > lo {
        // SAFETY: the range lies inside the mapping, starts and ends on page
        // boundaries, and holds bytes of this chunk only, which nothing
        // reads again; the map is a read-only file mapping, so dropping its
        // pages loses nothing (an access would read them from the file
        // again). A failure only leaves the pages mapped.
        let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, lo, hi - lo) };
    }
}

fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        // Never below what madvise accepts; a multiple of the real size.
        usize::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or(MappedEvents::RELEASE_EVERY)
    })
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use proptest::prelude::*;

    use super::*;
    use crate::event::{Dir, Op};
    use crate::hex::Addr;

    fn line(seq: u64, dev: Option<DevTime>) -> String {
        let e = Event {
            seq,
            t: seq * 10,
            tid: 1,
            api: "hipMemcpyAsync".into(),
            ret: 0,
            dev: 0,
            op: Op::Memcpy {
                dir: Dir::D2h,
                dst: Addr(0x1000),
                src: Addr(0x2000),
                size: 4,
                stream: Some(Addr(0x30)),
                blob: None,
            },
        };
        let mut v = Vec::new();
        e.write_line_timed(dev, &mut v);
        String::from_utf8(v).unwrap()
    }

    /// Events (seq and device time) then the error, and the warnings.
    type Outcome = (Vec<Result<(u64, Option<DevTime>), String>>, Vec<Warning>);

    fn sequential(path: &Path, options: ReadOptions) -> Outcome {
        let mut r = EventReader::open_mapped(path, options).unwrap();
        let got = std::iter::from_fn(|| {
            r.next()
                .map(|e| e.map(|e| (e.seq, r.dev_time())).map_err(|e| e.to_string()))
        })
        .collect::<Vec<_>>();
        let failed = got.last().is_some_and(Result::is_err);
        // A failed parallel read returns no warnings.
        (
            got,
            if failed {
                Vec::new()
            } else {
                r.take_warnings()
            },
        )
    }

    fn parallel(path: &Path, options: ReadOptions, threads: usize, chunk: usize) -> Outcome {
        let reader = ParallelReader::open(path, options)
            .unwrap()
            .threads(threads)
            .chunk_bytes(chunk);
        let len = reader.len();
        let mut got = Vec::new();
        let mut progress = 0;
        let result = reader.run(
            |e, dev| (e.seq, dev),
            |items: &[(u64, Option<DevTime>)], bytes| {
                assert!(bytes > progress && bytes <= len, "{progress} then {bytes}");
                progress = bytes;
                got.extend(items.iter().map(|&i| Ok(i)));
                Ok::<(), Infallible>(())
            },
        );
        match result {
            Ok(warnings) => {
                assert_eq!(progress, len, "progress ends at the file's end");
                (got, warnings)
            }
            Err(e) => {
                got.push(Err(e.to_string()));
                (got, Vec::new())
            }
        }
    }

    fn file(text: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("events.ndjson");
        std::fs::write(&path, text).unwrap();
        (t, path)
    }

    /// The kinds of line an events file may hold, good and bad.
    fn a_line(seq: u64, kind: u8) -> String {
        match kind {
            0..=9 => line(seq, None),
            10 => line(seq, Some(DevTime { t: seq, ns: 3 })),
            11 => "\n".into(),
            12 => "  \r\n".into(),
            13 => format!("{{\"seq\":{seq},\"api\":\"hipX\",\"op\":\"future_op\"}}\n"),
            14 => format!("{{\"seq\":{seq},\"api\":\"eof\",\"op\":\"eof\",\"events\":{seq}}}\n"),
            15 => format!("{{\"seq\":{seq},\"op\":\n"),
            _ => format!("{{\"seq\":{seq},\"api\":\"hipFree\",\"op\":\"free\"}}\n"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn reads_what_one_reader_reads(
            kinds in proptest::collection::vec(prop_oneof![8 => 0u8..11, 1 => 11u8..17], 0..40),
            // Cut the last line short: a torn tail, or a line without its newline.
            cut in proptest::option::of(0usize..300),
            threads in 1usize..4,
            chunk in prop_oneof![1usize..40, 40usize..2000],
            strict: bool,
        ) {
            let mut text: String = kinds
                .iter()
                .enumerate()
                .map(|(i, &k)| a_line(i as u64, k))
                .collect();
            if let Some(cut) = cut {
                let last = text[..text.len().saturating_sub(1)].rfind('\n').map_or(0, |i| i + 1);
                text.truncate(last + cut.min(text.len() - last));
            }
            let (_t, path) = file(text.as_bytes());
            let options = ReadOptions { strict };
            prop_assert_eq!(
                parallel(&path, options, threads, chunk),
                sequential(&path, options),
                "{:?}", text
            );
        }
    }

    #[test]
    fn an_event_after_an_eof_in_an_earlier_chunk_is_an_error() {
        let text = format!("{}{}\n\n{}", a_line(1, 0), a_line(2, 14), a_line(3, 0));
        let (_t, path) = file(text.as_bytes());
        // A line per chunk: the eof and the event after it are parsed apart.
        let got = parallel(&path, ReadOptions::default(), 2, 1);
        assert_eq!(
            got.0,
            [
                Ok((1, None)),
                Ok((2, None)),
                Err(format!(
                    "{}:5: malformed event: event after the eof trailer of line 2; the archive \
                     was written to after it was finished",
                    path.display()
                ))
            ]
        );
        assert_eq!(got, sequential(&path, ReadOptions::default()));
    }

    #[test]
    fn line_numbers_count_the_chunks_before() {
        let good = format!("{}\n{}{}", a_line(1, 0), a_line(2, 13), a_line(3, 0));
        let bad = format!("{good}{}{}", a_line(4, 15), a_line(5, 0));
        let (_t, good) = file(good.as_bytes());
        let (_u, bad) = file(bad.as_bytes());
        for chunk in [1, 50, 1 << 20] {
            let (_, warnings) = parallel(&good, ReadOptions::default(), 3, chunk);
            assert_eq!(
                warnings,
                [Warning::UnknownOp {
                    path: good.clone(),
                    line: 3,
                    op: "future_op".into()
                }],
                "chunk {chunk}"
            );
            let (events, _) = parallel(&bad, ReadOptions::default(), 3, chunk);
            let e = events.last().unwrap().as_ref().unwrap_err();
            assert!(e.contains("events.ndjson:5: malformed event"), "{e}");
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_refused_as_one_reader_refuses_it() {
        let mut text = a_line(1, 0).into_bytes();
        text.extend(std::iter::repeat_n(
            b' ',
            super::super::MAX_LINE as usize + 10,
        ));
        text.extend_from_slice(b"x\n");
        text.extend_from_slice(a_line(3, 0).as_bytes());
        let (_t, path) = file(&text);
        let want = sequential(&path, ReadOptions::default());
        assert!(
            matches!(&want.0[..], [Ok(_), Err(e)] if e.contains(":2: malformed event: line longer than")),
            "{:?}",
            want.0
        );
        for chunk in [1, 4096, ParallelReader::CHUNK_BYTES] {
            assert_eq!(parallel(&path, ReadOptions::default(), 3, chunk), want);
        }
    }

    #[test]
    fn a_chunk_is_never_sought_further_than_a_line_may_reach() {
        // No newline anywhere: the chunk is cut a line's length past where
        // its end was sought, and nothing after it is claimed (its reader
        // reports the line as too long), so an endless line costs
        // MAX_LINE bytes, not the file.
        const MAX: usize = super::super::MAX_LINE as usize;
        let claims = Claims {
            state: Mutex::new(ClaimState {
                next_start: 0,
                next_index: 0,
                taken: 0,
                stop: false,
            }),
            wake: Condvar::new(),
            window: 8,
        };
        let data = vec![b'a'; 2 * MAX + 4096];
        let (_, start, end) = claims.claim(&data, 100).unwrap();
        assert_eq!((start, end), (0, 99 + MAX + 1));
        assert!(claims.claim(&data, 100).is_none());
        // A newline within reach ends the chunk there, as always.
        let mut data = data;
        data[MAX + 50] = b'\n';
        let claims = Claims {
            state: Mutex::new(ClaimState {
                next_start: 0,
                next_index: 0,
                taken: 0,
                stop: false,
            }),
            wake: Condvar::new(),
            window: 8,
        };
        assert_eq!(claims.claim(&data, 100).unwrap(), (0, 0, MAX + 51));
        let (_, start, end) = claims.claim(&data, 100).unwrap();
        assert_eq!((start, end), (MAX + 51, MAX + 51 + 99 + MAX + 1));
    }

    #[test]
    fn an_endless_line_is_an_error_after_the_events_before_it() {
        let mut text = a_line(1, 0).into_bytes();
        text.resize(text.len() + 3 * super::super::MAX_LINE as usize, b'a');
        let (_t, path) = file(&text);
        let want = sequential(&path, ReadOptions::default());
        assert!(
            matches!(&want.0[..], [Ok(_), Err(e)] if e.ends_with(":2: malformed event: line longer than 16777216 bytes")),
            "{:?}",
            want.0
        );
        for (threads, chunk) in [(1, 1), (3, 4096), (2, ParallelReader::CHUNK_BYTES)] {
            assert_eq!(
                parallel(&path, ReadOptions::default(), threads, chunk),
                want
            );
        }
    }

    #[test]
    fn the_sink_stops_the_reading() {
        let text: String = (0..100).map(|i| a_line(i, 0)).collect();
        let (_t, path) = file(text.as_bytes());
        let mut calls = 0;
        let r = ParallelReader::open(&path, ReadOptions::default())
            .unwrap()
            .threads(2)
            .chunk_bytes(1)
            .run(
                |e, _| e.seq,
                |items: &[u64], _| {
                    calls += 1;
                    if items == [3] { Err("full") } else { Ok(()) }
                },
            );
        assert!(matches!(r, Err(ParallelError::Sink("full"))));
        assert_eq!(calls, 4, "nothing after the sink's error");
    }

    #[test]
    fn a_panicking_worker_is_an_error_not_a_hang() {
        let text: String = (0..100).map(|i| a_line(i, 0)).collect();
        let (_t, path) = file(text.as_bytes());
        for threads in [1, 3] {
            let r = ParallelReader::open(&path, ReadOptions::default())
                .unwrap()
                .threads(threads)
                .chunk_bytes(1)
                .run(
                    |e, _| assert!(e.seq != 50, "a bug"),
                    |_: &[()], _| Ok::<(), Infallible>(()),
                );
            assert!(matches!(r, Err(ParallelError::Panicked)), "{r:?}");
        }
    }
}
