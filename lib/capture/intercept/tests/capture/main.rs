//! The interposer's own behaviour, end to end: C programs built against
//! Debian's HIP headers run on the CPU runtime under the real `hrr-cap`, and
//! their archives are read back with hrr-core.

mod device_hash;
mod driver;
mod harness;
mod runtime;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::{Captured, capture, env, kernels_so, printed_addrs, program, text, u32s};
use hrr_core::manifest::{ArchiveKind, Platform};
use hrr_core::{Addr, BlobId, Dir, Event, KernelArg, MemKind, Op};

const N: u32 = 64;

/// A memcpy event: (event, dir, dst, src, stream, blob).
type Copy<'a> = (&'a Event, Dir, u64, u64, Option<Addr>, Option<BlobId>);
/// A launch event: (event, name, code, grid, block, stream, args).
type Launch<'a> = (
    &'a Event,
    &'a str,
    BlobId,
    [u32; 3],
    [u32; 3],
    Addr,
    &'a [KernelArg],
);

fn memcpys(c: &Captured) -> Vec<Copy<'_>> {
    c.events
        .iter()
        .filter_map(|e| match e.op {
            Op::Memcpy {
                dir,
                dst,
                src,
                stream,
                blob,
                ..
            } => Some((e, dir, dst.0, src.0, stream, blob)),
            _ => None,
        })
        .collect()
}

fn launches(c: &Captured) -> Vec<Launch<'_>> {
    c.events
        .iter()
        .filter_map(|e| match &e.op {
            Op::Launch {
                name,
                code,
                grid,
                block,
                stream,
                args,
                ..
            } => Some((
                e,
                name.as_str(),
                *code,
                *grid,
                *block,
                *stream,
                args.as_slice(),
            )),
            _ => None,
        })
        .collect()
}

fn word(a: &KernelArg, off: usize) -> u64 {
    u64::from_le_bytes(a.hex.0[off..off + 8].try_into().unwrap())
}

/// `hrr-cap`'s summary line (`hrr-cap: N events, … -> DIR`), not its `job :` line.
fn summary_line(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("hrr-cap: ") && l.contains(" events, "))
        .unwrap_or_else(|| panic!("no summary line in:\n{stderr}"))
}

