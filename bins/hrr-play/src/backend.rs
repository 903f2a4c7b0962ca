//! Choosing and opening the replay device.

use anyhow::{Context, Result};
use hrr_backend_hip::{HipDevice, HipRuntime, RuntimeLocation};
use hrr_core::manifest::Platform;
use hrr_replay::device::Device;

use crate::args::{Args, Backend};

/// The backend `auto` stands for, given the archive's platform.
pub fn resolve(args: &Args, platform: Platform) -> Backend {
    match args.backend {
        Backend::Auto
            if args.runtime.is_some() || std::env::var_os("HRR_HIP_RUNTIME").is_some() =>
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

pub fn open(args: &Args, backend: Backend) -> Result<Box<dyn Device>> {
    match backend {
        Backend::Cpu | Backend::Hip => {
            let loc = if backend == Backend::Cpu {
                RuntimeLocation::Cpu
            } else if let Some(p) = &args.runtime {
                RuntimeLocation::Path(p.clone())
            } else if let Some(p) = std::env::var_os("HRR_HIP_RUNTIME") {
                RuntimeLocation::Path(p.into())
            } else {
                RuntimeLocation::Rocm
            };
            let rt = HipRuntime::load(&loc).context("opening the HIP backend")?;
            Ok(Box::new(HipDevice::new(rt, args.target.clone())))
        }
        Backend::Cuda => open_cuda(args),
        Backend::Auto => unreachable!("resolved before opening"),
    }
}

fn open_cuda(_args: &Args) -> Result<Box<dyn Device>> {
    Ok(Box::new(
        hrr_backend_cuda::CudaDevice::open(0).context("opening the CUDA backend")?,
    ))
}
