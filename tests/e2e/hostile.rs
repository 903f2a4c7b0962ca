//! Hostile and broken archives through the real binaries on the CPU runtime:
//! nothing in an archive crashes, hangs or exhausts a tool, nothing is
//! written outside the archive, and an incomplete capture never passes
//! (unless `--allow-partial` asks for a prefix).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, value_arg};
use hrr_core::{KernelArg, MemKind};
use hrr_tests::{Command, Pipeline, assert_no_crash, read_manifest, workloads};
use predicates::prelude::*;
use predicates::str::contains;

/// A recorded device allocation (its low half is not below 0x10000, which
/// pointer recognition requires, as at capture).
const DEV: u64 = 0x7f00_0040_0000;
const N: usize = 256;

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn play(p: &Pipeline, args: &[&str]) -> Command {
    let mut c = p.tool("hrr-play");
    c.args(args);
    c
}

/// `fill(float *dst, float v, int n)` arguments, `dst` given as a plain
/// by-value word: the capture's `ptrs` are left for each test to set.
fn fill_args(dst: u64, v: f32, n: i32, ptrs: Vec<u32>) -> Vec<KernelArg> {
    let mut dst = value_arg(&dst.to_le_bytes());
    dst.ptrs = ptrs;
    vec![
        dst,
        value_arg(&v.to_le_bytes()),
        value_arg(&n.to_le_bytes()),
    ]
}

fn filled(v: f32) -> Vec<u8> {
    (0..N).flat_map(|_| v.to_le_bytes()).collect()
}

/// alloc → fill kernel (with `args`) → D2H expecting the fill.
fn fill_archive(code: &[u8], args: Vec<KernelArg>) -> ArchiveBuilder {
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, code)
        .launch("fill", code, [1, 1, 1], [N as u32, 1, 1], args)
        .d2h(DEV, &filled(2.5))
}

#[test]
fn empty_and_truncated_code_objects_are_refused_not_crashed() {
    let p = Pipeline::empty("hostile-code");
    let so = workloads().kernel("fill");
    for (name, code) in [
        ("empty.hrr", Vec::new()),
        ("short.hrr", so[..4096].to_vec()),
    ] {
        fill_archive(&code, fill_args(DEV, 2.5, N as i32, vec![0]))
            .write(p.path(name))
            .unwrap();
        let a = play(&p, &[name]).assert().code(1);
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        let why = if code.is_empty() {
            "the code object is empty (0 bytes)"
        } else {
            "more than the blob's 4096 bytes"
        };
        assert!(
            err.contains(
                "hrr-play: fatal: event 2 (hipModuleLaunchKernel): kernel fill: code object"
            ) && err.contains(why),
            "{name}: {err}"
        );
    }
}

#[test]
fn unmarked_and_misspelled_pointer_arguments_are_translated() {
    let p = Pipeline::empty("hostile-ptrs");
    let so = workloads().kernel("fill");
    // `ptrs` empty: the capture did not mark the pointer.
    fill_archive(&so, fill_args(DEV, 2.5, N as i32, vec![]))
        .write(p.path("unmarked.hrr"))
        .unwrap();
    // `ptrs` misspelled: the reader defaults it to empty.
    fill_archive(&so, fill_args(DEV, 2.5, N as i32, vec![0]))
        .write(p.path("misspelled.hrr"))
        .unwrap();
    let events = p.path("misspelled.hrr/events.ndjson");
    let text = std::fs::read_to_string(&events).unwrap();
    assert!(text.contains("\"ptrs\":[0]"));
    std::fs::write(&events, text.replace("\"ptrs\":[0]", "\"ptr\":[0]")).unwrap();
    for name in ["unmarked.hrr", "misspelled.hrr"] {
        let a = play(&p, &[name]).assert().success();
        let out = stdout(&a);
        assert!(
            out.contains("d2h : 1 pass (1 exact, 0 within tolerance), 0 fail")
                && out.ends_with("PASS\n"),
            "{name}: {out}"
        );
    }
}

