//! Code-object parsing for hrr, in pure safe Rust.
//!
//! * [`cpu`]: CPU code objects (ELF `.so` + `.hrr.kernels` JSON metadata)
//! * [`amdgpu`]: AMDGPU code objects (`NT_AMDGPU_METADATA` MessagePack note)
//! * [`hipf`]: the `HIPF` wrapper `__hipRegisterFatBinary` receives
//! * [`bundle`]: clang offload bundles, plain and compressed (`CCOB`)
//! * [`cuda`]: CUDA fat binaries, cubin `.nv.info` and PTX parameter layouts
//!
//! [`kernels`] dispatches on the image; [`image_extent`] and
//! [`read_image_extent`] size an image known only by its start. Every parser bounds every count and
//! offset by the input it was given: hostile input gives a [`CodeObjError`],
//! never a panic or an allocation sized by an untrusted field.

#![forbid(unsafe_code)]

pub mod amdgpu;
pub mod bundle;
pub mod cpu;
pub mod cuda;
pub mod elf;
mod error;
mod extent;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod hipf;
mod meta;
mod read;

pub use error::{CodeObjError, Result};
pub use extent::{MAX_BUNDLE_ENTRIES, MAX_IMAGE_SIZE, image_extent, read_image_extent};
pub use meta::{ArgKind, ArgMeta, KernelMeta, MAX_KERNARG_SEGMENT_SIZE};

/// What an image is, from its first bytes (and ELF header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// An ELF with this `e_machine` (224 AMDGPU, 190 CUDA, 62 x86-64, ...).
    Elf {
        /// `e_machine`.
        machine: u16,
    },
    /// `__CLANG_OFFLOAD_BUNDLE__`.
    Bundle,
    /// `CCOB`.
    CompressedBundle,
    /// A CUDA fat binary (0xBA55ED50).
    CudaFatbin,
    /// A HIPF wrapper struct (not a code object: it points at one).
    HipfWrapper,
    /// A CUDA fat binary wrapper struct (points at a fat binary).
    CudaWrapper,
    /// None of these.
    Unknown,
}

/// Identifies an image from its magic.
pub fn identify(image: &[u8]) -> ImageKind {
    if elf::is_elf(image) {
        ImageKind::Elf {
            machine: elf::machine(image).unwrap_or(0),
        }
    } else if bundle::is_bundle(image) {
        ImageKind::Bundle
    } else if bundle::is_compressed(image) {
        ImageKind::CompressedBundle
    } else if cuda::is_fatbin(image) {
        ImageKind::CudaFatbin
    } else if image.starts_with(&hipf::MAGIC.to_le_bytes()) {
        ImageKind::HipfWrapper
    } else if image.starts_with(&cuda::WRAPPER_MAGIC.to_le_bytes()) {
        ImageKind::CudaWrapper
    } else {
        ImageKind::Unknown
    }
}

/// Kernel metadata of one code object:
///
/// * ELF with a `.hrr.kernels` section: [`cpu::parse_metadata`]
/// * ELF with `e_machine` 224 (AMDGPU): [`amdgpu::parse_metadata`]
/// * ELF with `e_machine` 190 (cubin): [`cuda::cubin_params`] (all `by_value`)
/// * CUDA fat binary: [`cuda::kernels`]
/// * offload bundle / `CCOB`: an error listing its targets — pick one with
///   [`bundle::select`] first.
pub fn kernels(image: &[u8]) -> Result<Vec<KernelMeta>> {
    match identify(image) {
        ImageKind::Elf { machine } => {
            if cpu::metadata_section(image)?.is_some() {
                return cpu::parse_metadata(image);
            }
            match machine {
                elf::EM_AMDGPU => Ok(amdgpu::parse_metadata(image)?.kernels),
                elf::EM_CUDA => Ok(cuda::cubin_params(image)?
                    .iter()
                    .map(cuda::CubinKernel::to_kernel_meta)
                    .collect()),
                m => Err(CodeObjError::NoMetadata {
                    format: "ELF",
                    what: format!(
                        "machine {m}: neither a {} section nor an AMDGPU (224) or CUDA (190) code object",
                        cpu::SECTION
                    ),
                }),
            }
        }
        ImageKind::Bundle | ImageKind::CompressedBundle => Err(CodeObjError::NeedsSelect {
            format: if image.starts_with(bundle::CCOB_MAGIC) {
                "compressed offload bundle"
            } else {
                "offload bundle"
            },
            hint: "bundle::select(image, device_target)",
            targets: bundle::targets(image)?,
        }),
        ImageKind::CudaFatbin => cuda::kernels(image),
        ImageKind::HipfWrapper | ImageKind::CudaWrapper => Err(CodeObjError::Unsupported {
            format: "code object",
            what: "fat-binary wrapper struct: it holds a pointer; read the bytes it points at (hipf::parse / cuda::parse_wrapper, then bundle::extent / cuda::extent)".into(),
        }),
        ImageKind::Unknown => Err(CodeObjError::Unrecognised {
            magic: error::hex_prefix(image, 8),
        }),
    }
}

