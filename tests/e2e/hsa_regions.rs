//! The built-in HSA region producer end to end: `hrr-cap --hsa-regions`
//! records the application's HSA pool allocations into `regions/hsa.ndjson`,
//! so the seed's scenario replays with no sidecar step; without the flag
//! nothing changes (replay stops "not mapped" as before); with both the flag
//! and a hand-made sidecar the segment is backed once.

use std::path::Path;
use std::process::Command as StdCommand;

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_events, read_manifest};
use predicates::prelude::*;

/// `hrr-cap --hsa-regions -o cap.hrr -- ./app | tee app.log`, which must succeed.
fn capture_with_flag(p: Pipeline) -> Pipeline {
    let script = format!(
        "hrr-cap --hsa-regions -o cap.hrr -- {} | tee app.log",
        p.app_cmdline()
    );
    let a = p.sh(&script).assert().success();
    p.step(a)
}

/// The `base=0x…` values of the app's `HRR_SEGMENT` lines, in order.
fn reported_bases(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.starts_with("HRR_SEGMENT "))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("base=")))
        .map(str::to_string)
        .collect()
}

/// The producer's records, as JSON.
fn hsa_records(archive: &Path) -> Vec<serde_json::Value> {
    let p = archive.join("regions/hsa.ndjson");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(text.ends_with('\n'), "whole lines only: {text:?}");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn t_of(v: &serde_json::Value) -> u64 {
    v["t"].as_u64().unwrap_or_else(|| panic!("no t: {v}"))
}

#[test]
fn flag_replays_the_seed_without_a_sidecar() {
    let p = capture_with_flag(Pipeline::new("hidden_segment")).stdout_has("hidden_segment: OK");
    let base = reported_bases(&p.app_log()).remove(0);

    let recs = hsa_records(&p.cap());
    assert_eq!(recs.len(), 2, "one add, one del: {recs:?}");
    let (add, del) = (&recs[0], &recs[1]);
    for (r, op) in [(add, "add"), (del, "del")] {
        assert_eq!(r["op"], op, "{r}");
        assert_eq!(r["kind"], "segment", "{r}");
        assert_eq!(r["base"], base.as_str(), "the pointer the app got: {r}");
        assert_eq!(r["size"], 262144, "{r}");
        assert_eq!(r["device"], 0, "the CPU runtime's one GPU agent: {r}");
        assert_eq!(r["producer"], "hsa", "{r}");
        assert_eq!(r["tag"], 0x48_5341, "{r}");
    }
    // Same clock as the events: live before the first touch, dead after the
    // last use and before the archive's end.
    let ev = read_events(&p.cap());
    let h2d = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "h2d")
        .expect("an H2D");
    assert_eq!(h2d["dst"], base.as_str());
    let last_d2h = ev
        .iter()
        .rfind(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .expect("a D2H");
    let eof = ev.iter().find(|e| e["op"] == "eof").expect("eof");
    assert!(
        t_of(add) < t_of(h2d) && t_of(last_d2h) < t_of(del) && t_of(del) < t_of(eof),
        "add {} h2d {} last d2h {} del {} eof {}",
        t_of(add),
        t_of(h2d),
        t_of(last_d2h),
        t_of(del),
        t_of(eof)
    );
    assert!(
        !ev.iter()
            .any(|e| e["op"] == "alloc" && e["ptr"] == base.as_str()),
        "still invisible to the HIP capture"
    );

    let p = p
        .play()
        .stdout_has("regions : 2 records from 1 stream(s)")
        .stdout_has("region segs : 1 materialised");
    assert_eq!(d2h_counts(&p.last_stdout()), Some((2, 2, 0, 0)));
    assert_no_crash("hrr-play", &p.last_stderr());
    p.diff();
}

#[test]
fn without_the_flag_nothing_is_declared_and_replay_stops_not_mapped() {
    let p = Pipeline::new("hidden_segment").capture();
    assert!(
        !p.cap().join("regions").exists(),
        "no region file without --hsa-regions"
    );
    let base = reported_bases(&p.app_log()).remove(0);
    p.play_cmd(&["-o", "replay.hrr"]).assert().code(1).stderr(
        predicate::str::is_match(format!(
            r"(?m)^hrr-play: fatal: event \d+ \(hipMemcpy\): h2d dst {base} not mapped"
        ))
        .unwrap(),
    );
}

#[test]
fn flag_and_a_manual_sidecar_materialise_once() {
    let p = capture_with_flag(Pipeline::new("hidden_segment"));
    let base = reported_bases(&p.app_log()).remove(0);
    let p = p.sidecar_from_log().stderr_has(&format!(
        "note: stdin:1: segment {base}+262144 is also declared by"
    ));
    let p = p
        .play()
        .stdout_has("regions : 3 records from 2 stream(s)")
        .stdout_has("region segs : 1 materialised");
    assert_eq!(d2h_counts(&p.last_stdout()), Some((2, 2, 0, 0)));
    p.diff();
}

#[test]
fn freed_reused_host_and_failed_allocations() {
    let p = capture_with_flag(Pipeline::new("hsa_regions")).stdout_has("hsa_regions: OK");
    let log = p.app_log();
    let bases = reported_bases(&log);
    assert_eq!(bases.len(), 3, "A, B, C: {log}");
    let recs = hsa_records(&p.cap());
    let ops: Vec<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["op"].as_str().unwrap().to_string(),
                r["base"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let (a, b, c) = (&bases[0], &bases[1], &bases[2]);
    // Nothing for the CPU-pool buffer, nothing for the failing calls.
    let want: Vec<(String, String)> = [
        ("add", a),
        ("add", b),
        ("del", a),
        ("add", c),
        ("del", b),
        ("del", c),
    ]
    .iter()
    .map(|(o, b)| (o.to_string(), b.to_string()))
    .collect();
    assert_eq!(ops, want, "{recs:?}");
    assert!(
        recs.windows(2).all(|w| t_of(&w[0]) <= t_of(&w[1])),
        "file order is time order here: {recs:?}"
    );
    assert!(log.contains("C reuses A's address"), "{log}");

    let p = p.play().stdout_has("region segs : 3 materialised");
    assert_eq!(d2h_counts(&p.last_stdout()), Some((2, 2, 0, 0)));
    p.diff();
}

/// `setarch -R` (no address-space randomisation) when it works here: the
/// pointers the program prints are then the same run to run.
fn no_aslr() -> &'static str {
    let ok = StdCommand::new("setarch")
        .args(["-R", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if ok { "setarch -R " } else { "" }
}

/// Replaces `0x…` by `0x?` (only when addresses are randomised).
fn mask_addresses(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i + 2]);
        let tail = &rest[i + 2..];
        let n = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push('?');
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_program_sees_no_difference() {
    let p = Pipeline::new("hsa_regions");
    let prefix = no_aslr();
    let run = |flag: &str, out: &str| {
        let script = format!("{prefix}hrr-cap {flag} -o {out} -- {}", p.app_cmdline());
        let o = p.sh(&script).output().expect("run hrr-cap");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code_on, out_on) = run("--hsa-regions", "on.hrr");
    let (code_off, out_off) = run("", "off.hrr");
    assert_eq!(code_on, Some(0), "{out_on}");
    assert_eq!(code_on, code_off, "exit status");
    for line in [
        "status allocate(gpu pool, 0 bytes) = 0x1003",
        "status allocate(unknown pool) = 0x28",
        "status free(never allocated) = 0x1001",
        "status free(A) = 0",
        "hsa_regions: OK",
    ] {
        assert!(out_on.lines().any(|l| l == line), "{line:?} in\n{out_on}");
    }
    if prefix.is_empty() {
        assert_eq!(mask_addresses(&out_on), mask_addresses(&out_off));
    } else {
        assert_eq!(out_on, out_off, "stdout, byte for byte");
    }
    assert!(p.path("on.hrr/regions/hsa.ndjson").exists());
    assert!(!p.path("off.hrr/regions").exists());
}

#[test]
fn sigkill_keeps_every_record_made_before_it() {
    let p = Pipeline::new("hsa_regions").arg("kill");
    let script = format!(
        "hrr-cap --hsa-regions -o cap.hrr -- {} | tee app.log",
        p.app_cmdline()
    );
    let a = p.sh(&script).assert().code(128 + libc::SIGKILL);
    let p = p.step(a).stdout_has("hsa_regions: A -> B -> host ok");
    assert_eq!(read_manifest(&p.cap())["complete"], false);
    let bases = reported_bases(&p.app_log());
    let recs = hsa_records(&p.cap());
    let adds: Vec<&str> = recs
        .iter()
        .filter(|r| r["op"] == "add")
        .map(|r| r["base"].as_str().unwrap())
        .collect();
    assert_eq!(adds, bases, "both segments, no flush needed: {recs:?}");
    assert_eq!(adds.len(), recs.len(), "nothing was freed: {recs:?}");
}
