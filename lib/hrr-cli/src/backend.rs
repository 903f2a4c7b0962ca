//! `--backend auto|cpu|hip|cuda`, `--runtime`, `--target`: which runtime a
//! replay runs on, and opening it.

use std::path::PathBuf;

use clap::ValueEnum;
use hrr_backend_hip::{HipDevice, HipRuntime, RuntimeLocation};
use hrr_core::manifest::Platform;
use hrr_replay::device::Device;
use hrr_replay::engine::reservations;

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

    /// Whether [`BackendArgs::open`] needs the placement plan: the CUDA
    /// backend does, to keep its driver's own mappings off the recorded
    /// ranges from the moment it starts.
    pub fn wants_plan(&self, platform: Platform) -> bool {
        self.resolve(platform) == Backend::Cuda
    }

    /// Opens the backend chosen for an archive of `platform`. `plan` is the
    /// placement plan (recorded `(base, size)` ranges; empty without
    /// placement), which the CUDA backend keeps clear until placement
    /// reserves it (see `hrr-va-arenas`).
    pub fn open(
        &self,
        platform: Platform,
        plan: &[(u64, u64)],
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
                // The driver takes what is mapped when it starts as in use
                // for good, and puts its own arenas wherever the kernel
                // chooses: so its mappings are steered clear of the ranges
                // placement will reserve, and those are held free only once
                // it has started (see `hrr-va-arenas`).
                let spans: Vec<(u64, u64)> = reservations(
                    plan,
                    hrr_backend_cuda::GRANULARITY,
                    hrr_backend_cuda::RESERVATION_ALIGNMENT,
                )
                .iter()
                .map(|r| r.span(hrr_backend_cuda::RESERVATION_ALIGNMENT))
                .collect();
                hrr_va_arenas::keep_clear(&spans);
                let dev = hrr_backend_cuda::CudaDevice::open(0).map_err(OpenError::Cuda)?;
                hrr_va_arenas::hold(&spans);
                Ok(Box::new(dev))
            }
            Backend::Auto => unreachable!("resolve never returns Auto"),
        }
    }
}
