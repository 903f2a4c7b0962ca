//! Harness for hrr's end-to-end tests (the `e2e` test binary).
//!
//! * [`tools`] builds the real binaries once per test process
//!   (`$CARGO build -p hrr-cap -p hrr-play …`, same profile as the tests) and
//!   finds them in `target/<profile>/`.
//! * [`workloads`] compiles the HIP C workloads of `tests/workloads/` with gcc
//!   against Debian's HIP/HSA headers, linked to `libhrr_hip_cpu.so` (cached
//!   per process).
//! * [`Pipeline`] runs the DESIGN.md §1 pipeline in a temp dir, as real shell
//!   pipelines where DESIGN shows them:
//!
//! ```no_run
//! use hrr_tests::Pipeline;
//! Pipeline::new("hidden_segment").capture().sidecar_from_log().play().diff();
//! ```

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

pub use assert_cmd::Command;
use assert_cmd::assert::Assert;
use predicates::prelude::*;

/// Packages whose artifacts the pipeline needs.
pub const PACKAGES: &[&str] = &[
    "hrr-cap",
    "hrr-play",
    "hrr-sidecar",
    "hrr-diff",
    "hrr-extract",
    "hrr-trace",
    "hrr-intercept",
    "hrr-runtime-cpu",
    "hrr-nccl-cpu",
];

/// How long any one command of a test may run.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// The workspace root (`tests/..`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The tests' own sources of workloads.
pub fn workloads_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

// ------------------------------------------------------------------ tools

/// The built binaries (`target/<profile>/`).
#[derive(Debug)]
pub struct Tools {
    /// `target/<profile>`.
    pub dir: PathBuf,
    /// Packages that are not workspace members (yet).
    pub missing: Vec<String>,
    /// Why `cargo build` failed, if it did.
    pub build_error: Option<String>,
}

impl Tools {
    /// Path of a binary or library in `target/<profile>/`; panics with the
    /// build's error when it is not there.
    pub fn path(&self, file: &str) -> PathBuf {
        let p = self.dir.join(file);
        if !p.exists() {
            let mut why = format!("{} was not built", p.display());
            if !self.missing.is_empty() {
                let _ = write!(
                    why,
                    "; packages not in the workspace: {}",
                    self.missing.join(", ")
                );
            }
            if let Some(e) = &self.build_error {
                let _ = write!(why, "; cargo build failed:\n{e}");
            }
            panic!("{why}");
        }
        p
    }

    /// The built binary `name`.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.path(name)
    }

    /// `libhrr_hip_cpu.so` (its directory is what workloads link against).
    pub fn cpu_runtime(&self) -> PathBuf {
        self.path("libhrr_hip_cpu.so")
    }
}

/// `target/<profile>` of the running test binary (`target/<profile>/deps/e2e-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a directory");
    let dir = if deps.file_name() == Some(OsStr::new("deps")) {
        deps.parent().unwrap()
    } else {
        deps
    };
    dir.to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string())
}

/// Workspace member package names.
fn workspace_packages() -> Vec<String> {
    let out = StdCommand::new(cargo())
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output();
    let Ok(out) = out else { return Vec::new() };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
        return Vec::new();
    };
    v["packages"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds the tool packages once per process and returns where they are.
/// `HRR_TESTS_NO_BUILD=1` skips the build (use what is in target/).
pub fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let dir = profile_dir();
        let members = workspace_packages();
        let (present, missing): (Vec<&str>, Vec<&str>) = PACKAGES
            .iter()
            .partition(|p| members.is_empty() || members.iter().any(|m| m == *p));
        let mut build_error = None;
        if std::env::var_os("HRR_TESTS_NO_BUILD").is_none() && !present.is_empty() {
            let profile = dir.file_name().and_then(OsStr::to_str).unwrap_or("debug");
            let mut cmd = StdCommand::new(cargo());
            cmd.arg("build").current_dir(workspace_root());
            match profile {
                "debug" => {}
                "release" => {
                    cmd.arg("--release");
                }
                p => {
                    cmd.args(["--profile", p]);
                }
            }
            for p in &present {
                cmd.args(["-p", p]);
            }
            match cmd.output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    build_error = Some(format!(
                        "{cmd:?}: {}\n{}",
                        o.status,
                        String::from_utf8_lossy(&o.stderr)
                    ))
                }
                Err(e) => build_error = Some(format!("{cmd:?}: {e}")),
            }
        }
        Tools {
            dir,
            missing: missing.iter().map(|s| s.to_string()).collect(),
            build_error,
        }
    })
}

