//! `hrr-cap`: run an application with the capture library preloaded and
//! record its GPU runtime calls (HIP or CUDA) into an hrr archive.
//!
//! ```text
//! hrr-cap [-o DIR] [--platform auto|hip|cuda] [--hsa-regions] [--no-verify] [--window SPEC] -- APP ARGS…
//! ```
//!
//! The application's stdin, stdout and stderr are its own (stdout passes
//! through untouched, so `hrr-cap -- app | tee log` works). When it ends,
//! two summary lines go to stderr:
//! `hrr-cap: N events, M blobs, B bytes -> DIR` and the calls the capture
//! library forwarded without recording them,
//! `unrecorded : N calls (hipMemcpy2D ×2, …)` (from the manifest). When
//! nothing was recorded, the first line says why: which runtime the
//! capture expected, and whether the application loaded it.
//!
//! When more than one process of the run recorded (`DIR` and
//! `NAME-PID.hrr` beside it), each archive's blobs are checked too and the
//! job file `NAME.job.json` lists them (`job`), said on a line before the
//! summary:
//! `hrr-cap: job : 2 processes (rank 0, rank 1) -> NAME.job.json`.
//!
//! Before it starts the application, a warning goes to stderr when the
//! application embeds CUDA device code but links the CUDA runtime
//! statically: none of its CUDA calls could be recorded.
//!
//! Before those lines, the archive's blobs are checked against their names
//! (`verify`; `--no-verify` skips it): each one missing or not what its
//! name says gets an `hrr-cap: error: blob H is missing; used by event N
//! (api)` line (or `does not match its name …`),
//! and the archive is marked incomplete (`complete:false`, the reason in
//! the manifest's `incomplete`). A check longer than a second says how
//! long it took; on a terminal it draws a progress bar.
//!
//! Exit status: the application's own, or 128+S when a signal S killed it.
//! 74 ([`error::EXIT_ARCHIVE_BAD`]) when the application exited 0 but the
//! archive is not whole: a blob missing or not what its name says (found
//! by the check, or reported by the capture library, which could not write
//! it). Exit status 2 with an `hrr-cap: error:` line and no summary line is
//! hrr-cap's own failure (no application to run, an unusable DIR, the
//! capture library not found): the application did not run.

mod args;
mod cap;
mod compact;
mod error;
mod intercept_lib;
mod job;
mod no_capture;
mod summary;
mod verify;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<args::Args>() {
        return code;
    }
    let args = args::Args::parse();
    match cap::run(&args) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("hrr-cap: error: {}", hrr_core::message::chain(&e));
            ExitCode::from(error::EXIT_USAGE)
        }
    }
}
