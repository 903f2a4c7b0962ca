//! The fuzzing smoke: a fuzz target run on stable Rust, as `cargo test`
//! runs it in CI (docs/FUZZING.md, *Smoke*).
//!
//! [`Smoke::run`] gives a target every checked-in seed
//! (`fuzz/seeds/<target>/`), every past crash (`fuzz/regressions/<target>/`)
//! and then a fixed number of new inputs, each a seed changed by one to
//! seven [`Mutation`]s drawn from a seeded generator: the same inputs on
//! every run, so a run costs the same each time and a failure comes back.
//! `HRR_FUZZ_ITERS=N` runs N new inputs a target instead of its default,
//! `HRR_FUZZ_SEED=S` draws other ones, and `HRR_FUZZ_WRITE=I` writes input
//! I out before the run.
//!
//! An input that panics, or runs longer than [`Smoke::limit`] (a hang: an
//! input is never given that long), is written out and the run fails naming
//! the file, to be copied into `fuzz/regressions/<target>/`. Memory is
//! bounded by [`BoundedAlloc`], which a smoke test binary installs as its
//! allocator: one allocation over [`MALLOC_LIMIT`], or more than
//! [`LIVE_LIMIT`] held at once, ends the process with a message naming the
//! target and the input (libFuzzer's `-malloc_limit_mb` and
//! `-rss_limit_mb` in `scripts/fuzz.sh`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Mutation, TOKENS, Target};

/// The generator's seed when `HRR_FUZZ_SEED` does not say.
pub const DEFAULT_SEED: u64 = 0x6872_725f_6675_7a7a;

/// A small deterministic generator (SplitMix64): the smoke's inputs depend
/// on its seed alone.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// A random edit, as the stable mutation tests draw them; a token insert
/// takes one of `tokens`.
fn random_mutation(rng: &mut Rng, tokens: &[&[u8]]) -> Mutation {
    let mut pos = || rng.next_u64() as usize;
    let (a, b, c) = (pos(), pos(), pos());
    match rng.below(6) {
        0 => Mutation::Flip(a, b as u8),
        1 => {
            let len = 1 + rng.below(16);
            let bytes = (0..len).map(|_| rng.next_u64() as u8).collect();
            Mutation::Insert(a, bytes)
        }
        2 if !tokens.is_empty() => Mutation::Insert(a, tokens[b % tokens.len()].to_vec()),
        2 | 3 => Mutation::Delete(a, b),
        4 => Mutation::Truncate(a),
        _ => Mutation::Splice(a, b, c),
    }
}

/// One target's smoke run (see the module docs).
pub struct Smoke {
    name: &'static str,
    target: Target,
    fuzz_dir: PathBuf,
    iterations: u64,
    seed: u64,
    limit: Duration,
    tokens: &'static [&'static [u8]],
    finish: Option<fn(&mut Vec<u8>, &mut Rng)>,
    save_dir: PathBuf,
}

/// What a smoke run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The target.
    pub name: &'static str,
    /// Seeds run.
    pub seeds: usize,
    /// Past crashes run.
    pub regressions: usize,
    /// New inputs run.
    pub mutated: u64,
    /// The generator's seed.
    pub seed: u64,
}

/// `HRR_FUZZ_ITERS`, when set to a number.
fn iterations_override() -> Option<u64> {
    std::env::var("HRR_FUZZ_ITERS").ok()?.trim().parse().ok()
}

/// `HRR_FUZZ_SEED` (decimal, or hexadecimal after `0x`), else [`DEFAULT_SEED`].
fn seed_from_env() -> u64 {
    let Ok(s) = std::env::var("HRR_FUZZ_SEED") else {
        return DEFAULT_SEED;
    };
    let s = s.trim();
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    };
    parsed.unwrap_or_else(|| panic!("HRR_FUZZ_SEED={s}: not a number"))
}

