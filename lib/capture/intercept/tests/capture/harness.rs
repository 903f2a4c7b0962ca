//! Builds the real pieces (CPU runtime, capture library, hrr-cap, the C test
//! programs) and runs captures with them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use hrr_core::archive::Archive;
use hrr_core::event_reader::ReadOptions;
use hrr_core::manifest::Manifest;
use hrr_core::{BlobId, Event};

/// Where everything is.
pub struct Env {
    pub root: PathBuf,
    /// `target/<profile>`: libhrr_hip_cpu.so, libhrr_intercept.so, hrr-cap.
    pub profile: PathBuf,
    /// Compiled C programs.
    pub work: PathBuf,
}

static ENV: OnceLock<Env> = OnceLock::new();

/// Builds the CPU runtime, the capture library and hrr-cap for the profile
/// this test binary was built with (once per test process).
pub fn env() -> &'static Env {
    ENV.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../..")
            .canonicalize()
            .unwrap();
        let exe = std::env::current_exe().unwrap();
        let profile = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let target = profile.parent().unwrap();
        let name = profile.file_name().unwrap().to_string_lossy().into_owned();
        let cargo_profile = if name == "debug" {
            "dev".to_string()
        } else {
            name
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .current_dir(&root)
            .args([
                "build",
                "-q",
                "-p",
                "hrr-runtime-cpu",
                "-p",
                "hrr-intercept",
                "-p",
                "hrr-cap",
                "--profile",
            ])
            .arg(&cargo_profile)
            .arg("--target-dir")
            .arg(target)
            .status()
            .expect("run cargo build");
        assert!(
            st.success(),
            "cargo build of the runtime, capture library and hrr-cap failed"
        );
        for f in ["libhrr_hip_cpu.so", "libhrr_intercept.so", "hrr-cap"] {
            assert!(
                profile.join(f).is_file(),
                "{} missing after the build",
                profile.join(f).display()
            );
        }
        let work = profile.join("hrr-capture-tests");
        std::fs::create_dir_all(&work).unwrap();
        Env {
            root,
            profile,
            work,
        }
    })
}

impl Env {
    pub fn cap(&self) -> PathBuf {
        self.profile.join("hrr-cap")
    }

    pub fn intercept_lib(&self) -> PathBuf {
        self.profile.join("libhrr_intercept.so")
    }

    fn c_dir(&self) -> PathBuf {
        self.root.join("lib/capture/intercept/tests/c")
    }

    fn kernel_include(&self) -> PathBuf {
        self.root.join("tests/workloads/include")
    }
}

static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

fn gcc(args: &[std::ffi::OsString]) {
    let out = Command::new("gcc").args(args).output().expect("run gcc");
    assert!(
        out.status.success(),
        "gcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles `tests/c/<name>.c` (with `defines`) into a program linked
/// against the CPU runtime; cached per name for the test process.
pub fn program(name: &str, defines: &[(&str, &str)]) -> PathBuf {
    let e = env();
    let key = format!("{name}{defines:?}");
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let out = e.work.join(format!("{name}-{:016x}", {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        defines.hash(&mut h);
        h.finish()
    }));
    let mut args: Vec<std::ffi::OsString> = vec![
        "-O1".into(),
        "-g".into(),
        "-Wall".into(),
        "-D__HIP_PLATFORM_AMD__".into(),
    ];
    args.push("-I/usr/include".into());
    args.push(format!("-I{}", e.c_dir().display()).into());
    for (k, v) in defines {
        args.push(format!("-D{k}=\"{v}\"").into());
    }
    args.push(e.c_dir().join(format!("{name}.c")).into());
    args.extend(["-o".into(), out.clone().into()]);
    args.push(format!("-L{}", e.profile.display()).into());
    args.push(format!("-Wl,-rpath,{}", e.profile.display()).into());
    // --no-as-needed: a program that only reaches HIP through dlsym still
    // loads the runtime, as an application linked against it does.
    args.extend([
        "-Wl,--no-as-needed".into(),
        "-lhrr_hip_cpu".into(),
        "-ldl".into(),
        "-lpthread".into(),
    ]);
    gcc(&args);
    built.insert(key, out.clone());
    out
}

/// The test kernels as a CPU code object.
pub fn kernels_so() -> PathBuf {
    let e = env();
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let out = e.work.join("kernels.so");
        gcc(&[
            "-O2".into(),
            "-shared".into(),
            "-fPIC".into(),
            format!("-I{}", e.kernel_include().display()).into(),
            e.c_dir().join("kernels.c").into(),
            "-o".into(),
            out.clone().into(),
        ]);
        out
    })
    .clone()
}

