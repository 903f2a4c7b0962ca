//! Device and host memory bookkeeping.
//!
//! Device memory (hipMalloc, hipMallocManaged, HSA GPU-pool allocations) is carved
//! out of one large `MAP_NORESERVE` reservation by a first-fit [`RangeAllocator`];
//! every free byte of the reservation is kept zero (freed ranges are cleared, large
//! ones by `MADV_DONTNEED`), so a fresh allocation is always zero-filled.
//! Host allocations (hipHostMalloc, hipHostRegister, HSA CPU-pool allocations) are
//! ordinary host memory tracked in a second map.
//!
//! Memory is backed lazily: both kinds are anonymous `MAP_NORESERVE` mappings,
//! whose pages cost nothing until touched, so a recorded 8 GiB allocation that
//! a replay never fills costs no RSS. Fresh allocations are zero already (no
//! one needs to fill them), and a zero fill of whole pages inside the device
//! reservation ([`raw_fill`], e.g. `hipMemset(p, 0, n)`) drops the pages
//! (`MADV_DONTNEED`) instead of writing them.
//!
//! Memory at an address of the caller's choosing (HIP's virtual memory
//! management) is [`vmm`]'s.

mod vmm;

use crate::addr_map::{AddressMap, Found};
use crate::ffi::HipError;
use crate::ffi::err;
use crate::range_alloc::RangeAllocator;

/// Alignment of every device allocation.
pub const DEVICE_ALIGN: u64 = 256;
/// Alignment of HSA pool allocations (their "granule").
pub const HSA_ALIGN: u64 = 4096;
/// Default size of the device reservation (overridable with `HRR_CPU_DEVICE_MEMORY`).
pub const DEFAULT_RESERVATION: usize = 64 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// What made a device allocation.
pub enum DevKind {
    /// hipMalloc.
    Device,
    /// hipMallocManaged: device memory the host may also touch.
    Managed,
    /// hsa_amd_memory_pool_allocate from the GPU pool: never crosses the HIP API.
    Hsa,
    /// hipMemMap of a hipMemCreate allocation, made accessible (hipMemSetAccess).
    Mapped,
    /// A module's global variable (`hipModuleGetGlobal`): memory of the
    /// loaded code object, device memory while the module is loaded.
    Global,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// What made a host allocation.
pub enum HostKind {
    /// hipHostMalloc / hipMallocHost (mmap'd by us).
    Pinned,
    /// hipHostRegister of the application's memory (not owned).
    Registered,
    /// hsa_amd_memory_pool_allocate from the CPU pool (mmap'd by us).
    HsaHost,
}

#[derive(Debug, Clone, Copy)]
/// A device allocation's bookkeeping.
pub struct DevAlloc {
    /// What made it.
    pub kind: DevKind,
    /// The flags it was made with.
    pub flags: u32,
    /// The device it belongs to (current when it was made).
    pub device: u32,
}

#[derive(Debug, Clone, Copy)]
/// A host allocation's bookkeeping.
pub struct HostAlloc {
    /// What made it.
    pub kind: HostKind,
    /// The flags it was made with.
    pub flags: u32,
    /// Length of our own mapping (0 for registered memory).
    pub mapped: usize,
}

/// What an address is, as far as this runtime knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// In a live device allocation.
    Device {
        /// The allocation's base.
        base: usize,
        /// Its size.
        size: usize,
        /// What made it.
        kind: DevKind,
        /// Its flags.
        flags: u32,
        /// The device it belongs to.
        device: u32,
    },
    /// In a live host allocation.
    Host {
        /// The allocation's base.
        base: usize,
        /// Its size.
        size: usize,
        /// What made it.
        kind: HostKind,
        /// Its flags.
        flags: u32,
    },
    /// Inside the device reservation but in no live allocation.
    Stale,
    /// Memory this runtime did not hand out.
    Unknown,
}

