//! `--backend auto|cpu|hip|cuda`, `--runtime`, `--target`: which runtime a
//! replay runs on, and opening it.

use std::path::PathBuf;

use clap::ValueEnum;
use hrr_backend_hip::{HipDevice, HipRuntime, RuntimeLocation};
use hrr_core::manifest::{Platform, VaArena};
use hrr_replay::device::Device;

/// Which runtime a replay runs on (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// From the archive's platform: cpu → cpu, amd → hip, nvidia → cuda.
    Auto,
    /// A HIP runtime: ROCm's libamdhip64.so, or --runtime / HRR_HIP_RUNTIME.
    Hip,
    /// hrr's CPU runtime, libhrr_hip_cpu.so next to this executable.
    Cpu,
    /// The CUDA driver (libcuda.so.1).
    Cuda,
}

/// The backend options, flattened into each tool's arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct BackendArgs {
    /// The runtime to replay on.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// HIP runtime library to load (overrides HRR_HIP_RUNTIME).
    #[arg(long)]
    pub runtime: Option<PathBuf>,
    /// Code-object target to pick from bundles (default: the device's).
    #[arg(long)]
    pub target: Option<String>,
}

/// The backend could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The HIP runtime could not be loaded.
    #[error("opening the HIP backend")]
    Hip(#[source] hrr_backend_hip::RuntimeError),
    /// The CUDA driver could not be opened.
    #[error("opening the CUDA backend")]
    Cuda(#[source] hrr_backend_cuda::CudaError),
}

impl BackendArgs {
    /// The backend `auto` stands for, given the archive's platform: a HIP
    /// runtime named by `--runtime` or `HRR_HIP_RUNTIME` wins.
    pub fn resolve(&self, platform: Platform) -> Backend {
        match self.backend {
            Backend::Auto
                if self.runtime.is_some() || std::env::var_os("HRR_HIP_RUNTIME").is_some() =>
            {
                Backend::Hip
            }
            Backend::Auto => match platform {
                Platform::Cpu => Backend::Cpu,
                Platform::Amd => Backend::Hip,
                Platform::Nvidia => Backend::Cuda,
            },
            b => b,
        }
    }

    /// Opens the backend chosen for an archive of `platform`. `arenas` are
    /// the capture's driver address arenas (`Manifest::va_arenas`; empty
    /// without placement): the CUDA driver's own are reserved at those
    /// bases where free (see `hrr-va-arenas`), so that its allocator hands
    /// the replay the recorded addresses.
    pub fn open(
        &self,
        platform: Platform,
        arenas: &[VaArena],
    ) -> Result<Box<dyn Device>, OpenError> {
        match self.resolve(platform) {
            backend @ (Backend::Cpu | Backend::Hip) => {
                let loc = if backend == Backend::Cpu {
                    RuntimeLocation::Cpu
                } else if let Some(p) = &self.runtime {
                    RuntimeLocation::Path(p.clone())
                } else if let Some(p) = std::env::var_os("HRR_HIP_RUNTIME") {
                    RuntimeLocation::Path(p.into())
                } else {
                    RuntimeLocation::Rocm
                };
                let rt = HipRuntime::load(&loc).map_err(OpenError::Hip)?;
                Ok(Box::new(HipDevice::new(rt, self.target.clone())))
            }
            Backend::Cuda => {
                // Before the driver starts: it reserves its arenas then.
                let plan: Vec<_> = arenas
                    .iter()
                    .map(|a| hrr_va_arenas::Arena {
                        base: a.base.0,
                        size: a.size,
                    })
                    .collect();
                hrr_va_arenas::steer(&plan);
                Ok(Box::new(
                    hrr_backend_cuda::CudaDevice::open(0).map_err(OpenError::Cuda)?,
                ))
            }
            Backend::Auto => unreachable!("resolve never returns Auto"),
        }
    }
}

/// What steering the driver's address arenas did, for a note after the
/// replay: `None` when no arena was planned or reserved.
pub fn arena_note(planned: usize) -> Option<String> {
    let (steered, missed) = hrr_va_arenas::steering();
    (planned > 0 && steered + missed > 0).then(|| {
        format!(
            "{steered} of {planned} driver address arenas reserved at their recorded bases{}",
            if missed > 0 {
                format!(" ({missed} taken by something else in this process)")
            } else {
                String::new()
            }
        )
    })
}
