//! hrr-diff over replays: two replays of one capture agree; a corrupted
//! replay D2H blob is caught.
//!
//! Blobs are content-addressed and hrr-diff counts two D2H events naming the
//! same blob id as exact without reading them (lib/hrr-core/src/archive_diff.rs),
//! so "a corrupted replay blob" is modelled as what a wrong replay writes:
//! different bytes stored under their own hash, the event pointing at them.

use std::path::Path;

use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;
use hrr_tests::{Pipeline, assert_no_crash, blob_path, read_blob, read_events};

/// A capture made by the real pipeline (`hrr-cap` over saxpy_module).
fn captured() -> Pipeline {
    Pipeline::new("saxpy_module").capture()
}

/// The same shape of archive written by hrr-core's testkit (no hrr-cap).
fn built() -> Pipeline {
    let p = Pipeline::empty("diff_built");
    let a: Vec<u8> = (0..8192u32).map(|i| (i * 13) as u8).collect();
    let b: Vec<u8> = (0..4096u32).map(|i| (i ^ 0x5a) as u8).collect();
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(0x7f00_0000_0000, 8192)
        .alloc(0x7f00_0001_0000, 4096)
        .h2d(0x7f00_0000_0000, &a)
        .h2d(0x7f00_0001_0000, &b)
        .d2h(0x7f00_0000_0000, &a)
        .d2d(0x7f00_0000_0000, 0x7f00_0001_0000, 4096)
        .d2h(0x7f00_0000_0000, &[&b[..], &a[4096..]].concat())
        .write(p.cap())
        .unwrap();
    p
}
use predicates::prelude::*;

/// First D2H event of an archive (seq, blob id).
fn first_d2h(archive: &Path) -> (u64, String) {
    let ev = read_events(archive);
    let e = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["blob"].is_string())
        .unwrap_or_else(|| panic!("no D2H in {}", archive.display()));
    (
        e["seq"].as_u64().unwrap(),
        e["blob"].as_str().unwrap().to_string(),
    )
}

#[test]
fn two_replays_of_one_capture_agree() {
    two_replays_agree(captured());
}

#[test]
fn two_replays_of_one_built_archive_agree() {
    two_replays_agree(built());
}

#[test]
fn diff_reports_a_corrupted_replay_blob() {
    corrupted_replay_blob(captured());
}

#[test]
fn diff_reports_a_corrupted_replay_blob_of_a_built_archive() {
    corrupted_replay_blob(built());
}

fn two_replays_agree(p: Pipeline) {
    let p = p.play();
    p.play_cmd(&["-o", "replay2.hrr"]).assert().success();
    let m = hrr_tests::read_manifest(&p.path("replay2.hrr"));
    assert_eq!(m["kind"], "replay");
    p.tool("hrr-diff")
        .args(["replay.hrr", "replay2.hrr"])
        .assert()
        .success();
    // And each against the capture.
    p.tool("hrr-diff")
        .args(["cap.hrr", "replay2.hrr"])
        .assert()
        .success();
}

fn corrupted_replay_blob(p: Pipeline) {
    let p = p.play();
    let replay = p.replay();
    let (seq, id) = first_d2h(&replay);
    let mut bytes = read_blob(&replay, &id).unwrap();
    assert!(bytes.len() > 100);
    bytes[100] ^= 0x40;
    // Store the corrupted bytes as a proper blob and point the event at it.
    let new_id = blake3::hash(&bytes).to_hex().to_string();
    let np = blob_path(&replay, &new_id);
    std::fs::create_dir_all(np.parent().unwrap()).unwrap();
    std::fs::write(&np, &bytes).unwrap();
    let ev_path = replay.join("events.ndjson");
    let text = hrr_tests::events_text(&replay);
    let mut done = false;
    let text: String = text
        .lines()
        .map(|l| {
            let mut l = l.to_string();
            if !done && l.contains(&id) {
                l = l.replace(&id, &new_id);
                done = true;
            }
            l + "\n"
        })
        .collect();
    assert!(done);
    std::fs::write(&ev_path, text).unwrap();

    // Byte-exact comparison reports the pair: seq, first differing byte.
    let mismatch = || {
        predicate::str::contains(format!("seq {seq}"))
            .and(predicate::str::contains("first diff at byte 100"))
    };
    let a = p
        .tool("hrr-diff")
        .args(["--exact", "cap.hrr", "replay.hrr"])
        .assert()
        .code(1)
        .stdout(mismatch());
    assert_no_crash("hrr-diff", &String::from_utf8_lossy(&a.get_output().stderr));
    p.tool("hrr-diff")
        .args(["--exact", "replay.hrr", "cap.hrr"])
        .assert()
        .code(1);
    let a = p
        .tool("hrr-diff")
        .args(["--exact", "--json", "cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    let v: serde_json::Value =
        serde_json::from_slice(&a.get_output().stdout).expect("--json prints JSON");
    assert!(v.to_string().contains("\"first_diff\":100"), "{v}");
    // DESIGN.md §1: hrr-diff compares D2H outputs byte for byte, "exact, or
    // --atol/--rtol": without tolerance flags a flipped byte is a
    // difference, whatever element type it might be part of.
    p.tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1)
        .stdout(mismatch());
}
