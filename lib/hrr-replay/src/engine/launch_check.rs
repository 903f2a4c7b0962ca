//! Checks that stand between an archive's launch (and code object) fields and
//! the device: every size, offset and count an archive states is checked
//! before it sizes an allocation, drives a loop, or reaches a runtime that
//! would trust it.
//!
//! * [`check_code_object`]: a code object is handed to runtimes as a bare
//!   pointer (`hipModuleLoadData`, `cuModuleLoadData`), which read as far as
//!   the image's own headers say. An empty blob, or one whose headers declare
//!   more bytes than the blob holds, would have them read past its end.
//! * [`kernarg_layout`]: argument offsets and sizes within [`MAX_KERNARG`],
//!   pointer offsets within their argument.
//! * [`check_launch_grid`]: grid and block within what the archive's
//!   platform launches ([`GridLimits`]).
//! * [`unmarked_pointers`]: argument words the capture did not mark as
//!   pointers but that point into recorded or declared memory; replay must
//!   translate them, or refuse the launch when it cannot — a kernel run on a
//!   capture-time address writes wherever that address happens to be now.

use hrr_codeobj::{CodeObjError, ImageKind};
use hrr_core::event::KernelArg;
use hrr_core::manifest::Platform;

use crate::alloc_map::AllocMap;
use crate::region_timeline::{RegionClass, RegionTimeline};

/// Largest packed kernel argument buffer replay assembles (1 MiB: above
/// CUDA's 32 KiB parameter limit and the CPU runtime's own 1 MiB).
pub const MAX_KERNARG: u64 = 1 << 20;
/// Most blocks per grid dimension (`2^31 - 1`, CUDA's x limit; AMD's too).
pub const MAX_GRID_DIM: u32 = i32::MAX as u32;
/// Most threads per block on any supported device.
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// What a platform's runtime launches: a launch beyond these failed at
/// capture, so an archive that records one is damaged or hostile, and on
/// the CPU runtime it would loop for as long as its grid says (a grid of
/// 65536³ blocks is 2^48 of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridLimits {
    /// Most blocks in grid x, y, z.
    pub grid: [u32; 3],
    /// Most threads in block x, y, z.
    pub block: [u32; 3],
    /// Most threads in a block.
    pub threads: u64,
    /// Most threads (grid × block) in one dimension, where the platform
    /// bounds that rather than the grid alone.
    pub threads_per_dim: Option<u64>,
    /// The platform, for messages.
    pub platform: &'static str,
}

impl GridLimits {
    /// CUDA's: grid x at most `2^31 - 1`, y and z at most 65535; block x
    /// and y at most 1024, z at most 64, 1024 threads in all. Also what a
    /// `cpu` archive is held to: the portable limits, which every platform
    /// launches.
    pub const CUDA: GridLimits = GridLimits {
        grid: [MAX_GRID_DIM, 65535, 65535],
        block: [1024, 1024, 64],
        threads: MAX_BLOCK_THREADS,
        threads_per_dim: None,
        platform: "nvidia",
    };

    /// HIP's on AMD GPUs: every grid dimension at most `2^31 - 1` blocks
    /// and `2^32 - 1` threads (grid × block: the dispatch packet's grid
    /// size is in threads, 32 bits a dimension); block dimensions at most
    /// 1024, 1024 threads in all.
    pub const HIP: GridLimits = GridLimits {
        grid: [MAX_GRID_DIM; 3],
        block: [1024; 3],
        threads: MAX_BLOCK_THREADS,
        threads_per_dim: Some(u32::MAX as u64),
        platform: "amd",
    };

    /// The limits of archives of `platform`.
    pub fn of(platform: Platform) -> GridLimits {
        match platform {
            Platform::Nvidia => GridLimits::CUDA,
            Platform::Amd => GridLimits::HIP,
            Platform::Cpu => GridLimits {
                platform: "cpu",
                ..GridLimits::CUDA
            },
        }
    }
}

/// The name of dimension `i` (0, 1, 2).
fn axis(i: usize) -> char {
    ['x', 'y', 'z'][i]
}

