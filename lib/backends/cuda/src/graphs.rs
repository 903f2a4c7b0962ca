//! Recorded graphs replayed as CUDA graphs: each [`GraphSpec`] is built once
//! (`cuGraphCreate`, a node per spec node with its dependencies,
//! `cuGraphInstantiateWithFlags`), kept by its id, launched with
//! `cuGraphLaunch`, and destroyed when the engine releases it. A driver
//! without the graph API runs the nodes one by one (the trait's default).
//!
//! Array copy nodes are `CUDA_MEMCPY3D`s naming the replay's arrays, as
//! the backend's array copies are. Host copy nodes (linear or array) go
//! through page-locked buffers of the graph's own (a
//! graph copy node may not name pageable memory the driver cannot reach
//! asynchronously): before a launch the stream is drained and the engine's
//! host-to-device bytes are copied in; after a launch with device-to-host
//! nodes the stream is drained and their bytes copied out, so the engine's
//! ranges hold them as the `Device` contract says.

use std::collections::HashMap;
use std::ffi::c_void;

use cuda_api::graph::{CUDA_KERNEL_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS};
use cuda_api::rect::CUDA_MEMCPY3D;
use cuda_api::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use hrr_replay::device::{ArraySide, DeviceError, Handle};
use hrr_replay::graph::{GraphSpec, HostRange, NodeSpec, run_in_order};

use crate::arrays::memcpy3d;
use crate::device::{CudaDevice, ptr};
use crate::ffi::CudaApi;
use crate::kernarg::Kernarg;

/// Executable graphs built so far, by spec id.
#[derive(Default)]
pub struct Built {
    execs: HashMap<u64, Exec>,
}

/// One instantiated graph and the page-locked buffers its host copy nodes use.
struct Exec {
    exec: usize,
    /// (engine range, page-locked buffer) per host-to-device node.
    h2d: Vec<(HostRange, usize)>,
    /// (engine range, page-locked buffer) per device-to-host node.
    d2h: Vec<(HostRange, usize)>,
}

/// The driver's graph entry points, when it has them all.
struct GraphFns {
    create: cuda_api::fns::cuGraphCreate,
    destroy: cuda_api::fns::cuGraphDestroy,
    kernel: cuda_api::fns::cuGraphAddKernelNode_v2,
    memcpy: cuda_api::fns::cuGraphAddMemcpyNode,
    memset: cuda_api::fns::cuGraphAddMemsetNode,
    empty: cuda_api::fns::cuGraphAddEmptyNode,
    record: cuda_api::fns::cuGraphAddEventRecordNode,
    wait: cuda_api::fns::cuGraphAddEventWaitNode,
    instantiate: cuda_api::fns::cuGraphInstantiateWithFlags,
    launch: cuda_api::fns::cuGraphLaunch,
    exec_destroy: cuda_api::fns::cuGraphExecDestroy,
}

impl GraphFns {
    fn of(a: &CudaApi) -> Option<GraphFns> {
        Some(GraphFns {
            create: a.cuGraphCreate?,
            destroy: a.cuGraphDestroy?,
            kernel: a.cuGraphAddKernelNode?,
            memcpy: a.cuGraphAddMemcpyNode?,
            memset: a.cuGraphAddMemsetNode?,
            empty: a.cuGraphAddEmptyNode?,
            record: a.cuGraphAddEventRecordNode?,
            wait: a.cuGraphAddEventWaitNode?,
            instantiate: a.cuGraphInstantiateWithFlags?,
            launch: a.cuGraphLaunch?,
            exec_destroy: a.cuGraphExecDestroy?,
        })
    }
}

