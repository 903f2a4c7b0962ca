//! `plan`: the device hash's choices that need no GPU (unit-tested): which
//! copies it takes, the launches that hash `len` bytes, the scratch they
//! need, the NVRTC libraries tried, the architecture compiled for.

#![deny(unsafe_code)]

use std::ffi::{CString, OsStr};

/// Copies from this many bytes are hashed on the device. Below it the host
/// hash is cheap (a 4 MiB copy takes about 75 µs at 55 GB/s and its hash on
/// the pool about as long) while the device path adds two launches and a
/// result read (tens of µs), so the gain only shows above a few MiB.
pub const FROM: usize = 4 << 20;

/// Copies up to this many bytes: the scratch is sized for them once
/// ([`SCRATCH_NODES`]); larger ones are hashed on the host.
pub const MOST: u64 = 16 << 30;

/// Bytes of a BLAKE3 chunk (a thread each).
pub const CHUNK: u64 = 1024;

/// Nodes a kernel block merges to one (`HRR_B3_GROUP` in the source).
pub const GROUP: u64 = 256;

/// Where a launch reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    /// The copy's source.
    Source,
    /// Scratch, first part ([`SCRATCH_NODES`]`.0` nodes).
    A,
    /// Scratch, second part.
    B,
    /// The 32-byte result the host reads.
    Result,
}

/// Which kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `hrr_blake3_chunks(in, len, out)`: `n` is the byte length.
    Chunks,
    /// `hrr_blake3_parents(in, n, out)`: `n` is the node count.
    Parents,
}

/// One launch of [`GROUP`] threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The kernel launched.
    pub kernel: Kernel,
    /// Its blocks.
    pub grid: u32,
    /// Its count argument (bytes for [`Kernel::Chunks`], else nodes).
    pub n: u64,
    /// What it reads.
    pub input: Buf,
    /// Where it writes (a node per block).
    pub output: Buf,
}

/// Nodes each part of the scratch holds: level 1 of [`MOST`] bytes, and
/// the level after it.
pub const SCRATCH_NODES: (u64, u64) = (
    MOST.div_ceil(CHUNK).div_ceil(GROUP),
    MOST.div_ceil(CHUNK).div_ceil(GROUP).div_ceil(GROUP),
);

/// Bytes of scratch (32 per node).
pub const SCRATCH_BYTES: u64 = (SCRATCH_NODES.0 + SCRATCH_NODES.1) * 32;

/// The launches that hash `len` (at most [`MOST`]) bytes, in stream order:
/// the chunks, then the groups' nodes merged until one is left, the last
/// launch (one block) writing the hash into [`Buf::Result`].
pub fn launches(len: u64) -> Vec<Launch> {
    let chunks = len.div_ceil(CHUNK).max(1);
    let mut nodes = chunks.div_ceil(GROUP);
    let out = |nodes: u64, next: Buf| if nodes == 1 { Buf::Result } else { next };
    let mut v = vec![Launch {
        kernel: Kernel::Chunks,
        grid: nodes as u32,
        n: len,
        input: Buf::Source,
        output: out(nodes, Buf::A),
    }];
    let mut at = Buf::A;
    while nodes > 1 {
        let next = nodes.div_ceil(GROUP);
        let to = if at == Buf::A { Buf::B } else { Buf::A };
        v.push(Launch {
            kernel: Kernel::Parents,
            grid: next as u32,
            n: nodes,
            input: at,
            output: out(next, to),
        });
        at = to;
        nodes = next;
    }
    v
}

/// What `HRR_DEVICE_HASH` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// D2H copies of [`FROM`] bytes or more hashed on the device (unset,
    /// or any other value).
    On,
    /// `off` or `0`: every D2H hashed on the host.
    Off,
    /// `check`: every D2H from device memory, whatever its size, hashed on
    /// the device and on the host, the two compared (one line on stderr
    /// each); the host's hash names the blob. For testing the kernel.
    Check,
}

impl Mode {
    /// The mode `HRR_DEVICE_HASH`'s value asks for.
    pub fn of(v: Option<&OsStr>) -> Mode {
        match v.and_then(OsStr::to_str) {
            Some("off" | "0") => Mode::Off,
            Some("check") => Mode::Check,
            _ => Mode::On,
        }
    }

