//! `Kept`: bytes of the application (or of the recorder) that a blob file is
//! written from where they lie, after the call that named them returned.
//!
//! A code object the CUDA or HIP runtime registered stays in the
//! application's memory until it is unregistered, and an image the driver
//! layer copied stays in the recorder's copy until that copy is dropped.
//! Copying tens of megabytes of them only to write them later, or writing
//! them on the launching thread, is what a capture's first steps paid most
//! for. So the recording thread hashes them, and the thread that writes the
//! events buffer writes them from where they are. Whoever frees that memory
//! settles the recorder first (`Recorder::settle_code`). A handle holds a
//! plain address and length: dropping or clearing one frees nothing, so the
//! batches that hold them stay safe to clear in a signal handler.
//!
//! Memory the program owns can still change between the hash and the
//! write (a JIT rewriting its buffer, a heap block freed and reused
//! without the unregistration the recorder would see). So the writer
//! hashes what it wrote, read back from the file, and keeps the file only
//! if that is the name (`sink::blob_batch`). The bytes are only ever read
//! here by the recording thread, within the call that names them, and by
//! the kernel for write(2): memory the program unmapped meanwhile makes
//! the write fail (`EFAULT`), not this process.

/// `len` bytes at `addr`, readable until the recorder is settled.
#[derive(Clone, Copy, Debug)]
pub struct Kept {
    addr: *const u8,
    len: usize,
}

// SAFETY: a `Kept` only reads the bytes, and `Kept::new`'s caller vouches
// that they stay readable, from any thread, until the recorder is settled.
unsafe impl Send for Kept {}
// SAFETY: as above: shared, it is read only.
unsafe impl Sync for Kept {}

impl Kept {
    /// # Safety
    /// `len` bytes at `addr` stay readable (mapped) until every blob written
    /// from them is on disk: the caller's memory is only unmapped after
    /// `Recorder::settle_code` returned. Their changing meanwhile is found
    /// by the write, not prevented (and their being unmapped makes it
    /// fail).
    pub unsafe fn new(addr: *const u8, len: usize) -> Kept {
        Kept { addr, len }
    }

    /// Bytes that live as long as the process.
    pub fn of_static(bytes: &'static [u8]) -> Kept {
        Kept {
            addr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: per `new`'s contract (or a static slice), `len` bytes at
        // `addr` are readable while the handle is in use.
        unsafe { std::slice::from_raw_parts(self.addr, self.len) }
    }

    /// Their length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