/// The device reservation, its allocator, and every live allocation.
pub struct Memory {
    base: usize,
    len: usize,
    alloc: RangeAllocator,
    dev: AddressMap<DevAlloc>,
    host: AddressMap<HostAlloc>,
    vmm: vmm::Vmm,
    /// Bytes of `alloc_device` allocations per device.
    used: [usize; crate::devices::MAX_DEVICES as usize],
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Bytes of physical memory (`usize::MAX` when unknown).
fn physical_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    if pages > 0 {
        (pages as usize).saturating_mul(page_size())
    } else {
        usize::MAX
    }
}

/// Parses `123`, `64G`, `512M`, `4k` (binary units).
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        (i, 't' | 'T') => (&s[..i], 40),
        _ => (s, 0),
    };
    let n: usize = num.trim().parse().ok()?;
    n.checked_mul(1usize << shift)
}

impl Memory {
    /// Reserves `want` bytes of address space (halving down to 256 MiB on failure).
    pub fn new(want: usize) -> Result<Memory, HipError> {
        let page = page_size();
        let mut len = want.max(page) & !(page - 1);
        loop {
            // SAFETY: an anonymous private mapping at an address of the kernel's
            // choosing; no existing memory is affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                register_reservation(p as usize, len);
                return Ok(Memory {
                    base: p as usize,
                    len,
                    alloc: RangeAllocator::new(len as u64, DEVICE_ALIGN),
                    dev: AddressMap::new(),
                    host: AddressMap::new(),
                    vmm: vmm::Vmm::default(),
                    used: [0; crate::devices::MAX_DEVICES as usize],
                });
            }
            if len <= 256 << 20 {
                return Err(err::OUT_OF_MEMORY);
            }
            len /= 2;
        }
    }

    /// Bytes of the device reservation.
    pub fn capacity(&self) -> usize {
        self.len
    }
    /// Bytes not allocated.
    pub fn free_bytes(&self) -> usize {
        self.alloc.free_bytes() as usize
    }
    /// `hipMemGetInfo` of `device` of `count`: each device's share of the
    /// reservation, less what was allocated on it (and never more than is
    /// free at all).
    pub fn device_info(&self, device: u32, count: u32) -> (usize, usize) {
        let total = self.len / count.max(1) as usize;
        let used = self.used.get(device as usize).copied().unwrap_or(0);
        (total.saturating_sub(used).min(self.free_bytes()), total)
    }
    /// The reservation's base and length.
    pub fn reservation(&self) -> (usize, usize) {
        (self.base, self.len)
    }

    /// Allocates zero-filled device memory (`size >= 1`).
    pub fn alloc_device(
        &mut self,
        size: usize,
        kind: DevKind,
        flags: u32,
    ) -> Result<usize, HipError> {
        let align = if kind == DevKind::Hsa {
            HSA_ALIGN
        } else {
            DEVICE_ALIGN
        };
        let off = self
            .alloc
            .alloc_aligned(size as u64, align)
            .ok_or(err::OUT_OF_MEMORY)?;
        let ptr = self.base + off as usize;
        let device = crate::devices::current();
        if self
            .dev
            .insert(
                ptr,
                size,
                DevAlloc {
                    kind,
                    flags,
                    device,
                },
            )
            .is_err()
        {
            // Cannot happen (the allocator hands out disjoint ranges); undo anyway.
            let _ = self.alloc.free(off, size as u64);
            return Err(err::UNKNOWN);
        }
        self.used[device as usize] += size;
        Ok(ptr)
    }

    /// Frees a device allocation by its base, if its kind is one of `kinds`.
    pub fn free_device(&mut self, ptr: usize, kinds: &[DevKind]) -> Result<(), HipError> {
        match self.dev.find(ptr) {
            Some(f) if f.base == ptr && kinds.contains(&f.value.kind) => {}
            _ => return Err(err::INVALID_VALUE),
        }
        let e = self.dev.remove(ptr).ok_or(err::INVALID_VALUE)?;
        let used = &mut self.used[e.value.device as usize];
        *used = used.saturating_sub(e.size);
        let off = (ptr - self.base) as u64;
        let len = self.alloc.rounded(e.size as u64).ok_or(err::UNKNOWN)? as usize;
        self.clear(ptr, len);
        self.alloc
            .free(off, e.size as u64)
            .map_err(|_| err::UNKNOWN)
    }

    /// Restores the all-zero invariant of free reservation bytes.
    fn clear(&self, ptr: usize, len: usize) {
        let page = page_size();
        let first = (ptr + page - 1) & !(page - 1);
        let last = (ptr + len) & !(page - 1);
        if len >= 16 * page && last > first {
            // SAFETY: [ptr, first) and [last, ptr+len) lie inside the reservation,
            // in a range that was just released (no live allocation overlaps it).
            unsafe {
                std::ptr::write_bytes(ptr as *mut u8, 0, first - ptr);
                std::ptr::write_bytes(last as *mut u8, 0, ptr + len - last);
            }
            // SAFETY: whole pages inside the reservation, owned by no live allocation;
            // MADV_DONTNEED on a private anonymous mapping makes them read as zero.
            let rc = unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_DONTNEED,
                )
            };
            if rc == 0 {
                return;
            }
        }
        // SAFETY: as above: the released range is inside the reservation and unused.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, len) };
    }

    /// Maps fresh zeroed host memory and tracks it.
    pub fn alloc_host(
        &mut self,
        size: usize,
        kind: HostKind,
        flags: u32,
    ) -> Result<usize, HipError> {
        let page = page_size();
        // Host memory a GPU runtime hands out is pinned: never more than
        // the machine has (a lazily backed mapping would accept anything,
        // and fail only when touched).
        if size > physical_memory() {
            return Err(err::OUT_OF_MEMORY);
        }
        let mapped = size.checked_add(page - 1).ok_or(err::OUT_OF_MEMORY)? & !(page - 1);
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(err::OUT_OF_MEMORY);
        }
        let ptr = p as usize;
        if self
            .host
            .insert(
                ptr,
                size,
                HostAlloc {
                    kind,
                    flags,
                    mapped,
                },
            )
            .is_err()
        {
            // SAFETY: unmapping the mapping created just above.
            unsafe { libc::munmap(p, mapped) };
            return Err(err::UNKNOWN);
        }
        Ok(ptr)
    }

    /// Frees host memory we mapped (by base), if its kind is one of `kinds`.
    pub fn free_host(&mut self, ptr: usize, kinds: &[HostKind]) -> Result<(), HipError> {
        match self.host.find(ptr) {
            Some(f) if f.base == ptr && kinds.contains(&f.value.kind) => {}
            _ => return Err(err::INVALID_VALUE),
        }
        let e = self.host.remove(ptr).ok_or(err::INVALID_VALUE)?;
        if e.value.mapped > 0 {
            // SAFETY: the mapping was created by alloc_host with this length and is
            // no longer tracked.
            unsafe { libc::munmap(ptr as *mut libc::c_void, e.value.mapped) };
        }
        Ok(())
    }

    /// hipHostRegister: tracks the application's memory as host memory.
    pub fn register_host(&mut self, ptr: usize, size: usize, flags: u32) -> Result<(), HipError> {
        if self.in_reservation(ptr) {
            return Err(err::INVALID_VALUE);
        }
        self.host
            .insert(
                ptr,
                size,
                HostAlloc {
                    kind: HostKind::Registered,
                    flags,
                    mapped: 0,
                },
            )
            .map_err(|_| err::HOST_MEMORY_ALREADY_REGISTERED)
    }

    /// `hipHostUnregister`: forgets registered memory.
    pub fn unregister_host(&mut self, ptr: usize) -> Result<(), HipError> {
        match self.host.find(ptr) {
            Some(f) if f.base == ptr && f.value.kind == HostKind::Registered => {
                self.host.remove(ptr);
                Ok(())
            }
            _ => Err(err::HOST_MEMORY_NOT_REGISTERED),
        }
    }

    fn in_reservation(&self, addr: usize) -> bool {
        addr >= self.base && addr - self.base < self.len
    }

    /// Classifies an address (interior pointers included).
    pub fn classify(&self, addr: usize) -> Class {
        if let Some(Found { base, size, value }) = self.dev.find(addr) {
            return Class::Device {
                base,
                size,
                kind: value.kind,
                flags: value.flags,
                device: value.device,
            };
        }
        if self.in_reservation(addr) {
            return Class::Stale;
        }
        if let Some(Found { base, size, value }) = self.host.find(addr) {
            return Class::Host {
                base,
                size,
                kind: value.kind,
                flags: value.flags,
            };
        }
        Class::Unknown
    }

    /// Is `[addr, addr+len)` inside one live device allocation, or inside
    /// adjacent accessible mappings (contiguous addresses, as on a GPU)?
    pub fn device_span(&self, addr: usize, len: usize) -> bool {
        self.dev.find_span(addr, len).is_some() || self.mapped_span(addr, len)
    }

    /// Whether accessible mappings cover `[addr, addr+len)` without a gap.
    fn mapped_span(&self, addr: usize, len: usize) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        let mut at = addr;
        while at < end {
            match self.dev.find(at) {
                Some(f) if f.value.kind == DevKind::Mapped => at = f.base + f.size,
                _ => return false,
            }
        }
        len > 0
    }

    /// Is `[addr, addr+len)` memory the device may touch: a live device allocation
    /// or a tracked host allocation (pinned, registered, HSA host pool)?
    pub fn device_accessible(&self, addr: usize, len: usize) -> bool {
        self.device_span(addr, len) || self.host.find_span(addr, len).is_some()
    }

    /// A host operand: anything outside the reservation (we cannot check it), or a
    /// live device allocation (all one address space on a CPU).
    pub fn host_operand_ok(&self, addr: usize, len: usize) -> bool {
        let end = addr.checked_add(len);
        let Some(end) = end else { return false };
        let touches_reservation = addr < self.base + self.len && end > self.base;
        !touches_reservation || self.device_span(addr, len)
    }

    /// Tracks a module's global variable as device memory (copies and
    /// memsets accept it); looking it up again is not an error.
    pub fn register_global(&mut self, ptr: usize, size: usize) -> Result<(), HipError> {
        match self.dev.find(ptr) {
            Some(f) if f.base == ptr && f.value.kind == DevKind::Global => return Ok(()),
            Some(_) => return Err(err::UNKNOWN),
            None => {}
        }
        let v = DevAlloc {
            kind: DevKind::Global,
            flags: 0,
            device: crate::devices::current(),
        };
        self.dev
            .insert(ptr, size.max(1), v)
            .map_err(|_| err::UNKNOWN)
    }

    /// Forgets a global variable registered by [`Memory::register_global`]
    /// (its module is being unloaded).
    pub fn unregister_global(&mut self, ptr: usize) {
        if matches!(self.dev.find(ptr), Some(f) if f.base == ptr && f.value.kind == DevKind::Global)
        {
            self.dev.remove(ptr);
        }
    }

    /// Frees `device`'s device and managed allocations (a reset of it).
    /// HSA pool memory is not the HIP runtime's, virtual memory and module
    /// globals go with their own calls, and host memory belongs to no
    /// device: they stay.
    pub fn reset(&mut self, device: u32) {
        let live: Vec<usize> = self
            .dev
            .iter()
            .filter(|(_, e)| {
                e.value.device == device
                    && matches!(e.value.kind, DevKind::Device | DevKind::Managed)
            })
            .map(|(b, _)| b)
            .collect();
        for b in live {
            let _ = self.free_device(b, &[DevKind::Device, DevKind::Managed]);
        }
    }

    /// Live device allocations.
    pub fn live_device_allocations(&self) -> usize {
        self.dev.len()
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        for (base, e) in self.host.drain() {
            if e.value.mapped > 0 {
                // SAFETY: a mapping created by alloc_host; the map is being destroyed.
                unsafe { libc::munmap(base as *mut libc::c_void, e.value.mapped) };
            }
        }
        self.vmm_drop();
        unregister_reservation(self.base);
        // SAFETY: the reservation created in `new`; nothing refers to it any more.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Copies `len` bytes (overlap allowed).
///
/// # Safety
/// Both ranges must be valid for `len` bytes (device ranges checked by the caller
/// against [`Memory`], host ranges are the application's contract).
pub unsafe fn raw_copy(dst: usize, src: usize, len: usize) {
    // SAFETY: forwarded contract of this function.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
}

/// Device reservations of this process (base, length): private anonymous
/// mappings, where `MADV_DONTNEED` makes pages read as zero.
static RESERVATIONS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

fn register_reservation(base: usize, len: usize) {
    RESERVATIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((base, len));
}

fn unregister_reservation(base: usize) {
    RESERVATIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&(b, _)| b != base);
}

