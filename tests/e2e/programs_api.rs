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
