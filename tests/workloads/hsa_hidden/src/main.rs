//! `hsa_hidden`: the seed's scenario (ROCm HRR's
//! `Unit_HRR_Regions_MemcpyFirstTouchMaterialization`) as a Rust application.
//!
//! 256 KiB come from the GPU agent's coarse-grained HSA pool through `hsa-sys`
//! (access granted to every agent), so the HIP API never sees the allocation.
//! Its base goes to stdout as `HRR_SEGMENT base=0x… size=262144` for
//! `hrr-sidecar`; then, through HIP: H2D into the segment (its first touch),
//! D2D into a hipMalloc buffer, D2H back, and the bytes are checked.
//!
//! ```text
//! hsa_hidden [--runtime HIP_LIB] [--hsa HSA_LIB]
//! ```
//! HIP_LIB: `--runtime`, else `$HRR_HIP_RUNTIME`, else ROCm's `libamdhip64.so.5`
//! (hrr's CPU runtime is `target/<profile>/libhrr_hip_cpu.so`). HSA_LIB:
//! `--hsa`, else `$HRR_HSA_RUNTIME`, else HIP_LIB itself when it (or a library
//! it depends on, as ROCm's does) exports `hsa_init`, else `libhsa-runtime64.so.1`.
//!
//! The HIP library is opened `RTLD_GLOBAL` and every HIP entry point is looked
//! up in the process's global scope, exactly as a linked application's calls
//! bind: so a preloaded interposer (`hrr-cap`, `LD_PRELOAD=libhrr_intercept.so`)
//! sees the calls. HSA is called directly, not through HIP: that is the point.
//! Its entry points bind the same way (`hsa_sys::Hsa::load_global`), so the
//! interposer's HSA producer (`hrr-cap --hsa-regions`) sees the allocation as
//! it would a linked application's.
//!
//! Exit status: 0 when the bytes come back right, 1 when they do not or a call
//! fails, 2 on a usage error.

use std::ffi::{CStr, OsString, c_char, c_int, c_uint, c_void};
use std::io::Write;
use std::process::ExitCode;

use libloading::os::unix::Library;

const SEG_SIZE: usize = 262_144;

const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;

/// `hipError_t` (a C enum; 0 is `hipSuccess`).
type HipError = c_int;

/// The HIP entry points this workload calls (signatures of Debian's
/// `hip/hipruntime_api.h`, ROCm 5.2).
struct Hip {
    init: unsafe extern "C" fn(flags: c_uint) -> HipError,
    set_device: unsafe extern "C" fn(device: c_int) -> HipError,
    malloc: unsafe extern "C" fn(ptr: *mut *mut c_void, size: usize) -> HipError,
    free: unsafe extern "C" fn(ptr: *mut c_void) -> HipError,
    memcpy: unsafe extern "C" fn(
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: c_int,
    ) -> HipError,
    error_string: unsafe extern "C" fn(e: HipError) -> *const c_char,
    // The runtime stays loaded while these pointers are used.
    runtime: Library,
}

struct Args {
    runtime: OsString,
    hsa: Option<OsString>,
}

fn usage() -> ExitCode {
    eprintln!("usage: hsa_hidden [--runtime HIP_LIB] [--hsa HSA_LIB]");
    ExitCode::from(2)
}

fn parse_args() -> Result<Args, ExitCode> {
    let mut runtime = std::env::var_os("HRR_HIP_RUNTIME");
    let mut hsa = std::env::var_os("HRR_HSA_RUNTIME");
    let mut it = std::env::args_os().skip(1);
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--runtime") => runtime = Some(it.next().ok_or_else(usage)?),
            Some("--hsa") => hsa = Some(it.next().ok_or_else(usage)?),
            Some("-h" | "--help") => {
                println!("usage: hsa_hidden [--runtime HIP_LIB] [--hsa HSA_LIB]");
                return Err(ExitCode::SUCCESS);
            }
            _ => {
                eprintln!("hsa_hidden: unexpected argument {a:?}");
                return Err(usage());
            }
        }
    }
    Ok(Args {
        runtime: runtime.unwrap_or_else(|| "libamdhip64.so.5".into()),
        hsa,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(code) => return code,
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hsa_hidden: FAIL: {e}");
            ExitCode::from(1)
        }
    }
}

/// `e` and its causes on one line (an hsa-sys load error keeps the dynamic
/// loader's message as its source).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s += &format!(": {c}");
        cause = c.source();
    }
    s
}

/// Resolves `name` in the global scope (where a preloaded interposer comes
/// before the runtime), as the function-pointer type `T`.
///
/// # Safety
/// `T` must be the C signature of `name`.
unsafe fn global_fn<T: Copy>(global: &Library, runtime: &Library, name: &str) -> Result<T, String> {
    let mut cname = name.as_bytes().to_vec();
    cname.push(0);
    // SAFETY: the caller guarantees the type.
    let found = unsafe { global.get::<T>(&cname) }.or_else(|_| unsafe { runtime.get::<T>(&cname) });
    found.map(|s| *s).map_err(|e| format!("{name}: {e}"))
}

