//! The direction of a CUDA copy, resolved at capture (DESIGN.md §4: `dir` is
//! `h2d`/`d2h`/`d2d`/`h2h`, never "default").
//!
//! Explicit kinds are taken at their word. `cudaMemcpyDefault` (and any
//! kind this code does not know) is resolved per operand: first from the
//! allocations the recorder saw succeed (`LiveAllocs`: device and managed
//! are device-side, pinned and host are not), then by asking the runtime
//! (`cudaPointerGetAttributes`, whose `type` maps through
//! [`memory_type_is_device`]). Memory nobody knows is host memory: a device
//! pointer the runtime never reported (a driver-API allocation) still answers
//! `cudaMemoryTypeDevice` to the query, so only pageable host memory lands
//! there.

#![deny(unsafe_code)]

use std::ffi::c_int;

use hrr_core::Dir;

use super::types::{self as cu, MemcpyKind, memory_type_is_device};

/// The direction of a copy of `kind`; `dst_dev` / `src_dev` say whether an
/// operand is device-side and are only asked for `cudaMemcpyDefault`.
pub fn resolve(
    kind: MemcpyKind,
    dst_dev: impl FnOnce() -> bool,
    src_dev: impl FnOnce() -> bool,
) -> Dir {
    match kind {
        cu::MEMCPY_HOST_TO_HOST => Dir::H2h,
        cu::MEMCPY_HOST_TO_DEVICE => Dir::H2d,
        cu::MEMCPY_DEVICE_TO_HOST => Dir::D2h,
        cu::MEMCPY_DEVICE_TO_DEVICE => Dir::D2d,
        _ => Dir::between(src_dev(), dst_dev()),
    }
}

/// Whether one operand is device-side: the live allocation map's answer
/// (`known`) if it has one, else the runtime's pointer type (`query`, `None`
/// when the query failed), else host.
pub fn device_side(known: Option<bool>, query: impl FnOnce() -> Option<c_int>) -> bool {
    known
        .or_else(|| query().and_then(memory_type_is_device))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_kinds_are_never_questioned() {
        let no = || -> bool { panic!("asked") };
        assert_eq!(resolve(cu::MEMCPY_HOST_TO_HOST, no, no), Dir::H2h);
        assert_eq!(resolve(cu::MEMCPY_HOST_TO_DEVICE, no, no), Dir::H2d);
        assert_eq!(resolve(cu::MEMCPY_DEVICE_TO_HOST, no, no), Dir::D2h);
        assert_eq!(resolve(cu::MEMCPY_DEVICE_TO_DEVICE, no, no), Dir::D2d);
    }

    #[test]
    fn default_is_resolved_per_operand() {
        let k = cu::MEMCPY_DEFAULT;
        assert_eq!(resolve(k, || true, || false), Dir::H2d);
        assert_eq!(resolve(k, || false, || true), Dir::D2h);
        assert_eq!(resolve(k, || true, || true), Dir::D2d);
        assert_eq!(resolve(k, || false, || false), Dir::H2h);
        // An unknown kind is treated like Default, not trusted.
        assert_eq!(resolve(17, || true, || false), Dir::H2d);
    }

    #[test]
    fn operand_from_pointer_attribute_type() {
        // The live map wins and the runtime is not asked.
        assert!(device_side(Some(true), || panic!("asked")));
        assert!(!device_side(Some(false), || panic!("asked")));
        // Otherwise the runtime's cudaMemoryType decides.
        assert!(!device_side(None, || Some(cu::MEMORY_TYPE_UNREGISTERED)));
        assert!(!device_side(None, || Some(cu::MEMORY_TYPE_HOST)));
        assert!(device_side(None, || Some(cu::MEMORY_TYPE_DEVICE)));
        assert!(device_side(None, || Some(cu::MEMORY_TYPE_MANAGED)));
        // A failed query or an unknown type: host.
        assert!(!device_side(None, || None));
        assert!(!device_side(None, || Some(99)));
        // cudaMemcpyDefault from a driver-API segment (runtime says device)
        // into pageable memory (unregistered): d2h.
        let dst = || device_side(None, || Some(cu::MEMORY_TYPE_UNREGISTERED));
        let src = || device_side(None, || Some(cu::MEMORY_TYPE_DEVICE));
        assert_eq!(resolve(cu::MEMCPY_DEFAULT, dst, src), Dir::D2h);
    }
}
