//! CPU code objects: an ELF shared object whose kernels are C functions, with
//! a `.hrr.kernels` section holding JSON kernel metadata shaped like AMDGPU's:
//!
//! ```json
//! {"kernels":[{"name":"saxpy","symbol":"saxpy","kernarg_segment_size":24,
//!   "args":[{"offset":0,"size":4,"value_kind":"by_value"},
//!           {"offset":8,"size":8,"value_kind":"global_buffer"}]}]}
//! ```
//!
//! The section may be NUL-terminated (a C string literal) and may hold several
//! NUL-separated documents: the linker concatenates the `.hrr.kernels`
//! sections of every object file (one `HRR_KERNEL_METADATA` block per
//! translation unit). `symbol` defaults to `name` (so does an empty symbol or
//! an AMDGPU-style `<name>.kd`: CPU code objects have no kernel descriptors);
//! `kernarg_segment_size` defaults to the end of the last argument. Keys may
//! also be written AMDGPU-style with a leading dot (`.name`), and the kernel
//! list may be called `amdhsa.kernels`.

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use serde_json::Value;

use crate::error::{CodeObjError, Result};
use crate::meta::{ArgKind, ArgMeta, KernelMeta};

/// Name of the metadata section.
pub const SECTION: &str = ".hrr.kernels";
const FMT: &str = ".hrr.kernels";

/// `e_machine` of the CPU code objects this host can run (x86-64 or AArch64
/// builds); `None` on other hosts.
pub fn host_machine() -> Option<u16> {
    if cfg!(target_arch = "x86_64") {
        Some(crate::elf::EM_X86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(crate::elf::EM_AARCH64)
    } else {
        None
    }
}

/// True when `elf` is a 64-bit ELF for [`host_machine`]: a CPU code object
/// this host can load.
pub fn runs_on_host(elf: &[u8]) -> bool {
    crate::elf::is_elf(elf)
        && elf.get(4) == Some(&2)
        && host_machine().is_some_and(|m| crate::elf::machine(elf) == Some(m))
}

/// The raw `.hrr.kernels` section of an ELF (32 or 64 bit), if it has one.
pub fn metadata_section(elf: &[u8]) -> Result<Option<&[u8]>> {
    let file = object::File::parse(elf).map_err(crate::elf::elf_err)?;
    let Some(sec) = file.section_by_name(SECTION) else {
        return Ok(None);
    };
    sec.data().map(Some).map_err(|e| CodeObjError::Elf {
        what: format!("section {SECTION}: {e}"),
    })
}

/// The module globals of a CPU code object: its exported, defined data
/// symbols (the dynamic symbol table's objects), by name with their sizes.
/// A kernel's `__device__` variables are these on the CPU.
pub fn data_symbols(elf: &[u8]) -> Result<Vec<(String, u64)>> {
    let file = object::File::parse(elf).map_err(crate::elf::elf_err)?;
    let mut out = Vec::new();
    for sym in file.dynamic_symbols() {
        if sym.kind() != SymbolKind::Data || sym.is_undefined() || !sym.is_global() {
            continue;
        }
        if let Ok(name) = sym.name()
            && !name.is_empty()
        {
            out.push((name.to_string(), sym.size()));
        }
    }
    Ok(out)
}

/// Kernel metadata of a CPU code object.
pub fn parse_metadata(elf: &[u8]) -> Result<Vec<KernelMeta>> {
    let sec = metadata_section(elf)?.ok_or_else(|| CodeObjError::NoMetadata {
        format: "CPU code object",
        what: format!("ELF has no {SECTION} section"),
    })?;
    parse_json(sec)
}

/// Parses the text of a `.hrr.kernels` section: one or more JSON documents,
/// each optionally NUL-terminated, with NUL padding or whitespace between
/// them. Returns the kernels of every document, in order. Errors name the
/// byte offset in `text`; field paths of the second and later documents start
/// with `doc[N].`.
pub fn parse_json(text: &[u8]) -> Result<Vec<KernelMeta>> {
    let mut out = Vec::new();
    let mut docs = 0usize;
    let mut start = 0usize;
    for chunk in text.split(|&b| b == 0) {
        let base = start;
        start += chunk.len() + 1;
        if chunk.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let prefix = if docs == 0 {
            String::new()
        } else {
            format!("doc[{docs}].")
        };
        out.extend(parse_document(chunk, base as u64, &prefix)?);
        docs += 1;
    }
    if docs == 0 {
        return Err(CodeObjError::malformed(
            FMT,
            0,
            "no JSON document (the section is empty)",
        ));
    }
    Ok(out)
}

/// One JSON document starting at byte `base` of the section.
fn parse_document(text: &[u8], base: u64, prefix: &str) -> Result<Vec<KernelMeta>> {
    let root: Value = serde_json::from_slice(text).map_err(|e| CodeObjError::Malformed {
        format: FMT,
        offset: base + json_error_offset(text, &e),
        what: format!("invalid JSON: {e}"),
    })?;
    let key = if get(&root, "kernels").is_none() && get(&root, "amdhsa.kernels").is_some() {
        "amdhsa.kernels"
    } else {
        "kernels"
    };
    let kernels = get(&root, key)
        .ok_or_else(|| CodeObjError::field(FMT, format!("{prefix}kernels"), "missing"))?
        .as_array()
        .ok_or_else(|| CodeObjError::field(FMT, format!("{prefix}{key}"), "not an array"))?;
    kernels
        .iter()
        .enumerate()
        .map(|(i, k)| parse_kernel(k, &format!("{prefix}{key}[{i}]")))
        .collect()
}

fn json_error_offset(text: &[u8], e: &serde_json::Error) -> u64 {
    // serde_json reports line/column; turn them into a byte offset.
    let (line, col) = (e.line(), e.column());
    if line == 0 {
        return 0;
    }
    let mut off = 0usize;
    for (n, l) in text.split(|&b| b == b'\n').enumerate() {
        if n + 1 == line {
            return (off + col.saturating_sub(1)) as u64;
        }
        off += l.len() + 1;
    }
    text.len() as u64
}

fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    let o = v.as_object()?;
    o.get(key).or_else(|| o.get(&format!(".{key}")))
}

