//! `cuda-c-decls`: prints a C file that redeclares every entry of both CUDA
//! signature tables (the driver's `cuda_fn!`, the runtime's `cudart_fn!`)
//! after `#include <cuda.h>` and `#include <cuda_runtime_api.h>`, so that a
//! table line whose C signature differs from CUDA's prototype is a compile
//! error (`conflicting types`). `scripts/abi-check.sh` compiles it against
//! CUDA 13.0's headers; `scripts/gpu-pass.sh` against the GPU machine's.
//!
//! Rust types map back to C as the tables were written from C: `*mut T` is
//! `T *`, `*const T` is `const T *`, `usize` is `size_t`, `c_uint` is
//! `unsigned int`, `u8`/`u16` are `unsigned char`/`short`, `c_ulonglong`
//! is `unsigned long long`, `f32` is `float`; any other name is a C type
//! name, unchanged (C enum and struct tags get their `enum`/`struct`
//! keyword back). A Rust type with no C spelling is an error.
//!
//! Each declaration is guarded by `#ifndef NAME`: where a header's macro
//! maps the name to another entry point (`cuMemAlloc` → `cuMemAlloc_v2`,
//! `cudaMemcpy` → `cudaMemcpy_ptds` under per-thread default streams), the
//! line would redeclare that other function. Compile it in every mode the
//! headers declare names in (plain, `-DCUDA_API_PER_THREAD_DEFAULT_STREAM`,
//! `-D__CUDA_API_VERSION_INTERNAL` for the versioned names `cuda.h` hides)
//! and as C++ (the compiler ABI of `crt/host_runtime.h`); with
//! `-Wredundant-decls` each line that met a header prototype says so.
//!
//! `--names` prints every entry's name instead, one per line.

use std::fmt::{self, Write as _};
use std::process::ExitCode;

/// One table line: name, parameters (name, Rust type as written), result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decl {
    table: &'static str,
    name: &'static str,
    params: Vec<(&'static str, &'static str)>,
    ret: Option<&'static str>,
}

/// A table line with a type that has no C spelling.
#[derive(Debug, PartialEq, Eq)]
struct NoCType {
    entry: &'static str,
    ty: String,
}

impl fmt::Display for NoCType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: type `{}` has no C spelling (use the header's type name, defined in cuda-api's types)",
            self.entry, self.ty
        )
    }
}

impl std::error::Error for NoCType {}

/// Callback of a table's lookup macro: pushes the line onto `$v`.
macro_rules! collect {
    ([$v:ident $table:literal] $name:ident ( $($p:ident : $t:ty),* $(,)? ) $(-> $r:ty)?) => {
        $v.push(Decl {
            table: $table,
            name: stringify!($name),
            params: vec![$((stringify!($p), stringify!($t))),*],
            ret: None $(.or(Some(stringify!($r))))?,
        });
    };
}

/// Every line of both tables, driver first.
#[allow(clippy::vec_init_then_push)] // one push per table line, by macro
fn tables() -> Vec<Decl> {
    let mut v = Vec::new();
    cuda_api::cuda_fns!(api_table::for_each, [cuda_api::cuda_fn, collect, [[v "driver"]]]);
    cuda_api::cudart_fns!(api_table::for_each, [cuda_api::cudart_fn, collect, [[v "runtime"]]]);
    v
}

/// C enum and struct tags that the headers do not typedef.
const TAGGED: &[(&str, &str)] = &[
    ("cudaMemcpyKind", "enum cudaMemcpyKind"),
    (
        "cudaDriverEntryPointQueryResult",
        "enum cudaDriverEntryPointQueryResult",
    ),
    ("cudaPointerAttributes", "struct cudaPointerAttributes"),
];

/// Rust names that are not C type names, and their C spelling.
const PRIMITIVES: &[(&str, &str)] = &[
    ("c_void", "void"),
    ("c_char", "char"),
    ("c_int", "int"),
    ("c_uint", "unsigned int"),
    ("c_ulonglong", "unsigned long long"),
    ("usize", "size_t"),
    ("u8", "unsigned char"),
    ("u16", "unsigned short"),
    ("f32", "float"),
];

