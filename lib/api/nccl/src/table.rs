//! The NCCL table (`api-table`'s shape): each entry point of `nccl.h` that
//! hrr interposes or calls, with the header's parameter names. RCCL exports
//! the same names with the same C signatures (`hipStream_t` for
//! `cudaStream_t`, both a pointer), so one table serves both libraries.

/// The NCCL table's lookup: `nccl_fn!(NAME, CALLBACK, [EXTRA…])` expands to
/// `CALLBACK! { EXTRA… NAME(PARAM: TYPE, …) -> RET }`. Types resolve where
/// it expands (`nccl_api::types::*` in scope).
#[macro_export]
macro_rules! nccl_fn {
    (ncclGetVersion, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclGetVersion(version: *mut c_int) -> ncclResult_t } };
    (ncclGetUniqueId, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclGetUniqueId(uniqueId: *mut ncclUniqueId) -> ncclResult_t } };
    (ncclCommInitRank, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommInitRank(comm: *mut ncclComm_t, nranks: c_int, commId: ncclUniqueId, rank: c_int) -> ncclResult_t } };
    (ncclCommInitRankConfig, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommInitRankConfig(comm: *mut ncclComm_t, nranks: c_int, commId: ncclUniqueId, rank: c_int, config: ncclConfigPtr) -> ncclResult_t } };
    (ncclCommInitAll, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommInitAll(comm: *mut ncclComm_t, ndev: c_int, devlist: *const c_int) -> ncclResult_t } };
    (ncclCommSplit, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommSplit(comm: ncclComm_t, color: c_int, key: c_int, newcomm: *mut ncclComm_t, config: ncclConfigPtr) -> ncclResult_t } };
    (ncclCommFinalize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommFinalize(comm: ncclComm_t) -> ncclResult_t } };
    (ncclCommDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommDestroy(comm: ncclComm_t) -> ncclResult_t } };
    (ncclCommAbort, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommAbort(comm: ncclComm_t) -> ncclResult_t } };
    (ncclCommCount, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommCount(comm: ncclComm_t, count: *mut c_int) -> ncclResult_t } };
    (ncclCommCuDevice, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommCuDevice(comm: ncclComm_t, device: *mut c_int) -> ncclResult_t } };
    (ncclCommUserRank, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommUserRank(comm: ncclComm_t, rank: *mut c_int) -> ncclResult_t } };
    (ncclCommGetAsyncError, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommGetAsyncError(comm: ncclComm_t, asyncError: *mut ncclResult_t) -> ncclResult_t } };
    (ncclGetErrorString, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclGetErrorString(result: ncclResult_t) -> *const c_char } };
    (ncclAllReduce, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclAllReduce(sendbuff: *const c_void, recvbuff: *mut c_void, count: usize, datatype: ncclDataType_t, op: ncclRedOp_t, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclBroadcast, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclBroadcast(sendbuff: *const c_void, recvbuff: *mut c_void, count: usize, datatype: ncclDataType_t, root: c_int, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclBcast, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclBcast(buff: *mut c_void, count: usize, datatype: ncclDataType_t, root: c_int, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclReduce, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclReduce(sendbuff: *const c_void, recvbuff: *mut c_void, count: usize, datatype: ncclDataType_t, op: ncclRedOp_t, root: c_int, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclAllGather, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclAllGather(sendbuff: *const c_void, recvbuff: *mut c_void, sendcount: usize, datatype: ncclDataType_t, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclReduceScatter, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclReduceScatter(sendbuff: *const c_void, recvbuff: *mut c_void, recvcount: usize, datatype: ncclDataType_t, op: ncclRedOp_t, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclSend, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclSend(sendbuff: *const c_void, count: usize, datatype: ncclDataType_t, peer: c_int, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclRecv, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclRecv(recvbuff: *mut c_void, count: usize, datatype: ncclDataType_t, peer: c_int, comm: ncclComm_t, stream: ncclStream_t) -> ncclResult_t } };
    (ncclGroupStart, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclGroupStart() -> ncclResult_t } };
    (ncclGroupEnd, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclGroupEnd() -> ncclResult_t } };
    (ncclMemAlloc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclMemAlloc(ptr: *mut *mut c_void, size: usize) -> ncclResult_t } };
    (ncclMemFree, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclMemFree(ptr: *mut c_void) -> ncclResult_t } };
    (ncclCommRegister, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommRegister(comm: ncclComm_t, buff: *mut c_void, size: usize, handle: *mut *mut c_void) -> ncclResult_t } };
    (ncclCommDeregister, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* ncclCommDeregister(comm: ncclComm_t, handle: *mut c_void) -> ncclResult_t } };
}

/// The NCCL table's list: `nccl_fns!(CALLBACK, [EXTRA…])` expands to
/// `CALLBACK! { EXTRA… NAME NAME … }`, every entry of [`nccl_fn!`].
#[macro_export]
macro_rules! nccl_fns {
    ($cb:path, [$($x:tt)*]) => {
        $cb! { $($x)*
            ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclCommInitRankConfig
            ncclCommInitAll ncclCommSplit ncclCommFinalize ncclCommDestroy ncclCommAbort
            ncclCommCount ncclCommCuDevice ncclCommUserRank ncclCommGetAsyncError
            ncclGetErrorString
            ncclAllReduce ncclBroadcast ncclBcast ncclReduce ncclAllGather
            ncclReduceScatter ncclSend ncclRecv ncclGroupStart ncclGroupEnd
            ncclMemAlloc ncclMemFree ncclCommRegister ncclCommDeregister
        }
    };
}
