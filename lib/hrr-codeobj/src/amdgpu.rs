//! AMDGPU code objects (HSA code object v3 and later): the `NT_AMDGPU_METADATA`
//! ELF note (type 32, owner `AMDGPU`) holds a MessagePack map with
//! `amdhsa.version`, `amdhsa.target` and `amdhsa.kernels[]`; each kernel has
//! `.name`, `.symbol`, `.kernarg_segment_size` and `.args[]` with `.offset`,
//! `.size`, `.value_kind`, `.address_space` and `.name`.

use rmpv::Value;

use crate::elf::{EM_AMDGPU, Elf64};
use crate::error::{CodeObjError, Result};
use crate::meta::{ArgKind, ArgMeta, KernelMeta};

pub use crate::elf::EM_AMDGPU as MACHINE;

/// Note type of the MessagePack metadata note.
pub const NT_AMDGPU_METADATA: u32 = 32;
/// Note owner of the MessagePack metadata note.
pub const NOTE_OWNER: &[u8] = b"AMDGPU";
/// Code object v2's YAML metadata note (owner `AMD`): not supported.
pub const NT_AMD_HSA_METADATA: u32 = 10;

const FMT: &str = "AMDGPU metadata";
/// Nesting limit for the MessagePack reader (real metadata nests 4 deep).
const MAX_DEPTH: usize = 32;

