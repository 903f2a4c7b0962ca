//! The CUDA runtime layer (`cuda*` exports, generated from cuda-api's
//! runtime table), end to end without a GPU: a program on the stand-in
//! `libcudart.so.13` (`tests/c/fake_cuda`) under the real `hrr-cap`, its
//! archive read back. Proven here: each runtime call is one event under
//! its exact entry point (per-thread variants included), what each event
//! holds, the stream waited on before a D2H result is read, the
//! application's last-error state left as the runtime set it, and the
//! answer for a function the runtime lacks.

use crate::harness::{Captured, capture_cuda, cuda_program, text};
use hrr_core::manifest::Platform;
use hrr_core::{Addr, Dir, MemKind, Op};

#[test]
fn runtime_calls_are_one_event_each_and_leave_the_applications_state_alone() {
    let app = cuda_program("runtime_calls", &["cudart"]);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("rt.hrr");
    let out = capture_cuda(&dir, &app, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("runtime_calls: OK"), "{stdout}");
    // `_ptsz`'s null stream is the thread's default stream: the recorder
    // waited for cudaStreamPerThread (0x2) before reading the D2H result.
    assert!(stdout.contains("synced=0x2\n"), "{stdout}");
    // The failed pointer queries' error replaced the application's pending
    // one (CUDA keeps the last), and was not cleared.
    assert!(stdout.contains("pending=1\n"), "{stdout}");
    // cudaErrorNotSupported, said once.
    assert!(stdout.contains("managed=801\n"), "{stdout}");
    let said =
        "hrr-intercept: cudaMallocManaged: not defined by any library after the interposer\n";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");

    let c = Captured::open(&dir);
    assert_eq!(c.manifest.platform, Platform::Nvidia);
    let apis: Vec<(&str, &str, i64)> = c
        .events
        .iter()
        .filter(|e| !matches!(e.op, Op::Eof { .. }))
        .map(|e| (e.api.as_str(), e.op.name(), e.ret))
        .collect();
    assert_eq!(
        apis,
        [
            ("cudaMallocHost", "alloc", 0),
            ("cudaStreamCreate", "stream_create", 0),
            ("cudaEventCreateWithFlags", "event_create", 0),
            ("cudaMallocAsync", "alloc", 0),
            ("cudaMemsetAsync_ptsz", "memset", 0),
            ("cudaMemcpyAsync_ptsz", "memcpy", 0),
            ("cudaEventRecord", "event_record", 0),
            ("cudaStreamWaitEvent", "stream_wait_event", 0),
            ("cudaEventSynchronize", "event_sync", 0),
            ("cudaStreamSynchronize_ptsz", "stream_sync", 0),
            ("cudaDeviceSynchronize", "device_sync", 0),
            ("cudaSetDevice", "set_device", 0),
            ("cudaMemcpy_ptds", "memcpy", 0),
            ("cudaSetDevice", "set_device", 101),
            ("cudaMemcpy_ptds", "memcpy", 0),
            ("cudaFreeAsync", "free", 0),
            ("cudaEventDestroy", "event_destroy", 0),
            ("cudaStreamDestroy", "stream_destroy", 0),
            ("cudaFreeHost", "free", 0),
        ]
    );
    let ev = |i: usize| &c.events[i].op;
    let Op::Alloc {
        mem: MemKind::Pinned,
        size: 64,
        ..
    } = ev(0)
    else {
        panic!("{:?}", ev(0));
    };
    let Op::StreamCreate { stream } = *ev(1) else {
        panic!("{:?}", ev(1));
    };
    let Op::Alloc {
        ptr: d,
        size: 64,
        mem: MemKind::Device,
    } = *ev(3)
    else {
        panic!("{:?}", ev(3));
    };
    assert_eq!(
        *ev(4),
        Op::Memset {
            dst: d,
            value: 0x5a,
            size: 64,
            width: 1,
            stream: Some(stream)
        }
    );
    // Direction from the recorder's allocations; the default stream is 0x0.
    let Op::Memcpy {
        dir: Dir::D2h,
        src,
        size: 64,
        stream: Some(Addr(0)),
        blob: Some(b),
        ..
    } = ev(5)
    else {
        panic!("{:?}", ev(5));
    };
    assert_eq!(*src, d);
    assert_eq!(c.blob(b), vec![0x5a; 64]);
    // Host to host after the runtime's pointer queries failed.
    for i in [12, 14] {
        let Op::Memcpy {
            dir: Dir::H2h,
            stream: None,
            blob: None,
            ..
        } = ev(i)
        else {
            panic!("{:?}", ev(i));
        };
    }
    assert_eq!(*ev(11), Op::SetDevice { device: 0 });
    assert_eq!(*ev(13), Op::SetDevice { device: 7 });
    assert_eq!(
        *ev(15),
        Op::Free {
            ptr: d,
            mem: Some(MemKind::Device)
        }
    );
    let Op::Free {
        mem: Some(MemKind::Pinned),
        ..
    } = ev(18)
    else {
        panic!("{:?}", ev(18));
    };
}
