//! End-to-end tests of the `hrr-sidecar` binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hrr_core::hrrr::HrrrWriter;
use hrr_core::manifest::Platform;
use hrr_core::region_record::{RegionKind, RegionOp, RegionRecord, read_region_ndjson};
use hrr_core::testkit::ArchiveBuilder;
use predicates::prelude::*;
use predicates::str::contains;

const HIDDEN: u64 = 0x7fbe_0140_0000;

fn archive(dir: &Path) -> PathBuf {
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(0x1000, 0x1000)
        .h2d(HIDDEN, &[7; 4096])
        .d2d(0x1000, HIDDEN + 0x3_0000, 64)
        .d2h(0x1000, &[7; 64])
        .write(dir.join("cap.hrr"))
        .unwrap()
}

fn sidecar() -> Command {
    Command::cargo_bin("hrr-sidecar").unwrap()
}

fn records(archive: &Path, name: &str) -> Vec<RegionRecord> {
    read_region_ndjson(archive.join("regions").join(format!("{name}.ndjson"))).unwrap()
}

#[test]
fn base_and_size_print_one_ndjson_line() {
    sidecar()
        .args([
            "--base",
            "0x7fbe01400000",
            "--size",
            "262144",
            "--device",
            "1",
            "--at",
            "5",
            "--tag",
            "3",
        ])
        .assert()
        .code(0)
        .stdout(
            "{\"op\":\"add\",\"kind\":\"segment\",\"base\":\"0x7fbe01400000\",\"size\":262144,\
             \"device\":1,\"t\":5,\"tag\":3}\n",
        );
}

#[test]
fn stdin_reports_append_to_the_archive() {
    let t = tempfile::tempdir().unwrap();
    let cap = archive(t.path());
    let log = "app starting\nHRR_SEGMENT base=0x7fbe01400000 size=262144\nresult ok\n\
               HRR_SEGMENT base=0x7fbe02000000 size=4096 kind=block\n";
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .write_stdin(log)
        .assert()
        .code(0)
        .stdout("")
        .stderr(contains("appended 2 record(s)").and(contains("regions/sidecar.ndjson")));
    let recs = records(&cap, "sidecar");
    assert_eq!(recs.len(), 2);
    assert_eq!(
        (recs[0].base, recs[0].size, recs[0].kind),
        (HIDDEN, 262144, RegionKind::Segment)
    );
    assert_eq!(recs[1].kind, RegionKind::Block);

    // A second run appends to the same file.
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x10000000", "--size", "0x1000"])
        .assert()
        .code(0);
    assert_eq!(records(&cap, "sidecar").len(), 3);
}

#[test]
fn bad_report_line_is_named_and_exits_2() {
    let t = tempfile::tempdir().unwrap();
    let cap = archive(t.path());
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .write_stdin("HRR_SEGMENT base=0x1000 size=4096\nHRR_SEGMENT base=0xnothex size=4096\n")
        .assert()
        .code(2)
        .stderr(contains("stdin:2: bad base `0xnothex`"));
    assert!(
        !cap.join("regions/sidecar.ndjson").exists(),
        "nothing written on error"
    );
}

#[test]
fn zero_size_overflow_and_overlap_are_errors() {
    sidecar()
        .args(["--base", "0x1000", "--size", "0"])
        .assert()
        .code(2)
        .stderr(contains("has zero size"));
    sidecar()
        .args(["--base", "0xffffffffffffff00", "--size", "4096"])
        .assert()
        .code(2)
        .stderr(contains("overflows"));
    sidecar()
        .write_stdin("base=0x10000 size=0x2000\nbase=0x11000 size=0x1000\n")
        .assert()
        .code(2)
        .stderr(contains(
            "stdin:2: segment 0x11000+4096 overlaps segment 0x10000+8192 from stdin:1",
        ));

    let t = tempfile::tempdir().unwrap();
    let cap = archive(t.path());
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x10000", "--size", "4096"])
        .assert()
        .code(0);
    // The same sidecar declaring it twice is a mistake.
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x10000", "--size", "4096"])
        .assert()
        .code(2)
        .stderr(contains("already declared by").and(contains("sidecar.ndjson record 1")));
    // Another file declaring the same memory is a second producer's view of
    // it (replay backs the two once): accepted, with a note.
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x10000", "--size", "4096", "--name", "again"])
        .assert()
        .code(0)
        .stderr(
            contains("note: --base/--size: segment 0x10000+4096 is also declared by").and(
                contains("sidecar.ndjson record 1; replay backs them as one"),
            ),
        );
    // A partial overlap with another file is still refused.
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x10800", "--size", "4096", "--name", "third"])
        .assert()
        .code(2)
        .stderr(contains("overlaps segment 0x10000+4096"));
}

#[test]
fn size_auto_infers_from_the_archive() {
    let t = tempfile::tempdir().unwrap();
    let cap = archive(t.path());
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x7fbe01400000", "--size", "auto"])
        .assert()
        .code(0);
    let recs = records(&cap, "sidecar");
    // The D2D source at +0x30000 (64 bytes) is the furthest hidden access.
    assert_eq!(recs[0].size, 0x3_1000);

    sidecar()
        .args(["--base", "0x7fbe01400000", "--size", "auto"])
        .assert()
        .code(2)
        .stderr(contains("--size auto needs --archive"));
    sidecar()
        .arg("--archive")
        .arg(&cap)
        .args(["--base", "0x500", "--size", "auto"])
        .assert()
        .code(2)
        .stderr(contains("found no access at or above 0x500"));
}

#[test]
fn from_hrrr_converts_and_recovers_a_torn_tail() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("pytorch.hrrr");
    let recs = [
        RegionRecord::segment(HIDDEN, 1 << 20, 0),
        RegionRecord {
            kind: RegionKind::Block,
            tag: 4,
            ..RegionRecord::segment(HIDDEN + 512, 256, 100)
        },
        RegionRecord {
            op: RegionOp::Del,
            ..RegionRecord::segment(HIDDEN, 1 << 20, 200)
        },
    ];
    let mut w = HrrrWriter::new(Vec::new()).unwrap();
    w.write_batch(&recs[..2], 1).unwrap();
    w.write_batch(&recs[2..], 2).unwrap();
    let mut bytes = w.into_inner();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, bytes).unwrap();

    let out = sidecar()
        .arg("--from-hrrr")
        .arg(&path)
        .assert()
        .code(0)
        .stderr(contains("torn tail"))
        .get_output()
        .stdout
        .clone();
    let lines: Vec<RegionRecord> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, recs[..2]);

    std::fs::write(&path, b"NOPE0000").unwrap();
    sidecar()
        .arg("--from-hrrr")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains("not an HRRR region stream"));
}

#[test]
fn bad_names_and_missing_reports() {
    sidecar()
        .args(["--base", "0x1000", "--size", "1", "--name", "../evil"])
        .assert()
        .code(2)
        .stderr(contains("bad sidecar name"));
    sidecar()
        .write_stdin("nothing to see\n")
        .assert()
        .code(2)
        .stderr(contains("no reports on stdin"));
    sidecar()
        .args(["--base", "4096", "--size", "1"])
        .assert()
        .code(2)
        .stderr(contains("not a hex address"));
}
