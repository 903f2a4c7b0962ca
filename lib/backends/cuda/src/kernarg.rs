//! The packed parameter buffer `cuLaunchKernel` takes through `extra`.
//!
//! `extra = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
//! &size, CU_LAUNCH_PARAM_END }`: the driver copies `size` bytes of `buf`
//! into the kernel's parameter space as they are, so every argument must sit
//! at its device-side offset (what `cuFuncGetParamInfo` reports and what the
//! capture records). `size` must be exactly the end of the last parameter:
//! on the H200 (CUDA 13.0, driver 580) a buffer padded past it, e.g. 32
//! bytes for `(int*, const int*, const int*, int)` whose parameters end at
//! 28, fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
//!
//! Why `extra` rather than `kernelParams` (an array of one pointer per
//! argument): `extra` needs no argument count and no per-argument
//! alignment knowledge from the driver, and replays exactly the bytes
//! recorded, gaps included. `kernelParams` would require the argument list
//! to match the kernel's declared parameters one for one, which a capture
//! that recorded a raw buffer (`cudaLaunchKernel` with `extra`) does not give.

use std::borrow::Cow;
use std::ffi::c_void;

use hrr_replay::device::{LaunchArg, packed};

use crate::ffi::{
    CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END,
};

/// A packed buffer and its size, kept together so that `extra` can point at both.
#[derive(Debug)]
pub struct Kernarg<'a> {
    buf: Cow<'a, [u8]>,
    size: usize,
}

impl<'a> Kernarg<'a> {
    /// The buffer for `args`, each at its offset: the argument itself when
    /// it is one packed buffer already (as the replay engine hands them),
    /// else a copy with each at its place.
    pub fn new(args: &[LaunchArg<'a>]) -> Kernarg<'a> {
        let buf = packed(args);
        let size = buf.len();
        Kernarg { buf, size }
    }

    /// The packed bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Whether the kernel takes no parameters.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The five-word `extra` array. The pointers in it are valid while
    /// `self` is neither moved nor dropped. The driver only reads the
    /// buffer (`extra` is `void**` for C's sake).
    pub fn extra(&mut self) -> [*mut c_void; 5] {
        [
            CU_LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            self.buf.as_ptr().cast_mut().cast(),
            CU_LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            (&mut self.size as *mut usize).cast(),
            CU_LAUNCH_PARAM_END as *mut c_void,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_replay::device::pack_args as pack_kernarg;

    fn arg(offset: u32, bytes: &[u8]) -> LaunchArg<'_> {
        LaunchArg { offset, bytes }
    }

    #[test]
    fn packs_at_offsets_with_gaps_and_no_tail_padding() {
        let p = 0x7f00_1234_5678_9abc_u64.to_le_bytes();
        let a = 2.5f32.to_le_bytes();
        let n = 1000u32.to_le_bytes();
        // (float* y, const float* x, float a, int n) -> 0, 8, 16, 20; end 24.
        let args = [arg(0, &p), arg(8, &p), arg(16, &a), arg(20, &n)];
        let buf = pack_kernarg(&args);
        assert_eq!(buf.len(), 24);
        assert_eq!(&buf[0..8], &p);
        assert_eq!(&buf[16..20], &a);
        assert_eq!(&buf[20..24], &n);
        // (char c, double d) -> 0, 8: the gap stays zero; end 16.
        let args = [arg(0, &[0xAB]), arg(8, &[1; 8])];
        let buf = pack_kernarg(&args);
        assert_eq!(buf, [0xAB, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        // (int) -> 4 bytes, not padded to 8.
        assert_eq!(pack_kernarg(&[arg(0, &[1, 2, 3, 4])]), [1, 2, 3, 4]);
    }

    #[test]
    fn order_of_args_does_not_matter() {
        let args = [arg(8, &[2; 4]), arg(0, &[1; 8])];
        assert_eq!(pack_kernarg(&args), [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn struct_by_value_is_copied_whole() {
        // struct { float* a; float* b; int n; } by value: one 24-byte argument.
        let mut s = Vec::new();
        s.extend_from_slice(&0x1000u64.to_le_bytes());
        s.extend_from_slice(&0x2000u64.to_le_bytes());
        s.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 0]);
        let buf = pack_kernarg(&[arg(0, &s), arg(24, &[9; 4])]);
        assert_eq!(&buf[..24], &s[..]);
        assert_eq!(&buf[24..28], &[9; 4]);
        assert_eq!(buf.len(), 28);
    }

    #[test]
    fn no_args_is_empty() {
        assert!(pack_kernarg(&[]).is_empty());
        assert!(Kernarg::new(&[]).is_empty());
    }

    #[test]
    fn one_packed_buffer_is_used_as_it_is() {
        let packed = [3u8; 20];
        let k = Kernarg::new(&[arg(0, &packed)]);
        assert_eq!(k.bytes().as_ptr(), packed.as_ptr(), "not copied");
        assert_eq!(k.bytes(), &packed[..]);
        // At another offset it is placed in a buffer of its own.
        let k = Kernarg::new(&[arg(8, &packed)]);
        assert_eq!(k.bytes().len(), 28);
        assert_eq!(&k.bytes()[8..], &packed[..]);
    }

    #[test]
    fn extra_points_at_buffer_and_size() {
        let mut k = Kernarg::new(&[arg(0, &[1; 8]), arg(8, &[2; 4])]);
        let e = k.extra();
        assert_eq!(e[0] as usize, CU_LAUNCH_PARAM_BUFFER_POINTER);
        assert_eq!(e[1] as *const u8, k.bytes().as_ptr());
        assert_eq!(e[2] as usize, CU_LAUNCH_PARAM_BUFFER_SIZE);
        // SAFETY: e[3] points at `k.size`, alive and unmoved.
        assert_eq!(unsafe { *(e[3] as *const usize) }, 12);
        assert_eq!(e[4] as usize, CU_LAUNCH_PARAM_END);
    }
}