fn load_hip(path: &OsString) -> Result<Hip, String> {
    // SAFETY: loading the HIP runtime runs its initialisers, which have no
    // preconditions on this program.
    let runtime = unsafe { Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_GLOBAL) }
        .map_err(|e| format!("cannot load HIP runtime {path:?}: {e}"))?;
    let global = Library::this();
    // SAFETY: every call's type is the header signature of its name.
    unsafe {
        Ok(Hip {
            init: global_fn(&global, &runtime, "hipInit")?,
            set_device: global_fn(&global, &runtime, "hipSetDevice")?,
            malloc: global_fn(&global, &runtime, "hipMalloc")?,
            free: global_fn(&global, &runtime, "hipFree")?,
            memcpy: global_fn(&global, &runtime, "hipMemcpy")?,
            error_string: global_fn(&global, &runtime, "hipGetErrorString")?,
            runtime,
        })
    }
}

impl Hip {
    fn check(&self, call: &str, e: HipError) -> Result<(), String> {
        if e == 0 {
            return Ok(());
        }
        // SAFETY: hipGetErrorString takes any value and returns a static string or NULL.
        let s = unsafe { (self.error_string)(e) };
        let msg = if s.is_null() {
            "?".to_string()
        } else {
            // SAFETY: non-null: a NUL-terminated static string.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(format!("{call} returned {e} ({msg})"))
    }
}

/// The HSA library: explicit, or the HIP runtime when it provides `hsa_init`.
fn hsa_library(args: &Args, hip: &Hip) -> OsString {
    if let Some(p) = &args.hsa {
        return p.clone();
    }
    // SAFETY: only the symbol's presence is tested; nothing is called.
    let has_hsa = unsafe {
        hip.runtime
            .get::<unsafe extern "C" fn() -> u32>(b"hsa_init\0")
    }
    .is_ok();
    if has_hsa {
        args.runtime.clone()
    } else {
        hsa_sys::DEFAULT_LIBRARY.into()
    }
}

fn run(args: &Args) -> Result<(), String> {
    let hip = load_hip(&args.runtime)?;
    // The HIP calls below follow the HIP API contract: valid out-pointers,
    // host buffers of SEG_SIZE bytes, device pointers from the runtime.
    // SAFETY: no pointers.
    hip.check("hipInit", unsafe { (hip.init)(0) })?;
    // SAFETY: no pointers; device 0 exists once hipInit succeeded.
    hip.check("hipSetDevice", unsafe { (hip.set_device)(0) })?;

    let hsa_path = hsa_library(args, &hip);
    let hsa = hsa_sys::Hsa::load_global(&hsa_path).map_err(|e| chain(&e))?;
    let pool = hsa.gpu_coarse_pool().map_err(|e| chain(&e))?;
    let seg = hsa.allocate(&pool, SEG_SIZE).map_err(|e| chain(&e))?;
    hsa.allow_access_all(&seg).map_err(|e| chain(&e))?;

    let mut out = std::io::stdout().lock();
    writeln!(out, "HRR_SEGMENT base={:#x} size={}", seg.addr(), seg.len())
        .map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    drop(out);

    let mut host: Vec<u8> = (0..SEG_SIZE)
        .map(|i| (i as u32).wrapping_mul(7).wrapping_add(3) as u8)
        .collect();
    host[0] = 0xa5;
    host[SEG_SIZE - 1] = 0x5a;
    let mut back = vec![0u8; SEG_SIZE];

    let mut dbuf: *mut c_void = std::ptr::null_mut();
    // SAFETY: `dbuf` is a valid out-pointer.
    hip.check("hipMalloc", unsafe { (hip.malloc)(&mut dbuf, SEG_SIZE) })?;
    // First touch of the hidden segment: an H2D destination.
    // SAFETY: the segment and `host` both hold SEG_SIZE bytes.
    hip.check("hipMemcpy H2D", unsafe {
        (hip.memcpy)(
            seg.as_ptr(),
            host.as_ptr().cast(),
            SEG_SIZE,
            HIP_MEMCPY_HOST_TO_DEVICE,
        )
    })?;
    // The segment as a D2D source.
    // SAFETY: `dbuf` and the segment both hold SEG_SIZE bytes.
    hip.check("hipMemcpy D2D", unsafe {
        (hip.memcpy)(dbuf, seg.as_ptr(), SEG_SIZE, HIP_MEMCPY_DEVICE_TO_DEVICE)
    })?;
    // SAFETY: `back` and `dbuf` both hold SEG_SIZE bytes.
    hip.check("hipMemcpy D2H", unsafe {
        (hip.memcpy)(
            back.as_mut_ptr().cast(),
            dbuf,
            SEG_SIZE,
            HIP_MEMCPY_DEVICE_TO_HOST,
        )
    })?;

    let (first, last) = (back[0], back[SEG_SIZE - 1]);
    if first != 0xa5 || last != 0x5a {
        return Err(format!(
            "round trip: first {first:#x} (want 0xa5), last {last:#x} (want 0x5a)"
        ));
    }
    if let Some(i) = back.iter().zip(&host).position(|(a, b)| a != b) {
        return Err(format!(
            "round trip differs at byte {i}: {:#x} != {:#x}",
            back[i], host[i]
        ));
    }
    println!("hsa_hidden: H2D -> segment -> D2D -> D2H ok (first {first:#x}, last {last:#x})");

    // SAFETY: `dbuf` came from hipMalloc and is freed once.
    hip.check("hipFree", unsafe { (hip.free)(dbuf) })?;
    seg.free().map_err(|e| chain(&e))?;
    drop(hsa);
    println!("hsa_hidden: OK");
    Ok(())
}
