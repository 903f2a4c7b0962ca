//! The CUDA driver layer, end to end without a GPU: programs on a stand-in
//! `libcuda.so.1` and `libcudart.so.13` (`tests/c/fake_cuda`, host memory
//! for device memory) under the real `hrr-cap`, their archives read back.
//! What is proven here is the routing (exports, `dlsym`, `cuGetProcAddress`),
//! the one-event-per-effect rule and the events' contents; the real driver's
//! answers are the H200 pass's business.

use crate::harness::{
    Captured, capture_cuda, capture_with, cuda_program, fake_cuda, printed_addrs, text,
};
use hrr_core::graph::{GraphNode, NodeBlob, NodeOp};
use hrr_core::manifest::Platform;
use hrr_core::{Addr, Dir, MemKind, Op};

fn f32s(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn apis(c: &Captured) -> Vec<(&str, &str)> {
    c.events
        .iter()
        .filter(|e| !matches!(e.op, Op::Eof { .. }))
        .map(|e| (e.api.as_str(), e.op.name()))
        .collect()
}

#[test]
fn a_program_linked_with_libcuda_is_recorded_at_the_driver_layer() {
    let (_t, c) = captured_ok("driver_linked", &["cuda"]);
    assert_eq!(c.manifest.platform, Platform::Nvidia);
    assert_eq!(
        apis(&c),
        [
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemcpyHtoD_v2", "memcpy"),
            ("cuMemsetD32_v2", "memset"),
            ("cuModuleLoadData", "module_load"),
            ("cuModuleGetFunction", "function"),
            ("cuLaunchKernel", "launch"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuMemFree_v2", "free"),
        ]
    );
    let d = match c.events[0].op {
        Op::Alloc {
            ptr,
            size: 256,
            mem: MemKind::Device,
        } => ptr.0,
        ref o => panic!("{o:?}"),
    };
    let Op::Memcpy {
        dir: Dir::H2d,
        dst,
        blob: Some(up),
        ..
    } = c.events[1].op
    else {
        panic!("{:?}", c.events[1])
    };
    assert_eq!((dst.0, c.blob(&up)), (d, f32s([-1.0; 64])));
    assert_eq!(
        c.events[2].op,
        Op::Memset {
            dst: Addr(d + 240),
            value: 0x7fc0_0000,
            size: 16,
            width: 4,
            stream: None
        }
    );
    // The PTX, though the program overwrote and freed its buffer after the load.
    let Op::ModuleLoad { code, module } = c.events[3].op else {
        panic!("{:?}", c.events[3])
    };
    let ptx = c.blob(&code);
    assert!(
        ptx.starts_with(b".version 8.0") && ptx.ends_with(b"ret;\n}\n"),
        "{}",
        text(&ptx)
    );
    let Op::Launch {
        ref name,
        code: lc,
        ref args,
        func,
        ..
    } = c.events[5].op
    else {
        panic!("{:?}", c.events[5])
    };
    assert_eq!((name.as_str(), lc), ("iota", code));
    assert!(
        matches!(c.events[4].op, Op::Function { module: m, ref name, func: f } if m == module && name == "iota" && Some(f) == func)
    );
    let shape: Vec<_> = args
        .iter()
        .map(|a| (a.offset, a.size, a.ptrs.clone()))
        .collect();
    assert_eq!(
        shape,
        [(Some(0), 8, vec![0]), (Some(8), 4, vec![])],
        "layout from cuFuncGetParamInfo"
    );
    assert_eq!(args[0].hex.0, d.to_le_bytes());
    assert_eq!(args[1].hex.0, 60i32.to_le_bytes());
    let Op::Memcpy {
        dir: Dir::D2h,
        blob: Some(down),
        ..
    } = c.events[6].op
    else {
        panic!("{:?}", c.events[6])
    };
    let mut want = f32s((0..60).map(|i| i as f32));
    want.extend(f32s([f32::from_bits(0x7fc0_0000); 4]));
    assert_eq!(c.blob(&down), want);
}

/// Launches whose arguments come packed in `extra`, repeated with the count
/// and then the buffer changing: the recorder repeats a kept line only
/// while the packed bytes are the same, so every event holds its own
/// launch's pointer and count.
#[test]
fn repeated_packed_launches_record_their_own_arguments() {
    let (_t, c, stdout) = captured_ok_out("driver_packed", &["cuda"]);
    let want: Vec<(u64, i32)> = stdout
        .lines()
        .filter_map(|l| {
            let (p, n) = l.strip_prefix("launch 0x")?.split_once(' ')?;
            Some((u64::from_str_radix(p, 16).ok()?, n.parse().ok()?))
        })
        .collect();
    assert_eq!(want.len(), 13, "{stdout}");
    let got: Vec<(u64, i32)> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::Launch { args, .. } => {
                let word = |i: usize, n: usize| {
                    let mut b = [0u8; 8];
                    b[..n].copy_from_slice(&args[i].hex.0[..n]);
                    u64::from_le_bytes(b)
                };
                assert_eq!(
                    args.len(),
                    2,
                    "the packed buffer split by the layout: {args:?}"
                );
                assert_eq!(args[0].ptrs, [0], "the buffer pointer marked");
                Some((word(0, 8), word(1, 4) as i32))
            }
            _ => None,
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn lookups_hand_out_wrappers_of_the_drivers_variant_real_queries_and_counting_stubs() {
    let app = cuda_program("driver_lookup", &[]);
    // Without capture, everything comes from the stand-in driver.
    let plain = std::process::Command::new(&app)
        .env("LD_LIBRARY_PATH", fake_cuda())
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    let plain = text(&plain.stdout);
    assert!(
        plain.contains("first=libcuda.so.1 gpa=libcuda.so.1 v1=libcuda.so.1")
            && plain.contains("peer=libcuda.so.1"),
        "{plain}"
    );
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("l.hrr");
    let out = capture_cuda(&dir, &app, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    // dlsym(handle, "cuGetProcAddress_v2") and cuGetProcAddress for itself
    // (v1 and _v2 by version) give the wrappers; a query stays the
    // driver's; a function with effects and no wrapper gets a stub.
    let lib = "libhrr_intercept.so";
    assert!(
        stdout.contains(&format!("first={lib} gpa={lib} v1={lib}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "alloc={lib} h2d={lib} d2h={lib} count=libcuda.so.1 peer={lib}"
        )),
        "{stdout}"
    );
    // The stand-in driver has two devices.
    assert!(stdout.contains("next_ok=1 devices=2"), "{stdout}");
    let c = Captured::open(&dir);
    // cuMemAlloc was answered with cuMemAlloc_v2, cuMemcpyHtoD with the
    // per-thread variant: each recorded under the variant's name.
    assert_eq!(
        apis(&c),
        [
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemcpyHtoD_v2_ptds", "memcpy"),
            ("cuMemcpyDtoH_v2", "memcpy"),
        ]
    );
    let up: Vec<u8> = (0..32u8).map(|i| 3 * i + 1).collect();
    for e in &c.events[1..3] {
        let Op::Memcpy { blob: Some(b), .. } = e.op else {
            panic!("{e:?}")
        };
        assert_eq!(c.blob(&b), up, "{e:?}");
    }
    assert_eq!(
        c.manifest.unrecorded,
        [("cuMemcpy3DPeer".to_string(), 2)].into_iter().collect()
    );
    assert!(
        text(&out.stderr).contains("\nunrecorded : 2 calls (cuMemcpy3DPeer ×2)\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_runtime_call_is_one_event_whatever_the_driver_calls_under_it() {
    let (_t, c) = captured_ok("runtime_nested", &["cudart"]);
    // The stand-in runtime's cudaMalloc calls cuMemAlloc_v2 and its
    // cudaMemcpy the copies, all through cuGetProcAddress (wrappers):
    // the runtime's events stand for them.
    assert_eq!(
        apis(&c),
        [
            ("cudaMalloc", "alloc"),
            ("cudaMemcpy", "memcpy"),
            ("cudaMemcpy", "memcpy"),
        ]
    );
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
}

#[test]
fn with_the_driver_layer_off_driver_calls_are_not_recorded() {
    let app = cuda_program("driver_linked", &["cuda"]);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("off.hrr");
    let out = capture_with(
        &dir,
        &app,
        &[],
        &[
            ("LD_LIBRARY_PATH", fake_cuda().as_os_str()),
            ("HRR_CUDA_DRIVER_LAYER", "off".as_ref()),
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(text(&out.stdout).contains("driver_linked: OK"));
    assert!(!dir.exists(), "nothing recorded");
    assert!(
        err.contains("(nothing recorded: the app loaded the CUDA driver ")
            && err.contains("libcuda.so.1 but made no CUDA call the capture library records"),
        "{err}"
    );
}

#[test]
fn virtual_memory_globals_launch_attributes_and_counted_calls() {
    let (_t, c, stdout) = captured_ok_out("driver_more", &["cuda"]);
    // Host functions run through the capture library's trampoline (so that
    // a later launch waits for what they write), with the program's data.
    assert!(
        stdout.contains("driver_more: host function wrapped"),
        "{stdout}"
    );
    assert_eq!(
        apis(&c),
        [
            ("cuMemAddressReserve", "va_reserve"),
            ("cuMemCreate", "mem_create"),
            ("cuMemMap", "mem_map"),
            ("cuMemCreate", "mem_create"),
            ("cuMemMap", "mem_map"),
            ("cuMemSetAccess", "mem_access"),
            ("cuMemcpyHtoD_v2", "memcpy"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuModuleGetGlobal_v2", "global"),
            ("cuMemcpyHtoD_v2", "memcpy"),
            ("cuModuleGetFunction", "function"),
            ("cuLaunchKernelEx", "launch"),
            ("cuLaunchHostFunc", "host_func"),
            ("cuLaunchHostFunc", "host_func"),
            ("cuMemUnmap", "mem_unmap"),
            ("cuMemRelease", "mem_release"),
            ("cuMemRelease", "mem_release"),
            ("cuMemAddressFree", "va_free"),
        ],
        "the PTX lies in the program's image: no module_load of its own"
    );
    const MIB: u64 = 1 << 20;
    let Op::VaReserve { ptr: va, size } = c.events[0].op else {
        panic!("{:?}", c.events[0])
    };
    assert_eq!(size, 8 * MIB);
    let Op::MemCreate { handle, size, mem } = c.events[1].op else {
        panic!("{:?}", c.events[1])
    };
    assert_eq!((size, mem), (2 * MIB, MemKind::Device));
    assert_eq!(
        c.events[2].op,
        Op::MemMap {
            ptr: va,
            size: 2 * MIB,
            offset: 0,
            handle
        }
    );
    let Op::Memcpy {
        dst,
        size,
        blob: Some(up),
        ..
    } = c.events[6].op
    else {
        panic!("{:?}", c.events[6])
    };
    assert_eq!((dst.0, size), (va.0 + 2 * MIB - MIB / 2, MIB));
    let want: Vec<u8> = (0..MIB as u32).map(|i| (i * 7 + 1) as u8).collect();
    assert_eq!(c.blob(&up), want);
    // The global carries its module's code (written then, though lazy).
    let Op::Global {
        ref name,
        code,
        size,
        ptr,
        ..
    } = c.events[8].op
    else {
        panic!("{:?}", c.events[8])
    };
    assert_eq!((name.as_str(), size), ("table", 256));
    assert!(c.blob(&code).starts_with(b".version 8.0"));
    assert!(matches!(c.events[9].op, Op::Memcpy { dst, .. } if dst == ptr));
    let Op::Launch {
        ref attrs,
        ref args,
        code: lc,
        ..
    } = c.events[11].op
    else {
        panic!("{:?}", c.events[11])
    };
    assert_eq!(lc, code, "the launch's code is the same blob");
    assert_eq!(attrs.len(), 1);
    assert_eq!(attrs[0].id, 4);
    assert_eq!(&attrs[0].hex.0[..12], &[2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(attrs[0].hex.0.len(), 64);
    assert_eq!(
        args[0].ptrs,
        vec![0],
        "a pointer into the reservation is a pointer"
    );
    assert!(
        c.manifest.unrecorded.is_empty(),
        "host functions are recorded: {:?}",
        c.manifest.unrecorded
    );
}

/// The kernel node `iota(out, n)` of a `graph_exec`, checked: `out` is
/// `d` (a pointer) and `n` its second argument.
fn iota_node(n: &GraphNode, d: u64, want_n: i32) {
    let NodeOp::Kernel {
        ref name, ref args, ..
    } = n.op
    else {
        panic!("{n:?}")
    };
    assert_eq!(name, "iota");
    assert_eq!(
        (args[0].hex.0.clone(), args[0].ptrs.clone()),
        (d.to_le_bytes().to_vec(), vec![0])
    );
    assert_eq!(args[1].hex.0, want_n.to_le_bytes());
}

/// Captures the stand-in CUDA program `name` (linked with `libs`), which
/// must exit 0 and print `NAME: OK`, and opens its archive (kept in the
/// returned directory).
fn captured_ok(name: &str, libs: &[&str]) -> (tempfile::TempDir, Captured) {
    let (t, c, _) = captured_ok_out(name, libs);
    (t, c)
}

/// [`captured_ok`], with the program's standard output.
fn captured_ok_out(name: &str, libs: &[&str]) -> (tempfile::TempDir, Captured, String) {
    let app = cuda_program(name, libs);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("c.hrr");
    let out = capture_cuda(&dir, &app, &[]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{name}: OK")),
        "{stdout}{}",
        text(&out.stderr)
    );
    let c = Captured::open(&dir);
    (t, c, stdout)
}

#[test]
fn graphs_are_recorded_at_instantiation_and_launch_not_as_captured_work() {
    let (_t, c) = captured_ok("graph_driver", &["cuda"]);
    assert_eq!(
        apis(&c),
        [
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemAlloc_v2", "alloc"),
            ("cuModuleGetFunction", "function"),
            // The capture itself records nothing.
            ("cuGraphInstantiateWithFlags", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuGraphExecDestroy", "graph_exec_destroy"),
            ("cuGraphInstantiateWithFlags", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuGraphExecKernelNodeSetParams_v2", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuGraphExecDestroy", "graph_exec_destroy"),
        ]
    );
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    let (d, z) = match (&c.events[0].op, &c.events[1].op) {
        (Op::Alloc { ptr: d, .. }, Op::Alloc { ptr: z, .. }) => (d.0, z.0),
        o => panic!("{o:?}"),
    };

    // The captured graph: H2D from the host buffer, the kernel, the memset,
    // D2H into host memory, each depending on the one before.
    let Op::GraphExec {
        exec,
        ref nodes,
        graph,
    } = c.events[3].op
    else {
        panic!("{:?}", c.events[3])
    };
    assert_ne!(graph.0, 0);
    assert_eq!(nodes.len(), 4, "{nodes:?}");
    let (host_in, host_out) = match (&nodes[0].op, &nodes[3].op) {
        (
            NodeOp::Memcpy {
                dir: Dir::H2d,
                dst,
                src,
                size: 256,
            },
            NodeOp::Memcpy {
                dir: Dir::D2h,
                dst: hout,
                src: dsrc,
                size: 256,
            },
        ) if dst.0 == d && dsrc.0 == d => (src.0, hout.0),
        o => panic!("{o:?}"),
    };
    assert_ne!(host_in, host_out);
    iota_node(&nodes[1], d, 8);
    assert_eq!(
        nodes[2].op,
        NodeOp::Memset {
            dst: Addr(z),
            value: 0x3f80_0000,
            size: 16,
            width: 4,
            rows: 1,
            pitch: 0
        }
    );
    let deps: Vec<Vec<u32>> = nodes.iter().map(|n| n.deps.clone()).collect();
    assert_eq!(deps, [vec![], vec![0], vec![1], vec![2]]);

    // Each launch: the bytes the H2D node read then, the D2H node's result.
    for (it, e) in [4, 6, 8].into_iter().enumerate() {
        let Op::GraphLaunch {
            exec: x,
            ref blobs,
            stream,
        } = c.events[e].op
        else {
            panic!("{:?}", c.events[e])
        };
        assert_eq!((x, stream), (exec, Addr(0x5000)));
        assert_eq!(blobs.iter().map(|b| b.node).collect::<Vec<_>>(), [0, 3]);
        let input: Vec<f32> = (0..64)
            .map(|i| 100.0 * it as f32 + i as f32 + 0.5)
            .collect();
        let result: Vec<f32> = (0..64)
            .map(|i| if i < 8 { i as f32 } else { input[i] })
            .collect();
        assert_eq!(
            c.blob(&blobs[0].blob),
            f32s(input),
            "launch {it}: h2d bytes"
        );
        assert_eq!(
            c.blob(&blobs[1].blob),
            f32s(result),
            "launch {it}: d2h bytes"
        );
    }

    // Node by node, a child graph inlined before its (empty) node; then
    // the setter's whole topology again, under the same exec.
    let Op::GraphExec {
        exec: x2,
        ref nodes,
        ..
    } = c.events[11].op
    else {
        panic!("{:?}", c.events[11])
    };
    let kinds: Vec<(&str, Vec<u32>)> = nodes
        .iter()
        .map(|n| {
            let k = match n.op {
                NodeOp::Kernel { .. } => "kernel",
                NodeOp::Empty => "empty",
                _ => "other",
            };
            (k, n.deps.clone())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("kernel", vec![]),
            ("empty", vec![0]),
            ("kernel", vec![1]),
            ("empty", vec![2]),
        ]
    );
    iota_node(&nodes[0], d, 4);
    iota_node(&nodes[2], d, 2);
    let Op::GraphExec {
        exec: x3,
        graph,
        nodes: ref set,
    } = c.events[13].op
    else {
        panic!("{:?}", c.events[13])
    };
    assert_eq!((x3, graph), (x2, Addr(0)));
    iota_node(&set[0], d, 16);
    assert_eq!(set[1..], nodes[1..], "only the node set changed");
}

#[test]
fn graphs_built_with_the_generic_node_api_are_recorded_and_conditional_nodes_counted() {
    let (_t, c) = captured_ok("graph_generic", &["cuda"]);
    assert_eq!(
        apis(&c),
        [
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemAlloc_v2", "alloc"),
            ("cuModuleGetFunction", "function"),
            ("cuGraphInstantiateWithFlags", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuGraphExecNodeSetParams", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuGraphExecDestroy", "graph_exec_destroy"),
            ("cuGraphInstantiateWithFlags", "graph_exec"),
            ("cuGraphExecDestroy", "graph_exec_destroy"),
        ]
    );
    // The conditional node, and only it, is unrecorded.
    assert_eq!(
        c.manifest.unrecorded.iter().collect::<Vec<_>>(),
        [(&"cuGraphAddNode (conditional node)".to_string(), &1)]
    );
    let addr = |i: usize| match c.events[i].op {
        Op::Alloc { ptr, .. } => ptr.0,
        ref o => panic!("{o:?}"),
    };
    let (d, z, copy) = (addr(0), addr(1), addr(2));

    // Dependencies first; the programmatic edge (k -> k2) an ordinary
    // one; the child graph inlined before its (empty) node; the kernel
    // node as cuGraphNodeSetParams left it before instantiation.
    let Op::GraphExec {
        exec, ref nodes, ..
    } = c.events[4].op
    else {
        panic!("{:?}", c.events[4])
    };
    let deps: Vec<Vec<u32>> = nodes.iter().map(|n| n.deps.clone()).collect();
    assert_eq!(
        deps,
        [
            vec![],
            vec![0],
            vec![1],
            vec![0],
            vec![2, 3],
            vec![4],
            vec![5]
        ]
    );
    iota_node(&nodes[0], d, 8);
    assert_eq!(
        nodes[1].op,
        NodeOp::Memset {
            dst: Addr(z),
            value: 0x3f80_0000,
            size: 16,
            width: 4,
            rows: 1,
            pitch: 0
        }
    );
    assert_eq!(nodes[2].op, NodeOp::Empty);
    iota_node(&nodes[3], d, 6);
    assert_eq!(
        nodes[4].op,
        NodeOp::Memcpy {
            dir: Dir::D2d,
            dst: Addr(copy),
            src: Addr(d),
            size: 256
        }
    );
    iota_node(&nodes[5], d, 2);
    assert_eq!(nodes[6].op, NodeOp::Empty);

    // cuGraphExecNodeSetParams: the whole topology again, the kernel node
    // with its new argument.
    let Op::GraphExec {
        exec: x,
        graph,
        nodes: ref set,
    } = c.events[8].op
    else {
        panic!("{:?}", c.events[8])
    };
    assert_eq!((x, graph), (exec, Addr(0)));
    iota_node(&set[0], d, 16);
    assert_eq!(set[1..], nodes[1..], "only the node set changed");

    // The conditional node: named, and refused at replay.
    let Op::GraphExec { ref nodes, .. } = c.events[13].op else {
        panic!("{:?}", c.events[13])
    };
    assert_eq!(
        nodes.iter().map(|n| n.op.clone()).collect::<Vec<_>>(),
        [NodeOp::Unsupported {
            what: "a node of type 13 (conditional)".into()
        }]
    );
}

#[test]
fn host_memory_a_graphs_kernel_node_reaches_is_recorded_around_its_launches() {
    let (_t, c) = captured_ok("graph_host_memory", &["cuda"]);
    let launch = [
        // What the host changed, before the launch is forwarded; what the
        // kernel node wrote, at the synchronisation.
        ("cuGraphLaunch", "host_write"),
        ("cuGraphLaunch", "graph_launch"),
        ("cuStreamSynchronize", "stream_sync"),
        ("cuStreamSynchronize", "host_read"),
    ];
    let mut want = vec![
        ("cuMemHostAlloc", "alloc"),
        ("cuModuleGetFunction", "function"),
        ("cuGraphInstantiateWithFlags", "graph_exec"),
    ];
    want.extend(launch);
    want.extend(launch);
    want.extend([
        ("cuGraphExecDestroy", "graph_exec_destroy"),
        ("cuMemFreeHost", "free"),
    ]);
    assert_eq!(apis(&c), want);
    let Op::Alloc { ptr: h, size, mem } = c.events[0].op else {
        panic!("{:?}", c.events[0])
    };
    assert_eq!((size, mem), (256, MemKind::Pinned));
    for (it, at) in [3, 7].into_iter().enumerate() {
        // Before launch `it`: h[1] = -1 and h[63] = 100 + it over what the
        // previous launch left (iota's first 8 floats, or zeros).
        let mut before: Vec<f32> = (0..64)
            .map(|i| if it > 0 && i < 8 { i as f32 } else { 0.0 })
            .collect();
        before[1] = -1.0;
        before[63] = 100.0 + it as f32;
        let mut after = before.clone();
        after[..8]
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as f32);
        match (&c.events[at].op, &c.events[at + 3].op) {
            (
                Op::HostWrite {
                    ptr: w,
                    size: 256,
                    blob: wb,
                },
                Op::HostRead {
                    ptr: r,
                    size: 256,
                    blob: rb,
                },
            ) if *w == h && *r == h => {
                assert_eq!(c.blob(wb), f32s(before), "launch {it}: host_write");
                assert_eq!(c.blob(rb), f32s(after), "launch {it}: host_read");
            }
            o => panic!("launch {it}: {o:?}"),
        }
    }
}

#[test]
fn runtime_calls_into_a_capturing_stream_are_not_recorded() {
    let (_t, c) = captured_ok("runtime_capture", &["cuda", "cudart"]);
    assert_eq!(
        apis(&c),
        [
            ("cudaMallocAsync", "alloc"),
            ("cudaEventCreateWithFlags", "event_create"),
            ("cudaMemsetAsync_ptsz", "memset"),
            ("cudaEventRecord", "event_record"),
            ("cudaStreamWaitEvent", "stream_wait_event"),
        ],
        "only the calls after the capture ended"
    );
    assert!(
        matches!(c.events[2].op, Op::Memset { value: 2, .. }),
        "{:?}",
        c.events[2]
    );
}

/// Arrays, copies naming them (3D, 2D, 1D), a texture object passed to a
/// kernel by value and a surface object: each its own event, the
/// descriptions as the program gave them, the object marked in the launch's
/// arguments, nothing unrecorded (the descriptor query included).
#[test]
fn arrays_copies_and_texture_objects_are_recorded() {
    let (_t, c, stdout) = captured_ok_out("driver_arrays", &["cuda"]);
    let printed = printed_addrs(&stdout);
    let (tex, a2) = (printed["tex"], printed["a2"]);
    assert_eq!(
        apis(&c),
        [
            ("cuArray3DCreate_v2", "array_create"),
            ("cuArrayCreate_v2", "array_create"),
            ("cuMemcpy3D_v2", "memcpy_array"),
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemAlloc_v2", "alloc"),
            ("cuMemcpy2D_v2", "memcpy_array"),
            ("cuMemcpyHtoA_v2", "memcpy_array"),
            ("cuMemcpyAtoH_v2", "memcpy_array"),
            ("cuTexObjectCreate", "tex_create"),
            ("cuModuleGetFunction", "function"),
            ("cuLaunchKernel", "launch"),
            ("cuMemcpyDtoH_v2", "memcpy"),
            ("cuMemcpy2D_v2", "memcpy_array"),
            ("cuSurfObjectCreate", "surf_create"),
            ("cuSurfObjectDestroy", "surf_destroy"),
            ("cuTexObjectDestroy", "tex_destroy"),
            ("cuArrayDestroy", "array_destroy"),
            ("cuArrayDestroy", "array_destroy"),
            ("cuMemFree_v2", "free"),
            ("cuMemFree_v2", "free"),
        ]
    );
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    let ops: Vec<&Op> = c.events.iter().map(|e| &e.op).collect();
    assert_eq!(
        *ops[0],
        Op::ArrayCreate {
            array: Addr(a2),
            format: 0x20,
            channels: 1,
            extent: [8, 4, 0],
            flags: 0
        }
    );
    let Op::ArrayCreate {
        array: Addr(a1),
        format: 0x01,
        channels: 4,
        extent: [16, 0, 0],
        flags: 0,
    } = *ops[1]
    else {
        panic!("{:?}", ops[1])
    };
    let src = f32s((0..32).map(|i| 0.5 * i as f32 - 3.0));
    let bytes: Vec<u8> = (0..32u8).map(|i| 7 * i + 1).collect();
    // Host to array: the packed rows as the blob.
    let Op::MemcpyArray {
        dir: Dir::H2d,
        dst: Addr(d),
        dpitch: None,
        dpos: Some([0, 0, 0]),
        spitch: Some([32, 128]),
        spos: None,
        extent: [32, 4, 1],
        stream: None,
        blob: Some(up),
        ..
    } = *ops[2]
    else {
        panic!("{:?}", ops[2])
    };
    assert_eq!((d, c.blob(&up)), (a2, src.clone()));
    let Op::Alloc { ptr: Addr(lin), .. } = *ops[3] else {
        panic!("{:?}", ops[3])
    };
    assert_eq!(
        *ops[5],
        Op::MemcpyArray {
            dir: Dir::D2d,
            dst: Addr(lin),
            dpitch: Some([32, 128]),
            dpos: None,
            src: Addr(a2),
            spitch: None,
            spos: Some([0, 0, 0]),
            extent: [32, 4, 1],
            stream: None,
            blob: None,
        }
    );
    let one_d = |i: usize, want: Dir| match *ops[i] {
        Op::MemcpyArray {
            dir,
            dst,
            dpos,
            src,
            spos,
            extent: [32, 1, 1],
            blob: Some(b),
            ..
        } if dir == want => (dst.0, dpos, src.0, spos, c.blob(&b)),
        ref o => panic!("{o:?}"),
    };
    let (dst, dpos, _, _, b) = one_d(6, Dir::H2d);
    assert_eq!((dst, dpos, b), (a1, Some([4, 0, 0]), bytes.clone()));
    let (_, _, src_a, spos, b) = one_d(7, Dir::D2h);
    assert_eq!((src_a, spos, b), (a1, Some([4, 0, 0]), bytes));
    // The texture object: CUDA's descriptions whole, the array at 8.
    let Op::TexCreate {
        obj: Addr(o),
        ref res,
        ref tex_desc,
        view: None,
    } = *ops[8]
    else {
        panic!("{:?}", ops[8])
    };
    assert_eq!((o, res.0.len(), tex_desc.0.len()), (tex, 144, 104));
    assert_eq!(res.0[..4], [0; 4], "an array resource");
    assert_eq!(res.0[8..16], a2.to_le_bytes());
    assert_eq!(tex_desc.0[..8], [1, 0, 0, 0, 1, 0, 0, 0], "clamp, clamp");
    // The launch (its PTX, in the program's image, is written with it):
    // the object's word marked, the output a pointer.
    let Op::Launch { ref args, .. } = *ops[10] else {
        panic!("{:?}", ops[10])
    };
    let marks: Vec<_> = args
        .iter()
        .map(|a| (a.ptrs.clone(), a.objs.clone()))
        .collect();
    assert_eq!(
        marks,
        [(vec![], vec![0]), (vec![0], vec![]), (vec![], vec![])]
    );
    assert_eq!(args[0].hex.0, tex.to_le_bytes());
    // Array to host: a D2H with its bytes.
    let Op::MemcpyArray {
        dir: Dir::D2h,
        src: Addr(s),
        spos: Some([0, 0, 0]),
        dpitch: Some([32, 128]),
        blob: Some(down),
        ..
    } = *ops[12]
    else {
        panic!("{:?}", ops[12])
    };
    assert_eq!((s, c.blob(&down)), (a2, src));
    let Op::SurfCreate {
        obj: Addr(surf),
        ref res,
    } = *ops[13]
    else {
        panic!("{:?}", ops[13])
    };
    assert_eq!((surf, res.0.len()), (2, 144), "the next small integer");
    assert_eq!(*ops[14], Op::SurfDestroy { obj: Addr(2) });
    assert_eq!(*ops[15], Op::TexDestroy { obj: Addr(tex) });
    assert_eq!(*ops[16], Op::ArrayDestroy { array: Addr(a1) });
}

#[test]
fn per_thread_default_stream_array_copies_are_recorded_like_their_plain_forms() {
    let (_t, c) = captured_ok("driver_arrays_ptds", &["cuda"]);
    assert_eq!(
        apis(&c),
        [
            ("cuArray3DCreate_v2", "array_create"),
            ("cuArray3DCreate_v2", "array_create"),
            ("cuMemcpy3D_v2_ptds", "memcpy_array"),
            ("cuMemcpy2D_v2_ptds", "memcpy_array"),
            ("cuMemcpy3DAsync_v2_ptsz", "memcpy_array"),
            ("cuMemcpyHtoA_v2_ptds", "memcpy_array"),
            ("cuMemcpyAtoH_v2_ptds", "memcpy_array"),
            ("cuMemcpyAtoHAsync_v2_ptsz", "memcpy_array"),
            ("cuStreamSynchronize", "stream_sync"),
            ("cuArrayDestroy", "array_destroy"),
            ("cuArrayDestroy", "array_destroy"),
        ]
    );
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    let src = f32s((0..32).map(|i| 1.5 * i as f32 + 2.0));
    let bytes: Vec<u8> = (0..16u8).map(|i| 5 * i + 3).collect();
    let copy = |i: usize| match c.events[i].op {
        Op::MemcpyArray {
            dir,
            stream,
            blob: Some(b),
            ..
        } => (dir, stream, c.blob(&b)),
        ref o => panic!("{o:?}"),
    };
    assert_eq!(copy(2), (Dir::H2d, None, src.clone()));
    assert_eq!(copy(3), (Dir::D2h, None, src.clone()));
    // The per-thread stream is the default stream of the recording.
    assert_eq!(copy(4), (Dir::D2h, Some(Addr(0)), src));
    assert_eq!(copy(5), (Dir::H2d, None, bytes.clone()));
    assert_eq!(copy(6), (Dir::D2h, None, bytes.clone()));
    assert_eq!(copy(7), (Dir::D2h, Some(Addr(0)), bytes));
}

#[test]
fn disabling_a_node_and_setting_a_child_graph_rewrite_the_executable_graph() {
    let (_t, c) = captured_ok("graph_setters", &["cuda"]);
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    let got: Vec<(&str, &str)> = apis(&c)
        .into_iter()
        .filter(|(_, op)| op.starts_with("graph_"))
        .collect();
    assert_eq!(
        got,
        [
            ("cuGraphInstantiateWithFlags", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuGraphNodeSetEnabled", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuGraphNodeSetEnabled", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuGraphExecChildGraphNodeSetParams", "graph_exec"),
            ("cuGraphLaunch", "graph_launch"),
            ("cuGraphExecDestroy", "graph_exec_destroy"),
        ]
    );
    let allocs: Vec<u64> = c
        .events
        .iter()
        .filter_map(|e| match e.op {
            Op::Alloc { ptr, .. } => Some(ptr.0),
            _ => None,
        })
        .collect();
    let (d, d2) = (allocs[0], allocs[1]);
    let execs: Vec<&Vec<GraphNode>> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::GraphExec { nodes, .. } => Some(nodes),
            _ => None,
        })
        .collect();
    // Instantiated: the kernel, the child's kernel after it, the child node.
    let first = execs[0];
    assert_eq!(first.len(), 3, "{first:?}");
    iota_node(&first[0], d, 8);
    iota_node(&first[1], d2, 4);
    assert_eq!((&first[1].deps, &first[2].op), (&vec![0], &NodeOp::Empty));
    // Disabled: an empty node in its place, the rest as it was.
    assert_eq!(execs[1][0].op, NodeOp::Empty);
    assert_eq!(execs[1][1..], first[1..]);
    // Enabled again: as instantiated.
    assert_eq!(execs[2], first);
    // The child graph set: its kernel now covers 6 floats.
    iota_node(&execs[3][1], d2, 6);
    assert_eq!(
        (execs[3][0].clone(), execs[3][2].clone()),
        (first[0].clone(), first[2].clone())
    );
}

/// Two contexts on two devices: each event carries the device of the
/// context current when it was made (`cuCtxSetCurrent`, a created context,
/// a push and a pop), and the manifest lists both devices.
#[test]
fn events_carry_the_device_of_the_current_context() {
    let (_t, c) = captured_ok("driver_devices", &["cuda"]);
    let got: Vec<(&str, &str, u32)> = c
        .events
        .iter()
        .filter(|e| !matches!(e.op, Op::Eof { .. }))
        .map(|e| (e.api.as_str(), e.op.name(), e.dev))
        .collect();
    assert_eq!(
        got,
        [
            ("cuDevicePrimaryCtxRetain", "ctx_create", 0),
            ("cuCtxSetCurrent", "ctx_set", 1),
            ("cuMemAlloc_v2", "alloc", 1),
            ("cuMemsetD32_v2", "memset", 1),
            ("cuCtxCreate_v2", "ctx_create", 0),
            ("cuMemAlloc_v2", "alloc", 0),
            ("cuCtxPushCurrent_v2", "ctx_set", 1),
            ("cuMemAlloc_v2", "alloc", 1),
            ("cuCtxPopCurrent_v2", "ctx_set", 0),
            ("cuMemcpyDtoH_v2", "memcpy", 0),
            ("cuMemFree_v2", "free", 0),
        ]
    );
    assert_eq!(c.manifest.devices, [0, 1]);
}

#[test]
fn array_copies_inside_graphs_are_recorded_with_their_host_sides() {
    let (_t, c, stdout) = captured_ok_out("graph_arrays", &["cuda"]);
    let p = printed_addrs(&stdout);
    let (a, host_in, window, whole) = (p["a"], p["host_in"], p["window"], p["whole"]);
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    let d = c
        .events
        .iter()
        .find_map(|e| match e.op {
            Op::Alloc { ptr, .. } => Some(ptr.0),
            _ => None,
        })
        .unwrap();
    let execs: Vec<(&str, &Vec<GraphNode>)> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::GraphExec { nodes, .. } => Some((e.api.as_str(), nodes)),
            _ => None,
        })
        .collect();
    let apis: Vec<&str> = execs.iter().map(|(api, _)| *api).collect();
    assert_eq!(
        apis,
        [
            "cuGraphInstantiateWithFlags",
            "cuGraphExecMemcpyNodeSetParams",
            "cuGraphInstantiateWithFlags"
        ]
    );
    let array_node = |dir, (dst, dpitch, dpos), (src, spitch, spos), extent| NodeOp::MemcpyArray {
        dir,
        dst: Addr(dst),
        dpitch,
        dpos,
        src: Addr(src),
        spitch,
        spos,
        extent,
    };
    let window_node = |pos| {
        array_node(
            Dir::D2h,
            (window, Some([16, 32]), None),
            (a, None, Some(pos)),
            [16, 2, 1],
        )
    };
    let ops = |nodes: &Vec<GraphNode>| nodes.iter().map(|n| n.op.clone()).collect::<Vec<_>>();
    // Host rows 40 bytes apart into the array; the array to device memory;
    // a window of it to the host.
    let first = vec![
        array_node(
            Dir::H2d,
            (a, None, Some([0, 0, 0])),
            (host_in, Some([40, 160]), None),
            [32, 4, 1],
        ),
        array_node(
            Dir::D2d,
            (d, Some([32, 128]), None),
            (a, None, Some([0, 0, 0])),
            [32, 4, 1],
        ),
        window_node([8, 1, 0]),
    ];
    assert_eq!(ops(execs[0].1), first);
    assert_eq!(
        execs[0]
            .1
            .iter()
            .map(|n| n.deps.clone())
            .collect::<Vec<_>>(),
        [vec![], vec![0], vec![0]]
    );
    // The setter moved the window; nothing else changed.
    assert_eq!(ops(execs[1].1)[..2], first[..2]);
    assert_eq!(ops(execs[1].1)[2], window_node([0, 2, 0]));
    // The captured copy: the whole array to the host.
    assert_eq!(
        ops(execs[2].1),
        [array_node(
            Dir::D2h,
            (whole, Some([32, 128]), None),
            (a, None, Some([0, 0, 0])),
            [32, 4, 1],
        )]
    );
    // Each launch: the host rows packed (the padding left out) and the
    // window's bytes.
    let launches: Vec<&Vec<NodeBlob>> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::GraphLaunch { blobs, .. } => Some(blobs),
            _ => None,
        })
        .collect();
    assert_eq!(launches.len(), 4);
    let host = |k: u32, y: u32, x: u32| (k * 100 + y * 8 + x) as f32;
    for (k, (wy, wx)) in [(1, (1, 2)), (2, (1, 2)), (3, (2, 0))] {
        let b = launches[k as usize - 1];
        assert_eq!(b.iter().map(|b| b.node).collect::<Vec<_>>(), [0, 2]);
        let rows = (0..4).flat_map(|y| (0..8).map(move |x| host(k, y, x)));
        assert_eq!(c.blob(&b[0].blob), f32s(rows), "launch {k}");
        let win = (0..2).flat_map(|y| (0..4).map(move |x| host(k, wy + y, wx + x)));
        assert_eq!(c.blob(&b[1].blob), f32s(win), "launch {k}");
    }
    let rows = (0..4).flat_map(|y| (0..8).map(move |x| host(3, y, x)));
    assert_eq!(launches[3].len(), 1);
    assert_eq!(c.blob(&launches[3][0].blob), f32s(rows));
}

#[test]
fn array_planes_are_recorded_as_arrays_of_their_parent() {
    let (_t, c, stdout) = captured_ok_out("driver_planes", &["cuda"]);
    let p = printed_addrs(&stdout);
    let (a, y, uv) = (p["a"], p["y"], p["uv"]);
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    assert_eq!(
        apis(&c),
        [
            ("cuArray3DCreate_v2", "array_create"),
            ("cuArrayGetPlane", "array_plane"),
            ("cuArrayGetPlane", "array_plane"),
            ("cuArrayGetPlane", "array_plane"),
            ("cuMemcpy2D_v2", "memcpy_array"),
            ("cuMemcpy2D_v2", "memcpy_array"),
            ("cuMemcpy2D_v2", "memcpy_array"),
            ("cuArrayDestroy", "array_destroy"),
        ]
    );
    let plane = |array, plane| Op::ArrayPlane {
        array: Addr(array),
        parent: Addr(a),
        plane,
    };
    assert_eq!(c.events[1].op, plane(uv, 1));
    assert_eq!(c.events[2].op, plane(y, 0));
    // The refused lookup is recorded with its error, no handle.
    assert_ne!(c.events[3].ret, 0);
    // The copies name the planes as arrays.
    let dst = |i: usize| match c.events[i].op {
        Op::MemcpyArray { dst, dpos, .. } => (dst.0, dpos),
        ref o => panic!("{o:?}"),
    };
    assert_eq!((dst(4), dst(5)), ((y, Some([0; 3])), (uv, Some([0; 3]))));
    let Op::MemcpyArray {
        dir: Dir::D2h,
        src,
        spos: Some([2, 1, 0]),
        extent: [4, 1, 1],
        blob: Some(b),
        ..
    } = c.events[6].op
    else {
        panic!("{:?}", c.events[6])
    };
    assert_eq!((src.0, c.blob(&b)), (uv, vec![110, 111, 112, 113]));
}

#[test]
fn mipmapped_arrays_and_their_levels_are_recorded() {
    let (_t, c, stdout) = captured_ok_out("driver_mipmaps", &["cuda"]);
    let p = printed_addrs(&stdout);
    let (m, l1) = (p["m"], p["l1"]);
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    assert_eq!(
        apis(&c),
        [
            ("cuMipmappedArrayCreate", "mipmap_create"),
            ("cuMipmappedArrayGetLevel", "mipmap_level"),
            ("cuMemcpy3D_v2", "memcpy_array"),
            ("cuMemcpy3D_v2", "memcpy_array"),
            ("cuTexObjectCreate", "tex_create"),
            ("cuTexObjectDestroy", "tex_destroy"),
            ("cuMipmappedArrayDestroy", "mipmap_destroy"),
        ]
    );
    assert_eq!(
        c.events[0].op,
        Op::MipmapCreate {
            mipmap: Addr(m),
            format: 0x20,
            channels: 1,
            extent: [8, 6, 0],
            flags: 0,
            levels: 3,
        }
    );
    assert_eq!(
        c.events[1].op,
        Op::MipmapLevel {
            array: Addr(l1),
            mipmap: Addr(m),
            level: 1,
        }
    );
    let Op::MemcpyArray {
        dir: Dir::D2h,
        src,
        spos: Some([8, 2, 0]),
        blob: Some(b),
        ..
    } = c.events[3].op
    else {
        panic!("{:?}", c.events[3])
    };
    assert_eq!((src.0, c.blob(&b)), (l1, f32s([2.5, 2.75])));
    // The texture's resource names the mipmapped array (type 1, handle at 8).
    let Op::TexCreate { ref res, .. } = c.events[4].op else {
        panic!("{:?}", c.events[4])
    };
    assert_eq!(res.0[..4], 1u32.to_le_bytes());
    assert_eq!(res.0[8..16], m.to_le_bytes());
    assert_eq!(c.events[6].op, Op::MipmapDestroy { mipmap: Addr(m) });
}

#[test]
fn a_graph_s_d2h_result_is_recorded_before_a_host_node_rewrites_it() {
    let (_t, c) = captured_ok("graph_host_d2h", &["cuda"]);
    assert!(
        c.manifest.unrecorded.is_empty(),
        "{:?}",
        c.manifest.unrecorded
    );
    // Both graphs: kernel, copy to the host, host node.
    let execs: Vec<&Vec<GraphNode>> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::GraphExec { nodes, .. } => Some(nodes),
            _ => None,
        })
        .collect();
    // cuGraphAddHostNode, cuLaunchHostFunc captured, cuGraphAddNode, and
    // the third again after cuGraphExecNodeSetParams.
    assert_eq!(execs.len(), 4);
    for nodes in &execs {
        let kinds: Vec<&str> = nodes.iter().map(|n| n.op.kind()).collect();
        assert_eq!(kinds, ["kernel", "memcpy", "host"]);
    }
    // Every launch's result is what the copy wrote (iota: 0.0, 1.0), not
    // the 0.0 the host node left: what replay, which runs no host
    // function, reads back (the host node of cuGraphAddNode's graph too,
    // before and after cuGraphExecNodeSetParams set another function).
    let launches: Vec<&Vec<NodeBlob>> = c
        .events
        .iter()
        .filter_map(|e| match &e.op {
            Op::GraphLaunch { blobs, .. } => Some(blobs),
            _ => None,
        })
        .collect();
    assert_eq!(launches.len(), 7);
    for b in launches {
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!((b[0].node, c.blob(&b[0].blob)), (1, f32s([0.0, 1.0])));
    }
}