/// A linear copy of `size` bytes as `CUDA_MEMCPY3D` describes it: each
/// side host or device memory at an address.
pub fn linear_copy(dst: (bool, u64), src: (bool, u64), size: u64) -> CUDA_MEMCPY3D {
    let ty = |device: bool| {
        if device {
            CU_MEMORYTYPE_DEVICE
        } else {
            CU_MEMORYTYPE_HOST
        }
    };
    let w = size as usize;
    CUDA_MEMCPY3D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_z: 0,
        src_lod: 0,
        src_memory_type: ty(src.0),
        src_host: if src.0 { std::ptr::null() } else { ptr(src.1) },
        src_device: if src.0 { src.1 } else { 0 },
        src_array: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        src_pitch: w,
        src_height: 1,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: ty(dst.0),
        dst_host: if dst.0 {
            std::ptr::null_mut()
        } else {
            ptr(dst.1)
        },
        dst_device: if dst.0 { dst.1 } else { 0 },
        dst_array: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dst_pitch: w,
        dst_height: 1,
        width_in_bytes: w,
        height: 1,
        depth: 1,
    }
}

impl CudaDevice {
    /// `Device::graph_launch` of the CUDA backend.
    pub(crate) fn launch_graph(
        &mut self,
        g: &GraphSpec<'_>,
        stream: Handle,
    ) -> Result<(), DeviceError> {
        let Some(f) = GraphFns::of(self.driver().api()) else {
            return run_in_order(self, g, stream);
        };
        if !self.graphs.execs.contains_key(&g.id) {
            let e = self.build(&f, g)?;
            self.graphs.execs.insert(g.id, e);
        }
        let e = &self.graphs.execs[&g.id];
        let (exec, h2d_in, d2h_out) = (e.exec, !e.h2d.is_empty(), !e.d2h.is_empty());
        if h2d_in {
            // A previous launch may still read the page-locked sources.
            self.sync_stream_of_graph(stream)?;
            for (range, buf) in &self.graphs.execs[&g.id].h2d {
                // SAFETY: `buf` is a page-locked buffer of `range.len()`
                // bytes this backend allocated for the node, idle (the
                // stream is drained).
                unsafe {
                    std::ptr::copy_nonoverlapping(range.addr(), *buf as *mut u8, range.len())
                };
            }
        }
        // SAFETY: an executable graph this backend instantiated, on the
        // engine's stream.
        self.call("cuGraphLaunch", |_| unsafe {
            (f.launch)(ptr(exec as u64), ptr(stream))
        })?;
        if d2h_out {
            self.sync_stream_of_graph(stream)?;
            for (range, buf) in &self.graphs.execs[&g.id].d2h {
                let mut range = *range;
                // SAFETY: the node wrote `range.len()` bytes into `buf`, and
                // the launch has completed.
                let src = unsafe { std::slice::from_raw_parts(*buf as *const u8, range.len()) };
                range.as_mut_slice().copy_from_slice(src);
            }
        }
        Ok(())
    }

    fn sync_stream_of_graph(&self, stream: Handle) -> Result<(), DeviceError> {
        // SAFETY: the engine's live stream.
        self.call("cuStreamSynchronize", |a| unsafe {
            (a.cuStreamSynchronize)(ptr(stream))
        })
    }

    /// Every graph built, released (the device is going away).
    pub(crate) fn release_graphs(&mut self) {
        let all: Vec<Exec> = self.graphs.execs.drain().map(|(_, e)| e).collect();
        for e in all {
            let _ = self.free_exec(e);
        }
    }

    /// `Device::graph_release`.
    pub(crate) fn release_graph(&mut self, id: u64) -> Result<(), DeviceError> {
        let Some(e) = self.graphs.execs.remove(&id) else {
            return Ok(());
        };
        self.free_exec(e)
    }

    fn free_exec(&self, e: Exec) -> Result<(), DeviceError> {
        if let Some(f) = GraphFns::of(self.driver().api()) {
            // SAFETY: an executable graph this backend instantiated, dropped
            // from its map (the driver lets launches in flight finish).
            self.call("cuGraphExecDestroy", |_| unsafe {
                (f.exec_destroy)(ptr(e.exec as u64))
            })?;
        }
        let bufs: Vec<usize> = e.h2d.iter().chain(&e.d2h).map(|(_, b)| *b).collect();
        if !bufs.is_empty() {
            // The buffers may still be read or written by a launch in flight.
            // SAFETY: no arguments.
            self.call("cuCtxSynchronize", |a| unsafe { (a.cuCtxSynchronize)() })?;
        }
        for b in bufs {
            // SAFETY: a buffer from cuMemAllocHost in `build`, idle.
            self.call("cuMemFreeHost", |a| unsafe {
                (a.cuMemFreeHost)(ptr(b as u64))
            })?;
        }
        Ok(())
    }

