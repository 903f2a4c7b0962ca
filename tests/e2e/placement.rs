//! Placement: allocations replayed at their recorded addresses, so that
//! pointers stored inside device memory stay valid. The `ptr_placed`
//! workload reads device memory through such pointers; with
//! `--no-placement` (pure translation) its replay must fail, which is what
//! shows placement is doing the work.

use hrr_tests::{Pipeline, assert_no_crash};
use predicates::prelude::*;

/// Captures `ptr_placed PART`, replays it with placement (PASS, every
/// allocation placed, hrr-diff clean) and without (FAIL).
fn with_and_without(part: &str, allocations: u64) {
    let p = Pipeline::new("ptr_placed").arg(part).capture();
    assert!(p.app_log().contains("ptr_placed: OK"), "{}", p.app_log());
    let p = p.play().stdout_has(&format!(
        "placement : {allocations} of {allocations} allocations at recorded addresses"
    ));
    assert!(
        !p.last_stderr().contains("not placed"),
        "{}",
        p.last_stderr()
    );
    let p = p.diff();

    let a = p.play_cmd(&["--no-placement", "--json"]).assert().failure();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert_no_crash("hrr-play --no-placement", &err);
    let v: serde_json::Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("--json stdout is not one JSON object ({e}):\n{out}\n{err}"));
    assert_eq!(v["result"], "FAIL", "part {part}: {v}\n{err}");
    assert_eq!(v["placement"]["placed"], 0, "{v}");
    assert_eq!(v["placement"]["enabled"], false, "{v}");
    // Where the time before the first event went, phase by phase.
    for phase in ["plan_ms", "device_open_ms", "reserve_ms"] {
        assert!(
            v["startup_ms"][phase].as_f64().is_some_and(|ms| ms >= 0.0),
            "{phase}: {v}"
        );
    }
}

#[test]
fn a_table_copied_to_the_device_needs_placement() {
    with_and_without("a", 5);
}

#[test]
fn a_table_built_by_a_kernel_needs_placement() {
    with_and_without("b", 4);
}

/// Memory the program maps itself: the reservation is made at its recorded
/// address (counted as one of the allocations), so a table copied into it
/// stays right.
#[test]
fn a_table_in_mapped_virtual_memory_needs_placement() {
    with_and_without("v", 2);
}

/// More allocations live at once than the kernel allows a process
/// mappings (65530 by default): placement reserves them in a bounded number
/// of ranges and maps their memory a slab at a time, so the replay neither
/// aborts nor translates; the pointer table they hold reads right.
#[test]
fn seventy_thousand_allocations_are_placed() {
    let p = Pipeline::new("many_allocs").capture();
    assert!(
        p.app_log().contains("many_allocs: 70000 allocations: OK"),
        "{}",
        p.app_log()
    );
    let p = p
        .play()
        .stdout_has("placement : 70000 of 70000 allocations at recorded addresses");
    p.diff();
}

/// The capture notes the address arenas the process reserves (here one the
/// program makes itself, as the CUDA driver makes its own) in the
/// manifest's `va_arenas`, for a replay to reserve its driver's at the same
/// bases; a replay archive has none.
#[test]
fn address_arenas_are_noted_in_the_manifest() {
    let p = Pipeline::new("ptr_placed").arg("r").capture();
    let log = p.app_log();
    let base = log
        .lines()
        .find_map(|l| l.strip_prefix("ptr_placed: arena "))
        .unwrap_or_else(|| panic!("no arena line:\n{log}"))
        .trim()
        .to_owned();
    let m = manifest(&p.cap());
    let arenas = m["va_arenas"].as_array().unwrap_or_else(|| panic!("{m}"));
    assert!(
        arenas
            .iter()
            .any(|a| a["base"] == base.as_str() && a["size"] == 512u64 << 20),
        "{base} not in {m}"
    );
    let p = p.play();
    assert!(manifest(&p.replay()).get("va_arenas").is_none());
}

