//! `hrr-play`: replay an hrr archive without the application and validate
//! every device-to-host copy against what the capture saw; a job (every
//! process archive of a multi-process run) by one `hrr-play` per process,
//! concurrently (`job_play`).

mod args;
mod child_args;
mod info;
mod job_play;
mod play;
mod process_replay;
mod repair;
mod stop;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<args::Args>() {
        return code;
    }
    let args = args::Args::parse();
    match play::run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hrr-play: error: {}", hrr_core::message::chain(&*e));
            ExitCode::from(2)
        }
    }
}
