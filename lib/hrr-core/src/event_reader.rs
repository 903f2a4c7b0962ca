//! `EventReader`: streaming reader of `events.ndjson`, one line at a time.
//!
//! Memory is bounded by the longest line: one `BufReader` and one reused line
//! buffer, never the whole file. A line that lies whole inside the reader's
//! buffer is parsed there without a copy (only one straddling the buffer's
//! end is copied out), with borrowed strings and no intermediate tree: by
//! [`crate::wire::scan`] when it has the common shape, by [`Event::parse`]
//! (serde) otherwise.
//!
//! Damage is handled by where it is, because that tells what happened:
//! - A last line without its `'\n'` that is not valid JSON is the torn tail
//!   of a writer that died mid-write. It yields nothing and records
//!   [`Warning::TornTail`]; everything before it is intact.
//! - Any other bad line is corruption: [`ReadError::Malformed`] naming file and
//!   line, and iteration stops (events after it cannot be trusted to be in
//!   order with what was lost).
//! - An unknown `op` is a newer hrr's addition: [`Warning::UnknownOp`] and
//!   skipped, or an error with [`ReadOptions::strict`].
//! - An event after the `eof` trailer is an error: a finished archive was
//!   appended to, and nothing after its end can be trusted.
//! - A line longer than [`MAX_LINE`] is an error, so that a file of one
//!   endless line cannot take all memory; the events file itself must be a
//!   regular file (a FIFO would block the reader for ever).
//!
//! [`EventReader::open_mapped`] reads the file through a memory map instead
//! ([`MappedEvents`]): every line is then parsed where it lies in the page
//! cache, without the kernel's copy into a buffer, for readers that must go
//! fast; the same limits and errors apply. [`ParallelReader`] goes further
//! for `hrr-trace`: chunks of the mapped file parsed on several threads and
//! delivered in file order, with one reader's events, warnings and errors.
//!
//! An events file compressed with zstd (`events.ndjson.zst`, docs/FORMAT.md)
//! is read through [`crate::zst::Decoder`] as a stream ([`open_zst`]):
//! memory stays bounded by the decoder's window and the longest line, and a
//! truncated or corrupt frame is a read error naming the file. The mapped
//! and parallel readers read such a file as that stream too (a compressed
//! file has nothing to map).

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use memmap2::{Mmap, UncheckedAdvice};

use crate::event::{DevTime, Event};
use crate::wire::{EventError, Wire};

mod ending;
mod parallel;
pub use ending::{Ending, ending};
pub use parallel::{ParallelError, ParallelReader};

/// How strictly to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Unknown ops are errors instead of warnings.
    pub strict: bool,
}

impl ReadOptions {
    /// Options with `strict` set.
    pub fn strict() -> ReadOptions {
        ReadOptions { strict: true }
    }
}

/// Something the reader recovered from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// The last line was cut short (no newline, not parseable) and was ignored.
    TornTail {
        /// The events file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// Bytes in the torn line.
        bytes: u64,
    },
    /// A line with an `op` this hrr does not know was skipped.
    UnknownOp {
        /// The events file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The op.
        op: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TornTail { path, line, bytes } => write!(
                f,
                "{}:{line}: torn last line ({bytes} bytes, no newline) ignored; the writer \
                 stopped mid-line (it died, or a write failed), earlier events are intact",
                path.display()
            ),
            Warning::UnknownOp { path, line, op } => write!(
                f,
                "{}:{line}: unknown op `{op}` skipped (written by a newer hrr?)",
                path.display()
            ),
        }
    }
}

/// Why reading stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}", path.display())]
    /// The events file could not be opened.
    Open {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// Not a regular file, or a symlink inside the archive.
    #[error(transparent)]
    File(crate::safe_fs::OpenError),
    #[error("{}:{line}: read failed", path.display())]
    /// Reading the events file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The 1-based line being read.
        line: u64,
        /// What the system said.
        source: io::Error,
    },
    #[error("{}:{line}: malformed event: {reason}", path.display())]
    /// A line is not a valid event.
    Malformed {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// Why (serde's message, or the missing field).
        reason: String,
    },
    #[error("{}:{line}: unknown op `{op}` (strict mode)", path.display())]
    /// A line with an op this hrr does not know, under strict reading.
    UnknownOp {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The op.
        op: String,
    },
}