fn get_str(v: &Value, key: &str, path: &str) -> Result<Option<String>> {
    match get(v, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(CodeObjError::field(
            FMT,
            format!("{path}.{key}"),
            "not a string",
        )),
    }
}

fn get_u32(v: &Value, key: &str, path: &str) -> Result<Option<u32>> {
    match get(v, key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => {
            let n = n.as_u64().ok_or_else(|| {
                CodeObjError::field(
                    FMT,
                    format!("{path}.{key}"),
                    format!("not a non-negative integer: {n}"),
                )
            })?;
            u32::try_from(n).map(Some).map_err(|_| {
                CodeObjError::field(
                    FMT,
                    format!("{path}.{key}"),
                    format!("{n} does not fit in 32 bits"),
                )
            })
        }
    }
}

fn parse_kernel(k: &Value, path: &str) -> Result<KernelMeta> {
    if !k.is_object() {
        return Err(CodeObjError::field(FMT, path, "not an object"));
    }
    let name = get_str(k, "name", path)?
        .ok_or_else(|| CodeObjError::field(FMT, format!("{path}.name"), "missing"))?;
    let symbol = match get_str(k, "symbol", path)? {
        Some(s) if !s.is_empty() && !s.ends_with(".kd") => s,
        _ => name.clone(),
    };
    let args_v = match get(k, "args") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => &a[..],
        Some(_) => {
            return Err(CodeObjError::field(
                FMT,
                format!("{path}.args"),
                "not an array",
            ));
        }
    };
    let mut args = Vec::with_capacity(args_v.len());
    for (j, a) in args_v.iter().enumerate() {
        let ap = format!("{path}.args[{j}]");
        if !a.is_object() {
            return Err(CodeObjError::field(FMT, ap, "not an object"));
        }
        let req = |key: &str| -> Result<u32> {
            get_u32(a, key, &ap)?
                .ok_or_else(|| CodeObjError::field(FMT, format!("{ap}.{key}"), "missing"))
        };
        let offset = req("offset")?;
        let size = req("size")?;
        let kind = get_str(a, "value_kind", &ap)?
            .ok_or_else(|| CodeObjError::field(FMT, format!("{ap}.value_kind"), "missing"))?;
        args.push(ArgMeta {
            offset,
            size,
            kind: ArgKind::from_value_kind(&kind),
            address_space: get_str(a, "address_space", &ap)?,
            name: get_str(a, "name", &ap)?,
        });
    }
    let kernarg_segment_size = match get_u32(k, "kernarg_segment_size", path)? {
        Some(n) => n,
        None => args
            .iter()
            .map(|a| a.offset.saturating_add(a.size))
            .max()
            .unwrap_or(0),
    };
    let km = KernelMeta {
        name,
        symbol,
        kernarg_segment_size,
        args,
    };
    km.validate(FMT, path)?;
    Ok(km)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_nul_separated_documents() {
        // What the linker makes of two objects' sections: each a NUL-terminated
        // C string, with alignment padding in between.
        let mut v = br#"{"kernels":[{"name":"saxpy","symbol":"saxpy","kernarg_segment_size":24,"args":[{"offset":0,"size":8,"value_kind":"global_buffer"},{"offset":8,"size":4,"value_kind":"by_value"}]}]}"#.to_vec();
        v.extend_from_slice(b"\0\0\0\n");
        v.extend_from_slice(br#"{"kernels":[{"name":"k2","args":[]}]}"#);
        v.push(0);
        let k = parse_json(&v).unwrap();
        assert_eq!(
            k.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            ["saxpy", "k2"]
        );
        assert_eq!(k[0].kernarg_segment_size, 24);
        assert_eq!(k[0].args[1].kind, ArgKind::ByValue);
        assert_eq!(k[1].kernarg_segment_size, 0);
        // An error in the second document names it, with its byte offset.
        let first = br#"{"kernels":[]}"#;
        let mut bad = first.to_vec();
        bad.push(0);
        bad.extend_from_slice(br#"{"kernels":[{"args":[]}]}"#);
        let e = parse_json(&bad).unwrap_err();
        assert!(e.to_string().contains("doc[1].kernels[0].name"), "{e}");
        let mut bad = first.to_vec();
        bad.push(0);
        bad.extend_from_slice(b"{nope");
        match parse_json(&bad).unwrap_err() {
            CodeObjError::Malformed { offset, .. } => {
                assert!(offset > first.len() as u64, "{offset}")
            }
            e => panic!("{e}"),
        }
        // Nothing but NULs and whitespace: no document at all.
        assert!(parse_json(b"\0 \n\0").is_err());
        assert!(parse_json(b"").is_err());
    }

    #[test]
    fn amdgpu_style_dotted_keys() {
        let j = br#"{"amdhsa.kernels":[{".name":"k2",".symbol":"k2.kd",".kernarg_segment_size":32,".args":[{".offset":0,".size":16,".value_kind":"by_value"},{".offset":16,".size":8,".value_kind":"hidden_global_offset_x",".name":"h"}]}]}"#;
        let k = parse_json(j).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].name, "k2");
        assert_eq!(
            k[0].symbol, "k2",
            "a .kd descriptor symbol means the C symbol `name`"
        );
        assert_eq!(k[0].kernarg_segment_size, 32);
        assert_eq!(k[0].host_args_size(), 16);
        assert!(k[0].args[1].is_hidden());
        assert_eq!(k[0].args[1].name.as_deref(), Some("h"));
        let k = parse_json(br#"{".kernels":[{"name":"a","symbol":""}]}"#).unwrap();
        assert_eq!(k[0].symbol, "a");
        let e = parse_json(br#"{"amdhsa.kernels":{}}"#).unwrap_err();
        assert!(e.to_string().contains("amdhsa.kernels"), "{e}");
        let e = parse_json(br#"{"kernels":[{"name":"x","args":[{"offset":4294967295,"size":2,"value_kind":"by_value"}]}]}"#);
        assert!(e.is_err());
    }
}