/// Every code object in an image with its kernels, for listings such as
/// `hrr-play --info`: (target, kernels) per code object.
///
/// * bundle / `CCOB`: one item per non-empty entry, target = the entry id
/// * CUDA fat binary: one item per entry, target `sm_NN` (cubin) or
///   `compute_NN` (PTX)
/// * ELF: one item; target = `amdhsa.target` (AMDGPU), `cpu` (CPU code
///   object) or `sm_NN` (cubin)
pub fn describe(image: &[u8]) -> Result<Vec<(String, Vec<KernelMeta>)>> {
    match identify(image) {
        ImageKind::Bundle | ImageKind::CompressedBundle => {
            let owned;
            let data: &[u8] = if bundle::is_compressed(image) {
                owned = bundle::decompress(image)?;
                &owned
            } else {
                image
            };
            let b = bundle::parse(data)?;
            let mut out = Vec::new();
            for e in b.entries.iter().filter(|e| e.size > 0) {
                out.push((e.id.clone(), kernels(e.data(data)?)?));
            }
            Ok(out)
        }
        ImageKind::CudaFatbin => {
            let mut out = Vec::new();
            for e in cuda::entries(image)? {
                let payload = cuda::payload(image, &e)?;
                match e.kind {
                    cuda::FatbinKind::Elf => out.push((
                        format!("sm_{}", e.sm_arch),
                        cuda::cubin_params(&payload)?
                            .iter()
                            .map(cuda::CubinKernel::to_kernel_meta)
                            .collect(),
                    )),
                    cuda::FatbinKind::Ptx => {
                        let text = String::from_utf8_lossy(&payload);
                        out.push((
                            format!("compute_{}", e.sm_arch),
                            cuda::ptx_params(text.trim_end_matches('\0'))?
                                .iter()
                                .map(cuda::PtxKernel::to_kernel_meta)
                                .collect(),
                        ))
                    }
                    cuda::FatbinKind::Other(_) => {}
                }
            }
            Ok(out)
        }
        ImageKind::Elf { machine } => {
            let target = if cpu::metadata_section(image)?.is_some() {
                "cpu".to_string()
            } else if machine == elf::EM_AMDGPU {
                let m = amdgpu::parse_metadata(image)?;
                return Ok(vec![(
                    m.target
                        .clone()
                        .unwrap_or_else(|| "amdgcn-amd-amdhsa".into()),
                    m.kernels,
                )]);
            } else if machine == elf::EM_CUDA {
                // The SM is in e_flags: bits 8..15 in CUDA 12/13 cubins
                // (0x06005a04 for sm_90, checked on nvcc 13.0 output), the low
                // byte in older ones (0x005a005a).
                let f = elf::Elf64::parse(image)?.flags();
                let sm = if f & 0xff < 0x10 {
                    (f >> 8) & 0xff
                } else {
                    f & 0xff
                };
                format!("sm_{sm}")
            } else {
                format!("elf-machine-{machine}")
            };
            Ok(vec![(target, kernels(image)?)])
        }
        _ => kernels(image).map(|k| vec![(String::new(), k)]),
    }
}