impl ReadError {
    /// The 1-based line the error is about (0 when opening failed).
    pub fn line(&self) -> u64 {
        match self {
            ReadError::Open { .. } | ReadError::File(_) => 0,
            ReadError::Io { line, .. }
            | ReadError::Malformed { line, .. }
            | ReadError::UnknownOp { line, .. } => *line,
        }
    }
}

impl ReadError {
    /// Moves the error `lines` lines down: it was found by a reader that
    /// started that many lines into the file.
    fn shift_lines(mut self, lines: u64) -> ReadError {
        match &mut self {
            ReadError::Open { .. } | ReadError::File(_) => {}
            ReadError::Io { line, .. }
            | ReadError::Malformed { line, .. }
            | ReadError::UnknownOp { line, .. } => *line += lines,
        }
        self
    }
}

impl Warning {
    /// Moves the warning `lines` lines down (see [`ReadError::shift_lines`]).
    fn shift_lines(mut self, lines: u64) -> Warning {
        match &mut self {
            Warning::TornTail { line, .. } | Warning::UnknownOp { line, .. } => *line += lines,
        }
        self
    }
}

/// Iterator over the events of one NDJSON stream.
pub struct EventReader<R = BufReader<File>> {
    reader: R,
    path: PathBuf,
    options: ReadOptions,
    buf: Vec<u8>,
    line: u64,
    bytes_read: u64,
    warnings: Vec<Warning>,
    /// `dev_t`/`dev_ns` of the event last returned.
    dev_time: Option<DevTime>,
    done: bool,
    /// Line of the `eof` trailer, once read.
    eof_line: Option<u64>,
    /// The first line that was not blank: what an `eof` trailer before the
    /// reader's first line would make an error ([`parallel`] needs it).
    first_line: Option<u64>,
    /// The reader stopped at a line after the `eof` trailer (its error
    /// names the trailer's line too).
    after_eof: bool,
    /// See [`EventReader::mentioning`].
    needles: Vec<memchr::memmem::Finder<'static>>,
}

/// Longest event line read (a launch with a 1 MiB argument buffer is a
/// little over 2 MiB of hex).
pub const MAX_LINE: u64 = 16 << 20;

/// Read buffer size: large enough that a syscall is amortised over hundreds of lines.
const READ_BUFFER: usize = 256 * 1024;

/// Opens an events file: a regular file (a symlink, FIFO or device is refused).
fn open_events(path: &Path) -> Result<File, ReadError> {
    use crate::safe_fs::{Follow, OpenError, open_regular};
    let (file, _) = open_regular(path, Follow::No).map_err(|e| match e {
        OpenError::Io { path, source } => ReadError::Open { path, source },
        OpenError::NotFound { path } => ReadError::Open {
            path,
            source: io::ErrorKind::NotFound.into(),
        },
        e => ReadError::File(e),
    })?;
    Ok(file)
}

impl EventReader<BufReader<File>> {
    /// Opens an events file: a regular file inside an archive (a symlink,
    /// FIFO or device is refused).
    pub fn open(path: impl AsRef<Path>, options: ReadOptions) -> Result<Self, ReadError> {
        let path = path.as_ref();
        Ok(EventReader::from_reader(open_buffered(path)?, path).options(options))
    }
}

/// The events file `path` opened as [`EventReader::open`] opens it.
pub(crate) fn open_buffered(path: &Path) -> Result<BufReader<File>, ReadError> {
    Ok(BufReader::with_capacity(READ_BUFFER, open_events(path)?))
}

/// A compressed events file's content, streamed.
pub type ZstEvents = BufReader<crate::zst::Decoder<BufReader<File>>>;