/// Zero fills at least this large drop whole pages instead of writing them.
const LAZY_ZERO_FROM: usize = 1 << 20;

/// Zeroes `[dst, dst+len)` by dropping its whole pages when it lies inside a
/// device reservation; `false` when it does not (the caller writes zeros).
fn zero_lazily(dst: usize, len: usize) -> bool {
    let page = page_size();
    let Some(end) = dst.checked_add(len) else {
        return false;
    };
    let inside = RESERVATIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|&(b, l)| dst >= b && end <= b + l);
    if !inside {
        return false;
    }
    let first = (dst + page - 1) & !(page - 1);
    let last = end & !(page - 1);
    if last <= first {
        return false;
    }
    // SAFETY: [first, last) is whole pages of a private anonymous mapping we
    // own (the reservation), inside the caller's valid range: MADV_DONTNEED
    // makes them read as zero on next touch, as the write would have.
    let rc = unsafe {
        libc::madvise(
            first as *mut libc::c_void,
            last - first,
            libc::MADV_DONTNEED,
        )
    };
    if rc != 0 {
        return false;
    }
    // SAFETY: the partial pages at both ends lie inside the caller's range.
    unsafe {
        std::ptr::write_bytes(dst as *mut u8, 0, first - dst);
        std::ptr::write_bytes(last as *mut u8, 0, end - last);
    }
    true
}

