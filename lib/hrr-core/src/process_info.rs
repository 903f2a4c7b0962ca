//! `ProcessInfo`: which process of a run recorded an archive — the
//! manifest's `process` object (FORMAT.md, *manifest.json*).
//!
//! A data-parallel run (`torchrun`, `mpirun`, `srun`, a program spawning
//! GPU workers) records one archive per process; replaying or comparing the
//! run as a *job* pairs those archives by rank, which only the launcher's
//! environment knows. So the recorder notes, once, when it claims its
//! archive: pid, parent pid, command line, process start, the job `hrr-cap`
//! started ([`ENV_JOB`]) and the rank the usual launcher variables give.

use serde::{Deserialize, Serialize};

/// The manifest field holding a [`ProcessInfo`].
pub const PROCESS_FIELD: &str = "process";

/// Set by `hrr-cap` in the application's environment: the run's job id,
/// inherited by every process the application starts, so that `hrr-cap`
/// tells this run's archives from ones an earlier run left beside them.
pub const ENV_JOB: &str = "HRR_JOB";

/// Launcher variables, most specific first: `(rank, world size, local
/// rank)`. torchrun sets `RANK` even under Slurm, so it goes first.
const RANK_VARS: &[(&str, &str, Option<&str>)] = &[
    ("RANK", "WORLD_SIZE", Some("LOCAL_RANK")),
    (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        Some("OMPI_COMM_WORLD_LOCAL_RANK"),
    ),
    ("PMI_RANK", "PMI_SIZE", None),
    ("SLURM_PROCID", "SLURM_NTASKS", Some("SLURM_LOCALID")),
];

/// One recording process.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid when it started recording.
    pub ppid: u32,
    /// Its command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Its rank in the run, from the launcher's environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// The run's number of ranks (same variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u64>,
    /// Its rank on its node (same variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<u64>,
    /// The variable the rank was read from (`RANK`, `OMPI_COMM_WORLD_RANK`,
    /// `PMI_RANK`, `SLURM_PROCID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_from: Option<String>,
    /// When the process started, nanoseconds since boot (the kernel's
    /// start time, in clock ticks: 10 ms apart): orders processes without
    /// a rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    /// The job `hrr-cap` started ([`ENV_JOB`]), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl ProcessInfo {
    /// This process, its command line and its environment now.
    pub fn current() -> ProcessInfo {
        let argv = std::fs::read("/proc/self/cmdline")
            .map(|raw| {
                raw.split(|&b| b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let mut p = ProcessInfo::from_env(
            std::process::id(),
            std::os::unix::process::parent_id(),
            argv,
            |k| std::env::var(k).ok(),
        );
        p.start_ns = start_ns();
        p
    }

    /// A process with the rank and job that `env` gives.
    pub fn from_env(
        pid: u32,
        ppid: u32,
        argv: Vec<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> ProcessInfo {
        let num = |k: &str| env(k).and_then(|v| v.trim().parse::<u64>().ok());
        let mut p = ProcessInfo {
            pid,
            ppid,
            argv,
            job: env(ENV_JOB).filter(|j| !j.is_empty()),
            ..ProcessInfo::default()
        };
        // One launcher's variables together: a rank of one with the size
        // of another would describe no run.
        if let Some((rank_var, size_var, local_var)) =
            RANK_VARS.iter().find(|(r, _, _)| num(r).is_some())
        {
            p.rank = num(rank_var);
            p.world_size = num(size_var);
            p.local_rank = local_var.and_then(num);
            p.rank_from = Some((*rank_var).to_string());
        }
        p
    }

    /// `rank R of W` / `rank R` / `no rank`, for messages.
    pub fn rank_text(&self) -> String {
        match (self.rank, self.world_size) {
            (Some(r), Some(w)) => format!("rank {r} of {w}"),
            (Some(r), None) => format!("rank {r}"),
            _ => "no rank".into(),
        }
    }
}

/// The process's start (`/proc/self/stat` field 22), ns since boot.
fn start_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces and parentheses: fields count from
    // the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks.saturating_mul(1_000_000_000) / hz as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> ProcessInfo {
        let env: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProcessInfo::from_env(7, 3, vec!["app".into()], |k| env.get(k).cloned())
    }

    #[test]
    fn ranks_from_each_launcher() {
        let t = with(&[("RANK", "1"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "1")]);
        assert_eq!(
            (t.rank, t.world_size, t.local_rank, t.rank_from.as_deref()),
            (Some(1), Some(4), Some(1), Some("RANK"))
        );
        let o = with(&[
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
        ]);
        assert_eq!(
            (o.rank, o.world_size, o.local_rank),
            (Some(2), Some(8), Some(0))
        );
        let m = with(&[("PMI_RANK", "3"), ("PMI_SIZE", "4")]);
        assert_eq!(
            (m.rank, m.world_size, m.local_rank),
            (Some(3), Some(4), None)
        );
        let s = with(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "6"),
            ("SLURM_LOCALID", "1"),
        ]);
        assert_eq!(s.rank_from.as_deref(), Some("SLURM_PROCID"));
        // torchrun under Slurm: torchrun's variables win, all of them.
        let both = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("RANK", "3"),
            ("WORLD_SIZE", "4"),
        ]);
        assert_eq!((both.rank, both.world_size), (Some(3), Some(4)));
        let none = with(&[("WORLD_SIZE", "4"), ("RANK", "x")]);
        assert_eq!((none.rank, none.world_size), (None, None));
        assert_eq!(none.rank_text(), "no rank");
        assert_eq!(t.rank_text(), "rank 1 of 4");
    }

    #[test]
    fn this_process() {
        let p = ProcessInfo::current();
        assert_eq!(p.pid, std::process::id());
        assert!(p.ppid > 0 && p.start_ns.is_some() && !p.argv.is_empty());
        let back: ProcessInfo = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}
