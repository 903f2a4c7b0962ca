//! More hostile archives through the real binaries: launch grids no device
//! runs, planted links and endless lines for `hrr-trace`, and archives whose
//! files are not what repair expects. Each must end in a clear message and
//! a non-zero exit (or a repair that reports what it left out), promptly,
//! in bounded memory, with nothing written through a link and nothing
//! partial left behind.

use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, value_arg};
use hrr_core::{KernelArg, blob_store::BlobStore, hex::BlobId};
use hrr_tests::{Command, Pipeline, assert_no_crash, read_events, read_manifest, workloads};

/// A recorded device allocation (see hostile.rs).
const DEV: u64 = 0x7f00_0040_0000;
const N: usize = 256;

/// Long enough for any of these to finish; short enough that a hang fails
/// the test rather than the suite's patience.
const PROMPT: Duration = Duration::from_secs(60);

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn tool(p: &Pipeline, name: &str, args: &[&str]) -> Command {
    let mut c = p.tool(name);
    c.args(args).timeout(PROMPT);
    c
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mkfifo has no other preconditions.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `fill(float *dst, float v, int n)` launched with `grid` × `block`.
fn grid_archive(grid: [u32; 3], block: [u32; 3]) -> ArchiveBuilder {
    let so = workloads().kernel("fill");
    let mut dst = value_arg(&DEV.to_le_bytes());
    dst.ptrs = vec![0];
    let args: Vec<KernelArg> = vec![
        dst,
        value_arg(&2.5f32.to_le_bytes()),
        value_arg(&(N as i32).to_le_bytes()),
    ];
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, &so)
        .launch("fill", &so, grid, block, args)
        .d2h(DEV, &[0; N * 4])
}

#[test]
fn launch_grids_no_device_runs_are_fatal_in_play_and_extract() {
    let p = Pipeline::empty("hostile-grid");
    let cases = [
        (
            "grid.hrr",
            [65536, 65536, 65536],
            [1, 1, 1],
            "grid [65536, 65536, 65536]: 65536 blocks in one dimension, more than any device \
             launches (grid y: at most 65535 on cpu)",
        ),
        (
            "blockz.hrr",
            [1, 1, 1],
            [1, 1, 128],
            "block [1, 1, 128]: 128 threads in z, more than any device runs (block z: at most 64 \
             on cpu)",
        ),
    ];
    for (name, grid, block, why) in cases {
        grid_archive(grid, block).write(p.path(name)).unwrap();
        let a = tool(&p, "hrr-play", &[name]).assert().code(1);
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        assert!(
            err.contains(&format!(
                "hrr-play: fatal: event 2 (hipModuleLaunchKernel): {why}"
            )),
            "{name}: {err}"
        );
        let out = format!("{name}.one");
        let a = tool(&p, "hrr-extract", &[name, "--launch", "2", "-o", &out])
            .assert()
            .code(1);
        let err = stderr(&a);
        assert_no_crash("hrr-extract", &err);
        assert!(
            err.contains(&format!("event 2 (hipModuleLaunchKernel): {why}")),
            "{name}: {err}"
        );
        assert!(!p.path(&out).exists(), "{name}: {out} written");
    }
}

#[test]
fn hrr_trace_never_writes_through_a_planted_temporary() {
    let p = Pipeline::empty("hostile-trace-link");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .write(p.path("cap.hrr"))
        .unwrap();
    std::fs::write(p.path("victim"), b"precious").unwrap();
    // The shell's pid is hrr-trace's once it execs: the names a temporary
    // made of the pid would have.
    let a = p
        .sh(
            "ln -s victim .t.json.tmp-$$ && ln -s victim .t.json.tmp-$$-0 && \
             exec hrr-trace cap.hrr -o t.json",
        )
        .timeout(PROMPT)
        .assert()
        .success();
    assert_no_crash("hrr-trace", &stderr(&a));
    assert_eq!(std::fs::read(p.path("victim")).unwrap(), b"precious");
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.path("t.json")).unwrap()).unwrap();
    assert!(trace["traceEvents"].is_array(), "{trace}");
    let mode = std::fs::metadata(p.path("t.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Only the planted links are left beside it: no temporary of its own.
    let left: Vec<String> = names(p.dir())
        .into_iter()
        .filter(|n| n.starts_with(".t.json"))
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    // The output itself a link: replaced, its target untouched.
    symlink("victim", p.path("u.json")).unwrap();
    tool(&p, "hrr-trace", &["cap.hrr", "-o", "u.json"])
        .assert()
        .success();
    assert_eq!(std::fs::read(p.path("victim")).unwrap(), b"precious");
    assert!(
        std::fs::symlink_metadata(p.path("u.json"))
            .unwrap()
            .is_file()
    );
}

/// Runs `cmd` to its end; its exit status, stderr and peak RSS in KiB.
// The child is reaped by wait4, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: std::process::Command, err: &Path) -> (i32, String, i64) {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; both out-pointers are valid.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as i32);
    let text = std::fs::read_to_string(err).unwrap();
    (libc::WEXITSTATUS(status), text, usage.ru_maxrss)
}

