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
//! Memory is backed lazily ([`Backing`]): an allocation holds the bytes up to
//! the last one written, and reads past them see zeros, so that allocating
//! tens of MiB (as fuzz inputs do, up to `max_bytes`) costs nothing until
//! written; zeroing them up front was a tenth of a fuzz execution.

use std::collections::{BTreeMap, HashMap};

use crate::device::{
    ArrayCopy, ArrayDesc, ArraySide, Device, DeviceError, Handle, HostBuffer, HostMemory, HostSide,
    Launch, PoolCall,
};
use hrr_core::event::MemKind;

/// The in-process device; see the module docs.
#[derive(Default)]
pub struct MemDevice {
    mem: BTreeMap<u64, Backing>,
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
    pub physical: HashMap<Handle, Backing>,
    /// Physical allocations made so far (the next handle).
    physical_made: u64,
    /// Handles released while still mapped: as with the GPU drivers, their
    /// memory lives until the last mapping of it goes.
    released_mapped: std::collections::HashSet<Handle>,
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
    /// Arrays: an allocation of packed rows (the handle is its address) →
    /// (row bytes, slice bytes).
    pub arrays: HashMap<Handle, (u64, u64)>,
    /// Mipmapped arrays: handle → its levels' arrays.
    pub mipmaps: HashMap<Handle, Vec<Handle>>,
}

/// The memory of one allocation, `len` bytes long, of which only a prefix
/// is held: the bytes past it are zero.
#[derive(Debug, Default)]
pub struct Backing {
    len: usize,
    held: Vec<u8>,
}

impl Backing {
    /// `len` zero bytes, none held yet.
    pub fn zeroed(len: usize) -> Backing {
        Backing {
            len,
            held: Vec::new(),
        }
    }

