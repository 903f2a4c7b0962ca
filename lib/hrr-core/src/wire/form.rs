//! The flat serde form of an event line ([`Wire`]) and the reference
//! encoding and parse of [`Event`]s through it.
//!
//! Two tables meet here. The *key table* (`wire_keys!`, below) lists every
//! optional key a line may carry, in the order a line writes them, with the
//! type of its value and the codec that reads and writes it: [`Wire`], the
//! key ranks, the scanner's keys and the encoder's writing of each key are
//! generated from it. The *op table* (`op_table!`, in
//! [`crate::event`]) says which keys each op's fields go to; moving an
//! [`Op`] out of a `Wire` ([`Event::from_wire`]) and into one
//! ([`Event::to_wire`]) is generated from it, field by field, through
//! [`Field`], which converts by type (a `String` travels as a borrowed
//! `Cow`, an `Option` is an optional key).
//!
//! Parsing goes through a flat struct with optional fields rather than a
//! serde internally-tagged enum: internal tagging buffers every line into an
//! intermediate tree, which halves reader throughput. The flat form is then
//! checked into an [`Event`], and a missing field is an error naming it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::event::{DevTime, Dir, Event, KernelArg, LaunchAttr, MemKind, Op, op_field, op_table};
use crate::graph::{GraphNode, NodeBlob};
use crate::hex::{Addr, BlobId, HexBytes};

/// Why a line could not become an [`Event`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventError {
    #[error("invalid JSON: {0}")]
    /// The line is not JSON of the wire form (serde's message).
    Json(String),
    #[error("op `{op}` lacks required field `{field}`")]
    /// A required field of the op is absent.
    Missing {
        /// The op.
        op: String,
        /// The field.
        field: &'static str,
    },
    #[error("unknown op `{0}`")]
    /// An op this hrr does not know.
    UnknownOp(String),
}

