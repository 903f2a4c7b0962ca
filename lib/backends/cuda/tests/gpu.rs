//! The CUDA backend on a real GPU. Ignored by default (CI has no GPU):
//!
//! ```text
//! cargo test -p hrr-backend-cuda --test gpu -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! `scripts/gpu-prepare.sh` ships this test binary as `.gpu/bin/hrr-cuda-gpu-tests`
//! and `scripts/gpu-pass.sh` runs it on the GPU machine, which has no Rust.
//! Optional: `HRR_CUDA_TEST_IMAGES="file.fatbin:kernel_name,file.cubin:kernel_name"`
//! loads nvcc-built images and prints their parameter layouts.

use std::time::Instant;

use hrr_backend_cuda::CudaDevice;
use hrr_backend_cuda::error::RESULT_NAMES;
use hrr_backend_cuda::staging::StagingConfig;
use hrr_core::MemKind;
use hrr_replay::device::{
    ArrayCopy, ArrayDesc, ArraySide, Device, DeviceError, HostSide, Launch, LaunchArg,
};

/// Hand-written PTX (JIT-compiled by the driver for whatever GPU runs it):
/// `hrr_axpy(float* y, const float* x, float a, unsigned n)`: y[i] += a*x[i];
/// `hrr_copy_struct(struct { u32* dst; const u32* src; u32 n; })`: dst[i] = src[i] + 1;
/// `hrr_empty()`.
const PTX: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry hrr_axpy(
    .param .u64 hrr_axpy_param_0,
    .param .u64 hrr_axpy_param_1,
    .param .f32 hrr_axpy_param_2,
    .param .u32 hrr_axpy_param_3
)
{
    .reg .pred %p<2>;
    .reg .f32 %f<5>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [hrr_axpy_param_0];
    ld.param.u64 %rd2, [hrr_axpy_param_1];
    ld.param.f32 %f1, [hrr_axpy_param_2];
    ld.param.u32 %r1, [hrr_axpy_param_3];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra AXPY_DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd7];
    ld.global.f32 %f3, [%rd6];
    fma.rn.f32 %f4, %f1, %f2, %f3;
    st.global.f32 [%rd6], %f4;
AXPY_DONE:
    ret;
}

.visible .entry hrr_copy_struct(
    .param .align 8 .b8 hrr_copy_struct_param_0[24]
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [hrr_copy_struct_param_0];
    ld.param.u64 %rd2, [hrr_copy_struct_param_0+8];
    ld.param.u32 %r1, [hrr_copy_struct_param_0+16];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra COPY_DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.u32 %r6, [%rd7];
    add.s32 %r7, %r6, 1;
    st.global.u32 [%rd6], %r7;
COPY_DONE:
    ret;
}

.visible .entry hrr_empty()
{
    ret;
}

.visible .global .align 4 .b8 hrr_table[256];
.extern .shared .align 16 .b8 hrr_dyn[];

.visible .entry hrr_table_copy(
    .param .u64 hrr_table_copy_param_0,
    .param .u32 hrr_table_copy_param_1
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [hrr_table_copy_param_0];
    ld.param.u32 %r1, [hrr_table_copy_param_1];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra TABLE_DONE;
    mul.wide.u32 %rd2, %r2, 4;
    mov.u64 %rd3, hrr_table;
    add.s64 %rd4, %rd3, %rd2;
    ld.global.u32 %r3, [%rd4];
    mov.u32 %r4, hrr_dyn;
    mul.lo.u32 %r5, %r2, 4;
    add.u32 %r6, %r4, %r5;
    st.shared.u32 [%r6+65532], %r3;
    ld.shared.u32 %r7, [%r6+65532];
    cvta.to.global.u64 %rd5, %rd1;
    add.s64 %rd6, %rd5, %rd2;
    st.global.u32 [%rd6], %r7;
TABLE_DONE:
    ret;
}
"#;

