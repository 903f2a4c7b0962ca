//! Symbol versions.
//!
//! ROCm's libamdhip64 exports versioned symbols (`hipMalloc@@hip_4.2`), so an
//! application linked against it references `hipMalloc@hip_4.2`. Our two
//! cdylibs define no version nodes (their hip* exports are unversioned), and
//! the dynamic linker binds a versioned reference to an unversioned definition
//! in an earlier object: the preloaded interposer sees the calls. Without a GPU
//! the real runtime fails them; the archive records each failure with its
//! `ret`, and replay does not turn a failed call into a success.

#[cfg(all(feature = "cpu", feature = "intercept"))]
compile_error!("test the cpu and intercept features separately (see tests/exports.rs)");

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROCM_HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn require_rocm() {
    assert!(
        Path::new(ROCM_HIP).exists() && Path::new("/usr/include/hip/hip_runtime_api.h").exists(),
        "needs Debian's libamdhip64-5 and libamdhip64-dev (apt-get install libamdhip64-5 libamdhip64-dev)"
    );
}

#[test]
fn rocm_exports_versioned_hip_symbols() {
    require_rocm();
    let syms = dyn_syms(Path::new(ROCM_HIP));
    assert!(
        syms.iter()
            .any(|(n, def)| *def && n == "hipMalloc@@hip_4.2"),
        "libamdhip64.so.5 no longer defines hipMalloc@@hip_4.2"
    );
    let mut nodes: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, def) in &syms {
        if *def && (n.starts_with("hip") || n.starts_with("__hip")) {
            let node = n
                .split_once("@@")
                .map(|(_, v)| v)
                .unwrap_or("(unversioned)");
            *nodes.entry(node).or_default() += 1;
        }
    }
    println!("libamdhip64.so.5 hip* definitions by version node: {nodes:?}");
    assert!(
        nodes.keys().all(|k| k.starts_with("hip_")),
        "every hip* export is versioned: {nodes:?}"
    );
}

#[test]
fn our_cdylibs_export_hip_unversioned() {
    for lib in ["libhrr_hip_cpu.so", "libhrr_intercept.so"] {
        let path = artefact(lib);
        let defined: Vec<String> = dyn_syms(&path)
            .into_iter()
            .filter(|(n, def)| {
                *def && (n.starts_with("hip") || n.starts_with("__hip") || n.starts_with("hsa_"))
            })
            .map(|(n, _)| n)
            .collect();
        assert!(
            !defined.is_empty() || lib == "libhrr_intercept.so",
            "{lib} exports no hip* symbol"
        );
        let versioned: Vec<&String> = defined.iter().filter(|n| n.contains('@')).collect();
        assert!(
            versioned.is_empty(),
            "{lib} exports versioned HIP/HSA symbols: {versioned:?}"
        );
        // No version definitions at all (a version script with nodes would add them).
        let v = run(Command::new("readelf").args(["-V", "-W"]).arg(&path));
        let v = stdout(&v);
        assert!(
            !v.contains(".gnu.version_d"),
            "{lib} defines symbol versions:\n{v}"
        );
        println!(
            "{lib}: {} hip*/hsa_* exports, all unversioned, no .gnu.version_d",
            defined.len()
        );
    }
}

/// `name(args) = N` lines the C program prints → (api, ret) in call order.
fn printed_rets(out: &str) -> Vec<(String, i64)> {
    out.lines()
        .filter_map(|l| {
            let (call, ret) = l.rsplit_once(" = ")?;
            Some((
                call.split('(').next()?.to_string(),
                ret.trim().parse().ok()?,
            ))
        })
        .collect()
}

/// The archive's events, plain (`events.ndjson`) or compressed
/// (`events.ndjson.zst`, the default form of a finished archive).
fn events(archive: &Path) -> Vec<serde_json::Value> {
    let zst = archive.join("events.ndjson.zst");
    let text = if zst.exists() {
        let bytes = zstd::decode_all(std::fs::File::open(&zst).expect("events.ndjson.zst"))
            .expect("events.ndjson.zst decodes");
        String::from_utf8(bytes).expect("events are UTF-8")
    } else {
        std::fs::read_to_string(archive.join("events.ndjson")).expect("events.ndjson")
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("event line is JSON"))
        .collect()
}