/// The key table: every optional key of a line, in the order a line writes
/// them (serde writes [`Wire`]'s fields in declaration order, and the fast
/// encoder follows), as `key: Type => codec`. `Type` is the value's type in
/// [`Wire`] (attributes, docs and `serde(…)`, go onto its field); `codec`
/// names how the scanner reads the value and the fast encoder writes it
/// (`read_value!` in `wire::scan`, `write_value!` in `wire::encode`: one
/// arm each per codec, so that the generated code is the code one would
/// write by hand).
///
/// `wire_keys!(cb TOKENS…)` expands to `cb! { TOKENS… TABLE }`. Several ops
/// share a key when their fields mean the same thing (`ptr`, `size`,
/// `stream`).
macro_rules! wire_keys {
    ($cb:ident $($x:tt)*) => {
        $cb! {
            $($x)*
            /// `alloc`, `free`, `host_register`, `host_unregister`: the address.
            ptr: Addr => addr,
            /// Bytes: allocated, copied, set, registered or relocated.
            size: u64 => uint,
            /// `alloc`, `free`: the memory kind.
            mem: MemKind => mem,
            /// `memcpy`: the direction.
            dir: Dir => dir,
            /// `memcpy`, `memset`, `relocate`: the destination.
            dst: Addr => addr,
            /// `memcpy`: the source.
            src: Addr => addr,
            /// `memset`: the pattern value.
            value: u32 => u32,
            /// `memset`: the pattern width, when not 1.
            width: u8 => u8,
            /// The stream, where the op has one.
            stream: Addr => addr,
            /// `memcpy`: the bytes' blob; `relocate`: the offsets' blob.
            blob: BlobId => blob,
            /// The module handle.
            module: Addr => addr,
            /// `module_load`, `launch`: the code object's blob.
            code: BlobId => blob,
            /// `function`, `launch`: the kernel name.
            #[serde(borrow)]
            name: Cow<'a, str> => str,
            /// `function`, `launch`: the function handle.
            func: Addr => addr,
            /// `launch`: grid dimensions.
            grid: [u32; 3] => dims,
            /// `launch`: block dimensions.
            block: [u32; 3] => dims,
            /// `launch`: dynamic shared memory bytes.
            shmem: u32 => u32,
            /// `launch`: the arguments.
            args: Vec<KernelArg> => args,
            /// The event handle, where the op has one.
            event: Addr => addr,
            /// `set_device`: the ordinal.
            device: i32 => i32,
            /// `eof`: events before it.
            events: u64 => uint,
            /// A timed replay's `dev_t`; see [`DevTime`].
            dev_t: u64 => uint,
            /// A timed replay's `dev_ns`; see [`DevTime`].
            dev_ns: u64 => uint,
            /// CUDA context ops: the context.
            ctx: Addr => addr,
            /// CUDA physical-memory ops: the allocation's handle.
            handle: Addr => addr,
            /// `mem_map`: offset into the allocation.
            offset: u64 => uint,
            /// `launch`: CUDA launch attributes (omitted when none).
            attrs: Vec<LaunchAttr> => attrs,
            /// Graph ops: the executable graph.
            exec: Addr => addr,
            /// `graph_exec`: the graph it was made from.
            graph: Addr => addr,
            /// `graph_exec`: the nodes.
            nodes: Vec<GraphNode> => nodes,
            /// `graph_launch`: the host copy nodes' blobs.
            blobs: Vec<NodeBlob> => node_blobs,
            /// `memcpy_rect`, `memset_rect`: row and slice pitch of the destination.
            dpitch: [u64; 2] => nums,
            /// `memcpy_rect`: row and slice pitch of the source.
            spitch: [u64; 2] => nums,
            /// `memcpy_rect`, `memset_rect`: width in bytes, height, depth.
            extent: [u64; 3] => nums,
            /// Pool ops: the memory pool.
            pool: Addr => addr,
            /// `pool_attr`: the attribute's number.
            attr: u32 => u32,
            /// `pool_attr`: the attribute's value.
            attr_value: u64 => uint,
            /// `mem_export`, `mem_import`: the shareable handle.
            shareable: u64 => uint,
            /// `memcpy_peer`: the destination's device.
            dst_device: i32 => i32,
            /// `memcpy_peer`: the source's device.
            src_device: i32 => i32,
            /// `peer_access`: the peer device.
            peer: i32 => i32,
            /// `array_create`, `array_destroy`: the array.
            array: Addr => addr,
            /// `array_create`: the element format.
            format: u32 => u32,
            /// `array_create`: channels per element.
            channels: u32 => u32,
            /// `array_create`: the descriptor's flags.
            flags: u32 => u32,
            /// `array_plane`: the multi-planar array.
            parent: Addr => addr,
            /// `array_plane`: the plane's index.
            plane: u32 => u32,
            /// `mipmap_*`: the mipmapped array.
            mipmap: Addr => addr,
            /// `mipmap_create`: how many levels.
            levels: u32 => u32,
            /// `mipmap_level`: the level.
            level: u32 => u32,
            /// `memcpy_array`: position in a destination array.
            dpos: [u64; 3] => nums,
            /// `memcpy_array`: position in a source array.
            spos: [u64; 3] => nums,
            /// `tex_*`, `surf_*`: the object.
            obj: Addr => addr,
            /// `tex_create`, `surf_create`: the resource description's bytes.
            res: HexBytes => hex,
            /// `tex_create`: the texture description's bytes.
            tex_desc: HexBytes => hex,
            /// `tex_create`: the resource view's bytes.
            view: HexBytes => hex,
            /// `nccl_*`: the communicator.
            comm: Addr => addr,
            /// `nccl_comm_init`: the name of the unique id.
            #[serde(borrow)]
            uid: Cow<'a, str> => str,
            /// `nccl_comm_init`: ranks in all.
            nranks: u32 => u32,
            /// `nccl_comm_init`: this rank.
            rank: u32 => u32,
            /// `nccl_coll`: which operation.
            #[serde(borrow)]
            coll: Cow<'a, str> => str,
            /// `nccl_coll`: elements.
            count: u64 => uint,
            /// `nccl_coll`: the data type.
            dtype: u32 => u32,
            /// `nccl_coll`: the reduction operator.
            redop: u32 => u32,
            /// `nccl_coll`: the root rank.
            root: i32 => i32,
            /// `nccl_comm_split`: this rank's color.
            color: i32 => i32,
            /// `nccl_comm_split`: this rank's key.
            key: i32 => i32,
            /// `nccl_comm_init_all`: the communicators.
            comms: Vec<Addr> => addrs,
            /// `nccl_comm_init_all`: their devices.
            devices: Vec<i32> => ints,
        }
    };
}
pub(crate) use wire_keys;

