//! `MemDevice` (tests and fuzzing, feature `testkit`): a [`Device`] whose
//! memory is this process's, so that engine tests see real copies without a
//! runtime. It can hand out host buffers as a GPU backend hands out pinned
//! ones, and remembers which copies went through them. For fuzzing it can
//! cap its memory (`max_bytes`, as a device runs out) and accept code
//! objects and launches (`accept_code`: a launch only packs its arguments).
//! Virtual memory works as CUDA's: a reservation is address space only,
//! physical allocations (`mem_create`) are mapped into it piece by piece,
//! and an access must lie in mapped pieces (it may span several, as the
//! reservation's addresses are contiguous).
//! Placement works when `granularity` is set: `reserve_at` refuses ranges
//! that touch `taken` (memory something else holds), and `alloc_at` refuses
//! a granule another placed allocation holds.

use std::collections::{BTreeMap, HashMap};

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
    /// Reservations: base → size.
    pub reserved: BTreeMap<u64, u64>,
    /// Physical allocations by handle.
    pub physical: HashMap<Handle, Vec<u8>>,
    /// Mapped pieces: virtual base → (size, handle, offset in it).
    pub mapped: BTreeMap<u64, (u64, Handle, u64)>,
    /// Globals of `global`: name → (address, size); backed by `mem`.
    pub globals: HashMap<String, (u64, u64)>,
    /// Placement granularity; `None`: this device cannot place.
    pub granularity: Option<u64>,
    /// Ranges `(base, size)` held by something else: not reservable.
    pub taken: Vec<(u64, u64)>,
    /// Placement reservations: base → end.
    pub place_reserved: BTreeMap<u64, u64>,
    /// Placed allocations: address → granule-rounded (start, end) they hold.
    pub placed: BTreeMap<u64, (u64, u64)>,
    /// Whether this device has memory pools (off: the trait's defaults).
    pub has_pools: bool,
    /// Pools by handle: the blocks given back to each, `(address, size)`,
    /// reused first-fit by size as a runtime's pool reuses them.
    pub pools: HashMap<Handle, Vec<(u64, u64)>>,
    /// Live pool allocations: address → (pool, size).
    pub pool_allocs: HashMap<u64, (Handle, u64)>,
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

    /// Calls `f(bytes, done)` for each piece of `[addr, addr + len)`, in
    /// order: one allocation holding it all, or mapped pieces covering it
    /// without a gap.
    fn each_piece(
        &mut self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(&mut [u8], usize),
    ) -> Result<(), DeviceError> {
        if let Some((base, v)) = self.mem.range_mut(..=addr).next_back()
            && addr - *base < v.len().max(1) as u64
        {
            let off = (addr - base) as usize;
            if off.checked_add(len).is_none_or(|end| end > v.len()) {
                return Err(unsupported("copy past the end of an allocation"));
            }
            f(&mut v[off..off + len], 0);
            return Ok(());
        }
        let mut done = 0usize;
        while done < len {
            let at = addr + done as u64;
            let (base, &(size, handle, offset)) = self
                .mapped
                .range(..=at)
                .next_back()
                .filter(|(b, (size, ..))| at < **b + size)
                .ok_or_else(|| unsupported("address outside every allocation and mapping"))?;
            let off = (offset + (at - base)) as usize;
            let n = ((base + size - at) as usize).min(len - done);
            let v = self
                .physical
                .get_mut(&handle)
                .ok_or_else(|| unsupported("mapping of a released handle"))?;
            f(&mut v[off..off + n], done);
            done += n;
        }
        Ok(())
    }
}

