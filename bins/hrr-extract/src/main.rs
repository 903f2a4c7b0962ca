//! `hrr-extract ARCHIVE (--launch SEQ | --kernel NAME[#N]) -o OUT.hrr`:
//! replays an archive up to one launch and writes that launch alone as a
//! self-contained archive whose replay checks the launch byte for byte.
//!
//! Summary on stdout (or one JSON document with `--json`), messages on
//! stderr. Exit status: 0 written, 1 the replay failed, 2 usage or format
//! error (including a launch that does not exist).
#![forbid(unsafe_code)]

mod args;
mod error;
mod extract;
mod reach;
mod select;

use std::process::ExitCode;

use clap::Parser;
use hrr_core::error_chain::chain;

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<args::Args>() {
        return code;
    }
    let args = args::Args::parse();
    match extract::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the error, then each cause after a colon.
            eprintln!("hrr-extract: error: {}", chain(&e));
            ExitCode::from(e.exit_code())
        }
    }
}
