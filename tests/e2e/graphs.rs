//! GPU graphs through the whole pipeline on the CPU runtime: a
//! stream-captured graph and a node-built one are recorded at
//! instantiation, launched (host data per launch), replayed as graphs or
//! node by node (`--no-graphs`), and diffed; a host node is reported.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_manifest};
use serde_json::Value;

fn ops<'a>(events: &'a [Value], op: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["op"] == op).collect()
}

/// The blob of node `node` in a graph_launch event.
fn node_blob(launch: &Value, node: u64) -> String {
    launch["blobs"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["node"] == node))
        .and_then(|b| b["blob"].as_str())
        .unwrap_or_else(|| panic!("no blob for node {node}: {launch}"))
        .to_string()
}

/// Plays the pipeline's capture with `extra` flags into `out`, then diffs
/// it against the capture: both PASS, `d2h` as expected.
fn play_and_diff(p: &Pipeline, extra: &[&str], out: &str, d2h: u64) {
    let mut args = vec!["-o", out];
    args.extend_from_slice(extra);
    let a = p.play_cmd(&args).assert().success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(stdout.lines().any(|l| l == "PASS"), "{stdout}");
    assert_eq!(
        d2h_counts(&stdout),
        Some((d2h, d2h, 0, 0)),
        "every graph d2h node checked exactly:\n{stdout}"
    );
    assert_no_crash("hrr-play", &String::from_utf8_lossy(&a.get_output().stderr));
    let d = p.tool("hrr-diff").args(["cap.hrr", out]).assert().success();
    let text = String::from_utf8_lossy(&d.get_output().stdout).into_owned();
    assert!(
        text.contains(&format!("d2h : {d2h} pass ({d2h} exact")) && text.ends_with("PASS\n"),
        "{text}"
    );
}

/// (a) A stream-captured graph (memset, H2D from a host buffer the
/// program changes between launches, a kernel, D2H) launched twice: the
/// captured work is not recorded as run; the topology is recorded once,
/// each launch with its own H2D source and D2H result; replay and diff
/// pass, through the graph API and node by node (c).
#[test]
fn captured_graph_replays_with_per_launch_host_data() {
    let p = Pipeline::new("graph_captured").capture();
    let log = p.app_log();
    assert!(log.contains("graph_captured: OK"), "{log}");
    let ev = p.events("cap.hrr");
    assert!(
        ops(&ev, "memcpy").is_empty()
            && ops(&ev, "memset").is_empty()
            && ops(&ev, "launch").is_empty(),
        "captured work is in the graph, not recorded as run: {ev:?}"
    );
    let exec = ops(&ev, "graph_exec");
    assert_eq!(exec.len(), 1, "{ev:?}");
    let kinds: Vec<&str> = exec[0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["memset", "memcpy", "kernel", "memcpy"]);
    let kernel = &exec[0]["nodes"][2];
    assert_eq!(kernel["name"], "saxpy");
    assert_eq!(kernel["deps"], serde_json::json!([1]));
    assert_eq!(
        kernel["args"][1]["ptrs"],
        serde_json::json!([0]),
        "{kernel}"
    );
    let launches = ops(&ev, "graph_launch");
    assert_eq!(launches.len(), 2);
    // The host buffer changed between the launches: so did both blobs.
    assert_ne!(node_blob(launches[0], 1), node_blob(launches[1], 1));
    assert_ne!(node_blob(launches[0], 3), node_blob(launches[1], 3));
    assert!(
        p.last_stderr().lines().any(|l| l == "unrecorded : 0 calls"),
        "{}",
        p.last_stderr()
    );
    play_and_diff(&p, &[], "replay.hrr", 2);
    play_and_diff(&p, &["--no-graphs"], "nodes.hrr", 2);
}