fn manifest(archive: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(archive.join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The plain summary line, and `--no-placement` saying 0 of A.
#[test]
fn summary_line_with_and_without_placement() {
    let p = Pipeline::new("saxpy_module").capture().play();
    let out = p.last_stdout();
    let line = out
        .lines()
        .find(|l| l.starts_with("placement : "))
        .unwrap_or_else(|| panic!("no placement line:\n{out}"));
    let (placed, of) = parse(line);
    assert!(of > 0 && placed == of, "{line}");
    p.play_cmd(&["--no-placement"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "placement : 0 of {of} allocations at recorded addresses"
        )));
}

fn parse(line: &str) -> (u64, u64) {
    let w: Vec<&str> = line.split_whitespace().collect();
    (w[2].parse().unwrap(), w[4].parse().unwrap())
}

/// A recorded range something else holds at replay (mapped by a preload
/// library before `hrr-play` runs): its allocations fall back to
/// translation, say so, and a replay whose pointers are all kernel
/// arguments still passes.
#[test]
fn a_taken_range_falls_back_to_translation() {
    let p = Pipeline::new("saxpy_module").capture();
    let first = p
        .events("cap.hrr")
        .into_iter()
        .find(|e| e["op"] == "alloc" && e["mem"] == "device")
        .expect("saxpy_module allocates device memory");
    let seq = first["seq"].as_u64().unwrap();
    let ptr =
        u64::from_str_radix(first["ptr"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let size = first["size"].as_u64().unwrap();

    let lib = p.path("occupy_range.so");
    let src = hrr_tests::workloads_src().join("preload/occupy_range.c");
    let gcc = std::process::Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .expect("gcc");
    assert!(
        gcc.status.success(),
        "{}",
        String::from_utf8_lossy(&gcc.stderr)
    );

    let page = 4096;
    let a = p
        .play_cmd(&[])
        .env("LD_PRELOAD", &lib)
        .env("HRR_TEST_OCCUPY", format!("{:x}:{page}", ptr & !(page - 1)))
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    let line = out
        .lines()
        .find(|l| l.starts_with("placement : "))
        .unwrap_or_else(|| panic!("no placement line:\n{out}"));
    let (placed, of) = parse(line);
    assert!(placed < of, "{line}");
    let note = format!(
        "hrr-play: note: placement: event {seq} (hipMalloc): {ptr:#x}+{size}: translated, not placed: \
         its recorded range was taken before replay could reserve it"
    );
    assert!(err.contains(&note), "no {note:?} in:\n{err}");

    // Correct by translation, but not what `--strict` accepts.
    p.play_cmd(&["--strict"])
        .env("LD_PRELOAD", &lib)
        .env("HRR_TEST_OCCUPY", format!("{:x}:{page}", ptr & !(page - 1)))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "FAIL ({} of {of} allocations not placed; --strict)",
            of - placed
        )));
}

/// A materialised region segment is placed as well: the seed's hidden HSA
/// segment, declared by its sidecar, lands at its recorded base.
#[test]
fn a_materialised_segment_is_placed() {
    let p = Pipeline::new("hidden_segment")
        .capture()
        .sidecar_from_log()
        .play()
        .stdout_has("region segs : 1 materialised");
    let out = p.last_stdout();
    let line = out
        .lines()
        .find(|l| l.starts_with("placement : "))
        .unwrap_or_else(|| panic!("no placement line:\n{out}"));
    let (placed, of) = parse(line);
    assert!(of >= 1 && placed == of, "{line}\n{}", p.last_stderr());
    // Without placement the segment is still materialised, elsewhere.
    p.play_cmd(&["--no-placement"])
        .assert()
        .success()
        .stdout(predicate::str::contains("region segs : 1 materialised"))
        .stdout(predicate::str::contains(format!(
            "placement : 0 of {of} allocations"
        )));
}
