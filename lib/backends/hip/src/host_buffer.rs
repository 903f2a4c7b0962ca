//! `HipHostBuffer`: page-locked host memory from `hipHostMalloc`, handed to
//! the engine ([`hrr_replay::device::Device::host_buffer`]). The HIP runtime
//! DMAs such memory directly instead of staging it, as for the application's
//! own `hipHostMalloc` buffers.

use hrr_replay::device::HostMemory;

/// Page-locked host memory from `hipHostMalloc`, freed on drop.
pub struct HipHostBuffer {
    ptr: *mut u8,
    len: usize,
    /// The runtime's `hipHostFree`; the engine drops its buffers before the
    /// device (and so the loaded runtime).
    free: crate::ffi::fns::hipHostFree,
}

impl HipHostBuffer {
    /// # Safety
    /// `ptr` is a live `hipHostMalloc` allocation of at least `len` bytes,
    /// owned by the result from now on, and `free` is the `hipHostFree` of
    /// the runtime that made it.
    pub unsafe fn from_raw(
        ptr: *mut u8,
        len: usize,
        free: crate::ffi::fns::hipHostFree,
    ) -> HipHostBuffer {
        HipHostBuffer { ptr, len, free }
    }
}

impl std::ops::Deref for HipHostBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: a live allocation of `len` bytes owned by self (from_raw).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for HipHostBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above; `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl HostMemory for HipHostBuffer {}

impl Drop for HipHostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by hipHostMalloc of this runtime, freed once.
        unsafe { (self.free)(self.ptr.cast()) };
    }
}
