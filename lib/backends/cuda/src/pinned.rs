//! `PinnedBuffer`: page-locked host memory handed to the engine
//! ([`hrr_replay::device::Device::host_buffer`]), and `PinnedRanges`, the set
//! of those live so that copies from or into them skip [`crate::staging`]:
//! the driver DMAs pinned memory directly at the bus's speed, and staging it
//! again would only add a `memcpy`.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use hrr_replay::device::HostMemory;

use crate::driver::CudaDriver;
use crate::error::CudaError;

/// Address ranges of the live [`PinnedBuffer`]s of one device.
#[derive(Debug, Default)]
pub struct PinnedRanges(Mutex<BTreeMap<usize, usize>>);

impl PinnedRanges {
    /// Whether `[ptr, ptr + len)` lies inside one live buffer.
    pub fn contains(&self, ptr: *const u8, len: usize) -> bool {
        let start = ptr as usize;
        let map = self.0.lock().expect("pinned ranges poisoned");
        map.range(..=start)
            .next_back()
            .is_some_and(|(&base, &size)| start + len <= base + size)
    }
}

/// `len` bytes from `cuMemAllocHost`, freed on drop.
pub struct PinnedBuffer {
    ptr: *mut u8,
    len: usize,
    drv: &'static CudaDriver,
    ranges: Arc<PinnedRanges>,
}

impl PinnedBuffer {
    /// Allocates on the calling thread's current context (the device's).
    pub fn new(
        drv: &'static CudaDriver,
        ranges: Arc<PinnedRanges>,
        len: usize,
    ) -> Result<PinnedBuffer, CudaError> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the caller made the context current.
        drv.check("cuMemAllocHost_v2", unsafe {
            (drv.api().cuMemAllocHost)(&mut p, len.max(1))
        })?;
        let ptr = p.cast::<u8>();
        ranges
            .0
            .lock()
            .expect("pinned ranges poisoned")
            .insert(ptr as usize, len);
        Ok(PinnedBuffer {
            ptr,
            len,
            drv,
            ranges,
        })
    }
}

impl std::ops::Deref for PinnedBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `len` bytes owned by self;
        // the driver reads it only during copies the engine waits for.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for PinnedBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl HostMemory for PinnedBuffer {}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        self.ranges
            .0
            .lock()
            .expect("pinned ranges poisoned")
            .remove(&(self.ptr as usize));
        // SAFETY: `ptr` came from cuMemAllocHost and is freed once. The
        // engine drops its buffers before the device releases its context.
        unsafe { (self.drv.api().cuMemFreeHost)(self.ptr.cast()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_only_ranges_inside_one_buffer() {
        let r = PinnedRanges::default();
        r.0.lock().unwrap().insert(0x1000, 0x100);
        r.0.lock().unwrap().insert(0x2000, 0x100);
        let p = |a: usize| a as *const u8;
        assert!(r.contains(p(0x1000), 0x100));
        assert!(r.contains(p(0x1080), 0x80));
        assert!(!r.contains(p(0x1080), 0x81), "runs past the end");
        assert!(!r.contains(p(0xfff), 2), "starts before");
        assert!(!r.contains(p(0x1800), 1), "between buffers");
        assert!(r.contains(p(0x2000), 1));
        assert!(!r.contains(p(0x10), 1));
    }
}
