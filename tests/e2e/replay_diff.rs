//! hrr-diff over replays: two replays of one capture agree; a corrupted
//! replay D2H blob is caught.

use std::path::Path;

use hrr_tests::{Pipeline, assert_no_crash, read_events};
use predicates::prelude::*;

/// First D2H event of an archive (seq, blob id).
fn first_d2h(archive: &Path) -> (u64, String) {
    let ev = read_events(archive);
    let e = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["blob"].is_string())
        .unwrap_or_else(|| panic!("no D2H in {}", archive.display()));
    (e["seq"].as_u64().unwrap(), e["blob"].as_str().unwrap().to_string())
}

fn blob_path(archive: &Path, id: &str) -> std::path::PathBuf {
    archive.join("blobs").join(&id[..2]).join(id)
}

#[test]
fn two_replays_of_one_capture_agree() {
    let p = Pipeline::new("saxpy_module").capture().play();
    p.play_cmd(&["-o", "replay2.hrr"]).assert().success();
    let m = hrr_tests::read_manifest(&p.path("replay2.hrr"));
    assert_eq!(m["kind"], "replay");
    p.tool("hrr-diff").args(["replay.hrr", "replay2.hrr"]).assert().success();
    // And each against the capture.
    p.tool("hrr-diff").args(["cap.hrr", "replay2.hrr"]).assert().success();
}

#[test]
fn diff_reports_a_corrupted_replay_blob() {
    let p = Pipeline::new("saxpy_module").capture().play();
    let replay = p.replay();
    let (seq, id) = first_d2h(&replay);
    let mut bytes = std::fs::read(blob_path(&replay, &id)).unwrap();
    assert!(bytes.len() > 100);
    bytes[100] ^= 0x40;
    // Store the corrupted bytes as a proper blob and point the event at it.
    let new_id = blake3::hash(&bytes).to_hex().to_string();
    let np = blob_path(&replay, &new_id);
    std::fs::create_dir_all(np.parent().unwrap()).unwrap();
    std::fs::write(&np, &bytes).unwrap();
    let ev_path = replay.join("events.ndjson");
    let text = std::fs::read_to_string(&ev_path).unwrap();
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

    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!("seq {seq}")).and(predicate::str::contains("first diff at byte 100")));
    assert_no_crash("hrr-diff", &String::from_utf8_lossy(&a.get_output().stderr));
    // The other way round too, and as JSON.
    p.tool("hrr-diff").args(["replay.hrr", "cap.hrr"]).assert().code(1);
    let a = p.tool("hrr-diff").args(["--json", "cap.hrr", "replay.hrr"]).assert().code(1);
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).expect("--json prints JSON");
    assert!(v.to_string().contains("\"first_diff\":100"), "{v}");
}

#[test]
fn diff_catches_a_blob_corrupted_in_place() {
    // Flip a byte of the replay's D2H blob file without renaming it: the
    // content no longer matches its BLAKE3 name. hrr-diff must not call the
    // archives identical.
    let p = Pipeline::new("saxpy_module").capture().play();
    let replay = p.replay();
    let (_seq, id) = first_d2h(&replay);
    let path = blob_path(&replay, &id);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 0x40;
    // Blob files may be read-only.
    let mut perm = std::fs::metadata(&path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&path, perm).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let a = p.tool("hrr-diff").args(["cap.hrr", "replay.hrr"]).assert().failure();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&a.get_output().stdout),
        String::from_utf8_lossy(&a.get_output().stderr)
    );
    assert!(all.contains(&id[..16]) || all.contains("corrupt"), "names the bad blob:\n{all}");
    assert_no_crash("hrr-diff", &all);
}
