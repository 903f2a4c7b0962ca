//! `hrr-cap`: run an application with the capture library preloaded and
//! record its HIP calls into an hrr archive.
//!
//! ```text
//! hrr-cap [-o DIR] [--platform auto|hip|cuda] -- APP ARGS…
//! ```
//!
//! The application's stdin, stdout and stderr are its own (stdout passes
//! through untouched, so `hrr-cap -- app | tee log` works). When it ends,
//! one summary line goes to stderr:
//! `hrr-cap: N events, M blobs, B bytes -> DIR`.
//!
//! Before it starts the application, a warning goes to stderr when the
//! application embeds CUDA device code but links the CUDA runtime
//! statically: none of its CUDA calls could be recorded.
//!
//! Exit status: the application's own, or 128+S when a signal S killed it.
//! Exit status 2 with an `hrr-cap: error:` line and no summary line is
//! hrr-cap's own failure (no application to run, an unusable DIR, the
//! capture library not found): the application did not run.

mod args;
mod cap;
mod error;
mod intercept_lib;
mod static_runtime;
mod summary;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = args::Args::parse();
    match cap::run(&args) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("hrr-cap: error: {}", hrr_core::message::chain(&e));
            ExitCode::from(error::EXIT_USAGE)
        }
    }
}