/// Callback of `wire_keys!`: [`Wire`] and [`Key`].
macro_rules! define_wire {
    ($( $(#[$m:meta])* $k:ident : $t:ty => $codec:ident ),* $(,)?) => {
        /// Flat wire form of an event: every field any op may carry.
        ///
        /// The common header, then one optional field per key of the key
        /// table, in its order.
        #[derive(Default, Serialize, Deserialize)]
        pub struct Wire<'a> {
            /// The event's place in the global order.
            pub seq: u64,
            #[serde(default)]
            /// CLOCK_MONOTONIC nanoseconds.
            pub t: u64,
            #[serde(default)]
            /// The recording thread.
            pub tid: u64,
            #[serde(borrow)]
            /// The runtime entry point.
            pub api: Cow<'a, str>,
            #[serde(borrow)]
            /// The op's name.
            pub op: Cow<'a, str>,
            #[serde(default)]
            /// What the call returned.
            pub ret: i64,
            #[serde(default, skip_serializing_if = "is_zero")]
            /// The device the call ran on (the calling thread's current
            /// device); absent for device 0.
            pub dev: u32,
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                $(#[$m])*
                pub $k: Option<$t>,
            )*
        }

        /// Every key of a line by its place in [`Wire`] (`Key::size as u8`):
        /// the order the encoder writes an op's fields in, and the scanner's
        /// bit per key.
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy)]
        #[repr(u8)]
        pub(crate) enum Key {
            seq,
            t,
            tid,
            api,
            op,
            ret,
            dev,
            $($k,)*
        }
    };
}

wire_keys!(define_wire);

/// Device 0 is not written: old archives and single-device ones read as it.
fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Wire<'_> {
    /// The device timing of a timed replay's event (both fields present).
    pub fn dev_time(&self) -> Option<DevTime> {
        Some(DevTime {
            t: self.dev_t?,
            ns: self.dev_ns?,
        })
    }
}

/// How a field of an [`Op`] moves between the op and its [`Wire`] slot
/// (`Option<Slot>`), by the field's type.
pub(crate) trait Field<'a>: Sized {
    /// What the slot holds.
    type Slot;
    /// What the field holds when it is present: itself, or what an
    /// `Option` field holds.
    type Value;

    /// The field, out of its slot (lists and strings are moved out);
    /// `None` when the slot is empty and the field cannot be (an `Option`
    /// field never is).
    fn take(slot: &mut Option<Self::Slot>) -> Option<Self>;

    /// The slot for this value (`None`: the key is not written).
    fn put(&'a self) -> Option<Self::Slot>;

    /// The value to write (`None`: the key is not written).
    fn value(&self) -> Option<&Self::Value>;
}

/// [`Field`] for values a slot holds as they are.
macro_rules! plain_fields {
    ($($t:ty),* $(,)?) => {$(
        impl Field<'_> for $t {
            type Slot = $t;
            type Value = $t;

            /// Copied: a parsed `Wire` is dropped once checked, so there is
            /// no need to empty the slot.
            #[inline(always)]
            fn take(slot: &mut Option<$t>) -> Option<$t> {
                *slot
            }

            #[inline(always)]
            fn put(&self) -> Option<$t> {
                Some(*self)
            }

            #[inline(always)]
            fn value(&self) -> Option<&$t> {
                Some(self)
            }
        }
    )*};
}

plain_fields!(
    Addr, BlobId, MemKind, Dir, u8, u32, u64, i32, [u32; 3], [u64; 2], [u64; 3]
);

