//! Entry points that Debian's ROCm 5.2 headers do not declare as C functions,
//! transcribed with their sources. Declarations only: nothing links against them
//! (the checks use their types in `const`s).
#![allow(non_snake_case)]

/// What clang emits calls to when it compiles HIP host code, and
/// libamdhip64 defines (`extern "C"` in ROCm's `hipamd/src/hip_platform.cpp`);
/// no header declares them. `scripts/abi-check.sh` also compiles
/// `tests/abi/hip/vector_add.hip` with clang-15 for the host and checks the
/// LLVM `declare` lines clang generates against these (tests/abi/check-hip-host-ir.sh).
pub mod compiler {
    use crate::debian_hip::dim3;
    use std::ffi::{c_char, c_int, c_uint, c_void};

    /// `uint3` (3 × `unsigned`), only passed by pointer here.
    #[repr(C)]
    pub struct uint3 {
        pub x: c_uint,
        pub y: c_uint,
        pub z: c_uint,
    }

    unsafe extern "C" {
        /// `std::vector<hipModule_t>* __hipRegisterFatBinary(const void* data)`
        /// (clang: `ptr @__hipRegisterFatBinary(ptr)`).
        pub fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void;
        /// `void __hipRegisterFunction(std::vector<hipModule_t>* modules, const void* hostFunction,
        /// char* deviceFunction, const char* deviceName, unsigned int threadLimit, uint3* tid,
        /// uint3* bid, dim3* blockDim, dim3* gridDim, int* wSize)`
        /// (clang: `void @__hipRegisterFunction(ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr)`).
        pub fn __hipRegisterFunction(
            modules: *mut *mut c_void,
            hostFunction: *const c_void,
            deviceFunction: *mut c_char,
            deviceName: *const c_char,
            threadLimit: c_uint,
            tid: *mut uint3,
            bid: *mut uint3,
            blockDim: *mut dim3,
            gridDim: *mut dim3,
            wSize: *mut c_int,
        );
        /// `void __hipUnregisterFatBinary(std::vector<hipModule_t>* modules)`
        /// (clang: `void @__hipUnregisterFatBinary(ptr)`).
        pub fn __hipUnregisterFatBinary(modules: *mut *mut c_void);
        /// `void __hipRegisterVar(std::vector<hipModule_t>* modules, void* var, char* hostVar,
        /// char* deviceVar, int ext, size_t size, int constant, int global)`
        /// (clang: `void @__hipRegisterVar(ptr, ptr, ptr, ptr, i32, i64, i32, i32)`).
        pub fn __hipRegisterVar(
            modules: *mut *mut c_void,
            var: *mut c_void,
            hostVar: *mut c_char,
            deviceVar: *mut c_char,
            ext: c_int,
            size: usize,
            constant: c_int,
            global: c_int,
        );
        /// `void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value,
        /// const char* name, size_t size, unsigned align)`
        /// (clang: `void @__hipRegisterManagedVar(ptr, ptr, ptr, ptr, i64, i32)`).
        pub fn __hipRegisterManagedVar(
            hipModule: *mut c_void,
            pointer: *mut *mut c_void,
            init_value: *mut c_void,
            name: *const c_char,
            size: usize,
            align: c_uint,
        );
        /// `void __hipRegisterSurface(std::vector<hipModule_t>* modules, void* var, char* hostVar,
        /// char* deviceVar, int type, int ext)`
        /// (clang: `void @__hipRegisterSurface(ptr, ptr, ptr, ptr, i32, i32)`).
        pub fn __hipRegisterSurface(
            modules: *mut *mut c_void,
            var: *mut c_void,
            hostVar: *mut c_char,
            deviceVar: *mut c_char,
            type_: c_int,
            ext: c_int,
        );
        /// `void __hipRegisterTexture(std::vector<hipModule_t>* modules, void* var, char* hostVar,
        /// char* deviceVar, int type, int norm, int ext)`
        /// (clang: `void @__hipRegisterTexture(ptr, ptr, ptr, ptr, i32, i32, i32)`).
        pub fn __hipRegisterTexture(
            modules: *mut *mut c_void,
            var: *mut c_void,
            hostVar: *mut c_char,
            deviceVar: *mut c_char,
            type_: c_int,
            norm: c_int,
            ext: c_int,
        );
    }
}

/// `hip/hip_ext.h`: C++ only in ROCm 5.2 (default arguments, no `extern "C"`),
/// so bindgen's C mode does not see it. In libamdhip64.so.5 the symbols are
/// the C++-mangled names; each signature below is what its mangling encodes
/// (`jjjjjj` = 6 × unsigned, `m` = unsigned long, …, `j` = flags). The C name
/// `hipExtModuleLaunchKernel` is declared too: both of hrr's libraries export
/// it (ROCm declares it `extern "C"` in later releases).
pub mod hip_ext {
    use crate::debian_hip::{hipError_t, hipEvent_t, hipFunction_t, hipStream_t};
    use std::ffi::c_void;

