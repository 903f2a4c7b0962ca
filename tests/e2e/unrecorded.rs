//! The whole HIP table through the capture library: entry points recorded
//! since every export is generated from it, calls forwarded unrecorded and
//! counted, and what hrr-cap says when nothing was recorded.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_manifest};
use serde_json::Value;

fn apis(events: &[Value], api: &str) -> Vec<Value> {
    events.iter().filter(|e| e["api"] == api).cloned().collect()
}

/// The line hrr-play prints right before its summary's `events :` line.
fn line_before_summary(stdout: &str) -> &str {
    let lines: Vec<&str> = stdout.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("events : "))
        .unwrap_or_else(|| panic!("no summary in:\n{stdout}"));
    assert!(i > 0, "nothing before the summary:\n{stdout}");
    lines[i - 1]
}

/// (a) hipMallocAsync/hipFreeAsync, hipMemcpyHtoD/DtoH, hipMemsetD32,
/// hipExtLaunchKernel, hipLaunchCooperativeKernel and hipCtxSynchronize are
/// recorded under their names, and the replay reproduces the application's
/// results byte for byte. (c) No unrecorded call: both tools say
/// `unrecorded : 0 calls`.
#[test]
fn newly_recorded_entry_points_replay_exactly() {
    let p = Pipeline::new("ext_launch").capture();
    assert!(p.app_log().contains("ext_launch: OK"), "{}", p.app_log());
    let cap_err = p.last_stderr();
    assert!(
        cap_err.lines().any(|l| l == "unrecorded : 0 calls"),
        "hrr-cap prints the unrecorded line:\n{cap_err}"
    );
    let ev = p.events("cap.hrr");
    let one = |api: &str, op: &str| {
        let e = apis(&ev, api);
        assert!(
            !e.is_empty() && e.iter().all(|e| e["op"] == op && e["ret"] == 0),
            "{api} recorded as successful {op}: {e:?}"
        );
        e
    };
    assert_eq!(one("hipMallocAsync", "alloc").len(), 2);
    assert_eq!(one("hipFreeAsync", "free").len(), 2);
    let h2d = one("hipMemcpyHtoD", "memcpy");
    assert!(
        h2d[0]["dir"] == "h2d" && h2d[0]["blob"].is_string(),
        "{h2d:?}"
    );
    let d2h = one("hipMemcpyDtoH", "memcpy");
    assert!(
        d2h[0]["dir"] == "d2h" && d2h[0]["blob"].is_string(),
        "{d2h:?}"
    );
    let set = one("hipMemsetD32", "memset");
    assert_eq!(
        (set[0]["width"].as_u64(), set[0]["size"].as_u64()),
        (Some(4), Some(20000))
    );
    let ext = one("hipExtLaunchKernel", "launch");
    assert_eq!(ext[0]["name"], "vadd");
    let coop = one("hipLaunchCooperativeKernel", "launch");
    assert_eq!(coop[0]["name"], "scale");
    one("hipCtxSynchronize", "device_sync");
    let m = read_manifest(&p.cap());
    assert!(
        m.get("unrecorded").is_none(),
        "no unrecorded field when none: {m}"
    );

    let p = p.play();
    let out = p.last_stdout();
    assert_eq!(line_before_summary(&out), "unrecorded : 0 calls", "{out}");
    let (pass, exact, _, fail) = d2h_counts(&out).unwrap();
    assert!(pass == 1 && exact == 1 && fail == 0, "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    p.diff();
}

/// (b) Two graph host-node calls are forwarded (the application checks their
/// result) and counted: hrr-cap's line, the manifest, hrr-play's line
/// before its summary and its JSON; `--strict` refuses the archive.
#[test]
fn unrecorded_calls_are_counted_and_reported() {
    let p = Pipeline::new("unrecorded_host_nodes").capture();
    assert!(
        p.app_log().contains("unrecorded_host_nodes: OK"),
        "{}",
        p.app_log()
    );
    let cap_err = p.last_stderr();
    let lines: Vec<&str> = cap_err.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.starts_with("hrr-cap: "))
        .unwrap_or_else(|| panic!("no summary:\n{cap_err}"));
    assert_eq!(
        lines.get(summary + 1).copied(),
        Some("unrecorded : 2 calls (hipMemAdvise \u{d7}2)"),
        "hrr-cap's line after its summary:\n{cap_err}"
    );
    let m = read_manifest(&p.cap());
    assert_eq!(
        m["unrecorded"],
        serde_json::json!({"hipMemAdvise": 2}),
        "{m}"
    );
    assert!(
        apis(&p.events("cap.hrr"), "hipMemAdvise").is_empty(),
        "forwarded, not recorded"
    );

    let p = p.play();
    let out = p.last_stdout();
    assert_eq!(
        line_before_summary(&out),
        "unrecorded : 2 calls (hipMemAdvise \u{d7}2)",
        "{out}"
    );
    let json = p
        .play_cmd(&["--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        v["unrecorded"],
        serde_json::json!({"calls": 2, "by_entry_point": {"hipMemAdvise": 2}}),
        "{v}"
    );

    let strict = p.play_cmd(&["--strict"]).assert().code(1);
    let err = String::from_utf8_lossy(&strict.get_output().stderr).into_owned();
    assert!(
        err.contains("hrr-play: fatal: cap.hrr:")
            && err.contains("2 calls (hipMemAdvise \u{d7}2)")
            && err.contains("--strict"),
        "a clear message:\n{err}"
    );
    assert!(
        String::from_utf8_lossy(&strict.get_output().stdout).is_empty(),
        "no replay, no summary"
    );
    assert_no_crash("hrr-play --strict", &err);
}

/// hrr-cap says why nothing was recorded: the runtime it expected and
/// whether the application loaded it (here: the CPU runtime, loaded, asked
/// only questions; loaded, not called; a program that loads none).
#[test]
fn nothing_recorded_says_why() {
    let p = Pipeline::new("queries_only");
    let a = p
        .sh("hrr-cap -o cap.hrr -- ./queries_only")
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("(nothing recorded: the app loaded the HIP runtime ")
            && err.contains(
                "libhrr_hip_cpu.so and made only calls that change no device state (queries))"
            ),
        "{err}"
    );
    assert!(err.lines().any(|l| l == "unrecorded : 0 calls"), "{err}");
    assert!(!p.cap().exists(), "no archive left behind");

    let a = p
        .sh("hrr-cap -o cap.hrr -- ./queries_only none")
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("libhrr_hip_cpu.so but made no HIP call)"),
        "{err}"
    );

    let a = p
        .sh("hrr-cap --platform hip -o cap.hrr -- true")
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "(nothing recorded: expected a HIP runtime (libamdhip64.so, libhrr_hip_cpu.so), but the app loaded none)"
        ),
        "{err}"
    );
}