/// Strings travel borrowed from the line, or from the event.
impl<'a> Field<'a> for String {
    type Slot = Cow<'a, str>;
    type Value = String;

    #[inline(always)]
    fn take(slot: &mut Option<Cow<'a, str>>) -> Option<String> {
        slot.take().map(Cow::into_owned)
    }

    #[inline(always)]
    fn put(&'a self) -> Option<Cow<'a, str>> {
        Some(Cow::Borrowed(self))
    }

    #[inline(always)]
    fn value(&self) -> Option<&String> {
        Some(self)
    }
}

/// Bytes are moved out of a parsed line, and copied into the reference
/// encoding.
impl Field<'_> for HexBytes {
    type Slot = HexBytes;
    type Value = HexBytes;

    #[inline(always)]
    fn take(slot: &mut Option<HexBytes>) -> Option<HexBytes> {
        slot.take()
    }

    #[inline(always)]
    fn put(&self) -> Option<HexBytes> {
        Some(self.clone())
    }

    #[inline(always)]
    fn value(&self) -> Option<&HexBytes> {
        Some(self)
    }
}

/// Lists are moved out of a parsed line (`args` would be a deep copy per
/// launch), and copied into the reference encoding.
impl<T: Clone> Field<'_> for Vec<T> {
    type Slot = Vec<T>;
    type Value = Vec<T>;

    #[inline(always)]
    fn take(slot: &mut Option<Vec<T>>) -> Option<Vec<T>> {
        slot.take()
    }

    #[inline(always)]
    fn put(&self) -> Option<Vec<T>> {
        Some(self.clone())
    }

    #[inline(always)]
    fn value(&self) -> Option<&Vec<T>> {
        Some(self)
    }
}

/// An optional field is an optional key.
impl<'a, T: Field<'a>> Field<'a> for Option<T> {
    type Slot = T::Slot;
    type Value = T::Value;

    #[inline(always)]
    fn take(slot: &mut Option<T::Slot>) -> Option<Option<T>> {
        Some(T::take(slot))
    }

    #[inline(always)]
    fn put(&'a self) -> Option<T::Slot> {
        self.as_ref().and_then(T::put)
    }

    #[inline(always)]
    fn value(&self) -> Option<&T::Value> {
        self.as_ref().and_then(T::value)
    }
}

/// The error for a required key absent from a line.
#[cold]
fn missing(op: &str, field: &'static str) -> EventError {
    EventError::Missing {
        op: op.to_string(),
        field,
    }
}

/// One field of an op out of `w` (callback of `op_field!`).
macro_rules! field_from_wire {
    ([$w:ident $op:ident] $f:ident $t:ty; $k:ident; () $omit:tt) => {
        <$t as Field>::take(&mut $w.$k).ok_or_else(|| missing($op, stringify!($k)))?
    };
    ([$w:ident $op:ident] $f:ident $t:ty; $k:ident; ($d:expr) $omit:tt) => {
        <$t as Field>::take(&mut $w.$k).unwrap_or_else(|| $d)
    };
}

/// One field of an op into `w` (callback of `op_field!`).
macro_rules! field_to_wire {
    ([$w:ident] $f:ident $t:ty; $k:ident; $d:tt ()) => {
        $w.$k = <$t as Field>::put($f)
    };
    ([$w:ident] $f:ident $t:ty; $k:ident; ($d:expr) (omit)) => {{
        let default: $t = $d;
        $w.$k = if *$f == default {
            None
        } else {
            <$t as Field>::put($f)
        }
    }};
}