/// The stand-in CUDA driver, runtime and runtime compiler
/// (`tests/c/fake_cuda`), built once: the directory holding `libcuda.so.1`,
/// `libcudart.so.13` and `libnvrtc.so.13` (found by the device hash under
/// its usual soname when the directory is on the loader's path).
pub fn fake_cuda() -> PathBuf {
    let e = env();
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = e.work.join("fake_cuda");
        std::fs::create_dir_all(&dir).unwrap();
        for (src, soname, extra) in [
            // -Bsymbolic: like the real driver, its table holds its own
            // functions, never a preloaded library's of the same name.
            ("libcuda.c", "libcuda.so.1", &["-Wl,-Bsymbolic"][..]),
            ("libcudart.c", "libcudart.so.13", &["-ldl"][..]),
            ("libnvrtc.c", "libnvrtc.so.13", &[][..]),
        ] {
            let mut args: Vec<std::ffi::OsString> = vec![
                "-O1".into(),
                "-Wall".into(),
                "-shared".into(),
                "-fPIC".into(),
                format!("-Wl,-soname,{soname}").into(),
                e.c_dir().join("fake_cuda").join(src).into(),
                "-o".into(),
                dir.join(soname).into(),
            ];
            args.extend(extra.iter().map(Into::into));
            gcc(&args);
        }
        dir
    })
    .clone()
}

/// Compiles `tests/c/<name>.c` against the stand-in CUDA libraries,
/// linked with `libs` (`cuda`, `cudart`; none: the program dlopens them);
/// cached per name for the test process (tests running it at once share
/// one build).
pub fn cuda_program(name: &str, libs: &[&str]) -> PathBuf {
    let e = env();
    let fake = fake_cuda();
    let key = format!("cuda {name}{libs:?}");
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let out = e.work.join(format!("{name}-cuda"));
    let mut args: Vec<std::ffi::OsString> = vec![
        "-O1".into(),
        "-g".into(),
        "-Wall".into(),
        e.c_dir().join(format!("{name}.c")).into(),
        "-o".into(),
        out.clone().into(),
        format!("-L{}", fake.display()).into(),
        format!("-Wl,-rpath,{}", fake.display()).into(),
    ];
    for l in libs {
        let so = if *l == "cuda" {
            "libcuda.so.1"
        } else {
            "libcudart.so.13"
        };
        args.push(format!("-l:{so}").into());
    }
    args.push("-ldl".into());
    gcc(&args);
    built.insert(key, out.clone());
    out
}

/// [`capture`] with the stand-in CUDA libraries on the loader's path (a
/// program or runtime that dlopens `libcuda.so.1` finds them).
pub fn capture_cuda(dir: &Path, app: &Path, args: &[&str]) -> Output {
    capture_with(
        dir,
        app,
        args,
        &[("LD_LIBRARY_PATH", fake_cuda().as_os_str())],
    )
}

/// Runs `app args…` under hrr-cap into `dir` (core dumps off).
pub fn capture(dir: &Path, app: &Path, args: &[&str]) -> Output {
    capture_with(dir, app, args, &[])
}

/// [`capture`] with extra environment variables.
pub fn capture_with(
    dir: &Path,
    app: &Path,
    args: &[&str],
    vars: &[(&str, &std::ffi::OsStr)],
) -> Output {
    let e = env();
    Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -c 0; cap=$1; dir=$2; shift 2; exec "$cap" -o "$dir" -- "$@""#)
        .arg("sh")
        .arg(e.cap())
        .arg(dir)
        .arg(app)
        .args(args)
        .env_remove("LD_PRELOAD")
        .env_remove("HRR_OUT")
        .envs(vars.iter().copied())
        .output()
        .expect("run hrr-cap")
}

/// A captured archive read back with hrr-core.
pub struct Captured {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub events: Vec<Event>,
    pub archive: Archive,
}

impl Captured {
    pub fn open(dir: &Path) -> Captured {
        let archive = Archive::open(dir).unwrap_or_else(|e| panic!("open {}: {e}", dir.display()));
        let events = archive
            .events(ReadOptions::strict())
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("read events of {}: {e}", dir.display()));
        Captured {
            dir: dir.to_path_buf(),
            manifest: archive.manifest().clone(),
            events,
            archive,
        }
    }

    pub fn blob(&self, id: &BlobId) -> Vec<u8> {
        self.archive
            .blobs()
            .get(id)
            .unwrap_or_else(|e| panic!("blob {id}: {e}"))
            .to_vec()
    }

    pub fn has_blob(&self, id: &BlobId) -> bool {
        self.archive.blobs().contains(id)
    }

    /// Seqs are 0..N in file order.
    pub fn assert_seqs_contiguous(&self) {
        for (i, e) in self.events.iter().enumerate() {
            assert_eq!(
                e.seq,
                i as u64,
                "event {i} of {} has seq {}",
                self.dir.display(),
                e.seq
            );
        }
    }
}

/// `key=0x…` values printed by a test program.
pub fn printed_addrs(stdout: &str) -> HashMap<String, u64> {
    stdout
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter_map(|(k, v)| {
            Some((
                k.to_string(),
                u64::from_str_radix(v.strip_prefix("0x")?, 16).ok()?,
            ))
        })
        .collect()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The little-endian bytes of `v`.
pub fn u32s(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}
