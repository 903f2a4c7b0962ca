//! Every exported CUDA runtime table entry's handler (see
//! `hrr_interpose::exports`): the export `NAME` calls `handlers::NAME`. All are
//! hand-written — recorded ([`super::memory`], [`super::symbols`], [`super::sync`],
//! [`super::launch`]) or bookkeeping (registrations, driver lookups); the
//! runtime table holds no query or unrecorded entry points.
//!
//! An exported entry missing here fails the build (`cannot find function
//! NAME in module handlers`); one listed twice too (`defined multiple
//! times`).

pub use super::launch::{
    __cudaGetKernel, __cudaLaunchKernel, __cudaLaunchKernel_ptsz, __cudaRegisterFatBinary,
    __cudaRegisterFatBinaryEnd, __cudaRegisterFunction, __cudaUnregisterFatBinary,
    cudaLaunchKernel, cudaLaunchKernel_ptsz, cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz,
};
pub use super::memory::{
    cudaFree, cudaFreeAsync, cudaFreeAsync_ptsz, cudaFreeHost, cudaHostAlloc, cudaHostRegister,
    cudaHostUnregister, cudaMalloc, cudaMallocAsync, cudaMallocAsync_ptsz, cudaMallocHost,
    cudaMallocManaged, cudaMemcpy, cudaMemcpy_ptds, cudaMemcpyAsync, cudaMemcpyAsync_ptsz,
    cudaMemset, cudaMemset_ptds, cudaMemsetAsync, cudaMemsetAsync_ptsz,
};
pub use super::symbols::{
    cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbolAsync,
    cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds,
    cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_ptsz,
};
pub use super::sync::{
    cudaDeviceSynchronize, cudaEventCreate, cudaEventCreateWithFlags, cudaEventDestroy,
    cudaEventRecord, cudaEventRecord_ptsz, cudaEventRecordWithFlags, cudaEventRecordWithFlags_ptsz,
    cudaEventSynchronize, cudaProfilerStart, cudaProfilerStop, cudaSetDevice, cudaStreamCreate,
    cudaStreamCreateWithFlags, cudaStreamCreateWithPriority, cudaStreamDestroy,
    cudaStreamSynchronize, cudaStreamSynchronize_ptsz, cudaStreamWaitEvent,
    cudaStreamWaitEvent_ptsz,
};
pub use crate::cuda::driver::proc::{cudaGetDriverEntryPoint, cudaGetDriverEntryPointByVersion};