#[test]
fn module_api_copies_memsets_and_failures_are_recorded_faithfully() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("basic.hrr");
    let so = kernels_so();
    let out = capture(&dir, &program("basic", &[]), &[so.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("basic: OK"),
        "stdout passes through: {stdout}"
    );
    assert!(
        !stdout.contains("hrr-"),
        "nothing of hrr on stdout: {stdout}"
    );
    let line = summary_line(&stderr);
    assert!(line.ends_with(&format!("-> {}", dir.display())), "{line}");
    let a = printed_addrs(&stdout);
    let (d, d2, pinned, hidden, q, host, outp) = (
        a["d"],
        a["d2"],
        a["pinned"],
        a["hidden"],
        a["q"],
        a["host"],
        a["out"],
    );

    let c = Captured::open(&dir);
    assert!(
        line.starts_with(&format!(
            "hrr-cap: {} events, {} blobs, ",
            c.manifest.events, c.manifest.blobs
        )),
        "{line}"
    );
    let m = &c.manifest;
    assert!(m.complete);
    assert_eq!((m.kind, m.platform), (ArchiveKind::Capture, Platform::Cpu));
    assert_eq!(
        m.argv.get(1).map(String::as_str),
        so.to_str(),
        "argv from /proc/self/cmdline: {:?}",
        m.argv
    );
    assert!(m.extra.get("pid").and_then(|p| p.as_u64()).is_some());
    c.assert_seqs_contiguous();
    let last = c.events.last().unwrap();
    assert_eq!(
        last.op,
        Op::Eof {
            events: c.events.len() as u64 - 1
        }
    );
    assert_eq!(m.events, c.events.len() as u64 - 1);
    assert!(
        c.events.windows(2).all(|w| w[0].t <= w[1].t),
        "t never goes backwards along seq"
    );

    // Code objects: the module image (read from memory, then clobbered by
    // the app; and from a file) is a blob; functions name their kernels.
    let image = std::fs::read(&so).unwrap();
    let loads: Vec<_> = c
        .events
        .iter()
        .filter(|e| matches!(e.op, Op::ModuleLoad { .. }))
        .collect();
    assert_eq!(
        loads.iter().map(|e| e.api.as_str()).collect::<Vec<_>>(),
        ["hipModuleLoadData", "hipModuleLoad"]
    );
    for e in &loads {
        let Op::ModuleLoad { code, .. } = e.op else {
            unreachable!()
        };
        assert_eq!(code, BlobId::of(&image));
        assert_eq!(c.blob(&code), image);
    }
    let names: Vec<_> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::Function { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["fill", "gather", "poke"]);

    // Copies: every direction resolved at capture, blobs hold the bytes.
    let host_bytes = u32s((0..N).map(|i| 3 * i + 1));
    let cp = memcpys(&c);
    let got: Vec<_> = cp
        .iter()
        .map(|(e, dir, dst, src, stream, blob)| {
            (
                e.api.as_str(),
                *dir,
                *dst,
                *src,
                stream.is_some(),
                blob.is_some(),
                e.ret == 0,
            )
        })
        .collect();
    let want = vec![
        ("hipMemcpy", Dir::H2d, d, host, false, true, true),
        ("hipMemcpy", Dir::D2h, outp, d, false, true, true),
        ("hipMemcpyDtoH", Dir::D2h, outp, d2, false, true, true),
        ("hipMemcpyAsync", Dir::D2h, outp, d, true, true, true),
        ("hipMemcpy", Dir::D2d, d2, d, false, false, true),
        ("hipMemcpy", Dir::H2h, cp[5].2, host, false, false, true),
        ("hipMemcpy", Dir::H2d, d, pinned, false, true, true),
        ("hipMemcpyHtoDAsync", Dir::H2d, d2, host, true, true, true),
        ("hipMemcpyDtoHAsync", Dir::D2h, outp, d2, true, true, true),
        ("hipMemcpy", Dir::H2d, hidden, host, false, true, true),
        ("hipMemcpy", Dir::D2h, outp, hidden, false, true, true),
        ("hipMemcpy", Dir::D2h, outp, 0x10, false, false, false),
    ];
    assert_eq!(got, want);
    let blob = |i: usize| c.blob(&cp[i].5.unwrap());
    assert_eq!(blob(0), host_bytes);
    assert_eq!(blob(1), u32s((0..N).map(|i| 100 + i)));
    let gathered = blob(2);
    assert_eq!(&gathered[..8], &u32s([(104) * 2 + 7, (105) * 2 + 7])[..]);
    assert_eq!(&gathered[12..16], &0xabcdefu32.to_le_bytes());
    assert_eq!(
        blob(3),
        u32s((0..N).map(|i| 1000 + i)),
        "async D2H synchronised before the snapshot"
    );
    assert_eq!(blob(6), u32s((0..N).map(|i| 0x5a5a_0000 + i)));
    assert_eq!(blob(7), host_bytes);
    assert_eq!(blob(8), host_bytes);
    assert_eq!(blob(9), host_bytes[..64]);
    assert_eq!(blob(10), host_bytes[..64]);
    assert_ne!(cp[11].0.ret, 0, "failed copy keeps its error");

    // Memsets carry their pattern width.
    let sets: Vec<_> = c
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Memset {
                dst,
                value,
                size,
                width,
                stream,
            } => Some((e.api.as_str(), dst.0, value, size, width, stream.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(
        sets,
        [
            ("hipMemsetD32", d, 0xdead_beef, 256, 4, false),
            ("hipMemsetD16Async", d, 0x1234, 128, 2, true),
            ("hipMemset", d, 0xab, 16, 1, false),
        ]
    );

    // Launches: host args only, offsets from metadata, pointers found.
    let l = launches(&c);
    assert_eq!(
        l.iter().map(|x| x.1).collect::<Vec<_>>(),
        ["fill", "gather", "poke", "fill"]
    );
    for x in &l {
        assert_eq!(x.2, BlobId::of(&image), "launch code is the module image");
    }
    let fill = l[0].6;
    assert_eq!(fill.len(), 3, "hidden argument excluded: {fill:?}");
    assert_eq!(
        (
            fill[0].offset,
            fill[0].size,
            &fill[0].ptrs[..],
            word(&fill[0], 0)
        ),
        (Some(0), 8, &[0u32][..], d)
    );
    assert_eq!(
        (fill[1].offset, &fill[1].hex.0[..], fill[1].ptrs.is_empty()),
        (Some(8), &100u32.to_le_bytes()[..], true)
    );
    assert_eq!(
        (fill[2].offset, &fill[2].hex.0[..]),
        (Some(12), &N.to_le_bytes()[..])
    );
    let gather = l[1].6;
    assert_eq!(gather.len(), 2);
    assert_eq!(
        (gather[0].offset, gather[0].size, &gather[0].ptrs[..]),
        (Some(0), 24, &[8u32][..]),
        "embedded interior pointer"
    );
    assert_eq!(word(&gather[0], 8), d + 16);
    assert_eq!(
        (gather[1].offset, &gather[1].ptrs[..], word(&gather[1], 0)),
        (Some(24), &[0u32][..], d2)
    );
    let poke = l[2];
    assert_eq!(poke.0.api, "hipExtModuleLaunchKernel");
    assert_eq!(
        (poke.3, poke.4),
        ([3, 1, 1], [4, 1, 1]),
        "work-item sizes become blocks"
    );
    assert_eq!(
        (poke.6[0].size, &poke.6[0].ptrs[..]),
        (9, &[1u32][..]),
        "unaligned pointer in a packed struct"
    );
    assert_eq!(
        (poke.6[1].offset, poke.6[1].ptrs.is_empty()),
        (Some(12), true)
    );
    assert_ne!(l[3].5, Addr(0), "launch on the created stream");

    // Allocations: failed ones record their error and no pointer; the one
    // made through hipGetProcAddress is recorded; frees name their kind.
    let allocs: Vec<_> = c
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Alloc { ptr, size, mem } => Some((e.api.as_str(), e.ret, ptr.0, size, mem)),
            _ => None,
        })
        .collect();
    assert_eq!(
        allocs[0..3],
        [
            ("hipMalloc", 0, d, 256, MemKind::Device),
            ("hipMalloc", 0, d2, 256, MemKind::Device),
            ("hipHostMalloc", 0, pinned, 256, MemKind::Pinned)
        ]
    );
    assert!(
        allocs[3].1 != 0 && allocs[3].2 == 0 && allocs[3].3 == 1 << 62,
        "{:?}",
        allocs[3]
    );
    assert_eq!(allocs[4], ("hipMalloc", 0, q, 256, MemKind::Device));
    let frees: Vec<_> = c
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Free { ptr, mem } => Some((e.api.as_str(), ptr.0, mem)),
            _ => None,
        })
        .collect();
    assert_eq!(
        frees,
        [
            ("hipFree", q, Some(MemKind::Device)),
            ("hipFree", d, Some(MemKind::Device)),
            ("hipFree", d2, Some(MemKind::Device)),
            ("hipHostFree", pinned, Some(MemKind::Pinned)),
        ]
    );
    let errors = stdout
        .lines()
        .find_map(|l| l.strip_prefix("errors="))
        .unwrap();
    let (e1, e2) = errors.split_once(',').unwrap();
    assert_eq!(
        allocs[3].1.to_string(),
        e1,
        "the recorded ret is what the app got"
    );
    assert_eq!(cp[11].0.ret.to_string(), e2);

    // Streams and events.
    let ops: Vec<&str> = c.events.iter().map(|e| e.op.name()).collect();
    for op in [
        "stream_create",
        "event_create",
        "event_record",
        "event_sync",
        "stream_wait_event",
        "event_destroy",
        "stream_destroy",
        "device_sync",
        "stream_sync",
        "module_unload",
    ] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }
}

