//! capture → play → diff for every workload, and what each capture must hold.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_blob, read_manifest, region_segs};
use serde_json::Value;

/// capture → (sidecar) → play → diff; returns the pipeline after diff and
/// hrr-play's stdout.
fn full(name: &str, args: &[&str], sidecar: bool) -> (Pipeline, String) {
    let mut p = Pipeline::new(name);
    for a in args {
        p = p.arg(a);
    }
    let p = p.capture();
    let log = p.app_log();
    assert!(
        log.contains(": OK"),
        "{name}: app stdout did not pass through hrr-cap | tee:\n{log}"
    );
    let m = read_manifest(&p.cap());
    assert_eq!(m["format"], "hrr");
    assert_eq!(m["version"], 2);
    assert_eq!(m["kind"], "capture");
    assert_eq!(m["platform"], "cpu");
    assert_eq!(
        m["complete"], true,
        "{name}: clean exit must finish the archive: {m}"
    );
    let events = p.events("cap.hrr");
    assert_eq!(
        events.last().map(|e| e["op"].clone()),
        Some(Value::from("eof")),
        "{name}: no eof trailer"
    );
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e["seq"].as_u64(),
            Some(i as u64),
            "{name}: seq not dense/ordered at line {i}: {e}"
        );
        for k in ["t", "tid", "api", "op", "ret"] {
            assert!(!e[k].is_null(), "{name}: event lacks {k}: {e}");
        }
    }
    let p = if sidecar { p.sidecar_from_log() } else { p };
    let p = p.play();
    let out = p.last_stdout();
    let (pass, exact, _tol, fail) =
        d2h_counts(&out).unwrap_or_else(|| panic!("{name}: no d2h line:\n{out}"));
    assert!(pass > 0 && fail == 0 && exact == pass, "{name}: {out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    let p = p.diff();
    assert_no_crash("hrr-diff", &p.last_stderr());
    (p, out)
}

fn ops<'a>(events: &'a [Value], op: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["op"] == op).collect()
}

fn apis(events: &[Value], api: &str) -> usize {
    events.iter().filter(|e| e["api"] == api).count()
}

