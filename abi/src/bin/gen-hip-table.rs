//! Generates `lib/api/hip/src/table.rs`, the HIP signature table (see the
//! `api-table` crate for its shape), on stdout. Run it through
//! `scripts/gen-hip-signatures.sh`, which formats the output and writes (or,
//! with `--check`, compares) the checked-in file.
//!
//! Entries, in this order:
//! 1. every function bindgen found in Debian's `hip/hip_runtime_api.h`
//!    (`$OUT_DIR/debian_hip.rs`, see build.rs) whose name starts with `hip` or
//!    `__hip` and that ROCm's `libamdhip64.so.5` exports (readelf; versioned
//!    exports count, their version stripped);
//! 2. every function declared in the modules `compiler`, `hip_ext`,
//!    `hip_runtime_cxx` and `rocm6` of `abi/src/reference.rs`: entry points
//!    no C header declares (the compiler ABI, C++-only declarations whose
//!    symbol is the mangled name, ROCm 6 additions the interposer answers).
//!
//! Usage: `gen-hip-table [LIBAMDHIP64]` (default
//! `/usr/lib/x86_64-linux-gnu/libamdhip64.so.5`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::{Command, ExitCode};

use syn::{ForeignItem, Item, ReturnType, Type};

const DEBIAN_HIP: &str = include_str!(concat!(env!("OUT_DIR"), "/debian_hip.rs"));
const REFERENCE: &str = include_str!("../reference.rs");
const DEFAULT_LIB: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
/// The modules of reference.rs that declare table entries, and what each holds.
const REFERENCE_GROUPS: &[(&str, &str)] = &[
    (
        "compiler",
        "the compiler ABI: what clang's HIP host code calls (ROCm's hip_platform.cpp)",
    ),
    (
        "hip_ext",
        "hip/hip_ext.h: C++ declarations (the symbol is the mangled name) and the C name our libraries also export",
    ),
    (
        "hip_runtime_cxx",
        "hip/hip_runtime_api.h declarations outside `extern \"C\"` (the symbol is the mangled name)",
    ),
    (
        "rocm6",
        "ROCm 6 additions absent from Debian's 5.2 headers or exports",
    ),
];

struct Sig {
    name: String,
    params: Vec<(String, String)>,
    ret: Option<String>,
}

