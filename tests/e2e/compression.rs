//! Compressed archives (docs/FORMAT.md, *Compression*), with the real
//! binaries: a capture ends with `events.ndjson.zst` and compressed blobs
//! and replays and diffs clean; `--plain` and `HRR_EVENTS=plain` keep
//! `events.ndjson`; an old plain archive still replays; hostile compressed
//! files (a bomb, a truncated frame, a blob that is not its name) are
//! errors naming the file, never a crash.

use std::io::Write;

use hrr_tests::{Pipeline, assert_no_crash, read_events};
use predicates::prelude::*;

/// The blob files of an archive: (name, bytes).
fn blob_files(archive: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for fan in std::fs::read_dir(archive.join("blobs")).unwrap() {
        for f in std::fs::read_dir(fan.unwrap().path()).unwrap() {
            let f = f.unwrap();
            out.push((
                f.file_name().to_string_lossy().into_owned(),
                std::fs::read(f.path()).unwrap(),
            ));
        }
    }
    out
}

#[test]
fn a_capture_ends_compressed_and_replays_and_diffs() {
    let p = Pipeline::new("hidden_segment").capture();
    let cap = p.cap();
    assert!(!cap.join("events.ndjson").exists());
    // Standard zstd: the events decode to NDJSON, one object a line,
    // ending with the eof trailer the manifest counts.
    let z = std::fs::read(cap.join("events.ndjson.zst")).unwrap();
    let text = String::from_utf8(zstd::decode_all(&z[..]).unwrap()).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let m = hrr_tests::read_manifest(&cap);
    assert_eq!(m["version"], 2);
    assert_eq!(lines.len() as u64, m["events"].as_u64().unwrap() + 1);
    assert_eq!(lines.last().unwrap()["op"], "eof");
    // The 256 KiB upload compresses: stored as <hash of the content>.zst.
    let blobs = blob_files(&cap);
    let (name, packed) = blobs
        .iter()
        .find(|(n, _)| n.ends_with(".zst"))
        .expect("a compressed blob");
    let raw = zstd::decode_all(&packed[..]).unwrap();
    assert_eq!(raw.len(), 256 << 10);
    assert_eq!(
        name.strip_suffix(".zst").unwrap(),
        blake3::hash(&raw).to_hex().as_str()
    );
    assert!(packed.len() * 10 < raw.len());
    let p = p.sidecar_from_log().play().diff();
    assert!(p.replay().join("events.ndjson.zst").exists());
    // --info counts what is on disk and what it holds.
    let info = p
        .tool("hrr-play")
        .args(["--info", "cap.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&info.get_output().stdout).into_owned();
    let line = out.lines().find(|l| l.starts_with("events : ")).unwrap();
    let field = |name: &str| -> u64 {
        let at = line.find(name).unwrap_or_else(|| panic!("{line}")) + name.len();
        line[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(field("disk bytes : ") < field("uncompressed : "), "{line}");
    assert!(field("uncompressed : ") >= (256 << 10) as u64 + text.len() as u64);
}

/// `LD_PRELOAD=libhrr_intercept.so HRR_OUT=cap.hrr ./app | tee app.log`:
/// the capture library alone, no hrr-cap to compact afterwards. Checks
/// that every blob compression pays for is stored compressed, under the
/// hash of its content, in one form, with no temporary left; returns how
/// many are.
fn capture_without_hrr_cap(p: &Pipeline) -> usize {
    let lib = hrr_tests::tools().path("libhrr_intercept.so");
    let script = format!(
        "LD_PRELOAD={} HRR_OUT=cap.hrr {} | tee app.log",
        hrr_tests::shq(&lib),
        p.app_cmdline()
    );
    p.sh(&script).assert().success();
    let cap = p.cap();
    assert!(cap.join("events.ndjson.zst").exists());
    assert_eq!(hrr_tests::read_manifest(&cap)["complete"], true);
    let mut cctx = zstd::bulk::Compressor::new(1).unwrap();
    cctx.include_contentsize(true).unwrap();
    let mut scratch = Vec::new();
    let blobs = blob_files(&cap);
    let mut compressed = 0;
    for (name, bytes) in &blobs {
        assert!(!name.starts_with('.'), "temporary {name} left");
        match name.strip_suffix(".zst") {
            Some(hash) => {
                let raw = zstd::decode_all(&bytes[..]).unwrap();
                assert_eq!(hash, blake3::hash(&raw).to_hex().as_str());
                assert!(
                    !blobs.iter().any(|(n, _)| n == hash),
                    "{hash} in both forms"
                );
                compressed += 1;
            }
            None => assert!(
                hrr_core::zst::encode_blob(&mut cctx, bytes, &mut scratch).is_none(),
                "{name} compresses but was left raw"
            ),
        }
    }
    compressed
}

#[test]
fn a_capture_without_hrr_cap_ends_with_compressed_blobs() {
    // The seed's 256 KiB upload (written by the events buffer's writer).
    let p = Pipeline::new("hidden_segment");
    assert_eq!(capture_without_hrr_cap(&p), 1);
    p.sidecar_from_log().play().diff();
    // A module's code object (written from where it lies) and the copies
    // of a kernel's operands.
    let p = Pipeline::new("saxpy_module");
    assert!(capture_without_hrr_cap(&p) >= 1);
    let p = p.play().diff();
    p.tool("hrr-play")
        .args(["--info", "cap.hrr"])
        .assert()
        .success();
}

#[test]
fn plain_events_are_kept_when_asked() {
    let p = Pipeline::new("hidden_segment");
    let script = format!(
        "hrr-cap --plain -o cap.hrr -- {} > app.log && HRR_EVENTS=plain hrr-cap -o env.hrr -- {} \
         > /dev/null",
        p.app_cmdline(),
        p.app_cmdline()
    );
    p.sh(&script).assert().success();
    for a in ["cap.hrr", "env.hrr"] {
        let dir = p.path(a);
        assert!(dir.join("events.ndjson").exists(), "{a}");
        assert!(!dir.join("events.ndjson.zst").exists(), "{a}");
    }
    let p = p.sidecar_from_log();
    p.play_cmd(&["-o", "replay.hrr", "--plain"])
        .assert()
        .success();
    assert!(p.replay().join("events.ndjson").exists());
    p.diff();
}

#[test]
fn an_old_plain_archive_still_replays() {
    // Version 1: plain events, raw blobs, as hrr wrote before compression.
    let p = Pipeline::new("hidden_segment").capture();
    let cap = p.cap();
    let text = hrr_tests::events_text(&cap);
    std::fs::write(cap.join("events.ndjson"), &text).unwrap();
    std::fs::remove_file(cap.join("events.ndjson.zst")).unwrap();
    for fan in std::fs::read_dir(cap.join("blobs")).unwrap() {
        for f in std::fs::read_dir(fan.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            if let Some(raw) = path.to_str().unwrap().strip_suffix(".zst") {
                let bytes = zstd::decode_all(&std::fs::read(&path).unwrap()[..]).unwrap();
                std::fs::write(raw, bytes).unwrap();
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    let m = std::fs::read_to_string(cap.join("manifest.json")).unwrap();
    std::fs::write(
        cap.join("manifest.json"),
        m.replace("\"version\": 2", "\"version\": 1"),
    )
    .unwrap();
    assert_eq!(hrr_tests::read_manifest(&cap)["version"], 1);
    p.sidecar_from_log().play().diff();
}

/// The capture's compressed blob, and its path.
fn compressed_blob(p: &Pipeline) -> std::path::PathBuf {
    let cap = p.cap();
    for fan in std::fs::read_dir(cap.join("blobs")).unwrap() {
        for f in std::fs::read_dir(fan.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|e| e == "zst") {
                return path;
            }
        }
    }
    panic!("no compressed blob in {}", cap.display())
}

#[test]
fn hostile_compressed_files_are_errors_naming_them() {
    let p = Pipeline::new("hidden_segment").capture().sidecar_from_log();
    let blob = compressed_blob(&p);
    let good = std::fs::read(&blob).unwrap();
    let name = blob.file_name().unwrap().to_string_lossy().into_owned();
    let play = |p: &Pipeline, why: &str| {
        let a = p.play_cmd(&[]).assert().failure();
        assert_no_crash("hrr-play", &String::from_utf8_lossy(&a.get_output().stderr));
        a.stderr(predicate::str::contains(name.as_str()))
            .stderr(predicate::str::contains(why));
    };
    // A bomb: a frame of 1 GiB of zeros where 256 KiB are expected.
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    enc.include_contentsize(true).unwrap();
    enc.set_pledged_src_size(Some(1 << 30)).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&zeros).unwrap();
    }
    std::fs::write(&blob, enc.finish().unwrap()).unwrap();
    play(&p, "decompresses to 1073741824 bytes");
    // Cut short.
    std::fs::write(&blob, &good[..good.len() - 5]).unwrap();
    play(&p, "truncated");
    // A well-formed frame of other bytes: not what its name says.
    let mut other = zstd::decode_all(&good[..]).unwrap();
    other[0] ^= 1;
    std::fs::write(&blob, zstd::bulk::compress(&other, 3).unwrap()).unwrap();
    play(&p, "does not match its name");
    std::fs::write(&blob, &good).unwrap();
    p.play_cmd(&[]).assert().success();

    // The events: truncated, then garbage.
    let ev = p.cap().join("events.ndjson.zst");
    let events = std::fs::read(&ev).unwrap();
    std::fs::write(&ev, &events[..events.len() - 7]).unwrap();
    let a = p.play_cmd(&[]).assert().failure();
    assert_no_crash("hrr-play", &String::from_utf8_lossy(&a.get_output().stderr));
    a.stderr(predicate::str::contains("events.ndjson.zst"))
        .stderr(predicate::str::contains("truncated"));
    std::fs::write(&ev, b"\x28\xb5\x2f\xfdnot really a frame").unwrap();
    let a = p.play_cmd(&[]).assert().failure();
    assert_no_crash("hrr-play", &String::from_utf8_lossy(&a.get_output().stderr));
    a.stderr(predicate::str::contains("events.ndjson.zst"));
}

#[test]
fn a_killed_capture_repairs_to_a_compressed_archive() {
    // A capture that died leaves events.ndjson; repair writes the clean
    // archive compressed.
    let p = Pipeline::new("hidden_segment").capture();
    let cap = p.cap();
    let text = hrr_tests::events_text(&cap);
    let died: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    std::fs::write(cap.join("events.ndjson"), died).unwrap();
    std::fs::remove_file(cap.join("events.ndjson.zst")).unwrap();
    let m = std::fs::read_to_string(cap.join("manifest.json")).unwrap();
    std::fs::write(
        cap.join("manifest.json"),
        m.replace("\"complete\": true", "\"complete\": false"),
    )
    .unwrap();
    p.tool("hrr-play")
        .args(["--repair", "cap.hrr", "-o", "fixed.hrr"])
        .assert()
        .success();
    let fixed = p.path("fixed.hrr");
    assert!(fixed.join("events.ndjson.zst").exists());
    assert!(!fixed.join("events.ndjson").exists());
    let ev = read_events(&fixed);
    assert_eq!(ev.len(), 5, "4 events and the new eof");
    assert_eq!(ev.last().unwrap()["op"], "eof");
}
