//! `hrr-trace ARCHIVE > trace.json`: an archive as a Chrome trace, for
//! Perfetto (ui.perfetto.dev) or chrome://tracing.
//!
//! The trace goes to stdout, or with `-o FILE` to a file that appears only
//! once it is whole: written as a new temporary beside it (`0600`, created
//! with `O_CREAT | O_EXCL`, never through a planted link) and renamed over
//! it. Warnings, the one-line summary and errors go to stderr;
//! a progress bar too, when stderr is a terminal and the work takes more
//! than a second. Exit status: 0 written, 2 usage, archive or write error.
#![forbid(unsafe_code)]

use std::fs::{self, File};
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use hrr_core::archive::Archive;
use hrr_core::event_reader::ReadOptions;
use hrr_trace::{TraceError, TraceStats, write_trace};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Write an hrr archive as a Chrome trace (Perfetto, chrome://tracing).
#[derive(Parser, Debug)]
#[command(name = "hrr-trace", version, about, after_help = EXAMPLES)]
struct Args {
    /// The archive directory (NAME.hrr): a capture, or a replay written by
    /// `hrr-play -o` (with `--timing`, device slices show measured times).
    archive: PathBuf,
    /// Write the trace to FILE instead of stdout (mode 0600, replaced whole
    /// once written).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Unknown event ops are errors, not warnings.
    #[arg(long)]
    strict: bool,
}

const EXAMPLES: &str = "Examples:
  hrr-trace cap.hrr > trace.json     then open https://ui.perfetto.dev and drop trace.json in
  hrr-play cap.hrr -o replay.hrr --timing && hrr-trace replay.hrr -o replay.json";

/// Why `hrr-trace` stopped.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{}", path.display())]
    Output { path: PathBuf, source: io::Error },
}

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<Args>() {
        return code;
    }
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hrr-trace: error: {}", hrr_core::error_chain::chain(&e));
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<(), CliError> {
    let archive = Archive::open(&args.archive).map_err(TraceError::from)?;
    if let Some(why) = archive.incomplete_reason() {
        eprintln!(
            "hrr-trace: warning: {} is incomplete ({why}); tracing what it holds",
            args.archive.display()
        );
    }
    let read = ReadOptions {
        strict: args.strict,
    };
    let total = archive.events_len();
    let mut progress = Progress::new(total);
    let stats = match &args.output {
        None => {
            let stdout = io::stdout().lock();
            write_trace(&archive, stdout, read, |n| progress.update(n))?.1
        }
        Some(path) => to_file(path, |file| {
            write_trace(&archive, file, read, |n| progress.update(n))
        })?,
    };
    progress.finish();
    for w in &stats.warnings {
        eprintln!("hrr-trace: warning: {w}");
    }
    eprintln!("hrr-trace: {}", summary(&stats));
    Ok(())
}

/// Writes through `write` into a temporary file next to `path`, renamed
/// over it once whole; removed when anything fails.
///
/// The temporary is created, never opened (`O_CREAT | O_EXCL`, which no
/// symlink passes; mode `0600`), under the first free name of
/// `.NAME.tmp-PID-N`: a file or symlink planted under a predictable name is
/// skipped, never written through. The rename replaces `path` itself, a
/// symlink there included.
fn to_file(
    path: &Path,
    write: impl FnOnce(File) -> Result<(File, TraceStats), TraceError>,
) -> Result<TraceStats, CliError> {
    let output = |source| CliError::Output {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| output(io::Error::other("not a file name")))?;
    let (tmp, file) = create_temporary(path, name).map_err(output)?;
    let result = write(file)
        .map_err(CliError::from)
        .and_then(|(mut file, stats)| {
            file.flush().map_err(output)?;
            fs::rename(&tmp, path).map_err(output)?;
            Ok(stats)
        });
    if result.is_err() {
        // Unlinks the temporary itself (never what a link there names).
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A new file `.NAME.tmp-PID-N` beside `path` (see [`to_file`]).
fn create_temporary(path: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    use std::os::unix::fs::OpenOptionsExt;
    for n in 0..1000 {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        // create_new is O_CREAT | O_EXCL: any existing name fails, a
        // symlink (dangling or not) included, which is never followed.
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(hrr_core::safe_fs::FILE_MODE)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "no free name for a temporary file beside it",
    ))
}

fn summary(s: &TraceStats) -> String {
    format!(
        "{} events -> {} trace events: {} API calls on {} thread(s), {} kernels, {} copies, \
         {} memsets on {} stream(s), {} flows; device times {}",
        s.events,
        s.trace_events,
        s.api_calls,
        s.threads,
        s.kernels,
        s.copies,
        s.memsets,
        s.streams,
        s.flows,
        if s.device_timed > 0 {
            "measured (timed replay)"
        } else {
            "not recorded (slices are nominal)"
        }
    )
}

/// A progress bar over the bytes of `events.ndjson`, drawn only when stderr
/// is a terminal and the trace takes more than [`Progress::DELAY`].
struct Progress {
    bar: ProgressBar,
    started: Instant,
    /// Whether it may still appear.
    pending: bool,
}

impl Progress {
    const DELAY: Duration = Duration::from_secs(1);

    fn new(total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} trace [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        Progress {
            bar,
            started: Instant::now(),
            pending: io::stderr().is_terminal(),
        }
    }

    fn update(&mut self, bytes: u64) {
        if self.pending && self.started.elapsed() >= Self::DELAY {
            self.pending = false;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(bytes);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