/// Why a code object is not handed to the runtime.
#[derive(Debug, thiserror::Error)]
pub enum CodeObjectCheckError {
    /// A blob of no bytes.
    #[error("the code object is empty (0 bytes)")]
    Empty,
    /// The image's headers reach past the blob's end.
    #[error("its headers describe {len} bytes, the blob holds {holds}")]
    Truncated {
        /// Bytes the headers describe.
        len: usize,
        /// Bytes the blob holds.
        holds: usize,
    },
    /// The headers could not be followed within the blob.
    #[error("its headers describe more than the blob's {holds} bytes")]
    Unreadable {
        /// Bytes the blob holds.
        holds: usize,
        /// What reading the headers ran into (boxed: a code object error
        /// is large, and this one travels inside every launch's result).
        #[source]
        source: Box<CodeObjError>,
    },
}

/// Why a launch's recorded arguments cannot be packed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KernargError {
    /// An argument's `size` is not the length of its bytes.
    #[error("launch arg {arg}: size {size} but {len} bytes of hex")]
    SizeMismatch {
        /// The argument's index.
        arg: usize,
        /// Its recorded `size`.
        size: u32,
        /// Bytes of its `hex`.
        len: u64,
    },
    /// An argument ends past [`MAX_KERNARG`].
    #[error(
        "launch arg {arg}: offset {offset} + size {len} ends past the {MAX_KERNARG}-byte \
         kernel argument limit"
    )]
    PastLimit {
        /// The argument's index.
        arg: usize,
        /// Its offset in the packed buffer.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A recorded pointer offset leaves no 8 bytes inside its argument.
    #[error("launch arg {arg}: pointer offset {offset} outside its {len} bytes")]
    PointerOutside {
        /// The argument's index.
        arg: usize,
        /// The recorded pointer offset.
        offset: u32,
        /// The argument's length.
        len: u64,
    },
}

/// Why a launch's grid or block is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GridError {
    /// A grid or block dimension of 0.
    #[error("grid {grid:?} x block {block:?} has a zero dimension")]
    ZeroDimension {
        /// The recorded grid.
        grid: [u32; 3],
        /// The recorded block.
        block: [u32; 3],
    },
    /// More blocks in one grid dimension than the platform launches.
    #[error(
        "grid {grid:?}: {blocks} blocks in one dimension, more than any device launches \
         (grid {axis}: at most {limit} on {platform})"
    )]
    TooManyBlocks {
        /// The recorded grid.
        grid: [u32; 3],
        /// The dimension: `x`, `y` or `z`.
        axis: char,
        /// Blocks in it.
        blocks: u32,
        /// The platform's limit.
        limit: u32,
        /// The archive's platform.
        platform: &'static str,
    },
    /// More threads (grid × block) in one dimension than the platform
    /// launches.
    #[error(
        "grid {grid:?} x block {block:?}: {threads} threads in {axis}, more than any device \
         launches (at most {limit} in one dimension on {platform})"
    )]
    TooManyThreadsInGrid {
        /// The recorded grid.
        grid: [u32; 3],
        /// The recorded block.
        block: [u32; 3],
        /// The dimension.
        axis: char,
        /// Threads in it (grid × block).
        threads: u64,
        /// The platform's limit.
        limit: u64,
        /// The archive's platform.
        platform: &'static str,
    },
    /// More threads in one block dimension than the platform runs.
    #[error(
        "block {block:?}: {threads} threads in {axis}, more than any device runs \
         (block {axis}: at most {limit} on {platform})"
    )]
    BlockDimension {
        /// The recorded block.
        block: [u32; 3],
        /// The dimension.
        axis: char,
        /// Threads in it.
        threads: u32,
        /// The platform's limit.
        limit: u32,
        /// The archive's platform.
        platform: &'static str,
    },
    /// More threads in a block than [`MAX_BLOCK_THREADS`].
    #[error(
        "block {block:?}: {threads} threads, more than any device runs per block \
         ({MAX_BLOCK_THREADS})"
    )]
    TooManyThreads {
        /// The recorded block.
        block: [u32; 3],
        /// Threads in it.
        threads: u64,
    },
}