/// Fills `count` elements of `width` bytes (1, 2 or 4) with `value`.
///
/// # Safety
/// `[dst, dst + count*width)` must be valid writable memory.
pub unsafe fn raw_fill(dst: usize, value: u32, count: usize, width: u8) {
    let len = count.saturating_mul(usize::from(width.max(1)));
    if value == 0 && len >= LAZY_ZERO_FROM && zero_lazily(dst, len) {
        return;
    }
    match width {
        // SAFETY: forwarded contract.
        1 => unsafe { std::ptr::write_bytes(dst as *mut u8, value as u8, count) },
        2 => {
            let p = dst as *mut u16;
            for i in 0..count {
                // SAFETY: element i lies inside the valid range (unaligned write).
                unsafe { p.add(i).write_unaligned(value as u16) };
            }
        }
        _ => {
            let p = dst as *mut u32;
            for i in 0..count {
                // SAFETY: element i lies inside the valid range (unaligned write).
                unsafe { p.add(i).write_unaligned(value) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(ptr: usize, len: usize) -> Vec<u8> {
        // SAFETY: test reads of live allocations.
        unsafe { std::slice::from_raw_parts(ptr as *const u8, len).to_vec() }
    }

    #[test]
    fn zero_fill_on_reuse() {
        let mut m = Memory::new(64 << 20).unwrap();
        for size in [100usize, 300_000] {
            let p = m.alloc_device(size, DevKind::Device, 0).unwrap();
            assert!(read(p, size).iter().all(|&b| b == 0));
            // SAFETY: p is a live allocation of `size` bytes.
            unsafe { raw_fill(p, 0xAB, size, 1) };
            m.free_device(p, &[DevKind::Device]).unwrap();
            let q = m.alloc_device(size, DevKind::Device, 0).unwrap();
            assert_eq!(p, q, "first fit reuses the range");
            assert!(
                read(q, size).iter().all(|&b| b == 0),
                "reused range must be zero"
            );
            m.free_device(q, &[DevKind::Device]).unwrap();
        }
        assert_eq!(m.free_bytes(), m.capacity());
    }

    /// Pages of `[p, p+len)` resident in memory (mincore).
    fn resident_pages(p: usize, len: usize) -> usize {
        let page = page_size();
        let mut v = vec![0u8; len.div_ceil(page)];
        // SAFETY: `p` is page aligned and the range is mapped; `v` has one
        // byte per page.
        let rc = unsafe { libc::mincore(p as *mut libc::c_void, len, v.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        v.iter().filter(|&&b| b & 1 != 0).count()
    }

    #[test]
    fn large_allocations_and_zero_fills_commit_no_pages() {
        let mut m = Memory::new(4 << 30).unwrap();
        let size = 1 << 30;
        let d = m.alloc_device(size, DevKind::Device, 0).unwrap();
        let h = m.alloc_host(size, HostKind::Pinned, 0).unwrap();
        assert_eq!(
            resident_pages(d, size),
            0,
            "a fresh device allocation is untouched"
        );
        assert_eq!(
            resident_pages(h, size),
            0,
            "a fresh host allocation is untouched"
        );
        // Dirty 64 MiB, then zero the whole allocation as hipMemset(p, 0, n) does.
        // SAFETY: both ranges lie inside the live allocation `d`.
        unsafe { raw_fill(d, 0xAB, 64 << 20, 1) };
        assert!(resident_pages(d, size) >= (64 << 20) / page_size());
        // SAFETY: as above.
        unsafe { raw_fill(d + 3, 0, size - 3, 1) };
        assert!(resident_pages(d, size) <= 1, "zeroing dropped the pages");
        assert_eq!(
            read(d, 16),
            [0xAB, 0xAB, 0xAB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert!(read(d + size - 4096, 4096).iter().all(|&b| b == 0));
        // Outside the reservation (host memory), zeros are written.
        // SAFETY: `h` is a live host allocation of `size` bytes.
        unsafe { raw_fill(h, 0, 2 << 20, 1) };
        assert!(resident_pages(h, 2 << 20) > 0);
    }

    #[test]
    fn classification() {
        let mut m = Memory::new(64 << 20).unwrap();
        let d = m.alloc_device(1000, DevKind::Device, 0).unwrap();
        let g = m.alloc_device(10, DevKind::Hsa, 0).unwrap();
        assert_eq!(g % 4096, 0);
        let h = m.alloc_host(64, HostKind::Pinned, 3).unwrap();
        assert!(
            matches!(m.classify(d + 999), Class::Device { base, kind: DevKind::Device, .. } if base == d)
        );
        assert!(matches!(
            m.classify(g + 9),
            Class::Device {
                kind: DevKind::Hsa,
                ..
            }
        ));
        assert_eq!(m.classify(d + 1000), Class::Stale);
        assert!(matches!(m.classify(h + 10), Class::Host { flags: 3, .. }));
        assert!(m.device_span(d, 1000));
        assert!(!m.device_span(d, 1001));
        assert!(m.device_accessible(h, 64));
        assert!(!m.host_operand_ok(d + 1000, 4));
        assert!(m.host_operand_ok(d, 4));
        assert!(m.free_device(d + 1, &[DevKind::Device]).is_err());
        assert!(m.free_device(g, &[DevKind::Device]).is_err());
        m.free_device(g, &[DevKind::Hsa]).unwrap();
        m.free_host(h, &[HostKind::Pinned]).unwrap();
        assert_eq!(m.classify(h), Class::Unknown);
        let mut v = vec![0u8; 100];
        let vp = v.as_mut_ptr() as usize;
        m.register_host(vp, 100, 0).unwrap();
        assert_eq!(
            m.register_host(vp + 10, 10, 0),
            Err(err::HOST_MEMORY_ALREADY_REGISTERED)
        );
        m.unregister_host(vp).unwrap();
        assert_eq!(m.unregister_host(vp), Err(err::HOST_MEMORY_NOT_REGISTERED));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64G"), Some(64 << 30));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999T"), None);
    }
}
