//! `hrr-sidecar`: builds region sidecars declaring device memory the recorder
//! could not see.
//!
//! Input, one of: `--base 0x… --size N|auto`; report lines on stdin (lines
//! containing `base=0x…` and `size=N`); `--from-hrrr FILE`. Output: with
//! `--archive DIR`, an atomic append to `DIR/regions/NAME.ndjson`; otherwise
//! NDJSON on stdout. Exit status: 0 done, 2 bad input or I/O error.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use hrr_core::archive::Archive;
use hrr_core::hrrr::read_hrrr;
use hrr_core::region_record::{RegionKind, RegionRecord};
mod sidecar;

use crate::sidecar::{
    DEFAULT_NAME, Defaults, Origin, Request, SizeSpec, append_to_archive, check_overlaps,
    records_from_hrrr, requests_from_reports, resolve, validate_name,
};

/// Build an hrr region sidecar.
#[derive(Parser, Debug)]
#[command(name = "hrr-sidecar", version, about, after_help = EXAMPLES)]
struct Args {
    /// Base address of the region (hex, 0x…). Without it, reports are read from stdin.
    #[arg(long, value_parser = parse_base, requires = "size")]
    base: Option<u64>,
    /// Size in bytes (or 0x…), or `auto` to infer it from --archive. With stdin
    /// reports, the size of lines that carry no `size=`.
    #[arg(long)]
    size: Option<SizeSpec>,
    /// Region kind.
    #[arg(long, value_enum, default_value_t = KindArg::Segment)]
    kind: KindArg,
    /// Device ordinal the region lives on.
    #[arg(long, default_value_t = 0)]
    device: u32,
    /// CLOCK_MONOTONIC ns when the region became live; 0 = before the capture began.
    #[arg(long, default_value_t = 0)]
    at: u64,
    /// Producer tag, carried but not interpreted.
    #[arg(long, default_value_t = 0)]
    tag: u32,
    /// Sidecar name: writes DIR/regions/NAME.ndjson.
    #[arg(long, default_value = DEFAULT_NAME)]
    name: String,
    /// Archive to append to (atomically); without it NDJSON goes to stdout.
    #[arg(long)]
    archive: Option<PathBuf>,
    /// Convert a ROCm HRR binary region stream (.hrrr).
    #[arg(long, conflicts_with_all = ["base", "size"])]
    from_hrrr: Option<PathBuf>,
}

const EXAMPLES: &str = "Examples:
  grep HRR_SEGMENT app.log | hrr-sidecar --archive cap.hrr
  hrr-sidecar --archive cap.hrr --base 0x7fbe01400000 --size 262144
  hrr-sidecar --archive cap.hrr --base 0x7fbe01400000 --size auto
  hrr-sidecar --from-hrrr pytorch.hrrr > regions.ndjson";

#[derive(Clone, Copy, Debug, ValueEnum)]
enum KindArg {
    Segment,
    Block,
}

fn parse_base(s: &str) -> Result<u64, String> {
    s.strip_prefix("0x")
        .filter(|h| !h.is_empty())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| format!("`{s}` is not a hex address (0x…)"))
}

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<Args>() {
        return code;
    }
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hrr-sidecar: error: {}", hrr_core::message::chain(&*e));
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    validate_name(&args.name)?;
    let archive = args.archive.as_ref().map(Archive::open).transpose()?;
    let defaults = Defaults {
        kind: match args.kind {
            KindArg::Segment => RegionKind::Segment,
            KindArg::Block => RegionKind::Block,
        },
        device: args.device,
        t: args.at,
        tag: args.tag,
        size: args.size,
    };
    let records: Vec<(RegionRecord, Origin)> = if let Some(path) = &args.from_hrrr {
        let stream = read_hrrr(path)?;
        for w in &stream.warnings {
            eprintln!("hrr-sidecar: warning: {w}");
        }
        let records = records_from_hrrr(&stream);
        check_overlaps(&[], &records)?;
        records
    } else {
        let requests = match args.base {
            Some(base) => vec![Request::from_args(
                base,
                args.size.expect("clap requires --size"),
                &defaults,
            )],
            None => requests_from_reports(io::stdin().lock(), "stdin", &defaults)?,
        };
        resolve(requests, archive.as_ref())?
    };
    match &archive {
        Some(a) => {
            let done = append_to_archive(a, &args.name, &records)?;
            for s in &done.shared {
                eprintln!("hrr-sidecar: note: {s}");
            }
            eprintln!(
                "hrr-sidecar: appended {} record(s) to {}",
                records.len(),
                done.path.display()
            );
        }
        None => {
            let mut out = io::stdout().lock();
            for (r, _) in &records {
                out.write_all(r.to_line().as_bytes())
                    .context("writing to stdout")?;
            }
            out.flush().context("writing to stdout")?;
        }
    }
    Ok(())
}
