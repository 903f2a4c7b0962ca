//! The engine's region scenarios, each on the CPU runtime
//! through the real binaries (hrr-sidecar, hrr-play, hrr-diff), over archives
//! written by hrr-core's testkit `ArchiveBuilder`.

use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, FAKE_HOST, ptr_arg, struct_arg, value_arg};
use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, region_segs, workloads};
use predicates::prelude::*;

/// A recorded device allocation.
const DEV: u64 = 0x7f00_0000_0000;
/// A hidden segment nothing in the archive explains.
const SEG: u64 = 0x7e00_0040_0000;
const SEG_SIZE: u64 = 262_144;

fn pattern(n: usize, salt: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(salt))
        .collect()
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// The seed's archive: H2D first touch of a hidden segment, D2D out of it,
/// D2H of both, and a second touch of the segment at an interior address.
fn seed_archive() -> ArchiveBuilder {
    let data = pattern(SEG_SIZE as usize, 3);
    ArchiveBuilder::new(Platform::Cpu)
        .argv(&["./hidden_segment"])
        .alloc(DEV, SEG_SIZE) // seq 0
        .h2d(SEG, &data) // seq 1: first touch, H2D dst
        .d2d(DEV, SEG, SEG_SIZE) // seq 2: D2D src
        .d2h(DEV, &data) // seq 3
        .d2h(SEG + 4096, &data[4096..8192]) // seq 4: D2H src, interior
        .free(DEV)
}

#[test]
fn a_h2d_first_touch_materialises_once_and_d2h_matches() {
    let p = Pipeline::empty("engine_a");
    seed_archive().write(p.cap()).unwrap();
    let p = p
        .sidecar(&[
            "--base",
            &format!("{SEG:#x}"),
            "--size",
            &SEG_SIZE.to_string(),
        ])
        .play();
    let out = p.last_stdout();
    assert!(
        out.contains("regions : 1 records from 1 stream(s)"),
        "{out}"
    );
    assert_eq!(
        region_segs(&out),
        Some(1),
        "materialised once though touched 3 times:\n{out}"
    );
    assert_eq!(d2h_counts(&out), Some((2, 2, 0, 0)), "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    p.diff();
}

#[test]
fn b_without_sidecar_fatal_not_mapped() {
    let p = Pipeline::empty("engine_b");
    seed_archive().write(p.cap()).unwrap();
    let a = p
        .play_cmd(&[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "hrr-play: fatal: event 1 (hipMemcpy): h2d dst {SEG:#x} not mapped"
        )))
        .stdout(predicate::str::is_match(r"(?m)^PASS$").unwrap().not());
    assert_no_crash("hrr-play", &stderr(&a));
}

#[test]
fn c_host_operand_inside_segment_is_never_materialised() {
    // The segment covers the host range of both the H2D source and the D2H
    // destination: host operands, so nothing may be materialised.
    let data = pattern(8192, 9);
    let p = Pipeline::empty("engine_c");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 8192)
        .h2d(DEV, &data)
        .d2h_to(FAKE_HOST + 4096, DEV, &data)
        .segment(FAKE_HOST, 1 << 20, 0)
        .write(p.cap())
        .unwrap();
    let a = p.play_cmd(&[]).assert().success();
    let out = stdout(&a);
    assert!(
        out.contains("regions : 1 records from 1 stream(s)"),
        "{out}"
    );
    assert!(out.contains("region segs : 0 materialised"), "{out}");
    assert_eq!(d2h_counts(&out), Some((1, 1, 0, 0)), "{out}");
}

#[test]
fn d_d2d_hidden_source_and_memset_into_hidden_segment() {
    const S1: u64 = SEG;
    const S2: u64 = SEG + 0x10_0000;
    const S3: u64 = SEG + 0x20_0000;
    const N: u64 = 65536;
    let mut s2 = vec![0u8; N as usize];
    s2[4096..4096 + 8192].fill(0x3c);
    let p = Pipeline::empty("engine_d");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, N)
        .memset(DEV, 0xee, N)
        .memset(S2 + 4096, 0x3c, 8192) // first touch of S2: memset dst
        .d2d(DEV, S1, N) // first touch of S1: D2D src (zero-filled)
        .d2d(S3 + 16, S2 + 4096, 8192) // first touch of S3: D2D dst
        .d2h(DEV, &vec![0u8; N as usize])
        .d2h(S3 + 16, &[0x3c; 8192])
        .d2h(S2, &s2)
        .segment(S1, N, 0)
        .segment(S2, N, 0)
        .segment(S3, N, 0)
        .write(p.cap())
        .unwrap();
    let a = p.play_cmd(&["-o", "replay.hrr"]).assert().success();
    let out = stdout(&a);
    assert!(
        out.contains("regions : 3 records from 1 stream(s)"),
        "{out}"
    );
    assert_eq!(region_segs(&out), Some(3), "{out}");
    assert_eq!(d2h_counts(&out), Some((3, 3, 0, 0)), "{out}");
    p.diff();
}

fn f32s(v: f32, n: usize) -> Vec<u8> {
    std::iter::repeat_n(v.to_le_bytes(), n).flatten().collect()
}

