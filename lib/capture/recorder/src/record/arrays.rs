//! Recording arrays (`array_create`, `array_destroy`), copies that name
//! them (`memcpy_array`) and texture and surface objects (`tex_create`,
//! `surf_create` and their destroys). Family-agnostic: HIP's and the CUDA
//! driver's handlers describe their calls as plain values.
//!
//! The recorder keeps each live array's element size (a runtime's 3D copy
//! counts an array's extent in elements; events count bytes) and each live
//! object's handle (kernel arguments equal to one are marked `objs`, in
//! [`crate::record::live_allocs`]).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hrr_core::Dir;
use hrr_core::event::Op;
use hrr_core::hex::{Addr, HexBytes};

use super::recorder::Recorder;

/// Live arrays: handle → bytes per element.
#[derive(Default)]
pub struct LiveArrays {
    map: Mutex<HashMap<u64, u64>>,
}

/// An array's descriptor, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    /// Element format (`CUarray_format`/`hipArray_Format` numbering).
    pub format: u32,
    /// Channels per element.
    pub channels: u32,
    /// Width, height, depth in elements, as the descriptor gave them.
    pub extent: [u64; 3],
    /// The descriptor's flags.
    pub flags: u32,
}

impl ArrayShape {
    /// Bytes per element, where both families define the format.
    pub fn element_bytes(&self) -> Option<u64> {
        let channel = match self.format {
            0x01 | 0x08 => 1,
            0x02 | 0x09 | 0x10 => 2,
            0x03 | 0x0a | 0x20 => 4,
            _ => return None,
        };
        matches!(self.channels, 1 | 2 | 4).then(|| channel * u64::from(self.channels))
    }
}

/// One side of a copy that names an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArraySide {
    /// An array, the copy starting at `pos` (x in bytes, row, slice).
    Array {
        /// Its handle.
        array: u64,
        /// Where the copy starts.
        pos: [u64; 3],
    },
    /// Linear memory: the first byte (offsets added) and its pitches.
    Linear {
        /// The first byte.
        ptr: u64,
        /// Row and slice pitch.
        pitch: [u64; 2],
    },
}

/// A 2D/3D copy with an array on at least one side, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayCopyRec {
    /// The direction, an array counting as device memory.
    pub dir: Dir,
    /// Where it writes.
    pub dst: ArraySide,
    /// What it reads.
    pub src: ArraySide,
    /// Width in bytes, rows, slices.
    pub extent: [u64; 3],
    /// `None`: a synchronous API.
    pub stream: Option<u64>,
}