#[test]
fn hrr_trace_stops_reading_an_overlong_line_at_the_limit() {
    let p = Pipeline::empty("hostile-trace-line");
    let a = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .write(p.path("cap.hrr"))
        .unwrap();
    // One good line, then 1 GiB without a newline (sparse: no disk).
    let events = a.join("events.ndjson");
    let good = std::fs::read(&events).unwrap();
    let first = good.split_inclusive(|&b| b == b'\n').next().unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&events)
        .unwrap();
    f.set_len(first as u64).unwrap();
    f.set_len(first as u64 + (1 << 30)).unwrap();
    drop(f);
    let mut cmd = std::process::Command::new(hrr_tests::tools().bin("hrr-trace"));
    cmd.arg(&a).arg("-o").arg(p.path("t.json"));
    let (code, err, kib) = run_measured(cmd, &p.path("err"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("events.ndjson:2: malformed event: line longer than 16777216 bytes"),
        "{err}"
    );
    // The line's first 16 MiB on each of the reader's threads (up to four)
    // and their buffers: not the gigabyte.
    assert!(kib < 512 << 10, "peak RSS {kib} KiB");
    assert!(!p.path("t.json").exists());
}

/// A crashed capture of three blobs (`abcd`, `efgh`, `ijkl`) and a sidecar.
fn crashed(p: &Pipeline, name: &str) -> std::path::PathBuf {
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .h2d(DEV, b"efgh")
        .h2d(DEV, b"ijkl")
        .d2h(DEV, b"ijkl")
        .segment(0x7e00_0000_0000, 4096, 0)
        .write_unfinished(p.path(name))
        .unwrap()
}

fn blob_file(archive: &Path, bytes: &[u8]) -> std::path::PathBuf {
    BlobStore::of_archive(archive).path(&BlobId::of(bytes))
}

#[test]
fn repair_lists_blobs_that_are_not_regular_files_and_keeps_their_events() {
    let p = Pipeline::empty("hostile-repair-blobs");
    let a = crashed(&p, "cap.hrr");
    // A FIFO, a link to a file of the right content, a directory.
    let fifo = blob_file(&a, b"abcd");
    std::fs::remove_file(&fifo).unwrap();
    mkfifo(&fifo);
    let link = blob_file(&a, b"efgh");
    std::fs::rename(&link, p.path("outside")).unwrap();
    symlink(p.path("outside"), &link).unwrap();
    let dir = blob_file(&a, b"ijkl");
    std::fs::remove_file(&dir).unwrap();
    std::fs::create_dir(&dir).unwrap();
    let id = |b: &[u8]| BlobId::of(b).to_string();
    for (args, out) in [
        (vec!["--repair", "-o", "fixed.hrr", "cap.hrr"], "fixed.hrr"),
        (vec!["--repair", "cap.hrr"], "cap.hrr"),
    ] {
        let a = tool(&p, "hrr-play", &args).assert().success();
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        for (blob, first, why) in [
            (id(b"abcd"), 1, "is a FIFO, not a regular file"),
            (id(b"efgh"), 2, "refusing a symlink inside the blob store"),
            (id(b"ijkl"), 3, "is a directory, not a regular file"),
        ] {
            let line = format!(
                "hrr-play: repair: blob {blob} (first used by event {first}) is unreadable: "
            );
            assert!(
                err.lines().any(|l| l.starts_with(&line) && l.contains(why)),
                "{args:?}: {line}…{why}\n{err}"
            );
        }
        assert!(err.contains("5 events kept, 0 blobs"), "{args:?}: {err}");
        let m = read_manifest(&p.path(out));
        assert_eq!(
            (&m["complete"], &m["repaired"]),
            (&true.into(), &true.into())
        );
        assert_eq!(read_events(&p.path(out)).len(), 6, "{args:?}");
    }
    assert_eq!(std::fs::read(p.path("outside")).unwrap(), b"efgh");
    assert_eq!(
        names(p.dir()),
        ["cap.hrr", "cap.torn", "fixed.hrr", "outside"]
    );
}

