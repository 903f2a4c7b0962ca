//! Writes a capture archive of N kernel launches, for measuring replay and
//! extraction speed on the CPU runtime (docs/PERFORMANCE.md):
//!
//!     cargo run --release -p hrr-core --features testkit --example launch_archive -- \
//!         OUT.hrr CODE.so [LAUNCHES]
//!
//! CODE.so is the CPU code object of tests/workloads/kernels/repeat.c
//! (`gcc -O2 -shared -fPIC -I tests/workloads/include repeat.c -o repeat.so`);
//! its kernel `add(unsigned *p, unsigned v)` adds v to 64 words. Each launch
//! adds 1 to one 256-byte buffer; every 10 000 launches a D2H reads the
//! buffer back (its expected value is the launch count). Events are streamed
//! to the writer, so memory stays flat at any N.

use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::event::{Dir, Event, MemKind, Op};
use hrr_core::hex::{Addr, BlobId};
use hrr_core::manifest::{ArchiveKind, Platform};
use hrr_core::testkit::{ptr_arg, value_arg};

const BUF: u64 = 0x7f00_0000_0000;
const MODULE: u64 = 0x5555_0000_1000;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: launch_archive OUT.hrr CODE.so [LAUNCHES]";
    let out = args.next().expect(usage);
    let code_path = args.next().expect(usage);
    let launches: u64 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("LAUNCHES"));
    let code = std::fs::read(&code_path).expect("reading CODE.so");

    let mut w = ArchiveWriter::create(
        &out,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .expect("creating the archive");
    let code_id = w.put_blob(&code).expect("storing the code object");
    let mut seq = 0u64;
    let mut emit = |w: &mut ArchiveWriter, api: &str, op: Op| {
        let e = Event {
            seq,
            t: 1_000 + seq,
            tid: 1,
            api: api.to_string(),
            ret: 0,
            dev: 0,
            op,
        };
        seq += 1;
        w.append(&e).expect("appending an event");
    };
    emit(
        &mut w,
        "hipModuleLoadData",
        Op::ModuleLoad {
            module: Addr(MODULE),
            code: code_id,
        },
    );
    emit(
        &mut w,
        "hipMalloc",
        Op::Alloc {
            ptr: Addr(BUF),
            size: 256,
            mem: MemKind::Device,
        },
    );
    let mut arg_p = ptr_arg(BUF);
    arg_p.offset = Some(0);
    let mut arg_v = value_arg(&1u32.to_le_bytes());
    arg_v.offset = Some(8);
    let launch = Op::Launch {
        name: "add".into(),
        code: code_id,
        func: None,
        grid: [1, 1, 1],
        block: [64, 1, 1],
        shmem: 0,
        stream: Addr(0),
        args: vec![arg_p, arg_v],
        attrs: vec![],
    };
    for i in 1..=launches {
        emit(&mut w, "hipModuleLaunchKernel", launch.clone());
        if i % 10_000 == 0 || i == launches {
            let expected: Vec<u8> = (0..64).flat_map(|_| (i as u32).to_le_bytes()).collect();
            let blob: BlobId = w.put_blob(&expected).expect("storing a D2H result");
            emit(
                &mut w,
                "hipMemcpy",
                Op::Memcpy {
                    dir: Dir::D2h,
                    dst: Addr(0x5555_0000_0000),
                    src: Addr(BUF),
                    size: 256,
                    stream: None,
                    blob: Some(blob),
                },
            );
        }
    }
    let m = w.finish().expect("finishing the archive");
    eprintln!("wrote {out}: {} events ({launches} launches)", m.events);
}