#[test]
fn a_faulting_kernel_is_a_launch_error_not_a_dead_replayer() {
    let p = Pipeline::empty("hostile-fault");
    let so = workloads().kernel("fill");
    // A pointer-like word too small to be a pointer: passed as is, and the
    // kernel writes to address 0x10.
    let args = || fill_args(0x10, 2.5, N as i32, vec![]);
    fill_archive(&so, args())
        .write(p.path("fault.hrr"))
        .unwrap();
    // The same launch as the last event: nothing after it waits for it.
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, &so)
        .launch("fill", &so, [1, 1, 1], [N as u32, 1, 1], args())
        .write(p.path("fault-last.hrr"))
        .unwrap();
    // Made on the launch thread, the launch fails after its event has
    // passed; it is still reported as that event's error, word for word as
    // when it is made in place (--no-launch-thread).
    for (name, serial) in [
        ("fault.hrr", false),
        ("fault-last.hrr", false),
        ("fault.hrr", true),
        ("fault-last.hrr", true),
    ] {
        let mut args = vec![name, "--json"];
        if serial {
            args.push("--no-launch-thread");
        }
        let a = play(&p, &args).assert().code(1);
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        assert!(
            err.contains(
                "hrr-play: fatal: event 2 (hipModuleLaunchKernel): hipModuleLaunchKernel failed: \
                 an illegal memory access was encountered; launched with grid [1, 1, 1], \
                 block [256, 1, 1], 0 bytes of shared memory, 16 bytes of arguments (code 700)"
            ),
            "{name}, --no-launch-thread {serial}: {err}"
        );
        let out = stdout(&a);
        assert!(
            out.contains(&format!("\"launch_thread\":{}", !serial))
                && out.contains("\"result\":\"FAIL\""),
            "{name}, --no-launch-thread {serial}: {out}"
        );
    }
}

#[test]
fn an_unmodified_capture_with_untranslatable_pointers_is_never_launched() {
    // seed_variants kernel: two hidden segments, one reached through a
    // pointer argument, one through a pointer inside a by-value struct.
    let p = Pipeline::new("seed_variants")
        .arg("kernel")
        .capture()
        .sidecar_from_log();
    for _ in 0..3 {
        let a = play(&p, &["cap.hrr", "--no-regions", "--continue-on-error"])
            .assert()
            .code(1);
        let (out, err) = (stdout(&a), stderr(&a));
        assert_no_crash("hrr-play", &err);
        assert!(
            out.contains("skipped : 2 launches (untranslatable pointer)")
                && out.ends_with("FAIL\n"),
            "{out}\n{err}"
        );
        assert_eq!(err.matches("; launch skipped").count(), 2, "{err}");
    }
    // With its regions the same capture passes.
    play(&p, &["cap.hrr"])
        .assert()
        .success()
        .stdout(contains("PASS"));
}

#[test]
fn kernarg_offsets_and_grids_beyond_limits_are_refused() {
    let p = Pipeline::empty("hostile-limits");
    let so = workloads().kernel("fill");
    let mut args = fill_args(DEV, 2.5, N as i32, vec![0]);
    args[2].offset = Some(1 << 31);
    let b = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, &so);
    // The builder lays offsets out itself: set the hostile one in the file.
    b.clone()
        .launch("fill", &so, [1, 1, 1], [N as u32, 1, 1], args.clone())
        .write(p.path("offset.hrr"))
        .unwrap();
    let events = p.path("offset.hrr/events.ndjson");
    let text = std::fs::read_to_string(&events).unwrap();
    std::fs::write(
        &events,
        text.replace("\"offset\":12", "\"offset\":2147483648"),
    )
    .unwrap();
    let a = play(&p, &["offset.hrr"]).assert().code(1);
    assert!(
        stderr(&a).contains(
            "event 2 (hipModuleLaunchKernel): launch arg 2: offset 2147483648 + size 4 ends past \
             the 1048576-byte kernel argument limit"
        ),
        "{}",
        stderr(&a)
    );
    b.launch(
        "fill",
        &so,
        [u32::MAX, u32::MAX, 1],
        [1, 1, 1],
        fill_args(DEV, 2.5, N as i32, vec![0]),
    )
    .write(p.path("grid.hrr"))
    .unwrap();
    let a = play(&p, &["grid.hrr"]).assert().code(1);
    assert!(
        stderr(&a).contains("4294967295 blocks in one dimension, more than any device launches"),
        "{}",
        stderr(&a)
    );
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mkfifo has no other preconditions.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