#[test]
fn versioned_references_reach_the_interposer_and_failures_survive_replay() {
    require_rocm();
    let cap_bin = artefact("hrr-cap");
    let play_bin = artefact("hrr-play");
    artefact("libhrr_intercept.so");
    artefact("libhrr_hip_cpu.so");
    let dir = tmp("versioned");
    let exe = dir.join("versioned_calls");
    run(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()))
            .args(["-D__HIP_PLATFORM_AMD__", "-Wall", "-Werror"])
            .arg(repo().join("tests/abi/c/versioned_calls.c"))
            .arg("-o")
            .arg(&exe)
            .arg("-lamdhip64"),
    );
    let refs = dyn_syms(&exe);
    for api in ["hipMalloc", "hipMemcpy", "hipFree"] {
        let want = format!("{api}@hip_4.2");
        assert!(
            refs.iter().any(|(n, def)| !def && *n == want),
            "{} does not reference {want}: {refs:?}",
            exe.display()
        );
    }

    // hrr-cap -o cap.hrr -- ./versioned_calls  (LD_PRELOAD=libhrr_intercept.so, HRR_OUT=cap.hrr)
    let out = run(Command::new(&cap_bin)
        .current_dir(&dir)
        .args(["-o", "cap.hrr", "--"])
        .arg(&exe));
    let app = stdout(&out);
    assert!(app.contains("versioned_calls: done"), "{app}");
    let seen = printed_rets(&app);
    assert_eq!(seen.len(), 7, "{app}");

    let cap = dir.join("cap.hrr");
    let ev = events(&cap);
    let calls: Vec<(String, i64)> = ev
        .iter()
        .filter(|e| e["op"] != "eof")
        .map(|e| {
            (
                e["api"].as_str().unwrap_or("").to_string(),
                e["ret"].as_i64().expect("ret is an integer"),
            )
        })
        .collect();
    // Every call the program made is in the archive, in order, with the very
    // return code the program saw.
    assert_eq!(calls, seen, "archive calls vs what the application saw");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cap.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["platform"], "amd", "{manifest}");
    assert_eq!(manifest["complete"], true);

    let failed = calls.iter().filter(|(_, r)| *r != 0).count();
    if Path::new("/dev/kfd").exists() && failed == 0 {
        eprintln!("an AMD GPU is present and every call succeeded: nothing failed to replay");
        return;
    }
    assert_eq!(
        failed,
        calls.len(),
        "without a GPU every call fails: {calls:?}"
    );

    // hrr-play --backend cpu: failed calls are skipped, not replayed as successes.
    let out = Command::new(&play_bin)
        .current_dir(&dir)
        .args(["--backend", "cpu", "cap.hrr", "-o", "replay.hrr"])
        .env("HRR_HIP_RUNTIME", artefact("libhrr_hip_cpu.so"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "hrr-play failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("skipped : {failed} failed at capture")),
        "{text}"
    );
    assert!(
        text.contains("d2h : 0 pass (0 exact, 0 within tolerance), 0 fail"),
        "{text}"
    );
    let replayed = events(&dir.join("replay.hrr"));
    assert!(
        !replayed.iter().any(|e| e["op"] == "memcpy"),
        "a D2H that failed at capture was replayed: {replayed:?}"
    );
    println!("{failed} failed calls recorded with their ret and skipped at replay:\n{text}");
}

const ROCM_HSA: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