/// The files of `dir`, sorted by name, with their bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) {
            let bytes = std::fs::read(e.path())
                .unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            out.push((e.path(), bytes));
        }
    }
    out.sort();
    out
}

/// The target called `name` in a crate's table of targets (`TARGETS`).
pub fn target(targets: &[(&str, Target)], name: &str) -> Target {
    targets
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no fuzz target {name}"))
}

/// Every target of `targets` has a smoke test (its name in `smoked`) and at
/// least one seed under `fuzz_dir/seeds/<name>/`.
pub fn assert_smoked_and_seeded(targets: &[(&str, Target)], smoked: &[&str], fuzz_dir: &Path) {
    for (name, _) in targets {
        assert!(smoked.contains(name), "{name} has no smoke test");
        let seeds = fuzz_dir.join("seeds").join(name);
        assert!(
            std::fs::read_dir(&seeds).is_ok_and(|mut d| d.next().is_some()),
            "{} is empty",
            seeds.display()
        );
    }
}

impl Smoke {
    /// The smoke of `target` (`name`: its seed and regression folders under
    /// `fuzz_dir`, e.g. `lib/hrr-core/fuzz`), running `iterations` new
    /// inputs unless `HRR_FUZZ_ITERS` says otherwise.
    pub fn new(name: &'static str, target: Target, fuzz_dir: &Path, iterations: u64) -> Smoke {
        Smoke {
            name,
            target,
            fuzz_dir: fuzz_dir.to_path_buf(),
            iterations: iterations_override().unwrap_or(iterations),
            seed: seed_from_env(),
            limit: Duration::from_secs(60),
            tokens: TOKENS,
            finish: None,
            save_dir: std::env::temp_dir().join("hrr-fuzz-smoke"),
        }
    }

    /// Tokens the target's format gives meaning to (default [`TOKENS`]).
    pub fn tokens(mut self, tokens: &'static [&'static [u8]]) -> Smoke {
        self.tokens = tokens;
        self
    }

    /// Called on every new input after its mutations (e.g. to append an
    /// options section).
    pub fn finish_input(mut self, f: fn(&mut Vec<u8>, &mut Rng)) -> Smoke {
        self.finish = Some(f);
        self
    }

    /// How long one input may run before it counts as a hang (default
    /// 60 s; no input of a sound target comes near it).
    pub fn limit(mut self, limit: Duration) -> Smoke {
        self.limit = limit;
        self
    }

    /// Where a failing input is written (default
    /// `$TMPDIR/hrr-fuzz-smoke/`).
    pub fn save_to(mut self, dir: &Path) -> Smoke {
        self.save_dir = dir.to_path_buf();
        self
    }

    /// The `i`-th new input (0-based) of this run.
    fn input(&self, seeds: &[(PathBuf, Vec<u8>)], i: u64) -> Vec<u8> {
        // One generator per input, from the seed and the index: an input
        // can be made again without the ones before it.
        let mut rng = Rng::new(self.seed ^ i.wrapping_mul(0xa076_1d64_78bd_642f));
        rng.next_u64();
        let mut data = seeds[rng.below(seeds.len())].1.clone();
        for _ in 0..1 + rng.below(7) {
            random_mutation(&mut rng, self.tokens).apply(&mut data);
        }
        if let Some(f) = self.finish {
            f(&mut data, &mut rng);
        }
        data
    }

    /// Runs the seeds, the regressions and the new inputs (see the module
    /// docs); panics on the first input that fails, naming the file it was
    /// written to.
    pub fn run(self) -> Report {
        let start = Instant::now();
        let seeds = files(&self.fuzz_dir.join("seeds").join(self.name));
        assert!(
            !seeds.is_empty(),
            "{}/seeds/{}/ is empty",
            self.fuzz_dir.display(),
            self.name
        );
        let regressions = files(&self.fuzz_dir.join("regressions").join(self.name));
        // An input named by a message (one that ended the process, which
        // could not write it out itself), written out on request.
        if let Some(i) = std::env::var("HRR_FUZZ_WRITE")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            let saved = self.save(&self.input(&seeds, i), i);
            eprintln!("fuzz smoke: {}: input {i} written to {saved}", self.name);
        }
        let worker = Worker::start(self.name, self.target);
        for (path, data) in seeds.iter().chain(&regressions) {
            let what = path.display().to_string();
            if let Err(why) = worker.run(data, u64::MAX, self.limit) {
                panic!("fuzz smoke: {}: {what}: {why}", self.name);
            }
        }
        for i in 0..self.iterations {
            let data = self.input(&seeds, i);
            if let Err(why) = worker.run(&data, i, self.limit) {
                let saved = self.save(&data, i);
                panic!(
                    "fuzz smoke: {}: input {i} of seed {:#x} {why}; written to {saved} (copy it \
                     into {}/regressions/{}/)",
                    self.name,
                    self.seed,
                    self.fuzz_dir.display(),
                    self.name
                );
            }
        }
        let report = Report {
            name: self.name,
            seeds: seeds.len(),
            regressions: regressions.len(),
            mutated: self.iterations,
            seed: self.seed,
        };
        eprintln!(
            "fuzz smoke: {}: {} seeds, {} regressions, {} new inputs (seed {:#x}) in {:.1} s",
            report.name,
            report.seeds,
            report.regressions,
            report.mutated,
            report.seed,
            start.elapsed().as_secs_f64()
        );
        report
    }

    fn save(&self, data: &[u8], i: u64) -> String {
        let path = self
            .save_dir
            .join(format!("{}-{:x}-{i}", self.name, self.seed));
        match std::fs::create_dir_all(&self.save_dir).and_then(|()| std::fs::write(&path, data)) {
            Ok(()) => path.display().to_string(),
            Err(e) => format!("nowhere ({}: {e})", path.display()),
        }
    }
}