#[test]
fn fifos_devices_and_oversized_files_are_refused_without_hanging() {
    let p = Pipeline::empty("hostile-files");
    let base = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 16)
        .h2d(DEV, b"0123456789abcdef")
        .d2h(DEV, b"0123456789abcdef")
        .segment(0x7e00_0000_0000, 4096, 0);
    let make = |name: &str| base.clone().write(p.path(name)).unwrap();
    let swap_fifo = |path: &Path| {
        std::fs::remove_file(path).unwrap();
        mkfifo(path);
    };
    // Every tool that reads the archive, on each kind of damage; each must
    // answer (assert_cmd's timeout turns a hang into a failure).
    type Damage<'a> = Box<dyn Fn(&Path) + 'a>;
    let cases: Vec<(&str, Damage, &str)> = vec![
        (
            "events.hrr",
            Box::new(|a: &Path| swap_fifo(&a.join("events.ndjson"))),
            "events.ndjson: is a FIFO, not the events file",
        ),
        (
            "manifest.hrr",
            Box::new(|a: &Path| swap_fifo(&a.join("manifest.json"))),
            "manifest.json: is a FIFO, not a regular file; refusing to read it",
        ),
        (
            "bigmanifest.hrr",
            Box::new(|a: &Path| {
                let mut m = std::fs::read(a.join("manifest.json")).unwrap();
                m.extend(std::iter::repeat_n(b' ', 2 << 20));
                std::fs::write(a.join("manifest.json"), m).unwrap();
            }),
            "manifest.json: 2097",
        ),
        (
            "devmanifest.hrr",
            Box::new(|a: &Path| {
                std::fs::remove_file(a.join("manifest.json")).unwrap();
                std::os::unix::fs::symlink("/dev/zero", a.join("manifest.json")).unwrap();
            }),
            "manifest.json: is a symbolic link; refusing to follow it inside an archive",
        ),
        (
            "eventsdir.hrr",
            Box::new(|a: &Path| {
                std::fs::remove_file(a.join("events.ndjson")).unwrap();
                std::fs::create_dir(a.join("events.ndjson")).unwrap();
            }),
            "events.ndjson: is a directory, not the events file",
        ),
    ];
    for (name, damage, msg) in &cases {
        let a = make(name);
        damage(&a);
        for (tool, args) in [
            ("hrr-play", vec![*name]),
            ("hrr-play", vec!["--info", *name]),
            ("hrr-diff", vec![*name, *name]),
            (
                "hrr-sidecar",
                vec![
                    "--archive",
                    *name,
                    "--base",
                    "0x7d0000000000",
                    "--size",
                    "4096",
                ],
            ),
        ] {
            let out = p.tool(tool).args(&args).assert().code(2);
            let err = stderr(&out);
            assert_no_crash(tool, &err);
            assert!(err.contains(msg), "{tool} {args:?}: {err}");
        }
    }
    // A FIFO as a blob or a sidecar: refused at the event that needs it.
    let a = make("blob.hrr");
    let blob = std::fs::read_dir(a.join("blobs"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .next()
        .unwrap()
        .unwrap()
        .path();
    swap_fifo(&blob);
    let out = play(&p, &["blob.hrr"]).assert().code(1);
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    let a = make("sidecar.hrr");
    swap_fifo(&a.join("regions/testkit.ndjson"));
    let out = play(&p, &["sidecar.hrr"]).assert().success();
    assert!(
        stderr(&out).contains("hrr-play: warning: region sidecar left out: ")
            && stderr(&out).contains("regions/testkit.ndjson: is a FIFO, not a regular file"),
        "{}",
        stderr(&out)
    );
    // Inputs of hrr-sidecar: a device, and an endless line on stdin.
    let out = p
        .tool("hrr-sidecar")
        .args(["--from-hrrr", "/dev/zero"])
        .assert()
        .code(2);
    assert!(stderr(&out).contains("/dev/zero: is a character device, not a regular file"));
    let out = p
        .sh("hrr-sidecar --archive blob.hrr < /dev/zero")
        .assert()
        .code(2);
    assert!(stderr(&out).contains("stdin:1: line longer than 1048576 bytes; not a report"));
}

/// Runs `cmd` to its end; its exit status and peak RSS in KiB (wait4).
// The child is reaped by wait4, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn peak_rss_kib(mut cmd: std::process::Command) -> (i32, i64) {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; both out-pointers are valid.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as i32);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn a_recorded_8_gib_allocation_costs_no_memory_on_the_cpu_runtime() {
    let p = Pipeline::empty("hostile-alloc");
    for (name, mem) in [("dev.hrr", MemKind::Device), ("host.hrr", MemKind::Pinned)] {
        ArchiveBuilder::new(Platform::Cpu)
            .alloc_mem(DEV, 8 << 30, mem)
            .h2d(DEV + (4 << 30), b"abcd")
            .d2h(DEV + (4 << 30), b"abcd")
            .write(p.path(name))
            .unwrap();
        let mut cmd = std::process::Command::new(hrr_tests::tools().bin("hrr-play"));
        cmd.arg(p.path(name));
        let (code, kib) = peak_rss_kib(cmd);
        assert_eq!(code, 0, "{name}");
        assert!(kib < 1 << 20, "{name}: peak RSS {kib} KiB");
    }
}