/// Refuses a code object no runtime can be handed safely: an empty blob, or
/// an ELF, offload bundle or CUDA fat binary whose headers describe more
/// bytes than the blob holds. Other images (PTX text) go to the backend,
/// which knows its own formats.
pub fn check_code_object(image: &[u8]) -> Result<(), CodeObjectCheckError> {
    if image.is_empty() {
        return Err(CodeObjectCheckError::Empty);
    }
    match hrr_codeobj::identify(image) {
        ImageKind::Elf { .. }
        | ImageKind::Bundle
        | ImageKind::CompressedBundle
        | ImageKind::CudaFatbin => {}
        _ => return Ok(()),
    }
    match hrr_codeobj::read_image_extent(|n| image.get(..n)) {
        Ok(len) if len <= image.len() => Ok(()),
        Ok(len) => Err(CodeObjectCheckError::Truncated {
            len,
            holds: image.len(),
        }),
        Err(source) => Err(CodeObjectCheckError::Unreadable {
            holds: image.len(),
            source: Box::new(source),
        }),
    }
}

/// The offset of every argument in the packed buffer and the buffer's
/// length: recorded offsets, or natural packing as
/// [`hrr_core::event::arg_offsets`]; every argument's bytes (its `hex`)
/// must end within [`MAX_KERNARG`], its `size` must be its byte count and
/// every pointer offset must leave 8 bytes inside it.
pub fn kernarg_layout(args: &[KernelArg]) -> Result<(Vec<u32>, usize), KernargError> {
    let mut offsets = Vec::with_capacity(args.len());
    let mut next = 0u64;
    let mut end = 0u64;
    for (i, a) in args.iter().enumerate() {
        let len = a.hex.0.len() as u64;
        if u64::from(a.size) != len {
            return Err(KernargError::SizeMismatch {
                arg: i,
                size: a.size,
                len,
            });
        }
        let off = match a.offset {
            Some(o) => u64::from(o),
            None => {
                let align = u64::from(a.size.clamp(1, 8).next_power_of_two());
                next.div_ceil(align) * align
            }
        };
        let arg_end = off + len;
        if arg_end > MAX_KERNARG {
            return Err(KernargError::PastLimit {
                arg: i,
                offset: off,
                len,
            });
        }
        if let Some(&p) = a.ptrs.iter().find(|&&p| u64::from(p) + 8 > len) {
            return Err(KernargError::PointerOutside {
                arg: i,
                offset: p,
                len,
            });
        }
        next = arg_end;
        end = end.max(arg_end);
        offsets.push(off as u32);
    }
    Ok((offsets, end as usize))
}

/// Refuses a grid or block that the CPU runtime and CUDA would refuse: the
/// portable limits ([`GridLimits::of`] `cpu`). See [`check_launch_grid`].
pub fn check_grid(grid: [u32; 3], block: [u32; 3]) -> Result<(), GridError> {
    check_launch_grid(Platform::Cpu, grid, block)
}

