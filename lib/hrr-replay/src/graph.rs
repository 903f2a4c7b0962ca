//! Graphs as the engine hands them to a [`Device`]: live addresses and
//! handles, nodes listed dependencies first, and [`run_in_order`], the
//! default way to run one (every node, in list order, on one stream), which
//! backends without a graph API use and `hrr-play --no-graphs` forces.

use crate::device::{ArrayCopy, ArraySide, Device, DeviceError, Handle, HostSide, Launch};

/// Host memory a graph node copies from or to: the engine's own buffer,
/// kept at one address for as long as graphs naming it may be launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostRange {
    ptr: *mut u8,
    len: usize,
}

impl HostRange {
    /// `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` bytes, and nothing else
    /// accesses them while a graph holding the range runs, until the graph
    /// is released ([`Device::graph_release`]).
    pub unsafe fn new(ptr: *mut u8, len: usize) -> HostRange {
        HostRange { ptr, len }
    }

    /// A range over `buf`, which must stay where it is (a boxed slice the
    /// engine keeps) while graphs holding the range may run.
    pub fn of(buf: &mut [u8]) -> HostRange {
        HostRange {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
        }
    }

    /// Its address.
    pub fn addr(&self) -> *mut u8 {
        self.ptr
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, to read.
    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: valid for `len` bytes while the graph may run (the
        // constructor's contract, or a buffer the engine keeps in place).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `as_slice`; nothing else accesses them meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// What one node does, with live operands.
#[derive(Debug)]
pub enum NodeSpec<'a> {
    /// A kernel launch (its `stream` is ignored: the graph's launch stream).
    Kernel(Launch<'a>),
    /// Host to device.
    H2d {
        /// Device destination.
        dst: u64,
        /// Host source.
        src: HostRange,
    },
    /// Device to host.
    D2h {
        /// Host destination.
        dst: HostRange,
        /// Device source.
        src: u64,
    },
    /// Device to device.
    D2d {
        /// Destination.
        dst: u64,
        /// Source.
        src: u64,
        /// Bytes.
        size: u64,
    },
    /// A byte memset.
    Memset {
        /// Destination.
        dst: u64,
        /// The byte.
        value: u8,
        /// Bytes.
        size: u64,
    },
    /// A 2D/3D copy with an array on at least one side; the side that is
    /// [`ArraySide::Host`] is `host`, packed.
    Array {
        /// Where it writes.
        dst: ArraySide,
        /// What it reads.
        src: ArraySide,
        /// Width in bytes, rows, slices.
        extent: [u64; 3],
        /// The host side's buffer, when a side is host memory.
        host: Option<HostRange>,
    },
    /// Nothing: a dependency point.
    Empty,
    /// Records a live event.
    EventRecord(Handle),
    /// Waits for a live event.
    EventWait(Handle),
}

/// One node and the indices of the nodes it depends on (all before it).
#[derive(Debug)]
pub struct GraphNodeSpec<'a> {
    /// What it does.
    pub op: NodeSpec<'a>,
    /// Its dependencies, by index.
    pub deps: Vec<u32>,
}

/// A graph to launch: `id` names it as it stands (the engine gives a graph
/// whose nodes or operands changed a new id and releases the old one), so
/// a backend may build it once and launch it many times.
#[derive(Debug)]
pub struct GraphSpec<'a> {
    /// Identity of this topology with these operands.
    pub id: u64,
    /// The nodes, dependencies first.
    pub nodes: &'a [GraphNodeSpec<'a>],
}

/// Runs every node of `g`, in list order (dependencies first), on `stream`:
/// the default [`Device::graph_launch`].
pub fn run_in_order<D: Device + ?Sized>(
    dev: &mut D,
    g: &GraphSpec<'_>,
    stream: Handle,
) -> Result<(), DeviceError> {
    for n in g.nodes {
        match &n.op {
            NodeSpec::Kernel(l) => {
                let l = Launch {
                    event: l.event,
                    func: l.func,
                    grid: l.grid,
                    block: l.block,
                    shmem: l.shmem,
                    stream,
                    args: l.args,
                    attrs: l.attrs,
                };
                dev.launch(&l)?;
            }
            NodeSpec::H2d { dst, src } => dev.copy_h2d(*dst, src.as_slice(), Some(stream))?,
            NodeSpec::D2h { dst, src } => {
                let mut dst = *dst;
                dev.copy_d2h(dst.as_mut_slice(), *src, Some(stream))?
            }
            NodeSpec::D2d { dst, src, size } => dev.copy_d2d(*dst, *src, *size, Some(stream))?,
            NodeSpec::Memset { dst, value, size } => {
                dev.memset(*dst, *value, *size, Some(stream))?
            }
            NodeSpec::Array {
                dst,
                src,
                extent,
                host,
            } => {
                let mut range = *host;
                let host = match (range.as_mut(), *dst, *src) {
                    (Some(r), ArraySide::Host, _) => HostSide::Dst(r.as_mut_slice()),
                    (Some(r), _, ArraySide::Host) => HostSide::Src(r.as_slice()),
                    _ => HostSide::None,
                };
                dev.copy_array(ArrayCopy {
                    dst: *dst,
                    src: *src,
                    extent: *extent,
                    stream: Some(stream),
                    host,
                })?
            }
            NodeSpec::Empty => {}
            NodeSpec::EventRecord(e) => dev.event_record(*e, stream)?,
            NodeSpec::EventWait(e) => dev.stream_wait_event(stream, *e)?,
        }
    }
    Ok(())
}