fn dev() -> CudaDevice {
    CudaDevice::open(0).unwrap_or_else(|e| panic!("opening the CUDA device: {e}"))
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn identity_and_target() {
    let d = dev();
    let drv = d.driver();
    println!("device   : {}", d.name());
    println!("target   : {}", d.target());
    println!(
        "driver   : {} (cuDriverGetVersion {})",
        drv.path(),
        d.driver_version()
    );
    let api = drv.api();
    println!(
        "optional : cuEventElapsedTime_v2 {} cuFuncGetParamInfo {} cuKernelGetParamInfo {}",
        api.cuEventElapsedTime_v2.is_some(),
        api.cuFuncGetParamInfo.is_some(),
        api.cuKernelGetParamInfo.is_some()
    );
    let (ma, mi) = d.compute_capability();
    assert_eq!(d.target(), format!("sm_{ma}{mi}"));
    assert!(d.target().starts_with("sm_"));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn result_names_match_the_driver() {
    let d = dev();
    let drv = d.driver();
    let mut wrong = Vec::new();
    for &(code, name) in RESULT_NAMES {
        let got = drv.error_name(code);
        if got != name {
            wrong.push(format!("{code}: table {name}, driver {got}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "CUresult names differ:\n{}",
        wrong.join("\n")
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn allocations_are_zero_filled() {
    let mut d = dev();
    for mem in [
        MemKind::Device,
        MemKind::Managed,
        MemKind::Pinned,
        MemKind::Host,
    ] {
        let n = 3 << 20;
        // Dirty memory first so that a recycled block would show.
        let p = d.alloc(n, mem).unwrap();
        if mem.is_device() {
            d.memset(p, 0xAB, n, None).unwrap();
        } else {
            // SAFETY: a host allocation of n bytes.
            unsafe { std::ptr::write_bytes(p as *mut u8, 0xAB, n as usize) };
        }
        d.free(p, mem).unwrap();
        let p = d.alloc(n, mem).unwrap();
        let mut back = vec![0xEEu8; n as usize];
        if mem.is_device() {
            d.copy_d2h(&mut back, p, None).unwrap();
        } else {
            // SAFETY: a host allocation of n bytes.
            back.copy_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, n as usize) });
        }
        assert!(
            back.iter().all(|&b| b == 0),
            "{mem:?} allocation not zero-filled"
        );
        d.free(p, mem).unwrap();
    }
    // Zero bytes is still an allocation.
    let p = d.alloc(0, MemKind::Device).unwrap();
    assert_ne!(p, 0);
    d.free(p, MemKind::Device).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn copies_memsets_streams_events() {
    let mut d = dev();
    let n = 1 << 20;
    let src: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    let a = d.alloc(n as u64, MemKind::Device).unwrap();
    let b = d.alloc(n as u64, MemKind::Device).unwrap();
    let s1 = d.stream_create().unwrap();
    let s2 = d.stream_create().unwrap();
    let (e0, e1, e2) = (
        d.event_create().unwrap(),
        d.event_create().unwrap(),
        d.event_create().unwrap(),
    );

    // Synchronous round trip.
    d.copy_h2d(a, &src, None).unwrap();
    let mut back = vec![0u8; n];
    d.copy_d2h(&mut back, a, None).unwrap();
    assert_eq!(back, src);

    // Async on s1: H2D, D2D into b at an interior offset, memset part of b.
    d.event_record(e0, s1).unwrap();
    d.copy_h2d(a, &src, Some(s1)).unwrap();
    d.copy_d2d(b + 4096, a, (n - 4096) as u64, Some(s1))
        .unwrap();
    d.memset(b, 0x5A, 4096, Some(s1)).unwrap();
    d.event_record(e1, s1).unwrap();
    // s2 waits for s1's work, then overwrites the first 16 bytes of b.
    d.stream_wait_event(s2, e1).unwrap();
    d.memset(b, 0x11, 16, Some(s2)).unwrap();
    d.event_record(e2, s2).unwrap();
    d.event_sync(e2).unwrap();
    let ms = d.event_elapsed_ms(e0, e1).unwrap();
    println!("elapsed between events: {ms:.3} ms");
    assert!(ms >= 0.0);

    // D2H on a stream completes before returning.
    let mut got = vec![0u8; n];
    d.copy_d2h(&mut got, b, Some(s2)).unwrap();
    assert!(got[..16].iter().all(|&x| x == 0x11));
    assert!(got[16..4096].iter().all(|&x| x == 0x5A));
    assert_eq!(&got[4096..], &src[..n - 4096]);

    // Synchronous memset, default stream (0) explicitly.
    d.memset(a, 0xC3, n as u64, None).unwrap();
    d.stream_sync(0).unwrap();
    d.copy_d2h(&mut got, a, Some(0)).unwrap();
    assert!(got.iter().all(|&x| x == 0xC3));
    d.device_sync().unwrap();

    for e in [e0, e1, e2] {
        d.event_destroy(e).unwrap();
    }
    d.stream_destroy(s1).unwrap();
    d.stream_destroy(s2).unwrap();
    d.free(a, MemKind::Device).unwrap();
    d.free(b, MemKind::Device).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn ptx_module_layouts_and_launches() {
    let mut d = dev();
    let m = d.module_load(PTX.as_bytes()).unwrap();

    // axpy: four scalar parameters.
    let f = d.function(m, "hrr_axpy").unwrap();
    let layout = d.param_layout(f).unwrap();
    println!("hrr_axpy layout: {layout:?}");
    assert_eq!(layout, vec![(0, 8), (8, 8), (16, 4), (20, 4)]);
    let n = 100_000u32;
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (dx, dy) = (
        d.alloc(4 * n as u64, MemKind::Device).unwrap(),
        d.alloc(4 * n as u64, MemKind::Device).unwrap(),
    );
    d.copy_h2d(dx, &f32s(&x), None).unwrap();
    d.copy_h2d(dy, &f32s(&y), None).unwrap();
    let (py, px, a, nn) = (
        dy.to_le_bytes(),
        dx.to_le_bytes(),
        2.0f32.to_le_bytes(),
        n.to_le_bytes(),
    );
    let args = [
        LaunchArg {
            offset: 0,
            bytes: &py,
        },
        LaunchArg {
            offset: 8,
            bytes: &px,
        },
        LaunchArg {
            offset: 16,
            bytes: &a,
        },
        LaunchArg {
            offset: 20,
            bytes: &nn,
        },
    ];
    let s = d.stream_create().unwrap();
    d.launch(&Launch {
        event: 0,
        func: f,
        grid: [n.div_ceil(256), 1, 1],
        block: [256, 1, 1],
        shmem: 0,
        stream: s,
        args: &args,
        attrs: &[],
    })
    .unwrap();
    let mut out = vec![0u8; 4 * n as usize];
    d.copy_d2h(&mut out, dy, Some(s)).unwrap();
    let got: Vec<f32> = out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..n as usize {
        assert_eq!(got[i], 2.0 * x[i] + y[i], "axpy element {i}");
    }

    // A struct by value carrying two device pointers (one interior).
    let g = d.function(m, "hrr_copy_struct").unwrap();
    assert_eq!(d.param_layout(g).unwrap(), vec![(0, 24)]);
    let src: Vec<u8> = (0..n).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let dsrc = d.alloc(4 * n as u64 + 256, MemKind::Device).unwrap();
    let ddst = d.alloc(4 * n as u64, MemKind::Device).unwrap();
    d.copy_h2d(dsrc + 256, &src, None).unwrap();
    let mut st = Vec::new();
    st.extend_from_slice(&ddst.to_le_bytes());
    st.extend_from_slice(&(dsrc + 256).to_le_bytes());
    st.extend_from_slice(&n.to_le_bytes());
    st.extend_from_slice(&[0; 4]);
    let args = [LaunchArg {
        offset: 0,
        bytes: &st,
    }];
    d.launch(&Launch {
        event: 0,
        func: g,
        grid: [n.div_ceil(128), 1, 1],
        block: [128, 1, 1],
        shmem: 0,
        stream: 0,
        args: &args,
        attrs: &[],
    })
    .unwrap();
    d.copy_d2h(&mut out, ddst, None).unwrap();
    let got = u32s(&out);
    assert!(
        got.iter().enumerate().all(|(i, &v)| v == i as u32 * 3 + 1),
        "struct kernel"
    );

    // No parameters: neither kernelParams nor extra.
    let e = d.function(m, "hrr_empty").unwrap();
    assert_eq!(d.param_layout(e).unwrap(), vec![]);
    d.launch(&Launch {
        event: 0,
        func: e,
        grid: [1, 1, 1],
        block: [1, 1, 1],
        shmem: 0,
        stream: 0,
        args: &[],
        attrs: &[],
    })
    .unwrap();
    d.device_sync().unwrap();

    // Errors come back typed and named.
    let err = d.function(m, "no_such_kernel").unwrap_err();
    println!("missing kernel: {err}");
    assert_eq!((err.call(), err.code()), ("cuModuleGetFunction", Some(500)));
    assert!(
        matches!(&err, DeviceError::Call { message, .. } if message.starts_with("CUDA_ERROR_NOT_FOUND")),
        "{err:?}"
    );
    let err = d
        .module_load(&[0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap_err();
    println!("bad image: {err}");

    d.stream_destroy(s).unwrap();
    d.module_unload(m).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn nvcc_images_load() {
    let Ok(list) = std::env::var("HRR_CUDA_TEST_IMAGES") else {
        println!("HRR_CUDA_TEST_IMAGES not set; skipped");
        return;
    };
    let mut d = dev();
    for item in list.split(',').filter(|s| !s.is_empty()) {
        let (path, kernel) = item.rsplit_once(':').expect("file:kernel");
        let image = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let magic = u32::from_le_bytes(image[..4].try_into().unwrap());
        let m = d
            .module_load(&image)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let f = d
            .function(m, kernel)
            .unwrap_or_else(|e| panic!("{path} {kernel}: {e}"));
        println!(
            "{path}: magic {magic:#010x}, {} bytes, {kernel} params {:?}",
            image.len(),
            d.param_layout(f).unwrap()
        );
        d.module_unload(m).unwrap();
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn speed_probe() {
    let mut d = dev();
    let m = d.module_load(PTX.as_bytes()).unwrap();
    let f = d.function(m, "hrr_axpy").unwrap();
    let buf = d.alloc(4096, MemKind::Device).unwrap();
    let (p, a, n) = (buf.to_le_bytes(), 1.0f32.to_le_bytes(), 32u32.to_le_bytes());
    let args = [
        LaunchArg {
            offset: 0,
            bytes: &p,
        },
        LaunchArg {
            offset: 8,
            bytes: &p,
        },
        LaunchArg {
            offset: 16,
            bytes: &a,
        },
        LaunchArg {
            offset: 20,
            bytes: &n,
        },
    ];
    let l = Launch {
        event: 0,
        func: f,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        shmem: 0,
        stream: 0,
        args: &args,
        attrs: &[],
    };
    for _ in 0..1000 {
        d.launch(&l).unwrap();
    }
    d.device_sync().unwrap();
    let launches = 100_000;
    let t = Instant::now();
    for _ in 0..launches {
        d.launch(&l).unwrap();
    }
    d.device_sync().unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "backend launches: {launches} in {ms:.1} ms ({:.3} us/launch)",
        ms * 1e3 / launches as f64
    );

    let size = 256usize << 20;
    let dbuf = d.alloc(size as u64, MemKind::Device).unwrap();
    let pinned = d.alloc(size as u64, MemKind::Pinned).unwrap();
    let mut pageable = vec![1u8; size];
    // SAFETY: a pinned host allocation of `size` bytes, exclusively ours.
    let pinned_slice = unsafe { std::slice::from_raw_parts_mut(pinned as *mut u8, size) };
    let gbps = |ms: f64, reps: usize| (size * reps) as f64 / 1e9 / (ms / 1e3);
    let reps = 4;
    let time = |what: &str, f: &mut dyn FnMut()| {
        f(); // warm-up
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "backend {what}: {:.2} GB/s ({:.3} ms per 256 MiB)",
            gbps(ms, reps),
            ms / reps as f64
        );
    };
    let mut hb = d
        .host_buffer(size)
        .unwrap()
        .expect("CUDA gives host buffers");
    hb.fill(1);
    time("h2d host_buffer", &mut || {
        d.copy_h2d(dbuf, &hb, None).unwrap()
    });
    time("d2h host_buffer", &mut || {
        d.copy_d2h(&mut hb, dbuf, None).unwrap()
    });
    drop(hb);
    time("h2d pinned  ", &mut || {
        d.copy_h2d(dbuf, pinned_slice, None).unwrap()
    });
    time("d2h pinned  ", &mut || {
        d.copy_d2h(pinned_slice, dbuf, None).unwrap()
    });
    let default = d.staging();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("staging default: {default:?} ({cores} cores)");
    let mut configs = vec![("driver", StagingConfig::disabled())];
    for t in [1, 2, 4, 8, 12, 16] {
        configs.push((
            "staged",
            StagingConfig {
                threads: t,
                ..default
            },
        ));
    }
    configs.push((
        "staged",
        StagingConfig {
            threads: 8,
            chunk: 8 << 20,
            ..default
        },
    ));
    configs.push((
        "staged",
        StagingConfig {
            threads: 8,
            chunk: 2 << 20,
            ..default
        },
    ));
    for (what, cfg) in configs {
        d.set_staging(cfg).unwrap();
        let tag = format!("{what} t={} chunk={} KiB", cfg.threads, cfg.chunk >> 10);
        time(&format!("h2d pageable {tag}"), &mut || {
            d.copy_h2d(dbuf, &pageable, None).unwrap()
        });
        time(&format!("d2h pageable {tag}"), &mut || {
            d.copy_d2h(&mut pageable, dbuf, None).unwrap()
        });
    }
    d.set_staging(default).unwrap();
    d.free(pinned, MemKind::Pinned).unwrap();
    d.free(dbuf, MemKind::Device).unwrap();
    d.free(buf, MemKind::Device).unwrap();
    d.module_unload(m).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn staged_copies_are_exact_and_ordered() {
    let mut d = dev();
    let cfg = StagingConfig {
        threads: 3,
        chunk: 1 << 20,
        threshold: 1 << 20,
    };
    d.set_staging(cfg).unwrap();
    let cap = 40usize << 20;
    let base = d.alloc(cap as u64 + 8192, MemKind::Device).unwrap();
    let s = d.stream_create().unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for (len, dev_off, stream) in [
        (1usize << 20, 0u64, None),
        ((1 << 20) + 3, 4097, Some(s)),
        ((37 << 20) + 5, 1, None),
        (5 << 20, 8191, Some(0)),
        (cap, 0, Some(s)),
    ] {
        let src: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        d.copy_h2d(base + dev_off, &src, stream).unwrap();
        let mut back = vec![0u8; len];
        d.copy_d2h(&mut back, base + dev_off, stream).unwrap();
        assert!(
            back == src,
            "staged round trip of {len} bytes at +{dev_off} on {stream:?}"
        );
        // Unstaged read of the same bytes agrees.
        d.set_staging(StagingConfig::disabled()).unwrap();
        let mut direct = vec![0u8; len];
        d.copy_d2h(&mut direct, base + dev_off, None).unwrap();
        assert!(direct == src, "direct read after staged write ({len})");
        d.set_staging(cfg).unwrap();
    }
    // Ordering: work queued on a user stream before a staged D2H on that stream.
    d.memset(base, 0x77, cap as u64, Some(s)).unwrap();
    let mut back = vec![0u8; cap];
    d.copy_d2h(&mut back, base, Some(s)).unwrap();
    assert!(
        back.iter().all(|&b| b == 0x77),
        "staged D2H on s ran before the memset on s"
    );
    // A synchronous (legacy-stream) D2H after work on a blocking user stream.
    d.memset(base, 0x33, cap as u64, Some(s)).unwrap();
    d.copy_d2h(&mut back, base, None).unwrap();
    assert!(
        back.iter().all(|&b| b == 0x33),
        "synchronous staged D2H ran before the memset on a blocking stream"
    );
    // And a staged H2D is complete for work queued after it.
    let ones = vec![1u8; cap];
    d.copy_h2d(base, &ones, Some(s)).unwrap();
    d.copy_d2d(base + cap as u64, base, 4096, Some(s)).unwrap();
    let mut tail = vec![0u8; 4096];
    d.copy_d2h(&mut tail, base + cap as u64, Some(s)).unwrap();
    assert!(tail.iter().all(|&b| b == 1));
    d.stream_destroy(s).unwrap();
    d.free(base, MemKind::Device).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn host_buffers_are_pinned_exact_and_not_staged() {
    let mut d = dev();
    let len = (24usize << 20) + 5;
    let base = d.alloc(len as u64, MemKind::Device).unwrap();
    let mut up = d
        .host_buffer(len)
        .unwrap()
        .expect("CUDA gives host buffers");
    for (i, b) in up.iter_mut().enumerate() {
        *b = (i * 7 + (i >> 12)) as u8;
    }
    let mut down = d.host_buffer(len).unwrap().unwrap();
    assert!(
        !d.stages(&up) && !d.stages(&down[1..]),
        "inside host buffers"
    );
    assert!(
        d.stages(&vec![0u8; len]),
        "pageable memory of that size is staged"
    );
    let s = d.stream_create().unwrap();
    for stream in [None, Some(s)] {
        down.fill(0);
        d.copy_h2d(base, &up, stream).unwrap();
        d.copy_d2h(&mut down, base, stream).unwrap();
        assert!(
            down[..] == up[..],
            "round trip through host buffers on {stream:?}"
        );
    }
    d.stream_destroy(s).unwrap();
    d.free(base, MemKind::Device).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn globals_shared_memory_opt_in_and_launch_attributes() {
    use hrr_core::{HexBytes, LaunchAttr};
    let mut d = dev();
    let m = d.module_load(PTX.as_bytes()).unwrap();
    let (g, size) = d.global(m, "hrr_table").unwrap();
    assert_eq!(size, 256);
    let table: Vec<u8> = (0..64u32).flat_map(|i| (i * 7 + 1).to_le_bytes()).collect();
    d.copy_h2d(g, &table, None).unwrap();
    let out = d.alloc(256, MemKind::Device).unwrap();
    let f = d.function(m, "hrr_table_copy").unwrap();
    let (po, n) = (out.to_le_bytes(), 64u32.to_le_bytes());
    let args = [
        LaunchArg {
            offset: 0,
            bytes: &po,
        },
        LaunchArg {
            offset: 8,
            bytes: &n,
        },
    ];
    // 64 KiB + 256 of dynamic shared memory: past the 48 KiB default, so
    // the backend must opt the function in; and a cluster of one block.
    let cluster = LaunchAttr {
        id: cuda_api::launch_attr::CLUSTER_DIMENSION,
        hex: HexBytes([1u32, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect()),
    };
    assert!(d.launch_attr_supported(cluster.id));
    assert!(!d.launch_attr_supported(cuda_api::launch_attr::PROGRAMMATIC_EVENT));
    for attrs in [&[][..], std::slice::from_ref(&cluster)] {
        d.memset(out, 0, 256, None).unwrap();
        d.launch(&Launch {
            event: 0,
            func: f,
            grid: [1, 1, 1],
            block: [64, 1, 1],
            shmem: 65536 + 256,
            stream: 0,
            args: &args,
            attrs,
        })
        .unwrap_or_else(|e| panic!("launch with {} attribute(s): {e}", attrs.len()));
        let mut back = vec![0u8; 256];
        d.copy_d2h(&mut back, out, None).unwrap();
        assert_eq!(back, table, "with {} attribute(s)", attrs.len());
    }
    let err = d.global(m, "no_such_global").unwrap_err();
    assert_eq!(err.call(), "cuModuleGetGlobal_v2");
    d.free(out, MemKind::Device).unwrap();
    d.module_unload(m).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn virtual_memory_pieces_are_contiguous() {
    let mut d = dev();
    const CHUNK: u64 = 2 << 20;
    let va = d.va_reserve(64 * CHUNK).unwrap();
    let a = d.mem_create(CHUNK, MemKind::Device).unwrap();
    let b = d.mem_create(CHUNK, MemKind::Device).unwrap();
    // Mapped in the other order of creation: physical order does not matter.
    d.mem_map(va + CHUNK, CHUNK, 0, a).unwrap();
    d.mem_map(va, CHUNK, 0, b).unwrap();
    let mut zero = vec![1u8; 2 * CHUNK as usize];
    d.copy_d2h(&mut zero, va, None).unwrap();
    assert!(zero.iter().all(|&v| v == 0), "mapped memory is zero-filled");
    // A buffer across the two pieces, written, computed on, read back.
    let n = 1u32 << 18; // 1 MiB of f32, half in each piece
    let at = va + CHUNK - 2 * n as u64;
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    d.copy_h2d(at, &f32s(&x), None).unwrap();
    let m = d.module_load(PTX.as_bytes()).unwrap();
    let f = d.function(m, "hrr_axpy").unwrap();
    let (py, px, s, nn) = (
        at.to_le_bytes(),
        at.to_le_bytes(),
        1.0f32.to_le_bytes(),
        n.to_le_bytes(),
    );
    let args = [
        LaunchArg {
            offset: 0,
            bytes: &py,
        },
        LaunchArg {
            offset: 8,
            bytes: &px,
        },
        LaunchArg {
            offset: 16,
            bytes: &s,
        },
        LaunchArg {
            offset: 20,
            bytes: &nn,
        },
    ];
    d.launch(&Launch {
        event: 0,
        func: f,
        grid: [n.div_ceil(256), 1, 1],
        block: [256, 1, 1],
        shmem: 0,
        stream: 0,
        args: &args,
        attrs: &[],
    })
    .unwrap();
    let mut out = vec![0u8; 4 * n as usize];
    d.copy_d2h(&mut out, at, None).unwrap();
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_eq!(out, f32s(&want), "y += 1*y across the pieces");
    d.mem_unmap(va, CHUNK).unwrap();
    d.mem_unmap(va + CHUNK, CHUNK).unwrap();
    d.mem_release(a).unwrap();
    d.mem_release(b).unwrap();
    d.va_free(va, 64 * CHUNK).unwrap();
    d.module_unload(m).unwrap();
}

/// A graph of every node kind the backend builds, launched with the
/// driver's graph API twice (new host input in the same buffer, as the
/// engine does) and node by node, then released.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn graphs_build_launch_and_release() {
    use hrr_replay::graph::{GraphNodeSpec, GraphSpec, HostRange, NodeSpec, run_in_order};
    let mut d = dev();
    let m = d.module_load(PTX.as_bytes()).unwrap();
    let f = d.function(m, "hrr_axpy").unwrap();
    let s = d.stream_create().unwrap();
    let ev = d.event_create().unwrap();
    let n = 4096u32;
    let bytes = 4 * n as u64;
    let (dx, dy, dz) = (
        d.alloc(bytes, MemKind::Device).unwrap(),
        d.alloc(bytes, MemKind::Device).unwrap(),
        d.alloc(bytes, MemKind::Device).unwrap(),
    );
    let mut input = vec![0u8; bytes as usize].into_boxed_slice();
    let mut output = vec![0u8; bytes as usize].into_boxed_slice();
    let (py, px, a, nn) = (
        dy.to_le_bytes(),
        dx.to_le_bytes(),
        2.0f32.to_le_bytes(),
        n.to_le_bytes(),
    );
    let args = [
        LaunchArg {
            offset: 0,
            bytes: &py,
        },
        LaunchArg {
            offset: 8,
            bytes: &px,
        },
        LaunchArg {
            offset: 16,
            bytes: &a,
        },
        LaunchArg {
            offset: 20,
            bytes: &nn,
        },
    ];
    let x_of = |round: u32| -> Vec<f32> { (0..n).map(|i| ((i * 3 + round) % 97) as f32).collect() };
    for (round, graphs) in [(0u32, true), (1, true), (2, false)] {
        input.copy_from_slice(&f32s(&x_of(round)));
        let nodes = vec![
            GraphNodeSpec {
                op: NodeSpec::H2d {
                    dst: dx,
                    src: HostRange::of(&mut input[..]),
                },
                deps: vec![],
            },
            GraphNodeSpec {
                op: NodeSpec::Memset {
                    dst: dy,
                    value: 0,
                    size: bytes,
                },
                deps: vec![],
            },
            GraphNodeSpec {
                op: NodeSpec::Kernel(Launch {
                    event: 0,
                    func: f,
                    grid: [n / 256, 1, 1],
                    block: [256, 1, 1],
                    shmem: 0,
                    stream: s,
                    args: &args,
                    attrs: &[],
                }),
                deps: vec![0, 1],
            },
            GraphNodeSpec {
                op: NodeSpec::EventRecord(ev),
                deps: vec![2],
            },
            GraphNodeSpec {
                op: NodeSpec::D2d {
                    dst: dz,
                    src: dy,
                    size: bytes,
                },
                deps: vec![3],
            },
            GraphNodeSpec {
                op: NodeSpec::Empty,
                deps: vec![4],
            },
            GraphNodeSpec {
                op: NodeSpec::D2h {
                    dst: HostRange::of(&mut output[..]),
                    src: dz,
                },
                deps: vec![5],
            },
        ];
        let g = GraphSpec {
            id: 7,
            nodes: &nodes,
        };
        if graphs {
            d.graph_launch(&g, s).unwrap();
        } else {
            run_in_order(&mut d, &g, s).unwrap();
        }
        d.stream_sync(s).unwrap();
        let want: Vec<f32> = x_of(round).iter().map(|x| 2.0 * x).collect();
        assert_eq!(
            &output[..],
            &f32s(&want)[..],
            "round {round} (graph API: {graphs})"
        );
    }
    d.graph_release(7).unwrap();
    d.graph_release(7).unwrap(); // a second release is a no-op
    d.event_destroy(ev).unwrap();
    d.stream_destroy(s).unwrap();
    for p in [dx, dy, dz] {
        d.free(p, MemKind::Device).unwrap();
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn launches_on_the_launch_thread_keep_their_order_and_name_their_failure() {
    let mut d = dev();
    let m = d.module_load(PTX.as_bytes()).unwrap();
    let f = d.function(m, "hrr_axpy").unwrap();
    assert!(d.launch_thread(true, None).unwrap());
    let n = 4096u32;
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let (dx, dy) = (
        d.alloc(4 * n as u64, MemKind::Device).unwrap(),
        d.alloc(4 * n as u64, MemKind::Device).unwrap(),
    );
    d.copy_h2d(dx, &f32s(&x), None).unwrap();
    let (py, px, a, nn) = (
        dy.to_le_bytes(),
        dx.to_le_bytes(),
        2.0f32.to_le_bytes(),
        n.to_le_bytes(),
    );
    let mut packed = Vec::new();
    for b in [&py[..], &px[..], &a[..], &nn[..]] {
        packed.extend_from_slice(b);
    }
    let args = [LaunchArg {
        offset: 0,
        bytes: &packed,
    }];
    let axpy = |event| Launch {
        event,
        func: f,
        grid: [n.div_ceil(256), 1, 1],
        block: [256, 1, 1],
        shmem: 0,
        stream: 0,
        args: &args,
        attrs: &[],
    };
    // Each launch adds 2x to y: the copy sees all of them, made in order
    // before it.
    let launches = 1000u32;
    for i in 0..launches {
        d.launch(&axpy(u64::from(i))).unwrap();
    }
    let mut out = vec![0u8; 4 * n as usize];
    d.copy_d2h(&mut out, dy, None).unwrap();
    let got: Vec<f32> = out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..n as usize {
        assert_eq!(got[i], launches as f32 * 2.0 * x[i], "element {i}");
    }
    // 2048 threads per block is past the H200's 1024: the driver refuses the
    // launch, which is reported by the next call, naming the launch's event.
    let mut bad = axpy(77);
    bad.block = [2048, 1, 1];
    d.launch(&bad).unwrap();
    let err = d.device_sync().unwrap_err();
    println!("late launch error: {err}");
    assert!(
        matches!(err, DeviceError::Deferred { event: 77, .. }),
        "{err:?}"
    );
    assert_eq!((err.call(), err.code()), ("cuLaunchKernel", Some(1)));
    d.device_sync().unwrap();
    assert!(!d.launch_thread(false, None).unwrap());
    d.module_unload(m).unwrap();
}

/// Arrays, copies to, from and out of them (`cuMemcpy3D_v2`, on a stream
/// too), a texture and a surface object over one from CUDA's descriptions.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn arrays_copies_and_objects() {
    let mut d = dev();
    let (w, h) = (8u64, 4u64);
    let row = w * 4;
    let src: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 3.0).collect();
    // CUDA_ARRAY3D_SURFACE_LDST (2): a surface may view it.
    let desc = ArrayDesc {
        format: 0x20,
        channels: 1,
        extent: [w, h, 0],
        flags: 2,
    };
    let arr = d.array_create(&desc).unwrap();
    let on = |pos| ArraySide::Array {
        array: arr,
        pos,
        element: 4,
    };
    let bytes = f32s(&src);
    d.copy_array(ArrayCopy {
        dst: on([0, 0, 0]),
        src: ArraySide::Host,
        extent: [row, h, 1],
        stream: None,
        host: HostSide::Src(&bytes),
    })
    .unwrap();
    // Array → pitched device memory (a 64-byte pitch) → host.
    let lin = d.alloc(64 * h, MemKind::Device).unwrap();
    d.copy_array(ArrayCopy {
        dst: ArraySide::Device {
            ptr: lin,
            pitch: [64, 64 * h],
        },
        src: on([0, 0, 0]),
        extent: [row, h, 1],
        stream: None,
        host: HostSide::None,
    })
    .unwrap();
    let mut back = vec![0u8; (64 * h) as usize];
    d.copy_d2h(&mut back, lin, None).unwrap();
    for y in 0..h as usize {
        assert_eq!(
            back[y * 64..y * 64 + row as usize],
            bytes[y * 32..y * 32 + 32]
        );
    }
    // A window (x 2..6, rows 1..3) out of the array on a stream.
    let s = d.stream_create().unwrap();
    let mut window = vec![0u8; 16 * 2];
    d.copy_array(ArrayCopy {
        dst: ArraySide::Host,
        src: on([8, 1, 0]),
        extent: [16, 2, 1],
        stream: Some(s),
        host: HostSide::Dst(&mut window),
    })
    .unwrap();
    let want: Vec<u8> = (1..3)
        .flat_map(|y| bytes[y * 32 + 8..y * 32 + 24].to_vec())
        .collect();
    assert_eq!(window, want);
    // CUDA_RESOURCE_DESC over the array, CUDA_TEXTURE_DESC with point
    // filtering and clamped addresses (mode 1).
    let mut res = vec![0u8; 144];
    res[8..16].copy_from_slice(&arr.to_le_bytes());
    let mut tex = vec![0u8; 104];
    tex[..8].copy_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0]);
    let t = d.tex_create(&res, &tex, None).unwrap();
    let sf = d.surf_create(&res).unwrap();
    assert!(t != 0 && sf != 0, "objects {t} {sf}");
    assert!(
        d.tex_create(&res[..100], &tex, None).is_err(),
        "a short description"
    );
    d.object_destroy(sf, true).unwrap();
    d.object_destroy(t, false).unwrap();
    d.array_destroy(arr).unwrap();
    d.free(lin, MemKind::Device).unwrap();
    d.stream_destroy(s).unwrap();
}
