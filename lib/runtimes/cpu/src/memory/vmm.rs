//! Virtual memory management (`hipMemAddressReserve`, `hipMemCreate`,
//! `hipMemMap`, `hipMemSetAccess`, …) on the CPU: what lets a caller put
//! device memory at an address of its choosing (replay maps allocations at
//! their recorded addresses this way).
//!
//! - A *reservation* is address space holding no memory: a `PROT_NONE`
//!   placeholder. At a requested address it is made with
//!   `MAP_FIXED_NOREPLACE` (nothing of the process is ever replaced), or,
//!   when the address lies inside this runtime's own device reservation, by
//!   taking exactly that range out of its allocator (so `hipMalloc` never
//!   hands it out). A requested address that is not available gives a
//!   reservation elsewhere, as HIP and CUDA do: callers compare.
//! - A *physical allocation* is a `memfd` of its size (sparse: pages cost
//!   nothing until touched, and read as zero).
//! - *Mapping* puts a piece of one over reservation pages (`MAP_SHARED |
//!   MAP_FIXED`, only ever over this module's own placeholder), still
//!   inaccessible; `hipMemSetAccess` makes it readable and writable, and
//!   from then it is device memory like any other (copies, memsets and
//!   kernels accept it). Unmapping puts the placeholder back.
//!
//! A physical allocation is counted as HIP and CUDA count it: its handle
//! holds one reference per `hipMemCreate`, `hipMemRetainAllocationHandle`
//! (of an address mapped from it) and `hipMemImportFromShareableHandle` (of
//! its exported descriptor), each dropped by one `hipMemRelease`; its
//! memory lives while referenced or mapped. Exporting hands out a duplicate
//! of its `memfd`; importing a descriptor of this runtime's own allocation
//! is a reference to that allocation.
//!
//! The granularity is the page size.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{DevAlloc, DevKind, Memory, page_size};
use crate::ffi::{HipError, err};

#[derive(Debug)]
struct Reservation {
    len: usize,
    /// Taken out of the device reservation's allocator (given back on free)
    /// rather than a mapping of its own (unmapped on free).
    inside: bool,
}

#[derive(Debug)]
struct Physical {
    fd: OwnedFd,
    len: usize,
    /// Handle references not yet released (0: the handle is invalid, the
    /// memory lives on in its mappings).
    refs: usize,
    /// Live mappings of it.
    maps: usize,
}

#[derive(Debug)]
struct Mapping {
    len: usize,
    /// The physical allocation's handle.
    handle: usize,
    /// Made accessible by `hipMemSetAccess` (then tracked as device memory).
    accessible: bool,
}

/// Reservations, physical allocations and mappings of one runtime.
#[derive(Debug, Default)]
pub struct Vmm {
    reservations: BTreeMap<usize, Reservation>,
    handles: HashMap<usize, Physical>,
    next_handle: usize,
    mappings: BTreeMap<usize, Mapping>,
}

/// The inode of descriptor `fd`'s file and its size, or `None` when `fd`
/// is not an open descriptor.
fn file_id(fd: i32) -> Option<(u64, usize)> {
    // SAFETY: `fstat` writes the struct only; a zeroed `stat` is valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-parameter; a bad `fd` is an error, not UB.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_ino, st.st_size as usize))
}

/// Places a `PROT_NONE` anonymous placeholder over `[addr, addr + len)`,
/// replacing what is there (which must be this module's own pages).
///
/// # Safety
/// `[addr, addr + len)` must be pages this module owns (a reservation).
unsafe fn placeholder(addr: usize, len: usize, prot: i32) -> Result<(), HipError> {
    // SAFETY: per this function's contract the range is ours to replace.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(err::OUT_OF_MEMORY);
    }
    Ok(())
}

impl Memory {
    /// The granularity of reservations, physical allocations and mappings.
    pub fn vmm_granularity(&self) -> usize {
        page_size()
    }

    fn page_multiple(&self, v: usize) -> bool {
        v.is_multiple_of(page_size())
    }

