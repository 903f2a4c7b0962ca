//! CPU code objects: a C shared object built with gcc at test time, carrying
//! a `.hrr.kernels` section, and the same image inside an offload bundle.

mod common;

use std::process::Command;

use common::*;
use hrr_codeobj::{ArgKind, CodeObjError, bundle, cpu};

const META: &str = r#"{"kernels":[
 {"name":"saxpy","symbol":"saxpy","kernarg_segment_size":28,"args":[
   {"offset":0,"size":4,"value_kind":"by_value"},
   {"offset":8,"size":8,"value_kind":"global_buffer"},
   {"offset":16,"size":8,"value_kind":"global_buffer"},
   {"offset":24,"size":4,"value_kind":"by_value"}]},
 {"name":"with_struct","symbol":"hrr_with_struct","args":[
   {"offset":0,"size":24,"value_kind":"by_value"},
   {"offset":24,"size":1,"value_kind":"by_value"},
   {"offset":32,"size":8,"value_kind":"global_buffer","name":"out"},
   {"offset":40,"size":8,"value_kind":"hidden_global_offset_x"}]}]}"#;

fn build_so() -> Option<(tempfile::TempDir, Vec<u8>)> {
    let Some(cc) = tool("cc").or_else(|| tool("gcc")) else {
        skip("cpu_so", "no C compiler (cc/gcc)");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("k.c");
    let escaped = META
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    std::fs::write(
        &c,
        format!(
            "struct Pair {{ float *p; int n; double w; }};\n\
             void saxpy(void **args) {{ (void)args; }}\n\
             void hrr_with_struct(void **args) {{ (void)args; }}\n\
             __attribute__((used, section(\".hrr.kernels\")))\n\
             static const char hrr_kernels[] = \"{escaped}\";\n"
        ),
    )
    .unwrap();
    let so = dir.path().join("k.so");
    run(Command::new(cc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&so)
        .arg(&c));
    let bytes = std::fs::read(&so).unwrap();
    Some((dir, bytes))
}

#[test]
fn gcc_shared_object_metadata() {
    let Some((_dir, so)) = build_so() else { return };
    let ks = cpu::parse_metadata(&so).unwrap();
    assert_eq!(hrr_codeobj::kernels(&so).unwrap(), ks);
    check_layouts(&ks, true, &["saxpy", "with_struct"]);
    let ws = &ks[1];
    assert_eq!(ws.symbol, "hrr_with_struct");
    assert_eq!(
        ws.kernarg_segment_size, 48,
        "defaults to the end of the last argument"
    );
    assert_eq!(
        ws.args[3].kind,
        ArgKind::Hidden("hidden_global_offset_x".into())
    );
    assert_eq!(ws.host_arg_count(), 3);
    assert_eq!(ws.args[2].name.as_deref(), Some("out"));
    // Rebuild a packed buffer from kernelParams-style values.
    let s = [7u8; 24];
    let packed = ws
        .pack_host_args(&[&s, &[1], &0x1122u64.to_le_bytes()])
        .unwrap();
    assert_eq!(packed.len(), 40);
    assert_eq!(&packed[32..40], &0x1122u64.to_le_bytes());
}

#[test]
fn cpu_entry_in_a_bundle() {
    let Some((_dir, so)) = build_so() else { return };
    let b = bundle::write(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-x86_64-unknown-linux-gnu-cpu", &so),
    ]);
    assert_eq!(&*bundle::select(&b, "cpu").unwrap(), &so[..]);
    assert!(matches!(
        bundle::select(&b, "gfx90a"),
        Err(CodeObjError::NoMatchingTarget { .. })
    ));
}

#[test]
fn so_without_metadata() {
    let Some((_dir, so)) = build_so() else { return };
    // Rename the section: now the .so has no metadata.
    let mut stripped = so.clone();
    let pos = stripped
        .windows(12)
        .position(|w| w == b".hrr.kernels")
        .unwrap();
    stripped[pos + 1] = b'X';
    let err = hrr_codeobj::kernels(&stripped).unwrap_err();
    assert!(matches!(err, CodeObjError::NoMetadata { .. }), "{err}");
}