/// The HSA pool functions the capture library interposes
/// (`hrr-cap --hsa-regions`): ROCr versions them `ROCR_1`; an application
/// linked against it references `…@ROCR_1`, and the preloaded interposer's
/// unversioned definitions still bind those references. Off (no flag) the
/// interposer only forwards: no archive; on, the call starts the recorder.
/// Either way the program gets ROCr's own status.
#[test]
fn versioned_hsa_references_reach_the_interposer() {
    assert!(
        Path::new(ROCM_HSA).exists() && Path::new("/usr/include/hsa/hsa_ext_amd.h").exists(),
        "needs Debian's libhsa-runtime64-1 and libhsa-runtime-dev"
    );
    let syms = dyn_syms(Path::new(ROCM_HSA));
    for api in ["hsa_amd_memory_pool_allocate", "hsa_amd_memory_pool_free"] {
        let want = format!("{api}@@ROCR_1");
        assert!(
            syms.iter().any(|(n, def)| *def && *n == want),
            "{ROCM_HSA} does not define {want}"
        );
    }
    let cap_bin = artefact("hrr-cap");
    let lib = artefact("libhrr_intercept.so");
    let dir = tmp("versioned-hsa");
    let exe = dir.join("versioned_hsa");
    run(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()))
            .args(["-fPIE", "-pie", "-Wall", "-Werror"])
            .arg(repo().join("tests/abi/c/versioned_hsa.c"))
            .arg("-o")
            .arg(&exe)
            .args(["-lhsa-runtime64", "-ldl"]),
    );
    let refs = dyn_syms(&exe);
    for api in ["hsa_amd_memory_pool_allocate", "hsa_amd_memory_pool_free"] {
        let want = format!("{api}@ROCR_1");
        assert!(
            refs.iter().any(|(n, def)| !def && *n == want),
            "{} does not reference {want}: {refs:?}",
            exe.display()
        );
    }
    let plain = stdout(&run(&mut Command::new(&exe)));
    assert!(plain.contains("bound in /"), "{plain}");
    assert!(!plain.contains("libhrr_intercept"), "{plain}");
    let statuses = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains(" = "))
            .map(str::to_string)
            .collect()
    };
    let lib_name = lib.file_name().unwrap().to_string_lossy().into_owned();
    for (flag, archive) in [(Some("--hsa-regions"), true), (None, false)] {
        let name = if archive { "on.hrr" } else { "off.hrr" };
        let mut cmd = Command::new(&cap_bin);
        cmd.current_dir(&dir).args(["-o", name]);
        cmd.args(flag);
        let out = stdout(&run(cmd.arg("--").arg(&exe)));
        for api in ["hsa_amd_memory_pool_allocate", "hsa_amd_memory_pool_free"] {
            assert!(
                out.lines()
                    .any(|l| l.starts_with(&format!("{api} bound in")) && l.ends_with(&lib_name)),
                "{api}@ROCR_1 did not bind to the interposer:\n{out}"
            );
        }
        assert_eq!(
            statuses(&out),
            statuses(&plain),
            "ROCr's statuses, unchanged"
        );
        assert_eq!(
            dir.join(name).join("manifest.json").exists(),
            archive,
            "flag {flag:?}: the hook starts the recorder only when on"
        );
        assert!(
            !dir.join(name).join("regions").exists(),
            "nothing allocated"
        );
    }
    println!(
        "hsa_amd_memory_pool_allocate@ROCR_1 / hsa_amd_memory_pool_free@ROCR_1 bind to {lib_name}; \
         statuses {:?}",
        statuses(&plain)
    );
}

/// The compiler path (hipcc's `<<<>>>` lowering) through versioned references
/// too: `__hipRegisterFunction@hip_4.2` is recorded, then the first failing call.
#[test]
fn hipcc_binary_registration_reaches_the_interposer() {
    require_rocm();
    let Ok(hipcc) = which("hipcc") else {
        panic!("hipcc missing: apt-get install hipcc");
    };
    let cap_bin = artefact("hrr-cap");
    artefact("libhrr_intercept.so");
    let dir = tmp("hipcc");
    let exe = dir.join("vector_add");
    run(Command::new(hipcc)
        .arg("--offload-arch=gfx90a")
        .arg(repo().join("tests/abi/hip/vector_add.hip"))
        .arg("-o")
        .arg(&exe));
    let out = Command::new(&cap_bin)
        .current_dir(&dir)
        .args(["-o", "cap.hrr", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    let ev = events(&dir.join("cap.hrr"));
    assert!(
        ev.iter()
            .any(|e| e["api"] == "__hipRegisterFunction"
                && e["name"] == "_Z10vector_addPKfS0_Pf5Scale"),
        "no __hipRegisterFunction event: {ev:?}"
    );
    let malloc = ev
        .iter()
        .find(|e| e["api"] == "hipMalloc")
        .expect("hipMalloc recorded");
    if !Path::new("/dev/kfd").exists() {
        assert_ne!(malloc["ret"], 0, "{malloc}");
        assert!(
            !out.status.success(),
            "vector_add cannot pass without a GPU"
        );
    }
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
