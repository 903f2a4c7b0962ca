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