/// Rust primitives with no C spelling here (a table must use a C name).
const NOT_C: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u32",
    "u64",
    "u128",
    "f64",
    "bool",
    "char",
    "str",
    "c_long",
    "c_ulong",
    "c_short",
    "c_ushort",
    "c_schar",
    "c_uchar",
    "c_longlong",
];

/// `ty` (as `stringify!` wrote it) in C.
fn c_type(entry: &'static str, ty: &str) -> Result<String, NoCType> {
    let err = || NoCType {
        entry,
        ty: ty.to_string(),
    };
    let t: String = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t.trim();
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(rest) = compact.strip_prefix("*mut") {
        let inner = c_type(entry, rest)?;
        return Ok(format!("{inner} *"));
    }
    if let Some(rest) = compact.strip_prefix("*const") {
        let inner = c_type(entry, rest)?;
        // `const T *`; a pointer's own constness goes after it.
        return Ok(if inner.ends_with('*') {
            format!("{inner} const *")
        } else {
            format!("const {inner} *")
        });
    }
    let is_ident = !compact.is_empty()
        && compact
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !compact.starts_with(|c: char| c.is_ascii_digit());
    if !is_ident || NOT_C.contains(&compact.as_str()) {
        return Err(err());
    }
    if let Some((_, c)) = PRIMITIVES.iter().find(|(r, _)| *r == compact) {
        return Ok((*c).to_string());
    }
    if let Some((_, c)) = TAGGED.iter().find(|(r, _)| *r == compact) {
        return Ok((*c).to_string());
    }
    Ok(compact)
}

/// `RET NAME(T1 p1, T2 p2);` (`void` for none).
fn prototype(d: &Decl) -> Result<String, NoCType> {
    let ret = match d.ret {
        Some(r) => c_type(d.name, r)?,
        None => "void".to_string(),
    };
    let params = if d.params.is_empty() {
        "void".to_string()
    } else {
        let mut ps = Vec::with_capacity(d.params.len());
        for (p, t) in &d.params {
            let c = c_type(d.name, t)?;
            ps.push(if c.ends_with('*') {
                format!("{c}{p}")
            } else {
                format!("{c} {p}")
            });
        }
        ps.join(", ")
    };
    let sep = if ret.ends_with('*') { "" } else { " " };
    Ok(format!("{ret}{sep}{}({params});", d.name))
}

/// The whole C file.
fn c_file(decls: &[Decl]) -> Result<String, NoCType> {
    let mut out = String::new();
    let count = |t: &str| decls.iter().filter(|d| d.table == t).count();
    let _ = write!(
        out,
        "/* Generated by cuda-c-decls (crate cuda-api): every line of hrr's CUDA\n\
         \x20* driver table ({} entries, cuda_fn!) and runtime table ({} entries,\n\
         \x20* cudart_fn!) redeclared after CUDA's headers. A line whose signature\n\
         \x20* differs from the header's prototype does not compile (conflicting\n\
         \x20* types). Do not edit: regenerate with\n\
         \x20*   cargo run -q -p cuda-api --bin cuda-c-decls\n\
         \x20*/\n",
        count("driver"),
        count("runtime"),
    );
    out.push_str(
        "#include <cuda.h>\n\
         #include <cuda_runtime_api.h>\n\
         /* The profiler range (cuProfilerStart, cudaProfilerStart). */\n\
         #if __has_include(<cudaProfiler.h>)\n\
         #include <cudaProfiler.h>\n\
         #endif\n\
         #if __has_include(<cuda_profiler_api.h>)\n\
         #include <cuda_profiler_api.h>\n\
         #endif\n\
         #if defined(__cplusplus) && !defined(__CUDACC__)\n\
         /* The compiler ABI (__cudaRegisterFatBinary, __cudaRegisterFunction, ...)\n\
         \x20* is declared for C++ only, by the header nvcc's host stub includes\n\
         \x20* twice (the first pass sets it up, the second declares). nvcc itself\n\
         \x20* (__CUDACC__) declares it, and __cudaGetKernel/__cudaLaunchKernel. */\n\
         #include <cmath>\n\
         #include <cstring>\n\
         #define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__\n\
         #include <crt/host_runtime.h>\n\
         #include <crt/host_runtime.h>\n\
         #endif\n\
         #if defined(__cplusplus)\n\
         extern \"C\" {\n\
         #endif\n",
    );
    let mut table = "";
    for d in decls {
        if d.table != table {
            table = d.table;
            let _ = writeln!(out, "\n/* {table} table */");
        }
        let _ = writeln!(out, "#ifndef {}\n{}\n#endif", d.name, prototype(d)?);
    }
    out.push_str("\n#if defined(__cplusplus)\n}\n#endif\n");
    Ok(out)
}

