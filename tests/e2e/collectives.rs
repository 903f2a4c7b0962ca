//! Collectives recorded at the NCCL API and replayed through the library:
//! `tests/workloads/nccl_collectives.c` on the CPU runtime's stand-in
//! (`libhrr_nccl_cpu.so`), with one rank, and as a job of two processes.

use hrr_tests::{Pipeline, d2h_counts, read_events};
use predicates::prelude::*;
use serde_json::Value;

fn ops(events: &[Value], op: &str) -> Vec<Value> {
    events.iter().filter(|e| e["op"] == op).cloned().collect()
}

fn one_rank() -> Pipeline {
    let p = Pipeline::new("nccl_collectives").capture();
    assert!(
        p.app_log().contains("nccl_collectives: rank 0 of 1: OK"),
        "{}",
        p.app_log()
    );
    p
}

/// `hrr-cap -o job.hrr -- ./WORKLOAD job`, which must say `WORKLOAD: job:
/// OK`, and the job file it wrote.
fn captured_job(workload: &str) -> (Pipeline, Value) {
    let p = Pipeline::new(workload);
    let a = p
        .sh(&format!(
            "hrr-cap -o job.hrr -- {} job | tee app.log",
            p.app_cmdline()
        ))
        .assert()
        .success();
    let p = p.step(a);
    assert!(
        p.app_log().contains(&format!("{workload}: job: OK")),
        "{}",
        p.app_log()
    );
    let job = serde_json::from_slice(&std::fs::read(p.path("job.job.json")).unwrap()).unwrap();
    (p, job)
}