fn bundle(entries: &[(&str, &[u8])], path: &Path) -> Vec<u8> {
    let b = hrr_codeobj::bundle::write(entries);
    std::fs::write(path, &b).unwrap();
    b
}

#[test]
fn compiler_path_writes_a_fat_binary_only_when_one_of_its_kernels_launches() {
    let so = std::fs::read(kernels_so()).unwrap();
    let e = env();
    let (p1, p2) = (e.work.join("fatbin1.bundle"), e.work.join("fatbin2.bundle"));
    let cpu = "hipv4-x86_64-unknown-linux-gnu-cpu";
    let b1 = bundle(&[("host-x86_64-unknown-linux-gnu-", &[]), (cpu, &so)], &p1);
    let b2 = bundle(&[(cpu, &so)], &p2);
    let app = program(
        "fatbin",
        &[
            ("BUNDLE1", p1.to_str().unwrap()),
            ("BUNDLE2", p2.to_str().unwrap()),
        ],
    );
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("fatbin.hrr");
    let out = capture(&dir, &app, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let a = printed_addrs(&stdout);
    let c = Captured::open(&dir);
    assert!(c.manifest.complete);
    c.assert_seqs_contiguous();

    let regs: Vec<_> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::Function { name, func, .. } if e.api == "__hipRegisterFunction" => {
                Some((name.as_str(), func.0))
            }
            _ => None,
        })
        .collect();
    assert_eq!(regs.len(), 2);
    assert_eq!(regs[0], ("fill", a["fill"]));
    let l = launches(&c);
    assert_eq!(l.len(), 3);
    for (i, x) in l.iter().enumerate() {
        assert_eq!((x.0.api.as_str(), x.1), ("hipLaunchKernel", "fill"));
        assert_eq!(x.2, BlobId::of(&b1), "launch code is the whole bundle");
        assert_eq!((x.3, x.4), ([3, 1, 1], [128, 1, 1]));
        let Op::Launch { func, .. } = &x.0.op else {
            unreachable!()
        };
        assert_eq!(*func, Some(Addr(a["fill"])));
        assert_eq!(x.6.len(), 3);
        assert_eq!((&x.6[0].ptrs[..], word(&x.6[0], 0)), (&[0u32][..], a["d"]));
        assert_eq!(x.6[1].hex.0, (40 + i as u32).to_le_bytes());
    }
    assert_eq!(c.blob(&BlobId::of(&b1)), b1);
    assert!(
        !c.has_blob(&BlobId::of(&b2)),
        "a fat binary none of whose kernels ran is never written"
    );
}

