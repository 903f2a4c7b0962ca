//! `PinnedHost`: replay's host side of large copies, in memory the device
//! reaches by DMA ([`Device::host_buffer`]).
//!
//! An application copying at full speed copies from page-locked memory; a
//! replay copying from a memory-mapped blob makes the driver stage every byte
//! through its own pinned buffers first, which measured a third of the plain
//! bandwidth on an H200. So large H2D blobs are read once into pinned buffers
//! and kept by id (applications re-upload the same inputs), up to a byte
//! budget, least recently used first out; evicted buffers are reused for the
//! next blob they fit, since page-locking is slow. D2H copies land in one
//! reused pinned buffer before they are compared.
//!
//! Buffers come from `alloc`, the engine's [`Device::host_buffer`]. On a
//! backend without such memory (the CPU runtime) every call answers `None`
//! and the engine copies from the blob where it lies; so does every call
//! after an allocation failed (page-locked memory is a limited resource),
//! with one warning for the summary ([`PinnedHost::take_warning`]).
//!
//! [`Device::host_buffer`]: crate::device::Device::host_buffer

use std::collections::HashMap;

use crate::device::{DeviceError, HostBuffer};
use hrr_core::blob_store::{BlobError, BlobStore};
use hrr_core::error_chain::chain;
use hrr_core::hex::BlobId;

struct Landed {
    buf: HostBuffer,
    len: usize,
    last_use: u64,
}

/// Pinned host memory for large copies, within a byte budget; see the module docs.
pub struct PinnedHost {
    budget: usize,
    /// The backend answered `None` once, or failed: no more asking.
    unsupported: bool,
    /// Why the backend failed, until taken for the summary.
    warning: Option<String>,
    landed: HashMap<BlobId, Landed>,
    /// Evicted buffers, kept for reuse.
    spare: Vec<HostBuffer>,
    /// Capacity of every buffer in `landed` and `spare`.
    held: usize,
    clock: u64,
    d2h: Option<HostBuffer>,
}

impl PinnedHost {
    /// Landed blobs kept within `budget` bytes (at least the one in use);
    /// a budget of 0 turns landing off.
    pub fn new(budget: usize) -> PinnedHost {
        PinnedHost {
            budget,
            unsupported: budget == 0,
            warning: None,
            landed: HashMap::new(),
            spare: Vec::new(),
            held: 0,
            clock: 0,
            d2h: None,
        }
    }

    /// Bytes of host buffers held for landed blobs.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Blob `id` (`len` bytes) in pinned memory, read there on first use;
    /// `None` when the backend has no pinned memory to give.
    pub fn blob(
        &mut self,
        alloc: impl FnMut(usize) -> Result<Option<HostBuffer>, DeviceError>,
        store: &BlobStore,
        id: &BlobId,
        len: usize,
    ) -> Result<Option<&[u8]>, BlobError> {
        if self.unsupported {
            return Ok(None);
        }
        self.clock += 1;
        if !self.landed.contains_key(id) {
            let Some(mut buf) = self.buffer_for(alloc, len) else {
                return Ok(None);
            };
            if let Err(e) = store.read_into(id, &mut buf[..len]) {
                self.spare.push(buf);
                return Err(e);
            }
            let landed = Landed {
                buf,
                len,
                last_use: 0,
            };
            self.landed.insert(*id, landed);
        }
        let l = self.landed.get_mut(id).expect("landed above");
        l.last_use = self.clock;
        Ok(Some(&l.buf[..l.len]))
    }

    /// A pinned buffer of at least `len` bytes for a D2H destination, lent
    /// until [`PinnedHost::give_back`] so that it is reused from one copy to
    /// the next; `None` as for [`PinnedHost::blob`].
    pub fn lend_d2h(
        &mut self,
        alloc: impl FnMut(usize) -> Result<Option<HostBuffer>, DeviceError>,
        len: usize,
    ) -> Option<HostBuffer> {
        if self.unsupported {
            return None;
        }
        match self.d2h.take() {
            Some(b) if b.len() >= len => Some(b),
            old => {
                drop(old); // freed before its successor is pinned
                self.ask(alloc, len.next_power_of_two())
            }
        }
    }

    /// Why pinned memory stopped being used, once.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }

    /// `alloc(len)`, turning this off for good on `None` or an error.
    fn ask(
        &mut self,
        mut alloc: impl FnMut(usize) -> Result<Option<HostBuffer>, DeviceError>,
        len: usize,
    ) -> Option<HostBuffer> {
        let got = alloc(len);
        if let Err(e) = &got {
            self.warning = Some(format!(
                "no pinned host memory for {len} bytes ({}); large copies now go from the blob files",
                chain(e)
            ));
        }
        let b = got.ok().flatten();
        self.unsupported = b.is_none();
        b
    }