#[test]
fn repair_leaves_out_region_files_that_are_not_regular_or_too_large() {
    let p = Pipeline::empty("hostile-repair-regions");
    let a = crashed(&p, "cap.hrr");
    let regions = a.join("regions");
    mkfifo(&regions.join("fifo.ndjson"));
    std::fs::write(p.path("victim.ndjson"), b"").unwrap();
    symlink(p.path("victim.ndjson"), regions.join("link.ndjson")).unwrap();
    // 1 GiB of hole: what a reader refuses (256 MiB at most), and what a
    // plain copy would turn into a gigabyte of zeros.
    let huge = std::fs::File::create(regions.join("huge.hrrr")).unwrap();
    huge.set_len(1 << 30).unwrap();
    drop(huge);
    for (args, out) in [
        (vec!["--repair", "-o", "fixed.hrr", "cap.hrr"], "fixed.hrr"),
        (vec!["--repair", "cap.hrr"], "cap.hrr"),
    ] {
        let a = tool(&p, "hrr-play", &args).assert().success();
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        for why in [
            "regions/fifo.ndjson: is a FIFO, not a regular file",
            "regions/link.ndjson: is a symbolic link",
            "regions/huge.hrrr: 1073741824 bytes, more than the 268435456 bytes a region file \
             may have",
        ] {
            assert!(
                err.lines().any(
                    |l| l.starts_with("hrr-play: repair: region file left out: ")
                        && l.contains(why)
                ),
                "{args:?}: {why}\n{err}"
            );
        }
        assert_eq!(names(&p.path(out).join("regions")), ["testkit.ndjson"]);
    }
    assert_eq!(std::fs::read(p.path("victim.ndjson")).unwrap(), b"");
    assert_eq!(
        names(p.dir()),
        ["cap.hrr", "cap.torn", "fixed.hrr", "victim.ndjson"]
    );
    // The original keeps what it had.
    let kept = p.path("cap.torn/regions/fifo.ndjson");
    assert!(
        std::fs::symlink_metadata(kept)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_symlinked_blobs_directory_is_refused_by_every_reader() {
    let p = Pipeline::empty("hostile-blobs-link");
    let a = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 4)
        .h2d(DEV, b"abcd")
        .d2h(DEV, b"abcd")
        .write(p.path("cap.hrr"))
        .unwrap();
    std::fs::rename(a.join("blobs"), p.path("elsewhere")).unwrap();
    symlink(p.path("elsewhere"), a.join("blobs")).unwrap();
    let why = "cap.hrr/blobs: refusing a symlink inside the blob store";
    for (name, args) in [
        ("hrr-play", vec!["cap.hrr"]),
        ("hrr-play", vec!["--repair", "-o", "fixed.hrr", "cap.hrr"]),
        ("hrr-diff", vec!["cap.hrr", "cap.hrr"]),
        (
            "hrr-extract",
            vec!["cap.hrr", "--launch", "1", "-o", "one.hrr"],
        ),
        ("hrr-trace", vec!["cap.hrr"]),
    ] {
        let a = tool(&p, name, &args).assert().code(2);
        let err = stderr(&a);
        assert_no_crash(name, &err);
        assert!(err.contains(why), "{name} {args:?}: {err}");
    }
    assert_eq!(names(p.dir()), ["cap.hrr", "elsewhere"]);
}

#[test]
fn a_repair_that_fails_leaves_nothing_behind() {
    let p = Pipeline::empty("hostile-repair-fail");
    // Events enough that writing them runs into a 64 KiB file size limit.
    let mut b = ArchiveBuilder::new(Platform::Cpu).alloc(DEV, 4);
    for i in 0..2000u32 {
        b = b.h2d(DEV, &i.to_le_bytes());
    }
    b.write_unfinished(p.path("cap.hrr")).unwrap();
    let before = std::fs::read(p.path("cap.hrr/events.ndjson")).unwrap();
    assert!(before.len() > 256 << 10);
    // SIGXFSZ ignored: a write past the limit fails with EFBIG instead.
    for args in ["--repair -o fixed.hrr cap.hrr", "--repair cap.hrr"] {
        let a = p
            .sh(&format!(
                "trap '' XFSZ; ulimit -f 128; exec hrr-play {args}"
            ))
            .timeout(PROMPT)
            .assert()
            .code(2);
        let err = stderr(&a);
        assert_no_crash("hrr-play", &err);
        assert!(err.contains("File too large"), "{args}: {err}");
        assert_eq!(names(p.dir()), ["cap.hrr"], "{args}: {err}");
    }
    assert_eq!(
        std::fs::read(p.path("cap.hrr/events.ndjson")).unwrap(),
        before
    );
}