/// Refuses a grid or block that no device of `platform` launches
/// ([`GridLimits::of`]): a zero dimension, too many blocks in a grid
/// dimension, too many threads in a dimension or in the block. Such a
/// launch failed at capture, and a grid of 65536³ blocks would run for
/// ever on the CPU runtime. Errors name the dimension.
pub fn check_launch_grid(
    platform: Platform,
    grid: [u32; 3],
    block: [u32; 3],
) -> Result<(), GridError> {
    let limits = GridLimits::of(platform);
    if grid.contains(&0) || block.contains(&0) {
        return Err(GridError::ZeroDimension { grid, block });
    }
    for i in 0..3 {
        if grid[i] > limits.grid[i] {
            return Err(GridError::TooManyBlocks {
                grid,
                axis: axis(i),
                blocks: grid[i],
                limit: limits.grid[i],
                platform: limits.platform,
            });
        }
        let threads = u64::from(grid[i]) * u64::from(block[i]);
        if let Some(limit) = limits.threads_per_dim
            && threads > limit
        {
            return Err(GridError::TooManyThreadsInGrid {
                grid,
                block,
                axis: axis(i),
                threads,
                limit,
                platform: limits.platform,
            });
        }
    }
    for i in 0..3 {
        if block[i] > limits.block[i] {
            return Err(GridError::BlockDimension {
                block,
                axis: axis(i),
                threads: block[i],
                limit: limits.block[i],
                platform: limits.platform,
            });
        }
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    if threads > limits.threads {
        return Err(GridError::TooManyThreads { block, threads });
    }
    Ok(())
}

/// Offsets of 8-byte words in an argument that the capture did not mark
/// (`known`) but that hold an address inside a live recorded allocation or
/// a declared region (sidecar). The capture marks every word that points
/// into memory it saw, so a word into a recorded allocation left unmarked
/// means a damaged `ptrs`; memory it never saw (an HSA pool, a driver-API
/// allocation) can only be recognised here, once a sidecar declares it.
/// Rules as at capture: every byte offset; values, and their low halves,
/// below 0x10000 are not pointers.
pub fn unmarked_pointers(
    bytes: &[u8],
    known: &[u32],
    allocs: &AllocMap,
    regions: &RegionTimeline,
) -> Vec<usize> {
    let mut found = Vec::new();
    let have_regions = !regions.records().is_empty();
    if allocs.is_empty() && !have_regions {
        return found;
    }
    let covered = |off: usize| {
        known
            .iter()
            .any(|&k| off + 8 > k as usize && off < k as usize + 8)
    };
    let mut off = 0;
    while off + 8 <= bytes.len() {
        let v = u64::from_le_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
        let plausible = v >= 0x10000 && (v as u32) >= 0x10000;
        let pointer = plausible
            && !covered(off)
            && (allocs.translate(v).is_some()
                || (have_regions
                    && regions.may_contain(v)
                    && regions.classify(v) != RegionClass::None));
        if pointer {
            found.push(off);
            off += 8;
        } else {
            off += 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc_map::Alloc;
    use hrr_core::event::MemKind;
    use hrr_core::hex::HexBytes;

    fn arg(offset: Option<u32>, bytes: Vec<u8>, ptrs: Vec<u32>) -> KernelArg {
        KernelArg {
            offset,
            size: bytes.len() as u32,
            hex: HexBytes(bytes),
            ptrs,
            objs: Vec::new(),
        }
    }

    #[test]
    fn empty_and_overlong_code_objects_are_refused() {
        assert!(matches!(
            check_code_object(b""),
            Err(CodeObjectCheckError::Empty)
        ));
        assert_eq!(
            check_code_object(b"").unwrap_err().to_string(),
            "the code object is empty (0 bytes)"
        );
        // An ELF header alone, claiming a section header table far beyond it.
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2; // 64-bit
        elf[5] = 1; // little endian
        elf[6] = 1;
        elf[0x28..0x30].copy_from_slice(&(1u64 << 20).to_le_bytes()); // e_shoff
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        elf[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes()); // e_shnum
        let e = check_code_object(&elf).unwrap_err().to_string();
        assert!(e.contains("the blob's 64 bytes"), "{e}");
        // A short ELF magic only: the runtime would read 64 bytes.
        assert!(check_code_object(b"\x7fELF").is_err());
        // Text (PTX) is the backend's business.
        assert!(check_code_object(b".version 8.0\n").is_ok());
        // This test executable is a whole ELF.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        check_code_object(&exe).unwrap();
    }

    #[test]
    fn kernarg_layout_bounds_offsets_sizes_and_pointers() {
        let (offs, end) = kernarg_layout(&[
            arg(None, vec![0; 4], vec![]),
            arg(None, vec![0; 8], vec![0]),
        ])
        .unwrap();
        assert_eq!((offs, end), (vec![0, 8], 16));
        let e = kernarg_layout(&[arg(Some(1 << 31), vec![0; 8], vec![])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("offset 2147483648 + size 8"), "{e}");
        let e = kernarg_layout(&[arg(Some(u32::MAX), vec![0; 8], vec![])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("kernel argument limit"), "{e}");
        let e = kernarg_layout(&[arg(None, vec![0; 8], vec![4])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "launch arg 0: pointer offset 4 outside its 8 bytes"
        );
        let mut bad = arg(None, vec![0; 8], vec![]);
        bad.size = 16;
        let e = kernarg_layout(&[bad]).unwrap_err();
        assert_eq!(e.to_string(), "launch arg 0: size 16 but 8 bytes of hex");
        // Natural packing never overflows, whatever the sizes.
        let big = arg(None, vec![0; 1 << 19], vec![]);
        assert!(kernarg_layout(&[big.clone(), big.clone(), big]).is_err());
    }

    #[test]
    fn grids_beyond_device_limits_are_refused() {
        check_grid([1, 1, 1], [1024, 1, 1]).unwrap();
        check_grid([MAX_GRID_DIM, 65535, 65535], [1, 1, 1]).unwrap();
        let refused = |grid, block| check_grid(grid, block).unwrap_err().to_string();
        assert!(refused([0, 1, 1], [1, 1, 1]).contains("zero"));
        assert!(
            refused([u32::MAX, u32::MAX, 1], [1, 1, 1])
                .contains("4294967295 blocks in one dimension")
        );
        assert!(refused([1, 1, 1], [32, 32, 2]).contains("2048 threads"));
    }

    #[test]
    fn grids_are_held_to_their_platforms_limits() {
        // CUDA's, and the portable ones of the CPU runtime's archives.
        for p in [Platform::Cpu, Platform::Nvidia] {
            let name = p.as_str();
            check_launch_grid(p, [MAX_GRID_DIM, 65535, 65535], [1024, 1, 1]).unwrap();
            check_launch_grid(p, [1, 1, 1], [1, 16, 64]).unwrap();
            let refused = |grid, block| check_launch_grid(p, grid, block).unwrap_err().to_string();
            assert_eq!(
                refused([65536; 3], [1; 3]),
                format!(
                    "grid [65536, 65536, 65536]: 65536 blocks in one dimension, more than any \
                     device launches (grid y: at most 65535 on {name})"
                )
            );
            assert!(refused([1, 1, 65536], [1; 3]).contains("(grid z: at most 65535 on"));
            assert!(refused([1 << 31, 1, 1], [1; 3]).contains("(grid x: at most 2147483647 on"));
            assert_eq!(
                refused([1; 3], [1, 1, 65]),
                format!(
                    "block [1, 1, 65]: 65 threads in z, more than any device runs (block z: at \
                     most 64 on {name})"
                )
            );
            assert!(refused([1; 3], [1, 1025, 1]).contains("1025 threads in y"));
            assert!(refused([1; 3], [64, 32, 1]).contains("2048 threads, more than"));
        }
        // HIP on AMD: a dimension is bounded by its threads (grid × block).
        let amd = |grid, block| check_launch_grid(Platform::Amd, grid, block);
        amd([65536; 3], [1; 3]).unwrap();
        amd([1, 1, 1], [1, 1, 1024]).unwrap();
        amd([1, 1 << 22, 1], [1, 1023, 1]).unwrap();
        assert_eq!(
            amd([1, 1 << 22, 1], [1, 1024, 1]).unwrap_err().to_string(),
            "grid [1, 4194304, 1] x block [1, 1024, 1]: 4294967296 threads in y, more than any \
             device launches (at most 4294967295 in one dimension on amd)"
        );
        assert!(
            amd([1 << 31, 1, 1], [1; 3])
                .unwrap_err()
                .to_string()
                .contains("(grid x: at most 2147483647 on amd)")
        );
        assert!(amd([1; 3], [32, 32, 2]).is_err());
    }

    #[test]
    fn unmarked_words_into_recorded_memory_are_found() {
        let mut allocs = AllocMap::new();
        allocs
            .insert(Alloc {
                base: 0x7f00_0040_0000,
                size: 4096,
                mem: MemKind::Device,
                live: 0x1000_0000,
                materialised: false,
            })
            .unwrap();
        let regions = RegionTimeline::default();
        let mut bytes = vec![0u8; 24];
        bytes[4..12].copy_from_slice(&0x7f00_0040_0010u64.to_le_bytes());
        bytes[16..24].copy_from_slice(&0x7f00_0040_2000u64.to_le_bytes()); // past the end
        assert_eq!(unmarked_pointers(&bytes, &[], &allocs, &regions), vec![4]);
        assert!(unmarked_pointers(&bytes, &[4], &allocs, &regions).is_empty());
        assert!(unmarked_pointers(&bytes, &[], &AllocMap::new(), &regions).is_empty());
    }
}