/// The thread that runs a smoke's inputs, so that one that hangs is told
/// apart from one that is only slow: the caller waits for it at most the
/// limit.
struct Worker {
    inputs: mpsc::Sender<(Vec<u8>, u64)>,
    results: mpsc::Receiver<Result<(), String>>,
}

impl Worker {
    fn start(name: &'static str, target: Target) -> Worker {
        let (inputs, rx) = mpsc::channel::<(Vec<u8>, u64)>();
        let (tx, results) = mpsc::channel();
        std::thread::Builder::new()
            .name(format!("fuzz-{name}"))
            .spawn(move || {
                for (data, i) in rx {
                    CURRENT_NAME.store(name.as_ptr().cast_mut(), Ordering::Relaxed);
                    CURRENT_NAME_LEN.store(name.len(), Ordering::Relaxed);
                    CURRENT_INPUT.store(i, Ordering::Relaxed);
                    let r = std::panic::catch_unwind(|| target(&data)).map_err(|p| {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "a panic".into());
                        format!("panicked: {msg}")
                    });
                    if tx.send(r).is_err() {
                        return;
                    }
                }
            })
            .expect("starting the fuzz smoke's thread");
        Worker { inputs, results }
    }

    fn run(&self, data: &[u8], i: u64, limit: Duration) -> Result<(), String> {
        self.inputs
            .send((data.to_vec(), i))
            .map_err(|_| "the smoke's thread is gone".to_string())?;
        match self.results.recv_timeout(limit) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err(format!("still ran after {} s (a hang)", limit.as_secs()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the smoke's thread died".into()),
        }
    }
}

// ------------------------------------------------------------- memory

/// One allocation larger than this ends a smoke (libFuzzer's
/// `-malloc_limit_mb=1024` in `scripts/fuzz.sh`).
pub const MALLOC_LIMIT: usize = 1 << 30;
/// More than this held at once ends a smoke (`-rss_limit_mb=2048`).
pub const LIVE_LIMIT: usize = 2 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static CURRENT_NAME: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static CURRENT_NAME_LEN: AtomicUsize = AtomicUsize::new(0);
static CURRENT_INPUT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The system allocator, bounded for fuzz inputs: a smoke test binary
/// installs it (`#[global_allocator] static A: BoundedAlloc = BoundedAlloc;`)
/// so that an input making a reader allocate without bound ends the run
/// with a message, rather than taking the machine's memory.
pub struct BoundedAlloc;

