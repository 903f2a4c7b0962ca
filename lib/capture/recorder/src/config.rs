//! `Config`: what the recorder reads from the environment.
//!
//! | variable | meaning |
//! |---|---|
//! | `HRR_OUT` | archive directory; unset or empty = pass-through, nothing recorded |
//! | `HRR_PLATFORM` | `cpu`, `amd`, `nvidia`; `auto`/`hip`/unset = detect from the runtime library |
//! | `HRR_HSA_REGIONS` | `1` (`hrr-cap --hsa-regions`): record HSA pool allocations as region records (`hsa_regions`); unset, empty or `0` = off |
//! | `HRR_CUDA_DRIVER_LAYER` | `0`/`off`: CUDA driver calls are not recorded, only runtime calls (`cuda::ffi::driver_layer_on`) |
//! | `HRR_HOST_MEMORY` | `0`/`off`: host memory kernels read and write (pinned, registered, managed) is not snapshotted (`record::host_memory`); on otherwise |
//! | `HRR_EVENTS` | `plain` (`hrr-cap --plain`): a finished archive keeps `events.ndjson`; otherwise its events end compressed, `events.ndjson.zst` |
//! | `HRR_WINDOW` | `profiler`, `launches:A..B`, `signal[:NAME]`: record only inside capture windows (`record::window`); unset or empty = the whole run |
//! | `HRR_CAP_NOTE` | set by `hrr-cap`: a file a process that recorded nothing appends a line to (`no_capture_note`) |

use std::ffi::OsString;
use std::path::PathBuf;

use hrr_core::manifest::Platform;
pub use hrr_core::window::ENV_WINDOW;
use hrr_core::window::{WindowSpec, WindowSpecError};

/// Environment variable naming the archive directory.
pub const ENV_OUT: &str = "HRR_OUT";
/// Environment variable naming the platform.
pub const ENV_PLATFORM: &str = "HRR_PLATFORM";
/// Environment variable switching the built-in HSA region producer on.
pub const ENV_HSA_REGIONS: &str = "HRR_HSA_REGIONS";

/// Environment variable keeping a finished archive's events plain.
pub const ENV_EVENTS: &str = "HRR_EVENTS";

/// Whether `HRR_EVENTS` asks for plain events (`plain`, case-insensitively):
/// otherwise a finished capture compresses them.
pub fn events_plain(value: Option<OsString>) -> bool {
    value.is_some_and(|v| v.to_string_lossy().eq_ignore_ascii_case("plain"))
}

/// Environment variable switching host-memory snapshots off.
pub const ENV_HOST_MEMORY: &str = "HRR_HOST_MEMORY";

/// Whether `HRR_HOST_MEMORY` leaves host-memory snapshots on (anything but
/// `0` or `off`, case-insensitively).
pub fn host_memory_on(value: Option<OsString>) -> bool {
    !value.is_some_and(|v| {
        let v = v.to_string_lossy().to_ascii_lowercase();
        v == "0" || v == "off"
    })
}

/// The recorder's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Archive directory the process should record into.
    pub out: PathBuf,
    /// Forced platform; `None` = detect from the library that defines the
    /// HIP entry points.
    pub platform: Option<Platform>,
    /// The capture windows (`HRR_WINDOW`); `None`: the whole run.
    pub window: Option<WindowSpec>,
}

/// A configuration value the recorder cannot use.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{ENV_PLATFORM}={0:?}: expected auto, hip, cpu, amd or nvidia")]
    /// `HRR_PLATFORM` names no platform.
    Platform(String),
    #[error("{ENV_WINDOW}: {0}")]
    /// `HRR_WINDOW` is no window setting.
    Window(#[from] WindowSpecError),
}

