//! The safe wrapper against real libraries: hrr's CPU runtime (which exports
//! the HSA pool subset) and, when installed, ROCm's libhsa-runtime64.so.1
//! (without an AMD GPU its hsa_init fails; that must be a clean error).

use hsa_sys::raw::*;
use hsa_sys::{DeviceType, Error, Hsa};
use std::path::PathBuf;
use std::process::Command;

fn cpu_runtime() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let dir = if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().unwrap()
    } else {
        deps
    };
    let lib = dir.join("libhrr_hip_cpu.so");
    if !lib.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "hrr-runtime-cpu"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        assert!(
            cmd.status().expect("cargo build").success(),
            "cargo build -p hrr-runtime-cpu failed"
        );
    }
    lib
}

#[test]
fn load_global_binds_through_the_global_scope() {
    let path = cpu_runtime();
    let hsa = Hsa::load_global(&path).expect("load libhrr_hip_cpu.so as HSA, RTLD_GLOBAL");
    // Nothing is preloaded into this test: the global scope finds the runtime itself.
    let addr = hsa.fns().hsa_amd_memory_pool_allocate as usize;
    let mut info = DlInfo {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`.
    assert_ne!(unsafe { dladdr(addr as *const _, &mut info) }, 0);
    assert!(!info.dli_fname.is_null());
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    assert!(
        file.to_string_lossy().ends_with("libhrr_hip_cpu.so"),
        "{file:?}"
    );
    let pool = hsa.gpu_coarse_pool().unwrap();
    let buf = hsa.allocate(&pool, 4096).unwrap();
    hsa.allow_access_all(&buf).unwrap();
    buf.free().unwrap();
}

/// `Dl_info` of `<dlfcn.h>` (this test crate does not depend on libc).
#[repr(C)]
struct DlInfo {
    dli_fname: *const std::ffi::c_char,
    dli_fbase: *mut std::ffi::c_void,
    dli_sname: *const std::ffi::c_char,
    dli_saddr: *mut std::ffi::c_void,
}

unsafe extern "C" {
    fn dladdr(addr: *const std::ffi::c_void, info: *mut DlInfo) -> std::ffi::c_int;
}

#[test]
fn cpu_runtime_agents_pools_and_allocation() {
    let hsa = Hsa::load(cpu_runtime()).expect("load libhrr_hip_cpu.so as HSA");
    let agents = hsa.agents().unwrap();
    assert!(
        agents.iter().any(|a| a.device == DeviceType::Gpu),
        "{agents:?}"
    );
    assert!(
        agents.iter().any(|a| a.device == DeviceType::Cpu),
        "{agents:?}"
    );
    assert!(
        agents
            .iter()
            .all(|a| !a.name.is_empty() && a.name.len() < 64),
        "{agents:?}"
    );

    let pool = hsa.gpu_coarse_pool().unwrap();
    assert!(
        pool.is_coarse_grained() && pool.runtime_alloc_allowed && pool.size > 0,
        "{pool:?}"
    );
    let gpu = agents.iter().find(|a| a.device == DeviceType::Gpu).unwrap();
    assert_eq!(pool.agent, gpu.handle);

    let a = hsa.allocate(&pool, 256 << 10).unwrap();
    let b = hsa.allocate(&pool, 4096).unwrap();
    assert_eq!(a.len(), 256 << 10);
    assert!(
        a.addr() != 0 && (a.addr() + a.len() <= b.addr() || b.addr() + b.len() <= a.addr()),
        "{a:?} {b:?}"
    );
    hsa.allow_access_all(&a).unwrap();
    hsa.allow_access(&agents[..1], &b).unwrap();
    a.free().unwrap();
    drop(b); // freed by Drop

    assert!(matches!(hsa.allocate(&pool, 0), Err(Error::ZeroSize)));
    // A pool handle the runtime never gave out: a status error with the runtime's text.
    let mut bogus = pool.clone();
    bogus.handle = hsa_amd_memory_pool_t { handle: 0xdead };
    match hsa.allocate(&bogus, 64) {
        Err(Error::Status {
            status, message, ..
        }) => {
            assert_eq!(status, HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
            assert!(message.contains("INVALID_MEMORY_POOL"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn two_instances_nest_init_and_shutdown() {
    let lib = cpu_runtime();
    let h1 = Hsa::load(&lib).unwrap();
    {
        let h2 = Hsa::load(&lib).unwrap();
        assert!(!h2.agents().unwrap().is_empty());
    }
    // h2's hsa_shut_down must not have shut h1's runtime down (hsa_init is counted).
    assert!(!h1.agents().unwrap().is_empty());
}

#[test]
fn rocm_runtime_without_gpu_is_a_clean_error() {
    if !std::path::Path::new("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1").exists() {
        eprintln!("SKIP: libhsa-runtime64.so.1 not installed (apt-get install libhsa-runtime64-1)");
        return;
    }
    if std::path::Path::new("/dev/kfd").exists() {
        // An AMD GPU: the real runtime must find it.
        let hsa = Hsa::load_default().expect("ROCm HSA runtime with /dev/kfd");
        let pool = hsa.gpu_coarse_pool().expect("GPU coarse-grained pool");
        let buf = hsa.allocate(&pool, 1 << 20).unwrap();
        hsa.allow_access_all(&buf).unwrap();
        return;
    }
    match Hsa::load_default() {
        Err(Error::Status {
            call: "hsa_init",
            status,
            ..
        }) => assert_ne!(status, HSA_STATUS_SUCCESS),
        other => panic!("expected hsa_init to fail without /dev/kfd, got {other:?}"),
    }
}