// -------------------------------------------------------------- workloads

/// Compiled workloads of one test process.
pub struct Workloads {
    /// Where binaries, kernel objects and bundles go.
    pub dir: PathBuf,
    /// Compiled kernel code objects (`NAME.so`), `HRR_KERNEL_DIR` of the workloads.
    pub kernels: PathBuf,
    cache: Mutex<HashMap<String, Result<PathBuf, String>>>,
    kernel_build: OnceLock<Result<(), String>>,
}

/// Whether the HIP/HSA headers and gcc are there; the error names the apt
/// packages to install.
pub fn prerequisites() -> Result<(), String> {
    let mut missing = Vec::new();
    if StdCommand::new("gcc")
        .arg("--version")
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        missing.push("gcc");
    }
    if !Path::new("/usr/include/hip/hip_runtime_api.h").exists() {
        missing.push("libamdhip64-dev");
    }
    if !Path::new("/usr/include/hsa/hsa_ext_amd.h").exists() {
        missing.push("libhsa-runtime-dev");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "missing prerequisites; install them with: apt-get install {}",
            missing.join(" ")
        ))
    }
}

/// The per-process workload cache (compiled lazily, one workload at a time).
pub fn workloads() -> &'static Workloads {
    static W: OnceLock<Workloads> = OnceLock::new();
    W.get_or_init(|| {
        if let Err(e) = prerequisites() {
            panic!("{e}");
        }
        let root = profile_dir().join("hrr-e2e");
        std::fs::create_dir_all(&root).expect("create target/<profile>/hrr-e2e");
        remove_stale(&root);
        let dir = root.join(format!("w-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kernels = dir.join("kernels");
        std::fs::create_dir_all(&kernels).expect("create workload dir");
        Workloads {
            dir,
            kernels,
            cache: Mutex::new(HashMap::new()),
            kernel_build: OnceLock::new(),
        }
    })
}

/// Removes workload dirs of test processes that are gone.
fn remove_stale(root: &Path) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("w-"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn run_gcc(args: &[&OsStr]) -> Result<(), String> {
    let out = StdCommand::new("gcc")
        .args(args)
        .output()
        .map_err(|e| format!("gcc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "gcc {}: {}\n{}",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Target id of the CPU code object in an offload bundle.
pub const CPU_BUNDLE_ID: &str = "hipv4-x86_64-unknown-linux-gnu-cpu";
/// Host entry clang puts first in every bundle.
pub const HOST_BUNDLE_ID: &str = "host-x86_64-unknown-linux-gnu";

impl Workloads {
    /// Compiles every `kernels/*.c` into `kernels/NAME.so` (once).
    pub fn kernels(&self) -> &Path {
        let r = self.kernel_build.get_or_init(|| {
            let src = workloads_src();
            let include = src.join("include");
            let mut any = false;
            for e in std::fs::read_dir(src.join("kernels")).map_err(|e| format!("kernels/: {e}"))? {
                let p = e.map_err(|e| e.to_string())?.path();
                if p.extension() != Some(OsStr::new("c")) {
                    continue;
                }
                any = true;
                let so = self
                    .kernels
                    .join(p.file_stem().unwrap())
                    .with_extension("so");
                run_gcc(&[
                    "-shared".as_ref(),
                    "-fPIC".as_ref(),
                    "-O2".as_ref(),
                    "-g".as_ref(),
                    "-Wall".as_ref(),
                    "-Werror".as_ref(),
                    "-I".as_ref(),
                    include.as_os_str(),
                    p.as_os_str(),
                    "-o".as_ref(),
                    so.as_os_str(),
                ])?;
            }
            if !any {
                return Err("no kernels in tests/workloads/kernels".into());
            }
            // The compiler path embeds an offload bundle of fatbin.so.
            let so = std::fs::read(self.kernels.join("fatbin.so"))
                .map_err(|e| format!("fatbin.so: {e}"))?;
            let bundle = hrr_codeobj::bundle::write(&[(HOST_BUNDLE_ID, &[]), (CPU_BUNDLE_ID, &so)]);
            std::fs::write(self.dir.join("fatbin.bundle"), bundle)
                .map_err(|e| format!("fatbin.bundle: {e}"))?;
            Ok(())
        });
        if let Err(e) = r {
            panic!("building CPU kernels: {e}");
        }
        &self.kernels
    }

    /// The offload bundle the compiler-path workloads embed or load
    /// (`HRR_BUNDLE_PATH`).
    pub fn bundle(&self) -> Vec<u8> {
        self.kernels();
        let p = self.dir.join("fatbin.bundle");
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// A compiled kernel code object, e.g. `kernel("fill")` → bytes of fill.so.
    pub fn kernel(&self, name: &str) -> Vec<u8> {
        let p = self.kernels().join(format!("{name}.so"));
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// Compiles `tests/workloads/NAME.c` (once per process) and returns the executable.
    pub fn get(&self, name: &str) -> PathBuf {
        let kernels = self.kernels().to_path_buf();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let r = cache
            .entry(name.to_string())
            .or_insert_with(|| self.compile(name, &kernels));
        match r {
            Ok(p) => p.clone(),
            Err(e) => panic!("compiling workload {name}: {e}"),
        }
    }

    fn compile(&self, name: &str, kernels: &Path) -> Result<PathBuf, String> {
        let src = workloads_src();
        let c = src.join(format!("{name}.c"));
        if !c.exists() {
            return Err(format!("{} does not exist", c.display()));
        }
        let lib = tools().cpu_runtime();
        let libdir = lib.parent().unwrap();
        let exe = self.dir.join(name);
        let kdir = format!("-DHRR_KERNEL_DIR=\"{}\"", kernels.display());
        let bundle = format!(
            "-DHRR_BUNDLE_PATH=\"{}\"",
            self.dir.join("fatbin.bundle").display()
        );
        let include = src.join("include");
        let rpath = format!("-Wl,-rpath,{}", libdir.display());
        let args: Vec<&OsStr> = vec![
            "-D__HIP_PLATFORM_AMD__".as_ref(),
            "-O1".as_ref(),
            "-g".as_ref(),
            "-Wall".as_ref(),
            "-Werror".as_ref(),
            "-Wno-unused-function".as_ref(),
            "-pthread".as_ref(),
            kdir.as_ref(),
            bundle.as_ref(),
            "-I".as_ref(),
            src.as_os_str(),
            "-I".as_ref(),
            include.as_os_str(),
            c.as_os_str(),
            "-o".as_ref(),
            exe.as_os_str(),
            "-L".as_ref(),
            libdir.as_os_str(),
            "-lhrr_hip_cpu".as_ref(),
            rpath.as_ref(),
        ];
        // Collective workloads (`nccl_*`) use the NCCL API: the CPU
        // runtime's stand-in library, beside the runtime.
        let mut args = args;
        if name.starts_with("nccl_") {
            args.push("-lhrr_nccl_cpu".as_ref());
        }
        run_gcc(&args)?;
        Ok(exe)
    }
}

// ---------------------------------------------------------------- pipeline

/// Quotes a string for `sh`.
pub fn shq(s: impl AsRef<OsStr>) -> String {
    let s = s.as_ref().to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:,+".contains(&b))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// One run of the pipeline in its own temp dir, step by step. Every step
/// asserts its own success (and prints the command, stdout and stderr when
/// it fails); [`Pipeline::last`] is the output of the latest step.
pub struct Pipeline {
    /// The pipeline's name (its temp dir's prefix).
    pub name: String,
    dir: tempfile::TempDir,
    app: Option<PathBuf>,
    args: Vec<String>,
    last: Option<Output>,
    play_args: Vec<String>,
}

impl Pipeline {
    /// A pipeline over workload `NAME` (`tests/workloads/NAME.c`); the
    /// executable is linked into the temp dir as `./NAME`.
    pub fn new(workload: &str) -> Pipeline {
        let exe = workloads().get(workload);
        let mut p = Pipeline::empty(workload);
        let app = p.dir.path().join(workload);
        std::os::unix::fs::symlink(&exe, &app).expect("symlink the workload");
        p.app = Some(app);
        p
    }

    /// A pipeline with no application (archives built by hand or by testkit).
    pub fn empty(name: &str) -> Pipeline {
        let _ = tools();
        let dir = tempfile::Builder::new()
            .prefix(&format!("hrr-e2e-{name}-"))
            .tempdir()
            .expect("tempdir");
        Pipeline {
            name: name.to_string(),
            dir,
            app: None,
            args: Vec::new(),
            last: None,
            play_args: Vec::new(),
        }
    }

    /// Adds an argument for the application.
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.to_string());
        self
    }

    /// Adds an argument for every `hrr-play` run of [`Pipeline::play`].
    pub fn play_arg(mut self, a: &str) -> Self {
        self.play_args.push(a.to_string());
        self
    }

    /// The pipeline's temp dir.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` inside the temp dir.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `cap.hrr`.
    pub fn cap(&self) -> PathBuf {
        self.path("cap.hrr")
    }

    /// `replay.hrr`.
    pub fn replay(&self) -> PathBuf {
        self.path("replay.hrr")
    }

    /// Keeps the temp dir after the test (debugging) and returns its path.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }

    /// `./NAME ARGS` as a shell word list.
    pub fn app_cmdline(&self) -> String {
        let app = self.app.as_ref().expect("pipeline has no application");
        let mut s = format!("./{}", app.file_name().unwrap().to_string_lossy());
        for a in &self.args {
            s.push(' ');
            s += &shq(a);
        }
        s
    }

    /// A tool from target/<profile>/ with cwd = the temp dir.
    pub fn tool(&self, name: &str) -> Command {
        let mut c = Command::new(tools().bin(name));
        c.current_dir(self.dir()).timeout(TIMEOUT);
        c
    }

    /// `bash -o pipefail -c SCRIPT` in the temp dir, with the tools on PATH
    /// (so scripts read exactly like DESIGN.md §1).
    pub fn sh(&self, script: &str) -> Command {
        let mut c = Command::from_std(self.sh_std(script));
        c.timeout(TIMEOUT);
        c
    }

    /// [`Pipeline::sh`] as a plain `std::process::Command` (to spawn and
    /// interact with while it runs).
    pub fn sh_std(&self, script: &str) -> StdCommand {
        let t = tools();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![t.dir.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut c = StdCommand::new("bash");
        c.args(["-o", "pipefail", "-c", script])
            .current_dir(self.dir())
            .env("PATH", std::env::join_paths(paths).unwrap());
        c
    }

    fn record(mut self, a: Assert) -> Self {
        self.last = Some(a.get_output().clone());
        self
    }

    /// Output of the latest step.
    pub fn last(&self) -> &Output {
        self.last.as_ref().expect("no step has run yet")
    }

    /// The latest step's stdout.
    pub fn last_stdout(&self) -> String {
        String::from_utf8_lossy(&self.last().stdout).into_owned()
    }

    /// The latest step's stderr.
    pub fn last_stderr(&self) -> String {
        String::from_utf8_lossy(&self.last().stderr).into_owned()
    }

    /// Asserts on the latest step's stdout.
    pub fn stdout_has(self, needle: &str) -> Self {
        let out = self.last_stdout();
        assert!(
            out.contains(needle),
            "{}: stdout of the last step lacks {needle:?}\n--- stdout\n{out}\n--- stderr\n{}",
            self.name,
            self.last_stderr()
        );
        self
    }

    /// Asserts on the latest step's stderr.
    pub fn stderr_has(self, needle: &str) -> Self {
        let err = self.last_stderr();
        assert!(
            err.contains(needle),
            "{}: stderr of the last step lacks {needle:?}\n--- stderr\n{err}\n--- stdout\n{}",
            self.name,
            self.last_stdout()
        );
        self
    }

    /// Runs the application alone (no capture): it must pass on the CPU runtime.
    pub fn run_direct(self) -> Self {
        let script = format!("{} > direct.log", self.app_cmdline());
        let a = self.sh(&script).assert().success();
        self.record(a)
    }

    /// `hrr-cap -o cap.hrr -- ./app ARGS | tee app.log`, which must succeed.
    pub fn capture(self) -> Self {
        let a = self.capture_assert().success();
        let p = self.record(a);
        assert!(
            p.cap().join("manifest.json").exists(),
            "{}: hrr-cap wrote no {}",
            p.name,
            p.cap().display()
        );
        p
    }

    /// The capture pipeline, unasserted.
    pub fn capture_assert(&self) -> Assert {
        let script = format!("hrr-cap -o cap.hrr -- {} | tee app.log", self.app_cmdline());
        self.sh(&script).assert()
    }

    /// The application's stdout as it passed through `tee` during capture.
    pub fn app_log(&self) -> String {
        std::fs::read_to_string(self.path("app.log")).unwrap_or_default()
    }

    /// `grep HRR_SEGMENT app.log | hrr-sidecar --archive cap.hrr`.
    pub fn sidecar_from_log(self) -> Self {
        let a = self
            .sh("grep HRR_SEGMENT app.log | hrr-sidecar --archive cap.hrr")
            .assert()
            .success();
        self.record(a)
    }

    /// `hrr-sidecar --archive cap.hrr ARGS`.
    pub fn sidecar(self, args: &[&str]) -> Self {
        let a = self
            .tool("hrr-sidecar")
            .arg("--archive")
            .arg(self.cap())
            .args(args)
            .assert()
            .success();
        self.record(a)
    }

    /// `hrr-play --backend cpu cap.hrr -o replay.hrr`: exit 0 and PASS.
    pub fn play(self) -> Self {
        let a = self
            .play_cmd(&["-o", "replay.hrr"])
            .assert()
            .success()
            .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
        self.record(a)
    }

    /// `hrr-play --backend cpu cap.hrr EXTRA…` (plus [`Pipeline::play_arg`]s), unasserted.
    pub fn play_cmd(&self, extra: &[&str]) -> Command {
        let mut c = self.tool("hrr-play");
        c.args(["--backend", "cpu"])
            .arg("cap.hrr")
            .args(&self.play_args)
            .args(extra);
        c
    }

    /// Records an arbitrary step's assertion as the latest output.
    pub fn step(self, a: Assert) -> Self {
        self.record(a)
    }

    /// `hrr-diff cap.hrr replay.hrr`: exit 0.
    pub fn diff(self) -> Self {
        let a = self
            .tool("hrr-diff")
            .args(["cap.hrr", "replay.hrr"])
            .assert()
            .success();
        self.record(a)
    }

    /// The events of an archive in this pipeline's dir.
    pub fn events(&self, archive: &str) -> Vec<serde_json::Value> {
        read_events(&self.path(archive))
    }
}

/// The text of an archive's events: `events.ndjson`, or else
/// `events.ndjson.zst` decoded.
pub fn events_text(archive: &Path) -> String {
    let p = archive.join("events.ndjson");
    if p.exists() {
        return std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    let z = archive.join("events.ndjson.zst");
    let bytes = std::fs::read(&z).unwrap_or_else(|e| panic!("{}: {e}", z.display()));
    String::from_utf8(
        zstd::decode_all(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", z.display())),
    )
    .unwrap()
}

/// The bytes of blob `id` (hex) of an archive, raw or decoded.
pub fn read_blob(archive: &Path, id: &str) -> std::io::Result<Vec<u8>> {
    match std::fs::read(blob_path(archive, id)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let z = std::fs::read(blob_path(archive, id).with_extension("zst"))?;
            zstd::decode_all(&z[..])
        }
        r => r,
    }
}

/// Every line of the events of `ARCHIVE` (plain or compressed) as JSON (a
/// torn last line is skipped).
pub fn read_events(archive: &Path) -> Vec<serde_json::Value> {
    let text = events_text(archive);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Where blob `id` (its hex name) of an archive is.
pub fn blob_path(archive: &Path, id: &str) -> PathBuf {
    archive.join("blobs").join(&id[..2]).join(id)
}

/// `manifest.json` of an archive.
pub fn read_manifest(archive: &Path) -> serde_json::Value {
    let p = archive.join("manifest.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Parses `d2h : P pass (E exact, T within tolerance), F fail` from hrr-play's stdout.
pub fn d2h_counts(stdout: &str) -> Option<(u64, u64, u64, u64)> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("d2h : "))?;
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    match nums[..] {
        [p, e, t, f] => Some((p, e, t, f)),
        _ => None,
    }
}

/// Parses `region segs : N materialised` from hrr-play's stdout.
pub fn region_segs(stdout: &str) -> Option<u64> {
    let line = stdout.lines().find(|l| l.starts_with("region segs : "))?;
    line["region segs : ".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Panics when text looks like a Rust panic or a crash.
pub fn assert_no_crash(what: &str, text: &str) {
    for bad in [
        "panicked at",
        "RUST_BACKTRACE",
        "Segmentation fault",
        "core dumped",
        "stack backtrace",
    ] {
        assert!(!text.contains(bad), "{what} shows {bad:?}:\n{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_summary_lines() {
        let out = "events : 7 read, 7 replayed, 0 launches\nregions : 1 records from 1 stream(s)\n\
                   region segs : 1 materialised\nd2h : 2 pass (2 exact, 0 within tolerance), 0 fail\nPASS\n";
        assert_eq!(d2h_counts(out), Some((2, 2, 0, 0)));
        assert_eq!(region_segs(out), Some(1));
        assert_eq!(
            region_segs("region segs : 0 materialised, 1 failed\n"),
            Some(0)
        );
        assert_eq!(d2h_counts("nothing"), None);
    }

    #[test]
    fn quotes_for_sh() {
        assert_eq!(shq("./app"), "./app");
        assert_eq!(shq("a b"), "'a b'");
        assert_eq!(shq("it's"), r"'it'\''s'");
        assert_eq!(shq(""), "''");
    }
}