#[test]
fn eight_threads_record_every_call_once_in_seq_order() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("threads.hrr");
    let out = capture(&dir, &program("threads", &[]), &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let c = Captured::open(&dir);
    assert!(c.manifest.complete);
    c.assert_seqs_contiguous();
    assert_eq!(
        c.events.len(),
        8 * 1000 + 1,
        "every call recorded exactly once, plus eof"
    );
    let mut per_tid: HashMap<u64, usize> = HashMap::new();
    for e in &c.events[..8000] {
        *per_tid.entry(e.tid).or_default() += 1;
    }
    assert_eq!(per_tid.len(), 8);
    assert!(per_tid.values().all(|&n| n == 1000), "{per_tid:?}");
    // Allocation events are in runtime order: replaying them never sees an
    // address allocated twice or freed while not live.
    let mut live: BTreeMap<u64, u64> = BTreeMap::new();
    for e in &c.events {
        match e.op {
            Op::Alloc { ptr, size, .. } => {
                let clash = live
                    .range(..ptr.0 + size)
                    .next_back()
                    .filter(|(b, s)| **b + **s > ptr.0);
                assert!(
                    clash.is_none(),
                    "seq {}: {ptr} overlaps a live allocation",
                    e.seq
                );
                live.insert(ptr.0, size);
            }
            Op::Free { ptr, .. } => assert!(
                live.remove(&ptr.0).is_some(),
                "seq {}: free of {ptr}, not live",
                e.seq
            ),
            Op::Memcpy { blob: Some(b), .. } => {
                let v = u32::from_le_bytes(c.blob(&b)[..4].try_into().unwrap());
                assert_eq!(v % 0x0101_0101, 0, "seq {}: D2H blob {v:#x}", e.seq);
            }
            _ => {}
        }
    }
    assert!(live.is_empty());
}

fn crash(mode: &str) -> (std::process::Output, tempfile::TempDir) {
    let t = tempfile::tempdir().unwrap();
    let out = capture(&t.path().join("c.hrr"), &program("crash", &[]), &[mode]);
    (out, t)
}

const CRASH_CALLS: usize = 25;

#[test]
fn sigsegv_writes_the_buffered_events_and_exits_139() {
    let (out, t) = crash("segv");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(139), "{stderr}");
    assert!(
        summary_line(&stderr).ends_with("(incomplete: app died by signal 11)"),
        "{stderr}"
    );
    let c = Captured::open(&t.path().join("c.hrr"));
    assert!(!c.manifest.complete);
    assert_eq!(
        c.events.len(),
        CRASH_CALLS,
        "all calls made before the crash, no eof"
    );
    c.assert_seqs_contiguous();
    assert!(summary_line(&stderr).starts_with(&format!("hrr-cap: {CRASH_CALLS} events")));
}

#[test]
fn sigabrt_writes_the_buffered_events_and_exits_134() {
    let (out, t) = crash("abort");
    assert_eq!(out.status.code(), Some(134), "{}", text(&out.stderr));
    let c = Captured::open(&t.path().join("c.hrr"));
    assert!(!c.manifest.complete);
    assert_eq!(c.events.len(), CRASH_CALLS);
}

#[test]
fn the_applications_own_fatal_signal_handler_still_runs() {
    let (out, t) = crash("handled");
    assert_eq!(out.status.code(), Some(42), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("app handler ran"));
    let c = Captured::open(&t.path().join("c.hrr"));
    assert_eq!(c.events.len(), CRASH_CALLS + 1);
    assert_eq!(
        c.events.last().unwrap().api,
        "_exit",
        "its _exit finished the archive"
    );
    assert!(c.manifest.complete);
}

