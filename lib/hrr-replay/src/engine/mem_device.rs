//! `MemDevice` (tests and fuzzing, feature `testkit`): a [`Device`] whose
//! memory is this process's, so that engine tests see real copies without a
//! runtime. It can hand out host buffers as a GPU backend hands out pinned
//! ones, and remembers which copies went through them. For fuzzing it can
//! cap its memory (`max_bytes`, as a device runs out) and accept code
//! objects and launches (`accept_code`: a launch only packs its arguments).

use std::collections::BTreeMap;

use crate::device::{Device, DeviceError, Handle, HostBuffer, HostMemory, Launch};
use hrr_core::event::MemKind;

/// The in-process device; see the module docs.
#[derive(Default)]
pub struct MemDevice {
    mem: BTreeMap<u64, Vec<u8>>,
    next: u64,
    /// Whether `host_buffer` gives buffers (a GPU backend) or `None` (the CPU runtime).
    pub pinned: bool,
    /// `host_buffer` fails, as page-locking does when the host runs out.
    pub fail_host_buffers: bool,
    /// `(address, length)` of every host buffer handed out.
    pub host_buffers: Vec<(usize, usize)>,
    /// For each H2D, whether its host side lay in a host buffer.
    pub h2d_from_host_buffer: Vec<bool>,
    /// For each D2H, whether its host side lay in a host buffer.
    pub d2h_into_host_buffer: Vec<bool>,
    /// Most bytes allocated at once; more is out of memory.
    pub max_bytes: u64,
    allocated: u64,
    /// Modules load, functions resolve, launches pack their arguments.
    pub accept_code: bool,
    /// The packed argument buffer of every launch (with `accept_code`).
    pub launches: Vec<Vec<u8>>,
}

struct Buffer(Vec<u8>);

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl HostMemory for Buffer {}

fn unsupported(call: &'static str) -> DeviceError {
    DeviceError::Call {
        call,
        code: -1,
        message: "not used by these tests".into(),
    }
}

impl MemDevice {
    /// An empty device with unbounded memory that refuses code; `pinned`:
    /// whether it hands out host buffers.
    pub fn new(pinned: bool) -> MemDevice {
        MemDevice {
            next: 0x1000_0000,
            pinned,
            max_bytes: u64::MAX,
            ..MemDevice::default()
        }
    }

    fn in_host_buffer(&self, host: &[u8]) -> bool {
        let (p, n) = (host.as_ptr() as usize, host.len());
        self.host_buffers
            .iter()
            .any(|&(b, len)| p >= b && p + n <= b + len)
    }

    /// The allocation holding `[addr, addr + len)` and the offset in it.
    fn at(&mut self, addr: u64, len: usize) -> Result<(&mut Vec<u8>, usize), DeviceError> {
        let (base, v) = self
            .mem
            .range_mut(..=addr)
            .next_back()
            .ok_or_else(|| unsupported("address outside every allocation"))?;
        let off = (addr - base) as usize;
        if off.checked_add(len).is_none_or(|end| end > v.len()) {
            return Err(unsupported("copy past the end of an allocation"));
        }
        Ok((v, off))
    }
}

impl Device for MemDevice {
    fn name(&self) -> String {
        "memory".into()
    }
    fn target(&self) -> String {
        "cpu".into()
    }
    fn alloc(&mut self, size: u64, _: MemKind) -> Result<u64, DeviceError> {
        if self.allocated.saturating_add(size) > self.max_bytes {
            return Err(DeviceError::Call {
                call: "alloc",
                code: 2,
                message: "out of memory".into(),
            });
        }
        let p = self.next;
        self.next += size.max(1).next_multiple_of(4096);
        self.mem.insert(p, vec![0; size as usize]);
        self.allocated += size;
        Ok(p)
    }
    fn free(&mut self, ptr: u64, _: MemKind) -> Result<(), DeviceError> {
        if let Some(v) = self.mem.remove(&ptr) {
            self.allocated -= v.len() as u64;
        }
        Ok(())
    }
    fn copy_h2d(&mut self, dst: u64, src: &[u8], _: Option<Handle>) -> Result<(), DeviceError> {
        let pinned = self.in_host_buffer(src);
        self.h2d_from_host_buffer.push(pinned);
        let (v, off) = self.at(dst, src.len())?;
        v[off..off + src.len()].copy_from_slice(src);
        Ok(())
    }
    fn copy_d2h(&mut self, dst: &mut [u8], src: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        let pinned = self.in_host_buffer(dst);
        self.d2h_into_host_buffer.push(pinned);
        let (v, off) = self.at(src, dst.len())?;
        dst.copy_from_slice(&v[off..off + dst.len()]);
        Ok(())
    }
    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let n = size as usize;
        let (v, off) = self.at(src, n)?;
        let bytes = v[off..off + n].to_vec();
        let (v, off) = self.at(dst, n)?;
        v[off..off + n].copy_from_slice(&bytes);
        Ok(())
    }
    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let n = size as usize;
        let (v, off) = self.at(dst, n)?;
        v[off..off + n].fill(value);
        Ok(())
    }
    fn stream_create(&mut self) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn stream_destroy(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn stream_sync(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn stream_wait_event(&mut self, _: Handle, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn device_sync(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_create(&mut self) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn event_destroy(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_record(&mut self, _: Handle, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_sync(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_elapsed_ms(&mut self, _: Handle, _: Handle) -> Result<f32, DeviceError> {
        Ok(0.0)
    }
    fn module_load(&mut self, _: &[u8]) -> Result<Handle, DeviceError> {
        if self.accept_code {
            return Ok(1);
        }
        Err(unsupported("module_load"))
    }
    fn module_unload(&mut self, _: Handle) -> Result<(), DeviceError> {
        if self.accept_code {
            return Ok(());
        }
        Err(unsupported("module_unload"))
    }
    fn function(&mut self, _: Handle, _: &str) -> Result<Handle, DeviceError> {
        if self.accept_code {
            return Ok(1);
        }
        Err(unsupported("function"))
    }
    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        if self.accept_code {
            self.launches.push(l.packed_args());
            return Ok(());
        }
        Err(unsupported("launch"))
    }
    fn host_buffer(&mut self, len: usize) -> Result<Option<HostBuffer>, DeviceError> {
        if self.fail_host_buffers {
            return Err(unsupported("host_buffer"));
        }
        if !self.pinned {
            return Ok(None);
        }
        let b = Buffer(vec![0; len]);
        self.host_buffers.push((b.as_ptr() as usize, len));
        Ok(Some(Box::new(b)))
    }
}
