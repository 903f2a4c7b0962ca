//! Every constant and layout of `hsa_sys::raw` against Debian's real headers:
//! tests/c/hsa_layout.c is compiled with the system C compiler against
//! `/usr/include/hsa/{hsa.h,hsa_ext_amd.h}` (its `_Static_assert`s also pin the
//! ten function types), run, and each "NAME VALUE" line it prints is compared
//! with the Rust value.

use hsa_sys::raw::*;
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::Path;
use std::process::Command;

fn c_values() -> BTreeMap<String, u64> {
    for h in ["/usr/include/hsa/hsa.h", "/usr/include/hsa/hsa_ext_amd.h"] {
        assert!(
            Path::new(h).exists(),
            "{h} missing: apt-get install libhsa-runtime-dev"
        );
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/hsa_layout.c");
    let exe =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hsa_layout-{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-Wall", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{cc} {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().expect("run hsa_layout");
    let _ = std::fs::remove_file(&exe);
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            (
                k.to_string(),
                v.parse().unwrap_or_else(|_| panic!("bad value in {l:?}")),
            )
        })
        .collect()
}

#[test]
fn values_and_layouts_match_debian_headers() {
    let c = c_values();
    let rust: Vec<(&str, u64)> = vec![
        ("HSA_STATUS_SUCCESS", HSA_STATUS_SUCCESS.into()),
        ("HSA_STATUS_INFO_BREAK", HSA_STATUS_INFO_BREAK.into()),
        ("HSA_STATUS_ERROR", HSA_STATUS_ERROR.into()),
        (
            "HSA_STATUS_ERROR_INVALID_ARGUMENT",
            HSA_STATUS_ERROR_INVALID_ARGUMENT.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
            HSA_STATUS_ERROR_INVALID_QUEUE_CREATION.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_ALLOCATION",
            HSA_STATUS_ERROR_INVALID_ALLOCATION.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_AGENT",
            HSA_STATUS_ERROR_INVALID_AGENT.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_REGION",
            HSA_STATUS_ERROR_INVALID_REGION.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_SIGNAL",
            HSA_STATUS_ERROR_INVALID_SIGNAL.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_QUEUE",
            HSA_STATUS_ERROR_INVALID_QUEUE.into(),
        ),
        (
            "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
            HSA_STATUS_ERROR_OUT_OF_RESOURCES.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT.into(),
        ),
        (
            "HSA_STATUS_ERROR_RESOURCE_FREE",
            HSA_STATUS_ERROR_RESOURCE_FREE.into(),
        ),
        (
            "HSA_STATUS_ERROR_NOT_INITIALIZED",
            HSA_STATUS_ERROR_NOT_INITIALIZED.into(),
        ),
        (
            "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
            HSA_STATUS_ERROR_REFCOUNT_OVERFLOW.into(),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_MEMORY_POOL",
            HSA_STATUS_ERROR_INVALID_MEMORY_POOL.into(),
        ),
        ("HSA_AGENT_INFO_NAME", HSA_AGENT_INFO_NAME.into()),
        (
            "HSA_AGENT_INFO_VENDOR_NAME",
            HSA_AGENT_INFO_VENDOR_NAME.into(),
        ),
        ("HSA_AGENT_INFO_NODE", HSA_AGENT_INFO_NODE.into()),
        ("HSA_AGENT_INFO_DEVICE", HSA_AGENT_INFO_DEVICE.into()),
        ("HSA_DEVICE_TYPE_CPU", HSA_DEVICE_TYPE_CPU.into()),
        ("HSA_DEVICE_TYPE_GPU", HSA_DEVICE_TYPE_GPU.into()),
        ("HSA_DEVICE_TYPE_DSP", HSA_DEVICE_TYPE_DSP.into()),
        ("HSA_AMD_SEGMENT_GLOBAL", HSA_AMD_SEGMENT_GLOBAL.into()),
        ("HSA_AMD_SEGMENT_READONLY", HSA_AMD_SEGMENT_READONLY.into()),
        ("HSA_AMD_SEGMENT_PRIVATE", HSA_AMD_SEGMENT_PRIVATE.into()),
        ("HSA_AMD_SEGMENT_GROUP", HSA_AMD_SEGMENT_GROUP.into()),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT",
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED",
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED",
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_SEGMENT",
            HSA_AMD_MEMORY_POOL_INFO_SEGMENT.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS",
            HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_SIZE",
            HSA_AMD_MEMORY_POOL_INFO_SIZE.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED",
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE",
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT",
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL",
            HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL.into(),
        ),
        (
            "HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE",
            HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE.into(),
        ),
        ("sizeof(hsa_status_t)", size_of::<hsa_status_t>() as u64),
        ("alignof(hsa_status_t)", align_of::<hsa_status_t>() as u64),
        ("sizeof(hsa_agent_t)", size_of::<hsa_agent_t>() as u64),
        ("alignof(hsa_agent_t)", align_of::<hsa_agent_t>() as u64),
        (
            "sizeof(hsa_amd_memory_pool_t)",
            size_of::<hsa_amd_memory_pool_t>() as u64,
        ),
        (
            "alignof(hsa_amd_memory_pool_t)",
            align_of::<hsa_amd_memory_pool_t>() as u64,
        ),
        (
            "sizeof(hsa_agent_info_t)",
            size_of::<hsa_agent_info_t>() as u64,
        ),
        (
            "alignof(hsa_agent_info_t)",
            align_of::<hsa_agent_info_t>() as u64,
        ),
        (
            "sizeof(hsa_device_type_t)",
            size_of::<hsa_device_type_t>() as u64,
        ),
        (
            "alignof(hsa_device_type_t)",
            align_of::<hsa_device_type_t>() as u64,
        ),
        (
            "sizeof(hsa_amd_segment_t)",
            size_of::<hsa_amd_segment_t>() as u64,
        ),
        (
            "alignof(hsa_amd_segment_t)",
            align_of::<hsa_amd_segment_t>() as u64,
        ),
        (
            "sizeof(hsa_amd_memory_pool_info_t)",
            size_of::<hsa_amd_memory_pool_info_t>() as u64,
        ),
        (
            "alignof(hsa_amd_memory_pool_info_t)",
            align_of::<hsa_amd_memory_pool_info_t>() as u64,
        ),
        (
            "sizeof(hsa_amd_memory_pool_global_flag_t)",
            size_of::<hsa_amd_memory_pool_global_flag_t>() as u64,
        ),
        (
            "alignof(hsa_amd_memory_pool_global_flag_t)",
            align_of::<hsa_amd_memory_pool_global_flag_t>() as u64,
        ),
        // RUNTIME_ALLOC_ALLOWED / ACCESSIBLE_BY_ALL write a C bool: the wrapper reads one byte.
        ("sizeof(bool)", size_of::<u8>() as u64),
        ("alignof(bool)", align_of::<u8>() as u64),
        ("sizeof(size_t)", size_of::<usize>() as u64),
        ("alignof(size_t)", align_of::<usize>() as u64),
        (
            "offsetof(hsa_agent_t.handle)",
            offset_of!(hsa_agent_t, handle) as u64,
        ),
        (
            "offsetof(hsa_amd_memory_pool_t.handle)",
            offset_of!(hsa_amd_memory_pool_t, handle) as u64,
        ),
        ("sizeof(hsa_agent_t.handle)", size_of::<u64>() as u64),
        (
            "sizeof(hsa_amd_memory_pool_t.handle)",
            size_of::<u64>() as u64,
        ),
        // raw.rs models every C enum as u32: GCC/clang must agree they are unsigned.
        ("unsigned(hsa_status_t)", 1),
        ("unsigned(hsa_agent_info_t)", 1),
        ("unsigned(hsa_device_type_t)", 1),
        ("unsigned(hsa_amd_segment_t)", 1),
        ("unsigned(hsa_amd_memory_pool_info_t)", 1),
        ("unsigned(hsa_amd_memory_pool_global_flag_t)", 1),
        ("function_types_checked", SYMBOLS.len() as u64),
    ];
    let mut bad = Vec::new();
    for (k, v) in &rust {
        match c.get(*k) {
            Some(cv) if cv == v => {}
            Some(cv) => bad.push(format!("{k}: Rust {v}, C {cv}")),
            None => bad.push(format!("{k}: not printed by hsa_layout.c")),
        }
    }
    // Nothing printed by the C side may go unchecked.
    for k in c.keys() {
        if !rust.iter().any(|(r, _)| r == k) {
            bad.push(format!("{k}: printed by C, not compared"));
        }
    }
    assert!(
        bad.is_empty(),
        "hsa-sys differs from Debian's headers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn agent_name_buffer_is_64_bytes() {
    // hsa.h: "HSA_AGENT_INFO_NAME ... The type of this attribute is char[64]".
    let h = std::fs::read_to_string("/usr/include/hsa/hsa.h").expect("hsa.h");
    let i = h
        .find("HSA_AGENT_INFO_NAME = 0")
        .expect("HSA_AGENT_INFO_NAME in hsa.h");
    let doc = &h[i.saturating_sub(400)..i];
    assert!(
        doc.contains("char[64]"),
        "HSA_AGENT_INFO_NAME's documented type changed:\n{doc}"
    );
    assert_eq!(HSA_AGENT_NAME_LEN, 64);
}