#[test]
fn saxpy_module_pipeline() {
    let (p, _out) = full("saxpy_module", &[], false);
    let ev = p.events("cap.hrr");
    let launches = ops(&ev, "launch");
    assert_eq!(
        launches.len(),
        2,
        "kernelParams + extra launches: {launches:?}"
    );
    for l in &launches {
        assert_eq!(l["api"], "hipModuleLaunchKernel");
        assert_eq!(l["name"], "saxpy");
        // a, x, y, n: x and y are device pointers
        let args = l["args"].as_array().unwrap();
        let ptr_args: usize = args
            .iter()
            .map(|a| a["ptrs"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(ptr_args, 2, "two device pointers in saxpy's args: {l}");
    }
    assert_eq!(ops(&ev, "module_load").len(), 1);
    assert_eq!(apis(&ev, "hipModuleLoadData"), 1);
    let d2h: Vec<_> = ops(&ev, "memcpy")
        .into_iter()
        .filter(|e| e["dir"] == "d2h")
        .collect();
    assert_eq!(d2h.len(), 2);
    assert!(
        d2h.iter().all(|e| e["blob"].is_string()),
        "D2H results are blobs: {d2h:?}"
    );
    let out = std::fs::read_to_string(p.path("app.log")).unwrap();
    assert!(out.contains("saxpy kernelParams") && out.contains("saxpy extra"));
}

/// Launches repeating the previous one, each phase changing one input
/// (`launch_memo`): every launch is recorded, each line as the encoder
/// writes it, and the replay computes what the application did (the D2H
/// checks of `full`).
#[test]
fn launch_repeat_pipeline() {
    let (p, _out) = full("launch_repeat", &[], false);
    let log = p.app_log();
    let n: usize = log
        .lines()
        .find_map(|l| {
            l.strip_prefix("launch_repeat: ")?
                .strip_suffix(" launches: OK")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no launch count in:\n{log}"));
    let ev = p.events("cap.hrr");
    let launches = ops(&ev, "launch");
    assert_eq!(launches.len(), n, "one launch event per launch");
    let d2h = ev.iter().filter(|e| e["dir"] == "d2h").count();
    assert_eq!(d2h, 10, "one D2H per checked phase");
    // Kept lines are the lines the encoder writes: the buffer argument is a
    // pointer each time, and `tagged`'s address word only while it is live.
    let mut tag_ptrs = vec![];
    for l in &launches {
        let args = l["args"].as_array().unwrap();
        assert_eq!(args[0]["ptrs"], serde_json::json!([0]), "{l}");
        match l["name"].as_str().unwrap() {
            "add" | "mul" => assert_eq!(args.len(), 2, "{l}"),
            "tagged" => tag_ptrs.push(args[2]["ptrs"].clone()),
            other => panic!("unexpected kernel {other}: {l}"),
        }
    }
    let (live, freed) = (serde_json::json!([0]), serde_json::json!([]));
    assert_eq!(
        tag_ptrs,
        [
            live.clone(),
            live.clone(),
            live,
            freed.clone(),
            freed.clone(),
            freed
        ]
    );
}

#[test]
fn fatbin_heap_pipeline() {
    // The bundle's blob is written from the program's memory after its
    // first launch; the program scribbles over that memory and frees it
    // right after unregistering. The archive must hold the bundle as
    // launched, and replay from it.
    let (p, _out) = full("fatbin_heap", &[], false);
    let ev = p.events("cap.hrr");
    let launches = ops(&ev, "launch");
    assert_eq!(launches.len(), 1, "{launches:?}");
    let code = launches[0]["code"].as_str().expect("launch names its code");
    let blob = read_blob(&p.cap(), code).expect("the code blob is on disk");
    assert!(
        blob == hrr_tests::workloads().bundle(),
        "the code blob ({} bytes) is not the bundle as launched",
        blob.len()
    );
}

/// hrr-cap's exit status when the application succeeded but the archive's
/// blobs are not what their names say (`hrr-cap --help`).
const EXIT_ARCHIVE_BAD: i32 = 74;

#[test]
fn a_bundle_rewritten_while_registered_is_reported_not_written() {
    // The program rewrites its registered bundle right after the launch
    // that hashed it, before the capture library's writer could write the
    // blob (fatbin_heap.c holds the writer back: at SCHED_IDLE on the
    // program's CPU it still gets a scheduler tick now and then, and may
    // write the true bytes first). The archive must never hold other bytes
    // under the bundle's name; when the rewrite came first, hrr-cap must say
    // so. Tried until the rewrite comes first.
    for _ in 0..10 {
        let p = Pipeline::new("fatbin_heap").arg("rewrite");
        let out = p.capture_assert().get_output().clone();
        let (stderr, log) = (String::from_utf8_lossy(&out.stderr), p.app_log());
        assert!(
            log.contains("writer thread held back") && log.contains(": OK"),
            "{log}"
        );
        let ev = p.events("cap.hrr");
        let launches = ops(&ev, "launch");
        assert_eq!(launches.len(), 1, "{launches:?}");
        let code = launches[0]["code"].as_str().expect("launch names its code");
        let m = read_manifest(&p.cap());
        // Whatever is on disk under the name is the named bytes.
        if let Ok(bytes) = read_blob(&p.cap(), code) {
            assert_eq!(
                blake3::hash(&bytes).to_hex().as_str(),
                code,
                "a blob file that is not what its name says; hrr-cap exited {:?}, \
                 complete:{}",
                out.status.code(),
                m["complete"]
            );
            // The writer came first: an ordinary capture. Again.
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            assert_eq!(m["complete"], true, "{m}");
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(EXIT_ARCHIVE_BAD),
            "the application succeeded, the archive did not:\n{stderr}"
        );
        let seq = launches[0]["seq"].as_u64().unwrap();
        let named = format!("blob {code}");
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("hrr-intercept: ") && l.contains(&named)),
            "the capture library names the blob it could not write:\n{stderr}"
        );
        assert!(
            stderr.lines().any(|l| l.starts_with("hrr-cap: ")
                && l.contains(&named)
                && l.contains(&format!("event {seq} (hipLaunchKernel)"))),
            "hrr-cap names the blob and the event using it:\n{stderr}"
        );
        assert_eq!(m["complete"], false, "{m}");
        let why = m["incomplete"].as_str().unwrap_or_default();
        assert!(why.contains(code) && why.contains("changed"), "{m}");
        // Replay cannot pass without the code it would run.
        let played = p.play_cmd(&["-o", "replay.hrr"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&played.stdout);
        assert!(
            !played.status.success() && !stdout.lines().any(|l| l == "PASS"),
            "hrr-play passed an archive without its code object:\n{stdout}"
        );
        return;
    }
    panic!("the writer thread wrote the bundle before the rewrite 10 times out of 10");
}

#[test]
fn an_ordinary_capture_keeps_the_applications_status_and_completes() {
    let p = Pipeline::new("fatbin_heap").arg("exit=3");
    let out = p.capture_assert().get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(p.app_log().contains(": OK"), "{}", p.app_log());
    assert_eq!(
        out.status.code(),
        Some(3),
        "the application's own:\n{stderr}"
    );
    let m = read_manifest(&p.cap());
    assert_eq!(m["complete"], true, "{m}");
    assert!(m.get("incomplete").is_none(), "{m}");
    assert!(!stderr.contains("hrr-cap: error"), "{stderr}");
}

#[test]
fn fatbin_path_pipeline() {
    let (p, _out) = full("fatbin_path", &[], false);
    let ev = p.events("cap.hrr");
    let launches = ops(&ev, "launch");
    let names: Vec<_> = launches
        .iter()
        .map(|l| l["name"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        names,
        [
            "vadd", "scale", "scale", "scale", "scale", "scale", "scale", "scale", "scale"
        ],
        "compiler-path launches by device name"
    );
    assert!(
        launches.iter().all(|l| l["api"] == "hipLaunchKernel"),
        "{launches:?}"
    );
    assert!(
        launches.iter().all(|l| l["code"].is_string()),
        "launch names its code object: {launches:?}"
    );
    assert!(
        launches
            .iter()
            .all(|l| l["grid"] == serde_json::json!([12, 1, 1]))
    );
    // The code object blob is the CPU .so out of the bundle, or the bundle itself.
    let code = launches[0]["code"].as_str().unwrap();
    let bytes = read_blob(&p.cap(), code).unwrap_or_else(|e| panic!("blob {code}: {e}"));
    assert!(bytes.starts_with(b"\x7fELF") || bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
}

/// A thread's repeated launches read back by another thread after a
/// hand-over: the read-back follows every one of those launches in the
/// archive (the capture defers repeated launches and writes them before
/// any later event of any thread), so its replay reads what the
/// application read.
#[test]
fn launch_handoff_pipeline() {
    let (p, _out) = full("launch_handoff", &[], false);
    let ev = p.events("cap.hrr");
    let (rounds, each) = (6, 3000);
    assert_eq!(ops(&ev, "launch").len(), rounds * each);
    let d2h: Vec<usize> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| e["dir"] == "d2h")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(d2h.len(), rounds);
    for (r, &at) in d2h.iter().enumerate() {
        let before = ev[..at].iter().filter(|e| e["op"] == "launch").count();
        assert_eq!(before, (r + 1) * each, "launches before read-back {r}");
    }
}

#[test]
fn streams_threads_pipeline() {
    let (p, _out) = full("streams_threads", &[], false);
    let ev = p.events("cap.hrr");
    let tids: std::collections::BTreeSet<_> = ev.iter().map(|e| e["tid"].to_string()).collect();
    assert!(
        tids.len() >= 5,
        "main + 4 worker threads recorded, got tids {tids:?}"
    );
    assert_eq!(ops(&ev, "launch").len(), 4 * 3);
    assert_eq!(ops(&ev, "stream_create").len(), 8);
    assert!(
        apis(&ev, "hipStreamWaitEvent") >= 12,
        "hipStreamWaitEvent recorded"
    );
    assert!(apis(&ev, "hipEventRecord") >= 36, "hipEventRecord recorded");
    let async_d2h: Vec<_> = ev
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["api"] == "hipMemcpyAsync")
        .collect();
    assert_eq!(async_d2h.len(), 12);
    assert!(
        async_d2h
            .iter()
            .all(|e| e["stream"].is_string() && e["stream"] != "0x0" && e["blob"].is_string())
    );
    let pinned = ev
        .iter()
        .filter(|e| e["op"] == "alloc" && e["mem"] == "pinned")
        .count();
    assert_eq!(pinned, 8, "hipHostMalloc buffers are pinned allocations");
}

#[test]
fn pool_interior_pipeline() {
    let (p, out) = full("pool_interior", &[], false);
    let ev = p.events("cap.hrr");
    let allocs: Vec<_> = ops(&ev, "alloc");
    assert_eq!(allocs.len(), 1, "one hipMalloc pool: {allocs:?}");
    let base = u64::from_str_radix(
        allocs[0]["ptr"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    let size = allocs[0]["size"].as_u64().unwrap();
    let hex =
        |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let inside = |a: u64| a > base && a < base + size;
    for e in ops(&ev, "memcpy") {
        let dev = match e["dir"].as_str().unwrap() {
            "h2d" => vec![hex(&e["dst"])],
            "d2h" => vec![hex(&e["src"])],
            "d2d" => vec![hex(&e["dst"]), hex(&e["src"])],
            d => panic!("unexpected dir {d}"),
        };
        assert!(
            dev.into_iter().all(inside),
            "every copy uses an interior pointer: {e}"
        );
    }
    assert_eq!(ops(&ev, "memset").len(), 3);
    assert_eq!(region_segs(&out), Some(0), "{out}");
}

#[test]
fn struct_arg_pipeline() {
    let (p, _out) = full("struct_arg", &[], false);
    let ev = p.events("cap.hrr");
    let l = ops(&ev, "launch");
    assert_eq!(l.len(), 1);
    let args = l[0]["args"].as_array().unwrap();
    assert_eq!(args.len(), 2, "struct + n: {}", l[0]);
    assert_eq!(
        args[0]["size"], 24,
        "struct {{x, y, a}} is 24 bytes: {}",
        l[0]
    );
    assert_eq!(
        args[0]["ptrs"],
        serde_json::json!([0, 8]),
        "both device pointers inside the by-value struct are found: {}",
        l[0]
    );
    assert_eq!(
        args[1]["ptrs"],
        serde_json::json!([]),
        "n is no pointer: {}",
        l[0]
    );
}

#[test]
fn hidden_segment_pipeline() {
    let (_p, out) = full("hidden_segment", &[], true);
    assert_eq!(region_segs(&out), Some(1), "{out}");
}

#[test]
fn seed_variant_hostdst_pipeline() {
    // (c) as an application: the D2H's host destination is declared as a segment.
    let (_p, out) = full("seed_variants", &["hostdst"], true);
    assert!(
        out.contains("regions : 1 records from 1 stream(s)"),
        "{out}"
    );
    assert_eq!(
        region_segs(&out),
        Some(0),
        "a host operand must never be materialised:\n{out}"
    );
}

#[test]
fn seed_variant_d2d_pipeline() {
    // (d) as an application: memset into a hidden segment, D2D from a hidden source.
    let (_p, out) = full("seed_variants", &["d2d"], true);
    assert_eq!(region_segs(&out), Some(2), "{out}");
}

#[test]
fn seed_variant_kernel_pipeline() {
    // (e) as an application: a kernel pointer argument and a pointer inside a
    // by-value struct argument, both first touches of hidden segments.
    let (_p, out) = full("seed_variants", &["kernel"], true);
    assert_eq!(region_segs(&out), Some(2), "{out}");
}

#[test]
fn hrr_cap_exits_with_the_apps_status() {
    let p = Pipeline::empty("cap_status");
    p.tool("hrr-cap")
        .args(["-o", "cap.hrr", "--", "sh", "-c", "exit 7"])
        .assert()
        .code(7);
    let a = p
        .tool("hrr-cap")
        .args(["-o", "cap2.hrr", "--", "sh", "-c", "kill -TERM $$"])
        .assert()
        .code(128 + 15);
    assert_no_crash("hrr-cap", &String::from_utf8_lossy(&a.get_output().stderr));
}

#[test]
fn hrr_cap_missing_app_is_a_clear_error() {
    let p = Pipeline::empty("cap_missing");
    let a = p
        .tool("hrr-cap")
        .args(["-o", "cap.hrr", "--", "./no-such-app"])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("no-such-app"), "names the missing app:\n{err}");
    assert_no_crash("hrr-cap", &err);
}