fn main() -> ExitCode {
    let lib = std::env::args()
        .nth(1)
        .unwrap_or_else(|| DEFAULT_LIB.into());
    match run(&lib) {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-hip-table: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(lib: &str) -> Result<String, String> {
    let exported = exports(lib)?;
    let header = syn::parse_file(DEBIAN_HIP).map_err(|e| format!("debian_hip.rs: {e}"))?;
    let mut declared = Vec::new();
    collect(&header.items, &mut declared)?;
    let is_hip = |n: &str| n.starts_with("hip") || n.starts_with("__hip");
    let mut left_out = Vec::new();
    let mut api = Vec::new();
    for s in declared {
        if !is_hip(&s.name) {
            continue;
        }
        if exported.contains(&s.name) {
            api.push(s);
        } else {
            left_out.push(s.name);
        }
    }
    let mut groups = vec![(
        "hip_runtime_api",
        "hip/hip_runtime_api.h, bindgen of Debian's header, the functions libamdhip64.so.5 exports",
        api,
    )];
    let reference = syn::parse_file(REFERENCE).map_err(|e| format!("reference.rs: {e}"))?;
    for (module, what) in REFERENCE_GROUPS {
        let items = reference
            .items
            .iter()
            .find_map(|i| match i {
                Item::Mod(m) if m.ident == module => m.content.as_ref().map(|(_, c)| c),
                _ => None,
            })
            .ok_or_else(|| format!("reference.rs has no module {module}"))?;
        let mut sigs = Vec::new();
        collect(items, &mut sigs)?;
        groups.push((module, what, sigs));
    }
    let mut seen = BTreeSet::new();
    for (_, _, sigs) in &groups {
        for s in sigs {
            if !seen.insert(s.name.clone()) {
                return Err(format!("{} is declared twice", s.name));
            }
        }
    }
    // A function the header declares and reference.rs adds is not left out.
    left_out.retain(|n| !seen.contains(n));
    Ok(render(lib, &groups, &left_out))
}

/// The defined function symbols of `lib`, without their version suffix.
fn exports(lib: &str) -> Result<BTreeSet<String>, String> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W", lib])
        .output()
        .map_err(|e| format!("readelf: {e} (install binutils)"))?;
    if !out.status.success() {
        return Err(format!(
            "readelf --dyn-syms {lib}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 8 && f[3] == "FUNC" && f[6] != "UND")
                .then(|| f[7].split('@').next().unwrap_or("").to_string())
        })
        .collect();
    if names.is_empty() {
        return Err(format!("{lib} exports no function"));
    }
    Ok(names)
}

/// Every function of every `extern "C"` block in `items`.
fn collect(items: &[Item], out: &mut Vec<Sig>) -> Result<(), String> {
    for item in items {
        let Item::ForeignMod(m) = item else { continue };
        for f in &m.items {
            let ForeignItem::Fn(f) = f else { continue };
            let name = f.sig.ident.to_string();
            if f.sig.variadic.is_some() {
                return Err(format!("{name} is variadic"));
            }
            let mut params = Vec::new();
            for input in &f.sig.inputs {
                let syn::FnArg::Typed(pt) = input else {
                    return Err(format!("{name}: a receiver in a foreign function"));
                };
                let syn::Pat::Ident(id) = &*pt.pat else {
                    return Err(format!("{name}: a parameter without a name"));
                };
                params.push((id.ident.to_string(), ty(&pt.ty)?));
            }
            let ret = match &f.sig.output {
                ReturnType::Default => None,
                ReturnType::Type(_, t) => Some(ty(t)?),
            };
            out.push(Sig { name, params, ret });
        }
    }
    Ok(())
}

/// A type as the table writes it: paths by their last segment (the C name,
/// which `hip_api::types` defines), pointers and callbacks spelled out.
fn ty(t: &Type) -> Result<String, String> {
    Ok(match t {
        Type::Ptr(p) => format!(
            "*{} {}",
            if p.mutability.is_some() {
                "mut"
            } else {
                "const"
            },
            ty(&p.elem)?
        ),
        Type::Path(p) if p.qself.is_none() => {
            let seg = p.path.segments.last().ok_or("an empty path")?;
            let mut s = seg.ident.to_string();
            if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
                let mut args = Vec::new();
                for a in &a.args {
                    let syn::GenericArgument::Type(t) = a else {
                        return Err(format!("{s}: a generic argument that is not a type"));
                    };
                    args.push(ty(t)?);
                }
                write!(s, "<{}>", args.join(", ")).unwrap();
            }
            s
        }
        Type::BareFn(f) => {
            let mut args = Vec::new();
            for a in &f.inputs {
                args.push(ty(&a.ty)?);
            }
            let ret = match &f.output {
                ReturnType::Default => String::new(),
                ReturnType::Type(_, t) => format!(" -> {}", ty(t)?),
            };
            format!(
                "{}extern \"C\" fn({}){ret}",
                if f.unsafety.is_some() { "unsafe " } else { "" },
                args.join(", ")
            )
        }
        Type::Tuple(t) if t.elems.is_empty() => "()".into(),
        Type::Never(_) => "!".into(),
        Type::Paren(p) => ty(&p.elem)?,
        other => return Err(format!("unsupported type {}", quote_ty(other))),
    })
}

fn quote_ty(t: &Type) -> String {
    format!("{t:?}").chars().take(120).collect()
}

fn render(lib: &str, groups: &[(&str, &str, Vec<Sig>)], left_out: &[String]) -> String {
    let total: usize = groups.iter().map(|g| g.2.len()).sum();
    let mut s = String::new();
    s += "// @generated by scripts/gen-hip-signatures.sh (abi/src/bin/gen-hip-table.rs);\n";
    s += "// do not edit: change the inputs and regenerate with\n";
    s += "//     bash scripts/gen-hip-signatures.sh\n";
    s += "// (`--check` compares instead of writing; scripts/abi-check.sh runs it).\n";
    s += "// Inputs: bindgen of Debian's /usr/include/hip/hip_runtime_api.h (HIP 5.2.3,\n";
    let _ = writeln!(
        s,
        "// abi/build.rs), the exports of {lib},\n// and abi/src/reference.rs."
    );
    let _ = writeln!(s, "// {total} entry points.");
    if !left_out.is_empty() {
        s += "//\n// Declared by hip_runtime_api.h but not exported by libamdhip64.so.5 (left\n";
        s += "// out: nothing can link them):\n";
        for chunk in left_out.chunks(3) {
            let _ = writeln!(s, "//   {}", chunk.join(", "));
        }
    }
    s += "\n/// The HIP table's lookup: `hip_fn!(NAME, CALLBACK, [EXTRA…])` expands to\n";
    s += "/// `CALLBACK! { EXTRA… NAME(PARAM: TYPE, …) -> RET }` (no `->` for `void`).\n";
    s += "/// Type names resolve where the callback expands: `use hip_api::types::*;`.\n";
    s += "#[macro_export]\nmacro_rules! hip_fn {\n";
    for (module, what, sigs) in groups {
        let _ = writeln!(s, "    // ---- {module}: {what}");
        for sig in sigs {
            let params: Vec<String> = sig
                .params
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect();
            let ret = sig
                .ret
                .as_ref()
                .map(|r| format!(" -> {r}"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    ({name}, $cb:path, [$($x:tt)*]) => {{ $cb! {{ $($x)* {name}({}){ret} }} }};",
                params.join(", "),
                name = sig.name
            );
        }
    }
    s += "}\n\n";
    s += "/// Every entry point's name, in table order: `hip_fns!(CALLBACK, [EXTRA…])`\n";
    s += "/// expands to `CALLBACK! { EXTRA… hipInit hipDriverGetVersion … }`.\n";
    s += "#[macro_export]\nmacro_rules! hip_fns {\n    ($cb:path, [$($x:tt)*]) => {\n        $cb! {\n            $($x)*\n";
    for (_, _, sigs) in groups {
        for sig in sigs {
            let _ = writeln!(s, "            {}", sig.name);
        }
    }
    s += "        }\n    };\n}\n\n";
    s += "/// The names grouped by where their declaration comes from (what the ABI\n";
    s += "/// checks compare each with): `hip_fn_sources!(CALLBACK, [EXTRA…])` expands\n";
    s += "/// to `CALLBACK! { EXTRA… [hip_runtime_api: …] [compiler: …] … }`.\n";
    s += "#[macro_export]\nmacro_rules! hip_fn_sources {\n    ($cb:path, [$($x:tt)*]) => {\n        $cb! {\n            $($x)*\n";
    for (module, _, sigs) in groups {
        let _ = writeln!(s, "            [{module}:");
        for sig in sigs {
            let _ = writeln!(s, "                {}", sig.name);
        }
        s += "            ]\n";
    }
    s += "        }\n    };\n}\n";
    s
}
