//! The HIP replay backend itself, on the CPU runtime: what the pipelines do
//! not reach (host buffers are never given to the engine there).

use hrr_backend_hip::{HipDevice, HipRuntime, RuntimeLocation};
use hrr_core::MemKind;
use hrr_replay::device::Device;
use hrr_tests::tools;

fn cpu_device() -> HipDevice {
    let rt = HipRuntime::load(&RuntimeLocation::Path(tools().cpu_runtime())).unwrap();
    HipDevice::new(rt, None)
}

#[test]
fn pinned_buffers_are_zeroed_and_copy_both_ways() {
    let mut dev = cpu_device();
    assert!(
        dev.host_buffer(4096).unwrap().is_none(),
        "the CPU runtime gives the engine no host buffers (replay memory stays bounded)"
    );
    let len = (3 << 20) + 5;
    let d = dev.alloc(len as u64, MemKind::Device).unwrap();
    let mut up = dev.pinned_buffer(len).unwrap();
    assert_eq!(up.len(), len);
    assert!(
        up.iter().all(|&b| b == 0),
        "zero-filled like every replay allocation"
    );
    for (i, b) in up.iter_mut().enumerate() {
        *b = (i * 7 + (i >> 10)) as u8;
    }
    dev.copy_h2d(d, &up, None).unwrap();
    let mut down = dev.pinned_buffer(len).unwrap();
    dev.copy_d2h(&mut down, d, None).unwrap();
    assert!(
        down[..] == up[..],
        "round trip through hipHostMalloc buffers"
    );
    drop((up, down));
    dev.free(d, MemKind::Device).unwrap();
}

/// Dropping the backend leaves the runtime loaded: its threads may still be
/// starting when `hrr-play` exits, and unloading their code under them
/// crashed the replayer now and then. Checked in a child process running
/// this test alone, where no other test holds the library.
#[test]
fn the_runtime_stays_loaded_after_the_backend_is_dropped() {
    const CHILD: &str = "HRR_TEST_UNLOAD_CHILD";
    let path = tools().cpu_runtime();
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "hip_backend::the_runtime_stays_loaded_after_the_backend_is_dropped",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "child: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let loaded = || {
        // SAFETY: RTLD_NOLOAD only looks the library up; a handle it returns
        // is closed again at once.
        unsafe {
            let h = libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
            if !h.is_null() {
                libc::dlclose(h);
            }
            !h.is_null()
        }
    };
    assert!(!loaded(), "loaded before the test");
    let mut dev = cpu_device();
    let d = dev.alloc(4096, MemKind::Device).unwrap();
    dev.free(d, MemKind::Device).unwrap();
    assert!(loaded());
    drop(dev);
    assert!(loaded(), "unloaded with the backend");
}