/// The archive holds the collectives at their API, and nothing the
/// stand-in did underneath: not its proxy thread's scratch allocation and
/// memset, not its copies and stream syncs on either thread.
#[test]
fn collectives_are_recorded_at_their_api_and_nothing_below() {
    let p = one_rank();
    let ev = p.events("cap.hrr");
    let init = ops(&ev, "nccl_comm_init");
    assert_eq!(init.len(), 1, "{init:?}");
    assert_eq!(
        (init[0]["nranks"].as_u64(), init[0]["rank"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        init[0]["uid"].as_str().map(str::len),
        Some(32),
        "{}",
        init[0]
    );
    let colls: Vec<(String, String)> = ops(&ev, "nccl_coll")
        .iter()
        .map(|e| {
            (
                e["api"].as_str().unwrap().into(),
                e["coll"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("ncclAllReduce", "all_reduce"),
        ("ncclBroadcast", "broadcast"),
        ("ncclReduce", "reduce"),
        ("ncclAllGather", "all_gather"),
        ("ncclReduceScatter", "reduce_scatter"),
        ("ncclSend", "send"),
        ("ncclRecv", "recv"),
        ("ncclAllReduce", "all_reduce"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, c)| (a.to_string(), c.to_string()))
        .collect();
    assert_eq!(colls, want);
    let first = &ops(&ev, "nccl_coll")[0];
    assert_eq!(first["count"], 1024);
    assert_eq!(first["dtype"], 7);
    assert_eq!(first["redop"], 0);
    assert_eq!(first["comm"], init[0]["comm"]);
    assert_eq!(ops(&ev, "nccl_group_start").len(), 1);
    assert_eq!(ops(&ev, "nccl_group_end").len(), 1);
    assert_eq!(ops(&ev, "nccl_comm_finalize").len(), 1);
    assert_eq!(ops(&ev, "nccl_comm_destroy").len(), 1);
    // The application's own calls, exactly: 8 hipMalloc + ncclMemAlloc,
    // 2 uploads + 7 read-backs, 3 stream syncs, no memset.
    let apis = |op: &str| -> Vec<String> {
        ops(&ev, op)
            .iter()
            .map(|e| e["api"].as_str().unwrap().to_string())
            .collect()
    };
    let allocs = apis("alloc");
    assert_eq!(allocs.len(), 9, "{allocs:?}");
    assert_eq!(allocs.iter().filter(|a| *a == "ncclMemAlloc").count(), 1);
    assert_eq!(ops(&ev, "memcpy").len(), 9, "{:?}", apis("memcpy"));
    assert_eq!(ops(&ev, "stream_sync").len(), 3);
    assert!(
        ops(&ev, "memset").is_empty(),
        "the proxy's memset was recorded"
    );
    // The stand-in's proxy allocates hrr_nccl_cpu::comm::SCRATCH bytes.
    assert!(
        !ops(&ev, "alloc").iter().any(|e| e["size"] == 65536),
        "the proxy's scratch allocation was recorded"
    );
}

/// capture → replay through the stand-in → diff: every result read back
/// after a collective matches.
#[test]
fn one_rank_replays_through_the_library() {
    let p = one_rank().play();
    let (pass, _, _, fail) = d2h_counts(&p.last_stdout()).expect("a d2h line");
    assert_eq!((pass, fail), (7, 0), "{}", p.last_stdout());
    p.diff();
}

/// No library, no replay: the first collective event is fatal, named, and
/// the replay fails.
#[test]
fn a_replay_without_the_library_fails_at_the_event() {
    let p = one_rank();
    p.play_cmd(&["--nccl-lib", "/nonexistent/libnccl.so.2"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_match(r"(?m)^FAIL").unwrap())
        .stderr(predicate::str::contains(
            "(ncclCommInitRank): collectives are replayed through the NCCL-API library",
        ))
        .stderr(predicate::str::contains("/nonexistent/libnccl.so.2"));
}

/// A collective's count halved in the archive: the replay reduces half
/// the elements, and the read-back after it fails.
#[test]
fn a_wrong_count_fails_the_check() {
    let p = one_rank();
    let text = hrr_tests::events_text(&p.cap());
    let mut done = false;
    let text: String = text
        .lines()
        .map(|l| {
            if !done && l.contains(r#""op":"nccl_coll""#) && l.contains(r#""count":1024"#) {
                done = true;
                l.replace(r#""count":1024"#, r#""count":512"#)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(done, "no all-reduce of 1024 elements");
    let _ = std::fs::remove_file(p.cap().join("events.ndjson.zst"));
    std::fs::write(p.cap().join("events.ndjson"), text).unwrap();
    let a = p
        .play_cmd(&[])
        .assert()
        .code(1)
        .stdout(predicate::str::is_match(r"(?m)^FAIL$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (_, _, _, fail) = d2h_counts(&out).expect("a d2h line");
    assert!(fail >= 1, "{out}");
}

/// Two ranks as two processes: the archives share the communicator's
/// `uid`, and the job replays with a fresh one that rank 0's process
/// publishes; one rank's archive alone is refused.
#[test]
fn a_job_of_two_ranks_replays_as_a_job() {
    let (p, job) = captured_job("nccl_collectives");
    let procs = job["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 2, "{job}");
    let mut uids = Vec::new();
    for pr in procs {
        let ev = read_events(&p.path(pr["archive"].as_str().unwrap()));
        let init = ops(&ev, "nccl_comm_init");
        assert_eq!(init.len(), 1);
        assert_eq!(init[0]["nranks"], 2);
        assert_eq!(init[0]["rank"], pr["rank"]);
        uids.push(init[0]["uid"].clone());
    }
    assert_eq!(
        uids[0], uids[1],
        "the ranks' archives name one communicator"
    );

    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.job.json"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert_eq!(out.matches(": PASS").count(), 2, "{out}");

    p.tool("hrr-play")
        .args(["--backend", "cpu", "--no-job", "job.hrr"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "has 2 ranks, which meet only in a job replay",
        ));
}

/// Four ranks split into two pairs (and then into three of them, the
/// fourth passing `NCCL_SPLIT_NOCOLOR`): every rank's archive records its
/// splits, and the job replays them through the library's split, PASS.
#[test]
fn a_job_that_splits_its_communicator_replays_as_a_job() {
    let (p, job) = captured_job("nccl_split");
    let procs = job["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 4, "{job}");
    for pr in procs {
        let dir = p.path(pr["archive"].as_str().unwrap());
        let ev = read_events(&dir);
        let splits = ops(&ev, "nccl_comm_split");
        assert_eq!(splits.len(), 2, "{splits:?}");
        let rank = pr["rank"].as_i64().unwrap();
        assert_eq!(splits[0]["color"], rank % 2);
        assert_eq!(splits[0]["key"], -rank);
        assert!(splits[0]["comm"].is_string(), "{}", splits[0]);
        assert_eq!(splits[1]["comm"].is_null(), rank == 3, "{}", splits[1]);
        let init = &ops(&ev, "nccl_comm_init")[0];
        assert_eq!(splits[0]["parent"], init["comm"]);
        // The pair's collectives name the split's communicator.
        let on_pair = ops(&ev, "nccl_coll")
            .iter()
            .filter(|c| c["comm"] == splits[0]["comm"])
            .count();
        assert_eq!(on_pair, 2);
        let m: Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        assert!(
            m["unrecorded"].as_object().is_none_or(|u| u.is_empty()),
            "{}",
            m["unrecorded"]
        );
    }
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.job.json"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert_eq!(out.matches(": PASS").count(), 4, "{out}");
}

/// `ncclCommInitAll` over the CPU runtime's two devices, with an
/// all-reduce in a group whose result on each device is both devices'
/// data: recorded as one `nccl_comm_init_all` (nothing unrecorded) and
/// replayed through the library's own, PASS.
#[test]
fn init_all_over_two_devices_replays() {
    let p = Pipeline::new("nccl_split");
    let a = p
        .sh(&format!(
            "HRR_CPU_DEVICES=2 hrr-cap -o cap.hrr -- {} all | tee app.log",
            p.app_cmdline()
        ))
        .assert()
        .success()
        .stderr(predicate::str::contains("unrecorded : 0 calls"));
    let p = p.step(a);
    assert!(
        p.app_log().contains("nccl_split: all: OK"),
        "{}",
        p.app_log()
    );
    let ev = p.events("cap.hrr");
    let all = ops(&ev, "nccl_comm_init_all");
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["devices"], serde_json::json!([0, 1]));
    let comms = all[0]["comms"].as_array().unwrap();
    assert_eq!(comms.len(), 2);
    let colls = ops(&ev, "nccl_coll");
    assert_eq!(colls.len(), 2);
    assert_eq!(
        (&colls[0]["comm"], &colls[1]["comm"]),
        (&comms[0], &comms[1])
    );
    let a = p
        .play_cmd(&[])
        .env("HRR_CPU_DEVICES", "2")
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (pass, _, _, fail) = d2h_counts(&out).expect("a d2h line");
    assert_eq!((pass, fail), (2, 0), "{out}");
}

/// A window opened after a communicator and a split of it were made: its
/// preamble makes both again (`nccl_comm_init`, `nccl_comm_split`), so the
/// window's archive alone replays its collectives, PASS. Without them the
/// replay stops at the first collective: never created.
#[test]
fn a_window_rebuilds_the_communicators_live_at_its_start() {
    let p = Pipeline::new("nccl_split");
    let a = p
        .sh(&format!(
            "hrr-cap --window profiler -o cap.hrr -- {} window | tee app.log",
            p.app_cmdline()
        ))
        .assert()
        .success()
        .stderr(predicate::str::contains("not restored").not());
    let p = p.step(a);
    assert!(
        p.app_log().contains("nccl_split: window: OK"),
        "{}",
        p.app_log()
    );
    let ev = p.events("cap.hrr");
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["op"].as_str().unwrap().starts_with("nccl_"))
        .map(|e| e["op"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "nccl_comm_init",
            "nccl_comm_split",
            "nccl_coll",
            "nccl_coll"
        ],
        "the preamble's communicators, then the window's collectives"
    );
    let a = p
        .play_cmd(&[])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap());
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (pass, _, _, fail) = d2h_counts(&out).expect("a d2h line");
    assert_eq!((pass, fail), (2, 0), "{out}");

    // The same archive without the preamble's communicators.
    let text: String = hrr_tests::events_text(&p.cap())
        .lines()
        .filter(|l| {
            !l.contains(r#""op":"nccl_comm_init""#) && !l.contains(r#""op":"nccl_comm_split""#)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let _ = std::fs::remove_file(p.cap().join("events.ndjson.zst"));
    std::fs::write(p.cap().join("events.ndjson"), text).unwrap();
    p.play_cmd(&[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("was never created"));
}

/// NCCL reached only through a library the program loads with
/// `RTLD_LOCAL` (as Python loads PyTorch's extension, and with it
/// `libnccl.so.2`): the library's NCCL calls bind to the preloaded
/// interposer, whose wrappers must find the real definitions in that
/// library's local scope, out of `dlsym(RTLD_NEXT)`'s reach. Without that
/// the program's first NCCL call fails under capture.
#[test]
fn nccl_loaded_locally_by_a_library_is_found_and_recorded() {
    let p = Pipeline::new("local_collectives").arg("./liblocalcoll.so");
    let rt = hrr_tests::tools().cpu_runtime();
    let libdir = rt.parent().unwrap();
    let src = hrr_tests::workloads_src();
    let out = std::process::Command::new("gcc")
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            "-Wno-unused-function",
        ])
        .arg("-D__HIP_PLATFORM_AMD__")
        .arg("-I")
        .arg(&src)
        .arg("-I")
        .arg(src.join("include"))
        .arg(src.join("lib/local_collectives_lib.c"))
        .arg("-o")
        .arg(p.path("liblocalcoll.so"))
        .arg("-L")
        .arg(libdir)
        .args(["-lhrr_nccl_cpu", "-lhrr_hip_cpu"])
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = p.capture();
    assert!(
        p.app_log().contains("local_collectives: 256 elements: OK"),
        "{}",
        p.app_log()
    );
    let ev = p.events("cap.hrr");
    assert_eq!(ops(&ev, "nccl_comm_init").len(), 1);
    assert_eq!(ops(&ev, "nccl_coll").len(), 1);
    let p = p.play();
    let (pass, _, _, fail) = d2h_counts(&p.last_stdout()).expect("a d2h line");
    assert_eq!((pass, fail), (1, 0), "{}", p.last_stdout());
}
