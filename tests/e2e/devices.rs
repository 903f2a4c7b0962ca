//! Several devices in one process (`HRR_CPU_DEVICES=2`): every event says
//! which device it ran on, replay makes that device (or the one
//! `--device-map` names) current, and a machine with too few devices is
//! refused before anything is replayed.

use hrr_tests::{Pipeline, read_manifest};
use serde_json::Value;

/// `tests/workloads/multi_device.c` captured on two CPU devices.
fn captured() -> Pipeline {
    let p = Pipeline::new("multi_device");
    let a = p
        .sh("HRR_CPU_DEVICES=2 hrr-cap -o cap.hrr -- ./multi_device | tee app.log")
        .assert()
        .success();
    let p = p.step(a);
    assert!(p.app_log().contains("multi_device: OK"), "{}", p.app_log());
    p
}

/// `hrr-play` on `devices` CPU devices with `extra` arguments.
fn play(p: &Pipeline, devices: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    p.play_cmd(extra).env("HRR_CPU_DEVICES", devices).assert()
}

fn dev(e: &Value) -> u64 {
    e.get("dev")
        .map_or(0, |d| d.as_u64().expect("dev is a number"))
}

#[test]
fn events_on_device_1_carry_their_device() {
    let p = captured();
    let ev = p.events("cap.hrr");
    let one = |api: &str, op: &str| -> Vec<&Value> {
        ev.iter()
            .filter(|e| e["api"] == api && e["op"] == op)
            .collect()
    };
    // The kernel ran on device 1, as did the uploads and allocations made
    // while it was current; device 0's allocations say nothing (0).
    let launches: Vec<&Value> = one("hipModuleLaunchKernel", "launch")
        .into_iter()
        .filter(|e| e["ret"] == 0)
        .collect();
    assert_eq!(launches.len(), 1);
    assert_eq!(dev(launches[0]), 1, "{}", launches[0]);
    let allocs: Vec<u64> = one("hipMalloc", "alloc").into_iter().map(dev).collect();
    assert_eq!(allocs, [0, 0, 1, 1]);
    let sets: Vec<(i64, u64)> = one("hipSetDevice", "set_device")
        .into_iter()
        .map(|e| (e["device"].as_i64().unwrap(), dev(e)))
        .collect();
    assert_eq!(
        sets,
        [(0, 0), (1, 1), (0, 0), (1, 1)],
        "set_device carries its new device"
    );
    let h2d: Vec<u64> = ev.iter().filter(|e| e["dir"] == "h2d").map(dev).collect();
    assert_eq!(h2d, [1, 1]);
    // Device 0 copies from device 1, and reads the result back.
    let peer = one("hipMemcpyPeer", "memcpy_peer");
    assert_eq!(
        (
            dev(peer[0]),
            peer[0]["src_device"].as_i64(),
            peer[0]["dst_device"].as_i64()
        ),
        (0, Some(1), Some(0))
    );
    let d2h: Vec<u64> = ev.iter().filter(|e| e["dir"] == "d2h").map(dev).collect();
    assert_eq!(d2h, [0, 0]);
    // Device 0's events do not grow: no `dev` key at all.
    let text = hrr_tests::events_text(&p.cap());
    assert!(!text.contains("\"dev\":0"), "dev 0 is written");
    assert_eq!(
        read_manifest(&p.cap())["devices"],
        serde_json::json!([0, 1])
    );
    // --info shows both devices.
    let a = p
        .tool("hrr-play")
        .args(["--info", "cap.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let line = out
        .lines()
        .find(|l| l.starts_with("devices : "))
        .unwrap_or_default();
    assert!(line.contains("0 (") && line.contains("1 ("), "{out}");
    // hrr-trace keeps it on the call's slice.
    let a = p.tool("hrr-trace").arg("cap.hrr").assert().success();
    let trace = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let launch = trace
        .lines()
        .find(|l| l.contains("\"hipModuleLaunchKernel\"") && l.contains("\"ret\":0"))
        .unwrap_or_default();
    assert!(launch.contains("\"dev\":1"), "{launch}");
}

#[test]
fn two_devices_replay_and_diff_pass() {
    let p = captured();
    let a = play(&p, "2", &["-o", "replay.hrr"]).success();
    let p = p
        .step(a)
        .stdout_has("devices : 0 on local 0, 1 on local 1 (")
        .stdout_has("d2h : 2 pass")
        .stdout_has("\nPASS");
    p.diff();
}

#[test]
fn one_device_is_refused_naming_the_device() {
    let p = captured();
    let a = play(&p, "1", &["-o", "replay.hrr"]).failure();
    let p = p.step(a);
    let err = p.last_stderr();
    assert!(
        err.contains("device 1") && err.contains("1 device") && err.contains("--device-map"),
        "{err}"
    );
    assert!(!p.last_stdout().contains("PASS"), "{}", p.last_stdout());
}

#[test]
fn two_recorded_devices_fold_onto_one() {
    let p = captured();
    let a = play(&p, "1", &["--device-map", "0=0,1=0", "-o", "replay.hrr"]).success();
    let p = p.step(a).stdout_has("\nPASS");
    // Everything ran on local device 0: no switch at all.
    assert!(
        !p.last_stdout().contains("devices :"),
        "{}",
        p.last_stdout()
    );
    p.diff();
}

#[test]
fn swapped_devices_still_pass() {
    let p = captured();
    let a = play(&p, "2", &["--device-map", "1=0,0=1", "-o", "replay.hrr"]).success();
    p.step(a)
        .stdout_has("devices : 0 on local 1, 1 on local 0 (")
        .stdout_has("\nPASS")
        .diff();
}

#[test]
fn a_bad_device_map_names_the_bad_item() {
    let p = captured();
    for (spec, bad) in [
        ("0=0,1:0", "`1:0`"),
        ("1=x", "`1=x`"),
        ("1=0,1=1", "mapped twice"),
    ] {
        let a = play(&p, "2", &["--device-map", spec]).code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(err.contains(bad) && err.contains("device"), "{spec}: {err}");
    }
}

#[test]
fn an_extracted_kernel_keeps_its_device() {
    let p = captured();
    let a = p
        .tool("hrr-extract")
        .env("HRR_CPU_DEVICES", "2")
        .args(["cap.hrr", "--kernel", "saxpy", "-o", "ext.hrr"])
        .assert()
        .success();
    let p = p.step(a);
    assert_eq!(
        read_manifest(&p.path("ext.hrr"))["devices"],
        serde_json::json!([1])
    );
    let ev = p.events("ext.hrr");
    let launch = ev.iter().find(|e| e["op"] == "launch").expect("the launch");
    assert_eq!(dev(launch), 1, "{launch}");
    // One device: refused; device 1 mapped onto it: the kernel passes.
    let run = |devices: &str, extra: &[&str]| {
        let mut c = p.tool("hrr-play");
        c.args(["--backend", "cpu", "ext.hrr"])
            .args(extra)
            .env("HRR_CPU_DEVICES", devices);
        c.assert()
    };
    let a = run("1", &[]).failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("device 1") && err.contains("--device-map"),
        "{err}"
    );
    run("1", &["--device-map", "1=0"])
        .success()
        .stdout(predicates::str::contains("\nPASS"));
}

/// `peer_access` replays between the devices the recorded ones map to:
/// straight and swapped, and twice in one process (`--runs 2`: the second
/// enabling finds it enabled already, which is what was wanted).
#[test]
fn peer_access_is_enabled_between_the_mapped_devices() {
    let p = captured();
    let ev = p.events("cap.hrr");
    let access: Vec<&Value> = ev.iter().filter(|e| e["op"] == "peer_access").collect();
    assert_eq!(access.len(), 1, "{access:?}");
    assert_eq!((dev(access[0]), access[0]["peer"].as_i64()), (1, Some(0)));
    for extra in [
        &[][..],
        &["--device-map", "1=0,0=1"][..],
        &["--runs", "2"][..],
    ] {
        let a = play(&p, "2", extra).success();
        let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
        assert!(out.lines().any(|l| l == "PASS"), "{extra:?}: {out}");
    }
}

/// A machine whose devices cannot access each other (`HRR_CPU_PEER=none`
/// on the CPU runtime): the replay is refused at the `peer_access` event,
/// naming both devices, before the copies and kernels that rely on it.
#[test]
fn devices_without_peer_access_are_refused_by_name() {
    let p = captured();
    let a = p
        .play_cmd(&[])
        .env("HRR_CPU_DEVICES", "2")
        .env("HRR_CPU_PEER", "none")
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("(hipDeviceEnablePeerAccess): device 1 cannot access device 0's memory on this machine (recorded device 1 to device 0): no peer access between them"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(!out.lines().any(|l| l == "PASS"), "{out}");
    // Folded onto one device, no peer access is needed.
    play(&p, "1", &["--device-map", "0=0,1=0"]).success();
}
