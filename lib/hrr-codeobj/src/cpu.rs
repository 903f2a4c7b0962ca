//! CPU code objects: an ELF shared object whose kernels are C functions, with
//! a `.hrr.kernels` section holding JSON kernel metadata shaped like AMDGPU's:
//!
//! ```json
//! {"kernels":[{"name":"saxpy","symbol":"saxpy","kernarg_segment_size":24,
//!   "args":[{"offset":0,"size":4,"value_kind":"by_value"},
//!           {"offset":8,"size":8,"value_kind":"global_buffer"}]}]}
//! ```
//!
//! The section may be NUL-terminated (a C string literal). `symbol` defaults to
//! `name`; `kernarg_segment_size` defaults to the end of the last argument.
//! Keys may also be written AMDGPU-style with a leading dot (`.name`).

use object::{Object, ObjectSection};
use serde_json::Value;

use crate::error::{CodeObjError, Result};
use crate::meta::{ArgKind, ArgMeta, KernelMeta};

/// Name of the metadata section.
pub const SECTION: &str = ".hrr.kernels";
const FMT: &str = ".hrr.kernels";

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

/// Kernel metadata of a CPU code object.
pub fn parse_metadata(elf: &[u8]) -> Result<Vec<KernelMeta>> {
    let sec = metadata_section(elf)?.ok_or_else(|| CodeObjError::NoMetadata {
        format: "CPU code object",
        what: format!("ELF has no {SECTION} section"),
    })?;
    parse_json(sec)
}

/// Parses the JSON text of a `.hrr.kernels` section (stops at the first NUL).
pub fn parse_json(text: &[u8]) -> Result<Vec<KernelMeta>> {
    let text = match text.iter().position(|&b| b == 0) {
        Some(n) => &text[..n],
        None => text,
    };
    let root: Value = serde_json::from_slice(text).map_err(|e| CodeObjError::Malformed {
        format: FMT,
        offset: json_error_offset(text, &e),
        what: format!("invalid JSON: {e}"),
    })?;
    let kernels = get(&root, "kernels")
        .ok_or_else(|| CodeObjError::field(FMT, "kernels", "missing"))?
        .as_array()
        .ok_or_else(|| CodeObjError::field(FMT, "kernels", "not an array"))?;
    kernels
        .iter()
        .enumerate()
        .map(|(i, k)| parse_kernel(k, &format!("kernels[{i}]")))
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
        Some(_) => Err(CodeObjError::field(FMT, format!("{path}.{key}"), "not a string")),
    }
}

fn get_u32(v: &Value, key: &str, path: &str) -> Result<Option<u32>> {
    match get(v, key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => {
            let n = n.as_u64().ok_or_else(|| {
                CodeObjError::field(FMT, format!("{path}.{key}"), format!("not a non-negative integer: {n}"))
            })?;
            u32::try_from(n)
                .map(Some)
                .map_err(|_| CodeObjError::field(FMT, format!("{path}.{key}"), format!("{n} does not fit in 32 bits")))
        }
    }
}

fn parse_kernel(k: &Value, path: &str) -> Result<KernelMeta> {
    if !k.is_object() {
        return Err(CodeObjError::field(FMT, path, "not an object"));
    }
    let name = get_str(k, "name", path)?.ok_or_else(|| CodeObjError::field(FMT, format!("{path}.name"), "missing"))?;
    let symbol = get_str(k, "symbol", path)?.unwrap_or_else(|| name.clone());
    let args_v = match get(k, "args") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => &a[..],
        Some(_) => return Err(CodeObjError::field(FMT, format!("{path}.args"), "not an array")),
    };
    let mut args = Vec::with_capacity(args_v.len());
    for (j, a) in args_v.iter().enumerate() {
        let ap = format!("{path}.args[{j}]");
        if !a.is_object() {
            return Err(CodeObjError::field(FMT, ap, "not an object"));
        }
        let req = |key: &str| -> Result<u32> {
            get_u32(a, key, &ap)?.ok_or_else(|| CodeObjError::field(FMT, format!("{ap}.{key}"), "missing"))
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
        None => args.iter().map(|a| a.offset.saturating_add(a.size)).max().unwrap_or(0),
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
