//! What an archive claims, checked against what it holds, through the real
//! binaries: a manifest saying `complete:true` over events that do not bear
//! it out, a capture to a full disk before and after repair, and a capture
//! whose archive could not be written at all. None of them passes.

use std::path::Path;

use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, value_arg};
use hrr_tests::{Command, Pipeline, assert_no_crash, read_events, read_manifest, workloads};

const DEV: u64 = 0x7f00_0040_0000;
const N: usize = 256;

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn tool(p: &Pipeline, name: &str, args: &[&str]) -> Command {
    let mut c = p.tool(name);
    c.args(args);
    c
}

/// alloc → fill kernel → D2H of its result: 4 events and the `eof`.
fn fill_archive(dir: &Path) {
    let so = workloads().kernel("fill");
    let mut dst = value_arg(&DEV.to_le_bytes());
    dst.ptrs = vec![0];
    let args = vec![
        dst,
        value_arg(&2.5f32.to_le_bytes()),
        value_arg(&(N as i32).to_le_bytes()),
    ];
    let filled: Vec<u8> = (0..N).flat_map(|_| 2.5f32.to_le_bytes()).collect();
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, &so)
        .launch("fill", &so, [1, 1, 1], [N as u32, 1, 1], args)
        .d2h(DEV, &filled)
        .write(dir)
        .unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

#[test]
fn a_complete_manifest_the_events_do_not_bear_out_is_incomplete_to_every_tool() {
    let p = Pipeline::empty("claims-complete");
    fill_archive(&p.path("cap.hrr"));
    let a = tool(&p, "hrr-play", &["--strict", "cap.hrr"])
        .assert()
        .success();
    assert!(stdout(&a).ends_with("\nPASS\n"), "{}", stdout(&a));
    let text = std::fs::read_to_string(p.path("cap.hrr/events.ndjson")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    let eof = lines[4];
    assert!(eof.contains("\"op\":\"eof\""), "{eof}");
    let head = format!("{}\n", lines[..4].join("\n"));
    let cases = [
        (
            "empty",
            String::new(),
            "no eof: events.ndjson is empty, though the manifest says the archive is complete \
             (4 events)",
        ),
        (
            "noeof",
            head.clone(),
            "no eof: the last event (line 4) is not the eof trailer, though the manifest says \
             the archive is complete",
        ),
        (
            "torn",
            format!("{head}{}", &eof[..eof.len() - 9]),
            "torn last line: line 5 (",
        ),
        (
            "miscount",
            format!("{head}{}\n", eof.replace("\"events\":4", "\"events\":7")),
            "the eof trailer (line 5) counts 7 events, but events.ndjson holds 4",
        ),
    ];
    for (name, events, why) in cases {
        let dir = format!("{name}.hrr");
        copy_dir(&p.path("cap.hrr"), &p.path(&dir));
        std::fs::write(p.path(&dir).join("events.ndjson"), &events).unwrap();
        assert_eq!(read_manifest(&p.path(&dir))["complete"], true);
        let said = format!("capture : incomplete ({why}");
        // hrr-play: not a PASS, with or without --strict.
        let a = tool(&p, "hrr-play", &[&dir]).assert().code(1);
        let out = stdout(&a);
        assert_no_crash("hrr-play", &stderr(&a));
        assert!(out.starts_with(&said), "{name}: {out}");
        assert!(out.contains("\nFAIL (partial: "), "{name}: {out}");
        let a = tool(&p, "hrr-play", &["--strict", &dir]).assert().code(1);
        let out = stdout(&a);
        assert!(out.starts_with(&said), "{name}: {out}");
        assert!(
            out.ends_with("\nFAIL (capture incomplete; --strict)\n"),
            "{name}: {out}"
        );
        // --allow-partial accepts the prefix, but not an empty one.
        let a = tool(&p, "hrr-play", &["--allow-partial", &dir]).assert();
        let out = stdout(&a);
        if name == "empty" {
            a.code(1);
            assert!(
                out.ends_with("\nFAIL (partial: 0 of 4 events; capture incomplete)\n"),
                "{name}: {out}"
            );
        } else {
            a.success();
            assert!(
                out.ends_with("\nPASS (partial: 4 of 4 events; capture incomplete)\n"),
                "{name}: {out}"
            );
        }
        // hrr-diff fails over it, though every pair is the same.
        let a = tool(&p, "hrr-diff", &[&dir, &dir]).assert().code(1);
        let out = stdout(&a);
        assert!(out.starts_with(&said), "{name}: {out}");
        assert!(
            out.contains("FAIL (partial: capture incomplete)"),
            "{name}: {out}"
        );
        // hrr-trace and hrr-extract say so.
        let a = tool(&p, "hrr-trace", &[&dir, "-o", &format!("{name}.json")])
            .assert()
            .success();
        let warn = format!("hrr-trace: warning: {dir} is incomplete ({why}");
        assert!(stderr(&a).contains(&warn), "{name}: {}", stderr(&a));
        let one = format!("{name}.one.hrr");
        let a = tool(&p, "hrr-extract", &[&dir, "--launch", "2", "-o", &one]).assert();
        let err = stderr(&a);
        assert_no_crash("hrr-extract", &err);
        let warn = format!("hrr-extract: warning: {dir} is incomplete ({why}");
        assert!(err.contains(&warn), "{name}: {err}");
    }
}

/// What a capture to a disk full from its start leaves (FORMAT.md,
/// *manifest.json*): the manifest rewritten in place at exit with
/// `complete:false`, why, and every event lost; no event line, no `eof`.
fn full_disk_archive(dir: &Path, lost: u64) {
    ArchiveBuilder::new(Platform::Cpu)
        .argv(&["./app"])
        .write_unfinished(dir)
        .unwrap();
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    m["incomplete"] = "events.ndjson: No space left on device".into();
    m["lost_events"] = lost.into();
    std::fs::write(&path, m.to_string()).unwrap();
    assert!(read_events(dir).is_empty());
}

#[test]
fn a_capture_that_lost_every_event_never_passes_even_repaired() {
    let p = Pipeline::empty("claims-full-disk");
    full_disk_archive(&p.cap(), 9007);
    let said = "capture : incomplete (events.ndjson: No space left on device; 9007 events lost)\n";
    let failed = "\nFAIL (partial: 0 of 9007 events; capture incomplete)\n";
    // Nothing to replay: not even --allow-partial makes that a pass.
    for args in [&["cap.hrr"][..], &["--allow-partial", "cap.hrr"]] {
        let a = tool(&p, "hrr-play", args).assert().code(1);
        let out = stdout(&a);
        assert!(
            out.starts_with(said) && out.ends_with(failed),
            "{args:?}: {out}"
        );
    }
    // Repaired: readable, still incomplete, still failing.
    let a = tool(&p, "hrr-play", &["--repair", "-o", "fixed.hrr", "cap.hrr"])
        .assert()
        .success();
    let err = stderr(&a);
    assert!(
        err.contains(
            "hrr-play: repair: fixed.hrr stays incomplete: events.ndjson: No space left on \
             device; 9007 events lost"
        ),
        "{err}"
    );
    let m = read_manifest(&p.path("fixed.hrr"));
    assert_eq!(
        (&m["complete"], &m["repaired"], &m["lost_events"]),
        (&false.into(), &true.into(), &9007.into()),
        "{m}"
    );
    let a = tool(&p, "hrr-play", &["--strict", "fixed.hrr"])
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(said) && out.ends_with("\nFAIL (capture incomplete; --strict)\n"),
        "{out}"
    );
    for args in [&["fixed.hrr"][..], &["--allow-partial", "fixed.hrr"]] {
        let a = tool(&p, "hrr-play", args).assert().code(1);
        let out = stdout(&a);
        assert!(
            out.starts_with(said) && out.ends_with(failed),
            "{args:?}: {out}"
        );
    }
    // In place, twice: the second finds nothing to repair, and says why
    // the archive stays incomplete.
    tool(&p, "hrr-play", &["--repair", "cap.hrr"])
        .assert()
        .success();
    let a = tool(&p, "hrr-play", &["--repair", "cap.hrr"])
        .assert()
        .success();
    assert!(
        stderr(&a).contains(
            "cap.hrr was repaired and reads cleanly; nothing to repair (it stays incomplete: \
             events.ndjson: No space left on device; 9007 events lost)"
        ),
        "{}",
        stderr(&a)
    );
    assert!(!p.path("cap.torn.1").exists());
    tool(&p, "hrr-play", &["--strict", "cap.hrr"])
        .assert()
        .code(1);
}