    /// Takes back the buffer [`PinnedHost::lend_d2h`] lent.
    pub fn give_back(&mut self, buf: HostBuffer) {
        self.d2h = Some(buf);
    }

    /// A buffer for a blob of `len` bytes: a spare that fits (at most twice
    /// the size), else a new one once the budget has room, evicting spares
    /// that do not fit and then least recently used blobs to make it.
    fn buffer_for(
        &mut self,
        alloc: impl FnMut(usize) -> Result<Option<HostBuffer>, DeviceError>,
        len: usize,
    ) -> Option<HostBuffer> {
        loop {
            let fits = |b: &HostBuffer| b.len() >= len && b.len() / 2 <= len;
            if let Some(i) = (0..self.spare.len())
                .filter(|&i| fits(&self.spare[i]))
                .min_by_key(|&i| self.spare[i].len())
            {
                return Some(self.spare.swap_remove(i));
            }
            let nothing_to_free = self.landed.is_empty() && self.spare.is_empty();
            if self.held + len <= self.budget || nothing_to_free {
                let b = self.ask(alloc, len)?;
                self.held += b.len();
                return Some(b);
            }
            if let Some(b) = self.spare.pop() {
                self.held -= b.len();
                continue;
            }
            let oldest = *self
                .landed
                .iter()
                .min_by_key(|(_, l)| l.last_use)
                .map(|(id, _)| id)
                .expect("landed is not empty");
            let evicted = self.landed.remove(&oldest).expect("present");
            self.spare.push(evicted.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::HostMemory;

    /// Host buffers from the heap, counting how many were made.
    struct Heap(Vec<u8>);
    impl std::ops::Deref for Heap {
        type Target = [u8];
        fn deref(&self) -> &[u8] {
            &self.0
        }
    }
    impl std::ops::DerefMut for Heap {
        fn deref_mut(&mut self) -> &mut [u8] {
            &mut self.0
        }
    }
    impl HostMemory for Heap {}

    /// Stands for `Device::host_buffer`.
    struct Dev {
        pinned: bool,
        made: usize,
    }
    impl Dev {
        fn alloc(&mut self) -> impl FnMut(usize) -> Result<Option<HostBuffer>, DeviceError> + '_ {
            |len| {
                if !self.pinned {
                    return Ok(None);
                }
                self.made += 1;
                Ok(Some(Box::new(Heap(vec![0; len])) as HostBuffer))
            }
        }
    }

    fn store_with(blobs: &[Vec<u8>]) -> (tempfile::TempDir, BlobStore, Vec<BlobId>) {
        let t = tempfile::tempdir().unwrap();
        let s = BlobStore::of_archive(t.path());
        let ids = blobs.iter().map(|b| s.put(b).unwrap()).collect();
        (t, s, ids)
    }

    #[test]
    fn a_blob_is_read_once_and_served_from_pinned_memory() {
        let data = vec![(0..100_000u32).map(|i| i as u8).collect::<Vec<_>>()];
        let (_t, s, ids) = store_with(&data);
        let mut dev = Dev {
            pinned: true,
            made: 0,
        };
        let mut p = PinnedHost::new(1 << 20);
        assert_eq!(
            p.blob(dev.alloc(), &s, &ids[0], data[0].len()).unwrap(),
            Some(&data[0][..])
        );
        // Removing the file proves the second use does not read it.
        std::fs::remove_file(s.path(&ids[0])).unwrap();
        assert_eq!(
            p.blob(dev.alloc(), &s, &ids[0], data[0].len()).unwrap(),
            Some(&data[0][..])
        );
        assert_eq!(dev.made, 1);
    }

    #[test]
    fn over_budget_the_least_recently_used_is_evicted_and_its_buffer_reused() {
        let data: Vec<Vec<u8>> = (0..3u8).map(|k| vec![k; 1000]).collect();
        let (_t, s, ids) = store_with(&data);
        let mut dev = Dev {
            pinned: true,
            made: 0,
        };
        let mut p = PinnedHost::new(2000);
        p.blob(dev.alloc(), &s, &ids[0], 1000).unwrap();
        p.blob(dev.alloc(), &s, &ids[1], 1000).unwrap();
        p.blob(dev.alloc(), &s, &ids[0], 1000).unwrap(); // 1 is now the oldest
        assert_eq!(
            p.blob(dev.alloc(), &s, &ids[2], 1000).unwrap(),
            Some(&data[2][..])
        );
        assert_eq!(dev.made, 2, "blob 1's buffer was reused for blob 2");
        assert_eq!(p.held(), 2000);
        std::fs::remove_file(s.path(&ids[0])).unwrap();
        assert_eq!(
            p.blob(dev.alloc(), &s, &ids[0], 1000).unwrap(),
            Some(&data[0][..]),
            "0 stayed"
        );
        std::fs::remove_file(s.path(&ids[1])).unwrap();
        assert!(
            p.blob(dev.alloc(), &s, &ids[1], 1000).is_err(),
            "1 was evicted"
        );
    }

    #[test]
    fn a_blob_over_budget_still_lands_alone() {
        let data = vec![vec![1u8; 3000], vec![2u8; 500]];
        let (_t, s, ids) = store_with(&data);
        let mut dev = Dev {
            pinned: true,
            made: 0,
        };
        let mut p = PinnedHost::new(1000);
        p.blob(dev.alloc(), &s, &ids[1], 500).unwrap();
        assert_eq!(
            p.blob(dev.alloc(), &s, &ids[0], 3000).unwrap(),
            Some(&data[0][..])
        );
        assert_eq!(p.held(), 3000, "the small one was freed to make room");
    }

    #[test]
    fn a_corrupt_blob_is_an_error_and_its_buffer_is_kept() {
        let data = vec![vec![7u8; 4096]];
        let (_t, s, ids) = store_with(&data);
        std::fs::write(s.path(&ids[0]), vec![8u8; 4096]).unwrap();
        let mut dev = Dev {
            pinned: true,
            made: 0,
        };
        let mut p = PinnedHost::new(1 << 20);
        let e = p.blob(dev.alloc(), &s, &ids[0], 4096).unwrap_err();
        assert!(e.to_string().contains("corrupt"), "{e}");
        std::fs::write(s.path(&ids[0]), &data[0]).unwrap();
        p.blob(dev.alloc(), &s, &ids[0], 4096).unwrap();
        assert_eq!(dev.made, 1);
    }

    #[test]
    fn without_pinned_memory_or_budget_nothing_lands() {
        let data = vec![vec![7u8; 4096]];
        let (_t, s, ids) = store_with(&data);
        let mut dev = Dev {
            pinned: false,
            made: 0,
        };
        let mut p = PinnedHost::new(1 << 20);
        assert_eq!(p.blob(dev.alloc(), &s, &ids[0], 4096).unwrap(), None);
        assert!(p.lend_d2h(dev.alloc(), 4096).is_none());
        dev.pinned = true;
        let mut off = PinnedHost::new(0);
        assert_eq!(off.blob(dev.alloc(), &s, &ids[0], 4096).unwrap(), None);
        assert!(off.lend_d2h(dev.alloc(), 4096).is_none());
        assert_eq!(dev.made, 0);
    }

    #[test]
    fn a_failed_allocation_falls_back_with_one_warning() {
        let data = vec![vec![7u8; 4096]];
        let (_t, s, ids) = store_with(&data);
        let mut asked = 0;
        let mut failing = |_: usize| -> Result<Option<HostBuffer>, DeviceError> {
            asked += 1;
            Err(DeviceError::Call {
                call: "cuMemAllocHost_v2",
                code: 2,
                message: "out of memory".into(),
            })
        };
        let mut p = PinnedHost::new(1 << 20);
        assert_eq!(p.blob(&mut failing, &s, &ids[0], 4096).unwrap(), None);
        let w = p.take_warning().expect("a warning");
        assert!(
            w.contains("out of memory") && w.contains("blob files"),
            "{w}"
        );
        assert_eq!(p.take_warning(), None, "once");
        assert!(p.lend_d2h(&mut failing, 4096).is_none());
        assert_eq!(p.blob(&mut failing, &s, &ids[0], 4096).unwrap(), None);
        assert_eq!(asked, 1, "not asked again");
    }

    #[test]
    fn the_d2h_buffer_grows_and_is_reused() {
        let mut dev = Dev {
            pinned: true,
            made: 0,
        };
        let mut p = PinnedHost::new(1 << 20);
        for (len, made, cap) in [(100, 1, 128), (128, 1, 128), (129, 2, 256)] {
            let b = p.lend_d2h(dev.alloc(), len).unwrap();
            assert_eq!((dev.made, b.len()), (made, cap), "for {len}");
            p.give_back(b);
        }
    }
}