impl Recorder {
    /// Bytes per element of a live array the recorder saw created.
    pub fn array_element(&self, array: u64) -> Option<u64> {
        let m = self.arrays_map();
        m.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&array)
            .copied()
    }

    /// Records an array's creation (`array` is 0 for a failed call).
    pub fn array_create(&self, api: &str, ret: i32, array: u64, shape: ArrayShape) {
        if ret == 0
            && let Some(e) = shape.element_bytes()
        {
            self.arrays_map()
                .map
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(array, e);
        }
        let op = Op::ArrayCreate {
            array: Addr(array),
            format: shape.format,
            channels: shape.channels,
            extent: shape.extent,
            flags: shape.flags,
        };
        self.op(api, ret, &op);
    }

    /// Records plane `plane` of multi-planar array `parent`, whose handle
    /// is `array` (0 for a failed call): an array of its own in copies and
    /// resources, owned by `parent`.
    pub fn array_plane(&self, api: &str, ret: i32, array: u64, parent: u64, plane: u32) {
        let op = Op::ArrayPlane {
            array: Addr(array),
            parent: Addr(parent),
            plane,
        };
        self.op(api, ret, &op);
    }

    /// Records a mipmapped array's creation (`mipmap` is 0 for a failed
    /// call): `levels` levels, level 0 of `shape`.
    pub fn mipmap_create(&self, api: &str, ret: i32, mipmap: u64, shape: ArrayShape, levels: u32) {
        let op = Op::MipmapCreate {
            mipmap: Addr(mipmap),
            format: shape.format,
            channels: shape.channels,
            extent: shape.extent,
            flags: shape.flags,
            levels,
        };
        self.op(api, ret, &op);
    }

    /// Records level `level` of mipmapped array `mipmap`, whose handle is
    /// `array` (0 for a failed call): an array of its own in copies and
    /// resources, owned by the mipmapped array.
    pub fn mipmap_level(&self, api: &str, ret: i32, array: u64, mipmap: u64, level: u32) {
        let op = Op::MipmapLevel {
            array: Addr(array),
            mipmap: Addr(mipmap),
            level,
        };
        self.op(api, ret, &op);
    }

    /// Records a mipmapped array's destruction.
    pub fn mipmap_destroy(&self, api: &str, ret: i32, mipmap: u64) {
        self.op(
            api,
            ret,
            &Op::MipmapDestroy {
                mipmap: Addr(mipmap),
            },
        );
    }

    /// Records an array's destruction.
    pub fn array_destroy(&self, api: &str, ret: i32, array: u64) {
        if ret == 0 {
            self.arrays_map()
                .map
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&array);
        }
        self.op(api, ret, &Op::ArrayDestroy { array: Addr(array) });
    }

    /// Records a copy that names an array; `data` is the packed host side
    /// (H2D source, D2H result) when the call succeeded and it was read.
    pub fn memcpy_array(&self, api: &str, ret: i32, c: &ArrayCopyRec, data: Option<&[u8]>) {
        let blob = match data {
            Some(d) if ret == 0 => self.put_blob(api, d),
            _ => None,
        };
        self.memcpy_array_op(api, ret, c, blob);
    }

    /// Records a copy that names an array, its host side's blob (if any)
    /// already stored.
    pub(crate) fn memcpy_array_op(
        &self,
        api: &str,
        ret: i32,
        c: &ArrayCopyRec,
        blob: Option<hrr_core::BlobId>,
    ) {
        let side = |s: ArraySide| match s {
            ArraySide::Array { array, pos } => (Addr(array), None, Some(pos)),
            ArraySide::Linear { ptr, pitch } => (Addr(ptr), Some(pitch), None),
        };
        let (dst, dpitch, dpos) = side(c.dst);
        let (src, spitch, spos) = side(c.src);
        let op = Op::MemcpyArray {
            dir: c.dir,
            dst,
            dpitch,
            dpos,
            src,
            spitch,
            spos,
            extent: c.extent,
            stream: c.stream.map(Addr),
            blob,
        };
        self.op(api, ret, &op);
    }

    /// Records a texture object's creation (`tex` and `view` given) or a
    /// surface object's, from the bytes of the family's descriptions.
    pub fn object_create(
        &self,
        api: &str,
        ret: i32,
        obj: u64,
        res: &[u8],
        tex: Option<(&[u8], Option<&[u8]>)>,
    ) {
        if ret == 0 && obj != 0 {
            self.allocs().insert_object(obj);
        }
        let res = HexBytes(res.to_vec());
        let op = match tex {
            Some((desc, view)) => Op::TexCreate {
                obj: Addr(obj),
                res,
                tex_desc: HexBytes(desc.to_vec()),
                view: view.map(|v| HexBytes(v.to_vec())),
            },
            None => Op::SurfCreate {
                obj: Addr(obj),
                res,
            },
        };
        self.op(api, ret, &op);
    }

    /// Records a texture (`surface` false) or surface object's destruction.
    pub fn object_destroy(&self, api: &str, ret: i32, obj: u64, surface: bool) {
        if ret == 0 {
            self.allocs().remove_object(obj);
        }
        let op = if surface {
            Op::SurfDestroy { obj: Addr(obj) }
        } else {
            Op::TexDestroy { obj: Addr(obj) }
        };
        self.op(api, ret, &op);
    }
}