/// Metadata of one AMDGPU code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmdgpuMeta {
    /// `amdhsa.version` (major, minor): [1, 1] for code object v4, [1, 2] for v5.
    pub version: Option<(u64, u64)>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx90a:xnack-` (v4 and later).
    pub target: Option<String>,
    /// The kernels of `amdhsa.kernels`.
    pub kernels: Vec<KernelMeta>,
}

impl AmdgpuMeta {
    /// The processor and features part of `amdhsa.target` (`gfx90a:xnack-`).
    pub fn target_id(&self) -> Option<&str> {
        let t = self.target.as_deref()?;
        Some(t.rsplit_once("--").map_or(t, |(_, id)| id))
    }
}

/// The raw MessagePack descriptor of the `NT_AMDGPU_METADATA` note.
pub fn metadata_note(elf: &[u8]) -> Result<&[u8]> {
    let e = Elf64::parse(elf)?;
    if e.machine() != EM_AMDGPU {
        return Err(CodeObjError::Unsupported {
            format: FMT,
            what: format!("ELF machine {} (AMDGPU is {EM_AMDGPU})", e.machine()),
        });
    }
    let notes = e.notes()?;
    if let Some((_, _, desc)) = notes
        .iter()
        .find(|(name, ty, _)| *ty == NT_AMDGPU_METADATA && strip_nul(name) == NOTE_OWNER)
    {
        return Ok(desc);
    }
    if notes
        .iter()
        .any(|(name, ty, _)| *ty == NT_AMD_HSA_METADATA && strip_nul(name) == b"AMD")
    {
        return Err(CodeObjError::Unsupported {
            format: FMT,
            what:
                "code object v2 (YAML metadata note); rebuild with -mcode-object-version=4 or later"
                    .into(),
        });
    }
    Err(CodeObjError::NoMetadata {
        format: FMT,
        what: format!(
            "no NT_AMDGPU_METADATA note (type {NT_AMDGPU_METADATA}, owner \"AMDGPU\") among {} notes",
            notes.len()
        ),
    })
}

fn strip_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(n) => &b[..n],
        None => b,
    }
}

/// Kernel metadata of an AMDGPU code object (an ELF with `e_machine` 224).
pub fn parse_metadata(elf: &[u8]) -> Result<AmdgpuMeta> {
    parse_msgpack(metadata_note(elf)?)
}

/// Parses the MessagePack metadata map itself (the note descriptor).
pub fn parse_msgpack(bytes: &[u8]) -> Result<AmdgpuMeta> {
    let mut rd = bytes;
    // rmpv never preallocates from a declared length and bounds recursion,
    // so memory stays proportional to the input.
    let root = rmpv::decode::read_value_with_max_depth(&mut rd, MAX_DEPTH).map_err(|e| {
        CodeObjError::Malformed {
            format: FMT,
            offset: (bytes.len() - rd.len()) as u64,
            what: format!("invalid MessagePack: {e}"),
        }
    })?;
    let map = as_map(&root, "(root)")?;
    let version = match lookup(map, "amdhsa.version") {
        None => None,
        Some(v) => {
            let a = as_array(v, "amdhsa.version")?;
            match a {
                [maj, min, ..] => Some((
                    as_u64(maj, "amdhsa.version[0]")?,
                    as_u64(min, "amdhsa.version[1]")?,
                )),
                _ => {
                    return Err(CodeObjError::field(
                        FMT,
                        "amdhsa.version",
                        "needs [major, minor]",
                    ));
                }
            }
        }
    };
    let target = lookup(map, "amdhsa.target")
        .map(|v| as_str(v, "amdhsa.target"))
        .transpose()?;
    let kernels_v = lookup(map, "amdhsa.kernels")
        .ok_or_else(|| CodeObjError::field(FMT, "amdhsa.kernels", "missing"))?;
    let kernels = as_array(kernels_v, "amdhsa.kernels")?
        .iter()
        .enumerate()
        .map(|(i, k)| parse_kernel(k, &format!("amdhsa.kernels[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    Ok(AmdgpuMeta {
        version,
        target,
        kernels,
    })
}

fn parse_kernel(k: &Value, path: &str) -> Result<KernelMeta> {
    let m = as_map(k, path)?;
    let req = |key: &str| {
        lookup(m, key).ok_or_else(|| CodeObjError::field(FMT, format!("{path}{key}"), "missing"))
    };
    let name = as_str(req(".name")?, &format!("{path}.name"))?;
    let symbol = as_str(req(".symbol")?, &format!("{path}.symbol"))?;
    let kernarg_segment_size = as_u32(
        req(".kernarg_segment_size")?,
        &format!("{path}.kernarg_segment_size"),
    )?;
    let args = match lookup(m, ".args") {
        None => Vec::new(),
        Some(a) => as_array(a, &format!("{path}.args"))?
            .iter()
            .enumerate()
            .map(|(j, a)| parse_arg(a, &format!("{path}.args[{j}]")))
            .collect::<Result<Vec<_>>>()?,
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

fn parse_arg(a: &Value, path: &str) -> Result<ArgMeta> {
    let m = as_map(a, path)?;
    let req = |key: &str| {
        lookup(m, key).ok_or_else(|| CodeObjError::field(FMT, format!("{path}{key}"), "missing"))
    };
    let opt_str = |key: &str| {
        lookup(m, key)
            .map(|v| as_str(v, &format!("{path}{key}")))
            .transpose()
    };
    Ok(ArgMeta {
        offset: as_u32(req(".offset")?, &format!("{path}.offset"))?,
        size: as_u32(req(".size")?, &format!("{path}.size"))?,
        kind: ArgKind::from_value_kind(&as_str(
            req(".value_kind")?,
            &format!("{path}.value_kind"),
        )?),
        address_space: opt_str(".address_space")?,
        name: opt_str(".name")?,
    })
}

fn lookup<'v>(m: &'v [(Value, Value)], key: &str) -> Option<&'v Value> {
    m.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn as_map<'v>(v: &'v Value, path: &str) -> Result<&'v [(Value, Value)]> {
    v.as_map().map(Vec::as_slice).ok_or_else(|| {
        CodeObjError::field(FMT, path, format!("expected a map, found {}", type_name(v)))
    })
}

fn as_array<'v>(v: &'v Value, path: &str) -> Result<&'v [Value]> {
    v.as_array().map(Vec::as_slice).ok_or_else(|| {
        CodeObjError::field(
            FMT,
            path,
            format!("expected an array, found {}", type_name(v)),
        )
    })
}

fn as_str(v: &Value, path: &str) -> Result<String> {
    v.as_str().map(str::to_string).ok_or_else(|| {
        CodeObjError::field(
            FMT,
            path,
            format!("expected a UTF-8 string, found {}", type_name(v)),
        )
    })
}

fn as_u64(v: &Value, path: &str) -> Result<u64> {
    v.as_u64().ok_or_else(|| {
        CodeObjError::field(
            FMT,
            path,
            format!("expected a non-negative integer, found {}", type_name(v)),
        )
    })
}

fn as_u32(v: &Value, path: &str) -> Result<u32> {
    let n = as_u64(v, path)?;
    u32::try_from(n)
        .map_err(|_| CodeObjError::field(FMT, path, format!("{n} does not fit in 32 bits")))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "a boolean",
        Value::Integer(i) if i.as_u64().is_some() => "an integer",
        Value::Integer(_) => "a negative integer",
        Value::F32(_) | Value::F64(_) => "a float",
        Value::String(_) => "a string",
        Value::Binary(_) => "binary",
        Value::Array(_) => "an array",
        Value::Map(_) => "a map",
        Value::Ext(..) => "an extension value",
    }
}