/// (b) A graph built node by node (memset, 1D copies, kernel with two
/// dependencies, a child graph, empty, event record and wait), launched,
/// its kernel node's argument changed on the executable graph, launched
/// again: two topologies recorded, replay and diff pass, both ways (c).
#[test]
fn node_built_graph_with_exec_update_replays() {
    let p = Pipeline::new("graph_nodes").capture();
    let log = p.app_log();
    assert!(log.contains("graph_nodes: OK"), "{log}");
    let ev = p.events("cap.hrr");
    let exec = ops(&ev, "graph_exec");
    assert_eq!(
        exec.iter()
            .map(|e| e["api"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "hipGraphInstantiateWithFlags",
            "hipGraphExecKernelNodeSetParams"
        ]
    );
    let kinds: Vec<&str> = exec[0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    // The child graph's copy is inlined before the child node, which
    // becomes an empty node depending on it.
    assert_eq!(
        kinds,
        [
            "memset",
            "memcpy",
            "kernel",
            "memcpy",
            "empty",
            "empty",
            "event_record",
            "event_wait"
        ]
    );
    assert_eq!(exec[0]["nodes"][2]["deps"], serde_json::json!([0, 1]));
    assert_eq!(exec[0]["nodes"][3]["dir"], "d2h");
    let a_arg = |e: &Value| {
        e["nodes"][2]["args"][0]["hex"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(a_arg(exec[0]), "00004040", "a = 3.0f");
    assert_eq!(
        a_arg(exec[1]),
        "000000bf",
        "a = -0.5f after the exec update"
    );
    assert_eq!(ops(&ev, "graph_launch").len(), 2);
    play_and_diff(&p, &[], "replay.hrr", 2);
    play_and_diff(&p, &["--no-graphs"], "nodes.hrr", 2);
}

/// (d) A graph with a host node: recorded in the topology as a `host` node
/// (its entry point is a graph-building call, not an unrecorded one), the
/// recorder says at instantiation that an empty node replays in its place,
/// replay warns and checks the rest.
#[test]
fn host_node_is_recorded_as_an_ordering_point() {
    let p = Pipeline::new("graph_host_node").capture();
    assert!(
        p.app_log().contains("graph_host_node: OK"),
        "{}",
        p.app_log()
    );
    let err = p.last_stderr();
    assert!(err.lines().any(|l| l == "unrecorded : 0 calls"), "{err}");
    assert!(
        err.contains("has 1 host node(s): host functions are not replayed"),
        "the recorder's log says so: {err}"
    );
    let m = read_manifest(&p.cap());
    assert!(m.get("unrecorded").is_none(), "{m}");
    let ev = p.events("cap.hrr");
    assert_eq!(ops(&ev, "graph_exec")[0]["nodes"][1]["kind"], "host");
    let a = p.play_cmd(&["-o", "replay.hrr"]).assert().success();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        stderr.contains("has a host node (node 1): host functions are not replayed"),
        "{stderr}"
    );
    // Nothing unrecorded: even --strict replays it.
    p.play_cmd(&["--strict"]).assert().success();
}

/// (e) Copy nodes naming arrays (host → array, array → array, an array
/// window → pitched host rows, array → device memory): recorded as
/// `memcpy_array` nodes, each launch with its own host source and results,
/// replayed (the CPU runtime runs array copy nodes) and diffed, through the
/// graph path and node by node.
#[test]
fn array_copy_nodes_replay() {
    let p = Pipeline::new("graph_array_copy").capture();
    assert!(
        p.app_log().contains("graph_array_copy: OK"),
        "{}",
        p.app_log()
    );
    let err = p.last_stderr();
    assert!(err.lines().any(|l| l == "unrecorded : 0 calls"), "{err}");
    assert!(!err.contains("not recorded"), "{err}");
    let ev = p.events("cap.hrr");
    let exec = ops(&ev, "graph_exec");
    let nodes = exec[0]["nodes"].as_array().unwrap();
    let kinds: Vec<&str> = nodes.iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "memcpy_array",
            "memcpy_array",
            "memcpy_array",
            "memcpy_array",
            "memcpy"
        ],
        "{exec:?}"
    );
    let dirs: Vec<&str> = nodes.iter().map(|n| n["dir"].as_str().unwrap()).collect();
    assert_eq!(dirs, ["h2d", "d2d", "d2h", "d2d", "d2h"]);
    // The window: 8 floats from x = 4 (bytes) of rows 2.., host rows 64
    // bytes apart.
    assert_eq!(
        nodes[2]["spos"],
        serde_json::json!([16, 2, 0]),
        "{}",
        nodes[2]
    );
    assert_eq!(
        nodes[2]["extent"],
        serde_json::json!([32, 4, 1]),
        "{}",
        nodes[2]
    );
    let launches = ops(&ev, "graph_launch");
    assert_eq!(launches.len(), 2);
    for node in [0, 2, 4] {
        assert_ne!(
            node_blob(launches[0], node),
            node_blob(launches[1], node),
            "node {node}: the host data changed between the launches"
        );
    }
    play_and_diff(&p, &[], "replay.hrr", 4);
    play_and_diff(&p, &["--no-graphs"], "nodes.hrr", 4);
}

/// (f) Host nodes that overwrite the device-to-host result they depend on
/// (one added with `hipGraphAddHostNode`, one captured from
/// `hipLaunchHostFunc`): the function runs through the graph trampoline,
/// which reads the copy's destination first; the recorded results are the
/// bytes the copies wrote, not the host functions' (replay runs no host
/// function), so replay and diff pass.
#[test]
fn host_node_overwriting_its_d2h_records_the_copied_bytes() {
    let p = Pipeline::new("graph_host_overwrite").capture();
    assert!(
        p.app_log().contains("graph_host_overwrite: OK"),
        "{}",
        p.app_log()
    );
    let err = p.last_stderr();
    assert!(err.lines().any(|l| l == "unrecorded : 0 calls"), "{err}");
    assert!(!err.contains("could not wrap"), "{err}");
    let ev = p.events("cap.hrr");
    let exec = ops(&ev, "graph_exec");
    assert_eq!(exec.len(), 2, "{exec:?}");
    for e in &exec {
        let kinds: Vec<&str> = e["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["memset", "memcpy", "host"], "{e}");
    }
    let launches = ops(&ev, "graph_launch");
    assert_eq!(launches.len(), 3);
    // The recorded bytes are the copies', read before the host functions ran.
    let cap = p.cap();
    let blob = |launch: &Value| hrr_tests::read_blob(&cap, &node_blob(launch, 1)).unwrap();
    for (launch, byte) in [
        (launches[0], 0x5a),
        (launches[1], 0x5a),
        (launches[2], 0x33),
    ] {
        let b = blob(launch);
        assert!(
            b.len() == 4096 && b.iter().all(|&x| x == byte),
            "{launch}: recorded {:x?}…, want {byte:#x}",
            &b[..8.min(b.len())]
        );
    }
    play_and_diff(&p, &[], "replay.hrr", 3);
    play_and_diff(&p, &["--no-graphs"], "nodes.hrr", 3);
}