/// Callback of `op_table!`: an op out of a [`Wire`] and into one.
macro_rules! wire_ops {
    ($(
        $(#[$vm:meta])*
        $V:ident $name:literal $({
            $(
                $(#[doc = $fd:literal])*
                $(#[wire($($wa:tt)*)])?
                $f:ident : $t:ty
            ),* $(,)?
        })?
    ),* $(,)?) => {
        impl Event {
            /// [`Event::from_wire`] taking the fields out of `w` where it
            /// lies: the reader's `Wire` is ~400 bytes, and it parses a
            /// million lines a second. Fields are checked in the table's
            /// order: the first one missing is the one named.
            pub(crate) fn from_wire_in(w: &mut Wire<'_>) -> Result<Event, EventError> {
                let op_name = w.op.as_ref();
                let op = match op_name {
                    $(
                        $name => Op::$V $({
                            $( $f: op_field!(field_from_wire [w op_name] $f $t; [$($($wa)*)?]), )*
                        })?,
                    )*
                    other => return Err(EventError::UnknownOp(other.to_string())),
                };
                Ok(Event {
                    seq: w.seq,
                    t: w.t,
                    tid: w.tid,
                    api: std::mem::take(&mut w.api).into_owned(),
                    ret: w.ret,
                    dev: w.dev,
                    op,
                })
            }
        }

        /// Sets the fields of `w` that `op` has.
        fn op_to_wire<'a>(op: &'a Op, w: &mut Wire<'a>) {
            match op {
                $(
                    Op::$V $({ $($f),* })? => {
                        $($( op_field!(field_to_wire [w] $f $t; [$($($wa)*)?]); )*)?
                    }
                )*
            }
        }
    };
}

op_table!(wire_ops);

impl Event {
    /// Parses one NDJSON line.
    pub fn parse(line: &[u8]) -> Result<Event, EventError> {
        let w: Wire<'_> =
            serde_json::from_slice(line).map_err(|e| EventError::Json(e.to_string()))?;
        Event::from_wire(w)
    }

    /// Checks a wire record into a typed event.
    pub fn from_wire(mut w: Wire<'_>) -> Result<Event, EventError> {
        Event::from_wire_in(&mut w)
    }

    /// The flat wire form of this event.
    pub fn to_wire(&self) -> Wire<'_> {
        let mut w = Wire {
            seq: self.seq,
            t: self.t,
            tid: self.tid,
            api: Cow::Borrowed(&self.api),
            op: Cow::Borrowed(self.op.name()),
            ret: self.ret,
            dev: self.dev,
            ..Wire::default()
        };
        op_to_wire(&self.op, &mut w);
        w
    }

    /// Serialises this event as one NDJSON line (with the trailing newline).
    pub fn write_line(&self, out: &mut Vec<u8>) {
        self.write_line_timed(None, out);
    }

    /// [`Event::write_line`], with a timed replay's `dev_t` and `dev_ns` when given.
    pub fn write_line_timed(&self, dev: Option<DevTime>, out: &mut Vec<u8>) {
        let mut w = self.to_wire();
        w.dev_t = dev.map(|d| d.t);
        w.dev_ns = dev.map(|d| d.ns);
        // Serialising into a Vec cannot fail: every field is a plain value.
        serde_json::to_writer(&mut *out, &w).expect("event serialises");
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{decode_relocations, encode_relocations};
    use crate::hex::HexBytes;

    #[test]
    fn memcpy_round_trips() {
        let e = Event {
            seq: 4,
            t: 100,
            tid: 7,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op: Op::Memcpy {
                dir: Dir::H2d,
                dst: Addr(0x7fbe_0140_0000),
                src: Addr(0x5555_0000),
                size: 16,
                stream: None,
                blob: Some(BlobId::of(b"x")),
            },
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.contains(r#""dst":"0x7fbe01400000""#), "{text}");
        assert!(
            !text.contains("stream"),
            "absent stream means synchronous: {text}"
        );
        assert_eq!(Event::parse(&line).unwrap(), e);
    }

    #[test]
    fn device_timing_round_trips_through_the_wire_form() {
        let e = Event {
            seq: 9,
            t: 5,
            tid: 1,
            api: "hipDeviceSynchronize".into(),
            ret: 0,
            dev: 0,
            op: Op::DeviceSync,
        };
        let dev = DevTime { t: 700, ns: 42 };
        let mut line = Vec::new();
        e.write_line_timed(Some(dev), &mut line);
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.contains(r#""dev_t":700,"dev_ns":42"#), "{text}");
        let w: Wire<'_> = serde_json::from_slice(&line).unwrap();
        assert_eq!(w.dev_time(), Some(dev));
        assert_eq!(Event::from_wire(w).unwrap(), e, "typed events ignore it");
        line.clear();
        e.write_line(&mut line);
        assert!(!String::from_utf8(line).unwrap().contains("dev_"));
    }

    #[test]
    fn missing_field_is_named() {
        let err = Event::parse(br#"{"seq":1,"api":"hipFree","op":"free"}"#).unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "free".into(),
                field: "ptr"
            }
        );
    }

    #[test]
    fn unknown_op_is_distinct() {
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"teleport"}"#).unwrap_err();
        assert_eq!(err, EventError::UnknownOp("teleport".into()));
    }

    fn round_trip(op: Op) -> String {
        let e = Event {
            seq: 9,
            t: 1,
            tid: 2,
            api: "cuX".into(),
            ret: 0,
            dev: 0,
            op,
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        assert_eq!(Event::parse(&line).unwrap(), e);
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn driver_ops_round_trip() {
        let text = round_trip(Op::MemMap {
            ptr: Addr(0x7f00_0020_0000),
            size: 2 << 20,
            offset: 0,
            handle: Addr(0x55),
        });
        assert!(
            text.contains(r#""op":"mem_map""#) && text.contains(r#""handle":"0x55""#),
            "{text}"
        );
        round_trip(Op::VaReserve {
            ptr: Addr(0x7f00_0000_0000),
            size: 1 << 40,
        });
        round_trip(Op::VaFree {
            ptr: Addr(0x7f00_0000_0000),
            size: 1 << 40,
        });
        round_trip(Op::MemCreate {
            handle: Addr(0x55),
            size: 2 << 20,
            mem: MemKind::Device,
        });
        round_trip(Op::MemRelease { handle: Addr(0x55) });
        round_trip(Op::MemUnmap {
            ptr: Addr(1),
            size: 2,
        });
        round_trip(Op::MemAccess {
            ptr: Addr(1),
            size: 2,
        });
        round_trip(Op::CtxCreate {
            ctx: Addr(0x77),
            device: 0,
        });
        round_trip(Op::CtxDestroy { ctx: Addr(0x77) });
        let text = round_trip(Op::CtxSet {
            ctx: Addr(0x77),
            device: None,
        });
        assert!(!text.contains("device"), "{text}");
        round_trip(Op::Global {
            module: Addr(0x10),
            name: "table".into(),
            code: BlobId::of(b"c"),
            ptr: Addr(0x7f00_0000_1000),
            size: 64,
        });
    }

    #[test]
    fn relocate_round_trips_with_its_offsets() {
        let offsets = [0u64, 8, 4096];
        let blob = encode_relocations(&offsets);
        let text = round_trip(Op::Relocate {
            dst: Addr(0x7f00_0000_1000),
            size: 4104,
            blob: BlobId::of(&blob),
        });
        assert!(text.contains(r#""op":"relocate""#), "{text}");
        assert_eq!(
            decode_relocations(&blob).unwrap().collect::<Vec<_>>(),
            offsets
        );
        assert!(decode_relocations(&blob[1..]).is_none());
    }

    #[test]
    fn host_memory_ops_round_trip_and_require_their_fields() {
        let blob = BlobId::of(b"host bytes");
        let text = round_trip(Op::HostWrite {
            ptr: Addr(0x7f00_0000_1000),
            size: 10,
            blob,
        });
        assert!(
            text.contains(r#""op":"host_write","ret":0,"ptr":"0x7f0000001000","size":10,"blob":""#),
            "{text}"
        );
        let text = round_trip(Op::HostRead {
            ptr: Addr(0x7f00_0000_1000),
            size: 10,
            blob,
        });
        assert!(text.contains(r#""op":"host_read""#), "{text}");
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"host_write","ptr":"0x1000","size":4}"#)
            .unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "host_write".into(),
                field: "blob"
            }
        );
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"host_read","size":4}"#).unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "host_read".into(),
                field: "ptr"
            }
        );
    }

    #[test]
    fn rect_and_pool_ops_round_trip() {
        let text = round_trip(Op::MemcpyRect {
            dir: Dir::D2h,
            dst: Addr(0x5555_0000),
            dpitch: [40, 640],
            src: Addr(0x7f00_0000_0040),
            spitch: [64, 1024],
            extent: [40, 16, 3],
            stream: Some(Addr(0x77)),
            blob: Some(BlobId::of(b"packed")),
        });
        assert!(
            text.contains(r#""op":"memcpy_rect""#)
                && text.contains(r#""dpitch":[40,640],"spitch":[64,1024],"extent":[40,16,3]"#),
            "{text}"
        );
        let text = round_trip(Op::MemsetRect {
            dst: Addr(0x7f00_0000_0000),
            pitch: [64, 1024],
            extent: [40, 16, 1],
            value: 0xdead_beef,
            width: 4,
            stream: None,
        });
        assert!(text.contains(r#""width":4"#), "{text}");
        round_trip(Op::PoolCreate { pool: Addr(0x99) });
        round_trip(Op::PoolDestroy { pool: Addr(0x99) });
        round_trip(Op::PoolTrim {
            pool: Addr(0x99),
            size: 0,
        });
        let text = round_trip(Op::PoolAttr {
            pool: Addr(0x99),
            attr: 4,
            value: u64::MAX,
        });
        assert!(
            text.contains(r#""attr":4,"attr_value":18446744073709551615"#),
            "{text}"
        );
        round_trip(Op::DevicePool {
            device: 0,
            pool: Addr(0x99),
        });
        round_trip(Op::PoolAlloc {
            ptr: Addr(0x7f00_0000_0000),
            size: 4096,
            pool: Addr(0x99),
            stream: Addr(0),
        });
        // A rect copy without its extent names the missing field.
        let err = Event::parse(
            br#"{"seq":1,"api":"hipMemcpy2D","op":"memcpy_rect","dir":"h2d","dst":"0x1","src":"0x2","dpitch":[1,1],"spitch":[1,1]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "memcpy_rect".into(),
                field: "extent"
            }
        );
    }

    #[test]
    fn rect_geometry() {
        use crate::event::{rect_len, rect_rows, rect_span};
        assert_eq!(rect_len([40, 16, 3]), Some(1920));
        assert_eq!(rect_len([u64::MAX, 2, 1]), None);
        assert_eq!(rect_span([64, 0], [40, 16, 1]), Some(15 * 64 + 40));
        assert_eq!(
            rect_span([64, 1024], [40, 16, 2]),
            Some(1024 + 15 * 64 + 40)
        );
        assert_eq!(
            rect_span([32, 0], [40, 1, 1]),
            None,
            "row wider than its pitch"
        );
        assert_eq!(rect_span([64, 512], [40, 16, 2]), None, "slices overlap");
        assert_eq!(rect_span([64, 0], [0, 16, 1]), None, "empty");
        assert_eq!(
            rect_rows([64, 1024], [40, 2, 2]).collect::<Vec<_>>(),
            [0, 64, 1024, 1088]
        );
    }

    #[test]
    fn launch_attrs_are_omitted_when_empty() {
        let launch = |attrs| Op::Launch {
            name: "k".into(),
            code: BlobId::of(b"c"),
            func: None,
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shmem: 0,
            stream: Addr(0),
            args: vec![],
            attrs,
        };
        assert!(!round_trip(launch(vec![])).contains("attrs"));
        let text = round_trip(launch(vec![LaunchAttr {
            id: 4,
            hex: HexBytes(vec![2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
        }]));
        assert!(
            text.contains(r#""attrs":[{"id":4,"hex":"020000000100000001000000"}]"#),
            "{text}"
        );
        // A reader older than attrs would ignore the field; ours requires neither.
        let e = Event::parse(
            br#"{"seq":1,"api":"cuLaunchKernelEx","op":"launch","name":"k","code":"af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","grid":[1,1,1],"block":[1,1,1],"args":[]}"#,
        )
        .unwrap();
        assert!(matches!(e.op, Op::Launch { ref attrs, .. } if attrs.is_empty()));
    }
}