fn main() -> ExitCode {
    let decls = tables();
    match std::env::args().nth(1).as_deref() {
        Some("--names") => {
            for d in &decls {
                println!("{}", d.name);
            }
            ExitCode::SUCCESS
        }
        None => match c_file(&decls) {
            Ok(c) => {
                print!("{c}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cuda-c-decls: {e}");
                ExitCode::FAILURE
            }
        },
        Some(a) => {
            eprintln!("cuda-c-decls: unknown argument {a} (usage: cuda-c-decls [--names])");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_types_map_back_to_c() {
        let t = |ty| c_type("e", ty).unwrap();
        assert_eq!(t("*mut *mut c_void"), "void * *");
        assert_eq!(t("* const c_void"), "const void *");
        assert_eq!(t("*mut *const c_char"), "const char * *");
        assert_eq!(t("*const *mut c_void"), "void * const *");
        assert_eq!(t("usize"), "size_t");
        assert_eq!(t("c_uint"), "unsigned int");
        assert_eq!(t("u8"), "unsigned char");
        assert_eq!(t("u16"), "unsigned short");
        assert_eq!(t("c_ulonglong"), "unsigned long long");
        assert_eq!(t("CUgraphExec"), "CUgraphExec");
        assert_eq!(t("*const CUDA_MEMCPY2D"), "const CUDA_MEMCPY2D *");
        assert_eq!(t("cudaMemcpyKind"), "enum cudaMemcpyKind");
        assert_eq!(
            t("*mut cudaPointerAttributes"),
            "struct cudaPointerAttributes *"
        );
        for bad in ["u32", "i64", "bool", "[u8; 4]", "Option<fn()>"] {
            let e = c_type("cuFoo", bad).unwrap_err();
            assert!(e.to_string().starts_with("cuFoo: type `"), "{e}");
        }
    }

    #[test]
    fn prototypes_read_like_the_headers() {
        let d = Decl {
            table: "driver",
            name: "cuMemAlloc_v2",
            params: vec![("dptr", "*mut CUdeviceptr"), ("size", "usize")],
            ret: Some("CUresult"),
        };
        assert_eq!(
            prototype(&d).unwrap(),
            "CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size);"
        );
        let v = Decl {
            table: "runtime",
            name: "cudaDeviceSynchronize",
            params: vec![],
            ret: Some("cudaError_t"),
        };
        assert_eq!(
            prototype(&v).unwrap(),
            "cudaError_t cudaDeviceSynchronize(void);"
        );
        let p = Decl {
            table: "runtime",
            name: "__cudaRegisterFatBinary",
            params: vec![("fat_cubin", "*mut c_void")],
            ret: Some("*mut *mut c_void"),
        };
        assert_eq!(
            prototype(&p).unwrap(),
            "void * *__cudaRegisterFatBinary(void *fat_cubin);"
        );
    }

    #[test]
    fn every_line_of_both_tables_is_declared_once_and_guarded() {
        let decls = tables();
        let n = cuda_api::CUDA_FNS.len() + cuda_api::runtime::CUDART_FNS.len();
        assert_eq!(decls.len(), n);
        let c = c_file(&decls).expect("every table type has a C spelling");
        assert!(c.starts_with("/* Generated by cuda-c-decls"));
        assert!(c.contains("#include <cuda.h>\n#include <cuda_runtime_api.h>\n"));
        for d in &decls {
            let guard = format!("#ifndef {}\n", d.name);
            assert_eq!(c.matches(&guard).count(), 1, "{}", d.name);
            let decl = format!(" {}(", d.name);
            let star = format!("*{}(", d.name);
            assert_eq!(
                c.matches(&decl).count() + c.matches(&star).count(),
                1,
                "{}",
                d.name
            );
        }
        assert!(c.contains(
            "cudaError_t cudaMemcpy(void *dst, const void *src, size_t size, enum cudaMemcpyKind kind);"
        ));
        assert!(c.contains("CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);"));
    }
}
