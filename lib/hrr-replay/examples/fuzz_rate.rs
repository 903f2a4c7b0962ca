//! Executions per second of a fuzz target body, as a plain release binary
//! (no libFuzzer, no sanitizer), for profiling and for before/after
//! comparisons (docs/FUZZING.md, *Speed*).
//!
//!   cargo run --release -p hrr-replay --example fuzz_rate -- TARGET SECONDS [--mutate] DIR...
//!
//! TARGET: `archive` or one of `hrr_core::fuzzing::TARGETS`. Every file of
//! the DIRs is run in turn, round after round, for SECONDS. With
//! `--mutate`, each execution first applies 1–5 seeded random mutations of
//! the stable tests (`hrr_core::fuzzing::Mutation`) and, for `archive`, an
//! options byte, so that the mix resembles what a fuzzer runs; the sequence
//! is the same from one run to the next. Prints `TARGET: N executions in S
//! s, R exec/s` on stdout.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hrr_core::fuzzing::{Mutation, TARGETS, Target};

/// xorshift64*: a fixed sequence, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) as usize
    }

    fn mutation(&mut self) -> Mutation {
        match self.next() % 5 {
            0 => Mutation::Flip(self.next(), self.next() as u8),
            1 => Mutation::Token(self.next(), self.next()),
            2 => Mutation::Delete(self.next(), self.next()),
            3 => Mutation::Truncate(self.next()),
            _ => Mutation::Splice(self.next(), self.next(), self.next()),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: fuzz_rate TARGET SECONDS [--mutate] DIR...";
    let [name, secs, rest @ ..] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let target: Target = if name == "archive" {
        hrr_replay::fuzzing::archive
    } else if let Some((_, t)) = TARGETS.iter().find(|(n, _)| n == name) {
        *t
    } else {
        eprintln!("fuzz_rate: unknown target {name}");
        std::process::exit(2);
    };
    let Ok(secs) = secs.parse::<f64>() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let mutate = rest.iter().any(|a| a == "--mutate");
    let mut inputs = Vec::new();
    for dir in rest.iter().filter(|a| *a != "--mutate") {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        inputs.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    if inputs.is_empty() {
        eprintln!("fuzz_rate: no input files");
        std::process::exit(2);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let limit = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut n = 0u64;
    let mut data = Vec::new();
    while start.elapsed() < limit {
        data.clear();
        data.extend_from_slice(&inputs[n as usize % inputs.len()]);
        if mutate {
            for _ in 0..1 + rng.next() % 5 {
                rng.mutation().apply(&mut data);
            }
            if name == "archive" {
                data.extend_from_slice(b"\n@@options\n");
                data.push(rng.next() as u8);
            }
        }
        target(&data);
        n += 1;
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "{name}: {n} executions in {s:.1} s, {:.0} exec/s",
        n as f64 / s
    );
}
