//! The seed's scenario (seed/000_7a18df3aab1bb06f.txt) end to end: a 256 KiB
//! HSA segment whose first touch is a captured H2D copy. With the sidecar the
//! replay materialises it once and the D2H outputs match byte for byte;
//! without it replay stops with the fatal "not mapped" line.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_events};
use predicates::prelude::*;

/// The `base=0x…` the app reported.
fn reported_base(log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.starts_with("HRR_SEGMENT "))
        .unwrap_or_else(|| panic!("no HRR_SEGMENT:\n{log}"));
    assert!(line.ends_with(" size=262144"), "{line}");
    let base = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("base="))
        .unwrap();
    assert!(base.starts_with("0x") && base.len() > 2, "{line}");
    base.to_string()
}

#[test]
fn seed_with_sidecar_materialises_once_and_matches() {
    let p = Pipeline::new("hidden_segment").capture();
    let base = reported_base(&p.app_log());

    // The archive saw no allocation at the segment: the memory is hidden.
    let ev = read_events(&p.cap());
    assert!(
        !ev.iter()
            .any(|e| e["op"] == "alloc" && e["ptr"] == base.as_str()),
        "the HSA segment must be invisible to capture"
    );
    let h2d = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "h2d")
        .expect("an H2D");
    assert_eq!(
        h2d["dst"],
        base.as_str(),
        "the segment's first touch is the H2D: {h2d}"
    );
    assert_eq!(h2d["size"], 262144);

    let p = p.sidecar_from_log();
    let sidecars: Vec<_> = std::fs::read_dir(p.cap().join("regions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    assert_eq!(
        sidecars.len(),
        1,
        "hrr-sidecar --archive wrote one regions/*.ndjson: {sidecars:?}"
    );
    let text = std::fs::read_to_string(&sidecars[0]).unwrap();
    let rec: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (rec["op"].as_str(), rec["kind"].as_str()),
        (Some("add"), Some("segment")),
        "{rec}"
    );
    assert_eq!(
        (rec["base"].as_str(), rec["size"].as_u64()),
        (Some(base.as_str()), Some(262144)),
        "{rec}"
    );

    // Exactly DESIGN.md §1's commands (the backend comes from the archive's platform).
    let a = p.sh("hrr-play cap.hrr -o replay.hrr").assert().success();
    let p = p.step(a);
    let out = p.last_stdout();
    assert!(
        out.contains("regions : 1 records from 1 stream(s)"),
        "{out}"
    );
    assert!(out.contains("region segs : 1 materialised"), "{out}");
    assert_eq!(
        d2h_counts(&out),
        Some((2, 2, 0, 0)),
        "both D2Hs byte-exact:\n{out}"
    );
    assert!(out.lines().any(|l| l == "PASS"), "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());

    let a = p.sh("hrr-diff cap.hrr replay.hrr").assert().success();
    assert_no_crash("hrr-diff", &String::from_utf8_lossy(&a.get_output().stderr));
    // The replay archive holds the two D2H events, paired to capture seqs.
    let rev = read_events(&p.replay());
    let d2h: Vec<_> = rev
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .collect();
    assert_eq!(d2h.len(), 2, "{rev:?}");
}

#[test]
fn seed_without_sidecar_is_fatal_not_mapped() {
    let p = Pipeline::new("hidden_segment").capture();
    let base = reported_base(&p.app_log());
    let a = p
        .sh("hrr-play cap.hrr -o replay.hrr")
        .assert()
        .code(1)
        .stderr(
            predicate::str::is_match(format!(
                r"(?m)^hrr-play: fatal: event \d+ \(hipMemcpy\): h2d dst {base} not mapped"
            ))
            .unwrap(),
        )
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap().not());
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert_no_crash("hrr-play", &err);
    assert_eq!(
        err.matches("hrr-play: fatal:").count(),
        1,
        "one fatal line:\n{err}"
    );
}

#[test]
fn seed_with_sidecar_but_no_regions_flag_is_fatal() {
    // --no-regions ignores the sidecar: the same fatal as without one.
    let p = Pipeline::new("hidden_segment").capture().sidecar_from_log();
    p.play_cmd(&["--no-regions"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("h2d dst").and(predicate::str::contains("not mapped")));
}

#[test]
fn seed_sidecar_from_base_flag() {
    // `hrr-sidecar --base 0x… --size N` instead of the log.
    let p = Pipeline::new("hidden_segment").capture();
    let base = reported_base(&p.app_log());
    let p = p.sidecar(&["--base", &base, "--size", "262144"]).play();
    assert!(
        p.last_stdout().contains("region segs : 1 materialised"),
        "{}",
        p.last_stdout()
    );
}

#[test]
fn sidecar_to_stdout_is_the_documented_line() {
    // Without --archive, hrr-sidecar writes the NDJSON record to stdout.
    let p = Pipeline::empty("sidecar_stdout");
    let a = p
        .sh("echo 'HRR_SEGMENT base=0x7fbe01400000 size=262144' | hrr-sidecar")
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let line = out.lines().next().unwrap_or_else(|| panic!("no output"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["op"], "add");
    assert_eq!(v["kind"], "segment");
    assert_eq!(v["base"], "0x7fbe01400000");
    assert_eq!(v["size"], 262144);
    assert!(
        v["t"].is_u64() && v["device"].is_u64() && v["tag"].is_u64(),
        "{v}"
    );
}