#[test]
fn a_capture_whose_event_writes_failed_stays_incomplete_when_repaired() {
    // A file size limit makes writes to events.ndjson fail (EFBIG) as a
    // full disk does (ENOSPC); SIGXFSZ is ignored. 64 KiB: the code object
    // the CPU runtime writes into a memfd fits, the events do not.
    let p = Pipeline::new("launch_repeat");
    let script = format!(
        "trap '' XFSZ; ulimit -f 64; exec hrr-cap -o cap.hrr -- {} > app.log",
        p.app_cmdline()
    );
    p.sh(&script).assert().success();
    let m = read_manifest(&p.cap());
    assert_eq!(m["complete"], false, "{m}");
    let lost = m["lost_events"].as_u64().unwrap();
    let why = format!("events.ndjson: File too large; {lost} events lost");
    let a = tool(&p, "hrr-play", &["--repair", "-o", "fixed.hrr", "cap.hrr"])
        .assert()
        .success();
    assert!(
        stderr(&a).contains(&format!("fixed.hrr stays incomplete: {why}")),
        "{}",
        stderr(&a)
    );
    for args in [&["--strict", "fixed.hrr"][..], &["fixed.hrr"]] {
        let a = tool(&p, "hrr-play", args).assert().code(1);
        let out = stdout(&a);
        assert!(
            out.starts_with(&format!("capture : incomplete ({why})\n")),
            "{args:?}: {out}"
        );
        assert!(out.contains("\nFAIL ("), "{args:?}: {out}");
    }
}

#[test]
fn a_capture_whose_archive_cannot_be_written_says_its_events_were_lost() {
    // Two file size limits (SIGXFSZ ignored): none at all (0 bytes: not the
    // archive's manifest, nor the note a process that recorded nothing
    // leaves hrr-cap), and 200 bytes (the lock file and the note fit, the
    // manifest does not: as when the note's directory is on another disk).
    let p = Pipeline::new("graph_host_node");
    for (n, limit) in ["exec prlimit --fsize=200 --", "ulimit -f 0; exec"]
        .into_iter()
        .enumerate()
    {
        let out = format!("cap{n}.hrr");
        let script = format!(
            "trap '' XFSZ; {limit} hrr-cap -o {out} -- {} > app.log",
            p.app_cmdline()
        );
        let a = p.sh(&script).assert();
        let err = stderr(&a);
        assert_no_crash("hrr-cap", &err);
        assert!(
            !err.contains("nothing recorded") && !err.contains("change no device state"),
            "{limit}: {err}"
        );
        assert!(
            err.contains(&format!(
                "/{out} (incomplete: the capture library could not write the archive ("
            )) && err.contains(
                "File too large): the application's calls were not recorded; its events are \
                 lost)"
            ),
            "{limit}: {err}"
        );
    }
}