#[test]
fn hrr_sidecar_never_writes_through_a_symlink() {
    let p = Pipeline::empty("hostile-links");
    let outside = tempfile::tempdir().unwrap();
    let a = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 16)
        .write(p.path("lock.hrr"))
        .unwrap();
    let victim = outside.path().join("victim");
    std::os::unix::fs::symlink(&victim, a.join("regions/.sidecar.ndjson.lock")).unwrap();
    let args = ["--base", "0x7d0000000000", "--size", "4096"];
    let out = p
        .tool("hrr-sidecar")
        .args(["--archive", "lock.hrr"])
        .args(args)
        .assert()
        .code(2);
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert!(!victim.exists(), "the lock file's target was created");

    let a = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 16)
        .write(p.path("regions.hrr"))
        .unwrap();
    std::fs::remove_dir(a.join("regions")).unwrap();
    std::os::unix::fs::symlink(outside.path(), a.join("regions")).unwrap();
    let out = p
        .tool("hrr-sidecar")
        .args(["--archive", "regions.hrr"])
        .args(args)
        .assert()
        .code(2);
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn an_incomplete_capture_is_never_a_bare_pass() {
    let p = Pipeline::empty("hostile-incomplete");
    let b = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .d2h(DEV, b"abcd");
    b.clone().write_unfinished(p.path("died.hrr")).unwrap();
    // Every D2H it holds passes, and still the replay fails: it proves less
    // than a PASS says.
    let a = play(&p, &["died.hrr"]).assert().code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(
            "capture : incomplete (no eof: the capture was killed or died before finishing)\n"
        ) && out.ends_with("FAIL (partial: 3 of 3 events; capture incomplete)\n"),
        "{out}"
    );
    // Unless a prefix is what the user asked to compare.
    let a = play(&p, &["--allow-partial", "died.hrr"])
        .assert()
        .success();
    assert!(
        stdout(&a).ends_with("PASS (partial: 3 of 3 events; capture incomplete)\n"),
        "{}",
        stdout(&a)
    );
    let a = play(&p, &["--strict", "died.hrr"]).assert().code(1);
    assert!(stdout(&a).ends_with("FAIL (capture incomplete; --strict)\n"));
    let a = play(&p, &["--json", "died.hrr"]).assert().code(1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(v["partial"], true);
    assert_eq!(v["result"], "FAIL");
    let a = play(&p, &["--json", "--allow-partial", "died.hrr"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(
        (&v["partial"], &v["result"]),
        (&true.into(), &"PASS".into())
    );
    // hrr-diff says so too.
    b.clone().write(p.path("full.hrr")).unwrap();
    let a = p
        .tool("hrr-diff")
        .args(["died.hrr", "full.hrr"])
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with("capture : incomplete (no eof")
            && out.ends_with("FAIL (partial: capture incomplete)\n"),
        "{out}"
    );
    let a = p
        .tool("hrr-diff")
        .args(["--allow-partial", "died.hrr", "full.hrr"])
        .assert()
        .success();
    assert!(
        stdout(&a).ends_with("PASS (partial: capture incomplete)\n"),
        "{}",
        stdout(&a)
    );
    // Torn last line.
    b.clone().write_unfinished(p.path("torn.hrr")).unwrap();
    let ev = p.path("torn.hrr/events.ndjson");
    let mut text = std::fs::read(&ev).unwrap();
    text.extend_from_slice(b"{\"seq\":3,\"api\":\"hipMem");
    std::fs::write(&ev, text).unwrap();
    play(&p, &["torn.hrr"]).assert().code(1).stdout(contains(
        "capture : incomplete (torn last line: the writer died mid-write)",
    ));
    // Still being written: the owner's pid (this test process) is alive.
    b.write_unfinished(p.path("live.hrr")).unwrap();
    std::fs::write(
        p.path("live.hrr/.hrr-owner"),
        format!("{}\n", std::process::id()),
    )
    .unwrap();
    play(&p, &["live.hrr"])
        .assert()
        .code(1)
        .stdout(contains(format!(
            "capture : incomplete (still being written: capture process {} is running)",
            std::process::id()
        )));
}

#[test]
fn events_after_the_eof_trailer_are_an_error() {
    let p = Pipeline::empty("hostile-eof");
    let a = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .write(p.path("eof.hrr"))
        .unwrap();
    let ev = a.join("events.ndjson");
    let mut text = std::fs::read_to_string(&ev).unwrap();
    text.push_str(
        "{\"seq\":9,\"t\":9,\"tid\":1,\"api\":\"hipFree\",\"op\":\"free\",\"ret\":0,\"ptr\":\"0x7f0000400000\"}\n",
    );
    std::fs::write(&ev, text).unwrap();
    let out = play(&p, &["eof.hrr"]).assert().code(2);
    assert!(
        stderr(&out).contains(
            "eof.hrr/events.ndjson:3: malformed event: event after the eof trailer of line 2"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_replay_that_stops_early_leaves_an_incomplete_replay_archive() {
    let p = Pipeline::empty("hostile-stop");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .d2h(DEV, b"abcd")
        .d2h(DEV + 4096, b"abcd") // unmapped: fatal
        .write(p.path("cap.hrr"))
        .unwrap();
    play(&p, &["cap.hrr", "-o", "replay.hrr"]).assert().code(1);
    let m = read_manifest(&p.path("replay.hrr"));
    assert_eq!(m["complete"], false, "{m}");
    assert_eq!(m["events"], 1, "{m}");
    let why = m["incomplete"].as_str().unwrap();
    assert!(
        why.starts_with("the replay stopped: event 3 (hipMemcpy): d2h src"),
        "{why}"
    );
    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    assert!(
        stdout(&a).starts_with(&format!("replay : incomplete ({why})\n")),
        "{}",
        stdout(&a)
    );
}

#[test]
fn a_capture_whose_event_writes_fail_says_so_once_and_keeps_the_app_status() {
    // A file size limit makes writes to events.ndjson fail (EFBIG) as a
    // full disk does (ENOSPC); SIGXFSZ is ignored, as the shell's trap says.
    let p = Pipeline::new("launch_repeat");
    let script = format!(
        "ulimit -f 64; trap '' XFSZ; hrr-cap -o cap.hrr -- {} > app.log",
        p.app_cmdline()
    );
    let a = p.sh(&script).assert().success();
    let err = stderr(&a);
    assert!(
        std::fs::read_to_string(p.path("app.log"))
            .unwrap()
            .contains(": OK")
    );
    assert_eq!(err.matches("capture incomplete").count(), 1, "{err}");
    let m = read_manifest(&p.cap());
    let lost = m["lost_events"].as_u64().unwrap();
    assert!(
        err.contains(&format!(
            "hrr-intercept: capture incomplete: events.ndjson: File too large ({lost} events lost)"
        )),
        "{err}"
    );
    assert_eq!(m["complete"], false);
    assert_eq!(m["incomplete"], "events.ndjson: File too large");
    assert!(
        err.contains("(incomplete: events.ndjson: File too large;"),
        "hrr-cap's summary names the cause: {err}"
    );
    let a = play(&p, &["cap.hrr"]).assert().code(1);
    let out = stdout(&a);
    let events = m["events"].as_u64().unwrap();
    assert!(
        out.starts_with(&format!(
            "capture : incomplete (events.ndjson: File too large; {lost} events lost)\n"
        )) && out.contains(&format!(
            "\nFAIL (partial: {events} of {} events; capture incomplete)\n",
            events + lost
        )),
        "{out}"
    );
}

#[test]
fn repairing_in_place_twice_is_repairing_once_and_leaves_no_debris() {
    let p = Pipeline::empty("hostile-repair");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .write_unfinished(p.path("cap.hrr"))
        .unwrap();
    // Whatever is beside the archive: an earlier original, a file.
    std::fs::create_dir(p.path("cap.torn")).unwrap();
    std::fs::write(p.path("cap.torn/keep"), b"x").unwrap();
    let a = play(&p, &["--repair", "cap.hrr"]).assert().success();
    assert!(
        stderr(&a).contains("original kept at cap.torn.1"),
        "{}",
        stderr(&a)
    );
    let a = play(&p, &["--repair", "cap.hrr"]).assert().success();
    assert!(
        stderr(&a).contains("cap.hrr is complete and reads cleanly; nothing to repair"),
        "{}",
        stderr(&a)
    );
    let mut names: Vec<String> = std::fs::read_dir(p.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["cap.hrr", "cap.torn", "cap.torn.1"]);
    assert_eq!(std::fs::read(p.path("cap.torn/keep")).unwrap(), b"x");
    play(&p, &["cap.hrr"])
        .assert()
        .success()
        .stdout(predicate::str::ends_with("PASS\n"));
}

#[test]
fn messages_say_what_is_wrong_in_the_users_terms() {
    let p = Pipeline::empty("hostile-messages");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 64)
        .h2d(DEV + 32, &[7u8; 64])
        .write(p.path("overrun.hrr"))
        .unwrap();
    let a = play(&p, &["overrun.hrr"]).assert().code(1);
    assert!(
        stderr(&a).contains(
            "event 1 (hipMemcpy): h2d dst 0x7f0000400020 + 64 overruns the allocation at \
             0x7f0000400000 (size 64)"
        ),
        "{}",
        stderr(&a)
    );
    // A D2H whose expected bytes are shorter than the read.
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 64)
        .d2h(DEV, &[0u8; 50])
        .write(p.path("length.hrr"))
        .unwrap();
    let ev = p.path("length.hrr/events.ndjson");
    let text = std::fs::read_to_string(&ev).unwrap();
    std::fs::write(&ev, text.replace("\"size\":50", "\"size\":64")).unwrap();
    let a = play(&p, &["length.hrr"]).assert().code(1);
    assert!(
        stderr(&a).contains("event 1 (hipMemcpy): d2h of 64 bytes, but its expected blob")
            && stderr(&a).contains("holds 50 bytes"),
        "{}",
        stderr(&a)
    );
    // An OS cause and a path said once.
    let a = play(&p, &["overrun.hrr", "-o", "/proc/no/such.hrr"])
        .assert()
        .code(2);
    let err = stderr(&a);
    assert!(
        err.ends_with(
            "hrr-play: error: creating the replay archive: /proc/no: No such file or directory\n"
        ),
        "{err}"
    );
}

#[test]
fn the_watchdog_turns_a_kernel_that_never_finishes_into_a_fatal_line() {
    let p = Pipeline::empty("hostile-watchdog");
    let so = workloads().kernel("spin");
    let mut flag = value_arg(&DEV.to_le_bytes());
    flag.ptrs = vec![0];
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .module_load(0x9000, &so)
        .launch("spin", &so, [1, 1, 1], [1, 1, 1], vec![flag])
        .write(p.path("spin.hrr"))
        .unwrap();
    let a = play(&p, &["--watchdog", "1", "spin.hrr"]).assert().code(1);
    assert!(
        stderr(&a).contains(
            "hrr-play: fatal: event 2 (hipModuleLaunchKernel): no progress after 1 s (watchdog)"
        ),
        "{}",
        stderr(&a)
    );
    assert_eq!(stdout(&a), "FAIL\n");
}

#[test]
fn archives_are_created_private() {
    let p = Pipeline::new("saxpy_module").capture();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    play(&p, &["cap.hrr", "-o", "replay.hrr"])
        .assert()
        .success();
    for a in [p.cap(), p.replay()] {
        assert_eq!(mode(&a), 0o700, "{}", a.display());
        assert_eq!(mode(&a.join("blobs")), 0o700, "{}", a.display());
        assert_eq!(mode(&a.join("events.ndjson.zst")), 0o600, "{}", a.display());
        assert_eq!(mode(&a.join("manifest.json")), 0o600, "{}", a.display());
        for fan in std::fs::read_dir(a.join("blobs")).unwrap() {
            let fan = fan.unwrap().path();
            assert_eq!(mode(&fan), 0o700, "{}", fan.display());
            for blob in std::fs::read_dir(&fan).unwrap() {
                assert_eq!(mode(&blob.unwrap().path()), 0o600);
            }
        }
    }
}

/// A recorded allocation larger than the device, filled by one memset: the
/// allocation is refused (the CPU runtime has no more memory than its
/// device reservation, at a requested address too) and the replay stops
/// there with the event named, instead of filling memory until the kernel
/// kills it.
#[test]
fn an_allocation_larger_than_the_device_is_refused_not_filled() {
    // Where nothing of the process lies: placement can reserve it.
    const FAR: u64 = 0x2000_0000_0000;
    let p = Pipeline::empty("hostile-huge");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(FAR, 1 << 40)
        .memset(FAR, 0x5a, 1 << 40)
        .write(p.path("huge.hrr"))
        .unwrap();
    let a = play(&p, &["huge.hrr"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1);
    let err = stderr(&a);
    assert_no_crash("hrr-play", &err);
    assert!(
        err.contains("fatal: event 0 (hipMalloc)") && err.contains("out of memory"),
        "{err}"
    );
}

/// 70 000 declared segments, with regions on and off: placement reserves
/// them in a bounded number of ranges (or, with `--no-regions`, not at
/// all), so the replay neither runs out of mappings nor aborts.
#[test]
fn seventy_thousand_segments_neither_exhaust_mappings_nor_abort() {
    use hrr_core::region_record::RegionRecord;
    let p = Pipeline::empty("hostile-segments");
    let mut b = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4096)
        .d2h(DEV, &[0; 4096]);
    for i in 0..70_000u64 {
        b = b.region(RegionRecord::segment(
            0x2000_0000_0000 + i * 0x10_000,
            4096,
            0,
        ));
    }
    b.write(p.path("segs.hrr")).unwrap();
    for extra in [None, Some("--no-regions")] {
        let mut args = vec!["segs.hrr"];
        args.extend(extra);
        let a = play(&p, &args).assert().success();
        assert_no_crash("hrr-play", &stderr(&a));
        assert!(stdout(&a).ends_with("PASS\n"), "{}", stdout(&a));
    }
}
