//! The API real programs use beyond allocations, copies and launches:
//! virtual-memory handles retained, exported and imported (NCCL), host
//! functions and stream callbacks (JAX, NVIDIA's samples), peer copies.
//! Each workload runs on the CPU runtime through hrr-cap, hrr-play and
//! hrr-diff; the calls are recorded (none in the `unrecorded` line) and the
//! replay passes.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts};
use serde_json::Value;

/// The events of `api`, each of which must be a successful `op`.
fn recorded(ev: &[Value], api: &str, op: &str) -> Vec<Value> {
    let e: Vec<Value> = ev.iter().filter(|e| e["api"] == api).cloned().collect();
    assert!(
        !e.is_empty() && e.iter().all(|e| e["op"] == op && e["ret"] == 0),
        "{api} recorded as successful {op}: {e:?}"
    );
    e
}

/// Captures `workload`, checks that it printed `NAME: OK` and that hrr-cap
/// counted no unrecorded call, replays and diffs it; the replay's D2H
/// results must all pass.
fn pipeline(workload: &str) -> Pipeline {
    let p = Pipeline::new(workload).capture();
    let ok = format!("{workload}: OK");
    assert!(p.app_log().contains(&ok), "{}", p.app_log());
    let err = p.last_stderr();
    assert!(
        err.lines().any(|l| l == "unrecorded : 0 calls"),
        "hrr-cap counts no unrecorded call:\n{err}"
    );
    let p = p.play();
    let out = p.last_stdout();
    assert!(out.contains("unrecorded : 0 calls"), "{out}");
    let (pass, _, _, fail) = d2h_counts(&out).expect("a d2h line");
    assert!(pass > 0 && fail == 0, "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    p.diff()
}

/// NCCL's frees retain the handle of the pointer they free and release it
/// twice; an exported handle imported again is the same memory. Replay
/// counts each handle's references as the runtime does (a second release
/// of a handle replay made once stopped the replay before), and maps the
/// imported handle onto the exported allocation (a write through one
/// mapping is read back through the other).
#[test]
fn retained_exported_and_imported_vmm_handles_replay() {
    let p = pipeline("vmm_handles");
    let ev = p.events("cap.hrr");
    let retains = recorded(&ev, "hipMemRetainAllocationHandle", "mem_retain");
    assert_eq!(retains.len(), 3);
    let created = recorded(&ev, "hipMemCreate", "mem_create");
    assert_eq!(retains[0]["handle"], created[0]["handle"]);
    let export = recorded(&ev, "hipMemExportToShareableHandle", "mem_export");
    let import = recorded(&ev, "hipMemImportFromShareableHandle", "mem_import");
    assert_eq!(export[0]["shareable"], import[0]["shareable"]);
    assert_eq!(recorded(&ev, "hipMemRelease", "mem_release").len(), 5);
    // Queries stay queries.
    assert!(
        !ev.iter()
            .any(|e| e["api"] == "hipMemGetAllocationPropertiesFromHandle"
                || e["api"] == "hipMemGetAddressRange"),
        "queries are not events"
    );
}

/// A stream callback (or a host function, `hipLaunchHostFunc`) writes mapped
/// pinned memory that the next kernel on its stream reads. The callback is
/// recorded as `host_func` (replay puts a no-op in its place), and the launch's snapshot of host memory waits for
/// the callback enqueued before it, so the bytes it wrote travel as a
/// `host_write` before the launch: replay reads what the kernel read.
/// Without the wait the snapshot is taken while the stream is still busy
/// and replay reads the previous round's bytes.
#[test]
fn a_stream_callback_writing_pinned_memory_replays() {
    let p = pipeline("host_funcs");
    let ev = p.events("cap.hrr");
    let funcs = recorded(&ev, "hipStreamAddCallback", "host_func");
    assert_eq!(funcs.len(), 3);
    let host_fns = recorded(&ev, "hipLaunchHostFunc", "host_func");
    assert_eq!(host_fns.len(), 1);
    let creates = recorded(&ev, "hipStreamCreate", "stream_create");
    assert_eq!(funcs[0]["stream"], creates[0]["stream"]);
    assert_eq!(host_fns[0]["stream"], creates[0]["stream"]);
    // Each round's callback bytes precede that round's launch.
    let ops: Vec<&str> = ev.iter().filter_map(|e| e["op"].as_str()).collect();
    let mut rounds = 0;
    for (i, op) in ops.iter().enumerate() {
        if *op == "launch" {
            assert!(ops[..i].contains(&"host_write"), "{ops:?}");
            assert_eq!(ops[i - 1], "host_write", "{ops:?}");
            rounds += 1;
        }
    }
    assert_eq!(rounds, 4);
}

/// Graph host nodes are recorded in their graph's topology (`host`),
/// `hipGraphAddHostNode` is a graph-building call like the others, not an
/// unrecorded one.
#[test]
fn graph_host_nodes_are_not_unrecorded() {
    let p = Pipeline::new("graph_host_node").capture();
    let err = p.last_stderr();
    assert!(err.lines().any(|l| l == "unrecorded : 0 calls"), "{err}");
    let ev = p.events("cap.hrr");
    let exec: Vec<&Value> = ev.iter().filter(|e| e["op"] == "graph_exec").collect();
    assert_eq!(exec[0]["nodes"][1]["kind"], "host");
    p.play();
}

/// Peer copies on one device are device-to-device copies, recorded as
/// `memcpy_peer` with both devices (for a replay over several devices
/// later); enabling peer access is recorded too (here refused: a device is
/// not its own peer, and replay skips a failed call).
#[test]
fn peer_copies_replay_as_device_copies() {
    let p = pipeline("peer_copies");
    let ev = p.events("cap.hrr");
    let sync = recorded(&ev, "hipMemcpyPeer", "memcpy_peer");
    assert_eq!(
        (
            sync[0]["dst_device"].as_i64(),
            sync[0]["src_device"].as_i64()
        ),
        (Some(0), Some(0))
    );
    assert!(sync[0].get("stream").is_none());
    let on_stream = recorded(&ev, "hipMemcpyPeerAsync", "memcpy_peer");
    assert!(on_stream[0]["stream"].is_string());
    let enable: Vec<&Value> = ev
        .iter()
        .filter(|e| e["api"] == "hipDeviceEnablePeerAccess")
        .collect();
    assert_eq!(enable.len(), 1);
    assert_eq!(
        (&enable[0]["op"], enable[0]["ret"].as_i64()),
        (&Value::from("peer_access"), Some(101))
    );
}
