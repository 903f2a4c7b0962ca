//! Kernel-argument metadata shared by every code-object flavour.

use crate::error::{CodeObjError, Result};

/// Largest kernarg segment this crate accepts (16 MiB). Real kernels stay far
/// below it (CUDA: 32 KiB of parameters; AMD: a few KiB); a hostile image
/// cannot make a consumer allocate more than this per launch.
pub const MAX_KERNARG_SEGMENT_SIZE: u32 = 16 << 20;

/// What an argument is, from AMDGPU's `.value_kind` vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// `global_buffer`: a device pointer.
    GlobalBuffer,
    /// `by_value`: scalars and structs copied into the kernarg segment.
    ByValue,
    /// `hidden_*` (the full value kind, e.g. `hidden_global_offset_x`):
    /// filled in by the runtime, not passed by the application.
    Hidden(String),
    /// Any other kind (`dynamic_shared_pointer`, `image`, `sampler`, `pipe`,
    /// `queue`, ...): an application argument that is not a plain pointer.
    Other(String),
}

impl ArgKind {
    /// Maps an AMDGPU `.value_kind` string.
    pub fn from_value_kind(kind: &str) -> ArgKind {
        match kind {
            "global_buffer" => ArgKind::GlobalBuffer,
            "by_value" => ArgKind::ByValue,
            k if k.starts_with("hidden_") => ArgKind::Hidden(k.to_string()),
            k => ArgKind::Other(k.to_string()),
        }
    }

    /// The `.value_kind` string this kind came from.
    pub fn as_str(&self) -> &str {
        match self {
            ArgKind::GlobalBuffer => "global_buffer",
            ArgKind::ByValue => "by_value",
            ArgKind::Hidden(s) | ArgKind::Other(s) => s,
        }
    }

    /// Whether the runtime fills the argument (`hidden_*`).
    pub fn is_hidden(&self) -> bool {
        matches!(self, ArgKind::Hidden(_))
    }

    /// Whether it is a device pointer (`global_buffer`).
    pub fn is_pointer(&self) -> bool {
        matches!(self, ArgKind::GlobalBuffer)
    }
}

impl std::fmt::Display for ArgKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One kernel argument: where it sits in the kernarg segment and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgMeta {
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// What the argument is.
    pub kind: ArgKind,
    /// `.address_space` (`global`, `constant`, `generic`, ...) for pointers.
    pub address_space: Option<String>,
    /// Source-level name, when the compiler kept it.
    pub name: Option<String>,
}

impl ArgMeta {
    /// `offset + size` (cannot overflow: checked at parse time).
    pub fn end(&self) -> u32 {
        self.offset.saturating_add(self.size)
    }

    /// Whether the runtime fills the argument.
    pub fn is_hidden(&self) -> bool {
        self.kind.is_hidden()
    }

    /// Whether it is a device pointer.
    pub fn is_pointer(&self) -> bool {
        self.kind.is_pointer()
    }
}

/// One kernel: its names and argument layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelMeta {
    /// `.name` (for HIP: the mangled C++ name).
    pub name: String,
    /// `.symbol` (AMDGPU: `<name>.kd`, the kernel descriptor; CPU: the C symbol).
    pub symbol: String,
    /// Total kernarg segment size, hidden arguments included.
    pub kernarg_segment_size: u32,
    /// Arguments in declaration order (hidden ones included, usually last).
    pub args: Vec<ArgMeta>,
}

