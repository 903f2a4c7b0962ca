//! `ArgLayout` and `ArgValues`: a launch's arguments as the recorder reads
//! them — the bytes of each host argument and its kernarg offset.
//!
//! The layout comes from the code object's metadata, host arguments only
//! (`hidden_*` ones are the runtime's). Values arrive either as
//! `kernelParams` (one pointer per host argument) or as the packed `extra`
//! buffer, which is cut at the metadata offsets. [`ArgValues::args`] yields
//! them in order; the event encoder finds their pointers as it writes them
//! (`EventLine::args_scanned`): a `global_buffer` argument is a pointer at
//! offset 0, every other argument is scanned word by word against the live
//! allocations (`AllocView::scan_each`).

use hrr_codeobj::KernelMeta;

/// `a == b` for two arguments' bytes, without a `bcmp` call for the common
/// 8- and 4-byte arguments (this runs on every recorded launch).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if let (Ok(x), Ok(y)) = (<[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) {
        return u64::from_ne_bytes(x) == u64::from_ne_bytes(y);
    }
    if let (Ok(x), Ok(y)) = (<[u8; 4]>::try_from(a), <[u8; 4]>::try_from(b)) {
        return u32::from_ne_bytes(x) == u32::from_ne_bytes(y);
    }
    a == b
}

/// One host argument of a kernel's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgSlot {
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// `global_buffer`: the argument is a device pointer.
    pub pointer: bool,
}

/// The host arguments of one kernel, in `kernelParams` order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgLayout {
    /// The arguments, in order.
    pub slots: Vec<ArgSlot>,
}

impl ArgLayout {
    /// The host arguments of `meta`.
    pub fn of(meta: &KernelMeta) -> ArgLayout {
        ArgLayout {
            slots: meta
                .host_args()
                .map(|a| ArgSlot {
                    offset: a.offset,
                    size: a.size,
                    pointer: a.is_pointer(),
                })
                .collect(),
        }
    }

    /// Each host argument's size in bytes, in order.
    pub fn sizes(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.slots.iter().map(|s| s.size as usize)
    }
}

/// Where a launch's argument values are.
#[derive(Clone, Copy, Debug)]
pub enum ArgValues<'s, 'a> {
    /// Nothing readable (a failed launch, or no arguments given).
    None,
    /// `kernelParams[i]`, already cut to the size of host argument `i`.
    Params(&'s [&'a [u8]]),
    /// The packed `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER) buffer.
    Buffer(&'a [u8]),
}

/// One argument as it goes into the event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgIn<'a> {
    /// Byte offset in the kernarg segment, when known.
    pub offset: Option<u32>,
    /// The argument's bytes.
    pub bytes: &'a [u8],
    /// A `global_buffer`: a pointer at offset 0, not scanned.
    pub pointer: bool,
}

impl<'s, 'a> ArgValues<'s, 'a> {
    /// The recordable arguments, in order. Without a layout only a packed
    /// buffer can be recorded (one argument at offset 0, scanned whole):
    /// the number and sizes of `kernelParams` are unknown.
    pub fn args<'l>(&self, layout: Option<&'l ArgLayout>) -> ArgIter<'l, 's, 'a> {
        ArgIter {
            layout,
            values: *self,
            i: 0,
        }
    }
}

/// Iterator of [`ArgValues::args`].
#[derive(Clone)]
pub struct ArgIter<'l, 's, 'a> {
    layout: Option<&'l ArgLayout>,
    values: ArgValues<'s, 'a>,
    i: usize,
}

impl<'a> Iterator for ArgIter<'_, '_, 'a> {
    type Item = ArgIn<'a>;

    fn next(&mut self) -> Option<ArgIn<'a>> {
        let i = self.i;
        self.i += 1;
        match (self.layout, self.values) {
            (_, ArgValues::None) | (None, ArgValues::Params(_)) => None,
            (Some(l), ArgValues::Params(vals)) => {
                let (slot, bytes) = (l.slots.get(i)?, vals.get(i)?);
                Some(ArgIn {
                    offset: Some(slot.offset),
                    bytes,
                    pointer: slot.pointer,
                })
            }
            (Some(l), ArgValues::Buffer(buf)) => {
                let slot = l.slots.get(i)?;
                let start = (slot.offset as usize).min(buf.len());
                let end = (slot.offset as usize)
                    .saturating_add(slot.size as usize)
                    .min(buf.len());
                Some(ArgIn {
                    offset: Some(slot.offset),
                    bytes: &buf[start..end],
                    pointer: slot.pointer,
                })
            }
            (None, ArgValues::Buffer(buf)) => (i == 0).then_some(ArgIn {
                offset: Some(0),
                bytes: buf,
                pointer: false,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_codeobj::{ArgKind, ArgMeta};

    fn meta() -> KernelMeta {
        let arg = |offset, size, kind| ArgMeta {
            offset,
            size,
            kind,
            address_space: None,
            name: None,
        };
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

    #[test]
    fn layout_drops_hidden_args() {
        let l = ArgLayout::of(&meta());
        assert_eq!(l.slots.len(), 3);
        assert!(l.slots[0].pointer && !l.slots[2].pointer);
    }

    #[test]
    fn params_and_buffer_give_the_same_arguments() {
        let l = ArgLayout::of(&meta());
        let (p, n, s) = ([1u8; 8], [2u8; 4], [3u8; 24]);
        let vals: [&[u8]; 3] = [&p, &n, &s];
        let from_params: Vec<_> = ArgValues::Params(&vals).args(Some(&l)).collect();
        let mut buf = vec![0u8; 40];
        buf[0..8].copy_from_slice(&p);
        buf[8..12].copy_from_slice(&n);
        buf[16..40].copy_from_slice(&s);
        let from_buf: Vec<_> = ArgValues::Buffer(&buf).args(Some(&l)).collect();
        assert_eq!(from_params, from_buf);
        assert_eq!(
            from_params[0],
            ArgIn {
                offset: Some(0),
                bytes: &p,
                pointer: true
            }
        );
        assert_eq!(
            from_params[2],
            ArgIn {
                offset: Some(16),
                bytes: &s,
                pointer: false
            }
        );
    }

    #[test]
    fn without_layout_only_a_buffer_is_recordable() {
        let p = [1u8; 8];
        let vals: [&[u8]; 1] = [&p];
        assert_eq!(ArgValues::Params(&vals).args(None).count(), 0);
        let all: Vec<_> = ArgValues::Buffer(&[9; 12]).args(None).collect();
        assert_eq!(
            all,
            [ArgIn {
                offset: Some(0),
                bytes: &[9; 12],
                pointer: false
            }]
        );
        assert_eq!(
            ArgValues::None.args(Some(&ArgLayout::of(&meta()))).count(),
            0
        );
    }

    #[test]
    fn short_buffer_is_cut_not_overrun() {
        let l = ArgLayout::of(&meta());
        let r: Vec<_> = ArgValues::Buffer(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
            .args(Some(&l))
            .collect();
        assert_eq!(r[1].bytes, &[9, 10]);
        assert!(r[2].bytes.is_empty());
    }
}
