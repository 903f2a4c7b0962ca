//! A loaded NCCL-API library (NCCL, RCCL or hrr's stand-in) and the calls
//! replay makes through it, each checked: a result other than `NCCL_SUCCESS`
//! is an [`Error::Call`] with the library's own description.

use std::ffi::{CStr, OsStr, OsString};
use std::mem::ManuallyDrop;
use std::ptr;

use api_table::Entry;

use crate::Coll;
use crate::types::*;
use crate::{args, fns};

/// Why the library could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The library did not load.
    #[error("cannot load {path}: {source}")]
    Load {
        /// The name or path tried.
        path: String,
        /// The loader's error.
        #[source]
        source: libloading::Error,
    },
    /// An entry point is missing from the library.
    #[error("{path} lacks {symbol}")]
    Symbol {
        /// The library.
        path: String,
        /// The entry point.
        symbol: &'static str,
    },
    /// A call returned an error.
    #[error("{call} failed: {message} (ncclResult_t {code})")]
    Call {
        /// The entry point.
        call: &'static str,
        /// Its result.
        code: ncclResult_t,
        /// The library's description of it.
        message: String,
    },
}

/// What [`Nccl`] calls, resolved once.
struct Fns {
    get_unique_id: fns::ncclGetUniqueId,
    init_rank: fns::ncclCommInitRank,
    init_all: fns::ncclCommInitAll,
    split: fns::ncclCommSplit,
    count: fns::ncclCommCount,
    finalize: fns::ncclCommFinalize,
    destroy: fns::ncclCommDestroy,
    error_string: fns::ncclGetErrorString,
    all_reduce: fns::ncclAllReduce,
    broadcast: fns::ncclBroadcast,
    reduce: fns::ncclReduce,
    all_gather: fns::ncclAllGather,
    reduce_scatter: fns::ncclReduceScatter,
    send: fns::ncclSend,
    recv: fns::ncclRecv,
    group_start: fns::ncclGroupStart,
    group_end: fns::ncclGroupEnd,
}

/// A loaded NCCL-API library. Never unloaded: its proxy threads may outlive
/// the last communicator by a moment, and unmapping their code under them
/// would crash the process.
pub struct Nccl {
    f: Fns,
    path: String,
    _lib: ManuallyDrop<libloading::Library>,
}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nccl").field("path", &self.path).finish()
    }
}

/// One collective as replay issues it: live buffers and stream.
#[derive(Clone, Copy, Debug)]
pub struct Issue {
    /// Which operation.
    pub coll: Coll,
    /// The send buffer (0 where the operation has none).
    pub send: u64,
    /// The receive buffer (0 where the operation has none).
    pub recv: u64,
    /// Elements (per rank for all-gather and reduce-scatter).
    pub count: u64,
    /// `ncclDataType_t`.
    pub dtype: ncclDataType_t,
    /// `ncclRedOp_t` (reductions).
    pub op: ncclRedOp_t,
    /// The root (broadcast, reduce) or the peer (send, recv).
    pub root: i32,
    /// The live communicator.
    pub comm: u64,
    /// The live stream.
    pub stream: u64,
}

fn sym<A: Entry>(lib: &libloading::Library, path: &str) -> Result<A::Fn, Error> {
    // SAFETY: the symbol, where present, is the NCCL API's entry point of
    // this name, whose C signature is the table's type for it.
    let addr = unsafe { lib.get::<*mut std::ffi::c_void>(A::SYMBOL.to_bytes_with_nul()) };
    match addr.ok().and_then(|a| ptr::NonNull::new(*a)) {
        // SAFETY: as above: the address of this entry point.
        Some(a) => Ok(unsafe { A::fn_at(a) }),
        None => Err(Error::Symbol {
            path: path.to_string(),
            symbol: A::NAME,
        }),
    }
}