impl KernelMeta {
    /// The arguments the application passes (not `hidden_*`), in order:
    /// the i-th item is `kernelParams[i]`.
    pub fn host_args(&self) -> impl Iterator<Item = &ArgMeta> + '_ {
        self.args.iter().filter(|a| !a.is_hidden())
    }

    /// Number of host arguments.
    pub fn host_arg_count(&self) -> usize {
        self.host_args().count()
    }

    /// Kernarg byte offsets of the device-pointer (`global_buffer`) host arguments.
    pub fn pointer_offsets(&self) -> Vec<u32> {
        self.host_args()
            .filter(|a| a.is_pointer())
            .map(|a| a.offset)
            .collect()
    }

    /// End of the last host argument: the size of the packed buffer the
    /// application's arguments occupy (hidden arguments excluded).
    pub fn host_args_size(&self) -> u32 {
        self.host_args().map(ArgMeta::end).max().unwrap_or(0)
    }

    /// Rebuilds the packed kernarg buffer (host part, `host_args_size()` bytes)
    /// from `kernelParams`-style argument values. `params[i]` must be exactly
    /// as long as host argument `i`.
    pub fn pack_host_args(&self, params: &[&[u8]]) -> Result<Vec<u8>> {
        let n = self.host_arg_count();
        if params.len() != n {
            return Err(CodeObjError::field(
                "kernel arguments",
                format!("{}.args", self.name),
                format!("kernel takes {n} host arguments, {} given", params.len()),
            ));
        }
        let mut buf = vec![0u8; self.host_args_size() as usize];
        for (i, (arg, val)) in self.host_args().zip(params).enumerate() {
            if val.len() != arg.size as usize {
                return Err(CodeObjError::field(
                    "kernel arguments",
                    format!("{}.args[{i}]", self.name),
                    format!("argument is {} bytes, value has {}", arg.size, val.len()),
                ));
            }
            let (o, e) = (arg.offset as usize, arg.end() as usize);
            buf[o..e].copy_from_slice(val);
        }
        Ok(buf)
    }

    /// Checks the invariants every parser guarantees: no `offset + size`
    /// overflow, every argument inside the kernarg segment, and the segment
    /// no larger than [`MAX_KERNARG_SEGMENT_SIZE`]. `format` and `path` name
    /// the source for the error.
    pub fn validate(&self, format: &'static str, path: &str) -> Result<()> {
        if self.kernarg_segment_size > MAX_KERNARG_SEGMENT_SIZE {
            return Err(CodeObjError::field(
                format,
                format!("{path}.kernarg_segment_size"),
                format!(
                    "{} exceeds the {} byte limit",
                    self.kernarg_segment_size, MAX_KERNARG_SEGMENT_SIZE
                ),
            ));
        }
        for (i, a) in self.args.iter().enumerate() {
            let end = a.offset.checked_add(a.size).ok_or_else(|| {
                CodeObjError::field(
                    format,
                    format!("{path}.args[{i}]"),
                    format!("offset {} + size {} overflows", a.offset, a.size),
                )
            })?;
            if end > self.kernarg_segment_size {
                return Err(CodeObjError::field(
                    format,
                    format!("{path}.args[{i}]"),
                    format!(
                        "argument [{}, {end}) lies outside the {} byte kernarg segment",
                        a.offset, self.kernarg_segment_size
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(offset: u32, size: u32, kind: &str) -> ArgMeta {
        ArgMeta {
            offset,
            size,
            kind: ArgKind::from_value_kind(kind),
            address_space: None,
            name: None,
        }
    }

    #[test]
    fn host_args_pointers_and_packing() {
        let k = KernelMeta {
            name: "k".into(),
            symbol: "k.kd".into(),
            kernarg_segment_size: 40,
            args: vec![
                arg(0, 4, "by_value"),
                arg(8, 8, "global_buffer"),
                arg(16, 4, "dynamic_shared_pointer"),
                arg(24, 8, "hidden_global_offset_x"),
                arg(32, 8, "hidden_none"),
            ],
        };
        assert_eq!(k.host_arg_count(), 3);
        assert_eq!(k.pointer_offsets(), [8]);
        assert_eq!(k.host_args_size(), 20);
        assert_eq!(
            k.args[2].kind,
            ArgKind::Other("dynamic_shared_pointer".into())
        );
        assert_eq!(k.args[3].kind.to_string(), "hidden_global_offset_x");
        let p = k
            .pack_host_args(&[&[1, 2, 3, 4], &[9; 8], &[5; 4]])
            .unwrap();
        assert_eq!(
            p,
            [1, 2, 3, 4, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 5, 5, 5, 5]
        );
        assert!(k.pack_host_args(&[&[1, 2, 3, 4], &[9; 8]]).is_err());
        assert!(k.pack_host_args(&[&[1, 2, 3], &[9; 8], &[5; 4]]).is_err());
        k.validate("t", "k").unwrap();
        let mut bad = k.clone();
        bad.args.push(arg(u32::MAX, 2, "by_value"));
        assert!(
            bad.validate("t", "k")
                .unwrap_err()
                .to_string()
                .contains("overflows")
        );
    }
}