impl Config {
    /// Reads the process environment. `Ok(None)`: recording is off.
    pub fn from_env() -> Result<Option<Config>, ConfigError> {
        let Some(mut c) =
            Config::from_vars(std::env::var_os(ENV_OUT), std::env::var_os(ENV_PLATFORM))?
        else {
            return Ok(None);
        };
        c.window = window_of(std::env::var_os(ENV_WINDOW))?;
        Ok(Some(c))
    }

    /// [`Config::from_env`] over given values (testable without touching the
    /// process environment).
    pub fn from_vars(
        out: Option<OsString>,
        platform: Option<OsString>,
    ) -> Result<Option<Config>, ConfigError> {
        let Some(out) = out.filter(|o| !o.is_empty()) else {
            return Ok(None);
        };
        let platform = match platform
            .as_ref()
            .map(|p| p.to_string_lossy().to_ascii_lowercase())
        {
            None => None,
            Some(p) => match p.as_str() {
                "" | "auto" | "hip" => None,
                "cpu" => Some(Platform::Cpu),
                "amd" | "rocm" => Some(Platform::Amd),
                "nvidia" | "cuda" => Some(Platform::Nvidia),
                _ => return Err(ConfigError::Platform(p)),
            },
        };
        Ok(Some(Config {
            out: PathBuf::from(out),
            platform,
            window: None,
        }))
    }
}

/// The window setting `HRR_WINDOW` holds (`None`: unset or empty).
pub fn window_of(value: Option<OsString>) -> Result<Option<WindowSpec>, WindowSpecError> {
    match value.filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => WindowSpec::parse(&v.to_string_lossy()).map(Some),
    }
}

/// The platform implied by the path of the library that defines `hipMalloc`:
/// the CPU runtime is `libhrr_hip_cpu.so`, anything else is ROCm.
pub fn detect_platform(runtime: Option<&std::path::Path>) -> Platform {
    match runtime
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
    {
        Some(n) if n.contains("hrr_hip_cpu") => Platform::Cpu,
        Some(n) if n.contains("cudart") => Platform::Nvidia,
        _ => Platform::Amd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn host_memory_snapshots_are_on_unless_switched_off() {
        assert!(host_memory_on(None));
        assert!(host_memory_on(os("1")));
        assert!(!host_memory_on(os("0")));
        assert!(!host_memory_on(os("OFF")));
    }

    #[test]
    fn the_window_setting_is_read_and_checked() {
        assert_eq!(window_of(None), Ok(None));
        assert_eq!(window_of(os("")), Ok(None));
        assert_eq!(window_of(os("profiler")), Ok(Some(WindowSpec::Profiler)));
        assert!(window_of(os("launches:9..1")).is_err());
    }

    #[test]
    fn unset_or_empty_out_means_off() {
        assert_eq!(Config::from_vars(None, os("cpu")), Ok(None));
        assert_eq!(Config::from_vars(os(""), None), Ok(None));
    }

    #[test]
    fn platforms() {
        let c = Config::from_vars(os("a.hrr"), os("NVIDIA"))
            .unwrap()
            .unwrap();
        assert_eq!(c.platform, Some(Platform::Nvidia));
        assert_eq!(c.out, PathBuf::from("a.hrr"));
        assert_eq!(
            Config::from_vars(os("a"), os("auto"))
                .unwrap()
                .unwrap()
                .platform,
            None
        );
        assert_eq!(
            Config::from_vars(os("a"), os("hip"))
                .unwrap()
                .unwrap()
                .platform,
            None
        );
        assert_eq!(
            Config::from_vars(os("a"), os("tpu")),
            Err(ConfigError::Platform("tpu".into()))
        );
    }

    #[test]
    fn detects_from_library_name() {
        let cpu = Path::new("/x/target/debug/libhrr_hip_cpu.so");
        assert_eq!(detect_platform(Some(cpu)), Platform::Cpu);
        assert_eq!(
            detect_platform(Some(Path::new("/opt/rocm/lib/libamdhip64.so.5"))),
            Platform::Amd
        );
        assert_eq!(detect_platform(None), Platform::Amd);
    }
}
