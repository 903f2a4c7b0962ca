//! Kernel launches: grid shapes, the `extra` argument array, JIT options.

use core::ffi::c_int;

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }
    /// Product of the three extents; `None` past u64 (three u32 extents
    /// can reach 2^96: an application's grid is not to be trusted).
    pub fn volume(self) -> Option<u64> {
        u64::from(self.x)
            .checked_mul(u64::from(self.y))?
            .checked_mul(u64::from(self.z))
    }
    pub fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

const _: () = assert!(core::mem::size_of::<Dim3>() == 12);

/// `HIP_LAUNCH_PARAM_*` markers of the `extra` array of hipModuleLaunchKernel:
/// small integers passed where pointers go.
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
pub const LAUNCH_PARAM_END: usize = 3;

/// `hipJitOption` (a C enum).
pub type JitOption = c_int;

#[cfg(test)]
mod tests {
    use super::Dim3;

    #[test]
    fn volume_and_array() {
        // Wider than u32: the product is taken in u64.
        assert_eq!(
            Dim3::new(u32::MAX, 2, 1).volume(),
            Some(u64::from(u32::MAX) * 2)
        );
        assert_eq!(
            Dim3::new(u32::MAX, u32::MAX, 1).volume(),
            Some(u64::from(u32::MAX).pow(2))
        );
        assert_eq!(Dim3::new(u32::MAX, u32::MAX, 2).volume(), None);
        assert_eq!(Dim3::new(1, 2, 3).to_array(), [1, 2, 3]);
    }
}