    /// The smallest copy hashed on the device (`None`: none is).
    pub fn from(self) -> Option<usize> {
        match self {
            Mode::On => Some(FROM),
            Mode::Off => None,
            Mode::Check => Some(0),
        }
    }
}

/// The NVRTC libraries tried, in order: `HRR_NVRTC` alone when set, else
/// the usual sonames (CUDA 13, 12, 11's `.11.2`, unversioned) and the
/// toolkit's default place.
pub fn nvrtc_candidates(env: Option<&OsStr>) -> Vec<CString> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(p) = env.filter(|p| !p.is_empty()) {
        return CString::new(p.as_bytes()).into_iter().collect();
    }
    [
        "libnvrtc.so.13",
        "libnvrtc.so.12",
        "libnvrtc.so.11.2",
        "libnvrtc.so",
        "/usr/local/cuda/lib64/libnvrtc.so",
    ]
    .into_iter()
    .map(|s| CString::new(s).expect("no NUL"))
    .collect()
}

/// NVRTC's option naming the virtual architecture of compute capability
/// `major.minor` (PTX the driver compiles for the device).
pub fn arch_option(major: i32, minor: i32) -> CString {
    CString::new(format!("--gpu-architecture=compute_{major}{minor}")).expect("no NUL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_are_one_launch_into_the_result() {
        for len in [0, 1, 1024, 256 * 1024] {
            assert_eq!(
                launches(len),
                [Launch {
                    kernel: Kernel::Chunks,
                    grid: 1,
                    n: len,
                    input: Buf::Source,
                    output: Buf::Result
                }],
                "{len}"
            );
        }
    }

    #[test]
    fn large_inputs_merge_groups_until_one_is_left() {
        // 256 MiB: 262144 chunks, 1024 groups, 4, 1.
        let v = launches(256 << 20);
        let shape: Vec<_> = v
            .iter()
            .map(|l| (l.kernel, l.grid, l.n, l.input, l.output))
            .collect();
        assert_eq!(
            shape,
            [
                (Kernel::Chunks, 1024, 256 << 20, Buf::Source, Buf::A),
                (Kernel::Parents, 4, 1024, Buf::A, Buf::B),
                (Kernel::Parents, 1, 4, Buf::B, Buf::Result),
            ]
        );
        // One byte past a group: two nodes, merged by one parent launch.
        let v = launches(256 * 1024 + 1);
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].grid, v[1].n, v[1].output), (1, 2, Buf::Result));
    }

    #[test]
    fn the_scratch_holds_the_largest_copy() {
        let v = launches(MOST);
        for l in &v {
            let nodes_out = u64::from(l.grid);
            match l.output {
                Buf::A => assert!(nodes_out <= SCRATCH_NODES.0),
                Buf::B => assert!(nodes_out <= SCRATCH_NODES.1),
                _ => {}
            }
        }
        assert_eq!(v.last().unwrap().output, Buf::Result);
        assert_eq!(SCRATCH_BYTES, (65536 + 256) * 32);
    }

    #[test]
    fn switches_and_libraries() {
        assert_eq!(Mode::of(None), Mode::On);
        assert_eq!(Mode::of(Some(OsStr::new("1"))), Mode::On);
        assert_eq!(Mode::of(Some(OsStr::new("off"))), Mode::Off);
        assert_eq!(Mode::of(Some(OsStr::new("0"))).from(), None);
        assert_eq!(Mode::of(Some(OsStr::new("check"))).from(), Some(0));
        assert_eq!(Mode::On.from(), Some(FROM));
        let c = nvrtc_candidates(None);
        assert_eq!(c[0].to_str().unwrap(), "libnvrtc.so.13");
        assert!(c.iter().any(|s| s.to_str() == Ok("libnvrtc.so.11.2")));
        let c = nvrtc_candidates(Some(OsStr::new("/opt/x/libnvrtc.so.12")));
        assert_eq!(c.len(), 1);
        assert_eq!(
            arch_option(9, 0).to_str().unwrap(),
            "--gpu-architecture=compute_90"
        );
    }
}