#[test]
fn underscore_exits_finish_the_archive() {
    for (mode, code) in [("_exit", 7), ("_Exit", 8)] {
        let (out, t) = crash(mode);
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        let c = Captured::open(&t.path().join("c.hrr"));
        assert!(c.manifest.complete, "{mode}");
        assert_eq!(c.events.len(), CRASH_CALLS + 1);
        let eof = c.events.last().unwrap();
        assert_eq!(
            (eof.api.as_str(), &eof.op),
            (
                mode,
                &Op::Eof {
                    events: CRASH_CALLS as u64
                }
            )
        );
        assert_eq!(c.manifest.events, CRASH_CALLS as u64);
    }
}

#[test]
fn sigkill_midway_leaves_a_readable_incomplete_archive() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("k.hrr");
    let mut child = Command::new(env().cap())
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(program("crash", &[]))
        .arg("kill")
        .env_remove("LD_PRELOAD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid: i32 = line
        .trim()
        .strip_prefix("ready ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .unwrap();
    // Longer than the flush interval, so the periodic flush has run.
    std::thread::sleep(Duration::from_millis(400));
    let st = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(137));
    assert!(summary_line(&text(&out.stderr)).ends_with("(incomplete: app died by signal 9)"));
    let c = Captured::open(&dir);
    assert!(!c.manifest.complete);
    assert_eq!(c.events.len(), CRASH_CALLS);
    c.assert_seqs_contiguous();
}

#[test]
fn a_forked_child_is_not_recorded_and_an_execd_one_gets_its_own_archive() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("f.hrr");
    let out = capture(&dir, &program("fork", &[]), &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let exec_pid: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("exec child "))
        .and_then(|r| r.split(':').next())
        .unwrap()
        .parse()
        .unwrap();
    let c = Captured::open(&dir);
    assert!(c.manifest.complete);
    let got: Vec<_> = c
        .events
        .iter()
        .map(|e| (e.api.as_str(), e.op.name()))
        .collect();
    assert_eq!(
        got,
        [
            ("hipMalloc", "alloc"),
            ("hipMemset", "memset"),
            ("hipFree", "free"),
            ("exit", "eof")
        ]
    );
    let child_dir = t.path().join(format!("f-{exec_pid}.hrr"));
    let cc = Captured::open(&child_dir);
    assert!(cc.manifest.complete);
    assert_eq!(cc.manifest.extra["requested_out"], dir.to_str().unwrap());
    let sizes: Vec<_> = cc
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Alloc { size, .. } => Some(size),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, [4096]);
    assert!(
        summary_line(&stderr).contains("(+1 child process archive(s)"),
        "{stderr}"
    );
}

#[test]
fn every_export_is_unversioned_and_reachable_through_hip_get_proc_address() {
    let lib = env().intercept_lib();
    let versions = Command::new("readelf")
        .arg("-V")
        .arg(&lib)
        .output()
        .unwrap();
    assert!(
        !text(&versions.stdout).contains("Version definition"),
        "no version nodes of our own"
    );
    let defined = |so: &Path| -> Vec<String> {
        let nm = Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(so)
            .output()
            .unwrap();
        text(&nm.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2))
            .filter(|n| n.starts_with("hip") || n.starts_with("__hip"))
            .map(str::to_string)
            .collect()
    };
    let ours = defined(&lib);
    // The whole HIP table (the C++-mangled entries aside).
    assert!(ours.len() >= 380, "{} exported: {ours:?}", ours.len());
    for must in [
        "hipMalloc",
        "hipMemcpyAsync",
        "hipModuleLaunchKernel",
        "__hipRegisterFatBinary",
        "hipGetProcAddress",
    ] {
        assert!(ours.iter().any(|n| n == must), "{must} not exported");
    }
    // Names the runtime defines too: those resolve to the interposer's
    // wrapper, whatever its class (recorded, query, unrecorded: e.g.
    // hipGetDeviceCount, hipMemAddressReserve); the others have no real definition
    // to forward to, and are not found.
    let runtime = defined(&env().profile.join("libhrr_hip_cpu.so"));
    let names: Vec<String> = ours.into_iter().filter(|n| runtime.contains(n)).collect();
    assert!(names.len() >= 80, "{names:?}");
    for class in ["hipGetDeviceCount", "hipMemAddressReserve", "hipMalloc"] {
        assert!(names.iter().any(|n| n == class), "{class}: {names:?}");
    }
    let t = tempfile::tempdir().unwrap();
    let args: Vec<&str> = names.iter().map(String::as_str).collect();
    let out = capture(&t.path().join("p.hrr"), &program("procaddr", &[]), &args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("checked {} names, 0 bad", names.len())),
        "{stdout}"
    );
    assert!(stdout.contains("missing: ret 500 ptr (nil)"), "{stdout}");
}