    /// A page-locked buffer of `n` bytes.
    fn pinned_buffer(&self, n: usize) -> Result<usize, DeviceError> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.call("cuMemAllocHost_v2", |a| unsafe {
            (a.cuMemAllocHost)(&mut p, n.max(1))
        })?;
        Ok(p as usize)
    }

    /// Builds and instantiates `g`; the graph itself is destroyed once
    /// instantiated (the executable graph is independent of it).
    fn build(&mut self, f: &GraphFns, g: &GraphSpec<'_>) -> Result<Exec, DeviceError> {
        for n in g.nodes {
            if let NodeSpec::Kernel(l) = &n.op {
                self.opt_in_shared(l.func, l.shmem)?;
            }
        }
        let mut graph: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        self.call("cuGraphCreate", |_| unsafe { (f.create)(&mut graph, 0) })?;
        let mut e = Exec {
            exec: 0,
            h2d: Vec::new(),
            d2h: Vec::new(),
        };
        let r = self.add_nodes(f, graph, g, &mut e).and_then(|()| {
            let mut exec: *mut c_void = std::ptr::null_mut();
            // SAFETY: the graph just built; valid out-pointer.
            self.call("cuGraphInstantiateWithFlags", |_| unsafe {
                (f.instantiate)(&mut exec, graph, 0)
            })
            .map(|()| exec as usize)
        });
        // SAFETY: the graph made above, no longer needed.
        unsafe { (f.destroy)(graph) };
        match r {
            Ok(exec) => {
                e.exec = exec;
                Ok(e)
            }
            Err(err) => {
                let _ = self.free_exec(e);
                Err(err)
            }
        }
    }

    fn add_nodes(
        &self,
        f: &GraphFns,
        graph: *mut c_void,
        g: &GraphSpec<'_>,
        e: &mut Exec,
    ) -> Result<(), DeviceError> {
        let ctx = self.context();
        let mut made: Vec<*mut c_void> = Vec::with_capacity(g.nodes.len());
        for n in g.nodes {
            let deps: Vec<*mut c_void> = n.deps.iter().map(|d| made[*d as usize]).collect();
            let (dp, dn) = (deps.as_ptr(), deps.len());
            let mut node: *mut c_void = std::ptr::null_mut();
            let copy = |node: &mut *mut c_void, c: &CUDA_MEMCPY3D| {
                // SAFETY: `graph` is ours, `dp` holds `dn` of its nodes; the
                // description is read during the call and the memory it names
                // stays valid while the graph may be launched.
                self.call("cuGraphAddMemcpyNode", |_| unsafe {
                    (f.memcpy)(node, graph, dp, dn, (c as *const CUDA_MEMCPY3D).cast(), ctx)
                })
            };
            // The driver refuses zero-sized copy and memset nodes: nothing
            // to do is an empty node.
            let empty = match &n.op {
                NodeSpec::H2d { src, .. } => src.is_empty(),
                NodeSpec::D2h { dst, .. } => dst.is_empty(),
                NodeSpec::D2d { size, .. } | NodeSpec::Memset { size, .. } => *size == 0,
                NodeSpec::Array { extent, .. } => extent.contains(&0),
                _ => false,
            };
            let op = if empty { &NodeSpec::Empty } else { &n.op };
            match op {
                NodeSpec::Kernel(l) => {
                    let mut kernarg = Kernarg::new(l.args);
                    let mut extra = kernarg.extra();
                    let p = CUDA_KERNEL_NODE_PARAMS {
                        func: ptr(l.func),
                        grid_dim_x: l.grid[0],
                        grid_dim_y: l.grid[1],
                        grid_dim_z: l.grid[2],
                        block_dim_x: l.block[0],
                        block_dim_y: l.block[1],
                        block_dim_z: l.block[2],
                        shared_mem_bytes: l.shmem,
                        kernel_params: std::ptr::null_mut(),
                        // A kernel without parameters takes neither array.
                        extra: if kernarg.is_empty() {
                            std::ptr::null_mut()
                        } else {
                            extra.as_mut_ptr()
                        },
                        ..Default::default()
                    };
                    // SAFETY: as for copies; the driver copies the parameter
                    // buffer when it adds the node.
                    self.call("cuGraphAddKernelNode_v2", |_| unsafe {
                        (f.kernel)(&mut node, graph, dp, dn, &p)
                    })?;
                }
                NodeSpec::H2d { dst, src } => {
                    let buf = self.pinned_buffer(src.len())?;
                    e.h2d.push((*src, buf));
                    let c = linear_copy((true, *dst), (false, buf as u64), src.len() as u64);
                    copy(&mut node, &c)?;
                }
                NodeSpec::D2h { dst, src } => {
                    let buf = self.pinned_buffer(dst.len())?;
                    e.d2h.push((*dst, buf));
                    let c = linear_copy((false, buf as u64), (true, *src), dst.len() as u64);
                    copy(&mut node, &c)?;
                }
                NodeSpec::Array {
                    dst,
                    src,
                    extent,
                    host,
                } => {
                    // The host side, if any, through a page-locked buffer
                    // of the graph's, as a linear host copy node's.
                    let buf = match host {
                        Some(range) => {
                            let buf = self.pinned_buffer(range.len())?;
                            let dir = if matches!(dst, ArraySide::Host) {
                                &mut e.d2h
                            } else {
                                &mut e.h2d
                            };
                            dir.push((*range, buf));
                            Some(buf as u64)
                        }
                        None => None,
                    };
                    copy(&mut node, &memcpy3d(*dst, *src, *extent, buf)?)?;
                }
                NodeSpec::D2d { dst, src, size } => {
                    copy(&mut node, &linear_copy((true, *dst), (true, *src), *size))?;
                }
                NodeSpec::Memset { dst, value, size } => {
                    let p = CUDA_MEMSET_NODE_PARAMS {
                        dst: *dst,
                        pitch: 0,
                        value: u32::from(*value),
                        element_size: 1,
                        width: *size as usize,
                        height: 1,
                    };
                    // SAFETY: as for copies.
                    self.call("cuGraphAddMemsetNode", |_| unsafe {
                        (f.memset)(&mut node, graph, dp, dn, &p, ctx)
                    })?;
                }
                NodeSpec::Empty => {
                    // SAFETY: as for copies.
                    self.call("cuGraphAddEmptyNode", |_| unsafe {
                        (f.empty)(&mut node, graph, dp, dn)
                    })?;
                }
                NodeSpec::EventRecord(ev) => {
                    // SAFETY: as for copies; a live event of the engine's.
                    self.call("cuGraphAddEventRecordNode", |_| unsafe {
                        (f.record)(&mut node, graph, dp, dn, ptr(*ev))
                    })?;
                }
                NodeSpec::EventWait(ev) => {
                    // SAFETY: as above.
                    self.call("cuGraphAddEventWaitNode", |_| unsafe {
                        (f.wait)(&mut node, graph, dp, dn, ptr(*ev))
                    })?;
                }
            }
            made.push(node);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_copies_name_each_side_by_its_memory_type() {
        let c = linear_copy((true, 0x7000), (false, 0x1000), 256);
        assert_eq!(
            (c.src_memory_type, c.src_host as u64, c.src_device),
            (CU_MEMORYTYPE_HOST, 0x1000, 0)
        );
        assert_eq!(
            (c.dst_memory_type, c.dst_host as u64, c.dst_device),
            (CU_MEMORYTYPE_DEVICE, 0, 0x7000)
        );
        assert_eq!((c.width_in_bytes, c.height, c.depth), (256, 1, 1));
        // The description is the copy hrr's own reader sees in it.
        let r = c.rect().unwrap();
        assert_eq!((r.dst, r.src, r.extent), (0x7000, 0x1000, [256, 1, 1]));
        let d = linear_copy((true, 0x10), (true, 0x20), 8);
        assert_eq!(
            (d.src_memory_type, d.dst_memory_type),
            (CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE)
        );
    }
}