#[test]
fn e_kernel_pointer_and_struct_embedded_pointer_into_hidden_segments() {
    const S1: u64 = SEG;
    const S2: u64 = SEG + 0x10_0000;
    const N: usize = 4096; // floats
    let code = workloads().kernel("fill");
    // struct fill_params { float *dst; float value; int n; }
    let mut sp = Vec::new();
    sp.extend_from_slice(&(S2 + 64).to_le_bytes());
    sp.extend_from_slice(&(-2.25f32).to_le_bytes());
    sp.extend_from_slice(&((N - 32) as i32).to_le_bytes());
    let p = Pipeline::empty("engine_e");
    ArchiveBuilder::new(Platform::Cpu)
        .launch(
            "fill",
            &code,
            [(N / 256) as u32, 1, 1],
            [256, 1, 1],
            vec![
                ptr_arg(S1),
                value_arg(&1.5f32.to_le_bytes()),
                value_arg(&(N as i32).to_le_bytes()),
            ],
        )
        .launch(
            "fill_struct",
            &code,
            [(N / 256) as u32, 1, 1],
            [256, 1, 1],
            vec![struct_arg(&sp, &[0])],
        )
        .device_sync()
        .d2h(S1, &f32s(1.5, N))
        .d2h(S2 + 64, &f32s(-2.25, N - 32))
        .segment(S1, (N * 4) as u64, 0)
        .segment(S2, (N * 4 + 4096) as u64, 0)
        .write(p.cap())
        .unwrap();
    let a = p.play_cmd(&["-o", "replay.hrr"]).assert().success();
    let out = stdout(&a);
    assert_eq!(region_segs(&out), Some(2), "{out}");
    assert_eq!(d2h_counts(&out), Some((2, 2, 0, 0)), "{out}");
    p.diff();
}

fn f_archive(del_at: u64, realloc: bool) -> ArchiveBuilder {
    let data = pattern(4096, 1);
    let mut b = ArchiveBuilder::new(Platform::Cpu).at(1_000);
    if realloc {
        // A caching allocator handed the same range out again, recorded.
        b = b.alloc(SEG, 4096);
    } else {
        b = b.alloc(DEV, 64);
    }
    b.h2d(SEG, &data)
        .d2h(SEG, &data)
        .segment(SEG, 65536, 10)
        .segment_del(SEG, del_at)
}

#[test]
fn f_segment_deleted_before_first_touch_is_not_materialised() {
    // Deleted at t=20, touched at t=1001: not materialised, so unmapped.
    let p = Pipeline::empty("engine_f");
    f_archive(20, false).write(p.cap()).unwrap();
    let a = p
        .play_cmd(&[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "hrr-play: fatal: event 1 (hipMemcpy): h2d dst {SEG:#x} not mapped"
        )));
    assert!(!stdout(&a).contains("region segs : 1"), "{}", stdout(&a));
    assert_no_crash("hrr-play", &stderr(&a));

    // Control: deleted after the touch, the same archive materialises.
    let p = Pipeline::empty("engine_f_control");
    f_archive(1_000_000, false).write(p.cap()).unwrap();
    let a = p.play_cmd(&[]).assert().success();
    assert_eq!(region_segs(&stdout(&a)), Some(1), "{}", stdout(&a));

    // Deleted, then the range recorded as an ordinary allocation: it
    // translates through the allocation, nothing materialised.
    let p = Pipeline::empty("engine_f_realloc");
    f_archive(20, true).write(p.cap()).unwrap();
    let a = p.play_cmd(&[]).assert().success();
    assert_eq!(region_segs(&stdout(&a)), Some(0), "{}", stdout(&a));
}

/// Touches `base` twice (two H2Ds, then a D2H) under --continue-on-error
/// and checks the materialisation was tried, and reported failing, once.
fn g_tried_once(p: &Pipeline, base: u64) {
    let a = p.play_cmd(&["--continue-on-error"]).assert().code(1);
    let (out, err) = (stdout(&a), stderr(&a));
    eprintln!("--- hrr-play stdout\n{out}--- hrr-play stderr\n{err}");
    assert_no_crash("hrr-play", &err);
    assert!(
        out.contains("region segs : 0 materialised, 1 failed"),
        "one failed materialisation:\n{out}\n{err}"
    );
    let tried = err
        .lines()
        .filter(|l| l.to_lowercase().contains("materialis") && l.contains("fail"))
        .count();
    assert_eq!(
        tried, 1,
        "the failure is reported once, the second touch does not retry:\n{err}"
    );
    let unmapped = err.lines().filter(|l| l.contains("not mapped")).count();
    assert_eq!(unmapped, 3, "each touch of {base:#x} is unmapped:\n{err}");
}

#[test]
fn g_absurd_segment_is_tried_once() {
    let p = Pipeline::empty("engine_g");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 64)
        .h2d(SEG, &[1; 64])
        .h2d(SEG + 64, &[2; 64])
        .d2h(SEG, &[1; 64])
        .segment(SEG, 1 << 60, 0)
        .write(p.cap())
        .unwrap();
    g_tried_once(&p, SEG);
}

#[test]
fn g_segment_colliding_with_recorded_allocation_is_tried_once() {
    // The segment [DEV-4096, DEV+4096) overlaps the live recorded
    // allocation at DEV: registering it would corrupt the address map.
    let p = Pipeline::empty("engine_g_collide");
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 1 << 20)
        .h2d(DEV - 4096, &[1; 64])
        .h2d(DEV - 2048, &[2; 64])
        .d2h(DEV - 4096, &[1; 64])
        .segment(DEV - 4096, 8192, 0)
        .write(p.cap())
        .unwrap();
    g_tried_once(&p, DEV - 4096);
}