    /// `hipMemAddressReserve`: `size` bytes of address space at `addr` when
    /// it is available (and not 0), else wherever the kernel puts it.
    pub fn vmm_reserve(
        &mut self,
        size: usize,
        align: usize,
        addr: usize,
    ) -> Result<usize, HipError> {
        let page = page_size();
        if size == 0 || !self.page_multiple(size) || (align != 0 && !align.is_power_of_two()) {
            return Err(err::INVALID_VALUE);
        }
        let align = align.max(page);
        if addr != 0
            && addr.is_multiple_of(align)
            && let Some(r) = self.reserve_exact(addr, size)
        {
            self.vmm.reservations.insert(addr, r);
            return Ok(addr);
        }
        // Anywhere: over-map by the alignment, then trim both ends.
        let span = size.checked_add(align - page).ok_or(err::OUT_OF_MEMORY)?;
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(err::OUT_OF_MEMORY);
        }
        let p = p as usize;
        let at = p.next_multiple_of(align);
        // SAFETY: both trimmed ends lie in the mapping just made, outside [at, at + size).
        unsafe {
            if at > p {
                libc::munmap(p as *mut libc::c_void, at - p);
            }
            if p + span > at + size {
                libc::munmap((at + size) as *mut libc::c_void, p + span - at - size);
            }
        }
        self.vmm.reservations.insert(
            at,
            Reservation {
                len: size,
                inside: false,
            },
        );
        Ok(at)
    }

    /// A reservation of exactly `[addr, addr + size)`, or `None` when any of
    /// it is in use.
    fn reserve_exact(&mut self, addr: usize, size: usize) -> Option<Reservation> {
        let end = addr.checked_add(size)?;
        let (base, len) = (self.base, self.len);
        if addr >= base && end <= base + len {
            if !self.alloc.take((addr - base) as u64, size as u64) {
                return None;
            }
            // SAFETY: the range was free in our device reservation and is now
            // taken out of its allocator: ours, used by no allocation.
            if unsafe { placeholder(addr, size, libc::PROT_NONE) }.is_err() {
                let _ = self.alloc.free((addr - base) as u64, size as u64);
                return None;
            }
            return Some(Reservation {
                len: size,
                inside: true,
            });
        }
        if addr < base + len && end > base {
            return None; // straddles the device reservation's edge
        }
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping: it
        // fails (EEXIST) when any page of the range is in use.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                size,
                libc::PROT_NONE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        if p as usize != addr {
            // A kernel older than 4.17 took the flag as a hint.
            // SAFETY: the mapping just made, elsewhere.
            unsafe { libc::munmap(p, size) };
            return None;
        }
        Some(Reservation {
            len: size,
            inside: false,
        })
    }

    /// `hipMemAddressFree`: the whole reservation at `ptr`, with nothing
    /// mapped in it.
    pub fn vmm_free(&mut self, ptr: usize, size: usize) -> Result<(), HipError> {
        match self.vmm.reservations.get(&ptr) {
            Some(r) if r.len == size => {}
            _ => return Err(err::INVALID_VALUE),
        }
        if self.vmm.mappings.range(ptr..ptr + size).next().is_some() {
            return Err(err::INVALID_VALUE);
        }
        let r = self
            .vmm
            .reservations
            .remove(&ptr)
            .ok_or(err::INVALID_VALUE)?;
        if r.inside {
            // Back to ordinary zero pages of the device reservation.
            // SAFETY: the reservation's pages, inside our device reservation.
            unsafe { placeholder(ptr, size, libc::PROT_READ | libc::PROT_WRITE) }?;
            self.alloc
                .free((ptr - self.base) as u64, size as u64)
                .map_err(|_| err::UNKNOWN)
        } else {
            // SAFETY: the reservation's own mapping; nothing is mapped in it.
            unsafe { libc::munmap(ptr as *mut libc::c_void, size) };
            Ok(())
        }
    }

    /// `hipMemCreate`: `size` bytes of memory, zero, mapped nowhere yet.
    pub fn vmm_create(&mut self, size: usize) -> Result<usize, HipError> {
        if size == 0 || !self.page_multiple(size) {
            return Err(err::INVALID_VALUE);
        }
        // The device has no more memory than its reservation holds, as a
        // GPU has no more than its own (a sparse memfd would take any size
        // and run the machine out of memory only once it is filled).
        if size > self.capacity() {
            return Err(err::OUT_OF_MEMORY);
        }
        // SAFETY: a NUL-terminated name and valid flags.
        let fd = unsafe { libc::memfd_create(c"hrr-vmm".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(err::OUT_OF_MEMORY);
        }
        // SAFETY: `fd` is a fresh descriptor this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a valid descriptor; growing a memfd allocates nothing.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
            return Err(err::OUT_OF_MEMORY);
        }
        self.vmm.next_handle += 1;
        // Handles are opaque non-null values, never addresses.
        let h = 0x7000_0000_0000_0000 | self.vmm.next_handle;
        let p = Physical {
            fd,
            len: size,
            refs: 1,
            maps: 0,
        };
        self.vmm.handles.insert(h, p);
        Ok(h)
    }

    /// The physical allocation of a valid (unreleased) handle.
    fn physical(&mut self, handle: usize) -> Result<&mut Physical, HipError> {
        self.vmm
            .handles
            .get_mut(&handle)
            .filter(|p| p.refs > 0)
            .ok_or(err::INVALID_VALUE)
    }

    /// Forgets `handle`'s allocation once nothing references or maps it.
    fn drop_if_unused(&mut self, handle: usize) {
        if self
            .vmm
            .handles
            .get(&handle)
            .is_some_and(|p| p.refs == 0 && p.maps == 0)
        {
            self.vmm.handles.remove(&handle);
        }
    }

    /// `hipMemRelease`: one reference fewer; mappings of it stay valid
    /// until unmapped.
    pub fn vmm_release(&mut self, handle: usize) -> Result<(), HipError> {
        self.physical(handle)?.refs -= 1;
        self.drop_if_unused(handle);
        Ok(())
    }

    /// `hipMemRetainAllocationHandle`: the handle of the allocation mapped
    /// at `addr`, with one more reference.
    pub fn vmm_retain(&mut self, addr: usize) -> Result<usize, HipError> {
        let handle = self
            .vmm
            .mappings
            .range(..=addr)
            .next_back()
            .filter(|(b, m)| addr - **b < m.len)
            .map(|(_, m)| m.handle)
            .ok_or(err::INVALID_VALUE)?;
        let p = self.vmm.handles.get_mut(&handle).ok_or(err::UNKNOWN)?;
        p.refs += 1;
        Ok(handle)
    }

    /// The size of a valid handle's allocation
    /// (`hipMemGetAllocationPropertiesFromHandle` says the rest).
    pub fn vmm_size(&mut self, handle: usize) -> Result<usize, HipError> {
        Ok(self.physical(handle)?.len)
    }

    /// `hipMemExportToShareableHandle`: a new descriptor of the
    /// allocation's memory, the caller's to close.
    pub fn vmm_export(&mut self, handle: usize) -> Result<i32, HipError> {
        let fd = self.physical(handle)?.fd.as_raw_fd();
        // SAFETY: duplicating a descriptor this runtime owns.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(err::OUT_OF_MEMORY);
        }
        Ok(dup)
    }

    /// `hipMemImportFromShareableHandle` of descriptor `fd`: one more
    /// reference to this runtime's allocation of that memory, or a new
    /// allocation of it (a duplicate of `fd`; the caller keeps `fd`).
    pub fn vmm_import(&mut self, fd: i32) -> Result<usize, HipError> {
        let id = file_id(fd).ok_or(err::INVALID_VALUE)?;
        let own =
            self.vmm.handles.iter_mut().find(|(_, p)| {
                p.refs > 0 && file_id(p.fd.as_raw_fd()).is_some_and(|(f, _)| f == id.0)
            });
        if let Some((&h, p)) = own {
            p.refs += 1;
            return Ok(h);
        }
        // SAFETY: duplicating a descriptor the caller handed in (checked by fstat above).
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: `dup` is a fresh descriptor this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(dup) };
        self.vmm.next_handle += 1;
        let h = 0x7000_0000_0000_0000 | self.vmm.next_handle;
        let p = Physical {
            fd,
            len: id.1,
            refs: 1,
            maps: 0,
        };
        self.vmm.handles.insert(h, p);
        Ok(h)
    }

    /// `hipMemMap`: `size` bytes of `handle` from `offset` at `ptr`, inside
    /// one reservation, over nothing mapped; not yet accessible.
    pub fn vmm_map(
        &mut self,
        ptr: usize,
        size: usize,
        offset: usize,
        handle: usize,
    ) -> Result<(), HipError> {
        let end = ptr.checked_add(size).ok_or(err::INVALID_VALUE)?;
        let ph = self
            .vmm
            .handles
            .get(&handle)
            .filter(|p| p.refs > 0)
            .ok_or(err::INVALID_VALUE)?;
        if size == 0
            || !self.page_multiple(ptr | size | offset)
            || offset.checked_add(size).is_none_or(|e| e > ph.len)
        {
            return Err(err::INVALID_VALUE);
        }
        let inside = self
            .vmm
            .reservations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(&b, r)| end <= b + r.len);
        let overlaps = self
            .vmm
            .mappings
            .range(..end)
            .next_back()
            .is_some_and(|(&b, m)| b + m.len > ptr);
        if !inside || overlaps {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: the range lies in one of our reservations, over no mapping
        // (only our placeholder pages are replaced); fd and offset are valid.
        let p = unsafe {
            libc::mmap(
                ptr as *mut libc::c_void,
                size,
                libc::PROT_NONE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                ph.fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(err::OUT_OF_MEMORY);
        }
        self.vmm.mappings.insert(
            ptr,
            Mapping {
                len: size,
                handle,
                accessible: false,
            },
        );
        if let Some(p) = self.vmm.handles.get_mut(&handle) {
            p.maps += 1;
        }
        Ok(())
    }

    /// The mappings making up exactly `[ptr, ptr + size)`, or `None` when
    /// the range is not whole mappings without a gap.
    fn whole_mappings(&self, ptr: usize, size: usize) -> Option<Vec<(usize, usize)>> {
        let end = ptr.checked_add(size)?;
        let mut at = ptr;
        let mut out = Vec::new();
        for (&b, m) in self.vmm.mappings.range(ptr..end) {
            if b != at || b + m.len > end {
                return None;
            }
            out.push((b, m.len));
            at = b + m.len;
        }
        (at == end && size > 0).then_some(out)
    }

    /// `hipMemUnmap`: whole mappings; their pages become placeholder again.
    pub fn vmm_unmap(&mut self, ptr: usize, size: usize) -> Result<(), HipError> {
        let pieces = self.whole_mappings(ptr, size).ok_or(err::INVALID_VALUE)?;
        for (b, len) in pieces {
            if let Some(m) = self.vmm.mappings.remove(&b) {
                if m.accessible {
                    self.dev.remove(b);
                }
                if let Some(p) = self.vmm.handles.get_mut(&m.handle) {
                    p.maps -= 1;
                }
                self.drop_if_unused(m.handle);
            }
            // SAFETY: our own mapping inside our reservation.
            unsafe { placeholder(b, len, libc::PROT_NONE) }?;
        }
        Ok(())
    }

    /// `hipMemSetAccess` for this device: `rw` makes whole mappings readable
    /// and writable device memory, else inaccessible again.
    pub fn vmm_set_access(&mut self, ptr: usize, size: usize, rw: bool) -> Result<(), HipError> {
        let pieces = self.whole_mappings(ptr, size).ok_or(err::INVALID_VALUE)?;
        let prot = if rw {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_NONE
        };
        for (b, len) in pieces {
            // SAFETY: our own mapping; only its protection changes.
            if unsafe { libc::mprotect(b as *mut libc::c_void, len, prot) } != 0 {
                return Err(err::INVALID_VALUE);
            }
            let m = self.vmm.mappings.get_mut(&b).ok_or(err::UNKNOWN)?;
            if rw && !m.accessible {
                let v = DevAlloc {
                    kind: DevKind::Mapped,
                    flags: 0,
                    device: crate::devices::current(),
                };
                self.dev.insert(b, len, v).map_err(|_| err::UNKNOWN)?;
            } else if !rw && m.accessible {
                self.dev.remove(b);
            }
            m.accessible = rw;
        }
        Ok(())
    }

    /// Unmaps every reservation of its own (end of the runtime).
    pub(super) fn vmm_drop(&mut self) {
        for (b, r) in std::mem::take(&mut self.vmm.reservations) {
            if !r.inside {
                // SAFETY: a reservation of ours (mappings in it go with it).
                unsafe { libc::munmap(b as *mut libc::c_void, r.len) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Class;

    #[test]
    fn handles_are_counted_and_shared_through_their_descriptor() {
        let mut m = Memory::new(64 << 20).unwrap();
        let g = m.vmm_granularity();
        let r = m.vmm_reserve(4 * g, 0, 0).unwrap();
        let h = m.vmm_create(g).unwrap();
        m.vmm_map(r, g, 0, h).unwrap();
        m.vmm_set_access(r, g, true).unwrap();
        // Retained from an address inside the mapping: the same handle.
        assert_eq!(m.vmm_retain(r + 100).unwrap(), h);
        assert!(m.vmm_retain(r + g).is_err(), "nothing mapped there");
        // Exported and imported: the same allocation, one more reference.
        let fd = m.vmm_export(h).unwrap();
        assert_eq!(m.vmm_import(fd).unwrap(), h);
        // SAFETY: the descriptor export handed out, ours to close.
        unsafe { libc::close(fd) };
        assert_eq!(m.vmm_size(h).unwrap(), g);
        // Three references: three releases, then the handle is invalid,
        // while its mapping stays.
        for _ in 0..3 {
            m.vmm_release(h).unwrap();
        }
        assert!(m.vmm_release(h).is_err());
        assert!(m.vmm_size(h).is_err());
        // SAFETY: the mapping is live and accessible.
        unsafe { (r as *mut u8).write(7) };
        // Retained from the mapping again once released.
        assert_eq!(m.vmm_retain(r).unwrap(), h);
        m.vmm_unmap(r, g).unwrap();
        m.vmm_release(h).unwrap();
        assert!(m.vmm.handles.is_empty());
        m.vmm_free(r, 4 * g).unwrap();
    }

    #[test]
    fn map_at_a_requested_address_outside_and_inside_the_device_reservation() {
        let mut m = Memory::new(64 << 20).unwrap();
        let g = m.vmm_granularity();
        // Outside: find a free address, give it back, ask for it.
        let free = m.vmm_reserve(4 * g, 0, 0).unwrap();
        m.vmm_free(free, 4 * g).unwrap();
        let r = m.vmm_reserve(4 * g, 0, free).unwrap();
        assert_eq!(r, free, "a free address is granted");
        // Asking again for the same range gives another one.
        let other = m.vmm_reserve(4 * g, 0, free).unwrap();
        assert_ne!(other, free);
        m.vmm_free(other, 4 * g).unwrap();

        let h = m.vmm_create(2 * g).unwrap();
        m.vmm_map(r + g, 2 * g, 0, h).unwrap();
        assert!(m.vmm_map(r + 2 * g, g, 0, h).is_err(), "overlapping map");
        assert!(
            !m.device_span(r + g, 8),
            "not accessible before hipMemSetAccess"
        );
        m.vmm_set_access(r + g, 2 * g, true).unwrap();
        assert!(m.device_span(r + g, 2 * g));
        assert!(matches!(
            m.classify(r + g + 5),
            Class::Device {
                kind: DevKind::Mapped,
                ..
            }
        ));
        // SAFETY: the mapping is readable and writable now.
        unsafe { crate::memory::raw_fill(r + g, 0x5A, 16, 1) };
        // An adjacent mapping: one device span with the first, as on a GPU.
        let h2 = m.vmm_create(g).unwrap();
        m.vmm_map(r + 3 * g, g, 0, h2).unwrap();
        m.vmm_set_access(r + 3 * g, g, true).unwrap();
        assert!(
            m.device_span(r + 2 * g, 2 * g),
            "a copy may span adjacent mappings"
        );
        m.vmm_unmap(r + 3 * g, g).unwrap();
        m.vmm_release(h2).unwrap();
        assert!(!m.device_span(r + 2 * g, 2 * g));
        m.vmm_release(h).unwrap();
        // SAFETY: released while mapped: still valid, as in HIP.
        assert_eq!(unsafe { *((r + g + 15) as *const u8) }, 0x5A);
        assert!(m.vmm_free(r, 4 * g).is_err(), "free with a mapping inside");
        m.vmm_unmap(r + g, 2 * g).unwrap();
        assert!(!m.device_span(r + g, 1));
        m.vmm_free(r, 4 * g).unwrap();

        // Inside the device reservation: carved out of hipMalloc's allocator.
        let (base, _) = m.reservation();
        let at = base + 16 * g;
        assert_eq!(m.vmm_reserve(2 * g, 0, at).unwrap(), at);
        for _ in 0..64 {
            let p = m.alloc_device(g, DevKind::Device, 0).unwrap();
            assert!(
                p + g <= at || p >= at + 2 * g,
                "hipMalloc handed out a reserved range"
            );
        }
        let h = m.vmm_create(2 * g).unwrap();
        m.vmm_map(at, 2 * g, 0, h).unwrap();
        m.vmm_set_access(at, 2 * g, true).unwrap();
        // SAFETY: `at + 100` lies in the mapping just made accessible.
        let first = unsafe { *((at + 100) as *const u8) };
        assert_eq!(first, 0, "fresh memory is zero");
        m.vmm_unmap(at, 2 * g).unwrap();
        m.vmm_release(h).unwrap();
        m.vmm_free(at, 2 * g).unwrap();
    }
}