/// Whether `path` names a compressed events file (`….zst`).
pub fn is_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Opens a compressed events file (a regular file, as [`EventReader::open`]
/// requires) and decodes it as it is read.
pub fn open_zst(path: &Path) -> Result<ZstEvents, ReadError> {
    let file = BufReader::with_capacity(READ_BUFFER, open_events(path)?);
    let decoder = crate::zst::Decoder::new(file, u64::MAX).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(BufReader::with_capacity(READ_BUFFER, decoder))
}

impl EventReader<MappedEvents> {
    /// Opens an events file as [`EventReader::open`] does, and reads it
    /// through a memory map ([`MappedEvents`]): faster, for the same events,
    /// warnings and errors.
    ///
    /// The file must not shrink while it is read (an archive is not
    /// rewritten once written; a writer still appending is fine): reading a
    /// mapped page past a new end raises `SIGBUS`.
    pub fn open_mapped(path: impl AsRef<Path>, options: ReadOptions) -> Result<Self, ReadError> {
        let path = path.as_ref();
        let events = if is_zst(path) {
            MappedEvents {
                source: Source::Stream(Box::new(open_zst(path)?)),
            }
        } else {
            MappedEvents::new(map_events(path)?)
        };
        Ok(EventReader::from_reader(events, path).options(options))
    }
}

/// Opens an events file as [`EventReader::open`] does and maps it whole.
fn map_events(path: &Path) -> Result<Mmap, ReadError> {
    let file = open_events(path)?;
    // SAFETY: a regular file mapped read-only. No hrr tool shrinks an
    // events file in place (writers append; `hrr-play --repair` writes
    // a copy and renames it over), the blob store maps blobs on the same
    // ground, and the mapping's length is fixed here, so a writer
    // appending to an unfinished archive changes nothing we read.
    unsafe { Mmap::map(&file) }.map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// The error for a line after the `eof` trailer of line `eof`.
fn after_eof(path: PathBuf, line: u64, eof: u64) -> ReadError {
    ReadError::Malformed {
        path,
        line,
        reason: format!(
            "event after the eof trailer of line {eof}; the archive was written to after it \
             was finished"
        ),
    }
}

/// An events file mapped into memory, read as one buffer holding the rest
/// of the file: lines are parsed where they lie, and the pages are never
/// copied out of the page cache.
///
/// Pages already read are unmapped behind the reader (`MADV_DONTNEED`) every
/// [`MappedEvents::RELEASE_EVERY`] bytes, so resident memory stays bounded
/// though the whole file is mapped.
pub struct MappedEvents {
    source: Source,
}

/// What a [`MappedEvents`] reads.
enum Source {
    /// The mapped file.
    Map {
        map: Mmap,
        pos: usize,
        /// Bytes before this offset were released.
        released: usize,
    },
    /// A compressed file, decoded as it is read.
    Stream(Box<ZstEvents>),
}

impl MappedEvents {
    /// Bytes read between releases of the pages behind the reader; a
    /// multiple of every page size Linux uses, as `madvise` needs.
    pub const RELEASE_EVERY: usize = 8 << 20;

    fn new(map: Mmap) -> MappedEvents {
        MappedEvents {
            source: Source::Map {
                map,
                pos: 0,
                released: 0,
            },
        }
    }
}

impl Read for MappedEvents {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = (&self.fill_buf()?[..]).read(out)?;
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for MappedEvents {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match &mut self.source {
            Source::Map { map, pos, .. } => Ok(&map[*pos..]),
            Source::Stream(s) => s.fill_buf(),
        }
    }

    fn consume(&mut self, n: usize) {
        let (map, pos, released) = match &mut self.source {
            Source::Map { map, pos, released } => (map, pos, released),
            Source::Stream(s) => return s.consume(n),
        };
        *pos = (*pos + n).min(map.len());
        if *pos - *released >= Self::RELEASE_EVERY {
            let end = *pos - *pos % Self::RELEASE_EVERY;
            // SAFETY: the range lies inside the mapping and starts and ends
            // on page boundaries; the map is a read-only file mapping, so
            // dropping its pages loses nothing (a later access would read
            // them from the file again), and nothing before `pos` is read
            // again. A failure only leaves the pages mapped.
            let _ = unsafe {
                map.unchecked_advise_range(UncheckedAdvice::DontNeed, *released, end - *released)
            };
            *released = end;
        }
    }
}

impl<R: BufRead> EventReader<R> {
    /// Reads events from any buffered reader; `name` is used in messages.
    pub fn from_reader(reader: R, name: impl Into<PathBuf>) -> Self {
        EventReader {
            reader,
            path: name.into(),
            options: ReadOptions::default(),
            buf: Vec::with_capacity(1024),
            line: 0,
            bytes_read: 0,
            warnings: Vec::new(),
            dev_time: None,
            done: false,
            eof_line: None,
            first_line: None,
            after_eof: false,
            needles: Vec::new(),
        }
    }

    /// Only the lines holding one of `words` are parsed; the others are
    /// read, counted and passed over like blank lines, unchecked. For a
    /// scan that wants a few kinds of events out of many (replay's
    /// placement plan reads the allocations of a 100k-launch archive in a
    /// tenth of the time), where a word that also appears in other lines
    /// costs only their parsing.
    pub fn mentioning(mut self, words: &[&str]) -> Self {
        self.needles = words
            .iter()
            .map(|w| memchr::memmem::Finder::new(w.as_bytes()).into_owned())
            .collect();
        self
    }

    /// Sets the read options.
    pub fn options(mut self, options: ReadOptions) -> Self {
        self.options = options;
        self
    }

    /// What was recovered from so far.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Takes the warnings collected so far.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// The device timing of the event `next` returned last, when it has one
    /// (events a timed replay wrote; see [`DevTime`]).
    pub fn dev_time(&self) -> Option<DevTime> {
        self.dev_time
    }

    /// The last line number read (1-based).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The reader it reads from, where it stopped.
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// Bytes consumed so far (for progress reporting).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The file (or name) events are read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn fail(&mut self, e: ReadError) -> Option<Result<Event, ReadError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<R: BufRead> EventReader<R> {
    /// Reads and parses the next line; `None` at the end.
    fn read_line(&mut self) -> io::Result<Option<ParsedLine>> {
        // Fast path: a whole line inside the reader's buffer is parsed in
        // place, without copying it out.
        let buf = self.reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        // No further than a line may reach: a mapped file's buffer is all
        // of it. A longer line goes the slow way, which reports it.
        let window = &buf[..buf.len().min(MAX_LINE as usize)];
        if let Some(pos) = memchr::memchr(b'\n', window) {
            let parsed = parse_wanted(&self.needles, &buf[..pos]);
            self.reader.consume(pos + 1);
            return Ok(Some(ParsedLine {
                bytes: pos as u64 + 1,
                terminated: true,
                too_long: false,
                parsed,
            }));
        }
        // The line straddles the buffer's end (or is the unterminated last
        // one); read at most one byte more than a line may have.
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut self.buf)?;
        if n as u64 > MAX_LINE {
            return Ok(Some(ParsedLine {
                bytes: n as u64,
                terminated: false,
                too_long: true,
                parsed: None,
            }));
        }
        let terminated = self.buf.last() == Some(&b'\n');
        Ok(Some(ParsedLine {
            bytes: n as u64,
            terminated,
            too_long: false,
            parsed: parse_wanted(&self.needles, &self.buf),
        }))
    }
}

/// One line as read: its length with the newline, whether it had one, and
/// what it parsed to (`None` for a blank line).
struct ParsedLine {
    bytes: u64,
    terminated: bool,
    /// Longer than [`MAX_LINE`]: not read to its end.
    too_long: bool,
    parsed: Option<Result<(Event, Option<DevTime>), EventError>>,
}

/// [`parse_line`], unless `needles` are given and `line` holds none of them.
fn parse_wanted(
    needles: &[memchr::memmem::Finder<'static>],
    line: &[u8],
) -> Option<Result<(Event, Option<DevTime>), EventError>> {
    if !needles.is_empty() && !needles.iter().any(|f| f.find(line).is_some()) {
        return None;
    }
    parse_line(line)
}

/// Parses one line; `None` for a blank one. The scanner handles the common
/// shape, serde everything else.
fn parse_line(line: &[u8]) -> Option<Result<(Event, Option<DevTime>), EventError>> {
    let text = line.trim_ascii();
    if text.is_empty() {
        return None;
    }
    // One `Wire`, filled and emptied where it lies (see `scan_into`).
    let mut wire = Wire::default();
    if !crate::wire::scan::scan_into(text, &mut wire) {
        wire = match serde_json::from_slice::<Wire<'_>>(text) {
            Ok(wire) => wire,
            Err(e) => return Some(Err(EventError::Json(e.to_string()))),
        };
    }
    let dev = wire.dev_time();
    Some(Event::from_wire_in(&mut wire).map(|e| (e, dev)))
}

impl<R: BufRead> Iterator for EventReader<R> {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let ParsedLine {
                bytes: n,
                terminated,
                too_long,
                parsed,
            } = match self.read_line() {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(source) => {
                    let line = self.line + 1;
                    return self.fail(ReadError::Io {
                        path: self.path.clone(),
                        line,
                        source,
                    });
                }
            };
            self.line += 1;
            self.bytes_read += n;
            if too_long {
                let line = self.line;
                return self.fail(ReadError::Malformed {
                    path: self.path.clone(),
                    line,
                    reason: format!("line longer than {MAX_LINE} bytes"),
                });
            }
            let Some(parsed) = parsed else { continue };
            self.first_line.get_or_insert(self.line);
            if let Some(eof) = self.eof_line {
                let e = after_eof(self.path.clone(), self.line, eof);
                self.after_eof = true;
                return self.fail(e);
            }
            match parsed {
                Ok((event, dev)) => {
                    self.dev_time = dev;
                    if matches!(event.op, crate::event::Op::Eof { .. }) {
                        self.eof_line = Some(self.line);
                    }
                    return Some(Ok(event));
                }
                Err(EventError::UnknownOp(op)) => {
                    if self.options.strict {
                        let line = self.line;
                        return self.fail(ReadError::UnknownOp {
                            path: self.path.clone(),
                            line,
                            op,
                        });
                    }
                    self.warnings.push(Warning::UnknownOp {
                        path: self.path.clone(),
                        line: self.line,
                        op,
                    });
                }
                Err(EventError::Json(_)) if !terminated => {
                    // Only the final line can lack its newline, so this is
                    // the end of the stream either way.
                    self.warnings.push(Warning::TornTail {
                        path: self.path.clone(),
                        line: self.line,
                        bytes: n,
                    });
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    let line = self.line;
                    return self.fail(ReadError::Malformed {
                        path: self.path.clone(),
                        line,
                        reason: e.to_string(),
                    });
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Dir, Op};
    use crate::hex::Addr;

    fn line(seq: u64) -> String {
        let e = Event {
            seq,
            t: seq * 10,
            tid: 1,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op: Op::Memcpy {
                dir: Dir::H2d,
                dst: Addr(0x1000),
                src: Addr(0x2000),
                size: 4,
                stream: None,
                blob: None,
            },
        };
        let mut v = Vec::new();
        e.write_line(&mut v);
        String::from_utf8(v).unwrap()
    }

    fn read(text: &str, opts: ReadOptions) -> (Vec<Result<u64, String>>, Vec<Warning>) {
        let mut r = EventReader::from_reader(text.as_bytes(), "events.ndjson").options(opts);
        let got = r
            .by_ref()
            .map(|e| e.map(|e| e.seq).map_err(|e| e.to_string()))
            .collect();
        (got, r.warnings().to_vec())
    }

    #[test]
    fn reads_in_order_skipping_blank_lines() {
        let text = format!("{}\n{}   \r\n{}", line(1), line(2), line(3));
        let (got, w) = read(&text, ReadOptions::default());
        assert_eq!(got, vec![Ok(1), Ok(2), Ok(3)]);
        assert!(w.is_empty());
    }

    #[test]
    fn a_reader_mentioning_words_parses_only_their_lines() {
        let alloc =
            r#"{"seq":2,"api":"hipMalloc","op":"alloc","ptr":"0x1000","size":64,"mem":"device"}"#;
        // The third line is not JSON: passed over unparsed, it is no error.
        let text = format!("{}{alloc}\nnot json at all\n{}", line(1), line(3));
        let r = EventReader::from_reader(text.as_bytes(), "events.ndjson").mentioning(&["alloc"]);
        let got: Vec<u64> = r.map(|e| e.unwrap().seq).collect();
        assert_eq!(got, [2]);
        let all: Vec<bool> = EventReader::from_reader(text.as_bytes(), "events.ndjson")
            .map(|e| e.is_ok())
            .collect();
        assert_eq!(all, [true, true, false]);
    }

    #[test]
    fn an_event_after_eof_is_an_error() {
        let eof = r#"{"seq":2,"api":"eof","op":"eof","events":2}"#;
        let text = format!("{}{eof}\n\n{}", line(1), line(3));
        let (got, _) = read(&text, ReadOptions::default());
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[2],
            Err(
                "events.ndjson:4: malformed event: event after the eof trailer of line 2; \
                 the archive was written to after it was finished"
                    .into()
            )
        );
        // Blank lines after eof are fine.
        let (got, _) = read(&format!("{eof}\n\n  \n"), ReadOptions::default());
        assert_eq!(got, vec![Ok(2)]);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error_not_a_buffer() {
        // An endless line: a reader of zeros never ends, and never buffers
        // more than the limit.
        let endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let mut r = EventReader::from_reader(endless, "zeros");
        let e = r.next().unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("zeros:1: malformed event: line longer than {MAX_LINE} bytes")
        );
        assert!(r.next().is_none());
    }

    #[test]
    fn only_a_regular_file_is_opened() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("events.ndjson");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = EventReader::open(&fifo, ReadOptions::default())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .ends_with("is a FIFO, not a regular file; refusing to read it"),
            "{e}"
        );
        let e = EventReader::open_mapped(&fifo, ReadOptions::default())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .ends_with("is a FIFO, not a regular file; refusing to read it"),
            "{e}"
        );
    }

    /// What a reader yields, in a form two readers can be compared by.
    type Outcome = (
        Vec<Result<(u64, Option<DevTime>), String>>,
        Vec<Warning>,
        u64,
        u64,
    );

    fn outcome<R: BufRead>(mut r: EventReader<R>) -> Outcome {
        let got = std::iter::from_fn(|| {
            r.next()
                .map(|e| e.map(|e| (e.seq, r.dev_time())).map_err(|e| e.to_string()))
        })
        .collect();
        (got, r.warnings().to_vec(), r.line(), r.bytes_read())
    }

    /// The events file `text`, read both ways.
    fn both_ways(text: &[u8]) -> (Outcome, Outcome) {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("events.ndjson");
        std::fs::write(&path, text).unwrap();
        let o = ReadOptions::default();
        (
            outcome(EventReader::open(&path, o).unwrap()),
            outcome(EventReader::open_mapped(&path, o).unwrap()),
        )
    }

    #[test]
    fn the_mapped_reader_reads_what_the_buffered_one_does() {
        let mut timed = Vec::new();
        Event::parse(line(3).as_bytes())
            .unwrap()
            .write_line_timed(Some(DevTime { t: 50, ns: 7 }), &mut timed);
        let timed = String::from_utf8(timed).unwrap();
        let unknown = "{\"seq\":4,\"api\":\"hipX\",\"op\":\"graph_launch\"}\n";
        let cases = [
            String::new(),
            "\n \n".to_string(),
            format!("{}\n{}{timed}{unknown}{}", line(1), line(2), line(5)),
            // A torn tail, a malformed middle line, an event after eof.
            format!("{}{}", line(1), &line(2)[..20]),
            format!("{}{{\"seq\":2,\"op\":\n{}", line(1), line(3)),
            format!(
                "{}{{\"seq\":2,\"api\":\"eof\",\"op\":\"eof\",\"events\":2}}\n{}",
                line(1),
                line(3)
            ),
        ];
        for text in cases {
            let (buffered, mapped) = both_ways(text.as_bytes());
            assert_eq!(mapped, buffered, "{text:?}");
        }
    }

    #[test]
    fn the_mapped_reader_refuses_a_line_longer_than_the_limit() {
        // The whole line lies in the map, newline and all: it is refused for
        // its length, as a buffered read refuses it, not parsed.
        let mut text = vec![b' '; MAX_LINE as usize];
        text.push(b'\n');
        text.extend_from_slice(line(2).as_bytes());
        let (buffered, mapped) = both_ways(&text);
        let long = format!("line longer than {MAX_LINE} bytes");
        assert!(
            matches!(&mapped.0[..], [Err(e)] if e.ends_with(&long)),
            "{:?}",
            mapped.0
        );
        assert_eq!(mapped, buffered);
        // One byte shorter it is a blank line, skipped.
        text.drain(..1);
        let (buffered, mapped) = both_ways(&text);
        assert_eq!(mapped.0, [Ok((2, None))]);
        assert_eq!(mapped, buffered);
    }

    #[test]
    fn the_mapped_reader_releases_the_pages_behind_it() {
        let one = line(1);
        let n = 2 * MappedEvents::RELEASE_EVERY / one.len() + 1;
        let text = one.repeat(n);
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("events.ndjson");
        std::fs::write(&path, &text).unwrap();
        let mut r = EventReader::open_mapped(&path, ReadOptions::default()).unwrap();
        assert_eq!(
            r.by_ref()
                .map(|e| e.unwrap().seq)
                .filter(|&s| s == 1)
                .count(),
            n
        );
        assert_eq!(r.bytes_read(), text.len() as u64);
        let Source::Map { released, .. } = r.reader.source else {
            panic!("a plain file is mapped");
        };
        assert_eq!(released, 2 * MappedEvents::RELEASE_EVERY);
    }

    #[test]
    fn torn_tail_is_recovered_with_a_warning() {
        let full = line(2);
        for cut in 1..full.len() - 1 {
            let text = format!("{}{}", line(1), &full[..cut]);
            let (got, w) = read(&text, ReadOptions::default());
            assert_eq!(got, vec![Ok(1)], "cut at {cut}");
            assert_eq!(
                w,
                vec![Warning::TornTail {
                    path: "events.ndjson".into(),
                    line: 2,
                    bytes: cut as u64
                }]
            );
        }
        // Cut just before the newline: the line is complete, nothing is lost.
        let text = format!("{}{}", line(1), full.trim_end());
        assert_eq!(read(&text, ReadOptions::default()).0, vec![Ok(1), Ok(2)]);
    }

    #[test]
    fn malformed_middle_line_stops_with_file_and_line() {
        let text = format!("{}{{\"seq\":2,\"op\":\n{}", line(1), line(3));
        let (got, w) = read(&text, ReadOptions::default());
        assert_eq!(got.len(), 2);
        let err = got[1].as_ref().unwrap_err();
        assert!(err.starts_with("events.ndjson:2: malformed event"), "{err}");
        assert!(w.is_empty());

        // A line that parses as JSON but lacks a field is never "torn".
        let text = format!(
            "{}{{\"seq\":2,\"api\":\"hipFree\",\"op\":\"free\"}}",
            line(1)
        );
        let (got, _) = read(&text, ReadOptions::default());
        assert!(
            got[1]
                .as_ref()
                .unwrap_err()
                .contains("lacks required field `ptr`")
        );
    }

    #[test]
    fn unknown_op_warns_or_fails_when_strict() {
        let text = format!(
            "{}{{\"seq\":2,\"api\":\"hipX\",\"op\":\"future_op\"}}\n{}",
            line(1),
            line(3)
        );
        let (got, w) = read(&text, ReadOptions::default());
        assert_eq!(got, vec![Ok(1), Ok(3)]);
        assert_eq!(w.len(), 1);
        assert_eq!(
            w[0].to_string(),
            "events.ndjson:2: unknown op `future_op` skipped (written by a newer hrr?)"
        );
        let (got, _) = read(&text, ReadOptions::strict());
        assert_eq!(got.len(), 2);
        assert!(
            got[1]
                .as_ref()
                .unwrap_err()
                .contains("unknown op `future_op` (strict mode)")
        );
    }

    #[test]
    fn lines_straddling_the_read_buffer_are_read_whole() {
        let text = format!("{}\n{}{}{{\"seq\":9,\"api", line(1), line(2), line(3));
        for cap in [1, 7, 64, 200] {
            let reader = std::io::BufReader::with_capacity(cap, text.as_bytes());
            let mut r = EventReader::from_reader(reader, "e");
            let seqs: Vec<u64> = r.by_ref().map(|e| e.unwrap().seq).collect();
            assert_eq!(seqs, [1, 2, 3], "buffer of {cap}");
            assert!(
                matches!(
                    r.warnings(),
                    [Warning::TornTail {
                        line: 5,
                        bytes: 13,
                        ..
                    }]
                ),
                "{:?}",
                r.warnings()
            );
            assert_eq!(r.bytes_read(), text.len() as u64);
        }
    }

    #[test]
    fn device_timing_of_each_event_is_kept() {
        let mut timed = Vec::new();
        Event::parse(line(2).as_bytes())
            .unwrap()
            .write_line_timed(Some(DevTime { t: 50, ns: 7 }), &mut timed);
        let text = format!(
            "{}{}{}",
            line(1),
            String::from_utf8(timed).unwrap(),
            line(3)
        );
        let mut r = EventReader::from_reader(text.as_bytes(), "e");
        let got: Vec<_> =
            std::iter::from_fn(|| r.next().map(|e| (e.unwrap().seq, r.dev_time()))).collect();
        assert_eq!(
            got,
            [(1, None), (2, Some(DevTime { t: 50, ns: 7 })), (3, None)]
        );
    }

    #[test]
    fn counts_bytes_and_lines() {
        let text = format!("{}{}", line(1), line(2));
        let mut r = EventReader::from_reader(text.as_bytes(), "e");
        r.next().unwrap().unwrap();
        r.next().unwrap().unwrap();
        assert!(r.next().is_none());
        assert_eq!(r.bytes_read(), text.len() as u64);
        assert_eq!(r.line(), 2);
    }
}