impl Nccl {
    /// Loads the library at `path` (a soname or a path).
    pub fn load(path: impl AsRef<OsStr>) -> Result<Nccl, Error> {
        let path: OsString = path.as_ref().to_owned();
        let shown = path.to_string_lossy().into_owned();
        // SAFETY: loading an NCCL-API library runs its initialisers; it is
        // a shared library meant to be loaded into any process.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|source| Error::Load {
            path: shown.clone(),
            source,
        })?;
        let f = Fns {
            get_unique_id: sym::<args::ncclGetUniqueId>(&lib, &shown)?,
            init_rank: sym::<args::ncclCommInitRank>(&lib, &shown)?,
            init_all: sym::<args::ncclCommInitAll>(&lib, &shown)?,
            split: sym::<args::ncclCommSplit>(&lib, &shown)?,
            count: sym::<args::ncclCommCount>(&lib, &shown)?,
            finalize: sym::<args::ncclCommFinalize>(&lib, &shown)?,
            destroy: sym::<args::ncclCommDestroy>(&lib, &shown)?,
            error_string: sym::<args::ncclGetErrorString>(&lib, &shown)?,
            all_reduce: sym::<args::ncclAllReduce>(&lib, &shown)?,
            broadcast: sym::<args::ncclBroadcast>(&lib, &shown)?,
            reduce: sym::<args::ncclReduce>(&lib, &shown)?,
            all_gather: sym::<args::ncclAllGather>(&lib, &shown)?,
            reduce_scatter: sym::<args::ncclReduceScatter>(&lib, &shown)?,
            send: sym::<args::ncclSend>(&lib, &shown)?,
            recv: sym::<args::ncclRecv>(&lib, &shown)?,
            group_start: sym::<args::ncclGroupStart>(&lib, &shown)?,
            group_end: sym::<args::ncclGroupEnd>(&lib, &shown)?,
        };
        Ok(Nccl {
            f,
            path: shown,
            _lib: ManuallyDrop::new(lib),
        })
    }

    /// The library as loaded.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn check(&self, call: &'static str, code: ncclResult_t) -> Result<(), Error> {
        if code == NCCL_SUCCESS {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString takes any result and returns a static
        // C string (or null).
        let p = unsafe { (self.f.error_string)(code) };
        let message = if p.is_null() {
            "no description".to_string()
        } else {
            // SAFETY: a NUL-terminated string the library keeps.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        Err(Error::Call {
            call,
            code,
            message,
        })
    }

    /// A fresh unique id (`ncclGetUniqueId`).
    pub fn unique_id(&self) -> Result<[u8; NCCL_UNIQUE_ID_BYTES], Error> {
        let mut id = ncclUniqueId::ZERO;
        // SAFETY: `id` is a valid out-parameter.
        let code = unsafe { (self.f.get_unique_id)(&mut id) };
        self.check("ncclGetUniqueId", code)?;
        Ok(id.bytes())
    }

    /// A communicator of `nranks` ranks, this one `rank`, on the current
    /// device (`ncclCommInitRank`).
    pub fn comm_init_rank(
        &self,
        nranks: i32,
        id: [u8; NCCL_UNIQUE_ID_BYTES],
        rank: i32,
    ) -> Result<u64, Error> {
        let mut comm: ncclComm_t = ptr::null_mut();
        // SAFETY: `comm` is a valid out-parameter; the id is passed by value.
        let code =
            unsafe { (self.f.init_rank)(&mut comm, nranks, ncclUniqueId::from_bytes(id), rank) };
        self.check("ncclCommInitRank", code)?;
        Ok(comm as u64)
    }

    /// One communicator per device of `devices`, rank `i` on `devices[i]`
    /// (`ncclCommInitAll`).
    pub fn comm_init_all(&self, devices: &[i32]) -> Result<Vec<u64>, Error> {
        let n = c_int::try_from(devices.len()).map_err(|_| Error::Call {
            call: "ncclCommInitAll",
            code: NCCL_INVALID_ARGUMENT,
            message: format!("{} devices", devices.len()),
        })?;
        let mut comms: Vec<ncclComm_t> = vec![ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has room for `n` handles and `devices` holds `n`.
        let code = unsafe { (self.f.init_all)(comms.as_mut_ptr(), n, devices.as_ptr()) };
        self.check("ncclCommInitAll", code)?;
        Ok(comms.into_iter().map(|c| c as u64).collect())
    }

    /// This rank's part of a split of `comm` (`ncclCommSplit`, the default
    /// configuration): the new communicator, or `None` where `color` is
    /// `NCCL_SPLIT_NOCOLOR` (every rank of `comm` calls it).
    pub fn comm_split(&self, comm: u64, color: i32, key: i32) -> Result<Option<u64>, Error> {
        let mut new: ncclComm_t = ptr::null_mut();
        // SAFETY: `comm` came from this library; `new` is a valid
        // out-parameter; a null configuration is the default one.
        let code =
            unsafe { (self.f.split)(comm as ncclComm_t, color, key, &mut new, ptr::null_mut()) };
        self.check("ncclCommSplit", code)?;
        Ok((!new.is_null()).then_some(new as u64))
    }

    /// Ranks of a communicator this library made (`ncclCommCount`).
    pub fn comm_count(&self, comm: u64) -> Result<u32, Error> {
        let mut n: c_int = 0;
        // SAFETY: `comm` came from this library; `n` is a valid out-parameter.
        let code = unsafe { (self.f.count)(comm as ncclComm_t, &mut n) };
        self.check("ncclCommCount", code)?;
        Ok(u32::try_from(n).unwrap_or(0))
    }

    /// `ncclCommFinalize` of a communicator this library made.
    pub fn comm_finalize(&self, comm: u64) -> Result<(), Error> {
        // SAFETY: `comm` came from comm_init_rank.
        let code = unsafe { (self.f.finalize)(comm as ncclComm_t) };
        self.check("ncclCommFinalize", code)
    }

    /// `ncclCommDestroy` of a communicator this library made.
    pub fn comm_destroy(&self, comm: u64) -> Result<(), Error> {
        // SAFETY: `comm` came from comm_init_rank.
        let code = unsafe { (self.f.destroy)(comm as ncclComm_t) };
        self.check("ncclCommDestroy", code)
    }

    /// `ncclGroupStart`.
    pub fn group_start(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        let code = unsafe { (self.f.group_start)() };
        self.check("ncclGroupStart", code)
    }

    /// `ncclGroupEnd`.
    pub fn group_end(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        let code = unsafe { (self.f.group_end)() };
        self.check("ncclGroupEnd", code)
    }

    /// Issues one collective on its stream.
    ///
    /// # Safety
    /// `i.send`/`i.recv` are device buffers of the communicator's device,
    /// large enough for the operation; `i.comm` came from
    /// [`Nccl::comm_init_rank`] and `i.stream` is a live stream of that
    /// device's runtime (or 0).
    pub unsafe fn issue(&self, i: &Issue) -> Result<(), Error> {
        let send = i.send as *const std::ffi::c_void;
        let recv = i.recv as *mut std::ffi::c_void;
        let count = i.count as usize;
        let comm = i.comm as ncclComm_t;
        let stream = i.stream as ncclStream_t;
        // SAFETY: per this function's contract.
        let code = unsafe {
            match i.coll {
                Coll::AllReduce => {
                    (self.f.all_reduce)(send, recv, count, i.dtype, i.op, comm, stream)
                }
                Coll::Broadcast => {
                    (self.f.broadcast)(send, recv, count, i.dtype, i.root, comm, stream)
                }
                Coll::Reduce => {
                    (self.f.reduce)(send, recv, count, i.dtype, i.op, i.root, comm, stream)
                }
                Coll::AllGather => (self.f.all_gather)(send, recv, count, i.dtype, comm, stream),
                Coll::ReduceScatter => {
                    (self.f.reduce_scatter)(send, recv, count, i.dtype, i.op, comm, stream)
                }
                Coll::Send => (self.f.send)(send, count, i.dtype, i.root, comm, stream),
                Coll::Recv => (self.f.recv)(recv, count, i.dtype, i.root, comm, stream),
            }
        };
        self.check(i.coll.api(), code)
    }
}