    /// The allocation's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the allocation is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes actually held (the prefix up to the last one written).
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Copies `src` to `off`. The held prefix grows by `src` itself (and
    /// zeros before it, if it starts past the prefix), not by zeros first
    /// overwritten next: zeroing was a sixth of a fuzz execution.
    fn write(&mut self, off: usize, src: &[u8]) {
        debug_assert!(off + src.len() <= self.len);
        let held = self.held.len();
        if off >= held {
            self.held.resize(off, 0);
            self.held.extend_from_slice(src);
        } else {
            let inside = (held - off).min(src.len());
            self.held[off..off + inside].copy_from_slice(&src[..inside]);
            self.held.extend_from_slice(&src[inside..]);
        }
    }

    /// The held bytes of `[off, off + n)`: those before the held prefix ends.
    fn held_part(&self, off: usize, n: usize) -> &[u8] {
        let held = self.held.get(off..).unwrap_or_default();
        &held[..held.len().min(n)]
    }

    /// Sets `n` bytes from `off` to `value`; zeros past the held prefix are
    /// there already.
    fn fill(&mut self, off: usize, n: usize, value: u8) {
        let n = if value == 0 {
            n.min(self.held.len().saturating_sub(off))
        } else {
            n
        };
        if n == 0 {
            return;
        }
        // Bytes past the held prefix are written once, with `value`.
        let held = self.held.len();
        if off >= held {
            self.held.resize(off, 0);
            self.held.resize(off + n, value);
        } else if off + n > held {
            self.held[off..].fill(value);
            self.held.resize(off + n, value);
        } else {
            self.held[off..off + n].fill(value);
        }
    }

    /// Copies `dst.len()` bytes from `off` into `dst`.
    fn read(&self, off: usize, dst: &mut [u8]) {
        let held = self.held.get(off..).unwrap_or_default();
        let have = held.len().min(dst.len());
        dst[..have].copy_from_slice(&held[..have]);
        dst[have..].fill(0);
    }
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

fn out_of_memory(call: &'static str) -> DeviceError {
    DeviceError::Call {
        call,
        code: 2,
        message: "out of memory".into(),
    }
}

impl MemDevice {
    /// Frees a physical allocation's memory.
    fn drop_physical(&mut self, handle: Handle) {
        if let Some(b) = self.physical.remove(&handle) {
            self.allocated -= b.len() as u64;
        }
    }

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

    /// Calls `f(backing, offset, n, done)` for each piece of `[addr, addr +
    /// len)`, in order (`n` bytes at `offset` in `backing`, `done` bytes of
    /// the range before it): one allocation holding it all, or mapped
    /// pieces covering it without a gap.
    fn each_piece(
        &mut self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(&mut Backing, usize, usize, usize),
    ) -> Result<(), DeviceError> {
        if let Some((base, v)) = self.mem.range_mut(..=addr).next_back()
            && addr - *base < v.len().max(1) as u64
        {
            let off = (addr - base) as usize;
            if off.checked_add(len).is_none_or(|end| end > v.len()) {
                return Err(unsupported("copy past the end of an allocation"));
            }
            f(v, off, len, 0);
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
            f(v, off, n, done);
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
    fn pool_call(&mut self, call: PoolCall) -> Result<(), DeviceError> {
        match call {
            PoolCall::Destroy(pool) => {
                for (p, _) in self.pools.remove(&pool).unwrap_or_default() {
                    self.mem.remove(&p);
                }
            }
            PoolCall::Free(ptr, _) => {
                let (pool, size) = self
                    .pool_allocs
                    .remove(&ptr)
                    .ok_or_else(|| unsupported("not a pool allocation"))?;
                if let Some(free) = self.pools.get_mut(&pool) {
                    free.push((ptr, size));
                }
            }
            PoolCall::Trim(..) | PoolCall::SetAttr(..) | PoolCall::SetDevice(_) => {}
        }
        Ok(())
    }
    fn target(&self) -> String {
        "cpu".into()
    }
    fn alloc(&mut self, size: u64, _: MemKind) -> Result<u64, DeviceError> {
        if self.allocated.saturating_add(size) > self.max_bytes {
            return Err(out_of_memory("alloc"));
        }
        let p = self.next;
        self.next += size.max(1).next_multiple_of(4096);
        self.mem.insert(p, Backing::zeroed(size as usize));
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
        self.mem.insert(addr, Backing::zeroed(size as usize));
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
        self.each_piece(dst, src.len(), |b, off, n, at| {
            b.write(off, &src[at..at + n])
        })
    }
    fn copy_d2h(&mut self, dst: &mut [u8], src: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        let pinned = self.in_host_buffer(dst);
        self.d2h_into_host_buffer.push(pinned);
        let len = dst.len();
        self.each_piece(src, len, |b, off, n, at| b.read(off, &mut dst[at..at + n]))
    }
    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        // Both ranges are checked before anything is copied.
        let size = size as usize;
        self.each_piece(src, size, |_, _, _, _| {})?;
        self.each_piece(dst, size, |_, _, _, _| {})?;
        // Only the source's held bytes are copied (a gap between pieces as
        // zeros); the range past them is zero, which a memset of zeros
        // writes only where the destination holds bytes.
        let mut bytes = Vec::new();
        self.each_piece(src, size, |b, off, n, at| {
            let part = b.held_part(off, n);
            if !part.is_empty() {
                bytes.resize(at, 0);
                bytes.extend_from_slice(part);
            }
        })?;
        let copied = bytes.len();
        if copied > 0 {
            self.copy_h2d(dst, &bytes, None)?;
            self.h2d_from_host_buffer.pop();
        }
        if copied < size {
            self.memset(dst + copied as u64, 0, (size - copied) as u64, None)?;
        }
        Ok(())
    }
    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        _: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.each_piece(dst, size as usize, |b, off, n, _| b.fill(off, n, value))
    }
    fn array_create(&mut self, desc: &ArrayDesc) -> Result<Handle, DeviceError> {
        let row = desc.extent[0] * desc.element_bytes().unwrap_or(1);
        let slice = row * desc.extent[1].max(1);
        // NV12: the luma plane, then the chroma plane of half the rows.
        let size = if desc.format == ArrayDesc::NV12 {
            slice + slice / 2
        } else {
            slice * desc.extent[2].max(1)
        };
        let a = self.alloc(size, MemKind::Device)?;
        self.arrays.insert(a, (row, slice));
        Ok(a)
    }
    fn mipmap_create(&mut self, desc: &ArrayDesc, levels: u32) -> Result<Handle, DeviceError> {
        let arrays = (0..levels)
            .map(|l| self.array_create(&desc.level(l)))
            .collect::<Result<Vec<_>, _>>()?;
        let h = 0x6000_0000 + self.mipmaps.len() as u64;
        self.mipmaps.insert(h, arrays);
        Ok(h)
    }
    fn mipmap_level(&mut self, mipmap: Handle, level: u32) -> Result<Handle, DeviceError> {
        self.mipmaps
            .get(&mipmap)
            .and_then(|l| l.get(level as usize).copied())
            .ok_or_else(|| unsupported("no such level"))
    }
    fn mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        let levels = self
            .mipmaps
            .remove(&mipmap)
            .ok_or_else(|| unsupported("not a mipmapped array"))?;
        for a in levels {
            self.array_destroy(a)?;
        }
        Ok(())
    }
    fn array_plane(&mut self, array: Handle, plane: u32) -> Result<Handle, DeviceError> {
        let &(row, slice) = self
            .arrays
            .get(&array)
            .ok_or_else(|| unsupported("not an array"))?;
        // Plane 1 starts after the luma plane: its handle is that address.
        let (h, rows) = match plane {
            0 => (array, slice),
            1 => (array + slice, slice / 2),
            _ => return Err(unsupported("no such plane")),
        };
        self.arrays.insert(h, (row, rows));
        Ok(h)
    }
    fn array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        self.arrays.remove(&array);
        self.free(array, MemKind::Device)
    }
    fn copy_array(&mut self, mut c: ArrayCopy<'_>) -> Result<(), DeviceError> {
        // Each side's first byte and pitches: arrays are packed rows.
        let side = |d: &MemDevice, s: ArraySide| -> Result<Option<(u64, [u64; 2])>, DeviceError> {
            Ok(match s {
                ArraySide::Array { array, pos, .. } => {
                    let &(row, slice) = d
                        .arrays
                        .get(&array)
                        .ok_or_else(|| unsupported("not an array"))?;
                    Some((array + pos[0] + pos[1] * row + pos[2] * slice, [row, slice]))
                }
                ArraySide::Device { ptr, pitch } => Some((ptr, pitch)),
                ArraySide::Host => None,
            })
        };
        let (dst, src) = (side(self, c.dst)?, side(self, c.src)?);
        let [w, h, depth] = c.extent;
        for z in 0..depth {
            for y in 0..h {
                let at = |s: Option<(u64, [u64; 2])>| s.map(|(p, [r, sl])| p + y * r + z * sl);
                let packed = ((z * h + y) * w) as usize..((z * h + y + 1) * w) as usize;
                match (at(dst), at(src), &mut c.host) {
                    (Some(d), Some(s), _) => self.copy_d2d(d, s, w, None)?,
                    (Some(d), None, HostSide::Src(b)) => {
                        self.copy_h2d(d, &b[packed], None)?;
                        self.h2d_from_host_buffer.pop();
                    }
                    (None, Some(s), HostSide::Dst(b)) => {
                        self.copy_d2h(&mut b[packed], s, None)?;
                        self.d2h_into_host_buffer.pop();
                    }
                    _ => return Err(unsupported("an array copy without its host side")),
                }
            }
        }
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
            self.launches.push(l.packed_args().into_owned());
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
        // Physical memory counts against `max_bytes` as allocations do.
        if self.allocated.saturating_add(size) > self.max_bytes {
            return Err(out_of_memory("mem_create"));
        }
        // Never a live handle again, as a driver's handles (counting the
        // live ones would hand out a live one after a release).
        let h = 0x4_0000 + self.physical_made;
        self.physical_made += 1;
        self.physical.insert(h, Backing::zeroed(size as usize));
        self.allocated += size;
        Ok(h)
    }
    fn mem_release(&mut self, handle: Handle) -> Result<(), DeviceError> {
        if !self.physical.contains_key(&handle) || self.released_mapped.contains(&handle) {
            return Err(unsupported("mem_release of no handle"));
        }
        if self.mapped.values().any(|&(_, h, _)| h == handle) {
            self.released_mapped.insert(handle);
        } else {
            self.drop_physical(handle);
        }
        Ok(())
    }
    fn mem_map(
        &mut self,
        ptr: u64,
        size: u64,
        offset: u64,
        handle: Handle,
    ) -> Result<(), DeviceError> {
        // In a reservation of its own or in one placement made.
        let inside = self
            .reserved
            .range(..=ptr)
            .next_back()
            .is_some_and(|(b, s)| ptr + size <= b + s)
            || self
                .place_reserved
                .range(..=ptr)
                .next_back()
                .is_some_and(|(_, &e)| ptr + size <= e);
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
        let (_, handle, _) = self
            .mapped
            .remove(&ptr)
            .ok_or_else(|| unsupported("mem_unmap of no mapping"))?;
        if self.released_mapped.contains(&handle)
            && !self.mapped.values().any(|&(_, h, _)| h == handle)
        {
            self.released_mapped.remove(&handle);
            self.drop_physical(handle);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_to_device_copies_hold_only_the_bytes_the_source_holds() {
        let mut dev = MemDevice::new(false);
        let a = dev.alloc(1 << 20, MemKind::Device).unwrap();
        let b = dev.alloc(1 << 20, MemKind::Device).unwrap();
        dev.copy_h2d(a + 10, &[1, 2, 3], None).unwrap();
        // The destination holds bytes that the copy must clear.
        dev.copy_h2d(b, &[7; 4096], None).unwrap();
        dev.copy_d2d(b, a, 1 << 20, None).unwrap();
        assert_eq!(dev.mem[&b].held(), 4096, "the copy's zeros are not held");
        let mut out = vec![0xee; 5000];
        dev.copy_d2h(&mut out, b, None).unwrap();
        let mut want = vec![0; 5000];
        want[10..13].copy_from_slice(&[1, 2, 3]);
        assert_eq!(out, want);
        // Overlapping ranges copy as through a buffer.
        dev.copy_d2d(a + 11, a + 10, 3, None).unwrap();
        let mut out = [0xee; 5];
        dev.copy_d2h(&mut out, a + 9, None).unwrap();
        assert_eq!(out, [0, 1, 1, 2, 3]);
        // A copy of nothing held clears the destination's bytes.
        dev.copy_d2d(b + 8, a + 4096, 16, None).unwrap();
        let mut out = [0xee; 20];
        dev.copy_d2h(&mut out, b + 6, None).unwrap();
        assert_eq!(out, [0; 20]);
    }

    #[test]
    fn memory_is_held_only_up_to_the_last_byte_written() {
        let mut dev = MemDevice::new(false);
        let p = dev.alloc(64 << 20, MemKind::Device).unwrap();
        assert_eq!(dev.mem[&p].held(), 0, "an allocation holds nothing yet");
        dev.copy_h2d(p + 100, &[1, 2, 3], None).unwrap();
        assert_eq!(dev.mem[&p].held(), 103);
        // Zeros past the held prefix are there already.
        dev.memset(p + 4096, 0, 1 << 20, None).unwrap();
        assert_eq!(dev.mem[&p].held(), 103);
        dev.memset(p + 102, 0, 8, None).unwrap();
        assert_eq!(dev.mem[&p].held(), 103, "only the held byte is cleared");
        dev.memset(p + 200, 9, 2, None).unwrap();
        assert_eq!(dev.mem[&p].held(), 202);
        let mut out = vec![0xee; 300];
        dev.copy_d2h(&mut out, p + 99, None).unwrap();
        let mut want = vec![0; 300];
        want[1..3].copy_from_slice(&[1, 2]);
        want[101..103].copy_from_slice(&[9, 9]);
        assert_eq!(out, want, "bytes past the held prefix read as zeros");
        dev.copy_d2h(&mut out, p + 1000, None).unwrap();
        assert_eq!(out, [0; 300], "a read wholly past the held prefix");
        assert!(dev.copy_d2h(&mut out, p + (64 << 20) - 299, None).is_err());
        // A fill that straddles the end of the held prefix.
        dev.memset(p + 201, 5, 4, None).unwrap();
        assert_eq!(dev.mem[&p].held(), 205);
        let mut out = [0xee; 7];
        dev.copy_d2h(&mut out, p + 199, None).unwrap();
        assert_eq!(out, [0, 9, 5, 5, 5, 5, 0]);
    }

    #[test]
    fn a_handle_released_while_mapped_lives_until_unmapped() {
        let mut dev = MemDevice::new(false);
        let va = dev.va_reserve(0x2000).unwrap();
        let h = dev.mem_create(0x1000, MemKind::Device).unwrap();
        dev.mem_map(va, 0x1000, 0, h).unwrap();
        dev.mem_release(h).unwrap();
        assert!(dev.mem_release(h).is_err(), "released twice");
        dev.copy_h2d(va, b"kept", None).unwrap();
        let mut back = [0u8; 4];
        dev.copy_d2h(&mut back, va, None).unwrap();
        assert_eq!(&back, b"kept");
        dev.mem_unmap(va, 0x1000).unwrap();
        assert!(dev.physical.is_empty(), "freed with its last mapping");
    }

    #[test]
    fn physical_memory_counts_against_the_cap_and_handles_stay_unique() {
        let mut dev = MemDevice::new(false);
        dev.max_bytes = 1 << 20;
        let a = dev.mem_create(512 << 10, MemKind::Device).unwrap();
        let b = dev.mem_create(512 << 10, MemKind::Device).unwrap();
        assert!(dev.mem_create(1, MemKind::Device).is_err(), "over the cap");
        assert!(dev.alloc(1, MemKind::Device).is_err(), "over the cap");
        dev.mem_release(a).unwrap();
        let c = dev.mem_create(4096, MemKind::Device).unwrap();
        assert!(c != a && c != b, "a live or released handle given again");
        assert_eq!(dev.physical[&b].len(), 512 << 10);
    }
}
