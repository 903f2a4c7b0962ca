//! `KernelArgs`: a launch's arguments as recorded — the bytes of each host
//! argument, its kernarg offset, and where device pointers sit in it.
//!
//! The layout comes from the code object's metadata ([`ArgLayout`]), host
//! arguments only (`hidden_*` ones are the runtime's). Values arrive either
//! as `kernelParams` (one pointer per host argument) or as the packed
//! `extra` buffer, which is cut at the metadata offsets. Pointers: a
//! `global_buffer` argument is a pointer at offset 0; every other argument is
//! scanned word by word against the live allocations (`LiveAllocs::scan`).

use std::ops::Range;

use hrr_codeobj::KernelMeta;

use crate::event_line::ArgRef;
use crate::live_allocs::AllocView;

/// One host argument of a kernel's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgSlot {
    pub offset: u32,
    pub size: u32,
    /// `global_buffer`: the argument is a device pointer.
    pub pointer: bool,
}

/// The host arguments of one kernel, in `kernelParams` order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgLayout {
    pub slots: Vec<ArgSlot>,
}

impl ArgLayout {
    pub fn of(meta: &KernelMeta) -> ArgLayout {
        ArgLayout {
            slots: meta
                .host_args()
                .map(|a| ArgSlot { offset: a.offset, size: a.size, pointer: a.is_pointer() })
                .collect(),
        }
    }
}

/// Where a launch's argument values are.
#[derive(Clone, Debug)]
pub enum ArgValues<'a> {
    /// Nothing readable (a failed launch, or no arguments given).
    None,
    /// `kernelParams[i]`, already cut to the size of host argument `i`.
    Params(Vec<&'a [u8]>),
    /// The packed `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER) buffer.
    Buffer(&'a [u8]),
}

/// The recorded arguments of one launch, borrowing the values.
#[derive(Debug, Default)]
pub struct KernelArgs<'a> {
    parts: Vec<(Option<u32>, &'a [u8], Range<usize>)>,
    ptrs: Vec<u32>,
}

impl<'a> KernelArgs<'a> {
    /// Cuts `values` by `layout` and finds the pointers in each argument.
    /// Without a layout only a packed buffer can be recorded (as one
    /// argument at offset 0, scanned whole); `kernelParams` cannot, since
    /// their number and sizes are unknown.
    pub fn capture(layout: Option<&ArgLayout>, values: &ArgValues<'a>, allocs: &AllocView<'_>) -> KernelArgs<'a> {
        let mut out = KernelArgs::default();
        match (layout, values) {
            (_, ArgValues::None) | (None, ArgValues::Params(_)) => {}
            (Some(l), ArgValues::Params(vals)) => {
                for (slot, bytes) in l.slots.iter().zip(vals) {
                    out.push(Some(slot.offset), bytes, slot.pointer, allocs);
                }
            }
            (Some(l), ArgValues::Buffer(buf)) => {
                for slot in &l.slots {
                    let start = (slot.offset as usize).min(buf.len());
                    let end = (slot.offset as usize).saturating_add(slot.size as usize).min(buf.len());
                    out.push(Some(slot.offset), &buf[start..end], slot.pointer, allocs);
                }
            }
            (None, ArgValues::Buffer(buf)) => out.push(Some(0), buf, false, allocs),
        }
        out
    }

    fn push(&mut self, offset: Option<u32>, bytes: &'a [u8], pointer: bool, allocs: &AllocView<'_>) {
        let start = self.ptrs.len();
        if pointer {
            if bytes.len() >= 8 {
                self.ptrs.push(0);
            }
        } else {
            allocs.scan(bytes, &mut self.ptrs);
        }
        self.parts.push((offset, bytes, start..self.ptrs.len()));
    }

    /// The arguments as the event encoder takes them.
    pub fn refs(&self) -> Vec<ArgRef<'_>> {
        self.parts
            .iter()
            .map(|(offset, bytes, r)| ArgRef { offset: *offset, bytes, ptrs: &self.ptrs[r.clone()] })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.parts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live_allocs::LiveAllocs;
    use hrr_codeobj::{ArgKind, ArgMeta};
    use hrr_core::MemKind;

    fn meta() -> KernelMeta {
        let arg = |offset, size, kind| ArgMeta { offset, size, kind, address_space: None, name: None };
        KernelMeta {
            name: "k".into(),
            symbol: "k".into(),
            kernarg_segment_size: 64,
            args: vec![
                arg(0, 8, ArgKind::GlobalBuffer),
                arg(8, 4, ArgKind::ByValue),
                arg(16, 24, ArgKind::ByValue),
                arg(40, 8, ArgKind::Hidden("hidden_global_offset_x".into())),
            ],
        }
    }

    const BASE: u64 = 0x7f55_1234_0000;

    fn allocs() -> LiveAllocs {
        let a = LiveAllocs::new();
        a.insert(BASE, 0x1000, MemKind::Device);
        a
    }

    fn strukt() -> Vec<u8> {
        // struct { int n; int pad; float *p; long k; } with p interior.
        let mut s = Vec::new();
        s.extend_from_slice(&3u32.to_le_bytes());
        s.extend_from_slice(&0u32.to_le_bytes());
        s.extend_from_slice(&(BASE + 0x20).to_le_bytes());
        s.extend_from_slice(&99u64.to_le_bytes());
        s
    }

    #[test]
    fn layout_drops_hidden_args() {
        let l = ArgLayout::of(&meta());
        assert_eq!(l.slots.len(), 3);
        assert!(l.slots[0].pointer && !l.slots[2].pointer);
    }

    #[test]
    fn params_and_buffer_give_the_same_record() {
        let l = ArgLayout::of(&meta());
        let a = allocs();
        let v = a.view();
        let p = BASE.to_le_bytes();
        let n = 7u32.to_le_bytes();
        let s = strukt();
        let from_params = KernelArgs::capture(Some(&l), &ArgValues::Params(vec![&p, &n, &s]), &v);
        let mut buf = vec![0u8; 40];
        buf[0..8].copy_from_slice(&p);
        buf[8..12].copy_from_slice(&n);
        buf[16..40].copy_from_slice(&s);
        let from_buf = KernelArgs::capture(Some(&l), &ArgValues::Buffer(&buf), &v);
        for args in [from_params.refs(), from_buf.refs()] {
            assert_eq!(args.len(), 3);
            assert_eq!((args[0].offset, args[0].ptrs), (Some(0), &[0u32][..]));
            assert_eq!((args[1].offset, args[1].bytes, args[1].ptrs), (Some(8), &n[..], &[][..]));
            assert_eq!((args[2].offset, args[2].ptrs), (Some(16), &[8u32][..]));
        }
    }

    #[test]
    fn without_layout_params_are_unrecordable_but_a_buffer_is_scanned() {
        let a = allocs();
        let v = a.view();
        let p = BASE.to_le_bytes();
        assert!(KernelArgs::capture(None, &ArgValues::Params(vec![&p]), &v).is_empty());
        let s = strukt();
        let k = KernelArgs::capture(None, &ArgValues::Buffer(&s), &v);
        assert_eq!(k.refs()[0].ptrs, &[8]);
    }

    #[test]
    fn short_buffer_is_cut_not_overrun() {
        let l = ArgLayout::of(&meta());
        let a = allocs();
        let k = KernelArgs::capture(Some(&l), &ArgValues::Buffer(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), &a.view());
        let r = k.refs();
        assert_eq!(r[1].bytes, &[9, 10]);
        assert!(r[2].bytes.is_empty());
    }
}