/// Says which input asked for `size` bytes, and ends the process. Writes
/// with `write(2)` from a buffer on the stack: the allocator cannot
/// allocate.
#[cold]
fn over_limit(size: usize) -> ! {
    use std::fmt::Write;
    struct Buf {
        bytes: [u8; 512],
        len: usize,
    }
    impl Write for Buf {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let n = s.len().min(self.bytes.len() - self.len);
            self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
            self.len += n;
            Ok(())
        }
    }
    let mut buf = Buf {
        bytes: [0; 512],
        len: 0,
    };
    let ptr = CURRENT_NAME.load(Ordering::Relaxed);
    let len = CURRENT_NAME_LEN.load(Ordering::Relaxed);
    let name = if ptr.is_null() {
        ""
    } else {
        // SAFETY: `ptr` and `len` were stored together from a `&'static
        // str` by the smoke's thread (names are static), so they describe
        // valid UTF-8 that lives for ever.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
    };
    let input = CURRENT_INPUT.load(Ordering::Relaxed);
    let _ = write!(buf, "fuzz smoke: {name}: ");
    let _ = match input {
        u64::MAX => write!(buf, "a seed or regression"),
        i => write!(buf, "input {i}"),
    };
    let _ = writeln!(
        buf,
        " asked for {size} bytes with {} held; one allocation may have {MALLOC_LIMIT}, all \
         together {LIVE_LIMIT}",
        LIVE.load(Ordering::Relaxed)
    );
    // SAFETY: writes `len` initialised bytes of a live buffer to stderr.
    unsafe { libc::write(2, buf.bytes.as_ptr().cast(), buf.len) };
    std::process::abort()
}

/// Ends the process when a block of `size` bytes, `growth` of them new,
/// is more than a fuzz input may have.
fn admit(size: usize, growth: usize) {
    if size > MALLOC_LIMIT || LIVE.load(Ordering::Relaxed).saturating_add(growth) > LIVE_LIMIT {
        over_limit(size);
    }
}

// SAFETY: every call is forwarded to `System` with the caller's arguments
// unchanged; the bookkeeping around it allocates nothing.
unsafe impl GlobalAlloc for BoundedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        admit(layout.size(), layout.size());
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        admit(layout.size(), layout.size());
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every
        // allocation here is), as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        admit(new_size, new_size.saturating_sub(layout.size()));
        // SAFETY: the caller's block and layout, and a size it vouches for.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_inputs() {
        let seeds = vec![(PathBuf::from("a"), b"{\"seq\":1}\n".to_vec())];
        let smoke = |seed| Smoke {
            seed,
            ..Smoke::new("t", |_| {}, Path::new("."), 0)
        };
        let a: Vec<_> = (0..32).map(|i| smoke(1).input(&seeds, i)).collect();
        let b: Vec<_> = (0..32).map(|i| smoke(1).input(&seeds, i)).collect();
        let c: Vec<_> = (0..32).map(|i| smoke(2).input(&seeds, i)).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().any(|d| d != &seeds[0].1));
    }

    #[test]
    fn a_panicking_or_hanging_input_is_reported() {
        let w = Worker::start("t", |d| {
            if d == b"boom" {
                panic!("boom")
            }
            if d == b"hang" {
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        assert_eq!(w.run(b"ok", 0, Duration::from_secs(60)), Ok(()));
        assert_eq!(
            w.run(b"boom", 1, Duration::from_secs(60)),
            Err("panicked: boom".into())
        );
        assert!(
            w.run(b"hang", 2, Duration::from_millis(10))
                .unwrap_err()
                .contains("a hang")
        );
    }
}