impl Device for MemDevice {
    fn name(&self) -> String {
        "memory".into()
    }
    fn pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        if !self.has_pools {
            return Ok(None);
        }
        let h = 0x9000 + self.pools.len() as u64;
        self.pools.insert(h, Vec::new());
        Ok(Some(h))
    }
    fn pool_destroy(&mut self, pool: Handle) -> Result<(), DeviceError> {
        for (p, _) in self.pools.remove(&pool).unwrap_or_default() {
            self.mem.remove(&p);
        }
        Ok(())
    }
    fn pool_alloc(&mut self, pool: Handle, size: u64, _: Handle) -> Result<u64, DeviceError> {
        let free = self
            .pools
            .get_mut(&pool)
            .ok_or_else(|| unsupported("unknown pool"))?;
        let p = match free.iter().position(|&(_, s)| s == size) {
            Some(i) => free.remove(i).0,
            None => self.alloc(size, MemKind::Device)?,
        };
        self.pool_allocs.insert(p, (pool, size));
        Ok(p)
    }
    fn pool_free(&mut self, ptr: u64, _: Handle) -> Result<(), DeviceError> {
        let (pool, size) = self
            .pool_allocs
            .remove(&ptr)
            .ok_or_else(|| unsupported("not a pool allocation"))?;
        if let Some(free) = self.pools.get_mut(&pool) {
            free.push((ptr, size));
        }
        Ok(())
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
    fn placement_granularity(&mut self) -> Option<u64> {
        self.granularity
    }
    fn reserve_at(&mut self, base: u64, size: u64) -> Result<bool, DeviceError> {
        let end = base + size;
        // Neither what something else holds nor what is reserved already.
        let reserved = self
            .place_reserved
            .range(..end)
            .next_back()
            .is_some_and(|(_, &e)| e > base);
        if reserved || self.taken.iter().any(|&(b, s)| b < end && base < b + s) {
            return Ok(false);
        }
        self.place_reserved.insert(base, end);
        Ok(true)
    }
    fn alloc_at(&mut self, addr: u64, size: u64, _: MemKind) -> Result<Option<u64>, DeviceError> {
        let g = self.granularity.unwrap_or(1);
        let (start, end) = (addr / g * g, (addr + size.max(1)).next_multiple_of(g));
        let inside = self
            .place_reserved
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| end <= e);
        let shared = self.placed.values().any(|&(b, e)| b < end && start < e);
        if !inside || shared {
            return Ok(None);
        }
        self.placed.insert(addr, (start, end));
        self.mem.insert(addr, vec![0; size as usize]);
        self.allocated += size;
        Ok(Some(addr))
    }
    fn free(&mut self, ptr: u64, _: MemKind) -> Result<(), DeviceError> {
        self.placed.remove(&ptr);
        if let Some(v) = self.mem.remove(&ptr) {
            self.allocated -= v.len() as u64;
        }
        Ok(())
    }
    fn copy_h2d(&mut self, dst: u64, src: &[u8], _: Option<Handle>) -> Result<(), DeviceError> {
        let pinned = self.in_host_buffer(src);
        self.h2d_from_host_buffer.push(pinned);
        self.each_piece(dst, src.len(), |piece, at| {
            piece.copy_from_slice(&src[at..at + piece.len()])
        })
    }
    fn copy_d2h(&mut self, dst: &mut [u8], src: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        let pinned = self.in_host_buffer(dst);
        self.d2h_into_host_buffer.push(pinned);
        let len = dst.len();
        self.each_piece(src, len, |piece, at| {
            dst[at..at + piece.len()].copy_from_slice(piece)
        })
    }
    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        // Both ranges are checked before a buffer of `size` bytes is made.
        self.each_piece(src, size as usize, |_, _| {})?;
        self.each_piece(dst, size as usize, |_, _| {})?;
        let mut bytes = vec![0; size as usize];
        self.copy_d2h(&mut bytes, src, None)?;
        self.d2h_into_host_buffer.pop();
        self.copy_h2d(dst, &bytes, None)?;
        self.h2d_from_host_buffer.pop();
        Ok(())
    }
    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.each_piece(dst, size as usize, |piece, _| piece.fill(value))
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
    fn module_load(&mut self, image: &[u8]) -> Result<Handle, DeviceError> {
        // Any image loads (launches need `accept_code`): globals need a module.
        Ok(0x2_0000 + image.len() as u64)
    }
    fn module_unload(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
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
    fn va_reserve(&mut self, size: u64) -> Result<u64, DeviceError> {
        // Address space only: far from the allocations, nothing behind it.
        let p = self.next + (1 << 40);
        self.next += size.max(1).next_multiple_of(4096) + (1 << 40);
        self.reserved.insert(p, size);
        Ok(p)
    }
    fn va_free(&mut self, ptr: u64, _: u64) -> Result<(), DeviceError> {
        self.reserved
            .remove(&ptr)
            .map(drop)
            .ok_or_else(|| unsupported("va_free of no reservation"))
    }
    fn mem_create(&mut self, size: u64, _: MemKind) -> Result<Handle, DeviceError> {
        let h = 0x4_0000 + self.physical.len() as u64;
        self.physical.insert(h, vec![0; size as usize]);
        Ok(h)
    }
    fn mem_release(&mut self, handle: Handle) -> Result<(), DeviceError> {
        self.physical
            .remove(&handle)
            .map(drop)
            .ok_or_else(|| unsupported("mem_release of no handle"))
    }
    fn mem_map(
        &mut self,
        ptr: u64,
        size: u64,
        offset: u64,
        handle: Handle,
    ) -> Result<(), DeviceError> {
        let inside = self
            .reserved
            .range(..=ptr)
            .next_back()
            .is_some_and(|(b, s)| ptr + size <= b + s);
        let fits = self
            .physical
            .get(&handle)
            .is_some_and(|v| offset + size <= v.len() as u64);
        if !inside || !fits {
            return Err(unsupported("mem_map outside a reservation or its handle"));
        }
        self.mapped.insert(ptr, (size, handle, offset));
        Ok(())
    }
    fn mem_unmap(&mut self, ptr: u64, _: u64) -> Result<(), DeviceError> {
        self.mapped
            .remove(&ptr)
            .map(drop)
            .ok_or_else(|| unsupported("mem_unmap of no mapping"))
    }
    fn global(&mut self, _: Handle, name: &str) -> Result<(u64, u64), DeviceError> {
        if let Some(&g) = self.globals.get(name) {
            return Ok(g);
        }
        Err(unsupported("global of an unknown name"))
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