    unsafe extern "C" {
        pub fn hipExtModuleLaunchKernel(
            f: hipFunction_t,
            globalWorkSizeX: u32,
            globalWorkSizeY: u32,
            globalWorkSizeZ: u32,
            localWorkSizeX: u32,
            localWorkSizeY: u32,
            localWorkSizeZ: u32,
            sharedMemBytes: usize,
            hStream: hipStream_t,
            kernelParams: *mut *mut c_void,
            extra: *mut *mut c_void,
            startEvent: hipEvent_t,
            stopEvent: hipEvent_t,
            flags: u32,
        ) -> hipError_t;
        /// `hipExtModuleLaunchKernel` as ROCm 5.2 exports it.
        pub fn _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
            f: hipFunction_t,
            globalWorkSizeX: u32,
            globalWorkSizeY: u32,
            globalWorkSizeZ: u32,
            localWorkSizeX: u32,
            localWorkSizeY: u32,
            localWorkSizeZ: u32,
            sharedMemBytes: usize,
            hStream: hipStream_t,
            kernelParams: *mut *mut c_void,
            extra: *mut *mut c_void,
            startEvent: hipEvent_t,
            stopEvent: hipEvent_t,
            flags: u32,
        ) -> hipError_t;
        /// `hipHccModuleLaunchKernel` (deprecated: hipExtModuleLaunchKernel
        /// without `flags`), as ROCm 5.2 exports it.
        pub fn _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
            f: hipFunction_t,
            globalWorkSizeX: u32,
            globalWorkSizeY: u32,
            globalWorkSizeZ: u32,
            localWorkSizeX: u32,
            localWorkSizeY: u32,
            localWorkSizeZ: u32,
            sharedMemBytes: usize,
            hStream: hipStream_t,
            kernelParams: *mut *mut c_void,
            extra: *mut *mut c_void,
            startEvent: hipEvent_t,
            stopEvent: hipEvent_t,
        ) -> hipError_t;
    }
}

/// `hip/hip_runtime_api.h` declarations after its `extern "C"` block (C++
/// only), which libamdhip64.so.5 exports under their mangled names:
/// `hipError_t hipCreateSurfaceObject(hipSurfaceObject_t* pSurfObject, const hipResourceDesc* pResDesc);`
/// `hipError_t hipDestroySurfaceObject(hipSurfaceObject_t surfaceObject);`
pub mod hip_runtime_cxx {
    use crate::debian_hip::{hipError_t, hipResourceDesc, hipSurfaceObject_t};

    unsafe extern "C" {
        pub fn _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(
            pSurfObject: *mut hipSurfaceObject_t,
            pResDesc: *const hipResourceDesc,
        ) -> hipError_t;
        pub fn _Z23hipDestroySurfaceObjectP13__hip_surface(
            surfaceObject: hipSurfaceObject_t,
        ) -> hipError_t;
    }
}

/// ROCm 6 additions the interposer already exports (absent from Debian's 5.2
/// headers or from its libamdhip64.so.5's exports, and from hip-runtime-sys
/// 0.1.2). From ROCm 6.2's `hip/hip_runtime_api.h`:
/// `hipError_t hipGetProcAddress(const char* symbol, void** pfn, int hipVersion,
/// uint64_t flags, hipDriverProcAddressQueryResult* symbolStatus);`
/// `hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData);`
/// (declared by the 5.2 header too, exported from ROCm 5.3 on).
pub mod rocm6 {
    use crate::debian_hip::{hipError_t, hipHostFn_t, hipStream_t};
    use std::ffi::{c_char, c_int, c_void};

    /// `hipDriverProcAddressQueryResult` (a C enum), only passed by pointer here.
    #[repr(C)]
    pub struct hipDriverProcAddressQueryResult(pub u32);

    unsafe extern "C" {
        pub fn hipGetProcAddress(
            symbol: *const c_char,
            pfn: *mut *mut c_void,
            hipVersion: c_int,
            flags: u64,
            symbolStatus: *mut hipDriverProcAddressQueryResult,
        ) -> hipError_t;
        pub fn hipLaunchHostFunc(
            stream: hipStream_t,
            fn_: hipHostFn_t,
            userData: *mut c_void,
        ) -> hipError_t;
    }
}

/// glibc's `void *dlsym(void *handle, const char *symbol)` (`<dlfcn.h>`), which
/// the interposer defines to route CUDA driver lookups (as the libc crate binds it).
pub mod libc_dl {
    pub use libc::dlsym;
}

/// glibc's `int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
/// void *(*start_routine)(void *), void *arg)` (`<pthread.h>`), which the
/// interposer defines to tell a library's own threads (as the libc crate
/// binds it).
pub mod libc_pthread {
    pub use libc::pthread_create;
}

/// glibc's `void *mmap(void *addr, size_t length, int prot, int flags, int fd,
/// off_t offset)` and its alias `mmap64` (`<sys/mman.h>`), which the
/// interposer defines to note the GPU driver's address arenas (as the libc
/// crate binds them).
pub mod libc_mman {
    pub use libc::{mmap, mmap64};
}

/// glibc's process-exit entry points the interposer also defines (to flush the
/// archive): `void _exit(int) __attribute__((noreturn))` (`<unistd.h>`) and
/// `void _Exit(int) __attribute__((noreturn))` (`<stdlib.h>`; the libc crate
/// does not bind `_Exit`).
pub mod libc_exit {
    use std::ffi::c_int;

    unsafe extern "C" {
        pub fn _exit(status: c_int) -> !;
        pub fn _Exit(status: c_int) -> !;
    }

    // Agrees with the libc crate's `_exit`.
    const _: () = {
        let _a: unsafe extern "C" fn(c_int) -> ! = libc::_exit;
        let _b: unsafe extern "C" fn(c_int) -> ! = _exit;
    };
}
